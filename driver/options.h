/* driver/options.h — what the `tec` command line says.
 *
 * One table (driver/options.c) lists every option with its spelling, its
 * help text and what it sets; getopt's tables, `tec --help` and the check
 * of doc/tec.1 (testsuite/cli/usage.sh) are all made from it.  The
 * driver's modes (driver/driver.c) read the options struct and nothing
 * else of the command line. */
#ifndef TEC_DRIVER_OPTIONS_H
#define TEC_DRIVER_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include "accel/cli.h"
#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "runtime/exec.h"
#include "runtime/sched.h"

enum { EXIT_USER = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 70 };

typedef enum { EMIT_RUN, EMIT_TE, EMIT_TIR, EMIT_C, EMIT_SO, EMIT_LIB } emit_kind;
typedef enum { LANG_AUTO, LANG_TE, LANG_TIR, LANG_ONNX } lang_kind;

/* Everything the command line says, in one place. */
typedef struct options {
    int opt_level;
    lang_kind lang;
    emit_kind emit;
    const char *input_file;
    const char *output_file;      /* -o */
    const char *passes;           /* --passes */
    const char *dump_ir, *dump_dir;
    bool dump_schedule;
    bool verify_each;
    bool interp;
    bool verbose, no_cache;
    bool unchecked;               /* --unchecked: no run-time index checks */
    int cc_timeout;               /* --cc-timeout: as cg_options.cc_timeout */
    /* the machine kernels are built for, and the threads of parallel loops */
    const char *target_name;      /* --target (default "native") */
    cg_target target;
    bool print_target;
    const char *threads_arg;      /* --threads */
    int threads;
    const char *threads_source;   /* "--threads", "TEC_NUM_THREADS" or "cores" */
    const char *weights_dir, *save_outputs;
    const char *save_weights;     /* --save-weights: an ONNX model's initializers */
    char *scratch_weights;        /* an ONNX model's weights for the run (malloc'ed) */
    fe_define *defines;
    int ndefines;
    const char **includes;
    int nincludes;
    rt_named_path *inputs;
    int ninputs;
    /* profiling (doc/profile.md) */
    bool profile, calibrate, counters;
    bool no_run;                  /* --no-run: the profile's static counts only */
    int repeat;                   /* 0: not given */
    int pad_to;
    const char *report_csv, *report_json, *trace, *plot_dir;
    /* the accelerator model (doc/accel.md); accel_on when any option of it is given */
    acc_cli_options accel;
    bool accel_on;
    /* operator scheduling (doc/scheduling.md); sched_on with any option of it */
    bool sched_on;
    rt_strategy sched;
    rt_devices devices;           /* --devices, or one cpu:1 per thread */
    const char *sched_trace, *dump_graph;
} options;

/* Fills o from the command line.  Returns -1 when tec goes on to its work,
 * or the exit status to end with: 0 after --help, --version,
 * --list-passes or --print-target, EXIT_USAGE after a usage error (its
 * message printed to stderr). */
int drv_parse_args(int argc, char **argv, options *o);

/* The malloc'ed parts of o. */
void drv_options_free(options *o);

/* `tec --help`, made from the option table. */
void drv_usage(FILE *out);

/* "tec: error: " fmt arg, then the hint to try --help; returns EXIT_USAGE. */
int drv_usage_error(const char *fmt, const char *arg);

bool drv_ends_with(const char *s, const char *suffix);

void *drv_xrealloc(void *p, size_t n);

#endif
