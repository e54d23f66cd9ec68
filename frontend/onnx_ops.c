/* frontend/onnx_ops.c — one function per ONNX op: infers the node's
 * output shapes and writes its layer (a lib/nn.te call, or a kernel def
 * written for it), or folds it at import time when its inputs are known
 * (Shape, Constant, Range ...).  The table at the end is the list of
 * supported ops (doc/onnx.md). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx_impl.h"

/* ---------------------------------------------------------------- helpers */

static bool need_float(ox_node *nd, const ox_value *v)
{
    if (ir_dtype_is_float(v->dtype))
        return true;
    return ox_fail(nd, "dtype %s is not supported by %s (it takes float and double)",
                   ir_dtype_name(v->dtype), nd->n->op_type);
}

/* Inputs from..to (those present) all of input from's dtype, else an
 * error naming the two that differ. */
static bool same_dtypes(ox_node *nd, int from, int to)
{
    const ox_value *t = from < nd->nin ? nd->in[from] : NULL;
    for (int i = from + 1; t && i <= to && i < nd->nin; i++)
        if (nd->in[i] && nd->in[i]->dtype != t->dtype)
            return ox_fail(nd, "inputs '%s' and '%s' have different dtypes (%s and %s)",
                           t->onnx, nd->in[i]->onnx, ir_dtype_name(t->dtype),
                           ir_dtype_name(nd->in[i]->dtype));
    return true;
}

static void same_shape(ox_value *out, const ox_value *in)
{
    out->dtype = in->dtype;
    out->ndim = in->ndim;
    memcpy(out->shape, in->shape, sizeof out->shape);
}

/* Row-major strides of v's shape (flat element positions). */
static void strides(const ox_value *v, int64_t *st)
{
    int64_t s = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        st[d] = s;
        s *= v->shape[d];
    }
}

/* Replaces each '$' of tmpl with read. */
static void subst(ox_str *b, const char *tmpl, const char *read)
{
    for (const char *p = tmpl; *p; p++) {
        if (*p == '$')
            ox_printf(b, "%s", read);
        else
            ox_printf(b, "%c", *p);
    }
}

/* y[I] = tmpl(x[I]) for input 0. */
static bool elementwise1(ox_node *nd, const char *base, const char *tmpl, bool float_only)
{
    ox_value *x = ox_input(nd, 0);
    if (!x || (float_only && !need_float(nd, x)))
        return false;
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_str read = {0};
    ox_printf(&read, "x[");
    ox_indices(&read, "i", 0, x->ndim);
    ox_printf(&read, "]");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] = ");
    subst(&k.body, tmpl, read.s);
    ox_printf(&k.body, "\n");
    free(read.s);
    bool ok = ox_kernel_finish(&k, base, y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool broadcast(ox_node *nd, ox_value *const *v, int n, int *R, int64_t *shape)
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

/* How an elementwise op of several inputs combines them. */
typedef struct combine {
    const char *base;        /* the kernel's name */
    const char *tmpl;        /* $0, $1 ... stand for the (broadcast) reads */
    int nin;                 /* inputs; 0: any number, folded as tmpl($0=acc, $1=next) */
    int typed_from;          /* the inputs from this one on share the output's dtype */
    int out;                 /* the output's dtype: -1 the inputs', else an ir_dtype */
    bool float_only;
} combine;

/* y[I] = tmpl(a[I], b[I], ...) with numpy broadcasting. */
static bool elementwise_n(ox_node *nd, const combine *cb)
{
    int n = cb->nin ? cb->nin : nd->nin;
    if (n < 1 || n > 26)
        return ox_fail(nd, "the op takes 1 to 26 inputs, not %d", n);
    ox_value *v[26];
    for (int i = 0; i < n; i++)
        if (!(v[i] = ox_input(nd, i)))
            return false;
    ox_value *t = v[cb->typed_from];
    for (int i = cb->typed_from + 1; i < n; i++)
        if (v[i]->dtype != t->dtype)
            return ox_fail(nd, "inputs '%s' and '%s' have different dtypes (%s and %s)",
                           t->onnx, v[i]->onnx, ir_dtype_name(t->dtype),
                           ir_dtype_name(v[i]->dtype));
    if (cb->float_only && !need_float(nd, t))
        return false;
    ox_value *y = ox_output(nd, 0);
    y->dtype = cb->out < 0 ? t->dtype : (ir_dtype)cb->out;
    /* before opset 7, B may be aligned with A from an axis on (broadcast=1, axis) */
    int off[26];
    const Onnx__AttributeProto *legacy = nd->opset < 7 && n == 2 && ox_attr_int(nd, "broadcast", 0)
                                             ? ox_attr(nd, "axis") : NULL;
    if (legacy) {
        int axis;
        if (!ox_axis(nd, legacy->i, v[0]->ndim, &axis))
            return false;
        if (axis + v[1]->ndim > v[0]->ndim)
            return ox_fail(nd, "B (rank %d) does not fit A (rank %d) from axis %d", v[1]->ndim,
                           v[0]->ndim, axis);
        for (int d = 0; d < v[1]->ndim; d++)
            if (v[1]->shape[d] != 1 && v[1]->shape[d] != v[0]->shape[axis + d])
                return ox_fail(nd, "B's dimension %d (%lld) does not match A's dimension %d (%lld)",
                               d, (long long)v[1]->shape[d], axis + d,
                               (long long)v[0]->shape[axis + d]);
        y->ndim = v[0]->ndim;
        memcpy(y->shape, v[0]->shape, sizeof y->shape);
        off[0] = 0;
        off[1] = axis;
    } else {
        if (!broadcast(nd, v, n, &y->ndim, y->shape))
            return false;
        for (int i = 0; i < n; i++)
            off[i] = y->ndim - v[i]->ndim;
    }
    /* nn.te's add and mul: two f32 tensors of one shape, rank 2 to 4 */
    if ((strcmp(cb->base, "add") == 0 || strcmp(cb->base, "mul") == 0) && v[0]->id &&
        v[1]->id && v[0]->dtype == IR_F32 && v[0]->ndim == y->ndim && v[1]->ndim == y->ndim &&
        y->ndim >= 2 && y->ndim <= 4 &&
        memcmp(v[0]->shape, v[1]->shape, sizeof(int64_t) * (size_t)y->ndim) == 0) {
        ox_str args = {0};
        ox_printf(&args, "%s, %s", v[0]->id, v[1]->id);
        bool ok = ox_call_nn(nd, y, cb->base, args.s, NULL, NULL, 0);
        free(args.s);
        return ok;
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    static const char *roles[26] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l",
                                    "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x",
                                    "y2", "z"};
    ox_str reads[26] = {{0}};
    for (int i = 0; i < n; i++)   /* a one-element constant is a literal */
        ox_bcast_read(&reads[i], ox_is_literal(v[i]) ? "" : ox_operand(&k, v[i], roles[i]), v[i],
                      off[i], y->shape);
    ox_str expr = {0};
    if (cb->nin) {
        for (const char *p = cb->tmpl; *p; p++)
            if (p[0] == '$' && p[1] >= '0' && p[1] <= '9')
                ox_printf(&expr, "%s", reads[*++p - '0'].s);
            else
                ox_printf(&expr, "%c", *p);
    } else {
        ox_printf(&expr, "%s", reads[0].s);
        for (int i = 1; i < n; i++) {
            ox_str next = {0};
            for (const char *p = cb->tmpl; *p; p++)
                if (p[0] == '$' && (p[1] == '0' || p[1] == '1'))
                    ox_printf(&next, "%s", *++p == '0' ? expr.s : reads[i].s);
                else
                    ox_printf(&next, "%c", *p);
            free(expr.s);
            expr = next;
        }
        if (strcmp(cb->base, "mean") == 0 && n > 1) {
            ox_str m = {0};
            ox_printf(&m, "(%s) / %d", expr.s, n);
            free(expr.s);
            expr = m;
        }
    }
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, y->ndim);
    ox_printf(&k.body, "] = %s\n", expr.s);
    free(expr.s);
    for (int i = 0; i < n; i++)
        free(reads[i].s);
    bool ok = ox_kernel_finish(&k, cb->base, y, NULL);
    ox_kernel_free(&k);
    return ok;
}

#define UNARY(fn, base, tmpl, fl) \
    static bool fn(ox_node *nd) { return elementwise1(nd, base, tmpl, fl); }
UNARY(op_sqrt, "sqrt", "sqrt($)", true)
UNARY(op_exp, "exp", "exp($)", true)
UNARY(op_log, "log", "log($)", true)
UNARY(op_neg, "neg", "-$", false)
UNARY(op_abs, "abs", "abs($)", false)
UNARY(op_reciprocal, "reciprocal", "1 / $", true)
UNARY(op_floor, "floor", "floor($)", true)
UNARY(op_ceil, "ceil", "ceil($)", true)
UNARY(op_erf, "erf", "erf($)", true)
UNARY(op_tanh, "tanh", "tanh($)", true)
UNARY(op_sin, "sin", "sin($)", true)
UNARY(op_cos, "cos", "cos($)", true)
UNARY(op_softsign, "softsign", "$ / (1 + abs($))", true)
UNARY(op_softplus, "softplus", "log(exp($) + 1)", true)
UNARY(op_hardswish, "hardswish", "$ * max(0, min(1, $ / 6 + 0.5))", true)
UNARY(op_copy, "copy", "$", false)
UNARY(op_sign, "sign", "$ > 0 ? 1 : $ < 0 ? -1 : 0", false)
/* round half to even: floor(x + 0.5), minus 1 at an exact half whose floor is odd */
UNARY(op_round, "round", "floor($ + 0.5) - ($ + 0.5 == floor($ + 0.5) && "
      "floor(($ + 0.5) / 2) * 2 != floor($ + 0.5) ? 1 : 0)", true)
#undef UNARY

/* A unary op whose template takes the node's float attributes. */
static bool unary_attr(ox_node *nd, const char *base, const char *fmt, const char *a1, double d1,
                       const char *a2, double d2)
{
    ox_str v1 = {0}, v2 = {0};
    ox_float(&v1, ox_attr_float(nd, a1, d1));
    if (a2)
        ox_float(&v2, ox_attr_float(nd, a2, d2));
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, fmt, v1.s, a2 ? v2.s : "");
    free(v1.s);
    free(v2.s);
    return elementwise1(nd, base, tmpl, true);
}

static bool op_leakyrelu(ox_node *nd)
{
    return unary_attr(nd, "leakyrelu", "$ >= 0 ? $ : %s * $", "alpha", 0.01, NULL, 0);
}
static bool op_elu(ox_node *nd)
{
    return unary_attr(nd, "elu", "$ >= 0 ? $ : %s * (exp($) - 1)", "alpha", 1.0, NULL, 0);
}
static bool op_selu(ox_node *nd)
{
    return unary_attr(nd, "selu", "$ > 0 ? %2$s * $ : %2$s * (%1$s * exp($) - %1$s)", "alpha",
                      1.67326319217681884765625, "gamma", 1.05070102214813232421875);
}
static bool op_hardsigmoid(ox_node *nd)
{
    return unary_attr(nd, "hardsigmoid", "max(0, min(1, %s * $ + %s))", "alpha", 0.2, "beta", 0.5);
}
static bool op_celu(ox_node *nd)
{
    return unary_attr(nd, "celu", "max(0, $) + min(0, %1$s * (exp($ / %1$s) - 1))", "alpha", 1.0,
                      NULL, 0);
}
static bool op_thresholdedrelu(ox_node *nd)
{
    return unary_attr(nd, "thresholdedrelu", "$ > %s ? $ : 0", "alpha", 1.0, NULL, 0);
}

/* Relu and Sigmoid: the nn.te op for ranks 2 to 4 of f32, else a kernel. */
static bool nn_unary(ox_node *nd, const char *op, const char *tmpl)
{
    ox_value *x = ox_input(nd, 0);
    if (!x || !need_float(nd, x))
        return false;
    if (x->dtype != IR_F32 || x->ndim < 2 || x->ndim > 4 || !x->id)
        return elementwise1(nd, op, tmpl, true);
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    return ox_call_nn(nd, y, op, x->id, NULL, NULL, 0);
}
static bool op_relu(ox_node *nd) { return nn_unary(nd, "relu", "max($, 0)"); }
static bool op_sigmoid(ox_node *nd) { return nn_unary(nd, "sigmoid", "sigmoid($)"); }

/* A copy of a constant is the constant (PyTorch exports shared weights
 * through Identity nodes); of anything else, a copy kernel. */
static bool copy_or_fold(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    if (!x->konst || x->id)
        return op_copy(nd);
    char err[256];
    rt_tensor *t = rt_tensor_new(x->dtype, x->ndim, x->shape, err, sizeof err);
    if (!t)
        return ox_fail(nd, "%s", err);
    memcpy(t->data, x->konst->data, x->konst->nbytes);
    return ox_set_const(nd, 0, t, x->weight);
}

bool ox_copy(ox_node *nd)
{
    return op_copy(nd);
}

static bool op_identity(ox_node *nd)
{
    return copy_or_fold(nd);
}

/* Dropout at inference, or in training with ratio 0 (which drops
 * nothing): y = x, and the optional mask is all true. */
static bool op_dropout(ox_node *nd)
{
    if (nd->nin > 2 && nd->in[2]) {
        int64_t t;
        const ox_value *r = nd->nin > 1 ? nd->in[1] : NULL;   /* absent: 0.5 */
        bool zero_ratio = r && r->konst && rt_tensor_numel(r->konst) == 1 &&
                          rt_tensor_get(r->konst, 0) == 0;
        if (ox_const_ints(nd, 2, &t, 1) != 1 || (t && !zero_ratio))
            return ox_fail(nd, "training mode is not supported (inference, or a ratio of 0, "
                           "only)");
    }
    if (ox_attr_int(nd, "is_test", 1) == 0 && nd->opset < 7)
        return ox_fail(nd, "training mode (is_test=0) is not supported (inference only)");
    if (!copy_or_fold(nd))
        return false;
    if (ox_noutputs(nd) < 2 || !*nd->n->output[1])
        return true;
    ox_value *x = nd->in[0];
    ox_value *m = ox_output(nd, 1);
    same_shape(m, x);
    m->dtype = IR_I32;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] = 1 + 0 * i32(x[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "])\n");
    bool ok = ox_kernel_finish(&k, "dropout_mask", m, "mask");
    ox_kernel_free(&k);
    return ok;
}

/* ONNX's bool tensors are i32 0/1 in tec (doc/onnx.md). */
#define COMBINE(fn, ...) \
    static bool fn(ox_node *nd) { static const combine cb = {__VA_ARGS__}; return elementwise_n(nd, &cb); }
COMBINE(op_add, "add", "$0 + $1", 2, 0, -1, false)
COMBINE(op_sub, "sub", "$0 - $1", 2, 0, -1, false)
COMBINE(op_mul, "mul", "$0 * $1", 2, 0, -1, false)
COMBINE(op_prelu, "prelu", "$0 >= 0 ? $0 : $1 * $0", 2, 0, -1, true)
COMBINE(op_max, "max", "max($0, $1)", 0, 0, -1, false)
COMBINE(op_min, "min", "min($0, $1)", 0, 0, -1, false)
COMBINE(op_sum, "sum", "$0 + $1", 0, 0, -1, false)
COMBINE(op_mean, "mean", "$0 + $1", 0, 0, -1, true)
COMBINE(op_equal, "equal", "$0 == $1 ? 1 : 0", 2, 0, IR_I32, false)
COMBINE(op_less, "less", "$0 < $1 ? 1 : 0", 2, 0, IR_I32, false)
COMBINE(op_lessorequal, "less_or_equal", "$0 <= $1 ? 1 : 0", 2, 0, IR_I32, false)
COMBINE(op_greater, "greater", "$0 > $1 ? 1 : 0", 2, 0, IR_I32, false)
COMBINE(op_greaterorequal, "greater_or_equal", "$0 >= $1 ? 1 : 0", 2, 0, IR_I32, false)
COMBINE(op_and, "and", "$0 != 0 && $1 != 0 ? 1 : 0", 2, 0, IR_I32, false)
COMBINE(op_or, "or", "$0 != 0 || $1 != 0 ? 1 : 0", 2, 0, IR_I32, false)
COMBINE(op_xor, "xor", "($0 != 0 && $1 == 0) || ($0 == 0 && $1 != 0) ? 1 : 0", 2, 0, IR_I32, false)
COMBINE(op_not, "not", "$0 == 0 ? 1 : 0", 1, 0, IR_I32, false)
COMBINE(op_where, "where", "$0 != 0 ? $1 : $2", 3, 1, -1, false)

/* Pow: the exponent may have another dtype than the base; integer powers
 * are computed in f64 and truncated (as ONNX's reference does). */
static bool op_pow(ox_node *nd)
{
    ox_value *a = ox_input(nd, 0), *b = ox_input(nd, 1);
    if (!a || !b)
        return false;
    char tmpl[96];
    ir_dtype ca = ox_compute_dtype(a->dtype), cx = ox_compute_dtype(b->dtype);
    if (ir_dtype_is_float(a->dtype))
        snprintf(tmpl, sizeof tmpl, ca == cx ? "pow($0, $1)" : "pow($0, %s($1))",
                 ir_dtype_name(ca));
    else
        snprintf(tmpl, sizeof tmpl, "%s(pow(f64($0), f64($1)))", ir_dtype_name(ca));
    combine cb = {"pow", tmpl, 2, 1, (int)a->dtype, false};   /* the base's dtype */
    return elementwise_n(nd, &cb);
}

/* Div: on integers, truncating toward zero (C's division, which ONNX's
 * integer Div is), where the language's '/' floors. */
static bool op_div(ox_node *nd)
{
    static const combine real = {"div", "$0 / $1", 2, 0, -1, false};
    static const combine integer = {"div", "$0 % $1 != 0 && ($0 < 0 && $1 > 0 || $0 > 0 && $1 < 0) "
                                    "? $0 / $1 + 1 : $0 / $1", 2, 0, -1, false};
    ox_value *a = ox_input(nd, 0);
    return a && elementwise_n(nd, ir_dtype_is_float(a->dtype) ? &real : &integer);
}

/* Mod: the divisor's sign (the language's %), or with fmod=1 C's fmod,
 * the dividend's sign. */
static bool op_mod(ox_node *nd)
{
    static const combine floor_mod = {"mod", "$0 % $1", 2, 0, -1, false};
    static const combine fmod = {"fmod", "$0 - $1 * ($0 / $1 >= 0 ? floor($0 / $1) : ceil($0 / $1))",
                                 2, 0, -1, true};
    return elementwise_n(nd, ox_attr_int(nd, "fmod", 0) ? &fmod : &floor_mod);
}


/* Cast: a conversion of the language (to f16 and bf16 rounded to nearest
 * even once; to a narrower integer keeping the low bits; float to integer
 * truncated), or to bool (i32) "not zero". */
static bool op_cast_typed(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    int64_t t = ox_attr_int(nd, "to", 0);
    const char *named = ox_attr_str(nd, "to", NULL);   /* before opset 6, a name */
    for (int32_t c = 1; named && c <= 16; c++) {
        char upper[32];
        snprintf(upper, sizeof upper, "%s", ox_onnx_type_name(c));
        for (char *p = upper; *p; p++)
            *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
        if (strcmp(named, upper) == 0)
            t = c;
    }
    ir_dtype to;
    if (t < INT32_MIN || t > INT32_MAX || !ox_dtype_of((int32_t)t, &to))
        return ox_fail(nd, "casting to %s (ONNX dtype %lld) is not supported (tec casts to "
                       "float, double, float16, bfloat16, int8, uint8, int16, int32, int64 and "
                       "bool)", ox_onnx_type_name(t >= 0 && t <= 16 ? (int32_t)t : -1),
                       (long long)t);
    if (ox_wide_unsigned((int32_t)t))
        return ox_fail(nd, "casting to %s is not supported (tec holds it in i64, and a cast to "
                       "i64 does not wrap as one to %s does)", ox_onnx_type_name((int32_t)t),
                       ox_onnx_type_name((int32_t)t));
    bool to_bool = t == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    y->dtype = to;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, to_bool ? "] = x[" : "] = %s(x[", ir_dtype_name(to));
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, to_bool ? "] != 0 ? 1 : 0\n" : "])\n");
    bool ok = ox_kernel_finish(&k, "cast", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool op_clip(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    double lo = -INFINITY, hi = INFINITY;
    int64_t ilo, ihi;   /* an integer dtype's bounds: its range, or tighter */
    bool has_lo = false, has_hi = false, integer = ir_dtype_int_range(x->dtype, &ilo, &ihi);
    if (nd->opset < 11) {
        lo = ox_attr_float(nd, "min", -INFINITY);
        hi = ox_attr_float(nd, "max", INFINITY);
    } else {
        for (int i = 1; i <= 2; i++) {
            if (i >= nd->nin || !nd->in[i])
                continue;
            if (!nd->in[i]->konst || rt_tensor_numel(nd->in[i]->konst) != 1)
                return ox_fail(nd, "input %d ('%s') must be a constant scalar", i + 1,
                               nd->in[i]->onnx);
            *(i == 1 ? &lo : &hi) = rt_tensor_get(nd->in[i]->konst, 0);
            if (integer && i == 1 && rt_tensor_get_int(nd->in[i]->konst, 0) > ilo)
                ilo = rt_tensor_get_int(nd->in[i]->konst, 0), has_lo = true;
            if (integer && i == 2 && rt_tensor_get_int(nd->in[i]->konst, 0) < ihi)
                ihi = rt_tensor_get_int(nd->in[i]->konst, 0), has_hi = true;
        }
    }
    ox_str t = {0};
    if (integer) {   /* an absent bound (or one outside the dtype) clamps nothing */
        ox_printf(&t, "%s%s", has_hi ? "min(" : "", has_lo ? "max(" : "");
        ox_printf(&t, "$");
        if (has_lo)
            ox_printf(&t, ", (%lld))", (long long)ilo);
        if (has_hi)
            ox_printf(&t, ", (%lld))", (long long)ihi);
    } else {
        ox_printf(&t, "min(max($, ");
        ox_float(&t, lo);
        ox_printf(&t, "), ");
        ox_float(&t, hi);
        ox_printf(&t, ")");
    }
    bool ok = elementwise1(nd, "clip", t.s, false);
    free(t.s);
    return ok;
}

/* ---------------------------------------------------------------- shapes */

/* y = x with another shape and the same elements in row-major order. */
static bool reshape_to(ox_node *nd, const char *base, const int64_t *shape, int ndim)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = ndim;
    memcpy(y->shape, shape, sizeof(int64_t) * (size_t)ndim);
    if (!ox_check_shape(nd, shape, ndim))
        return false;
    int64_t nx = 1, ny = 1;
    for (int i = 0; i < x->ndim; i++)
        nx *= x->shape[i];
    for (int i = 0; i < ndim; i++)
        ny *= shape[i];
    if (nx != ny)
        return ox_fail(nd, "cannot reshape '%s' of %lld elements into %lld elements", x->onnx,
                       (long long)nx, (long long)ny);
    if (ox_known(x)) {   /* a constant stays one */
        rt_tensor *t = ox_const_new(nd, x->dtype, ndim, shape);
        if (!t)
            return false;
        memcpy(t->data, x->konst->data, x->konst->nbytes);
        y->konst = t;
        y->weight = x->weight;
        return true;
    }
    if (x->id && ndim >= 1 && x->ndim >= 1) {   /* the language's view: no copy */
        ox_str args = {0};
        ox_printf(&args, "%s", x->id);
        for (int i = 0; i < ndim; i++)
            ox_printf(&args, ", %lld", (long long)shape[i]);
        ox_str call = {0};
        ox_printf(&call, "reshape(%s)", args.s);
        bool ok = ox_call_view(nd, y, call.s, NULL);
        free(args.s);
        free(call.s);
        return ok;
    }
    ox_str lin = {0};   /* the output element's row-major position */
    for (int i = 0; i < ndim; i++) {
        if (i == 0)
            ox_printf(&lin, "i0");
        else {
            ox_str t = {0};
            ox_printf(&t, "(%s) * %lld + i%d", lin.s, (long long)shape[i], i);
            free(lin.s);
            lin = t;
        }
    }
    if (ndim == 0)
        ox_printf(&lin, "0");
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, ndim);
    ox_printf(&k.body, "] = x[");
    int64_t stride = nx;
    for (int i = 0; i < x->ndim; i++) {
        stride /= x->shape[i];
        ox_printf(&k.body, "%s", i ? ", " : "");
        if (x->shape[i] == 1)
            ox_printf(&k.body, "0");
        else if (i == 0)
            ox_printf(&k.body, "(%s) / %lld", lin.s, (long long)stride);
        else
            ox_printf(&k.body, "(%s) / %lld %% %lld", lin.s, (long long)stride,
                      (long long)x->shape[i]);
    }
    ox_printf(&k.body, "]\n");
    free(lin.s);
    bool ok = ox_kernel_finish(&k, base, y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool op_reshape(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    int64_t s[RT_MAX_DIMS + 1];
    int n;
    if (!x)
        return false;
    if (nd->opset < 5) {
        const int64_t *a;
        n = ox_attr_ints(nd, "shape", &a);
        memcpy(s, a, sizeof(int64_t) * (size_t)(n > RT_MAX_DIMS ? RT_MAX_DIMS : n));
    } else if ((n = ox_const_ints(nd, 1, s, RT_MAX_DIMS + 1)) < 0) {
        return false;
    }
    if (n > RT_MAX_DIMS)
        return ox_fail(nd, "the new shape has %d dimensions (at most %d)", n, RT_MAX_DIMS);
    bool allowzero = ox_attr_int(nd, "allowzero", 0) != 0;
    int64_t known = 1, total = 1;
    int infer = -1;
    for (int i = 0; i < x->ndim; i++)
        total *= x->shape[i];
    for (int i = 0; i < n; i++) {
        if (s[i] == 0 && !allowzero) {
            if (i >= x->ndim)
                return ox_fail(nd, "shape entry %d is 0 (copy) but the input has rank %d", i,
                               x->ndim);
            s[i] = x->shape[i];
        }
        if (s[i] == -1) {
            if (infer >= 0)
                return ox_fail(nd, "the new shape has two -1 entries");
            infer = i;
        } else if (s[i] < (allowzero ? 0 : 1)) {
            return ox_fail(nd, "shape entry %d is %lld", i, (long long)s[i]);
        } else {
            known *= s[i];
        }
    }
    if (infer >= 0) {
        if (known == 0 || total % known)
            return ox_fail(nd, "cannot infer the -1 entry: %lld elements into parts of %lld",
                           (long long)total, (long long)known);
        s[infer] = total / known;
    }
    return reshape_to(nd, "reshape", s, n);
}

static bool op_flatten(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    int64_t a = ox_attr_int(nd, "axis", 1);
    if (a < -x->ndim || a > x->ndim)
        return ox_fail(nd, "axis %lld is out of range for rank %d", (long long)a, x->ndim);
    int axis = (int)(a < 0 ? a + x->ndim : a);
    int64_t s[2] = {1, 1};
    for (int i = 0; i < x->ndim; i++)
        s[i < axis ? 0 : 1] *= x->shape[i];
    return reshape_to(nd, "flatten", s, 2);
}

/* The axes of Squeeze/Unsqueeze/Reduce*: an attribute before opset 13
 * (18 for reductions), an input from then on. */
static int axes_of(ox_node *nd, int input, bool attr, int64_t *axes)
{
    if (attr) {
        const int64_t *a;
        int n = ox_attr_ints(nd, "axes", &a);
        if (n > RT_MAX_DIMS + 1)
            return ox_fail(nd, "too many axes"), -1;
        memcpy(axes, a, sizeof(int64_t) * (size_t)n);
        return n;
    }
    if (input >= nd->nin || !nd->in[input])
        return 0;
    return ox_const_ints(nd, input, axes, RT_MAX_DIMS + 1);
}

static bool op_squeeze(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    int64_t axes[RT_MAX_DIMS + 1];
    int n = x ? axes_of(nd, 1, nd->opset < 13, axes) : -1;
    if (n < 0)
        return false;
    bool drop[RT_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++) {
        int a;
        if (!ox_axis(nd, axes[i], x->ndim, &a))
            return false;
        if (x->shape[a] != 1)
            return ox_fail(nd, "cannot squeeze axis %d of size %lld", a, (long long)x->shape[a]);
        drop[a] = true;
    }
    int64_t s[RT_MAX_DIMS];
    int r = 0;
    for (int i = 0; i < x->ndim; i++)
        if (!(n ? drop[i] : x->shape[i] == 1))
            s[r++] = x->shape[i];
    return reshape_to(nd, "squeeze", s, r);
}

static bool op_unsqueeze(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    int64_t axes[RT_MAX_DIMS + 1];
    int n = x ? axes_of(nd, 1, nd->opset < 13, axes) : -1;
    if (n < 0)
        return false;
    int R = x->ndim + n;
    if (R > RT_MAX_DIMS)
        return ox_fail(nd, "the result would have %d dimensions (at most %d)", R, RT_MAX_DIMS);
    bool ins[RT_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++) {
        int a;
        if (!ox_axis(nd, axes[i], R, &a))
            return false;
        if (ins[a])
            return ox_fail(nd, "axis %d is given twice", a);
        ins[a] = true;
    }
    int64_t s[RT_MAX_DIMS];
    for (int i = 0, k = 0; i < R; i++)
        s[i] = ins[i] ? 1 : x->shape[k++];
    return reshape_to(nd, "unsqueeze", s, R);
}

static bool op_transpose(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    const int64_t *pa;
    int np = ox_attr_ints(nd, "perm", &pa);
    int perm[RT_MAX_DIMS];
    bool seen[RT_MAX_DIMS] = {0};
    if (np && np != x->ndim)
        return ox_fail(nd, "perm has %d entries but the input has rank %d", np, x->ndim);
    for (int i = 0; i < x->ndim; i++) {
        perm[i] = np ? (int)pa[i] : x->ndim - 1 - i;
        if (perm[i] < 0 || perm[i] >= x->ndim || seen[perm[i]])
            return ox_fail(nd, "perm is not a permutation of 0..%d", x->ndim - 1);
        seen[perm[i]] = true;
    }
    int64_t xs[RT_MAX_DIMS], st[RT_MAX_DIMS], ys[RT_MAX_DIMS];
    strides(x, xs);
    for (int i = 0; i < x->ndim; i++)
        ys[i] = x->shape[perm[i]], st[i] = xs[perm[i]];
    int folded = ox_fold_view(nd, 0, x, x->ndim, ys, 0, st);
    if (folded)
        return folded > 0;
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = x->ndim;
    for (int i = 0; i < x->ndim; i++)
        y->shape[i] = x->shape[perm[i]];
    if (x->ndim >= 1) {   /* the language's view: no copy */
        ox_str args = {0};
        ox_printf(&args, "%s", x->id);
        for (int i = 0; i < x->ndim; i++)
            ox_printf(&args, ", %d", perm[i]);
        ox_str call = {0};
        ox_printf(&call, "permute(%s)", args.s);
        bool ok = ox_call_view(nd, y, call.s, NULL);
        free(args.s);
        free(call.s);
        return ok;
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] = x[");
    for (int d = 0; d < x->ndim; d++)
        for (int i = 0; i < x->ndim; i++)
            if (perm[i] == d)
                ox_printf(&k.body, "%si%d", d ? ", " : "", i);
    ox_printf(&k.body, "]\n");
    bool ok = ox_kernel_finish(&k, "transpose", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool op_concat(ox_node *nd)
{
    ox_value *v[64];
    int n = nd->nin;
    if (n < 1)
        return ox_fail(nd, "Concat needs at least one input");
    for (int i = 0; i < n; i++)
        if (!(v[i] = ox_input(nd, i)))
            return false;
    int axis;
    if (!ox_axis(nd, ox_attr_int(nd, "axis", nd->opset < 4 ? 1 : 0), v[0]->ndim, &axis))
        return false;
    ox_value *y = ox_output(nd, 0);
    same_shape(y, v[0]);
    y->shape[axis] = 0;
    for (int i = 0; i < n; i++) {
        if (v[i]->ndim != v[0]->ndim || v[i]->dtype != v[0]->dtype)
            return ox_fail(nd, "inputs '%s' and '%s' differ in rank or dtype", v[0]->onnx,
                           v[i]->onnx);
        for (int d = 0; d < v[0]->ndim; d++)
            if (d != axis && v[i]->shape[d] != v[0]->shape[d])
                return ox_fail(nd, "inputs '%s' and '%s' differ in dimension %d (%lld and %lld)",
                               v[0]->onnx, v[i]->onnx, d, (long long)v[0]->shape[d],
                               (long long)v[i]->shape[d]);
        y->shape[axis] += v[i]->shape[axis];
    }
    bool all_const = true, weight = false;
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        all_const = all_const && ox_known(v[i]);
        weight = weight || v[i]->weight;
        total += v[i]->konst ? rt_tensor_numel(v[i]->konst) : 0;
    }
    if (all_const && (!weight || total <= OX_FOLD_SMALL || y->ndim == 1)) {
        /* shapes being assembled: each input is a block of every outer
         * index, its rows laid side by side */
        rt_tensor *t = ox_const_new(nd, y->dtype, y->ndim, y->shape);
        if (!t)
            return false;
        int64_t outer = 1;
        for (int d = 0; d < axis; d++)
            outer *= y->shape[d];
        size_t off = 0;
        for (int64_t o = 0; o < outer; o++)
            for (int i = 0; i < n; i++) {
                size_t len = v[i]->konst->nbytes / (size_t)outer;
                memcpy((char *)t->data + off, (const char *)v[i]->konst->data + (size_t)o * len,
                       len);
                off += len;
            }
        y->konst = t;
        y->weight = weight;
        return true;
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, y->ndim);
    ox_printf(&k.body, "] = ");
    int64_t off = 0;
    for (int i = 0; i < n; i++) {
        char role[16];
        snprintf(role, sizeof role, "x%d", i);
        const char *r = ox_operand(&k, v[i], ox_kernel_role(&k, role));
        if (i + 1 < n)
            ox_printf(&k.body, "i%d < %lld ? ", axis, (long long)(off + v[i]->shape[axis]));
        ox_printf(&k.body, "%s[", r);
        for (int d = 0; d < y->ndim; d++) {
            if (d == axis && off)
                ox_printf(&k.body, "%si%d - %lld", d ? ", " : "", d, (long long)off);
            else
                ox_printf(&k.body, "%si%d", d ? ", " : "", d);
        }
        ox_printf(&k.body, "]%s", i + 1 < n ? " :\n        " : "\n");
        off += v[i]->shape[axis];
    }
    bool ok = ox_kernel_finish(&k, "concat", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* A slice as the language's views, one `slice` per axis it cuts: 1 when
 * written, -1 after an error, 0 when a view cannot say it (a negative step
 * that reaches the axis' first element, whose end would be -1, which the
 * language reads as the last). */
static int slice_view(ox_node *nd, ox_value *x, ox_value *y, const int64_t *start,
                      const int64_t *step, const int64_t *size, const char *suffix)
{
    int cuts = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (start[d] == 0 && step[d] == 1 && size[d] == x->shape[d])
            continue;
        if (size[d] < 1 || (step[d] < 0 && start[d] + (size[d] - 1) * step[d] - 1 < 0))
            return 0;
        cuts++;
    }
    if (!x->id || !cuts || x->ndim < 1)
        return 0;
    const char *from = x->id;   /* t = slice(x, 0, ...); y = slice(t, 2, ...) */
    bool ok = true;
    for (int d = 0; d < x->ndim; d++) {
        if (start[d] == 0 && step[d] == 1 && size[d] == x->shape[d])
            continue;
        ox_str t = {0};
        long long end = (long long)(start[d] + (size[d] - 1) * step[d] + (step[d] > 0 ? 1 : -1));
        ox_printf(&t, "slice(%s, %d, %lld, %lld, %lld)", from, d, (long long)start[d], end,
                  (long long)step[d]);
        if (--cuts)
            from = ox_view_step(nd, y, t.s);
        else
            ok = ox_call_view(nd, y, t.s, suffix);
        free(t.s);
    }
    return ok ? 1 : -1;
}

/* y[..., i, ...] = x[..., start[d] + i*step[d], ...] on every axis. */
static bool slice_kernel(ox_node *nd, int out, const char *base, const int64_t *start,
                         const int64_t *step, const int64_t *size, const char *suffix)
{
    ox_value *x = nd->in[0];
    int64_t xs[RT_MAX_DIMS], st[RT_MAX_DIMS], first = 0;
    strides(x, xs);
    for (int d = 0; d < x->ndim; d++) {
        first += start[d] * xs[d];
        st[d] = step[d] * xs[d];
    }
    int folded = ox_fold_view(nd, out, x, x->ndim, size, first, st);
    if (folded)
        return folded > 0;
    ox_value *y = ox_output(nd, out);
    y->dtype = x->dtype;
    y->ndim = x->ndim;
    memcpy(y->shape, size, sizeof(int64_t) * (size_t)x->ndim);
    int view = slice_view(nd, x, y, start, step, size, suffix);
    if (view)
        return view > 0;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] = x[");
    for (int d = 0; d < x->ndim; d++) {
        ox_printf(&k.body, "%s", d ? ", " : "");
        if (start[d] == 0 && step[d] == 1 && size[d] == x->shape[d])
            ox_printf(&k.body, "i%d", d);
        else if (step[d] == 1)
            ox_printf(&k.body, "i%d + %lld", d, (long long)start[d]);
        else
            ox_printf(&k.body, "%lld + i%d * %lld", (long long)start[d], d, (long long)step[d]);
    }
    ox_printf(&k.body, "]\n");
    bool ok = ox_kernel_finish(&k, base, y, suffix);
    ox_kernel_free(&k);
    return ok;
}

static bool op_split(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    int axis, nout = ox_noutputs(nd);
    if (!x || !ox_axis(nd, ox_attr_int(nd, "axis", 0), x->ndim, &axis))
        return false;
    int64_t parts[64];
    int n = 0;
    if (nd->opset < 13) {
        const int64_t *a;
        n = ox_attr_ints(nd, "split", &a);
        if (n > 64)
            return ox_fail(nd, "too many parts");
        memcpy(parts, a, sizeof(int64_t) * (size_t)n);
    } else if (nd->nin > 1 && nd->in[1]) {
        if ((n = ox_const_ints(nd, 1, parts, 64)) < 0)
            return false;
    }
    if (nout < 1 || nout > 64)
        return ox_fail(nd, "Split needs 1 to 64 outputs");
    int64_t D = x->shape[axis];
    if (n == 0) {
        if (D % nout)
            return ox_fail(nd, "axis %d of size %lld does not split into %d equal parts", axis,
                           (long long)D, nout);
        for (int i = 0; i < nout; i++)
            parts[i] = D / nout;
        n = nout;
    }
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += parts[i];
    if (n != nout || sum != D)
        return ox_fail(nd, "the parts (%d summing to %lld) do not match the %d outputs and axis "
                       "%d of size %lld", n, (long long)sum, nout, axis, (long long)D);
    int64_t start[RT_MAX_DIMS] = {0}, step[RT_MAX_DIMS], size[RT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++)
        step[d] = 1, size[d] = x->shape[d];
    for (int i = 0; i < n; i++) {
        size[axis] = parts[i];
        char suffix[16];
        snprintf(suffix, sizeof suffix, "%d", i);
        if (!slice_kernel(nd, i, "split", start, step, size, suffix))
            return false;
        start[axis] += parts[i];
    }
    return true;
}

static bool op_slice(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    int64_t st[RT_MAX_DIMS + 1], en[RT_MAX_DIMS + 1], ax[RT_MAX_DIMS + 1], sp[RT_MAX_DIMS + 1];
    int n, ne, na = -2, ns = -2;
    if (nd->opset < 10) {
        const int64_t *a, *b, *c;
        n = ox_attr_ints(nd, "starts", &a);
        ne = ox_attr_ints(nd, "ends", &b);
        na = ox_attr_ints(nd, "axes", &c);
        if (n > RT_MAX_DIMS || ne != n || (na && na != n))
            return ox_fail(nd, "starts, ends and axes differ in length");
        memcpy(st, a, sizeof(int64_t) * (size_t)n);
        memcpy(en, b, sizeof(int64_t) * (size_t)n);
        if (na)
            memcpy(ax, c, sizeof(int64_t) * (size_t)n);
        else
            na = -2;
    } else {
        if ((n = ox_const_ints(nd, 1, st, RT_MAX_DIMS + 1)) < 0 ||
            (ne = ox_const_ints(nd, 2, en, RT_MAX_DIMS + 1)) < 0)
            return false;
        if (nd->nin > 3 && nd->in[3] && (na = ox_const_ints(nd, 3, ax, RT_MAX_DIMS + 1)) < 0)
            return false;
        if (nd->nin > 4 && nd->in[4] && (ns = ox_const_ints(nd, 4, sp, RT_MAX_DIMS + 1)) < 0)
            return false;
        if (ne != n || (na >= 0 && na != n) || (ns >= 0 && ns != n))
            return ox_fail(nd, "starts, ends, axes and steps differ in length");
    }
    int64_t start[RT_MAX_DIMS] = {0}, step[RT_MAX_DIMS], size[RT_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++)
        step[d] = 1, size[d] = x->shape[d];
    for (int i = 0; i < n; i++) {
        int a;
        if (!ox_axis(nd, na >= 0 ? ax[i] : i, x->ndim, &a))
            return false;
        int64_t D = x->shape[a], s = ns >= 0 ? sp[i] : 1, b = st[i], e = en[i];
        if (s == 0)
            return ox_fail(nd, "step 0 on axis %d", a);
        if (b < 0)
            b += D;
        if (e < 0 && e > INT64_MIN / 2)
            e += D;
        if (s > 0) {
            b = b < 0 ? 0 : b > D ? D : b;
            e = e < 0 ? 0 : e > D ? D : e;
            size[a] = e > b ? (e - b + s - 1) / s : 0;
        } else {
            b = b < 0 ? 0 : b > D - 1 ? D - 1 : b;
            e = e < -1 ? -1 : e > D - 1 ? D - 1 : e;
            size[a] = b > e ? (b - e + (-s) - 1) / (-s) : 0;
        }
        start[a] = b;
        step[a] = s;
    }
    if (!ox_known(x) && !ox_check_shape(nd, size, x->ndim))   /* known: may be empty */
        return false;
    return slice_kernel(nd, 0, "slice", start, step, size, NULL);
}

static bool op_gather(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0), *ind = ox_input(nd, 1);
    int axis;
    if (!x || !ind || !ox_axis(nd, ox_attr_int(nd, "axis", 0), x->ndim, &axis))
        return false;
    if (ir_dtype_is_float(ind->dtype))
        return ox_fail(nd, "the indices must be integers");
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = x->ndim - 1 + ind->ndim;
    if (y->ndim > RT_MAX_DIMS)
        return ox_fail(nd, "the result has too many dimensions");
    int r = 0;
    for (int d = 0; d < axis; d++)
        y->shape[r++] = x->shape[d];
    for (int d = 0; d < ind->ndim; d++)
        y->shape[r++] = ind->shape[d];
    for (int d = axis + 1; d < x->ndim; d++)
        y->shape[r++] = x->shape[d];
    if (ox_known(x) && ox_known(ind) && (!x->weight || rt_tensor_numel(x->konst) <= OX_FOLD_SMALL)) {
        /* shape arithmetic: blocks of x's inner dimensions, picked */
        rt_tensor *t = ox_const_new(nd, x->dtype, y->ndim, y->shape);
        if (!t)
            return false;
        int64_t outer = 1, inner = 1, nind = rt_tensor_numel(ind->konst), D = x->shape[axis];
        for (int d = 0; d < axis; d++)
            outer *= x->shape[d];
        for (int d = axis + 1; d < x->ndim; d++)
            inner *= x->shape[d];
        size_t es = (size_t)ir_dtype_size(x->dtype), blk = es * (size_t)inner;
        for (int64_t j = 0; j < nind; j++) {
            int64_t at = rt_tensor_get_int(ind->konst, j);
            if (at < -D || at >= D) {
                rt_tensor_free(t);
                return ox_fail(nd, "index %lld is out of range for axis %d of size %lld",
                               (long long)at, axis, (long long)D);
            }
            at = at < 0 ? at + D : at;
            for (int64_t o = 0; o < outer; o++)
                memcpy((char *)t->data + (size_t)((o * nind + j) * inner) * es,
                       (const char *)x->konst->data + (size_t)((o * D + at) * inner) * es, blk);
        }
        y->konst = t;
        y->weight = x->weight;
        return true;
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_operand(&k, ind, "indices");
    ox_str iread = {0};
    ox_printf(&iread, "indices[");
    ox_indices(&iread, "i", axis, ind->ndim);
    ox_printf(&iread, "]");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, y->ndim);
    ox_printf(&k.body, "] = x[");
    for (int d = 0; d < x->ndim; d++) {
        ox_printf(&k.body, "%s", d ? ", " : "");
        if (d < axis)
            ox_printf(&k.body, "i%d", d);
        else if (d == axis)
            ox_printf(&k.body, "%s < 0 ? %s + %lld : %s", iread.s, iread.s,
                      (long long)x->shape[axis], iread.s);
        else
            ox_printf(&k.body, "i%d", d - 1 + ind->ndim);
    }
    ox_printf(&k.body, "]\n");
    free(iread.s);
    bool ok = ox_kernel_finish(&k, "gather", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool op_expand(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    int64_t s[RT_MAX_DIMS + 1];
    int n = x ? ox_const_ints(nd, 1, s, RT_MAX_DIMS + 1) : -1;
    if (n < 0)
        return false;
    if (n > RT_MAX_DIMS)
        return ox_fail(nd, "the shape has too many dimensions");
    ox_value shp = {.onnx = "shape", .ndim = n};
    memcpy(shp.shape, s, sizeof(int64_t) * (size_t)n);
    ox_value *both[2] = {x, &shp};
    int R;
    int64_t ys[RT_MAX_DIMS], xs[RT_MAX_DIMS], st[RT_MAX_DIMS];
    if (!broadcast(nd, both, 2, &R, ys))
        return false;
    strides(x, xs);
    for (int d = 0; d < R; d++) {
        int k = d - (R - x->ndim);
        st[d] = k < 0 || x->shape[k] == 1 ? 0 : xs[k];
    }
    int folded = ox_fold_view(nd, 0, x, R, ys, 0, st);
    if (folded)
        return folded > 0;
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = R;
    memcpy(y->shape, ys, sizeof ys);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, y->ndim);
    ox_printf(&k.body, "] = ");
    ox_bcast_read(&k.body, "x", x, y->ndim - x->ndim, y->shape);
    ox_printf(&k.body, "\n");
    bool ok = ox_kernel_finish(&k, "expand", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool op_tile(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    int64_t r[RT_MAX_DIMS + 1];
    int n = x ? ox_const_ints(nd, 1, r, RT_MAX_DIMS + 1) : -1;
    if (n < 0)
        return false;
    if (n != x->ndim)
        return ox_fail(nd, "repeats has %d entries but the input has rank %d", n, x->ndim);
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    for (int d = 0; d < n; d++)
        y->shape[d] *= r[d];
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, y->ndim);
    ox_printf(&k.body, "] = x[");
    for (int d = 0; d < n; d++)
        ox_printf(&k.body, "%si%d %% %lld", d ? ", " : "", d, (long long)x->shape[d]);
    ox_printf(&k.body, "]\n");
    bool ok = ox_kernel_finish(&k, "tile", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool op_pad(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    int64_t pads[2 * RT_MAX_DIMS + 1];
    int n;
    double value = 0;
    int64_t ivalue = 0;      /* an integer tensor's */
    if (nd->opset < 11) {
        const int64_t *a;
        n = ox_attr_ints(nd, nd->opset < 2 ? "paddings" : "pads", &a);
        if (n > 2 * RT_MAX_DIMS)
            return ox_fail(nd, "too many pads");
        memcpy(pads, a, sizeof(int64_t) * (size_t)n);
        value = ox_attr_float(nd, "value", 0);
    } else {
        if ((n = ox_const_ints(nd, 1, pads, 2 * RT_MAX_DIMS + 1)) < 0)
            return false;
        if (nd->nin > 2 && nd->in[2]) {
            if (!nd->in[2]->konst)
                return ox_fail(nd, "the constant value must be a constant");
            if (rt_tensor_numel(nd->in[2]->konst) != 1 || nd->in[2]->dtype != x->dtype)
                return ox_fail(nd, "the constant value must be one element of the input's "
                               "dtype");
            value = rt_tensor_get(nd->in[2]->konst, 0);
            ivalue = rt_tensor_get_int(nd->in[2]->konst, 0);
        }
        if (nd->nin > 3 && nd->in[3])
            return ox_fail(nd, "the axes input is not supported");
    }
    if (n != 2 * x->ndim)
        return ox_fail(nd, "pads has %d entries but the input has rank %d", n, x->ndim);
    const char *mode = ox_attr_str(nd, "mode", "constant");
    bool edge = strcmp(mode, "edge") == 0, reflect = strcmp(mode, "reflect") == 0;
    if (!edge && !reflect && strcmp(mode, "constant") != 0)
        return ox_fail(nd, "mode '%s' is not supported", mode);
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    for (int d = 0; d < x->ndim; d++) {
        if (pads[d] < 0 || pads[d + x->ndim] < 0)
            return ox_fail(nd, "negative pads are not supported");
        if (reflect && (pads[d] >= x->shape[d] || pads[d + x->ndim] >= x->shape[d]))
            return ox_fail(nd, "reflect pads must be smaller than the dimension");
        y->shape[d] += pads[d] + pads[d + x->ndim];
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, y->ndim);
    ox_printf(&k.body, "] = x[");
    for (int d = 0; d < x->ndim; d++) {
        long long p = (long long)pads[d], D = (long long)x->shape[d];
        ox_printf(&k.body, "%s", d ? ", " : "");
        if (!p && !pads[d + x->ndim])
            ox_printf(&k.body, "i%d", d);
        else if (edge)
            ox_printf(&k.body, "min(max(i%d - %lld, 0), %lld)", d, p, D - 1);
        else if (reflect)
            ox_printf(&k.body, "%lld - abs(%lld - abs(i%d - %lld))", D - 1, D - 1, d, p);
        else
            ox_printf(&k.body, "i%d - %lld", d, p);
    }
    ox_printf(&k.body, "] else ");
    if (ir_dtype_is_float(x->dtype))
        ox_float(&k.body, value);
    else
        ox_int(&k.body, ivalue);
    ox_printf(&k.body, "\n");
    bool ok = ox_kernel_finish(&k, "pad", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool op_depth_space(ox_node *nd, bool to_space)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    if (x->ndim != 4)
        return ox_fail(nd, "the input must be 4-D NCHW");
    int64_t b = ox_attr_int(nd, "blocksize", 0);
    bool crd = strcmp(ox_attr_str(nd, "mode", "DCR"), "CRD") == 0;
    long long N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
    if (b < 1 || (to_space && C % (b * b)) || (!to_space && (H % b || W % b)))
        return ox_fail(nd, "blocksize %lld does not fit the input", (long long)b);
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = 4;
    int64_t ys[4] = {N, to_space ? C / (b * b) : C * b * b, to_space ? H * b : H / b,
                     to_space ? W * b : W / b};
    memcpy(y->shape, ys, sizeof ys);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    long long bb = b, Co = ys[1];
    if (to_space && crd)        /* c*b*b + (h%b)*b + w%b */
        ox_printf(&k.body, "    y[i0, i1, i2, i3] = x[i0, i1 * %lld + i2 %% %lld * %lld + i3 %% %lld, "
                  "i2 / %lld, i3 / %lld]\n", bb * bb, bb, bb, bb, bb, bb);
    else if (to_space)          /* ((h%b)*b + w%b)*Co + c */
        ox_printf(&k.body, "    y[i0, i1, i2, i3] = x[i0, (i2 %% %lld * %lld + i3 %% %lld) * %lld + "
                  "i1, i2 / %lld, i3 / %lld]\n", bb, bb, bb, Co, bb, bb);
    else                        /* SpaceToDepth: y channel (bh*b + bw)*C + c */
        ox_printf(&k.body, "    y[i0, i1, i2, i3] = x[i0, i1 %% %lld, i2 * %lld + i1 / %lld / %lld, "
                  "i3 * %lld + i1 / %lld %% %lld]\n", C, bb, C, bb, bb, C, bb);
    bool ok = ox_kernel_finish(&k, to_space ? "depth_to_space" : "space_to_depth", y, NULL);
    ox_kernel_free(&k);
    return ok;
}
static bool op_depthtospace(ox_node *nd) { return op_depth_space(nd, true); }
static bool op_spacetodepth(ox_node *nd) { return op_depth_space(nd, false); }

/* ---------------------------------------------------------------- constants */

static bool op_constant(ox_node *nd)
{
    const Onnx__AttributeProto *a;
    char err[256];
    if ((a = ox_attr(nd, "value")) && a->t)
        return ox_set_const(nd, 0, ox_tensor_of(nd, a->t), false);
    int64_t one = 1;
    if ((a = ox_attr(nd, "value_float")) && a->has_f) {
        rt_tensor *t = rt_tensor_new(IR_F32, 0, &one, err, sizeof err);
        rt_tensor_set(t, 0, a->f);
        return ox_set_const(nd, 0, t, false);
    }
    if ((a = ox_attr(nd, "value_int")) && a->has_i) {
        rt_tensor *t = rt_tensor_new(IR_I64, 0, &one, err, sizeof err);
        ((int64_t *)t->data)[0] = a->i;
        return ox_set_const(nd, 0, t, false);
    }
    if ((a = ox_attr(nd, "value_floats")) && a->n_floats) {
        int64_t n = (int64_t)a->n_floats;
        rt_tensor *t = rt_tensor_new(IR_F32, 1, &n, err, sizeof err);
        memcpy(t->data, a->floats, sizeof(float) * a->n_floats);
        return ox_set_const(nd, 0, t, false);
    }
    if ((a = ox_attr(nd, "value_ints")) && a->n_ints) {
        int64_t n = (int64_t)a->n_ints;
        rt_tensor *t = rt_tensor_new(IR_I64, 1, &n, err, sizeof err);
        memcpy(t->data, a->ints, sizeof(int64_t) * a->n_ints);
        return ox_set_const(nd, 0, t, false);
    }
    return ox_fail(nd, "the constant has no supported value attribute");
}

static bool op_shape(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    int64_t lo = ox_attr_int(nd, "start", 0), hi = ox_attr_int(nd, "end", x->ndim);
    if (lo < 0)
        lo += x->ndim;
    if (hi < 0)
        hi += x->ndim;
    lo = lo < 0 ? 0 : lo > x->ndim ? x->ndim : lo;
    hi = hi < lo ? lo : hi > x->ndim ? x->ndim : hi;
    int64_t n = hi - lo;
    if (n < 1)
        return ox_fail(nd, "the shape is empty");
    char err[256];
    rt_tensor *t = rt_tensor_new(IR_I64, 1, &n, err, sizeof err);
    for (int64_t i = 0; i < n && t; i++)
        ((int64_t *)t->data)[i] = x->shape[lo + i];
    return ox_set_const(nd, 0, t, false);
}

static bool op_size(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    int64_t n = 1;
    char err[256];
    for (int d = 0; d < x->ndim; d++)
        n *= x->shape[d];
    rt_tensor *t = rt_tensor_new(IR_I64, 0, &n, err, sizeof err);
    if (t)
        ((int64_t *)t->data)[0] = n;
    return ox_set_const(nd, 0, t, false);
}

static bool op_constantofshape(ox_node *nd)
{
    int64_t s[RT_MAX_DIMS + 1];
    int n = ox_const_ints(nd, 0, s, RT_MAX_DIMS + 1);
    if (n < 0)
        return false;
    if (!ox_check_shape(nd, s, n))
        return false;
    const Onnx__AttributeProto *a = ox_attr(nd, "value");
    rt_tensor *v = a && a->t ? ox_tensor_of(nd, a->t) : NULL;
    if (a && a->t && !v)
        return false;
    if (v && rt_tensor_numel(v) != 1) {
        rt_tensor_free(v);
        return ox_fail(nd, "the value attribute must have one element");
    }
    rt_tensor *t = ox_const_new(nd, v ? v->dtype : IR_F32, n, s);
    if (t && v) {            /* copies of the element's bytes */
        for (int64_t i = 0; i < rt_tensor_numel(t); i++)
            memcpy((char *)t->data + (size_t)i * v->nbytes, v->data, v->nbytes);
    }
    rt_tensor_free(v);
    return ox_set_const(nd, 0, t, false);
}

static bool op_range(ox_node *nd)
{
    ox_value *v[3];
    for (int i = 0; i < 3; i++)
        if (!(v[i] = ox_input(nd, i)))
            return false;
        else if (!v[i]->konst || rt_tensor_numel(v[i]->konst) != 1)
            return ox_fail(nd, "input %d ('%s') must be a constant scalar", i + 1, v[i]->onnx);
    double a = rt_tensor_get(v[0]->konst, 0), b = rt_tensor_get(v[1]->konst, 0),
           d = rt_tensor_get(v[2]->konst, 0);
    if (d == 0)
        return ox_fail(nd, "delta is 0");
    double cnt = ceil((b - a) / d);
    if (isnan(cnt) || cnt > (double)OX_FOLD_MAX)
        return ox_fail(nd, "the range from %.17g to %.17g by %.17g has %.17g elements: tec "
                       "computes constants of at most 2^24 elements when it imports a model",
                       a, b, d, cnt);
    int64_t n = cnt < 1 ? 0 : (int64_t)cnt;
    if (!ox_check_shape(nd, &n, 1))
        return false;
    rt_tensor *t = ox_const_new(nd, v[0]->dtype, 1, &n);
    bool integer = !ir_dtype_is_float(v[0]->dtype);
    int64_t ia = integer ? rt_tensor_get_int(v[0]->konst, 0) : 0;
    int64_t id = integer ? rt_tensor_get_int(v[2]->konst, 0) : 0;
    for (int64_t i = 0; t && i < n; i++) {
        if (integer)         /* exact, past 2^53 too */
            ox_put_int(t, i, (int64_t)((uint64_t)ia + (uint64_t)i * (uint64_t)id));
        else
            rt_tensor_set(t, i, a + (double)i * d);
    }
    return ox_set_const(nd, 0, t, false);
}

/* ---------------------------------------------------------------- reductions */

/* The reduction of x over the axes red[] (keepdims or not), with the
 * reduced indices named r0, r1 ... : `y[...] OP= EXPR(x[...])`, then an
 * optional finishing statement `y = FIN(s)`. */
static bool reduce_kernel(ox_node *nd, const char *base, const bool *red, bool keep,
                          const char *op, const char *tmpl, const char *fin, ir_dtype out_dt)
{
    ox_value *x = nd->in[0];
    ox_value *y = ox_output(nd, 0);
    y->dtype = out_dt;
    y->ndim = 0;
    int64_t count = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (red[d])
            count *= x->shape[d];
        if (!red[d] || keep)
            y->shape[y->ndim++] = red[d] ? 1 : x->shape[d];
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    /* a temporary has the kept dimensions only: an index of a size-1
     * dimension that no read uses would have no range */
    ox_str read = {0}, left = {0}, kept = {0};
    ox_printf(&read, "x[");
    for (int d = 0, o = 0, q = 0; d < x->ndim; d++) {
        ox_printf(&read, "%s%c%d", d ? ", " : "", red[d] ? 'r' : 'i', d);
        if (!red[d] || keep)
            ox_printf(&left, "%si%d", o++ ? ", " : "", d);
        if (!red[d])
            ox_printf(&kept, "%si%d", q++ ? ", " : "", d);
    }
    ox_printf(&read, "]");
    if (fin)
        ox_printf(&k.body, "    s[%s] %s ", kept.s ? kept.s : "", op);
    else
        ox_printf(&k.body, "    y[%s] %s ", left.s ? left.s : "", op);
    subst(&k.body, tmpl, read.s);
    ox_printf(&k.body, "\n");
    if (fin) {
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%lld", (long long)count);
        ox_str sread = {0};
        ox_printf(&sread, "s[%s]", kept.s ? kept.s : "");
        ox_printf(&k.body, "    y[%s] = ", left.s ? left.s : "");
        for (const char *p = fin; *p; p++) {
            if (*p == '$')
                ox_printf(&k.body, "%s", sread.s);
            else if (*p == '#')
                ox_printf(&k.body, "%s", cnt);
            else
                ox_printf(&k.body, "%c", *p);
        }
        ox_printf(&k.body, "\n");
        free(sread.s);
    }
    free(read.s);
    free(left.s);
    free(kept.s);
    bool ok = ox_kernel_finish(&k, base, y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool reduce_op(ox_node *nd, const char *base, const char *op, const char *tmpl,
                      const char *fin, bool float_only, int axes_input_from)
{
    ox_value *x = ox_input(nd, 0);
    if (!x || (float_only && !need_float(nd, x)))
        return false;
    int64_t axes[RT_MAX_DIMS + 1];
    int n = axes_of(nd, 1, nd->opset < axes_input_from, axes);
    if (n < 0)
        return false;
    bool red[RT_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++) {
        int a;
        if (!ox_axis(nd, axes[i], x->ndim, &a))
            return false;
        red[a] = true;
    }
    if (n == 0) {
        if (ox_attr_int(nd, "noop_with_empty_axes", 0))
            return op_copy(nd);
        for (int d = 0; d < x->ndim; d++)
            red[d] = true;
    }
    return reduce_kernel(nd, base, red, ox_attr_int(nd, "keepdims", 1) != 0, op, tmpl, fin,
                         x->dtype);
}

static bool op_reducesum(ox_node *nd) { return reduce_op(nd, "reduce_sum", "+=", "$", NULL, false, 13); }
static bool op_reducemean(ox_node *nd) { return reduce_op(nd, "reduce_mean", "+=", "$", "$ / #", true, 18); }
static bool op_reducemax(ox_node *nd) { return reduce_op(nd, "reduce_max", "max=", "$", NULL, false, 18); }
static bool op_reducemin(ox_node *nd) { return reduce_op(nd, "reduce_min", "min=", "$", NULL, false, 18); }
static bool op_reduceprod(ox_node *nd) { return reduce_op(nd, "reduce_prod", "*=", "$", NULL, false, 18); }
static bool op_reducel1(ox_node *nd) { return reduce_op(nd, "reduce_l1", "+=", "abs($)", NULL, false, 18); }
static bool op_reducel2(ox_node *nd) { return reduce_op(nd, "reduce_l2", "+=", "$ * $", "sqrt($)", true, 18); }
static bool op_reducesumsquare(ox_node *nd) { return reduce_op(nd, "reduce_sum_square", "+=", "$ * $", NULL, false, 18); }
static bool op_reducelogsum(ox_node *nd) { return reduce_op(nd, "reduce_log_sum", "+=", "$", "log($)", true, 18); }
static bool op_reducelogsumexp(ox_node *nd) { return reduce_op(nd, "reduce_log_sum_exp", "+=", "exp($)", "log($)", true, 18); }

static bool global_pool(ox_node *nd, const char *base, const char *op, const char *fin)
{
    ox_value *x = ox_input(nd, 0);
    if (!x || (fin && !need_float(nd, x)))
        return false;
    if (x->ndim < 3)
        return ox_fail(nd, "the input must have a batch, a channel and spatial dimensions");
    bool red[RT_MAX_DIMS] = {0};
    for (int d = 2; d < x->ndim; d++)
        red[d] = true;
    return reduce_kernel(nd, base, red, true, op, "$", fin, x->dtype);
}
static bool op_globalaveragepool(ox_node *nd) { return global_pool(nd, "global_avgpool", "+=", "$ / #"); }
static bool op_globalmaxpool(ox_node *nd) { return global_pool(nd, "global_maxpool", "max=", NULL); }

static bool op_argmaxmin(ox_node *nd, bool is_max)
{
    ox_value *x = ox_input(nd, 0);
    int axis;
    if (!x || !ox_axis(nd, ox_attr_int(nd, "axis", 0), x->ndim, &axis))
        return false;
    bool keep = ox_attr_int(nd, "keepdims", 1) != 0, last = ox_attr_int(nd, "select_last_index", 0);
    ox_value *y = ox_output(nd, 0);
    y->dtype = IR_I64;
    y->ndim = 0;
    for (int d = 0; d < x->ndim; d++)
        if (d != axis || keep)
            y->shape[y->ndim++] = d == axis ? 1 : x->shape[d];
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_str read = {0}, left = {0}, kept = {0};
    ox_printf(&read, "x[");
    for (int d = 0, o = 0, q = 0; d < x->ndim; d++) {
        ox_printf(&read, "%s%s%d", d ? ", " : "", d == axis ? "r" : "i", d);
        if (d != axis || keep)
            ox_printf(&left, "%si%d", o++ ? ", " : "", d);
        if (d != axis)
            ox_printf(&kept, "%si%d", q++ ? ", " : "", d);
    }
    ox_printf(&read, "]");
    const char *L = left.s ? left.s : "", *K = kept.s ? kept.s : "";
    ox_printf(&k.body, "    m[%s] %s %s\n", K, is_max ? "max=" : "min=", read.s);
    ox_printf(&k.body, "    y[%s] %s %s == m[%s] ? r%d : %s\n", L, last ? "max=" : "min=", read.s,
              K, axis, last ? "-1" : "9223372036854775807");
    free(read.s);
    free(left.s);
    free(kept.s);
    bool ok = ox_kernel_finish(&k, is_max ? "argmax" : "argmin", y, NULL);
    ox_kernel_free(&k);
    return ok;
}
static bool op_argmax(ox_node *nd) { return op_argmaxmin(nd, true); }
static bool op_argmin(ox_node *nd) { return op_argmaxmin(nd, false); }

/* Softmax and LogSoftmax: over one axis from opset 13, before it over the
 * input coerced to 2-D at axis (every axis from axis on). */
static bool softmax_op(ox_node *nd, bool logsm)
{
    ox_value *x = ox_input(nd, 0);
    int axis;
    if (!x || !need_float(nd, x) ||
        !ox_axis(nd, ox_attr_int(nd, "axis", nd->opset < 13 ? 1 : -1), x->ndim, &axis))
        return false;
    bool red[RT_MAX_DIMS] = {0};
    for (int d = axis; d < (nd->opset < 13 ? x->ndim : axis + 1); d++)
        red[d] = true;
    if (!logsm && nd->opset >= 13 && axis == x->ndim - 1 && x->ndim >= 2 && x->ndim <= 4 &&
        x->dtype == IR_F32 && x->id) {
        ox_value *y = ox_output(nd, 0);
        same_shape(y, x);
        return ox_call_nn(nd, y, "softmax", x->id, NULL, NULL, 0);
    }
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_str xr = {0}, kept = {0}, all = {0};
    for (int d = 0, o = 0; d < x->ndim; d++) {
        ox_printf(&all, "%si%d", d ? ", " : "", d);
        if (!red[d])
            ox_printf(&kept, "%si%d", o++ ? ", " : "", d);
    }
    ox_printf(&xr, "x[");
    for (int d = 0; d < x->ndim; d++)
        ox_printf(&xr, "%s%s%d", d ? ", " : "", red[d] ? "r" : "i", d);
    ox_printf(&xr, "]");
    const char *K = kept.s ? kept.s : "";
    ox_printf(&k.body, "    m[%s] max= %s\n", K, xr.s);
    ox_printf(&k.body, "    s[%s] += exp(%s - m[%s])\n", K, xr.s, K);
    if (logsm)
        ox_printf(&k.body, "    y[%s] = x[%s] - m[%s] - log(s[%s])\n", all.s, all.s, K, K);
    else
        ox_printf(&k.body, "    y[%s] = exp(x[%s] - m[%s]) / s[%s]\n", all.s, all.s, K, K);
    free(xr.s);
    free(kept.s);
    free(all.s);
    bool ok = ox_kernel_finish(&k, logsm ? "log_softmax" : "softmax", y, NULL);
    ox_kernel_free(&k);
    return ok;
}
static bool op_softmax(ox_node *nd) { return softmax_op(nd, false); }
static bool op_logsoftmax(ox_node *nd) { return softmax_op(nd, true); }

static bool op_cumsum(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    int64_t ax;
    int axis;
    if (!x || ox_const_ints(nd, 1, &ax, 1) != 1 || !ox_axis(nd, ax, x->ndim, &axis))
        return false;
    bool excl = ox_attr_int(nd, "exclusive", 0), rev = ox_attr_int(nd, "reverse", 0);
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] += r%d %s i%d ? x[", axis, rev ? (excl ? ">" : ">=") : (excl ? "<" : "<="), axis);
    for (int d = 0; d < x->ndim; d++)
        ox_printf(&k.body, "%s%s%d", d ? ", " : "", d == axis ? "r" : "i", d);
    ox_printf(&k.body, "] : 0\n");
    bool ok = ox_kernel_finish(&k, "cumsum", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* ---------------------------------------------------------------- normalization */

static bool batchnorm_training(ox_node *nd, ox_value **v, double eps);

static bool op_batchnorm(ox_node *nd)
{
    ox_value *v[5];
    for (int i = 0; i < 5; i++)
        if (!(v[i] = ox_input(nd, i)))
            return false;
    bool training = ox_attr_int(nd, "training_mode", 0) != 0;
    if (ox_noutputs(nd) > (training ? 3 : 1) || (training && nd->opset < 14))
        return ox_fail(nd, "training mode (the mean and variance outputs) is supported from "
                       "opset 14 on, with at most 3 outputs");
    ox_value *x = v[0];
    if (!need_float(nd, x))
        return false;
    if (x->ndim < 2)
        return ox_fail(nd, "the input must have a channel dimension");
    for (int i = 1; i < 5; i++)
        if (v[i]->ndim != 1 || v[i]->shape[0] != x->shape[1] || v[i]->dtype != x->dtype)
            return ox_fail(nd, "input %d ('%s') must be %s[%lld]", i + 1, v[i]->onnx,
                           ir_dtype_name(x->dtype), (long long)x->shape[1]);
    double eps = ox_attr_float(nd, "epsilon", 1e-5);
    if (training)
        return batchnorm_training(nd, v, eps);
    bool consts = true;
    for (int i = 1; i < 5; i++)
        consts = consts && ox_is_param(v[i]);
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    if (consts && x->ndim == 4 && x->dtype == IR_F32 && x->id) {
        static const char *roles[] = {"weight", "bias", "running_mean", "running_var"};
        rt_tensor *data[4] = {v[1]->konst, v[2]->konst, v[3]->konst, v[4]->konst};
        ox_str args = {0};
        ox_printf(&args, "%s, eps=", x->id);
        ox_float(&args, eps);
        bool ok = ox_call_nn(nd, y, "batchnorm", args.s, roles, data, 4);
        free(args.s);
        return ok;
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    const char *r[4] = {ox_operand(&k, v[1], "weight"), ox_operand(&k, v[2], "bias"),
                        ox_operand(&k, v[3], "running_mean"), ox_operand(&k, v[4], "running_var")};
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] = (x[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] - %s[i1]) / sqrt(%s[i1] + ", r[2], r[3]);
    ox_float(&k.body, eps);
    ox_printf(&k.body, ") * %s[i1] + %s[i1]\n", r[0], r[1]);
    bool ok = ox_kernel_finish(&k, "batchnorm", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* Normalizes x over the axes red[] (mean and biased variance), then
 * scales and shifts by scale and bias read with the given indices. */
static bool normalize(ox_node *nd, const char *base, const bool *red, double eps,
                      ox_value *scale, ox_value *bias, bool per_channel)
{
    ox_value *x = nd->in[0];
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    int64_t count = 1;
    for (int d = 0; d < x->ndim; d++)
        if (red[d])
            count *= x->shape[d];
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    const char *sr = ox_operand(&k, scale, "weight");
    const char *br = bias ? ox_operand(&k, bias, "bias") : NULL;
    ox_str kept = {0}, all = {0}, xr = {0};
    for (int d = 0, o = 0; d < x->ndim; d++) {
        ox_printf(&all, "%si%d", d ? ", " : "", d);
        if (!red[d])
            ox_printf(&kept, "%si%d", o++ ? ", " : "", d);
    }
    ox_printf(&xr, "x[");
    for (int d = 0; d < x->ndim; d++)
        ox_printf(&xr, "%s%s%d", d ? ", " : "", red[d] ? "r" : "i", d);
    ox_printf(&xr, "]");
    const char *K = kept.s ? kept.s : "";
    ox_printf(&k.body, "    sum[%s] += %s\n", K, xr.s);
    ox_printf(&k.body, "    sq[%s] += (%s - sum[%s] / %lld) * (%s - sum[%s] / %lld)\n", K, xr.s, K,
              (long long)count, xr.s, K, (long long)count);
    ox_printf(&k.body, "    y[%s] = (x[%s] - sum[%s] / %lld) / sqrt(sq[%s] / %lld + ", all.s, all.s,
              K, (long long)count, K, (long long)count);
    ox_float(&k.body, eps);
    ox_printf(&k.body, ") * ");
    ox_value *sb[2] = {scale, bias};
    const char *rb[2] = {sr, br};
    for (int i = 0; i < 2 && sb[i]; i++) {
        if (i)
            ox_printf(&k.body, " + ");
        if (per_channel)
            ox_printf(&k.body, "%s[i1]", rb[i]);
        else
            ox_bcast_read(&k.body, rb[i], sb[i], x->ndim - sb[i]->ndim, x->shape);
    }
    ox_printf(&k.body, "\n");
    free(kept.s);
    free(all.s);
    free(xr.s);
    bool ok = ox_kernel_finish(&k, base, y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* Output i of the node: the mean (i == 1) or 1 / sqrt(variance + eps)
 * (i == 2) of x over red[], with those dimensions kept as 1. */
static bool moments(ox_node *nd, int i, const bool *red, double eps)
{
    ox_value *x = nd->in[0];
    ox_value *y = ox_output(nd, i);
    same_shape(y, x);
    int64_t count = 1;
    for (int d = 0; d < x->ndim; d++)
        if (red[d])
            count *= x->shape[d], y->shape[d] = 1;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_str kept = {0}, all = {0}, xr = {0};
    for (int d = 0, o = 0; d < x->ndim; d++) {
        ox_printf(&all, "%si%d", d ? ", " : "", d);
        if (!red[d])
            ox_printf(&kept, "%si%d", o++ ? ", " : "", d);
    }
    ox_printf(&xr, "x[");
    for (int d = 0; d < x->ndim; d++)
        ox_printf(&xr, "%s%s%d", d ? ", " : "", red[d] ? "r" : "i", d);
    ox_printf(&xr, "]");
    const char *K = kept.s ? kept.s : "";
    ox_printf(&k.body, "    sum[%s] += %s\n", K, xr.s);
    if (i == 1) {
        ox_printf(&k.body, "    y[%s] = sum[%s] / %lld\n", all.s, K, (long long)count);
    } else {
        ox_printf(&k.body, "    sq[%s] += (%s - sum[%s] / %lld) * (%s - sum[%s] / %lld)\n", K, xr.s,
                  K, (long long)count, xr.s, K, (long long)count);
        ox_printf(&k.body, "    y[%s] = 1 / sqrt(sq[%s] / %lld + ", all.s, K, (long long)count);
        ox_float(&k.body, eps);
        ox_printf(&k.body, ")\n");
    }
    free(kept.s);
    free(all.s);
    free(xr.s);
    bool ok = ox_kernel_finish(&k, i == 1 ? "mean" : "inv_std_dev", y, i == 1 ? "mean" : "inv_std_dev");
    ox_kernel_free(&k);
    return ok;
}

/* BatchNormalization's output i in training mode: the running mean (i ==
 * 1) or variance (i == 2) given as input i + 2, times momentum, plus the
 * batch's mean or biased variance over every dimension but 1 times
 * (1 - momentum). */
static bool running_stat(ox_node *nd, int i, ox_value *running, double momentum)
{
    ox_value *x = nd->in[0];
    ox_value *y = ox_output(nd, i);
    same_shape(y, running);
    int64_t count = 1;
    for (int d = 0; d < x->ndim; d++)
        count *= d == 1 ? 1 : x->shape[d];
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    const char *r = ox_operand(&k, running, i == 1 ? "running_mean" : "running_var");
    ox_str xr = {0};
    ox_printf(&xr, "x[");
    for (int d = 0; d < x->ndim; d++)
        ox_printf(&xr, "%s%s%d", d ? ", " : "", d == 1 ? "i" : "r", d);
    ox_printf(&xr, "]");
    ox_printf(&k.body, "    sum[i1] += %s\n", xr.s);
    if (i == 2)
        ox_printf(&k.body, "    sq[i1] += (%s - sum[i1] / %lld) * (%s - sum[i1] / %lld)\n", xr.s,
                  (long long)count, xr.s, (long long)count);
    ox_printf(&k.body, "    y[i1] = %s[i1] * ", r);
    ox_float(&k.body, momentum);
    ox_printf(&k.body, " + %s[i1] / %lld * ", i == 1 ? "sum" : "sq", (long long)count);
    ox_float(&k.body, 1 - momentum);
    ox_printf(&k.body, "\n");
    free(xr.s);
    const char *name = i == 1 ? "running_mean" : "running_var";
    bool ok = ox_kernel_finish(&k, name, y, name);
    ox_kernel_free(&k);
    return ok;
}

/* BatchNormalization in training mode (opset 14 on): y normalized with the
 * batch's statistics, and the running mean and variance updated. */
static bool batchnorm_training(ox_node *nd, ox_value **v, double eps)
{
    bool red[RT_MAX_DIMS] = {0};
    for (int d = 0; d < v[0]->ndim; d++)
        red[d] = d != 1;
    if (!normalize(nd, "batchnorm_training", red, eps, v[1], v[2], true))
        return false;
    double momentum = ox_attr_float(nd, "momentum", 0.9);
    for (int i = 1; i < ox_noutputs(nd) && i <= 2; i++)
        if (*nd->n->output[i] && !running_stat(nd, i, v[2 + i], momentum))
            return false;
    return true;
}

static bool op_instancenorm(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0), *s = ox_input(nd, 1), *b = ox_input(nd, 2);
    if (!x || !s || !b || !need_float(nd, x))
        return false;
    if (x->ndim < 3 || s->ndim != 1 || b->ndim != 1 || s->shape[0] != x->shape[1] ||
        b->shape[0] != x->shape[1])
        return ox_fail(nd, "expects x of rank >= 3 and a scale and a bias of its channels");
    bool red[RT_MAX_DIMS] = {0};
    for (int d = 2; d < x->ndim; d++)
        red[d] = true;
    return normalize(nd, "instancenorm", red, ox_attr_float(nd, "epsilon", 1e-5), s, b, true);
}

static bool op_layernorm(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0), *s = ox_input(nd, 1);
    ox_value *b = nd->nin > 2 ? nd->in[2] : NULL;
    int axis;
    if (!x || !s || !need_float(nd, x) || !same_dtypes(nd, 0, 2) ||
        !ox_axis(nd, ox_attr_int(nd, "axis", -1), x->ndim, &axis))
        return false;
    bool red[RT_MAX_DIMS] = {0};
    for (int d = axis; d < x->ndim; d++)
        red[d] = true;
    double eps = ox_attr_float(nd, "epsilon", 1e-5);
    if (!normalize(nd, "layernorm", red, eps, s, b, false))
        return false;
    /* the optional Mean and InvStdDev outputs, of x's shape with the
     * normalized dimensions 1 */
    for (int i = 1; i < ox_noutputs(nd) && i <= 2; i++)
        if (*nd->n->output[i] && !moments(nd, i, red, eps))
            return false;
    return true;
}

/* ---------------------------------------------------------------- contractions */

static bool op_matmul(ox_node *nd)
{
    ox_value *a = ox_input(nd, 0), *b = ox_input(nd, 1);
    if (!a || !b)
        return false;
    if (!same_dtypes(nd, 0, 1))
        return false;
    if (a->ndim < 1 || b->ndim < 1)
        return ox_fail(nd, "the inputs must have rank 1 or more ('%s' has rank %d, '%s' rank %d)",
                       a->onnx, a->ndim, b->onnx, b->ndim);
    /* 1-D operands become matrices: [K] -> [1, K] for a, [K, 1] for b */
    ox_value A = *a, B = *b;
    if (A.ndim == 1)
        A.ndim = 2, A.shape[1] = A.shape[0], A.shape[0] = 1;
    if (B.ndim == 1)
        B.ndim = 2, B.shape[1] = 1;
    int64_t M = A.shape[A.ndim - 2], K = A.shape[A.ndim - 1], N = B.shape[B.ndim - 1];
    if (B.shape[B.ndim - 2] != K)
        return ox_fail(nd, "'%s' has %lld columns but '%s' has %lld rows", a->onnx, (long long)K,
                       b->onnx, (long long)B.shape[B.ndim - 2]);
    ox_value ba = A, bb = B;   /* the batch dimensions, broadcast */
    ba.ndim -= 2, bb.ndim -= 2;
    ox_value *both[2] = {&ba, &bb};
    int R;
    int64_t bs[RT_MAX_DIMS];
    if (!broadcast(nd, both, 2, &R, bs))
        return false;
    ox_value *y = ox_output(nd, 0);
    y->dtype = a->dtype;
    y->ndim = 0;
    for (int d = 0; d < R; d++)
        y->shape[y->ndim++] = bs[d];
    if (a->ndim > 1)
        y->shape[y->ndim++] = M;
    if (b->ndim > 1)
        y->shape[y->ndim++] = N;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, a, "A");
    ox_operand(&k, b, "B");
    /* y indices: batch i0..i{R-1}, then m (if a is not 1-D) and n (if b is not 1-D) */
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, R);
    if (a->ndim > 1)
        ox_printf(&k.body, "%sm", R ? ", " : "");
    if (b->ndim > 1)
        ox_printf(&k.body, "%sn", R || a->ndim > 1 ? ", " : "");
    ox_printf(&k.body, "] += A[");
    int64_t batch_shape[RT_MAX_DIMS];
    memcpy(batch_shape, bs, sizeof bs);
    for (int d = 0; d < a->ndim - 2; d++) {
        int o = R - (a->ndim - 2) + d;
        ox_printf(&k.body, "%s%s", d ? ", " : "", a->shape[d] == 1 && batch_shape[o] != 1 ? "0" : "");
        if (!(a->shape[d] == 1 && batch_shape[o] != 1))
            ox_printf(&k.body, "i%d", o);
    }
    ox_printf(&k.body, "%s%sk] * B[", a->ndim > 2 ? ", " : "", a->ndim > 1 ? "m, " : "");
    for (int d = 0; d < b->ndim - 2; d++) {
        int o = R - (b->ndim - 2) + d;
        ox_printf(&k.body, "%s", d ? ", " : "");
        if (b->shape[d] == 1 && batch_shape[o] != 1)
            ox_printf(&k.body, "0");
        else
            ox_printf(&k.body, "i%d", o);
    }
    ox_printf(&k.body, "%sk%s]\n", b->ndim > 2 ? ", " : "", b->ndim > 1 ? ", n" : "");
    bool ok = ox_kernel_finish(&k, "matmul", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool op_gemm(ox_node *nd)
{
    ox_value *a = ox_input(nd, 0), *b = ox_input(nd, 1);
    ox_value *c = nd->nin > 2 ? nd->in[2] : NULL;
    if (!a || !b || !need_float(nd, a) || !same_dtypes(nd, 0, 2))
        return false;
    if (a->ndim != 2 || b->ndim != 2)
        return ox_fail(nd, "A and B must be matrices");
    bool ta = ox_attr_int(nd, "transA", 0), tb = ox_attr_int(nd, "transB", 0);
    double alpha = ox_attr_float(nd, "alpha", 1), beta = ox_attr_float(nd, "beta", 1);
    int64_t M = a->shape[ta ? 1 : 0], K = a->shape[ta ? 0 : 1];
    int64_t Kb = b->shape[tb ? 1 : 0], N = b->shape[tb ? 0 : 1];
    if (K != Kb)
        return ox_fail(nd, "A is %lldx%lld but B is %lldx%lld (after transA=%d, transB=%d)",
                       (long long)M, (long long)K, (long long)Kb, (long long)N, ta, tb);
    ox_value *y = ox_output(nd, 0);
    y->dtype = a->dtype;
    y->ndim = 2;
    y->shape[0] = M, y->shape[1] = N;
    if (c) {
        ox_value *both[2] = {y, c};
        int R;
        int64_t s[RT_MAX_DIMS];
        if (!broadcast(nd, both, 2, &R, s) || R != 2 || s[0] != M || s[1] != N)
            return R != 2 ? ox_fail(nd, "C does not broadcast to %lldx%lld", (long long)M,
                                    (long long)N) : false;
    }
    /* torch.nn.Linear: nn.te's linear, with the weight and the bias as params */
    if (!ta && tb && alpha == 1 && beta == 1 && a->id && a->dtype == IR_F32 && ox_is_param(b) &&
        c && ox_is_param(c) && c->ndim == 1 && c->shape[0] == N) {
        static const char *roles[] = {"weight", "bias"};
        rt_tensor *data[2] = {b->konst, c->konst};
        ox_str args = {0};
        ox_printf(&args, "%s, %lld", a->id, (long long)N);
        bool ok = ox_call_nn(nd, y, "linear", args.s, roles, data, 2);
        free(args.s);
        return ok;
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, a, "A");
    ox_operand(&k, b, "B");
    const char *cr = c ? ox_operand(&k, c, "C") : NULL;
    ox_printf(&k.body, "    %s[i0, i1] += A[%s] * B[%s]\n", c || alpha != 1 ? "t" : "y",
              ta ? "k, i0" : "i0, k", tb ? "i1, k" : "k, i1");
    if (c || alpha != 1) {
        ox_printf(&k.body, "    y[i0, i1] = ");
        if (alpha != 1) {
            ox_float(&k.body, alpha);
            ox_printf(&k.body, " * ");
        }
        ox_printf(&k.body, "t[i0, i1]");
        if (c) {
            ox_printf(&k.body, " + ");
            if (beta != 1) {
                ox_float(&k.body, beta);
                ox_printf(&k.body, " * ");
            }
            ox_bcast_read(&k.body, cr, c, 2 - c->ndim, y->shape);
        }
        ox_printf(&k.body, "\n");
    }
    bool ok = ox_kernel_finish(&k, "gemm", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* The equation with each '...' spelled out as letters the equation does
 * not use, one per dimension it stands for (right-aligned across the
 * terms, as NumPy aligns them), and the implicit output written out
 * (the '...' dimensions, then the letters used once, in alphabetical
 * order).  False after an error. */
static bool expand_ellipsis(ox_node *nd, const char *eq, char *out, size_t len)
{
    bool used[128] = {false};
    for (const char *p = eq; *p; p++)
        used[(unsigned char)*p & 127] = true;
    const char *arrow = strstr(eq, "->");
    size_t nl = arrow ? (size_t)(arrow - eq) : strlen(eq);
    int dots[64] = {0}, terms = 0, most = 0;   /* '...' dimensions of each term */
    for (size_t at = 0; at <= nl && terms < 64; terms++) {
        size_t end = at;
        int letters = 0;
        while (end < nl && eq[end] != ',')
            letters += eq[end] != ' ' && eq[end] != '.', end++;
        const char *e = strstr(eq + at, "...");
        ox_value *v = terms < nd->nin ? nd->in[terms] : NULL;
        if (e && e < eq + end) {
            if (!v || v->ndim < letters)
                return ox_fail(nd, "term %d of '%s' has more letters than its input has "
                               "dimensions", terms + 1, eq);
            dots[terms] = v->ndim - letters;
            most = dots[terms] > most ? dots[terms] : most;
        }
        at = end + 1;
    }
    char fresh[RT_MAX_DIMS + 1] = "";
    for (int c = 'A', n = 0; n < most && c <= 'z'; c++)
        if (((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) && !used[c])
            fresh[n++] = (char)c;
    if ((int)strlen(fresh) < most)
        return ox_fail(nd, "'...' stands for more dimensions than there are letters left");
    ox_str b = {0};
    int term = 0;
    for (size_t i = 0; i < nl; i++) {
        if (eq[i] == ',')
            term++;
        if (strncmp(eq + i, "...", 3) == 0) {
            ox_printf(&b, "%s", fresh + most - dots[term]);
            i += 2;
        } else {
            ox_printf(&b, "%c", eq[i]);
        }
    }
    ox_printf(&b, "->");
    if (arrow) {
        for (const char *p = arrow + 2; *p; p++)
            if (strncmp(p, "...", 3) == 0)
                ox_printf(&b, "%s", fresh), p += 2;
            else
                ox_printf(&b, "%c", *p);
    } else {
        int count[128] = {0};
        for (size_t i = 0; i < nl; i++)
            count[(unsigned char)eq[i] & 127]++;
        ox_printf(&b, "%s", fresh);
        for (int c = 'A'; c <= 'z'; c++)
            if (count[c] == 1 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
                ox_printf(&b, "%c", c);
    }
    bool fits = b.s && strlen(b.s) < len;
    if (fits)
        snprintf(out, len, "%s", b.s);
    free(b.s);
    return fits || ox_fail(nd, "the equation '%s' is too long", eq);
}

static bool op_einsum(ox_node *nd)
{
    const char *given = ox_attr_str(nd, "equation", NULL);
    char eq[256];
    if (!same_dtypes(nd, 0, nd->nin - 1))
        return false;
    if (!given)
        return ox_fail(nd, "the equation attribute is missing");
    if (strstr(given, "...") && !expand_ellipsis(nd, given, eq, sizeof eq))
        return false;
    if (!strstr(given, "..."))
        snprintf(eq, sizeof eq, "%s", given);
    char lhs[128], rhs[64] = "";
    const char *arrow = strstr(eq, "->");
    snprintf(lhs, sizeof lhs, "%.*s", arrow ? (int)(arrow - eq) : (int)strlen(eq), eq);
    if (arrow) {
        snprintf(rhs, sizeof rhs, "%s", arrow + 2);
    } else {   /* implicit output: the letters used once, in alphabetical order */
        int count[128] = {0}, n = 0;
        for (const char *p = lhs; *p; p++)
            count[(unsigned char)*p & 127]++;
        for (int c = 'A'; c <= 'z' && n < 63; c++)
            if (count[c] == 1 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
                rhs[n++] = (char)c;
        rhs[n] = 0;
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_str expr = {0};
    int64_t size[128] = {0};
    char *save = NULL;
    int i = 0;
    for (char *term = strtok_r(lhs, ",", &save); term; term = strtok_r(NULL, ",", &save), i++) {
        ox_value *v = ox_input(nd, i);
        if (!v) {
            ox_kernel_free(&k);
            free(expr.s);
            return false;
        }
        char role[8];
        snprintf(role, sizeof role, "%c", 'A' + i % 26);
        const char *r = ox_operand(&k, v, ox_kernel_role(&k, role));
        ox_printf(&expr, "%s%s[", i ? " * " : "", r);
        int d = 0;
        for (char *p = term; *p; p++) {
            if (*p == ' ')
                continue;
            if (d >= v->ndim) {
                ox_kernel_free(&k);
                free(expr.s);
                return ox_fail(nd, "term '%s' has more letters than '%s' has dimensions", term,
                               v->onnx);
            }
            size[(unsigned char)*p & 127] = v->shape[d];
            ox_printf(&expr, "%se_%c", d ? ", " : "", *p);
            d++;
        }
        ox_printf(&expr, "]");
    }
    ox_value *y = ox_output(nd, 0);
    y->dtype = nd->in[0]->dtype;
    y->ndim = 0;
    ox_printf(&k.body, "    y[");
    for (char *p = rhs; *p; p++) {
        if (*p == ' ')
            continue;
        ox_printf(&k.body, "%se_%c", y->ndim ? ", " : "", *p);
        y->shape[y->ndim++] = size[(unsigned char)*p & 127];
    }
    ox_printf(&k.body, "] += %s\n", expr.s);
    free(expr.s);
    bool ok = ox_kernel_finish(&k, "einsum", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* ---------------------------------------------------------------- convolution and pooling */

/* The spatial attributes of Conv and the pools. */
typedef struct window {
    int nsp;                           /* spatial dimensions */
    int64_t k[RT_MAX_DIMS], s[RT_MAX_DIMS], dil[RT_MAX_DIMS];
    int64_t pb[RT_MAX_DIMS], pe[RT_MAX_DIMS], out[RT_MAX_DIMS];
} window;

static bool window_of(ox_node *nd, const ox_value *x, const int64_t *kernel, bool ceil_mode,
                      window *w)
{
    w->nsp = x->ndim - 2;
    const int64_t *a;
    int n;
    for (int d = 0; d < w->nsp; d++) {
        w->k[d] = kernel[d];
        w->s[d] = w->dil[d] = 1;
        w->pb[d] = w->pe[d] = 0;
    }
    if ((n = ox_attr_ints(nd, "strides", &a)) && n != w->nsp)
        return ox_fail(nd, "strides has %d entries for %d spatial dimensions", n, w->nsp);
    for (int d = 0; d < n; d++)
        w->s[d] = a[d];
    if ((n = ox_attr_ints(nd, "dilations", &a)) && n != w->nsp)
        return ox_fail(nd, "dilations has %d entries for %d spatial dimensions", n, w->nsp);
    for (int d = 0; d < n; d++)
        w->dil[d] = a[d];
    if ((n = ox_attr_ints(nd, "pads", &a)) && n != 2 * w->nsp)
        return ox_fail(nd, "pads has %d entries for %d spatial dimensions", n, w->nsp);
    for (int d = 0; d < n; d++)
        *(d < w->nsp ? &w->pb[d] : &w->pe[d - w->nsp]) = a[d];
    const char *ap = ox_attr_str(nd, "auto_pad", "NOTSET");
    for (int d = 0; d < w->nsp; d++) {
        if (w->k[d] < 1 || w->s[d] < 1 || w->dil[d] < 1 || w->pb[d] < 0 || w->pe[d] < 0)
            return ox_fail(nd, "kernel, strides and dilations must be >= 1 and pads >= 0");
        int64_t H = x->shape[2 + d], ke = (w->k[d] - 1) * w->dil[d] + 1;
        if (strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
            int64_t o = (H + w->s[d] - 1) / w->s[d];
            int64_t tot = (o - 1) * w->s[d] + ke - H;
            if (tot < 0)
                tot = 0;
            w->pb[d] = strcmp(ap, "SAME_UPPER") == 0 ? tot / 2 : tot - tot / 2;
            w->pe[d] = tot - w->pb[d];
        } else if (strcmp(ap, "VALID") == 0) {
            w->pb[d] = w->pe[d] = 0;
        } else if (strcmp(ap, "NOTSET") != 0) {
            return ox_fail(nd, "auto_pad '%s' is not supported", ap);
        }
        int64_t span = H + w->pb[d] + w->pe[d] - ke;
        if (span < 0)
            return ox_fail(nd, "the window (%lld) is larger than the padded input (%lld)",
                           (long long)ke, (long long)(H + w->pb[d] + w->pe[d]));
        w->out[d] = (ceil_mode ? (span + w->s[d] - 1) / w->s[d] : span / w->s[d]) + 1;
        /* a last window starting in the right padding is dropped */
        if (ceil_mode && (w->out[d] - 1) * w->s[d] >= H + w->pb[d])
            w->out[d]--;
    }
    return true;
}

/* The input position of output index p{d} and window index r{d}. */
static void window_index(ox_str *b, const window *w, int d)
{
    ox_printf(b, "o%d", d);
    if (w->s[d] != 1)
        ox_printf(b, " * %lld", (long long)w->s[d]);
    ox_printf(b, " + r%d", d);
    if (w->dil[d] != 1)
        ox_printf(b, " * %lld", (long long)w->dil[d]);
    if (w->pb[d])
        ox_printf(b, " - %lld", (long long)w->pb[d]);
}

static bool op_conv(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0), *wv = ox_input(nd, 1);
    ox_value *bias = nd->nin > 2 ? nd->in[2] : NULL;
    if (!x || !wv || !need_float(nd, x) || !same_dtypes(nd, 0, 2))
        return false;
    if (x->ndim < 3 || wv->ndim != x->ndim)
        return ox_fail(nd, "x (rank %d) and W (rank %d) must have the same rank, at least 3",
                       x->ndim, wv->ndim);
    int64_t g = ox_attr_int(nd, "group", 1);
    int64_t C = x->shape[1], F = wv->shape[0], Cg = wv->shape[1];
    if (g < 1 || C % g || F % g || Cg * g != C)
        return ox_fail(nd, "x has %lld channels and W is [%lld, %lld, ...], which group=%lld "
                       "does not fit", (long long)C, (long long)F, (long long)Cg, (long long)g);
    if (bias && (bias->ndim != 1 || bias->shape[0] != F))
        return ox_fail(nd, "the bias must have %lld entries", (long long)F);
    const int64_t *ks;
    int nk = ox_attr_ints(nd, "kernel_shape", &ks);
    for (int d = 0; d < nk; d++)
        if (nk != x->ndim - 2 || ks[d] != wv->shape[2 + d])
            return ox_fail(nd, "kernel_shape does not match W");
    window w;
    if (!window_of(nd, x, wv->shape + 2, false, &w))
        return false;
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = x->ndim;
    y->shape[0] = x->shape[0];
    y->shape[1] = F;
    for (int d = 0; d < w.nsp; d++)
        y->shape[2 + d] = w.out[d];
    /* nn.te's conv2d: square kernel, one stride, dilation and padding */
    bool square = w.nsp == 2 && w.k[0] == w.k[1] && w.s[0] == w.s[1] && w.dil[0] == w.dil[1] &&
                  w.pb[0] == w.pb[1] && w.pe[0] == w.pb[0] && w.pe[1] == w.pb[1];
    if (square && x->dtype == IR_F32 && x->id && ox_is_param(wv) && (!bias || ox_is_param(bias))) {
        static const char *roles[] = {"weight", "bias"};
        rt_tensor *data[2] = {wv->konst, bias ? bias->konst : NULL};
        ox_str args = {0};
        ox_printf(&args, "%s, %lld, %lld", x->id, (long long)F, (long long)w.k[0]);
        if (w.s[0] != 1)
            ox_printf(&args, ", stride=%lld", (long long)w.s[0]);
        if (w.pb[0])
            ox_printf(&args, ", pad=%lld", (long long)w.pb[0]);
        if (w.dil[0] != 1)
            ox_printf(&args, ", dilation=%lld", (long long)w.dil[0]);
        if (g != 1)
            ox_printf(&args, ", groups=%lld", (long long)g);
        if (bias)
            ox_printf(&args, ", has_bias=1");
        bool ok = ox_call_nn(nd, y, "conv2d", args.s, roles, data, bias ? 2 : 1);
        free(args.s);
        return ok;
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_operand(&k, wv, "weight");
    if (bias)
        ox_operand(&k, bias, "bias");
    ox_printf(&k.body, "    %s[n, f", bias ? "t" : "y");
    for (int d = 0; d < w.nsp; d++)
        ox_printf(&k.body, ", o%d", d);
    ox_printf(&k.body, "] += x[n, ");
    if (g == 1)
        ox_printf(&k.body, "c");
    else
        ox_printf(&k.body, "f / %lld * %lld + c", (long long)(F / g), (long long)Cg);
    for (int d = 0; d < w.nsp; d++) {
        ox_printf(&k.body, ", ");
        window_index(&k.body, &w, d);
    }
    ox_printf(&k.body, "] else 0 * weight[f, c");
    for (int d = 0; d < w.nsp; d++)
        ox_printf(&k.body, ", r%d", d);
    ox_printf(&k.body, "]");
    for (int d = 0; d < w.nsp; d++)
        ox_printf(&k.body, "%s o%d in 0..%lld", d ? "," : " where", d, (long long)w.out[d]);
    ox_printf(&k.body, "\n");
    if (bias) {
        ox_printf(&k.body, "    y[n, f");
        for (int d = 0; d < w.nsp; d++)
            ox_printf(&k.body, ", o%d", d);
        ox_printf(&k.body, "] = t[n, f");
        for (int d = 0; d < w.nsp; d++)
            ox_printf(&k.body, ", o%d", d);
        ox_printf(&k.body, "] + bias[f]\n");
    }
    bool ok = ox_kernel_finish(&k, "conv", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* The identity of max= in dtype t, as a default for padded reads: -inf,
 * or the integer dtype's minimum. */
static void lowest(ox_str *b, ir_dtype t)
{
    int64_t lo, hi;
    if (ir_dtype_is_float(t) || !ir_dtype_int_range(t, &lo, &hi))
        ox_printf(b, "-inf");
    else if (lo == INT64_MIN)
        ox_printf(b, "(%lld - 1)", (long long)(INT64_MIN + 1));
    else
        ox_printf(b, "(%lld)", (long long)lo);
}

/* MaxPool's Indices output: where in x (flat, row-major over the unpadded
 * input; with storage_order 1, the spatial dimensions column-major) each
 * window's first maximum is. */
static bool pool_indices(ox_node *nd, const window *w)
{
    ox_value *x = nd->in[0];
    ox_value *z = ox_output(nd, 1);
    same_shape(z, x);
    z->dtype = IR_I64;
    for (int d = 0; d < w->nsp; d++)
        z->shape[2 + d] = w->out[d];
    bool column = ox_attr_int(nd, "storage_order", 0) != 0;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_str left = {0}, read = {0}, flat = {0}, where = {0};
    ox_printf(&left, "n, c");
    ox_printf(&read, "x[n, c");
    ox_printf(&flat, "(n * %lld + c)", (long long)x->shape[1]);
    for (int d = 0; d < w->nsp; d++) {
        int e = column ? w->nsp - 1 - d : d;   /* the dimension that varies slower */
        ox_printf(&left, ", o%d", d);
        ox_printf(&read, ", ");
        window_index(&read, w, d);
        ox_printf(&flat, " * %lld + (", (long long)x->shape[2 + e]);
        window_index(&flat, w, e);
        ox_printf(&flat, ")");
        ox_printf(&where, "%s o%d in 0..%lld, r%d in 0..%lld", d ? "," : " where", d,
                  (long long)w->out[d], d, (long long)w->k[d]);
    }
    ox_printf(&read, "] else ");
    lowest(&read, x->dtype);
    ox_printf(&k.body, "    m[%s] max= %s%s\n", left.s, read.s, where.s);
    ox_printf(&k.body, "    y[%s] min= (%s) == m[%s] ? %s : 9223372036854775807%s\n", left.s,
              read.s, left.s, flat.s, where.s);
    free(left.s);
    free(read.s);
    free(flat.s);
    free(where.s);
    bool ok = ox_kernel_finish(&k, "maxpool_indices", z, "indices");
    ox_kernel_free(&k);
    return ok;
}

static bool pool(ox_node *nd, bool is_max)
{
    ox_value *x = ox_input(nd, 0);
    if (!x || (!is_max && !need_float(nd, x)))
        return false;
    bool indices = ox_noutputs(nd) > 1 && *nd->n->output[1];
    if (indices && !is_max)
        return ox_fail(nd, "AveragePool has one output");
    if (x->ndim < 3)
        return ox_fail(nd, "the input must have a batch, a channel and spatial dimensions");
    const int64_t *ks;
    int nk = ox_attr_ints(nd, "kernel_shape", &ks);
    if (nk != x->ndim - 2)
        return ox_fail(nd, "kernel_shape has %d entries for %d spatial dimensions", nk,
                       x->ndim - 2);
    bool ceil_mode = ox_attr_int(nd, "ceil_mode", 0) != 0;
    bool count_pad = ox_attr_int(nd, "count_include_pad", 0) != 0;
    window w;
    if (!window_of(nd, x, ks, ceil_mode, &w))
        return false;
    if (!is_max)
        for (int d = 0; d < w.nsp; d++)
            if (w.dil[d] != 1)
                return ox_fail(nd, "dilations are not supported in AveragePool");
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    for (int d = 0; d < w.nsp; d++)
        y->shape[2 + d] = w.out[d];
    if (indices && !pool_indices(nd, &w))
        return false;
    /* nn.te's maxpool2d: a square window, one stride, symmetric padding of
     * at most half the window (its output size rule is ONNX's) */
    if (is_max && w.nsp == 2 && x->dtype == IR_F32 && x->id && w.k[0] == w.k[1] &&
        w.s[0] == w.s[1] && w.dil[0] == 1 && w.dil[1] == 1 && w.pb[0] == w.pb[1] &&
        w.pe[0] == w.pb[0] && w.pe[1] == w.pb[1] && 2 * w.pb[0] <= w.k[0]) {
        ox_str args = {0};
        ox_printf(&args, "%s, %lld, %lld", x->id, (long long)w.k[0], (long long)w.s[0]);
        if (w.pb[0])
            ox_printf(&args, ", pad=%lld", (long long)w.pb[0]);
        if (ceil_mode)
            ox_printf(&args, ", ceil=1");
        bool ok = ox_call_nn(nd, y, "maxpool2d", args.s, NULL, NULL, 0);
        free(args.s);
        return ok;
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_str left = {0}, read = {0}, inside = {0}, where = {0};
    ox_printf(&left, "n, c");
    for (int d = 0; d < w.nsp; d++)
        ox_printf(&left, ", o%d", d);
    ox_printf(&read, "x[n, c");
    for (int d = 0; d < w.nsp; d++) {
        ox_printf(&read, ", ");
        window_index(&read, &w, d);
        ox_str idx = {0};
        window_index(&idx, &w, d);
        ox_printf(&inside, "%s%s >= 0 && %s < %lld", d ? " && " : "", idx.s, idx.s,
                  (long long)x->shape[2 + d]);
        free(idx.s);
        ox_printf(&where, "%s o%d in 0..%lld, r%d in 0..%lld", d ? "," : " where", d,
                  (long long)w.out[d], d, (long long)w.k[d]);
    }
    ox_printf(&read, "]");
    if (is_max) {
        ox_printf(&k.body, "    y[%s] max= %s else ", left.s, read.s);
        lowest(&k.body, x->dtype);
        ox_printf(&k.body, "%s\n", where.s);
    } else {
        ox_printf(&k.body, "    s[%s] += %s else 0%s\n", left.s, read.s, where.s);
        if (count_pad) {   /* the window clipped to the padded input */
            ox_str cnt = {0};
            for (int d = 0; d < w.nsp; d++) {
                long long lim = (long long)(x->shape[2 + d] + w.pe[d]);
                ox_printf(&cnt, "%s(min(o%d * %lld - %lld + %lld, %lld) - (o%d * %lld - %lld))", d ? " * " : "",
                          d, (long long)w.s[d], (long long)w.pb[d], (long long)w.k[d], lim, d,
                          (long long)w.s[d], (long long)w.pb[d]);
            }
            ox_printf(&k.body, "    y[%s] = s[%s] / %s(%s)\n", left.s, left.s,
                      ir_dtype_name(ox_compute_dtype(x->dtype)), cnt.s);
            free(cnt.s);
        } else {
            ox_printf(&k.body, "    cnt[o0");
            for (int d = 1; d < w.nsp; d++)
                ox_printf(&k.body, ", o%d", d);
            ox_printf(&k.body, "] += i32(%s ? 1 : 0)%s\n", inside.s,
                      strchr(where.s, 'r') ? where.s : "");
            ox_printf(&k.body, "    y[%s] = s[%s] / %s(cnt[o0", left.s, left.s,
                      ir_dtype_name(ox_compute_dtype(x->dtype)));
            for (int d = 1; d < w.nsp; d++)
                ox_printf(&k.body, ", o%d", d);
            ox_printf(&k.body, "])\n");
        }
    }
    free(left.s);
    free(read.s);
    free(inside.s);
    free(where.s);
    bool ok = ox_kernel_finish(&k, is_max ? "maxpool" : "avgpool", y, NULL);
    ox_kernel_free(&k);
    return ok;
}
static bool op_maxpool(ox_node *nd) { return pool(nd, true); }
static bool op_averagepool(ox_node *nd) { return pool(nd, false); }

/* Trilu: keeps the upper (upper=1) or lower triangle of the last two
 * dimensions, shifted by k (a constant input). */
static bool op_trilu(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    int64_t kk = 0;
    if (!x || (nd->nin > 1 && nd->in[1] && ox_const_ints(nd, 1, &kk, 1) != 1))
        return false;
    if (x->ndim < 2)
        return ox_fail(nd, "the input must have at least 2 dimensions");
    bool upper = ox_attr_int(nd, "upper", 1) != 0;
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    int r = x->ndim - 2, c = x->ndim - 1;
    /* i_c - i_r lies in (-rows, cols): a k beyond that keeps everything or
     * nothing, as a k just beyond does (and is a literal of the language) */
    int64_t reach = x->shape[r] + x->shape[c];
    kk = kk < -reach ? -reach : kk > reach ? reach : kk;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] = i%d - i%d %s %lld ? x[", c, r, upper ? ">=" : "<=", (long long)kk);
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] : 0\n");
    bool ok = ox_kernel_finish(&k, "trilu", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* Hardmax: 1 at the first maximum along the axis, else 0. */
static bool op_hardmax(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    int axis;
    if (!x || !need_float(nd, x) || !ox_axis(nd, ox_attr_int(nd, "axis", -1), x->ndim, &axis))
        return false;
    if (nd->opset < 13)
        return ox_fail(nd, "Hardmax before opset 13 (over the input coerced to 2-D) is not "
                       "supported");
    ox_value *y = ox_output(nd, 0);
    same_shape(y, x);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_str kept = {0}, all = {0}, xr = {0};
    for (int d = 0, o = 0; d < x->ndim; d++) {
        ox_printf(&all, "%si%d", d ? ", " : "", d);
        if (d != axis)
            ox_printf(&kept, "%si%d", o++ ? ", " : "", d);
    }
    ox_printf(&xr, "x[");
    for (int d = 0; d < x->ndim; d++)
        ox_printf(&xr, "%s%s%d", d ? ", " : "", d == axis ? "r" : "i", d);
    ox_printf(&xr, "]");
    const char *K = kept.s ? kept.s : "";
    ox_printf(&k.body, "    m[%s] max= %s\n", K, xr.s);
    ox_printf(&k.body, "    first[%s] min= i64(%s == m[%s] ? r%d : %lld)\n", K, xr.s, K, axis,
              (long long)x->shape[axis]);
    ox_printf(&k.body, "    y[%s] = i%d == first[%s] ? 1 : 0\n", all.s, axis, K);
    free(kept.s);
    free(all.s);
    free(xr.s);
    bool ok = ox_kernel_finish(&k, "hardmax", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* GatherElements: y[i] = x[i with index[i] on the axis]. */
static bool op_gatherelements(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0), *ind = ox_input(nd, 1);
    int axis;
    if (!x || !ind || !ox_axis(nd, ox_attr_int(nd, "axis", 0), x->ndim, &axis))
        return false;
    if (ind->ndim != x->ndim || ir_dtype_is_float(ind->dtype))
        return ox_fail(nd, "the indices must be integers of the data's rank");
    for (int d = 0; d < x->ndim; d++)
        if (d != axis && ind->shape[d] > x->shape[d])
            return ox_fail(nd, "the indices' dimension %d is larger than the data's", d);
    ox_value *y = ox_output(nd, 0);
    same_shape(y, ind);
    y->dtype = x->dtype;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_operand(&k, ind, "indices");
    ox_str iread = {0};
    ox_printf(&iread, "indices[");
    ox_indices(&iread, "i", 0, ind->ndim);
    ox_printf(&iread, "]");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, ind->ndim);
    ox_printf(&k.body, "] = x[");
    for (int d = 0; d < x->ndim; d++) {
        if (d == axis)
            ox_printf(&k.body, "%s%s < 0 ? %s + %lld : %s", d ? ", " : "", iread.s, iread.s,
                      (long long)x->shape[d], iread.s);
        else if (ind->shape[d] == x->shape[d])
            ox_printf(&k.body, "%si%d", d ? ", " : "", d);
        else
            ox_printf(&k.body, "%si%d + 0", d ? ", " : "", d);
    }
    ox_printf(&k.body, "]\n");
    free(iread.s);
    bool ok = ox_kernel_finish(&k, "gather_elements", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* ConvTranspose: y[n, f, o] sums x[n, c, h] * W[c, f, r] over o = h*stride
 * + r*dilation - pad, i.e. h = (o + pad - r*dilation) / stride where that
 * divides. */
static bool op_convtranspose(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0), *wv = ox_input(nd, 1);
    ox_value *bias = nd->nin > 2 ? nd->in[2] : NULL;
    if (!x || !wv || !need_float(nd, x) || !same_dtypes(nd, 0, 2))
        return false;
    if (x->ndim < 3 || wv->ndim != x->ndim)
        return ox_fail(nd, "x (rank %d) and W (rank %d) must have the same rank, at least 3",
                       x->ndim, wv->ndim);
    int nsp = x->ndim - 2;
    int64_t g = ox_attr_int(nd, "group", 1), C = x->shape[1];
    int64_t Fg = wv->shape[1], F = Fg * g, Cg = g >= 1 ? C / g : 0;
    if (g < 1 || C % g || wv->shape[0] != C)
        return ox_fail(nd, "x has %lld channels and W is [%lld, %lld, ...], which group=%lld "
                       "does not fit", (long long)C, (long long)wv->shape[0], (long long)Fg,
                       (long long)g);
    if (bias && (bias->ndim != 1 || bias->shape[0] != F))
        return ox_fail(nd, "the bias must have %lld entries", (long long)F);
    int64_t s[RT_MAX_DIMS], dl[RT_MAX_DIMS], pb[RT_MAX_DIMS], pe[RT_MAX_DIMS], op[RT_MAX_DIMS],
        out[RT_MAX_DIMS];
    const int64_t *a;
    int n;
    for (int d = 0; d < nsp; d++)
        s[d] = dl[d] = 1, pb[d] = pe[d] = op[d] = 0;
    if ((n = ox_attr_ints(nd, "strides", &a)) == nsp)
        memcpy(s, a, sizeof(int64_t) * (size_t)nsp);
    if ((n = ox_attr_ints(nd, "dilations", &a)) == nsp)
        memcpy(dl, a, sizeof(int64_t) * (size_t)nsp);
    if ((n = ox_attr_ints(nd, "output_padding", &a)) == nsp)
        memcpy(op, a, sizeof(int64_t) * (size_t)nsp);
    if ((n = ox_attr_ints(nd, "pads", &a)) == 2 * nsp)
        for (int d = 0; d < nsp; d++)
            pb[d] = a[d], pe[d] = a[nsp + d];
    const int64_t *os;
    int nos = ox_attr_ints(nd, "output_shape", &os);
    const char *ap = ox_attr_str(nd, "auto_pad", "NOTSET");
    for (int d = 0; d < nsp; d++) {
        if (s[d] < 1 || dl[d] < 1)
            return ox_fail(nd, "strides and dilations must be >= 1");
        int64_t H = x->shape[2 + d], ke = (wv->shape[2 + d] - 1) * dl[d] + 1;
        int64_t full = s[d] * (H - 1) + op[d] + ke;
        if (nos || strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
            /* a negative total pads the end with zeros (ONNX's rule) */
            int64_t want = nos ? os[nos - nsp + d] : H * s[d];
            int64_t tot = full - want;
            bool upper = strcmp(ap, "SAME_UPPER") == 0;
            int64_t half = tot >= 0 ? tot / 2 : -((-tot + 1) / 2);   /* floor(tot / 2) */
            pb[d] = upper ? half : tot - half;
            pe[d] = tot - pb[d];
        }
        out[d] = full - pb[d] - pe[d];
    }
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = x->ndim;
    y->shape[0] = x->shape[0];
    y->shape[1] = F;
    for (int d = 0; d < nsp; d++)
        y->shape[2 + d] = out[d];
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_operand(&k, wv, "weight");
    if (bias)
        ox_operand(&k, bias, "bias");
    ox_str cond = {0}, pos = {0};
    for (int d = 0; d < nsp; d++) {
        ox_str h = {0};
        ox_printf(&h, "o%d + %lld - r%d * %lld", d, (long long)pb[d], d, (long long)dl[d]);
        if (s[d] != 1)
            ox_printf(&cond, "%s(%s) %% %lld == 0", cond.s ? " && " : "", h.s, (long long)s[d]);
        ox_printf(&pos, ", (%s) / %lld", h.s, (long long)s[d]);
        free(h.s);
    }
    ox_printf(&k.body, "    %s[n, f", bias ? "t" : "y");
    for (int d = 0; d < nsp; d++)
        ox_printf(&k.body, ", o%d", d);
    ox_printf(&k.body, "] += %s%s%sx[n, f / %lld * %lld + c%s] else 0%s * weight[f / %lld * %lld + c, "
              "f %% %lld", cond.s ? "(" : "", cond.s ? cond.s : "", cond.s ? " ? " : "",
              (long long)Fg, (long long)Cg, pos.s, cond.s ? " : 0)" : "", (long long)Fg, (long long)Cg, (long long)Fg);
    for (int d = 0; d < nsp; d++)
        ox_printf(&k.body, ", r%d", d);
    ox_printf(&k.body, "] where f in 0..%lld, c in 0..%lld", (long long)F, (long long)Cg);
    for (int d = 0; d < nsp; d++)
        ox_printf(&k.body, ", o%d in 0..%lld, r%d in 0..%lld", d, (long long)out[d], d,
                  (long long)wv->shape[2 + d]);
    ox_printf(&k.body, "\n");
    if (bias) {
        ox_printf(&k.body, "    y[n, f");
        for (int d = 0; d < nsp; d++)
            ox_printf(&k.body, ", o%d", d);
        ox_printf(&k.body, "] = t[n, f");
        for (int d = 0; d < nsp; d++)
            ox_printf(&k.body, ", o%d", d);
        ox_printf(&k.body, "] + bias[f]\n");
    }
    free(cond.s);
    free(pos.s);
    bool ok = ox_kernel_finish(&k, "conv_transpose", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* ---------------------------------------------------------------- the table */

/* WIDEN: the op computes on values, in the compute dtype of a storage
 * dtype; AS_IS: it moves, compares and selects values (or folds them), which
 * the language does in any dtype. */
enum { AS_IS = false, WIDEN = true };

static const ox_op ops[] = {
    {"Abs", op_abs, WIDEN},
    {"Add", op_add, WIDEN},
    {"And", op_and, AS_IS},
    {"ArgMax", op_argmax, AS_IS},
    {"ArgMin", op_argmin, AS_IS},
    {"AveragePool", op_averagepool, WIDEN},
    {"BatchNormalization", op_batchnorm, WIDEN},
    {"Cast", op_cast_typed, AS_IS},
    {"Ceil", op_ceil, WIDEN},
    {"Celu", op_celu, WIDEN},
    {"Clip", op_clip, AS_IS},
    {"Concat", op_concat, AS_IS},
    {"Constant", op_constant, AS_IS},
    {"ConstantOfShape", op_constantofshape, AS_IS},
    {"Conv", op_conv, WIDEN},
    {"ConvTranspose", op_convtranspose, WIDEN},
    {"Cos", op_cos, WIDEN},
    {"CumSum", op_cumsum, WIDEN},
    {"DepthToSpace", op_depthtospace, AS_IS},
    {"Div", op_div, WIDEN},
    {"Dropout", op_dropout, AS_IS},
    {"Einsum", op_einsum, WIDEN},
    {"Elu", op_elu, WIDEN},
    {"Equal", op_equal, AS_IS},
    {"Erf", op_erf, WIDEN},
    {"Exp", op_exp, WIDEN},
    {"Expand", op_expand, AS_IS},
    {"Flatten", op_flatten, AS_IS},
    {"Floor", op_floor, WIDEN},
    {"Gather", op_gather, AS_IS},
    {"GatherElements", op_gatherelements, AS_IS},
    {"Gemm", op_gemm, WIDEN},
    {"GlobalAveragePool", op_globalaveragepool, WIDEN},
    {"GlobalMaxPool", op_globalmaxpool, AS_IS},
    {"Greater", op_greater, AS_IS},
    {"GreaterOrEqual", op_greaterorequal, AS_IS},
    {"HardSigmoid", op_hardsigmoid, WIDEN},
    {"HardSwish", op_hardswish, WIDEN},
    {"Hardmax", op_hardmax, WIDEN},
    {"Identity", op_identity, AS_IS},
    {"InstanceNormalization", op_instancenorm, WIDEN},
    {"LayerNormalization", op_layernorm, WIDEN},
    {"LeakyRelu", op_leakyrelu, WIDEN},
    {"Less", op_less, AS_IS},
    {"LessOrEqual", op_lessorequal, AS_IS},
    {"Log", op_log, WIDEN},
    {"LogSoftmax", op_logsoftmax, WIDEN},
    {"MatMul", op_matmul, WIDEN},
    {"Max", op_max, AS_IS},
    {"MaxPool", op_maxpool, AS_IS},
    {"Mean", op_mean, WIDEN},
    {"Min", op_min, AS_IS},
    {"Mod", op_mod, WIDEN},
    {"Mul", op_mul, WIDEN},
    {"Neg", op_neg, WIDEN},
    {"Not", op_not, AS_IS},
    {"Or", op_or, AS_IS},
    {"PRelu", op_prelu, WIDEN},
    {"Pad", op_pad, AS_IS},
    {"Pow", op_pow, WIDEN},
    {"Range", op_range, AS_IS},
    {"Reciprocal", op_reciprocal, WIDEN},
    {"ReduceL1", op_reducel1, WIDEN},
    {"ReduceL2", op_reducel2, WIDEN},
    {"ReduceLogSum", op_reducelogsum, WIDEN},
    {"ReduceLogSumExp", op_reducelogsumexp, WIDEN},
    {"ReduceMax", op_reducemax, AS_IS},
    {"ReduceMean", op_reducemean, WIDEN},
    {"ReduceMin", op_reducemin, AS_IS},
    {"ReduceProd", op_reduceprod, WIDEN},
    {"ReduceSum", op_reducesum, WIDEN},
    {"ReduceSumSquare", op_reducesumsquare, WIDEN},
    {"Relu", op_relu, WIDEN},
    {"Reshape", op_reshape, AS_IS},
    {"Round", op_round, WIDEN},
    {"ScatterND", ox_op_scatternd, AS_IS},
    {"Selu", op_selu, WIDEN},
    {"Shape", op_shape, AS_IS},
    {"Sigmoid", op_sigmoid, WIDEN},
    {"Sign", op_sign, WIDEN},
    {"Sin", op_sin, WIDEN},
    {"Size", op_size, AS_IS},
    {"Slice", op_slice, AS_IS},
    {"Softmax", op_softmax, WIDEN},
    {"Softplus", op_softplus, WIDEN},
    {"Softsign", op_softsign, WIDEN},
    {"SpaceToDepth", op_spacetodepth, AS_IS},
    {"Split", op_split, AS_IS},
    {"Sqrt", op_sqrt, WIDEN},
    {"Squeeze", op_squeeze, AS_IS},
    {"Sub", op_sub, WIDEN},
    {"Sum", op_sum, WIDEN},
    {"Tanh", op_tanh, WIDEN},
    {"ThresholdedRelu", op_thresholdedrelu, WIDEN},
    {"Tile", op_tile, AS_IS},
    {"Transpose", op_transpose, AS_IS},
    {"Trilu", op_trilu, AS_IS},
    {"Unsqueeze", op_unsqueeze, AS_IS},
    {"Where", op_where, AS_IS},
    {"Xor", op_xor, AS_IS},
};

const ox_op *ox_find_op(const char *op_type)
{
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strcmp(ops[i].name, op_type) == 0)
            return &ops[i];
    return NULL;
}
