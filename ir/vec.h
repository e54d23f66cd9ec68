/* ir/vec.h — growable arrays on the heap (arrays in a module's arena grow
 * with IR_PUSH, ir/ir.h).
 *
 *   item *p = ir_vec_reserve(v->items, v->n, &v->cap, sizeof *p);
 *   if (!p)
 *       ... out of memory: v->items is unchanged and still valid ...
 *   v->items = p;
 *   v->items[v->n++] = x;
 *
 * free(v->items) releases the array. */
#ifndef TEC_IR_VEC_H
#define TEC_IR_VEC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* arr (n elements of elem bytes in use, *cap allocated) with room for one
 * more: arr itself while n < *cap, else arr reallocated to twice the
 * capacity (8 at first) and *cap updated.  NULL when memory or the
 * capacity runs out; arr is then untouched. */
static inline void *ir_vec_reserve(void *arr, int n, int *cap, size_t elem)
{
    if (n < *cap)
        return arr;
    if (*cap > INT_MAX / 2 || elem == 0)
        return NULL;
    int nc = *cap ? *cap * 2 : 8;
    if ((size_t)nc > SIZE_MAX / elem)
        return NULL;
    void *p = realloc(arr, elem * (size_t)nc);
    if (p)
        *cap = nc;
    return p;
}

#endif
