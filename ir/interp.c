/* ir/interp.c — the reference interpreter (see interp.h).
 *
 * Two phases.  resolve() walks a function once and builds a parallel tree of
 * "resolved" nodes: every variable reference becomes a slot index into one
 * value array, every buffer reference a slot index into one pointer array,
 * every operation knows the storage class of its operands.  It also checks
 * the typing rules the evaluator relies on, so that a malformed function
 * gives a message instead of garbage.  exec()/eval() then walk the resolved
 * tree with no lookups at all.
 *
 * Errors in either phase write the message and longjmp back to
 * ir_interp_func, which frees what was allocated.
 */
#include "ir/interp.h"
#include "ir/smallfloat.h"

#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reference must round every f32 operation separately, as generated C
 * compiled with -ffp-contract=off does; never fuse a*b+c into an fma. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* ---------------------------------------------------------------- f16 / bf16 */

IR_SMALLFLOAT_CODE(IR_SMALLFLOAT_DEFINE)

uint16_t ir_f32_to_f16(float f) { return tec_f16_bits(f); }
uint16_t ir_f32_to_bf16(float f) { return tec_bf16_bits(f); }
uint16_t ir_f64_to_f16(double d) { return tec_f16_bits(d); }
uint16_t ir_f64_to_bf16(double d) { return tec_bf16_bits(d); }
float ir_f16_to_f32(uint16_t h) { return tec_f16_value(h); }
float ir_bf16_to_f32(uint16_t h) { return tec_bf16_value(h); }

/* ---------------------------------------------------------------- values */

/* One scalar value.  Integer dtypes (bool, i32, i64) live in i, f64 in d,
 * f32/f16/bf16 in f (f16/bf16 already rounded to their format). */
typedef union ival {
    int64_t i;
    double d;
    float f;
} ival;

/* How values of a dtype are held and computed; chosen once per node. */
typedef enum vclass { VC_INT, VC_F32, VC_F64, VC_F16, VC_BF16 } vclass;

static vclass class_of(ir_dtype t)
{
    switch (t) {
    case IR_F32: return VC_F32;
    case IR_F64: return VC_F64;
    case IR_F16: return VC_F16;
    case IR_BF16: return VC_BF16;
    default: return VC_INT;
    }
}

static bool class_is_float(vclass c) { return c != VC_INT; }

/* Rounds a float result to the storage format of class c (f32: as is). */
static inline float round_small(vclass c, float x)
{
    if (c == VC_F16)
        return ir_f16_to_f32(ir_f32_to_f16(x));
    if (c == VC_BF16)
        return ir_bf16_to_f32(ir_f32_to_bf16(x));
    return x;
}

/* Normalizes an integer result to dtype t as a store to its C type does. */
static inline int64_t norm_int(ir_dtype t, int64_t v) { return ir_int_wrap(t, v); }

/* Converts a double to the value of dtype t (used for float constants). */
static ival from_double(ir_dtype t, double x)
{
    ival v;
    switch (class_of(t)) {
    case VC_F64: v.d = x; break;
    case VC_F32: v.f = (float)x; break;
    case VC_F16: v.f = ir_f16_to_f32(ir_f64_to_f16(x)); break;
    case VC_BF16: v.f = ir_bf16_to_f32(ir_f64_to_bf16(x)); break;
    default: v.i = norm_int(t, (int64_t)x); break;
    }
    return v;
}

/* ---------------------------------------------------------------- resolved form */

/* A resolved expression: the source node plus what evaluation needs. */
typedef struct rexpr {
    ir_expr_kind kind;
    ir_dtype dtype;            /* result dtype */
    ir_dtype opty;             /* operand dtype (comparisons, casts, calls) */
    vclass cls;                /* class of the operands */
    ival k;                    /* INT / FLOAT constant */
    int slot;                  /* VAR: value slot; LOAD: buffer slot */
    const ir_buffer *buf;      /* LOAD */
    ir_intrin fn;              /* CALL */
    struct rexpr *a, *b, *c;
    struct rexpr **args;       /* LOAD indices, CALL arguments */
    int nargs;
} rexpr;

/* A resolved block iteration variable. */
typedef struct riter {
    int slot;
    bool reduce;
    int64_t extent;
    const char *name;
    rexpr *binding;
} riter;

/* A resolved statement. */
typedef struct rstmt {
    ir_stmt_kind kind;
    struct rstmt **body;       /* SEQ: the list; others: body[0] */
    int nbody;
    int slot;                  /* FOR, LET: value slot; STORE, ALLOC: buffer slot */
    const ir_buffer *buf;      /* STORE, ALLOC */
    size_t alloc_bytes;        /* ALLOC */
    rexpr *lo, *hi, *value, *cond;
    rexpr **args;              /* STORE indices */
    int nargs;
    riter *iters;              /* BLOCK */
    int niters;
    const char *name;          /* BLOCK */
    struct rstmt *init, *orelse;
    const char *msg;           /* ASSERT */
} rstmt;

/* Largest rank a load or store may have here (index values are collected
 * on the stack for the error message). */
#define INTERP_MAX_DIMS 32

/* A name in scope during resolution: a variable or a buffer and its slot. */
typedef struct scoped {
    const void *key;           /* ir_var * or ir_buffer * */
    int slot;
} scoped;

/* Everything one run of ir_interp_func owns. */
typedef struct interp {
    const ir_func *f;
    ir_arena *arena;           /* resolved nodes */
    char *err;
    size_t errlen;
    jmp_buf fail;

    /* resolution: scope stacks and slot counters */
    scoped *vscope, *bscope;
    int nvscope, capvscope, nbscope, capbscope;
    int nvslots, nbslots;

    /* execution */
    ival *vals;                /* nvslots */
    char **mem;                /* nbslots: storage base pointers */
    bool *owned;               /* nbslots: mem[i] was allocated by ALLOC */
} interp;

static void write_err(interp *ip, const char *fmt, va_list ap)
{
    if (!ip->err || !ip->errlen)
        return;
    int n = snprintf(ip->err, ip->errlen, "in @%s: ", ip->f->name ? ip->f->name : "?");
    if (n >= 0 && (size_t)n < ip->errlen)
        vsnprintf(ip->err + n, ip->errlen - (size_t)n, fmt, ap);
}

static _Noreturn __attribute__((format(printf, 2, 3))) void fail(interp *ip, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    write_err(ip, fmt, ap);
    va_end(ap);
    longjmp(ip->fail, 1);
}

void ir_cast_failure(double value, ir_dtype to, char *buf, size_t len)
{
    snprintf(buf, len, "cast of %g to %s is out of range", value, ir_dtype_name(to));
}

/* Formats "A[2, 5]" (or a shape "[2, 5]" when name is NULL) into buf. */
static void fmt_indexed(char *buf, size_t len, const char *name, const int64_t *ix, int n)
{
    size_t used = 0;
    int w = snprintf(buf, len, "%s[", name ? name : "");
    for (int d = 0; w >= 0 && (used += (size_t)w) < len && d < n; d++)
        w = snprintf(buf + used, len - used, d ? ", %" PRId64 : "%" PRId64, ix[d]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
}

/* ---------------------------------------------------------------- resolution */

static void *ralloc(interp *ip, size_t size) { return ir_alloc(ip->arena, size); }

static int new_vslot(interp *ip, const ir_var *v)
{
    scoped s = {v, ip->nvslots++};
    IR_PUSH(ip->arena, ip->vscope, ip->nvscope, ip->capvscope, s);
    return s.slot;
}

static int new_bslot(interp *ip, const ir_buffer *b)
{
    scoped s = {b, ip->nbslots++};
    IR_PUSH(ip->arena, ip->bscope, ip->nbscope, ip->capbscope, s);
    return s.slot;
}

/* Innermost binding of a key, searching the scope stack from the top. */
static int lookup(const scoped *stack, int n, const void *key)
{
    for (int i = n - 1; i >= 0; i--)
        if (stack[i].key == key)
            return stack[i].slot;
    return -1;
}

static const char *dt(ir_dtype t)
{
    return (unsigned)t < IR_NDTYPES ? ir_dtype_name(t) : "<bad dtype>";
}

static const char *kname(ir_expr_kind k)
{
    return (unsigned)k < IR_NEXPR_KINDS ? ir_expr_kind_name(k) : "<bad kind>";
}

/* Element count and byte size of a buffer, rejecting sizes that overflow. */
static size_t buffer_bytes(interp *ip, const ir_buffer *b)
{
    if ((unsigned)b->dtype >= IR_NDTYPES)
        fail(ip, "malformed IR: buffer %s has an invalid dtype", b->name);
    if (b->ndim < 0 || (b->ndim > 0 && !b->shape))
        fail(ip, "malformed IR: buffer %s has an invalid shape", b->name);
    uint64_t n = (uint64_t)ir_dtype_size(b->dtype);
    for (int d = 0; d < b->ndim; d++) {
        if (b->shape[d] < 1)
            fail(ip, "malformed IR: buffer %s has extent %" PRId64 " in dimension %d",
                 b->name, b->shape[d], d);
        if (__builtin_mul_overflow(n, (uint64_t)b->shape[d], &n) || n > (uint64_t)PTRDIFF_MAX)
            fail(ip, "buffer %s is too large to allocate", b->name);
    }
    return (size_t)n;
}

static rexpr *resolve_expr(interp *ip, const ir_expr *e);

static void need_operand(interp *ip, const ir_expr *e, const ir_expr *x)
{
    if (!x)
        fail(ip, "malformed IR: '%s' expression is missing an operand", kname(e->kind));
}

static void need_int(interp *ip, const char *what, ir_dtype t)
{
    if (class_of(t) != VC_INT)
        fail(ip, "malformed IR: %s must be an integer, not %s", what, dt(t));
}

/* Resolves the index list of a load or store of b. */
static rexpr **resolve_indices(interp *ip, const ir_buffer *b, ir_expr **idx, int n,
                               const char *what)
{
    if (n != b->ndim)
        fail(ip, "malformed IR: %s of %s has %d indices, the buffer has %d dimensions",
             what, b->name, n, b->ndim);
    if (n > INTERP_MAX_DIMS)
        fail(ip, "%s of %s: more than %d dimensions are not supported", what, b->name,
             INTERP_MAX_DIMS);
    rexpr **r = ralloc(ip, sizeof *r * (size_t)(n ? n : 1));
    for (int d = 0; d < n; d++) {
        if (!idx || !idx[d])
            fail(ip, "malformed IR: %s of %s is missing index %d", what, b->name, d);
        r[d] = resolve_expr(ip, idx[d]);
        need_int(ip, "an index", idx[d]->dtype);
    }
    return r;
}

static int buffer_slot(interp *ip, const ir_buffer *b, const char *what)
{
    if (!b)
        fail(ip, "malformed IR: %s without a buffer", what);
    int slot = lookup(ip->bscope, ip->nbscope, b);
    if (slot < 0)
        fail(ip, "malformed IR: %s of %s, which is neither a parameter nor allocated here",
             what, b->name);
    return slot;
}

/* Checks operand dtypes of binary kinds and records the operand class. */
static void check_binary(interp *ip, const ir_expr *e, rexpr *r)
{
    ir_dtype ta = e->a->dtype, tb = e->b->dtype;
    if (ta != tb)
        fail(ip, "malformed IR: operands of '%s' have dtypes %s and %s",
             kname(e->kind), dt(ta), dt(tb));
    r->opty = ta;
    r->cls = class_of(ta);
    bool cmp = e->kind >= IR_EQ && e->kind <= IR_OR;
    if (cmp ? e->dtype != IR_BOOL : e->dtype != ta)
        fail(ip, "malformed IR: '%s' of %s operands has dtype %s",
             kname(e->kind), dt(ta), dt(e->dtype));
    switch (e->kind) {
    case IR_ADD: case IR_SUB: case IR_MUL:
        if (ta == IR_BOOL || ir_dtype_is_small_int(ta))
            fail(ip, "malformed IR: '%s' on %s operands", kname(e->kind), dt(ta));
        break;
    case IR_DIV:
        if (!class_is_float(r->cls))
            fail(ip, "malformed IR: '/' on %s operands; integer division is floordiv", dt(ta));
        break;
    case IR_FLOORDIV: case IR_FLOORMOD:
        if (ta != IR_I32 && ta != IR_I64)
            fail(ip, "malformed IR: %s on %s operands (integers only)", kname(e->kind), dt(ta));
        break;
    case IR_AND: case IR_OR:
        if (ta != IR_BOOL)
            fail(ip, "malformed IR: '%s' on %s operands (bool only)", kname(e->kind), dt(ta));
        break;
    default:
        break;
    }
}

static void check_call(interp *ip, const ir_expr *e, rexpr *r)
{
    if ((unsigned)e->fn >= IR_NINTRINSICS)
        fail(ip, "malformed IR: call of an unknown intrinsic");
    const char *name = ir_intrin_name(e->fn);
    if (e->nargs != ir_intrin_arity(e->fn))
        fail(ip, "malformed IR: %s takes %d arguments, given %d", name,
             ir_intrin_arity(e->fn), e->nargs);
    r->opty = e->nargs ? e->args[0]->dtype : IR_I32;
    r->cls = class_of(r->opty);
    if (ir_intrin_class(e->fn) == 'r')
        return;
    for (int i = 0; i < e->nargs; i++)
        if (e->args[i]->dtype != r->opty)
            fail(ip, "malformed IR: arguments of %s have dtypes %s and %s", name,
                 dt(r->opty), dt(e->args[i]->dtype));
    if (e->dtype != r->opty)
        fail(ip, "malformed IR: %s of %s has dtype %s", name, dt(r->opty), dt(e->dtype));
    bool int_ok = e->fn == IR_FN_ABS && (r->opty == IR_I32 || r->opty == IR_I64);
    if (!class_is_float(r->cls) && !int_ok)
        fail(ip, "malformed IR: %s of a %s value (float only)", name, dt(r->opty));
}

static rexpr *resolve_expr(interp *ip, const ir_expr *e)
{
    if (!e)
        fail(ip, "malformed IR: missing expression");
    if ((unsigned)e->kind >= IR_NEXPR_KINDS || (unsigned)e->dtype >= IR_NDTYPES)
        fail(ip, "malformed IR: expression with an invalid kind or dtype");
    rexpr *r = ralloc(ip, sizeof *r);
    r->kind = e->kind;
    r->dtype = e->dtype;
    r->opty = e->dtype;
    r->cls = class_of(e->dtype);
    switch (e->kind) {
    case IR_INT:
        if (class_is_float(r->cls))
            r->k = from_double(e->dtype, (double)e->ival);
        else
            r->k.i = norm_int(e->dtype, e->ival);
        break;
    case IR_FLOAT:
        r->k = from_double(e->dtype, e->fval);
        break;
    case IR_VAR:
        if (!e->var)
            fail(ip, "malformed IR: variable reference without a variable");
        r->slot = lookup(ip->vscope, ip->nvscope, e->var);
        if (r->slot < 0)
            fail(ip, "malformed IR: variable %s used outside its scope", e->var->name);
        if (e->var->dtype != e->dtype)
            fail(ip, "malformed IR: reference to %s %s has dtype %s", dt(e->var->dtype),
                 e->var->name, dt(e->dtype));
        break;
    case IR_LOAD:
        r->slot = buffer_slot(ip, e->buf, "load");
        r->buf = e->buf;
        if (e->dtype != e->buf->dtype)
            fail(ip, "malformed IR: load of %s %s has dtype %s", dt(e->buf->dtype),
                 e->buf->name, dt(e->dtype));
        r->args = resolve_indices(ip, e->buf, e->args, e->nargs, "load");
        r->nargs = e->nargs;
        break;
    case IR_NEG: case IR_NOT:
        need_operand(ip, e, e->a);
        r->a = resolve_expr(ip, e->a);
        if (e->a->dtype != e->dtype)
            fail(ip, "malformed IR: '%s' of a %s operand has dtype %s", kname(e->kind),
                 dt(e->a->dtype), dt(e->dtype));
        if (e->kind == IR_NOT ? e->dtype != IR_BOOL
                              : e->dtype == IR_BOOL || ir_dtype_is_small_int(e->dtype))
            fail(ip, "malformed IR: '%s' on a %s operand", kname(e->kind), dt(e->dtype));
        break;
    case IR_SELECT:
        need_operand(ip, e, e->c);
        need_operand(ip, e, e->a);
        need_operand(ip, e, e->b);
        r->c = resolve_expr(ip, e->c);
        r->a = resolve_expr(ip, e->a);
        r->b = resolve_expr(ip, e->b);
        need_int(ip, "a select condition", e->c->dtype);
        if (e->a->dtype != e->dtype || e->b->dtype != e->dtype)
            fail(ip, "malformed IR: select of %s and %s has dtype %s", dt(e->a->dtype),
                 dt(e->b->dtype), dt(e->dtype));
        break;
    case IR_CAST:
        need_operand(ip, e, e->a);
        r->a = resolve_expr(ip, e->a);
        r->opty = e->a->dtype;
        r->cls = class_of(r->opty);
        break;
    case IR_CALL:
        if (e->nargs < 0 || (e->nargs > 0 && !e->args))
            fail(ip, "malformed IR: call with an invalid argument list");
        r->fn = e->fn;
        r->nargs = e->nargs;
        r->args = ralloc(ip, sizeof *r->args * (size_t)(e->nargs ? e->nargs : 1));
        for (int i = 0; i < e->nargs; i++)
            r->args[i] = resolve_expr(ip, e->args[i]);
        check_call(ip, e, r);
        break;
    default:                     /* the binary kinds */
        need_operand(ip, e, e->a);
        need_operand(ip, e, e->b);
        r->a = resolve_expr(ip, e->a);
        r->b = resolve_expr(ip, e->b);
        check_binary(ip, e, r);
        break;
    }
    return r;
}

static rstmt *resolve_stmt(interp *ip, const ir_stmt *s);

/* Resolves body[0] of a statement that must have one. */
static rstmt **resolve_body1(interp *ip, const ir_stmt *s)
{
    if (s->nbody < 1 || !s->body || !s->body[0])
        fail(ip, "malformed IR: %s statement without a body", ir_stmt_kind_name(s->kind));
    rstmt **b = ralloc(ip, sizeof *b);
    b[0] = resolve_stmt(ip, s->body[0]);
    return b;
}

static void resolve_block(interp *ip, const ir_stmt *s, rstmt *r)
{
    r->name = s->name ? s->name : "?";
    r->niters = s->niters;
    r->iters = ralloc(ip, sizeof *r->iters * (size_t)(s->niters ? s->niters : 1));
    /* Bindings see the enclosing loop variables only, so resolve them all
     * before the iteration variables come into scope. */
    for (int i = 0; i < s->niters; i++) {
        const ir_itervar *it = &s->iters[i];
        if (!it->var || !it->binding)
            fail(ip, "malformed IR: block %s: iteration variable %d is incomplete", r->name, i);
        r->iters[i].binding = resolve_expr(ip, it->binding);
        need_int(ip, "a block binding", it->binding->dtype);
        r->iters[i].extent = it->extent;
        r->iters[i].reduce = it->kind == IR_ITER_REDUCE;
        r->iters[i].name = it->var->name;
    }
    int mark = ip->nvscope;
    for (int i = 0; i < s->niters; i++)
        r->iters[i].slot = new_vslot(ip, s->iters[i].var);
    if (s->init)
        r->init = resolve_stmt(ip, s->init);
    r->body = resolve_body1(ip, s);
    r->nbody = 1;
    ip->nvscope = mark;
}

static rstmt *resolve_stmt(interp *ip, const ir_stmt *s)
{
    if (!s)
        fail(ip, "malformed IR: missing statement");
    if ((unsigned)s->kind >= IR_NSTMT_KINDS)
        fail(ip, "malformed IR: statement with an invalid kind");
    rstmt *r = ralloc(ip, sizeof *r);
    r->kind = s->kind;
    int mark;
    switch (s->kind) {
    case IR_S_SEQ:
        r->nbody = s->nbody;
        r->body = ralloc(ip, sizeof *r->body * (size_t)(s->nbody > 0 ? s->nbody : 1));
        for (int i = 0; i < s->nbody; i++)
            r->body[i] = resolve_stmt(ip, s->body[i]);
        break;
    case IR_S_FOR:
        if (!s->var)
            fail(ip, "malformed IR: for statement without a variable");
        r->lo = resolve_expr(ip, s->lo);
        r->hi = resolve_expr(ip, s->hi);
        need_int(ip, "a loop bound", s->lo->dtype);
        need_int(ip, "a loop bound", s->hi->dtype);
        mark = ip->nvscope;
        r->slot = new_vslot(ip, s->var);
        r->body = resolve_body1(ip, s);
        r->nbody = 1;
        ip->nvscope = mark;
        break;
    case IR_S_BLOCK:
        resolve_block(ip, s, r);
        break;
    case IR_S_STORE:
        r->slot = buffer_slot(ip, s->buf, "store");
        r->buf = s->buf;
        r->args = resolve_indices(ip, s->buf, s->args, s->nargs, "store");
        r->nargs = s->nargs;
        r->value = resolve_expr(ip, s->value);
        if (s->value->dtype != s->buf->dtype)
            fail(ip, "malformed IR: store of a %s value into %s %s", dt(s->value->dtype),
                 dt(s->buf->dtype), s->buf->name);
        break;
    case IR_S_ALLOC:
        if (!s->buf)
            fail(ip, "malformed IR: alloc statement without a buffer");
        r->buf = s->buf;
        r->alloc_bytes = buffer_bytes(ip, s->buf);
        mark = ip->nbscope;
        r->slot = new_bslot(ip, s->buf);
        r->body = resolve_body1(ip, s);
        r->nbody = 1;
        ip->nbscope = mark;
        break;
    case IR_S_LET:
        if (!s->var)
            fail(ip, "malformed IR: let statement without a variable");
        r->value = resolve_expr(ip, s->value);
        if (s->value->dtype != s->var->dtype)
            fail(ip, "malformed IR: let %s %s bound to a %s value", dt(s->var->dtype),
                 s->var->name, dt(s->value->dtype));
        mark = ip->nvscope;
        r->slot = new_vslot(ip, s->var);
        r->body = resolve_body1(ip, s);
        r->nbody = 1;
        ip->nvscope = mark;
        break;
    case IR_S_IF:
        r->cond = resolve_expr(ip, s->cond);
        need_int(ip, "an if condition", s->cond->dtype);
        r->body = resolve_body1(ip, s);
        r->nbody = 1;
        if (s->orelse)
            r->orelse = resolve_stmt(ip, s->orelse);
        break;
    case IR_S_EVAL:
        r->value = resolve_expr(ip, s->value);
        break;
    case IR_S_ASSERT:
        r->cond = resolve_expr(ip, s->cond);
        need_int(ip, "an assert condition", s->cond->dtype);
        r->msg = s->msg ? s->msg : "(no message)";
        break;
    case IR_S_PREFETCH:   /* a cache hint: nothing to compute, its indices may lie outside */
        break;
    default:
        fail(ip, "malformed IR: statement with an invalid kind");
    }
    return r;
}

/* ---------------------------------------------------------------- evaluation */

static ival eval(interp *ip, const rexpr *e);

static ival read_elem(ir_dtype t, const char *base, int64_t off)
{
    ival v;
    switch (t) {
    case IR_BOOL: v.i = ((const uint8_t *)base)[off] != 0; break;
    case IR_I8: v.i = ((const int8_t *)base)[off]; break;
    case IR_U8: v.i = ((const uint8_t *)base)[off]; break;
    case IR_I16: v.i = ((const int16_t *)base)[off]; break;
    case IR_I32: v.i = ((const int32_t *)base)[off]; break;
    case IR_I64: v.i = ((const int64_t *)base)[off]; break;
    case IR_F16: v.f = ir_f16_to_f32(((const uint16_t *)base)[off]); break;
    case IR_BF16: v.f = ir_bf16_to_f32(((const uint16_t *)base)[off]); break;
    case IR_F32: v.f = ((const float *)base)[off]; break;
    default: v.d = ((const double *)base)[off]; break;
    }
    return v;
}

static void write_elem(ir_dtype t, char *base, int64_t off, ival v)
{
    switch (t) {
    case IR_BOOL: ((uint8_t *)base)[off] = v.i != 0; break;
    case IR_I8: ((int8_t *)base)[off] = (int8_t)v.i; break;
    case IR_U8: ((uint8_t *)base)[off] = (uint8_t)v.i; break;
    case IR_I16: ((int16_t *)base)[off] = (int16_t)v.i; break;
    case IR_I32: ((int32_t *)base)[off] = (int32_t)v.i; break;
    case IR_I64: ((int64_t *)base)[off] = v.i; break;
    case IR_F16: ((uint16_t *)base)[off] = ir_f32_to_f16(v.f); break;
    case IR_BF16: ((uint16_t *)base)[off] = ir_f32_to_bf16(v.f); break;
    case IR_F32: ((float *)base)[off] = v.f; break;
    default: ((double *)base)[off] = v.d; break;
    }
}

/* Evaluates the indices of a load or store of buf and returns the row-major
 * element offset; any index outside its extent stops the run. */
static int64_t element_offset(interp *ip, const ir_buffer *buf, rexpr *const *args, int n,
                              const char *what)
{
    int64_t ix[INTERP_MAX_DIMS];
    int64_t off = 0;
    for (int d = 0; d < n; d++)
        ix[d] = eval(ip, args[d]).i;
    for (int d = 0; d < n; d++) {
        if (ix[d] < 0 || ix[d] >= buf->shape[d]) {
            char where[256];
            fmt_indexed(where, sizeof where, buf->name, ix, n);
            fail(ip, "out-of-range %s %s: index %d must be in [0, %" PRId64 ")", what, where,
                 d, buf->shape[d]);
        }
        off = off * buf->shape[d] + ix[d];
    }
    return off;
}

static int64_t int_floordiv(interp *ip, int64_t a, int64_t b)
{
    if (b == 0)
        fail(ip, "integer division by zero: floordiv(%" PRId64 ", 0)", a);
    if (b == -1) {
        if (a == INT64_MIN)
            fail(ip, "integer overflow: floordiv(%" PRId64 ", -1)", a);
        return -a;
    }
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static int64_t int_floormod(interp *ip, int64_t a, int64_t b)
{
    if (b == 0)
        fail(ip, "integer division by zero: floormod(%" PRId64 ", 0)", a);
    if (b == -1)
        return 0;            /* a % -1 is 0 but INT64_MIN % -1 traps in C */
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0)))
        m += b;
    return m;
}

/* Integer binary operations, wrapping on overflow (two's complement). */
static ival int_binary(interp *ip, const rexpr *e, int64_t a, int64_t b)
{
    ival r;
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (e->kind) {
    case IR_ADD: r.i = (int64_t)(ua + ub); break;
    case IR_SUB: r.i = (int64_t)(ua - ub); break;
    case IR_MUL: r.i = (int64_t)(ua * ub); break;
    case IR_FLOORDIV: r.i = int_floordiv(ip, a, b); break;
    case IR_FLOORMOD: r.i = int_floormod(ip, a, b); break;
    case IR_MIN: r.i = a < b ? a : b; break;
    case IR_MAX: r.i = a > b ? a : b; break;
    case IR_EQ: r.i = a == b; return r;
    case IR_NE: r.i = a != b; return r;
    case IR_LT: r.i = a < b; return r;
    case IR_LE: r.i = a <= b; return r;
    case IR_GT: r.i = a > b; return r;
    case IR_GE: r.i = a >= b; return r;
    default: fail(ip, "internal error: interp: bad integer operation '%s'", kname(e->kind));
    }
    r.i = norm_int(e->dtype, r.i);
    return r;
}

/* f32 (and f16/bf16, computed in float and rounded) binary operations.
 * min/max follow C99 fminf/fmaxf as glibc computes them: a NaN operand
 * yields the other one, and of equal values (-0 and +0) the first is kept.
 * Written out, not called: GCC takes fmaxf(a, b) as commutative and may
 * swap the operands, which changes the zero a tie keeps. */
static ival f32_binary(interp *ip, const rexpr *e, float a, float b)
{
    ival r;
    switch (e->kind) {
    case IR_ADD: r.f = a + b; break;
    case IR_SUB: r.f = a - b; break;
    case IR_MUL: r.f = a * b; break;
    case IR_DIV: r.f = a / b; break;
    case IR_MIN: r.f = a != a ? b : (b < a ? b : a); break;
    case IR_MAX: r.f = a != a ? b : (b > a ? b : a); break;
    case IR_EQ: r.i = a == b; return r;
    case IR_NE: r.i = a != b; return r;
    case IR_LT: r.i = a < b; return r;
    case IR_LE: r.i = a <= b; return r;
    case IR_GT: r.i = a > b; return r;
    case IR_GE: r.i = a >= b; return r;
    default: fail(ip, "internal error: interp: bad float operation '%s'", kname(e->kind));
    }
    r.f = round_small(e->cls, r.f);
    return r;
}

static ival f64_binary(interp *ip, const rexpr *e, double a, double b)
{
    ival r;
    switch (e->kind) {
    case IR_ADD: r.d = a + b; break;
    case IR_SUB: r.d = a - b; break;
    case IR_MUL: r.d = a * b; break;
    case IR_DIV: r.d = a / b; break;
    case IR_MIN: r.d = a != a ? b : (b < a ? b : a); break;
    case IR_MAX: r.d = a != a ? b : (b > a ? b : a); break;
    case IR_EQ: r.i = a == b; break;
    case IR_NE: r.i = a != b; break;
    case IR_LT: r.i = a < b; break;
    case IR_LE: r.i = a <= b; break;
    case IR_GT: r.i = a > b; break;
    case IR_GE: r.i = a >= b; break;
    default: fail(ip, "internal error: interp: bad float operation '%s'", kname(e->kind));
    }
    return r;
}

static float f32_math(ir_intrin fn, float x, float y)
{
    switch (fn) {
    case IR_FN_EXP: return expf(x);
    case IR_FN_LOG: return logf(x);
    case IR_FN_SQRT: return sqrtf(x);
    case IR_FN_RSQRT: return 1.0f / sqrtf(x);
    case IR_FN_TANH: return tanhf(x);
    case IR_FN_ERF: return erff(x);
    case IR_FN_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case IR_FN_ABS: return fabsf(x);
    case IR_FN_FLOOR: return floorf(x);
    case IR_FN_CEIL: return ceilf(x);
    case IR_FN_RINT: return rintf(x);
    case IR_FN_SIN: return sinf(x);
    case IR_FN_COS: return cosf(x);
    case IR_FN_POW: return powf(x, y);
    default: return NAN;      /* unreachable: check_call admits math only */
    }
}

static double f64_math(ir_intrin fn, double x, double y)
{
    switch (fn) {
    case IR_FN_EXP: return exp(x);
    case IR_FN_LOG: return log(x);
    case IR_FN_SQRT: return sqrt(x);
    case IR_FN_RSQRT: return 1.0 / sqrt(x);
    case IR_FN_TANH: return tanh(x);
    case IR_FN_ERF: return erf(x);
    case IR_FN_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case IR_FN_ABS: return fabs(x);
    case IR_FN_FLOOR: return floor(x);
    case IR_FN_CEIL: return ceil(x);
    case IR_FN_RINT: return rint(x);
    case IR_FN_SIN: return sin(x);
    case IR_FN_COS: return cos(x);
    case IR_FN_POW: return pow(x, y);
    default: return NAN;
    }
}

static const ir_interp_hooks *hooks;

void ir_interp_set_hooks(const ir_interp_hooks *h)
{
    hooks = h;
}

static ival eval_call(interp *ip, const rexpr *e)
{
    ival r, x = {0}, y = {0};
    if (ir_intrin_class(e->fn) == 'r') {
        /* Run-time intrinsics reach the runtime through the hooks it
         * installed (ir_interp_set_hooks), so interpreted runs are profiled
         * too; without hooks they only evaluate their arguments. */
        int64_t a[2] = {0, 0};
        for (int i = 0; i < e->nargs; i++) {
            ival v = eval(ip, e->args[i]);
            if (i < 2)
                a[i] = v.i;
        }
        const ir_interp_hooks *h = hooks;
        if (h && e->fn == IR_FN_PROF_ENTER && h->prof_enter)
            h->prof_enter(a[0]);
        else if (h && e->fn == IR_FN_PROF_EXIT && h->prof_exit)
            h->prof_exit(a[0]);
        else if (h && e->fn == IR_FN_PROF_COUNT && h->prof_count)
            h->prof_count(a[0], a[1]);
        r.i = 0;
        return r;
    }
    if (e->nargs > 0)
        x = eval(ip, e->args[0]);
    if (e->nargs > 1)
        y = eval(ip, e->args[1]);
    switch (e->cls) {
    case VC_INT: {              /* abs only; INT64_MIN wraps to itself */
        uint64_t u = (uint64_t)x.i;
        r.i = norm_int(e->dtype, x.i < 0 ? (int64_t)(0 - u) : x.i);
        break;
    }
    case VC_F64:
        r.d = f64_math(e->fn, x.d, y.d);
        break;
    default:
        r.f = round_small(e->cls, f32_math(e->fn, x.f, y.f));
        break;
    }
    return r;
}

/* Value of a float class as double (exact). */
static double as_double(vclass c, ival v) { return c == VC_F64 ? v.d : (double)v.f; }

static ival eval_cast(interp *ip, const rexpr *e)
{
    ival v = eval(ip, e->a), r;
    vclass to = class_of(e->dtype);
    if (e->cls == VC_INT) {                       /* from bool/i32/i64 */
        switch (to) {
        case VC_INT: r.i = norm_int(e->dtype, v.i); break;
        case VC_F32: r.f = (float)v.i; break;
        case VC_F64: r.d = (double)v.i; break;
        default: r = from_double(e->dtype, (double)v.i); break;
        }
        return r;
    }
    double x = as_double(e->cls, v);
    switch (to) {
    case VC_INT:
        if (e->dtype == IR_BOOL) {
            r.i = x != 0;
        } else {
            /* Truncation toward zero; a value with no integer of the
             * target type is an error rather than C's undefined result. */
            int64_t lo, hi;
            ir_dtype_int_range(e->dtype, &lo, &hi);
            double t = trunc(x);   /* -lo and hi + 1 are powers of two: exact */
            if (!(t >= (double)lo && t < (double)hi + 1.0))
            {
                char msg[96];
                ir_cast_failure(x, e->dtype, msg, sizeof msg);
                fail(ip, "%s", msg);
            }
            r.i = (int64_t)t;
        }
        break;
    case VC_F32: r.f = e->cls == VC_F64 ? (float)v.d : v.f; break;
    case VC_F64: r.d = x; break;
    default: r = from_double(e->dtype, x); break;
    }
    return r;
}

static ival eval(interp *ip, const rexpr *e)
{
    ival a, b, r;
    switch (e->kind) {
    case IR_INT:
    case IR_FLOAT:
        return e->k;
    case IR_VAR:
        return ip->vals[e->slot];
    case IR_LOAD: {
        int64_t off = element_offset(ip, e->buf, e->args, e->nargs, "load");
        return read_elem(e->buf->dtype, ip->mem[e->slot], off);
    }
    case IR_AND:                  /* short-circuit, as C's && and || */
        r.i = eval(ip, e->a).i && eval(ip, e->b).i;
        return r;
    case IR_OR:
        r.i = eval(ip, e->a).i || eval(ip, e->b).i;
        return r;
    case IR_NOT:
        r.i = !eval(ip, e->a).i;
        return r;
    case IR_NEG:
        a = eval(ip, e->a);
        switch (e->cls) {
        case VC_INT: r.i = norm_int(e->dtype, (int64_t)(0 - (uint64_t)a.i)); break;
        case VC_F64: r.d = -a.d; break;
        default: r.f = -a.f; break;
        }
        return r;
    case IR_SELECT:
        return eval(ip, e->c).i ? eval(ip, e->a) : eval(ip, e->b);
    case IR_CAST:
        return eval_cast(ip, e);
    case IR_CALL:
        return eval_call(ip, e);
    default:
        a = eval(ip, e->a);
        b = eval(ip, e->b);
        switch (e->cls) {
        case VC_INT: return int_binary(ip, e, a.i, b.i);
        case VC_F64: return f64_binary(ip, e, a.d, b.d);
        default: return f32_binary(ip, e, a.f, b.f);
        }
    }
}

static void exec(interp *ip, const rstmt *s);

static void exec_block(interp *ip, const rstmt *s)
{
    bool first = true;            /* every reduce binding is 0 */
    for (int i = 0; i < s->niters; i++) {
        const riter *it = &s->iters[i];
        int64_t v = eval(ip, it->binding).i;
        if (v < 0 || v >= it->extent)
            fail(ip, "block %s: iteration variable %s is bound to %" PRId64
                 ", outside [0, %" PRId64 ")", s->name, it->name, v, it->extent);
        ip->vals[it->slot].i = v;
        if (it->reduce && v != 0)
            first = false;
    }
    if (s->init && first)
        exec(ip, s->init);
    exec(ip, s->body[0]);
}

static void exec_alloc(interp *ip, const rstmt *s)
{
    char *p = calloc(1, s->alloc_bytes ? s->alloc_bytes : 1);
    if (!p)
        fail(ip, "cannot allocate %zu bytes for local buffer %s", s->alloc_bytes, s->buf->name);
    /* A `filled` buffer promises a store before every read: all-ones bytes
     * (NaN, or -1) make a read that breaks the promise show in the outputs,
     * where compiled code would read whatever its memory held. */
    if (s->buf->filled)
        memset(p, 0xff, s->alloc_bytes);
    ip->mem[s->slot] = p;
    ip->owned[s->slot] = true;
    exec(ip, s->body[0]);
    ip->mem[s->slot] = NULL;
    ip->owned[s->slot] = false;
    free(p);
}

static void exec(interp *ip, const rstmt *s)
{
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->nbody; i++)
            exec(ip, s->body[i]);
        break;
    case IR_S_FOR: {
        int64_t lo = eval(ip, s->lo).i, hi = eval(ip, s->hi).i;
        for (int64_t v = lo; v < hi; v++) {
            ip->vals[s->slot].i = v;
            exec(ip, s->body[0]);
        }
        break;
    }
    case IR_S_BLOCK:
        exec_block(ip, s);
        break;
    case IR_S_STORE: {
        int64_t off = element_offset(ip, s->buf, s->args, s->nargs, "store");
        write_elem(s->buf->dtype, ip->mem[s->slot], off, eval(ip, s->value));
        break;
    }
    case IR_S_ALLOC:
        exec_alloc(ip, s);
        break;
    case IR_S_LET:
        ip->vals[s->slot] = eval(ip, s->value);
        exec(ip, s->body[0]);
        break;
    case IR_S_IF:
        if (eval(ip, s->cond).i)
            exec(ip, s->body[0]);
        else if (s->orelse)
            exec(ip, s->orelse);
        break;
    case IR_S_EVAL:
        eval(ip, s->value);
        break;
    case IR_S_ASSERT:
        if (!eval(ip, s->cond).i)
            fail(ip, "assert failed: %s", s->msg);
        break;
    case IR_S_PREFETCH:
        break;
    default:
        fail(ip, "internal error: interp: bad statement kind");
    }
}

/* ---------------------------------------------------------------- entry points */

/* Sets up the run state once resolution has counted the slots. */
static void prepare(interp *ip, void *const *data)
{
    ip->vals = ralloc(ip, sizeof *ip->vals * (size_t)(ip->nvslots ? ip->nvslots : 1));
    ip->mem = ralloc(ip, sizeof *ip->mem * (size_t)(ip->nbslots ? ip->nbslots : 1));
    ip->owned = ralloc(ip, sizeof *ip->owned * (size_t)(ip->nbslots ? ip->nbslots : 1));
    for (int i = 0; i < ip->f->nparams; i++)
        ip->mem[i] = data[i];
}

/* Resolves and runs ip->f; false after a failure (the message is written).
 * Only this function calls setjmp, and nothing after a longjmp reads its
 * locals. */
static bool run_func(interp *ip, void *const *data)
{
    if (setjmp(ip->fail) != 0)
        return false;
    const ir_func *f = ip->f;
    for (int i = 0; i < f->nparams; i++) {
        const ir_buffer *b = f->params[i];
        if (!b)
            fail(ip, "malformed IR: parameter %d has no buffer", i);
        buffer_bytes(ip, b);
        if (!data || !data[i])
            fail(ip, "no storage for parameter %s", b->name);
        new_bslot(ip, b);
    }
    rstmt *body = f->body ? resolve_stmt(ip, f->body) : NULL;
    prepare(ip, data);
    if (body)
        exec(ip, body);
    return true;
}

bool ir_interp_func(const ir_func *f, void *const *data, char *err, size_t errlen)
{
    if (ir_func_has_vectors(f))   /* vector IR runs as its scalar equivalent */
        return ir_interp_vector_func(f, data, err, errlen);
    if (err && errlen)
        err[0] = '\0';
    interp *ip = calloc(1, sizeof *ip);
    if (!ip) {
        if (err && errlen)
            snprintf(err, errlen, "in @%s: out of memory", f->name);
        return false;
    }
    ip->f = f;
    ip->err = err;
    ip->errlen = errlen;
    ip->arena = ir_arena_new();
    bool ok = run_func(ip, data);
    /* A failure inside ALLOC bodies leaves their storage behind. */
    for (int i = 0; !ok && ip->owned && i < ip->nbslots; i++)
        if (ip->owned[i])
            free(ip->mem[i]);
    ir_arena_free(ip->arena);
    free(ip);
    return ok;
}

/* Element count of b, or -1 when it overflows. */
static int64_t numel_or_neg(const ir_buffer *b)
{
    int64_t n = 1;
    for (int d = 0; d < b->ndim; d++)
        if (b->shape[d] < 0 || __builtin_mul_overflow(n, b->shape[d], &n))
            return -1;
    return n;
}

static void shape_text(char *buf, size_t len, const ir_buffer *b)
{
    char dims[200];
    fmt_indexed(dims, sizeof dims, NULL, b->shape, b->ndim);
    snprintf(buf, len, "%s%s", dt(b->dtype), dims);
}

static int graph_index(const ir_module *m, const ir_buffer *b)
{
    for (int i = 0; i < m->graph.nbufs; i++)
        if (m->graph.bufs[i] == b)
            return i;
    return -1;
}

/* Checks call c's arguments against its callee and fills args[]. */
static bool bind_call_args(const ir_module *m, const ir_graph_call *c, int ci, void **graph_data,
                           void **args, char *err, size_t errlen)
{
    const ir_func *fn = c->fn;
    for (int j = 0; j < c->nargs; j++) {
        const ir_buffer *gb = c->args[j], *pb = fn->params[j];
        int k = gb ? graph_index(m, gb) : -1;
        if (k < 0) {
            snprintf(err, errlen, "call %d of @%s: argument %d is not a graph buffer",
                     ci, fn->name, j);
            return false;
        }
        int64_t gn = numel_or_neg(gb), pn = pb ? numel_or_neg(pb) : -1;
        if (!pb || gb->dtype != pb->dtype || gn != pn || gn < 0) {
            char gs[256], ps[256];
            shape_text(gs, sizeof gs, gb);
            if (pb)
                shape_text(ps, sizeof ps, pb);
            else
                snprintf(ps, sizeof ps, "missing");
            snprintf(err, errlen,
                     "call %d of @%s: argument %d, %s %s, does not fit parameter %s %s",
                     ci, fn->name, j, gb->name, gs, pb ? pb->name : "?", ps);
            return false;
        }
        if (!graph_data[k]) {
            snprintf(err, errlen, "call %d of @%s: graph buffer %s has no storage",
                     ci, fn->name, gb->name);
            return false;
        }
        args[j] = graph_data[k];
    }
    return true;
}

bool ir_interp_module(const ir_module *m, void **graph_data, char *err, size_t errlen)
{
    char dummy[1];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    /* The load calls first, then the run's: ci counts both. */
    for (int ci = 0; ci < m->graph.nloads + m->graph.ncalls; ci++) {
        const ir_graph_call *c = ci < m->graph.nloads ? &m->graph.loads[ci]
                                                      : &m->graph.calls[ci - m->graph.nloads];
        if (!c->fn) {
            snprintf(err, errlen, "call %d of the graph has no function", ci);
            return false;
        }
        if (c->nargs != c->fn->nparams) {
            snprintf(err, errlen, "call %d of @%s passes %d arguments, the function has %d",
                     ci, c->fn->name, c->nargs, c->fn->nparams);
            return false;
        }
        void **args = calloc((size_t)(c->nargs ? c->nargs : 1), sizeof *args);
        if (!args) {
            snprintf(err, errlen, "call %d of @%s: out of memory", ci, c->fn->name);
            return false;
        }
        bool ok = bind_call_args(m, c, ci, graph_data, args, err, errlen) &&
                  ir_interp_func(c->fn, args, err, errlen);
        free(args);
        if (!ok)
            return false;
    }
    return true;
}
