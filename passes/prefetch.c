/* passes/prefetch.c — prefetch the next weight panel of a contraction
 * whose weights do not stay in L2 from one run to the next, and a
 * contraction tile's epilogue rows during its reduction (below, "epilogue
 * rows").
 *
 * The automatic scheduler tiles a convolution or matmul as
 *     for f_o (panel loop)        weight index = f_o * E + ...
 *       for p (reuse loop)        not in the weight index: re-reads the panel
 *         for c, r, s (reduce)    walk the panel
 *           register tile (unrolled / vectorized loops, the block)
 * so each panel of E elements is read R times (R: the reuse loops' trip
 * count), and its first read comes from memory when the network's weights
 * together exceed the L2: nothing overlaps that stream with the compute of
 * the other R - 1 reads (bench/results/pw7_s20.txt section 2).  This pass
 * puts at the top of the innermost reduce loop's body
 *     prefetch W[(f_o + 1) * E + floordiv(rho * E + off, R)]
 * where off is the current step's offset in its panel (the tile's own loop
 * variables at their first value) and rho the reuse iteration (0 .. R-1):
 * reuse iteration rho prefetches the rho-th R-th of the next panel, at the
 * pace the current panel is read, so the next panel is in L2 when its turn
 * comes.  The last panel's prefetch points past W (allowed: a hint).  When
 * R exceeds 8, only the first 8 reuse iterations prefetch, an 8th each:
 *     if rho < 8 { prefetch W[(f_o + 1) * E + floordiv(rho * E + off, 8)] }
 *
 * The panel and reuse loops are found from the weight load's index (its
 * affine form in the loop variables, block bindings substituted), the reduce
 * loops from the block's reduce iteration variables.  A weight is a
 * function parameter that every call binds to a graph param or const and
 * that the function does not store to.  Runs after flatten (1-D indices).
 */
#include <stdlib.h>
#include <string.h>

#include "ir/arith.h"
#include "ir/target.h"
#include "passes/passes.h"

/* Which weights are worth it (bench/results/pref_s21.txt).  The weight
 * leaves L2 between runs when all the weights the calls read exceed it.
 * A prefetch pays when the weight is not small (MobileNetV2's 576 -> 160,
 * 360 KiB: -23%; 96 -> 576, 216 KiB: -6%) and each panel is re-read a few
 * times: re-read more often (ResNet's layer2, 112 tiles of a 28 x 28 map)
 * the first read is a small part of a panel's time, while each line is
 * prefetched R / 2 times (a step reads 32 floats): +3..14%.  Spread over
 * the first 8 of 28 reads instead of all of them, ResNet-18's layer3 and
 * MobileNetV2's 96 -> 576 on 14 x 14 gain 6-14% instead of 2-6%; over the
 * first 8 of 56 or 112 (layer1, layer2) nothing. */
#define MIN_WEIGHT_OF_L2 16   /* weight >= L2 / 16 */
#define MIN_REUSE 2
#define MAX_REUSE 32
#define MAX_SHARES 8

#define MAX_LOOPS 64
#define MAX_SUBST 128
#define MAX_LETS 64
#define MAX_PLACED 64

typedef struct let_frame {
    const ir_var *var;
    int depth;   /* loops enclosing the let */
} let_frame;

typedef struct pf_ctx {
    ir_module *m;
    ir_buffer **weights;   /* candidate parameters of the function */
    int nweights;
    ir_stmt *loops[MAX_LOOPS];
    int nloops;
    let_frame lets[MAX_LETS];
    int nlets;
    ir_var *from[MAX_SUBST];   /* block iteration variables and their bindings */
    ir_expr *to[MAX_SUBST];
    int nsubst;
    const ir_stmt *block;      /* the innermost enclosing block */
    struct {
        const ir_stmt *loop;
        const ir_buffer *w;
    } placed[MAX_PLACED];
    int nplaced;
    bool overflow;             /* a stack was full: the function is left alone */
    /* what a rule does at each statement walk() visits, before its children
     * (the stacks describe the statement's place) */
    void (*visit)(struct pf_ctx *c, ir_stmt *s);
    void *rule;                /* the rule's own state */
} pf_ctx;

static bool const_bounds(const ir_stmt *l, int64_t *lo, int64_t *hi)
{
    if (!l->lo || !l->hi || l->lo->kind != IR_INT || l->hi->kind != IR_INT ||
        ir_for_step(l) != 1)
        return false;
    *lo = l->lo->ival;
    *hi = l->hi->ival;
    return true;
}

/* Whether loop variable v appears in the binding of one of the block's
 * reduce iteration variables. */
static bool is_reduce_loop(const ir_stmt *block, const ir_var *v)
{
    for (int i = 0; block && i < block->niters; i++)
        if (block->iters[i].kind == IR_ITER_REDUCE &&
            ir_expr_uses_var(block->iters[i].binding, v))
            return true;
    return false;
}

typedef struct scope_ctx {
    const pf_ctx *c;
    int k;      /* the placement loop's index in c->loops */
    bool ok;
} scope_ctx;

/* Whether the variables of an expression are in scope at the top of loop
 * k's body: loops 0..k and lets bound outside loop k. */
static bool scope_visit(const ir_expr *x, void *p)
{
    scope_ctx *s = p;
    if (x->kind != IR_VAR)
        return s->ok;
    bool found = false;
    for (int i = 0; i <= s->k && !found; i++)
        found = s->c->loops[i]->var == x->var;
    for (int i = 0; i < s->c->nlets && !found; i++)
        found = s->c->lets[i].var == x->var && s->c->lets[i].depth <= s->k;
    s->ok &= found;
    return s->ok;
}

static bool already_placed(const pf_ctx *c, const ir_stmt *loop, const ir_buffer *w)
{
    for (int i = 0; i < c->nplaced; i++)
        if (c->placed[i].loop == loop && c->placed[i].w == w)
            return true;
    return false;
}

/* The prefetch for one load of weight w at the current nest, or NULL when
 * the nest is not a panel loop around reuse loops around reduce loops. */
static ir_stmt *panel_prefetch(pf_ctx *c, const ir_expr *ld, int *where)
{
    ir_module *m = c->m;
    const ir_buffer *w = ld->buf;
    if (ld->nargs != 1 || w->ndim != 1 || ir_expr_lanes(ld->args[0]) != 1)
        return NULL;
    ir_expr *x = ir_expr_subst(m, ld->args[0], c->from, c->to, c->nsubst);
    ir_affine af;
    if (!ir_affine_of(x, &af))
        return NULL;
    /* the panel loop: the outermost loop whose panels tile w */
    int P = -1;
    int64_t E = 0, lo, hi;
    for (int i = 0; i < c->nloops && P < 0; i++) {
        int64_t k = ir_affine_coef(&af, c->loops[i]->var);
        if (k > 0 && const_bounds(c->loops[i], &lo, &hi) && lo == 0 && hi >= 2 &&
            hi <= INT64_MAX / k && k * hi == ir_buffer_numel(w)) {
            P = i;
            E = k;
        }
    }
    if (P < 0)
        return NULL;
    /* the placement loop: the innermost reduce loop */
    int K = -1;
    for (int i = c->nloops - 1; i > P && K < 0; i--)
        if (is_reduce_loop(c->block, c->loops[i]->var))
            K = i;
    if (K < 0 || c->loops[K]->for_kind == IR_FOR_VECTORIZED || already_placed(c, c->loops[K], w))
        return NULL;   /* (a vectorized loop holding a prefetch would run as a plain loop) */
    /* the reuse loops between them: rho = their iteration, row-major */
    int64_t R = 1;
    ir_expr *rho = ir_int(m, 0);
    for (int i = P + 1; i < K; i++) {
        const ir_stmt *l = c->loops[i];
        if (is_reduce_loop(c->block, l->var))
            continue;
        if (ir_affine_coef(&af, l->var) != 0 || !const_bounds(l, &lo, &hi))
            return NULL;   /* a loop over other parts of the weight: not this shape */
        if (hi - lo < 2)
            continue;
        if (R > INT32_MAX / (hi - lo))
            return NULL;
        R *= hi - lo;
        rho = ir_binary(m, IR_ADD, ir_binary(m, IR_MUL, rho, ir_int(m, hi - lo)),
                        ir_binary(m, IR_SUB, ir_varref(m, l->var), ir_int(m, lo)));
    }
    if (R < MIN_REUSE || R > MAX_REUSE || E > INT64_MAX / R)
        return NULL;
    /* re-read more than MAX_SHARES times, the first MAX_SHARES reads
     * prefetch a share each (if rho < S), the others nothing */
    int64_t S = R < MAX_SHARES ? R : MAX_SHARES;
    /* the step's offset in its panel: the panel loop at 0, the tile's loops
     * inside the placement loop at their first value */
    ir_var *from[MAX_LOOPS];
    ir_expr *to[MAX_LOOPS];
    int n = 0;
    from[n] = c->loops[P]->var;
    to[n++] = ir_int(m, 0);
    for (int i = K + 1; i < c->nloops; i++) {
        if (!const_bounds(c->loops[i], &lo, &hi))
            return NULL;
        from[n] = c->loops[i]->var;
        to[n++] = ir_int(m, lo);
    }
    ir_expr *off = pass_simplify_expr(m, ir_expr_subst(m, x, from, to, n));
    scope_ctx sc = {c, K, true};
    ir_expr_walk(off, scope_visit, &sc);
    if (!sc.ok)
        return NULL;
    ir_expr *next = ir_binary(m, IR_MUL, ir_binary(m, IR_ADD, ir_varref(m, c->loops[P]->var),
                                                   ir_int(m, 1)), ir_int(m, E));
    ir_expr *share = ir_binary(m, IR_FLOORDIV,
                               ir_binary(m, IR_ADD, ir_binary(m, IR_MUL, rho, ir_int(m, E)), off),
                               ir_int(m, S));
    ir_expr *idx = pass_simplify_expr(m, ir_binary(m, IR_ADD, next, share));
    *where = K;
    ir_stmt *pf = ir_prefetch(m, (ir_buffer *)w, &idx, 1);
    if (S == R)
        return pf;
    return ir_if(m, pass_simplify_expr(m, ir_binary(m, IR_LT, ir_expr_copy(m, rho), ir_int(m, S))),
                 pf, NULL);
}

typedef struct loads_ctx {
    const pf_ctx *c;
    const ir_expr *found[16];
    int n;
} loads_ctx;

static bool weight_load(const ir_expr *x, void *p)
{
    loads_ctx *l = p;
    if (x->kind == IR_LOAD && l->n < 16)
        for (int i = 0; i < l->c->nweights; i++)
            if (x->buf == l->c->weights[i])
                l->found[l->n++] = x;
    return true;
}

static void place_for_store(pf_ctx *c, const ir_stmt *st)
{
    loads_ctx l = {.c = c};
    ir_expr_walk(st->value, weight_load, &l);
    for (int i = 0; i < l.n && c->nplaced < MAX_PLACED; i++) {
        int K;
        ir_stmt *pf = panel_prefetch(c, l.found[i], &K);
        if (!pf)
            continue;
        ir_stmt *loop = c->loops[K];
        loop->body[0] = ir_seq(c->m, (ir_stmt *[]){pf, loop->body[0]}, 2);
        c->placed[c->nplaced].loop = loop;
        c->placed[c->nplaced++].w = l.found[i]->buf;
    }
}

/* Walks a function's statements, keeping the stacks of loops, lets and
 * block bindings, and calls c->visit on each. */
static void walk(pf_ctx *c, ir_stmt *s)
{
    if (!s || c->overflow)
        return;
    c->visit(c, s);
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->nbody; i++)
            walk(c, s->body[i]);
        return;
    case IR_S_FOR:
        if (c->nloops == MAX_LOOPS) {
            c->overflow = true;
            return;
        }
        c->loops[c->nloops++] = s;
        walk(c, s->body[0]);
        c->nloops--;
        return;
    case IR_S_LET:
        if (c->nlets == MAX_LETS) {
            c->overflow = true;
            return;
        }
        c->lets[c->nlets++] = (let_frame){s->var, c->nloops};
        walk(c, s->body[0]);
        c->nlets--;
        return;
    case IR_S_BLOCK: {
        if (c->nsubst + s->niters > MAX_SUBST) {
            c->overflow = true;
            return;
        }
        int n0 = c->nsubst;
        const ir_stmt *b0 = c->block;
        for (int i = 0; i < s->niters; i++) {
            c->from[c->nsubst] = s->iters[i].var;
            c->to[c->nsubst++] = s->iters[i].binding;
        }
        c->block = s;
        walk(c, s->body[0]);   /* not the init: it reads no weight, no stream */
        c->block = b0;
        c->nsubst = n0;
        return;
    }
    case IR_S_ALLOC:
        walk(c, s->body[0]);
        return;
    case IR_S_IF:
        walk(c, s->body[0]);
        walk(c, s->orelse);
        return;
    default:
        return;
    }
}

static void visit_panels(pf_ctx *c, ir_stmt *s)
{
    if (s->kind == IR_S_STORE && c->block)
        place_for_store(c, s);
}

/* The function's weights: parameters of at least min_bytes that every call
 * binds to a graph param or const, never stored to.  (A load function is
 * called by no call: none.) */
static int find_weights(ir_module *m, ir_func *f, int64_t min_bytes, ir_buffer **out, int cap)
{
    int n = 0;
    for (int p = 0; p < f->nparams && n < cap; p++) {
        bool called = false, weight = true;
        for (int i = 0; i < m->graph.ncalls && weight; i++) {
            const ir_graph_call *call = &m->graph.calls[i];
            if (call->fn != f)
                continue;
            called = true;
            const ir_buffer *g = p < call->nargs ? call->args[p] : NULL;
            weight = g && (g->role == IR_BUF_PARAM || g->role == IR_BUF_CONST);
        }
        ir_buffer *b = f->params[p];
        int64_t bytes = ir_buffer_bytes(b);
        if (called && weight && bytes >= min_bytes && !ir_stmt_stores_to(f->body, b))
            out[n++] = b;
    }
    return n;
}

/* The bytes of the graph params and consts that calls read, each once. */
static int64_t weight_bytes(const ir_module *m)
{
    int64_t total = 0;
    for (int b = 0; b < m->graph.nbufs; b++) {
        const ir_buffer *g = m->graph.bufs[b];
        if (g->role != IR_BUF_PARAM && g->role != IR_BUF_CONST)
            continue;
        bool read = false;
        for (int i = 0; i < m->graph.ncalls && !read; i++)
            for (int a = 0; a < m->graph.calls[i].nargs && !read; a++)
                read = m->graph.calls[i].args[a] == g;
        int64_t bytes = ir_buffer_bytes(g);
        if (read && bytes > 0 && total <= INT64_MAX - bytes)
            total += bytes;
    }
    return total;
}

/* ---------------------------------------------------------------- epilogue rows
 *
 * A contraction tile reduces into a local accumulator, then its epilogue
 * reads the tile's part of other tensors (a residual) and writes the result
 * out (in NCHW, a row of the tile's positions per output channel):
 *     for f_o, p ...                       (the tiles)
 *       for c in 0..T { ... }              (the reduction: most of the time)
 *       for f, q: y[f_o * F + f * R + p * Q + q] = tile[..] + res[same]
 * Those rows (32 channels x 14 positions: 32 rows of 56 bytes, 3 KiB apart)
 * are not a stream the hardware's prefetcher follows, and each first touch
 * waits on L3 or memory (a written line is read first too).  The pass
 * spreads their prefetch over the reduction that runs before them: row r of
 * NR at step r * k, k the largest power of two up to T / NR, one prefetch
 * per line of the row:
 *     for c in 0..T {
 *       if floormod(c, k) == 0 && c < k * NR {
 *         prefetch res[f_o * F + floordiv(c, k) * R + p * Q]
 *         prefetch res[f_o * F + floordiv(c, k) * R + p * Q + E - 1]
 *       } ...
 * (bench/results/prefetch_s28.txt: FCN-ResNet50's layer4 1x1 + residual,
 * -11% alone).  A buffer qualifies when the reduction does not touch it,
 * every loop around the tile moves its index (it is read or written once:
 * not a bias every tile re-reads), it is at least an L2, and the epilogue's
 * elements form rows: one loop of step 1 in the index (the row, E elements,
 * at most EPI_MAX_ROW_LINES lines) and at most one other (the rows, NR),
 * and the rows are not whole lines (whole_lines()).
 * Written buffers are prefetched for reading, which on x86 brings the line
 * in before the store needs it just as well (no RFO wait). */
#define LINE_BYTES 64
#define EPI_MAX_ROW_LINES 4
#define MAX_ACCESSES 64

typedef struct access {
    ir_buffer *buf;
    const ir_expr *idx;        /* block bindings substituted */
    int nloops;
    ir_stmt *loops[MAX_LOOPS];
} access;

typedef struct accesses {
    access *a;
    int n;
    int depth;                 /* loops around the statements walked */
} accesses;

static void record(pf_ctx *c, ir_buffer *b, ir_expr *const *idx, int nidx)
{
    accesses *r = c->rule;
    if (b->role != IR_BUF_ARG || nidx != 1)
        return;   /* a local tile stays in L1 */
    if (r->n == MAX_ACCESSES) {
        c->overflow = true;
        return;
    }
    access *a = &r->a[r->n++];
    a->buf = b;
    a->idx = ir_expr_subst(c->m, idx[0], c->from, c->to, c->nsubst);
    a->nloops = c->nloops;
    memcpy(a->loops, c->loops, sizeof a->loops[0] * (size_t)c->nloops);
}

static bool record_load(const ir_expr *x, void *p)
{
    if (x->kind == IR_LOAD)
        record(p, x->buf, x->args, x->nargs);
    return true;
}

static void visit_accesses(pf_ctx *c, ir_stmt *s)
{
    switch (s->kind) {
    case IR_S_STORE:
        record(c, s->buf, s->args, s->nargs);
        for (int i = 0; i < s->nargs; i++)
            ir_expr_walk(s->args[i], record_load, c);
        ir_expr_walk(s->value, record_load, c);
        return;
    case IR_S_IF:
        ir_expr_walk(s->cond, record_load, c);
        return;
    case IR_S_LET:
        ir_expr_walk(s->value, record_load, c);
        return;
    default:
        return;
    }
}

/* The parameters' accesses in stmts[0..n), walked from c's place. */
static bool gather(const pf_ctx *c, ir_stmt *const *stmts, int n, accesses *out)
{
    pf_ctx *g = malloc(sizeof *g);
    if (!g)
        return false;
    *g = *c;
    g->visit = visit_accesses;
    g->rule = out;
    out->n = 0;
    out->depth = c->nloops;
    for (int i = 0; i < n && !g->overflow; i++)
        walk(g, stmts[i]);
    bool ok = !g->overflow;
    free(g);
    return ok;
}

typedef struct rows_shape {
    ir_affine outer;           /* terms of the loops around the tile */
    int64_t base;              /* the constant, the row loops at their first value */
    int64_t E, R, NR;          /* E elements a row, rows R apart, NR of them */
} rows_shape;

/* The rows one access reads or writes: its index is outer + c + the terms
 * of at most two loops inside the epilogue (one of step 1). */
static bool access_rows(const access *a, int depth, rows_shape *sh)
{
    ir_affine af;
    if (ir_expr_lanes(a->idx) != 1 || !ir_affine_of(a->idx, &af))
        return false;
    *sh = (rows_shape){.base = af.c, .E = 1, .R = 0, .NR = 1};
    bool have_row = false, have_rows = false;
    for (int t = 0; t < af.n; t++) {
        int at = -1;
        for (int i = 0; i < a->nloops; i++)
            if (a->loops[i]->var == af.var[t])
                at = i;
        if (at < 0)
            return false;   /* a let */
        if (at < depth) {
            if (!ir_affine_add_var(&sh->outer, af.var[t], af.coef[t]))
                return false;
            continue;
        }
        int64_t lo, hi;
        if (!const_bounds(a->loops[at], &lo, &hi) || hi <= lo || af.coef[t] <= 0)
            return false;
        if (hi - lo == 1) {
            sh->base += af.coef[t] * lo;
            continue;
        }
        if (af.coef[t] == 1 && !have_row) {
            have_row = true;
            sh->E = hi - lo;
        } else if (!have_rows) {
            have_rows = true;
            sh->R = af.coef[t];
            sh->NR = hi - lo;
        } else {
            return false;
        }
        sh->base += af.coef[t] * lo;
    }
    return true;
}

/* Whether every loop around the tile (trip count 2 or more) moves the
 * index: the rows are read or written once in the kernel. */
static bool read_once(const access *a, int depth, const ir_affine *outer)
{
    for (int i = 0; i < depth; i++) {
        int64_t lo, hi;
        const ir_stmt *l = a->loops[i];
        if (ir_affine_coef(outer, l->var) == 0 && !(const_bounds(l, &lo, &hi) && hi - lo < 2))
            return false;
    }
    return true;
}

/* Whether every row is whole lines from a line's start: every term and the
 * row's length multiples of a line (the buffer starts on one).  A row-major
 * matmul's tiles write such rows (32 floats of a row of 3072), which the
 * hardware handles: prefetched, ViT-B/16's QKV and MLP matmuls ran 2-7%
 * slower; rows that share their lines with the next tile's (14 positions
 * of 28, rows of 197 floats) gain. */
static bool whole_lines(const rows_shape *sh, int64_t line)
{
    bool whole = sh->E % line == 0 && sh->R % line == 0 && sh->base % line == 0;
    for (int t = 0; t < sh->outer.n && whole; t++)
        whole = sh->outer.coef[t] % line == 0;
    return whole;
}

/* The prefetch of buffer b's epilogue rows, spread over the reduction
 * loop red (of T iterations from lo), or NULL. */
static ir_stmt *epilogue_prefetch(ir_module *m, const accesses *after, ir_buffer *b,
                                  const ir_stmt *red, int64_t min_bytes)
{
    int64_t esz = ir_dtype_size(b->dtype), lo, hi;
    if (esz <= 0 || esz > LINE_BYTES || ir_buffer_bytes(b) < min_bytes ||
        !const_bounds(red, &lo, &hi))
        return NULL;
    rows_shape sh = {0};
    int n = 0;
    for (int i = 0; i < after->n; i++) {
        const access *a = &after->a[i];
        if (a->buf != b)
            continue;
        rows_shape si;
        if (!access_rows(a, after->depth, &si) || !read_once(a, after->depth, &si.outer))
            return NULL;
        if (n++ && (si.base != sh.base || si.E != sh.E || si.R != sh.R || si.NR != sh.NR ||
                    !ir_affine_same_terms(&si.outer, &sh.outer)))
            return NULL;   /* (several accesses: the same rows only) */
        sh = si;
    }
    int64_t line = LINE_BYTES / esz, T = hi - lo;
    if (!n || sh.E * esz > EPI_MAX_ROW_LINES * LINE_BYTES || sh.NR > T || whole_lines(&sh, line))
        return NULL;
    /* a power of two: the test of each step is a mask (with a floormod by
     * 96 at every step ViT-B/16's matmul tiles ran 13% slower, with a mask
     * 2%) */
    int64_t k = 1;
    while (k * 2 <= T / sh.NR)
        k *= 2;
    /* row floordiv(c - lo, k) at the steps c - lo = 0, k, 2k, ... */
    ir_expr *step = ir_binary(m, IR_SUB, ir_varref(m, red->var), ir_int(m, lo));
    ir_expr *row = k > 1 ? ir_binary(m, IR_FLOORDIV, step, ir_int(m, k)) : step;
    ir_expr *start = ir_binary(m, IR_ADD, ir_affine_expr(m, &sh.outer),
                               ir_binary(m, IR_ADD, ir_int(m, sh.base),
                                         ir_binary(m, IR_MUL, row, ir_int(m, sh.R))));
    ir_stmt *seq = ir_seq_new(m);
    for (int64_t j = 0; j < sh.E; j += line) {
        /* one element in each line of the row, whatever its alignment: a
         * line apart, and the row's last */
        int64_t at = j + line < sh.E ? j : sh.E - 1;
        for (int64_t e = j; e <= at; e += at - j > 0 ? at - j : 1) {
            ir_expr *idx = pass_simplify_expr(m, ir_binary(m, IR_ADD, ir_expr_copy(m, start),
                                                           ir_int(m, e)));
            ir_seq_append(m, seq, ir_prefetch(m, b, &idx, 1));
        }
    }
    ir_expr *cond = NULL;
    if (k > 1)
        cond = ir_binary(m, IR_EQ, ir_binary(m, IR_FLOORMOD, ir_expr_copy(m, step), ir_int(m, k)),
                         ir_int(m, 0));
    if (k * sh.NR < T) {
        ir_expr *in = ir_binary(m, IR_LT, ir_expr_copy(m, step), ir_int(m, k * sh.NR));
        cond = cond ? ir_binary(m, IR_AND, cond, in) : in;
    }
    return cond ? ir_if(m, pass_simplify_expr(m, cond), seq, NULL) : seq;
}

/* Whether loop l reduces: a block inside it binds a reduce iteration
 * variable to an expression of l's variable. */
typedef struct reduces_ctx {
    const ir_var *v;
    bool found;
} reduces_ctx;

static bool reduces_visit(const ir_stmt *s, void *p)
{
    reduces_ctx *r = p;
    if (s->kind == IR_S_BLOCK)
        r->found |= is_reduce_loop(s, r->v);
    return !r->found;
}

static bool reduces(const ir_stmt *l)
{
    reduces_ctx r = {l->var, false};
    ir_stmt_walk(l->body[0], reduces_visit, NULL, &r);
    return r.found;
}

typedef struct epi_rule {
    int64_t min_bytes;
} epi_rule;

/* At a sequence: a reduction loop followed by the statements that use its
 * result (the last reduction loop of the sequence). */
static void visit_epilogues(pf_ctx *c, ir_stmt *s)
{
    if (s->kind != IR_S_SEQ)
        return;
    const epi_rule *rule = c->rule;
    int r = -1;
    for (int i = 0; i + 1 < s->nbody; i++)
        if (s->body[i]->kind == IR_S_FOR && s->body[i]->for_kind == IR_FOR_SERIAL &&
            reduces(s->body[i]))
            r = i;
    if (r < 0)
        return;
    ir_stmt *red = s->body[r];
    accesses in = {.a = calloc(MAX_ACCESSES, sizeof(access))};
    accesses after = {.a = calloc(MAX_ACCESSES, sizeof(access))};
    if (in.a && after.a && gather(c, &red, 1, &in) &&
        gather(c, s->body + r + 1, s->nbody - r - 1, &after)) {
        for (int i = 0; i < after.n; i++) {
            ir_buffer *b = after.a[i].buf;
            bool seen = false;
            for (int j = 0; j < i && !seen; j++)
                seen = after.a[j].buf == b;
            for (int j = 0; j < in.n && !seen; j++)
                seen = in.a[j].buf == b;   /* the reduction's own buffer */
            ir_stmt *pf = seen ? NULL : epilogue_prefetch(c->m, &after, b, red, rule->min_bytes);
            if (pf)
                red->body[0] = ir_seq(c->m, (ir_stmt *[]){pf, red->body[0]}, 2);
        }
    }
    free(in.a);
    free(after.a);
}

bool pass_prefetch(ir_module *m, diag *d)
{
    (void)d;
    cg_target t;
    pass_target_or_native(&t);
    int64_t l2 = t.l2 > 0 ? t.l2 : 1 << 20;
    epi_rule epi = {.min_bytes = l2};
    for (int fi = 0; fi < m->nfuncs; fi++) {
        pf_ctx c = {.m = m, .visit = visit_epilogues, .rule = &epi};
        walk(&c, m->funcs[fi]->body);
    }
    if (weight_bytes(m) <= l2)
        return true;   /* the weights stay in L2 from one run to the next */
    for (int fi = 0; fi < m->nfuncs; fi++) {
        ir_func *f = m->funcs[fi];
        ir_buffer *weights[16];
        if (!f->body)
            continue;
        pf_ctx c = {.m = m, .weights = weights, .visit = visit_panels};
        c.nweights = find_weights(m, f, l2 / MIN_WEIGHT_OF_L2, weights, 16);
        if (c.nweights)
            walk(&c, f->body);
    }
    return true;
}
