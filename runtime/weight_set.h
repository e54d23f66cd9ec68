/* runtime/weight_set.h — a program's parameters held in memory, by name.
 *
 * The ONNX importer fills one with the initializers it turns into params
 * (importer/onnx.h, fe_onnx_options.weights), and a run reads its
 * parameters from it (rt_run_options.weights) instead of writing them to
 * .npy files and reading them back.  Names are the graph's buffer names
 * (`layer.role`, as a --weights directory's NAME.npy would be).
 *
 *   rt_weight_set s = {0};
 *   rt_weight_set_put(&s, "conv1.weight", t);    the set owns t now
 *   const rt_tensor *w = rt_weight_set_find(&s, "conv1.weight");
 *   rt_tensor *mine = rt_weight_set_take(&s, "conv1.weight", ...);   a run's
 *   rt_weight_set_free(&s);
 *
 * Lookups hash the name, so a set of any size costs a constant per
 * parameter. */
#ifndef TEC_RUNTIME_WEIGHT_SET_H
#define TEC_RUNTIME_WEIGHT_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/diag.h"
#include "runtime/tensor.h"

typedef struct rt_weight_set {
    char **names;          /* [cap] open addressing; NULL: a free slot */
    rt_tensor **tensors;   /* [cap] */
    size_t n, cap;
} rt_weight_set;

/* Adds name -> t; the set owns t from then on (also when it fails, which
 * frees t).  A name already present has its tensor replaced.  False when
 * memory runs out. */
bool rt_weight_set_put(rt_weight_set *s, const char *name, rt_tensor *t);
/* The tensor of name, or NULL when the set (which may be NULL) has none. */
const rt_tensor *rt_weight_set_find(const rt_weight_set *s, const char *name);
/* The set's tensor `name` for a parameter declared dtype[shape], handed
 * over (the caller owns and frees it; the set keeps the name, so that a
 * second request is an error, not a silent default): NULL with *found
 * false when the set has no such name; NULL with *found true after a
 * diagnostic when its type differs or it was handed over before. */
rt_tensor *rt_weight_set_take(rt_weight_set *s, const char *name, ir_dtype dtype, int ndim,
                              const int64_t *shape, bool *found, diag *d);
void rt_weight_set_free(rt_weight_set *s);

#endif
