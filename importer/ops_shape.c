/* importer/ops_shape.c — the ops that move elements (Reshape, Transpose,
 * Slice, Concat, Gather, Pad ...), mostly as the language's views, and the
 * ops whose values are known at import time (Constant, Shape, Range ...).
 * The table at the end lists them. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importer/impl.h"

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

bool ox_aliasable(const ox_value *x)
{
    return x && x->id && !x->konst && x->ndim >= 1;
}

bool ox_alias(ox_node *nd)
{
    const ox_value *x = nd->in[0];
    return reshape_to(nd, "copy", x->shape, x->ndim);
}

static bool op_reshape(ox_node *nd, const void *arg)
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
        } else if (s[i] < (allowzero ? 0 : 1) || s[i] > OX_MAX_NUMEL ||
                   (s[i] && known > OX_MAX_NUMEL / s[i])) {
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

static bool op_flatten(ox_node *nd, const void *arg)
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
int ox_axes_of(ox_node *nd, int input, bool attr, int64_t *axes)
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

static bool op_squeeze(ox_node *nd, const void *arg)
{
    ox_value *x = ox_input(nd, 0);
    int64_t axes[RT_MAX_DIMS + 1];
    int n = x ? ox_axes_of(nd, 1, nd->opset < 13, axes) : -1;
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

static bool op_unsqueeze(ox_node *nd, const void *arg)
{
    ox_value *x = ox_input(nd, 0);
    int64_t axes[RT_MAX_DIMS + 1];
    int n = x ? ox_axes_of(nd, 1, nd->opset < 13, axes) : -1;
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

static bool op_transpose(ox_node *nd, const void *arg)
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
        perm[i] = !np ? x->ndim - 1 - i : pa[i] >= 0 && pa[i] < x->ndim ? (int)pa[i] : -1;
        if (perm[i] < 0 || perm[i] >= x->ndim || seen[perm[i]])
            return ox_fail(nd, "perm is not a permutation of 0..%d", x->ndim - 1);
        seen[perm[i]] = true;
    }
    int64_t xs[RT_MAX_DIMS], st[RT_MAX_DIMS], ys[RT_MAX_DIMS];
    ox_strides(x, xs);
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
    if (x->id && x->ndim >= 1) {   /* the language's view: no copy (a weight not
                                      folded has no id: its copy, a layer) */
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

static bool op_concat(ox_node *nd, const void *arg)
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
    ox_same_shape(y, v[0]);
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
    /* An empty input (known, as every empty tensor is) adds nothing: the
     * rest are concatenated (torchvision's detection transform appends a
     * ConstantOfShape of [0] to the pads it computes). */
    int m = 0;
    for (int i = 0; i < n; i++)
        if (v[i]->shape[axis] > 0)
            v[m++] = v[i];
    n = m;
    if (n == 1 && ox_aliasable(v[0]))
        return ox_alias(nd);
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
    ox_strides(x, xs);
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

static bool op_split(ox_node *nd, const void *arg)
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
    const Onnx__AttributeProto *num = nd->opset >= 18 ? ox_attr(nd, "num_outputs") : NULL;
    if (num && n)
        return ox_fail(nd, "give either input split or attribute num_outputs, not both");
    if (num) {
        /* opset 18: num_outputs parts of ceil(D / num_outputs), the last one
         * what is left */
        int64_t m = ox_attr_int(nd, "num_outputs", 0), chunk = m >= 1 ? (D + m - 1) / m : 0;
        if (m != nout)
            return ox_fail(nd, "num_outputs is %lld but the node has %d outputs", (long long)m,
                           nout);
        if (chunk * (m - 1) >= D)
            return ox_fail(nd, "axis %d of size %lld does not split into %lld parts of %lld "
                           "(the last one would be empty)", axis, (long long)D, (long long)m,
                           (long long)chunk);
        for (int i = 0; i < nout; i++)
            parts[i] = i < nout - 1 ? chunk : D - chunk * (m - 1);
        n = nout;
    }
    if (n == 0) {
        if (D % nout)
            return ox_fail(nd, "axis %d of size %lld does not split into %d equal parts", axis,
                           (long long)D, nout);
        for (int i = 0; i < nout; i++)
            parts[i] = D / nout;
        n = nout;
    }
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (parts[i] < 0 || parts[i] > D)
            return ox_fail(nd, "part %d has size %lld, outside 0..%lld", i, (long long)parts[i],
                           (long long)D);
        sum += parts[i];
    }
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

static bool op_slice(ox_node *nd, const void *arg)
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
    bool sliced[RT_MAX_DIMS] = {false};
    for (int d = 0; d < x->ndim; d++)
        step[d] = 1, size[d] = x->shape[d];
    for (int i = 0; i < n; i++) {
        int a;
        if (!ox_axis(nd, na >= 0 ? ax[i] : i, x->ndim, &a))
            return false;
        /* ONNX leaves a repeated axis undefined (ONNX Runtime refuses it):
         * taking the last one silently would compute one reading of many */
        if (sliced[a])
            return ox_fail(nd, "axis %d is given twice", a);
        sliced[a] = true;
        int64_t D = x->shape[a], s = ns >= 0 ? sp[i] : 1, b = st[i], e = en[i];
        if (s == 0)
            return ox_fail(nd, "step 0 on axis %d", a);
        if (b < 0)
            b += D;
        if (e < 0 && e > INT64_MIN / 2)
            e += D;
        /* a step beyond the axis takes one element at most: as D + 1 */
        s = s > D ? D + 1 : s < -D ? -D - 1 : s;
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
        step[a] = size[a] > 1 ? s : 1;
    }
    if (!ox_known(x) && !ox_check_shape(nd, size, x->ndim))   /* known: may be empty */
        return false;
    return slice_kernel(nd, 0, "slice", start, step, size, NULL);
}

static bool op_gather(ox_node *nd, const void *arg)
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

static bool op_expand(ox_node *nd, const void *arg)
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
    if (!ox_broadcast(nd, both, 2, &R, ys))
        return false;
    ox_strides(x, xs);
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

static bool op_tile(ox_node *nd, const void *arg)
{
    ox_value *x = ox_input(nd, 0);
    int64_t r[RT_MAX_DIMS + 1];
    int n = x ? ox_const_ints(nd, 1, r, RT_MAX_DIMS + 1) : -1;
    if (n < 0)
        return false;
    if (n != x->ndim)
        return ox_fail(nd, "repeats has %d entries but the input has rank %d", n, x->ndim);
    for (int d = 0; d < n; d++)
        if (r[d] < 1 || r[d] > OX_ATTR_MAX)
            return ox_fail(nd, "repeat %lld on axis %d: repeats must be 1 to 2^31 (an empty "
                           "result is computed only at import time)", (long long)r[d], d);
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
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

/* Opset 18's input axes: pads[0..n) pads those axes only (begins, then
 * ends); rewritten in place for every axis of x.  The count of pads, or -1
 * after an error. */
static int pad_axes(ox_node *nd, const ox_value *x, int64_t *pads, int n)
{
    int64_t axes[RT_MAX_DIMS + 1], full[2 * RT_MAX_DIMS] = {0};
    int na = ox_const_ints(nd, 3, axes, RT_MAX_DIMS + 1);
    bool seen[RT_MAX_DIMS] = {0};
    if (na < 0)
        return -1;
    if (n != 2 * na)
        return ox_fail(nd, "pads has %d entries for %d axes", n, na), -1;
    for (int i = 0; i < na; i++) {
        int a;
        if (!ox_axis(nd, axes[i], x->ndim, &a))
            return -1;
        if (seen[a])
            return ox_fail(nd, "axis %lld is named twice", (long long)axes[i]), -1;
        seen[a] = true;
        full[a] = pads[i], full[x->ndim + a] = pads[na + i];
    }
    memcpy(pads, full, sizeof(int64_t) * (size_t)(2 * x->ndim));
    return 2 * x->ndim;
}

static bool op_pad(ox_node *nd, const void *arg)
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
        if (nd->nin > 3 && nd->in[3] && (n = pad_axes(nd, x, pads, n)) < 0)
            return false;
    }
    if (n != 2 * x->ndim)
        return ox_fail(nd, "pads has %d entries but the input has rank %d", n, x->ndim);
    const char *mode = ox_attr_str(nd, "mode", "constant");
    bool edge = strcmp(mode, "edge") == 0, reflect = strcmp(mode, "reflect") == 0;
    if (!edge && !reflect && strcmp(mode, "constant") != 0)
        return ox_fail(nd, "mode '%s' is not supported", mode);
    ox_value *y = ox_output(nd, 0);
    ox_same_shape(y, x);
    for (int d = 0; d < x->ndim; d++) {
        if (pads[d] < 0 || pads[d + x->ndim] < 0)
            return ox_fail(nd, "negative pads are not supported");
        if (pads[d] > OX_ATTR_MAX || pads[d + x->ndim] > OX_ATTR_MAX)
            return ox_fail(nd, "pads must be at most 2^31");
        if (reflect && (pads[d] >= x->shape[d] || pads[d + x->ndim] >= x->shape[d]))
            return ox_fail(nd, "reflect pads must be smaller than the dimension");
        y->shape[d] += pads[d] + pads[d + x->ndim];
    }
    bool none = true;   /* PyTorch exports an AvgPool2d as a Pad (of zeros when it has no
                           padding) and an AveragePool */
    for (int d = 0; d < 2 * x->ndim; d++)
        none = none && pads[d] == 0;
    if (none && ox_aliasable(x))
        return ox_alias(nd);
    /* PyTorch's avg_pool2d(padding=p) and F.pad before a convolution: the
     * one reader pads its window instead, and no copy is made */
    const Onnx__NodeProto *reader = ox_pad_reader(nd);
    if (!none && !edge && !reflect && reader && x->id && !ox_known(x) &&
        ox_pad_folds(nd, reader, x, pads, value)) {
        y->pad_of = x;
        for (int d = 0; d < x->ndim; d++) {
            y->pad_b[d] = pads[d];
            y->pad_e[d] = pads[d + x->ndim];
        }
        return true;
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

static bool op_depth_space(ox_node *nd, const void *arg)
{
    bool to_space = *(const bool *)arg;
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    if (x->ndim != 4)
        return ox_fail(nd, "the input must be 4-D NCHW");
    int64_t b = ox_attr_int(nd, "blocksize", 0);
    if (b > 1 << 16)
        return ox_fail(nd, "blocksize %lld is larger than 2^16", (long long)b);
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

/* OneHot: y has indices' dimensions and a new one of `depth` at axis;
 * y[.., j, ..] is values[1] where the index equals j (or j - depth: a
 * negative index counts from the end), else values[0].  depth and values
 * must be known at import time (PyTorch's F.one_hot exports constants). */
static bool op_onehot(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0), *dv = ox_input(nd, 1), *vals = ox_input(nd, 2);
    if (!x || !dv || !vals)
        return false;
    if (x->ndim < 1)
        return ox_fail(nd, "the indices ('%s') must have rank >= 1", x->onnx);
    /* (a graph input given with --input is known: the program is specialized) */
    if (!dv->konst || rt_tensor_numel(dv->konst) != 1)
        return ox_fail(nd, "depth ('%s') must be one value known at import time", dv->onnx);
    if (!vals->konst || rt_tensor_numel(vals->konst) != 2)
        return ox_fail(nd, "values ('%s') must be two values known at import time (off, on)",
                       vals->onnx);
    double dd = rt_tensor_get(dv->konst, 0);
    if (!(dd >= 1 && dd <= (double)OX_ATTR_MAX))
        return ox_fail(nd, "depth %g must be from 1 to 2^31", dd);
    int64_t depth = (int64_t)dd;   /* (a float depth is truncated, as ONNX Runtime does) */
    int r = x->ndim + 1, axis;
    if (!ox_axis(nd, ox_attr_int(nd, "axis", -1), r, &axis))
        return false;
    ox_value *y = ox_output(nd, 0);
    y->dtype = vals->dtype;
    y->ndim = r;
    for (int d = 0, s = 0; d < r; d++)
        y->shape[d] = d == axis ? depth : x->shape[s++];
    if (!ox_check_shape(nd, y->shape, y->ndim))
        return false;
    ox_kernel k;
    ox_kernel_init(&k, nd);
    ox_operand(&k, x, "x");
    ox_str idx = {0}, rd = {0}, off = {0}, on = {0};
    ox_indices(&idx, "i", 0, r);
    for (int d = 0; d < r; d++)
        if (d != axis)
            ox_printf(&rd, "%si%d", rd.s ? ", " : "", d);
    if (ir_dtype_is_float(vals->dtype)) {
        ox_float(&off, rt_tensor_get(vals->konst, 0));
        ox_float(&on, rt_tensor_get(vals->konst, 1));
    } else {
        ox_int(&off, rt_tensor_get_int(vals->konst, 0));
        ox_int(&on, rt_tensor_get_int(vals->konst, 1));
    }
    /* float indices are truncated to integers, as ONNX Runtime casts them */
    const char *cast = ir_dtype_is_float(x->dtype) ? "i64" : "";
    ox_printf(&k.body, "    y[%s] = %s(x[%s]) == i%d || %s(x[%s]) == i%d - %lld ? %s : %s\n", idx.s,
              cast, rd.s, axis, cast, rd.s, axis, (long long)depth, on.s, off.s);
    free(idx.s);
    free(rd.s);
    free(off.s);
    free(on.s);
    bool ok = ox_kernel_finish(&k, "one_hot", y, NULL);
    ox_kernel_free(&k);
    return ok;
}

/* ---------------------------------------------------------------- constants */

static bool op_constant(ox_node *nd, const void *arg)
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

static bool op_shape(ox_node *nd, const void *arg)
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
    int64_t n = hi - lo;   /* 0: a scalar's shape (torch's reshape of a sum), known and empty */
    char err[256];
    rt_tensor *t = rt_tensor_new(IR_I64, 1, &n, err, sizeof err);
    for (int64_t i = 0; i < n && t; i++)
        ((int64_t *)t->data)[i] = x->shape[lo + i];
    return ox_set_const(nd, 0, t, false);
}

static bool op_size(ox_node *nd, const void *arg)
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

static bool op_constantofshape(ox_node *nd, const void *arg)
{
    int64_t s[RT_MAX_DIMS + 1];
    int n = ox_const_ints(nd, 0, s, RT_MAX_DIMS + 1);
    if (n < 0)
        return false;
    /* its value is known, so it may be empty (torchvision's detection
     * transform pads with the ConstantOfShape of a computed [0]) */
    if (!ox_check_shape_of(nd, s, n, true))
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

/* EyeLike: ones on the k'th diagonal of a 2-D tensor of the input's shape
 * (PyTorch's torch.diagonal and diag_embed), in dtype (else the input's):
 * its value depends on the shape alone, so it is known at import time. */
static bool op_eyelike(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    if (x->ndim != 2)
        return ox_fail(nd, "the input must be 2-D, not of rank %d", x->ndim);
    ir_dtype t = x->dtype;
    const Onnx__AttributeProto *a = ox_attr(nd, "dtype");
    if (a && !ox_dtype_of((int32_t)a->i, &t))
        return ox_fail(nd, "dtype %lld is not supported", (long long)a->i);
    int64_t k = ox_attr_int(nd, "k", 0);
    rt_tensor *y = ox_const_new(nd, t, 2, x->shape);
    if (!y)
        return false;
    for (int64_t i = 0; i < x->shape[0]; i++)
        if (i + k >= 0 && i + k < x->shape[1])
            rt_tensor_set(y, i * x->shape[1] + i + k, 1);
    return ox_set_const(nd, 0, y, false);
}

/* NonZero: the indices [rank, n] of the input's n non-zero elements, in
 * row-major order.  n depends on the input's values, and tec's shapes are
 * static, so only a known input is taken (computed here: PyTorch's
 * nonzero of a mask built from shapes). */
static bool op_nonzero(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0);
    if (!x)
        return false;
    if (!ox_known(x))
        return ox_fail(nd, "its output's shape depends on the values of its input (one column "
                       "per non-zero element), and tec's shapes are fixed when it imports the "
                       "model: NonZero is computed only of a value known then, but '%s' is "
                       "computed at run time", x->onnx);
    int64_t n = rt_tensor_numel(x->konst), nz = 0;
    for (int64_t e = 0; e < n; e++)
        nz += rt_tensor_get(x->konst, e) != 0;
    int rank = x->ndim ? x->ndim : 1;
    rt_tensor *y = ox_const_new(nd, IR_I64, 2, (const int64_t[]){rank, nz});
    if (!y)
        return false;
    for (int64_t e = 0, c = 0; e < n; e++) {
        if (rt_tensor_get(x->konst, e) == 0)
            continue;
        int64_t r = e;
        for (int d = x->ndim - 1; d >= 0; d--) {
            ((int64_t *)y->data)[d * nz + c] = r % x->shape[d];
            r /= x->shape[d];
        }
        if (!x->ndim)
            ((int64_t *)y->data)[c] = 0;
        c++;
    }
    return ox_set_const(nd, 0, y, false);
}

static bool op_range(ox_node *nd, const void *arg)
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

/* ---------------------------------------------------------------- sequences
 *
 * ONNX's sequences, known at import time (impl.h, ox_seq): each op makes a
 * new sequence of the values it is given, or reads an element, at
 * positions that must be known at import time.  What reads an element is a
 * view of it (an Identity), and ConcatFromSequence is a Concat of them:
 * no sequence is ever a tensor of the program. */

ox_value *ox_concat_values(ox_node *nd, ox_value *const *v, int n, int64_t axis, bool new_axis,
                           const char *out)
{
    if (n < 1) {
        ox_fail(nd, "there are no tensors to concatenate (the sequence is empty)");
        return NULL;
    }
    ox_value **part = calloc((size_t)n, sizeof *part);
    if (!part)
        ir_out_of_memory();
    memcpy(part, v, sizeof *part * (size_t)n);
    bool ok = true;
    if (new_axis) {   /* each one with a dimension of 1 at axis, then concatenated there */
        int r = v[0]->ndim;
        if (axis < -r - 1 || axis > r)
            ok = ox_fail(nd, "axis %lld is out of range for stacking tensors of rank %d "
                         "(new_axis: -%d..%d)", (long long)axis, r, r + 1, r);
        axis = axis < 0 ? axis + r + 1 : axis;
        ox_step_attr axes = {"axes", 1, &axis, true};
        for (int i = 0; i < n && ok; i++)
            if (v[i]->ndim != r)
                ok = ox_fail(nd, "tensors '%s' and '%s' differ in rank (%d and %d)", v[0]->onnx,
                             v[i]->onnx, r, v[i]->ndim);
            else
                ok = (part[i] = ox_step(nd, "Unsqueeze", 11, &v[i], 1, NULL, &axes, 1)) != NULL;
    }
    /* a Concat takes at most 64 inputs: more are concatenated 64 at a time */
    ox_step_attr at = {"axis", 1, &axis, false};
    while (ok && n > 64) {
        int m = 0;
        for (int i = 0; i < n && ok; i += 64, m++) {
            int k = n - i < 64 ? n - i : 64;
            ok = (part[m] = ox_step(nd, "Concat", 0, part + i, k, NULL, &at, 1)) != NULL;
        }
        n = m;
    }
    ox_value *y = ok ? ox_step(nd, "Concat", 0, part, n, out, &at, 1) : NULL;
    free(part);
    return y;
}

/* Input i, which must be a sequence; NULL after an error. */
static const ox_seq *seq_input(ox_node *nd, int i)
{
    ox_value *v = ox_input(nd, i);
    if (v && !v->seq)
        ox_fail(nd, "input %d ('%s') is a tensor, but %s takes a sequence there", i + 1, v->onnx,
                nd->n->op_type);
    return v ? v->seq : NULL;
}

/* Whether tensor input i may be an element of s (its dtype), else an
 * error. */
static bool seq_element(ox_node *nd, int i, ir_dtype t)
{
    ox_value *v = ox_input(nd, i);
    if (!v)
        return false;
    if (v->seq)
        return ox_fail(nd, "input %d ('%s') is a sequence, but the elements of a sequence are "
                       "tensors", i + 1, v->onnx);
    if (v->dtype != t)
        return ox_fail(nd, "input %d ('%s') is a tensor of %s, but the sequence's elements are "
                       "of %s", i + 1, v->onnx, ir_dtype_name(v->dtype), ir_dtype_name(t));
    return true;
}

/* The position of input i (absent: def), one integer known at import time
 * in -n..n-1 (-n..n when end: an insertion's, which may append), as a
 * position in 0..n; false after an error. */
static bool seq_position(ox_node *nd, int i, int n, bool end, int def, int *pos)
{
    if (i >= nd->nin || !nd->in[i]) {
        *pos = def;
        return true;
    }
    int64_t p;
    int got = ox_const_ints(nd, i, &p, 1);
    if (got < 0)
        return false;
    if (got != 1)
        return ox_fail(nd, "the position ('%s') must be one integer", nd->in[i]->onnx);
    if (p < -n || p > (end ? n : n - 1))
        return ox_fail(nd, "position %lld is out of range for a sequence of %d elements "
                       "(-%d..%d)", (long long)p, n, n, end ? n : n - 1);
    *pos = (int)(p < 0 ? p + n : p);
    return true;
}

static bool op_sequence_empty(ox_node *nd, const void *arg)
{
    (void)arg;
    int64_t t = ox_attr_int(nd, "dtype", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    ir_dtype dt;
    if (!ox_dtype_of((int32_t)t, &dt))
        return ox_fail(nd, "dtype %s is not supported (tec takes " OX_DTYPES " tensors)",
                       ox_onnx_type_name((int32_t)t));
    return ox_seq_output(nd, 0, ox_seq_new(nd, 0, dt));
}

static bool op_sequence_construct(ox_node *nd, const void *arg)
{
    (void)arg;
    if (nd->nin < 1)
        return ox_fail(nd, "SequenceConstruct needs at least one input");
    ox_value *first = ox_input(nd, 0);
    if (!first)
        return false;
    ox_seq *s = ox_seq_new(nd, nd->nin, first->dtype);
    for (int i = 0; i < nd->nin; i++) {
        if (!seq_element(nd, i, first->dtype))
            return false;
        s->elem[i] = nd->in[i];
    }
    return ox_seq_output(nd, 0, s);
}

static bool op_sequence_insert(ox_node *nd, const void *arg)
{
    (void)arg;
    const ox_seq *s = seq_input(nd, 0);
    int pos;
    if (!s || !seq_element(nd, 1, s->dtype) || !seq_position(nd, 2, s->n, true, s->n, &pos))
        return false;
    ox_seq *r = ox_seq_new(nd, s->n + 1, s->dtype);
    memcpy(r->elem, s->elem, sizeof *r->elem * (size_t)pos);
    r->elem[pos] = nd->in[1];
    memcpy(r->elem + pos + 1, s->elem + pos, sizeof *r->elem * (size_t)(s->n - pos));
    return ox_seq_output(nd, 0, r);
}

static bool op_sequence_erase(ox_node *nd, const void *arg)
{
    (void)arg;
    const ox_seq *s = seq_input(nd, 0);
    int pos;
    if (!s)
        return false;
    if (s->n == 0)
        return ox_fail(nd, "the sequence ('%s') is empty: there is nothing to erase",
                       nd->in[0]->onnx);
    if (!seq_position(nd, 1, s->n, false, s->n - 1, &pos))
        return false;
    ox_seq *r = ox_seq_new(nd, s->n - 1, s->dtype);
    memcpy(r->elem, s->elem, sizeof *r->elem * (size_t)pos);
    memcpy(r->elem + pos, s->elem + pos + 1, sizeof *r->elem * (size_t)(s->n - 1 - pos));
    return ox_seq_output(nd, 0, r);
}

static bool op_sequence_at(ox_node *nd, const void *arg)
{
    (void)arg;
    const ox_seq *s = seq_input(nd, 0);
    int pos;
    if (!s)
        return false;
    if (nd->nin < 2 || !nd->in[1])
        return ox_fail(nd, "input 2 (the position) is missing");
    if (s->n == 0)
        return ox_fail(nd, "the sequence ('%s') is empty: it has no element to read",
                       nd->in[0]->onnx);
    if (!seq_position(nd, 1, s->n, false, 0, &pos))
        return false;
    return ox_step(nd, "Identity", 0, &s->elem[pos], 1, nd->n->output[0], NULL, 0) != NULL;
}

static bool op_sequence_length(ox_node *nd, const void *arg)
{
    (void)arg;
    const ox_seq *s = seq_input(nd, 0);
    rt_tensor *t = s ? ox_const_new(nd, IR_I64, 0, NULL) : NULL;
    if (!t)
        return false;
    ox_put_int(t, 0, s->n);
    return ox_set_const(nd, 0, t, false);
}

static bool op_concat_from_sequence(ox_node *nd, const void *arg)
{
    (void)arg;
    const ox_seq *s = seq_input(nd, 0);
    if (!s)
        return false;
    if (!ox_attr(nd, "axis"))
        return ox_fail(nd, "attribute axis is missing");
    if (s->n == 0)
        return ox_fail(nd, "the sequence ('%s') is empty: there are no tensors to concatenate",
                       nd->in[0]->onnx);
    return ox_concat_values(nd, s->elem, s->n, ox_attr_int(nd, "axis", 0),
                            ox_attr_int(nd, "new_axis", 0) != 0, nd->n->output[0]) != NULL;
}

/* The most parts SplitToSequence makes (each is a node imported). */
#define OX_MAX_PARTS 4096

/* SplitToSequence: parts of input 0 along axis, each a Slice (a view of a
 * computed tensor): of the sizes `split` lists, or of `split` each (the
 * last one what is left), or of 1 each, then without the axis unless
 * keepdims. */
static bool op_split_to_sequence(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *x = ox_input(nd, 0);
    int axis;
    if (!x || !ox_axis(nd, ox_attr_int(nd, "axis", 0), x->ndim, &axis))
        return false;
    int64_t D = x->shape[axis];
    ox_value *split = nd->nin > 1 ? nd->in[1] : NULL;
    /* parts: of 1 element at least, or as many as the list names */
    int64_t most = split && split->ndim == 1 && split->shape[0] > D ? split->shape[0] : D;
    if (most > OX_MAX_PARTS)
        return ox_fail(nd, "the input would split into %lld parts (tec makes at most %d)",
                       (long long)most, OX_MAX_PARTS);
    int64_t *size = calloc((size_t)most + 1, sizeof *size);
    if (!size)
        ir_out_of_memory();
    int n = 0;
    bool squeeze = false, ok = true;
    if (!split) {
        for (n = 0; n < D; n++)
            size[n] = 1;
        squeeze = ox_attr_int(nd, "keepdims", 1) == 0;
    } else if (split->ndim == 0) {   /* a chunk size */
        int64_t c;
        if ((ok = ox_const_ints(nd, 1, &c, 1) == 1) && c < 1)
            ok = ox_fail(nd, "the split ('%s') is %lld: a part has at least 1 element",
                         split->onnx, (long long)c);
        for (int64_t at = 0; ok && at < D; at += c)
            size[n++] = D - at < c ? D - at : c;
    } else {
        int64_t sum = 0;
        n = split->ndim == 1 ? (int)split->shape[0] : -1;
        if (n < 0)
            ok = ox_fail(nd, "the split ('%s') must be one integer or a list of sizes",
                         split->onnx);
        else if ((ok = ox_const_ints(nd, 1, size, n) == n))
            for (int i = 0; i < n; i++)
                sum += size[i] < 0 ? D + 1 : size[i];
        if (ok && sum != D)
            ok = ox_fail(nd, "the split's sizes sum to %lld, not to axis %d's size %lld",
                         (long long)sum, axis, (long long)D);
    }
    ox_seq *s = ok ? ox_seq_new(nd, n, x->dtype) : NULL;
    int64_t at = 0, ax = axis;
    for (int i = 0; ok && i < n; i++) {
        int64_t end = at + size[i];
        ox_step_attr sl[3] = {{"starts", 1, &at, true}, {"ends", 1, &end, true},
                              {"axes", 1, &ax, true}};
        ox_value *part = ox_step(nd, "Slice", 1, &x, 1, NULL, sl, 3);
        if (part && squeeze) {
            ox_step_attr sq = {"axes", 1, &ax, true};
            part = ox_step(nd, "Squeeze", 11, &part, 1, NULL, &sq, 1);
        }
        ok = (s->elem[i] = part) != NULL;
        at = end;
    }
    free(size);
    return ok && ox_seq_output(nd, 0, s);
}

/* ---------------------------------------------------------------- the table */

/* The ops that move elements or make constants. */
const ox_op ox_ops_shape[] = {
    {"Concat", op_concat, NULL, AS_IS},
    {"ConcatFromSequence", op_concat_from_sequence, NULL, AS_IS},
    {"Constant", op_constant, NULL, AS_IS},
    {"ConstantOfShape", op_constantofshape, NULL, AS_IS},
    {"DepthToSpace", op_depth_space, &(const bool){true}, AS_IS},
    {"Expand", op_expand, NULL, AS_IS},
    {"EyeLike", op_eyelike, NULL, AS_IS},
    {"Flatten", op_flatten, NULL, AS_IS},
    {"Gather", op_gather, NULL, AS_IS},
    {"If", ox_op_if, NULL, AS_IS},
    {"Loop", ox_op_loop, NULL, AS_IS},
    {"NonZero", op_nonzero, NULL, AS_IS},
    {"OneHot", op_onehot, NULL, AS_IS},
    {"Pad", op_pad, NULL, AS_IS},
    {"Range", op_range, NULL, AS_IS},
    {"Reshape", op_reshape, NULL, AS_IS},
    {"ScatterND", ox_op_scatternd, NULL, AS_IS},
    {"SequenceAt", op_sequence_at, NULL, AS_IS},
    {"SequenceConstruct", op_sequence_construct, NULL, AS_IS},
    {"SequenceEmpty", op_sequence_empty, NULL, AS_IS},
    {"SequenceErase", op_sequence_erase, NULL, AS_IS},
    {"SequenceInsert", op_sequence_insert, NULL, AS_IS},
    {"SequenceLength", op_sequence_length, NULL, AS_IS},
    {"Shape", op_shape, NULL, AS_IS},
    {"Size", op_size, NULL, AS_IS},
    {"Slice", op_slice, NULL, AS_IS},
    {"SpaceToDepth", op_depth_space, &(const bool){false}, AS_IS},
    {"Split", op_split, NULL, AS_IS},
    {"SplitToSequence", op_split_to_sequence, NULL, AS_IS},
    {"Squeeze", op_squeeze, NULL, AS_IS},
    {"Tile", op_tile, NULL, AS_IS},
    {"Transpose", op_transpose, NULL, AS_IS},
    {"Unsqueeze", op_unsqueeze, NULL, AS_IS},
};
const int ox_ops_shape_count = (int)(sizeof ox_ops_shape / sizeof *ox_ops_shape);
