/* runtime/threads.h — how the threads of a run's parallel loops wait for
 * each other: spinning while they have the processors to themselves,
 * asleep while other processes compete for them.
 *
 * Between two parallel loops OpenMP's threads wait: spinning, a thread is
 * ready in a microsecond, but it burns the processor; asleep, it takes tens
 * of microseconds to wake (on a virtual machine above all), at every
 * parallel loop.  On a quiet machine spinning made MobileNetV2 on 2 threads
 * nearly twice as fast as sleeping; with other processes running, spinning
 * threads burn the share of the processors their partners need, and ran it
 * 4-10 times slower than sleeping ones, and slower than one thread
 * (bench/results/threads.txt).  libgomp reads its spin count once, but it
 * spins only briefly (100 rounds, about 6 us) while it manages more threads
 * than the process has processors.  So the runtime looks, before each call
 * of a run (rt_run_execute), at the end of a window (RT_THREADS_WINDOW_NS
 * and RT_THREADS_WINDOW_CALLS calls, or 4 * RT_THREADS_WINDOW_NS), at what
 * the threads met since the last look:
 *
 * - spinning: how fast the calls run against their last times asleep
 *   (each call of a run is timed, rt_threads_after_call; the times are
 *   kept per call and way of waiting, in the run).  Slower by more than
 *   RT_THREADS_SLOWER, other processes hold the processors: the threads go
 *   to sleep at once between parallel loops ("busy") -- when the next
 *   window loses too.  One window can lose by a moment that passes: a
 *   stalled call (under `chrt -f` the kernel's throttling, which holds
 *   real-time threads 50 ms of every second they run; a preempted virtual
 *   processor), a task that woke on a processor the threads spin on,
 *   another process's exit.  Sent to sleep by one such window, the 2-thread
 *   runs of ResNet-18 on the virtual machine of bench/results/runtime_s13.txt
 *   took up to twice as long, and bench/ort.sh's 2-thread processes on a
 *   quiet machine slept through 3-6 of 21 runs (bench/results/ort_s16.txt,
 *   threads_s17.txt), each time for at least RT_THREADS_PROBE_MIN_NS; a
 *   competitor makes every window lose and costs one window more.
 *   Where most of the window's calls have never run asleep, the time the
 *   process's threads spent runnable but not running tells instead (the
 *   kernel's per-thread run-queue wait, /proc/self/task/TID/schedstat):
 *   above RT_THREADS_WAIT_MAX of their time, the window lost.
 *   The waiting alone misleads: on a virtual machine shared with other sessions' low-weight processes
 *   the threads waited 44% of their time while spinning ran MobileNetV2
 *   twice as fast as sleeping (bench/results/par_s7.txt).  Busy, the
 *   threads sleep by keeping a parked OpenMP team of one thread more than
 *   the processors on a thread of its own, which puts libgomp's count of
 *   threads above the processors; where that cannot be done (no
 *   GOMP_parallel), a busy run uses one thread.  A run is busy from its
 *   first call when more other processes are runnable than there are
 *   processors, and tries spinning once after RT_THREADS_PROBE_FIRST_NS,
 *   or at the end of the warm-up when that is later (the times asleep
 *   of the warm-up's calls are cold ones, and do not count).
 * - busy: try spinning after a back-off (RT_THREADS_PROBE_MIN_NS, doubling
 *   after each try its windows refute, up to RT_THREADS_PROBE_MAX_NS)
 *   when no more other processes are runnable than there are processors
 *   (/proc/loadavg's runnable count minus this process's running threads),
 *   or as soon as the least back-off is over when none is.  The count
 *   alone does not decide: the counted processes may be ones the scheduler
 *   lets this one preempt (niced builds, other sessions' background jobs),
 *   which the calls' times then show.  On a crowded machine only the first
 *   try: a window of spinning there costs more than the window (the
 *   scheduler then owes the others the time the spinning took).
 *
 * - real-time: threads of a real-time scheduling policy (SCHED_FIFO,
 *   SCHED_RR: `chrt -f`) preempt every process of the normal policies, so
 *   runnable processes do not count as others for them, however many there
 *   are (other real-time processes can still hold the processors: the
 *   times and the waiting tell as above).  Counted, they sent a run under
 *   `chrt -f 5` on the loaded machine of bench/results/par_s10.txt to
 *   sleep in most of its calls, and Inception-v3 on 2 threads took 63.6
 *   ms where spinning took 57.7 (its forks woke a sleeping thread 85
 *   times a run).
 *
 * The decision (rt_threads_decide) is a pure function of those readings,
 * so tests can drive it.
 *
 * Apart from the way of waiting, a run chooses its thread count: all its
 * threads, or one (rt_one_thread).  Two threads need not be faster than
 * one: each layer moves the data another processor wrote when its threads
 * split the work otherwise than the layer before (a concatenation's copy
 * split by channel after layers split by row, an input's padded copy), and
 * it writes lines the other processor holds, and on a virtual machine the
 * hypervisor may place the two virtual processors far apart.  On the
 * 2-core virtual machine of bench/results/par_s8.txt a cache line went to
 * the other processor and back in 50 ns in some minutes and in 320 ns in
 * others; in the slow minutes SqueezeNet took 11.3 ms on two threads
 * against 8.8 on one (5 ms on two in the fast minutes), its
 * concatenations 5-8 times as long on two threads as on one.  Chosen per
 * call, one thread did not help: a call on one thread then reads what two
 * threads wrote, and took longer than in a run on one thread throughout.
 * So whole runs are compared: a process's fourth run (after two timed on
 * all threads) runs on one thread, and runs try the other way again after
 * a back-off (RT_ONE_TRY_MIN runs, doubling while the tries change
 * nothing, four times as far after a try of one thread that took
 * RT_ONE_FAR_LOSS times as long, up to RT_ONE_TRY_MAX): two runs, of which
 * only the second counts (the first moves the data and wakes the threads),
 * but a try of one thread ends after its first run when that was not
 * faster than the runs on all threads (it costs one slow run where two
 * threads scale).  A try that would leave all threads must beat, by the
 * gain, the run on all threads just before it and the faster of the
 * RT_ONE_CONFIRM_RUNS runs after it (which use all threads; the last of
 * them decides): the virtual machine of
 * bench/results/steady_s27.txt ran the same process's runs 1.3-1.6 times
 * as long for seconds at a time (its host), and a try that fell in a
 * faster second won against the times of a slower one (the temps apart,
 * ResNet-50's 3-4% slower than the plan beside them, were kept after
 * 12 of 51 tries in ResNet-50 and Wide ResNet-50-2 processes).
 * A try of one thread is made only where it can win: with the processors
 * of the first two threads far apart.  Before a run that would try, the
 * two threads hand a cache line back and forth (rt_threads_round_trip_ns,
 * 5-30 us); under RT_NEAR_NS a round the try waits a back-off (not
 * doubled) and the run uses all threads.  On the virtual machine of
 * bench/results/par_s12.txt two threads near (50-70 ns) ran ResNet-18,
 * MobileNetV2, SqueezeNet and EfficientNet-B0 1.8-1.9 times as fast as
 * one, and each try cost a run 1.8-1.9 times as long, in the fourth run
 * and the twentieth: what a user who times a process's first 10 or 20 runs
 * saw.  Far (150-500 ns), the tries go on as before: there one thread had
 * won (par_s8.txt), and the temps apart win now.
 * The runs go on one thread while their
 * time there is more than RT_ONE_GAIN below their time on all threads
 * (each the low envelope of the runs' times: down at once to a faster run,
 * up a quarter of the way to a slower one, so that a run another process
 * delayed does not decide, as a first version's running means let it on a
 * crowded machine), the threads waiting as they wait at the run's start (spinning or asleep:
 * a time of each; without one for the way they wait now, the run uses
 * all the threads and gives it).  Only a try and such a run decide.  The first run (the warm-up: page
 * faults, cold caches) runs on all threads and is not counted.  A run
 * that starts busy (other processes hold the processors) uses all threads,
 * asleep, and neither counts nor tries: each thread then gets its share of
 * the processors, and the runs' times there vary more than the choice
 * gains.  Counted, such runs sent MobileNetV2 under a spinning competitor
 * on a loaded machine to one thread in 1-2 runs of 10 and took 22-140 ms
 * a run where all threads asleep took 12-80 (bench/results/par_s10.txt).
 * The placement of the temps apart (runtime/exec.h) is tried the same way,
 * and only far too: near, apart lost everywhere (par_s9.txt); but where
 * the threads spin it is kept when it is 2% faster (RT_APART_GAIN), not 5%. */
#ifndef TEC_RT_THREADS_H
#define TEC_RT_THREADS_H

#include <stdbool.h>
#include <stdint.h>

struct cg_library;

#define RT_THREADS_WINDOW_NS 5000000          /* 5 ms between looks, */
#define RT_THREADS_WINDOW_CALLS 8             /* and 8 timed calls (or 20 ms) */
#define RT_THREADS_WAIT_MAX 0.2               /* run-queue wait per thread-time */
#define RT_THREADS_SLOWER 0.1                 /* spinning's calls slower than asleep */
#define RT_THREADS_PROBE_FIRST_NS 20000000    /* 20 ms: a busy start's first try */
#define RT_THREADS_PROBE_MIN_NS 100000000     /* 0.1 s */
#define RT_THREADS_PROBE_MAX_NS 2000000000    /* 2 s */
#define RT_THREADS_SETTLE_NS 50000000         /* 50 ms: the most of a warm-up that does not decide */

typedef struct rt_threads_state {
    bool started;
    bool busy;               /* others hold the processors: threads sleep at once */
    int64_t since_ns;        /* start of the current window (CLOCK_MONOTONIC) */
    int64_t wait_ns;         /* this process's run-queue wait at its start */
    int64_t busy_at_ns;      /* when it last became busy */
    int64_t probe_at_ns;     /* busy: when to try spinning again */
    int64_t backoff_ns;      /* the back-off after the next refuted try */
    bool probing;            /* spinning is tried: until its windows decide */
    bool suspect;            /* spinning lost the last window (the next decides) */
    bool tried;              /* it tried before */
    /* the window's calls (rt_threads_after_call): their time, and the part
     * of it whose calls ran the other way before, with those times */
    int64_t call_ns, cmp_ns, ref_ns;
    int window_calls;
    /* what happened, for --verbose */
    int64_t calls, busy_calls;      /* calls run, and run busy */
    int64_t one_calls;              /* calls run on one thread (rt_one_thread) */
    bool one_thread;                /* busy runs on one thread (no parked team) */
} rt_threads_state;

/* What one look saw. */
typedef struct rt_threads_reading {
    int64_t now_ns;
    int64_t wait_ns;         /* run-queue wait of all this process's threads so far */
    /* runnable threads of other processes now; read only where they count:
     * at the first look and while busy, for threads of a normal policy
     * (rt_threads_before_call passes 0 otherwise) */
    int others;
    int cpus;                /* online processors */
    /* the window's timed calls: their time, the part of it whose calls
     * have a time the other way of waiting, and those times (ns) */
    int64_t call_ns, cmp_ns, ref_ns;
    int calls;               /* how many they are */
    /* the calling thread has a real-time scheduling policy (SCHED_FIFO or
     * SCHED_RR, as `chrt` gives; the parallel loops' threads inherit it) */
    bool realtime;
} rt_threads_reading;

#define RT_ONE_GAIN 0.05         /* one thread must be 5% faster to be kept */
/* The temps apart (rt_run's placement, which runs this choice with "one"
 * meaning apart) need less: a wrong choice costs a few percent there, not
 * a run's time again as one thread does, and far apart they won on every
 * model measured (3.5-21%, EfficientNet-B0 9.3 ms against 11.2, ResNet-18
 * 18.7 against 19.4, which the gain of one thread kept on the plan;
 * bench/results/runtime_s14.txt); 2% keeps a try from deciding on the
 * noise of its two runs.  Only for runs whose threads spin: asleep beside
 * other processes (busy) the runs' times vary more than the choice gains,
 * and RT_ONE_GAIN applies. */
#define RT_APART_GAIN 0.02
#define RT_ONE_TRY_MIN 8          /* runs between tries of the other count, */
#define RT_ONE_TRY_MAX 512        /* doubling up to this while tries change nothing */
/* A try whose run the other way took this many times as long as the usual
 * way backs off four times as far, not twice: one thread 1.9 times as
 * long on 2 threads' ResNet-50 (bench/results/steady_s27.txt) will not win
 * in the next 16 runs, and each try costs a run nearly twice as long (the
 * 20th run of a 20-run series). */
#define RT_ONE_FAR_LOSS 1.5
/* Runs the usual way after a try that would leave it, the faster of which
 * the try must beat: one can stall (a ResNet-50 run of 30 ms took 54 in the
 * kernel's real-time throttling, and confirmed a try it should have
 * refuted; steady_s27.txt). */
#define RT_ONE_CONFIRM_RUNS 2

/* Whether a process's runs use all their threads or one. */
typedef struct rt_one_thread {
    int64_t one_ns;          /* a run's time on one thread (low envelope); 0: never */
    int64_t all_ns[2];       /* ... on all threads spinning / asleep; 0: never */
    int32_t runs;            /* runs so far */
    int32_t next_try;        /* the (first) run of the next try */
    int32_t backoff;         /* runs from a try to the next */
    double gain;             /* "one" must be this much faster to be kept */
    bool two_run_tries;      /* a try of "one" always has its second run */
    bool one;                /* the runs use one thread */
    bool trying;             /* the current run runs the other way */
    bool busy;               /* the threads were asleep at its start */
    bool measuring;          /* it runs on all threads for want of a time so */
    bool extend;             /* the try has a second run */
    /* A try that would leave the runs' usual way (all threads, the temps as
     * planned) for the other is confirmed against the runs beside it: the
     * last run the usual way before it (last_ns, 0: none, waiting
     * last_busy) and the faster (confirm_ns) of RT_ONE_CONFIRM_RUNS more
     * runs the usual way after it (confirming: how many are left), which
     * its deciding run (try_ns, waiting try_busy) must both beat by the
     * gain. */
    int64_t last_ns, try_ns, confirm_ns;
    bool last_busy, try_busy;
    int confirming;
} rt_one_thread;

/* The state before the first run, for a choice whose other way ("one")
 * must be `gain` faster (a fraction: RT_ONE_GAIN, RT_APART_GAIN) to be
 * kept, and whose tries of it end after their first run when that was
 * not faster (one thread: such a run costs most of a run again), or
 * always have two (two_run_tries; the temps apart: a second run apart
 * costs a few percent at most, and the first, the bytes cold, was 49 ms
 * where the next ran 44-45 and the plan 46-48 in a ResNet-50 process of
 * bench/results/runtime_s14.txt, which kept the plan 17 runs). */
void rt_one_thread_init(rt_one_thread *s, double gain, bool two_run_tries);
/* Whether the next run (the next rt_one_thread_before) starts a try of
 * one thread, the runs using all threads now. */
bool rt_one_thread_try_next(const rt_one_thread *s);
/* Skips that try (where it cannot win): the next one a back-off later,
 * the back-off as it is. */
void rt_one_thread_skip_try(rt_one_thread *s);
/* Before a run, the threads asleep at once between parallel loops (busy)
 * or spinning: whether it runs on one thread. */
bool rt_one_thread_before(rt_one_thread *s, bool busy);
/* After it: it ran on one thread (`one`) or not, and took ns. */
void rt_one_thread_after(rt_one_thread *s, bool one, int64_t ns);

/* Whether the next window is busy, from state s and a look r at the end
 * of the current one (or, the first time, at the first call), for a run on
 * `threads` threads. */
bool rt_threads_decide(rt_threads_state *s, const rt_threads_reading *r, int threads);

/* Before a call of a run on `threads` threads (2 or more): looks at the
 * machine when the window is over, puts the threads to sleep between
 * parallel loops or lets them spin, sets lib's thread count
 * (cg_set_threads), and counts the call; returns whether the call runs
 * busy (asleep at once, or on one thread).  One state per process
 * (rt_threads_global); calls from several threads at once leave it as it
 * is. */
bool rt_threads_before_call(struct cg_library *lib, int threads);

/* After such a call: it took ns, and ref_ns the last time it ran the
 * other way (busy or not; 0: never).  Adds to the window's times. */
void rt_threads_after_call(int64_t ns, int64_t ref_ns);

/* The process's warm-up (its load calls and first run) is over: the
 * looks at the machine decide from the next window on.  Before, only the
 * first look decides (asleep at once where more processes want the
 * processors than there are), and the warm-up's later looks within
 * RT_THREADS_SETTLE_NS of it only start the next window: in the first
 * 10-30 ms after ONNX Runtime's node process ended (at times a tec) the
 * threads waited in the run queue 40-90% of a window and none after, which
 * sent a short process's runs to sleep for RT_THREADS_PROBE_MIN_NS (13 of
 * MobileNetV2's 20 runs, 1.5x its median; bench/results/twot_s15.txt). */
void rt_threads_warmed_up(void);

/* A call ran on one thread by the run's choice (rt_one_thread): counted
 * for --verbose, not compared with other ways of waiting. */
void rt_threads_one_call(void);

/* Round trips below this (ns): the processors of the first two threads
 * are near, and neither one thread nor the temps apart can win (on the
 * virtual machine of bench/results/par_s12.txt 50-70 ns near, 150-500
 * far). */
#define RT_NEAR_NS 120

/* The mean time a cache line takes from the first thread of an OpenMP
 * team of two to the second and back (ns), measured now over 64 round
 * trips (about 4 us near, 25 far) after 8 that wake the second; -1 when
 * it cannot be told: no libgomp loaded, a team of one, or the second
 * thread did not run within 2 ms (other processes hold the processors). */
int64_t rt_threads_round_trip_ns(void);

/* CLOCK_MONOTONIC in ns: the clock of the readings and of the calls' times. */
int64_t rt_threads_now_ns(void);

/* The process's state (read it for --verbose after the runs). */
const rt_threads_state *rt_threads_global(void);
/* Whether busy runs use one thread now (rt_threads_state's one_thread as
 * the last look left it; safe to call while other threads run calls). */
bool rt_threads_one_thread_now(void);

#endif
