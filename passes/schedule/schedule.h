/* passes/schedule/schedule.h — schedule primitives and the schedule
 * language.
 *
 * A schedule is a list of primitive applications (split, reorder, fuse,
 * vectorize, unroll, parallel, decompose_reduction, rfactor, cache_read,
 * cache_write, pad, compute_inline, reverse_compute_inline, compute_at,
 * reverse_compute_at, partition, regroup, merge) on one IR function.  Each primitive is an
 * IR -> IR function that checks its own legality: one that cannot prove
 * itself safe reports a located error and leaves the function unchanged,
 * so no schedule can change a result.  Loops are named by their loop variables, blocks by
 * their names, as `tec --emit=tir` prints them.
 *
 * The user writes schedules in .te (`schedule NAME { ... }`, which the
 * frontend stores in the function's "schedule" attribute with its source
 * location in "schedule_loc"); the `schedule` pass parses and applies them.
 * doc/schedule.md is the reference.
 */
#ifndef TEC_SCHEDULE_H
#define TEC_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/diag.h"
#include "ir/arith.h"
#include "ir/ir.h"
#include "ir/target.h"

#define SCH_KINDS(X)                                          \
    X(SPLIT, "split", 2, 2)                                   \
    X(FUSE, "fuse", 2, 1)                                     \
    X(REORDER, "reorder", -1, 0)                              \
    X(VECTORIZE, "vectorize", 1, 0)                           \
    X(UNROLL, "unroll", 1, 0)                                 \
    X(PARALLEL, "parallel", 1, 0)                             \
    X(DECOMPOSE_REDUCTION, "decompose_reduction", 2, 0)       \
    X(CACHE_READ, "cache_read", 2, 1)                         \
    X(CACHE_WRITE, "cache_write", 2, 1)                       \
    X(PAD, "pad", -1, 1)                                       \
    X(REVERSE_COMPUTE_INLINE, "reverse_compute_inline", 1, 0) \
    X(COMPUTE_INLINE, "compute_inline", 1, 0)                 \
    X(RFACTOR, "rfactor", 2, 0)                               \
    X(COMPUTE_AT, "compute_at", 2, 0)                         \
    X(REVERSE_COMPUTE_AT, "reverse_compute_at", 2, 0) \
    X(PARTITION, "partition", -1, 0)                          \
    X(REGROUP, "regroup", 2, 2)                               \
    X(MERGE, "merge", 2, 1)

/* X(ENUM, name, number of arguments (-1: one or more), number of results) */
typedef enum {
#define X(e, n, a, r) SCH_##e,
    SCH_KINDS(X)
#undef X
    SCH_NKINDS
} sch_kind;

/* One primitive application: `io, ii = split(i, 6)`.  Arguments are names
 * (loops, blocks, buffers) or integers (split's factor). */
typedef struct sch_step {
    sch_kind kind;
    const char **args;      /* names; NULL where the argument is an integer */
    int64_t *ints;          /* integer arguments */
    int nargs;
    const char **results;   /* names given to what the primitive creates */
    int nresults;
    diag_loc loc;           /* of the primitive's name, for errors */
} sch_step;

typedef struct sch_list {
    sch_step *steps;
    int n, cap;
} sch_list;

const char *sch_kind_name(sch_kind k);

/* Parses schedule text whose first character is at `start` (file, line,
 * column) into steps allocated in m's arena.  Reports every syntax error
 * with its location; false if there was one. */
bool sch_parse(ir_module *m, const char *text, diag_loc start, sch_list *out, diag *d);

/* Applies one step to f; false after a located error (f is unchanged). */
bool sch_apply_step(ir_module *m, ir_func *f, const sch_step *s, diag *d);

/* Prints steps in the schedule language, one per line, with `indent` spaces. */
void sch_print(FILE *out, const sch_list *l, int indent);

/* ---------------------------------------------------------------- shared by the primitives */

/* The statement slots from the function body down to a statement: slot[0]
 * is &f->body, slot[k+1] a child slot of *slot[k]. */
typedef struct sch_path {
    ir_stmt **slot[128];
    int n;
} sch_path;

typedef struct sch_ctx {
    ir_module *m;
    ir_func *f;
    diag *d;
    diag_loc loc;
} sch_ctx;

void sch_error(sch_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The path to the loop whose variable is `name` (error naming the loops
 * there are when there is none). */
bool sch_find_loop(sch_ctx *c, const char *name, sch_path *p);
/* The path to the block `name`. */
bool sch_find_block(sch_ctx *c, const char *name, sch_path *p);
/* Whether a loop, let or iteration variable of f is called `name`. */
bool sch_name_used(const ir_func *f, const char *name);
/* The constant trip count of a loop with constant bounds, or -1. */
int64_t sch_extent(const ir_stmt *loop);
/* Replaces every load and store of `from` in s by `to` with indices
 * idx (shared, copied per use). */
void sch_replace_access(ir_module *m, ir_stmt *s, const ir_buffer *from, ir_buffer *to,
                        ir_expr **idx, int nidx);
/* Whether c is a conjunction of tests that the load ld's indices are inside
 * its buffer (`e >= 0`, `0 <= e`, `e < n`, `e <= n - 1`, `n > e`): the
 * guard of a read that pad() and the layout pass recognise. */
bool sch_is_bounds_test(const ir_expr *c, const ir_expr *ld);
/* Recomputes reads/writes of every block under s. */
void sch_update_blocks(ir_module *m, ir_stmt *s);
/* x with every block iteration variable of the blocks on path p replaced by
 * its binding: an expression of loop variables. */
ir_expr *sch_unbind(ir_module *m, const sch_path *p, const ir_expr *x);

/* Affine forms and ranges are ir/arith.h's (ir_affine_of, ir_bounds,
 * ir_always). */
#define SCH_RANGES_MAX 128

/* Unrolling: codegen copies the body of an unrolled loop with constant
 * bounds and at most CG_UNROLL_COPIES iterations (ir/target.h, the one
 * limit codegen and the schedule language share); a schedule step after
 * which a function would expand to more than SCH_UNROLL_MAX statements
 * that way is refused (lang.c), so nested unrolls cannot write megabytes
 * of C. */
#define SCH_UNROLL_MAX 16384
/* The ranges of the loops with constant bounds among the first `upto`
 * statements of p. */
void sch_path_ranges(const sch_path *p, int upto, ir_var_range *r, int *n);
/* Whether a block under s is called name. */
bool sch_block_named(const ir_stmt *s, const char *name);
/* x as the printer writes it (for diagnostics). */
const char *sch_expr_text(ir_module *m, const ir_expr *x);
/* base, or base_1, base_2, ...: the first name f does not use. */
const char *sch_fresh_name(ir_module *m, const ir_func *f, const char *base);

/* The primitives (one file per family). */
bool sch_split(sch_ctx *c, const char *loop, int64_t factor, const char *outer, const char *inner);
/* split, and every block iteration variable bound to the loop split alike
 * (the factor must divide the loop). */
bool sch_regroup(sch_ctx *c, const char *loop, int64_t factor, const char *outer, const char *inner);
/* The loops `outer` (*a, at the end of path p) and `inner` (*b), which
 * must be the only statement of `outer`; else an error "cannot WHAT ...". */
bool sch_loop_pair(sch_ctx *c, const char *what, const char *outer, const char *inner,
                   sch_path *p, ir_stmt **a, ir_stmt **b);
bool sch_fuse(sch_ctx *c, const char *outer, const char *inner, const char *fused);
/* fuse, and the two buffer dimensions the loops index become one
 * (passes/schedule/merge.c) */
bool sch_merge(sch_ctx *c, const char *outer, const char *inner, const char *merged);
bool sch_reorder(sch_ctx *c, const char **loops, int n);
bool sch_set_kind(sch_ctx *c, const char *loop, ir_for_kind kind);
bool sch_decompose_reduction(sch_ctx *c, const char *block, const char *loop);
bool sch_cache_read(sch_ctx *c, const char *buffer, const char *loop, const char *name);
bool sch_cache_write(sch_ctx *c, const char *block, const char *loop, const char *name);
/* last_dim >= 0: the copy stores that dimension of the buffer innermost
 * (the others keep their order); -1 keeps the buffer's order.  at (or
 * NULL): the copy is made at the start of each iteration of that loop, of
 * what the iteration reads. */
bool sch_pad(sch_ctx *c, const char *buffer, int64_t last_dim, const char *at, const char *name);
bool sch_reverse_compute_inline(sch_ctx *c, const char *block);
bool sch_compute_inline(sch_ctx *c, const char *block);
bool sch_rfactor(sch_ctx *c, const char *block, const char *loop);
bool sch_compute_at(sch_ctx *c, const char *block, const char *loop, bool reverse);
/* partition(l, P), or with `automatic` partition(l): P is the first
 * iteration where a guard inside l may fail (no change when there is none). */
bool sch_partition(sch_ctx *c, const char *loop, int64_t point, bool automatic);

/* The `schedule` pass: applies every function's "schedule" attribute and
 * marks the function `scheduled = "user"`. */
bool pass_schedule(ir_module *m, diag *d);
/* The `autoschedule` pass (passes/schedule/auto.c): a schedule for every
 * function that has none, kept in its "schedule_auto" attribute. */
bool pass_autoschedule(ir_module *m, diag *d);

#endif
