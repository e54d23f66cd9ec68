/* runtime/exec.h — runs a module's graph: allocates its buffers, fills the
 * inputs and parameters (from .npy files or the default-data formula), calls
 * each layer stage (compiled kernels through codegen's loader, or the IR
 * interpreter), and saves or summarizes the outputs. */
#ifndef TEC_RT_EXEC_H
#define TEC_RT_EXEC_H

#include "ir/diag.h"
#include "ir/ir.h"
#include "runtime/tensor.h"
#include "runtime/threads.h"

struct cg_library;
struct rt_weight_set;

/* The user-visible face of a graph buffer, recorded before the passes run:
 * passes may reshape buffers (flatten makes them 1-D), but files are read
 * and written with the shapes the program declared. */
typedef struct rt_iface_buf {
    const char *name;
    ir_dtype dtype;
    int ndim;
    int64_t shape[RT_MAX_DIMS];
    ir_buf_role role;
    bool has_init;
    double init_lo, init_hi;
} rt_iface_buf;

typedef struct rt_iface {
    rt_iface_buf *bufs;
    int nbufs;
} rt_iface;

/* Records m's INPUT, PARAM and OUTPUT buffers (malloc'ed; rt_iface_free).
 * Fails with a diagnostic for a buffer of more than RT_MAX_DIMS dims. */
bool rt_iface_record(const ir_module *m, rt_iface *out, diag *d);
void rt_iface_free(rt_iface *f);

/* --input NAME=FILE */
typedef struct rt_named_path {
    const char *name;
    const char *path;
} rt_named_path;

typedef struct rt_run_options {
    const rt_named_path *inputs;
    int ninputs;
    const char *weights_dir;     /* NULL: default parameters */
    struct cg_library *lib;      /* NULL: run the IR interpreter */
    /* Every temp in storage of its own, ignoring the memory plan: calls
     * that run at the same time (runtime/sched.c) must not share bytes. */
    bool own_storage;
    /* Parameters held in memory (an imported ONNX model's weights,
     * runtime/weight_set.h), looked up before weights_dir and handed over
     * to the run that asks for them; NULL: none. */
    struct rt_weight_set *weights;
    /* rt_run_execute: 2 or more: the parallel loops' threads, which spin
     * between parallel loops while they have the processors and sleep at
     * once while other processes hold them (runtime/threads.h); 0 or 1:
     * nothing changes the threads cg_set_threads set. */
    int threads;
} rt_run_options;

/* A new tensor for graph buffer i of m, in its declared shape: an input's
 * file (--input NAME=FILE), a parameter's (weights_dir/NAME.npy), else the
 * default data for inputs and parameters and zeros for the others; NULL
 * after a diagnostic. */
rt_tensor *rt_buffer_tensor(const ir_module *m, const rt_iface *iface,
                            const rt_run_options *o, int i, diag *d);
/* Every NAME.npy in a --weights directory must name a parameter: a stray
 * file usually means a renamed layer.  False after a diagnostic. */
bool rt_check_weights_dir(const rt_iface *iface, const char *dir, diag *d);

/* One execution of a graph: a tensor per graph buffer of m, in order.
 * With a memory plan (the graph's arena, passes/memplan.c), the temps placed
 * in the arena are views into one block allocated here: their tensors do
 * not own their data.  Planned temps share bytes, so the calls must run in
 * graph order (rt_run_execute does). */
typedef struct rt_run {
    const ir_module *m;
    const rt_iface *iface;
    rt_tensor **bufs;
    int nbufs;
    void *arena;               /* 64-byte aligned, arena_bytes long, or NULL */
    size_t arena_bytes;
    bool *in_arena;            /* [nbufs]: bufs[i] is a view into the arena */
    /* TEC_POISON_ARENA=1 in the environment: before each call, the planned
     * temps it is the first to pass are filled with 0xff bytes (NaN for
     * floats, -1 for integers), so a kernel that reads a temp before writing
     * it gives a visibly wrong result — a test of the plan's assumption. */
    bool poison;
    int *first_use;            /* [nbufs]: first call passing bufs[i], or -1 */
    /* [2 * ncalls]: call c's time (ns) with the threads spinning ([2c])
     * and asleep ([2c+1]) between parallel loops, a running mean of its
     * runs so; 0: none (runtime/threads.h); NULL: the calls are not timed */
    int64_t *call_ns;
    /* whether the runs use all the threads or one (runtime/threads.h) */
    rt_one_thread one_thread;
    /* Runs on several threads may place the planned temps apart instead,
     * each in bytes of its own (no reuse), chosen run by run as one thread
     * is (the same machinery; "one" meaning apart): on a virtual machine
     * whose two processors are far apart, a layer writing bytes the other
     * processor touched for an earlier temp pays a round trip per cache
     * line, and apart it does not (bench/results/par_s9.txt).  spread: the
     * bytes (spread_bytes long, allocated at the first run apart; NULL
     * before); spread_off[i]: bufs[i]'s offset there; apart: the views
     * point there now; spread_runs: runs so placed. */
    rt_one_thread placement;
    void *spread;
    size_t spread_bytes;
    int64_t *spread_off;
    bool apart;
    int64_t spread_runs;
    int64_t runs;              /* rt_run_execute calls so far */
} rt_run;

/* Allocates every buffer, fills inputs and parameters, and runs the graph's
 * load calls, which compute the consts (packed weights) from the params;
 * then frees the params that only load calls read (their bufs[i] become
 * NULL).
 * Errors (a missing, extra or mis-shaped file, an unknown input name) are
 * reported through d. */
rt_run *rt_run_new(const ir_module *m, const rt_iface *iface,
                   const rt_run_options *o, diag *d);
/* Runs the graph's calls in order. */
bool rt_run_execute(rt_run *r, const rt_run_options *o, diag *d);
/* Points the planned temps' views into the arena, where the plan puts them
 * (apart false), or each into bytes of its own (apart: the placement apart,
 * allocated the first time).  Returns whether they are apart now: not when
 * the plan reuses no bytes, its temps would take more than 512 MiB apart,
 * or the bytes cannot be allocated.  rt_run_execute chooses it by itself on
 * several threads. */
bool rt_run_place_apart(rt_run *r, bool apart);
/* Before a series of runs (after the first): makes what a later run may
 * choose now, outside the runs: on several threads the bytes of the
 * placement apart, whose pages rt_zalloc populates (3-7 ms for
 * SqueezeNet's 19-27 MB, up to 190 ms where the kernel compacts memory
 * for huge pages: the run that first tried the placement apart took that
 * much longer, bench/results/runtime_s13.txt). */
void rt_run_prepare_repeats(rt_run *r, const rt_run_options *o);
/* Runs call c alone (safe to call from several threads for calls that
 * share no storage).  False with "in layer NAME: ..." in err; an internal
 * error's message starts with "internal error: runtime: ". */
bool rt_run_call(rt_run *r, const rt_run_options *o, int c, char *err, size_t errlen);
/* Reports a failed call's message (rt_run_call's err) through d: "[in layer
 * L: ]internal error: PART: what" as an internal error of PART (exit 70),
 * anything else as the user's error. */
void rt_report_call_error(const char *err, diag *d);
/* Writes DIR/NAME.npy for every output (creating DIR and its parents): all
 * of them, or none (the old files stay). */
bool rt_run_save_outputs(const rt_run *r, const char *dir, diag *d);
/* One line per output: name, shape and summary statistics. */
void rt_run_print_summary(const rt_run *r, FILE *out);
void rt_run_free(rt_run *r);

#endif
