/* passes/schedule/auto.h — what the automatic scheduler's files share:
 * the state of one function's scheduling (auto_ctx), the perfect loop nest
 * of a block, the steps' recorder, and the small readers of a block's
 * loads.  auto.c classifies each block and dispatches; auto_contraction.c
 * schedules contractions and matrix-vector products; auto_window.c
 * everything else (elementwise, pooling, normalization, depthwise
 * convolution) and the padding of guarded inputs.  Internal to those
 * three files. */
#ifndef TEC_PASSES_SCHEDULE_AUTO_H
#define TEC_PASSES_SCHEDULE_AUTO_H

#include "ir/arith.h"
#include "ir/target.h"
#include "passes/passes.h"
#include "passes/schedule/int8.h"
#include "passes/schedule/schedule.h"

/* Registers of the target that the register tile may take. */
#define TILE_MAX_VECTORS 24

typedef struct auto_ctx {
    ir_module *m;
    ir_func *f;
    diag quiet;            /* refusals are not errors here */
    int lanes;             /* f32 lanes of a vector */
    int threads;
    int64_t l1d;           /* bytes of level-1 data cache */
    int64_t l2;            /* bytes of one core's level-2 cache */
    char *text;            /* the schedule, as text */
    size_t len, cap;
    int nnames;            /* counter for fresh names */
    const ir_buffer *vector_operand;   /* of the last contraction checked */
    int64_t vector_columns;            /* its extent along the vectors */
    double tile_score;                 /* its register tile's efficiency */
    double tile_cost;                  /* its time per output element */
    double pack_cost;                  /* and of packing an activation's panels, per output */
    /* the tile's time per output element if the two loops of the vector
     * operand's columns were merged (-1: they cannot be), and their names */
    double merge_cost;
    const char *merge_outer, *merge_inner;
    /* inputs of window reductions, padded after their schedule (pad_late) */
    const ir_buffer *late_pad[8];
    int nlate_pad;
    /* steps applied after every nest's schedule (tails' partitions and
     * their threads): a bias block after a contraction is first computed
     * in the tile's write-back (reverse_compute_inline needs T's one
     * store, which a partition makes two) */
    const char *late_steps[16];
    int nlate_steps;
    /* whole padded copies of inputs (pad_inputs) whose threads are chosen
     * after every nest's schedule, when their readers' are known
     * (align_copy_threads), with the loop their own nest would run in
     * parallel (NULL: none) */
    const char *whole_copy[8];
    const char *whole_copy_loop[8];
    int nwhole_copies;
} auto_ctx;

typedef struct nest {
    ir_stmt *loops[32];    /* outermost first, each the only statement of the one before */
    int n;
    ir_stmt *block;
} nest;

static inline bool uses(const ir_expr *x, const ir_var *v) { return x && ir_expr_uses_var(x, v); }

/* The load an operand of a contraction's product reads: the load itself,
 * or under a widening cast and a constant zero point (int8 contractions
 * accumulating in i32: cast<i32>(x[..]) - 3); *guarded when the load is
 * the arm of a padding select. */
static inline const ir_expr *unguarded_load(const ir_expr *x, bool *guarded)
{
    if (x->kind == IR_SUB && x->b->kind == IR_INT && !ir_dtype_is_float(x->dtype))
        x = x->a;
    if (x->kind == IR_CAST && !ir_dtype_is_float(x->dtype) && x->a && !ir_dtype_is_float(x->a->dtype))
        x = x->a;
    else if (x->kind == IR_CAST && x->dtype == IR_F32 && x->a && x->a->dtype == IR_BF16)
        x = x->a;   /* a bf16 operand, widened (bf16 contractions summed in f32) */
    if (x->kind == IR_LOAD)
        return x;
    if (x->kind == IR_SELECT && x->a->kind == IR_LOAD &&
        (x->b->kind == IR_FLOAT || x->b->kind == IR_INT)) {
        *guarded = true;
        return x->a;
    }
    return NULL;
}

static inline bool load_uses_expr(const ir_expr *x, const ir_var *v) { return x && ir_expr_uses_var(x, v); }

static inline bool load_uses(const ir_expr *ld, const ir_var *v)
{
    for (int i = 0; i < ld->nargs; i++)
        if (uses(ld->args[i], v))
            return true;
    return false;
}

static inline int64_t extent(const ir_stmt *l) { return sch_extent(l); }

/* The iteration variable bound to loop l in block b (bindings are plain
 * loop variables after simplify), or NULL. */
static inline const ir_itervar *iter_of(const ir_stmt *b, const ir_stmt *l)
{
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].binding->kind == IR_VAR && b->iters[i].binding->var == l->var)
            return &b->iters[i];
    return NULL;
}

/* auto.c */
const char *auto_fresh(auto_ctx *a, const char *base);
bool auto_step(auto_ctx *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A step after every nest's schedule, in order (auto_ctx.late_steps). */
void auto_step_late(auto_ctx *a, const char *step);
/* partition(loop, at), so. */
void auto_partition_late(auto_ctx *a, const char *loop, int64_t at);
void auto_collect(ir_stmt *s, nest *cur, nest *out, int *nout, int max);
bool auto_nest_of(auto_ctx *a, const ir_stmt *b, nest *out);
bool auto_is_weight(const ir_module *m, const ir_func *f, const ir_buffer *b);

/* auto_contraction.c */
bool schedule_contraction(auto_ctx *a, nest *ns, bool swap, bool tails, bool check_only);
/* Whether a contraction tiled with its weight in vectors gains by merging
 * its map's rows and columns (a 1x1 convolution on a channels-first 7x7
 * map: 14 rows of the merged map where a row held 7, auto_contraction.c). */
bool merge_rows_pays(const auto_ctx *a, const nest *ns);
bool schedule_rows(auto_ctx *a, nest *ns);
bool schedule_dot(auto_ctx *a, nest *ns);
bool schedule_gemv(auto_ctx *a, nest *ns);
bool weight_matrix(auto_ctx *a, nest *ns);

/* auto_window.c */
bool schedule_depthwise(auto_ctx *a, nest *ns);
void schedule_simple(auto_ctx *a, nest *ns);
void merge_like_producer(auto_ctx *a);
void pad_inputs(auto_ctx *a);
void pad_late(auto_ctx *a);
void align_copy_threads(auto_ctx *a);

#endif
