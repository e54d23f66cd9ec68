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
 * The loop that folds a local buffer of a reduction's partial results into
 * its result, at the end of the buffer's alloc, becomes a tree of vector
 * halves when the buffer allows it (ir_vec_combine_partials).
 *
 * A tile's write-back whose vectors run across the output's rows gets its
 * row loop moved inside the vector loop first ("transposed write-backs"
 * below).
 *
 * It runs after every other pass and every analysis (they read scalar IR:
 * blocks, unit-step loops): every -O level runs it first in its emission
 * pipeline (pass_emit_pipeline, then simplify from -O1) on the copy of the
 * module that is printed (pass_lower_for_emit).  A loop it cannot
 * vectorize keeps its kind, and the inner loops of such a loop are
 * visited; vector IR (loops stepping by the lanes) it leaves alone, so a
 * printed module read back and optimized again prints the same.
 */
#include "ir/arith.h"
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
    int loops_in_local;   /* loops kept as loops since the innermost local's alloc */
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
 * own (the module's other copies share the old one) of `need` elements.
 * A `filled` one (not zeroed when allocated) that lanes past a loop's end
 * only read from its old extent on (`zero_tail`: a padded copy's last row
 * read 4 elements past its end) first stores zeros there: what the memory
 * held may be subnormal floats, which cost each vector operation of those
 * lanes a microcode assist (MobileNetV3's 5x5 on 120x28x28 in the model,
 * one thread: 73 -> 96 us, depending on what an earlier layer left in
 * the heap).  Where such lanes store there too (a tile's init), they
 * write before they read. */
static void enlarge(ir_module *m, ir_stmt *alloc, int64_t need, bool zero_tail)
{
    const ir_buffer *old = alloc->buf;
    ir_buffer *b = ir_alloc(m->arena, sizeof *b);
    *b = *old;
    b->shape = ir_alloc(m->arena, sizeof *b->shape);
    b->shape[0] = need;
    swap_stmt(alloc, old, b);
    if (!zero_tail || !b->filled || alloc->nbody < 1 || old->shape[0] >= need)
        return;
    ir_var *t = ir_var_new(m, ir_sprintf(m->arena, "%s_past", b->name), IR_I64);
    ir_expr *at = ir_varref(m, t);
    ir_expr *zero = ir_dtype_is_float(b->dtype) ? ir_float(m, 0.0, b->dtype)
                                                : ir_int_typed(m, 0, b->dtype);
    ir_stmt *seq = ir_seq_new(m);
    ir_seq_append(m, seq, ir_for(m, t, ir_int(m, old->shape[0]), ir_int(m, need), IR_FOR_SERIAL,
                                 ir_store(m, b, &at, 1, zero)));
    ir_seq_append(m, seq, alloc->body[0]);
    alloc->body[0] = seq;
}

static ir_stmt *walk(walk_ctx *c, ir_stmt *st);

/* ---------------------------------------------------------------- transposed write-backs
 *
 * A register tile whose vectors run across the output's rows (a
 * convolution's tile of 8 map positions by 32 output channels, written
 * back into NCHW) reaches this pass as
 *
 *   for i in 0..8 {                          (the tile's rows)
 *     for j in 0..32 vectorized {            (its columns)
 *       Y[b + j * 3136 + i] = T[i * 32 + j]
 *     }
 *   }
 *
 * where every lane of a vector stores to another row of Y, one element at
 * a time, while the 8 rows of one column are contiguous in Y; the fused
 * layers after it (a residual add) read their operand the same way.  With
 * the loops interchanged, j outside and i inside, the vector body holds a
 * loop of 8 vector statements (ir_vec_env's inner_loops), which the C
 * backend runs as a transpose in registers: 8 vectors of 16 lanes become
 * 16 rows of 8 contiguous elements, stored (or loaded) whole
 * (codegen/emit_vector.c, emit_transposed). */

static ir_stmt *only(ir_stmt *s)
{
    while (s && s->kind == IR_S_SEQ && s->nbody == 1)
        s = s->body[0];
    return s;
}

static int64_t coef_of(const ir_affine *f, const ir_var *v)
{
    for (int i = 0; i < f->n; i++)
        if (f->var[i] == v)
            return f->coef[i];
    return 0;
}

/* What a transposable loop nest's store reads. */
typedef struct tr_ctx {
    const ir_var *i, *j;     /* the rows' loop, the vector loop */
    const ir_stmt *store;
    bool ok;                 /* the stored buffer is read only at the stored element */
    bool across;             /* some f32 access runs across rows (i contiguous, j not) */
} tr_ctx;

/* Whether a one-dimensional index has i at distance 1 and j at 2 or more
 * (an element of row j, column i). */
static bool across_rows(const ir_expr *idx, const ir_var *i, const ir_var *j)
{
    ir_affine f;
    if (!ir_affine_of(idx, &f))
        return false;
    int64_t kj = coef_of(&f, j);
    return coef_of(&f, i) == 1 && (kj >= 2 || kj <= -2);
}

static bool tr_visit(const ir_expr *x, void *p)
{
    tr_ctx *c = p;
    if (x->kind == IR_SELECT) {   /* (an arm's loads are not read transposed) */
        bool across = c->across;
        ir_expr_walk(x->a, tr_visit, c);
        ir_expr_walk(x->b, tr_visit, c);
        ir_expr_walk(x->c, tr_visit, c);
        c->across = across;
        return false;
    }
    if (x->kind != IR_LOAD)
        return true;
    if (x->buf == c->store->buf) {
        if (x->nargs != 1 || !ir_expr_equal(x->args[0], c->store->args[0]))
            c->ok = false;
    } else if (x->nargs == 1 && x->buf->dtype == IR_F32 && across_rows(x->args[0], c->i, c->j)) {
        c->across = true;
    }
    return true;
}

/* The loop nest st = for i (serial, 2 to 16 iterations) { for j
 * vectorized { one f32 store } } interchanged, when some access runs
 * across rows and the iterations are independent: the store's index takes
 * each (i, j) to an element of its own and the stored buffer is read only
 * at the stored element; NULL otherwise. */
static ir_stmt *interchanged(ir_module *m, const ir_stmt *st)
{
    if ((st->for_kind != IR_FOR_SERIAL && st->for_kind != IR_FOR_UNROLLED) || ir_for_step(st) > 1 ||
        !st->lo || !st->hi || st->lo->kind != IR_INT || st->hi->kind != IR_INT || st->nbody != 1)
        return NULL;
    int64_t ni = st->hi->ival - st->lo->ival;
    ir_stmt *in = only(st->body[0]);
    if (ni < 2 || ni > 16 || !in || in->kind != IR_S_FOR || in->for_kind != IR_FOR_VECTORIZED ||
        ir_for_step(in) > 1 || !in->lo || !in->hi || in->lo->kind != IR_INT ||
        in->hi->kind != IR_INT || in->nbody != 1)
        return NULL;
    int64_t nj = in->hi->ival - in->lo->ival;
    ir_stmt *b = only(in->body[0]);
    if (b && b->kind == IR_S_BLOCK && !b->init && b->nbody == 1) {
        ir_var *from[16];
        ir_expr *to[16];
        if (b->niters > 16)
            return NULL;
        for (int k = 0; k < b->niters; k++) {
            from[k] = b->iters[k].var;
            to[k] = b->iters[k].binding;
        }
        b = only(ir_stmt_subst(m, b->body[0], from, to, b->niters));
    }
    if (!b || b->kind != IR_S_STORE || b->nargs != 1 || b->buf->dtype != IR_F32 || !b->value)
        return NULL;
    tr_ctx c = {st->var, in->var, b, true, across_rows(b->args[0], st->var, in->var)};
    ir_expr_walk(b->value, tr_visit, &c);
    ir_expr_walk(b->args[0], tr_visit, &c);
    /* each (i, j) its own element: the smaller distance times its loop's
     * extent within the larger */
    ir_affine f;
    if (!c.ok || !c.across || !ir_affine_of(b->args[0], &f))
        return NULL;
    int64_t ki = coef_of(&f, st->var), kj = coef_of(&f, in->var);
    ki = ki < 0 ? -ki : ki;
    kj = kj < 0 ? -kj : kj;
    if (!ki || !kj || (ki <= kj ? ki * ni > kj : kj * nj > ki))
        return NULL;
    ir_stmt *inner = ir_for(m, st->var, ir_expr_copy(m, st->lo), ir_expr_copy(m, st->hi),
                            IR_FOR_SERIAL, NULL);
    inner->body[0] = ir_stmt_copy(m, b);
    ir_stmt *outer = ir_for(m, in->var, ir_expr_copy(m, in->lo), ir_expr_copy(m, in->hi),
                            IR_FOR_VECTORIZED, NULL);
    outer->body[0] = inner;
    return outer;
}

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
    case IR_S_FOR: {
        ir_stmt *x = interchanged(c->m, st);
        if (x) {
            ir_vec_env env = {c->ranges, c->nranges, c->locals, c->nlocals, true, c->loops_in_local > 0};
            ir_stmt *v = ir_vectorize_loop_env(c->m, x, target_vector_bytes(), &env);
            if (v)
                return v;
        }
        if (st->for_kind == IR_FOR_VECTORIZED) {
            ir_vec_env env = {c->ranges, c->nranges, c->locals, c->nlocals, false, c->loops_in_local > 0};
            ir_stmt *v = ir_vectorize_loop_env(c->m, st, target_vector_bytes(), &env);
            if (v)
                return v;
        }
        bool kept = st->for_kind != IR_FOR_UNROLLED;
        c->loops_in_local += kept;
        walk_in_range(c, st, st->var,
                      ir_interval_loop(ir_bounds(st->lo, c->ranges, c->nranges),
                                       ir_bounds(st->hi, c->ranges, c->nranges), ir_for_step(st)));
        c->loops_in_local -= kept;
        return st;
    }
    case IR_S_LET:
        walk_in_range(c, st, st->var,
                      ir_dtype_is_int(st->var->dtype) ? ir_bounds(st->value, c->ranges, c->nranges)
                                                      : none);
        return st;
    case IR_S_ALLOC: {
        bool local = st->buf && st->buf->ndim == 1 && c->nlocals < 16;
        int loops_outside = c->loops_in_local;
        if (local) {
            c->locals[c->nlocals++] = (ir_vec_local){st->buf, st->buf->shape[0], st->buf->shape[0], false};
            c->loops_in_local = 0;
        }
        walk_in_range(c, st, NULL, none);
        c->loops_in_local = loops_outside;
        if (local) {
            ir_vec_local l = c->locals[--c->nlocals];
            if (l.need > l.orig)
                enlarge(c->m, st, l.need, !l.stored_past);
            else
                ir_vec_combine_partials(c->m, st, target_vector_bytes());
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
