/* frontend/env.c — the ground floor of elaboration (env.h): diagnostics,
 * name tables, scopes and their suggestions, shapes and values as
 * messages show them, and compile-time evaluation of expressions. */
#include "frontend/env.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- diagnostics */

/* True if an error was already reported at l; otherwise remembers l. */
static bool already_reported(fe_ctx *c, diag_loc l)
{
    for (int i = 0; i < c->nreported; i++) {
        diag_loc r = c->reported[i];
        if (r.line == l.line && r.col == l.col && r.file && l.file && strcmp(r.file, l.file) == 0)
            return true;
    }
    IR_PUSH(c->a, c->reported, c->nreported, c->capreported, l);
    return false;
}

bool fe_error(fe_ctx *c, fe_span sp, const char *fmt, ...)
{
    c->errors++;
    diag_loc l = fe_loc(sp);
    if (l.line > 0 && already_reported(c, l))
        return false;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    diag_error(c->d, l, "%s", buf);
    fe_inst *in = c->inst;
    diag_loc at = fe_loc(in ? in->call : sp);
    bool same = at.line == l.line && at.col == l.col && at.file && l.file && strcmp(at.file, l.file) == 0;
    if (in && in->def && !same)
        diag_note(c->d, fe_loc(in->call), "in layer '%s', a call to %s", in->layer, in->op);
    return true;
}

void fe_note(fe_ctx *c, fe_span sp, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    diag_note(c->d, fe_loc(sp), "%s", buf);
}

const char *fe_loc_str(fe_ctx *c, fe_span sp)
{
    return ir_sprintf(c->a, "%s:%d:%d", sp.file ? sp.file->name : "?", sp.line, sp.col);
}

/* ---------------------------------------------------------------- name tables */

static const char fe_map_tomb[] = "";

static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325u;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u;
    return h;
}

/* The slot of key, or of the empty slot where it would go. */
static int map_slot(const fe_map *m, const char *key)
{
    int mask = m->cap - 1, tomb = -1;
    for (int i = (int)(hash_name(key) & (uint64_t)mask);; i = (i + 1) & mask) {
        if (!m->keys[i])
            return tomb >= 0 ? tomb : i;
        if (m->keys[i] == fe_map_tomb) {
            if (tomb < 0)
                tomb = i;
        } else if (strcmp(m->keys[i], key) == 0) {
            return i;
        }
    }
}

void *fe_map_get(const fe_map *m, const char *key)
{
    if (!m->cap)
        return NULL;
    int i = map_slot(m, key);
    return m->keys[i] && m->keys[i] != fe_map_tomb ? m->vals[i] : NULL;
}

void fe_map_put(ir_arena *a, fe_map *m, const char *key, void *val)
{
    if ((m->n + 1) * 2 > m->cap) {
        fe_map old = *m;
        m->cap = old.cap ? old.cap * 2 : 64;
        m->keys = ir_alloc(a, sizeof(char *) * (size_t)m->cap);
        m->vals = ir_alloc(a, sizeof(void *) * (size_t)m->cap);
        m->n = 0;
        for (int i = 0; i < old.cap; i++)
            if (old.keys[i] && old.keys[i] != fe_map_tomb) {
                int j = map_slot(m, old.keys[i]);
                m->keys[j] = old.keys[i];
                m->vals[j] = old.vals[i];
                m->n++;
            }
    }
    int i = map_slot(m, key);
    if (!m->keys[i])
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
}

void fe_map_del(fe_map *m, const char *key)
{
    if (!m->cap)
        return;
    int i = map_slot(m, key);
    if (m->keys[i] && m->keys[i] != fe_map_tomb)
        m->keys[i] = fe_map_tomb;
}

/* ---------------------------------------------------------------- scopes */

fe_env *fe_env_new(fe_ctx *c, fe_env *parent)
{
    fe_env *e = ir_alloc(c->a, sizeof *e);
    e->parent = parent;
    return e;
}

/* A scope holds one live binding per name (a removed one has no name).
 * From ENV_INDEXED bindings on, a hash table finds it (name -> its index
 * + 1): a program of thousands of statements looks names up in a scope of
 * thousands. */
enum { ENV_INDEXED = 16 };

fe_binding *fe_env_find_local(fe_env *e, const char *name)
{
    if (e->index.cap) {
        intptr_t i = (intptr_t)fe_map_get(&e->index, name) - 1;
        return i >= 0 && e->b[i].name ? &e->b[i] : NULL;
    }
    for (int i = e->n - 1; i >= 0; i--)
        if (e->b[i].name && strcmp(e->b[i].name, name) == 0)
            return &e->b[i];
    return NULL;
}

fe_binding *fe_env_find(fe_env *e, const char *name)
{
    for (; e; e = e->parent) {
        fe_binding *b = fe_env_find_local(e, name);
        if (b)
            return b;
    }
    return NULL;
}

/* Binds (or rebinds) name in e itself.  The pointer is valid until the next
 * bind in e. */
fe_binding *fe_env_bind(fe_ctx *c, fe_env *e, const char *name, fe_bkind k,
                        fe_value v, fe_span loc)
{
    fe_binding *b = fe_env_find_local(e, name);
    if (!b) {
        fe_binding nb = {0};
        IR_PUSH(c->a, e->b, e->n, e->cap, nb);
        b = &e->b[e->n - 1];
        if (e->n == ENV_INDEXED) {
            for (int i = 0; i < e->n - 1; i++)
                if (e->b[i].name)
                    fe_map_put(c->a, &e->index, e->b[i].name, (void *)(intptr_t)(i + 1));
        }
        if (e->n >= ENV_INDEXED)
            fe_map_put(c->a, &e->index, name, (void *)(intptr_t)e->n);
    }
    b->name = name;
    b->kind = k;
    b->v = v;
    b->loc = loc;
    b->origin = NULL;
    return b;
}

const char *fe_bkind_name(fe_bkind k)
{
    static const char *const names[] = {
        "a let", "an attribute", "a size", "a loop variable",
        "an input", "a param", "a tensor value", "a tensor",
    };
    return names[k];
}

/* Does file `from` see the lets of file `to`: is it `to`, or does it import
 * `to`, directly or through other files?  seen marks the files visited. */
static bool file_sees(fe_ctx *c, const fe_file *from, const fe_file *to, bool *seen)
{
    if (from == to)
        return true;
    for (int i = 0; i < c->nfiles; i++)
        if (c->files[i] == from) {
            if (seen[i])
                return false;
            seen[i] = true;
        }
    for (int i = 0; i < from->nstmts; i++) {
        const fe_stmt *s = from->stmts[i];
        if (s->kind == FE_S_IMPORT && s->imported && file_sees(c, s->imported, to, seen))
            return true;
    }
    return false;
}

/* Why `name` is unknown in e when some file has a top-level `let name`:
 * the let runs later, or its file is not imported where e's code is
 * written.  "" if no file has such a let. */
static const char *let_elsewhere(fe_ctx *c, fe_env *e, const char *name)
{
    while (e->parent)
        e = e->parent;
    const fe_file *from = e->file;
    const char *unimported = "";
    bool *seen = ir_alloc(c->a, sizeof(bool) * (size_t)(c->nfiles + 1));
    for (int f = 0; f < c->nfiles && from; f++)
        for (int i = 0; i < c->files[f]->nstmts; i++) {
            const fe_stmt *s = c->files[f]->stmts[i];
            if (s->kind != FE_S_LET || strcmp(s->name, name) != 0)
                continue;
            memset(seen, 0, sizeof(bool) * (size_t)c->nfiles);
            if (file_sees(c, from, c->files[f], seen))
                return ir_sprintf(c->a, " (the let '%s' at %s is not defined yet at this point)", name,
                                  fe_loc_str(c, s->name_span));
            if (!*unimported)
                unimported = ir_sprintf(c->a, " (a let of %s, at %s, which %s does not import)",
                                        c->files[f]->name, fe_loc_str(c, s->name_span), from->name);
        }
    return unimported;
}

const char *fe_suggest(fe_ctx *c, fe_env *e, const char *name)
{
    const char *elsewhere = let_elsewhere(c, e, name);
    if (*elsewhere)
        return elsewhere;
    const char **cands = NULL;
    int n = 0, cap = 0;
    for (; e; e = e->parent)
        for (int i = 0; i < e->n; i++)
            IR_PUSH(c->a, cands, n, cap, e->b[i].name);
    const char *s = diag_closest(name, cands, n);
    return s ? ir_sprintf(c->a, " (did you mean '%s'?)", s) : "";
}

/* ---------------------------------------------------------------- shapes */

const char *fe_float_str(ir_arena *a, double f)
{
    const char *s = ir_sprintf(a, "%g", f);
    return s[strspn(s, "-0123456789")] ? s : ir_sprintf(a, "%s.0", s);
}

const char *fe_shape_str(ir_arena *a, ir_dtype t, int ndim, const int64_t *shape)
{
    size_t cap = 16 + (size_t)ndim * 22, k = 0;
    char *s = ir_alloc(a, cap);
    k += (size_t)snprintf(s + k, cap - k, "%s[", ir_dtype_name(t));
    for (int i = 0; i < ndim; i++)
        k += (size_t)snprintf(s + k, cap - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    snprintf(s + k, cap - k, "]");
    return s;
}

const char *fe_tensor_str(fe_ctx *c, const fe_tensor *t)
{
    return fe_shape_str(c->a, t->dtype, t->ndim, t->shape);
}

/* Product of the extents, or -1 if it does not fit in 64 bits. */
int64_t fe_checked_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(n, shape[i], &n))
            return -1;
    return n;
}

/* ---------------------------------------------------------------- compile-time evaluation */

const char *fe_value_str(fe_ctx *c, fe_value v)
{
    switch (v.kind) {
    case FE_V_INT: return ir_sprintf(c->a, "%lld", (long long)v.i);
    case FE_V_FLOAT: return ir_sprintf(c->a, "%g", v.f);
    case FE_V_TENSOR: return fe_tensor_str(c, v.t);
    default: return "?";
    }
}

static bool int_div_check(fe_ctx *c, const fe_expr *x, int64_t b)
{
    if (b == 0) {
        fe_error(c, x->opspan, "division by zero in '%s': '%s' is 0",
                 fe_span_text(c->a, x->span), fe_span_text(c->a, x->b->span));
        return false;
    }
    return true;
}

static bool eval_int_binary(fe_ctx *c, const fe_expr *x, int64_t a, int64_t b, int64_t *r)
{
    bool ovf = false;
    switch (x->op) {
    case FE_OP_ADD: ovf = __builtin_add_overflow(a, b, r); break;
    case FE_OP_SUB: ovf = __builtin_sub_overflow(a, b, r); break;
    case FE_OP_MUL: ovf = __builtin_mul_overflow(a, b, r); break;
    case FE_OP_DIV:
        if (!int_div_check(c, x, b))
            return false;
        if (a == INT64_MIN && b == -1) {
            ovf = true;
            break;
        }
        *r = a / b;
        if (a % b != 0 && ((a < 0) != (b < 0)))
            (*r)--;
        break;
    case FE_OP_MOD:
        if (!int_div_check(c, x, b))
            return false;
        if (b == -1) {
            *r = 0;
            break;
        }
        *r = a % b;
        if (*r != 0 && ((*r < 0) != (b < 0)))
            *r += b;
        break;
    case FE_OP_EQ: *r = a == b; break;
    case FE_OP_NE: *r = a != b; break;
    case FE_OP_LT: *r = a < b; break;
    case FE_OP_LE: *r = a <= b; break;
    case FE_OP_GT: *r = a > b; break;
    case FE_OP_GE: *r = a >= b; break;
    case FE_OP_AND: *r = a && b; break;
    case FE_OP_OR: *r = a || b; break;
    default: *r = 0; break;
    }
    if (ovf) {
        fe_error(c, x->opspan, "integer overflow in '%s' (%lld %s %lld does not fit in 64 bits)",
                 fe_span_text(c->a, x->span), (long long)a, fe_op_text(x->op), (long long)b);
        return false;
    }
    return true;
}

static bool eval_float_binary(fe_ctx *c, const fe_expr *x, double a, double b, fe_value *out)
{
    out->kind = FE_V_FLOAT;
    switch (x->op) {
    case FE_OP_ADD: out->f = a + b; break;
    case FE_OP_SUB: out->f = a - b; break;
    case FE_OP_MUL: out->f = a * b; break;
    case FE_OP_DIV:
    case FE_OP_MOD:
        if (b == 0) {
            fe_error(c, x->opspan, "division by zero in '%s': '%s' is 0",
                     fe_span_text(c->a, x->span), fe_span_text(c->a, x->b->span));
            return false;
        }
        out->f = x->op == FE_OP_DIV ? a / b : a - b * floor(a / b);
        break;
    default:
        out->kind = FE_V_INT;
        switch (x->op) {
        case FE_OP_EQ: out->i = a == b; break;
        case FE_OP_NE: out->i = a != b; break;
        case FE_OP_LT: out->i = a < b; break;
        case FE_OP_LE: out->i = a <= b; break;
        case FE_OP_GT: out->i = a > b; break;
        case FE_OP_GE: out->i = a >= b; break;
        case FE_OP_AND: out->i = a && b; break;
        case FE_OP_OR: out->i = a || b; break;
        default: out->i = 0; break;
        }
    }
    return true;
}

static bool eval_call(fe_ctx *c, fe_env *e, const fe_expr *x, fe_value *out)
{
    fe_value v[3];
    int arity;
    if (strcmp(x->name, "select") == 0)
        arity = 3;
    else if (!fe_math_fn(x->name, &arity)) {
        fe_error(c, x->span, "unknown function '%s' in a compile-time expression", x->name);
        return false;
    }
    if (x->nargs != arity) {
        fe_error(c, x->span, "%s takes %d argument%s but %d %s given", x->name, arity,
                 arity == 1 ? "" : "s", x->nargs, x->nargs == 1 ? "was" : "were");
        return false;
    }
    for (int i = 0; i < x->nargs; i++) {
        if (x->args[i].name) {
            fe_error(c, x->args[i].span, "%s takes no keyword arguments", x->name);
            return false;
        }
    }
    if (arity == 3) {
        if (!fe_eval(c, e, x->args[0].value, &v[0]))
            return false;
        return fe_eval(c, e, x->args[fe_truthy(v[0]) ? 1 : 2].value, out);
    }
    for (int i = 0; i < arity; i++)
        if (!fe_eval(c, e, x->args[i].value, &v[i]))
            return false;
    const char *f = x->name;
    bool ints = v[0].kind == FE_V_INT && (arity == 1 || v[1].kind == FE_V_INT);
    if (strcmp(f, "max") == 0 || strcmp(f, "min") == 0) {
        bool mx = f[1] == 'a';
        if (ints) {
            *out = v[0];
            if (mx ? v[1].i > v[0].i : v[1].i < v[0].i)
                *out = v[1];
        } else {
            double a = fe_as_float(v[0]), b = fe_as_float(v[1]);
            out->kind = FE_V_FLOAT;
            out->f = mx ? (a > b ? a : b) : (a < b ? a : b);
        }
        return true;
    }
    if (strcmp(f, "abs") == 0 && ints) {
        if (v[0].i == INT64_MIN) {
            fe_error(c, x->span, "integer overflow in '%s'", fe_span_text(c->a, x->span));
            return false;
        }
        *out = v[0];
        out->i = v[0].i < 0 ? -v[0].i : v[0].i;
        return true;
    }
    double a = fe_as_float(v[0]), b = arity > 1 ? fe_as_float(v[1]) : 0, r;
    if (strcmp(f, "exp") == 0) r = exp(a);
    else if (strcmp(f, "log") == 0) r = log(a);
    else if (strcmp(f, "sqrt") == 0) r = sqrt(a);
    else if (strcmp(f, "rsqrt") == 0) r = 1 / sqrt(a);
    else if (strcmp(f, "tanh") == 0) r = tanh(a);
    else if (strcmp(f, "erf") == 0) r = erf(a);
    else if (strcmp(f, "sigmoid") == 0) r = 1 / (1 + exp(-a));
    else if (strcmp(f, "abs") == 0) r = fabs(a);
    else if (strcmp(f, "floor") == 0) r = floor(a);
    else if (strcmp(f, "ceil") == 0) r = ceil(a);
    else if (strcmp(f, "rint") == 0) r = rint(a);
    else if (strcmp(f, "sin") == 0) r = sin(a);
    else if (strcmp(f, "cos") == 0) r = cos(a);
    else r = pow(a, b);
    out->kind = FE_V_FLOAT;
    out->f = r;
    return true;
}

bool fe_eval(fe_ctx *c, fe_env *e, const fe_expr *x, fe_value *out)
{
    memset(out, 0, sizeof *out);
    switch (x->kind) {
    case FE_E_INT:
        out->kind = FE_V_INT;
        out->i = x->ival;
        return true;
    case FE_E_FLOAT:
        out->kind = FE_V_FLOAT;
        out->f = x->fval;
        return true;
    case FE_E_NAME: {
        fe_binding *b = fe_env_find(e, x->name);
        if (!b) {
            fe_error(c, x->span, "unknown name '%s'%s", x->name, fe_suggest(c, e, x->name));
            return false;
        }
        if (b->v.kind == FE_V_POISON)
            return false;
        if (b->v.kind == FE_V_TENSOR) {
            fe_error(c, x->span, "'%s' is a tensor (%s), but a compile-time number is needed here",
                     x->name, fe_tensor_str(c, b->v.t));
            return false;
        }
        *out = b->v;
        return true;
    }
    case FE_E_UNARY: {
        fe_value a;
        if (!fe_eval(c, e, x->a, &a))
            return false;
        *out = a;
        if (x->op == FE_OP_NOT) {
            out->kind = FE_V_INT;
            out->i = !fe_truthy(a);
        } else if (a.kind == FE_V_INT) {
            if (a.i == INT64_MIN) {
                fe_error(c, x->opspan, "integer overflow in '%s'", fe_span_text(c->a, x->span));
                return false;
            }
            out->i = -a.i;
        } else {
            out->f = -a.f;
        }
        return true;
    }
    case FE_E_BINARY: {
        fe_value a, b;
        if (!fe_eval(c, e, x->a, &a))
            return false;
        /* && and || do not evaluate their right side when the left decides. */
        if ((x->op == FE_OP_AND && !fe_truthy(a)) || (x->op == FE_OP_OR && fe_truthy(a))) {
            out->kind = FE_V_INT;
            out->i = x->op == FE_OP_OR;
            return true;
        }
        if (!fe_eval(c, e, x->b, &b))
            return false;
        if (a.kind == FE_V_INT && b.kind == FE_V_INT) {
            out->kind = FE_V_INT;
            return eval_int_binary(c, x, a.i, b.i, &out->i);
        }
        return eval_float_binary(c, x, fe_as_float(a), fe_as_float(b), out);
    }
    case FE_E_COND: {
        fe_value cond;
        if (!fe_eval(c, e, x->c, &cond))
            return false;
        return fe_eval(c, e, fe_truthy(cond) ? x->a : x->b, out);
    }
    case FE_E_CALL:
        return eval_call(c, e, x, out);
    case FE_E_CAST: {
        fe_value a;
        if (!fe_eval(c, e, x->a, &a))
            return false;
        if (ir_dtype_is_int(x->dtype)) {
            out->kind = FE_V_INT;
            if (a.kind == FE_V_INT) {
                out->i = a.i;
            } else if (!(a.f > -9.3e18 && a.f < 9.3e18)) {
                fe_error(c, x->span, "%g does not fit in %s", a.f, ir_dtype_name(x->dtype));
                return false;
            } else {
                out->i = (int64_t)a.f;
            }
            if (x->dtype == IR_I32 && (out->i < INT32_MIN || out->i > INT32_MAX)) {
                fe_error(c, x->span, "%lld does not fit in i32", (long long)out->i);
                return false;
            }
        } else {
            out->kind = FE_V_FLOAT;
            out->f = fe_as_float(a);
            if (x->dtype == IR_F32)
                out->f = (float)out->f;
        }
        return true;
    }
    case FE_E_ACCESS:
        fe_error(c, x->span, "'%s' reads a tensor, but a compile-time number is needed here",
                 fe_span_text(c->a, x->span));
        return false;
    }
    return false;
}

/* Evaluates an expression that must be an integer. */
bool fe_eval_int(fe_ctx *c, fe_env *e, const fe_expr *x, const char *what, int64_t *out)
{
    fe_value v;
    if (!fe_eval(c, e, x, &v))
        return false;
    if (v.kind != FE_V_INT) {
        fe_error(c, x->span, "%s must be an integer, but '%s' is %s", what,
                 fe_span_text(c->a, x->span), fe_float_str(c->a, v.f));
        return false;
    }
    *out = v.i;
    return true;
}

/* "H = 2, pad = 0" for the compile-time names in x (first use first). */
static void names_in(const fe_expr *x, const char **names, int *n, int max)
{
    if (!x)
        return;
    if (x->kind == FE_E_NAME) {
        for (int i = 0; i < *n; i++)
            if (strcmp(names[i], x->name) == 0)
                return;
        if (*n < max)
            names[(*n)++] = x->name;
        return;
    }
    names_in(x->a, names, n, max);
    names_in(x->b, names, n, max);
    names_in(x->c, names, n, max);
    for (int i = 0; i < x->nargs; i++)
        names_in(x->args[i].value, names, n, max);
}

const char *fe_values_of_names(fe_ctx *c, fe_env *e, const fe_expr *x)
{
    const char *names[16];
    int n = 0;
    names_in(x, names, &n, 16);
    const char *s = "";
    for (int i = 0; i < n; i++) {
        fe_binding *b = fe_env_find(e, names[i]);
        if (!b || (b->v.kind != FE_V_INT && b->v.kind != FE_V_FLOAT))
            continue;
        s = ir_sprintf(c->a, "%s%s%s = %s", s, *s ? ", " : "", names[i], fe_value_str(c, b->v));
    }
    return s;
}

fe_tensor *fe_new_tensor(fe_ctx *c, const char *name, ir_dtype t, int ndim,
                             const int64_t *shape, fe_span loc)
{
    fe_tensor *x = ir_alloc(c->a, sizeof *x);
    x->name = name;
    x->dtype = t;
    x->ndim = ndim;
    x->shape = ir_alloc(c->a, sizeof(int64_t) * (size_t)(ndim ? ndim : 1));
    if (ndim)
        memcpy(x->shape, shape, sizeof(int64_t) * (size_t)ndim);
    x->loc = loc;
    return x;
}


/* ---------------------------------------------------------------- tensors */

fe_tensor *fe_storage(fe_tensor *t) { return t->view ? t->view->src : t; }

/* ---------------------------------------------------------------- math functions */

bool fe_math_fn(const char *name, int *arity)
{
    static const struct { const char *name; int arity; } fns[] = {
        {"exp", 1}, {"log", 1}, {"sqrt", 1}, {"rsqrt", 1}, {"tanh", 1}, {"erf", 1},
        {"sigmoid", 1}, {"abs", 1}, {"floor", 1}, {"ceil", 1}, {"rint", 1}, {"sin", 1}, {"cos", 1},
        {"pow", 2}, {"max", 2}, {"min", 2}, {"select", 3},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strcmp(fns[i].name, name) == 0) {
            *arity = fns[i].arity;
            return true;
        }
    return false;
}

