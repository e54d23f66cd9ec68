/* accel/cli.c — `tec --accel`: the accelerator model on a compiled network
 * or a SCALE-Sim topology, with reports, topology export and sweeps (see
 * accel/cli.h). */
#include "accel/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "accel/plot.h"
#include "accel/workload.h"
#include "passes/analyze.h"

/* The accel library writes complete GNU-style messages ("f.cfg:3: error: ...",
 * "tec: error: ..."); they are passed on as written and counted as errors. */
static bool acc_fail(diag *d, const char *err)
{
    d->nerrors++;
    if (err && *err)
        fprintf(d->out, "%s\n", err);
    return false;
}

static bool ends_with_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcasecmp(s + n - k, suffix) == 0;
}

/* ---------------------------------------------------------------- options */

static bool parse_export_format(const char *s, acc_topo_format *f)
{
    if (!s)
        *f = ACC_TOPO_AUTO;
    else if (strcmp(s, "conv") == 0)
        *f = ACC_TOPO_CONV;
    else if (strcmp(s, "gemm") == 0)
        *f = ACC_TOPO_GEMM;
    else
        return false;
    return true;
}

bool acc_cli_scalesim_mode(const acc_cli_options *o)
{
    return o->mode && strcmp(o->mode, "scalesim") == 0;
}

bool acc_cli_check_options(const acc_cli_options *o, diag *d)
{
    int before = d->nerrors;
    bool ss = acc_cli_scalesim_mode(o);
    if (o->mode && !ss && strcmp(o->mode, "tec") != 0)
        diag_error(d, diag_noloc(), "bad --accel-mode '%s' (expected tec or scalesim)", o->mode);
    if (ss && (o->search || o->pad_to || o->sweep || o->trace))
        diag_error(d, diag_noloc(), "--search, --pad-to, --sweep and --accel-trace belong to "
                   "tec's own model, not to --accel-mode=scalesim");
    if (o->trace && !*o->trace)
        diag_error(d, diag_noloc(), "--accel-trace needs a file name");
    if (o->from_report && !*o->from_report)
        diag_error(d, diag_noloc(), "--from-report needs a file name");
    if (o->from_report && o->topology)
        diag_error(d, diag_noloc(), "--from-report and --topology both name the layers to "
                   "model; give one");
    acc_search s;
    acc_topo_format tf;
    if (!o->config || !*o->config)
        diag_error(d, diag_noloc(), "the accelerator model needs a config: --accel CFG "
                   "(presets are in accel/configs)");
    if (o->search && !acc_search_parse(o->search, &s))
        diag_error(d, diag_noloc(), "bad --search '%s' (expected none, dram or edp)",
                   o->search);
    if (o->pad_to < 0 || o->pad_to > 1000000)
        diag_error(d, diag_noloc(), "bad --pad-to %d (expected 1 to 1000000)", o->pad_to);
    bool tec_report = o->report && (ends_with_ci(o->report, ".csv") ||
                                    ends_with_ci(o->report, ".json"));
    if (o->report && !ss && !tec_report)
        diag_error(d, diag_noloc(), "--accel-report needs a file name ending in .csv or "
                   ".json, not '%s'", o->report);
    if (o->report && ss && (tec_report || !*o->report))
        diag_error(d, diag_noloc(), "with --accel-mode=scalesim, --accel-report names the "
                   "directory for SCALE-Sim's three report CSVs, not '%s'", o->report);
    if (!parse_export_format(o->export_format, &tf))
        diag_error(d, diag_noloc(), "bad --export-format '%s' (expected conv or gemm)",
                   o->export_format);
    if (o->sweep_out && !*o->sweep_out)
        diag_error(d, diag_noloc(), "--sweep-out needs a directory name");
    if (!o->sweep && (o->sweep_out || o->sweep_arrays || o->sweep_dataflows || o->sweep_srams ||
                      o->sweep_max_area))
        diag_error(d, diag_noloc(), "--sweep-out, --sweep-arrays, --sweep-dataflows, "
                   "--sweep-sram and --sweep-max-area need --sweep");
    acc_sweep_spec spec;
    char err[512];
    if (o->sweep && !acc_sweep_spec_parse(o->sweep_arrays, o->sweep_dataflows, o->sweep_srams,
                                          &spec, err, sizeof err))
        acc_fail(d, err);
    if (o->sweep && o->sweep_max_area &&
        !acc_sweep_area_parse(o->sweep_max_area, &spec.max_area_mm2, err, sizeof err))
        acc_fail(d, err);
    return d->nerrors == before;
}

bool acc_cli_load(const acc_cli_options *o, acc_config *c, acc_options *ao, diag *d)
{
    char err[1024] = "";
    if (!acc_cli_check_options(o, d))
        return false;
    if (!acc_config_load(o->config, o->strict, d->out, c, err, sizeof err))
        return acc_fail(d, err);
    memset(ao, 0, sizeof *ao);
    ao->pad_to = o->pad_to;
    ao->search = ACC_SEARCH_NONE;
    if (o->search)
        acc_search_parse(o->search, &ao->search);
    return true;
}

/* ---------------------------------------------------------------- topology export */

/* Writes the layers as a SCALE-Sim topology.  In the convolution format, a
 * GEMM without convolution geometry is written as the equivalent 1x1
 * convolution over a 1 x M image with K channels and N filters, so a CNN
 * whose classifier is a matmul still exports as one file. */
static bool export_topology(const acc_cli_options *o, const acc_layer *ls, int n, diag *d)
{
    acc_topo_format fmt = ACC_TOPO_AUTO;
    if (!parse_export_format(o->export_format, &fmt)) {
        diag_error(d, diag_noloc(), "bad --export-format '%s' (expected conv or gemm)",
                   o->export_format);
        return false;
    }
    if (fmt == ACC_TOPO_AUTO) {
        fmt = ACC_TOPO_GEMM;
        for (int i = 0; i < n; i++)
            if (ls[i].kind == ACC_LAYER_GEMM && ls[i].has_conv)
                fmt = ACC_TOPO_CONV;
    }
    acc_layer *copy = malloc((size_t)(n > 0 ? n : 1) * sizeof *copy);
    if (!copy) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    memcpy(copy, ls, (size_t)n * sizeof *copy);
    for (int i = 0; fmt == ACC_TOPO_CONV && i < n; i++) {
        acc_layer *l = &copy[i];
        int64_t ch, nf;
        if (l->kind != ACC_LAYER_GEMM || l->has_conv ||
            __builtin_mul_overflow(l->K, l->batch, &ch) ||
            __builtin_mul_overflow(l->N, l->batch, &nf))
            continue;
        l->conv = (acc_conv){1, l->M, 1, 1, ch, nf, 1, 1};
        l->has_conv = true;
    }
    char err[1024] = "";
    bool ok = acc_write_topology(o->export_topology, fmt, copy, n, err, sizeof err);
    free(copy);       /* names belong to ls */
    return ok || acc_fail(d, err);
}

/* ---------------------------------------------------------------- reports */

static bool write_report(const char *path, const acc_config *c, const acc_options *ao,
                         const acc_result *rs, int n, const acc_result *total, diag *d)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    if (ends_with_ci(path, ".json"))
        acc_write_json(f, c, ao, rs, n, total);
    else
        acc_write_csv(f, rs, n, total);
    bool bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", path,
                   errno ? strerror(errno) : "write error");
        return false;
    }
    return true;
}

/* At most this many trace events: a million is about 300 MB of JSON,
 * more than a trace viewer opens comfortably. */
#define TRACE_MAX_EVENTS 1000000

static bool write_trace(const char *path, const acc_config *c, const acc_options *ao,
                        const acc_layer *ls, int n, diag *d)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    char err[1024] = "";
    int64_t events = 0;
    bool ok = acc_write_trace(f, c, ao, ls, n, TRACE_MAX_EVENTS, &events, err, sizeof err);
    bool bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", path,
                   errno ? strerror(errno) : "write error");
        return false;
    }
    if (!ok)
        return acc_fail(d, err);
    if (events >= TRACE_MAX_EVENTS)
        fprintf(d->out, "tec: warning: %s: the trace stops after %d events\n", path,
                TRACE_MAX_EVENTS);
    return true;
}

const char *const acc_cli_column_titles[ACC_CLI_NCOLS] = {
    "acc cycles", "acc util%", "acc DRAM rd", "acc DRAM wr", "acc uJ", "acc EDP pJ*us"};

void acc_cli_columns(const acc_result *r, char cells[ACC_CLI_NCOLS][32])
{
    snprintf(cells[0], 32, "%" PRId64, r->total_cycles);
    if (r->kind == ACC_LAYER_GEMM)
        snprintf(cells[1], 32, "%.1f", 100.0 * r->utilization);
    else
        snprintf(cells[1], 32, "vector");
    snprintf(cells[2], 32, "%" PRId64, acc_result_dram_reads(r));
    snprintf(cells[3], 32, "%" PRId64, acc_result_dram_writes(r));
    snprintf(cells[4], 32, "%.3f", r->energy_pj / 1e6);
    snprintf(cells[5], 32, "%.4g", r->edp);
}

void acc_cli_print_summary(FILE *out, const acc_config *c, acc_search search,
                           const acc_result *t)
{
    fprintf(out, "accelerator %s %" PRId64 "x%" PRId64, c->run_name, c->rows, c->cols);
    if (c->depth > 1)
        fprintf(out, "x%" PRId64, c->depth);
    fprintf(out, " %s: %" PRId64 " cycles (%" PRId64 " compute, %" PRId64 " stall), "
                 "utilization %.1f%%, SRAM %" PRId64 " reads %" PRId64 " writes, DRAM %" PRId64
                 " reads %" PRId64 " writes (words), %.3f uJ, %.3f us, EDP %.6g pJ*us\n",
            acc_dataflow_name(c->dataflow), t->total_cycles, t->compute_cycles,
            t->stall_cycles, 100.0 * t->utilization, acc_result_sram_reads(t),
            acc_result_sram_writes(t), acc_result_dram_reads(t), acc_result_dram_writes(t),
            t->energy_pj / 1e6, t->latency_us, t->edp);
    fprintf(out, "accelerator: %.1f%% of the cycles stall; tiling %s\n",
            t->total_cycles ? 100.0 * (double)t->stall_cycles / (double)t->total_cycles : 0.0,
            search == ACC_SEARCH_NONE ? "untiled (--search none)"
            : search == ACC_SEARCH_DRAM ? "searched for the least DRAM traffic (--search dram)"
                                        : "searched for the least EDP (--search edp)");
}

void acc_cli_print_as_ran(FILE *out, const acc_result *rs, int n)
{
    for (int i = 0; i < n; i++) {
        if (!rs[i].declared_M && !rs[i].declared_K)
            continue;
        fprintf(out, "accelerator: layer %s modeled as the run did it (its MACs depend on the "
                "data): ", rs[i].name ? rs[i].name : "?");
        if (rs[i].declared_M)
            fprintf(out, "M %" PRId64 " of the declared %" PRId64 "%s", rs[i].M,
                    rs[i].declared_M, rs[i].declared_K ? ", " : "");
        if (rs[i].declared_K)
            fprintf(out, "reduction depth K %" PRId64 " of the declared %" PRId64, rs[i].K,
                    rs[i].declared_K);
        fputs(", from the counters\n", out);
    }
}

/* ---------------------------------------------------------------- sweeps */

/* Creates DIR unless it is already a directory. */
static bool make_dir(const char *dir, diag *d)
{
    struct stat st;
    if (mkdir(dir, 0777) == 0)
        return true;
    if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return true;
    diag_error(d, diag_noloc(), "cannot create directory %s: %s", dir,
               errno == EEXIST ? "a file of that name exists" : strerror(errno));
    return false;
}

/* The long-format CSV of a sweep: one row per layer and configuration, and
 * a "total" row per configuration. */
static void sweep_row(FILE *f, int id, const char *label, const acc_config *c, int64_t sram_kb,
                      const acc_result *r, bool total)
{
    bool gemm = !total && r->kind == ACC_LAYER_GEMM;
    fprintf(f, "%d,%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%s,%" PRId64 ",", id, label, c->rows,
            c->cols, c->depth, acc_dataflow_name(c->dataflow), sram_kb);
    /* Layer names may hold commas or quotes: CSV-quote them. */
    const char *name = total ? "total" : r->name ? r->name : "?";
    if (strpbrk(name, ",\"\n")) {
        fputc('"', f);
        for (const char *s = name; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(name, f);
    }
    fprintf(f, ",%s,", total ? "total" : gemm ? "gemm" : "vector");
    if (gemm)
        fprintf(f, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64, r->M, r->N, r->K, r->batch);
    else
        fputs(",,,", f);
    fprintf(f, ",%s", gemm || total ? acc_tiling_origin(r) : "");
    fprintf(f, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%.9g,%" PRId64 ",%" PRId64
               ",%" PRId64 ",%" PRId64, r->macs, r->compute_cycles, r->stall_cycles,
            r->total_cycles, r->utilization, acc_result_sram_reads(r), acc_result_sram_writes(r),
            acc_result_dram_reads(r), acc_result_dram_writes(r));
    for (int op = 0; op < ACC_NOPERANDS; op++)
        fprintf(f, ",%" PRId64 ",%" PRId64, r->sram_reads[op], r->sram_writes[op]);
    fprintf(f, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", r->energy_pj,
            r->energy.mac, r->energy.reg, r->energy.sram, r->energy.dram, r->energy.vector,
            r->energy.stat, r->latency_us, r->edp, acc_area_mm2(c));
}

/* The sweep CSV's columns (sweep_row writes them in this order). */
static const char sweep_header[] =
    "config,label,rows,cols,depth,dataflow,sram_kb,layer,kind,M,N,K,batch,tiling,macs,"
    "compute_cycles,stall_cycles,total_cycles,utilization,sram_reads,sram_writes,dram_reads,"
    "dram_writes,sram_reads_ifmap,sram_writes_ifmap,sram_reads_filter,sram_writes_filter,"
    "sram_reads_ofmap,sram_writes_ofmap,energy_pj,energy_mac_pj,energy_reg_pj,energy_sram_pj,"
    "energy_dram_pj,energy_vector_pj,energy_static_pj,latency_us,edp,area_mm2\n";

/* The area of the grid's smallest configuration (for the error when the
 * budget leaves none). */
static double smallest_area(const acc_config *base, const acc_sweep_spec *s)
{
    acc_sweep_spec all = *s;
    all.max_area_mm2 = 0;
    double best = 0;
    for (int i = 0; i < acc_sweep_count(&all); i++) {
        acc_config c;
        acc_sweep_config(base, &all, i, &c);
        double a = acc_area_mm2(&c);
        if (i == 0 || a < best)
            best = a;
    }
    return best;
}

static bool run_sweep(const acc_config *base, const acc_options *ao, const acc_layer *ls, int n,
                      const acc_cli_options *o, FILE *out, diag *d)
{
    char err[1024] = "";
    acc_sweep_spec s;
    if (!acc_sweep_spec_parse(o->sweep_arrays, o->sweep_dataflows, o->sweep_srams, &s, err,
                              sizeof err) ||
        (o->sweep_max_area &&
         !acc_sweep_area_parse(o->sweep_max_area, &s.max_area_mm2, err, sizeof err)))
        return acc_fail(d, err);
    if (n < 1) {
        diag_error(d, diag_noloc(), "--sweep: the network has no layers to model");
        return false;
    }
    const char *dir = o->sweep_out ? o->sweep_out : "accel-sweep";
    if (!make_dir(dir, d))
        return false;
    int nc = acc_sweep_count(&s);
    acc_result *rs = calloc((size_t)nc * (size_t)n, sizeof *rs);
    acc_result *tot = calloc((size_t)nc, sizeof *tot);
    char (*labels)[64] = calloc((size_t)nc, sizeof *labels);
    const char **lab = calloc((size_t)nc, sizeof *lab);
    const char **names = calloc((size_t)n, sizeof *names);
    acc_config *cfgs = calloc((size_t)nc, sizeof *cfgs);
    int64_t *srams = calloc((size_t)nc, sizeof *srams);
    char csv_path[4096];
    FILE *csv = NULL;
    bool ok = rs && tot && labels && lab && names && cfgs && srams;
    if (!ok)
        diag_error(d, diag_noloc(), "out of memory");
    int id = 0, over = 0;
    for (int i = 0; ok && i < nc; i++) {
        acc_config *c = &cfgs[id];
        if (!acc_sweep_config(base, &s, i, c)) {
            over++;
            continue;
        }
        srams[id] = c->sram_bytes[0] / 1024;
        if (c->depth > 1)
            snprintf(labels[id], sizeof labels[id], "%" PRId64 "x%" PRId64 "x%" PRId64
                     " %s %" PRId64 "kB", c->rows, c->cols, c->depth,
                     acc_dataflow_name(c->dataflow), srams[id]);
        else
            snprintf(labels[id], sizeof labels[id], "%" PRId64 "x%" PRId64 " %s %" PRId64
                     "kB", c->rows, c->cols, acc_dataflow_name(c->dataflow), srams[id]);
        lab[id] = labels[id];
        ok = (acc_config_check(c, err, sizeof err) &&
              acc_model_network(c, ao, ls, n, &rs[(size_t)id * n], &tot[id], NULL, err,
                                sizeof err)) ||
             acc_fail(d, err);
        id++;
    }
    if (ok && id == 0) {
        diag_error(d, diag_noloc(), "--sweep-max-area %g: every one of the %d configurations "
                   "is larger (the smallest is %.3g mm^2)", s.max_area_mm2, nc,
                   smallest_area(base, &s));
        ok = false;
    }
    nc = id;
    if (ok && (size_t)snprintf(csv_path, sizeof csv_path, "%s/sweep.csv", dir) >=
                  sizeof csv_path) {
        diag_error(d, diag_noloc(), "path too long: %s/sweep.csv", dir);
        ok = false;
    }
    if (ok && !(csv = fopen(csv_path, "w"))) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", csv_path, strerror(errno));
        ok = false;
    }
    if (ok) {
        fputs(sweep_header, csv);
        for (int c = 0; c < nc; c++) {
            for (int l = 0; l < n; l++)
                sweep_row(csv, c, lab[c], &cfgs[c], srams[c], &rs[(size_t)c * n + l], false);
            sweep_row(csv, c, lab[c], &cfgs[c], srams[c], &tot[c], true);
        }
        bool bad = ferror(csv);
        if (fclose(csv) != 0 || bad) {
            diag_error(d, diag_noloc(), "cannot write %s", csv_path);
            ok = false;
        }
    }
    if (ok) {
        for (int l = 0; l < n; l++)
            names[l] = ls[l].name;
        acc_plot_input pi = {nc, n, lab, names, rs, tot};
        ok = acc_plot_sweep(dir, &pi, err, sizeof err) || acc_fail(d, err);
    }
    if (ok && out) {
        int best = 0;
        for (int c = 1; c < nc; c++)
            if (tot[c].edp < tot[best].edp)
                best = c;
        fprintf(out, "sweep: %d configurations x %d layers in %s/sweep.csv; charts "
                     "%s/{configs,layers}_{latency,energy,edp}.{png,svg}\n",
                nc, n, dir, dir);
        if (over)
            fprintf(out, "sweep: %d configurations larger than %g mm^2 left out\n", over,
                    s.max_area_mm2);
        fprintf(out, "sweep: lowest EDP %.6g pJ*us on %s (%.3f us, %.3f uJ, %.3g mm^2; "
                     "tiling: %s)\n",
                tot[best].edp, lab[best], tot[best].latency_us, tot[best].energy_pj / 1e6,
                acc_area_mm2(&cfgs[best]), acc_tiling_origin(&tot[best]));
    }
    free(rs);
    free(tot);
    free(labels);
    free(lab);
    free(names);
    free(cfgs);
    free(srams);
    return ok;
}

/* ---------------------------------------------------------------- SCALE-Sim mode */

/* SCALE-Sim's numbers for every GEMM layer: a table, and its three report
 * CSVs in o->report (a directory).  Vector layers have no SCALE-Sim form. */
static bool run_scalesim(const acc_cli_options *o, const acc_config *c, const acc_layer *ls,
                         int n, FILE *out, diag *d)
{
    if (!c->bw_unlimited) {
        diag_error(d, diag_noloc(), "%s: --accel-mode=scalesim reproduces SCALE-Sim's CALC "
                   "bandwidth mode; set InterfaceBandwidth: CALC in [run_presets]", o->config);
        return false;
    }
    acc_ss_report *rs = calloc((size_t)(n > 0 ? n : 1), sizeof *rs);
    int64_t *rows = calloc((size_t)(n > 0 ? n : 1), sizeof *rows);
    const acc_layer **gl = calloc((size_t)(n > 0 ? n : 1), sizeof *gl);
    char err[1024] = "";
    bool ok = rs && rows && gl;
    if (!ok)
        diag_error(d, diag_noloc(), "out of memory");
    int ng = 0, nvec = 0;
    for (int i = 0; ok && i < n; i++) {
        if (ls[i].kind != ACC_LAYER_GEMM) {
            nvec++;
            continue;
        }
        /* identical layers (ResNet's repeated blocks) are modeled once */
        int same = -1;
        for (int j = 0; j < ng && same < 0; j++)
            if (acc_same_scalesim_layer(gl[j], &ls[i]))
                same = j;
        if (same >= 0)
            rs[ng] = rs[same];
        else
            ok = acc_scalesim_layer(c, &ls[i], &rs[ng], err, sizeof err) || acc_fail(d, err);
        rows[ng] = ls[i].batch;
        gl[ng++] = &ls[i];
    }
    if (ok && out) {
        fprintf(out, "SCALE-Sim v2 (CALC) mode: %s %" PRId64 "x%" PRId64 " %s, SRAM "
                "%" PRId64 "/%" PRId64 "/%" PRId64 " kB; a layer of batch G is G SCALE-Sim "
                "layers, its counts are their sums\n", c->run_name, c->rows, c->cols,
                acc_dataflow_name(c->dataflow), c->sram_bytes[0] / 1024,
                c->sram_bytes[1] / 1024, c->sram_bytes[2] / 1024);
        fprintf(out, "%-24s %7s %6s %6s %5s %12s %6s %6s %6s %12s %12s %12s %12s %12s %12s\n",
                "layer", "M", "N", "K", "batch", "cycles", "util%", "map%", "cutil%",
                "SRAM if rd", "SRAM fl rd", "SRAM of wr", "DRAM if rd", "DRAM fl rd",
                "DRAM of wr");
        int64_t tot[7] = {0};
        for (int i = 0; i < ng; i++) {
            const acc_ss_report *r = &rs[i];
            int64_t g = rows[i];
            int64_t v[7] = {g * r->total_cycles, g * r->sram_count[0], g * r->sram_count[1],
                            g * r->sram_count[2], g * r->dram_count[0], g * r->dram_count[1],
                            g * r->dram_count[2]};
            fprintf(out, "%-24s %7" PRId64 " %6" PRId64 " %6" PRId64 " %5" PRId64 " %12" PRId64
                    " %6.2f %6.2f %6.2f", gl[i]->name, gl[i]->M, gl[i]->N, gl[i]->K, g, v[0],
                    r->overall_util, r->mapping_eff, r->compute_util);
            for (int k = 1; k < 7; k++)
                fprintf(out, " %12" PRId64, v[k]);
            fputc('\n', out);
            for (int k = 0; k < 7; k++)
                tot[k] += v[k];
        }
        fprintf(out, "%-24s %7s %6s %6s %5s %12" PRId64 " %6s %6s %6s", "total", "-", "-", "-",
                "-", tot[0], "-", "-", "-");
        for (int k = 1; k < 7; k++)
            fprintf(out, " %12" PRId64, tot[k]);
        fputc('\n', out);
        if (nvec)
            fprintf(out, "vector layers left out (SCALE-Sim has no form for them): %d\n", nvec);
    }
    /* SCALE-Sim's layout: its three reports go into DIR/<run_name>/. */
    char sub[4096];
    if (ok && o->report) {
        const char *rn = c->run_name;
        if (!*rn || strchr(rn, '/') || strcmp(rn, ".") == 0 || strcmp(rn, "..") == 0) {
            diag_error(d, diag_noloc(), "%s: run_name '%s' cannot name the folder of the "
                       "reports (SCALE-Sim writes them into DIR/<run_name>/)", o->config, rn);
            ok = false;
        } else if ((size_t)snprintf(sub, sizeof sub, "%s/%s", o->report, rn) >= sizeof sub) {
            diag_error(d, diag_noloc(), "path too long: %s/%s", o->report, rn);
            ok = false;
        }
    }
    if (ok && o->report)
        ok = make_dir(o->report, d) && make_dir(sub, d) &&
             (acc_scalesim_write_reports(sub, rs, rows, ng, err, sizeof err) ||
              acc_fail(d, err));
    if (ok && o->report && out)
        fprintf(out, "SCALE-Sim reports in %s/ (COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv, "
                "DETAILED_ACCESS_REPORT.csv)\n", sub);
    free(rs);
    free(rows);
    free(gl);
    return ok;
}

/* ---------------------------------------------------------------- running */

/* The files of one modeled run: report, trace and sweep, all under the
 * same options (so the same tiling search) as the printed results. */
static bool write_outputs(const acc_cli_options *o, const acc_config *c, const acc_options *ao,
                          const acc_layer *ls, int n, const acc_result *rs,
                          const acc_result *total, FILE *out, diag *d)
{
    bool ok = true;
    if (ok && o->report)
        ok = write_report(o->report, c, ao, rs, n, total, d);
    if (ok && o->trace)
        ok = write_trace(o->trace, c, ao, ls, n, d);
    if (ok && o->sweep)
        ok = run_sweep(c, ao, ls, n, o, out, d);
    return ok;
}

/* Everything after the layers are known: export, model, table, report,
 * sweep. */
static bool run_layers(const acc_cli_options *o, const acc_config *c, const acc_options *ao,
                       const acc_layer *ls, int n, FILE *out, diag *d)
{
    if (o->export_topology && !export_topology(o, ls, n, d))
        return false;
    if (acc_cli_scalesim_mode(o))
        return run_scalesim(o, c, ls, n, out, d);
    acc_result *rs = calloc((size_t)(n > 0 ? n : 1), sizeof *rs);
    acc_result total;
    char err[1024] = "";
    if (!rs) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    bool ok = acc_model_network(c, ao, ls, n, rs, &total, NULL, err, sizeof err) ||
              acc_fail(d, err);
    if (ok && out) {
        acc_print_table(out, c, rs, n, &total);
        acc_cli_print_as_ran(out, rs, n);
    }
    ok = ok && write_outputs(o, c, ao, ls, n, rs, &total, out, d);
    free(rs);
    return ok;
}

bool acc_cli_run_profile(const pass_stats *ps, const uint64_t *counts, const acc_cli_options *o,
                         FILE *out, diag *d)
{
    acc_config c;
    acc_options ao;
    if (!acc_cli_load(o, &c, &ao, d))
        return false;
    acc_workload w;
    if (!acc_workload_from_analysis(ps, counts, &w, d))
        return false;
    bool ok = run_layers(o, &c, &ao, w.layers, w.nlayers, out, d);
    acc_workload_free(&w);
    return ok;
}

bool acc_cli_run_module(const ir_module *m, const acc_cli_options *o, FILE *out, diag *d)
{
    pass_stats *ps = pass_analyze(m, NULL, d);
    if (!ps)
        return false;
    bool ok = acc_cli_run_profile(ps, NULL, o, out, d);
    pass_stats_free(ps);
    return ok;
}

/* A convolution row whose output size differs between tec's floor and
 * SCALE-Sim's ceil semantics gets a note: the two models then do different
 * work, silently otherwise. */
static void note_ceil_outputs(const char *path, const acc_layer *ls, int n, bool ss, diag *d)
{
    for (int i = 0; i < n; i++) {
        const acc_conv *cv = &ls[i].conv;
        if (!ls[i].has_conv)
            continue;
        int64_t fh = acc_conv_out_floor(cv->ifmap_h, cv->filt_h, cv->stride_h);
        int64_t fw = acc_conv_out_floor(cv->ifmap_w, cv->filt_w, cv->stride_w);
        int64_t ch = acc_conv_out_ceil(cv->ifmap_h, cv->filt_h, cv->stride_h);
        int64_t cw = acc_conv_out_ceil(cv->ifmap_w, cv->filt_w, cv->stride_w);
        if (fh == ch && fw == cw)
            continue;
        fprintf(d->out, "%s: note: layer %s: output %" PRId64 "x%" PRId64 " under "
                "floor((H - R) / S) + 1, %" PRId64 "x%" PRId64 " under SCALE-Sim's "
                "ceil((H - R + S) / S), which counts a partial last window; %s\n",
                path, ls[i].name, fh, fw, ch, cw,
                ss ? "--accel-mode=scalesim uses ceil" : "tec's model uses floor");
    }
}

bool acc_cli_run_topology(const acc_cli_options *o, FILE *out, diag *d)
{
    if (!o->topology && !o->from_report) {
        diag_error(d, diag_noloc(), "internal use: acc_cli_run_topology needs --topology FILE "
                   "or --from-report FILE");
        return false;
    }
    acc_config c;
    acc_options ao;
    if (!acc_cli_load(o, &c, &ao, d))
        return false;
    acc_layer *ls = NULL;
    int n = 0;
    char err[1024] = "";
    if (o->from_report ? !acc_read_profile_report(o->from_report, &ls, &n, err, sizeof err)
                       : !acc_read_topology(o->topology, ACC_TOPO_AUTO, &ls, &n, err, sizeof err))
        return acc_fail(d, err);
    note_ceil_outputs(o->from_report ? o->from_report : o->topology, ls, n,
                      acc_cli_scalesim_mode(o), d);
    bool ok = run_layers(o, &c, &ao, ls, n, out, d);
    acc_layers_free(ls, n);
    return ok;
}

bool acc_model_module(const ir_module *m, const acc_config *c, const acc_options *o,
                      acc_result **per_func, acc_result *total, diag *d)
{
    *per_func = NULL;
    pass_stats *ps = pass_analyze(m, NULL, d);
    if (!ps)
        return false;
    bool ok = acc_model_profile(ps, NULL, c, o, per_func, total, d);
    pass_stats_free(ps);
    return ok;
}

/* Sums the layers' results per function of m (acc_model_profile). */
static bool per_function(const ir_module *m, const acc_config *c, const acc_workload *w,
                         const acc_result *rs, acc_result **per_func, diag *d)
{
    int n = w->nlayers;
    acc_result *sel = calloc((size_t)(n > 0 ? n : 1), sizeof *sel);
    acc_result *pf = calloc((size_t)(m->nfuncs > 0 ? m->nfuncs : 1), sizeof *pf);
    char err[1024] = "";
    bool ok = sel && pf;
    if (!ok)
        diag_error(d, diag_noloc(), "out of memory");
    for (int f = 0; ok && f < m->nfuncs; f++) {
        int k = 0, ngemm = 0, g = -1;
        for (int i = 0; i < n; i++)
            if (w->func[i] == f) {
                sel[k++] = rs[i];
                if (rs[i].kind == ACC_LAYER_GEMM)
                    ngemm++, g = i;
            }
        ok = acc_results_sum(c, sel, k, &pf[f], err, sizeof err) || acc_fail(d, err);
        /* Names point into the module, which outlives the results. */
        pf[f].name = acc_func_layer_name(m->funcs[f]);
        pf[f].kind = ngemm ? ACC_LAYER_GEMM : ACC_LAYER_VECTOR;
        if (ngemm == 1) {
            pf[f].M = rs[g].M;
            pf[f].N = rs[g].N;
            pf[f].K = rs[g].K;
            pf[f].batch = rs[g].batch;
            pf[f].declared_M = rs[g].declared_M;
            pf[f].declared_K = rs[g].declared_K;
            pf[f].tiling = rs[g].tiling;
            memcpy(pf[f].resident, rs[g].resident, sizeof pf[f].resident);
        }
    }
    free(sel);
    if (!ok) {
        free(pf);
        return false;
    }
    *per_func = pf;
    return true;
}

bool acc_model_profile(const pass_stats *ps, const uint64_t *counts, const acc_config *c,
                       const acc_options *o, acc_result **per_func, acc_result *total, diag *d)
{
    *per_func = NULL;
    acc_workload w;
    if (!acc_workload_from_analysis(ps, counts, &w, d))
        return false;
    int n = w.nlayers;
    acc_result *rs = calloc((size_t)(n > 0 ? n : 1), sizeof *rs);
    char err[1024] = "";
    bool ok = rs != NULL;
    if (!ok)
        diag_error(d, diag_noloc(), "out of memory");
    ok = ok && (acc_model_network(c, o, w.layers, n, rs, total, NULL, err, sizeof err) ||
                acc_fail(d, err));
    ok = ok && per_function(ps->m, c, &w, rs, per_func, d);
    total->name = "total";
    free(rs);
    acc_workload_free(&w);
    return ok;
}

/* ---------------------------------------------------------------- profile session */

bool acc_cli_session_load(acc_cli_session *s, const acc_cli_options *o, diag *d)
{
    memset(s, 0, sizeof *s);
    s->o = o;
    if (!acc_cli_load(o, &s->config, &s->options, d))
        return false;
    /* The profile describes the accelerator at its best: without --search,
     * the tiling that minimizes EDP (never worse than untiled).  Every
     * output of the session uses these options and says which search. */
    if (!o->search)
        s->options.search = ACC_SEARCH_EDP;
    return s->loaded = true;
}

bool acc_cli_session_model(acc_cli_session *s, const pass_stats *ps, const uint64_t *counts,
                           diag *d)
{
    if (!s->loaded)
        return false;
    acc_workload w;
    if (!acc_workload_from_analysis(ps, counts, &w, d))
        return false;
    s->m = ps->m;
    s->layers = w.layers;
    s->nlayers = w.nlayers;
    s->func = w.func;
    s->rs = calloc((size_t)(w.nlayers > 0 ? w.nlayers : 1), sizeof *s->rs);
    char err[1024] = "";
    if (!s->rs) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    if (!acc_model_network(&s->config, &s->options, s->layers, s->nlayers, s->rs, &s->total,
                           NULL, err, sizeof err))
        return acc_fail(d, err);
    if (!per_function(s->m, &s->config, &w, s->rs, &s->per_func, d))
        return false;
    s->total.name = "total";
    return s->modeled = true;
}

bool acc_cli_session_cells(const acc_cli_session *s, const ir_func *fn, char cells[][32])
{
    if (!s->modeled)
        return false;
    const acc_result *r = fn ? NULL : &s->total;
    for (int i = 0; fn && i < s->m->nfuncs; i++)
        if (s->m->funcs[i] == fn)
            r = &s->per_func[i];
    if (r)
        acc_cli_columns(r, cells);
    return r != NULL;
}

bool acc_cli_session_finish(acc_cli_session *s, FILE *out, diag *d)
{
    if (!s->modeled)
        return false;
    acc_cli_print_summary(out, &s->config, s->options.search, &s->total);
    acc_cli_print_as_ran(out, s->per_func, s->m->nfuncs);
    const acc_cli_options *o = s->o;
    if (o->export_topology && !export_topology(o, s->layers, s->nlayers, d))
        return false;
    return write_outputs(o, &s->config, &s->options, s->layers, s->nlayers, s->rs, &s->total,
                         out, d);
}

void acc_cli_session_free(acc_cli_session *s)
{
    acc_workload w = {s->layers, s->nlayers, s->func};
    if (s->layers)
        acc_workload_free(&w);
    free(s->rs);
    free(s->per_func);
    memset(s, 0, sizeof *s);
}
