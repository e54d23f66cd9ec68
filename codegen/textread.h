/* codegen/textread.h — reading the line-oriented text that tec writes for
 * itself (the kernel table, the run cache's fields): a cursor over bytes
 * whose every step fails, moving nothing, at the first thing that is not
 * as written. */
#ifndef TEC_CODEGEN_TEXTREAD_H
#define TEC_CODEGEN_TEXTREAD_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cg_reader {
    const char *p, *end;
} cg_reader;

/* The exact text s. */
bool cg_read_lit(cg_reader *r, const char *s);
/* A decimal number (optionally negative) in [lo, hi]. */
bool cg_read_num(cg_reader *r, long long lo, long long hi, long long *v);
/* LEN:BYTES, without NUL bytes, as a malloc'ed string (NULL: not so, or
 * out of memory). */
char *cg_read_str(cg_reader *r);
/* A word up to the next space or newline (not empty, shorter than n) into out. */
bool cg_read_word(cg_reader *r, char *out, size_t n);

#endif
