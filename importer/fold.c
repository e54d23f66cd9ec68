/* importer/fold.c — constant propagation at import time: a node whose
 * inputs are all known (initializers, Constant, shapes and what is
 * computed from them) is computed here, in C, and its outputs are known in
 * turn, so that the values an op needs to be constant (a Slice's bounds, a
 * Reshape's shape, an Expand's shape) may come from arithmetic,
 * comparisons and selections on shapes, as exporters write them
 * (`Shape -> Gather -> Add -> Div -> Mul` for PyTorch's chunk).
 *
 * The arithmetic is the language's: floats computed in double and rounded
 * once to the dtype, integers exact and wrapping to the dtype's width (as
 * ONNX's do), integer division truncating toward zero.  What the folder
 * does not compute (or a result above OX_FOLD_MAX elements) is left to the
 * op, which writes a layer as for any other value. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importer/impl.h"

/* ---------------------------------------------------------------- helpers */

void ox_put_int(rt_tensor *t, int64_t i, int64_t v)
{
    switch (t->dtype) {
    case IR_I8: ((int8_t *)t->data)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case IR_U8: ((uint8_t *)t->data)[i] = (uint8_t)(uint64_t)v; break;
    case IR_I16: ((int16_t *)t->data)[i] = (int16_t)(uint16_t)(uint64_t)v; break;
    case IR_I32: ((int32_t *)t->data)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case IR_I64: ((int64_t *)t->data)[i] = v; break;
    default: rt_tensor_set(t, i, (double)v); break;
    }
}

rt_tensor *ox_const_new(ox_node *nd, ir_dtype t, int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0 || (shape[d] && n > OX_FOLD_MAX / shape[d])) {
            char sb[256];
            size_t k = (size_t)snprintf(sb, sizeof sb, "[");
            for (int i = 0; i < ndim && k < sizeof sb; i++)
                k += (size_t)snprintf(sb + k, sizeof sb - k, "%s%lld", i ? ", " : "",
                                      (long long)shape[i]);
            ox_fail(nd, "the value known at import time would have shape %s]: tec computes "
                    "constants of at most 2^24 elements (64 MiB of f32) when it imports a model",
                    sb);
            return NULL;
        }
        n *= shape[d];
    }
    char err[256];
    rt_tensor *r = rt_tensor_new(t, ndim, shape, err, sizeof err);
    if (!r)
        ox_fail(nd, "%s", err);
    return r;
}

/* Row-major strides of a shape. */
static void strides_of(const int64_t *shape, int ndim, int64_t *st)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        st[d] = s;
        s *= shape[d];
    }
}

/* Advances a multi-index in shape; false after the last. */
static bool next_index(int64_t *idx, const int64_t *shape, int ndim)
{
    for (int d = ndim - 1; d >= 0; d--) {
        if (++idx[d] < shape[d])
            return true;
        idx[d] = 0;
    }
    return false;
}

/* ---------------------------------------------------------------- elementwise */

typedef enum fold_fn {
    F_ADD, F_SUB, F_MUL, F_DIV, F_MOD, F_POW, F_MAX, F_MIN, F_SUM, F_MEAN,
    F_EQ, F_LT, F_LE, F_GT, F_GE, F_AND, F_OR, F_XOR, F_NOT, F_WHERE,
    F_NEG, F_ABS, F_SQRT, F_EXP, F_LOG, F_RECIP, F_FLOOR, F_CEIL, F_SIGN, F_RELU,
    F_SIGMOID, F_TANH, F_ERF, F_SIN, F_COS, F_ROUND, F_CAST,
} fold_fn;

/* An elementwise op the folder computes. */
typedef struct fold_op {
    const char *name;
    fold_fn fn;
    int nin;                 /* inputs; 0: any number (Max, Min, Sum, Mean) */
    bool bool_out;           /* a comparison or logic op: bool (i32 0/1) */
    bool float_only;
} fold_op;

static const fold_op fold_ops[] = {
    {"Add", F_ADD, 2, false, false},      {"Sub", F_SUB, 2, false, false},
    {"Mul", F_MUL, 2, false, false},      {"Div", F_DIV, 2, false, false},
    {"Mod", F_MOD, 2, false, false},      {"Pow", F_POW, 2, false, false},
    {"Max", F_MAX, 0, false, false},      {"Min", F_MIN, 0, false, false},
    {"Sum", F_SUM, 0, false, false},      {"Mean", F_MEAN, 0, false, true},
    {"Equal", F_EQ, 2, true, false},      {"Less", F_LT, 2, true, false},
    {"LessOrEqual", F_LE, 2, true, false}, {"Greater", F_GT, 2, true, false},
    {"GreaterOrEqual", F_GE, 2, true, false}, {"And", F_AND, 2, true, false},
    {"Or", F_OR, 2, true, false},         {"Xor", F_XOR, 2, true, false},
    {"Not", F_NOT, 1, true, false},       {"Where", F_WHERE, 3, false, false},
    {"Neg", F_NEG, 1, false, false},      {"Abs", F_ABS, 1, false, false},
    {"Sqrt", F_SQRT, 1, false, true},     {"Exp", F_EXP, 1, false, true},
    {"Log", F_LOG, 1, false, true},       {"Reciprocal", F_RECIP, 1, false, true},
    {"Floor", F_FLOOR, 1, false, true},   {"Ceil", F_CEIL, 1, false, true},
    {"Sign", F_SIGN, 1, false, false},    {"Relu", F_RELU, 1, false, true},
    {"Sigmoid", F_SIGMOID, 1, false, true}, {"Tanh", F_TANH, 1, false, true},
    {"Erf", F_ERF, 1, false, true},       {"Sin", F_SIN, 1, false, true},
    {"Cos", F_COS, 1, false, true},       {"Round", F_ROUND, 1, false, true},
    {"Cast", F_CAST, 1, false, false},
};

static double eval_float(fold_fn f, const double *a, bool fmod_mode)
{
    switch (f) {
    case F_ADD: case F_SUM: case F_MEAN: return a[0] + a[1];
    case F_SUB: return a[0] - a[1];
    case F_MUL: return a[0] * a[1];
    case F_DIV: return a[0] / a[1];
    case F_MOD: return fmod_mode ? fmod(a[0], a[1]) : a[0] - a[1] * floor(a[0] / a[1]);
    case F_POW: return pow(a[0], a[1]);
    case F_MAX: return isnan(a[0]) || isnan(a[1]) ? NAN : a[0] > a[1] ? a[0] : a[1];
    case F_MIN: return isnan(a[0]) || isnan(a[1]) ? NAN : a[0] < a[1] ? a[0] : a[1];
    case F_EQ: return a[0] == a[1];
    case F_LT: return a[0] < a[1];
    case F_LE: return a[0] <= a[1];
    case F_GT: return a[0] > a[1];
    case F_GE: return a[0] >= a[1];
    case F_AND: return a[0] != 0 && a[1] != 0;
    case F_OR: return a[0] != 0 || a[1] != 0;
    case F_XOR: return (a[0] != 0) != (a[1] != 0);
    case F_NOT: return a[0] == 0;
    case F_WHERE: return a[0] != 0 ? a[1] : a[2];
    case F_NEG: return -a[0];
    case F_ABS: return fabs(a[0]);
    case F_SQRT: return sqrt(a[0]);
    case F_EXP: return exp(a[0]);
    case F_LOG: return log(a[0]);
    case F_RECIP: return 1 / a[0];
    case F_FLOOR: return floor(a[0]);
    case F_CEIL: return ceil(a[0]);
    case F_SIGN: return a[0] > 0 ? 1 : a[0] < 0 ? -1 : a[0];
    case F_RELU: return a[0] > 0 ? a[0] : 0;
    case F_SIGMOID: return 1 / (1 + exp(-a[0]));
    case F_TANH: return tanh(a[0]);
    case F_ERF: return erf(a[0]);
    case F_SIN: return sin(a[0]);
    case F_COS: return cos(a[0]);
    case F_ROUND: return nearbyint(a[0]);   /* the default mode: half to even */
    case F_CAST: return a[0];
    }
    return 0;
}

/* Integer arithmetic wrapping as two's complement (computed unsigned, so
 * no overflow is undefined); false for a division by zero. */
static bool eval_int(fold_fn f, const int64_t *a, bool fmod_mode, int64_t *out)
{
    uint64_t x = (uint64_t)a[0], y = (uint64_t)a[1];
    switch (f) {
    case F_ADD: case F_SUM: *out = (int64_t)(x + y); return true;
    case F_SUB: *out = (int64_t)(x - y); return true;
    case F_MUL: *out = (int64_t)(x * y); return true;
    case F_DIV:
    case F_MOD:
        if (a[1] == 0)
            return false;
        if (a[1] == -1) {        /* INT64_MIN / -1 wraps to itself */
            *out = f == F_DIV ? (int64_t)(0 - x) : 0;
            return true;
        }
        if (f == F_DIV) {
            *out = a[0] / a[1];
        } else {
            int64_t r = a[0] % a[1];
            if (!fmod_mode && r != 0 && (r < 0) != (a[1] < 0))
                r += a[1];        /* the divisor's sign */
            *out = r;
        }
        return true;
    case F_MAX: *out = a[0] > a[1] ? a[0] : a[1]; return true;
    case F_MIN: *out = a[0] < a[1] ? a[0] : a[1]; return true;
    case F_EQ: *out = a[0] == a[1]; return true;
    case F_LT: *out = a[0] < a[1]; return true;
    case F_LE: *out = a[0] <= a[1]; return true;
    case F_GT: *out = a[0] > a[1]; return true;
    case F_GE: *out = a[0] >= a[1]; return true;
    case F_AND: *out = a[0] != 0 && a[1] != 0; return true;
    case F_OR: *out = a[0] != 0 || a[1] != 0; return true;
    case F_XOR: *out = (a[0] != 0) != (a[1] != 0); return true;
    case F_NOT: *out = a[0] == 0; return true;
    case F_WHERE: *out = a[0] != 0 ? a[1] : a[2]; return true;
    case F_NEG: *out = (int64_t)(0 - x); return true;
    case F_ABS: *out = a[0] < 0 ? (int64_t)(0 - x) : a[0]; return true;
    case F_SIGN: *out = a[0] > 0 ? 1 : a[0] < 0 ? -1 : 0; return true;
    case F_CAST: *out = a[0]; return true;
    default: return false;
    }
}

/* The dtype Cast converts to, or false (the op reports it). */
static bool cast_target(ox_node *nd, ir_dtype *to, bool *to_bool)
{
    const Onnx__AttributeProto *a = ox_attr(nd, "to");
    if (!a || !a->has_i || a->i < 1 || a->i > 16 || ox_wide_unsigned((int32_t)a->i))
        return false;
    *to_bool = a->i == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    return ox_dtype_of((int32_t)a->i, to);
}

/* Folds an elementwise node: 1 folded, 0 left to the op, -1 an error. */
static int fold_elementwise(ox_node *nd, const fold_op *op)
{
    int n = op->nin ? op->nin : nd->nin;
    if (n < 1 || n > 26 || nd->nin < n)
        return 0;
    ox_value *v[26];
    for (int i = 0; i < n; i++)
        if (!(v[i] = nd->in[i]) || v[i]->wide_unsigned)
            return 0;
    /* the inputs that share the result's dtype: all, but Where's condition
     * and Pow's exponent */
    int typed = op->fn == F_WHERE ? 1 : 0, last = op->fn == F_POW ? 0 : n - 1;
    for (int i = typed + 1; i <= last; i++)
        if (v[i]->dtype != v[typed]->dtype)
            return 0;
    ir_dtype t = v[typed]->dtype, out = t;
    bool to_bool = false;
    if (op->fn == F_CAST && !cast_target(nd, &out, &to_bool))
        return 0;
    if (op->bool_out)
        out = IR_I32;
    bool real = ir_dtype_is_float(t);
    if (op->float_only && !real)
        return 0;
    if (!real && op->fn != F_CAST && op->fn != F_POW &&
        !eval_int(op->fn, (int64_t[3]){1, 1, 1}, false, &(int64_t){0}))
        return 0;            /* an integer op the folder does not compute */
    if (op->fn == F_MOD && real && !ox_attr_int(nd, "fmod", 0))
        return 0;            /* the op's error: float Mod needs fmod=1 */
    bool fmod_mode = ox_attr_int(nd, "fmod", 0) != 0;
    int R = 0;
    int64_t shape[RT_MAX_DIMS];
    for (int i = 0; i < n; i++)
        R = v[i]->ndim > R ? v[i]->ndim : R;
    for (int d = 0; d < R; d++) {
        shape[d] = 1;
        for (int i = 0; i < n; i++) {
            int k = v[i]->ndim - R + d;
            if (k < 0 || v[i]->shape[k] == 1)
                continue;
            if (shape[d] != 1 && shape[d] != v[i]->shape[k])
                return 0;    /* the op reports the mismatch */
            shape[d] = v[i]->shape[k];
        }
    }
    int64_t numel = 1;
    for (int d = 0; d < R; d++)
        numel *= shape[d];
    if (numel == 0 || numel > OX_FOLD_MAX)
        return 0;
    rt_tensor *y = ox_const_new(nd, out, R, shape);
    if (!y)
        return -1;
    int64_t idx[RT_MAX_DIMS] = {0}, st[26][RT_MAX_DIMS];
    for (int i = 0; i < n; i++) {   /* broadcast strides: 0 on size-1 dimensions */
        int64_t s[RT_MAX_DIMS];
        strides_of(v[i]->shape, v[i]->ndim, s);
        for (int d = 0; d < R; d++) {
            int k = v[i]->ndim - R + d;
            st[i][d] = k < 0 || v[i]->shape[k] == 1 ? 0 : s[k];
        }
    }
    bool in_float = real || op->fn == F_POW || (op->fn == F_CAST && ir_dtype_is_float(out));
    for (int64_t e = 0; e < numel; e++, next_index(idx, shape, R)) {
        int64_t at[26];
        for (int i = 0; i < n; i++) {
            at[i] = 0;
            for (int d = 0; d < R; d++)
                at[i] += idx[d] * st[i][d];
        }
        /* a fixed arity applies once; Max, Min, Sum and Mean fold left */
        int steps = op->nin ? 1 : n - 1;
        if (in_float) {
            double a[3], r = rt_tensor_get(v[0]->konst, at[0]);
            for (int j = 0; j < steps; j++) {
                a[0] = r;
                for (int i = 1; i < (op->nin ? n : 2); i++) {
                    int src = op->nin ? i : j + 1;
                    a[i] = rt_tensor_get(v[src]->konst, at[src]);
                }
                r = eval_float(op->fn, a, fmod_mode);
            }
            if (op->fn == F_MEAN)
                r /= n;
            if (to_bool)
                r = r != 0;
            if (op->fn == F_POW && !ir_dtype_is_float(out))
                r = isnan(r) ? 0 : trunc(r);
            rt_tensor_set(y, e, r);
        } else {
            int64_t a[3], r = rt_tensor_get_int(v[0]->konst, at[0]);
            for (int j = 0; j < steps; j++) {
                a[0] = r;
                for (int i = 1; i < (op->nin ? n : 2); i++) {
                    int src = op->nin ? i : j + 1;
                    a[i] = rt_tensor_get_int(v[src]->konst, at[src]);
                }
                if (!eval_int(op->fn, a, fmod_mode, &r)) {
                    rt_tensor_free(y);
                    ox_fail(nd, "integer division by zero in a value computed at import time "
                            "(inputs '%s' and '%s')", v[0]->onnx, v[1]->onnx);
                    return -1;
                }
            }
            ox_put_int(y, e, to_bool ? r != 0 : r);
        }
    }
    bool weight = false;
    for (int i = 0; i < n; i++)
        weight = weight || v[i]->weight;
    return ox_set_const(nd, 0, y, weight) ? 1 : -1;
}

/* ---------------------------------------------------------------- ScatterND */

/* ScatterND: a copy of data with the slices that indices name replaced
 * by updates' (reduction none), or combined with them (add, mul).  Where
 * every input is known (PyTorch writes it for a slice assignment, as
 * Swin's attention mask) and the reduction is none, it is computed at
 * import time; else it is a kernel (ox_scatternd_kernel). */
bool ox_op_scatternd(ox_node *nd, const void *arg)
{
    ox_value *data = ox_input(nd, 0), *ind = ox_input(nd, 1), *upd = ox_input(nd, 2);
    if (!data || !ind || !upd)
        return false;
    const char *red = ox_attr_str(nd, "reduction", "none");
    if (strcmp(red, "none") != 0 && strcmp(red, "add") != 0 && strcmp(red, "mul") != 0)
        return ox_fail(nd, "reduction '%s' is not supported (none, add and mul are)", red);
    if (ir_dtype_is_float(ind->dtype) || ind->ndim < 1 || upd->dtype != data->dtype)
        return ox_fail(nd, "the indices must be integers and the updates of the data's dtype");
    int k = (int)ind->shape[ind->ndim - 1], q = ind->ndim;
    if (k < 1 || k > data->ndim || upd->ndim != q - 1 + data->ndim - k)
        return ox_fail(nd, "the shapes of data, indices and updates do not fit together");
    for (int d = 0; d < q - 1; d++)
        if (upd->shape[d] != ind->shape[d])
            return ox_fail(nd, "the shapes of data, indices and updates do not fit together");
    for (int d = k; d < data->ndim; d++)
        if (upd->shape[q - 1 + d - k] != data->shape[d])
            return ox_fail(nd, "the shapes of data, indices and updates do not fit together");
    if (!ox_known(data) || !ox_known(ind) || !ox_known(upd) || strcmp(red, "none") != 0)
        return ox_scatternd_kernel(nd, data, ind, upd, red);
    rt_tensor *y = ox_const_new(nd, data->dtype, data->ndim, data->shape);
    if (!y)
        return false;
    memcpy(y->data, data->konst->data, y->nbytes);
    int64_t slice = 1, nslices = rt_tensor_numel(ind->konst) / k;
    for (int d = k; d < data->ndim; d++)
        slice *= data->shape[d];
    size_t es = (size_t)ir_dtype_size(data->dtype);
    for (int64_t j = 0; j < nslices; j++) {
        int64_t at = 0;
        for (int d = 0; d < k; d++) {
            int64_t i = rt_tensor_get_int(ind->konst, j * k + d), D = data->shape[d];
            if (i < -D || i >= D) {
                rt_tensor_free(y);
                return ox_fail(nd, "index %lld is out of range for dimension %d of size %lld",
                               (long long)i, d, (long long)D);
            }
            at = at * D + (i < 0 ? i + D : i);
        }
        memcpy((char *)y->data + (size_t)(at * slice) * es,
               (const char *)upd->konst->data + (size_t)(j * slice) * es, (size_t)slice * es);
    }
    return ox_set_const(nd, 0, y, data->weight || upd->weight);
}

/* ---------------------------------------------------------------- the folder */

/* Whether the folder takes a node whose inputs are all known: a small
 * result, or one computed from shapes and constants only (a weight's
 * computation stays a layer, so that the profile counts it). */
static bool worth_folding(ox_node *nd)
{
    int64_t total = 0;
    bool weights = false;
    for (int i = 0; i < nd->nin; i++)
        if (nd->in[i]) {
            total += rt_tensor_numel(nd->in[i]->konst);
            weights = weights || nd->in[i]->weight;
        }
    return !weights || total <= OX_FOLD_SMALL;
}

bool ox_known(const ox_value *v)
{
    return v->konst && !v->graph_input;
}

/* Whether every input present is known and worth folding. */
static bool foldable(ox_node *nd)
{
    bool known = nd->nin > 0;
    for (int i = 0; i < nd->nin; i++)
        known = known && (!nd->in[i] || ox_known(nd->in[i]));
    return known && worth_folding(nd);
}

int ox_fold_view(ox_node *nd, int out, const ox_value *x, int ndim, const int64_t *shape,
                 int64_t base, const int64_t *stride)
{
    if (!foldable(nd))
        return 0;
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++)
        numel *= shape[d];
    if (numel > OX_FOLD_MAX)
        return 0;
    rt_tensor *y = ox_const_new(nd, x->dtype, ndim, shape);
    if (!y)
        return -1;
    size_t es = (size_t)ir_dtype_size(x->konst->dtype);   /* (numel may be 0) */
    int64_t idx[RT_MAX_DIMS] = {0};
    for (int64_t e = 0; e < numel; e++, next_index(idx, shape, ndim)) {
        int64_t at = base;
        for (int d = 0; d < ndim; d++)
            at += idx[d] * stride[d];
        memcpy((char *)y->data + (size_t)e * es, (const char *)x->konst->data + (size_t)at * es,
               es);
    }
    return ox_set_const(nd, out, y, x->weight) ? 1 : -1;
}

/* Trilu of a known matrix (a causal mask: GPT-2's export computes
 * Trilu(ones, 1) in every layer): the triangle kept, zeros elsewhere. */
static int fold_trilu(ox_node *nd)
{
    const ox_value *x = nd->in[0];
    int64_t k = 0;
    if (!x || x->ndim < 2 || (nd->nin > 1 && nd->in[1] && rt_tensor_numel(nd->in[1]->konst) != 1))
        return 0;   /* (the op's errors) */
    if (nd->nin > 1 && nd->in[1])
        k = rt_tensor_get_int(nd->in[1]->konst, 0);
    bool upper = ox_attr_int(nd, "upper", 1) != 0;
    rt_tensor *y = ox_const_new(nd, x->dtype, x->ndim, x->shape);
    if (!y)
        return -1;
    int64_t R = x->shape[x->ndim - 2], C = x->shape[x->ndim - 1], n = rt_tensor_numel(x->konst);
    size_t es = (size_t)ir_dtype_size(x->dtype);
    for (int64_t e = 0; R && C && e < n; e++) {
        int64_t i = e / C % R, j = e % C;
        if (upper ? j - i >= k : j - i <= k)
            memcpy((char *)y->data + (size_t)e * es, (const char *)x->konst->data + (size_t)e * es,
                   es);
    }
    return ox_set_const(nd, 0, y, x->weight) ? 1 : -1;
}

/* ScatterElements (reduction none, add or mul) of known inputs: PyTorch's
 * index_copy and index_fill scatter into a Shape to build the shape their
 * Expand reads.  Inputs that do not fit, an index out of range or another
 * reduction: 0, the op's kernel reports them. */
static int fold_scatter_elements(ox_node *nd)
{
    const ox_value *x = nd->in[0], *ind = nd->nin > 1 ? nd->in[1] : NULL,
                   *upd = nd->nin > 2 ? nd->in[2] : NULL;
    const char *red = ox_attr_str(nd, "reduction", "none");
    bool add = strcmp(red, "add") == 0, mul = strcmp(red, "mul") == 0;
    int64_t axis = ox_attr_int(nd, "axis", 0);
    if (!x || !ind || !upd || (!add && !mul && strcmp(red, "none") != 0) || ind->ndim != x->ndim ||
        upd->ndim != ind->ndim || upd->dtype != x->dtype || ir_dtype_is_float(ind->dtype) ||
        axis < -x->ndim || axis >= x->ndim || x->ndim < 1)
        return 0;
    if (axis < 0)
        axis += x->ndim;
    for (int d = 0; d < x->ndim; d++)
        if (upd->shape[d] != ind->shape[d] || (d != axis && ind->shape[d] > x->shape[d]))
            return 0;
    int64_t n = rt_tensor_numel(ind->konst);
    for (int64_t e = 0; e < n; e++) {
        int64_t i = rt_tensor_get_int(ind->konst, e);
        if (i < -x->shape[axis] || i >= x->shape[axis])
            return 0;
    }
    rt_tensor *y = ox_const_new(nd, x->dtype, x->ndim, x->shape);
    if (!y)
        return -1;
    memcpy(y->data, x->konst->data, y->nbytes);
    bool fl = ir_dtype_is_float(x->dtype);
    for (int64_t e = 0; e < n; e++) {   /* in order: a later duplicate wins */
        int64_t at = 0, r = e, stride = 1;
        for (int d = x->ndim - 1; d >= 0; d--) {
            int64_t c = r % ind->shape[d];
            r /= ind->shape[d];
            if (d == axis) {
                c = rt_tensor_get_int(ind->konst, e);
                c += c < 0 ? x->shape[d] : 0;
            }
            at += c * stride;
            stride *= x->shape[d];
        }
        if (fl) {
            double u = rt_tensor_get(upd->konst, e), v = rt_tensor_get(y, at);
            rt_tensor_set(y, at, add ? v + u : mul ? v * u : u);
        } else {
            int64_t u = rt_tensor_get_int(upd->konst, e), v = rt_tensor_get_int(y, at);
            /* (wrapping as the dtype's arithmetic does) */
            ox_put_int(y, at, add ? (int64_t)((uint64_t)v + (uint64_t)u)
                              : mul ? (int64_t)((uint64_t)v * (uint64_t)u) : u);
        }
    }
    return ox_set_const(nd, 0, y, x->weight || upd->weight) ? 1 : -1;
}

int ox_fold(ox_node *nd)
{
    if (!foldable(nd) || ox_noutputs(nd) != 1)
        return 0;
    if (strcmp(nd->n->op_type, "Trilu") == 0)
        return fold_trilu(nd);
    if (strcmp(nd->n->op_type, "ScatterElements") == 0 || strcmp(nd->n->op_type, "Scatter") == 0)
        return fold_scatter_elements(nd);
    for (size_t i = 0; i < sizeof fold_ops / sizeof *fold_ops; i++)
        if (strcmp(fold_ops[i].name, nd->n->op_type) == 0)
            return fold_elementwise(nd, &fold_ops[i]);
    return 0;
}
