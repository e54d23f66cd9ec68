/* bench/vcpu_speed.c — how fast each vCPU runs, window by window.
 *
 *   gcc -O2 -pthread -o /tmp/vcpu_speed bench/vcpu_speed.c
 *   /tmp/vcpu_speed [SECONDS [WINDOW_MS [CPU...]]]   (default 10 s, 20 ms, every CPU)
 *
 * One thread pinned to each CPU times a fixed dependent chain of integer
 * multiply-adds (no memory: it runs from registers) over and over; per
 * window it keeps the fastest time, the chain's time when nothing preempted
 * it.  A slower minimum means the vCPU itself runs slower for the whole
 * window, not that it was interrupted.  On this VM a vCPU falls into a slow
 * state (the chain 1.5-1.7x slower, AVX-512 VNNI 1.25x, L2 streams 1.3x)
 * for 20 ms to seconds at a time, on each vCPU independently of the other
 * and of what the guest runs (bench/results/pages_s16.txt): what made
 * some layers look like they had "two speeds fixed per process".
 *
 * Prints, per CPU, one character per window ('.' within 15% of the CPU's
 * fastest window, 'S' slower), the share of slow windows and the fastest
 * and slowest window's chain: a run that lies wholly in a slow period has
 * no 'S' but a fastest chain above the quiet one (10.8 us on this VM).  Run it with
 * `chrt -f 10` so that other processes do not take the windows.  Probing
 * every CPU keeps all of them busy; name one CPU to watch it while the
 * others run what they run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 64
#define MAX_WINDOWS 100000

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A chain of n multiply-adds, each waiting for the one before. */
__attribute__((noinline)) static uint64_t chain(uint64_t n)
{
    uint64_t x = 1;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 3 + i;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

typedef struct {
    int cpu;
    int nwindows;
    double window_s;
    double best[MAX_WINDOWS];   /* per window, the fastest chain (seconds) */
    int ok;
} probe;

static void *run_probe(void *arg)
{
    probe *p = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(p->cpu, &set);
    p->ok = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
    volatile uint64_t sink = 0;
    for (int w = 0; p->ok && w < p->nwindows; w++) {
        double start = seconds_now(), best = 1e9;
        while (seconds_now() - start < p->window_s) {
            double a = seconds_now();
            sink += chain(20000);
            double b = seconds_now();
            if (b - a < best)
                best = b - a;
        }
        p->best[w] = best;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 10.0;
    double window_ms = argc > 2 ? atof(argv[2]) : 20.0;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (secs <= 0 || window_ms <= 0 || ncpu < 1) {
        fprintf(stderr, "usage: vcpu_speed [SECONDS > 0 [WINDOW_MS > 0 [CPU...]]]\n");
        return 2;
    }
    if (ncpu > MAX_CPUS)
        ncpu = MAX_CPUS;
    int cpus[MAX_CPUS], nprobes = 0;
    for (int a = 3; a < argc && nprobes < MAX_CPUS; a++) {
        char *end;
        long c = strtol(argv[a], &end, 10);
        if (*end || c < 0 || c >= ncpu) {
            fprintf(stderr, "vcpu_speed: no CPU %s (this machine has %ld)\n", argv[a], ncpu);
            return 2;
        }
        cpus[nprobes++] = (int)c;
    }
    for (long c = 0; argc <= 3 && c < ncpu; c++)
        cpus[nprobes++] = (int)c;
    double windows = secs * 1000.0 / window_ms;   /* clamped before it becomes an int */
    int nwindows = windows < 1 ? 1 : windows > MAX_WINDOWS ? MAX_WINDOWS : (int)windows;
    probe *probes = calloc((size_t)nprobes, sizeof *probes);
    pthread_t *threads = calloc((size_t)nprobes, sizeof *threads);
    if (!probes || !threads) {
        fprintf(stderr, "vcpu_speed: out of memory\n");
        return 1;
    }
    for (int i = 0; i < nprobes; i++) {
        probes[i] = (probe){.cpu = cpus[i], .nwindows = nwindows, .window_s = window_ms / 1000.0};
        if (pthread_create(&threads[i], NULL, run_probe, &probes[i]) != 0) {
            fprintf(stderr, "vcpu_speed: cannot start a thread for cpu %d\n", cpus[i]);
            return 1;
        }
    }
    for (int i = 0; i < nprobes; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < nprobes; i++) {
        probe *p = &probes[i];
        int c = p->cpu;
        if (!p->ok) {
            printf("cpu%d: cannot pin a thread there\n", c);
            continue;
        }
        double fastest = 1e9, slowest = 0;
        for (int w = 0; w < nwindows; w++) {
            fastest = p->best[w] < fastest ? p->best[w] : fastest;
            slowest = p->best[w] > slowest ? p->best[w] : slowest;
        }
        int slow = 0;
        printf("cpu%d ", c);
        for (int w = 0; w < nwindows; w++) {
            int is_slow = p->best[w] > fastest * 1.15;
            slow += is_slow;
            putchar(is_slow ? 'S' : '.');
        }
        printf("\ncpu%d: chain of 20000 multiply-adds %.1f us fastest, %.1f us slowest window; "
               "%d of %d windows (%.0f%%) slow\n",
               c, fastest * 1e6, slowest * 1e6, slow, nwindows, 100.0 * slow / nwindows);
    }
    free(probes);
    free(threads);
    return 0;
}
