/* ir/verify.c — the structural and type rules of the IR (doc/ir.md, "The
 * verifier").  Passes run it after every change in checking builds, so a
 * pass that breaks the IR is caught right after it, with the function and
 * the offending node named; it never trusts the module it is given (NULL
 * children, out-of-range enums) and never crashes on one.
 *
 * ir_expr_check_node holds the dtype rules of single expression nodes; the
 * parser uses it too, so text and builder follow exactly the same rules.
 */
#include "ir/diag.h"
#include "ir/ir.h"

#include <gmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


/* ---------------------------------------------------------------- node rules */

static bool dtype_ok(ir_dtype t) { return (unsigned)t < IR_NDTYPES; }

static const char *dt(ir_dtype t) { return dtype_ok(t) ? ir_dtype_name(t) : "<bad dtype>"; }

/* "f32[64, 32]" into buf. */
static const char *type_text(const ir_buffer *b, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "%s[", dt(b->dtype));
    for (int i = 0; i < b->ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "",
                              b->shape ? (long long)b->shape[i] : 0LL);
    if (n < size)
        snprintf(buf + n, size - n, "]");
    return buf;
}

#define FAIL(...)                              \
    do {                                       \
        snprintf(msg, size, __VA_ARGS__);      \
        return false;                          \
    } while (0)

/* Index rules shared by loads and stores: one integer index per dimension. */
static bool check_indices(const ir_buffer *b, ir_expr *const *idx, int n, char *msg,
                          size_t size)
{
    char ty[256];
    if (!b)
        FAIL("access without a buffer");
    if (b->ndim < 0 || !dtype_ok(b->dtype))
        FAIL("buffer '%s' has an invalid type", b->name ? b->name : "");
    if (n != b->ndim)
        FAIL("%s is %s but is indexed with %d ind%s", b->name, type_text(b, ty, sizeof ty), n,
             n == 1 ? "ex" : "ices");
    for (int i = 0; i < n; i++) {
        if (!idx || !idx[i])
            FAIL("index %d of %s is missing", i + 1, b->name);
        if (!ir_dtype_is_int(idx[i]->dtype))
            FAIL("index %d of %s is %s, not an integer", i + 1, b->name, dt(idx[i]->dtype));
        if (ir_dtype_is_small_int(idx[i]->dtype))
            FAIL("index %d of %s is %s; convert it to i64", i + 1, b->name, dt(idx[i]->dtype));
    }
    return true;
}

static bool check_constant(const ir_expr *e, char *msg, size_t size)
{
    if (e->kind == IR_INT) {
        if (!ir_dtype_is_int(e->dtype) && e->dtype != IR_BOOL)
            FAIL("integer constant %lld has dtype %s", (long long)e->ival, dt(e->dtype));
        int64_t lo, hi;
        if (ir_dtype_int_range(e->dtype, &lo, &hi) && (e->ival < lo || e->ival > hi))
            FAIL(e->dtype == IR_BOOL ? "bool constant %lld is neither 0 nor 1"
                                     : "integer constant %lld does not fit in %s",
                 (long long)e->ival, dt(e->dtype));
        return true;
    }
    if (!ir_dtype_is_float(e->dtype))
        FAIL("float constant %g has dtype %s", e->fval, dt(e->dtype));
    if (e->dtype == IR_F32 && e->fval == e->fval && (double)(float)e->fval != e->fval)
        FAIL("f32 constant %.17g is not representable in f32", e->fval);
    return true;
}

static bool is_order(ir_expr_kind k) { return k == IR_LT || k == IR_LE || k == IR_GT || k == IR_GE; }

/* Binary operators, infix or written as functions. */
static bool check_binary(const ir_expr *e, ir_dtype *result, char *msg, size_t size)
{
    const char *op = ir_expr_kind_name(e->kind);
    if (!e->a || !e->b)
        FAIL("'%s' is missing an operand", op);
    ir_dtype ta = e->a->dtype, tb = e->b->dtype;
    if (!dtype_ok(ta) || !dtype_ok(tb))
        FAIL("an operand of '%s' has an invalid dtype", op);
    if (ta != tb)
        FAIL("operands of '%s' differ in dtype (%s and %s)", op, dt(ta), dt(tb));
    *result = ta;
    switch (e->kind) {
    case IR_DIV:
        if (!ir_dtype_is_float(ta))
            FAIL("'/' needs float operands, not %s (use floordiv for integers)", dt(ta));
        return true;
    case IR_FLOORDIV:
    case IR_FLOORMOD:
        if (!ir_dtype_is_int(ta) || ir_dtype_is_small_int(ta))
            FAIL("'%s' needs i32 or i64 operands, not %s", op, dt(ta));
        return true;
    case IR_AND:
    case IR_OR:
        if (ta != IR_BOOL)
            FAIL("'%s' needs bool operands, not %s", op, dt(ta));
        *result = IR_BOOL;
        return true;
    case IR_EQ:
    case IR_NE:
        *result = IR_BOOL;
        return true;
    case IR_LT: case IR_LE: case IR_GT: case IR_GE:
        *result = IR_BOOL;
        break;
    default:
        break;
    }
    /* Arithmetic, min/max and ordering need numbers. */
    if (ta == IR_BOOL)
        FAIL("'%s' is not defined on bool", op);
    if (ir_dtype_is_small_int(ta) && e->kind != IR_MIN && e->kind != IR_MAX && !is_order(e->kind))
        FAIL("'%s' is not defined on %s; convert the operands to i32 first", op, dt(ta));
    return true;
}

static bool check_call(const ir_expr *e, ir_dtype *result, char *msg, size_t size)
{
    if ((unsigned)e->fn >= IR_NINTRINSICS)
        FAIL("call of an invalid intrinsic (%d)", (int)e->fn);
    const char *name = ir_intrin_name(e->fn);
    int arity = ir_intrin_arity(e->fn);
    if (e->nargs != arity)
        FAIL("%s takes %d argument%s, not %d", name, arity, arity == 1 ? "" : "s", e->nargs);
    for (int i = 0; i < e->nargs; i++)
        if (!e->args || !e->args[i] || !dtype_ok(e->args[i]->dtype))
            FAIL("argument %d of %s is missing or has an invalid dtype", i + 1, name);
    if (ir_intrin_class(e->fn) == 'r') {
        for (int i = 0; i < e->nargs; i++)
            if (!ir_dtype_is_int(e->args[i]->dtype))
                FAIL("%s needs integer arguments, not %s", name, dt(e->args[i]->dtype));
        *result = IR_I32;
        return true;
    }
    for (int i = 0; i < e->nargs; i++) {
        if (!ir_dtype_is_float(e->args[i]->dtype))
            FAIL("%s needs float arguments, not %s", name, dt(e->args[i]->dtype));
        if (e->args[i]->dtype != e->args[0]->dtype)
            FAIL("arguments of %s differ in dtype (%s and %s)", name, dt(e->args[0]->dtype),
                 dt(e->args[i]->dtype));
    }
    *result = e->args[0]->dtype;
    return true;
}

/* The operand rules of one node (its children are assumed typed already)
 * and the dtype they give it.  For CAST the node's own dtype is the target. */
bool ir_expr_check_node(const ir_expr *e, ir_dtype *result, char *msg, size_t size)
{
    if (!e)
        FAIL("missing expression");
    if ((unsigned)e->kind >= IR_NEXPR_KINDS)
        FAIL("invalid expression kind %d", (int)e->kind);
    if (!dtype_ok(e->dtype))
        FAIL("'%s' node has an invalid dtype (%d)", ir_expr_kind_name(e->kind), (int)e->dtype);
    *result = e->dtype;
    const char *op = ir_expr_kind_name(e->kind);
    switch (ir_expr_kind_class(e->kind)) {
    case 'c':
        return check_constant(e, msg, size);
    case 'v':
        if (!e->var || !e->var->name)
            FAIL("variable reference without a variable");
        if (!dtype_ok(e->var->dtype))
            FAIL("variable '%s' has an invalid dtype", e->var->name);
        *result = e->var->dtype;
        return true;
    case 'l':
        if (!check_indices(e->buf, e->args, e->nargs, msg, size))
            return false;
        *result = e->buf->dtype;
        return true;
    case 'b':
    case 'f':
        return check_binary(e, result, msg, size);
    case 'u':
        if (!e->a || !dtype_ok(e->a->dtype))
            FAIL("'%s' is missing its operand", op);
        if (e->kind == IR_NOT && e->a->dtype != IR_BOOL)
            FAIL("'!' needs a bool operand, not %s", dt(e->a->dtype));
        if (e->kind == IR_NEG && (e->a->dtype == IR_BOOL || ir_dtype_is_small_int(e->a->dtype)))
            FAIL("'-' is not defined on %s", dt(e->a->dtype));
        *result = e->a->dtype;
        return true;
    case 's':
        if (!e->a || !e->b || !e->c || !dtype_ok(e->a->dtype) || !dtype_ok(e->b->dtype) ||
            !dtype_ok(e->c->dtype))
            FAIL("select is missing an operand");
        if (e->c->dtype != IR_BOOL)
            FAIL("select condition is %s, not bool", dt(e->c->dtype));
        if (e->a->dtype != e->b->dtype)
            FAIL("select arms differ in dtype (%s and %s)", dt(e->a->dtype), dt(e->b->dtype));
        *result = e->a->dtype;
        return true;
    case 'k':
        if (!e->a || !dtype_ok(e->a->dtype))
            FAIL("cast is missing its operand");
        return true;
    case 'i':
        return check_call(e, result, msg, size);
    case 'w':
        if (e->kind == IR_LANES) {
            if (e->nargs < 1 || !e->args)
                FAIL("lanes() needs its lanes");
            for (int i = 0; i < e->nargs; i++)
                if (!e->args[i] || e->args[i]->dtype != e->args[0]->dtype)
                    FAIL("the lanes of lanes() differ in dtype");
            *result = e->args[0]->dtype;
            return true;
        }
        if (!e->a || !dtype_ok(e->a->dtype) || (e->kind == IR_RAMP && (!e->b || !dtype_ok(e->b->dtype))))
            FAIL("%s is missing an operand", op);
        *result = e->a->dtype;
        return true;
    }
    FAIL("invalid expression kind %d", (int)e->kind);
}

/* Lanes of the operands of a lane-by-lane node: all `want` (the node's
 * lanes, from its first vector operand); a select's condition may be one
 * scalar for every lane. */
static int max_lanes(const ir_expr *const *xs, int n)
{
    int l = 1;
    for (int i = 0; i < n; i++)
        if (xs[i] && ir_expr_lanes(xs[i]) > l)
            l = ir_expr_lanes(xs[i]);
    return l;
}

bool ir_expr_check_lanes(const ir_expr *e, int *lanes, char *msg, size_t size)
{
    *lanes = 1;
    if (!e || (unsigned)e->kind >= IR_NEXPR_KINDS)
        FAIL("invalid expression");
    const char *op = ir_expr_kind_name(e->kind);
    const ir_expr *ops[3] = {e->a, e->b, NULL};
    int nops = 0;
    switch (ir_expr_kind_class(e->kind)) {
    case 'c':
        if (e->lanes > 1)
            FAIL("a constant has one lane, not %d", e->lanes);
        return true;
    case 'v':
        *lanes = ir_var_lanes(e->var);
        return true;
    case 'w':
        if (e->kind == IR_LANES) {
            if (e->nargs < 2 || e->nargs > IR_MAX_LANES || e->lanes != e->nargs)
                FAIL("lanes() has %d lanes, not 2 to %d", e->nargs, IR_MAX_LANES);
            for (int i = 0; i < e->nargs; i++)
                if (ir_expr_lanes(e->args[i]) != 1)
                    FAIL("the lanes of lanes() are vectors, not scalars");
            *lanes = e->nargs;
            return true;
        }
        if (e->lanes < 2 || e->lanes > IR_MAX_LANES)
            FAIL("%s has %d lanes, not 2 to %d", op, e->lanes, IR_MAX_LANES);
        if (ir_expr_lanes(e->a) != 1 || (e->kind == IR_RAMP && ir_expr_lanes(e->b) != 1))
            FAIL("the operands of %s are vectors, not scalars", op);
        if (e->kind == IR_RAMP && (!ir_dtype_is_int(e->a->dtype) || e->b->dtype != e->a->dtype))
            FAIL("ramp needs a base and a stride of one integer dtype, not %s and %s",
                 dt(e->a->dtype), dt(e->b->dtype));
        *lanes = e->lanes;
        return true;
    case 'l': case 'i':
        *lanes = max_lanes((const ir_expr *const *)e->args, e->nargs);
        for (int i = 0; i < e->nargs; i++)
            if (ir_expr_lanes(e->args[i]) != 1 && ir_expr_lanes(e->args[i]) != *lanes)
                FAIL("the %s of %s have %d and %d lanes", e->kind == IR_LOAD ? "indices"
                     : "arguments", e->kind == IR_LOAD ? "a load" : op, *lanes,
                     ir_expr_lanes(e->args[i]));
        if (e->kind == IR_CALL && *lanes > 1) {
            if (ir_intrin_class(e->fn) == 'r')
                FAIL("%s takes scalars, not vectors", op);
            for (int i = 0; i < e->nargs; i++)
                if (ir_expr_lanes(e->args[i]) != *lanes)
                    FAIL("the arguments of %s mix scalars and vectors", ir_intrin_name(e->fn));
        }
        break;
    case 's':
        ops[2] = e->c;
        nops = 3;
        break;
    case 'b': case 'f':
        nops = 2;
        break;
    default:
        nops = 1;
        break;
    }
    if (nops) {
        *lanes = max_lanes(ops, nops);
        for (int i = 0; i < (e->kind == IR_SELECT ? 2 : nops); i++)
            if (ops[i] && ir_expr_lanes(ops[i]) != *lanes)
                FAIL("the operands of '%s' have %d and %d lanes%s", op, *lanes,
                     ir_expr_lanes(ops[i]), ir_expr_lanes(ops[i]) == 1 ? " (broadcast the scalar)"
                                                                       : "");
        if (e->kind == IR_SELECT && e->c && ir_expr_lanes(e->c) != 1 &&
            ir_expr_lanes(e->c) != *lanes)
            FAIL("select's condition has %d lanes, its arms %d", ir_expr_lanes(e->c), *lanes);
    }
    if (e->lanes > 1 && *lanes != e->lanes)
        FAIL("'%s' node has %d lanes, but its operands make it %d", op, e->lanes, *lanes);
    return true;
}

#undef FAIL

/* Element counts compared exactly, whatever their size. */
bool ir_buffer_same_numel(const ir_buffer *a, const ir_buffer *b)
{
    mpz_t na, nb;
    mpz_init_set_ui(na, 1);
    mpz_init_set_ui(nb, 1);
    for (int i = 0; i < a->ndim; i++)
        mpz_mul_si(na, na, (long)a->shape[i]);
    for (int i = 0; i < b->ndim; i++)
        mpz_mul_si(nb, nb, (long)b->shape[i]);
    bool same = mpz_cmp(na, nb) == 0;
    mpz_clear(na);
    mpz_clear(nb);
    return same;
}

/* ---------------------------------------------------------------- verifier state */

/* A variable in scope; `loop` marks FOR variables, the only ones a block
 * iteration variable's binding may use. */
typedef struct vvar {
    const ir_var *var;
    bool loop;
} vvar;

/* Stop reporting after this many problems in one run: the first ones name
 * the bug, the rest are usually its echo. */
#define VERIFY_MAX_REPORTS 20

typedef struct verifier {
    const ir_module *m;
    diag *d;
    char where[160];        /* "verifier" or "verifier (after PASS)" */
    const char *ctx;        /* "@name", "graph", "module" */
    const char *input;      /* the input file whose IR this is (a user's error), or NULL */
    int nproblems;
    vvar *vars;
    int nvars, capvars;
    const ir_buffer **bufs;
    int nbufs, capbufs;
    /* the module's functions and the graph's buffers, sorted by address
     * (membership by binary search: a graph of 10,000 calls verifies in
     * n log n, not n^2) */
    const void **funcs_sorted, **gbufs_sorted;
    int nfuncs_sorted, ngbufs_sorted;
} verifier;

static void *vgrow(void *p, int *cap, size_t elem)
{
    *cap = *cap ? 2 * *cap : 16;
    void *q = realloc(p, elem * (size_t)*cap);
    if (!q) {
        ir_out_of_memory();
    }
    return q;
}

static void fail(verifier *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(verifier *v, const char *fmt, ...)
{
    if (++v->nproblems > VERIFY_MAX_REPORTS)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (v->input)
        diag_error(v->d, (diag_loc){v->input, 0, 0}, "in %s: %s", v->ctx, msg);
    else
        diag_internal(v->d, v->where, "in %s: %s", v->ctx, msg);
}

/* The text of an expression, shortened, to name the offending node. */
static const char *expr_text(const ir_expr *e, char *buf, size_t size)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        snprintf(buf, size, "?");
        return buf;
    }
    ir_print_expr(f, e);
    fclose(f);
    if (len + 1 > size && size > 4)
        snprintf(buf, size, "%.*s...", (int)(size - 4), text);
    else
        snprintf(buf, size, "%s", text ? text : "");
    free(text);
    return buf;
}

static const char *vname(const ir_var *var) { return var && var->name ? var->name : "<unnamed>"; }
static const char *bname(const ir_buffer *b) { return b && b->name ? b->name : "<unnamed>"; }

static const vvar *find_var(const verifier *v, const ir_var *var)
{
    for (int i = v->nvars - 1; i >= 0; i--)
        if (v->vars[i].var == var)
            return &v->vars[i];
    return NULL;
}

static bool buf_in_scope(const verifier *v, const ir_buffer *b)
{
    for (int i = v->nbufs - 1; i >= 0; i--)
        if (v->bufs[i] == b)
            return true;
    return false;
}

/* Brings a variable into scope; it must not be bound already, and its name
 * must not hide another variable's (the text could not tell them apart). */
static void bind_var(verifier *v, const ir_var *var, bool loop)
{
    if (!var) {
        fail(v, "a loop, block or let binds no variable");
        return;
    }
    if (find_var(v, var))
        fail(v, "variable '%s' is bound again inside its own scope", vname(var));
    else
        for (int i = 0; i < v->nvars; i++)
            if (v->vars[i].var->name && var->name && strcmp(v->vars[i].var->name, var->name) == 0) {
                fail(v, "two variables named '%s' are in scope at once", var->name);
                break;
            }
    if (v->nvars == v->capvars)
        v->vars = vgrow(v->vars, &v->capvars, sizeof *v->vars);
    v->vars[v->nvars++] = (vvar){var, loop};
}

static void bind_buf(verifier *v, const ir_buffer *b)
{
    for (int i = 0; i < v->nbufs; i++)
        if (v->bufs[i] == b || (b->name && v->bufs[i]->name && strcmp(v->bufs[i]->name, b->name) == 0)) {
            fail(v, "two buffers named '%s' are in scope at once", bname(b));
            break;
        }
    if (v->nbufs == v->capbufs)
        v->bufs = (const ir_buffer **)vgrow(v->bufs, &v->capbufs, sizeof *v->bufs);
    v->bufs[v->nbufs++] = b;
}

static bool check_shape(verifier *v, const ir_buffer *b)
{
    if (!dtype_ok(b->dtype)) {
        fail(v, "buffer '%s' has an invalid dtype (%d)", bname(b), (int)b->dtype);
        return false;
    }
    if (b->ndim < 0 || (b->ndim > 0 && !b->shape)) {
        fail(v, "buffer '%s' has an invalid shape", bname(b));
        return false;
    }
    for (int i = 0; i < b->ndim; i++)
        if (b->shape[i] < 1) {
            fail(v, "buffer '%s' has extent %lld in dimension %d", bname(b),
                 (long long)b->shape[i], i + 1);
            return false;
        }
    return true;
}

/* ---------------------------------------------------------------- expressions */

/* Checks e and its children; runtime calls are allowed only at the top of
 * an EVAL statement (`runtime_ok`).  Returns false if e is unusable. */
static bool verify_expr(verifier *v, const ir_expr *e, bool runtime_ok)
{
    char msg[512], text[160];
    if (!e) {
        fail(v, "missing expression");
        return false;
    }
    if ((unsigned)e->kind >= IR_NEXPR_KINDS) {
        fail(v, "invalid expression kind %d", (int)e->kind);
        return false;
    }
    bool ok = true;
    switch (ir_expr_kind_class(e->kind)) {
    case 'l':
    case 'i':
        for (int i = 0; i < e->nargs; i++)
            ok = (e->args && verify_expr(v, e->args[i], false)) && ok;
        break;
    case 'b':
    case 'f':
        ok = verify_expr(v, e->a, false) && ok;
        ok = verify_expr(v, e->b, false) && ok;
        break;
    case 's':
        ok = verify_expr(v, e->c, false) && ok;
        ok = verify_expr(v, e->a, false) && ok;
        ok = verify_expr(v, e->b, false) && ok;
        break;
    case 'w':
        for (int i = 0; i < e->nargs; i++)
            ok = (e->args && verify_expr(v, e->args[i], false)) && ok;
        if (e->kind != IR_LANES)
            ok = verify_expr(v, e->a, false) && ok;
        if (e->kind == IR_RAMP)
            ok = verify_expr(v, e->b, false) && ok;
        break;
    case 'u':
    case 'k':
        ok = verify_expr(v, e->a, false) && ok;
        break;
    default:
        break;
    }
    if (!ok)
        return false;
    ir_dtype want;
    int lanes;
    if (!ir_expr_check_node(e, &want, msg, sizeof msg) ||
        !ir_expr_check_lanes(e, &lanes, msg, sizeof msg)) {
        fail(v, "%s: %s", msg, expr_text(e, text, sizeof text));
        return false;
    }
    if (lanes != ir_expr_lanes(e)) {
        fail(v, "'%s' node has %d lane%s, but its operands make it %d: %s",
             ir_expr_kind_name(e->kind), ir_expr_lanes(e), ir_expr_lanes(e) == 1 ? "" : "s",
             lanes, expr_text(e, text, sizeof text));
        return false;
    }
    if (want != e->dtype) {
        fail(v, "'%s' node has dtype %s, but its operands make it %s: %s",
             ir_expr_kind_name(e->kind), dt(e->dtype), dt(want), expr_text(e, text, sizeof text));
        return false;
    }
    if (e->kind == IR_VAR && !find_var(v, e->var)) {
        fail(v, "variable '%s' is used outside its scope", vname(e->var));
        return false;
    }
    if (e->kind == IR_LOAD && !buf_in_scope(v, e->buf)) {
        fail(v, "load of buffer '%s', which is neither a parameter nor an enclosing alloc: %s",
             bname(e->buf), expr_text(e, text, sizeof text));
        return false;
    }
    if (e->kind == IR_CALL && ir_intrin_class(e->fn) == 'r' && !runtime_ok) {
        fail(v, "%s is called outside an evaluate statement: %s", ir_intrin_name(e->fn),
             expr_text(e, text, sizeof text));
        return false;
    }
    return true;
}

/* An expression that must have a given dtype. */
static void verify_typed(verifier *v, const ir_expr *e, ir_dtype want, const char *what)
{
    char text[160];
    if (verify_expr(v, e, false) && (e->dtype != want || ir_expr_lanes(e) != 1))
        fail(v, "%s is %s, not %s: %s", what, ir_expr_lanes(e) != 1 ? "a vector" : dt(e->dtype),
             dt(want), expr_text(e, text, sizeof text));
}

/* ---------------------------------------------------------------- block access sets */

/* Buffers a block's statements load, store and allocate. */
typedef struct access {
    const ir_buffer **loads, **stores, **allocs;
    int nloads, nstores, nallocs, capl, caps, capa;
} access;

static void add_buf(const ir_buffer ***arr, int *n, int *cap, const ir_buffer *b)
{
    for (int i = 0; i < *n; i++)
        if ((*arr)[i] == b)
            return;
    if (*n == *cap)
        *arr = (const ir_buffer **)vgrow(*arr, cap, sizeof **arr);
    (*arr)[(*n)++] = b;
}

static void collect_expr(access *a, const ir_expr *e)
{
    if (!e || (unsigned)e->kind >= IR_NEXPR_KINDS)
        return;
    if (e->kind == IR_LOAD && e->buf)
        add_buf(&a->loads, &a->nloads, &a->capl, e->buf);
    if (e->kind == IR_LOAD || e->kind == IR_CALL)
        for (int i = 0; i < e->nargs && e->args; i++)
            collect_expr(a, e->args[i]);
    if (ir_expr_kind_class(e->kind) != 'c' && e->kind != IR_VAR) {
        collect_expr(a, e->a);
        collect_expr(a, e->b);
        collect_expr(a, e->c);
    }
}

static void collect_stmt(access *a, const ir_stmt *s)
{
    if (!s || (unsigned)s->kind >= IR_NSTMT_KINDS)
        return;
    if (s->kind == IR_S_STORE && s->buf)
        add_buf(&a->stores, &a->nstores, &a->caps, s->buf);
    if (s->kind == IR_S_ALLOC && s->buf)
        add_buf(&a->allocs, &a->nallocs, &a->capa, s->buf);
    collect_expr(a, s->lo);
    collect_expr(a, s->hi);
    for (int i = 0; i < s->niters && s->iters; i++)
        collect_expr(a, s->iters[i].binding);
    for (int i = 0; i < s->nargs && s->args; i++)
        collect_expr(a, s->args[i]);
    collect_expr(a, s->value);
    collect_expr(a, s->cond);
    collect_stmt(a, s->init);
    for (int i = 0; i < s->nbody && s->body; i++)
        collect_stmt(a, s->body[i]);
    collect_stmt(a, s->orelse);
}

static bool listed(ir_buffer *const *list, int n, const ir_buffer *b)
{
    for (int i = 0; i < n; i++)
        if (list && list[i] == b)
            return true;
    return false;
}

static bool allocated(const access *a, const ir_buffer *b)
{
    for (int i = 0; i < a->nallocs; i++)
        if (a->allocs[i] == b)
            return true;
    return false;
}

/* reads/writes must name buffers in scope and cover every buffer the block
 * loads or stores, except those it allocates itself. */
static void check_block_access(verifier *v, const ir_stmt *s)
{
    const char *name = s->name ? s->name : "<unnamed>";
    for (int i = 0; i < s->nreads; i++)
        if (!s->reads || !s->reads[i] || !buf_in_scope(v, s->reads[i]))
            fail(v, "block '%s' lists '%s' in reads, but it is not a buffer in scope", name,
                 s->reads ? bname(s->reads[i]) : "?");
    for (int i = 0; i < s->nwrites; i++)
        if (!s->writes || !s->writes[i] || !buf_in_scope(v, s->writes[i]))
            fail(v, "block '%s' lists '%s' in writes, but it is not a buffer in scope", name,
                 s->writes ? bname(s->writes[i]) : "?");
    access a = {0};
    collect_stmt(&a, s->init);
    for (int i = 0; i < s->nbody && s->body; i++)
        collect_stmt(&a, s->body[i]);
    for (int i = 0; i < a.nloads; i++)
        if (!allocated(&a, a.loads[i]) && !listed(s->reads, s->nreads, a.loads[i]))
            fail(v, "block '%s' loads '%s' but does not list it in reads", name,
                 bname(a.loads[i]));
    for (int i = 0; i < a.nstores; i++)
        if (!allocated(&a, a.stores[i]) && !listed(s->writes, s->nwrites, a.stores[i]))
            fail(v, "block '%s' stores to '%s' but does not list it in writes", name,
                 bname(a.stores[i]));
    free(a.loads);
    free(a.stores);
    free(a.allocs);
}

/* ---------------------------------------------------------------- statements */

static void verify_stmt(verifier *v, const ir_stmt *s);

static const ir_stmt *body0(const ir_stmt *s)
{
    return s->nbody > 0 && s->body ? s->body[0] : NULL;
}

/* A binding may only use FOR variables in scope. */
static bool binding_uses_loop_vars_only(const verifier *v, const ir_expr *e, const ir_var **bad)
{
    if (!e || (unsigned)e->kind >= IR_NEXPR_KINDS)
        return true;
    if (e->kind == IR_VAR) {
        const vvar *s = find_var(v, e->var);
        if (!s || !s->loop) {
            *bad = e->var;
            return false;
        }
        return true;
    }
    for (int i = 0; i < e->nargs && e->args; i++)
        if (!binding_uses_loop_vars_only(v, e->args[i], bad))
            return false;
    if (ir_expr_kind_class(e->kind) == 'c')
        return true;
    return binding_uses_loop_vars_only(v, e->a, bad) &&
           binding_uses_loop_vars_only(v, e->b, bad) &&
           binding_uses_loop_vars_only(v, e->c, bad);
}

static void verify_block(verifier *v, const ir_stmt *s)
{
    const char *name = s->name ? s->name : "<unnamed>";
    if (!s->name)
        fail(v, "a block has no name");
    if (s->niters > 0 && !s->iters) {
        fail(v, "block '%s' has no iteration variable array", name);
        return;
    }
    for (int i = 0; i < s->niters; i++) {
        const ir_itervar *iv = &s->iters[i];
        const ir_var *bad = NULL;
        if (!iv->var) {
            fail(v, "iteration variable %d of block '%s' is missing", i + 1, name);
            continue;
        }
        if (iv->var->dtype != IR_I64)
            fail(v, "iteration variable '%s' of block '%s' is %s, not i64", vname(iv->var), name,
                 dt(iv->var->dtype));
        if ((unsigned)iv->kind >= IR_NITER_KINDS)
            fail(v, "iteration variable '%s' of block '%s' has an invalid kind", vname(iv->var),
                 name);
        if (iv->extent < 1)
            fail(v, "iteration variable '%s' of block '%s' has extent %lld", vname(iv->var), name,
                 (long long)iv->extent);
        char what[256];
        snprintf(what, sizeof what, "the binding of '%s' in block '%s'", vname(iv->var), name);
        verify_typed(v, iv->binding, IR_I64, what);
        if (!binding_uses_loop_vars_only(v, iv->binding, &bad))
            fail(v, "the binding of '%s' in block '%s' uses '%s', which is not an enclosing loop "
                    "variable", vname(iv->var), name, vname(bad));
    }
    check_block_access(v, s);
    int mark = v->nvars;
    for (int i = 0; i < s->niters; i++)
        if (s->iters[i].var)
            bind_var(v, s->iters[i].var, false);
    verify_stmt(v, s->init);
    verify_stmt(v, body0(s));
    v->nvars = mark;
}

/* The element a store or prefetch names (`what`: "store", "prefetch"): a
 * buffer in scope and its indices; false without a buffer. */
static bool verify_element(verifier *v, const ir_stmt *s, const char *what, const char *of)
{
    char msg[512];
    if (!s->buf) {
        fail(v, "a %s has no buffer", what);
        return false;
    }
    for (int i = 0; i < s->nargs; i++)
        if (s->args)
            verify_expr(v, s->args[i], false);
    if (!check_indices(s->buf, s->args, s->nargs, msg, sizeof msg))
        fail(v, "%s: %s", what, msg);
    if (!buf_in_scope(v, s->buf))
        fail(v, "%s %s buffer '%s', which is neither a parameter nor an enclosing alloc", what,
             of, bname(s->buf));
    return true;
}

static void verify_store(verifier *v, const ir_stmt *s)
{
    char ty[256];
    if (!verify_element(v, s, "store", "to"))
        return;
    if (verify_expr(v, s->value, false) && s->value->dtype != s->buf->dtype)
        fail(v, "store to %s: the value is %s, but %s is %s", bname(s->buf),
             dt(s->value->dtype), bname(s->buf), type_text(s->buf, ty, sizeof ty));
    /* a vector of L values goes to L places: the indices have L lanes */
    int lanes = ir_expr_lanes(s->value), idx = 1;
    for (int i = 0; i < s->nargs && s->args; i++)
        if (s->args[i] && ir_expr_lanes(s->args[i]) != 1) {
            if (idx != 1 && ir_expr_lanes(s->args[i]) != idx)
                fail(v, "store to %s: indices of %d and %d lanes", bname(s->buf), idx,
                     ir_expr_lanes(s->args[i]));
            idx = ir_expr_lanes(s->args[i]);
        }
    if (s->value && idx != lanes)
        fail(v, "store to %s: a value of %d lane%s at indices of %d", bname(s->buf), lanes,
             lanes == 1 ? "" : "s", idx);
}

/* A prefetch names one element like a scalar load, but its indices may lie
 * outside the buffer (it is a hint), so nothing checks their range. */
static void verify_prefetch(verifier *v, const ir_stmt *s)
{
    if (!verify_element(v, s, "prefetch", "of"))
        return;
    for (int i = 0; i < s->nargs && s->args; i++)
        if (s->args[i] && ir_expr_lanes(s->args[i]) != 1)
            fail(v, "prefetch of %s: index %d has %d lanes (a prefetch names one element)",
                 bname(s->buf), i + 1, ir_expr_lanes(s->args[i]));
}

static void verify_stmt(verifier *v, const ir_stmt *s)
{
    char text[160];
    if (!s)
        return;
    if ((unsigned)s->kind >= IR_NSTMT_KINDS) {
        fail(v, "invalid statement kind %d", (int)s->kind);
        return;
    }
    if (s->kind != IR_S_SEQ && s->kind != IR_S_STORE && s->kind != IR_S_EVAL &&
        s->kind != IR_S_ASSERT && s->nbody > 1)
        fail(v, "%s statement has %d bodies", ir_stmt_kind_name(s->kind), s->nbody);
    int mark = v->nvars, bmark = v->nbufs;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->nbody; i++) {
            if (!s->body || !s->body[i])
                fail(v, "statement %d of a sequence is missing", i + 1);
            else
                verify_stmt(v, s->body[i]);
        }
        break;
    case IR_S_FOR:
        if (s->var && s->var->dtype != IR_I64)
            fail(v, "loop variable '%s' is %s, not i64", vname(s->var), dt(s->var->dtype));
        if ((unsigned)s->for_kind >= IR_NFOR_KINDS)
            fail(v, "loop '%s' has an invalid kind (%d)", vname(s->var), (int)s->for_kind);
        verify_typed(v, s->lo, IR_I64, "the lower bound of a loop");
        verify_typed(v, s->hi, IR_I64, "the upper bound of a loop");
        if (s->step < 0)
            fail(v, "loop '%s' has step %lld", vname(s->var), (long long)s->step);
        bind_var(v, s->var, true);
        verify_stmt(v, body0(s));
        break;
    case IR_S_BLOCK:
        verify_block(v, s);
        break;
    case IR_S_STORE:
        verify_store(v, s);
        break;
    case IR_S_PREFETCH:
        verify_prefetch(v, s);
        break;
    case IR_S_ALLOC:
        if (!s->buf) {
            fail(v, "an alloc has no buffer");
            break;
        }
        if (s->buf->role != IR_BUF_LOCAL)
            fail(v, "alloc of '%s': its role is %s, not local", bname(s->buf),
                 (unsigned)s->buf->role < IR_NBUF_ROLES ? ir_buf_role_name(s->buf->role) : "?");
        if ((unsigned)s->buf->scope >= IR_NSCOPES)
            fail(v, "alloc of '%s' has an invalid scope (%d)", bname(s->buf), (int)s->buf->scope);
        if (s->buf->filled && ir_stmt_first_access(body0(s), s->buf) != IR_ACCESS_STORE)
            fail(v, "alloc of '%s' is marked filled, but its body does not store to it before "
                 "it reads it", bname(s->buf));
        check_shape(v, s->buf);
        bind_buf(v, s->buf);
        verify_stmt(v, body0(s));
        break;
    case IR_S_LET:
        if (s->var && verify_expr(v, s->value, false) && s->value->dtype != s->var->dtype)
            fail(v, "let '%s' is %s, but its value is %s: %s", vname(s->var), dt(s->var->dtype),
                 dt(s->value->dtype), expr_text(s->value, text, sizeof text));
        else if (s->var && s->value && ir_expr_lanes(s->value) != ir_var_lanes(s->var))
            fail(v, "let '%s' has %d lane%s, but its value %d: %s", vname(s->var),
                 ir_var_lanes(s->var), ir_var_lanes(s->var) == 1 ? "" : "s",
                 ir_expr_lanes(s->value), expr_text(s->value, text, sizeof text));
        bind_var(v, s->var, false);
        verify_stmt(v, body0(s));
        break;
    case IR_S_IF:
        verify_typed(v, s->cond, IR_BOOL, "the condition of an if");
        verify_stmt(v, body0(s));
        verify_stmt(v, s->orelse);
        break;
    case IR_S_EVAL:
        if (!s->value || s->value->kind != IR_CALL || (unsigned)s->value->fn >= IR_NINTRINSICS ||
            ir_intrin_class(s->value->fn) != 'r')
            fail(v, "evaluate of something other than a runtime call: %s",
                 expr_text(s->value, text, sizeof text));
        else
            verify_expr(v, s->value, true);
        break;
    case IR_S_ASSERT:
        verify_typed(v, s->cond, IR_BOOL, "the condition of an assert");
        break;
    default:
        break;
    }
    v->nvars = mark;
    v->nbufs = bmark;
}

/* ---------------------------------------------------------------- functions, graph, module */

static void verify_func(verifier *v, const ir_func *f)
{
    v->nvars = 0;
    v->nbufs = 0;
    for (int i = 0; i < f->nparams; i++) {
        const ir_buffer *b = f->params ? f->params[i] : NULL;
        if (!b) {
            fail(v, "parameter %d is missing", i + 1);
            continue;
        }
        if (b->role != IR_BUF_ARG)
            fail(v, "parameter '%s' has role %s, not arg", bname(b),
                 (unsigned)b->role < IR_NBUF_ROLES ? ir_buf_role_name(b->role) : "?");
        check_shape(v, b);
        bind_buf(v, b);
    }
    for (int i = 0; i < f->nattrs; i++) {
        if (!f->attrs[i].key || !f->attrs[i].value) {
            fail(v, "attribute %d has no key or no value", i + 1);
            continue;
        }
        for (int j = 0; j < i; j++)
            if (f->attrs[j].key && strcmp(f->attrs[j].key, f->attrs[i].key) == 0)
                fail(v, "attribute '%s' is given twice", f->attrs[i].key);
    }
    verify_stmt(v, f->body);
}

/* ---------------------------------------------------------------- accesses out of range
 *
 * For a user's .tir (the builder and the passes never write such code), an
 * access whose index is provably out of range is an error: the compiled
 * kernel would write or read outside its buffer.  Ranges come from for
 * loops with constant bounds and the block iteration variables bound to
 * them; an access that only some iterations reach (inside an if, a select
 * arm, the right of && or ||, after an assert, in a block's init) is not
 * judged, nor one whose index depends on data or lets. */

/* [lo, hi] holds every value of an index; `attained`: lo and hi are taken
 * by some iteration (a sum of multiples of distinct loop variables). */
typedef struct vrange {
    int64_t lo, hi;
    bool known, attained;
} vrange;

/* What the ranges are computed from: the enclosing loops with constant,
 * non-empty bounds, the enclosing blocks' iteration variables, and the
 * loop variables one index uses (each may be used once to stay attained). */
typedef struct range_ctx {
    verifier *v;
    struct { const ir_var *var; int64_t lo, hi; } loops[64];
    int nloops;
    const ir_itervar *iters[64];
    int niters;
    const ir_var *used[64];
    int nused;
} range_ctx;

static vrange range_of(range_ctx *c, const ir_expr *e)
{
    vrange r = {0, 0, false, false}, a, b;
    switch (e->kind) {
    case IR_INT:
        return (vrange){e->ival, e->ival, true, true};
    case IR_VAR:
        for (int i = c->nloops - 1; i >= 0; i--)
            if (c->loops[i].var == e->var) {
                bool again = false;
                for (int k = 0; k < c->nused; k++)
                    again |= c->used[k] == e->var;
                if (!again && c->nused < 64)
                    c->used[c->nused++] = e->var;
                return (vrange){c->loops[i].lo, c->loops[i].hi, true, !again};
            }
        for (int i = c->niters - 1; i >= 0; i--)
            if (c->iters[i]->var == e->var && c->iters[i]->binding)
                return range_of(c, c->iters[i]->binding);
        return r;
    case IR_ADD:
    case IR_SUB:
        a = range_of(c, e->a);
        b = range_of(c, e->b);
        if (!a.known || !b.known)
            return r;
        r.known = e->kind == IR_ADD
                      ? !__builtin_add_overflow(a.lo, b.lo, &r.lo) &&
                            !__builtin_add_overflow(a.hi, b.hi, &r.hi)
                      : !__builtin_sub_overflow(a.lo, b.hi, &r.lo) &&
                            !__builtin_sub_overflow(a.hi, b.lo, &r.hi);
        r.attained = r.known && a.attained && b.attained;
        return r;
    case IR_MUL:
        a = range_of(c, e->a);
        b = range_of(c, e->b);
        if (!a.known || !b.known || (a.lo != a.hi && b.lo != b.hi))
            return r;   /* only multiples by a constant */
        if (a.lo != a.hi) {
            vrange t = a;
            a = b;
            b = t;
        }
        int64_t x = 0, y = 0;
        r.known = !__builtin_mul_overflow(a.lo, b.lo, &x) && !__builtin_mul_overflow(a.lo, b.hi, &y);
        r.lo = x < y ? x : y;
        r.hi = x < y ? y : x;
        r.attained = r.known && b.attained;
        return r;
    default:
        return r;
    }
}

/* Judges one access: buf[args]. */
static void check_access(range_ctx *c, const char *what, const ir_buffer *buf,
                         ir_expr *const *args, int nargs)
{
    for (int d = 0; d < nargs && d < buf->ndim; d++) {
        c->nused = 0;
        vrange r = range_of(c, args[d]);
        int64_t n = buf->shape[d];
        bool never = r.known && (r.hi < 0 || r.lo >= n);
        bool sometimes = r.known && r.attained && (r.lo < 0 || r.hi >= n);
        if (never || sometimes) {
            char text[160];
            fail(c->v, "%s %s: index %s ranges over [%lld, %lld], %s outside [0, %lld) of "
                 "dimension %d; the compiled kernel would %s outside the buffer", what,
                 bname(buf), expr_text(args[d], text, sizeof text), (long long)r.lo,
                 (long long)r.hi, never ? "all" : "partly", (long long)n, d,
                 strcmp(what, "store to") == 0 ? "write" : "read");
        }
    }
}

/* The loads every evaluation of e performs. */
static void check_loads(range_ctx *c, const ir_expr *e)
{
    if (!e)
        return;
    if (e->kind == IR_LOAD && e->buf)
        check_access(c, "load of", e->buf, e->args, e->nargs);
    for (int i = 0; i < e->nargs; i++)
        check_loads(c, e->args[i]);
    if (e->kind == IR_SELECT) {
        check_loads(c, e->c);   /* the arms are guarded */
        return;
    }
    check_loads(c, e->a);
    if (e->kind != IR_AND && e->kind != IR_OR)   /* the right side is guarded */
        check_loads(c, e->b);
    check_loads(c, e->c);
}

static void check_ranges(range_ctx *c, const ir_stmt *s)
{
    if (!s)
        return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->nbody; i++) {
            check_ranges(c, s->body[i]);
            if (s->body[i] && s->body[i]->kind == IR_S_ASSERT)
                return;   /* what follows runs only if it held */
        }
        return;
    case IR_S_FOR: {
        bool constant = s->lo && s->hi && s->lo->kind == IR_INT && s->hi->kind == IR_INT;
        if (constant && s->lo->ival >= s->hi->ival)
            return;   /* never runs */
        bool pushed = constant && c->nloops < 64;
        if (pushed) {
            c->loops[c->nloops].var = s->var;
            c->loops[c->nloops].lo = s->lo->ival;
            /* lo..hi step S: the last value is lo + S*floor((hi-lo-1)/S) */
            c->loops[c->nloops].hi = s->lo->ival + (s->hi->ival - 1 - s->lo->ival) /
                                                   ir_for_step(s) * ir_for_step(s);
            c->nloops++;
        }
        check_ranges(c, s->nbody ? s->body[0] : NULL);
        c->nloops -= pushed;
        return;
    }
    case IR_S_BLOCK: {
        int n0 = c->niters;
        for (int i = 0; i < s->niters && c->niters < 64; i++)
            c->iters[c->niters++] = &s->iters[i];
        check_ranges(c, s->nbody ? s->body[0] : NULL);   /* not init: it is guarded */
        c->niters = n0;
        return;
    }
    case IR_S_STORE:
        if (s->buf)
            check_access(c, "store to", s->buf, s->args, s->nargs);
        for (int i = 0; i < s->nargs; i++)
            check_loads(c, s->args[i]);
        check_loads(c, s->value);
        return;
    case IR_S_LET:
        check_loads(c, s->value);
        check_ranges(c, s->nbody ? s->body[0] : NULL);
        return;
    case IR_S_ALLOC:
        check_ranges(c, s->nbody ? s->body[0] : NULL);
        return;
    case IR_S_IF:
    case IR_S_ASSERT:
        check_loads(c, s->cond);   /* the branches are guarded */
        return;
    case IR_S_EVAL:
        check_loads(c, s->value);
        return;
    case IR_S_PREFETCH:   /* its own element may lie outside: only its indices' loads count */
        for (int i = 0; i < s->nargs; i++)
            check_loads(c, s->args[i]);
        return;
    default:
        return;
    }
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;
    return x < y ? -1 : x > y;
}

/* A sorted malloc'd copy of the n non-NULL pointers of p (*nout of them). */
static const void **sorted_ptrs(const void *const *p, int n, int *nout)
{
    const void **s = malloc(sizeof *s * (size_t)(n > 0 ? n : 1));
    if (!s)
        ir_out_of_memory();
    int k = 0;
    for (int i = 0; i < n; i++)
        if (p[i])
            s[k++] = p[i];
    qsort(s, (size_t)k, sizeof *s, cmp_ptr);
    *nout = k;
    return s;
}

static bool has_ptr(const void *const *sorted, int n, const void *p)
{
    return p && bsearch(&p, sorted, (size_t)n, sizeof *sorted, cmp_ptr) != NULL;
}

static bool is_module_func(const verifier *v, const ir_func *f)
{
    return has_ptr(v->funcs_sorted, v->nfuncs_sorted, f);
}

static bool is_graph_buffer(const verifier *v, const ir_buffer *b)
{
    return has_ptr(v->gbufs_sorted, v->ngbufs_sorted, b);
}

/* later[i]: whether the name of one of items[0..i) equals items[i]'s
 * (NULL items and names never do),
 * by sorting (name, index) pairs: duplicates are reported in the order of
 * the list, each after its first occurrence.  Malloc'd. */
typedef struct named {
    const char *name;
    int i;
} named;

static int cmp_named(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

static const char *func_name(const void *f) { return f ? ((const ir_func *)f)->name : NULL; }
static const char *buf_name(const void *b) { return b ? ((const ir_buffer *)b)->name : NULL; }

static bool *later_duplicates(const void *const *items, int n, const char *(*name)(const void *))
{
    bool *later = calloc((size_t)(n > 0 ? n : 1), sizeof *later);
    named *names = malloc(sizeof *names * (size_t)(n > 0 ? n : 1));
    if (!later || !names)
        ir_out_of_memory();
    int k = 0;
    for (int i = 0; i < n; i++)
        if (name(items[i]))
            names[k++] = (named){name(items[i]), i};
    qsort(names, (size_t)k, sizeof *names, cmp_named);
    for (int i = 1; i < k; i++)
        if (strcmp(names[i - 1].name, names[i].name) == 0)
            later[names[i].i] = true;
    free(names);
    return later;
}

static void verify_call(verifier *v, const ir_graph *g, const ir_graph_call *c)
{
    char ta[256], tp[256];
    if (!c->fn || !is_module_func(v, c->fn)) {
        fail(v, "call of %s%s, which is not a function of this module",
             c->fn && c->fn->name ? "@" : "", c->fn && c->fn->name ? c->fn->name : "<null>");
        return;
    }
    const ir_func *f = c->fn;
    if (c->nargs != f->nparams) {
        fail(v, "call @%s passes %d buffer%s, but @%s has %d parameter%s", f->name, c->nargs,
             c->nargs == 1 ? "" : "s", f->name, f->nparams, f->nparams == 1 ? "" : "s");
        return;
    }
    for (int j = 0; j < c->nargs; j++) {
        const ir_buffer *a = c->args ? c->args[j] : NULL, *p = f->params[j];
        if (!a || !is_graph_buffer(v, a)) {
            fail(v, "argument %d of call @%s is not a graph buffer", j + 1, f->name);
            continue;
        }
        if (!p)
            continue;
        if (a->dtype != p->dtype || !ir_buffer_same_numel(a, p))
            fail(v, "call @%s: argument '%s' is %s, but parameter '%s' is %s (the dtype and "
                    "element count must match)", f->name, bname(a), type_text(a, ta, sizeof ta),
                 bname(p), type_text(p, tp, sizeof tp));
    }
}

/* The memory plan (see ir.h): placed buffers are temps inside the arena,
 * aligned, and two of them that are live at the same call share no byte. */
static void verify_plan(verifier *v, const ir_graph *g)
{
    bool any = false;
    for (int i = 0; i < g->nbufs; i++)
        any |= g->bufs[i] && g->bufs[i]->in_arena;
    if (!any && !g->has_arena)
        return;
    if (!g->has_arena) {
        fail(v, "buffers are placed in the arena, but the graph has no arena");
        return;
    }
    if (g->arena_bytes < 0 || g->arena_bytes % IR_ARENA_ALIGN != 0)
        fail(v, "the arena's size %lld is not a multiple of %d bytes", (long long)g->arena_bytes,
             IR_ARENA_ALIGN);
    int *first = malloc(sizeof(int) * (size_t)(g->nbufs + 1));
    int *last = malloc(sizeof(int) * (size_t)(g->nbufs + 1));
    int64_t *bytes = malloc(sizeof(int64_t) * (size_t)(g->nbufs + 1));
    if (!first || !last || !bytes) {
        ir_out_of_memory();
    }
    ir_graph_live_ranges(g, first, last);
    for (int i = 0; i < g->nbufs; i++) {
        const ir_buffer *b = g->bufs[i];
        bytes[i] = -1;
        if (!b || !b->in_arena)
            continue;
        if (b->role != IR_BUF_TEMP) {
            fail(v, "graph buffer '%s' is placed in the arena but has role %s (only temps are)",
                 bname(b), (unsigned)b->role < IR_NBUF_ROLES ? ir_buf_role_name(b->role) : "?");
            continue;
        }
        int64_t n = ir_buffer_bytes(b);
        if (n < 0 || b->arena_offset < 0 || b->arena_offset % IR_ARENA_ALIGN != 0 ||
            b->arena_offset > g->arena_bytes || n > g->arena_bytes - b->arena_offset) {
            fail(v, "temp '%s' (%lld bytes) at arena offset %lld is not an aligned part of the "
                    "%lld-byte arena (offsets are multiples of %d)", bname(b), (long long)n,
                 (long long)b->arena_offset, (long long)g->arena_bytes, IR_ARENA_ALIGN);
            continue;
        }
        bytes[i] = n;
    }
    for (int i = 0; i < g->nbufs; i++) {
        if (bytes[i] < 0 || first[i] < 0)
            continue;
        for (int j = i + 1; j < g->nbufs; j++) {
            if (bytes[j] < 0 || first[j] < 0 || first[j] > last[i] || first[i] > last[j])
                continue;
            const ir_buffer *a = g->bufs[i], *b = g->bufs[j];
            if (a->arena_offset < b->arena_offset + bytes[j] &&
                b->arena_offset < a->arena_offset + bytes[i])
                fail(v, "temps '%s' (calls %d..%d) and '%s' (calls %d..%d) are live at the same "
                        "time but share arena bytes [%lld, %lld)", bname(a), first[i] + 1,
                     last[i] + 1, bname(b), first[j] + 1, last[j] + 1,
                     (long long)(a->arena_offset > b->arena_offset ? a->arena_offset
                                                                    : b->arena_offset),
                     (long long)(a->arena_offset + bytes[i] < b->arena_offset + bytes[j]
                                     ? a->arena_offset + bytes[i]
                                     : b->arena_offset + bytes[j]));
        }
    }
    free(first);
    free(last);
    free(bytes);
}

static void verify_graph(verifier *v)
{
    const ir_graph *g = &v->m->graph;
    v->ctx = "graph";
    v->funcs_sorted = sorted_ptrs((const void *const *)v->m->funcs, v->m->nfuncs, &v->nfuncs_sorted);
    v->gbufs_sorted = sorted_ptrs((const void *const *)g->bufs, g->nbufs, &v->ngbufs_sorted);
    bool *dup = later_duplicates((const void *const *)g->bufs, g->nbufs, buf_name);
    for (int i = 0; i < g->nbufs; i++) {
        const ir_buffer *b = g->bufs[i];
        if (!b) {
            fail(v, "graph buffer %d is missing", i + 1);
            continue;
        }
        if (b->role != IR_BUF_INPUT && b->role != IR_BUF_PARAM && b->role != IR_BUF_OUTPUT &&
            b->role != IR_BUF_TEMP && b->role != IR_BUF_CONST)
            fail(v, "graph buffer '%s' has role %s (graph buffers are input, param, output, "
                    "temp or const)", bname(b),
                 (unsigned)b->role < IR_NBUF_ROLES ? ir_buf_role_name(b->role) : "?");
        if (b->state && b->role != IR_BUF_PARAM)
            fail(v, "graph buffer '%s' is marked state but has role %s (only params are state)",
                 bname(b), (unsigned)b->role < IR_NBUF_ROLES ? ir_buf_role_name(b->role) : "?");
        check_shape(v, b);
        if (dup[i])
            fail(v, "two graph buffers are named '%s'", b->name);
    }
    free(dup);
    for (int i = 0; i < g->nloads; i++)
        verify_call(v, g, &g->loads[i]);
    for (int i = 0; i < g->ncalls; i++)
        verify_call(v, g, &g->calls[i]);
    /* Load calls compute consts from params and consts; runs only read them. */
    for (int i = 0; i < g->nloads; i++) {
        const ir_graph_call *call = &g->loads[i];
        if (!call->fn || !is_module_func(v, call->fn) || call->nargs != call->fn->nparams)
            continue;
        for (int j = 0; j < call->nargs; j++) {
            const ir_buffer *a = call->args[j];
            if (!a || a->role == IR_BUF_PARAM || a->role == IR_BUF_CONST)
                continue;
            fail(v, "load call @%s is passed %s '%s' (load calls see only params and consts)",
                 call->fn->name, (unsigned)a->role < IR_NBUF_ROLES ? ir_buf_role_name(a->role) : "?",
                 bname(a));
        }
    }
    for (int i = 0; i < g->ncalls; i++) {
        const ir_graph_call *call = &g->calls[i];
        if (!call->fn || !is_module_func(v, call->fn) || call->nargs != call->fn->nparams)
            continue;
        for (int j = 0; j < call->nargs; j++)
            if (call->args[j] && call->args[j]->role == IR_BUF_CONST &&
                ir_stmt_stores_to(call->fn->body, call->fn->params[j]))
                fail(v, "call @%s stores to const '%s' (only load calls may)", call->fn->name,
                     bname(call->args[j]));
    }
    /* outputs are written by a run call, consts by a load call: marked in
     * one pass over the calls, by the buffers' sorted positions */
    bool *written = calloc((size_t)(v->ngbufs_sorted > 0 ? v->ngbufs_sorted : 1), sizeof *written);
    if (!written)
        ir_out_of_memory();
    for (int load = 0; load < 2; load++) {
        const ir_graph_call *calls = load ? g->loads : g->calls;
        int ncalls = load ? g->nloads : g->ncalls;
        for (int c = 0; c < ncalls; c++) {
            const ir_graph_call *call = &calls[c];
            if (!call->fn || !is_module_func(v, call->fn) || call->nargs != call->fn->nparams)
                continue;
            for (int j = 0; j < call->nargs; j++) {
                const ir_buffer *a = call->args[j];
                if (!a || a->role != (load ? IR_BUF_CONST : IR_BUF_OUTPUT))
                    continue;
                const void **at = bsearch(&a, v->gbufs_sorted, (size_t)v->ngbufs_sorted,
                                          sizeof *v->gbufs_sorted, cmp_ptr);
                if (at && !written[at - v->gbufs_sorted] &&
                    ir_stmt_stores_to(call->fn->body, call->fn->params[j]))
                    written[at - v->gbufs_sorted] = true;
            }
        }
    }
    for (int i = 0; i < g->nbufs; i++) {
        const ir_buffer *b = g->bufs[i];
        if (!b || (b->role != IR_BUF_OUTPUT && b->role != IR_BUF_CONST))
            continue;
        bool load = b->role == IR_BUF_CONST;
        const void **at = bsearch(&b, v->gbufs_sorted, (size_t)v->ngbufs_sorted,
                                  sizeof *v->gbufs_sorted, cmp_ptr);
        if (!written[at - v->gbufs_sorted])
            fail(v, "%s '%s' is not written by any %scall", load ? "const" : "output", bname(b),
                 load ? "load " : "");
    }
    free(written);
    verify_plan(v, g);
    free(v->funcs_sorted);
    free(v->gbufs_sorted);
}

static bool verify(const ir_module *m, const char *after, const char *input, struct diag *d)
{
    verifier v = {0};
    v.m = m;
    v.d = d;
    v.input = input;
    if (after)
        snprintf(v.where, sizeof v.where, "verifier (after %s)", after);
    else
        snprintf(v.where, sizeof v.where, "verifier");
    v.ctx = "module";
    bool *dup = later_duplicates((const void *const *)m->funcs, m->nfuncs, func_name);
    for (int i = 0; i < m->nfuncs; i++) {
        const ir_func *f = m->funcs[i];
        if (!f) {
            fail(&v, "function %d is missing", i + 1);
            continue;
        }
        if (!f->name) {
            fail(&v, "function %d has no name", i + 1);
            continue;
        }
        if (dup[i])
            fail(&v, "two functions are named @%s", f->name);
    }
    free(dup);
    char ctx[300];
    for (int i = 0; i < m->nfuncs; i++) {
        const ir_func *f = m->funcs[i];
        if (!f || !f->name)
            continue;
        snprintf(ctx, sizeof ctx, "@%s", f->name);
        v.ctx = ctx;
        verify_func(&v, f);
        if (input && v.nproblems == 0) {
            range_ctx rc = {.v = &v};
            check_ranges(&rc, f->body);
        }
    }
    verify_graph(&v);
    free(v.vars);
    free(v.bufs);
    return v.nproblems == 0;
}

bool ir_verify(const ir_module *m, const char *after, struct diag *d)
{
    return verify(m, after, NULL, d);
}

bool ir_verify_input(const ir_module *m, const char *file, struct diag *d)
{
    return verify(m, NULL, file, d);
}
