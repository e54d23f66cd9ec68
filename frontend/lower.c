/* frontend/lower.c — a stage of analysed index statements to an IR function.
 *
 * Each statement becomes one loop nest: a FOR per left-hand variable
 * (outermost first), then one per reduced variable (first appearance
 * first); innermost a BLOCK named after the defined tensor whose iteration
 * variables are bound to the loops.  A reduction's block has an `init`
 * storing the identity (TensorComprehensions semantics: the statement
 * defines the tensor, it does not accumulate into older contents). */
#include "frontend/lower.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Lowering state of one function. */
typedef struct lctx {
    ir_module *m;
    fe_map names;          /* every name used in the function -> the
                              next suffix to try for it as a base */
    ir_var **iters;        /* the current statement's block variables */
    const int64_t *lo;     /* and the first value of each index variable */
    ir_stmt **asserts;     /* run-time index checks of the current statement */
    int nasserts, capasserts;
    ir_expr **path;        /* the conditions under which the expression
                              being lowered is evaluated (select branches,
                              right sides of && and ||) */
    int npath, cappath;
    const char *op;
} lctx;

/* base, or base_1, base_2 ... : unique in the function.  (Every
 * statement names its loops i, j, ...: the suffix search starts where the
 * last one for the same base stopped, so a program of many statements
 * takes linear time, not cubic.) */
static const char *unique(lctx *l, const char *base)
{
    ir_arena *a = l->m->arena;
    intptr_t next = (intptr_t)fe_map_get(&l->names, base);
    if (!next) {
        base = ir_strdup(a, base);
        fe_map_put(a, &l->names, base, (void *)(intptr_t)1);
        return base;
    }
    const char *s;
    while (fe_map_get(&l->names, s = ir_sprintf(a, "%s_%ld", base, (long)next)))
        next++;
    fe_map_put(a, &l->names, base, (void *)(next + 1));
    fe_map_put(a, &l->names, s, (void *)(intptr_t)1);
    return s;
}

static ir_expr *cp(lctx *l, ir_expr *e) { return ir_expr_copy(l->m, e); }

/* 0 <= idx && idx < n */
static ir_expr *in_range(lctx *l, ir_expr *idx, int64_t n)
{
    ir_expr *lo = ir_binary(l->m, IR_LE, ir_int(l->m, 0), cp(l, idx));
    ir_expr *hi = ir_binary(l->m, IR_LT, cp(l, idx), ir_int(l->m, n));
    return ir_binary(l->m, IR_AND, lo, hi);
}

static ir_expr *lower_expr(lctx *l, const fe_kexpr *k);

/* A run-time check of a read holds only where the read happens: `!path ||
 * ok`, so a select (or an && or ||) guarding the read guards its check. */
static ir_expr *when_read(lctx *l, ir_expr *ok)
{
    if (!l->npath)
        return ok;
    ir_expr *path = cp(l, l->path[0]);
    for (int i = 1; i < l->npath; i++)
        path = ir_binary(l->m, IR_AND, path, cp(l, l->path[i]));
    return ir_binary(l->m, IR_OR, ir_unary(l->m, IR_NOT, path), ok);
}

/* Lowers k where cond (or its negation) holds. */
static ir_expr *lower_under(lctx *l, ir_expr *cond, bool negate, const fe_kexpr *k)
{
    ir_expr *c = negate ? ir_unary(l->m, IR_NOT, cp(l, cond)) : cond;
    IR_PUSH(l->m->arena, l->path, l->npath, l->cappath, c);
    ir_expr *r = lower_expr(l, k);
    l->npath--;
    return r;
}

/* A read of a view at idx: a read of its storage at the rewritten
 * indices off[m] + sum_j coef[m][j] * idx[j] (no copy, sema.h). */
static ir_expr *view_load(lctx *l, const fe_view *v, ir_expr **idx, int n)
{
    ir_module *m = l->m;
    int r = v->src->ndim;
    ir_expr **at = ir_alloc(m->arena, sizeof(ir_expr *) * (size_t)(r ? r : 1));
    for (int d = 0; d < r; d++) {
        ir_expr *e = NULL;
        for (int j = 0; j < n; j++) {
            int64_t a = v->coef[(size_t)d * (size_t)n + (size_t)j];
            if (!a)
                continue;
            ir_expr *t = a == 1 ? cp(l, idx[j]) : ir_binary(m, IR_MUL, ir_int(m, a), cp(l, idx[j]));
            e = e ? ir_binary(m, IR_ADD, e, t) : t;
        }
        if (!e || v->off[d])
            e = e ? ir_binary(m, IR_ADD, e, ir_int(m, v->off[d])) : ir_int(m, v->off[d]);
        at[d] = e;
    }
    return ir_load(m, v->src->fbuf, at, r);
}

static ir_expr *lower_load(lctx *l, const fe_kexpr *k)
{
    ir_module *m = l->m;
    ir_expr **idx = ir_alloc(m->arena, sizeof(ir_expr *) * (size_t)(k->nargs ? k->nargs : 1));
    for (int d = 0; d < k->nargs; d++)
        idx[d] = lower_expr(l, k->args[d]);
    ir_expr *guard = NULL;
    for (int d = 0; d < k->nargs; d++) {
        if (k->check[d] == FE_CHK_NONE)
            continue;
        ir_expr *ok = in_range(l, idx[d], k->t->shape[d]);
        if (k->check[d] == FE_CHK_GUARD) {
            guard = guard ? ir_binary(m, IR_AND, guard, ok) : ok;
        } else {
            const char *msg = ir_sprintf(m->arena, "%s: index %s of %s (dimension %d) is out of range [0, %lld)",
                                         l->op, k->idx_text[d], k->tname, d, (long long)k->t->shape[d]);
            IR_PUSH(m->arena, l->asserts, l->nasserts, l->capasserts, ir_assert(m, when_read(l, ok), msg));
        }
    }
    ir_expr *load = k->t->view ? view_load(l, k->t->view, idx, k->nargs)
                               : ir_load(m, k->t->fbuf, idx, k->nargs);
    return guard ? ir_select(m, guard, load, lower_expr(l, k->dflt)) : load;
}

static ir_expr_kind compare_kind(fe_op op)
{
    switch (op) {
    case FE_OP_EQ: return IR_EQ;
    case FE_OP_NE: return IR_NE;
    case FE_OP_LT: return IR_LT;
    case FE_OP_LE: return IR_LE;
    case FE_OP_GT: return IR_GT;
    default: return IR_GE;
    }
}

static ir_expr *lower_binary(lctx *l, const fe_kexpr *k)
{
    ir_module *m = l->m;
    ir_expr *a = lower_expr(l, k->a);
    if (!k->use_irop && (k->op == FE_OP_AND || k->op == FE_OP_OR)) {
        /* short-circuit: the right side is evaluated only when the left
         * is true (&&) or false (||) */
        ir_expr *b = lower_under(l, a, k->op == FE_OP_OR, k->b);
        return ir_binary(m, k->op == FE_OP_AND ? IR_AND : IR_OR, a, b);
    }
    ir_expr *b = lower_expr(l, k->b);
    if (k->use_irop)
        return ir_binary(m, k->irop, a, b);
    bool fl = ir_dtype_is_float(a->dtype);
    switch (k->op) {
    case FE_OP_ADD: return ir_binary(m, IR_ADD, a, b);
    case FE_OP_SUB: return ir_binary(m, IR_SUB, a, b);
    case FE_OP_MUL: return ir_binary(m, IR_MUL, a, b);
    case FE_OP_DIV: return ir_binary(m, fl ? IR_DIV : IR_FLOORDIV, a, b);
    case FE_OP_MOD:
        if (!fl)
            return ir_binary(m, IR_FLOORMOD, a, b);
        {   /* a - b * floor(a / b): the sign of b, like the integer rule */
            ir_expr *q = ir_binary(m, IR_DIV, cp(l, a), cp(l, b));
            ir_expr *fq = ir_call(m, IR_FN_FLOOR, &q, 1);
            return ir_binary(m, IR_SUB, a, ir_binary(m, IR_MUL, b, fq));
        }
    default: return ir_binary(m, compare_kind(k->op), a, b);
    }
}

static ir_expr *lower_expr(lctx *l, const fe_kexpr *k)
{
    ir_module *m = l->m;
    switch (k->kind) {
    case FE_K_INT:
        return ir_dtype_is_float(k->dtype) ? ir_float(m, (double)k->ival, k->dtype)
                                           : ir_int_typed(m, k->ival, k->dtype);
    case FE_K_FLOAT:
        return ir_float(m, k->fval, k->dtype);
    case FE_K_VAR: {
        /* block variables run from 0: a `where` range lo..hi adds lo */
        ir_expr *v = ir_varref(m, l->iters[k->var]);
        if (l->lo[k->var])
            v = ir_binary(m, IR_ADD, v, ir_int(m, l->lo[k->var]));
        return ir_cast(m, v, k->dtype);
    }
    case FE_K_LOAD:
        return lower_load(l, k);
    case FE_K_BIN:
        return lower_binary(l, k);
    case FE_K_UN:
        return ir_unary(m, k->op == FE_OP_NOT ? IR_NOT : IR_NEG, lower_expr(l, k->a));
    case FE_K_SELECT:
    {
        ir_expr *c = lower_expr(l, k->c);
        ir_expr *a = lower_under(l, c, false, k->a);
        return ir_select(m, c, a, lower_under(l, c, true, k->b));
    }
    case FE_K_CAST:
        return ir_cast(m, lower_expr(l, k->a), k->dtype);
    case FE_K_CALL: {
        ir_expr *args[2];
        for (int i = 0; i < k->nargs; i++)
            args[i] = lower_expr(l, k->args[i]);
        if (k->fn == IR_FN_ABS && !ir_dtype_is_float(k->dtype)) {
            /* the ABS intrinsic is for floats: integers use a select */
            ir_expr *zero = ir_int_typed(m, 0, args[0]->dtype);
            ir_expr *neg = ir_binary(m, IR_LT, cp(l, args[0]), zero);
            return ir_select(m, neg, ir_unary(m, IR_NEG, cp(l, args[0])), args[0]);
        }
        return ir_call(m, k->fn, args, k->nargs);
    }
    }
    return NULL;
}

/* The identity of a reduction, in dtype t. */
static ir_expr *identity(lctx *l, fe_assign_op op, ir_dtype t)
{
    ir_module *m = l->m;
    if (ir_dtype_is_float(t)) {
        double v = op == FE_AS_ADD ? 0.0 : op == FE_AS_MUL ? 1.0 : op == FE_AS_MAX ? -INFINITY : INFINITY;
        return ir_float(m, v, t);
    }
    int64_t lo, hi;
    ir_dtype_int_range(t, &lo, &hi);
    int64_t v = op == FE_AS_ADD ? 0 : op == FE_AS_MUL ? 1 : op == FE_AS_MAX ? lo : hi;
    return ir_int_typed(m, v, t);
}

static ir_expr **lhs_index(lctx *l, const fe_kstmt *ks)
{
    ir_expr **idx = ir_alloc(l->m->arena, sizeof(ir_expr *) * (size_t)(ks->nlhs ? ks->nlhs : 1));
    for (int d = 0; d < ks->nlhs; d++)
        idx[d] = ir_varref(l->m, l->iters[ks->lhs_vars[d]]);
    return idx;
}

/* for v... over shape { block name(spatial v...) { body(v...) } }: a loop
 * nest over every element of a tensor of that shape. */
static ir_stmt *each_element(lctx *l, const char *name, const int64_t *shape, int ndim,
                             ir_stmt *(*body)(lctx *, ir_expr **, void *), void *arg)
{
    ir_module *m = l->m;
    int n = ndim ? ndim : 1;
    ir_var **loops = ir_alloc(m->arena, sizeof(ir_var *) * (size_t)n);
    ir_itervar *iv = ir_alloc(m->arena, sizeof(ir_itervar) * (size_t)n);
    ir_expr **idx = ir_alloc(m->arena, sizeof(ir_expr *) * (size_t)n);
    for (int d = 0; d < ndim; d++) {
        loops[d] = ir_var_new(m, unique(l, ir_sprintf(m->arena, "e%d", d)), IR_I64);
        iv[d].var = ir_var_new(m, unique(l, ir_sprintf(m->arena, "ve%d", d)), IR_I64);
        iv[d].kind = IR_ITER_SPATIAL;
        iv[d].extent = shape[d];
        iv[d].binding = ir_varref(m, loops[d]);
        idx[d] = ir_varref(m, iv[d].var);
    }
    ir_stmt *s = ir_block(m, name, iv, ndim, NULL, body(l, idx, arg));
    for (int d = ndim - 1; d >= 0; d--)
        s = ir_for(m, loops[d], ir_int(m, 0), ir_int(m, shape[d]), IR_FOR_SERIAL, s);
    return s;
}

/* What a write at computed indices starts from: the reduction's identity,
 * 0 for `=`; and, for `=`, no element written yet. */
typedef struct scatter_fill {
    const fe_kstmt *ks;
    ir_buffer *written;    /* `=`: the elements written so far */
} scatter_fill;

static ir_expr *identity(lctx *l, fe_assign_op op, ir_dtype t);

static ir_stmt *fill_body(lctx *l, ir_expr **idx, void *arg)
{
    const scatter_fill *f = arg;
    ir_module *m = l->m;
    ir_buffer *buf = f->ks->lhs->fbuf;
    int n = f->ks->nlhs;
    ir_expr *v = f->ks->op == FE_AS_SET ? (ir_dtype_is_float(buf->dtype) ? ir_float(m, 0, buf->dtype)
                                                                         : ir_int_typed(m, 0, buf->dtype))
                                        : identity(l, f->ks->op, buf->dtype);
    ir_stmt *st = ir_store(m, buf, idx, n, v);
    if (!f->written)
        return st;
    ir_expr **idx2 = ir_alloc(m->arena, sizeof(ir_expr *) * (size_t)(n ? n : 1));
    for (int d = 0; d < n; d++)
        idx2[d] = cp(l, idx[d]);
    ir_stmt *seq = ir_seq_new(m);
    ir_seq_append(m, seq, st);
    ir_seq_append(m, seq, ir_store(m, f->written, idx2, n, ir_int_typed(m, 0, IR_BOOL)));
    return seq;
}

/* A write at computed indices (`hist[bin[i]] += 1`, `out[idx[i], j] =
 * v[i, j]`): the tensor is filled with the reduction's identity (0 for
 * `=`), then a nest over every variable (all of them reduce variables: no
 * iteration owns an element) combines each value into the element its
 * indices name.  Indices that read tensors are checked at run time; a
 * second `=` to one element stops the kernel (a bool buffer remembers the
 * elements written). */
static ir_stmt *lower_scatter(lctx *l, const fe_kstmt *ks, ir_var **loops, ir_itervar *iv)
{
    ir_module *m = l->m;
    const fe_kexpr *dst = ks->scatter;
    ir_buffer *buf = ks->lhs->fbuf;
    scatter_fill f = {ks, NULL};
    if (ks->op == FE_AS_SET) {
        f.written = ir_buffer_new(m, unique(l, ir_sprintf(m->arena, "%s_written", buf->name)), IR_BOOL,
                                  buf->ndim, buf->shape, IR_BUF_LOCAL);
        f.written->scope = ir_buffer_numel(f.written) <= 16384 ? IR_SCOPE_STACK : IR_SCOPE_GLOBAL;
    }
    ir_stmt *fill = each_element(l, ir_sprintf(m->arena, "%s_init", buf->name), buf->shape, buf->ndim,
                                 fill_body, &f);
    int n = ks->nlhs;
    ir_expr **idx = ir_alloc(m->arena, sizeof(ir_expr *) * (size_t)(n ? n : 1));
    for (int d = 0; d < n; d++) {
        idx[d] = lower_expr(l, dst->args[d]);
        if (dst->check[d] == FE_CHK_ASSERT) {
            const char *msg = ir_sprintf(m->arena, "%s: index %s of %s (dimension %d) is out of range [0, %lld)",
                                         l->op, dst->idx_text[d], dst->tname, d, (long long)buf->shape[d]);
            IR_PUSH(m->arena, l->asserts, l->nasserts, l->capasserts,
                    ir_assert(m, in_range(l, idx[d], buf->shape[d]), msg));
        }
    }
    ir_expr *value = lower_expr(l, ks->rhs);
    ir_stmt *body = ir_seq_new(m);
    for (int i = 0; i < l->nasserts; i++)
        ir_seq_append(m, body, l->asserts[i]);
    if (f.written) {
        ir_expr **widx = ir_alloc(m->arena, sizeof(ir_expr *) * (size_t)(n ? n : 1));
        for (int d = 0; d < n; d++)
            widx[d] = cp(l, idx[d]);
        ir_expr *fresh = ir_binary(m, IR_EQ, ir_load(m, f.written, widx, n), ir_int_typed(m, 0, IR_BOOL));
        ir_seq_append(m, body, ir_assert(m, fresh, ir_sprintf(m->arena, "%s: two writes to one element of %s (at %s)",
                                                                  l->op, dst->tname, dst->text)));
        for (int d = 0; d < n; d++)
            widx[d] = cp(l, idx[d]);
        ir_seq_append(m, body, ir_store(m, f.written, widx, n, ir_int_typed(m, 1, IR_BOOL)));
    } else {
        ir_expr **cidx = ir_alloc(m->arena, sizeof(ir_expr *) * (size_t)(n ? n : 1));
        for (int d = 0; d < n; d++)
            cidx[d] = cp(l, idx[d]);
        ir_expr_kind k = ks->op == FE_AS_ADD ? IR_ADD : ks->op == FE_AS_MUL ? IR_MUL
                         : ks->op == FE_AS_MAX ? IR_MAX : IR_MIN;
        value = ir_binary(m, k, ir_load(m, buf, cidx, n), value);
    }
    ir_seq_append(m, body, ir_store(m, buf, idx, n, value));
    ir_stmt *s = ir_block(m, buf->name, iv, ks->nvars, NULL, body);
    for (int i = ks->nvars - 1; i >= 0; i--)
        s = ir_for(m, loops[i], ir_int(m, 0), ir_int(m, ks->vars[i].extent), IR_FOR_SERIAL, s);
    ir_stmt *seq = ir_seq_new(m);
    ir_seq_append(m, seq, fill);
    ir_seq_append(m, seq, s);
    return f.written ? ir_alloc_stmt(m, f.written, seq) : seq;
}

static ir_stmt *lower_kstmt(lctx *l, const fe_kstmt *ks)
{
    ir_module *m = l->m;
    int n = ks->nvars;
    ir_var **loops = ir_alloc(m->arena, sizeof(ir_var *) * (size_t)(n ? n : 1));
    l->iters = ir_alloc(m->arena, sizeof(ir_var *) * (size_t)(n ? n : 1));
    int64_t *lo = ir_alloc(m->arena, sizeof(int64_t) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        lo[i] = ks->vars[i].lo;
    l->lo = lo;
    ir_itervar *iv = ir_alloc(m->arena, sizeof(ir_itervar) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++)
        loops[i] = ir_var_new(m, unique(l, ks->vars[i].name), IR_I64);
    for (int i = 0; i < n; i++) {
        l->iters[i] = ir_var_new(m, unique(l, ir_sprintf(m->arena, "v%s", ks->vars[i].name)), IR_I64);
        iv[i].var = l->iters[i];
        iv[i].kind = ks->vars[i].reduce ? IR_ITER_REDUCE : IR_ITER_SPATIAL;
        iv[i].extent = ks->vars[i].extent;
        iv[i].binding = ir_varref(m, loops[i]);
    }
    l->nasserts = 0;
    l->asserts = NULL;
    l->capasserts = 0;
    if (ks->scatter)
        return lower_scatter(l, ks, loops, iv);
    ir_buffer *buf = ks->lhs->fbuf;
    ir_expr *value = lower_expr(l, ks->rhs);
    ir_stmt *init = NULL;
    if (ks->op != FE_AS_SET) {
        ir_expr *cur = ir_load(m, buf, lhs_index(l, ks), ks->nlhs);
        ir_expr_kind k = ks->op == FE_AS_ADD ? IR_ADD : ks->op == FE_AS_MUL ? IR_MUL
                         : ks->op == FE_AS_MAX ? IR_MAX : IR_MIN;
        value = ir_binary(m, k, cur, value);
        init = ir_store(m, buf, lhs_index(l, ks), ks->nlhs, identity(l, ks->op, buf->dtype));
    }
    ir_stmt *body = ir_store(m, buf, lhs_index(l, ks), ks->nlhs, value);
    if (l->nasserts) {
        ir_stmt *seq = ir_seq_new(m);
        for (int i = 0; i < l->nasserts; i++)
            ir_seq_append(m, seq, l->asserts[i]);
        ir_seq_append(m, seq, body);
        body = seq;
    }
    ir_stmt *s = ir_block(m, buf->name, iv, n, init, body);
    for (int i = n - 1; i >= 0; i--)
        s = ir_for(m, loops[i], ir_int(m, 0), ir_int(m, ks->vars[i].extent), IR_FOR_SERIAL, s);
    return s;
}

/* Function-local temporaries up to this size live on the stack. */
enum { FE_STACK_BYTES = 16384 };

void fe_lower_stage(ir_module *m, ir_func *f, const fe_stage *st, const fe_sarg *params,
                    int nparams, const char *op)
{
    lctx l = {.m = m, .op = op};
    for (int i = 0; i < nparams; i++) {
        fe_tensor *t = params[i].t;
        ir_buffer *b = ir_buffer_new(m, unique(&l, params[i].name), t->dtype, t->ndim, t->shape, IR_BUF_ARG);
        ir_func_add_param(m, f, b);
        t->fbuf = b;
    }
    ir_buffer **locals = ir_alloc(m->arena, sizeof(ir_buffer *) * (size_t)(st->ndefined + 1));
    int nlocals = 0;
    for (int i = 0; i < st->ndefined; i++) {
        fe_tensor *t = st->defined[i];
        if (t->buf)
            continue;   /* a graph value: one of the parameters */
        ir_buffer *b = ir_buffer_new(m, unique(&l, t->name), t->dtype, t->ndim, t->shape, IR_BUF_LOCAL);
        int64_t bytes = ir_buffer_numel(b) * ir_dtype_size(b->dtype);
        b->scope = bytes <= FE_STACK_BYTES ? IR_SCOPE_STACK : IR_SCOPE_GLOBAL;
        t->fbuf = b;
        locals[nlocals++] = b;
    }
    ir_stmt *body;
    if (st->nstmts == 1) {
        body = lower_kstmt(&l, st->stmts[0]);
    } else {
        body = ir_seq_new(m);
        for (int i = 0; i < st->nstmts; i++)
            ir_seq_append(m, body, lower_kstmt(&l, st->stmts[i]));
    }
    for (int i = nlocals - 1; i >= 0; i--)
        body = ir_alloc_stmt(m, locals[i], body);
    f->body = body;
}
