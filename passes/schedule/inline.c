/* passes/schedule/inline.c — reverse_compute_inline: an elementwise block
 * that reads a local buffer T is computed where T's final value is stored,
 * and its own loop nest goes away:
 *
 *     t_tile_out:  t[s, o] = t_tile[...]          y[s, o] = t_tile[...] + bias[o]
 *     y:           y[s, o] = t[s, o] + bias[o]  ->  (gone)
 *
 * (a linear layer's bias added in the write-back of its accumulator tile).
 * Legal when the block's iteration variables are all spatial and it stores
 * its output at exactly them; it reads T only at the same indices; T is a
 * local buffer written by exactly one store, in a block with only spatial
 * iteration variables that does not read T (so that store is T's final
 * value, once per element) and read by nothing else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arith.h"
#include "passes/passes.h"
#include "passes/schedule/schedule.h"

typedef struct find_ctx {
    const ir_buffer *t;
    const ir_stmt *skip;          /* the consumer block */
    ir_stmt **store_slot;         /* the one store to t */
    const ir_stmt *store_block;   /* its block */
    int nstores, nloads_elsewhere;
    const ir_stmt *cur_block;
} find_ctx;

static void find_uses(find_ctx *f, ir_stmt **slot)
{
    ir_stmt *s = *slot;
    if (!s || s == f->skip)
        return;
    const ir_stmt *saved = f->cur_block;
    if (s->kind == IR_S_BLOCK)
        f->cur_block = s;
    if (s->kind == IR_S_STORE && s->buf == f->t) {
        f->nstores++;
        f->store_slot = slot;
        f->store_block = f->cur_block;
    }
    bool loads = ir_expr_loads(s->value, f->t) || ir_expr_loads(s->cond, f->t);
    for (int i = 0; i < s->nargs; i++)
        loads |= ir_expr_loads(s->args[i], f->t);
    if (loads)
        f->nloads_elsewhere++;
    for (int i = 0; i < s->nbody; i++)
        find_uses(f, &s->body[i]);
    find_uses(f, &s->init);
    find_uses(f, &s->orelse);
    f->cur_block = saved;
}

/* g with loads of t replaced by v. */
static ir_expr *replace_loads(ir_module *m, const ir_expr *g, const ir_buffer *t, const ir_expr *v)
{
    if (!g)
        return NULL;
    if (g->kind == IR_LOAD && g->buf == t)
        return ir_expr_copy(m, v);
    ir_expr *c = ir_expr_copy(m, g);
    for (int i = 0; i < c->nargs; i++)
        c->args[i] = replace_loads(m, g->args[i], t, v);
    c->a = replace_loads(m, g->a, t, v);
    c->b = replace_loads(m, g->b, t, v);
    c->c = replace_loads(m, g->c, t, v);
    return c;
}

typedef struct tload_ctx {
    const ir_stmt *b;
    const ir_buffer *t;
    bool ok;
} tload_ctx;

static bool check_tloads(const ir_expr *x, void *p)
{
    tload_ctx *c = p;
    if (x->kind == IR_LOAD && x->buf == c->t && !ir_block_own_index(c->b, x->args, x->nargs))
        c->ok = false;
    return c->ok;
}

/* Whether `target` lies inside the ALLOC of b under s. */
static bool contains(const ir_stmt *s, const ir_stmt *target)
{
    if (!s)
        return false;
    if (s == target)
        return true;
    for (int i = 0; i < s->nbody; i++)
        if (contains(s->body[i], target))
            return true;
    return contains(s->init, target) || contains(s->orelse, target);
}

static bool inside_alloc(const ir_stmt *s, const ir_buffer *b, const ir_stmt *target)
{
    if (!s)
        return false;
    if (s->kind == IR_S_ALLOC && s->buf == b)
        return contains(s, target);
    for (int i = 0; i < s->nbody; i++)
        if (inside_alloc(s->body[i], b, target))
            return true;
    return inside_alloc(s->init, b, target) || inside_alloc(s->orelse, b, target);
}

/* What both inlines ask of the block they inline: one store without an
 * init, no reduction, at its own iteration variables in order, and (local)
 * into a local buffer.  Returns the store (p: the block's path), or NULL
 * after an error. */
static ir_stmt *inline_store(sch_ctx *c, const char *block, sch_path *p, bool local)
{
    if (!sch_find_block(c, block, p))
        return NULL;
    ir_stmt *b = *p->slot[p->n - 1];
    ir_stmt *st = b->nbody ? b->body[0] : NULL;
    if (b->init || !st || st->kind != IR_S_STORE) {
        sch_error(c, "cannot inline block '%s': it is not one store without an init", block);
        return NULL;
    }
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind != IR_ITER_SPATIAL) {
            sch_error(c, "cannot inline block '%s': it reduces over '%s'", block, b->iters[i].var->name);
            return NULL;
        }
    if (local && st->buf->role != IR_BUF_LOCAL) {
        sch_error(c, "cannot inline block '%s': '%s' is a parameter of @%s, not a local buffer",
                  block, st->buf->name, c->f->name);
        return NULL;
    }
    if (!ir_block_own_index(b, st->args, st->nargs)) {
        sch_error(c, "cannot inline block '%s': it does not store '%s' at its iteration "
                  "variables in order", block, st->buf->name);
        return NULL;
    }
    return st;
}

/* ---------------------------------------------------------------- what a store covers */

/* The elements a store writes, as a box: in dimension d every index from
 * lo[d] to hi[d] and no other, when that can be shown.  The store runs
 * under loops (a loop's variable takes base + step * m for m in [0,
 * count)), blocks and lets (whose variables stand for their bindings and
 * values) and guards.  It is shown when every index is affine in the loop
 * variables; no loop variable is in two indices (the dimensions vary
 * independently); each index takes every value between its least and its
 * greatest (its terms, by increasing size, never step over what those
 * before them span); and every guard always holds or bounds one index by
 * a constant (a split's guard on a global index, `q_o * 4 + q_i < 6`). */

enum { COVER_DEPTH = 128, COVER_DIMS = 16 };

typedef struct cover {
    const ir_stmt *path[COVER_DEPTH];    /* FOR, BLOCK, LET, IF from the body down */
    int npath;
    bool deep;                           /* more than COVER_DEPTH on the path */
    const char *why;                     /* what could not be shown */
    ir_var_range range[3 * COVER_DEPTH]; /* loops and named variables, for ir_bounds */
    int nrange;
    const ir_var *loop[COVER_DEPTH];
    int64_t base[COVER_DEPTH], step[COVER_DEPTH], count[COVER_DEPTH];
    int owner[COVER_DEPTH];              /* the dimension whose index uses the loop, or -1 */
    int nloops;
    const ir_var *named[2 * COVER_DEPTH];
    const ir_expr *value[2 * COVER_DEPTH];
    int nnamed;
    ir_affine index[COVER_DIMS];
    int ndims;
    int64_t lo[COVER_DIMS], hi[COVER_DIMS];
} cover;

/* The statements from s down to target onto k->path; false when target is
 * not under s. */
static bool cover_path(cover *k, const ir_stmt *s, const ir_stmt *target)
{
    if (!s)
        return false;
    if (s == target)
        return true;
    bool item = s->kind == IR_S_FOR || s->kind == IR_S_BLOCK || s->kind == IR_S_LET ||
                s->kind == IR_S_IF;
    bool pushed = item && k->npath < COVER_DEPTH;
    if (pushed)
        k->path[k->npath++] = s;
    for (int i = 0; i < s->nbody; i++)
        if (cover_path(k, s->body[i], target)) {
            k->deep |= item && !pushed;   /* the path lacks s */
            return true;
        }
    k->npath -= pushed;
    if (cover_path(k, s->init, target)) {
        k->why = "it is stored in a block's init";
        return true;
    }
    if (cover_path(k, s->orelse, target)) {
        k->why = "it is stored in the else branch of a guard";
        return true;
    }
    return false;
}

/* What a block's or let's variable stands for (NULL: a loop's). */
static const ir_expr *named_value(void *ctx, const ir_var *v)
{
    const cover *k = ctx;
    for (int i = k->nnamed - 1; i >= 0; i--)
        if (k->named[i] == v)
            return k->value[i];
    return NULL;
}

/* f += sign * x read in the loop variables (k's named variables replaced
 * by what they stand for); false when x is not affine in them. */
static bool loop_affine(cover *k, const ir_expr *x, int64_t sign, ir_affine *f)
{
    ir_affine_rules rules = {.casts = true, .value = named_value, .ctx = k};
    if (!ir_affine_add(f, x, sign, &rules, 0))
        return false;
    int n = 0;
    for (int i = 0; i < f->n; i++) {
        bool loop = false;
        for (int l = 0; l < k->nloops && !loop; l++)
            loop = f->var[i] == k->loop[l];
        if (f->coef[i] != 0 && !loop)
            return false;
        if (f->coef[i] != 0) {
            f->var[n] = f->var[i];
            f->atom[n] = f->atom[i];
            f->coef[n++] = f->coef[i];
        }
    }
    f->n = n;
    return true;
}

static int loop_of(const cover *k, const ir_var *v)
{
    for (int l = 0; l < k->nloops; l++)
        if (k->loop[l] == v)
            return l;
    return -1;
}

/* The loops, named variables and their ranges along the path; false (with
 * k->why) when a loop's bounds are not constants or it never runs. */
static bool cover_scopes(cover *k)
{
    for (int i = 0; i < k->npath; i++) {
        const ir_stmt *s = k->path[i];
        if (s->kind == IR_S_FOR) {
            ir_interval lo = ir_bounds(s->lo, k->range, k->nrange);
            ir_interval hi = ir_bounds(s->hi, k->range, k->nrange);
            int64_t step = ir_for_step(s);
            if (!lo.known || !hi.known || lo.lo != lo.hi || hi.lo != hi.hi) {
                k->why = "a loop around it has bounds that are not constants";
                return false;
            }
            int64_t n;
            if (lo.lo >= hi.lo || __builtin_sub_overflow(hi.lo, lo.lo, &n)) {
                k->why = lo.lo >= hi.lo ? "a loop around it never runs"
                                        : "a loop around it has bounds too far apart";
                return false;
            }
            int l = k->nloops++;
            k->loop[l] = s->var;
            k->base[l] = lo.lo;
            k->step[l] = step;
            k->count[l] = (n - 1) / step + 1;   /* the last value is at most hi - 1 */
            k->owner[l] = -1;
            k->range[k->nrange++] = (ir_var_range){s->var, lo.lo, lo.lo + step * (k->count[l] - 1)};
        }
        int nnamed = s->kind == IR_S_BLOCK ? s->niters : s->kind == IR_S_LET;
        if (k->nnamed + nnamed > 2 * COVER_DEPTH) {
            k->why = "it is nested or indexed too deeply";
            return false;
        }
        for (int j = 0; j < nnamed; j++) {
            const ir_var *v = s->kind == IR_S_BLOCK ? s->iters[j].var : s->var;
            const ir_expr *x = s->kind == IR_S_BLOCK ? s->iters[j].binding : s->value;
            ir_interval r = ir_bounds(x, k->range, k->nrange);
            k->named[k->nnamed] = v;
            k->value[k->nnamed++] = x;
            if (r.known)
                k->range[k->nrange++] = (ir_var_range){v, r.lo, r.hi};
        }
    }
    return true;
}

static int by_size(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Index d's least and greatest values, when it takes every value between
 * them; false (with k->why) otherwise. */
static bool index_span(cover *k, int d)
{
    const ir_affine *f = &k->index[d];
    int64_t sizes[IR_AFFINE_MAX][2];   /* |coef * step|, count: the terms that vary */
    int n = 0;
    ir_interval all = ir_interval_point(f->c);
    for (int i = 0; i < f->n; i++) {
        int l = loop_of(k, f->var[i]);
        if (k->owner[l] >= 0 && k->owner[l] != d) {
            k->why = "a loop around it is in two of its indices";
            return false;
        }
        k->owner[l] = d;
        ir_interval values = {k->base[l], k->base[l] + k->step[l] * (k->count[l] - 1), true};
        all = ir_interval_add(all, ir_interval_scale(f->coef[i], values));
        int64_t size;
        if (__builtin_mul_overflow(f->coef[i], k->step[l], &size) || size == INT64_MIN)
            return false;
        if (k->count[l] > 1) {
            sizes[n][0] = size < 0 ? -size : size;
            sizes[n++][1] = k->count[l];
        }
    }
    qsort(sizes, (size_t)n, sizeof *sizes, by_size);
    int64_t span = 0;   /* what the terms so far span */
    for (int i = 0; i < n; i++) {
        int64_t more;
        if (sizes[i][0] > span + 1) {
            k->why = "an index skips values";
            return false;
        }
        if (__builtin_mul_overflow(sizes[i][0], sizes[i][1] - 1, &more) ||
            __builtin_add_overflow(span, more, &span))
            return false;
    }
    if (!all.known)
        return false;
    k->lo[d] = all.lo;
    k->hi[d] = all.hi;
    return true;
}

/* The box narrowed by index d OP bound (OP: < <= > >= ==). */
static void narrow(cover *k, int d, ir_expr_kind op, int64_t bound)
{
    if ((op == IR_LT || op == IR_LE || op == IR_EQ) && bound - (op == IR_LT) < k->hi[d])
        k->hi[d] = bound - (op == IR_LT);
    if ((op == IR_GT || op == IR_GE || op == IR_EQ) && bound + (op == IR_GT) > k->lo[d])
        k->lo[d] = bound + (op == IR_GT);
}

/* OP with its sides swapped: a OP b is b swap(OP) a. */
static ir_expr_kind swapped(ir_expr_kind op)
{
    return op == IR_LT ? IR_GT : op == IR_LE ? IR_GE : op == IR_GT ? IR_LT : op == IR_GE ? IR_LE : op;
}

/* Narrows the box by one conjunct of a guard; false (with k->why) when it
 * neither always holds nor bounds one index by a constant. */
static bool cover_guard(cover *k, const ir_expr *x, ir_module *m)
{
    if (x->kind == IR_AND)
        return cover_guard(k, x->a, m) && cover_guard(k, x->b, m);
    if (ir_always(x, k->range, k->nrange))
        return true;
    bool cmp = x->kind == IR_LT || x->kind == IR_LE || x->kind == IR_GT || x->kind == IR_GE ||
               x->kind == IR_EQ;
    ir_affine diff = {0};   /* a - b in the loop variables */
    if (cmp && loop_affine(k, x->a, 1, &diff) && loop_affine(k, x->b, -1, &diff) &&
        llabs(diff.c) < INT64_MAX / 4) {
        if (diff.n == 0 && x->kind == IR_EQ && diff.c == 0)
            return true;   /* 0 == 0 */
        for (int d = 0; d < k->ndims && diff.n; d++) {
            /* a - b = s * index_d + r, s = 1 or -1, r a constant: then
             * a OP b is index_d OP (-r) for s = 1, index_d swap(OP) r for -1 */
            ir_affine neg = k->index[d];
            for (int i = 0; i < neg.n; i++)
                neg.coef[i] = -neg.coef[i];
            int s = ir_affine_same_terms(&diff, &k->index[d]) ? 1
                  : ir_affine_same_terms(&diff, &neg) ? -1 : 0;
            if (!s || llabs(k->index[d].c) >= INT64_MAX / 4)
                continue;
            int64_t r = diff.c - s * k->index[d].c;
            narrow(k, d, s > 0 ? x->kind : swapped(x->kind), s > 0 ? -r : r);
            return true;
        }
    }
    k->why = ir_sprintf(m->arena, "guard '%s' bounds none of its indices by a constant",
                        sch_expr_text(m, x));
    return false;
}

/* The box the store at `target` (under c's function body) writes; false
 * with k->why when it cannot be shown. */
static bool store_box(sch_ctx *c, const ir_stmt *target, cover *k)
{
    memset(k, 0, sizeof *k);
    if (!cover_path(k, c->f->body, target) || k->why)
        return false;
    if (k->deep || target->nargs > COVER_DIMS) {
        k->why = "it is nested or indexed too deeply";
        return false;
    }
    if (!cover_scopes(k))
        return false;
    k->ndims = target->nargs;
    for (int d = 0; d < k->ndims; d++) {
        k->index[d] = (ir_affine){0};
        if (!loop_affine(k, target->args[d], 1, &k->index[d])) {
            k->why = ir_sprintf(c->m->arena, "index '%s' is not affine in the loops around it",
                                sch_expr_text(c->m, target->args[d]));
            return false;
        }
    }
    for (int d = 0; d < k->ndims; d++)
        if (!index_span(k, d)) {
            if (!k->why)
                k->why = "an index's values overflow";
            return false;
        }
    for (int i = 0; i < k->npath; i++)
        if (k->path[i]->kind == IR_S_IF && !cover_guard(k, k->path[i]->cond, c->m))
            return false;
    return true;
}

/* The box as text, "[0..4, 0..37]" (each end exclusive, as a loop's). */
static const char *box_text(ir_module *m, const cover *k)
{
    char buf[COVER_DIMS * 48 + 3];
    size_t n = 0;
    buf[n++] = '[';
    for (int d = 0; d < k->ndims; d++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld..%lld", d ? ", " : "",
                              (long long)k->lo[d], (long long)k->hi[d] + 1);
    snprintf(buf + n, sizeof buf - n, "]");
    return ir_strndup(m->arena, buf, strlen(buf));
}

/* Whether T's one store `ps` writes exactly the elements that block C's
 * store `st` (at C's own indices, where C reads T) writes: no fewer (Y would
 * not be computed where T was never stored) and no more (Y would be
 * written where C does not write it).  False after an error. */
static bool same_box(sch_ctx *c, const char *block, const ir_buffer *t, const ir_stmt *ps,
                     const ir_stmt *st)
{
    cover *tk = malloc(sizeof *tk), *ck = malloc(sizeof *ck);
    bool ok = false;
    if (!tk || !ck)
        sch_error(c, "cannot inline block '%s': out of memory", block);
    else if (!store_box(c, ps, tk))
        sch_error(c, "cannot inline block '%s': which elements of '%s' its store writes is not "
                  "known (%s)", block, t->name, tk->why ? tk->why : "an index overflows");
    else if (!store_box(c, st, ck))
        sch_error(c, "cannot inline block '%s': which elements it computes is not known (%s)",
                  block, ck->why ? ck->why : "an index overflows");
    else {
        ok = true;
        for (int d = 0; d < tk->ndims; d++)
            ok &= tk->lo[d] == ck->lo[d] && tk->hi[d] == ck->hi[d];
        if (!ok)
            sch_error(c, "cannot inline block '%s': '%s' is stored at %s, where it reads %s",
                      block, t->name, box_text(c->m, tk), box_text(c->m, ck));
    }
    free(tk);
    free(ck);
    return ok;
}

bool sch_reverse_compute_inline(sch_ctx *c, const char *block)
{
    sch_path p;
    ir_stmt *st = inline_store(c, block, &p, false);
    if (!st)
        return false;
    ir_stmt *b = *p.slot[p.n - 1];
    /* T: the local buffer the block reads at its own indices */
    const ir_buffer *t = NULL;
    for (int i = 0; i < b->nreads; i++)
        if (b->reads[i]->role == IR_BUF_LOCAL && b->reads[i] != st->buf) {
            if (t) {
                sch_error(c, "cannot inline block '%s': it reads two local buffers", block);
                return false;
            }
            t = b->reads[i];
        }
    if (!t) {
        sch_error(c, "cannot inline block '%s': it reads no local buffer", block);
        return false;
    }
    tload_ctx tl = {b, t, true};
    ir_expr_walk(st->value, check_tloads, &tl);
    if (!tl.ok) {
        sch_error(c, "cannot inline block '%s': it reads '%s' at other indices than its own",
                  block, t->name);
        return false;
    }
    find_ctx f = {.t = t, .skip = b};
    find_uses(&f, &c->f->body);
    const ir_stmt *pb = f.store_block;
    bool final = f.nstores == 1 && pb && !ir_expr_loads((*f.store_slot)->value, t);
    for (int i = 0; final && i < pb->niters; i++)
        final = pb->iters[i].kind == IR_ITER_SPATIAL;
    if (!final || f.nloads_elsewhere) {
        sch_error(c, "cannot inline block '%s': '%s' is not stored once per element by a "
                  "block without reduction (cache_write a reduction first) or is read elsewhere",
                  block, t->name);
        return false;
    }
    /* the output must be in scope where the producer stores */
    if (st->buf->role == IR_BUF_LOCAL && !inside_alloc(c->f->body, st->buf, *f.store_slot)) {
        sch_error(c, "cannot inline block '%s': '%s' is not allocated where '%s' is stored", block, st->buf->name, t->name);
        return false;
    }
    ir_module *m = c->m;
    ir_stmt *ps = *f.store_slot;
    if (ps->nargs != b->niters) {
        sch_error(c, "cannot inline block '%s': '%s' has another rank than it", block, t->name);
        return false;
    }
    if (!same_box(c, block, t, ps, st))
        return false;
    /* y[e] = g(iters := e, t[...] := v) */
    ir_var *from[64];
    ir_expr *to[64];
    int n = b->niters < 64 ? b->niters : 64;
    for (int d = 0; d < n; d++) {
        from[d] = b->iters[d].var;
        to[d] = ps->args[d];
    }
    ir_expr *g = replace_loads(m, st->value, t, ps->value);
    g = ir_expr_subst(m, g, from, to, n);
    ir_expr **idx = ir_alloc(m->arena, sizeof *idx * (size_t)(n ? n : 1));
    for (int d = 0; d < n; d++)
        idx[d] = ir_expr_copy(m, ps->args[d]);
    *f.store_slot = ir_store(m, st->buf, idx, n, g);
    /* remove the consumer's loop nest: up from the block while the parent
     * holds nothing else */
    int k = p.n - 1;
    while (k > 0) {
        ir_stmt *parent = *p.slot[k - 1];
        if (parent->kind == IR_S_SEQ || parent->kind == IR_S_ALLOC || parent->kind == IR_S_BLOCK ||
            (parent->kind == IR_S_IF && parent->orelse))
            break;
        k--;
    }
    *p.slot[k] = ir_seq_new(m);
    sch_update_blocks(m, c->f->body);
    return true;
}

/* ---------------------------------------------------------------- compute_inline */

/* compute_inline(B): an elementwise block that stores a local buffer T at
 * its own indices, T[v...] = f(v...), is computed wherever T is read, and
 * its loop nest goes away:
 *
 *     t:  t[vr, vj] = x[vr, vj] * 2          (gone)
 *     y:  y[vr, vj] = t[vr, vj] + 1     ->   y[vr, vj] = x[vr, vj] * 2 + 1
 *
 * A load T[e...] becomes f(e...).  Legal when B has only spatial iteration
 * variables, no init, and one store at exactly them, covering T (extents =
 * T's shape; guards only those of a split that drop instances outside the
 * extents); T is a local buffer (a parameter's values are the function's
 * result or input) stored by nothing else and read only after B's nest, in
 * the same sequence; f does not read T, and nothing from B's nest on
 * writes a buffer f reads (so f gives at each load what T held).  T's
 * allocation goes when nothing uses T any more. */

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

typedef struct inl_scan {
    const ir_buffer *t;
    const ir_buffer *const *reads;   /* what f reads */
    int nreads;
    int ntstores, ntloads, nwrites_read;
} inl_scan;

static void scan_expr_loads(inl_scan *s, const ir_expr *x)
{
    if (!x)
        return;
    if (x->kind == IR_LOAD && x->buf == s->t)
        s->ntloads++;
    for (int i = 0; i < x->nargs; i++)
        scan_expr_loads(s, x->args[i]);
    scan_expr_loads(s, x->a);
    scan_expr_loads(s, x->b);
    scan_expr_loads(s, x->c);
}

static void scan_stmt_uses(inl_scan *s, const ir_stmt *st)
{
    if (!st)
        return;
    if (st->kind == IR_S_STORE) {
        if (st->buf == s->t)
            s->ntstores++;
        for (int i = 0; i < s->nreads; i++)
            if (st->buf == s->reads[i])
                s->nwrites_read++;
    }
    for (int i = 0; i < st->nargs; i++)
        scan_expr_loads(s, st->args[i]);
    scan_expr_loads(s, st->value);
    scan_expr_loads(s, st->cond);
    scan_expr_loads(s, st->lo);
    scan_expr_loads(s, st->hi);
    for (int i = 0; i < st->niters; i++)
        scan_expr_loads(s, st->iters[i].binding);
    for (int i = 0; i < st->nbody; i++)
        scan_stmt_uses(s, st->body[i]);
    scan_stmt_uses(s, st->init);
    scan_stmt_uses(s, st->orelse);
}

typedef struct inl_subst {
    ir_module *m;
    const ir_buffer *t;
    const ir_stmt *b;      /* the producer */
    const ir_expr *f;
} inl_subst;

/* x with every load t[e...] replaced by f(e...). */
static ir_expr *inline_loads(const inl_subst *s, const ir_expr *x)
{
    if (!x)
        return NULL;
    ir_expr *c = ir_expr_copy(s->m, x);
    for (int i = 0; i < c->nargs; i++)
        c->args[i] = inline_loads(s, x->args[i]);
    c->a = inline_loads(s, x->a);
    c->b = inline_loads(s, x->b);
    c->c = inline_loads(s, x->c);
    if (c->kind != IR_LOAD || c->buf != s->t)
        return c;
    ir_var *from[64];
    ir_expr *to[64];
    int n = s->b->niters;
    for (int d = 0; d < n; d++) {
        from[d] = s->b->iters[d].var;
        to[d] = c->args[d];
    }
    return ir_expr_subst(s->m, s->f, from, to, n);
}

static void inline_stmt(const inl_subst *s, ir_stmt *st)
{
    if (!st)
        return;
    for (int i = 0; i < st->nargs; i++)
        st->args[i] = inline_loads(s, st->args[i]);
    if (st->value)
        st->value = inline_loads(s, st->value);
    if (st->cond)
        st->cond = inline_loads(s, st->cond);
    if (st->lo)
        st->lo = inline_loads(s, st->lo);
    if (st->hi)
        st->hi = inline_loads(s, st->hi);
    for (int i = 0; i < st->niters; i++)
        st->iters[i].binding = inline_loads(s, st->iters[i].binding);
    for (int i = 0; i < st->nbody; i++)
        inline_stmt(s, st->body[i]);
    inline_stmt(s, st->init);
    inline_stmt(s, st->orelse);
}

/* Replaces the allocation of t by its body. */
static bool drop_alloc(ir_stmt **slot, const ir_buffer *t)
{
    ir_stmt *s = *slot;
    if (!s)
        return false;
    if (s->kind == IR_S_ALLOC && s->buf == t) {
        *slot = s->body[0];
        return true;
    }
    for (int i = 0; i < s->nbody; i++)
        if (drop_alloc(&s->body[i], t))
            return true;
    return drop_alloc(&s->init, t) || drop_alloc(&s->orelse, t);
}

bool sch_compute_inline(sch_ctx *c, const char *block)
{
    sch_path p;
    ir_stmt *st = inline_store(c, block, &p, true);
    if (!st)
        return false;
    ir_stmt *b = *p.slot[p.n - 1];
    ir_buffer *t = st->buf;
    for (int d = 0; d < b->niters; d++)
        if (b->iters[d].extent != t->shape[d]) {
            sch_error(c, "cannot inline block '%s': it does not store every element of '%s'",
                      block, t->name);
            return false;
        }
    if (ir_expr_loads(st->value, t)) {
        sch_error(c, "cannot inline block '%s': it reads '%s', the buffer it stores", block, t->name);
        return false;
    }
    /* the producer's nest: up from the block while the parent holds nothing else */
    int k = p.n - 1;
    while (k > 0) {
        ir_stmt *parent = *p.slot[k - 1];
        if (parent->kind == IR_S_SEQ || parent->kind == IR_S_ALLOC || parent->kind == IR_S_BLOCK ||
            (parent->kind == IR_S_IF && parent->orelse))
            break;
        if (parent->kind == IR_S_IF && !domain_guard(b, parent->cond)) {
            sch_error(c, "cannot inline block '%s': guard '%s' may leave elements of '%s' unset",
                      block, sch_expr_text(c->m, parent->cond), t->name);
            return false;
        }
        if (parent->kind == IR_S_LET) {
            sch_error(c, "cannot inline block '%s': a let is between its loops and the block", block);
            return false;
        }
        k--;
    }
    ir_stmt *seq = k > 0 ? *p.slot[k - 1] : NULL;
    if (!seq || seq->kind != IR_S_SEQ) {
        sch_error(c, "cannot inline block '%s': nothing after it reads '%s'", block, t->name);
        return false;
    }
    int ip = (int)(p.slot[k] - seq->body);
    /* every use of t and every write of what f reads, outside B's nest */
    ir_block_update_access(c->m, b);
    inl_scan all = {.t = t, .reads = (const ir_buffer *const *)b->reads, .nreads = b->nreads};
    ir_stmt *nest = *p.slot[k];
    *p.slot[k] = ir_seq_new(c->m);   /* out of the way while counting */
    scan_stmt_uses(&all, c->f->body);
    inl_scan after = {.t = t, .reads = all.reads, .nreads = all.nreads};
    for (int i = ip + 1; i < seq->nbody; i++)
        scan_stmt_uses(&after, seq->body[i]);
    *p.slot[k] = nest;
    if (all.ntstores) {
        sch_error(c, "cannot inline block '%s': '%s' is stored elsewhere too", block, t->name);
        return false;
    }
    if (after.ntloads == 0 || after.ntloads != all.ntloads) {
        sch_error(c, "cannot inline block '%s': '%s' is %s", block, t->name,
                  after.ntloads ? "read before the block's nest or outside its sequence"
                                : "not read after the block");
        return false;
    }
    if (after.nwrites_read) {
        sch_error(c, "cannot inline block '%s': a buffer it reads is written after it", block);
        return false;
    }
    inl_subst s = {c->m, t, b, st->value};
    for (int i = ip + 1; i < seq->nbody; i++)
        inline_stmt(&s, seq->body[i]);
    *p.slot[k] = ir_seq_new(c->m);
    drop_alloc(&c->f->body, t);
    sch_update_blocks(c->m, c->f->body);
    return true;
}
