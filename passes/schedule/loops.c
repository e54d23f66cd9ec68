/* passes/schedule/loops.c — loop transformations: split, fuse, reorder, and
 * the loop kinds (vectorize, unroll, parallel).
 *
 * Blocks keep their iteration variables; a primitive only rewrites the
 * loops and the bindings (expressions of loop variables), so what a block
 * computes at each point is unchanged.  Reordering loops changes the order
 * of a reduction's updates (a different rounding, as in every compiler that
 * tiles a reduction) but never which updates happen: a block's init runs
 * when its reduce bindings are all at their first value, and every loop
 * still counts up from its lower bound. */
#include <string.h>

#include "passes/passes.h"
#include "passes/schedule/schedule.h"

static bool fresh_name(sch_ctx *c, const char *name)
{
    if (sch_name_used(c->f, name)) {
        sch_error(c, "the name '%s' is already used in @%s", name, c->f->name);
        return false;
    }
    return true;
}

/* Puts every block under *slot behind `if (cond)`. */
static void guard_blocks(ir_module *m, ir_stmt **slot, ir_expr *cond)
{
    ir_stmt *s = *slot;
    if (!s)
        return;
    if (s->kind == IR_S_BLOCK) {
        *slot = ir_if(m, ir_expr_copy(m, cond), s, NULL);
        return;
    }
    for (int i = 0; i < s->nbody; i++)
        guard_blocks(m, &s->body[i], cond);
    if (s->kind == IR_S_IF && s->orelse)
        guard_blocks(m, &s->orelse, cond);
}

bool sch_split(sch_ctx *c, const char *loop, int64_t factor, const char *outer, const char *inner)
{
    sch_path p;
    if (!sch_find_loop(c, loop, &p))
        return false;
    ir_stmt *l = *p.slot[p.n - 1];
    int64_t n = sch_extent(l);
    if (n < 0) {
        sch_error(c, "cannot split loop '%s': its bounds are not constants", loop);
        return false;
    }
    if (factor < 1) {
        sch_error(c, "cannot split loop '%s' by %lld: the factor must be at least 1", loop,
                  (long long)factor);
        return false;
    }
    if (strcmp(outer, inner) == 0) {
        sch_error(c, "split gives both loops the name '%s'", outer);
        return false;
    }
    if (!fresh_name(c, outer) || !fresh_name(c, inner))
        return false;
    ir_module *m = c->m;
    ir_var *vo = ir_var_new(m, outer, l->var->dtype);
    ir_var *vi = ir_var_new(m, inner, l->var->dtype);
    int64_t f = factor > n ? n : factor;
    /* i = lo + o*f + ii */
    ir_expr *idx = ir_binary(m, IR_ADD, ir_binary(m, IR_MUL, ir_varref(m, vo), ir_int(m, f)),
                             ir_varref(m, vi));
    if (l->lo->ival != 0)
        idx = ir_binary(m, IR_ADD, ir_int(m, l->lo->ival), idx);
    ir_var *from[1] = {l->var};
    ir_expr *to[1] = {idx};
    ir_stmt *body = ir_stmt_subst(m, l->body[0], from, to, 1);
    if (n % f != 0)   /* the last outer iteration is partial: guard the blocks */
        guard_blocks(m, &body, ir_binary(m, IR_LT, idx, ir_int(m, l->hi->ival)));
    ir_stmt *in = ir_for(m, vi, ir_int(m, 0), ir_int(m, f), IR_FOR_SERIAL, body);
    ir_stmt *out = ir_for(m, vo, ir_int(m, 0), ir_int(m, (n + f - 1) / f), IR_FOR_SERIAL, in);
    *p.slot[p.n - 1] = out;
    return true;
}

bool sch_loop_pair(sch_ctx *c, const char *what, const char *outer, const char *inner,
                   sch_path *p, ir_stmt **a, ir_stmt **b)
{
    if (!sch_find_loop(c, outer, p))
        return false;
    *a = *p->slot[p->n - 1];
    *b = (*a)->nbody > 0 ? (*a)->body[0] : NULL;
    if (!*b || (*b)->kind != IR_S_FOR || strcmp((*b)->var->name, inner) != 0) {
        sch_error(c, "cannot %s '%s' and '%s': '%s' is not the only statement in loop '%s'", what,
                  outer, inner, inner, outer);
        return false;
    }
    return true;
}

bool sch_fuse(sch_ctx *c, const char *outer, const char *inner, const char *fused)
{
    sch_path p;
    ir_stmt *a, *b;
    if (!sch_loop_pair(c, "fuse", outer, inner, &p, &a, &b))
        return false;
    int64_t na = sch_extent(a), nb = sch_extent(b);
    if (na < 0 || nb < 0) {
        sch_error(c, "cannot fuse '%s' and '%s': their bounds are not constants", outer, inner);
        return false;
    }
    if (!fresh_name(c, fused))
        return false;
    ir_module *m = c->m;
    ir_var *v = ir_var_new(m, fused, a->var->dtype);
    ir_expr *ea = ir_binary(m, IR_FLOORDIV, ir_varref(m, v), ir_int(m, nb));
    ir_expr *eb = ir_binary(m, IR_FLOORMOD, ir_varref(m, v), ir_int(m, nb));
    if (a->lo->ival)
        ea = ir_binary(m, IR_ADD, ea, ir_int(m, a->lo->ival));
    if (b->lo->ival)
        eb = ir_binary(m, IR_ADD, eb, ir_int(m, b->lo->ival));
    ir_var *from[2] = {a->var, b->var};
    ir_expr *to[2] = {ea, eb};
    ir_stmt *body = ir_stmt_subst(m, b->body[0], from, to, 2);
    *p.slot[p.n - 1] = ir_for(m, v, ir_int(m, 0), ir_int(m, na * nb), IR_FOR_SERIAL, body);
    return true;
}

bool sch_reorder(sch_ctx *c, const char **loops, int n)
{
    sch_path paths[16];
    if (n > 16) {
        sch_error(c, "reorder takes at most 16 loops");
        return false;
    }
    int outer = -1;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++)
            if (strcmp(loops[i], loops[j]) == 0) {
                sch_error(c, "reorder names loop '%s' twice", loops[i]);
                return false;
            }
        if (!sch_find_loop(c, loops[i], &paths[i]))
            return false;
        if (outer < 0 || paths[i].n < paths[outer].n)
            outer = i;
    }
    /* Walk down from the outermost: a perfect nest of loops that must
     * contain all of them. */
    ir_stmt *chain[128];
    int nchain = 0, found = 0;
    for (ir_stmt *s = *paths[outer].slot[paths[outer].n - 1]; s && found < n;
         s = s->nbody == 1 ? s->body[0] : NULL) {
        if (s->kind != IR_S_FOR) {
            sch_error(c, "cannot reorder %s: the loops are not perfectly nested (%s '%s' "
                      "encloses a %s)", loops[0], "loop", chain[nchain - 1]->var->name,
                      ir_stmt_kind_name(s->kind));
            return false;
        }
        if (nchain == 128)
            break;
        chain[nchain++] = s;
        for (int i = 0; i < n; i++)
            if (strcmp(s->var->name, loops[i]) == 0)
                found++;
    }
    if (found < n) {
        for (int i = 0; i < n; i++) {
            bool in = false;
            for (int k = 0; k < nchain; k++)
                in |= strcmp(chain[k]->var->name, loops[i]) == 0;
            if (!in) {
                sch_error(c, "cannot reorder: loop '%s' is not nested in one perfect nest with "
                          "loop '%s'", loops[i], loops[outer]);
                return false;
            }
        }
    }
    /* The member positions, top-down, receive the loops in the order given. */
    ir_stmt saved[16];
    int pos[16], npos = 0;
    for (int k = 0; k < nchain; k++)
        for (int i = 0; i < n; i++)
            if (strcmp(chain[k]->var->name, loops[i]) == 0) {
                if (sch_extent(chain[k]) < 0) {
                    sch_error(c, "cannot reorder loop '%s': its bounds are not constants",
                              loops[i]);
                    return false;
                }
                pos[npos++] = k;
            }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < nchain; k++)
            if (strcmp(chain[k]->var->name, loops[i]) == 0)
                saved[i] = *chain[k];
    for (int i = 0; i < n; i++) {
        ir_stmt *dst = chain[pos[i]];
        dst->var = saved[i].var;
        dst->lo = saved[i].lo;
        dst->hi = saved[i].hi;
        dst->for_kind = saved[i].for_kind;
    }
    return true;
}

/* ---------------------------------------------------------------- loop kinds */

/* What a loop's iterations share, for vectorize and parallel. */
typedef struct share_ctx {
    sch_ctx *c;
    const ir_var *v;
    const char *what;           /* "vectorize" or "parallelize" */
    const ir_buffer *inside[64];  /* buffers allocated inside the loop */
    int ninside;
    ir_var *from[64];
    ir_expr *to[64];
    int nsubst;
    bool ok;
} share_ctx;

static bool allocated_inside(const share_ctx *s, const ir_buffer *b)
{
    for (int i = 0; i < s->ninside; i++)
        if (s->inside[i] == b)
            return true;
    return false;
}

static void check_shared(share_ctx *s, const ir_stmt *st)
{
    if (!st || !s->ok)
        return;
    int mark = s->nsubst, amark = s->ninside;
    switch (st->kind) {
    case IR_S_BLOCK:
        for (int i = 0; i < st->niters; i++) {
            ir_expr *b = ir_expr_subst(s->c->m, st->iters[i].binding, s->from, s->to, s->nsubst);
            if (st->iters[i].kind == IR_ITER_REDUCE && ir_expr_uses_var(b, s->v)) {
                sch_error(s->c, "cannot %s loop '%s': it is a reduction loop of block '%s' "
                          "(iterations update the same elements)", s->what, s->v->name, st->name);
                s->ok = false;
                return;
            }
            if (s->nsubst < 64) {
                s->from[s->nsubst] = st->iters[i].var;
                s->to[s->nsubst++] = b;
            }
        }
        break;
    case IR_S_ALLOC:
        if (s->ninside < 64)
            s->inside[s->ninside++] = st->buf;
        break;
    case IR_S_STORE:
        if (!allocated_inside(s, st->buf)) {
            bool dep = false;
            for (int i = 0; i < st->nargs; i++)
                dep |= ir_expr_uses_var(
                    ir_expr_subst(s->c->m, st->args[i], s->from, s->to, s->nsubst), s->v);
            if (!dep) {
                sch_error(s->c, "cannot %s loop '%s': every iteration stores to the same "
                          "elements of '%s'", s->what, s->v->name, st->buf->name);
                s->ok = false;
                return;
            }
        }
        break;
    default:
        break;
    }
    for (int i = 0; i < st->nbody; i++)
        check_shared(s, st->body[i]);
    check_shared(s, st->init);
    check_shared(s, st->orelse);
    s->nsubst = mark;
    s->ninside = amark;
}

bool sch_set_kind(sch_ctx *c, const char *loop, ir_for_kind kind)
{
    sch_path p;
    if (!sch_find_loop(c, loop, &p))
        return false;
    ir_stmt *l = *p.slot[p.n - 1];
    /* (a loop of one iteration has no two that could store the same
     * elements: regroup and split may leave one whose variable the
     * indices no longer use) */
    if ((kind == IR_FOR_VECTORIZED || kind == IR_FOR_PARALLEL) && sch_extent(l) != 1) {
        share_ctx s = {.c = c, .v = l->var, .ok = true,
                       .what = kind == IR_FOR_VECTORIZED ? "vectorize" : "parallelize"};
        /* bindings of the blocks around the loop */
        for (int k = 0; k < p.n - 1; k++) {
            const ir_stmt *b = *p.slot[k];
            for (int i = 0; b->kind == IR_S_BLOCK && i < b->niters && s.nsubst < 64; i++) {
                s.from[s.nsubst] = b->iters[i].var;
                s.to[s.nsubst++] = b->iters[i].binding;
            }
        }
        check_shared(&s, l->body[0]);
        if (!s.ok)
            return false;
    }
    if (kind == IR_FOR_VECTORIZED && sch_extent(l) < 0) {
        sch_error(c, "cannot vectorize loop '%s': its bounds are not constants", loop);
        return false;
    }
    if (kind == IR_FOR_PARALLEL)
        for (int k = 0; k < p.n - 1; k++)
            if ((*p.slot[k])->kind == IR_S_FOR && (*p.slot[k])->for_kind == IR_FOR_VECTORIZED) {
                sch_error(c, "cannot parallelize loop '%s': it is inside vectorized loop '%s'",
                          loop, (*p.slot[k])->var->name);
                return false;
            }
    l->for_kind = kind;
    return true;
}

/* ---------------------------------------------------------------- regroup */

/* Simplifies the expressions of s in place, knowing the ranges of vars. */
static void simplify_in(ir_module *m, ir_stmt *s, int n, const ir_var *const *vars,
                        const int64_t *lo, const int64_t *hi)
{
    if (!s)
        return;
    for (int i = 0; i < s->nargs; i++)
        s->args[i] = pass_simplify_expr_in(m, s->args[i], n, vars, lo, hi);
    if (s->value)
        s->value = pass_simplify_expr_in(m, s->value, n, vars, lo, hi);
    if (s->cond)
        s->cond = pass_simplify_expr_in(m, s->cond, n, vars, lo, hi);
    for (int i = 0; i < s->nbody; i++)
        simplify_in(m, s->body[i], n, vars, lo, hi);
    simplify_in(m, s->init, n, vars, lo, hi);
    simplify_in(m, s->orelse, n, vars, lo, hi);
}

/* Whether x is exactly o*f + i (as sch_split binds a split loop). */
static bool is_split_binding(const ir_expr *x, const ir_var *o, const ir_var *i, int64_t f)
{
    return x && x->kind == IR_ADD && x->b->kind == IR_VAR && x->b->var == i &&
           x->a->kind == IR_MUL && x->a->a->kind == IR_VAR && x->a->a->var == o &&
           ir_expr_is_int(x->a->b, f);
}

/* Splits, in every block under *slot, the iteration variables bound to
 * o*f + i (n iterations in all) into two, bound to o and to i. */
static void regroup_blocks(sch_ctx *c, ir_stmt *s, const ir_var *o, const ir_var *i, int64_t f, int64_t n)
{
    if (!s)
        return;
    ir_module *m = c->m;
    if (s->kind == IR_S_BLOCK) {
        int k = 0;
        while (k < s->niters && !(s->iters[k].extent == n && is_split_binding(s->iters[k].binding, o, i, f)))
            k++;
        if (k < s->niters) {
            ir_itervar *it = ir_alloc(m->arena, sizeof *it * (size_t)(s->niters + 1));
            const ir_itervar old = s->iters[k];
            for (int j = 0; j < s->niters; j++)
                it[j + (j > k)] = s->iters[j];
            ir_var *vo = ir_var_new(m, sch_fresh_name(m, c->f, ir_sprintf(m->arena, "v%s", o->name)),
                                    old.var->dtype);
            ir_var *vi = ir_var_new(m, sch_fresh_name(m, c->f, ir_sprintf(m->arena, "v%s", i->name)),
                                    old.var->dtype);
            it[k] = (ir_itervar){vo, old.kind, n / f, ir_varref(m, (ir_var *)o)};
            it[k + 1] = (ir_itervar){vi, old.kind, f, ir_varref(m, (ir_var *)i)};
            ir_var *from[1] = {old.var};
            ir_expr *to[1] = {ir_binary(m, IR_ADD, ir_binary(m, IR_MUL, ir_varref(m, vo), ir_int(m, f)),
                                        ir_varref(m, vi))};
            if (s->init)
                s->init = ir_stmt_subst(m, s->init, from, to, 1);
            for (int j = 0; j < s->nbody; j++)
                s->body[j] = ir_stmt_subst(m, s->body[j], from, to, 1);
            s->iters = it;
            s->niters++;
            /* floordiv(vo*f + vi, f) is vo, floormod(...) vi */
            const ir_var *vars[64];
            int64_t lo[64], hi[64];
            int nv = 0;
            for (int j = 0; j < s->niters && nv < 64; j++, nv++) {
                vars[nv] = s->iters[j].var;
                lo[nv] = 0;
                hi[nv] = s->iters[j].extent - 1;
            }
            simplify_in(m, s->init, nv, vars, lo, hi);
            for (int j = 0; j < s->nbody; j++)
                simplify_in(m, s->body[j], nv, vars, lo, hi);
        }
    }
    for (int j = 0; j < s->nbody; j++)
        regroup_blocks(c, s->body[j], o, i, f, n);
    regroup_blocks(c, s->init, o, i, f, n);
    regroup_blocks(c, s->orelse, o, i, f, n);
}

bool sch_regroup(sch_ctx *c, const char *loop, int64_t factor, const char *outer, const char *inner)
{
    sch_path p;
    if (!sch_find_loop(c, loop, &p))
        return false;
    ir_stmt *l = *p.slot[p.n - 1];
    int64_t n = sch_extent(l);
    if (n >= 0 && (factor < 1 || n % factor != 0 || l->lo->ival != 0)) {
        sch_error(c, "cannot regroup loop '%s' by %lld: the factor must divide its %lld "
                  "iterations, counted from 0", loop, (long long)factor, (long long)n);
        return false;
    }
    if (!sch_split(c, loop, factor, outer, inner))
        return false;
    ir_stmt *out = *p.slot[p.n - 1];
    ir_stmt *in = out->body[0];
    regroup_blocks(c, in->body[0], out->var, in->var, factor, n);
    sch_update_blocks(c->m, out);
    return true;
}
