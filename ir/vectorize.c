/* ir/vectorize.c — a `vectorized` loop as vector IR.
 *
 * A vectorized loop over v in [lo, hi) with constant bounds runs in chunks
 * of W lanes (W = the target's vector bytes / element size, halved while it
 * exceeds the trip count), then one chunk of each narrower width down to 4
 * lanes that fits what is left (56 = 3 x 16 + 8), then a scalar tail:
 *
 *   for j in 0..21 vectorized {        for j in 0..16 step 8 vectorized { B(8 lanes) }
 *     B                           ->   for j in 16..20 step 4 vectorized { B(4 lanes) }
 *   }                                  for j in 20..21 { B }
 *
 * With what surrounds the loop (ir_vectorize_loop_env, ir/vectorize.h: the
 * ranges of the variables around it, the local buffers in scope) a loop
 * whose chunks would end in narrower vectors or scalars may run as whole
 * vectors past its end instead (see "whole vectors" below), and a loop
 * storing narrowed values (a requantize) may compute its tail as one
 * vector into a local, then copy only its first lanes out (a staged tail).
 *
 * In a chunk, v is ramp(v, 1, L) (as in Halide's VectorizeLoops and TVM's
 * VectorizeLoop): the body is first unfolded (blocks: iteration variables
 * become their bindings, the init an if on the reduce bindings; integer lets
 * that depend on v are inlined), then every expression that depends on v
 * becomes a vector of the loop's element type (f32, f64 or i32):
 *
 *   - one that does not is broadcast;
 *   - a load or store whose indices are affine in v with constant
 *     coefficients indexes with ramps (the C backend makes stride 1 one
 *     vector access, stride 2 two loads and a shuffle, others one element
 *     per lane);
 *   - a load whose lanes read, in one dimension, lane 0's element plus
 *     distances that are the same in every chunk (permuted_load,
 *     lane_delta: floordiv(a*v + b, k) where a times the chunks' step is
 *     a multiple of k, as nearest upsampling's x[floordiv(32 * v, 64)]; a
 *     clamp min/max that bounds prove idle over the chunks; any index of v
 *     alone in a chunk at a constant start) indexes with broadcast(lane
 *     0's) + lanes(distances), which the C backend reads as one or two
 *     vectors over the distances' span and one shuffle.  A loop of at most
 *     8 chunks whose loads gather lane by lane is built chunk by chunk at
 *     their constant starts, a longer one with its first and last chunk
 *     apart (exact_chunks: a bilinear axis' taps clamped at its edges, or
 *     at 31/63 with align_corners);
 *   - + - * / neg min max, a select whose condition does not depend on v,
 *     a widening cast of an integer (an i8, u8 or i16 load read as a vector
 *     of its own type and widened to i32; floordiv and floormod stay lane
 *     by lane), the cast of a bf16 load to f32 (a vector of bf16 bits
 *     widened) and of an i8, u8 or i16 load to f32 (widened to i32, then
 *     converted: exact),
 *     sqrt and rsqrt (an instruction of 16 to the target's bytes), and exp,
 *     log, tanh, erf, sin, cos, sigmoid on vectors of 32 or more bytes
 *     (glibc's libmvec) are vector operations;
 *   - a select whose condition is && || ! of comparisons of the loop's
 *     element type (f32 or i32, a loop of that type alone) and of
 *     conditions of no lane is a vector select on a mask (the comparisons
 *     exact as C's) of both arms as vectors, when bounds show every load
 *     of it in range in every lane (vector_mask_select);
 *   - a select whose condition holds in each lane the same way in every
 *     chunk (lane_select: floormod(w, 2) == 0, or any condition of v alone
 *     in a chunk at a constant start) is its chosen arm where every lane
 *     chooses one, else select(lanes(true, false, ...), a, b) of both arms
 *     as vectors, one shuffle in C, when bounds show that every lane may
 *     evaluate both (their loads in range);
 *   - anything else (other casts, other selects on a lane's condition,
 *     other calls, other indices that are not affine) is computed lane by lane: lanes(x0, ...)
 *     with v replaced by v + l in lane l, which is exact and keeps a
 *     select's unchosen arm unevaluated;
 *   - an if whose condition depends on v is a conjunction of comparisons of
 *     affine forms (a split's tail guard): when it holds for the first and
 *     the last lane it holds for all, and the vector body runs; else one
 *     scalar copy of the if per lane, or, where the last lane can never
 *     pass (the tail partition of a tile's columns), each half of the
 *     lanes the same way, down to vectors of 4 lanes, then scalar copies.  A loop whose whole body is such an
 *     if on v alone against constants first shrinks to where it holds
 *     (narrowed_loop).
 *
 * An inner loop of a few iterations that accumulates into one integer
 * element (an int8 contraction's reduction split by 4), or into one f32
 * element from bf16 values (a bf16 contraction's split by 2), becomes one
 * store of the sum of its iterations' terms in the loop's order
 * (reduce_group).
 *
 * With ir_vec_env's inner_loops, a serial loop of constant bounds (at most
 * 16 iterations) stays a loop inside the vector body, its body vectorized
 * (a tile's rows around its write-back; passes/vectorize.c interchanges
 * them in, and the C backend transposes them in registers).
 *
 * A loop whose body holds anything else (other inner loops, allocations, asserts,
 * calls, a store of every lane to one element, mixed element types, an if
 * with an else or inside a vector let, a store at an index that is not
 * affine, a lane-by-lane value that reads a vector let) is left as it is:
 * the C backend runs it as a plain loop.
 *
 * Its caller is the `vectorize` pass (passes/vectorize.c), which rewrites
 * a module's loops; every -O level runs it last, on the copy of the module
 * that the C emitter, --emit=tir and the C API print (pass_emit_pipeline,
 * pass_lower_for_emit), after every analysis of the scalar IR (the
 * profile's counts, the accelerator model and the schedulers read blocks
 * and unit-step loops).  The C backend runs a loop still marked
 * `vectorized` as a plain loop.
 */
#include "ir/arith.h"
#include "ir/ir.h"
#include "ir/narrow.h"
#include "ir/vectorize.h"

/* A let of the body whose value is a vector: its variable, and the vector
 * variable that replaces it. */
typedef struct vz_let {
    const ir_var *old;
    ir_var *vec;
} vz_let;

/* The loop being vectorized, and the vector lets of the chunk being built
 * (old scalar variable -> its vector variable). */
typedef struct vz {
    ir_module *m;
    const ir_var *v;        /* the loop variable */
    ir_var *chunk_v;        /* its copy in the chunk being built */
    ir_dtype dt;            /* element type of the vectors (the widest, when mixed) */
    bool mixed;             /* vectors of f32, f64 and i32 together (see fits) */
    int lanes;
    int vbytes;             /* the target's vector width */
    struct vz_let *vlets;   /* lets holding vectors */
    int nvlets, capvlets;
    bool fail;              /* the chunk cannot be built: leave the loop */
    bool inner_loops;       /* serial loops in the body stay loops (ir_vec_env) */
    const ir_var_range *ranges;   /* the variables around the loop (ir_vec_env), */
    int nranges;
    int64_t lo, hi;         /* and the loop's own bounds */
    /* The first lane of the chunks being built: v0 = at_res + at_mod * t
     * (at_mod 0: exactly at_res); at_known false: nothing known, no
     * permuted loads (permuted_load). */
    bool at_known;
    int64_t at_mod, at_res;
    int64_t at_first, at_last;   /* the first and the last chunk's v0 */
    int gathers;            /* loads computed lane by lane so far */
} vz;

static bool is_vlet(const vz *z, const ir_var *v)
{
    for (int i = 0; i < z->nvlets; i++)
        if (z->vlets[i].old == v)
            return true;
    return false;
}

typedef struct dep_ctx {
    const vz *z;
    bool dep;
} dep_ctx;

static bool dep_visit(const ir_expr *x, void *p)
{
    dep_ctx *d = p;
    if (x->kind == IR_VAR && (x->var == d->z->v || is_vlet(d->z, x->var)))
        d->dep = true;
    return !d->dep;
}

/* Whether x's value differs between lanes. */
static bool dep(const vz *z, const ir_expr *x)
{
    dep_ctx d = {z, false};
    if (x)
        ir_expr_walk(x, dep_visit, &d);
    return d.dep;
}

/* x = coef * v + (terms without v), with coef an exact constant. */
static bool affine(const vz *z, const ir_expr *x, int64_t *coef)
{
    if (!dep(z, x)) {
        *coef = 0;
        return true;
    }
    int64_t a, b;
    switch (x->kind) {
    case IR_VAR:
        *coef = 1;
        return x->var == z->v;
    case IR_ADD: case IR_SUB:
        if (!affine(z, x->a, &a) || !affine(z, x->b, &b))
            return false;
        *coef = x->kind == IR_ADD ? a + b : a - b;
        return true;
    case IR_NEG:
        if (!affine(z, x->a, &a))
            return false;
        *coef = -a;
        return true;
    case IR_MUL:
        if (x->a->kind == IR_INT && affine(z, x->b, &b)) {
            *coef = x->a->ival * b;
            return true;
        }
        if (x->b->kind == IR_INT && affine(z, x->a, &a)) {
            *coef = x->b->ival * a;
            return true;
        }
        return false;
    case IR_CAST:
        return ir_dtype_is_int(x->dtype) && x->a && ir_dtype_is_int(x->a->dtype) &&
               ir_dtype_size(x->dtype) >= ir_dtype_size(x->a->dtype) && affine(z, x->a, coef);
    default:
        return false;
    }
}

/* The coefficient of v in the row-major flat offset of buf[idx]. */
static bool access_coef(const vz *z, const ir_buffer *b, ir_expr *const *idx, int n,
                        int64_t *coef)
{
    int64_t total = 0, stride = 1;
    for (int k = n - 1; k >= 0; k--) {
        int64_t ck;
        if (!affine(z, idx[k], &ck))
            return false;
        total += ck * stride;
        stride *= b->shape[k];
    }
    *coef = total;
    return true;
}

/* ---------------------------------------------------------------- the loop's shape */

static ir_stmt *prepare(vz *z, const ir_stmt *st, bool *ok);

/* The loads of buffer b in x. */
typedef struct loads_ctx {
    const ir_buffer *b;
    bool found;
} loads_ctx;

static bool loads_visit(const ir_expr *x, void *p)
{
    loads_ctx *c = p;
    if (x->kind == IR_LOAD && x->buf == c->b)
        c->found = true;
    return !c->found;
}

/* Whether x reads a bf16 value. */
static bool bf16_visit(const ir_expr *x, void *p)
{
    if (x->kind == IR_LOAD && x->dtype == IR_BF16)
        *(bool *)p = true;
    return !*(bool *)p;
}

static bool reads_bf16(const ir_expr *x)
{
    bool found = false;
    ir_expr_walk(x, bf16_visit, &found);
    return found;
}

/* An inner reduction loop of a few iterations, for k in lo..hi { A[I] =
 * A[I] + P(k) } with I free of k and P not reading A: the one store
 * A[I] = ((A[I] + P(lo)) + ...) + P(hi-1), the loop's own order of sums,
 * for A of integers or, when P reads bf16 values, of f32.  An int8
 * contraction whose reduction is split by 4 with the 4 innermost (its
 * weights packed in groups of 4) becomes a sum of 4 products per lane, which
 * the C backend makes one dot-product instruction (codegen/emit_vector.c,
 * emit_dot4_sum); a bf16 one split by 2, a sum of 2 products (emit_bf16_pair).
 * NULL when the loop is not of that form. */
static ir_stmt *reduce_group(vz *z, const ir_stmt *st, bool *ok)
{
    ir_module *m = z->m;
    if (!st->lo || !st->hi || st->lo->kind != IR_INT || st->hi->kind != IR_INT ||
        ir_for_step(st) > 1 || st->nbody < 1 || !st->var || !ir_dtype_is_int(st->var->dtype) ||
        st->hi->ival - st->lo->ival < 1 || st->hi->ival - st->lo->ival > 16 ||
        st->for_kind == IR_FOR_PARALLEL || st->for_kind == IR_FOR_VECTORIZED)
        return NULL;
    ir_stmt *b = prepare(z, st->body[0], ok);
    while (b && b->kind == IR_S_SEQ && b->nbody == 1)
        b = b->body[0];
    /* a guard of every iteration alike (a split's tail) goes around the sum */
    ir_expr *guard = NULL;
    if (b && b->kind == IR_S_IF && !b->orelse && b->nbody == 1 && b->cond &&
        !ir_expr_uses_var(b->cond, st->var)) {
        guard = b->cond;
        b = b->body[0];
        while (b && b->kind == IR_S_SEQ && b->nbody == 1)
            b = b->body[0];
    }
    if (!*ok || !b || b->kind != IR_S_STORE || !b->value || b->value->kind != IR_ADD ||
        !(ir_dtype_is_int(b->buf->dtype) || (b->buf->dtype == IR_F32 && reads_bf16(b->value->b))) ||
        ir_dtype_is_small_int(b->buf->dtype) ||
        b->value->a->kind != IR_LOAD || b->value->a->buf != b->buf ||
        b->value->a->nargs != b->nargs)
        return NULL;
    for (int i = 0; i < b->nargs; i++)
        if (!ir_expr_equal(b->args[i], b->value->a->args[i]) || ir_expr_uses_var(b->args[i], st->var))
            return NULL;
    loads_ctx lc = {b->buf, false};
    ir_expr_walk(b->value->b, loads_visit, &lc);
    if (lc.found)
        return NULL;
    ir_expr *sum = ir_expr_copy(m, b->value->a);
    for (int64_t k = st->lo->ival; k < st->hi->ival; k++) {
        ir_var *from[1] = {st->var};
        ir_expr *to[1] = {ir_int_typed(m, k, st->var->dtype)};
        sum = ir_binary(m, IR_ADD, sum, ir_expr_subst(m, b->value->b, from, to, 1));
    }
    ir_expr **idx = ir_alloc(m->arena, sizeof *idx * (size_t)(b->nargs ? b->nargs : 1));
    for (int i = 0; i < b->nargs; i++)
        idx[i] = ir_expr_copy(m, b->args[i]);
    ir_stmt *q = ir_store(m, b->buf, idx, b->nargs, sum);
    return guard ? ir_if(m, ir_expr_copy(m, guard), q, NULL) : q;
}

/* Whether st is a loop the vector body keeps as a loop (ir_vec_env's
 * inner_loops): serial or unrolled, constant bounds, at most 16 iterations. */
static bool kept_loop(const vz *z, const ir_stmt *st)
{
    return z->inner_loops && st->lo && st->hi && st->lo->kind == IR_INT &&
           st->hi->kind == IR_INT && ir_for_step(st) <= 1 && st->nbody == 1 && st->var &&
           ir_dtype_is_int(st->var->dtype) && st->hi->ival - st->lo->ival >= 1 &&
           st->hi->ival - st->lo->ival <= 16 &&
           (st->for_kind == IR_FOR_SERIAL || st->for_kind == IR_FOR_UNROLLED);
}

/* Unfolds blocks and inlines integer lets that depend on v, so every index
 * is an expression of v and invariant names; *ok false when the body holds
 * a statement a vector loop cannot. */
static ir_stmt *prepare(vz *z, const ir_stmt *st, bool *ok)
{
    ir_module *m = z->m;
    if (!st || !*ok)
        return NULL;
    switch (st->kind) {
    case IR_S_SEQ: {
        ir_stmt *q = ir_seq_new(m);
        for (int i = 0; i < st->nbody; i++) {
            ir_stmt *b = prepare(z, st->body[i], ok);
            if (b)
                ir_seq_append(m, q, b);
        }
        return q;
    }
    case IR_S_BLOCK: {
        ir_var **from = ir_alloc(m->arena, sizeof *from * (size_t)(st->niters + 1));
        ir_expr **to = ir_alloc(m->arena, sizeof *to * (size_t)(st->niters + 1));
        ir_expr *cond = NULL;
        for (int i = 0; i < st->niters; i++) {
            from[i] = st->iters[i].var;
            to[i] = st->iters[i].binding;
            if (st->iters[i].kind == IR_ITER_REDUCE) {
                ir_expr *zero = ir_binary(m, IR_EQ, ir_expr_copy(m, st->iters[i].binding),
                                          ir_int_typed(m, 0, st->iters[i].binding->dtype));
                cond = cond ? ir_binary(m, IR_AND, cond, zero) : zero;
            }
        }
        ir_stmt *body = st->nbody ? ir_stmt_subst(m, st->body[0], from, to, st->niters) : NULL;
        body = prepare(z, body, ok);
        if (!st->init)
            return body;
        ir_stmt *init = prepare(z, ir_stmt_subst(m, st->init, from, to, st->niters), ok);
        ir_stmt *q = ir_seq_new(m);
        ir_seq_append(m, q, cond ? ir_if(m, cond, init, NULL) : init);
        if (body)
            ir_seq_append(m, q, body);
        return q;
    }
    case IR_S_LET:
        if (st->var && ir_dtype_is_int(st->var->dtype) && dep(z, st->value)) {
            ir_var *from[1] = {st->var};
            ir_expr *to[1] = {st->value};
            return prepare(z, ir_stmt_subst(m, st->body[0], from, to, 1), ok);
        } else {
            ir_stmt *q = ir_stmt_copy(m, st);
            q->body[0] = prepare(z, st->body[0], ok);
            return q;
        }
    case IR_S_IF: {
        ir_stmt *q = ir_stmt_copy(m, st);
        q->body[0] = prepare(z, st->body[0], ok);
        q->orelse = prepare(z, st->orelse, ok);
        return q;
    }
    case IR_S_STORE:
        return ir_stmt_copy(m, st);
    case IR_S_FOR: {
        ir_stmt *q = reduce_group(z, st, ok);
        if (!q && *ok && kept_loop(z, st)) {
            q = ir_stmt_copy(m, st);
            q->body[0] = prepare(z, st->body[0], ok);
            return q;
        }
        if (!q)
            *ok = false;
        return q;
    }
    default:
        /* loops, allocations, asserts, calls: a plain loop.  A prefetch too:
         * its indices would be vectors, and a prefetch names one element;
         * the prefetch pass places them outside vectorized loops. */
        *ok = false;
        return NULL;
    }
}

/* A conjunction of comparisons of expressions affine in v: true for every
 * lane of a chunk when it is true for the first and the last. */
static bool monotone(const vz *z, const ir_expr *x)
{
    int64_t ka, kb;
    switch (x->kind) {
    case IR_AND:
        return monotone(z, x->a) && monotone(z, x->b);
    case IR_LT: case IR_LE: case IR_GT: case IR_GE:
        return ir_dtype_is_int(x->a->dtype) && affine(z, x->a, &ka) && affine(z, x->b, &kb);
    default:
        return !dep(z, x);
    }
}

/* The element types of vector loops: f32, f64 and i32 (f16 and bf16
 * values are stored as bits and converted one at a time; narrower integers
 * are read as vectors of their own type and widened, see narrow_int). */
static bool vector_dtype(ir_dtype t) { return t == IR_F32 || t == IR_F64 || t == IR_I32; }

/* Whether t is an integer type narrower than the loop's integer element
 * type dt (i8, u8, i16 under i32): a vector of it is read and widened. */
static bool narrow_int(ir_dtype t, ir_dtype dt)
{
    return ir_dtype_is_int(dt) && ir_dtype_is_int(t) && t != IR_BOOL &&
           ir_dtype_size(t) < ir_dtype_size(dt);
}

/* The widest of f32, f64 and i32 that a node of x depending on v has. */
typedef struct widest_ctx {
    const vz *z;
    ir_dtype t;
    bool other;   /* a node of another of those types */
} widest_ctx;

static bool widest_visit(const ir_expr *x, void *p)
{
    widest_ctx *w = p;
    if (vector_dtype(x->dtype) && x->dtype != w->t && dep(w->z, x)) {
        w->other = true;
        if (ir_dtype_size(x->dtype) > ir_dtype_size(w->t))
            w->t = x->dtype;
    }
    return true;
}

static void widen_to(vz *z, const ir_stmt *st)
{
    if (!st)
        return;
    if (st->kind == IR_S_STORE) {
        widest_ctx w = {z, z->dt, false};
        ir_expr_walk(st->value, widest_visit, &w);
        z->dt = w.t;
    }
    for (int i = 0; i < st->nbody; i++)
        widen_to(z, st->body[i]);
    widen_to(z, st->orelse);
}

/* Whether a prepared body fits the vector form; sets its element type. */
static bool fits(vz *z, const ir_stmt *st, bool *have_dt, int vlets)
{
    if (!st)
        return true;
    switch (st->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < st->nbody; i++)
            if (!fits(z, st->body[i], have_dt, vlets))
                return false;
        return true;
    case IR_S_IF:
        if (dep(z, st->cond) && (st->orelse || vlets > 0 || !monotone(z, st->cond)))
            return false;
        return fits(z, st->body[0], have_dt, vlets) && fits(z, st->orelse, have_dt, vlets);
    case IR_S_LET:
        if (dep(z, st->value)) {
            if (!vector_dtype(st->var->dtype) || (*have_dt && st->var->dtype != z->dt))
                return false;   /* a vector let keeps one element type */
            z->dt = st->var->dtype;
            *have_dt = true;
            vlets++;
        }
        return fits(z, st->body[0], have_dt, vlets);
    case IR_S_FOR:   /* a kept loop (prepare) */
        return kept_loop(z, st) && fits(z, st->body[0], have_dt, vlets);
    case IR_S_STORE: {
        int64_t coef = 1;
        if (!access_coef(z, st->buf, st->args, st->nargs, &coef) || coef == 0)
            return false;   /* an index that is not affine, or every lane at one element */
        ir_dtype t = st->buf->dtype;
        bool narrowing = !vector_dtype(t) && ir_narrowing_store(st);
        if (!vector_dtype(t) && !narrowing)
            return false;
        if (narrowing)
            t = st->value->a->dtype;
        widest_ctx w = {z, t, false};
        ir_expr_walk(st->value, widest_visit, &w);
        /* values of several types: each node a vector of its own type,
         * as many lanes as the widest fills (widen_to, vector_node) */
        if (narrowing || w.other || (*have_dt && t != z->dt))
            z->mixed = true;
        if (!*have_dt || ir_dtype_size(t) > ir_dtype_size(z->dt))
            z->dt = t;
        *have_dt = true;
        return true;
    }
    default:
        return false;
    }
}

/* ---------------------------------------------------------------- vector expressions */

/* glibc's vector math has these (sigmoid as 1 / (1 + exp(-x))). */
static bool has_vmath(ir_intrin fn)
{
    switch (fn) {
    case IR_FN_EXP: case IR_FN_SIGMOID: case IR_FN_LOG: case IR_FN_TANH:
    case IR_FN_ERF: case IR_FN_SIN: case IR_FN_COS:
        return true;
    default:
        return false;
    }
}

/* A conversion of a mixed loop (z->mixed) as a vector operation: between
 * i32, f32 and f64 (as C's: exact, or rounded to nearest), except float to
 * integer (which can fail; a narrowing store's is its own case), and a
 * small integer or bf16 to f32 or f64 (exact). */
static bool mixed_cast(ir_dtype from, ir_dtype to)
{
    if (vector_dtype(from) && vector_dtype(to))
        return !(ir_dtype_is_float(from) && !ir_dtype_is_float(to));
    if (to == IR_I32)
        return ir_dtype_is_small_int(from);
    return (to == IR_F32 || to == IR_F64) && (from == IR_BF16 || ir_dtype_is_small_int(from));
}

static bool every_lane_safe(const vz *z, const ir_expr *x);

/* Whether c is a condition a vector mask computes lane by lane: && || !
 * of comparisons of values of the loop's element type and of conditions
 * that do not depend on v (one for every lane). */
static bool mask_cond(const vz *z, const ir_expr *c)
{
    if (!dep(z, c))
        return c->dtype == IR_BOOL;
    switch (c->kind) {
    case IR_AND: case IR_OR:
        return mask_cond(z, c->a) && mask_cond(z, c->b);
    case IR_NOT:
        return mask_cond(z, c->a);
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
        return c->a->dtype == z->dt && c->b->dtype == z->dt;
    default:
        return false;
    }
}

/* A select on a lane's condition as one vector select (a blend of both
 * arms under the mask of its condition): in loops of f32 or i32 alone (the
 * mask's lanes are as wide as the values'), when the condition is a
 * mask_cond and every lane may evaluate all of it, both arms and every
 * operand of && and || (every_lane_safe: the loads in range), which C's
 * select and && || would not evaluate, and no float-to-integer cast in it
 * (checked: the kernel fails on a value out of range, which a lane that
 * did not choose that arm may hold).  Comparisons and && || ! are exact
 * lane by lane as in C (a NaN compares unequal to everything).  A masked
 * maximum (TopK's selections, ONNX's importer: the largest element below
 * the last choice) was built lane by lane: 16 scalar selects per vector. */
static bool checked_cast_visit(const ir_expr *x, void *p)
{
    if (x->kind == IR_CAST && x->a && ir_dtype_is_float(x->a->dtype) && !ir_dtype_is_float(x->dtype))
        *(bool *)p = true;
    return true;
}

static bool vector_mask_select(const vz *z, const ir_expr *x)
{
    bool checked = false;
    ir_expr_walk(x, checked_cast_visit, &checked);
    return (z->dt == IR_F32 || z->dt == IR_I32) && !z->mixed && x->dtype == z->dt && !checked &&
           mask_cond(z, x->c) && every_lane_safe(z, x);
}

/* Whether the node x (its operands aside) is a vector operation. */
static bool vector_node(const vz *z, const ir_expr *x)
{
    int64_t coef;
    if (x->kind == IR_LOAD && (narrow_int(x->dtype, z->dt) ||   /* under a widening cast */
                               ((z->dt == IR_F32 || z->mixed) && (x->dtype == IR_BF16 ||
                                                    ir_dtype_is_small_int(x->dtype)))))
        return access_coef(z, x->buf, x->args, x->nargs, &coef);
    if (x->dtype != z->dt && !(z->mixed && vector_dtype(x->dtype)))
        return false;
    int bytes = z->lanes * ir_dtype_size(x->dtype);
    switch (x->kind) {
    case IR_VAR:
        return is_vlet(z, x->var);
    case IR_LOAD:
        return access_coef(z, x->buf, x->args, x->nargs, &coef);
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_MIN: case IR_MAX: case IR_NEG:
        return true;   /* integers wrap, as the interpreter's do; / is of floats */
    case IR_CAST:      /* widening an integer, bf16 or a small integer to f32: exact */
        /* a vector of bf16 holds the values' bits, which only a load
         * reads: a bf16 value computed (a max of two, in float) is cast
         * lane by lane (its lanes went into the bits' vector as numbers) */
        if (x->a && x->a->dtype == IR_BF16 && x->a->kind != IR_LOAD)
            return false;
        if (x->a && z->mixed && mixed_cast(x->a->dtype, x->dtype))
            return true;
        return x->a && (narrow_int(x->a->dtype, z->dt) || x->a->dtype == z->dt ||
                        (z->dt == IR_F32 && (x->a->dtype == IR_BF16 ||
                                             ir_dtype_is_small_int(x->a->dtype))));
    case IR_SELECT:   /* one condition for every lane, or a mask of comparisons */
        return !dep(z, x->c) || vector_mask_select(z, x);
    case IR_CALL:
        if (x->nargs == 1 && (x->fn == IR_FN_SQRT || x->fn == IR_FN_RSQRT || x->fn == IR_FN_RINT))
            return bytes >= 16 && bytes <= z->vbytes;
        return x->nargs == 1 && has_vmath(x->fn) && bytes >= 32 && bytes <= z->vbytes;
    default:
        return false;
    }
}

/* v + l, in v's dtype: the loop variable in lane l. */
static ir_expr *lane_of_v(vz *z, int l)
{
    return ir_binary(z->m, IR_ADD, ir_varref(z->m, z->chunk_v),
                     ir_int_typed(z->m, l, z->chunk_v->dtype));
}

/* The scalar x of the chunk's loop variable (a copy). */
static ir_expr *scalar(vz *z, const ir_expr *x)
{
    ir_var *from[1] = {(ir_var *)z->v};
    ir_expr *to[1] = {ir_varref(z->m, z->chunk_v)};
    return ir_expr_subst(z->m, x, from, to, 1);
}

/* x in lane l: v replaced by v + l. */
static ir_expr *lane_expr(vz *z, const ir_expr *x, int l)
{
    ir_var *from[1] = {(ir_var *)z->v};
    ir_expr *to[1] = {lane_of_v(z, l)};
    return ir_expr_subst(z->m, x, from, to, 1);
}

/* Indices of an access in vector form: ramps where they depend on v. */
static ir_expr **vector_indices(vz *z, ir_expr *const *idx, int n)
{
    ir_expr **out = ir_alloc(z->m->arena, sizeof *out * (size_t)(n ? n : 1));
    for (int k = 0; k < n; k++) {
        int64_t coef = 0;
        affine(z, idx[k], &coef);
        out[k] = scalar(z, idx[k]);
        if (coef != 0)
            out[k] = ir_ramp(z->m, out[k], ir_int_typed(z->m, coef, idx[k]->dtype), z->lanes);
    }
    return out;
}

static ir_expr *vexpr(vz *z, const ir_expr *x);

static bool count_loads(const ir_expr *x, void *p)
{
    if (x->kind == IR_LOAD)
        ++*(int *)p;
    return true;
}

static ir_expr *lane_by_lane(vz *z, const ir_expr *x)
{
    ir_expr_walk(x, count_loads, &z->gathers);
    for (int i = 0; i < z->nvlets; i++)
        if (ir_expr_uses_var(x, z->vlets[i].old)) {
            z->fail = true;   /* a vector let's lane has no scalar name */
            return ir_broadcast(z->m, ir_float(z->m, 0, z->dt), z->lanes);
        }
    ir_expr **xs = ir_alloc(z->m->arena, sizeof *xs * (size_t)z->lanes);
    for (int l = 0; l < z->lanes; l++)
        xs[l] = lane_expr(z, x, l);
    return ir_lanes(z->m, xs, z->lanes);
}

/* ---------------------------------------------------------------- permuted loads */

/* The integer x with v = `at` (x's only variable), exactly; false when x
 * holds anything else or a step overflows. */
static bool eval_at(const vz *z, const ir_expr *x, int64_t at, int64_t *out)
{
    int64_t a = 0, b = 0;
    if (!x || !ir_dtype_is_int(x->dtype) || ir_expr_lanes(x) > 1)
        return false;
    switch (x->kind) {
    case IR_INT:
        *out = x->ival;
        return true;
    case IR_VAR:
        *out = at;
        return x->var == z->v;
    case IR_CAST:   /* widening, or to the same type: the value itself */
        return x->a && ir_dtype_is_int(x->a->dtype) &&
               ir_dtype_size(x->dtype) >= ir_dtype_size(x->a->dtype) && eval_at(z, x->a, at, out);
    case IR_NEG:
        return eval_at(z, x->a, at, &a) && !__builtin_sub_overflow((int64_t)0, a, out);
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_MIN: case IR_MAX:
    case IR_FLOORDIV: case IR_FLOORMOD:
        if (!eval_at(z, x->a, at, &a) || !eval_at(z, x->b, at, &b))
            return false;
        switch (x->kind) {
        case IR_ADD: return !__builtin_add_overflow(a, b, out);
        case IR_SUB: return !__builtin_sub_overflow(a, b, out);
        case IR_MUL: return !__builtin_mul_overflow(a, b, out);
        case IR_MIN: *out = a < b ? a : b; return true;
        case IR_MAX: *out = a > b ? a : b; return true;
        default:
            if (b == 0 || (a == INT64_MIN && b == -1))
                return false;
            *out = x->kind == IR_FLOORDIV ? ir_floordiv64(a, b) : ir_floormod64(a, b);
            return true;
        }
    default:
        return false;
    }
}

/* For floordiv(n, k) or floormod(n, k) (x) with k a positive constant and
 * n = av*v + c + terms of other variables that are multiples of k, where
 * av times the chunks' step is a multiple of k too: av, k, and the
 * numerators of lane 0 and lane l less those terms and less av times
 * v0 - at_res (*n0, *nl), which shift every lane's quotient by one whole
 * number in a chunk.  False when x is not of that form. */
static bool periodic_numerator(const vz *z, const ir_expr *x, int l, int64_t *av, int64_t *k,
                               int64_t *n0, int64_t *nl)
{
    ir_affine f;
    int64_t step, b;
    if ((x->kind != IR_FLOORDIV && x->kind != IR_FLOORMOD) || x->b->kind != IR_INT ||
        x->b->ival <= 0 || !ir_affine_of(x->a, &f))
        return false;
    *k = x->b->ival;
    *av = 0;
    for (int i = 0; i < f.n; i++) {
        if (f.var[i] == z->v)
            *av = f.coef[i];
        else if (f.coef[i] % *k != 0)
            return false;   /* a remainder that varies with another variable */
    }
    return !__builtin_mul_overflow(*av, z->at_mod, &step) && step % *k == 0 &&
           !__builtin_mul_overflow(*av, z->at_res, n0) && !__builtin_add_overflow(*n0, f.c, n0) &&
           !__builtin_mul_overflow(*av, (int64_t)l, &b) && !__builtin_add_overflow(*n0, b, nl);
}

/* Lane l's value of the integer index x minus lane 0's, the same in every
 * chunk the loop runs (whose first lane v0 z->at_* describe): x affine in
 * v, floordiv and floormod by a positive constant of a*v + r, where the
 * terms of r other than its constant are multiples of the divisor and a
 * times the chunks' step is one too (then a chunk's step moves the
 * quotient by a whole number, and lane l's quotient differs from lane 0's
 * by floordiv(a*(v0 + l) + c, k) - floordiv(a*v0 + c, k), the same for
 * every chunk), and, in a chunk whose v0 is one constant, any expression
 * of v alone (min and max: an index clamped to an axis' edge).  False when
 * the difference may change from chunk to chunk. */
static bool lane_delta(const vz *z, const ir_expr *x, int l, int64_t *d)
{
    int64_t a, b, c;
    if (!dep(z, x)) {
        *d = 0;
        return true;
    }
    if (!z->at_known || !ir_dtype_is_int(x->dtype))
        return false;
    if (z->at_mod == 0 && eval_at(z, x, z->at_res + l, &a) && eval_at(z, x, z->at_res, &b))
        return !__builtin_sub_overflow(a, b, d);
    switch (x->kind) {
    case IR_VAR:
        *d = l;
        return x->var == z->v;
    case IR_ADD: case IR_SUB:
        if (!lane_delta(z, x->a, l, &a) || !lane_delta(z, x->b, l, &b))
            return false;
        return x->kind == IR_ADD ? !__builtin_add_overflow(a, b, d) : !__builtin_sub_overflow(a, b, d);
    case IR_NEG:
        return lane_delta(z, x->a, l, &a) && !__builtin_sub_overflow((int64_t)0, a, d);
    case IR_MUL:
        if (x->a->kind == IR_INT && lane_delta(z, x->b, l, &b))
            return !__builtin_mul_overflow(x->a->ival, b, d);
        if (x->b->kind == IR_INT && lane_delta(z, x->a, l, &a))
            return !__builtin_mul_overflow(x->b->ival, a, d);
        return false;
    case IR_CAST:
        return x->a && ir_dtype_is_int(x->a->dtype) &&
               ir_dtype_size(x->dtype) >= ir_dtype_size(x->a->dtype) && lane_delta(z, x->a, l, d);
    case IR_MIN: case IR_MAX: {
        /* a clamp that never acts, or always, on the chunks' lanes */
        const ir_expr *e = dep(z, x->a) ? x->a : x->b, *bound = e == x->a ? x->b : x->a;
        if (dep(z, bound))
            return false;
        ir_var_range r[65];
        int n = z->nranges < 64 ? z->nranges : 64;
        for (int i = 0; i < n; i++)
            r[i + 1] = z->ranges[i];
        r[0] = (ir_var_range){z->v, z->at_first, z->at_last + z->lanes - 1};
        ir_interval g = ir_bounds(ir_binary(z->m, IR_SUB, ir_expr_copy(z->m, e),
                                            ir_expr_copy(z->m, bound)), r, n + 1);
        if (!g.known)
            return false;
        if (x->kind == IR_MIN ? g.hi <= 0 : g.lo >= 0)
            return lane_delta(z, e, l, d);   /* the clamp never acts */
        if (x->kind == IR_MIN ? g.lo >= 0 : g.hi <= 0) {
            *d = 0;   /* always the bound */
            return true;
        }
        return false;
    }
    case IR_FLOORDIV: case IR_FLOORMOD: {
        int64_t av, k;
        if (!periodic_numerator(z, x, l, &av, &k, &a, &b))
            return false;
        c = ir_floordiv64(b, k) - ir_floordiv64(a, k);   /* the quotients' difference */
        if (x->kind == IR_FLOORDIV) {
            *d = c;
            return true;
        }
        *d = av * l - k * c;   /* floormod: the numerators' difference less k quotients */
        return true;
    }
    default:
        return false;
    }
}

/* A load whose indices are not affine in v, but whose lanes read the
 * elements at lane 0's plus constant distances in one dimension, the same
 * in every chunk (lane_delta): nearest-neighbour upsampling's x[floordiv(v,
 * 2)] reads each element twice (distances 0 0 1 1 2 2 ...), and a chunk of
 * a bilinear axis at a known v0 its clamped taps.  Its index in that
 * dimension becomes broadcast(lane 0's) + lanes(distances), which the C
 * backend reads as one or two vectors over the span of the distances and
 * one shuffle (codegen/emit_vector.c); all distances 0 is one element
 * broadcast, distances s*l a ramp.  NULL when the load is not of that form
 * or its lanes span more than two vectors. */
static ir_expr *permuted_load(vz *z, const ir_expr *x)
{
    ir_module *m = z->m;
    int L = z->lanes, k = -1;
    if (x->kind != IR_LOAD || L < 2 || L > IR_MAX_LANES)
        return NULL;
    for (int i = 0; i < x->nargs; i++)
        if (dep(z, x->args[i])) {
            if (k >= 0)
                return NULL;   /* one dimension varies */
            k = i;
        }
    if (k < 0)
        return NULL;
    int64_t off[IR_MAX_LANES], lo = 0, hi = 0;
    bool ramp = true;
    for (int l = 0; l < L; l++) {
        if (!lane_delta(z, x->args[k], l, &off[l]))
            return NULL;
        lo = off[l] < lo ? off[l] : lo;
        hi = off[l] > hi ? off[l] : hi;
        ramp = ramp && off[l] == l * off[1 < L ? 1 : 0];
    }
    /* a span of 2 or 3 elements stays lane by lane: GCC builds the shuffle
     * of vectors of 2 through the stack (an upsampling by 8 from 28 to 224
     * columns, its taps' first pass: 70 -> 135 us) */
    if (hi - lo + 1 > 2 * (int64_t)L || (hi > lo && hi - lo + 1 < 4 && !ramp))
        return NULL;
    ir_expr **idx = ir_alloc(m->arena, sizeof *idx * (size_t)x->nargs);
    for (int i = 0; i < x->nargs; i++)
        idx[i] = scalar(z, x->args[i]);
    ir_dtype it = idx[k]->dtype;
    if (hi == lo)   /* every lane one element */
        return ir_broadcast(m, ir_load(m, x->buf, idx, x->nargs), L);
    if (ramp) {
        idx[k] = ir_ramp(m, idx[k], ir_int_typed(m, off[1], it), L);
        return ir_load(m, x->buf, idx, x->nargs);
    }
    ir_expr **d = ir_alloc(m->arena, sizeof *d * (size_t)L);
    for (int l = 0; l < L; l++)
        d[l] = ir_int_typed(m, off[l], it);
    idx[k] = ir_binary(m, IR_ADD, ir_broadcast(m, idx[k], L), ir_lanes(m, d, L));
    return ir_load(m, x->buf, idx, x->nargs);
}

/* The value of the integer x in lane l, the same in every chunk: a
 * constant, floormod(n, k) of periodic_numerator's form, or in a chunk at
 * a constant start any expression of v alone. */
static bool lane_value(const vz *z, const ir_expr *x, int l, int64_t *val)
{
    int64_t av, k, n0, nl;
    if (x->kind == IR_INT) {
        *val = x->ival;
        return true;
    }
    if (!dep(z, x) || !z->at_known || !ir_dtype_is_int(x->dtype))
        return false;
    if (z->at_mod == 0 && eval_at(z, x, z->at_res + l, val))
        return true;
    if (x->kind != IR_FLOORMOD || !periodic_numerator(z, x, l, &av, &k, &n0, &nl))
        return false;
    *val = ir_floormod64(nl, k);
    return true;
}

/* Whether the condition c holds in lane l, the same in every chunk
 * (comparisons of lane_value's, joined by && || !). */
static bool lane_cond(const vz *z, const ir_expr *c, int l, bool *t)
{
    int64_t a, b;
    bool p, q;
    switch (c->kind) {
    case IR_AND: case IR_OR:
        if (!lane_cond(z, c->a, l, &p) || !lane_cond(z, c->b, l, &q))
            return false;
        *t = c->kind == IR_AND ? p && q : p || q;
        return true;
    case IR_NOT:
        if (!lane_cond(z, c->a, l, &p))
            return false;
        *t = !p;
        return true;
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
        if (!ir_dtype_is_int(c->a->dtype) || !lane_value(z, c->a, l, &a) ||
            !lane_value(z, c->b, l, &b))
            return false;
        *t = c->kind == IR_EQ ? a == b : c->kind == IR_NE ? a != b : c->kind == IR_LT ? a < b
           : c->kind == IR_LE ? a <= b : c->kind == IR_GT ? a > b : a >= b;
        return true;
    default:
        return false;
    }
}

/* Whether evaluating x in every lane of every chunk is harmless: each load
 * in range (bounds of its indices over the chunks' lanes and the
 * variables around), no integer division by a variable. */
typedef struct safe_ctx {
    const vz *z;
    ir_var_range r[65];
    int n;
    bool ok;
} safe_ctx;

static bool safe_visit(const ir_expr *x, void *p)
{
    safe_ctx *c = p;
    if ((x->kind == IR_FLOORDIV || x->kind == IR_FLOORMOD) && ir_dtype_is_int(x->dtype) &&
        (x->b->kind != IR_INT || x->b->ival == 0))
        c->ok = false;
    if (x->kind == IR_LOAD)
        for (int k = 0; k < x->nargs && c->ok; k++) {
            ir_interval b = ir_bounds(x->args[k], c->r, c->n);
            c->ok = b.known && b.lo >= 0 && b.hi < x->buf->shape[k];
        }
    return c->ok;
}

static bool every_lane_safe(const vz *z, const ir_expr *x)
{
    safe_ctx c = {.z = z, .ok = z->at_known};
    c.n = z->nranges < 64 ? z->nranges : 64;
    for (int i = 0; i < c.n; i++)
        c.r[i + 1] = z->ranges[i];
    c.r[0] = (ir_var_range){z->v, z->at_first, z->at_last + z->lanes - 1};
    c.n++;
    if (c.ok)
        ir_expr_walk(x, safe_visit, &c);
    return c.ok;
}

/* A select whose condition depends on the lane, but the same way in every
 * chunk (lane_cond: floormod(w, 2) == 0, an interleave of two phases): the
 * chosen arm alone when every lane chooses it, else both arms as vectors
 * and select(lanes(conditions), a, b), which the C backend makes one
 * shuffle of the two, when every lane may evaluate both (every_lane_safe).
 * NULL when not of that form. */
static ir_expr *lane_select(vz *z, const ir_expr *x)
{
    ir_module *m = z->m;
    bool t[IR_MAX_LANES], all = true, none = true;
    if (z->lanes > IR_MAX_LANES)
        return NULL;
    for (int l = 0; l < z->lanes; l++) {
        if (!lane_cond(z, x->c, l, &t[l]))
            return NULL;
        all = all && t[l];
        none = none && !t[l];
    }
    if (all || none)
        return vexpr(z, all ? x->a : x->b);
    if (!every_lane_safe(z, x->a) || !every_lane_safe(z, x->b))
        return NULL;
    ir_expr **c = ir_alloc(m->arena, sizeof *c * (size_t)z->lanes);
    for (int l = 0; l < z->lanes; l++)
        c[l] = ir_int_typed(m, t[l], IR_BOOL);
    return ir_select(m, ir_lanes(m, c, z->lanes), vexpr(z, x->a), vexpr(z, x->b));
}

/* A mask_cond as a vector of z->lanes booleans: comparisons of vectors,
 * && || ! of masks, a condition of no lane a broadcast. */
static ir_expr *vmask(vz *z, const ir_expr *c)
{
    ir_module *m = z->m;
    if (!dep(z, c))
        return ir_broadcast(m, scalar(z, c), z->lanes);
    if (c->kind == IR_NOT)
        return ir_unary(m, IR_NOT, vmask(z, c->a));
    if (c->kind == IR_AND || c->kind == IR_OR)
        return ir_binary(m, c->kind, vmask(z, c->a), vmask(z, c->b));
    return ir_binary(m, c->kind, vexpr(z, c->a), vexpr(z, c->b));
}

/* x as a vector of z->lanes values. */
static ir_expr *vexpr(vz *z, const ir_expr *x)
{
    ir_module *m = z->m;
    if (!dep(z, x))
        return ir_broadcast(m, scalar(z, x), z->lanes);
    if (x->kind == IR_LOAD && (x->dtype == z->dt || (z->mixed && vector_dtype(x->dtype))) &&
        !vector_node(z, x)) {
        ir_expr *p = permuted_load(z, x);
        if (p)
            return p;
    }
    if (x->kind == IR_SELECT && dep(z, x->c) &&
        (x->dtype == z->dt || (z->mixed && vector_dtype(x->dtype)))) {
        ir_expr *p = lane_select(z, x);
        if (p)
            return p;
    }
    if (!vector_node(z, x))
        return lane_by_lane(z, x);
    switch (x->kind) {
    case IR_VAR:
        for (int i = z->nvlets - 1; i >= 0; i--)
            if (z->vlets[i].old == x->var)
                return ir_varref(m, z->vlets[i].vec);
        break;
    case IR_LOAD:
        return ir_load(m, x->buf, vector_indices(z, x->args, x->nargs), x->nargs);
    case IR_NEG:
        return ir_unary(m, IR_NEG, vexpr(z, x->a));
    case IR_SELECT:
        return ir_select(m, dep(z, x->c) ? vmask(z, x->c) : scalar(z, x->c), vexpr(z, x->a),
                         vexpr(z, x->b));
    case IR_CAST:
        return ir_cast(m, vexpr(z, x->a), x->dtype);
    case IR_CALL: {
        ir_expr *arg = vexpr(z, x->args[0]);
        return ir_call(m, x->fn, &arg, 1);
    }
    default:
        return ir_binary(m, x->kind, vexpr(z, x->a), vexpr(z, x->b));
    }
    z->fail = true;
    return ir_broadcast(m, ir_float(m, 0, z->dt), z->lanes);
}

/* ---------------------------------------------------------------- scalar min and max */

/* An operand that min/max below may copy: a load, a variable or a cast of
 * one (copies the C compiler merges). */
static bool plain_operand(const ir_expr *x)
{
    while (x->kind == IR_CAST && x->a)
        x = x->a;
    return x->kind == IR_VAR || x->kind == IR_LOAD;
}

/* The float min and max of two loads in the scalar copies of a loop's
 * body (its tail after the vectors, and the lanes of an if on a lane's
 * condition: a max pooling's y = max(y, x[..]) in its tile, a softmax's
 * row maximum split by 16), as comparisons equal to C99's
 * definition: fmax(a, b) is a != a ? b : (b > a ? b : a) (a NaN operand
 * yields the other, of equal values -0 and +0 the first), fmin alike with
 * <.  The C compiler makes the inner select one maxss and the test of a
 * NaN a branch that is always predicted, where fmaxf is a library call:
 * the 3 scalar outputs of a row of 55 (3 x 16 + 4 lanes, then scalars)
 * took as long as the 52 in vectors (a 3x3 pooling of stride 2, 64
 * channels from 111x111, one thread: 222 to 130 us; a select on
 * a >= b || b != b branched on the data, 290 us on ReLU outputs in
 * SqueezeNet).  A min or max with a constant keeps its node: the C
 * backend compares with the constant already. */
static void exact_minmax(ir_module *m, ir_expr **xp)
{
    ir_expr *x = *xp;
    if (!x)
        return;
    exact_minmax(m, &x->a);
    exact_minmax(m, &x->b);
    exact_minmax(m, &x->c);
    for (int i = 0; i < x->nargs; i++)
        exact_minmax(m, &x->args[i]);
    if ((x->kind != IR_MAX && x->kind != IR_MIN) || !ir_dtype_is_float(x->dtype) ||
        ir_expr_lanes(x) != 1 || !plain_operand(x->a) || !plain_operand(x->b))
        return;
    ir_expr *a = x->a, *b = x->b;
    ir_expr *cmp = ir_binary(m, x->kind == IR_MAX ? IR_GT : IR_LT, ir_expr_copy(m, b), ir_expr_copy(m, a));
    ir_expr *nan = ir_binary(m, IR_NE, ir_expr_copy(m, a), ir_expr_copy(m, a));
    *xp = ir_select(m, nan, ir_expr_copy(m, b), ir_select(m, cmp, ir_expr_copy(m, b), a));
}

static void exact_minmax_stmt(ir_module *m, ir_stmt *st)
{
    if (!st)
        return;
    if (st->kind == IR_S_STORE) {
        exact_minmax(m, &st->value);
        return;
    }
    if (st->kind == IR_S_LET)
        exact_minmax(m, &st->value);
    else if (st->kind == IR_S_IF)
        exact_minmax(m, &st->cond);
    else if (st->kind == IR_S_BLOCK)
        exact_minmax_stmt(m, st->init);
    for (int i = 0; i < st->nbody; i++)
        exact_minmax_stmt(m, st->body[i]);
    exact_minmax_stmt(m, st->orelse);
}

/* ---------------------------------------------------------------- vector statements */

static ir_stmt *vstmt(vz *z, const ir_stmt *st);

/* Scalar copies of an if on a lane's condition, one per lane of [a, a + w). */
static ir_stmt *lane_if_scalars(vz *z, const ir_stmt *st, int a, int w)
{
    ir_stmt *each = ir_seq_new(z->m);
    for (int l = a; l < a + w; l++) {
        ir_var *from[1] = {(ir_var *)z->v};
        ir_expr *to[1] = {lane_of_v(z, l)};
        ir_seq_append(z->m, each, ir_stmt_subst(z->m, st, from, to, 1));
    }
    exact_minmax_stmt(z->m, each);
    return each;
}

/* An if on a lane's condition over the lanes [a, a + w): a vector of w
 * lanes when the segment's first and last lanes pass, else each half the
 * same way, down to vectors of 4 lanes, then one scalar copy of the if per
 * lane.  A tile's tail guard (columns 992..1007 of 1000, its f_v unrolled
 * in C) then runs its 8 valid columns as one vector of 8 where it ran 8
 * scalar multiply-adds per row and step: SqueezeNet's 1x1 convolution to
 * 1000 classes spent a quarter of its time in those 8 columns.  Narrower
 * vectors only where the body holds no vector let of the chunk's width. */
static ir_stmt *lane_if_lanes(vz *z, const ir_stmt *st, int a, int w)
{
    ir_module *m = z->m;
    ir_expr *all = ir_binary(m, IR_AND, lane_expr(z, st->cond, a), lane_expr(z, st->cond, a + w - 1));
    ir_stmt *body;
    if (w == z->lanes && a == 0) {
        body = vstmt(z, st->body[0]);
    } else {
        vz sub = *z;
        sub.lanes = w;
        sub.fail = false;
        ir_var *from[1] = {(ir_var *)z->v};
        ir_expr *to[1] = {ir_binary(m, IR_ADD, ir_varref(m, (ir_var *)z->v),
                                    ir_int_typed(m, a, z->v->dtype))};
        body = vstmt(&sub, ir_stmt_subst(m, st->body[0], from, to, 1));
        if (sub.fail)
            return lane_if_scalars(z, st, a, w);
    }
    bool halves = w / 2 >= 4 && z->nvlets == 0 && !z->mixed;
    ir_stmt *rest = ir_seq_new(m);
    if (halves) {
        ir_seq_append(m, rest, lane_if_lanes(z, st, a, w / 2));
        ir_seq_append(m, rest, lane_if_lanes(z, st, a + w / 2, w / 2));
    } else {
        rest = lane_if_scalars(z, st, a, w);
    }
    return ir_if(m, all, body, rest);
}

/* Whether cond (comparisons joined by &&) is false wherever the variables
 * around the loop and the chunk's variable range; false: not proven. */
static bool never(const vz *z, const ir_expr *cond, const ir_var_range *r, int n)
{
    if (cond->kind == IR_AND)
        return never(z, cond->a, r, n) || never(z, cond->b, r, n);
    if (cond->kind != IR_LT && cond->kind != IR_LE && cond->kind != IR_GT && cond->kind != IR_GE)
        return false;
    ir_interval d = ir_bounds(ir_binary(z->m, IR_SUB, ir_expr_copy(z->m, cond->a),
                                        ir_expr_copy(z->m, cond->b)),
                              r, n);
    return d.known && (cond->kind == IR_LT   ? d.lo >= 0
                       : cond->kind == IR_LE ? d.lo > 0
                       : cond->kind == IR_GT ? d.hi <= 0
                                             : d.hi < 0);
}

/* The lanes of a tail that is never whole (its last lane never passes: a
 * tile's columns past a partition's end) run as narrower vectors; where
 * the whole vector may pass (a guard in the main loop, true but for its
 * last iteration), the narrower ones would only add code to the tile's
 * loop (GPT-2's 768 -> 50257 tile with them: 76 -> 105 ms). */
static ir_stmt *lane_if(vz *z, const ir_stmt *st)
{
    ir_var_range r[65];
    int n = z->nranges < 64 ? z->nranges : 64;
    for (int i = 0; i < n; i++)
        r[i + 1] = z->ranges[i];
    r[0] = (ir_var_range){z->chunk_v, z->lo, z->hi - 1};
    if (!never(z, lane_expr(z, st->cond, z->lanes - 1), r, n + 1)) {
        ir_expr *all = ir_binary(z->m, IR_AND, lane_expr(z, st->cond, 0),
                                 lane_expr(z, st->cond, z->lanes - 1));
        return ir_if(z->m, all, vstmt(z, st->body[0]), lane_if_scalars(z, st, 0, z->lanes));
    }
    return lane_if_lanes(z, st, 0, z->lanes);
}

static ir_stmt *vstore(vz *z, const ir_stmt *st)
{
    ir_expr *value = ir_narrowing_store(st) && dep(z, st->value)
                         ? ir_cast(z->m, vexpr(z, st->value->a), st->buf->dtype)
                         : vexpr(z, st->value);
    return ir_store(z->m, st->buf, vector_indices(z, st->args, st->nargs), st->nargs, value);
}

static ir_stmt *vlet(vz *z, const ir_stmt *st)
{
    ir_module *m = z->m;
    if (!dep(z, st->value)) {
        ir_stmt *q = ir_let(m, st->var, scalar(z, st->value), NULL);
        q->body[0] = vstmt(z, st->body[0]);
        return q;
    }
    ir_expr *value = vexpr(z, st->value);
    ir_var *t = ir_var_new(m, st->var->name, st->var->dtype);
    t->lanes = z->lanes;
    IR_PUSH(m->arena, z->vlets, z->nvlets, z->capvlets, ((vz_let){st->var, t}));
    ir_stmt *body = vstmt(z, st->body[0]);
    z->nvlets--;
    return ir_let(m, t, value, body);
}

static ir_stmt *vstmt(vz *z, const ir_stmt *st)
{
    if (!st)
        return NULL;
    switch (st->kind) {
    case IR_S_SEQ: {
        ir_stmt *q = ir_seq_new(z->m);
        for (int i = 0; i < st->nbody; i++)
            ir_seq_append(z->m, q, vstmt(z, st->body[i]));
        return q;
    }
    case IR_S_IF:
        if (dep(z, st->cond))
            return lane_if(z, st);
        return ir_if(z->m, scalar(z, st->cond), vstmt(z, st->body[0]), vstmt(z, st->orelse));
    case IR_S_LET:
        return vlet(z, st);
    case IR_S_STORE:
        return vstore(z, st);
    case IR_S_FOR: {   /* a kept loop: a fresh variable in each chunk */
        ir_var *from[1] = {st->var};
        ir_var *nv = ir_var_new(z->m, st->var->name, st->var->dtype);
        ir_expr *to[1] = {ir_varref(z->m, nv)};
        ir_stmt *q = ir_for(z->m, nv, ir_expr_copy(z->m, st->lo), ir_expr_copy(z->m, st->hi),
                            st->for_kind, NULL);
        q->body[0] = vstmt(z, ir_stmt_subst(z->m, st->body[0], from, to, 1));
        return q;
    }
    default:
        z->fail = true;
        return ir_seq_new(z->m);
    }
}

/* ---------------------------------------------------------------- loops */

/* A loop over a fresh variable named as v's (the chunks and the tail are
 * siblings, so the names never meet). */
static ir_stmt *chunk_loop(vz *z, int64_t lo, int64_t hi, int step, ir_for_kind kind,
                           ir_var **var)
{
    *var = ir_var_new(z->m, z->v->name, z->v->dtype);
    ir_stmt *f = ir_for(z->m, *var, ir_int_typed(z->m, lo, z->v->dtype),
                        ir_int_typed(z->m, hi, z->v->dtype), kind, NULL);
    f->step = step > 1 ? step : 0;
    return f;
}

/* The chunks about to be built start at v0 = first + mod * t up to last
 * (mod 0: one chunk, at first). */
static void chunks_at(vz *z, int64_t first, int64_t last, int64_t mod)
{
    z->at_known = true;
    z->at_mod = mod;
    z->at_res = mod ? ir_floormod64(first, mod) : first;
    z->at_first = first;
    z->at_last = mod ? last : first;
}

/* The buffers a body stores, and whether it reads one of them. */
typedef struct stored_ctx {
    const ir_buffer *buf[8];
    int n;
    bool over, read, vmath;
} stored_ctx;

static bool stored_stmt(const ir_stmt *st, void *p)
{
    stored_ctx *c = p;
    if (st->kind == IR_S_STORE) {
        int i = 0;
        while (i < c->n && c->buf[i] != st->buf)
            i++;
        if (i == c->n && c->n < 8)
            c->buf[c->n++] = st->buf;
        else if (i == c->n)
            c->over = true;
    }
    return true;
}

static bool stored_read(const ir_expr *x, void *p)
{
    stored_ctx *c = p;
    if (x->kind == IR_LOAD)
        for (int i = 0; i < c->n; i++)
            c->read |= x->buf == c->buf[i];
    if (x->kind == IR_CALL && has_vmath(x->fn))
        c->vmath = true;
    return !c->read;
}

/* ---------------------------------------------------------------- whole vectors */

/* A loop of n iterations whose chunks would end in narrower vectors or
 * scalars (n = 14: 8 + 4 lanes and 2 scalars) may run as whole vectors
 * over a few iterations more (one of 16 lanes) when the extra lanes are
 * harmless: every access that depends on v is a one-dimensional affine
 * index, in range over every lane for a buffer of the function's caller,
 * and for a local buffer a read anywhere below its enlarged extent or a
 * store, by the extra lanes, only past its extent as allocated (the
 * elements nothing else touches); no if depends on v, and no integer
 * division by a variable (a trap in an extra lane).  A depthwise
 * convolution's row of 14 outputs accumulating in a local tile, its
 * activation in the tile's write-back, then only the store to the output
 * in chunks (the padded input copy a row longer, read past a row's end).
 * A read of a caller's buffer past its end on some iterations of the loops
 * around only puts the whole vectors under a test (guard_read). */
typedef struct ext_ctx {
    const vz *z;
    ir_vec_env *env;
    ir_var_range r[64];     /* v first, then the variables around the loop */
    int nr;
    int64_t lo, hi, top;    /* the loop's lo, hi; the last lane's end */
    int64_t need[16];       /* per env->locals entry */
    bool stored[16];        /* per env->locals entry: stored from its orig on */
    bool vmath;             /* the body calls exp, sigmoid, ... */
    bool last_guarded;      /* more vectors than guarded_vectors: only the last under the test */
    bool ok;
    ir_expr *cond;          /* when the extra lanes read in range (NULL: always) */
    const ir_buffer *guarded[8];   /* the caller's buffers cond tests */
    int nguarded;
    int64_t width;          /* the lanes of the whole vectors */
} ext_ctx;

static ir_interval ext_bounds(ext_ctx *c, const ir_expr *x, int64_t vlo, int64_t vhi)
{
    c->r[0] = (ir_var_range){c->z->v, vlo, vhi};
    return ir_bounds(x, c->r, c->nr);
}

/* A read of a buffer of the caller whose extra lanes pass its end only
 * for some iterations of the loops around (a pooling's row of 7 outputs
 * read as 8 lanes, past the input's end on the last row of the last
 * channel): the whole vectors run under the test that the last lane's
 * index is in range, else the whole vectors with that buffer's indices
 * clamped (clamped_body; one compare per row).  The index must grow with v and the
 * loop's own lanes stay in range, and the loop be at most guarded_vectors,
 * run apart (whole_vectors): a 3x3 max pooling of stride 2 on 128x55x55
 * (rows of 27) 131 -> 66 us at one thread.  Three vectors (rows of 35) made
 * Inception-v3's 3x3 average poolings of stride 1, whose taps are loops,
 * slower (73 -> 95 us; GCC -O3 alone on the kernel: 74 -> 102; with the
 * taps unrolled too, 73 -> 92), while its max pooling of stride 2 with
 * unrolled taps gained (290 -> 195): bench/results/pool_s16.txt,
 * pool_s17.txt. */
/* The most whole vectors a row may run under guard_read's test: two, or
 * four when the row's local tile is reached by unrolled loops only (a max
 * pooling's taps), so that the C compiler keeps it in registers. */
static int64_t guarded_vectors(const ext_ctx *c)
{
    return c->env->nlocals > 0 && !c->env->loop_in_local ? 4 : 2;
}

/* A longer row whose body calls a vector math function (softmax's exp on
 * rows of 197: 12 vectors and one from 192 on) runs its whole vectors but
 * the last as one loop, in range on every row, and only the last under
 * the test (last_guarded): the alternative is an overlapping last vector
 * (overlap_tail), which stores e[181..196] over what the loop stored and
 * leaves the reduction after it reading e[192..195] and e[196] from those
 * stores; the row's exp and the sum after it 0.93 of their time alone
 * (bench/results/vecred_s27.txt). */
static bool guard_read(ext_ctx *c, const ir_buffer *b, const ir_expr *idx)
{
    ir_affine f;
    ir_interval own = ext_bounds(c, idx, c->lo, c->hi - 1);
    bool longer = c->top - c->lo > guarded_vectors(c) * c->width;
    if ((longer && !c->vmath) || !own.known || own.hi >= b->shape[0] || !ir_affine_of(idx, &f) ||
        ir_affine_coef(&f, c->z->v) <= 0 || c->nguarded == (int)(sizeof c->guarded / sizeof *c->guarded))
        return false;
    ir_module *m = c->z->m;
    ir_var *from[1] = {(ir_var *)c->z->v};
    ir_expr *to[1] = {ir_int_typed(m, c->top - 1, c->z->v->dtype)};
    ir_expr *last = ir_expr_subst(m, idx, from, to, 1);
    ir_interval at = ext_bounds(c, last, c->lo, c->lo);
    if (!at.known || at.lo >= b->shape[0])
        return false;   /* never in range: the plain chunks alone */
    ir_expr *t = ir_binary(m, IR_LT, last, ir_int_typed(m, b->shape[0], last->dtype));
    c->cond = c->cond ? ir_binary(m, IR_AND, c->cond, t) : t;
    c->guarded[c->nguarded++] = b;
    c->last_guarded = longer;
    return true;
}

/* The whole vectors for when c->cond fails (the last row of the last
 * channel): each load of a tested buffer at its index clamped to the
 * buffer's last element, lane by lane.  Only the extra lanes' indices
 * change (the loop's own lanes read in range, guard_read), and their
 * values go only where the whole vectors' may.  Plain chunks there
 * instead (8 + 4 lanes and a scalar for a row of 13) would access the
 * local tile the row accumulates in at three widths besides the whole
 * vectors' one, and the C compiler then keeps the tile in memory on
 * every path: a store and a reload per tap of a pooling (a 3x3 max of
 * stride 2 on 256x27x27, one thread: 97 us). */
static bool clamp_guarded(const ir_expr *x, void *p)
{
    const ext_ctx *c = p;
    if (x->kind != IR_LOAD || x->nargs != 1)
        return true;
    for (int i = 0; i < c->nguarded; i++)
        if (c->guarded[i] == x->buf) {
            ir_expr *ld = (ir_expr *)x, *idx = ld->args[0];
            ld->args[0] = ir_binary(c->z->m, IR_MIN, idx,
                                    ir_int_typed(c->z->m, x->buf->shape[0] - 1, idx->dtype));
            return false;
        }
    return true;
}

static ir_stmt *clamped_body(const ext_ctx *c, const ir_stmt *body)
{
    ir_stmt *copy = ir_stmt_copy(c->z->m, body);
    ir_stmt_walk(copy, NULL, clamp_guarded, (void *)c);
    return copy;
}

/* Whether the extra lanes of an access of a local tile whose rows are
 * padded to whole vectors (ir_buffer.row_pitch) stay in the padding of
 * the row its last real lane is in: the index is v + c + terms that are
 * whole rows, and the columns of v in [hi, top) lie in [row_used,
 * row_pitch) of one row; every lane in the tile.  A depthwise
 * convolution's 4 rows of 28 at a pitch of 32 then run as 2 whole vectors
 * each, their activation too. */
static bool in_row_padding(ext_ctx *c, const ir_buffer *b, const ir_expr *idx)
{
    int64_t P = b->row_pitch;
    ir_affine f;
    if (P <= 0 || b->row_used <= 0 || b->row_used >= P || !ir_affine_of(idx, &f) ||
        ir_affine_coef(&f, c->z->v) != 1)
        return false;
    for (int i = 0; i < f.n; i++)
        if (f.var[i] != c->z->v && ir_floormod64(f.coef[i], P) != 0)
            return false;
    /* (the bounds of the affine form: a tile's index vp - p_o * 4, its
     * block's binding p_o * 4 + p_i substituted, has cancelled) */
    ir_interval all = ext_bounds(c, ir_affine_expr(c->z->m, &f), c->lo, c->top - 1);
    if (!all.known || all.lo < 0 || all.hi >= b->shape[0])
        return false;
    int64_t first = c->hi + f.c, last = c->top - 1 + f.c;
    return ir_floordiv64(first, P) == ir_floordiv64(last, P) &&
           ir_floormod64(first, P) >= b->row_used;
}

static void ext_access(ext_ctx *c, const ir_buffer *b, ir_expr *const *idx, int n, bool store)
{
    bool d = false;
    for (int k = 0; k < n; k++)
        d = d || dep(c->z, idx[k]);
    if (!d)
        return;
    if (n != 1 || b->ndim != 1) {
        c->ok = false;
        return;
    }
    ir_interval all = ext_bounds(c, idx[0], c->lo, c->top - 1);
    ir_interval extra = ext_bounds(c, idx[0], c->hi, c->top - 1);
    int g = -1;
    for (int i = c->env->nlocals - 1; i >= 0 && g < 0; i--)
        if (c->env->locals[i].buf == b)
            g = i;
    if (g < 0 && !store && all.known && extra.known && all.lo >= 0 && all.hi >= b->shape[0] &&
        guard_read(c, b, idx[0]))
        return;
    if (g >= 0 && in_row_padding(c, b, idx[0]))
        return;
    if (!all.known || !extra.known || all.lo < 0 || (g < 0 && (store || all.hi >= b->shape[0])) ||
        (g >= 0 && store && extra.lo < c->env->locals[g].orig)) {
        c->ok = false;
        return;
    }
    if (g >= 0 && all.hi + 1 > c->need[g])
        c->need[g] = all.hi + 1;
    if (g >= 0 && store && all.hi >= c->env->locals[g].orig)
        c->stored[g] = true;
}

static bool ext_expr(const ir_expr *x, void *p)
{
    ext_ctx *c = p;
    if (!c->ok)
        return false;
    if (x->kind == IR_LOAD)
        ext_access(c, x->buf, x->args, x->nargs, false);
    else if ((x->kind == IR_DIV || x->kind == IR_FLOORDIV || x->kind == IR_FLOORMOD) &&
             ir_dtype_is_int(x->dtype) && x->b->kind != IR_INT)
        c->ok = false;
    else if (x->kind == IR_CALL && has_vmath(x->fn))
        c->vmath = true;
    return c->ok;
}

static void ext_stmt(ext_ctx *c, const ir_stmt *st)
{
    if (!st || !c->ok)
        return;
    switch (st->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < st->nbody; i++)
            ext_stmt(c, st->body[i]);
        return;
    case IR_S_IF:
        if (dep(c->z, st->cond))
            c->ok = false;
        ir_expr_walk(st->cond, ext_expr, c);
        ext_stmt(c, st->body[0]);
        ext_stmt(c, st->orelse);
        return;
    case IR_S_LET:
        ir_expr_walk(st->value, ext_expr, c);
        ext_stmt(c, st->body[0]);
        return;
    case IR_S_STORE:
        for (int k = 0; k < st->nargs; k++)
            ir_expr_walk(st->args[k], ext_expr, c);
        ir_expr_walk(st->value, ext_expr, c);
        ext_access(c, st->buf, st->args, st->nargs, true);
        return;
    default:
        c->ok = false;
    }
}

/* Vector steps of the plain chunks of n iterations from `lanes` down (a
 * scalar iteration counting `scalar`). */
static int64_t plain_steps(int64_t n, int lanes, int64_t scalar)
{
    int64_t steps = 0;
    for (int l = lanes; l >= 2 && (l == lanes || l >= 4); l /= 2) {
        if (n < l)
            continue;
        int64_t count = l == lanes ? n / l * l : l;
        steps += count / l;
        n -= count;
    }
    return steps + n * scalar;
}

/* The lanes of whole vectors over [lo, *top) for the prepared body, when
 * that is legal and fewer steps than the plain chunks of `lanes`; 0 else.
 * Records the locals' new extents in c->need. */
static int ext_lanes(ext_ctx *c, const ir_stmt *body, int64_t lo, int64_t hi, int lanes,
                     int64_t *top)
{
    ir_vec_env *env = c->env;
    int full = c->z->vbytes / ir_dtype_size(c->z->dt), L = full;
    int64_t n = hi - lo;
    /* (i32 lanes too: an int8 depthwise convolution's sums; extra lanes
     * wrap, -fwrapv, and no integer division by a variable is allowed) */
    if ((!ir_dtype_is_float(c->z->dt) && c->z->dt != IR_I32) || env->nranges + 1 > 64 ||
        env->nlocals > 16 || n % lanes == 0)
        return 0;
    while (L / 2 >= n && L > 4)
        L /= 2;
    int64_t N = (n + L - 1) / L * L;
    c->nr = 1;
    for (int i = 0; i < env->nranges; i++)
        c->r[c->nr++] = env->ranges[i];
    c->lo = lo;
    c->hi = hi;
    c->top = lo + N;
    for (int i = 0; i < env->nlocals; i++) {
        c->need[i] = env->locals[i].need;
        c->stored[i] = false;
    }
    c->ok = true;
    c->cond = NULL;
    c->nguarded = 0;
    c->width = L;
    c->last_guarded = false;
    stored_ctx vm = {.n = 0};
    ir_stmt_walk(body, NULL, stored_read, &vm);
    c->vmath = vm.vmath;
    ext_stmt(c, body);
    if (!c->ok || N / L >= plain_steps(n, lanes, c->vmath ? 3 : 1))
        return 0;
    *top = lo + N;
    return L;
}

/* The whole vectors over [lo, top): one loop, or under guard_read's test
 * one loop of one vector each (two for a row of 27 outputs), so the C
 * compiler sees every access of the local tile the row accumulates in at
 * a constant offset and keeps it in registers in both arms of the test;
 * a loop of two vectors in each arm left it in memory (a 3x3 max pooling
 * of stride 2 on 128x55x55, one thread: bench/results/pool_s16.txt). */
static ir_stmt *whole_vectors(vz *z, const ir_stmt *body, int64_t lo, int64_t top, bool apart)
{
    int64_t step = apart ? z->lanes : top - lo;
    ir_stmt *out = ir_seq_new(z->m);
    for (int64_t at = lo; at < top; at += step) {
        chunks_at(z, at, top - z->lanes, step == z->lanes ? 0 : z->lanes);
        ir_stmt *f = chunk_loop(z, at, at + step, z->lanes, IR_FOR_VECTORIZED, &z->chunk_v);
        f->body[0] = vstmt(z, body);
        if (!apart || step == top - lo)
            return f;
        ir_seq_append(z->m, out, f);
    }
    return out;
}

/* ---------------------------------------------------------------- an overlapping last vector */

/* Whether the last chunk of a loop of n > L iterations may run as one
 * vector of L lanes ending at the loop's end, over lanes the whole
 * vectors before it computed already: the body stores only what it
 * computes from buffers it does not store, so a lane run twice stores
 * the same value twice (softmax's exp on rows of 197: 12 vectors and one
 * from 181 on, instead of 4 lanes computed one by one and a scalar, each
 * a call of expf: 430 to 364 us on 12x197x197, one thread).  Taken
 * when the remainder takes more than one step and the body calls a
 * vector math function (exp, sigmoid, ...), which narrow chunks and
 * scalars compute lane by lane; other bodies keep their chunks.  (A row
 * stored into a local buffer that may grow runs whole vectors instead:
 * guard_read's last_guarded.) */
static bool overlap_tail(const ir_stmt *body, int64_t n, int lanes)
{
    if (n <= lanes || n % lanes == 0 || plain_steps(n % lanes, lanes / 2, 1) <= 1)
        return false;
    stored_ctx c = {.n = 0};
    ir_stmt_walk(body, stored_stmt, NULL, &c);
    if (c.over || c.n == 0)
        return false;
    ir_stmt_walk(body, NULL, stored_read, &c);
    return !c.read && c.vmath;
}

/* The most chunks of a loop that exact_chunks builds one by one. */
#define EXACT_CHUNKS 8

/* The count / z->lanes chunks from `at`, each a loop of its own at its
 * constant v0, where the chunks' loop computed `gathers` loads lane by lane
 * in each chunk: an index that differs between a chunk's lanes by amounts
 * that change from chunk to chunk (a bilinear axis' taps, clamped at its
 * edges, or of a scale that is not a whole number, 31/63 with
 * align_corners) then reads as permuted loads (permuted_load) in each.
 * Above EXACT_CHUNKS chunks, only the first and the last chunk apart, the
 * chunks between as one loop, whose clamps lane_delta may find idle (an
 * upsampling by 8 to 224 columns: 14 chunks).  NULL when the chunks would
 * not gather fewer loads in all (each part fewer, when peeled). */
static ir_stmt *exact_chunks(vz *z, const ir_stmt *body, int64_t at, int64_t count, int gathers)
{
    ir_stmt *out = ir_seq_new(z->m);
    int64_t L = z->lanes, left = 0;   /* gathers the chunks save: -left */
    bool peel = count / L > EXACT_CHUNKS;
    for (int64_t c = at; c < at + count;) {
        /* more chunks: the first and the last each at its v0, those between
         * as one loop (where an edge's clamp does not act: lane_delta) */
        int64_t n = peel && c > at && c + L < at + count ? at + count - L - c : L;
        chunks_at(z, c, c + n - L, n == L ? 0 : L);
        int before = z->gathers;
        ir_stmt *f = chunk_loop(z, c, c + n, (int)L, IR_FOR_VECTORIZED, &z->chunk_v);
        c += n;
        f->body[0] = vstmt(z, body);
        if (z->fail || (peel && z->gathers - before >= gathers)) {
            z->fail = false;   /* the chunks' loop stands */
            return NULL;
        }
        left += (int64_t)(z->gathers - before) - gathers;
        ir_seq_append(z->m, out, f);
    }
    if (left >= 0) {
        z->fail = false;
        return NULL;   /* no fewer gathers in all */
    }
    return out;
}

/* The plain chunks of loop st over [lo, hi) from `lanes` down, then the
 * scalar tail; NULL when the body does not vectorize. */
static ir_stmt *plain_chunks(vz *z, const ir_stmt *st, ir_stmt *body, int64_t lo, int64_t hi, int lanes)
{
    ir_module *m = z->m;
    ir_stmt *out = ir_seq_new(m);
    int64_t at = lo, left = hi - lo;
    if (overlap_tail(body, left, lanes)) {
        z->lanes = lanes;
        chunks_at(z, lo, lo + left / lanes * lanes - lanes, lanes);
        ir_stmt *f = chunk_loop(z, lo, lo + left / lanes * lanes, lanes, IR_FOR_VECTORIZED, &z->chunk_v);
        f->body[0] = vstmt(z, body);
        chunks_at(z, hi - lanes, hi - lanes, 0);
        ir_stmt *t = chunk_loop(z, hi - lanes, hi, lanes, IR_FOR_VECTORIZED, &z->chunk_v);
        t->body[0] = vstmt(z, body);
        if (z->fail)
            return NULL;
        ir_seq_append(m, out, f);
        ir_seq_append(m, out, t);
        return out;
    }
    for (int l = lanes; l >= 2 && (l == lanes || l >= 4); l /= 2) {
        if (left < l)
            continue;
        int64_t count = l == lanes ? left / l * l : l;
        z->lanes = l;
        chunks_at(z, at, at + count - l, count == l ? 0 : l);
        int gathers = z->gathers;
        ir_stmt *f = chunk_loop(z, at, at + count, l, IR_FOR_VECTORIZED, &z->chunk_v);
        f->body[0] = vstmt(z, body);
        if (z->fail)
            return NULL;
        if (z->gathers > gathers && count > l) {
            ir_stmt *each = exact_chunks(z, body, at, count, z->gathers - gathers);
            f = each ? each : f;
        }
        ir_seq_append(m, out, f);
        at += count;
        left -= count;
    }
    if (left > 0) {
        ir_var *tv;
        ir_stmt *f = chunk_loop(z, at, hi, 1, IR_FOR_SERIAL, &tv);
        ir_var *from[1] = {st->var};
        ir_expr *to[1] = {ir_varref(m, tv)};
        f->body[0] = ir_stmt_subst(m, st->body[0], from, to, 1);
        exact_minmax_stmt(m, f->body[0]);
        ir_seq_append(m, out, f);
    }
    return out;
}

/* ---------------------------------------------------------------- a staged tail */

/* Whether the extra lanes of a value computed over [t, top) instead of
 * [t, hi) read only in range: the rules of the whole vectors above for
 * its loads (a local buffer below the extent its writers already need,
 * without enlarging it), no test of a caller's buffer, no integer
 * division by a variable. */
static bool tail_reads_ok(const vz *z, ir_vec_env *env, const ir_expr *value, int64_t t,
                          int64_t hi, int64_t top)
{
    if (env->nranges + 1 > 64 || env->nlocals > 16)
        return false;
    ext_ctx c = {.z = z, .env = env, .nr = 1, .lo = t, .hi = hi, .top = top, .ok = true,
                 .width = top - t};
    for (int i = 0; i < env->nranges; i++)
        c.r[c.nr++] = env->ranges[i];
    for (int i = 0; i < env->nlocals; i++)
        c.need[i] = env->locals[i].need;
    ir_expr_walk(value, ext_expr, &c);
    for (int i = 0; c.ok && i < env->nlocals; i++)
        c.ok = c.need[i] <= env->locals[i].need;
    return c.ok && !c.cond;
}

/* The last iterations of a loop whose one statement narrows a value to
 * small integers (a requantize: ir/narrow.h, a conversion no lane's value
 * can make fail) and stores it to a buffer that is not a local one, the
 * value computed from what the whole vectors above may read past the
 * loop's end: the value as one vector of Lw lanes
 * (the least power of two from 4 that holds them) into a local of Lw
 * elements, then only the copy of its first lanes in chunks.  A
 * requantizing write-back of a row of 14 (an int8 depthwise convolution's
 * tile, its 16 lanes summed whole) computed its clamps, division and
 * rounding 4 times (8 + 4 lanes, 2 scalars, each scalar with branches);
 * now once, then 8 + 4 + 2 bytes copied.  The whole vectors of the
 * loop's width before the tail store directly.  NULL when the tail would
 * take one step anyway, or the value's extra lanes may read out of
 * range. */
static ir_stmt *staged_tail(vz *z, ir_vec_env *env, const ir_stmt *body, int64_t lo, int64_t hi,
                            int lanes)
{
    ir_module *m = z->m;
    const ir_stmt *s = body;
    if (s && s->kind == IR_S_SEQ && s->nbody == 1)
        s = s->body[0];
    if (!env || !s || s->kind != IR_S_STORE || s->nargs != 1 || s->buf->ndim != 1 ||
        !ir_narrowing_store(s) || !dep(z, s->value))
        return NULL;
    for (int i = 0; i < env->nlocals; i++)
        if (env->locals[i].buf == s->buf)
            return NULL;   /* (the whole vectors' rules) */
    int width = z->vbytes / ir_dtype_size(z->dt);
    int64_t t = lo + (hi - lo) / width * width, r = hi - t;
    int64_t Lw = 4;
    while (Lw < r)
        Lw *= 2;
    if (r == 0 || Lw > width || plain_steps(r, lanes, 1) < 2 ||
        !tail_reads_ok(z, env, s->value, t, hi, t + Lw))
        return NULL;
    for (int k = 0; k < s->nargs; k++) {   /* the copy's index: no division by a variable */
        ext_ctx c = {.z = z, .env = env, .ok = true};
        ir_expr_walk(s->args[k], ext_expr, &c);
        if (!c.ok)
            return NULL;
    }
    ir_stmt *out = ir_seq_new(m);
    if (t > lo) {
        z->lanes = width;
        chunks_at(z, lo, t - width, width);
        ir_stmt *f = chunk_loop(z, lo, t, width, IR_FOR_VECTORIZED, &z->chunk_v);
        f->body[0] = vstmt(z, body);
        ir_seq_append(m, out, f);
    }
    ir_buffer *stage = ir_buffer_new(m, ir_sprintf(m->arena, "%s_tail", s->buf->name), s->buf->dtype,
                                     1, &Lw, IR_BUF_LOCAL);
    stage->scope = IR_SCOPE_STACK;
    stage->filled = true;   /* the vector stores all of it first */
    ir_var *v = (ir_var *)z->v;
    ir_expr *at = t == 0 ? ir_varref(m, v)
                         : ir_binary(m, IR_SUB, ir_varref(m, v), ir_int_typed(m, t, v->dtype));
    ir_stmt *compute = ir_store(m, stage, &at, 1, ir_expr_copy(m, s->value));
    z->lanes = (int)Lw;
    chunks_at(z, t, t, 0);
    ir_stmt *f = chunk_loop(z, t, t + Lw, (int)Lw, IR_FOR_VECTORIZED, &z->chunk_v);
    f->body[0] = vstmt(z, compute);
    /* the copy, a loop of its own over [t, hi) vectorized by its bytes */
    ir_expr *from_at = ir_expr_copy(m, at);
    ir_expr *from = ir_load(m, stage, &from_at, 1);
    ir_expr **idx = ir_alloc(m->arena, sizeof *idx * (size_t)s->nargs);
    for (int k = 0; k < s->nargs; k++)
        idx[k] = ir_expr_copy(m, s->args[k]);
    ir_stmt *copy = ir_for(m, v, ir_int_typed(m, t, v->dtype), ir_int_typed(m, hi, v->dtype),
                           IR_FOR_VECTORIZED, NULL);
    copy->body[0] = ir_store(m, s->buf, idx, s->nargs, from);
    ir_stmt *copied = ir_vectorize_loop(m, copy, z->vbytes);
    if (!copied)
        copied = copy;   /* bytes: the C compiler's plain loop of moves */
    if (z->fail)
        return NULL;
    ir_stmt *in = ir_seq_new(m);
    ir_seq_append(m, in, f);
    ir_seq_append(m, in, copied);
    ir_seq_append(m, out, ir_alloc_stmt(m, stage, in));
    return out;
}

/* ---------------------------------------------------------------- a guard of the loop alone */

/* The end of [lo, *hi) where cond, a conjunction of `a*v + c < C` and
 * `a*v + c <= C` (a > 0: the guard of a split's last piece after
 * partition fixed the outer loop, as `ji + 192 < 197`), holds: it holds
 * from lo up to there and nowhere after.  False when cond is not of that
 * form. */
static bool guard_end(const ir_expr *cond, const ir_var *v, int64_t lo, int64_t *hi)
{
    if (cond->kind == IR_AND)
        return guard_end(cond->a, v, lo, hi) && guard_end(cond->b, v, lo, hi);
    ir_affine f;
    if ((cond->kind != IR_LT && cond->kind != IR_LE) || cond->b->kind != IR_INT ||
        !ir_affine_of(cond->a, &f) || f.n != 1 || f.var[0] != v || f.coef[0] <= 0)
        return false;
    /* a*v < C - c: v < ceil((C - c) / a); <= C - c: v < floor((C - c) / a) + 1 */
    int64_t room, a = f.coef[0];
    if (__builtin_sub_overflow(cond->b->ival, f.c, &room))
        return false;
    int64_t end = cond->kind == IR_LT ? (room > 0 ? (room + a - 1) / a : -(-room / a))
                                      : (room >= 0 ? room / a : -((-room + a - 1) / a)) + 1;
    if (end < *hi)
        *hi = end < lo ? lo : end;
    return true;
}

/* A loop whose whole body is `if guard { S }` with a guard of the loop
 * variable alone that holds on a first part of the loop: the loop over
 * that part, running S.  The last tile of a reduction split by the
 * vector's lanes (a row of 197 in tiles of 16, its last tile partitioned
 * off) then runs its 5 lanes as a vector of 4 and one scalar instead of 16
 * guarded scalars.  NULL when the body is not of that form. */
static ir_stmt *narrowed_loop(ir_module *m, const ir_stmt *st)
{
    const ir_stmt *g = st->body[0];
    while (g && g->kind == IR_S_SEQ && g->nbody == 1)
        g = g->body[0];
    int64_t lo = st->lo->ival, hi = st->hi->ival;
    if (!g || g->kind != IR_S_IF || g->orelse || !guard_end(g->cond, st->var, lo, &hi))
        return NULL;
    return ir_for(m, st->var, ir_int_typed(m, lo, st->var->dtype), ir_int_typed(m, hi, st->var->dtype),
                  st->for_kind, ir_stmt_copy(m, g->body[0]));
}

ir_stmt *ir_vectorize_loop(ir_module *m, const ir_stmt *st, int vector_bytes)
{
    return ir_vectorize_loop_env(m, st, vector_bytes, NULL);
}

ir_stmt *ir_vectorize_loop_env(ir_module *m, const ir_stmt *st, int vector_bytes, ir_vec_env *env)
{
    if (!st->lo || !st->hi || st->lo->kind != IR_INT || st->hi->kind != IR_INT ||
        st->nbody < 1 || !st->var || !ir_dtype_is_int(st->var->dtype) || ir_for_step(st) > 1)
        return NULL;
    ir_stmt *narrowed = narrowed_loop(m, st);
    if (narrowed) {
        ir_stmt *v = ir_vectorize_loop_env(m, narrowed, vector_bytes, env);
        return v ? v : narrowed;
    }
    int64_t lo = st->lo->ival, hi = st->hi->ival, n = hi - lo;
    vz z = {.m = m, .v = st->var, .vbytes = vector_bytes > 0 ? vector_bytes : 16,
            .inner_loops = env && env->inner_loops, .ranges = env ? env->ranges : NULL,
            .nranges = env ? env->nranges : 0, .lo = st->lo->ival, .hi = st->hi->ival};
    bool ok = true, have_dt = false;
    ir_stmt *body = n >= 2 ? prepare(&z, st->body[0], &ok) : NULL;
    if (!body || !ok || !fits(&z, body, &have_dt, 0) || !have_dt)
        return NULL;
    if (z.mixed)
        widen_to(&z, body);
    int lanes = z.vbytes / ir_dtype_size(z.dt);
    while (lanes > 2 && lanes > n)
        lanes /= 2;
    if (lanes < 2)
        return NULL;
    ir_stmt *out = ir_seq_new(m);
    ext_ctx ec = {.z = &z, .env = env};
    int64_t top = hi;
    int whole = env ? ext_lanes(&ec, body, lo, hi, lanes, &top) : 0;
    if (whole) {
        z.lanes = whole;
        /* last_guarded: the vectors before the last as one loop, in range */
        int64_t from = ec.last_guarded ? lo + n / whole * whole : lo;
        ir_stmt *before = from > lo ? whole_vectors(&z, body, lo, from, false) : NULL;
        ir_stmt *f = whole_vectors(&z, body, from, top, ec.cond != NULL);
        ir_stmt *clamped = NULL;
        if (!z.fail && ec.cond)
            clamped = whole_vectors(&z, clamped_body(&ec, body), from, top, true);
        if (!z.fail) {
            if (before)
                ir_seq_append(m, out, before);
            for (int i = 0; i < env->nlocals; i++) {
                env->locals[i].need = ec.need[i];
                env->locals[i].stored_past |= ec.stored[i];
            }
            ir_seq_append(m, out, clamped ? ir_if(m, ec.cond, f, clamped) : f);
            return out;
        }
        z.fail = false;   /* the plain chunks may still fit */
    }
    ir_stmt *staged = staged_tail(&z, env, body, lo, hi, lanes);
    if (staged)
        return staged;
    z.fail = false;
    return plain_chunks(&z, st, body, lo, hi, lanes);
}

/* ---------------------------------------------------------------- combining partials
 *
 * A reduction split into lanes of partial results (rfactor on a vector
 * loop, passes/schedule/auto.c partial_lanes) ends in a write-back loop
 * that folds the L partials into the one result, each step waiting for the
 * one before:
 *
 *   for j in 0..L { Y[i] = Y[i] + R[j] }      (+, max or min)
 *
 * 16 dependent adds per row of a softmax or a layer norm, more than the
 * vector loop before it on short rows.  Where R is a local buffer of L
 * elements (L a power of two, 8 or more) that every store fills by whole
 * vectors of the target (no narrower tail chunk or scalar store: the C
 * compiler then keeps R in registers) and nothing reads after the loop,
 * the loop becomes a tree: the upper half of R folded into the lower half
 * by vector statements, down to 4 lanes, then the last 4 as two pairs:
 *
 *   R[ramp(0, 1, 8)] = R[ramp(0, 1, 8)] + R[ramp(8, 1, 8)]
 *   R[ramp(0, 1, 4)] = R[ramp(0, 1, 4)] + R[ramp(4, 1, 4)]
 *   Y[i] = Y[i] + ((R[0] + R[2]) + (R[1] + R[3]))
 *
 * 4 steps instead of 16.  A float sum is then added in another order than
 * the loop states (integer sums, which wrap, give the same result in any
 * order, max and min the same value, up to the sign of a zero among
 * equal zeros); the order is fixed, so a run repeats its result
 * (doc/passes.md, vectorize). */

/* The combine loop's store: Y[i] = op(Y[i], R[j]), with block b's
 * iteration variables (if any) replaced by their bindings; NULL if st is
 * not one over R. */
static ir_stmt *combine_store(ir_module *m, const ir_stmt *st, const ir_buffer *r)
{
    ir_stmt *b = st->body[0];
    while (b && b->kind == IR_S_SEQ && b->nbody == 1)
        b = b->body[0];
    if (b && b->kind == IR_S_BLOCK && !b->init && b->nbody == 1 && b->niters <= 16) {
        ir_var *from[16];
        ir_expr *to[16];
        for (int k = 0; k < b->niters; k++) {
            from[k] = b->iters[k].var;
            to[k] = b->iters[k].binding;
        }
        b = ir_stmt_subst(m, b->body[0], from, to, b->niters);
        while (b && b->kind == IR_S_SEQ && b->nbody == 1)
            b = b->body[0];
    }
    if (!b || b->kind != IR_S_STORE || b->buf == r || !b->value || ir_expr_lanes(b->value) > 1)
        return NULL;
    const ir_expr *v = b->value;
    if (v->kind != IR_ADD && v->kind != IR_MAX && v->kind != IR_MIN)
        return NULL;
    const ir_expr *y = v->a, *x = v->b;
    if (y->kind != IR_LOAD || y->buf != b->buf || y->nargs != b->nargs || x->kind != IR_LOAD ||
        x->buf != r || x->nargs != 1 || x->args[0]->kind != IR_VAR || x->args[0]->var != st->var)
        return NULL;
    for (int k = 0; k < b->nargs; k++)
        if (!ir_expr_equal(y->args[k], b->args[k]) || ir_expr_uses_var(b->args[k], st->var))
            return NULL;
    return b;
}

/* Whether every store to r below s is of `lanes` lanes (a whole vector). */
typedef struct whole_ctx {
    const ir_buffer *r;
    int lanes;
    bool ok;
} whole_ctx;

static bool whole_visit(const ir_stmt *s, void *p)
{
    whole_ctx *c = p;
    if (s->kind == IR_S_STORE && s->buf == c->r &&
        (s->nargs != 1 || ir_expr_lanes(s->args[0]) != c->lanes))
        c->ok = false;
    return c->ok;
}

/* R[ramp(at, 1, n)] (n 1: R[at]) */
static ir_expr *part(ir_module *m, ir_buffer *r, int64_t at, int n)
{
    ir_expr *i = n > 1 ? ir_ramp(m, ir_int(m, at), ir_int(m, 1), n) : ir_int(m, at);
    return ir_load(m, r, &i, 1);
}

/* R[0..n) folded pairwise (k with k + n/2), as scalars. */
static ir_expr *scalar_tree(ir_module *m, ir_expr_kind op, ir_buffer *r, int64_t at, int n, int stride)
{
    if (n == 1)
        return part(m, r, at, 1);
    return ir_binary(m, op, scalar_tree(m, op, r, at, n / 2, stride * 2),
                     scalar_tree(m, op, r, at + stride, n / 2, stride * 2));
}

ir_stmt *ir_vec_combine_partials(ir_module *m, ir_stmt *alloc, int vector_bytes)
{
    ir_buffer *r = alloc->buf;
    ir_stmt *seq = alloc->nbody == 1 ? alloc->body[0] : NULL;
    if (!r || r->ndim != 1 || !seq || seq->kind != IR_S_SEQ || seq->nbody < 2 ||
        (r->dtype != IR_F32 && r->dtype != IR_F64 && r->dtype != IR_I32))
        return NULL;
    int64_t n = r->shape[0];
    int w = vector_bytes / ir_dtype_size(r->dtype);   /* the target's lanes */
    if (n < 8 || (n & (n - 1)) || w < 4 || n % w)
        return NULL;
    ir_stmt *st = seq->body[seq->nbody - 1];   /* the last: nothing reads R after it */
    if (st->kind != IR_S_FOR || st->for_kind != IR_FOR_SERIAL || ir_for_step(st) != 1 ||
        !ir_expr_is_int(st->lo, 0) || !ir_expr_is_int(st->hi, n) || st->nbody != 1)
        return NULL;
    ir_stmt *y = combine_store(m, st, r);
    if (!y || y->buf->dtype != r->dtype)
        return NULL;
    whole_ctx wc = {r, w, true};
    for (int i = 0; i < seq->nbody - 1 && wc.ok; i++)
        ir_stmt_walk(seq->body[i], whole_visit, NULL, &wc);
    if (!wc.ok)
        return NULL;
    ir_expr_kind op = y->value->kind;
    ir_stmt *out = ir_seq_new(m);
    for (int i = 0; i < seq->nbody - 1; i++)
        ir_seq_append(m, out, seq->body[i]);
    int64_t h = n / 2;
    for (; h >= 4; h /= 2) {   /* the upper half into the lower, whole vectors of up to w lanes */
        int lanes = h < w ? (int)h : w;
        for (int64_t at = 0; at < h; at += lanes) {
            ir_expr *i = ir_ramp(m, ir_int(m, at), ir_int(m, 1), lanes);
            ir_seq_append(m, out, ir_store(m, r, &i, 1,
                                           ir_binary(m, op, part(m, r, at, lanes),
                                                     part(m, r, at + h, lanes))));
        }
    }
    ir_expr **idx = ir_alloc(m->arena, sizeof *idx * (size_t)y->nargs);
    for (int k = 0; k < y->nargs; k++)
        idx[k] = ir_expr_copy(m, y->args[k]);
    ir_expr *acc = ir_expr_copy(m, y->value->a);
    ir_seq_append(m, out, ir_store(m, y->buf, idx, y->nargs,
                                   ir_binary(m, op, acc, scalar_tree(m, op, r, 0, (int)(h * 2), 1))));
    alloc->body[0] = out;
    return alloc;
}
