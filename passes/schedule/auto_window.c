/* passes/schedule/auto_window.c — the automatic scheduler's blocks that
 * are not contractions: elementwise kernels (merged into one long vector
 * loop), pooling and other window reductions (a spatial loop innermost
 * and vectorized, the row accumulated in a tile), depthwise convolutions
 * (along rows, or channels-last when that is cheaper), and the padding of
 * inputs read through guards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/narrow.h"
#include "passes/schedule/auto.h"

/* ---------------------------------------------------------------- everything else */

/* A max or min pooling's window (y = max(y, x[..]), at most 16 taps) is
 * unrolled: each tap of a row is a compare and a blend per vector (the
 * vector max keeps C's fmax rule for NaN), a few vectors a row, so the
 * loops' counters and branches weigh as much as the work, and the copies
 * of the taps let the next row's loads start early (3x3 of stride 1 on
 * 192x28x28: 137 to 114 us on one thread; of stride 2 on 64x111x111: 247
 * to 219 us).  So is an average pooling's (y = y + x[..]) whose row of
 * `row` outputs fits one vector (each tap one load and one add:
 * Inception-v3's 3x3 of stride 1 on 2048x8x8, 66 to 32 us); on longer
 * rows it keeps its loops (on 192x35x35 unrolled taps were slower, 73 to
 * 92 us: bench/results/pool_s17.txt), and so does a depthwise
 * convolution: its multiply-adds pipeline already.  row is 0 for a vector
 * across channels (a channels-last pooling): there every tap of a sum is
 * one load and one add per vector too, its taps unrolled (3x3 on an NHWC
 * 192x35x35: 57 to 51 us on one thread). */
static bool window_sum(const ir_stmt *st)
{
    bool guarded = false;
    return st->value->kind == IR_ADD && st->value->a->kind == IR_LOAD && st->value->a->buf == st->buf &&
           ir_dtype_is_float(st->buf->dtype) && st->value->b->kind != IR_MUL &&
           unguarded_load(st->value->b, &guarded);
}

static void unroll_window(auto_ctx *a, const ir_stmt *b, int64_t row)
{
    const ir_stmt *st = b->nbody ? b->body[0] : NULL;
    if (!st || st->kind != IR_S_STORE || !st->value ||
        (st->value->kind != IR_MAX && st->value->kind != IR_MIN &&
         !(row <= a->lanes && window_sum(st))))
        return;
    int64_t taps = 1;
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == IR_ITER_REDUCE)
            taps *= b->iters[i].extent;
    if (taps > 16)
        return;
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == IR_ITER_REDUCE && b->iters[i].extent > 1 &&
            b->iters[i].binding->kind == IR_VAR)
            auto_step(a, "unroll(%s)", b->iters[i].binding->var->name);
}

static bool channel_exceeds_l1(const auto_ctx *a, const ir_buffer *x);
static bool reads_buffer(const ir_expr *x, void *p);

/* The rows of outputs a tile of a float sum of products along rows (a
 * depthwise convolution) accumulates at a time: each vector of a row sums
 * its taps one after the other, an FMA's latency (4 cycles) apart, so a
 * row of few vectors keeps the two FMA units mostly idle; a tile of
 * several rows has TILE_SUMS sums in flight.  A 3x3 along rows of 56 (4
 * vectors): 2 rows, 332 -> 300 us on EfficientNet-B0's 144x56x56
 * (bench/results/dwrows_s22.txt).  The largest count up to TILE_SUMS /
 * (the row's vectors) that divides the rows' loop (extent `rows`), 1 for a
 * row of TILE_SUMS / 2 vectors or more; 1 also where a row shorter than a
 * vector is not a whole number of half vectors, and where the input's
 * channel exceeds L1 (pad_late then copies blocks of the rows' loop, which
 * the split would take).  A longer row that is not a whole number of half
 * vectors (28) takes the tile's rows at a pitch of whole vectors
 * (padded_row): in a tile of rows 28 apart it ran as 16 + 8 + 4 lanes,
 * its activation's last 4 one by one (242 -> 311 us, a 5x5 on 240x28x28).
 * A max, min or sum pooling whose row is one vector is such a chain too
 * (each tap a max and a blend, or an add, on the row's vector), so it
 * takes the same tile of rows, rows shorter than a vector at a pitch of
 * the next power of two (window_pitch), each row one narrow vector: a
 * 3x3x3 max pooling on 832x2x7x7 (rows of 7, 27 taps) 531 -> 240 us on
 * one thread, 2x2 stride-2 poolings to rows of 14 and 7 (VGG-11,
 * DenseNet's transitions) 5-15% faster (bench/results/pool_s25.txt).  Not
 * a window of fewer than WINDOW_CHAIN_TAPS taps: the out-of-order core
 * overlaps a short chain with the next row's already (on two threads a
 * 3-tap pass of a separated 3x3 on 256x28x28 ran 30 -> 33 us with three
 * rows a tile), nor rows of two vectors or more, whose vectors are
 * chains side by side already: on two threads S3D's 1x3x3 stride-2 max
 * poolings to rows of 28 and 56 ran 5-9% slower with 4 and 2 rows a
 * tile. */
#define TILE_SUMS 8
#define WINDOW_CHAIN_TAPS 4

/* The pitch of whole vectors a tile's rows of `row` take when a row is
 * longer than a vector and not a whole number of half vectors; 0 else
 * (rows at their own length). */
static int64_t padded_row(const auto_ctx *a, int64_t row)
{
    int64_t L = a->lanes;
    return L >= 4 && row > L && row % (L / 2) != 0 ? (row + L - 1) / L * L : 0;
}

/* A max, min or sum pooling's store (one tap of its window into the
 * output's element), the chain of dependent operations a row's vector
 * runs through. */
static bool window_chain(const ir_stmt *st)
{
    return st->value->kind == IR_MAX || st->value->kind == IR_MIN || window_sum(st);
}

/* The row pitch of a window's tile of rows `row` long (one vector or
 * less): for a row shorter than a vector (4 lanes or more) and not a power
 * of two the next power of two, so that each row is one narrower vector
 * whose lanes past the row's end stay in its own row; 0 at the row's own
 * length, -1 for rows too short for a vector of 4 lanes or longer than
 * one vector. */
static int64_t window_pitch(const auto_ctx *a, int64_t row)
{
    if (row < 4 || row > a->lanes)
        return -1;
    int64_t p = 4;
    while (p < row)
        p *= 2;
    return p == row ? 0 : p;
}

static int64_t rows_per_tile(const auto_ctx *a, const ir_stmt *b, int64_t row, int64_t rows)
{
    const ir_stmt *st = b->nbody ? b->body[0] : NULL;
    if (!st || st->kind != IR_S_STORE || !ir_dtype_is_float(st->buf->dtype) || !st->value || row < 1)
        return 1;
    if (window_chain(st)) {
        int64_t taps = 1;
        for (int i = 0; i < b->niters; i++)
            if (b->iters[i].kind == IR_ITER_REDUCE)
                taps *= b->iters[i].extent;
        if (taps < WINDOW_CHAIN_TAPS || window_pitch(a, row) < 0)
            return 1;
    } else if (st->value->kind != IR_ADD || st->value->b->kind != IR_MUL ||
               (row % (a->lanes / 2 > 0 ? a->lanes / 2 : 1) != 0 && !padded_row(a, row)))
        return 1;
    for (int i = 0; i < a->f->nparams; i++) {
        const ir_buffer *pb[2] = {a->f->params[i], NULL};
        ir_stmt_walk(b, NULL, reads_buffer, pb);
        if (pb[1] && channel_exceeds_l1(a, pb[1]))
            return 1;
    }
    int64_t vectors = (row + a->lanes - 1) / a->lanes, R = TILE_SUMS / vectors;
    while (R > 1 && rows % R != 0)
        R--;
    return R > 1 ? R : 1;
}

/* The local tile `name` (cache_write's [rows][row]) at a row pitch of
 * `pitch` elements: every access stays at columns below `row`, and the
 * columns from `row` on are only for the vector lanes past a row's end
 * (ir_buffer.row_pitch), so each row runs as whole vectors. */
typedef struct tile_find {
    const char *name;
    ir_buffer *buf;
} tile_find;

static bool find_tile(const ir_stmt *s, void *p)
{
    tile_find *t = p;
    if (s->kind == IR_S_ALLOC && s->buf && !strcmp(s->buf->name, t->name))
        t->buf = s->buf;
    return !t->buf;
}

static void pad_tile_rows(auto_ctx *a, const char *name, int64_t row, int64_t pitch)
{
    tile_find t = {name, NULL};
    ir_stmt_walk(a->f->body, find_tile, NULL, &t);
    ir_buffer *b = t.buf;
    if (!b || b->ndim < 2 || b->shape[b->ndim - 1] != row)
        return;
    b->shape[b->ndim - 1] = pitch;
    b->row_pitch = pitch;
    b->row_used = row;
}

/* A reduction whose vector loop now runs inside its reduce loops (depthwise
 * convolution, pooling): one row of outputs (or a few, rows_per_tile)
 * accumulates in a local tile, its init decomposed out of the reduce loops
 * and its write-back vectorized, so each output is stored once and the
 * fuse pass can compute the layers after it (batchnorm, relu6) in that
 * write-back. */
static void reduce_in_tile(auto_ctx *a, ir_stmt *b, const char *vname)
{
    if (!b->init)
        return;
    /* the loops from the function body down to the block, after reorder */
    sch_ctx c = {a->m, a->f, &a->quiet, {"auto", 1, 1}};
    sch_path p;
    if (!sch_find_block(&c, b->name, &p))
        return;
    const char *outer = NULL, *first_reduce = NULL;
    const ir_stmt *outer_loop = NULL;
    char reduces[512] = "";   /* the reduce loops inside outer, in order */
    int pos = 0;
    for (int k = 0; k < p.n; k++) {
        const ir_stmt *l = *p.slot[k];
        if (l->kind != IR_S_FOR)
            continue;
        const ir_itervar *it = iter_of(b, l);
        if (it && it->kind == IR_ITER_REDUCE) {
            if (!first_reduce)
                first_reduce = l->var->name;
            if (pos < (int)sizeof reduces - 64)
                pos += snprintf(reduces + pos, sizeof reduces - (size_t)pos, "%s, ", l->var->name);
        } else if (!first_reduce) {
            outer = l->var->name;
            outer_loop = l;
        }
    }
    if (!outer || !first_reduce)
        return;
    int64_t row = 0;
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].binding->kind == IR_VAR && !strcmp(b->iters[i].binding->var->name, vname))
            row = b->iters[i].extent;
    /* several rows: outer's rows split off inside the reduce loops, around
     * the vector loop, unrolled */
    int64_t R = rows_per_tile(a, b, row, extent(outer_loop));
    const char *rows_in = NULL;
    if (R > 1) {
        const char *o = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", outer));
        const char *in = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", outer));
        if (auto_step(a, "%s, %s = split(%s, %lld)", o, in, outer, (long long)R) &&
            auto_step(a, "reorder(%s%s)", reduces, in)) {
            outer = o;
            rows_in = in;
        }
    }
    const char *tile = auto_fresh(a, ir_sprintf(a->m->arena, "%s_tile", b->body[0]->buf->name));
    if (!auto_step(a, "%s = cache_write(%s, %s)", tile, b->name, outer))
        return;
    int64_t pitch = window_chain(b->body[0]) ? window_pitch(a, row) : padded_row(a, row);
    if (rows_in && pitch > 0)
        pad_tile_rows(a, tile, row, pitch);
    if (auto_step(a, "decompose_reduction(%s, %s)", b->name, first_reduce))
        auto_step(a, "vectorize(%s_init)", vname);
    auto_step(a, "vectorize(%s_%s_out)", vname, tile);
    if (rows_in)
        auto_step(a, "unroll(%s)", rows_in);
    unroll_window(a, b, row);
}

/* ---------------------------------------------------------------- depthwise convolutions */

/* A depthwise convolution Y[.., f, p, q] += X[.., f, p + r, q + s] *
 * W[f, .., r, s] (or Y[.., p, q, f] += X[.., p + r, q + s, f] * W[..],
 * channels innermost: q is then the index before f): every reduce
 * variable is read by both operands, and one spatial variable f (the
 * channel) indexes X, W and Y, X's dimension plainly. */
typedef struct dw_info {
    const ir_expr *X, *W;
    const ir_var *vf, *vq;
    int xdim;              /* X's dimension indexed by f */
    int64_t F, Q, taps;
    bool bytes;            /* an i32 sum of widened-byte products (int8) */
} dw_info;

/* An i32 sum of products of widened bytes (an int8 depthwise convolution,
 * int8.c): its lanes are exact i32 multiply-adds in the interpreter's order
 * whichever way the loops run, so it takes a float one's schedule. */
static bool depthwise_byte_sum(const ir_stmt *st)
{
    return st->buf->dtype == IR_I32 && sch_int8_vector_store(st);
}

static bool classify_depthwise(const ir_stmt *b, dw_info *o)
{
    const ir_stmt *body = b->nbody ? b->body[0] : NULL;
    if (!b->init || !body || body->kind != IR_S_STORE || !body->value ||
        body->value->kind != IR_ADD || body->value->a->kind != IR_LOAD ||
        body->value->a->buf != body->buf || body->value->b->kind != IR_MUL ||
        !(ir_dtype_is_float(body->buf->dtype) || depthwise_byte_sum(body)) || body->nargs < 2 ||
        body->args[body->nargs - 1]->kind != IR_VAR)
        return false;
    bool g = false;
    const ir_expr *o1 = unguarded_load(body->value->b->a, &g), *o2 = unguarded_load(body->value->b->b, &g);
    if (!o1 || !o2)
        return false;
    o->bytes = !ir_dtype_is_float(body->buf->dtype);
    o->vq = body->args[body->nargs - 1]->var;
    /* a float output that holds its channels innermost (NHWC): both
     * operands read its last index, and the row is the index before */
    if (!o->bytes && load_uses(o1, o->vq) && load_uses(o2, o->vq) && body->nargs >= 3 &&
        body->args[body->nargs - 2]->kind == IR_VAR)
        o->vq = body->args[body->nargs - 2]->var;
    o->X = load_uses(o1, o->vq) ? o1 : o2;
    o->W = o->X == o1 ? o2 : o1;
    if (load_uses(o->W, o->vq) || !load_uses(o->X, o->vq))
        return false;
    o->vf = NULL;
    o->taps = 1;
    for (int i = 0; i < b->niters; i++) {
        const ir_itervar *it = &b->iters[i];
        bool inX = load_uses(o->X, it->var), inW = load_uses(o->W, it->var);
        if (it->var == o->vq) {
            o->Q = it->extent;
            continue;
        }
        if (it->kind == IR_ITER_REDUCE) {
            if (it->extent > 1 && !(inX && inW))
                return false;
            o->taps *= it->extent;
            continue;
        }
        if (!inW || it->extent == 1)
            continue;
        if (o->vf || !inX)
            return false;   /* W reads one spatial variable, the channel */
        o->vf = it->var;
        o->F = it->extent;
    }
    if (!o->vf)
        return false;
    o->xdim = -1;
    for (int d = 0; d < o->X->nargs; d++)
        if (o->X->args[d]->kind == IR_VAR && o->X->args[d]->var == o->vf)
            o->xdim = d;
        else if (load_uses_expr(o->X->args[d], o->vf))
            return false;
    return o->xdim >= 0;
}

static bool has_reduction(const ir_stmt *s, void *p);

/* Whether an expression computes a long chain of dependent operations
 * per element: exp, sigmoid, tanh, erf and the like, or a division by a
 * value that is not a constant (SiLU, GELU; not ReLU6, not hardswish's
 * division by 6). */
static bool transcendental(const ir_expr *x, void *p)
{
    bool chain_fn = x->kind == IR_CALL &&
                    (x->fn == IR_FN_EXP || x->fn == IR_FN_LOG || x->fn == IR_FN_TANH ||
                     x->fn == IR_FN_ERF || x->fn == IR_FN_SIGMOID || x->fn == IR_FN_POW);
    if (chain_fn || (x->kind == IR_DIV && ir_dtype_is_float(x->dtype) && x->b->kind != IR_FLOAT))
        *(bool *)p = true;
    return !*(bool *)p;
}

/* Whether call ci writes a temporary that the chain of calls after it,
 * each the only reader of the one before (a bias, then an activation),
 * computes a transcendental activation of: the fuse pass computes such a
 * chain in ci's write-back, after each row's or position's taps. */
static bool activation_after_call(const ir_module *m, int ci, int depth)
{
    const ir_graph_call *C = &m->graph.calls[ci];
    for (int j = 0; j < C->nargs && depth < 4; j++) {
        if (C->args[j]->role != IR_BUF_TEMP)
            continue;
        int readers = 0, reader = -1;
        for (int c = ci + 1; c < m->graph.ncalls; c++)
            for (int k = 0; k < m->graph.calls[c].nargs; k++)
                if (m->graph.calls[c].args[k] == C->args[j]) {
                    readers++;
                    reader = c;
                    break;
                }
        if (readers != 1)
            continue;
        bool t = false, red = false;
        const ir_stmt *body = m->graph.calls[reader].fn->body;
        ir_stmt_walk(body, has_reduction, NULL, &red);
        if (red)
            continue;
        ir_stmt_walk(body, NULL, transcendental, &t);
        if (t || activation_after_call(m, reader, depth + 1))
            return true;
    }
    return false;
}

static bool activation_after(const ir_module *m, const ir_func *f)
{
    for (int ci = 0; ci < m->graph.ncalls; ci++)
        if (m->graph.calls[ci].fn == f && activation_after_call(m, ci, 0))
            return true;
    return false;
}

/* Whether a depthwise convolution runs faster with its channels in the
 * vectors (X copied channels-last by pad, W packed, Y written back a
 * channel apart, the row's Q outputs unrolled) than along its output
 * rows.  Both as processor cycles per output, fitted to one-thread
 * measurements of 3x3 and 5x5 kernels of stride 1 and 2 on 7x7 and 14x14
 * maps with ReLU, ReLU6 and SiLU after them (Zen 4; bench/results/
 * window_s10.txt):
 *   along rows, a row of Q outputs is a chunk or a few of vectors per tap
 *   (Q / L whole vectors plus one of 8 and one of 4 lanes where they fit,
 *   then scalars, or whole vectors past the row's end when fewer: the
 *   vectorizer's, ir/vectorize.c: 14 as one of 16 lanes, 7 as one of 8),
 *   and the taps of a chunk are one chain of dependent multiply-adds: the
 *   processor overlaps about two rows, 1.9 cycles per tap and chunk, and
 *   a transcendental activation in the write-back (SiLU) adds its own
 *   chain, 16 cycles a row; the row's padded copy (split into a phase per
 *   column of the stride) costs 0.44 cycles per output per square of a
 *   padded row's length over an output row's;
 *   along channels, the Q outputs of a row are Q independent chains (0.5
 *   cycles per vector multiply-add), the copies cost 0.5 cycles per
 *   output per square of a padded row's length over an output row's (1.7
 *   for 5x5 on 14x14, 5.9 for 5x5 of stride 2 from 14x14 to 7x7), the
 *   transposed write-back 1.1, and the activation 0.7.
 * (One thread: 5x5 on 672x14x14 with SiLU, rows 225 us against channels
 * 175; of stride 2, 128 against 81; 3x3 on 960x7x7 with SiLU, 78 against
 * 49, with ReLU6 35 against 36; 3x3 on 384x14x14 with ReLU6 40 against
 * 60.  Session 16, ReLU6, rows against channels: 3x3 on 960x7x7 47 against
 * 26 us, of stride 2 from 576x14x14 40 against 22, which the rows' copy
 * term decides; 3x3 on 384x14x14 39 against 47 and of stride 2 from
 * 192x28x28 49 against 71-130 keep their rows; bench/results/
 * mobile_s16.txt.)  Rows longer than a vector keep their rows: the unrolled outputs
 * would take more registers than there are (28 of them: 3x3 on 28x28
 * ran 2.3 times slower). */
/* The outputs of a row that a channels-last depthwise convolution
 * accumulates at a time, one vector of channels each, unrolled: the whole
 * row when it is shorter than a vector, else the largest divisor of Q
 * from 4 to 14 (the accumulators and a weight vector in the registers),
 * 0 if none. */
static int64_t depthwise_row_chunk(const auto_ctx *a, int64_t Q)
{
    if (Q < a->lanes)
        return Q;
    for (int64_t c = 14; c >= 4; c--)
        if (Q % c == 0)
            return c;
    return 0;
}

static bool depthwise_channels_last(const auto_ctx *a, const dw_info *o)
{
    int L = a->lanes;
    if (o->F % L != 0)
        return false;
    /* X has its channels innermost already (an NHWC tensor, or the
     * channels-last copy pad made): along rows, every tap would gather a
     * row's elements a channel apart (ConvNeXt's 7x7 on 96x56x56 read
     * from an NHWC permute: 3.2 ms on one thread) */
    if (o->xdim == o->X->nargs - 1)
        return depthwise_row_chunk(a, o->Q) > 0;
    if (o->Q >= L)
        return false;
    /* int8: along rows, each row's few vectors also compute the write-back's
     * requantization (dequantize, bias, clip, quantize: a division, rint,
     * clamps, narrowing) per vector, where channels-last computes it on
     * whole vectors of 16 channels; every 3x3 of QDQ MobileNetV2 on 14x14
     * and 7x7 (stride 1 and 2, 1 thread) ran 1.8-4.5 times faster
     * channels-last, with its quantize then a kernel of its own (14x14:
     * rows 77 us, channels 38 + 8; 7x7: 66 against 17 + 5;
     * bench/results/int8b_s12.txt) */
    if (o->bytes)
        return true;
    int64_t r = o->Q % L;
    int64_t chunks = o->Q / L + (r >= 8) + ((r % 8) >= 4) + r % 4;
    int64_t lw = L;
    while (lw / 2 >= o->Q && lw > 4)
        lw /= 2;
    if ((o->Q + lw - 1) / lw < chunks)   /* whole vectors past the row's end (ir/vectorize.c) */
        chunks = (o->Q + lw - 1) / lw;
    bool act = activation_after(a->m, a->f);
    /* the padded row: stride * Q + k - stride, k the square kernel's side */
    ir_affine x;
    int64_t st = 1;
    if (ir_affine_of(o->X->args[o->X->nargs - 1], &x) && ir_affine_coef(&x, o->vq) > 1)
        st = ir_affine_coef(&x, o->vq);
    double k = 1;
    while ((k + 1) * (k + 1) <= (double)o->taps)
        k++;
    double side = ((double)st * (double)o->Q + k - (double)st) / (double)o->Q;
    double rows = (1.9 * (double)o->taps * (double)chunks + (act ? 16.0 : 0.0)) / (double)o->Q +
                  0.44 * side * side;
    double channels = 0.5 * (double)o->taps / L + 0.5 * side * side + 1.1 + (act ? 0.7 : 0.0);
    return channels * 1.15 < rows;   /* near ties keep the rows */
}

/* The roles of a window reduction's loops (indices into its nest): the
 * channel's f, the output row's q, the first reduce loop (a tap) and the
 * last spatial loop other than f and q; false when a loop binds no
 * iteration variable or one of the first, channel or tap, is missing. */
typedef struct window_loops {
    int f, q, first_reduce, last_spatial;
} window_loops;

static bool window_loops_of(const ir_stmt *b, const nest *ns, const ir_var *vf, const ir_var *vq,
                            window_loops *w)
{
    *w = (window_loops){-1, -1, -1, -1};
    for (int i = 0; i < ns->n; i++) {
        const ir_itervar *it = iter_of(b, ns->loops[i]);
        if (!it)
            return false;
        if (it->var == vf)
            w->f = i;
        else if (it->var == vq)
            w->q = i;
        else if (it->kind == IR_ITER_REDUCE) {
            if (w->first_reduce < 0)
                w->first_reduce = i;
        } else
            w->last_spatial = i;
    }
    return w->f >= 0 && w->first_reduce >= 0;
}

static bool pads_per_block(const auto_ctx *a, const ir_buffer *x);

/* The padded copy of x that a channels-last depthwise convolution reads
 * one block of channels at a time (depthwise_pads_per_block): at the
 * loop of the blocks, or whole when pad cannot copy there. */
static void pad_per_block(auto_ctx *a, const ir_buffer *x, const char *fo)
{
    const char *name = auto_fresh(a, ir_sprintf(a->m->arena, "%s_pad", x->name));
    if (!fo || !auto_step(a, "%s = pad(%s, %s)", name, x->name, fo))
        auto_step(a, "%s = pad(%s)", name, x->name);
}

bool schedule_depthwise(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    dw_info o;
    if (!classify_depthwise(b, &o) || o.xdim != o.X->nargs - 1 || !depthwise_channels_last(a, &o))
        return false;
    window_loops w;
    if (!window_loops_of(b, ns, o.vf, o.vq, &w) || w.q < 0 || w.last_spatial < 0)
        return false;
    /* x padded here, per block of channels (pad_inputs left it) */
    const ir_buffer *per_block = pads_per_block(a, o.X->buf) ? o.X->buf : NULL;
    int fl = w.f, ql = w.q, first_reduce = w.first_reduce, last_spatial = w.last_spatial;
    const char *fn = ns->loops[fl]->var->name, *qn = ns->loops[ql]->var->name;
    const char *fo = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", fn));
    const char *fi = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", fn));
    const char *tile_at = ns->loops[last_spatial]->var->name;
    /* (regroup: the reads index the channels vf_o * L + vf_i, a block per
     * iteration of f_o that pad can copy at f_o) */
    if (!auto_step(a, "%s, %s = %s(%s, %d)", fo, fi, per_block ? "regroup" : "split", fn, a->lanes)) {
        if (per_block)
            pad_per_block(a, per_block, NULL);
        return true;
    }
    /* a row longer than a vector: chunks of it, each its own tile */
    int64_t chunk = depthwise_row_chunk(a, o.Q);
    const char *qo = NULL;
    if (chunk < o.Q) {
        qo = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", qn));
        const char *qi = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", qn));
        if (!auto_step(a, "%s, %s = split(%s, %lld)", qo, qi, qn, (long long)chunk))
            return true;
        qn = qi;
        tile_at = qo;
    }
    /* f_o, the other spatial loops (q_o), the reduce loops, q, f_i */
    char order[1024];
    int pos = snprintf(order, sizeof order, "%s", fo);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < ns->n; i++) {
            const ir_itervar *it = iter_of(b, ns->loops[i]);
            if (i == fl || i == ql || (it->kind == IR_ITER_REDUCE) != (pass == 1))
                continue;
            pos += snprintf(order + pos, sizeof order - (size_t)pos, ", %s", ns->loops[i]->var->name);
        }
        if (pass == 0 && qo)
            pos += snprintf(order + pos, sizeof order - (size_t)pos, ", %s", qo);
    }
    snprintf(order + pos, sizeof order - (size_t)pos, ", %s, %s", qn, fi);
    bool reordered = auto_step(a, "reorder(%s)", order);
    if (per_block)
        pad_per_block(a, per_block, reordered ? fo : NULL);
    if (!reordered)
        return true;
    const char *wp = auto_fresh(a, ir_sprintf(a->m->arena, "%sp", o.W->buf->name));
    bool packed = auto_step(a, "%s = cache_read(%s, %s)", wp, o.W->buf->name, fo);
    const char *tile = auto_fresh(a, ir_sprintf(a->m->arena, "%s_tile", b->body[0]->buf->name));
    if (auto_step(a, "%s = cache_write(%s, %s)", tile, b->name, tile_at) &&
        auto_step(a, "decompose_reduction(%s, %s)", b->name, ns->loops[first_reduce]->var->name)) {
        auto_step(a, "vectorize(%s_init)", fi);
        auto_step(a, "unroll(%s)", qn);
        auto_step(a, "vectorize(%s_%s_out)", fi, tile);
    }
    auto_step(a, "vectorize(%s)", fi);
    if (packed)
        auto_step(a, "vectorize(%s_%s)", fi, wp);
    if (a->threads > 1 && o.F / a->lanes >= a->threads)
        auto_step(a, "parallel(%s)", fo);
    return true;
}

/* ---------------------------------------------------------------- pooling of bytes, channels-last */

/* A max or min pooling Y[.., f, p, q] = max(Y[.., f, p, q], X[.., f, ..]),
 * X's read guarded or not: f (the channel) is the spatial variable that
 * indexes X plainly in its latest such dimension (X's last once pad has
 * copied it channels-last), and nowhere else in X; q indexes Y's last
 * dimension; every reduce variable (a tap of the window) indexes X. */
typedef struct pool_info {
    const ir_expr *X;
    const ir_var *vf, *vq;
    int xdim;              /* X's dimension indexed by f */
    int64_t F, Q;
} pool_info;

static bool classify_pool(const ir_stmt *b, pool_info *o)
{
    const ir_stmt *st = b->nbody ? b->body[0] : NULL;
    if (!b->init || !st || st->kind != IR_S_STORE || !st->value ||
        (st->value->kind != IR_MAX && st->value->kind != IR_MIN) || st->nargs < 2 ||
        st->args[st->nargs - 1]->kind != IR_VAR)
        return false;
    const ir_expr *acc = st->value->a, *e = st->value->b;
    if (e->kind == IR_LOAD && e->buf == st->buf) {
        const ir_expr *t = acc;
        acc = e;
        e = t;
    }
    if (acc->kind != IR_LOAD || acc->buf != st->buf || acc->nargs != st->nargs)
        return false;
    for (int d = 0; d < st->nargs; d++)
        if (!ir_expr_equal(acc->args[d], st->args[d]))
            return false;
    bool g = false;
    o->X = unguarded_load(e, &g);
    if (!o->X || o->X->buf == st->buf || o->X->nargs < 2)
        return false;
    o->vq = st->args[st->nargs - 1]->var;
    o->vf = NULL;
    o->xdim = -1;
    o->Q = 0;
    for (int i = 0; i < b->niters; i++) {
        const ir_itervar *it = &b->iters[i];
        if (it->var == o->vq)
            o->Q = it->extent;
        if (it->kind == IR_ITER_REDUCE && it->extent > 1 && !load_uses(o->X, it->var))
            return false;
        if (it->kind != IR_ITER_SPATIAL || it->extent == 1 || it->var == o->vq)
            continue;
        int plain = -1, n = 0;
        for (int d = 0; d < o->X->nargs; d++)
            if (uses(o->X->args[d], it->var)) {
                n++;
                if (o->X->args[d]->kind == IR_VAR)
                    plain = d;
            }
        if (n == 1 && plain >= 0 && plain > o->xdim) {
            o->xdim = plain;
            o->vf = it->var;
            o->F = it->extent;
        }
    }
    if (!o->vf || !o->Q)
        return false;
    for (int d = 0; d < st->nargs; d++)
        if (st->args[d]->kind == IR_VAR && st->args[d]->var == o->vf)
            return true;
    return false;
}

/* Whether a pooling of bytes runs with its channels in the vectors: when
 * its output row is shorter than a vector of its bytes (64 lanes), along
 * rows every row is one vector partly used, and its threads, split along
 * the channels, write the rows' bytes a channel apart into the
 * channels-last tensor that the int8 convolutions after it read (layout):
 * the two threads then share every cache line of the output.
 * Channels-last, X copied in that order by pad (or, once layout stores X
 * so, read in place), each output is one vector of 64 channels, the taps
 * a max each, and the threads take output rows.  QDQ ResNet-18's 3x3 of
 * stride 2 on 64x112x112 (bench/results/int8_s13.txt).
 * Not when a later kernel reduces over the pool's output in place (1x1
 * convolutions reading it NCHW, which layout then keeps): the pool's
 * write-back would store each output's 64 channels a plane apart, byte by
 * byte (QDQ ResNet-50's pool 338 -> 895 us at one thread;
 * bench/results/int8_s14.txt). */
static bool read_after(const auto_ctx *a, const ir_func *f, bool outputs_only,
                       bool (*reader)(const auto_ctx *, const ir_func *, const ir_buffer *));
static bool reduces_in_place(const auto_ctx *a, const ir_func *r, const ir_buffer *x);

static bool pool_channels_last(const auto_ctx *a, const ir_stmt *b, const pool_info *o)
{
    int vl = a->lanes * 4;
    return ir_dtype_size(b->body[0]->buf->dtype) == 1 && o->F % vl == 0 && o->Q < vl &&
           !read_after(a, a->f, true, reduces_in_place);
}

/* The end of a channels-last pooling's schedule: the outputs' channels
 * (the vector loop fi) accumulate in a tile at loop at, its init out of
 * the taps (first_reduce), the taps unrolled, the threads on loop par
 * (NULL: one thread). */
static void channels_in_tile(auto_ctx *a, ir_stmt *b, const char *at, const char *first_reduce, const char *fi,
                             const char *par)
{
    const char *tile = auto_fresh(a, ir_sprintf(a->m->arena, "%s_tile", b->body[0]->buf->name));
    if (auto_step(a, "%s = cache_write(%s, %s)", tile, b->name, at) &&
        auto_step(a, "decompose_reduction(%s, %s)", b->name, first_reduce)) {
        auto_step(a, "vectorize(%s_init)", fi);
        auto_step(a, "vectorize(%s_%s_out)", fi, tile);
    }
    auto_step(a, "vectorize(%s)", fi);
    unroll_window(a, b, 0);
    if (a->threads > 1 && par)
        auto_step(a, "parallel(%s)", par);
}

static bool schedule_pool_channels_last(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    pool_info o;
    if (!classify_pool(b, &o) || !pool_channels_last(a, b, &o))
        return false;
    window_loops w;
    if (!window_loops_of(b, ns, o.vf, o.vq, &w) || w.q < 0)
        return false;
    int fl = w.f, first_reduce = w.first_reduce;
    /* the tile is one output: at the last spatial loop, the row's (q) */
    int last_spatial = w.q > w.last_spatial ? w.q : w.last_spatial, first_par = -1;
    for (int i = 0; i < ns->n; i++)
        if (i != fl && i < first_reduce && first_par < 0 && extent(ns->loops[i]) >= a->threads)
            first_par = i;
    if (w.last_spatial > first_reduce)
        return false;   /* a spatial loop among the taps: not a plain pooling nest */
    const char *fn = ns->loops[fl]->var->name;
    const char *fo = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", fn));
    const char *fi = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", fn));
    if (!auto_step(a, "%s, %s = split(%s, %d)", fo, fi, fn, a->lanes * 4))
        return true;
    /* f_o, the other spatial loops, the taps, f_i */
    char order[1024];
    int pos = snprintf(order, sizeof order, "%s", fo);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < ns->n; i++) {
            const ir_itervar *it = iter_of(b, ns->loops[i]);
            if (i != fl && (it->kind == IR_ITER_REDUCE) == (pass == 1))
                pos += snprintf(order + pos, sizeof order - (size_t)pos, ", %s", ns->loops[i]->var->name);
        }
    snprintf(order + pos, sizeof order - (size_t)pos, ", %s", fi);
    if (!auto_step(a, "reorder(%s)", order))
        return true;
    /* one output's vector of channels accumulates in a tile */
    channels_in_tile(a, b, ns->loops[last_spatial]->var->name, ns->loops[first_reduce]->var->name, fi,
                     first_par >= 0 ? ns->loops[first_par]->var->name : NULL);
    return true;
}

/* ---------------------------------------------------------------- float pooling, channels-last */

static const ir_buffer *channels_last_pool_input(const auto_ctx *a, const ir_stmt *b, const ir_var **cv);

/* Splits loop k of a window reduction's nest (spatial, outside the taps,
 * which start at loop first_reduce) by factor into *o and *i, and orders
 * the nest: the other spatial loops, *o, the taps, *i (a tile of *i's
 * outputs at *o accumulates over the taps); *par is the outermost of the
 * other spatial loops with an iteration per thread (NULL: none).  False
 * when a step is refused. */
static bool split_inside_taps(auto_ctx *a, const nest *ns, int k, int first_reduce, int64_t factor,
                              const char **o, const char **i, const char **par)
{
    const char *kn = ns->loops[k]->var->name;
    *o = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", kn));
    *i = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", kn));
    *par = NULL;
    if (!auto_step(a, "%s, %s = split(%s, %lld)", *o, *i, kn, (long long)factor))
        return false;
    char order[1024];
    int pos = 0;
    for (int l = 0; l < first_reduce; l++)
        if (l != k) {
            pos += snprintf(order + pos, sizeof order - (size_t)pos, "%s, ", ns->loops[l]->var->name);
            if (!*par && extent(ns->loops[l]) >= a->threads)
                *par = ns->loops[l]->var->name;
        }
    pos += snprintf(order + pos, sizeof order - (size_t)pos, "%s", *o);
    for (int l = first_reduce; l < ns->n; l++)
        if (l != k)
            pos += snprintf(order + pos, sizeof order - (size_t)pos, ", %s", ns->loops[l]->var->name);
    snprintf(order + pos, sizeof order - (size_t)pos, ", %s", *i);
    return auto_step(a, "reorder(%s)", order);
}

/* A float pooling whose input and output hold their channels innermost
 * (channels_last_pool_input): its channels split into blocks of up to 4
 * vectors (c_o, c_i), c_o inside the output's other loops and outside the
 * taps, so each output's block of channels accumulates in registers (a
 * tile of up to 4 vectors) over the taps, unrolled (at most 16: each one
 * load and a max or an add per vector), and is stored once; the threads
 * take the outermost loop with an iteration each.  Along all the channels
 * at each output instead, every tap read and wrote back a tile of all of
 * them: with the layout chain's NHWC pools (helper chain, session 18),
 * Inception-v3's 3x3 average pooling on 768x17x17 170 to 53 us on one
 * thread, its 14 pools 2237 to 964 us, SqueezeNet's 3 max pools 192 to
 * 118 (bench/results/window_s18.txt). */
static bool schedule_pool_nhwc(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    const ir_var *c = NULL;
    if (!channels_last_pool_input(a, b, &c))
        return false;
    window_loops w;
    if (!window_loops_of(b, ns, c, NULL, &w) || w.last_spatial > w.first_reduce)
        return false;
    int64_t F = extent(ns->loops[w.f]), block = 4 * a->lanes;
    while (F % block != 0)
        block /= 2;
    /* (names now: reorder moves variables between loop nodes) */
    const char *first_reduce = ns->loops[w.first_reduce]->var->name, *fo, *fi, *par;
    if (split_inside_taps(a, ns, w.f, w.first_reduce, block, &fo, &fi, &par))
        channels_in_tile(a, b, fo, first_reduce, fi, par);
    return true;
}

/* ---------------------------------------------------------------- float pooling along long rows */

/* A float max, min or sum pooling along rows (Y[.., p, q] = max(Y, X[..])
 * or Y + X[..], q indexing Y's last dimension) whose row q is longer than
 * two vectors, with at most 16 taps: each vector of a row accumulates in
 * registers over the taps, unrolled, and is stored once: q splits into
 * vectors (q_o, q_i), q_o outside the taps and q_i inside them, the tile
 * one vector at q_o; a row that is not a whole number of vectors has its
 * last part (56 = 3 x 16 + 8) partitioned off after every nest's schedule
 * (its tile then 8 lanes, not 16 lanes guarded).  With the whole row the
 * tile (reduce_in_tile), every tap read and wrote back the row in memory
 * between its loads: VGG-11's 2x2 stride-2 max poolings on 64x224x224 and
 * 128x112x112, one thread, 1239 -> 1095 and 539 -> 417 us, two threads
 * 623 -> 564 and 311 -> 255 (bench/results/pool_s23.txt).  Rows of up to two vectors keep the whole
 * row's tile: its vectors stay in registers there, and a tail tile costs
 * more than it saves (28 = 16 + 8 + 4: 244 -> 272 us on 256x56x56).  So
 * does a padded pooling (its taps read a copy, pad_late): DenseNet's and
 * ShuffleNet's 3x3 of stride 2 on 64x112x112 ran 3-5% slower so. */
static bool schedule_pool_rows(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    const ir_stmt *st = b->nbody == 1 ? b->body[0] : NULL;
    if (!b->init || !st || st->kind != IR_S_STORE || st->buf->dtype != IR_F32 || !st->value || st->nargs < 2 ||
        st->args[st->nargs - 1]->kind != IR_VAR ||
        (st->value->kind != IR_MAX && st->value->kind != IR_MIN && !window_sum(st)))
        return false;
    const ir_var *vq = st->args[st->nargs - 1]->var;
    int ql = -1, first_reduce = -1, last_spatial = -1;
    int64_t taps = 1;
    for (int i = 0; i < ns->n; i++) {
        const ir_itervar *it = iter_of(b, ns->loops[i]);
        if (!it || ns->loops[i]->for_kind != IR_FOR_SERIAL)
            return false;
        if (it->var == vq && it->kind == IR_ITER_SPATIAL)
            ql = i;
        else if (it->kind == IR_ITER_REDUCE) {
            taps *= it->extent;
            if (first_reduce < 0)
                first_reduce = i;
        } else
            last_spatial = i;
    }
    int64_t Q = ql >= 0 ? extent(ns->loops[ql]) : 0;
    if (ql < 0 || first_reduce < 0 || last_spatial > first_reduce || taps > 16 || Q <= 2 * a->lanes)
        return false;
    /* q indexes the store's last dimension alone */
    for (int d = 0; d + 1 < st->nargs; d++)
        if (uses(st->args[d], vq))
            return false;
    /* the taps read the input unguarded (no padding) */
    const ir_expr *e = st->value->a->kind == IR_LOAD && st->value->a->buf == st->buf ? st->value->b : st->value->a;
    bool guarded = false;
    if (!unguarded_load(e, &guarded) || guarded)
        return false;
    const char *first = ns->loops[first_reduce]->var->name, *qo, *qi, *par;
    if (!split_inside_taps(a, ns, ql, first_reduce, a->lanes, &qo, &qi, &par))
        return true;
    int64_t work = 1;
    for (int i = 0; i < ns->n; i++)
        work *= extent(ns->loops[i]);
    channels_in_tile(a, b, qo, first, qi, work >= 16384 ? par : NULL);
    if (Q % a->lanes != 0)
        auto_partition_late(a, qo, Q / a->lanes);
    return true;
}

/* ---------------------------------------------------------------- merged dimensions */

/* (before or after decompose_reduction took its init out) */
static bool has_reduction(const ir_stmt *s, void *p)
{
    if (s->kind == IR_S_BLOCK)
        for (int i = 0; i < s->niters; i++)
            if (s->iters[i].kind == IR_ITER_REDUCE)
                *(bool *)p = true;
    return true;
}

static bool guarded_read(const ir_expr *x, void *p);

/* Whether the fuse pass may compute call ci's kernel in the tile of the
 * call that writes one of its inputs: that input is a temporary which one
 * earlier call writes and nothing else reads, and the writer has a tile
 * (a reduction: every contraction's schedule writes one back) or is itself
 * computed in one. */
static bool may_fuse(const ir_module *m, int ci, int depth)
{
    const ir_graph_call *C = &m->graph.calls[ci];
    for (int p = 0; p < C->nargs && depth < 16; p++) {
        const ir_buffer *T = C->args[p];
        if (T->role != IR_BUF_TEMP)
            continue;
        int pi = -1;
        bool other = false;
        for (int c = 0; c < m->graph.ncalls; c++)
            for (int k = 0; c != ci && k < m->graph.calls[c].nargs; k++)
                if (m->graph.calls[c].args[k] == T) {
                    if (c < ci && pi == -1)
                        pi = c;
                    else
                        other = true;
                }
        if (pi < 0 || other)
            continue;
        bool red = false;
        ir_stmt_walk(m->graph.calls[pi].fn->body, has_reduction, NULL, &red);
        if (red || may_fuse(m, pi, depth + 1))
            return true;
    }
    return false;
}

static bool reader_pads_late(const auto_ctx *a, const ir_func *r, const ir_buffer *x);

/* Whether a later call reads a temporary that a call of f writes (one of
 * f's outputs when outputs_only) where reader(a, R, p) holds of the
 * reader's function R and its parameter p bound to it. */
static bool read_after(const auto_ctx *a, const ir_func *f, bool outputs_only,
                       bool (*reader)(const auto_ctx *, const ir_func *, const ir_buffer *))
{
    const ir_module *m = a->m;
    for (int ci = 0; ci < m->graph.ncalls; ci++) {
        if (m->graph.calls[ci].fn != f)
            continue;
        for (int c = ci + 1; c < m->graph.ncalls; c++) {
            const ir_graph_call *R = &m->graph.calls[c];
            for (int k = 0; k < R->nargs && k < R->fn->nparams; k++)
                for (int j = 0; j < m->graph.calls[ci].nargs; j++) {
                    if (R->args[k] != m->graph.calls[ci].args[j] || R->args[k]->role != IR_BUF_TEMP ||
                        (outputs_only && (j >= f->nparams || !ir_stmt_stores_to(f->body, f->params[j]))))
                        continue;
                    if (reader(a, R->fn, R->fn->params[k]))
                        return true;
                }
        }
    }
    return false;
}

/* A reader that pads x now, as a whole (not late, one slice at a time). */
static bool read_in_place_channels_last(const auto_ctx *a, const ir_buffer *x);

static bool pads_now(const auto_ctx *a, const ir_func *r, const ir_buffer *x)
{
    const ir_buffer *pb[2] = {x, NULL};
    ir_stmt_walk(r->body, NULL, guarded_read, pb);
    auto_ctx ra = *a;
    ra.f = (ir_func *)r;
    return pb[1] && !reader_pads_late(a, r, x) && !read_in_place_channels_last(&ra, x) &&
           !pads_per_block(&ra, x);
}

/* Whether a call of f writes a temporary that a later call reads through
 * a padding guard (the layout pass would store it with a border, in f's
 * own dimensions).  Not a reader that will pad it late, one slice at a
 * time (an int8 depthwise convolution's channel): layout gives no border
 * for those copies, so merging costs the reader nothing. */
static bool output_padded(const auto_ctx *a, const ir_func *f)
{
    return read_after(a, f, false, pads_now);
}

/* A reader that reads x in place (never through a padding guard, so it
 * makes no copy of x) in a kernel with a reduction: a 1x1 convolution's
 * dot products over x's channels, or a global pooling. */
static bool reduces_in_place(const auto_ctx *a, const ir_func *r, const ir_buffer *x)
{
    (void)a;
    const ir_buffer *pb[2] = {x, NULL};
    ir_stmt_walk(r->body, NULL, guarded_read, pb);
    bool red = false;
    ir_stmt_walk(r->body, has_reduction, NULL, &red);
    return !pb[1] && red;
}

/* An elementwise kernel that stays a kernel of its own (the fuse pass
 * will not compute it in a tile), whose output no reader pads: its loops
 * merged from the innermost out while each merge holds, so its vectors run
 * along the whole contiguous run of its buffers (a 7x7 map's 49 elements
 * per channel, or all of 960x7x7 when every operand has that shape)
 * instead of 7 elements of a row.  The nest is collected again after. */
static bool merge_elementwise(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    if (b->init || ns->n < 2 || !b->nbody || !b->body[0] || !sch_int8_vector_store(b->body[0]))
        return false;
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind != IR_ITER_SPATIAL)
            return false;
    bool fusable = false, called = false;
    for (int c = 0; c < a->m->graph.ncalls && !fusable; c++)
        if (a->m->graph.calls[c].fn == a->f) {
            called = true;
            fusable = may_fuse(a->m, c, 0);
        }
    /* A padded reader of the output reads it with a border in place (the
     * layout pass), which needs the output's own dimensions: that saves
     * the reader a copy worth more than merging gains (a multiply on
     * 672x14x14 before a depthwise convolution: 36 to 17 us merged, but
     * the convolution's copy of its input 58 to 88 us). */
    /* A quantize (a store that narrows to bytes) merges even where fuse
     * may compute it in its producer: fuse then computes it in the
     * producer's own stores, whatever its loops are, and where it refuses
     * (a write-back that stores its lanes apart) the quantize stays a
     * kernel of its own, which runs along the whole channel merged (QDQ
     * MobileNetV2's 576x14x14 quantize before a depthwise convolution:
     * rows of 14 as 8 + 4 lanes and 2 scalars, 29 us; merged 15 us). */
    if (!called || (fusable && !ir_narrowing_store(b->body[0])) || output_padded(a, a->f))
        return false;
    const char *names[32];
    for (int i = 0; i < ns->n; i++)
        names[i] = ns->loops[i]->var->name;
    const char *inner = names[ns->n - 1];
    bool merged = false;
    for (int i = ns->n - 2; i >= 0; i--) {
        const char *nm = auto_fresh(a, ir_sprintf(a->m->arena, "%s%s", names[i], inner));
        if (!auto_step(a, "%s = merge(%s, %s)", nm, names[i], inner))
            break;
        inner = nm;
        merged = true;
    }
    return merged;
}

/* An elementwise kernel reading a temporary whose writer merged two of
 * its dimensions (a 1x1 convolution on a merged map) merges the same two:
 * the fuse pass computes it in the writer's tile only where the two index
 * the data alike (the bias and activation after the convolution).  A
 * block that sums over other loops (a convolution reading the temporary)
 * is not elementwise: whether it merges its map is its tile model's
 * choice (auto.c); merged after a merged writer, ResNeXt-50's 1x1
 * convolutions 512 -> 256 on 28x28 ran along the map in one vector by 8
 * channels (784 is no multiple of 32), 1771 us on one thread against
 * 1227 us for ONNX Runtime. */
typedef struct load_find {
    const ir_buffer *b;
    const ir_expr *ld;
} load_find;

static bool block_reduces(const ir_stmt *b)
{
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == IR_ITER_REDUCE && b->iters[i].extent > 1)
            return true;
    return false;
}

static bool find_load(const ir_expr *x, void *p)
{
    load_find *lf = p;
    if (!lf->ld && x->kind == IR_LOAD && x->buf == lf->b)
        lf->ld = x;
    return true;
}

void merge_like_producer(auto_ctx *a)
{
    const ir_module *m = a->m;
    for (int ci = 0; ci < m->graph.ncalls; ci++) {
        const ir_graph_call *C = &m->graph.calls[ci];
        if (C->fn != a->f)
            continue;
        for (int p = 0; p < C->nargs && p < a->f->nparams; p++) {
            const ir_buffer *T = C->args[p], *fp = a->f->params[p];
            if (T->role != IR_BUF_TEMP || fp->ndim != T->ndim)
                continue;
            const ir_buffer *wp = NULL;
            for (int c = 0; c < ci && !wp; c++)
                for (int k = 0; k < m->graph.calls[c].nargs && k < m->graph.calls[c].fn->nparams; k++)
                    if (m->graph.calls[c].args[k] == T)
                        wp = m->graph.calls[c].fn->params[k];
            if (!wp || wp->ndim != T->ndim - 1)
                continue;
            int d = 0;
            while (d < wp->ndim && wp->shape[d] == T->shape[d])
                d++;
            if (d + 1 >= T->ndim || wp->shape[d] != T->shape[d] * T->shape[d + 1])
                continue;
            /* the loops bound to the iteration variables that index fp there */
            load_find lf = {fp, NULL};
            ir_stmt_walk(a->f->body, NULL, find_load, &lf);
            if (!lf.ld || lf.ld->args[d]->kind != IR_VAR || lf.ld->args[d + 1]->kind != IR_VAR)
                continue;
            sch_ctx c = {a->m, a->f, &a->quiet, {"auto", 1, 1}};
            const char *loops[2] = {NULL, NULL};
            for (int k = 0; k < 2; k++) {
                const ir_var *v = lf.ld->args[d + k]->var;
                sch_path path;
                /* the block that binds v */
                nest cur = {.n = 0}, all[8];
                int n = 0;
                auto_collect(a->f->body, &cur, all, &n, 8);
                for (int b = 0; b < n && !loops[k]; b++)
                    for (int i = 0; i < all[b].block->niters; i++)
                        if (all[b].block->iters[i].var == v && all[b].block->iters[i].binding->kind == IR_VAR &&
                            sch_find_loop(&c, all[b].block->iters[i].binding->var->name, &path)) {
                            loops[k] = all[b].block->iters[i].binding->var->name;
                            if (all[b].block->iters[i].kind == IR_ITER_SPATIAL && block_reduces(all[b].block))
                                return;
                        }
            }
            if (loops[0] && loops[1])
                auto_step(a, "%s = merge(%s, %s)", auto_fresh(a, ir_sprintf(a->m->arena, "%s%s", loops[0], loops[1])),
                     loops[0], loops[1]);
            return;
        }
    }
}

/* The innermost loop of nest ns but loop vi, or -1. */
static int innermost_other(const nest *ns, int vi)
{
    for (int i = ns->n - 1; i >= 0; i--)
        if (i != vi)
            return i;
    return -1;
}

/* A transposing copy (schedule_transpose_copy) whose block of the vector's
 * lanes reads more of the source than the level-1 cache holds (16 rows of
 * a 192 x 25088 permutation: 1.6 MB a block, while it writes the whole 19
 * MB destination in 64-byte pieces a row apart) also runs its innermost
 * other loop, along the source's rows, block by block, outside the lanes'
 * blocks: the destination's rows of a block (block x e elements) are
 * written whole while its slice of the source is in the cache (that
 * permutation 2.5 -> 1.9 ms on one thread, bench/results/unseen_s26.txt).
 * The block: the largest divisor of that loop's extent up to 64 whose
 * destination rows fit in half the level-1 cache, at least 8; 0 (no
 * blocks) when the lanes' slice fits the cache or no divisor does. */
static int64_t transpose_block(const auto_ctx *a, const nest *ns, int vi, const ir_expr *ld,
                               int64_t e, int64_t elem)
{
    int ci = innermost_other(ns, vi);
    const ir_itervar *it = ci >= 0 ? iter_of(ns->block, ns->loops[ci]) : NULL;
    if (!it || !uses(ld->args[ld->nargs - 1], it->var))
        return 0;
    int64_t others = 1;
    for (int i = 0; i < ns->n; i++)
        if (i != vi)
            others *= extent(ns->loops[i]);
    if (a->lanes * others * elem <= a->l1d)
        return 0;
    int64_t n = extent(ns->loops[ci]);
    for (int64_t b = n < 64 ? n : 64; b >= 8; b--)
        if (n % b == 0 && b < n && b * e * elem <= a->l1d / 2)
            return b;
    return 0;
}

/* A read of an elementwise kernel that transposes: the store's last index
 * v indexes it, but not in its last dimension, and a later dimension has
 * more than one element (a gather of lanes a row apart; not a squeeze and
 * excitation's scale s[c, 0, 0]). */
typedef struct transposed_find {
    const ir_var *v;
    const ir_expr *ld;
} transposed_find;

static bool find_transposed(const ir_expr *x, void *p)
{
    transposed_find *tf = p;
    if (tf->ld || x->kind != IR_LOAD || x->nargs < 2 || x->nargs != x->buf->ndim)
        return true;
    int d = 0;
    while (d < x->nargs && !uses(x->args[d], tf->v))
        d++;
    for (int e = d + 1; e < x->nargs; e++)
        if (uses(x->args[e], tf->v))
            d = e;
    bool apart = false;   /* a dimension after v's with more than one element */
    for (int e = d + 1; e < x->nargs; e++)
        apart |= x->buf->shape[e] > 1;
    if (d < x->nargs && apart)
        tf->ld = x;
    return true;
}

/* An elementwise kernel that transposes (a channels-last padded copy:
 * xp[h, w, c] = x[c, h, w], the store's last index c reading a dimension
 * of x that is not its last; or ConvNeXt's layer scale and residual, y[c,
 * h, w] = g[c] * b[h, w, c] + r[h, w, c], back from channels-last) runs
 * block by block of the vector's lanes along the store's last dimension:
 * the lanes' block outermost, the other loops, the lanes innermost, so
 * each block's gathers read a slice of the source that stays in the cache
 * (16 channels of 7x7: 3 KB), where the copy along all the channels at each
 * position read the whole source once per position (1152 channels of 7x7
 * for a 5x5 depthwise convolution with SiLU: 120 to 99 us on one thread).
 * A last dimension that is no whole number of vectors (56) is merged with
 * the one before it (the map's 3136 positions): ConvNeXt-B's first layer
 * scale and residual, both channels-last, on 128x56x56 3.7 -> 0.31 ms on
 * one thread (ONNX Runtime 0.33), the others (the residual NCHW) 0.8 ->
 * 0.28 (bench/results/unseen_s27.txt). */
static bool schedule_transpose_copy(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    const ir_stmt *st = b->nbody ? b->body[0] : NULL;
    if (b->init || ns->n < 2 || !st || st->kind != IR_S_STORE || st->nargs < 2 ||
        st->args[st->nargs - 1]->kind != IR_VAR || !st->value)
        return false;
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind != IR_ITER_SPATIAL)
            return false;
    const ir_var *v = st->args[st->nargs - 1]->var;
    transposed_find tf = {v, NULL};
    ir_expr_walk(st->value, find_transposed, &tf);
    const ir_expr *ld = tf.ld;
    if (!ld)
        return false;
    nest merged;
    bool merging = false;
    if (st->args[st->nargs - 2]->kind == IR_VAR && ns->n >= 3 &&
        iter_of(b, ns->loops[ns->n - 1]) && iter_of(b, ns->loops[ns->n - 1])->var == v &&
        iter_of(b, ns->loops[ns->n - 2]) && iter_of(b, ns->loops[ns->n - 2])->var == st->args[st->nargs - 2]->var &&
        extent(ns->loops[ns->n - 1]) % a->lanes != 0 &&
        extent(ns->loops[ns->n - 1]) * extent(ns->loops[ns->n - 2]) >= 2 * a->lanes &&
        !output_padded(a, a->f)) {
        /* the store's last two dimensions as one (the loops' variables
         * name the block's; the merged loop's stores index v's dimension
         * by its remainder) */
        const char *un = ns->loops[ns->n - 2]->var->name, *vn = ns->loops[ns->n - 1]->var->name;
        if (!auto_step(a, "%s = merge(%s, %s)", auto_fresh(a, ir_sprintf(a->m->arena, "%s%s", un, vn)), un, vn) ||
            !auto_nest_of(a, b, &merged))
            return true;
        /* (merge rewrote the block: its buffers seen with the two
         * dimensions as one, its variables anew) */
        ns = &merged;
        merging = true;
        st = b->body[0];
        const ir_itervar *iv = iter_of(b, ns->loops[ns->n - 1]);
        if (!iv)
            return true;
        tf = (transposed_find){iv->var, NULL};
        ir_expr_walk(st->value, find_transposed, &tf);
        if (!(ld = tf.ld))
            return true;
        v = tf.v;
    }
    int vi = -1;
    for (int i = 0; i < ns->n; i++) {
        const ir_itervar *it = iter_of(b, ns->loops[i]);
        if (!it)
            return false;
        if (it->var == v)
            vi = i;
    }
    int64_t e = vi >= 0 ? extent(ns->loops[vi]) : 0;
    if (vi < 0 || (e % a->lanes != 0 && !merging) || e < 2 * a->lanes)
        return merging;
    const char *vn = ns->loops[vi]->var->name;
    const char *vo = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", vn));
    const char *vin = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", vn));
    int64_t block = transpose_block(a, ns, vi, ld, e, ir_dtype_size(st->buf->dtype));
    int ci = block ? innermost_other(ns, vi) : -1;
    const char *cn = ci >= 0 ? ns->loops[ci]->var->name : NULL;
    const char *co = cn ? auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", cn)) : NULL;
    const char *cin = cn ? auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", cn)) : NULL;
    if (!auto_step(a, "%s, %s = split(%s, %d)", vo, vin, vn, a->lanes) ||
        (cn && !auto_step(a, "%s, %s = split(%s, %lld)", co, cin, cn, (long long)block)))
        return false;
    /* the order: the lanes' blocks first (no blocks), else the other
     * loops, the blocks of the innermost, the lanes' blocks, its rest;
     * the lanes innermost; the first on the threads */
    char order[1024];
    int pos = 0;
    const char *first = cn ? NULL : vo;
    int64_t first_extent = e / a->lanes;
    if (!cn)
        pos += snprintf(order, sizeof order, "%s, ", vo);
    for (int i = 0; i < ns->n; i++)
        if (i != vi && i != ci) {
            pos += snprintf(order + pos, sizeof order - (size_t)pos, "%s, ", ns->loops[i]->var->name);
            if (!first) {
                first = ns->loops[i]->var->name;
                first_extent = extent(ns->loops[i]);
            }
        }
    if (cn) {
        pos += snprintf(order + pos, sizeof order - (size_t)pos, "%s, %s, %s, ", co, vo, cin);
        if (!first) {
            first = co;
            first_extent = extent(ns->loops[ci]) / block;
        }
    }
    snprintf(order + pos, sizeof order - (size_t)pos, "%s", vin);
    auto_step(a, "reorder(%s)", order);
    auto_step(a, "vectorize(%s)", vin);
    if (a->threads > 1 && first_extent >= a->threads)
        auto_step(a, "parallel(%s)", first);
    if (e % a->lanes != 0)
        auto_partition_late(a, vo, e / a->lanes);   /* the merged map's last part (196 = 12 x 16 + 4) */
    return true;
}

/* The index in a->whole_copy of the copy st stores to, or -1. */
static int whole_copy_of(const auto_ctx *a, const ir_stmt *st)
{
    for (int k = 0; st && st->kind == IR_S_STORE && k < a->nwhole_copies; k++)
        if (strcmp(st->buf->name, a->whole_copy[k]) == 0)
            return k;
    return -1;
}

/* Whether a reader r of x sums each of x's channels whole into one value
 * (a global average pooling: a squeeze-and-excitation's squeeze): a block
 * that reduces while reading x, its output as many elements as x has
 * channels. */
typedef struct channel_pool_find {
    const ir_buffer *x;
    bool found;
} channel_pool_find;

static bool finds_channel_pool(const ir_stmt *s, void *p)
{
    channel_pool_find *w = p;
    if (s->kind != IR_S_BLOCK || !s->nbody || !s->body[0] || s->body[0]->kind != IR_S_STORE ||
        !block_reduces(s) || w->x->ndim < 3)
        return true;
    const ir_buffer *pb[2] = {w->x, NULL};
    ir_stmt_walk(s, NULL, reads_buffer, pb);
    const ir_buffer *y = s->body[0]->buf;
    int64_t nx = 1, ny = 1, map = w->x->shape[w->x->ndim - 1] * w->x->shape[w->x->ndim - 2];
    for (int d = 0; d < w->x->ndim; d++)
        nx *= w->x->shape[d];
    for (int d = 0; d < y->ndim; d++)
        ny *= y->shape[d];
    if (pb[1] && map > 1 && ny * map == nx)
        w->found = true;
    return !w->found;
}

static bool pools_channels(const ir_func *r, const ir_buffer *x)
{
    channel_pool_find w = {x, false};
    ir_stmt_walk(r->body, finds_channel_pool, NULL, &w);
    return w.found;
}

/* Whether an output of call ci, or of the elementwise calls after it that
 * read it (its bias, its activation: at most 4 deep), is read by a call
 * that pools each channel whole. */
static bool channels_pooled_after(const ir_module *m, int ci, int depth)
{
    const ir_graph_call *C = &m->graph.calls[ci];
    for (int j = 0; j < C->nargs && j < C->fn->nparams; j++) {
        if (!ir_stmt_stores_to(C->fn->body, C->fn->params[j]))
            continue;
        for (int c = ci + 1; c < m->graph.ncalls; c++) {
            const ir_graph_call *R = &m->graph.calls[c];
            for (int k = 0; k < R->nargs && k < R->fn->nparams; k++) {
                if (R->args[k] != C->args[j])
                    continue;
                if (pools_channels(R->fn, R->fn->params[k]))
                    return true;
                bool red = false;
                ir_stmt_walk(R->fn->body, has_reduction, NULL, &red);
                if (!red && depth < 4 && channels_pooled_after(m, c, depth + 1))
                    return true;
            }
        }
    }
    return false;
}

/* A float depthwise convolution along rows of stride 1 whose channel
 * exceeds L1 (112x112 maps) and of at most DW_SPLIT_CHANNELS channels, on
 * several threads: split over the threads by blocks of output rows (2 per
 * thread, pb), the channels inside (each channel's block of rows copied
 * padded, pad_late), instead of by channels.  The 1x1 convolutions around
 * it split their map by rows: split by channels, each thread read half its
 * input from the other processor's cache, and the 1x1 after it half of
 * its own.  MobileNetV3-Large's 3x3 on 16x112x112, per-layer minima
 * (bench/results/dw_s24.txt): two threads 61.0 -> 50.1 us and the 1x1
 * after it 52.4 -> 43.8; one thread (the same schedule run serially)
 * 60.6 -> 59.5.  With more channels a block reads as many short runs of
 * rows, one per channel, where the split by channels reads each channel
 * through: on one thread MnasNet's and MobileNetV2's 3x3 on 32x112x112
 * ran 3-10% slower (144 -> 149, 134 -> 147 us), though 17% and 11% faster
 * on two; blocks of 8 rows (14 blocks) or of 56 (one a thread, its copy
 * 33 KB) were slower on both.  Not of stride 2 (MobileNetV2's 3x3 on
 * 96x112x112 158 -> 172 us at two threads), nor when a reader pools each
 * channel whole (EfficientNet's squeeze-and-excitation: its pooling and
 * the multiply after it then read across the processors, 38 -> 72 us,
 * more than the convolution gained, 149 -> 125).  o: the block's
 * classification before its schedule. */
#define DW_SPLIT_CHANNELS 16

static bool depthwise_row_split(auto_ctx *a, ir_stmt *b, const dw_info *o)
{
    ir_affine xq;
    if (a->threads < 2 || o->bytes || o->xdim == o->X->nargs - 1 || o->F > DW_SPLIT_CHANNELS ||
        !channel_exceeds_l1(a, o->X->buf) ||
        !ir_affine_of(o->X->args[o->X->nargs - 1], &xq) || ir_affine_coef(&xq, o->vq) != 1)
        return false;
    for (int ci = 0; ci < a->m->graph.ncalls; ci++)
        if (a->m->graph.calls[ci].fn == a->f && channels_pooled_after(a->m, ci, 0))
            return false;
    /* the loops from the function's body down: the channel's, the rows' */
    sch_ctx c = {a->m, a->f, &a->quiet, {"auto", 1, 1}};
    sch_path p;
    if (!sch_find_block(&c, b->name, &p))
        return false;
    const ir_stmt *loops[2];
    int n = 0;
    for (int k = 0; k < p.n && n < 2; k++)
        if ((*p.slot[k])->kind == IR_S_FOR)
            loops[n++] = *p.slot[k];
    if (n < 2)
        return false;
    const ir_itervar *f = iter_of(b, loops[0]), *rows = iter_of(b, loops[1]);
    int64_t blocks = 2 * a->threads;
    if (!f || f->var != o->vf || !rows || rows->kind != IR_ITER_SPATIAL || rows->var == o->vq ||
        loops[1]->for_kind != IR_FOR_SERIAL || extent(loops[1]) % blocks != 0)
        return false;
    const char *pn = loops[1]->var->name, *fn = loops[0]->var->name;
    const char *pb = auto_fresh(a, ir_sprintf(a->m->arena, "%sb", pn));
    const char *pr = auto_fresh(a, ir_sprintf(a->m->arena, "%sr", pn));
    return auto_step(a, "%s, %s = regroup(%s, %lld)", pb, pr, pn, (long long)(extent(loops[1]) / blocks)) &&
           auto_step(a, "reorder(%s, %s)", pb, fn) && auto_step(a, "parallel(%s)", pb);
}

void schedule_simple(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    dw_info dw;   /* (before the schedule decomposes its init) */
    bool is_dw = classify_depthwise(b, &dw);
    if (ns->n == 0 || schedule_transpose_copy(a, ns) || schedule_pool_channels_last(a, ns) ||
        schedule_pool_nhwc(a, ns) || schedule_pool_rows(a, ns))
        return;
    nest merged;
    if (merge_elementwise(a, ns) && auto_nest_of(a, b, &merged)) {
        ns = &merged;
        /* one long loop: chunks of whole vectors for the threads */
        ir_stmt *l = ns->loops[ns->n - 1];
        int64_t e = extent(l);
        const ir_itervar *iv = iter_of(b, l);
        bool outer_par = false;
        for (int i = 0; i + 1 < ns->n; i++)
            outer_par |= extent(ns->loops[i]) >= 2 * a->threads;
        if (iv && e >= 64 * a->lanes && !outer_par && e % a->lanes == 0) {
            int64_t chunk = 64 * a->lanes;
            while (chunk > a->lanes && e % chunk != 0)
                chunk -= a->lanes;
            const char *nm = l->var->name;
            const char *o = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", nm));
            const char *in = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", nm));
            if (auto_step(a, "%s, %s = split(%s, %lld)", o, in, nm, (long long)chunk)) {
                auto_step(a, "vectorize(%s)", in);
                if (a->threads > 1 && e / chunk >= a->threads)
                    auto_step(a, "parallel(%s)", o);
                return;
            }
        }
    }
    const ir_itervar *it[32];
    for (int i = 0; i < ns->n; i++)
        if (!(it[i] = iter_of(b, ns->loops[i])) || extent(ns->loops[i]) < 1)
            return;
    /* the innermost spatial loop that indexes the last dimension of a store */
    int vi = -1;
    ir_stmt *st = b->nbody ? b->body[0] : NULL;
    if (st && st->kind == IR_S_STORE && st->nargs > 0 && st->args[st->nargs - 1]->kind == IR_VAR)
        for (int i = 0; i < ns->n; i++)
            if (it[i]->kind == IR_ITER_SPATIAL && st->args[st->nargs - 1]->var == it[i]->var)
                vi = i;
    int64_t work = 1;
    for (int i = 0; i < ns->n; i++)
        work *= extent(ns->loops[i]);
    if (vi >= 0 && extent(ns->loops[vi]) >= a->lanes / 4 && sch_int8_vector_store(st)) {
        const char *vname = ns->loops[vi]->var->name;   /* reorder moves variables between loop nodes */
        if (vi != ns->n - 1) {
            /* move it innermost (the reduce loops of pooling and depthwise
             * convolutions then run outside the vector) */
            char order[1024] = "";
            int pos = 0;
            for (int i = 0; i < ns->n; i++)
                if (i != vi)
                    pos += snprintf(order + pos, sizeof order - (size_t)pos, "%s%s",
                                    pos ? ", " : "", ns->loops[i]->var->name);
            snprintf(order + pos, sizeof order - (size_t)pos, ", %s", vname);
            if (auto_step(a, "reorder(%s)", order) && auto_step(a, "vectorize(%s)", vname))
                reduce_in_tile(a, b, vname);
        } else if (auto_step(a, "vectorize(%s)", vname))
            reduce_in_tile(a, b, vname);   /* innermost already (a channels-last pooling's channels) */
    }
    if (is_dw && depthwise_row_split(a, b, &dw))
        return;
    if (a->threads > 1 && work >= 16384) {
        int copy = whole_copy_of(a, st);
        /* re-find the loops: reorder moved variables between loop nodes */
        for (int i = 0; i < ns->n; i++) {
            ir_stmt *l = ns->loops[i];
            const ir_itervar *iv = iter_of(b, l);
            if (!iv || iv->kind != IR_ITER_SPATIAL || l->for_kind == IR_FOR_VECTORIZED || extent(l) < a->threads)
                continue;
            if (copy >= 0) {
                /* a whole copy's threads wait for its readers' */
                if (!a->whole_copy_loop[copy])
                    a->whole_copy_loop[copy] = l->var->name;
                break;
            }
            if (auto_step(a, "parallel(%s)", l->var->name))
                break;
        }
    }
}

/* Inputs read through guards (padded convolutions and pooling) are padded
 * once, so no guard is left in an inner loop. */
static bool guarded_read(const ir_expr *x, void *p)
{
    const ir_buffer *b = ((const ir_buffer **)p)[0];
    if (x->kind == IR_SELECT && x->a && x->a->kind == IR_LOAD && x->a->buf == b &&
        (x->b->kind == IR_FLOAT || x->b->kind == IR_INT))
        ((const ir_buffer **)p)[1] = b;
    return true;
}

/* The dimension of buffer x that a depthwise convolution or a pooling
 * reading it wants innermost in its padded copy (its channels), or -1. */
typedef struct dw_find {
    const auto_ctx *a;
    const ir_buffer *x;
    int dim;
} dw_find;

static bool find_depthwise(const ir_stmt *s, void *p)
{
    dw_find *w = p;
    dw_info o;
    pool_info po;
    if (s->kind == IR_S_BLOCK && classify_depthwise(s, &o) && o.X->buf == w->x &&
        depthwise_channels_last(w->a, &o))
        w->dim = o.xdim;
    else if (s->kind == IR_S_BLOCK && classify_pool(s, &po) && po.X->buf == w->x &&
             pool_channels_last(w->a, s, &po))
        w->dim = po.xdim;
    return true;
}

/* The blocks that read x, and how many of them are of a kind (is). */
typedef struct reader_count {
    const auto_ctx *a;
    const ir_buffer *x;
    bool (*is)(const auto_ctx *a, const ir_stmt *b, const ir_buffer *x);
    int readers, matching;
} reader_count;

static bool reads_buffer(const ir_expr *x, void *p)
{
    if (x->kind == IR_LOAD && x->buf == ((const ir_buffer **)p)[0])
        ((const ir_buffer **)p)[1] = x->buf;
    return true;
}

typedef struct {
    const ir_buffer *x;
    const ir_var *v;
    bool found;
} var_read;

static bool reads_var(const ir_expr *e, void *q)
{
    var_read *r = q;
    if (e->kind == IR_LOAD && e->buf == r->x)
        for (int d = 0; d < e->nargs; d++)
            r->found |= ir_expr_uses_var(e->args[d], r->v);
    return true;
}

/* An int8 depthwise convolution's sum of widened-byte products reading x
 * (int8.c): every loop that is not reduced and indexes the product
 * indexes x too, where a dense convolution's output channel indexes only
 * the weight (and its input is padded whole, as a contraction's). */
static bool int8_depthwise(const ir_stmt *s, const ir_stmt *st, const ir_buffer *x)
{
    if (st->buf->dtype != IR_I32 || st->value->kind != IR_ADD || !sch_int8_vector_store(st))
        return false;
    for (int i = 0; i < s->niters; i++) {
        var_read r = {x, s->iters[i].var, false};
        ir_expr_walk(st->value->b, reads_var, &r);
        if (s->iters[i].kind != IR_ITER_REDUCE && ir_expr_uses_var(st->value->b, r.v) && !r.found)
            return false;
    }
    return true;
}

static bool count_reader(const ir_stmt *s, void *p)
{
    reader_count *w = p;
    if (s->kind != IR_S_BLOCK)
        return true;
    const ir_buffer *pb[2] = {w->x, NULL};
    ir_stmt_walk(s, NULL, reads_buffer, pb);
    if (!pb[1])
        return true;
    w->readers++;
    w->matching += w->is(w->a, s, w->x);
    return false;
}

/* Whether every block of a's function that reads x is of a kind (is), and
 * there is one at least. */
static bool read_only_by(const auto_ctx *a, const ir_buffer *x,
                         bool (*is)(const auto_ctx *, const ir_stmt *, const ir_buffer *))
{
    reader_count w = {a, x, is, 0, 0};
    ir_stmt_walk(a->f->body, count_reader, NULL, &w);
    return w.readers > 0 && w.matching == w.readers;
}

/* A window reduction reading x: a depthwise convolution or a pooling,
 * y[..] = y[..] op e with an init and reduce loops, e not a product of two
 * operands of a contraction (those pad first, to be classified), or an
 * int8 depthwise convolution's i32 sum of widened bytes. */
static bool window_reduction(const auto_ctx *a, const ir_stmt *s, const ir_buffer *x)
{
    (void)a;
    const ir_stmt *st = s->nbody ? s->body[0] : NULL;
    bool reduces = false;
    for (int i = 0; i < s->niters; i++)
        reduces |= s->iters[i].kind == IR_ITER_REDUCE;
    dw_info o;
    return s->init && reduces && st && st->kind == IR_S_STORE && st->value &&
           ((st->value->kind == IR_ADD && st->value->b->kind == IR_SELECT) ||
            st->value->kind == IR_MAX || st->value->kind == IR_MIN || classify_depthwise(s, &o) ||
            int8_depthwise(s, st, x));
}

/* Whether input x is read only by window reductions along rows: padded
 * after their schedule, per iteration of the loop that reads one slice
 * of it (pad_late), not whole before it. */
static bool pads_late(auto_ctx *a, const ir_buffer *x)
{
    return read_only_by(a, x, window_reduction) && a->nlate_pad < 8;
}

/* Whether a read of x in block b uses iteration variable v in an index
 * that is not v alone (a window's row p * 2 + r - 1, where v is the row's). */
typedef struct {
    const ir_buffer *x;
    const ir_var *v;
    bool mixed;
} slice_find;

static bool reads_mixed(const ir_expr *e, void *q)
{
    slice_find *sf = q;
    if (e->kind == IR_LOAD && e->buf == sf->x)
        for (int d = 0; d < e->nargs; d++)
            if (ir_expr_uses_var(e->args[d], sf->v) && !(e->args[d]->kind == IR_VAR && e->args[d]->var == sf->v))
                sf->mixed = true;
    return true;
}

/* Whether one channel of x (NCHW), padded copies of which pad_late
 * makes per channel, exceeds L1: a 3x3 depthwise convolution of stride 2
 * on 96x112x112 (51 KB a channel) copying blocks of output rows' input
 * instead (row_block), 376 -> 204 us at one thread
 * (bench/results/window2_s10.txt; against main in rowblock_s11.txt). */
static bool channel_exceeds_l1(const auto_ctx *a, const ir_buffer *x)
{
    return x->ndim == 4 && x->shape[2] * x->shape[3] * ir_dtype_size(x->dtype) > a->l1d;
}

/* The rows in a block of the row loop l: the largest divisor of its trip
 * count from 2 to 8 (8 output rows of stride 2 read 17 input rows, the
 * halo adding 1/16), 0 when none (regroup needs a divisor). */
static int64_t row_block(const ir_stmt *l)
{
    if (l->lo->kind != IR_INT || l->lo->ival != 0 || l->hi->kind != IR_INT)
        return 0;
    for (int64_t F = 8; F >= 2; F--)
        if (l->hi->ival % F == 0)
            return F;
    return 0;
}

/* Whether pad_inputs will pad r's parameter x late (r not scheduled yet):
 * read only by window reductions, neither a depthwise convolution that
 * wants its channels innermost nor an int8 contraction padding along its
 * channels (both copy x whole, in another order, which layout can store
 * x in). */
static bool reader_pads_late(const auto_ctx *a, const ir_func *r, const ir_buffer *x)
{
    auto_ctx ra = *a;
    ra.f = (ir_func *)r;
    ra.nlate_pad = 0;
    dw_find w = {&ra, x, -1};
    ir_stmt_walk(r->body, find_depthwise, NULL, &w);
    return w.dim < 0 && sch_int8_pad_dim(r, x, a->lanes) < 0 && pads_late(&ra, x);
}

/* The late pads: each input at the innermost loop outside the window
 * (not vectorized, outside every reduce loop) at which pad accepts it,
 * i.e. whose iteration reads one slice of it (a channel of a depthwise
 * convolution or a pooling: a copy of the padded channel that stays in
 * the cache for the window, instead of the whole padded input written to
 * memory and read back); the whole input before the nest if none.  Not
 * at the loop of the window's rows, which pad would copy per output row
 * with its halo, except when a channel's copy would not fit L1: then
 * that loop is regrouped into blocks of rows, copied one block at a time;
 * not a loop of a quarter of the rows or fewer (a block of rows the
 * threads split, depthwise_row_split: its copy per channel fits L1). */
void pad_late(auto_ctx *a)
{
    for (int i = 0; i < a->nlate_pad; i++) {
        const ir_buffer *x = a->late_pad[i];
        const char *name = auto_fresh(a, ir_sprintf(a->m->arena, "%s_pad", x->name));
        nest cur = {.n = 0}, nests[64];
        int nn = 0;
        auto_collect(a->f->body, &cur, nests, &nn, 64);
        sch_ctx c = {a->m, a->f, &a->quiet, {"auto", 1, 1}};
        sch_path p = {.n = 0};
        for (int k = 0; k < nn && !p.n; k++) {
            const ir_buffer *pb[2] = {x, NULL};
            ir_stmt_walk(nests[k].block, NULL, reads_buffer, pb);
            if (pb[1] && !sch_find_block(&c, nests[k].block->name, &p))
                p.n = 0;
        }
        int outer = 0;   /* the loops outside the first reduce loop */
        while (outer < p.n) {
            const ir_stmt *l = *p.slot[outer];
            const ir_itervar *it = l->kind == IR_S_FOR ? iter_of(*p.slot[p.n - 1], l) : NULL;
            if (it && it->kind == IR_ITER_REDUCE)
                break;
            outer++;
        }
        bool done = false;
        for (int k = outer - 1; k >= 0 && !done; k--) {
            const ir_stmt *l = *p.slot[k];
            const ir_itervar *it = l->kind == IR_S_FOR ? iter_of(*p.slot[p.n - 1], l) : NULL;
            slice_find sf = {x, it ? it->var : NULL, false};
            if (it)
                ir_stmt_walk(*p.slot[p.n - 1], NULL, reads_mixed, &sf);
            if (l->kind != IR_S_FOR || l->for_kind == IR_FOR_VECTORIZED || l->for_kind == IR_FOR_UNROLLED)
                continue;
            if (!sf.mixed) {
                done = auto_step(a, "%s = pad(%s, %s)", name, x->name, l->var->name);
            } else if (channel_exceeds_l1(a, x) && 4 * extent(l) > x->shape[x->ndim - 2]) {
                /* the loop of the window's rows, and a channel's copy
                 * would not fit L1: a copy per block of F rows */
                int64_t F = row_block(l);
                const char *o = auto_fresh(a, ir_sprintf(a->m->arena, "%so", l->var->name));
                const char *in = auto_fresh(a, ir_sprintf(a->m->arena, "%si", l->var->name));
                if (F && auto_step(a, "%s, %s = regroup(%s, %lld)", o, in, l->var->name, (long long)F))
                    done = auto_step(a, "%s = pad(%s, %s)", name, x->name, o) || auto_step(a, "%s = pad(%s)", name, x->name);
            }
        }
        if (!done)
            auto_step(a, "%s = pad(%s)", name, x->name);
    }
}

/* ---------------------------------------------------------------- locals stored whole */

/* Whether s, a nest of loops from 0 around one block, stores every element
 * of T exactly once, at the block's own iteration variables (each spatial,
 * as long as T's dimension, bound to one loop of that range, or to 0 for a
 * dimension of 1; or 0 itself there), under no test, reading nothing of T. */
static bool stores_whole(const ir_stmt *s, const ir_buffer *T)
{
    const ir_stmt *loops[32];
    int nl = 0;
    while (s && s->kind == IR_S_FOR && nl < 32) {
        if (s->lo->kind != IR_INT || s->lo->ival != 0 || s->hi->kind != IR_INT || ir_for_step(s) != 1 ||
            s->nbody != 1)
            return false;
        loops[nl++] = s;
        s = s->body[0];
    }
    while (s && s->kind == IR_S_SEQ && s->nbody == 1)
        s = s->body[0];
    if (!s || s->kind != IR_S_BLOCK || s->init || s->nbody != 1 || !s->body[0])
        return false;
    const ir_stmt *st = s->body[0];
    if (st->kind != IR_S_STORE || st->buf != T || st->nargs != T->ndim || ir_expr_loads(st->value, T))
        return false;
    bool used[32] = {false};
    for (int d = 0; d < T->ndim; d++) {
        if (T->shape[d] == 1 && ir_expr_is_int(st->args[d], 0))
            continue;
        const ir_itervar *it = NULL;
        for (int i = 0; i < s->niters && st->args[d]->kind == IR_VAR; i++)
            if (s->iters[i].var == st->args[d]->var)
                it = &s->iters[i];
        if (!it || it->kind != IR_ITER_SPATIAL || it->extent != T->shape[d])
            return false;
        if (T->shape[d] == 1 && it->binding->kind == IR_INT && it->binding->ival == 0)
            continue;
        int k = 0;
        while (k < nl && !(it->binding->kind == IR_VAR && it->binding->var == loops[k]->var))
            k++;
        if (k == nl || used[k] || loops[k]->hi->ival != T->shape[d])
            return false;
        used[k] = true;
    }
    return true;
}

static bool mark_filled(const ir_stmt *s, void *p)
{
    (void)p;
    if (s->kind != IR_S_ALLOC || !s->buf || s->buf->filled || s->buf->ndim > 32 || !s->nbody)
        return true;
    /* the first statement of the alloc's body that touches the buffer,
     * through sequences and the allocs of other buffers */
    const ir_stmt *first = s->body[0];
    while (first && (first->kind == IR_S_SEQ || first->kind == IR_S_ALLOC)) {
        const ir_stmt *next = NULL;
        for (int i = 0; i < first->nbody && !next; i++)
            if (ir_stmt_first_access(first->body[i], s->buf) != IR_ACCESS_NONE)
                next = first->body[i];
        first = next;
    }
    if (first && stores_whole(first, s->buf))
        s->buf->filled = true;
    return true;
}

/* A local buffer whose alloc's body first stores every element of it (a
 * softmax's exponentials, computed whole before their sum) needs no zeroing
 * when it is allocated: it is marked filled, so the kernel mallocs it
 * instead of callocing (ViT-B/16's attention softmax zeroed 1.8 MB a run),
 * and the interpreter fills it with NaN, which a read before the store
 * would show.  Marked before any schedule step, on the program's own nests;
 * every step keeps each store before the reads that follow it. */
static void mark_filled_locals(auto_ctx *a)
{
    ir_stmt_walk(a->f->body, mark_filled, NULL, NULL);
}

/* Whether some block reading x through a guard reduces (a convolution, a
 * pooling): those read each element of x several times, so a padded copy
 * without guards pays for itself.  A block that only copies x with a
 * border (a Pad layer) would copy it twice. */
static bool reduces_guarded(const ir_stmt *s, void *p)
{
    const ir_buffer **pb = p;
    if (s->kind != IR_S_BLOCK || pb[2])
        return !pb[2];
    const ir_buffer *q[2] = {pb[0], NULL};
    ir_stmt_walk(s, NULL, guarded_read, q);
    for (int i = 0; q[1] && i < s->niters; i++)
        if (s->iters[i].kind == IR_ITER_REDUCE)
            pb[2] = pb[0];
    return false;
}

/* Whether e reads x plainly, or through a guard that does not use v. */
static bool guard_free_of(const ir_expr *e, const ir_buffer *x, const ir_var *v)
{
    if (e->kind == IR_SELECT)
        return !uses(e->c, v) && e->a->kind == IR_LOAD && e->a->buf == x;
    return e->kind == IR_LOAD && e->buf == x;
}

/* The input x of a float pooling whose input holds its channels innermost
 * (NHWC tensors of the layout chain) and whose channels fill whole
 * vectors, or NULL; *cv (when not NULL) is the channel's variable:
 * Y[.., c, ..] = op(Y[.., c, ..], e), op max, min or a sum, e a read of x
 * (through a padding guard or not) whose last index is c alone, whose
 * guard does not use c, and one of whose indices moves with both a tap
 * and an output (a window, not a global pooling); c indexes Y plainly,
 * innermost in the layout chain's NHWC output, or elsewhere when the
 * pooling reads a permuted view of a channels-last tensor and writes
 * NCHW (MViT's pool_skip: its tokens x channels transposed and reshaped
 * into a 3-D map).  Its schedule runs the channels in the vectors
 * (schedule_pool_nhwc), so every guard is one test per tap and vector of
 * channels, outside the vector: x needs no padded copy (3x3 max pooling
 * of stride 2 with a border on 64x112x112 NHWC, one thread: the whole
 * padded copy 138 us, a copy per output row 150, the guards in place 60;
 * bench/results/window_s18.txt).  Along the output's rows instead, the
 * NCHW-writing pooling gathered every tap's vector from lanes a
 * channel-row apart: MViT-B's 3x3 of stride 2 on 192x8x56x56 28.3 -> 3.2
 * ms at one thread, its output's vectors then stored lane by lane
 * (bench/results/unseen_s27.txt). */
static const ir_buffer *channels_last_pool_input(const auto_ctx *a, const ir_stmt *b, const ir_var **cv)
{
    const ir_stmt *st = b->nbody == 1 ? b->body[0] : NULL;
    if (!b->init || !st || st->kind != IR_S_STORE || !st->value || !ir_dtype_is_float(st->buf->dtype) ||
        st->nargs < 2)
        return NULL;
    const ir_expr *v = st->value;
    if (v->kind != IR_MAX && v->kind != IR_MIN && v->kind != IR_ADD)
        return NULL;
    const ir_expr *acc = v->a, *e = v->b;
    if (v->kind != IR_ADD && e->kind == IR_LOAD && e->buf == st->buf) {
        acc = v->b;
        e = v->a;
    }
    if (acc->kind != IR_LOAD || acc->buf != st->buf)
        return NULL;
    bool g = false;
    const ir_expr *X = unguarded_load(e, &g);
    if (!X || X->buf == st->buf || X->nargs < 2 || X->args[X->nargs - 1]->kind != IR_VAR)
        return NULL;
    const ir_var *c = X->args[X->nargs - 1]->var;
    bool stored = false;   /* c indexes Y plainly, in one dimension */
    for (int d = 0; d < st->nargs; d++)
        if (uses(st->args[d], c)) {
            if (stored || st->args[d]->kind != IR_VAR)
                return NULL;
            stored = true;
        }
    if (!stored || !guard_free_of(e, X->buf, c))
        return NULL;
    bool window = false;   /* an index of x moves with a tap and an output (p * 2 + r), not a global pool's */
    for (int d = 0; d + 1 < X->nargs; d++) {
        if (uses(X->args[d], c))
            return NULL;
        bool tap = false, out = false;
        for (int i = 0; i < b->niters; i++)
            if (b->iters[i].extent > 1 && uses(X->args[d], b->iters[i].var))
                *(b->iters[i].kind == IR_ITER_REDUCE ? &tap : &out) = true;
        window |= tap && out;
    }
    for (int i = 0; window && i < b->niters; i++)
        if (b->iters[i].var == c) {
            if (b->iters[i].kind != IR_ITER_SPATIAL || b->iters[i].extent % a->lanes != 0)
                return NULL;
            if (cv)
                *cv = c;
            return X->buf;
        }
    return NULL;
}

static bool channels_last_pool(const auto_ctx *a, const ir_stmt *b, const ir_buffer *x)
{
    return channels_last_pool_input(a, b, NULL) == x;
}

/* A float depthwise convolution that reads x channels-last in its
 * channels-last schedule (schedule_depthwise: the channels in the
 * vectors, the row's outputs unrolled), through a guard that does not use
 * the channel, with a stride or at most 3x3 taps: as for
 * channels_last_pool, every guard is one test per tap and vector, and x
 * needs no padded copy.  MobileNetV2's 3x3 of stride 2 on 144x56x56
 * spent more time in its whole padded copy (1.9 MB written and read back)
 * than in its taps: 191 -> 61 us on one thread (Intel Xeon, 2 MB L2;
 * ONNX Runtime 69).  Not ConvNeXt's 7x7 of stride 1: on 14x14 and 7x7
 * its 49 guards per output vector took 1.5-1.9 times the copy's time
 * (bench/results/conv_s19.txt). */
static bool channels_last_depthwise(const auto_ctx *a, const ir_stmt *b, const ir_buffer *x)
{
    dw_info o;
    if (!classify_depthwise(b, &o) || o.bytes || o.X->buf != x || o.xdim != o.X->nargs - 1 ||
        !depthwise_channels_last(a, &o))
        return false;
    ir_affine q;
    bool strided = ir_affine_of(o.X->args[o.X->nargs - 2], &q) && ir_affine_coef(&q, o.vq) > 1;
    if (!strided && o.taps > 9)
        return false;
    const ir_expr *prod = b->body[0]->value->b;
    bool g = false;
    const ir_expr *e = unguarded_load(prod->a, &g) == o.X ? prod->a : prod->b;
    return guard_free_of(e, x, o.vf);
}

static bool channels_last_window(const auto_ctx *a, const ir_stmt *b, const ir_buffer *x)
{
    return channels_last_pool(a, b, x) || channels_last_depthwise(a, b, x);
}

static bool read_in_place_channels_last(const auto_ctx *a, const ir_buffer *x)
{
    return read_only_by(a, x, channels_last_window);
}

static bool bordered_for(const auto_ctx *a, const ir_buffer *x);
static bool is_param_of(const auto_ctx *a, const ir_buffer *x);

/* A float depthwise convolution whose input x holds its channels
 * innermost (the layout chain's NHWC tensors), read through a padding
 * guard, in its channels-last schedule, that does not read x in place:
 * schedule_depthwise copies x per block of the vector's channels, at the
 * loop of the blocks (pad_per_block), instead of pad_inputs copying it
 * whole before the nest.  A block's copy stays in the cache for its taps
 * (16 channels of a 20x20 map, 25 KB), where the whole copy (614 KB for
 * ConvNeXt-T's 384 channels of 14x14) is written out and read back,
 * columns of channels a pixel apart: 7x7 on 384x14x14, one thread, 75 ->
 * 41-52 us, two threads 47 -> 36 (bench/results/dwcl_s28.txt).  Not when
 * the layout pass may store x with the border instead (bordered_for). */
static bool depthwise_pads_per_block(const auto_ctx *a, const ir_stmt *b, const ir_buffer *x)
{
    dw_info o;
    return is_param_of(a, x) && classify_depthwise(b, &o) && !o.bytes && o.X->buf == x &&
           o.xdim == o.X->nargs - 1 && depthwise_channels_last(a, &o) &&
           !channels_last_depthwise(a, b, x) && !bordered_for(a, x);
}

/* Whether x is a parameter of the function being scheduled (not a copy
 * made by an earlier step). */
static bool is_param_of(const auto_ctx *a, const ir_buffer *x)
{
    for (int p = 0; p < a->f->nparams; p++)
        if (a->f->params[p] == x)
            return true;
    return false;
}

/* Whether the layout pass may store the temporary that a call of a->f
 * passes as x with the border its whole padded copy needs, so that no
 * copy runs at all: f is its only reader (a reader that reads it in
 * place keeps it as it is, passes/layout.c).  EfficientNet-B0's 5x5
 * depthwise convolutions on 480 channels of 14x14 read their expansion's
 * output so. */
static bool bordered_for(const auto_ctx *a, const ir_buffer *x)
{
    int p = 0;
    while (p < a->f->nparams && a->f->params[p] != x)
        p++;
    const ir_graph *g = &a->m->graph;
    bool any = false;
    for (int ci = 0; ci < g->ncalls && p < a->f->nparams; ci++) {
        const ir_graph_call *c = &g->calls[ci];
        if (c->fn != a->f || p >= c->nargs)
            continue;
        const ir_buffer *t = c->args[p];
        if (t->role != IR_BUF_TEMP)
            return false;
        for (int cj = 0; cj < g->ncalls; cj++)
            for (int k = 0; k < g->calls[cj].nargs && g->calls[cj].fn != a->f; k++)
                if (g->calls[cj].args[k] == t && !ir_stmt_stores_to(g->calls[cj].fn->body,
                                                                     g->calls[cj].fn->params[k]))
                    return false;
        any = true;
    }
    return any;
}

/* Whether pad_inputs pads parameter x: a reduction reads it through a
 * padding guard, and no window reads it in place. */
static bool pads_input(const auto_ctx *a, const ir_buffer *x)
{
    const ir_buffer *pb[2] = {x, NULL};
    ir_stmt_walk(a->f->body, NULL, guarded_read, pb);
    const ir_buffer *rb[3] = {x, NULL, NULL};
    ir_stmt_walk(a->f->body, reduces_guarded, NULL, rb);
    return pb[1] && rb[2] && !read_in_place_channels_last(a, x);
}

/* Whether schedule_depthwise pads x, per block of channels, where
 * pad_inputs would copy it whole. */
static bool pads_per_block(const auto_ctx *a, const ir_buffer *x)
{
    return pads_input(a, x) && read_only_by(a, x, depthwise_pads_per_block);
}

void pad_inputs(auto_ctx *a)
{
    mark_filled_locals(a);   /* (the one place before the nests are scheduled) */
    for (int i = 0; i < a->f->nparams; i++) {
        const ir_buffer *pb[2] = {a->f->params[i], NULL};
        if (!pads_input(a, pb[0]) || pads_per_block(a, pb[0]))
            continue;
        const char *name = auto_fresh(a, ir_sprintf(a->m->arena, "%s_pad", pb[0]->name));
        dw_find w = {a, pb[0], -1};
        ir_stmt_walk(a->f->body, find_depthwise, NULL, &w);
        if (w.dim < 0)   /* int8 dot products read 4 channels at once (int8.c) */
            w.dim = sch_int8_pad_dim(a->f, pb[0], a->lanes);
        if (w.dim >= 0 && w.dim != pb[0]->ndim - 1 && auto_step(a, "%s = pad(%s, %d)", name, pb[0]->name, w.dim))
            continue;
        if (w.dim < 0 && pads_late(a, pb[0])) {
            a->late_pad[a->nlate_pad++] = pb[0];
            continue;
        }
        if (auto_step(a, "%s = pad(%s)", name, pb[0]->name) && a->nwhole_copies < 8)
            a->whole_copy[a->nwhole_copies++] = name;
    }
}

/* ---------------------------------------------------------------- a whole copy's threads */

/* The readers of a copy xp: blocks that read it and do not write it. */
typedef struct copy_readers {
    const ir_buffer *xp;
    const char *name[8];
    int n;
    bool more;   /* more than fit */
} copy_readers;

static bool find_copy_reader(const ir_stmt *s, void *p)
{
    copy_readers *r = p;
    if (s->kind != IR_S_BLOCK)
        return true;
    bool reads = false, writes = false;
    for (int i = 0; i < s->nreads; i++)
        reads |= s->reads[i] == r->xp;
    for (int i = 0; i < s->nwrites; i++)
        writes |= s->writes[i] == r->xp;
    if (reads && !writes) {
        if (r->n < 8)
            r->name[r->n++] = s->name;
        else
            r->more = true;
    }
    return true;
}

/* The dimensions of xp that block b's reads of it index with iteration
 * variables bound to (expressions of) loop variable v, as a bit set. */
typedef struct dims_find {
    const ir_buffer *xp;
    const ir_stmt *b;
    const ir_var *v;
    unsigned dims;
} dims_find;

static bool find_dims(const ir_expr *e, void *p)
{
    dims_find *df = p;
    if (e->kind != IR_LOAD || e->buf != df->xp)
        return true;
    for (int d = 0; d < e->nargs && d < 32; d++)
        for (int i = 0; i < df->b->niters; i++)
            if (uses(e->args[d], df->b->iters[i].var) && uses(df->b->iters[i].binding, df->v))
                df->dims |= 1u << d;
    return true;
}

/* The one dimension of copy xp along which its readers' threads split
 * what they read: every reader runs in a parallel loop whose variable
 * indexes that one dimension of xp (a convolution whose threads take
 * blocks of output rows reads x_pad[.., p + r, ..], p the parallel
 * loop's); -1 when a reader runs in no parallel loop (it reads all of xp
 * on one thread) or in one that indexes no dimension of xp or several (a
 * convolution split by output channels reads all of xp on each thread). */
static int readers_split_dim(auto_ctx *a, const ir_buffer *xp)
{
    copy_readers r = {xp, {NULL}, 0, false};
    ir_stmt_walk(a->f->body, find_copy_reader, NULL, &r);
    if (!r.n || r.more)
        return -1;
    int dim = -1;
    for (int k = 0; k < r.n; k++) {
        sch_ctx c = {a->m, a->f, &a->quiet, {"auto", 1, 1}};
        sch_path p = {.n = 0};
        if (!sch_find_block(&c, r.name[k], &p))
            return -1;
        const ir_stmt *par = NULL;
        for (int i = 0; i < p.n && !par; i++)
            if ((*p.slot[i])->kind == IR_S_FOR && (*p.slot[i])->for_kind == IR_FOR_PARALLEL)
                par = *p.slot[i];
        if (!par)
            return -1;
        dims_find df = {xp, *p.slot[p.n - 1], par->var, 0};
        ir_stmt_walk(df.b, NULL, find_dims, &df);
        if (!df.dims || (df.dims & (df.dims - 1)))
            return -1;
        int d = __builtin_ctz(df.dims);
        if (dim >= 0 && d != dim)
            return -1;
        dim = d;
    }
    return dim;
}

/* The loop of copy xp's fill nest that runs along its dimension d (not
 * vectorized, at least one iteration per thread), or NULL. */
static const ir_stmt *copy_loop_of_dim(auto_ctx *a, const ir_buffer *xp, int d)
{
    nest cur = {.n = 0};
    nest *all = malloc(sizeof *all * 256);
    int n = 0;
    const ir_stmt *found = NULL;
    if (!all)
        return NULL;
    auto_collect(a->f->body, &cur, all, &n, 256);
    for (int i = 0; i < n && !found; i++) {
        const ir_stmt *b = all[i].block, *st = b->nbody == 1 ? b->body[0] : NULL;
        if (!st || st->kind != IR_S_STORE || st->buf != xp || d >= st->nargs || st->args[d]->kind != IR_VAR)
            continue;
        for (int k = 0; k < all[i].n && !found; k++) {
            const ir_stmt *l = all[i].loops[k];
            const ir_itervar *iv = iter_of(b, l);
            if (iv && iv->var == st->args[d]->var && l->for_kind == IR_FOR_SERIAL && extent(l) >= a->threads)
                found = l;
        }
    }
    free(all);
    return found;
}

static const ir_buffer *local_named(const ir_stmt *s, const char *name)
{
    if (!s)
        return NULL;
    if (s->kind == IR_S_ALLOC && s->buf && strcmp(s->buf->name, name) == 0)
        return s->buf;
    for (int i = 0; i < s->nbody; i++) {
        const ir_buffer *b = local_named(s->body[i], name);
        if (b)
            return b;
    }
    return NULL;
}

/* A whole padded copy runs in parallel along the dimension its readers'
 * threads split (rows, when a convolution's threads take blocks of
 * output rows), its loop of that dimension moved outermost, so each thread
 * fills the rows it then reads: copied along channels, half of what a
 * thread read the other had written, through the other processor's cache
 * (a 3x3 convolution on 64x56x56 whose input is also the residual's, on
 * two threads: bench/results/split_s12.txt).  Otherwise along the loop
 * its own nest chose. */
void align_copy_threads(auto_ctx *a)
{
    for (int k = 0; k < a->nwhole_copies; k++) {
        const char *own = a->whole_copy_loop[k];
        if (!own)
            continue;
        const ir_buffer *xp = local_named(a->f->body, a->whole_copy[k]);
        int d = xp ? readers_split_dim(a, xp) : -1;
        const ir_stmt *l = d >= 0 ? copy_loop_of_dim(a, xp, d) : NULL;
        if (l && strcmp(l->var->name, own) != 0) {
            const char *name = l->var->name;   /* reorder moves variables between loop nodes */
            if (auto_step(a, "reorder(%s, %s)", name, own) && auto_step(a, "parallel(%s)", name))
                continue;
        }
        auto_step(a, "parallel(%s)", own);
    }
}
