/* passes/schedule/reduction.c — decompose_reduction: a block's init moves
 * out of its reduce loops into a loop nest of its own, placed just before a
 * given loop, so the reduce loops run without the `first iteration?` test.
 *
 * The init nest keeps, of the loops from the given one down to the block,
 * those its spatial bindings use (and the guards between them); the other
 * loops are at their first value when the original init would run, so they
 * become their lower bounds, and the reduce bindings that depend on loops
 * outside become the nest's condition. */
#include <math.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/schedule/schedule.h"

static bool uses_any(const ir_expr *x, ir_var **vars, int n)
{
    for (int i = 0; i < n; i++)
        if (ir_expr_uses_var(x, vars[i]))
            return true;
    return false;
}

/* The loops from bp.slot[at] down to block b: kept (a spatial binding
 * uses them) or dropped (at their start in the init nest); false after an
 * error when an allocation is in between or a reduce variable uses a kept
 * loop. */
typedef struct dr_loops {
    ir_var *kept[128], *dropped[128];
    ir_expr *dropped_lo[128];
    int nkept, ndropped;
} dr_loops;

static bool dr_split_loops(sch_ctx *c, const sch_path *bp, int at, const ir_stmt *b,
                           const char *loop, dr_loops *d)
{
    d->nkept = d->ndropped = 0;
    for (int k = at; k < bp->n - 1; k++) {
        ir_stmt *s = *bp->slot[k];
        if (s->kind == IR_S_ALLOC) {
            sch_error(c, "cannot decompose the reduction of block '%s' at loop '%s': buffer "
                      "'%s' is allocated in between", b->name, loop, s->buf->name);
            return false;
        }
        if (s->kind != IR_S_FOR)
            continue;
        bool spatial = false;
        for (int i = 0; i < b->niters; i++)
            spatial |= b->iters[i].kind == IR_ITER_SPATIAL &&
                       ir_expr_uses_var(b->iters[i].binding, s->var);
        if (spatial)
            d->kept[d->nkept++] = s->var;
        else {
            d->dropped_lo[d->ndropped] = s->lo;
            d->dropped[d->ndropped++] = s->var;
        }
    }
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == IR_ITER_REDUCE && uses_any(b->iters[i].binding, d->kept, d->nkept)) {
            sch_error(c, "cannot decompose the reduction of block '%s' at loop '%s': reduce "
                      "variable '%s' depends on a loop that a spatial variable uses too", b->name,
                      loop, b->iters[i].var->name);
            return false;
        }
    return true;
}

/* The init block over the spatial iteration variables of b, with the
 * loops substituted (from -> to), under `reduce variables are 0`. */
static ir_stmt *dr_init_block(ir_module *m, const ir_stmt *b, ir_var **from, ir_expr **to,
                              int nsub, ir_expr **cond)
{
    ir_itervar *iters = ir_alloc(m->arena, sizeof *iters * (size_t)b->niters);
    int niters = 0;
    ir_var *ivfrom[128];
    ir_expr *ivto[128];
    *cond = NULL;
    for (int i = 0; i < b->niters; i++) {
        const ir_itervar *it = &b->iters[i];
        ir_expr *bind = ir_expr_subst(m, it->binding, from, to, nsub);
        if (it->kind == IR_ITER_REDUCE) {
            ir_expr *z = ir_binary(m, IR_EQ, bind, ir_int(m, 0));
            *cond = *cond ? ir_binary(m, IR_AND, *cond, z) : z;
            ivfrom[i] = it->var;
            ivto[i] = ir_int(m, 0);
            continue;
        }
        ir_var *nv = ir_var_new(m, ir_sprintf(m->arena, "%s_init", it->var->name), it->var->dtype);
        iters[niters++] = (ir_itervar){nv, IR_ITER_SPATIAL, it->extent, bind};
        ivfrom[i] = it->var;
        ivto[i] = ir_varref(m, nv);
    }
    ir_stmt *init_body = ir_stmt_subst(m, b->init, ivfrom, ivto, b->niters);
    init_body = ir_stmt_subst(m, init_body, from, to, nsub);
    return ir_block(m, ir_sprintf(m->arena, "%s_init", b->name), iters, niters, NULL, init_body);
}

bool sch_decompose_reduction(sch_ctx *c, const char *block, const char *loop)
{
    sch_path bp;
    if (!sch_find_block(c, block, &bp))
        return false;
    ir_stmt *b = *bp.slot[bp.n - 1];
    int at = -1;
    for (int k = 0; k < bp.n - 1; k++) {
        const ir_stmt *s = *bp.slot[k];
        if (s->kind == IR_S_FOR && strcmp(s->var->name, loop) == 0)
            at = k;
    }
    if (at < 0) {
        sch_path lp;
        if (sch_find_loop(c, loop, &lp))
            sch_error(c, "cannot decompose the reduction of block '%s' at loop '%s': the loop "
                      "does not enclose the block", block, loop);
        return false;
    }
    if (!b->init) {
        sch_error(c, "block '%s' has no init to decompose (it is not a reduction, or its init "
                  "was decomposed already)", block);
        return false;
    }
    ir_module *m = c->m;
    dr_loops d;
    if (!dr_split_loops(c, &bp, at, b, loop, &d))
        return false;
    /* new loop variables for the kept loops; dropped ones at their start */
    ir_var *from[256];
    ir_expr *to[256];
    int nsub = 0;
    for (int i = 0; i < d.nkept; i++) {
        from[nsub] = d.kept[i];
        to[nsub++] = ir_varref(m, ir_var_new(m, ir_sprintf(m->arena, "%s_init", d.kept[i]->name),
                                             d.kept[i]->dtype));
    }
    for (int i = 0; i < d.ndropped; i++) {
        from[nsub] = d.dropped[i];
        to[nsub++] = d.dropped_lo[i];
    }
    ir_expr *cond;
    ir_stmt *nest = dr_init_block(m, b, from, to, nsub, &cond);
    /* rebuild the kept loops and guards, innermost first */
    for (int k = bp.n - 2; k >= at; k--) {
        ir_stmt *s = *bp.slot[k];
        if (s->kind == IR_S_FOR) {
            for (int i = 0; i < d.nkept; i++)
                if (d.kept[i] == s->var)
                    nest = ir_for(m, to[i]->var, ir_expr_subst(m, s->lo, from, to, nsub),
                                  ir_expr_subst(m, s->hi, from, to, nsub),
                                  s->for_kind == IR_FOR_PARALLEL ? IR_FOR_PARALLEL : IR_FOR_SERIAL,
                                  nest);
        } else if (s->kind == IR_S_IF && s->nbody > 0 && bp.slot[k + 1] == &s->body[0]) {
            nest = ir_if(m, ir_expr_subst(m, s->cond, from, to, nsub), nest, NULL);
        } else if (s->kind == IR_S_LET) {
            nest = ir_let(m, s->var, ir_expr_subst(m, s->value, from, to, nsub), nest);
        }
    }
    if (cond)
        nest = ir_if(m, cond, nest, NULL);
    b->init = NULL;
    ir_block_update_access(m, b);
    ir_stmt *seq = ir_seq_new(m);
    ir_seq_append(m, seq, nest);
    ir_seq_append(m, seq, *bp.slot[at]);
    *bp.slot[at] = seq;
    return true;
}

/* ---------------------------------------------------------------- rfactor */

/* rfactor(B, l): block B reduces into X over several loops, l one of them.
 * Partial results, one per iteration of l, go to a local buffer X_rf (X's
 * dimensions and one more, l's); a second block, B again, reduces them into
 * X:
 *
 *     for r, jo, ji:                       for r, jo, ji:
 *       block s(vr, vj = jo*16 + ji):        block s_rf(vr_rf, vjo_rf: reduce, vji_rf: spatial):
 *         init: s[vr] = 0                      init: s_rf[vr_rf, vji_rf] = 0
 *         s[vr] = s[vr] + x[vr, vj]   ->       s_rf[vr_rf, vji_rf] = s_rf[...] + x[vr_rf, vjo_rf*16 + vji_rf]
 *                                           for r_wb, ji_wb:
 *                                             block s(vr, vji_wb: reduce):
 *                                               init: s[vr] = 0
 *                                               s[vr] = s[vr] + s_rf[vr, vji_wb]
 *
 * In the partial block every loop a reduce variable uses becomes an
 * iteration variable of its own: l a spatial one (so l can be vectorized or
 * run in parallel), the others reduce.  Its init is the identity of the
 * operation (0 for +, 1 for *, -inf for max, +inf for min), whatever B's
 * init was; B's init moves to the final block.
 *
 * Legal when B's body is one update X[idx] = X[idx] op e (op + * max min, e
 * not reading X) at indices of its spatial variables; every loop a reduce
 * variable uses serves no spatial one, has constant bounds and encloses
 * only B's nest; each reduce variable is bound to a sum of its loops with
 * positive coefficients that is 0 when they are at their lower bounds (so
 * the first instance of every partial is where the loops start, and no
 * later one); and every guard around B that mentions a reduce loop is
 * proven to hold when the other reduce loops are at their lower bounds (so
 * every partial has that first instance and is initialized).  Reordering
 * the operations changes the rounding of + and *, as any reordering of a
 * reduction does. */

static bool same_indices(ir_expr *const *a, ir_expr *const *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!ir_expr_equal(a[i], b[i]))
            return false;
    return true;
}

/* st is X[idx] = X[idx] op e (or e op X[idx]): its op and e. */
static bool reduction_update(const ir_stmt *st, ir_expr_kind *op, const ir_expr **rhs)
{
    if (!st || st->kind != IR_S_STORE)
        return false;
    const ir_expr *v = st->value;
    if (v->kind != IR_ADD && v->kind != IR_MUL && v->kind != IR_MAX && v->kind != IR_MIN)
        return false;
    for (int side = 0; side < 2; side++) {
        const ir_expr *acc = side ? v->b : v->a, *other = side ? v->a : v->b;
        if (acc->kind == IR_LOAD && acc->buf == st->buf && acc->nargs == st->nargs &&
            same_indices(acc->args, st->args, st->nargs) && !ir_expr_loads(other, st->buf)) {
            *op = v->kind;
            *rhs = other;
            return true;
        }
    }
    return false;
}

/* The identity of op on dtype t, or NULL. */
static ir_expr *identity(ir_module *m, ir_expr_kind op, ir_dtype t)
{
    if (ir_dtype_is_float(t)) {
        double v = op == IR_ADD ? 0.0 : op == IR_MUL ? 1.0 : op == IR_MAX ? -INFINITY : INFINITY;
        return ir_float(m, v, t);
    }
    int64_t lo, hi;
    if (!ir_dtype_int_range(t, &lo, &hi) || t == IR_BOOL)
        return NULL;
    return ir_int_typed(m, op == IR_ADD ? 0 : op == IR_MUL ? 1 : op == IR_MAX ? lo : hi, t);
}

static bool any_binding_uses(const ir_stmt *b, ir_iter_kind kind, const ir_var *v)
{
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == kind && ir_expr_uses_var(b->iters[i].binding, v))
            return true;
    return false;
}

static bool uses_reduce_loop(const ir_expr *x, ir_stmt *const *loops, int n)
{
    for (int i = 0; i < n; i++)
        if (ir_expr_uses_var(x, loops[i]->var))
            return true;
    return false;
}

/* One rfactor under way: what the checks found, for the rewrite. */
typedef struct rfactor {
    sch_ctx *c;
    ir_module *m;
    const char *block, *loop;
    sch_path bp;               /* to the block */
    ir_stmt *b, *l, *st;       /* the block, the loop, its update */
    ir_expr_kind op;           /* X[...] = X[...] op rhs */
    const ir_expr *rhs;
    ir_buffer *x;
    ir_expr *id;               /* op's identity */
    int top;                   /* bp.slot[top]: the nest below the last sequence or allocation */
    ir_stmt *red[64];          /* the loops reduce variables use, outermost first */
    int nred;
    const char *rf_name, *rf_block;
    const char *wb_names[128]; /* of the final nest's loops */
} rfactor;

/* The block, the loop enclosing it, and a block that is one update with an
 * identity, an init of the element it updates and no reduce variable in
 * its indices. */
static bool rf_update(rfactor *r)
{
    sch_ctx *c = r->c;
    const char *block = r->block, *loop = r->loop;
    if (!sch_find_block(c, block, &r->bp))
        return false;
    sch_path *bp = &r->bp;
    ir_stmt *b = r->b = *bp->slot[bp->n - 1];
    int at = -1;
    for (int k = 0; k < bp->n - 1; k++)
        if ((*bp->slot[k])->kind == IR_S_FOR && strcmp((*bp->slot[k])->var->name, loop) == 0)
            at = k;
    if (at < 0) {
        sch_path lp;
        if (sch_find_loop(c, loop, &lp))
            sch_error(c, "cannot rfactor block '%s' over loop '%s': the loop does not enclose "
                      "the block", block, loop);
        return false;
    }
    r->l = *bp->slot[at];
    ir_stmt *st = r->st = b->nbody == 1 ? b->body[0] : NULL;
    if (!reduction_update(st, &r->op, &r->rhs)) {
        sch_error(c, "cannot rfactor block '%s': its body is not one update X[...] = X[...] op "
                  "value (op one of + * max min)", block);
        return false;
    }
    ir_buffer *x = r->x = st->buf;
    r->id = identity(r->m, r->op, x->dtype);
    if (!r->id) {
        sch_error(c, "cannot rfactor block '%s': no identity for %s on %s", block,
                  ir_expr_kind_name(r->op), ir_dtype_name(x->dtype));
        return false;
    }
    if (b->init && !(b->init->kind == IR_S_STORE && b->init->buf == x &&
                     b->init->nargs == st->nargs && same_indices(b->init->args, st->args, st->nargs) &&
                     !ir_expr_loads(b->init->value, x))) {
        sch_error(c, "cannot rfactor block '%s': its init is not one store to the element it "
                  "updates", block);
        return false;
    }
    for (int i = 0; i < b->niters; i++)
        for (int d = 0; d < st->nargs; d++)
            if (b->iters[i].kind == IR_ITER_REDUCE && ir_expr_uses_var(st->args[d], b->iters[i].var)) {
                sch_error(c, "cannot rfactor block '%s': it stores at an index that uses reduce "
                          "variable '%s'", block, b->iters[i].var->name);
                return false;
            }
    return true;
}

/* The nest: the chain below the deepest sequence or allocation over the
 * block (the partials' allocation and the final nest go there), and the
 * reduce loops in it, each serving reduce variables only, with constant
 * bounds. */
static bool rf_loops(rfactor *r)
{
    sch_ctx *c = r->c;
    const char *block = r->block;
    const sch_path *bp = &r->bp;
    const ir_stmt *b = r->b;
    r->top = 0;
    for (int k = 0; k < bp->n - 1; k++)
        if ((*bp->slot[k])->kind == IR_S_SEQ || (*bp->slot[k])->kind == IR_S_ALLOC)
            r->top = k + 1;
    r->nred = 0;
    for (int k = 0; k < bp->n - 1; k++) {
        ir_stmt *s = *bp->slot[k];
        if (s->kind == IR_S_BLOCK) {
            sch_error(c, "cannot rfactor block '%s': it is inside block '%s'", block, s->name);
            return false;
        }
        if (k >= r->top && (s->kind == IR_S_LET ||
                            (s->kind == IR_S_IF && bp->slot[k + 1] != &s->body[0]))) {
            sch_error(c, "cannot rfactor block '%s': %s between its loops and the block", block,
                      s->kind == IR_S_LET ? "a let is" : "an else branch is");
            return false;
        }
        if (s->kind != IR_S_FOR || !any_binding_uses(b, IR_ITER_REDUCE, s->var))
            continue;
        if (any_binding_uses(b, IR_ITER_SPATIAL, s->var)) {
            sch_error(c, "cannot rfactor block '%s': loop '%s' serves both spatial and reduce "
                      "variables", block, s->var->name);
            return false;
        }
        if (k < r->top) {
            sch_error(c, "cannot rfactor block '%s': its reduce loop '%s' encloses other "
                      "statements", block, s->var->name);
            return false;
        }
        if (sch_extent(s) < 1) {
            sch_error(c, "cannot rfactor block '%s': its reduce loop '%s' has bounds that are "
                      "not constants", block, s->var->name);
            return false;
        }
        if (r->nred == 64) {
            sch_error(c, "cannot rfactor block '%s': too many reduce loops", block);
            return false;
        }
        r->red[r->nred++] = s;
    }
    if (!any_binding_uses(b, IR_ITER_REDUCE, r->l->var)) {
        sch_error(c, "cannot rfactor block '%s' over loop '%s': it is not a reduce loop of the "
                  "block", block, r->loop);
        return false;
    }
    return true;
}

/* Each reduce variable a positive sum of its loops, 0 at their start; and
 * every guard of the reduce loops holds where the loops other than l
 * start (every partial's first instance exists). */
static bool rf_bindings(rfactor *r)
{
    sch_ctx *c = r->c;
    const ir_stmt *b = r->b;
    for (int i = 0; i < b->niters; i++) {
        const ir_itervar *it = &b->iters[i];
        if (it->kind != IR_ITER_REDUCE)
            continue;
        ir_affine a;
        bool ok = ir_affine_of(it->binding, &a);
        int64_t start = a.c;
        for (int t = 0; ok && t < a.n; t++) {
            const ir_stmt *s = NULL;
            for (int k = 0; k < r->nred; k++)
                if (r->red[k]->var == a.var[t])
                    s = r->red[k];
            ok = s && a.coef[t] > 0 && !__builtin_mul_overflow(a.coef[t], s->lo->ival, &(int64_t){0});
            if (ok)
                start += a.coef[t] * s->lo->ival;
        }
        if (!ok || start != 0) {
            sch_error(c, "cannot rfactor block '%s': reduce variable '%s' is not bound to a sum "
                      "of its loops with positive coefficients starting at 0", r->block,
                      it->var->name);
            return false;
        }
    }
    ir_var_range rg[SCH_RANGES_MAX];
    int nrg;
    sch_path_ranges(&r->bp, r->bp.n - 1, rg, &nrg);
    for (int k = r->top; k < r->bp.n - 1; k++) {
        ir_stmt *s = *r->bp.slot[k];
        if (s->kind != IR_S_IF || !uses_reduce_loop(s->cond, r->red, r->nred))
            continue;
        ir_var *from[64];
        ir_expr *to[64];
        int n = 0;
        for (int j = 0; j < r->nred; j++)
            if (r->red[j] != r->l) {
                from[n] = r->red[j]->var;
                to[n++] = r->red[j]->lo;
            }
        ir_expr *first = pass_simplify_expr(r->m, ir_expr_subst(r->m, s->cond, from, to, n));
        if (!ir_always(first, rg, nrg)) {
            sch_error(c, "cannot rfactor block '%s' over loop '%s': cannot prove that guard "
                      "'%s' holds where the other reduce loops start", r->block, r->loop,
                      sch_expr_text(r->m, s->cond));
            return false;
        }
    }
    return true;
}

/* Whether loop s of the nest is copied for the final block: l and the
 * spatial loops. */
static bool rf_final_loop(const rfactor *r, const ir_stmt *s)
{
    return s->kind == IR_S_FOR && (s == r->l || any_binding_uses(r->b, IR_ITER_SPATIAL, s->var));
}

/* The new names: X_rf, block_rf and v_wb for each loop of the final nest. */
static bool rf_names(rfactor *r)
{
    sch_ctx *c = r->c;
    ir_module *m = r->m;
    r->rf_name = ir_sprintf(m->arena, "%s_rf", r->x->name);
    r->rf_block = ir_sprintf(m->arena, "%s_rf", r->block);
    if (sch_name_used(c->f, r->rf_name)) {
        sch_error(c, "cannot rfactor block '%s': the name '%s' is already used in @%s", r->block,
                  r->rf_name, c->f->name);
        return false;
    }
    if (sch_block_named(c->f->body, r->rf_block)) {
        sch_error(c, "cannot rfactor block '%s': there is a block '%s' already", r->block, r->rf_block);
        return false;
    }
    int nwb = 0;
    for (int k = r->top; k < r->bp.n - 1; k++) {
        ir_stmt *s = *r->bp.slot[k];
        if (rf_final_loop(r, s)) {
            r->wb_names[nwb] = ir_sprintf(m->arena, "%s_wb", s->var->name);
            if (sch_name_used(c->f, r->wb_names[nwb])) {
                sch_error(c, "cannot rfactor block '%s': the name '%s' is already used in @%s",
                          r->block, r->wb_names[nwb], c->f->name);
                return false;
            }
            nwb++;
        }
    }
    return true;
}

/* Whether index idx of X's store is one spatial variable of the block
 * bound to loops that enclose the partials' allocation only (the loops
 * above r->top): it is the same in every iteration of the nest, so the
 * partials need one element along it.  A softmax's row maximum moved into
 * the loop over its rows (compute_at) and factored there keeps its 16
 * partials for that row alone, on the stack, instead of a whole tensor of
 * them allocated (and zeroed) for every row. */
static bool fixed_by_enclosing_loops(const rfactor *r, const ir_expr *idx)
{
    const ir_itervar *it = NULL;
    for (int i = 0; i < r->b->niters && idx->kind == IR_VAR; i++)
        if (r->b->iters[i].var == idx->var && r->b->iters[i].kind == IR_ITER_SPATIAL)
            it = &r->b->iters[i];
    if (!it)
        return false;
    bool outer = false;
    for (int k = 0; k < r->bp.n - 1; k++) {
        const ir_stmt *s = *r->bp.slot[k];
        if (s->kind == IR_S_FOR && ir_expr_uses_var(it->binding, s->var)) {
            if (k >= r->top)
                return false;
            outer = true;
        }
    }
    return outer;
}

/* The partial results' buffer (X's dimensions, then l's) and the block
 * that fills it in place of the old one: spatial variables renamed, one
 * variable per reduce loop, l's spatial. */
static ir_buffer *rf_partial(rfactor *r)
{
    ir_module *m = r->m;
    const ir_stmt *b = r->b, *st = r->st;
    const ir_buffer *x = r->x;
    int64_t extent = sch_extent(r->l);
    int64_t *shape = ir_alloc(m->arena, sizeof *shape * (size_t)(x->ndim + 1));
    int64_t bytes = ir_dtype_size(x->dtype) * extent;
    bool row[64] = {false};   /* (IR buffers have at most 16 dimensions) */
    for (int d = 0; d < x->ndim; d++) {
        if (d < 64)
            row[d] = d < st->nargs && fixed_by_enclosing_loops(r, st->args[d]);
        shape[d] = d < 64 && row[d] ? 1 : x->shape[d];
        if (__builtin_mul_overflow(bytes, shape[d], &bytes))
            bytes = INT64_MAX;
    }
    shape[x->ndim] = extent;
    ir_buffer *rf = ir_buffer_new(m, r->rf_name, x->dtype, x->ndim + 1, shape, IR_BUF_LOCAL);
    rf->scope = bytes <= 16384 ? IR_SCOPE_STACK : IR_SCOPE_GLOBAL;

    ir_itervar *iters = ir_alloc(m->arena, sizeof *iters * (size_t)(b->niters + r->nred));
    int niters = 0;
    ir_var *lvar[64];
    ir_expr *lval[64];
    ir_var *ivfrom[128];
    ir_expr *ivto[128];
    ir_var *lv_rf = NULL;
    for (int k = 0; k < r->nred; k++) {
        const ir_stmt *red = r->red[k];
        ir_var *v = ir_var_new(m, sch_fresh_name(m, r->c->f, ir_sprintf(m->arena, "v%s_rf", red->var->name)), IR_I64);
        if (red == r->l)
            lv_rf = v;
        lvar[k] = red->var;
        lval[k] = red->lo->ival ? ir_binary(m, IR_ADD, ir_varref(m, v), ir_int(m, red->lo->ival))
                                : ir_varref(m, v);
    }
    for (int i = 0; i < b->niters; i++) {
        const ir_itervar *it = &b->iters[i];
        ivfrom[i] = it->var;
        if (it->kind == IR_ITER_SPATIAL) {
            ir_var *v = ir_var_new(m, sch_fresh_name(m, r->c->f, ir_sprintf(m->arena, "%s_rf", it->var->name)), it->var->dtype);
            iters[niters++] = (ir_itervar){v, IR_ITER_SPATIAL, it->extent, ir_expr_copy(m, it->binding)};
            ivto[i] = ir_varref(m, v);
        } else {
            ivto[i] = pass_simplify_expr(m, ir_expr_subst(m, it->binding, lvar, lval, r->nred));
        }
    }
    for (int k = 0; k < r->nred; k++) {
        const ir_stmt *red = r->red[k];
        ir_var *v = lval[k]->kind == IR_VAR ? lval[k]->var : lval[k]->a->var;
        ir_expr *bind = red->lo->ival ? ir_binary(m, IR_SUB, ir_varref(m, red->var), ir_int(m, red->lo->ival))
                                      : ir_varref(m, red->var);
        iters[niters++] = (ir_itervar){v, red == r->l ? IR_ITER_SPATIAL : IR_ITER_REDUCE, sch_extent(red), bind};
    }
    ir_expr **ridx = ir_alloc(m->arena, sizeof *ridx * (size_t)(x->ndim + 1));
    for (int d = 0; d < st->nargs; d++)
        ridx[d] = d < 64 && row[d] ? ir_int(m, 0) : ir_expr_subst(m, st->args[d], ivfrom, ivto, b->niters);
    ridx[st->nargs] = ir_varref(m, lv_rf);
    int nr = st->nargs + 1;
    ir_expr *partial = ir_binary(m, r->op, ir_load(m, rf, ridx, nr),
                                 ir_expr_subst(m, r->rhs, ivfrom, ivto, b->niters));
    ir_stmt *rf_store = ir_store(m, rf, ridx, nr, partial);
    ir_stmt *rf_init = ir_store(m, rf, ridx, nr, r->id);
    *r->bp.slot[r->bp.n - 1] = ir_block(m, r->rf_block, iters, niters, rf_init, rf_store);
    return rf;
}

/* The final block, X = X op rf[..., v], under copies of l and the spatial
 * loops (and their guards), after the nest; rf allocated around both. */
static void rf_final(rfactor *r, ir_buffer *rf)
{
    ir_module *m = r->m;
    const ir_stmt *b = r->b, *st = r->st, *l = r->l;
    const sch_path *bp = &r->bp;
    ir_var *lfrom[128];
    ir_expr *lto[128];
    int nl = 0, nsp = 0;
    ir_var *lwb = NULL;
    for (int k = r->top, w = 0; k < bp->n - 1; k++) {
        ir_stmt *s = *bp->slot[k];
        if (rf_final_loop(r, s)) {
            ir_var *v = ir_var_new(m, r->wb_names[w++], s->var->dtype);
            if (s == l)
                lwb = v;
            lfrom[nl] = s->var;
            lto[nl++] = ir_varref(m, v);
        }
    }
    for (int i = 0; i < b->niters; i++)
        nsp += b->iters[i].kind == IR_ITER_SPATIAL;
    ir_itervar *fiters = ir_alloc(m->arena, sizeof *fiters * (size_t)(nsp + 1));
    int nf = 0;
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == IR_ITER_SPATIAL)
            fiters[nf++] = (ir_itervar){b->iters[i].var, IR_ITER_SPATIAL, b->iters[i].extent,
                                        ir_expr_subst(m, b->iters[i].binding, lfrom, lto, nl)};
    ir_var *vl = ir_var_new(m, sch_fresh_name(m, r->c->f, ir_sprintf(m->arena, "v%s", lwb->name)), IR_I64);
    fiters[nf++] = (ir_itervar){vl, IR_ITER_REDUCE, sch_extent(l),
                                l->lo->ival ? ir_binary(m, IR_SUB, ir_varref(m, lwb), ir_int(m, l->lo->ival))
                                            : ir_varref(m, lwb)};
    int nr = st->nargs + 1;
    ir_expr **fidx = ir_alloc(m->arena, sizeof *fidx * (size_t)nr);
    for (int d = 0; d < st->nargs; d++)
        fidx[d] = rf->shape[d] == 1 && r->x->shape[d] != 1 ? ir_int(m, 0) : ir_expr_copy(m, st->args[d]);
    fidx[st->nargs] = ir_varref(m, vl);
    ir_expr *combine = ir_binary(m, r->op, ir_load(m, r->x, st->args, st->nargs), ir_load(m, rf, fidx, nr));
    ir_stmt *nest = ir_block(m, r->block, fiters, nf, b->init ? ir_stmt_copy(m, b->init) : NULL,
                             ir_store(m, r->x, st->args, st->nargs, combine));
    for (int k = bp->n - 2; k >= r->top; k--) {
        ir_stmt *s = *bp->slot[k];
        if (s->kind == IR_S_FOR) {
            for (int i = 0; i < nl; i++)
                if (lfrom[i] == s->var)
                    nest = ir_for(m, lto[i]->var, ir_expr_subst(m, s->lo, lfrom, lto, nl),
                                  ir_expr_subst(m, s->hi, lfrom, lto, nl),
                                  s == l ? IR_FOR_SERIAL : s->for_kind, nest);
        } else if (s->kind == IR_S_IF && !uses_reduce_loop(s->cond, r->red, r->nred)) {
            /* a guard of spatial loops only; the others were proven to hold */
            nest = ir_if(m, ir_expr_subst(m, s->cond, lfrom, lto, nl), nest, NULL);
        }
    }
    ir_stmt *seq = ir_seq_new(m);
    ir_seq_append(m, seq, *bp->slot[r->top]);
    ir_seq_append(m, seq, nest);
    *bp->slot[r->top] = ir_alloc_stmt(m, rf, seq);
}

bool sch_rfactor(sch_ctx *c, const char *block, const char *loop)
{
    rfactor r = {.c = c, .m = c->m, .block = block, .loop = loop};
    if (!rf_update(&r) || !rf_loops(&r) || !rf_bindings(&r) || !rf_names(&r))
        return false;
    /* b, st and the path's statements stay readable: the rewrite replaces
     * slots, it does not change the old nodes */
    ir_buffer *rf = rf_partial(&r);
    rf_final(&r, rf);
    return true;
}
