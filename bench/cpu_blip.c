/* bench/cpu_blip.c — a moment's competitor: spins BURST_MS on one processor
 * every PERIOD_MS, for SECONDS, then ends.
 *
 *   gcc -O2 -o /tmp/cpu_blip bench/cpu_blip.c
 *   chrt -f 20 /tmp/cpu_blip [SECONDS [PERIOD_MS [BURST_MS [CPU]]]]   (default 60 250 3 0)
 *
 * Under a real-time priority above a tec run's (`chrt -f 10 tec ...`) each
 * burst takes one of the run's processors away for BURST_MS, as a task that
 * wakes on it does: the run's threads wait that long in one of its 5 ms
 * windows (runtime/threads.h), which one window must not turn into a sleep
 * of 0.1 s (bench/results/threads_s17.txt).  Sleeping 97% of the time, it
 * takes about 1% of the processor. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 60;
    double period = argc > 2 ? atof(argv[2]) : 250;
    double burst = argc > 3 ? atof(argv[3]) : 3;
    int cpu = argc > 4 ? atoi(argv[4]) : 0;
    if (seconds <= 0 || period <= 0 || burst < 0 || burst >= period || cpu < 0) {
        fprintf(stderr, "usage: cpu_blip [SECONDS [PERIOD_MS [BURST_MS [CPU]]]] (0 <= BURST < PERIOD)\n");
        return 2;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("cpu_blip: sched_setaffinity");
        return 1;
    }
    double end = now_ms() + seconds * 1e3;
    long bursts = 0;
    for (double t = now_ms(); t < end; t = now_ms()) {
        double stop = t + burst;
        while (now_ms() < stop)
            ;
        bursts++;
        double rest = period - burst;
        struct timespec ts = {.tv_sec = (time_t)(rest / 1e3),
                              .tv_nsec = (long)((rest - 1e3 * (double)(time_t)(rest / 1e3)) * 1e6)};
        nanosleep(&ts, NULL);
    }
    printf("cpu_blip: %ld bursts of %.1f ms on CPU %d\n", bursts, burst, cpu);
    return 0;
}
