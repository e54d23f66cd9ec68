/* passes/hoist.c — loop-invariant LETs move out of their loops.
 *
 *     for i in 0..n {                  let s: i64 = w * 4 {
 *       let s: i64 = w * 4 {     ->      for i in 0..n {
 *         B[i] = A[i * s]                  B[i] = A[i * s]
 *
 * A LET inside a loop (not inside a nested block: blocks are the units the
 * later passes reason about) is hoisted when its value uses no variable
 * bound inside the loop and evaluating it can neither fail nor read memory:
 * no loads (a store in the loop could change them, and a loop that runs
 * zero times must not start reading), no runtime calls, no floordiv or
 * floormod by a non-constant or zero divisor, no float-to-int casts (out of
 * range they are undefined in C).  Then computing it once before the loop
 * gives the same value as computing it in every iteration, and computing it
 * when the loop runs zero times has no effect.  Variables have unique
 * identities, so widening a LET's scope cannot capture anything.
 *
 * Loops are processed innermost first, so a LET climbs out of every loop it
 * does not depend on.
 */
#include "passes/passes.h"

/* Variables bound inside the loop being processed (its own variable, and
 * every FOR, LET and block iteration variable under it) minus the LETs
 * already hoisted out, and the LETs taken out so far (outermost first). */
typedef struct hoist_ctx {
    ir_module *m;
    const ir_var **bound;
    int nbound, capbound;
    ir_stmt **lets;
    int nlets, caplets;
} hoist_ctx;

static void bind(hoist_ctx *c, const ir_var *v)
{
    IR_PUSH(c->m->arena, c->bound, c->nbound, c->capbound, v);
}

static bool collect_bound(const ir_stmt *s, void *p)
{
    hoist_ctx *c = p;
    if (s->kind == IR_S_FOR || s->kind == IR_S_LET)
        bind(c, s->var);
    for (int i = 0; i < s->niters; i++)
        bind(c, s->iters[i].var);
    return true;
}

/* Checks one node of a candidate value; ctx points to the hoist_ctx and a
 * verdict. */
typedef struct pure_ctx {
    const hoist_ctx *h;
    bool ok;
} pure_ctx;

static bool pure_visit(const ir_expr *e, void *p)
{
    pure_ctx *pc = p;
    switch (e->kind) {
    case IR_LOAD:
        pc->ok = false;
        break;
    case IR_CALL:
        if (ir_intrin_class(e->fn) != 'm')
            pc->ok = false;
        break;
    case IR_FLOORDIV: case IR_FLOORMOD:
        if (e->b->kind != IR_INT || e->b->ival == 0)
            pc->ok = false;
        break;
    case IR_CAST:
        if (ir_dtype_is_float(e->a->dtype) && !ir_dtype_is_float(e->dtype))
            pc->ok = false;
        break;
    case IR_VAR:
        for (int i = 0; i < pc->h->nbound; i++)
            if (pc->h->bound[i] == e->var)
                pc->ok = false;
        break;
    default:
        break;
    }
    return pc->ok;
}

static bool invariant(const hoist_ctx *c, const ir_expr *e)
{
    pure_ctx pc = {c, true};
    ir_expr_walk(e, pure_visit, &pc);
    return pc.ok;
}

static void unbind(hoist_ctx *c, const ir_var *v)
{
    for (int i = 0; i < c->nbound; i++)
        if (c->bound[i] == v)
            c->bound[i] = NULL;
}

/* Takes the invariant LETs out of s (pre-order, so an outer LET leaves
 * before the ones it encloses and they may then use it); returns what
 * replaces s. */
static ir_stmt *extract(hoist_ctx *c, ir_stmt *s)
{
    switch (s->kind) {
    case IR_S_LET:
        if (invariant(c, s->value)) {
            IR_PUSH(c->m->arena, c->lets, c->nlets, c->caplets, s);
            unbind(c, s->var);
            return extract(c, s->body[0]);
        }
        s->body[0] = extract(c, s->body[0]);
        return s;
    case IR_S_SEQ: case IR_S_FOR: case IR_S_ALLOC:
        for (int i = 0; i < s->nbody; i++)
            s->body[i] = extract(c, s->body[i]);
        return s;
    case IR_S_IF:
        s->body[0] = extract(c, s->body[0]);
        if (s->orelse)
            s->orelse = extract(c, s->orelse);
        return s;
    default:   /* blocks stay whole; the rest has no body */
        return s;
    }
}

static ir_stmt *hoist_stmt(hoist_ctx *c, ir_stmt *s)
{
    if (s->init)
        s->init = hoist_stmt(c, s->init);
    for (int i = 0; i < s->nbody; i++)
        s->body[i] = hoist_stmt(c, s->body[i]);
    if (s->orelse)
        s->orelse = hoist_stmt(c, s->orelse);
    if (s->kind != IR_S_FOR)
        return s;
    c->nbound = 0;
    c->nlets = 0;
    ir_stmt_walk(s, collect_bound, NULL, c);
    s->body[0] = extract(c, s->body[0]);
    ir_stmt *r = s;
    for (int i = c->nlets - 1; i >= 0; i--) {
        c->lets[i]->body[0] = r;
        r = c->lets[i];
    }
    return r;
}

bool pass_hoist(ir_module *m, diag *d)
{
    (void)d;
    for (int i = 0; i < m->nfuncs; i++) {
        hoist_ctx c = {.m = m};
        if (m->funcs[i]->body)
            m->funcs[i]->body = hoist_stmt(&c, m->funcs[i]->body);
    }
    return true;
}
