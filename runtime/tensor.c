/* runtime/tensor.c — host tensors (see tensor.h). */
#include "runtime/tensor.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ir/interp.h"   /* f16/bf16 conversions shared with the interpreter */

/* Alignment of tensor data: one cache line, enough for any vector load. */
#define RT_ALIGN 64

/* Writes "<before><shape text><after>" into err. */
static void shape_err(char *err, size_t errlen, const char *before, ir_dtype t, int ndim,
                      const int64_t *shape, const char *after)
{
    char *s = rt_shape_str(t, ndim, shape);
    if (err && errlen)
        snprintf(err, errlen, "%s%s%s", before, s ? s : "(a tensor)", after);
    free(s);
}

/* Huge pages of transparent huge pages on x86-64 (and their alignment). */
#define RT_HUGE_PAGE ((size_t)2 << 20)

/* The bytes a mapping of n bytes spans: whole pages. */
static size_t mapped_bytes(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (n + page - 1) / page * page;
}

void *rt_zalloc(size_t n)
{
    if (n < RT_ZALLOC_MAP) {
        size_t alloc = (n + RT_ALIGN - 1) / RT_ALIGN * RT_ALIGN;
        void *p = aligned_alloc(RT_ALIGN, alloc ? alloc : RT_ALIGN);
        if (p)
            memset(p, 0, alloc ? alloc : RT_ALIGN);
        return p;
    }
    size_t len = mapped_bytes(n);
#if defined(MADV_HUGEPAGE) && defined(MADV_POPULATE_WRITE)
    /* A block of a huge page or more starts on a huge-page boundary and
     * asks for huge pages (where transparent huge pages are "madvise"),
     * then is populated: one fault and one TLB entry per 2 MiB instead of
     * 512 (ResNet-18's default data and packed weights, 47 MB:
     * bench/results/start.txt).  A kernel that refuses either falls back
     * to the plain mapping below. */
    if (len >= RT_HUGE_PAGE && len <= SIZE_MAX - RT_HUGE_PAGE) {
        char *raw = mmap(NULL, len + RT_HUGE_PAGE, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw != MAP_FAILED) {
            char *p = (char *)(((uintptr_t)raw + RT_HUGE_PAGE - 1) & ~(uintptr_t)(RT_HUGE_PAGE - 1));
            if (p > raw)
                munmap(raw, (size_t)(p - raw));
            size_t tail = (size_t)(raw + len + RT_HUGE_PAGE - (p + len));
            if (tail)
                munmap(p + len, tail);
            madvise(p, len, MADV_HUGEPAGE);
            if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
                return p;
            munmap(p, len);
        }
    }
#endif
    /* Populated: the kernel makes every page in one go, cheaper than a
     * fault per page as the first user writes (GPT-2's default data and
     * packed weights, 1.0 GB: 7% less CPU). */
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void rt_zfree(void *p, size_t n)
{
    if (!p)
        return;
    if (n < RT_ZALLOC_MAP)
        free(p);
    else
        munmap(p, mapped_bytes(n));
}

rt_tensor *rt_tensor_new(ir_dtype t, int ndim, const int64_t *shape, char *err, size_t errlen)
{
    if ((unsigned)t >= IR_NDTYPES) {
        if (err && errlen)
            snprintf(err, errlen, "invalid dtype %d for a tensor", (int)t);
        return NULL;
    }
    if (ndim < 0 || ndim > RT_MAX_DIMS) {
        if (err && errlen)
            snprintf(err, errlen, "a tensor of %d dimensions is not supported (at most %d)",
                     ndim, RT_MAX_DIMS);
        return NULL;
    }
    uint64_t nbytes = (uint64_t)ir_dtype_size(t);
    bool too_big = false;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            shape_err(err, errlen, "negative extent in tensor shape ", t, ndim, shape, "");
            return NULL;
        }
        too_big |= __builtin_mul_overflow(nbytes, (uint64_t)shape[d], &nbytes);
    }
    /* Room for rounding up to the alignment, and sizes a pointer difference
     * can still express. */
    if (too_big || nbytes > (uint64_t)PTRDIFF_MAX - RT_ALIGN) {
        shape_err(err, errlen, "tensor ", t, ndim, shape, " is too large (its byte size overflows)");
        return NULL;
    }
    rt_tensor *x = calloc(1, sizeof *x);
    void *data = x ? rt_zalloc((size_t)nbytes) : NULL;
    if (!data) {
        shape_err(err, errlen, "out of memory allocating tensor ", t, ndim, shape, "");
        free(x);
        return NULL;
    }
    x->dtype = t;
    x->ndim = ndim;
    for (int d = 0; d < ndim; d++)
        x->shape[d] = shape[d];
    x->data = data;
    x->nbytes = (size_t)nbytes;
    return x;
}

void rt_tensor_free(rt_tensor *t)
{
    if (!t)
        return;
    if (!t->borrowed)
        rt_zfree(t->data, t->nbytes);
    free(t);
}

int64_t rt_tensor_numel(const rt_tensor *t)
{
    /* nbytes fits in size_t, so the product of the extents cannot overflow */
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

double rt_tensor_get(const rt_tensor *t, int64_t i)
{
    const void *p = t->data;
    switch (t->dtype) {
    case IR_BOOL: return ((const uint8_t *)p)[i] != 0;
    case IR_I8: return ((const int8_t *)p)[i];
    case IR_U8: return ((const uint8_t *)p)[i];
    case IR_I16: return ((const int16_t *)p)[i];
    case IR_I32: return ((const int32_t *)p)[i];
    case IR_I64: return (double)((const int64_t *)p)[i];
    case IR_F16: return ir_f16_to_f32(((const uint16_t *)p)[i]);
    case IR_BF16: return ir_bf16_to_f32(((const uint16_t *)p)[i]);
    case IR_F32: return ((const float *)p)[i];
    case IR_F64: return ((const double *)p)[i];
    default: return NAN;
    }
}

int64_t rt_tensor_get_int(const rt_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case IR_I8: return ((const int8_t *)t->data)[i];
    case IR_U8: return ((const uint8_t *)t->data)[i];
    case IR_I16: return ((const int16_t *)t->data)[i];
    case IR_I32: return ((const int32_t *)t->data)[i];
    case IR_I64: return ((const int64_t *)t->data)[i];
    default: return ((const uint8_t *)t->data)[i] != 0;
    }
}

/* v truncated toward zero and clamped to [lo, hi]; NaN gives 0.  The limits
 * are compared as doubles: 2^63 and 2^31 are exact. */
static int64_t saturate(double v, double lo, double hi, int64_t ilo, int64_t ihi)
{
    if (isnan(v))
        return 0;
    if (v <= lo)
        return ilo;
    if (v >= hi)
        return ihi;
    return (int64_t)v;
}

void rt_tensor_set(rt_tensor *t, int64_t i, double v)
{
    void *p = t->data;
    switch (t->dtype) {
    case IR_BOOL:
        ((uint8_t *)p)[i] = v != 0;
        break;
    case IR_I8:
        ((int8_t *)p)[i] = (int8_t)saturate(v, INT8_MIN, INT8_MAX, INT8_MIN, INT8_MAX);
        break;
    case IR_U8:
        ((uint8_t *)p)[i] = (uint8_t)saturate(v, 0, UINT8_MAX, 0, UINT8_MAX);
        break;
    case IR_I16:
        ((int16_t *)p)[i] = (int16_t)saturate(v, INT16_MIN, INT16_MAX, INT16_MIN, INT16_MAX);
        break;
    case IR_I32:
        ((int32_t *)p)[i] = (int32_t)saturate(v, -2147483648.0, 2147483647.0,
                                              INT32_MIN, INT32_MAX);
        break;
    case IR_I64:
        ((int64_t *)p)[i] = saturate(v, -9223372036854775808.0, 9223372036854775808.0,
                                     INT64_MIN, INT64_MAX);
        break;
    case IR_F16:
        ((uint16_t *)p)[i] = ir_f64_to_f16(v);
        break;
    case IR_BF16:
        ((uint16_t *)p)[i] = ir_f64_to_bf16(v);
        break;
    case IR_F32:
        ((float *)p)[i] = (float)v;
        break;
    case IR_F64:
        ((double *)p)[i] = v;
        break;
    default:
        break;
    }
}

char *rt_shape_str(ir_dtype t, int ndim, const int64_t *shape)
{
    const char *name = (unsigned)t < IR_NDTYPES ? ir_dtype_name(t) : "?";
    /* 21 bytes per extent ("-9223372036854775808" plus ", ") is plenty. */
    size_t cap = strlen(name) + 3 + (size_t)(ndim > 0 ? ndim : 0) * 22;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t n = (size_t)snprintf(s, cap, "%s[", name);
    for (int d = 0; d < ndim; d++)
        n += (size_t)snprintf(s + n, cap - n, d ? ", %" PRId64 : "%" PRId64, shape[d]);
    snprintf(s + n, cap - n, "]");
    return s;
}
