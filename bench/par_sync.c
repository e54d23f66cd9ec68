/* bench/par_sync.c — what one parallel region costs on two threads when
 * it does nothing: libgomp's (`#pragma omp parallel`, as tec's kernels
 * run their parallel loops) against a minimal pool whose fork and join
 * are one cache line each, and the round trip of a cache line between the
 * two threads (bench/vcpu_rtt.c) measured alongside.
 *
 *   cc -O2 -fopenmp bench/par_sync.c -o par_sync -lpthread
 *   OMP_PROC_BIND=false GOMP_SPINCOUNT=10000 ./par_sync     (tec's settings)
 *
 * Each figure is the mean over N regions of the caller's time from before
 * the region to after it. */
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

enum { N = 100000 };

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static _Alignas(64) atomic_int flag;

static double round_trip(void)
{
    double t0 = 0, t1 = 0;
#pragma omp parallel num_threads(2)
    {
        int me = omp_get_thread_num();
#pragma omp barrier
        if (me == 0)
            t0 = now_ns();
        for (int i = 0; i < N; i++) {
            int want = 2 * i + me;
            while (atomic_load_explicit(&flag, memory_order_acquire) != want)
                ;
            atomic_store_explicit(&flag, want + 1, memory_order_release);
        }
        if (me == 0)
            t1 = now_ns();
    }
    atomic_store(&flag, 0);
    return (t1 - t0) / N;
}

static volatile int sink;

static double gomp_region(void)
{
    double t0 = now_ns();
    for (int i = 0; i < N; i++) {
#pragma omp parallel num_threads(2)
        sink = omp_get_thread_num();
    }
    return (now_ns() - t0) / N;
}

/* The minimal pool: the caller bumps `start` (one line), the worker sees
 * it, runs, and bumps `done` (another line) that the caller waits for. */
static _Alignas(64) atomic_long start_gen;
static _Alignas(64) atomic_long done_gen;

static void *pool_worker(void *arg)
{
    (void)arg;
    for (long g = 1; g <= N; g++) {
        while (atomic_load_explicit(&start_gen, memory_order_acquire) != g)
            ;
        sink = 1;
        atomic_store_explicit(&done_gen, g, memory_order_release);
    }
    return NULL;
}

static double pool_region(void)
{
    pthread_t t;
    atomic_store(&start_gen, 0);
    atomic_store(&done_gen, 0);
    pthread_create(&t, NULL, pool_worker, NULL);
    double t0 = now_ns();
    for (long g = 1; g <= N; g++) {
        atomic_store_explicit(&start_gen, g, memory_order_release);
        sink = 0;
        while (atomic_load_explicit(&done_gen, memory_order_acquire) != g)
            ;
    }
    double ns = (now_ns() - t0) / N;
    pthread_join(t, NULL);
    return ns;
}

int main(void)
{
    if (omp_get_num_procs() < 2) {
        fprintf(stderr, "par_sync: needs 2 processors\n");
        return 1;
    }
    double rtt0 = round_trip();
    double gomp = gomp_region();
    double pool = pool_region();
    double rtt1 = round_trip();
    printf("round trip %.0f / %.0f ns; empty region: libgomp %.0f ns, one-line pool %.0f ns\n",
           rtt0, rtt1, gomp, pool);
    return 0;
}
