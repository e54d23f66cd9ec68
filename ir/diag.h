/* ir/diag.h — diagnostics in GNU style, shared by every stage.
 *
 *   net.te:3:14: error: shape mismatch in matmul: A is f32[64, 32] but ...
 *       3 |     C[i, j] += A[i, k] * B[j, k]
 *         |              ^
 *
 * Errors without a location print as "tec: error: ...".  Internal errors
 * (bugs in tec, not in the user's program) say "internal error" and name the
 * pass or op; the CLI exits 70 when any was reported.
 */
#ifndef TEC_DIAG_H
#define TEC_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* 1-based line and column; line 0 means "no location". */
typedef struct diag_loc {
    const char *file;
    int line, col;
} diag_loc;

typedef struct diag_source {
    const char *file;
    const char *text;
    size_t len;
} diag_source;

typedef struct diag {
    FILE *out;             /* where messages go (stderr in the CLI); NULL: nowhere,
                              only counted */
    int nerrors;
    int ninternal;         /* internal errors among nerrors */
    int max_errors;        /* stop printing after this many (0: no cap) */
    diag_source *sources;  /* texts used to show the offending line */
    int nsources, capsources;
} diag;

void diag_init(diag *d, FILE *out);
void diag_fini(diag *d);
/* Registers a source text for caret display; the text must outlive d. */
void diag_add_source(diag *d, const char *file, const char *text, size_t len);

void diag_error(diag *d, diag_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_warning(diag *d, diag_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A note follows an error and adds context (where a shape was declared). */
void diag_note(diag *d, diag_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "tec: internal error: <where>: ..." */
void diag_internal(diag *d, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The candidate closest to name (insertions, deletions, replacements and
 * swaps of two adjacent letters: "rleu" is one edit from "relu"), if close
 * enough to be a typo (1 edit for names up to 5 letters, 2 beyond), for a
 * "did you mean" hint; else NULL.  NULL candidates are skipped. */
const char *diag_closest(const char *name, const char *const *cands, int n);

static inline diag_loc diag_noloc(void) { diag_loc l = {0, 0, 0}; return l; }

#endif
