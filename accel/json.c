/* accel/json.c — the small JSON reader of accel/json.h (RFC 8259 values;
 * \u escapes are decoded to UTF-8). */
#include "accel/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *name;
    const char *s, *end;
    int line, col;
    char *err;
    size_t errlen;
    bool failed;
} parser;

static void perr(parser *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void perr(parser *p, int line, int col, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    int n = snprintf(p->err, p->errlen, "%s:%d:%d: error: ", p->name, line, col);
    if (n < 0 || (size_t)n >= p->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static int peek(const parser *p)
{
    return p->s < p->end ? (unsigned char)*p->s : -1;
}

static void advance(parser *p)
{
    if (p->s >= p->end)
        return;
    if (*p->s == '\n') {
        p->line++;
        p->col = 1;
    } else {
        p->col++;
    }
    p->s++;
}

static void skip_space(parser *p)
{
    while (peek(p) == ' ' || peek(p) == '\t' || peek(p) == '\n' || peek(p) == '\r')
        advance(p);
}

static const char *describe(int c, char buf[16])
{
    if (c < 0)
        return "the end of the file";
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, 16, "'%c'", c);
    else
        snprintf(buf, 16, "byte 0x%02x", c);
    return buf;
}

static acc_json *new_value(parser *p, acc_json_kind k)
{
    acc_json *v = calloc(1, sizeof *v);
    if (!v) {
        perr(p, p->line, p->col, "out of memory");
        return NULL;
    }
    v->kind = k;
    v->line = p->line;
    v->col = p->col;
    return v;
}

/* A growable byte buffer for strings. */
typedef struct sbuf {
    char *v;
    size_t n, cap;
} sbuf;

static bool sb_put(sbuf *b, char c)
{
    if (b->n + 1 >= b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 32;
        char *v = realloc(b->v, cap);
        if (!v)
            return false;
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = c;
    b->v[b->n] = '\0';
    return true;
}

static bool sb_utf8(sbuf *b, unsigned long cp)
{
    if (cp < 0x80)
        return sb_put(b, (char)cp);
    if (cp < 0x800)
        return sb_put(b, (char)(0xc0 | (cp >> 6))) && sb_put(b, (char)(0x80 | (cp & 0x3f)));
    if (cp < 0x10000)
        return sb_put(b, (char)(0xe0 | (cp >> 12))) &&
               sb_put(b, (char)(0x80 | ((cp >> 6) & 0x3f))) &&
               sb_put(b, (char)(0x80 | (cp & 0x3f)));
    return sb_put(b, (char)(0xf0 | (cp >> 18))) && sb_put(b, (char)(0x80 | ((cp >> 12) & 0x3f))) &&
           sb_put(b, (char)(0x80 | ((cp >> 6) & 0x3f))) && sb_put(b, (char)(0x80 | (cp & 0x3f)));
}

static bool hex4(parser *p, unsigned long *out)
{
    unsigned long v = 0;
    for (int i = 0; i < 4; i++) {
        int c = peek(p), d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else {
            char buf[16];
            perr(p, p->line, p->col, "bad \\u escape: expected a hex digit, found %s",
                 describe(c, buf));
            return false;
        }
        v = v * 16 + (unsigned long)d;
        advance(p);
    }
    *out = v;
    return true;
}

/* A string literal at the current '"'; returns it malloc'ed. */
static char *parse_string(parser *p)
{
    int line = p->line, col = p->col;
    advance(p);                /* the opening quote */
    sbuf b = {0};
    for (;;) {
        int c = peek(p);
        char buf[16];
        if (c < 0) {
            perr(p, line, col, "unterminated string");
            break;
        }
        if (c < 0x20) {
            perr(p, p->line, p->col, "%s inside a string (escape it)", describe(c, buf));
            break;
        }
        if (c == '"') {
            advance(p);
            if (!b.v && !(b.v = strdup("")))
                perr(p, line, col, "out of memory");
            return b.v;
        }
        if (c != '\\') {
            if (!sb_put(&b, (char)c)) {
                perr(p, p->line, p->col, "out of memory");
                break;
            }
            advance(p);
            continue;
        }
        int el = p->line, ec = p->col;
        advance(p);
        c = peek(p);
        const char *simple = strchr("\"\\/bfnrt", c > 0 ? c : '?');
        bool ok;
        if (c > 0 && simple) {
            static const char out[] = "\"\\/\b\f\n\r\t";
            ok = sb_put(&b, out[simple - "\"\\/bfnrt"]);
            advance(p);
        } else if (c == 'u') {
            advance(p);
            unsigned long cp, lo;
            if (!hex4(p, &cp))
                break;
            if (cp >= 0xd800 && cp < 0xdc00 && peek(p) == '\\') {
                advance(p);
                if (peek(p) != 'u') {
                    perr(p, el, ec, "a high surrogate \\u%04lx without its low half", cp);
                    break;
                }
                advance(p);
                if (!hex4(p, &lo))
                    break;
                if (lo < 0xdc00 || lo >= 0xe000) {
                    perr(p, el, ec, "a high surrogate \\u%04lx without its low half", cp);
                    break;
                }
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            ok = sb_utf8(&b, cp);
        } else {
            perr(p, el, ec, "bad escape \\%s in a string", c < 0 ? "" : describe(c, buf));
            break;
        }
        if (!ok) {
            perr(p, el, ec, "out of memory");
            break;
        }
    }
    free(b.v);
    return NULL;
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

static acc_json *parse_number(parser *p)
{
    acc_json *v = new_value(p, ACC_JSON_NUMBER);
    if (!v)
        return NULL;
    const char *start = p->s;
    bool integral = true;
    char buf[16];
    if (peek(p) == '-')
        advance(p);
    if (peek(p) == '0') {
        advance(p);
    } else if (is_digit(peek(p))) {
        while (is_digit(peek(p)))
            advance(p);
    } else {
        perr(p, p->line, p->col, "bad number: expected a digit, found %s", describe(peek(p), buf));
        free(v);
        return NULL;
    }
    if (peek(p) == '.') {
        integral = false;
        advance(p);
        if (!is_digit(peek(p))) {
            perr(p, p->line, p->col, "bad number: expected a digit after '.'");
            free(v);
            return NULL;
        }
        while (is_digit(peek(p)))
            advance(p);
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        integral = false;
        advance(p);
        if (peek(p) == '+' || peek(p) == '-')
            advance(p);
        if (!is_digit(peek(p))) {
            perr(p, p->line, p->col, "bad number: expected a digit in the exponent");
            free(v);
            return NULL;
        }
        while (is_digit(peek(p)))
            advance(p);
    }
    size_t n = (size_t)(p->s - start);
    char text[64];
    if (n >= sizeof text) {
        /* longer than any double or int64 needs: keep it as a double */
        char *t = strndup(start, n);
        v->number = t ? strtod(t, NULL) : 0;
        free(t);
        return v;
    }
    memcpy(text, start, n);
    text[n] = '\0';
    v->number = strtod(text, NULL);
    if (integral) {
        errno = 0;
        long long i = strtoll(text, NULL, 10);
        if (errno == 0) {
            v->is_int = true;
            v->integer = i;
        }
    }
    return v;
}

static bool append(parser *p, acc_json *v, char *key, acc_json *item)
{
    acc_json **items = realloc(v->items, (size_t)(v->n + 1) * sizeof *items);
    if (items)
        v->items = items;
    char **keys = items && v->kind == ACC_JSON_OBJECT
                      ? realloc(v->keys, (size_t)(v->n + 1) * sizeof *keys) : v->keys;
    if (keys)
        v->keys = keys;
    if (!items || (v->kind == ACC_JSON_OBJECT && !keys)) {
        perr(p, p->line, p->col, "out of memory");
        return false;
    }
    if (v->kind == ACC_JSON_OBJECT)
        v->keys[v->n] = key;
    v->items[v->n++] = item;
    return true;
}

static acc_json *parse_value(parser *p, int depth);

/* An array or object at its opening bracket. */
static acc_json *parse_container(parser *p, int depth)
{
    bool object = peek(p) == '{';
    int close = object ? '}' : ']';
    acc_json *v = new_value(p, object ? ACC_JSON_OBJECT : ACC_JSON_ARRAY);
    if (!v)
        return NULL;
    if (depth >= ACC_JSON_MAX_DEPTH) {
        perr(p, p->line, p->col, "nested deeper than %d levels", ACC_JSON_MAX_DEPTH);
        free(v);
        return NULL;
    }
    advance(p);
    skip_space(p);
    if (peek(p) == close) {
        advance(p);
        return v;
    }
    char buf[16];
    for (;;) {
        char *key = NULL;
        skip_space(p);
        if (object) {
            if (peek(p) != '"') {
                perr(p, p->line, p->col, "expected a quoted key, found %s",
                     describe(peek(p), buf));
                break;
            }
            if (!(key = parse_string(p)))
                break;
            skip_space(p);
            if (peek(p) != ':') {
                perr(p, p->line, p->col, "expected ':' after the key \"%s\", found %s", key,
                     describe(peek(p), buf));
                free(key);
                break;
            }
            advance(p);
        }
        acc_json *item = parse_value(p, depth + 1);
        if (!item || !append(p, v, key, item)) {
            free(key);
            acc_json_free(item);
            break;
        }
        skip_space(p);
        if (peek(p) == ',') {
            advance(p);
            continue;
        }
        if (peek(p) == close) {
            advance(p);
            return v;
        }
        perr(p, p->line, p->col, "expected ',' or '%c' in %s, found %s", close,
             object ? "an object" : "an array", describe(peek(p), buf));
        break;
    }
    acc_json_free(v);
    return NULL;
}

static acc_json *parse_word(parser *p, const char *word, acc_json_kind k, bool b)
{
    size_t n = strlen(word);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n) != 0) {
        perr(p, p->line, p->col, "expected a value");
        return NULL;
    }
    acc_json *v = new_value(p, k);
    if (v)
        v->boolean = b;
    for (size_t i = 0; i < n; i++)
        advance(p);
    return v;
}

static acc_json *parse_value(parser *p, int depth)
{
    skip_space(p);
    int c = peek(p);
    char buf[16];
    switch (c) {
    case '{':
    case '[':
        return parse_container(p, depth);
    case '"': {
        acc_json *v = new_value(p, ACC_JSON_STRING);
        if (v && !(v->string = parse_string(p))) {
            free(v);
            return NULL;
        }
        return v;
    }
    case 't': return parse_word(p, "true", ACC_JSON_BOOL, true);
    case 'f': return parse_word(p, "false", ACC_JSON_BOOL, false);
    case 'n': return parse_word(p, "null", ACC_JSON_NULL, false);
    default:
        if (c == '-' || is_digit(c))
            return parse_number(p);
        perr(p, p->line, p->col, "expected a value, found %s", describe(c, buf));
        return NULL;
    }
}

acc_json *acc_json_parse(const char *name, const char *text, size_t len, char *err,
                         size_t errlen)
{
    parser p = {name, text, text + len, 1, 1, err, errlen, false};
    acc_json *v = parse_value(&p, 0);
    if (v) {
        skip_space(&p);
        if (p.s < p.end) {
            perr(&p, p.line, p.col, "text after the end of the JSON value");
            acc_json_free(v);
            v = NULL;
        }
    }
    return v;
}

void acc_json_free(acc_json *v)
{
    if (!v)
        return;
    for (int i = 0; i < v->n; i++) {
        acc_json_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    free(v);
}

const acc_json *acc_json_get(const acc_json *obj, const char *key)
{
    if (!obj || obj->kind != ACC_JSON_OBJECT)
        return NULL;
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

void acc_json_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

const char *acc_json_kind_name(acc_json_kind k)
{
    static const char *const names[] = {"null", "a boolean", "a number", "a string",
                                        "an array", "an object"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}
