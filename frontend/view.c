/* frontend/view.c — reshape, flatten, permute, transpose and slice.
 *
 * These ops move no data: `v = transpose(x, 0, 1)` binds v to a *view* of
 * x (env.h, fe_view), an affine map from v's indices to the indices of
 * x's storage, and every kernel that reads v reads that storage through the
 * rewritten indices (lower.c).  Views compose: a view of a view is one map.
 * A copy is made only where the layout allows no map:
 *
 *   - a reshape (or flatten) that merges dimensions the view has reordered
 *     or strided (`reshape(transpose(x, 1, 2), ...)`, as NumPy copies), and
 *   - a view that is a program output (an output owns its storage).
 *
 * A reshape of contiguous elements costs nothing even though its index map
 * would need division: the storage is seen under the new shape (a call may
 * pass a buffer to a parameter of another shape with the same element
 * count, doc/ir.md), so the map stays affine. */
#include "frontend/view.h"

#include "frontend/stage.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- maps */

/* The most dimensions a view and its storage may have (as many as a
 * runtime tensor). */
enum { VIEW_MAX_DIMS = 8 };

/* A view's map while it is built: shape and coefficients over src. */
typedef struct vmap {
    fe_tensor *src;
    const char *src_name;   /* what the first view of src called it */
    int ndim;
    int64_t shape[VIEW_MAX_DIMS];
    int64_t off[VIEW_MAX_DIMS];
    int64_t coef[VIEW_MAX_DIMS][VIEW_MAX_DIMS];   /* [src dim][view dim] */
} vmap;

/* t's map: the identity on t's own storage (called `name`), or its
 * view's. */
static void map_of(fe_tensor *t, const char *name, vmap *v)
{
    memset(v, 0, sizeof *v);
    v->src = fe_storage(t);
    v->src_name = t->view ? t->view->src_name : name;
    v->ndim = t->ndim;
    memcpy(v->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    for (int m = 0; m < v->src->ndim; m++) {
        if (!t->view) {
            v->coef[m][m] = 1;
            continue;
        }
        v->off[m] = t->view->off[m];
        for (int j = 0; j < t->ndim; j++)
            v->coef[m][j] = t->view->coef[(size_t)m * (size_t)t->ndim + (size_t)j];
    }
}

/* Does v read its src in row-major order from element 0 (so that a
 * reshape of it is its src seen under another shape)? */
static bool contiguous(const vmap *v)
{
    if (v->src->ndim != v->ndim || memcmp(v->src->shape, v->shape, sizeof(int64_t) * (size_t)v->ndim))
        return false;
    for (int m = 0; m < v->ndim; m++) {
        if (v->off[m])
            return false;
        for (int j = 0; j < v->ndim; j++)
            if (v->coef[m][j] != (m == j) && v->shape[j] > 1)
                return false;
    }
    return true;
}

/* The storage of `base` seen under `shape` (the same element count): base
 * itself, or a tensor sharing its buffer, one per shape. */
static fe_tensor *reshaped_storage(fe_ctx *c, fe_tensor *base, int ndim, const int64_t *shape)
{
    if (base->reshape_of)
        base = base->reshape_of;
    if (base->ndim == ndim && !memcmp(base->shape, shape, sizeof(int64_t) * (size_t)ndim))
        return base;
    for (fe_tensor *s = base->shapes; s; s = s->shapes)
        if (s->ndim == ndim && !memcmp(s->shape, shape, sizeof(int64_t) * (size_t)ndim))
            return s;
    fe_tensor *s = fe_new_tensor(c, base->name, base->dtype, ndim, shape, base->loc);
    s->buf = base->buf;
    s->reshape_of = base;
    s->shapes = base->shapes;
    base->shapes = s;
    return s;
}

/* The view of map v as a tensor: v's src itself when v is the identity. */
static fe_tensor *make_view(fe_ctx *c, const vmap *v, const char *name, const char *op, fe_span loc)
{
    /* the identity on a graph value is that value (the storage seen under
       another shape is not a value: it is read through a view) */
    if (contiguous(v) && !v->src->reshape_of)
        return v->src;
    fe_tensor *t = fe_new_tensor(c, name, v->src->dtype, v->ndim, v->shape, loc);
    int r = v->src->ndim, n = v->ndim;
    fe_view *w = ir_alloc(c->a, sizeof *w);
    w->src = v->src;
    w->src_name = v->src_name;
    w->op = op;
    w->off = ir_alloc(c->a, sizeof(int64_t) * (size_t)(r ? r : 1));
    w->coef = ir_alloc(c->a, sizeof(int64_t) * (size_t)((r ? r : 1) * (n ? n : 1)));
    for (int m = 0; m < r; m++) {
        w->off[m] = v->off[m];
        for (int j = 0; j < n; j++)
            w->coef[(size_t)m * (size_t)n + (size_t)j] = v->coef[m][j];
    }
    t->view = w;
    return t;
}

fe_tensor *fe_view_param(fe_ctx *c, fe_tensor *t, const char *name)
{
    fe_tensor *src = t->view->src;
    fe_tensor *own = fe_new_tensor(c, name, src->dtype, src->ndim, src->shape, src->loc);
    own->buf = src->buf;
    own->reshape_of = src->reshape_of ? src->reshape_of : src;
    fe_tensor *p = fe_new_tensor(c, name, t->dtype, t->ndim, t->shape, t->loc);
    fe_view *w = ir_alloc(c->a, sizeof *w);
    *w = *t->view;
    w->src = own;
    w->src_name = name;
    p->view = w;
    return p;
}

/* v reshaped to `shape` as an affine map, if there is one: the view's
 * dimensions and the new ones are matched in groups of equal element
 * count (dimensions of size 1 aside); a group of several old dimensions
 * must step through src as one dimension would (each one's coefficients
 * the next one's times its size).  False when some group does not. */
static bool reshape_map(vmap *v, int ndim, const int64_t *shape)
{
    int old[VIEW_MAX_DIMS], nold = 0, nw[VIEW_MAX_DIMS], nnew = 0;
    for (int j = 0; j < v->ndim; j++)
        if (v->shape[j] > 1)
            old[nold++] = j;
    for (int j = 0; j < ndim; j++)
        if (shape[j] > 1)
            nw[nnew++] = j;
    int r = v->src->ndim;
    int64_t coef[VIEW_MAX_DIMS][VIEW_MAX_DIMS] = {{0}};
    int i = 0, k = 0;
    while (i < nold && k < nnew) {
        int i2 = i, k2 = k;
        int64_t po = v->shape[old[i]], pn = shape[nw[k]];
        while (po != pn) {
            if (po < pn)
                po *= v->shape[old[++i2]];
            else
                pn *= shape[nw[++k2]];
        }
        for (int a = i; a < i2; a++)
            for (int m = 0; m < r; m++)
                if (v->coef[m][old[a]] != v->coef[m][old[a + 1]] * v->shape[old[a + 1]])
                    return false;
        /* the group's linear index L steps src by the innermost's coefficients */
        int64_t stride = 1;
        for (int b = k2; b >= k; b--) {
            for (int m = 0; m < r; m++)
                coef[m][nw[b]] = v->coef[m][old[i2]] * stride;
            stride *= shape[nw[b]];
        }
        i = i2 + 1;
        k = k2 + 1;
    }
    v->ndim = ndim;
    memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
    memcpy(v->coef, coef, sizeof coef);
    return true;
}

/* ---------------------------------------------------------------- copies */

fe_tensor *fe_materialize(fe_ctx *c, fe_tensor *t, const char *layer, const char *op, fe_span loc)
{
    if (!t->view)
        return t;
    int n = t->ndim;
    const char *name = fe_claim_free_layer(c, layer, loc);
    const char *dot = strrchr(name, '.');
    fe_tensor *out = fe_new_tensor(c, dot ? dot + 1 : name, t->dtype, n, t->shape, loc);
    /* out[i0, i1, ...] = t[i0, i1, ...], a statement of one stage */
    fe_kexpr *rd = ir_alloc(c->a, sizeof *rd);
    rd->kind = FE_K_LOAD;
    rd->dtype = t->dtype;
    rd->t = t;
    rd->nargs = n;
    rd->args = ir_alloc(c->a, sizeof(fe_kexpr *) * (size_t)(n ? n : 1));
    rd->check = ir_alloc(c->a, sizeof(fe_check) * (size_t)(n ? n : 1));
    rd->text = rd->tname = t->name;
    fe_kstmt *ks = ir_alloc(c->a, sizeof *ks);
    ks->lhs = out;
    ks->op = FE_AS_SET;
    ks->rhs = rd;
    ks->span = loc;
    ks->nlhs = ks->nvars = n;
    ks->lhs_vars = ir_alloc(c->a, sizeof(int) * (size_t)(n ? n : 1));
    ks->vars = ir_alloc(c->a, sizeof(fe_kvar) * (size_t)(n ? n : 1));
    for (int j = 0; j < n; j++) {
        fe_kexpr *iv = ir_alloc(c->a, sizeof *iv);
        iv->kind = FE_K_VAR;
        iv->dtype = IR_I64;
        iv->var = j;
        rd->args[j] = iv;
        rd->check[j] = FE_CHK_NONE;
        ks->lhs_vars[j] = j;
        ks->vars[j].name = ir_sprintf(c->a, "i%d", j);
        ks->vars[j].extent = t->shape[j];
    }
    fe_stage st = {.nstmts = 1, .ndefined = 1, .loc = loc};
    st.stmts = &ks;
    st.defined = &out;
    fe_give_buffer(c, out, name);
    fe_sarg params[2] = {{t->view->src, t->view->src_name}, {out, out->name}};
    fe_emit_stage(c, &st, name, op, loc, params, 2);
    return out;
}

/* ---------------------------------------------------------------- the ops */

/* The arguments of one view call: the tensor, then integers. */
typedef struct vcall {
    fe_ctx *c;
    const fe_expr *x;
    const char *op;
    fe_tensor *t;
    const char *tname;
    int64_t ints[VIEW_MAX_DIMS + 1];
    fe_span spans[VIEW_MAX_DIMS + 1];
    bool given[VIEW_MAX_DIMS + 1];
    int nints;
} vcall;

/* "x (f32[2, 3, 4])" */
static const char *what(const vcall *v)
{
    return ir_sprintf(v->c->a, "%s (%s)", v->tname, fe_shape_str(v->c->a, v->t->dtype, v->t->ndim, v->t->shape));
}

/* Reads the call's arguments: a tensor, then compile-time integers, by
 * position or, when `names` is given, by those keywords too.  False after
 * an error (silently for a poisoned tensor). */
static bool read_args(vcall *v, fe_inst *in, const char *const *names, int nnames)
{
    fe_ctx *c = v->c;
    const fe_expr *x = v->x;
    if (x->nargs == 0 || x->args[0].name) {
        fe_error(c, x->span, "%s needs a tensor as its first argument, e.g. %s(x, ...)", v->op, v->op);
        return false;
    }
    const fe_expr *a0 = x->args[0].value;
    fe_binding *b = a0->kind == FE_E_NAME ? fe_env_find(in->env, a0->name) : NULL;
    if (b && b->v.kind == FE_V_POISON)
        return false;
    if (!b || b->v.kind != FE_V_TENSOR) {
        if (a0->kind == FE_E_NAME && !b)
            fe_error(c, a0->span, "unknown name '%s'%s", a0->name, fe_suggest(c, in->env, a0->name));
        else
            fe_error(c, a0->span, "%s: the first argument must name a tensor, but '%s' is not one",
                     v->op, fe_span_text(c->a, a0->span));
        return false;
    }
    v->t = b->v.t;
    v->tname = a0->name;
    int max = names ? nnames : VIEW_MAX_DIMS;
    bool ok = true;
    for (int i = 1; i < x->nargs; i++) {
        const fe_arg *a = &x->args[i];
        int slot = i - 1;
        if (a->name) {
            slot = -1;
            for (int k = 0; names && k < nnames; k++)
                if (strcmp(a->name, names[k]) == 0)
                    slot = k;
            if (slot < 0) {
                fe_error(c, a->span, "%s has no argument '%s'", v->op, a->name);
                ok = false;
                continue;
            }
        } else if (i > 1 && x->args[i - 1].name) {
            fe_error(c, a->span, "in call to %s: positional argument after keyword arguments", v->op);
            ok = false;
            continue;
        }
        if (slot >= max) {
            fe_error(c, a->span, "%s takes at most %d argument%s after the tensor", v->op, max,
                     max == 1 ? "" : "s");
            ok = false;
            continue;
        }
        if (v->given[slot]) {
            fe_error(c, a->span, "in call to %s: argument '%s' is given twice", v->op, names[slot]);
            ok = false;
            continue;
        }
        fe_value val;
        if (!fe_eval(c, in->env, a->value, &val)) {
            ok = false;
            continue;
        }
        if (val.kind != FE_V_INT) {
            fe_error(c, a->value->span, "%s: argument '%s' must be an integer", v->op,
                     fe_span_text(c->a, a->value->span));
            ok = false;
            continue;
        }
        v->ints[slot] = val.i;
        v->spans[slot] = a->value->span;
        v->given[slot] = true;
        if (slot + 1 > v->nints)
            v->nints = slot + 1;
    }
    return ok;
}

/* An axis of a tensor of rank n, negative ones counting from the end. */
static bool axis_arg(vcall *v, int slot, int n, int *axis)
{
    int64_t a = v->ints[slot];
    if (a < -n || a >= n) {
        fe_error(v->c, v->spans[slot], "%s of %s: axis %lld is out of range for rank %d (use %d..%d)", v->op,
                 what(v), (long long)a, n, -n, n - 1);
        return false;
    }
    *axis = (int)(a < 0 ? a + n : a);
    return true;
}

static const char *dims_str(fe_ctx *c, const int64_t *d, int n)
{
    const char *s = "[";
    for (int i = 0; i < n; i++)
        s = ir_sprintf(c->a, "%s%s%lld", s, i ? ", " : "", (long long)d[i]);
    return ir_sprintf(c->a, "%s]", s);
}

static int64_t numel(const int64_t *d, int n)
{
    int64_t e = 1;
    for (int i = 0; i < n; i++)
        e *= d[i];
    return e;
}

/* reshape(x, d0, d1, ...): one dimension may be -1 (inferred). */
static bool new_shape(vcall *v, int64_t *shape, int *ndim)
{
    fe_ctx *c = v->c;
    int infer = -1;
    int64_t known = 1, total = numel(v->t->shape, v->t->ndim);
    for (int i = 0; i < v->nints; i++) {
        shape[i] = v->ints[i];
        if (shape[i] == -1 && infer < 0) {
            infer = i;
        } else if (shape[i] < 1) {
            fe_error(c, v->spans[i], "reshape of %s: dimension %d of the new shape is %lld; every dimension must be >= 1 (or one -1, inferred)",
                     what(v), i, (long long)shape[i]);
            return false;
        } else if (__builtin_mul_overflow(known, shape[i], &known)) {
            known = -1;
        }
    }
    *ndim = v->nints;
    if (infer >= 0 && known > 0 && total % known == 0)
        shape[infer] = total / known;
    if ((infer >= 0 && (known <= 0 || total % known)) || (infer < 0 && known != total)) {
        const char *want = dims_str(c, v->ints, *ndim);
        if (infer < 0)
            fe_error(c, v->x->span, "reshape of %s to %s: the element counts differ (%lld and %lld)",
                     what(v), want, (long long)total, (long long)known);
        else
            fe_error(c, v->x->span, "reshape of %s to %s: its %lld elements do not divide into parts of %lld",
                     what(v), want, (long long)total, (long long)known);
        return false;
    }
    return true;
}

/* The view `op(x, ...)` of call v as a map; false after an error. */
static bool apply_op(vcall *v, fe_inst *in, vmap *m, int64_t *shape, int *ndim, bool *reshape)
{
    fe_ctx *c = v->c;
    const char *op = v->op;
    static const char *flatten_args[] = {"start", "end"};
    static const char *transpose_args[] = {"dim0", "dim1"};
    static const char *slice_args[] = {"axis", "start", "end", "step"};
    bool flatten = strcmp(op, "flatten") == 0, transpose = strcmp(op, "transpose") == 0;
    bool slice = strcmp(op, "slice") == 0;
    if (flatten) {
        v->ints[0] = 0;     /* torch.flatten's defaults: every axis */
        v->ints[1] = -1;
    }
    v->ints[3] = 1;         /* slice's step */
    if (!read_args(v, in, flatten ? flatten_args : transpose ? transpose_args : slice ? slice_args : NULL,
                   flatten || transpose ? 2 : slice ? 4 : 0))
        return false;
    int n = v->t->ndim;
    *reshape = false;
    if (strcmp(op, "reshape") == 0) {
        *reshape = true;
        return new_shape(v, shape, ndim);
    }
    if (flatten) {
        if (n == 0) {
            *reshape = true;
            *ndim = 1;
            shape[0] = 1;
            return true;
        }
        int s, e;
        if (!axis_arg(v, 0, n, &s) || !axis_arg(v, 1, n, &e))
            return false;
        if (e < s) {
            fe_error(c, v->x->span, "flatten of %s: the end axis %d is before the start axis %d", what(v), e, s);
            return false;
        }
        *ndim = 0;
        for (int j = 0; j < n; j++) {
            if (j <= s || j > e)
                shape[(*ndim)++] = v->t->shape[j];
            else
                shape[*ndim - 1] *= v->t->shape[j];
        }
        *reshape = true;
        return true;
    }
    if (strcmp(op, "permute") == 0) {
        if (v->nints != n) {
            fe_error(c, v->x->span, "permute of %s needs %d axes, one per dimension, but %d %s given", what(v), n,
                     v->nints, v->nints == 1 ? "is" : "are");
            return false;
        }
        int perm[VIEW_MAX_DIMS];
        bool seen[VIEW_MAX_DIMS] = {false};
        for (int j = 0; j < n; j++) {
            if (!axis_arg(v, j, n, &perm[j]))
                return false;
            if (seen[perm[j]]) {
                fe_error(c, v->spans[j], "permute of %s: axis %d is given twice; the axes must be a permutation of 0..%d",
                         what(v), perm[j], n - 1);
                return false;
            }
            seen[perm[j]] = true;
        }
        vmap o = *m;
        for (int j = 0; j < n; j++) {
            m->shape[j] = o.shape[perm[j]];
            for (int r = 0; r < m->src->ndim; r++)
                m->coef[r][j] = o.coef[r][perm[j]];
        }
        return true;
    }
    if (transpose) {
        if (!v->given[0] || !v->given[1]) {
            fe_error(c, v->x->span, "transpose of %s needs two axes, e.g. transpose(%s, 0, 1)", what(v), v->tname);
            return false;
        }
        int a, b;
        if (!axis_arg(v, 0, n, &a) || !axis_arg(v, 1, n, &b))
            return false;
        int64_t ts = m->shape[a];
        m->shape[a] = m->shape[b];
        m->shape[b] = ts;
        for (int r = 0; r < m->src->ndim; r++) {
            int64_t tc = m->coef[r][a];
            m->coef[r][a] = m->coef[r][b];
            m->coef[r][b] = tc;
        }
        return true;
    }
    /* slice(x, axis, start, end, step = 1): Python's x[start:end:step] on
     * one axis, without clamping. */
    for (int k = 0; k < 3; k++)
        if (!v->given[k]) {
            fe_error(c, v->x->span, "slice of %s needs an axis, a start and an end: slice(%s, axis, start, end[, step])",
                     what(v), v->tname);
            return false;
        }
    int a;
    if (!axis_arg(v, 0, n, &a))
        return false;
    int64_t d = v->t->shape[a], step = v->ints[3];
    int64_t start = v->ints[1], end = v->ints[2];
    if (step == 0) {
        fe_error(c, v->spans[3], "slice of %s: the step is 0", what(v));
        return false;
    }
    if (start < -d || start >= d) {
        fe_error(c, v->spans[1], "slice of %s along axis %d: start %lld is out of range for size %lld (use %lld..%lld)",
                 what(v), a, (long long)start, (long long)d, (long long)-d, (long long)(d - 1));
        return false;
    }
    /* an end of -d-1 is one before index 0: a negative step's way to
     * reach the first element */
    if (end < -d - 1 || end > d || (end == -d - 1 && step > 0)) {
        fe_error(c, v->spans[2], "slice of %s along axis %d: end %lld is out of range for size %lld (use %lld..%lld)",
                 what(v), a, (long long)end, (long long)d, (long long)(step > 0 ? -d : -d - 1), (long long)d);
        return false;
    }
    if (start < 0)
        start += d;
    if (end < 0)
        end += d;
    int64_t count = step > 0 ? (end - start + step - 1) / step : (start - end - step - 1) / -step;
    if (count < 1) {
        fe_error(c, v->x->span, "slice of %s along axis %d from %lld to %lld by %lld is empty", what(v), a,
                 (long long)v->ints[1], (long long)v->ints[2], (long long)step);
        return false;
    }
    m->shape[a] = count;
    for (int r = 0; r < m->src->ndim; r++) {
        m->off[r] += m->coef[r][a] * start;
        m->coef[r][a] *= step;
    }
    return true;
}

fe_value fe_view_call(fe_ctx *c, fe_inst *in, const fe_stmt *s, const char *layer)
{
    const fe_expr *x = s->value;
    fe_value result = {.kind = FE_V_POISON};
    vcall v = {.c = c, .x = x, .op = x->name};
    vmap m;
    int64_t shape[VIEW_MAX_DIMS + 1];
    int ndim = 0;
    bool reshape = false;
    if (x->nargs && !x->args[0].name && x->args[0].value->kind == FE_E_NAME) {
        fe_binding *b = fe_env_find(in->env, x->args[0].value->name);
        if (b && b->v.kind == FE_V_TENSOR) {
            fe_tensor *t = b->v.t;
            /* the tensor viewed needs its storage: end the stage defining it */
            if (t->stage)
                fe_close_stage(c, in);
            if (t->ndim > VIEW_MAX_DIMS || fe_storage(t)->ndim > VIEW_MAX_DIMS) {
                fe_error(c, x->span, "%s of %s: a view may have at most %d dimensions", v.op,
                         x->args[0].value->name, VIEW_MAX_DIMS);
                return result;
            }
            map_of(t, x->args[0].value->name, &m);
        }
    }
    if (!apply_op(&v, in, &m, shape, &ndim, &reshape))
        return result;
    if (ndim > VIEW_MAX_DIMS) {
        fe_error(c, x->span, "reshape of %s: the new shape has %d dimensions (at most %d)", what(&v), ndim,
                 VIEW_MAX_DIMS);
        return result;
    }
    if (!fe_storage(v.t)->buf) {
        diag_internal(c->d, "frontend", "%s of '%s': the tensor has no storage", v.op, v.tname);
        c->errors++;
        return result;
    }
    if (reshape) {
        if (contiguous(&m)) {
            /* the same elements in the same order: the storage reshaped */
            map_of(reshaped_storage(c, m.src, ndim, shape), m.src_name, &m);
        } else if (!reshape_map(&m, ndim, shape)) {
            /* no map steps through the elements in this order: copy them */
            fe_tensor *copy = fe_materialize(c, v.t, layer, v.op, x->span);
            map_of(reshaped_storage(c, copy, ndim, shape), copy->name, &m);
        }
    }
    result.kind = FE_V_TENSOR;
    result.t = make_view(c, &m, s->name, v.op, s->name_span);
    return result;
}
