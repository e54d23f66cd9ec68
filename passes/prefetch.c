/* passes/prefetch.c — prefetch the next weight panel of a contraction
 * whose weights do not stay in L2 from one run to the next.
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

static void walk(pf_ctx *c, ir_stmt *s)
{
    if (!s || c->overflow)
        return;
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
        walk(c, s->body[0]);   /* not the init: it reads no weight */
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
    case IR_S_STORE:
        if (c->block)
            place_for_store(c, s);
        return;
    default:
        return;
    }
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

bool pass_prefetch(ir_module *m, diag *d)
{
    (void)d;
    cg_target t;
    pass_target_or_native(&t);
    int64_t l2 = t.l2 > 0 ? t.l2 : 1 << 20;
    if (weight_bytes(m) <= l2)
        return true;   /* the weights stay in L2 from one run to the next */
    for (int fi = 0; fi < m->nfuncs; fi++) {
        ir_func *f = m->funcs[fi];
        ir_buffer *weights[16];
        if (!f->body)
            continue;
        pf_ctx c = {.m = m, .weights = weights};
        c.nweights = find_weights(m, f, l2 / MIN_WEIGHT_OF_L2, weights, 16);
        if (c.nweights)
            walk(&c, f->body);
    }
    return true;
}
