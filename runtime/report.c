/* runtime/report.c — turns a finished profile into report rows (per layer,
 * fused group, block of the layer hierarchy, and the network) and writes
 * them as an aligned table, CSV, JSON and a Chrome trace (doc/profile.md
 * defines every column). */
#define _GNU_SOURCE   /* vasprintf */
#include "runtime/npy.h"
#include "runtime/profile.h"
#include "accel/workload.h"

#include <errno.h>
#include <gmp.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- small helpers */

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* A set of pointers, in insertion order. */
typedef struct pset {
    const void **p;
    int n, cap;
} pset;

static bool pset_has(const pset *s, const void *x)
{
    for (int i = 0; i < s->n; i++)
        if (s->p[i] == x)
            return true;
    return false;
}

static bool pset_add(pset *s, const void *x)
{
    if (pset_has(s, x))
        return true;
    if (s->n == s->cap) {
        int nc = s->cap ? s->cap * 2 : 8;
        const void **np = realloc(s->p, sizeof *np * (size_t)nc);
        if (!np)
            return false;
        s->p = np;
        s->cap = nc;
    }
    s->p[s->n++] = x;
    return true;
}

static bool pset_union(pset *dst, const pset *src)
{
    for (int i = 0; i < src->n; i++)
        if (!pset_add(dst, src->p[i]))
            return false;
    return true;
}

static void pset_free(pset *s)
{
    free(s->p);
    s->p = NULL;
    s->n = s->cap = 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static void mpz_set_u64(mpz_t z, uint64_t v)
{
    mpz_import(z, 1, -1, sizeof v, 0, 0, &v);
}

static uint64_t mpz_get_u64_sat(const mpz_t z)
{
    if (mpz_sgn(z) <= 0)
        return 0;
    if (mpz_sizeinbase(z, 2) > 64)
        return UINT64_MAX;
    uint64_t v = 0;
    mpz_export(&v, NULL, -1, sizeof v, 0, 0, z);
    return v;
}

/* a * num / den, exactly, saturating at UINT64_MAX. */
static uint64_t scale_u64(uint64_t a, uint64_t num, uint64_t den)
{
    if (den == 0)
        return a;
    mpz_t x, y;
    mpz_inits(x, y, NULL);
    mpz_set_u64(x, a);
    mpz_set_u64(y, num);
    mpz_mul(x, x, y);
    mpz_set_u64(y, den);
    mpz_fdiv_q(x, x, y);
    uint64_t r = mpz_get_u64_sat(x);
    mpz_clears(x, y, NULL);
    return r;
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
    if (to <= 1 || v % to == 0)
        return v;
    return sat_mul(v / to + 1, to);
}

static uint64_t numel_u64(const ir_buffer *b)
{
    uint64_t n = 1;
    for (int i = 0; i < b->ndim; i++)
        n = sat_mul(n, b->shape[i] > 0 ? (uint64_t)b->shape[i] : 0);
    return n;
}

/* ---------------------------------------------------------------- per-function work */

/* What one function contributes to one run of the graph. */
typedef struct fwork {
    pass_totals all;
    uint64_t *loads, *stores;      /* [nbufs] elements, all members */
    pass_totals *mem;              /* [nmembers] */
    uint8_t *rd, *wr;              /* [nmembers * nbufs]: member reads / writes buffer */
    uint64_t *dram_rd, *dram_wr;   /* [nmembers] */
    uint64_t *pad_macs, *pad_flops;/* [nmembers] extra work when GEMM dims are padded */
} fwork;

/* Extra bookkeeping of a row while the rows are built. */
typedef struct rowx {
    pset params;                   /* graph PARAM buffers it reads */
    pset acts;                     /* buffers it writes */
    pset reads;                    /* buffers it reads */
    int *funcs;                    /* functions whose time adds up to its time */
    int nfuncs, capfuncs;
    char *home;                    /* block that holds a group's time ("" for none) */
    bool leaf;                     /* a layer (fused member or not): counted in totals */
    int group_row;                 /* member rows: their group's row, else -1 */
} rowx;

typedef struct builder {
    const rt_profile *p;
    const pass_stats *st;
    const ir_module *m;
    const uint64_t *counts;
    diag *d;
    fwork *fw;
    uint64_t *pad_numel;           /* [graph buffers]: padded element count, 0 = as is */
    rt_row *rows;
    rowx *x;
    int n, cap;
    bool oom;
} builder;

static int graph_index(const ir_module *m, const ir_buffer *b)
{
    for (int i = 0; i < m->graph.nbufs; i++)
        if (m->graph.bufs[i] == b)
            return i;
    return -1;
}

static bool fwork_init(builder *b, int f)
{
    const pass_funcinfo *fi = &b->st->funcs[f];
    fwork *w = &b->fw[f];
    size_t nb = (size_t)fi->nbufs + 1, nm = (size_t)fi->nmembers;
    w->loads = calloc(nb, sizeof *w->loads);
    w->stores = calloc(nb, sizeof *w->stores);
    w->mem = calloc(nm, sizeof *w->mem);
    w->rd = calloc(nm * nb, 1);
    w->wr = calloc(nm * nb, 1);
    w->dram_rd = calloc(nm, sizeof *w->dram_rd);
    w->dram_wr = calloc(nm, sizeof *w->dram_wr);
    w->pad_macs = calloc(nm, sizeof *w->pad_macs);
    w->pad_flops = calloc(nm, sizeof *w->pad_flops);
    if (!w->loads || !w->stores || !w->mem || !w->rd || !w->wr || !w->dram_rd || !w->dram_wr ||
        !w->pad_macs || !w->pad_flops) {
        b->oom = true;
        return false;
    }
    w->all.loads = w->loads;
    w->all.stores = w->stores;
    if (!pass_func_totals(b->st, f, b->counts, -1, &w->all, b->d))
        return false;
    for (int mi = 0; mi < fi->nmembers; mi++)
        if (!pass_func_totals(b->st, f, b->counts, fi->nmembers > 1 ? mi : -1, &w->mem[mi], b->d))
            return false;
    for (int i = 0; i < fi->nsites; i++) {
        const pass_site *s = &b->st->sites[fi->first_site + i];
        int mi = fi->nmembers > 1 ? s->member : 0;
        for (int p = 0; p < s->nparts; p++)
            for (int k = 0; k < fi->nbufs; k++)
                if (s->parts[p].loads[k])
                    w->rd[(size_t)mi * nb + (size_t)k] = 1;
        if (s->store_buf >= 0)
            w->wr[(size_t)mi * nb + (size_t)s->store_buf] = 1;
    }
    return true;
}

static void fwork_free(fwork *w)
{
    free(w->loads);
    free(w->stores);
    free(w->mem);
    free(w->rd);
    free(w->wr);
    free(w->dram_rd);
    free(w->dram_wr);
    free(w->pad_macs);
    free(w->pad_flops);
}

/* The params a const is made from: those passed to the load calls that
 * store to it, and through consts they are passed, theirs (a layer that
 * reads packed weights has the weights' parameters).  `depth` bounds
 * hand-written cycles. */
static bool add_const_sources(const ir_module *m, pset *ps, const ir_buffer *c, int depth)
{
    bool ok = true;
    for (int l = 0; l < m->graph.nloads && depth < 16; l++) {
        const ir_graph_call *call = &m->graph.loads[l];
        bool makes = false;
        for (int j = 0; j < call->nargs && !makes; j++)
            makes = call->args[j] == c && j < call->fn->nparams && ir_stmt_stores_to(call->fn->body, call->fn->params[j]);
        for (int j = 0; makes && j < call->nargs; j++) {
            const ir_buffer *a = call->args[j];
            if (a->role == IR_BUF_PARAM)
                ok &= pset_add(ps, a);
            else if (a->role == IR_BUF_CONST && a != c)
                ok &= add_const_sources(m, ps, a, depth + 1);
        }
    }
    return ok;
}

/* The one param a const is made from, or NULL. */
static const ir_buffer *const_source(const ir_module *m, const ir_buffer *c)
{
    pset ps = {0};
    const ir_buffer *src = add_const_sources(m, &ps, c, 0) && ps.n == 1 ? ps.p[0] : NULL;
    free(ps.p);
    return src;
}


/* ---------------------------------------------------------------- padding (--pad-to) */

/* For every GEMM-like site: the extra MACs (and 2 FLOPs each for floats)
 * when M, N and K are rounded up to multiples of pad, and the padded sizes
 * of the weight and output tensors (doc/profile.md, "Padding"). */
static void apply_padding(builder *b, uint64_t pad)
{
    const ir_module *m = b->m;
    for (int f = 0; f < b->st->nfuncs; f++) {
        const pass_funcinfo *fi = &b->st->funcs[f];
        if (fi->ncalls == 0)
            continue;
        for (int i = 0; i < fi->nsites; i++) {
            const pass_site *s = &b->st->sites[fi->first_site + i];
            const pass_gemm *g = &s->gemm;
            if (!s->macs || !g->valid)
                continue;
            uint64_t pm = round_up(g->m, pad), pn = round_up(g->n, pad), pk = round_up(g->k, pad);
            uint64_t num = sat_mul(sat_mul(sat_mul(g->batch, pm), pn), pk);
            uint64_t den = sat_mul(sat_mul(sat_mul(g->batch, g->m), g->n), g->k);
            bool known;
            uint64_t n = pass_site_executions(b->st, s, b->counts, &known);
            if (!known || den == 0)
                continue;
            uint64_t extra = scale_u64(n, num, den) - n;
            int mi = fi->nmembers > 1 ? s->member : 0;
            b->fw[f].pad_macs[mi] = sat_add(b->fw[f].pad_macs[mi], extra);
            if (ir_dtype_is_float(s->stmt->buf->dtype))
                b->fw[f].pad_flops[mi] = sat_add(b->fw[f].pad_flops[mi], sat_mul(extra, 2));
            /* Weights are the [N, K] (or [M, K]) matrix, the output [M, N]. */
            struct { int buf; uint64_t plain, padded; } t[3] = {
                {g->b_buf, sat_mul(g->n, g->k), sat_mul(pn, pk)},
                {g->a_buf, sat_mul(g->m, g->k), sat_mul(pm, pk)},
                {g->out_buf, sat_mul(sat_mul(g->batch, g->m), g->n), sat_mul(sat_mul(g->batch, pm), pn)},
            };
            for (int k = 0; k < 3; k++) {
                if (t[k].buf < 0 || fi->bufs[t[k].buf].param < 0)
                    continue;
                for (int c = 0; c < m->graph.ncalls; c++) {
                    const ir_graph_call *call = &m->graph.calls[c];
                    if (call->fn != fi->fn || fi->bufs[t[k].buf].param >= call->nargs)
                        continue;
                    const ir_buffer *gb = call->args[fi->bufs[t[k].buf].param];
                    /* packed weights: their parameter is padded */
                    if (gb->role == IR_BUF_CONST && const_source(m, gb))
                        gb = const_source(m, gb);
                    int gi = graph_index(m, gb);
                    bool weight = k < 2 && gb->role == IR_BUF_PARAM;
                    bool out = k == 2 && gb->role != IR_BUF_PARAM;
                    if (gi >= 0 && (weight || out) && numel_u64(gb) == t[k].plain)
                        b->pad_numel[gi] = t[k].padded;
                }
            }
        }
    }
}

static uint64_t padded_numel(const builder *b, const ir_buffer *gb)
{
    int gi = graph_index(b->m, gb);
    return gi >= 0 && b->pad_numel[gi] ? b->pad_numel[gi] : numel_u64(gb);
}

static uint64_t buffer_bytes(const builder *b, const ir_buffer *buf)
{
    uint64_t n = buf->role == IR_BUF_LOCAL ? numel_u64(buf) : padded_numel(b, buf);
    return sat_mul(n, (uint64_t)ir_dtype_size(buf->dtype));
}

/* ---------------------------------------------------------------- DRAM model */

/* Graph buffers in order of last use (most recent last), for the LRU model
 * of the last-level cache. */
typedef struct lru {
    const ir_buffer **b;
    uint64_t *bytes;
    int n;
} lru;

static bool lru_resident(const lru *c, const ir_buffer *b, uint64_t llc)
{
    uint64_t above = 0;
    for (int i = c->n - 1; i >= 0; i--) {
        above = sat_add(above, c->bytes[i]);
        if (c->b[i] == b)
            return above <= llc;
    }
    return false;
}

static void lru_touch(lru *c, const ir_buffer *b, uint64_t bytes)
{
    int i = 0;
    while (i < c->n && c->b[i] != b)
        i++;
    if (i < c->n) {
        memmove(&c->b[i], &c->b[i + 1], sizeof *c->b * (size_t)(c->n - i - 1));
        memmove(&c->bytes[i], &c->bytes[i + 1], sizeof *c->bytes * (size_t)(c->n - i - 1));
        c->n--;
    }
    c->b[c->n] = b;
    c->bytes[c->n] = bytes;
    c->n++;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Every graph call in order, from a cold cache (doc/profile.md, "DRAM"). */
static bool dram_model(builder *b)
{
    const ir_module *m = b->m;
    uint64_t llc = b->p->llc_bytes ? b->p->llc_bytes : 1;
    lru cache = {calloc((size_t)m->graph.nbufs + 1, sizeof(void *)),
                 calloc((size_t)m->graph.nbufs + 1, sizeof(uint64_t)), 0};
    if (!cache.b || !cache.bytes) {
        free(cache.b);
        free(cache.bytes);
        b->oom = true;
        return false;
    }
    for (int c = 0; c < m->graph.ncalls; c++) {
        const ir_graph_call *call = &m->graph.calls[c];
        int f = -1;
        for (int k = 0; k < m->nfuncs; k++)
            if (m->funcs[k] == call->fn)
                f = k;
        if (f < 0)
            continue;
        const pass_funcinfo *fi = &b->st->funcs[f];
        fwork *w = &b->fw[f];
        uint64_t ncalls = (uint64_t)(fi->ncalls > 0 ? fi->ncalls : 1);
        /* The working set: distinct graph buffers the call touches. */
        pset seen = {0};
        uint64_t ws = 0;
        for (int k = 0; k < fi->nbufs; k++) {
            const pass_bufinfo *bi = &fi->bufs[k];
            if (bi->param < 0 || bi->param >= call->nargs || !(bi->read || bi->written))
                continue;
            const ir_buffer *gb = call->args[bi->param];
            if (!pset_has(&seen, gb)) {
                if (!pset_add(&seen, gb))
                    b->oom = true;
                ws = sat_add(ws, buffer_bytes(b, gb));
            }
        }
        uint64_t passes = ws <= llc ? 1 : ws / llc + (ws % llc != 0);
        for (int k = 0; k < fi->nbufs; k++) {
            const pass_bufinfo *bi = &fi->bufs[k];
            if (bi->param < 0 || bi->param >= call->nargs || !(bi->read || bi->written))
                continue;
            const ir_buffer *gb = call->args[bi->param];
            uint64_t fp = buffer_bytes(b, gb), size = (uint64_t)ir_dtype_size(gb->dtype);
            uint64_t lb = sat_mul(w->loads[k], size) / ncalls;
            uint64_t sb = sat_mul(w->stores[k], size) / ncalls;
            int mi = fi->nmembers > 1 ? bi->member : 0;
            if (bi->read && !bi->write_first) {
                uint64_t rd;
                if (ws <= llc)
                    rd = lru_resident(&cache, gb, llc) ? 0 : min_u64(lb, fp);
                else
                    rd = min_u64(lb, sat_mul(fp, passes));
                w->dram_rd[mi] = sat_add(w->dram_rd[mi], rd);
            }
            if (bi->written) {
                uint64_t wr = ws <= llc ? min_u64(sb, fp) : min_u64(sb, sat_mul(fp, passes));
                w->dram_wr[mi] = sat_add(w->dram_wr[mi], wr);
            }
        }
        for (int i = 0; i < seen.n; i++)
            lru_touch(&cache, seen.p[i], buffer_bytes(b, seen.p[i]));
        pset_free(&seen);
    }
    free(cache.b);
    free(cache.bytes);
    return !b->oom;
}

/* ---------------------------------------------------------------- rows */

static int add_row(builder *b, rt_row_kind kind, const char *name, const char *op)
{
    if (b->n == b->cap) {
        int nc = b->cap ? b->cap * 2 : 16;
        rt_row *nr = realloc(b->rows, sizeof *nr * (size_t)nc);
        rowx *nx = nr ? realloc(b->x, sizeof *nx * (size_t)nc) : NULL;
        if (nr)
            b->rows = nr;
        if (!nr || !nx) {
            b->oom = true;
            return -1;
        }
        b->x = nx;
        b->cap = nc;
    }
    int i = b->n++;
    rt_row *r = &b->rows[i];
    memset(r, 0, sizeof *r);
    memset(&b->x[i], 0, sizeof b->x[i]);
    b->x[i].group_row = -1;
    r->kind = kind;
    r->name = strdup(name);
    r->op = op;
    r->time_us = r->gflops = r->intensity = r->attainable_gflops = r->roof_pct = NAN;
    for (int k = 0; k < RT_NHW; k++)
        r->hw[k] = NAN;
    if (!r->name)
        b->oom = true;
    return i;
}

static int find_row(const builder *b, rt_row_kind kind, const char *name, bool member)
{
    for (int i = 0; i < b->n; i++)
        if (b->rows[i].kind == kind && strcmp(b->rows[i].name, name) == 0 &&
            (b->x[i].group_row >= 0) == member)
            return i;
    return -1;
}

static void add_func(builder *b, int row, int f)
{
    rowx *x = &b->x[row];
    for (int i = 0; i < x->nfuncs; i++)
        if (x->funcs[i] == f)
            return;
    if (x->nfuncs == x->capfuncs) {
        int nc = x->capfuncs ? x->capfuncs * 2 : 4;
        int *np = realloc(x->funcs, sizeof *np * (size_t)nc);
        if (!np) {
            b->oom = true;
            return;
        }
        x->funcs = np;
        x->capfuncs = nc;
    }
    x->funcs[x->nfuncs++] = f;
}

static void add_numbers(rt_row *r, const pass_totals *t, uint64_t pad_macs, uint64_t pad_flops,
                        uint64_t dram_rd, uint64_t dram_wr)
{
    r->macs = sat_add(r->macs, sat_add(t->macs, pad_macs));
    r->flops = sat_add(r->flops, sat_add(t->flops, pad_flops));
    r->load_bytes = sat_add(r->load_bytes, t->load_bytes);
    r->store_bytes = sat_add(r->store_bytes, t->store_bytes);
    r->dram_read = sat_add(r->dram_read, dram_rd);
    r->dram_write = sat_add(r->dram_write, dram_wr);
    r->approx |= t->approx;
    r->unknown |= t->unknown;
}

/* Which buffers member mi of function f reads and writes, over all calls. */
static void add_buffers(builder *b, int row, int f, int mi)
{
    const pass_funcinfo *fi = &b->st->funcs[f];
    const fwork *w = &b->fw[f];
    size_t nb = (size_t)fi->nbufs + 1;
    rowx *x = &b->x[row];
    bool member_row = x->group_row >= 0;
    for (int c = 0; c < b->m->graph.ncalls; c++) {
        const ir_graph_call *call = &b->m->graph.calls[c];
        if (call->fn != fi->fn)
            continue;
        for (int k = 0; k < fi->nbufs; k++) {
            const pass_bufinfo *bi = &fi->bufs[k];
            bool rd = false, wr = false;
            for (int q = 0; q < fi->nmembers; q++)
                if (mi < 0 || q == mi) {
                    rd |= w->rd[(size_t)q * nb + (size_t)k] != 0;
                    wr |= w->wr[(size_t)q * nb + (size_t)k] != 0;
                }
            const ir_buffer *buf = bi->buf;
            if (bi->param >= 0) {
                if (bi->param >= call->nargs)
                    continue;
                buf = call->args[bi->param];
            } else if (!member_row) {
                continue;   /* a layer's own temporaries are internal to it */
            }
            bool ok = true;
            if (rd && buf->role == IR_BUF_PARAM)
                ok &= pset_add(&x->params, buf);
            if (rd && buf->role == IR_BUF_CONST)
                ok &= add_const_sources(b->m, &x->params, buf, 0);
            if (rd)
                ok &= pset_add(&x->reads, buf);
            if (wr && buf->role != IR_BUF_PARAM && buf->role != IR_BUF_CONST)
                ok &= pset_add(&x->acts, buf);
            if (!ok)
                b->oom = true;
        }
    }
}

/* The block a fused group's time belongs to: the longest dotted prefix
 * that is a proper block of every member ("" when they share none). */
static char *common_home(const pass_funcinfo *fi)
{
    const char *first = fi->members[0].layer;
    size_t len = strlen(first);
    for (int i = 1; i < fi->nmembers; i++) {
        const char *s = fi->members[i].layer;
        size_t k = 0;
        while (k < len && s[k] == first[k])
            k++;
        len = k;
    }
    for (; len > 0; len--) {
        bool boundary = true;
        for (int i = 0; i < fi->nmembers && boundary; i++)
            boundary = strlen(fi->members[i].layer) > len && fi->members[i].layer[len] == '.';
        if (boundary)
            break;
    }
    return strndup(first, len);
}

static void build_units(builder *b)
{
    const pass_stats *st = b->st;
    for (int c = 0; c < b->m->graph.ncalls && !b->oom; c++) {
        int f = -1;
        for (int k = 0; k < st->nfuncs; k++)
            if (st->funcs[k].fn == b->m->graph.calls[c].fn)
                f = k;
        if (f < 0 || st->funcs[f].first_call != c)
            continue;   /* each function once, at its first call */
        const pass_funcinfo *fi = &st->funcs[f];
        fwork *w = &b->fw[f];
        if (!fi->fused) {
            int r = find_row(b, RT_ROW_LAYER, fi->layer, false);
            if (r < 0) {
                r = add_row(b, RT_ROW_LAYER, fi->layer, fi->op);
                if (r < 0)
                    return;
                b->x[r].leaf = true;
            }
            add_numbers(&b->rows[r], &w->all, w->pad_macs[0], w->pad_flops[0], w->dram_rd[0],
                        w->dram_wr[0]);
            add_func(b, r, f);
            add_buffers(b, r, f, -1);
            b->rows[r].fn = b->x[r].nfuncs == 1 ? fi->fn : NULL;
            continue;
        }
        int g = add_row(b, RT_ROW_GROUP, fi->layer, "fused");
        if (g < 0)
            return;
        b->x[g].home = common_home(fi);
        b->rows[g].fn = fi->fn;
        add_func(b, g, f);
        add_buffers(b, g, f, -1);
        size_t len = 0;
        for (int i = 0; i < fi->nmembers; i++)
            len += strlen(fi->members[i].layer) + 1;
        b->rows[g].members = calloc(len + 1, 1);
        if (!b->rows[g].members || !b->x[g].home) {
            b->oom = true;
            return;
        }
        for (int i = 0; i < fi->nmembers; i++) {
            if (i)
                strcat(b->rows[g].members, ",");
            strcat(b->rows[g].members, fi->members[i].layer);
            int r = add_row(b, RT_ROW_LAYER, fi->members[i].layer,
                            *fi->members[i].op ? fi->members[i].op : fi->op);
            if (r < 0)
                return;
            b->x[r].leaf = true;
            b->x[r].group_row = g;
            b->rows[r].group = strdup(fi->layer);
            add_numbers(&b->rows[r], &w->mem[i], w->pad_macs[i], w->pad_flops[i], w->dram_rd[i],
                        w->dram_wr[i]);
            add_numbers(&b->rows[g], &w->mem[i], w->pad_macs[i], w->pad_flops[i], w->dram_rd[i],
                        w->dram_wr[i]);
            add_buffers(b, r, f, i);
        }
    }
}

/* Adds the numbers and sets of leaf row `from` to row `to`. */
static void merge_into(builder *b, int to, int from)
{
    rt_row *t = &b->rows[to], *s = &b->rows[from];
    pass_totals tot = {.macs = s->macs, .flops = s->flops, .load_bytes = s->load_bytes,
                       .store_bytes = s->store_bytes, .approx = s->approx, .unknown = s->unknown};
    add_numbers(t, &tot, 0, 0, s->dram_read, s->dram_write);
    if (!pset_union(&b->x[to].params, &b->x[from].params) ||
        !pset_union(&b->x[to].acts, &b->x[from].acts) ||
        !pset_union(&b->x[to].reads, &b->x[from].reads))
        b->oom = true;
}

static int ensure_block(builder *b, const char *name)
{
    int r = find_row(b, RT_ROW_BLOCK, name, false);
    if (r < 0)
        r = add_row(b, RT_ROW_BLOCK, name, "");
    return r;
}

/* Whether block `name` is `home` or a block around it. */
static bool encloses(const char *name, const char *home)
{
    size_t n = strlen(name);
    return strncmp(name, home, n) == 0 && (home[n] == 0 || home[n] == '.');
}

/* Block rows: every proper dotted prefix of a layer name; for a member of a
 * fused group, only those around the group's home, where the group sits
 * (a residual add fused into a downsampling branch's kernel has members in
 * layer2.0.downsample and in layer2.0: the group is a row of layer2.0, and
 * no layer2.0.downsample row is left without its rows). */
static void build_blocks(builder *b)
{
    int nunits = b->n;
    for (int i = 0; i < nunits && !b->oom; i++) {
        if (!b->x[i].leaf)
            continue;
        const char *home = b->x[i].group_row >= 0 ? b->x[b->x[i].group_row].home : NULL;
        char *name = strdup(b->rows[i].name);
        if (!name) {
            b->oom = true;
            return;
        }
        for (char *dot = strchr(name, '.'); dot && !b->oom; dot = strchr(dot + 1, '.')) {
            *dot = 0;
            if (home && !encloses(name, home))
                break;
            int r = ensure_block(b, name);
            if (r >= 0) {
                merge_into(b, r, i);
                if (b->x[i].group_row < 0)
                    for (int k = 0; k < b->x[i].nfuncs; k++)
                        add_func(b, r, b->x[i].funcs[k]);
            }
            *dot = '.';
        }
        free(name);
    }
    /* A group's time belongs to the blocks around its home. */
    for (int g = 0; g < nunits && !b->oom; g++) {
        if (b->rows[g].kind != RT_ROW_GROUP || !b->x[g].home[0])
            continue;
        char *home = strdup(b->x[g].home);
        if (!home) {
            b->oom = true;
            return;
        }
        size_t len = strlen(home);
        for (size_t k = 0; k <= len; k++) {
            if (home[k] != '.' && home[k] != 0)
                continue;
            char c = home[k];
            home[k] = 0;
            int r = ensure_block(b, home);
            if (r >= 0)
                add_func(b, r, b->x[g].funcs[0]);
            home[k] = c;
        }
        free(home);
    }
}

static char *shape_of(const builder *b, const ir_buffer *buf)
{
    const char *s = NULL;
    if (buf->role != IR_BUF_LOCAL) {
        s = rt_shapes_find(b->p->shapes, buf->name);
    } else {   /* an alloc: find its function */
        for (int f = 0; f < b->st->nfuncs && !s; f++)
            for (int k = 0; k < b->st->funcs[f].nbufs && !s; k++)
                if (b->st->funcs[f].bufs[k].buf == buf) {
                    char *key = xasprintf("@%s/%s", b->st->funcs[f].fn->name, buf->name);
                    s = key ? rt_shapes_find(b->p->shapes, key) : NULL;
                    free(key);
                }
    }
    if (s)
        return strdup(s);
    char *t = xasprintf("%s[", ir_dtype_name(buf->dtype));
    for (int i = 0; t && i < buf->ndim; i++) {
        char *n = xasprintf("%s%s%lld", t, i ? ", " : "", (long long)buf->shape[i]);
        free(t);
        t = n;
    }
    char *n = t ? xasprintf("%s]", t) : NULL;
    free(t);
    return n;
}

/* Parameters, activations and shapes from a row's buffer sets. */
static void finish_sets(builder *b, int i)
{
    rt_row *r = &b->rows[i];
    rowx *x = &b->x[i];
    for (int k = 0; k < x->params.n; k++) {
        const ir_buffer *buf = x->params.p[k];
        uint64_t n = padded_numel(b, buf);
        if (buf->state)
            r->state = sat_add(r->state, n);
        else
            r->params = sat_add(r->params, n);
        r->param_bytes = sat_add(r->param_bytes, sat_mul(n, (uint64_t)ir_dtype_size(buf->dtype)));
    }
    /* A member of a fused group: its layer's tensors as declared, not the
     * tiles and temporaries of the kernel it shares. */
    const rt_layer_io *io = x->group_row >= 0 ? rt_shapes_layer(b->p->shapes, r->name) : NULL;
    if (io) {
        r->act_bytes = io->output_bytes;
        r->output = io->output ? strdup(io->output) : NULL;
        r->inputs = calloc((size_t)io->ninputs + 1, sizeof *r->inputs);
        for (int k = 0; r->inputs && k < io->ninputs; k++)
            if (!(r->inputs[r->ninputs++] = strdup(io->inputs[k])))
                b->oom = true;
        if (!r->inputs || (io->output && !r->output))
            b->oom = true;
        return;
    }
    char *out = NULL;
    for (int k = 0; k < x->acts.n; k++) {
        const ir_buffer *buf = x->acts.p[k];
        r->act_bytes = sat_add(r->act_bytes, buffer_bytes(b, buf));
        char *s = shape_of(b, buf);
        char *n = s ? (out ? xasprintf("%s, %s", out, s) : strdup(s)) : NULL;
        free(s);
        free(out);
        out = n;
        if (!out)
            b->oom = true;
    }
    r->output = out;
    r->inputs = calloc((size_t)x->reads.n + 1, sizeof *r->inputs);
    if (!r->inputs) {
        b->oom = true;
        return;
    }
    for (int k = 0; k < x->reads.n; k++) {
        const ir_buffer *buf = x->reads.p[k];
        if (buf->role == IR_BUF_PARAM || buf->role == IR_BUF_CONST || pset_has(&x->acts, buf))
            continue;
        if (!(r->inputs[r->ninputs++] = shape_of(b, buf)))
            b->oom = true;
    }
}

/* Median over runs of the summed time of the row's functions. */
static double row_time(const builder *b, const rowx *x)
{
    const rt_profile *p = b->p;
    if (x->nfuncs == 0 || p->nruns == 0)
        return NAN;
    uint64_t *v = calloc((size_t)p->nruns, sizeof *v);
    if (!v)
        return NAN;
    for (int r = 0; r < p->nruns; r++)
        for (int k = 0; k < x->nfuncs; k++)
            v[r] += p->func_ns[(size_t)r * (size_t)p->nfuncs + (size_t)x->funcs[k]];
    double t = rt_median_u64(v, p->nruns) / 1e3;
    free(v);
    return t;
}

static void row_hw(const builder *b, const rowx *x, rt_row *r)
{
    const rt_profile *p = b->p;
    if (!p->hw_ok || x->nfuncs == 0 || p->nruns == 0)
        return;
    uint64_t *v = calloc((size_t)p->nruns, sizeof *v);
    if (!v)
        return;
    for (int h = 0; h < RT_NHW; h++) {
        for (int run = 0; run < p->nruns; run++) {
            v[run] = 0;
            for (int k = 0; k < x->nfuncs; k++)
                v[run] += p->hw[((size_t)run * (size_t)p->nfuncs + (size_t)x->funcs[k]) * RT_NHW + h];
        }
        r->hw[h] = rt_median_u64(v, p->nruns);
    }
    free(v);
}

/* The roof of `threads` threads: the calibration's one-thread and
 * all-threads figures, linear in between (and the all-threads figure
 * beyond). */
static void roof_of(const rt_profile *p, double *peak, double *bw)
{
    int t = p->o.threads > 1 ? p->o.threads : 1, all = p->calib.threads > 1 ? p->calib.threads : 1;
    if (t >= all || all == 1) {
        *peak = p->calib.peak_gflops[all == 1 ? 0 : 1];
        *bw = p->calib.bw_gbs[all == 1 ? 0 : 1];
        return;
    }
    double f = (double)(t - 1) / (double)(all - 1);
    *peak = p->calib.peak_gflops[0] + f * (p->calib.peak_gflops[1] - p->calib.peak_gflops[0]);
    *bw = p->calib.bw_gbs[0] + f * (p->calib.bw_gbs[1] - p->calib.bw_gbs[0]);
}

/* Intensity, attainable and achieved GFLOP/s, bound and % of roof. */
static void roofline(const rt_profile *p, rt_row *r)
{
    uint64_t traffic = sat_add(r->dram_read, r->dram_write);
    r->intensity = traffic ? (double)r->flops / (double)traffic : (r->flops ? INFINITY : NAN);
    if (!isnan(r->time_us) && r->time_us > 0)
        r->gflops = (double)r->flops / (r->time_us * 1e3);
    if (!p->have_calib || isnan(r->intensity) || r->flops == 0)
        return;
    double peak, bw;
    roof_of(p, &peak, &bw);
    double mem_roof = isinf(r->intensity) ? INFINITY : r->intensity * bw;
    r->attainable_gflops = mem_roof < peak ? mem_roof : peak;
    r->bound = mem_roof < peak ? "memory" : "compute";
    if (!isnan(r->gflops))
        r->roof_pct = 100.0 * r->gflops / r->attainable_gflops;
}

static int depth_of(const char *name)
{
    int d = 0;
    for (; *name; name++)
        d += *name == '.';
    return d;
}

/* Emits the blocks around `path` not yet emitted, then nothing else. */
static void emit_blocks(builder *b, const char *path, bool inclusive, int *order, int *n,
                        bool *done)
{
    char *s = strdup(path);
    if (!s) {
        b->oom = true;
        return;
    }
    size_t len = strlen(s);
    for (size_t k = 0; k <= len; k++) {
        if (s[k] != '.' && !(inclusive && s[k] == 0 && len))
            continue;
        char c = s[k];
        s[k] = 0;
        int r = find_row(b, RT_ROW_BLOCK, s, false);
        if (r >= 0 && !done[r]) {
            done[r] = true;
            b->rows[r].depth = depth_of(s);
            order[(*n)++] = r;
        }
        s[k] = c;
    }
    free(s);
}

/* Table order: blocks before their first layer, members after their group. */
static bool order_rows(builder *b)
{
    int *order = calloc((size_t)b->n + 1, sizeof *order);
    bool *done = calloc((size_t)b->n + 1, sizeof *done);
    if (!order || !done) {
        free(order);
        free(done);
        b->oom = true;
        return false;
    }
    int n = 0;
    for (int i = 0; i < b->n; i++) {
        rt_row *r = &b->rows[i];
        if (done[i] || r->kind == RT_ROW_BLOCK || b->x[i].group_row >= 0)
            continue;
        if (r->kind == RT_ROW_GROUP) {
            emit_blocks(b, b->x[i].home, true, order, &n, done);
            r->depth = *b->x[i].home ? depth_of(b->x[i].home) + 1 : 0;
            done[i] = true;
            order[n++] = i;
            for (int k = 0; k < b->n; k++)
                if (b->x[k].group_row == i) {
                    b->rows[k].depth = r->depth + 1;
                    done[k] = true;
                    order[n++] = k;
                }
            continue;
        }
        emit_blocks(b, r->name, false, order, &n, done);
        r->depth = depth_of(r->name);
        done[i] = true;
        order[n++] = i;
    }
    for (int i = 0; i < b->n; i++)   /* anything left (should not happen) */
        if (!done[i])
            order[n++] = i;
    rt_row *rows = malloc(sizeof *rows * (size_t)(b->n + 1));
    rowx *x = malloc(sizeof *x * (size_t)(b->n + 1));
    int *where = malloc(sizeof *where * (size_t)(b->n + 1));
    if (!rows || !x || !where) {
        free(rows);
        free(x);
        free(where);
        free(order);
        free(done);
        b->oom = true;
        return false;
    }
    for (int i = 0; i < n; i++) {
        rows[i] = b->rows[order[i]];
        x[i] = b->x[order[i]];
        where[order[i]] = i;
    }
    for (int i = 0; i < n; i++)
        if (x[i].group_row >= 0)
            x[i].group_row = where[x[i].group_row];
    free(b->rows);
    free(b->x);
    b->rows = rows;
    b->x = x;
    b->cap = b->n + 1;
    free(order);
    free(done);
    free(where);
    return true;
}

void rt_activation_memory(const ir_module *m, rt_act_memory *out)
{
    memset(out, 0, sizeof *out);
    const ir_graph *g = &m->graph;
    out->has_plan = g->has_arena;
    out->arena = g->has_arena && g->arena_bytes > 0 ? (uint64_t)g->arena_bytes : 0;
    out->planned = out->arena;
    for (int i = 0; i < g->nbufs; i++) {
        const ir_buffer *b = g->bufs[i];
        if (b->role != IR_BUF_INPUT && b->role != IR_BUF_TEMP && b->role != IR_BUF_OUTPUT)
            continue;
        int64_t n = ir_buffer_bytes(b);
        uint64_t bytes = n < 0 ? UINT64_MAX : (uint64_t)n;
        out->unplanned = sat_add(out->unplanned, bytes);
        out->temps += b->role == IR_BUF_TEMP;
        if (g->has_arena && b->in_arena)
            out->placed++;
        else
            out->planned = sat_add(out->planned, bytes);
    }
}

static void add_total(builder *b)
{
    const char *name = b->m->name && *b->m->name ? b->m->name : "network";
    int t = add_row(b, RT_ROW_TOTAL, name, "");
    if (t < 0)
        return;
    rt_act_memory am;
    rt_activation_memory(b->m, &am);
    b->rows[t].act_mem = am.planned;
    b->rows[t].act_mem_unplanned = am.unplanned;
    for (int i = 0; i < t; i++)
        if (b->x[i].leaf)
            merge_into(b, t, i);
    for (int f = 0; f < b->st->nfuncs; f++)
        if (b->st->funcs[f].ncalls > 0)
            add_func(b, t, f);
}

bool rt_rows_build(const rt_profile *p, rt_rows *out, diag *d)
{
    out->rows = NULL;
    out->n = 0;
    builder b = {.p = p, .st = p->st, .m = p->m, .d = d,
                 .counts = rt_profile_counts(p)};
    b.fw = calloc((size_t)p->st->nfuncs + 1, sizeof *b.fw);
    b.pad_numel = calloc((size_t)p->m->graph.nbufs + 1, sizeof *b.pad_numel);
    bool ok = b.fw && b.pad_numel;
    for (int f = 0; ok && f < p->st->nfuncs; f++)
        ok = fwork_init(&b, f);
    if (ok && p->o.pad_to > 1)
        apply_padding(&b, (uint64_t)p->o.pad_to);
    ok = ok && dram_model(&b);
    if (ok) {
        build_units(&b);
        build_blocks(&b);
        ok = !b.oom && order_rows(&b);
    }
    if (ok) {
        add_total(&b);
        for (int i = 0; i < b.n && !b.oom; i++) {
            finish_sets(&b, i);
            rt_row *r = &b.rows[i];
            r->time_us = row_time(&b, &b.x[i]);
            if (r->kind == RT_ROW_TOTAL && p->nruns > 0) {   /* the whole graph, measured */
                uint64_t *v = malloc(sizeof *v * (size_t)p->nruns);
                if (v) {
                    memcpy(v, p->run_ns, sizeof *v * (size_t)p->nruns);
                    r->time_us = rt_median_u64(v, p->nruns) / 1e3;
                    free(v);
                }
            }
            row_hw(&b, &b.x[i], r);
            roofline(p, r);
        }
        ok = !b.oom;
    }
    for (int f = 0; b.fw && f < p->st->nfuncs; f++)
        fwork_free(&b.fw[f]);
    free(b.fw);
    free(b.pad_numel);
    for (int i = 0; i < b.n; i++) {
        pset_free(&b.x[i].params);
        pset_free(&b.x[i].acts);
        pset_free(&b.x[i].reads);
        free(b.x[i].funcs);
        free(b.x[i].home);
    }
    free(b.x);
    out->rows = b.rows;
    out->n = b.n;
    if (!ok) {
        if (b.oom)
            diag_error(d, diag_noloc(), "out of memory while building the profile report");
        rt_rows_free(out);
    }
    return ok;
}

void rt_rows_free(rt_rows *r)
{
    for (int i = 0; i < r->n; i++) {
        rt_row *row = &r->rows[i];
        free(row->name);
        free(row->group);
        free(row->members);
        for (int k = 0; k < row->ninputs; k++)
            free(row->inputs[k]);
        free(row->inputs);
        free(row->output);
    }
    free(r->rows);
    r->rows = NULL;
    r->n = 0;
}

/* ---------------------------------------------------------------- the table */

static void fmt_count(char *b, size_t n, uint64_t v)
{
    static const char suffix[] = "KMGTPE";
    if (v < 10000) {
        snprintf(b, n, "%llu", (unsigned long long)v);
        return;
    }
    double x = (double)v;
    int s = -1;
    while (x >= 1000 && s < 5) {
        x /= 1000;
        s++;
    }
    snprintf(b, n, x < 100 ? "%.2f%c" : "%.1f%c", x, suffix[s]);
}

static void fmt_bytes(char *b, size_t n, uint64_t v)
{
    static const char *suffix[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (v < 10240) {
        snprintf(b, n, "%lluB", (unsigned long long)v);
        return;
    }
    double x = (double)v;
    int s = -1;
    while (x >= 1024 && s < 5) {
        x /= 1024;
        s++;
    }
    snprintf(b, n, x < 100 ? "%.2f%s" : "%.1f%s", x, suffix[s]);
}

static void fmt_double(char *b, size_t n, double v, const char *fmt)
{
    if (isnan(v))
        snprintf(b, n, "-");
    else if (isinf(v))
        snprintf(b, n, "inf");
    else
        snprintf(b, n, fmt, v);
}

/* Shapes without spaces: "f32[1,3,8,8]". */
static void compact(char *dst, size_t n, const char *src)
{
    size_t k = 0;
    for (; src && *src && k + 1 < n; src++)
        if (*src != ' ')
            dst[k++] = *src;
    dst[k] = 0;
}

enum { NCOLS_BASE = 19, MAXCOLS = NCOLS_BASE + RT_NHW, CELL = 96 };
enum { COL_LAYER, COL_OP, COL_INPUT, COL_OUTPUT, COL_MACS, COL_FLOPS, COL_PARAMS, COL_PARAM_MEM,
       COL_ACT_MEM, COL_LOADS, COL_STORES, COL_DRAM_RD, COL_DRAM_WR, COL_TIME, COL_TIME_PCT,
       COL_GFLOPS, COL_INTENSITY, COL_ROOF_PCT, COL_BOUND, COL_HW };

/* The table's columns: title, and the name --columns= gives them. */
static const char *const col_title[MAXCOLS] = {
    "layer", "op", "input", "output", "MACs", "FLOPs", "params", "param mem", "act mem",
    "loads", "stores", "DRAM rd", "DRAM wr", "time(us)", "time%", "GFLOP/s", "FLOP/B", "roof%",
    "bound", "cycles", "instrs", "LLC miss",
};
static const char *const col_key[MAXCOLS] = {
    "layer", "op", "input", "output", "macs", "flops", "params", "param-mem", "act-mem",
    "loads", "stores", "dram-rd", "dram-wr", "time", "time%", "gflops", "intensity", "roof%",
    "bound", "cycles", "instrs", "llc-miss",
};

/* The default view: what matters most, in at most RT_TABLE_WIDTH columns
 * (a run's time and roofline; without a run, the static counts). */
static const int default_run_cols[] = {COL_LAYER, COL_OP, COL_OUTPUT, COL_MACS, COL_TIME,
                                       COL_TIME_PCT, COL_GFLOPS, COL_ROOF_PCT, COL_BOUND};
static const int default_static_cols[] = {COL_LAYER, COL_OP, COL_OUTPUT, COL_MACS, COL_FLOPS,
                                          COL_PARAMS, COL_ACT_MEM, COL_INTENSITY};

/* Parses a --columns= list into cols (at most MAXCOLS); "all" is every
 * column.  Returns the count, or -1 with the unknown name in err. */
static int parse_columns(const char *list, int *cols, char *err, size_t nerr)
{
    int n = 0;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 3 && strncmp(p, "all", 3) == 0) {
            for (int c = 0; c < MAXCOLS && n < MAXCOLS; c++)
                cols[n++] = c;
        } else {
            int found = -1;
            for (int c = 0; c < MAXCOLS; c++)
                if (strlen(col_key[c]) == len && strncmp(p, col_key[c], len) == 0)
                    found = c;
            if (found < 0) {
                snprintf(err, nerr, "--columns: unknown column '%.*s' (use all or a list of",
                         (int)len, p);
                for (int c = 0; c < MAXCOLS; c++)
                    snprintf(err + strlen(err), nerr - strlen(err), " %s", col_key[c]);
                snprintf(err + strlen(err), nerr - strlen(err), ")");
                return -1;
            }
            if (n < MAXCOLS)
                cols[n++] = found;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    if (n == 0)
        snprintf(err, nerr, "--columns: the list names no column");
    return n ? n : -1;
}

bool rt_report_check_columns(const char *list, char *err, size_t nerr)
{
    int cols[MAXCOLS];
    return parse_columns(list, cols, err, nerr) > 0;
}

static void row_cells(const rt_profile *p, const rt_row *r, double total_us, char cells[][CELL])
{
    char name[CELL];
    snprintf(name, sizeof name, "%*s%s%s", r->depth * 2, "", r->name,
             r->approx ? " ~" : r->unknown ? " ?" : "");
    snprintf(cells[COL_LAYER], CELL, "%s", name);
    snprintf(cells[COL_OP], CELL, "%s", r->kind == RT_ROW_BLOCK ? "" : r->op ? r->op : "");
    char in[CELL] = "";
    for (int i = 0; i < r->ninputs; i++) {   /* as many as fit the cell */
        char c[CELL];
        compact(c, sizeof c, r->inputs[i]);
        size_t len = strlen(in), add = strlen(c) + (i ? 1 : 0);
        if (len + add + 1 > sizeof in)
            break;
        if (i)
            in[len++] = ' ';
        memcpy(in + len, c, strlen(c) + 1);
    }
    bool layerish = r->kind == RT_ROW_LAYER || r->kind == RT_ROW_GROUP;
    snprintf(cells[COL_INPUT], CELL, "%s", layerish ? in : "");
    if (layerish)
        compact(cells[COL_OUTPUT], CELL, r->output);
    else
        cells[COL_OUTPUT][0] = 0;
    fmt_count(cells[COL_MACS], CELL, r->macs);
    fmt_count(cells[COL_FLOPS], CELL, r->flops);
    fmt_count(cells[COL_PARAMS], CELL, r->params);
    fmt_bytes(cells[COL_PARAM_MEM], CELL, r->param_bytes);
    fmt_bytes(cells[COL_ACT_MEM], CELL, r->act_bytes);
    fmt_bytes(cells[COL_LOADS], CELL, r->load_bytes);
    fmt_bytes(cells[COL_STORES], CELL, r->store_bytes);
    fmt_bytes(cells[COL_DRAM_RD], CELL, r->dram_read);
    fmt_bytes(cells[COL_DRAM_WR], CELL, r->dram_write);
    fmt_double(cells[COL_TIME], CELL, r->time_us, "%.1f");
    fmt_double(cells[COL_TIME_PCT], CELL, total_us > 0 ? 100.0 * r->time_us / total_us : NAN,
               "%.1f");
    fmt_double(cells[COL_GFLOPS], CELL, r->gflops, "%.2f");
    fmt_double(cells[COL_INTENSITY], CELL, r->intensity, "%.2f");
    /* above its roof: the calibration is too low (doc/profile.md) */
    fmt_double(cells[COL_ROOF_PCT], CELL, r->bound ? r->roof_pct : NAN,
               r->roof_pct > 100 ? "%.0f!" : "%.0f");
    snprintf(cells[COL_BOUND], CELL, "%s", r->bound ? r->bound : "-");
    for (int h = 0; h < RT_NHW; h++) {
        if (isnan(r->hw[h]))
            snprintf(cells[COL_HW + h], CELL, "-");
        else
            fmt_count(cells[COL_HW + h], CELL, (uint64_t)r->hw[h]);
    }
    (void)p;
}

/* The row's extra cells (empty where the row times no single function). */
static void extra_cells(const rt_report_options *o, const rt_row *r, char cells[][CELL])
{
    char x[RT_MAX_EXTRA][RT_EXTRA_CELL];
    bool any = r->fn || r->kind == RT_ROW_TOTAL;
    for (int k = 0; k < o->nextra; k++)
        x[k][0] = 0;
    if (any)
        o->extra_cells(o->extra_ctx, r->kind == RT_ROW_TOTAL ? NULL : r->fn, x);
    for (int k = 0; k < o->nextra; k++)
        snprintf(cells[k], CELL, "%.*s", RT_EXTRA_CELL - 1, x[k]);
}

/* The network's time: its total row's. */
static double total_time(const rt_rows *rows)
{
    for (int i = 0; i < rows->n; i++)
        if (rows->rows[i].kind == RT_ROW_TOTAL)
            return rows->rows[i].time_us;
    return NAN;
}

/* The columns the table shows: --columns=, else the default view (with
 * the hardware counters when they were asked for and read). */
static int table_columns(const rt_report_options *o, const rt_profile *p, int *cols)
{
    char err[1024];
    int n = o->columns ? parse_columns(o->columns, cols, err, sizeof err) : -1;
    if (n > 0)
        return n;
    const int *def = p->nruns ? default_run_cols : default_static_cols;
    n = p->nruns ? (int)(sizeof default_run_cols / sizeof *def)
                 : (int)(sizeof default_static_cols / sizeof *def);
    memcpy(cols, def, sizeof *cols * (size_t)n);
    for (int h = 0; p->hw_ok && h < RT_NHW; h++)
        cols[n++] = COL_HW + h;
    return n;
}

/* The default view in RT_TABLE_WIDTH columns: without the output shapes if
 * need be, then with the layer and op names cut ("..") to fit. */
static int fit_width(int *cols, int n, int *width, int nextra, const int *xwidth)
{
    int total = 0;
    for (int c = 0; c < n; c++)
        total += width[c] + 2;
    for (int k = 0; k < nextra; k++)
        total += xwidth[k] + 2;
    total -= 2;
    for (int c = 0; c < n && total > RT_TABLE_WIDTH; c++)
        if (cols[c] == COL_OUTPUT) {
            total -= width[c] + 2;
            memmove(cols + c, cols + c + 1, sizeof *cols * (size_t)(n - c - 1));
            memmove(width + c, width + c + 1, sizeof *width * (size_t)(n - c - 1));
            n--;
        }
    for (int c = 0; c < n && total > RT_TABLE_WIDTH; c++)
        if (cols[c] == COL_LAYER || cols[c] == COL_OP) {
            int floor = cols[c] == COL_LAYER ? 16 : 8;
            int cut = total - RT_TABLE_WIDTH;
            if (width[c] - cut < floor)
                cut = width[c] > floor ? width[c] - floor : 0;
            width[c] -= cut;
            total -= cut;
        }
    return n;
}

/* A cell in w characters: cut to w-2 and "..". */
static void put_cell(FILE *out, const char *s, int w, bool left, bool last)
{
    int len = (int)strlen(s);
    if (len > w && w > 2)
        fprintf(out, "%.*s..", w - 2, s);
    else
        fprintf(out, left ? "%-*s" : "%*s", w, s);
    fputs(last ? "\n" : "  ", out);
}

static void print_table(const rt_report_options *o, const rt_profile *p, const rt_rows *rows)
{
    FILE *out = o->table;
    int nextra = o->extra_cells ? o->nextra : 0;
    if (nextra > RT_MAX_EXTRA)
        nextra = RT_MAX_EXTRA;
    int cols[2 * MAXCOLS], width[2 * MAXCOLS], xwidth[RT_MAX_EXTRA];
    int n = table_columns(o, p, cols);
    char (*cells)[MAXCOLS + RT_MAX_EXTRA][CELL] = calloc((size_t)rows->n + 1, sizeof *cells);
    if (!cells)
        return;
    double total_us = total_time(rows);
    for (int c = 0; c < n; c++)
        width[c] = (int)strlen(col_title[cols[c]]);
    for (int k = 0; k < nextra; k++)
        xwidth[k] = (int)strlen(o->extra_titles[k]);
    for (int i = 0; i < rows->n; i++) {
        row_cells(p, &rows->rows[i], total_us, cells[i]);
        if (nextra)
            extra_cells(o, &rows->rows[i], cells[i] + MAXCOLS);
        for (int c = 0; c < n; c++)
            if ((int)strlen(cells[i][cols[c]]) > width[c])
                width[c] = (int)strlen(cells[i][cols[c]]);
        for (int k = 0; k < nextra; k++)
            if ((int)strlen(cells[i][MAXCOLS + k]) > xwidth[k])
                xwidth[k] = (int)strlen(cells[i][MAXCOLS + k]);
    }
    if (!o->columns)
        n = fit_width(cols, n, width, nextra, xwidth);
    int total = -2;
    for (int c = 0; c < n; c++)
        total += width[c] + 2;
    for (int k = 0; k < nextra; k++)
        total += xwidth[k] + 2;
    for (int c = 0; c < n; c++)
        put_cell(out, col_title[cols[c]], width[c], cols[c] < COL_MACS, c + 1 == n && !nextra);
    for (int k = 0; k < nextra; k++)
        put_cell(out, o->extra_titles[k], xwidth[k], false, k + 1 == nextra);
    for (int i = 0; i < rows->n; i++) {
        if (rows->rows[i].kind == RT_ROW_TOTAL) {
            for (int k = 0; k < total; k++)
                fputc('-', out);
            fputc('\n', out);
        }
        for (int c = 0; c < n; c++)
            put_cell(out, cells[i][cols[c]], width[c], cols[c] < COL_MACS,
                     c + 1 == n && !nextra);
        for (int k = 0; k < nextra; k++)
            put_cell(out, cells[i][MAXCOLS + k], xwidth[k], false, k + 1 == nextra);
    }
    free(cells);
}

/* The slowest layers (rows that time one function), with their share. */
static void print_slowest(FILE *out, const rt_rows *rows)
{
    enum { TOP = 5 };
    int top[TOP], ntop = 0;
    for (int i = 0; i < rows->n; i++) {
        const rt_row *r = &rows->rows[i];
        if (!r->fn || isnan(r->time_us))
            continue;
        int k = ntop < TOP ? ntop++ : TOP;
        while (k > 0 && rows->rows[top[k - 1]].time_us < r->time_us) {
            if (k < TOP)
                top[k] = top[k - 1];
            k--;
        }
        if (k < TOP)
            top[k] = i;
    }
    double total_us = total_time(rows);
    if (!ntop || !(total_us > 0))
        return;
    /* one layer a line, so the footer fits the table's 120 columns */
    for (int k = 0; k < ntop; k++) {
        const rt_row *r = &rows->rows[top[k]];
        fprintf(out, "%-16s%s %.1f us (%.1f%%)\n", k ? "" : "slowest layers:", r->name,
                r->time_us, 100.0 * r->time_us / total_us);
    }
}

static void print_notes(FILE *out, const rt_profile *p, const rt_rows *rows)
{
    rt_act_memory am;
    rt_activation_memory(p->m, &am);
    char planned[32], unplanned[32], arena[32];
    fmt_bytes(planned, sizeof planned, am.planned);
    fmt_bytes(unplanned, sizeof unplanned, am.unplanned);
    fmt_bytes(arena, sizeof arena, am.arena);
    if (am.has_plan)
        fprintf(out, "activations: %s planned (%s unplanned); "
                "%d of %d temporaries share a %s arena (memplan)\n", planned, unplanned,
                am.placed, am.temps, arena);
    else
        fprintf(out, "activations: %s planned (%s unplanned); no memory plan (memplan, at "
                "-O2 and -O3, shares temporaries' storage)\n", planned, unplanned);
    uint64_t const_bytes = 0;
    int nconst = 0;
    for (int i = 0; i < p->m->graph.nbufs; i++)
        if (p->m->graph.bufs[i]->role == IR_BUF_CONST) {
            int64_t n = ir_buffer_bytes(p->m->graph.bufs[i]);
            const_bytes = sat_add(const_bytes, n < 0 ? UINT64_MAX : (uint64_t)n);
            nconst++;
        }
    if (nconst) {
        char cb[32];
        fmt_bytes(cb, sizeof cb, const_bytes);
        fprintf(out, "made at load: %s in %d const%s from the weights (packed panels, folded "
                "batchnorm: prepack), besides the parameters\n", cb, nconst, nconst == 1 ? "" : "s");
    }
    if (p->nruns)
        fprintf(out, "time: median of %d run%s after a warm-up run; ", p->nruns,
                p->nruns == 1 ? "" : "s");
    else
        fprintf(out, "not run (--no-run): static counts, no times; ");
    fprintf(out, "FLOPs count a multiply-add as 2\nDRAM: cache model with a %.1f MiB "
            "last-level cache (doc/profile.md)\n", (double)p->llc_bytes / (1 << 20));
    bool approx = false, unknown = false, groups = false;
    for (int i = 0; i < rows->n; i++) {
        approx |= rows->rows[i].approx;
        unknown |= rows->rows[i].unknown;
        groups |= rows->rows[i].kind == RT_ROW_GROUP;
    }
    if (groups)
        fprintf(out, "fused groups: time is measured for the group; its layers' MACs and bytes "
                "are attributed to each member\n");
    if (approx)
        fprintf(out, "~ marks upper bounds: loads or FLOPs under a select whose condition reads "
                "memory are counted as always executed\n");
    if (unknown)
        fprintf(out, "? marks incomplete counts: a data-dependent count had no counter (was the "
                "instrument pass run?)\n");
    if (p->o.pad_to > 1)
        fprintf(out, "--pad-to %d: MACs, FLOPs, parameter and activation memory of GEMM-like "
                "layers are those of M, N, K padded to multiples of %d, and the DRAM model uses "
                "the padded tensor sizes; time, loads and stores are for the unpadded program\n",
                p->o.pad_to, p->o.pad_to);
    if (p->have_calib) {
        double peak, bw;
        roof_of(p, &peak, &bw);
        int t = p->o.threads > 1 ? p->o.threads : 1;
        fprintf(out, "roofline: %.1f GFLOP/s peak, %.1f GB/s (%d thread%s, %s; tec --calibrate)\n",
                peak, bw, t, t == 1 ? "" : "s", p->calib.cpu);
    }
    else
        fprintf(out, "roofline: this machine is not calibrated; run 'tec --calibrate' once to "
                "get bound and %% of roof\n");
    bool above_peak = false, above_bw = false;   /* compute-, memory-bound above the roof */
    for (int i = 0; i < rows->n; i++)
        if (rows->rows[i].bound && rows->rows[i].roof_pct > 100) {
            above_peak |= strcmp(rows->rows[i].bound, "compute") == 0;
            above_bw |= strcmp(rows->rows[i].bound, "memory") == 0;
        }
    if (above_peak || above_bw)
        fprintf(out, "! marks layers above their roof: %s%s%s\n",
                above_peak ? "the calibration is lower than what this machine reaches "
                             "(measured under load?): run 'tec --calibrate' on an idle machine"
                           : "",
                above_peak && above_bw ? "; " : "",
                above_bw ? "a memory-bound layer whose data stayed in cache from the run before "
                           "(the DRAM model starts each run cold) runs above the bandwidth "
                           "roof"
                         : "");
    if (p->o.counters && !p->hw_ok)
        fprintf(out, "%s\n", p->hw_note);
}

/* ---------------------------------------------------------------- CSV */

static void csv_field(FILE *f, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_double(FILE *f, double v)
{
    if (!isnan(v) && !isinf(v))
        fprintf(f, "%.6g", v);
    else if (isinf(v))
        fputs("inf", f);
}

static const char *kind_name(rt_row_kind k)
{
    switch (k) {
    case RT_ROW_LAYER: return "layer";
    case RT_ROW_GROUP: return "group";
    case RT_ROW_BLOCK: return "block";
    default: return "total";
    }
}

/* The row's numbers in report order, named as in the CSV header and the
 * JSON keys (one table for both writers). */
typedef struct report_col {
    const char *key;
    size_t offset;         /* of a uint64_t (count_cols) or a double (rate_cols) in rt_row */
} report_col;

static const report_col count_cols[] = {
    {"macs", offsetof(rt_row, macs)},
    {"flops", offsetof(rt_row, flops)},
    {"params", offsetof(rt_row, params)},
    {"state", offsetof(rt_row, state)},
    {"param_bytes", offsetof(rt_row, param_bytes)},
    {"activation_bytes", offsetof(rt_row, act_bytes)},
    {"load_bytes", offsetof(rt_row, load_bytes)},
    {"store_bytes", offsetof(rt_row, store_bytes)},
    {"dram_read_bytes", offsetof(rt_row, dram_read)},
    {"dram_write_bytes", offsetof(rt_row, dram_write)},
};
static const report_col rate_cols[] = {
    {"time_us", offsetof(rt_row, time_us)},
    {"gflops", offsetof(rt_row, gflops)},
    {"intensity", offsetof(rt_row, intensity)},
    {"attainable_gflops", offsetof(rt_row, attainable_gflops)},
};
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

static unsigned long long count_of_col(const rt_row *r, size_t k)
{
    return *(const uint64_t *)((const char *)r + count_cols[k].offset);
}

static double rate_of_col(const rt_row *r, size_t k)
{
    return *(const double *)((const char *)r + rate_cols[k].offset);
}

static void write_csv(FILE *f, const rt_profile *p, const rt_rows *rows)
{
    fputs("kind,name,op,group,input_shapes,output_shape", f);
    for (size_t k = 0; k < NELEMS(count_cols); k++)
        fprintf(f, ",%s", count_cols[k].key);
    for (size_t k = 0; k < NELEMS(rate_cols); k++)
        fprintf(f, ",%s", rate_cols[k].key);
    fputs(",bound,roof_pct,approx,activation_memory_bytes,activation_memory_unplanned_bytes", f);
    if (p->hw_ok)
        fputs(",cycles,instructions,llc_misses", f);
    fputc('\n', f);
    for (int i = 0; i < rows->n; i++) {
        const rt_row *r = &rows->rows[i];
        fprintf(f, "%s,", kind_name(r->kind));
        csv_field(f, r->name);
        fputc(',', f);
        csv_field(f, r->op);
        fputc(',', f);
        csv_field(f, r->group ? r->group : r->members);
        fputc(',', f);
        char *in = NULL;
        bool layerish = r->kind == RT_ROW_LAYER || r->kind == RT_ROW_GROUP;
        for (int k = 0; layerish && k < r->ninputs; k++) {
            char *n = in ? xasprintf("%s; %s", in, r->inputs[k]) : strdup(r->inputs[k]);
            free(in);
            in = n;
        }
        csv_field(f, in);
        free(in);
        fputc(',', f);
        csv_field(f, layerish ? r->output : NULL);
        for (size_t k = 0; k < NELEMS(count_cols); k++)
            fprintf(f, ",%llu", count_of_col(r, k));
        for (size_t k = 0; k < NELEMS(rate_cols); k++) {
            fputc(',', f);
            csv_double(f, rate_of_col(r, k));
        }
        fputc(',', f);
        csv_field(f, r->bound);
        fputc(',', f);
        csv_double(f, r->roof_pct);
        fprintf(f, ",%d", r->approx);
        if (r->kind == RT_ROW_TOTAL)
            fprintf(f, ",%llu,%llu", (unsigned long long)r->act_mem,
                    (unsigned long long)r->act_mem_unplanned);
        else
            fputs(",,", f);
        for (int h = 0; p->hw_ok && h < RT_NHW; h++) {
            fputc(',', f);
            csv_double(f, r->hw[h]);
        }
        fputc('\n', f);
    }
}

/* ---------------------------------------------------------------- JSON */

void rt_json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (isnan(v) || isinf(v))
        fputs("null", f);
    else
        fprintf(f, "%.6g", v);
}

static void json_row(FILE *f, const rt_profile *p, const rt_row *r, const char *indent)
{
    fprintf(f, "%s{\"name\": ", indent);
    rt_json_str(f, r->name);
    fputs(", \"op\": ", f);
    rt_json_str(f, r->kind == RT_ROW_BLOCK ? NULL : r->op);
    if (r->kind == RT_ROW_LAYER) {
        fputs(", \"group\": ", f);
        rt_json_str(f, r->group);
    }
    if (r->kind == RT_ROW_GROUP) {
        fputs(", \"members\": [", f);
        char *m = r->members ? strdup(r->members) : NULL;
        int k = 0;
        for (char *s = m ? strtok(m, ",") : NULL; s; s = strtok(NULL, ","), k++) {
            fputs(k ? ", " : "", f);
            rt_json_str(f, s);
        }
        free(m);
        fputc(']', f);
    }
    if (r->kind == RT_ROW_LAYER || r->kind == RT_ROW_GROUP) {
        fputs(", \"input_shapes\": [", f);
        for (int k = 0; k < r->ninputs; k++) {
            fputs(k ? ", " : "", f);
            rt_json_str(f, r->inputs[k]);
        }
        fputs("], \"output_shape\": ", f);
        rt_json_str(f, r->output);
    }
    for (size_t k = 0; k < NELEMS(count_cols); k++)
        fprintf(f, ", \"%s\": %llu", count_cols[k].key, count_of_col(r, k));
    for (size_t k = 0; k < NELEMS(rate_cols); k++) {
        fprintf(f, ", \"%s\": ", rate_cols[k].key);
        json_num(f, rate_of_col(r, k));
    }
    fputs(", \"bound\": ", f);
    rt_json_str(f, r->bound);
    fputs(", \"roof_pct\": ", f);
    json_num(f, r->roof_pct);
    fprintf(f, ", \"approx\": %s", r->approx ? "true" : "false");
    if (r->kind == RT_ROW_TOTAL)
        fprintf(f, ", \"activation_memory_bytes\": %llu, \"activation_memory_unplanned_bytes\": %llu",
                (unsigned long long)r->act_mem, (unsigned long long)r->act_mem_unplanned);
    if (p->hw_ok) {
        fputs(", \"counters\": {\"cycles\": ", f);
        json_num(f, r->hw[RT_HW_CYCLES]);
        fputs(", \"instructions\": ", f);
        json_num(f, r->hw[RT_HW_INSTRUCTIONS]);
        fputs(", \"llc_misses\": ", f);
        json_num(f, r->hw[RT_HW_LLC_MISSES]);
        fputc('}', f);
    }
    fputc('}', f);
}

static void json_list(FILE *f, const rt_profile *p, const rt_rows *rows, const char *key,
                      bool (*want)(const rt_row *), bool last)
{
    fprintf(f, "  \"%s\": [", key);
    int k = 0;
    for (int i = 0; i < rows->n; i++) {
        if (!want(&rows->rows[i]))
            continue;
        fputs(k++ ? ",\n" : "\n", f);
        json_row(f, p, &rows->rows[i], "    ");
    }
    fprintf(f, "%s]%s\n", k ? "\n  " : "", last ? "" : ",");
}

static bool is_layer(const rt_row *r) { return r->kind == RT_ROW_LAYER; }
static bool is_group(const rt_row *r) { return r->kind == RT_ROW_GROUP; }
static bool is_block(const rt_row *r) { return r->kind == RT_ROW_BLOCK; }

const uint64_t *rt_profile_counts(const rt_profile *p)
{
    return p->nruns > 0 ? p->run_counts : NULL;
}

/* The accelerator model's layers, from the counts the report uses, so that
 * `tec --accel CFG --from-report` models this run without the program; or
 * why there are none (a count that depends on the data, without a run). */
static void json_accel_workload(FILE *f, const rt_profile *p)
{
    char *msg = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&msg, &len);
    diag q;
    diag_init(&q, mem ? mem : stderr);
    acc_workload w;
    bool ok = acc_workload_from_analysis(p->st, rt_profile_counts(p), &w, &q);
    diag_fini(&q);
    if (mem)
        fclose(mem);
    if (ok) {
        acc_write_workload_json(f, w.layers, w.nlayers, rt_profile_counts(p) != NULL);
        acc_workload_free(&w);
    } else {
        /* the message, without its location and source excerpt */
        const char *why = msg ? strstr(msg, "error: ") : NULL;
        if (why) {
            why += strlen("error: ");
            msg[strcspn(msg, "\n")] = '\0';
        }
        acc_write_workload_error_json(f, why && *why ? why : "the accelerator workload could "
                                      "not be derived");
    }
    free(msg);
}

static void write_json(FILE *f, const rt_profile *p, const rt_rows *rows)
{
    const rt_row *t = &rows->rows[rows->n - 1];
    fputs("{\n  \"network\": ", f);
    rt_json_str(f, t->name);
    fprintf(f, ",\n  \"runs\": %d,\n  \"pad_to\": %d,\n  \"machine\": {\"calibrated\": %s, "
            "\"cpu\": ", p->nruns, p->o.pad_to, p->have_calib ? "true" : "false");
    rt_json_str(f, p->have_calib ? p->calib.cpu : NULL);
    double peak = NAN, bw = NAN;
    if (p->have_calib)
        roof_of(p, &peak, &bw);
    fprintf(f, ", \"threads\": %d", p->o.threads > 1 ? p->o.threads : 1);
    fputs(", \"peak_gflops\": ", f);
    json_num(f, peak);
    fputs(", \"bandwidth_gbs\": ", f);
    json_num(f, bw);
    fprintf(f, ", \"llc_bytes\": %llu, \"counters\": ", (unsigned long long)p->llc_bytes);
    rt_json_str(f, p->hw_ok ? "perf_event" : p->o.counters ? p->hw_note : NULL);
    fputs("},\n  \"totals\": ", f);
    json_row(f, p, t, "");
    fputs(",\n", f);
    json_list(f, p, rows, "layers", is_layer, false);
    json_list(f, p, rows, "groups", is_group, false);
    json_list(f, p, rows, "blocks", is_block, false);
    fputs("  \"accel_workload\": ", f);
    json_accel_workload(f, p);
    fputs("\n}\n", f);
}

/* ---------------------------------------------------------------- trace */

static void write_trace(FILE *f, const rt_profile *p)
{
    const char *net = p->m->name && *p->m->name ? p->m->name : "network";
    fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", f);
    fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": "
          "{\"name\": ", f);
    char *title = xasprintf("tec %s", net);
    rt_json_str(f, title ? title : "tec");
    free(title);
    fputs("}},\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": "
          "{\"name\": \"layers\"}}", f);
    uint64_t n = p->nevents < p->capevents ? p->nevents : p->capevents;
    for (uint64_t i = 0; i < n; i++) {
        const rt_trace_event *e = &p->events[i];
        const pass_funcinfo *fi = &p->st->funcs[e->func];
        fputs(",\n{\"name\": ", f);
        rt_json_str(f, fi->layer);
        fputs(", \"cat\": ", f);
        rt_json_str(f, fi->fused ? "fused" : *fi->op ? fi->op : "layer");
        fprintf(f, ", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": %.3f, \"dur\": %.3f, "
                "\"args\": {\"function\": ", (double)e->start_ns / 1e3, (double)e->dur_ns / 1e3);
        rt_json_str(f, fi->fn->name);
        fprintf(f, ", \"run\": %d", e->run + 1);
        if (fi->fused) {
            fputs(", \"members\": ", f);
            rt_json_str(f, ir_func_attr(fi->fn, "members"));
        }
        fputs("}}", f);
    }
    fputs("\n]}\n", f);
}

/* ---------------------------------------------------------------- files */

typedef void (*writer_fn)(FILE *f, const rt_profile *p, const rt_rows *rows);

static void trace_writer(FILE *f, const rt_profile *p, const rt_rows *rows)
{
    (void)rows;
    write_trace(f, p);
}

static bool write_file(const char *path, writer_fn fn, const rt_profile *p, const rt_rows *rows,
                       diag *d)
{
    char *tmp;
    FILE *f = rt_file_create(path, &tmp);   /* never a half-written report */
    if (f) {
        fn(f, p, rows);
        if (rt_file_commit(f, tmp, path))
            return true;
    }
    diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
    return false;
}

bool rt_profile_report(const rt_profile *p, const rt_report_options *o, diag *d)
{
    rt_rows rows;
    if (!rt_rows_build(p, &rows, d))
        return false;
    bool ok = true;
    if (o->table) {
        print_table(o, p, &rows);
        print_slowest(o->table, &rows);
        print_notes(o->table, p, &rows);
    }
    if (o->csv)
        ok &= write_file(o->csv, write_csv, p, &rows, d);
    if (o->json)
        ok &= write_file(o->json, write_json, p, &rows, d);
    if (o->trace)
        ok &= write_file(o->trace, trace_writer, p, &rows, d);
    if (o->plot_dir)
        ok &= rt_plot(p, &rows, o->plot_dir, d);
    rt_rows_free(&rows);
    return ok;
}
