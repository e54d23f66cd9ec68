/* importer/ops_quant.c — quantized ONNX models: the QDQ form
 * (QuantizeLinear and DequantizeLinear around float ops) and the operator
 * form (QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger), with
 * per-tensor and per-channel scales and zero points (doc/quant.md).
 *
 * Integer contractions are one kernel each: products of the widened
 * integer operands minus their zero points, accumulated in i32
 *     acc = sum (i32(x) - x_zero) * (i32(w) - w_zero[f])
 * and then, per output channel f, one epilogue:
 *   - ConvInteger, MatMulInteger: acc itself (i32);
 *   - QLinearConv, QLinearMatMul: requantized as lib/nn.te's qconv2d does,
 *     y = sat(rint(f64(acc + bias[f]) * f64(scale[f])) + y_zero), with
 *     scale[f] = f32(x_scale * w_scale[f] / y_scale); an int8 QLinearConv
 *     that fits lib/nn.te's qconv2d is a call of it;
 *   - Conv, MatMul and Gemm whose operands are DequantizeLinear outputs
 *     of int8 or uint8 tensors (activations per tensor, constant weights
 *     per tensor or per output channel): dequantized once,
 *     y = f32(f64(acc) * f64(scale[f])) + bias[f], scale[f] =
 *     f32(x_scale * w_scale[f]).  A QuantizeLinear (and a Relu) after it
 *     is an elementwise layer that -O2 fuses into the contraction's tile;
 *   - Add of two such dequantized activations: one kernel reading the
 *     integers (op_add).
 * A strided 1x1 integer convolution (ResNet's downsampling) first copies
 * the positions it reads channels-last, so that its products read 4
 * channels at once.
 * Any other op between DequantizeLinear and QuantizeLinear computes in
 * f32 on the dequantized values, which is ONNX's definition of the QDQ
 * form, so a model is always computed right.
 *
 * This table comes first in importer/ops.c's list: its Conv, MatMul and
 * Gemm recognize dequantized operands and otherwise hand the node to
 * importer/ops_nn.c's functions. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importer/impl.h"

/* ---------------------------------------------------------------- DequantizeLinear outputs
 *
 * What each DequantizeLinear output was computed from, so that a
 * contraction reading it can read the integers instead.  The entry of an
 * output is written when its node is imported, before any node can read
 * it, so an entry found for a value of the model being imported (whose
 * producer is a DequantizeLinear) is that value's own; the table is
 * bounded, and a value whose entry was overwritten is computed in f32
 * (correct, only slower).  This holds as long as op_dequantize makes every
 * DequantizeLinear output (importer/fold.c does not fold the op). */
typedef struct dq_entry {
    const ox_value *out;
    ox_value *q, *scale, *zero;   /* the node's inputs (zero may be NULL) */
    int axis;                     /* the axis of a per-axis scale, else -1 */
} dq_entry;

enum { DQ_TABLE = 4096 };
static dq_entry dq_table[DQ_TABLE];
static int dq_next;

static void dq_remember(const dq_entry *e)
{
    for (int i = 0; i < DQ_TABLE; i++)
        if (dq_table[i].out == e->out) {
            dq_table[i] = *e;
            return;
        }
    dq_table[dq_next] = *e;
    dq_next = (dq_next + 1) % DQ_TABLE;
}

static const dq_entry *dq_of(const ox_value *v)
{
    if (!v || !v->producer || !v->producer->op_type ||
        strcmp(v->producer->op_type, "DequantizeLinear") != 0)
        return NULL;
    for (int i = 0; i < DQ_TABLE; i++)
        if (dq_table[i].out == v)
            return &dq_table[i];
    return NULL;
}

/* ---------------------------------------------------------------- scales and zero points */

static bool is_int8(ir_dtype t)
{
    return t == IR_I8 || t == IR_U8;
}

static int64_t numel(const ox_value *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++)
        n *= v->shape[d];
    return n;
}

/* Element i of a known scale or zero point of n entries (one entry: all). */
static double at(const ox_value *v, int64_t i)
{
    return rt_tensor_get(v->konst, numel(v) == 1 ? 0 : i);
}

static int64_t at_int(const ox_value *v, int64_t i)
{
    return v ? rt_tensor_get_int(v->konst, numel(v) == 1 ? 0 : i) : 0;
}

/* A scale or zero point of a contraction: one entry or n (one per output
 * channel), else an error naming it; a known scale must be positive and
 * finite.  Graph inputs are read at run time. */
static bool check_param(ox_node *nd, const ox_value *v, const char *what, int64_t n)
{
    if (!v)
        return true;
    if (numel(v) != 1 && !(v->ndim == 1 && v->shape[0] == n))
        return ox_fail(nd, "%s '%s' must have 1 or %lld entries, not %lld", what, v->onnx,
                       (long long)n, (long long)numel(v));
    if (strstr(what, "scale")) {
        if (v->dtype != IR_F32)
            return ox_fail(nd, "%s '%s' must be float32, not %s", what, v->onnx,
                           ir_dtype_name(v->dtype));
        for (int64_t i = 0; ox_known(v) && i < numel(v); i++)
            if (!(at(v, i) > 0) || isinf(at(v, i)))
                return ox_fail(nd, "%s '%s' must be positive and finite (entry %lld is %g)", what,
                               v->onnx, (long long)i, at(v, i));
    }
    return true;
}

/* A zero point of an integer operand q: of q's dtype. */
static bool check_zero(ox_node *nd, const ox_value *z, const ox_value *q, int64_t n)
{
    if (z && z->dtype != q->dtype)
        return ox_fail(nd, "the zero point '%s' is %s but '%s' is %s (they must have one dtype)",
                       z->onnx, ir_dtype_name(z->dtype), q->onnx, ir_dtype_name(q->dtype));
    return check_param(nd, z, "the zero point", n);
}

static bool all_zero(const ox_value *z)
{
    if (z && !ox_known(z))
        return false;
    for (int64_t i = 0; z && i < numel(z); i++)
        if (rt_tensor_get_int(z->konst, i) != 0)
            return false;
    return true;
}

/* The text of per-tensor or per-channel value v in kernel k (channel
 * index ch): a literal when it is a known one-entry integer, else a read
 * of its operand, role[ch] (role[] or role[0] for one entry).  Owned by
 * k. */
static const char *value_text(ox_kernel *k, ox_value *v, const char *role, const char *ch)
{
    ox_str b = {0};
    if (ox_is_literal(v) && !ir_dtype_is_float(v->dtype)) {
        ox_int(&b, rt_tensor_get_int(v->konst, 0));
    } else {
        const char *r = ox_operand(k, v, role);
        ox_printf(&b, "%s[%s]", r, numel(v) > 1 ? ch : v->ndim ? "0" : "");
    }
    const char *t = ox_kernel_role(k, b.s);
    free(b.s);
    return t;
}

/* The zero point's text (NULL when it is absent or all zeros). */
static const char *zero_text(ox_kernel *k, ox_value *z, const char *role, const char *ch)
{
    return !z || all_zero(z) ? NULL : value_text(k, z, role, ch);
}

/* "(i32(READ) - i32(Z))": an integer operand widened, minus its zero point. */
static void widened(ox_str *b, const char *read, const char *z)
{
    if (!z)
        ox_printf(b, "i32(%s)", read);
    else if (strchr(z, '['))
        ox_printf(b, "(i32(%s) - i32(%s))", read, z);
    else
        ox_printf(b, "(i32(%s) - %s)", read, z);
}

/* ---------------------------------------------------------------- integer contractions */

typedef enum { EP_I32, EP_REQUANT, EP_DEQUANT } ep_kind;

/* What a contraction's accumulator becomes, per output channel (F of
 * them): with kind EP_REQUANT, x_scale * w_scale[f] / y_scale, and y's
 * zero point; EP_DEQUANT, x_scale * w_scale[f], plus a float bias. */
typedef struct epilogue {
    ep_kind kind;
    ox_value *xs, *ws, *ys;  /* the scales (REQUANT, DEQUANT; ys: REQUANT) */
    ox_value *bias;          /* REQUANT: i32[F], DEQUANT: f32[F], or NULL */
    ox_value *yz;            /* REQUANT: y's zero point, or NULL */
    ir_dtype ydt;            /* the output's dtype */
    const char *base;        /* the def's name */
    const char *acc_fix;     /* subtracted from acc[..] first (zero_sums), or NULL */
    bool f32_product;        /* DEQUANT: acc - acc_fix is exact in f32 (f32_exact) */
} epilogue;

/* The scale per output channel as an f64 expression: a `param scale` of
 * f32(xs * ws[f] / ys) when the scales are known (as lib/nn.te's
 * qconv2d takes it), else the same computed from their reads. */
static const char *scale_text(ox_kernel *k, const epilogue *ep, int64_t F, const char *ch,
                              rt_tensor **made)
{
    ox_str b = {0};
    /* (ep->f32_product: the scales are known, the f32 parameter itself) */
    if (ox_known(ep->xs) && ox_known(ep->ws) && (!ep->ys || ox_known(ep->ys))) {
        rt_tensor *t = *made = ox_const_new(k->nd, IR_F32, 1, &F);
        if (!t)
            return NULL;
        for (int64_t f = 0; f < F; f++) {
            double s = at(ep->xs, 0) * at(ep->ws, f);
            ((float *)t->data)[f] = (float)(ep->ys ? s / at(ep->ys, 0) : s);
        }
        ox_value v = {.onnx = "scale", .konst = t, .weight = true, .uses = 1, .dtype = IR_F32,
                      .ndim = 1, .shape = {F}};
        ox_printf(&b, ep->f32_product ? "%s[%s]" : "f64(%s[%s])", ox_operand(k, &v, "scale"), ch);
    } else {
        ox_printf(&b, "f64(f32(f64(%s) * f64(%s)", value_text(k, ep->xs, "x_scale", ch),
                  value_text(k, ep->ws, "w_scale", ch));
        if (ep->ys)
            ox_printf(&b, " / f64(%s)", value_text(k, ep->ys, "y_scale", ch));
        ox_printf(&b, "))");
    }
    const char *t = ox_kernel_role(k, b.s);
    free(b.s);
    return t;
}

/* The epilogue's statement, y[OUT] from acc[OUT] with channel index ch
 * (F channels); then the kernel's def and call. */
static bool finish(ox_kernel *k, const epilogue *ep, ox_value *y, int64_t F, const char *out,
                   const char *ch)
{
    rt_tensor *made = NULL;
    if (ep->kind != EP_I32) {
        const char *sc = scale_text(k, ep, F, ch, &made);
        if (!sc) {
            ox_kernel_free(k);
            return false;
        }
        const char *br = ep->bias ? value_text(k, ep->bias, "bias", ch) : NULL;
        ox_printf(&k->body, "    y[%s] = ", out);
        if (ep->kind == EP_REQUANT) {
            /* lib/nn.te's requantization (qconv2d) */
            const char *yz = zero_text(k, ep->yz, "y_zero", ch);
            ox_printf(&k->body, "sat_%s(rint(f64(acc[%s]%s%s%s%s) * %s)", ir_dtype_name(ep->ydt),
                      out, ep->acc_fix ? " - " : "", ep->acc_fix ? ep->acc_fix : "",
                      br ? " + " : "", br ? br : "", sc);
            if (yz)
                ox_printf(&k->body, strchr(yz, '[') ? " + f64(%s)" : " + %s", yz);
            ox_printf(&k->body, ")\n");
        } else if (ep->f32_product) {
            /* f32(acc) * scale[f] rounds the exact product once, as the
             * f64 product rounded to f32 does (acc has at most 24
             * significant bits: f32_exact; the scale 24), at f32 speed: 16
             * lanes a vector and no conversions.  The max with the lowest
             * f32 leaves the (finite) product as it is and keeps -O2's
             * -ffp-contract=fast from fusing it with the bias into one
             * multiply-add, which would round once where ONNX rounds twice */
            ox_printf(&k->body, "max(f32(acc[%s]%s%s) * %s, -3.40282347e38)%s%s\n", out,
                      ep->acc_fix ? " - " : "", ep->acc_fix ? ep->acc_fix : "", sc,
                      br ? " + " : "", br ? br : "");
        } else {
            ox_printf(&k->body, "f32(f64(acc[%s]%s%s) * %s)%s%s\n", out,
                      ep->acc_fix ? " - " : "", ep->acc_fix ? ep->acc_fix : "", sc,
                      br ? " + " : "", br ? br : "");
        }
    }
    y->dtype = ep->ydt;
    bool ok = ox_kernel_finish(k, ep->base, y, NULL);
    ox_kernel_free(k);
    rt_tensor_free(made);
    return ok;
}

/* The geometry of a convolution's spatial dimensions (Conv's attributes:
 * ox_window_of's, and the groups). */
typedef struct geometry {
    int nsp;
    int64_t k[RT_MAX_DIMS], s[RT_MAX_DIMS], dil[RT_MAX_DIMS], pb[RT_MAX_DIMS], pe[RT_MAX_DIMS],
        out[RT_MAX_DIMS];
    int64_t group;
} geometry;

static bool conv_geometry(ox_node *nd, const ox_value *x, const ox_value *w, geometry *g)
{
    if (x->ndim < 3 || w->ndim != x->ndim)
        return ox_fail(nd, "x (rank %d) and w (rank %d) must have the same rank, at least 3",
                       x->ndim, w->ndim);
    g->group = ox_attr_int(nd, "group", 1);
    int64_t C = x->shape[1], F = w->shape[0];
    if (g->group < 1 || C % g->group || F % g->group || w->shape[1] * g->group != C)
        return ox_fail(nd, "x has %lld channels and w is [%lld, %lld, ...], which group=%lld "
                       "does not fit", (long long)C, (long long)F, (long long)w->shape[1],
                       (long long)g->group);
    const int64_t *ks;
    int nk = ox_attr_ints(nd, "kernel_shape", &ks);
    for (int d = 0; d < nk; d++)
        if (nk != x->ndim - 2 || ks[d] != w->shape[2 + d])
            return ox_fail(nd, "kernel_shape does not match w");
    ox_window win;
    if (!ox_window_of(nd, x, w->shape + 2, false, &win))
        return false;
    g->nsp = win.nsp;
    memcpy(g->k, win.k, sizeof g->k);
    memcpy(g->s, win.s, sizeof g->s);
    memcpy(g->dil, win.dil, sizeof g->dil);
    memcpy(g->pb, win.pb, sizeof g->pb);
    memcpy(g->pe, win.pe, sizeof g->pe);
    memcpy(g->out, win.out, sizeof g->out);
    return true;
}

/* Constant weights over Cg channels, not a multiple of 4 (an image's 3),
 * as weights over the next multiple of 4 whose extra channels hold their
 * zero point (wz, per tensor or per output channel): the extra products
 * are exact zeros, (x - xz) * 0, and the int8 schedule reads the 4
 * channels of a group at once (passes/schedule/int8.c).  NULL (nothing
 * to do) otherwise, or after an error (*failed). */
static rt_tensor *channels_by_4(ox_node *nd, const ox_value *w, const ox_value *wz,
                                const geometry *g, bool *failed)
{
    int64_t F = w->shape[0], Cg = w->shape[1];
    *failed = false;
    if (g->group != 1 || Cg % 4 == 0 || !ox_known(w) || !is_int8(w->dtype) ||
        (wz && !ox_known(wz)))
        return NULL;
    int64_t shape[RT_MAX_DIMS], inner = 1;
    memcpy(shape, w->shape, sizeof shape);
    shape[1] = (Cg + 3) / 4 * 4;
    for (int d = 2; d < w->ndim; d++)
        inner *= w->shape[d];
    rt_tensor *t = ox_const_new(nd, w->dtype, w->ndim, shape);
    if (!t) {
        *failed = true;
        return NULL;
    }
    for (int64_t f = 0; f < F; f++)
        for (int64_t c = 0; c < shape[1]; c++)
            for (int64_t i = 0; i < inner; i++)
                ox_put_int(t, (f * shape[1] + c) * inner + i,
                           c < Cg ? rt_tensor_get_int(w->konst, (f * Cg + c) * inner + i)
                           : wz ? rt_tensor_get_int(wz->konst, numel(wz) > 1 ? f : 0) : 0);
    return t;
}

/* The activation's zero point taken out of the products: with constant
 * weights w (zero point 0) and one constant zero point xz != 0 of x,
 * sum (x - xz) w = sum x w - xz sum w (integer sums wrap, so this holds
 * exactly), where xz sum w, one i32 per output channel (F of them, each
 * the sum of w's `inner` weights of its channel), is computed here.  The
 * kernel then accumulates plain products of the quantized values (one
 * dot-product instruction per group of 4 with u8 x, no correction per
 * step) and subtracts the constant once per output.  NULL (keep the zero
 * point in the products) otherwise, or after an error (*failed). */
static rt_tensor *zero_sums(ox_node *nd, const ox_value *x, const ox_value *xz,
                            const ox_value *w, const ox_value *wz, int64_t F, int64_t inner,
                            bool *failed)
{
    *failed = false;
    if (!xz || all_zero(xz) || numel(xz) != 1 || !ox_known(xz) || !ox_known(w) ||
        (wz && !all_zero(wz)) || x->dtype != IR_U8)
        return NULL;
    rt_tensor *t = ox_const_new(nd, IR_I32, 1, &F);
    if (!t) {
        *failed = true;
        return NULL;
    }
    int64_t z = rt_tensor_get_int(xz->konst, 0);
    for (int64_t f = 0; f < F; f++) {
        uint64_t sum = 0;
        for (int64_t i = 0; i < inner; i++)
            sum += (uint64_t)rt_tensor_get_int(w->konst, f * inner + i);
        ox_put_int(t, f, (int64_t)(int32_t)(uint32_t)(sum * (uint64_t)z));
    }
    return t;
}

/* Whether every dequantizing epilogue's accumulator, sum (x - xz) * (w -
 * wz[f]) over the `inner` constant weights of each of the F output
 * channels, is exact in f32 (at most 2^24 in magnitude) for every value
 * x can take (its dtype's range; padding and channels_by_4's extra
 * channels contribute 0): then f32(acc) * scale equals f32(f64(acc) *
 * f64(scale)) (finish).  xz, wz: known or NULL. */
static bool f32_exact(const ox_value *x, const ox_value *xz, const ox_value *w, const ox_value *wz,
                      int64_t F, int64_t inner)
{
    if (!ox_known(w) || (xz && !ox_known(xz)) || (wz && !ox_known(wz)) || !is_int8(x->dtype))
        return false;
    int64_t z = at_int(xz, 0), lo = x->dtype == IR_U8 ? 0 : -128, hi = x->dtype == IR_U8 ? 255 : 127;
    int64_t xmax = hi - z > z - lo ? hi - z : z - lo;
    for (int64_t f = 0; f < F; f++) {
        int64_t sum = 0, wzf = at_int(wz, f);
        for (int64_t i = 0; i < inner; i++) {
            int64_t d = rt_tensor_get_int(w->konst, f * inner + i) - wzf;
            sum += d < 0 ? -d : d;
        }
        if (sum > ((int64_t)1 << 24) / (xmax ? xmax : 1))
            return false;
    }
    return true;
}

/* Whether the convolution of x is a strided 1x1 one of one group over a
 * multiple of 4 channels (not padded to one: by4) without padding, whose
 * products read a copy of the positions it uses (int_conv). */
static bool pointwise_strided(const ox_value *x, const geometry *g, bool by4)
{
    bool strided = false;
    for (int d = 0; d < g->nsp; d++) {
        if (g->k[d] != 1 || g->pb[d] || g->pe[d])
            return false;
        strided |= g->s[d] > 1;
    }
    return strided && g->group == 1 && !by4 && x->shape[1] % 4 == 0 && !ox_known(x);
}

/* The read of x at output position o.., window position r.. and channel c
 * of an integer convolution (F outputs, Cg channels per group; by4: the
 * weights were padded to a multiple of 4 channels; xzt: x's zero point). */
static void int_conv_read(ox_str *xr, const geometry *g, int64_t F, int64_t Cg, bool by4,
                          const char *xzt)
{
    ox_printf(xr, "x[n, ");
    if (g->group == 1)   /* (c + 0: c alone would tie c's extent to x's channels) */
        ox_printf(xr, by4 ? "c + 0" : "c");
    else
        ox_printf(xr, "f / %lld * %lld + c", (long long)(F / g->group), (long long)Cg);
    for (int d = 0; d < g->nsp; d++) {
        ox_printf(xr, ", o%d", d);
        if (g->s[d] != 1)
            ox_printf(xr, " * %lld", (long long)g->s[d]);
        ox_printf(xr, " + r%d", d);
        if (g->dil[d] != 1)
            ox_printf(xr, " * %lld", (long long)g->dil[d]);
        if (g->pb[d])
            ox_printf(xr, " - %lld", (long long)g->pb[d]);
    }
    /* the padding holds the real 0, whose code is the zero point */
    ox_printf(xr, "] else %s", xzt ? xzt : "0");
}

/* An integer convolution of x (zero point xz, per tensor) and w (zero
 * point wz, per tensor or per output channel), then the epilogue. */
static bool int_conv(ox_node *nd, ox_value *x, ox_value *xz, ox_value *w, ox_value *wz,
                     const geometry *g, const epilogue *ep)
{
    int64_t F = w->shape[0];
    bool failed;
    rt_tensor *w4 = channels_by_4(nd, w, wz, g, &failed);
    if (failed)
        return false;
    /* (x's reads beyond its channels give its zero point: "else" below) */
    ox_value wv = w4 ? (ox_value){.onnx = w->onnx, .konst = w4, .weight = true, .uses = 1,
                                  .dtype = w->dtype, .ndim = w->ndim}
                     : *w;
    if (w4) {
        memcpy(wv.shape, w4->shape, sizeof wv.shape);
        w = &wv;
    }
    int64_t Cg = w->shape[1];
    ox_value *y = ox_output(nd, 0);
    y->ndim = x->ndim;
    y->shape[0] = x->shape[0];
    y->shape[1] = F;
    for (int d = 0; d < g->nsp; d++)
        y->shape[2 + d] = g->out[d];
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_operand(&k, w, "weight");
    const char *xzt = zero_text(&k, xz, "x_zero", "0"), *wzt = zero_text(&k, wz, "w_zero", "f");
    /* the zero point out of the products (zero_sums) */
    epilogue ep2 = *ep;
    rt_tensor *zs = NULL;
    if (ep->kind != EP_I32 && g->group == 1) {
        int64_t inner = 1;
        for (int d = 1; d < w->ndim; d++)
            inner *= w->shape[d];
        if (!(zs = zero_sums(nd, x, xz, w, wz, F, inner, &failed)) && failed) {
            ox_kernel_free(&k);
            rt_tensor_free(w4);
            return false;
        }
    }
    if (ep->kind == EP_DEQUANT) {
        int64_t inner = 1;
        for (int d = 1; d < w->ndim; d++)
            inner *= w->shape[d];
        ep2.f32_product = ox_known(ep->xs) && ox_known(ep->ws) &&
                          f32_exact(x, xz, w, wz, F, inner);
        ep = &ep2;
    }
    if (zs) {
        ox_value zv = {.onnx = "x_zero_sums", .konst = zs, .weight = true, .uses = 1,
                       .dtype = IR_I32, .ndim = 1, .shape = {F}};
        ep2.acc_fix = value_text(&k, &zv, "x_zero_sums", "f");
        ep = &ep2;
    }
    ox_str out = {0}, xr = {0}, wr = {0};
    ox_printf(&out, "n, f");
    for (int d = 0; d < g->nsp; d++)
        ox_printf(&out, ", o%d", d);
    if (pointwise_strided(x, g, w4 != NULL)) {
        /* a strided 1x1 convolution (ResNet's downsampling) reads every
         * s-th position of each channel: the positions it reads, copied
         * channels-last (xs[n, o.., c]), give the products 4 channels in
         * one 4-byte read (passes/schedule/int8.c) instead of 4 loads from
         * 4 planes, for a copy of a quarter of x */
        ox_printf(&k.body, "    xs[n");
        for (int d = 0; d < g->nsp; d++)
            ox_printf(&k.body, ", o%d", d);
        ox_printf(&k.body, ", c] = x[n, c");
        for (int d = 0; d < g->nsp; d++)
            ox_printf(&k.body, ", o%d * %lld", d, (long long)g->s[d]);
        ox_printf(&k.body, "]");
        for (int d = 0; d < g->nsp; d++)
            ox_printf(&k.body, "%s o%d in 0..%lld", d ? "," : " where", d, (long long)g->out[d]);
        ox_printf(&k.body, "\n");
        ox_printf(&xr, "xs[n");
        for (int d = 0; d < g->nsp; d++)
            ox_printf(&xr, ", o%d", d);
        ox_printf(&xr, ", c]");
    } else {
        int_conv_read(&xr, g, F, Cg, w4 != NULL, xzt);
    }
    ox_printf(&wr, "weight[f, c");
    for (int d = 0; d < g->nsp; d++)
        ox_printf(&wr, ", r%d", d);
    ox_printf(&wr, "]");
    ox_printf(&k.body, "    %s[%s] += ", ep->kind == EP_I32 ? "y" : "acc", out.s);
    widened(&k.body, xr.s, zs ? NULL : xzt);
    ox_printf(&k.body, " * ");
    widened(&k.body, wr.s, wzt);
    for (int d = 0; d < g->nsp; d++)
        ox_printf(&k.body, "%s o%d in 0..%lld", d ? "," : " where", d, (long long)g->out[d]);
    ox_printf(&k.body, "\n");
    bool ok = finish(&k, ep, y, F, out.s, "f");
    free(out.s);
    free(xr.s);
    free(wr.s);
    rt_tensor_free(w4);
    rt_tensor_free(zs);
    return ok;
}

/* An integer matrix product a @ b (b transposed when tb, 2-D then), with
 * zero points az (one, or one per row of a) and bz (one, or one per column
 * of the result), batch dimensions broadcast as MatMul's; then the
 * epilogue, per column. */
static bool int_matmul(ox_node *nd, ox_value *a, ox_value *az, ox_value *b, ox_value *bz,
                       bool tb, const epilogue *ep)
{
    if (a->ndim < 2 || b->ndim < 2 || (tb && b->ndim != 2))
        return ox_fail(nd, "the inputs must have rank 2 or more ('%s' has rank %d, '%s' rank %d)",
                       a->onnx, a->ndim, b->onnx, b->ndim);
    int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1];
    int64_t Kb = b->shape[tb ? 1 : b->ndim - 2], N = b->shape[tb ? 0 : b->ndim - 1];
    if (K != Kb)
        return ox_fail(nd, "'%s' has %lld columns but '%s' has %lld rows", a->onnx, (long long)K,
                       b->onnx, (long long)Kb);
    if (!check_zero(nd, az, a, M) || !check_zero(nd, bz, b, N))
        return false;
    ox_value ba = *a, bb = *b;
    ba.ndim -= 2, bb.ndim -= 2;
    ox_value *both[2] = {&ba, &bb};
    int R;
    int64_t bs[RT_MAX_DIMS];
    if (!ox_broadcast(nd, both, 2, &R, bs))
        return false;
    ox_value *y = ox_output(nd, 0);
    y->ndim = R + 2;
    memcpy(y->shape, bs, sizeof(int64_t) * (size_t)R);
    y->shape[R] = M, y->shape[R + 1] = N;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, a, "A");
    ox_operand(&k, b, "B");
    const char *azt = zero_text(&k, az, "a_zero", "m"), *bzt = zero_text(&k, bz, "b_zero", "n");
    ox_str out = {0}, ar = {0}, br = {0};
    ox_indices(&out, "i", 0, R);
    ox_printf(&out, "%sm, n", R ? ", " : "");
    const ox_value *ops[2] = {a, b};
    ox_str *reads[2] = {&ar, &br};
    for (int o = 0; o < 2; o++) {
        const ox_value *v = ops[o];
        ox_printf(reads[o], "%s[", o ? "B" : "A");
        for (int d = 0; d < v->ndim - 2; d++) {
            int od = R - (v->ndim - 2) + d;
            if (v->shape[d] == 1 && bs[od] != 1)
                ox_printf(reads[o], "0, ");
            else
                ox_printf(reads[o], "i%d, ", od);
        }
        ox_printf(reads[o], "%s]", o == 0 ? "m, k" : tb ? "n, k" : "k, n");
    }
    ox_printf(&k.body, "    %s[%s] += ", ep->kind == EP_I32 ? "y" : "acc", out.s);
    widened(&k.body, ar.s, azt);
    ox_printf(&k.body, " * ");
    widened(&k.body, br.s, bzt);
    ox_printf(&k.body, "\n");
    bool ok = finish(&k, ep, y, N, out.s, "n");
    free(out.s);
    free(ar.s);
    free(br.s);
    return ok;
}

/* ---------------------------------------------------------------- the operator form */

static ox_value *opt(ox_node *nd, int i)
{
    return i < nd->nin ? nd->in[i] : NULL;
}

/* The integer operands of the operator form and their zero points:
 * inputs 0, 3, 2 and 5 of QLinearConv and QLinearMatMul (q), 0, 1, 2 and
 * 3 of ConvInteger and MatMulInteger. */
static bool int_operands(ox_node *nd, bool q, ox_value **x, ox_value **w, ox_value **xz,
                         ox_value **wz)
{
    if (!(*x = ox_input(nd, 0)) || !(*w = ox_input(nd, q ? 3 : 1)))
        return false;
    for (int i = 0; i < 2; i++) {
        const ox_value *v = i ? *w : *x;
        if (!is_int8(v->dtype))
            return ox_fail(nd, "input '%s' is %s; %s takes int8 and uint8", v->onnx,
                           ir_dtype_name(v->dtype), nd->n->op_type);
    }
    *xz = opt(nd, 2);
    *wz = opt(nd, q ? 5 : 3);
    return true;
}

/* The requantizing epilogue of QLinearConv and QLinearMatMul: scales at
 * inputs 1, 4 and 6, y's zero point at 7 (its dtype is y's, default
 * uint8); F output channels. */
static bool requantize(ox_node *nd, epilogue *ep, int64_t F)
{
    ep->kind = EP_REQUANT;
    if (!(ep->xs = ox_input(nd, 1)) || !(ep->ws = ox_input(nd, 4)) || !(ep->ys = ox_input(nd, 6)))
        return false;
    ep->yz = opt(nd, 7);
    ep->ydt = ep->yz ? ep->yz->dtype : IR_U8;
    if (!is_int8(ep->ydt))
        return ox_fail(nd, "the output zero point '%s' must be int8 or uint8, not %s",
                       ep->yz->onnx, ir_dtype_name(ep->ydt));
    return check_param(nd, ep->xs, "the scale", 1) && check_param(nd, ep->ws, "the scale", F) &&
           check_param(nd, ep->ys, "the scale", 1) && check_param(nd, ep->yz, "the zero point", 1);
}

/* QLinearConv(x, xs, xz, w, ws, wz, ys, yz, B) and ConvInteger(x, w, xz,
 * wz); arg: whether it requantizes. */
static bool op_qconv(ox_node *nd, const void *arg)
{
    bool q = *(const bool *)arg;
    ox_value *x, *w, *xz, *wz;
    if (!int_operands(nd, q, &x, &w, &xz, &wz))
        return false;
    geometry g;
    if (!conv_geometry(nd, x, w, &g))
        return false;
    int64_t F = w->shape[0];
    if (!check_zero(nd, xz, x, 1) || !check_zero(nd, wz, w, F))
        return false;
    epilogue ep = {EP_I32, NULL, NULL, NULL, NULL, NULL, IR_I32, "conv_integer", NULL, false};
    if (!q)
        return int_conv(nd, x, xz, w, wz, &g, &ep);
    ep.base = "qlinear_conv";
    if (!requantize(nd, &ep, F))
        return false;
    ox_value *bias = ep.bias = opt(nd, 8);
    if (bias && (bias->dtype != IR_I32 || bias->ndim != 1 || bias->shape[0] != F))
        return ox_fail(nd, "the bias '%s' must be i32[%lld]", bias->onnx, (long long)F);
    /* lib/nn.te's qconv2d: int8, one square window, symmetric weights,
     * everything but x known */
    bool square = g.nsp == 2 && g.k[0] == g.k[1] && g.s[0] == g.s[1] && g.dil[0] == 1 &&
                  g.dil[1] == 1 && g.pb[0] == g.pb[1] && g.pe[0] == g.pb[0] &&
                  g.pe[1] == g.pb[0] && g.group == 1;
    bool known = ox_known(ep.xs) && ox_known(ep.ws) && ox_known(ep.ys) &&
                 (!xz || ox_known(xz)) && (!ep.yz || ox_known(ep.yz));
    if (!(square && known && x->dtype == IR_I8 && ep.ydt == IR_I8 && x->id && ox_is_param(w) &&
          all_zero(wz) && (!bias || ox_is_param(bias))))
        return int_conv(nd, x, xz, w, wz, &g, &ep);
    rt_tensor *b = bias ? bias->konst : ox_const_new(nd, IR_I32, 1, &F);
    rt_tensor *s = ox_const_new(nd, IR_F32, 1, &F);
    for (int64_t f = 0; s && f < F; f++)
        ((float *)s->data)[f] = (float)(at(ep.xs, 0) * at(ep.ws, f) / at(ep.ys, 0));
    bool ok = b && s;
    if (ok) {
        static const char *roles[] = {"weight", "bias", "scale"};
        rt_tensor *data[3] = {w->konst, b, s};
        ox_value *y = ox_output(nd, 0);
        y->dtype = IR_I8;
        y->ndim = 4;
        y->shape[0] = x->shape[0], y->shape[1] = F, y->shape[2] = g.out[0], y->shape[3] = g.out[1];
        ox_str args = {0};
        ox_printf(&args, "%s, %lld, %lld", x->id, (long long)F, (long long)g.k[0]);
        if (g.s[0] != 1)
            ox_printf(&args, ", stride=%lld", (long long)g.s[0]);
        if (g.pb[0])
            ox_printf(&args, ", pad=%lld", (long long)g.pb[0]);
        if (at_int(xz, 0))
            ox_printf(&args, ", x_zero=%lld", (long long)at_int(xz, 0));
        if (at_int(ep.yz, 0))
            ox_printf(&args, ", y_zero=%lld", (long long)at_int(ep.yz, 0));
        ok = ox_call_nn(nd, y, "qconv2d", args.s, roles, data, 3);
        free(args.s);
    }
    if (!bias)
        rt_tensor_free(b);
    rt_tensor_free(s);
    return ok;
}

/* QLinearMatMul(a, as, az, b, bs, bz, ys, yz) and MatMulInteger(a, b, az,
 * bz); arg: whether it requantizes. */
static bool op_qmatmul(ox_node *nd, const void *arg)
{
    bool q = *(const bool *)arg;
    ox_value *a, *b, *az, *bz;
    if (!int_operands(nd, q, &a, &b, &az, &bz))
        return false;
    epilogue ep = {EP_I32, NULL, NULL, NULL, NULL, NULL, IR_I32, "matmul_integer", NULL, false};
    if (q) {
        ep.base = "qlinear_matmul";
        if (!requantize(nd, &ep, b->ndim ? b->shape[b->ndim - 1] : 1))
            return false;
    }
    return int_matmul(nd, a, az, b, bz, false, &ep);
}

/* ---------------------------------------------------------------- QuantizeLinear, DequantizeLinear */

/* The scale (float32) and zero point of a Q/DQ node: one entry (per
 * tensor: *axis -1), or a 1-D tensor along attribute axis. */
static bool qdq_axis(ox_node *nd, const ox_value *x, const ox_value *s, const ox_value *z,
                     int *axis)
{
    *axis = -1;
    if (ox_attr_int(nd, "block_size", 0) != 0)
        return ox_fail(nd, "block_size %lld (blocked quantization, opset 21) is not supported",
                       (long long)ox_attr_int(nd, "block_size", 0));
    if (s->dtype != IR_F32)
        return ox_fail(nd, "the scale '%s' must be float32, not %s", s->onnx,
                       ir_dtype_name(s->dtype));
    if (z && (z->ndim != s->ndim || numel(z) != numel(s)))
        return ox_fail(nd, "the zero point '%s' must have the scale's shape", z->onnx);
    if (numel(s) == 1 && s->ndim <= 1)   /* one scale: per tensor, whatever the axis */
        return true;
    if (s->ndim != 1)
        return ox_fail(nd, "the scale '%s' must be a scalar or 1-D, not rank %d", s->onnx,
                       s->ndim);
    if (!ox_axis(nd, ox_attr_int(nd, "axis", 1), x->ndim, axis))
        return false;
    if (s->shape[0] != x->shape[*axis])
        return ox_fail(nd, "the scale '%s' has %lld entries but axis %d of '%s' has %lld",
                       s->onnx, (long long)s->shape[0], *axis, x->onnx,
                       (long long)x->shape[*axis]);
    return true;
}

/* A read of scale or zero point v in a kernel over x's indices i0, i1 ...:
 * a literal when known and one entry, else role[i<axis>] (per tensor:
 * role[] or role[0]). */
static void qdq_read(ox_str *b, ox_kernel *k, ox_value *v, const char *role, int axis,
                     const ox_value *x)
{
    ox_bcast_read(b, ox_is_literal(v) ? "" : ox_operand(k, v, role), v,
                  axis >= 0 ? axis : x->ndim - v->ndim, x->shape);
}

static bool op_dequantize(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0), *s = ox_input(nd, 1), *z = opt(nd, 2);
    if (!x || !s)
        return false;
    if (!is_int8(x->dtype) && x->dtype != IR_I32)
        return ox_fail(nd, "input '%s' is %s; DequantizeLinear takes int8, uint8 and int32",
                       x->onnx, ir_dtype_name(x->dtype));
    if (z && z->dtype != x->dtype)
        return ox_fail(nd, "the zero point '%s' is %s but '%s' is %s (they must have one dtype)",
                       z->onnx, ir_dtype_name(z->dtype), x->onnx, ir_dtype_name(x->dtype));
    int axis;
    if (!qdq_axis(nd, x, s, z, &axis))
        return false;
    ox_value *y;
    if (ox_known(x) && ox_known(s) && (!z || ox_known(z))) {
        /* a weight: dequantized here, (q - zero) * scale in f32 */
        rt_tensor *t = ox_const_new(nd, IR_F32, x->ndim, x->shape);
        if (!t)
            return false;
        int64_t st[RT_MAX_DIMS], n = numel(x);
        ox_strides(x, st);
        for (int64_t i = 0; i < n; i++) {
            int64_t c = axis < 0 ? 0 : i / st[axis] % x->shape[axis];
            float q = (float)rt_tensor_get_int(x->konst, i);
            float zf = z ? (float)rt_tensor_get_int(z->konst, c) : 0.0f;
            ((float *)t->data)[i] = (q - zf) * (float)rt_tensor_get(s->konst, c);
        }
        /* (as ox_set_const, keeping the value) */
        y = ox_output(nd, 0);
        y->konst = t;
        y->weight = x->weight;
        y->dtype = IR_F32;
        y->ndim = x->ndim;
        memcpy(y->shape, x->shape, sizeof y->shape);
    } else {
        y = ox_output(nd, 0);
        y->dtype = IR_F32;
        y->ndim = x->ndim;
        memcpy(y->shape, x->shape, sizeof y->shape);
        ox_kernel k;
        ox_kernel_init(&k, nd);
        ox_operand(&k, x, "x");
        ox_printf(&k.body, "    y[");
        ox_indices(&k.body, "i", 0, x->ndim);
        ox_printf(&k.body, "] = ");
        if (z && !(ox_is_literal(z) && rt_tensor_get_int(z->konst, 0) == 0)) {
            ox_printf(&k.body, "(f32(x[");
            ox_indices(&k.body, "i", 0, x->ndim);
            ox_printf(&k.body, "]) - f32(");
            qdq_read(&k.body, &k, z, "zero", axis, x);
            ox_printf(&k.body, "))");
        } else {
            ox_printf(&k.body, "f32(x[");
            ox_indices(&k.body, "i", 0, x->ndim);
            ox_printf(&k.body, "])");
        }
        ox_printf(&k.body, " * ");
        qdq_read(&k.body, &k, s, "scale", axis, x);
        ox_printf(&k.body, "\n");
        bool ok = ox_kernel_finish(&k, "dequantize", y, NULL);
        ox_kernel_free(&k);
        if (!ok)
            return false;
    }
    dq_remember(&(dq_entry){y, x, s, z, axis});
    return true;
}
/* The kernel y = QuantizeLinear(x, s, z) along axis (-1: per tensor), y
 * given its dtype (z's, else u8); in layer suffix (ox_kernel_finish). */
static bool quantize_kernel(ox_node *nd, ox_value *x, ox_value *s, ox_value *z, int axis,
                            ox_value *y, const char *suffix)
{
    ir_dtype t = y->dtype;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    /* saturate(round(x / scale) + zero), ties to even, clamped in f32
     * (as sat_ in f64: the limits are f32 values, and a NaN gives the
     * lower one either way), so that vector code runs f32 lanes */
    int64_t lo = t == IR_U8 ? 0 : -128, hi = t == IR_U8 ? 255 : 127;
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] = %s(min(max(rint(x[", ir_dtype_name(t));
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] / ");
    qdq_read(&k.body, &k, s, "scale", axis, x);
    ox_printf(&k.body, ")");
    if (z && !(ox_is_literal(z) && rt_tensor_get_int(z->konst, 0) == 0)) {
        ox_printf(&k.body, " + %s", ox_is_literal(z) ? "" : "f32(");
        qdq_read(&k.body, &k, z, "zero", axis, x);
        ox_printf(&k.body, "%s", ox_is_literal(z) ? "" : ")");
    }
    ox_printf(&k.body, ", %lld.0), %lld.0))\n", (long long)lo, (long long)hi);
    bool ok = ox_kernel_finish(&k, "quantize", y, suffix);
    ox_kernel_free(&k);
    return ok;
}

/* *t: the dtype of the codes QuantizeLinear node q makes with zero point z
 * (NULL when absent): z's, else opset 21's output_dtype (ONNX's data type
 * number), else uint8.  False when output_dtype is not int8 or uint8 or
 * differs from z's dtype. */
static bool codes_dtype(const Onnx__NodeProto *q, const ox_value *z, ir_dtype *t)
{
    *t = z ? z->dtype : IR_U8;
    for (size_t i = 0; i < q->n_attribute; i++) {
        const Onnx__AttributeProto *a = q->attribute[i];
        ir_dtype want;
        if (!a->name || strcmp(a->name, "output_dtype") != 0 || !a->has_i || a->i == 0)
            continue;
        if (!ox_dtype_of((int32_t)a->i, &want) || !is_int8(want) || (z && want != *t))
            return false;
        *t = want;
    }
    return true;
}

static bool op_quantize(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0), *s = ox_input(nd, 1), *z = opt(nd, 2);
    if (!x || !s)
        return false;
    if (x->quantized_for == nd->n)   /* the max pool of the codes (op_maxpool) */
        return ox_aliasable(x) ? ox_alias(nd) : ox_copy(nd);
    if (x->dtype != IR_F32)
        return ox_fail(nd, "input '%s' is %s; QuantizeLinear takes float32", x->onnx,
                       ir_dtype_name(x->dtype));
    ir_dtype t;
    int64_t odt = ox_attr_int(nd, "output_dtype", 0);
    if (!codes_dtype(nd->n, z, &t))
        return ox_fail(nd, "output_dtype %lld (%s) is %s", (long long)odt,
                       ox_onnx_type_name((int32_t)odt),
                       z ? "not the zero point's dtype" : "neither int8 nor uint8");
    if (!is_int8(t))
        return ox_fail(nd, "the zero point '%s' is %s; QuantizeLinear makes int8 and uint8",
                       z->onnx, ir_dtype_name(t));
    int axis;
    if (!qdq_axis(nd, x, s, z, &axis))
        return false;
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
    y->dtype = t;
    return quantize_kernel(nd, x, s, z, axis, y, NULL);
}

/* DynamicQuantizeLinear(x) -> y, y_scale, y_zero_point: uint8 over the
 * range of x and 0, scale = (max - min) / 255, zero point =
 * saturate(round(-min / scale)); three layers (LAYER.scale, LAYER.zero,
 * LAYER). */
static bool op_dynamic_quantize(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    if (x->dtype != IR_F32)
        return ox_fail(nd, "input '%s' is %s; DynamicQuantizeLinear takes float32", x->onnx,
                       ir_dtype_name(x->dtype));
    if (ox_noutputs(nd) != 3)
        return ox_fail(nd, "the node has %d outputs, not 3", ox_noutputs(nd));
    ox_str I = {0};
    ox_indices(&I, "i", 0, x->ndim);
    ox_value *v[3];
    static const char *const what[3] = {"scale", "zero", NULL};
    bool ok = true;
    for (int o = 1; ok && o <= 3; o++) {
        int out = o % 3;     /* the scale, the zero point, then y */
        v[out] = ox_output(nd, out);
        v[out]->dtype = out == 1 ? IR_F32 : IR_U8;
        v[out]->ndim = out ? 0 : x->ndim;
        memcpy(v[out]->shape, x->shape, sizeof x->shape);
        ox_kernel k;
        ox_kernel_init(&k, nd);
        ox_operand(&k, x, "x");
        if (out == 2)
            ox_printf(&k.body, "    lo[] min= x[%s]\n", I.s);
        if (out == 1)
            ox_printf(&k.body, "    lo[] min= x[%s]\n    hi[] max= x[%s]\n"
                      "    y[] = (max(hi[], 0.0) - min(lo[], 0.0)) / 255.0\n", I.s, I.s);
        else if (out == 2)
            ox_printf(&k.body, "    y[] = sat_u8(rint(0.0 - min(lo[], 0.0) / %s[]))\n",
                      ox_operand(&k, v[1], "scale"));
        else
            ox_printf(&k.body, "    y[%s] = sat_u8(rint(x[%s] / %s[]) + f32(%s[]))\n", I.s, I.s,
                      ox_operand(&k, v[1], "scale"), ox_operand(&k, v[2], "zero"));
        ok = ox_kernel_finish(&k, out == 1 ? "dynamic_scale" : out == 2 ? "dynamic_zero" :
                              "quantize", v[out], what[out]);
        ox_kernel_free(&k);
    }
    free(I.s);
    return ok;
}

/* ---------------------------------------------------------------- the QDQ form */

/* Hands a node whose operands are not dequantized integers to
 * importer/ops_nn.c's or ops_math.c's op of that name. */
static bool float_op(ox_node *nd)
{
    for (int i = 0; i < ox_ops_nn_count; i++)
        if (strcmp(ox_ops_nn[i].name, nd->n->op_type) == 0) {
            nd->widen = ox_ops_nn[i].widen;
            return ox_ops_nn[i].fn(nd, ox_ops_nn[i].arg);
        }
    for (int i = 0; i < ox_ops_math_count; i++)
        if (strcmp(ox_ops_math[i].name, nd->n->op_type) == 0) {
            nd->widen = ox_ops_math[i].widen;
            return ox_ops_math[i].fn(nd, ox_ops_math[i].arg);
        }
    return ox_fail(nd, "internal error: onnx: no float %s", nd->n->op_type);
}

static bool usable_scale(const ox_value *s)
{
    if (!ox_known(s) || s->dtype != IR_F32)
        return false;
    for (int64_t i = 0; i < numel(s); i++)
        if (!(at(s, i) > 0) || isinf(at(s, i)))
            return false;
    return true;
}

/* The DequantizeLinear behind v when it dequantizes int8 or uint8 values
 * with a known scale and zero point, per tensor (axis -2) or per tensor or
 * along axis; else NULL.  weight: the integers must be constant. */
static const dq_entry *dequantized(const ox_value *v, bool weight, int axis)
{
    const dq_entry *e = dq_of(v);
    if (!e || !is_int8(e->q->dtype) || !usable_scale(e->scale) ||
        (e->zero && !ox_known(e->zero)) || (weight && !ox_known(e->q)))
        return NULL;
    if (e->axis >= 0 && e->axis != axis)
        return NULL;
    return e;
}

static bool op_conv(ox_node *nd, const void *arg)
{
    (void)arg;
    const dq_entry *ex = dequantized(opt(nd, 0), false, -2);
    const dq_entry *ew = dequantized(opt(nd, 1), true, 0);
    ox_value *bias = opt(nd, 2);
    if (!ex || !ew || ex->q->ndim < 3 || ew->q->ndim != ex->q->ndim ||
        (bias && (bias->dtype != IR_F32 || bias->ndim != 1 || bias->shape[0] != ew->q->shape[0])))
        return float_op(nd);
    geometry g;
    if (!conv_geometry(nd, ex->q, ew->q, &g))
        return false;
    epilogue ep = {EP_DEQUANT, ex->scale, ew->scale, NULL, bias, NULL, IR_F32, "qdq_conv", NULL,
                   false};
    return int_conv(nd, ex->q, ex->zero, ew->q, ew->zero, &g, &ep);
}

/* MatMul, and Gemm without transA, alpha or beta; arg: whether Gemm. */
static bool op_matmul(ox_node *nd, const void *arg)
{
    bool gemm = *(const bool *)arg;
    bool tb = gemm && ox_attr_int(nd, "transB", 0);
    const dq_entry *ea = dequantized(opt(nd, 0), false, -2);
    const dq_entry *eb = dequantized(opt(nd, 1), true, tb ? 0 : 1);
    ox_value *bias = gemm ? opt(nd, 2) : NULL;
    int64_t N = eb ? eb->q->shape[tb ? 0 : 1] : 0;
    if (!ea || !eb || eb->q->ndim != 2 || ea->q->ndim < 2 || (gemm && ea->q->ndim != 2) ||
        (gemm && (ox_attr_int(nd, "transA", 0) || ox_attr_float(nd, "alpha", 1) != 1 ||
                  ox_attr_float(nd, "beta", 1) != 1)) ||
        (bias && (bias->dtype != IR_F32 || bias->ndim != 1 || bias->shape[0] != N)))
        return float_op(nd);
    epilogue ep = {EP_DEQUANT, ea->scale, eb->scale, NULL, bias, NULL, IR_F32,
                   gemm ? "qdq_gemm" : "qdq_matmul", NULL, false};
    return int_matmul(nd, ea->q, ea->zero, eb->q, eb->zero, tb, &ep);
}

/* Add of two dequantized activations (int8 or uint8, per tensor, known
 * scale and zero point), as a residual connection of the QDQ form has it:
 * one kernel that reads the integers, dequantizes each operand as
 * DequantizeLinear does ((f32(q) - f32(zero)) * scale, in f32: the same
 * text) and adds them in f32, which is ONNX's definition, bit for bit,
 * without the f32 copies of its operands (their DequantizeLinear layers
 * then have no reader and go: passes/fuse.c).  A Relu and a
 * QuantizeLinear after it fuse into its stores (passes/fuse.c): the
 * integer residual add with its requantization in one pass.  Otherwise
 * the float Add of importer/ops_math.c. */
static bool op_add(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *in[2] = {opt(nd, 0), opt(nd, 1)}, *q[2];
    const dq_entry *e[2];
    for (int i = 0; i < 2; i++) {
        e[i] = dequantized(in[i], false, -2);
        if (!e[i] || ox_known(e[i]->q) || !ox_is_literal(e[i]->scale) ||
            (e[i]->zero && !ox_is_literal(e[i]->zero)))
            return float_op(nd);
        q[i] = e[i]->q;
    }
    int R;
    int64_t shape[RT_MAX_DIMS];
    if (!ox_broadcast(nd, q, 2, &R, shape))
        return false;
    ox_value *y = ox_output(nd, 0);
    y->dtype = IR_F32;
    y->ndim = R;
    memcpy(y->shape, shape, sizeof(int64_t) * (size_t)R);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, R);
    ox_printf(&k.body, "] = ");
    for (int i = 0; i < 2; i++) {
        ox_value *z = e[i]->zero;
        bool zero = z && rt_tensor_get_int(z->konst, 0) != 0;
        ox_printf(&k.body, "%s%sf32(", i ? " + " : "", zero ? "(" : "");
        ox_bcast_read(&k.body, ox_operand(&k, q[i], i ? "b" : "a"), q[i], R - q[i]->ndim, shape);
        ox_printf(&k.body, ")");
        if (zero) {
            ox_printf(&k.body, " - f32(");
            ox_bcast_read(&k.body, "", z, 0, shape);
            ox_printf(&k.body, "))");
        }
        ox_printf(&k.body, " * ");
        ox_bcast_read(&k.body, "", e[i]->scale, 0, shape);
    }
    ox_printf(&k.body, "\n");
    bool ok = ox_kernel_finish(&k, "qdq_add", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* Whether the value of ONNX input i of node q is a known per-tensor
 * scale (zero: zero point of int8 or uint8), or absent (zero point only). */
static ox_value *per_tensor_param(ox_node *nd, const Onnx__NodeProto *q, size_t i, bool zero,
                                  bool *ok)
{
    ox_value *v = i < q->n_input ? ox_value_named(nd, q->input[i]) : NULL;
    *ok = zero && (i >= q->n_input || !*q->input[i]);
    if (v)
        *ok = ox_known(v) && numel(v) == 1 && v->ndim <= 1 &&
              (zero ? is_int8(v->dtype) : usable_scale(v));
    return v;
}

/* Whether the codes q of a DequantizeLinear (entry e) are what a
 * QuantizeLinear of scale s and zero point z making codes of dtype zt
 * (codes_dtype) makes of its output: the same dtype, scale and zero point,
 * per tensor, and a scale whose products with
 * the 511 possible differences q - zero are normal floats; then
 * rint(f32((q - zero) * s) / s) is q - zero (the two roundings move it by
 * less than 255 * 2^-23), and the QuantizeLinear gives back q. */
static bool quantize_gives_codes(const dq_entry *e, const ox_value *s, const ox_value *z,
                                 ir_dtype zt)
{
    double sv = at(s, 0);
    return e && e->axis < 0 && e->q->dtype == zt && (float)at(e->scale, 0) == (float)sv &&
           at_int(e->zero, 0) == at_int(z, 0) && sv >= 0x1p-100 && sv <= 0x1p100;
}

/* MaxPool whose one reader is a per-tensor QuantizeLinear (Q), as a QDQ
 * model has a max pool (after a Relu or a DequantizeLinear): since Q is
 * monotone (division by a positive scale, rounding ties to even, adding
 * the zero point and saturating never reverse an order), Q(max(a, b)) =
 * max(Q(a), Q(b)), and the padding (-inf, or the lowest code) never wins a
 * window, which always holds an element of x.  So the node quantizes x as
 * Q does and pools the codes, a quarter of the bytes, and Q's output is
 * the pool's (op_quantize).  A NaN in x is the exception: Q makes it the
 * lowest code, which loses every window, where the float max may keep it.
 * When x is a DequantizeLinear of the codes Q would make
 * (quantize_gives_codes), those codes are pooled as they are.  Otherwise
 * importer/ops_nn.c's MaxPool. */
static bool op_maxpool(ox_node *nd, const void *arg)
{
    (void)arg;
    const Onnx__NodeProto *qn = ox_pool_quantizer(nd);
    ox_value *x = opt(nd, 0);
    bool s_ok, z_ok;
    ox_value *s = qn ? per_tensor_param(nd, qn, 1, false, &s_ok) : NULL;
    ox_value *z = qn ? per_tensor_param(nd, qn, 2, true, &z_ok) : NULL;
    const int64_t *ks;
    int nk = ox_attr_ints(nd, "kernel_shape", &ks);
    bool window = false;   /* (a 1x1 window may be a view of its input: not of a local) */
    for (int d = 0; d < nk; d++)
        window |= ks[d] > 1;
    ir_dtype t;   /* the codes' (an output_dtype without a zero point: int8 too) */
    if (!qn || !x || x->dtype != IR_F32 || !x->id || ox_known(x) || x->ndim < 3 || !s_ok ||
        !z_ok || !window || !codes_dtype(qn, z, &t))
        return float_op(nd);
    ox_value *codes = NULL, quantized = {0};
    const dq_entry *e = dequantized(x, false, -2);
    if (quantize_gives_codes(e, s, z, t) && e->q->id) {
        codes = e->q;
    } else {
        quantized = (ox_value){.onnx = x->onnx, .dtype = t, .ndim = x->ndim};
        memcpy(quantized.shape, x->shape, sizeof quantized.shape);
        if (!quantize_kernel(nd, x, s, z, -1, &quantized, "quantize"))
            return false;
        codes = &quantized;
    }
    ox_value *in0 = nd->in[0];
    nd->in[0] = codes;
    bool ok = float_op(nd);
    nd->in[0] = in0;
    ox_value *y = ox_value_named(nd, nd->n->output[0]);
    if (ok && y)
        y->quantized_for = qn;
    return ok && y;
}

/* ---------------------------------------------------------------- the table */

static const bool requant = true, integer = false, is_gemm = true, is_matmul = false;

/* The quantization ops, and the contractions and the Add that recognize
 * dequantized operands (AS_IS: their kernels widen the integers they read). */
const ox_op ox_ops_quant[] = {
    {"Add", op_add, NULL, AS_IS},
    {"Conv", op_conv, NULL, AS_IS},
    {"ConvInteger", op_qconv, &integer, AS_IS},
    {"DequantizeLinear", op_dequantize, NULL, AS_IS},
    {"DynamicQuantizeLinear", op_dynamic_quantize, NULL, AS_IS},
    {"Gemm", op_matmul, &is_gemm, AS_IS},
    {"MatMul", op_matmul, &is_matmul, AS_IS},
    {"MatMulInteger", op_qmatmul, &integer, AS_IS},
    {"MaxPool", op_maxpool, NULL, AS_IS},
    {"QLinearConv", op_qconv, &requant, AS_IS},
    {"QLinearMatMul", op_qmatmul, &requant, AS_IS},
    {"QuantizeLinear", op_quantize, NULL, AS_IS},
};
const int ox_ops_quant_count = (int)(sizeof ox_ops_quant / sizeof *ox_ops_quant);
