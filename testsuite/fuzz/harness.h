/* testsuite/fuzz/harness.h — what the libFuzzer harnesses share
 * (testsuite/fuzz.sh builds and runs them; doc/testing.md).
 *
 * A harness feeds its bytes to one reader of tec's.  Any input may be
 * refused with an error; what counts as a bug is a crash, a hang, a
 * sanitizer report, or an internal error (diag's ninternal), which
 * fuzz_fail turns into an abort so that libFuzzer saves the input. */
#ifndef TEC_FUZZ_HARNESS_H
#define TEC_FUZZ_HARNESS_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ir/diag.h"

/* Where diagnostics go: nowhere (they are expected). */
static inline FILE *fuzz_null(void)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w")))
        abort();
    return null;
}

/* The bytes as a NUL-terminated string (malloc'ed). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *t = malloc(size + 1);
    if (!t)
        abort();
    memcpy(t, data, size);
    t[size] = '\0';
    return t;
}

/* The bytes as a file, for readers that take a path: an anonymous memory
 * file, named through /proc (close *fd when done). */
static inline const char *fuzz_file(const uint8_t *data, size_t size, int *fd, char *path, size_t n)
{
    *fd = memfd_create("fuzz", 0);
    if (*fd < 0 || (size && write(*fd, data, size) != (ssize_t)size))
        abort();
    snprintf(path, n, "/proc/self/fd/%d", *fd);
    return path;
}

/* An internal error is a bug of tec's, whatever the input. */
static inline void fuzz_check(const diag *d, const char *what)
{
    if (d->ninternal) {
        fprintf(stderr, "fuzz: internal error in %s\n", what);
        abort();
    }
}

#endif
