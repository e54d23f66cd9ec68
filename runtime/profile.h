/* runtime/profile.h — profiling: the hooks instrumented kernels call, timed
 * and counted runs of a graph, the reports (runtime/report.c), the plots
 * (runtime/plot.c) and the machine's roofline (runtime/calibrate.c).
 * doc/profile.md defines every number.
 *
 *   rt_shapes *sh = rt_shapes_record(m);        before the passes reshape buffers
 *   ... passes, ending with `instrument` ...
 *   rt_profile *p = rt_profile_new(m, sh, &po, d);
 *   rt_profile_run(p, run, &ro, d);             warm-up + po.repeat measured runs
 *   rt_profile_check(p, d);                     counters vs the static analysis
 *   rt_profile_report(p, &report_options, d);   table, CSV, JSON, trace, plots
 *   rt_profile_free(p); rt_shapes_free(sh);
 */
#ifndef TEC_RT_PROFILE_H
#define TEC_RT_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/diag.h"
#include "ir/ir.h"
#include "passes/analyze.h"
#include "runtime/exec.h"

/* ---------------------------------------------------------------- hooks */

/* Called by instrumented code (compiled kernels resolve them from the tec
 * executable; the interpreter calls them directly).  They do nothing unless
 * a profile is running.  Hot path: no allocation, no locks; counters are
 * updated atomically so parallel loops may count. */
void tec_prof_enter(int64_t func);
void tec_prof_exit(int64_t func);
void tec_prof_count(int64_t site, int64_t n);

/* Monotonic clock in nanoseconds. */
uint64_t rt_now_ns(void);

/* ---------------------------------------------------------------- declared shapes */

/* The buffers' shapes as the program declared them ("f32[1, 3, 8, 8]"),
 * recorded before flatten makes every buffer 1-D: graph buffers under their
 * name, a function's allocs under "@FUNC/NAME". */
typedef struct rt_shapes rt_shapes;
rt_shapes *rt_shapes_record(const ir_module *m);       /* NULL when out of memory */
const char *rt_shapes_find(const rt_shapes *s, const char *key);   /* or NULL */
void rt_shapes_free(rt_shapes *s);

/* A layer's tensors as the program declared them, recorded with the shapes
 * (before any pass): what the row of a layer fused into a group shows,
 * although its output may no longer exist (doc/profile.md). */
typedef struct rt_layer_io {
    char *layer;
    char **inputs;             /* shapes of the tensors it reads (not parameters) */
    int ninputs;
    char *output;              /* shape(s) of what it writes, comma-separated */
    uint64_t output_bytes;
} rt_layer_io;
const rt_layer_io *rt_shapes_layer(const rt_shapes *s, const char *layer);   /* or NULL */

/* ---------------------------------------------------------------- calibration */

/* This machine's roof, measured by `tec --calibrate`.  Index 0: one thread,
 * index 1: all threads. */
typedef struct rt_calibration {
    char cpu[128];             /* model name; a cached result is used only on the same CPU */
    int threads;               /* online CPUs */
    char isa[16];              /* vector FMA used: avx512, avx2, or generic */
    double peak_gflops[2];     /* FP32 vector FMA, GFLOP/s */
    double bw_gbs[2];          /* triad a[i] = b[i] + s*c[i], GB/s (reads + writes) */
    uint64_t llc_bytes;        /* last-level cache size used by the DRAM model */
    uint64_t array_bytes;      /* bytes of each triad array */
    /* How steady the measurement was (not cached): each number is the best
     * of repeated runs; spread is the largest 1 - second best / best, and
     * cpu_share the lowest fraction of a best run's wall time its threads
     * ran on a processor. */
    double spread, cpu_share;
} rt_calibration;

/* Beyond these the machine was busy: the numbers would be too low. */
#define RT_CALIB_MAX_SPREAD 0.10
#define RT_CALIB_MIN_SHARE 0.90

/* Whether the runs agreed (within RT_CALIB_MAX_SPREAD, with threads on a
 * processor at least RT_CALIB_MIN_SHARE of the time); else why not. */
bool rt_calibration_steady(const rt_calibration *c, char *why, size_t n);

/* Measures; progress lines go to log (may be NULL). */
bool rt_calibrate(rt_calibration *c, FILE *log, diag *d);
/* The cache file ($XDG_CACHE_HOME/tec/calibration.json), malloc'ed. */
char *rt_calibration_path(diag *d);
bool rt_calibration_save(const rt_calibration *c, diag *d);
/* False when nothing is cached for this CPU (no diagnostic). */
bool rt_calibration_load(rt_calibration *c);
void rt_calibration_print(FILE *out, const rt_calibration *c);
/* TEC_LLC_BYTES, else the highest-level cache sysfs lists for CPU 0, else the
 * one the C library reports, else 8 MiB. */
uint64_t rt_llc_bytes(void);

/* ---------------------------------------------------------------- profiles */

typedef struct rt_profile_options {
    int repeat;                /* measured runs (>= 1); one warm-up run precedes them */
    bool counters;             /* hardware counters through perf_event_open */
    int pad_to;                /* report GEMM dimensions padded to multiples (0: off) */
    int threads;               /* threads the kernels' parallel loops ran on (0: 1); the
                                  roofline is that many threads' (rt_roof) */
} rt_profile_options;

/* One layer-stage execution in a measured run (for the trace). */
typedef struct rt_trace_event {
    int func;
    int run;
    uint64_t start_ns;         /* from the start of the first measured run */
    uint64_t dur_ns;
} rt_trace_event;

enum { RT_HW_CYCLES, RT_HW_INSTRUCTIONS, RT_HW_LLC_MISSES, RT_NHW };

/* A profile in progress; report.c and plot.c read it. */
typedef struct rt_profile {
    const ir_module *m;
    pass_stats *st;
    const rt_shapes *shapes;
    rt_profile_options o;
    int nfuncs, nsites;
    int nruns;                 /* measured runs completed */
    int cur_run;               /* index of the measured run in progress, -1 otherwise */
    uint64_t *start_ns;        /* [nfuncs] */
    uint64_t *counts;          /* [nsites] live counters */
    uint64_t *func_ns;         /* [repeat][nfuncs] */
    uint64_t *run_counts;      /* [repeat][nsites] */
    uint64_t *run_ns;          /* [repeat] whole-graph wall time */
    rt_trace_event *events;
    uint64_t nevents, capevents;
    uint64_t t0;
    uint64_t bad_ids;          /* hook calls with an id out of range */
    /* hardware counters */
    bool hw_ok;
    int hw_fd;                 /* group leader */
    int hw_fds[RT_NHW];
    char hw_note[256];         /* why they are unavailable */
    uint64_t *hw_start;        /* [nfuncs][RT_NHW] */
    uint64_t *hw;              /* [repeat][nfuncs][RT_NHW] */
    /* the machine */
    bool have_calib;
    rt_calibration calib;
    uint64_t llc_bytes;
    int ndisagree;
} rt_profile;

/* Analyzes m (the final, instrumented module) and prepares counters for
 * o->repeat runs.  shapes may be NULL (the module's own shapes are used). */
rt_profile *rt_profile_new(const ir_module *m, const rt_shapes *shapes,
                           const rt_profile_options *o, diag *d);
/* One warm-up run, then o->repeat measured runs, through rt_run_execute. */
bool rt_profile_run(rt_profile *p, rt_run *run, const rt_run_options *ro, diag *d);
/* Every counted site must have executed as often as the analysis says (when
 * it knows); each disagreement is an error.  Also reports profiling calls
 * that name nothing and layers without counts or timing. */
bool rt_profile_check(rt_profile *p, diag *d);
void rt_profile_free(rt_profile *p);
/* The executions of each site (by site id) in the run the report counts
 * with: the first measured run, or NULL before any (static counts only). */
const uint64_t *rt_profile_counts(const rt_profile *p);

/* Times o->repeat runs (after a warm-up) without any profiling. */
bool rt_time_runs(rt_run *run, const rt_run_options *ro, int repeat, double *median_us, diag *d);

/* The median of n values (sorted in place). */
double rt_median_u64(uint64_t *v, int n);

/* ---------------------------------------------------------------- reports */

typedef enum { RT_ROW_LAYER, RT_ROW_GROUP, RT_ROW_BLOCK, RT_ROW_TOTAL } rt_row_kind;

/* One line of the report: a layer, a fused group, a block of the layer
 * hierarchy (layer1, layer1.0) or the whole network.  NAN: not available. */
typedef struct rt_row {
    rt_row_kind kind;
    char *name;
    const char *op;
    char *group;               /* layers fused into a group: the group's name, else NULL */
    char *members;             /* group rows: the member layers, comma-separated */
    int depth;                 /* indentation in the table */
    char **inputs;             /* shapes of the tensors it reads (not parameters) */
    int ninputs;
    char *output;              /* shape(s) of what it writes, comma-separated */
    uint64_t macs, flops;
    uint64_t params;           /* trainable parameter elements (PyTorch's parameters()) */
    uint64_t state;            /* non-trainable weight elements (`state`: BN running stats) */
    uint64_t param_bytes;      /* bytes of both: the weight memory it reads */
    uint64_t act_bytes;
    uint64_t load_bytes, store_bytes, dram_read, dram_write;
    /* The network's row only: activation memory with and without the memory
     * plan (rt_activation_memory). */
    uint64_t act_mem, act_mem_unplanned;
    double time_us, gflops, intensity, attainable_gflops, roof_pct;
    const char *bound;         /* "memory", "compute" or NULL */
    double hw[RT_NHW];
    const ir_func *fn;         /* the one function a layer or group row times, else NULL */
    bool approx;               /* some counts are upper bounds */
    bool unknown;              /* some counts are missing */
} rt_row;

typedef struct rt_rows {
    rt_row *rows;
    int n;
} rt_rows;

/* Activation memory of a graph (doc/profile.md): the bytes the executor
 * allocates for its inputs, temporaries and outputs.  Unplanned: each in
 * storage of its own.  Planned: the temporaries of the memory plan share the
 * graph's arena (passes/memplan.c), the others keep their own storage;
 * equal to unplanned when the graph has no plan. */
typedef struct rt_act_memory {
    uint64_t planned, unplanned;
    uint64_t arena;            /* the arena's bytes (0 without a plan) */
    int temps, placed;         /* temporaries, and those placed in the arena */
    bool has_plan;
} rt_act_memory;
void rt_activation_memory(const ir_module *m, rt_act_memory *out);

/* Builds every row from a finished profile (report.c). */
bool rt_rows_build(const rt_profile *p, rt_rows *out, diag *d);
void rt_rows_free(rt_rows *r);

enum { RT_EXTRA_CELL = 32, RT_MAX_EXTRA = 8 };

typedef struct rt_report_options {
    FILE *table;               /* the aligned table, or NULL */
    const char *csv, *json;    /* --report files, or NULL */
    const char *trace;         /* Chrome trace-event JSON, or NULL */
    const char *plot_dir;      /* gnuplot charts, or NULL */
    /* Extra table columns (the accelerator model's, with --accel): for each
     * row that times one function, extra_cells(extra_ctx, fn, cells) fills
     * nextra cells; for the network's total row it is called with NULL. */
    int nextra;
    const char *const *extra_titles;
    void (*extra_cells)(void *ctx, const ir_func *fn, char cells[][RT_EXTRA_CELL]);
    void *extra_ctx;
    /* The table's columns (--columns=, a comma-separated list of the names
     * doc/profile.md gives, or "all"); NULL: the default view, which fits
     * RT_TABLE_WIDTH characters. */
    const char *columns;
} rt_report_options;

enum { RT_TABLE_WIDTH = 120 };

/* Whether a --columns= list names only known columns; else a message in err. */
bool rt_report_check_columns(const char *list, char *err, size_t nerr);

bool rt_profile_report(const rt_profile *p, const rt_report_options *o, diag *d);

/* Writes DIR/profile.dat, DIR/profile.gp and runs gnuplot for the charts
 * (runtime/plot.c). */
bool rt_plot(const rt_profile *p, const rt_rows *rows, const char *dir, diag *d);

/* Writes s as a gnuplot single-quoted string, the one form in which gnuplot
 * expands neither macros (@) nor command substitution (`): a quote is
 * doubled, and every control character becomes a space, since a newline
 * would end the string's command and start one of the string's choosing
 * (such as system("...")).  Shared by every gnuplot script tec writes. */
void rt_gp_quote(FILE *f, const char *s);
/* Writes s as a double-quoted string of a gnuplot data file (one row a
 * line, and no escapes): quotes and control characters become '_'. */
void rt_gp_datum(FILE *f, const char *s);

/* A JSON string literal of s (null for NULL), escaped. */
void rt_json_str(FILE *f, const char *s);

/* Runs argv (argv[0] looked up in PATH; never a shell) and waits for it.
 * Errors name the option that asked for it, and the hint says what to do
 * when the program cannot run ("install gnuplot"). */
bool rt_spawn_wait(const char *option, char *const *argv, const char *hint, diag *d);

#endif
