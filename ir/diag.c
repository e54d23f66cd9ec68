/* ir/diag.c — GNU-style diagnostics with the offending source line. */
#include "ir/diag.h"

#include "ir/vec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void diag_init(diag *d, FILE *out)
{
    memset(d, 0, sizeof *d);
    d->out = out;
    d->max_errors = 50;
}

void diag_fini(diag *d)
{
    free(d->sources);
    d->sources = NULL;
    d->nsources = d->capsources = 0;
}

void diag_add_source(diag *d, const char *file, const char *text, size_t len)
{
    diag_source *s = ir_vec_reserve(d->sources, d->nsources, &d->capsources, sizeof *s);
    if (!s)
        return; /* only the caret display is lost */
    d->sources = s;
    d->sources[d->nsources++] = (diag_source){file, text, len};
}

/* The most recently added text registered under `file`. */
static const diag_source *find_source(const diag *d, const char *file)
{
    if (!file)
        return NULL;
    for (int i = d->nsources - 1; i >= 0; i--)
        if (strcmp(d->sources[i].file, file) == 0)
            return &d->sources[i];
    return NULL;
}

/* The most source columns shown: a longer line is cut to a window around
 * the caret, marked by "..." at the cut ends. */
#define DIAG_MAX_SHOWN 160

/* Prints "  12 | source line" and the caret under column `col`.  Tabs in
 * the source are kept in the caret line so the caret lines up in a
 * terminal whatever its tab width; control characters are shown as '?',
 * so that a source line cannot send escape sequences to the terminal.
 * Each line goes out in one write (stderr is unbuffered). */
static void show_line(const diag *d, diag_loc loc)
{
    const diag_source *src = find_source(d, loc.file);
    if (!src || loc.line <= 0)
        return;
    const char *p = src->text, *end = src->text + src->len;
    for (int line = 1; line < loc.line && p < end; p++)
        if (*p == '\n')
            line++;
    if (p >= end && loc.line > 1)
        return;
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol)
        eol = end;
    size_t len = (size_t)(eol - p);
    if (len > 0 && p[len - 1] == '\r')
        len--;
    size_t caret = loc.col > 1 ? (size_t)loc.col - 1 : 0;   /* 0-based */
    if (caret > len)
        caret = len;
    size_t from = 0, to = len;
    if (len > DIAG_MAX_SHOWN) {
        from = caret > DIAG_MAX_SHOWN / 2 ? caret - DIAG_MAX_SHOWN / 2 : 0;
        to = from + DIAG_MAX_SHOWN < len ? from + DIAG_MAX_SHOWN : len;
    }
    const char *pre = from > 0 ? "..." : "", *post = to < len ? "..." : "";
    char text[DIAG_MAX_SHOWN + 8], marks[DIAG_MAX_SHOWN + 8];
    size_t n = 0, m = 0;
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)p[i];
        text[n++] = c == '\t' ? '\t' : c < 0x20 || c == 0x7f ? '?' : (char)c;
        if (i < caret)
            marks[m++] = c == '\t' ? '\t' : ' ';
    }
    fprintf(d->out, "%5d | %s%.*s%s\n      | %s%.*s^\n", loc.line, pre, (int)n, text, post,
            *pre ? "   " : "", (int)m, marks);
}

static void report(diag *d, diag_loc loc, const char *kind, const char *fmt,
                   va_list ap)
{
    if (!d->out)
        return;
    if (loc.file && loc.line > 0)
        fprintf(d->out, "%s:%d:%d: %s: ", loc.file, loc.line, loc.col, kind);
    else if (loc.file)
        fprintf(d->out, "%s: %s: ", loc.file, kind);
    else
        fprintf(d->out, "tec: %s: ", kind);
    vfprintf(d->out, fmt, ap);
    fputc('\n', d->out);
    show_line(d, loc);
}

void diag_error(diag *d, diag_loc loc, const char *fmt, ...)
{
    d->nerrors++;
    if (d->max_errors && d->nerrors > d->max_errors) {
        if (d->nerrors == d->max_errors + 1 && d->out)
            fprintf(d->out, "tec: note: too many errors; the rest are not shown\n");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    report(d, loc, "error", fmt, ap);
    va_end(ap);
}

void diag_warning(diag *d, diag_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(d, loc, "warning", fmt, ap);
    va_end(ap);
}

void diag_note(diag *d, diag_loc loc, const char *fmt, ...)
{
    if (d->max_errors && d->nerrors > d->max_errors)
        return;
    va_list ap;
    va_start(ap, fmt);
    report(d, loc, "note", fmt, ap);
    va_end(ap);
}

void diag_internal(diag *d, const char *where, const char *fmt, ...)
{
    d->nerrors++;
    d->ninternal++;
    if (!d->out)
        return;
    fprintf(d->out, "tec: internal error: %s: ", where);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(d->out, fmt, ap);
    va_end(ap);
    fputc('\n', d->out);
}

/* ---------------------------------------------------------------- suggestions */

/* Edits between two names (insert, delete, replace, or swap two adjacent
 * letters: "rleu" is one edit from "relu"). */
static int edit_distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 40 || lb > 40)
        return 99;
    int d[41][41];
    for (int i = 0; i <= la; i++)
        d[i][0] = i;
    for (int j = 0; j <= lb; j++)
        d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *diag_closest(const char *name, const char *const *cands, int n)
{
    size_t len = strlen(name);
    int limit = len <= 1 ? 0 : len <= 5 ? 1 : 2, best = limit + 1;
    const char *found = NULL;
    for (int i = 0; i < n; i++) {
        if (!cands[i] || strcmp(cands[i], name) == 0)
            continue;
        int dist = edit_distance(name, cands[i]);
        if (dist < best) {
            best = dist;
            found = cands[i];
        }
    }
    return found;
}
