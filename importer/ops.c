/* importer/ops.c — what the op files share (dtype and shape checks,
 * broadcasting), and the lookup of an op in their tables (doc/onnx.md
 * lists the supported ops). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importer/impl.h"

bool ox_need_float(ox_node *nd, const ox_value *v)
{
    if (ir_dtype_is_float(v->dtype))
        return true;
    return ox_fail(nd, "dtype %s is not supported by %s (it takes float and double)",
                   ir_dtype_name(v->dtype), nd->n->op_type);
}

/* Inputs from..to (those present) all of input from's dtype, else an
 * error naming the two that differ. */
bool ox_same_dtypes(ox_node *nd, int from, int to)
{
    const ox_value *t = from < nd->nin ? nd->in[from] : NULL;
    for (int i = from + 1; t && i <= to && i < nd->nin; i++)
        if (nd->in[i] && nd->in[i]->dtype != t->dtype)
            return ox_fail(nd, "inputs '%s' and '%s' have different dtypes (%s and %s)",
                           t->onnx, nd->in[i]->onnx, ir_dtype_name(t->dtype),
                           ir_dtype_name(nd->in[i]->dtype));
    return true;
}

void ox_same_shape(ox_value *out, const ox_value *in)
{
    out->dtype = in->dtype;
    out->ndim = in->ndim;
    memcpy(out->shape, in->shape, sizeof out->shape);
}

/* Row-major strides of v's shape (flat element positions). */
void ox_strides(const ox_value *v, int64_t *st)
{
    int64_t s = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        st[d] = s;
        s *= v->shape[d];
    }
}

/* Replaces each '$' of tmpl with read. */
void ox_subst(ox_str *b, const char *tmpl, const char *read)
{
    for (const char *p = tmpl; *p; p++) {
        if (*p == '$')
            ox_printf(b, "%s", read);
        else
            ox_printf(b, "%c", *p);
    }
}

bool ox_broadcast(ox_node *nd, ox_value *const *v, int n, int *R, int64_t *shape)
{
    *R = 0;
    for (int i = 0; i < n; i++)
        if (v[i]->ndim > *R)
            *R = v[i]->ndim;
    for (int d = 0; d < *R; d++) {
        shape[d] = 1;
        for (int i = 0; i < n; i++) {
            int k = v[i]->ndim - *R + d;
            if (k < 0 || v[i]->shape[k] == 1)
                continue;
            if (shape[d] != 1 && shape[d] != v[i]->shape[k])
                return ox_fail(nd, "inputs '%s' and '%s' cannot be broadcast together "
                               "(dimension %d: %lld and %lld)", v[0]->onnx, v[i]->onnx, d,
                               (long long)shape[d], (long long)v[i]->shape[k]);
            shape[d] = v[i]->shape[k];
        }
    }
    return true;
}


/* ---------------------------------------------------------------- the tables */

const ox_op *ox_find_op(const char *op_type)
{
    static const struct {
        const ox_op *ops;
        const int *count;
    } tables[] = {{ox_ops_quant, &ox_ops_quant_count}, /* first: its Conv, MatMul, Gemm */
                  {ox_ops_math, &ox_ops_math_count}, {ox_ops_shape, &ox_ops_shape_count},
                  {ox_ops_nn, &ox_ops_nn_count}};
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
        for (int i = 0; i < *tables[t].count; i++)
            if (strcmp(tables[t].ops[i].name, op_type) == 0)
                return &tables[t].ops[i];
    return NULL;
}
