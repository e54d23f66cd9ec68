/* frontend/driver.c — the `tec` command line.
 *
 * Exit status: 0 success; 1 an error in the user's program or data; 2 a
 * usage error; 70 an internal error (a bug in tec). */
#include "config.h"

#define _XOPEN_SOURCE 700   /* nftw */

#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accel/cli.h"
#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "frontend/onnx.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "passes/passes.h"
#include "runtime/aot.h"
#include "runtime/exec.h"
#include "runtime/profile.h"
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

static void usage(FILE *out)
{
    fputs(
        "usage: tec [options] FILE.te|FILE.tir|FILE.onnx|-\n"
        "\n"
        "Compiles a tensor-expression program, runs it, and prints its outputs.\n"
        "\n"
        "Compilation:\n"
        "  -O0 -O1 -O2 -O3        optimization level (default -O1)\n"
        "  -x te|tir|onnx         language of the input (default: from the file name)\n"
        "  -D NAME=VALUE          override the shape parameter `let NAME`\n"
        "  -I DIR                 search DIR for imports\n"
        "  --passes=LIST          run these passes instead of the -O pipeline\n"
        "  --list-passes          list the passes and the pipelines, then exit\n"
        "  --dump-ir=PASS,...|all print the IR after these passes to stderr\n"
        "                         (schedule-steps: after each step of a written schedule)\n"
        "  --dump-dir=DIR         write the IR after every pass to DIR/NAME.NN.PASS.tir\n"
        "  --dump-schedule        print the schedule -O2/-O3 chose for each kernel (stderr),\n"
        "                         as `schedule` blocks to copy into the program\n"
        "  --verify-each          verify the IR after every pass\n"
        "  --emit=te|tir|c|so     print the .te program (of an ONNX model), the IR or C\n"
        "                         (or write the .so with -o) and stop\n"
        "  --emit=lib -o libNAME.so|libNAME.a\n"
        "                         write the network as a C library and NAME.h (doc/aot.md)\n"
        "  --save-weights DIR     with an ONNX model: write its weights to DIR (doc/onnx.md)\n"
        "  -o FILE                output file for --emit\n"
        "  --target=NAME          build kernels for NAME: native (default, this machine),\n"
        "                         x86-64, x86-64-v2, x86-64-v3 or x86-64-v4\n"
        "  --print-target         print the target (ISA, vector width, cores, caches), exit\n"
        "  --no-cache             do not use the kernel cache\n"
        "  --unchecked            no run-time checks of the indices tec cannot prove\n"
        "                         in range (an out-of-range index is then undefined)\n"
        "  --cc-timeout=SECONDS   stop the C compiler after SECONDS (default 600; 0: never)\n"
        "  -v, --verbose          show the target and the C compiler's command line\n"
        "\n"
        "Running:\n"
        "  --input NAME=FILE.npy  contents of input NAME (default: the documented formula);\n"
        "                         an ONNX TensorProto FILE.pb is read as well\n"
        "  --weights DIR          parameters from DIR/<parameter name>.npy\n"
        "  --save-outputs DIR     write every output to DIR/<name>.npy\n"
        "  --interp               run with the IR interpreter instead of compiled code\n"
        "  --threads N            threads of parallel loops, 1 to 1024 (default: every\n"
        "                         processor tec may use; or TEC_NUM_THREADS)\n"
        "  --repeat N             run N times after a warm-up; print the median time\n"
        "\n"
        "Profiling (doc/profile.md):\n"
        "  --profile              per-layer MACs, FLOPs, bytes, time and roofline table\n"
        "  --report=FILE.csv|FILE.json  also write the report to FILE (may be repeated)\n"
        "  --trace=FILE.json      Chrome trace-event file, one slice per layer run\n"
        "  --plot=DIR             per-layer and roofline charts (PNG, SVG) via gnuplot\n"
        "  --counters             hardware counters (cycles, instructions, LLC misses)\n"
        "  --pad-to N             report GEMM dimensions padded to multiples of N\n"
        "  --no-run               with --profile: static counts only, nothing is run\n"
        "  --calibrate            measure this machine's peak FLOP/s and bandwidth (cached)\n"
        "\n"
        "Scheduling on several devices (doc/scheduling.md):\n"
        "  --sched=STRATEGY       serial, op, path, dynamic or dynamic-cp: run the calls on\n"
        "                         the devices; print the makespan against serial\n"
        "  --devices=LIST         cpu:N (a worker on N cores), acc:FILE.cfg (a modeled\n"
        "                         accelerator), comma-separated (default: one cpu:1 per\n"
        "                         thread)\n"
        "  --sched-trace=FILE.json  Chrome trace of the schedule, one track per device\n"
        "  --dump-graph=FILE.dot|FILE.svg  the calls' DAG with costs and devices\n"
        "\n"
        "Accelerator model (doc/accel.md):\n"
        "  --accel CFG            model the network on the systolic array of CFG (a SCALE-Sim\n"
        "                         .cfg; presets in accel/configs): per-layer table, no run;\n"
        "                         with --profile, accelerator columns in the profile table\n"
        "  --accel-report=FILE.csv|FILE.json  per-layer accelerator report\n"
        "  --accel-trace=FILE.json  the accelerator's timeline, fold by fold, as a Chrome trace\n"
        "  --search none|dram|edp choose tiling factors minimizing DRAM traffic or EDP\n"
        "  --topology FILE        model a SCALE-Sim topology CSV instead of a program\n"
        "  --from-report FILE.json  model the run a saved profile report (--report) holds\n"
        "  --export-topology FILE write the network's GEMM layers as a SCALE-Sim topology\n"
        "  --export-format conv|gemm  format of --export-topology\n"
        "  --sweep                model every configuration of the sweep lists below\n"
        "  --sweep-out DIR        sweep CSV and charts (default accel-sweep)\n"
        "  --sweep-arrays LIST    e.g. 8x8,32x32,128x128\n"
        "  --sweep-dataflows LIST e.g. os,ws,is\n"
        "  --sweep-sram LIST      SRAM sizes in kB, e.g. 64,256\n"
        "  --strict               unknown config keys and sections are errors, not warnings\n"
        "  --accel-mode tec|scalesim  tec's model (default) or SCALE-Sim v2's numbers (CALC\n"
        "                         configs; --accel-report=DIR then writes its three CSVs)\n"
        "\n"
        "  -h, --help             this help\n"
        "  --version              print the version\n"
        "\n"
        "Environment: CC (the C compiler for kernels), XDG_CACHE_HOME (kernel cache),\n"
        "TEC_NUM_THREADS (threads of parallel loops, when --threads is not given).\n"
        "See tec(1) and doc/ in the source tree.\n",
        out);
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tec: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\ntec: try 'tec --help'\n");
    return EXIT_USAGE;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p)
        ir_out_of_memory();
    return p;
}

static bool ends_with(const char *s, const char *suffix);

/* NAME=VALUE with a non-empty NAME; returns false if there is no '='. */
static bool split_assign(char *arg, const char **name, const char **value)
{
    char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return false;
    *eq = 0;
    *name = arg;
    *value = eq + 1;
    return true;
}

/* --dump-schedule: each function's automatic schedule as a `schedule`
 * block naming its layer, which a user can paste into the program (a
 * written schedule wins over the automatic one). */
static void dump_schedules(FILE *out, const ir_module *m)
{
    for (int i = 0; i < m->nfuncs; i++) {
        const ir_func *f = m->funcs[i];
        bool at_load = false;   /* prepack's functions: no schedule of their own */
        for (int l = 0; l < m->graph.nloads; l++)
            at_load |= m->graph.loads[l].fn == f;
        if (at_load)
            continue;
        const char *layer = ir_func_attr(f, "layer");
        const char *members = ir_func_attr(f, "members");
        char first[512];
        if (members) {   /* a fused group: its kernel is its first member's */
            snprintf(first, sizeof first, "%s", members);
            char *comma = strchr(first, ',');
            if (comma)
                *comma = 0;
            layer = first;
        }
        const char *text = ir_func_attr(f, "schedule_auto");
        const char *op = ir_func_attr(f, "op");
        if (ir_func_attr(f, "scheduled")) {
            fprintf(out, "# @%s: scheduled by the program\n", f->name);
            continue;
        }
        fprintf(out, "# @%s%s%s\n", f->name, op ? ", op " : "", op ? op : "");
        fprintf(out, "schedule \"%s\" {\n", layer ? layer : f->name);
        for (const char *p = text; p && *p;) {
            const char *nl = strchr(p, '\n');
            int n = nl ? (int)(nl - p) : (int)strlen(p);
            fprintf(out, "    %.*s\n", n, p);
            p = nl ? nl + 1 : p + n;
        }
        fprintf(out, "}\n");
    }
}

enum {
    OPT_EMIT = 256, OPT_PASSES, OPT_DUMP_IR, OPT_DUMP_DIR, OPT_VERIFY_EACH,
    OPT_LIST_PASSES, OPT_INPUT, OPT_WEIGHTS, OPT_SAVE_OUTPUTS, OPT_INTERP,
    OPT_NO_CACHE, OPT_UNCHECKED, OPT_VERSION, OPT_PROFILE, OPT_REPEAT, OPT_REPORT, OPT_TRACE, OPT_PLOT,
    OPT_CALIBRATE, OPT_COUNTERS, OPT_PAD_TO, OPT_ACCEL, OPT_ACCEL_REPORT, OPT_SEARCH,
    OPT_TOPOLOGY, OPT_EXPORT_TOPOLOGY, OPT_EXPORT_FORMAT, OPT_SWEEP, OPT_SWEEP_OUT,
    OPT_SWEEP_ARRAYS, OPT_SWEEP_DATAFLOWS, OPT_SWEEP_SRAM, OPT_STRICT, OPT_ACCEL_MODE, OPT_ACCEL_TRACE, OPT_FROM_REPORT, OPT_NO_RUN,
    OPT_TARGET, OPT_PRINT_TARGET, OPT_THREADS, OPT_DUMP_SCHEDULE, OPT_SAVE_WEIGHTS,
    OPT_CC_TIMEOUT, OPT_SCHED, OPT_DEVICES, OPT_SCHED_TRACE, OPT_DUMP_GRAPH,
};

/* A positive decimal count no larger than max, or -1. */
static int parse_count(const char *s, int max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > max)
        return -1;
    return (int)v;
}

/* Returns -1 to continue, or an exit status. */
static int parse_args(int argc, char **argv, options *o)
{
    static const struct option longopts[] = {
        {"emit", required_argument, 0, OPT_EMIT},
        {"passes", required_argument, 0, OPT_PASSES},
        {"dump-ir", required_argument, 0, OPT_DUMP_IR},
        {"dump-schedule", no_argument, 0, OPT_DUMP_SCHEDULE},
        {"dump-dir", required_argument, 0, OPT_DUMP_DIR},
        {"verify-each", no_argument, 0, OPT_VERIFY_EACH},
        {"list-passes", no_argument, 0, OPT_LIST_PASSES},
        {"input", required_argument, 0, OPT_INPUT},
        {"weights", required_argument, 0, OPT_WEIGHTS},
        {"save-outputs", required_argument, 0, OPT_SAVE_OUTPUTS},
        {"save-weights", required_argument, 0, OPT_SAVE_WEIGHTS},
        {"interp", no_argument, 0, OPT_INTERP},
        {"no-cache", no_argument, 0, OPT_NO_CACHE},
        {"unchecked", no_argument, 0, OPT_UNCHECKED},
        {"cc-timeout", required_argument, 0, OPT_CC_TIMEOUT},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, OPT_VERSION},
        {"profile", no_argument, 0, OPT_PROFILE},
        {"repeat", required_argument, 0, OPT_REPEAT},
        {"report", required_argument, 0, OPT_REPORT},
        {"trace", required_argument, 0, OPT_TRACE},
        {"plot", required_argument, 0, OPT_PLOT},
        {"calibrate", no_argument, 0, OPT_CALIBRATE},
        {"counters", no_argument, 0, OPT_COUNTERS},
        {"pad-to", required_argument, 0, OPT_PAD_TO},
        {"no-run", no_argument, 0, OPT_NO_RUN},
        {"accel", required_argument, 0, OPT_ACCEL},
        {"accel-report", required_argument, 0, OPT_ACCEL_REPORT},
        {"search", required_argument, 0, OPT_SEARCH},
        {"topology", required_argument, 0, OPT_TOPOLOGY},
        {"export-topology", required_argument, 0, OPT_EXPORT_TOPOLOGY},
        {"export-format", required_argument, 0, OPT_EXPORT_FORMAT},
        {"sweep", no_argument, 0, OPT_SWEEP},
        {"sweep-out", required_argument, 0, OPT_SWEEP_OUT},
        {"sweep-arrays", required_argument, 0, OPT_SWEEP_ARRAYS},
        {"sweep-dataflows", required_argument, 0, OPT_SWEEP_DATAFLOWS},
        {"sweep-sram", required_argument, 0, OPT_SWEEP_SRAM},
        {"strict", no_argument, 0, OPT_STRICT},
        {"accel-mode", required_argument, 0, OPT_ACCEL_MODE},
        {"accel-trace", required_argument, 0, OPT_ACCEL_TRACE},
        {"from-report", required_argument, 0, OPT_FROM_REPORT},
        {"target", required_argument, 0, OPT_TARGET},
        {"print-target", no_argument, 0, OPT_PRINT_TARGET},
        {"threads", required_argument, 0, OPT_THREADS},
        {"sched", required_argument, 0, OPT_SCHED},
        {"devices", required_argument, 0, OPT_DEVICES},
        {"sched-trace", required_argument, 0, OPT_SCHED_TRACE},
        {"dump-graph", required_argument, 0, OPT_DUMP_GRAPH},
        {0, 0, 0, 0},
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":O:x:D:I:o:vh", longopts, NULL)) != -1) {
        switch (c) {
        case 'O':
            if (strlen(optarg) != 1 || optarg[0] < '0' || optarg[0] > '3')
                return usage_error("unknown optimization level '-O%s' (use -O0 to -O3)", optarg);
            o->opt_level = optarg[0] - '0';
            break;
        case 'x':
            if (strcmp(optarg, "te") == 0)
                o->lang = LANG_TE;
            else if (strcmp(optarg, "tir") == 0)
                o->lang = LANG_TIR;
            else if (strcmp(optarg, "onnx") == 0)
                o->lang = LANG_ONNX;
            else
                return usage_error("unknown language '-x %s' (use te, tir or onnx)", optarg);
            break;
        case 'D': {
            const char *name, *value;
            if (!split_assign(optarg, &name, &value) || !*value)
                return usage_error("-D expects NAME=VALUE, got '%s'", optarg);
            o->defines = xrealloc(o->defines, sizeof *o->defines * (size_t)(o->ndefines + 1));
            o->defines[o->ndefines++] = (fe_define){name, value};
            break;
        }
        case 'I':
            o->includes = xrealloc(o->includes, sizeof *o->includes * (size_t)(o->nincludes + 2));
            o->includes[o->nincludes++] = optarg;
            break;
        case 'o':
            o->output_file = optarg;
            break;
        case OPT_EMIT:
            if (strcmp(optarg, "te") == 0)
                o->emit = EMIT_TE;
            else if (strcmp(optarg, "tir") == 0)
                o->emit = EMIT_TIR;
            else if (strcmp(optarg, "c") == 0)
                o->emit = EMIT_C;
            else if (strcmp(optarg, "so") == 0)
                o->emit = EMIT_SO;
            else if (strcmp(optarg, "lib") == 0)
                o->emit = EMIT_LIB;
            else
                return usage_error("unknown --emit=%s (use te, tir, c, so or lib)", optarg);
            break;
        case OPT_PASSES: o->passes = optarg; break;
        case OPT_DUMP_IR: o->dump_ir = optarg; break;
        case OPT_DUMP_SCHEDULE: o->dump_schedule = true; break;
        case OPT_DUMP_DIR: o->dump_dir = optarg; break;
        case OPT_VERIFY_EACH: o->verify_each = true; break;
        case OPT_INTERP: o->interp = true; break;
        case OPT_NO_CACHE: o->no_cache = true; break;
        case OPT_UNCHECKED: o->unchecked = true; break;
        case OPT_CC_TIMEOUT:
            /* 0 is "never", which cg_options spells as a negative limit. */
            if (strcmp(optarg, "0") == 0)
                o->cc_timeout = -1;
            else if ((o->cc_timeout = parse_count(optarg, 86400)) < 0)
                return usage_error("--cc-timeout expects seconds from 0 to 86400, got '%s'", optarg);
            break;
        case OPT_TARGET: o->target_name = optarg; break;
        case OPT_PRINT_TARGET: o->print_target = true; break;
        case OPT_THREADS: o->threads_arg = optarg; break;
        case OPT_SCHED:
            if (!rt_strategy_parse(optarg, &o->sched))
                return usage_error("unknown --sched=%s (use serial, op, path, dynamic or "
                                   "dynamic-cp)", optarg);
            o->sched_on = true;
            break;
        case OPT_DEVICES: {
            char err[512];
            rt_devices_free(&o->devices);
            if (!rt_devices_parse(optarg, &o->devices, err, sizeof err))
                return usage_error("%s", err);
            o->sched_on = true;
            break;
        }
        case OPT_SCHED_TRACE: o->sched_trace = optarg; o->sched_on = true; break;
        case OPT_DUMP_GRAPH:
            if (!ends_with(optarg, ".dot") && !ends_with(optarg, ".svg"))
                return usage_error("--dump-graph=%s: the file must end in .dot or .svg", optarg);
            o->dump_graph = optarg;
            o->sched_on = true;
            break;
        case OPT_WEIGHTS: o->weights_dir = optarg; break;
        case OPT_SAVE_OUTPUTS: o->save_outputs = optarg; break;
        case OPT_SAVE_WEIGHTS: o->save_weights = optarg; break;
        case OPT_PROFILE: o->profile = true; break;
        case OPT_CALIBRATE: o->calibrate = true; break;
        case OPT_COUNTERS: o->counters = o->profile = true; break;
        case OPT_NO_RUN: o->no_run = true; break;
        case OPT_TRACE: o->trace = optarg; o->profile = true; break;
        case OPT_PLOT: o->plot_dir = optarg; o->profile = true; break;
        case OPT_REPEAT:
            if ((o->repeat = parse_count(optarg, 1000000)) < 0)
                return usage_error("--repeat expects a count from 1 to 1000000, got '%s'", optarg);
            break;
        case OPT_PAD_TO:
            if ((o->pad_to = parse_count(optarg, 1 << 20)) < 0)
                return usage_error("--pad-to expects a positive size, got '%s'", optarg);
            o->accel.pad_to = o->pad_to;
            break;
        case OPT_ACCEL: o->accel.config = optarg; o->accel_on = true; break;
        case OPT_ACCEL_REPORT: o->accel.report = optarg; o->accel_on = true; break;
        case OPT_SEARCH: o->accel.search = optarg; o->accel_on = true; break;
        case OPT_TOPOLOGY: o->accel.topology = optarg; o->accel_on = true; break;
        case OPT_EXPORT_TOPOLOGY: o->accel.export_topology = optarg; o->accel_on = true; break;
        case OPT_EXPORT_FORMAT: o->accel.export_format = optarg; o->accel_on = true; break;
        case OPT_SWEEP: o->accel.sweep = true; o->accel_on = true; break;
        case OPT_SWEEP_OUT: o->accel.sweep_out = optarg; o->accel_on = true; break;
        case OPT_SWEEP_ARRAYS: o->accel.sweep_arrays = optarg; o->accel_on = true; break;
        case OPT_SWEEP_DATAFLOWS: o->accel.sweep_dataflows = optarg; o->accel_on = true; break;
        case OPT_SWEEP_SRAM: o->accel.sweep_srams = optarg; o->accel_on = true; break;
        case OPT_STRICT: o->accel.strict = true; o->accel_on = true; break;
        case OPT_ACCEL_MODE: o->accel.mode = optarg; o->accel_on = true; break;
        case OPT_ACCEL_TRACE: o->accel.trace = optarg; o->accel_on = true; break;
        case OPT_FROM_REPORT: o->accel.from_report = optarg; o->accel_on = true; break;
        case OPT_REPORT:
            if (ends_with(optarg, ".csv"))
                o->report_csv = optarg;
            else if (ends_with(optarg, ".json"))
                o->report_json = optarg;
            else
                return usage_error("--report=%s: the file name must end in .csv or .json", optarg);
            o->profile = true;
            break;
        case OPT_INPUT: {
            const char *name, *path;
            if (!split_assign(optarg, &name, &path) || !*path)
                return usage_error("--input expects NAME=FILE.npy, got '%s'", optarg);
            for (int i = 0; i < o->ninputs; i++)
                if (strcmp(o->inputs[i].name, name) == 0) {
                    char msg[512];
                    snprintf(msg, sizeof msg, "--input %s=%s: input %s is already given (--input %s=%s)",
                             name, path, name, name, o->inputs[i].path);
                    return usage_error("%s", msg);
                }
            o->inputs = xrealloc(o->inputs, sizeof *o->inputs * (size_t)(o->ninputs + 1));
            o->inputs[o->ninputs++] = (rt_named_path){name, path};
            break;
        }
        case OPT_LIST_PASSES: {
            int n;
            const pass_info *t = pass_table(&n);
            printf("passes:\n");
            for (int i = 0; i < n; i++)
                printf("  %-14s %s\n", t[i].name, t[i].description);
            printf("pipelines:\n");
            for (int l = 0; l <= 3; l++)
                printf("  -O%d  %s\n", l, pass_pipeline(l));
            return 0;
        }
        case 'v': o->verbose = true; break;
        case 'h': usage(stdout); return 0;
        case OPT_VERSION:
            printf("tec %s\n", PACKAGE_VERSION);
            return 0;
        case ':':
            return usage_error("option '%s' needs an argument", argv[optind - 1]);
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    {
        diag td;
        diag_init(&td, stderr);
        bool ok = cg_target_from_name(o->target_name ? o->target_name : "native", &o->target, &td);
        diag_fini(&td);
        if (!ok) {
            fprintf(stderr, "tec: try 'tec --help'\n");
            return EXIT_USAGE;
        }
    }
    char terr[256];
    if (!cg_resolve_threads(o->threads_arg, &o->target, &o->threads, &o->threads_source, terr,
                            sizeof terr))
        return usage_error("%s", terr);
    if (o->print_target) {
        cg_target_print(stdout, &o->target);
        printf("threads: %d (%s)\n", o->threads,
               strcmp(o->threads_source, "cores") == 0 ? "default: the cores" : o->threads_source);
        return 0;
    }
    if (o->pad_to && !o->accel_on)
        o->profile = true;   /* --pad-to alone pads the profile's GEMMs */
    if (o->accel_on) {
        diag d;
        diag_init(&d, stderr);
        bool ok = acc_cli_check_options(&o->accel, &d);
        diag_fini(&d);
        if (!ok)
            return EXIT_USAGE;
        if (o->profile && acc_cli_scalesim_mode(&o->accel))
            return usage_error("%s", "--profile's accelerator columns come from tec's own "
                               "model, not from --accel-mode=scalesim");
    }
    if (o->passes || o->dump_ir) {
        diag pd;
        diag_init(&pd, stderr);
        bool ok = pass_check_names(o->passes, o->dump_ir, &pd);
        diag_fini(&pd);
        if (!ok) {
            fprintf(stderr, "tec: try 'tec --help'\n");
            return EXIT_USAGE;
        }
    }
    if (optind == argc && (o->calibrate || o->accel.topology || o->accel.from_report))
        return -1;   /* tec --calibrate, or tec --topology|--from-report FILE --accel CFG alone */
    if (o->accel.topology && optind < argc)
        return usage_error("--topology replaces the program: remove '%s'", argv[optind]);
    if (o->accel.from_report && optind < argc)
        return usage_error("--from-report replaces the program: remove '%s'", argv[optind]);
    if (optind == argc)
        return usage_error("%s", "no input file");
    if (optind + 1 < argc)
        return usage_error("more than one input file ('%s' ...)", argv[optind + 1]);
    o->input_file = argv[optind];
    if (o->profile && o->emit != EMIT_RUN && (o->report_csv || o->report_json || o->trace ||
                                             o->plot_dir))
        return usage_error("%s", "--report, --trace and --plot need a run (not --emit)");
    if (o->sched_on && (o->profile || o->interp || o->accel_on || o->emit != EMIT_RUN))
        return usage_error("%s", "--sched, --devices, --sched-trace and --dump-graph run the "
                           "compiled calls on worker threads: they cannot be combined with "
                           "--profile, --interp, --accel or --emit");
    if (o->sched_on && !o->devices.n && !rt_devices_cpus(o->threads, &o->devices))
        return usage_error("%s", "out of memory");
    if (o->no_run && !o->profile && !o->sched_on)
        return usage_error("%s", "--no-run needs --profile (or --report, --plot, --pad-to) "
                           "or --sched");
    if (o->no_run && (o->counters || o->trace || (o->repeat && !o->sched_on) ||
                      o->save_outputs || o->interp))
        return usage_error("%s", "--no-run cannot be combined with --counters, --trace, "
                           "--repeat, --save-outputs or --interp");
    if ((o->emit == EMIT_SO || o->emit == EMIT_LIB) && !o->output_file)
        return usage_error("--emit=%s needs -o FILE", o->emit == EMIT_SO ? "so" : "lib");
    if (o->emit == EMIT_LIB && (o->profile || o->interp || o->ninputs))
        return usage_error("%s", "--emit=lib writes a library for other programs: it does not "
                           "go with --profile, --interp or --input");
    if (o->emit == EMIT_LIB) {
        char why[1024], *name = rt_aot_library_name(o->output_file, why, sizeof why);
        free(name);
        if (!name)
            return usage_error("%s", why);
    }
    if (o->save_weights && (o->weights_dir || o->emit != EMIT_TE))
        return usage_error("%s", "--save-weights goes with --emit=te (and not with --weights)");
    if (o->emit == EMIT_RUN && o->output_file)
        return usage_error("-o %s needs --emit=tir, c or so (outputs of a run: --save-outputs "
                           "DIR)", o->output_file);
    return -1;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The directory of the running executable's lib/ (an uninstalled build tree
 * finds lib/nn.te there), then the installed data directory. */
static void add_default_includes(options *o, char *exe_dir_buf, size_t n)
{
    ssize_t k = readlink("/proc/self/exe", exe_dir_buf, n - 5);
    o->includes = xrealloc(o->includes, sizeof *o->includes * (size_t)(o->nincludes + 3));
    if (k > 0) {
        exe_dir_buf[k] = 0;
        char *dir = dirname(exe_dir_buf);
        memmove(exe_dir_buf, dir, strlen(dir) + 1);
        strcat(exe_dir_buf, "/lib");
        o->includes[o->nincludes++] = exe_dir_buf;
    }
    o->includes[o->nincludes++] = TEC_PKGDATADIR;
}

static const char *module_base(const char *path)
{
    if (strcmp(path, "-") == 0)
        return "stdin";
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The accelerator columns of the --profile table (accel/cli.h: one
 * modeled run for the columns, the summary and the accelerator's files). */
static void accel_cells(void *ctx, const ir_func *fn, char cells[][RT_EXTRA_CELL])
{
    acc_cli_session_cells(ctx, fn, cells);
}

/* The profile's table and reports, with the accelerator's columns, then the
 * check of the run's counters against the analysis. */
static void report_profile(rt_profile *prof, const options *o, acc_cli_session *acols,
                           const ir_module *m, diag *d)
{
    rt_report_options rep = {.table = stdout, .csv = o->report_csv, .json = o->report_json,
                             .trace = o->trace, .plot_dir = o->plot_dir};
    /* The model takes each layer's work from the run's counters. */
    if (acols->loaded && acc_cli_session_model(acols, prof->st, rt_profile_counts(prof), d)) {
        rep.nextra = ACC_CLI_NCOLS;
        rep.extra_titles = acc_cli_column_titles;
        rep.extra_cells = accel_cells;
        rep.extra_ctx = acols;
    }
    if (prof->nruns)
        fputc('\n', stdout);
    rt_profile_report(prof, &rep, d);
    if (acols->modeled)
        acc_cli_session_finish(acols, stdout, d);
    if (prof->nruns)
        rt_profile_check(prof, d);
}

/* A private folder (under $TMPDIR) for an ONNX model's weights and the
 * .npy copies of .pb inputs; removed, with its files, when tec ends. */
static const char *scratch_dir(char **scratch, diag *d)
{
    if (*scratch)
        return *scratch;
    const char *tmp = getenv("TMPDIR");
    char *dir = malloc(strlen(tmp && *tmp ? tmp : "/tmp") + 24);
    sprintf(dir, "%s/tec-onnx-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        diag_error(d, diag_noloc(), "cannot create a folder in %s: %s", tmp && *tmp ? tmp : "/tmp",
                   strerror(errno));
        free(dir);
        return NULL;
    }
    return *scratch = dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

static void remove_scratch(char *dir)
{
    if (dir)
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/* --input NAME=FILE.pb: an ONNX TensorProto, read through a .npy copy in
 * the scratch folder (owned[i] keeps its malloc'ed path). */
static bool convert_pb_inputs(options *o, char **scratch, char **owned, diag *d)
{
    for (int i = 0; i < o->ninputs; i++) {
        if (!ends_with(o->inputs[i].path, ".pb"))
            continue;
        const char *dir = scratch_dir(scratch, d);
        if (!dir)
            return false;
        owned[i] = malloc(strlen(dir) + 32);
        sprintf(owned[i], "%s/input-%d.npy", dir, i);
        if (!fe_onnx_pb_to_npy(o->inputs[i].path, owned[i], d))
            return false;
        o->inputs[i].path = owned[i];
    }
    return true;
}

/* An ONNX model as a .te program.  Its weights go to --save-weights, or,
 * for a run (or a library) without --weights, to the scratch folder it reads. */
static char *import_onnx(options *o, char **scratch, diag *d)
{
    fe_onnx_options oo = {o->defines, o->ndefines, o->save_weights, o->inputs, o->ninputs};
    char *weights = NULL;
    if ((o->emit == EMIT_RUN || o->emit == EMIT_LIB) && !o->weights_dir) {
        const char *dir = scratch_dir(scratch, d);
        if (!dir)
            return NULL;
        weights = malloc(strlen(dir) + 16);
        sprintf(weights, "%s/weights", dir);
        oo.weights_dir = o->weights_dir = weights;
    }
    char *text = fe_onnx_import(o->input_file, &oo, d);
    if (weights)   /* the run reads it: keep it with the scratch folder */
        o->scratch_weights = weights;
    return text;
}

static int status_of(const diag *d)
{
    return d->ninternal ? EXIT_INTERNAL : d->nerrors ? EXIT_USER : 0;
}

int main(int argc, char **argv)
{
    options o = {.opt_level = 1};
    int st = parse_args(argc, argv, &o);
    if (st >= 0) {   /* a usage error, --help, --version ...: nothing else was set up */
        free(o.defines);
        free(o.includes);
        free(o.inputs);
        rt_devices_free(&o.devices);
        return st;
    }
    if (o.calibrate) {
        diag cd;
        diag_init(&cd, stderr);
        rt_calibration cal;
        if (rt_calibrate(&cal, stderr, &cd) && rt_calibration_save(&cal, &cd))
            rt_calibration_print(stdout, &cal);
        st = status_of(&cd);
        diag_fini(&cd);
        if (st || !o.input_file)
            return st;
    }

    if (o.accel.topology || o.accel.from_report) {
        diag td;
        diag_init(&td, stderr);
        acc_cli_run_topology(&o.accel, stdout, &td);
        st = status_of(&td);
        diag_fini(&td);
        return st;
    }

    diag d;
    diag_init(&d, stderr);
    ir_module *m = NULL;
    char *text = NULL;
    char exe_dir[4096];
    rt_iface iface = {0};
    cg_library *lib = NULL;
    rt_shapes *shapes = NULL;
    rt_profile *prof = NULL;
    char *prof_pipeline = NULL;
    char *so_path = NULL, *csrc = NULL;
    rt_run *run = NULL;
    acc_cli_session acols = {0};
    char *scratch = NULL, **pb_inputs = NULL;
    const char *display = strcmp(o.input_file, "-") == 0 ? "<stdin>" : o.input_file;

    lang_kind lang = o.lang;
    if (lang == LANG_AUTO)
        lang = ends_with(o.input_file, ".tir")    ? LANG_TIR
               : ends_with(o.input_file, ".onnx") ? LANG_ONNX
                                                  : LANG_TE;
    pb_inputs = xrealloc(NULL, sizeof *pb_inputs * (size_t)(o.ninputs + 1));
    memset(pb_inputs, 0, sizeof *pb_inputs * (size_t)(o.ninputs + 1));
    if (!convert_pb_inputs(&o, &scratch, pb_inputs, &d))
        goto done;
    size_t len = 0;
    bool imported = lang == LANG_ONNX;
    if (imported) {
        if (!(text = import_onnx(&o, &scratch, &d)))
            goto done;
        len = strlen(text);
        lang = LANG_TE;
    } else if (!(text = fe_read_source(o.input_file, &len))) {
        diag_error(&d, diag_noloc(), "cannot read %s: %s", display, fe_read_error(errno));
        goto done;
    }
    if (o.emit == EMIT_TE) {
        FILE *out = o.output_file ? fopen(o.output_file, "w") : stdout;
        if (!out || fputs(text, out) < 0 || (out != stdout && fclose(out) != 0))
            diag_error(&d, diag_noloc(), "cannot write %s: %s", o.output_file, strerror(errno));
        goto done;
    }

    if (lang == LANG_TIR) {
        m = ir_parse(display, text, len, &d);
    } else {
        add_default_includes(&o, exe_dir, sizeof exe_dir);
        fe_options fo = {o.includes, o.nincludes, o.defines, o.ndefines};
        m = fe_compile(display, text, len, &fo, &d);
        if (!m && imported && !d.ninternal)
            diag_internal(&d, "onnx", "the program imported from %s does not compile (see it "
                          "with --emit=te)", display);
    }
    if (!m)
        goto done;
    if (!(lang == LANG_TIR ? ir_verify_input(m, display, &d) : ir_verify(m, "frontend", &d)))
        goto done;
    if (!rt_iface_record(m, &iface, &d))
        goto done;

    char base[256];
    snprintf(base, sizeof base, "%s", module_base(o.input_file));
    char *dot = strrchr(base, '.');
    if (dot && dot != base)
        *dot = 0;
    pass_options po = {
        .dump_ir = o.dump_ir, .dump_out = stderr, .dump_dir = o.dump_dir,
        .base = base, .verify_each = o.verify_each, .target = &o.target,
    };
    const char *pipeline = o.passes ? o.passes : pass_pipeline(o.opt_level);
    if (o.profile) {
        /* Shapes as declared, before flatten; instrument runs last. */
        if (!(shapes = rt_shapes_record(m))) {
            diag_error(&d, diag_noloc(), "out of memory");
            goto done;
        }
        if (!strstr(pipeline, "instrument")) {
            size_t n = strlen(pipeline) + 16;
            prof_pipeline = malloc(n);
            if (!prof_pipeline) {
                diag_error(&d, diag_noloc(), "out of memory");
                goto done;
            }
            snprintf(prof_pipeline, n, "%s%sinstrument", pipeline, *pipeline ? "," : "");
            pipeline = prof_pipeline;
        }
    }
    if (!pass_run_pipeline(m, pipeline, &po, &d))
        goto done;
    if (o.dump_schedule)
        dump_schedules(stderr, m);
    if (o.accel_on && !o.profile && o.emit == EMIT_RUN) {
        /* The model needs no run: the workload comes from the IR. */
        acc_cli_run_module(m, &o.accel, stdout, &d);
        goto done;
    }
    if (o.accel_on && o.profile && !acc_cli_session_load(&acols, &o.accel, &d))
        goto done;
    rt_run_options ro = {o.inputs, o.ninputs, o.weights_dir, NULL,
                         .own_storage = o.sched_on && o.sched != RT_SCHED_SERIAL};
    rt_sched_options so = {.strategy = o.sched, .runs = o.repeat ? o.repeat : 3,
                           .trace = o.sched_trace, .dump_graph = o.dump_graph};
    if (o.no_run && o.sched_on) {
        rt_sched_main(m, NULL, &ro, &so, &o.devices, stdout, &d);
        goto done;
    }
    if (o.no_run && o.emit == EMIT_RUN) {
        rt_profile_options pro = {.repeat = 1, .pad_to = o.pad_to, .threads = o.threads};
        if ((prof = rt_profile_new(m, shapes, &pro, &d)))
            report_profile(prof, &o, &acols, m, &d);
        goto done;
    }

    if (o.emit == EMIT_TIR) {
        FILE *out = o.output_file ? fopen(o.output_file, "w") : stdout;
        if (!out) {
            diag_error(&d, diag_noloc(), "cannot write %s: %s", o.output_file, strerror(errno));
            goto done;
        }
        ir_print_module(out, m);
        if (out != stdout && fclose(out) != 0)
            diag_error(&d, diag_noloc(), "cannot write %s: %s", o.output_file, strerror(errno));
        goto done;
    }

    /* The C compiler's level: -O1 below tec -O2 (plain loop nests, quick to
     * build), -O3 from it (bench/models.sh: -O3 kernels ran the zoo 2-19%
     * faster on one thread than -O2 kernels, for 10-20% more compile time). */
    char oflags[16];
    snprintf(oflags, sizeof oflags, "-O%d", o.opt_level < 2 ? 1 : 3);
    cg_options co = {.opt_flags = oflags, .verbose = o.verbose, .no_cache = o.no_cache,
                     .target = &o.target, .cc_timeout = o.cc_timeout,
                     .unchecked = o.unchecked};
    if (o.emit == EMIT_LIB) {
        rt_aot_write(m, &iface, o.output_file, o.weights_dir, display, &co, &d);
        goto done;
    }
    if (!o.interp || o.emit != EMIT_RUN) {
        if (o.verbose) {
            char line[512];
            cg_target_describe(&o.target, line, sizeof line);
            fprintf(stderr, "tec: target: %s\n", line);
        }
        csrc = cg_emit_c(m, &o.target, o.unchecked, &d);
        if (!csrc)
            goto done;
    }
    if (o.emit == EMIT_C) {
        FILE *out = o.output_file ? fopen(o.output_file, "w") : stdout;
        if (!out) {
            diag_error(&d, diag_noloc(), "cannot write %s: %s", o.output_file, strerror(errno));
            goto done;
        }
        fputs(csrc, out);
        if (out != stdout && fclose(out) != 0)
            diag_error(&d, diag_noloc(), "cannot write %s: %s", o.output_file, strerror(errno));
        goto done;
    }
    if (o.emit == EMIT_SO) {
        cg_compile_to(csrc, o.output_file, &co, &d);
        goto done;
    }
    if (!o.interp) {
        char missing[256];
        if (!cg_target_runs_here(&o.target, missing, sizeof missing)) {
            diag_error(&d, diag_noloc(), "cannot run kernels built for --target=%s on this "
                       "machine: it lacks %s (use another --target, or build them with "
                       "--emit=so)", o.target.name, missing);
            goto done;
        }
        /* Bound OpenMP threads for parallel loops on several threads of the
         * main thread's team; the scheduler's device workers place
         * themselves (doc/scheduling.md). */
        cg_bind_openmp_threads(o.threads > 1 && !o.sched_on);
        so_path = cg_compile(csrc, &co, &d);
        if (!so_path || !(lib = cg_load(so_path, m, &d)))
            goto done;
        if (cg_set_threads(lib, o.threads) && o.verbose)
            fprintf(stderr, "tec: parallel loops run on %d thread%s (%s)\n", o.threads,
                    o.threads == 1 ? "" : "s",
                    strcmp(o.threads_source, "cores") == 0 ? "default: the cores"
                                                           : o.threads_source);
    }

    ro.lib = lib;
    run = rt_run_new(m, &iface, &ro, &d);
    if (!run)
        goto done;
    double median_us = 0;
    if (o.profile) {
        rt_profile_options pro = {.repeat = o.repeat ? o.repeat : 1, .counters = o.counters,
                                  .pad_to = o.pad_to, .threads = o.interp ? 1 : o.threads};
        if (!(prof = rt_profile_new(m, shapes, &pro, &d)) || !rt_profile_run(prof, run, &ro, &d))
            goto done;
    } else if (o.sched_on) {
        if (!rt_sched_main(m, run, &ro, &so, &o.devices, stdout, &d))
            goto done;
    } else if (o.repeat) {
        if (!rt_time_runs(run, &ro, o.repeat, &median_us, &d))
            goto done;
    } else if (!rt_run_execute(run, &ro, &d)) {
        goto done;
    }
    if (o.save_outputs && !rt_run_save_outputs(run, o.save_outputs, &d))
        goto done;
    rt_run_print_summary(run, stdout);
    if (o.repeat && !o.profile && !o.sched_on)
        printf("time: median of %d runs after a warm-up: %.1f us\n", o.repeat, median_us);
    if (prof)
        report_profile(prof, &o, &acols, m, &d);

done:
    st = status_of(&d);
    acc_cli_session_free(&acols);
    rt_profile_free(prof);
    rt_shapes_free(shapes);
    free(prof_pipeline);
    rt_run_free(run);
    if (lib)
        cg_unload(lib);
    free(so_path);
    free(csrc);
    rt_iface_free(&iface);
    ir_module_free(m);
    free(text);
    free(o.defines);
    free(o.includes);
    for (int i = 0; pb_inputs && i < o.ninputs; i++)
        free(pb_inputs[i]);
    free(pb_inputs);
    free(o.inputs);
    remove_scratch(scratch);
    free(o.scratch_weights);
    rt_devices_free(&o.devices);
    diag_fini(&d);
    if (fflush(stdout) != 0 && st == 0) {
        fprintf(stderr, "tec: error: cannot write standard output: %s\n", strerror(errno));
        st = EXIT_USER;
    }
    return st;
}
