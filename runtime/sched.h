/* runtime/sched.h — devices and scheduling strategies: which device runs
 * each call of a graph, and when (doc/scheduling.md).
 *
 * A device is a group of CPU cores (a worker thread pinned to them, whose
 * kernels' parallel loops use that many threads) or a modeled accelerator
 * (an accel config: its time for a call comes from the accelerator model,
 * plus the time to move operands over its bandwidth from or to another
 * device).  A strategy places the calls of the DAG (runtime/dag.h):
 *
 *   serial   every call on the first device, in graph order (the baseline);
 *   op       list scheduling of single calls by upward rank onto the device
 *            that finishes each earliest, transfers included (HEFT);
 *   path     every fork-join path whole onto the device that finishes it
 *            earliest;
 *   dynamic  a ready queue: an idle device takes the first ready call in
 *            graph order;
 *   dynamic-cp  the same, taking the ready call with the longest remaining
 *            path, and only where it finishes earliest (cost-aware).
 *
 * rt_sched_simulate computes a timeline from the DAG's costs (every
 * strategy; the only timeline when an accelerator takes part).  On CPU
 * devices rt_sched_execute runs the calls for real on worker threads and
 * records the measured timeline. */
#ifndef TEC_RT_SCHED_H
#define TEC_RT_SCHED_H

#include <stdbool.h>
#include <stdio.h>

#include "accel/accel.h"
#include "ir/diag.h"
#include "runtime/dag.h"
#include "runtime/exec.h"

typedef enum { RT_DEV_CPU, RT_DEV_ACC } rt_device_kind;

typedef struct rt_device {
    rt_device_kind kind;
    char name[80];             /* "cpu0", "acc1:edge_os_32x32" */
    int threads;               /* CPU: its cores, the threads of its parallel loops */
    int first_core;            /* CPU: its cores are the allowed processors from here on */
    const char *config_path;   /* ACC: the accel config (points into the --devices text) */
    acc_config config;         /* ACC, once loaded */
    double *call_us;           /* ACC: the model's time for each call, once loaded */
    double bytes_per_us;       /* ACC: its DRAM interface (0: unlimited) */
} rt_device;

typedef struct rt_devices {
    rt_device *dev;
    int n;
    char *text;                /* the --devices text the config paths point into */
} rt_devices;

/* Parses "cpu:1,cpu:1,acc:FILE.cfg" (no file is read).  False with a
 * message in err naming the bad item: a usage error. */
bool rt_devices_parse(const char *spec, rt_devices *out, char *err, size_t errlen);
/* One CPU device per processor, n of them, one core each. */
bool rt_devices_cpus(int n, rt_devices *out);
/* Loads the accelerators' configs and models every call of m on them
 * (errors: a config that does not parse, a layer the model rejects). */
bool rt_devices_load(rt_devices *devs, const rt_dag *g, diag *d);
void rt_devices_free(rt_devices *devs);
bool rt_devices_all_cpu(const rt_devices *devs);

typedef enum {
    RT_SCHED_SERIAL, RT_SCHED_OP, RT_SCHED_PATH, RT_SCHED_DYNAMIC, RT_SCHED_DYNAMIC_CP,
    RT_NSCHED
} rt_strategy;

bool rt_strategy_parse(const char *s, rt_strategy *out);
const char *rt_strategy_name(rt_strategy s);

/* Where and when each call ran (or would run), in microseconds from the
 * start; xfer_us is the time its operands took to arrive from other
 * devices before it started. */
typedef struct rt_timeline {
    int ncalls;
    int *device;
    double *start_us, *end_us, *xfer_us;
    char **why;                /* the reason for each placement (simulated timelines) */
    double makespan_us;
    bool measured;             /* a real run's clock, else the simulation's */
} rt_timeline;

bool rt_timeline_init(rt_timeline *t, int ncalls);
void rt_timeline_free(rt_timeline *t);

/* Time of call c on device k: the DAG's cost on a CPU device (costs are
 * measured or estimated for one CPU device), the model's on an accelerator. */
double rt_device_call_us(const rt_devices *devs, int k, const rt_dag *g, int c);

/* Places and times every call of g by strategy s. */
bool rt_sched_simulate(const rt_dag *g, const rt_devices *devs, rt_strategy s, rt_timeline *t,
                       diag *d);

/* Runs every call of r on the devices (CPU only): with a placement
 * (`plan`, from rt_sched_simulate) each device runs its calls in the
 * plan's order; without (dynamic strategies), idle devices take ready calls.
 * The first failing call stops the run (the others finish the call they
 * are in) and its error is reported.  Measures into t. */
bool rt_sched_execute(rt_run *r, const rt_run_options *o, const rt_dag *g,
                      const rt_devices *devs, rt_strategy s, const rt_timeline *plan,
                      rt_timeline *t, diag *d);

/* The same on worker threads kept between runs (one per device, pinned to
 * its cores): start them once, run as often as needed, stop them. */
typedef struct rt_workers rt_workers;
rt_workers *rt_workers_start(const rt_devices *devs, const rt_dag *g, diag *d);
bool rt_workers_run(rt_workers *w, rt_run *r, const rt_run_options *o, rt_strategy s,
                    const rt_timeline *plan, rt_timeline *t, diag *d);
void rt_workers_stop(rt_workers *w);

/* Lower bound on the makespan from the work alone: the least time in
 * which the devices, each at its own speed, could do every call if calls
 * could be split between devices of different speeds (exact for one or two
 * speeds, e.g. CPUs and one kind of accelerator; with three or more, the
 * weaker bound of each call's fastest time spread over all devices).
 * Transfers and dependences are left out. */
double rt_sched_work_bound(const rt_dag *g, const rt_devices *devs);

/* A measured speedup serial_us / makespan, split into what overlap gave
 * (the calls' summed time in this run / makespan: at most the number of
 * devices, about 1 for a chain) and how much faster the calls themselves
 * ran than in the serial runs (serial_us / that sum: noise, caches, load,
 * nothing the schedule did). */
typedef struct rt_speedup_split {
    double speedup, overlap, pace, busy_us;
} rt_speedup_split;
rt_speedup_split rt_sched_speedup_split(const rt_timeline *t, double serial_us);

/* The table: makespan, speedup over `serial_us`, busy, idle and transfer
 * time per device, the critical-path bound. */
void rt_sched_print(FILE *out, const rt_dag *g, const rt_devices *devs, rt_strategy s,
                    const rt_timeline *t, double serial_us, int runs);
/* A Chrome/Perfetto trace: one track per device, a slice per call (its
 * transfers as slices of their own), and the table's numbers. */
bool rt_sched_write_trace(const char *path, const rt_dag *g, const rt_devices *devs,
                          rt_strategy s, const rt_timeline *t, double serial_us, diag *d);

/* What --sched, --devices, --repeat, --sched-trace and --dump-graph ask. */
typedef struct rt_sched_options {
    rt_strategy strategy;
    int runs;                  /* measured runs of the baseline and of the schedule */
    const char *trace;         /* Chrome trace of the timeline, or NULL */
    const char *dump_graph;    /* FILE.dot or FILE.svg, or NULL */
} rt_sched_options;

/* The whole of `tec --sched`: builds the DAG, loads the devices, measures
 * the serial baseline on the first CPU device (its median call times are
 * the costs), places the calls, runs them (CPU devices) or simulates them
 * (with accelerators), and prints the graph's summary and the table to
 * `out`; writes the trace and the graph.  Without a run (r NULL, --no-run)
 * the costs are estimates and every timeline is simulated.  The run's
 * buffers hold the outputs of the last run. */
bool rt_sched_main(const ir_module *m, rt_run *r, const rt_run_options *ro,
                   const rt_sched_options *so, rt_devices *devs, FILE *out, diag *d);

#endif
