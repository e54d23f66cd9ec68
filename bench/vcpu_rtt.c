/* bench/vcpu_rtt.c — how far apart the processors of two threads are: the
 * time a cache line takes to go from one thread to the other and back.
 *
 *   cc -O2 -fopenmp bench/vcpu_rtt.c -o vcpu_rtt && ./vcpu_rtt
 *
 * Two OpenMP threads hand one atomic counter back and forth 200000 times
 * and it prints the mean round trip.  On a virtual machine the hypervisor
 * may move the virtual processors: on the 2-core VM of
 * bench/results/par_s8.txt it printed 49-62 ns in some minutes and
 * 308-377 ns in others, and two threads ran SqueezeNet in 5 ms in the
 * first and 11 ms in the second.  Print it next to any 2-thread timing
 * there, and compare timings only within one of the two. */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static _Alignas(64) atomic_int flag;

int main(void)
{
    enum { N = 200000 };
    double t0 = 0, t1 = 0;
    if (omp_get_num_procs() < 2) {
        fprintf(stderr, "vcpu_rtt: needs 2 processors\n");
        return 1;
    }
#pragma omp parallel num_threads(2)
    {
        int me = omp_get_thread_num();
#pragma omp barrier
        if (me == 0)
            t0 = now_ns();
        for (int i = 0; i < N; i++) {
            int want = 2 * i + me;   /* thread 0 waits for even, 1 for odd */
            while (atomic_load_explicit(&flag, memory_order_acquire) != want)
                ;
            atomic_store_explicit(&flag, want + 1, memory_order_release);
        }
        if (me == 0)
            t1 = now_ns();
    }
    printf("round trip %.0f ns\n", (t1 - t0) / N);
    return 0;
}
