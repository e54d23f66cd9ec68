/* driver/options.c — the `tec` command line as one table.
 *
 * Each row of `table` is one option: how it is spelled (the long name for
 * getopt_long, the letter of a short option), the left column and text of
 * its `tec --help` line, and what it sets: a flag or a string of the
 * options struct (by offset), or a function for options that check their
 * argument.  getopt's tables and the help are made from the rows, so an
 * option cannot be parsed without being documented; usage.sh checks that
 * doc/tec.1 names every option of `tec --help`.
 *
 * After the options, checks that span several of them (a combination that
 * makes no sense, an option that needs another) each have a function. */
#include "config.h"

#include "driver/options.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ir/diag.h"
#include "ir/phase.h"
#include "passes/passes.h"
#include "runtime/aot.h"
#include "runtime/profile.h"

typedef enum {
    SEC_COMPILE, SEC_RUN, SEC_PROFILE, SEC_SCHED, SEC_ACCEL, SEC_OTHER, NSECTIONS
} section;

static const char *const section_titles[NSECTIONS] = {
    "Compilation:", "Running:", "Profiling (doc/profile.md):",
    "Scheduling on several devices (doc/scheduling.md):", "Accelerator model (doc/accel.md):",
    "",
};

/* What an option turns on besides its own field. */
enum { ALSO_PROFILE = 1, ALSO_ACCEL = 2, ALSO_SCHED = 4 };

typedef enum { SET_FLAG, SET_STRING, SET_CALL } set_kind;

typedef struct drv_option {
    const char *name;          /* long name without "--", or NULL */
    char letter;               /* the short option, or 0 */
    bool has_arg;
    const char *spelling;      /* left column of --help */
    const char *help;          /* '\n' starts a continuation line */
    section sec;
    set_kind kind;
    size_t field;              /* SET_FLAG: a bool, SET_STRING: a const char *, at this offset */
    int (*call)(options *o, const char *arg);   /* SET_CALL: -1 to go on, or an exit status */
    unsigned also;             /* ALSO_* */
} drv_option;

#define FLAG(f) SET_FLAG, offsetof(options, f), NULL
#define STRING(f) SET_STRING, offsetof(options, f), NULL
#define CALL(fn) SET_CALL, 0, fn

/* The options that check their argument (below the table). */
static int set_opt_level(options *o, const char *arg);
static int set_lang(options *o, const char *arg);
static int set_emit(options *o, const char *arg);
static int add_define(options *o, const char *arg);
static int add_include(options *o, const char *arg);
static int add_input(options *o, const char *arg);
static int set_cc_timeout(options *o, const char *arg);
static int time_phases(options *o, const char *arg);
static int set_repeat(options *o, const char *arg);
static int set_pad_to(options *o, const char *arg);
static int set_report(options *o, const char *arg);
static int set_columns(options *o, const char *arg);
static int set_sched(options *o, const char *arg);
static int set_devices(options *o, const char *arg);
static int set_dump_graph(options *o, const char *arg);
static int list_passes(options *o, const char *arg);
static int show_help(options *o, const char *arg);
static int show_version(options *o, const char *arg);

/* ------------------------------------------------ the table */

static const drv_option table[] = {
    /* Compilation */
    {NULL, 'O', true, "-O0 -O1 -O2 -O3", "optimization level (default -O2; -O0 and -O1 to debug)", SEC_COMPILE,
     CALL(set_opt_level), 0},
    {NULL, 'x', true, "-x te|tir|onnx", "language of the input (default: from the file name)",
     SEC_COMPILE, CALL(set_lang), 0},
    {NULL, 'D', true, "-D NAME=VALUE", "override the shape parameter `let NAME`", SEC_COMPILE,
     CALL(add_define), 0},
    {NULL, 'I', true, "-I DIR", "search DIR for imports", SEC_COMPILE, CALL(add_include), 0},
    {"passes", 0, true, "--passes=LIST", "run these passes instead of the -O pipeline",
     SEC_COMPILE, STRING(passes), 0},
    {"list-passes", 0, false, "--list-passes", "list the passes and the pipelines, then exit",
     SEC_COMPILE, CALL(list_passes), 0},
    {"dump-ir", 0, true, "--dump-ir=PASS,...|all",
     "print the IR after these passes to stderr\n"
     "(schedule-steps: after each step of a written schedule)",
     SEC_COMPILE, STRING(dump_ir), 0},
    {"dump-dir", 0, true, "--dump-dir=DIR", "write the IR after every pass to DIR/NAME.NN.PASS.tir",
     SEC_COMPILE, STRING(dump_dir), 0},
    {"dump-schedule", 0, false, "--dump-schedule",
     "print the schedule -O2/-O3 chose for each kernel (stderr),\n"
     "as `schedule` blocks to copy into the program",
     SEC_COMPILE, FLAG(dump_schedule), 0},
    {"verify-each", 0, false, "--verify-each", "verify the IR after every pass", SEC_COMPILE,
     FLAG(verify_each), 0},
    {"emit", 0, true, "--emit=te|tir|c|so|lib",
     "print the .te program (of an ONNX model), the IR or C\n"
     "(or write the .so with -o) and stop; lib: write the\n"
     "network as a C library libNAME.so|libNAME.a and NAME.h\n"
     "with -o (doc/aot.md)",
     SEC_COMPILE, CALL(set_emit), 0},
    {"save-weights", 0, true, "--save-weights DIR",
     "with an ONNX model: write its weights to DIR (doc/onnx.md)", SEC_COMPILE,
     STRING(save_weights), 0},
    {NULL, 'o', true, "-o FILE", "output file for --emit", SEC_COMPILE, STRING(output_file), 0},
    {"target", 0, true, "--target=NAME",
     "build kernels for NAME: native (default, this machine),\n"
     "x86-64, x86-64-v2, x86-64-v3 or x86-64-v4",
     SEC_COMPILE, STRING(target_name), 0},
    {"print-target", 0, false, "--print-target",
     "print the target (ISA, vector width, cores, caches), exit", SEC_COMPILE,
     FLAG(print_target), 0},
    {"no-cache", 0, false, "--no-cache", "do not use the kernel cache", SEC_COMPILE,
     FLAG(no_cache), 0},
    {"unchecked", 0, false, "--unchecked",
     "no run-time checks of the indices tec cannot prove\n"
     "in range (an out-of-range index is then undefined)",
     SEC_COMPILE, FLAG(unchecked), 0},
    {"cc-timeout", 0, true, "--cc-timeout=SECONDS",
     "stop the C compiler after SECONDS (default 600; 0: never)", SEC_COMPILE,
     CALL(set_cc_timeout), 0},
    {"verbose", 'v', false, "-v, --verbose", "show the target and the C compiler's command line",
     SEC_COMPILE, FLAG(verbose), 0},
    {"time-phases", 0, false, "--time-phases",
     "print where the time went, phase by phase (import, passes,\n"
     "C, compiler, load, run), to stderr as tec ends",
     SEC_COMPILE, CALL(time_phases), 0},
    /* Running */
    {"input", 0, true, "--input NAME=FILE.npy",
     "contents of input NAME (default: the documented formula);\n"
     "an ONNX TensorProto FILE.pb is read as well",
     SEC_RUN, CALL(add_input), 0},
    {"weights", 0, true, "--weights DIR", "parameters from DIR/<parameter name>.npy", SEC_RUN,
     STRING(weights_dir), 0},
    {"save-outputs", 0, true, "--save-outputs DIR", "write every output to DIR/<name>.npy",
     SEC_RUN, STRING(save_outputs), 0},
    {"interp", 0, false, "--interp", "run with the IR interpreter instead of compiled code",
     SEC_RUN, FLAG(interp), 0},
    {"threads", 0, true, "--threads N",
     "threads of parallel loops, 1 to 1024 (default: every\n"
     "processor tec may use; or TEC_NUM_THREADS)",
     SEC_RUN, STRING(threads_arg), 0},
    {"repeat", 0, true, "--repeat N",
     "run N times after a warm-up; print the median time\n"
     "(--profile: the median of 5 runs by default)",
     SEC_RUN, CALL(set_repeat), 0},
    /* Profiling */
    {"profile", 0, false, "--profile", "per-layer MACs, FLOPs, bytes, time and roofline table",
     SEC_PROFILE, FLAG(profile), 0},
    {"report", 0, true, "--report=FILE.csv|FILE.json",
     "also write the report to FILE (may be repeated)", SEC_PROFILE, CALL(set_report),
     ALSO_PROFILE},
    {"columns", 0, true, "--columns=LIST|all",
     "the table's columns (default: layer, op, output, MACs,\n"
     "time, time%, GFLOP/s, roof%, bound; doc/profile.md)",
     SEC_PROFILE, CALL(set_columns), ALSO_PROFILE},
    {"trace", 0, true, "--trace=FILE.json", "Chrome trace-event file, one slice per layer run",
     SEC_PROFILE, STRING(trace), ALSO_PROFILE},
    {"plot", 0, true, "--plot=DIR", "per-layer and roofline charts (PNG, SVG) via gnuplot",
     SEC_PROFILE, STRING(plot_dir), ALSO_PROFILE},
    {"counters", 0, false, "--counters", "hardware counters (cycles, instructions, LLC misses)",
     SEC_PROFILE, FLAG(counters), ALSO_PROFILE},
    {"pad-to", 0, true, "--pad-to N", "report GEMM dimensions padded to multiples of N",
     SEC_PROFILE, CALL(set_pad_to), 0},
    {"no-run", 0, false, "--no-run", "with --profile: static counts only, nothing is run",
     SEC_PROFILE, FLAG(no_run), 0},
    {"calibrate", 0, false, "--calibrate",
     "measure this machine's peak FLOP/s and bandwidth (cached)", SEC_PROFILE,
     FLAG(calibrate), 0},
    /* Scheduling */
    {"sched", 0, true, "--sched=STRATEGY",
     "serial, op, path, dynamic or dynamic-cp: run the calls on\n"
     "the devices; print the makespan against serial",
     SEC_SCHED, CALL(set_sched), ALSO_SCHED},
    {"devices", 0, true, "--devices=LIST",
     "cpu:N (a worker on N cores), acc:FILE.cfg (a modeled\n"
     "accelerator), comma-separated (default: one cpu:1 per\n"
     "thread)",
     SEC_SCHED, CALL(set_devices), ALSO_SCHED},
    {"sched-trace", 0, true, "--sched-trace=FILE.json",
     "Chrome trace of the schedule, one track per device", SEC_SCHED, STRING(sched_trace),
     ALSO_SCHED},
    {"dump-graph", 0, true, "--dump-graph=FILE.dot|FILE.svg",
     "the calls' DAG with costs and devices", SEC_SCHED, CALL(set_dump_graph), ALSO_SCHED},
    /* Accelerator model */
    {"accel", 0, true, "--accel CFG",
     "model the network on the systolic array of CFG (a SCALE-Sim\n"
     ".cfg; presets in accel/configs): per-layer table, no run;\n"
     "with --profile, accelerator columns in the profile table",
     SEC_ACCEL, STRING(accel.config), ALSO_ACCEL},
    {"accel-report", 0, true, "--accel-report=FILE.csv|FILE.json", "per-layer accelerator report",
     SEC_ACCEL, STRING(accel.report), ALSO_ACCEL},
    {"accel-trace", 0, true, "--accel-trace=FILE.json",
     "the accelerator's timeline, fold by fold, as a Chrome trace", SEC_ACCEL,
     STRING(accel.trace), ALSO_ACCEL},
    {"search", 0, true, "--search none|dram|edp",
     "choose tiling factors minimizing DRAM traffic or EDP", SEC_ACCEL, STRING(accel.search),
     ALSO_ACCEL},
    {"topology", 0, true, "--topology FILE",
     "model a SCALE-Sim topology CSV instead of a program", SEC_ACCEL, STRING(accel.topology),
     ALSO_ACCEL},
    {"from-report", 0, true, "--from-report FILE.json",
     "model the run a saved profile report (--report) holds", SEC_ACCEL,
     STRING(accel.from_report), ALSO_ACCEL},
    {"export-topology", 0, true, "--export-topology FILE",
     "write the network's GEMM layers as a SCALE-Sim topology", SEC_ACCEL,
     STRING(accel.export_topology), ALSO_ACCEL},
    {"export-format", 0, true, "--export-format conv|gemm", "format of --export-topology",
     SEC_ACCEL, STRING(accel.export_format), ALSO_ACCEL},
    {"sweep", 0, false, "--sweep", "model every configuration of the sweep lists below",
     SEC_ACCEL, FLAG(accel.sweep), ALSO_ACCEL},
    {"sweep-out", 0, true, "--sweep-out DIR", "sweep CSV and charts (default accel-sweep)",
     SEC_ACCEL, STRING(accel.sweep_out), ALSO_ACCEL},
    {"sweep-arrays", 0, true, "--sweep-arrays LIST", "e.g. 8x8,32x32,128x128", SEC_ACCEL,
     STRING(accel.sweep_arrays), ALSO_ACCEL},
    {"sweep-dataflows", 0, true, "--sweep-dataflows LIST", "e.g. os,ws,is", SEC_ACCEL,
     STRING(accel.sweep_dataflows), ALSO_ACCEL},
    {"sweep-sram", 0, true, "--sweep-sram LIST", "SRAM sizes in kB, e.g. 64,256", SEC_ACCEL,
     STRING(accel.sweep_srams), ALSO_ACCEL},
    {"sweep-max-area", 0, true, "--sweep-max-area MM2",
     "leave out configurations larger than MM2 mm^2", SEC_ACCEL, STRING(accel.sweep_max_area),
     ALSO_ACCEL},
    {"strict", 0, false, "--strict",
     "unknown config keys and sections are errors, not warnings", SEC_ACCEL,
     FLAG(accel.strict), ALSO_ACCEL},
    {"accel-mode", 0, true, "--accel-mode tec|scalesim",
     "tec's model (default) or SCALE-Sim v2's numbers (CALC\n"
     "configs; --accel-report=DIR then writes its three CSVs)",
     SEC_ACCEL, STRING(accel.mode), ALSO_ACCEL},
    /* the rest */
    {"help", 'h', false, "-h, --help", "this help", SEC_OTHER, CALL(show_help), 0},
    {"version", 0, false, "--version", "print the version", SEC_OTHER, CALL(show_version), 0},
};

enum { NOPTIONS = sizeof table / sizeof table[0], LONG_BASE = 256 };

void *drv_xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p)
        ir_out_of_memory();
    return p;
}

bool drv_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int drv_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tec: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\ntec: try 'tec --help'\n");
    return EXIT_USAGE;
}

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

/* ------------------------------------------------ options that check their argument */

static int set_opt_level(options *o, const char *arg)
{
    if (strlen(arg) != 1 || arg[0] < '0' || arg[0] > '3')
        return drv_usage_error("unknown optimization level '-O%s' (use -O0 to -O3)", arg);
    o->opt_level = arg[0] - '0';
    return -1;
}

/* The index of arg among names[lo..hi], or -1. */
static int pick(const char *arg, const char *const *names, int lo, int hi)
{
    for (int k = lo; k <= hi; k++)
        if (strcmp(arg, names[k]) == 0)
            return k;
    return -1;
}

static int set_lang(options *o, const char *arg)
{
    static const char *const names[] = {[LANG_TE] = "te", [LANG_TIR] = "tir", [LANG_ONNX] = "onnx"};
    int k = pick(arg, names, LANG_TE, LANG_ONNX);
    if (k < 0)
        return drv_usage_error("unknown language '-x %s' (use te, tir or onnx)", arg);
    o->lang = (lang_kind)k;
    return -1;
}

static int set_emit(options *o, const char *arg)
{
    static const char *const names[] = {[EMIT_TE] = "te", [EMIT_TIR] = "tir", [EMIT_C] = "c",
                                         [EMIT_SO] = "so", [EMIT_LIB] = "lib"};
    int k = pick(arg, names, EMIT_TE, EMIT_LIB);
    if (k < 0)
        return drv_usage_error("unknown --emit=%s (use te, tir, c, so or lib)", arg);
    o->emit = (emit_kind)k;
    return -1;
}

static int add_define(options *o, const char *arg)
{
    const char *name, *value;
    if (!split_assign((char *)arg, &name, &value) || !*value)
        return drv_usage_error("-D expects NAME=VALUE, got '%s'", arg);
    o->defines = drv_xrealloc(o->defines, sizeof *o->defines * (size_t)(o->ndefines + 1));
    o->defines[o->ndefines++] = (fe_define){name, value};
    return -1;
}

static int add_include(options *o, const char *arg)
{
    o->includes = drv_xrealloc(o->includes, sizeof *o->includes * (size_t)(o->nincludes + 2));
    o->includes[o->nincludes++] = arg;
    return -1;
}

static int add_input(options *o, const char *arg)
{
    const char *name, *path;
    if (!split_assign((char *)arg, &name, &path) || !*path)
        return drv_usage_error("--input expects NAME=FILE.npy, got '%s'", arg);
    for (int i = 0; i < o->ninputs; i++)
        if (strcmp(o->inputs[i].name, name) == 0) {
            char msg[512];
            snprintf(msg, sizeof msg, "--input %s=%s: input %s is already given (--input %s=%s)",
                     name, path, name, name, o->inputs[i].path);
            return drv_usage_error("%s", msg);
        }
    o->inputs = drv_xrealloc(o->inputs, sizeof *o->inputs * (size_t)(o->ninputs + 1));
    o->inputs[o->ninputs++] = (rt_named_path){name, path};
    return -1;
}

/* The clocks start here, at the start of the command line. */
static int time_phases(options *o, const char *arg)
{
    (void)o;
    (void)arg;
    ir_phase_enable(stderr);
    return -1;
}

static int set_cc_timeout(options *o, const char *arg)
{
    /* 0 is "never", which cg_options spells as a negative limit. */
    if (strcmp(arg, "0") == 0)
        o->cc_timeout = -1;
    else if ((o->cc_timeout = parse_count(arg, 86400)) < 0)
        return drv_usage_error("--cc-timeout expects seconds from 0 to 86400, got '%s'", arg);
    return -1;
}

static int set_repeat(options *o, const char *arg)
{
    if ((o->repeat = parse_count(arg, 1000000)) < 0)
        return drv_usage_error("--repeat expects a count from 1 to 1000000, got '%s'", arg);
    return -1;
}

static int set_pad_to(options *o, const char *arg)
{
    if ((o->pad_to = parse_count(arg, 1 << 20)) < 0)
        return drv_usage_error("--pad-to expects a positive size, got '%s'", arg);
    o->accel.pad_to = o->pad_to;
    return -1;
}

static int set_report(options *o, const char *arg)
{
    if (drv_ends_with(arg, ".csv"))
        o->report_csv = arg;
    else if (drv_ends_with(arg, ".json"))
        o->report_json = arg;
    else
        return drv_usage_error("--report=%s: the file name must end in .csv or .json", arg);
    return -1;
}

static int set_columns(options *o, const char *arg)
{
    char err[1024];
    if (!rt_report_check_columns(arg, err, sizeof err))
        return drv_usage_error("%s", err);
    o->columns = arg;
    return -1;
}

static int set_sched(options *o, const char *arg)
{
    if (!rt_strategy_parse(arg, &o->sched))
        return drv_usage_error("unknown --sched=%s (use serial, op, path, dynamic or "
                               "dynamic-cp)", arg);
    return -1;
}

static int set_devices(options *o, const char *arg)
{
    char err[512];
    rt_devices_free(&o->devices);
    if (!rt_devices_parse(arg, &o->devices, err, sizeof err))
        return drv_usage_error("%s", err);
    return -1;
}

static int set_dump_graph(options *o, const char *arg)
{
    if (!drv_ends_with(arg, ".dot") && !drv_ends_with(arg, ".svg"))
        return drv_usage_error("--dump-graph=%s: the file must end in .dot or .svg", arg);
    o->dump_graph = arg;
    return -1;
}

static int list_passes(options *o, const char *arg)
{
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

static int show_help(options *o, const char *arg)
{
    drv_usage(stdout);
    return 0;
}

static int show_version(options *o, const char *arg)
{
    printf("tec %s\n", PACKAGE_VERSION);
    return 0;
}

void drv_usage(FILE *out)
{
    fputs("usage: tec [options] FILE.te|FILE.tir|FILE.onnx|-\n"
          "\n"
          "Compiles a tensor-expression program, runs it, and prints its outputs.\n",
          out);
    for (int s = 0; s < NSECTIONS; s++) {
        fprintf(out, "\n%s%s", section_titles[s], *section_titles[s] ? "\n" : "");
        for (int i = 0; i < NOPTIONS; i++) {
            if (table[i].sec != (section)s)
                continue;
            /* The text beside a short spelling, under a long one. */
            bool beside = strlen(table[i].spelling) <= 22;
            fprintf(out, beside ? "  %-22s " : "  %s\n%25s", table[i].spelling, "");
            for (const char *p = table[i].help; *p;) {
                const char *nl = strchr(p, '\n');
                int n = nl ? (int)(nl - p) : (int)strlen(p);
                fprintf(out, "%.*s\n", n, p);
                p += n;
                if (nl) {
                    fprintf(out, "%25s", "");
                    p++;
                }
            }
        }
    }
    fputs("\n"
          "Environment: CC (the C compiler for kernels), XDG_CACHE_HOME (kernel cache),\n"
          "TEC_CACHE_MAX (its size cap, default 2G), TEC_NUM_THREADS (threads of\n"
          "parallel loops, when --threads is not given).\n"
          "See tec(1) and doc/ in the source tree.\n",
          out);
}

/* One option of the table with its argument; -1 or an exit status. */
static int apply(const drv_option *t, options *o, const char *arg)
{
    int st = -1;
    if (t->kind == SET_FLAG)
        *(bool *)((char *)o + t->field) = true;
    else if (t->kind == SET_STRING)
        *(const char **)((char *)o + t->field) = arg;
    else
        st = t->call(o, arg);
    if (t->also & ALSO_PROFILE)
        o->profile = true;
    if (t->also & ALSO_ACCEL)
        o->accel_on = true;
    if (t->also & ALSO_SCHED)
        o->sched_on = true;
    return st;
}

/* The options, through getopt_long with tables made from `table`. */
static int parse_table(int argc, char **argv, options *o)
{
    struct option longopts[NOPTIONS + 1];
    char shortopts[2 * NOPTIONS + 2] = ":";
    int nlong = 0;
    for (int i = 0; i < NOPTIONS; i++) {
        if (table[i].name)
            longopts[nlong++] = (struct option){table[i].name,
                                                table[i].has_arg ? required_argument : no_argument,
                                                NULL, LONG_BASE + i};
        if (table[i].letter) {
            size_t n = strlen(shortopts);
            shortopts[n] = table[i].letter;
            strcpy(shortopts + n + 1, table[i].has_arg ? ":" : "");
        }
    }
    longopts[nlong] = (struct option){0, 0, 0, 0};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        const drv_option *t = c >= LONG_BASE ? &table[c - LONG_BASE] : NULL;
        for (int i = 0; !t && c != ':' && c != '?' && i < NOPTIONS; i++)
            if (table[i].letter == c)
                t = &table[i];
        if (c == ':')
            return drv_usage_error("option '%s' needs an argument", argv[optind - 1]);
        if (!t)
            return drv_usage_error("unknown option '%s'", argv[optind - 1]);
        int st = apply(t, o, optarg);
        if (st >= 0)
            return st;
    }
    return -1;
}

/* ------------------------------------------------ checks across options */

/* --target, --threads and --print-target. */
static int resolve_target(options *o)
{
    diag td;
    diag_init(&td, stderr);
    bool ok = cg_target_from_name(o->target_name ? o->target_name : "native", &o->target, &td);
    diag_fini(&td);
    if (!ok) {
        fprintf(stderr, "tec: try 'tec --help'\n");
        return EXIT_USAGE;
    }
    char terr[256];
    if (!cg_resolve_threads(o->threads_arg, &o->target, &o->threads, &o->threads_source, terr,
                            sizeof terr))
        return drv_usage_error("%s", terr);
    if (o->print_target) {
        cg_target_print(stdout, &o->target);
        printf("threads: %d (%s)\n", o->threads,
               strcmp(o->threads_source, "cores") == 0 ? "default: the cores" : o->threads_source);
        return 0;
    }
    return -1;
}

/* The accelerator's options and the pass names, each checked by its owner. */
static int check_accel_and_passes(options *o)
{
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
            return drv_usage_error("%s", "--profile's accelerator columns come from tec's own "
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
    return -1;
}

/* The one operand: the program (none for --calibrate, --topology and
 * --from-report). */
static int take_input_file(int argc, char **argv, options *o)
{
    if (optind == argc && (o->calibrate || o->accel.topology || o->accel.from_report))
        return -2;   /* tec --calibrate, or tec --topology|--from-report FILE --accel CFG alone */
    if (o->accel.topology && optind < argc)
        return drv_usage_error("--topology replaces the program: remove '%s'", argv[optind]);
    if (o->accel.from_report && optind < argc)
        return drv_usage_error("--from-report replaces the program: remove '%s'", argv[optind]);
    if (optind == argc)
        return drv_usage_error("%s", "no input file");
    if (optind + 1 < argc)
        return drv_usage_error("more than one input file ('%s' ...)", argv[optind + 1]);
    o->input_file = argv[optind];
    if (o->lang == LANG_ONNX && strcmp(o->input_file, "-") == 0)
        return drv_usage_error("%s", "-x onnx reads a model from a file, not from standard "
                               "input (its external data is found beside it): give the "
                               "model's path");
    return -1;
}

/* Profiling, scheduling and --no-run with what they cannot go with. */
static int check_run_modes(options *o)
{
    if (o->profile && o->emit != EMIT_RUN &&
        (o->report_csv || o->report_json || o->trace || o->plot_dir))
        return drv_usage_error("%s", "--report, --trace and --plot need a run (not --emit)");
    if (o->sched_on && (o->profile || o->interp || o->accel_on || o->emit != EMIT_RUN))
        return drv_usage_error("%s", "--sched, --devices, --sched-trace and --dump-graph run the "
                               "compiled calls on worker threads: they cannot be combined with "
                               "--profile, --interp, --accel or --emit");
    if (o->sched_on && !o->devices.n && !rt_devices_cpus(o->threads, &o->devices))
        return drv_usage_error("%s", "out of memory");
    if (o->no_run && !o->profile && !o->sched_on)
        return drv_usage_error("%s", "--no-run needs --profile (or --report, --plot, --pad-to) "
                               "or --sched");
    if (o->no_run && (o->counters || o->trace || (o->repeat && !o->sched_on) ||
                      o->save_outputs || o->interp))
        return drv_usage_error("%s", "--no-run cannot be combined with --counters, --trace, "
                               "--repeat, --save-outputs or --interp");
    return -1;
}

/* --emit, -o and --save-weights. */
static int check_outputs(options *o)
{
    if ((o->emit == EMIT_SO || o->emit == EMIT_LIB) && !o->output_file)
        return drv_usage_error("--emit=%s needs -o FILE", o->emit == EMIT_SO ? "so" : "lib");
    if (o->emit == EMIT_LIB && (o->profile || o->interp || o->ninputs))
        return drv_usage_error("%s", "--emit=lib writes a library for other programs: it does "
                               "not go with --profile, --interp or --input");
    if (o->emit == EMIT_LIB) {
        char why[1024], *name = rt_aot_library_name(o->output_file, why, sizeof why);
        free(name);
        if (!name)
            return drv_usage_error("%s", why);
    }
    if (o->save_weights && (o->weights_dir || o->emit != EMIT_TE))
        return drv_usage_error("%s", "--save-weights goes with --emit=te (and not with --weights)");
    if (o->emit == EMIT_RUN && o->output_file)
        return drv_usage_error("-o %s needs --emit=te, tir, c, so or lib (outputs of a run: "
                               "--save-outputs DIR)", o->output_file);
    return -1;
}

int drv_parse_args(int argc, char **argv, options *o)
{
    int st;
    if ((st = parse_table(argc, argv, o)) >= 0 || (st = resolve_target(o)) >= 0 ||
        (st = check_accel_and_passes(o)) >= 0)
        return st;
    if ((st = take_input_file(argc, argv, o)) == -2)
        return -1;
    if (st >= 0 || (st = check_run_modes(o)) >= 0 || (st = check_outputs(o)) >= 0)
        return st;
    return -1;
}

void drv_options_free(options *o)
{
    free(o->defines);
    free(o->includes);
    free(o->inputs);
    free(o->scratch_weights);
    rt_devices_free(&o->devices);
}
