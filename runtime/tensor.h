/* runtime/tensor.h — host tensors: the storage that inputs, weights and
 * outputs live in between .npy files, default data and kernels.
 *
 * A tensor is dense, row-major, little-endian host memory of one ir dtype.
 * Its data is 64-byte aligned (a cache line; what vectorized kernels and
 * aligned loads want) and zeroed when created.
 */
#ifndef TEC_RUNTIME_TENSOR_H
#define TEC_RUNTIME_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Most dimensions a runtime tensor (and a .npy file tec reads) may have. */
#define RT_MAX_DIMS 8

/* One host tensor.  shape[0..ndim) are the extents (>= 0; a zero extent
 * gives an empty tensor); ndim 0 is a scalar of one element.  data is never
 * NULL (an empty tensor still owns a small aligned block). */
typedef struct rt_tensor {
    ir_dtype dtype;
    int ndim;
    int64_t shape[RT_MAX_DIMS];
    void *data;            /* 64-byte aligned, zeroed at creation */
    size_t nbytes;         /* numel * element size */
    bool borrowed;         /* data belongs to memory that outlives the tensor
                              (a mapped cache file): rt_tensor_free leaves it */
} rt_tensor;

/* A new zeroed tensor, or NULL with a message in err (no "tec: error:"
 * prefix; callers add their context) when the dtype, rank or an extent is
 * invalid, the byte size overflows, or memory runs out. */
rt_tensor *rt_tensor_new(ir_dtype t, int ndim, const int64_t *shape, char *err, size_t errlen);
void rt_tensor_free(rt_tensor *t);     /* NULL is fine */

/* n zero bytes, 64-byte aligned, or NULL when memory runs out: small
 * blocks from malloc (cleared), large ones (RT_ZALLOC_MAP bytes or more)
 * mapped fresh from the system, whose pages come zero (and all at once),
 * so the memory is written once, by its first user, not cleared first.
 * Free with rt_zfree(p, n), the same n.  A block of RT_ZALLOC_MAP bytes or
 * more that the caller mapped itself, starting on a page, is freed the same
 * way: rt_zfree (and rt_tensor_free of a tensor whose data it is) unmaps its
 * whole pages from p and nothing else (the import and consts caches hand
 * out weights mapped from their files so: driver/runcache.c,
 * testsuite/unit/test_mapped_weights.c). */
#define RT_ZALLOC_MAP ((size_t)1 << 20)
void *rt_zalloc(size_t n);
void rt_zfree(void *p, size_t n);

int64_t rt_tensor_numel(const rt_tensor *t);

/* Element flat_index (row-major) as a double, whatever the dtype (i64
 * values beyond 2^53 are rounded).  flat_index must be in [0, numel). */
double rt_tensor_get(const rt_tensor *t, int64_t flat_index);
/* Element flat_index of an integer or bool tensor, exactly. */
int64_t rt_tensor_get_int(const rt_tensor *t, int64_t flat_index);
/* Stores v converted to the dtype: floats round to nearest, integers
 * truncate toward zero and saturate at the type's limits (NaN gives 0),
 * bool is v != 0. */
void rt_tensor_set(rt_tensor *t, int64_t flat_index, double v);

/* malloc'ed "f32[1, 3, 224, 224]" ("f32[]" for a scalar), or NULL when out
 * of memory; the caller frees it. */
char *rt_shape_str(ir_dtype t, int ndim, const int64_t *shape);

#endif
