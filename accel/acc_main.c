/* accel/acc_main.c — tec-accel, a thin command-line driver over the accel
 * library (to be folded into `tec --accel` later): reads a config and a
 * topology, prints the per-layer table, writes CSV/JSON, exports topologies
 * and runs sweeps. */
#include "accel/accel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: tec-accel --config FILE --topology FILE [options]\n"
    "  --format auto|conv|gemm   topology CSV format (default auto: from the header)\n"
    "  --search none|dram|edp    tiling search objective (default none: untiled)\n"
    "  --pad-to N                pad M, N, K up to multiples of N\n"
    "  --csv OUT, --json OUT     write the per-layer report ('-' is stdout)\n"
    "  --export-topology OUT     write the layers as a SCALE-Sim topology\n"
    "  --export-format conv|gemm format of --export-topology (default: conv if possible)\n"
    "  --sweep                   model every configuration of a grid; --csv gets one row each\n"
    "  --sweep-arrays LIST       e.g. 8x8,32x32,128x128 (default 8x8..128x128)\n"
    "  --sweep-dataflows LIST    e.g. os,ws (default os,ws,is)\n"
    "  --sweep-sram LIST         kB per buffer, e.g. 32,256 (default 16..1024)\n"
    "  --sweep-max-area MM2      leave out configurations larger than MM2 mm^2\n"
    "  --bench N                 time N rounds of per-layer evaluations (no reuse)\n"
    "  --time                    print evaluations per second to stderr\n"
    "  --quiet                   no table on stdout\n"
    "  --strict                  unknown config keys and sections are errors, not warnings\n";

/* Command-line choices. */
typedef struct cli {
    const char *config, *topology, *csv, *json, *export_path;
    const char *sweep_arrays, *sweep_dataflows, *sweep_srams, *sweep_max_area;
    acc_topo_format format, export_format;
    acc_options opt;
    bool sweep, time, quiet, strict;
    long bench;
} cli;

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tec: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

static bool parse_format(const char *s, acc_topo_format *f, bool allow_auto)
{
    if (allow_auto && strcmp(s, "auto") == 0)
        *f = ACC_TOPO_AUTO;
    else if (strcmp(s, "conv") == 0)
        *f = ACC_TOPO_CONV;
    else if (strcmp(s, "gemm") == 0)
        *f = ACC_TOPO_GEMM;
    else
        return false;
    return true;
}

static int parse_args(int argc, char **argv, cli *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            fputs(usage, stdout);
            exit(0);
        }
        if (strcmp(o, "--sweep") == 0) { a->sweep = true; continue; }
        if (strcmp(o, "--time") == 0) { a->time = true; continue; }
        if (strcmp(o, "--quiet") == 0) { a->quiet = true; continue; }
        if (strcmp(o, "--strict") == 0) { a->strict = true; continue; }
        if (i + 1 >= argc)
            return usage_error("option %s needs a value (or is unknown)", o);
        const char *v = argv[++i];
        if (strcmp(o, "--config") == 0) a->config = v;
        else if (strcmp(o, "--topology") == 0) a->topology = v;
        else if (strcmp(o, "--csv") == 0) a->csv = v;
        else if (strcmp(o, "--json") == 0) a->json = v;
        else if (strcmp(o, "--export-topology") == 0) a->export_path = v;
        else if (strcmp(o, "--sweep-arrays") == 0) a->sweep_arrays = v;
        else if (strcmp(o, "--sweep-dataflows") == 0) a->sweep_dataflows = v;
        else if (strcmp(o, "--sweep-sram") == 0) a->sweep_srams = v;
        else if (strcmp(o, "--sweep-max-area") == 0) a->sweep_max_area = v;
        else if (strcmp(o, "--format") == 0) {
            if (!parse_format(v, &a->format, true))
                return usage_error("bad --format '%s' (expected auto, conv or gemm)", v);
        } else if (strcmp(o, "--export-format") == 0) {
            if (!parse_format(v, &a->export_format, false))
                return usage_error("bad --export-format '%s' (expected conv or gemm)", v);
        } else if (strcmp(o, "--search") == 0) {
            if (!acc_search_parse(v, &a->opt.search))
                return usage_error("bad --search '%s' (expected none, dram or edp)", v);
        } else if (strcmp(o, "--pad-to") == 0 || strcmp(o, "--bench") == 0) {
            char *end;
            errno = 0;
            long x = strtol(v, &end, 10);
            if (!*v || *end || errno || x < 1 || x > 1000000)
                return usage_error("bad number '%s' (expected 1 to 1000000)", v);
            if (o[2] == 'p')
                a->opt.pad_to = x;
            else
                a->bench = x;
        } else {
            return usage_error("unknown option %s", o);
        }
    }
    if (!a->config)
        return usage_error("%s", "missing --config FILE");
    if (!a->topology)
        return usage_error("%s", "missing --topology FILE");
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Opens OUT for writing ('-' is stdout). */
static FILE *open_out(const char *path)
{
    if (strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "%s: error: cannot open for writing: %s\n", path, strerror(errno));
    return f;
}

static bool close_out(FILE *f, const char *path)
{
    bool bad = ferror(f);
    if (f == stdout)
        return fflush(f) == 0 && !bad;
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "%s: error: write failed\n", path);
        return false;
    }
    return true;
}

/* --bench: every layer modeled `rounds` times without reuse of results. */
static bool run_bench(const acc_config *c, const cli *a, const acc_layer *ls, int n)
{
    char err[512];
    acc_result r;
    double t0 = now_s();
    for (long k = 0; k < a->bench; k++)
        for (int i = 0; i < n; i++)
            if (!acc_model_layer(c, &a->opt, &ls[i], &r, err, sizeof err)) {
                fprintf(stderr, "%s\n", err);
                return false;
            }
    double dt = now_s() - t0;
    double evals = (double)a->bench * n;
    fprintf(stderr, "bench: %.0f layer evaluations (search %s) in %.3f s: %.0f per second\n",
            evals, acc_search_name(a->opt.search), dt, dt > 0 ? evals / dt : 0);
    return true;
}

int main(int argc, char **argv)
{
    cli a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    char err[1024] = "";
    acc_config c;
    acc_layer *ls = NULL;
    int n = 0;
    if (!acc_config_load(a.config, a.strict, stderr, &c, err, sizeof err) ||
        !acc_read_topology(a.topology, a.format, &ls, &n, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    bool ok = true;
    if (a.export_path)
        ok = acc_write_topology(a.export_path, a.export_format, ls, n, err, sizeof err);
    if (ok && a.bench)
        ok = run_bench(&c, &a, ls, n);
    else if (ok && a.sweep) {
        acc_sweep_spec s;
        ok = acc_sweep_spec_parse(a.sweep_arrays, a.sweep_dataflows, a.sweep_srams, &s, err,
                                  sizeof err) &&
             (!a.sweep_max_area ||
              acc_sweep_area_parse(a.sweep_max_area, &s.max_area_mm2, err, sizeof err));
        const char *path = a.csv ? a.csv : "-";
        FILE *out = ok ? open_out(path) : NULL;
        if (ok && !out) {
            acc_layers_free(ls, n);
            return 1;
        }
        if (ok) {
            int64_t evals = 0;
            double t0 = now_s();
            ok = acc_sweep(&c, &a.opt, &s, ls, n, out, &evals, err, sizeof err);
            double dt = now_s() - t0;
            ok = close_out(out, path) && ok;
            if (ok && a.time)
                fprintf(stderr, "sweep: %d configurations x %d layers (%lld evaluated, "
                        "search %s) in %.3f s\n", acc_sweep_count(&s), n, (long long)evals,
                        acc_search_name(a.opt.search), dt);
        }
    } else if (ok) {
        acc_result *rs = malloc((size_t)n * sizeof *rs);
        acc_result total;
        int64_t evals = 0;
        double t0 = now_s();
        ok = rs && acc_model_network(&c, &a.opt, ls, n, rs, &total, &evals, err, sizeof err);
        double dt = now_s() - t0;
        if (!rs)
            snprintf(err, sizeof err, "tec: error: out of memory");
        if (ok && a.time)
            fprintf(stderr, "model: %d layers (%lld evaluated) in %.6f s\n", n,
                    (long long)evals, dt);
        if (ok && !a.quiet)
            acc_print_table(stdout, &c, rs, n, &total);
        FILE *f;
        if (ok && a.csv) {
            if (!(f = open_out(a.csv)))
                ok = false, err[0] = '\0';
            else {
                acc_write_csv(f, rs, n, &total);
                ok = close_out(f, a.csv);
                err[0] = '\0';
            }
        }
        if (ok && a.json) {
            if (!(f = open_out(a.json)))
                ok = false, err[0] = '\0';
            else {
                acc_write_json(f, &c, &a.opt, rs, n, &total);
                ok = close_out(f, a.json);
                err[0] = '\0';
            }
        }
        free(rs);
    }
    if (!ok && err[0])
        fprintf(stderr, "%s\n", err);
    acc_layers_free(ls, n);
    return ok ? 0 : 1;
}
