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

const char *acc_tiling_origin(const acc_result *r)
{
    if (r->tiling_given)
        return "given";
    switch (r->search) {
    case ACC_SEARCH_DRAM: return "dram search";
    case ACC_SEARCH_EDP: return "edp search";
    default: return "untiled";
    }
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
     * that the windows of one fold of pixels span on average (OS: R
     * pixels, IS: C), 0 for a plain GEMM.  When the band fits in half the
     * ifmap buffer, a sweep over the pixels fetches each word once
     * (equation (7b)). */
    int64_t ifmap_band;
    /* The window reuse between neighbouring taps of one filter row comes
     * one tap apart: the fold's pixels times the channels, tap_words
     * words; the fraction tap_num / tap_den of the reuse is of that kind,
     * the rest comes a band apart (7b). */
    int64_t ifmap_tap_words, tap_num, tap_den;
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

/* The part of `reuse` words of window reuse at a distance of `dist` words
 * that a buffer half of B words misses: none when the distance fits, else
 * the fraction (dist - B) / dist (it keeps B of the dist words). */
static int64_t reuse_missed(int64_t reuse, int64_t dist, int64_t B)
{
    if (dist <= B)
        return 0;
    return (int64_t)((unsigned __int128)reuse * (unsigned __int128)(dist - B) /
                     (unsigned __int128)dist);
}

/* Words one sweep over a streamed m x k ifmap tile fetches (7b): its m*k
 * im2col words, or, for a convolution's tile that spans the whole im2col
 * matrix under OS or IS, the distinct words plus the window reuse that the
 * buffer misses: the reuse between neighbouring taps of a filter row comes
 * one tap apart, the rest a band of input rows apart. */
static int64_t ifmap_sweep(const acc_config *c, const gemm *g, int64_t m, int64_t k, ovf *o)
{
    int64_t mk = mul(o, m, k), Bi = half_buffer_words(c, g, ACC_IFMAP);
    if (m != g->M || k != g->K || g->ifmap_band <= 0 || c->dataflow == ACC_DF_WS)
        return mk;
    int64_t extra = mk - g->ifmap_unique;
    int64_t tap = (int64_t)((unsigned __int128)extra * (unsigned __int128)g->tap_num /
                            (unsigned __int128)g->tap_den);
    return g->ifmap_unique + reuse_missed(tap, g->ifmap_tap_words, Bi) +
           reuse_missed(extra - tap, g->ifmap_band, Bi);
}

/* The folds of an m x n x k tile-GEMM (equations (1)-(3)): F_r row folds,
 * F_c column folds, T streaming cycles each. */
typedef struct fold_shape {
    int64_t fr, fc, t;
} fold_shape;

static fold_shape fold_shape_of(const acc_config *c, int64_t m, int64_t n, int64_t k)
{
    const int64_t R = c->rows, C = c->cols, D = c->depth;
    int64_t sr, sc, t, rgran;
    /* SCALE-Sim's spatial rows Sr, spatial columns Sc and temporal T. */
    switch (c->dataflow) {
    case ACC_DF_OS: sr = m; rgran = R; sc = n; t = cdiv(k, D); break;
    case ACC_DF_WS: sr = k; rgran = R * D; sc = n; t = m; break;
    default: /* IS */ sr = k; rgran = R * D; sc = m; t = n; break;
    }
    return (fold_shape){cdiv(sr, rgran), cdiv(sc, C), t};
}

static void tile_on_array(const acc_config *c, const gemm *g, int64_t m, int64_t n, int64_t k,
                          array_cost *a, ovf *o)
{
    const int64_t R = c->rows, C = c->cols, D = c->depth;
    const fold_shape fs = fold_shape_of(c, m, n, k);
    const int64_t fr = fs.fr, fc = fs.fc, t = fs.t;
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
     * im2col matrix and its sliding-window band fits (else its m*k im2col
     * words); OS and WS sweep it once per column fold, IS holds it (one
     * sweep).  The OS filter block of a column fold (k x C) is swept by the
     * F_r row folds in a row; WS holds the filter; IS sweeps it once per
     * column fold.  WS and IS accumulate each column block of outputs over
     * F_r row folds, spilling the part that does not fit. */
    const int64_t Bi = half_buffer_words(c, g, ACC_IFMAP), Bf = half_buffer_words(c, g, ACC_FILTER),
                  Bo = half_buffer_words(c, g, ACC_OFMAP);
    int64_t sweep_if = ifmap_sweep(c, g, m, k, o);
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

/* ---------------------------------------------------------------- fold-level timing */

/* The DRAM interface in USER mode: one channel of BW words per cycle.  A
 * read's data is in SRAM `latency` cycles after its transfer ends (requests
 * are pipelined: latency delays data but takes no bandwidth); writes are
 * posted.  Times are cycles from the layer's start. */
typedef struct channel {
    double bw;
    int64_t lat;
    int64_t free;              /* the first cycle the channel is idle */
} channel;

/* In CALC mode the interface never stalls: no transfer takes a cycle. */
static double bw_of(const acc_config *c)
{
    return c->bw_unlimited ? INFINITY : c->bandwidth;
}

static int64_t latency_of(const acc_config *c)
{
    return c->bw_unlimited ? 0 : (int64_t)ceil(c->dram_latency);
}

static channel channel_new(const acc_config *c, int64_t at)
{
    return (channel){bw_of(c), latency_of(c), at};
}

/* Issues a read of `words` at cycle `at`; returns when its data is in SRAM. */
static int64_t chan_read(channel *ch, int64_t at, int64_t words)
{
    if (words <= 0)
        return at;
    ch->free = max64(at, ch->free) + xfer_cycles(words, ch->bw);
    return ch->free + ch->lat;
}

static void chan_write(channel *ch, int64_t at, int64_t words)
{
    if (words > 0)
        ch->free = max64(at, ch->free) + xfer_cycles(words, ch->bw);
}

/* x shared over n slices, n - 1 of `full` words and a last of `last`, out
 * of `whole`: a slice of `size` gets floor(x * size / whole), and the first
 * also what the rounding leaves, so the shares add up to x and slices of
 * the same size after the first get the same share. */
static int64_t slice_share(int64_t x, int64_t size, bool first, int64_t n, int64_t full,
                           int64_t last, int64_t whole)
{
#define SHARE(w) ((int64_t)((unsigned __int128)x * (unsigned __int128)(w) / (unsigned __int128)whole))
    int64_t share = SHARE(size);
    if (first)
        share += x - ((n - 1) * SHARE(full) + SHARE(last));
    return share;
#undef SHARE
}

/* One fold of a tile-GEMM (3): the array's SRAM words, and what it moves
 * between SRAM and DRAM for the operands that are streamed (7b): read
 * before it starts, written after it ends.  Summed over the folds of the
 * tile, the DRAM words are the tile's st_* counts of tile_on_array. */
typedef struct fold_io {
    int64_t sram[ACC_NOPERANDS];   /* ifmap and filter reads, ofmap writes */
    int64_t rd[ACC_NOPERANDS];     /* DRAM reads; ofmap: spilled partial sums */
    int64_t wr;                    /* ofmap DRAM writes */
} fold_io;

/* fold_traffic's counts in elements of each operand. */
static void fold_elements(const acc_config *c, const gemm *g, int64_t m, int64_t n, int64_t k,
                          const bool streamed[ACC_NOPERANDS], int64_t ic, int64_t ir, int64_t fr,
                          fold_io *f, ovf *o)
{
    const int64_t R = c->rows, C = c->cols, RD = c->rows * c->depth;
    const int64_t Bi = half_buffer_words(c, g, ACC_IFMAP), Bf = half_buffer_words(c, g, ACC_FILTER),
                  Bo = half_buffer_words(c, g, ACC_OFMAP);
    memset(f, 0, sizeof *f);
    int64_t blk = 0;           /* WS, IS: the column block of outputs it accumulates */
    if (c->dataflow == ACC_DF_OS) {
        /* rows of outputs ir, columns ic; the ifmap swept once per column
         * fold, each column's filter block once per row fold */
        int64_t r0 = ir * R, rows = min64(R, m - r0), c0 = ic * C, cols = min64(C, n - c0);
        f->sram[ACC_IFMAP] = mul(o, rows, k);
        f->sram[ACC_FILTER] = mul(o, k, cols);
        f->sram[ACC_OFMAP] = mul(o, rows, cols);
        if (streamed[ACC_IFMAP]) {
            int64_t sweep = ifmap_sweep(c, g, m, k, o);
            f->rd[ACC_IFMAP] = slice_share(ic ? max64(0, sweep - Bi) : sweep, rows, ir == 0, fr,
                                           R, m - (fr - 1) * R, m);
        }
        if (streamed[ACC_FILTER]) {
            int64_t b = mul(o, k, cols);
            f->rd[ACC_FILTER] = ir ? max64(0, b - Bf) : b;
        }
        if (streamed[ACC_OFMAP])
            f->wr = f->sram[ACC_OFMAP];
        return;
    }
    int64_t k0 = ir * RD, kr = min64(RD, k - k0), c0 = ic * C, klast = k - (fr - 1) * RD;
    if (c->dataflow == ACC_DF_WS) {
        /* weights k-slice ir x filters ic stay; all m pixels stream */
        int64_t cols = min64(C, n - c0), mk = mul(o, m, k);
        f->sram[ACC_IFMAP] = mul(o, m, kr);
        f->sram[ACC_FILTER] = mul(o, kr, cols);
        blk = f->sram[ACC_OFMAP] = mul(o, m, cols);
        if (streamed[ACC_IFMAP])
            f->rd[ACC_IFMAP] = slice_share(ic ? max64(0, mk - Bi) : mk, kr, ir == 0, fr, RD,
                                           klast, k);
        if (streamed[ACC_FILTER])
            f->rd[ACC_FILTER] = f->sram[ACC_FILTER];
    } else {
        /* inputs k-slice ir x pixels ic stay; all n filters stream */
        int64_t mc = min64(C, m - c0), kn = mul(o, k, n);
        f->sram[ACC_IFMAP] = mul(o, kr, mc);
        f->sram[ACC_FILTER] = mul(o, kr, n);
        blk = f->sram[ACC_OFMAP] = mul(o, mc, n);
        if (streamed[ACC_IFMAP]) {
            /* the pixels' share of the one sweep, then the k-slice's */
            int64_t fc = cdiv(m, C);
            int64_t col = slice_share(ifmap_sweep(c, g, m, k, o), mc, ic == 0, fc, C,
                                      m - (fc - 1) * C, m);
            f->rd[ACC_IFMAP] = slice_share(col, kr, ir == 0, fr, RD, klast, k);
        }
        if (streamed[ACC_FILTER])
            f->rd[ACC_FILTER] = slice_share(ic ? max64(0, kn - Bf) : kn, kr, ir == 0, fr, RD,
                                            klast, k);
    }
    if (streamed[ACC_OFMAP]) {
        /* partial sums beyond half the buffer spill after every row fold
         * but the last, and come back before the next */
        int64_t spill = max64(0, blk - Bo);
        f->rd[ACC_OFMAP] = ir ? spill : 0;
        f->wr = ir < fr - 1 ? spill : blk;
    }
}

/* What fold (ir, ic) of an m x n x k tile-GEMM moves, in words of the
 * memory system. */
static void fold_traffic(const acc_config *c, const gemm *g, int64_t m, int64_t n, int64_t k,
                         const bool streamed[ACC_NOPERANDS], int64_t ic, int64_t ir, int64_t fr,
                         fold_io *f, ovf *o)
{
    fold_elements(c, g, m, n, k, streamed, ic, ir, fr, f, o);
    for (int op = 0; op < ACC_NOPERANDS; op++) {
        f->sram[op] = to_words(c, g, (acc_operand)op, f->sram[op], o);
        f->rd[op] = to_words(c, g, (acc_operand)op, f->rd[op], o);
    }
    f->wr = to_words(c, g, ACC_OFMAP, f->wr, o);
}

/* Receives every fold of a layer from tile_timeline (trace only). */
typedef struct fold_sink {
    acc_fold_fn fn;
    void *ctx;
    int64_t tile, fold;        /* running indices over the layer */
    int64_t tile_rd[ACC_NOPERANDS];  /* the tile's resident loads, given to its first fold */
    int64_t tile_load_start;
    bool stop;
    /* The tile's last fold is held back until the caller knows what is
     * written after the tile (a resident ofmap tile's write-back). */
    acc_fold_event last;
    bool has_last;
    int64_t read[ACC_NOPERANDS];     /* DRAM words of the folds so far */
} fold_sink;

/* The folds of one m x n x k tile-GEMM, column folds outer and row folds
 * inner, through the double-buffered pipeline from cycle `start`: a fold's
 * streamed data is fetched while the fold before it computes (the first
 * fold's from `start`), and its outputs leave after it.  Returns the cycle
 * the last fold and its writes end. */
static int64_t tile_timeline(const acc_config *c, const gemm *g, int64_t m, int64_t n,
                             int64_t k, const bool streamed[ACC_NOPERANDS], int64_t start,
                             fold_sink *sink, ovf *o)
{
    const fold_shape fs = fold_shape_of(c, m, n, k);
    const int64_t fr = fs.fr, fc = fs.fc, cyc = 2 * c->rows + c->cols - 2 + fs.t;
    channel ch = channel_new(c, start);
    fold_io cur, next, probe, probe2;
    fold_traffic(c, g, m, n, k, streamed, 0, 0, fr, &cur, o);
    next = cur;
    int64_t load = ch.free;
    int64_t s = chan_read(&ch, start, sum3(cur.rd)), e = start;
    /* Folds in the middle of a column (row folds 1 .. F_r - 2) move the
     * same words, and so do the middle columns (1 .. F_c - 2).  The
     * pipeline is shift-invariant, so once the channel is as far ahead of
     * the array at the start of two such folds (or columns) in a row, every
     * further one takes the same time: the model skips them (the trace,
     * which shows every fold, does not). */
    int64_t prev_s = 0, prev_ahead = -1, col_s = 0, col_ahead = -1;
    int64_t ic = 0, ir = 0;
    while (ic < fc) {
        if (!sink) {
            int64_t ahead = ch.free - s;
            if (ir == 0 && ic >= 2 && ic <= fc - 3 && ahead == col_ahead) {
                fold_traffic(c, g, m, n, k, streamed, 1, 0, fr, &probe, o);
                fold_traffic(c, g, m, n, k, streamed, fc - 2, 0, fr, &probe2, o);
                bool same = memcmp(&probe, &probe2, sizeof probe) == 0;
                fold_traffic(c, g, m, n, k, streamed, 1, fr - 1, fr, &probe, o);
                fold_traffic(c, g, m, n, k, streamed, fc - 2, fr - 1, fr, &probe2, o);
                if (same && memcmp(&probe, &probe2, sizeof probe) == 0) {
                    int64_t jump = (fc - 2) - ic, d = mul(o, jump, s - col_s);
                    s = add(o, s, d);
                    ch.free = add(o, ch.free, d);
                    ic = fc - 2;
                }
            }
            if (ir == 0) {
                col_ahead = ch.free - s;
                col_s = s;
            }
            if (ir >= 2 && ir <= fr - 3 && ahead == prev_ahead) {
                fold_traffic(c, g, m, n, k, streamed, ic, fr - 2, fr, &probe, o);
                if (memcmp(&probe, &cur, sizeof probe) == 0) {
                    int64_t jump = (fr - 2) - ir, d = mul(o, jump, s - prev_s);
                    s = add(o, s, d);
                    ch.free = add(o, ch.free, d);
                    ir = fr - 2;
                }
            }
            prev_ahead = ch.free - s;
            prev_s = s;
        }
        bool last = ic == fc - 1 && ir == fr - 1;
        int64_t jc = ir == fr - 1 ? ic + 1 : ic, jr = ir == fr - 1 ? 0 : ir + 1;
        if (!last)
            fold_traffic(c, g, m, n, k, streamed, jc, jr, fr, &next, o);
        int64_t next_load = max64(s, ch.free);
        int64_t arrive = last ? s : chan_read(&ch, s, sum3(next.rd));
        e = s + cyc;
        if (sink && !sink->stop) {
            acc_fold_event ev;
            memset(&ev, 0, sizeof ev);
            ev.tile = sink->tile;
            ev.fold = sink->fold++;
            ev.start = s;
            ev.cycles = cyc;
            ev.load_start = ic == 0 && ir == 0 ? min64(load, sink->tile_load_start) : load;
            for (int op = 0; op < ACC_NOPERANDS; op++) {
                ev.sram[op] = cur.sram[op];
                ev.dram_rd[op] = cur.rd[op] + sink->tile_rd[op];
                sink->read[op] += ev.dram_rd[op];
                sink->tile_rd[op] = 0;
            }
            ev.dram_wr = cur.wr;
            if (last) {
                sink->last = ev;
                sink->has_last = true;
            } else {
                sink->stop = !sink->fn(&ev, sink->ctx);
            }
        }
        chan_write(&ch, e, cur.wr);
        cur = next;
        load = next_load;
        s = max64(e, arrive);
        ic = jc;
        ir = jr;
    }
    return max64(e, ch.free);
}

/* Between tile-GEMMs: the loops over tiles, outermost first (the batch,
 * then the order's three), and what moves when each advances.  A resident
 * operand is reloaded when a loop at or inside the one that advances
 * indexes it (equation (6) counts the same events); the words of one reload
 * are the operand's DRAM total after the first tile's, shared evenly by its
 * reloads.  The next tile's loads and the last tile's write-back use the
 * channel while a tile computes (double buffering); what does not fit in
 * the average tile's compute stalls. */
typedef struct tile_plan {
    int64_t ext[4];
    int dim[4];                /* DIM_M, DIM_N, DIM_K; -1 for the batch */
    int64_t count[4];          /* transitions at which loop L advances */
    int64_t rd[4], wr[4];      /* words moved at one of them */
    int64_t stall[4];          /* cycles it stalls */
    int64_t first_rd[ACC_NOPERANDS];   /* prologue: the first tile's loads */
    int64_t extra;             /* k tiles' partial sums of a streamed ofmap (5),
                                  per transition */
    int64_t last_wr;           /* epilogue: the last ofmap tile */
    int64_t reload_rd[ACC_NOPERANDS];  /* one reload of each resident operand */
    bool reload[ACC_NOPERANDS][4];     /* is the operand reloaded when loop L advances? */
} tile_plan;

static bool reloads(const tile_plan *p, acc_operand op, int L)
{
    return p->reload[op][L];
}

static void plan_tiles(const acc_config *c, const gemm *g, const tiled *t, acc_loop_order ord,
                       const acc_result *r, const int64_t tile[ACC_NOPERANDS], tile_plan *p,
                       ovf *o)
{
    memset(p, 0, sizeof *p);
    const int64_t ext3[3] = {t->nm, t->nn, t->nk};
    p->ext[0] = g->batch;
    p->dim[0] = -1;
    for (int i = 0; i < 3; i++) {
        p->dim[i + 1] = order_dims[ord][i];
        p->ext[i + 1] = ext3[order_dims[ord][i]];
    }
    for (int op = 0; op < ACC_NOPERANDS; op++) {
        bool inner = false;
        for (int L = 3; L >= 0; L--) {
            inner |= p->ext[L] > 1 && (p->dim[L] < 0 || indexes((acc_operand)op, p->dim[L]));
            p->reload[op][L] = inner;
        }
    }
    int64_t outer = 1, transitions = 0;
    for (int L = 0; L < 4; L++) {
        p->count[L] = mul(o, outer, p->ext[L] - 1);
        transitions = add(o, transitions, p->count[L]);
        outer = mul(o, outer, p->ext[L]);
    }
    int64_t loads[ACC_NOPERANDS];
    for (int op = 0; op < ACC_NOPERANDS; op++) {
        loads[op] = 1;
        for (int L = 0; L < 4; L++)
            if (reloads(p, (acc_operand)op, L))
                loads[op] = add(o, loads[op], p->count[L]);
    }
    for (int op = ACC_IFMAP; op <= ACC_FILTER; op++)
        if (r->resident[op]) {
            p->first_rd[op] = min64(to_words(c, g, (acc_operand)op, tile[op], o),
                                    r->dram_reads[op]);
            if (loads[op] > 1)
                p->reload_rd[op] = (r->dram_reads[op] - p->first_rd[op]) / (loads[op] - 1);
        }
    int64_t wb = 0;
    if (r->resident[ACC_OFMAP]) {
        p->last_wr = min64(to_words(c, g, ACC_OFMAP, mul(o, t->em, t->en), o),
                           r->dram_writes[ACC_OFMAP]);
        if (loads[ACC_OFMAP] > 1) {
            wb = (r->dram_writes[ACC_OFMAP] - p->last_wr) / (loads[ACC_OFMAP] - 1);
            p->reload_rd[ACC_OFMAP] = r->dram_reads[ACC_OFMAP] / (loads[ACC_OFMAP] - 1);
        }
    } else if (transitions > 0) {
        p->extra = to_words(c, g, ACC_OFMAP,
                            mul(o, mul(o, mul(o, g->M, g->N), t->nk - 1), g->batch), o) /
                   transitions;
    }
    int64_t tile_cycles = r->compute_cycles / max64(1, add(o, transitions, 1));
    for (int L = 0; L < 4; L++) {
        p->rd[L] = p->extra;
        for (int op = 0; op < ACC_NOPERANDS; op++)
            if (r->resident[op] && reloads(p, (acc_operand)op, L))
                p->rd[L] = add(o, p->rd[L], p->reload_rd[op]);
        p->wr[L] = r->resident[ACC_OFMAP] && reloads(p, ACC_OFMAP, L) ? wb : 0;
        int64_t busy = add(o, xfer_cycles(add(o, p->rd[L], p->wr[L]), bw_of(c)),
                           p->rd[L] > 0 ? latency_of(c) : 0);
        p->stall[L] = max64(0, busy - tile_cycles);
    }
}

/* The prologue: the first tile's resident loads, before anything computes. */
static int64_t prologue_cycles(const acc_config *c, const tile_plan *p)
{
    int64_t rd = sum3(p->first_rd);
    return rd > 0 ? xfer_cycles(rd, bw_of(c)) + latency_of(c) : 0;
}

/* Stall cycles of a GEMM layer in USER mode (equation (10)): the prologue,
 * the transitions between tiles, the folds of every tile whose streamed
 * operands' data the channel cannot bring in behind the fold before, and
 * the epilogue. */
static int64_t layer_stall(const acc_config *c, const gemm *g, const tiled *t,
                           acc_loop_order ord, const acc_result *r,
                           const int64_t tile[ACC_NOPERANDS], ovf *o)
{
    tile_plan p;
    plan_tiles(c, g, t, ord, r, tile, &p, o);
    int64_t stall = add(o, prologue_cycles(c, &p), xfer_cycles(p.last_wr, bw_of(c)));
    for (int L = 0; L < 4; L++)
        stall = add(o, stall, mul(o, p.count[L], p.stall[L]));
    bool streamed[ACC_NOPERANDS];
    bool any = false;
    for (int op = 0; op < ACC_NOPERANDS; op++)
        any |= streamed[op] = !r->resident[op];
    if (!any)
        return stall;
    /* the folds inside each class of tile (full or last along m, n, k) */
    for (int cls = 0; cls < 8; cls++) {
        int64_t cm = (cls & 1) ? 1 : t->nm - 1;
        int64_t cn = (cls & 2) ? 1 : t->nn - 1;
        int64_t ck = (cls & 4) ? 1 : t->nk - 1;
        int64_t count = mul(o, mul(o, mul(o, cm, cn), ck), g->batch);
        if (count == 0)
            continue;
        int64_t m = (cls & 1) ? t->em : t->tm, n = (cls & 2) ? t->en : t->tn,
                k = (cls & 4) ? t->ek : t->tk;
        array_cost a;
        tile_on_array(c, g, m, n, k, &a, o);
        int64_t end = tile_timeline(c, g, m, n, k, streamed, 0, NULL, o);
        stall = add(o, stall, mul(o, count, end - a.cycles));
    }
    return stall;
}

/* The elements of one tile of each operand (ifmap: the pixels it covers). */
static void tile_elements(const gemm *g, const tiled *t, int64_t tile[ACC_NOPERANDS], ovf *o)
{
    tile[ACC_IFMAP] = ifmap_tile_words(g, t->tm, t->tk);
    tile[ACC_FILTER] = mul(o, t->tk, t->tn);
    tile[ACC_OFMAP] = mul(o, t->tm, t->tn);
}

/* Fills r's work and accesses for the given tiling and order (everything
 * but time, which finish_time adds); pure arithmetic, no allocation. */
static void finish_counts(const acc_config *c, const gemm *g, const tiled *t,
                          acc_loop_order ord, acc_result *r, ovf *o)
{
    const int64_t G = g->batch;
    const int64_t size[ACC_NOPERANDS] = {g->ifmap_unique, mul(o, g->K, g->N),
                                         mul(o, g->M, g->N)};
    int64_t tile[ACC_NOPERANDS];
    tile_elements(g, t, tile, o);
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

}

/* Completes r (finish_counts) with `stall` stall cycles: total cycles,
 * utilization, bandwidth, latency, energy and EDP.  Each of these grows
 * with the stall, which lets the search rank a tiling by its value at no
 * stall before paying for its stalls. */
static void finish_time(const acc_config *c, acc_result *r, int64_t stall, ovf *o)
{
    int64_t dram = 0;
    for (int op = 0; op < ACC_NOPERANDS; op++)
        dram = add(o, dram, add(o, r->dram_reads[op], r->dram_writes[op]));
    r->stall_cycles = stall;
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
    r->energy.sram = 0;
    for (int op = 0; op < ACC_NOPERANDS; op++)
        r->energy.sram += (double)r->sram_reads[op] * acc_sram_word_pj(c, (acc_operand)op, false) +
                          (double)r->sram_writes[op] * acc_sram_word_pj(c, (acc_operand)op, true);
    r->energy.dram = (double)sum3(r->dram_reads) * (double)c->word_bytes * e->dram_read_pj_per_byte +
                     (double)sum3(r->dram_writes) * (double)c->word_bytes * e->dram_write_pj_per_byte;
    r->energy.vector = 0;
    r->energy.stat = e->static_mw * r->latency_us * 1000.0;   /* mW*us = nJ */
    r->energy_pj = r->energy.mac + r->energy.reg + r->energy.sram + r->energy.dram +
                   r->energy.stat;
    r->edp = r->energy_pj * r->latency_us;
}

/* Completes r (finish_counts) with its stalls (equation (10)), fold by fold. */
static void finish_stalls(const acc_config *c, const gemm *g, const tiled *t,
                          acc_loop_order ord, acc_result *r, ovf *o)
{
    int64_t tile[ACC_NOPERANDS];
    tile_elements(g, t, tile, o);
    finish_time(c, r, layer_stall(c, g, t, ord, r, tile, o), o);
}

/* Fills r for the given tiling and order. */
static void finish(const acc_config *c, const gemm *g, const tiled *t,
                   acc_loop_order ord, acc_result *r, ovf *o)
{
    finish_counts(c, g, t, ord, r, o);
    finish_stalls(c, g, t, ord, r, o);
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
    g->ifmap_tap_words = 0;
    g->tap_num = 0;
    g->tap_den = 1;
    for (int op = 0; op < ACC_NOPERANDS; op++)
        g->elem_bytes[op] = l->elem_bytes[op] > 0 ? l->elem_bytes[op] : c->word_bytes;
    if (l->has_conv && l->conv.channels % l->batch == 0) {
        int64_t px = mul(&o, mul(&o, l->conv.ifmap_h, l->conv.ifmap_w),
                         l->conv.channels / l->batch);
        g->ifmap_unique = min64(px, g->ifmap_unique);
        /* the band of input rows one fold of pixels (OS: R, IS: C) spans:
         * P consecutive output pixels in rows of E_w span 1 + (P - 1) / E_w
         * output rows on average, so the band is
         * (R_f + stride * (P - 1) / E_w) input rows of W * C words */
        const acc_conv *cv = &l->conv;
        int64_t ew = acc_conv_out_floor(cv->ifmap_w, cv->filt_w, cv->stride_w);
        int64_t pix = c->dataflow == ACC_DF_IS ? c->cols : c->rows;
        int64_t row = mul(&o, cv->ifmap_w, cv->channels / l->batch);
        int64_t band = add(&o, mul(&o, row, cv->filt_h),
                           mul(&o, mul(&o, row, cv->stride_h), pix - 1) / ew);
        g->ifmap_band = min64(g->ifmap_unique, band);
        /* An input word is read by about (R/s_h)(S/s_w) windows; with the
         * channels innermost in K (SCALE-Sim's im2col order), (R/s_h) of
         * those reads start a filter row and the others re-read it one
         * tap after a neighbouring tap did: the fraction
         * R (S - s_w) / (R S - s_h s_w) of the reuse, at a distance of the
         * P pixels' words of one tap. */
        int64_t rs = mul(&o, cv->filt_h, cv->filt_w), ss = mul(&o, cv->stride_h, cv->stride_w);
        if (rs > ss && cv->filt_w > cv->stride_w) {
            g->tap_num = mul(&o, cv->filt_h, cv->filt_w - cv->stride_w);
            g->tap_den = rs - ss;
            g->ifmap_tap_words = mul(&o, pix, cv->channels / l->batch);
        }
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
    acc_result cand = *r;
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
                    /* Every objective's terms grow with the stall
                     * (finish_time): a candidate that does not beat the
                     * best even without stalls never does, and its
                     * fold-level stalls need not be computed. */
                    finish_counts(c, g, &t, (acc_loop_order)ord, &cand, o);
                    finish_time(c, &cand, 0, o);
                    if (!better(s, &cand, r))
                        continue;
                    finish_stalls(c, g, &t, (acc_loop_order)ord, &cand, o);
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
    if (l->has_tiling) {
        if (!acc_model_tiling(c, opt, l, &l->tiling, r, err, errlen))
            return false;
        r->declared_M = l->declared_M;
        r->declared_K = l->declared_K;
        r->tiling_given = true;
        return true;
    }
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
    r->search = s;
    r->declared_M = l->declared_M;
    r->declared_K = l->declared_K;
    return true;
}

bool acc_trace_layer(const acc_config *c, const acc_options *opt, const acc_layer *l,
                     acc_fold_fn fn, void *ctx, acc_result *r, int64_t *end, char *err,
                     size_t errlen)
{
    *end = 0;
    if (!acc_model_layer(c, opt, l, r, err, errlen))
        return false;
    if (l->kind != ACC_LAYER_GEMM) {
        *end = r->total_cycles;
        return true;
    }
    gemm g;
    if (!check_gemm_layer(c, l, opt, &g, err, errlen))
        return false;
    ovf o = {false};
    tiled t;
    tiled_init(c, &g, r->tiling.tm, r->tiling.tn, r->tiling.tk, &t, &o);
    const int64_t tile[ACC_NOPERANDS] = {ifmap_tile_words(&g, t.tm, t.tk),
                                         mul(&o, t.tk, t.tn), mul(&o, t.tm, t.tn)};
    tile_plan p;
    plan_tiles(c, &g, &t, r->tiling.order, r, tile, &p, &o);
    bool streamed[ACC_NOPERANDS];
    for (int op = 0; op < ACC_NOPERANDS; op++)
        streamed[op] = !r->resident[op];
    /* The tiles in loop order, the same events layer_stall counts. */
    fold_sink sink = {.fn = fn, .ctx = ctx};
    memcpy(sink.tile_rd, p.first_rd, sizeof sink.tile_rd);
    int64_t idx[4] = {0, 0, 0, 0}, now = prologue_cycles(c, &p), written = 0;
    for (;;) {
        int64_t sz[3];
        for (int i = 1; i < 4; i++) {
            int d = p.dim[i];
            bool last = idx[i] == p.ext[i] - 1;
            sz[d] = d == DIM_M ? (last ? t.em : t.tm) : d == DIM_N ? (last ? t.en : t.tn)
                                                                  : (last ? t.ek : t.tk);
        }
        int64_t start = now;
        now = tile_timeline(c, &g, sz[DIM_M], sz[DIM_N], sz[DIM_K], streamed, start, &sink, &o);
        sink.tile++;
        int L = 3;
        while (L >= 0 && ++idx[L] == p.ext[L])
            idx[L--] = 0;
        /* A resident ofmap tile goes back to DRAM after its last fold: when
         * the next tile needs another output tile, or at the end. */
        if (sink.has_last && !sink.stop && r->resident[ACC_OFMAP]) {
            /* the reloads' even shares, and what rounding left to the last */
            int64_t wb = L < 0 ? r->dram_writes[ACC_OFMAP] - written
                       : reloads(&p, ACC_OFMAP, L) ? p.wr[L] : 0;
            sink.last.dram_wr = add(&o, sink.last.dram_wr, wb);
            written = add(&o, written, wb);
        }
        /* Reloads share an operand's words evenly: the last fold also
         * carries what the division left. */
        for (int op = 0; L < 0 && sink.has_last && op < ACC_NOPERANDS; op++)
            sink.last.dram_rd[op] += r->dram_reads[op] - sink.read[op];
        if (sink.has_last && !sink.stop)
            sink.stop = !fn(&sink.last, ctx);
        sink.has_last = false;
        if (L < 0) {
            now = add(&o, now, xfer_cycles(p.last_wr, bw_of(c)));
            break;
        }
        if (sink.stop)
            break;
        /* the next tile's loads went out while this one computed */
        sink.tile_load_start = start;
        for (int op = 0; op < ACC_NOPERANDS; op++)
            sink.tile_rd[op] = r->resident[op] && reloads(&p, (acc_operand)op, L)
                                   ? p.reload_rd[op] : 0;
        sink.tile_rd[ACC_OFMAP] = add(&o, sink.tile_rd[ACC_OFMAP], p.extra);
        now = add(&o, now, p.stall[L]);
    }
    if (o.hit)
        return overflowed(l, err, errlen);
    *end = now;
    return true;
}

/* ---------------------------------------------------------------- networks *//* ---------------------------------------------------------------- networks */

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
    for (int i = 0; i < n; i++) {
        total_add(total, &rs[i], &o);
        if (rs[i].kind == ACC_LAYER_GEMM && !rs[i].tiling_given)
            total->search = rs[i].search;
    }
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
            results[i].declared_M = layers[i].declared_M;
            results[i].declared_K = layers[i].declared_K;
        } else {
            if (!acc_model_layer(c, opt, &layers[i], &results[i], err, errlen))
                return false;
            if (evals)
                (*evals)++;
        }
    }
    return acc_results_sum(c, results, n, total, err, errlen);
}
