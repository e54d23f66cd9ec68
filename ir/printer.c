/* ir/printer.c — the textual form of the loop IR (grammar in doc/ir.md).
 *
 * The text is meant to be read and diffed from pass to pass: one construct
 * per line, two spaces per nesting level, names as written by the builder,
 * and nothing that depends on pointer values or hash order.  ir/parser.c
 * reads it back; printing what it returns gives the same bytes again.
 */
#include "ir/ir.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- names and strings */

/* Words the parser gives a meaning of their own; a name spelled like one is
 * printed quoted so it can never be taken for the keyword. */
static const char *const printer_keywords[] = {
    "module", "func", "graph", "attrs", "for", "in", "block", "reads",
    "writes", "init", "alloc", "let", "if", "else", "evaluate", "assert",
    "call", "true", "false", "select", "cast", "min", "max", "floordiv",
    "floormod", "ramp", "broadcast", "lanes", "step",
};

/* inf and nan literals: "inf"/"nan" followed by a float suffix. */
static bool is_special_float_word(const char *s)
{
    if (strncmp(s, "inf", 3) != 0 && strncmp(s, "nan", 3) != 0)
        return false;
    const char *suf = s + 3;
    ir_dtype t;
    return !*suf || strcmp(suf, "f") == 0 || ir_dtype_parse(suf, &t);
}

static bool is_reserved(const char *s)
{
    for (size_t i = 0; i < sizeof printer_keywords / sizeof *printer_keywords; i++)
        if (strcmp(s, printer_keywords[i]) == 0)
            return true;
    ir_dtype t;
    ir_intrin fn;
    int lanes;
    if (ir_vtype_parse(s, &t, &lanes) || ir_intrin_parse(s, &fn) || is_special_float_word(s))
        return true;
    for (int i = 0; i < IR_NFOR_KINDS; i++)
        if (strcmp(s, ir_for_kind_name((ir_for_kind)i)) == 0)
            return true;
    for (int i = 0; i < IR_NITER_KINDS; i++)
        if (strcmp(s, ir_iter_kind_name((ir_iter_kind)i)) == 0)
            return true;
    for (int i = 0; i < IR_NSCOPES; i++)
        if (strcmp(s, ir_scope_name((ir_scope)i)) == 0)
            return true;
    for (int i = 0; i < IR_NBUF_ROLES; i++)
        if (strcmp(s, ir_buf_role_name((ir_buf_role)i)) == 0)
            return true;
    return false;
}

static bool is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
}

/* An identifier: [A-Za-z_][A-Za-z0-9_]* ('.' [A-Za-z0-9_]+)*.  A dot must be
 * followed by a word character, so `i..n` lexes as i, .., n. */
static bool is_identifier(const char *s)
{
    if (!s || !*s || !(is_word_char(*s) && !(*s >= '0' && *s <= '9')))
        return false;
    for (const char *p = s; *p; p++) {
        if (is_word_char(*p))
            continue;
        if (*p == '.' && is_word_char(p[1]))
            continue;
        return false;
    }
    return true;
}

/* A C-style string literal.  Bytes >= 0x80 pass through (UTF-8 names stay
 * readable); control bytes become three-digit octal escapes, which cannot
 * run into a following digit the way \x escapes do. */
static void print_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(out, "\\%03o", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

static void print_name(FILE *out, const char *s)
{
    if (is_identifier(s) && !is_reserved(s))
        fputs(s, out);
    else
        print_string(out, s);
}

static void print_func_name(FILE *out, const char *s)
{
    fputc('@', out);
    if (is_identifier(s))
        fputs(s, out);
    else
        print_string(out, s);
}

/* ---------------------------------------------------------------- constants and types */

static bool dtype_ok(ir_dtype t) { return (unsigned)t < IR_NDTYPES; }

static const char *dtype_text(ir_dtype t)
{
    return dtype_ok(t) ? ir_dtype_name(t) : "?";
}

/* f32 is spelled with the short suffix `f`, f64 with none. */
static const char *float_suffix(ir_dtype t)
{
    return t == IR_F32 ? "f" : t == IR_F64 ? "" : dtype_text(t);
}

/* The shortest %g text that reads back to exactly v (as a float for f32),
 * with ".0" added when it would otherwise look like an integer. */
static void format_float(char *buf, size_t size, double v, ir_dtype t)
{
    if (isnan(v)) {
        snprintf(buf, size, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, size, "%s", v < 0 ? "-inf" : "inf");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        double back = strtod(buf, NULL);
        if (t == IR_F32 ? (float)back == (float)v : back == v)
            break;
    }
    /* %g switches to an exponent as soon as the digits run out (50 -> 5e+01);
     * like Python's repr, keep plain notation below 1e16. */
    const char *e = strchr(buf, 'e');
    if (e) {
        int ex = atoi(e + 1);
        if (ex >= 0 && ex < 16)
            snprintf(buf, size, "%.*g", ex + 1, v);
    }
    if (!strpbrk(buf, ".e"))
        strncat(buf, ".0", size - strlen(buf) - 1);
}

static void print_float(FILE *out, double v, ir_dtype t)
{
    char buf[64];
    format_float(buf, sizeof buf, v, t);
    fprintf(out, "%s%s", buf, float_suffix(t));
}

static void print_int(FILE *out, int64_t v, ir_dtype t)
{
    if (t == IR_BOOL && (v == 0 || v == 1))
        fputs(v ? "true" : "false", out);
    else if (t == IR_I64)
        fprintf(out, "%" PRId64, v);
    else
        fprintf(out, "%" PRId64 "%s", v, dtype_text(t));
}

/* A bound of an init range: a plain number, integral values without ".0". */
static void print_number(FILE *out, double v)
{
    char buf[64];
    format_float(buf, sizeof buf, v, IR_F64);
    size_t n = strlen(buf);
    if (n > 2 && strcmp(buf + n - 2, ".0") == 0)
        buf[n - 2] = 0;
    fputs(buf, out);
}

/* f32[64, 32]; a scalar is f32[]. */
static void print_type(FILE *out, const ir_buffer *b)
{
    if (!b) {
        fputs("<null>", out);
        return;
    }
    fprintf(out, "%s[", dtype_text(b->dtype));
    for (int i = 0; i < b->ndim; i++)
        fprintf(out, "%s%" PRId64, i ? ", " : "", b->shape ? b->shape[i] : 0);
    fputc(']', out);
}

/* ---------------------------------------------------------------- expressions */

/* C's precedence levels for the infix and prefix operators; everything
 * else (constants, names, loads, function-call spellings) is primary. */
enum {
    PREC_OR = 1,
    PREC_AND,
    PREC_EQ,
    PREC_REL,
    PREC_ADD,
    PREC_MUL,
    PREC_UNARY,
    PREC_PRIMARY
};

static bool expr_kind_ok(const ir_expr *e)
{
    return e && (unsigned)e->kind < IR_NEXPR_KINDS;
}

static int expr_prec(const ir_expr *e)
{
    if (!expr_kind_ok(e))
        return PREC_PRIMARY;
    switch (e->kind) {
    case IR_OR: return PREC_OR;
    case IR_AND: return PREC_AND;
    case IR_EQ: case IR_NE: return PREC_EQ;
    case IR_LT: case IR_LE: case IR_GT: case IR_GE: return PREC_REL;
    case IR_ADD: case IR_SUB: return PREC_ADD;
    case IR_MUL: case IR_DIV: return PREC_MUL;
    case IR_NEG: case IR_NOT: return PREC_UNARY;
    default: return PREC_PRIMARY;
    }
}

static void print_operand(FILE *out, const ir_expr *e, bool parens)
{
    if (parens)
        fputc('(', out);
    ir_print_expr(out, e);
    if (parens)
        fputc(')', out);
}

static void print_args(FILE *out, ir_expr *const *args, int n)
{
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", out);
        ir_print_expr(out, args ? args[i] : NULL);
    }
}

/* `-x` would read back as a negative constant when x is a number, so such
 * operands of NEG are parenthesized.  A NEG of a NEG is written `- -x`
 * (a space, and no parentheses: a chain of any length reads back without
 * nesting the parser's recursion). */
static bool neg_needs_parens(const ir_expr *a)
{
    if (!expr_kind_ok(a))
        return false;
    return a->kind == IR_INT || a->kind == IR_FLOAT || expr_prec(a) < PREC_UNARY;
}

void ir_print_expr(FILE *out, const ir_expr *e)
{
    if (!expr_kind_ok(e)) {
        fputs(e ? "<bad expr>" : "<null>", out);
        return;
    }
    switch (ir_expr_kind_class(e->kind)) {
    case 'c':
        if (e->kind == IR_INT)
            print_int(out, e->ival, e->dtype);
        else
            print_float(out, e->fval, e->dtype);
        return;
    case 'v':
        print_name(out, e->var ? e->var->name : NULL);
        return;
    case 'l':
        print_name(out, e->buf ? e->buf->name : NULL);
        fputc('[', out);
        print_args(out, e->args, e->nargs);
        fputc(']', out);
        return;
    case 'b': {
        int p = expr_prec(e);
        print_operand(out, e->a, expr_prec(e->a) < p);
        fprintf(out, " %s ", ir_expr_kind_name(e->kind));
        print_operand(out, e->b, expr_prec(e->b) <= p);
        return;
    }
    case 'u':
        fputs(ir_expr_kind_name(e->kind), out);
        if (e->kind == IR_NEG && expr_kind_ok(e->a) && e->a->kind == IR_NEG)
            fputc(' ', out);
        print_operand(out, e->a, e->kind == IR_NEG ? neg_needs_parens(e->a)
                                                   : expr_prec(e->a) < PREC_UNARY);
        return;
    case 'f':
        fprintf(out, "%s(", ir_expr_kind_name(e->kind));
        ir_print_expr(out, e->a);
        fputs(", ", out);
        ir_print_expr(out, e->b);
        fputc(')', out);
        return;
    case 's':
        fputs("select(", out);
        ir_print_expr(out, e->c);
        fputs(", ", out);
        ir_print_expr(out, e->a);
        fputs(", ", out);
        ir_print_expr(out, e->b);
        fputc(')', out);
        return;
    case 'k':
        fprintf(out, "cast<%s>(", dtype_text(e->dtype));
        ir_print_expr(out, e->a);
        fputc(')', out);
        return;
    case 'i':
        fprintf(out, "%s(", (unsigned)e->fn < IR_NINTRINSICS ? ir_intrin_name(e->fn) : "?");
        print_args(out, e->args, e->nargs);
        fputc(')', out);
        return;
    case 'w':
        if (e->kind == IR_LANES) {
            fputs("lanes(", out);
            print_args(out, e->args, e->nargs);
            fputc(')', out);
            return;
        }
        fprintf(out, "%s(", ir_expr_kind_name(e->kind));
        ir_print_expr(out, e->a);
        if (e->kind == IR_RAMP) {
            fputs(", ", out);
            ir_print_expr(out, e->b);
        }
        fprintf(out, ", %d)", e->lanes);
        return;
    }
}

/* ---------------------------------------------------------------- statements */

static void print_indent(FILE *out, int indent)
{
    fprintf(out, "%*s", 2 * (indent > 0 ? indent : 0), "");
}

/* The statements of a `{ ... }` body: a SEQ contributes its children (and
 * nested SEQs theirs), so the text never shows SEQ nodes; the parser makes
 * one SEQ per body of zero or several statements. */
static void print_body(FILE *out, const ir_stmt *s, int indent)
{
    if (!s)
        return;
    if (s->kind == IR_S_SEQ) {
        for (int i = 0; i < s->nbody; i++)
            print_body(out, s->body ? s->body[i] : NULL, indent);
        return;
    }
    ir_print_stmt(out, s, indent);
}

static const ir_stmt *first_body(const ir_stmt *s)
{
    return s->nbody > 0 && s->body ? s->body[0] : NULL;
}

/* " {\n", the body one level deeper, and the closing brace (no newline, so
 * IF can continue with " else {"). */
static void print_braced(FILE *out, const ir_stmt *body, int indent)
{
    fputs(" {\n", out);
    print_body(out, body, indent + 1);
    print_indent(out, indent);
    fputc('}', out);
}

/* A variable declaration's name, with its dtype when it is not the default
 * i64 of index variables. */
static void print_index_var(FILE *out, const ir_var *v)
{
    print_name(out, v ? v->name : NULL);
    if (v && v->dtype != IR_I64)
        fprintf(out, ": %s", dtype_text(v->dtype));
}

/* A let's variable type: f32, or f32x8 for a vector. */
static void print_var_type(FILE *out, const ir_var *v)
{
    char buf[32];
    fputs(v && dtype_ok(v->dtype) ? ir_vtype_name(v->dtype, ir_var_lanes(v), buf, sizeof buf)
                                  : "?", out);
}

static void print_buffer_list(FILE *out, const char *what, ir_buffer *const *bufs, int n)
{
    fprintf(out, " %s(", what);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", out);
        print_name(out, bufs && bufs[i] ? bufs[i]->name : NULL);
    }
    fputc(')', out);
}

static void print_block_header(FILE *out, const ir_stmt *s)
{
    fputs("block ", out);
    print_name(out, s->name);
    fputc('(', out);
    for (int i = 0; i < s->niters && s->iters; i++) {
        const ir_itervar *iv = &s->iters[i];
        if (i)
            fputs(", ", out);
        print_name(out, iv->var ? iv->var->name : NULL);
        fputs(": ", out);
        if (iv->var && iv->var->dtype != IR_I64)
            fprintf(out, "%s ", dtype_text(iv->var->dtype));
        fprintf(out, "%s[%" PRId64 "] = ",
                (unsigned)iv->kind < IR_NITER_KINDS ? ir_iter_kind_name(iv->kind) : "?",
                iv->extent);
        ir_print_expr(out, iv->binding);
    }
    fputc(')', out);
    print_buffer_list(out, "reads", s->reads, s->nreads);
    print_buffer_list(out, "writes", s->writes, s->nwrites);
}

void ir_print_stmt(FILE *out, const ir_stmt *s, int indent)
{
    if (!s)
        return;
    if (s->kind == IR_S_SEQ) {
        print_body(out, s, indent);
        return;
    }
    print_indent(out, indent);
    switch (s->kind) {
    case IR_S_FOR:
        fputs("for ", out);
        print_index_var(out, s->var);
        fputs(" in ", out);
        ir_print_expr(out, s->lo);
        fputs("..", out);
        ir_print_expr(out, s->hi);
        if (ir_for_step(s) > 1)
            fprintf(out, " step %" PRId64, s->step);
        if (s->for_kind != IR_FOR_SERIAL)
            fprintf(out, " %s", (unsigned)s->for_kind < IR_NFOR_KINDS
                                    ? ir_for_kind_name(s->for_kind) : "?");
        print_braced(out, first_body(s), indent);
        break;
    case IR_S_BLOCK:
        print_block_header(out, s);
        fputs(" {\n", out);
        if (s->init) {
            print_indent(out, indent + 1);
            fputs("init", out);
            print_braced(out, s->init, indent + 1);
            fputc('\n', out);
        }
        print_body(out, first_body(s), indent + 1);
        print_indent(out, indent);
        fputc('}', out);
        break;
    case IR_S_STORE:
        print_name(out, s->buf ? s->buf->name : NULL);
        fputc('[', out);
        print_args(out, s->args, s->nargs);
        fputs("] = ", out);
        ir_print_expr(out, s->value);
        break;
    case IR_S_ALLOC:
        fputs("alloc ", out);
        if (s->buf) {
            print_name(out, s->buf->name);
            fputs(": ", out);
            print_type(out, s->buf);
            fprintf(out, " %s", (unsigned)s->buf->scope < IR_NSCOPES
                                    ? ir_scope_name(s->buf->scope) : "?");
            if (s->buf->filled)
                fputs(" filled", out);
        } else {
            fputs("<null>", out);
        }
        print_braced(out, first_body(s), indent);
        break;
    case IR_S_LET:
        fputs("let ", out);
        print_name(out, s->var ? s->var->name : NULL);
        fputs(": ", out);
        print_var_type(out, s->var);
        fputs(" = ", out);
        ir_print_expr(out, s->value);
        print_braced(out, first_body(s), indent);
        break;
    case IR_S_IF:
        fputs("if ", out);
        ir_print_expr(out, s->cond);
        print_braced(out, first_body(s), indent);
        if (s->orelse) {
            fputs(" else", out);
            print_braced(out, s->orelse, indent);
        }
        break;
    case IR_S_EVAL:
        fputs("evaluate ", out);
        ir_print_expr(out, s->value);
        break;
    case IR_S_PREFETCH:
        fputs("prefetch ", out);
        print_name(out, s->buf ? s->buf->name : NULL);
        fputc('[', out);
        print_args(out, s->args, s->nargs);
        fputc(']', out);
        break;
    case IR_S_ASSERT:
        fputs("assert ", out);
        ir_print_expr(out, s->cond);
        fputs(", ", out);
        print_string(out, s->msg);
        break;
    default:
        fprintf(out, "<bad stmt %d>", (int)s->kind);
        break;
    }
    fputc('\n', out);
}

/* ---------------------------------------------------------------- functions, graph, module */

void ir_print_func(FILE *out, const ir_func *f)
{
    if (!f)
        return;
    fputs("func ", out);
    print_func_name(out, f->name);
    fputc('(', out);
    for (int i = 0; i < f->nparams && f->params; i++) {
        const ir_buffer *b = f->params[i];
        if (i)
            fputs(", ", out);
        print_name(out, b ? b->name : NULL);
        fputs(": ", out);
        print_type(out, b);
    }
    fputc(')', out);
    if (f->nattrs > 0) {
        fputs(" attrs(", out);
        for (int i = 0; i < f->nattrs && f->attrs; i++) {
            if (i)
                fputs(", ", out);
            print_name(out, f->attrs[i].key);
            fputs(" = ", out);
            print_string(out, f->attrs[i].value);
        }
        fputc(')', out);
    }
    fputs(" {\n", out);
    print_body(out, f->body, 1);
    fputs("}\n", out);
}

/* `call @f(a, b)`, or `load @f(a, b)` for a load call. */
static void print_call(FILE *out, const char *keyword, const ir_graph_call *c)
{
    fprintf(out, "  %s ", keyword);
    print_func_name(out, c->fn ? c->fn->name : NULL);
    fputc('(', out);
    for (int j = 0; j < c->nargs && c->args; j++) {
        if (j)
            fputs(", ", out);
        print_name(out, c->args[j] ? c->args[j]->name : NULL);
    }
    fputs(")\n", out);
}

static void print_graph(FILE *out, const ir_graph *g)
{
    fputs("graph {\n", out);
    if (g->has_arena)
        fprintf(out, "  arena %" PRId64 "\n", g->arena_bytes);
    for (int i = 0; i < g->nbufs && g->bufs; i++) {
        const ir_buffer *b = g->bufs[i];
        if (!b)
            continue;
        fprintf(out, "  %s ", (unsigned)b->role < IR_NBUF_ROLES ? ir_buf_role_name(b->role) : "?");
        print_name(out, b->name);
        fputs(": ", out);
        print_type(out, b);
        if (b->state)
            fputs(" state", out);
        if (b->has_init) {
            fputs(" init(", out);
            print_number(out, b->init_lo);
            fputs(", ", out);
            print_number(out, b->init_hi);
            fputc(')', out);
        }
        if (b->in_arena)
            fprintf(out, " arena(%" PRId64 ")", b->arena_offset);
        fputc('\n', out);
    }
    for (int i = 0; i < g->nloads && g->loads; i++)
        print_call(out, "load", &g->loads[i]);
    for (int i = 0; i < g->ncalls && g->calls; i++)
        print_call(out, "call", &g->calls[i]);
    fputs("}\n", out);
}

void ir_print_module(FILE *out, const ir_module *m)
{
    fputs("module ", out);
    print_string(out, m->name);
    fputc('\n', out);
    for (int i = 0; i < m->nfuncs; i++) {
        fputc('\n', out);
        if (m->funcs[i])
            ir_print_func(out, m->funcs[i]);
    }
    if (m->graph.nbufs > 0 || m->graph.ncalls > 0 || m->graph.nloads > 0 || m->graph.has_arena) {
        fputc('\n', out);
        print_graph(out, &m->graph);
    }
}

char *ir_module_to_string(const ir_module *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return NULL;
    ir_print_module(out, m);
    if (fclose(out) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
