/* importer/ops_math.c — the elementwise ops: one template each (unary
 * functions, their attribute forms, the ops of several broadcast inputs),
 * and Pow, Div, Mod, Cast, Clip, Identity and Dropout; each infers the
 * output's shape and writes its layer (a lib/nn.te call or a kernel def
 * written for it).  The table at the end lists them. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importer/impl.h"

/* y[I] = tmpl(x[I]) for the node's output y. */
static bool elementwise_of(ox_node *nd, ox_value *x, const char *base, const char *tmpl,
                           bool float_only)
{
    if (!x || (float_only && !ox_need_float(nd, x)))
        return false;
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
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
    ox_subst(&k.body, tmpl, read.s);
    ox_printf(&k.body, "\n");
    free(read.s);
    bool ok = ox_kernel_finish(&k, base, y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* y[I] = tmpl(x[I]) for input 0. */
static bool elementwise1(ox_node *nd, const char *base, const char *tmpl, bool float_only)
{
    return elementwise_of(nd, ox_input(nd, 0), base, tmpl, float_only);
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
    if (cb->float_only && !ox_need_float(nd, t))
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
        if (!ox_broadcast(nd, v, n, &y->ndim, y->shape))
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

/* y[I] = TMPL(x[I]): a unary op is its template ('$' is the read of x);
 * the table below gives each op's. */
typedef struct unary_spec {
    const char *base, *tmpl;
    bool float_only;
} unary_spec;

static bool unary_op(ox_node *nd, const void *arg)
{
    const unary_spec *u = arg;
    return elementwise1(nd, u->base, u->tmpl, u->float_only);
}

static bool op_copy(ox_node *nd)
{
    return elementwise1(nd, "copy", "$", false);
}

/* A unary op whose template takes the node's float attributes a1 and a2
 * (defaults d1, d2): fmt's %s (or %1$s, %2$s) are their values. */
typedef struct attr_spec {
    const char *base, *fmt, *a1;
    double d1;
    const char *a2;
    double d2;
} attr_spec;

static bool unary_attr(ox_node *nd, const void *arg)
{
    const attr_spec *u = arg;
    ox_value *x = ox_input(nd, 0);
    if (x && x->id && ox_silu_pair(nd) && strcmp(u->base, "hardsigmoid") == 0) {
        /* HardSigmoid of x that only a Mul by x reads: that Mul is the layer */
        if (!ox_need_float(nd, x))
            return false;
        ox_value *y = ox_output(nd, 0);
        ox_same_shape(y, x);
        y->silu_of = x;
        y->hard = true;
        y->alpha = ox_attr_float(nd, u->a1, u->d1);
        y->beta = ox_attr_float(nd, u->a2, u->d2);
        return true;
    }
    ox_str v1 = {0}, v2 = {0};
    ox_float(&v1, ox_attr_float(nd, u->a1, u->d1));
    if (u->a2)
        ox_float(&v2, ox_attr_float(nd, u->a2, u->d2));
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, u->fmt, v1.s, u->a2 ? v2.s : "");
    free(v1.s);
    free(v2.s);
    return elementwise1(nd, u->base, tmpl, true);
}

/* Relu and Sigmoid: the nn.te op for ranks 2 to 4 of f32, else a kernel. */
typedef struct nn_unary_spec {
    const char *op, *tmpl;
} nn_unary_spec;

static bool nn_unary(ox_node *nd, const void *arg)
{
    const char *op = ((const nn_unary_spec *)arg)->op, *tmpl = ((const nn_unary_spec *)arg)->tmpl;
    ox_value *x = ox_input(nd, 0);
    if (!x || !ox_need_float(nd, x))
        return false;
    if (x->dtype != IR_F32 || x->ndim < 2 || x->ndim > 4 || !x->id)
        return elementwise1(nd, op, tmpl, true);
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
    if (strcmp(op, "sigmoid") == 0 && ox_silu_pair(nd)) {
        y->silu_of = x;   /* the Mul that reads it is the layer (op_mul) */
        return true;
    }
    return ox_call_nn(nd, y, op, x->id, NULL, NULL, 0);
}

/* softplus(x) = log(1 + e^x) as max(x, 0) + log1p(e^-|x|), log1p(u) as
 * log(1 + u) * u / ((1 + u) - 1) (u when 1 + u rounds to 1: exact to a few
 * ulp): log(exp(x) + 1) was inf from x = 88.8 on and lost every digit
 * below x = -17 (softplus(-20) was 0, not 2.1e-9; -10 was 4e-4 off). */
#define SOFTPLUS                                                                        \
    "max($, 0) + (1 + exp(0 - abs($)) == 1 ? exp(0 - abs($)) : "                          \
    "log(1 + exp(0 - abs($))) * exp(0 - abs($)) / (1 + exp(0 - abs($)) - 1))"

/* Mish (opset 18): x * tanh(softplus(x)). */
static bool op_mish(ox_node *nd, const void *arg)
{
    if (nd->opset < 18)
        return ox_fail(nd, "Mish is an op of opset 18 on (the model imports opset %d)", nd->opset);
    return elementwise1(nd, "mish", "$ * tanh(" SOFTPLUS ")", true);
}

/* Gelu (opset 20): nn.te's gelu, or gelu_tanh with approximate "tanh"
 * (the formulas of lib/nn.te, for the shapes it has no def of). */
static bool op_gelu(ox_node *nd, const void *arg)
{
    static const nn_unary_spec exact = {"gelu", "0.5 * $ * (1 + erf($ * 0.7071067811865476))"};
    static const nn_unary_spec tanh_form = {
        "gelu_tanh", "0.5 * $ * (1 + tanh(0.7978845608028654 * ($ + 0.044715 * $ * $ * $)))"};
    if (nd->opset < 20)
        return ox_fail(nd, "Gelu is an op of opset 20 on (the model imports opset %d)", nd->opset);
    const char *approximate = ox_attr_str(nd, "approximate", "none");
    if (strcmp(approximate, "none") == 0)
        return nn_unary(nd, &exact);
    if (strcmp(approximate, "tanh") == 0)
        return nn_unary(nd, &tanh_form);
    return ox_fail(nd, "approximate '%s' is neither 'none' nor 'tanh'", approximate);
}

/* A Div or Mul of an f32 x that no kernel computes (a view: ViT's query,
 * a slice of the fused q, k, v; or a graph input) by a known scalar whose
 * factor (its reciprocal for Div) is a power of two, read only by a MatMul
 * (ox_scale_reader): y is x scaled (ox_value.scaled_of), no layer, and the
 * MatMul scales its product (ops_nn.c); false when it is not one.  (Of an
 * x a kernel computes, the scale is fused into that kernel for free.) */
static bool scaled_operand(ox_node *nd, bool div)
{
    if (nd->nin != 2 || !nd->in[0] || !nd->in[1] || !ox_scale_reader(nd))
        return false;
    int s = div ? 1 : ox_known(nd->in[1]) ? 1 : 0;   /* the scalar's input */
    ox_value *x = nd->in[1 - s], *c = nd->in[s];
    if (x->dtype != IR_F32 || !x->id || ox_known(x) || (!x->view_of && !x->graph_input) ||
        !ox_known(c) ||
        c->dtype != IR_F32 || rt_tensor_numel(c->konst) != 1)
        return false;
    double f = rt_tensor_get(c->konst, 0);
    f = div && f != 0 ? 1 / f : f;
    int e;
    /* a normal power of two, 2^-64 .. 2^64, whose products stay far from
     * f32's limits for the values of a network */
    if (!isfinite(f) || f <= 0 || fabs(frexp(f, &e)) != 0.5 || e < -63 || e > 65)
        return false;
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
    y->scaled_of = x;
    y->scale = f;
    return true;
}

/* Mul; of x and a Sigmoid of x that nothing else reads, nn.te's silu; of
 * x and such a HardSigmoid, one kernel x * hardsigmoid(x) (hardswish). */
static bool op_mul(ox_node *nd, const void *arg)
{
    for (int s = 0; s < 2 && nd->nin == 2; s++) {
        ox_value *x = nd->in[1 - s];
        const ox_value *g = nd->in[s];
        if (!g || !x || g->silu_of != x)
            continue;
        if (g->hard) {
            ox_str a = {0}, b = {0};
            ox_float(&a, g->alpha);
            ox_float(&b, g->beta);
            char tmpl[512];
            snprintf(tmpl, sizeof tmpl, "$ * max(0, min(1, %s * $ + %s))", a.s, b.s);
            free(a.s);
            free(b.s);
            return elementwise_of(nd, x, "hardswish", tmpl, true);
        }
        ox_value *y = ox_output(nd, 0);
        ox_same_shape(y, x);
        return ox_call_nn(nd, y, "silu", x->id, NULL, NULL, 0);
    }
    if (scaled_operand(nd, false))
        return true;
    return elementwise_n(nd, arg);
}

/* A copy of a constant is the constant (PyTorch exports shared weights
 * through Identity nodes); of a computed tensor, a view of it; of anything
 * else (an input without elements), a copy kernel. */
static bool copy_or_fold(ox_node *nd)
{
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    if (ox_aliasable(x))
        return ox_alias(nd);
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

/* Identity of a sequence (opset 14) is the sequence. */
static bool op_identity(ox_node *nd, const void *arg)
{
    if (nd->nin >= 1 && nd->in[0] && nd->in[0]->seq)
        return ox_seq_output(nd, 0, nd->in[0]->seq);
    return copy_or_fold(nd);
}

/* Dropout at inference, or in training with ratio 0 (which drops
 * nothing): y = x, and the optional mask is all true. */
static bool op_dropout(ox_node *nd, const void *arg)
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
    ox_same_shape(m, x);
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

/* The elementwise ops of several inputs: each is its combine (ONNX's
 * bool tensors are i32 0/1 in tec, doc/onnx.md). */
static bool combine_op(ox_node *nd, const void *arg)
{
    return elementwise_n(nd, arg);
}

/* Where(mask, fill, s) or Where(keep, s, fill) read only by a Softmax over
 * the last axis, where s is f32 [B, H, T, T] attention scores, the mask
 * (or keep) a known tensor over the last two axes that is exactly the
 * future, j > i (the past and present, j <= i), and fill -inf or f32's
 * lowest: masked_fill before softmax in a causal attention (GPT-2).  The
 * Softmax is then nn.te's causal_softmax of s, whose masked entries are 0
 * as exp(fill - max) is (each row keeps its diagonal, so its maximum is
 * finite unless s holds infinities).  s, or NULL. */
static ox_value *causal_scores(ox_node *nd)
{
    const Onnx__NodeProto *sm = ox_where_softmax(nd);
    if (!sm || nd->nin != 3 || !nd->in[0] || !nd->in[1] || !nd->in[2])
        return NULL;
    ox_value *c = nd->in[0];
    int f = ox_known(nd->in[1]) ? 1 : 2;   /* the fill's input */
    ox_value *fill = nd->in[f], *sc = nd->in[3 - f];
    if (!ox_known(c) || !ox_known(fill) || rt_tensor_numel(fill->konst) != 1 ||
        fill->dtype != IR_F32 || rt_tensor_get(fill->konst, 0) > -3.4028234663852886e38 ||
        sc->dtype != IR_F32 || !sc->id || ox_known(sc) || sc->ndim != 4 ||
        sc->shape[2] != sc->shape[3] || c->ndim < 2 || c->ndim > 4)
        return NULL;
    ox_node q = {.x = nd->x, .n = sm, .opset = nd->opset};
    int64_t axis = ox_attr_int(&q, "axis", nd->opset < 13 ? 1 : -1);
    if (axis != -1 && axis != 3)
        return NULL;
    int64_t T = sc->shape[3];
    for (int d = 0; d < c->ndim - 2; d++)
        if (c->shape[d] != 1)
            return NULL;
    if (c->shape[c->ndim - 2] != T || c->shape[c->ndim - 1] != T)
        return NULL;
    for (int64_t i = 0; i < T; i++)
        for (int64_t j = 0; j < T; j++)
            if ((rt_tensor_get_int(c->konst, i * T + j) != 0) != (f == 1 ? j > i : j <= i))
                return NULL;
    return sc;
}

/* Where: elementwise, or the mask of a causal attention's softmax
 * (causal_scores). */
static bool op_where(ox_node *nd, const void *arg)
{
    ox_value *sc = causal_scores(nd);
    if (!sc)
        return combine_op(nd, arg);
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, sc);
    y->causal_of = sc;
    return true;
}

/* IsInf: +inf and -inf, each unless its attribute (detect_positive,
 * detect_negative) is 0. */
static bool op_isinf(ox_node *nd, const void *arg)
{
    (void)arg;
    bool pos = ox_attr_int(nd, "detect_positive", 1) != 0;
    bool neg = ox_attr_int(nd, "detect_negative", 1) != 0;
    const char *tmpl = pos && neg ? "$0 == inf || $0 == (-inf) ? 1 : 0"
                       : pos      ? "$0 == inf ? 1 : 0"
                       : neg      ? "$0 == (-inf) ? 1 : 0"
                                  : "$0 != $0 && $0 == $0 ? 1 : 0";   /* never */
    combine cb = {"isinf", tmpl, 1, 0, IR_I32, true};
    return elementwise_n(nd, &cb);
}

/* Pow: the exponent may have another dtype than the base; integer powers
 * are computed in f64 and truncated (as ONNX's reference does).  A float
 * base squared by a constant 2 (a variance's Pow(x - mean, 2)) is x * x:
 * the product rounded once, which pow(x, 2) is exactly, at the cost of a
 * multiply instead of a call of pow per element. */
static bool op_pow(ox_node *nd, const void *arg)
{
    ox_value *a = ox_input(nd, 0), *b = ox_input(nd, 1);
    if (!a || !b)
        return false;
    char tmpl[96];
    ir_dtype ca = ox_compute_dtype(a->dtype), cx = ox_compute_dtype(b->dtype);
    if (ir_dtype_is_float(a->dtype) && b->konst && rt_tensor_numel(b->konst) == 1 &&
        rt_tensor_get(b->konst, 0) == 2)
        snprintf(tmpl, sizeof tmpl, "$0 * $0");
    else if (ir_dtype_is_float(a->dtype))
        snprintf(tmpl, sizeof tmpl, ca == cx ? "pow($0, $1)" : "pow($0, %s($1))",
                 ir_dtype_name(ca));
    else
        snprintf(tmpl, sizeof tmpl, "%s(pow(f64($0), f64($1)))", ir_dtype_name(ca));
    combine cb = {"pow", tmpl, 2, 1, (int)a->dtype, false};   /* the base's dtype */
    return elementwise_n(nd, &cb);
}

/* Div: on integers, truncating toward zero (C's division, which ONNX's
 * integer Div is), where the language's '/' floors. */
static bool op_div(ox_node *nd, const void *arg)
{
    static const combine real = {"div", "$0 / $1", 2, 0, -1, false};
    static const combine integer = {"div", "$0 % $1 != 0 && ($0 < 0 && $1 > 0 || $0 > 0 && $1 < 0) "
                                    "? $0 / $1 + 1 : $0 / $1", 2, 0, -1, false};
    ox_value *a = ox_input(nd, 0);
    if (a && scaled_operand(nd, true))
        return true;
    return a && elementwise_n(nd, ir_dtype_is_float(a->dtype) ? &real : &integer);
}

/* Mod: the divisor's sign (the language's %), or with fmod=1 C's fmod,
 * the dividend's sign. */
static bool op_mod(ox_node *nd, const void *arg)
{
    static const combine floor_mod = {"mod", "$0 % $1", 2, 0, -1, false};
    static const combine fmod = {"fmod", "$0 - $1 * ($0 / $1 >= 0 ? floor($0 / $1) : ceil($0 / $1))",
                                 2, 0, -1, true};
    return elementwise_n(nd, ox_attr_int(nd, "fmod", 0) ? &fmod : &floor_mod);
}


static bool cast_kernel(ox_node *nd, ox_value *x, ir_dtype to, bool to_bool);

/* Cast: a conversion of the language (to f16 and bf16 rounded to nearest
 * even once; to a narrower integer keeping the low bits; float to integer
 * truncated), or to bool (i32) "not zero". */
static bool op_cast_typed(ox_node *nd, const void *arg)
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
    return cast_kernel(nd, x, to, t == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL);
}

/* Whether v, an i32 tensor, holds ONNX bools: 1 yes, 0 no, -1 unknown (a
 * constant: its producer does not tell).  Views and selections of it are
 * what they read (Where: its X); an op that computes numbers gives int32. */
static int holds_bool(ox_node *nd, const ox_value *v)
{
    static const char *const bools[] = {"Equal", "Less", "LessOrEqual", "Greater",
                                        "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN",
                                        "IsInf"};
    static const char *const views[] = {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity",
                                        "Transpose", "Expand", "Slice", "Gather", "Tile",
                                        "Concat", "Split", "Where", "Max", "Min", "Pad",
                                        "GatherElements", "GatherND", "ScatterND",
                                        "ScatterElements", "Dropout", "Trilu"};
    for (int depth = 0; depth < 64; depth++) {
        if (v->dtype != IR_I32)
            return 0;
        if (v->graph_input)
            return v->declared_bool;
        const Onnx__NodeProto *p = v->producer;
        if (!p || !p->op_type)
            return -1;
        for (size_t i = 0; i < sizeof bools / sizeof *bools; i++)
            if (strcmp(p->op_type, bools[i]) == 0)
                return 1;
        if (strcmp(p->op_type, "Cast") == 0) {
            for (size_t a = 0; a < p->n_attribute; a++)
                if (p->attribute[a]->name && strcmp(p->attribute[a]->name, "to") == 0)
                    return p->attribute[a]->i == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
            return -1;
        }
        if (strcmp(p->op_type, "Constant") == 0 || strcmp(p->op_type, "ConstantOfShape") == 0 ||
            strcmp(p->op_type, "If") == 0)
            return -1;
        bool view = false;
        for (size_t i = 0; i < sizeof views / sizeof *views; i++)
            view = view || strcmp(p->op_type, views[i]) == 0;
        if (!view)
            return 0;
        size_t from = strcmp(p->op_type, "Where") == 0;   /* (Where's condition is bool) */
        if (p->n_input <= from || !(v = ox_value_named(nd, p->input[from])))
            return -1;
    }
    return -1;
}

/* CastLike (opset 15): Cast to the dtype of input 1.  tec holds bool in
 * i32, so an i32 target must show which it is (its producer: a comparison
 * or a Cast to bool, a graph input's declared type). */
static bool op_castlike(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0), *t = ox_input(nd, 1);
    if (!x || !t)
        return false;
    if (t->wide_unsigned)
        return ox_fail(nd, "casting to %s is not supported (tec holds it in i64)",
                       ox_onnx_type_name(t->wide_unsigned));
    int b = holds_bool(nd, t);
    if (b < 0)
        return ox_fail(nd, "target '%s' is an int32 or bool constant, which tec cannot tell "
                       "apart (it holds bool in int32)", t->onnx);
    return cast_kernel(nd, x, t->dtype, b == 1);
}

/* y = x converted to dtype to (to_bool: ONNX's bool, 1 where x is not 0). */
static bool cast_kernel(ox_node *nd, ox_value *x, ir_dtype to, bool to_bool)
{
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
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

static bool op_clip(ox_node *nd, const void *arg)
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
    if (x->dtype == IR_F32 && x->ndim >= 2 && x->ndim <= 4 && x->id && lo == 0 && hi == 6) {
        ox_value *y = ox_output(nd, 0);   /* PyTorch's ReLU6 */
        ox_same_shape(y, x);
        return ox_call_nn(nd, y, "relu6", x->id, NULL, NULL, 0);
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

/* ---------------------------------------------------------------- inverse and hyperbolic trigonometry */

/* The language's math functions are exp, log, sqrt, sin, cos, tanh ...
 * (no tan, atan or asinh), so these ops are written with them, each within
 * a few ulp of the dtype (testsuite/cli/onnx_trig.sh compares with NumPy
 * over the whole range, 0, +-1, +-inf and NaN): sinh and cosh as e (e / 2)
 * -/+ 1 / (2 e^2), e = exp(|x| / 2) (exp(x) / 2 overflowed from 88.7 in
 * f32, where sinh is finite to 89.4; exp(|x| - ln 2) rounds |x| - ln 2,
 * 4e-6 off at 89), sinh of |x| < 1/2 by its series (the difference
 * cancels); asinh and acosh as log(x + sqrt(x^2 +- 1)), ln 2 + log(x)
 * beyond 2^27 (x^2 overflows) and log1p below 2 (asinh x = log1p(x + x^2
 * / (1 + sqrt(x^2 + 1))), acosh x = log1p(x - 1 + sqrt(x - 1) sqrt(x + 1)),
 * a product of square roots, NaN below 1: sqrt((x - 1)(x + 1)) is real at
 * -1e5 too); atanh as log((1 + x) / (1 - x)) / 2, with log1p
 * below 1/2; atan below. */
#define LN2 "0.6931471805599453"
/* log1p(u) = log(1 + u) * u / ((1 + u) - 1), exact to a few ulp (u when 1 +
 * u rounds to 1), for u of at most a few units */
#define LOG1P(u) "(1 + " u " == 1 ? " u " : log(1 + " u ") * (" u ") / ((1 + " u ") - 1))"
#define ACOSH_U "(($ - 1) + sqrt($ - 1) * sqrt($ + 1))"
#define ATANH_U "(2 * abs($) / (1 - abs($)))"
#define HALF_EXP "exp(abs($) / 2)"
static const char sinh_tmpl[] =
    "abs($) < 0.5 ? $ * (1 + $ * $ * (0.16666666666666666 + $ * $ * (0.008333333333333333 + "
    "$ * $ * (0.0001984126984126984 + $ * $ * (2.7557319223985893e-06 + $ * $ * "
    "(2.505210838544172e-08 + $ * $ * (1.6059043836821613e-10 + $ * $ * "
    "7.647163731819816e-13))))))) : ($ < 0 ? 0 - 1 : 1) * (" HALF_EXP " * (" HALF_EXP
    " * 0.5) - 0.5 / " HALF_EXP " / " HALF_EXP ")";
static const char cosh_tmpl[] =
    HALF_EXP " * (" HALF_EXP " * 0.5) + 0.5 / " HALF_EXP " / " HALF_EXP;
#define ASINH_U "(abs($) + abs($) * abs($) / (1 + sqrt(abs($) * abs($) + 1)))"
static const char asinh_tmpl[] =
    "($ < 0 ? 0 - 1 : 1) * (abs($) < 2 ? " LOG1P(ASINH_U) " : abs($) > 134217728 ? "
    "log(abs($)) + " LN2 " : log(abs($) + sqrt(abs($) * abs($) + 1)))";
static const char acosh_tmpl[] =
    "$ < 2 ? " LOG1P(ACOSH_U) " : $ > 134217728 ? log($) + " LN2 " : "
    "log($ + sqrt($ - 1) * sqrt($ + 1))";
static const char atanh_tmpl[] =
    "($ < 0 ? 0 - 0.5 : 0.5) * (abs($) < 0.5 ? " LOG1P(ATANH_U) " : "
    "log((1 + abs($)) / (1 - abs($))))";

/* Atan, Asin and Acos: atan(e) of an expression e of x (asin x = atan(x /
 * sqrt((1 - x)(1 + x))), acos x = 2 atan(sqrt((1 - x) / (1 + x))), exact at
 * +-1 and NaN beyond), in steps: a = |e|, t = a or 1 / a above 1 (atan a =
 * pi/2 - atan(1 / a)), r = t or (t - 1/sqrt 3) / (1 + t / sqrt 3) above
 * tan(pi/12) (atan t = pi/6 + atan r), so |r| <= tan(pi/12) = 0.268, where
 * atan's series to r^23 is exact to 2e-16 (f64's precision; f32 rounds its
 * terms).  A NaN e stays NaN through every step, an infinite one gives
 * +-pi/2. */
typedef struct atan_spec {
    const char *base;
    const char *arg;     /* e, with $ for x */
    double scale;        /* y = scale * atan(e) */
} atan_spec;

static bool op_atan(ox_node *nd, const void *arg)
{
    const atan_spec *u = arg;
    ox_value *x = ox_input(nd, 0);
    if (!x || !ox_need_float(nd, x))
        return false;
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    const char *xr = ox_operand(&k, x, "x");
    ox_str at = {0}, read = {0}, e = {0};
    ox_indices(&at, "i", 0, x->ndim);
    ox_printf(&read, "%s[%s]", xr, at.s);
    ox_subst(&e, u->arg, read.s);
    const char *I = at.s;
    ox_printf(&k.body, "    e[%s] = %s\n", I, e.s);
    ox_printf(&k.body, "    a[%s] = abs(e[%s])\n", I, I);
    ox_printf(&k.body, "    t[%s] = a[%s] > 1 ? 1 / a[%s] : a[%s]\n", I, I, I, I);
    ox_printf(&k.body, "    r[%s] = t[%s] > 0.2679491924311227 ? (t[%s] - 0.5773502691896257) / "
              "(1 + 0.5773502691896257 * t[%s]) : t[%s]\n", I, I, I, I, I);
    ox_printf(&k.body, "    z[%s] = r[%s] * r[%s]\n", I, I, I);
    /* atan r = r + r z (c1 + z (c2 + ... + z c11)), c_j = (-1)^j / (2j + 1), z = r^2 */
    ox_printf(&k.body, "    p[%s] = r[%s] + r[%s] * z[%s] * (", I, I, I, I);
    for (int j = 1; j <= 11; j++) {
        ox_printf(&k.body, "%.17g", (j % 2 ? -1.0 : 1.0) / (2 * j + 1));   /* f64's digits */
        if (j < 11)
            ox_printf(&k.body, " + z[%s] * (", I);
    }
    for (int j = 1; j <= 11; j++)
        ox_printf(&k.body, ")");
    ox_printf(&k.body, "\n");
    ox_printf(&k.body, "    q[%s] = (t[%s] > 0.2679491924311227 ? 0.5235987755982988 : 0) + p[%s]\n",
              I, I, I);
    ox_printf(&k.body, "    y[%s] = (e[%s] < 0 ? 0 - ", I, I);
    ox_float(&k.body, u->scale);
    ox_printf(&k.body, " : ");
    ox_float(&k.body, u->scale);
    ox_printf(&k.body, ") * (a[%s] > 1 ? 1.5707963267948966 - q[%s] : q[%s])\n", I, I, I);
    free(at.s);
    free(read.s);
    free(e.s);
    bool ok = ox_kernel_finish(&k, u->base, y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* ---------------------------------------------------------------- the table */

/* The elementwise ops (WIDEN and AS_IS: importer/impl.h). */
const ox_op ox_ops_math[] = {
    {"Abs", unary_op, &(const unary_spec){"abs", "abs($)", false}, WIDEN},
    {"Acos", op_atan, &(const atan_spec){"acos", "sqrt((1 - $) / (1 + $))", 2}, WIDEN},
    {"Acosh", unary_op, &(const unary_spec){"acosh", acosh_tmpl, true}, WIDEN},
    {"Asin", op_atan, &(const atan_spec){"asin", "$ / sqrt((1 - $) * (1 + $))", 1}, WIDEN},
    {"Asinh", unary_op, &(const unary_spec){"asinh", asinh_tmpl, true}, WIDEN},
    {"Atan", op_atan, &(const atan_spec){"atan", "$", 1}, WIDEN},
    {"Atanh", unary_op, &(const unary_spec){"atanh", atanh_tmpl, true}, WIDEN},
    {"Add", combine_op, &(const combine){"add", "$0 + $1", 2, 0, -1, false}, WIDEN},
    {"And", combine_op, &(const combine){"and", "$0 != 0 && $1 != 0 ? 1 : 0", 2, 0, IR_I32, false}, AS_IS},
    {"Cast", op_cast_typed, NULL, AS_IS},
    {"CastLike", op_castlike, NULL, AS_IS},
    {"Ceil", unary_op, &(const unary_spec){"ceil", "ceil($)", true}, WIDEN},
    {"Celu", unary_attr, &(const attr_spec){"celu", "max(0, $) + min(0, %1$s * (exp($ / %1$s) - 1))", "alpha", 1.0, NULL, 0}, WIDEN},
    {"Clip", op_clip, NULL, AS_IS},
    {"Cos", unary_op, &(const unary_spec){"cos", "cos($)", true}, WIDEN},
    {"Cosh", unary_op, &(const unary_spec){"cosh", cosh_tmpl, true}, WIDEN},
    {"Div", op_div, NULL, WIDEN},
    {"Dropout", op_dropout, NULL, AS_IS},
    {"Elu", unary_attr, &(const attr_spec){"elu", "$ >= 0 ? $ : %s * (exp($) - 1)", "alpha", 1.0, NULL, 0}, WIDEN},
    {"Equal", combine_op, &(const combine){"equal", "$0 == $1 ? 1 : 0", 2, 0, IR_I32, false}, AS_IS},
    {"Erf", unary_op, &(const unary_spec){"erf", "erf($)", true}, WIDEN},
    {"Exp", unary_op, &(const unary_spec){"exp", "exp($)", true}, WIDEN},
    {"Floor", unary_op, &(const unary_spec){"floor", "floor($)", true}, WIDEN},
    {"Gelu", op_gelu, NULL, WIDEN},
    {"Greater", combine_op, &(const combine){"greater", "$0 > $1 ? 1 : 0", 2, 0, IR_I32, false}, AS_IS},
    {"GreaterOrEqual", combine_op, &(const combine){"greater_or_equal", "$0 >= $1 ? 1 : 0", 2, 0, IR_I32, false}, AS_IS},
    {"HardSigmoid", unary_attr, &(const attr_spec){"hardsigmoid", "max(0, min(1, %s * $ + %s))", "alpha", 0.2, "beta", 0.5}, WIDEN},
    {"HardSwish", unary_op, &(const unary_spec){"hardswish", "$ * max(0, min(1, $ / 6 + 0.5))", true}, WIDEN},
    {"Identity", op_identity, NULL, AS_IS},
    {"IsInf", op_isinf, NULL, AS_IS},
    {"IsNaN", combine_op, &(const combine){"isnan", "$0 != $0 ? 1 : 0", 1, 0, IR_I32, true}, AS_IS},
    {"LeakyRelu", unary_attr, &(const attr_spec){"leakyrelu", "$ >= 0 ? $ : %s * $", "alpha", 0.01, NULL, 0}, WIDEN},
    {"Less", combine_op, &(const combine){"less", "$0 < $1 ? 1 : 0", 2, 0, IR_I32, false}, AS_IS},
    {"LessOrEqual", combine_op, &(const combine){"less_or_equal", "$0 <= $1 ? 1 : 0", 2, 0, IR_I32, false}, AS_IS},
    {"Log", unary_op, &(const unary_spec){"log", "log($)", true}, WIDEN},
    {"Max", combine_op, &(const combine){"max", "max($0, $1)", 0, 0, -1, false}, AS_IS},
    {"Mean", combine_op, &(const combine){"mean", "$0 + $1", 0, 0, -1, true}, WIDEN},
    {"Min", combine_op, &(const combine){"min", "min($0, $1)", 0, 0, -1, false}, AS_IS},
    {"Mod", op_mod, NULL, WIDEN},
    {"Mul", op_mul, &(const combine){"mul", "$0 * $1", 2, 0, -1, false}, WIDEN},
    {"Mish", op_mish, NULL, WIDEN},
    {"Neg", unary_op, &(const unary_spec){"neg", "-$", false}, WIDEN},
    {"Not", combine_op, &(const combine){"not", "$0 == 0 ? 1 : 0", 1, 0, IR_I32, false}, AS_IS},
    {"Or", combine_op, &(const combine){"or", "$0 != 0 || $1 != 0 ? 1 : 0", 2, 0, IR_I32, false}, AS_IS},
    {"PRelu", combine_op, &(const combine){"prelu", "$0 >= 0 ? $0 : $1 * $0", 2, 0, -1, true}, WIDEN},
    {"Pow", op_pow, NULL, WIDEN},
    {"Reciprocal", unary_op, &(const unary_spec){"reciprocal", "1 / $", true}, WIDEN},
    {"Relu", nn_unary, &(const nn_unary_spec){"relu", "max($, 0)"}, WIDEN},
    {"Round", unary_op, &(const unary_spec){"round", "floor($ + 0.5) - ($ + 0.5 == floor($ + 0.5) && " "floor(($ + 0.5) / 2) * 2 != floor($ + 0.5) ? 1 : 0)", true}, WIDEN},
    {"Selu", unary_attr, &(const attr_spec){"selu", "$ > 0 ? %2$s * $ : %2$s * (%1$s * exp($) - %1$s)", "alpha", 1.67326319217681884765625, "gamma", 1.05070102214813232421875}, WIDEN},
    {"Shrink", unary_attr, &(const attr_spec){"shrink", "$ < 0 - %1$s ? $ + %2$s : $ > %1$s ? $ - %2$s : 0", "lambd", 0.5, "bias", 0.0}, WIDEN},
    {"Sigmoid", nn_unary, &(const nn_unary_spec){"sigmoid", "sigmoid($)"}, WIDEN},
    {"Sign", unary_op, &(const unary_spec){"sign", "$ > 0 ? 1 : $ < 0 ? -1 : 0", false}, WIDEN},
    {"Sin", unary_op, &(const unary_spec){"sin", "sin($)", true}, WIDEN},
    {"Sinh", unary_op, &(const unary_spec){"sinh", sinh_tmpl, true}, WIDEN},
    {"Softplus", unary_op, &(const unary_spec){"softplus", SOFTPLUS, true}, WIDEN},
    {"Softsign", unary_op, &(const unary_spec){"softsign", "$ / (1 + abs($))", true}, WIDEN},
    {"Sqrt", unary_op, &(const unary_spec){"sqrt", "sqrt($)", true}, WIDEN},
    {"Sub", combine_op, &(const combine){"sub", "$0 - $1", 2, 0, -1, false}, WIDEN},
    {"Sum", combine_op, &(const combine){"sum", "$0 + $1", 0, 0, -1, false}, WIDEN},
    {"Tan", unary_op, &(const unary_spec){"tan", "sin($) / cos($)", true}, WIDEN},
    {"Tanh", unary_op, &(const unary_spec){"tanh", "tanh($)", true}, WIDEN},
    {"ThresholdedRelu", unary_attr, &(const attr_spec){"thresholdedrelu", "$ > %s ? $ : 0", "alpha", 1.0, NULL, 0}, WIDEN},
    {"Where", op_where, &(const combine){"where", "$0 != 0 ? $1 : $2", 3, 1, -1, false}, AS_IS},
    {"Xor", combine_op, &(const combine){"xor", "($0 != 0 && $1 == 0) || ($0 == 0 && $1 != 0) ? 1 : 0", 2, 0, IR_I32, false}, AS_IS},
};
const int ox_ops_math_count = (int)(sizeof ox_ops_math / sizeof *ox_ops_math);
