/* accel/model.c — the closed-form systolic-array model: folds, cycles, SRAM
 * and DRAM accesses per operand from a tiling, stalls, energy, and the
 * tiling search.  doc/accel.md derives every formula used here; the comments
 * name the equation they implement. */
#include "accel/accel.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- names */

static const char *const df_names[ACC_NDATAFLOWS] = {"os", "ws", "is"};
static const char *const op_names[ACC_NOPERANDS] = {"ifmap", "filter", "ofmap"};
static const char *const order_names[ACC_NORDERS] = {"mnk", "mkn", "nmk",
                                                     "nkm", "kmn", "knm"};
static const char *const search_names[] = {"none", "dram", "edp"};

const char *acc_dataflow_name(acc_dataflow d)
{
    return (unsigned)d < ACC_NDATAFLOWS ? df_names[d] : "?";
}

bool acc_dataflow_parse(const char *s, acc_dataflow *out)
{
    for (int i = 0; i < ACC_NDATAFLOWS; i++)
        if (strcasecmp(s, df_names[i]) == 0) {
            *out = (acc_dataflow)i;
            return true;
        }
    return false;
}

const char *acc_operand_name(acc_operand o)
{
    return (unsigned)o < ACC_NOPERANDS ? op_names[o] : "?";
}

const char *acc_order_name(acc_loop_order o)
{
    return (unsigned)o < ACC_NORDERS ? order_names[o] : "?";
}

bool acc_order_parse(const char *s, acc_loop_order *out)
{
    for (int i = 0; i < ACC_NORDERS; i++)
        if (strcasecmp(s, order_names[i]) == 0) {
            *out = (acc_loop_order)i;
            return true;
        }
    return false;
}

const char *acc_search_name(acc_search s)
{
    return (unsigned)s <= ACC_SEARCH_EDP ? search_names[s] : "?";
}

bool acc_search_parse(const char *s, acc_search *out)
{
    for (int i = 0; i <= ACC_SEARCH_EDP; i++)
        if (strcasecmp(s, search_names[i]) == 0) {
            *out = (acc_search)i;
            return true;
        }
    return false;
}

void acc_layers_free(acc_layer *layers, int n)
{
    if (!layers)
        return;
    for (int i = 0; i < n; i++)
        free(layers[i].name);
    free(layers);
}

static int64_t sum3(const int64_t v[ACC_NOPERANDS])
{
    return v[0] + v[1] + v[2];
}

int64_t acc_result_sram_reads(const acc_result *r) { return sum3(r->sram_reads); }
int64_t acc_result_sram_writes(const acc_result *r) { return sum3(r->sram_writes); }
int64_t acc_result_dram_reads(const acc_result *r) { return sum3(r->dram_reads); }
int64_t acc_result_dram_writes(const acc_result *r) { return sum3(r->dram_writes); }

/* ---------------------------------------------------------------- checked integers */

/* Products of layer dimensions can pass 2^63 for absurd inputs: every
 * operation goes through these, which raise a flag instead of wrapping. */
typedef struct ovf {
    bool hit;
} ovf;

static inline int64_t mul(ovf *o, int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        o->hit = true;
        return 0;
    }
    return r;
}

static inline int64_t add(ovf *o, int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        o->hit = true;
        return 0;
    }
    return r;
}

/* ceil(a / b) for a >= 0, b > 0 */
static inline int64_t cdiv(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

static inline int64_t round_up(int64_t a, int64_t g)
{
    return cdiv(a, g) * g;
}

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Cycles to move `words` over an interface of `bw` words per cycle. */
static int64_t xfer_cycles(int64_t words, double bw)
{
    if (words <= 0)
        return 0;
    return (int64_t)ceil((double)words / bw);
}

static bool fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(char *err, size_t errlen, const char *fmt, ...)
{
    int k = snprintf(err, errlen, "tec: error: accelerator model: ");
    if (k >= 0 && (size_t)k < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* ---------------------------------------------------------------- one tile-GEMM on the array */

/* A GEMM layer as the model sees it. */
typedef struct gemm {
    int64_t M, N, K, batch;   /* padded */
    int64_t macs, pad_macs;   /* useful; extra from padding (whole layer) */
    /* Distinct ifmap words per batch element: M*K for a plain GEMM; for a
     * convolution the im2col matrix repeats pixels, and SRAM holds each
     * pixel once: min(H*W*C/groups, M*K) (equation (7)). */
    int64_t ifmap_unique;
    /* A convolution's sliding window: the ifmap words of the input rows
     * that the windows of one fold of pixels span (OS: R pixels, IS: C),
     * 0 for a plain GEMM.  When two such bands fit in half the ifmap
     * buffer, a sweep over the pixels fetches each word once (equation
     * (7b)). */
    int64_t ifmap_band;
    int64_t elem_bytes[ACC_NOPERANDS];   /* per operand; the layer's or a word */
} gemm;

/* What the array does for one tile-GEMM of m x n x k (equations (1)-(4) of
 * doc/accel.md), or a sum of such. */
typedef struct array_cost {
    int64_t folds;
    int64_t cycles;        /* folds * (2R + C + T - 2) */
    int64_t slots;         /* folds * T * R*C*D */
    int64_t rd_ifmap;      /* array reads of the ifmap SRAM */
    int64_t rd_filter;
    int64_t rd_ofmap;      /* partial sums read back to accumulate */
    int64_t wr_ofmap;      /* outputs and partial sums written */
    /* DRAM traffic of each operand if its tile is streamed (equation (7b)) */
    int64_t st_rd_ifmap, st_rd_filter, st_rd_ofmap, st_wr_ofmap;
} array_cost;

/* Words of an operand of `size` distinct words that `sweeps` consecutive
 * sweeps fetch through a buffer half of `keep` words: the first sweep
 * fetches everything, later ones all but the part the buffer keeps. */
static int64_t sweep_words(int64_t size, int64_t sweeps, int64_t keep, ovf *o)
{
    return add(o, size, mul(o, sweeps - 1, max64(0, size - keep)));
}

/* Half of operand op's buffer, in elements: what double buffering leaves
 * for the data in use. */
static int64_t half_buffer_words(const acc_config *c, const gemm *g, acc_operand op)
{
    return c->sram_bytes[op] / 2 / g->elem_bytes[op];
}

/* n elements of operand op in words of the memory system. */
static int64_t to_words(const acc_config *c, const gemm *g, acc_operand op, int64_t n, ovf *o)
{
    if (g->elem_bytes[op] == c->word_bytes)
        return n;
    return cdiv(mul(o, n, g->elem_bytes[op]), c->word_bytes);
}

static void tile_on_array(const acc_config *c, const gemm *g, int64_t m, int64_t n, int64_t k,
                          array_cost *a, ovf *o)
{
    const int64_t R = c->rows, C = c->cols, D = c->depth;
    int64_t sr, sc, t, rgran;
    /* SCALE-Sim's spatial rows Sr, spatial columns Sc and temporal T. */
    switch (c->dataflow) {
    case ACC_DF_OS: sr = m; rgran = R; sc = n; t = cdiv(k, D); break;
    case ACC_DF_WS: sr = k; rgran = R * D; sc = n; t = m; break;
    default: /* IS */ sr = k; rgran = R * D; sc = m; t = n; break;
    }
    int64_t fr = cdiv(sr, rgran), fc = cdiv(sc, C);
    a->folds = mul(o, fr, fc);
    a->cycles = mul(o, a->folds, add(o, 2 * R + C - 2, t));
    a->slots = mul(o, mul(o, a->folds, t), R * C * D);
    int64_t mn = mul(o, m, n), mk = mul(o, m, k), kn = mul(o, k, n);
    switch (c->dataflow) {
    case ACC_DF_OS:        /* outputs stay in the PEs: one write each */
        a->rd_ifmap = mul(o, fc, mk);
        a->rd_filter = mul(o, fr, kn);
        a->rd_ofmap = 0;
        a->wr_ofmap = mn;
        break;
    case ACC_DF_WS:        /* weights loaded once; row folds make partials */
        a->rd_ifmap = mul(o, fc, mk);
        a->rd_filter = kn;
        a->wr_ofmap = mul(o, fr, mn);
        a->rd_ofmap = mul(o, fr - 1, mn);
        break;
    default:               /* IS: inputs loaded once */
        a->rd_ifmap = mk;
        a->rd_filter = mul(o, fc, kn);
        a->wr_ofmap = mul(o, fr, mn);
        a->rd_ofmap = mul(o, fr - 1, mn);
        break;
    }
    /* (7b) A streamed operand passes through half its buffer, which keeps
     * what fits.  Folds run column folds outer, row folds inner.  One sweep
     * of the ifmap fetches its distinct words when the tile spans the whole
     * im2col matrix and two sliding-window bands fit (else its m*k im2col
     * words); OS and WS sweep it once per column fold, IS holds it (one
     * sweep).  The OS filter block of a column fold (k x C) is swept by the
     * F_r row folds in a row; WS holds the filter; IS sweeps it once per
     * column fold.  WS and IS accumulate each column block of outputs over
     * F_r row folds, spilling the part that does not fit. */
    const int64_t Bi = half_buffer_words(c, g, ACC_IFMAP), Bf = half_buffer_words(c, g, ACC_FILTER),
                  Bo = half_buffer_words(c, g, ACC_OFMAP);
    int64_t sweep_if = mk;
    if (m == g->M && k == g->K && g->ifmap_band > 0 && c->dataflow != ACC_DF_WS) {
        /* the part of the band the buffer holds is reused: all of it when
         * it fits, else the fraction Bi / band */
        int64_t extra = mk - g->ifmap_unique;
        int64_t miss = g->ifmap_band <= Bi
                           ? 0
                           : (int64_t)((unsigned __int128)extra *
                                       (unsigned __int128)(g->ifmap_band - Bi) /
                                       (unsigned __int128)g->ifmap_band);
        sweep_if = g->ifmap_unique + miss;
    }
    int64_t cfull = n / C, clast = n % C;    /* column blocks: full ones and a last */
    switch (c->dataflow) {
    case ACC_DF_OS:
        a->st_rd_ifmap = sweep_words(sweep_if, fc, Bi, o);
        a->st_rd_filter = add(o, mul(o, cfull, sweep_words(mul(o, k, C), fr, Bf, o)),
                              clast ? sweep_words(mul(o, k, clast), fr, Bf, o) : 0);
        a->st_wr_ofmap = mn;
        a->st_rd_ofmap = 0;
        break;
    case ACC_DF_WS:
        a->st_rd_ifmap = sweep_words(mk, fc, Bi, o);
        a->st_rd_filter = kn;
        break;
    default:
        a->st_rd_ifmap = sweep_if;
        a->st_rd_filter = sweep_words(kn, fc, Bf, o);
        break;
    }
    if (c->dataflow != ACC_DF_OS) {
        /* output column blocks: WS m x C (C filters), IS C pixels x n */
        int64_t full_blk = c->dataflow == ACC_DF_WS ? mul(o, m, C) : mul(o, C, n);
        int64_t nfull = c->dataflow == ACC_DF_WS ? n / C : m / C;
        int64_t rest = c->dataflow == ACC_DF_WS ? mul(o, m, n % C) : mul(o, m % C, n);
        int64_t spill_full = max64(0, full_blk - Bo), spill_rest = max64(0, rest - Bo);
        int64_t spill = add(o, mul(o, nfull, spill_full), spill_rest);
        a->st_rd_ofmap = mul(o, fr - 1, spill);
        a->st_wr_ofmap = add(o, mn, a->st_rd_ofmap);
    }
}

static void cost_add_scaled(array_cost *sum, const array_cost *a, int64_t times, ovf *o)
{
    sum->folds = add(o, sum->folds, mul(o, a->folds, times));
    sum->cycles = add(o, sum->cycles, mul(o, a->cycles, times));
    sum->slots = add(o, sum->slots, mul(o, a->slots, times));
    sum->rd_ifmap = add(o, sum->rd_ifmap, mul(o, a->rd_ifmap, times));
    sum->rd_filter = add(o, sum->rd_filter, mul(o, a->rd_filter, times));
    sum->rd_ofmap = add(o, sum->rd_ofmap, mul(o, a->rd_ofmap, times));
    sum->wr_ofmap = add(o, sum->wr_ofmap, mul(o, a->wr_ofmap, times));
    sum->st_rd_ifmap = add(o, sum->st_rd_ifmap, mul(o, a->st_rd_ifmap, times));
    sum->st_rd_filter = add(o, sum->st_rd_filter, mul(o, a->st_rd_filter, times));
    sum->st_rd_ofmap = add(o, sum->st_rd_ofmap, mul(o, a->st_rd_ofmap, times));
    sum->st_wr_ofmap = add(o, sum->st_wr_ofmap, mul(o, a->st_wr_ofmap, times));
}

/* A GEMM cut into tiles: along each dimension nX-1 full tiles of tX and one
 * last tile of eX (eX == tX when tX divides the dimension). */
typedef struct tiled {
    int64_t M, N, K;          /* one batch element, padded */
    int64_t tm, tn, tk;       /* clamped to the dimensions */
    int64_t nm, nn, nk;
    int64_t em, en, ek;
    array_cost arr;           /* summed over all tiles of one element */
} tiled;

static void tiled_init(const acc_config *c, const gemm *g, int64_t tm, int64_t tn,
                       int64_t tk, tiled *t, ovf *o)
{
    const int64_t M = g->M, N = g->N, K = g->K;
    t->M = M, t->N = N, t->K = K;
    t->tm = min64(tm, M), t->tn = min64(tn, N), t->tk = min64(tk, K);
    t->nm = cdiv(M, t->tm), t->nn = cdiv(N, t->tn), t->nk = cdiv(K, t->tk);
    t->em = M - (t->nm - 1) * t->tm;
    t->en = N - (t->nn - 1) * t->tn;
    t->ek = K - (t->nk - 1) * t->tk;
    /* Sum over the (at most) 8 classes of tile: full or last along m, n, k. */
    memset(&t->arr, 0, sizeof t->arr);
    for (int cls = 0; cls < 8; cls++) {
        int64_t cm = (cls & 1) ? 1 : t->nm - 1;
        int64_t cn = (cls & 2) ? 1 : t->nn - 1;
        int64_t ck = (cls & 4) ? 1 : t->nk - 1;
        int64_t count = mul(o, mul(o, cm, cn), ck);
        if (count == 0)
            continue;
        array_cost a;
        tile_on_array(c, g, (cls & 1) ? t->em : t->tm, (cls & 2) ? t->en : t->tn,
                      (cls & 4) ? t->ek : t->tk, &a, o);
        cost_add_scaled(&t->arr, &a, count, o);
    }
    /* Every k tile after the first reads back the partial sums of its
     * outputs (equation (5)). */
    t->arr.rd_ofmap = add(o, t->arr.rd_ofmap, mul(o, mul(o, M, N), t->nk - 1));
}

/* ---------------------------------------------------------------- reuse across tiles */

enum { DIM_M, DIM_N, DIM_K };

static const int order_dims[ACC_NORDERS][3] = {
    {DIM_M, DIM_N, DIM_K}, {DIM_M, DIM_K, DIM_N}, {DIM_N, DIM_M, DIM_K},
    {DIM_N, DIM_K, DIM_M}, {DIM_K, DIM_M, DIM_N}, {DIM_K, DIM_N, DIM_M},
};

/* Which dimensions index each operand: ifmap (m,k), filter (k,n), ofmap (m,n). */
static bool indexes(acc_operand op, int dim)
{
    switch (op) {
    case ACC_IFMAP: return dim != DIM_N;
    case ACC_FILTER: return dim != DIM_M;
    default: return dim != DIM_K;
    }
}

/* How many times an operand held in SRAM is brought in whole (equation (6)):
 * its tile changes whenever a loop that indexes it advances; loops that do
 * not index it multiply the traffic only when they sit outside the
 * innermost loop that does.  Loops of extent 1 do not count. */
static int64_t refetch_factor(acc_loop_order ord, const tiled *t, acc_operand op, ovf *o)
{
    const int64_t ext[3] = {t->nm, t->nn, t->nk};
    const int *d = order_dims[ord];
    int inner = -1;
    for (int i = 0; i < 3; i++)
        if (indexes(op, d[i]) && ext[d[i]] > 1)
            inner = i;
    int64_t f = 1;
    for (int i = 0; i < inner; i++)
        if (!indexes(op, d[i]))
            f = mul(o, f, ext[d[i]]);
    return f;
}

/* ---------------------------------------------------------------- one layer under one tiling */


/* Words of the part of the ifmap that an m x k tile of the im2col matrix
 * covers, assuming the distinct pixels spread evenly over the matrix. */
static int64_t ifmap_tile_words(const gemm *g, int64_t tm, int64_t tk)
{
    unsigned __int128 w = (unsigned __int128)tm * (unsigned __int128)tk *
                          (unsigned __int128)g->ifmap_unique;
    unsigned __int128 mk = (unsigned __int128)g->M * (unsigned __int128)g->K;
    return (int64_t)((w + mk - 1) / mk);
}

static bool tile_fits(const acc_config *c, const gemm *g, acc_operand op, int64_t elems, ovf *o)
{
    /* double buffering: a tile may use half of its SRAM */
    return mul(o, elems, g->elem_bytes[op]) <= c->sram_bytes[op] / 2;
}

/* Fills r for the given tiling and order; pure arithmetic, no allocation. */
static void finish(const acc_config *c, const gemm *g, const tiled *t,
                   acc_loop_order ord, acc_result *r, ovf *o)
{
    const int64_t G = g->batch;
    const int64_t size[ACC_NOPERANDS] = {g->ifmap_unique, mul(o, g->K, g->N),
                                         mul(o, g->M, g->N)};
    const int64_t tile[ACC_NOPERANDS] = {ifmap_tile_words(g, t->tm, t->tk),
                                         mul(o, t->tk, t->tn), mul(o, t->tm, t->tn)};
    r->dataflow = c->dataflow;
    r->M = g->M, r->N = g->N, r->K = g->K, r->batch = G;
    r->tiling = (acc_tiling){t->tm, t->tn, t->tk, ord};
    r->tiles = mul(o, mul(o, mul(o, t->nm, t->nn), t->nk), G);
    r->folds = mul(o, t->arr.folds, G);
    r->macs = g->macs;
    r->pad_macs = g->pad_macs;
    r->mac_slots = mul(o, t->arr.slots, G);
    r->vector_ops = 0;
    r->compute_cycles = mul(o, t->arr.cycles, G);

    const int64_t st_rd[2] = {t->arr.st_rd_ifmap, t->arr.st_rd_filter};
    for (int op = 0; op < ACC_NOPERANDS; op++)
        r->resident[op] = tile_fits(c, g, (acc_operand)op, tile[op], o);

    /* DRAM (equations (6)-(8)): a resident operand is fetched whole
     * refetch_factor times; a streamed one as its sweeps through half the
     * buffer need (7b). */
    for (int op = ACC_IFMAP; op <= ACC_FILTER; op++) {
        int64_t per = r->resident[op]
                          ? mul(o, size[op], refetch_factor(ord, t, (acc_operand)op, o))
                          : st_rd[op];
        r->dram_reads[op] = mul(o, per, G);
        r->dram_writes[op] = 0;
    }
    int64_t cw, cr;
    if (r->resident[ACC_OFMAP]) {
        int64_t f = refetch_factor(ord, t, ACC_OFMAP, o);
        cw = mul(o, size[ACC_OFMAP], f);
        cr = mul(o, size[ACC_OFMAP], f - 1);
    } else {
        /* outputs, and the partial sums that do not fit (7b), plus those
         * of k tiles after the first (5) */
        cw = t->arr.st_wr_ofmap;
        cr = add(o, t->arr.st_rd_ofmap, mul(o, mul(o, g->M, g->N), t->nk - 1));
    }
    r->dram_writes[ACC_OFMAP] = mul(o, cw, G);
    r->dram_reads[ACC_OFMAP] = mul(o, cr, G);

    /* SRAM (equation (9)): the array side plus the DRAM side of each buffer. */
    r->sram_reads[ACC_IFMAP] = mul(o, t->arr.rd_ifmap, G);
    r->sram_writes[ACC_IFMAP] = r->dram_reads[ACC_IFMAP];
    r->sram_reads[ACC_FILTER] = mul(o, t->arr.rd_filter, G);
    r->sram_writes[ACC_FILTER] = r->dram_reads[ACC_FILTER];
    r->sram_reads[ACC_OFMAP] = add(o, mul(o, t->arr.rd_ofmap, G), r->dram_writes[ACC_OFMAP]);
    r->sram_writes[ACC_OFMAP] = add(o, mul(o, t->arr.wr_ofmap, G), r->dram_reads[ACC_OFMAP]);
    /* The counts so far are elements; from here on, words. */
    for (int op = 0; op < ACC_NOPERANDS; op++) {
        r->dram_reads[op] = to_words(c, g, (acc_operand)op, r->dram_reads[op], o);
        r->dram_writes[op] = to_words(c, g, (acc_operand)op, r->dram_writes[op], o);
        r->sram_reads[op] = to_words(c, g, (acc_operand)op, r->sram_reads[op], o);
        r->sram_writes[op] = to_words(c, g, (acc_operand)op, r->sram_writes[op], o);
    }

    /* Stalls (equation (10)): double buffering hides transfers behind
     * compute, except the first input tiles and the last output tile. */
    int64_t dram = 0;
    for (int op = 0; op < ACC_NOPERANDS; op++)
        dram = add(o, dram, add(o, r->dram_reads[op], r->dram_writes[op]));
    int64_t pro = (r->resident[ACC_IFMAP] ? to_words(c, g, ACC_IFMAP, tile[ACC_IFMAP], o) : 0) +
                  (r->resident[ACC_FILTER] ? to_words(c, g, ACC_FILTER, tile[ACC_FILTER], o) : 0);
    int64_t epi = r->resident[ACC_OFMAP] ? to_words(c, g, ACC_OFMAP, mul(o, t->em, t->en), o) : 0;
    if (c->bw_unlimited) {
        r->stall_cycles = 0;
    } else {
        int64_t overlap = xfer_cycles(max64(0, dram - pro - epi), c->bandwidth);
        r->stall_cycles = xfer_cycles(pro, c->bandwidth) + xfer_cycles(epi, c->bandwidth) +
                          max64(0, overlap - r->compute_cycles);
    }
    r->total_cycles = add(o, r->compute_cycles, r->stall_cycles);
    r->dram_bw_needed = r->compute_cycles ? (double)dram / (double)r->compute_cycles : 0;

    double peak = (double)(c->rows * c->cols * c->depth);
    r->mapping_efficiency = r->mac_slots ? (double)r->macs / (double)r->mac_slots : 0;
    r->compute_utilization =
        r->compute_cycles ? (double)r->macs / (peak * (double)r->compute_cycles) : 0;
    r->utilization = r->total_cycles ? (double)r->macs / (peak * (double)r->total_cycles) : 0;

    /* Energy (equation (11)). */
    const acc_energy *e = &c->energy;
    double executed = (double)r->macs + (double)r->pad_macs;
    r->latency_us = (double)r->total_cycles / c->clock_mhz;
    r->energy.mac = executed * e->mac_pj;
    r->energy.reg = 2.0 * executed * e->reg_pj;
    r->energy.sram = (double)sum3(r->sram_reads) * e->sram_read_pj +
                     (double)sum3(r->sram_writes) * e->sram_write_pj;
    r->energy.dram = (double)sum3(r->dram_reads) * (double)c->word_bytes * e->dram_read_pj_per_byte +
                     (double)sum3(r->dram_writes) * (double)c->word_bytes * e->dram_write_pj_per_byte;
    r->energy.vector = 0;
    r->energy.stat = e->static_mw * r->latency_us * 1000.0;   /* mW*us = nJ */
    r->energy_pj = r->energy.mac + r->energy.reg + r->energy.sram + r->energy.dram +
                   r->energy.stat;
    r->edp = r->energy_pj * r->latency_us;
}

/* ---------------------------------------------------------------- layers */

static bool check_gemm_layer(const acc_config *c, const acc_layer *l, const acc_options *opt,
                             gemm *g, char *err, size_t errlen)
{
    const char *nm = l->name ? l->name : "?";
    if (l->M < 1 || l->N < 1 || l->K < 1 || l->batch < 1)
        return fail(err, errlen,
                    "layer %s: bad GEMM %lldx%lldx%lld batch %lld (all must be positive)",
                    nm, (long long)l->M, (long long)l->N, (long long)l->K,
                    (long long)l->batch);
    if (opt && opt->pad_to < 0)
        return fail(err, errlen, "bad padding multiple %lld", (long long)opt->pad_to);
    ovf o = {false};
    int64_t p = opt && opt->pad_to > 1 ? opt->pad_to : 1;
    g->M = mul(&o, cdiv(l->M, p), p);
    g->N = mul(&o, cdiv(l->N, p), p);
    g->K = mul(&o, cdiv(l->K, p), p);
    g->batch = l->batch;
    int64_t useful = mul(&o, mul(&o, mul(&o, l->M, l->N), l->K), l->batch);
    int64_t all = mul(&o, mul(&o, mul(&o, g->M, g->N), g->K), g->batch);
    g->macs = useful;
    g->pad_macs = all - useful;
    g->ifmap_unique = mul(&o, g->M, g->K);
    g->ifmap_band = 0;
    for (int op = 0; op < ACC_NOPERANDS; op++)
        g->elem_bytes[op] = l->elem_bytes[op] > 0 ? l->elem_bytes[op] : c->word_bytes;
    if (l->has_conv && l->conv.channels % l->batch == 0) {
        int64_t px = mul(&o, mul(&o, l->conv.ifmap_h, l->conv.ifmap_w),
                         l->conv.channels / l->batch);
        g->ifmap_unique = min64(px, g->ifmap_unique);
        /* the band of input rows one fold of pixels (OS: R, IS: C) spans:
         * its output rows, plus one where the fold straddles a row */
        const acc_conv *cv = &l->conv;
        int64_t eh = acc_conv_out_floor(cv->ifmap_h, cv->filt_h, cv->stride_h);
        int64_t ew = acc_conv_out_floor(cv->ifmap_w, cv->filt_w, cv->stride_w);
        int64_t pix = c->dataflow == ACC_DF_IS ? c->cols : c->rows;
        int64_t rows_out = min64(eh, cdiv(pix, ew) + 1);
        int64_t rows_in = min64(cv->ifmap_h, (rows_out - 1) * cv->stride_h + cv->filt_h);
        g->ifmap_band = min64(g->ifmap_unique,
                              mul(&o, mul(&o, rows_in, cv->ifmap_w), cv->channels / l->batch));
    }
    if (o.hit)
        return fail(err, errlen, "layer %s: MAC count of %lldx%lldx%lld batch %lld "
                    "does not fit in 64 bits", nm, (long long)l->M, (long long)l->N,
                    (long long)l->K, (long long)l->batch);
    return true;
}

static bool overflowed(const acc_layer *l, char *err, size_t errlen)
{
    return fail(err, errlen, "layer %s: access counts do not fit in 64 bits",
                l->name ? l->name : "?");
}

static void result_init(acc_result *r, const acc_layer *l)
{
    memset(r, 0, sizeof *r);
    r->name = l->name;
    r->kind = l->kind;
}

bool acc_model_tiling(const acc_config *c, const acc_options *opt, const acc_layer *l,
                      const acc_tiling *tl, acc_result *r, char *err, size_t errlen)
{
    if (l->kind != ACC_LAYER_GEMM)
        return fail(err, errlen, "layer %s: a tiling applies to GEMM layers only",
                    l->name ? l->name : "?");
    gemm g;
    if (!check_gemm_layer(c, l, opt, &g, err, errlen))
        return false;
    if (tl->tm < 1 || tl->tn < 1 || tl->tk < 1 || (unsigned)tl->order >= ACC_NORDERS)
        return fail(err, errlen, "layer %s: bad tiling %lldx%lldx%lld (tile sizes must be positive)",
                    l->name ? l->name : "?", (long long)tl->tm, (long long)tl->tn,
                    (long long)tl->tk);
    ovf o = {false};
    tiled t;
    tiled_init(c, &g, tl->tm, tl->tn, tl->tk, &t, &o);
    result_init(r, l);
    finish(c, &g, &t, tl->order, r, &o);
    if (o.hit)
        return overflowed(l, err, errlen);
    return true;
}

/* Tile sizes tried along one dimension of extent x whose hardware granule is
 * g: even splits x/1..x/8 rounded up to the granule, and powers of two times
 * the granule; at most 40, ascending. */
static int candidates(int64_t x, int64_t g, int64_t *out)
{
    int n = 0;
    for (int64_t parts = 1; parts <= 8; parts++)
        out[n++] = min64(round_up(cdiv(x, parts), g), x);
    for (int64_t v = g; v < x && n < 40; v *= 2)
        if (v >= 8)
            out[n++] = v;
    /* insertion sort and dedupe: n is tiny */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int64_t tmp = out[j];
            out[j] = out[j - 1];
            out[j - 1] = tmp;
        }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != out[i])
            out[m++] = out[i];
    return m;
}

static int64_t dram_total(const acc_result *r)
{
    return sum3(r->dram_reads) + sum3(r->dram_writes);
}

/* Is a strictly better than b under the objective?  Ties keep the earlier
 * candidate, so the untiled default wins unless beaten. */
static bool better(acc_search s, const acc_result *a, const acc_result *b)
{
    if (s == ACC_SEARCH_EDP) {
        if (a->edp != b->edp)
            return a->edp < b->edp;
        return dram_total(a) < dram_total(b);
    }
    int64_t da = dram_total(a), db = dram_total(b);
    if (da != db)
        return da < db;
    if (a->total_cycles != b->total_cycles)
        return a->total_cycles < b->total_cycles;
    return a->energy_pj < b->energy_pj;
}

/* Searches tilings whose three tiles all fit in half of their SRAMs, over
 * every loop order, starting from the untiled default in *r. */
static void search_tiling(const acc_config *c, acc_search s, const gemm *g,
                          acc_result *r, ovf *o)
{
    int64_t gm, gn, gk;
    const int64_t R = c->rows, C = c->cols, D = c->depth;
    switch (c->dataflow) {
    case ACC_DF_OS: gm = R; gn = C; gk = D; break;
    case ACC_DF_WS: gm = 1; gn = C; gk = R * D; break;
    default: gm = C; gn = 1; gk = R * D; break;
    }
    int64_t cm[40], cn[40], ck[40];
    int nm = candidates(g->M, gm, cm), nn = candidates(g->N, gn, cn),
        nk = candidates(g->K, gk, ck);
    acc_result cand;
    for (int i = 0; i < nm; i++) {
        if (!tile_fits(c, g, ACC_IFMAP, ifmap_tile_words(g, cm[i], 1), o))
            break;
        for (int k = 0; k < nk; k++) {
            if (!tile_fits(c, g, ACC_IFMAP, ifmap_tile_words(g, cm[i], ck[k]), o))
                break;
            for (int j = 0; j < nn; j++) {
                if (!tile_fits(c, g, ACC_FILTER, mul(o, ck[k], cn[j]), o) ||
                    !tile_fits(c, g, ACC_OFMAP, mul(o, cm[i], cn[j]), o))
                    break;
                tiled t;
                tiled_init(c, g, cm[i], cn[j], ck[k], &t, o);
                for (int ord = 0; ord < ACC_NORDERS; ord++) {
                    cand.name = r->name;
                    cand.kind = r->kind;
                    finish(c, g, &t, (acc_loop_order)ord, &cand, o);
                    if (better(s, &cand, r))
                        *r = cand;
                }
            }
        }
    }
}

static bool model_vector(const acc_config *c, const acc_layer *l, acc_result *r,
                         char *err, size_t errlen)
{
    if (l->vector_ops < 0 || l->vector_read_bytes < 0 || l->vector_write_bytes < 0)
        return fail(err, errlen, "layer %s: negative vector work", l->name ? l->name : "?");
    result_init(r, l);
    r->dataflow = c->dataflow;
    r->vector_ops = l->vector_ops;
    int64_t rd = cdiv(l->vector_read_bytes, c->word_bytes);
    int64_t wr = cdiv(l->vector_write_bytes, c->word_bytes);
    /* The vector unit streams its operands from DRAM and back (equation (12)). */
    r->dram_reads[ACC_IFMAP] = rd;
    r->dram_writes[ACC_OFMAP] = wr;
    r->compute_cycles = cdiv(l->vector_ops, c->vector_lanes);
    int64_t mem = c->bw_unlimited ? 0 : xfer_cycles(rd + wr, c->bandwidth);
    r->stall_cycles = max64(0, mem - r->compute_cycles);
    r->total_cycles = r->compute_cycles + r->stall_cycles;
    r->dram_bw_needed = r->compute_cycles ? (double)(rd + wr) / (double)r->compute_cycles : 0;
    const acc_energy *e = &c->energy;
    r->latency_us = (double)r->total_cycles / c->clock_mhz;
    r->energy.vector = (double)l->vector_ops * e->vector_op_pj;
    r->energy.dram = (double)rd * (double)c->word_bytes * e->dram_read_pj_per_byte +
                     (double)wr * (double)c->word_bytes * e->dram_write_pj_per_byte;
    r->energy.stat = e->static_mw * r->latency_us * 1000.0;
    r->energy_pj = r->energy.vector + r->energy.dram + r->energy.stat;
    r->edp = r->energy_pj * r->latency_us;
    return true;
}

bool acc_model_layer(const acc_config *c, const acc_options *opt, const acc_layer *l,
                     acc_result *r, char *err, size_t errlen)
{
    if (l->kind == ACC_LAYER_VECTOR)
        return model_vector(c, l, r, err, errlen);
    if (l->kind != ACC_LAYER_GEMM)
        return fail(err, errlen, "layer %s: unknown layer kind %d", l->name ? l->name : "?",
                    (int)l->kind);
    if (l->has_tiling)
        return acc_model_tiling(c, opt, l, &l->tiling, r, err, errlen);
    gemm g;
    if (!check_gemm_layer(c, l, opt, &g, err, errlen))
        return false;
    ovf o = {false};
    tiled t;
    /* The untiled default: one tile per GEMM, operands that do not fit are
     * streamed (section "Tiling" of doc/accel.md). */
    tiled_init(c, &g, g.M, g.N, g.K, &t, &o);
    result_init(r, l);
    finish(c, &g, &t, ACC_ORDER_MNK, r, &o);
    acc_search s = opt ? opt->search : ACC_SEARCH_NONE;
    if (s != ACC_SEARCH_NONE && !o.hit)
        search_tiling(c, s, &g, r, &o);
    if (o.hit)
        return overflowed(l, err, errlen);
    return true;
}

/* ---------------------------------------------------------------- networks */

static bool same_work(const acc_layer *a, const acc_layer *b)
{
    if (a->kind != b->kind || a->M != b->M || a->N != b->N || a->K != b->K ||
        a->batch != b->batch || a->vector_ops != b->vector_ops ||
        a->vector_read_bytes != b->vector_read_bytes ||
        a->vector_write_bytes != b->vector_write_bytes || a->has_tiling != b->has_tiling ||
        memcmp(a->elem_bytes, b->elem_bytes, sizeof a->elem_bytes) != 0)
        return false;
    if (a->has_conv != b->has_conv ||
        (a->has_conv && memcmp(&a->conv, &b->conv, sizeof a->conv) != 0))
        return false;   /* the ifmap footprint depends on the geometry */
    if (!a->has_tiling)
        return true;
    return a->tiling.tm == b->tiling.tm && a->tiling.tn == b->tiling.tn &&
           a->tiling.tk == b->tiling.tk && a->tiling.order == b->tiling.order;
}

static void total_add(acc_result *t, const acc_result *r, ovf *o)
{
    t->tiles = add(o, t->tiles, r->tiles);
    t->folds = add(o, t->folds, r->folds);
    t->macs = add(o, t->macs, r->macs);
    t->pad_macs = add(o, t->pad_macs, r->pad_macs);
    t->mac_slots = add(o, t->mac_slots, r->mac_slots);
    t->vector_ops = add(o, t->vector_ops, r->vector_ops);
    t->compute_cycles = add(o, t->compute_cycles, r->compute_cycles);
    t->stall_cycles = add(o, t->stall_cycles, r->stall_cycles);
    t->total_cycles = add(o, t->total_cycles, r->total_cycles);
    for (int op = 0; op < ACC_NOPERANDS; op++) {
        t->sram_reads[op] = add(o, t->sram_reads[op], r->sram_reads[op]);
        t->sram_writes[op] = add(o, t->sram_writes[op], r->sram_writes[op]);
        t->dram_reads[op] = add(o, t->dram_reads[op], r->dram_reads[op]);
        t->dram_writes[op] = add(o, t->dram_writes[op], r->dram_writes[op]);
    }
    t->energy.mac += r->energy.mac;
    t->energy.reg += r->energy.reg;
    t->energy.sram += r->energy.sram;
    t->energy.dram += r->energy.dram;
    t->energy.vector += r->energy.vector;
    t->energy.stat += r->energy.stat;
    t->energy_pj += r->energy_pj;
    t->latency_us += r->latency_us;
}

bool acc_results_sum(const acc_config *c, const acc_result *rs, int n, acc_result *total,
                     char *err, size_t errlen)
{
    memset(total, 0, sizeof *total);
    total->name = "total";
    total->kind = ACC_LAYER_GEMM;
    total->dataflow = c->dataflow;
    ovf o = {false};
    for (int i = 0; i < n; i++)
        total_add(total, &rs[i], &o);
    if (o.hit)
        return fail(err, errlen, "network totals do not fit in 64 bits");
    /* Ratios are recomputed from the sums: averaging the layers' ratios
     * would weight a tiny layer like a large one. */
    double peak = (double)(c->rows * c->cols * c->depth);
    total->mapping_efficiency =
        total->mac_slots ? (double)total->macs / (double)total->mac_slots : 0;
    total->compute_utilization =
        total->compute_cycles ? (double)total->macs / (peak * (double)total->compute_cycles) : 0;
    total->utilization =
        total->total_cycles ? (double)total->macs / (peak * (double)total->total_cycles) : 0;
    int64_t dram = dram_total(total);
    total->dram_bw_needed =
        total->compute_cycles ? (double)dram / (double)total->compute_cycles : 0;
    total->edp = total->energy_pj * total->latency_us;
    return true;
}

bool acc_model_network(const acc_config *c, const acc_options *opt, const acc_layer *layers,
                       int n, acc_result *results, acc_result *total, int64_t *evals,
                       char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        int same = -1;
        for (int j = 0; j < i && same < 0; j++)
            if (same_work(&layers[i], &layers[j]))
                same = j;
        if (same >= 0) {
            results[i] = results[same];
            results[i].name = layers[i].name;
        } else {
            if (!acc_model_layer(c, opt, &layers[i], &results[i], err, errlen))
                return false;
            if (evals)
                (*evals)++;
        }
    }
    return acc_results_sum(c, results, n, total, err, errlen);
}
