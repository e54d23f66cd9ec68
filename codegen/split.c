/* codegen/split.c — cutting a generated C file into prelude and kernels
 * (see split.h).
 *
 * A small C scanner walks the file's top level: comments, string and
 * character literals and preprocessing numbers are skipped as wholes, a
 * `#` line is one item, and an item ends at a `;` outside brackets or at
 * the `}` that closes a function body.  It checks only what the cut needs;
 * it is not a C parser, and whatever it does not recognize makes the cut
 * fail (the caller then compiles the file whole). */
#include "codegen/split.h"
#include "codegen/sha256.h"
#include "ir/vec.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- scanning */

typedef enum { TK_EOF, TK_ID, TK_NUM, TK_STR, TK_PP, TK_PUNCT } tk_kind;

typedef struct tok {
    tk_kind kind;
    size_t start, end;
} tok;

typedef struct scan {
    const char *s;
    size_t pos, len;
} scan;

/* C's character classes in the "C" locale, without a call per character
 * (the scans walk every byte of a model's C, megabytes). */
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static bool id_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool id_char(char c) { return id_start(c) || is_digit(c); }

/* The end of the comment starting at i (s[i] == '/'), or i when none
 * starts there. */
static size_t comment_end(const char *s, size_t len, size_t i)
{
    if (i + 1 < len && s[i + 1] == '*') {
        const char *e = strstr(s + i + 2, "*/");
        return e ? (size_t)(e - s) + 2 : len;
    }
    if (i + 1 < len && s[i + 1] == '/') {
        while (i < len && s[i] != '\n')
            i++;
        return i;
    }
    return i;
}

/* The end of the literal starting at i (quote character q). */
static size_t literal_end(const char *s, size_t len, size_t i, char q)
{
    for (i++; i < len && s[i] != q && s[i] != '\n'; i++)
        if (s[i] == '\\' && i + 1 < len)
            i++;
    return i < len ? i + 1 : len;
}

/* The end of the preprocessing number starting at i. */
static size_t number_end(const char *s, size_t len, size_t i)
{
    for (i++; i < len; i++) {
        if ((s[i] == '+' || s[i] == '-') && strchr("eEpP", s[i - 1]))
            continue;
        if (!id_char(s[i]) && s[i] != '.')
            break;
    }
    return i;
}

static bool at_line_start(const char *s, size_t i)
{
    while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
        i--;
    return i == 0 || s[i - 1] == '\n';
}

static tok next(scan *sc)
{
    const char *s = sc->s;
    size_t i = sc->pos, len = sc->len;
    for (;;) {
        while (i < len && is_space(s[i]))
            i++;
        size_t e = i < len && s[i] == '/' ? comment_end(s, len, i) : i;
        if (e == i)
            break;
        i = e;
    }
    tok t = {TK_EOF, i, i};
    if (i >= len) {
        sc->pos = len;
        return t;
    }
    char c = s[i];
    if (c == '#' && at_line_start(s, i)) {
        t.kind = TK_PP;
        while (i < len && s[i] != '\n')
            i += s[i] == '\\' && i + 1 < len ? 2 : 1;
    } else if (id_start(c)) {
        t.kind = TK_ID;
        while (i < len && id_char(s[i]))
            i++;
    } else if (is_digit(c) || (c == '.' && i + 1 < len && is_digit(s[i + 1]))) {
        t.kind = TK_NUM;
        i = number_end(s, len, i);
    } else if (c == '"' || c == '\'') {
        t.kind = TK_STR;
        i = literal_end(s, len, i, c);
    } else {
        t.kind = TK_PUNCT;
        i++;
    }
    t.end = i;
    sc->pos = i;
    return t;
}

static bool tok_is(const scan *sc, tok t, const char *text)
{
    size_t n = strlen(text);
    return t.end - t.start == n && memcmp(sc->s + t.start, text, n) == 0;
}

/* ---------------------------------------------------------------- top-level items */

typedef enum { IT_PP, IT_DECL, IT_FUNC } item_kind;

typedef struct item {
    item_kind kind;
    size_t start, end;          /* the item's text, first token to last */
    tok first;                  /* its first token */
    tok name;                   /* IT_FUNC: the function's name */
    size_t params_start, params_end;   /* IT_FUNC: inside the parentheses */
    size_t header_end;          /* IT_FUNC: just after the ')' */
    bool has_paren, has_init;   /* IT_DECL: a '(' or an '=' outside brackets */
    size_t init;                /* IT_DECL: where the '=' is */
} item;

/* The next top-level item, or false at the end of the text or on text the
 * scanner does not understand (*bad). */
static bool next_item(scan *sc, item *it, bool *bad)
{
    *bad = false;
    memset(it, 0, sizeof *it);
    tok t = next(sc);
    if (t.kind == TK_EOF)
        return false;
    it->start = t.start;
    it->first = t;
    if (t.kind == TK_PP) {
        it->kind = IT_PP;
        it->end = t.end;
        return true;
    }
    int paren = 0, brace = 0;
    bool func = false;
    tok prev = {TK_EOF, 0, 0}, before_paren = {TK_EOF, 0, 0};
    bool named = false;
    for (;; prev = t, t = next(sc)) {
        if (t.kind == TK_EOF || (t.kind == TK_PP && brace == 0)) {
            *bad = true;
            return false;
        }
        if (t.kind != TK_PUNCT)
            continue;
        char c = sc->s[t.start];
        if (c == '(' || c == '[') {
            if (c == '(' && paren == 0 && brace == 0 && !named) {
                named = true;
                before_paren = prev;
                it->params_start = t.end;
            }
            paren++;
        } else if (c == ')' || c == ']') {
            if (--paren < 0) {
                *bad = true;
                return false;
            }
            if (c == ')' && paren == 0 && brace == 0 && named && !it->header_end) {
                it->params_end = t.start;
                it->header_end = t.end;
            }
        } else if (c == '=' && paren == 0 && brace == 0 && !it->has_init) {
            it->has_init = true;
            it->init = t.start;
        } else if (c == '{') {
            if (brace == 0 && paren == 0 && prev.kind == TK_PUNCT && sc->s[prev.start] == ')')
                func = true;
            brace++;
        } else if (c == '}') {
            if (--brace < 0) {
                *bad = true;
                return false;
            }
            if (brace == 0 && func) {
                it->kind = IT_FUNC;
                it->name = before_paren;
                it->end = t.end;
                return before_paren.kind == TK_ID || (*bad = true, false);
            }
        } else if (c == ';' && paren == 0 && brace == 0) {
            it->kind = IT_DECL;
            it->has_paren = named;
            it->end = t.end;
            return true;
        }
    }
}

/* ---------------------------------------------------------------- text */

typedef struct buf {
    char *p;
    size_t len, cap;
    bool oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

/* ---------------------------------------------------------------- renaming */

/* A sorted set of identifiers (pointers into the file). */
typedef struct idset {
    tok *t;
    int n, cap;
    const char *s;
    bool oom;
} idset;

static int id_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : an < bn ? -1 : an > bn;
}

/* Index of id in the set, or -(insertion point) - 1. */
static int idset_find(const idset *st, const char *id, size_t len)
{
    int lo = 0, hi = st->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = id_cmp(st->s + st->t[mid].start, st->t[mid].end - st->t[mid].start, id, len);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -lo - 1;
}

static void idset_add(idset *st, tok t)
{
    int at = idset_find(st, st->s + t.start, t.end - t.start);
    if (at >= 0 || st->oom)
        return;
    at = -at - 1;
    tok *n = ir_vec_reserve(st->t, st->n, &st->cap, sizeof *n);
    if (!n) {
        st->oom = true;
        return;
    }
    st->t = n;
    memmove(st->t + at + 1, st->t + at, sizeof *st->t * (size_t)(st->n - at));
    st->t[at] = t;
    st->n++;
}

/* Words of C and of the headers the generated code includes that a name
 * of the code never is (the emitter gives user names a trailing '_' when
 * they would be one); kept as they are. */
static const char *const c_words[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "asm", "typeof", "bool", "true", "false",
    "alignas", "alignof", "noreturn", "static_assert", "jmp_buf", "errno", "linux", "unix",
    "i386", "math_errhandling",
};

/* True for names kept whatever the unit: C's words, tec_ and __ names, *_t
 * typedefs, upper-case macros, names of the prelude. */
static bool kept(const idset *prelude, const char *id, size_t len)
{
    for (size_t i = 0; i < sizeof c_words / sizeof *c_words; i++)
        if (strlen(c_words[i]) == len && memcmp(c_words[i], id, len) == 0)
            return true;
    if ((len >= 4 && memcmp(id, "tec_", 4) == 0) || (len >= 2 && memcmp(id, "__", 2) == 0) ||
        (len >= 2 && memcmp(id + len - 2, "_t", 2) == 0) || (len >= 1 && id[0] == '_'))
        return true;
    bool lower = false;
    for (size_t i = 0; i < len; i++)
        lower |= islower((unsigned char)id[i]) != 0;
    return !lower || idset_find(prelude, id, len) >= 0;
}

/* The names a unit gives: its symbol, its static functions, its
 * parameters (in the exported function's order), then its other names in
 * the order they first appear. */
typedef struct names {
    const char *s;              /* the file */
    tok *from;                  /* the names as they appear */
    int n, cap;
    int nstatic;                /* from[1 .. nstatic] are static functions */
    int nparams;                /* then the parameters */
    const idset *prelude;
    /* Profiling ids (passes/instrument.c): with prof, the literal first
     * argument of tec_prof_enter/exit (always `layer`) and of
     * tec_prof_count (counter ids from `counter`) become parameters of the
     * shared code, tec_pl and tec_pc + offset, inserted at `params_at`. */
    bool prof;
    long long layer, counter;
    size_t params_at;
    bool oom;
} names;

static void add_name(names *nm, tok t)
{
    tok *f = ir_vec_reserve(nm->from, nm->n, &nm->cap, sizeof *f);
    if (!f) {
        nm->oom = true;
        return;
    }
    nm->from = f;
    nm->from[nm->n++] = t;
}

static int find_name(const names *nm, const char *id, size_t len)
{
    for (int i = 0; i < nm->n; i++)
        if (nm->from[i].end - nm->from[i].start == len &&
            memcmp(nm->s + nm->from[i].start, id, len) == 0)
            return i;
    return -1;
}

/* A name the renaming introduces: tec_a<digits>, tec_v<digits>, tec_c_...,
 * tec_F... */
static bool reserved(const char *id, size_t len)
{
    for (const char *p = "av"; *p; p++)
        if (len > 5 && memcmp(id, "tec_", 4) == 0 && id[4] == *p) {
            size_t i = 5;
            while (i < len && is_digit(id[i]))
                i++;
            if (i == len)
                return true;
        }
    return (len >= 6 && memcmp(id, "tec_c_", 6) == 0) || (len >= 5 && memcmp(id, "tec_F", 5) == 0) ||
           (len == 6 && (memcmp(id, "tec_pl", 6) == 0 || memcmp(id, "tec_pc", 6) == 0));
}

/* Which profiling hook id is a call's literal first argument: 1 enter or
 * exit (a layer), 2 count (a counter), 0 another identifier. */
static int prof_hook(const char *id, size_t len)
{
    if ((len == 14 && memcmp(id, "tec_prof_enter", 14) == 0) ||
        (len == 13 && memcmp(id, "tec_prof_exit", 13) == 0))
        return 1;
    return len == 14 && memcmp(id, "tec_prof_count", 14) == 0 ? 2 : 0;
}

/* The literal id of the hook call whose name ends at e: where its digits
 * are ([*at, *at_end)) and its value; false when the first argument is not
 * a plain decimal number. */
static bool prof_literal(const char *s, size_t e, size_t end, size_t *at, size_t *at_end,
                         long long *v)
{
    while (e < end && is_space(s[e]))
        e++;
    if (e >= end || s[e] != '(')
        return false;
    for (e++; e < end && is_space(s[e]); e++)
        ;
    size_t d = e;
    while (e < end && is_digit(s[e]))
        e++;
    if (e == d || e - d > 15 || id_char(s[e]) || s[e] == '.')
        return false;
    *at = d;
    *at_end = e;
    *v = strtoll(s + d, NULL, 10);
    size_t j = e;
    while (j < end && is_space(s[j]))
        j++;
    return j < end && (s[j] == ',' || s[j] == ')');
}

/* Whether the unit's profiling ids can be parameters: every hook call has
 * a literal id, enter and exit name one layer; sets nm's prof fields. */
static void prof_scan(names *nm, size_t start, size_t end)
{
    const char *s = nm->s;
    scan sc = {s, start, end};
    bool any = false, layer_set = false, counter_set = false;
    for (tok t = next(&sc); t.kind != TK_EOF; t = next(&sc)) {
        if (t.kind == TK_PP) {
            for (size_t i = t.start; i + 9 <= t.end; i++)
                if (memcmp(s + i, "tec_prof_", 9) == 0)
                    return;
            continue;
        }
        int h = t.kind == TK_ID ? prof_hook(s + t.start, t.end - t.start) : 0;
        if (!h)
            continue;
        size_t a, b;
        long long v;
        if (!prof_literal(s, t.end, end, &a, &b, &v))
            return;
        any = true;
        if (h == 1) {
            if (layer_set && v != nm->layer)
                return;
            nm->layer = v;
            layer_set = true;
        } else if (!counter_set || v < nm->counter) {
            nm->counter = v;
            counter_set = true;
        }
    }
    if (!counter_set)
        nm->counter = 0;
    if (!layer_set)
        nm->layer = 0;
    nm->prof = any;
}

/* Walks s[start, end): with out == NULL, collects the unit's other names
 * into nm; else writes the text with every name of nm renamed (name 0 ->
 * base, static function k -> base_s<k>, parameter k -> tec_a<k>, other
 * name k -> tec_v<k>) and comments dropped.  Names are renamed in #
 * lines only inside parentheses (a pragma's clauses).  The contents of
 * __attribute__((...)) and names followed by '(' (functions, macros) are
 * not collected.  False when the text already uses a name the renaming
 * introduces, or a # line uses a renamed name as a word of its own. */
static bool render(names *nm, size_t start, size_t end, const char *base, buf *out)
{
    const char *s = nm->s;
    size_t i = start, copied = start;
    size_t pp_end = start;     /* the end of the # line being walked */
    int pp_depth = 0, attr_depth = -1, depth = 0;
    char repl[64];
    while (i < end) {
        char c = s[i];
        size_t e = i + 1;
        const char *r = NULL;
        if (out && nm->prof && i == nm->params_at) {
            put(out, s + copied, i - copied);
            puts_(out, "int64_t tec_pl, int64_t tec_pc, ");
            copied = i;
        }
        if (c == '#' && i >= pp_end && at_line_start(s, i)) {
            for (pp_end = i; pp_end < end && s[pp_end] != '\n'; pp_end++)
                ;
            pp_depth = 0;
        } else if (c == '/' && comment_end(s, end, i) != i) {
            e = comment_end(s, end, i);
            r = " ";   /* as C reads it; a // comment's newline stays */
        } else if (c == '"' || c == '\'') {
            e = literal_end(s, end, i, c);
        } else if (is_digit(c) || (c == '.' && i + 1 < end && is_digit(s[i + 1]))) {
            e = number_end(s, end, i);
        } else if (c == '(' || c == ')') {
            int d = c == '(' ? 1 : -1;
            if (i < pp_end)
                pp_depth += d;
            depth += d;
            if (depth <= attr_depth)
                attr_depth = -1;
        } else if (id_start(c)) {
            for (e = i; e < end && id_char(s[e]); e++)
                ;
            size_t len = e - i;
            int k = find_name(nm, s + i, len);
            if (k < 0 && reserved(s + i, len))
                return false;
            bool in_pp = i < pp_end;
            if (len == 13 && memcmp(s + i, "__attribute__", 13) == 0 && attr_depth < 0)
                attr_depth = depth;
            int hook = out && nm->prof ? prof_hook(s + i, len) : 0;
            size_t a, b;
            long long v;
            if (hook && prof_literal(s, e, end, &a, &b, &v)) {
                /* name(ID -> name(tec_pl or name(tec_pc + (ID - counter) */
                put(out, s + copied, a - copied);
                if (hook == 1)
                    puts_(out, "tec_pl");
                else if (v == nm->counter)
                    puts_(out, "tec_pc");
                else {
                    snprintf(repl, sizeof repl, "tec_pc + %lld", v - nm->counter);
                    puts_(out, repl);
                }
                copied = b;
                i = b;
                continue;
            }
            if (!out) {
                size_t j = e;
                while (j < end && is_space(s[j]))
                    j++;
                if (k < 0 && !in_pp && attr_depth < 0 && !(j < end && s[j] == '(') &&
                    !kept(nm->prelude, s + i, len)) {
                    add_name(nm, (tok){TK_ID, i, e});
                }
            } else if (k >= 0 && attr_depth < 0) {
                if (in_pp && pp_depth == 0)
                    return false;
                int np = 1 + nm->nstatic + nm->nparams;
                if (k == 0)
                    r = base;
                else if (k <= nm->nstatic)
                    r = (snprintf(repl, sizeof repl, "%s_s%d", base, k), repl);
                else if (k < np)
                    r = (snprintf(repl, sizeof repl, "tec_a%d", k - nm->nstatic - 1), repl);
                else
                    r = (snprintf(repl, sizeof repl, "tec_v%d", k - np), repl);
            }
        }
        if (e > end)
            e = end;
        if (r && out) {
            put(out, s + copied, i - copied);
            puts_(out, r);
            copied = e;
        }
        i = e;
    }
    if (out)
        put(out, s + copied, end - copied);
    return !nm->oom;
}

/* The parameters of the exported function: the last identifier of each
 * comma-separated declaration; "(void)" has none. */
static bool param_names(const char *s, const item *it, names *nm, buf *call)
{
    scan sc = {s, it->params_start, it->params_end};
    tok t, last = {TK_EOF, 0, 0};
    int depth = 0, count = 0, ntok = 0;
    bool only_void = true;
    for (;;) {
        t = next(&sc);
        bool end = t.kind == TK_EOF;
        bool comma = !end && t.kind == TK_PUNCT && s[t.start] == ',' && depth == 0;
        if (end || comma) {
            if (end && count == 0 && ntok == 1 && only_void)
                return true;   /* (void) */
            if (ntok == 0 || last.kind != TK_ID)
                return false;
            add_name(nm, last);
            if (count++)
                puts_(call, ", ");
            put(call, s + last.start, last.end - last.start);
            if (end)
                return true;
            ntok = 0;
            only_void = true;
            continue;
        }
        if (t.kind == TK_PUNCT && (s[t.start] == '(' || s[t.start] == '['))
            depth++;
        else if (t.kind == TK_PUNCT && (s[t.start] == ')' || s[t.start] == ']'))
            depth--;
        only_void &= ntok == 0 && t.end - t.start == 4 && memcmp(s + t.start, "void", 4) == 0;
        ntok++;
        last = t;
    }
}

/* ---------------------------------------------------------------- the cut */

static bool is_kernel_name(const scan *sc, tok t)
{
    return t.kind == TK_ID && t.end - t.start > 5 && memcmp(sc->s + t.start, "tec_k", 5) == 0 &&
           is_digit(sc->s[t.start + 5]);
}

/* s[start, end) with each comment replaced by a space. */
static void put_code(buf *out, const char *s, size_t start, size_t end)
{
    size_t i = start, copied = start;
    while (i < end) {
        size_t e = i + 1;
        if (s[i] == '/' && comment_end(s, end, i) != i) {
            e = comment_end(s, end, i);
            if (e > end)
                e = end;
            put(out, s + copied, i - copied);
            puts_(out, " ");
            copied = e;
        } else if (s[i] == '"' || s[i] == '\'') {
            e = literal_end(s, end, i, s[i]);
        }
        i = e < end ? e : end;
    }
    put(out, s + copied, end - copied);
}

/* The prelude with its global objects declared extern instead of defined,
 * and without comments (they name the model, which the code of the
 * kernels does not depend on). */
static void extern_prelude(const char *s, size_t end, buf *out)
{
    scan sc = {s, 0, end};
    item it;
    bool bad;
    size_t copied = 0;
    while (next_item(&sc, &it, &bad)) {
        if (it.kind != IT_DECL || tok_is(&sc, it.first, "static") ||
            tok_is(&sc, it.first, "typedef") || tok_is(&sc, it.first, "extern") ||
            (it.has_paren && !it.has_init))
            continue;
        put_code(out, s, copied, it.start);
        puts_(out, "extern ");
        size_t stop = it.has_init ? it.init : it.end - 1;
        while (stop > it.start && is_space(s[stop - 1]))
            stop--;
        put(out, s + it.start, stop - it.start);
        puts_(out, ";");
        copied = it.end;
    }
    put_code(out, s, copied, end);
}

/* The name a declaration of the prelude declares: the last identifier
 * outside parentheses before its '=', its first '(' or __attribute__
 * (`typedef float tec_f32x4 __attribute__((...))`, `int tec_num_threads =
 * 1`, `extern void tec_prof_enter(int64_t)`). */
static tok decl_name(const char *s, const item *it)
{
    scan sc = {s, it->start, it->end};
    tok name = {TK_EOF, 0, 0};
    for (tok t = next(&sc); t.kind != TK_EOF; t = next(&sc)) {
        if (t.kind == TK_PUNCT && strchr("=(;[", s[t.start]))
            break;
        if (t.kind == TK_ID && tok_is(&sc, t, "__attribute__"))
            break;
        if (t.kind == TK_ID)
            name = t;
    }
    return name;
}

/* Adds every identifier-like word of s[start, end) (# lines included). */
static void add_words(idset *st, const char *s, size_t start, size_t end)
{
    for (size_t i = start; i < end; i++) {
        if (!id_start(s[i]) || (i > start && id_char(s[i - 1])))
            continue;
        size_t e = i;
        while (e < end && id_char(s[e]))
            e++;
        idset_add(st, (tok){TK_ID, i, e});
        i = e;
    }
}

/* C's and GCC's own names with a leading '_', which no header declares. */
static const char *const builtin_words[] = {
    "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary",
    "_Noreturn", "_Pragma", "_Static_assert", "_Thread_local", "__attribute__", "__extension__",
    "__restrict", "__restrict__", "__typeof__", "__typeof", "__inline", "__inline__", "__asm__",
    "__volatile__", "__alignof__", "__int128", "__bf16", "__fp16", "__label__",
};

/* Whether the word may be a name of an intrinsics header (_mm512_fmadd_ps,
 * __m512, __mmask16, _MM_FROUND_NO_EXC, _cvtss_sh ...): any name with a
 * leading '_' but C's and GCC's own (above, _Float<N>, __builtin_*,
 * __atomic_* and __ATOMIC_*: the parallel loops' shares, emit_prelude.c),
 * predefined macros (__AVX512F__, __x86_64__, __VA_ARGS__) and the
 * vector-function ABI's names of libmvec (_ZGVeN16v_expf), which the
 * prelude declares itself. */
static bool intrinsic_word(const char *id, size_t len)
{
    if (len < 2 || id[0] != '_' || (len > 4 && memcmp(id, "_ZGV", 4) == 0))
        return false;
    for (size_t i = 0; i < sizeof builtin_words / sizeof *builtin_words; i++)
        if (strlen(builtin_words[i]) == len && memcmp(builtin_words[i], id, len) == 0)
            return false;
    if ((len > 7 && memcmp(id, "_Float", 6) == 0) || (len > 10 && memcmp(id, "__builtin_", 10) == 0) ||
        (len > 9 && (memcmp(id, "__atomic_", 9) == 0 || memcmp(id, "__ATOMIC_", 9) == 0)))
        return false;
    if (len > 4 && id[1] == '_' && id[len - 1] == '_' && id[len - 2] == '_') {
        bool macro = true;   /* __[A-Za-z0-9_]+__ */
        for (size_t i = 2; i < len - 2; i++)
            macro &= id_char(id[i]);
        if (macro)
            return false;
    }
    return true;
}

/* Whether the # line s[start, end) includes an intrinsics header
 * (<immintrin.h>, <x86intrin.h> ...): parsing one costs the compiler more
 * (0.14 s of CPU for <immintrin.h> with -march=native) than most kernels. */
static bool intrinsics_include(const char *s, size_t start, size_t end)
{
    size_t i = start + 1;
    while (i < end && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (end - i < 7 || memcmp(s + i, "include", 7) != 0)
        return false;
    const char *close = memchr(s + i, '>', end - i);
    return close && close - s >= 9 && memcmp(close - 8, "intrin.h", 8) == 0;
}

/* Whether s[start, end) (comments aside, # lines that include an
 * intrinsics header aside) uses a name that may come from one. */
static bool uses_intrinsics(const char *s, size_t start, size_t end)
{
    scan sc = {s, start, end};
    for (tok t = next(&sc); t.kind != TK_EOF; t = next(&sc)) {
        if (t.kind == TK_ID && intrinsic_word(s + t.start, t.end - t.start))
            return true;
        if (t.kind != TK_PP || intrinsics_include(s, t.start, t.end))
            continue;
        for (size_t i = t.start; i < t.end; i++) {
            if (!id_start(s[i]) || (i > t.start && id_char(s[i - 1])))
                continue;
            size_t e = i;
            while (e < t.end && id_char(s[e]))
                e++;
            if (intrinsic_word(s + i, e - i))
                return true;
            i = e;
        }
    }
    return false;
}

/* The prelude's items, parsed once: what each unit needs of them is a
 * flag per item (cg_unit.need), and the text of any set of units is the
 * items some of them need, in the prelude's order (cg_split_prelude). */
typedef struct prelude_tab {
    item items[CG_SPLIT_MAX_ITEMS];
    int n;
} prelude_tab;

/* Whether item it of the prelude is a global object's definition. */
static bool global_item(const char *s, const item *it)
{
    scan sc = {s, 0, 0};
    return it->kind == IT_DECL && !tok_is(&sc, it->first, "static") &&
           !tok_is(&sc, it->first, "typedef") && !tok_is(&sc, it->first, "extern") &&
           !(it->has_paren && !it->has_init);
}

/* Fills keep[0..t->n) with what s[start, end) needs of the prelude: every
 * # line, and every declaration or helper whose name the unit uses, or an
 * item it keeps uses (helpers use types and other helpers declared before
 * them); for the glue unit (glue, start == end), every # line and
 * declaration and no helper function.  Returns whether anything kept, or
 * the unit, uses a name an intrinsics header may declare; *oom when
 * memory ran out. */
static bool prelude_needs(const char *s, const prelude_tab *t, size_t start, size_t end,
                          bool glue, unsigned char *keep, bool *oom)
{
    idset need = {.s = s};
    add_words(&need, s, start, end);
    for (int i = t->n - 1; i >= 0; i--) {
        const item *it = &t->items[i];
        tok name = it->kind == IT_FUNC ? it->name : it->kind == IT_DECL ? decl_name(s, it)
                                                                        : (tok){TK_EOF, 0, 0};
        if (glue)
            keep[i] = it->kind != IT_FUNC;
        else
            keep[i] = it->kind == IT_PP || name.kind != TK_ID ||
                      idset_find(&need, s + name.start, name.end - name.start) >= 0;
        if (keep[i])
            add_words(&need, s, it->start, it->end);
    }
    bool intrin = uses_intrinsics(s, start, end);
    for (int i = 0; i < t->n && !intrin; i++)
        intrin = keep[i] && uses_intrinsics(s, t->items[i].start, t->items[i].end);
    *oom |= need.oom;
    free(need.t);
    return intrin;
}

/* The text of the prelude items flagged in keep, comments dropped: the
 * globals declared extern unless `define`, an #include of an intrinsics
 * header left out unless `intrin`. */
static char *prelude_text(const char *s, const prelude_tab *t, const unsigned char *keep,
                          bool intrin, bool define)
{
    buf out = {0};
    for (int i = 0; i < t->n; i++) {
        if (!keep[i])
            continue;
        const item *it = &t->items[i];
        if (it->kind == IT_PP && !intrin && intrinsics_include(s, it->start, it->end))
            continue;
        if (global_item(s, it) && !define) {
            size_t stop = it->has_init ? it->init : it->end - 1;
            while (stop > it->start && is_space(s[stop - 1]))
                stop--;
            puts_(&out, "extern ");
            put(&out, s + it->start, stop - it->start);
            puts_(&out, ";\n");
        } else {
            put_code(&out, s, it->start, it->end);
            puts_(&out, "\n");
        }
    }
    if (out.oom) {
        free(out.p);
        return NULL;
    }
    return out.p;
}

static bool add_unit(cg_csplit *out, const char *s, const idset *prelude, size_t start,
                     const item *statics, int nstatic, const item *k)
{
    cg_unit *u = ir_vec_reserve(out->units, out->n, &out->cap, sizeof *u);
    if (!u)
        return false;
    out->units = u;
    u = &out->units[out->n];
    memset(u, 0, sizeof *u);
    names nm = {.s = s, .prelude = prelude};
    buf call = {0}, shared = {0}, glue = {0};
    bool ok = false;
    add_name(&nm, k->name);
    for (int i = 0; i < nstatic; i++)
        add_name(&nm, statics[i].name);
    nm.nstatic = nstatic;
    if (!param_names(s, k, &nm, &call) || nm.oom)
        goto out;
    nm.nparams = nm.n - 1 - nstatic;
    /* Profiling ids become parameters only of a kernel without static
     * functions (they would need them too) and with parameters. */
    if (nstatic == 0 && nm.nparams > 0) {
        prof_scan(&nm, start, k->end);
        nm.params_at = k->params_start;
    }
    if (!render(&nm, start, k->end, NULL, NULL))
        goto out;
    /* The placeholder rendering names the code; the final one uses it. */
    if (!render(&nm, start, k->end, "tec_F", &shared) || shared.oom)
        goto out;
    uint8_t digest[32];
    char hex[65];
    cg_sha256_ctx h;
    cg_sha256_init(&h);
    cg_sha256_update(&h, shared.p, shared.len);
    cg_sha256_final(&h, digest);
    cg_sha256_to_hex(digest, hex);
    snprintf(u->name, sizeof u->name, "tec_c_%.16s", hex);
    shared.len = 0;
    render(&nm, start, k->end, u->name, &shared);
    puts_(&shared, "\n");
    /* The forwarder: the exported header, and a call with its parameters. */
    size_t name_at = k->name.start, header_end = k->header_end;
    put(&glue, s + k->start, name_at - k->start);
    puts_(&glue, u->name);
    put(&glue, s + k->name.end, k->params_start - k->name.end);
    if (nm.prof)
        puts_(&glue, "int64_t tec_pl, int64_t tec_pc, ");
    put(&glue, s + k->params_start, header_end - k->params_start);
    puts_(&glue, ";\n");
    put(&glue, s + k->start, header_end - k->start);
    puts_(&glue, "\n{\n    return ");
    puts_(&glue, u->name);
    puts_(&glue, "(");
    if (nm.prof) {
        char ids[64];
        snprintf(ids, sizeof ids, "%lld, %lld, ", nm.layer, nm.counter);
        puts_(&glue, ids);
    }
    if (call.p)
        puts_(&glue, call.p);
    puts_(&glue, ");\n}\n");
    u->symbol = strndup(s + k->name.start, k->name.end - k->name.start);
    buf proto = {0};
    put(&proto, s + k->start, header_end - k->start);
    puts_(&proto, ";\n");
    u->proto = proto.p;
    if (shared.oom || glue.oom || call.oom || proto.oom || !u->symbol)
        goto out;
    u->shared = shared.p;
    u->glue = glue.p;
    u->plain = !nm.prof;
    u->start = start;
    u->end = k->end;
    shared.p = glue.p = NULL;
    u->first = out->n;
    for (int i = 0; i < out->n; i++)
        if (strcmp(out->units[i].name, u->name) == 0) {
            /* 64 bits of the hash name the code; two different codes with
             * one name would make one kernel run the other's code. */
            if (strcmp(out->units[i].shared, u->shared) != 0)
                goto out_shared;
            u->first = i;
            break;
        }
    out->distinct += u->first == out->n;
    out->n++;
    ok = true;
    goto out;
out_shared:
    free(u->shared);
    free(u->glue);
    u->shared = u->glue = NULL;
out:
    if (!ok) {
        free(u->symbol);
        free(u->proto);
    }
    free(nm.from);
    free(call.p);
    free(shared.p);
    free(glue.p);
    return ok;
}

/* What each distinct unit needs of the prelude (its `need` flags, its
 * `intrin`, its `prelude`) and the glue's prelude.  A prelude of more than
 * CG_SPLIT_MAX_ITEMS items is not cut: every unit then gets all of it
 * (need NULL).  False when memory runs out. */
static bool cut_prelude(const char *src, size_t prelude_end, cg_csplit *out)
{
    prelude_tab *t = malloc(sizeof *t);
    if (!t)
        return false;
    t->n = 0;
    scan sc = {src, 0, prelude_end};
    bool bad, oom = false;
    while (t->n < CG_SPLIT_MAX_ITEMS && next_item(&sc, &t->items[t->n], &bad))
        t->n++;
    if (t->n == CG_SPLIT_MAX_ITEMS) {
        free(t);
        for (int i = 0; i < out->n; i++)
            if (out->units[i].first == i && !(out->units[i].prelude = strdup(out->prelude_extern)))
                return false;
        return (out->glue_prelude = strdup(out->prelude)) != NULL;
    }
    out->npre = t->n;
    out->pre_items = calloc((size_t)t->n + 1, sizeof *out->pre_items);
    out->pre_include = calloc((size_t)t->n + 1, sizeof *out->pre_include);
    oom |= !out->pre_items || !out->pre_include;
    for (int i = 0; i < t->n && !oom; i++) {
        const item *it = &t->items[i];
        unsigned char one = 1;
        /* each item's text as a unit gets it (globals extern) */
        prelude_tab single = {.n = 1};
        single.items[0] = *it;
        out->pre_items[i] = prelude_text(src, &single, &one, true, false);
        oom |= !out->pre_items[i];
        out->pre_include[i] = it->kind == IT_PP && intrinsics_include(src, it->start, it->end);
    }
    for (int i = 0; i < out->n && !oom; i++) {
        cg_unit *u = &out->units[i];
        if (u->first != i)
            continue;
        if (!(u->need = calloc((size_t)t->n + 1, 1))) {
            oom = true;
            break;
        }
        u->intrin = prelude_needs(src, t, u->start, u->end, false, u->need, &oom);
        oom |= !(u->prelude = cg_split_prelude(out, &i, 1));
    }
    unsigned char *glue = calloc((size_t)t->n + 1, 1);
    if (glue && !oom) {
        bool intrin = prelude_needs(src, t, 0, 0, true, glue, &oom);
        oom |= !(out->glue_prelude = prelude_text(src, t, glue, intrin, true));
    }
    free(glue);
    free(t);
    return !oom && glue;
}

char *cg_split_prelude(const cg_csplit *sp, const int *units, int n)
{
    bool intrin = false, all = sp->npre == 0;
    for (int k = 0; k < n; k++) {
        intrin |= sp->units[units[k]].intrin;
        all |= !sp->units[units[k]].need;
    }
    if (all)
        return strdup(sp->prelude_extern);
    buf out = {0};
    for (int i = 0; i < sp->npre; i++) {
        bool keep = false;
        for (int k = 0; k < n && !keep; k++)
            keep = sp->units[units[k]].need[i];
        if (keep && (intrin || !sp->pre_include[i]))
            puts_(&out, sp->pre_items[i]);
    }
    puts_(&out, "\n");
    if (out.oom) {
        free(out.p);
        return NULL;
    }
    return out.p;
}

/* ---------------------------------------------------------------- families */

/* Kernels whose code differs only in some integer constants (DenseNet's
 * dense layers: one 1x1 convolution each, with another input depth;
 * Inception's 1x7 and 7x1 convolutions with 128, 160 or 192 channels)
 * share one compiled function too: the constants that differ become int
 * parameters, tec_p0, tec_p1 ..., appended to its parameters, and each
 * kernel's forwarder passes its own values.
 *
 * Only a constant where any run-time value means the same can become one:
 * a plain decimal int (no suffix, no leading 0, at most INT_MAX) right
 * after `*`, `+`, `-` or `<` (a stride, an offset, a loop bound), the
 * initial value of tec_lo or tec_hi (a parallel loop's bounds), calloc's
 * or malloc's count (a heap temporary's elements), the index after `)[`,
 * or a profiling counter's amount (tec_prof_count's second argument);
 * never in a # line, never inside brackets that hold no name (an array's
 * size: `float t[224]`), and not in a unit that has static storage or
 * static functions.  The rest of the
 * code must be equal, so the schedule, unrolling and vector code of the
 * members are one.  Positions whose values agree in every member share a
 * parameter; a family that would need more than FAMILY_MAX_PARAMS is not
 * made (its members differ in more than a size). */
#define FAMILY_MAX_PARAMS 8
/* A name as long as tec_c_<16 hex digits>, while the family has none. */
#define FAMILY_PLACEHOLDER "tec_F_________________"

/* The integer constants of a unit's text that may become parameters:
 * where their digits are and their values. */
typedef struct lit {
    size_t at, end;      /* its digits */
    long long val;
} lit;

typedef struct lits {
    lit *v;
    int n, cap;
    bool oom;
} lits;

/* Whether a constant after the tokens prev2 prev may become a parameter;
 * bracket_named: the innermost brackets around it hold a name (1), do not
 * (0), or there are none (-1). */
static bool param_context(const char *s, tok prev2, tok prev, int bracket_named)
{
    if (prev.kind != TK_PUNCT)
        return false;
    char c = s[prev.start];
    if (c == '*' || c == '+' || c == '-' || c == '<')
        return bracket_named != 0;
    if (c == '[')
        return prev2.kind == TK_PUNCT && s[prev2.start] == ')';
    if (c == '(')   /* an element count: calloc(N, ...), malloc(N * sizeof ...) */
        return prev2.kind == TK_ID && prev2.end - prev2.start == 6 &&
               (memcmp(s + prev2.start, "calloc", 6) == 0 || memcmp(s + prev2.start, "malloc", 6) == 0);
    if (c == '=')
        return prev2.kind == TK_ID && prev2.end - prev2.start == 6 &&
               (memcmp(s + prev2.start, "tec_hi", 6) == 0 || memcmp(s + prev2.start, "tec_lo", 6) == 0);
    if (c == ',') {   /* a profiling counter's amount: tec_prof_count(tec_pc [+ N], AMOUNT) */
        static const char call[] = "tec_prof_count(tec_pc";
        size_t i = prev.start, n = sizeof call - 1;
        while (i > 0 && (is_digit(s[i - 1]) || s[i - 1] == ' ' || s[i - 1] == '+'))
            i--;
        return i >= n && memcmp(s + i - n, call, n) == 0;
    }
    return false;
}

/* Whether the brackets opened at s[i] (a '[') hold a name before their
 * closing one, or (not a declaration's size) follow a ')'. */
static bool bracket_has_name(const char *s, size_t len, size_t i, tok before)
{
    if (before.kind == TK_PUNCT && s[before.start] == ')')
        return true;
    scan sc = {s, i + 1, len};
    int depth = 1;
    for (tok t = next(&sc); t.kind != TK_EOF; t = next(&sc)) {
        if (t.kind == TK_ID)
            return true;
        if (t.kind == TK_PUNCT && s[t.start] == '[')
            depth++;
        else if (t.kind == TK_PUNCT && s[t.start] == ']' && --depth == 0)
            return false;
    }
    return false;
}

/* Fills l with the constants of s that may become parameters; false when
 * s may have none (static storage, a name the parameters would use) or
 * memory runs out (l->oom). */
static bool find_lits(const char *s, lits *l)
{
    size_t len = strlen(s);
    scan sc = {s, 0, len};
    tok prev = {TK_EOF, 0, 0}, prev2 = prev;
    /* for each open bracket level: whether it holds a name (1) or not (0);
     * outside brackets -1 */
    signed char named[64];
    int depth = 0;
    for (tok t = next(&sc); t.kind != TK_EOF; prev2 = prev, prev = t, t = next(&sc)) {
        size_t n = t.end - t.start;
        const char *p = s + t.start;
        if (t.kind == TK_ID && n == 6 && memcmp(p, "static", 6) == 0)
            return false;
        if (t.kind == TK_ID && n > 5 && memcmp(p, "tec_p", 5) == 0) {   /* tec_p<digits> */
            size_t i = 5;
            while (i < n && is_digit(p[i]))
                i++;
            if (i == n)
                return false;
        }
        if (t.kind == TK_PUNCT && *p == '[') {
            if (depth == (int)sizeof named)
                return false;
            named[depth++] = bracket_has_name(s, len, t.start, prev) ? 1 : 0;
        } else if (t.kind == TK_PUNCT && *p == ']' && depth > 0) {
            depth--;
        }
        if (t.kind != TK_NUM || n > 10 || (n > 1 && *p == '0'))
            continue;
        bool digits = true;
        for (size_t i = 0; i < n; i++)
            digits &= is_digit(p[i]) != 0;
        long long v = digits ? strtoll(p, NULL, 10) : -1;
        if (!digits || v > 2147483647LL || !param_context(s, prev2, prev, depth ? named[depth - 1] : -1))
            continue;
        lit *w = ir_vec_reserve(l->v, l->n, &l->cap, sizeof *w);
        if (!w) {
            l->oom = true;
            return false;
        }
        l->v = w;
        l->v[l->n++] = (lit){t.start, t.end, v};
    }
    return true;
}


/* text with the constants of l replaced: by "#" (a family's key), or,
 * where differs[i] >= 0, by tec_p<differs[i]> (the family's code). */
static void family_text(const char *text, const lits *l, const int *differs, buf *out)
{
    size_t copied = 0;
    for (int i = 0; i < l->n; i++) {
        if (differs && differs[i] < 0)
            continue;
        put(out, text + copied, l->v[i].at - copied);
        if (differs) {
            char p[32];
            snprintf(p, sizeof p, "tec_p%d", differs[i]);
            puts_(out, p);
        } else {
            puts_(out, "#");
        }
        copied = l->v[i].end;
    }
    puts_(out, text + copied);
}

/* Replaces every occurrence of the 22-character name old by new in t. */
static void rename22(char *t, const char *old, const char *new)
{
    for (char *p = strstr(t, old); p; p = strstr(p + 22, old))
        memcpy(p, new, 22);
}

/* t with `extra` added at the end of the parameter list whose '(' follows
 * the first occurrence of name, and `args` at the end of the last call's
 * arguments when args is not NULL (a forwarder: "...name(a, b);\n}\n").
 * Malloc'ed, or NULL. */
static char *add_params(const char *t, const char *name, const char *extra, const char *args)
{
    const char *open = strstr(t, name);
    if (!open || open[22] != '(')
        return NULL;
    open += 22;
    int depth = 0;
    const char *close = open;
    for (; *close; close++) {
        depth += *close == '(';
        if (*close == ')' && --depth == 0)
            break;
    }
    if (!*close)
        return NULL;
    const char *inside = open + 1;
    while (inside < close && is_space(*inside))
        inside++;
    bool none = inside == close || (close - inside == 4 && memcmp(inside, "void", 4) == 0);
    buf out = {0};
    put(&out, t, (size_t)(none ? open + 1 - t : close - t));
    if (!none)
        puts_(&out, ", ");
    puts_(&out, extra);
    const char *rest = close;
    if (args) {
        const char *call = strstr(close, name);
        while (call && strstr(call + 22, name))
            call = strstr(call + 22, name);
        const char *end = call ? strrchr(call, ')') : NULL;
        if (!call || !end) {
            free(out.p);
            return NULL;
        }
        put(&out, rest, (size_t)(end - rest));
        if (end[-1] != '(')
            puts_(&out, ", ");
        puts_(&out, args);
        rest = end;
    }
    puts_(&out, rest);
    if (out.oom) {
        free(out.p);
        return NULL;
    }
    return out.p;
}

/* Makes the families of the distinct units of out (see above).  False when
 * memory runs out. */
static bool make_families(cg_csplit *out)
{
    int n = out->n;
    lits *l = calloc((size_t)n + 1, sizeof *l);
    char (*key)[65] = calloc((size_t)n + 1, sizeof *key);
    bool *ok = calloc((size_t)n + 1, sizeof *ok);
    int *differs = calloc(1, sizeof *differs);
    bool fine = l && key && ok && differs;
    for (int i = 0; fine && i < n; i++) {
        cg_unit *u = &out->units[i];
        if (u->first != i || strstr(u->shared, "_s1") || !find_lits(u->shared, &l[i])) {
            fine = !l[i].oom;
            continue;
        }
        buf k = {0};
        family_text(u->shared, &l[i], NULL, &k);
        if (!k.oom)
            rename22(k.p, u->name, FAMILY_PLACEHOLDER);
        /* A kernel that runs once, when the weights load (the prepack
         * pass names it LAYER_load_BUF), is built apart (codegen/compile.c):
         * its family holds no other kind. */
        if (strstr(u->symbol, "_load_"))
            puts_(&k, "\n/* load */");
        if (k.oom) {
            fine = false;
            free(k.p);
            break;
        }
        size_t lead = strspn(k.p, " \t\n");   /* the first kernel's has the prelude's */
        cg_sha256_hex(k.p + lead, k.len - lead, key[i]);
        free(k.p);
        ok[i] = l[i].n > 0;
    }
    for (int i = 0; fine && i < n; i++) {
        if (!ok[i])
            continue;
        /* the members: the distinct units of the same key after i */
        int nmem = 1;
        for (int j = i + 1; j < n; j++)
            nmem += ok[j] && l[j].n == l[i].n && strcmp(key[j], key[i]) == 0;
        if (nmem < 2)
            continue;
        int *d = realloc(differs, (size_t)l[i].n * sizeof *d);
        if (!d) {
            fine = false;
            break;
        }
        differs = d;
        /* a parameter for each position whose values differ among the
         * members, one for positions whose values are alike in every member
         * (a stride repeated in each unrolled statement) */
        int np = 0;
        for (int p = 0; p < l[i].n; p++) {
            bool varies = false;
            for (int j = i + 1; j < n && !varies; j++)
                varies = ok[j] && l[j].n == l[i].n && strcmp(key[j], key[i]) == 0 &&
                         l[j].v[p].val != l[i].v[p].val;
            differs[p] = -1;
            for (int q = 0; varies && q < p && differs[p] < 0; q++) {
                bool alike = differs[q] >= 0;
                for (int j = i; j < n && alike; j++)
                    alike = !(ok[j] && l[j].n == l[i].n && strcmp(key[j], key[i]) == 0) ||
                            l[j].v[p].val == l[j].v[q].val;
                if (alike)
                    differs[p] = differs[q];
            }
            if (varies && differs[p] < 0)
                differs[p] = np++;
        }
        if (np == 0 || np > FAMILY_MAX_PARAMS)
            continue;
        /* the family's code: i's text with the parameters, named after it */
        buf code = {0}, extra = {0};
        family_text(out->units[i].shared, &l[i], differs, &code);
        for (int p = 0; p < np; p++) {
            char e[32];
            snprintf(e, sizeof e, "%sint tec_p%d", p ? ", " : "", p);
            puts_(&extra, e);
        }
        char *with = code.oom || extra.oom ? NULL : add_params(code.p, out->units[i].name, extra.p, NULL);
        free(code.p);
        if (!with) {
            free(extra.p);
            fine = false;
            break;
        }
        char name[24], hex[65], old[24];
        snprintf(old, sizeof old, "%s", out->units[i].name);
        rename22(with, old, FAMILY_PLACEHOLDER);
        cg_sha256_hex(with, strlen(with), hex);
        snprintf(name, sizeof name, "tec_c_%.16s", hex);
        rename22(with, FAMILY_PLACEHOLDER, name);
        for (int j = i; j < n && fine; j++) {
            if (!ok[j] || l[j].n != l[i].n || strcmp(key[j], key[i]) != 0)
                continue;
            cg_unit *u = &out->units[j];
            buf args = {0};
            for (int q = 0; q < np; q++) {   /* each parameter's value: at its first position */
                int p = 0;
                while (differs[p] != q)
                    p++;
                char v[32];
                snprintf(v, sizeof v, "%s%lld", q ? ", " : "", l[j].v[p].val);
                puts_(&args, v);
            }
            /* j's forwarder, and those of the kernels that shared j's code */
            char oldname[24];
            memcpy(oldname, u->name, sizeof oldname);
            for (int m = j; m < n && fine; m++) {
                cg_unit *w = &out->units[m];
                if (m != j && w->first != j)
                    continue;
                char *glue = args.oom ? NULL : add_params(w->glue, oldname, extra.p, args.p);
                if (!glue) {
                    fine = false;
                    break;
                }
                rename22(glue, oldname, name);
                free(w->glue);
                w->glue = glue;
                w->plain = false;   /* it passes the family's constants */
                memcpy(w->name, name, sizeof name);
                if (m != i)
                    w->first = i;
            }
            free(args.p);
            out->distinct -= j != i;
            ok[j] = false;
        }
        free(extra.p);
        if (fine) {
            free(out->units[i].shared);
            out->units[i].shared = with;
        } else {
            free(with);
        }
    }
    for (int i = 0; l && i < n; i++)
        free(l[i].v);
    free(l);
    free(key);
    free(ok);
    free(differs);
    return fine;
}

bool cg_split_c(const char *src, cg_csplit *out)
{
    memset(out, 0, sizeof *out);
    scan sc = {src, 0, strlen(src)};
    item it, statics[8];
    int nstatic = 0;
    bool bad, in_kernels = false;
    idset prelude_ids = {0};
    size_t prelude_end = 0, unit_start = 0, prev_end = 0;
    while (next_item(&sc, &it, &bad)) {
        bool kernelish = it.kind == IT_FUNC && is_kernel_name(&sc, it.name);
        if (!in_kernels && !kernelish) {
            /* The prelude: declarations, # lines, static (inline) helpers. */
            if (it.kind == IT_FUNC && !tok_is(&sc, it.first, "static"))
                goto fail;
            prev_end = it.end;
            continue;
        }
        if (!kernelish)
            goto fail;
        if (!in_kernels) {
            in_kernels = true;
            prelude_end = prev_end;
        }
        if (nstatic == 0)
            unit_start = prev_end;   /* the unit's comment goes with it */
        if (tok_is(&sc, it.first, "static")) {
            if (nstatic == (int)(sizeof statics / sizeof *statics))
                goto fail;
            statics[nstatic++] = it;
        } else if (tok_is(&sc, it.first, "int32_t") && it.first.end <= it.name.start) {
            if (!prelude_ids.s) {
                prelude_ids.s = src;
                scan ps = {src, 0, prelude_end};
                for (tok t = next(&ps); t.kind != TK_EOF; t = next(&ps))
                    if (t.kind == TK_ID)
                        idset_add(&prelude_ids, t);
                    else if (t.kind == TK_PP)   /* #define NAME(...) */
                        for (size_t i = t.start; i < t.end; i++)
                            if (id_start(src[i]) && (i == t.start || !id_char(src[i - 1]))) {
                                size_t e = i;
                                while (e < t.end && id_char(src[e]))
                                    e++;
                                idset_add(&prelude_ids, (tok){TK_ID, i, e});
                                i = e;
                            }
                if (prelude_ids.oom)
                    goto fail;
            }
            if (!add_unit(out, src, &prelude_ids, unit_start, statics, nstatic, &it))
                goto fail;
            nstatic = 0;
        } else {
            goto fail;
        }
        prev_end = it.end;
    }
    if (bad || !in_kernels || nstatic > 0)
        goto fail;
    /* Nothing may follow the last kernel but space and comments: checked
     * by next_item returning false without *bad. */
    buf pre = {0}, ext = {0};
    put(&pre, src, prelude_end);
    puts_(&pre, "\n");
    extern_prelude(src, prelude_end, &ext);
    puts_(&ext, "\n");
    if (pre.oom || ext.oom) {
        free(pre.p);
        free(ext.p);
        goto fail;
    }
    out->prelude = pre.p;
    out->prelude_extern = ext.p;
    if (!make_families(out) || !cut_prelude(src, prelude_end, out))
        goto fail;
    free(prelude_ids.t);
    return true;
fail:
    free(prelude_ids.t);
    cg_split_free(out);
    return false;
}

void cg_split_free(cg_csplit *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->units[i].symbol);
        free(s->units[i].shared);
        free(s->units[i].prelude);
        free(s->units[i].glue);
        free(s->units[i].proto);
        free(s->units[i].need);
    }
    for (int i = 0; i < s->npre; i++)
        free(s->pre_items[i]);
    free(s->pre_items);
    free(s->pre_include);
    free(s->units);
    free(s->prelude);
    free(s->prelude_extern);
    free(s->glue_prelude);
    memset(s, 0, sizeof *s);
}
