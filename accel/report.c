/* accel/report.c — per-layer reports (CSV, JSON, aligned table) and
 * design-space sweeps over array shape, dataflow and SRAM size. */
#include "accel/accel.h"
#include "accel/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- columns */

/* Residency of the three operands as three letters, ifmap/filter/ofmap:
 * 'r' tile held in SRAM, 's' streamed. */
static void resident_flags(const acc_result *r, char out[4])
{
    for (int op = 0; op < ACC_NOPERANDS; op++)
        out[op] = r->resident[op] ? 'r' : 's';
    out[3] = '\0';
}

/* One report column: how it is titled and printed.  The same list drives
 * the CSV header, the CSV rows and the JSON objects, so they cannot drift. */
typedef enum { COL_STR, COL_INT, COL_REAL } col_type;

typedef struct col_value {
    col_type type;
    const char *s;
    int64_t i;
    double d;
    bool empty;        /* not applicable to this row (CSV: empty, JSON: null) */
} col_value;

#define NCOLS 58

typedef struct row {
    const char *title[NCOLS];
    col_value v[NCOLS];
    int n;
    char buf[4][32];   /* storage for formatted strings */
} row;

static void put_s(row *w, const char *t, const char *s)
{
    w->title[w->n] = t;
    w->v[w->n++] = (col_value){COL_STR, s, 0, 0, false};
}

static void put_i(row *w, const char *t, int64_t i, bool empty)
{
    w->title[w->n] = t;
    w->v[w->n++] = (col_value){COL_INT, NULL, i, 0, empty};
}

static void put_d(row *w, const char *t, double d)
{
    w->title[w->n] = t;
    w->v[w->n++] = (col_value){COL_REAL, NULL, 0, d, false};
}

static void build_row(row *w, const acc_result *r, bool total)
{
    bool gemm = !total && r->kind == ACC_LAYER_GEMM;
    w->n = 0;
    put_s(w, "name", r->name ? r->name : "?");
    put_s(w, "kind", total ? "total" : r->kind == ACC_LAYER_GEMM ? "gemm" : "vector");
    put_i(w, "M", r->M, !gemm);
    put_i(w, "N", r->N, !gemm);
    put_i(w, "K", r->K, !gemm);
    put_i(w, "batch", r->batch, !gemm);
    put_s(w, "dataflow", acc_dataflow_name(r->dataflow));
    put_i(w, "tiles", r->tiles, !gemm && !total);
    put_i(w, "tile_m", r->tiling.tm, !gemm);
    put_i(w, "tile_n", r->tiling.tn, !gemm);
    put_i(w, "tile_k", r->tiling.tk, !gemm);
    put_s(w, "loop_order", gemm ? acc_order_name(r->tiling.order) : "");
    put_s(w, "tiling", gemm || total ? acc_tiling_origin(r) : "");
    put_i(w, "declared_K", r->declared_K, !gemm || !r->declared_K);
    resident_flags(r, w->buf[0]);
    put_s(w, "resident", gemm ? w->buf[0] : "");
    put_i(w, "folds", r->folds, false);
    put_i(w, "macs", r->macs, false);
    put_i(w, "pad_macs", r->pad_macs, false);
    put_i(w, "vector_ops", r->vector_ops, false);
    put_i(w, "compute_cycles", r->compute_cycles, false);
    put_i(w, "stall_cycles", r->stall_cycles, false);
    put_i(w, "total_cycles", r->total_cycles, false);
    put_d(w, "mapping_efficiency", r->mapping_efficiency);
    put_d(w, "compute_utilization", r->compute_utilization);
    put_d(w, "utilization", r->utilization);
    put_i(w, "sram_reads", acc_result_sram_reads(r), false);
    put_i(w, "sram_writes", acc_result_sram_writes(r), false);
    put_i(w, "dram_reads", acc_result_dram_reads(r), false);
    put_i(w, "dram_writes", acc_result_dram_writes(r), false);
    static const char *const per_op[4][ACC_NOPERANDS] = {
        {"sram_reads_ifmap", "sram_reads_filter", "sram_reads_ofmap"},
        {"sram_writes_ifmap", "sram_writes_filter", "sram_writes_ofmap"},
        {"dram_reads_ifmap", "dram_reads_filter", "dram_reads_ofmap"},
        {"dram_writes_ifmap", "dram_writes_filter", "dram_writes_ofmap"}};
    for (int op = 0; op < ACC_NOPERANDS; op++)
        put_i(w, per_op[0][op], r->sram_reads[op], false);
    for (int op = 0; op < ACC_NOPERANDS; op++)
        put_i(w, per_op[1][op], r->sram_writes[op], false);
    for (int op = 0; op < ACC_NOPERANDS; op++)
        put_i(w, per_op[2][op], r->dram_reads[op], false);
    for (int op = 0; op < ACC_NOPERANDS; op++)
        put_i(w, per_op[3][op], r->dram_writes[op], false);
    put_d(w, "dram_bw_needed", r->dram_bw_needed);
    put_d(w, "energy_pj", r->energy_pj);
    put_d(w, "energy_mac_pj", r->energy.mac);
    put_d(w, "energy_reg_pj", r->energy.reg);
    put_d(w, "energy_sram_pj", r->energy.sram);
    put_d(w, "energy_dram_pj", r->energy.dram);
    put_d(w, "energy_vector_pj", r->energy.vector);
    put_d(w, "energy_static_pj", r->energy.stat);
    put_d(w, "latency_us", r->latency_us);
    put_d(w, "edp", r->edp);
}

/* ---------------------------------------------------------------- CSV */

static void csv_string(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void csv_row(FILE *out, const row *w)
{
    for (int i = 0; i < w->n; i++) {
        if (i)
            fputc(',', out);
        const col_value *v = &w->v[i];
        if (v->empty)
            continue;
        switch (v->type) {
        case COL_STR: csv_string(out, v->s); break;
        case COL_INT: fprintf(out, "%" PRId64, v->i); break;
        case COL_REAL: fprintf(out, "%.9g", v->d); break;
        }
    }
    fputc('\n', out);
}

void acc_write_csv(FILE *out, const acc_result *rs, int n, const acc_result *total)
{
    row w;
    build_row(&w, total, true);
    for (int i = 0; i < w.n; i++)
        fprintf(out, "%s%s", i ? "," : "", w.title[i]);
    fputc('\n', out);
    for (int i = 0; i < n; i++) {
        build_row(&w, &rs[i], false);
        csv_row(out, &w);
    }
    build_row(&w, total, true);
    csv_row(out, &w);
}

/* ---------------------------------------------------------------- JSON */

static void json_object(FILE *out, const row *w, const char *indent)
{
    fputs("{", out);
    for (int i = 0; i < w->n; i++) {
        fprintf(out, "%s\n%s  ", i ? "," : "", indent);
        acc_json_write_string(out, w->title[i]);
        fputs(": ", out);
        const col_value *v = &w->v[i];
        if (v->empty) {
            fputs("null", out);
            continue;
        }
        switch (v->type) {
        case COL_STR: acc_json_write_string(out, v->s); break;
        case COL_INT: fprintf(out, "%" PRId64, v->i); break;
        case COL_REAL: fprintf(out, "%.9g", v->d); break;
        }
    }
    fprintf(out, "\n%s}", indent);
}

void acc_write_json(FILE *out, const acc_config *c, const acc_options *o, const acc_result *rs,
                    int n, const acc_result *total)
{
    fputs("{\n  \"config\": {\n    \"run_name\": ", out);
    acc_json_write_string(out, c->run_name);
    fprintf(out, ",\n    \"rows\": %" PRId64 ",\n    \"cols\": %" PRId64
                 ",\n    \"depth\": %" PRId64 ",\n    \"dataflow\": \"%s\""
                 ",\n    \"ifmap_sram_bytes\": %" PRId64 ",\n    \"filter_sram_bytes\": %" PRId64
                 ",\n    \"ofmap_sram_bytes\": %" PRId64,
            c->rows, c->cols, c->depth, acc_dataflow_name(c->dataflow),
            c->sram_bytes[ACC_IFMAP], c->sram_bytes[ACC_FILTER], c->sram_bytes[ACC_OFMAP]);
    if (c->bw_unlimited)
        fputs(",\n    \"bandwidth_words_per_cycle\": null", out);
    else
        fprintf(out, ",\n    \"bandwidth_words_per_cycle\": %.9g", c->bandwidth);
    fprintf(out, ",\n    \"word_bytes\": %" PRId64 ",\n    \"clock_mhz\": %.9g"
                 ",\n    \"vector_lanes\": %" PRId64,
            c->word_bytes, c->clock_mhz, c->vector_lanes);
    acc_write_json_energy(out, c);
    fprintf(out, "\n  },\n  \"search\": \"%s\",\n  \"layers\": [",
            acc_search_name(o ? o->search : ACC_SEARCH_NONE));
    row w;
    for (int i = 0; i < n; i++) {
        build_row(&w, &rs[i], false);
        fputs(i ? ",\n    " : "\n    ", out);
        json_object(out, &w, "    ");
    }
    fputs(n ? "\n  ],\n  \"total\": " : "],\n  \"total\": ", out);
    build_row(&w, total, true);
    json_object(out, &w, "  ");
    fputs("\n}\n", out);
}

void acc_write_json_energy(FILE *out, const acc_config *c)
{
    const acc_energy *e = &c->energy;
    fprintf(out, ",\n    \"tech_nm\": %.9g,\n    \"mac_pj\": %.9g,\n    \"reg_pj\": %.9g",
            c->tech_nm, e->mac_pj, e->reg_pj);
    for (int op = 0; op < ACC_NOPERANDS; op++)
        fprintf(out, ",\n    \"sram_read_pj_%s\": %.9g,\n    \"sram_write_pj_%s\": %.9g",
                acc_operand_name((acc_operand)op), acc_sram_word_pj(c, (acc_operand)op, false),
                acc_operand_name((acc_operand)op), acc_sram_word_pj(c, (acc_operand)op, true));
    fprintf(out, ",\n    \"sram_energy\": \"%s\"",
            e->sram_read_pj >= 0 && e->sram_write_pj >= 0 ? "config"
            : e->sram_read_pj < 0 && e->sram_write_pj < 0 ? "derived from size"
                                                          : "config and derived from size");
    fprintf(out, ",\n    \"dram_read_pj_per_byte\": %.9g,\n    \"dram_write_pj_per_byte\": %.9g"
                 ",\n    \"vector_op_pj\": %.9g,\n    \"static_mw\": %.9g"
                 ",\n    \"area_mm2\": %.9g",
            e->dram_read_pj_per_byte, e->dram_write_pj_per_byte, e->vector_op_pj, e->static_mw,
            acc_area_mm2(c));
}

/* ---------------------------------------------------------------- table */

#define TCOLS 14

static const char *const table_titles[TCOLS] = {
    "layer", "M", "N", "K", "batch", "tile mxnxk order", "compute", "stall", "total",
    "util%", "SRAM rd", "DRAM rd", "DRAM wr", "energy uJ"};

static void table_cells(const acc_result *r, bool total, char cell[TCOLS][64])
{
    bool gemm = !total && r->kind == ACC_LAYER_GEMM;
    snprintf(cell[0], 64, "%s", r->name ? r->name : "?");
    if (gemm) {
        snprintf(cell[1], 64, "%" PRId64, r->M);
        snprintf(cell[2], 64, "%" PRId64, r->N);
        snprintf(cell[3], 64, "%" PRId64, r->K);
        snprintf(cell[4], 64, "%" PRId64, r->batch);
        snprintf(cell[5], 64, "%" PRId64 "x%" PRId64 "x%" PRId64 " %s", r->tiling.tm,
                 r->tiling.tn, r->tiling.tk, acc_order_name(r->tiling.order));
    } else {
        for (int i = 1; i <= 4; i++)
            snprintf(cell[i], 64, "-");
        snprintf(cell[5], 64, total ? "" : "vector");
    }
    snprintf(cell[6], 64, "%" PRId64, r->compute_cycles);
    snprintf(cell[7], 64, "%" PRId64, r->stall_cycles);
    snprintf(cell[8], 64, "%" PRId64, r->total_cycles);
    snprintf(cell[9], 64, "%.1f", 100.0 * r->utilization);
    snprintf(cell[10], 64, "%" PRId64, acc_result_sram_reads(r));
    snprintf(cell[11], 64, "%" PRId64, acc_result_dram_reads(r));
    snprintf(cell[12], 64, "%" PRId64, acc_result_dram_writes(r));
    snprintf(cell[13], 64, "%.3f", r->energy_pj / 1e6);
}

void acc_print_table(FILE *out, const acc_config *c, const acc_result *rs, int n,
                     const acc_result *total)
{
    int width[TCOLS];
    char cell[TCOLS][64];
    for (int j = 0; j < TCOLS; j++)
        width[j] = (int)strlen(table_titles[j]);
    for (int i = 0; i <= n; i++) {
        table_cells(i < n ? &rs[i] : total, i == n, cell);
        for (int j = 0; j < TCOLS; j++)
            if ((int)strlen(cell[j]) > width[j])
                width[j] = (int)strlen(cell[j]);
    }
    fprintf(out, "accelerator %s: %" PRId64 "x%" PRId64, c->run_name, c->rows, c->cols);
    if (c->depth > 1)
        fprintf(out, "x%" PRId64, c->depth);
    fprintf(out, " %s, SRAM %" PRId64 "/%" PRId64 "/%" PRId64 " kB, ",
            acc_dataflow_name(c->dataflow), c->sram_bytes[ACC_IFMAP] / 1024,
            c->sram_bytes[ACC_FILTER] / 1024, c->sram_bytes[ACC_OFMAP] / 1024);
    if (c->bw_unlimited)
        fprintf(out, "unlimited bandwidth");
    else
        fprintf(out, "%g words/cycle", c->bandwidth);
    fprintf(out, ", %g MHz (accesses in words of %" PRId64 " B)\n", c->clock_mhz,
            c->word_bytes);
    for (int j = 0; j < TCOLS; j++)
        fprintf(out, "%s%*s", j ? "  " : "", j == 0 || j == 5 ? -width[j] : width[j],
                table_titles[j]);
    fputc('\n', out);
    for (int i = 0; i <= n; i++) {
        if (i == n) {
            int len = 0;
            for (int j = 0; j < TCOLS; j++)
                len += width[j] + (j ? 2 : 0);
            for (int k = 0; k < len; k++)
                fputc('-', out);
            fputc('\n', out);
        }
        table_cells(i < n ? &rs[i] : total, i == n, cell);
        for (int j = 0; j < TCOLS; j++)
            fprintf(out, "%s%*s", j ? "  " : "", j == 0 || j == 5 ? -width[j] : width[j],
                    cell[j]);
        fputc('\n', out);
    }
    fprintf(out, "total: %" PRId64 " MACs (+%" PRId64 " padding), %.3f us, %.3f uJ, "
                 "EDP %.6g pJ*us, utilization %.1f%%\n",
            total->macs, total->pad_macs, total->latency_us, total->energy_pj / 1e6,
            total->edp, 100.0 * total->utilization);
}

/* ---------------------------------------------------------------- sweeps */

static const int64_t default_shapes[] = {8, 16, 32, 64, 128};
static const int64_t default_srams[] = {16, 32, 64, 128, 256, 512, 1024};

static bool parse_list_int(const char *s, const char *what, int64_t *out, int *n, int64_t max,
                           char *err, size_t errlen)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (end == p || errno || x < 1 || x > max || (*end && *end != ',')) {
            snprintf(err, errlen, "tec: error: bad %s list '%s': expected positive integers "
                     "(at most %lld) separated by commas", what, s, (long long)max);
            return false;
        }
        if (*n == ACC_SWEEP_MAX) {
            snprintf(err, errlen, "tec: error: %s list '%s' has more than %d entries", what, s,
                     ACC_SWEEP_MAX);
            return false;
        }
        out[(*n)++] = x;
        p = *end ? end + 1 : end;
    }
    if (*n == 0) {
        snprintf(err, errlen, "tec: error: empty %s list", what);
        return false;
    }
    return true;
}

bool acc_sweep_spec_parse(const char *shapes, const char *dataflows, const char *srams,
                          acc_sweep_spec *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (!shapes) {
        for (size_t i = 0; i < sizeof default_shapes / sizeof default_shapes[0]; i++)
            s->rows[s->nshapes] = s->cols[s->nshapes] = default_shapes[i], s->nshapes++;
    } else {
        const char *p = shapes;
        while (*p) {
            char *end;
            errno = 0;
            long long r = strtoll(p, &end, 10), c = 0;
            bool ok = end != p && !errno && r >= 1 && r <= 65536 && (*end == 'x' || *end == 'X');
            if (ok) {
                p = end + 1;
                c = strtoll(p, &end, 10);
                ok = end != p && !errno && c >= 1 && c <= 65536 && (*end == ',' || !*end);
            }
            if (!ok) {
                snprintf(err, errlen, "tec: error: bad array shape list '%s': expected "
                         "ROWSxCOLS[,ROWSxCOLS...] with sizes from 1 to 65536", shapes);
                return false;
            }
            if (s->nshapes == ACC_SWEEP_MAX) {
                snprintf(err, errlen, "tec: error: array shape list '%s' has more than %d "
                         "entries", shapes, ACC_SWEEP_MAX);
                return false;
            }
            s->rows[s->nshapes] = r;
            s->cols[s->nshapes++] = c;
            p = *end ? end + 1 : end;
        }
        if (s->nshapes == 0) {
            snprintf(err, errlen, "tec: error: empty array shape list");
            return false;
        }
    }
    if (!dataflows) {
        for (int d = 0; d < ACC_NDATAFLOWS; d++)
            s->dataflows[s->ndataflows++] = (acc_dataflow)d;
    } else {
        char buf[64];
        if (strlen(dataflows) >= sizeof buf) {
            snprintf(err, errlen, "tec: error: dataflow list too long");
            return false;
        }
        snprintf(buf, sizeof buf, "%s", dataflows);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            acc_dataflow d;
            if (!acc_dataflow_parse(t, &d) || s->ndataflows == ACC_NDATAFLOWS) {
                snprintf(err, errlen, "tec: error: bad dataflow list '%s': expected up to "
                         "three of os, ws, is separated by commas", dataflows);
                return false;
            }
            s->dataflows[s->ndataflows++] = d;
        }
        if (s->ndataflows == 0) {
            snprintf(err, errlen, "tec: error: empty dataflow list");
            return false;
        }
    }
    if (!srams) {
        for (size_t i = 0; i < sizeof default_srams / sizeof default_srams[0]; i++)
            s->sram_kb[s->nsrams++] = default_srams[i];
    } else if (!parse_list_int(srams, "SRAM size", s->sram_kb, &s->nsrams,
                               INT64_C(1) << 30, err, errlen)) {
        return false;
    }
    return true;
}

int acc_sweep_count(const acc_sweep_spec *s)
{
    return s->nshapes * s->ndataflows * s->nsrams;
}

bool acc_sweep_config(const acc_config *base, const acc_sweep_spec *s, int i, acc_config *c)
{
    int m = i % s->nsrams, d = i / s->nsrams % s->ndataflows,
        shape = i / s->nsrams / s->ndataflows;
    *c = *base;
    c->rows = s->rows[shape];
    c->cols = s->cols[shape];
    c->dataflow = s->dataflows[d];
    for (int op = 0; op < ACC_NOPERANDS; op++)
        c->sram_bytes[op] = s->sram_kb[m] * 1024;
    return !(s->max_area_mm2 > 0 && acc_area_mm2(c) > s->max_area_mm2);
}

bool acc_sweep_area_parse(const char *str, double *mm2, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double x = strtod(str, &end);
    if (end == str || *end || errno || !isfinite(x) || x <= 0) {
        snprintf(err, errlen, "tec: error: bad area budget '%s': expected a positive number "
                 "of mm^2", str);
        return false;
    }
    *mm2 = x;
    return true;
}

bool acc_sweep(const acc_config *base, const acc_options *o, const acc_sweep_spec *s,
               const acc_layer *layers, int n, FILE *csv, int64_t *evals, char *err,
               size_t errlen)
{
    acc_result *rs = malloc((size_t)(n > 0 ? n : 1) * sizeof *rs);
    if (!rs) {
        snprintf(err, errlen, "tec: error: out of memory");
        return false;
    }
    int64_t count = 0;
    fprintf(csv, "config,rows,cols,depth,dataflow,sram_kb,bandwidth,layers,macs,pad_macs,"
                 "compute_cycles,stall_cycles,total_cycles,mapping_efficiency,utilization,"
                 "sram_reads,sram_writes,dram_reads,dram_writes,energy_pj,energy_mac_pj,"
                 "energy_reg_pj,energy_sram_pj,energy_dram_pj,energy_vector_pj,"
                 "energy_static_pj,latency_us,edp,area_mm2\n");
    bool ok = true;
    for (int id = 0; ok && id < acc_sweep_count(s); id++) {
        acc_config c;
        if (!acc_sweep_config(base, s, id, &c))
            continue;
        acc_result t;
        ok = acc_config_check(&c, err, errlen) &&
             acc_model_network(&c, o, layers, n, rs, &t, &count, err, errlen);
        if (!ok)
            break;
        fprintf(csv, "%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%s,%" PRId64 ",", id, c.rows,
                c.cols, c.depth, acc_dataflow_name(c.dataflow), c.sram_bytes[0] / 1024);
        if (c.bw_unlimited)
            fputs("unlimited", csv);
        else
            fprintf(csv, "%.9g", c.bandwidth);
        fprintf(csv, ",%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                     ",%.9g,%.9g,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                     ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n",
                n, t.macs, t.pad_macs, t.compute_cycles, t.stall_cycles, t.total_cycles,
                t.mapping_efficiency, t.utilization, acc_result_sram_reads(&t),
                acc_result_sram_writes(&t), acc_result_dram_reads(&t),
                acc_result_dram_writes(&t), t.energy_pj, t.energy.mac, t.energy.reg,
                t.energy.sram, t.energy.dram, t.energy.vector, t.energy.stat, t.latency_us,
                t.edp, acc_area_mm2(&c));
    }
    free(rs);
    if (evals)
        *evals = count;
    return ok;
}

/* ---------------------------------------------------------------- trace */

/* The Chrome trace of a network's timeline (acc_write_trace): one process,
 * a track for the layers, one for the array's folds and one per operand for
 * its DRAM traffic.  Timestamps are microseconds at ClockMHz; every event
 * also gives its cycle. */
typedef struct trace_out {
    FILE *out;
    const acc_config *c;
    const char *layer;
    int64_t offset;            /* the layer's first cycle in the network */
    int64_t events, limit;
} trace_out;

enum { TRACK_LAYERS = 1, TRACK_ARRAY = 2, TRACK_DRAM = 3 };   /* + operand */

static void trace_event(trace_out *t, const char *name, const char *cat, int tid,
                        int64_t cycle, int64_t cycles)
{
    fprintf(t->out, ",\n{\"name\":");
    acc_json_write_string(t->out, name);
    fprintf(t->out, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.6f,"
                    "\"dur\":%.6f,\"args\":{\"layer\":", cat, tid,
            (double)(t->offset + cycle) / t->c->clock_mhz, (double)cycles / t->c->clock_mhz);
    acc_json_write_string(t->out, t->layer);
    fprintf(t->out, ",\"cycle\":%" PRId64 ",\"cycles\":%" PRId64, t->offset + cycle, cycles);
    t->events++;
}

static bool trace_fold(const acc_fold_event *e, void *ctx)
{
    trace_out *t = ctx;
    char name[48];
    snprintf(name, sizeof name, "fold %" PRId64, e->fold);
    trace_event(t, name, "fold", TRACK_ARRAY, e->start, e->cycles);
    fprintf(t->out, ",\"fold\":%" PRId64 ",\"tile\":%" PRId64, e->fold, e->tile);
    for (int op = 0; op < ACC_NOPERANDS; op++)
        fprintf(t->out, ",\"sram_%s\":%" PRId64 ",\"dram_%s\":%" PRId64, acc_operand_name(op),
                e->sram[op], acc_operand_name(op), e->dram_rd[op]);
    fprintf(t->out, ",\"dram_write_ofmap\":%" PRId64 "}}", e->dram_wr);
    /* DRAM: each operand's reads between the time they could start and the
     * fold's start; the ofmap's writes after the fold, at the bandwidth */
    for (int op = 0; op < ACC_NOPERANDS; op++) {
        if (e->dram_rd[op] <= 0)
            continue;
        trace_event(t, acc_operand_name(op), "dram read", TRACK_DRAM + op, e->load_start,
                    e->start - e->load_start);
        fprintf(t->out, ",\"fold\":%" PRId64 ",\"operand\":\"%s\",\"dram_words\":%" PRId64 "}}",
                e->fold, acc_operand_name(op), e->dram_rd[op]);
    }
    if (e->dram_wr > 0) {
        int64_t w = t->c->bw_unlimited ? 0 : (int64_t)ceil((double)e->dram_wr / t->c->bandwidth);
        trace_event(t, "ofmap write", "dram write", TRACK_DRAM + ACC_OFMAP,
                    e->start + e->cycles, w);
        fprintf(t->out, ",\"fold\":%" PRId64 ",\"operand\":\"ofmap\",\"dram_words\":%" PRId64
                        "}}", e->fold, e->dram_wr);
    }
    return t->events < t->limit;
}

bool acc_write_trace(FILE *out, const acc_config *c, const acc_options *o,
                     const acc_layer *layers, int n, int64_t max_events, int64_t *events,
                     char *err, size_t errlen)
{
    trace_out t = {out, c, "", 0, 0, max_events > 0 ? max_events : INT64_MAX};
    fprintf(out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
                 "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":");
    acc_json_write_string(out, c->run_name);
    fputs("}}", out);
    static const char *const tracks[] = {"layers", "array", "DRAM ifmap", "DRAM filter",
                                         "DRAM ofmap"};
    for (int i = 0; i < 5; i++)
        fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
                     "\"args\":{\"name\":\"%s\"}}", i + 1, tracks[i]);
    bool ok = true;
    for (int i = 0; ok && i < n && t.events < t.limit; i++) {
        acc_result r;
        int64_t end;
        t.layer = layers[i].name ? layers[i].name : "?";
        ok = acc_trace_layer(c, o, &layers[i], trace_fold, &t, &r, &end, err, errlen);
        if (!ok)
            break;
        if (t.events < t.limit && end != r.total_cycles) {
            /* the replay and the closed form are one model: they must agree */
            snprintf(err, errlen, "tec: internal error: accelerator trace: layer %s ends at "
                     "cycle %" PRId64 ", the model says %" PRId64, t.layer, end,
                     r.total_cycles);
            ok = false;
            break;
        }
        trace_event(&t, t.layer, layers[i].kind == ACC_LAYER_GEMM ? "gemm" : "vector",
                    TRACK_LAYERS, 0, r.total_cycles);
        fprintf(out, ",\"stall_cycles\":%" PRId64 ",\"dram_reads\":%" PRId64
                     ",\"dram_writes\":%" PRId64 "}}", r.stall_cycles,
                acc_result_dram_reads(&r), acc_result_dram_writes(&r));
        t.offset += r.total_cycles;
    }
    fputs("\n]}\n", out);
    *events = t.events;
    return ok;
}
