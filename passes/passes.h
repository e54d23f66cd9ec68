/* passes/passes.h — the pass manager and the passes over tec's loop IR.
 *
 * A pass is a function that rewrites a module in place.  Every pass is listed
 * once in registry.c's table (name, function, one-line description); the
 * driver composes them into pipelines by name, either one of the -O levels'
 * pipelines or a user's --passes=a,b,c.
 *
 * A pass never rejects a user's program: by the time the passes run the
 * module has been verified, so a pass that cannot do its job has hit a bug in
 * tec and says so with diag_internal(d, "PASS", ...) before returning false.
 */
#ifndef TEC_PASSES_H
#define TEC_PASSES_H

#include <stdbool.h>
#include <stdio.h>

#include "ir/diag.h"
#include "ir/ir.h"

/* Returns false only after reporting an internal error through d. */
typedef bool (*pass_fn)(ir_module *m, diag *d);

/* One registered pass. */
typedef struct pass_info {
    const char *name;          /* what --passes and --dump-ir call it */
    pass_fn run;
    const char *description;   /* one line, for --list-passes */
} pass_info;

const pass_info *pass_lookup(const char *name);   /* NULL if unknown */
const pass_info *pass_table(int *n);              /* every pass, in table order */
/* The comma-separated pipeline of -O0..-O3 (levels above 3 act as 3, below
 * 0 as 0). */
const char *pass_pipeline(int opt_level);

/* The passes of -O0..-O3 that make what the C emitter (and --emit=tir)
 * prints of the optimized IR: "vectorize" (the loops marked vectorized, by
 * a schedule or the automatic scheduler, as vector IR), then "simplify"
 * from -O1; they run after every analysis of the scalar IR (the profile's
 * counts, the accelerator model, the schedulers' graph), on the copy
 * pass_lower_for_emit makes. */
const char *pass_emit_pipeline(int opt_level);

/* How pass_run_pipeline shows its work. */
typedef struct pass_options {
    const char *dump_ir;    /* NULL, "all", or comma-separated pass names:
                               print the IR after those passes to dump_out;
                               "schedule-steps": after each schedule step */
    FILE *dump_out;         /* stderr in the CLI; NULL means stderr */
    const char *dump_dir;   /* NULL, or a directory (created if missing):
                               <base>.00.input.tir, then
                               <base>.<NN>.<pass>.tir after pass NN */
    const char *base;       /* module base name for dump files; NULL: the
                               module's name */
    bool verify_each;       /* run ir_verify after every pass */
    const struct cg_target *target;   /* the machine the code is for (autoschedule);
                                         NULL: this one */
} pass_options;

/* The target of the pipeline being run (pass_options.target), or NULL. */
const struct cg_target *pass_target(void);
/* A copy of that target, or of this machine's when there is none. */
void pass_target_or_native(struct cg_target *t);
/* Where the `schedule` pass prints the function after each step of a
 * written schedule (--dump-ir=schedule-steps), or NULL. */
FILE *pass_step_dump(void);
#define PASS_DUMP_SCHEDULE_STEPS "schedule-steps"

/* Runs a comma-separated pipeline ("" runs nothing).  Every name, in the
 * pipeline and in o->dump_ir, is checked before anything runs; an unknown
 * one is a usage error:
 *     tec: error: unknown pass 'foo' (see tec --list-passes)
 * Returns false after reporting an error (unknown pass, unwritable dump file,
 * a pass's internal error, a verifier failure). o may be NULL. */
bool pass_run_pipeline(ir_module *m, const char *pipeline, const pass_options *o,
                       diag *d);
/* A copy of m's functions after `pipeline` (pass_emit_pipeline), for the C
 * emitter and --emit=tir, while m keeps the IR that the analyses read.  The
 * copy has its own arena and function bodies; buffers, variables, attributes
 * and the graph's buffers are m's, so m must outlive it (free it with
 * ir_module_free).  The pipeline may rewrite function bodies only (as
 * vectorize does).  NULL after reporting an error. */
ir_module *pass_lower_for_emit(const ir_module *m, const char *pipeline, const pass_options *o,
                               diag *d);
/* The same check of the names alone (either list may be NULL), for the
 * command line to refuse an unknown one as a usage error before any work. */
bool pass_check_names(const char *pipeline, const char *dump_ir, diag *d);

/* ---------------------------------------------------------------- the passes */

bool pass_simplify(ir_module *m, diag *d);   /* passes/simplify.c */
bool pass_flatten(ir_module *m, diag *d);    /* passes/flatten.c */
bool pass_dce(ir_module *m, diag *d);        /* passes/dce.c */
bool pass_hoist(ir_module *m, diag *d);      /* passes/hoist.c */
bool pass_filled(ir_module *m, diag *d);     /* passes/filled.c */
bool pass_separate(ir_module *m, diag *d);   /* passes/separate.c */
bool pass_serialize(ir_module *m, diag *d);  /* passes/serialize.c */
bool pass_fuse(ir_module *m, diag *d);       /* passes/fuse.c */
bool pass_layout(ir_module *m, diag *d);     /* passes/layout.c */
bool pass_layout_chains(ir_module *m, diag *d);  /* passes/layout.c */
/* Whether pass_layout, run on m as it is now without the graph calls
 * marked in skip (per call; NULL: none), would store temporary t with its
 * dimensions in another order (channels-last, with the activations its
 * kernels link it to): the fuse pass, which runs before it, asks whether a
 * write-back that stores its lanes apart will store them together. */
bool pass_layout_channels_last(ir_module *m, const ir_buffer *t, const bool *skip);
bool pass_memplan(ir_module *m, diag *d);    /* passes/memplan.c */
bool pass_vectorize(ir_module *m, diag *d);  /* passes/vectorize.c */
bool pass_prepack(ir_module *m, diag *d);    /* passes/prepack.c */
bool pass_prefetch(ir_module *m, diag *d);   /* passes/prefetch.c */

/* The memory planner of passes/memplan.c, on its own (unit-tested): one
 * item per buffer, live from call `first` to call `last` (inclusive; first
 * < 0 or first > last: never live) and `bytes` long.  Items whose live
 * ranges share a call get disjoint byte ranges; never-live items get offset
 * 0.  Offsets are multiples of align (a power of two).  Greedy by size, as
 * TFLite's arena planner: the largest item first, each at the lowest
 * offset where it fits between the items already placed that are live with
 * it.  Returns the arena size (every item ends inside it; a multiple of
 * align), or -1 if a size overflows. */
typedef struct pass_mem_item {
    int64_t bytes;
    int first, last;
    int64_t offset;            /* result */
} pass_mem_item;
int64_t pass_memplan_solve(pass_mem_item *items, int n, int64_t align);

/* Simplifies one expression with no knowledge of variable ranges (every
 * variable may take any value of its dtype).  Returns e itself when nothing
 * changes; never modifies e's nodes, which may be shared.  For other stages
 * (lowering, codegen) that want a folded expression. */
ir_expr *pass_simplify_expr(ir_module *m, ir_expr *e);
/* The same knowing that each vars[i] lies in [lo[i], hi[i]] (a block's
 * iteration ranges, say), so that floordiv(v, 16) with v in [0, 15] is 0.
 * New nodes go to m's arena. */
ir_expr *pass_simplify_expr_in(ir_module *m, ir_expr *e, int nvars, const ir_var *const *vars,
                               const int64_t *lo, const int64_t *hi);

/* ---------------------------------------------------------------- helpers shared by passes */

/* *out = a k b for integer k (+ - * floordiv floormod min max), computed
 * exactly with GMP; false for a zero divisor or when the exact result does
 * not fit dtype t (i32, i64 or bool). */
bool pass_fold_int(ir_expr_kind k, int64_t a, int64_t b, ir_dtype t, int64_t *out);

/* Whether s does nothing: NULL or sequences of nothing (passes/dce.c). */
bool pass_is_empty(const ir_stmt *s);

/* Recomputes a block's reads and writes after a pass removed accesses,
 * keeping the old lists (and so their printed order) when the sets of
 * buffers did not change. */
void pass_update_block_access(ir_module *m, ir_stmt *block);

#endif
