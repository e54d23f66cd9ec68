/* runtime/threads.h — how many threads a run's parallel loops use while
 * other processes compete for the processors.
 *
 * Threads that wait for each other at every parallel loop are only as fast
 * as the slowest one: when another process takes the processor of one of
 * them, a run on two threads gets slower than a run on one (it waits for
 * the thread that waits for the processor), and much slower when the
 * waiting threads spin.  So before each call of a run (rt_run_execute) the
 * runtime looks, at most every RT_THREADS_WINDOW_NS, at what the threads
 * met since the last look (doc/codegen.md, "Threads"):
 *
 * - on several threads: the time they spent runnable but not running (the
 *   kernel's per-thread run-queue wait, /proc/self/task/TID/schedstat).
 *   Above RT_THREADS_WAIT_MAX of their time, other processes hold the
 *   processors: drop as many threads as processors' worth of waiting.
 * - on fewer threads than asked for: the runnable threads of other
 *   processes now (/proc/loadavg's R minus this process's running
 *   threads).  Enough idle processors: back to the count asked for at once.
 *   Else try it again after a back-off (RT_THREADS_PROBE_MIN_NS, doubling
 *   after each try the waiting refutes, up to RT_THREADS_PROBE_MAX_NS):
 *   the counted processes may be ones the scheduler lets this one preempt
 *   (niced builds), which the waiting then shows.
 *
 * The decision (rt_threads_decide) is a pure function of those readings,
 * so tests can drive it. */
#ifndef TEC_RT_THREADS_H
#define TEC_RT_THREADS_H

#include <stdbool.h>
#include <stdint.h>

struct cg_library;

#define RT_THREADS_WINDOW_NS 5000000          /* 5 ms between looks */
#define RT_THREADS_WAIT_MAX 0.2               /* run-queue wait per thread-time */
#define RT_THREADS_PROBE_MIN_NS 100000000     /* 0.1 s */
#define RT_THREADS_PROBE_MAX_NS 2000000000    /* 2 s */

typedef struct rt_threads_state {
    int cur;                 /* threads the parallel loops run on now; 0: not started */
    int64_t since_ns;        /* start of the current window (CLOCK_MONOTONIC) */
    int64_t wait_ns;         /* this process's run-queue wait at its start */
    int64_t probe_at_ns;     /* below the asked count: when to try it again */
    int64_t backoff_ns;      /* the back-off after the next refuted try */
    bool probing;            /* the window tries the asked count */
    /* what happened, for --verbose */
    int64_t calls, reduced_calls;   /* calls run, and run on fewer threads */
    int drops;                      /* times it went below the asked count */
} rt_threads_state;

/* What one look saw. */
typedef struct rt_threads_reading {
    int64_t now_ns;
    int64_t wait_ns;         /* run-queue wait of all this process's threads so far */
    int others;              /* runnable threads of other processes now */
    int cpus;                /* online processors */
} rt_threads_reading;

/* The thread count for the next window, from state s and a look r at its
 * end (or, with s->cur == 0, at the first call), for `asked` threads. */
int rt_threads_decide(rt_threads_state *s, const rt_threads_reading *r, int asked);

/* Whether the runtime adapts the thread count: yes unless OMP_DYNAMIC is
 * set to false in the environment (OpenMP's "the runtime may adjust the
 * number of threads" switch). */
bool rt_threads_adaptive(void);

/* Before a call of a run on `asked` threads: reads the machine when the
 * window is over, sets lib's thread count (cg_set_threads) when the
 * decision changes it, and counts the call.  One state per process
 * (rt_threads_global); calls from several threads at once leave the count
 * as it is. */
void rt_threads_before_call(struct cg_library *lib, int asked);

/* The process's state (read it for --verbose after the runs). */
const rt_threads_state *rt_threads_global(void);

#endif
