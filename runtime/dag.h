/* runtime/dag.h — the parallel structure of a graph: which calls depend on
 * which, which may run at the same time, the critical path and the
 * fork-join paths (doc/scheduling.md).
 *
 * A call depends on an earlier call when one of them writes storage that the
 * other reads or writes.  Storage is a graph buffer; when the memory plan's
 * arena is in use, two temps whose arena bytes overlap are the same storage,
 * so the DAG then also orders the calls the plan made share bytes.  Edges
 * implied by others (a -> b -> c makes a -> c redundant) are dropped. */
#ifndef TEC_RT_DAG_H
#define TEC_RT_DAG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/diag.h"
#include "ir/ir.h"

/* One call of the graph as a node of the DAG. */
typedef struct rt_dag_node {
    int *preds, npreds;        /* direct predecessors, ascending */
    int *succs, nsuccs;        /* direct successors, ascending */
    double cost_us;            /* run time on the reference device */
    double top_us;             /* earliest start: longest path from a source */
    double bottom_us;          /* longest path from its start to a sink (with its cost) */
    int level;                 /* longest chain of calls before it */
    int path;                  /* the fork-join path it belongs to */
    bool critical;             /* on the critical path */
    uint64_t out_bytes;        /* bytes of the storage it writes */
    uint64_t flops;            /* its FLOPs (the analysis) */
    uint64_t bytes;            /* the bytes of the storage it touches, each once */
} rt_dag_node;

/* A fork-join path: a chain of calls, each the only successor of the one
 * before and the only predecessor of the one after (an Inception branch). */
typedef struct rt_dag_path {
    int first, ncalls;         /* calls[first .. first + ncalls) of `order` */
} rt_dag_path;

typedef struct rt_dag {
    const ir_module *m;
    int ncalls;
    rt_dag_node *nodes;        /* [ncalls], graph order (a topological order) */
    int nedges;
    int nlevels, max_width;    /* calls at one level may all run at once */
    rt_dag_path *paths;
    int npaths;
    int *path_calls;           /* the calls of every path, path by path */
    double critical_us;        /* the critical path's length: a lower bound of any makespan */
    double total_us;           /* the sum of all costs: the serial time */
    /* reads[c][k] / writes[c][k]: whether call c reads / writes its k-th argument */
    bool **reads, **writes;
} rt_dag;

/* Builds the DAG of m's graph.  share_arena: whether the run places the
 * memory plan's temps in the arena (then overlapping temps are one storage).
 * Costs start at zero; set them, then call rt_dag_analyze. */
rt_dag *rt_dag_build(const ir_module *m, bool share_arena, diag *d);
/* Computes top/bottom levels, the critical path and the fork-join paths
 * from the nodes' costs. */
void rt_dag_analyze(rt_dag *g);
void rt_dag_free(rt_dag *g);

/* The layer name of call c (its function's "layer" attribute, or name). */
const char *rt_dag_call_name(const rt_dag *g, int c);
/* Bytes call `to` reads of the storage call `from` writes (a transfer when
 * they run on different devices). */
uint64_t rt_dag_edge_bytes(const rt_dag *g, int from, int to);

/* One line: calls, edges, levels, widest level, paths, critical path. */
void rt_dag_print_summary(FILE *out, const rt_dag *g);

/* Graphviz: a node per call with its cost (and device, when device_of is
 * not NULL: device_names[device_of[c]]), critical nodes and edges in red,
 * each fork-join path of more than one call in a cluster.  placed_us (may
 * be NULL: the DAG's CPU costs) gives each call's time on the device it is
 * placed on: the labels and the critical path then use it, and the
 * caption also gives the CPU-only critical path. */
void rt_dag_write_dot(FILE *f, const rt_dag *g, const int *device_of,
                      const char *const *device_names, const double *placed_us);
/* --dump-graph=FILE.dot or FILE.svg (rendered by `dot`, which must be
 * installed); an error otherwise. */
bool rt_dag_dump(const rt_dag *g, const char *path, const int *device_of,
                 const char *const *device_names, const double *placed_us, diag *d);

#endif
