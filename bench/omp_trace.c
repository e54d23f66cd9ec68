/* bench/omp_trace.c — where a run's threads wait: every OpenMP parallel
 * region of tec's kernels timed from inside, as an LD_PRELOAD shim.
 *
 *   cc -O2 -shared -fPIC bench/omp_trace.c -o omp_trace.so -ldl
 *   OMP_TRACE_OUT=trace.txt LD_PRELOAD=$PWD/omp_trace.so tec -O2 --repeat 20 M.onnx
 *
 * A kernel's parallel loop is one call of libgomp's GOMP_parallel (GCC
 * outlines the loop's body).  The shim takes that call, runs the body
 * through a wrapper that stamps when each thread enters and leaves it, and
 * splits the region's time (the caller's, from the call to its return) in
 *
 *   fork   from the call until the last thread enters the body
 *          (waking the team: a cache line to the other processor and back)
 *   work   the mean time a thread spends in the body (the useful part)
 *   imbal  the longest body minus the mean: a thread with less to do waits
 *   join   from the last thread leaving the body to the call's return
 *          (the barrier at the end of the region)
 *
 * fork + imbal + join is the region's synchronization.  Also counted: the
 * gap from the previous region's return to this call (serial code, during
 * which the other thread spins and then sleeps), and the forks that took
 * over SLOW_FORK_NS (mostly a thread woken from sleep).  The shim adds the
 * calls by kernel (the exported function that called GOMP_parallel, found
 * with dladdr) and team size, and at exit writes one line per kernel and a
 * total to OMP_TRACE_OUT (default stderr), the totals divided by
 * OMP_TRACE_RUNS (default 1: pass tec's --repeat + 1, the warm-up run).
 * Regions of one thread (a run tec put on one thread) count apart, so a
 * 2-thread trace and a 1-thread one (TEC_NUM_THREADS=1) compare kernel by
 * kernel.  A 2-thread run of tec may put some of its runs on one thread
 * (runtime/threads.h): the totals of each team size are divided by its
 * share of the runs (its share of the regions; every run has the same
 * regions).  The team cannot be forced from here: a kernel sizes its
 * threads' scratch by the count tec set.  The busy
 * columns (thread 0, the caller, and thread 1) tell a split that gives one
 * thread more to do from a thread that is slower at the same work.
 *
 * OMP_TRACE_ONE=NAME,NAME... runs the regions of those kernels on one
 * thread (an experiment: which layers would be faster so; fewer threads
 * than tec set are safe, more are not: a kernel sizes its threads' scratch
 * by the count tec set).  The time between regions (the calls' serial code, the executor)
 * is not seen here.
 *
 * It must not load libgomp itself: tec sets libgomp's environment
 * (OMP_PROC_BIND, GOMP_SPINCOUNT) before it loads it, and libgomp reads it
 * once.  So GOMP_parallel and omp_get_thread_num are looked up at the first
 * region. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TEAM 8
#define MAX_KERNELS 4096

typedef void (*region_fn)(void *);
typedef void (*gomp_parallel_fn)(region_fn, void *, unsigned, unsigned);
typedef int (*omp_int_fn)(void);

static gomp_parallel_fn real_parallel;
static const char *one_thread_kernels;   /* OMP_TRACE_ONE */
static omp_int_fn thread_num, num_threads;

/* One kernel's regions of one team size, added up (ns). */
typedef struct kernel_stats {
    const void *caller;      /* the kernel (dladdr's symbol address) */
    char name[64];           /* its name (looked up while it is loaded) */
    int team;
    int64_t regions;
    int64_t wall, fork, work, imbal, join;
    int64_t busy[2];         /* threads 0 (the caller) and 1 in the body */
    int64_t gap;             /* since the end of the region before (the caller's serial code) */
    int64_t slow_forks;      /* forks of more than SLOW_FORK_NS (a thread woke from sleep) */
} kernel_stats;

#define SLOW_FORK_NS 5000
static int64_t last_end;     /* when the last region returned, */
static int last_team;        /* on how many threads */

static kernel_stats stats[MAX_KERNELS];
static int nstats;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* One region in flight: the body and each thread's stamps. */
typedef struct region {
    region_fn fn;
    void *data;
    int team;
    int64_t enter[MAX_TEAM], leave[MAX_TEAM];
} region;

static void timed_body(void *p)
{
    region *r = p;
    int me = thread_num();
    int64_t t0 = now_ns();
    r->fn(r->data);
    int64_t t1 = now_ns();
    if (me < MAX_TEAM) {
        r->enter[me] = t0;
        r->leave[me] = t1;
    }
    if (me == 0)
        r->team = num_threads();
}

static kernel_stats *stats_for(const void *caller, const char *name, int team)
{
    for (int i = 0; i < nstats; i++)
        if (stats[i].caller == caller && stats[i].team == team)
            return &stats[i];
    if (nstats == MAX_KERNELS)
        return NULL;
    stats[nstats].caller = caller;
    snprintf(stats[nstats].name, sizeof stats[nstats].name, "%s", name ? name : "?");
    stats[nstats].team = team;
    return &stats[nstats++];
}

void GOMP_parallel(region_fn fn, void *data, unsigned nthreads, unsigned flags)
{
    if (!real_parallel) {
        real_parallel = (gomp_parallel_fn)dlsym(RTLD_NEXT, "GOMP_parallel");
        thread_num = (omp_int_fn)dlsym(RTLD_DEFAULT, "omp_get_thread_num");
        num_threads = (omp_int_fn)dlsym(RTLD_DEFAULT, "omp_get_num_threads");
        one_thread_kernels = getenv("OMP_TRACE_ONE");
        if (!real_parallel || !thread_num || !num_threads) {
            fprintf(stderr, "omp_trace: libgomp's GOMP_parallel not found\n");
            abort();
        }
    }
    Dl_info info;
    const void *ret = __builtin_return_address(0);
    bool found = dladdr(ret, &info) && info.dli_saddr;
    const void *caller = found ? info.dli_saddr : ret;
    if (found && one_thread_kernels && info.dli_sname && strstr(one_thread_kernels, info.dli_sname))
        nthreads = 1;
    region r = {.fn = fn, .data = data};
    int64_t t0 = now_ns();
    real_parallel(timed_body, &r, nthreads, flags);
    int64_t t1 = now_ns();
    int team = r.team < 1 ? 1 : r.team > MAX_TEAM ? MAX_TEAM : r.team;
    int64_t last_in = 0, last_out = 0, sum = 0, longest = 0;
    for (int i = 0; i < team; i++) {
        int64_t busy = r.leave[i] - r.enter[i];
        last_in = r.enter[i] > last_in ? r.enter[i] : last_in;
        last_out = r.leave[i] > last_out ? r.leave[i] : last_out;
        longest = busy > longest ? busy : longest;
        sum += busy;
    }
    pthread_mutex_lock(&stats_lock);
    kernel_stats *k = stats_for(caller, found ? info.dli_sname : NULL, team);
    if (k) {
        for (int i = 0; i < team && i < 2; i++)
            k->busy[i] += r.leave[i] - r.enter[i];
        k->regions++;
        k->wall += t1 - t0;
        k->fork += last_in - t0;
        k->work += sum / team;
        k->imbal += longest - sum / team;
        k->join += t1 - last_out;
        /* (after a region of another team size: a run tec put on one
         * thread, whose time is not a gap of this one) */
        k->gap += last_end && last_team == team ? t0 - last_end : 0;
        k->slow_forks += last_in - t0 > SLOW_FORK_NS;
    }
    last_end = now_ns();
    last_team = team;
    pthread_mutex_unlock(&stats_lock);
}

static void print_row(FILE *f, const char *name, int team, double runs, const kernel_stats *k)
{
    fprintf(f, "%-40.40s %2d %6.1f %8.1f %8.1f %7.1f %7.1f %7.1f %5.1f %8.1f %8.1f %8.1f %5.1f\n",
            name,
            team, (double)k->regions / runs, k->wall / runs / 1e3, k->work / runs / 1e3,
            k->fork / runs / 1e3, k->imbal / runs / 1e3, k->join / runs / 1e3,
            k->wall ? 100.0 * (double)(k->fork + k->imbal + k->join) / (double)k->wall : 0.0,
            k->busy[0] / runs / 1e3, k->busy[1] / runs / 1e3, k->gap / runs / 1e3,
            (double)k->slow_forks / runs);
}

__attribute__((destructor)) static void report(void)
{
    if (!nstats)
        return;
    const char *out = getenv("OMP_TRACE_OUT"), *runs_s = getenv("OMP_TRACE_RUNS");
    double runs = runs_s && atof(runs_s) > 0 ? atof(runs_s) : 1;
    FILE *f = out && *out ? fopen(out, "a") : stderr;
    if (!f)
        f = stderr;
    int64_t all = 0, of_team[MAX_TEAM + 1] = {0};
    for (int i = 0; i < nstats; i++) {
        all += stats[i].regions;
        of_team[stats[i].team] += stats[i].regions;
    }
    fprintf(f, "# per run (us): kernel, team, regions, wall, work, fork, imbal, join, sync%%, "
            "busy of thread 0, of thread 1, gap before, forks over 5 us\n");
    double all_runs = runs;
    for (int team = 1; team <= MAX_TEAM; team++) {
        if (!of_team[team])
            continue;
        runs = all_runs * (double)of_team[team] / (double)all;
        fprintf(f, "# team of %d: %.1f runs\n", team, runs);
        kernel_stats total = {.team = team};
        for (int i = 0; i < nstats; i++) {
            const kernel_stats *k = &stats[i];
            if (k->team != team)
                continue;
            print_row(f, k->name, team, runs, k);
            total.regions += k->regions;
            total.wall += k->wall;
            total.work += k->work;
            total.fork += k->fork;
            total.imbal += k->imbal;
            total.join += k->join;
            total.busy[0] += k->busy[0];
            total.busy[1] += k->busy[1];
            total.gap += k->gap;
            total.slow_forks += k->slow_forks;
        }
        if (total.regions)
            print_row(f, "TOTAL", team, runs, &total);
    }
    if (f != stderr)
        fclose(f);
}
