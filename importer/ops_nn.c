/* importer/ops_nn.c — the ops that reduce, normalize and contract:
 * reductions, softmax, normalizations, MatMul, Gemm, Einsum, convolutions
 * and pooling.  The table at the end lists them. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "importer/impl.h"

/* ---------------------------------------------------------------- reductions */

/* The index texts of a reduction of x over red[]: all "i0, i1, ...", the
 * kept "i0, i2" (the reduced dimensions dropped), and the read of x with
 * the reduced indices named r: "x[i0, r1, i2]". */
static void reduce_indices(const ox_value *x, const bool *red, ox_str *all, ox_str *kept,
                           ox_str *xr)
{
    for (int d = 0, o = 0; d < x->ndim; d++) {
        ox_printf(all, "%si%d", d ? ", " : "", d);
        if (!red[d])
            ox_printf(kept, "%si%d", o++ ? ", " : "", d);
    }
    ox_printf(xr, "x[");
    for (int d = 0; d < x->ndim; d++)
        ox_printf(xr, "%s%s%d", d ? ", " : "", red[d] ? "r" : "i", d);
    ox_printf(xr, "]");
}

/* The reduction of x over the axes red[] (keepdims or not), with the
 * reduced indices named r0, r1 ... : `y[...] OP= EXPR(x[...])`, then an
 * optional finishing statement `y = FIN(s)`.  With shift, EXPR reads x - c
 * and the result is FIN(s) + c, c the maximum of the reduced elements (0
 * when it is infinite: a row of -inf sums no terms, one with +inf sums inf),
 * so ReduceLogSumExp's exp does not overflow where the result is finite
 * (log(e^1000 + e^1000) is 1000.69, not inf), as ONNX Runtime and numpy
 * compute it. */
static bool reduce_kernel(ox_node *nd, const char *base, const bool *red, bool keep,
                          const char *op, const char *tmpl, const char *fin, ir_dtype out_dt,
                          bool shift)
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
    const char *K = kept.s ? kept.s : "";
    ox_str shifted = {0};
    if (shift) {
        ox_printf(&k.body, "    m[%s] max= %s\n", K, read.s);
        ox_printf(&k.body, "    c[%s] = abs(m[%s]) < inf ? m[%s] : 0.0\n", K, K, K);
        ox_printf(&shifted, "(%s - c[%s])", read.s, K);
    }
    if (fin)
        ox_printf(&k.body, "    s[%s] %s ", kept.s ? kept.s : "", op);
    else
        ox_printf(&k.body, "    y[%s] %s ", left.s ? left.s : "", op);
    ox_subst(&k.body, tmpl, shift ? shifted.s : read.s);
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
        if (shift)
            ox_printf(&k.body, " + c[%s]", K);
        ox_printf(&k.body, "\n");
        free(sread.s);
    }
    free(shifted.s);
    free(read.s);
    free(left.s);
    free(kept.s);
    bool ok = ox_kernel_finish(&k, base, y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* A reduction: its kernel's name, reduction op, template of the reduced
 * value ('$' is x's element), finishing template ('#' is the count), and
 * whether it takes floats only; the axes are an input from opset
 * axes_input_from on. */
typedef struct reduce_spec {
    const char *base, *op, *tmpl, *fin;
    bool float_only;
    int axes_input_from;
    bool shift;              /* reduce_kernel's: read x less its maximum (LogSumExp) */
} reduce_spec;

static bool reduce_op(ox_node *nd, const void *arg)
{
    const reduce_spec *r = arg;
    const char *base = r->base, *op = r->op, *tmpl = r->tmpl, *fin = r->fin;
    bool float_only = r->float_only;
    int axes_input_from = r->axes_input_from;
    ox_value *x = ox_input(nd, 0);
    if (!x || (float_only && !ox_need_float(nd, x)))
        return false;
    int64_t axes[RT_MAX_DIMS + 1];
    int n = ox_axes_of(nd, 1, nd->opset < axes_input_from, axes);
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
            return ox_copy(nd);
        for (int d = 0; d < x->ndim; d++)
            red[d] = true;
    }
    return reduce_kernel(nd, base, red, ox_attr_int(nd, "keepdims", 1) != 0, op, tmpl, fin,
                         x->dtype, r->shift);
}


typedef struct global_spec {
    const char *base, *op, *fin;
} global_spec;

static bool global_pool(ox_node *nd, const void *arg)
{
    const char *base = ((const global_spec *)arg)->base, *op = ((const global_spec *)arg)->op,
               *fin = ((const global_spec *)arg)->fin;
    ox_value *x = ox_input(nd, 0);
    if (!x || (fin && !ox_need_float(nd, x)))
        return false;
    if (x->ndim < 3)
        return ox_fail(nd, "the input must have a batch, a channel and spatial dimensions");
    bool red[RT_MAX_DIMS] = {0};
    for (int d = 2; d < x->ndim; d++)
        red[d] = true;
    return reduce_kernel(nd, base, red, true, op, "$", fin, x->dtype, false);
}

static bool op_argmaxmin(ox_node *nd, const void *arg)
{
    bool is_max = *(const bool *)arg;
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
    /* NaN is the largest and the smallest (numpy's and PyTorch's rule, and
     * TopK's here): the first (or last) NaN of a row that has one; else
     * the first (or last) element equal to the maximum, which max= takes
     * ignoring NaN (a row of NaN only had no such element: y was the
     * init, 2^63 - 1 or -1, an index out of range) */
    ox_printf(&k.body, "    n[%s] max= %s != %s ? 1 : 0\n", K, read.s, read.s);
    ox_printf(&k.body, "    m[%s] %s %s\n", K, is_max ? "max=" : "min=", read.s);
    ox_printf(&k.body, "    y[%s] %s n[%s] > 0 && %s != %s || n[%s] == 0 && %s == m[%s] ? r%d : %s\n",
              L, last ? "max=" : "min=", K, read.s, read.s, K, read.s, K, axis,
              last ? "-1" : "9223372036854775807");
    free(read.s);
    free(left.s);
    free(kept.s);
    bool ok = ox_kernel_finish(&k, is_max ? "argmax" : "argmin", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* Softmax and LogSoftmax: over one axis from opset 13, before it over the
 * input coerced to 2-D at axis (every axis from axis on). */
static bool softmax_op(ox_node *nd, const void *arg)
{
    bool logsm = *(const bool *)arg;
    ox_value *x = ox_input(nd, 0);
    if (x && x->causal_of) {   /* the Where before it masks the future (ops_math.c) */
        ox_value *y = ox_output(nd, 0);
        ox_same_shape(y, x);
        return ox_call_nn(nd, y, "causal_softmax", x->causal_of->id, NULL, NULL, 0);
    }
    int axis;
    if (!x || !ox_need_float(nd, x) ||
        !ox_axis(nd, ox_attr_int(nd, "axis", nd->opset < 13 ? 1 : -1), x->ndim, &axis))
        return false;
    bool red[RT_MAX_DIMS] = {0};
    for (int d = axis; d < (nd->opset < 13 ? x->ndim : axis + 1); d++)
        red[d] = true;
    if (!logsm && nd->opset >= 13 && axis == x->ndim - 1 && x->ndim >= 2 && x->ndim <= 4 &&
        x->dtype == IR_F32 && x->id) {
        ox_value *y = ox_output(nd, 0);
        ox_same_shape(y, x);
        return ox_call_nn(nd, y, "softmax", x->id, NULL, NULL, 0);
    }
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_str xr = {0}, kept = {0}, all = {0};
    reduce_indices(x, red, &all, &kept, &xr);
    const char *K = kept.s ? kept.s : "";
    ox_printf(&k.body, "    m[%s] max= %s\n", K, xr.s);
    if (!logsm && axis == x->ndim - 1) {
        /* over the innermost axis (a rank-5 attention's, MaxViT's): the
         * exponentials once, in a temporary that a row kernel keeps to a
         * row (passes/schedule/auto.c), as lib/nn.te's softmax */
        ox_printf(&k.body, "    e[%s] = exp(x[%s] - m[%s])\n", all.s, all.s, K);
        ox_printf(&k.body, "    s[%s] += e%s\n", K, xr.s + 1);
        ox_printf(&k.body, "    y[%s] = e[%s] * (1 / s[%s])\n", all.s, all.s, K);
    } else {
        ox_printf(&k.body, "    s[%s] += exp(%s - m[%s])\n", K, xr.s, K);
        if (logsm)
            ox_printf(&k.body, "    y[%s] = x[%s] - m[%s] - log(s[%s])\n", all.s, all.s, K, K);
        else
            ox_printf(&k.body, "    y[%s] = exp(x[%s] - m[%s]) * (1 / s[%s])\n", all.s, all.s, K, K);
    }
    free(xr.s);
    free(kept.s);
    free(all.s);
    bool ok = ox_kernel_finish(&k, logsm ? "log_softmax" : "softmax", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool op_cumsum(ox_node *nd, const void *arg)
{
    ox_value *x = ox_input(nd, 0);
    int64_t ax;
    int axis;
    if (!x || ox_const_ints(nd, 1, &ax, 1) != 1 || !ox_axis(nd, ax, x->ndim, &axis))
        return false;
    bool excl = ox_attr_int(nd, "exclusive", 0), rev = ox_attr_int(nd, "reverse", 0);
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
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

static bool op_batchnorm(ox_node *nd, const void *arg)
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
    if (!ox_need_float(nd, x))
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
    ox_same_shape(y, x);
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

/* A normalization over more than this many elements sums its mean and
 * variance in f64 (or in lanes along x's rows: norm_lanes): f32 sums of
 * 200k elements (a GroupNorm(1) over a 64 x 56 x 56 map, as PoolFormer's)
 * were off by 2e-5 of the output's range, ONNX Runtime's by 1e-6.  Up to
 * it (layer norms over channels) the kernels stay in f32, as the row
 * kernels' schedules know them. */
#define NORM_WIDE_COUNT 16384

/* The mean and 1 / standard deviation of a normalization over count
 * elements read as xr (at the kept indices K), written into body as
 * statements of sum and sq; *mean and *inv are the expressions the output
 * reads them by (in x's compute dtype; with count > NORM_WIDE_COUNT,
 * sums of f64 cast back).  Both strings are the caller's to free. */
static void norm_moments(ox_str *body, const ox_value *x, const char *K, const char *xr,
                         const char *where, int64_t count, double eps, const char *at,
                         char **mean, char **inv)
{
    ir_dtype cd = ox_compute_dtype(x->dtype);
    bool wide = count > NORM_WIDE_COUNT && cd != IR_F64;
    const char *to = wide ? ir_dtype_name(cd) : "";
    ox_str m = {0}, v = {0};
    if (wide)
        ox_printf(&m, "%s(sum[%s] / %lld)", to, at, (long long)count);
    else
        ox_printf(&m, "sum[%s] / %lld", at, (long long)count);
    if (wide) {
        ox_printf(body, "    sum[%s] += f64(%s)%s\n", K, xr, where);
        ox_printf(body, "    sq[%s] += f64((%s - %s(sum[%s] / %lld)) * (%s - %s(sum[%s] / %lld)))%s\n",
                  K, xr, to, K, (long long)count, xr, to, K, (long long)count, where);
    } else {
        ox_printf(body, "    sum[%s] += %s%s\n", K, xr, where);
        ox_printf(body, "    sq[%s] += (%s - sum[%s] / %lld) * (%s - sum[%s] / %lld)%s\n", K, xr, K,
                  (long long)count, xr, K, (long long)count, where);
    }
    ox_printf(&v, "%s(1 / sqrt(sq[%s] / %lld + ", to, at, (long long)count);
    ox_float(&v, eps);
    ox_printf(&v, "))");
    *mean = m.s;
    *inv = v.s;
}

/* Lanes of partial sums of a normalization along long rows. */
#define NORM_LANES 64

/* The moments of a normalization over count elements, the axes red[]
 * whose last, a, is x's innermost and a multiple of NORM_LANES long, as
 * NORM_LANES partial sums (lane l sums the elements l, l + NORM_LANES, ...
 * of each row along a; then the lanes are added): a sum into
 * one number is a serial chain of adds (a loop of 200,704 took 290 us at
 * f64, 490 at f32), the lanes are a vector loop (40 us), and each sums a
 * 64th of the elements, as accurate as the f64 sums.  Statements into
 * body; *mean and *inv as norm_moments'. */
static void norm_lanes(ox_str *body, const ox_value *x, const bool *red, const char *K, int a,
                       int64_t count, double eps, char **mean, char **inv)
{
    ox_str xl = {0}, pk = {0}, m = {0}, v = {0};   /* x at lane l of step r<a>; [K, l] */
    ox_printf(&xl, "x[");
    for (int d = 0; d < x->ndim; d++)
        if (d == a)
            ox_printf(&xl, "%sr%d * %d + l", d ? ", " : "", d, NORM_LANES);
        else
            ox_printf(&xl, "%s%s%d", d ? ", " : "", red[d] ? "r" : "i", d);
    ox_printf(&xl, "]");
    ox_printf(&pk, "%s%sl", K, *K ? ", " : "");
    char where[96];
    snprintf(where, sizeof where, " where l in 0..%d, r%d in 0..%lld", NORM_LANES, a,
             (long long)(x->shape[a] / NORM_LANES));
    ox_printf(&m, "sum[%s] / %lld", K, (long long)count);
    ox_printf(body, "    part[%s] += %s%s\n", pk.s, xl.s, where);
    ox_printf(body, "    sum[%s] += part[%s]\n", K, pk.s);
    ox_printf(body, "    sqp[%s] += (%s - %s) * (%s - %s)%s\n", pk.s, xl.s, m.s, xl.s, m.s, where);
    ox_printf(body, "    sq[%s] += sqp[%s]\n", K, pk.s);
    ox_printf(&v, "(1 / sqrt(sq[%s] / %lld + ", K, (long long)count);
    ox_float(&v, eps);
    ox_printf(&v, "))");
    free(xl.s);
    free(pk.s);
    *mean = m.s;
    *inv = v.s;
}

/* Normalizes x over the axes red[] (mean and biased variance), then
 * scales and shifts by scale and bias read with the given indices. */
static bool normalize(ox_node *nd, const char *base, const bool *red, double eps,
                      ox_value *scale, ox_value *bias, bool per_channel)
{
    ox_value *x = nd->in[0];
    ox_value *sb[2] = {scale, bias};
    for (int i = 0; i < 2 && sb[i]; i++) {   /* per channel, or broadcast to x */
        bool fits = per_channel ? sb[i]->ndim == 1 && x->ndim >= 2 && sb[i]->shape[0] == x->shape[1]
                                : sb[i]->ndim <= x->ndim;
        for (int d = 0; !per_channel && fits && d < sb[i]->ndim; d++) {
            int64_t e = sb[i]->shape[d], xd = x->shape[x->ndim - sb[i]->ndim + d];
            fits = e == xd || e == 1;
        }
        if (!fits)
            return ox_fail(nd, "the %s '%s' does not fit the input's shape", i ? "bias" : "scale",
                           sb[i]->onnx);
    }
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
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
    reduce_indices(x, red, &all, &kept, &xr);
    const char *K = kept.s ? kept.s : "";
    int last = x->ndim - 1;
    char *mean, *inv;
    if (count > NORM_WIDE_COUNT && last >= 0 && red[last] && x->shape[last] % NORM_LANES == 0)
        norm_lanes(&k.body, x, red, K, last, count, eps, &mean, &inv);
    else
        norm_moments(&k.body, x, K, xr.s, "", count, eps, K, &mean, &inv);
    ox_printf(&k.body, "    y[%s] = (x[%s] - %s) * %s * ", all.s, all.s, mean, inv);
    free(mean);
    free(inv);
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
    ox_same_shape(y, x);
    int64_t count = 1;
    for (int d = 0; d < x->ndim; d++)
        if (red[d])
            count *= x->shape[d], y->shape[d] = 1;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_str kept = {0}, all = {0}, xr = {0};
    reduce_indices(x, red, &all, &kept, &xr);
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
    ox_same_shape(y, running);
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

static bool op_instancenorm(ox_node *nd, const void *arg)
{
    ox_value *x = ox_input(nd, 0), *s = ox_input(nd, 1), *b = ox_input(nd, 2);
    if (!x || !s || !b || !ox_need_float(nd, x))
        return false;
    if (x->ndim < 3 || s->ndim != 1 || b->ndim != 1 || s->shape[0] != x->shape[1] ||
        b->shape[0] != x->shape[1])
        return ox_fail(nd, "expects x of rank >= 3 and a scale and a bias of its channels");
    bool red[RT_MAX_DIMS] = {0};
    for (int d = 2; d < x->ndim; d++)
        red[d] = true;
    return normalize(nd, "instancenorm", red, ox_attr_float(nd, "epsilon", 1e-5), s, b, true);
}

/* GroupNormalization (opset 18; 21): x's channels in num_groups groups of
 * Cg, each normalized over its channels and positions, then scaled and
 * shifted per group (opset 18: scale and bias of num_groups entries) or
 * per channel (21: of C). */
static bool op_groupnorm(ox_node *nd, const void *arg)
{
    ox_value *x = ox_input(nd, 0), *s = ox_input(nd, 1), *b = ox_input(nd, 2);
    if (!x || !s || !b || !ox_need_float(nd, x) || !ox_same_dtypes(nd, 0, 2))
        return false;
    if (nd->opset < 18)
        return ox_fail(nd, "GroupNormalization is an op of opset 18 on (the model imports "
                       "opset %d)", nd->opset);
    int64_t G = ox_attr_int(nd, "num_groups", 0), C = x->ndim >= 2 ? x->shape[1] : 0;
    int64_t per = nd->opset >= 21 ? C : G;   /* scale and bias entries */
    if (x->ndim < 3 || G < 1 || C % G)
        return ox_fail(nd, "expects x of rank >= 3 whose %lld channels num_groups %lld divides",
                       (long long)C, (long long)G);
    if (s->ndim != 1 || b->ndim != 1 || s->shape[0] != per || b->shape[0] != per)
        return ox_fail(nd, "the scale and the bias must have %lld entries (one per %s at opset "
                       "%d)", (long long)per, nd->opset >= 21 ? "channel" : "group", nd->opset);
    int64_t Cg = C / G, count = Cg;
    for (int d = 2; d < x->ndim; d++)
        count *= x->shape[d];
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    const char *sr = ox_operand(&k, s, "weight"), *br = ox_operand(&k, b, "bias");
    ox_str rest = {0}, xg = {0}, all = {0};   /* ", i2, i3"; x of group g; x at i0, i1 .. */
    for (int d = 2; d < x->ndim; d++)
        ox_printf(&rest, ", i%d", d);
    ox_printf(&xg, "x[i0, g * %lld + c%s]", (long long)Cg, rest.s);
    ox_printf(&all, "i0, i1%s", rest.s);
    char where[96], at[32];
    snprintf(where, sizeof where, " where g in 0..%lld, c in 0..%lld", (long long)G, (long long)Cg);
    snprintf(at, sizeof at, "i0, i1 / %lld", (long long)Cg);
    char *mean, *inv;
    norm_moments(&k.body, x, "i0, g", xg.s, where, count, ox_attr_float(nd, "epsilon", 1e-5), at,
                 &mean, &inv);
    const char *S = nd->opset >= 21 ? "i1" : at + 4;   /* the channel, or its group */
    ox_printf(&k.body, "    y[%s] = (x[%s] - %s) * %s * %s[%s] + %s[%s]\n", all.s, all.s, mean, inv,
              sr, S, br, S);
    free(mean);
    free(inv);
    free(rest.s);
    free(xg.s);
    free(all.s);
    bool ok = ox_kernel_finish(&k, "groupnorm", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

static bool op_layernorm(ox_node *nd, const void *arg)
{
    ox_value *x = ox_input(nd, 0), *s = ox_input(nd, 1);
    ox_value *b = nd->nin > 2 ? nd->in[2] : NULL;
    int axis;
    if (!x || !s || !ox_need_float(nd, x) || !ox_same_dtypes(nd, 0, 2) ||
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

/* y = x * s, as layer "<layer>.scale" (s: a power of two, ox_value.scaled_of). */
static bool scale_layer(ox_node *nd, ox_value *x, double s, ox_value *y)
{
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, y->ndim);
    ox_printf(&k.body, "] = x[");
    ox_indices(&k.body, "i", 0, y->ndim);
    ox_printf(&k.body, "] * ");
    ox_float(&k.body, s);
    ox_printf(&k.body, "\n");
    bool ok = ox_kernel_finish(&k, "scale", y, "scale");
    ox_kernel_free(&k);
    return ok;
}

static bool matmul_of(ox_node *nd, ox_value *a, ox_value *b, ox_value *y);

/* MatMul; of an operand scaled by a power of two (a Div or Mul that only
 * this MatMul reads: ViT's query / sqrt(64)), the product of the operand
 * itself, then scaled as a layer "<layer>.scale" that the fuse pass
 * computes in the product's write-back, as GPT-2's export has it (its
 * scores / 8 after the MatMul): the same numbers (a power of two commutes
 * with the rounding of products and sums), without a pass over the
 * operand, which is a strided view of the fused q, k, v. */
static bool op_matmul(ox_node *nd, const void *arg)
{
    ox_value *a = ox_input(nd, 0), *b = ox_input(nd, 1);
    if (!a || !b)
        return false;
    if (!ox_same_dtypes(nd, 0, 1))
        return false;
    if (!a->scaled_of && !b->scaled_of)
        return matmul_of(nd, a, b, ox_output(nd, 0));
    double s = (a->scaled_of ? a->scale : 1) * (b->scaled_of ? b->scale : 1);
    a = a->scaled_of ? (ox_value *)a->scaled_of : a;
    b = b->scaled_of ? (ox_value *)b->scaled_of : b;
    ox_value *y = ox_output(nd, 0);
    ox_str onnx = {0};   /* as long as y's name is */
    ox_printf(&onnx, "%s_unscaled", y->onnx);
    ox_value t = *y;
    t.onnx = onnx.s;
    t.graph_output = false;
    bool ok = matmul_of(nd, a, b, &t);
    if (ok) {
        y->dtype = t.dtype;
        ox_same_shape(y, &t);
        ok = scale_layer(nd, &t, s, y);
    }
    free(onnx.s);
    return ok;
}

/* The product y of a and b (MatMul's semantics). */
static bool matmul_of(ox_node *nd, ox_value *a, ox_value *b, ox_value *y)
{
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
    if (!ox_broadcast(nd, both, 2, &R, bs))
        return false;
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

static bool op_gemm(ox_node *nd, const void *arg)
{
    ox_value *a = ox_input(nd, 0), *b = ox_input(nd, 1);
    ox_value *c = nd->nin > 2 ? nd->in[2] : NULL;
    if (!a || !b || !ox_need_float(nd, a) || !ox_same_dtypes(nd, 0, 2))
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
        if (!ox_broadcast(nd, both, 2, &R, s) || R != 2 || s[0] != M || s[1] != N)
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
    /* at most one '...' a term (the output one too), and no other '.': the
     * letters written in their place must not show in later messages */
    for (size_t at = 0, term = 1, ellipses = 0; eq[at]; at++) {
        if (eq[at] == ',' || eq + at == arrow)
            term++, ellipses = 0;
        if (eq[at] != '.')
            continue;
        if (strncmp(eq + at, "...", 3) != 0)
            return ox_fail(nd, "the equation '%s' has a '.' that is not part of a '...'", eq);
        if (++ellipses > 1 && arrow && eq + at > arrow)
            return ox_fail(nd, "the output of '%s' has '...' twice", eq);
        if (ellipses > 1)
            return ox_fail(nd, "term %zu of '%s' has '...' twice", term, eq);
        at += 2;
    }
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

#define RT_MAX_DIMS_TEXT "8"   /* RT_MAX_DIMS as text */
_Static_assert(RT_MAX_DIMS == 8, "RT_MAX_DIMS_TEXT is RT_MAX_DIMS");

static bool op_einsum(ox_node *nd, const void *arg)
{
    const char *given = ox_attr_str(nd, "equation", NULL);
    char eq[256];
    if (!ox_same_dtypes(nd, 0, nd->nin - 1))
        return false;
    if (!given)
        return ox_fail(nd, "the equation attribute is missing");
    if (strstr(given, "...") && !expand_ellipsis(nd, given, eq, sizeof eq))
        return false;
    if (!strstr(given, "..."))
        snprintf(eq, sizeof eq, "%s", given);
    char lhs[128], rhs[64] = "";
    const char *arrow = strstr(eq, "->");
    for (const char *p = eq; *p; p++)   /* letters, spaces, commas and one arrow */
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == ' ' || *p == ',' ||
              (arrow && (p == arrow || p == arrow + 1))))
            return ox_fail(nd, "the equation has a character other than letters, spaces, commas "
                           "and '->' (byte 0x%02x at %d)", (unsigned char)*p, (int)(p - eq));
    const Onnx__AttributeProto *ea = ox_attr(nd, "equation");
    const void *nul = ea->s.len ? memchr(ea->s.data, 0, ea->s.len) : NULL;
    if (nul)   /* the text ends there: the rest would be lost */
        return ox_fail(nd, "the equation has a character other than letters, spaces, commas "
                       "and '->' (byte 0x00 at %d)", (int)((const uint8_t *)nul - ea->s.data));
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
    bool seen[128] = {false};
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
            int64_t *sz = &size[(unsigned char)*p & 127];
            if (*sz && *sz != v->shape[d]) {
                ox_kernel_free(&k);
                free(expr.s);
                if (!strchr(given, *p))   /* a letter expand_ellipsis wrote */
                    return ox_fail(nd, "'...' stands for sizes %lld and %lld in one dimension "
                                   "(tec does not broadcast a '...' dimension of size 1)",
                                   (long long)*sz, (long long)v->shape[d]);
                return ox_fail(nd, "letter '%c' stands for sizes %lld and %lld", *p,
                               (long long)*sz, (long long)v->shape[d]);
            }
            *sz = v->shape[d];
            seen[(unsigned char)*p & 127] = true;
            ox_printf(&expr, "%se_%c", d ? ", " : "", *p);
            d++;
        }
        if (d != v->ndim) {
            ox_kernel_free(&k);
            free(expr.s);
            return ox_fail(nd, "term '%s' has %d letters for the %d dimensions of '%s'", term, d,
                           v->ndim, v->onnx);
        }
        ox_printf(&expr, "]");
    }
    if (i != nd->nin) {
        ox_kernel_free(&k);
        free(expr.s);
        return ox_fail(nd, "the equation has %d terms for %d inputs", i, nd->nin);
    }
    bool out_letter[128] = {0};
    int nout = 0;
    for (const char *p = rhs; *p; p++) {
        if (*p == ' ')
            continue;
        /* (a letter twice would index the result twice: ONNX and numpy
         * refuse it; more letters than dimensions would overrun y's shape) */
        const char *why = !seen[(unsigned char)*p & 127] ? "is in no input's term"
                          : out_letter[(unsigned char)*p & 127] ? "is in the output twice"
                          : ++nout > RT_MAX_DIMS ? "makes the result more than " RT_MAX_DIMS_TEXT "-D"
                          : NULL;
        if (why) {
            ox_kernel_free(&k);
            free(expr.s);
            return ox_fail(nd, "output letter '%c' %s", *p, why);
        }
        out_letter[(unsigned char)*p & 127] = true;
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

/* The spatial attributes of Conv and the pools (impl.h). */
typedef ox_window window;

bool ox_window_of(ox_node *nd, const ox_value *x, const int64_t *kernel, bool ceil_mode,
                  ox_window *w)
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
        return ox_fail(nd, "pads has %d entries for %d spatial dimensions (it needs %d)", n, w->nsp,
                       2 * w->nsp);
    for (int d = 0; d < n; d++)
        *(d < w->nsp ? &w->pb[d] : &w->pe[d - w->nsp]) = a[d];
    const char *ap = ox_attr_str(nd, "auto_pad", "NOTSET");
    for (int d = 0; d < w->nsp; d++) {
        if (w->k[d] < 1 || w->s[d] < 1 || w->dil[d] < 1 || w->pb[d] < 0 || w->pe[d] < 0)
            return ox_fail(nd, "kernel, strides and dilations must be >= 1 and pads >= 0");
        if (w->k[d] > OX_ATTR_MAX || w->s[d] > OX_ATTR_MAX || w->dil[d] > OX_ATTR_MAX ||
            w->pb[d] > OX_ATTR_MAX || w->pe[d] > OX_ATTR_MAX)
            return ox_fail(nd, "kernel, strides, dilations and pads must be at most 2^31");
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

bool ox_pad_folds(ox_node *pad, const Onnx__NodeProto *reader, const ox_value *x,
                  const int64_t *pads, double value)
{
    int r = x->ndim, nsp = r - 2;
    if (x->dtype != IR_F32 || r < 3 || pads[0] || pads[1] || pads[r] || pads[r + 1])
        return false;
    ox_node q = {.x = pad->x, .n = reader, .opset = pad->opset};
    const char *ap = ox_attr_str(&q, "auto_pad", "NOTSET");
    bool valid = strcmp(ap, "VALID") == 0;
    if (!valid && strcmp(ap, "NOTSET") != 0)
        return false;   /* SAME_*: pads from the input's size */
    const int64_t *own;
    int n = valid ? 0 : ox_attr_ints(&q, "pads", &own);
    if (n != 0 && n != 2 * nsp)
        return false;   /* (the reader's error) */
    int64_t pb[RT_MAX_DIMS], pe[RT_MAX_DIMS];
    bool own_none = true, even = true;   /* even: one pad on every side */
    for (int d = 0; d < nsp; d++) {
        int64_t ob = n ? own[d] : 0, oe = n ? own[nsp + d] : 0;
        if (ob < 0 || oe < 0 || ob > OX_ATTR_MAX || oe > OX_ATTR_MAX)
            return false;
        own_none = own_none && !ob && !oe;
        pb[d] = pads[2 + d] + ob;
        pe[d] = pads[r + 2 + d] + oe;
        even = even && pb[d] == pb[0] && pe[d] == pb[0];
    }
    if (strcmp(reader->op_type, "AveragePool") == 0)
        /* its count then includes the Pad's zeros as count_include_pad
         * does: exact unless the pool's own padding is not to count */
        return value == 0 && (own_none || ox_attr_int(&q, "count_include_pad", 0) != 0);
    if (strcmp(reader->op_type, "Conv") == 0)
        /* uneven pads would turn nn.te's conv2d into a generic kernel */
        return value == 0 && even;
    /* MaxPool: as nn.te's maxpool2d, whose padding reads -inf (pool()'s
     * conditions for it); no Indices, which count positions in the Pad's
     * output; no ceil_mode, whose last window maxpool2d drops when it
     * starts in the padding (its output extent from x's), where it may
     * start in the Pad's (pool()'s y from the padded x) */
    const int64_t *ks, *st, *dl;
    int nk = ox_attr_ints(&q, "kernel_shape", &ks), ns = ox_attr_ints(&q, "strides", &st),
        ndl = ox_attr_ints(&q, "dilations", &dl);
    bool indices = reader->n_output > 1 && *reader->output[1];
    return value == -INFINITY && nsp == 2 && !indices && !ox_attr_int(&q, "ceil_mode", 0) &&
           even && nk == 2 && ks[0] == ks[1] &&
           2 * pb[0] <= ks[0] && (ns == 0 || (ns == 2 && st[0] == st[1])) &&
           (ndl == 0 || (ndl == 2 && dl[0] == 1 && dl[1] == 1));
}

/* A Conv's or pool's input x that is a Pad made no layer for (ox_pad_folds):
 * the Pad's input, its pads added to w's (which are x's own, over the
 * padded x, so that the output's extents stay x's). */
static ox_value *unpadded(ox_value *x, window *w)
{
    if (!x->pad_of)
        return x;
    for (int d = 0; d < w->nsp; d++) {
        w->pb[d] += x->pad_b[2 + d];
        w->pe[d] += x->pad_e[2 + d];
    }
    return (ox_value *)x->pad_of;
}

/* The input position of output index o{d} and window index r{d}.  A
 * negative leading pad is an offset into x (a part of a partitioned
 * convolution, which starts inside x). */
static void window_index(ox_str *b, const window *w, int d)
{
    ox_printf(b, "o%d", d);
    if (w->s[d] != 1)
        ox_printf(b, " * %lld", (long long)w->s[d]);
    ox_printf(b, " + r%d", d);
    if (w->dil[d] != 1)
        ox_printf(b, " * %lld", (long long)w->dil[d]);
    if (w->pb[d])
        ox_printf(b, " %c %lld", w->pb[d] > 0 ? '-' : '+', (long long)llabs(w->pb[d]));
}

/* y = x + bias along axis 1, as layer "<layer>.bias" (x: a computed
 * tensor, bias: a constant of this node). */
static bool bias_layer(ox_node *nd, ox_value *x, ox_value *bias, ox_value *y)
{
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_operand(&k, bias, "bias");
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, y->ndim);
    ox_printf(&k.body, "] = x[");
    ox_indices(&k.body, "i", 0, y->ndim);
    ox_printf(&k.body, "] + bias[i1]\n");
    bool ok = ox_kernel_finish(&k, "bias", y, "bias");
    ox_kernel_free(&k);
    return ok;
}

static bool conv_of(ox_node *nd, ox_value *x, ox_value *wv, ox_value *bias, const window *wp,
                    ox_value *y, int64_t g);
static bool conv_kernel(ox_node *nd, ox_value *x, ox_value *wv, ox_value *bias,
                        const window *wp, ox_value *y, int64_t g, const char *suffix);

/* A convolution window without the taps that read only padding: a tap r of
 * a spatial axis reads x at o * stride + r * dilation - pad_begin for the
 * output positions o, and where none of those lies inside x (a dilated
 * convolution on a map smaller than its reach: DeepLabV3's atrous 3x3
 * convolutions at rates 24 and 36 on a 14x14 map read x at their centre
 * tap only), it adds zeros.  The taps left are the live ones from the first
 * to the last, with the pads less the taps dropped before and after them,
 * so the output's extents stay; one tap left needs no dilation.  *trimmed
 * is w so changed, and first[d] the first live tap of axis d; false when
 * nothing is dropped (or every tap reads padding only, or the pads would
 * turn negative). */
static bool live_taps(const ox_value *x, const window *w, window *trimmed, int64_t *first)
{
    *trimmed = *w;
    bool any = false;
    for (int d = 0; d < w->nsp; d++) {
        int64_t in = x->shape[2 + d], lo = -1, hi = -1;
        for (int64_t r = 0; r < w->k[d]; r++) {
            bool live = false;
            for (int64_t o = 0; o < w->out[d] && !live; o++) {
                int64_t at = o * w->s[d] + r * w->dil[d] - w->pb[d];
                live = at >= 0 && at < in;
            }
            if (live && lo < 0)
                lo = r;
            if (live)
                hi = r + 1;
        }
        if (lo < 0)
            return false;
        trimmed->k[d] = hi - lo;
        trimmed->pb[d] = w->pb[d] - lo * w->dil[d];
        trimmed->pe[d] = w->pe[d] - (w->k[d] - hi) * w->dil[d];
        if (trimmed->pb[d] < 0 || trimmed->pe[d] < 0)
            return false;
        if (trimmed->k[d] == 1)
            trimmed->dil[d] = 1;
        first[d] = lo;
        any = any || trimmed->k[d] != w->k[d];
    }
    return any;
}

/* The weight W[F, Cg, k...] cut to the window t's taps from first[] on. */
static rt_tensor *cut_weight(ox_node *nd, const rt_tensor *W, const window *t,
                             const int64_t *first)
{
    int64_t shape[RT_MAX_DIMS] = {W->shape[0], W->shape[1]};
    for (int d = 0; d < t->nsp; d++)
        shape[2 + d] = t->k[d];
    char err[256];
    rt_tensor *c = rt_tensor_new(W->dtype, W->ndim, shape, err, sizeof err);
    if (!c) {
        ox_fail(nd, "%s", err);
        return NULL;
    }
    size_t esize = W->nbytes / (size_t)rt_tensor_numel(W);
    int64_t n = rt_tensor_numel(c);
    for (int64_t i = 0; i < n; i++) {   /* element i of c: its index, then W's offset */
        int64_t rest = i, off = 0, stride = 1;
        for (int d = c->ndim - 1; d >= 0; d--) {
            int64_t at = rest % c->shape[d] + (d >= 2 ? first[d - 2] : 0);
            rest /= c->shape[d];
            off += at * stride;
            stride *= W->shape[d];
        }
        memcpy((char *)c->data + (size_t)i * esize, (const char *)W->data + (size_t)off * esize,
               esize);
    }
    return c;
}

/* A partitioned convolution (a dilated convolution on a map smaller than
 * its reach reads padding with most of its taps, DeepLabV3's at rate 12 on
 * 14x14 in 82% of its multiply-adds: its taps other than the centre read x
 * only from output positions near the map's borders).  Along each
 * spatial axis the live taps fall into classes, consecutive taps that
 * read inside x at the same output positions (the taps that do so at
 * every position, and each tap near the border alone).  Each class of each axis, one class per axis, is a part: a
 * convolution of the class's taps (cut from the weight) over the output
 * positions where they read inside x, which reads no padding; a last
 * kernel sums the parts where they overlap (and adds the bias).  Taps that
 * never read inside x are in no part.  Each tap's weights are read by one
 * part only, where cutting the output map into regions, each with its
 * live taps, re-reads a tap's weights in every region it is live in (the
 * ASPP conv: 3.1 ms as nine regions, 2.1 ms as nine parts, one thread). */

/* One class of an axis' taps: taps [r, r + k) read inside x at the output
 * positions [lo, hi), and outside it at the others. */
typedef struct tap_class {
    int64_t r, k, lo, hi;
} tap_class;

/* Most parts of a partitioned convolution: the kernel that sums them has
 * one operand each (OX_MAX_PARAMS in all). */
#define MAX_PARTS 32

/* ceil(a / b) for b > 0. */
static int64_t ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -(-a / b);
}

/* Axis d's tap classes (first to last tap), into c[MAX_PARTS]: their
 * count, or -1 when there are more. */
static int tap_classes(const ox_value *x, const window *w, int d, tap_class *c)
{
    int n = 0;
    for (int64_t r = 0; r < w->k[d]; r++) {
        /* output o reads x at o * s + at, inside it for lo <= o < hi */
        int64_t at = r * w->dil[d] - w->pb[d];
        int64_t lo = ceil_div(-at, w->s[d]), hi = ceil_div(x->shape[2 + d] - at, w->s[d]);
        lo = lo < 0 ? 0 : lo;
        hi = hi > w->out[d] ? w->out[d] : hi;
        if (lo >= hi)
            continue;
        if (n && c[n - 1].lo == lo && c[n - 1].hi == hi && c[n - 1].r + c[n - 1].k == r)
            c[n - 1].k++;
        else if (n == MAX_PARTS)
            return -1;
        else
            c[n++] = (tap_class){r, 1, lo, hi};
    }
    return n;
}

/* Whether to partition the convolution of x over w, and then its classes
 * cls[d][0 .. ncls[d]) per axis: when it is dilated, some class reads
 * inside x at only part of the output, the parts are at most MAX_PARTS,
 * and they do at most 60% of the multiply-adds of the convolution without
 * its dead taps (the parts' kernels and the sum cost more than a small
 * saving: DeepLabV3's dilation-2 depthwise 5x5 convolutions on 14x14 would
 * keep 69%; its rate-12 ASPP 3x3 on 28x28, a 224x224 input's, keeps 51%
 * and takes 63 ms as parts, 118-183 ms whole, ORT 46 ms, one thread).  An
 * undilated convolution reads that much padding only on a map not much
 * larger than its kernel, where its parts would be a few output positions
 * each. */
static bool partition(const ox_value *x, const window *w, tap_class (*cls)[MAX_PARTS],
                      int *ncls)
{
    bool dilated = false;
    for (int d = 0; d < w->nsp; d++)
        dilated = dilated || (w->dil[d] > 1 && w->k[d] > 1);
    if (!dilated)
        return false;
    bool partial = false;
    double kept = 1;   /* the parts' multiply-adds per those of the live taps' window */
    int64_t parts = 1;
    for (int d = 0; d < w->nsp; d++) {
        int n = ncls[d] = tap_classes(x, w, d, cls[d]);
        if (n < 1 || (parts *= n) > MAX_PARTS)
            return false;
        double live = 0;
        for (int i = 0; i < n; i++) {
            live += (double)(cls[d][i].hi - cls[d][i].lo) * (double)cls[d][i].k;
            partial = partial || cls[d][i].hi - cls[d][i].lo < w->out[d];
        }
        kept *= live / ((double)w->out[d] * (double)(cls[d][n - 1].r + cls[d][n - 1].k -
                                                     cls[d][0].r));
    }
    return partial && kept <= 0.6;
}

/* Part j of the partitioned convolution y = x * W (g groups) over w, of
 * the classes cl[d] (one per axis): the convolution of their taps over the
 * output positions where they read inside x, into *p (named onnx), as
 * layer "<layer>.part<j>". */
static bool conv_part(ox_node *nd, ox_value *x, ox_value *wv, const window *w,
                      const tap_class *const *cl, int j, int64_t g, ox_value *p, const char *onnx)
{
    window pw = *w;
    int64_t first[RT_MAX_DIMS];
    *p = (ox_value){.onnx = onnx, .dtype = x->dtype, .ndim = x->ndim};
    p->shape[0] = x->shape[0];
    p->shape[1] = wv->shape[0];
    for (int d = 0; d < w->nsp; d++) {
        const tap_class *c = cl[d];
        pw.k[d] = c->k;
        pw.dil[d] = c->k > 1 ? w->dil[d] : 1;
        pw.out[d] = p->shape[2 + d] = c->hi - c->lo;
        /* its output o reads x at (o + lo) * s + (r + t) * dil - pb for its
         * tap t: a pad of -(lo * s + r * dil - pb), <= 0 */
        pw.pb[d] = w->pb[d] - c->lo * w->s[d] - c->r * w->dil[d];
        pw.pe[d] = (pw.out[d] - 1) * pw.s[d] + (pw.k[d] - 1) * pw.dil[d] + 1 -
                   x->shape[2 + d] - pw.pb[d];
        first[d] = c->r;
    }
    ox_value cut = *wv;
    if (!(cut.konst = cut_weight(nd, wv->konst, &pw, first)))
        return false;
    memcpy(cut.shape, cut.konst->shape, sizeof cut.shape);
    char suffix[32];
    snprintf(suffix, sizeof suffix, "part%d", j);
    bool ok = conv_kernel(nd, x, &cut, NULL, &pw, p, g, suffix);
    rt_tensor_free(cut.konst);
    return ok;
}

/* y = the sum of the parts p[0 .. n) (+ bias), each where its classes
 * cl[i][d] read inside x, as the node's layer. */
static bool sum_parts(ox_node *nd, ox_value *p, const tap_class *(*cl)[RT_MAX_DIMS], int n,
                      ox_value *bias, ox_value *y)
{
    ox_kernel k;
    ox_kernel_init(&k, nd);
    int nsp = y->ndim - 2;
    ox_printf(&k.body, "    y[n, f");
    for (int d = 0; d < nsp; d++)
        ox_printf(&k.body, ", o%d", d);
    ox_printf(&k.body, "] =");
    for (int i = 0; i < n; i++) {
        char role[16];
        snprintf(role, sizeof role, "p%d", i);
        ox_operand(&k, &p[i], ox_kernel_role(&k, role));
        ox_str guard = {0}, read = {0};
        ox_printf(&read, "p%d[n, f", i);
        for (int d = 0; d < nsp; d++) {
            const tap_class *c = cl[i][d];
            if (c->lo > 0)
                ox_printf(&guard, "%so%d >= %lld", guard.s ? " && " : "", d, (long long)c->lo);
            if (c->hi < y->shape[2 + d])
                ox_printf(&guard, "%so%d < %lld", guard.s ? " && " : "", d, (long long)c->hi);
            ox_printf(&read, ", o%d", d);
            if (c->lo > 0)
                ox_printf(&read, " - %lld", (long long)c->lo);
        }
        ox_printf(&read, "]");
        if (guard.s)
            ox_printf(&k.body, "%s (%s ? %s : 0)", i ? " +" : "", guard.s, read.s);
        else
            ox_printf(&k.body, "%s %s", i ? " +" : "", read.s);
        free(guard.s);
        free(read.s);
    }
    if (bias) {
        ox_operand(&k, bias, "bias");
        ox_printf(&k.body, " + bias[f]");
    }
    ox_printf(&k.body, "\n");
    bool ok = ox_kernel_finish(&k, "conv_sum", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* The convolution y = x * W (+ bias) over w, g groups, as its parts and
 * their sum (classes cls[d][0 .. ncls[d]), see partition). */
static bool partitioned_conv(ox_node *nd, ox_value *x, ox_value *wv, ox_value *bias,
                             const window *w, tap_class (*cls)[MAX_PARTS], const int *ncls,
                             ox_value *y, int64_t g)
{
    ox_value parts[MAX_PARTS];
    const tap_class *cl[MAX_PARTS][RT_MAX_DIMS];
    char *names[MAX_PARTS];
    int n = 1;
    for (int d = 0; d < w->nsp; d++)
        n *= ncls[d];
    bool ok = true;
    for (int j = 0; j < n; j++) {
        /* part j's class of axis d: digit d of j, in the base of the classes' counts */
        for (int d = w->nsp - 1, rest = j; d >= 0; d--) {
            cl[j][d] = &cls[d][rest % ncls[d]];
            rest /= ncls[d];
        }
        ox_str name = {0};
        ox_printf(&name, "%s_part%d", y->onnx, j);
        names[j] = name.s;
        ok = ok && conv_part(nd, x, wv, w, cl[j], j, g, &parts[j], names[j]);
    }
    ok = ok && sum_parts(nd, parts, cl, n, bias, y);
    for (int j = 0; j < n; j++)
        free(names[j]);
    return ok;
}

static bool op_conv(ox_node *nd, const void *arg)
{
    ox_value *x = ox_input(nd, 0), *wv = ox_input(nd, 1);
    ox_value *bias = nd->nin > 2 ? nd->in[2] : NULL;
    if (!x || !wv || !ox_need_float(nd, x) || !ox_same_dtypes(nd, 0, 2))
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
    if (!ox_window_of(nd, x, wv->shape + 2, false, &w))
        return false;
    x = unpadded(x, &w);
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = x->ndim;
    y->shape[0] = x->shape[0];
    y->shape[1] = F;
    for (int d = 0; d < w.nsp; d++)
        y->shape[2 + d] = w.out[d];
    tap_class cls[RT_MAX_DIMS][MAX_PARTS];
    int ncls[RT_MAX_DIMS];
    if (ox_is_param(wv) && ox_compute_dtype(x->dtype) == x->dtype &&
        partition(x, &w, cls, ncls))
        return partitioned_conv(nd, x, wv, bias, &w, cls, ncls, y, g);
    window live;
    int64_t first[RT_MAX_DIMS];
    if (ox_is_param(wv) && live_taps(x, &w, &live, first)) {
        /* the convolution of the live taps, with a weight of its own */
        ox_value cut = *wv;
        if (!(cut.konst = cut_weight(nd, wv->konst, &live, first)))
            return false;
        memcpy(cut.shape, cut.konst->shape, sizeof cut.shape);
        cut.lent = false;
        nd->in[1] = &cut;   /* the weight set takes the cut weight (write_weight) */
        bool ok = conv_of(nd, x, &cut, bias, &live, y, g);
        nd->in[1] = wv;
        if (!cut.lent)
            rt_tensor_free(cut.konst);
        return ok;
    }
    return conv_of(nd, x, wv, bias, &w, y, g);
}

/* The convolution y of x by weight wv (bias: NULL or of its channels) over
 * the window w, with g groups. */
static bool conv_of(ox_node *nd, ox_value *x, ox_value *wv, ox_value *bias, const window *wp,
                    ox_value *y, int64_t g)
{
    window w = *wp;
    int64_t F = wv->shape[0];
    /* nn.te's conv2d: square kernel, one stride, dilation and padding */
    bool square = w.nsp == 2 && w.k[0] == w.k[1] && w.s[0] == w.s[1] && w.dil[0] == w.dil[1] &&
                  w.pb[0] == w.pb[1] && w.pe[0] == w.pb[0] && w.pe[1] == w.pb[1];
    /* A 1x1 convolution with bias on a 1x1 map (squeeze-and-excitation's
     * fc1 and fc2) is written as a .te model writes it, a fully connected
     * layer: `t[n, f] += x[n, c, 0, 0] * weight[f, c, 0, 0]`, then `y = t +
     * bias`.  Its last statement is elementwise, so the fuse pass computes
     * the activation after it in the same kernel even when the schedule
     * splits the reduction (rfactor), which it does not after conv2d's. */
    if (square && w.k[0] == 1 && w.pb[0] == 0 && g == 1 && x->shape[2] == 1 &&
        x->shape[3] == 1 && x->dtype == IR_F32 && x->id && ox_is_param(wv) && bias &&
        ox_is_param(bias)) {
        ox_kernel k;
        ox_kernel_init(&k, nd);
        ox_operand(&k, x, "x");
        ox_operand(&k, wv, "weight");
        ox_operand(&k, bias, "bias");
        ox_printf(&k.body, "    t[n, f] += x[n, c, 0, 0] * weight[f, c, 0, 0]\n"
                  "    y[n, f, o0, o1] = t[n, f] + bias[f]\n");
        bool ok = ox_kernel_finish(&k, "fc", y, NULL);
        ox_kernel_free(&k);
        return ok;
    }
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
        if (!bias) {
            bool ok = ox_call_nn(nd, y, "conv2d", args.s, roles, data, 1);
            free(args.s);
            return ok;
        }
        /* The bias is a layer of its own, "<layer>.bias", as the batchnorm
         * after a convolution without bias is in a .te model: elementwise
         * on the convolution's result, the fuse pass computes it (and the
         * activation and residual add after it) inside the convolution's
         * tile, where conv2d's has_bias=1 would add it in the write-back,
         * which fuse does not extend. */
        ox_str onnx = {0};   /* as long as y's name is */
        ox_printf(&onnx, "%s_conv", y->onnx);
        ox_value t = *y;
        t.onnx = onnx.s;
        t.graph_output = false;
        bool ok = ox_call_nn(nd, &t, "conv2d", args.s, roles, data, 1) &&
                  bias_layer(nd, &t, bias, y);
        free(args.s);
        free(onnx.s);
        return ok;
    }
    return conv_kernel(nd, x, wv, bias, &w, y, g, NULL);
}

/* The convolution y of x by weight wv (bias: NULL or of its channels) over
 * the window w, with g groups, as a kernel `conv_N` of layer suffix (NULL:
 * the node's layer; see ox_kernel_finish). */
static bool conv_kernel(ox_node *nd, ox_value *x, ox_value *wv, ox_value *bias,
                        const window *wp, ox_value *y, int64_t g, const char *suffix)
{
    window w = *wp;
    int64_t F = wv->shape[0], Cg = wv->shape[1];
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
    bool ok = ox_kernel_finish(&k, "conv", y, suffix);
    ox_kernel_free(&k);
    return ok;
}

/* The value of MaxPool's padded reads in dtype t: the lowest finite float
 * (ONNX Runtime starts each window's max there and visits only x's
 * elements, so a window that lies wholly in the padding, possible with
 * dilations, gives -FLT_MAX, not -inf: -inf would turn a MatMul after it
 * into NaN), or the integer dtype's minimum. */
static void lowest(ox_str *b, ir_dtype t)
{
    int64_t lo, hi;
    if (t == IR_F16)
        ox_printf(b, "-65504");
    else if (t == IR_BF16)
        ox_printf(b, "-3.3895313892515355e38");
    else if (t == IR_F64)
        ox_printf(b, "-1.7976931348623157e308");
    else if (ir_dtype_is_float(t) || !ir_dtype_int_range(t, &lo, &hi))
        ox_printf(b, "-3.4028234663852886e38");
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
    ox_same_shape(z, x);
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
        /* Horner's form: (outer) * size + index, the outer part in
         * parentheses (without them only the first channel was right) */
        ox_str next = {0};
        ox_printf(&next, "(%s) * %lld + (", flat.s, (long long)x->shape[2 + e]);
        window_index(&next, w, e);
        ox_printf(&next, ")");
        free(flat.s);
        flat = next;
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

static bool pool(ox_node *nd, const void *arg)
{
    bool is_max = *(const bool *)arg;
    ox_value *x = ox_input(nd, 0);
    if (!x || (!is_max && !ox_need_float(nd, x)))
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
    if (!ox_window_of(nd, x, ks, ceil_mode, &w))
        return false;
    if (!is_max)
        for (int d = 0; d < w.nsp; d++)
            if (w.dil[d] != 1)
                return ox_fail(nd, "dilations are not supported in AveragePool");
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
    for (int d = 0; d < w.nsp; d++)
        y->shape[2 + d] = w.out[d];
    bool folded = x->pad_of != NULL;   /* its padding reads the Pad's value */
    if (folded && indices)
        return ox_fail(nd, "internal error: a Pad folded into a MaxPool with Indices");
    x = unpadded(x, &w);
    count_pad = count_pad || folded;
    if (indices && !pool_indices(nd, &w))
        return false;
    bool one = !indices;   /* a 1x1 window at stride 1: AdaptiveAvgPool2d to the input's size */
    for (int d = 0; d < w.nsp; d++)
        one = one && w.k[d] == 1 && w.s[d] == 1 && w.pb[d] == 0 && w.pe[d] == 0;
    if (one && ox_aliasable(x))
        return ox_alias(nd);
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
        if (folded)
            ox_printf(&k.body, "-inf");
        else
            lowest(&k.body, x->dtype);
        ox_printf(&k.body, "%s\n", where.s);
    } else {
        ox_printf(&k.body, "    s[%s] += %s else 0%s\n", left.s, read.s, where.s);
        /* every window inside x (with count_pad, inside the padded x): the
         * count is the window's size */
        int64_t whole = 1;
        for (int d = 0; d < w.nsp && whole; d++)
            whole = (count_pad || w.pb[d] == 0) &&
                    (w.out[d] - 1) * w.s[d] + w.k[d] <=
                        x->shape[2 + d] + (count_pad ? w.pb[d] + w.pe[d] : 0)
                        ? whole * w.k[d] : 0;
        if (whole) {
            ox_printf(&k.body, "    y[%s] = s[%s] / %lld\n", left.s, left.s, (long long)whole);
        } else if (count_pad) {   /* the window clipped to the padded input */
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

/* Trilu: keeps the upper (upper=1) or lower triangle of the last two
 * dimensions, shifted by k (a constant input). */
static bool op_trilu(ox_node *nd, const void *arg)
{
    ox_value *x = ox_input(nd, 0);
    int64_t kk = 0;
    if (!x || (nd->nin > 1 && nd->in[1] && ox_const_ints(nd, 1, &kk, 1) != 1))
        return false;
    if (x->ndim < 2)
        return ox_fail(nd, "the input must have at least 2 dimensions");
    bool upper = ox_attr_int(nd, "upper", 1) != 0;
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
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
static bool op_hardmax(ox_node *nd, const void *arg)
{
    ox_value *x = ox_input(nd, 0);
    int axis;
    if (!x || !ox_need_float(nd, x) || !ox_axis(nd, ox_attr_int(nd, "axis", -1), x->ndim, &axis))
        return false;
    if (nd->opset < 13)
        return ox_fail(nd, "Hardmax before opset 13 (over the input coerced to 2-D) is not "
                       "supported");
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_str kept = {0}, all = {0}, xr = {0};
    bool red[RT_MAX_DIMS] = {0};
    red[axis] = true;
    reduce_indices(x, red, &all, &kept, &xr);
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
static bool op_gatherelements(ox_node *nd, const void *arg)
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
    ox_same_shape(y, ind);
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

/* GatherND (PyTorch's torch.diagonal after EyeLike and NonZero, and
 * TensorFlow's gathers): indices [B0 .. Bq-2, k] name slices of data [D0
 * .. Dr-1] after its first batch_dims dimensions (which indices share):
 * y[j0 .. jq-2, rest] = data[j0 .. jb-1, indices[j, 0] .. indices[j, k-1],
 * rest], a negative index counting from the end. */
static bool op_gathernd(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0), *ind = ox_input(nd, 1);
    if (!x || !ind)
        return false;
    int64_t b = ox_attr_int(nd, "batch_dims", 0);
    int q = ind->ndim, r = x->ndim;
    if (ir_dtype_is_float(ind->dtype) || q < 1)
        return ox_fail(nd, "the indices must be integers of rank 1 or more");
    int64_t k = ind->shape[q - 1];
    if (b < 0 || b >= q || b >= r || k < 1 || b + k > r)
        return ox_fail(nd, "batch_dims %lld and the indices' last dimension %lld do not fit the "
                       "data's rank %d and the indices' %d", (long long)b, (long long)k, r, q);
    for (int d = 0; d < b; d++)
        if (ind->shape[d] != x->shape[d])
            return ox_fail(nd, "the indices' dimension %d (%lld) differs from the data's (%lld)",
                           d, (long long)ind->shape[d], (long long)x->shape[d]);
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = q - 1 + r - (int)(b + k);
    for (int d = 0; d < q - 1; d++)
        y->shape[d] = ind->shape[d];
    for (int d = (int)(b + k); d < r; d++)
        y->shape[q - 1 + d - (int)(b + k)] = x->shape[d];
    if (!ox_check_shape(nd, y->shape, y->ndim))
        return false;
    ox_kernel kk;
    ox_kernel_init(&kk, nd);
    const char *xr = ox_operand(&kk, x, "data");
    const char *ir = ox_operand(&kk, ind, "indices");
    ox_str js = {0};
    ox_indices(&js, "i", 0, q - 1);
    ox_printf(&kk.body, "    y[");
    ox_indices(&kk.body, "i", 0, y->ndim);
    ox_printf(&kk.body, "] = %s[", xr);
    for (int d = 0; d < r; d++) {
        ox_printf(&kk.body, "%s", d ? ", " : "");
        if (d < b)
            ox_printf(&kk.body, "i%d", d);
        else if (d < b + k) {
            ox_str at = {0};
            ox_printf(&at, "%s[%s%s%lld]", ir, js.s ? js.s : "", q > 1 ? ", " : "",
                      (long long)(d - b));
            ox_printf(&kk.body, "%s < 0 ? %s + %lld : %s", at.s, at.s, (long long)x->shape[d], at.s);
            free(at.s);
        } else
            ox_printf(&kk.body, "i%d", q - 1 + d - (int)(b + k));
    }
    ox_printf(&kk.body, "]\n");
    free(js.s);
    bool ok = ox_kernel_finish(&kk, "gather_nd", y, NULL);
    ox_kernel_free(&kk);
    return ok;
}

/* ScatterElements (and Scatter, its name before opset 11): y is data
 * with updates written at the indices along axis.  Written as a gather:
 * each output position j looks for the indices equal to j (or j - size,
 * negative ones counting from the end) along its row: with reduction
 * `add` (`mul`) it sums (multiplies) their updates onto data's value
 * (PyTorch's scatter_reduce "sum" and "prod"); without (`none`) it takes
 * the update of the last one (max= of its position k), or data's value
 * where none is.  An index out of range writes nothing (ONNX Runtime
 * stops with an error at run time).  A row of K indices costs K
 * comparisons per output position. */
static bool op_scatterelements(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0), *ind = ox_input(nd, 1), *upd = ox_input(nd, 2);
    int axis;
    if (!x || !ind || !upd || !ox_axis(nd, ox_attr_int(nd, "axis", 0), x->ndim, &axis))
        return false;
    if (ind->ndim != x->ndim || ir_dtype_is_float(ind->dtype))
        return ox_fail(nd, "the indices must be integers of the data's rank");
    if (upd->ndim != ind->ndim || memcmp(upd->shape, ind->shape, sizeof(int64_t) * (size_t)ind->ndim) ||
        upd->dtype != x->dtype)
        return ox_fail(nd, "the updates must have the indices' shape and the data's dtype");
    for (int d = 0; d < x->ndim; d++)
        if (d != axis && ind->shape[d] > x->shape[d])
            return ox_fail(nd, "the indices' dimension %d is larger than the data's", d);
    const char *red = ox_attr_str(nd, "reduction", "none");
    bool add = strcmp(red, "add") == 0, mul = strcmp(red, "mul") == 0;
    if (!add && !mul && strcmp(red, "none") != 0)
        return ox_fail(nd, "reduction '%s' is not supported (none, add and mul are)", red);
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    const char *xr = ox_operand(&k, x, "data");
    ox_operand(&k, ind, "indices");
    const char *ur = ox_operand(&k, upd, "updates");
    long long D = (long long)x->shape[axis], K = (long long)ind->shape[axis];
    ox_str all = {0}, at = {0}, last = {0};   /* y's indices; the row's at k; at t[...] */
    ox_str inside = {0};                        /* "i0 < 2 && ": y's position has indices */
    ox_indices(&all, "i", 0, x->ndim);
    for (int d = 0; d < x->ndim; d++) {
        ox_printf(&at, "%s%s", d ? ", " : "", d == axis ? "k" : "");
        ox_printf(&last, "%s", d ? ", " : "");
        if (d == axis)
            ox_printf(&last, "t[%s]", all.s);
        else if (ind->shape[d] == x->shape[d]) {
            ox_printf(&at, "i%d", d);
            ox_printf(&last, "i%d", d);
        } else {
            /* a dimension of the indices shorter than the data's: read at
             * an index clamped into it, and matched only inside it (not a
             * read `else` a default, whose guard -O2's staging of the row
             * drops: bench/results/onnxte_s21.txt) */
            ox_printf(&at, "min(i%d, %lld)", d, (long long)ind->shape[d] - 1);
            ox_printf(&last, "min(i%d, %lld)", d, (long long)ind->shape[d] - 1);
            ox_printf(&inside, "i%d < %lld && ", d, (long long)ind->shape[d]);
        }
    }
    ox_str match = {0}, range = {0};
    ox_printf(&range, "k in 0..%lld", K);
    for (int d = 0; d < x->ndim; d++)
        ox_printf(&range, ", i%d in 0..%lld", d, (long long)x->shape[d]);
    ox_printf(&match, "%s(indices[%s] == i%d || indices[%s] == i%d - %lld)",
              inside.s ? inside.s : "", at.s, axis, at.s, axis, D);
    if (add || mul) {
        ox_printf(&k.body, "    s[%s] %s %s ? %s[%s] : %s where %s\n", all.s, add ? "+=" : "*=",
                  match.s, ur, at.s, add ? "0" : "1", range.s);
        ox_printf(&k.body, "    y[%s] = %s[%s] %s s[%s]\n", all.s, xr, all.s, add ? "+" : "*",
                  all.s);
    } else {
        ox_printf(&k.body, "    t[%s] max= i64(%s ? k : -1) where %s\n", all.s, match.s, range.s);
        ox_printf(&k.body, "    y[%s] = t[%s] >= 0 ? (%s[%s] else 0) : %s[%s]\n", all.s, all.s, ur,
                  last.s, xr, all.s);   /* (t is -1, out of range, where no index is j) */
    }
    free(all.s);
    free(at.s);
    free(last.s);
    free(match.s);
    free(range.s);
    free(inside.s);
    bool ok = ox_kernel_finish(&k, "scatter_elements", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* Writes the coordinates, in a tensor of dimensions B[0 .. nb-1], of its
 * element at the flat position s (an expression): s / (B1 ... ) % B0, ...
 * (the first without %, the last without /). */
static void flat_coords(ox_str *b, const char *s, const int64_t *B, int nb)
{
    int64_t stride = 1;
    for (int d = 1; d < nb; d++)
        stride *= B[d];
    for (int d = 0; d < nb; d++) {
        ox_printf(b, "%s", d ? ", " : "");
        if (stride > 1)
            ox_printf(b, "(%s) / %lld", s, (long long)stride);
        else
            ox_printf(b, "(%s)", s);
        if (d > 0)
            ox_printf(b, " %% %lld", (long long)B[d]);
        if (d + 1 < nb)
            stride /= B[d + 1];
    }
}

/* ScatterND of run-time data, updates or indices, or with a reduction
 * (importer/fold.c checks the shapes and folds the rest): data [D0 ..
 * Dr-1], indices [B0 .. Bq-2, k], updates [B0 .. Bq-2, Dk .. Dr-1]; the
 * update slice j (flat over B) goes to data's slice at indices[j] (a
 * negative index counting from the end).
 * - Indices known at import time and reduction none (PyTorch's slice
 *   assignment `x[:, 1:3] = v` and index_put of run-time x or v, whose
 *   indices fold): a table `at` over data's first k dimensions, computed
 *   here, holds the last slice that writes each position (-1: none; a
 *   later duplicate wins, as in ONNX Runtime's loop over the slices), and
 *   y reads updates' slice at[..] there, data elsewhere: one read an
 *   element.  An index out of range is an error.
 * - Else, as ScatterElements, each position of data's first k dimensions
 *   looks for the slices whose indices name it: the last one (none), or
 *   the sum (add) or product (mul) of all of them with data's value.  N k
 *   comparisons a position (N slices); an index out of range writes
 *   nothing (ONNX Runtime stops with an error at run time). */
bool ox_scatternd_kernel(ox_node *nd, ox_value *data, ox_value *ind, ox_value *upd,
                         const char *red)
{
    int r = data->ndim, nb = ind->ndim - 1, kd = (int)ind->shape[nb];
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, data);
    int64_t N = 1;
    for (int d = 0; d < nb; d++)
        N *= ind->shape[d];
    bool table = ox_known(ind) && strcmp(red, "none") == 0 && N <= INT32_MAX;
    rt_tensor *tab = NULL;
    ox_value tv = {0};
    if (table) {
        if (!(tab = ox_const_new(nd, IR_I32, kd, data->shape)))
            return false;
        int64_t P = rt_tensor_numel(tab);
        for (int64_t p = 0; p < P; p++)
            ((int32_t *)tab->data)[p] = -1;
        for (int64_t j = 0; j < N; j++) {
            int64_t at = 0;
            for (int d = 0; d < kd; d++) {
                int64_t i = rt_tensor_get_int(ind->konst, j * kd + d), D = data->shape[d];
                if (i < -D || i >= D) {
                    rt_tensor_free(tab);
                    return ox_fail(nd, "index %lld is out of range for dimension %d of size %lld",
                                   (long long)i, d, (long long)D);
                }
                at = at * D + (i < 0 ? i + D : i);
            }
            ((int32_t *)tab->data)[at] = (int32_t)j;
        }
        tv = (ox_value){.onnx = "at", .konst = tab, .uses = 1, .dtype = IR_I32, .ndim = kd};
        memcpy(tv.shape, data->shape, sizeof(int64_t) * (size_t)kd);
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    const char *xr = ox_operand(&k, data, "data");
    const char *ir = table ? NULL : ox_operand(&k, ind, "indices");
    const char *ur = ox_operand(&k, upd, "updates");
    const char *tr = table ? ox_operand(&k, &tv, "at") : "t";
    ox_str all = {0}, pre = {0}, rest = {0}, js = {0}, range = {0};
    ox_indices(&all, "i", 0, r);
    ox_indices(&pre, "i", 0, kd);
    for (int d = kd; d < r; d++)
        ox_printf(&rest, ", i%d", d);
    ox_indices(&js, "j", 0, nb);
    for (int d = 0; d < nb; d++)
        ox_printf(&range, "%sj%d in 0..%lld", d ? ", " : "", d, (long long)ind->shape[d]);
    ox_str match = {0}, flat = {0};
    for (int d = 0; d < kd && !table; d++)
        ox_printf(&match, "%s(%s[%s%s%d] == i%d || %s[%s%s%d] == i%d - %lld)", d ? " && " : "", ir,
                  js.s ? js.s : "", nb ? ", " : "", d, d, ir, js.s ? js.s : "", nb ? ", " : "", d,
                  d, (long long)data->shape[d]);
    int64_t stride = N;
    for (int d = 0; d < nb; d++) {
        stride /= ind->shape[d];
        ox_printf(&flat, "%sj%d * %lld", d ? " + " : "", d, (long long)stride);
    }
    /* updates' indices after the slice's: ", ik, ..." (none without batch dimensions) */
    const char *rest_at = !rest.s ? "" : nb ? rest.s : rest.s + 2;
    if (strcmp(red, "none") == 0) {
        ox_str tread = {0}, coords = {0};
        ox_printf(&tread, "%s[%s]", tr, pre.s);
        flat_coords(&coords, tread.s, ind->shape, nb);
        if (!table) {
            /* the i ranges: t's indices are read only through the matches */
            ox_printf(&k.body, "    t[%s] %s i64(%s ? %s : -1) where %s%s", pre.s,
                      nb ? "max=" : "=", match.s, nb ? flat.s : "0", range.s ? range.s : "",
                      nb ? ", " : "");
            for (int d = 0; d < kd; d++)
                ox_printf(&k.body, "%si%d in 0..%lld", d ? ", " : "", d,
                          (long long)data->shape[d]);
            ox_printf(&k.body, "\n");
        }
        ox_printf(&k.body, "    y[%s] = %s >= 0 ? (%s[%s%s] else 0) : %s[%s]\n", all.s, tread.s,
                  ur, coords.s ? coords.s : "", rest_at, xr, all.s);
        free(tread.s);
        free(coords.s);
    } else {
        bool add = strcmp(red, "add") == 0;
        ox_printf(&k.body, "    s[%s] %s %s ? %s[%s%s] : %s where %s%s", all.s,
                  nb ? (add ? "+=" : "*=") : "=", match.s, ur, js.s ? js.s : "", rest_at,
                  add ? "0" : "1", range.s ? range.s : "", nb ? ", " : "");
        for (int d = 0; d < r; d++)
            ox_printf(&k.body, "%si%d in 0..%lld", d ? ", " : "", d, (long long)data->shape[d]);
        ox_printf(&k.body, "\n    y[%s] = %s[%s] %s s[%s]\n", all.s, xr, all.s, add ? "+" : "*",
                  all.s);
    }
    free(all.s);
    free(pre.s);
    free(rest.s);
    free(js.s);
    free(range.s);
    free(match.s);
    free(flat.s);
    bool ok = ox_kernel_finish(&k, "scatter_nd", y, NULL);
    ox_kernel_free(&k);
    rt_tensor_free(tab);
    return ok;
}

/* Reads of the loss ops over the target's positions, indexed by p0, p2,
 * p3 ... (p: i for the loss per position, r for its sum): x's dimension 1
 * is the class, the target's dimensions are x's others. */
static void loss_at(ox_str *b, const char *role, int xdim, char p, const char *cls)
{
    ox_printf(b, "%s[%c0", role, p);
    if (cls)
        ox_printf(b, ", %s", cls);
    for (int d = 2; d < xdim; d++)
        ox_printf(b, ", %c%d", p, d);
    ox_printf(b, "]");
}

/* x's log-softmax over the classes (dimension 1), m its maximum and e the
 * sum of exp(x - m) per position, into k's body. */
static void loss_softmax_sums(ox_kernel *k, const char *xr, int xdim)
{
    ox_str at = {0}, red = {0};
    loss_at(&at, "", xdim, 'i', NULL);
    loss_at(&red, xr, xdim, 'i', "r1");
    ox_printf(&k->body, "    m%s max= %s\n", at.s, red.s);
    ox_printf(&k->body, "    e%s += exp(%s - m%s)\n", at.s, red.s, at.s);
    free(at.s);
    free(red.s);
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12 on:
 * PyTorch's F.nll_loss and F.cross_entropy): x [N, C, d1 ...] (log
 * probabilities, or scores whose log-softmax over C the latter takes
 * first, as x - max - log(sum(exp(x - max)))), target [N, d1 ...] of class
 * indices, an optional weight [C]: the loss at a position is -x[n, t, d...]
 * * weight[t], 0 where t is ignore_index; reduction none keeps them, sum
 * adds them, mean divides that sum by the sum of the weights taken (the
 * positions not ignored, without weights).  SoftmaxCrossEntropyLoss's
 * second output is the log-softmax itself (a layer `<layer>.log_prob`). */
static bool op_nll_loss(ox_node *nd, const void *arg)
{
    bool sce = *(const bool *)arg;
    ox_value *x = ox_input(nd, 0), *t = ox_input(nd, 1);
    ox_value *w = nd->nin > 2 && nd->in[2] ? ox_input(nd, 2) : NULL;
    if (!x || !t || (nd->nin > 2 && nd->in[2] && !w) || !ox_need_float(nd, x))
        return false;
    if (nd->opset < 12)
        return ox_fail(nd, "%s is an op of opset 12 on (the model imports opset %d)",
                       nd->n->op_type, nd->opset);
    bool fits = x->ndim >= 2 && t->ndim == x->ndim - 1 && !ir_dtype_is_float(t->dtype) &&
                t->shape[0] == x->shape[0];
    for (int d = 2; fits && d < x->ndim; d++)
        fits = t->shape[d - 1] == x->shape[d];
    if (!fits)
        return ox_fail(nd, "the input must be [N, C, d1 ...] and the target integers [N, d1 ...]");
    if (w && (w->ndim != 1 || w->shape[0] != x->shape[1] || w->dtype != x->dtype))
        return ox_fail(nd, "the weight must be [C] of the input's dtype");
    const char *red = ox_attr_str(nd, "reduction", "mean");
    bool none = strcmp(red, "none") == 0, sum = strcmp(red, "sum") == 0;
    if (!none && !sum && strcmp(red, "mean") != 0)
        return ox_fail(nd, "reduction '%s' is not supported (none, sum and mean are)", red);
    const Onnx__AttributeProto *ia = ox_attr(nd, "ignore_index");
    long long ii = ia ? (long long)ia->i : 0;
    int64_t count = 1;   /* positions */
    for (int d = 0; d < t->ndim; d++)
        count *= t->shape[d];
    ox_value *y = ox_output(nd, 0);
    if (none)
        ox_same_shape(y, t);
    else
        y->ndim = 0;
    y->dtype = x->dtype;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    const char *xr = ox_operand(&k, x, sce ? "scores" : "x");
    const char *tr = ox_operand(&k, t, "target");
    const char *wr = w ? ox_operand(&k, w, "weight") : NULL;
    if (sce)
        loss_softmax_sums(&k, xr, x->ndim);
    char p = none ? 'i' : 'r';
    /* the class, the picked log probability and its weight at a position
     * (reads at an ignored position's class, which may be out of range,
     * are guarded) */
    ox_str tt = {0}, pick = {0}, wt = {0}, at = {0};
    loss_at(&tt, tr, x->ndim, p, NULL);
    loss_at(&at, "", x->ndim, p, NULL);
    ox_printf(&pick, "(");
    loss_at(&pick, xr, x->ndim, p, tt.s);
    ox_printf(&pick, "%s", ia ? " else 0)" : ")");
    if (sce)
        ox_printf(&pick, " - m%s - log(e%s)", at.s, at.s);
    if (w)
        ox_printf(&wt, ia ? "(%s[%s] else 0)" : "%s[%s]", wr, tt.s);
    else
        ox_printf(&wt, "1");
    ox_str loss = {0};
    if (ia)
        ox_printf(&loss, "%s == %lld ? 0 : ", tt.s, ii);
    ox_printf(&loss, "0 - (%s) * %s", pick.s, wt.s);
    if (none)
        ox_printf(&k.body, "    y%s = %s\n", at.s, loss.s);
    else if (sum)
        ox_printf(&k.body, "    y[] += %s\n", loss.s);
    else {
        ox_printf(&k.body, "    s[] += %s\n", loss.s);
        if (ia)
            ox_printf(&k.body, "    c[] += %s == %lld ? 0 : %s\n", tt.s, ii, wt.s);
        else if (w)
            ox_printf(&k.body, "    c[] += %s\n", wt.s);
        if (ia || w)
            ox_printf(&k.body, "    y[] = s[] / c[]\n");
        else    /* every position counts once */
            ox_printf(&k.body, "    y[] = s[] / %lld\n", (long long)count);
    }
    free(tt.s);
    free(pick.s);
    free(wt.s);
    free(at.s);
    free(loss.s);
    bool ok = ox_kernel_finish(&k, sce ? "softmax_cross_entropy" : "nll_loss", y, NULL);
    ox_kernel_free(&k);
    if (ok && sce && ox_noutputs(nd) > 1 && *nd->n->output[1]) {
        ox_value *lp = ox_output(nd, 1);
        ox_same_shape(lp, x);
        ox_kernel_init(&k, nd);
        xr = ox_operand(&k, x, "scores");
        loss_softmax_sums(&k, xr, x->ndim);
        ox_str all = {0}, pos = {0};
        ox_indices(&all, "i", 0, x->ndim);
        loss_at(&pos, "", x->ndim, 'i', NULL);
        ox_printf(&k.body, "    y[%s] = %s[%s] - m%s - log(e%s)\n", all.s, xr, all.s, pos.s, pos.s);
        free(all.s);
        free(pos.s);
        ok = ox_kernel_finish(&k, "log_softmax", lp, "log_prob");
        ox_kernel_free(&k);
    }
    return ok;
}

/* The determinant of the matrix of a's rows from row on and the columns in
 * cols (a bit set), expanded along its first row (cofactors). */
static void det_expansion(ox_str *b, char a[4][4][160], int n, int row, unsigned cols)
{
    if (row == n - 1) {
        for (int j = 0; j < n; j++)
            if (cols & 1u << j)
                ox_printf(b, "%s", a[row][j]);
        return;
    }
    ox_printf(b, "(");
    for (int j = 0, t = 0; j < n; j++) {
        if (!(cols & 1u << j))
            continue;
        ox_printf(b, "%s%s * ", t ? (t % 2 ? " - " : " + ") : "", a[row][j]);
        if (row + 2 < n)
            ox_printf(b, "(");
        det_expansion(b, a, n, row + 1, cols & ~(1u << j));
        if (row + 2 < n)
            ox_printf(b, ")");
        t++;
    }
    ox_printf(b, ")");
}

/* Det (torch.det, torch.linalg.det) of [..., n, n] matrices for n <= 4, by
 * the expansion in cofactors (24 products at 4x4); a larger n would need
 * an elimination with pivots chosen by value, which is refused. */
static bool op_det(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0);
    if (!x || !ox_need_float(nd, x))
        return false;
    int r = x->ndim;
    if (r < 2 || x->shape[r - 1] != x->shape[r - 2])
        return ox_fail(nd, "the input must be [..., n, n], square matrices");
    int n = (int)x->shape[r - 1];
    if (n > 4)
        return ox_fail(nd, "the determinant of %dx%d matrices is not supported (tec computes "
                       "those of at most 4x4, by their expansion in cofactors)", n, n);
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = r - 2;
    memcpy(y->shape, x->shape, sizeof(int64_t) * (size_t)(r - 2));
    ox_kernel k;
    ox_kernel_init(&k, nd);
    const char *xr = ox_operand(&k, x, "x");
    ox_str b = {0};
    ox_indices(&b, "i", 0, r - 2);
    const char *B = b.s ? b.s : "";
    char a[4][4][160];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            snprintf(a[i][j], sizeof a[i][j], "%s[%s%s%d, %d]", xr, B, r > 2 ? ", " : "", i, j);
    ox_printf(&k.body, "    y[%s] = ", B);
    det_expansion(&k.body, a, n, 0, (1u << n) - 1);
    ox_printf(&k.body, "\n");
    free(b.s);
    bool ok = ox_kernel_finish(&k, "det", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* GridSample (opset 16; `linear` and `nearest` from 20) of a 4-D x by a
 * grid [N, Ho, Wo, 2] of (x, y) coordinates in [-1, 1]: each output
 * position reads x at its grid point, unnormalized to pixel coordinates
 * (align_corners: -1 and 1 are the corner pixels' centres, else their
 * outer edges), bilinear (the four neighbours, weighted) or nearest
 * (rint: ties to even, as PyTorch and ONNX Runtime round); padding
 * `zeros` (a neighbour outside reads 0) or `border` (the coordinate is
 * clamped to the image first).  bicubic and reflection are refused. */
static bool op_gridsample(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0), *g = ox_input(nd, 1);
    if (!x || !g || !ox_need_float(nd, x) || !ox_same_dtypes(nd, 0, 1))
        return false;
    if (x->ndim != 4 || g->ndim != 4 || g->shape[0] != x->shape[0] || g->shape[3] != 2)
        return ox_fail(nd, "X must be 4-D [N, C, H, W] and grid [N, Ho, Wo, 2] (tec samples "
                       "2-D images only)");
    const char *mode = ox_attr_str(nd, "mode", nd->opset >= 20 ? "linear" : "bilinear");
    const char *pad = ox_attr_str(nd, "padding_mode", "zeros");
    bool linear = strcmp(mode, "bilinear") == 0 || strcmp(mode, "linear") == 0;
    if (!linear && strcmp(mode, "nearest") != 0)
        return ox_fail(nd, "mode '%s' is not supported (bilinear, linear and nearest are)", mode);
    bool border = strcmp(pad, "border") == 0;
    if (!border && strcmp(pad, "zeros") != 0)
        return ox_fail(nd, "padding_mode '%s' is not supported (zeros and border are)", pad);
    bool corners = ox_attr_int(nd, "align_corners", 0) != 0;
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = 4;
    int64_t ys[4] = {x->shape[0], x->shape[1], g->shape[1], g->shape[2]};
    memcpy(y->shape, ys, sizeof ys);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    const char *xr = ox_operand(&k, x, "x"), *gr = ox_operand(&k, g, "grid");
    /* the pixel coordinates: gx along W (the grid's 0), gy along H (1) */
    for (int a = 0; a < 2; a++) {
        int64_t size = x->shape[3 - a];
        ox_str c = {0};
        if (corners) {   /* (g + 1) / 2 * (size - 1) */
            ox_printf(&c, "(%s[n, h, w, %d] + 1.0) * ", gr, a);
            ox_float(&c, (double)(size - 1) / 2);
        } else           /* ((g + 1) * size - 1) / 2 */
            ox_printf(&c, "((%s[n, h, w, %d] + 1.0) * %lld.0 - 1.0) / 2.0", gr, a,
                      (long long)size);
        if (border)
            ox_printf(&k.body, "    g%c[n, h, w] = min(max(%s, 0.0), %lld.0)\n", "xy"[a], c.s,
                      (long long)(size - 1));
        else
            ox_printf(&k.body, "    g%c[n, h, w] = %s\n", "xy"[a], c.s);
        free(c.s);
    }
    /* each grid point's neighbour and weights, once for all channels
     * (3x faster than computing them in the channels' statement) */
    const char *round = linear ? "floor" : "rint";
    ox_printf(&k.body, "    x0[n, h, w] = i64(%s(gx[n, h, w]))\n", round);
    ox_printf(&k.body, "    y0[n, h, w] = i64(%s(gy[n, h, w]))\n", round);
    if (linear) {
        ox_printf(&k.body, "    fx[n, h, w] = gx[n, h, w] - floor(gx[n, h, w])\n");
        ox_printf(&k.body, "    fy[n, h, w] = gy[n, h, w] - floor(gy[n, h, w])\n");
        ox_printf(&k.body, "    y[n, c, h, w] = ");
        for (int t = 0; t < 4; t++) {
            int dy = t / 2, dx = t % 2;
            ox_printf(&k.body, "%s%sfy[n, h, w]%s * %sfx[n, h, w]%s * "
                      "(%s[n, c, y0[n, h, w] + %d, x0[n, h, w] + %d] else 0)", t ? " + " : "",
                      dy ? "" : "(1.0 - ", dy ? "" : ")", dx ? "" : "(1.0 - ", dx ? "" : ")", xr,
                      dy, dx);
        }
        ox_printf(&k.body, " where c in 0..%lld\n", (long long)x->shape[1]);
    } else
        ox_printf(&k.body, "    y[n, c, h, w] = %s[n, c, y0[n, h, w], x0[n, h, w]] else 0 "
                  "where c in 0..%lld\n", xr, (long long)x->shape[1]);
    bool ok = ox_kernel_finish(&k, "grid_sample", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* ConvTranspose's strides s, dilations dl, leading pads pb and output
 * sizes out of each spatial dimension, from its attributes (output_shape
 * and auto_pad set the pads: a negative total pads the end with zeros,
 * ONNX's rule); false after an error. */
static bool convtranspose_geometry(ox_node *nd, const ox_value *x, const ox_value *wv,
                                   int64_t *s, int64_t *dl, int64_t *pb, int64_t *out)
{
    int nsp = x->ndim - 2;
    int64_t pe[RT_MAX_DIMS], op[RT_MAX_DIMS];
    const int64_t *a;
    int n;
    const char *ap = ox_attr_str(nd, "auto_pad", "NOTSET");
    for (int d = 0; d < nsp; d++)
        s[d] = dl[d] = 1, pb[d] = pe[d] = op[d] = 0;
    /* an attribute of the wrong length is refused, as Conv's are
     * (ox_window_of): ignoring it would compute another operator */
    if ((n = ox_attr_ints(nd, "strides", &a)) && n != nsp)
        return ox_fail(nd, "strides has %d entries for %d spatial dimensions", n, nsp);
    if (n)
        memcpy(s, a, sizeof(int64_t) * (size_t)n);
    if ((n = ox_attr_ints(nd, "dilations", &a)) && n != nsp)
        return ox_fail(nd, "dilations has %d entries for %d spatial dimensions", n, nsp);
    if (n)
        memcpy(dl, a, sizeof(int64_t) * (size_t)n);
    if ((n = ox_attr_ints(nd, "output_padding", &a)) && n != nsp)
        return ox_fail(nd, "output_padding has %d entries for %d spatial dimensions", n, nsp);
    if (n)
        memcpy(op, a, sizeof(int64_t) * (size_t)n);
    if ((n = ox_attr_ints(nd, "kernel_shape", &a)) &&
        (n != nsp || memcmp(a, wv->shape + 2, sizeof(int64_t) * (size_t)nsp) != 0))
        return ox_fail(nd, "kernel_shape does not match W");
    if ((n = ox_attr_ints(nd, "pads", &a)) && n != 2 * nsp)
        return ox_fail(nd, "pads has %d entries for %d spatial dimensions (it needs %d)", n, nsp,
                       2 * nsp);
    for (int d = 0; d < n / 2 && strcmp(ap, "VALID") != 0; d++)
        pb[d] = a[d], pe[d] = a[nsp + d];
    const int64_t *os;
    int nos = ox_attr_ints(nd, "output_shape", &os);
    if (nos && nos < nsp)
        return ox_fail(nd, "output_shape has %d entries for %d spatial dimensions", nos, nsp);
    if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0 && strcmp(ap, "SAME_UPPER") != 0 &&
        strcmp(ap, "SAME_LOWER") != 0)
        return ox_fail(nd, "auto_pad '%s' is not supported", ap);
    for (int d = 0; d < nsp; d++) {
        if (s[d] < 1 || dl[d] < 1)
            return ox_fail(nd, "strides and dilations must be >= 1");
        /* ONNX Runtime's rules: the pads given are >= 0 (only output_shape
         * and auto_pad make negative ones), and output_padding adds less
         * than one step of the output */
        if (pb[d] < 0 || pe[d] < 0)
            return ox_fail(nd, "pads must be >= 0");
        if (op[d] < 0 || op[d] >= (s[d] > dl[d] ? s[d] : dl[d]))
            return ox_fail(nd, "output_padding[%d] (%lld) must be >= 0 and less than the larger of "
                           "stride (%lld) and dilation (%lld)", d, (long long)op[d], (long long)s[d],
                           (long long)dl[d]);
        if (s[d] > OX_ATTR_MAX || dl[d] > OX_ATTR_MAX || op[d] < 0 || op[d] > OX_ATTR_MAX ||
            pb[d] < -OX_ATTR_MAX || pb[d] > OX_ATTR_MAX || pe[d] < -OX_ATTR_MAX ||
            pe[d] > OX_ATTR_MAX || (nos && (os[nos - nsp + d] < 0 || os[nos - nsp + d] > OX_ATTR_MAX)))
            return ox_fail(nd, "strides, dilations, pads, output_padding and output_shape must "
                           "be at most 2^31");
        int64_t H = x->shape[2 + d], ke, full, same;
        if (__builtin_mul_overflow(wv->shape[2 + d] - 1, dl[d], &ke) ||
            __builtin_mul_overflow(s[d], H - 1, &full) || __builtin_mul_overflow(H, s[d], &same) ||
            full > OX_ATTR_MAX * OX_ATTR_MAX || ke > OX_ATTR_MAX * OX_ATTR_MAX)
            return ox_fail(nd, "the output would have more than 2^62 elements per dimension");
        full += op[d] + ke + 1;
        if (nos || strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0) {
            int64_t tot = full - (nos ? os[nos - nsp + d] : same);
            bool upper = strcmp(ap, "SAME_UPPER") == 0;
            int64_t half = tot >= 0 ? tot / 2 : -((-tot + 1) / 2);   /* floor(tot / 2) */
            pb[d] = upper ? half : tot - half;
            pe[d] = tot - pb[d];
        }
        out[d] = full - pb[d] - pe[d];
    }
    return true;
}

/* ConvTranspose: y[n, f, o] sums x[n, c, h] * W[c, f, r] over o = h*stride
 * + r*dilation - pad, i.e. h = (o + pad - r*dilation) / stride where that
 * divides. */
/* ConvTranspose without groups as ONNX Runtime computes it: every input
 * position times every tap, z[n, f, r.., i..] = sum_c x[n, c, i..] *
 * W[c, f, r..] (a contraction, as a 1x1 convolution to F * taps channels),
 * then each output position sums the taps that land on it (col2im): z at
 * the input position (o + pad - r * dilation) / stride where that divides
 * (cond) and is inside the input.  Written as one gather over all taps
 * and channels instead, each output position tried every tap against
 * every channel and kept one in stride^dims of them: U-Net's upsampling
 * ran at 0.8 GFLOP/s. */
/* The strides and leading pads of a ConvTranspose whose output positions
 * convtranspose_col2im sums phase by phase. */
typedef struct convt_phases {
    const int64_t *s, *pb;
} convt_phases;

static void convtranspose_col2im(ox_kernel *k, int nsp, const char *cond, const char *pos,
                                 const char *target, const int64_t *out, int64_t g, int64_t Fg,
                                 int64_t Cg, const convt_phases *phases)
{
    ox_str taps = {0}, in = {0};
    for (int d = 0; d < nsp; d++) {
        ox_printf(&taps, ", r%d", d);
        ox_printf(&in, ", i%d", d);
    }
    if (g == 1)
        ox_printf(&k->body, "    z[n, f%s%s] += x[n, c%s] * weight[c, f%s]\n", taps.s, in.s,
                  in.s, taps.s);
    else   /* output channel f reads the Cg input channels of its group */
        ox_printf(&k->body, "    z[n, f%s%s] += x[n, f / %lld * %lld + c%s] * weight[f / %lld * "
                  "%lld + c, f %% %lld%s] where f in 0..%lld, c in 0..%lld\n", taps.s, in.s,
                  (long long)Fg, (long long)Cg, in.s, (long long)Fg, (long long)Cg,
                  (long long)Fg, taps.s, (long long)(g * Fg), (long long)Cg);
    if (phases) {
        /* output position o = q * s + p (phase p): the taps r landing on it
         * are r = (p + pad) % s + s * j, reading input position q + (p +
         * pad) / s - j; a tap past the kernel or a position outside the
         * input reads 0 (else 0).  tp holds each phase's positions
         * contiguously; the last statement interleaves them. */
        ox_str tp = {0}, rd = {0}, rng = {0}, back = {0};
        for (int d = 0; d < nsp; d++) {
            long long sd = (long long)phases->s[d], pd = (long long)phases->pb[d];
            long long kd = (long long)k->nd->in[1]->shape[2 + d];
            ox_printf(&tp, ", p%d", d);
            ox_printf(&rd, ", (p%d + %lld) %% %lld + %lld * j%d", d, pd, sd, sd, d);
            ox_printf(&rng, ", p%d in 0..%lld, j%d in 0..%lld", d, sd, d, (kd + sd - 1) / sd);
            ox_printf(&back, ", o%d %% %lld", d, sd);
        }
        for (int d = 0; d < nsp; d++) {
            long long sd = (long long)phases->s[d], pd = (long long)phases->pb[d];
            ox_printf(&tp, ", q%d", d);
            ox_printf(&rd, ", q%d + (p%d + %lld) / %lld - j%d", d, d, pd, sd, d);
            ox_printf(&rng, ", q%d in 0..%lld", d, (long long)((out[d] + sd - 1) / sd));
            ox_printf(&back, ", o%d / %lld", d, sd);
        }
        ox_printf(&k->body, "    tp[n, f%s] += z[n, f%s] else 0 where %s\n", tp.s, rd.s,
                  rng.s + 2);
        ox_str o = {0}, orng = {0};
        for (int d = 0; d < nsp; d++) {
            ox_printf(&o, ", o%d", d);
            ox_printf(&orng, ", o%d in 0..%lld", d, (long long)out[d]);
        }
        ox_printf(&k->body, "    %s[n, f%s] = tp[n, f%s] where %s\n", target, o.s, back.s,
                  orng.s + 2);
        free(o.s);
        free(orng.s);
        free(tp.s);
        free(rd.s);
        free(rng.s);
        free(back.s);
    } else {
        ox_printf(&k->body, "    %s[n, f", target);
        for (int d = 0; d < nsp; d++)
            ox_printf(&k->body, ", o%d", d);
        ox_printf(&k->body, "] += %s%s%sz[n, f%s%s] else 0%s where ", cond ? "(" : "",
                  cond ? cond : "", cond ? " ? " : "", taps.s, pos, cond ? " : 0)" : "");
        for (int d = 0; d < nsp; d++)
            ox_printf(&k->body, "%so%d in 0..%lld, r%d in 0..%lld", d ? ", " : "", d,
                      (long long)out[d], d, (long long)k->nd->in[1]->shape[2 + d]);
        ox_printf(&k->body, "\n");
    }
    free(taps.s);
    free(in.s);
}

/* The most bytes ConvTranspose's column temporary z may take (N * F *
 * taps * input positions elements, in the compute dtype): a 3-D U-Net's
 * up-convolution of 64 channels on 64^3 to 64 channels with 3^3 taps
 * would need 1.8 GiB.  Above it the node gathers each output position's
 * taps itself (the grouped form: no temporary, stride^dims times the
 * multiplies). */
#define CONVT_COLUMNS_MAX ((int64_t)1 << 30)

/* Whether z of a ConvTranspose (x, W, F output channels) fits
 * CONVT_COLUMNS_MAX. */
static bool convtranspose_columns_fit(const ox_value *x, const ox_value *wv, int64_t F)
{
    int64_t bytes = ir_dtype_size(ox_compute_dtype(x->dtype));
    bool over = __builtin_mul_overflow(bytes, x->shape[0], &bytes) ||
                __builtin_mul_overflow(bytes, F, &bytes);
    for (int d = 2; d < x->ndim && !over; d++)
        over = __builtin_mul_overflow(bytes, x->shape[d], &bytes) ||
               __builtin_mul_overflow(bytes, wv->shape[d], &bytes);
    return !over && bytes <= CONVT_COLUMNS_MAX;
}

/* ConvTranspose as ordinary convolutions, one per phase of its output.
 * Along a spatial axis of stride s (dilation 1), the outputs o = q * s +
 * p of one phase p receive the taps r = rp + s * j (rp = (p + pad) mod s,
 * every s-th), tap j from input position q + a - j (a = (p + pad - rp) /
 * s): a correlation of x with those taps reversed, over Jp taps from
 * leading pad Jp - 1 - a.  Each phase is then the convolution the
 * scheduler makes fast, with a weight cut and reversed at import time,
 * and a last kernel interleaves the phases (and adds the bias).  The
 * phases do the multiply-adds of the columns form (every input position
 * times every tap) without its temporary z of N * F * taps * input
 * positions and without summing z's taps per output position: at 1
 * thread the columns form ran U-Net's 3x3/2 up-convolution (32 -> 16 on
 * 32x32) at 25 GFLOP/s and DCGAN's 4x4/2 ones at 10-55, the phases at
 * 100-160 (bench/results/convt_s23.txt).  With stride 1 there is one
 * phase: a convolution, its bias its own (as Conv's). */

/* One axis of one phase: the first tap rp and the number of taps J
 * landing on it, its outputs' count Q, and the input position a its
 * output 0 reads with tap rp (tap j reads q + a - j). */
typedef struct convt_axis {
    int64_t rp, J, Q, a;
} convt_axis;

/* Axis d's phase p (stride s, kernel K, leading pad pb, output size O). */
static convt_axis convt_axis_of(int64_t p, int64_t s, int64_t K, int64_t pb, int64_t O)
{
    int64_t rp = ((p + pb) % s + s) % s;
    convt_axis ax = {.rp = rp};
    ax.J = rp < K ? (K - rp + s - 1) / s : 0;
    ax.Q = O > p ? (O - p + s - 1) / s : 0;
    int64_t num = p + pb - rp;   /* a multiple of s */
    ax.a = num >= 0 ? num / s : -((-num) / s);
    return ax;
}

/* The weight of one phase's convolution, [F, Cg, J...] from
 * ConvTranspose's W [C, Fg, K...] (g groups): W_p[f, c, j...] = W[f / Fg *
 * Cg + c, f % Fg, rp + s * (J - 1 - j)...], the phase's taps reversed. */
static rt_tensor *convt_phase_weight(ox_node *nd, const rt_tensor *W, int64_t g,
                                     const convt_axis *ax, const int64_t *s)
{
    int nsp = W->ndim - 2;
    int64_t Cg = W->shape[0] / g, Fg = W->shape[1];
    int64_t shape[RT_MAX_DIMS] = {Fg * g, Cg};
    for (int d = 0; d < nsp; d++)
        shape[2 + d] = ax[d].J;
    char err[256];
    rt_tensor *c = rt_tensor_new(W->dtype, W->ndim, shape, err, sizeof err);
    if (!c) {
        ox_fail(nd, "%s", err);
        return NULL;
    }
    size_t esize = W->nbytes / (size_t)rt_tensor_numel(W);
    int64_t n = rt_tensor_numel(c);
    for (int64_t i = 0; i < n; i++) {   /* element i of c: its index, then W's offset */
        int64_t rest = i, idx[RT_MAX_DIMS];
        for (int d = c->ndim - 1; d >= 0; d--) {
            idx[d] = rest % c->shape[d];
            rest /= c->shape[d];
        }
        int64_t f = idx[0], off = f / Fg * Cg + idx[1];
        off = off * W->shape[1] + f % Fg;
        for (int d = 0; d < nsp; d++)
            off = off * W->shape[2 + d] + ax[d].rp + s[d] * (ax[d].J - 1 - idx[2 + d]);
        memcpy((char *)c->data + (size_t)i * esize, (const char *)W->data + (size_t)off * esize,
               esize);
    }
    return c;
}

/* Most phases (the product of the strides): the kernel that interleaves
 * them has one operand each. */
#define CONVT_MAX_PHASES 32

/* Whether op_convtranspose lowers x, W (g groups) to phases: a constant W
 * (its phases' weights are cut at import time), dilation 1, at most
 * CONVT_MAX_PHASES phases, and a compute dtype that is x's (a widened
 * kernel's weights stay in their storage dtype).  Not with fewer than 8
 * output channels when the columns' contraction has 32 or more (F *
 * taps): a convolution to so few channels runs at a third of its speed
 * (its register tile is F x 32 outputs: 6 accumulators at F = 3), where
 * the contraction to F * taps channels runs at full speed (DCGAN's last
 * 4x4/2 layer, 64 -> 3 channels on 32x32: 65 us as columns, 161 as
 * phases; with 8 channels 173 against 154). */
static bool convt_phased(const ox_value *x, const ox_value *wv, int64_t F, const int64_t *s,
                         const int64_t *dl)
{
    if (!ox_is_param(wv) || ox_compute_dtype(x->dtype) != x->dtype)
        return false;
    int64_t phases = 1, taps = 1;
    for (int d = 0; d < x->ndim - 2; d++) {
        if (dl[d] != 1 || s[d] > CONVT_MAX_PHASES)
            return false;
        phases *= s[d];
        taps *= wv->shape[2 + d];
        if (phases > CONVT_MAX_PHASES)
            return false;
    }
    return F >= 8 || F * taps < 32;
}

/* Phase number i's digit along axis d (axis 0 the most significant). */
static int64_t convt_digit(int64_t i, int d, int nsp, const int64_t *s)
{
    for (int e = nsp - 1; e > d; e--)
        i /= s[e];
    return i % s[d];
}

/* The selection among the phases p[] (live[i]: phase i has a
 * convolution, else it reads 0) of the blocked output position (q_d, a_d
 * for each axis d, a_d the phase's digit, absent at stride 1), from axis
 * d on, phase number i so far: nested selects on a_d. */
static void convt_select(ox_kernel *k, const char *const *roles, const bool *live, int nsp,
                         const int64_t *s, bool merged, int d, int64_t i)
{
    if (d == nsp) {
        if (!live[i]) {
            ox_printf(&k->body, "0");
            return;
        }
        ox_printf(&k->body, "%s[n, f", roles[i]);
        for (int e = 0; e < nsp; e++)
            if (merged && e == nsp - 1)
                ox_printf(&k->body, ", w / %lld", (long long)s[e]);
            else
                ox_printf(&k->body, ", q%d", e);
        ox_printf(&k->body, "]");
        return;
    }
    for (int64_t a = 0; a < s[d] - 1; a++) {
        if (merged && d == nsp - 1)
            ox_printf(&k->body, "(w %% %lld == %lld ? ", (long long)s[d], (long long)a);
        else
            ox_printf(&k->body, "(a%d == %lld ? ", d, (long long)a);
        convt_select(k, roles, live, nsp, s, merged, d + 1, i * s[d] + a);
        ox_printf(&k->body, " : ");
    }
    convt_select(k, roles, live, nsp, s, merged, d + 1, i * s[d] + s[d] - 1);
    for (int64_t a = 0; a < s[d] - 1; a++)
        ox_printf(&k->body, ")");
}

/* y = the phases p[] interleaved (+ bias) when every output size is a
 * multiple of its stride: a kernel writes y blocked, [N, F, (Q_d, s_d)
 * for each axis d] (every phase has Q_d = out_d / s_d outputs; an axis of
 * stride 1 is Q_d alone), of which y is the reshape.  Its loops run over
 * the phase digits a_d, each a loop of its own, so that a phase's reads
 * are consecutive and its selects invariant in the loops inside them;
 * written on y's positions o (selecting on o % s in each lane, reading at
 * o / s), the interleaving ran 2.6x slower (U-Net's 16 channels of
 * 128x128: 152 us against 58). */
static bool convt_interleave_blocked(ox_node *nd, ox_value *parts, const bool *live,
                                     const int64_t *s, ox_value *bias, ox_value *y)
{
    int nsp = y->ndim - 2;
    int64_t nph = 1;
    for (int d = 0; d < nsp; d++)
        nph *= s[d];
    ox_value t = {.dtype = y->dtype};
    ox_str onnx = {0}, left = {0};
    ox_printf(&onnx, "%s_blocked", y->onnx);
    t.onnx = onnx.s;
    t.shape[t.ndim++] = y->shape[0];
    t.shape[t.ndim++] = y->shape[1];
    ox_printf(&left, "n, f");
    bool merged = nsp > 0 && s[nsp - 1] > 1;
    for (int d = 0; d < nsp; d++) {   /* at most RT_MAX_DIMS in all: the caller's test */
        if (merged && d == nsp - 1) {   /* the last axis whole, w = q * s + a */
            t.shape[t.ndim++] = y->shape[2 + d];
            ox_printf(&left, ", w");
            continue;
        }
        t.shape[t.ndim++] = y->shape[2 + d] / s[d];
        ox_printf(&left, ", q%d", d);
        if (s[d] > 1) {
            t.shape[t.ndim++] = s[d];
            ox_printf(&left, ", a%d", d);
        }
    }
    ox_kernel k;
    ox_kernel_init(&k, nd);
    const char *roles[CONVT_MAX_PHASES] = {0};
    for (int64_t i = 0; i < nph; i++) {
        if (!live[i])
            continue;
        char role[24];
        snprintf(role, sizeof role, "p%lld", (long long)i);
        roles[i] = ox_kernel_role(&k, role);
        ox_operand(&k, &parts[i], roles[i]);
    }
    ox_printf(&k.body, "    y[%s] = ", left.s);
    convt_select(&k, roles, live, nsp, s, merged, 0, 0);
    if (bias) {
        ox_operand(&k, bias, "bias");
        ox_printf(&k.body, " + bias[f]");
    }
    ox_printf(&k.body, "\n");
    bool ok = ox_kernel_finish(&k, "conv_transpose", &t, NULL);
    ox_kernel_free(&k);
    if (ok) {
        ox_str call = {0};
        ox_printf(&call, "reshape(%s", t.id);
        for (int i = 0; i < y->ndim; i++)
            ox_printf(&call, ", %lld", (long long)y->shape[i]);
        ox_printf(&call, ")");
        ok = ox_call_view(nd, y, call.s, "blocks");
        /* a view of t, a value of this node alone (not of the node's
         * input, which ox_call_view takes it for) */
        y->view_of = NULL;
        y->view_of_input = false;
        free(call.s);
    }
    free(onnx.s);
    free(left.s);
    return ok;
}

static bool convtranspose_phases(ox_node *nd, ox_value *x, ox_value *wv, ox_value *bias,
                                 int64_t g, const int64_t *s, const int64_t *pb,
                                 const int64_t *out, ox_value *y)
{
    int nsp = x->ndim - 2;
    int64_t F = wv->shape[1] * g, nph = 1;
    for (int d = 0; d < nsp; d++)
        nph *= s[d];
    ox_value parts[CONVT_MAX_PHASES];
    char *names[CONVT_MAX_PHASES] = {0};
    bool live[CONVT_MAX_PHASES] = {0};
    bool ok = true;
    for (int64_t i = 0; i < nph && ok; i++) {
        convt_axis ax[RT_MAX_DIMS];
        window w = {.nsp = nsp};
        live[i] = true;
        for (int d = 0; d < nsp; d++) {
            ax[d] = convt_axis_of(convt_digit(i, d, nsp, s), s[d], wv->shape[2 + d], pb[d],
                                  out[d]);
            live[i] = live[i] && ax[d].J > 0 && ax[d].Q > 0;
            w.k[d] = ax[d].J;
            w.s[d] = w.dil[d] = 1;
            w.pb[d] = ax[d].J - 1 - ax[d].a;
            w.out[d] = ax[d].Q;
            w.pe[d] = w.out[d] + w.k[d] - 1 - x->shape[2 + d] - w.pb[d];
        }
        if (!live[i])
            continue;   /* no taps land on it (it is the bias), or no outputs */
        ox_value cut = *wv;
        if (!(cut.konst = convt_phase_weight(nd, wv->konst, g, ax, s))) {
            ok = false;
            break;
        }
        memcpy(cut.shape, cut.konst->shape, sizeof cut.shape);
        if (nph == 1) {   /* stride 1: a convolution, as Conv's */
            ok = conv_of(nd, x, &cut, bias, &w, y, g);
            rt_tensor_free(cut.konst);
            return ok;
        }
        ox_str name = {0};
        ox_printf(&name, "%s_phase%lld", y->onnx, (long long)i);
        names[i] = name.s;
        parts[i] = (ox_value){.onnx = names[i], .dtype = x->dtype, .ndim = x->ndim};
        parts[i].shape[0] = x->shape[0];
        parts[i].shape[1] = F;
        for (int d = 0; d < nsp; d++)
            parts[i].shape[2 + d] = ax[d].Q;
        char suffix[32];
        snprintf(suffix, sizeof suffix, "phase%lld", (long long)i);
        ok = conv_kernel(nd, x, &cut, NULL, &w, &parts[i], g, suffix);
        rt_tensor_free(cut.konst);
    }
    /* the blocks have a dimension more per strided axis */
    bool divides = true;
    int blocked_rank = 2 + nsp;
    for (int d = 0; d < nsp; d++) {
        divides = divides && out[d] % s[d] == 0;
        blocked_rank += s[d] > 1;
    }
    divides = divides && blocked_rank <= RT_MAX_DIMS;
    if (ok && divides) {
        ok = convt_interleave_blocked(nd, parts, live, s, bias, y);
    } else if (ok) {
        /* y[n, f, o...] = phase (o % s...)[n, f, o / s...] (+ bias) */
        ox_kernel k;
        ox_kernel_init(&k, nd);
        ox_str o = {0}, rng = {0};
        for (int d = 0; d < nsp; d++) {
            ox_printf(&o, ", o%d", d);
            ox_printf(&rng, "%so%d in 0..%lld", d ? ", " : "", d, (long long)out[d]);
        }
        ox_printf(&k.body, "    y[n, f%s] = ", o.s);
        int nlive = 0;
        for (int64_t i = 0; i < nph; i++)
            nlive += live[i];
        int open = 0;
        for (int64_t i = 0, seen = 0; i < nph; i++) {
            if (!live[i])
                continue;
            char role[24];
            snprintf(role, sizeof role, "p%lld", (long long)i);
            const char *r = ox_kernel_role(&k, role);
            ox_operand(&k, &parts[i], r);
            ox_str cond = {0}, read = {0};
            ox_printf(&read, "%s[n, f", r);
            for (int d = 0; d < nsp; d++) {
                if (s[d] == 1) {
                    ox_printf(&read, ", o%d", d);
                    continue;
                }
                ox_printf(&cond, "%so%d %% %lld == %lld", cond.s ? " && " : "", d,
                          (long long)s[d], (long long)convt_digit(i, d, nsp, s));
                ox_printf(&read, ", o%d / %lld", d, (long long)s[d]);
            }
            /* a phase has fewer positions than o / s reaches in another's */
            ox_printf(&read, "] else 0");
            /* the last live phase needs no test when every phase is live */
            if (++seen < nlive || nlive < nph) {
                ox_printf(&k.body, "(%s ? %s : ", cond.s, read.s);
                open++;
            } else
                ox_printf(&k.body, "%s", read.s);
            free(cond.s);
            free(read.s);
        }
        if (nlive < nph)
            ox_printf(&k.body, "0");
        for (int i = 0; i < open; i++)
            ox_printf(&k.body, ")");
        if (bias) {
            ox_operand(&k, bias, "bias");
            ox_printf(&k.body, " + bias[f]");
        }
        ox_printf(&k.body, " where %s\n", rng.s);
        free(o.s);
        free(rng.s);
        ok = ox_kernel_finish(&k, "conv_transpose", y, NULL);
        ox_kernel_free(&k);
    }
    for (int64_t i = 0; i < nph; i++)
        free(names[i]);
    return ok;
}

static bool op_convtranspose(ox_node *nd, const void *arg)
{
    ox_value *x = ox_input(nd, 0), *wv = ox_input(nd, 1);
    ox_value *bias = nd->nin > 2 ? nd->in[2] : NULL;
    if (!x || !wv || !ox_need_float(nd, x) || !ox_same_dtypes(nd, 0, 2))
        return false;
    if (x->ndim < 3 || wv->ndim != x->ndim)
        return ox_fail(nd, "x (rank %d) and W (rank %d) must have the same rank, at least 3",
                       x->ndim, wv->ndim);
    int nsp = x->ndim - 2;
    int64_t g = ox_attr_int(nd, "group", 1), C = x->shape[1];
    int64_t Fg = wv->shape[1], F = g >= 1 && g <= C ? Fg * g : 0, Cg = g >= 1 ? C / g : 0;
    if (g < 1 || g > C || C % g || wv->shape[0] != C)
        return ox_fail(nd, "x has %lld channels and W is [%lld, %lld, ...], which group=%lld "
                       "does not fit", (long long)C, (long long)wv->shape[0], (long long)Fg,
                       (long long)g);
    if (bias && (bias->ndim != 1 || bias->shape[0] != F))
        return ox_fail(nd, "the bias must have %lld entries", (long long)F);
    int64_t s[RT_MAX_DIMS], dl[RT_MAX_DIMS], pb[RT_MAX_DIMS], out[RT_MAX_DIMS];
    if (!convtranspose_geometry(nd, x, wv, s, dl, pb, out))
        return false;
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = x->ndim;
    y->shape[0] = x->shape[0];
    y->shape[1] = F;
    for (int d = 0; d < nsp; d++)
        y->shape[2 + d] = out[d];
    if (convt_phased(x, wv, F, s, dl))
        return convtranspose_phases(nd, x, wv, bias, g, s, pb, out, y);
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
    /* with a stride, summing each phase of the output (the positions
     * o = q * stride + p of one p) over the taps that land on it, known
     * at import time, instead of testing every tap at every position: 10x
     * faster at stride 2 (at dilation 1 and pads >= 0 only: the phase's
     * taps are then every stride-th) */
    bool strided = false, phased = true;
    for (int d = 0; d < nsp; d++) {
        strided = strided || s[d] > 1;
        phased = phased && dl[d] == 1 && pb[d] >= 0;
    }
    convt_phases ph = {s, pb};
    if (convtranspose_columns_fit(x, wv, F)) {
        convtranspose_col2im(&k, nsp, cond.s, pos.s, bias ? "t" : "y", out, g, Fg, Cg,
                             strided && phased ? &ph : NULL);
    } else {
        /* each output position tries every tap of its group's channels
         * (all channels without groups) */
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
    }
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

/* ---------------------------------------------------------------- Resize */

/* The floats of constant input i (Resize's scales and roi): their count,
 * 0 for an absent or empty input, or -1 after an error. */
static int const_floats(ox_node *nd, int i, double *out, int max)
{
    ox_value *v = i < nd->nin ? nd->in[i] : NULL;
    if (!v)
        return 0;
    if (!v->konst) {   /* the error, with the chain that made it a run-time value */
        int64_t none[RT_MAX_DIMS * 2];
        return ox_const_ints(nd, i, none, RT_MAX_DIMS * 2) < 0 ? -1 : 0;
    }
    int64_t n = rt_tensor_numel(v->konst);
    if (v->konst->ndim > 1 || n > max) {
        ox_fail(nd, "input %d ('%s') must be a 1-D tensor of at most %d values", i + 1, v->onnx,
                max);
        return -1;
    }
    for (int64_t k = 0; k < n; k++)
        out[k] = rt_tensor_get(v->konst, k);
    return (int)n;
}

/* Output position o of an axis of in positions resized by scale, mapped
 * back to a (fractional) input position as coordinate_transformation_mode
 * says.  len is the resized length the formulas divide by: in * scale
 * (unrounded, as ONNX's reference has it) for scales, the size for sizes;
 * roi: the axis' start and end (tf_crop_and_resize). */
static double resize_coord(const char *ctm, double o, double scale, int64_t in, double len,
                           const double *roi)
{
    if (strcmp(ctm, "half_pixel") == 0)
        return (o + 0.5) / scale - 0.5;
    if (strcmp(ctm, "pytorch_half_pixel") == 0)
        return len == 1 ? -0.5 : (o + 0.5) / scale - 0.5;
    if (strcmp(ctm, "align_corners") == 0)
        return len == 1 ? 0 : o * (double)(in - 1) / (len - 1);
    if (strcmp(ctm, "tf_half_pixel_for_nn") == 0)
        return (o + 0.5) / scale;
    if (strcmp(ctm, "half_pixel_symmetric") == 0) {   /* opset 19: half_pixel about the
                                                         middle of the input */
        double adjustment = floor(len) / len;
        return (double)in / 2 * (1 - adjustment) + (o + 0.5) / scale - 0.5;
    }
    if (strcmp(ctm, "tf_crop_and_resize") == 0)
        return (len == 1 ? (roi[1] - roi[0]) * (double)(in - 1) / 2
                         : o * (roi[1] - roi[0]) * (double)(in - 1) / (len - 1)) +
               roi[0] * (double)(in - 1);
    return o / scale;   /* asymmetric */
}

static int64_t clamp_index(double i, int64_t in)
{
    return i < 0 ? 0 : i > (double)(in - 1) ? in - 1 : (int64_t)i;
}

/* Keys' cubic convolution weight of a neighbour at distance d (0 <= d < 2). */
static double cubic_weight(double d, double a)
{
    return d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1 : ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
}

/* What a Resize (or Upsample) node asks for, from its attributes and its
 * constant inputs: the taps each output position reads, how positions map
 * back and round, and the result's extents. */
typedef struct resize_spec {
    bool upsample, old, exclude, crop;
    bool antialias;          /* opset 18's, linear or cubic: refused where an axis shrinks */
    const char *mode, *ctm, *nearest;
    double a, extrapolation;
    int taps;                          /* 1 nearest, 2 linear, 4 cubic */
    int R, nsc;                        /* the rank; how many scales were given (0: sizes) */
    double sc[RT_MAX_DIMS], roi[2 * RT_MAX_DIMS];
    int64_t out[RT_MAX_DIMS];
} resize_spec;

/* The `state` tables of the kernel: per resized axis d and tap t, ix<d>_<t>
 * (indices) and w<d>_<t> (weights, not for nearest); v<d> with crop (the
 * positions inside the input). */
typedef struct resize_tables {
    rt_tensor *t[RT_MAX_DIMS * 9];
    ox_value v[RT_MAX_DIMS * 9];
    char role[RT_MAX_DIMS * 9][16];
    int n;
    int resized[RT_MAX_DIMS], nres;   /* the axes that change */
    bool spread[RT_MAX_DIMS];         /* axes of one position, made longer: read at 0 */
    char index[RT_MAX_DIMS][4][128];  /* axis d's tap t as arithmetic of i<d>, without a
                                         table (resize_index_formula); "" else */
} resize_tables;

/* The attributes: mode, coordinate_transformation_mode, nearest_mode,
 * cubic_coeff_a, exclude_outside, extrapolation_value (Upsample and opsets
 * before 11: asymmetric with ONNX Runtime's rounding); false after an
 * error when one is not supported. */
static bool resize_attrs(ox_node *nd, ox_value *x, resize_spec *rs)
{
    bool upsample = rs->upsample;
    rs->mode = ox_attr_str(nd, "mode", "nearest");
    rs->old = upsample || nd->opset < 11;
    bool old = rs->old;
    rs->ctm = old ? "asymmetric" : ox_attr_str(nd, "coordinate_transformation_mode", "half_pixel");
    rs->nearest = old ? "simple" : ox_attr_str(nd, "nearest_mode", "round_prefer_floor");
    rs->a = ox_attr_float(nd, "cubic_coeff_a", -0.75);
    rs->exclude = !old && ox_attr_int(nd, "exclude_outside", 0);
    rs->extrapolation = ox_attr_float(nd, "extrapolation_value", 0);
    const char *mode = rs->mode;
    rs->taps = strcmp(mode, "nearest") == 0 ? 1
               : strcmp(mode, "linear") == 0 || (upsample && strcmp(mode, "bilinear") == 0) ? 2
               : strcmp(mode, "cubic") == 0 && !old ? 4 : 0;
    if (!rs->taps)
        return ox_fail(nd, "mode '%s' is not supported (nearest, linear%s)", mode,
                       old ? "" : " and cubic");
    static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                       "half_pixel_symmetric"};
    static const char *const roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil", "simple"};
    bool known_ctm = false, known_rounding = false;
    for (size_t i = 0; i < sizeof ctms / sizeof *ctms; i++)
        known_ctm |= strcmp(rs->ctm, ctms[i]) == 0 && (i < 6 || nd->opset >= 19);
    for (size_t i = 0; i < sizeof roundings / sizeof *roundings; i++)
        known_rounding |= strcmp(rs->nearest, roundings[i]) == 0 && (old || i < 4);
    if (!known_ctm)
        return ox_fail(nd, "coordinate_transformation_mode '%s' is not one of ONNX's", rs->ctm);
    if (!known_rounding)
        return ox_fail(nd, "nearest_mode '%s' is not one of ONNX's", rs->nearest);
    rs->crop = strcmp(rs->ctm, "tf_crop_and_resize") == 0;
    const char *policy = ox_attr_str(nd, "keep_aspect_ratio_policy", "stretch");
    if (!old && strcmp(policy, "stretch") != 0)
        return ox_fail(nd, "keep_aspect_ratio_policy '%s' is not supported (only 'stretch')",
                       policy);
    rs->antialias = !old && rs->taps > 1 && ox_attr_int(nd, "antialias", 0) != 0;
    return rs->taps == 1 || ox_need_float(nd, x);
}

/* Opset 18's attribute axes: the scales or sizes (and the roi) are those
 * of these axes only; spread to every axis, the others keeping their
 * length.  *nsz and *nroi: how many sizes and roi values there are now. */
static bool resize_spread_axes(ox_node *nd, const ox_value *x, resize_spec *rs,
                               const int64_t *axes, int na, int *nsz, int *nroi)
{
    int R = rs->R, n = rs->nsc ? rs->nsc : *nsz;
    if (n != na)
        return ox_fail(nd, "%s has %d values for %d axes", rs->nsc ? "scales" : "sizes", n, na);
    if (rs->crop && *nroi != 2 * na)
        return ox_fail(nd, "tf_crop_and_resize needs a roi of %d values (it has %d)", 2 * na,
                       *nroi);
    double sc[RT_MAX_DIMS], roi[2 * RT_MAX_DIMS];
    int64_t out[RT_MAX_DIMS];
    bool seen[RT_MAX_DIMS] = {0};
    for (int d = 0; d < R; d++)
        sc[d] = 1, out[d] = x->shape[d], roi[d] = 0, roi[R + d] = 1;
    for (int i = 0; i < na; i++) {
        int a;
        if (!ox_axis(nd, axes[i], R, &a))
            return false;
        if (seen[a])
            return ox_fail(nd, "axis %lld is named twice", (long long)axes[i]);
        seen[a] = true;
        sc[a] = rs->sc[i], out[a] = rs->out[i];
        if (rs->crop)
            roi[a] = rs->roi[i], roi[R + a] = rs->roi[na + i];
    }
    memcpy(rs->sc, sc, sizeof sc);
    memcpy(rs->out, out, sizeof out);
    memcpy(rs->roi, roi, sizeof roi);
    if (rs->nsc)
        rs->nsc = R;
    else
        *nsz = R;
    if (rs->crop)
        *nroi = 2 * R;
    return true;
}

/* The scales or the sizes (an attribute of Upsample before opset 9, else
 * constant inputs), the roi of tf_crop_and_resize, and from them the
 * result's extents rs->out and every axis' scale; false after an error. */
static bool resize_extents(ox_node *nd, const ox_value *x, resize_spec *rs)
{
    int R = rs->R, nsz = 0, nroi = 0;
    double *sc = rs->sc, *roi = rs->roi;
    int64_t *out = rs->out;
    if (rs->upsample && nd->opset < 9) {
        const Onnx__AttributeProto *at = ox_attr(nd, "scales");
        rs->nsc = at ? (int)at->n_floats : 0;
        for (int d = 0; d < rs->nsc && d < RT_MAX_DIMS; d++)
            sc[d] = at->floats[d];
    } else if (rs->old) {
        rs->nsc = const_floats(nd, 1, sc, RT_MAX_DIMS);
    } else {
        if (rs->crop)   /* else the roi is not read */
            nroi = const_floats(nd, 1, roi, 2 * RT_MAX_DIMS);
        rs->nsc = const_floats(nd, 2, sc, RT_MAX_DIMS);
        nsz = nd->nin > 3 && nd->in[3] ? ox_const_ints(nd, 3, out, RT_MAX_DIMS) : 0;
    }
    if (nroi < 0 || rs->nsc < 0 || nsz < 0)
        return false;
    if ((rs->nsc > 0) == (nsz > 0))
        return ox_fail(nd, "give either scales or sizes (%s)", rs->nsc ? "both are given"
                                                                       : "neither is given");
    const int64_t *axes;
    int na = nd->opset >= 18 && !rs->old ? ox_attr_ints(nd, "axes", &axes) : 0;
    if (na && !resize_spread_axes(nd, x, rs, axes, na, &nsz, &nroi))
        return false;
    int nsc = rs->nsc;
    if ((nsc ? nsc : nsz) != R)
        return ox_fail(nd, "%s has %d values for an input of rank %d", nsc ? "scales" : "sizes",
                       nsc ? nsc : nsz, R);
    if (rs->crop && nroi != 2 * R)
        return ox_fail(nd, "tf_crop_and_resize needs a roi of %d values (it has %d)", 2 * R, nroi);
    for (int d = 0; d < R; d++) {
        if (nsc && !(sc[d] > 0 && sc[d] * (double)x->shape[d] < (double)OX_MAX_NUMEL))
            return ox_fail(nd, "scale %g of axis %d is not a positive size factor", sc[d], d);
        if (nsc)
            out[d] = (int64_t)floor((double)x->shape[d] * sc[d] *
                                    (rs->crop ? roi[R + d] - roi[d] : 1));
        else
            sc[d] = (double)out[d] / (double)x->shape[d];
        if (out[d] < 1)
            return ox_fail(nd, "axis %d of the result would have %lld positions", d,
                           (long long)out[d]);
        if (rs->antialias && sc[d] < 1)
            return ox_fail(nd, "antialias 1 is not supported where an axis shrinks (axis %d, "
                           "scale %g)", d, sc[d]);
    }
    return true;
}

/* The taps of an output position whose input position is c on an axis of
 * in positions with scale `scale`: their indices at[] and weights w[]. */
static void resize_taps(const resize_spec *rs, double c, double scale, int64_t in, int64_t *at,
                        double *w)
{
    double f = floor(c);
    w[0] = 1, w[1] = w[2] = w[3] = 0;
    if (rs->taps == 1) {
        const char *nearest = rs->nearest;
        double fr = c - f;
        bool up = strcmp(nearest, "round_prefer_floor") == 0 ? fr > 0.5
                  : strcmp(nearest, "round_prefer_ceil") == 0 ? fr >= 0.5
                  : strcmp(nearest, "floor") == 0 ? false
                  : strcmp(nearest, "ceil") == 0 ? fr > 0
                  : scale < 1 ? fr > 0 : c < 0 && fr > 0;   /* simple: ceil down, trunc up */
        at[0] = clamp_index(up ? f + 1 : f, in);
    } else if (rs->taps == 2) {
        at[0] = clamp_index(f, in), at[1] = clamp_index(f + 1, in);
        w[0] = 1 - (c - f), w[1] = c - f;
    } else {
        double sum = 0;
        for (int j = 0; j < 4; j++) {
            double pos = f - 1 + j;
            w[j] = cubic_weight(fabs(c - pos), rs->a);
            if (rs->exclude && (pos < 0 || pos > (double)(in - 1)))
                w[j] = 0;
            sum += w[j];
            at[j] = clamp_index(pos, in);
        }
        for (int j = 0; rs->exclude && sum != 0 && j < 4; j++)
            w[j] /= sum;
    }
}

/* Tap t's index on axis d as arithmetic of the output position i<d>, when
 * it equals the table ix (of O positions) at every position: the input
 * position that coordinate_transformation_mode maps i<d> back to is an
 * exact fraction c = (P * i + Q) / D of the input's and the output's
 * lengths (half_pixel: (i + 1/2) * in / out - 1/2), and the tap's index
 * its floor plus the tap's offset (linear and cubic), or its rounding by
 * nearest_mode (ceil(c - 1/2) for round_prefer_floor ...), each a floor
 * division s * ((a * i + b) / e), clamped to the axis, as resize_taps
 * computes it in floating point.  An index a kernel computes is one tec
 * proves in range, so the kernel needs no run-time check, which would keep
 * it from being vectorized and parallelized; a table read is an index tec
 * cannot judge.  Into out; false (out untouched) where the arithmetic and
 * the table differ (scales that are not out / in, rounding) or the mode
 * has none. */
static bool resize_index_formula(const resize_spec *rs, int d, int t, int64_t in,
                                 const int32_t *ix, int64_t O, char *out, size_t size)
{
    const char *ctm = rs->ctm, *nearest = rs->nearest;
    int64_t P, Q, D;
    if (rs->crop || O < 2 || in > (int64_t)1 << 20 || O > (int64_t)1 << 20)
        return false;
    if (strcmp(ctm, "half_pixel") == 0 || strcmp(ctm, "pytorch_half_pixel") == 0)
        P = 2 * in, Q = in - O, D = 2 * O;
    else if (strcmp(ctm, "align_corners") == 0)
        P = in - 1, Q = 0, D = O - 1;
    else if (strcmp(ctm, "asymmetric") == 0)
        P = in, Q = 0, D = O;
    else if (strcmp(ctm, "tf_half_pixel_for_nn") == 0)
        P = 2 * in, Q = in, D = 2 * O;
    else
        return false;
    int64_t a = P, b = Q, e = D, sgn = 1;   /* floor(c) */
    int64_t off = rs->taps == 1 ? 0 : rs->taps == 2 ? t : t - 1;   /* from the floor */
    if (rs->taps == 1 && strcmp(nearest, "round_prefer_ceil") == 0)
        a = 2 * P, b = 2 * Q + D, e = 2 * D;                 /* floor(c + 1/2) */
    else if (rs->taps == 1 && strcmp(nearest, "round_prefer_floor") == 0)
        a = -2 * P, b = D - 2 * Q, e = 2 * D, sgn = -1;      /* ceil(c - 1/2) */
    else if (rs->taps == 1 && strcmp(nearest, "ceil") == 0)
        a = -P, b = -Q, sgn = -1;                            /* ceil(c) */
    /* in lowest terms: floor((a*o + b) / e) = floor((a/g * o + floor(b/g)) / (e/g))
     * for g = gcd(a, e), exactly (a*o + b = g * (a/g * o + floor(b/g)) + r
     * with 0 <= r < g, which cannot carry the quotient by e past a whole
     * number): nearest upsampling by 2 reads x[i / 2], not x[(32 * i) / 64] */
    int64_t g = a < 0 ? -a : a, h = e;
    while (h) {
        int64_t t = g % h;
        g = h, h = t;
    }
    if (g > 1) {
        a /= g, e /= g;
        b = b >= 0 ? b / g : -((-b + g - 1) / g);
    }
    for (int64_t o = 0; o < O; o++) {
        int64_t num = a * o + b, f = num >= 0 ? num / e : -((-num + e - 1) / e);
        int64_t v = sgn * f + off;
        if ((v < 0 ? 0 : v > in - 1 ? in - 1 : v) != ix[o])
            return false;
    }
    char bs[32] = "", os[32] = "";
    if (b)
        snprintf(bs, sizeof bs, " %c %lld", b < 0 ? '-' : '+', (long long)(b < 0 ? -b : b));
    if (off)
        snprintf(os, sizeof os, " %c %lld", off < 0 ? '-' : '+', (long long)(off < 0 ? -off : off));
    char as[32] = "";
    if (a != 1)
        snprintf(as, sizeof as, "%lld * ", (long long)a);
    snprintf(out, size, "min(max(%s(%si%d%s) / %lld%s%s, 0), %lld)", sgn < 0 ? "-(" : "", as, d, bs,
             (long long)e, sgn < 0 ? ")" : "", os, (long long)(in - 1));
    return true;
}

/* The tables of axis d (of in positions) into tb, filled; nothing for an
 * axis that does not change.  False after an error. */
static bool resize_axis_tables(ox_node *nd, const resize_spec *rs, int d, int64_t in,
                               ir_dtype wt, resize_tables *tb)
{
    int R = rs->R, taps = rs->taps;
    bool crop = rs->crop;
    int64_t O = rs->out[d];
    double len = rs->nsc ? (double)in * rs->sc[d] : (double)O;
    double ends[2] = {crop ? rs->roi[d] : 0, crop ? rs->roi[R + d] : 1};   /* roi: starts, ends */
    /* unchanged: every position maps to itself (an axis of one position
     * always does, its reads clamped to it, unless cropped).  An axis of
     * scale 1 does too, whatever the mode of coordinates says, as ONNX
     * Runtime reads it (it maps such an axis to itself in every mode):
     * tf_half_pixel_for_nn's (o + 1/2) / 1 would round to o + 1 with
     * round_prefer_ceil or ceil, and tf_crop_and_resize's roi would move
     * it */
    bool same = O == in;
    bool scale1 = same && rs->sc[d] == 1.0;
    for (int64_t o = 0; o < O && same && !scale1 && (in > 1 || crop); o++)
        same = resize_coord(rs->ctm, (double)o, rs->sc[d], in, len, ends) == (double)o;
    if (same)
        return true;
    /* an axis of one position (not cropped) made longer: every output
     * position reads that one, its taps' weights summing to 1 in every
     * mode, so each is a copy of it, exactly (a sum of its products by
     * weights would round apart from it and from one another) */
    if (in == 1 && !crop) {
        tb->spread[d] = true;
        return true;
    }
    tb->resized[tb->nres++] = d;
    if (tb->nres > 3 && taps > 1)
        return ox_fail(nd, "%s interpolation on more than 3 axes is not supported", rs->mode);
    int first = tb->n;
    for (int t = 0; t < taps * 2 + crop; t++) {
        bool weight = t >= taps && t < 2 * taps, mask = t == 2 * taps;
        if (taps == 1 && weight)
            continue;
        rt_tensor *table = ox_const_new(nd, weight ? wt : IR_I32, 1, &O);
        if (!table)
            return false;
        char *role = tb->role[tb->n];
        if (mask)
            snprintf(role, sizeof tb->role[0], "v%d", d);
        else
            snprintf(role, sizeof tb->role[0], "%s%d_%d", weight ? "w" : "ix", d, t % taps);
        tb->t[tb->n] = table;
        tb->v[tb->n] = (ox_value){.onnx = role, .konst = table, .uses = 1,
                                  .dtype = table->dtype, .ndim = 1, .shape = {O}};
        tb->n++;
    }
    rt_tensor **tab = tb->t + first;
    for (int64_t o = 0; o < O; o++) {
        double c = resize_coord(rs->ctm, (double)o, rs->sc[d], in, len, ends), w[4];
        int64_t at[4];
        resize_taps(rs, c, rs->sc[d], in, at, w);
        for (int j = 0; j < taps; j++)
            ((int32_t *)tab[j]->data)[o] = (int32_t)at[j];
        for (int j = 0; j < taps && taps > 1; j++) {
            if (wt == IR_F64)
                ((double *)tab[taps + j]->data)[o] = w[j];
            else
                ((float *)tab[taps + j]->data)[o] = (float)w[j];
        }
        if (crop)
            ((int32_t *)tab[taps > 1 ? 2 * taps : 1]->data)[o] = c >= 0 && c <= (double)(in - 1);
    }
    /* the index tables (the first taps of the axis') that arithmetic says
     * go; the weights stay */
    bool all = true;
    for (int j = 0; j < taps && all; j++)
        all = resize_index_formula(rs, d, j, in, tab[j]->data, O, tb->index[d][j],
                                   sizeof tb->index[d][j]);
    if (!all) {
        for (int j = 0; j < taps; j++)
            tb->index[d][j][0] = 0;
        return true;
    }
    for (int j = 0; j < taps; j++)
        rt_tensor_free(tab[j]);
    int keep = tb->n - first - taps;
    for (int j = 0; j < keep; j++) {
        tb->t[first + j] = tb->t[first + taps + j];
        tb->v[first + j] = tb->v[first + taps + j];
        memcpy(tb->role[first + j], tb->role[first + taps + j], sizeof tb->role[0]);
    }
    for (int j = 0; j < keep; j++)
        tb->v[first + j].onnx = tb->role[first + j];
    tb->n -= taps;
    return true;
}

/* Axis d's index of tap t, as arithmetic or as a read of its table. */
static void resize_index(ox_str *b, const resize_tables *tb, int d, int t)
{
    if (tb->index[d][t][0])
        ox_printf(b, "%s", tb->index[d][t]);
    else
        ox_printf(b, "ix%d_%d[i%d]", d, t, d);
}

/* The kernel's statement: the sum over every combination of the resized
 * axes' taps of weight * x[indices], x read as xr (with crop: the
 * extrapolation value where a position lies outside the input). */
static void resize_sum(ox_kernel *k, const resize_spec *rs, const resize_tables *tb,
                       const char *xr)
{
    int R = rs->R, taps = rs->taps, nres = tb->nres;
    const int *resized = tb->resized;
    int terms = 1;
    for (int r = 0; r < nres; r++)
        terms *= taps;
    ox_printf(&k->body, "    y[");
    ox_indices(&k->body, "i", 0, R);
    ox_printf(&k->body, "] = ");
    if (rs->crop) {
        for (int r = 0; r < nres; r++)
            ox_printf(&k->body, "%sv%d[i%d]", r ? " * " : "", resized[r], resized[r]);
        ox_printf(&k->body, "%s != 0 ? ", nres ? "" : "1");
    }
    for (int term = 0; term < terms; term++) {
        ox_printf(&k->body, "%s", term ? " + " : "");
        int rest = term;
        for (int r = 0; r < nres && taps > 1; r++, rest /= taps)
            ox_printf(&k->body, "w%d_%d[i%d] * ", resized[r], rest % taps, resized[r]);
        ox_printf(&k->body, "%s[", xr);
        rest = term;
        for (int d = 0, r = 0; d < R; d++) {
            ox_printf(&k->body, "%s", d ? ", " : "");
            if (r < nres && resized[r] == d) {
                resize_index(&k->body, tb, d, rest % taps);
                rest /= taps, r++;
            } else if (tb->spread[d]) {
                ox_printf(&k->body, "0");
            } else {
                ox_printf(&k->body, "i%d", d);
            }
        }
        ox_printf(&k->body, "]");
    }
    if (rs->crop) {
        ox_printf(&k->body, " : ");
        ox_float(&k->body, rs->extrapolation);
    }
    ox_printf(&k->body, "\n");
}

/* The kernel's statements for interpolation (linear or cubic) of several
 * axes, one axis at a time, as PyTorch's upsample kernels compute it: the
 * last resized axis first, into a temporary t<r> of the input's extents on
 * the others, then each axis before it from the previous temporary, the
 * first one into y.  y[n, c, h, w] = wh0[h] * t[n, c, ih0[h], w] + wh1[h] *
 * t[n, c, ih1[h], w] with t[n, c, g, w] = ww0[w] * x[n, c, g, iw0[w]] + ...:
 * the last pass, over the whole output, reads rows of t along the axis it
 * vectorizes instead of gathering taps (LRASPP's 8x upsampling to 224x224:
 * 4 gathered loads and 8 products per output became 2 row loads and 2).
 * An axis of one position made longer (tb->spread) keeps its one position
 * in the temporaries and is spread by the last pass. */
static void resize_separable(ox_kernel *k, const resize_spec *rs, const resize_tables *tb,
                             const int64_t *in, const char *xr)
{
    int R = rs->R, taps = rs->taps;
    int64_t ext[RT_MAX_DIMS];   /* the extents of the pass's result */
    memcpy(ext, in, sizeof(int64_t) * (size_t)R);
    for (int p = tb->nres - 1; p >= 0; p--) {
        int d = tb->resized[p];
        ext[d] = rs->out[d];
        bool last = p == 0;
        if (last)
            ox_printf(&k->body, "    y[");
        else
            ox_printf(&k->body, "    t%d[", p);
        ox_indices(&k->body, "i", 0, R);
        ox_printf(&k->body, "] = ");
        for (int t = 0; t < taps; t++) {
            ox_printf(&k->body, "%sw%d_%d[i%d] * ", t ? " + " : "", d, t, d);
            if (p == tb->nres - 1)
                ox_printf(&k->body, "%s[", xr);
            else
                ox_printf(&k->body, "t%d[", p + 1);
            for (int e = 0; e < R; e++) {
                ox_printf(&k->body, "%s", e ? ", " : "");
                if (e == d)
                    resize_index(&k->body, tb, d, t);
                else if (last && tb->spread[e])
                    ox_printf(&k->body, "0");
                else
                    ox_printf(&k->body, "i%d", e);
            }
            ox_printf(&k->body, "]");
        }
        if (!last)   /* a temporary's extents: the ranges of its indices */
            for (int e = 0; e < R; e++)
                ox_printf(&k->body, "%s i%d in 0..%lld", e ? "," : " where", e, (long long)ext[e]);
        ox_printf(&k->body, "\n");
    }
}

/* Resize (opsets 10 to 17; Upsample, opsets 7 to 9, is its asymmetric
 * form): an output position of a resized axis reads 1 (nearest), 2
 * (linear) or 4 (cubic) positions of the input, the taps, whose indices
 * and weights depend on the position only, so they are computed at import
 * time into `state` tables of the kernel, as ONNX's reference computes
 * them: the position mapped back by coordinate_transformation_mode, then
 * rounded by nearest_mode or interpolated between its neighbours (Keys'
 * cubic with cubic_coeff_a, and exclude_outside), an index beyond the
 * axis clamped to its edge; with tf_crop_and_resize, a position outside
 * the input is extrapolation_value.  The kernel sums the taps' products:
 * y[n, c, h, w] = wh0[h] * ww0[w] * x[n, c, ih0[h], iw0[w]] + ... */
static bool op_resize(ox_node *nd, const void *arg)
{
    resize_spec rs = {.upsample = arg != NULL};
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    rs.R = x->ndim;
    if (!resize_attrs(nd, x, &rs) || !resize_extents(nd, x, &rs))
        return false;
    ox_value *y = ox_output(nd, 0);
    y->dtype = x->dtype;
    y->ndim = rs.R;
    memcpy(y->shape, rs.out, sizeof(int64_t) * (size_t)rs.R);
    if (!ox_check_shape(nd, y->shape, rs.R))
        return false;
    ir_dtype wt = ox_compute_dtype(x->dtype);
    ox_kernel k;
    ox_kernel_init(&k, nd);
    const char *xr = ox_operand(&k, x, "x");
    resize_tables tb = {.n = 0};
    bool ok = true;
    for (int d = 0; d < rs.R && ok; d++)
        ok = resize_axis_tables(nd, &rs, d, x->shape[d], wt, &tb);
    for (int i = 0; i < tb.n && ok; i++)
        ox_operand(&k, &tb.v[i], tb.role[i]);
    if (ok) {
        if (rs.taps > 1 && tb.nres > 1 && !rs.crop)
            resize_separable(&k, &rs, &tb, x->shape, xr);
        else
            resize_sum(&k, &rs, &tb, xr);
        ok = ox_kernel_finish(&k, rs.upsample ? "upsample" : "resize", y, NULL);
    }
    ox_kernel_free(&k);
    for (int i = 0; i < tb.n; i++)
        rt_tensor_free(tb.t[i]);
    return ok;
}

/* x's read with the axis'th index replaced by idx (the others i0, i1 ...). */
static void read_at_axis(ox_str *b, const char *role, int ndim, int axis, const char *idx)
{
    ox_printf(b, "%s[", role);
    for (int d = 0; d < ndim; d++)
        if (d == axis)
            ox_printf(b, "%s%s", d ? ", " : "", idx);
        else
            ox_printf(b, "%si%d", d ? ", " : "", d);
    ox_printf(b, "]");
}

/* The most comparisons TopK's ranking may take (2^34: seconds). */
#define TOPK_MAX_PAIRS ((int64_t)1 << 34)

/* TopK of k at most this, and at most 1/TOPK_SELECT_SHARE of the axis,
 * selects its elements one at a time (topk_select). */
#define TOPK_SELECT_MAX 32
#define TOPK_SELECT_SHARE 4

/* The indices of a TopK of few elements of long rows (DGCNN's 16 nearest
 * of 512 points), idx ([.., K, ..] at axis), by k selections in the order
 * of op_topk: each a kernel of two reductions along the row (the largest
 * (smallest) number after the last choice, then the first index of a NaN
 * or of that number after it), reading the choice before it; then a kernel
 * lays the k choices side by side.  3k passes over a row instead of
 * ranking its n^2 pairs (512 x 512 x 512 took 850 ms), and the selections
 * after the first are one def (one compile; written as one kernel, their
 * 5k statements took gcc 21 s).  Step t's candidates are the elements
 * after step t-1's choice (index prev, value v) in the order: largest,
 * NaNs first by index, then numbers down, ties by index; smallest, numbers
 * up, ties by index, then NaNs by index.
 *
 * The indices the selections compare and pick are numbers of the row's
 * own float type where it holds them exactly (f32 up to 2n <= 2^24, else
 * f64), read from a kernel of 0, 1 .. n-1 (computed once): with x in f32
 * every comparison and select of a step is then one of f32 lanes, which
 * the vectorizer makes vector masks and blends (ir/vectorize.c,
 * vector_mask_select), where the loop variable j itself (i64) and an i64
 * arg-min were computed lane by lane (DGCNN's 32 selections: 22 ms of
 * 27). */
static bool topk_select(ox_node *nd, ox_value *x, int axis, int64_t K, bool largest,
                        ox_value *idx)
{
    long long n = (long long)x->shape[axis];
    ir_dtype it = 2 * n <= (1LL << 24) && x->dtype != IR_F64 ? IR_F32 : IR_F64;
    const char *itn = ir_dtype_name(it);
    ox_str kp = {0};   /* the row's indices: all but the axis' */
    for (int d = 0, o = 0; d < x->ndim; d++)
        if (d != axis)
            ox_printf(&kp, "%si%d", o++ ? ", " : "", d);
    const char *KP = kp.s ? kp.s : "";
    ox_value *step = calloc((size_t)K, sizeof *step);
    char **names = calloc((size_t)K, sizeof *names);
    if (!step || !names)
        ir_out_of_memory();
    ox_value iota = {.dtype = it, .ndim = 1, .shape = {x->shape[axis]}};
    ox_str iname = {0};
    ox_printf(&iname, "%s_iota", nd->n->name);
    iota.onnx = iname.s;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_printf(&k.body, "    y[i0] = %s(i0)\n", itn);
    bool ok = ox_kernel_finish(&k, "topk_iota", &iota, "iota");
    ox_kernel_free(&k);
    for (int64_t t = 0; ok && t < K; t++) {
        ox_kernel_init(&k, nd);
        const char *xr = ox_operand(&k, x, "x");
        const char *jr = ox_operand(&k, &iota, "index");
        ox_str xj = {0}, J = {0};
        read_at_axis(&xj, xr, x->ndim, axis, "j");
        ox_printf(&J, "%s[j]", jr);
        const char *X = xj.s, *I = J.s;
        /* m's value where no candidate is: below (above) every element;
         * integer rows have no infinity: their type's bound */
        ir_dtype ct = ox_compute_dtype(x->dtype);
        const char *B = ir_dtype_is_float(ct) ? (largest ? "-inf" : "inf")
                      : ct == IR_I64 ? (largest ? "(-9223372036854775807 - 1)" : "9223372036854775807")
                      : (largest ? "(-2147483647 - 1)" : "2147483647");
        char M[64];
        snprintf(M, sizeof M, "m[%s]", KP);
        if (t == 0) {   /* every element a candidate */
            ox_printf(&k.body, "    %s %s= %s == %s ? %s : %s\n", M, largest ? "max" : "min",
                      X, X, X, B);
            /* c: the index of the choice (a NaN's first when largest, m's
             * when smallest) or n + the index of the other kind's first */
            ox_printf(&k.body, "    c[%s] min= %s %s %s ? %s : %s %s %s ? %lld + %s : %lld\n", KP, X,
                      largest ? "!=" : "==", largest ? X : M, I, X, largest ? "==" : "!=",
                      largest ? M : X, n, I, 2 * n);
        } else {
            /* after the choice at prev of value v: v NaN or a number, a
             * condition of the row alone that selects one of two forms */
            ox_str at = {0}, P = {0};
            const char *prev = ox_operand(&k, &step[t - 1], "prev");
            ox_printf(&at, "%s[%s]", prev, KP);
            ox_printf(&P, "%s(%s)", itn, at.s);
            const char *p = P.s;
            ox_printf(&k.body, "    v[%s] = ", KP);
            read_at_axis(&k.body, xr, x->ndim, axis, at.s);
            ox_printf(&k.body, "\n");
            char V[64];
            snprintf(V, sizeof V, "v[%s]", KP);
            /* m: the best number after v; largest after a NaN, every
             * number; smallest after a NaN, none (only NaNs are left) */
            if (largest)
                ox_printf(&k.body, "    %s max= %s != %s ? (%s == %s ? %s : %s) : (%s < %s || "
                          "%s == %s && %s > %s ? %s : %s)\n", M, V, V, X, X, X, B, X, V, X, V, I,
                          p, X, B);
            else
                ox_printf(&k.body, "    %s min= %s != %s ? %s : (%s > %s || %s == %s && %s > %s "
                          "? %s : %s)\n", M, V, V, B, X, V, X, V, I, p, X, B);
            /* c: a number equal to m is a candidate when m is below
             * (above) v or it is after prev; NaNs come first (largest, the
             * ones after prev when v is one) or last (smallest) */
            if (largest)
                ox_printf(&k.body, "    c[%s] min= %s != %s ? (%s != %s && %s > %s ? %s : %s == %s ? "
                          "%lld + %s : %lld) : (%s == %s && (%s != %s || %s > %s) ? %s : %lld)\n",
                          KP, V, V, X, X, I, p, I, X, M, n, I, 2 * n, X, M, M, V, I, p, I, 2 * n);
            else
                ox_printf(&k.body, "    c[%s] min= %s != %s ? (%s != %s && %s > %s ? %lld + %s : "
                          "%lld) : (%s == %s && (%s != %s || %s > %s) ? %s : %s != %s ? %lld + %s "
                          ": %lld)\n", KP, V, V, X, X, I, p, n, I, 2 * n, X, M, M, V, I, p, I, X,
                          X, n, I, 2 * n);
            free(at.s);
            free(P.s);
        }
        ox_printf(&k.body, "    y[%s] = i64(c[%s] < %lld ? c[%s] : c[%s] - %lld)\n", KP, KP, n, KP,
                  KP, n);
        ox_value *y = &step[t];
        y->dtype = IR_I64;
        y->ndim = 0;
        for (int d = 0; d < x->ndim; d++)
            if (d != axis)
                y->shape[y->ndim++] = x->shape[d];
        ox_str name = {0};
        ox_printf(&name, "%s_select%lld", nd->n->name, (long long)t);
        names[t] = name.s;
        y->onnx = name.s;
        char suffix[32];
        snprintf(suffix, sizeof suffix, "select%lld", (long long)t);
        ok = ox_kernel_finish(&k, "topk_select", y, suffix);
        free(xj.s);
        free(J.s);
        ox_kernel_free(&k);
    }
    if (ok) {   /* the choices side by side along the axis */
        ox_kernel k;
        ox_kernel_init(&k, nd);
        ox_printf(&k.body, "    y[");
        ox_indices(&k.body, "i", 0, x->ndim);
        ox_printf(&k.body, "] = ");
        for (int64_t t = 0; t < K; t++) {
            char role[32];
            snprintf(role, sizeof role, "s%lld", (long long)t);
            const char *r = ox_operand(&k, &step[t], ox_kernel_role(&k, role));
            if (t + 1 < K)
                ox_printf(&k.body, "i%d == %lld ? ", axis, (long long)t);
            ox_printf(&k.body, "%s[%s]%s", r, KP, t + 1 < K ? " : " : "\n");
        }
        ok = ox_kernel_finish(&k, "topk_indices", idx, idx->producer ? NULL : "indices");
        ox_kernel_free(&k);
    }
    free(kp.s);
    free(iname.s);
    for (int64_t t = 0; t < K; t++)
        free(names[t]);
    free(names);
    free(step);
    return ok;
}

/* TopK: the k largest (or smallest) along an axis, sorted, ties in index
 * order (ONNX's rule from opset 11).  An element's place is the count of
 * the elements before it (larger, or equal at a lower index), so the
 * indices kernel compares every pair along the axis (n^2 per row, refused
 * above TOPK_MAX_PAIRS) and picks the elements of places 0..k-1; the
 * values kernel reads x at those indices.  The places must be a
 * permutation, so the order is total: NaN ranks above every number (first
 * when largest, last when smallest, as PyTorch's topk; ONNX leaves it
 * open and ONNX Runtime 1.30's order with NaN is not a total one), NaNs
 * among themselves by index. */
static bool op_topk(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0);
    int axis;
    if (!x || !ox_axis(nd, ox_attr_int(nd, "axis", -1), x->ndim, &axis))
        return false;
    if (x->ndim == 0)
        return ox_fail(nd, "input '%s' is a scalar; TopK needs an axis", x->onnx);
    int64_t K = ox_attr_int(nd, "k", -1);
    int nk = nd->opset >= 10 ? ox_const_ints(nd, 1, &K, 1) : 1;
    if (nk < 0)
        return false;
    if (nk != 1)
        return ox_fail(nd, "k must be one integer");
    int64_t n = x->shape[axis], rows = 1;
    for (int d = 0; d < x->ndim; d++)   /* saturates: the pair count is refused above 2^34 */
        rows = d == axis ? rows : x->shape[d] > TOPK_MAX_PAIRS / (rows ? rows : 1)
               ? TOPK_MAX_PAIRS + 1 : rows * x->shape[d];
    if (K < 1 || K > n)
        return ox_fail(nd, "k %lld is out of range 1..%lld (dimension %d of '%s')", (long long)K,
                       (long long)n, axis, x->onnx);
    bool select = K <= TOPK_SELECT_MAX && K * TOPK_SELECT_SHARE <= n;   /* topk_select */
    if (!select && (n > TOPK_MAX_PAIRS / n || rows > TOPK_MAX_PAIRS / n / n))   /* rows 0: refused below */
        return ox_fail(nd, "TopK over %lld rows of %lld elements: tec ranks every pair of a "
                       "row's elements, at most 2^34 comparisons in all", (long long)rows,
                       (long long)n);
    bool largest = ox_attr_int(nd, "largest", 1) != 0;
    ox_value scratch = {0}, *idx = &scratch;
    if (ox_noutputs(nd) > 1 && *nd->n->output[1])
        idx = ox_output(nd, 1);
    else
        idx->onnx = nd->n->output[0];
    ox_same_shape(idx, x);
    idx->shape[axis] = K;
    idx->dtype = IR_I64;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    const char *xr = ox_operand(&k, x, "x");
    ox_str xi = {0}, xj = {0}, ri = {0};
    char own[16];
    snprintf(own, sizeof own, "i%d", axis);
    read_at_axis(&xi, xr, x->ndim, axis, own);
    read_at_axis(&xj, xr, x->ndim, axis, "j");
    read_at_axis(&ri, "r", x->ndim, axis, "m");
    bool ok;
    if (select) {
        bool failed = k.failed;   /* x's error (no elements) is said once */
        ox_kernel_free(&k);
        ok = !failed && topk_select(nd, x, axis, K, largest, idx);
        goto values;
    }
    ox_printf(&k.body, "    r[");
    ox_indices(&k.body, "i", 0, x->ndim);
    /* j before i: by value, NaN (x != x) above every number, ties by index */
    const char *nan_first = largest ? xj.s : xi.s, *nan_last = largest ? xi.s : xj.s;
    ox_printf(&k.body, "] += (%s != %s ? %s == %s || j < %s : %s == %s && (%s %s %s || "
              "%s == %s && j < %s)) ? 1 : 0\n", nan_first, nan_first, nan_last, nan_last, own,
              nan_last, nan_last, xj.s, largest ? ">" : "<", xi.s, xj.s, xi.s, own);
    ox_printf(&k.body, "    y[");
    ox_indices(&k.body, "i", 0, x->ndim);
    ox_printf(&k.body, "] += %s == %s ? m : 0 where m in 0..%lld\n", ri.s, own, (long long)n);
    ok = ox_kernel_finish(&k, "topk_indices", idx, idx == &scratch ? "indices" : NULL);
    ox_kernel_free(&k);
values:
    if (ok) {
        ox_value *y = ox_output(nd, 0);
        ox_same_shape(y, idx);
        y->dtype = x->dtype;
        ox_kernel_init(&k, nd);
        ox_operand(&k, x, "x");
        ox_operand(&k, idx, "idx");
        ox_str at = {0};
        ox_printf(&at, "idx[");
        ox_indices(&at, "i", 0, x->ndim);
        ox_printf(&at, "]");
        ox_printf(&k.body, "    y[");
        ox_indices(&k.body, "i", 0, x->ndim);
        ox_printf(&k.body, "] = ");
        read_at_axis(&k.body, "x", x->ndim, axis, at.s);
        ox_printf(&k.body, "\n");
        ok = ox_kernel_finish(&k, "topk_values", y, idx == &scratch ? NULL : "values");
        ox_kernel_free(&k);
        free(at.s);
    }
    free(xi.s);
    free(xj.s);
    free(ri.s);
    return ok;
}

/* ---------------------------------------------------------------- RNN, LSTM, GRU */

/* A recurrent op: RNN (one gate), LSTM (gates i, o, f, c) or GRU (z, r, h). */
typedef struct rnn_spec {
    int gates;
    const char *acts[3];     /* its default activations, the only ones tec computes */
    const char *base;        /* its kernels' names: "<base>_input", "<base>_step" */
} rnn_spec;

/* The recurrence as kernels:
 *   - per direction, one contraction of every step's input with W plus
 *     the biases that add outside the gates' products (xw: [T, B, G*H]);
 *   - per direction and step, one kernel of the state's product with R
 *     and the gates (an LSTM step's output is h and c as [2, B, H], the
 *     others' h as [B, H]), reading the step before it;
 *   - Y ([T, D, B, H]), Y_h and Y_c ([D, B, H]) gathered from the steps
 *     (layout 1: [B, T, D, H] and [B, D, H], X and the initial states
 *     batch first).
 * The steps are unrolled: the language has no loop that carries a value
 * from one iteration to the next, and T is known at import. */
typedef struct rnn {
    ox_node *nd;
    const rnn_spec *sp;
    bool lstm, gru;
    ox_value *x, *w, *r, *b, *h0, *c0, *p;
    int64_t T, B, I, H, G;
    int D;
    bool reverse, lbr, batch_first;   /* direction "reverse"; GRU's linear_before_reset;
                                         layout 1 */
    ox_value *xw;            /* [D]: the input kernels' outputs */
    ox_value *st;            /* [D * T]: the steps' outputs, by time */
    char **names;            /* their ONNX names (xw's after st's), each as long as it is */
} rnn;

/* Whether activations (absent or the op's defaults, any case) are ones tec
 * computes; false after its error when the list is not one per function
 * and direction. */
static bool rnn_default_acts(ox_node *nd, const rnn_spec *sp, int directions, bool *defaults)
{
    const Onnx__AttributeProto *a = ox_attr(nd, "activations");
    size_t per = sp->gates == 4 ? 3 : sp->gates == 3 ? 2 : 1;
    *defaults = true;
    if (a && a->n_strings != per * (size_t)directions)
        return ox_fail(nd, "activations lists %zu functions; expected %zu (%zu per direction)",
                       a->n_strings, per * (size_t)directions, per);
    for (size_t i = 0; a && i < a->n_strings; i++) {
        const char *want = sp->acts[i % per];
        if (a->strings[i].len != strlen(want) ||
            strncasecmp((const char *)a->strings[i].data, want, strlen(want)) != 0)
            *defaults = false;
    }
    return true;
}

/* Whether v is absent or all zeros known at import (PyTorch's exports
 * pass zero initial states). */
static bool rnn_zero(const ox_value *v)
{
    if (!v)
        return true;
    if (!v->konst || v->id)
        return false;
    int64_t n = rt_tensor_numel(v->konst);
    for (int64_t i = 0; i < n; i++)
        if (rt_tensor_get(v->konst, i) != 0)
            return false;
    return true;
}

/* Checks that input v (absent: fine) has shape want[0..ndim). */
static bool rnn_shape(ox_node *nd, const ox_value *v, const char *what, int64_t d0, int64_t d1,
                      int64_t d2, int ndim)
{
    int64_t want[3] = {d0, d1, d2};
    bool ok = !v || v->ndim == ndim;
    for (int d = 0; ok && v && d < ndim; d++)
        ok = v->shape[d] == want[d];
    if (ok)
        return true;
    char sb[128], sv[128];
    int n = 0, m = 0;
    sb[0] = sv[0] = 0;
    for (int d = 0; d < ndim; d++)
        n += snprintf(sb + n, sizeof sb - (size_t)n, "%s%lld", d ? ", " : "", (long long)want[d]);
    for (int d = 0; d < v->ndim && d < 8; d++)
        m += snprintf(sv + m, sizeof sv - (size_t)m, "%s%lld", d ? ", " : "",
                      (long long)v->shape[d]);
    return ox_fail(nd, "%s '%s' has shape [%s]; expected [%s]", what, v->onnx, sv, sb);
}

/* A constant several of the node's kernels read is one layer that they
 * share (ox_operand's shared constant, as for PyTorch's tied weights),
 * not one copy per step. */
static void rnn_share(ox_value *v)
{
    if (v && v->konst && !v->id && v->uses < 2)
        v->uses = 2;
}

/* The read of an initial state (h0 or c0: [D, B, H], layout 1 [B, D, H])
 * of direction d at [n, j]. */
static void rnn_init_read(rnn *q, ox_str *read, const char *role, int d)
{
    if (q->batch_first)
        ox_printf(read, "%s[n, %d, j]", role, d);
    else
        ox_printf(read, "%s[%d, n, j]", role, d);
}

/* Names v, the value of names[slot], "<node name>_<suffix>" (a node's name
 * has no bound: a buffer of fixed size would cut two steps' names to one). */
static void rnn_name(rnn *q, int64_t slot, ox_value *v, const char *suffix)
{
    ox_str s = {0};
    ox_printf(&s, "%s_%s", q->nd->n->name, suffix);
    q->names[slot] = s.s;
    v->onnx = s.s;
}

/* xw[t, n, k] = X[t, n, :] . W[d, k, :] + the biases that add outside
 * the gates' products: Wb, and Rb but for a GRU's h gate with
 * linear_before_reset (which multiplies R's product and Rb by r). */
static bool rnn_input(rnn *q, int d)
{
    ox_kernel k;
    ox_kernel_init(&k, q->nd);
    const char *xs = ox_operand(&k, q->x, "xs");
    const char *w = ox_operand(&k, q->w, "w");
    const char *xread = q->batch_first ? "%s[n, t, i]" : "%s[t, n, i]";
    int64_t GH = q->G * q->H;
    ox_value *y = &q->xw[d];
    y->dtype = q->x->dtype;
    y->ndim = 3;
    y->shape[0] = q->T, y->shape[1] = q->B, y->shape[2] = GH;
    char suffix[32];
    snprintf(suffix, sizeof suffix, "input%s", q->D > 1 ? (d ? "_reverse" : "_forward") : "");
    rnn_name(q, q->D * q->T + d, y, suffix);
    ox_printf(&k.body, "    %s[t, n, k] += ", q->b ? "m" : "y");
    ox_printf(&k.body, xread, xs);
    ox_printf(&k.body, " * %s[%d, k, i]\n", w, d);
    if (q->b) {
        const char *b = ox_operand(&k, q->b, "bias");
        ox_printf(&k.body, "    y[t, n, k] = m[t, n, k] + %s[%d, k + 0] + ", b, d);
        if (q->lbr)
            ox_printf(&k.body, "(k < %lld ? %s[%d, %lld + k] : 0)\n", (long long)(2 * q->H), b, d,
                      (long long)GH);
        else
            ox_printf(&k.body, "%s[%d, %lld + k]\n", b, d, (long long)GH);
    }
    char base[32];
    snprintf(base, sizeof base, "%s_input", q->sp->base);
    bool ok = ox_kernel_finish(&k, base, y, suffix);
    ox_kernel_free(&k);
    return ok;
}

/* A read of column off + j of the previous h's product with R (g), or 0
 * from a zero initial state. */
static const char *rnn_g(char *buf, size_t n, bool have, long long off)
{
    if (!have)
        return "0";
    snprintf(buf, n, "g[n, %lld + j]", off);
    return buf;
}

/* A peephole's term: P's column col + j (absent P or c: none) times c. */
static void rnn_peephole(ox_kernel *k, const char *p, int d, long long col, const char *c)
{
    if (p && *c)
        ox_printf(&k->body, " + %s[%d, %lld + j] * %s", p, d, col, c);
}

/* An LSTM step's statements: gates i, o, f, c at columns 0, H, 2H, 3H of
 * a; with peepholes P (i, o, f) c's old value scales i and f, its new
 * one o. */
static void rnn_lstm_body(rnn *q, ox_kernel *k, const char *hread, const char *cread, int d,
                          const char *where)
{
    long long H = (long long)q->H;
    const char *p = q->p ? ox_operand(k, q->p, "peep") : NULL;
    ox_printf(&k->body, "    c[n, j] = sigmoid(a[n, 0 + j]");
    rnn_peephole(k, p, d, 0, cread);
    ox_printf(&k->body, ") * tanh(a[n, %lld + j])", 3 * H);
    if (*cread) {
        ox_printf(&k->body, " + sigmoid(a[n, %lld + j]", 2 * H);
        rnn_peephole(k, p, d, 2 * H, cread);
        ox_printf(&k->body, ") * %s", cread);
    }
    ox_printf(&k->body, "%s", where);
    ox_printf(&k->body, "    y[s, n, j] = s == 0 ? sigmoid(a[n, %lld + j]", H);
    rnn_peephole(k, p, d, H, "c[n, j]");
    ox_printf(&k->body, ") * tanh(c[n, j]) : c[n, j]\n");
}

/* A GRU step's statements: gates z, r, h at columns 0, H, 2H; with
 * linear_before_reset r scales h's product with R and its bias Rbh,
 * else r * h is multiplied by R. */
static void rnn_gru_body(rnn *q, ox_kernel *k, const char *xw, const char *rw,
                         const char *hread, int d, long long t, const char *where)
{
    long long H = (long long)q->H;
    bool have = *hread != 0;
    char g[48];
    ox_printf(&k->body, "    z[n, j] = sigmoid(%s[%lld, n, 0 + j] + %s)%s", xw, t,
              rnn_g(g, sizeof g, have, 0), where);
    ox_printf(&k->body, "    r[n, j] = sigmoid(%s[%lld, n, %lld + j] + %s)%s", xw, t, H,
              rnn_g(g, sizeof g, have, H), where);
    if (q->lbr) {
        ox_printf(&k->body, "    h[n, j] = tanh(%s[%lld, n, %lld + j] + r[n, j] * (%s", xw, t,
                  2 * H, rnn_g(g, sizeof g, have, 2 * H));
        if (q->b)
            ox_printf(&k->body, " + %s[%d, %lld + j]", ox_operand(k, q->b, "bias"), d, 5 * H);
        ox_printf(&k->body, "))%s", where);
    } else {
        if (have)
            ox_printf(&k->body, "    u[n, k] += r[n, j] * %s * %s[%d, %lld + k, j] where k in "
                      "0..%lld\n", hread, rw, d, 2 * H, H);
        ox_printf(&k->body, "    h[n, j] = tanh(%s[%lld, n, %lld + j]%s)%s", xw, t, 2 * H,
                  have ? " + u[n, j + 0]" : "", where);
    }
    ox_printf(&k->body, "    y[n, j] = (1 - z[n, j]) * h[n, j]");
    if (have)
        ox_printf(&k->body, " + z[n, j] * %s", hread);
    ox_printf(&k->body, "\n");
}

/* The step of direction d at time t, after the step at time `from` (-1:
 * the first, from the initial state). */
static bool rnn_step(rnn *q, int d, int64_t t, int64_t from)
{
    ox_kernel k;
    ox_kernel_init(&k, q->nd);
    const char *xw = ox_operand(&k, &q->xw[d], "xw");
    const char *rw = ox_operand(&k, q->r, "rw");
    /* reads of the previous h and c at [n, j] ("": zero) */
    ox_str hs = {0}, cs = {0};
    if (from >= 0) {
        const char *prev = ox_operand(&k, &q->st[d * q->T + from], "prev");
        ox_printf(&hs, q->lstm ? "%s[0, n, j]" : "%s[n, j]", prev);
        if (q->lstm)
            ox_printf(&cs, "%s[1, n, j]", prev);
    } else {
        if (!rnn_zero(q->h0))
            rnn_init_read(q, &hs, ox_operand(&k, q->h0, "hinit"), d);
        if (q->lstm && !rnn_zero(q->c0))
            rnn_init_read(q, &cs, ox_operand(&k, q->c0, "cinit"), d);
    }
    const char *hread = hs.s ? hs.s : "", *cread = cs.s ? cs.s : "";
    bool have = *hread != 0;
    long long H = (long long)q->H, T = (long long)t;
    char where[64];
    snprintf(where, sizeof where, " where n in 0..%lld, j in 0..%lld\n", (long long)q->B, H);
    /* g: the previous h times R, for every gate (a GRU without
     * linear_before_reset: for z and r only) */
    if (have && q->gru && !q->lbr)
        ox_printf(&k.body, "    g[n, k] += %s * %s[%d, k + 0, j] where k in 0..%lld\n", hread, rw,
                  d, 2 * H);
    else if (have)
        ox_printf(&k.body, "    g[n, k] += %s * %s[%d, k, j]\n", hread, rw, d);
    ox_value *y = &q->st[d * q->T + t];
    y->dtype = q->x->dtype;
    y->ndim = 2;
    y->shape[0] = q->B, y->shape[1] = q->H;
    if (q->lstm) {
        ox_printf(&k.body, "    a[n, k] = %s[%lld, n, k]%s\n", xw, T, have ? " + g[n, k]" : "");
        rnn_lstm_body(q, &k, hread, cread, d, where);
        y->ndim = 3;
        y->shape[0] = 2, y->shape[1] = q->B, y->shape[2] = q->H;
    } else if (q->gru) {
        rnn_gru_body(q, &k, xw, rw, hread, d, T, where);
    } else {
        ox_printf(&k.body, "    y[n, j] = tanh(%s[%lld, n, j]%s)\n", xw, T, have ? " + g[n, j]" : "");
    }
    char suffix[48], base[32];
    snprintf(suffix, sizeof suffix, "%sstep%lld", q->D > 1 ? (d ? "reverse." : "forward.") : "", T);
    rnn_name(q, d * q->T + t, y, suffix);
    snprintf(base, sizeof base, "%s_step", q->sp->base);
    bool ok = ox_kernel_finish(&k, base, y, suffix);
    ox_kernel_free(&k);
    free(hs.s);
    free(cs.s);
    return ok;
}

/* Writes into y the steps' h of times t0 .. t0 + times - 1 ([times, D, B,
 * H]: Y's block of those times; layout 1 [B, times, D, H]) when every, else
 * (times 1) Y_h / Y_c (part 0 / 1, [D, B, H]: the last step's h or c of each
 * direction; layout 1 [B, D, H]).  One kernel reads them all: at most
 * OX_MAX_PARAMS - 2 steps. */
static bool rnn_gather_into(rnn *q, ox_value *y, int64_t t0, int64_t times, bool every, int part,
                            const char *suffix)
{
    y->dtype = q->x->dtype;
    ox_kernel k;
    ox_kernel_init(&k, q->nd);
    const char *idx;
    if (every && q->batch_first) {
        y->ndim = 4, y->shape[0] = q->B, y->shape[1] = times, y->shape[2] = q->D;
        idx = "n, t, e, j";
    } else if (every) {
        y->ndim = 4, y->shape[0] = times, y->shape[1] = q->D, y->shape[2] = q->B;
        idx = "t, e, n, j";
    } else if (q->batch_first) {
        y->ndim = 3, y->shape[0] = q->B, y->shape[1] = q->D;
        idx = "n, e, j";
    } else {
        y->ndim = 3, y->shape[0] = q->D, y->shape[1] = q->B;
        idx = "e, n, j";
    }
    y->shape[y->ndim - 1] = q->H;
    ox_printf(&k.body, "    y[%s] = ", idx);
    for (int64_t t = 0; t < times; t++)
        for (int d = 0; d < q->D; d++) {
            /* the last step: time T - 1 forward, time 0 reverse */
            bool back = q->reverse || d == 1;
            int64_t at = every ? t0 + t : back ? 0 : q->T - 1;
            char role[48];
            snprintf(role, sizeof role, "h%lld_%d", (long long)at, d);
            const char *v = ox_operand(&k, &q->st[d * q->T + at], ox_kernel_role(&k, role));
            bool last = t == times - 1 && d == q->D - 1;
            if (!last && every)
                ox_printf(&k.body, "t == %lld && e == %d ? ", (long long)t, d);
            else if (!last)
                ox_printf(&k.body, "e == %d ? ", d);
            if (q->lstm)
                ox_printf(&k.body, "%s[%d, n, j]", v, part);
            else
                ox_printf(&k.body, "%s[n, j]", v);
            ox_printf(&k.body, last ? "\n" : " : ");
        }
    bool ok = ox_kernel_finish(&k, "rnn_output", y, suffix);
    ox_kernel_free(&k);
    return ok;
}

/* Output out of the steps: Y (every step's h), or Y_h / Y_c (part 0 /
 * 1).  A Y of more steps than one kernel reads (a bidirectional CRNN's 32
 * columns: 64 steps) is gathered in blocks of consecutive times, which
 * one more kernel lays side by side along time. */
static bool rnn_gather(rnn *q, int out, bool every, int part)
{
    int64_t per = (OX_MAX_PARAMS - 2) / q->D;
    if (!every || q->T <= per)
        return rnn_gather_into(q, ox_output(q->nd, out), 0, every ? q->T : 1, every, part,
                               every ? NULL : part ? "Y_c" : "Y_h");
    int64_t nblocks = (q->T + per - 1) / per;   /* at most OX_MAX_PARAMS - 2: rnn_check */
    ox_value *block = calloc((size_t)nblocks, sizeof *block);
    char **names = calloc((size_t)nblocks, sizeof *names);
    if (!block || !names)
        ir_out_of_memory();
    ox_kernel k;
    ox_kernel_init(&k, q->nd);
    ox_printf(&k.body, "    y[%s] = ", q->batch_first ? "n, t, e, j" : "t, e, n, j");
    bool ok = true;
    for (int64_t b = 0; ok && b < nblocks; b++) {
        int64_t t0 = b * per, times = q->T - t0 < per ? q->T - t0 : per;
        ox_str s = {0};
        ox_printf(&s, "%s_Y%lld", q->nd->n->name, (long long)b);
        names[b] = s.s;
        block[b].onnx = s.s;
        char suffix[32];
        snprintf(suffix, sizeof suffix, "Y%lld", (long long)b);
        ok = rnn_gather_into(q, &block[b], t0, times, true, part, suffix);
        if (!ok)
            break;
        const char *v = ox_operand(&k, &block[b], ox_kernel_role(&k, suffix));
        if (b + 1 < nblocks)
            ox_printf(&k.body, "t < %lld ? ", (long long)(t0 + times));
        if (q->batch_first)
            ox_printf(&k.body, "%s[n, t - %lld, e, j]", v, (long long)t0);
        else
            ox_printf(&k.body, "%s[t - %lld, e, n, j]", v, (long long)t0);
        ox_printf(&k.body, b + 1 < nblocks ? " :\n        " : "\n");
    }
    if (ok) {
        ox_value *y = ox_output(q->nd, out);
        ox_same_shape(y, &block[0]);
        y->shape[q->batch_first] = q->T;
        ok = ox_kernel_finish(&k, "rnn_output", y, NULL);
    }
    ox_kernel_free(&k);
    for (int64_t b = 0; b < nblocks; b++)
        free(names[b]);
    free(names);
    free(block);
    return ok;
}

/* The attributes and inputs of a recurrent node, checked; false after its error. */
static bool rnn_check(rnn *q)
{
    ox_node *nd = q->nd;
    q->G = q->sp->gates;
    q->lstm = q->G == 4, q->gru = q->G == 3;
    q->x = ox_input(nd, 0), q->w = ox_input(nd, 1), q->r = ox_input(nd, 2);
    if (!q->x || !q->w || !q->r || !ox_need_float(nd, q->x) || !ox_same_dtypes(nd, 0, 3))
        return false;
    q->b = nd->nin > 3 ? nd->in[3] : NULL;
    ox_value *seq = nd->nin > 4 ? nd->in[4] : NULL;
    q->h0 = nd->nin > 5 ? nd->in[5] : NULL;
    q->c0 = q->lstm && nd->nin > 6 ? nd->in[6] : NULL;
    q->p = q->lstm && nd->nin > 7 ? nd->in[7] : NULL;
    const char *dir = ox_attr_str(nd, "direction", "forward");
    q->D = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    q->reverse = strcmp(dir, "reverse") == 0;
    if (q->D == 1 && !q->reverse && strcmp(dir, "forward") != 0)
        return ox_fail(nd, "direction '%s' is none of forward, reverse and bidirectional", dir);
    int64_t layout = ox_attr_int(nd, "layout", 0);
    if (layout != 0 && layout != 1)
        return ox_fail(nd, "layout %lld is neither 0 nor 1", (long long)layout);
    q->batch_first = layout == 1;
    if (ox_attr(nd, "clip"))
        return ox_fail(nd, "attribute clip is not supported");
    if (q->lstm && ox_attr_int(nd, "input_forget", 0) != 0)
        return ox_fail(nd, "input_forget 1 is not supported");
    bool defaults;
    if (!rnn_default_acts(nd, q->sp, q->D, &defaults))
        return false;
    if (!defaults)
        return ox_fail(nd, "activations other than the defaults (%s%s%s%s%s) are not supported",
                       q->sp->acts[0], q->G > 1 ? ", " : "", q->G > 1 ? q->sp->acts[1] : "",
                       q->lstm ? ", " : "", q->lstm ? q->sp->acts[2] : "");
    q->lbr = q->gru && ox_attr_int(nd, "linear_before_reset", 0) != 0;
    if (q->x->ndim != 3)
        return ox_fail(nd, "input X '%s' has rank %d; expected 3", q->x->onnx, q->x->ndim);
    q->T = q->x->shape[q->batch_first], q->B = q->x->shape[!q->batch_first];
    q->I = q->x->shape[2];
    if (q->T < 1 || q->B < 1)   /* each step reads the one before; Y has one per step */
        return ox_fail(nd, "input X '%s' has shape [%lld, %lld, %lld]: %s needs at least one "
                       "step and one batch element", q->x->onnx, (long long)q->x->shape[0],
                       (long long)q->x->shape[1], (long long)q->x->shape[2], nd->n->op_type);
    q->H = ox_attr_int(nd, "hidden_size", q->r->ndim == 3 ? q->r->shape[2] : 0);
    if (q->H < 1 || q->H > OX_ATTR_MAX)
        return ox_fail(nd, "hidden_size %lld is not a size", (long long)q->H);
    int64_t GH = q->G * q->H, s0 = q->batch_first ? q->B : q->D, s1 = q->batch_first ? q->D : q->B;
    if (!rnn_shape(nd, q->w, "input W", q->D, GH, q->I, 3) ||
        !rnn_shape(nd, q->r, "input R", q->D, GH, q->H, 3) ||
        !rnn_shape(nd, q->b, "input B", q->D, 2 * GH, 0, 2) ||
        !rnn_shape(nd, q->h0, "input initial_h", s0, s1, q->H, 3) ||
        !rnn_shape(nd, q->c0, "input initial_c", s0, s1, q->H, 3) ||
        !rnn_shape(nd, q->p, "input P", q->D, 3 * q->H, 0, 2))
        return false;
    const ox_value *same[] = {q->b, q->h0, q->c0, q->p};
    for (int i = 0; i < 4; i++)
        if (same[i] && same[i]->dtype != q->x->dtype)
            return ox_fail(nd, "input '%s' is %s but X is %s", same[i]->onnx,
                           ir_dtype_name(same[i]->dtype), ir_dtype_name(q->x->dtype));
    /* Y's blocks of steps (rnn_gather), each at most OX_MAX_PARAMS - 2
     * steps' h, are themselves at most OX_MAX_PARAMS - 2 */
    int64_t per = (OX_MAX_PARAMS - 2) / q->D;
    if (nd->n->n_output > 0 && *nd->n->output[0] && q->T > per * (OX_MAX_PARAMS - 2))
        return ox_fail(nd, "output Y of %lld steps in %d direction(s): tec gathers at most "
                       "%lld steps' h into one output (use Y_h, or a shorter sequence)",
                       (long long)q->T, q->D, (long long)(per * (OX_MAX_PARAMS - 2)));
    if (seq) {
        /* every sequence at full length: the steps are the same for all */
        int64_t lens[1024];
        int n = ox_known(seq) && seq->ndim == 1 && seq->shape[0] <= 1024
                ? ox_const_ints(nd, 4, lens, 1024) : -1;
        for (int i = 0; i < n; i++)
            n = lens[i] == q->T ? n : -1;
        if (n != q->B)
            return ox_fail(nd, "sequence_lens must be known at import time and equal to the "
                           "sequence length %lld for every batch element (tec computes no "
                           "padded sequences)", (long long)q->T);
    }
    return true;
}

static bool op_rnn(ox_node *nd, const void *arg)
{
    rnn q = {.nd = nd, .sp = arg};
    if (!rnn_check(&q))
        return false;
    ox_value *shared[] = {q.w, q.r, q.b, q.h0, q.c0, q.p};
    for (int i = 0; i < 6; i++)
        rnn_share(shared[i]);
    q.xw = calloc((size_t)q.D, sizeof *q.xw);
    q.st = calloc((size_t)(q.D * q.T), sizeof *q.st);
    q.names = calloc((size_t)(q.D * q.T + q.D), sizeof *q.names);
    if (!q.xw || !q.st || !q.names)
        ir_out_of_memory();
    bool ok = true;
    for (int d = 0; ok && d < q.D; d++) {
        bool back = q.reverse || d == 1;
        ok = rnn_input(&q, d);
        for (int64_t s = 0; ok && s < q.T; s++) {
            int64_t t = back ? q.T - 1 - s : s;
            ok = rnn_step(&q, d, t, s == 0 ? -1 : back ? t + 1 : t - 1);
        }
    }
    int nout = ox_noutputs(nd);
    for (int i = 0; ok && i < nout && i < (q.lstm ? 3 : 2); i++)
        if (*nd->n->output[i])
            ok = rnn_gather(&q, i, i == 0, i == 2);
    free(q.xw);
    free(q.st);
    for (int64_t i = 0; i < q.D * q.T + q.D; i++)
        free(q.names[i]);
    free(q.names);
    return ok;
}

/* ---------------------------------------------------------------- the table */

/* The reductions, normalizations, contractions and convolutions. */
const ox_op ox_ops_nn[] = {
    {"ArgMax", op_argmaxmin, &(const bool){true}, AS_IS},
    {"ArgMin", op_argmaxmin, &(const bool){false}, AS_IS},
    {"AveragePool", pool, &(const bool){false}, WIDEN},
    {"BatchNormalization", op_batchnorm, NULL, WIDEN},
    {"Conv", op_conv, NULL, WIDEN},
    {"ConvTranspose", op_convtranspose, NULL, WIDEN},
    {"CumSum", op_cumsum, NULL, WIDEN},
    {"Det", op_det, NULL, WIDEN},
    {"Einsum", op_einsum, NULL, WIDEN},
    {"GatherElements", op_gatherelements, NULL, AS_IS},
    {"GatherND", op_gathernd, NULL, AS_IS},
    {"GridSample", op_gridsample, NULL, WIDEN},
    {"Scatter", op_scatterelements, NULL, AS_IS},
    {"ScatterElements", op_scatterelements, NULL, AS_IS},
    {"Gemm", op_gemm, NULL, WIDEN},
    {"GlobalAveragePool", global_pool, &(const global_spec){"global_avgpool", "+=", "$ / #"}, WIDEN},
    {"GroupNormalization", op_groupnorm, NULL, WIDEN},
    {"GRU", op_rnn, &(const rnn_spec){3, {"Sigmoid", "Tanh"}, "gru"}, WIDEN},
    {"GlobalMaxPool", global_pool, &(const global_spec){"global_maxpool", "max=", NULL}, AS_IS},
    {"Hardmax", op_hardmax, NULL, WIDEN},
    {"InstanceNormalization", op_instancenorm, NULL, WIDEN},
    {"LSTM", op_rnn, &(const rnn_spec){4, {"Sigmoid", "Tanh", "Tanh"}, "lstm"}, WIDEN},
    {"LayerNormalization", op_layernorm, NULL, WIDEN},
    {"LogSoftmax", softmax_op, &(const bool){true}, WIDEN},
    {"MatMul", op_matmul, NULL, WIDEN},
    {"MaxPool", pool, &(const bool){true}, AS_IS},
    {"NegativeLogLikelihoodLoss", op_nll_loss, &(const bool){false}, WIDEN},
    {"ReduceL1", reduce_op, &(const reduce_spec){"reduce_l1", "+=", "abs($)", NULL, false, 18, false}, WIDEN},
    {"ReduceL2", reduce_op, &(const reduce_spec){"reduce_l2", "+=", "$ * $", "sqrt($)", true, 18, false}, WIDEN},
    {"ReduceLogSum", reduce_op, &(const reduce_spec){"reduce_log_sum", "+=", "$", "log($)", true, 18, false}, WIDEN},
    {"ReduceLogSumExp", reduce_op, &(const reduce_spec){"reduce_log_sum_exp", "+=", "exp($)", "log($)", true, 18, true}, WIDEN},
    {"ReduceMax", reduce_op, &(const reduce_spec){"reduce_max", "max=", "$", NULL, false, 18, false}, AS_IS},
    {"ReduceMean", reduce_op, &(const reduce_spec){"reduce_mean", "+=", "$", "$ / #", true, 18, false}, WIDEN},
    {"ReduceMin", reduce_op, &(const reduce_spec){"reduce_min", "min=", "$", NULL, false, 18, false}, AS_IS},
    {"ReduceProd", reduce_op, &(const reduce_spec){"reduce_prod", "*=", "$", NULL, false, 18, false}, WIDEN},
    {"ReduceSum", reduce_op, &(const reduce_spec){"reduce_sum", "+=", "$", NULL, false, 13, false}, WIDEN},
    {"ReduceSumSquare", reduce_op, &(const reduce_spec){"reduce_sum_square", "+=", "$ * $", NULL, false, 18, false}, WIDEN},
    {"RNN", op_rnn, &(const rnn_spec){1, {"Tanh"}, "rnn"}, WIDEN},
    {"Resize", op_resize, NULL, WIDEN},
    {"Softmax", softmax_op, &(const bool){false}, WIDEN},
    {"SoftmaxCrossEntropyLoss", op_nll_loss, &(const bool){true}, WIDEN},
    {"TopK", op_topk, NULL, AS_IS},
    {"Trilu", op_trilu, NULL, AS_IS},
    {"Upsample", op_resize, &(const bool){true}, WIDEN},
};
const int ox_ops_nn_count = (int)(sizeof ox_ops_nn / sizeof *ox_ops_nn);
