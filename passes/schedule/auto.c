/* passes/schedule/auto.c — the automatic scheduler (-O2, -O3): a schedule
 * for every function that has none, in the schedule language, from the IR
 * alone and a model of the target.
 *
 * Each block of a function is classified by its loop nest:
 *
 *   contraction  Y[..] = Y[..] + U[..] * V[..] with an init (matmul,
 *                linear, batched matmul, convolution): a register tile of
 *                mr rows of the innermost U-only loop by nr = 2 vectors of
 *                the innermost V-only loop, V packed per column panel, the
 *                init decomposed out of the reduce loops, the tile's rows
 *                unrolled and columns vectorized — the BLIS micro-kernel
 *                structure, as bench/gemm.te writes it by hand; a panel
 *                larger than the level-2 cache is walked in blocks of its
 *                reduction (BLIS's kc loop) outside the row tiles, the sums
 *                kept per column tile across them (k_block_pick);
 *   row kernel   (a whole function: reductions along its rows and the
 *                elementwise work on them, rows of 2 vectors or more)
 *                one loop over the rows, the
 *                reductions' partial results per row (schedule_row_kernel);
 *                when the rows are read a column apart instead (the
 *                channels of a permuted NCHW map), one loop over the
 *                columns of rows, the reductions' vectors along the column
 *                (schedule_row_column_kernel);
 *   reduction into one value  (no loop around its reduce loops: a sum of
 *                a whole tensor, a norm over the one row of a batch of one)
 *                the loops merged where they can, the innermost split into
 *                vectors of partial results (schedule_lone_reduction);
 *   other        (elementwise, pooling, normalization, depthwise
 *                convolution): a spatial loop innermost and vectorized;
 *                an elementwise kernel the fuse pass will not absorb has
 *                its loops and dimensions merged first (merge.c), so the
 *                vector runs along its whole contiguous data.
 *
 * and the outermost loop with enough iterations runs in parallel.  The
 * chosen steps are kept in the function's "schedule_auto" attribute (tec
 * --dump-schedule prints them as `schedule` blocks a user can copy, edit and
 * pin).  A step the primitives refuse ends that block's schedule with the
 * steps before it; it never fails the compilation.  A function that has a
 * schedule (a user's, or one of these) and prepack's load functions (cut
 * out of kernels already scheduled) are left alone, so -O2 run again on
 * the IR it printed changes nothing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/schedule/auto.h"

static void text_add(auto_ctx *a, const char *s)
{
    size_t n = strlen(s);
    if (a->len + n + 1 > a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 256;
        while (cap < a->len + n + 1)
            cap *= 2;
        char *p = realloc(a->text, cap);
        if (!p)
            return;
        a->text = p;
        a->cap = cap;
    }
    memcpy(a->text + a->len, s, n + 1);
    a->len += n;
}

/* A name not used in the function yet, from `base`. */
const char *auto_fresh(auto_ctx *a, const char *base)
{
    if (!sch_name_used(a->f, base))
        return ir_strdup(a->m->arena, base);
    for (int k = 1;; k++) {
        char *n = ir_sprintf(a->m->arena, "%s_%d", base, k);
        if (!sch_name_used(a->f, n))
            return n;
    }
}

/* Parses and applies one line of schedule; records it when it worked. */
bool auto_step(auto_ctx *a, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    sch_list l = {0};
    diag_loc here = {"auto", 1, 1};
    a->quiet.nerrors = 0;
    if (!sch_parse(a->m, line, here, &l, &a->quiet) || l.n != 1 ||
        !sch_apply_step(a->m, a->f, &l.steps[0], &a->quiet))
        return false;
    text_add(a, line);
    text_add(a, "\n");
    return true;
}

void auto_step_late(auto_ctx *a, const char *step)
{
    /* a full queue runs first, so the steps keep their order (a tail's
     * parallel after the partition that makes the tail) */
    if (a->nlate_steps == (int)(sizeof a->late_steps / sizeof *a->late_steps)) {
        for (int i = 0; i < a->nlate_steps; i++)
            auto_step(a, "%s", a->late_steps[i]);
        a->nlate_steps = 0;
    }
    a->late_steps[a->nlate_steps++] = step;
}

void auto_partition_late(auto_ctx *a, const char *loop, int64_t at)
{
    auto_step_late(a, ir_sprintf(a->m->arena, "partition(%s, %lld)", loop, (long long)at));
}

/* Perfect nests from *s down: every block whose loops are directly nested. */
void auto_collect(ir_stmt *s, nest *cur, nest *out, int *nout, int max)
{
    if (!s)
        return;
    if (s->kind == IR_S_BLOCK) {
        if (*nout < max) {
            out[*nout] = *cur;
            out[*nout].block = s;
            (*nout)++;
        }
        return;
    }
    if (s->kind == IR_S_FOR && cur->n < 32) {
        cur->loops[cur->n++] = s;
        auto_collect(s->body[0], cur, out, nout, max);
        cur->n--;
        return;
    }
    /* anything else breaks the nest: what is below starts a new one */
    nest fresh_nest = {.n = 0};
    for (int i = 0; i < s->nbody; i++)
        auto_collect(s->body[i], s->kind == IR_S_SEQ ? cur : &fresh_nest, out, nout, max);
    if (s->kind == IR_S_SEQ && cur->n > 0) {
        /* a sequence inside a loop: the loop is shared, not a perfect nest */
    }
}

/* The nest of block b in f now. */
bool auto_nest_of(auto_ctx *a, const ir_stmt *b, nest *out)
{
    nest cur = {.n = 0};
    nest *all = malloc(sizeof *all * 256);
    int n = 0;
    bool found = false;
    if (!all)
        return false;
    auto_collect(a->f->body, &cur, all, &n, 256);
    for (int i = 0; i < n && !found; i++)
        if (all[i].block == b) {
            *out = all[i];
            found = true;
        }
    free(all);
    return found;
}

/* Grouped convolutions: a reduction whose reads index a dimension by
 * floordiv(f, Fg) of an output-channel variable f (x[.., f / Fg * Cg + c,
 * ..]) is a contraction per group.  regroup splits f into the group g and
 * the channel in the group, so the read becomes g*Cg + c, affine (pad can
 * copy it) and the group a batch loop of the contraction. */
typedef struct group_find {
    const ir_stmt *b;
    int iter;          /* the iteration variable divided */
    int64_t by;
} group_find;

static bool find_group_div(const ir_expr *x, void *p)
{
    group_find *g = p;
    if (g->iter >= 0 || x->kind != IR_FLOORDIV || x->a->kind != IR_VAR || x->b->kind != IR_INT)
        return true;
    for (int i = 0; i < g->b->niters; i++) {
        const ir_itervar *it = &g->b->iters[i];
        if (it->var == x->a->var && it->kind == IR_ITER_SPATIAL && it->binding->kind == IR_VAR &&
            x->b->ival > 1 && x->b->ival < it->extent && it->extent % x->b->ival == 0) {
            g->iter = i;
            g->by = x->b->ival;
        }
    }
    return true;
}

typedef struct group_list {
    const char *loop[64];
    int64_t by[64];
    int n;
} group_list;

static bool regroup_find(const ir_stmt *s, void *p)
{
    group_list *gl = p;
    if (s->kind != IR_S_BLOCK || !s->init || gl->n >= 64)
        return true;
    group_find g = {s, -1, 0};
    for (int i = 0; i < s->nbody; i++)
        ir_stmt_walk(s->body[i], NULL, find_group_div, &g);
    if (g.iter >= 0) {
        gl->loop[gl->n] = s->iters[g.iter].binding->var->name;
        gl->by[gl->n++] = g.by;
    }
    return true;
}

static void regroup_all(auto_ctx *a)
{
    group_list gl = {.n = 0};
    ir_stmt_walk(a->f->body, regroup_find, NULL, &gl);
    for (int i = 0; i < gl.n; i++) {
        const char *l = gl.loop[i];
        auto_step(a, "%s, %s = regroup(%s, %lld)", auto_fresh(a, ir_sprintf(a->m->arena, "%s_g", l)),
             auto_fresh(a, ir_sprintf(a->m->arena, "%s_in", l)), l, (long long)gl.by[i]);
    }
}

static bool has_attr(const ir_func *f, const char *k) { return ir_func_attr(f, k) != NULL; }

/* A load function of prepack (op "prepack"): its fill was cut out of a
 * kernel this pass had already scheduled, so it keeps that schedule; -O2
 * run again on printed IR leaves it as it is (a fixed point). */
static bool is_prepack(const ir_func *f)
{
    const char *op = ir_func_attr(f, "op");
    return op && strcmp(op, "prepack") == 0;
}

/* Is parameter b of f a param of the graph in every call of f (a weight,
 * constant from run to run)? */
bool auto_is_weight(const ir_module *m, const ir_func *f, const ir_buffer *b)
{
    int k = 0;
    while (k < f->nparams && f->params[k] != b)
        k++;
    bool called = false;
    for (int c = 0; c < m->graph.ncalls && k < f->nparams; c++) {
        const ir_graph_call *call = &m->graph.calls[c];
        if (call->fn != f || k >= call->nargs)
            continue;
        if (call->args[k]->role != IR_BUF_PARAM && call->args[k]->role != IR_BUF_CONST)
            return false;
        called = true;
    }
    return called;
}

/* Whether the candidate tile just modelled (a->vector_operand) sums
 * integers with an activation in its vectors that its vector loop does not
 * read contiguously: the innermost loop of a column variable (in V and Y,
 * not in the other operand) does not step V's last index by 1.  An int8
 * stem of stride 2 along its map reads x_pad[n, 2p + r, 2q + s, c] of a
 * channels-last copy, each lane's 4 bytes gathered 8 bytes apart, which
 * the tile model does not count: MobileNetV2's 3x3 stem, 3 -> 32 on
 * 224x224, took 1320 us along the map and 230 along its 32 channels on one
 * thread (the 7x7 one of ResNet: autoschedule_stem_int8.tir). */
static bool strided_int_columns(auto_ctx *a, const nest *ns)
{
    const ir_stmt *b = ns->block, *st = b->nbody ? b->body[0] : NULL;
    if (!st || st->kind != IR_S_STORE || ir_dtype_is_float(st->buf->dtype) || !st->value ||
        st->value->kind != IR_ADD || !st->value->b || st->value->b->kind != IR_MUL ||
        !a->vector_operand || auto_is_weight(a->m, a->f, a->vector_operand))
        return false;
    bool g = false;
    const ir_expr *p = st->value->b, *o1 = unguarded_load(p->a, &g), *o2 = unguarded_load(p->b, &g);
    if (!o1 || !o2)
        return false;
    const ir_expr *V = o1->buf == a->vector_operand ? o1 : o2, *U = V == o1 ? o2 : o1;
    if (V->buf != a->vector_operand || V->nargs < 1)
        return false;
    for (int i = ns->n - 1; i >= 0; i--) {
        const ir_itervar *it = iter_of(b, ns->loops[i]);
        if (!it || it->kind != IR_ITER_SPATIAL || !load_uses(V, it->var) || load_uses(U, it->var))
            continue;
        bool in_y = false;
        for (int d = 0; d < st->nargs; d++)
            in_y |= uses(st->args[d], it->var);
        if (!in_y)
            continue;
        int64_t coef;
        return !ir_affine_var_coef(V->args[V->nargs - 1], it->var, &coef) || coef != 1;
    }
    return false;
}

/* Which of the four contraction candidates (bit 0: the other operand in
 * the vectors, bit 1: a guarded tail of columns allowed) the block gets,
 * 4 if none fits; *cost: its time per output element. */
static int choose_tile(auto_ctx *a, nest *ns, double *cost)
{
    /* columns that split into whole vectors first, either operand;
     * then a guarded tail */
    int k = 0;
    while (k < 4 && !schedule_contraction(a, ns, k & 1, k >= 2, true))
        k++;
    /* a later candidate whose tile is clearly better (by a tenth)
     * wins: columns along the longer of two dimensions that do not
     * split into whole vectors, or tiles with two vectors of
     * columns instead of one; but columns with a tail replace
     * whole vectors along a weight (packed once, at load), or along
     * an activation only when they win by a fifth with its packing
     * counted: a first convolution on three channels (3x3, stride 2,
     * 3 -> 32 on a 195x195 image, K = 27) spends as much on writing
     * its tile back across 32 channel planes as on the multiply-adds,
     * and runs along the map's 97 columns (6 vectors and a tail, the
     * image's rows packed) faster: 250 to 201 us on one thread */
    if (k < 4) {
        double best = a->tile_cost;
        for (int c = k + 1; c < 4; c++)
            if (schedule_contraction(a, ns, c & 1, c >= 2, true) &&
                a->tile_cost * 1.1 < best &&
                (c < 2 || k >= 2 || auto_is_weight(a->m, a->f, a->vector_operand) ||
                 (a->tile_cost + a->pack_cost) * 1.2 < best)) {
                best = a->tile_cost;
                k = c;
            }
    }
    /* Columns of a weight in vectors, with a guarded tail, rather
     * than the other operand's, when the tail is a small part:
     * prepack packs a weight once, at load, and the tile writes
     * back along the output's rows (GPT-2's LM head: 50257 columns
     * of the tied embedding). */
    if (k == 1 && schedule_contraction(a, ns, false, true, true) &&
        auto_is_weight(a->m, a->f, a->vector_operand) && a->vector_columns >= 32 * a->lanes)
        k = 2;
    /* integer sums along a strided activation: the weight's columns */
    if (k < 4 && schedule_contraction(a, ns, k & 1, k >= 2, true) && strided_int_columns(a, ns))
        for (int c = 0; c < 4; c++)
            if (schedule_contraction(a, ns, c & 1, c >= 2, true) &&
                auto_is_weight(a->m, a->f, a->vector_operand)) {
                k = c;
                break;
            }
    *cost = 0;
    if (k < 4 && schedule_contraction(a, ns, k & 1, k >= 2, true))
        *cost = a->tile_cost;
    return k;
}

/* ---------------------------------------------------------------- row kernels */

/* The one reduce iteration variable of block b bound to its innermost
 * loop (of nest ns), or NULL. */
static const ir_itervar *innermost_reduce(const nest *ns)
{
    const ir_stmt *b = ns->block, *inner = ns->n ? ns->loops[ns->n - 1] : NULL;
    const ir_itervar *found = NULL;
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == IR_ITER_REDUCE) {
            if (found || !inner || b->iters[i].binding->kind != IR_VAR ||
                b->iters[i].binding->var != inner->var)
                return NULL;
            found = &b->iters[i];
        }
    return found;
}

static bool all_spatial(const ir_stmt *b)
{
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind != IR_ITER_SPATIAL)
            return false;
    return !b->init;
}

/* Whether the indices args[nargs] step along a row (variable v) by their
 * last alone, by 1 (or do not use v). */
static bool row_contiguous(ir_expr *const *args, int nargs, const ir_var *v)
{
    int64_t coef = 0;
    for (int i = 0; i + 1 < nargs; i++)
        if (uses(args[i], v))
            return false;
    return nargs < 1 || (ir_affine_var_coef(args[nargs - 1], v, &coef) && (coef == 0 || coef == 1));
}

typedef struct row_reads {
    const ir_var *v;
    bool ok;
} row_reads;

/* ir_expr_walk's visitor of along_rows: clears ok at a load that does not
 * read along the row contiguously. */
static bool row_read_visit(const ir_expr *e, void *p)
{
    row_reads *r = p;
    if (e->kind == IR_LOAD)
        r->ok = r->ok && row_contiguous(e->args, e->nargs, r->v);
    return true;
}

/* Whether block b (of nest ns) reads and writes contiguously along the
 * variable of its loop `depth` from the innermost (1: the innermost). */
static bool along_loop(const nest *ns, int depth)
{
    const ir_itervar *it = ns->n >= depth ? iter_of(ns->block, ns->loops[ns->n - depth]) : NULL;
    const ir_stmt *st = ns->block->body[0];
    if (!it || !row_contiguous(st->args, st->nargs, it->var))
        return false;
    row_reads r = {it->var, true};
    ir_expr_walk(st->value, row_read_visit, &r);
    return r.ok;
}

/* Whether block b (of nest ns) reads and writes along its rows, the
 * variable of its innermost loop, contiguously.  A layer norm over the
 * channels of a permuted NCHW map (ConvNeXt's, on a view of its depthwise
 * convolution's output) reads a row's elements a map apart: as a row
 * kernel, 16-lane gathers per vector (ConvNeXt-T's first stage 399 us as
 * five ONNX nodes, 491 as a row kernel), where the default schedule's
 * vectors run across the rows, along the map. */
static bool along_rows(const nest *ns)
{
    return along_loop(ns, 1);
}

/* Whether the function's blocks, in order in nests[0..n), are those of a
 * row kernel: blocks that reduce the innermost axis of rows into a local
 * T[rows] (a softmax's maximum and sum, a layer norm's mean and variance),
 * elementwise blocks over the rows storing locals, and last the block
 * storing the output over the same rows.  How they read memory is not
 * asked here. */
static bool row_blocks(const nest *nests, int n)
{
    if (n < 2)
        return false;
    const nest *y = &nests[n - 1];
    const ir_stmt *yst = y->block->nbody == 1 ? y->block->body[0] : NULL;
    if (y->n < 2 || !all_spatial(y->block) || !yst || yst->kind != IR_S_STORE ||
        yst->buf->role == IR_BUF_LOCAL)
        return false;
    int reductions = 0;
    for (int i = 0; i < n - 1; i++) {
        const ir_stmt *b = nests[i].block, *st = b->nbody == 1 ? b->body[0] : NULL;
        if (!st || st->kind != IR_S_STORE || st->buf->role != IR_BUF_LOCAL)
            return false;
        if (b->init && innermost_reduce(&nests[i]) && st->buf->ndim == yst->buf->ndim - 1)
            reductions++;
        else if (!all_spatial(b) || st->buf->ndim != yst->buf->ndim)
            return false;
    }
    return reductions > 0;
}

/* Whether the function is a row kernel (row_blocks) whose every block
 * reads and writes along its rows. */
static bool row_kernel(const nest *nests, int n, int lanes)
{
    if (!row_blocks(nests, n))
        return false;
    /* rows of 2 vectors or more, a scalar tail or not: ViT-B/16's rows of
     * 197, 410 to 250 us (bench/results/rows_s14.txt); a layer norm over 96
     * channels (Swin-T's and ConvNeXt-T's first stage) as a row kernel takes
     * as long as its five ONNX nodes, and as one kernel that is not a row
     * kernel 1.5 times that (bench/results/norm_s16.txt).  Short rows with a
     * tail (Swin-T's attention, rows of 49: 3 vectors and 1) were left to
     * the other schedules when they measured slower as row kernels
     * (rows_s14: 124 to 187 us), on shifted windows whose masked scores
     * made subnormal exponentials; with exp flushing those (emit_vmath.c)
     * the other schedules' whole-tensor passes through a temporary in
     * memory lose: Swin-T's softmax on 64 x 3 x 49 rows of 49, 630 to 380
     * us alone, in the model 0.78 of the time on one thread and 0.75 on two
     * (bench/results/rows_s26.txt) */
    const nest *y = &nests[n - 1];
    int64_t row = sch_extent(y->loops[y->n - 1]);
    if (row < 2 * lanes)
        return false;
    for (int i = 0; i < n; i++)
        if (!along_rows(&nests[i]))
            return false;
    return true;
}

typedef struct row_results {
    const ir_var *row, *position, *column;
    bool ok;
} row_results;

/* ir_expr_walk's visitor of row_column_kernel: clears ok at a load of a
 * local (a row's reduction) that the output reads at its row's elements, or
 * not at its position and column. */
static bool row_result_visit(const ir_expr *e, void *p)
{
    row_results *r = p;
    if (e->kind != IR_LOAD || e->buf->role != IR_BUF_LOCAL)
        return true;
    bool position = false, column = false;
    for (int i = 0; i < e->nargs; i++) {
        r->ok = r->ok && !uses(e->args[i], r->row);
        position |= uses(e->args[i], r->position);
        column |= uses(e->args[i], r->column);
    }
    r->ok = r->ok && position && column;
    return true;
}

/* Whether the function is a row kernel (row_blocks) whose blocks before
 * the output's read along the loop just outside the rows instead, a
 * column of rows apart (the positions of a map whose channels are the
 * rows: ConvNeXt's layer norms, over the channels of a permuted NCHW
 * map); the output reads the rows' results at its loops around the rows
 * (so one iteration of the loop around the column needs the column's
 * results alone), and the rows of one column (a map's row of positions)
 * fit in 3/4 of the level-1 cache. */
static bool row_column_kernel(const nest *nests, int n, int64_t l1d)
{
    if (!row_blocks(nests, n))
        return false;
    const nest *y = &nests[n - 1];
    if (y->n < 3)
        return false;
    for (int i = 0; i < n - 1; i++)
        if (!along_loop(&nests[i], 2))
            return false;
    const ir_itervar *row = iter_of(y->block, y->loops[y->n - 1]),
                     *position = iter_of(y->block, y->loops[y->n - 2]),
                     *column = iter_of(y->block, y->loops[y->n - 3]);
    if (!row || !position || !column)
        return false;
    row_results r = {row->var, position->var, column->var, true};
    ir_expr_walk(y->block->body[0]->value, row_result_visit, &r);
    if (!r.ok)
        return false;
    int64_t tile = sch_extent(y->loops[y->n - 1]) * sch_extent(y->loops[y->n - 2]) *
                   ir_dtype_size(y->block->body[0]->buf->dtype);
    return tile > 0 && 4 * tile <= 3 * l1d;
}

/* The loops of the nest that holds block b now, found by name of its
 * innermost loop. */
static bool nest_in(auto_ctx *a, const char *block, nest *out)
{
    nest cur = {.n = 0};
    nest *all = malloc(sizeof *all * 256);
    int n = 0;
    bool found = false;
    if (!all)
        return false;
    auto_collect(a->f->body, &cur, all, &n, 256);
    for (int i = 0; i < n && !found; i++)
        if (strcmp(all[i].block->name, block) == 0) {
            *out = all[i];
            found = true;
        }
    free(all);
    return found;
}

/* Restores the function and the schedule text as they were before a
 * kernel's steps that a primitive refused. */
static void undo_steps(auto_ctx *a, ir_stmt *saved, size_t len)
{
    a->f->body = saved;
    a->len = len;
    if (a->text)
        a->text[len] = 0;
    a->nlate_steps = 0;
}

/* The outermost of the output's loops outside its last `inner` ones with an
 * iteration per thread or more runs in parallel.  False when it refused. */
static bool parallel_rows(auto_ctx *a, const nest *y, int inner)
{
    for (int k = 0; k < y->n - inner; k++)
        if (sch_extent(y->loops[k]) > 1 && sch_extent(y->loops[k]) >= a->threads)
            return auto_step(a, "parallel(%s)", y->loops[k]->var->name);
    return true;
}

/* How many partial results a reduction along a row of `extent` keeps: 1, 2
 * or 4 vectors' lanes, whichever makes the fewest steps of the two chains
 * of adds (or maxima) the row waits for, one step per vector along the row
 * for each lane and one per partial in the write-back that combines them
 * (scalar): ceil(extent / f) + f.  A layer norm over rows of 768 (ViT-B/16's,
 * GPT-2's) 55 us with 4 vectors' (64 partials, the rule before: 4 vectors
 * for rows of 32 vectors or more), 47 with 2, 49 with 1; a softmax over rows
 * of 197, 226 us with 1 vector's, 290 with 2 (bench/results/rows_s26.txt). */
static int64_t row_partials(int64_t extent, int lanes)
{
    int64_t f = lanes;
    for (int64_t c = 2 * (int64_t)lanes; c <= 4 * (int64_t)lanes; c *= 2)
        if ((extent + c - 1) / c + c < (extent + f - 1) / f + f)
            f = c;
    return f;
}

/* The steps that give reduction `block` partial results in vectors along
 * its innermost loop `inner`: the loop split into row_partials' lanes,
 * rfactor on them, the partials initialized before loop `outer` (NULL:
 * the split's outer loop) and combined after the nest (the final block's
 * init decomposed out), both vectorized; a tail partitioned off after
 * every nest's schedule.  False when a primitive refused. */
static bool partial_lanes(auto_ctx *a, const char *block, const ir_stmt *inner, const char *outer)
{
    const char *j = inner->var->name;
    int64_t extent = sch_extent(inner), f = row_partials(extent, a->lanes);
    const char *jo = auto_fresh(a, ir_sprintf(a->m->arena, "%s_o", j));
    const char *ji = auto_fresh(a, ir_sprintf(a->m->arena, "%s_i", j));
    bool ok = auto_step(a, "%s, %s = split(%s, %lld)", jo, ji, j, (long long)f) &&
              auto_step(a, "rfactor(%s, %s)", block, ji) &&
              auto_step(a, "decompose_reduction(%s_rf, %s)", block, outer ? outer : jo) &&
              auto_step(a, "decompose_reduction(%s, %s_wb)", block, ji) &&
              auto_step(a, "vectorize(%s_init)", ji) && auto_step(a, "vectorize(%s)", ji);
    if (ok && extent % f)
        auto_step_late(a, ir_sprintf(a->m->arena, "partition(%s)", jo));
    return ok;
}

/* A row kernel as one loop over the rows: every block before the output's
 * is computed in the output's loop over the rows (compute_at, the last
 * first), so a row is read from memory once and its reductions and
 * elementwise passes run over it in the level-1 cache, instead of one pass
 * over the whole tensor per block with temporaries in memory between
 * them.  Each reduction along the row is factored into partial results of
 * 1, 2 or 4 vectors' lanes (row_partials: independent sums), kept for
 * that row alone on the stack (rfactor inside the row),
 * its init decomposed out; the inner loops are vectorized, and the
 * outermost loop around the rows with work for every thread runs in
 * parallel.  False, with the function as it was, when a primitive refuses. */
static bool schedule_row_kernel(auto_ctx *a, const nest *nests, int n)
{
    if (!row_kernel(nests, n, a->lanes))
        return false;
    ir_module *m = a->m;
    const nest *y = &nests[n - 1];
    const char *row = y->loops[y->n - 2]->var->name;
    const char *names[64];
    int nb = 0;
    for (int i = 0; i < n && nb < 64; i++)
        names[nb++] = nests[i].block->name;
    if (nb != n)
        return false;
    ir_stmt *saved = ir_stmt_copy(m, a->f->body);
    size_t len = a->len;
    bool ok = true;
    for (int i = n - 2; i >= 0 && ok; i--)
        ok = auto_step(a, "compute_at(%s, %s)", names[i], row);
    for (int i = 0; i < n && ok; i++) {
        nest ns;
        ok = nest_in(a, names[i], &ns) && ns.n >= 1;
        if (!ok)
            break;
        const ir_stmt *inner = ns.loops[ns.n - 1];
        const char *j = inner->var->name;
        int64_t extent = sch_extent(inner);
        if (!ns.block->init) {
            ok = auto_step(a, "vectorize(%s)", j);
            continue;
        }
        if (extent < a->lanes) {   /* a short row: a scalar reduction */
            ok = auto_step(a, "decompose_reduction(%s, %s)", names[i], j);
            continue;
        }
        ok = partial_lanes(a, names[i], inner, NULL);
    }
    /* threads: the outermost loop around the rows with an iteration per
     * thread or more */
    ok = ok && parallel_rows(a, y, 1);
    if (!ok)
        undo_steps(a, saved, len);
    return ok;
}

/* A row column kernel (row_column_kernel) as one loop over the output's
 * iterations around its columns of rows (a map's row of positions): every
 * block before the output's is computed there (compute_at, the last first),
 * each reduction with its vectors along the column (its reduce loop
 * outside, the init decomposed out) as the default schedule has them, so
 * that the column's rows, read there once from memory, are in the
 * level-1 cache when the output's vectors along the rows gather them.
 * The default schedule runs each block over the whole tensor instead:
 * ConvNeXt-T's first-stage norm, 56 x 56 positions of 96 channels, 174 to
 * 121 us at one thread, 768 channels on 7 x 7: 29 to 17 us, where the
 * output's gathers missed the cache (bench/results/attn_s17.txt).  False,
 * with the function as it was, when a primitive refuses. */
static bool schedule_row_column_kernel(auto_ctx *a, const nest *nests, int n)
{
    if (!row_column_kernel(nests, n, a->l1d))
        return false;
    const nest *y = &nests[n - 1];
    const char *column = y->loops[y->n - 3]->var->name;
    const char *names[64];
    if (n > 64)
        return false;
    for (int i = 0; i < n; i++)
        names[i] = nests[i].block->name;
    ir_stmt *saved = ir_stmt_copy(a->m, a->f->body);
    size_t len = a->len;
    bool ok = true;
    for (int i = n - 2; i >= 0 && ok; i--)
        ok = auto_step(a, "compute_at(%s, %s)", names[i], column);
    for (int i = 0; i < n - 1 && ok; i++) {
        nest ns;
        ok = nest_in(a, names[i], &ns) && ns.n >= 2;
        if (!ok)
            break;
        const char *inner = ns.loops[ns.n - 1]->var->name, *along = ns.loops[ns.n - 2]->var->name;
        ok = auto_step(a, "reorder(%s, %s)", inner, along);
        if (ok && ns.block->init)
            ok = auto_step(a, "decompose_reduction(%s, %s)", names[i], inner) &&
                 auto_step(a, "vectorize(%s_init)", along);
        ok = ok && auto_step(a, "vectorize(%s)", along);
    }
    ok = ok && auto_step(a, "vectorize(%s)", y->loops[y->n - 1]->var->name) && parallel_rows(a, y, 2);
    if (!ok)
        undo_steps(a, saved, len);
    return ok;
}

/* ------------------------------------------------- reductions into one value */

/* Whether block b of nest ns is a reduction into one value per call: an
 * init and one update Y[..] = Y[..] op e (op +, max or min) of f32, f64
 * or i32 (the dtypes with vectors; integers wrap in any order, so their
 * sums stay exact), every loop of the nest bound to a reduce variable of
 * its own (no loop around the reduction: a sum of a whole tensor, a
 * softmax's or a layer norm's over the one row of a batch of one, whose
 * loop of extent 1 simplify removed), its innermost loop read along
 * contiguously. */
static bool lone_reduction(const nest *ns)
{
    const ir_stmt *b = ns->block, *st = b->nbody == 1 ? b->body[0] : NULL;
    if (!b->init || !st || st->kind != IR_S_STORE || !st->value || ns->n < 1)
        return false;
    ir_dtype t = st->buf->dtype;
    const ir_expr *v = st->value;
    if ((t != IR_F32 && t != IR_F64 && t != IR_I32) ||
        (v->kind != IR_ADD && v->kind != IR_MAX && v->kind != IR_MIN))
        return false;
    int reduce = 0;
    for (int i = 0; i < b->niters; i++)
        reduce += b->iters[i].kind == IR_ITER_REDUCE;
    for (int i = 0; i < ns->n; i++) {
        const ir_itervar *it = iter_of(b, ns->loops[i]);
        if (!it || it->kind != IR_ITER_REDUCE)
            return false;
    }
    return reduce == ns->n && along_rows(ns);
}

/* A reduction into one value (lone_reduction) runs as one chain of adds
 * (or maxima), each waiting for the one before: a sum of 300000 floats
 * 180 us, a maximum 265 (on one thread).  Its loops are merged where its
 * reads allow, and the innermost, 2 vectors long or more, gets vectors of
 * partial results (partial_lanes: 1, 2 or 4 vectors' lanes of independent
 * chains, as a row kernel's reductions), initialized before the nest and
 * combined after it in a fixed order (a run repeats its result): 17 us
 * each (bench/results/rowred_s28.txt).  True when a step applied; a step
 * the primitives refuse ends the block's schedule with the steps before
 * it, as everywhere here. */
static bool schedule_lone_reduction(auto_ctx *a, const nest *ns)
{
    if (!lone_reduction(ns))
        return false;
    size_t len = a->len;
    /* a whole tensor's loops merged into one where its rows are contiguous
     * (a sum over a 6 x 80 input: one chain of vectors along 480) */
    nest merged = *ns;
    while (merged.n >= 2) {
        const char *lo = merged.loops[merged.n - 2]->var->name, *li = merged.loops[merged.n - 1]->var->name;
        if (!auto_step(a, "%s = merge(%s, %s)", auto_fresh(a, ir_sprintf(a->m->arena, "%s%s", lo, li)), lo, li) ||
            !auto_nest_of(a, ns->block, &merged))
            break;
    }
    /* the partials' init before the outermost loop of the nest */
    if (sch_extent(merged.loops[merged.n - 1]) >= 2 * a->lanes)
        partial_lanes(a, merged.block->name, merged.loops[merged.n - 1],
                      merged.n > 1 ? merged.loops[0]->var->name : NULL);
    return a->len != len;
}

bool pass_autoschedule(ir_module *m, diag *d)
{
    (void)d;
    cg_target t;
    if (pass_target())
        t = *pass_target();
    else
        cg_target_native(&t);
    for (int fi = 0; fi < m->nfuncs; fi++) {
        ir_func *f = m->funcs[fi];
        if (has_attr(f, "scheduled") || has_attr(f, "schedule_auto") || !f->body ||
            is_prepack(f))
            continue;
        auto_ctx a = {.m = m, .f = f, .lanes = cg_target_lanes(&t, 4), .threads = t.cores,
                      .l1d = t.l1d > 0 ? t.l1d : 32768,
                      .l2 = t.l2 > 0 ? t.l2 : 1 << 20};
        diag_init(&a.quiet, NULL);   /* refusals are counted, not shown */
        a.quiet.max_errors = 1;
        nest cur = {.n = 0};
        nest nests[256];
        merge_like_producer(&a);
        regroup_all(&a);
        pad_inputs(&a);
        int nn = 0;
        auto_collect(f->body, &cur, nests, &nn, 256);
        if (schedule_row_kernel(&a, nests, nn) || schedule_row_column_kernel(&a, nests, nn))
            nn = 0;

        for (int i = 0; i < nn; i++) {
            /* the nest as it is now: a merge in an earlier nest's schedule
             * merges the loops of the blocks that share its buffers along
             * (a norm's mean merged its map's rows and columns, and its
             * variance's nest, collected before, named loops that were
             * gone: no schedule applied, one scalar chain per channel) */
            nest_in(&a, nests[i].block->name, &nests[i]);
            double cost;
            int k = choose_tile(&a, &nests[i], &cost);
            /* a 1x1 convolution on a map whose rows do not split into
             * vectors (28x28, 40 -> 120 channels: columns along the 120
             * channels, a tail of 8 and a transposed write-back) runs
             * along the merged map instead (784 = 49 vectors) when that
             * is better by a twentieth (its write-back along Y's rows is
             * a tenth of a DenseNet 1x1 convolution's time, 160 -> 128 on
             * 56x56: transposed, 1174 to 1312 us on one thread) */
            a.merge_cost = -1;
            a.merge_outer = NULL;
            schedule_contraction(&a, &nests[i], false, true, true);
            bool rows = k < 4 && (k & 1) && a.merge_outer && merge_rows_pays(&a, &nests[i]);
            if ((a.merge_cost > 0 && (k == 4 || a.merge_cost * 1.05 < cost)) || rows) {
                const char *mo = a.merge_outer, *mi = a.merge_inner;
                ir_stmt *blk = nests[i].block;
                if (auto_step(&a, "%s = merge(%s, %s)", auto_fresh(&a, ir_sprintf(m->arena, "%s%s", mo, mi)), mo, mi) &&
                    auto_nest_of(&a, blk, &nests[i]))
                    k = choose_tile(&a, &nests[i], &cost);
            }
            if (k < 4 && schedule_contraction(&a, &nests[i], k & 1, k >= 2, false))
                continue;
            /* A matrix-vector product with a weight matrix of short rows:
             * its columns packed once, at load, into panels that the
             * product streams through in one pass */
            if (k == 4 && weight_matrix(&a, &nests[i]) && schedule_gemv(&a, &nests[i]))
                continue;
            if (k == 4 && (schedule_dot(&a, &nests[i]) || schedule_gemv(&a, &nests[i]) ||
                           schedule_rows(&a, &nests[i]) || schedule_lone_reduction(&a, &nests[i])))
                continue;
            /* an elementwise block after a contraction (a bias): computed in
             * the tile's write-back */
            const char *bn = nests[i].block->name;
            bool local = false;
            for (int r = 0; r < nests[i].block->nreads; r++)
                local |= nests[i].block->reads[r]->role == IR_BUF_LOCAL;
            if (local && auto_step(&a, "reverse_compute_inline(%s)", bn))
                continue;
            if (schedule_depthwise(&a, &nests[i]))
                continue;
            schedule_simple(&a, &nests[i]);
        }
        for (int i = 0; i < a.nlate_steps; i++)
            auto_step(&a, "%s", a.late_steps[i]);
        align_copy_threads(&a);
        pad_late(&a);
        sch_update_blocks(m, f->body);
        if (a.text && a.len)
            ir_func_set_attr(m, f, "schedule_auto", ir_strndup(m->arena, a.text, a.len - 1));
        free(a.text);
        diag_fini(&a.quiet);
    }
    return true;
}
