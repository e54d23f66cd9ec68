/* ir/parser.c — reads the textual IR of doc/ir.md back into a module.
 *
 * A hand-written lexer (tokens made on demand, with line and column) and a
 * recursive-descent parser.  Names are resolved while parsing: variables
 * against the enclosing loops, blocks and lets, buffers against the
 * function's parameters and enclosing allocs, graph buffers against the
 * graph section, and called functions once the whole file is read.  Every
 * expression gets its dtype from its parts by the rules of ir.h, checked by
 * the same function the verifier uses (ir_expr_check_node in ir/verify.c).
 *
 * Errors go through diag with a location.  After a syntax error the parser
 * skips the rest of the line (and the body a skipped '{' opens), so one run
 * reports several errors; semantic errors just make the node NULL, and
 * NULLs propagate silently so one mistake is reported once.
 */
#include "ir/diag.h"
#include "ir/ir.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>


/* ---------------------------------------------------------------- tokens */

/* Single-character punctuation is its own character code. */
enum {
    T_EOF = 0,
    T_IDENT = 256,  /* name or keyword */
    T_STRING,       /* "..." */
    T_NUMBER,       /* 42, 0.5f, 3i32, 1e-05 */
    T_FUNC,         /* @name or @"name" */
    T_EQ,           /* == */
    T_NE,           /* != */
    T_LE,           /* <= */
    T_GE,           /* >= */
    T_AND,          /* && */
    T_OR,           /* || */
    T_DOTDOT,       /* .. */
};

/* One token; `str` is the name or decoded string (module arena). */
typedef struct token {
    int kind;
    size_t off;            /* byte offset of the first character */
    int len;               /* bytes in the source */
    int line, col;
    const char *str;       /* IDENT, STRING, FUNC */
    bool bad;              /* the lexer already reported this token */
} token;

/* Tokens are stored in fixed chunks so pointers to them stay valid while
 * the lexer reads ahead. */
#define TOKEN_CHUNK 512
typedef struct token_chunk {
    struct token_chunk *next;
    int used;
    token toks[TOKEN_CHUNK];
} token_chunk;

/* A name in scope.  A NULL var or buf marks a name whose declaration had
 * an error: uses of it are not reported again. */
typedef struct scoped_var {
    const char *name;
    ir_var *var;
} scoped_var;

typedef struct scoped_buf {
    const char *name;
    ir_buffer *buf;
} scoped_buf;

/* A graph call whose function is looked up after the whole file is read. */
typedef struct pending_call {
    const char *name;
    diag_loc loc;
    ir_buffer **args;
    diag_loc *arg_locs;
    int nargs;
    bool at_load;          /* a load call */
} pending_call;

/* Deeper nesting than this (of expressions or statements) is an error, so
 * hostile input cannot exhaust the stack. */
#define PARSE_MAX_DEPTH 200
/* The deepest expression tree: a chain such as a + b + c + ... nests
 * without recursion in the parser, but every later stage walks the tree
 * recursively.  Generous, so that every module tec prints parses back. */
#define PARSE_MAX_TREE_DEPTH 4000

typedef struct parser {
    const char *file;
    const char *text;
    size_t len;
    diag *d;
    ir_module *m;
    int nerrors;
    /* lexer */
    size_t pos;
    int line, col;
    token **toks;           /* pointers into chunks: tokens never move */
    int ntoks, captoks;
    int cur;                /* index of the current token */
    struct token_chunk *chunks;
    /* error recovery */
    bool panic;             /* a syntax error: skip to the next line */
    int err_line;
    bool eof_reported;
    int depth;
    int tree_depth;         /* operator levels above the expression being parsed */
    /* names */
    scoped_var *vars;
    int nvars, capvars;
    scoped_buf *bufs;
    int nbufs, capbufs;
    pending_call *calls;
    int ncalls, capcalls;
    bool seen_graph;
    bool seen_arena;
    /* Declarations that had errors, so their uses are not reported again. */
    const char **bad_graph_bufs;
    int nbad_graph_bufs, capbad_graph_bufs;
    ir_func **bad_funcs;
    int nbad_funcs, capbad_funcs;
    /* The graph's buffers by name (open addressing, a power of two of
     * slots, at most half full): a graph of thousands of buffers and calls
     * is read in linear time, not quadratic. */
    ir_buffer **gbufs;
    size_t capgbufs, ngbufs;
} parser;

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        ir_out_of_memory();
    }
    return q;
}

/* Appends to a malloc'ed array, doubling its capacity. */
#define VEC_PUSH(arr, n, cap, item)                                          \
    do {                                                                     \
        if ((n) >= (cap)) {                                                  \
            (cap) = (cap) ? 2 * (cap) : 16;                                  \
            (arr) = xrealloc((arr), sizeof *(arr) * (size_t)(cap));          \
        }                                                                    \
        (arr)[(n)++] = (item);                                               \
    } while (0)

/* ---------------------------------------------------------------- errors */

static diag_loc loc_at(const parser *p, int line, int col)
{
    diag_loc l = {p->file, line, col};
    return l;
}

static diag_loc tok_loc(const parser *p, const token *t)
{
    return loc_at(p, t->line, t->col);
}

static void error_at(parser *p, diag_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void error_at(parser *p, diag_loc loc, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->nerrors++;
    diag_error(p->d, loc, "%s", msg);
}

/* ---------------------------------------------------------------- lexer */

static bool is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_word(int c) { return is_alpha(c) || is_digit(c); }

static int ch(const parser *p, size_t off)
{
    return off < p->len ? (unsigned char)p->text[off] : -1;
}

static void advance(parser *p, size_t n)
{
    while (n-- > 0 && p->pos < p->len) {
        if (p->text[p->pos] == '\n') {
            p->line++;
            p->col = 1;
        } else {
            p->col++;
        }
        p->pos++;
    }
}

static void skip_space(parser *p)
{
    for (;;) {
        int c = ch(p, p->pos);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            advance(p, 1);
        } else if (c == '#') {
            while (p->pos < p->len && p->text[p->pos] != '\n')
                advance(p, 1);
        } else {
            return;
        }
    }
}

static int hex_value(int c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads a string literal starting at the opening quote; returns the decoded
 * text.  Errors are reported but still give a string, so parsing goes on. */
static const char *lex_string(parser *p, bool *bad)
{
    diag_loc start = loc_at(p, p->line, p->col);
    char *buf = NULL;
    int n = 0, cap = 0;
    bool bad_nul = false;
    int errors = p->nerrors;
    advance(p, 1);
    for (;;) {
        int c = ch(p, p->pos);
        if (c < 0 || c == '\n') {
            error_at(p, start, "missing terminating '\"' character");
            break;
        }
        if (c == '"') {
            advance(p, 1);
            break;
        }
        if (c != '\\') {
            if (c == 0)
                bad_nul = true;
            VEC_PUSH(buf, n, cap, (char)c);
            advance(p, 1);
            continue;
        }
        diag_loc esc = loc_at(p, p->line, p->col);
        int e = ch(p, p->pos + 1);
        int v = -1;
        size_t used = 2;
        switch (e) {
        case 'n': v = '\n'; break;
        case 't': v = '\t'; break;
        case 'r': v = '\r'; break;
        case '\\': v = '\\'; break;
        case '"': v = '"'; break;
        case '\'': v = '\''; break;
        case 'x': {
            int h1 = hex_value(ch(p, p->pos + 2)), h2 = hex_value(ch(p, p->pos + 3));
            if (h1 >= 0) {
                v = h2 >= 0 ? h1 * 16 + h2 : h1;
                used = h2 >= 0 ? 4 : 3;
            }
            break;
        }
        default:
            if (e >= '0' && e <= '7') {
                v = 0;
                used = 1;
                while (used < 4 && ch(p, p->pos + used) >= '0' && ch(p, p->pos + used) <= '7')
                    v = v * 8 + (ch(p, p->pos + used++) - '0');
                v &= 0xff;
            }
        }
        if (v < 0) {
            if (e < 0 || e == '\n') {
                advance(p, 1);
                continue; /* the missing quote is reported next */
            }
            error_at(p, esc, "unknown escape sequence '\\%c'", e >= 32 && e < 127 ? e : '?');
            advance(p, 2);
            continue;
        }
        if (v == 0)
            bad_nul = true;
        VEC_PUSH(buf, n, cap, (char)v);
        advance(p, used);
    }
    if (bad_nul)
        error_at(p, start, "string contains a NUL character");
    *bad = p->nerrors != errors;
    char *s = ir_strndup(p->m->arena, buf ? buf : "", (size_t)n);
    free(buf);
    return s;
}

/* An identifier: [A-Za-z_][A-Za-z0-9_]* ('.' [A-Za-z0-9_]+)*. */
static size_t ident_length(const parser *p, size_t off)
{
    size_t e = off + 1;
    for (;;) {
        if (is_word(ch(p, e)))
            e++;
        else if (ch(p, e) == '.' && is_word(ch(p, e + 1)))
            e++;
        else
            return e - off;
    }
}

/* A number: digits ['.' digits] [e [+-] digits] and a suffix of word
 * characters (checked by the parser).  `0..64` stops before the dots. */
static size_t number_length(const parser *p, size_t off)
{
    size_t e = off;
    while (is_digit(ch(p, e)))
        e++;
    if (ch(p, e) == '.' && is_digit(ch(p, e + 1))) {
        e++;
        while (is_digit(ch(p, e)))
            e++;
    }
    int c = ch(p, e);
    if (c == 'e' || c == 'E') {
        size_t x = e + 1;
        if (ch(p, x) == '+' || ch(p, x) == '-')
            x++;
        if (is_digit(ch(p, x))) {
            e = x;
            while (is_digit(ch(p, e)))
                e++;
        }
    }
    while (is_word(ch(p, e)))
        e++;
    return e - off;
}

/* Lexes one token (never fails: bad characters are reported and skipped). */
static token lex(parser *p)
{
    for (;;) {
        skip_space(p);
        token t = {T_EOF, p->pos, 0, p->line, p->col, NULL, false};
        int c = ch(p, p->pos), c2 = ch(p, p->pos + 1);
        if (c < 0)
            return t;
        if (is_alpha(c)) {
            t.kind = T_IDENT;
            t.len = (int)ident_length(p, p->pos);
            t.str = ir_strndup(p->m->arena, p->text + p->pos, (size_t)t.len);
            advance(p, (size_t)t.len);
            return t;
        }
        if (is_digit(c)) {
            t.kind = T_NUMBER;
            t.len = (int)number_length(p, p->pos);
            advance(p, (size_t)t.len);
            return t;
        }
        if (c == '"') {
            t.kind = T_STRING;
            t.str = lex_string(p, &t.bad);
            t.len = (int)(p->pos - t.off);
            return t;
        }
        if (c == '@') {
            advance(p, 1);
            t.kind = T_FUNC;
            if (is_alpha(ch(p, p->pos))) {
                size_t n = ident_length(p, p->pos);
                t.str = ir_strndup(p->m->arena, p->text + p->pos, n);
                advance(p, n);
            } else if (ch(p, p->pos) == '"') {
                t.str = lex_string(p, &t.bad);
            } else {
                error_at(p, tok_loc(p, &t), "expected a function name after '@'");
                continue;
            }
            t.len = (int)(p->pos - t.off);
            return t;
        }
        static const struct {
            char a, b;
            int kind;
        } pairs[] = {
            {'=', '=', T_EQ}, {'!', '=', T_NE}, {'<', '=', T_LE}, {'>', '=', T_GE},
            {'&', '&', T_AND}, {'|', '|', T_OR}, {'.', '.', T_DOTDOT},
        };
        for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
            if (c == pairs[i].a && c2 == pairs[i].b) {
                t.kind = pairs[i].kind;
                t.len = 2;
                advance(p, 2);
                return t;
            }
        if (c != 0 && strchr("()[]{},:=<>+-*/!", c)) {
            t.kind = c;
            t.len = 1;
            advance(p, 1);
            return t;
        }
        if (c >= 33 && c < 127)
            error_at(p, tok_loc(p, &t), "stray '%c' in input", c);
        else
            error_at(p, tok_loc(p, &t), "stray '\\%03o' in input", c);
        advance(p, 1);
    }
}

/* The token k places ahead of the current one. */
static token *peek(parser *p, int k)
{
    while (p->ntoks <= p->cur + k) {
        if (p->ntoks > 0 && p->toks[p->ntoks - 1]->kind == T_EOF)
            return p->toks[p->ntoks - 1];
        if (!p->chunks || p->chunks->used == TOKEN_CHUNK) {
            token_chunk *c = xrealloc(NULL, sizeof *c);
            c->next = p->chunks;
            c->used = 0;
            p->chunks = c;
        }
        token *t = &p->chunks->toks[p->chunks->used++];
        *t = lex(p);
        VEC_PUSH(p->toks, p->ntoks, p->captoks, t);
    }
    return p->toks[p->cur + k];
}

static token *next(parser *p)
{
    token *t = peek(p, 0);
    if (t->kind != T_EOF)
        p->cur++;
    return t;
}

static bool at(parser *p, int kind) { return peek(p, 0)->kind == kind; }

static bool is_word_tok(const token *t, const char *w)
{
    return t->kind == T_IDENT && strcmp(t->str, w) == 0;
}

static bool at_word(parser *p, const char *w) { return is_word_tok(peek(p, 0), w); }

static bool accept(parser *p, int kind)
{
    if (!at(p, kind))
        return false;
    next(p);
    return true;
}

/* A syntax error: reported at the current token, or just after the previous
 * one when the current token is already on a later line (so "expected ']'"
 * points at the line where the ']' is missing).  Then panic mode: the
 * statement is abandoned and the rest of its line skipped. */
static void syntax_error(parser *p, const char *msg)
{
    if (p->panic)
        return;
    token *t = peek(p, 0);
    diag_loc loc = tok_loc(p, t);
    if (p->cur > 0) {
        token *prev = p->toks[p->cur - 1];
        if (t->line > prev->line || t->kind == T_EOF) {
            /* Tokens never span lines except strings with escapes, whose
             * column is still on the line where they start. */
            loc = loc_at(p, prev->line, prev->col + prev->len);
        }
    }
    /* Every open body misses its '}' at the end of input: say it once. */
    if (t->kind != T_EOF || !p->eof_reported)
        error_at(p, loc, "%s", msg);
    if (t->kind == T_EOF)
        p->eof_reported = true;
    p->panic = true;
    p->err_line = loc.line;
}

static bool expect(parser *p, int kind, const char *msg)
{
    if (accept(p, kind))
        return true;
    syntax_error(p, msg);
    return false;
}

/* Skips the rest of the erroneous line, plus the whole body of any '{'
 * opened on it (and an `else` branch following that body), then leaves
 * panic mode.  A '}' that closes an enclosing body is left alone. */
static void recover(parser *p)
{
    if (!p->panic)
        return;
    int line = p->err_line, depth = 0;
    for (;;) {
        token *t = peek(p, 0);
        if (t->kind == T_EOF)
            break;
        if (depth == 0 && t->line != line)
            break;
        if (t->kind == '{') {
            depth++;
        } else if (t->kind == '}') {
            if (depth == 0)
                break;
            if (--depth == 0 && is_word_tok(peek(p, 1), "else")) {
                next(p);
                line = peek(p, 0)->line;
                continue;
            }
        }
        next(p);
    }
    p->panic = false;
}

/* ---------------------------------------------------------------- names and scopes */

static bool at_name(parser *p) { return at(p, T_IDENT) || at(p, T_STRING); }

/* A name: an identifier or a quoted string.  NULL (and panic) otherwise. */
static const char *parse_name(parser *p, const char *msg)
{
    if (at_name(p))
        return next(p)->str;
    syntax_error(p, msg);
    return NULL;
}

static const scoped_var *find_var(const parser *p, const char *name)
{
    for (int i = p->nvars - 1; i >= 0; i--)
        if (strcmp(p->vars[i].name, name) == 0)
            return &p->vars[i];
    return NULL;
}

static const scoped_buf *find_buf(const parser *p, const char *name)
{
    for (int i = p->nbufs - 1; i >= 0; i--)
        if (strcmp(p->bufs[i].name, name) == 0)
            return &p->bufs[i];
    return NULL;
}

/* A name whose declaration failed: later uses stay silent. */
static void poison_buf(parser *p, const char *name)
{
    scoped_buf s = {name, NULL};
    VEC_PUSH(p->bufs, p->nbufs, p->capbufs, s);
}

/* Looks a buffer up for a use at token t; reports it when undefined.
 * NULL when undefined or poisoned. */
static ir_buffer *use_buf(parser *p, const token *t)
{
    const scoped_buf *s = find_buf(p, t->str);
    if (!s && !t->bad)
        error_at(p, tok_loc(p, t), "undefined buffer '%s'", t->str);
    return s ? s->buf : NULL;
}

/* Declares a variable in the innermost scope; names never shadow, so the
 * text always means one variable. */
static ir_var *declare_var(parser *p, const token *at_tok, const char *name, ir_dtype t)
{
    const scoped_var *old = find_var(p, name);
    if (old && old->var)
        error_at(p, tok_loc(p, at_tok), "variable '%s' is already defined", name);
    ir_var *v = ir_var_new(p->m, name, t);
    scoped_var s = {v->name, v};
    VEC_PUSH(p->vars, p->nvars, p->capvars, s);
    return v;
}

static void declare_buf(parser *p, const token *at_tok, ir_buffer *b)
{
    const scoped_buf *old = find_buf(p, b->name);
    if (old && old->buf)
        error_at(p, tok_loc(p, at_tok), "buffer '%s' is already defined", b->name);
    scoped_buf s = {b->name, b};
    VEC_PUSH(p->bufs, p->nbufs, p->capbufs, s);
}

/* ---------------------------------------------------------------- types */

static bool parse_dtype(parser *p, ir_dtype *out)
{
    token *t = peek(p, 0);
    if (t->kind != T_IDENT) {
        syntax_error(p, "expected a dtype");
        return false;
    }
    next(p);
    if (!ir_dtype_parse(t->str, out)) {
        error_at(p, tok_loc(p, t), "unknown dtype '%s'", t->str);
        return false;
    }
    return true;
}

/* A let's type: DTYPE, or DTYPE 'x' LANES for a vector (f32x8). */
static bool parse_vtype(parser *p, ir_dtype *out, int *lanes)
{
    token *t = peek(p, 0);
    if (t->kind != T_IDENT) {
        syntax_error(p, "expected a dtype");
        return false;
    }
    next(p);
    if (!ir_vtype_parse(t->str, out, lanes)) {
        error_at(p, tok_loc(p, t), "unknown dtype '%s'", t->str);
        return false;
    }
    return true;
}

/* A positive extent: plain digits without suffix. */
static bool parse_extent(parser *p, int64_t *out)
{
    token *t = peek(p, 0);
    if (t->kind != T_NUMBER) {
        syntax_error(p, "expected an extent");
        return false;
    }
    next(p);
    const char *s = p->text + t->off;
    for (int i = 0; i < t->len; i++)
        if (!is_digit(s[i])) {
            error_at(p, tok_loc(p, t), "extent '%.*s' is not a positive integer", t->len, s);
            return false;
        }
    errno = 0;
    char digits[32];
    snprintf(digits, sizeof digits, "%.*s", t->len < 31 ? t->len : 31, s);
    long long v = strtoll(digits, NULL, 10);
    if (errno == ERANGE || t->len > 30 || v < 1) {
        error_at(p, tok_loc(p, t), "extent '%.*s' is not a positive integer", t->len, s);
        return false;
    }
    *out = v;
    return true;
}

/* DTYPE '[' [extent {',' extent}] ']' — returns false on any error. */
static bool parse_type(parser *p, ir_dtype *dt, int *ndim, int64_t **shape)
{
    bool ok = parse_dtype(p, dt);
    if (p->panic || !expect(p, '[', "expected '[' after the dtype"))
        return false;
    int64_t *dims = NULL;
    int n = 0, cap = 0;
    if (!at(p, ']')) {
        do {
            int64_t e = 1;
            ok = parse_extent(p, &e) && ok;
            if (p->panic)
                break;
            IR_PUSH(p->m->arena, dims, n, cap, e);
        } while (accept(p, ','));
    }
    if (p->panic || !expect(p, ']', "expected ']' after the shape"))
        return false;
    *ndim = n;
    *shape = dims;
    return ok;
}

/* ---------------------------------------------------------------- expressions */

static ir_expr *parse_expr(parser *p);

static ir_expr *new_expr(parser *p, ir_expr_kind k, ir_dtype t)
{
    ir_expr *e = ir_alloc(p->m->arena, sizeof *e);
    e->kind = k;
    e->dtype = t;
    return e;
}

/* Types a freshly assembled node by the shared rules; reports at `loc` and
 * returns NULL when they are broken.  NULL operands give NULL silently. */
static bool operands_present(const ir_expr *e)
{
    for (int i = 0; i < e->nargs; i++)
        if (!e->args[i])
            return false;
    switch (ir_expr_kind_class(e->kind)) {
    case 'b': case 'f': return e->a && e->b;
    case 'u': case 'k': return e->a != NULL;
    case 's': return e->a && e->b && e->c;
    case 'w': return e->kind == IR_LANES || (e->a && (e->kind != IR_RAMP || e->b));
    default: return true;
    }
}

static ir_expr *typed(parser *p, ir_expr *e, diag_loc loc)
{
    if (!operands_present(e))
        return NULL;
    char msg[256];
    ir_dtype t;
    int lanes;
    if (!ir_expr_check_node(e, &t, msg, sizeof msg) ||
        !ir_expr_check_lanes(e, &lanes, msg, sizeof msg)) {
        error_at(p, loc, "%s", msg);
        return NULL;
    }
    e->dtype = t;
    e->lanes = lanes > 1 ? lanes : 0;
    return e;
}

/* The parts of a number token: numeric text and suffix. */
static size_t numeric_part(const char *s, size_t n, bool *is_float)
{
    size_t i = 0;
    *is_float = false;
    while (i < n && is_digit(s[i]))
        i++;
    if (i < n && s[i] == '.') {
        *is_float = true;
        i++;
        while (i < n && is_digit(s[i]))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t x = i + 1;
        if (x < n && (s[x] == '+' || s[x] == '-'))
            x++;
        if (x < n && is_digit(s[x])) {
            *is_float = true;
            i = x;
            while (i < n && is_digit(s[i]))
                i++;
        }
    }
    return i;
}

/* Float suffixes: none is f64, `f` is f32, or a float dtype's name. */
static bool float_suffix_dtype(const char *suf, ir_dtype *t)
{
    if (!*suf) {
        *t = IR_F64;
        return true;
    }
    if (strcmp(suf, "f") == 0) {
        *t = IR_F32;
        return true;
    }
    return ir_dtype_parse(suf, t) && ir_dtype_is_float(*t);
}

static ir_expr *make_float(parser *p, double v, ir_dtype t, const token *tok)
{
    if (t == IR_F32) {
        float f = (float)v;
        if (isinf(f) && !isinf(v)) {
            error_at(p, tok_loc(p, tok), "floating constant is out of range for f32");
            return NULL;
        }
        v = f;
    }
    ir_expr *e = new_expr(p, IR_FLOAT, t);
    e->fval = v;
    return e;
}

/* inf, nan and their suffixed forms (inff, nanf16, ...). */
static bool special_float(const char *w, double *v, ir_dtype *t)
{
    if (strncmp(w, "inf", 3) == 0)
        *v = INFINITY;
    else if (strncmp(w, "nan", 3) == 0)
        *v = NAN;
    else
        return false;
    return float_suffix_dtype(w + 3, t);
}

/* A number token as a constant; `neg` when a '-' was written right before
 * it (so -9223372036854775808 is representable). */
static ir_expr *parse_number(parser *p, bool neg)
{
    token *t = next(p);
    const char *s = p->text + t->off;
    bool is_float;
    size_t nlen = numeric_part(s, (size_t)t->len, &is_float);
    char suffix[64];
    snprintf(suffix, sizeof suffix, "%.*s", (int)((size_t)t->len - nlen), s + nlen);
    char num[80];
    if (nlen > 70) {
        error_at(p, tok_loc(p, t), "numeric constant is too long");
        return NULL;
    }
    snprintf(num, sizeof num, "%s%.*s", neg ? "-" : "", (int)nlen, s);
    if (is_float) {
        ir_dtype dt;
        if (!float_suffix_dtype(suffix, &dt)) {
            error_at(p, tok_loc(p, t), "invalid suffix '%s' on floating constant", suffix);
            return NULL;
        }
        errno = 0;
        double v = strtod(num, NULL);
        if (errno == ERANGE && isinf(v)) {
            error_at(p, tok_loc(p, t), "floating constant is out of range");
            return NULL;
        }
        return make_float(p, v, dt, t);
    }
    ir_dtype dt = IR_I64;
    if (*suffix && (!ir_dtype_parse(suffix, &dt) || ir_dtype_is_float(dt))) {
        error_at(p, tok_loc(p, t), "invalid suffix '%s' on integer constant", suffix);
        return NULL;
    }
    errno = 0;
    long long v = strtoll(num, NULL, 10);
    if (errno == ERANGE) {
        error_at(p, tok_loc(p, t), "integer constant %s is out of range for i64", num);
        return NULL;
    }
    int64_t lo, hi;
    ir_dtype_int_range(dt, &lo, &hi);
    if (v < lo || v > hi) {
        error_at(p, tok_loc(p, t), "integer constant %s does not fit in %s", num,
                 ir_dtype_name(dt));
        return NULL;
    }
    ir_expr *e = new_expr(p, IR_INT, dt);
    e->ival = v;
    return e;
}

/* '(' expr {',' expr} ')' into an arena array; NULL entries for bad args. */
static int parse_call_args(parser *p, ir_expr ***out, int close, const char *msg)
{
    ir_expr **args = NULL;
    int n = 0, cap = 0;
    if (!at(p, close)) {
        do {
            ir_expr *a = parse_expr(p);
            if (p->panic)
                break;
            IR_PUSH(p->m->arena, args, n, cap, a);
        } while (accept(p, ','));
    }
    if (!p->panic)
        expect(p, close, msg);
    *out = args;
    return n;
}

static bool expect_open(parser *p, const char *what)
{
    char msg[96];
    snprintf(msg, sizeof msg, "expected '(' after '%s'", what);
    return expect(p, '(', msg);
}

static bool expect_comma(parser *p, const char *what)
{
    char msg[96];
    snprintf(msg, sizeof msg, "expected ',' in %s", what);
    return expect(p, ',', msg);
}

static bool expect_close(parser *p, const char *what)
{
    char msg[96];
    snprintf(msg, sizeof msg, "expected ')' after the arguments of %s", what);
    return expect(p, ')', msg);
}

/* An intrinsic call: NAME '(' args ')'.  Runtime ('r') intrinsics are only
 * allowed directly under `evaluate`. */
static ir_expr *parse_intrinsic(parser *p, ir_intrin fn, bool allow_runtime)
{
    token *t = next(p);
    char msg[96];
    snprintf(msg, sizeof msg, "expected ')' after the arguments of %s", t->str);
    next(p); /* '(' */
    ir_expr **args;
    int n = parse_call_args(p, &args, ')', msg);
    if (p->panic)
        return NULL;
    if (ir_intrin_class(fn) == 'r' && !allow_runtime) {
        error_at(p, tok_loc(p, t), "%s can only be called by an evaluate statement", t->str);
        return NULL;
    }
    ir_expr *e = new_expr(p, IR_CALL, IR_I32);
    e->fn = fn;
    e->args = args;
    e->nargs = n;
    return typed(p, e, tok_loc(p, t));
}

/* min(a, b), max, floordiv, floormod. */
static ir_expr *parse_func_binary(parser *p, ir_expr_kind k)
{
    token *t = next(p);
    next(p); /* '(' */
    ir_expr *e = new_expr(p, k, IR_I64);
    e->a = parse_expr(p);
    if (p->panic || !expect_comma(p, t->str))
        return NULL;
    e->b = parse_expr(p);
    if (p->panic || !expect_close(p, t->str))
        return NULL;
    return typed(p, e, tok_loc(p, t));
}

static ir_expr *parse_select(parser *p)
{
    token *t = next(p);
    if (!expect_open(p, "select"))
        return NULL;
    ir_expr *e = new_expr(p, IR_SELECT, IR_I64);
    e->c = parse_expr(p);
    if (p->panic || !expect_comma(p, "select"))
        return NULL;
    e->a = parse_expr(p);
    if (p->panic || !expect_comma(p, "select"))
        return NULL;
    e->b = parse_expr(p);
    if (p->panic || !expect_close(p, "select"))
        return NULL;
    return typed(p, e, tok_loc(p, t));
}

/* A lane count: an extent from 2 to IR_MAX_LANES. */
static bool parse_lanes(parser *p, int *out)
{
    token *t = peek(p, 0);
    int64_t n;
    if (!parse_extent(p, &n))
        return false;
    if (n < 2 || n > IR_MAX_LANES) {
        error_at(p, tok_loc(p, t), "a vector has 2 to %d lanes, not %lld", IR_MAX_LANES,
                 (long long)n);
        return false;
    }
    *out = (int)n;
    return true;
}

/* ramp(base, stride, LANES) and broadcast(value, LANES). */
static ir_expr *parse_vector(parser *p, ir_expr_kind k)
{
    token *t = next(p);
    next(p); /* '(' */
    ir_expr *e = new_expr(p, k, IR_I64);
    e->a = parse_expr(p);
    if (p->panic || !expect_comma(p, t->str))
        return NULL;
    if (k == IR_RAMP) {
        e->b = parse_expr(p);
        if (p->panic || !expect_comma(p, t->str))
            return NULL;
    }
    int lanes = 0;
    bool ok = parse_lanes(p, &lanes);
    if (p->panic || !expect_close(p, t->str) || !ok || !e->a || (k == IR_RAMP && !e->b))
        return NULL;
    e->lanes = lanes;
    return typed(p, e, tok_loc(p, t));
}

/* lanes(x0, ..., xL-1): a vector of scalars. */
static ir_expr *parse_lanes_expr(parser *p)
{
    token *t = next(p);
    next(p); /* '(' */
    ir_expr **args;
    int n = parse_call_args(p, &args, ')', "expected ')' after the lanes");
    if (p->panic)
        return NULL;
    ir_expr *e = new_expr(p, IR_LANES, IR_I64);
    e->args = args;
    e->nargs = n;
    e->lanes = n;
    return typed(p, e, tok_loc(p, t));
}

/* cast<DTYPE>(expr); built directly (not with ir_cast) so that even a cast
 * to the operand's own dtype survives a round trip. */
static ir_expr *parse_cast(parser *p)
{
    token *t = next(p);
    if (!expect(p, '<', "expected '<' after 'cast'"))
        return NULL;
    ir_dtype dt = IR_I64;
    bool ok = parse_dtype(p, &dt);
    if (p->panic || !expect(p, '>', "expected '>' after the dtype of cast") ||
        !expect_open(p, "cast<...>"))
        return NULL;
    ir_expr *e = new_expr(p, IR_CAST, dt);
    e->a = parse_expr(p);
    if (p->panic || !expect_close(p, "cast"))
        return NULL;
    return ok ? typed(p, e, tok_loc(p, t)) : NULL;
}

/* NAME: a variable, or NAME '[' indices ']': a load. */
static ir_expr *parse_name_expr(parser *p)
{
    token *t = next(p);
    if (accept(p, '[')) {
        ir_expr **idx;
        int n = parse_call_args(p, &idx, ']', "expected ']' after indices");
        if (p->panic)
            return NULL;
        ir_buffer *b = use_buf(p, t);
        if (!b)
            return NULL;
        ir_expr *e = new_expr(p, IR_LOAD, b->dtype);
        e->buf = b;
        e->args = idx;
        e->nargs = n;
        return typed(p, e, tok_loc(p, t));
    }
    const scoped_var *sv = find_var(p, t->str);
    if (sv)
        return sv->var ? ir_varref(p->m, sv->var) : NULL;
    if (t->bad)
        return NULL;
    if (find_buf(p, t->str))
        error_at(p, tok_loc(p, t), "buffer '%s' is used without indices (write %s[...])",
                 t->str, t->str);
    else
        error_at(p, tok_loc(p, t), "undefined variable '%s'", t->str);
    return NULL;
}

static ir_expr *parse_primary(parser *p)
{
    token *t = peek(p, 0);
    if (t->kind == T_NUMBER)
        return parse_number(p, false);
    if (t->kind == T_STRING)
        return parse_name_expr(p);
    if (t->kind == '(') {
        next(p);
        ir_expr *e = parse_expr(p);
        if (!p->panic)
            expect(p, ')', "expected ')'");
        return e;
    }
    if (t->kind != T_IDENT) {
        syntax_error(p, "expected an expression");
        return NULL;
    }
    const char *w = t->str;
    bool call = peek(p, 1)->kind == '(';
    double fv;
    ir_dtype ft;
    if (strcmp(w, "true") == 0 || strcmp(w, "false") == 0) {
        next(p);
        return ir_int_typed(p->m, w[0] == 't', IR_BOOL);
    }
    if (special_float(w, &fv, &ft)) {
        next(p);
        return make_float(p, fv, ft, t);
    }
    if (strcmp(w, "select") == 0)
        return parse_select(p);
    if (strcmp(w, "cast") == 0)
        return parse_cast(p);
    static const ir_expr_kind fkinds[] = {IR_MIN, IR_MAX, IR_FLOORDIV, IR_FLOORMOD};
    for (size_t i = 0; call && i < sizeof fkinds / sizeof *fkinds; i++)
        if (strcmp(w, ir_expr_kind_name(fkinds[i])) == 0)
            return parse_func_binary(p, fkinds[i]);
    if (call && (strcmp(w, "ramp") == 0 || strcmp(w, "broadcast") == 0))
        return parse_vector(p, w[0] == 'r' ? IR_RAMP : IR_BROADCAST);
    if (call && strcmp(w, "lanes") == 0)
        return parse_lanes_expr(p);
    ir_intrin fn;
    if (call && ir_intrin_parse(w, &fn))
        return parse_intrinsic(p, fn, false);
    if (call) {
        next(p);
        next(p);
        ir_expr **args;
        parse_call_args(p, &args, ')', "expected ')' after the arguments");
        if (!p->panic)
            error_at(p, tok_loc(p, t), "unknown intrinsic '%s'", w);
        return NULL;
    }
    return parse_name_expr(p);
}

/* A '-' directly before a number (or inf): the constant's sign, so `-3` is
 * INT -3 while `-(3)` is NEG.  Returns false (nothing read) otherwise. */
static bool signed_constant(parser *p, ir_expr **out)
{
    token *t = peek(p, 0), *n = peek(p, 1);
    if (t->kind != '-' || n->off != t->off + 1)
        return false;
    double fv;
    ir_dtype ft;
    if (n->kind == T_NUMBER) {
        next(p);
        *out = parse_number(p, true);
        return true;
    }
    if (n->kind == T_IDENT && special_float(n->str, &fv, &ft)) {
        next(p);
        next(p);
        *out = make_float(p, -fv, ft, n);
        return true;
    }
    return false;
}

/* unary = ('-' | '!') unary | primary.  A run of prefix operators is read
 * in a loop, not by recursion: each adds a level to the tree (counted
 * against PARSE_MAX_TREE_DEPTH), not to the parser's stack. */
static ir_expr *parse_unary(parser *p)
{
    if (++p->depth > PARSE_MAX_DEPTH) {
        syntax_error(p, "expression is nested too deeply");
        p->depth--;
        return NULL;
    }
    int base = p->tree_depth++;
    token *ops[64];
    token **stack = ops;
    int nops = 0, cap = (int)(sizeof ops / sizeof *ops);
    ir_expr *e = NULL;
    while ((peek(p, 0)->kind == '-' || peek(p, 0)->kind == '!') && !signed_constant(p, &e)) {
        if (++p->tree_depth > PARSE_MAX_TREE_DEPTH) {
            error_at(p, tok_loc(p, peek(p, 0)), "expression nested more than %d levels deep",
                     PARSE_MAX_TREE_DEPTH);
            p->panic = true;
            p->err_line = peek(p, 0)->line;
            break;
        }
        if (nops == cap) {
            token **grown = ir_alloc(p->m->arena, sizeof *grown * (size_t)(2 * cap));
            memcpy(grown, stack, sizeof *grown * (size_t)nops);
            stack = grown;
            cap *= 2;
        }
        stack[nops++] = next(p);
    }
    if (!e && !p->panic)
        e = parse_primary(p);
    while (nops > 0 && e && !p->panic) {
        token *t = stack[--nops];
        ir_expr *u = new_expr(p, t->kind == '-' ? IR_NEG : IR_NOT, IR_I64);
        u->a = e;
        e = typed(p, u, tok_loc(p, t));
    }
    p->depth--;
    p->tree_depth = base;
    return p->panic ? NULL : e;
}

/* Binary operators by C precedence, all left-associative. */
typedef struct binop {
    int tok;
    ir_expr_kind kind;
    int prec;
} binop;

static const binop binops[] = {
    {T_OR, IR_OR, 1},  {T_AND, IR_AND, 2}, {T_EQ, IR_EQ, 3}, {T_NE, IR_NE, 3},
    {'<', IR_LT, 4},   {T_LE, IR_LE, 4},   {'>', IR_GT, 4},  {T_GE, IR_GE, 4},
    {'+', IR_ADD, 5},  {'-', IR_SUB, 5},   {'*', IR_MUL, 6}, {'/', IR_DIV, 6},
};

static const binop *find_binop(int tok)
{
    for (size_t i = 0; i < sizeof binops / sizeof *binops; i++)
        if (binops[i].tok == tok)
            return &binops[i];
    return NULL;
}

/* Each operator of a chain adds a level to the tree above the operands
 * parsed after it: p->tree_depth counts them (and the recursion's levels),
 * so no tree deeper than PARSE_MAX_TREE_DEPTH is built. */
static ir_expr *parse_binary(parser *p, int min_prec)
{
    int chain = 0;
    ir_expr *lhs = parse_unary(p);
    for (;;) {
        if (p->panic)
            break;
        token *t = peek(p, 0);
        const binop *op = find_binop(t->kind);
        if (!op || op->prec < min_prec)
            break;
        if (++p->tree_depth > PARSE_MAX_TREE_DEPTH) {
            chain++;
            error_at(p, tok_loc(p, t), "expression nested more than %d levels deep; split it "
                     "with let or a temporary buffer", PARSE_MAX_TREE_DEPTH);
            p->panic = true;   /* recovery skips to the next line */
            p->err_line = t->line;
            break;
        }
        chain++;
        next(p);
        ir_expr *rhs = parse_binary(p, op->prec + 1);
        if (p->panic)
            break;
        ir_expr *e = new_expr(p, op->kind, IR_I64);
        e->a = lhs;
        e->b = rhs;
        lhs = typed(p, e, tok_loc(p, t));
    }
    p->tree_depth -= chain;
    return p->panic ? NULL : lhs;
}

static ir_expr *parse_expr(parser *p) { return parse_binary(p, 1); }

/* An expression that must have dtype `want`; `what` names it in the error. */
static ir_expr *parse_typed_expr(parser *p, ir_dtype want, const char *what)
{
    token *t = peek(p, 0);
    ir_expr *e = parse_expr(p);
    if (e && e->dtype != want) {
        error_at(p, tok_loc(p, t), "%s is %s, not %s", what, ir_dtype_name(e->dtype),
                 ir_dtype_name(want));
        return NULL;
    }
    return e;
}

/* ---------------------------------------------------------------- statements */

static ir_stmt *parse_stmt(parser *p);

/* Statements up to a '}' (not consumed): one statement is itself, any
 * other number a SEQ. */
static ir_stmt *parse_stmt_list(parser *p)
{
    ir_stmt *seq = ir_seq_new(p->m);
    for (;;) {
        if (at(p, '}'))
            break;
        if (at(p, T_EOF)) {
            syntax_error(p, "expected '}'");
            break;
        }
        int before = p->cur;
        ir_stmt *s = parse_stmt(p);
        if (s)
            ir_seq_append(p->m, seq, s);
        recover(p);
        if (p->cur == before)
            next(p); /* always make progress */
    }
    return seq->nbody == 1 ? seq->body[0] : seq;
}

/* '{' statements '}' */
static ir_stmt *parse_body(parser *p)
{
    if (!expect(p, '{', "expected '{'"))
        return NULL;
    ir_stmt *s = parse_stmt_list(p);
    if (p->panic)
        return NULL;
    expect(p, '}', "expected '}'");
    return s;
}

static bool parse_for_kind(parser *p, ir_for_kind *k)
{
    *k = IR_FOR_SERIAL;
    if (!at(p, T_IDENT))
        return true;
    token *t = next(p);
    for (int i = 0; i < IR_NFOR_KINDS; i++)
        if (strcmp(t->str, ir_for_kind_name((ir_for_kind)i)) == 0) {
            *k = (ir_for_kind)i;
            return true;
        }
    error_at(p, tok_loc(p, t), "unknown loop kind '%s'", t->str);
    return false;
}

/* for NAME [":" DTYPE] in LO ".." HI ["step" STEP] [KIND] body */
static ir_stmt *parse_for(parser *p)
{
    next(p);
    token *vt = peek(p, 0);
    const char *name = parse_name(p, "expected a loop variable after 'for'");
    if (!name)
        return NULL;
    ir_dtype dt = IR_I64;
    bool ok = true;
    if (accept(p, ':'))
        ok = parse_dtype(p, &dt);
    if (p->panic)
        return NULL;
    if (!at_word(p, "in")) {
        syntax_error(p, "expected 'in' after the loop variable");
        return NULL;
    }
    next(p);
    char what[160];
    snprintf(what, sizeof what, "the lower bound of loop '%s'", name);
    ir_expr *lo = parse_typed_expr(p, dt, what);
    if (p->panic || !expect(p, T_DOTDOT, "expected '..' between the loop bounds"))
        return NULL;
    snprintf(what, sizeof what, "the upper bound of loop '%s'", name);
    ir_expr *hi = parse_typed_expr(p, dt, what);
    if (p->panic)
        return NULL;
    int64_t step = 1;
    if (at_word(p, "step")) {
        next(p);
        ok = parse_extent(p, &step) && ok;
        if (p->panic)
            return NULL;
    }
    ir_for_kind kind;
    ok = parse_for_kind(p, &kind) && ok;
    int mark = p->nvars;
    ir_var *v = declare_var(p, vt, name, dt);
    ir_stmt *body = parse_body(p);
    p->nvars = mark;
    if (!ok || !lo || !hi || p->panic)
        return NULL;
    ir_stmt *s = ir_for(p->m, v, lo, hi, kind, body);
    s->step = step > 1 ? step : 0;
    return s;
}

/* A buffer list: '(' [NAME {',' NAME}] ')' after `reads` or `writes`. */
static bool parse_buffer_list(parser *p, const char *what, ir_buffer ***out, int *n)
{
    token *t = peek(p, 0);
    if (!is_word_tok(t, what)) {
        char msg[64];
        snprintf(msg, sizeof msg, "expected '%s(...)' in the block header", what);
        syntax_error(p, msg);
        return false;
    }
    next(p);
    if (!expect_open(p, what))
        return false;
    ir_buffer **bufs = NULL;
    int cap = 0;
    bool ok = true;
    *n = 0;
    if (!at(p, ')')) {
        do {
            token *bt = peek(p, 0);
            const char *name = parse_name(p, "expected a buffer name");
            if (!name)
                return false;
            ir_buffer *b = use_buf(p, bt);
            if (!b) {
                ok = false;
                continue;
            }
            IR_PUSH(p->m->arena, bufs, *n, cap, b);
        } while (accept(p, ','));
    }
    *out = bufs;
    return expect(p, ')', "expected ')' after the buffer list") && ok;
}

static bool parse_iter_kind(parser *p, ir_iter_kind *k)
{
    token *t = peek(p, 0);
    if (t->kind != T_IDENT) {
        syntax_error(p, "expected 'spatial' or 'reduce'");
        return false;
    }
    next(p);
    for (int i = 0; i < IR_NITER_KINDS; i++)
        if (strcmp(t->str, ir_iter_kind_name((ir_iter_kind)i)) == 0) {
            *k = (ir_iter_kind)i;
            return true;
        }
    error_at(p, tok_loc(p, t), "unknown iteration kind '%s' (expected 'spatial' or 'reduce')",
             t->str);
    return false;
}

/* NAME ':' [DTYPE] KIND '[' EXTENT ']' '=' BINDING; the variable itself is
 * declared by the caller once every binding is read. */
static bool parse_itervar(parser *p, ir_itervar *iv, const token **name_tok, const char **name)
{
    *name_tok = peek(p, 0);
    *name = parse_name(p, "expected an iteration variable");
    if (!*name || !expect(p, ':', "expected ':' after the iteration variable"))
        return false;
    ir_dtype dt = IR_I64;
    bool ok = true;
    token *t = peek(p, 0);
    ir_dtype probe;
    if (t->kind == T_IDENT && ir_dtype_parse(t->str, &probe))
        ok = parse_dtype(p, &dt);
    ok = parse_iter_kind(p, &iv->kind) && ok;
    if (p->panic || !expect(p, '[', "expected '[' before the extent"))
        return false;
    ok = parse_extent(p, &iv->extent) && ok;
    if (p->panic || !expect(p, ']', "expected ']' after the extent") ||
        !expect(p, '=', "expected '=' before the binding"))
        return false;
    char what[160];
    snprintf(what, sizeof what, "the binding of '%s'", *name);
    iv->binding = parse_typed_expr(p, dt, what);
    iv->var = ir_var_new(p->m, *name, dt);
    return ok && iv->binding && !p->panic;
}

/* block NAME '(' itervars ')' reads(...) writes(...) '{' [init body] stmts '}' */
static ir_stmt *parse_block(parser *p)
{
    next(p);
    const char *name = parse_name(p, "expected a block name");
    if (!name || !expect(p, '(', "expected '(' after the block name"))
        return NULL;
    ir_itervar *iters = NULL;
    const token **toks = NULL;
    int n = 0, cap = 0, tcap = 0, ntoks = 0;
    bool ok = true;
    if (!at(p, ')')) {
        do {
            ir_itervar iv = {0};
            const token *nt;
            const char *iname;
            ok = parse_itervar(p, &iv, &nt, &iname) && ok;
            if (p->panic)
                break;
            IR_PUSH(p->m->arena, iters, n, cap, iv);
            IR_PUSH(p->m->arena, toks, ntoks, tcap, nt);
        } while (accept(p, ','));
    }
    if (p->panic || !expect(p, ')', "expected ')' after the iteration variables"))
        return NULL;
    ir_buffer **reads = NULL, **writes = NULL;
    int nreads = 0, nwrites = 0;
    ok = parse_buffer_list(p, "reads", &reads, &nreads) && ok;
    if (p->panic)
        return NULL;
    ok = parse_buffer_list(p, "writes", &writes, &nwrites) && ok;
    if (p->panic || !expect(p, '{', "expected '{'"))
        return NULL;
    int mark = p->nvars;
    for (int i = 0; i < n; i++) {
        const scoped_var *old = find_var(p, iters[i].var->name);
        if (old && old->var)
            error_at(p, tok_loc(p, toks[i]), "variable '%s' is already defined",
                     iters[i].var->name);
        scoped_var s = {iters[i].var->name, iters[i].var};
        VEC_PUSH(p->vars, p->nvars, p->capvars, s);
    }
    ir_stmt *init = NULL;
    if (at_word(p, "init") && peek(p, 1)->kind == '{') {
        next(p);
        init = parse_body(p);
        recover(p);
    }
    ir_stmt *body = parse_stmt_list(p);
    p->nvars = mark;
    if (p->panic || !expect(p, '}', "expected '}'") || !ok)
        return NULL;
    ir_stmt *s = ir_block(p->m, name, iters, n, init, body);
    s->reads = reads;
    s->nreads = nreads;
    s->writes = writes;
    s->nwrites = nwrites;
    return s;
}

/* alloc NAME ':' TYPE [SCOPE] body */
static ir_stmt *parse_alloc(parser *p)
{
    next(p);
    token *nt = peek(p, 0);
    const char *name = parse_name(p, "expected a buffer name after 'alloc'");
    if (!name || !expect(p, ':', "expected ':' after the buffer name"))
        return NULL;
    ir_dtype dt;
    int ndim;
    int64_t *shape;
    bool ok = parse_type(p, &dt, &ndim, &shape);
    if (p->panic)
        return NULL;
    ir_scope scope = IR_SCOPE_GLOBAL;
    if (at(p, T_IDENT) && strcmp(peek(p, 0)->str, "filled") != 0) {
        token *t = next(p);
        bool found = false;
        for (int i = 0; i < IR_NSCOPES; i++)
            if (strcmp(t->str, ir_scope_name((ir_scope)i)) == 0) {
                scope = (ir_scope)i;
                found = true;
            }
        if (!found) {
            error_at(p, tok_loc(p, t), "unknown storage scope '%s'", t->str);
            ok = false;
        }
    }
    bool filled = false;
    if (at(p, T_IDENT) && strcmp(peek(p, 0)->str, "filled") == 0) {
        next(p);
        filled = true;
    }
    ir_buffer *b = NULL;
    int mark = p->nbufs;
    if (ok) {
        b = ir_buffer_new(p->m, name, dt, ndim, shape, IR_BUF_LOCAL);
        b->scope = scope;
        b->filled = filled;
        declare_buf(p, nt, b);
    } else {
        poison_buf(p, name);
    }
    ir_stmt *body = parse_body(p);
    p->nbufs = mark;
    if (!ok || p->panic)
        return NULL;
    return ir_alloc_stmt(p->m, b, body);
}

/* let NAME ':' DTYPE '=' expr body */
static ir_stmt *parse_let(parser *p)
{
    next(p);
    token *nt = peek(p, 0);
    const char *name = parse_name(p, "expected a variable name after 'let'");
    if (!name || !expect(p, ':', "expected ':' after the variable name"))
        return NULL;
    ir_dtype dt = IR_I64;
    int lanes = 1;
    bool ok = parse_vtype(p, &dt, &lanes);
    if (p->panic || !expect(p, '=', "expected '=' after the dtype"))
        return NULL;
    char what[160];
    snprintf(what, sizeof what, "the value of '%s'", name);
    token *vtok = peek(p, 0);
    ir_expr *value = ok ? parse_typed_expr(p, dt, what) : parse_expr(p);
    if (p->panic)
        return NULL;
    if (ok && value && ir_expr_lanes(value) != lanes) {
        error_at(p, tok_loc(p, vtok), "%s has %d lane%s, not %d", what, ir_expr_lanes(value),
                 ir_expr_lanes(value) == 1 ? "" : "s", lanes);
        ok = false;
    }
    int mark = p->nvars;
    ir_var *v = declare_var(p, nt, name, dt);
    v->lanes = lanes > 1 ? lanes : 0;
    ir_stmt *body = parse_body(p);
    p->nvars = mark;
    if (!ok || !value || p->panic)
        return NULL;
    return ir_let(p->m, v, value, body);
}

/* if expr body [else body] */
static ir_stmt *parse_if(parser *p)
{
    next(p);
    ir_expr *cond = parse_typed_expr(p, IR_BOOL, "the condition of 'if'");
    if (p->panic)
        return NULL;
    ir_stmt *then = parse_body(p);
    if (p->panic)
        return NULL;
    ir_stmt *orelse = NULL;
    if (at_word(p, "else")) {
        next(p);
        orelse = parse_body(p);
        if (p->panic)
            return NULL;
    }
    return cond ? ir_if(p->m, cond, then, orelse) : NULL;
}

/* evaluate CALL, where CALL is a runtime intrinsic's call. */
static ir_stmt *parse_eval(parser *p)
{
    next(p);
    token *t = peek(p, 0);
    ir_intrin fn;
    ir_expr *e;
    if (t->kind == T_IDENT && peek(p, 1)->kind == '(' && ir_intrin_parse(t->str, &fn) &&
        ir_intrin_class(fn) == 'r') {
        e = parse_intrinsic(p, fn, true);
    } else {
        e = parse_expr(p);
        if (e) {
            error_at(p, tok_loc(p, t),
                     "evaluate needs a call of a runtime intrinsic such as tec_prof_enter");
            return NULL;
        }
    }
    return e ? ir_eval(p->m, e) : NULL;
}

/* assert expr ',' STRING */
static ir_stmt *parse_assert(parser *p)
{
    next(p);
    ir_expr *cond = parse_typed_expr(p, IR_BOOL, "the condition of 'assert'");
    if (p->panic || !expect(p, ',', "expected ',' before the assert message"))
        return NULL;
    if (!at(p, T_STRING)) {
        syntax_error(p, "expected the assert message as a string");
        return NULL;
    }
    const char *msg = next(p)->str;
    return cond ? ir_assert(p->m, cond, msg) : NULL;
}

/* NAME '[' indices ']' '=' expr */
static ir_stmt *parse_store(parser *p)
{
    token *t = next(p);
    if (!expect(p, '[', "expected '[' after the buffer name"))
        return NULL;
    ir_expr **idx;
    int n = parse_call_args(p, &idx, ']', "expected ']' after indices");
    if (p->panic || !expect(p, '=', "expected '=' after the store target"))
        return NULL;
    token *vt = peek(p, 0);
    ir_expr *value = parse_expr(p);
    if (p->panic)
        return NULL;
    ir_buffer *b = use_buf(p, t);
    if (!b)
        return NULL;
    /* The index rules are those of a load of the same buffer. */
    ir_expr probe = {.kind = IR_LOAD, .dtype = b->dtype, .buf = b, .args = idx, .nargs = n};
    if (!typed(p, &probe, tok_loc(p, t)) || !value)
        return NULL;
    if (value->dtype != b->dtype) {
        error_at(p, tok_loc(p, vt), "stored value is %s, but %s is %s", ir_dtype_name(value->dtype),
                 b->name, ir_dtype_name(b->dtype));
        return NULL;
    }
    return ir_store(p->m, b, idx, n, value);
}

/* 'prefetch' NAME '[' indices ']': the element a load of it would read
 * (the same index rules), though it may lie outside the buffer (doc/ir.md). */
static ir_stmt *parse_prefetch(parser *p)
{
    next(p);
    if (!at_name(p) || peek(p, 1)->kind != '[') {
        syntax_error(p, "expected a buffer element after 'prefetch'");
        return NULL;
    }
    ir_expr *e = parse_name_expr(p);
    return e ? ir_prefetch(p->m, e->buf, e->args, e->nargs) : NULL;
}

static ir_stmt *parse_stmt(parser *p)
{
    token *t = peek(p, 0);
    if (++p->depth > PARSE_MAX_DEPTH) {
        syntax_error(p, "statements are nested too deeply");
        p->depth--;
        return NULL;
    }
    ir_stmt *s = NULL;
    if (is_word_tok(t, "for"))
        s = parse_for(p);
    else if (is_word_tok(t, "block"))
        s = parse_block(p);
    else if (is_word_tok(t, "alloc"))
        s = parse_alloc(p);
    else if (is_word_tok(t, "let"))
        s = parse_let(p);
    else if (is_word_tok(t, "if"))
        s = parse_if(p);
    else if (is_word_tok(t, "evaluate"))
        s = parse_eval(p);
    else if (is_word_tok(t, "assert"))
        s = parse_assert(p);
    else if (is_word_tok(t, "prefetch") && peek(p, 1)->kind != '[')   /* not a store to a buffer 'prefetch' */
        s = parse_prefetch(p);
    else if (at_name(p) && peek(p, 1)->kind == '[')
        s = parse_store(p);
    else
        syntax_error(p, "expected a statement");
    p->depth--;
    return s;
}

/* ---------------------------------------------------------------- functions */

/* attrs '(' [KEY '=' STRING {',' ...}] ')' */
static void parse_attrs(parser *p, ir_func *f)
{
    next(p);
    if (!expect_open(p, "attrs") || accept(p, ')'))
        return;
    do {
        token *kt = peek(p, 0);
        const char *key = parse_name(p, "expected an attribute name");
        if (!key || !expect(p, '=', "expected '=' after the attribute name"))
            return;
        if (!at(p, T_STRING)) {
            syntax_error(p, "expected the attribute value as a string");
            return;
        }
        const char *value = next(p)->str;
        if (ir_func_attr(f, key))
            error_at(p, tok_loc(p, kt), "duplicate attribute '%s'", key);
        ir_func_set_attr(p->m, f, key, value);
    } while (accept(p, ','));
    expect(p, ')', "expected ')' after the attributes");
}

/* func @NAME '(' [NAME ':' TYPE {',' ...}] ')' [attrs(...)] body */
static void parse_func(parser *p)
{
    next(p);
    token *nt = peek(p, 0);
    if (nt->kind != T_FUNC) {
        syntax_error(p, "expected a function name such as @main after 'func'");
        return;
    }
    next(p);
    if (ir_module_find_func(p->m, nt->str))
        error_at(p, tok_loc(p, nt), "function @%s is already defined", nt->str);
    ir_func *f = ir_func_new(p->m, nt->str);
    p->nvars = 0;
    p->nbufs = 0;
    int errors = p->nerrors;
    if (expect(p, '(', "expected '(' after the function name") && !at(p, ')')) {
        do {
            token *pt = peek(p, 0);
            const char *name = parse_name(p, "expected a parameter name");
            if (!name || !expect(p, ':', "expected ':' after the parameter name"))
                break;
            ir_dtype dt;
            int ndim;
            int64_t *shape;
            bool ok = parse_type(p, &dt, &ndim, &shape);
            if (p->panic)
                break;
            if (ok) {
                ir_buffer *b = ir_buffer_new(p->m, name, dt, ndim, shape, IR_BUF_ARG);
                declare_buf(p, pt, b);
                ir_func_add_param(p->m, f, b);
            } else {
                poison_buf(p, name);
            }
        } while (accept(p, ','));
    }
    if (!p->panic)
        expect(p, ')', "expected ')' after the parameters");
    /* Calls of a function whose parameters are in doubt are not checked. */
    if (p->nerrors != errors || p->panic)
        VEC_PUSH(p->bad_funcs, p->nbad_funcs, p->capbad_funcs, f);
    if (p->panic)
        return;
    if (at_word(p, "attrs"))
        parse_attrs(p, f);
    if (p->panic)
        return;
    f->body = parse_body(p);
}

/* ---------------------------------------------------------------- graph */

/* A bound of an init range: ['-'] number, inf or nan. */
static bool parse_init_bound(parser *p, double *v)
{
    bool neg = accept(p, '-');
    token *t = peek(p, 0);
    ir_dtype ft;
    if (t->kind == T_IDENT && special_float(t->str, v, &ft)) {
        next(p);
    } else if (t->kind == T_NUMBER) {
        ir_expr *e = parse_number(p, false);
        if (!e)
            return false;
        *v = e->kind == IR_INT ? (double)e->ival : e->fval;
    } else {
        syntax_error(p, "expected a number in init(...)");
        return false;
    }
    if (neg)
        *v = -*v;
    return true;
}

/* A byte count or offset of the memory plan: plain digits, >= 0. */
static bool parse_bytes(parser *p, const char *what, int64_t *out)
{
    token *t = peek(p, 0);
    if (t->kind != T_NUMBER) {
        char msg[96];
        snprintf(msg, sizeof msg, "expected %s", what);
        syntax_error(p, msg);
        return false;
    }
    next(p);
    const char *s = p->text + t->off;
    bool ok = t->len <= 19;
    for (int i = 0; i < t->len && ok; i++)
        ok = is_digit(s[i]);
    char digits[32];
    snprintf(digits, sizeof digits, "%.*s", t->len < 31 ? t->len : 31, s);
    errno = 0;
    long long v = ok ? strtoll(digits, NULL, 10) : -1;
    if (!ok || errno == ERANGE || v < 0) {
        error_at(p, tok_loc(p, t), "%s '%.*s' is not a non-negative integer", what, t->len, s);
        return false;
    }
    *out = v;
    return true;
}

/* arena BYTES: the size of the graph's memory arena. */
static void parse_graph_arena(parser *p)
{
    token *at = next(p);
    int64_t n;
    if (!parse_bytes(p, "an arena size in bytes", &n))
        return;
    if (p->seen_arena) {
        error_at(p, tok_loc(p, at), "the graph already declares its arena");
        return;
    }
    p->seen_arena = true;
    p->m->graph.has_arena = true;
    p->m->graph.arena_bytes = n;
}

static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The graph buffer called name, or NULL. */
static ir_buffer *find_graph_buf(const parser *p, const char *name)
{
    if (!p->capgbufs)
        return NULL;
    for (size_t i = name_hash(name) & (p->capgbufs - 1);; i = (i + 1) & (p->capgbufs - 1)) {
        ir_buffer *b = p->gbufs[i];
        if (!b || strcmp(b->name, name) == 0)
            return b;
    }
}

static void index_graph_buf(parser *p, ir_buffer *b)
{
    if (2 * (p->ngbufs + 1) > p->capgbufs) {
        size_t cap = p->capgbufs ? 2 * p->capgbufs : 64;
        ir_buffer **old = p->gbufs;
        size_t oldcap = p->capgbufs;
        p->gbufs = xrealloc(NULL, sizeof *p->gbufs * cap);
        memset(p->gbufs, 0, sizeof *p->gbufs * cap);
        p->capgbufs = cap;
        p->ngbufs = 0;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i])
                index_graph_buf(p, old[i]);
        free(old);
    }
    size_t i = name_hash(b->name) & (p->capgbufs - 1);
    while (p->gbufs[i])
        i = (i + 1) & (p->capgbufs - 1);
    p->gbufs[i] = b;
    p->ngbufs++;
}

/* ROLE NAME ':' TYPE [state] [init '(' LO ',' HI ')'] [arena '(' OFFSET ')'] */
static void parse_graph_buffer(parser *p, ir_buf_role role)
{
    next(p);
    token *nt = peek(p, 0);
    const char *name = parse_name(p, "expected a buffer name");
    if (!name || !expect(p, ':', "expected ':' after the buffer name"))
        return;
    ir_dtype dt;
    int ndim;
    int64_t *shape;
    bool ok = parse_type(p, &dt, &ndim, &shape);
    if (p->panic)
        return;
    bool state = false;
    if (at_word(p, "state")) {
        if (role != IR_BUF_PARAM)
            error_at(p, tok_loc(p, peek(p, 0)), "only a param can be state, not %s '%s'",
                     ir_buf_role_name(role), name);
        next(p);
        state = true;
    }
    double lo = 0, hi = 0;
    bool has_init = false;
    if (at_word(p, "init")) {
        next(p);
        if (!expect_open(p, "init") || !parse_init_bound(p, &lo) ||
            !expect(p, ',', "expected ',' between the bounds of init") ||
            !parse_init_bound(p, &hi) || !expect(p, ')', "expected ')' after the init range"))
            return;
        has_init = true;
    }
    int64_t offset = 0;
    bool in_arena = false;
    if (at_word(p, "arena")) {
        token *at = next(p);
        if (!expect_open(p, "arena") || !parse_bytes(p, "an arena offset", &offset) ||
            !expect(p, ')', "expected ')' after the arena offset"))
            return;
        if (role != IR_BUF_TEMP)
            error_at(p, tok_loc(p, at), "only a temp can live in the arena, not %s '%s'",
                     ir_buf_role_name(role), name);
        in_arena = role == IR_BUF_TEMP;
    }
    if (!ok) {
        VEC_PUSH(p->bad_graph_bufs, p->nbad_graph_bufs, p->capbad_graph_bufs, name);
        return;
    }
    if (find_graph_buf(p, name)) {
        error_at(p, tok_loc(p, nt), "graph buffer '%s' is already defined", name);
        return;
    }
    ir_buffer *b = ir_buffer_new(p->m, name, dt, ndim, shape, role);
    b->state = state && role == IR_BUF_PARAM;
    b->has_init = has_init;
    b->init_lo = lo;
    b->init_hi = hi;
    b->in_arena = in_arena;
    b->arena_offset = offset;
    ir_graph_add_buffer(p->m, b);
    index_graph_buf(p, b);
}

static bool is_bad_graph_buf(const parser *p, const char *name)
{
    for (int i = 0; i < p->nbad_graph_bufs; i++)
        if (strcmp(p->bad_graph_bufs[i], name) == 0)
            return true;
    return false;
}

/* call @NAME '(' [NAME {',' NAME}] ')'; the function is resolved later. */
/* call @f(a, b), or load @f(a, b) */
static void parse_graph_call(parser *p)
{
    token *kt = next(p);
    token *ft = peek(p, 0);
    if (ft->kind != T_FUNC) {
        syntax_error(p, is_word_tok(kt, "load") ? "expected a function name such as @pack after 'load'"
                                                : "expected a function name such as @main after 'call'");
        return;
    }
    next(p);
    if (!expect(p, '(', "expected '(' after the function name"))
        return;
    pending_call c = {ft->str, tok_loc(p, ft), NULL, NULL, 0, is_word_tok(kt, "load")};
    int cap = 0, lcap = 0, nlocs = 0;
    bool ok = true;
    if (!at(p, ')')) {
        do {
            token *bt = peek(p, 0);
            const char *name = parse_name(p, "expected a buffer name");
            if (!name)
                return;
            ir_buffer *b = find_graph_buf(p, name);
            if (!b && !bt->bad && !is_bad_graph_buf(p, name))
                error_at(p, tok_loc(p, bt), "undefined graph buffer '%s'", name);
            ok = ok && b;
            IR_PUSH(p->m->arena, c.args, c.nargs, cap, b);
            IR_PUSH(p->m->arena, c.arg_locs, nlocs, lcap, tok_loc(p, bt));
        } while (accept(p, ','));
    }
    if (expect(p, ')', "expected ')' after the call's arguments") && ok)
        VEC_PUSH(p->calls, p->ncalls, p->capcalls, c);
}

static void parse_graph(parser *p)
{
    token *gt = next(p);
    if (p->seen_graph)
        error_at(p, tok_loc(p, gt), "the module already has a graph section");
    p->seen_graph = true;
    if (!expect(p, '{', "expected '{' after 'graph'"))
        return;
    for (;;) {
        if (accept(p, '}'))
            return;
        if (at(p, T_EOF)) {
            syntax_error(p, "expected '}'");
            return;
        }
        int before = p->cur;
        token *t = peek(p, 0);
        bool done = false;
        for (int r = 0; r < IR_NBUF_ROLES && !done; r++)
            if (is_word_tok(t, ir_buf_role_name((ir_buf_role)r))) {
                parse_graph_buffer(p, (ir_buf_role)r);
                done = true;
            }
        if (!done && (is_word_tok(t, "call") || is_word_tok(t, "load")))
            parse_graph_call(p);
        else if (!done && is_word_tok(t, "arena"))
            parse_graph_arena(p);
        else if (!done)
            syntax_error(p, "expected a graph buffer (input, param, output, temp, const), a "
                            "call, a load or the arena");
        recover(p);
        if (p->cur == before)
            next(p);
    }
}

static const char *shape_text(parser *p, const ir_buffer *b)
{
    char *s = ir_sprintf(p->m->arena, "%s[", ir_dtype_name(b->dtype));
    for (int i = 0; i < b->ndim; i++)
        s = ir_sprintf(p->m->arena, "%s%s%lld", s, i ? ", " : "", (long long)b->shape[i]);
    return ir_sprintf(p->m->arena, "%s]", s);
}

/* Looks up the called functions and checks the arguments against the
 * parameters, now that every function is known. */
static void resolve_calls(parser *p)
{
    for (int i = 0; i < p->ncalls; i++) {
        pending_call *c = &p->calls[i];
        ir_func *f = ir_module_find_func(p->m, c->name);
        if (!f) {
            error_at(p, c->loc, "call to undefined function @%s", c->name);
            continue;
        }
        bool bad_params = false;
        for (int j = 0; j < p->nbad_funcs; j++)
            bad_params |= p->bad_funcs[j] == f;
        if (bad_params)
            continue;
        if (c->nargs != f->nparams) {
            error_at(p, c->loc, "@%s takes %d buffer%s, but %d %s given", c->name, f->nparams,
                     f->nparams == 1 ? "" : "s", c->nargs, c->nargs == 1 ? "is" : "are");
            continue;
        }
        bool ok = true;
        for (int j = 0; j < c->nargs; j++) {
            ir_buffer *a = c->args[j], *prm = f->params[j];
            if (a->dtype != prm->dtype || !ir_buffer_same_numel(a, prm)) {
                error_at(p, c->arg_locs[j], "'%s' is %s, but parameter '%s' of @%s is %s",
                         a->name, shape_text(p, a), prm->name, c->name, shape_text(p, prm));
                ok = false;
            }
        }
        if (ok && c->at_load)
            ir_graph_add_load(p->m, f, c->args, c->nargs);
        else if (ok)
            ir_graph_add_call(p->m, f, c->args, c->nargs);
    }
}

/* ---------------------------------------------------------------- module */

static void parse_module(parser *p)
{
    if (at_word(p, "module")) {
        next(p);
        if (at(p, T_STRING) || at(p, T_IDENT))
            p->m->name = next(p)->str;
        else
            syntax_error(p, "expected the module name as a string after 'module'");
        recover(p);
    } else {
        error_at(p, tok_loc(p, peek(p, 0)), "expected 'module \"NAME\"' at the start of the file");
    }
    while (!at(p, T_EOF)) {
        int before = p->cur;
        if (at_word(p, "func"))
            parse_func(p);
        else if (at_word(p, "graph"))
            parse_graph(p);
        else
            syntax_error(p, "expected 'func' or 'graph'");
        if (p->panic)
            recover(p);
        if (p->cur == before)
            next(p);
    }
    resolve_calls(p);
}

ir_module *ir_parse(const char *filename, const char *text, size_t len, struct diag *d)
{
    diag fallback;
    if (!d) {
        diag_init(&fallback, stderr);
        d = &fallback;
    }
    parser p = {0};
    p.file = filename ? filename : "<input>";
    p.text = text ? text : "";
    p.len = text ? len : 0;
    p.d = d;
    p.line = p.col = 1;
    p.m = ir_module_new("");
    diag_add_source(d, p.file, p.text, p.len);
    parse_module(&p);
    free(p.toks);
    for (token_chunk *c = p.chunks, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(p.vars);
    free(p.bufs);
    free(p.calls);
    free(p.bad_graph_bufs);
    free(p.bad_funcs);
    free(p.gbufs);
    if (d == &fallback)
        diag_fini(&fallback);
    if (p.nerrors > 0) {
        ir_module_free(p.m);
        return NULL;
    }
    return p.m;
}
