/* passes/schedule/auto.c — the automatic scheduler (-O2, -O3): a schedule
 * for every function that has none, in the schedule language, from the IR
 * alone and a model of the target.
 *
 * Each block of a function is classified by its loop nest:
 *
 *   contraction  Y[..] = Y[..] + U[..] * V[..] with an init (matmul,
 *                linear, batched matmul, convolution): a register tile of
 *                mr rows of the innermost U-only loop by nr = 2 vectors of
 *                the innermost V-only loop, V packed per column panel, the
 *                init decomposed out of the reduce loops, the tile's rows
 *                unrolled and columns vectorized — the BLIS micro-kernel
 *                structure, as bench/gemm.te writes it by hand;
 *   other        (elementwise, pooling, normalization, depthwise
 *                convolution): a spatial loop innermost and vectorized;
 *                an elementwise kernel the fuse pass will not absorb has
 *                its loops and dimensions merged first (merge.c), so the
 *                vector runs along its whole contiguous data.
 *
 * and the outermost loop with enough iterations runs in parallel.  The
 * chosen steps are kept in the function's "schedule_auto" attribute (tec
 * --dump-schedule prints them as `schedule` blocks a user can copy, edit and
 * pin).  A step the primitives refuse ends that block's schedule with the
 * steps before it; it never fails the compilation.  A function that has a
 * schedule (a user's, or one of these) and prepack's load functions (cut
 * out of kernels already scheduled) are left alone, so -O2 run again on
 * the IR it printed changes nothing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arith.h"
#include "ir/target.h"
#include "passes/schedule/int8.h"
#include "passes/passes.h"
#include "passes/schedule/schedule.h"

/* Registers of the target that the register tile may take. */
#define TILE_MAX_VECTORS 24

typedef struct auto_ctx {
    ir_module *m;
    ir_func *f;
    diag quiet;            /* refusals are not errors here */
    int lanes;             /* f32 lanes of a vector */
    int threads;
    int64_t l1d;           /* bytes of level-1 data cache */
    char *text;            /* the schedule, as text */
    size_t len, cap;
    int nnames;            /* counter for fresh names */
    const ir_buffer *vector_operand;   /* of the last contraction checked */
    int64_t vector_columns;            /* its extent along the vectors */
    double tile_score;                 /* its register tile's efficiency */
    double tile_cost;                  /* its time per output element */
    /* the tile's time per output element if the two loops of the vector
     * operand's columns were merged (-1: they cannot be), and their names */
    double merge_cost;
    const char *merge_outer, *merge_inner;
    /* inputs of window reductions, padded after their schedule (pad_late) */
    const ir_buffer *late_pad[8];
    int nlate_pad;
} auto_ctx;

static void text_add(auto_ctx *a, const char *s)
{
    size_t n = strlen(s);
    if (a->len + n + 1 > a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 256;
        while (cap < a->len + n + 1)
            cap *= 2;
        char *p = realloc(a->text, cap);
        if (!p)
            return;
        a->text = p;
        a->cap = cap;
    }
    memcpy(a->text + a->len, s, n + 1);
    a->len += n;
}

/* A name not used in the function yet, from `base`. */
static const char *fresh(auto_ctx *a, const char *base)
{
    if (!sch_name_used(a->f, base))
        return ir_strdup(a->m->arena, base);
    for (int k = 1;; k++) {
        char *n = ir_sprintf(a->m->arena, "%s_%d", base, k);
        if (!sch_name_used(a->f, n))
            return n;
    }
}

/* Parses and applies one line of schedule; records it when it worked. */
static bool step(auto_ctx *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool step(auto_ctx *a, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    sch_list l = {0};
    diag_loc here = {"auto", 1, 1};
    a->quiet.nerrors = 0;
    if (!sch_parse(a->m, line, here, &l, &a->quiet) || l.n != 1 ||
        !sch_apply_step(a->m, a->f, &l.steps[0], &a->quiet))
        return false;
    text_add(a, line);
    text_add(a, "\n");
    return true;
}

/* ---------------------------------------------------------------- the nest of a block */

typedef struct nest {
    ir_stmt *loops[32];    /* outermost first, each the only statement of the one before */
    int n;
    ir_stmt *block;
} nest;

/* Perfect nests from *s down: every block whose loops are directly nested. */
static void collect(ir_stmt *s, nest *cur, nest *out, int *nout, int max)
{
    if (!s)
        return;
    if (s->kind == IR_S_BLOCK) {
        if (*nout < max) {
            out[*nout] = *cur;
            out[*nout].block = s;
            (*nout)++;
        }
        return;
    }
    if (s->kind == IR_S_FOR && cur->n < 32) {
        cur->loops[cur->n++] = s;
        collect(s->body[0], cur, out, nout, max);
        cur->n--;
        return;
    }
    /* anything else breaks the nest: what is below starts a new one */
    nest fresh_nest = {.n = 0};
    for (int i = 0; i < s->nbody; i++)
        collect(s->body[i], s->kind == IR_S_SEQ ? cur : &fresh_nest, out, nout, max);
    if (s->kind == IR_S_SEQ && cur->n > 0) {
        /* a sequence inside a loop: the loop is shared, not a perfect nest */
    }
}

static bool uses(const ir_expr *x, const ir_var *v) { return x && ir_expr_uses_var(x, v); }

/* The load an operand of a contraction's product reads: the load itself,
 * or under a widening cast and a constant zero point (int8 contractions
 * accumulating in i32: cast<i32>(x[..]) - 3); *guarded when the load is
 * the arm of a padding select. */
static const ir_expr *unguarded_load(const ir_expr *x, bool *guarded)
{
    if (x->kind == IR_SUB && x->b->kind == IR_INT && !ir_dtype_is_float(x->dtype))
        x = x->a;
    if (x->kind == IR_CAST && !ir_dtype_is_float(x->dtype) && x->a && !ir_dtype_is_float(x->a->dtype))
        x = x->a;
    else if (x->kind == IR_CAST && x->dtype == IR_F32 && x->a && x->a->dtype == IR_BF16)
        x = x->a;   /* a bf16 operand, widened (bf16 contractions summed in f32) */
    if (x->kind == IR_LOAD)
        return x;
    if (x->kind == IR_SELECT && x->a->kind == IR_LOAD &&
        (x->b->kind == IR_FLOAT || x->b->kind == IR_INT)) {
        *guarded = true;
        return x->a;
    }
    return NULL;
}

static bool load_uses_expr(const ir_expr *x, const ir_var *v) { return x && ir_expr_uses_var(x, v); }

static bool load_uses(const ir_expr *ld, const ir_var *v)
{
    for (int i = 0; i < ld->nargs; i++)
        if (uses(ld->args[i], v))
            return true;
    return false;
}

static int64_t extent(const ir_stmt *l) { return sch_extent(l); }

/* The iteration variable bound to loop l in block b (bindings are plain
 * loop variables after simplify), or NULL. */
static const ir_itervar *iter_of(const ir_stmt *b, const ir_stmt *l)
{
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].binding->kind == IR_VAR && b->iters[i].binding->var == l->var)
            return &b->iters[i];
    return NULL;
}

/* ---------------------------------------------------------------- contractions */

/* The copy loop of cache_read's packing.  When the packed operand V runs
 * along its one reduce loop contiguously but along the vector loop with a
 * stride (a 1x1 convolution's or a linear layer's weight [out, in] packed
 * into column panels [in][32]), the copy is a transpose: vectors of the
 * panel's columns would gather one element from each of 16 rows.  Blocks
 * of 16 along the reduce loop instead read whole cache lines of each row
 * (ResNet-50's 2048 x 512 1x1 convolution on 7x7: 2.7 to 1.5 ms on one
 * thread).  Other copies run on vectors of the panel's columns. */
static void pack_copy(auto_ctx *a, const ir_expr *V, const nest *ns, const int *kind,
                      const char *ji, const char *vp)
{
    const ir_stmt *b = ns->block;
    /* the variable of V's innermost dimension longer than 1 */
    int d = V->nargs - 1;
    while (d > 0 && V->buf->shape[d] == 1)
        d--;
    const ir_var *last = d >= 0 && V->args[d]->kind == IR_VAR ? V->args[d]->var : NULL;
    int nreduce = 0, kloop = -1;
    for (int i = 0; i < ns->n; i++) {
        const ir_itervar *it = iter_of(b, ns->loops[i]);
        if (kind[i] == 3 && it && load_uses(V, it->var)) {
            nreduce++;
            kloop = i;
        }
    }
    const ir_itervar *kit = kloop >= 0 ? iter_of(b, ns->loops[kloop]) : NULL;
    if (nreduce == 1 && kit && kit->var == last && extent(ns->loops[kloop]) % 16 == 0) {
        const char *kname = ns->loops[kloop]->var->name;
        const char *ko = fresh(a, ir_sprintf(a->m->arena, "%s_%s_o", kname, vp));
        const char *ki = fresh(a, ir_sprintf(a->m->arena, "%s_%s_i", kname, vp));
        if (step(a, "%s, %s = split(%s_%s, 16)", ko, ki, kname, vp) &&
            step(a, "reorder(%s, %s_%s, %s)", ko, ji, vp, ki)) {
            step(a, "unroll(%s)", ki);
            return;
        }
    }
    step(a, "vectorize(%s_%s)", ji, vp);
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

/* The register tile of a contraction with nn columns (along the vector
 * operand), mm rows and K multiply-adds per output, and its estimated time
 * per output element (the return value; -1 when the columns do not split
 * into vectors and tails are not allowed); along_y: the columns run along
 * the output's last dimension. */
static double tile_model(const auto_ctx *a, int64_t nn, int64_t mm, double K, bool along_y,
                         bool tails, int *nr_out, int *mr_out, double *score)
{
    int L = a->lanes;
    /* two vectors of columns, one if that divides and two does not; a
     * guarded tail otherwise (codegen runs whole vectors where every lane
     * passes the guard) */
    int nr = nn % (2 * L) == 0 ? 2 * L : nn % L == 0 ? L : 0;
    if (!nr && tails)
        nr = nn >= 2 * L ? 2 * L : nn >= L ? L : 0;
    if (!nr)
        return -1;
    static const int mrs[] = {8, 7, 6, 12, 5, 4, 3, 2};
    int mr = 0;
    for (size_t i = 0; i < sizeof mrs / sizeof *mrs && !mr; i++)
        if (mm % mrs[i] == 0 && mrs[i] * (nr / L) <= TILE_MAX_VECTORS)
            mr = mrs[i];
    if (!mr)
        mr = mm < 6 ? (int)mm : 6;   /* a guarded tail */
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
    int nv = nr / L;
    double lanes = ((double)nn / L) / (double)(nn / L + nn % L);
    double rows = (double)mm / (double)(((mm + mr - 1) / mr) * mr);
    *score = lanes * rows * (double)(mr * nv) / (double)(mr + nv);
    /* The time per output element, in vector operations: the reduction's
     * K multiply-adds at that efficiency, and the write-back of the tile,
     * a vector store per L elements when the vectors run along Y's last
     * dimension, else one store per element (a transpose: Y's elements of
     * one vector lie a row apart).  A 1x1 convolution 16 -> 96 on 112x112
     * has K = 16: columns along the 96 channels (2 vectors by 8 rows,
     * score 1.6) cost 0.63 + 1 per output, along the map's 112 (1 vector
     * by 8 rows, 0.89) 1.13 + 0.06, and run 2.6x faster (1465 to 560 us
     * on one thread, with a SiLU in the write-back). */
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
        if (!(c->it[i] = iter_of(b, ns->loops[i])) || extent(ns->loops[i]) < 1)
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
    return true;
}

/* The cost of the tile with columns along Y's last two dimensions merged
 * into one (a 1x1 convolution's map: merge(p, q)), when the loop of the one
 * before is the next loop out and also reads V only: whole vectors along
 * the map's P*Q elements, written back along Y's rows.  In a->merge_cost
 * (-1: they cannot be merged) and the loops' names. */
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
        a->merge_cost = tile_model(a, c->nn * extent(ns->loops[nl - 1]), c->mm, c->K, true, false,
                                   &mnr, &mmr, &ms);
        a->merge_outer = ns->loops[nl - 1]->var->name;
        a->merge_inner = ns->loops[nl]->var->name;
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

/* The loops of a register-tiled contraction outside the tile, in the
 * order of its reorder step: batch, other N, jr, other M, ir, then the
 * reduce loops (g4o for the int8 loop g4).  Appends them to order; the
 * spatial ones also to names/exts (*nouter of them, at most 40), and the
 * first reduce loop's name to *first_reduce. */
static int contraction_order(const nest *ns, const contraction *c, int nr, int mr, const char *jr,
                             const char *ir, int g4, const char *g4o, char *order, size_t size,
                             const char **names, int64_t *exts, int *nouter,
                             const char **first_reduce)
{
    int pos = 0;
    *nouter = 0;
    *first_reduce = NULL;
    for (int pass = 0; pass < 5; pass++)
        for (int i = 0; i < ns->n; i++) {
            int k = c->kind[i];
            const char *nm = NULL;
            int64_t ext = extent(ns->loops[i]);
            if ((pass == 0 && k == 0) || (pass == 1 && k == 2 && i != c->nloop) ||
                (pass == 3 && k == 1 && i != c->mloop))
                nm = ns->loops[i]->var->name;
            else if (pass == 2 && i == c->nloop) {
                nm = jr;
                ext = c->nn / nr;
            } else if (pass == 4 && i == c->mloop) {
                nm = ir;
                ext = (c->mm + mr - 1) / mr;
            }
            if (!nm)
                continue;
            pos += snprintf(order + pos, size - (size_t)pos, "%s%s", pos ? ", " : "", nm);
            if (*nouter < 40) {
                names[*nouter] = nm;
                exts[(*nouter)++] = ext;
            }
        }
    for (int i = 0; i < ns->n; i++)
        if (c->kind[i] == 3) {
            const char *rn = i == g4 ? g4o : ns->loops[i]->var->name;
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
 * A big GEMM's panel of thousands of rows, each on a page of its own, stays
 * packed. */
static bool is_weight(const ir_module *m, const ir_func *f, const ir_buffer *b);
static bool last_index_is(const ir_expr *ld, const ir_var *v);

static bool pack_columns(const auto_ctx *a, const contraction *c)
{
    if (is_weight(a->m, a->f, c->V->buf) || !last_index_is(c->V, c->it[c->nloop]->var))
        return true;
    /* a row of the panel: two vectors of f32, three cache lines when not
     * aligned to one */
    double row = 3 * 64;
    return c->K * row > (double)a->l1d;
}

/* The tile's inner steps after the reorder: V packed per column panel, Y
 * accumulated in a local tile, the init decomposed out of the reduce loops
 * and vectorized (scalar stores of zeros that the tile's vector loads then
 * read would stall each tile on store forwarding), the tile's rows unrolled
 * and columns in vectors, the copies vectorized along the columns. */
static bool contraction_tile(auto_ctx *a, const nest *ns, const contraction *c, const char *ir,
                             const char *ii, const char *jr, const char *ji,
                             const char *first_reduce)
{
    const char *nname = ns->loops[c->nloop]->var->name, *bname = c->b->name;
    const char *vp = fresh(a, ir_sprintf(a->m->arena, "%sp", c->V->buf->name));
    bool packed = pack_columns(a, c) && step(a, "%s = cache_read(%s, %s)", vp, c->V->buf->name, jr);
    const char *cl = fresh(a, ir_sprintf(a->m->arena, "%s_tile", c->body->buf->name));
    if (!step(a, "%s = cache_write(%s, %s)", cl, bname, ir))
        return false;
    if (first_reduce && step(a, "decompose_reduction(%s, %s)", bname, first_reduce))
        step(a, "vectorize(%s_init)", ji);
    step(a, "unroll(%s)", ii);
    const char *jv = fresh(a, ir_sprintf(a->m->arena, "%s_v", nname));
    const char *jl = fresh(a, ir_sprintf(a->m->arena, "%s_l", nname));
    if (step(a, "%s, %s = split(%s, %d)", jv, jl, ji, a->lanes)) {
        step(a, "unroll(%s)", jv);
        step(a, "vectorize(%s)", jl);
    }
    step(a, "vectorize(%s_%s)", ji, cl);
    step(a, "vectorize(%s_%s_out)", ji, cl);
    if (packed)
        pack_copy(a, c->V, ns, c->kind, ji, vp);
    return true;
}

/* Threads on the outermost spatial loop with enough iterations, then the
 * tails: the last row tile and the last column tile run in copies of their
 * own, so the guards leave every other tile (rows first: the column loop's
 * copy then holds both parts). */
static void contraction_finish(auto_ctx *a, const contraction *c, int nr, int mr, const char *jr,
                               const char *ir, const char *const *names, const int64_t *exts,
                               int nouter)
{
    bool par = false;
    for (int want = 2 * a->threads; want >= a->threads && a->threads > 1 && !par; want -= a->threads)
        for (int i = 0; i < nouter && !par; i++)
            if (exts[i] >= want)
                par = step(a, "parallel(%s)", names[i]);
    if (c->mm % mr != 0 && c->mm > mr)
        step(a, "partition(%s, %lld)", ir, (long long)(c->mm / mr));
    if (c->nn % nr != 0 && c->nn > nr)
        step(a, "partition(%s, %lld)", jr, (long long)(c->nn / nr));
}

/* The register-tiled schedule of a contraction (swap: the other operand in
 * the vectors; tails: columns that do not split into vectors get a guarded
 * tail).  check_only: only the model, in a->tile_cost and the fields after
 * it; false when the block is no contraction or its columns do not fit. */
static bool schedule_contraction(auto_ctx *a, nest *ns, bool swap, bool tails, bool check_only)
{
    contraction c;
    if (!contraction_match(ns, swap, &c) || !contraction_loops(ns, &c))
        return false;
    a->merge_cost = -1;
    if (!swap)
        contraction_merge_model(a, ns, &c);
    int nr, mr;
    double cost = tile_model(a, c.nn, c.mm, c.K, columns_along_y(&c), tails, &nr, &mr, &a->tile_score);
    if (cost < 0)
        return false;
    a->tile_cost = cost;
    a->vector_operand = c.V->buf;
    a->vector_columns = c.nn;
    if (check_only)
        return true;
    const char *nname = ns->loops[c.nloop]->var->name, *mname = ns->loops[c.mloop]->var->name;
    const char *jr = fresh(a, ir_sprintf(a->m->arena, "%s_o", nname));
    const char *ji = fresh(a, ir_sprintf(a->m->arena, "%s_i", nname));
    const char *ir = fresh(a, ir_sprintf(a->m->arena, "%s_o", mname));
    const char *ii = fresh(a, ir_sprintf(a->m->arena, "%s_i", mname));
    if (!step(a, "%s, %s = split(%s, %d)", jr, ji, nname, nr) ||
        !step(a, "%s, %s = split(%s, %d)", ir, ii, mname, mr))
        return true;
    /* int8 on dot-product instructions (passes/schedule/int8.c): one
     * reduce loop split by 4, its 4 iterations innermost */
    int gsize;
    int g4 = sch_int8_group_loop(c.b, ns->loops, c.kind, ns->n, c.prod, c.V, a->lanes, &gsize);
    const char *g4o = NULL, *g4i = NULL;
    if (g4 >= 0) {
        g4o = fresh(a, ir_sprintf(a->m->arena, "%s_o", ns->loops[g4]->var->name));
        g4i = fresh(a, ir_sprintf(a->m->arena, "%s_i", ns->loops[g4]->var->name));
        if (!step(a, "%s, %s = split(%s, %d)", g4o, g4i, ns->loops[g4]->var->name, gsize))
            g4 = -1;
    }
    char order[1024];
    const char *names[40], *first_reduce;
    int64_t exts[40];
    int nouter;
    int pos = contraction_order(ns, &c, nr, mr, jr, ir, g4, g4o, order, sizeof order, names, exts,
                                &nouter, &first_reduce);
    snprintf(order + pos, sizeof order - (size_t)pos, ", %s, %s%s%s", ii, ji, g4 >= 0 ? ", " : "",
             g4 >= 0 ? g4i : "");
    if (!step(a, "reorder(%s)", order) || !contraction_tile(a, ns, &c, ir, ii, jr, ji, first_reduce))
        return true;
    contraction_finish(a, &c, nr, mr, jr, ir, names, exts, nouter);
    return true;
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
 * per output after the k loop (schedule_dot, schedule_rows). */
static void rows_of_vectors(auto_ctx *a, ir_stmt *b, const char *on, int64_t nn, const char *kn,
                            const ir_stmt *outer)
{
    int L = a->lanes;
    static const int mrs[] = {8, 10, 6, 12, 7, 5, 4, 9, 3, 2};
    int mr = 0;
    for (size_t i = 0; i < sizeof mrs / sizeof *mrs && !mr; i++)
        if (nn % mrs[i] == 0)
            mr = mrs[i];
    if (!mr)
        mr = nn < 8 ? (int)nn : 8;   /* a guarded tail, partitioned below */
    const char *oo = fresh(a, ir_sprintf(a->m->arena, "%s_o", on));
    const char *oi = fresh(a, ir_sprintf(a->m->arena, "%s_i", on));
    const char *ko = fresh(a, ir_sprintf(a->m->arena, "%s_o", kn));
    const char *ki = fresh(a, ir_sprintf(a->m->arena, "%s_i", kn));
    if (!step(a, "%s, %s = split(%s, %d)", ko, ki, kn, L) ||
        !step(a, "%s, %s = split(%s, %d)", oo, oi, on, mr) ||
        !step(a, "reorder(%s, %s, %s, %s)", oo, ko, oi, ki) ||
        !step(a, "rfactor(%s, %s)", b->name, ki))
        return;
    const char *rf = ir_sprintf(a->m->arena, "%s_rf", b->name);
    const char *tl = fresh(a, ir_sprintf(a->m->arena, "%s_tile", rf));
    if (step(a, "%s = cache_write(%s, %s)", tl, rf, oo) &&
        step(a, "decompose_reduction(%s, %s)", rf, ko)) {
        step(a, "vectorize(%s_init)", ki);
        step(a, "unroll(%s)", oi);
        step(a, "vectorize(%s)", ki);
        step(a, "vectorize(%s_%s_out)", ki, tl);
    }
    /* threads: over the loop outside the rows (a layer norm's tokens by
     * rows of channels) when it has enough iterations, else the tiles */
    if (a->threads > 1 && outer && extent(outer) >= a->threads)
        step(a, "parallel(%s)", outer->var->name);
    else if (a->threads > 1 && (nn + mr - 1) / mr >= 2 * a->threads)
        step(a, "parallel(%s)", oo);
    if (nn % mr != 0 && nn > mr)
        step(a, "partition(%s, %lld)", oo, (long long)(nn / mr));
}

/* Whether every load in x that uses v reads along v contiguously, and one
 * does. */
typedef struct along_ctx {
    const ir_var *v;
    bool ok;
    int n;
} along_ctx;

static bool last_index_is(const ir_expr *ld, const ir_var *v);
static bool nest_of(auto_ctx *a, const ir_stmt *b, nest *out);

static bool along_load(const ir_expr *x, void *p)
{
    along_ctx *c = p;
    if (x->kind == IR_LOAD && load_uses(x, c->v)) {
        c->n++;
        c->ok &= last_index_is(x, c->v);
    }
    return true;
}

/* Row reductions other than products: a block y[o] = y[o] op e (op +,
 * max, min) whose innermost loop k is its one reduce loop and every load
 * of e that uses k reads along it contiguously (a global average pool's
 * sums over a map, after merging its rows and columns; softmax's maximum
 * and sum over the last dimension; a layer norm's mean): vectors of
 * partial results along k, as the dot products do, instead of a vector
 * across outputs that gathers one element from each row. */
static bool schedule_rows(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    const ir_stmt *st = b->nbody ? b->body[0] : NULL;
    if (!b->init || !st || st->kind != IR_S_STORE || !st->value || ns->n < 2 ||
        !ir_dtype_is_float(st->buf->dtype))
        return false;
    const ir_expr *v = st->value;
    if ((v->kind != IR_ADD && v->kind != IR_MAX && v->kind != IR_MIN) || v->a->kind != IR_LOAD ||
        v->a->buf != st->buf)
        return false;
    /* the map's two reduce loops (a pooling's rows and columns) merged */
    nest merged;
    bool done = false;
    const ir_itervar *i1 = iter_of(b, ns->loops[ns->n - 1]);
    const ir_itervar *i2 = ns->n >= 3 ? iter_of(b, ns->loops[ns->n - 2]) : NULL;
    if (i1 && i2 && i1->kind == IR_ITER_REDUCE && i2->kind == IR_ITER_REDUCE &&
        extent(ns->loops[ns->n - 1]) * extent(ns->loops[ns->n - 2]) >= 4 * a->lanes) {
        const char *lo = ns->loops[ns->n - 2]->var->name, *li = ns->loops[ns->n - 1]->var->name;
        if (!step(a, "%s = merge(%s, %s)", fresh(a, ir_sprintf(a->m->arena, "%s%s", lo, li)), lo, li))
            return false;
        /* the nest has changed: no other schedule may use the old one */
        if (!nest_of(a, b, &merged))
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
    /* (rows of 4 vectors or more: a 7x7 map's 49 elements, 3 vectors and
     * a tail, are summed as fast across channels) */
    if (!c.ok || c.n == 0 || kk < 4 * a->lanes || nn < 1)
        return done;
    rows_of_vectors(a, b, ol->var->name, nn, kl->var->name, ns->n > 2 ? ns->loops[0] : NULL);
    return true;
}

/* Dot products: a contraction y[o] += U[k] * V[o, k] with no row loop
 * whose operands both run along k contiguously (a linear layer on one
 * vector, weights [out, in]).  Packing V into column tiles would transpose
 * the whole weight on every call; instead 16-lane partial sums along k
 * (rfactor) for a tile of mr outputs in registers, and one horizontal sum
 * per output after the k loop. */
static bool schedule_dot(auto_ctx *a, nest *ns)
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
    rows_of_vectors(a, b, ns->loops[0]->var->name, nn, ns->loops[1]->var->name, NULL);
    return true;
}

static bool schedule_gemv(auto_ctx *a, nest *ns)
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
    const char *jr = fresh(a, ir_sprintf(a->m->arena, "%s_o", nname));
    const char *ji = fresh(a, ir_sprintf(a->m->arena, "%s_i", nname));
    if (!step(a, "%s, %s = split(%s, %d)", jr, ji, nname, nr))
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
    if (!step(a, "reorder(%s)", order))
        return true;
    const char *vp = fresh(a, ir_sprintf(a->m->arena, "%sp", V->buf->name));
    bool packed = step(a, "%s = cache_read(%s, %s)", vp, V->buf->name, jr);
    const char *cl = fresh(a, ir_sprintf(a->m->arena, "%s_tile", body->buf->name));
    if (!step(a, "%s = cache_write(%s, %s)", cl, b->name, jr))
        return true;
    if (step(a, "decompose_reduction(%s, %s)", b->name, ns->loops[first_reduce]->var->name))
        step(a, "vectorize(%s_init)", ji);
    const char *jv = fresh(a, ir_sprintf(a->m->arena, "%s_v", nname));
    const char *jl = fresh(a, ir_sprintf(a->m->arena, "%s_l", nname));
    if (step(a, "%s, %s = split(%s, %d)", jv, jl, ji, L)) {
        step(a, "unroll(%s)", jv);
        step(a, "vectorize(%s)", jl);
    }
    step(a, "vectorize(%s_%s)", ji, cl);
    step(a, "vectorize(%s_%s_out)", ji, cl);
    if (packed)
        step(a, "vectorize(%s_%s)", ji, vp);
    if (a->threads > 1 && (nn + nr - 1) / nr >= a->threads)
        step(a, "parallel(%s)", jr);
    return true;
}

/* ---------------------------------------------------------------- everything else */

/* A reduction whose vector loop now runs inside its reduce loops (depthwise
 * convolution, pooling): one row of outputs accumulates in a local tile,
 * its init decomposed out of the reduce loops and its write-back
 * vectorized, so each output is stored once and the fuse pass can compute
 * the layers after it (batchnorm, relu6) in that write-back. */
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
    for (int k = 0; k < p.n && !first_reduce; k++) {
        const ir_stmt *l = *p.slot[k];
        if (l->kind != IR_S_FOR)
            continue;
        const ir_itervar *it = iter_of(b, l);
        if (it && it->kind == IR_ITER_REDUCE)
            first_reduce = l->var->name;
        else
            outer = l->var->name;
    }
    if (!outer || !first_reduce)
        return;
    const char *tile = fresh(a, ir_sprintf(a->m->arena, "%s_tile", b->body[0]->buf->name));
    if (!step(a, "%s = cache_write(%s, %s)", tile, b->name, outer))
        return;
    if (step(a, "decompose_reduction(%s, %s)", b->name, first_reduce))
        step(a, "vectorize(%s_init)", vname);
    step(a, "vectorize(%s_%s_out)", vname, tile);
}

/* ---------------------------------------------------------------- depthwise convolutions */

/* A depthwise convolution Y[.., f, p, q] += X[.., f, p + r, q + s] *
 * W[f, .., r, s]: every reduce variable is read by both operands, and one
 * spatial variable f (the channel) indexes X, W and Y, X's dimension
 * plainly. */
typedef struct dw_info {
    const ir_expr *X, *W;
    const ir_var *vf, *vq;
    int xdim;              /* X's dimension indexed by f */
    int64_t F, Q, taps;
} dw_info;

static bool classify_depthwise(const ir_stmt *b, dw_info *o)
{
    const ir_stmt *body = b->nbody ? b->body[0] : NULL;
    if (!b->init || !body || body->kind != IR_S_STORE || !body->value ||
        body->value->kind != IR_ADD || body->value->a->kind != IR_LOAD ||
        body->value->a->buf != body->buf || body->value->b->kind != IR_MUL ||
        !ir_dtype_is_float(body->buf->dtype) || body->nargs < 2 ||
        body->args[body->nargs - 1]->kind != IR_VAR)
        return false;
    bool g = false;
    const ir_expr *o1 = unguarded_load(body->value->b->a, &g), *o2 = unguarded_load(body->value->b->b, &g);
    if (!o1 || !o2)
        return false;
    o->vq = body->args[body->nargs - 1]->var;
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

/* Whether a depthwise convolution runs faster with its channels in the
 * vectors (X copied channels-last by pad, W packed, Y written back a
 * channel apart) than along its output rows.  Along rows, a row of Q
 * outputs takes Q / L whole vectors plus one of 8 and one of 4 lanes where
 * they fit, then scalars, per tap, or whole vectors past the row's end
 * when fewer (the vectorizer's, ir/vectorize.c: 14 as one of 16 lanes, 7
 * as one of 8); along channels each output takes taps / L vector
 * operations plus about 0.4 per element the copies move: the padded input
 * transposed (per output, the square of a padded row over an output row:
 * 2.5 for 5x5 on 7x7, 5.9 for 5x5 of stride 2 from 14x14 to 7x7) and the
 * output (measured on one thread, rows against channels: 5x5 on 7x7, 1152
 * channels, 191 and 129 us; 5x5 on 14x14, 672 channels, 226 and 250 us;
 * 7x7 on 7x7, 768 channels, 161 and 140 us; 5x5 of stride 2 to 7x7, 672
 * channels, 129 and 193 us; 3x3 on 7x7 keeps its rows). */
static bool depthwise_channels_last(const auto_ctx *a, const dw_info *o)
{
    int L = a->lanes;
    if (o->F % L != 0 || o->Q >= L)
        return false;
    int64_t r = o->Q % L;
    int64_t chunks = o->Q / L + (r >= 8) + ((r % 8) >= 4) + r % 4;
    int64_t lw = L;
    while (lw / 2 >= o->Q && lw > 4)
        lw /= 2;
    if ((o->Q + lw - 1) / lw < chunks)   /* whole vectors past the row's end (ir/vectorize.c) */
        chunks = (o->Q + lw - 1) / lw;
    double rows = (double)o->taps * (double)chunks / (double)o->Q;
    /* the copies: about 0.4 per element in (a padded row of stride * Q + k
     * - stride, k the square kernel's side) and out, per output */
    ir_affine x;
    int64_t st = 1;
    if (ir_affine_of(o->X->args[o->X->nargs - 1], &x) && ir_affine_coef(&x, o->vq) > 1)
        st = ir_affine_coef(&x, o->vq);
    double k = 1;
    while ((k + 1) * (k + 1) <= (double)o->taps)
        k++;
    double side = ((double)st * (double)o->Q + k - (double)st) / (double)o->Q;
    double channels = (double)o->taps / L + 0.4 * (side * side + 1.0);
    return channels < rows;
}

static bool schedule_depthwise(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    dw_info o;
    if (!classify_depthwise(b, &o) || o.xdim != o.X->nargs - 1 || !depthwise_channels_last(a, &o))
        return false;
    int fl = -1, ql = -1, first_reduce = -1, last_spatial = -1;
    for (int i = 0; i < ns->n; i++) {
        const ir_itervar *it = iter_of(b, ns->loops[i]);
        if (!it)
            return false;
        if (it->var == o.vf)
            fl = i;
        else if (it->var == o.vq)
            ql = i;
        else if (it->kind == IR_ITER_REDUCE) {
            if (first_reduce < 0)
                first_reduce = i;
        } else
            last_spatial = i;
    }
    if (fl < 0 || ql < 0 || first_reduce < 0 || last_spatial < 0)
        return false;
    const char *fn = ns->loops[fl]->var->name, *qn = ns->loops[ql]->var->name;
    const char *fo = fresh(a, ir_sprintf(a->m->arena, "%s_o", fn));
    const char *fi = fresh(a, ir_sprintf(a->m->arena, "%s_i", fn));
    const char *tile_at = ns->loops[last_spatial]->var->name;
    if (!step(a, "%s, %s = split(%s, %d)", fo, fi, fn, a->lanes))
        return true;
    /* f_o, the other spatial loops, the reduce loops, q, f_i */
    char order[1024];
    int pos = snprintf(order, sizeof order, "%s", fo);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < ns->n; i++) {
            const ir_itervar *it = iter_of(b, ns->loops[i]);
            if (i == fl || i == ql || (it->kind == IR_ITER_REDUCE) != (pass == 1))
                continue;
            pos += snprintf(order + pos, sizeof order - (size_t)pos, ", %s", ns->loops[i]->var->name);
        }
    snprintf(order + pos, sizeof order - (size_t)pos, ", %s, %s", qn, fi);
    if (!step(a, "reorder(%s)", order))
        return true;
    const char *wp = fresh(a, ir_sprintf(a->m->arena, "%sp", o.W->buf->name));
    bool packed = step(a, "%s = cache_read(%s, %s)", wp, o.W->buf->name, fo);
    const char *tile = fresh(a, ir_sprintf(a->m->arena, "%s_tile", b->body[0]->buf->name));
    if (step(a, "%s = cache_write(%s, %s)", tile, b->name, tile_at) &&
        step(a, "decompose_reduction(%s, %s)", b->name, ns->loops[first_reduce]->var->name)) {
        step(a, "vectorize(%s_init)", fi);
        step(a, "unroll(%s)", qn);
        step(a, "vectorize(%s_%s_out)", fi, tile);
    }
    step(a, "vectorize(%s)", fi);
    if (packed)
        step(a, "vectorize(%s_%s)", fi, wp);
    if (a->threads > 1 && o.F / a->lanes >= a->threads)
        step(a, "parallel(%s)", fo);
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

/* Whether a call of f writes a temporary that a later call reads through
 * a padding guard (the layout pass would store it with a border, in f's
 * own dimensions). */
static bool output_padded(const ir_module *m, const ir_func *f)
{
    for (int ci = 0; ci < m->graph.ncalls; ci++) {
        if (m->graph.calls[ci].fn != f)
            continue;
        for (int c = ci + 1; c < m->graph.ncalls; c++) {
            const ir_graph_call *R = &m->graph.calls[c];
            for (int k = 0; k < R->nargs && k < R->fn->nparams; k++)
                for (int j = 0; j < m->graph.calls[ci].nargs; j++) {
                    if (R->args[k] != m->graph.calls[ci].args[j] || R->args[k]->role != IR_BUF_TEMP)
                        continue;
                    const ir_buffer *pb[2] = {R->fn->params[k], NULL};
                    ir_stmt_walk(R->fn->body, NULL, guarded_read, pb);
                    if (pb[1])
                        return true;
                }
        }
    }
    return false;
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
    if (!called || fusable || output_padded(a->m, a->f))
        return false;
    const char *names[32];
    for (int i = 0; i < ns->n; i++)
        names[i] = ns->loops[i]->var->name;
    const char *inner = names[ns->n - 1];
    bool merged = false;
    for (int i = ns->n - 2; i >= 0; i--) {
        const char *nm = fresh(a, ir_sprintf(a->m->arena, "%s%s", names[i], inner));
        if (!step(a, "%s = merge(%s, %s)", nm, names[i], inner))
            break;
        inner = nm;
        merged = true;
    }
    return merged;
}

/* An elementwise kernel reading a temporary whose writer merged two of
 * its dimensions (a 1x1 convolution on a merged map) merges the same two:
 * the fuse pass computes it in the writer's tile only where the two index
 * the data alike (the bias and activation after the convolution). */
typedef struct load_find {
    const ir_buffer *b;
    const ir_expr *ld;
} load_find;

static bool find_load(const ir_expr *x, void *p)
{
    load_find *lf = p;
    if (!lf->ld && x->kind == IR_LOAD && x->buf == lf->b)
        lf->ld = x;
    return true;
}

static void merge_like_producer(auto_ctx *a)
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
                collect(a->f->body, &cur, all, &n, 8);
                for (int b = 0; b < n && !loops[k]; b++)
                    for (int i = 0; i < all[b].block->niters; i++)
                        if (all[b].block->iters[i].var == v && all[b].block->iters[i].binding->kind == IR_VAR &&
                            sch_find_loop(&c, all[b].block->iters[i].binding->var->name, &path))
                            loops[k] = all[b].block->iters[i].binding->var->name;
            }
            if (loops[0] && loops[1])
                step(a, "%s = merge(%s, %s)", fresh(a, ir_sprintf(a->m->arena, "%s%s", loops[0], loops[1])),
                     loops[0], loops[1]);
            return;
        }
    }
}

/* The nest of block b in f now. */
static bool nest_of(auto_ctx *a, const ir_stmt *b, nest *out)
{
    nest cur = {.n = 0};
    nest *all = malloc(sizeof *all * 256);
    int n = 0;
    bool found = false;
    if (!all)
        return false;
    collect(a->f->body, &cur, all, &n, 256);
    for (int i = 0; i < n && !found; i++)
        if (all[i].block == b) {
            *out = all[i];
            found = true;
        }
    free(all);
    return found;
}

static void schedule_simple(auto_ctx *a, nest *ns)
{
    ir_stmt *b = ns->block;
    if (ns->n == 0)
        return;
    nest merged;
    if (merge_elementwise(a, ns) && nest_of(a, b, &merged)) {
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
            const char *o = fresh(a, ir_sprintf(a->m->arena, "%s_o", nm));
            const char *in = fresh(a, ir_sprintf(a->m->arena, "%s_i", nm));
            if (step(a, "%s, %s = split(%s, %lld)", o, in, nm, (long long)chunk)) {
                step(a, "vectorize(%s)", in);
                if (a->threads > 1 && e / chunk >= a->threads)
                    step(a, "parallel(%s)", o);
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
            if (step(a, "reorder(%s)", order) && step(a, "vectorize(%s)", vname))
                reduce_in_tile(a, b, vname);
        } else
            step(a, "vectorize(%s)", vname);
    }
    if (a->threads > 1 && work >= 16384) {
        /* re-find the loops: reorder moved variables between loop nodes */
        for (int i = 0; i < ns->n; i++) {
            ir_stmt *l = ns->loops[i];
            const ir_itervar *iv = iter_of(b, l);
            if (!iv || iv->kind != IR_ITER_SPATIAL || l->for_kind == IR_FOR_VECTORIZED)
                continue;
            if (extent(l) >= a->threads && step(a, "parallel(%s)", l->var->name))
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

/* The dimension of buffer x that a depthwise convolution reading it wants
 * innermost in its padded copy (its channels), or -1. */
typedef struct dw_find {
    const auto_ctx *a;
    const ir_buffer *x;
    int dim;
} dw_find;

static bool find_depthwise(const ir_stmt *s, void *p)
{
    dw_find *w = p;
    dw_info o;
    if (s->kind == IR_S_BLOCK && classify_depthwise(s, &o) && o.X->buf == w->x &&
        depthwise_channels_last(w->a, &o))
        w->dim = o.xdim;
    return true;
}

/* A window reduction reading x: a depthwise convolution or a pooling,
 * y[..] = y[..] op e with an init and reduce loops, e not a product of two
 * operands of a contraction (those pad first, to be classified). */
typedef struct window_find {
    const ir_buffer *x;
    int readers, windows;
} window_find;

static bool reads_buffer(const ir_expr *x, void *p)
{
    if (x->kind == IR_LOAD && x->buf == ((const ir_buffer **)p)[0])
        ((const ir_buffer **)p)[1] = x->buf;
    return true;
}

static bool find_window(const ir_stmt *s, void *p)
{
    window_find *w = p;
    if (s->kind != IR_S_BLOCK)
        return true;
    const ir_buffer *pb[2] = {w->x, NULL};
    ir_stmt_walk(s, NULL, reads_buffer, pb);
    if (!pb[1])
        return true;
    w->readers++;
    const ir_stmt *st = s->nbody ? s->body[0] : NULL;
    bool reduces = false;
    for (int i = 0; i < s->niters; i++)
        reduces |= s->iters[i].kind == IR_ITER_REDUCE;
    dw_info o;
    if (s->init && reduces && st && st->kind == IR_S_STORE && st->value &&
        ((st->value->kind == IR_ADD && st->value->b->kind == IR_SELECT) ||
         st->value->kind == IR_MAX || st->value->kind == IR_MIN || classify_depthwise(s, &o)))
        w->windows++;
    return false;
}

/* Whether input x is read only by window reductions along rows: padded
 * after their schedule, per iteration of the loop that reads one slice
 * of it (pad_late), not whole before it. */
static bool pads_late(auto_ctx *a, const ir_buffer *x)
{
    window_find w = {x, 0, 0};
    ir_stmt_walk(a->f->body, find_window, NULL, &w);
    return w.readers > 0 && w.windows == w.readers && a->nlate_pad < 8;
}

/* The late pads: each input at the innermost loop outside the window
 * (not vectorized, outside every reduce loop) at which pad accepts it,
 * i.e. whose iteration reads one slice of it (a channel of a depthwise
 * convolution or a pooling: a copy of the padded channel that stays in
 * the cache for the window, instead of the whole padded input written to
 * memory and read back); the whole input before the nest if none. */
static void pad_late(auto_ctx *a)
{
    for (int i = 0; i < a->nlate_pad; i++) {
        const ir_buffer *x = a->late_pad[i];
        const char *name = fresh(a, ir_sprintf(a->m->arena, "%s_pad", x->name));
        nest cur = {.n = 0}, nests[64];
        int nn = 0;
        collect(a->f->body, &cur, nests, &nn, 64);
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
            if (l->kind == IR_S_FOR && l->for_kind != IR_FOR_VECTORIZED &&
                l->for_kind != IR_FOR_UNROLLED)
                done = step(a, "%s = pad(%s, %s)", name, x->name, l->var->name);
        }
        if (!done)
            step(a, "%s = pad(%s)", name, x->name);
    }
}

static void pad_inputs(auto_ctx *a)
{
    for (int i = 0; i < a->f->nparams; i++) {
        const ir_buffer *pb[2] = {a->f->params[i], NULL};
        ir_stmt_walk(a->f->body, NULL, guarded_read, pb);
        if (!pb[1])
            continue;
        const char *name = fresh(a, ir_sprintf(a->m->arena, "%s_pad", pb[0]->name));
        dw_find w = {a, pb[0], -1};
        ir_stmt_walk(a->f->body, find_depthwise, NULL, &w);
        if (w.dim < 0)   /* int8 dot products read 4 channels at once (int8.c) */
            w.dim = sch_int8_pad_dim(a->f, pb[0], a->lanes);
        if (w.dim >= 0 && w.dim != pb[0]->ndim - 1 && step(a, "%s = pad(%s, %d)", name, pb[0]->name, w.dim))
            continue;
        if (w.dim < 0 && pads_late(a, pb[0])) {
            a->late_pad[a->nlate_pad++] = pb[0];
            continue;
        }
        step(a, "%s = pad(%s)", name, pb[0]->name);
    }
}

/* Grouped convolutions: a reduction whose reads index a dimension by
 * floordiv(f, Fg) of an output-channel variable f (x[.., f / Fg * Cg + c,
 * ..]) is a contraction per group.  regroup splits f into the group g and
 * the channel in the group, so the read becomes g*Cg + c, affine (pad can
 * copy it) and the group a batch loop of the contraction. */
typedef struct group_find {
    const ir_stmt *b;
    int iter;          /* the iteration variable divided */
    int64_t by;
} group_find;

static bool find_group_div(const ir_expr *x, void *p)
{
    group_find *g = p;
    if (g->iter >= 0 || x->kind != IR_FLOORDIV || x->a->kind != IR_VAR || x->b->kind != IR_INT)
        return true;
    for (int i = 0; i < g->b->niters; i++) {
        const ir_itervar *it = &g->b->iters[i];
        if (it->var == x->a->var && it->kind == IR_ITER_SPATIAL && it->binding->kind == IR_VAR &&
            x->b->ival > 1 && x->b->ival < it->extent && it->extent % x->b->ival == 0) {
            g->iter = i;
            g->by = x->b->ival;
        }
    }
    return true;
}

typedef struct group_list {
    const char *loop[64];
    int64_t by[64];
    int n;
} group_list;

static bool regroup_find(const ir_stmt *s, void *p)
{
    group_list *gl = p;
    if (s->kind != IR_S_BLOCK || !s->init || gl->n >= 64)
        return true;
    group_find g = {s, -1, 0};
    for (int i = 0; i < s->nbody; i++)
        ir_stmt_walk(s->body[i], NULL, find_group_div, &g);
    if (g.iter >= 0) {
        gl->loop[gl->n] = s->iters[g.iter].binding->var->name;
        gl->by[gl->n++] = g.by;
    }
    return true;
}

static void regroup_all(auto_ctx *a)
{
    group_list gl = {.n = 0};
    ir_stmt_walk(a->f->body, regroup_find, NULL, &gl);
    for (int i = 0; i < gl.n; i++) {
        const char *l = gl.loop[i];
        step(a, "%s, %s = regroup(%s, %lld)", fresh(a, ir_sprintf(a->m->arena, "%s_g", l)),
             fresh(a, ir_sprintf(a->m->arena, "%s_in", l)), l, (long long)gl.by[i]);
    }
}

static bool has_attr(const ir_func *f, const char *k) { return ir_func_attr(f, k) != NULL; }

/* A load function of prepack (op "prepack"): its fill was cut out of a
 * kernel this pass had already scheduled, so it keeps that schedule; -O2
 * run again on printed IR leaves it as it is (a fixed point). */
static bool is_prepack(const ir_func *f)
{
    const char *op = ir_func_attr(f, "op");
    return op && strcmp(op, "prepack") == 0;
}

/* Is parameter b of f a param of the graph in every call of f (a weight,
 * constant from run to run)? */
static bool is_weight(const ir_module *m, const ir_func *f, const ir_buffer *b)
{
    int k = 0;
    while (k < f->nparams && f->params[k] != b)
        k++;
    bool called = false;
    for (int c = 0; c < m->graph.ncalls && k < f->nparams; c++) {
        const ir_graph_call *call = &m->graph.calls[c];
        if (call->fn != f || k >= call->nargs)
            continue;
        if (call->args[k]->role != IR_BUF_PARAM && call->args[k]->role != IR_BUF_CONST)
            return false;
        called = true;
    }
    return called;
}

/* Whether a matrix-vector product's operand indexed by the output is a
 * weight (prepack packs it at load) with short rows (fewer than 32
 * vectors): dot products along rows of 240 (a squeeze-and-excitation
 * block's 240 -> 960) are short streams, 16.6 us against 13 us for the
 * packed panels on one thread, while rows of 960 or 1280 stream faster
 * (a 1280 -> 1000 classifier: 80 us by rows, 115 us by panels). */
static bool weight_matrix(auto_ctx *a, nest *ns)
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
    return !load_uses(V == prod->a ? prod->b : prod->a, o) && is_weight(a->m, a->f, V->buf);
}

/* Which of the four contraction candidates (bit 0: the other operand in
 * the vectors, bit 1: a guarded tail of columns allowed) the block gets,
 * 4 if none fits; *cost: its time per output element. */
static int choose_tile(auto_ctx *a, nest *ns, double *cost)
{
    /* columns that split into whole vectors first, either operand;
     * then a guarded tail */
    int k = 0;
    while (k < 4 && !schedule_contraction(a, ns, k & 1, k >= 2, true))
        k++;
    /* a later candidate whose tile is clearly better (by a tenth)
     * wins: columns along the longer of two dimensions that do not
     * split into whole vectors, or tiles with two vectors of
     * columns instead of one; but columns with a tail replace
     * whole vectors only along a weight (packed once, at load) */
    if (k < 4) {
        double best = a->tile_cost;
        for (int c = k + 1; c < 4; c++)
            if (schedule_contraction(a, ns, c & 1, c >= 2, true) &&
                a->tile_cost * 1.1 < best &&
                (c < 2 || k >= 2 || is_weight(a->m, a->f, a->vector_operand))) {
                best = a->tile_cost;
                k = c;
            }
    }
    /* Columns of a weight in vectors, with a guarded tail, rather
     * than the other operand's, when the tail is a small part:
     * prepack packs a weight once, at load, and the tile writes
     * back along the output's rows (GPT-2's LM head: 50257 columns
     * of the tied embedding). */
    if (k == 1 && schedule_contraction(a, ns, false, true, true) &&
        is_weight(a->m, a->f, a->vector_operand) && a->vector_columns >= 32 * a->lanes)
        k = 2;
    *cost = 0;
    if (k < 4 && schedule_contraction(a, ns, k & 1, k >= 2, true))
        *cost = a->tile_cost;
    return k;
}

bool pass_autoschedule(ir_module *m, diag *d)
{
    (void)d;
    cg_target t;
    if (pass_target())
        t = *pass_target();
    else
        cg_target_native(&t);
    for (int fi = 0; fi < m->nfuncs; fi++) {
        ir_func *f = m->funcs[fi];
        if (has_attr(f, "scheduled") || has_attr(f, "schedule_auto") || !f->body ||
            is_prepack(f))
            continue;
        auto_ctx a = {.m = m, .f = f, .lanes = cg_target_lanes(&t, 4), .threads = t.cores,
                      .l1d = t.l1d > 0 ? t.l1d : 32768};
        diag_init(&a.quiet, NULL);   /* refusals are counted, not shown */
        a.quiet.max_errors = 1;
        nest cur = {.n = 0};
        nest nests[256];
        merge_like_producer(&a);
        regroup_all(&a);
        pad_inputs(&a);
        int nn = 0;
        collect(f->body, &cur, nests, &nn, 256);
        for (int i = 0; i < nn; i++) {
            double cost;
            int k = choose_tile(&a, &nests[i], &cost);
            /* a 1x1 convolution on a map whose rows do not split into
             * vectors (28x28, 40 -> 120 channels: columns along the 120
             * channels, a tail of 8 and a transposed write-back) runs
             * along the merged map instead (784 = 49 vectors) when that
             * is clearly better */
            a.merge_cost = -1;
            schedule_contraction(&a, &nests[i], false, true, true);
            if (a.merge_cost > 0 && (k == 4 || a.merge_cost * 1.1 < cost)) {
                const char *mo = a.merge_outer, *mi = a.merge_inner;
                ir_stmt *blk = nests[i].block;
                if (step(&a, "%s = merge(%s, %s)", fresh(&a, ir_sprintf(m->arena, "%s%s", mo, mi)), mo, mi) &&
                    nest_of(&a, blk, &nests[i]))
                    k = choose_tile(&a, &nests[i], &cost);
            }
            if (k < 4 && schedule_contraction(&a, &nests[i], k & 1, k >= 2, false))
                continue;
            /* A matrix-vector product with a weight matrix of short rows:
             * its columns packed once, at load, into panels that the
             * product streams through in one pass */
            if (k == 4 && weight_matrix(&a, &nests[i]) && schedule_gemv(&a, &nests[i]))
                continue;
            if (k == 4 && (schedule_dot(&a, &nests[i]) || schedule_gemv(&a, &nests[i]) ||
                           schedule_rows(&a, &nests[i])))
                continue;
            /* an elementwise block after a contraction (a bias): computed in
             * the tile's write-back */
            const char *bn = nests[i].block->name;
            bool local = false;
            for (int r = 0; r < nests[i].block->nreads; r++)
                local |= nests[i].block->reads[r]->role == IR_BUF_LOCAL;
            if (local && step(&a, "reverse_compute_inline(%s)", bn))
                continue;
            if (schedule_depthwise(&a, &nests[i]))
                continue;
            schedule_simple(&a, &nests[i]);
        }
        pad_late(&a);
        sch_update_blocks(m, f->body);
        if (a.text && a.len)
            ir_func_set_attr(m, f, "schedule_auto", ir_strndup(m->arena, a.text, a.len - 1));
        free(a.text);
        diag_fini(&a.quiet);
    }
    return true;
}
