/* passes/analyze.c — static cost analysis (see analyze.h and doc/profile.md).
 *
 * One walk per function keeps the chain of enclosing constructs (loops,
 * lets, if branches, blocks) of the current statement.  Every site gets its
 * cost per execution from its expressions and its execution count from that
 * chain by an exact counter: loops that nothing depends on multiply, loops
 * that a condition or another loop's bounds depend on are enumerated.
 */
#include "passes/analyze.h"

#include "ir/vec.h"

#include <gmp.h>
#include <stdlib.h>
#include <string.h>

/* Loop iterations one count may visit before it is declared dynamic: large
 * enough for the padding conditions of any real convolution (they only
 * involve the output rows and the kernel rows), small enough to stay well
 * under a second. */
#define DEFAULT_BUDGET (UINT64_C(1) << 22)

/* Enumerated loops are tracked in 64-bit masks. */
#define MAX_ENUM 64

/* Select arms nest at most this deep in the accounting; deeper arms are
 * charged to the part at this depth, marked approximate. */
#define MAX_PATH 16

/* ---------------------------------------------------------------- chains and conditions */

/* How the current statement sits inside an enclosing construct. */
typedef enum {
    FR_FOR,     /* in the body of a FOR */
    FR_LET,     /* in the body of a LET */
    FR_THEN,    /* in the then-branch of an IF */
    FR_ELSE,    /* in the else-branch of an IF */
    FR_BLOCK,   /* in the body of a BLOCK */
    FR_INIT,    /* in the init of a BLOCK (runs when every REDUCE var is 0) */
} frame_kind;

typedef struct frame {
    const ir_stmt *s;
    frame_kind kind;
} frame;

/* A condition that must hold: e == want, or (when zero is set) zero == 0. */
typedef struct cond {
    const ir_expr *e;
    bool want;
    const ir_var *zero;
} cond;

/* ---------------------------------------------------------------- exact counting */

/* A variable defined inside the region being counted. */
typedef struct svar {
    const ir_var *v;
    const ir_expr *def;     /* block binding or let value; NULL for a loop variable */
    int frame;              /* the defining frame */
    bool relevant;          /* some condition or enumerated bound depends on it */
    bool bound;             /* loop variable currently has a value */
    int64_t val;
    int busy;               /* recursion guard while evaluating def */
    bool have_mask;
    uint64_t mask;          /* enumerated loops it depends on */
} svar;

typedef struct solver {
    const frame *fr;
    int j, k;               /* the region: frames [j, k) */
    svar *vars;
    int nvars;
    cond *conds;
    int nconds, capconds;
    bool *enumerated;       /* per frame of the region (index - j) */
    int enumf[MAX_ENUM];    /* frame index of the enumerated loops, outer first */
    int nenum;
    int order[MAX_ENUM];    /* the loops of the component being enumerated, outer first */
    int norder;
    int *level;             /* per condition: depth in `order` at which it is decided
                               (-1: no loop; -2: another component) */
    uint64_t budget, steps;
    bool fail;
    uint64_t leaves;
} solver;

static svar *find_svar(solver *sv, const ir_var *v)
{
    for (int i = 0; i < sv->nvars; i++)
        if (sv->vars[i].v == v)
            return &sv->vars[i];
    return NULL;
}

/* Integer-valued and free of memory: the counter can evaluate it. */
static bool evaluable(const ir_expr *e)
{
    if (!e || ir_dtype_is_float(e->dtype))
        return false;
    switch (e->kind) {
    case IR_INT:
    case IR_VAR:
        return true;
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_FLOORDIV: case IR_FLOORMOD:
    case IR_MIN: case IR_MAX: case IR_AND: case IR_OR:
        return evaluable(e->a) && evaluable(e->b);
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
        return evaluable(e->a) && evaluable(e->b);
    case IR_NEG: case IR_NOT: case IR_CAST:
        return evaluable(e->a);
    case IR_SELECT:
        return evaluable(e->c) && evaluable(e->a) && evaluable(e->b);
    default:
        return false;
    }
}

static void mark_var(solver *sv, const ir_var *v);

/* Marks every variable of e relevant; fails for anything it cannot evaluate. */
static void mark_expr(solver *sv, const ir_expr *e)
{
    if (!e || sv->fail)
        return;
    if (!evaluable(e)) {
        sv->fail = true;
        return;
    }
    if (e->kind == IR_VAR) {
        mark_var(sv, e->var);
        return;
    }
    mark_expr(sv, e->a);
    mark_expr(sv, e->b);
    mark_expr(sv, e->c);
}

static void mark_loop(solver *sv, int f)
{
    if (sv->enumerated[f - sv->j])
        return;
    sv->enumerated[f - sv->j] = true;
    mark_expr(sv, sv->fr[f].s->lo);
    mark_expr(sv, sv->fr[f].s->hi);
}

static void mark_var(solver *sv, const ir_var *v)
{
    svar *x = find_svar(sv, v);
    if (!x) {               /* defined outside the region: its count is not self-contained */
        sv->fail = true;
        return;
    }
    if (x->relevant)
        return;
    x->relevant = true;
    if (x->def)
        mark_expr(sv, x->def);
    else
        mark_loop(sv, x->frame);
}

static uint64_t expr_mask(solver *sv, const ir_expr *e);

static uint64_t var_mask(solver *sv, const ir_var *v)
{
    svar *x = find_svar(sv, v);
    if (!x)
        return 0;
    if (x->have_mask)
        return x->mask;
    uint64_t m = 0;
    if (x->def) {
        m = expr_mask(sv, x->def);
    } else {
        for (int i = 0; i < sv->nenum; i++)
            if (sv->enumf[i] == x->frame)
                m = UINT64_C(1) << i;
    }
    x->have_mask = true;
    x->mask = m;
    return m;
}

static uint64_t expr_mask(solver *sv, const ir_expr *e)
{
    if (!e)
        return 0;
    if (e->kind == IR_VAR)
        return var_mask(sv, e->var);
    return expr_mask(sv, e->a) | expr_mask(sv, e->b) | expr_mask(sv, e->c);
}

static int top_bit(uint64_t m)
{
    int b = -1;
    while (m) {
        b++;
        m >>= 1;
    }
    return b;
}

static bool wrap_to(ir_dtype t, int64_t v, int64_t *out)
{
    *out = ir_int_wrap(t, v);
    return true;
}

static bool ev(solver *sv, const ir_expr *e, int64_t *out);

static bool ev_var(solver *sv, const ir_var *v, int64_t *out)
{
    svar *x = find_svar(sv, v);
    if (!x)
        return false;
    if (!x->def) {
        if (!x->bound)
            return false;
        *out = x->val;
        return true;
    }
    if (x->busy)
        return false;
    x->busy = 1;
    bool ok = ev(sv, x->def, out);
    x->busy = 0;
    return ok;
}

static int64_t floordiv64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Evaluates an evaluable expression; false on overflow, a zero divisor, or
 * an unbound variable. */
static bool ev(solver *sv, const ir_expr *e, int64_t *out)
{
    int64_t a = 0, b = 0, r = 0;
    switch (e->kind) {
    case IR_INT:
        *out = e->ival;
        return true;
    case IR_VAR:
        return ev_var(sv, e->var, out);
    case IR_SELECT:
        if (!ev(sv, e->c, &a))
            return false;
        return ev(sv, a ? e->a : e->b, out);
    case IR_NEG:
        if (!ev(sv, e->a, &a) || __builtin_sub_overflow((int64_t)0, a, &r))
            return false;
        return wrap_to(e->dtype, r, out);
    case IR_NOT:
        if (!ev(sv, e->a, &a))
            return false;
        *out = !a;
        return true;
    case IR_CAST:
        if (!ev(sv, e->a, &a))
            return false;
        return wrap_to(e->dtype, a, out);
    default:
        break;
    }
    if (!ev(sv, e->a, &a) || !ev(sv, e->b, &b))
        return false;
    switch (e->kind) {
    case IR_ADD: if (__builtin_add_overflow(a, b, &r)) return false; break;
    case IR_SUB: if (__builtin_sub_overflow(a, b, &r)) return false; break;
    case IR_MUL: if (__builtin_mul_overflow(a, b, &r)) return false; break;
    case IR_FLOORDIV:
        if (b == 0 || (a == INT64_MIN && b == -1))
            return false;
        r = floordiv64(a, b);
        break;
    case IR_FLOORMOD:
        if (b == 0 || (a == INT64_MIN && b == -1))
            return false;
        r = a - floordiv64(a, b) * b;
        break;
    case IR_MIN: r = a < b ? a : b; break;
    case IR_MAX: r = a > b ? a : b; break;
    case IR_EQ: r = a == b; break;
    case IR_NE: r = a != b; break;
    case IR_LT: r = a < b; break;
    case IR_LE: r = a <= b; break;
    case IR_GT: r = a > b; break;
    case IR_GE: r = a >= b; break;
    case IR_AND: r = a && b; break;
    case IR_OR: r = a || b; break;
    default: return false;
    }
    return wrap_to(e->dtype, r, out);
}

static bool cond_holds(solver *sv, const cond *c, bool *holds)
{
    int64_t v;
    if (c->zero) {
        if (!ev_var(sv, c->zero, &v))
            return false;
        *holds = v == 0;
        return true;
    }
    if (!ev(sv, c->e, &v))
        return false;
    *holds = (v != 0) == c->want;
    return true;
}

/* The conditions decided at enumeration depth d hold? Sets fail on error. */
static bool conds_at(solver *sv, int d)
{
    for (int i = 0; i < sv->nconds; i++) {
        if (sv->level[i] != d)
            continue;
        bool h;
        if (!cond_holds(sv, &sv->conds[i], &h)) {
            sv->fail = true;
            return false;
        }
        if (!h)
            return false;
    }
    return true;
}

static bool any_cond_at_or_below(const solver *sv, int d)
{
    for (int i = 0; i < sv->nconds; i++)
        if (sv->level[i] >= d)
            return true;
    return false;
}

static void enumerate(solver *sv, int d)
{
    if (sv->fail)
        return;
    if (d == sv->norder) {
        sv->leaves++;
        return;
    }
    const ir_stmt *s = sv->fr[sv->order[d]].s;
    int64_t lo, hi;
    if (!ev(sv, s->lo, &lo) || !ev(sv, s->hi, &hi)) {
        sv->fail = true;
        return;
    }
    if (hi <= lo)
        return;
    svar *x = find_svar(sv, s->var);
    /* The innermost loop that no condition looks at only multiplies. */
    if (d == sv->norder - 1 && !any_cond_at_or_below(sv, d)) {
        uint64_t n = (uint64_t)hi - (uint64_t)lo;
        sv->steps += 1;
        if (__builtin_add_overflow(sv->leaves, n, &sv->leaves))
            sv->fail = true;
        return;
    }
    for (int64_t v = lo; v < hi && !sv->fail; v++) {
        if (++sv->steps > sv->budget) {
            sv->fail = true;
            return;
        }
        x->bound = true;
        x->val = v;
        if (conds_at(sv, d))
            enumerate(sv, d + 1);
    }
    x->bound = false;
}

static void add_svar(solver *sv, const ir_var *v, const ir_expr *def, int f)
{
    svar *x = &sv->vars[sv->nvars++];
    memset(x, 0, sizeof *x);
    x->v = v;
    x->def = def;
    x->frame = f;
}

/* Adds a condition; a && b that must hold becomes two conditions, so each
 * is decided as soon as its own variables are bound. */
static void add_cond(solver *sv, cond c)
{
    if (!c.zero && c.want && c.e && c.e->kind == IR_AND) {
        add_cond(sv, (cond){c.e->a, true, NULL});
        add_cond(sv, (cond){c.e->b, true, NULL});
        return;
    }
    int cap = sv->capconds;   /* conds and level grow together */
    cond *np = ir_vec_reserve(sv->conds, sv->nconds, &cap, sizeof *np);
    if (np)
        sv->conds = np;
    int *nl = np ? ir_vec_reserve(sv->level, sv->nconds, &sv->capconds, sizeof *nl) : NULL;
    if (!nl) {
        sv->fail = true;
        return;
    }
    sv->level = nl;
    sv->conds[sv->nconds++] = c;
}

static int uf_find(int *parent, int i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

static void uf_union_mask(int *parent, uint64_t mask)
{
    int first = -1;
    for (int b = 0; b < MAX_ENUM; b++) {
        if (!(mask >> b & 1))
            continue;
        if (first < 0)
            first = uf_find(parent, b);
        else
            parent[uf_find(parent, b)] = first;
    }
}

static uint64_t cond_mask(solver *sv, const cond *c)
{
    return c->zero ? var_mask(sv, c->zero) : expr_mask(sv, c->e);
}

/* Enumerates each group of loops that conditions (or loop bounds) tie
 * together on its own and multiplies the group counts: a padded
 * convolution's row and column conditions are independent, so (p, r) and
 * (q, s) are counted apart instead of jointly. */
static void count_components(solver *sv)
{
    int parent[MAX_ENUM];
    uint64_t lmask[MAX_ENUM];
    for (int i = 0; i < sv->nenum; i++) {
        parent[i] = i;
        const ir_stmt *s = sv->fr[sv->enumf[i]].s;
        lmask[i] = expr_mask(sv, s->lo) | expr_mask(sv, s->hi) | UINT64_C(1) << i;
    }
    for (int i = 0; i < sv->nenum; i++)
        uf_union_mask(parent, lmask[i]);
    for (int c = 0; c < sv->nconds; c++)
        uf_union_mask(parent, cond_mask(sv, &sv->conds[c]));

    /* Conditions on no enumerated loop are decided once. */
    for (int c = 0; c < sv->nconds; c++)
        sv->level[c] = cond_mask(sv, &sv->conds[c]) ? -2 : -1;
    sv->norder = 0;
    if (!conds_at(sv, -1) || sv->fail) {
        sv->leaves = 0;
        return;
    }
    uint64_t total = 1;
    for (int r = 0; r < sv->nenum && !sv->fail; r++) {
        if (uf_find(parent, r) != r)
            continue;
        int pos[MAX_ENUM];
        sv->norder = 0;
        for (int i = 0; i < sv->nenum; i++) {
            pos[i] = -1;
            if (uf_find(parent, i) == r) {
                pos[i] = sv->norder;
                sv->order[sv->norder++] = sv->enumf[i];
            }
        }
        for (int c = 0; c < sv->nconds; c++) {
            uint64_t m = cond_mask(sv, &sv->conds[c]);
            if (!m || uf_find(parent, top_bit(m)) != r) {
                sv->level[c] = m ? -2 : -3;   /* -3: already decided above */
                continue;
            }
            int lv = -1;
            for (int b = 0; b < sv->nenum; b++)
                if ((m >> b & 1) && pos[b] > lv)
                    lv = pos[b];
            sv->level[c] = lv;
        }
        sv->leaves = 0;
        enumerate(sv, 0);
        if (__builtin_mul_overflow(total, sv->leaves, &total))
            sv->fail = true;
    }
    sv->leaves = total;
}

/* Counts the executions of a statement at the end of fr[j..k), per
 * execution of fr[j]'s statement, when extra[] also hold.  Returns false
 * when the count depends on anything outside the region, on memory, or
 * needs more than `budget` steps. */
static bool solve(const frame *fr, int j, int k, const cond *extra, int nextra, uint64_t budget,
                  mpz_t out)
{
    int nv = 0;
    for (int i = j; i < k; i++) {
        const ir_stmt *s = fr[i].s;
        if (fr[i].kind == FR_FOR || fr[i].kind == FR_LET)
            nv++;
        else if (fr[i].kind == FR_BLOCK || fr[i].kind == FR_INIT)
            nv += s->niters;
    }
    solver sv = {.fr = fr, .j = j, .k = k, .budget = budget};
    sv.vars = malloc(sizeof *sv.vars * (size_t)(nv + 1));
    sv.enumerated = calloc((size_t)(k - j + 1), sizeof *sv.enumerated);
    bool ok = sv.vars && sv.enumerated;
    if (!ok)
        goto done;

    for (int i = j; i < k; i++) {
        const ir_stmt *s = fr[i].s;
        switch (fr[i].kind) {
        case FR_FOR: add_svar(&sv, s->var, NULL, i); break;
        case FR_LET: add_svar(&sv, s->var, s->value, i); break;
        case FR_THEN: add_cond(&sv, (cond){s->cond, true, NULL}); break;
        case FR_ELSE: add_cond(&sv, (cond){s->cond, false, NULL}); break;
        case FR_BLOCK:
        case FR_INIT:
            for (int t = 0; t < s->niters; t++) {
                add_svar(&sv, s->iters[t].var, s->iters[t].binding, i);
                if (fr[i].kind == FR_INIT && s->iters[t].kind == IR_ITER_REDUCE)
                    add_cond(&sv, (cond){NULL, true, s->iters[t].var});
            }
            break;
        }
    }
    for (int i = 0; i < nextra; i++)
        add_cond(&sv, extra[i]);

    /* What the count depends on. */
    if (sv.fail) {
        ok = false;
        goto done;
    }
    for (int i = 0; i < sv.nconds && !sv.fail; i++) {
        if (sv.conds[i].zero)
            mark_var(&sv, sv.conds[i].zero);
        else
            mark_expr(&sv, sv.conds[i].e);
    }
    for (int i = j; i < k && !sv.fail; i++)
        if (fr[i].kind == FR_FOR && !(fr[i].s->lo->kind == IR_INT && fr[i].s->hi->kind == IR_INT))
            mark_loop(&sv, i);
    if (sv.fail) {
        ok = false;
        goto done;
    }

    mpz_t factor;
    mpz_init_set_ui(factor, 1);
    for (int i = j; i < k; i++) {
        if (fr[i].kind != FR_FOR)
            continue;
        if (sv.enumerated[i - j]) {
            if (sv.nenum == MAX_ENUM) {
                sv.fail = true;
                break;
            }
            sv.enumf[sv.nenum++] = i;
        } else {
            int64_t lo = fr[i].s->lo->ival, hi = fr[i].s->hi->ival;
            if (hi <= lo) {
                mpz_set_ui(factor, 0);
            } else {
                mpz_t t;
                mpz_init(t);
                mpz_set_si(t, hi);
                mpz_t l;
                mpz_init(l);
                mpz_set_si(l, lo);
                mpz_sub(t, t, l);
                mpz_mul(factor, factor, t);
                mpz_clear(t);
                mpz_clear(l);
            }
        }
    }
    if (!sv.fail)
        count_components(&sv);
    if (!sv.fail) {
        mpz_set_ui(out, 0);
        mpz_t leaves;
        mpz_init(leaves);
        mpz_import(leaves, 1, 1, sizeof sv.leaves, 0, 0, &sv.leaves);
        mpz_mul(out, leaves, factor);
        mpz_clear(leaves);
    }
    ok = !sv.fail;
    mpz_clear(factor);
done:
    free(sv.vars);
    free(sv.conds);
    free(sv.level);
    free(sv.enumerated);
    return ok;
}

/* ---------------------------------------------------------------- uint64 and GMP */

static bool mpz_to_u64(const mpz_t z, uint64_t *out)
{
    if (mpz_sgn(z) < 0 || mpz_sizeinbase(z, 2) > 64)
        return false;
    uint64_t v = 0;
    size_t n = 0;
    mpz_export(&v, &n, -1, sizeof v, 0, 0, z);
    *out = n ? v : 0;
    return true;
}

static void mpz_set_u64(mpz_t z, uint64_t v)
{
    mpz_import(z, 1, -1, sizeof v, 0, 0, &v);
}

/* z += a * b */
static void mpz_addmul_u64(mpz_t z, uint64_t a, uint64_t b)
{
    mpz_t t;
    mpz_init(t);
    mpz_set_u64(t, a);
    mpz_t u;
    mpz_init(u);
    mpz_set_u64(u, b);
    mpz_addmul(z, t, u);
    mpz_clear(t);
    mpz_clear(u);
}

/* ---------------------------------------------------------------- the walk */

/* A part of a site while it is built: its select path and costs. */
typedef struct tpart {
    cond path[MAX_PATH];
    int npath;
    bool approx;
    uint64_t flops;
    uint64_t *loads;
} tpart;

typedef struct walker {
    pass_stats *st;
    const pass_analyze_options *o;
    diag *d;
    pass_funcinfo *fi;
    frame *fr;
    int nfr, capfr;
    pass_site *sites;          /* the module's sites (malloc'ed while growing) */
    int nsites, capsites;
    int64_t *count_ids;        /* ids of tec_prof_count calls in the current function */
    int ncount, capcount;
    tpart *parts;              /* parts of the site being built */
    int nparts, capparts;
    bool failed;
} walker;


/* Room for one more element in arr: false (arr unchanged) when out of memory. */
#define GROW(arr, n, cap) grow_to((void **)&(arr), ir_vec_reserve((arr), (n), &(cap), sizeof *(arr)))

static bool grow_to(void **arr, void *p)
{
    if (p)
        *arr = p;
    return p != NULL;
}

static void oom(walker *w)
{
    if (!w->failed)
        diag_error(w->d, diag_noloc(), "out of memory in the cost analysis");
    w->failed = true;
}

static int buf_index(const pass_funcinfo *fi, const ir_buffer *b)
{
    for (int i = 0; i < fi->nbufs; i++)
        if (fi->bufs[i].buf == b)
            return i;
    return -1;
}

static uint64_t buffer_bytes(const ir_buffer *b)
{
    mpz_t z;
    mpz_init_set_ui(z, (unsigned long)ir_dtype_size(b->dtype));
    for (int i = 0; i < b->ndim; i++) {
        mpz_t e;
        mpz_init(e);
        mpz_set_si(e, b->shape[i]);
        mpz_mul(z, z, e);
        mpz_clear(e);
    }
    uint64_t v = 0;
    if (!mpz_to_u64(z, &v))
        v = UINT64_MAX;
    mpz_clear(z);
    return v;
}

static bool path_equal(const cond *a, int na, const cond *b, int nb)
{
    if (na != nb)
        return false;
    for (int i = 0; i < na; i++)
        if (a[i].e != b[i].e || a[i].want != b[i].want)
            return false;
    return true;
}

static tpart *part_for(walker *w, const cond *path, int npath)
{
    bool approx = npath > MAX_PATH;
    if (approx)
        npath = MAX_PATH;
    for (int i = 0; i < w->nparts; i++)
        if (path_equal(w->parts[i].path, w->parts[i].npath, path, npath)) {
            w->parts[i].approx |= approx;
            return &w->parts[i];
        }
    if (!GROW(w->parts, w->nparts, w->capparts)) {
        oom(w);
        return NULL;
    }
    tpart *p = &w->parts[w->nparts];
    memset(p, 0, sizeof *p);
    p->loads = ir_alloc(w->st->arena, sizeof *p->loads * (size_t)(w->fi->nbufs + 1));
    memcpy(p->path, path, sizeof *path * (size_t)npath);
    p->npath = npath;
    p->approx = approx;
    w->nparts++;
    return p;
}

static bool counts_as_flop(const ir_expr *e)
{
    if (!ir_dtype_is_float(e->dtype))
        return false;
    switch (e->kind) {
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV:
    case IR_MIN: case IR_MAX: case IR_NEG:
        return true;
    case IR_CALL:
        return (unsigned)e->fn < IR_NINTRINSICS && ir_intrin_class(e->fn) == 'm';
    default:
        return false;
    }
}

/* Charges e's loads and FLOPs to the part of its select path. */
static void cost_expr(walker *w, const ir_expr *e, cond *path, int npath)
{
    if (!e || w->failed)
        return;
    tpart *p = part_for(w, path, npath);
    if (!p)
        return;
    if (counts_as_flop(e))
        p->flops++;
    switch (ir_expr_kind_class(e->kind)) {
    case 'l': {
        int bi = buf_index(w->fi, e->buf);
        if (bi < 0) {
            diag_internal(w->d, "analyze", "in @%s: load of buffer '%s', which is neither a "
                          "parameter nor an alloc", w->fi->fn->name, e->buf ? e->buf->name : "?");
            w->failed = true;
            return;
        }
        p->loads[bi]++;
        for (int i = 0; i < e->nargs; i++)
            cost_expr(w, e->args[i], path, npath);
        return;
    }
    case 's': {
        cost_expr(w, e->c, path, npath);
        cond sub[MAX_PATH + 1];
        int n = npath < MAX_PATH ? npath : MAX_PATH;
        memcpy(sub, path, sizeof *path * (size_t)n);
        sub[n] = (cond){e->c, true, NULL};
        cost_expr(w, e->a, sub, npath + 1);
        sub[n].want = false;
        cost_expr(w, e->b, sub, npath + 1);
        return;
    }
    case 'i':
        for (int i = 0; i < e->nargs; i++)
            cost_expr(w, e->args[i], path, npath);
        return;
    default:
        cost_expr(w, e->a, path, npath);
        cost_expr(w, e->b, path, npath);
        cost_expr(w, e->c, path, npath);
        return;
    }
}

static bool has_work_expr(const ir_expr *e, void *ctx)
{
    bool *found = ctx;
    if (e->kind == IR_LOAD || counts_as_flop(e))
        *found = true;
    return !*found;
}

static bool has_work(const ir_expr *e)
{
    bool found = false;
    if (e)
        ir_expr_walk(e, has_work_expr, &found);
    return found;
}

/* ---------------------------------------------------------------- MACs */

static const ir_expr *strip_cast(const ir_expr *e)
{
    while (e && e->kind == IR_CAST)
        e = e->a;
    return e;
}

static bool is_accumulator(const ir_expr *e, const ir_stmt *store)
{
    e = strip_cast(e);
    if (!e || e->kind != IR_LOAD || e->buf != store->buf || e->nargs != store->nargs)
        return false;
    for (int i = 0; i < e->nargs; i++)
        if (!ir_expr_equal(e->args[i], store->args[i]))
            return false;
    return true;
}

/* X[i] = X[i] + a*b (either order, casts allowed, also X[i] - a*b) with a
 * and b different expressions: the product, or NULL.  A sum of squares
 * (X[i] + d*d, a variance) is not a multiply-accumulate in the MAC
 * convention of doc/profile.md: PyTorch-side counters count the products
 * of convolutions, linear layers and matmuls, never a normalization's
 * statistics. */
static const ir_expr *mac_product(const ir_stmt *store)
{
    const ir_expr *v = strip_cast(store->value);
    if (!v)
        return NULL;
    const ir_expr *p = NULL;
    if (v->kind == IR_ADD) {
        if (is_accumulator(v->a, store))
            p = v->b;
        else if (is_accumulator(v->b, store))
            p = v->a;
    } else if (v->kind == IR_SUB && is_accumulator(v->a, store)) {
        p = v->b;
    }
    p = strip_cast(p);
    return p && p->kind == IR_MUL && !ir_expr_equal(p->a, p->b) ? p : NULL;
}

static int innermost_block(const walker *w)
{
    for (int i = w->nfr - 1; i >= 0; i--)
        if (w->fr[i].kind == FR_BLOCK || w->fr[i].kind == FR_INIT)
            return i;
    return -1;
}

typedef struct uses_ctx {
    const ir_var *v;
    bool found;
} uses_ctx;

static bool find_first_load(const ir_expr *e, void *ctx)
{
    const ir_expr **first = ctx;
    if (!*first && e->kind == IR_LOAD)
        *first = e;
    return !*first;
}

/* Is the store inside a reduction?  Inside a block: one of its iter vars is
 * REDUCE.  Outside blocks: some enclosing loop variable is not used by the
 * stored indices. */
static bool in_reduction(const walker *w, const ir_stmt *store)
{
    int b = innermost_block(w);
    if (b >= 0) {
        if (w->fr[b].kind != FR_BLOCK)
            return false;
        const ir_stmt *blk = w->fr[b].s;
        for (int i = 0; i < blk->niters; i++)
            if (blk->iters[i].kind == IR_ITER_REDUCE)
                return true;
        return false;
    }
    for (int i = 0; i < w->nfr; i++) {
        if (w->fr[i].kind != FR_FOR)
            continue;
        bool used = false;
        for (int a = 0; a < store->nargs && !used; a++)
            used = ir_expr_uses_var(store->args[a], w->fr[i].s->var);
        if (!used)
            return true;
    }
    return false;
}

/* A local buffer that a schedule staged (cache_read's packed operand,
 * cache_write's tile, pad's bordered copy) stands for the buffer it is a
 * copy of: the block that fills or writes it back is one store between it
 * and that buffer (possibly under a select or an if). */
typedef struct staging_ctx {
    const ir_buffer *local;
    const ir_stmt *copy;
    const ir_expr *load;
} staging_ctx;

static const ir_expr *copied_load(const ir_expr *x)
{
    if (x && x->kind == IR_SELECT)
        x = x->a;
    return x && x->kind == IR_LOAD ? x : NULL;
}

static bool staging_visit(const ir_stmt *s, void *p)
{
    staging_ctx *o = p;
    if (o->copy || s->kind != IR_S_STORE)
        return !o->copy;
    const ir_expr *ld = copied_load(s->value);
    if (ld && ((s->buf == o->local && ld->buf->role != IR_BUF_LOCAL) ||
               (ld->buf == o->local && s->buf->role != IR_BUF_LOCAL))) {
        o->copy = s;
        o->load = ld;
    }
    return !o->copy;
}

const ir_stmt *pass_staging_copy(const ir_stmt *body, const ir_buffer *local,
                                 const ir_expr **load)
{
    staging_ctx o = {local, NULL, NULL};
    if (body && local && local->role == IR_BUF_LOCAL)
        ir_stmt_walk(body, staging_visit, NULL, &o);
    if (load)
        *load = o.load;
    return o.copy;
}

static int origin_index(const walker *w, const ir_buffer *b)
{
    const ir_expr *ld;
    const ir_stmt *copy = pass_staging_copy(w->fi->fn->body, b, &ld);
    if (!copy)
        return buf_index(w->fi, b);
    return buf_index(w->fi, copy->buf == b ? ld->buf : copy->buf);
}

static const ir_buffer *first_load(const ir_expr *e)
{
    const ir_expr *l = NULL;
    ir_expr_walk(e, find_first_load, &l);
    return l ? l->buf : NULL;
}

static void gemm_of(walker *w, const ir_stmt *store, const ir_expr *prod, pass_gemm *g)
{
    memset(g, 0, sizeof *g);
    g->a_buf = g->b_buf = g->out_buf = -1;
    int b = innermost_block(w);
    if (b < 0 || w->fr[b].kind != FR_BLOCK)
        return;
    const ir_stmt *blk = w->fr[b].s;
    const ir_expr *fa = strip_cast(prod->a), *fb = strip_cast(prod->b);
    mpz_t dims[4];   /* batch, m, n, k */
    for (int i = 0; i < 4; i++)
        mpz_init_set_ui(dims[i], 1);
    for (int i = 0; i < blk->niters; i++) {
        const ir_itervar *it = &blk->iters[i];
        bool in_a = ir_expr_uses_var(fa, it->var), in_b = ir_expr_uses_var(fb, it->var);
        int slot = it->kind == IR_ITER_REDUCE ? 3 : in_a && !in_b ? 1 : in_b && !in_a ? 2 : 0;
        mpz_t e;
        mpz_init(e);
        mpz_set_si(e, it->extent);
        mpz_mul(dims[slot], dims[slot], e);
        mpz_clear(e);
    }
    g->valid = mpz_to_u64(dims[0], &g->batch) && mpz_to_u64(dims[1], &g->m) &&
               mpz_to_u64(dims[2], &g->n) && mpz_to_u64(dims[3], &g->k);
    for (int i = 0; i < 4; i++)
        mpz_clear(dims[i]);
    g->a_buf = origin_index(w, first_load(fa));
    g->b_buf = origin_index(w, first_load(fb));
    g->out_buf = origin_index(w, store->buf);
}


/* ---------------------------------------------------------------- sites */

static uint64_t budget_of(const walker *w)
{
    return w->o && w->o->budget ? w->o->budget : DEFAULT_BUDGET;
}

/* Counts with solve(); *too_big (when not NULL) is set for a count that
 * was found but does not fit in 64 bits. */
static bool solve_count(const walker *w, int j, const cond *extra, int nextra, uint64_t *out,
                        bool *too_big)
{
    mpz_t z;
    mpz_init(z);
    bool found = solve(w->fr, j, w->nfr, extra, nextra, budget_of(w), z);
    bool ok = found && mpz_to_u64(z, out);
    if (too_big)
        *too_big = found && !ok;
    mpz_clear(z);
    return ok;
}

static bool solve_u64(const walker *w, int j, const cond *extra, int nextra, uint64_t *out)
{
    return solve_count(w, j, extra, nextra, out, NULL);
}

/* Where the count of the site at the end of the chain is known: fills plan
 * and returns the first frame of the counted region (nfr: the site alone,
 * counted once per execution). */
static int plan_dynamic(walker *w, pass_count_plan *plan, uint64_t *region_count)
{
    int k = w->nfr, best = k;
    uint64_t best_count = 1;
    bool force = w->o && w->o->force_dynamic;
    for (int j = k - 1; j >= 0; j--) {
        frame_kind fk = w->fr[j].kind;
        if (force && (fk == FR_FOR || fk == FR_THEN || fk == FR_ELSE))
            break;
        uint64_t c;
        if (solve_u64(w, j, NULL, 0, &c)) {
            best = j;
            best_count = c;
        }
    }
    plan->inner = best_count;
    plan->trip = NULL;
    plan->anchor = best < k ? w->fr[best].s : NULL;   /* NULL fixed up by the caller */
    if (best >= 1 && w->fr[best - 1].kind == FR_FOR) {
        plan->anchor = plan->trip = w->fr[best - 1].s;
    }
    *region_count = best_count;
    return best;
}

/* Turns the temporary parts into the site's parts, with the fraction of
 * the site's executions each one runs. */
static void finish_parts(walker *w, pass_site *site, int region, uint64_t region_count)
{
    site->nparts = w->nparts;
    site->parts = ir_alloc(w->st->arena, sizeof *site->parts * (size_t)(w->nparts + 1));
    for (int i = 0; i < w->nparts; i++) {
        tpart *t = &w->parts[i];
        pass_part *p = &site->parts[i];
        p->flops = t->flops;
        p->loads = t->loads;
        p->num = p->den = 1;
        p->approx = t->approx;
        if (t->npath == 0)
            continue;
        uint64_t sub;
        if (region_count == 0) {
            p->num = 0;
        } else if (solve_u64(w, region, t->path, t->npath, &sub)) {
            mpz_t a, b, g;
            mpz_inits(a, b, g, NULL);
            mpz_set_u64(a, sub);
            mpz_set_u64(b, region_count);
            mpz_gcd(g, a, b);
            mpz_divexact(a, a, g);
            mpz_divexact(b, b, g);
            mpz_to_u64(a, &p->num);
            mpz_to_u64(b, &p->den);
            mpz_clears(a, b, g, NULL);
        } else {
            p->approx = true;
        }
        site->approx |= p->approx;
    }
}

static const char *block_member_attr(const walker *w, const char *block)
{
    if (!block)
        return NULL;
    for (int i = 0; i < w->fi->fn->nattrs; i++) {
        const char *k = w->fi->fn->attrs[i].key;
        if (k && strncmp(k, "block.", 6) == 0 && strcmp(k + 6, block) == 0)
            return w->fi->fn->attrs[i].value;
    }
    return NULL;
}

static int member_index(const pass_funcinfo *fi, const char *layer)
{
    for (int i = 0; layer && i < fi->nmembers; i++)
        if (strcmp(fi->members[i].layer, layer) == 0)
            return i;
    return 0;
}

/* A bound clamped to a constant, max(C, e) (kind IR_MAX) or min(C, e)
 * (IR_MIN), directly or as the value of an enclosing let, or the constant C
 * itself: *c = C. */
static bool clamped_to(const walker *w, const ir_expr *e, ir_expr_kind kind, int64_t *c)
{
    for (int i = w->nfr - 1; i >= 0 && e->kind == IR_VAR; i--)
        if (w->fr[i].kind == FR_LET && w->fr[i].s->var == e->var)
            e = w->fr[i].s->value;
    if (e->kind == IR_INT) {   /* (the side that no tap crosses) */
        *c = e->ival;
        return true;
    }
    if (e->kind != kind)
        return false;
    const ir_expr *k = e->a->kind == IR_INT ? e->a : e->b->kind == IR_INT ? e->b : NULL;
    if (k)
        *c = k->ival;
    return k != NULL;
}

/* The executions of a MAC store that count as MACs.  The auto scheduler
 * leaves out a padded convolution's filter taps that read only the padding
 * (passes/schedule/auto_contraction.c): its reduce loop over the filter's
 * rows runs from max(0, ..) to min(R, ..).  A convolution's MACs include the
 * positions that read padding (doc/profile.md), so such a loop (a loop the
 * store's indices do not use, its bounds clamped to constants) counts its
 * whole range here: the MACs stay those of every schedule. */
#define NOMINAL_MAX 8
static uint64_t nominal_count(walker *w, const ir_stmt *store, uint64_t count)
{
    ir_stmt whole[NOMINAL_MAX];
    ir_expr bound[2 * NOMINAL_MAX];
    const ir_stmt *clamped[NOMINAL_MAX];
    int at[NOMINAL_MAX], n = 0;
    for (int i = 0; i < w->nfr && n < NOMINAL_MAX; i++) {
        const ir_stmt *l = w->fr[i].s;
        int64_t lo, hi;
        bool used = false;
        if (w->fr[i].kind != FR_FOR)
            continue;
        for (int a = 0; a < store->nargs && !used; a++)
            used = ir_expr_uses_var(store->args[a], l->var);
        if (used || !clamped_to(w, l->lo, IR_MAX, &lo) || !clamped_to(w, l->hi, IR_MIN, &hi))
            continue;
        whole[n] = *l;
        bound[2 * n] = (ir_expr){.kind = IR_INT, .dtype = IR_I64, .ival = lo};
        bound[2 * n + 1] = (ir_expr){.kind = IR_INT, .dtype = IR_I64, .ival = hi};
        whole[n].lo = &bound[2 * n];
        whole[n].hi = &bound[2 * n + 1];
        clamped[n] = l;
        w->fr[i].s = &whole[n];
        at[n++] = i;
    }
    if (n == 0)
        return count;
    uint64_t c;
    bool ok = solve_u64(w, 0, NULL, 0, &c);
    for (int k = 0; k < n; k++)
        w->fr[at[k]].s = clamped[k];
    return ok ? c : count;
}

static void add_site(walker *w, const ir_stmt *s, ir_expr *const *exprs, int nexprs)
{
    if (w->failed)
        return;
    if (!GROW(w->sites, w->nsites, w->capsites)) {
        oom(w);
        return;
    }
    pass_site *site = &w->sites[w->nsites];
    memset(site, 0, sizeof *site);
    site->id = w->nsites;
    site->func = w->fi->index;
    site->stmt = s;
    site->store_buf = -1;
    site->gemm.a_buf = site->gemm.b_buf = site->gemm.out_buf = -1;
    int b = innermost_block(w);
    if (b >= 0) {
        site->block = w->fr[b].s->name;
        site->in_init = w->fr[b].kind == FR_INIT;
    }
    site->member = member_index(w->fi, block_member_attr(w, site->block));

    w->nparts = 0;
    cond none[1];
    if (!part_for(w, none, 0))
        return;
    for (int i = 0; i < nexprs; i++)
        cost_expr(w, exprs[i], none, 0);
    if (w->failed)
        return;
    if (s->kind == IR_S_STORE) {
        site->store_buf = buf_index(w->fi, s->buf);
        if (site->store_buf < 0) {
            diag_internal(w->d, "analyze", "in @%s: store to buffer '%s', which is neither a "
                          "parameter nor an alloc", w->fi->fn->name, s->buf ? s->buf->name : "?");
            w->failed = true;
            return;
        }
        const ir_expr *prod = mac_product(s);
        if (prod && in_reduction(w, s)) {
            site->macs = 1;
            gemm_of(w, s, prod, &site->gemm);
        }
    }

    uint64_t region_count;
    int region;
    bool too_big;
    site->is_static = solve_count(w, 0, NULL, 0, &site->count, &too_big);
    site->mac_count = site->macs && site->is_static ? nominal_count(w, s, site->count) : site->count;
    if (too_big) {
        diag_error(w->d, diag_noloc(), "layer %s (@%s): a %s executes more than 2^64 times; "
                   "its costs cannot be counted", w->fi->layer, w->fi->fn->name,
                   ir_stmt_kind_name(s->kind));
        w->failed = true;
        return;
    }
    if (site->is_static && !(w->o && w->o->force_dynamic)) {
        site->plan = (pass_count_plan){NULL, NULL, site->count};
        region = 0;
        region_count = site->count;
    } else {
        region = plan_dynamic(w, &site->plan, &region_count);
        if (region == w->nfr && !site->plan.trip)
            site->plan.anchor = s;
    }
    if (site->is_static) {   /* fractions over the whole function are exact */
        region = 0;
        region_count = site->count;
    }
    finish_parts(w, site, region, region_count);
    w->nsites++;
}

static void push(walker *w, const ir_stmt *s, frame_kind k)
{
    if (!GROW(w->fr, w->nfr, w->capfr)) {
        oom(w);
        return;
    }
    w->fr[w->nfr++] = (frame){s, k};
}

static void pop(walker *w)
{
    if (w->nfr > 0)
        w->nfr--;
}

static void note_eval(walker *w, const ir_stmt *s)
{
    const ir_expr *c = s->value;
    if (!c || c->kind != IR_CALL || c->nargs < 1 || !c->args[0] || c->args[0]->kind != IR_INT)
        return;
    if (c->fn == IR_FN_PROF_ENTER && c->args[0]->ival == w->fi->index)
        w->fi->instrumented = true;
    if (c->fn == IR_FN_PROF_COUNT) {
        if (!GROW(w->count_ids, w->ncount, w->capcount)) {
            oom(w);
            return;
        }
        w->count_ids[w->ncount++] = c->args[0]->ival;
    }
}

static void walk(walker *w, const ir_stmt *s)
{
    if (!s || w->failed)
        return;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->nbody; i++)
            walk(w, s->body[i]);
        break;
    case IR_S_FOR:
        if (has_work(s->lo) || has_work(s->hi)) {
            ir_expr *e[2] = {s->lo, s->hi};
            add_site(w, s, e, 2);
        }
        push(w, s, FR_FOR);
        walk(w, s->nbody ? s->body[0] : NULL);
        pop(w);
        break;
    case IR_S_LET:
        if (has_work(s->value))
            add_site(w, s, &s->value, 1);
        push(w, s, FR_LET);
        walk(w, s->nbody ? s->body[0] : NULL);
        pop(w);
        break;
    case IR_S_IF:
        if (has_work(s->cond))
            add_site(w, s, &s->cond, 1);
        push(w, s, FR_THEN);
        walk(w, s->nbody ? s->body[0] : NULL);
        pop(w);
        if (s->orelse) {
            push(w, s, FR_ELSE);
            walk(w, s->orelse);
            pop(w);
        }
        break;
    case IR_S_BLOCK: {
        bool work = false;
        for (int i = 0; i < s->niters; i++)
            work |= has_work(s->iters[i].binding);
        if (work) {
            ir_expr **e = ir_alloc(w->st->arena, sizeof *e * (size_t)(s->niters + 1));
            for (int i = 0; i < s->niters; i++)
                e[i] = s->iters[i].binding;
            add_site(w, s, e, s->niters);
        }
        if (s->init) {
            push(w, s, FR_INIT);
            walk(w, s->init);
            pop(w);
        }
        push(w, s, FR_BLOCK);
        walk(w, s->nbody ? s->body[0] : NULL);
        pop(w);
        break;
    }
    case IR_S_STORE: {
        ir_expr **e = ir_alloc(w->st->arena, sizeof *e * (size_t)(s->nargs + 1));
        for (int i = 0; i < s->nargs; i++)
            e[i] = s->args[i];
        e[s->nargs] = s->value;
        add_site(w, s, e, s->nargs + 1);
        break;
    }
    case IR_S_ALLOC:
        walk(w, s->nbody ? s->body[0] : NULL);
        break;
    case IR_S_ASSERT:
        if (has_work(s->cond))
            add_site(w, s, &s->cond, 1);
        break;
    case IR_S_EVAL:
        note_eval(w, s);
        break;
    case IR_S_PREFETCH:   /* a cache hint: no bytes, no flops (profiles do not change) */
    default:
        break;
    }
}

/* ---------------------------------------------------------------- functions */

static bool collect_allocs(const ir_stmt *s, void *ctx)
{
    walker *w = ctx;
    if (s->kind == IR_S_ALLOC && s->buf && buf_index(w->fi, s->buf) < 0) {
        pass_bufinfo *b = &w->fi->bufs[w->fi->nbufs++];
        b->buf = s->buf;
        b->param = -1;
    }
    return true;
}

static bool count_allocs(const ir_stmt *s, void *ctx)
{
    if (s->kind == IR_S_ALLOC)
        (*(int *)ctx)++;
    return true;
}

/* Splits a comma-separated attribute into trimmed names (in the arena). */
static char **split_list(ir_arena *a, const char *text, int *n)
{
    int cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    char **out = ir_alloc(a, sizeof *out * (size_t)cap);
    *n = 0;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len)
            out[(*n)++] = ir_strndup(a, p, len);
        if (!end)
            break;
        p = end + 1;
    }
    return out;
}

static void setup_func(walker *w, pass_funcinfo *fi, const ir_func *f, int index)
{
    ir_arena *a = w->st->arena;
    const ir_module *m = w->st->m;
    fi->fn = f;
    fi->index = index;
    const char *layer = ir_func_attr(f, "layer"), *op = ir_func_attr(f, "op");
    fi->layer = layer && *layer ? layer : f->name;
    fi->op = op ? op : "";
    fi->first_call = -1;
    for (int c = 0; c < m->graph.ncalls; c++)
        if (m->graph.calls[c].fn == f) {
            if (fi->first_call < 0)
                fi->first_call = c;
            fi->ncalls++;
        }

    const char *members = ir_func_attr(f, "members");
    int nm = 0;
    char **names = members ? split_list(a, members, &nm) : NULL;
    fi->fused = nm > 0;
    if (!fi->fused) {
        fi->nmembers = 1;
        fi->members = ir_alloc(a, sizeof *fi->members);
        fi->members[0] = (pass_member){fi->layer, fi->op};
    } else {
        int nops = 0;
        const char *ops = ir_func_attr(f, "member_ops");
        char **opnames = ops ? split_list(a, ops, &nops) : NULL;
        fi->nmembers = nm;
        fi->members = ir_alloc(a, sizeof *fi->members * (size_t)nm);
        for (int i = 0; i < nm; i++)
            fi->members[i] = (pass_member){names[i], i < nops ? opnames[i] : ""};
    }

    int nallocs = 0;
    ir_stmt_walk(f->body, count_allocs, NULL, &nallocs);
    fi->bufs = ir_alloc(a, sizeof *fi->bufs * (size_t)(f->nparams + nallocs + 1));
    for (int i = 0; i < f->nparams; i++) {
        pass_bufinfo *b = &fi->bufs[fi->nbufs++];
        b->buf = f->params[i];
        b->param = i;
        if (fi->first_call >= 0 && i < m->graph.calls[fi->first_call].nargs)
            b->graph = m->graph.calls[fi->first_call].args[i];
    }
    w->fi = fi;
    ir_stmt_walk(f->body, collect_allocs, NULL, w);
    for (int i = 0; i < fi->nbufs; i++)
        fi->bufs[i].footprint_bytes = buffer_bytes(fi->bufs[i].buf);
}

static void finish_func(walker *w, pass_funcinfo *fi)
{
    fi->nsites = w->nsites - fi->first_site;
    fi->is_static = true;
    for (int i = fi->first_site; i < w->nsites; i++) {
        pass_site *s = &w->sites[i];
        fi->is_static &= s->is_static;
        if (s->store_buf >= 0 && !fi->bufs[s->store_buf].read &&
            !fi->bufs[s->store_buf].written) {
            bool loads_it = false;
            for (int p = 0; p < s->nparts; p++)
                loads_it |= s->parts[p].loads[s->store_buf] != 0;
            fi->bufs[s->store_buf].write_first = !loads_it;
        }
        for (int p = 0; p < s->nparts; p++)
            for (int b = 0; b < fi->nbufs; b++)
                if (s->parts[p].loads[b] && !fi->bufs[b].read) {
                    if (!fi->bufs[b].written)
                        fi->bufs[b].member = s->member;
                    fi->bufs[b].read = true;
                }
        if (s->store_buf >= 0 && !fi->bufs[s->store_buf].written) {
            if (!fi->bufs[s->store_buf].read)
                fi->bufs[s->store_buf].member = s->member;
            fi->bufs[s->store_buf].written = true;
        }
    }
    for (int c = 0; c < w->ncount; c++) {
        int64_t id = w->count_ids[c];
        if (id >= fi->first_site && id < w->nsites)
            w->sites[id].counted = true;
        else
            w->st->bad_counts++;
    }
}

pass_stats *pass_analyze(const ir_module *m, const pass_analyze_options *o, diag *d)
{
    pass_stats *st = calloc(1, sizeof *st);
    ir_arena *a = st ? ir_arena_new() : NULL;
    if (!a) {
        free(st);
        diag_error(d, diag_noloc(), "out of memory in the cost analysis");
        return NULL;
    }
    st->arena = a;
    st->m = m;
    st->nfuncs = m->nfuncs;
    st->funcs = ir_alloc(a, sizeof *st->funcs * (size_t)(m->nfuncs + 1));
    walker w = {.st = st, .o = o, .d = d};
    for (int i = 0; i < m->nfuncs && !w.failed; i++) {
        pass_funcinfo *fi = &st->funcs[i];
        setup_func(&w, fi, m->funcs[i], i);
        fi->first_site = w.nsites;
        w.ncount = 0;
        w.nfr = 0;
        walk(&w, m->funcs[i]->body);
        if (!w.failed)
            finish_func(&w, fi);
    }
    if (!w.failed) {
        st->nsites = w.nsites;
        st->sites = ir_alloc(a, sizeof *st->sites * (size_t)(w.nsites + 1));
        if (w.nsites)
            memcpy(st->sites, w.sites, sizeof *st->sites * (size_t)w.nsites);
    }
    free(w.sites);
    free(w.fr);
    free(w.count_ids);
    free(w.parts);
    if (w.failed) {
        pass_stats_free(st);
        return NULL;
    }
    return st;
}

void pass_stats_free(pass_stats *st)
{
    if (!st)
        return;
    ir_arena_free(st->arena);
    free(st);
}

/* ---------------------------------------------------------------- totals */

uint64_t pass_site_executions(const pass_stats *st, const pass_site *s, const uint64_t *counts,
                              bool *known)
{
    *known = true;
    if (counts && s->counted)
        return counts[s->id];
    if (!s->is_static) {
        *known = false;
        return 0;
    }
    uint64_t calls = (uint64_t)st->funcs[s->func].ncalls, r;
    if (__builtin_mul_overflow(s->count, calls, &r))
        return UINT64_MAX;
    return r;
}

static bool total_out(mpz_t z, uint64_t *out, const char *what, const pass_funcinfo *fi, diag *d)
{
    if (mpz_to_u64(z, out))
        return true;
    diag_error(d, diag_noloc(), "the number of %s of layer %s does not fit in 64 bits", what,
               fi->layer);
    return false;
}

bool pass_func_totals(const pass_stats *st, int fi_index, const uint64_t *counts, int member,
                      pass_totals *out, diag *d)
{
    const pass_funcinfo *fi = &st->funcs[fi_index];
    uint64_t *loads = out->loads, *stores = out->stores;
    memset(out, 0, sizeof *out);
    out->loads = loads;
    out->stores = stores;
    mpz_t macs, flops, lb, sb, pe, t;
    mpz_inits(macs, flops, lb, sb, pe, t, NULL);
    mpz_t *bl = malloc(sizeof *bl * (size_t)(fi->nbufs + 1));
    mpz_t *bs = malloc(sizeof *bs * (size_t)(fi->nbufs + 1));
    bool ok = bl && bs;
    for (int b = 0; ok && b < fi->nbufs; b++) {
        mpz_init(bl[b]);
        mpz_init(bs[b]);
    }
    for (int i = 0; ok && i < fi->nsites; i++) {
        const pass_site *s = &st->sites[fi->first_site + i];
        if (member >= 0 && s->member != member)
            continue;
        bool known;
        uint64_t n = pass_site_executions(st, s, counts, &known);
        if (!known) {
            out->unknown = true;
            continue;
        }
        out->approx |= s->approx;
        /* a static site's MACs per call: its executions, or with taps in a
         * padding left out, the executions of the whole loops */
        uint64_t mac_n = n;
        if (s->macs && s->is_static && s->mac_count != s->count &&
            __builtin_mul_overflow(s->mac_count, (uint64_t)fi->ncalls, &mac_n))
            mac_n = UINT64_MAX;
        mpz_addmul_u64(macs, mac_n, s->macs);
        if (s->store_buf >= 0)
            mpz_addmul_u64(bs[s->store_buf], n, 1);
        for (int p = 0; p < s->nparts; p++) {
            const pass_part *part = &s->parts[p];
            mpz_set_u64(pe, n);
            mpz_set_u64(t, part->num);
            mpz_mul(pe, pe, t);
            mpz_set_u64(t, part->den ? part->den : 1);
            mpz_fdiv_q(pe, pe, t);
            mpz_set_u64(t, part->flops);
            mpz_addmul(flops, pe, t);
            for (int b = 0; b < fi->nbufs; b++)
                if (part->loads[b]) {
                    mpz_set_u64(t, part->loads[b]);
                    mpz_addmul(bl[b], pe, t);
                }
        }
    }
    if (!ok) {
        diag_error(d, diag_noloc(), "out of memory in the cost analysis");
    } else {
        ok = total_out(macs, &out->macs, "MACs", fi, d) &&
             total_out(flops, &out->flops, "FLOPs", fi, d);
        for (int b = 0; ok && b < fi->nbufs; b++) {
            uint64_t nl, ns;
            ok = total_out(bl[b], &nl, "loads", fi, d) && total_out(bs[b], &ns, "stores", fi, d);
            if (!ok)
                break;
            if (loads)
                loads[b] = nl;
            if (stores)
                stores[b] = ns;
            mpz_set_u64(t, (uint64_t)ir_dtype_size(fi->bufs[b].buf->dtype));
            mpz_addmul(lb, bl[b], t);
            mpz_addmul(sb, bs[b], t);
        }
        ok = ok && total_out(lb, &out->load_bytes, "load bytes", fi, d) &&
             total_out(sb, &out->store_bytes, "store bytes", fi, d);
    }
    for (int b = 0; bl && bs && b < fi->nbufs; b++) {
        mpz_clear(bl[b]);
        mpz_clear(bs[b]);
    }
    free(bl);
    free(bs);
    mpz_clears(macs, flops, lb, sb, pe, t, NULL);
    return ok;
}

/* ---------------------------------------------------------------- printing */

static void print_shape(FILE *out, const ir_buffer *b)
{
    fprintf(out, "%s[", ir_dtype_name(b->dtype));
    for (int i = 0; i < b->ndim; i++)
        fprintf(out, "%s%lld", i ? ", " : "", (long long)b->shape[i]);
    fputc(']', out);
}

static const char *site_what(const pass_site *s)
{
    switch (s->stmt->kind) {
    case IR_S_STORE: return s->in_init ? "init store" : "store";
    default: return ir_stmt_kind_name(s->stmt->kind);
    }
}

void pass_stats_print(FILE *out, const pass_stats *st)
{
    for (int f = 0; f < st->nfuncs; f++) {
        const pass_funcinfo *fi = &st->funcs[f];
        fprintf(out, "@%s  layer %s  op %s  calls %d%s\n", fi->fn->name, fi->layer,
                *fi->op ? fi->op : "-", fi->ncalls, fi->is_static ? "" : "  (dynamic counts)");
        if (fi->fused) {
            fprintf(out, "  fused group of");
            for (int i = 0; i < fi->nmembers; i++)
                fprintf(out, " %s", fi->members[i].layer);
            fputc('\n', out);
        }
        uint64_t *loads = calloc((size_t)fi->nbufs + 1, sizeof *loads);
        uint64_t *stores = calloc((size_t)fi->nbufs + 1, sizeof *stores);
        pass_totals t = {.loads = loads, .stores = stores};
        diag quiet;
        diag_init(&quiet, stderr);
        bool ok = loads && stores && pass_func_totals(st, f, NULL, -1, &t, &quiet);
        diag_fini(&quiet);
        for (int b = 0; b < fi->nbufs; b++) {
            const pass_bufinfo *bi = &fi->bufs[b];
            fprintf(out, "  buffer %s: ", bi->buf->name);
            print_shape(out, bi->buf);
            fprintf(out, " %s, footprint %llu B", bi->param >= 0 ? "param" : "local",
                    (unsigned long long)bi->footprint_bytes);
            if (ok)
                fprintf(out, ", loads %llu, stores %llu", (unsigned long long)loads[b],
                        (unsigned long long)stores[b]);
            fputc('\n', out);
        }
        for (int i = 0; i < fi->nsites; i++) {
            const pass_site *s = &st->sites[fi->first_site + i];
            fprintf(out, "  site %d: %s", s->id, site_what(s));
            if (s->block)
                fprintf(out, " in block %s", s->block);
            if (s->is_static)
                fprintf(out, ", count %llu", (unsigned long long)s->count);
            else
                fputs(", count dynamic", out);
            uint64_t flops = 0;
            for (int p = 0; p < s->nparts; p++)
                flops += s->parts[p].flops;
            fprintf(out, ", macs %llu, flops %llu per execution%s%s\n",
                    (unsigned long long)s->macs, (unsigned long long)flops,
                    s->approx ? " (upper bound)" : "", s->counted ? ", counted" : "");
        }
        if (ok)
            fprintf(out, "  total per run: macs %llu, flops %llu, loads %llu B, stores %llu B%s%s\n",
                    (unsigned long long)t.macs, (unsigned long long)t.flops,
                    (unsigned long long)t.load_bytes, (unsigned long long)t.store_bytes,
                    t.unknown ? " (without dynamic sites)" : "", t.approx ? " (upper bound)" : "");
        free(loads);
        free(stores);
    }
}
