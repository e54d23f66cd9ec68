/* passes/ptrset.h — sorted arrays of pointers: membership and position by
 * binary search, for the passes that look graph buffers and functions up
 * once per graph call (fuse, layout), so a graph of thousands of calls
 * costs n log n, not n^2. */
#ifndef TEC_PASSES_PTRSET_H
#define TEC_PASSES_PTRSET_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

static inline int pass_cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;
    return x < y ? -1 : x > y;
}

/* A sorted copy of p[0..n) in m's arena. */
static inline const void **pass_sorted_ptrs(ir_module *m, void *const *p, int n)
{
    const void **s = ir_alloc(m->arena, sizeof *s * (size_t)(n + 1));
    if (n)
        memcpy(s, p, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, pass_cmp_ptr);
    return s;
}

/* The position of p in sorted[0..n), or -1. */
static inline int pass_find_ptr(const void *const *sorted, int n, const void *p)
{
    const void *const *at = bsearch(&p, sorted, (size_t)n, sizeof *sorted, pass_cmp_ptr);
    return at ? (int)(at - sorted) : -1;
}

#endif
