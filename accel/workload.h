/* accel/workload.h — the accelerator's view of a compiled IR module.
 *
 * Every block of every called function is classified once:
 *   - GEMM-like: its body is a reduction update Y[..] = Y[..] + a * b (casts
 *     and select-guarded padding loads allowed).  Its block iteration
 *     variables give the GEMM: REDUCE variables multiply into K; SPATIAL
 *     ones used only by the input operand (a) into M, only by the weight
 *     operand (b) into N, by both (groups, heads) or neither into batch.
 *   - everything else is work for the vector unit, counted by the static
 *     analysis (passes/analyze.h): its FLOPs, and the elements it streams
 *     from and to DRAM.
 * doc/accel.md ("Layers from the compiler") gives the rules with examples.
 * workload.c and cli.c are the only parts of accel/ that know the IR. */
#ifndef TEC_ACCEL_WORKLOAD_H
#define TEC_ACCEL_WORKLOAD_H

#include "accel/accel.h"
#include "ir/diag.h"
#include "ir/ir.h"

/* What one block is to the accelerator. */
typedef struct acc_block_info {
    bool gemm;                 /* GEMM-like; otherwise vector work */
    int64_t M, N, K, batch;    /* GEMM: batch GEMMs of M x N x K */
    bool has_conv;             /* a convolution whose geometry was recovered */
    acc_conv conv;
    int64_t elem_bytes[ACC_NOPERANDS];  /* GEMM: its operands' element sizes */
    int64_t instances;         /* block instances (product of iter extents) */
} acc_block_info;

/* Classifies one block of f.  `call` (may be NULL) is a graph call of f; it
 * tells which operand is a weight (a PARAM graph buffer).  Fails, with a
 * diagnostic at f's "loc", on a size past 64 bits. */
bool acc_classify_block(const ir_func *f, const ir_graph_call *call, const ir_stmt *block,
                        acc_block_info *out, diag *d);

/* The layers of a module in program order (one pass over the graph calls;
 * a module without calls takes each function once).  Per call of a
 * function whose layer name is L:
 *   - each GEMM-like block is one GEMM layer named L (or L.BLOCK when the
 *     function has several);
 *   - all its other work is one vector layer named L (or L.vector when the
 *     function also has GEMM blocks). */
typedef struct acc_workload {
    acc_layer *layers;         /* malloc'ed, names too */
    int nlayers;
    int *func;                 /* layers[i] comes from m->funcs[func[i]] */
} acc_workload;

/* Every count uses each tensor's element size: a vector layer's DRAM bytes
 * are its elements times their dtype's bytes, and a GEMM layer carries
 * its operands' element sizes (acc_layer.elem_bytes), from which the model
 * counts words of the config's WordBytes. */
bool acc_workload_from_module(const ir_module *m, acc_workload *w, diag *d);
/* The same from an analysis the caller already has (pass_analyze of the
 * module, not instrumented since: the sites must be the module's) and,
 * when counts is not NULL, a profiled run's executions of each site
 * (counts[site id], as rt_profile_counts gives them).  A count that depends
 * on the data comes from counts, divided by the function's calls; without
 * counts it is an error.  A GEMM whose MACs depend on the data keeps N, K
 * and batch, and its M covers the MACs it did (acc_layer.declared_M keeps
 * the declared one); one that did none is no layer. */
struct pass_stats;
bool acc_workload_from_analysis(const struct pass_stats *ps, const uint64_t *counts,
                                acc_workload *w, diag *d);
void acc_workload_free(acc_workload *w);

/* The function's layer name: its "layer" attribute, else its name. */
const char *acc_func_layer_name(const ir_func *f);

#endif
