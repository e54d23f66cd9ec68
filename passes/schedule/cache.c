/* passes/schedule/cache.c — cache_read and cache_write: stage what one
 * block reads from (or writes to) a buffer during one iteration of a loop
 * in a local buffer.
 *
 * The local buffer has one dimension per loop inside the given loop that
 * the access's indices use, in loop order, as long as that loop's extent:
 * for C[i, j] += A[i, k] * B[k, j] tiled as kc, ic, jr, ir, ki, ii, ji,
 * cache_read(B, kc) gives Bp[jr][ki][ji] and cache_read(A, ic) gives
 * Ap[ir][ki][ii] (BLIS's packed panels), cache_write(C, ir) gives the
 * register tile Cl[ii][ji].  A fill nest copies the buffer in before the
 * loop's body (out-of-range elements read as 0); for cache_write a
 * write-back nest copies the tile out after it (in-range elements only).
 * Every access of the block to the buffer then reads or writes the local
 * buffer at (loop - lower bound) of each dimension's loop.  Split guards
 * around the block stay: a block instance whose bindings leave their
 * ranges does not exist, even when it would only touch a padded tile; and
 * the write-back copies only the tile elements such a guard lets the block
 * write (an inexact split of a regrouped loop, f_in of 24 by 16, leaves a
 * tile of 16 whose last 8 elements lie in the next group's range: copied
 * back, they would overwrite what another iteration, or another thread,
 * computed there). */
#include <string.h>

#include "passes/passes.h"
#include "passes/schedule/schedule.h"

/* The one block under *at that accesses buf (error if none or several). */
typedef struct acc_ctx {
    const ir_buffer *buf;
    const ir_stmt *block, *cur;
    int nblocks;
    bool writes;              /* some block under the loop stores to buf */
    const ir_expr **idx;      /* indices of the first access */
    int nidx;
    bool differ;              /* another access has other indices */
    const ir_stmt *cur_block;
} acc_ctx;

/* One access of the buffer: its block, and whether its indices are the
 * first access's. */
static void note_access(acc_ctx *a, ir_expr *const *args, int nargs)
{
    if (a->block != a->cur_block) {
        a->nblocks++;
        if (!a->block)
            a->block = a->cur_block;
    }
    if (!a->idx) {
        a->idx = (const ir_expr **)args;
        a->nidx = nargs;
    } else
        for (int i = 0; i < nargs && i < a->nidx; i++)
            a->differ |= !ir_expr_equal(a->idx[i], args[i]);
}

static void scan_expr(acc_ctx *a, const ir_expr *x)
{
    if (!x)
        return;
    if (x->kind == IR_LOAD && x->buf == a->buf)
        note_access(a, x->args, x->nargs);
    for (int i = 0; i < x->nargs; i++)
        scan_expr(a, x->args[i]);
    scan_expr(a, x->a);
    scan_expr(a, x->b);
    scan_expr(a, x->c);
}

static void scan_stmt(acc_ctx *a, const ir_stmt *s)
{
    if (!s)
        return;
    const ir_stmt *saved = a->cur_block;
    if (s->kind == IR_S_BLOCK)
        a->cur_block = s;
    if (s->kind == IR_S_STORE && s->buf == a->buf) {
        a->writes = true;
        note_access(a, s->args, s->nargs);
    }
    for (int i = 0; i < s->nargs; i++)
        scan_expr(a, s->args[i]);
    scan_expr(a, s->value);
    scan_expr(a, s->cond);
    for (int i = 0; i < s->nbody; i++)
        scan_stmt(a, s->body[i]);
    scan_stmt(a, s->init);
    scan_stmt(a, s->orelse);
    a->cur_block = saved;
}

static ir_buffer *find_buffer(sch_ctx *c, const char *name)
{
    for (int i = 0; i < c->f->nparams; i++)
        if (strcmp(c->f->params[i]->name, name) == 0)
            return c->f->params[i];
    return NULL;
}

/* Loop variable v as the block sees it: when an iteration variable's
 * binding is v + (terms of other loops), that is `iv - terms`, so the
 * access still says which iteration variables it depends on (what the
 * profile's GEMM shapes and the accelerator model read); otherwise v. */
static ir_expr *block_index(ir_module *m, const ir_stmt *b, ir_var *v)
{
    for (int i = 0; i < b->niters; i++) {
        const ir_expr *bind = b->iters[i].binding;
        int64_t k;
        if (!ir_affine_var_coef(bind, v, &k) || k != 1)
            continue;
        ir_var *from[1] = {v};
        ir_expr *to[1] = {ir_int(m, 0)};
        ir_expr *rest = pass_simplify_expr(m, ir_expr_subst(m, bind, from, to, 1));
        ir_expr *iv = ir_varref(m, b->iters[i].var);
        return ir_expr_is_int(rest, 0) ? iv : ir_binary(m, IR_SUB, iv, rest);
    }
    return ir_varref(m, v);
}

static ir_expr *in_range(ir_module *m, ir_expr **idx, const ir_buffer *b)
{
    ir_expr *cond = NULL;
    for (int d = 0; d < b->ndim; d++) {
        ir_expr *ok = ir_binary(m, IR_AND, ir_binary(m, IR_GE, ir_expr_copy(m, idx[d]), ir_int(m, 0)),
                                ir_binary(m, IR_LT, ir_expr_copy(m, idx[d]), ir_int(m, b->shape[d])));
        cond = cond ? ir_binary(m, IR_AND, cond, ok) : ok;
    }
    return cond;
}

/* A reduction whose reduce loops all run inside the cached loop writes its
 * init to every tile element before any update, in every iteration of that
 * loop: the tile needs no fill from the buffer (which may not hold anything
 * yet). */
static bool init_covers_tile(const sch_path *bp, int at, const ir_stmt *b)
{
    if (!b->init)
        return false;
    for (int i = 0; i < b->niters; i++) {
        if (b->iters[i].kind != IR_ITER_REDUCE)
            continue;
        for (int k = 0; k <= at; k++) {
            const ir_stmt *s = *bp->slot[k];
            if (s->kind == IR_S_FOR && ir_expr_uses_var(b->iters[i].binding, s->var))
                return false;
        }
    }
    return true;
}

/* Shared by cache_read and cache_write. */
/* cache_write: distinct tile elements must be distinct elements of the
 * buffer (each loop of the tile moves along one dimension, and two loops
 * along one dimension do not overlap). */
static bool tile_distinct(sch_ctx *c, const ir_buffer *buf, ir_expr *const *idx, int nidx,
                          ir_stmt *const *dims, int ndims)
{
    /* distinct tile elements must be distinct elements of the buffer */
    for (int i = 0; i < ndims; i++) {
        int where = -1;
        int64_t coef = 0;
        for (int d = 0; d < nidx; d++) {
            int64_t k;
            if (!ir_affine_var_coef(idx[d], dims[i]->var, &k)) {
                sch_error(c, "cache_write: index %d of '%s' is not affine in loop '%s'", d + 1,
                          buf->name, dims[i]->var->name);
                return false;
            }
            if (k != 0) {
                if (where >= 0) {
                    sch_error(c, "cache_write: loop '%s' moves along two dimensions of '%s'",
                              dims[i]->var->name, buf->name);
                    return false;
                }
                where = d;
                coef = k;
            }
        }
        for (int j = 0; j < ndims; j++) {
            int64_t k2;
            if (j == i || !ir_affine_var_coef(idx[where], dims[j]->var, &k2) || k2 == 0)
                continue;
            /* two loops along one dimension: the outer must step past the inner's span */
            int64_t span = k2 * (sch_extent(dims[j]) - 1);
            if (j > i && (coef <= 0 || k2 < 0 || coef <= span)) {
                sch_error(c, "cache_write: loops '%s' and '%s' overlap in dimension %d of '%s'",
                          dims[i]->var->name, dims[j]->var->name, where + 1, buf->name);
                return false;
            }
        }
    }
    return true;
}

/* The conjuncts of the guards (ifs) on the path from loop `at` (exclusive)
 * to its block that the block lies in the then-branch of, and that use no
 * loop inside `at` other than dims (the tile's loops; a guard of another
 * inner loop, a split reduction, is left out: the write-back then copies
 * as before), ANDed; NULL if none. */
static ir_expr *and_of(ir_module *m, ir_expr *a, ir_expr *b)
{
    return a ? ir_binary(m, IR_AND, a, b) : b;
}

static ir_expr *tile_guard_of(ir_module *m, ir_expr *x, const sch_path *bp, int at,
                              ir_stmt *const *dims, int ndims, ir_expr *acc)
{
    if (x->kind == IR_AND)
        return tile_guard_of(m, x->b, bp, at, dims, ndims,
                             tile_guard_of(m, x->a, bp, at, dims, ndims, acc));
    for (int k = at + 1; k < bp->n; k++) {
        const ir_stmt *s = *bp->slot[k];
        if (s->kind != IR_S_FOR || !ir_expr_uses_var(x, s->var))
            continue;
        bool dim = false;
        for (int i = 0; i < ndims; i++)
            dim |= dims[i] == s;
        if (!dim)
            return acc;
    }
    return and_of(m, acc, ir_expr_copy(m, x));
}

static ir_expr *tile_guard(ir_module *m, const sch_path *bp, int at, ir_stmt *const *dims,
                           int ndims)
{
    ir_expr *g = NULL;
    for (int k = at + 1; k + 1 < bp->n; k++) {
        ir_stmt *s = *bp->slot[k];
        if (s->kind == IR_S_IF && s->nbody > 0 && bp->slot[k + 1] == &s->body[0])
            g = tile_guard_of(m, s->cond, bp, at, dims, ndims, g);
    }
    return g;
}

/* The nest that fills the tile from the buffer (w = 0; out-of-range
 * elements read 0) or writes it back (w = 1; in-range elements the guard
 * `guard` (NULL: none, see tile_guard) lets the block write only), over
 * new loop variables named after dims. */
static ir_stmt *tile_nest(ir_module *m, const char *name, int w, ir_buffer *buf, ir_buffer *local,
                          ir_expr *const *idx, int nidx, ir_stmt *const *dims, int ndims,
                          const int64_t *shape, const ir_expr *guard)
{
    ir_var *from[64];
    ir_expr *to[64];
    ir_var *vars[64];
    for (int i = 0; i < ndims; i++) {
        char *vn = ir_sprintf(m->arena, "%s_%s%s", dims[i]->var->name, name, w ? "_out" : "");
        vars[i] = ir_var_new(m, vn, dims[i]->var->dtype);
        from[i] = dims[i]->var;
        to[i] = ir_binary(m, IR_ADD, ir_varref(m, vars[i]), ir_int(m, dims[i]->lo->ival));
    }
    ir_expr **gidx = ir_alloc(m->arena, sizeof *gidx * (size_t)(nidx ? nidx : 1));
    for (int d = 0; d < nidx; d++)
        gidx[d] = pass_simplify_expr(m, ir_expr_subst(m, idx[d], from, to, ndims));
    ir_itervar *iters = ir_alloc(m->arena, sizeof *iters * (size_t)(ndims ? ndims : 1));
    ir_expr **tidx = ir_alloc(m->arena, sizeof *tidx * (size_t)(ndims ? ndims : 1));
    for (int i = 0; i < ndims; i++) {
        ir_var *iv = ir_var_new(m, ir_sprintf(m->arena, "v%s", vars[i]->name), IR_I64);
        iters[i] = (ir_itervar){iv, IR_ITER_SPATIAL, shape[i], ir_varref(m, vars[i])};
        tidx[i] = ir_varref(m, iv);
    }
    ir_expr *ok = in_range(m, gidx, buf);
    if (w == 1 && guard)
        ok = and_of(m, ok, pass_simplify_expr(m, ir_expr_subst(m, guard, from, to, ndims)));
    ir_stmt *body;
    if (w == 0) {
        ir_expr *val = ir_load(m, buf, gidx, nidx);
        ir_expr *zero = ir_dtype_is_float(buf->dtype) ? ir_float(m, 0.0, buf->dtype)
                                                      : ir_int_typed(m, 0, buf->dtype);
        body = ir_store(m, local, tidx, ndims, ok ? ir_select(m, ok, val, zero) : val);
    } else {
        body = ir_store(m, buf, gidx, nidx, ir_load(m, local, tidx, ndims));
        if (ok)
            body = ir_if(m, ok, body, NULL);
    }
    /* block iteration variables stand for the loops in the indices */
    ir_var *ivf[64];
    ir_expr *ivt[64];
    for (int i = 0; i < ndims; i++) {
        ivf[i] = vars[i];
        ivt[i] = tidx[i];
    }
    body = ir_stmt_subst(m, body, ivf, ivt, ndims);
    ir_stmt *nest = ir_block(m, ir_sprintf(m->arena, "%s_%s", name, w ? "out" : "in"), iters,
                             ndims, NULL, body);
    for (int i = ndims - 1; i >= 0; i--)
        nest = ir_for(m, vars[i], ir_int(m, 0), ir_int(m, shape[i]), IR_FOR_SERIAL, nest);
    return nest;
}

static bool stage(sch_ctx *c, const char *bufname, const char *blockname, const char *loop,
                  const char *name, bool write)
{
    const char *what = write ? "cache_write" : "cache_read";
    sch_path lp;
    if (!sch_find_loop(c, loop, &lp))
        return false;
    ir_stmt *l = *lp.slot[lp.n - 1];
    ir_buffer *buf = NULL;
    if (write) {
        sch_path bp;
        if (!sch_find_block(c, blockname, &bp))
            return false;
        const ir_stmt *b = *bp.slot[bp.n - 1];
        if (b->nwrites != 1) {
            sch_error(c, "%s: block '%s' writes %d buffers, not one", what, blockname, b->nwrites);
            return false;
        }
        buf = b->writes[0];
    } else if (!(buf = find_buffer(c, bufname))) {
        sch_error(c, "%s: no buffer parameter '%s' in @%s", what, bufname, c->f->name);
        return false;
    }
    if (sch_name_used(c->f, name)) {
        sch_error(c, "the name '%s' is already used in @%s", name, c->f->name);
        return false;
    }
    acc_ctx a = {.buf = buf};
    scan_stmt(&a, l->body[0]);
    if (!a.block) {
        sch_error(c, "%s: loop '%s' does not access '%s'", what, loop, buf->name);
        return false;
    }
    if (a.nblocks > 1) {
        sch_error(c, "%s: several blocks inside loop '%s' access '%s'", what, loop, buf->name);
        return false;
    }
    if (write && strcmp(a.block->name, blockname) != 0) {
        sch_error(c, "%s: loop '%s' does not enclose block '%s'", what, loop, blockname);
        return false;
    }
    if (!write && a.writes) {
        sch_error(c, "cache_read: '%s' is written inside loop '%s'", buf->name, loop);
        return false;
    }
    if (a.differ) {
        sch_error(c, "%s: block '%s' accesses '%s' with different indices", what, a.block->name,
                  buf->name);
        return false;
    }
    /* the path from the loop to the block, for its loops and bindings */
    sch_path bp;
    sch_ctx quiet = *c;
    if (!sch_find_block(&quiet, a.block->name, &bp))
        return false;
    int at = -1;
    for (int k = 0; k < bp.n; k++)
        if (*bp.slot[k] == l)
            at = k;
    if (at < 0) {
        sch_error(c, "%s: loop '%s' does not enclose block '%s'", what, loop, a.block->name);
        return false;
    }
    ir_module *m = c->m;
    ir_expr **idx = ir_alloc(m->arena, sizeof *idx * (size_t)(a.nidx ? a.nidx : 1));
    for (int d = 0; d < a.nidx; d++)
        idx[d] = pass_simplify_expr(m, sch_unbind(m, &bp, a.idx[d]));
    /* dimensions: the loops inside `l` the indices use, in loop order */
    ir_stmt *dims[64];
    int ndims = 0;
    for (int k = at + 1; k < bp.n; k++) {
        ir_stmt *s = *bp.slot[k];
        if (s->kind != IR_S_FOR)
            continue;
        bool used = false;
        for (int d = 0; d < a.nidx; d++)
            used |= ir_expr_uses_var(idx[d], s->var);
        if (!used)
            continue;
        if (sch_extent(s) < 0 || ndims == 64) {
            sch_error(c, "%s: loop '%s' has bounds that are not constants", what, s->var->name);
            return false;
        }
        dims[ndims++] = s;
    }
    if (write && !tile_distinct(c, buf, idx, a.nidx, dims, ndims))
        return false;
    int64_t shape[64];
    for (int i = 0; i < ndims; i++)
        shape[i] = sch_extent(dims[i]);
    ir_buffer *local = ir_buffer_new(m, name, buf->dtype, ndims, shape, IR_BUF_LOCAL);
    local->scope = IR_SCOPE_STACK;
    /* the block's accesses: local[loop - lo, ...] */
    ir_expr **lidx = ir_alloc(m->arena, sizeof *lidx * (size_t)(ndims ? ndims : 1));
    for (int i = 0; i < ndims; i++) {
        lidx[i] = block_index(m, a.block, dims[i]->var);
        if (dims[i]->lo->ival)
            lidx[i] = ir_binary(m, IR_SUB, lidx[i], ir_int(m, dims[i]->lo->ival));
    }
    sch_replace_access(m, (ir_stmt *)a.block, buf, local, lidx, ndims);
    ir_block_update_access(m, (ir_stmt *)a.block);
    /* fill (and write-back) nests over new loop variables */
    ir_stmt *nests[2] = {NULL, NULL};
    ir_expr *guard = write ? tile_guard(m, &bp, at, dims, ndims) : NULL;
    for (int w = 0; w < (write ? 2 : 1); w++)
        nests[w] = tile_nest(m, name, w, buf, local, idx, a.nidx, dims, ndims, shape, guard);
    ir_stmt *seq = ir_seq_new(m);
    if (!(write && init_covers_tile(&bp, at, a.block)))
        ir_seq_append(m, seq, nests[0]);
    ir_seq_append(m, seq, l->body[0]);
    if (nests[1])
        ir_seq_append(m, seq, nests[1]);
    l->body[0] = ir_alloc_stmt(m, local, seq);
    return true;
}

bool sch_cache_read(sch_ctx *c, const char *buffer, const char *loop, const char *name)
{
    return stage(c, buffer, NULL, loop, name, false);
}

bool sch_cache_write(sch_ctx *c, const char *block, const char *loop, const char *name)
{
    return stage(c, NULL, block, loop, name, true);
}
