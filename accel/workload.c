/* accel/workload.c — the layers of a compiled IR module as the accelerator
 * model sees them: GEMM-like blocks become (M, N, K, batch), everything
 * else becomes vector-unit work.  The rules are in accel/workload.h and
 * doc/accel.md ("Layers from the compiler"). */
#include "accel/workload.h"

#include <gmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arith.h"
#include "passes/analyze.h"
#include "passes/passes.h"

/* ---------------------------------------------------------------- exact counts */

/* Element and MAC counts are products of extents and can pass 2^63 for
 * absurd shapes, so they are computed with GMP and range-checked once. */
static bool z_to_i64(const mpz_t z, int64_t *out)
{
    if (mpz_sgn(z) < 0 || mpz_sizeinbase(z, 2) > 63)
        return false;
    uint64_t v = 0;
    size_t count = 0;
    mpz_export(&v, &count, -1, sizeof v, 0, 0, z);
    *out = (int64_t)v;
    return true;
}

static void z_set_u64(mpz_t z, uint64_t v)
{
    mpz_import(z, 1, -1, sizeof v, 0, 0, &v);
}

static void z_mul_u64(mpz_t z, uint64_t v)
{
    mpz_t t;
    mpz_init(t);
    z_set_u64(t, v);
    mpz_mul(z, z, t);
    mpz_clear(t);
}

/* ---------------------------------------------------------------- diagnostics */

/* The function's source location from its "loc" attribute
 * ("file:line:col"; the file name may itself contain ':'). */
static diag_loc func_loc(const ir_func *f)
{
    diag_loc loc = diag_noloc();
    const char *s = ir_func_attr(f, "loc");
    if (!s)
        return loc;
    const char *c2 = strrchr(s, ':');
    if (!c2 || c2 == s)
        return loc;
    const char *c1 = c2 - 1;
    while (c1 > s && *c1 != ':')
        c1--;
    if (*c1 != ':' || c1 == s)
        return loc;
    char *end;
    long line = strtol(c1 + 1, &end, 10);
    if (end != c2 || line < 1)
        return loc;
    long col = strtol(c2 + 1, &end, 10);
    if (*end || col < 0)
        return loc;
    /* The attribute string lives in the module's arena, so the file name
     * can point into a copy kept in a small static ring. */
    static char files[4][1024];
    static int k;
    k = (k + 1) % 4;
    size_t n = (size_t)(c1 - s);
    if (n >= sizeof files[k])
        return loc;
    memcpy(files[k], s, n);
    files[k][n] = '\0';
    loc.file = files[k];
    loc.line = (int)line;
    loc.col = (int)col;
    return loc;
}

const char *acc_func_layer_name(const ir_func *f)
{
    const char *l = ir_func_attr(f, "layer");
    return l && *l ? l : f->name;
}

/* ---------------------------------------------------------------- block structure */

static const ir_expr *strip_casts(const ir_expr *e)
{
    while (e && e->kind == IR_CAST)
        e = e->a;
    return e;
}

/* Is `load` (casts allowed) a read of exactly the element `st` writes? */
static bool same_access(const ir_expr *load, const ir_stmt *st)
{
    load = strip_casts(load);
    if (!load || load->kind != IR_LOAD || load->buf != st->buf || load->nargs != st->nargs)
        return false;
    for (int i = 0; i < st->nargs; i++)
        if (!ir_expr_equal(load->args[i], st->args[i]))
            return false;
    return true;
}

/* A block's body when it is a single store (a one-element SEQ is fine). */
static const ir_stmt *single_store(const ir_stmt *blk)
{
    if (blk->nbody != 1)
        return NULL;
    const ir_stmt *s = blk->body[0];
    while (s && s->kind == IR_S_SEQ && s->nbody == 1)
        s = s->body[0];
    return s && s->kind == IR_S_STORE ? s : NULL;
}

/* Matches Y[i] = Y[i] + a * b (either order of the sum, casts around the
 * accumulator load, the product or the whole value). */
static bool match_mac(const ir_stmt *blk, const ir_stmt **st, const ir_expr **a,
                      const ir_expr **b)
{
    const ir_stmt *s = single_store(blk);
    if (!s)
        return false;
    const ir_expr *v = strip_casts(s->value);
    if (!v || v->kind != IR_ADD)
        return false;
    const ir_expr *prod;
    if (same_access(v->a, s))
        prod = v->b;
    else if (same_access(v->b, s))
        prod = v->a;
    else
        return false;
    prod = strip_casts(prod);
    if (!prod || prod->kind != IR_MUL)
        return false;
    *st = s;
    *a = prod->a;
    *b = prod->b;
    return true;
}

static bool find_block(const ir_stmt *s, void *ctx)
{
    bool *found = ctx;
    if (s->kind == IR_S_BLOCK)
        *found = true;
    return !*found;
}

/* Does s contain a block (s itself excluded)? */
static bool has_inner_block(const ir_stmt *s)
{
    bool found = false;
    ir_stmt_walk(s->init, find_block, NULL, &found);
    for (int i = 0; i < s->nbody && !found; i++)
        ir_stmt_walk(s->body[i], find_block, NULL, &found);
    return found;
}

/* ---------------------------------------------------------------- operands */

/* Which iteration variables an operand's loads are indexed by.  An index
 * may use a block iteration variable or a loop variable that an iteration
 * variable's binding uses (passes may leave either); both count for the
 * iteration variable. */
typedef struct mark_ctx {
    const ir_func *f;
    const ir_stmt *blk;
    bool *used;                /* one per iteration variable */
} mark_ctx;

static bool mark_index_var(const ir_expr *e, void *p)
{
    mark_ctx *c = p;
    if (e->kind != IR_VAR)
        return true;
    for (int i = 0; i < c->blk->niters; i++) {
        const ir_itervar *iv = &c->blk->iters[i];
        if (iv->var == e->var || (iv->binding && ir_expr_uses_var(iv->binding, e->var)))
            c->used[i] = true;
    }
    return true;
}

/* The innermost block that holds statement target (NULL if none). */
typedef struct enclose_ctx {
    const ir_stmt *target, *blk;
    bool found;
} enclose_ctx;

static bool find_target(const ir_stmt *s, void *p)
{
    enclose_ctx *c = p;
    if (s == c->target)
        c->found = true;
    return !c->found;
}

static bool enclosing_visit(const ir_stmt *s, void *p)
{
    enclose_ctx *c = p;
    if (s->kind == IR_S_BLOCK && s != c->target) {
        enclose_ctx in = {c->target, NULL, false};
        ir_stmt_walk(s->init, find_target, NULL, &in);
        for (int i = 0; i < s->nbody && !in.found; i++)
            ir_stmt_walk(s->body[i], find_target, NULL, &in);
        if (!in.found)
            return false;
        c->blk = s;    /* inner blocks that hold it too come later */
    }
    return true;
}

static const ir_stmt *enclosing_block(const ir_stmt *body, const ir_stmt *target)
{
    enclose_ctx c = {target, NULL, false};
    ir_stmt_walk(body, enclosing_visit, NULL, &c);
    return c.blk;
}

/* A variable of a staged copy's source index: an iteration variable of the
 * fill's own block (pad(B, l) fills per channel under a block whose
 * `vx_pad_1 = f` names the channel) stands for its binding. */
typedef struct fill_mark_ctx {
    mark_ctx *c;
    const ir_stmt *fill_blk;
} fill_mark_ctx;

static bool mark_fill_var(const ir_expr *e, void *p)
{
    fill_mark_ctx *fm = p;
    if (e->kind == IR_VAR && fm->fill_blk)
        for (int i = 0; i < fm->fill_blk->niters; i++) {
            const ir_itervar *iv = &fm->fill_blk->iters[i];
            if (iv->var == e->var && iv->binding) {
                ir_expr_walk(iv->binding, mark_index_var, fm->c);
                return false;
            }
        }
    return mark_index_var(e, fm->c);
}

/* A load of a staged copy (cache_read's packed tile, filled under loops
 * that enclose the block) also uses the loop variables that the fill's
 * source index names: `xp[vc * 16 + vq - q_o * 16]`, filled from
 * `x[c * 12544 + p * 112 + q_o * 16 + ..]` under the loop p, is indexed by
 * the iteration variable bound to p as much as `x[.. + vp * 112 + ..]`
 * would be. */
static bool mark_operand(const ir_expr *e, void *p)
{
    mark_ctx *c = p;
    if (e->kind != IR_LOAD)
        return true;           /* select conditions do not mark: only indices do */
    for (int i = 0; i < e->nargs; i++)
        ir_expr_walk(e->args[i], mark_index_var, p);
    const ir_expr *src;
    const ir_stmt *fill = pass_staging_copy(c->f->body, e->buf, &src);
    if (fill && fill->buf == e->buf) {
        fill_mark_ctx fm = {c, enclosing_block(c->f->body, fill)};
        for (int i = 0; i < src->nargs; i++)
            ir_expr_walk(src->args[i], mark_fill_var, &fm);
    }
    return false;
}

/* The buffer an operand's load stands for: the origin of a staged copy. */
static const ir_buffer *operand_origin(const ir_func *f, const ir_buffer *b)
{
    const ir_expr *src;
    const ir_stmt *fill = pass_staging_copy(f->body, b, &src);
    return fill && fill->buf == b ? src->buf : b;
}

static bool first_load_visit(const ir_expr *e, void *p)
{
    const ir_expr **out = p;
    if (*out)
        return false;
    if (e->kind == IR_LOAD) {
        *out = e;
        return false;
    }
    return true;
}

/* The operand's main load: the first one in pre-order (for a padded read
 * select(cond, x[..], 0) that is x). */
static const ir_expr *first_load(const ir_expr *e)
{
    const ir_expr *out = NULL;
    ir_expr_walk(e, first_load_visit, &out);
    return out;
}

/* The role of buffer b of f (or of the buffer a staged b copies) at a call
 * site: the graph buffer passed for it tells whether it is a weight. */
static ir_buf_role call_role(const ir_func *f, const ir_graph_call *call, const ir_buffer *b)
{
    b = operand_origin(f, b);
    if (call)
        for (int i = 0; i < f->nparams && i < call->nargs; i++)
            if (f->params[i] == b)
                return call->args[i]->role;
    return b->role;
}

/* Weights are params, and the consts computed from them when the program
 * is loaded (prepacked panels). */
static bool is_weight(ir_buf_role r)
{
    return r == IR_BUF_PARAM || r == IR_BUF_CONST;
}

/* ---------------------------------------------------------------- convolution geometry */

/* Adds scale * e to the affine form (coef per iteration variable, c0):
 * ir/arith.h's affine form of e (widening integer casts looked through),
 * whose every term must be an iteration variable of blk (or the variable
 * its binding names).  False when e is not affine in them. */
/* pad() stores a copy that its reads index with stride S deinterleaved
 * (passes/schedule/pad.c): padded index t = S * A + B is read at
 * floormod(B, S) * H + A + floordiv(B, S), H the length of a phase.  Its
 * geometry is t's: the two terms of B become B, and A's terms (those of
 * coefficients below H; a row's are multiples of S * H) are multiplied by
 * S.  False when f has no such pair of terms. */
static bool undo_deinterleave(ir_affine *f, const ir_affine_rules *rules)
{
    int mi = -1, di = -1;
    for (int t = 0; t < f->n && mi < 0; t++) {
        const ir_expr *m = f->var[t] ? NULL : f->atom[t];
        if (!m || m->kind != IR_FLOORMOD || m->b->kind != IR_INT || m->b->ival < 2)
            continue;
        for (int u = 0; u < f->n; u++) {
            const ir_expr *d = f->var[u] ? NULL : f->atom[u];
            if (d && d->kind == IR_FLOORDIV && f->coef[u] == 1 && ir_expr_equal(d->a, m->a) &&
                ir_expr_equal(d->b, m->b) && f->coef[t] > 1) {
                mi = t;
                di = u;
            }
        }
    }
    if (mi < 0)
        return false;
    int64_t S = f->atom[mi]->b->ival, H = f->coef[mi];
    const ir_expr *B = f->atom[mi]->a;
    ir_affine g = {.c = f->c};
    for (int t = 0; t < f->n; t++) {
        if (t == mi || t == di)
            continue;
        int64_t k = f->coef[t];
        if ((k < H && k > -H) && __builtin_mul_overflow(k, S, &k))
            return false;
        if (!(f->var[t] ? ir_affine_add_var(&g, f->var[t], k) : ir_affine_add_term(&g, f->atom[t], k)))
            return false;
    }
    if (!ir_affine_add(&g, B, 1, rules, 0))
        return false;
    *f = g;
    return true;
}

static bool affine_add(const ir_stmt *blk, const ir_expr *e, int64_t scale, int64_t *coef,
                       int64_t *c0)
{
    static const ir_affine_rules rules = {.casts = true};
    static const ir_affine_rules atoms = {.casts = true, .atoms = true};
    ir_affine f = {0};
    if (!ir_affine_add(&f, e, scale, &rules, 0)) {
        f = (ir_affine){0};
        if (!ir_affine_add(&f, e, scale, &atoms, 0) || !undo_deinterleave(&f, &rules))
            return false;
        for (int t = 0; t < f.n; t++)
            if (!f.var[t])
                return false;
    }
    if (__builtin_add_overflow(*c0, f.c, c0))
        return false;
    for (int t = 0; t < f.n; t++) {
        int at = -1;
        for (int i = 0; i < blk->niters && at < 0; i++) {
            const ir_expr *bd = blk->iters[i].binding;
            if (blk->iters[i].var == f.var[t] || (bd && bd->kind == IR_VAR && bd->var == f.var[t]))
                at = i;
        }
        if (at < 0 || __builtin_add_overflow(coef[at], f.coef[t], &coef[at]))
            return false;
    }
    return true;
}

/* Roles of iteration variables in the GEMM view. */
typedef enum { ROLE_M, ROLE_N, ROLE_K, ROLE_BATCH } dim_role;

/* The iteration variable of blk that variable v of a staged copy's fill
 * stands for: v itself, or the variable its binding in the fill's block
 * fb names, is blk's iteration variable or the loop variable its binding
 * names.  -1 when none. */
static int fill_var_iter(const ir_stmt *blk, const ir_stmt *fb, const ir_var *v)
{
    for (int i = 0; fb && i < fb->niters; i++)
        if (fb->iters[i].var == v && fb->iters[i].binding &&
            fb->iters[i].binding->kind == IR_VAR)
            v = fb->iters[i].binding->var;
    for (int i = 0; i < blk->niters; i++) {
        const ir_expr *bd = blk->iters[i].binding;
        if (blk->iters[i].var == v || (bd && bd->kind == IR_VAR && bd->var == v))
            return i;
    }
    return -1;
}

static bool store_uses_var(const ir_stmt *st, const ir_var *v)
{
    for (int i = 0; i < st->nargs; i++)
        if (ir_expr_uses_var(st->args[i], v))
            return true;
    return false;
}

/* pad(B, l) at a loop of row blocks (passes/schedule/pad.c) copies, per
 * iteration of l, the padded rows the iteration reads, and the window
 * reads the copy relative to the block: x_pad[vpi * 114 + vr * 114 + ..]
 * for the padded row vpo * 8 + vpi + vr.  The fill says where the block
 * starts: it stores x_pad[x_pad_2 * 114 + ..] from
 * x[.. + x_pad_2 * 112 + vat * 896 + ..], where vat (bound to po) is a
 * variable the store does not use, and x_pad_2 the copy's outermost one:
 * each po moves the block 896 / 112 = 8 rows of the copy, 8 * 114
 * elements.  Adds to coef (one per iteration variable of blk) these
 * origins in dimension d of the copy, for the output (M) variables of blk
 * they stand for (marked in origin[]), so that the read becomes the
 * whole padded copy's, x_pad[(vpo * 8 + vpi + vr) * 114 + ..].  An origin
 * the fill does not give that way (a packed tile of cache_read, whose
 * block moves along an inner dimension of the copy) adds nothing. */
static bool add_copy_origin(const ir_func *f, const ir_stmt *blk, const ir_expr *ld, int d,
                            const dim_role *role, int64_t *coef, bool *origin)
{
    static const ir_affine_rules rules = {.casts = true};
    const ir_expr *src;
    const ir_stmt *fill = pass_staging_copy(f->body, ld->buf, &src);
    if (!fill || fill->buf != ld->buf || fill->nargs != ld->nargs || src->nargs != ld->nargs)
        return true;
    ir_affine s = {0}, g = {0};
    if (!ir_affine_add(&s, fill->args[d], 1, &rules, 0) ||
        !ir_affine_add(&g, src->args[d], 1, &rules, 0))
        return true;
    int outer = -1;            /* the copy's outermost variable in d */
    for (int t = 0; t < s.n; t++) {
        if (!s.var[t])
            return true;
        if (outer < 0 || llabs(s.coef[t]) > llabs(s.coef[outer]))
            outer = t;
    }
    int64_t g_outer = outer >= 0 ? ir_affine_coef(&g, s.var[outer]) : 0;
    if (g_outer == 0)
        return true;
    const ir_stmt *fb = enclosing_block(f->body, fill);
    for (int t = 0; t < g.n; t++) {
        int64_t k;
        int i = g.var[t] ? fill_var_iter(blk, fb, g.var[t]) : -1;
        if (i < 0 || role[i] != ROLE_M || store_uses_var(fill, g.var[t]) ||
            g.coef[t] % g_outer != 0)
            continue;
        if (__builtin_mul_overflow(g.coef[t] / g_outer, s.coef[outer], &k) ||
            __builtin_add_overflow(coef[i], k, &coef[i]))
            return false;
        origin[i] = true;
    }
    return true;
}

/* One spatial dimension of a convolution window: E outputs, a filter of R
 * taps, stride s; `dim` and `key` order dimensions (outer first). */
typedef struct win_dim {
    int64_t E, R, s;
    int dim;
    int64_t key;
} win_dim;

/* The reduction variable that output variable p of a dimension (coef a[])
 * slides over as a window: coef(p) = s * coef(r) with 1 <= s < extent(r)
 * (the windows overlap), the largest such coef(r) not yet paired; -1 if
 * none. */
static int window_partner(const ir_stmt *blk, const int64_t *a, const dim_role *role,
                          const bool *paired, int p)
{
    int r = -1;
    for (int i = 0; i < blk->niters; i++) {
        int64_t span;
        if (role[i] != ROLE_K || paired[i] || a[i] <= 0 || blk->iters[i].extent < 2 ||
            a[i] > a[p] || a[p] % a[i] != 0)
            continue;
        if (!__builtin_mul_overflow(a[i], blk->iters[i].extent, &span) && span <= a[p])
            continue;          /* no overlap: a reshaped GEMM, not a window */
        if (r < 0 || a[i] > a[r])
            r = i;
    }
    return r;
}

/* The output variable that forms one index with the block origin p as its
 * inner part: coef(p) = coef(i) * extent(i), i not seen yet; -1 if none.
 * (A column never qualifies: a block of F >= 2 rows moves by at least two
 * of the copy's rows, each at least as wide as the window's columns.) */
static int inner_part(const ir_stmt *blk, const int64_t *a, const dim_role *role,
                      const int *seen, int p)
{
    for (int i = 0; i < blk->niters; i++) {
        int64_t whole;
        if (role[i] == ROLE_M && !seen[i] && a[i] > 0 && blk->iters[i].extent > 1 &&
            !__builtin_mul_overflow(a[i], blk->iters[i].extent, &whole) && whole == a[p])
            return i;
    }
    return -1;
}

/* Recovers SCALE-Sim convolution geometry from the input operand's load.
 * In each index dimension (one dimension once buffers are flattened), an
 * output variable p (role M) and a reduction variable r form a window when
 * coef(p) = s * coef(r) with 1 <= s < extent(r): the stride is s and the
 * window overlaps, which is what makes a convolution more than a GEMM.  An
 * output row split into blocks (regroup) is one row again, and a read of a
 * row block's padded copy is the whole copy's (add_copy_origin).  An
 * M variable without such a partner is a window of one tap: its stride is
 * its coefficient when it is alone in an unflattened dimension, else 1 (the
 * same GEMM and the same distinct input; the flat index cannot tell a
 * strided 1x1 convolution from a smaller image).  The geometry is kept only
 * when it has one or two window dimensions (at least one real window, or two
 * image dimensions), covers every M variable, and acc_conv_to_gemm gives
 * back exactly M, N, K and batch. */
static bool conv_geometry(const ir_func *f, const ir_stmt *blk, const ir_expr *in,
                          const dim_role *role, const acc_block_info *g, acc_conv *cv)
{
    int nv = blk->niters, nd = in->nargs;
    if (nd < 1 || nv < 1)
        return false;
    int64_t *coef = calloc((size_t)nd * (size_t)nv, sizeof *coef);
    bool *paired = calloc((size_t)nv, sizeof *paired);
    bool *origin = calloc((size_t)nv, sizeof *origin);
    int *seen = calloc((size_t)nv, sizeof *seen);
    win_dim dims[3];
    int ndims = 0, npairs = 0;
    bool ok = coef && paired && origin && seen;
    for (int d = 0; ok && d < nd; d++) {
        int64_t c0 = 0;
        ok = affine_add(blk, in->args[d], 1, coef + (size_t)d * nv, &c0) &&
             add_copy_origin(f, blk, in, d, role, coef + (size_t)d * nv, origin);
    }
    for (int d = 0; ok && d < nd; d++) {
        const int64_t *a = coef + (size_t)d * nv;
        int live = 0;          /* variables of extent > 1 in this dimension */
        for (int i = 0; i < nv; i++)
            if (a[i] && blk->iters[i].extent > 1) {
                live++;
                if (a[i] < 0 && (role[i] == ROLE_M || role[i] == ROLE_K))
                    ok = false;    /* a flipped window: not SCALE-Sim's form */
            }
        /* Output variables in decreasing coefficient order, so that an outer
         * window claims its reduction partner first. */
        for (int pass = 0; ok && pass < nv; pass++) {
            int p = -1;
            for (int i = 0; i < nv; i++)
                if (role[i] == ROLE_M && a[i] > 0 && blk->iters[i].extent > 1 &&
                    seen[i] == 0 && (p < 0 || a[i] > a[p]))
                    p = i;
            if (p < 0)
                break;
            seen[p] = 1;
            int64_t E = blk->iters[p].extent;
            /* A row block's copy (regroup(p, F), pad at po) reads row
             * po * F + pi: po, the copy's origin, and pi, the row in the
             * block, coef(po) = F * coef(pi), are one output row.  Only
             * an origin joins: without a copy, a row whose padding is a
             * select's is as wide as the output's (coef(p) = W * coef(q),
             * W the extent of q), yet p and q are two dimensions. */
            for (int i; origin[p] && (i = inner_part(blk, a, role, seen, p)) >= 0; p = i) {
                seen[i] = 1;
                if (__builtin_mul_overflow(E, blk->iters[i].extent, &E))
                    ok = false;
            }
            int r = window_partner(blk, a, role, paired, p);
            if (ndims == 3 || !ok) {
                ok = false;
                break;
            }
            win_dim *w = &dims[ndims++];
            w->E = E;
            w->dim = d;
            w->key = a[p];
            if (r >= 0) {
                paired[r] = true;
                npairs++;
                w->R = blk->iters[r].extent;
                w->s = a[p] / a[r];
            } else {
                w->R = 1;
                w->s = nd > 1 && live == 1 ? a[p] : 1;
            }
        }
    }
    /* Every M variable must be in exactly one window dimension. */
    for (int i = 0; ok && i < nv; i++)
        if (role[i] == ROLE_M && blk->iters[i].extent > 1) {
            int n = 0;
            for (int d = 0; d < nd; d++)
                n += coef[(size_t)d * nv + i] != 0;
            ok = n == 1;
        }
    ok = ok && ndims >= 1 && ndims <= 2 && (npairs >= 1 || ndims == 2);
    free(coef);
    free(paired);
    free(origin);
    free(seen);
    if (!ok)
        return false;
    if (ndims == 2 && (dims[0].dim > dims[1].dim ||
                       (dims[0].dim == dims[1].dim && dims[0].key < dims[1].key))) {
        win_dim t = dims[0];
        dims[0] = dims[1];
        dims[1] = t;
    }
    win_dim one = {1, 1, 1, 0, 0};
    const win_dim *h = ndims == 2 ? &dims[0] : &one, *w = &dims[ndims - 1];
    int64_t rs, kc, ih, iw, ch, nf;
    if (__builtin_mul_overflow(h->R, w->R, &rs) || g->K % rs != 0)
        return false;
    kc = g->K / rs;
    /* The rows a window actually touches, (E - 1) * s + R, as in the
     * ResNet fixtures: padding is part of the ifmap. */
    if (__builtin_mul_overflow(h->E - 1, h->s, &ih) || __builtin_add_overflow(ih, h->R, &ih) ||
        __builtin_mul_overflow(w->E - 1, w->s, &iw) || __builtin_add_overflow(iw, w->R, &iw) ||
        __builtin_mul_overflow(kc, g->batch, &ch) || __builtin_mul_overflow(g->N, g->batch, &nf))
        return false;
    acc_conv c = {ih, iw, h->R, w->R, ch, nf, h->s, w->s};
    acc_layer check;
    memset(&check, 0, sizeof check);
    char err[256];
    if (!acc_conv_to_gemm(&c, g->batch, &check, err, sizeof err) || check.M != g->M ||
        check.N != g->N || check.K != g->K || check.batch != g->batch)
        return false;
    *cv = c;
    return true;
}

/* ---------------------------------------------------------------- split reductions */

/* The REDUCE variable that spatial variable v forms one reduction index
 * with, as its inner part, in every dimension of load ld that uses v: r
 * with coef(r) = coef(v) * extent(v), and no output (M) variable sliding
 * over r as a window would (coef(p) = s * coef(r), 1 <= s < extent(r)).
 * -1 when there is none, and -2 when v is not in ld at all. */
static int reduction_partner(const ir_stmt *blk, const ir_expr *ld, const dim_role *role, int v)
{
    int nv = blk->niters, partner = -2;
    int64_t *coef = calloc((size_t)nv, sizeof *coef);
    if (!coef)
        return -1;
    for (int d = 0; d < ld->nargs && partner != -1; d++) {
        int64_t c0 = 0, ev = blk->iters[v].extent, t;
        memset(coef, 0, (size_t)nv * sizeof *coef);
        if (!affine_add(blk, ld->args[d], 1, coef, &c0)) {
            partner = -1;
            break;
        }
        if (coef[v] == 0)
            continue;
        int r = -1;
        for (int i = 0; i < nv && r < 0; i++) {
            int64_t er = blk->iters[i].extent;
            if (role[i] != ROLE_K || er < 2 || coef[i] == 0)
                continue;
            bool joined = !__builtin_mul_overflow(coef[v], ev, &t) && t == coef[i];
            for (int p = 0; joined && p < nv; p++)
                joined = !(role[p] == ROLE_M && coef[p] != 0 && coef[p] % coef[i] == 0 &&
                           coef[p] / coef[i] >= 1 && coef[p] / coef[i] < er);
            if (joined)
                r = i;
        }
        partner = r < 0 || (partner >= 0 && partner != r) ? -1 : r;
    }
    free(coef);
    return partner;
}

/* Is spatial variable v a part of a split reduction?  rfactor(B, l) makes
 * the inner loop l of a reduction index k = ko * 16 + ki a spatial
 * variable of a partial block (a second block sums the partials): v then
 * forms the index k with the same REDUCE variable in both operands,
 * x[vko * 16 + v] * w[o * 512 + vko * 16 + v].  The GEMM is the reduction
 * over both, so v counts into K.  A group or head variable is alone in its
 * dimension, the outer part of a channel index (g * Cg + c), or joined
 * with an output variable in one of the operands. */
static bool split_reduction(const ir_stmt *blk, const ir_expr *la, const ir_expr *lb,
                            const dim_role *role, int v)
{
    int ra = reduction_partner(blk, la, role, v), rb = reduction_partner(blk, lb, role, v);
    return ra >= 0 && ra == rb;
}

/* ---------------------------------------------------------------- one block */

/* Simplifies the two factors knowing each iteration variable's range; the
 * new nodes live in the returned scratch module, which the caller frees
 * after its last use of *a and *b.  (Out of memory exits the process, as
 * every arena allocation does.) */
static ir_module *simplified_operands(const ir_stmt *blk, const ir_expr **a, const ir_expr **b)
{
    ir_module *scratch = ir_module_new("accel-classify");
    size_t n = (size_t)(blk->niters ? blk->niters : 1);
    const ir_var **vars = ir_alloc(scratch->arena, n * sizeof *vars);
    int64_t *lo = ir_alloc(scratch->arena, n * sizeof *lo);
    int64_t *hi = ir_alloc(scratch->arena, n * sizeof *hi);
    int nv = 0;
    for (int i = 0; i < blk->niters; i++)
        if (blk->iters[i].extent > 0) {
            vars[nv] = blk->iters[i].var;
            lo[nv] = 0;
            hi[nv++] = blk->iters[i].extent - 1;
        }
    *a = pass_simplify_expr_in(scratch, (ir_expr *)*a, nv, vars, lo, hi);
    *b = pass_simplify_expr_in(scratch, (ir_expr *)*b, nv, vars, lo, hi);
    return scratch;
}

bool acc_classify_block(const ir_func *f, const ir_graph_call *call, const ir_stmt *blk,
                        acc_block_info *out, diag *d)
{
    memset(out, 0, sizeof *out);
    int nv = blk->niters;
    mpz_t inst;
    mpz_init_set_ui(inst, 1);
    for (int i = 0; i < nv; i++)
        z_mul_u64(inst, (uint64_t)(blk->iters[i].extent > 0 ? blk->iters[i].extent : 0));
    bool ok = z_to_i64(inst, &out->instances);
    mpz_clear(inst);

    const ir_stmt *st;
    const ir_expr *a, *b, *la = NULL, *lb = NULL;
    bool reduce = false;
    for (int i = 0; i < nv; i++)
        reduce |= blk->iters[i].kind == IR_ITER_REDUCE;
    /* The operands are classified from their simplified form, whatever the
     * pipeline ran: at -O0 a grouped-convolution index keeps
     * floordiv(vf, 16) with vf in [0, 15], which names vf in the input
     * although it is the constant 0. */
    ir_module *scratch = NULL;
    if (ok && reduce && match_mac(blk, &st, &a, &b)) {
        scratch = simplified_operands(blk, &a, &b);
        la = first_load(a);
        lb = first_load(b);
    }
    if (ok && la && lb) {
        /* The weight is the operand a graph PARAM or CONST feeds; by
         * default the second, as in x[..] * w[..]. */
        if (is_weight(call_role(f, call, la->buf)) && !is_weight(call_role(f, call, lb->buf))) {
            const ir_expr *t = a;
            a = b;
            b = t;
            t = la;
            la = lb;
            lb = t;
        }
        size_t n = (size_t)(nv ? nv : 1);
        bool *ua = calloc(n, sizeof *ua), *ub = calloc(n, sizeof *ub);
        dim_role *role = calloc(n, sizeof *role);
        if (!ua || !ub || !role) {
            free(ua), free(ub), free(role);
            ir_module_free(scratch);
            diag_error(d, diag_noloc(), "out of memory");
            return false;
        }
        mark_ctx ca = {f, blk, ua}, cb = {f, blk, ub};
        ir_expr_walk(a, mark_operand, &ca);
        ir_expr_walk(b, mark_operand, &cb);
        mpz_t dim[4];
        for (int k = 0; k < 4; k++)
            mpz_init_set_ui(dim[k], 1);
        for (int i = 0; i < nv; i++) {
            const ir_itervar *iv = &blk->iters[i];
            if (iv->kind == IR_ITER_REDUCE)
                role[i] = ROLE_K;
            else if (ua[i] == ub[i])
                role[i] = ROLE_BATCH;   /* both: groups, heads; neither: replicas */
            else if (ub[i])
                role[i] = ROLE_N;
            else
                role[i] = ROLE_M;
        }
        for (int i = 0; i < nv; i++) {
            if (role[i] == ROLE_BATCH && ua[i] && split_reduction(blk, la, lb, role, i))
                role[i] = ROLE_K;
            z_mul_u64(dim[role[i]],
                      (uint64_t)(blk->iters[i].extent > 0 ? blk->iters[i].extent : 0));
        }
        ok = z_to_i64(dim[ROLE_M], &out->M) && z_to_i64(dim[ROLE_N], &out->N) &&
             z_to_i64(dim[ROLE_K], &out->K) && z_to_i64(dim[ROLE_BATCH], &out->batch);
        for (int k = 0; k < 4; k++)
            mpz_clear(dim[k]);
        /* Dot products (M = N = 1) have no reuse for an array to exploit;
         * an empty domain is no work at all. */
        out->gemm = ok && !(out->M == 1 && out->N == 1) && out->instances > 0;
        if (out->gemm) {
            out->has_conv = conv_geometry(f, blk, la, role, out, &out->conv);
            out->elem_bytes[ACC_IFMAP] = ir_dtype_size(la->buf->dtype);
            out->elem_bytes[ACC_FILTER] = ir_dtype_size(lb->buf->dtype);
            out->elem_bytes[ACC_OFMAP] = ir_dtype_size(st->buf->dtype);
        } else
            out->M = out->N = out->K = out->batch = 0;
        free(ua);
        free(ub);
        free(role);
    }
    if (scratch)
        ir_module_free(scratch);
    if (!ok)
        diag_error(d, func_loc(f), "layer %s: block %s: its size does not fit in 64 bits",
                   acc_func_layer_name(f), blk->name ? blk->name : "?");
    return ok;
}

/* ---------------------------------------------------------------- one function */

/* A growable set of statements: those inside GEMM-like blocks, whose work
 * the array does (the vector unit skips them), each tagged with the GEMM
 * it belongs to. */
typedef struct stmt_set {
    const ir_stmt **v;
    int *gemm;                 /* parallel to v */
    int n, cap;
    int cur;                   /* the tag set_add gives */
    bool oom;
} stmt_set;

static bool set_add(const ir_stmt *s, void *ctx)
{
    stmt_set *S = ctx;
    if (S->n == S->cap) {
        int cap = S->cap ? 2 * S->cap : 32;
        const ir_stmt **v = realloc(S->v, (size_t)cap * sizeof *v);
        if (v)
            S->v = v;
        int *g = v ? realloc(S->gemm, (size_t)cap * sizeof *g) : NULL;
        if (g)
            S->gemm = g;
        if (!v || !g) {
            S->oom = true;
            return false;
        }
        S->cap = cap;
    }
    S->gemm[S->n] = S->cur;
    S->v[S->n++] = s;
    return true;
}

/* The GEMM a statement belongs to, or -1. */
static int set_tag(const stmt_set *S, const ir_stmt *s)
{
    for (int i = 0; i < S->n; i++)
        if (S->v[i] == s)
            return S->gemm[i];
    return -1;
}

/* What the walk of one function call finds. */
typedef struct call_walk {
    const ir_func *f;
    const ir_graph_call *call;
    diag *d;
    acc_block_info *gemms;
    const ir_stmt **gemm_blocks;   /* the first block of each, parallel to gemms */
    int ngemms, capgemms;
    stmt_set inside;           /* statements of the GEMM blocks */
    bool failed;
} call_walk;

static bool add_gemm(call_walk *w, const acc_block_info *bi, const ir_stmt *blk)
{
    if (w->ngemms == w->capgemms) {
        int cap = w->capgemms ? 2 * w->capgemms : 4;
        acc_block_info *g = realloc(w->gemms, (size_t)cap * sizeof *g);
        if (g)
            w->gemms = g;
        const ir_stmt **nm = g ? realloc(w->gemm_blocks, (size_t)cap * sizeof *nm) : NULL;
        if (nm)
            w->gemm_blocks = nm;
        if (!g || !nm) {
            diag_error(w->d, diag_noloc(), "out of memory");
            return false;
        }
        w->capgemms = cap;
    }
    w->gemms[w->ngemms] = *bi;
    w->gemm_blocks[w->ngemms++] = blk;
    return true;
}

/* The buffer a block stores to, or the one its staged tile is written back
 * to (cache_write). */
static const ir_buffer *stored_origin(const ir_func *f, const ir_stmt *blk)
{
    const ir_stmt *st = single_store(blk);
    if (!st)
        return NULL;
    const ir_stmt *wb = pass_staging_copy(f->body, st->buf, NULL);
    return wb && wb->buf != st->buf ? wb->buf : st->buf;
}

/* Are two GEMM blocks parts of one computation?  `partition` cuts a loop
 * into a main part and a tail, and copies the block into each: both copies
 * declare the whole domain (the same iteration variables, kinds and
 * extents), give the same GEMM and store to the same buffer.  Two different
 * GEMMs of one function store to different buffers. */
static bool same_gemm(const call_walk *w, int j, const acc_block_info *bi, const ir_stmt *blk)
{
    const acc_block_info *g = &w->gemms[j];
    const ir_stmt *o = w->gemm_blocks[j];
    if (g->M != bi->M || g->N != bi->N || g->K != bi->K || g->batch != bi->batch ||
        o->niters != blk->niters || stored_origin(w->f, o) != stored_origin(w->f, blk))
        return false;
    for (int i = 0; i < blk->niters; i++)
        if (o->iters[i].kind != blk->iters[i].kind || o->iters[i].extent != blk->iters[i].extent ||
            strcmp(o->iters[i].var->name, blk->iters[i].var->name) != 0)
            return false;
    return true;
}

/* ir_stmt_walk callback: classifies every innermost block (a block holding
 * other blocks, like TensorIR's root, is only a container). */
static bool visit_block(const ir_stmt *s, void *ctx)
{
    call_walk *w = ctx;
    if (w->failed)
        return false;
    if (s->kind != IR_S_BLOCK || has_inner_block(s))
        return true;
    acc_block_info bi;
    if (!acc_classify_block(w->f, w->call, s, &bi, w->d)) {
        w->failed = true;
        return false;
    }
    if (bi.gemm) {
        int part = -1;
        for (int j = 0; j < w->ngemms && part < 0; j++)
            if (same_gemm(w, j, &bi, s))
                part = j;
        if (part < 0 && !add_gemm(w, &bi, s)) {
            w->failed = true;
            return false;
        }
        w->inside.cur = part >= 0 ? part : w->ngemms - 1;
        ir_stmt_walk(s, set_add, NULL, &w->inside);
        if (w->inside.oom) {
            diag_error(w->d, diag_noloc(), "out of memory");
            w->failed = true;
        }
    }
    return false;
}

/* The vector unit's share of one call of function fi: every counted site
 * (passes/analyze.h) outside the GEMM blocks.
 *   operations: the site's FLOPs, at least one per element a store writes
 *     (a copy or a select still passes through the unit);
 *   elements read: per buffer, the loads of the site, at most the buffer's
 *     size (each distinct element streams in once), not counting the
 *     accumulator load of a reduction (Y[i] = Y[i] + ..., max(Y[i], ...)),
 *     which stays in a register;
 *   elements written: the site's stores, at most the buffer's size.
 * A reduction's init is folded into its updates (same elements). */
typedef struct vec_work {
    mpz_t ops, rd, wr;
    bool any;
} vec_work;

/* Loads of exactly the element a store writes (a reduction's accumulator,
 * whatever the reduction: +=, max=, ...). */
typedef struct acc_ctx {
    const ir_stmt *store;
    uint64_t n;
} acc_ctx;

static bool count_acc(const ir_expr *e, void *p)
{
    acc_ctx *c = p;
    if (e->kind == IR_LOAD && same_access(e, c->store))
        c->n++;
    return true;
}

/* A schedule's staging (cache_read, cache_write, pad, a decomposed init of a
 * tile): a store into a local buffer of a constant or of a (guarded) load,
 * or a write-back of a local buffer's element.  The CPU moves data into
 * scratch that the array's SRAM model already accounts for, so it is no
 * vector-unit work: the model describes the network, not the CPU schedule. */
static bool is_staging(const ir_stmt *st)
{
    if (!st || st->kind != IR_S_STORE || !st->value)
        return false;
    const ir_expr *v = st->value;
    if (v->kind == IR_SELECT && (v->b->kind == IR_FLOAT || v->b->kind == IR_INT))
        v = v->a;
    if (st->buf->role == IR_BUF_LOCAL)
        return v->kind == IR_LOAD || v->kind == IR_FLOAT || v->kind == IR_INT;
    return v->kind == IR_LOAD && v->buf->role == IR_BUF_LOCAL;
}

/* Executions of site s per call of its function: its static count, or,
 * for a count that depends on the data, what the run's counters say
 * divided by the function's calls (their average).  False when the count
 * depends on the data and no counter says it. */
static bool site_per_call(const pass_stats *ps, const pass_site *s, const uint64_t *counts,
                          uint64_t *out)
{
    if (s->is_static) {
        *out = s->count;
        return true;
    }
    bool known = false;
    uint64_t n = counts ? pass_site_executions(ps, s, counts, &known) : 0;
    int calls = ps->funcs[s->func].ncalls;
    *out = n / (uint64_t)(calls > 1 ? calls : 1);
    return known;
}

static void data_dependent_error(const call_walk *w, diag *d)
{
    diag_error(d, func_loc(w->f), "layer %s: how often a statement runs depends on the data (a "
               "loop bound or condition loads memory); the accelerator model needs the counts "
               "of a run: profile it (--profile --accel)", acc_func_layer_name(w->f));
}

static bool vector_work(const pass_stats *ps, const uint64_t *counts, int fi, const call_walk *w,
                        vec_work *v, diag *d)
{
    const pass_funcinfo *fn = &ps->funcs[fi];
    int nb = fn->nbufs;
    mpz_t exec, part, *per = malloc(sizeof *per * (size_t)(nb ? nb : 1));
    if (!per) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    mpz_inits(exec, part, NULL);
    for (int b = 0; b < nb; b++)
        mpz_init(per[b]);
    bool ok = true;
    for (int k = 0; ok && k < fn->nsites; k++) {
        const pass_site *s = &ps->sites[fn->first_site + k];
        if (set_tag(&w->inside, s->stmt) >= 0 || is_staging(s->stmt))
            continue;
        uint64_t runs;
        if (!site_per_call(ps, s, counts, &runs)) {
            data_dependent_error(w, d);
            ok = false;
            break;
        }
        z_set_u64(exec, runs);
        mpz_t ops;
        mpz_init(ops);
        for (int b = 0; b < nb; b++)
            mpz_set_ui(per[b], 0);
        for (int p = 0; p < s->nparts; p++) {
            const pass_part *pp = &s->parts[p];
            uint64_t den = pp->den ? pp->den : 1;
            /* executions of this part: exec * num / den */
            mpz_set(part, exec);
            z_mul_u64(part, pp->num);
            mpz_fdiv_q_ui(part, part, den);
            mpz_t t;
            mpz_init_set(t, part);
            z_mul_u64(t, pp->flops);
            mpz_add(ops, ops, t);
            for (int b = 0; b < nb; b++) {
                mpz_set(t, part);
                z_mul_u64(t, pp->loads[b]);
                mpz_add(per[b], per[b], t);
            }
            mpz_clear(t);
        }
        bool store = s->stmt->kind == IR_S_STORE && s->store_buf >= 0 && s->store_buf < nb;
        if (store && !s->in_init && mpz_cmp(ops, exec) < 0)
            mpz_set(ops, exec);
        mpz_add(v->ops, v->ops, ops);
        mpz_clear(ops);
        if (s->in_init)
            continue;
        if (store) {
            acc_ctx ac = {s->stmt, 0};
            ir_expr_walk(s->stmt->value, count_acc, &ac);
            mpz_set(part, exec);
            z_mul_u64(part, ac.n);
            mpz_sub(per[s->store_buf], per[s->store_buf], part);
            if (mpz_sgn(per[s->store_buf]) < 0)
                mpz_set_ui(per[s->store_buf], 0);
        }
        for (int b = 0; b < nb; b++) {
            mpz_t cap;
            mpz_init(cap);
            z_set_u64(cap, (uint64_t)ir_buffer_numel(fn->bufs[b].buf));
            if (mpz_cmp(per[b], cap) > 0)
                mpz_set(per[b], cap);
            /* elements to bytes, at the buffer's own element size */
            uint64_t size = (uint64_t)ir_dtype_size(fn->bufs[b].buf->dtype);
            z_mul_u64(per[b], size);
            mpz_add(v->rd, v->rd, per[b]);
            if (store && b == s->store_buf) {
                if (mpz_cmp(exec, cap) < 0)
                    mpz_set(cap, exec);
                z_mul_u64(cap, size);
                mpz_add(v->wr, v->wr, cap);
            }
            mpz_clear(cap);
        }
        v->any = true;
    }
    for (int b = 0; b < nb; b++)
        mpz_clear(per[b]);
    free(per);
    mpz_clears(exec, part, NULL);
    return ok;
}

/* ---------------------------------------------------------------- the module */

/* Appends layers to a growing array. */
typedef struct layer_list {
    acc_layer *v;
    int *func;
    int n, cap;
} layer_list;

static acc_layer *push_layer(layer_list *L, int func, diag *d)
{
    if (L->n == L->cap) {
        int cap = L->cap ? 2 * L->cap : 16;
        acc_layer *v = realloc(L->v, (size_t)cap * sizeof *v);
        if (v)
            L->v = v;
        int *fn = v ? realloc(L->func, (size_t)cap * sizeof *fn) : NULL;
        if (fn)
            L->func = fn;
        if (!v || !fn) {
            diag_error(d, diag_noloc(), "out of memory");
            return NULL;
        }
        L->cap = cap;
    }
    acc_layer *l = &L->v[L->n];
    memset(l, 0, sizeof *l);
    L->func[L->n++] = func;
    return l;
}

static char *dup_name(const char *a, const char *b, diag *d)
{
    size_t n = strlen(a) + (b ? strlen(b) + 1 : 0) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, b ? "%s.%s" : "%s", a, b);
    else
        diag_error(d, diag_noloc(), "out of memory");
    return s;
}

static const char *block_name(const ir_stmt *blk)
{
    return blk->name ? blk->name : "block";
}

/* The name of GEMM i of a function: the layer's name when it has one GEMM;
 * else LAYER.BLOCK, with the GEMM's position added to repeated block names. */
static char *gemm_name(const char *layer, const call_walk *w, int i, diag *d)
{
    if (w->ngemms == 1)
        return dup_name(layer, NULL, d);
    const char *name = block_name(w->gemm_blocks[i]);
    int same = 0;
    for (int j = 0; j < w->ngemms; j++)
        same += strcmp(block_name(w->gemm_blocks[j]), name) == 0;
    if (same == 1)
        return dup_name(layer, name, d);
    char pos[32];
    snprintf(pos, sizeof pos, "%d", i);
    char *bn = dup_name(name, pos, d);
    char *s = bn ? dup_name(layer, bn, d) : NULL;
    free(bn);
    return s;
}

/* The MACs GEMM j of the walk did per call, from its MAC sites' counts,
 * and the output elements it initialized (its init's stores; 0 when the
 * block has no init); *dynamic says whether some MAC site depends on the
 * data.  False when one does and no counter says it, or on overflow. */
static bool gemm_macs(const pass_stats *ps, const uint64_t *counts, int fi, const call_walk *w,
                      int j, int64_t *macs, int64_t *outs, bool *dynamic, diag *d)
{
    const pass_funcinfo *fn = &ps->funcs[fi];
    mpz_t sum, t, init;
    mpz_inits(sum, t, init, NULL);
    bool ok = true, outs_known = true;
    *dynamic = false;
    for (int k = 0; ok && k < fn->nsites; k++) {
        const pass_site *s = &ps->sites[fn->first_site + k];
        uint64_t runs;
        bool is_init = s->in_init && s->store_buf >= 0;
        if ((s->macs == 0 && !is_init) || set_tag(&w->inside, s->stmt) != j)
            continue;
        if (s->macs)
            *dynamic |= !s->is_static;
        if (!site_per_call(ps, s, counts, &runs)) {
            if (!s->macs) {
                outs_known = false;   /* rows unknown: M covers the MACs */
                continue;
            }
            data_dependent_error(w, d);
            ok = false;
            break;
        }
        z_set_u64(t, runs);
        if (s->macs) {
            z_mul_u64(t, s->macs);
            mpz_add(sum, sum, t);
        } else {
            mpz_add(init, init, t);
        }
    }
    if (!outs_known)
        mpz_set_ui(init, 0);
    if (ok && (!z_to_i64(sum, macs) || !z_to_i64(init, outs))) {
        diag_error(d, func_loc(w->f), "layer %s: MAC count does not fit in 64 bits",
                   acc_func_layer_name(w->f));
        ok = false;
    }
    mpz_clears(sum, t, init, NULL);
    return ok;
}

/* A GEMM whose MACs depend on the data is modeled as it ran: the same N
 * and batch; the rows M it computed, from the output elements its init
 * wrote (every row that ran is written back, whatever its reduction
 * length), and the reduction depth K that covers the MACs of those rows,
 * rounded up.  A block without an init says nothing about its rows: its M
 * then covers the MACs, as when whole rows are skipped (a ragged batch of
 * sequences).  Its convolution geometry no longer holds. */
static void gemm_as_ran(acc_layer *l, int64_t macs, int64_t outs)
{
    int64_t nb = l->N * l->batch;              /* <= M*N*K*batch, which fits */
    int64_t rows, depth = l->K;
    if (outs > 0 && outs % nb == 0 && outs / nb <= l->M) {
        rows = outs / nb;
        int64_t per = rows * nb;
        depth = macs / per + (macs % per != 0);
        if (depth > l->K)
            depth = l->K;
    } else {
        int64_t per_row = nb * l->K;
        rows = macs / per_row + (macs % per_row != 0);
    }
    if (rows != l->M) {
        l->declared_M = l->M;
        l->M = rows;
    }
    if (depth != l->K) {
        l->declared_K = l->K;
        l->K = depth;
    }
    if (l->declared_M || l->declared_K)
        l->has_conv = false;
}

/* The layers of one call of m->funcs[fi]. */
static bool call_layers(const pass_stats *ps, const uint64_t *counts, int fi,
                        const ir_graph_call *call, layer_list *L, diag *d)
{
    const ir_func *f = ps->m->funcs[fi];
    call_walk w = {.f = f, .call = call, .d = d};
    ir_stmt_walk(f->body, visit_block, NULL, &w);
    bool ok = !w.failed;
    const char *layer = acc_func_layer_name(f);
    for (int i = 0; ok && i < w.ngemms; i++) {
        int64_t macs, outs;
        bool dynamic;
        if (!(ok = gemm_macs(ps, counts, fi, &w, i, &macs, &outs, &dynamic, d)))
            break;
        if (dynamic && macs == 0)
            continue;          /* the run did none of its work */
        acc_layer *l = push_layer(L, fi, d);
        ok = l && (l->name = gemm_name(layer, &w, i, d)) != NULL;
        if (!ok)
            break;
        const acc_block_info *g = &w.gemms[i];
        l->kind = ACC_LAYER_GEMM;
        l->M = g->M;
        l->N = g->N;
        l->K = g->K;
        l->batch = g->batch;
        l->has_conv = g->has_conv;
        l->conv = g->conv;
        memcpy(l->elem_bytes, g->elem_bytes, sizeof l->elem_bytes);
        if (dynamic)
            gemm_as_ran(l, macs, outs);
    }
    vec_work v = {.any = false};
    mpz_inits(v.ops, v.rd, v.wr, NULL);
    ok = ok && vector_work(ps, counts, fi, &w, &v, d);
    if (ok && v.any) {
        acc_layer *l = push_layer(L, fi, d);
        ok = l && (l->name = dup_name(layer, w.ngemms ? "vector" : NULL, d)) != NULL;
        if (ok) {
            l->kind = ACC_LAYER_VECTOR;
            if (!(z_to_i64(v.ops, &l->vector_ops) && z_to_i64(v.rd, &l->vector_read_bytes) &&
                  z_to_i64(v.wr, &l->vector_write_bytes))) {
                diag_error(d, func_loc(f), "layer %s: vector work does not fit in 64 bits",
                           layer);
                ok = false;
            }
        }
    }
    mpz_clears(v.ops, v.rd, v.wr, NULL);
    free(w.gemms);
    free(w.gemm_blocks);
    free(w.inside.v);
    free(w.inside.gemm);
    return ok;
}

static int func_index(const ir_module *m, const ir_func *f)
{
    for (int i = 0; i < m->nfuncs; i++)
        if (m->funcs[i] == f)
            return i;
    return -1;
}

bool acc_workload_from_analysis(const pass_stats *ps, const uint64_t *counts, acc_workload *w,
                                diag *d)
{
    const ir_module *m = ps->m;
    memset(w, 0, sizeof *w);
    layer_list L = {0};
    bool ok = true;
    if (m->graph.ncalls > 0) {
        for (int c = 0; ok && c < m->graph.ncalls; c++) {
            const ir_graph_call *call = &m->graph.calls[c];
            int fi = func_index(m, call->fn);
            if (fi < 0) {
                diag_internal(d, "accel workload", "graph call %d names a function that is "
                              "not in the module", c);
                ok = false;
                break;
            }
            ok = call_layers(ps, counts, fi, call, &L, d);
        }
    } else {
        for (int fi = 0; ok && fi < m->nfuncs; fi++)
            ok = call_layers(ps, counts, fi, NULL, &L, d);
    }
    w->layers = L.v;
    w->func = L.func;
    w->nlayers = L.n;
    if (!ok) {
        acc_workload_free(w);
        return false;
    }
    return true;
}

bool acc_workload_from_module(const ir_module *m, acc_workload *w, diag *d)
{
    memset(w, 0, sizeof *w);
    pass_stats *ps = pass_analyze(m, NULL, d);
    if (!ps)
        return false;
    bool ok = acc_workload_from_analysis(ps, NULL, w, d);
    pass_stats_free(ps);
    return ok;
}

void acc_workload_free(acc_workload *w)
{
    acc_layers_free(w->layers, w->nlayers);
    free(w->func);
    memset(w, 0, sizeof *w);
}
