/* frontend/sema.c — elaboration: names, compile-time values, calls, layer
 * names, the graph.
 *
 * The program is run at compile time, statement by statement.  A call
 * binds its arguments (sizes included) in a fresh scope and elaborates the
 * callee's body under the call's layer name; index statements go to
 * kernel.c and are gathered into stages, which become IR functions when a
 * call, an `output` or the end of the body closes them. */
#include "frontend/sema.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
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

static const char *loc_str(fe_ctx *c, fe_span sp)
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

static void map_del(fe_map *m, const char *key)
{
    if (!m->cap)
        return;
    int i = map_slot(m, key);
    if (m->keys[i] && m->keys[i] != fe_map_tomb)
        m->keys[i] = fe_map_tomb;
}

/* ---------------------------------------------------------------- scopes */

static fe_env *env_new(fe_ctx *c, fe_env *parent)
{
    fe_env *e = ir_alloc(c->a, sizeof *e);
    e->parent = parent;
    return e;
}

static fe_binding *env_find_local(fe_env *e, const char *name)
{
    for (int i = e->n - 1; i >= 0; i--)
        if (e->b[i].name && strcmp(e->b[i].name, name) == 0)
            return &e->b[i];
    return NULL;
}

fe_binding *fe_env_find(fe_env *e, const char *name)
{
    for (; e; e = e->parent) {
        fe_binding *b = env_find_local(e, name);
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
    fe_binding *b = env_find_local(e, name);
    if (!b) {
        fe_binding nb = {0};
        IR_PUSH(c->a, e->b, e->n, e->cap, nb);
        b = &e->b[e->n - 1];
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
                                  loc_str(c, s->name_span));
            if (!*unimported)
                unimported = ir_sprintf(c->a, " (a let of %s, at %s, which %s does not import)",
                                        c->files[f]->name, loc_str(c, s->name_span), from->name);
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

static fe_def *find_def(fe_ctx *c, const char *name)
{
    for (int i = 0; i < c->ndefs; i++)
        if (strcmp(c->defs[i]->name, name) == 0)
            return c->defs[i];
    return NULL;
}

static const char *suggest_def(fe_ctx *c, const char *name)
{
    const char **cands = ir_alloc(c->a, sizeof(char *) * (size_t)(c->ndefs + 1));
    for (int i = 0; i < c->ndefs; i++)
        cands[i] = c->defs[i]->name;
    const char *s = diag_closest(name, cands, c->ndefs);
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

static const char *tensor_str(fe_ctx *c, const fe_tensor *t)
{
    return fe_shape_str(c->a, t->dtype, t->ndim, t->shape);
}

/* Product of the extents, or -1 if it does not fit in 64 bits. */
static int64_t checked_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(n, shape[i], &n))
            return -1;
    return n;
}

/* ---------------------------------------------------------------- overloads */

/* Do a and b have the same ranks of tensor parameters, in order (what
 * tells overloads of one name apart)? */
static bool same_ranks(const fe_def *a, const fe_def *b)
{
    for (int i = 0, j = 0;; i++, j++) {
        while (i < a->nparams && a->params[i].type->kind != FE_T_TENSOR)
            i++;
        while (j < b->nparams && b->params[j].type->kind != FE_T_TENSOR)
            j++;
        if (i == a->nparams || j == b->nparams)
            return i == a->nparams && j == b->nparams;
        if (a->params[i].type->ndims != b->params[j].type->ndims)
            return false;
    }
}

/* "relu(x: f32[N, C])" */
static const char *def_signature(fe_ctx *c, const fe_def *d)
{
    const char *s = "";
    for (int i = 0; i < d->nparams; i++)
        s = ir_sprintf(c->a, "%s%s%s: %s", s, i ? ", " : "", d->params[i].name,
                       fe_span_text(c->a, d->params[i].type->span));
    return ir_sprintf(c->a, "%s(%s)", d->name, s);
}

/* The tensor an argument names, or NULL. */
static fe_tensor *arg_tensor(fe_inst *caller, const fe_arg *a)
{
    if (a->value->kind != FE_E_NAME)
        return NULL;
    fe_binding *b = fe_env_find(caller->env, a->value->name);
    return b && b->v.kind == FE_V_TENSOR ? b->v.t : NULL;
}

/* Can def take the call's tensors?  Every tensor parameter must be given
 * (by position or keyword) a tensor of its rank, and no positional tensor
 * may sit where def has an attribute or no parameter at all.  Everything
 * else about the arguments is checked once the def is chosen. */
static bool ranks_match(fe_inst *caller, const fe_expr *call, const fe_def *def)
{
    int npos = 0;
    while (npos < call->nargs && !call->args[npos].name)
        npos++;
    for (int j = def->nparams; j < npos; j++)
        if (arg_tensor(caller, &call->args[j]))
            return false;
    for (int j = 0; j < def->nparams; j++) {
        const fe_param *p = &def->params[j];
        const fe_arg *a = j < npos ? &call->args[j] : NULL;
        for (int i = npos; i < call->nargs && !a; i++)
            if (call->args[i].name && strcmp(call->args[i].name, p->name) == 0)
                a = &call->args[i];
        fe_tensor *t = a ? arg_tensor(caller, a) : NULL;
        if (p->type->kind != FE_T_TENSOR) {
            if (j < npos && t)
                return false;
            continue;
        }
        if (!t || t->ndim != p->type->ndims)
            return false;
    }
    return true;
}

/* The def a call `name(...)` runs: the only def of that name, or the
 * overload whose tensor ranks match the arguments.  NULL after an error (or
 * silently, when an argument failed before). */
static fe_def *resolve_call(fe_ctx *c, fe_inst *caller, const fe_expr *call)
{
    fe_def *only = NULL, *match = NULL;
    int ndefs = 0, nmatch = 0;
    for (int i = 0; i < c->ndefs; i++) {
        fe_def *d = c->defs[i];
        if (strcmp(d->name, call->name) != 0)
            continue;
        only = d;
        ndefs++;
        if (ranks_match(caller, call, d)) {
            match = d;
            nmatch++;
        }
    }
    if (ndefs <= 1)
        return only;   /* one def: bind_args explains any mismatch */
    const char *given = "";
    for (int i = 0; i < call->nargs; i++) {
        const fe_expr *x = call->args[i].value;
        fe_binding *b = x->kind == FE_E_NAME ? fe_env_find(caller->env, x->name) : NULL;
        if (x->kind == FE_E_NAME && !b) {
            fe_error(c, x->span, "unknown name '%s'%s", x->name, fe_suggest(c, caller->env, x->name));
            return NULL;
        }
        if (b && b->v.kind == FE_V_POISON)
            return NULL;
        if (b && b->v.kind == FE_V_TENSOR)
            given = ir_sprintf(c->a, "%s%s%s: %s", given, *given ? ", " : "", x->name, tensor_str(c, b->v.t));
    }
    if (nmatch == 1)
        return match;
    bool shown = nmatch == 0
        ? fe_error(c, call->span, "in call to %s: no definition of %s takes tensors of these ranks (%s)",
                   call->name, call->name, *given ? given : "no tensors")
        : fe_error(c, call->span, "in call to %s: %d definitions of %s take these tensors (%s)",
                   call->name, nmatch, call->name, given);
    for (int i = 0; i < c->ndefs && shown; i++) {
        fe_def *d = c->defs[i];
        if (strcmp(d->name, call->name) == 0 && (nmatch == 0 || ranks_match(caller, call, d)))
            fe_note(c, d->span, "candidate: %s", def_signature(c, d));
    }
    return NULL;
}

/* ---------------------------------------------------------------- compile-time evaluation */

static const char *value_str(fe_ctx *c, fe_value v)
{
    switch (v.kind) {
    case FE_V_INT: return ir_sprintf(c->a, "%lld", (long long)v.i);
    case FE_V_FLOAT: return ir_sprintf(c->a, "%g", v.f);
    case FE_V_TENSOR: return tensor_str(c, v.t);
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

static double as_float(fe_value v) { return v.kind == FE_V_INT ? (double)v.i : v.f; }

static bool truthy(fe_value v) { return v.kind == FE_V_INT ? v.i != 0 : v.f != 0; }

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
        return fe_eval(c, e, x->args[truthy(v[0]) ? 1 : 2].value, out);
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
            double a = as_float(v[0]), b = as_float(v[1]);
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
    double a = as_float(v[0]), b = arity > 1 ? as_float(v[1]) : 0, r;
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
                     x->name, tensor_str(c, b->v.t));
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
            out->i = !truthy(a);
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
        if ((x->op == FE_OP_AND && !truthy(a)) || (x->op == FE_OP_OR && truthy(a))) {
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
        return eval_float_binary(c, x, as_float(a), as_float(b), out);
    }
    case FE_E_COND: {
        fe_value cond;
        if (!fe_eval(c, e, x->c, &cond))
            return false;
        return fe_eval(c, e, truthy(cond) ? x->a : x->b, out);
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
            out->f = as_float(a);
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
static bool eval_int(fe_ctx *c, fe_env *e, const fe_expr *x, const char *what, int64_t *out)
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

static const char *values_of_names(fe_ctx *c, fe_env *e, const fe_expr *x)
{
    const char *names[16];
    int n = 0;
    names_in(x, names, &n, 16);
    const char *s = "";
    for (int i = 0; i < n; i++) {
        fe_binding *b = fe_env_find(e, names[i]);
        if (!b || (b->v.kind != FE_V_INT && b->v.kind != FE_V_FLOAT))
            continue;
        s = ir_sprintf(c->a, "%s%s%s = %s", s, *s ? ", " : "", names[i], value_str(c, b->v));
    }
    return s;
}

/* ---------------------------------------------------------------- references (which temporaries escape) */

static void refs_expr(fe_ctx *c, fe_def *d, const fe_expr *x)
{
    if (!x)
        return;
    if (x->kind == FE_E_NAME || x->kind == FE_E_ACCESS) {
        fe_ref r = {x->name, x->span.off};
        IR_PUSH(c->a, d->refs, d->nrefs, d->caprefs, r);
    }
    refs_expr(c, d, x->a);
    refs_expr(c, d, x->b);
    refs_expr(c, d, x->c);
    refs_expr(c, d, x->dflt);
    for (int i = 0; i < x->nidx; i++)
        refs_expr(c, d, x->idx[i]);
    for (int i = 0; i < x->nargs; i++)
        refs_expr(c, d, x->args[i].value);
}

static void refs_stmts(fe_ctx *c, fe_def *d, fe_stmt **ss, int n)
{
    for (int i = 0; i < n; i++) {
        const fe_stmt *s = ss[i];
        if (s->kind == FE_S_OUTPUT) {
            fe_expr x = {.kind = FE_E_NAME, .name = s->name, .span = s->name_span};
            refs_expr(c, d, &x);
        }
        refs_expr(c, d, s->value);
        refs_expr(c, d, s->lo);
        refs_expr(c, d, s->hi);
        refs_expr(c, d, s->cond);
        refs_stmts(c, d, s->body, s->nbody);
        refs_stmts(c, d, s->orelse, s->norelse);
    }
}

/* The def's references, computed once (the program uses a pseudo-def). */
static void def_refs(fe_ctx *c, fe_def *d)
{
    if (d->refs_done)
        return;
    d->refs_done = true;
    refs_stmts(c, d, d->body, d->nbody);
}

static bool referenced_after(const fe_inst *in, const char *name, int off)
{
    for (int i = 0; i < in->nrefs; i++)
        if (in->refs[i].off >= off && strcmp(in->refs[i].name, name) == 0)
            return true;
    return false;
}

/* Is t needed after offset off: referenced later under its own name or
 * under any other name bound to it (`u = t`)? */
static bool needed_after(const fe_inst *in, const fe_tensor *t, int off)
{
    if (referenced_after(in, t->name, off))
        return true;
    for (int i = 0; i < in->env->n; i++) {
        const fe_binding *b = &in->env->b[i];
        if (b->name && b->v.kind == FE_V_TENSOR && b->v.t == t && referenced_after(in, b->name, off))
            return true;
    }
    return false;
}

/* ---------------------------------------------------------------- layers and graph buffers */

static const char *join_name(fe_ctx *c, const char *prefix, const char *name)
{
    return *prefix ? ir_sprintf(c->a, "%s.%s", prefix, name) : name;
}

/* Claims a layer name; false (after an error naming both places) if it
 * is taken. */
static bool claim_layer(fe_ctx *c, const char *layer, fe_span loc)
{
    fe_span *first = fe_map_get(&c->layers, layer);
    if (first) {
        fe_error(c, loc, "duplicate layer name '%s' (first used at %s)", layer, loc_str(c, *first));
        if (first->file)
            fe_note(c, *first, "layer '%s' was first named here", layer);
        return false;
    }
    fe_span *at = ir_alloc(c->a, sizeof *at);
    *at = loc;
    fe_map_put(c->a, &c->layers, layer, at);
    return true;
}

const char *fe_claim_free_layer(fe_ctx *c, const char *base, fe_span loc)
{
    const char *s = base;
    for (int k = 1; fe_map_get(&c->layers, s); k++)
        s = k == 1 ? ir_sprintf(c->a, "%s.copy", base) : ir_sprintf(c->a, "%s.copy%d", base, k);
    claim_layer(c, s, loc);
    return s;
}

static ir_buffer *find_buffer(fe_ctx *c, const char *name) { return fe_map_get(&c->bufs, name); }

/* Adds b to the graph (its name must be free). */
static void add_buffer(fe_ctx *c, ir_buffer *b)
{
    ir_graph_add_buffer(c->m, b);
    fe_map_put(c->a, &c->bufs, b->name, b);
}

static void rename_buffer(fe_ctx *c, ir_buffer *b, const char *name)
{
    map_del(&c->bufs, b->name);
    b->name = ir_strdup(c->m->arena, name);
    fe_map_put(c->a, &c->bufs, b->name, b);
}

/* A free name for a TEMP graph buffer: base, else base.out, base.out2 ... */
static const char *free_buffer_name(fe_ctx *c, const char *base)
{
    if (!find_buffer(c, base))
        return base;
    const char *s = ir_sprintf(c->a, "%s.out", base);
    for (int k = 2; find_buffer(c, s); k++)
        s = ir_sprintf(c->a, "%s.out%d", base, k);
    return s;
}

/* Makes `name` free for an input or param: a TEMP buffer holding it moves
 * aside (temporaries' names matter to nobody).  False if a buffer whose
 * name matters has it. */
static bool reserve_name(fe_ctx *c, const char *name)
{
    ir_buffer *b = find_buffer(c, name);
    if (!b)
        return true;
    if (b->role != IR_BUF_TEMP)
        return false;
    rename_buffer(c, b, free_buffer_name(c, name));
    return true;
}

static ir_buffer *temp_buffer(fe_ctx *c, const char *base, fe_tensor *t)
{
    ir_buffer *b = ir_buffer_new(c->m, free_buffer_name(c, base), t->dtype, t->ndim, t->shape,
                                 IR_BUF_TEMP);
    add_buffer(c, b);
    return b;
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

static fe_value tensor_value(fe_tensor *t)
{
    fe_value v = {.kind = FE_V_TENSOR, .t = t};
    return v;
}

static fe_value poison(void)
{
    fe_value v = {.kind = FE_V_POISON};
    return v;
}

/* ---------------------------------------------------------------- types and inits */

/* Evaluates a tensor type's dims; false after an error. */
static bool eval_shape(fe_ctx *c, fe_env *e, const fe_type *ty, const char *what,
                       const char *name, int64_t **shape)
{
    if (ty->kind != FE_T_TENSOR) {
        fe_error(c, ty->span, "%s %s must be a tensor (e.g. f32[4, 4]), not %s", what, name,
                 ty->kind == FE_T_INT ? "int" : "float");
        return false;
    }
    *shape = ir_alloc(c->a, sizeof(int64_t) * (size_t)(ty->ndims ? ty->ndims : 1));
    bool ok = true;
    for (int i = 0; i < ty->ndims; i++) {
        fe_value v;
        if (!fe_eval(c, e, ty->dims[i], &v)) {
            ok = false;
            continue;
        }
        if (v.kind != FE_V_INT) {
            fe_error(c, ty->dims[i]->span, "dimension %d of %s %s must be an integer, but '%s' is %s",
                     i, what, name, fe_span_text(c->a, ty->dims[i]->span), fe_float_str(c->a, v.f));
            ok = false;
        } else if (v.i < 1) {
            fe_error(c, ty->dims[i]->span, "dimension %d of %s %s is %lld; every dimension must be >= 1",
                     i, what, name, (long long)v.i);
            ok = false;
        } else {
            (*shape)[i] = v.i;
        }
    }
    if (ok && checked_numel(ty->ndims, *shape) < 0) {
        fe_error(c, ty->span, "%s %s has more than 2^63 elements", what, name);
        ok = false;
    }
    return ok;
}

static bool eval_float(fe_ctx *c, fe_env *e, const fe_expr *x, double *out)
{
    fe_value v;
    if (!fe_eval(c, e, x, &v))
        return false;
    *out = as_float(v);
    return true;
}

/* Sets b's default contents from init, or from `dflt_lo/hi` when none. */
static bool apply_init(fe_ctx *c, fe_env *e, const fe_init *init, ir_buffer *b,
                       double dflt_lo, double dflt_hi)
{
    double lo = dflt_lo, hi = dflt_hi;
    if (init->kind == FE_INIT_UNIFORM) {
        if (!eval_float(c, e, init->lo, &lo) || !eval_float(c, e, init->hi, &hi))
            return false;
        if (lo > hi) {
            fe_error(c, init->span, "uniform(%g, %g): the low bound is above the high bound", lo, hi);
            return false;
        }
    } else if (init->kind == FE_INIT_CONST) {
        if (!eval_float(c, e, init->lo, &lo))
            return false;
        hi = lo;
    }
    if (!isfinite(lo) || !isfinite(hi)) {
        /* default data is lo + (hi - lo) * u: an infinite bound gives NaN */
        fe_error(c, init->span, "the initializer of %s gives %g; default data must be finite", b->name,
                 isfinite(lo) ? hi : lo);
        return false;
    }
    b->has_init = true;
    b->init_lo = lo;
    b->init_hi = hi;
    return true;
}

/* ---------------------------------------------------------------- stages */

static void poison_tensor(fe_env *e, const fe_tensor *t)
{
    for (int i = 0; i < e->n; i++)
        if (e->b[i].v.kind == FE_V_TENSOR && e->b[i].v.t == t)
            e->b[i].v = poison();
}

static void add_sarg(fe_ctx *c, fe_sarg **arr, int *n, int *cap, fe_tensor *t, const char *name)
{
    fe_sarg s = {t, name};
    IR_PUSH(c->a, *arr, *n, *cap, s);
}

static bool has_sarg(const fe_sarg *arr, int n, const fe_tensor *t)
{
    for (int i = 0; i < n; i++)
        if (arr[i].t == t)
            return true;
    return false;
}

static const char *free_func_name(fe_ctx *c, const char *base)
{
    const char *s = base;
    for (int k = 1; fe_map_get(&c->funcs, s); k++)
        s = ir_sprintf(c->a, "%s.%d", base, k);
    return s;
}

/* Is t bound to one of the outputs of in's def? */
static bool def_output_of(fe_inst *in, const fe_tensor *t)
{
    for (int j = 0; in->def && j < in->def->nouts; j++) {
        fe_binding *b = env_find_local(in->env, in->def->outs[j].name);
        if (b && b->v.kind == FE_V_TENSOR && b->v.t == t)
            return true;
    }
    return false;
}

/* Adds t's storage to a stage's parameters, once: a view passes the
 * buffer it reads (named after the tensor it views). */
static void add_param(fe_ctx *c, fe_sarg **arr, int *n, int *cap, fe_tensor *t, const char *name)
{
    fe_tensor *s = fe_storage(t);
    if (!has_sarg(*arr, *n, s))
        add_sarg(c, arr, n, cap, s, t->view ? t->view->src_name : name);
}

void fe_give_buffer(fe_ctx *c, fe_tensor *t, const char *base)
{
    t->buf = temp_buffer(c, base, t);
}

void fe_emit_stage(fe_ctx *c, const fe_stage *st, const char *layer, const char *op,
                   fe_span loc, const fe_sarg *params, int np)
{
    ir_func *f = ir_func_new(c->m, free_func_name(c, layer));
    fe_map_put(c->a, &c->funcs, f->name, f);
    ir_func_set_attr(c->m, f, "layer", layer);
    ir_func_set_attr(c->m, f, "op", op);
    ir_func_set_attr(c->m, f, "loc", loc_str(c, loc));
    fe_lower_stage(c->m, f, st, params, np, op);
    ir_buffer **args = ir_alloc(c->a, sizeof(ir_buffer *) * (size_t)(np ? np : 1));
    for (int i = 0; i < np; i++)
        args[i] = params[i].t->buf;
    ir_graph_add_call(c->m, f, args, np);
}

/* Ends the open stage of `in`: decides which temporaries the rest of the
 * program still needs (they get graph buffers and become outputs of the
 * stage's function), lowers the stage and adds its call to the graph. */
void fe_close_stage(fe_ctx *c, fe_inst *in)
{
    fe_stage *st = in->stage;
    if (!st)
        return;
    in->stage = NULL;

    bool kernel = in->def && !in->def->has_calls;
    fe_tensor *first_out = NULL;
    fe_sarg *outs = NULL;
    int nouts = 0, capouts = 0;
    for (int i = 0; i < st->ndefined; i++) {
        fe_tensor *t = st->defined[i];
        t->stage = NULL;
        if (st->poisoned) {
            poison_tensor(in->env, t);
            t->dead = true;
            continue;
        }
        bool is_out = def_output_of(in, t);
        if (!is_out && !needed_after(in, t, st->end_off)) {
            t->dead = true;
            continue;
        }
        /* the result of a def of one output is named after the layer */
        const char *base = is_out && in->def->nouts == 1 ? in->layer : join_name(c, in->layer, t->name);
        t->buf = temp_buffer(c, base, t);
        if (!first_out)
            first_out = t;
        add_sarg(c, &outs, &nouts, &capouts, t, t->name);
    }
    if (st->poisoned)
        return;
    if (!first_out) {
        diag_warning(c->d, fe_loc(st->loc), "'%s' is computed but never used",
                     st->ndefined ? st->defined[0]->name : "?");
        return;
    }
    const char *layer = kernel ? in->layer : join_name(c, in->layer, first_out->name);
    if (!kernel && !claim_layer(c, layer, st->loc))
        return;

    fe_sarg *params = NULL;
    int np = 0, cap = 0;
    if (kernel) {
        for (int i = 0; i < in->ninputs; i++)
            add_param(c, &params, &np, &cap, in->inputs[i].t, in->inputs[i].name);
        for (int i = 0; i < in->nweights; i++)
            add_param(c, &params, &np, &cap, in->weights[i].t, in->weights[i].name);
    }
    /* Graph values the stage reads: activations first, then weights. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < st->nuses; i++) {
            fe_sarg u = st->uses[i];
            bool w = u.t->buf && u.t->buf->role == IR_BUF_PARAM;
            if (w == (pass == 1))
                add_param(c, &params, &np, &cap, u.t, u.name);
        }
    for (int i = 0; i < nouts; i++)
        add_sarg(c, &params, &np, &cap, outs[i].t, outs[i].name);
    fe_emit_stage(c, st, layer, in->op, kernel ? in->call : st->loc, params, np);
}

/* ---------------------------------------------------------------- layer names */

static bool is_ident_start(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; }
static bool is_ident_char(char ch) { return is_ident_start(ch) || (ch >= '0' && ch <= '9'); }

/* A tiny parser for the `{expr}` of layer-name strings: integers, names,
 * + - * / % and parentheses.  Positions map back into the file so errors
 * point into the string. */
typedef struct interp_parser {
    fe_ctx *c;
    fe_span base;          /* the string token */
    const char *s;         /* its source text */
    int pos, end;          /* in s */
    bool bad;
} interp_parser;

static fe_span ip_span(interp_parser *p, int from, int to)
{
    fe_span sp = p->base;
    sp.col = p->base.col + from;
    sp.off = p->base.off + from;
    sp.end = p->base.off + to;
    return sp;
}

static void ip_skip(interp_parser *p)
{
    while (p->pos < p->end && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'))
        p->pos++;
}

static fe_expr *ip_expr(interp_parser *p);

static fe_expr *ip_primary(interp_parser *p)
{
    ip_skip(p);
    int start = p->pos;
    if (p->pos >= p->end) {
        p->bad = true;
        return NULL;
    }
    char ch = p->s[p->pos];
    if (ch == '(') {
        p->pos++;
        fe_expr *x = ip_expr(p);
        ip_skip(p);
        if (p->pos >= p->end || p->s[p->pos] != ')') {
            p->bad = true;
            return NULL;
        }
        p->pos++;
        return x;
    }
    if (ch == '-') {
        p->pos++;
        fe_expr *a = ip_primary(p);
        if (!a)
            return NULL;
        fe_expr *x = fe_expr_new(p->c->a, FE_E_UNARY, ip_span(p, start, p->pos));
        x->op = FE_OP_NEG;
        x->a = a;
        return x;
    }
    if (ch >= '0' && ch <= '9') {
        int64_t v = 0;
        while (p->pos < p->end && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, p->s[p->pos] - '0', &v)) {
                p->bad = true;
                return NULL;
            }
            p->pos++;
        }
        fe_expr *x = fe_expr_new(p->c->a, FE_E_INT, ip_span(p, start, p->pos));
        x->ival = v;
        return x;
    }
    if (is_ident_start(ch)) {
        while (p->pos < p->end && is_ident_char(p->s[p->pos]))
            p->pos++;
        fe_expr *x = fe_expr_new(p->c->a, FE_E_NAME, ip_span(p, start, p->pos));
        x->name = ir_strndup(p->c->a, p->s + start, (size_t)(p->pos - start));
        return x;
    }
    p->bad = true;
    return NULL;
}

static fe_expr *ip_binary(interp_parser *p, int level)
{
    fe_expr *a = level == 0 ? ip_binary(p, 1) : ip_primary(p);
    while (a) {
        ip_skip(p);
        if (p->pos >= p->end)
            break;
        char ch = p->s[p->pos];
        fe_op op;
        if (level == 0 && (ch == '+' || ch == '-'))
            op = ch == '+' ? FE_OP_ADD : FE_OP_SUB;
        else if (level == 1 && (ch == '*' || ch == '/' || ch == '%'))
            op = ch == '*' ? FE_OP_MUL : ch == '/' ? FE_OP_DIV : FE_OP_MOD;
        else
            break;
        int oppos = p->pos++;
        fe_expr *b = level == 0 ? ip_binary(p, 1) : ip_primary(p);
        if (!b)
            return NULL;
        fe_expr *x = fe_expr_new(p->c->a, FE_E_BINARY, fe_span_join(a->span, b->span));
        x->op = op;
        x->a = a;
        x->b = b;
        x->opspan = ip_span(p, oppos, oppos + 1);
        a = x;
    }
    return a;
}

static fe_expr *ip_expr(interp_parser *p) { return ip_binary(p, 0); }

/* Expands "{expr}" in a string: an `as` layer name (layer set: the values
 * must be integers) or an assert's message.  NULL after an error. */
static const char *expand_string(fe_ctx *c, fe_env *e, const char *decoded, fe_span sp, bool layer)
{
    const char *what = layer ? "layer name" : "assert message";
    if (!strchr(decoded, '{') && !strchr(decoded, '}') && !strchr(decoded, '\\'))
        return decoded;
    /* Work on the token's source text so positions are exact. */
    const char *s = sp.file->text + sp.off;
    int n = sp.end - sp.off;
    char *out = ir_alloc(c->a, 1);
    size_t len = 0;
    for (int i = 1; i < n - 1; i++) {
        char piece[32];
        const char *add = piece;
        piece[0] = s[i];
        piece[1] = 0;
        if (s[i] == '\\' && i + 1 < n - 1) {
            char esc = s[++i];
            piece[0] = esc == 'n' ? '\n' : esc == 't' ? '\t' : esc;
        } else if (s[i] == '{') {
            int close = i + 1;
            while (close < n - 1 && s[close] != '}')
                close++;
            interp_parser p = {c, sp, s, i + 1, close, false};
            if (close >= n - 1) {
                fe_error(c, ip_span(&p, i, i + 1), "unterminated '{' in %s", what);
                return NULL;
            }
            fe_expr *x = ip_expr(&p);
            ip_skip(&p);
            if (!x || p.bad || p.pos != close) {
                fe_error(c, ip_span(&p, i + 1, close),
                         "cannot read '%.*s' in %s: expected an integer expression of names, numbers, + - * / %% and ()",
                         close - i - 1, s + i + 1, what);
                return NULL;
            }
            fe_value v;
            if (!fe_eval(c, e, x, &v))
                return NULL;
            if (v.kind != FE_V_INT && layer) {
                fe_error(c, x->span, "'%.*s' in a layer name must be an integer, but it is %s",
                         close - i - 1, s + i + 1, fe_float_str(c->a, v.f));
                return NULL;
            }
            if (v.kind == FE_V_INT)
                snprintf(piece, sizeof piece, "%lld", (long long)v.i);
            else
                snprintf(piece, sizeof piece, "%g", v.f);
            i = close;
        } else if (s[i] == '}') {
            interp_parser p = {c, sp, s, i, i, false};
            fe_error(c, ip_span(&p, i, i + 1), "unmatched '}' in %s (write \\} for a brace)", what);
            return NULL;
        }
        size_t k = strlen(add);
        char *grown = ir_alloc(c->a, len + k + 1);
        memcpy(grown, out, len);
        memcpy(grown + len, add, k + 1);
        out = grown;
        len += k;
    }
    return out;
}

static bool valid_layer_name(fe_ctx *c, const char *name, fe_span sp)
{
    size_t n = strlen(name);
    bool ok = n > 0 && name[0] != '.' && name[n - 1] != '.' && !strstr(name, "..");
    for (size_t i = 0; ok && i < n; i++)
        if ((unsigned char)name[i] <= ' ' || name[i] == '"' || name[i] == '\\')
            ok = false;
    if (!ok)
        fe_error(c, sp, "invalid layer name \"%s\": use non-empty parts separated by '.', without spaces or quotes",
                 name);
    return ok;
}

/* ---------------------------------------------------------------- statements */

static void elab_stmts(fe_ctx *c, fe_inst *in, fe_stmt **ss, int n, bool top);
static void instantiate(fe_ctx *c, fe_inst *caller, const fe_stmt *s, fe_def *def,
                        const char *layer, fe_value *results);

/* Is s a number spelled as in the language, with an optional sign:
 * digits (an integer), or digits.digits and/or an exponent (a float)? */
static bool number_spelling(const char *s, bool *is_float)
{
    s += *s == '-';
    size_t n = strspn(s, "0123456789");
    if (!n)
        return false;
    s += n;
    *is_float = *s == '.' || *s == 'e' || *s == 'E';
    if (*s == '.') {
        if (!(n = strspn(++s, "0123456789")))
            return false;
        s += n;
    }
    if (*s == 'e' || *s == 'E') {
        s += 1 + (s[1] == '+' || s[1] == '-');
        if (!(n = strspn(s, "0123456789")))
            return false;
        s += n;
    }
    return !*s;
}

/* The value of -D NAME=VALUE as a number, spelled as in a `let`: 1000 is
 * an integer, 1e3 and 1000.0 are floats. */
static bool define_value(fe_ctx *c, const fe_define *df, fe_value *v)
{
    char *end;
    bool is_float = false;
    bool spelled = number_spelling(df->value, &is_float);
    errno = 0;
    long long i = strtoll(df->value, &end, 10);
    if (spelled && !is_float && errno == 0) {
        v->kind = FE_V_INT;
        v->i = i;
        return true;
    }
    errno = 0;
    double f = strtod(df->value, &end);
    if (spelled && is_float && errno == 0) {
        v->kind = FE_V_FLOAT;
        v->f = f;
        return true;
    }
    if (spelled)
        diag_error(c->d, diag_noloc(), "-D %s=%s: %s", df->name, df->value,
                   is_float ? "the floating-point value is out of range" : "the integer does not fit in 64 bits");
    else
        diag_error(c->d, diag_noloc(), "-D %s=%s: the value is not a number (write an integer such as 64, or a float such as 0.5 or 1e-5)",
                   df->name, df->value);
    c->errors++;
    return false;
}

/* `let NAME = expr`: global (at the top level of a file) binds NAME in that
 * file's scope, where -D may override it; otherwise a local value of `in`. */
static void elab_let(fe_ctx *c, fe_inst *in, const fe_stmt *s, bool global)
{
    fe_env *e = global ? s->span.file->scope : in->env;
    fe_binding *old = env_find_local(e, s->name);
    if (old && (global || old->kind == FE_B_LET || old->kind == FE_B_LOOP || old->kind == FE_B_SIZE ||
                old->kind == FE_B_ATTR)) {
        if (old->kind == FE_B_LET && !global) {
            /* a local let may be updated (e.g. inside a loop) */
        } else {
            fe_error(c, s->name_span, "'%s' is already defined as %s (at %s)", s->name,
                     fe_bkind_name(old->kind), loc_str(c, old->loc));
            return;
        }
    }
    fe_value v;
    bool ok = false;
    if (global && c->o)
        for (int i = 0; i < c->o->ndefines; i++)
            if (strcmp(c->o->defines[i].name, s->name) == 0) {
                c->define_used[i] = true;
                ok = define_value(c, &c->o->defines[i], &v);
                if (!ok)
                    v = poison();
                fe_env_bind(c, e, s->name, FE_B_LET, v, s->name_span);
                return;
            }
    ok = fe_eval(c, e, s->value, &v);
    fe_env_bind(c, e, s->name, FE_B_LET, ok ? v : poison(), s->name_span);
}

static bool same_place(fe_span a, fe_span b) { return a.file == b.file && a.off == b.off; }

/* Does f have a top-level `let name` (which hides imported lets of that
 * name in all of f)? */
static bool defines_let(const fe_file *f, const char *name)
{
    for (int i = 0; i < f->nstmts; i++)
        if (f->stmts[i]->kind == FE_S_LET && strcmp(f->stmts[i]->name, name) == 0)
            return true;
    return false;
}

static bool elab_assert(fe_ctx *c, fe_env *e, const fe_stmt *s, const char *def);

/* `import "f"` in the file whose scope is `into`: runs f's top-level lets
 * (once, however often f is imported), then makes the lets f sees visible
 * in `into`, except those `into`'s file defines itself.  Two different
 * imported lets of one name are an error at the import of the second. */
static void run_import(fe_ctx *c, fe_inst *in, fe_env *into, const fe_stmt *imp)
{
    fe_file *f = imp->imported;
    if (!f->lets_done) {
        f->lets_done = true;
        for (int i = 0; i < f->nstmts; i++) {
            fe_stmt *s = f->stmts[i];
            switch (s->kind) {
            case FE_S_DEF:
                break;
            case FE_S_LET:
                elab_let(c, in, s, true);
                break;
            case FE_S_IMPORT:
                if (s->imported)
                    run_import(c, in, f->scope, s);
                break;
            case FE_S_ASSERT:
                elab_assert(c, f->scope, s, NULL);
                break;
            case FE_S_SCHEDULE:
                break;   /* collect_schedules */
            default:
                fe_error(c, s->span, "only def, let, import, assert and schedule may appear at the top level of an imported file");
                break;
            }
        }
    }
    for (int i = 0; i < f->scope->n; i++) {
        const fe_binding *b = &f->scope->b[i];
        if (defines_let(into->file, b->name))
            continue;
        fe_binding *old = env_find_local(into, b->name);
        if (!old) {
            fe_binding copy = *b;
            IR_PUSH(c->a, into->b, into->n, into->cap, copy);
        } else if (!same_place(old->loc, b->loc)) {
            fe_error(c, imp->name_span,
                     "import \"%s\" brings in the let '%s' (at %s), but %s already imports the let '%s' (at %s); rename one, or define '%s' in %s, which hides both",
                     imp->name, b->name, loc_str(c, b->loc), into->file->name, b->name, loc_str(c, old->loc),
                     b->name, into->file->name);
        }
    }
}

/* `assert cond, "message"` in scope e (inside def, if not NULL): true if
 * cond holds; false after an error naming the def, the message, the
 * condition and the values of its names (or silently, when cond uses a
 * value that failed before). */
static bool elab_assert(fe_ctx *c, fe_env *e, const fe_stmt *s, const char *def)
{
    fe_value v;
    if (!fe_eval(c, e, s->cond, &v))
        return false;
    if (truthy(v))
        return true;
    const char *head = def ? ir_sprintf(c->a, "assertion failed in %s", def) : "assertion failed";
    const char *cond = fe_span_text(c->a, s->cond->span);
    const char *with = values_of_names(c, e, s->cond);
    if (*with)
        with = ir_sprintf(c->a, " with %s", with);
    if (!s->as) {
        fe_error(c, s->span, "%s: %s%s", head, cond, with);
        return false;
    }
    const char *msg = expand_string(c, e, s->as, s->as_span, false);
    if (msg)
        fe_error(c, s->span, "%s: %s (%s%s)", head, msg, cond, with);
    return false;
}

static void elab_input(fe_ctx *c, fe_inst *in, const fe_stmt *s)
{
    if (in->def) {
        fe_error(c, s->span, "input is only allowed at the top level of the program (a def's inputs are its parameters)");
        return;
    }
    if (fe_env_find(in->env, s->name)) {
        fe_binding *old = fe_env_find(in->env, s->name);
        fe_error(c, s->name_span, "'%s' is already defined as %s (at %s)", s->name,
                 fe_bkind_name(old->kind), loc_str(c, old->loc));
        return;
    }
    int64_t *shape;
    if (!eval_shape(c, in->env, s->type, "input", s->name, &shape)) {
        fe_env_bind(c, in->env, s->name, FE_B_INPUT, poison(), s->name_span);
        return;
    }
    if (!reserve_name(c, s->name)) {
        fe_error(c, s->name_span, "input name '%s' is already used by another buffer", s->name);
        return;
    }
    fe_tensor *t = fe_new_tensor(c, s->name, s->type->dtype, s->type->ndims, shape, s->name_span);
    t->buf = ir_buffer_new(c->m, s->name, t->dtype, t->ndim, t->shape, IR_BUF_INPUT);
    add_buffer(c, t->buf);
    if (!apply_init(c, in->env, &s->init, t->buf, -1, 1)) {
        fe_env_bind(c, in->env, s->name, FE_B_INPUT, poison(), s->name_span);
        return;
    }
    fe_env_bind(c, in->env, s->name, FE_B_INPUT, tensor_value(t), s->name_span);
}

static void elab_param(fe_ctx *c, fe_inst *in, const fe_stmt *s)
{
    const char *what = s->state ? "state" : "param";
    if (!in->def) {
        fe_error(c, s->span, "%s is only allowed inside a def (use input for the program's data)", what);
        return;
    }
    fe_binding *old = fe_env_find(in->env, s->name);
    if (old) {
        fe_error(c, s->name_span, "'%s' is already defined as %s (at %s)", s->name,
                 fe_bkind_name(old->kind), loc_str(c, old->loc));
        return;
    }
    int64_t *shape;
    if (!eval_shape(c, in->env, s->type, what, s->name, &shape)) {
        fe_env_bind(c, in->env, s->name, FE_B_PARAM, poison(), s->name_span);
        return;
    }
    const char *full = join_name(c, in->layer, s->name);
    if (!reserve_name(c, full)) {
        fe_error(c, s->name_span, "%s name '%s' is already used by another buffer", what, full);
        fe_env_bind(c, in->env, s->name, FE_B_PARAM, poison(), s->name_span);
        return;
    }
    fe_tensor *t = fe_new_tensor(c, s->name, s->type->dtype, s->type->ndims, shape, s->name_span);
    t->buf = ir_buffer_new(c->m, full, t->dtype, t->ndim, t->shape, IR_BUF_PARAM);
    t->buf->state = s->state;
    add_buffer(c, t->buf);
    /* Default: uniform(-b, b), b = 1/sqrt(fan_in), fan_in = numel/shape[0]
     * for rank >= 2 (PyTorch's rule for linear and conv weights), else 1. */
    double b = 1;
    if (t->ndim >= 2)
        b = 1 / sqrt((double)(checked_numel(t->ndim, t->shape) / t->shape[0]));
    if (!apply_init(c, in->env, &s->init, t->buf, -b, b)) {
        fe_env_bind(c, in->env, s->name, FE_B_PARAM, poison(), s->name_span);
        return;
    }
    add_sarg(c, &in->weights, &in->nweights, &in->capweights, t, s->name);
    fe_env_bind(c, in->env, s->name, FE_B_PARAM, tensor_value(t), s->name_span);
}

static void elab_output(fe_ctx *c, fe_inst *in, const fe_stmt *s)
{
    if (in->def) {
        fe_error(c, s->span, "output is only allowed at the top level of the program (a def's result is its '-> %s')",
                 in->def->outs[0].name);
        return;
    }
    fe_close_stage(c, in);
    fe_binding *b = fe_env_find(in->env, s->name);
    if (!b) {
        fe_error(c, s->name_span, "unknown name '%s'%s", s->name, fe_suggest(c, in->env, s->name));
        return;
    }
    if (b->v.kind == FE_V_POISON)
        return;
    if (b->v.kind != FE_V_TENSOR) {
        fe_error(c, s->name_span, "'%s' is %s, not a tensor; only tensors can be outputs", s->name,
                 fe_bkind_name(b->kind));
        return;
    }
    fe_tensor *t = b->v.t;
    if (t->view) {
        /* an output has storage of its own: a view is copied into it */
        t = fe_materialize(c, t, s->name, t->view->op, s->name_span);
        if (!t)
            return;
        b->v.t = t;
    }
    ir_buffer *buf = t->buf;
    if (!buf) {
        diag_internal(c->d, "frontend", "output '%s' has no graph buffer", s->name);
        c->errors++;
        return;
    }
    if (buf->role == IR_BUF_INPUT || buf->role == IR_BUF_PARAM) {
        fe_error(c, s->name_span, "'%s' is a program %s; an output must be computed by the program",
                 s->name, buf->role == IR_BUF_INPUT ? "input" : "param");
        return;
    }
    if (buf->role == IR_BUF_OUTPUT) {
        fe_error(c, s->name_span, "'%s' is already an output (as '%s')", s->name, buf->name);
        return;
    }
    /* The output is named by the program: `as "name"`, else the variable
     * (else, when an input or param has that name, `<name>.out`). */
    const char *name = s->name;
    if (s->as) {
        name = expand_string(c, in->env, s->as, s->as_span, true);
        if (!name || !valid_layer_name(c, name, s->as_span))
            return;
    }
    ir_buffer *other = find_buffer(c, name);
    if (!s->as && other && other != buf && other->role != IR_BUF_TEMP) {
        name = ir_sprintf(c->a, "%s.out", name);
        ir_buffer *taken = find_buffer(c, name);
        if (taken && taken != buf && taken->role != IR_BUF_TEMP) {
            fe_error(c, s->name_span, "output %s would be named '%s' (the %s %s has the name %s), but the %s %s already has that name; name the output with `output %s as \"...\"`",
                     s->name, name, ir_buf_role_name(other->role), other->name, other->name,
                     ir_buf_role_name(taken->role), taken->name, s->name);
            return;
        }
        other = taken;
    }
    if (other && other != buf && other->role != IR_BUF_TEMP) {
        fe_error(c, s->as_span, "output name '%s' is already used by the %s %s", name,
                 ir_buf_role_name(other->role), other->name);
        return;
    }
    /* a temporary's name matters to nobody: it moves aside */
    if (other && other != buf)
        rename_buffer(c, other, free_buffer_name(c, name));
    if (other != buf)
        rename_buffer(c, buf, name);
    buf->role = IR_BUF_OUTPUT;
}

/* "v, i": the names of def's outputs. */
static const char *output_names(fe_ctx *c, const fe_def *def)
{
    const char *s = def->outs[0].name;
    for (int j = 1; j < def->nouts; j++)
        s = ir_sprintf(c->a, "%s, %s", s, def->outs[j].name);
    return s;
}

/* Can `name` in `in` be (re)bound by an assignment? */
static bool check_rebind(fe_ctx *c, fe_inst *in, const fe_stmt *s)
{
    fe_binding *b = fe_env_find(in->env, s->name);
    if (!b)
        return true;
    bool global = !env_find_local(in->env, s->name);
    if (b->kind == FE_B_ATTR || b->kind == FE_B_SIZE || b->kind == FE_B_LOOP ||
        (b->kind == FE_B_LET && global)) {
        fe_error(c, s->name_span, "cannot assign to '%s': it is %s (at %s)", s->name,
                 fe_bkind_name(b->kind), loc_str(c, b->loc));
        return false;
    }
    return true;
}

static void elab_assign(fe_ctx *c, fe_inst *in, const fe_stmt *s)
{
    const fe_expr *x = s->value;
    if (x->kind == FE_E_CALL && fe_is_view_op(x->name)) {
        /* `as` names the copy, when the layout allows no view */
        if (s->names) {
            fe_error(c, s->name_spans[1], "%s has one result, but %d names are given", x->name, s->nnames);
            return;
        }
        const char *local = s->as ? expand_string(c, in->env, s->as, s->as_span, true) : s->name;
        fe_value v = poison();
        if (local && (!s->as || valid_layer_name(c, local, s->as_span)))
            v = fe_view_call(c, in, s, join_name(c, in->layer, local));
        if (check_rebind(c, in, s))
            fe_env_bind(c, in->env, s->name, FE_B_VALUE, v, s->name_span);
        return;
    }
    if (x->kind == FE_E_CALL) {
        int arity;
        fe_def *def = resolve_call(c, in, x);
        if (!def && find_def(c, x->name)) {
            if (check_rebind(c, in, s))
                fe_env_bind(c, in->env, s->name, FE_B_VALUE, poison(), s->name_span);
            return;
        }
        if (!def) {
            if (fe_math_fn(x->name, &arity) || strcmp(x->name, "select") == 0)
                fe_error(c, x->span, "'%s' is an elementwise function: use it inside an index statement, e.g. y[i] = %s(x[i])",
                         x->name, x->name);
            else
                fe_error(c, x->span, "unknown function '%s'%s", x->name, suggest_def(c, x->name));
            if (check_rebind(c, in, s))
                fe_env_bind(c, in->env, s->name, FE_B_VALUE, poison(), s->name_span);
            return;
        }
        fe_close_stage(c, in);
        int nnames = s->names ? s->nnames : 1;
        fe_value *vs = ir_alloc(c->a, sizeof(fe_value) * (size_t)(nnames > def->nouts ? nnames : def->nouts));
        for (int j = 0; j < nnames; j++)
            vs[j] = poison();
        if (nnames != def->nouts) {
            fe_error(c, s->name_span, "in call to %s: %s has %d output%s (%s) but %d name%s given",
                     def->name, def->name, def->nouts, def->nouts == 1 ? "" : "s", output_names(c, def),
                     nnames, nnames == 1 ? " is" : "s are");
        } else {
            /* the layer is named by `as`, else by the first name */
            const char *local = s->as ? expand_string(c, in->env, s->as, s->as_span, true) : s->name;
            if (local && (!s->as || valid_layer_name(c, local, s->as_span)))
                instantiate(c, in, s, def, join_name(c, in->layer, local), vs);
        }
        for (int j = 0; j < nnames; j++) {
            fe_stmt one = *s;
            if (s->names) {
                one.name = s->names[j];
                one.name_span = s->name_spans[j];
            }
            if (check_rebind(c, in, &one))
                fe_env_bind(c, in->env, one.name, FE_B_VALUE, vs[j], one.name_span);
        }
        return;
    }
    if (s->names) {
        fe_error(c, s->name_spans[1], "several names take the outputs of a call, but this statement calls nothing");
        return;
    }
    if (s->as) {
        fe_error(c, s->as_span, "'as' names the layer of a call, but this statement calls nothing");
        return;
    }
    if (!check_rebind(c, in, s))
        return;
    if (x->kind == FE_E_NAME) {
        fe_binding *b = fe_env_find(in->env, x->name);
        if (b && (b->v.kind == FE_V_TENSOR || b->v.kind == FE_V_POISON)) {
            fe_value v = b->v;
            fe_bkind k = v.kind == FE_V_TENSOR && v.t->stage ? FE_B_LOCAL : FE_B_VALUE;
            fe_env_bind(c, in->env, s->name, k, v, s->name_span);
            return;
        }
    }
    fe_value v;
    if (!fe_eval(c, in->env, x, &v))
        v = poison();
    fe_env_bind(c, in->env, s->name, FE_B_LET, v, s->name_span);
}

/* The most iterations all compile-time loops of a program may run, and the
 * most calls of defs it may make (each makes a layer; the zoo's largest
 * makes a few hundred). */
#define FE_MAX_LOOP_ITERATIONS 1000000
#define FE_MAX_CALLS 10000

static void elab_for(fe_ctx *c, fe_inst *in, const fe_stmt *s)
{
    int64_t lo, hi;
    bool ok_lo = eval_int(c, in->env, s->lo, "a loop bound", &lo);
    bool ok_hi = eval_int(c, in->env, s->hi, "a loop bound", &hi);
    if (!ok_lo || !ok_hi)
        return;
    fe_binding *old = fe_env_find(in->env, s->name);
    if (old) {
        fe_error(c, s->name_span, "loop variable '%s' is already defined as %s (at %s)", s->name,
                 fe_bkind_name(old->kind), loc_str(c, old->loc));
        return;
    }
    if (hi > lo && (hi - lo > 100000 || hi - lo < 0)) {
        fe_error(c, s->span, "loop over %lld..%lld has too many iterations (at most 100000)",
                 (long long)lo, (long long)hi);
        return;
    }
    for (int64_t k = lo; k < hi; k++) {
        /* Nested loops multiply: bound them together, or 1e5 x 1e5 hangs. */
        if (++c->loop_iterations > FE_MAX_LOOP_ITERATIONS) {
            fe_error(c, s->span, "compile-time loops run more than %d iterations in all; "
                     "this one is at %s = %lld", FE_MAX_LOOP_ITERATIONS, s->name, (long long)k);
            break;
        }
        fe_value v = {.kind = FE_V_INT, .i = k};
        fe_env_bind(c, in->env, s->name, FE_B_LOOP, v, s->name_span);
        int errors = c->errors;
        elab_stmts(c, in, s->body, s->nbody, false);
        if (c->errors > errors)
            break;   /* the same mistake in every iteration */
    }
    fe_binding *b = env_find_local(in->env, s->name);
    if (b && b->kind == FE_B_LOOP)
        b->name = NULL;
}

static void elab_stmt(fe_ctx *c, fe_inst *in, fe_stmt *s, bool top)
{
    switch (s->kind) {
    case FE_S_IMPORT:
        if (!top)
            fe_error(c, s->span, "import is only allowed at the top level of a file");
        else if (s->imported)
            run_import(c, in, s->span.file->scope, s);
        break;
    case FE_S_ASSERT:
        if (!elab_assert(c, in->env, s, in->def ? in->op : NULL))
            in->stopped = true;
        break;
    case FE_S_LET:
        elab_let(c, in, s, top && !in->def);
        break;
    case FE_S_DEF:
        if (!top || in->def)
            fe_error(c, s->def->span.file ? s->def->span : s->span,
                     "def is only allowed at the top level of a file");
        break;
    case FE_S_INPUT:
        elab_input(c, in, s);
        break;
    case FE_S_OUTPUT:
        elab_output(c, in, s);
        break;
    case FE_S_PARAM:
        elab_param(c, in, s);
        break;
    case FE_S_INDEX:
        fe_index_stmt(c, in, s);
        break;
    case FE_S_ASSIGN:
        elab_assign(c, in, s);
        break;
    case FE_S_FOR:
        elab_for(c, in, s);
        break;
    case FE_S_SCHEDULE:
        break;   /* collect_schedules and apply_schedules */
    case FE_S_IF: {
        fe_value v;
        if (!fe_eval(c, in->env, s->cond, &v))
            break;
        if (truthy(v))
            elab_stmts(c, in, s->body, s->nbody, false);
        else
            elab_stmts(c, in, s->orelse, s->norelse, false);
        break;
    }
    }
}

static void elab_stmts(fe_ctx *c, fe_inst *in, fe_stmt **ss, int n, bool top)
{
    for (int i = 0; i < n && !in->stopped; i++)
        elab_stmt(c, in, ss[i], top);
}

/* ---------------------------------------------------------------- calls */

static const char *param_list(fe_ctx *c, const fe_def *def)
{
    const char *s = "";
    for (int i = 0; i < def->nparams; i++)
        s = ir_sprintf(c->a, "%s%s%s", s, i ? ", " : "", def->params[i].name);
    return s;
}

/* Binds one tensor argument: dtype, rank, then each dimension (a fresh
 * size name binds; a bound one or an expression must match). */
static bool bind_tensor(fe_ctx *c, fe_inst *caller, fe_inst *callee, const fe_param *p,
                        fe_tensor *t, fe_span at)
{
    fe_env *ce = callee->env;
    const fe_def *def = callee->def;
    const fe_type *ty = p->type;
    const char *decl = fe_span_text(c->a, ty->span);
    if (t->dtype != ty->dtype) {
        fe_error(c, at, "in call to %s: argument %s is %s but the parameter is declared %s",
                 def->name, p->name, tensor_str(c, t), decl);
        return false;
    }
    if (t->ndim != ty->ndims) {
        fe_error(c, at, "in call to %s: argument %s has rank %d (%s) but the parameter is declared %s (rank %d)",
                 def->name, p->name, t->ndim, tensor_str(c, t), decl, ty->ndims);
        return false;
    }
    const char *origin = ir_sprintf(c->a, "%s: %s", p->name, tensor_str(c, t));
    for (int i = 0; i < ty->ndims; i++) {
        const fe_expr *dim = ty->dims[i];
        if (dim->kind != FE_E_NAME)
            continue;
        /* A bare name is the def's own size variable, even where a global
           let has the same name. */
        fe_binding *b = env_find_local(ce, dim->name);
        if (!b) {
            fe_value v = {.kind = FE_V_INT, .i = t->shape[i]};
            fe_binding *nb = fe_env_bind(c, ce, dim->name, FE_B_SIZE, v, dim->span);
            nb->origin = origin;
        } else if (b->kind == FE_B_SIZE && b->v.i != t->shape[i]) {
            fe_error(c, at, "in call to %s: size %s is %lld from %s but %lld from %s",
                     def->name, dim->name, (long long)b->v.i, b->origin, (long long)t->shape[i], origin);
            return false;
        }
    }
    /* Expressions, and names bound before (lets, attributes), must match. */
    int64_t *want = ir_alloc(c->a, sizeof(int64_t) * (size_t)(ty->ndims ? ty->ndims : 1));
    bool same = true;
    for (int i = 0; i < ty->ndims; i++) {
        fe_value v;
        c->inst = callee;
        bool ok = fe_eval(c, ce, ty->dims[i], &v);
        if (ok && v.kind != FE_V_INT) {
            fe_error(c, ty->dims[i]->span, "dimension %d of %s must be an integer, but '%s' is %s", i,
                     p->name, fe_span_text(c->a, ty->dims[i]->span), fe_float_str(c->a, v.f));
            ok = false;
        }
        c->inst = caller;
        if (!ok)
            return false;
        want[i] = v.i;
        same = same && v.i == t->shape[i];
    }
    if (!same) {
        fe_error(c, at, "in call to %s: argument %s is %s but the parameter is declared %s = %s",
                 def->name, p->name, tensor_str(c, t), decl,
                 fe_shape_str(c->a, ty->dtype, ty->ndims, want));
        return false;
    }
    return true;
}

/* Binds a call's arguments in the callee's scope ce; false after errors. */
static bool bind_args(fe_ctx *c, fe_inst *caller, const fe_expr *call, fe_def *def, fe_inst *callee)
{
    fe_env *ce = callee->env;
    const fe_arg **given = ir_alloc(c->a, sizeof(fe_arg *) * (size_t)(def->nparams + 1));
    int npos = 0;
    bool ok = true, kw = false;
    for (int i = 0; i < call->nargs; i++) {
        const fe_arg *a = &call->args[i];
        if (a->name) {
            kw = true;
            int k = -1;
            for (int j = 0; j < def->nparams; j++)
                if (strcmp(def->params[j].name, a->name) == 0)
                    k = j;
            if (k < 0) {
                const char **names = ir_alloc(c->a, sizeof(char *) * (size_t)(def->nparams + 1));
                for (int j = 0; j < def->nparams; j++)
                    names[j] = def->params[j].name;
                const char *near = diag_closest(a->name, names, def->nparams);
                if (near)
                    fe_error(c, a->span, "in call to %s: %s has no parameter '%s' (did you mean '%s'?)",
                             def->name, def->name, a->name, near);
                else
                    fe_error(c, a->span, "in call to %s: %s has no parameter '%s' (its parameters: %s)",
                             def->name, def->name, a->name, param_list(c, def));
                ok = false;
            } else if (given[k]) {
                fe_error(c, a->span, "in call to %s: argument '%s' is given twice", def->name, a->name);
                ok = false;
            } else {
                given[k] = a;
            }
        } else if (kw) {
            fe_error(c, a->span, "in call to %s: positional argument after keyword arguments", def->name);
            ok = false;
        } else if (npos >= def->nparams) {
            fe_error(c, a->span, "in call to %s: too many arguments (%d given, %s takes %d: %s)",
                     def->name, call->nargs, def->name, def->nparams, param_list(c, def));
            return false;
        } else {
            given[npos++] = a;
        }
    }
    if (!ok)
        return false;
    /* Attributes first: tensor types may use them. */
    for (int i = 0; i < def->nparams; i++) {
        const fe_param *p = &def->params[i];
        if (p->type->kind == FE_T_TENSOR)
            continue;
        fe_value v;
        if (given[i]) {
            if (!fe_eval(c, caller->env, given[i]->value, &v)) {
                ok = false;
                continue;
            }
        } else if (p->dflt) {
            c->inst = callee;
            bool dok = fe_eval(c, ce, p->dflt, &v);
            c->inst = caller;
            if (!dok) {
                ok = false;
                continue;
            }
        } else {
            fe_error(c, call->span, "in call to %s: missing argument '%s' (%s)", def->name, p->name,
                     p->type->kind == FE_T_INT ? "int" : "float");
            ok = false;
            continue;
        }
        if (p->type->kind == FE_T_INT && v.kind != FE_V_INT) {
            fe_error(c, given[i] ? given[i]->span : p->dflt->span,
                     "in call to %s: attribute %s is an int, but %g was given", def->name, p->name, v.f);
            ok = false;
            continue;
        }
        if (p->type->kind == FE_T_FLOAT && v.kind == FE_V_INT) {
            v.kind = FE_V_FLOAT;
            v.f = (double)v.i;
        }
        fe_env_bind(c, ce, p->name, FE_B_ATTR, v, p->span);
    }
    for (int i = 0; i < def->nparams; i++) {
        const fe_param *p = &def->params[i];
        if (p->type->kind != FE_T_TENSOR)
            continue;
        if (!given[i]) {
            fe_error(c, call->span, "in call to %s: missing argument '%s' (%s)", def->name, p->name,
                     fe_span_text(c->a, p->type->span));
            ok = false;
            continue;
        }
        const fe_expr *x = given[i]->value;
        fe_binding *b = x->kind == FE_E_NAME ? fe_env_find(caller->env, x->name) : NULL;
        if (x->kind != FE_E_NAME) {
            fe_error(c, x->span, "in call to %s: argument %s must name a tensor (calls cannot be nested: bind the value first)",
                     def->name, p->name);
            ok = false;
            continue;
        }
        if (!b) {
            fe_error(c, x->span, "unknown name '%s'%s", x->name, fe_suggest(c, caller->env, x->name));
            ok = false;
            continue;
        }
        if (b->v.kind == FE_V_POISON) {
            ok = false;
            continue;
        }
        if (b->v.kind != FE_V_TENSOR) {
            fe_error(c, x->span, "in call to %s: argument %s must be a tensor %s, but '%s' is %s (%s)",
                     def->name, p->name, fe_span_text(c->a, p->type->span), x->name,
                     fe_bkind_name(b->kind), value_str(c, b->v));
            ok = false;
            continue;
        }
        fe_tensor *t = b->v.t;
        if (!fe_storage(t)->buf) {
            diag_internal(c->d, "frontend", "argument '%s' of %s has no graph buffer", x->name, def->name);
            c->errors++;
            ok = false;
            continue;
        }
        if (!bind_tensor(c, caller, callee, p, t, x->span)) {
            ok = false;
            continue;
        }
        /* a kernel reads a view through a parameter of its own: two views
           of one tensor stay two parameters, which a schedule (cache_read)
           can take one at a time */
        if (t->view && !def->has_calls)
            t = fe_view_param(c, t, p->name);
        add_sarg(c, &callee->inputs, &callee->ninputs, &callee->capinputs, t, p->name);
        fe_env_bind(c, ce, p->name, FE_B_INPUT, tensor_value(t), p->span);
    }
    return ok;
}

/* The declared type of output j, evaluated with the bound sizes. */
static bool eval_out_type(fe_ctx *c, fe_inst *callee, const fe_expr *call, int j)
{
    const fe_def *def = callee->def;
    const fe_output *o = &def->outs[j];
    const fe_type *ty = o->type;
    if (ty->kind != FE_T_TENSOR) {
        fe_error(c, ty->span, "the output of %s must be a tensor type", def->name);
        return false;
    }
    int64_t *shape = ir_alloc(c->a, sizeof(int64_t) * (size_t)(ty->ndims ? ty->ndims : 1));
    for (int i = 0; i < ty->ndims; i++) {
        fe_value v;
        if (!fe_eval(c, callee->env, ty->dims[i], &v))
            return false;
        if (v.kind != FE_V_INT) {
            fe_error(c, ty->dims[i]->span, "dimension %d of %s's output must be an integer, but '%s' is %s",
                     i, def->name, fe_span_text(c->a, ty->dims[i]->span), fe_float_str(c->a, v.f));
            return false;
        }
        shape[i] = v.i;
    }
    for (int i = 0; i < ty->ndims; i++)
        if (shape[i] < 1) {
            const char *with = values_of_names(c, callee->env, ty->dims[i]);
            fe_error(c, call->span,
                     "in call to %s: output %s would have shape %s: dimension %d is %s = %lld%s%s; every dimension must be >= 1",
                     def->name, o->name, fe_shape_str(c->a, ty->dtype, ty->ndims, shape), i,
                     fe_span_text(c->a, ty->dims[i]->span), (long long)shape[i], *with ? " with " : "", with);
            return false;
        }
    if (checked_numel(ty->ndims, shape) < 0) {
        fe_error(c, call->span, "in call to %s: output %s has more than 2^63 elements", def->name, o->name);
        return false;
    }
    callee->outs[j] = (fe_outtype){true, ty->dtype, ty->ndims, shape};
    return true;
}

/* The tensor bound to output j of in's def at the end of its body, checked
 * against the declared type; NULL after an error (or silently for a
 * poisoned value). */
static fe_tensor *def_result(fe_ctx *c, fe_inst *in, int j)
{
    const fe_def *def = in->def;
    const fe_output *o = &def->outs[j];
    fe_binding *b = env_find_local(in->env, o->name);
    if (!b || (b->v.kind == FE_V_TENSOR && b->v.t->dead)) {
        fe_error(c, o->span, "%s never defines its output '%s'", def->name, o->name);
        return NULL;
    }
    if (b->v.kind == FE_V_POISON)
        return NULL;
    if (b->v.kind != FE_V_TENSOR) {
        fe_error(c, o->span, "the output '%s' of %s is %s, not a tensor", o->name, def->name,
                 fe_bkind_name(b->kind));
        return NULL;
    }
    fe_tensor *t = b->v.t;
    const fe_outtype *ot = &in->outs[j];
    if (ot->typed && (t->dtype != ot->dtype || t->ndim != ot->ndim ||
                      memcmp(t->shape, ot->shape, sizeof(int64_t) * (size_t)t->ndim) != 0)) {
        /* A composite's declared output type is checked, not imposed. */
        fe_error(c, o->span, "%s's result is %s but its output is declared %s = %s", def->name,
                 tensor_str(c, t), fe_span_text(c->a, o->type->span),
                 fe_shape_str(c->a, ot->dtype, ot->ndim, ot->shape));
        return NULL;
    }
    return t;
}

/* Elaborates def as layer `layer` for the call statement s; sets
 * results[j] to the value of output j (POISON after errors). */
static void instantiate(fe_ctx *c, fe_inst *caller, const fe_stmt *s, fe_def *def,
                        const char *layer, fe_value *results)
{
    const fe_expr *call = s->value;
    for (int j = 0; j < def->nouts; j++)
        results[j] = poison();
    for (fe_inst *p = caller; p; p = p->parent)
        if (p->def == def) {
            fe_error(c, call->span, "recursive call to %s (a def cannot contain itself)", def->name);
            return;
        }
    /* Calls in calls multiply (a def calling another twice, 14 deep, makes
       16384 layers): bound them together, as compile-time loops are. */
    if (++c->calls > FE_MAX_CALLS) {
        if (c->calls == FE_MAX_CALLS + 1)
            fe_error(c, call->span, "the program makes more than %d calls in all (calls in "
                     "calls multiply); this one is a call to %s", FE_MAX_CALLS, def->name);
        return;
    }
    if (!claim_layer(c, layer, s->as ? s->as_span : s->name_span))
        return;
    fe_inst *in = ir_alloc(c->a, sizeof *in);
    in->def = def;
    in->layer = layer;
    in->op = def->name;
    in->call = call->span;
    in->env = env_new(c, def->span.file->scope);
    in->parent = caller;
    in->depth = caller->depth + 1;
    def_refs(c, def);
    in->refs = def->refs;
    in->nrefs = def->nrefs;
    in->outs = ir_alloc(c->a, sizeof(fe_outtype) * (size_t)def->nouts);
    if (!bind_args(c, caller, call, def, in))
        return;
    /* The asserts that open the body are preconditions: they run before
       the output type, whose dimensions they may guard. */
    int npre = 0;
    while (npre < def->nbody && def->body[npre]->kind == FE_S_ASSERT)
        npre++;
    c->inst = in;
    elab_stmts(c, in, def->body, npre, false);
    bool out_ok = !in->stopped;
    for (int j = 0; j < def->nouts && out_ok; j++)
        out_ok = !def->outs[j].type || eval_out_type(c, in, call, j);
    c->inst = caller;
    if (!out_ok)
        return;

    c->inst = in;
    /* an empty body has no array: no NULL + 0 */
    elab_stmts(c, in, def->nbody > npre ? def->body + npre : NULL, def->nbody - npre, false);
    if (in->stopped && in->stage)
        in->stage->poisoned = true;   /* cut short: nothing of it is lowered */
    fe_close_stage(c, in);
    c->inst = caller;
    if (in->stopped)
        return;
    fe_tensor **ts = ir_alloc(c->a, sizeof(fe_tensor *) * (size_t)def->nouts);
    bool ok = true;
    c->inst = in;
    for (int j = 0; j < def->nouts; j++)
        ok &= (ts[j] = def_result(c, in, j)) != NULL;
    c->inst = caller;
    for (int j = 0; ok && j < def->nouts; j++)
        results[j] = tensor_value(ts[j]);
}

/* ---------------------------------------------------------------- the program */

static void collect_defs(fe_ctx *c)
{
    for (int f = 0; f < c->nfiles; f++)
        for (int i = 0; i < c->files[f]->nstmts; i++) {
            fe_stmt *s = c->files[f]->stmts[i];
            if (s->kind != FE_S_DEF || !s->def->name)
                continue;
            fe_def *d = s->def;
            if (fe_is_view_op(d->name)) {
                fe_error(c, d->span, "'%s' is a built-in view op (reshape, flatten, permute, transpose, slice); give the def another name",
                         d->name);
                continue;
            }
            fe_def *old = NULL;
            for (int j = 0; j < c->ndefs && !old; j++)
                if (strcmp(c->defs[j]->name, d->name) == 0 && same_ranks(c->defs[j], d))
                    old = c->defs[j];
            if (old) {
                /* overloads differ in the ranks of their tensor parameters */
                if (fe_error(c, d->span, "redefinition of '%s' (a def of that name with the same tensor ranks exists)",
                             d->name))
                    fe_note(c, old->span, "'%s' was first defined here: %s", d->name, def_signature(c, old));
                continue;
            }
            for (int j = 0; j < d->nparams; j++)
                for (int k = 0; k < j; k++)
                    if (strcmp(d->params[j].name, d->params[k].name) == 0)
                        fe_error(c, d->params[j].span, "%s has two parameters named '%s'", d->name,
                                 d->params[j].name);
            for (int j = 0; j < d->nouts; j++)
                for (int k = 0; k < j; k++)
                    if (strcmp(d->outs[j].name, d->outs[k].name) == 0)
                        fe_error(c, d->outs[j].span, "%s has two outputs named '%s'", d->name,
                                 d->outs[j].name);
            IR_PUSH(c->a, c->defs, c->ndefs, c->capdefs, d);
        }
}

/* ---------------------------------------------------------------- schedules */

/* `schedule` statements below the top level of a file (in a def, a loop or
 * an if) are errors. */
static void nested_schedules(fe_ctx *c, fe_stmt **ss, int n)
{
    for (int i = 0; i < n; i++) {
        fe_stmt *s = ss[i];
        if (s->kind == FE_S_SCHEDULE)
            fe_error(c, s->span, "schedule is only allowed at the top level of a file");
        if (s->kind == FE_S_DEF && s->def)
            nested_schedules(c, s->def->body, s->def->nbody);
        nested_schedules(c, s->body, s->nbody);
        nested_schedules(c, s->orelse, s->norelse);
    }
}

/* Gathers the top-level `schedule` statements of file f and, at its
 * imports, of the files it imports (each file once: seen): a def's must
 * name a def that makes kernels (has index statements), and a def or a
 * layer has at most one.  Layer names are checked after elaboration. */
static void collect_schedules(fe_ctx *c, fe_file *f, bool *seen)
{
    for (int k = 0; k < c->nfiles; k++)
        if (c->files[k] == f) {
            if (seen[k])
                return;
            seen[k] = true;
        }
    for (int i = 0; i < f->nstmts; i++) {
        fe_stmt *s = f->stmts[i];
        if (s->kind == FE_S_IMPORT && s->imported) {
            collect_schedules(c, s->imported, seen);
            continue;
        }
        if (s->kind != FE_S_SCHEDULE) {
            if (s->kind == FE_S_DEF && s->def)
                nested_schedules(c, s->def->body, s->def->nbody);
            nested_schedules(c, s->body, s->nbody);
            nested_schedules(c, s->orelse, s->norelse);
            continue;
        }
        fe_map *map = s->sched_layer ? &c->sched_layers : &c->sched_defs;
        const char *what = s->sched_layer ? "layer" : "def";
        fe_stmt *first = fe_map_get(map, s->name);
        if (first) {
            fe_error(c, s->name_span, "second schedule for %s '%s' (the first is at %s)", what, s->name,
                     loc_str(c, first->name_span));
            continue;
        }
        if (!s->sched_layer) {
            bool known = false, kernels = false;
            for (int j = 0; j < c->ndefs; j++)
                if (strcmp(c->defs[j]->name, s->name) == 0) {
                    known = true;
                    kernels |= c->defs[j]->has_index;
                }
            if (!known) {
                fe_error(c, s->name_span, "schedule for unknown def '%s'%s", s->name, suggest_def(c, s->name));
                continue;
            }
            if (!kernels) {
                fe_error(c, s->name_span,
                         "schedule for def '%s', which has no kernel of its own (it only calls other defs; schedule those)",
                         s->name);
                continue;
            }
        }
        fe_map_put(c->a, map, s->name, s);
        IR_PUSH(c->a, c->scheds, c->nscheds, c->capscheds, s);
    }
}

/* Gives every IR function its schedule: the one of its layer, else the one
 * of the def it was made by (its "op"), as the attributes "schedule" (the
 * body's text as written) and "schedule_loc" (FILE:LINE:COL of the body's
 * first character).  A layer schedule that matches no function is an
 * error. */
static void apply_schedules(fe_ctx *c)
{
    if (!c->nscheds)
        return;
    ir_module *m = c->m;
    fe_map used = {0};
    for (int i = 0; i < m->nfuncs; i++) {
        ir_func *f = m->funcs[i];
        const char *layer = ir_func_attr(f, "layer"), *op = ir_func_attr(f, "op");
        fe_stmt *s = layer ? fe_map_get(&c->sched_layers, layer) : NULL;
        if (s)
            fe_map_put(c->a, &used, s->name, s);
        else
            s = op ? fe_map_get(&c->sched_defs, op) : NULL;
        if (!s)
            continue;
        ir_func_set_attr(m, f, "schedule", s->text);
        ir_func_set_attr(m, f, "schedule_loc", loc_str(c, s->text_span));
    }
    for (int k = 0; k < c->nscheds; k++) {
        fe_stmt *s = c->scheds[k];
        if (!s->sched_layer || fe_map_get(&used, s->name))
            continue;
        if (fe_map_get(&c->layers, s->name)) {
            /* a layer made of calls: its work is in its sublayers */
            const char *sub = NULL;
            size_t n = strlen(s->name);
            for (int i = 0; i < m->nfuncs && !sub; i++) {
                const char *layer = ir_func_attr(m->funcs[i], "layer");
                if (layer && strncmp(layer, s->name, n) == 0 && layer[n] == '.')
                    sub = layer;
            }
            if (sub)
                fe_error(c, s->name_span,
                         "schedule for layer '%s', which has no kernel of its own (it is made of calls; schedule its layers, such as '%s')",
                         s->name, sub);
            else
                fe_error(c, s->name_span, "schedule for layer '%s', which has no kernel of its own", s->name);
            continue;
        }
        const char **cands = ir_alloc(c->a, sizeof(char *) * (size_t)(m->nfuncs + 1));
        for (int i = 0; i < m->nfuncs; i++)
            cands[i] = ir_func_attr(m->funcs[i], "layer");
        const char *near = diag_closest(s->name, cands, m->nfuncs);
        fe_error(c, s->name_span, "schedule for unknown layer '%s'%s", s->name,
                 near ? ir_sprintf(c->a, " (did you mean '%s'?)", near) : "");
    }
}

bool fe_elaborate(fe_ctx *c)
{
    for (int i = 0; i < c->nfiles; i++) {
        c->files[i]->scope = env_new(c, NULL);
        c->files[i]->scope->file = c->files[i];
    }
    collect_defs(c);
    collect_schedules(c, c->main, ir_alloc(c->a, sizeof(bool) * (size_t)c->nfiles));
    fe_def prog = {.name = "main", .body = c->main->stmts, .nbody = c->main->nstmts};
    def_refs(c, &prog);
    fe_inst in = {.layer = "", .op = "main", .env = env_new(c, c->main->scope),
                  .refs = prog.refs, .nrefs = prog.nrefs};
    c->inst = &in;
    c->main->lets_done = true;
    elab_stmts(c, &in, c->main->stmts, c->main->nstmts, true);
    if (in.stopped && in.stage)
        in.stage->poisoned = true;
    fe_close_stage(c, &in);
    c->inst = NULL;
    if (c->errors == 0)
        apply_schedules(c);   /* every layer exists now */
    bool any_output = false;
    for (int i = 0; i < c->m->graph.nbufs; i++)
        any_output |= c->m->graph.bufs[i]->role == IR_BUF_OUTPUT;
    if (!any_output && c->errors == 0) {
        diag_error(c->d, diag_noloc(), "%s: the program has no output (add `output NAME`)", c->main->name);
        c->errors++;
    }
    return c->errors == 0;
}
