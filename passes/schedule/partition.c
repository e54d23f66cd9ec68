/* passes/schedule/partition.c — partition: a loop cut at a point into two
 * loops that run one after the other, the second a copy of the first.
 *
 *   partition(j_o, 1570)      for j_o in 0..1571  becomes
 *                             for j_o in 0..1570 { body }
 *                             for j_o_tail in 1570..1571 { copy of body }
 *
 * `partition(l)` finds the point itself: the first iteration of l in which
 * some guard inside l (an `if` of affine comparisons, as split leaves) may
 * fail for some values of the loops around it, found by interval bounds;
 * when there is none, or the guards may fail from the first iteration on,
 * the loop stays as it is — so one schedule serves sizes the tiles divide
 * and sizes they do not.
 *
 * The same iterations run in the same order, so the transformation is legal
 * for every loop with constant bounds.  What it buys: `simplify` decides
 * the guards that a non-dividing split left around the blocks (`j < N`)
 * separately in each part, so the main part runs with no test in its inner
 * loops and only the tail keeps them (Halide and TVM partition loops for the
 * same reason).  Loops, lets, allocations and blocks of the copy get names
 * of their own (NAME_tail, or NAME_tail_2 ... when taken), so that later
 * steps can name either part. */
#include <string.h>

#include "passes/passes.h"
#include "passes/schedule/schedule.h"

typedef struct var_pair {
    ir_var *from, *to;
} var_pair;

typedef struct buf_pair {
    ir_buffer *from, *to;
} buf_pair;

typedef struct renames {
    sch_ctx *c;
    var_pair *vars;
    int nv, capv;
    buf_pair *bufs;
    int nb, capb;
} renames;

static bool block_named(const ir_stmt *s, void *p)
{
    const char **name = p;
    if (s->kind == IR_S_BLOCK && *name && strcmp(s->name, *name) == 0)
        *name = NULL;
    return *name != NULL;
}

/* Loops, lets, iteration variables, buffers and blocks share the names
 * given here, so that every later step means one thing. */
static bool name_taken(const ir_func *f, const char *name)
{
    if (sch_name_used(f, name))
        return true;
    ir_stmt_walk(f->body, block_named, NULL, &name);
    return name == NULL;
}

static const char *tail_name(renames *r, const char *base)
{
    const char *n = ir_sprintf(r->c->m->arena, "%s_tail", base);
    for (int k = 2; name_taken(r->c->f, n); k++)
        n = ir_sprintf(r->c->m->arena, "%s_tail_%d", base, k);
    return n;
}

static ir_var *new_var(renames *r, ir_var *v, bool rename)
{
    ir_var *nv = ir_var_new(r->c->m, rename ? tail_name(r, v->name) : v->name, v->dtype);
    var_pair vp = {v, nv};
    IR_PUSH(r->c->m->arena, r->vars, r->nv, r->capv, vp);
    return nv;
}

static ir_var *mapped_var(const renames *r, ir_var *v)
{
    for (int i = r->nv - 1; i >= 0; i--)
        if (r->vars[i].from == v)
            return r->vars[i].to;
    return v;
}

static ir_buffer *mapped_buf(const renames *r, ir_buffer *b)
{
    for (int i = r->nb - 1; i >= 0; i--)
        if (r->bufs[i].from == b)
            return r->bufs[i].to;
    return b;
}

static void rename_expr(const renames *r, ir_expr *x)
{
    if (!x)
        return;
    if (x->kind == IR_VAR)
        x->var = mapped_var(r, x->var);
    if (x->buf)
        x->buf = mapped_buf(r, x->buf);
    for (int i = 0; i < x->nargs; i++)
        rename_expr(r, x->args[i]);
    rename_expr(r, x->a);
    rename_expr(r, x->b);
    rename_expr(r, x->c);
}

/* First the definitions (so that every use below sees the new objects),
 * then the uses, in one pre-order walk of the copy. */
static void rename_stmt(renames *r, ir_stmt *s)
{
    if (!s)
        return;
    ir_module *m = r->c->m;
    switch (s->kind) {
    case IR_S_FOR:
        rename_expr(r, s->lo);
        rename_expr(r, s->hi);
        s->var = new_var(r, s->var, true);
        break;
    case IR_S_LET:
        rename_expr(r, s->value);
        s->var = new_var(r, s->var, true);
        break;
    case IR_S_ALLOC: {
        ir_buffer *nb = ir_alloc(m->arena, sizeof *nb);
        *nb = *s->buf;
        nb->name = tail_name(r, s->buf->name);
        buf_pair bp = {s->buf, nb};
        IR_PUSH(m->arena, r->bufs, r->nb, r->capb, bp);
        s->buf = nb;
        break;
    }
    case IR_S_BLOCK:
        s->name = tail_name(r, s->name);
        for (int i = 0; i < s->niters; i++) {
            rename_expr(r, s->iters[i].binding);
            s->iters[i].var = new_var(r, s->iters[i].var, false);
        }
        break;
    case IR_S_STORE:
        s->buf = mapped_buf(r, s->buf);
        for (int i = 0; i < s->nargs; i++)
            rename_expr(r, s->args[i]);
        rename_expr(r, s->value);
        break;
    case IR_S_PREFETCH:
        s->buf = mapped_buf(r, s->buf);
        for (int i = 0; i < s->nargs; i++)
            rename_expr(r, s->args[i]);
        break;
    default:
        rename_expr(r, s->value);
        break;
    }
    rename_expr(r, s->cond);
    if (s->kind == IR_S_BLOCK)
        rename_stmt(r, s->init);
    for (int i = 0; i < s->nbody; i++)
        rename_stmt(r, s->body[i]);
    rename_stmt(r, s->orelse);
}

/* ---------------------------------------------------------------- the point of the last whole tile */

typedef struct point_ctx {
    const ir_var *l;
    ir_var_range ranges[SCH_RANGES_MAX];
    int nranges;
    int64_t point;          /* the first value of l where a guard may fail */
} point_ctx;

/* A conjunct `lhs < rhs` (or <=, >, >=) of a guard: where it holds for all
 * values of the other variables, for l = v: a*v + max(rest) < 0. */
static void guard_point(point_ctx *p, const ir_expr *cond)
{
    if (cond->kind == IR_AND) {
        guard_point(p, cond->a);
        guard_point(p, cond->b);
        return;
    }
    const ir_expr *lhs, *rhs;
    int64_t strict;   /* holds iff lhs - rhs + strict <= 0 ... as lhs - rhs < 1 - strict */
    switch (cond->kind) {
    case IR_LT: lhs = cond->a; rhs = cond->b; strict = 0; break;
    case IR_LE: lhs = cond->a; rhs = cond->b; strict = 1; break;
    case IR_GT: lhs = cond->b; rhs = cond->a; strict = 0; break;
    case IR_GE: lhs = cond->b; rhs = cond->a; strict = 1; break;
    default: return;
    }
    ir_affine fa, fb;
    if (!ir_affine_of(lhs, &fa) || !ir_affine_of(rhs, &fb))
        return;
    /* d = lhs - rhs - strict; the guard holds iff d < 0 */
    int64_t a = ir_affine_coef(&fa, p->l) - ir_affine_coef(&fb, p->l);
    if (a <= 0)
        return;   /* holds for small l or not at all: no tail to cut off */
    int64_t restmax = fa.c - fb.c - strict;
    for (int i = 0; i < fa.n; i++)
        if (fa.var[i] != p->l) {
            ir_interval r = ir_bounds(fa.atom[i], p->ranges, p->nranges);
            int64_t lo = r.lo, hi = r.hi;
            if (!r.known)
                return;
            restmax += fa.coef[i] > 0 ? fa.coef[i] * hi : fa.coef[i] * lo;
        }
    for (int i = 0; i < fb.n; i++)
        if (fb.var[i] != p->l) {
            ir_interval r = ir_bounds(fb.atom[i], p->ranges, p->nranges);
            int64_t lo = r.lo, hi = r.hi;
            if (!r.known)
                return;
            restmax -= fb.coef[i] > 0 ? fb.coef[i] * lo : fb.coef[i] * hi;
        }
    /* a*v + restmax < 0  <=>  v <= floor((-restmax - 1) / a) */
    int64_t num = -restmax - 1;
    int64_t last = num >= 0 ? num / a : -((-num + a - 1) / a);
    if (last + 1 < p->point)
        p->point = last + 1;
}

static void find_guards(point_ctx *p, const ir_stmt *s)
{
    if (!s)
        return;
    int mark = p->nranges;
    if (s->kind == IR_S_FOR && sch_extent(s) > 0 && p->nranges < SCH_RANGES_MAX)
        p->ranges[p->nranges++] = (ir_var_range){s->var, s->lo->ival, s->hi->ival - 1};
    if (s->kind == IR_S_IF && s->cond)
        guard_point(p, s->cond);
    for (int i = 0; i < s->nbody; i++)
        find_guards(p, s->body[i]);
    if (s->kind == IR_S_BLOCK)
        find_guards(p, s->init);
    find_guards(p, s->orelse);
    p->nranges = mark;
}

/* The first value of loop l (path p) where a guard inside it may fail, or
 * l's upper bound when every guard holds throughout. */
static int64_t last_whole_point(const sch_path *path, const ir_stmt *l)
{
    point_ctx p = {.l = l->var, .point = l->hi->ival};
    sch_path_ranges(path, path->n - 1, p.ranges, &p.nranges);
    p.ranges[p.nranges++] = (ir_var_range){l->var, l->lo->ival, l->hi->ival - 1};
    find_guards(&p, l->body[0]);
    return p.point;
}

bool sch_partition(sch_ctx *c, const char *loop, int64_t point, bool automatic)
{
    sch_path p;
    if (!sch_find_loop(c, loop, &p))
        return false;
    ir_stmt *l = *p.slot[p.n - 1];
    if (sch_extent(l) < 0) {
        sch_error(c, "cannot partition loop '%s': its bounds are not constants", loop);
        return false;
    }
    int64_t lo = l->lo->ival, hi = l->hi->ival;
    if (automatic) {
        point = last_whole_point(&p, l);
        if (point <= lo || point >= hi)
            return true;   /* every iteration whole, or none: nothing to cut off */
    }
    if (point <= lo || point >= hi) {
        sch_error(c, "cannot partition loop '%s' at %lld: the point must lie inside %lld..%lld, "
                  "with iterations on both sides", loop, (long long)point, (long long)lo,
                  (long long)hi);
        return false;
    }
    ir_module *m = c->m;
    ir_stmt *tail = ir_stmt_copy(m, l);
    renames r = {.c = c};
    rename_stmt(&r, tail);
    tail->lo = ir_int(m, point);
    l->hi = ir_int(m, point);
    ir_stmt *parts[2] = {l, tail};
    *p.slot[p.n - 1] = ir_seq(m, parts, 2);
    sch_update_blocks(m, tail);
    return true;
}
