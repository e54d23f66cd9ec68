/* passes/filled.c — a local allocation whose first statement stores every
 * element before anything reads it is marked `filled`: its storage then
 * need not start zeroed (the C emitter skips the `= {0}`, the memset of a
 * thread's slab, the calloc).
 *
 *     alloc t: i32[256] stack {              alloc t: i32[256] stack filled {
 *       for i in 0..8 {                        ...
 *         for j in 0..32 {             ->
 *           t[i * 32 + j] = 0
 *       ... (reads of t)
 *
 * The IR defines an allocation's storage as zeroed, so the mark must not
 * change what any load sees.  It is set only when this holds by
 * construction: the statement that first mentions the buffer (looking
 * through the SEQs, LETs and ALLOCs that wrap it) loads nothing from it,
 * and somewhere in it, under FOR loops with constant bounds that run at
 * least once, blocks (their bodies, not their conditional inits) and LETs
 * only (no IF: a store under a condition may not run), sits a store whose
 * index, an affine form of those loops' variables, takes every value of
 * [0, size) as the loops run (the loops' strides sorted ascending form a
 * mixed radix: the smallest 1, each next the product of the counts below
 * it, the offset 0, the last product the size).  That store then runs for
 * every combination of its loops' values, so every element is stored
 * before the statement ends, and nothing read it before.  Anything else —
 * a guarded tail, an offset copy, a store that covers part, a variable
 * from outside the statement in the index — leaves the allocation zeroed.
 *
 * What it is for: the schedules' tiles and copies (cache_write's
 * accumulator tile with its init nest, cache_read's packed copy) start with
 * such a nest, and zeroing them costs a memset per tile (an int8 1x1
 * convolution, 64 -> 256 channels on 56x56: 425 -> 399 us).
 */
#include <stdlib.h>

#include "ir/arith.h"
#include "passes/passes.h"

/* A variable of the nest being examined: a loop (value NULL: a term of
 * the index, lo + step * t for t in [0, count)) or a LET or block variable
 * bound to an expression (value). */
typedef struct nest_var {
    const ir_var *var;
    const ir_expr *value;
    int64_t lo, step, count;
} nest_var;

typedef struct filled_ctx {
    ir_module *m;
    const ir_buffer *buf;
    nest_var *vars;
    int nvars, capvars;
    bool covered;
} filled_ctx;

static const nest_var *lookup(const filled_ctx *c, const ir_var *v)
{
    for (int i = c->nvars - 1; i >= 0; i--)
        if (c->vars[i].var == v)
            return &c->vars[i];
    return NULL;
}

static const ir_expr *bound_value(void *p, const ir_var *v)
{
    const nest_var *nv = lookup(p, v);
    return nv ? nv->value : NULL;
}

typedef struct stride {
    int64_t k, n;
} stride;

static int by_stride(const void *a, const void *b)
{
    int64_t x = ((const stride *)a)->k, y = ((const stride *)b)->k;
    return (x > y) - (x < y);
}

/* Whether the store s (to c->buf, under the loops in c->vars) stores every
 * element of the buffer as its loops run. */
static bool store_covers(filled_ctx *c, const ir_stmt *s)
{
    const ir_buffer *b = c->buf;
    if (s->nargs != (b->ndim ? b->ndim : 1) && !(b->ndim == 0 && s->nargs == 0))
        return false;
    ir_affine f = {0};
    ir_affine_rules rules = {.casts = true, .value = bound_value, .ctx = c};
    int64_t row = 1;   /* row-major stride of dimension d */
    for (int d = s->nargs - 1; d >= 0; d--) {
        if (!ir_affine_add(&f, s->args[d], row, &rules, 0))
            return false;
        if (__builtin_mul_overflow(row, b->shape[d], &row))
            return false;
    }
    int64_t base = f.c, size = ir_buffer_numel(b);
    stride st[IR_AFFINE_MAX];
    int n = 0;
    for (int i = 0; i < f.n; i++) {
        const nest_var *nv = f.var[i] ? lookup(c, f.var[i]) : NULL;
        int64_t k, off;
        if (f.coef[i] == 0)
            continue;
        if (!nv || nv->value)   /* a variable from outside the nest, or an atom */
            return false;
        if (__builtin_mul_overflow(f.coef[i], nv->lo, &off) || __builtin_add_overflow(base, off, &base) ||
            __builtin_mul_overflow(f.coef[i], nv->step, &k))
            return false;
        if (nv->count == 1)
            continue;
        if (k < 0) {   /* runs downwards: the same values from the other end */
            if (__builtin_mul_overflow(k, nv->count - 1, &off) || __builtin_add_overflow(base, off, &base))
                return false;
            k = -k;
        }
        st[n++] = (stride){k, nv->count};
    }
    qsort(st, (size_t)n, sizeof *st, by_stride);
    int64_t want = 1;
    for (int i = 0; i < n; i++)
        if (st[i].k != want || __builtin_mul_overflow(want, st[i].n, &want))
            return false;
    return base == 0 && want == size;
}

typedef struct loads_ctx {
    const ir_buffer *buf;
    bool found;
} loads_ctx;

static bool loads_visit(const ir_expr *e, void *p)
{
    loads_ctx *l = p;
    l->found |= e->kind == IR_LOAD && e->buf == l->buf;
    return !l->found;
}

/* Whether any expression in s (its inits and else branches too) loads b. */
static bool stmt_loads(const ir_stmt *s, const ir_buffer *b)
{
    loads_ctx l = {b, false};
    ir_stmt_walk(s, NULL, loads_visit, &l);
    return l.found;
}

static void push(filled_ctx *c, nest_var v)
{
    IR_PUSH(c->m->arena, c->vars, c->nvars, c->capvars, v);
}

/* Looks for a covering store in s, which runs unconditionally; sets
 * c->covered. */
static void find_cover(filled_ctx *c, const ir_stmt *s)
{
    if (!s || c->covered)
        return;
    int mark = c->nvars;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->nbody && !c->covered; i++)
            find_cover(c, s->body[i]);
        break;
    case IR_S_FOR: {
        int64_t step = ir_for_step(s);
        if (s->lo->kind != IR_INT || s->hi->kind != IR_INT || s->hi->ival <= s->lo->ival)
            break;   /* bounds not known here, or a loop that never runs */
        int64_t count = (s->hi->ival - s->lo->ival + step - 1) / step;
        push(c, (nest_var){s->var, NULL, s->lo->ival, step, count});
        find_cover(c, s->body[0]);
        break;
    }
    case IR_S_BLOCK:   /* the body runs every time; the init only sometimes */
        for (int i = 0; i < s->niters; i++)
            push(c, (nest_var){s->iters[i].var, s->iters[i].binding, 0, 1, 1});
        find_cover(c, s->body[0]);
        break;
    case IR_S_LET:
        push(c, (nest_var){s->var, s->value, 0, 1, 1});
        find_cover(c, s->body[0]);
        break;
    case IR_S_ALLOC:
        find_cover(c, s->body[0]);
        break;
    case IR_S_STORE:
        c->covered = s->buf == c->buf && store_covers(c, s);
        break;
    default:   /* IF (may not run), EVAL, ASSERT, PREFETCH (stores nothing) */
        break;
    }
    c->nvars = mark;
}

/* Whether s, run from its start, stores every element of c->buf before
 * loading any: through the wrappers to the first statement that mentions
 * the buffer, which must load nothing from it and hold a covering store. */
static bool fills_first(filled_ctx *c, const ir_stmt *s)
{
    switch (s ? s->kind : IR_S_EVAL) {
    case IR_S_SEQ:
        for (int i = 0; i < s->nbody; i++)
            if (ir_stmt_first_access(s->body[i], c->buf) != IR_ACCESS_NONE)
                return fills_first(c, s->body[i]);
        return false;
    case IR_S_LET:
    case IR_S_ALLOC: {
        if (s->kind == IR_S_LET && ir_expr_loads(s->value, c->buf))
            return false;
        int mark = c->nvars;
        if (s->kind == IR_S_LET)
            push(c, (nest_var){s->var, s->value, 0, 1, 1});
        bool ok = fills_first(c, s->body[0]);
        c->nvars = mark;
        return ok;
    }
    default:
        if (!s || stmt_loads(s, c->buf))
            return false;
        c->covered = false;
        find_cover(c, s);
        return c->covered;
    }
}

static bool mark_allocs(const ir_stmt *s, void *p)
{
    filled_ctx *c = p;
    if (s->kind == IR_S_ALLOC && s->buf && !s->buf->filled && s->nbody > 0) {
        c->buf = s->buf;
        c->nvars = 0;
        if (fills_first(c, s->body[0]))
            s->buf->filled = true;
    }
    return true;
}

bool pass_filled(ir_module *m, diag *d)
{
    (void)d;
    filled_ctx c = {.m = m};
    for (int i = 0; i < m->nfuncs; i++)
        ir_stmt_walk(m->funcs[i]->body, mark_allocs, NULL, &c);
    return true;
}
