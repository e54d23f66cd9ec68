/* codegen/emit_c.c — the C backend: one C function per IR function.
 *
 * The output is meant to be read (tec --emit=c shows it), so it is indented,
 * names follow the IR's names, and each kernel starts with a comment that
 * says where it came from and what its return codes mean.  It is also meant
 * to compute exactly what the interpreter (ir/interp.c) computes; every
 * choice below that matters for that says so.
 *
 * Structure of a kernel (see codegen.h for the calling convention):
 *
 *   int32_t tec_k0_matmul(const float *restrict A, ..., float *restrict C)
 *   {
 *       for (int64_t i = 0; i < 16; ++i) { ... }
 *       return 0;
 *   }
 *
 * Heap-allocated temporaries are tracked in a small per-call table
 * (tec_heap) so every exit path, including failed asserts, frees them.
 * A kernel that divides by a value not known to be nonzero is split into a
 * body function and a wrapper that catches the division by zero with
 * setjmp/longjmp: the division may sit deep inside an expression (even a
 * guard of a padded load), and stopping right there is the only way to
 * never compute with a made-up quotient.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "codegen/codegen.h"
#include "codegen/emit_c.h"
#include "codegen/emit_vector.h"

#include <gmp.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arith.h"
#include "ir/interp.h"
#include "ir/smallfloat.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* Temporaries of at most this many bytes with scope STACK become C arrays;
 * larger ones are calloc'ed so deep kernels never overflow a thread's
 * stack (thread pool stacks may be small). */
#define CG_STACK_ALLOC_MAX 16384

/* ---------------------------------------------------------------- names */

static bool is_ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Identifiers a user name must not become: C keywords, what the generated
 * code itself calls or names, and object-like macros of the headers it
 * includes (or predefined ones: `linux` is 1 under -std=gnu11). */
static const char *const reserved_names[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do",
    "double", "else", "enum", "extern", "float", "for", "goto", "if",
    "inline", "int", "long", "register", "restrict", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "asm", "typeof", "bool", "true",
    "false", "alignas", "alignof", "noreturn", "static_assert",
    "exp", "expf", "log", "logf", "sqrt", "sqrtf", "tanh", "tanhf", "erf",
    "erff", "fabs", "fabsf", "floor", "floorf", "ceil", "ceilf", "rint", "rintf", "sin",
    "sinf", "cos", "cosf", "pow", "powf", "fmin", "fminf", "fmax", "fmaxf",
    "trunc", "truncf", "calloc", "free", "setjmp", "longjmp", "main",
    "NAN", "INFINITY", "NULL", "NFDBITS", "WUNTRACED", "WSTOPPED",
    "WCONTINUED", "WEXITED", "WNOHANG", "WNOWAIT", "linux", "unix", "i386",
    "math_errhandling", "errno",
};

static bool is_reserved(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof reserved_names / sizeof *reserved_names; i++)
        if (strcmp(name, reserved_names[i]) == 0)
            return true;
    /* tec_ names belong to the generated code; *_t names are typedefs of
     * the headers (int64_t, size_t, jmp_buf's friends) or POSIX's. */
    if (strncmp(name, "tec_", 4) == 0 || (n >= 2 && strcmp(name + n - 2, "_t") == 0))
        return true;
    /* Header macros are upper case with underscores (INT64_MAX, M_PI,
     * FP_NAN, EXIT_FAILURE, HUGE_VAL ...). */
    bool lower = false, underscore = false;
    for (const char *p = name; *p; p++) {
        lower |= *p >= 'a' && *p <= 'z';
        underscore |= *p == '_';
    }
    return !lower && underscore;
}

/* The C spelling of an IR name: letters, digits and '_' kept, everything
 * else (the '.' of hierarchical names) replaced by '_'; a leading digit or
 * underscore gets a "v" in front (leading underscores are the C library's);
 * reserved names get a trailing '_'.  Malloc'ed, or NULL. */
static char *c_ident(const char *name)
{
    if (!name || !*name)
        name = "v";
    size_t n = strlen(name);
    char *s = malloc(n + 3);
    if (!s)
        return NULL;
    size_t k = 0;
    if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z')))
        s[k++] = 'v';
    for (size_t i = 0; i < n; i++)
        s[k++] = is_ident_char(name[i]) ? name[i] : '_';
    s[k] = '\0';
    if (is_reserved(s)) {
        s[k++] = '_';
        s[k] = '\0';
    }
    return s;
}

char *cg_symbol_name(const ir_module *m, int index)
{
    const char *name = index >= 0 && index < m->nfuncs && m->funcs[index]->name
                           ? m->funcs[index]->name : "";
    size_t n = strlen(name);
    if (n > 200)  /* a symbol stays readable; the index keeps it unique */
        n = 200;
    char *s = malloc(n + 32);
    if (!s)
        return NULL;
    int k = snprintf(s, 32, "tec_k%d%s", index, n ? "_" : "");
    for (size_t i = 0; i < n; i++)
        s[k++] = is_ident_char(name[i]) ? name[i] : '_';
    s[k] = '\0';
    return s;
}

/* ---------------------------------------------------------------- failure codes */

static bool collect_assert(const ir_stmt *s, void *ctx)
{
    assert_list *l = ctx;
    if (s->kind != IR_S_ASSERT || l->oom)
        return true;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        const ir_stmt **p = realloc(l->items, sizeof *p * (size_t)cap);
        if (!p) {
            l->oom = true;
            return true;
        }
        l->items = p;
        l->cap = cap;
    }
    l->items[l->n++] = s;
    return true;
}

/* The ASSERT statements of f in ir_stmt_walk's pre-order: that order is
 * the numbering of the failure codes. */
static assert_list function_asserts(const ir_func *f)
{
    assert_list l = {0};
    ir_stmt_walk(f->body, collect_assert, NULL, &l);
    return l;
}

int cg_assert_count(const ir_func *f)
{
    assert_list l = function_asserts(f);
    free(l.items);
    return l.n;
}

const char *cg_assert_message(const ir_func *f, int k)
{
    assert_list l = function_asserts(f);
    const char *msg = k >= 1 && k <= l.n ? l.items[k - 1]->msg : NULL;
    free(l.items);
    if (k >= 1 && k <= l.n && !msg)
        msg = "(no message)";
    return msg;
}

int32_t cg_oom_code(const ir_func *f) { return cg_assert_count(f) + 1; }
int32_t cg_divzero_code(const ir_func *f) { return cg_assert_count(f) + 2; }
int32_t cg_cast_code(const ir_func *f) { return cg_assert_count(f) + 3; }
int32_t cg_index_code(const ir_func *f) { return cg_assert_count(f) + 4; }

void cg_format_failure(const char *func_name, int nasserts, int32_t code, const char *detail,
                       char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    const char *f = func_name ? func_name : "?";
    if (code >= 1 && code <= nasserts)
        snprintf(buf, len, "in @%s: assert failed: %s", f, detail ? detail : "(no message)");
    else if (code == nasserts + 1)
        snprintf(buf, len, "in @%s: out of memory", f);
    else if (code == nasserts + 2)
        snprintf(buf, len, "in @%s: integer division by zero", f);
    else if (code == nasserts + 3)
        snprintf(buf, len, "in @%s: %s", f,
                 detail ? detail : "cast of a float to an integer type is out of range");
    else if (code == nasserts + 4)
        snprintf(buf, len, "in @%s: %s", f, detail ? detail : "index out of range");
    else
        snprintf(buf, len, "in @%s: internal error: codegen: kernel returned unknown status %d", f,
                 (int)code);
}

void cg_failure_message(const ir_func *f, int32_t code, char *buf, size_t len)
{
    cg_format_failure(f->name, cg_assert_count(f), code, cg_assert_message(f, code), buf, len);
}

static bool set_has(const cg_ptrset *s, const void *p)
{
    for (int i = 0; i < s->n; i++)
        if (s->items[i] == p)
            return true;
    return false;
}

static void set_add(cg_emitter *e, cg_ptrset *s, const void *p)
{
    if (!p || set_has(s, p))
        return;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        const void **q = realloc(s->items, sizeof *q * (size_t)cap);
        if (!q) {
            e->oom = true;
            return;
        }
        s->items = q;
        s->cap = cap;
    }
    s->items[s->n++] = p;
}

const char *cg_func_name(const cg_emitter *e) { return e->f && e->f->name ? e->f->name : "?"; }

static void internal(cg_emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void internal(cg_emitter *e, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (e->oom)
        return;   /* a consequence of running out of memory, which cg_emit_c reports */
    e->failed = true;
    diag_internal(e->d, "codegen", "in @%s: %s", cg_func_name(e), msg);
}

/* The function's "loc" attribute (file:line:col) as a diagnostic
 * location; `file` receives the file part. */
static diag_loc func_loc(const ir_func *f, char *file, size_t filelen)
{
    diag_loc loc = diag_noloc();
    const char *l = f ? ir_func_attr(f, "loc") : NULL;
    if (!l)
        return loc;
    const char *c2 = strrchr(l, ':');
    if (!c2 || c2 == l)
        return loc;
    const char *c1 = c2 - 1;
    while (c1 > l && *c1 != ':')
        c1--;
    if (*c1 != ':' || c1 == l)
        return loc;
    int line = atoi(c1 + 1), col = atoi(c2 + 1);
    size_t n = (size_t)(c1 - l);
    if (line <= 0 || n + 1 > filelen)
        return loc;
    memcpy(file, l, n);
    file[n] = '\0';
    loc.file = file;
    loc.line = line;
    loc.col = col > 0 ? col : 1;
    return loc;
}

/* An error in what the user asked for (not a tec bug), at the function's
 * source location when it has one. */
void cg_user_error(cg_emitter *e, const char *fmt, ...)
{
    char msg[512], file[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    e->failed = true;
    diag_error(e->d, func_loc(e->f, file, sizeof file), "%s", msg);
}

/* ---------------------------------------------------------------- scopes */

static bool name_visible(const cg_emitter *e, const char *cname)
{
    for (int i = 0; i < e->nbinds; i++)
        if (strcmp(e->binds[i].cname, cname) == 0)
            return true;
    return false;
}

/* Brings `key` into scope under the C spelling of `irname`, made distinct
 * from every name visible here (a suffix _1, _2 ...) so an inner binding
 * never hides an outer one it still needs.  Returns the C name. */
const char *cg_bind(cg_emitter *e, const void *key, const char *irname)
{
    char *base = c_ident(irname);
    if (!base) {
        e->oom = true;
        return "tec_oom";
    }
    char *name = base;
    for (int k = 1; name_visible(e, name); k++) {
        if (name != base)
            free(name);
        size_t n = strlen(base) + 24;
        name = malloc(n);
        if (!name) {
            free(base);
            e->oom = true;
            return "tec_oom";
        }
        snprintf(name, n, "%s_%d", base, k);
    }
    if (name != base)
        free(base);
    if (e->nbinds == e->capbinds) {
        int cap = e->capbinds ? 2 * e->capbinds : 32;
        cg_binding *b = realloc(e->binds, sizeof *b * (size_t)cap);
        if (!b) {
            free(name);
            e->oom = true;
            return "tec_oom";
        }
        e->binds = b;
        e->capbinds = cap;
    }
    e->binds[e->nbinds++] = (cg_binding){key, name};
    return name;
}

void cg_unbind(cg_emitter *e, int n)
{
    while (n-- > 0 && e->nbinds > 0)
        free(e->binds[--e->nbinds].cname);
}

/* The C name of a variable or buffer in scope, innermost first. */
const char *cg_lookup(const cg_emitter *e, const void *key)
{
    for (int i = e->nbinds - 1; i >= 0; i--)
        if (e->binds[i].key == key)
            return e->binds[i].cname;
    return NULL;
}

/* ---------------------------------------------------------------- constants */

/* Float math in float, not double: f32, f16 and bf16. */
static bool in_float(ir_dtype t) { return t == IR_F32 || cg_is_small_float(t); }

/* Arithmetic whose f16/bf16 result the C text rounds: "tec_f16_round(...)". */
static bool rounds_small(const ir_expr *x)
{
    if (!cg_is_small_float(x->dtype))
        return false;
    switch (x->kind) {
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV: case IR_CALL:
        return true;
    case IR_CAST:
        return x->a && x->a->dtype != x->dtype;
    default:
        return false;
    }
}

/* An integer constant of dtype t.  i64 uses INT64_C so the constant has the
 * 64-bit type whatever it is combined with. */
static void put_int(cg_str *s, int64_t v, ir_dtype t)
{
    if (t == IR_BOOL)
        cg_str_puts(s, v ? "1" : "0");
    else if (ir_dtype_is_small_int(t))
        cg_str_printf(s, "%d", (int)ir_int_wrap(t, v));
    else if (t == IR_I32) {
        int32_t w = (int32_t)v;
        if (w == INT32_MIN)
            cg_str_puts(s, "INT32_MIN");
        else
            cg_str_printf(s, "%d", (int)w);
    } else if (v == INT64_MIN)
        cg_str_puts(s, "INT64_MIN");
    else if (v < 0)
        cg_str_printf(s, "-INT64_C(%lld)", (long long)-v);
    else
        cg_str_printf(s, "INT64_C(%lld)", (long long)v);
}

/* A float constant that reads back as exactly the same value: the shortest
 * %g form that round-trips (0.1f, not 0.100000001f), with a suffix f for
 * f32.  Infinities and NaN through math.h's macros. */
static void put_float(cg_str *s, double v, ir_dtype t)
{
    /* an f16/bf16 constant is its format's value, exact in float */
    if (t == IR_F16)
        v = ir_f16_to_f32(ir_f64_to_f16(v));
    else if (t == IR_BF16)
        v = ir_bf16_to_f32(ir_f64_to_bf16(v));
    bool f32 = in_float(t);
    if (isnan(v)) {
        cg_str_puts(s, f32 ? "NAN" : "(double)NAN");
        return;
    }
    if (isinf(v)) {
        cg_str_puts(s, v < 0 ? "-" : "");
        cg_str_puts(s, f32 ? "INFINITY" : "(double)INFINITY");
        return;
    }
    char buf[64];
    if (f32) {
        float x = (float)v;
        for (int p = 1; p <= 9; p++) {
            snprintf(buf, sizeof buf, "%.*g", p, (double)x);
            float y = strtof(buf, NULL);
            if (y == x && signbit(y) == signbit(x))
                break;
        }
    } else {
        for (int p = 1; p <= 17; p++) {
            snprintf(buf, sizeof buf, "%.*g", p, v);
            double y = strtod(buf, NULL);
            if (y == v && signbit(y) == signbit(v))
                break;
        }
    }
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    cg_str_puts(s, buf);
    if (f32)
        cg_str_puts(s, "f");
}

/* A nonnegative count (extents, strides): plain decimal when it fits an
 * int, so loops read `i < 16`; the other operand is int64_t, which makes
 * the arithmetic 64-bit either way. */
static void put_count(cg_str *s, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX)
        cg_str_printf(s, "%lld", (long long)v);
    else
        put_int(s, v, IR_I64);
}

/* ---------------------------------------------------------------- expressions */

static bool is_comparison(ir_expr_kind k)
{
    return k == IR_EQ || k == IR_NE || k == IR_LT || k == IR_LE || k == IR_GT || k == IR_GE;
}

/* A division whose divisor is not a nonzero constant needs the checked
 * helper (and so the setjmp wrapper). */
static bool div_is_checked(const ir_expr *x)
{
    return (x->kind == IR_FLOORDIV || x->kind == IR_FLOORMOD) && ir_dtype_is_int(x->dtype) &&
           !(x->b && x->b->kind == IR_INT && x->b->ival != 0);
}

/* A float -> integer cast is checked like the interpreter does: a value
 * with no integer of the target type stops the kernel (C would make the
 * result undefined). */
/* A float constant operand of a min or max x (either side), its other
 * operand in *other. */
/* A float constant, or a broadcast of one (vector code's), in *v. */
static bool float_const(const ir_expr *x, double *v)
{
    if (x && x->kind == IR_BROADCAST)
        x = x->a;
    if (!x || x->kind != IR_FLOAT)
        return false;
    *v = x->fval;
    return true;
}

static bool clamp_bound(const ir_expr *x, ir_expr_kind k, double *bound, const ir_expr **other)
{
    if (!x || x->kind != k)
        return false;
    if (float_const(x->b, bound)) {
        *other = x->a;
        return true;
    }
    if (float_const(x->a, bound)) {
        *other = x->b;
        return true;
    }
    return false;
}

/* Whether a float value x is clamped into [lo, hi] by constants:
 * min(max(v, lo), hi) or max(min(v, hi), lo).  min and max follow fmin and
 * fmax (a NaN operand yields the other), so even a NaN v comes out in
 * range: a requantize's saturation. */
static bool clamped_to(const ir_expr *x, double lo, double hi)
{
    double b1, b2;
    const ir_expr *in, *v;
    if (clamp_bound(x, IR_MIN, &b1, &in) && clamp_bound(in, IR_MAX, &b2, &v))
        return b2 >= lo && b1 < hi + 1 && b2 <= b1;
    if (clamp_bound(x, IR_MAX, &b1, &in) && clamp_bound(in, IR_MIN, &b2, &v))
        return b1 >= lo && b2 < hi + 1 && b1 <= b2;
    return false;
}

/* A float to integer cast that can fail: one whose operand is not clamped
 * into the target's range (then C's conversion is exact and the plain
 * cast serves, see clamped_to). */
static bool cast_is_checked(const ir_expr *x)
{
    int64_t lo, hi;
    return x->kind == IR_CAST && x->a && ir_dtype_is_int(x->dtype) &&
           (x->a->dtype == IR_F32 || x->a->dtype == IR_F64) &&
           !(ir_dtype_int_range(x->dtype, &lo, &hi) && hi <= (int64_t)1 << 31 &&
             lo >= -((int64_t)1 << 31) && clamped_to(x->a, (double)lo, (double)hi));
}

/* Folds an integer expression made only of constants and + - * and
 * negation, wrapping as the interpreter does.  Generated C never spells out
 * such arithmetic: when it overflows (INT64_MAX + 1 before simplify has
 * run) the C compiler would warn about it, although -fwrapv defines it. */
static bool fold_int(const ir_expr *x, int64_t *out)
{
    if (!x || !ir_dtype_is_int(x->dtype))
        return false;
    int64_t a, b;
    uint64_t r;
    switch (x->kind) {
    case IR_INT:
        *out = x->ival;
        break;
    case IR_NEG:
        if (!fold_int(x->a, &a))
            return false;
        *out = (int64_t)(0 - (uint64_t)a);
        break;
    case IR_ADD: case IR_SUB: case IR_MUL:
        if (!fold_int(x->a, &a) || !fold_int(x->b, &b))
            return false;
        r = x->kind == IR_ADD ? (uint64_t)a + (uint64_t)b
            : x->kind == IR_SUB ? (uint64_t)a - (uint64_t)b : (uint64_t)a * (uint64_t)b;
        *out = (int64_t)r;
        break;
    default:
        return false;
    }
    *out = ir_int_wrap(x->dtype, *out);
    return true;
}

/* A constant's C text; its precedence follows from its first character
 * ("-1.5f" and "(double)NAN" are unary expressions). */
static void put_const(cg_str *s, const ir_expr *x)
{
    if (x->kind == IR_FLOAT)
        put_float(s, x->fval, x->dtype);
    else if (ir_dtype_is_float(x->dtype))
        put_float(s, (double)x->ival, x->dtype);
    else
        put_int(s, x->ival, x->dtype);
}

/* The precedence of the C text emit_expr writes for x. */
static int expr_prec(const ir_expr *x)
{
    if (rounds_small(x) || (x->kind == IR_LOAD && cg_is_small_float(x->dtype)))
        return P_PRIMARY;
    int64_t folded;
    if (x->kind != IR_INT && fold_int(x, &folded)) {
        ir_expr k = {.kind = IR_INT, .dtype = x->dtype, .ival = folded};
        return expr_prec(&k);
    }
    switch (x->kind) {
    case IR_INT:
    case IR_FLOAT: {
        char buf[64];
        cg_str t = {0};
        put_const(&t, x);
        snprintf(buf, sizeof buf, "%s", t.p ? t.p : "");
        free(t.p);
        return buf[0] == '-' || buf[0] == '(' ? P_UNARY : P_PRIMARY;
    }
    case IR_ADD: case IR_SUB: return P_ADD;
    case IR_MUL: case IR_DIV: return P_MUL;
    case IR_LT: case IR_LE: case IR_GT: case IR_GE: return P_REL;
    case IR_EQ: case IR_NE: return P_EQ;
    case IR_AND: return P_AND;
    case IR_OR: return P_OR;
    case IR_NEG: case IR_NOT: return P_UNARY;
    case IR_SELECT: return P_SELECT;
    case IR_CAST:
        if (x->a && x->dtype == x->a->dtype)
            return expr_prec(x->a);
        if (cast_is_checked(x))
            return P_PRIMARY;
        return x->dtype == IR_BOOL ? P_EQ : P_UNARY;
    case IR_LOAD:
        return x->dtype == IR_BOOL ? P_EQ : P_PRIMARY;
    default: return P_PRIMARY;
    }
}

static void emit_expr(cg_emitter *e, cg_str *s, const ir_expr *x, int min_prec);

void cg_emit_operand(cg_emitter *e, cg_str *s, const ir_expr *x, int min_prec, bool force_paren)
{
    if (!x) {
        internal(e, "expression operand missing");
        cg_str_puts(s, "0");
        return;
    }
    bool paren = force_paren || expr_prec(x) < min_prec;
    if (paren)
        cg_str_puts(s, "(");
    emit_expr(e, s, x, paren ? P_TOP : min_prec);
    if (paren)
        cg_str_puts(s, ")");
}

/* Emits an operand that C converts to int64_t before any arithmetic (an
 * operand of + - * or a comparison whose other operand is a 64-bit
 * expression, a function argument, an assigned value): an i64 constant
 * there reads better as a plain decimal ("i < n - 1") and means the same.
 * Every i64 expression other than a bare constant has C type int64_t, so
 * "the other operand is not a constant" is the test. */
static void emit_operand_plain(cg_emitter *e, cg_str *s, const ir_expr *x, int min_prec, bool plain)
{
    e->plain_next = plain;
    cg_emit_operand(e, s, x, min_prec, false);
    e->plain_next = false;
}

static bool is_int_const(const ir_expr *x) { return x && x->kind == IR_INT; }

/* An index as an int64_t, so offset arithmetic is 64-bit.  A small
 * constant may be written as a plain decimal (A[3], A[i * 4 + 2]) where it
 * is not the left operand of the stride multiplication, since the other
 * operand then makes the arithmetic 64-bit already. */
static void emit_index(cg_emitter *e, cg_str *s, const ir_expr *x, int min_prec, bool plain_ok)
{
    if (plain_ok && x && x->kind == IR_INT && ir_dtype_is_int(x->dtype) && x->ival >= 0 &&
        x->ival <= INT32_MAX) {
        cg_str_printf(s, "%lld", (long long)x->ival);
        return;
    }
    if (x && x->dtype != IR_I64) {
        bool paren = P_UNARY < min_prec;
        cg_str_puts(s, paren ? "((int64_t)" : "(int64_t)");
        cg_emit_operand(e, s, x, P_UNARY, false);
        if (paren)
            cg_str_puts(s, ")");
        return;
    }
    cg_emit_operand(e, s, x, min_prec, false);
}

static void put_index_check(cg_emitter *e, cg_str *s, const ir_buffer *b, const ir_expr *x,
                            int k, int site)
{
    e->index_check_used = true;
    cg_str_puts(s, "tec_index(");
    emit_index(e, s, x, P_TOP, false);
    cg_str_puts(s, ", ");
    put_count(s, b->shape[k]);
    cg_str_printf(s, ", %d, tec_jb)", site);
}

/* Index k of an access: checked at run time when it is one of the
 * function's unproven sites (codegen/bounds.c), else as emit_index.  Of a
 * ramp (a vector access) the base is the index; its check tests the last
 * lane and then the first, which bound the lanes between. */
static void emit_dim_index(cg_emitter *e, cg_str *s, const ir_buffer *b, const void *access,
                           ir_expr *const *idx, int k, int min_prec, bool plain_ok)
{
    int site = e->unchecked || !access ? -1 : cg_bound_site_of(&e->sites, access, k);
    const ir_expr *x = idx[k];
    bool ramp = x && x->kind == IR_RAMP;
    if (site < 0) {
        emit_index(e, s, ramp ? x->a : x, min_prec, plain_ok);
        return;
    }
    if (ramp) {
        if (!e->scratch && !(e->scratch = ir_module_new("codegen-scratch"))) {
            e->oom = true;
            return;
        }
        ir_module *m = e->scratch;
        ir_expr *span = ir_binary(m, IR_MUL, ir_expr_copy(m, x->b),
                                  ir_int_typed(m, x->lanes - 1, x->b->dtype));
        cg_str_puts(s, "(");
        put_index_check(e, s, b, ir_binary(m, IR_ADD, ir_expr_copy(m, x->a), span), k, site);
        cg_str_puts(s, ", ");
        put_index_check(e, s, b, x->a, k, site);
        cg_str_puts(s, ")");
        return;
    }
    put_index_check(e, s, b, x, k, site);
}

/* The row-major flat offset of the first k+1 indices in Horner form,
 * ((i0 * n1 + i1) * n2 + i2), exact because every partial offset is below
 * the buffer's element count, which fits in int64_t (checked). */
static void emit_offset(cg_emitter *e, cg_str *s, const ir_buffer *b, const void *access,
                        ir_expr *const *idx, int k, int min_prec)
{
    if (k == 0) {
        /* With fewer than 2^31 elements every partial offset fits an int. */
        int64_t numel = 1;
        for (int d = 0; d < b->ndim && numel <= INT32_MAX; d++)
            numel = b->shape[d] > 0 && b->shape[d] <= INT32_MAX ? numel * b->shape[d] : INT64_MAX;
        emit_dim_index(e, s, b, access, idx, 0, min_prec, b->ndim == 1 || numel <= INT32_MAX);
        return;
    }
    bool paren = P_ADD < min_prec;
    if (paren)
        cg_str_puts(s, "(");
    if (b->shape[k] == 1) {
        emit_offset(e, s, b, access, idx, k - 1, P_ADD);
    } else {
        emit_offset(e, s, b, access, idx, k - 1, P_MUL);
        cg_str_puts(s, " * ");
        put_count(s, b->shape[k]);
    }
    cg_str_puts(s, " + ");
    emit_dim_index(e, s, b, access, idx, k, P_MUL, true);
    if (paren)
        cg_str_puts(s, ")");
}

/* buf[offset] for a load or store with nidx indices; `access` is its IR
 * node (NULL: a copy made for a vector loop, which has no unproven sites). */
void cg_emit_access(cg_emitter *e, cg_str *s, const ir_buffer *b, const void *access,
                        ir_expr *const *idx, int nidx)
{
    const char *name = b ? cg_lookup(e, b) : NULL;
    if (!name) {
        internal(e, "buffer '%s' is accessed outside its scope (not a parameter or a live alloc)",
                 b && b->name ? b->name : "?");
        cg_str_puts(s, "tec_unknown[0]");
        return;
    }
    cg_str_puts(s, name);
    cg_str_puts(s, "[");
    if (nidx != b->ndim) {
        internal(e, "buffer '%s' has %d dimensions but is indexed with %d indices", b->name,
                 b->ndim, nidx);
        cg_str_puts(s, "0");
    } else if (nidx == 0)
        cg_str_puts(s, "0");
    else
        emit_offset(e, s, b, access, idx, nidx - 1, P_TOP);
    cg_str_puts(s, "]");
}

/* The libm function for a pure math intrinsic at dtype t (NULL: helper). */
static const char *math_function(cg_emitter *e, ir_intrin fn, ir_dtype t)
{
    bool f32 = in_float(t);
    if (fn == IR_FN_ABS && ir_dtype_is_int(t)) {
        e->helper_used[t == IR_I64 ? H_ABS_I64 : H_ABS_I32] = true;
        return t == IR_I64 ? "tec_abs_i64" : "tec_abs_i32";
    }
    switch (fn) {
    case IR_FN_EXP: return f32 ? "expf" : "exp";
    case IR_FN_LOG: return f32 ? "logf" : "log";
    case IR_FN_SQRT: return f32 ? "sqrtf" : "sqrt";
    case IR_FN_TANH: return f32 ? "tanhf" : "tanh";
    case IR_FN_ERF: return f32 ? "erff" : "erf";
    case IR_FN_ABS: return f32 ? "fabsf" : "fabs";
    case IR_FN_FLOOR: return f32 ? "floorf" : "floor";
    case IR_FN_CEIL: return f32 ? "ceilf" : "ceil";
    case IR_FN_RINT: return f32 ? "rintf" : "rint";
    case IR_FN_SIN: return f32 ? "sinf" : "sin";
    case IR_FN_COS: return f32 ? "cosf" : "cos";
    case IR_FN_POW: return f32 ? "powf" : "pow";
    case IR_FN_RSQRT:
        e->helper_used[f32 ? H_RSQRT_F32 : H_RSQRT_F64] = true;
        return f32 ? "tec_rsqrt_f32" : "tec_rsqrt_f64";
    case IR_FN_SIGMOID:
        e->helper_used[f32 ? H_SIGMOID_F32 : H_SIGMOID_F64] = true;
        return f32 ? "tec_sigmoid_f32" : "tec_sigmoid_f64";
    default: return NULL;
    }
}

static void emit_args(cg_emitter *e, cg_str *s, ir_expr *const *args, int n)
{
    for (int i = 0; i < n; i++) {
        if (i)
            cg_str_puts(s, ", ");
        emit_operand_plain(e, s, args[i], P_SELECT, true);   /* prototype converts */
    }
}

static void emit_call(cg_emitter *e, cg_str *s, const ir_expr *x)
{
    if (x->fn < 0 || x->fn >= IR_NINTRINSICS) {
        internal(e, "unknown intrinsic #%d", (int)x->fn);
        cg_str_puts(s, "0");
        return;
    }
    const char *iname = ir_intrin_name(x->fn);
    if (x->nargs != ir_intrin_arity(x->fn)) {
        internal(e, "%s takes %d arguments, not %d", iname, ir_intrin_arity(x->fn), x->nargs);
        cg_str_puts(s, "0");
        return;
    }
    if (ir_intrin_class(x->fn) == 'r') {
        internal(e, "runtime call %s used as a value (only allowed as a statement)", iname);
        cg_str_puts(s, "0");
        return;
    }
    bool int_abs = x->fn == IR_FN_ABS && ir_dtype_is_int(x->dtype);
    if (!ir_dtype_is_float(x->dtype) && !int_abs) {
        internal(e, "%s on %s (math intrinsics take floats)", iname, ir_dtype_name(x->dtype));
        cg_str_puts(s, "0");
        return;
    }
    cg_str_puts(s, math_function(e, x->fn, x->dtype));
    cg_str_puts(s, "(");
    emit_args(e, s, x->args, x->nargs);
    cg_str_puts(s, ")");
}

/* floordiv/floormod/min/max through the helpers of the file's prelude. */
static void emit_helper_call(cg_emitter *e, cg_str *s, const ir_expr *x)
{
    const char *op = x->kind == IR_FLOORDIV ? "floordiv"
                     : x->kind == IR_FLOORMOD ? "floormod"
                     : x->kind == IR_MIN ? "min" : "max";
    bool checked = false;
    if (x->kind == IR_FLOORDIV || x->kind == IR_FLOORMOD) {
        if (!ir_dtype_is_int(x->dtype)) {
            internal(e, "%s on %s (integers only)", op, ir_dtype_name(x->dtype));
            cg_str_puts(s, "0");
            return;
        }
        checked = div_is_checked(x);
        bool i64 = x->dtype == IR_I64, div = x->kind == IR_FLOORDIV;
        int h = checked ? (div ? (i64 ? H_FLOORDIV_I64_CHK : H_FLOORDIV_I32_CHK)
                               : (i64 ? H_FLOORMOD_I64_CHK : H_FLOORMOD_I32_CHK))
                        : (div ? (i64 ? H_FLOORDIV_I64 : H_FLOORDIV_I32)
                               : (i64 ? H_FLOORMOD_I64 : H_FLOORMOD_I32));
        e->helper_used[h] = true;
    } else if (ir_dtype_is_float(x->dtype)) {
        /* C99 fmin/fmax, as the interpreter: a NaN operand yields the
         * other operand. */
        bool f32 = in_float(x->dtype);
        const ir_expr *k = x->b && x->b->kind == IR_FLOAT ? x->b : x->a->kind == IR_FLOAT ? x->a : NULL;
        if (k && k->fval == k->fval) {
            /* Against a constant c that is not NaN, fmax(v, c) is
             * v >= c ? v : c and fmax(c, v) is v > c ? v : c: a NaN v gives
             * c, and of equal values (-0 and +0) glibc's fmax and fmin
             * return the first operand, as the interpreter's calls do.  A
             * comparison the compiler can vectorize, where fmax is a
             * library call.  (A statement expression of GNU C, as the
             * vector types are.) */
            static int depth;
            const ir_expr *v = k == x->b ? x->a : x->b;
            int d = depth++;
            cg_str_printf(s, "({ %s tec_m%d = ", f32 ? "float" : "double", d);
            cg_emit_operand(e, s, v, P_SELECT, false);
            cg_str_printf(s, "; tec_m%d %s%s ", d, x->kind == IR_MIN ? "<" : ">",
                          k == x->b ? "=" : "");
            cg_emit_operand(e, s, k, P_SELECT, false);
            cg_str_printf(s, " ? tec_m%d : ", d);
            cg_emit_operand(e, s, k, P_SELECT, false);
            cg_str_puts(s, "; })");
            depth--;
            return;
        }
        /* Else fmax(a, b) is a != a ? b : (b > a ? b : a), and fmin with
         * b < a: a NaN operand yields the other, of equal values the first
         * (glibc's), as the interpreter and the vector helpers
         * (emit_prelude.c).  Not a call of fmaxf: GCC takes it as
         * commutative and may swap the operands (a max pooling at -O0 then
         * kept +0 where the interpreter keeps -0), and it is a library call
         * where the compiler makes the inner select one maxss and the test
         * a branch always predicted (a softmax's row maximum reduced from
         * 16 partial ones: 7% of its time). */
        static int mdepth;
        int d = mdepth++;
        const char *ct = f32 ? "float" : "double";
        cg_str_printf(s, "({ %s tec_ma%d = ", ct, d);
        cg_emit_operand(e, s, x->a, P_SELECT, false);
        cg_str_printf(s, "; %s tec_mb%d = ", ct, d);
        cg_emit_operand(e, s, x->b, P_SELECT, false);
        cg_str_printf(s, "; tec_ma%d != tec_ma%d ? tec_mb%d : (tec_mb%d %s tec_ma%d ? tec_mb%d : tec_ma%d); })",
                      d, d, d, d, x->kind == IR_MIN ? "<" : ">", d, d, d);
        mdepth--;
        return;
    } else if (x->kind == IR_MIN) {
        e->min_used[x->dtype] = true;
    } else {
        e->max_used[x->dtype] = true;
    }
    cg_str_printf(s, "tec_%s_%s%s(", op, cg_dtype_suffix(x->dtype), checked ? "_chk" : "");
    emit_operand_plain(e, s, x->a, P_SELECT, true);   /* prototype converts */
    cg_str_puts(s, ", ");
    emit_operand_plain(e, s, x->b, P_SELECT, true);
    cg_str_puts(s, checked ? ", tec_jb)" : ")");
}

const char *cg_binary_op(ir_expr_kind k)
{
    switch (k) {
    case IR_ADD: return " + ";
    case IR_SUB: return " - ";
    case IR_MUL: return " * ";
    case IR_DIV: return " / ";
    case IR_EQ: return " == ";
    case IR_NE: return " != ";
    case IR_LT: return " < ";
    case IR_LE: return " <= ";
    case IR_GT: return " > ";
    case IR_GE: return " >= ";
    case IR_AND: return " && ";
    case IR_OR: return " || ";
    default: return " ? ";
    }
}

static void emit_binary(cg_emitter *e, cg_str *s, const ir_expr *x)
{
    int p = expr_prec(x);
    int lmin = p, rmin = p + 1;
    bool lforce = false, rforce = false;
    if (is_comparison(x->kind)) {
        /* Nested comparisons and !a == b are legal but read wrong (and
         * -Wparentheses says so): parenthesize them. */
        lmin = rmin = P_ADD;
        lforce = x->a && x->a->kind == IR_NOT;
        rforce = x->b && x->b->kind == IR_NOT;
    } else if (x->kind == IR_OR) {
        lforce = x->a && x->a->kind == IR_AND;
        rforce = x->b && x->b->kind == IR_AND;
    }
    if (x->kind == IR_DIV && !ir_dtype_is_float(x->dtype))
        internal(e, "'/' on %s (float division only; use floordiv)", ir_dtype_name(x->dtype));
    bool arith = x->kind != IR_AND && x->kind != IR_OR;
    e->plain_next = arith && !lforce && !is_int_const(x->b);
    cg_emit_operand(e, s, x->a, lmin, lforce);
    cg_str_puts(s, cg_binary_op(x->kind));
    e->plain_next = arith && !rforce && !is_int_const(x->a);
    cg_emit_operand(e, s, x->b, rmin, rforce);
    e->plain_next = false;
}

static void emit_cast(cg_emitter *e, cg_str *s, const ir_expr *x)
{
    if (!x->a) {
        internal(e, "cast without operand");
        cg_str_puts(s, "0");
        return;
    }
    if (x->a->dtype == x->dtype) {
        emit_expr(e, s, x->a, P_TOP);
        return;
    }
    if (x->dtype == IR_BOOL) {
        /* To bool means "is nonzero", as C's _Bool (a plain (uint8_t)
         * cast would turn 2.5 into 2). */
        cg_emit_operand(e, s, x->a, P_ADD, false);
        cg_str_puts(s, " != 0");
        return;
    }
    if (cast_is_checked(x)) {
        e->cast_used[x->dtype][x->a->dtype] = true;
        cg_str_printf(s, "tec_cast_%s_%s(", cg_dtype_suffix(x->dtype), cg_dtype_suffix(x->a->dtype));
        cg_emit_operand(e, s, x->a, P_SELECT, false);
        cg_str_puts(s, ", tec_jb)");
        return;
    }
    if (cg_is_small_float(x->dtype)) {   /* one rounding, from the exact value */
        cg_str_puts(s, "(double)");
        cg_emit_operand(e, s, x->a, P_UNARY, false);
        return;
    }
    cg_str_printf(s, "(%s)", cg_value_ctype(x->dtype));
    cg_emit_operand(e, s, x->a, P_UNARY, false);
}

static void emit_binary(cg_emitter *e, cg_str *s, const ir_expr *x);
static void emit_call(cg_emitter *e, cg_str *s, const ir_expr *x);

/* The float operation of an f16/bf16 result, before its rounding. */
static void emit_small_operation(cg_emitter *e, cg_str *s, const ir_expr *x)
{
    if (x->kind == IR_CALL)
        emit_call(e, s, x);
    else if (x->kind == IR_CAST)
        emit_cast(e, s, x);
    else
        emit_binary(e, s, x);
}

/* Writes x at a position that requires precedence >= min_prec (the caller
 * has already parenthesized when needed). */

static void emit_expr(cg_emitter *e, cg_str *s, const ir_expr *x, int min_prec)
{
    (void)min_prec;
    bool plain = e->plain_next;
    e->plain_next = false;
    if (!x) {
        internal(e, "missing expression");
        cg_str_puts(s, "0");
        return;
    }
    if (!cg_is_supported_dtype(x->dtype)) {
        cg_user_error(e, "codegen: the C backend does not support %s values yet (in @%s)",
                   x->dtype >= 0 && x->dtype < IR_NDTYPES ? ir_dtype_name(x->dtype) : "unknown",
                   cg_func_name(e));
        cg_str_puts(s, "0");
        return;
    }
    if (ir_expr_lanes(x) > 1) {
        cg_emit_vector_ir(e, s, x);
        return;
    }
    int64_t folded;
    if (x->kind != IR_INT && fold_int(x, &folded)) {
        ir_expr k = {.kind = IR_INT, .dtype = x->dtype, .ival = folded};
        e->plain_next = plain;
        emit_expr(e, s, &k, min_prec);
        return;
    }
    if (rounds_small(x) || (x->kind == IR_LOAD && cg_is_small_float(x->dtype))) {
        e->helper_used[H_SMALLFLOAT] = true;
        cg_str_printf(s, "tec_%s_%s(", ir_dtype_name(x->dtype), x->kind == IR_LOAD ? "value" : "round");
        if (x->kind == IR_LOAD)
            cg_emit_access(e, s, x->buf, x, x->args, x->nargs);
        else
            emit_small_operation(e, s, x);
        cg_str_puts(s, ")");
        return;
    }
    switch (x->kind) {
    case IR_INT:
        if (plain && x->dtype == IR_I64 && x->ival >= -INT32_MAX && x->ival <= INT32_MAX)
            cg_str_printf(s, "%lld", (long long)x->ival);
        else
            put_const(s, x);
        return;
    case IR_FLOAT:
        if (!ir_dtype_is_float(x->dtype)) {
            internal(e, "float constant of type %s", ir_dtype_name(x->dtype));
            cg_str_puts(s, "0");
            return;
        }
        put_const(s, x);
        return;
    case IR_VAR: {
        const char *name = x->var ? cg_lookup(e, x->var) : NULL;
        if (!name) {
            internal(e, "variable '%s' is used outside its binding",
                     x->var && x->var->name ? x->var->name : "?");
            cg_str_puts(s, "0");
            return;
        }
        cg_str_puts(s, name);
        return;
    }
    case IR_LOAD:
        cg_emit_access(e, s, x->buf, x, x->args, x->nargs);
        if (x->dtype == IR_BOOL)  /* any nonzero byte reads as true (1) */
            cg_str_puts(s, " != 0");
        return;
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV:
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
    case IR_AND: case IR_OR:
        emit_binary(e, s, x);
        return;
    case IR_FLOORDIV: case IR_FLOORMOD: case IR_MIN: case IR_MAX:
        emit_helper_call(e, s, x);
        return;
    case IR_NEG: case IR_NOT:
        cg_str_puts(s, x->kind == IR_NEG ? "-" : "!");
        /* "- -x" must not become "--x": parenthesize a negative operand. */
        cg_emit_operand(e, s, x->a, x->kind == IR_NEG ? P_UNARY + 1 : P_UNARY, false);
        return;
    case IR_SELECT:
        /* C's ?: evaluates only the chosen arm, as the IR requires. */
        cg_emit_operand(e, s, x->c, P_OR, false);
        cg_str_puts(s, " ? ");
        cg_emit_operand(e, s, x->a, P_OR, false);
        cg_str_puts(s, " : ");
        cg_emit_operand(e, s, x->b, P_OR, false);
        return;
    case IR_CAST:
        emit_cast(e, s, x);
        return;
    case IR_CALL:
        emit_call(e, s, x);
        return;
    default:
        internal(e, "unknown expression kind #%d", (int)x->kind);
        cg_str_puts(s, "0");
        return;
    }
}

/* ---------------------------------------------------------------- statements */

static void put_indent(cg_emitter *e, cg_str *s)
{
    for (int i = 0; i < e->indent; i++)
        cg_str_puts(s, "    ");
}

void cg_line(cg_emitter *e, cg_str *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_indent(e, s);
    cg_str_vprintf(s, fmt, ap);
    va_end(ap);
    cg_str_puts(s, "\n");
}

/* An expression rendered on its own (for use inside a line); `plain`: it
 * is assigned to a variable of its own type, see emit_operand_plain. */
static char *expr_text_plain(cg_emitter *e, const ir_expr *x, int min_prec, bool plain)
{
    cg_str t = {0};
    emit_operand_plain(e, &t, x, min_prec, plain);
    if (t.oom || !t.p) {
        e->oom = true;
        free(t.p);
        return strdup("0");
    }
    return t.p;
}

static char *expr_text(cg_emitter *e, const ir_expr *x, int min_prec)
{
    return expr_text_plain(e, x, min_prec, false);
}

/* `if (cond)` leaving the kernel with failure code `code`: directly, or
 * through the exit that frees heap temporaries. */
static void emit_fail_if(cg_emitter *e, cg_str *s, const char *cond, int code, const char *why)
{
    cg_str c = {0};
    cg_str_put_comment_text(&c, why);
    if (e->nheap > 0) {
        cg_line(e, s, "if (%s) {", cond);
        cg_line(e, s, "    tec_rc = %d;   /* %s */", code, c.p ? c.p : "");
        cg_line(e, s, "    goto tec_exit;");
        cg_line(e, s, "}");
    } else {
        cg_line(e, s, "if (%s)", cond);
        cg_line(e, s, "    return %d;   /* %s */", code, c.p ? c.p : "");
    }
    free(c.p);
}

bool cg_contains_load(const ir_expr *x, void *found)
{
    if (x->kind == IR_LOAD)
        *(bool *)found = true;
    return !*(bool *)found;
}

static void emit_stmt(cg_emitter *e, cg_str *s, const ir_stmt *st);

/* `(void)name;` keeps -Wunused-variable quiet for a binding the body does
 * not read (a broadcast's iteration variable, say). */
static void mark_unused(cg_emitter *e, cg_str *s, const void *key, const cg_ptrset *used,
                        const char *cname)
{
    if (!set_has(used, key))
        cg_line(e, s, "(void)%s;", cname);
}

const char *cg_var_ctype(cg_emitter *e, const ir_var *v)
{
    if (!v) {
        internal(e, "statement without its variable");
        return "int64_t";
    }
    if (!cg_is_supported_dtype(v->dtype)) {
        cg_user_error(e, "codegen: the C backend does not support %s variables yet ('%s' in @%s)",
                   v->dtype >= 0 && v->dtype < IR_NDTYPES ? ir_dtype_name(v->dtype) : "unknown",
                   v->name ? v->name : "?", cg_func_name(e));
        return "int64_t";
    }
    return cg_value_ctype(v->dtype);
}

void cg_emit_body(cg_emitter *e, cg_str *s, const ir_stmt *body)
{
    e->indent++;
    if (body)
        emit_stmt(e, s, body);
    e->indent--;
}

/* A loop bound: plain decimal for small constants, otherwise the
 * expression. */
char *cg_bound_text(cg_emitter *e, const ir_expr *x)
{
    if (x && x->kind == IR_INT && ir_dtype_is_int(x->dtype) && x->ival >= INT32_MIN &&
        x->ival <= INT32_MAX) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)x->ival);
        return strdup(buf);
    }
    return expr_text(e, x, P_REL + 1);
}

static void emit_unrolled_loop(cg_emitter *e, cg_str *s, const ir_stmt *st, int64_t lo, int64_t hi);
static bool emit_parallel_loop(cg_emitter *e, cg_str *s, const ir_stmt *st);


static void emit_for(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    if (ir_for_step(st) > 1) {
        cg_emit_stepped_loop(e, s, st);
        return;
    }
    if (st->for_kind == IR_FOR_UNROLLED && st->lo && st->hi && st->lo->kind == IR_INT &&
        st->hi->kind == IR_INT && st->hi->ival - st->lo->ival <= CG_UNROLL_COPIES) {
        emit_unrolled_loop(e, s, st, st->lo->ival, st->hi->ival);
        return;
    }
    if (st->for_kind == IR_FOR_PARALLEL && emit_parallel_loop(e, s, st))
        return;
    const char *ct = cg_var_ctype(e, st->var);
    if (st->var && !ir_dtype_is_int(st->var->dtype))
        internal(e, "loop variable '%s' is %s, not an integer", st->var->name,
                 ir_dtype_name(st->var->dtype));
    /* lo and hi are evaluated outside the loop variable's scope. */
    char *lo = cg_bound_text(e, st->lo);
    char *hi = cg_bound_text(e, st->hi);
    bool hi_loads = false;
    if (st->hi)
        ir_expr_walk(st->hi, cg_contains_load, &hi_loads);
    const char *v = cg_bind(e, st->var, st->var ? st->var->name : "i");
    switch (st->for_kind) {
    case IR_FOR_PARALLEL:
        cg_line(e, s, "/* parallel loop: runs serially (its body can leave the kernel early) */");
        break;
    case IR_FOR_VECTORIZED:
        cg_line(e, s, "TEC_IVDEP   /* vectorized: no loop-carried dependences */");
        e->ivdep_used = true;
        break;
    case IR_FOR_UNROLLED:
        cg_line(e, s, "#pragma GCC unroll 8");
        break;
    default:
        break;
    }
    if (hi_loads)  /* the IR evaluates hi once; C would re-read it every iteration */
        cg_line(e, s, "for (%s %s = %s, tec_end_%s = %s; %s < tec_end_%s; ++%s) {", ct, v,
             lo ? lo : "0", v, hi ? hi : "0", v, v, v);
    else
        cg_line(e, s, "for (%s %s = %s; %s < %s; ++%s) {", ct, v, lo ? lo : "0", v, hi ? hi : "0", v);
    free(lo);
    free(hi);
    cg_emit_body(e, s, st->nbody > 0 ? st->body[0] : NULL);
    cg_line(e, s, "}");
    cg_unbind(e, 1);
}

static void emit_block(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    cg_str c = {0};
    cg_str_put_comment_text(&c, st->name ? st->name : "");
    cg_line(e, s, "{   /* block %s */", c.p ? c.p : "");
    free(c.p);
    e->indent++;
    /* Bindings are expressions of the enclosing loop variables: render
     * them all before any iteration variable comes into scope. */
    char **texts = calloc((size_t)(st->niters > 0 ? st->niters : 1), sizeof *texts);
    if (!texts) {
        e->oom = true;
        e->indent--;
        return;
    }
    for (int i = 0; i < st->niters; i++)
        texts[i] = expr_text_plain(e, st->iters[i].binding, P_TOP, true);
    cg_str cond = {0};
    int nreduce = 0;
    for (int i = 0; i < st->niters; i++) {
        const ir_itervar *it = &st->iters[i];
        const char *ct = cg_var_ctype(e, it->var);
        const char *v = cg_bind(e, it->var, it->var ? it->var->name : "v");
        cg_line(e, s, "const %s %s = %s;%s", ct, v, texts[i] ? texts[i] : "0",
             it->kind == IR_ITER_REDUCE ? "   /* reduce */" : "");
        mark_unused(e, s, it->var, &e->used_vars, v);
        if (it->kind == IR_ITER_REDUCE) {
            cg_str_printf(&cond, "%s%s == 0", nreduce ? " && " : "", v);
            nreduce++;
        }
        free(texts[i]);
    }
    free(texts);
    if (st->init) {
        /* TensorIR's rule: init runs when every reduce iteration variable
         * is at its first value. */
        if (nreduce > 0)
            cg_line(e, s, "if (%s) {", cond.p ? cond.p : "1");
        else
            cg_line(e, s, "{   /* init: no reduce iteration variables, so it always runs */");
        cg_emit_body(e, s, st->init);
        cg_line(e, s, "}");
    }
    free(cond.p);
    if (st->nbody > 0 && st->body[0])
        emit_stmt(e, s, st->body[0]);
    cg_unbind(e, st->niters);
    e->indent--;
    cg_line(e, s, "}");
}


static void emit_store(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    if (ir_expr_lanes(st->value) > 1) {
        cg_emit_vector_store(e, s, st);
        return;
    }
    cg_str t = {0};
    cg_emit_access(e, &t, st->buf, st, st->args, st->nargs);
    cg_str_puts(&t, " = ");
    bool small = cg_is_small_float(st->buf->dtype);
    const ir_expr *v = st->value;
    if (small && v->kind == IR_LOAD && v->dtype == st->buf->dtype) {
        /* a copy of a value of the format (a packed panel): its bits, a NaN
         * quieted, as tec_*_bits(tec_*_value(h)) gives them */
        e->helper_used[H_SMALLFLOAT] = true;
        cg_str_printf(&t, "tec_%s_copy(", ir_dtype_name(st->buf->dtype));
        cg_emit_access(e, &t, v->buf, v, v->args, v->nargs);
        cg_str_puts(&t, ")");
        if (t.oom)
            e->oom = true;
        cg_line(e, s, "%s;", t.p ? t.p : "");
        free(t.p);
        return;
    }
    if (small) {   /* the value is already of the format: the conversion is exact */
        e->helper_used[H_SMALLFLOAT] = true;
        cg_str_printf(&t, "tec_%s_bits(", ir_dtype_name(st->buf->dtype));
    }
    emit_operand_plain(e, &t, st->value, P_SELECT, true);
    if (small)
        cg_str_puts(&t, ")");
    if (t.oom)
        e->oom = true;
    cg_line(e, s, "%s;", t.p ? t.p : "");
    free(t.p);
}

/* A prefetch's temporal locality (__builtin_prefetch's third argument): 2,
 * prefetcht1 on x86, brings the line into L2 (and L3) but not L1 — the next
 * weight panel streams in beside the current one without evicting the
 * tile's L1 working set (bench/results/pw7_s20.txt section 2, pref_s21.txt). */
#define PREFETCH_LOCALITY 2

/* `prefetch B[i, j]`: __builtin_prefetch of the element's address, read
 * intent.  Its indices may lie outside B, so the offset is computed in
 * uintptr_t (wrapping, no pointer arithmetic out of the object) and the
 * address made from the integer: x86's prefetch never faults. */
static void emit_prefetch(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    const char *name = st->buf ? cg_lookup(e, st->buf) : NULL;
    if (!name || st->nargs != st->buf->ndim) {
        internal(e, "prefetch of buffer '%s': not in scope or indexed with %d indices",
                 st->buf && st->buf->name ? st->buf->name : "?", st->nargs);
        return;
    }
    cg_str t = {0};
    cg_str_printf(&t, "__builtin_prefetch((const void *)((uintptr_t)(const void *)%s + (", name);
    for (int k = 1; k < st->nargs; k++)
        cg_str_puts(&t, "(");
    for (int k = 0; k < st->nargs; k++) {
        if (k > 0) {   /* Horner form, as emit_offset, in uintptr_t */
            cg_str_puts(&t, " * (uintptr_t)");
            put_count(&t, st->buf->shape[k]);
            cg_str_puts(&t, " + ");
        }
        cg_str_puts(&t, "(uintptr_t)(int64_t)(");
        cg_emit_operand(e, &t, st->args[k], P_TOP, false);
        cg_str_puts(&t, k > 0 ? "))" : ")");
    }
    if (st->nargs == 0)
        cg_str_puts(&t, "0");
    cg_str_printf(&t, ") * sizeof *%s), 0, %d);", name, PREFETCH_LOCALITY);
    if (t.oom)
        e->oom = true;
    cg_line(e, s, "%s", t.p ? t.p : "");
    free(t.p);
}

/* Element count of b, checked with GMP against what int64_t offsets and
 * size_t byte counts can hold. */
static bool buffer_numel(cg_emitter *e, const ir_buffer *b, int64_t *numel)
{
    mpz_t n, bytes;
    mpz_init_set_ui(n, 1);
    bool ok = true;
    for (int i = 0; i < b->ndim; i++) {
        if (b->shape[i] < 1) {
            internal(e, "buffer '%s' has extent %lld in dimension %d", b->name,
                     (long long)b->shape[i], i);
            ok = false;
            break;
        }
        mpz_mul_si(n, n, (long)b->shape[i]);
    }
    mpz_init(bytes);
    mpz_mul_ui(bytes, n, (unsigned long)(cg_is_supported_dtype(b->dtype) ? ir_dtype_size(b->dtype) : 1));
    if (ok && (!mpz_fits_slong_p(n) || mpz_sizeinbase(bytes, 2) > 8 * sizeof(size_t) - 1)) {
        char *txt = mpz_get_str(NULL, 10, n);
        cg_user_error(e, "codegen: buffer '%s' of @%s has %s elements, more than this machine can "
                   "address", b->name, cg_func_name(e), txt ? txt : "too many");
        free(txt);
        ok = false;
    }
    if (ok)
        *numel = (int64_t)mpz_get_si(n);
    mpz_clear(n);
    mpz_clear(bytes);
    return ok;
}

static bool buffer_dtype_ok(cg_emitter *e, const ir_buffer *b)
{
    if (cg_is_supported_dtype(b->dtype))
        return true;
    cg_user_error(e, "codegen: the C backend does not support %s buffers yet ('%s' in @%s)",
               b->dtype >= 0 && b->dtype < IR_NDTYPES ? ir_dtype_name(b->dtype) : "unknown",
               b->name ? b->name : "?", cg_func_name(e));
    return false;
}

static void shape_text(cg_str *s, const ir_buffer *b)
{
    cg_str_printf(s, "%s[", cg_is_supported_dtype(b->dtype) || (b->dtype >= 0 && b->dtype < IR_NDTYPES)
                             ? ir_dtype_name(b->dtype) : "?");
    for (int i = 0; i < b->ndim; i++)
        cg_str_printf(s, "%s%lld", i ? ", " : "", (long long)b->shape[i]);
    cg_str_puts(s, "]");
}

static bool alloc_on_heap(const ir_buffer *b, int64_t numel)
{
    return b->scope != IR_SCOPE_STACK ||
           numel > CG_STACK_ALLOC_MAX / (cg_is_supported_dtype(b->dtype) ? ir_dtype_size(b->dtype) : 1);
}

static int heap_slot(const cg_emitter *e, const ir_stmt *st)
{
    for (int i = 0; i < e->nheap; i++)
        if (e->heap[i] == st)
            return i;
    return -1;
}

static void emit_alloc(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    const ir_buffer *b = st->buf;
    int64_t numel = 1;
    if (!b) {
        internal(e, "alloc without a buffer");
        return;
    }
    if (!buffer_dtype_ok(e, b) || !buffer_numel(e, b, &numel))
        return;
    const char *ct = ir_dtype_ctype(b->dtype);
    cg_str info = {0};
    cg_str_put_comment_text(&info, b->name);
    cg_str_puts(&info, ": ");
    shape_text(&info, b);
    cg_str_printf(&info, ", %s", b->scope == IR_SCOPE_STACK ? "stack" : "global");
    cg_line(e, s, "{");
    e->indent++;
    const char *v = cg_bind(e, b, b->name);
    int slot = heap_slot(e, st);
    /* Storage starts zeroed, as the IR defines, unless the buffer is
     * `filled` (every element stored before any is read). */
    const char *zeroed = b->filled ? "filled" : "zeroed";
    if (!alloc_on_heap(b, numel)) {
        /* Cache-line aligned from a line up: a tile that lives in memory
         * is read and written in whole vectors, and one straddling two
         * lines costs two accesses (without the `= {0}` GCC aligns a
         * filled array to 16 bytes only: QDQ ResNet-18's stride-2 3x3
         * convolutions 360 -> 530 us) */
        bool line = numel * ir_dtype_size(b->dtype) >= 64;
        cg_line(e, s, "%s %s[%lld]%s%s;   /* alloc %s, %s */", ct, v, (long long)numel,
             line ? " __attribute__((aligned(64)))" : "", b->filled ? "" : " = {0}",
             info.p ? info.p : "", zeroed);
        mark_unused(e, s, b, &e->read_bufs, v);   /* written only: "set but not used" */
    } else if (e->par_depth > 0) {
        /* this thread's part of the loop's slab (emit_parallel_loop) */
        int64_t off = -1;
        for (int i = 0; i < e->nslab; i++)
            if (e->slab[i].st == st)
                off = e->slab[i].offset;
        if (off < 0)
            internal(e, "heap alloc of '%s' in a parallel loop was not planned", b->name);
        /* plain decimal sizes (no `u`: the product is size_t already), so
         * that kernels differing only in them form a family (codegen/split.c) */
        cg_line(e, s, "%s *restrict %s = (%s *)(tec_slab + (size_t)omp_get_thread_num() * %lld + %lld);"
             "   /* alloc %s */", ct, v, ct, (long long)e->slab_bytes, (long long)off,
             info.p ? info.p : "");
        if (!b->filled)
            cg_line(e, s, "memset(%s, 0, %lld * sizeof *%s);   /* zeroed, as allocs are */", v,
                 (long long)numel, v);
        if (st->nbody > 0 && st->body[0])
            emit_stmt(e, s, st->body[0]);
        free(info.p);
        cg_unbind(e, 1);
        e->indent--;
        cg_line(e, s, "}");
        return;
    } else if (slot < 0) {
        internal(e, "heap alloc of '%s' was not seen by the pre-scan", b->name);
    } else {
        if (b->filled)
            cg_line(e, s, "%s *restrict %s = malloc(%lld * sizeof *%s);   /* alloc %s, filled */", ct,
                 v, (long long)numel, v, info.p ? info.p : "");
        else
            cg_line(e, s, "%s *restrict %s = calloc(%lld, sizeof *%s);   /* alloc %s, zeroed */", ct,
                 v, (long long)numel, v, info.p ? info.p : "");
        char cond[300];
        snprintf(cond, sizeof cond, "%s == NULL", v);
        emit_fail_if(e, s, cond, e->asserts.n + 1, "out of memory");
        cg_line(e, s, "tec_heap[%d] = %s;", slot, v);
    }
    free(info.p);
    if (st->nbody > 0 && st->body[0])
        emit_stmt(e, s, st->body[0]);
    if (alloc_on_heap(b, numel) && slot >= 0) {
        cg_line(e, s, "free(%s);", v);
        cg_line(e, s, "tec_heap[%d] = NULL;", slot);
    }
    cg_unbind(e, 1);
    e->indent--;
    cg_line(e, s, "}");
}


static void emit_let(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    const char *ct = ir_var_lanes(st->var) > 1
                         ? cg_vector_ctype(e, st->var->dtype, ir_var_lanes(st->var))
                         : cg_var_ctype(e, st->var);
    char *value = expr_text_plain(e, st->value, P_SELECT, true);
    cg_line(e, s, "{");
    e->indent++;
    const char *v = cg_bind(e, st->var, st->var ? st->var->name : "t");
    cg_line(e, s, "const %s %s = %s;", ct, v, value ? value : "0");
    free(value);
    if (ir_var_lanes(st->var) > 1)
        cg_line(e, s, "(void)%s;", v);
    else
        mark_unused(e, s, st->var, &e->used_vars, v);
    if (st->nbody > 0 && st->body[0])
        emit_stmt(e, s, st->body[0]);
    cg_unbind(e, 1);
    e->indent--;
    cg_line(e, s, "}");
}

static void emit_if(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    char *cond = expr_text(e, st->cond, P_TOP);
    cg_line(e, s, "if (%s) {", cond ? cond : "0");
    free(cond);
    cg_emit_body(e, s, st->nbody > 0 ? st->body[0] : NULL);
    if (st->orelse) {
        cg_line(e, s, "} else {");
        cg_emit_body(e, s, st->orelse);
    }
    cg_line(e, s, "}");
}

static void emit_eval(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    const ir_expr *x = st->value;
    if (x && x->kind == IR_CALL && x->fn >= 0 && x->fn < IR_NINTRINSICS &&
        ir_intrin_class(x->fn) == 'r') {
        if (x->nargs != ir_intrin_arity(x->fn)) {
            internal(e, "%s takes %d arguments, not %d", ir_intrin_name(x->fn),
                     ir_intrin_arity(x->fn), x->nargs);
            return;
        }
        for (int i = 0; i < x->nargs; i++)
            if (!x->args[i] || !ir_dtype_is_int(x->args[i]->dtype)) {
                internal(e, "argument %d of %s is not an integer", i + 1, ir_intrin_name(x->fn));
                return;
            }
        e->hook_used[x->fn] = true;
        cg_str t = {0};
        cg_str_printf(&t, "%s(", ir_intrin_name(x->fn));
        emit_args(e, &t, x->args, x->nargs);
        cg_str_puts(&t, ");");
        if (t.oom)
            e->oom = true;
        cg_line(e, s, "%s", t.p ? t.p : "");
        free(t.p);
        return;
    }
    /* A pure expression as a statement has no effect; keep it visible. */
    char *text = expr_text(e, x, P_UNARY);
    cg_line(e, s, "(void)%s;", text ? text : "0");
    free(text);
}

static void emit_assert(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    int k = 0;
    for (int i = 0; i < e->asserts.n; i++)
        if (e->asserts.items[i] == st) {
            k = i + 1;
            break;
        }
    if (k == 0) {
        internal(e, "assert not seen by the pre-scan");
        return;
    }
    char *cond = expr_text(e, st->cond, P_UNARY);
    cg_str neg = {0};
    cg_str_printf(&neg, "!%s", cond ? cond : "0");
    free(cond);
    char why[600];
    snprintf(why, sizeof why, "assert %d: %s", k, st->msg ? st->msg : "(no message)");
    emit_fail_if(e, s, neg.p ? neg.p : "1", k, why);
    if (neg.oom)
        e->oom = true;
    free(neg.p);
}

/* Whether st is a loop over constant bounds lo..hi named `name` that
 * starts at `at` (any start when at is NULL). */
static bool chunk_loop(const ir_stmt *st, const char *name, const int64_t *at)
{
    return st && st->kind == IR_S_FOR && st->var && st->lo && st->hi &&
           st->lo->kind == IR_INT && st->hi->kind == IR_INT &&
           (!name || strcmp(st->var->name, name) == 0) && (!at || st->lo->ival == *at);
}

/* The statements of seq from i on that are the chunks of one vectorized
 * loop (ir/vectorize.c: loops of one variable name stepping by the lanes
 * over consecutive constant ranges, then perhaps a scalar tail), or 0. */
static int chunk_group(const ir_stmt *seq, int i)
{
    const ir_stmt *first = seq->body[i];
    if (!chunk_loop(first, NULL, NULL) || first->for_kind != IR_FOR_VECTORIZED ||
        ir_for_step(first) < 2)
        return 0;
    int n = 1;
    int64_t at = first->hi->ival;
    while (i + n < seq->nbody && chunk_loop(seq->body[i + n], first->var->name, &at)) {
        const ir_stmt *next = seq->body[i + n];
        bool chunk = next->for_kind == IR_FOR_VECTORIZED && ir_for_step(next) > 1;
        if (!chunk && (next->for_kind != IR_FOR_SERIAL || ir_for_step(next) > 1))
            break;
        n++;
        at = next->hi->ival;
        if (!chunk)
            break;   /* the scalar tail is last */
    }
    return n;
}

/* One comment for the n loops a vectorized loop became: its range, its
 * widest lanes, and whether narrower chunks and a scalar tail follow. */
static void put_chunks_comment(cg_emitter *e, cg_str *s, ir_stmt *const *loops, int n)
{
    int chunks = 0;
    for (int i = 0; i < n; i++)
        chunks += ir_for_step(loops[i]) > 1;
    cg_line(e, s, "/* vectorized: %s in %lld..%lld, %lld lanes%s%s */", loops[0]->var->name,
         (long long)loops[0]->lo->ival, (long long)loops[n - 1]->hi->ival,
         (long long)ir_for_step(loops[0]), chunks > 1 ? ", narrower vectors" : "",
         n > chunks ? " and a scalar tail" : "");
}

static void emit_stmt(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    if (!st)
        return;
    switch (st->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < st->nbody; i++) {
            int n = e->quiet_chunks ? 0 : chunk_group(st, i);
            if (n == 0) {
                emit_stmt(e, s, st->body[i]);
                continue;
            }
            put_chunks_comment(e, s, st->body + i, n);
            e->quiet_chunks = true;
            for (int j = i; j < i + n; j++)
                emit_stmt(e, s, st->body[j]);
            e->quiet_chunks = false;
            i += n - 1;
        }
        return;
    case IR_S_FOR: emit_for(e, s, st); return;
    case IR_S_BLOCK: emit_block(e, s, st); return;
    case IR_S_STORE: emit_store(e, s, st); return;
    case IR_S_ALLOC: emit_alloc(e, s, st); return;
    case IR_S_LET: emit_let(e, s, st); return;
    case IR_S_IF: emit_if(e, s, st); return;
    case IR_S_EVAL: emit_eval(e, s, st); return;
    case IR_S_ASSERT: emit_assert(e, s, st); return;
    case IR_S_PREFETCH: emit_prefetch(e, s, st); return;
    default:
        internal(e, "unknown statement kind #%d", (int)st->kind);
        return;
    }
}

/* ---------------------------------------------------------------- unrolled and parallel loops */

/* An unrolled loop with constant bounds: one copy of the body per
 * iteration, each binding the loop variable to its constant, so indices
 * fold and a register tile's elements become distinct values. */
static void emit_unrolled_loop(cg_emitter *e, cg_str *s, const ir_stmt *st, int64_t lo, int64_t hi)
{
    const char *ct = cg_var_ctype(e, st->var);
    cg_line(e, s, "/* unrolled: %s in %lld..%lld */", st->var->name, (long long)lo, (long long)hi);
    for (int64_t k = lo; k < hi; k++) {
        cg_line(e, s, "{");
        e->indent++;
        const char *v = cg_bind(e, st->var, st->var->name);
        cg_line(e, s, "const %s %s = %lld;", ct, v, (long long)k);
        mark_unused(e, s, st->var, &e->used_vars, v);
        if (st->nbody > 0 && st->body[0])
            emit_stmt(e, s, st->body[0]);
        cg_unbind(e, 1);
        e->indent--;
        cg_line(e, s, "}");
    }
}

typedef struct leaves_ctx {
    const cg_emitter *e;
    bool leaves;
} leaves_ctx;

static bool is_checked_access(const cg_emitter *e, const void *access)
{
    for (int i = 0; !e->unchecked && i < e->sites.n; i++)
        if (e->sites.items[i].access == access)
            return true;
    return false;
}

/* Whether running s's iterations on several threads keeps every exit and
 * side effect right: no assert, checked division or checked index (those leave
 * the kernel at once), and no runtime hook (its counters are not shared-memory safe).
 * Heap temporaries are fine: each thread allocates its own, and a failed
 * allocation is reported after the loop (emit_alloc). */
static bool stmt_leaves_early(const ir_stmt *st, void *ctx)
{
    leaves_ctx *c = ctx;
    if (st->kind == IR_S_ASSERT || st->kind == IR_S_EVAL || is_checked_access(c->e, st))
        c->leaves = true;
    return !c->leaves;
}

static bool expr_leaves_early(const ir_expr *x, void *ctx)
{
    leaves_ctx *c = ctx;
    c->leaves |= div_is_checked(x) || cast_is_checked(x) || is_checked_access(c->e, x);
    return !c->leaves;
}

/* A parallel loop becomes an OpenMP parallel region (GCC outlines the body
 * and runs it on libgomp's thread pool) whose threads take the iterations
 * through tec_loop_take (emit_prelude.c, emit_loop_shares: each its own
 * share, then the rest of a slower thread's); tec_num_threads is set by the
 * loader (--threads, TEC_NUM_THREADS).  Returns false when the loop must
 * run serially (see stmt_leaves_early). */
/* Heap temporaries inside a parallel loop live in one slab allocated
 * before it: each thread owns tec_num_threads-th of it, each alloc an
 * aligned offset of that share.  (A calloc per iteration would mmap and
 * munmap large buffers on every iteration, and every munmap stops all the
 * other threads to flush their TLBs.) */
typedef struct par_slab_ctx {
    cg_emitter *e;
    int64_t bytes;        /* per thread */
} par_slab_ctx;

static int64_t alloc_bytes(const ir_buffer *b)
{
    int64_t n = 1;
    for (int i = 0; i < b->ndim && n <= INT64_MAX / 2; i++)
        n = b->shape[i] > 0 && n <= INT64_MAX / b->shape[i] ? n * b->shape[i] : INT64_MAX / 2 + 1;
    return n <= (INT64_MAX / 16) / 8 ? n * ir_dtype_size(b->dtype) : -1;
}

static bool slab_visit(const ir_stmt *st, void *p)
{
    par_slab_ctx *c = p;
    if (st->kind == IR_S_ALLOC && st->buf && cg_is_supported_dtype(st->buf->dtype)) {
        int64_t bytes = alloc_bytes(st->buf);
        if (bytes >= 0 && alloc_on_heap(st->buf, bytes / ir_dtype_size(st->buf->dtype)) &&
            c->bytes >= 0 && bytes <= INT64_MAX / 4 - c->bytes) {
            cg_emitter *e = c->e;
            if (e->nslab == e->capslab) {
                int cap = e->capslab ? 2 * e->capslab : 8;
                cg_slab *q = realloc(e->slab, sizeof *q * (size_t)cap);
                if (!q) {
                    e->oom = true;
                    return false;
                }
                e->slab = q;
                e->capslab = cap;
            }
            e->slab[e->nslab++] = (cg_slab){st, c->bytes};
            c->bytes += (bytes + 63) / 64 * 64;
        } else if (bytes < 0 || (alloc_on_heap(st->buf, 1) && c->bytes < 0))
            c->bytes = -1;
    }
    return true;
}

static bool emit_parallel_loop(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    leaves_ctx lc = {e, false};
    if (st->nbody > 0 && st->body[0])
        ir_stmt_walk(st->body[0], stmt_leaves_early, expr_leaves_early, &lc);
    if (lc.leaves || e->par_depth > 0 || !st->var || !ir_dtype_is_int(st->var->dtype))
        return false;
    e->nslab = 0;
    par_slab_ctx sc = {e, 0};
    if (st->nbody > 0 && st->body[0])
        ir_stmt_walk(st->body[0], slab_visit, NULL, &sc);
    if (sc.bytes < 0)
        return false;   /* sizes too large to plan: serially */
    const char *ct = cg_var_ctype(e, st->var);
    char *lo = cg_bound_text(e, st->lo);
    char *hi = cg_bound_text(e, st->hi);
    e->omp_used = true;
    cg_line(e, s, "{");
    e->indent++;
    cg_line(e, s, "const %s tec_lo = %s, tec_hi = %s;", ct, lo ? lo : "0", hi ? hi : "0");
    free(lo);
    free(hi);
    if (sc.bytes > 0) {
        e->slab_bytes = sc.bytes;
        cg_line(e, s, "/* heap temporaries of the loop: %lld bytes per thread */", (long long)sc.bytes);
        cg_line(e, s, "char *tec_slab = aligned_alloc(64, (size_t)tec_num_threads * %lld);",
             (long long)sc.bytes);
        emit_fail_if(e, s, "tec_slab == NULL", e->asserts.n + 1, "out of memory");
    }
    const char *v = cg_bind(e, st->var, st->var->name);
    cg_line(e, s, "tec_loop tec_shares;");
    cg_line(e, s, "if (tec_loop_start(&tec_shares, tec_lo, tec_hi))");
    cg_line(e, s, "#pragma omp parallel num_threads(tec_num_threads)");
    cg_line(e, s, "{");
    e->indent++;
    cg_line(e, s, "const int tec_t = omp_get_thread_num(), tec_team = omp_get_num_threads();");
    cg_line(e, s, "int64_t tec_first, tec_end;");
    cg_line(e, s, "while (tec_loop_take(&tec_shares, tec_t, tec_team, &tec_first, &tec_end))");
    cg_line(e, s, "for (%s %s = (%s)tec_first; %s < (%s)tec_end; ++%s) {", ct, v, ct, v, ct, v);
    e->par_depth++;
    cg_emit_body(e, s, st->nbody > 0 ? st->body[0] : NULL);
    e->par_depth--;
    cg_line(e, s, "}");
    e->indent--;
    cg_line(e, s, "}");
    cg_unbind(e, 1);
    if (sc.bytes > 0)
        cg_line(e, s, "free(tec_slab);");
    e->nslab = 0;
    e->indent--;
    cg_line(e, s, "}");
    return true;
}

/* ---------------------------------------------------------------- pre-scan of a function */

static bool scan_expr(const ir_expr *x, void *ctx)
{
    cg_emitter *e = ctx;
    if (x->kind == IR_VAR)
        set_add(e, &e->used_vars, x->var);
    else if (x->kind == IR_LOAD) {
        set_add(e, &e->used_bufs, x->buf);
        set_add(e, &e->read_bufs, x->buf);
    }
    else if (div_is_checked(x) || cast_is_checked(x))
        e->split = true;
    return true;
}

static bool scan_stmt(const ir_stmt *st, void *ctx)
{
    cg_emitter *e = ctx;
    if (st->kind == IR_S_STORE) {
        set_add(e, &e->used_bufs, st->buf);
        set_add(e, &e->written_bufs, st->buf);
    } else if (st->kind == IR_S_ALLOC && st->buf) {
        int64_t numel = 1;
        const ir_buffer *b = st->buf;
        /* Overflowing sizes are reported when the alloc is emitted. */
        for (int i = 0; i < b->ndim && numel <= INT64_MAX / 2; i++)
            numel = b->shape[i] > 0 && numel <= INT64_MAX / b->shape[i] ? numel * b->shape[i]
                                                                        : INT64_MAX / 2 + 1;
        if (alloc_on_heap(b, numel) && heap_slot(e, st) < 0) {
            if (e->nheap == e->capheap) {
                int cap = e->capheap ? 2 * e->capheap : 8;
                const ir_stmt **p = realloc(e->heap, sizeof *p * (size_t)cap);
                if (!p) {
                    e->oom = true;
                    return true;
                }
                e->heap = p;
                e->capheap = cap;
            }
            e->heap[e->nheap++] = st;
        }
    }
    return true;
}

static void reset_function(cg_emitter *e)
{
    cg_unbind(e, e->nbinds);
    free(e->asserts.items);
    e->asserts = (assert_list){0};
    free(e->sites.items);
    e->sites = (cg_bound_sites){0};
    e->nheap = 0;
    e->split = false;
    e->used_vars.n = e->used_bufs.n = e->read_bufs.n = e->written_bufs.n = 0;
    e->indent = 0;
}

/* ---------------------------------------------------------------- functions */

static void emit_func_comment(cg_emitter *e, cg_str *s, int index)
{
    const ir_func *f = e->f;
    cg_str_puts(s, "/* @");
    cg_str_put_comment_text(s, f->name);
    cg_str_printf(s, " (kernel %d)\n", index);
    for (int i = 0; i < f->nattrs; i++) {
        cg_str_puts(s, " *   ");
        cg_str_put_comment_text(s, f->attrs[i].key);
        cg_str_puts(s, ": ");
        cg_str_put_comment_text(s, f->attrs[i].value);
        cg_str_puts(s, "\n");
    }
    for (int i = 0; i < f->nparams; i++) {
        const ir_buffer *b = f->params[i];
        cg_str_puts(s, i == 0 ? " *   params: " : ",\n *           ");
        cg_str_put_comment_text(s, b->name);
        cg_str_puts(s, " ");
        shape_text(s, b);
        cg_str_puts(s, set_has(&e->written_bufs, b) ? " (written)" : " (read)");
    }
    if (f->nparams > 0)
        cg_str_puts(s, "\n");
    bool fails = e->asserts.n > 0 || e->nheap > 0 || e->split;
    cg_str_puts(s, fails ? " *   returns 0 on success, or\n" : " *   returns 0\n");
    for (int i = 0; i < e->asserts.n; i++) {
        cg_str_printf(s, " *     %d: assert failed: ", i + 1);
        cg_str_put_comment_text(s, e->asserts.items[i]->msg ? e->asserts.items[i]->msg
                                                         : "(no message)");
        cg_str_puts(s, "\n");
    }
    /* Only the codes this kernel can return; the numbering is fixed. */
    if (e->nheap > 0)
        cg_str_printf(s, " *     %d: out of memory\n", e->asserts.n + 1);
    if (e->split) {
        cg_str_printf(s, " *     %d: integer division by zero\n", e->asserts.n + 2);
        cg_str_printf(s, " *     %d: float to integer cast out of range\n", e->asserts.n + 3);
    }
    if (e->sites.n > 0)
        cg_str_printf(s, " *     %d: index out of range (%d checked)\n", e->asserts.n + 4, e->sites.n);
    cg_str_puts(s, " */\n");
}

/* "const float *restrict A, float *restrict C" */
static void emit_param_list(cg_emitter *e, cg_str *s, bool bind_names)
{
    const ir_func *f = e->f;
    for (int i = 0; i < f->nparams; i++) {
        const ir_buffer *b = f->params[i];
        const char *v = bind_names ? cg_bind(e, b, b->name) : cg_lookup(e, b);
        cg_str_printf(s, "%s%s%s *restrict %s", i ? ", " : "",
                   set_has(&e->written_bufs, b) ? "" : "const ", ir_dtype_ctype(b->dtype),
                   v ? v : "tec_p");
    }
}

/* The body of a kernel: statements, then the exit that frees temporaries. */
static void emit_func_body(cg_emitter *e, cg_str *s)
{
    e->indent = 1;
    if (e->nheap > 0 && !e->split) {
        cg_line(e, s, "int32_t tec_rc = 0;");
        cg_line(e, s, "void *tec_heap[%d] = {0};   /* live heap temporaries, freed on every exit */",
             e->nheap);
    } else if (e->nheap > 0) {
        cg_line(e, s, "int32_t tec_rc = 0;");
    }
    for (int i = 0; i < e->f->nparams; i++)
        mark_unused(e, s, e->f->params[i], &e->used_bufs, cg_lookup(e, e->f->params[i]));
    cg_emit_bf16_flag(e, s);
    if (e->f->body)
        emit_stmt(e, s, e->f->body);
    if (e->nheap > 0) {
        cg_str_puts(s, "tec_exit:\n");
        cg_line(e, s, "for (int tec_i = 0; tec_i < %d; ++tec_i)", e->nheap);
        cg_line(e, s, "    free(tec_heap[tec_i]);");
        cg_line(e, s, "return tec_rc;");
    } else {
        cg_line(e, s, "return 0;");
    }
}

static void emit_func(cg_emitter *e, cg_str *s, int index)
{
    const ir_func *f = e->m->funcs[index];
    e->f = f;
    reset_function(e);
    e->asserts = function_asserts(f);
    if (e->asserts.oom)
        e->oom = true;
    if (!e->unchecked) {
        e->sites = cg_unproven_accesses(f);
        e->oom |= e->sites.oom;
        e->split |= e->sites.n > 0;   /* a failed check longjmps to the wrapper */
    }
    ir_stmt_walk(f->body, scan_stmt, scan_expr, e);
    for (int i = 0; i < f->nparams; i++)
        if (!f->params[i]) {
            internal(e, "parameter %d is missing", i);
            return;
        }
    bool ok = true;
    for (int i = 0; i < f->nparams; i++) {
        int64_t numel;
        ok = buffer_dtype_ok(e, f->params[i]) && buffer_numel(e, f->params[i], &numel) && ok;
    }
    if (!ok)
        return;
    char *sym = cg_symbol_name(e->m, index);
    if (!sym) {
        e->oom = true;
        return;
    }
    emit_func_comment(e, s, index);
    if (!e->split) {
        cg_str_printf(s, "%sint32_t %s(", cg_linkage(e), sym);
        emit_param_list(e, s, true);
        cg_str_puts(s, f->nparams ? ")\n{\n" : "void)\n{\n");
        emit_func_body(e, s);
        cg_str_puts(s, "}\n");
    } else {
        /* The body runs under the wrapper's setjmp; a checked division by
         * zero longjmps back, and the wrapper frees what was allocated. */
        e->setjmp_used = true;
        cg_str_printf(s, "static int32_t %s_body(", sym);
        emit_param_list(e, s, true);
        cg_str_printf(s, "%s%sjmp_buf tec_jb)\n{\n", f->nparams ? ", " : "",
                   e->nheap ? "void *volatile *tec_heap, " : "");
        emit_func_body(e, s);
        cg_str_puts(s, "}\n\n");
        cg_str_printf(s, "%sint32_t %s(", cg_linkage(e), sym);
        emit_param_list(e, s, false);
        cg_str_puts(s, f->nparams ? ")\n{\n" : "void)\n{\n");
        e->indent = 1;
        cg_line(e, s, "jmp_buf tec_jb;");
        if (e->nheap)
            cg_line(e, s, "void *volatile tec_heap[%d] = {0};", e->nheap);
        cg_str call = {0};
        cg_str_printf(&call, "return %s_body(", sym);
        for (int i = 0; i < f->nparams; i++)
            cg_str_printf(&call, "%s%s", i ? ", " : "", cg_lookup(e, f->params[i]));
        cg_str_printf(&call, "%s%stec_jb);", f->nparams ? ", " : "", e->nheap ? "tec_heap, " : "");
        if (call.oom)
            e->oom = true;
        /* longjmp's value says why the body stopped. */
        static const char *const why[3] = {"integer division by zero",
                                           "float to integer cast out of range",
                                           "index out of range"};
        cg_line(e, s, "switch (setjmp(tec_jb)) {");
        cg_line(e, s, "case 0:");
        cg_line(e, s, "    %s", call.p ? call.p : "");
        for (int k = 0; k < 3; k++) {
            cg_line(e, s, k < 2 ? "case %d:   /* %s */" : "default:   /* %d: %s */", k + 1, why[k]);
            if (e->nheap) {
                cg_line(e, s, "    for (int tec_i = 0; tec_i < %d; ++tec_i)", e->nheap);
                cg_line(e, s, "        free(tec_heap[tec_i]);");
            }
            cg_line(e, s, "    return %d;", e->asserts.n + 2 + k);
        }
        cg_line(e, s, "}");
        free(call.p);
        cg_str_puts(s, "}\n");
    }
    free(sym);
}

static char *emit_c(const ir_module *m, const cg_target *t, bool internal, bool unchecked,
                    diag *d)
{
    cg_emitter e = {.m = m, .d = d, .target = t, .internal = internal, .unchecked = unchecked};
    cg_str funcs = {0};
    for (int i = 0; i < m->nfuncs; i++) {
        if (!m->funcs[i]) {
            diag_internal(d, "codegen", "function #%d of module '%s' is missing", i,
                          m->name ? m->name : "?");
            e.failed = true;
            continue;
        }
        if (i > 0)
            cg_str_puts(&funcs, "\n");
        emit_func(&e, &funcs, i);
    }
    reset_function(&e);
    if (e.scratch)
        ir_module_free(e.scratch);
    free(e.slab);
    free(e.binds);
    free(e.heap);
    free(e.used_vars.items);
    free(e.used_bufs.items);
    free(e.read_bufs.items);
    free(e.written_bufs.items);

    cg_str out = {0};
    if (!e.failed) {
        cg_emit_prelude(&e, &out);
        cg_emit_dot4_helpers(&out, funcs.p);
        if (funcs.p)
            cg_str_puts(&out, funcs.p);
    }
    free(funcs.p);
    if (!e.failed && (e.oom || funcs.oom || out.oom)) {
        diag_error(d, diag_noloc(), "codegen: out of memory while writing the C source");
        e.failed = true;
    }
    if (e.failed) {
        free(out.p);
        return NULL;
    }
    return out.p ? out.p : strdup("");
}

char *cg_emit_c(const ir_module *m, const cg_target *t, bool unchecked, diag *d)
{
    return emit_c(m, t, false, unchecked, d);
}

char *cg_emit_c_static(const ir_module *m, const cg_target *t, bool unchecked, diag *d)
{
    return emit_c(m, t, true, unchecked, d);
}
