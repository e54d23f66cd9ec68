/* passes/analyze.h — the static cost analysis of tec's loop IR, and the
 * `instrument` pass that builds on it (doc/profile.md).
 *
 * The unit of counting is a *site*: a statement whose expressions do work
 * every time it executes — every STORE, and every FOR (bounds), IF
 * (condition), LET (value), ASSERT (condition) or BLOCK (bindings) whose
 * expressions load memory or compute on floats.  For each site the analysis
 * knows what one execution costs (MACs, FLOPs, loads and stores per buffer)
 * and, where it can, how many times the site executes per call of its
 * function.  A layer's totals are sums over its sites of count x cost.
 *
 * Execution counts.  A site's count is the number of points of its loop nest
 * that pass every enclosing condition (IF branches, a block's init rule,
 * select arms for the loads under them).  It is computed exactly: constant
 * loops multiply, and loops whose variables a condition (or another loop's
 * bound) mentions are enumerated, up to a budget.  A count that depends on
 * memory contents (a loop bound or condition that loads) or exceeds the
 * budget is *dynamic*: `instrument` inserts a `tec_prof_count(site, n)` call
 * where the count of everything inside is known — once per entry into that
 * region, never per iteration unless nothing better exists.
 *
 * Site ids.  Sites are numbered in module order: functions in m->funcs
 * order, sites in the pre-order of ir_stmt_walk.  Inserted profiling calls
 * are not sites, so analyzing the instrumented module gives the same ids;
 * the runtime relies on that to map counters back to sites.
 *
 * Fused groups.  A function that implements several source layers carries
 * the attribute `members` (comma-separated layer names), optionally
 * `member_ops` (their ops, same order) and `block.NAME = "LAYER"` saying
 * which member a block belongs to; a block without one belongs to the first
 * member.
 *
 * Counts are computed with GMP and stored as uint64 after checking that they
 * fit; a count that does not fit is reported as an error.
 */
#ifndef TEC_PASSES_ANALYZE_H
#define TEC_PASSES_ANALYZE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/diag.h"
#include "ir/ir.h"

/* One buffer a function can touch: a parameter or a LOCAL alloc. */
typedef struct pass_bufinfo {
    const ir_buffer *buf;
    int param;                 /* index in f->params, or -1 for a LOCAL */
    const ir_buffer *graph;    /* the graph buffer the first call passes, or NULL */
    uint64_t footprint_bytes;  /* numel x element size: the distinct bytes, assuming the
                                  function touches the whole buffer (an upper bound) */
    int member;                /* fused-group member that touches it first (0) */
    bool read, written;        /* some site loads / stores it */
    bool write_first;          /* the first site touching it stores without loading it:
                                  its old contents are never read (an accumulator with init) */
} pass_bufinfo;

/* Where `instrument` puts a site's counter update: just before `anchor`
 * (NULL: at function entry), adding inner x max(hi - lo, 0) of the FOR
 * `trip` (when not NULL) or just `inner`. */
typedef struct pass_count_plan {
    const ir_stmt *anchor;
    const ir_stmt *trip;
    uint64_t inner;
} pass_count_plan;

/* Work that runs a fraction of a site's executions: the loads and FLOPs under
 * one select arm (num/den = 1 for the unconditional part).  `approx` means
 * the fraction is unknown (the select's condition loads memory) and the
 * part is counted as if it always ran: an upper bound. */
typedef struct pass_part {
    uint64_t num, den;
    bool approx;
    uint64_t flops;
    uint64_t *loads;           /* [nbufs of the function], elements */
} pass_part;

/* GEMM view of a MAC site: the block's iteration variables grouped by where
 * they appear — REDUCE -> K, spatial in the first factor only -> M, in the
 * second only -> N, in both or neither -> batch.  Convolutions come out as
 * their im2col GEMM (M = N*P*Q, N = F, K = C*R*S). */
typedef struct pass_gemm {
    bool valid;
    uint64_t batch, m, n, k;
    int a_buf, b_buf, out_buf; /* buffer indices of the first load of each factor, and the
                                  stored buffer; -1 when there is none */
} pass_gemm;

/* One counted statement. */
typedef struct pass_site {
    int id;                    /* counter id, unique in the module */
    int func;                  /* index in m->funcs */
    const ir_stmt *stmt;
    const char *block;         /* name of the innermost enclosing block, or NULL */
    bool in_init;              /* inside that block's init */
    int member;                /* fused-group member (0 when not fused) */
    bool is_static;            /* count known without running */
    uint64_t count;            /* executions per call, when is_static */
    uint64_t mac_count;        /* of those, the ones that count as MACs: count, or more
                                  when a reduce loop left out taps in a padding
                                  (analyze.c nominal_count) */
    pass_count_plan plan;      /* used by instrument */
    bool counted;              /* the IR holds a tec_prof_count for this site */
    /* per execution */
    uint64_t macs;
    int store_buf;             /* buffer index of a STORE, else -1 */
    pass_part *parts;          /* parts[0] is the unconditional part */
    int nparts;
    bool approx;               /* some part is approx */
    pass_gemm gemm;
} pass_site;

/* A member of a fused group (a plain function has one: its own layer). */
typedef struct pass_member {
    const char *layer;
    const char *op;
} pass_member;

/* One function (layer stage). */
typedef struct pass_funcinfo {
    const ir_func *fn;
    int index;                 /* in m->funcs */
    const char *layer, *op;    /* attrs, or the function's name / "" */
    bool fused;                /* has a `members` attribute */
    pass_member *members;
    int nmembers;
    int ncalls;                /* graph calls of it */
    int first_call;            /* index of its first graph call, or -1 */
    pass_bufinfo *bufs;
    int nbufs;
    int first_site, nsites;    /* its sites are sites[first_site .. +nsites) */
    bool is_static;            /* every site is static */
    bool instrumented;         /* it calls tec_prof_enter with its own index */
} pass_funcinfo;

/* The analysis of a module.  Everything lives in `arena`. */
typedef struct pass_stats {
    ir_arena *arena;
    const ir_module *m;
    pass_funcinfo *funcs;      /* one per m->funcs, same order */
    int nfuncs;
    pass_site *sites;
    int nsites;
    int bad_counts;            /* tec_prof_count calls naming no site of their function */
} pass_stats;

/* How the analysis places counters. */
typedef struct pass_analyze_options {
    /* Plan every site as if loop bounds and if-conditions were unknown
     * (counters inside loop nests), so tests can compare run-time counts
     * with the static ones. */
    bool force_dynamic;
    /* Enumeration budget per count (loop iterations visited); 0: default. */
    uint64_t budget;
} pass_analyze_options;

/* Analyzes m (o may be NULL).  Returns NULL after a diagnostic (an internal
 * error for malformed IR, an error for a count beyond 64 bits). */
pass_stats *pass_analyze(const ir_module *m, const pass_analyze_options *o, diag *d);
void pass_stats_free(pass_stats *st);

/* Totals of one function, over all its calls in one run of the graph. */
typedef struct pass_totals {
    uint64_t macs, flops;
    uint64_t load_bytes, store_bytes;
    uint64_t *loads, *stores;  /* per buffer (elements), or NULL; caller-owned, nbufs each */
    bool approx;               /* contains upper bounds (see pass_part) */
    bool unknown;              /* a dynamic site had no count: totals are too low */
} pass_totals;

/* Sums the sites of function fi that belong to `member` (-1: all).  A
 * site's executions are counts[site id] when counts is not NULL and the site
 * is counted, else its static count x the function's number of calls.
 * False (after an error) when a total does not fit in 64 bits. */
bool pass_func_totals(const pass_stats *st, int fi, const uint64_t *counts, int member,
                      pass_totals *out, diag *d);

/* Executions of a site per run: counts[id] if counted, else static x calls;
 * *known is false for an uncounted dynamic site. */
uint64_t pass_site_executions(const pass_stats *st, const pass_site *s, const uint64_t *counts,
                              bool *known);

/* A LOCAL buffer that a schedule staged (cache_read's packed operand,
 * cache_write's tile, pad's bordered copy) stands for the buffer it copies:
 * the store in body that fills it from that buffer (local[..] = b[..]) or
 * writes it back (b[..] = local[..]), the copied load possibly under a
 * select.  NULL when local is not staged; *load (may be NULL) receives the
 * copied load. */
const ir_stmt *pass_staging_copy(const ir_stmt *body, const ir_buffer *local,
                                 const ir_expr **load);

/* Human-readable dump: per function and block, counts, MACs, FLOPs, loads
 * and stores per buffer, footprints and shapes. */
void pass_stats_print(FILE *out, const pass_stats *st);

/* The instrument pass (passes/instrument.c): removes any profiling calls,
 * then wraps every function's body in tec_prof_enter(i) / tec_prof_exit(i)
 * (i = its index in m->funcs) and inserts one tec_prof_count(site, n) per
 * site where its plan says.  pass_instrument_dynamic (registered as
 * "instrument-dyn") forces dynamic plans. */
bool pass_instrument(ir_module *m, diag *d);
bool pass_instrument_dynamic(ir_module *m, diag *d);
bool pass_instrument_with(ir_module *m, const pass_analyze_options *o, diag *d);

#endif
