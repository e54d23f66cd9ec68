/* passes/schedule/auto_contraction.c — the automatic scheduler's
 * contractions (matmul, linear, batched matmul, convolution: a BLIS-style
 * register tile over packed panels, auto.c's header comment tells the
 * structure) and matrix-vector products (rows of vectors, dot products,
 * packed weight panels). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/schedule/auto.h"

/* ---------------------------------------------------------------- contractions */

/* The iteration variable of block b bound to loop i of its nest: bound to
 * the loop's variable, or to it plus an offset from loops outside the nest
 * (fixed while the nest runs: the one iteration of f_all in f_all * 512 +
 * f_each, subsample_and_merge's loop around a nest and its copy). */
static const ir_itervar *nest_iter(const ir_stmt *b, const nest *ns, int i)
{
    const ir_itervar *it = iter_of(b, ns->loops[i]);
    for (int k = 0; k < b->niters && !it; k++) {
        const ir_expr *x = b->iters[k].binding;
        if (x->kind != IR_ADD || x->b->kind != IR_VAR || x->b->var != ns->loops[i]->var)
            continue;
        bool outside = true;
        for (int j = 0; j < ns->n; j++)
            outside &= !uses(x->a, ns->loops[j]->var);
        if (outside)
            it = &b->iters[k];
    }
    return it;
}

/* K blocks of a contraction's reduction (k_block_pick). */
typedef struct k_block {
    int loop;          /* the nest's reduce loop split, -1: no blocks */
    int64_t size;      /* its iterations per block */
    const char *ko, *ki;
} k_block;

/* The copy loop of cache_read's packing.  When the packed operand V runs
 * along its one reduce loop contiguously but along the vector loop with a
 * stride (a 1x1 convolution's or a linear layer's weight [out, in] packed
 * into column panels [in][32]), the copy is a transpose: vectors of the
 * panel's columns would gather one element from each of 16 rows.  Blocks
 * of 16 along the reduce loop instead read whole cache lines of each row
 * (ResNet-50's 2048 x 512 1x1 convolution on 7x7: 2.7 to 1.5 ms on one
 * thread).  Other copies run on vectors of the panel's columns. */
static void pack_copy(auto_ctx *a, const ir_expr *V, const nest *ns, const int *kind,
                      const char *ji, const char *vp, const k_block *kb)
{
    const ir_stmt *b = ns->block;
    /* the variable of V's innermost dimension longer than 1 */
    int d = V->nargs - 1;
    while (d > 0 && V->buf->shape[d] == 1)
        d--;
    const ir_var *last = d >= 0 && V->args[d]->kind == IR_VAR ? V->args[d]->var : NULL;
    int nreduce = 0, kloop = -1;
    for (int i = 0; i < ns->n; i++) {
        const ir_itervar *it = nest_iter(b, ns, i);
        if (kind[i] == 3 && it && load_uses(V, it->var)) {
            nreduce++;
            kloop = i;
        }
    }
    const ir_itervar *kit = kloop >= 0 ? nest_iter(b, ns, kloop) : NULL;
    /* (split in K blocks, the copy's loop is the blocks' inner one) */
    bool blocked = kloop >= 0 && kloop == kb->loop;
    int64_t kext = blocked ? kb->size : kloop >= 0 ? extent(ns->loops[kloop]) : 0;
    if (nreduce == 1 && kit && kit->var == last && kext % 16 == 0) {
        const char *kname = blocked ? kb->ki : ns->loops[kloop]->var->name;
        const char *ko = auto_fresh(a, ir_sprintf(a->m->arena, "%s_%s_o", kname, vp));
        const char *ki = auto_fresh(a, ir_sprintf(a->m->arena, "%s_%s_i", kname, vp));
        if (auto_step(a, "%s, %s = split(%s_%s, 16)", ko, ki, kname, vp) &&
            auto_step(a, "reorder(%s, %s_%s, %s)", ko, ji, vp, ki)) {
            auto_step(a, "unroll(%s)", ki);
            return;
        }
    }
    auto_step(a, "vectorize(%s_%s)", ji, vp);
}

/* The innermost dimension of buf longer than 1 (0 if none is): a block on
 * a 1x1 map (a squeeze-and-excitation block's 1x1 convolution on
 * [N, C, 1, 1]) indexes its trailing dimensions of one element with 0, and
 * runs along the one before them contiguously. */
static int inner_dim(const ir_buffer *buf, int nargs)
{
    int d = nargs - 1;
    while (d > 0 && buf->shape[d] == 1)
        d--;
    return d;
}

/* The variables of an index expression v, o*F + v, (o*F + p)*G + v ...,
 * innermost (the unit stride) first; n so far. */
static int index_vars(const ir_expr *x, const ir_var **vs, int n)
{
    if (n >= 8 || !x)
        return n;
    if (x->kind == IR_VAR) {
        vs[n++] = x->var;
        return n;
    }
    if (x->kind == IR_ADD)
        return index_vars(x->a, vs, index_vars(x->b, vs, n));
    if (x->kind == IR_MUL && (x->b->kind == IR_INT))
        return index_vars(x->a, vs, n);
    return n;
}

/* How well tiles of mr rows run mm rows: the full tiles and the last
 * one (a copy of its own, contraction_finish), a tile of m < 6 rows at
 * m/6 of the speed (too few accumulators to hide the multiply-add's
 * latency, too many loads per multiply-add). */
static double row_share(int64_t mm, int mr)
{
    int64_t tail = mm % mr;
    double full = (double)(mm - tail) * (mr < 6 ? mr / 6.0 : 1.0);
    double last = (double)tail * (tail < 6 ? (double)tail / 6.0 : 1.0);
    return (full + last) / (double)mm;
}

typedef struct contraction contraction;
static bool spill_counts(const auto_ctx *a, const nest *ns, const contraction *c);

/* The register tile of a contraction with nn columns (along the vector
 * operand), mm rows and K multiply-adds per output, and its estimated time
 * per output element (the return value; -1 when the columns do not split
 * into vectors and tails are not allowed); along_y: the columns run along
 * the output's last dimension; max_vectors: the most accumulator vectors
 * (tile_vectors); runs_double: a tile written back across Y's rows may take
 * 12 or 14 rows for its runs (below). */
static double tile_model(const auto_ctx *a, int64_t nn, int64_t mm, double K, bool along_y,
                         bool tails, bool f32_sums, int max_vectors, bool rows_inner,
                         bool runs_double, int *nr_out, int *mr_out, double *score)
{
    int L = a->lanes;
    /* two vectors of columns, one if that divides and two does not; a
     * guarded tail otherwise (codegen runs whole vectors where every lane
     * passes the guard) */
    int nr = nn % (2 * L) == 0 ? 2 * L : nn % L == 0 ? L : 0;
    if (!nr && tails)
        nr = nn >= 2 * L ? 2 * L : nn >= L ? L : 0;
    /* Fewer columns than a vector, a power of two of 4 lanes or more: one
     * narrower vector (the vectorizer runs a loop of 8 as 8 lanes).  A
     * grouped convolution's channels of one group (ResNeXt's 32 groups of
     * 8 at 28x28, weights [256, 8, 3, 3]) run whole in it, where columns
     * along the map's 28 leave 12 of them scalar: 1189 to 385 us on one
     * thread.  The lanes left empty count as lost below. */
    bool narrow = false;
    if (!nr && !tails && nn < L && nn >= 4 && (nn & (nn - 1)) == 0) {
        nr = (int)nn;
        narrow = true;
    }
    if (!nr)
        return -1;
    /* The rows: of the candidates the registers allow, the one whose
     * tiles use the rows best (row_share), a tail costing a twentieth
     * more (its copy of the tile's code: 10 rows run as two tiles of 5,
     * not 6 and 4), of equals the one with the longer last tile (17 rows
     * as 6 + 6 + 5, not 8 + 8 + 1: Inception's 1x7 convolutions on 17x17,
     * 1479 to 1340 us on one thread).  A 1x1 convolution 116 -> 116 on 14x14 along its
     * merged map: 4 rows (116 = 29 x 4) 82 us, 8 rows and a tail of 4
     * 51 us on one thread. */
    static const int mrs[] = {8, 7, 6, 12, 5, 4, 3, 2};
    int nv = narrow ? 1 : nr / L;
    int mr = 0;
    double best_rows = 0;
    for (size_t i = 0; i < sizeof mrs / sizeof *mrs; i++) {
        int m = mrs[i];
        if (m > mm || m * nv > max_vectors)
            continue;
        double used = row_share(mm, m) * (mm % m ? 0.95 : 1.0);
        if (used > best_rows + 1e-6 ||
            (used > best_rows - 1e-6 && mm % m > mm % mr && mm % mr)) {
            best_rows = used;
            mr = m;
        }
    }
    if (!mr)
        mr = (int)mm;   /* one row */
    /* One vector of columns by fewer than 8 rows holds fewer independent
     * sums than the two FMA ports need over the multiply-add's latency of
     * 4 cycles, and loads 8 operands per 7 multiply-adds where 14 rows
     * load 15 per 14: twice the rows, where they split as evenly.  A 1x1
     * convolution 672 -> 112 on 14x14 (7 vectors of channels, each by 7 map
     * columns): 14 columns by one vector 204 to 172 us on one thread
     * alone (EfficientNet-B0's features.5.1; ONNX Runtime's node 190 us);
     * per-layer minima in the model: GoogLeNet's 1x1 convolutions on 14x14
     * to 112 channels 185 to 156 us, MobileNetV3's 672 -> 112 219 to 196,
     * EfficientNet-B0's 480 -> 112 169 to 161 (bench/results/pw7_s20.txt).
     * Not under a row window, whose overlapping broadcasts take the
     * registers (tile_vectors). */
    /* Columns of an odd number of vectors, 5 or more, on rows side by
     * side in U whose two-vector panel exceeds the level-1 cache take the
     * second vector before the rows double: the 12- or 14-row tile below
     * then holds 28 sums (16 loads per 28 multiply-adds), where one vector
     * by 14 rows loads 15 per 14.  S3D's 1x1x1 convolutions on 4x14x14,
     * channels first: 512 -> 112, 942-1114 to 824-848 us alone on one
     * thread; 512 -> 144, 1166 to 882-916 us; in the model 0.73-0.86 on
     * one and two threads (bench/results/contract_s25.txt).  The odd
     * vectors' rule after the doubling serves rows that cannot double. */
    bool odd_vectors = nv == 1 && !narrow && mr < 8 && f32_sums && nn % L == 0 && nn / L % 2 &&
                       nn >= 5 * L && K >= 256 && 2 * mr <= max_vectors;
    if (odd_vectors && rows_inner && max_vectors >= TILE_MAX_VECTORS && K * 2 * L * 4 > a->l1d) {
        nr = 2 * L;
        nv = 2;
    }
    if (nv == 1 && mr < 8 && mm % (2 * mr) == 0 && max_vectors >= TILE_MAX_VECTORS)
        mr *= 2;
    /* Rows that cannot double (a 7x7 map's 7 columns) take a second
     * vector of columns instead, when the columns are an odd number of
     * vectors, 5 or more: the last column tile holds one vector, run
     * apart (contraction_finish).  RegNetY-800MF's 1x1 convolutions
     * 784 -> 784 on 7x7, 7 rows by 2 vectors rather than 1: 510 to 430 us
     * on one thread in the model (ONNX Runtime's node 461 us); GoogLeNet's
     * 3x3 96 -> 208 on 14x14 499 to 433 us.  Measured on reductions of
     * 784 and 864 terms; short ones (where the tile's fill and write-back
     * weigh more) keep one vector. */
    if (nv == 1 && !narrow && mr < 8 && f32_sums && nn % L == 0 && nn / L % 2 && nn >= 5 * L &&
        K >= 256 && 2 * mr <= max_vectors) {
        nr = 2 * L;
        nv = 2;
    }
    /* Two vectors of columns whose panel of K rows does not fit in the
     * level-1 cache stream it from the level-2 cache, two lines per step
     * of the reduction whatever the rows: 12 or 14 rows (24 or 28
     * accumulators, the vector registers' most with the two columns and
     * a broadcast) halve that stream per multiply-add against 6 or 7.
     * 1x1 convolutions on one thread (channels-first input, 32 channels
     * by the map's columns): 1024 -> 512 on 14x14, 7 rows 1370 us, 14
     * rows 1210 us; 512 -> 256 on 28x28, 1667 to 1498 us
     * (bench/results/rows_s21.txt).  Only where the rows lie side by
     * side in U (rows_inner): rows of a channels-last input lie a row of
     * channels apart, 4 KB for 1024, and 14 of them fall into one set of
     * the level-1 cache (ResNet-50's 1024 -> 256 on 14x14: 692 to 722 us).
     * So do the rows of a tile written back across Y's rows (columns not
     * along Y: each column's mr outputs are one run of Y, 28 bytes for 7
     * rows, 56 for 14, and so are a fused residual add's reads) on a
     * reduction of 256 or more, whose panel the level-1 cache may hold:
     * FCN-ResNet50's layer3 1x1 convolutions 256 -> 1024 on 28x28 with
     * their residual add, channels first, 7 to 14 rows: 0.90-0.94 of their
     * time in the model on two threads, 0.95-0.98 on one; one of them
     * alone 0.81-0.89 (AMD Zen 5, 48 KB level-1 cache,
     * bench/results/r50_s29.txt).  Not where U, read in place, fits half
     * the level-2 cache (spill_counts: the caller's runs_double false):
     * there the merged map's tile wins (spill_cost; the same convolution
     * with a 2 MB level-2 cache, contract_s26.txt). */
    if (nv == 2 && f32_sums && rows_inner && max_vectors >= TILE_MAX_VECTORS &&
        (K * nr * 4 > a->l1d || (runs_double && !along_y && K >= 256)))
        for (int m = 14; m >= 12; m -= 2)
            if (mm >= m && (mm % m == 0 || mm % m >= 6) && mr < m) {
                mr = m;
                break;
            }
    /* How well the tile uses the machine: whole vectors of columns per
     * unit of work, where a guarded tail's last columns cost one unit each
     * (codegen runs a vector only where every lane passes the guard; the
     * rest are scalar), and the share of tile rows that hold rows, times
     * the multiply-adds per load of the tile's inner step (mr x nv products
     * from mr broadcasts and nv vector loads).  A 1x1 convolution
     * 104 -> 104 on 28x28: columns along the map's 28 (one vector and 12
     * scalar columns) by 8 rows score 0.12, columns along the 104 output
     * channels (6 vectors and 8 scalar columns) by 7 rows 0.72, and run
     * 5x faster (990 to 191 us on one thread); 24 -> 144 on 56x56 keeps
     * its 144 channels in 9 whole vectors (0.89) rather than the map's 56
     * (3 vectors and 8 scalar columns: 0.51; measured 385 vs 658 us). */
    double lanes = narrow ? (double)nr / L : ((double)nn / L) / (double)(nn / L + nn % L);
    double rows = row_share(mm, mr);
    /* (no more than one multiply-add per load counts, and below it half
     * the shortfall: a machine loads faster than it multiplies, so a tile
     * of 8 rows by one vector (0.89, counted 0.94) runs almost as fast as
     * 8 by two (1.6): ResNet-50's 1x1 convolution
     * 128 -> 512 on 28x28 with its residual Add along the merged map in
     * one vector by 8 channels, 884 us, by two vectors 911 us, against
     * 1127 us along the channels and a transposed write-back; with a
     * tail of scalar columns, below one multiply-add per load counts: a
     * 3x3 convolution 40 -> 40 on 20x20 by one vector and 4 scalar
     * columns of the map, 254 us, by 2 vectors and 8 scalar columns of
     * the channels, 150 us.  ResNet's 7x7 stem, 3 -> 64
     * on 224x224 (K = 147), runs along the map's 112 columns in one vector
     * by 8 channels rather than along the 64 channels, 2.54 to 2.22 ms on
     * one thread; a 1x1 convolution 32 -> 192 on 28x28 (K = 32) along its
     * merged map rather than its channels, 142 to 93 us) */
    /* Integer sums (int8 on dot-product instructions, int8.c) keep the
     * uncapped count: their tile reads the operand in the vectors as
     * packed groups of 4 along the reduction, which a map read with a
     * stride is not (the int8 7x7 stem of a QDQ ResNet-18 along its map:
     * 1.0 to 12.9 ms on one thread). */
    double per_load = (double)(mr * nv) / (double)(mr + nv);
    bool whole = lanes >= 1.0;
    *score = lanes * rows *
             (!f32_sums || (!whole && per_load < 1) ? per_load
              : per_load < 1                        ? 0.5 + 0.5 * per_load
                                                    : 1);
    /* The time per output element, in vector operations: the reduction's
     * K multiply-adds at that efficiency, and the write-back of the tile,
     * a vector store per L elements when the vectors run along Y's last
     * dimension, else one store per element (a transpose: Y's elements of
     * one vector lie a row apart).  A 1x1 convolution 16 -> 96 on 112x112
     * has K = 16: columns along the 96 channels (2 vectors by 8 rows,
     * score 1.6) cost 0.63 + 1 per output, along the map's 112 (1 vector
     * by 8 rows, 0.89) 1.13 + 0.06, and run 2.6x faster (1465 to 560 us
     * on one thread, with a SiLU in the write-back). */
    /* A one-vector tile of 8 rows takes 16 (16 sums, 17 loads per 16
     * multiply-adds against 9 per 8) where the reduction is long enough
     * for the loop to dominate the tile's fill and write-back, counted as
     * it was (the candidates' scores stay comparable).  1x1 convolutions
     * along a 28x28 merged map on one thread, by output channels:
     * 256 -> 512, 1644 to 1266 us; 128 -> 512, 689 to 619; 64 -> 512, 324
     * to 297 (bench/results/rows_s21.txt). */
    if (nv == 1 && mr == 8 && K >= 64 && mm % 16 == 0 && max_vectors >= TILE_MAX_VECTORS)
        mr = 16;
    *nr_out = nr;
    *mr_out = mr;
    return K / ((double)L * *score) + (along_y ? 1.0 / L : 1.0);
}

/* A contraction's block as the steps below see it: the operands of its
 * product (V the one in the vectors, U the one broadcast along the tile's
 * rows), each loop's iteration variable and class, the column loop (the
 * innermost V-only loop), the row loop (the innermost U-only loop), their
 * extents and the multiply-adds per output. */
typedef struct contraction {
    ir_stmt *b, *body;
    const ir_expr *prod, *U, *V;
    const ir_itervar *it[32];
    int kind[32];          /* 0 batch, 1 M (U only), 2 N (V only), 3 reduce */
    int nloop, mloop;
    int64_t nn, mm;
    double K;
    bool row_window;   /* U's index along the rows also steps with a reduce
                          loop (a convolution's x[c, p + r, q + s]) */
} contraction;

/* Whether the block of ns is a contraction Y[..] = Y[..] + U[..] * V[..]
 * with an init, over loops that each bind one iteration variable, and its
 * operands and loops in *c (swap: the other operand in the vectors). */
static bool contraction_match(const nest *ns, bool swap, contraction *c)
{
    ir_stmt *b = ns->block;
    ir_stmt *body = b->nbody ? b->body[0] : NULL;
    if (!b->init || !body || body->kind != IR_S_STORE || !body->value ||
        body->value->kind != IR_ADD || body->value->a->kind != IR_LOAD ||
        body->value->a->buf != body->buf || body->value->b->kind != IR_MUL ||
        (!ir_dtype_is_float(body->buf->dtype) && body->buf->dtype != IR_I32))
        return false;
    c->b = b;
    c->body = body;
    c->prod = body->value->b;
    bool g1 = false, g2 = false;
    const ir_expr *o1 = unguarded_load(c->prod->a, &g1), *o2 = unguarded_load(c->prod->b, &g2);
    if (!o1 || !o2 || ns->n < 2)
        return false;
    for (int i = 0; i < ns->n; i++)
        if (!(c->it[i] = nest_iter(b, ns, i)) || extent(ns->loops[i]) < 1)
            return false;
    /* the vector operand V: the one that owns Y's last dimension (then,
     * if its dimension does not split into vectors, the other) */
    const ir_var *ylast = NULL;
    if (body->nargs > 0 && body->args[body->nargs - 1]->kind == IR_VAR)
        ylast = body->args[body->nargs - 1]->var;
    c->V = o2;
    c->U = o1;
    if (ylast && load_uses(o1, ylast) && !load_uses(o2, ylast)) {
        c->V = o1;
        c->U = o2;
    }
    if (g1 || g2)
        return false;   /* pad first */
    if (swap) {
        const ir_expr *t = c->V;
        c->V = c->U;
        c->U = t;
    }
    return true;
}

/* The class of each loop, the column and row loops (innermost by position
 * in Y's index; in an index g*Fg + f of a regrouped block, f is inside g),
 * their extents and K; false when either is missing. */
static bool contraction_loops(const nest *ns, contraction *c)
{
    for (int i = 0; i < ns->n; i++) {
        const ir_var *iv = c->it[i]->var;
        if (c->it[i]->kind == IR_ITER_REDUCE) {
            c->kind[i] = 3;
            continue;
        }
        bool inU = load_uses(c->U, iv), inV = load_uses(c->V, iv);
        c->kind[i] = inV && !inU ? 2 : inU && !inV ? 1 : 0;
    }
    c->nloop = c->mloop = -1;
    for (int d = c->body->nargs - 1; d >= 0; d--) {
        const ir_var *vs[8];
        int nvs = index_vars(c->body->args[d], vs, 0);
        for (int v = 0; v < nvs; v++)
            for (int i = 0; i < ns->n; i++) {
                if (vs[v] != c->it[i]->var)
                    continue;
                if (c->kind[i] == 2 && c->nloop < 0)
                    c->nloop = i;
                if (c->kind[i] == 1 && c->mloop < 0)
                    c->mloop = i;
            }
    }
    if (c->nloop < 0 || c->mloop < 0)
        return false;
    c->nn = extent(ns->loops[c->nloop]);
    c->mm = extent(ns->loops[c->mloop]);
    c->K = 1;
    for (int i = 0; i < ns->n; i++)
        if (c->kind[i] == 3)
            c->K *= (double)extent(ns->loops[i]);
    c->row_window = false;
    for (int d = 0; d < c->U->nargs; d++)
        if (uses(c->U->args[d], c->it[c->mloop]->var))
            for (int i = 0; i < ns->n; i++)
                c->row_window |= c->kind[i] == 3 && uses(c->U->args[d], c->it[i]->var);
    return true;
}

/* The most accumulator vectors of c's tile.  Where the rows' broadcasts
 * overlap from one tap of a window to the next (x[q + s] for q in the
 * tile), GCC unrolls the taps and keeps the shared broadcasts live beside
 * the accumulators: a tile of 12 rows by 2 vectors (24 accumulators, 14
 * broadcasts) then spills (88 stack accesses in the loop of Inception's
 * 3x3 convolution 80 -> 192 on 73x73), where 8 by 2 does not (12.6 to
 * 12.2 ms on one thread; bench/results/stem_s18.txt). */
static int tile_vectors(const contraction *c)
{
    return c->row_window ? 16 : TILE_MAX_VECTORS;
}

/* Whether V's rows along the reduction lie a multiple of 1024 bytes apart
 * (V's elements after the innermost dimension a reduce loop indexes). */
static bool rows_alias(const contraction *c)
{
    const ir_buffer *vb = c->V->buf;
    int d = -1;
    for (int i = 0; i < c->V->nargs; i++)
        for (int l = 0; l < c->b->niters && l < 32; l++)
            if (c->b->iters[l].kind == IR_ITER_REDUCE && uses(c->V->args[i], c->b->iters[l].var))
                d = i;
    if (d < 0)
        return true;
    int64_t stride = ir_dtype_size(vb->dtype);
    for (int i = d + 1; i < vb->ndim; i++)
        stride *= vb->shape[i];
    return stride % 1024 == 0;
}

/* The cost of the tile with columns along Y's last two dimensions merged
 * into one (a 1x1 convolution's map: merge(p, q)), when the loop of the one
 * before is the next loop out and also reads V only: whole vectors along
 * the map's P*Q elements, written back along Y's rows; on a map of 8
 * vectors or more a guarded tail of columns is allowed (SqueezeNet's
 * 1x1 convolution 16 -> 64 on 55x55, 3025 = 94 tiles of 32 and a tail of
 * 17: 128 to 61 us on one thread, against the output channels in vectors
 * and a transposed write-back), on a smaller one not (ShuffleNet's
 * 232 -> 232 on 7x7: a tile of 32 and one of 17 columns, 54 against 51
 * us).  In a->merge_cost (-1: they cannot be merged) and the loops'
 * names. */
static void contraction_merge_model(auto_ctx *a, const nest *ns, const contraction *c)
{
    const ir_stmt *body = c->body;
    int nl = c->nloop;
    a->merge_cost = -1;
    if (nl > 0 && c->kind[nl - 1] == 2 && body->nargs >= 2 &&
        body->args[body->nargs - 1]->kind == IR_VAR && body->args[body->nargs - 2]->kind == IR_VAR &&
        body->args[body->nargs - 1]->var == c->it[nl]->var &&
        body->args[body->nargs - 2]->var == c->it[nl - 1]->var) {
        int mnr, mmr;
        double ms;
        int64_t map = c->nn * extent(ns->loops[nl - 1]);
        a->merge_outer = ns->loops[nl - 1]->var->name;
        a->merge_inner = ns->loops[nl]->var->name;
        a->merge_cost = tile_model(a, map, c->mm, c->K, true, map >= 8 * a->lanes,
                                   ir_dtype_is_float(c->body->buf->dtype), tile_vectors(c), false,
                                   false, &mnr, &mmr, &ms);
        /* an activation's panels, contiguous along the merged map, are
         * packed when K rows of them do not fit the level-1 cache
         * (pack_columns), two vector operations per L elements */
        if (a->merge_cost > 0 && !auto_is_weight(a->m, a->f, c->V->buf) &&
            c->K * 3 * 64 > (double)a->l1d && rows_alias(c))
            a->merge_cost += 2.0 * c->K / ((double)c->mm * a->lanes);
    }
}

/* Whether the columns run along Y's innermost dimension longer than 1 (or
 * Y has none), so the tile writes back in vectors. */
static bool columns_along_y(const contraction *c)
{
    const ir_stmt *body = c->body;
    const ir_var *yinner = NULL;
    const ir_var *vs[8];
    int d = inner_dim(body->buf, body->nargs);
    if (index_vars(body->args[d], vs, 0) > 0)
        yinner = vs[0];
    return yinner == c->it[c->nloop]->var || body->buf->shape[d] == 1;
}

/* Whether the tile's rows run along U's innermost dimension (its
 * broadcasts of one step of the reduction lie side by side). */
static bool rows_inner(const contraction *c)
{
    const ir_expr *u = c->U->args[inner_dim(c->U->buf, c->U->nargs)];
    return u->kind == IR_VAR && u->var == c->it[c->mloop]->var;
}

/* Rows of 12 or 14 for a tile of two vectors of columns (tile_model) want
 * a row loop of at least 12; a channels-first 7x7 map has rows of 7.  With
 * its rows and columns merged, the tile takes 14 positions of the merged
 * map (49 as 3 x 14 + 7): ResNeXt-50's 1x1 2048 -> 1024 on 7x7, 1391 to
 * 1257 us on one thread (bench/results/rows_s21.txt). */
bool merge_rows_pays(const auto_ctx *a, const nest *ns)
{
    contraction w;
    if (!contraction_match(ns, true, &w) || !contraction_loops(ns, &w) ||
        !ir_dtype_is_float(w.body->buf->dtype) || w.row_window || !rows_inner(&w) ||
        w.mloop < 1 || w.kind[w.mloop - 1] != 1 || w.nn % (2 * a->lanes) != 0)
        return false;
    int64_t merged = w.mm * extent(ns->loops[w.mloop - 1]);

    return w.mm < 12 && merged >= 14 && w.K * 2 * a->lanes * 4 > (double)a->l1d;
}

/* The bytes of buf. */
static int64_t buffer_bytes(const ir_buffer *buf)
{
    int64_t n = ir_dtype_size(buf->dtype);
    for (int i = 0; i < buf->ndim; i++)
        n *= buf->shape[i];
    return n;
}

/* The level-1 cache's share of a tile whose rows run along U's innermost
 * dimension, read in place (a 1x1 convolution on a channels-first map,
 * the output channels in the vectors): each step of the reduction reads
 * the tile's rows from a line of U of their own (or two), a map apart
 * from the step before, beside the nr columns of the panel.  When the
 * panel's K steps and those lines together exceed the level-1 cache, U's
 * lines push the panel out between two tiles, and every step loads both
 * from the level-2 cache: the nv lines of the panel and U's lines, each
 * counted as a vector operation per output of the step's mr x nr (the
 * machine fetches about a line from the level-2 cache per cycle, two
 * multiply-adds' time).  Where U does not fit half the level-2 cache its
 * rows go outermost with a copy per row (contraction_order), contiguous:
 * not counted; nor where the threads may take U's rows outermost (a weight
 * no larger than U, parallel_pick's v_small), also with such a copy; nor
 * for a tile of 12 or 14 rows, which tile_model gives a panel beyond the
 * level-1 cache to halve its stream per multiply-add: RegNetX-1.6GF's 1x1
 * 408 -> 408 on 14x14 in 14 rows by 2 vectors ran 1.1-1.3x slower along
 * the merged map (196 columns, a tail of 4) when counted.  Only where U's
 * map splits into whole vectors (784 = 49 x 16; not 14x14: RegNetY-1.6GF's
 * 336 -> 888, 7 rows, along the merged map with a tail 1.05 of its time
 * on one thread).  FCN-ResNet50's 1x1 convolutions 256 -> 1024 on 28x28 with
 * the residual Add (a panel of 32 KB, 256 lines of U per tile, a 48 KB
 * level-1 cache): 7 rows by 2 vectors of channels 3656 us on one thread
 * alone, 14 rows 3280, along the merged map (16 channels by a vector of
 * the map, which the cost below no longer ties with) 2535; in the model,
 * with the weight's rows outermost (weight_rows_outer), 0.69-0.71 of their
 * time on one thread, 0.8x on two (ONNX Runtime's node 2450 us on one;
 * bench/results/contract_s26.txt). */
/* Whether spill_cost below counts anything for c (but for a tile of 12 or
 * more rows): U read in place, the merged tile an alternative. */
static bool spill_counts(const auto_ctx *a, const nest *ns, const contraction *c)
{
    /* (the map, U's loops: only where it splits into whole vectors, the
     * merged tile this cost makes way for) */
    int64_t map = 1;
    for (int i = 0; i < ns->n; i++)
        if (c->kind[i] == 1)
            map *= extent(ns->loops[i]);
    int64_t ub = buffer_bytes(c->U->buf), vb = buffer_bytes(c->V->buf);
    bool v_small = vb <= ub || (4 * vb <= a->l2 && 2 * vb <= 3 * ub);
    return map % a->lanes == 0 && ir_dtype_is_float(c->body->buf->dtype) && !c->row_window &&
           rows_inner(c) && 2 * ub <= a->l2 && !(a->threads > 1 && v_small);
}

static double spill_cost(const auto_ctx *a, const nest *ns, const contraction *c, int nr, int mr)
{
    if (!spill_counts(a, ns, c) || mr >= 12)
        return 0;
    int64_t esize = ir_dtype_size(c->U->buf->dtype);
    /* (mr elements at any offset: one line, and a second where they cross
     * a line's end) */
    double lines = 1.0 + (double)(mr * esize - esize) / 64.0;
    if (lines > 2)
        lines = 2;
    double nv = (double)nr / a->lanes;
    if (c->K * ((double)nr * (double)esize + 64.0 * lines) <= (double)a->l1d)
        return 0;
    return c->K * (nv + lines) / (double)(mr * nr);
}

/* The share of the threads' time that e iterations keep busy when each
 * thread runs its turn of them: 5 on 2 threads, 5/6. */
static double balance(int64_t e, int threads)
{
    return (double)e / (double)(((e + threads - 1) / threads) * threads);
}

/* Which of the n loops outside the tile (outermost first) runs on the
 * threads, -1 none: the outermost with two turns per thread, else one.
 * With free_order (nothing is packed per iteration of these loops: V is a
 * weight, which prepack packs at load), a loop further in whose
 * iterations split among the threads better by more than a tenth of
 * their time, to be moved outermost: a 1x1 convolution 768 -> 160 on 17x17
 * has 5 column panels (3 and 2 on two threads: 624 us on one, 375 on two)
 * but 17 rows of the map (9 and 8: 339 us on two).  Not for less: each
 * thread then streams every panel of the weight per row instead of its
 * own panels (80 -> 480 on 14x14, 15 panels against 14 rows: 88 to 106 us
 * on two threads) - unless the weight is no larger than the activation,
 * or no more than half as large again while a quarter of L2 holds it
 * (v_small; u_loop, v_loop: which of the loops
 * only U's or only V's indices use): then U's first loop after a picked
 * loop of V's (the column panels; the map's rows) moves when its
 * iterations split as evenly among the threads, as each thread reads
 * its own rows of U and all of V instead of all of U and its share of V,
 * and when U's producer split its rows among the threads too, rows that
 * thread wrote.  DenseNet-121's 36 1x1 convolutions 128+32k -> 128 on
 * 28x28 and 14x14 (4 panels of 32 channels against 28 or 14 rows): their
 * sum 3-4% less on two threads in three runs of four (equal in the
 * fourth).  MobileNetV2's 64 -> 384 on 14x14 (V 98 KB, U 50 KB) loses 15%
 * as rows: not when V is twice U; Inception-v3's 768 -> 192 on 17x17 (6
 * panels, 9 and 8 rows) 3-11%: not less evenly.  RegNet-X-800MF's and
 * RegNet-Y-400MF's 1x1 convolutions on 14x14 (288 and 208 channels: V
 * 1.5 and 1.06 times U, 331 and 173 KB) 0.77-0.90 of their time as rows on two
 * threads, ResNet-50's 1024 -> 256 (V 1 MB, 1.3 times U) 1.04-1.08: a
 * weight beyond a quarter of L2 streams from farther away per thread
 * (bench/results/rowsl2_s22.txt). */
static int parallel_pick(const auto_ctx *a, const int64_t *exts, int n, bool free_order,
                         const bool *u_loop, const bool *v_loop, bool v_small, bool *moved)
{
    int pick = -1, T = a->threads;
    *moved = false;
    for (int want = 2 * T; want >= T && T > 1 && pick < 0; want -= T)
        for (int i = 0; i < n && pick < 0; i++)
            if (exts[i] >= want)
                pick = i;
    if (pick < 0 || !free_order)
        return pick;
    for (int i = pick + 1; i < n; i++)
        if (exts[i] >= 2 * T && balance(exts[i], T) > balance(exts[pick], T) + 0.105) {
            *moved = true;
            return i;
        }
    int rows = pick + 1;
    while (rows < n && !u_loop[rows])
        rows++;
    if (v_small && v_loop[pick] && rows < n && exts[rows] >= 2 * T &&
        balance(exts[rows], T) >= balance(exts[pick], T)) {
        *moved = true;
        return rows;
    }
    return pick;
}

static bool pack_columns(const auto_ctx *a, const contraction *c);

/* Whether the tile's rows go outermost because U is a weight broadcast
 * along them and V, read in place, fits the level-2 cache (a 1x1
 * convolution along its merged channels-first map, output channels as the
 * rows): each panel of the weight's rows (mr rows by K, in the level-1
 * cache) then serves every column tile, and V is read again from the
 * level-2 cache per panel, where with the column tiles outside (or blocks
 * of them, column_block) the whole weight would come from memory or the
 * last-level cache once per column tile or block - in a network a weight
 * is read once per run.  A weight of an eighth of the level-2 cache or
 * more; V no more than half of it.  FCN-ResNet50's 1x1 convolutions 256 ->
 * 1024 on 28x28 with their residual Add (weight 1 MB, V 800 KB), along
 * the merged map by 16 channels, in the model on one thread: in blocks of
 * 7 column tiles 4300-4550 us, rows outermost 2800-2900 us (ONNX Runtime
 * 2450); the downsample 256 -> 512 of stride 2 on its 28x28 copy (weight
 * 512 KB, copy 800 KB) 0.74 of its time.  Not where weight and V together
 * fit half the level-2 cache, which keeps the weight for the next block:
 * FCN-ResNet50's 128 -> 512 on 28x28 (256 + 400 KB) rows outermost 1.05-1.15
 * of their time in blocks (bench/results/contract_s26.txt). */
static bool weight_rows_outer(const auto_ctx *a, const contraction *c)
{
    int64_t ub = buffer_bytes(c->U->buf), vb = buffer_bytes(c->V->buf);
    return ir_dtype_is_float(c->body->buf->dtype) && !c->row_window &&
           auto_is_weight(a->m, a->f, c->U->buf) && !auto_is_weight(a->m, a->f, c->V->buf) &&
           !pack_columns(a, c) && columns_along_y(c) && 8 * ub >= a->l2 && 2 * vb <= a->l2 &&
           2 * (ub + vb) > a->l2;
}

/* The column loop of a register tile outside it: jr, the column tiles,
 * or when n > 1 tiles run as a block, jr split into outer (the blocks)
 * and inner (the n tiles of one block, inside the row tiles); rows_par:
 * the threads take the row tiles inside each block, not the blocks. */
typedef struct col_block {
    const char *jr, *outer, *inner;
    int n;
    bool rows_par;
} col_block;

/* How many column tiles run as one block inside the row tiles (1: none).
 * A tile written back along Y's rows (columns along its last dimension)
 * writes mr rows of nr elements, and the next tile in the row loop the
 * next mr rows: every row of Y gets nr elements (128 bytes) per pass, a
 * short run in another page for each row, which the prefetchers do not
 * follow, and a fused residual add reads its operand the same way.  With
 * the tiles of a block of columns inside the row tiles, each row gets a
 * run of the whole block, as BLIS's loop over a block of columns around
 * its row panels does; the block of V (K rows of it, read in place) is
 * read again from the level-2 cache by each row tile.  The block: the
 * largest divisor of the column tiles up to 8 tiles (1 KB of f32 per row)
 * whose K rows fit in a quarter of 1 MB; *rows_par: the threads take the
 * row tiles inside each block, not the blocks.  ResNet-50's 1x1 convolution
 * 64 -> 256 on 56x56 with its residual add, along the merged map in tiles
 * of 32 by 8 channels: blocks of 7 tiles, 1335 to 1074 us on one thread
 * in the model; MobileNetV2's 16 -> 96 on 112x112, 501 to 397 us. */
static int column_block(const auto_ctx *a, const contraction *c, int nr, int mr, bool *rows_par)
{
    *rows_par = false;
    int64_t tiles = c->nn / nr, row_tiles = (c->mm + mr - 1) / mr;
    int64_t esize = ir_dtype_size(c->V->buf->dtype);
    /* (an output that fits in the level-1 cache is not streamed) */
    if (!columns_along_y(c) || c->nn % nr != 0 || tiles < 2 || row_tiles < 2 ||
        c->nn * c->mm * ir_dtype_size(c->body->buf->dtype) <= a->l1d)
        return 1;
    /* The threads take the blocks when these split among them about as
     * evenly as the tiles did, else the row tiles inside each block when
     * those do: 49 tiles of a 28x28 map run as 25 and 24 on two threads,
     * 7 blocks of 7 would run as 4 and 3, so the 64 row tiles of its 512
     * channels split instead, a start of the threads per block
     * (ResNet-50's 1x1 128 -> 512 on 28x28 with its residual add, blocks
     * of 7 tiles of 16: 1030 to 943 us on one thread). */
    int T = a->threads;
    double even = balance(tiles, T) - 0.05;
    for (int n = 8; n >= 2; n--) {
        if (tiles % n != 0 || c->K * n * nr * esize > 256 * 1024)
            continue;
        if (T < 2 || balance(tiles / n, T) >= even)
            return n;
        if (row_tiles >= 2 * T && balance(row_tiles, T) >= even) {
            *rows_par = true;
            return n;
        }
    }
    return 1;
}

/* Whether load x indexes one of its dimensions by v alone and uses v in
 * no other. */
static bool own_dimension(const ir_expr *x, const ir_var *v)
{
    int own = 0, other = 0;
    for (int d = 0; d < x->nargs; d++)
        if (x->args[d]->kind == IR_VAR && x->args[d]->var == v)
            own++;
        else if (uses(x->args[d], v))
            other++;
    return own == 1 && other == 0;
}

/* K-blocking (BLIS's kc loop).  A column tile's pass over the row tiles
 * reads its packed panel of V (K rows of the tile's nr columns) once per
 * row tile and U once in all.  When the two together exceed the level-2
 * cache and the panel is a sizeable part of it (over an eighth), U's
 * stream pushes the panel out between two row tiles, and each row tile
 * reads it again from farther away (a panel larger than the cache, always).
 * The reduce loop that indexes a dimension of both operands alone (a
 * convolution's input channels) is then split into blocks whose share of
 * panel and U fits half the level-2 cache (the largest divisor, at least
 * two blocks), the block loop right inside the column tiles and outside
 * the row tiles: each block of the panel stays in the level-2 cache for
 * every row tile.  The sums of one column tile stay in a buffer of their
 * own across the blocks (cache_write at the column tile: nr columns by all
 * the rows, per thread, at most a quarter of the level-2 cache), zeroed
 * before the first block (decompose_reduction at the block loop), the
 * register tile loading and storing them once per block; whatever the
 * schedule or the fuse pass puts in that buffer's write-back (a bias, an
 * activation, a residual add) runs once, after the last block.  The terms
 * are added in the same order as without blocks: the results are the same
 * bit for bit.  FCN-ResNet50's head, a 3x3 convolution 2048 -> 512 on
 * 28x28 (a panel of 32 channels 2.4 MB, the padded input 7.4 MB): 220 to
 * 88 ms on one thread; its layer4's 3x3 convolutions of dilation 2, 512 ->
 * 512 (panel 590 KB, input 2.1 MB), 38 to 22 ms (the first; the others
 * 25 to 21); MC3-18's 1x3x3 convolutions 256 -> 256 (panel 295 KB) 12 to
 * 11 ms.  A panel of 18 KB (EfficientNet-B3's 1x1 144 -> 32 on 75x75)
 * stays in the cache anyway: blocks only added the sums' loads and stores
 * (274 to 366 us).  bench/results/kblock_s22.txt.  Nor where U alone fits
 * the level-2 cache (a 1 MB one: ResNet-50's 3x3 convolutions of stride 2,
 * 256 channels from 28x28 (U 861 KB, panel 295 KB) and 512 from 14x14 (U
 * 461 KB, panel 590 KB), Wide-ResNet-50-2's 3x3 512 -> 512 on 14x14 (U
 * 524 KB): without blocks 0.86-0.95 of their time in the model on one
 * thread, 0.90-0.99 on two; Wide-ResNet's 128 -> 128 on 56x56, U 1.7 MB,
 * keeps its blocks, 0.94-0.98 of the time without; AMD Zen 5,
 * bench/results/contract_s28.txt), with room for a quarter of the panel
 * beside it: each row tile's re-read of the panel then misses in the
 * level-2 cache only for what U leaves, where blocks add the sums' loads
 * and stores to every tile.  A U of the whole cache keeps its blocks:
 * R3D-18's 3x3x3 convolutions 256 -> 256 in its layer3 (U 1 MB, panel
 * 864 KB) 1.11-1.23 of their time without them here, FCN-ResNet50's
 * layer4.0.conv2 (U 2 MB, panel 590 KB) 38 to 22 ms with them on the
 * Intel (kblock_s22); so does a panel larger than the cache whatever U. */
static k_block k_block_pick(const auto_ctx *a, const nest *ns, const contraction *c, int nr,
                            bool packs, int g4)
{
    k_block kb = {-1, 0, NULL, NULL};
    int64_t esize = ir_dtype_size(c->V->buf->dtype);
    /* what one column tile's pass over the rows reads: its panel and U
     * (of one iteration of the batch loops outside) */
    double u = (double)buffer_bytes(c->U->buf);
    for (int i = 0; i < ns->n; i++)
        if (c->kind[i] == 0 && load_uses(c->U, c->it[i]->var))
            u /= (double)extent(ns->loops[i]);
    double panel = c->K * (double)nr * (double)esize, w = panel + u;
    /* (U that the level-2 cache holds with a quarter of the panel beside
     * it, a panel it holds too: no blocks, see above) */
    bool u_stays = u + panel / 4 <= (double)a->l2 && panel <= (double)a->l2;
    if (!packs || g4 >= 0 || !ir_dtype_is_float(c->body->buf->dtype) ||
        panel <= (double)a->l2 / 8 || w <= (double)a->l2 || u_stays)
        return kb;
    /* the reduce loop that indexes a dimension of U and of V alone (a
     * convolution's input channels, wherever they lie in the nest), the
     * longest: a block of it reads its share of both (a loop of the
     * filter's taps moves U's rows: each block would read all of U) */
    int first = -1;
    for (int i = 0; i < ns->n; i++)
        if (c->kind[i] == 3 && own_dimension(c->U, c->it[i]->var) &&
            own_dimension(c->V, c->it[i]->var) &&
            (first < 0 || extent(ns->loops[i]) > extent(ns->loops[first])))
            first = i;
    if (first < 0)
        return kb;
    int64_t ext = extent(ns->loops[first]);
    double per = w / (double)ext;   /* bytes a step of the loop (U's share approximate) */
    /* the column tile's sums: nr columns by the rows (the U loops) */
    double acc = (double)nr * (double)ir_dtype_size(c->body->buf->dtype);
    for (int i = 0; i < ns->n; i++)
        if (c->kind[i] == 1)
            acc *= (double)extent(ns->loops[i]);
    if (acc > (double)a->l2 / 4)
        return kb;
    for (int64_t d = ext / 2; d >= 1; d--)
        if (ext % d == 0 && d * per <= (double)a->l2 / 2) {
            kb.loop = first;
            kb.size = d;
            return kb;
        }
    return kb;
}

/* Row blocks.  With U's outer rows outermost (a 1x1 convolution on a
 * channels-first map, p, then the weight's column panels, then the tiles
 * along the row), the first row reads every panel of the weight from
 * memory: a weight is read once per run of the network, so it comes from
 * memory or the last-level cache, not from where the row before left it,
 * and the first row's few columns per weight element leave the tile
 * waiting on that stream (DenseNet-121's 1x1 992 -> 128 on 14x14, a 508
 * KB weight: 342 us on one thread with everything in the level-2 cache,
 * 401 in the model).  The rows then run in blocks inside the panels: one
 * block per thread (its share of the rows), or more while a block of U's
 * rows exceeds a quarter of the level-2 cache, so that each panel, once
 * fetched, serves a block of rows, and the stream of the next panel
 * overlaps the block's work; U's copy per row (copy_row_operand) becomes
 * a copy per block.  For a weight of an eighth of the level-2 cache or
 * more: DenseNet-121's 1x1 convolutions on 14x14 (544 to 992 input
 * channels), in blocks of 7 rows, 0.78-0.82 of their time on two
 * threads, 0.95-0.97 on one; with 128 KB of weight (256 channels) 1.01-1.04
 * (bench/results/rowblock_s24.txt).  With the threads on the panels
 * inside each row (par at the column loop), the blocks run one after the
 * other, the threads on the panels inside each.  Returns the loop of
 * blocks (names[0] renamed, its rows' loop inside the first column loop),
 * NULL: none. */
#define COPY_ROW_PANELS 4
static bool rows_across(const auto_ctx *a, const nest *ns, const contraction *c);

static const char *row_blocks(auto_ctx *a, const nest *ns, const contraction *c,
                              const col_block *cb, const char *ir, const char **names,
                              int64_t *exts, int *nouter, int par)
{
    int64_t vb = buffer_bytes(c->V->buf), ub = buffer_bytes(c->U->buf);
    if (*nouter < 3 || *nouter >= 40 || exts[0] < 2 ||
        names[0] == ir || !auto_is_weight(a->m, a->f, c->V->buf) ||
        !ir_dtype_is_float(c->body->buf->dtype) || 8 * vb < a->l2 || !rows_across(a, ns, c))
        return NULL;
    int row = -1, col = -1;
    for (int j = 0; j < ns->n; j++)
        if (c->kind[j] == 1 && j != c->mloop && names[0] == ns->loops[j]->var->name)
            row = j;
    for (int i = 1; i < *nouter && col < 0; i++)
        if (names[i] == cb->jr)
            col = i;
    /* (U read through a copy per block, copy_row_operand: read in place,
     * a block's rows come from the level-2 cache once per panel, in short
     * runs a channel apart - ResNet-50's 1x1 convolutions 128 -> 512 on
     * 28x28, 1.05-1.09 of their time on two threads) */
    if (row < 0 || col < 0 || exts[col] < COPY_ROW_PANELS)
        return NULL;
    for (int i = 1; i < col; i++)
        if (exts[i] > 1)
            return NULL;
    int64_t P = exts[0], T = a->threads > 1 ? a->threads : 1, blocks = T;
    double row_bytes = (double)ub / (double)P;
    int64_t R = (P + blocks - 1) / blocks, nb;
    if (T > 1 && par == col) {
        /* The threads on the panels inside the rows (U's rows too few to
         * share evenly in blocks): every thread runs each block, so the
         * blocks are the largest divisor of the rows whose share of U fits
         * a quarter of the level-2 cache.  Besides each panel's reuse, the
         * tiles of a panel then write a block's run of each output row
         * (their columns run across Y's rows: a transposed write-back),
         * where one row's tiles wrote 28 elements of each row, a map
         * apart, and a fused residual add reads them so.  FCN-ResNet50's
         * 1x1 convolutions 512 -> 2048 on 28x28 with the residual add
         * (weight 4 MB, U 1.6 MB: blocks of 7 rows) alone on one thread
         * 12.6 to 11.2 ms (ONNX Runtime's node 10.2; the kernel with its
         * output and the residual in the level-1 cache 10.6); in the
         * model 0.89-0.95 of their time on one thread, 0.87-0.95 on two,
         * the 1024 -> 2048 (blocks of 4) 0.93-0.95; DenseNet-201's
         * transition3, 1792 -> 896 on 14x14 (blocks of 2), 0.73 and 0.85
         * (bench/results/contract_s27.txt). */
        for (R = P - 1; R >= 2 && (P % R != 0 || R * row_bytes > (double)a->l2 / 4); R--)
            ;
        if (R < 2)
            return NULL;
        nb = P / R;
    } else {
        if (par != 0 && T > 1)
            return NULL;
        while (R > 1 && R * row_bytes > (double)a->l2 / 4) {
            blocks += T;
            R = (P + blocks - 1) / blocks;
        }
        /* (blocks that share the rows among the threads less evenly than
         * single rows do: none) */
        nb = (P + R - 1) / R;
        if (R < 2 || ((nb + T - 1) / T) * R > (P + T - 1) / T)
            return NULL;
    }
    const char *outer = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", names[0]));
    const char *inner = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", names[0]));
    if (!auto_step(a, "%s, %s = split(%s, %lld)", outer, inner, names[0], (long long)R))
        return NULL;
    for (int i = *nouter; i > col + 1; i--) {
        names[i] = names[i - 1];
        exts[i] = exts[i - 1];
    }
    names[col + 1] = inner;
    exts[col + 1] = R;
    names[0] = outer;
    exts[0] = nb;
    (*nouter)++;
    return outer;
}

/* Moves loop i of names/exts (the loops outside the tile) outermost,
 * the loops before it one further in. */
static void move_outermost(const char **names, int64_t *exts, int i)
{
    const char *nm = names[i];
    int64_t ext = exts[i];
    for (int k = i; k > 0; k--) {
        names[k] = names[k - 1];
        exts[k] = exts[k - 1];
    }
    names[0] = nm;
    exts[0] = ext;
}

/* The loops of a register-tiled contraction outside the tile, in the
 * order of its reorder step: batch, other N, jr, other M, ir, then the
 * reduce loops (g4o for the int8 loop g4), except that the loop the
 * threads run (parallel_pick) comes first when it may move.  Appends them
 * to order; the spatial ones also to names/exts (*nouter of them, at most
 * 40), the first reduce loop's name to *first_reduce, and which of names
 * runs on the threads to *par (-1: none). */
static int contraction_order(auto_ctx *a, const nest *ns, const contraction *c, int nr,
                             int mr, const col_block *cb, const char *ir, int g4, const char *g4o,
                             k_block *kb, char *order, size_t size, const char **names,
                             int64_t *exts, int *nouter, const char **first_reduce, int *par,
                             const char **row_outer)
{
    int pos = 0;
    bool u_loop[40], v_loop[40];
    *nouter = 0;
    *first_reduce = NULL;
    for (int pass = 0; pass < 6; pass++)
        for (int i = 0; i < ns->n; i++) {
            int k = c->kind[i];
            const char *nm = NULL;
            int64_t ext = extent(ns->loops[i]);
            if ((pass == 0 && k == 0) || (pass == 1 && k == 2 && i != c->nloop) ||
                (pass == 3 && k == 1 && i != c->mloop))
                nm = ns->loops[i]->var->name;
            else if (pass == 2 && i == c->nloop) {
                nm = cb->n > 1 ? cb->outer : cb->jr;
                ext = c->nn / nr / cb->n;
            } else if (pass == 4 && i == c->mloop) {
                nm = ir;
                ext = (c->mm + mr - 1) / mr;
            } else if (pass == 5 && i == c->nloop && cb->n > 1) {
                nm = cb->inner;
                ext = cb->n;
            }
            if (nm && *nouter < 40) {
                u_loop[*nouter] = pass == 3 || pass == 4;
                v_loop[*nouter] = pass == 1 || pass == 2 || pass == 5;
                names[*nouter] = nm;
                exts[(*nouter)++] = ext;
            }
        }
    bool moved;
    int64_t vbytes = buffer_bytes(c->V->buf), ubytes = buffer_bytes(c->U->buf);
    bool v_small = vbytes <= ubytes || (4 * vbytes <= a->l2 && 2 * vbytes <= 3 * ubytes);
    *par = parallel_pick(a, exts, *nouter, auto_is_weight(a->m, a->f, c->V->buf), u_loop,
                         v_loop, v_small, &moved);
    for (int i = 0; i < *nouter && cb->rows_par; i++)
        if (names[i] == ir)
            *par = i;
    /* A weight that the level-1 cache holds whole (half of it) gains
     * nothing from its column panels outside the rows: the rows' loop the
     * threads run moves outermost, so each row of U is read once for all
     * the panels, not once per panel, and the threads start once (float
     * sums: an int8 tile's packed groups were not measured so).
     * SqueezeNet's first convolution 3 -> 64, 3x3 of stride 2 on 224x224
     * (a weight of 7 KB, 2 panels of 32 channels outside 111 map rows):
     * 567 -> 551-555 us on one thread (bench/results/conv_s16.txt).
     * So does a weight that a quarter of the level-2 cache holds while
     * the activation does not fit half of it: the panels of the weight
     * are read again from the level-2 cache per row, where the activation
     * would stream from farther away once per panel.  ResNet-50's 1x1
     * 256 -> 64 on 56x56 (weight 64 KB, input 3.2 MB, 2 panels): 991 ->
     * 867 us in the model on one thread (Intel Xeon, 2 MB L2; ONNX
     * Runtime 790; bench/results/conv_s19.txt). */
    bool outside = false;   /* (a loop of more than one iteration outside the rows) */
    for (int i = 0; i < *par; i++)
        outside |= exts[i] > 1;
    int64_t vb = buffer_bytes(c->V->buf), ub = buffer_bytes(c->U->buf);
    if (!moved && g4 < 0 && outside && u_loop[*par] && auto_is_weight(a->m, a->f, c->V->buf) &&
        (2 * vb <= a->l1d || (4 * vb <= a->l2 && 2 * ub > a->l2)))
        moved = true;
    /* Rows outermost for a weight broadcast along them (weight_rows_outer),
     * the threads on its panels; the loop after them, the column tiles,
     * then holds the accumulator tile. */
    if (!moved && g4 < 0 && weight_rows_outer(a, c) && *nouter >= 2)
        for (int i = 1; i < *nouter; i++)
            if (names[i] == ir && exts[i] >= (a->threads > 1 ? 2 * a->threads : 2)) {
                move_outermost(names, exts, i);
                *par = 0;
            }
    /* (the innermost loop holds the accumulator tile: it stays last) */
    if (moved && *par < *nouter - 1) {
        move_outermost(names, exts, *par);
        *par = 0;
    }
    /* U's rows first (BLIS's loop over blocks of A's rows outside the
     * column panels) when U, read once per column panel, is more than half
     * the level-2 cache and the tile's rows lie side by side in U (a 1x1
     * convolution on a channels-first map: each step of the reduction reads
     * the tile's rows a map apart, a short run in another page per input
     * channel, which the prefetchers do not follow): U's outer rows (the
     * map's, not the tile's) move outermost, so one row of U stays in the
     * level-2 cache for all the panels, which stream contiguously from
     * memory once per row (the panels' stream shares the cache with U,
     * hence half of it).  No filter taps (a window's rows of U are
     * shared by neighbouring rows: K-blocking serves those, k_block_pick).
     * FCN-ResNet50's 1x1 convolutions on 28x28 (64 panels) on one thread:
     * 1024 -> 2048 (U 3.2 MB, weight 8 MB) 36 to 24 ms, on two 37 to 18
     * (the threads still on the panels, inside each row); 512 -> 2048 (U
     * 1.6 MB) 17.4 to 12.5 ms, on two 8.5 to 6.2. */
    if (!moved && g4 < 0 && !c->row_window && rows_inner(c) &&
        auto_is_weight(a->m, a->f, c->V->buf) && ir_dtype_is_float(c->body->buf->dtype) &&
        2 * ub > a->l2) {
        int row = -1;
        for (int i = 1; i < *nouter && row < 0; i++) {
            bool of_u = false, window = false;
            for (int j = 0; j < ns->n; j++) {
                if (c->kind[j] != 1 || names[i] != ns->loops[j]->var->name)
                    continue;
                of_u = true;
                /* (a window along it: a 3x1x1 convolution's frames) */
                for (int d = 0; d < c->U->nargs; d++)
                    for (int k = 0; k < ns->n; k++)
                        window |= c->kind[k] == 3 && uses(c->U->args[d], c->it[j]->var) &&
                                  uses(c->U->args[d], c->it[k]->var);
            }
            if (names[i] == ir || window)
                break;
            if (of_u && exts[i] > 1)
                row = i;
        }
        bool v_before = false;   /* (a column loop outside it to pass) */
        for (int i = 0; i < row; i++)
            v_before |= exts[i] > 1;
        if (row > 0 && v_before) {
            move_outermost(names, exts, row);
            *par = *par == row ? 0 : *par < row ? *par + 1 : *par;
        }
    }
    *row_outer = NULL;
    if (kb->loop < 0 && g4 < 0 && cb->n == 1)
        *row_outer = row_blocks(a, ns, c, cb, ir, names, exts, nouter, *par);
    /* K blocks (k_block_pick) go right inside the column tiles, so only
     * loops that U does not use may run outside them (the rows' loop that
     * the threads run, moved outermost, would leave a block one row's
     * tiles) */
    int jpos = -1;
    for (int i = 0; i < *nouter && kb->loop >= 0; i++) {
        if (names[i] == cb->jr && cb->n == 1) {
            jpos = i;
            break;
        }
        /* (u_loop follows the order before the move above: by name) */
        bool of_u = names[i] == ir;
        for (int j = 0; j < ns->n; j++)
            of_u |= c->kind[j] == 1 && names[i] == ns->loops[j]->var->name;
        if (of_u && exts[i] > 1)
            break;
    }
    if (jpos < 0)
        kb->loop = -1;
    for (int i = 0; i < *nouter; i++) {
        pos += snprintf(order + pos, size - (size_t)pos, "%s%s", pos ? ", " : "", names[i]);
        if (i == jpos)
            pos += snprintf(order + pos, size - (size_t)pos, ", %s", kb->ko);
    }
    for (int i = 0; i < ns->n; i++)
        if (c->kind[i] == 3) {
            const char *rn = i == g4 ? g4o : i == kb->loop ? kb->ki : ns->loops[i]->var->name;
            pos += snprintf(order + pos, size - (size_t)pos, ", %s", rn);
            if (!*first_reduce)
                *first_reduce = rn;
        }
    return pos;
}

/* Whether the tile packs V's column panel (cache_read per column tile).
 * A weight, yes: prepack packs it once, at load.  An activation read along
 * the columns contiguously (V's innermost index is the column loop's
 * variable: a 1x1 convolution's input on its merged map, x[c, pq]) whose
 * panel of K rows of the tile's columns fits in the level-1 cache, no:
 * the copy would be one more pass over V for every panel, and the rows
 * read in place stay in the cache while the panel's row tiles use them
 * (1x1 convolutions on one thread: 16 -> 16 on 112x112, 77 to 61 us;
 * 144 -> 24 on 56x56, 236 to 191 us; 16 -> 96 on 112x112, 387 to 372 us).
 * A panel that does not fit it is packed only when its rows lie a
 * multiple of 1024 bytes apart, so that they fall into a few sets of the
 * cache and evict each other (a GEMM on a power-of-two width); rows at
 * any other distance stream from the level-2 cache as they are (1x1
 * convolutions along their merged map on one thread: 256 -> 64 on 56x56,
 * 1103 to 1013 us; 232 -> 232 on 14x14, 255 to 206 us; 512 -> 24 on
 * 14x14, 78 to 47 us). */
static bool last_index_is(const ir_expr *ld, const ir_var *v);

static bool pack_columns(const auto_ctx *a, const contraction *c)
{
    if (auto_is_weight(a->m, a->f, c->V->buf) || !last_index_is(c->V, c->it[c->nloop]->var))
        return true;
    /* a row of the panel: two vectors of f32, three cache lines when not
     * aligned to one */
    double row = 3 * 64;
    return c->K * row > (double)a->l1d && rows_alias(c);
}


/* The time to copy one element of V into its column panel, in vector
 * operations: V read along the columns at a stride of 1 or 2 (an image
 * under a convolution of stride 2) copies in vectors, a load or two and a
 * shuffle per L elements; at any other stride (a matrix read across its
 * rows) each element is a load of its own. */
static double pack_element_cost(const auto_ctx *a, const contraction *c)
{
    const ir_var *col = c->it[c->nloop]->var;
    int d = inner_dim(c->V->buf, c->V->nargs);
    ir_affine f;
    for (int i = 0; i < c->V->nargs; i++)
        if (i != d && uses(c->V->args[i], col))
            return 1;
    if (!ir_affine_of(c->V->args[d], &f))
        return 1;
    for (int i = 0; i < f.n; i++)
        if (f.var[i] == col)
            return f.coef[i] == 1 || f.coef[i] == 2 ? 2.0 / a->lanes : 1;
    return 1;
}

/* (a tile's accumulators from which three taps are unrolled, tap_loop) */
#define TAP3_SUMS 24

/* The loop of a window's taps that the tile's unrolled rows sit in, to be
 * unrolled too: the innermost reduce loop (the last of contraction_order's
 * reduce loops, in nest order) when it has 4 to 7 iterations, in float
 * sums (an int8 tile's grouped loop was not measured so); NULL otherwise.
 * Its few iterations around a large unrolled tile are a loop GCC does not
 * peel, and in that loop it keeps the tile's accumulators in rotating
 * registers: a move for every multiply-add's result at the back edge, as
 * many instructions as multiply-adds besides the tap's index arithmetic
 * (floormod and floordiv of a stride's deinterleaved copy), so the
 * front end, not the FMA ports, bounds the loop.  ResNet's 7x7 stem of
 * stride 2, 3 -> 64 on 224x224 (taps s innermost under c and r, tiles of
 * 8 map columns by 32 channels): the kernel alone 1563 to 1401 us on one
 * thread (152 to 168 GF/s), in ResNet-18 1744 to 1603 us (ONNX Runtime's
 * node 1465 us), GoogLeNet's 2004 to 1586; ConvNeXt-T's 4x4 stem of stride
 * 4, 259 to 237 us (per-layer minima, bench/results/pw7_s20.txt).  A
 * dense convolution on a channels-last map sums its channels innermost (64
 * or more): no loop of taps there.  Three taps gain nothing measurable (RegNet-Y's grouped 3x3 convolutions, tiles
 * of 7 columns by 8 channels: 474 and 482 us on one thread; DenseNet's
 * 3x3 convolutions 128 -> 32 within 3% either way in the model), so a
 * 3x3 filter keeps its loop, but for a tile of TAP3_SUMS accumulators or
 * more (14 map columns by 32 channels), where GCC's rotating registers
 * cost as with more taps: S3D's temporal 3x1x1 convolution 192 -> 192 on
 * 8x56x56, channels first, the kernel alone 64-66 to 50-59 ms on one
 * thread (ONNX Runtime's node 49 ms; bench/results/contract_s25.txt). */
static const char *tap_loop(const nest *ns, const contraction *c, bool grouped, int sums)
{
    if (grouped || !ir_dtype_is_float(c->body->buf->dtype))
        return NULL;
    int last = -1;
    for (int i = 0; i < ns->n; i++)
        if (c->kind[i] == 3 && extent(ns->loops[i]) > 1)
            last = i;
    if (last < 0 || extent(ns->loops[last]) < 3 || extent(ns->loops[last]) > 7)
        return NULL;
    if (extent(ns->loops[last]) == 3) {
        /* three taps: only under a tile of TAP3_SUMS accumulators or more,
         * and only where the output runs 8 or more steps along the taps'
         * axis (the unrolled taps are not trimmed at the border,
         * skip_padding_taps: a padded tap in 2 of 8 frames is 1/12 more
         * work, in 2 of 4 frames 1/6) */
        int64_t along = 0;
        const ir_var *tv = c->it[last]->var;
        for (int d = 0; d < c->U->nargs; d++) {
            if (!uses(c->U->args[d], tv))
                continue;
            for (int i = 0; i < ns->n; i++)
                if (c->kind[i] != 3 && uses(c->U->args[d], c->it[i]->var) &&
                    extent(ns->loops[i]) > along)
                    along = extent(ns->loops[i]);
        }
        if (sums < TAP3_SUMS || along < 8)
            return NULL;
    }
    return ns->loops[last]->var->name;
}

/* The tile's inner steps after the reorder: V packed per column panel, Y
 * accumulated in a local tile, the init decomposed out of the reduce loops
 * and vectorized (scalar stores of zeros that the tile's vector loads then
 * read would stall each tile on store forwarding), the tile's rows unrolled
 * and columns in vectors, the copies vectorized along the columns. */
static bool contraction_tile(auto_ctx *a, const nest *ns, const contraction *c, const char *ir,
                             const char *ii, const char *jr, const char *ji,
                             const char *first_reduce, bool grouped, const k_block *kb,
                             int sums, const char **jv_out)
{
    const char *nname = ns->loops[c->nloop]->var->name, *bname = c->b->name;
    const char *vp = auto_fresh(a, ir_sprintf(a->m->arena, "%sp", c->V->buf->name));
    /* (a reduction grouped by 4 or 2 (int8.c) reads V's groups packed
     * [..][columns][4]: read in place, four rows of it would be
     * interleaved for every row of the tile) */
    bool packed = (grouped || pack_columns(a, c)) &&
                  auto_step(a, "%s = cache_read(%s, %s)", vp, c->V->buf->name, jr);
    /* K blocks: the column tile's sums across the blocks, zeroed before
     * the first; the register tile then loads and stores them per block */
    const char *acc = NULL;
    if (kb->loop >= 0) {
        acc = auto_fresh(a, ir_sprintf(a->m->arena, "%s_acc", c->body->buf->name));
        if (!auto_step(a, "%s = cache_write(%s, %s)", acc, bname, jr))
            return false;
        if (auto_step(a, "decompose_reduction(%s, %s)", bname, kb->ko))
            auto_step(a, "vectorize(%s_init)", ji);
    }
    const char *cl = auto_fresh(a, ir_sprintf(a->m->arena, "%s_tile", c->body->buf->name));
    if (!auto_step(a, "%s = cache_write(%s, %s)", cl, bname, ir))
        return false;
    if (!acc && first_reduce && auto_step(a, "decompose_reduction(%s, %s)", bname, first_reduce))
        auto_step(a, "vectorize(%s_init)", ji);
    auto_step(a, "unroll(%s)", ii);
    const char *taps = tap_loop(ns, c, grouped, sums);
    if (taps)
        auto_step(a, "unroll(%s)", taps);
    const char *jv = auto_fresh(a, ir_sprintf(a->m->arena, "%s_v", nname));
    const char *jl = auto_fresh(a, ir_sprintf(a->m->arena, "%s_l", nname));
    if (c->nn < a->lanes)
        auto_step(a, "vectorize(%s)", ji);   /* one narrow vector */
    else if (auto_step(a, "%s, %s = split(%s, %d)", jv, jl, ji, a->lanes)) {
        auto_step(a, "unroll(%s)", jv);
        auto_step(a, "vectorize(%s)", jl);
        *jv_out = jv;
    }
    auto_step(a, "vectorize(%s_%s)", ji, cl);
    auto_step(a, "vectorize(%s_%s_out)", ji, cl);
    if (acc)
        auto_step(a, "vectorize(%s_%s_out)", ji, acc);
    if (packed)
        pack_copy(a, c->V, ns, c->kind, ji, vp, kb);
    return true;
}

/* Threads on the loop contraction_order chose (par; if the primitive
 * refuses it, the outermost with enough iterations), then the tails: the
 * last row tile and the last column tile run in copies of their own, so
 * the guards leave every other tile (rows first: the column loop's copy
 * then holds both parts). */
static void contraction_finish(auto_ctx *a, const contraction *c, int nr, int mr, const char *jr,
                               const char *ir, const char *jv, const char *const *names,
                               const int64_t *exts, int nouter, int par)
{
    int threads_loop = par >= 0 && auto_step(a, "parallel(%s)", names[par]) ? par : -1;
    for (int i = 0; i < nouter && par >= 0 && threads_loop < 0; i++)
        if (exts[i] >= a->threads && auto_step(a, "parallel(%s)", names[i]))
            threads_loop = i;
    if (c->mm % mr != 0 && c->mm > mr)
        auto_partition_late(a, ir, c->mm / mr);
    if (c->nn % nr != 0 && c->nn > nr) {
        auto_partition_late(a, jr, c->nn / nr);
        /* The threads' loop partitioned: its copy, the last column tile
         * alone, would run on one thread after the others finish (a 1x1
         * convolution's last 8 of 1000 channels: 114 us on one of two
         * threads, bench/results/par_s11.txt).  Its threads go to the loop
         * inside it (the copy's loops are named NAME_tail; not the row
         * loop, whose own partition took that name). */
        int in = threads_loop + 1;
        if (threads_loop >= 0 && in < nouter && strcmp(names[threads_loop], jr) == 0 &&
            strcmp(names[in], ir) != 0 && exts[in] >= a->threads)
            auto_step_late(a, ir_sprintf(a->m->arena, "parallel(%s_tail)", names[in]));
        /* The last column tile's vectors, when its columns are a whole
         * vector and part of one (88 = 2 x 32 + 24: 16 + 8): the loop
         * over its vectors, unrolled, partitioned where the guard first
         * fails, so that the vectorizer sees a vector that never is whole
         * and runs its valid lanes as one narrower vector; in one loop of
         * both it ran them as scalars (8 scalar multiply-adds per row and
         * step in EfficientNet-B2's 1x1 convolutions 528 -> 88 and
         * 720 -> 120 on 14x14, whose last panel then cost more than the
         * two whole ones).  Fewer than 4 lanes of the part stay scalars
         * either way (the vectorizer's narrowest vector holds 4): their
         * partition would only add code (Swin-T's and MaxViT-T's products
         * with 49 = 32 + 16 + 1 columns).  The copy's name is the
         * partition's: NAME_tail, or NAME_tail_2 when the rows' partition
         * took it (a step that finds no such loop or no failing guard
         * changes nothing). */
        int64_t rest = c->nn % nr;
        if (jv && rest > a->lanes && rest % a->lanes >= 4) {
            auto_step_late(a, ir_sprintf(a->m->arena, "partition(%s_tail)", jv));
            auto_step_late(a, ir_sprintf(a->m->arena, "partition(%s_tail_2)", jv));
        }
    }
}

/* Whether the activation V reads Y's map (loops nl-1 and nl, the rows and
 * columns of Y's last two dimensions) at a stride: its last two indices
 * are S * vp and S' * vq with a stride above 1 (a 1x1 convolution of
 * stride 2), and no other index of V uses them, so a copy of what the
 * block reads of V is V subsampled, rows and columns contiguous. */
static bool strided_map(const auto_ctx *a, const nest *ns, const contraction *c)
{
    int nl = c->nloop, d = inner_dim(c->V->buf, c->V->nargs);
    if (nl < 1 || c->kind[nl - 1] != 2 || d < 1 || auto_is_weight(a->m, a->f, c->V->buf))
        return false;
    const ir_var *vp = c->it[nl - 1]->var, *vq = c->it[nl]->var;
    int64_t sp, sq;
    if (!ir_affine_var_coef(c->V->args[d - 1], vp, &sp) ||
        !ir_affine_var_coef(c->V->args[d], vq, &sq) || (sp < 2 && sq < 2) || sp < 1 || sq < 1)
        return false;
    for (int i = 0; i < c->V->nargs; i++)
        if ((i != d - 1 && uses(c->V->args[i], vp)) || (i != d && uses(c->V->args[i], vq)))
            return false;
    /* each of the two indices a multiple of its loop's variable alone */
    for (int i = 0; i < ns->n; i++) {
        const ir_var *v = c->it[i]->var;
        if (v != vp && v != vq && (uses(c->V->args[d - 1], v) || uses(c->V->args[d], v)))
            return false;
    }
    return true;
}

/* The block named name (the steps that copy a nest's operand rebuild
 * its block), and its nest in a->f now. */
typedef struct named_block {
    const char *name;
    const ir_stmt *found;
} named_block;

static bool find_named(const ir_stmt *s, void *p)
{
    named_block *nb = p;
    if (s->kind == IR_S_BLOCK && !nb->found && strcmp(s->name, nb->name) == 0)
        nb->found = s;
    return !nb->found;
}

static bool nest_named(auto_ctx *a, const char *name, nest *out)
{
    named_block nb = {name, NULL};
    ir_stmt_walk(a->f->body, find_named, NULL, &nb);
    return nb.found && auto_nest_of(a, nb.found, out);
}

/* Marks the alloc of the buffer named by p filled. */
static bool mark_copy_filled(const ir_stmt *s, void *p)
{
    if (s->kind == IR_S_ALLOC && s->buf && strcmp(s->buf->name, p) == 0)
        s->buf->filled = true;
    return true;
}

/* A contraction whose activation reads the output's map at a stride (a
 * strided 1x1 convolution) reads its operand V through a subsampled copy
 * first: cache_read of what one iteration of a loop around the whole nest
 * reads (the outermost loop split into one iteration fa around the nest,
 * the loops V uses put first under it for the copy's layout, then the
 * nest's order back).  The copy holds a quarter of what the strided reads
 * touch at stride 2 and each tile reads it contiguously: ResNet-50's
 * 512 -> 1024, stride 2, 28x28 to 14x14 with its residual add, tiles of 7
 * map columns by 32 channels, 2125 to 1995 us on one thread.  And the map's
 * rows and columns, which V's strided elements kept from merging, merge
 * on the copy (merge keeps the copy's own loops and indexes the copy at
 * p * Q + q), so the tile runs along the merged map when that costs no
 * more than a twentieth over the chosen tile (cost): the 256 -> 512,
 * stride 2, 56x56 to 28x28, along the channels in vectors 2261 us, along
 * the copy's merged map (16 by 8 channels) 1962 us with the copy.  Else the
 * chosen tile (swap, tails) on the copy.  True when it scheduled the
 * block. */
static bool contraction_schedule(auto_ctx *a, nest *ns, bool swap, bool tails, bool check_only,
                                 bool copy);

/* Copies operand X of the contraction of nest ns once, before the nest: the
 * outermost loop split into one iteration around the nest (NAME_all, the
 * copy's loop; NAME_each the nest's), the loops X uses put under it in
 * the order of rank (lowest first; -1: X does not use the loop), the copy
 * made there (cache_read: its layout follows that order), then the nest's
 * order back.  The copy runs along its innermost loop in vectors and, with
 * threads, its outermost on the threads; every element of it is stored
 * (one dimension per loop, as long as the loop), so it is malloc'd, not
 * zeroed first.
 * False when a step refuses (the steps so far stand: the block then gets
 * its tile without the copy). */
static bool copy_operand(auto_ctx *a, const nest *ns, const ir_expr *X, const int *rank,
                         bool threads)
{
    const char *first = ns->loops[0]->var->name;
    const char *fa = auto_fresh(a, ir_sprintf(a->m->arena, "%s_all", first));
    const char *fb = auto_fresh(a, ir_sprintf(a->m->arena, "%s_each", first));
    const char *copy_order = fa, *back = NULL, *copy_outer = NULL, *copy_inner = NULL;
    bool placed[32] = {false};
    for (int r = 0; r < 32; r++)
        for (int i = 0; i < ns->n; i++)
            if (rank[i] == r && !placed[i]) {
                placed[i] = true;
                copy_inner = i ? ns->loops[i]->var->name : fb;
                copy_outer = copy_outer ? copy_outer : copy_inner;
                copy_order = ir_sprintf(a->m->arena, "%s, %s", copy_order, copy_inner);
            }
    for (int i = 0; i < ns->n; i++) {
        const char *nm = i ? ns->loops[i]->var->name : fb;
        if (!placed[i])
            copy_order = ir_sprintf(a->m->arena, "%s, %s", copy_order, nm);
        back = back ? ir_sprintf(a->m->arena, "%s, %s", back, nm) : nm;
    }
    const char *xs = auto_fresh(a, ir_sprintf(a->m->arena, "%ss", X->buf->name));
    if (!copy_inner ||
        !auto_step(a, "%s, %s = split(%s, %lld)", fa, fb, first, (long long)extent(ns->loops[0])))
        return false;
    if (!auto_step(a, "reorder(%s)", copy_order) ||
        !auto_step(a, "%s = cache_read(%s, %s)", xs, X->buf->name, fa) ||
        !auto_step(a, "reorder(%s)", back))
        return false;
    ir_stmt_walk(a->f->body, mark_copy_filled, NULL, (void *)xs);
    auto_step(a, "vectorize(%s_%s)", copy_inner, xs);
    if (threads && a->threads > 1)
        auto_step(a, "parallel(%s_%s)", copy_outer, xs);
    return true;
}

/* A row operand U read across its rows (rows_across) by a tile whose
 * column panels run inside a loop over U's outer rows (a 1x1 convolution
 * on a map of channels-first rows, p outermost: x[c, p, q] read by the
 * panels of 32 output channels of each row p) is read through a copy of
 * what that loop's iteration reads of U, laid out in the order the loops
 * inside run ([q_o][c][q_i]: each tile's steps of the reduction broadcast
 * the next mr elements of one stream), made in the loop before its panels
 * and shared by them.  Read in place, each step of c fetches a line 3 KB
 * from the last: ResNeXt-50's 1x1 convolutions 512 -> 256 on 28x28 (8
 * panels), 1667 to 1357 us on one thread (ONNX Runtime 1227). */
static void copy_row_operand(auto_ctx *a, const nest *ns, const contraction *c, int nr,
                             const char *const *names, const int64_t *exts, int nouter,
                             const char *columns, const char *row_outer)
{
    if (!rows_across(a, ns, c))
        return;
    int col = -1, at = -1;
    for (int i = 0; i < nouter && col < 0; i++)
        if (names[i] == columns)
            col = i;
    for (int i = 0; i < col; i++) {
        for (int k = 0; k < ns->n; k++)
            if (c->kind[k] == 1 && k != c->mloop && exts[i] > 1 &&
                strcmp(names[i], ns->loops[k]->var->name) == 0)
                at = i;
        if (names[i] == row_outer)
            at = i;
    }
    /* (the column tiles that share one copy, the last partial one too:
     * 112 channels in tiles of 32 are 4) */
    if (at < 0 || (c->nn + nr - 1) / nr < COPY_ROW_PANELS)
        return;
    const char *xs = auto_fresh(a, ir_sprintf(a->m->arena, "%ss", c->U->buf->name));
    if (auto_step(a, "%s = cache_read(%s, %s)", xs, c->U->buf->name, names[at]))
        ir_stmt_walk(a->f->body, mark_copy_filled, NULL, (void *)xs);
}

/* Whether the tile with the weight in vectors would take 12 or 14 rows
 * of the map on a subsampled copy (rows side by side, tile_model) that it
 * cannot take on the strided reads in place: ResNeXt-50's 1x1 512 -> 1024
 * of stride 2 from 28x28 (1.6 MB, in a 2 MB level-2 cache) to 14x14, 1731
 * us in place (7 rows), 1301 us through the copy (14 rows) on one thread
 * (in the model with its residual add 2116 us, ONNX Runtime 1419). */
static bool rows_after_copy(const auto_ctx *a, const nest *ns)
{
    contraction w;
    if (!contraction_match(ns, true, &w) || !contraction_loops(ns, &w) ||
        !ir_dtype_is_float(w.body->buf->dtype) || w.row_window)
        return false;
    return w.K * 2 * a->lanes * 4 > (double)a->l1d && (w.mm % 14 == 0 || w.mm % 12 == 0) &&
           w.nn % (2 * a->lanes) == 0;
}

static bool subsample_strided(auto_ctx *a, nest *ns, bool swap, bool tails, double cost)
{
    contraction c;
    if (!contraction_match(ns, false, &c) || !contraction_loops(ns, &c) || !strided_map(a, ns, &c))
        return false;
    contraction_merge_model(a, ns, &c);
    bool merge = a->merge_cost > 0 && a->merge_cost <= cost * 1.05;
    /* Without the merge, the copy pays only when V does not fit in the
     * level-2 cache (the strided reads then come from farther away for
     * every panel of the tile's columns): 1024 -> 2048 of stride 2 from
     * 14x14 (800 KB) to 7x7 with its residual add, 1903 us read in place,
     * 2027 us through the copy on one thread. */
    if (!merge && buffer_bytes(c.V->buf) <= a->l2 && !rows_after_copy(a, ns))
        return false;
    const ir_stmt *b = c.b;
    /* the copy's order: the loops V uses, in V's order of dimensions (the
     * last of them runs along V's innermost dimension) */
    int rank[32] = {0};
    for (int i = 0; i < ns->n; i++) {
        rank[i] = -1;
        for (int d = c.V->nargs - 1; d >= 0; d--)
            if (uses(c.V->args[d], c.it[i]->var))
                rank[i] = d;
    }
    const char *mo = a->merge_outer, *mi = a->merge_inner;   /* set when merge */
    bool copied = copy_operand(a, ns, c.V, rank, true);
    merge = copied && merge &&
            auto_step(a, "%s = merge(%s, %s)", auto_fresh(a, ir_sprintf(a->m->arena, "%s%s", mo, mi)),
                      mo, mi);
    nest now;
    if (nest_named(a, b->name, &now))
        contraction_schedule(a, &now, merge ? false : swap, merge || tails, false, false);
    return true;
}

/* Whether the row operand U is an activation read across its rows: each
 * index a loop's variable alone, the row loop's along U's innermost
 * dimension, a reduce loop's outside it (a 1x1 convolution's input
 * x[c, p, q] under a tile of output channels in vectors by q of the map:
 * each step of c broadcasts mr elements from another row of the map), and
 * U more than the level-1 cache holds, so that the tile's passes over it,
 * one per panel of columns, fetch a line for every few elements.  Float
 * sums only: an integer tile (int8.c) reads 4 elements of U along the
 * reduction at once, which such a copy puts mr apart (a QDQ ResNet-50's
 * 2048 -> 512 on 7x7: 236 to 375 us on one thread). */
static bool rows_across(const auto_ctx *a, const nest *ns, const contraction *c)
{
    const ir_expr *U = c->U;
    int d = inner_dim(U->buf, U->nargs);
    if (!ir_dtype_is_float(c->body->buf->dtype) || auto_is_weight(a->m, a->f, U->buf) ||
        U->args[d]->kind != IR_VAR ||
        U->args[d]->var != c->it[c->mloop]->var || buffer_bytes(U->buf) <= a->l1d)
        return false;
    bool reduce_outside = false;
    for (int k = 0; k < U->nargs; k++) {
        if (U->buf->shape[k] == 1)
            continue;
        if (U->args[k]->kind != IR_VAR)
            return false;
        int loop = -1;
        for (int i = 0; i < ns->n; i++)
            if (c->it[i]->var == U->args[k]->var)
                loop = i;
        if (loop < 0 || extent(ns->loops[loop]) != U->buf->shape[k])
            return false;
        reduce_outside |= k < d && c->kind[loop] == 3;
    }
    return reduce_outside;
}

/* A contraction whose row operand U is read across its rows (rows_across)
 * by many panels of columns reads it through a copy laid out in the
 * order the tile runs: the loops outside the row loop, then the reduce
 * loops, then the row loop ([p][c][q] for x[c, p, q]), so that each step of
 * the reduction broadcasts the next mr elements of one stream.  ResNet-50's
 * 1x1 convolution 2048 -> 512 on 7x7 (tiles of 7 map columns by 32
 * channels, 16 panels): 1144 to 957 us on one thread (ONNX Runtime 955).
 * The copy runs on one thread: on two, a copy on the threads is one more
 * start and join of them, which cost more than the copy (888 -> 888 on
 * 7x7: 433 us in place, 523 through a copy on the threads, 422 through
 * one on a thread).  While it runs, the other threads wait: it pays when
 * each thread runs 8 panels or more (on two threads: 832 -> 192 on 7x7, 6
 * panels, 88 to 105 us; 832 -> 384, 12 panels, 175 to 178 us; 2048 -> 512,
 * 16 panels, 558 to 523 us; on one thread all three gain 9-12%).  True
 * when it scheduled the block. */
static bool transpose_rows(auto_ctx *a, nest *ns, bool swap, bool tails)
{
    contraction c;
    int nr, mr;
    double score;
    if (!contraction_match(ns, swap, &c) || !contraction_loops(ns, &c) || !rows_across(a, ns, &c) ||
        tile_model(a, c.nn, c.mm, c.K, columns_along_y(&c), tails,
                   ir_dtype_is_float(c.body->buf->dtype), tile_vectors(&c), rows_inner(&c),
                   !spill_counts(a, ns, &c), &nr,
                   &mr, &score) < 0 ||
        c.nn / nr < 8 * a->threads || c.mm != mr)
        return false;
    int rank[32] = {0};
    for (int i = 0; i < ns->n; i++)
        rank[i] = !load_uses(c.U, c.it[i]->var) ? -1 : i == c.mloop ? 2 : c.kind[i] == 3 ? 1 : 0;
    const ir_stmt *b = c.b;
    copy_operand(a, ns, c.U, rank, false);
    nest now;
    if (nest_named(a, b->name, &now))
        contraction_schedule(a, &now, swap, tails, false, false);
    return true;
}

/* The register-tiled schedule of a contraction (swap: the other operand in
 * the vectors; tails: columns that do not split into vectors get a guarded
 * tail).  check_only: only the model, in a->tile_cost and the fields after
 * it; false when the block is no contraction or its columns do not fit. */
bool schedule_contraction(auto_ctx *a, nest *ns, bool swap, bool tails, bool check_only)
{
    return contraction_schedule(a, ns, swap, tails, check_only, true);
}

static void skip_padding_taps(auto_ctx *a, const char *name);

/* schedule_contraction's work; copy: an activation operand may be read
 * through a copy, once: subsampled (subsample_strided) or laid out in the
 * order the tile runs (transpose_rows). */
static bool contraction_schedule(auto_ctx *a, nest *ns, bool swap, bool tails, bool check_only,
                                 bool copy)
{
    contraction c;
    if (!contraction_match(ns, swap, &c) || !contraction_loops(ns, &c))
        return false;
    a->merge_cost = -1;
    if (!swap)
        contraction_merge_model(a, ns, &c);
    int nr, mr;
    double cost = tile_model(a, c.nn, c.mm, c.K, columns_along_y(&c), tails,
                             ir_dtype_is_float(c.body->buf->dtype), tile_vectors(&c),
                             rows_inner(&c), !spill_counts(a, ns, &c), &nr, &mr,
                             &a->tile_score);
    if (cost < 0)
        return false;
    cost += spill_cost(a, ns, &c, nr, mr);
    if (!check_only && copy &&
        (subsample_strided(a, ns, swap, tails, cost) || transpose_rows(a, ns, swap, tails)))
        return true;
    a->tile_cost = cost;
    /* An activation in the vectors that the tile packs is copied once per
     * column panel, K elements per column, shared by the mm rows: about
     * two vector operations per L copied (a strided read, a shuffle) */
    a->pack_cost = 0;
    if (!auto_is_weight(a->m, a->f, c.V->buf) && pack_columns(a, &c))
        a->pack_cost = c.K / (double)c.mm * pack_element_cost(a, &c);
    a->vector_operand = c.V->buf;
    a->vector_columns = c.nn;
    if (check_only)
        return true;
    const char *nname = ns->loops[c.nloop]->var->name, *mname = ns->loops[c.mloop]->var->name;
    const char *jr = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", nname));
    const char *ji = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", nname));
    const char *ir = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", mname));
    const char *ii = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", mname));
    if (!auto_step(a, "%s, %s = split(%s, %d)", jr, ji, nname, nr) ||
        !auto_step(a, "%s, %s = split(%s, %d)", ir, ii, mname, mr))
        return true;
    /* int8 on dot-product instructions (passes/schedule/int8.c): one
     * reduce loop split by 4, its 4 iterations innermost */
    int gsize;
    int g4 = sch_int8_group_loop(c.b, ns->loops, c.kind, ns->n, c.prod, c.V, a->lanes, &gsize);
    const char *g4o = NULL, *g4i = NULL;
    if (g4 >= 0) {
        g4o = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", ns->loops[g4]->var->name));
        g4i = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", ns->loops[g4]->var->name));
        if (!auto_step(a, "%s, %s = split(%s, %d)", g4o, g4i, ns->loops[g4]->var->name, gsize))
            g4 = -1;
    }
    char order[1024];
    const char *names[40], *first_reduce;
    int64_t exts[40];
    int nouter, par;
    const char *row_outer;
    col_block cb = {jr, NULL, NULL, 1, false};
    bool packs = g4 >= 0 || pack_columns(a, &c), rows_par;
    /* (packed panels take no column blocks, a weight's either: ResNet-50's
     * channels-last 1x1 convolutions with blocks of 4 or 8 weight panels
     * inside the row tiles, each panel packed at load: 0.96-1.07 of their
     * time per layer on one thread, 1.02 of it in sum, 1.00 on two;
     * AMD Zen 5, bench/results/r50_s29.txt) */
    int nb = packs || weight_rows_outer(a, &c) ? 1 : column_block(a, &c, nr, mr, &rows_par);
    if (nb > 1) {
        const char *jb = auto_fresh(a, ir_sprintf(a->m->arena, "%s_b", jr));
        const char *jn = auto_fresh(a, ir_sprintf(a->m->arena, "%s_n", jr));
        if (auto_step(a, "%s, %s = split(%s, %d)", jb, jn, jr, nb))
            cb = (col_block){jr, jb, jn, nb, rows_par};
    }
    k_block kb = k_block_pick(a, ns, &c, nr, packs, g4);
    if (kb.loop >= 0) {
        const char *kn = ns->loops[kb.loop]->var->name;
        kb.ko = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", kn));
        kb.ki = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", kn));
    }
    int pos = contraction_order(a, ns, &c, nr, mr, &cb, ir, g4, g4o, &kb, order, sizeof order,
                                names, exts, &nouter, &first_reduce, &par, &row_outer);
    if (kb.loop >= 0 && !auto_step(a, "%s, %s = split(%s, %lld)", kb.ko, kb.ki,
                                   ns->loops[kb.loop]->var->name, (long long)kb.size))
        return true;
    snprintf(order + pos, sizeof order - (size_t)pos, ", %s, %s%s%s", ii, ji, g4 >= 0 ? ", " : "",
             g4 >= 0 ? g4i : "");
    /* (the accumulator tile is staged at the innermost loop outside it) */
    if (!auto_step(a, "reorder(%s)", order))
        return true;
    /* (U's copy per row of panels is laid out for whole reductions; with
     * K blocks the rows run inside the blocks) */
    if (copy && kb.loop < 0)
        copy_row_operand(a, ns, &c, nr, names, exts, nouter, cb.n > 1 ? cb.outer : jr,
                         row_outer);
    const char *jv = NULL;
    if (!contraction_tile(a, ns, &c, names[nouter - 1], ii, jr, ji, first_reduce, g4 >= 0, &kb,
                          mr * (nr / a->lanes > 0 ? nr / a->lanes : 1), &jv))
        return true;
    contraction_finish(a, &c, nr, mr, jr, ir, jv, names, exts, nouter, par);
    skip_padding_taps(a, c.b->name);
    return true;
}

/* ---------------------------------------------------------------- taps that read only padding */

/* A convolution whose input was padded (x_pad = pad(x)) reads, in the rows
 * of its map near the border, filter taps that fall wholly in the copy's
 * zero rows: with a 3x3 filter of dilation 4 on a 28x28 map (FCN's layer4),
 * a tenth of its multiply-adds add 0 * w.  The reduce loop over the filter's
 * rows gets bounds that leave those taps out, as ONNX Runtime's direct
 * convolutions do (1.85 G MACs: 34.7 -> 31.1 ms on one thread,
 * bench/results/contract_s14.txt).  The skipped terms are 0 * w, so the sum
 * is the same for every finite weight (a weight of inf or NaN would make
 * the whole padded sum NaN; the interpreter's sum keeps those terms). */

#define PAD_DIMS_MAX 8

/* The part of buffer b that its stores may make non-zero, per dimension:
 * [lo[d], hi[d]) when every store to b is select(C, X, 0) whose condition
 * bounds index d (a variable) to a range; b's elements outside the union
 * of those ranges are zero.  known[d] false: no such range. */
typedef struct pad_extent {
    const ir_buffer *b;
    bool known[PAD_DIMS_MAX];
    int64_t lo[PAD_DIMS_MAX], hi[PAD_DIMS_MAX];
    int nstores;
} pad_extent;

/* One conjunct of a store's condition that bounds v alone: v + k < t or
 * the like (unit coefficients only); narrows [*lo, *hi). */
static void var_bound(const ir_expr *cond, const ir_var *v, int64_t *lo, int64_t *hi)
{
    if (cond->kind == IR_AND) {
        var_bound(cond->a, v, lo, hi);
        var_bound(cond->b, v, lo, hi);
        return;
    }
    ir_affine fa = {0};
    ir_affine_rules plain = {0};
    if ((cond->kind != IR_LT && cond->kind != IR_LE && cond->kind != IR_GT &&
         cond->kind != IR_GE) || !ir_affine_add(&fa, cond->a, 1, &plain, 0) ||
        !ir_affine_add(&fa, cond->b, -1, &plain, 0))
        return;
    /* D = a - b = coef * v + k */
    int64_t k = fa.c, coef = 0;
    for (int i = 0; i < fa.n; i++) {
        if (fa.coef[i] == 0)
            continue;
        if (fa.var[i] != v)
            return;   /* (an atom's var is NULL) */
        coef = fa.coef[i];
    }
    if (coef != 1 && coef != -1)
        return;
    /* the condition as coef*v + k < t' */
    int64_t t = cond->kind == IR_LE || cond->kind == IR_GE ? 1 : 0;
    if (cond->kind == IR_GT || cond->kind == IR_GE) {
        coef = -coef;   /* -D < 0 or -D < 1 */
        k = -k;
    }
    if (coef == 1 && t - k < *hi)
        *hi = t - k;   /* v < t - k */
    if (coef == -1 && k - t + 1 > *lo)
        *lo = k - t + 1;   /* v > k - t */
}

static bool is_zero_float(const ir_expr *x)
{
    return x && x->kind == IR_FLOAT && x->fval == 0.0;
}

static bool pad_store(const ir_stmt *s, void *p)
{
    pad_extent *e = p;
    if (s->kind != IR_S_STORE || s->buf != e->b)
        return true;
    const ir_expr *v = s->value;
    bool zero_else = v && v->kind == IR_SELECT && is_zero_float(v->b) && s->nargs == e->b->ndim;
    for (int d = 0; d < PAD_DIMS_MAX && d < e->b->ndim; d++) {
        int64_t lo = INT64_MIN, hi = INT64_MAX;
        if (zero_else && s->args[d]->kind == IR_VAR)
            var_bound(v->c, s->args[d]->var, &lo, &hi);
        if (lo == INT64_MIN || hi == INT64_MAX) {
            e->known[d] = false;
            continue;
        }
        if (e->nstores == 0 || lo < e->lo[d])
            e->lo[d] = lo;
        if (e->nstores == 0 || hi > e->hi[d])
            e->hi[d] = hi;
    }
    e->nstores++;
    return true;
}

/* The iteration variables of the blocks below a statement, read as their
 * bindings (the loops' variables) in affine forms. */
typedef struct binding_map {
    const ir_stmt *blocks[16];
    int n;
    bool more;
} binding_map;

static bool collect_block(const ir_stmt *s, void *p)
{
    binding_map *bm = p;
    if (s->kind == IR_S_BLOCK) {
        if (bm->n < 16)
            bm->blocks[bm->n++] = s;
        else
            bm->more = true;
    }
    return true;
}

static const ir_expr *binding_of(void *ctx, const ir_var *v)
{
    const binding_map *bm = ctx;
    for (int i = 0; i < bm->n; i++)
        for (int k = 0; k < bm->blocks[i]->niters; k++)
            if (bm->blocks[i]->iters[k].var == v)
                return bm->blocks[i]->iters[k].binding;
    return NULL;
}

/* What loop l's body does with the padded buffer: every load of it has one
 * index that uses l, index d, and the same affine form of the loops there
 * (form, with l's coefficient coef > 0 and only the loops outside[] besides);
 * every store adds to what it stores over a product with such a load as a
 * factor, and blocks have no init (decomposed out of the reduction). */
typedef struct tap_scan {
    const pad_extent *pad;
    const ir_var *l;
    const ir_var *const *outside;
    int noutside;
    binding_map bm;
    int d;                 /* the index that uses l, -1 before the first load */
    ir_affine form;
    bool ok;
} tap_scan;

static bool uses_only(const ir_affine *f, const ir_var *l, const ir_var *const *outside, int n)
{
    for (int i = 0; i < f->n; i++) {
        if (f->coef[i] == 0 || f->var[i] == l)
            continue;
        bool found = false;
        for (int k = 0; k < n && !found; k++)
            found = f->var[i] == outside[k];
        if (!found)
            return false;
    }
    return true;
}

static bool same_form(const ir_affine *a, const ir_affine *b)
{
    if (a->c != b->c)
        return false;
    for (int i = 0; i < a->n; i++)
        if (a->var[i] == NULL || a->coef[i] != ir_affine_coef(b, a->var[i]))
            return false;
    for (int i = 0; i < b->n; i++)
        if (b->var[i] == NULL || b->coef[i] != ir_affine_coef(a, b->var[i]))
            return false;
    return true;
}

static bool tap_load(const ir_expr *x, void *p)
{
    tap_scan *t = p;
    if (x->kind != IR_LOAD || x->buf != t->pad->b || !t->ok)
        return true;
    ir_affine_rules rules = {.value = binding_of, .ctx = &t->bm};
    int used = -1;
    for (int d = 0; d < x->nargs && t->ok; d++) {
        ir_affine f = {0};
        if (!ir_affine_add(&f, x->args[d], 1, &rules, 0)) {
            t->ok = false;
            break;
        }
        if (ir_affine_coef(&f, t->l) == 0)
            continue;
        if (used >= 0 || d >= PAD_DIMS_MAX || !t->pad->known[d] ||
            ir_affine_coef(&f, t->l) < 0 || !uses_only(&f, t->l, t->outside, t->noutside) ||
            (t->d >= 0 && (t->d != d || !same_form(&f, &t->form))))
            t->ok = false;
        used = d;
        t->d = d;
        t->form = f;
    }
    if (used < 0)
        t->ok = false;
    return true;
}

static bool is_pad_load(const ir_expr *x, const ir_buffer *b)
{
    return x && x->kind == IR_LOAD && x->buf == b;
}

static bool tap_stmt(const ir_stmt *s, void *p)
{
    tap_scan *t = p;
    switch (s->kind) {
    case IR_S_SEQ:
    case IR_S_FOR:
        return true;
    case IR_S_BLOCK:
        t->ok &= s->init == NULL;
        return true;
    case IR_S_STORE: {
        const ir_expr *v = s->value, *prod = NULL;
        if (v && v->kind == IR_ADD) {
            if (v->a->kind == IR_LOAD && v->a->buf == s->buf)
                prod = v->b;
            else if (v->b->kind == IR_LOAD && v->b->buf == s->buf)
                prod = v->a;
        }
        t->ok &= s->buf != t->pad->b && prod && prod->kind == IR_MUL &&
                 (is_pad_load(prod->a, t->pad->b) || is_pad_load(prod->b, t->pad->b));
        return true;
    }
    default:
        t->ok = false;
        return false;
    }
}

/* The slot in s (a statement inside s) that holds target. */
static ir_stmt **slot_of(ir_stmt *s, const ir_stmt *target)
{
    for (int i = 0; s && i < s->nbody; i++) {
        if (s->body[i] == target)
            return &s->body[i];
        ir_stmt **in = slot_of(s->body[i], target);
        if (in)
            return in;
    }
    return NULL;
}

/* Loop path[i] (serial, constant bounds) of the loops path[0..n) down to
 * a block: its bounds narrowed to the iterations whose loads of the padded
 * buffer read inside the part its stores fill (the rest read zeros).  The
 * bounds are lets outside the reduce loops, around the outermost loop
 * below the loops they use that does not sit directly in a loop (the one
 * inside the tile's accumulator allocation): computed once per tile, not
 * once per input channel (GCC then keeps the tile in registers: 1.85 G
 * MACs 34.0 -> 30.3 ms, against 34.0 with the bounds in the loop), and no
 * let between two loops that later steps see as one nest. */
static bool trim_taps(auto_ctx *a, ir_stmt *const *path, int i, const pad_extent *pad)
{
    ir_stmt *l = path[i];
    if (l->for_kind != IR_FOR_SERIAL || sch_extent(l) <= 1 || ir_for_step(l) != 1)
        return false;
    const ir_var *outside[40];
    for (int k = 0; k < i && k < 40; k++)
        outside[k] = path[k]->var;
    tap_scan t = {.pad = pad, .l = l->var, .outside = outside, .noutside = i, .d = -1,
                  .ok = true};
    ir_stmt_walk(l->body[0], collect_block, NULL, &t.bm);
    if (t.bm.more)
        return false;
    ir_stmt_walk(l->body[0], tap_stmt, tap_load, &t);
    if (!t.ok || t.d < 0)
        return false;
    /* index = coef * l + rest, inside [plo, phi) <=>
     * ceil((plo - rest) / coef) <= l <= floor((phi - 1 - rest) / coef) */
    ir_module *m = a->m;
    int64_t coef = ir_affine_coef(&t.form, l->var);
    ir_affine rest = {.c = t.form.c};
    int last_used = -1;
    for (int k = 0; k < t.form.n; k++)
        if (t.form.var[k] != l->var && t.form.coef[k] != 0) {
            ir_affine_add_var(&rest, t.form.var[k], t.form.coef[k]);
            for (int j = 0; j < i; j++)
                if (path[j]->var == t.form.var[k] && j > last_used)
                    last_used = j;
        }
    int at = last_used + 1;
    while (at < i && at > 0 && path[at - 1]->body[0] == path[at])
        at++;
    ir_stmt **slot = at == 0 ? slot_of(a->f->body, path[0]) : slot_of(path[at - 1], path[at]);
    if (!slot || (at > 0 && path[at - 1]->body[0] == path[at]))
        return false;
    ir_expr *r = ir_affine_expr(m, &rest);
    ir_expr *from = ir_binary(m, IR_SUB, ir_int(m, pad->lo[t.d] + coef - 1), r);
    ir_expr *to = ir_binary(m, IR_SUB, ir_int(m, pad->hi[t.d] - 1), ir_expr_copy(m, r));
    if (coef > 1) {
        from = ir_binary(m, IR_FLOORDIV, from, ir_int(m, coef));
        to = ir_binary(m, IR_FLOORDIV, to, ir_int(m, coef));
    }
    to = ir_binary(m, IR_ADD, to, ir_int(m, 1));
    const char *name = l->var->name;
    ir_var *lo = ir_var_new(m, auto_fresh(a, ir_sprintf(m->arena, "%s_lo", name)), IR_I64);
    ir_var *hi = ir_var_new(m, auto_fresh(a, ir_sprintf(m->arena, "%s_hi", name)), IR_I64);
    ir_stmt *inner = ir_let(m, hi, ir_binary(m, IR_MIN, l->hi, to), *slot);
    *slot = ir_let(m, lo, ir_binary(m, IR_MAX, l->lo, from), inner);
    l->lo = ir_varref(m, lo);
    l->hi = ir_varref(m, hi);
    return true;
}

/* The loops from f's body down to the block named name (path[0]
 * outermost); *b: the block. */
static bool loops_to(ir_stmt *s, const char *name, const ir_stmt **b, ir_stmt **path, int *n,
                     int max)
{
    if (!s)
        return false;
    if (s->kind == IR_S_BLOCK && strcmp(s->name, name) == 0) {
        *b = s;
        return true;
    }
    bool pushed = false;
    if (s->kind == IR_S_FOR) {
        if (*n >= max)
            return false;
        path[(*n)++] = s;
        pushed = true;
    }
    for (int i = 0; i < s->nbody; i++)
        if (loops_to(s->body[i], name, b, path, n, max))
            return true;
    if (pushed)
        (*n)--;
    return false;
}

/* The block named name of a scheduled contraction (the steps rebuilt its
 * statement): its reduce loops that read a padded copy's zero rows in some
 * iterations get bounds without them. */
static void skip_padding_taps(auto_ctx *a, const char *name)
{
    ir_stmt *path[40];
    const ir_stmt *b = NULL;
    int n = 0;
    if (!loops_to(a->f->body, name, &b, path, &n, 40))
        return;
    for (int r = 0; r < b->nreads; r++) {
        const ir_buffer *x = b->reads[r];
        if (x->role != IR_BUF_LOCAL || !x->filled || x->ndim > PAD_DIMS_MAX)
            continue;
        pad_extent pad = {.b = x};
        for (int d = 0; d < x->ndim; d++)
            pad.known[d] = true;
        ir_stmt_walk(a->f->body, pad_store, NULL, &pad);
        bool any = false;
        for (int d = 0; d < x->ndim; d++)
            any |= pad.known[d] && pad.nstores > 0;
        if (!any)
            continue;
        for (int i = 0; i < n; i++)
            trim_taps(a, path, i, &pad);
    }
}

/* ---------------------------------------------------------------- matrix-vector products */

/* A contraction without a row loop (a linear layer on one vector): the
 * vector operand's columns in tiles of 8 vectors, enough independent
 * accumulators to hide the FMA latency, packed per tile; the reduce loop
 * runs over the tile. */

/* The store of a block that accumulates a product of two plain loads into
 * a float output indexed last by a variable, Y[.., v] = Y[.., v] + P * Q
 * with an init (the shape of a matrix-vector product), and *prod = P * Q;
 * else NULL. */
static const ir_stmt *vector_product(const ir_stmt *b, const ir_expr **prod)
{
    const ir_stmt *body = b->nbody ? b->body[0] : NULL;
    if (!b->init || !body || body->kind != IR_S_STORE || !body->value ||
        body->value->kind != IR_ADD || body->value->a->kind != IR_LOAD ||
        body->value->a->buf != body->buf || body->value->b->kind != IR_MUL ||
        !ir_dtype_is_float(body->buf->dtype) || body->nargs < 1 ||
        body->args[inner_dim(body->buf, body->nargs)]->kind != IR_VAR)
        return NULL;
    *prod = body->value->b;
    if ((*prod)->a->kind != IR_LOAD || (*prod)->b->kind != IR_LOAD)
        return NULL;
    return body;
}

/* Whether load ld reads along v contiguously: v is its last index and no
 * other index uses it. */
static bool last_index_is(const ir_expr *ld, const ir_var *v)
{
    if (ld->nargs < 1)
        return false;
    int last = inner_dim(ld->buf, ld->nargs);
    if (ld->args[last]->kind != IR_VAR || ld->args[last]->var != v)
        return false;
    for (int d = 0; d < ld->nargs; d++)
        if (d != last && uses(ld->args[d], v))
            return false;
    return true;
}

/* The steps of a reduction along rows, y[o] op= e[o, k] with e reading
 * along k contiguously: k split into vectors and rfactor on the lanes, a
 * tile of mr outputs' partial sums in registers, one horizontal reduction
 * per output after the k loop (schedule_dot, schedule_rows).
 *
 * by_tile: the outputs' tile first (cache_write of y in the tile loop),
 * then rfactor, so that the partial sums are the tile's alone (mr vectors
 * on the stack) and their horizontal reductions run in the tile loop, on
 * its threads.  Else rfactor first: the partials of every output in one
 * buffer (16 floats per output, on the heap from 1024 outputs on), their
 * reductions after the (parallel) loop on one thread.  A recurrent step's
 * h @ R of 1024 x 256 (an LSTM of 256 units): 16.5 -> 15.2 us at one
 * thread, 9.6 -> 8.2 at two (bench/results/rnn_s30.txt). */
static void rows_of_vectors(auto_ctx *a, ir_stmt *b, const char *on, int64_t nn, const char *kn,
                            const ir_stmt *outer, bool by_tile)
{
    int L = a->lanes;
    static const int mrs[] = {8, 10, 6, 12, 7, 5, 4, 9, 3, 2};
    int mr = 0;
    for (size_t i = 0; i < sizeof mrs / sizeof *mrs && !mr; i++)
        if (nn % mrs[i] == 0)
            mr = mrs[i];
    if (!mr)
        mr = nn < 8 ? (int)nn : 8;   /* a guarded tail, partitioned below */
    const char *oo = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", on));
    const char *oi = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", on));
    const char *ko = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", kn));
    const char *ki = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", kn));
    if (!auto_step(a, "%s, %s = split(%s, %d)", ko, ki, kn, L) ||
        !auto_step(a, "%s, %s = split(%s, %d)", oo, oi, on, mr) ||
        !auto_step(a, "reorder(%s, %s, %s, %s)", oo, ko, oi, ki))
        return;
    const char *rf = ir_sprintf(a->m->arena, "%s_rf", b->name);
    /* the tile: y's (by_tile, before rfactor; else as without it) or the
     * partials' (after) */
    by_tile = by_tile && auto_step(a, "%s = cache_write(%s, %s)",
                                   auto_fresh(a, ir_sprintf(a->m->arena, "%s_tile", b->name)),
                                   b->name, oo);
    if (!auto_step(a, "rfactor(%s, %s)", b->name, ki))
        return;
    const char *tl = by_tile ? NULL : auto_fresh(a, ir_sprintf(a->m->arena, "%s_tile", rf));
    bool tiled = by_tile || auto_step(a, "%s = cache_write(%s, %s)", tl, rf, oo);
    if (tiled && auto_step(a, "decompose_reduction(%s, %s)", rf, ko)) {
        auto_step(a, "vectorize(%s_init)", ki);
        auto_step(a, "unroll(%s)", oi);
        auto_step(a, "vectorize(%s)", ki);
        if (!by_tile)
            auto_step(a, "vectorize(%s_%s_out)", ki, tl);
    }
    /* threads: over the loop outside the rows (a layer norm's tokens by
     * rows of channels) when it has enough iterations, else the tiles */
    if (a->threads > 1 && outer && extent(outer) >= a->threads)
        auto_step(a, "parallel(%s)", outer->var->name);
    else if (a->threads > 1 && (nn + mr - 1) / mr >= 2 * a->threads)
        auto_step(a, "parallel(%s)", oo);
    if (nn % mr != 0 && nn > mr)
        auto_partition_late(a, oo, nn / mr);
}

/* Whether every load in x that uses v reads along v contiguously, and one
 * does. */
typedef struct along_ctx {
    const ir_var *v;
    bool ok;
    int n;
} along_ctx;

static bool last_index_is(const ir_expr *ld, const ir_var *v);

static bool along_load(const ir_expr *x, void *p)
{
    along_ctx *c = p;
    if (x->kind == IR_LOAD && load_uses(x, c->v)) {
        c->n++;
        c->ok &= last_index_is(x, c->v);
    }
    return true;
}

/* Whether the network holds a tensor of bytes (an int8 network). */
static bool network_of_bytes(const ir_module *m)
{
    for (int i = 0; i < m->graph.nbufs; i++)
        if (ir_dtype_is_small_int(m->graph.bufs[i]->dtype))
            return true;
    return false;
}

/* Row reductions other than products: a block y[o] = y[o] op e (op +,
 * max, min) whose innermost loop k is its one reduce loop and every load
 * of e that uses k reads along it contiguously (a global average pool's
 * sums over a map, after merging its rows and columns; softmax's maximum
 * and sum over the last dimension; a layer norm's mean): vectors of
 * partial results along k, as the dot products do, instead of a vector
 * across outputs that gathers one element from each row. */
bool schedule_rows(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    const ir_stmt *st = b->nbody ? b->body[0] : NULL;
    if (!b->init || !st || st->kind != IR_S_STORE || !st->value || ns->n < 2 ||
        (!ir_dtype_is_float(st->buf->dtype) && st->buf->dtype != IR_I32))
        return false;
    const ir_expr *v = st->value;
    /* i32: a sum (an int8 matrix-vector product: a QDQ model's last Gemm,
     * its integer sums in vectors of partial sums, exact) */
    if (!ir_dtype_is_float(st->buf->dtype) && v->kind != IR_ADD)
        return false;
    if ((v->kind != IR_ADD && v->kind != IR_MAX && v->kind != IR_MIN) || v->a->kind != IR_LOAD ||
        v->a->buf != st->buf)
        return false;
    /* the map's two reduce loops (a pooling's rows and columns) merged,
     * over 4 vectors or more of the map, or 3 (a 7x7 map's 49 elements,
     * 3 vectors and a tail) along the map instead of a vector across
     * channels that gathers one element of each (global average pooling
     * of 1152x7x7 at one thread: 33.5 to 8.6 us; bench/results/
     * mobile_s16.txt), except in an int8 network: its activations stay
     * channels-last (passes/layout.c), where the vector across channels
     * reads contiguously (QDQ ResNet-50's last pool, 8.7 us, 40 merged,
     * and its layer4 then kept another layout) */
    int map_vectors = network_of_bytes(a->m) ? 4 : 3;
    nest merged;
    bool done = false;
    const ir_itervar *i1 = iter_of(b, ns->loops[ns->n - 1]);
    const ir_itervar *i2 = ns->n >= 3 ? iter_of(b, ns->loops[ns->n - 2]) : NULL;
    /* (a map read along its rows: a channels-last map's positions, read a
     * row of channels apart, are no row; merged, they claimed the block,
     * one scalar chain per channel: ConvNeXt-V2's GRN sums over 56x56
     * positions of 320 channels, 1.2 ms on one thread) */
    along_ctx map = {i1 ? i1->var : NULL, true, 0};
    if (i1)
        ir_expr_walk(v->b, along_load, &map);
    if (i1 && i2 && i1->kind == IR_ITER_REDUCE && i2->kind == IR_ITER_REDUCE && map.ok && map.n > 0 &&
        extent(ns->loops[ns->n - 1]) * extent(ns->loops[ns->n - 2]) >= map_vectors * a->lanes) {
        const char *lo = ns->loops[ns->n - 2]->var->name, *li = ns->loops[ns->n - 1]->var->name;
        if (!auto_step(a, "%s = merge(%s, %s)", auto_fresh(a, ir_sprintf(a->m->arena, "%s%s", lo, li)), lo, li))
            return false;
        /* the nest has changed: no other schedule may use the old one */
        if (!auto_nest_of(a, b, &merged))
            return true;
        ns = &merged;
        done = true;
    }
    for (int i = 0; i < ns->n; i++) {
        const ir_itervar *it = iter_of(b, ns->loops[i]);
        if (!it || (it->kind == IR_ITER_REDUCE) != (i == ns->n - 1))
            return done;
    }
    const ir_stmt *kl = ns->loops[ns->n - 1], *ol = ns->loops[ns->n - 2];
    along_ctx c = {iter_of(b, kl)->var, true, 0};

    ir_expr_walk(b->body[0]->value->b, along_load, &c);   /* (merge rewrote it) */
    int64_t nn = extent(ol), kk = extent(kl);
    /* (rows of 4 vectors or more, a merged map's of map_vectors) */
    if (!c.ok || c.n == 0 || kk < (done ? map_vectors : 4) * a->lanes || nn < 1)
        return done;
    rows_of_vectors(a, b, ol->var->name, nn, kl->var->name, ns->n > 2 ? ns->loops[0] : NULL, false);
    return true;
}

/* Dot products: a contraction y[o] += U[k] * V[o, k] with no row loop
 * whose operands both run along k contiguously (a linear layer on one
 * vector, weights [out, in]).  Packing V into column tiles would transpose
 * the whole weight on every call; instead 16-lane partial sums along k
 * (rfactor) for a tile of mr outputs in registers, and one horizontal sum
 * per output after the k loop. */
bool schedule_dot(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    const ir_expr *prod;
    const ir_stmt *body = vector_product(b, &prod);
    if (ns->n != 2 || !body)
        return false;
    const ir_itervar *it0 = iter_of(b, ns->loops[0]), *it1 = iter_of(b, ns->loops[1]);
    if (!it0 || !it1 || it0->kind != IR_ITER_SPATIAL || it1->kind != IR_ITER_REDUCE ||
        body->args[inner_dim(body->buf, body->nargs)]->var != it0->var)
        return false;
    if (!last_index_is(prod->a, it1->var) || !last_index_is(prod->b, it1->var))
        return false;
    int64_t nn = extent(ns->loops[0]), kk = extent(ns->loops[1]);
    if (kk < 2 * a->lanes || nn < 2)
        return false;
    rows_of_vectors(a, b, ns->loops[0]->var->name, nn, ns->loops[1]->var->name, NULL, true);
    return true;
}

bool schedule_gemv(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    const ir_expr *prod;
    const ir_stmt *body = vector_product(b, &prod);
    if (!body)
        return false;
    const ir_var *ylast = body->args[inner_dim(body->buf, body->nargs)]->var;
    const ir_expr *V = load_uses(prod->a, ylast) ? prod->a : prod->b;
    const ir_expr *U = V == prod->a ? prod->b : prod->a;
    if (load_uses(U, ylast))
        return false;
    int nloop = -1, first_reduce = -1;
    for (int i = 0; i < ns->n; i++) {
        const ir_itervar *it = iter_of(b, ns->loops[i]);
        if (!it || extent(ns->loops[i]) < 1)
            return false;
        if (it->var == ylast)
            nloop = i;
        else if (it->kind == IR_ITER_REDUCE) {
            if (first_reduce < 0)
                first_reduce = i;
        } else if (load_uses(U, it->var) != load_uses(V, it->var))
            return false;   /* a row loop: the GEMM schedule's case */
    }
    int L = a->lanes;
    int64_t nn = nloop >= 0 ? extent(ns->loops[nloop]) : 0;
    if (nloop < 0 || first_reduce < 0 || nn < L)
        return false;
    /* up to 8 vectors of columns, as many as divide the columns if 4 or
     * more do (960 = 10 x 96), so no tile has a tail */
    int nr = nn >= 8 * L ? 8 * L : (int)(nn / L) * L;
    for (int v = 8; v >= 4 && nn % L == 0; v--)
        if ((nn / L) % v == 0) {
            nr = v * L;
            break;
        }
    const char *nname = ns->loops[nloop]->var->name;
    const char *jr = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", nname));
    const char *ji = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", nname));
    if (!auto_step(a, "%s, %s = split(%s, %d)", jr, ji, nname, nr))
        return true;
    char order[1024] = "";
    int pos = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < ns->n; i++) {
            const ir_itervar *it = pass == 1 || i == nloop ? NULL : iter_of(b, ns->loops[i]);
            const char *nm = i == nloop ? (pass == 1 ? jr : NULL)
                           : pass == 0 && it && it->kind == IR_ITER_SPATIAL ? ns->loops[i]->var->name
                           : pass == 2 && it && it->kind == IR_ITER_REDUCE ? ns->loops[i]->var->name
                           : NULL;
            if (nm)
                pos += snprintf(order + pos, sizeof order - (size_t)pos, "%s%s", pos ? ", " : "", nm);
        }
    snprintf(order + pos, sizeof order - (size_t)pos, ", %s", ji);
    if (!auto_step(a, "reorder(%s)", order))
        return true;
    const char *vp = auto_fresh(a, ir_sprintf(a->m->arena, "%sp", V->buf->name));
    bool packed = auto_step(a, "%s = cache_read(%s, %s)", vp, V->buf->name, jr);
    const char *cl = auto_fresh(a, ir_sprintf(a->m->arena, "%s_tile", body->buf->name));
    if (!auto_step(a, "%s = cache_write(%s, %s)", cl, b->name, jr))
        return true;
    if (auto_step(a, "decompose_reduction(%s, %s)", b->name, ns->loops[first_reduce]->var->name))
        auto_step(a, "vectorize(%s_init)", ji);
    const char *jv = auto_fresh(a, ir_sprintf(a->m->arena, "%s_v", nname));
    const char *jl = auto_fresh(a, ir_sprintf(a->m->arena, "%s_l", nname));
    if (auto_step(a, "%s, %s = split(%s, %d)", jv, jl, ji, L)) {
        auto_step(a, "unroll(%s)", jv);
        auto_step(a, "vectorize(%s)", jl);
    }
    auto_step(a, "vectorize(%s_%s)", ji, cl);
    auto_step(a, "vectorize(%s_%s_out)", ji, cl);
    if (packed)
        auto_step(a, "vectorize(%s_%s)", ji, vp);
    if (a->threads > 1 && (nn + nr - 1) / nr >= a->threads)
        auto_step(a, "parallel(%s)", jr);
    return true;
}

/* Whether a matrix-vector product's operand indexed by the output is a
 * weight (prepack packs it at load) with short rows (fewer than 32
 * vectors): dot products along rows of 240 (a squeeze-and-excitation
 * block's 240 -> 960) are short streams, 16.6 us against 13 us for the
 * packed panels on one thread, while rows of 960 or 1280 stream faster
 * (a 1280 -> 1000 classifier: 80 us by rows, 115 us by panels). */
bool weight_matrix(auto_ctx *a, nest *ns)
{
    const ir_expr *prod;
    const ir_stmt *body = vector_product(ns->block, &prod);
    if (!body)
        return false;
    const ir_var *o = body->args[inner_dim(body->buf, body->nargs)]->var;
    int64_t k = 1, n = 0;
    for (int i = 0; i < ns->n; i++) {
        const ir_itervar *it = iter_of(ns->block, ns->loops[i]);
        if (it && it->kind == IR_ITER_REDUCE)
            k *= extent(ns->loops[i]);
        if (it && it->var == o)
            n = extent(ns->loops[i]);
    }
    /* (and outputs in whole vectors: a tail of them is scalar) */
    if (k >= 32 * a->lanes || n % a->lanes != 0)
        return false;
    const ir_expr *V = load_uses(prod->a, o) ? prod->a : prod->b;
    return !load_uses(V == prod->a ? prod->b : prod->a, o) && auto_is_weight(a->m, a->f, V->buf);
}
