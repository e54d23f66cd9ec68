/* accel/cli.h — what `tec --accel CFG` does with a compiled network or a
 * SCALE-Sim topology: model it, print the per-layer table, write reports,
 * export the topology, sweep configurations and draw charts.
 *
 * The driver fills acc_cli_options from the command line, checks them with
 * acc_cli_check_options before compiling (usage errors), and then calls
 * acc_cli_run_module on the optimized module, or acc_cli_run_topology when
 * --topology is given without a program.  The --profile table adds
 * accelerator columns from acc_model_module (per function, keyed like the
 * profile's rows) and acc_cli_columns. */
#ifndef TEC_ACCEL_CLI_H
#define TEC_ACCEL_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "accel/accel.h"
#include "ir/diag.h"
#include "ir/ir.h"

/* The accelerator options of the command line; NULL/0 means not given. */
typedef struct acc_cli_options {
    const char *config;            /* --accel CFG: a SCALE-Sim .cfg (required) */
    const char *report;            /* --accel-report=FILE.csv|FILE.json */
    const char *trace;             /* --accel-trace=FILE.json: Chrome trace of the folds */
    const char *topology;          /* --topology FILE: SCALE-Sim CSV instead of a program */
    const char *from_report;       /* --from-report FILE: the workload of a saved profile
                                      report (--report=FILE.json) instead of a program */
    const char *export_topology;   /* --export-topology FILE */
    const char *export_format;     /* --export-format conv|gemm (default: conv when
                                      any layer is a convolution, else gemm) */
    bool sweep;                    /* --sweep */
    const char *sweep_out;         /* --sweep-out DIR (default "accel-sweep") */
    const char *sweep_arrays;      /* --sweep-arrays 8x8,32x32 (default 8x8..128x128) */
    const char *sweep_dataflows;   /* --sweep-dataflows os,ws (default os,ws,is) */
    const char *sweep_srams;       /* --sweep-sram 32,256 (kB; default 16..1024) */
    const char *sweep_max_area;    /* --sweep-max-area MM2: leave out larger configs */
    int pad_to;                    /* --pad-to N: pad M, N, K to multiples of N */
    const char *search;            /* --search none|dram|edp (default none) */
    bool strict;                   /* --strict: input warnings (unknown config keys) are errors */
    const char *mode;              /* --accel-mode tec|scalesim (default tec) */
} acc_cli_options;

/* Checks everything that can be checked without reading files: a config is
 * given, names and lists parse, the report ends in .csv or .json.  Reports
 * "tec: error: ..." for each problem; the driver exits 2 when false. */
bool acc_cli_check_options(const acc_cli_options *o, diag *d);

/* --accel-mode=scalesim: SCALE-Sim's numbers instead of tec's model. */
bool acc_cli_scalesim_mode(const acc_cli_options *o);

/* Loads o->config and turns the options into model options. */
bool acc_cli_load(const acc_cli_options *o, acc_config *c, acc_options *ao, diag *d);

/* Models the compiled network (accel/workload.h): prints the per-layer
 * table with totals to `out` (NULL: no table), then writes the report, the
 * exported topology and the sweep with its charts, as the options ask. */
bool acc_cli_run_module(const ir_module *m, const acc_cli_options *o, FILE *out, diag *d);

/* The same with the work of a profiled run: ps analyzes the module that
 * ran, counts are the executions of its sites in one run
 * (rt_profile_counts; NULL: the static counts, as acc_cli_run_module). */
struct pass_stats;
bool acc_cli_run_profile(const struct pass_stats *ps, const uint64_t *counts,
                         const acc_cli_options *o, FILE *out, diag *d);

/* The same for the layers of o->topology (format from its header), or of
 * the saved profile report o->from_report (acc_read_profile_report). */
bool acc_cli_run_topology(const acc_cli_options *o, FILE *out, diag *d);

/* Per-function results for the --profile table: (*per_func)[i] belongs to
 * m->funcs[i] and sums every layer of every call of it; its name is the
 * function's layer name, its kind GEMM when it has a GEMM-like block, and
 * M, N, K, batch and tiling are those of its GEMM when it has exactly one.
 * *per_func is malloc'ed (the caller frees it); total is the network. */
bool acc_model_module(const ir_module *m, const acc_config *c, const acc_options *o,
                      acc_result **per_func, acc_result *total, diag *d);
/* The same with the work of a profiled run (as acc_cli_run_profile). */
bool acc_model_profile(const struct pass_stats *ps, const uint64_t *counts, const acc_config *c,
                       const acc_options *o, acc_result **per_func, acc_result *total, diag *d);

/* The accelerator's part of `tec --profile --accel CFG`: ONE modeled run
 * that the profile table's columns, the summary lines, --accel-report,
 * --accel-trace, --export-topology and --sweep all describe.  The driver
 * calls acc_cli_session_load before the run (usage and config errors),
 * acc_cli_session_model after it (the profile's columns need the results
 * before its table is printed), acc_cli_session_cells for each row, and
 * acc_cli_session_finish after the table.  Without --search the profile
 * models the tiling that minimizes EDP (never worse than untiled), and
 * every output says so. */
typedef struct acc_cli_session {
    const acc_cli_options *o;
    acc_config config;
    acc_options options;
    const ir_module *m;
    bool loaded, modeled;
    acc_layer *layers;         /* the modeled layers (owned) */
    int nlayers;
    int *func;                 /* layers[i] comes from m->funcs[func[i]] */
    acc_result *rs;            /* [nlayers] */
    acc_result *per_func;      /* [m->nfuncs] */
    acc_result total;
} acc_cli_session;

bool acc_cli_session_load(acc_cli_session *s, const acc_cli_options *o, diag *d);
bool acc_cli_session_model(acc_cli_session *s, const struct pass_stats *ps,
                           const uint64_t *counts, diag *d);
/* The accelerator cells of the profile row of fn (NULL: the total row);
 * false when the session has no result for it. */
bool acc_cli_session_cells(const acc_cli_session *s, const ir_func *fn,
                           char cells[][32]);
/* The summary lines, then the report, trace, topology and sweep files. */
bool acc_cli_session_finish(acc_cli_session *s, FILE *out, diag *d);
void acc_cli_session_free(acc_cli_session *s);

/* Accelerator columns for a per-layer table: titles and one row's cells. */
#define ACC_CLI_NCOLS 6
extern const char *const acc_cli_column_titles[ACC_CLI_NCOLS];
void acc_cli_columns(const acc_result *r, char cells[ACC_CLI_NCOLS][32]);

/* Two lines with the network totals and the tiling search they come from:
 *   "accelerator NAME RxC os: 123 cycles (...), utilization 45.6%, ..."
 *   "accelerator: 12.3% of the cycles stall; tiling searched for ..." */
void acc_cli_print_summary(FILE *out, const acc_config *c, acc_search search,
                           const acc_result *total);

/* One line per result modeled as the run did it (acc_result.declared_M):
 *   "accelerator: layer L modeled as the run did it (its MACs depend on the
 *    data): M 13 of the declared 32, from the counters" */
void acc_cli_print_as_ran(FILE *out, const acc_result *rs, int n);

#endif
