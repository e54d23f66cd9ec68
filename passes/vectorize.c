/* passes/vectorize.c — the `vectorize` pass: every loop marked `vectorized`
 * with constant bounds becomes vector IR (ir/vectorize.c says how: chunks
 * stepping by the lanes, ramps, broadcasts, lanes(...) for values computed
 * lane by lane, and a scalar tail), for the target's vector width.
 *
 *   for j in 0..21 vectorized {        for j in 0..16 step 8 vectorized { B(8 lanes) }
 *     B                           ->   for j in 16..20 step 4 vectorized { B(4 lanes) }
 *   }                                  for j in 20..21 { B }
 *
 * The walk tracks the ranges of the loops and integer lets around each loop
 * and the one-dimensional local buffers in scope, so that a loop may run as
 * whole vectors past its end (ir/vectorize.h); a local buffer that such a
 * loop reads or writes past its end gets a copy of its own, larger, in its
 * alloc (the scalar module the profile reads keeps the old one).
 *
 * It runs after every other pass and every analysis (they read scalar IR:
 * blocks, unit-step loops): every -O level runs it first in its emission
 * pipeline (pass_emit_pipeline, then simplify from -O1) on the copy of the
 * module that is printed (pass_lower_for_emit).  A loop it cannot
 * vectorize keeps its kind, and the inner loops of such a loop are
 * visited; vector IR (loops stepping by the lanes) it leaves alone, so a
 * printed module read back and optimized again prints the same.
 */
#include "ir/target.h"
#include "ir/vectorize.h"
#include "passes/passes.h"

static int target_vector_bytes(void)
{
    const cg_target *t = pass_target();
    return t && t->vector_bytes ? t->vector_bytes : 16;
}

/* The walk's surroundings: the ranges of the loops and integer lets
 * around the statement, and the one-dimensional local buffers in scope. */
typedef struct walk_ctx {
    ir_module *m;
    ir_var_range ranges[64];
    int nranges;
    ir_vec_local locals[16];
    int nlocals;
} walk_ctx;

/* Every reference to buffer `from` in s (and its expressions) becomes `to`. */
static void swap_expr(ir_expr *x, const ir_buffer *from, ir_buffer *to)
{
    if (!x)
        return;
    if (x->kind == IR_LOAD && x->buf == from)
        x->buf = to;
    swap_expr(x->a, from, to);
    swap_expr(x->b, from, to);
    swap_expr(x->c, from, to);
    for (int i = 0; i < x->nargs; i++)
        swap_expr(x->args[i], from, to);
}

static void swap_stmt(ir_stmt *s, const ir_buffer *from, ir_buffer *to)
{
    if (!s)
        return;
    if (s->buf == from)
        s->buf = to;
    for (int i = 0; i < s->nreads; i++)
        if (s->reads[i] == from)
            s->reads[i] = to;
    for (int i = 0; i < s->nwrites; i++)
        if (s->writes[i] == from)
            s->writes[i] = to;
    for (int i = 0; i < s->nargs; i++)
        swap_expr(s->args[i], from, to);
    for (int i = 0; i < s->niters; i++)
        swap_expr(s->iters[i].binding, from, to);
    swap_expr(s->lo, from, to);
    swap_expr(s->hi, from, to);
    swap_expr(s->value, from, to);
    swap_expr(s->cond, from, to);
    for (int i = 0; i < s->nbody; i++)
        swap_stmt(s->body[i], from, to);
    swap_stmt(s->init, from, to);
    swap_stmt(s->orelse, from, to);
}

/* An alloc whose vector loops read or wrote past its end: a buffer of its
 * own (the module's other copies share the old one) of `need` elements. */
static void enlarge(ir_module *m, ir_stmt *alloc, int64_t need)
{
    const ir_buffer *old = alloc->buf;
    ir_buffer *b = ir_alloc(m->arena, sizeof *b);
    *b = *old;
    b->shape = ir_alloc(m->arena, sizeof *b->shape);
    b->shape[0] = need;
    swap_stmt(alloc, old, b);
}

static ir_stmt *walk(walk_ctx *c, ir_stmt *st);

/* Walks s's body with var in the range of [lo, hi] pushed. */
static void walk_in_range(walk_ctx *c, ir_stmt *st, const ir_var *var, ir_interval r)
{
    bool push = var && r.known && c->nranges < 64;
    if (push)
        c->ranges[c->nranges++] = (ir_var_range){var, r.lo, r.hi};
    for (int i = 0; i < st->nbody; i++)
        st->body[i] = walk(c, st->body[i]);
    if (push)
        c->nranges--;
}

static ir_stmt *walk(walk_ctx *c, ir_stmt *st)
{
    if (!st)
        return NULL;
    ir_interval none = ir_interval_unknown();
    switch (st->kind) {
    case IR_S_FOR:
        if (st->for_kind == IR_FOR_VECTORIZED) {
            ir_vec_env env = {c->ranges, c->nranges, c->locals, c->nlocals};
            ir_stmt *v = ir_vectorize_loop_env(c->m, st, target_vector_bytes(), &env);
            if (v)
                return v;
        }
        walk_in_range(c, st, st->var,
                      ir_interval_loop(ir_bounds(st->lo, c->ranges, c->nranges),
                                       ir_bounds(st->hi, c->ranges, c->nranges), ir_for_step(st)));
        return st;
    case IR_S_LET:
        walk_in_range(c, st, st->var,
                      ir_dtype_is_int(st->var->dtype) ? ir_bounds(st->value, c->ranges, c->nranges)
                                                      : none);
        return st;
    case IR_S_ALLOC: {
        bool local = st->buf && st->buf->ndim == 1 && c->nlocals < 16;
        if (local)
            c->locals[c->nlocals++] = (ir_vec_local){st->buf, st->buf->shape[0], st->buf->shape[0]};
        walk_in_range(c, st, NULL, none);
        if (local) {
            ir_vec_local l = c->locals[--c->nlocals];
            if (l.need > l.orig)
                enlarge(c->m, st, l.need);
        }
        return st;
    }
    default:
        for (int i = 0; i < st->nbody; i++)
            st->body[i] = walk(c, st->body[i]);
        st->init = walk(c, st->init);
        st->orelse = walk(c, st->orelse);
        return st;
    }
}

bool pass_vectorize(ir_module *m, diag *d)
{
    (void)d;
    walk_ctx c = {.m = m};
    for (int i = 0; i < m->nfuncs; i++)
        if (m->funcs[i]->body)
            m->funcs[i]->body = walk(&c, m->funcs[i]->body);
    return true;
}
