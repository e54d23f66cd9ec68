/* frontend/sema.c — elaboration: names, compile-time values, calls, layer
 * names, the graph.
 *
 * The program is run at compile time, statement by statement.  A call
 * binds its arguments (sizes included) in a fresh scope and elaborates the
 * callee's body under the call's layer name; index statements go to
 * kernel.c and are gathered into stages, which become IR functions when a
 * call, an `output` or the end of the body closes them. */
#include "frontend/sema.h"
#include "frontend/kernel.h"
#include "frontend/stage.h"
#include "frontend/view.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            given = ir_sprintf(c->a, "%s%s%s: %s", given, *given ? ", " : "", x->name, fe_tensor_str(c, b->v.t));
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
    if (ok && fe_checked_numel(ty->ndims, *shape) < 0) {
        fe_error(c, ty->span, "%s %s has 2^63 elements or more", what, name);
        ok = false;
    }
    return ok;
}

static bool eval_float(fe_ctx *c, fe_env *e, const fe_expr *x, double *out)
{
    fe_value v;
    if (!fe_eval(c, e, x, &v))
        return false;
    *out = fe_as_float(v);
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
    fe_binding *old = fe_env_find_local(e, s->name);
    if (old && (global || old->kind == FE_B_LET || old->kind == FE_B_LOOP || old->kind == FE_B_SIZE ||
                old->kind == FE_B_ATTR)) {
        if (old->kind == FE_B_LET && !global) {
            /* a local let may be updated (e.g. inside a loop) */
        } else {
            fe_error(c, s->name_span, "'%s' is already defined as %s (at %s)", s->name,
                     fe_bkind_name(old->kind), fe_loc_str(c, old->loc));
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
                    v = fe_poison();
                fe_env_bind(c, e, s->name, FE_B_LET, v, s->name_span);
                return;
            }
    ok = fe_eval(c, e, s->value, &v);
    fe_env_bind(c, e, s->name, FE_B_LET, ok ? v : fe_poison(), s->name_span);
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
        fe_binding *old = fe_env_find_local(into, b->name);
        if (!old) {
            fe_binding copy = *b;
            IR_PUSH(c->a, into->b, into->n, into->cap, copy);
        } else if (!same_place(old->loc, b->loc)) {
            fe_error(c, imp->name_span,
                     "import \"%s\" brings in the let '%s' (at %s), but %s already imports the let '%s' (at %s); rename one, or define '%s' in %s, which hides both",
                     imp->name, b->name, fe_loc_str(c, b->loc), into->file->name, b->name, fe_loc_str(c, old->loc),
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
    if (fe_truthy(v))
        return true;
    const char *head = def ? ir_sprintf(c->a, "assertion failed in %s", def) : "assertion failed";
    const char *cond = fe_span_text(c->a, s->cond->span);
    const char *with = fe_values_of_names(c, e, s->cond);
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
                 fe_bkind_name(old->kind), fe_loc_str(c, old->loc));
        return;
    }
    int64_t *shape;
    if (!eval_shape(c, in->env, s->type, "input", s->name, &shape)) {
        fe_env_bind(c, in->env, s->name, FE_B_INPUT, fe_poison(), s->name_span);
        return;
    }
    if (!fe_reserve_name(c, s->name)) {
        fe_error(c, s->name_span, "input name '%s' is already used by another buffer", s->name);
        return;
    }
    fe_tensor *t = fe_new_tensor(c, s->name, s->type->dtype, s->type->ndims, shape, s->name_span);
    t->buf = ir_buffer_new(c->m, s->name, t->dtype, t->ndim, t->shape, IR_BUF_INPUT);
    fe_add_buffer(c, t->buf);
    if (!apply_init(c, in->env, &s->init, t->buf, -1, 1)) {
        fe_env_bind(c, in->env, s->name, FE_B_INPUT, fe_poison(), s->name_span);
        return;
    }
    fe_env_bind(c, in->env, s->name, FE_B_INPUT, fe_tensor_value(t), s->name_span);
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
                 fe_bkind_name(old->kind), fe_loc_str(c, old->loc));
        return;
    }
    int64_t *shape;
    if (!eval_shape(c, in->env, s->type, what, s->name, &shape)) {
        fe_env_bind(c, in->env, s->name, FE_B_PARAM, fe_poison(), s->name_span);
        return;
    }
    const char *full = fe_join_name(c, in->layer, s->name);
    if (!fe_reserve_name(c, full)) {
        fe_error(c, s->name_span, "%s name '%s' is already used by another buffer", what, full);
        fe_env_bind(c, in->env, s->name, FE_B_PARAM, fe_poison(), s->name_span);
        return;
    }
    fe_tensor *t = fe_new_tensor(c, s->name, s->type->dtype, s->type->ndims, shape, s->name_span);
    t->buf = ir_buffer_new(c->m, full, t->dtype, t->ndim, t->shape, IR_BUF_PARAM);
    t->buf->state = s->state;
    fe_add_buffer(c, t->buf);
    /* Default: uniform(-b, b), b = 1/sqrt(fan_in), fan_in = numel/shape[0]
     * for rank >= 2 (PyTorch's rule for linear and conv weights), else 1. */
    double b = 1;
    if (t->ndim >= 2)
        b = 1 / sqrt((double)(fe_checked_numel(t->ndim, t->shape) / t->shape[0]));
    if (!apply_init(c, in->env, &s->init, t->buf, -b, b)) {
        fe_env_bind(c, in->env, s->name, FE_B_PARAM, fe_poison(), s->name_span);
        return;
    }
    fe_add_sarg(c, &in->weights, &in->nweights, &in->capweights, t, s->name);
    fe_env_bind(c, in->env, s->name, FE_B_PARAM, fe_tensor_value(t), s->name_span);
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
    ir_buffer *other = fe_find_buffer(c, name);
    if (!s->as && other && other != buf && other->role != IR_BUF_TEMP) {
        name = ir_sprintf(c->a, "%s.out", name);
        ir_buffer *taken = fe_find_buffer(c, name);
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
        fe_rename_buffer(c, other, fe_free_buffer_name(c, name));
    if (other != buf)
        fe_rename_buffer(c, buf, name);
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
    bool global = !fe_env_find_local(in->env, s->name);
    if (b->kind == FE_B_ATTR || b->kind == FE_B_SIZE || b->kind == FE_B_LOOP ||
        (b->kind == FE_B_LET && global)) {
        fe_error(c, s->name_span, "cannot assign to '%s': it is %s (at %s)", s->name,
                 fe_bkind_name(b->kind), fe_loc_str(c, b->loc));
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
        fe_value v = fe_poison();
        if (local && (!s->as || valid_layer_name(c, local, s->as_span)))
            v = fe_view_call(c, in, s, fe_join_name(c, in->layer, local));
        if (check_rebind(c, in, s))
            fe_env_bind(c, in->env, s->name, FE_B_VALUE, v, s->name_span);
        return;
    }
    if (x->kind == FE_E_CALL) {
        int arity;
        fe_def *def = resolve_call(c, in, x);
        if (!def && find_def(c, x->name)) {
            if (check_rebind(c, in, s))
                fe_env_bind(c, in->env, s->name, FE_B_VALUE, fe_poison(), s->name_span);
            return;
        }
        if (!def) {
            if (fe_math_fn(x->name, &arity) || strcmp(x->name, "select") == 0)
                fe_error(c, x->span, "'%s' is an elementwise function: use it inside an index statement, e.g. y[i] = %s(x[i])",
                         x->name, x->name);
            else
                fe_error(c, x->span, "unknown function '%s'%s", x->name, suggest_def(c, x->name));
            if (check_rebind(c, in, s))
                fe_env_bind(c, in->env, s->name, FE_B_VALUE, fe_poison(), s->name_span);
            return;
        }
        fe_close_stage(c, in);
        int nnames = s->names ? s->nnames : 1;
        fe_value *vs = ir_alloc(c->a, sizeof(fe_value) * (size_t)(nnames > def->nouts ? nnames : def->nouts));
        for (int j = 0; j < nnames; j++)
            vs[j] = fe_poison();
        if (nnames != def->nouts) {
            fe_error(c, s->name_span, "in call to %s: %s has %d output%s (%s) but %d name%s given",
                     def->name, def->name, def->nouts, def->nouts == 1 ? "" : "s", output_names(c, def),
                     nnames, nnames == 1 ? " is" : "s are");
        } else {
            /* the layer is named by `as`, else by the first name */
            const char *local = s->as ? expand_string(c, in->env, s->as, s->as_span, true) : s->name;
            if (local && (!s->as || valid_layer_name(c, local, s->as_span)))
                instantiate(c, in, s, def, fe_join_name(c, in->layer, local), vs);
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
        v = fe_poison();
    fe_env_bind(c, in->env, s->name, FE_B_LET, v, s->name_span);
}

/* The most iterations all compile-time loops of a program may run (the
 * most calls: FE_MAX_CALLS, frontend.h). */
#define FE_MAX_LOOP_ITERATIONS 1000000

static void elab_for(fe_ctx *c, fe_inst *in, const fe_stmt *s)
{
    int64_t lo, hi;
    bool ok_lo = fe_eval_int(c, in->env, s->lo, "a loop bound", &lo);
    bool ok_hi = fe_eval_int(c, in->env, s->hi, "a loop bound", &hi);
    if (!ok_lo || !ok_hi)
        return;
    fe_binding *old = fe_env_find(in->env, s->name);
    if (old) {
        fe_error(c, s->name_span, "loop variable '%s' is already defined as %s (at %s)", s->name,
                 fe_bkind_name(old->kind), fe_loc_str(c, old->loc));
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
    fe_binding *b = fe_env_find_local(in->env, s->name);
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
        if (fe_truthy(v))
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
                 def->name, p->name, fe_tensor_str(c, t), decl);
        return false;
    }
    if (t->ndim != ty->ndims) {
        fe_error(c, at, "in call to %s: argument %s has rank %d (%s) but the parameter is declared %s (rank %d)",
                 def->name, p->name, t->ndim, fe_tensor_str(c, t), decl, ty->ndims);
        return false;
    }
    const char *origin = ir_sprintf(c->a, "%s: %s", p->name, fe_tensor_str(c, t));
    for (int i = 0; i < ty->ndims; i++) {
        const fe_expr *dim = ty->dims[i];
        if (dim->kind != FE_E_NAME)
            continue;
        /* A bare name is the def's own size variable, even where a global
           let has the same name. */
        fe_binding *b = fe_env_find_local(ce, dim->name);
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
                 def->name, p->name, fe_tensor_str(c, t), decl,
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
                     fe_bkind_name(b->kind), fe_value_str(c, b->v));
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
        fe_add_sarg(c, &callee->inputs, &callee->ninputs, &callee->capinputs, t, p->name);
        fe_env_bind(c, ce, p->name, FE_B_INPUT, fe_tensor_value(t), p->span);
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
            const char *with = fe_values_of_names(c, callee->env, ty->dims[i]);
            fe_error(c, call->span,
                     "in call to %s: output %s would have shape %s: dimension %d is %s = %lld%s%s; every dimension must be >= 1",
                     def->name, o->name, fe_shape_str(c->a, ty->dtype, ty->ndims, shape), i,
                     fe_span_text(c->a, ty->dims[i]->span), (long long)shape[i], *with ? " with " : "", with);
            return false;
        }
    if (fe_checked_numel(ty->ndims, shape) < 0) {
        fe_error(c, call->span, "in call to %s: output %s has 2^63 elements or more", def->name, o->name);
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
    fe_binding *b = fe_env_find_local(in->env, o->name);
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
                 fe_tensor_str(c, t), fe_span_text(c->a, o->type->span),
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
        results[j] = fe_poison();
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
    if (!fe_claim_layer(c, layer, s->as ? s->as_span : s->name_span))
        return;
    fe_inst *in = ir_alloc(c->a, sizeof *in);
    in->def = def;
    in->layer = layer;
    in->op = def->name;
    in->call = call->span;
    in->env = fe_env_new(c, def->span.file->scope);
    in->parent = caller;
    in->depth = caller->depth + 1;
    fe_def_refs(c, def);
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
        results[j] = fe_tensor_value(ts[j]);
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
                     fe_loc_str(c, first->name_span));
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
        ir_func_set_attr(m, f, "schedule_loc", fe_loc_str(c, s->text_span));
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
        c->files[i]->scope = fe_env_new(c, NULL);
        c->files[i]->scope->file = c->files[i];
    }
    collect_defs(c);
    collect_schedules(c, c->main, ir_alloc(c->a, sizeof(bool) * (size_t)c->nfiles));
    fe_def prog = {.name = "main", .body = c->main->stmts, .nbody = c->main->nstmts};
    fe_def_refs(c, &prog);
    fe_inst in = {.layer = "", .op = "main", .env = fe_env_new(c, c->main->scope),
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

