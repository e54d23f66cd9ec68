/* passes/schedule/compute_at.c — compute_at and reverse_compute_at: an
 * elementwise block moves under a loop of the block it feeds (compute_at)
 * or of the block that feeds it (reverse_compute_at), and computes there,
 * in each iteration of the loop, only the elements that iteration needs or
 * has made.
 *
 *     compute_at(t, i_1):                  for i_1:
 *       for i, j:   t[i, j] = f(x)            for j in 0..37: t[i_1, j] = f(x)
 *       for i_1, j_1: y[...] = g(t[i_1, j_1])   for j_1: y[i_1, j_1] = g(t[i_1, j_1])
 *
 * compute_at(B, l): B stores local buffer T at its own indices; every read
 * of T is inside l, after B's nest in the same sequence.  For one iteration
 * of l the indices of the reads, affine in the loops, cover a box: inside
 * l's loops (constant bounds) move, the loops around l are fixed.  B's new
 * nest, at the start of l's body, runs over that box (one loop per
 * dimension, named after B's loop for that dimension), clipped to T's
 * shape.  Boxes of several iterations may overlap: B then computes an
 * element again, from inputs nothing has changed, so with the same value;
 * under a parallel loop the boxes of its iterations must be disjoint.
 *
 * reverse_compute_at(C, l): C stores its output at its own indices and
 * reads T only at them; T is stored by one block B inside l (its reduce
 * loops, if any, inside l too).  In one iteration of l, B stores the
 * elements outer + y of T, with y the loops inside l that its indices use
 * (each index: loops around l, plus at most one loop inside l with
 * coefficient 1) where B's guards hold; C's new nest, at the end of l's
 * body, runs over exactly those elements with copies of those loops and
 * guards, after they are final.
 *
 * For both, the moved block is one store without init, has only spatial
 * iteration variables whose extents are the buffer's shape, and nothing
 * between its old and new places writes what it reads or touches what it
 * writes.  compute_at also moves a reduction into T (a softmax's row sum
 * s[b, r] += e[b, r, j], computed per row in the loop over the rows of its
 * reader): T's element first in its iteration variables, then the reduce
 * ones; an init storing that element; the update reading T only there.
 * Its new nest runs the whole reduce loops (B's iteration variables'
 * extents, in their order) inside the box's, so each element of the box
 * is final before l's body reads it.  When the box lies inside T and T's
 * allocation encloses l, T is allocated in l's body as the box alone
 * (alloc_box_in_loop).  doc/schedule.md has the user's view. */
#include <string.h>

#include "passes/passes.h"
#include "passes/schedule/schedule.h"

/* Accesses of a buffer under a statement. */
typedef struct uses {
    const ir_buffer *buf;
    int loads, stores;
} uses;

static void count_expr(uses *u, const ir_expr *x)
{
    if (!x)
        return;
    if (x->kind == IR_LOAD && x->buf == u->buf)
        u->loads++;
    for (int i = 0; i < x->nargs; i++)
        count_expr(u, x->args[i]);
    count_expr(u, x->a);
    count_expr(u, x->b);
    count_expr(u, x->c);
}

static void count_stmt(uses *u, const ir_stmt *s)
{
    if (!s)
        return;
    if (s->kind == IR_S_STORE && s->buf == u->buf)
        u->stores++;
    for (int i = 0; i < s->nargs; i++)
        count_expr(u, s->args[i]);
    count_expr(u, s->value);
    count_expr(u, s->cond);
    count_expr(u, s->lo);
    count_expr(u, s->hi);
    for (int i = 0; i < s->niters; i++)
        count_expr(u, s->iters[i].binding);
    for (int i = 0; i < s->nbody; i++)
        count_stmt(u, s->body[i]);
    count_stmt(u, s->init);
    count_stmt(u, s->orelse);
}

static uses count(const ir_buffer *b, const ir_stmt *s)
{
    uses u = {b, 0, 0};
    count_stmt(&u, s);
    return u;
}

/* A guard a split put around b: conjunctions of `binding < extent`. */
static bool domain_guard(const ir_stmt *b, const ir_expr *cond)
{
    if (cond->kind == IR_AND)
        return domain_guard(b, cond->a) && domain_guard(b, cond->b);
    if (cond->kind != IR_LT || cond->b->kind != IR_INT)
        return false;
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].extent == cond->b->ival && ir_expr_equal(b->iters[i].binding, cond->a))
            return true;
    return false;
}

/* The block that moves: where its nest starts in which sequence. */
typedef struct moving {
    sch_path p;
    ir_stmt *b, *st;       /* the block and its store */
    int root;              /* p.slot[root]: the nest, a child of the sequence */
    ir_stmt *seq;
    int index;             /* of the nest in seq */
    int dim_iter[16];      /* the iteration variable of each dimension of T */
    ir_expr *guard;        /* guards over its loops other than a split's, or NULL */
} moving;

/* Whether b's spatial iteration variables are, in order, the indices of
 * its store st (an index of one iteration may be 0, as ir_block_own_index
 * allows), with the extents of st's buffer; dim_iter[d]: the one of
 * dimension d. */
static bool store_dims(const ir_stmt *b, const ir_stmt *st, int *dim_iter)
{
    int i = 0;
    if (st->nargs != st->buf->ndim || st->nargs > 16)
        return false;
    for (int d = 0; d < st->nargs; d++, i++) {
        while (i < b->niters && b->iters[i].kind != IR_ITER_SPATIAL)
            i++;
        if (i == b->niters)
            return false;
        const ir_expr *x = st->args[d];
        bool same = x->kind == IR_VAR && x->var == b->iters[i].var;
        if ((!same && !(b->iters[i].extent == 1 && ir_expr_is_int(x, 0))) ||
            b->iters[i].extent != st->buf->shape[d])
            return false;
        dim_iter[d] = i;
    }
    for (; i < b->niters; i++)
        if (b->iters[i].kind == IR_ITER_SPATIAL)
            return false;
    return true;
}

/* The iteration variable of b whose binding is loop variable v, or -1. */
static int iter_bound_to(const ir_stmt *b, const ir_var *v)
{
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].binding->kind == IR_VAR && b->iters[i].binding->var == v)
            return i;
    return -1;
}

/* ir_expr_walk callback: clears *(const ir_stmt **)p (a block) at a
 * variable that is not the binding of one of its iteration variables. */
static bool bound_var(const ir_expr *x, void *p)
{
    const ir_stmt **b = p;
    if (*b && x->kind == IR_VAR && iter_bound_to(*b, x->var) < 0)
        *b = NULL;
    return *b != NULL;
}

/* Whether every load of t in x is at index idx. */
static bool loads_only_at(const ir_expr *x, const ir_buffer *t, ir_expr *const *idx)
{
    if (!x)
        return true;
    if (x->kind == IR_LOAD && x->buf == t)
        for (int d = 0; d < x->nargs; d++)
            if (!ir_expr_equal(x->args[d], idx[d]))
                return false;
    for (int i = 0; i < x->nargs; i++)
        if (!loads_only_at(x->args[i], t, idx))
            return false;
    return loads_only_at(x->a, t, idx) && loads_only_at(x->b, t, idx) && loads_only_at(x->c, t, idx);
}

/* A reduction compute_at may move (reduce_ok): an init storing T's
 * element without reading T; the update reading T only there (s = s +
 * e[.., j], or rfactor's partials s_rf[.., ji] = s_rf[.., ji] + e[.., jo *
 * 16 + ji]). */
static bool movable_reduction(const ir_stmt *b, const ir_stmt *st)
{
    int n = st->nargs;
    if (!b->init || b->init->kind != IR_S_STORE || b->init->buf != st->buf || b->init->nargs != n ||
        n >= b->niters || ir_expr_loads(b->init->value, st->buf) ||
        !loads_only_at(st->value, st->buf, st->args))
        return false;
    for (int d = 0; d < n; d++)
        if (!ir_expr_equal(b->init->args[d], st->args[d]))
            return false;
    return true;
}

static bool elementwise_block(sch_ctx *c, const char *what, const char *name, bool reduce_ok,
                              moving *mv)
{
    if (!sch_find_block(c, name, &mv->p))
        return false;
    ir_stmt *b = mv->b = *mv->p.slot[mv->p.n - 1];
    ir_stmt *st = mv->st = b->nbody ? b->body[0] : NULL;
    ir_block_update_access(c->m, b);   /* an earlier step may have changed what it reads */
    if (b->nbody != 1 || !st || st->kind != IR_S_STORE || (b->init && !reduce_ok)) {
        sch_error(c, "cannot %s block '%s': it is not one store without an init", what, name);
        return false;
    }
    bool reduction = b->init && movable_reduction(b, st);
    if (b->init && !reduction) {
        sch_error(c, "cannot %s block '%s': it is not a reduction into the element it stores "
                  "(an init storing that element, the update reading it only there)", what, name);
        return false;
    }
    for (int i = 0; i < b->niters && !reduction; i++)
        if (b->iters[i].kind != IR_ITER_SPATIAL) {
            sch_error(c, "cannot %s block '%s': it reduces over '%s'", what, name, b->iters[i].var->name);
            return false;
        }
    if (!store_dims(b, st, mv->dim_iter)) {
        sch_error(c, "cannot %s block '%s': it does not store every element of '%s' at its "
                  "iteration variables in order", what, name, st->buf->name);
        return false;
    }
    if (!reduction && ir_expr_loads(st->value, st->buf)) {
        sch_error(c, "cannot %s block '%s': it reads '%s', the buffer it stores", what, name, st->buf->name);
        return false;
    }
    int k = mv->p.n - 1;
    mv->guard = NULL;
    while (k > 0) {
        ir_stmt *parent = *mv->p.slot[k - 1];
        if (parent->kind == IR_S_SEQ)
            break;
        if (parent->kind == IR_S_IF && parent->orelse == NULL && domain_guard(b, parent->cond)) {
            k--;
            continue;
        }
        /* compute_at keeps another guard of the block's own loops (a tail
         * of rfactor's partials, jo * 16 + ji < 37) on its new loops */
        const ir_stmt *only_bound = b;
        if (reduce_ok && parent->kind == IR_S_IF && parent->orelse == NULL &&
            (ir_expr_walk(parent->cond, bound_var, &only_bound), only_bound)) {
            mv->guard = mv->guard ? ir_binary(c->m, IR_AND, mv->guard, parent->cond) : parent->cond;
            k--;
            continue;
        }
        if (parent->kind != IR_S_FOR) {
            sch_error(c, "cannot %s block '%s': %s is between its loops and the block", what, name,
                      parent->kind == IR_S_IF ? "a guard that is not a split's" : ir_stmt_kind_name(parent->kind));
            return false;
        }
        k--;
    }
    if (k == 0) {
        sch_error(c, "cannot %s block '%s': it is all of @%s", what, name, c->f->name);
        return false;
    }
    mv->root = k;
    mv->seq = *mv->p.slot[k - 1];
    mv->index = (int)(mv->p.slot[k] - mv->seq->body);
    return true;
}

/* Whether any store under s writes one of the buffers b reads (other than skip). */
static bool writes_reads_of(const ir_stmt *s, const ir_stmt *b, const ir_buffer *skip)
{
    for (int i = 0; i < b->nreads; i++)
        if (b->reads[i] != skip && count(b->reads[i], s).stores)
            return true;
    return false;
}

/* ---------------------------------------------------------------- regions */

/* What the loads of T under a loop need in one of its iterations. */
typedef struct region {
    sch_ctx *c;
    const ir_buffer *t;
    int ndim;
    bool have, ok;
    ir_affine outer[16];   /* per dimension: the part of the loops around l, constant = lowest */
    int64_t hi[16];         /* highest constant */
    sch_path path;          /* from l's body down to the statement being read */
    ir_var_range inner[SCH_RANGES_MAX];
    int ninner;
} region;

static void region_access(region *r, const ir_expr *const *args)
{
    for (int d = 0; d < r->ndim && r->ok; d++) {
        ir_expr *x = pass_simplify_expr(r->c->m, sch_unbind(r->c->m, &r->path, args[d]));
        ir_affine a, out = {0};
        if (!ir_affine_of(x, &a)) {
            sch_error(r->c, "cannot compute the region of '%s' read: index '%s' is not affine in "
                      "the loops", r->t->name, sch_expr_text(r->c->m, x));
            r->ok = false;
            return;
        }
        int64_t lo = a.c, hi = a.c;
        out.c = 0;
        for (int i = 0; i < a.n; i++) {
            int j = 0;
            while (j < r->ninner && r->inner[j].var != a.var[i])
                j++;
            if (j == r->ninner) {
                ir_affine_add_var(&out, a.var[i], a.coef[i]);
                continue;
            }
            int64_t p = a.coef[i] * r->inner[j].lo, q = a.coef[i] * r->inner[j].hi;
            lo += p < q ? p : q;
            hi += p < q ? q : p;
        }
        if (!r->have) {
            r->outer[d] = out;
            r->outer[d].c = lo;
            r->hi[d] = hi;
            continue;
        }
        bool same = out.n == r->outer[d].n;
        for (int i = 0; same && i < out.n; i++)
            same = ir_affine_coef(&r->outer[d], out.var[i]) == out.coef[i];
        if (!same) {
            sch_error(r->c, "cannot compute the region of '%s' read: dimension %d is read at "
                      "indices that differ by more than a constant", r->t->name, d + 1);
            r->ok = false;
            return;
        }
        r->outer[d].c = lo < r->outer[d].c ? lo : r->outer[d].c;
        r->hi[d] = hi > r->hi[d] ? hi : r->hi[d];
    }
    r->have = true;
}

static void region_expr(region *r, const ir_expr *x)
{
    if (!x || !r->ok)
        return;
    if (x->kind == IR_LOAD && x->buf == r->t)
        region_access(r, (const ir_expr *const *)x->args);
    for (int i = 0; i < x->nargs; i++)
        region_expr(r, x->args[i]);
    region_expr(r, x->a);
    region_expr(r, x->b);
    region_expr(r, x->c);
}

static void region_stmt(region *r, ir_stmt **slot)
{
    ir_stmt *s = *slot;
    if (!s || !r->ok || r->path.n == 128)
        return;
    r->path.slot[r->path.n++] = slot;
    int saved = r->ninner;
    if (s->kind == IR_S_FOR) {
        if (sch_extent(s) < 1) {
            sch_error(r->c, "cannot compute the region of '%s' read: loop '%s' has bounds that "
                      "are not constants", r->t->name, s->var->name);
            r->ok = false;
        } else if (r->ninner < SCH_RANGES_MAX)
            r->inner[r->ninner++] = (ir_var_range){s->var, s->lo->ival, s->hi->ival - 1};
    }
    for (int i = 0; i < s->nargs; i++)
        region_expr(r, s->args[i]);
    region_expr(r, s->value);
    region_expr(r, s->cond);
    for (int i = 0; i < s->nbody; i++)
        region_stmt(r, &s->body[i]);
    if (s->init)
        region_stmt(r, &s->init);
    if (s->orelse)
        region_stmt(r, &s->orelse);
    r->ninner = saved;
    r->path.n--;
}

/* The loop `name` inside seq's child after (or before) index; its path. */
static bool find_target_loop(sch_ctx *c, const char *what, const moving *mv, const char *name,
                             bool after, sch_path *lp, int *child)
{
    if (!sch_find_loop(c, name, lp))
        return false;
    for (int k = 0; k + 1 < lp->n; k++)
        if (*lp->slot[k] == mv->seq) {
            *child = (int)(lp->slot[k + 1] - mv->seq->body);
            if (after ? *child > mv->index : *child < mv->index)
                return true;
        }
    sch_error(c, "cannot %s block '%s' at loop '%s': the loop is not %s the block's nest in "
              "the same sequence", what, mv->b->name, name, after ? "after" : "before");
    return false;
}

/* Loop names for the new nest: the moved block's loop for its iteration
 * variable d if its binding was one, else BLOCK_axD; fresh in f (the old
 * nest is gone). */
static ir_var *nest_var(sch_ctx *c, const moving *mv, int d)
{
    const ir_expr *bind = mv->b->iters[d].binding;
    const char *base = bind->kind == IR_VAR ? bind->var->name
                                            : ir_sprintf(c->m->arena, "%s_ax%d", mv->b->name, d);
    return ir_var_new(c->m, sch_fresh_name(c->m, c->f, base), IR_I64);
}

/* ---------------------------------------------------------------- T inside the loop */

/* T's accesses under s moved to t2, the box's buffer: index d less the
 * box's lowest point (0 along a dimension of one element). */
typedef struct rebase {
    ir_module *m;
    const ir_buffer *t;
    ir_buffer *t2;
    ir_expr *lowest[16];
} rebase;

static void rebase_args(const rebase *rb, ir_expr **args)
{
    for (int d = 0; d < rb->t->ndim; d++)
        args[d] = rb->t2->shape[d] == 1 ? ir_int(rb->m, 0)
                  : rb->lowest[d] ? pass_simplify_expr(rb->m, ir_binary(rb->m, IR_SUB, args[d],
                                                                         ir_expr_copy(rb->m, rb->lowest[d])))
                                  : args[d];
}

static bool rebase_expr(const ir_expr *x, void *p)
{
    const rebase *rb = p;
    if (x->kind == IR_LOAD && x->buf == rb->t) {
        ir_expr *l = (ir_expr *)x;   /* the loads under l are this tree's own */
        l->buf = rb->t2;
        rebase_args(rb, l->args);
    }
    return true;
}

static bool rebase_stmt(const ir_stmt *s, void *p)
{
    const rebase *rb = p;
    ir_stmt *w = (ir_stmt *)s;
    if (s->kind == IR_S_STORE && s->buf == rb->t) {
        w->buf = rb->t2;
        rebase_args(rb, w->args);
    }
    if (s->kind == IR_S_BLOCK) {
        for (int i = 0; i < s->nreads; i++)
            if (s->reads[i] == rb->t)
                w->reads[i] = rb->t2;
        for (int i = 0; i < s->nwrites; i++)
            if (s->writes[i] == rb->t)
                w->writes[i] = rb->t2;
    }
    return true;
}

/* After compute_at moved T's only writer into loop l (lp: the path to
 * l) to compute there the box of T that one iteration reads (lowest point
 * r->outer, extents ext), with no guard (the box lies inside T): when T's
 * allocation encloses l, T is allocated in l's body instead, as the box
 * alone.  Every access of T is under l, so it indexes the box less its
 * lowest point.  A softmax's exponentials moved into the loop over its rows
 * then take one row (788 bytes for 197 columns, in the level-1 cache, on
 * each thread's stack) instead of the whole tensor (1.8 MB written to
 * memory and read back); its row maximum and sum one element each.  A box
 * of more than 16 KiB stays in T (it would be a heap allocation per
 * iteration). */
static void alloc_box_in_loop(sch_ctx *c, const sch_path *lp, const ir_buffer *t,
                              const region *r, const int64_t *ext)
{
    ir_module *m = c->m;
    int at = -1;
    for (int k = 0; k < lp->n - 1; k++)
        if ((*lp->slot[k])->kind == IR_S_ALLOC && (*lp->slot[k])->buf == t)
            at = k;
    ir_stmt *l = *lp->slot[lp->n - 1];
    if (at < 0 || (*lp->slot[at])->nbody != 1)
        return;
    /* on the stack only: a heap box would be allocated every iteration */
    int64_t bytes = ir_dtype_size(t->dtype);
    for (int d = 0; d < t->ndim; d++)
        if (__builtin_mul_overflow(bytes, ext[d], &bytes) || bytes > 16384)
            return;
    rebase rb = {.m = m, .t = t};
    rb.t2 = ir_buffer_new(m, t->name, t->dtype, t->ndim, ext, IR_BUF_LOCAL);
    rb.t2->scope = IR_SCOPE_STACK;
    rb.t2->filled = true;   /* the moved nest stores the whole box first */
    for (int d = 0; d < t->ndim; d++)
        rb.lowest[d] = ext[d] == t->shape[d] && r->outer[d].n == 0 ? NULL   /* all of it */
                       : ir_affine_expr(m, &r->outer[d]);
    ir_stmt_walk(l->body[0], rebase_stmt, rebase_expr, &rb);
    ir_stmt *old = *lp->slot[at];
    *lp->slot[at] = old->body[0];
    l->body[0] = ir_alloc_stmt(m, rb.t2, l->body[0]);
}

static bool compute_at(sch_ctx *c, const char *block, const char *loop)
{
    const char *what = "compute_at";
    moving mv;
    if (!elementwise_block(c, what, block, true, &mv))
        return false;
    const ir_buffer *t = mv.st->buf;
    if (t->role != IR_BUF_LOCAL || t->ndim > 16) {
        sch_error(c, "cannot compute_at block '%s': '%s' is %s", block, t->name,
                  t->role != IR_BUF_LOCAL ? "a parameter, not a local buffer" : "of too high a rank");
        return false;
    }
    sch_path lp;
    int child;
    if (!find_target_loop(c, what, &mv, loop, true, &lp, &child))
        return false;
    ir_stmt *l = *lp.slot[lp.n - 1];
    /* a reduction stores T in its init too, and reads it itself */
    uses all = count(t, c->f->body), in = count(t, l->body[0]), own = count(t, mv.b);
    if (all.stores != own.stores || in.loads != all.loads - own.loads) {
        sch_error(c, "cannot compute_at block '%s' at loop '%s': '%s' is %s", block, loop, t->name,
                  all.stores != own.stores ? "stored by other statements too" : "read outside the loop");
        return false;
    }
    for (int i = mv.index + 1; i <= child; i++)
        if (writes_reads_of(mv.seq->body[i], mv.b, NULL)) {
            sch_error(c, "cannot compute_at block '%s' at loop '%s': a buffer it reads is written "
                      "in between", block, loop);
            return false;
        }
    region r = {.c = c, .t = t, .ndim = t->ndim, .ok = true};
    region_stmt(&r, &l->body[0]);
    if (!r.ok)
        return false;
    ir_module *m = c->m;
    ir_var_range rg[SCH_RANGES_MAX];
    int nrg;
    sch_path_ranges(&lp, lp.n, rg, &nrg);
    /* under a parallel loop, the boxes of its iterations must be disjoint */
    for (int k = 0; k < lp.n; k++) {
        const ir_stmt *s = *lp.slot[k];
        if (s->kind != IR_S_FOR || s->for_kind != IR_FOR_PARALLEL)
            continue;
        bool disjoint = false;
        for (int d = 0; d < t->ndim; d++) {
            int64_t k1 = ir_affine_coef(&r.outer[d], s->var);
            int64_t ext = r.hi[d] - r.outer[d].c + 1;
            disjoint |= k1 >= ext || -k1 >= ext;
        }
        if (!disjoint) {
            sch_error(c, "cannot compute_at block '%s' at loop '%s': the regions of the "
                      "iterations of parallel loop '%s' overlap", block, loop, s->var->name);
            return false;
        }
    }
    /* the old nest goes; then the new one, over the box */
    *mv.p.slot[mv.root] = ir_seq_new(m);
    ir_var *vars[16];
    ir_expr *bind[32];
    ir_expr *guard = NULL;
    int64_t ext[16];
    for (int d = 0; d < t->ndim; d++) {
        vars[d] = nest_var(c, &mv, mv.dim_iter[d]);
        ext[d] = r.hi[d] - r.outer[d].c + 1;
        bool whole = r.outer[d].n == 0 && r.outer[d].c <= 0 && r.hi[d] >= t->shape[d] - 1;
        if (whole) {
            ext[d] = t->shape[d];
            bind[d] = ir_varref(m, vars[d]);
            continue;
        }
        /* one element: no loop */
        bind[d] = ext[d] == 1 ? ir_affine_expr(m, &r.outer[d])
                              : ir_binary(m, IR_ADD, ir_affine_expr(m, &r.outer[d]), ir_varref(m, vars[d]));
        bind[d] = pass_simplify_expr(m, bind[d]);
        if (nrg < SCH_RANGES_MAX)
            rg[nrg] = (ir_var_range){vars[d], 0, ext[d] - 1};
        ir_expr *in[2] = {ir_binary(m, IR_GE, ir_expr_copy(m, bind[d]), ir_int(m, 0)),
                          ir_binary(m, IR_LT, ir_expr_copy(m, bind[d]), ir_int(m, t->shape[d]))};
        for (int i = 0; i < 2; i++)
            if (!ir_always(in[i], rg, nrg + 1))
                guard = guard ? ir_binary(m, IR_AND, guard, in[i]) : in[i];
    }
    /* the new binding of each iteration variable: its dimension's, or a
     * reduce variable's whole loop (each element's init runs at the first
     * point of them); the loops in the order of the block's iteration
     * variables (rfactor's partials: jo, then ji, vectorizable) */
    const ir_stmt *b = mv.b;
    int nit = b->niters;
    ir_var *ivar[32];
    ir_expr *ibind[32];
    ir_var *from[32];
    ir_expr *to[32];
    int nfrom = 0;
    bool has_loop[32];
    if (nit > 32) {
        sch_error(c, "cannot compute_at block '%s': it has more than 32 iteration variables", block);
        return false;
    }
    for (int i = 0; i < nit; i++) {
        ivar[i] = NULL;
        has_loop[i] = b->iters[i].kind != IR_ITER_SPATIAL;
    }
    for (int d = 0; d < t->ndim; d++) {
        int i = mv.dim_iter[d];
        ivar[i] = vars[d];
        ibind[i] = bind[d];
        has_loop[i] = ext[d] > 1 || ir_expr_uses_var(bind[d], vars[d]);
    }
    ir_itervar *iters = ir_alloc(m->arena, sizeof *iters * (size_t)nit);
    for (int i = 0; i < nit; i++) {
        const ir_itervar *it = &b->iters[i];
        if (!ivar[i]) {
            ivar[i] = nest_var(c, &mv, i);
            ibind[i] = ir_varref(m, ivar[i]);
        }
        if (it->binding->kind == IR_VAR && nfrom < 32) {
            from[nfrom] = it->binding->var;
            to[nfrom++] = ibind[i];
        }
        iters[i] = (ir_itervar){it->var, it->kind, it->extent, ibind[i]};
    }
    if (mv.guard) {
        ir_expr *g = pass_simplify_expr(m, ir_expr_subst(m, mv.guard, from, to, nfrom));
        guard = guard ? ir_binary(m, IR_AND, guard, g) : g;
    }
    ir_stmt *nest = ir_block(m, b->name, iters, nit, b->init, mv.st);
    if (guard)
        nest = ir_if(m, guard, nest, NULL);
    for (int i = nit - 1; i >= 0; i--) {
        if (!has_loop[i])
            continue;
        int64_t n = b->iters[i].extent;
        for (int d = 0; d < t->ndim; d++)
            if (mv.dim_iter[d] == i)
                n = ext[d];
        nest = ir_for(m, ivar[i], ir_int(m, 0), ir_int(m, n), IR_FOR_SERIAL, nest);
    }
    ir_stmt *seq = ir_seq_new(m);
    ir_seq_append(m, seq, nest);
    ir_seq_append(m, seq, l->body[0]);
    l->body[0] = seq;
    if (!guard)
        alloc_box_in_loop(c, &lp, t, &r, ext);
    return true;
}

/* ---------------------------------------------------------------- reverse_compute_at */

/* The one block under s that stores a buffer c reads; its path from s. */
typedef struct producer {
    const ir_stmt *consumer;
    const ir_buffer *t;
    const ir_stmt *b;
    sch_path path;
    sch_path at;
    int nproducers;
} producer;

static void find_producer(producer *p, ir_stmt **slot)
{
    ir_stmt *s = *slot;
    if (!s || p->path.n == 128)
        return;
    p->path.slot[p->path.n++] = slot;
    if (s->kind == IR_S_BLOCK && s->nbody && s->body[0]->kind == IR_S_STORE) {
        for (int i = 0; i < p->consumer->nreads; i++)
            if (p->consumer->reads[i] == s->body[0]->buf) {
                p->nproducers++;
                p->t = s->body[0]->buf;
                p->b = s;
                p->at = p->path;
            }
    }
    for (int i = 0; i < s->nbody; i++)
        find_producer(p, &s->body[i]);
    if (s->orelse)
        find_producer(p, &s->orelse);
    p->path.n--;
}

/* Whether block b is the only statement of body that stores t: its store,
 * and for a reduction its init at the same indices. */
static bool stored_only_by(const ir_buffer *t, const ir_stmt *b, const ir_stmt *body)
{
    const ir_stmt *st = b->body[0], *in = b->init;
    int own = 1;
    if (in) {
        if (in->kind != IR_S_STORE || in->buf != t || in->nargs != st->nargs)
            return false;
        for (int i = 0; i < st->nargs; i++)
            if (!ir_expr_equal(in->args[i], st->args[i]))
                return false;
        own = 2;
    }
    return count(t, b).stores == own && count(t, body).stores == own;
}

/* c reads t only at its own iteration variables. */
static bool reads_at_own_indices(const ir_stmt *c, const ir_buffer *t, const ir_expr *x)
{
    if (!x)
        return true;
    if (x->kind == IR_LOAD && x->buf == t)
        return ir_block_own_index(c, x->args, x->nargs);
    for (int i = 0; i < x->nargs; i++)
        if (!reads_at_own_indices(c, t, x->args[i]))
            return false;
    return reads_at_own_indices(c, t, x->a) && reads_at_own_indices(c, t, x->b) &&
           reads_at_own_indices(c, t, x->c);
}

/* Each dimension d of what block b stores into t, seen from loop l (lp:
 * the path to l, at: from l to b): affine in the loops, outer[d] from the
 * loops around l plus at most one inner loop dim_loop[d] with coefficient
 * 1 (used[j]: inner loop j serves a dimension). */
static bool store_box(sch_ctx *c, const char *block, const char *loop, const ir_stmt *b,
                      const ir_buffer *t, const sch_path *lp, const sch_path *at,
                      ir_stmt *const *inner, int ninner, ir_stmt **dim_loop, ir_affine *outer,
                      bool *used)
{
    ir_module *m = c->m;
    const ir_stmt *bst = b->body[0];
    sch_path full = *lp;
    for (int k = 0; k < at->n && full.n < 128; k++)
        full.slot[full.n++] = at->slot[k];
    for (int d = 0; d < t->ndim; d++) {
        ir_expr *x = pass_simplify_expr(m, sch_unbind(m, &full, bst->args[d]));
        if (!ir_affine_of(x, &outer[d])) {
            sch_error(c, "cannot reverse_compute_at block '%s' at loop '%s': block '%s' stores "
                      "'%s' at index '%s', not affine in the loops", block, loop, b->name,
                      t->name, sch_expr_text(m, x));
            return false;
        }
        for (int j = 0; j < ninner; j++) {
            int64_t k1 = ir_affine_coef(&outer[d], inner[j]->var);
            if (k1 == 0)
                continue;
            if (k1 != 1 || dim_loop[d] || used[j] || sch_extent(inner[j]) < 1) {
                sch_error(c, "cannot reverse_compute_at block '%s' at loop '%s': the elements "
                          "of '%s' one iteration stores are not a box of its loops", block, loop,
                          t->name);
                return false;
            }
            dim_loop[d] = inner[j];
            used[j] = true;
        }
        for (int i = 0; i < outer[d].n; i++) {
            bool known = false;
            for (int k = 0; k < lp->n; k++)
                known |= (*lp->slot[k])->kind == IR_S_FOR && (*lp->slot[k])->var == outer[d].var[i];
            for (int j = 0; j < ninner; j++)
                known |= inner[j]->var == outer[d].var[i];
            if (!known) {
                sch_error(c, "cannot reverse_compute_at block '%s' at loop '%s': block '%s' "
                          "stores '%s' at an index that uses '%s', not a loop", block, loop,
                          b->name, t->name, outer[d].var[i]->name);
                return false;
            }
        }
    }
    return true;
}

static bool reverse_compute_at(sch_ctx *c, const char *block, const char *loop)
{
    const char *what = "reverse_compute_at";
    moving mv;
    if (!elementwise_block(c, what, block, false, &mv))
        return false;
    sch_path lp;
    int child;
    if (!find_target_loop(c, what, &mv, loop, false, &lp, &child))
        return false;
    ir_stmt *l = *lp.slot[lp.n - 1];
    ir_block_update_access(c->m, mv.b);
    producer pr = {.consumer = mv.b};
    find_producer(&pr, &l->body[0]);
    if (pr.nproducers != 1) {
        sch_error(c, "cannot reverse_compute_at block '%s' at loop '%s': %s block in the loop "
                  "stores a buffer it reads", block, loop, pr.nproducers ? "more than one" : "no");
        return false;
    }
    const ir_buffer *t = pr.t, *y = mv.st->buf;
    const ir_stmt *b = pr.b;
    if (!stored_only_by(t, b, c->f->body) || t->ndim != mv.b->niters || t->ndim > 16) {
        sch_error(c, "cannot reverse_compute_at block '%s' at loop '%s': '%s' is stored by "
                  "other statements too, or its rank is not the block's", block, loop, t->name);
        return false;
    }
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] != mv.b->iters[d].extent) {
            sch_error(c, "cannot reverse_compute_at block '%s': its iteration domain is not the "
                      "shape of '%s'", block, t->name);
            return false;
        }
    if (!reads_at_own_indices(mv.b, t, mv.st->value)) {
        sch_error(c, "cannot reverse_compute_at block '%s': it reads '%s' at other indices than "
                  "its own", block, t->name);
        return false;
    }
    for (int i = child; i < mv.index; i++) {
        uses u = count(y, mv.seq->body[i]);
        if (u.loads || u.stores || writes_reads_of(mv.seq->body[i], mv.b, i == child ? t : NULL) ||
            (i > child && count(t, mv.seq->body[i]).stores)) {
            sch_error(c, "cannot reverse_compute_at block '%s' at loop '%s': a statement in "
                      "between uses '%s' or writes what the block reads", block, loop, y->name);
            return false;
        }
    }
    /* the loops inside l down to the producer, and their roles */
    ir_module *m = c->m;
    ir_stmt *inner[128];
    int ninner = 0;
    for (int k = 0; k < pr.at.n - 1; k++) {
        ir_stmt *s = *pr.at.slot[k];
        if (s->kind == IR_S_FOR)
            inner[ninner++] = s;
        else if (s->kind == IR_S_LET || s->kind == IR_S_BLOCK ||
                 (s->kind == IR_S_IF && pr.at.slot[k + 1] != &s->body[0])) {
            sch_error(c, "cannot reverse_compute_at block '%s' at loop '%s': a %s is between "
                      "the loop and block '%s'", block, loop,
                      s->kind == IR_S_IF ? "else branch" : ir_stmt_kind_name(s->kind), b->name);
            return false;
        }
    }
    for (int i = 0; i < b->niters; i++)
        for (int k = 0; k < lp.n; k++) {
            const ir_stmt *s = *lp.slot[k];
            if (b->iters[i].kind == IR_ITER_REDUCE && s->kind == IR_S_FOR &&
                ir_expr_uses_var(b->iters[i].binding, s->var)) {
                sch_error(c, "cannot reverse_compute_at block '%s' at loop '%s': '%s' is not "
                          "final after one iteration (block '%s' reduces over loop '%s')", block,
                          loop, t->name, b->name, s->var->name);
                return false;
            }
        }
    /* each dimension: loops around l plus at most one inner loop with coefficient 1 */
    ir_stmt *dim_loop[16] = {0};
    ir_affine outer[16];
    bool used[128] = {false};
    if (!store_box(c, block, loop, b, t, &lp, &pr.at, inner, ninner, dim_loop, outer, used))
        return false;
    /* guards inside l may only test those loops (they are copied) */
    for (int k = 0; k < pr.at.n - 1; k++) {
        const ir_stmt *s = *pr.at.slot[k];
        for (int j = 0; s->kind == IR_S_IF && j < ninner; j++)
            if (!used[j] && ir_expr_uses_var(s->cond, inner[j]->var)) {
                sch_error(c, "cannot reverse_compute_at block '%s' at loop '%s': guard '%s' "
                          "tests loop '%s', which no index of '%s' uses", block, loop,
                          sch_expr_text(m, s->cond), inner[j]->var->name, t->name);
                return false;
            }
    }
    /* the old nest goes; the new one copies the index loops and guards */
    *mv.p.slot[mv.root] = ir_seq_new(m);
    ir_var *from[128];
    ir_expr *to[128];
    ir_var *nv[128] = {0};
    int nsub = 0;
    for (int d = 0; d < t->ndim; d++)
        if (dim_loop[d]) {
            for (int j = 0; j < ninner; j++)
                if (inner[j] == dim_loop[d]) {
                    nv[j] = nest_var(c, &mv, d);
                    from[nsub] = inner[j]->var;
                    to[nsub++] = ir_varref(m, nv[j]);
                }
        }
    ir_itervar *iters = ir_alloc(m->arena, sizeof *iters * (size_t)mv.b->niters);
    for (int d = 0; d < mv.b->niters; d++)
        iters[d] = (ir_itervar){mv.b->iters[d].var, IR_ITER_SPATIAL, mv.b->iters[d].extent,
                                pass_simplify_expr(m, ir_expr_subst(m, ir_affine_expr(m, &outer[d]), from, to, nsub))};
    ir_stmt *nest = ir_block(m, mv.b->name, iters, mv.b->niters, NULL, mv.st);
    for (int k = pr.at.n - 2; k >= 0; k--) {
        ir_stmt *s = *pr.at.slot[k];
        if (s->kind == IR_S_IF)
            nest = ir_if(m, ir_expr_subst(m, s->cond, from, to, nsub), nest, NULL);
        else if (s->kind == IR_S_FOR)
            for (int j = 0; j < ninner; j++)
                if (inner[j] == s && nv[j])
                    nest = ir_for(m, nv[j], ir_expr_copy(m, s->lo), ir_expr_copy(m, s->hi),
                                  IR_FOR_SERIAL, nest);
    }
    ir_stmt *seq = ir_seq_new(m);
    ir_seq_append(m, seq, l->body[0]);
    ir_seq_append(m, seq, nest);
    l->body[0] = seq;
    return true;
}

bool sch_compute_at(sch_ctx *c, const char *block, const char *loop, bool reverse)
{
    return reverse ? reverse_compute_at(c, block, loop) : compute_at(c, block, loop);
}
