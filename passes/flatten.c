/* passes/flatten.c — every buffer becomes one-dimensional.
 *
 * A multi-dimensional access B[i0, ..., in-1] of a buffer with shape
 * [s0, ..., sn-1] becomes B[i0*st0 + ... + in-1*stn-1] with the row-major
 * strides st_k = s_k+1 * ... * sn-1, and the buffer's shape becomes
 * [numel].  The sum is written term by term (idx * stride, stride 1 left
 * out) so that simplify can fold and cancel it.  A 0-d buffer becomes a
 * buffer of one element accessed at [0].
 *
 * Function parameters, allocations and graph buffers are all flattened, so
 * graph calls still pass buffers of the same dtype and element count as the
 * parameters.  Blocks, iteration variables and init statements stay: later
 * passes and the instrumentation still reason about them.
 *
 * Accesses are rewritten while the buffers still have their old shapes;
 * the shapes change at the very end.  A buffer that already has one
 * dimension is left alone, which makes the pass idempotent.
 */
#include <string.h>

#include "passes/passes.h"
#include "passes/ptrset.h"

/* The pass's state: the module, where to report, and every buffer seen so
 * far (once per mention, in order), whose shapes change when all accesses
 * are rewritten. */
typedef struct flat_ctx {
    ir_module *m;
    diag *d;
    bool ok;
    ir_buffer **bufs;
    int nbufs, capbufs;
} flat_ctx;

/* Notes b, once per mention: pass_flatten reshapes each buffer once, in the
 * order of first mention, through a sorted copy (n log n in the mentions,
 * not buffers times mentions). */
static void note_buffer(flat_ctx *c, ir_buffer *b)
{
    IR_PUSH(c->m->arena, c->bufs, c->nbufs, c->capbufs, b);
}

static bool needs_flattening(const ir_buffer *b, int nidx)
{
    return b->ndim != 1 && nidx == b->ndim;
}

/* sum_k idx[k] * stride_k in i64, summed left to right (i*32 + j*8 + k),
 * or NULL after an internal error when a stride overflows int64, which a
 * verified module cannot have. */
static ir_expr *linear_index(flat_ctx *c, ir_buffer *b, ir_expr **idx, int n)
{
    if (n == 0)
        return ir_int(c->m, 0);
    int64_t *stride = ir_alloc(c->m->arena, sizeof *stride * (size_t)n);
    stride[n - 1] = 1;
    for (int k = n - 1; k > 0; k--)
        if (!pass_fold_int(IR_MUL, stride[k], b->shape[k], IR_I64, &stride[k - 1])) {
            diag_internal(c->d, "flatten", "buffer %s: the size of its shape overflows int64",
                          b->name);
            c->ok = false;
            return NULL;
        }
    ir_expr *acc = NULL;
    for (int k = 0; k < n; k++) {
        ir_expr *term = ir_cast(c->m, idx[k], IR_I64);
        if (stride[k] != 1)
            term = ir_binary(c->m, IR_MUL, term, ir_int(c->m, stride[k]));
        acc = acc ? ir_binary(c->m, IR_ADD, acc, term) : term;
    }
    return acc;
}

/* The expression with every multi-dimensional load made 1-d; e itself when
 * nothing changed (nodes are never modified: they may be shared). */
static ir_expr *flat_expr(flat_ctx *c, ir_expr *e)
{
    if (!e)
        return NULL;
    ir_expr **args = e->args;
    for (int i = 0; i < e->nargs; i++) {
        ir_expr *x = flat_expr(c, e->args[i]);
        if (x != e->args[i] && args == e->args) {
            args = ir_alloc(c->m->arena, sizeof *args * (size_t)e->nargs);
            memcpy(args, e->args, sizeof *args * (size_t)e->nargs);
        }
        args[i] = x;
    }
    ir_expr *a = flat_expr(c, e->a), *b = flat_expr(c, e->b), *cc = flat_expr(c, e->c);
    if (e->kind == IR_LOAD) {
        note_buffer(c, e->buf);
        if (needs_flattening(e->buf, e->nargs)) {
            ir_expr *lin = linear_index(c, e->buf, args, e->nargs);
            return lin ? ir_load(c->m, e->buf, &lin, 1) : e;
        }
    }
    if (args == e->args && a == e->a && b == e->b && cc == e->c)
        return e;
    ir_expr *n = ir_alloc(c->m->arena, sizeof *n);
    *n = *e;
    n->args = args;
    n->a = a;
    n->b = b;
    n->c = cc;
    return n;
}

static void flat_stmt(flat_ctx *c, ir_stmt *s)
{
    if (!s)
        return;
    s->lo = flat_expr(c, s->lo);
    s->hi = flat_expr(c, s->hi);
    for (int i = 0; i < s->niters; i++)
        s->iters[i].binding = flat_expr(c, s->iters[i].binding);
    for (int i = 0; i < s->nargs; i++)
        s->args[i] = flat_expr(c, s->args[i]);
    s->value = flat_expr(c, s->value);
    s->cond = flat_expr(c, s->cond);
    if (s->kind == IR_S_ALLOC)
        note_buffer(c, s->buf);
    if (s->kind == IR_S_STORE || s->kind == IR_S_PREFETCH) {
        note_buffer(c, s->buf);
        if (needs_flattening(s->buf, s->nargs)) {
            ir_expr *lin = linear_index(c, s->buf, s->args, s->nargs);
            if (lin) {
                s->args = ir_alloc(c->m->arena, sizeof *s->args);
                s->args[0] = lin;
                s->nargs = 1;
            }
        }
    }
    flat_stmt(c, s->init);
    for (int i = 0; i < s->nbody; i++)
        flat_stmt(c, s->body[i]);
    flat_stmt(c, s->orelse);
}

static bool reshape(flat_ctx *c, ir_buffer *b)
{
    if (b->ndim == 1)
        return true;
    int64_t numel = 1;
    for (int k = 0; k < b->ndim; k++)
        if (!pass_fold_int(IR_MUL, numel, b->shape[k], IR_I64, &numel)) {
            diag_internal(c->d, "flatten", "buffer %s: the size of its shape overflows int64",
                          b->name);
            return false;
        }
    b->shape = ir_alloc(c->m->arena, sizeof *b->shape);
    b->shape[0] = numel;
    b->ndim = 1;
    return true;
}

bool pass_flatten(ir_module *m, diag *d)
{
    flat_ctx c = {.m = m, .d = d, .ok = true};
    for (int i = 0; i < m->graph.nbufs; i++)
        note_buffer(&c, m->graph.bufs[i]);
    for (int i = 0; i < m->nfuncs; i++) {
        ir_func *f = m->funcs[i];
        for (int p = 0; p < f->nparams; p++)
            note_buffer(&c, f->params[p]);
        flat_stmt(&c, f->body);
    }
    if (!c.ok)
        return false;
    /* each buffer once: the sorted mentions without repeats, and a mark
     * per distinct buffer */
    const void **sorted = pass_sorted_ptrs(m, (void *const *)c.bufs, c.nbufs);
    int n = 0;
    for (int i = 0; i < c.nbufs; i++)
        if (n == 0 || sorted[n - 1] != sorted[i])
            sorted[n++] = sorted[i];
    bool *done = ir_alloc(m->arena, sizeof *done * (size_t)(n + 1)); /* zeroed */
    for (int i = 0; i < c.nbufs && c.ok; i++) {
        int at = pass_find_ptr(sorted, n, c.bufs[i]);
        if (!done[at]) {
            done[at] = true;
            c.ok = reshape(&c, c.bufs[i]);
        }
    }
    return c.ok;
}
