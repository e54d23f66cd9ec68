/* runtime/threads.c — the thread count of parallel loops follows the
 * processors other processes leave free (runtime/threads.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* RTLD_DEFAULT, sched_getaffinity, CPU_COUNT */
#endif
#include "runtime/threads.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "codegen/codegen.h"

/* Whether the window's spinning was slower than its calls ran asleep
 * before; without such times for most of the window's calls, whether the
 * threads waited for processors more than RT_THREADS_WAIT_MAX of their
 * time. */
static bool spinning_lost(const rt_threads_state *s, const rt_threads_reading *r, int threads)
{
    if (r->cmp_ns > 0 && r->ref_ns > 0 && 2 * r->cmp_ns >= r->call_ns)
        return (double)r->cmp_ns > (1 + RT_THREADS_SLOWER) * (double)r->ref_ns;
    int64_t dt = r->now_ns - s->since_ns;
    /* run-queue wait per thread-time over the window */
    double waited = dt > 0 ? (double)(r->wait_ns - s->wait_ns) / ((double)dt * threads) : 0;
    return waited > RT_THREADS_WAIT_MAX;
}

bool rt_threads_decide(rt_threads_state *s, const rt_threads_reading *r, int threads)
{
    if (threads < 1)
        threads = 1;
    /* the competitors: processes of the normal policies cannot take a
     * processor from real-time threads (other real-time ones can: the
     * waiting and the times still tell) */
    int others = r->realtime ? 0 : r->others;
    /* no other process wants the processors this run's threads leave */
    bool free_cpus = others <= r->cpus - threads;
    if (!s->started) {
        /* The first call: asleep at once on a crowded machine, trying
         * spinning soon (when the calls have times asleep to compare
         * with); else the first window tells (a niced process that happens
         * to run now must not cost a short run its spinning). */
        s->started = true;
        s->busy = others > r->cpus;
        s->backoff_ns = RT_THREADS_PROBE_MIN_NS;
        s->busy_at_ns = r->now_ns;
        s->probe_at_ns = r->now_ns + RT_THREADS_PROBE_FIRST_NS;
    } else if (!s->busy) {
        /* Asleep only when two windows in a row lose.  One window can lose
         * by a moment: a call the kernel stalled (its throttling of
         * real-time threads, a preempted virtual processor), a task that
         * woke on a processor the threads spin on (5 ms windows: 2 ms of
         * run-queue wait is RT_THREADS_WAIT_MAX), another process's exit
         * (bench/results/threads_s17.txt); each sent the threads to sleep
         * for RT_THREADS_PROBE_MIN_NS or more where they had the processors
         * to themselves.  A competitor makes every window lose, and costs
         * the second window only.  A try of spinning is confirmed the same
         * way; refuted, it backs off further (a first refutation the
         * least). */
        bool lost = spinning_lost(s, r, threads);
        if (lost && s->suspect) {
            s->busy = true;
            s->backoff_ns = !s->probing ? RT_THREADS_PROBE_MIN_NS
                            : 2 * s->backoff_ns < RT_THREADS_PROBE_MIN_NS ? RT_THREADS_PROBE_MIN_NS
                            : 2 * s->backoff_ns > RT_THREADS_PROBE_MAX_NS ? RT_THREADS_PROBE_MAX_NS
                                                                          : 2 * s->backoff_ns;
            s->busy_at_ns = r->now_ns;
            s->probe_at_ns = r->now_ns + s->backoff_ns;
        } else if (!lost) {
            s->backoff_ns = RT_THREADS_PROBE_MIN_NS;
        }
        s->suspect = lost && !s->busy;
        /* a try lasts until its windows decide */
        s->probing = s->probing && s->suspect;
    } else if ((r->now_ns >= s->probe_at_ns && (others <= r->cpus || !s->tried)) ||
               (free_cpus && r->now_ns >= s->busy_at_ns + RT_THREADS_PROBE_MIN_NS)) {
        /* Spin again when the processors are free (not sooner than the
         * least back-off, so a competitor that comes and goes between
         * looks does not flip it every window), or try when the back-off
         * is over and no more processes want the processors than there
         * are; the next windows' calls tell.  Not on a crowded machine,
         * but for a run's first try: a window of spinning there costs
         * more than the window (the scheduler then owes the time the
         * spinning took to the others), but the counted processes may be
         * ones the scheduler lets this one preempt (other sessions'
         * background jobs), which only a try shows. */
        s->busy = false;
        s->probing = true;
        s->tried = true;
    }
    s->since_ns = r->now_ns;
    s->wait_ns = r->wait_ns;
    return s->busy;
}

/* ------------------------------------------------------------ one thread or all */

void rt_one_thread_init(rt_one_thread *s, double gain, bool two_run_tries)
{
    *s = (rt_one_thread){.next_try = 4, .backoff = RT_ONE_TRY_MIN, .gain = gain,
                         .two_run_tries = two_run_tries};
}

/* Whether one thread is faster than all by the gain, all waiting the way
 * `busy` says (unknown: not). */
static bool one_faster(const rt_one_thread *s, bool busy)
{
    return s->one_ns > 0 && s->all_ns[busy] > 0 &&
           (double)s->one_ns < (1 - s->gain) * (double)s->all_ns[busy];
}

bool rt_one_thread_before(rt_one_thread *s, bool busy)
{
    if (s->runs < INT32_MAX)
        s->runs++;
    /* a try of all threads is two runs, the first of which moves the data
     * and wakes the threads; of one thread, one run, and a second (which
     * counts) when the first was faster than the runs on all threads */
    if (s->runs == s->next_try)
        s->extend = s->one;
    s->trying = s->runs == s->next_try || (s->runs - 1 == s->next_try && s->extend);
    s->busy = busy;
    /* no time on all threads waiting this way: all, to have one */
    s->measuring = s->one && s->all_ns[busy] == 0;
    if (s->measuring)
        s->one = false;
    return s->runs > 1 && s->one != s->trying;
}

bool rt_one_thread_try_next(const rt_one_thread *s)
{
    return !s->one && s->runs < INT32_MAX && s->runs + 1 == s->next_try;
}

void rt_one_thread_skip_try(rt_one_thread *s)
{
    if (rt_one_thread_try_next(s))
        s->next_try = s->next_try > INT32_MAX - s->backoff ? INT32_MAX : s->next_try + s->backoff;
}

/* Whether a run of try_ns beats one the usual way of usual_ns by the gain. */
static bool beats(const rt_one_thread *s, int64_t try_ns, int64_t usual_ns)
{
    return (double)try_ns < (1 - s->gain) * (double)usual_ns;
}

/* The low envelope of a series of run times: down at once to a faster
 * run, up a quarter of the way to a slower one (a run that another process
 * delayed must not decide; a machine that stays slower must, soon). */
static int64_t envelope(int64_t env, int64_t ns)
{
    return !env || ns <= env ? ns : env + (ns - env) / 4;
}

void rt_one_thread_after(rt_one_thread *s, bool one, int64_t ns)
{
    if (s->runs <= 1 || ns <= 0)
        return;   /* the warm-up */
    if (s->trying && s->runs == s->next_try &&
        (!one || s->two_run_tries || (s->all_ns[s->busy] > 0 && ns < s->all_ns[s->busy]))) {
        s->extend = true;   /* the try's second run decides */
        return;
    }
    if (one)
        s->one_ns = envelope(s->one_ns, ns);
    else
        s->all_ns[s->busy] = envelope(s->all_ns[s->busy], ns);
    /* only a try or a run that measures decides: a run delayed between
     * them must not send the runs to one thread until the next try */
    bool was = s->one;
    if (s->trying || s->measuring)
        s->one = one_faster(s, s->busy);
    s->measuring = false;
    bool decided = s->trying;
    if (s->trying && !was && s->one) {
        /* the try would leave the usual way: only when it beat the run
         * before it too, and then the run after it (the next, the usual
         * way) decides (runtime/threads.h) */
        s->one = false;
        if (!s->last_ns || s->last_busy != s->busy || beats(s, ns, s->last_ns)) {
            s->confirming = RT_ONE_CONFIRM_RUNS;
            s->try_ns = ns;
            s->try_busy = s->busy;
            s->confirm_ns = 0;
            decided = false;
        }
        s->trying = false;
    } else if (s->confirming > 0) {
        /* the faster of the runs after the try: one of them may have
         * stalled (the real-time throttling's 50 ms) */
        s->confirm_ns = s->confirm_ns && s->confirm_ns < ns ? s->confirm_ns : ns;
        s->confirming = s->busy == s->try_busy ? s->confirming - 1 : 0;
        if (s->confirming == 0) {
            s->one = s->busy == s->try_busy && beats(s, s->try_ns, s->confirm_ns) &&
                     one_faster(s, s->busy);
            decided = true;
            was = false;
        }
    }
    if (decided) {
        /* a try that changed nothing backs off further; four times as far
         * when its runs the other way took half as long again as the usual
         * ones (RT_ONE_FAR_LOSS) */
        int grow = !was && one && s->all_ns[s->busy] > 0 &&
                   (double)ns > RT_ONE_FAR_LOSS * (double)s->all_ns[s->busy] ? 4 : 2;
        s->backoff = s->one != was ? RT_ONE_TRY_MIN
                     : s->backoff >= RT_ONE_TRY_MAX / grow ? RT_ONE_TRY_MAX
                                                           : grow * s->backoff;
        s->next_try = s->runs > INT32_MAX - s->backoff ? INT32_MAX : s->runs + s->backoff;
        s->trying = false;
    }
    if (!one) {
        s->last_ns = ns;
        s->last_busy = s->busy;
    }
}

/* ------------------------------------------------------------ reading /proc */

/* This process's threads: /proc/self/task/TID/{schedstat,stat}, opened
 * once and read with pread (each read makes the file anew), enumerated
 * again when the thread count changes or a read fails.  The count is the
 * link count of the directory /proc/self/task (2 + the threads: Linux's
 * proc_task_getattr), an fstat of 0.4 us; /proc/self/stat's field 20 only
 * where that does not tell: reading that file, which sums every thread's
 * times, took 24 of a look's 40 us in a 2-thread ResNet-18 process on the
 * virtual machine of bench/results/twot_s16.txt, a look every 5 ms on
 * the run's critical path while the other thread waits. */
#define MAX_TASKS 256
typedef struct task_files {
    int task_dir;            /* /proc/self/task, -1 when not open */
    int self_stat;           /* /proc/self/stat, -1 when not open */
    int loadavg;
    /* online processors, counted at the first look: sysconf reads a file
     * under /sys each time, and took 45 us of a look's 90 on the VM of
     * bench/results/par_s11.txt (a look every 5 ms) */
    int cpus;
    long nthreads;
    int n;
    int schedstat[MAX_TASKS];
    int stat[MAX_TASKS];
    /* each thread's run-queue wait at the last read (-1: not read since
     * it was opened), and the sum of the threads' waits between reads: a
     * sum over the threads now would fall when a thread ends (the parked
     * team's, rt_threads_before_call) and jump when one is counted anew;
     * it made windows after a change of the threads' waiting read -42%
     * and 592% of their time (bench/results/threads_s17.txt) */
    int64_t last_wait[MAX_TASKS];
    int64_t waited;
} task_files;

static void close_tasks(task_files *t)
{
    for (int i = 0; i < t->n; i++) {
        close(t->schedstat[i]);
        close(t->stat[i]);
    }
    t->n = 0;
}

/* The text of fd's file in buf (NUL-terminated); its length, or -1. */
static ssize_t read_all(int fd, char *buf, size_t len)
{
    ssize_t n = fd < 0 ? -1 : pread(fd, buf, len - 1, 0);
    if (n >= 0)
        buf[n] = '\0';
    return n;
}

/* The text after the ")" that ends the command name in a stat file. */
static const char *after_comm(const char *buf)
{
    const char *p = strrchr(buf, ')');
    return p ? p + 1 : NULL;
}

static long thread_count(task_files *t)
{
    struct stat dir;
    if (t->task_dir >= 0 && fstat(t->task_dir, &dir) == 0 && dir.st_nlink >= 3)
        return (long)dir.st_nlink - 2;
    char buf[1024];
    if (read_all(t->self_stat, buf, sizeof buf) < 0)
        return -1;
    /* fields after the name: state(3) ... num_threads(20) */
    const char *p = after_comm(buf);
    long v = -1;
    for (int field = 3; p && field <= 20; field++) {
        while (*p == ' ')
            p++;
        if (field == 20)
            v = strtol(p, NULL, 10);
        p = strchr(p, ' ');
    }
    return v;
}

static bool open_tasks(task_files *t)
{
    close_tasks(t);
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return false;
    struct dirent *e;
    while ((e = readdir(d)) && t->n < MAX_TASKS) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[320];
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        int ss = open(path, O_RDONLY | O_CLOEXEC);
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        int st = open(path, O_RDONLY | O_CLOEXEC);
        if (ss < 0 || st < 0) {
            if (ss >= 0)
                close(ss);
            if (st >= 0)
                close(st);
            continue;   /* it ended meanwhile */
        }
        t->schedstat[t->n] = ss;
        t->stat[t->n] = st;
        t->last_wait[t->n] = -1;
        t->n++;
    }
    closedir(d);
    return t->n > 0;
}

/* The run-queue wait of this process's threads (ns) summed over the
 * times between reads (a thread counts from the read after the one that
 * found it), and in *running how many of them are runnable (running==NULL:
 * not wanted).  False when /proc does not tell. */
static bool read_tasks(task_files *t, int64_t *wait, int *running)
{
    long n = thread_count(t);
    if (n < 0)
        return false;
    for (int attempt = 0; attempt < 2; attempt++) {
        if ((n != t->nthreads || attempt) && !open_tasks(t))
            return false;
        t->nthreads = n;
        int64_t sum = 0;
        int run = 0;
        bool ok = true;
        for (int i = 0; ok && i < t->n; i++) {
            char buf[1024];
            long long on_cpu, waited;
            ok = read_all(t->schedstat[i], buf, sizeof buf) > 0 &&
                 sscanf(buf, "%lld %lld", &on_cpu, &waited) == 2;
            if (ok && t->last_wait[i] >= 0 && waited > t->last_wait[i])
                sum += waited - t->last_wait[i];
            if (ok)
                t->last_wait[i] = waited;
            if (ok && running) {
                const char *p = read_all(t->stat[i], buf, sizeof buf) > 0 ? after_comm(buf)
                                                                          : NULL;
                while (p && *p == ' ')
                    p++;
                ok = p && *p;
                run += ok && *p == 'R';
            }
        }
        if (ok) {
            t->waited += sum;
            *wait = t->waited;
            if (running)
                *running = run;
            return true;
        }
    }
    return false;
}

/* Runnable threads of the whole machine now (the R of /proc/loadavg's
 * "R/T"), or -1. */
static int machine_runnable(task_files *t)
{
    char buf[256];
    int r;
    if (read_all(t->loadavg, buf, sizeof buf) < 0 || sscanf(buf, "%*s %*s %*s %d/", &r) != 1)
        return -1;
    return r;
}

int64_t rt_threads_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ------------------------------------------------------------ sleeping at once */

/* libgomp spins gomp_throttled_spin_count rounds (100, or 1000 under
 * OMP_WAIT_POLICY=active, never more than GOMP_SPINCOUNT) instead of
 * GOMP_SPINCOUNT while it manages more threads than the processors it
 * found.  A thread of its own starts an OpenMP team of one thread more than
 * the processors (its own pool of threads) and waits until told to end,
 * the pool parked asleep; when it ends, libgomp frees the pool and its
 * threads spin as before. */
typedef void (*gomp_parallel_fn)(void (*)(void *), void *, unsigned, unsigned);

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool running, stop;
    unsigned team;
    gomp_parallel_fn parallel;
} parked = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void no_work(void *p) { (void)p; }

/* A symbol of the OpenMP runtime the kernels loaded (NULL before they
 * did, and without one), looked up the first time it is found and kept in
 * *slot: atomically, since runs on several threads (runtime/sched.c) may
 * look at once; each finds the same. */
static void *omp_symbol(_Atomic(void *) *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (!f && (f = dlsym(RTLD_DEFAULT, name)))
        atomic_store_explicit(slot, f, memory_order_release);
    return f;
}

static _Atomic(void *) gomp_parallel_sym, thread_num_sym, team_size_sym;

static gomp_parallel_fn gomp_parallel(void)
{
    return (gomp_parallel_fn)omp_symbol(&gomp_parallel_sym, "GOMP_parallel");
}

static void *parked_main(void *p)
{
    (void)p;
    parked.parallel(no_work, NULL, parked.team, 0);
    pthread_mutex_lock(&parked.mu);
    while (!parked.stop)
        pthread_cond_wait(&parked.cv, &parked.mu);
    pthread_mutex_unlock(&parked.mu);
    return NULL;
}

/* Threads sleep at once between parallel loops (on) or spin (off); false
 * when it cannot be done. */
static bool sleep_at_once(bool on)
{
    if (on == parked.running)
        return true;
    if (!on) {
        pthread_mutex_lock(&parked.mu);
        parked.stop = true;
        pthread_cond_signal(&parked.cv);
        pthread_mutex_unlock(&parked.mu);
        pthread_join(parked.thread, NULL);
        parked.running = false;
        return true;
    }
    if (!(parked.parallel = gomp_parallel()))
        return false;
    cpu_set_t set;
    long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                            : sysconf(_SC_NPROCESSORS_ONLN);
    parked.team = cpus < 1 ? 2 : cpus >= 1024 ? 1025 : (unsigned)cpus + 1;
    parked.stop = false;
    pthread_attr_t attr;
    bool ok = pthread_attr_init(&attr) == 0;
    ok = ok && pthread_attr_setstacksize(&attr, 256 * 1024) == 0 &&
         pthread_create(&parked.thread, &attr, parked_main, NULL) == 0;
    pthread_attr_destroy(&attr);
    parked.running = ok;
    return ok;
}

/* ------------------------------------------------------------ the processors' distance */

typedef int (*omp_int_fn)(void);

/* A ball the first two threads of a team hand to each other: thread t
 * takes it when it holds 2i + t and passes it on as 2i + t + 1; -1 ends
 * the game early (the partner did not come in time). */
typedef struct round_trips {
    _Alignas(64) atomic_int ball;
    omp_int_fn thread_num, team_size;
    int64_t t0, t1;          /* thread 0: the ball back after the warm-up rounds, after the last */
    bool ok;
} round_trips;

#define RTT_WARMUP 8         /* rounds that wake the partner, not timed */
#define RTT_ROUNDS 64        /* timed rounds: 4 us near, 24 us far */
#define RTT_LIMIT_NS 2000000 /* 2 ms: the partner was not scheduled */

static void round_trips_body(void *p)
{
    round_trips *g = p;
    int me = g->thread_num();
    if (me > 1 || g->team_size() < 2)
        return;   /* (thread 0 of a team of one: ok stays false) */
    int64_t start = rt_threads_now_ns();
    for (int i = 0;; i++) {
        int want = 2 * i + me, seen;
        for (int spins = 0; (seen = atomic_load_explicit(&g->ball, memory_order_acquire)) != want;
             spins++) {
            if (seen < 0)
                return;
            if ((spins & 1023) == 1023 && rt_threads_now_ns() - start > RTT_LIMIT_NS) {
                atomic_store_explicit(&g->ball, -1, memory_order_release);
                return;
            }
        }
        /* thread 0 holds the ball back from round i - 1's trip */
        if (me == 0 && i == RTT_WARMUP)
            g->t0 = rt_threads_now_ns();
        if (me == 0 && i == RTT_WARMUP + RTT_ROUNDS) {
            g->t1 = rt_threads_now_ns();
            g->ok = true;
            return;
        }
        atomic_store_explicit(&g->ball, want + 1, memory_order_release);
        if (me == 1 && i == RTT_WARMUP + RTT_ROUNDS - 1)
            return;
    }
}

int64_t rt_threads_round_trip_ns(void)
{
    omp_int_fn thread_num = (omp_int_fn)omp_symbol(&thread_num_sym, "omp_get_thread_num");
    omp_int_fn team_size = (omp_int_fn)omp_symbol(&team_size_sym, "omp_get_num_threads");
    gomp_parallel_fn parallel = gomp_parallel();
    if (!parallel || !thread_num || !team_size)
        return -1;
    round_trips g = {.thread_num = thread_num, .team_size = team_size};
    atomic_init(&g.ball, 0);
    parallel(round_trips_body, &g, 2, 0);
    return g.ok ? (g.t1 - g.t0) / RTT_ROUNDS : -1;
}

static rt_threads_state global;
static task_files files = {.task_dir = -2, .self_stat = -2, .loadavg = -2};
static atomic_flag deciding = ATOMIC_FLAG_INIT;
static bool unreadable;   /* /proc does not tell: the threads keep spinning */
/* global.busy and global.one_thread as the last decision left them, for
 * callers that do not decide (another thread is deciding) */
static atomic_bool now_busy, now_one_thread;
/* the process's warm-up (its load calls and first run) goes on: the looks
 * at the machine after the first do not decide until settle_by_ns (the
 * first look's time + RT_THREADS_SETTLE_NS; 0 before it) or
 * rt_threads_warmed_up, whichever comes first */
static atomic_bool warming = true;
static int64_t settle_by_ns;

/* TEC_THREADS_TRACE=1: the first look's decision, every change of the
 * threads' waiting and every window spinning lost (the next one decides),
 * with what the window saw, to stderr */
static void trace_decision(const rt_threads_state *s, const rt_threads_reading *r, int64_t dt,
                           int64_t waited, int threads, bool first)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("TEC_THREADS_TRACE");
        on = e && *e && strcmp(e, "0") != 0;
    }
    if (!on)
        return;
    if (first)
        fprintf(stderr, "tec: threads %s from the start: %d other runnable threads, %d processors%s\n",
                s->busy ? "asleep" : "spinning", r->others, r->cpus,
                r->realtime ? " (real-time: others do not count)" : "");
    else
        fprintf(stderr, "tec: threads %s after a window of %.1f ms: run-queue wait %.0f%% of its "
                "thread time, %d calls of %.1f ms (asleep before: %.1f of them)%s\n",
                s->busy ? "asleep" : "spinning", (double)dt / 1e6,
                dt > 0 ? 100.0 * (double)waited / ((double)dt * threads) : 0.0, r->calls,
                (double)r->call_ns / 1e6, (double)r->ref_ns / 1e6,
                s->suspect ? " (lost: the next window decides)" : s->probing ? " (a try)" : "");
}

const rt_threads_state *rt_threads_global(void) { return &global; }

bool rt_threads_one_thread_now(void)
{
    return atomic_load_explicit(&now_one_thread, memory_order_relaxed);
}

bool rt_threads_before_call(cg_library *lib, int threads)
{
    if (!cg_set_threads(lib, threads) || atomic_flag_test_and_set(&deciding))
        /* no parallel loops, or another thread is deciding */
        return atomic_load_explicit(&now_busy, memory_order_relaxed);
    rt_threads_state *s = &global;
    int64_t now = rt_threads_now_ns();
    /* a window of RT_THREADS_WINDOW_NS and RT_THREADS_WINDOW_CALLS timed
     * calls, or of 4 * RT_THREADS_WINDOW_NS (one slow call must not
     * decide alone, nor many slow ones wait long) */
    int64_t dt = now - s->since_ns;
    if (!unreadable && (!s->started || (dt >= RT_THREADS_WINDOW_NS &&
                                        (s->window_calls >= RT_THREADS_WINDOW_CALLS ||
                                         dt >= 4 * RT_THREADS_WINDOW_NS)))) {
        if (files.self_stat == -2) {
            files.task_dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            files.self_stat = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
            files.loadavg = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
            files.cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
        }
        int policy = sched_getscheduler(0);
        rt_threads_reading r = {.now_ns = now, .cpus = files.cpus,
                                .call_ns = s->call_ns, .cmp_ns = s->cmp_ns, .ref_ns = s->ref_ns,
                                .calls = s->window_calls,
                                .realtime = policy == SCHED_FIFO || policy == SCHED_RR};
        s->call_ns = s->cmp_ns = s->ref_ns = 0;
        s->window_calls = 0;
        /* Other processes count only at the first look and while busy, and
         * not for real-time threads (rt_threads_decide): else the machine's
         * runnable count and which of this process's threads run are not
         * read (each a read of /proc: of a look's 40 us there, about half) */
        bool count = (!s->started || s->busy) && !r.realtime;
        int mine = 0, all = count ? machine_runnable(&files) : 0;
        if (all < 0 || !read_tasks(&files, &r.wait_ns, count ? &mine : NULL) || r.cpus < 1) {
            unreadable = true;
            s->busy = false;
        } else if (s->started && atomic_load(&warming) && now < settle_by_ns) {
            /* a look of the warm-up only starts the next window
             * (rt_threads_warmed_up) */
            s->since_ns = now;
            s->wait_ns = r.wait_ns;
        } else {
            r.others = all - mine > 0 ? all - mine : 0;
            bool was_busy = s->started && s->busy;
            int64_t since = s->since_ns, waited = r.wait_ns - s->wait_ns;
            rt_threads_decide(s, &r, threads);
            if (was_busy != s->busy || s->suspect || !settle_by_ns)
                trace_decision(s, &r, now - since, waited, threads, !settle_by_ns);
            if (!settle_by_ns)
                settle_by_ns = now + RT_THREADS_SETTLE_NS;
        }
        /* busy: asleep at once, or on one thread where that cannot be */
        s->one_thread = s->busy && !sleep_at_once(true);
        if (!s->busy)
            sleep_at_once(false);
        atomic_store_explicit(&now_busy, s->busy, memory_order_relaxed);
        atomic_store_explicit(&now_one_thread, s->one_thread, memory_order_relaxed);
    }
    if (s->one_thread)
        cg_set_threads(lib, 1);
    s->calls++;
    s->busy_calls += s->busy;
    bool busy = s->busy;
    atomic_flag_clear(&deciding);
    return busy;
}

void rt_threads_one_call(void)
{
    if (atomic_flag_test_and_set(&deciding))
        return;
    global.one_calls++;
    atomic_flag_clear(&deciding);
}

void rt_threads_after_call(int64_t ns, int64_t ref_ns)
{
    if (ns <= 0 || atomic_flag_test_and_set(&deciding))
        return;
    global.call_ns += ns;
    global.window_calls++;
    if (ref_ns > 0) {
        global.cmp_ns += ns;
        global.ref_ns += ref_ns;
    }
    atomic_flag_clear(&deciding);
}

void rt_threads_warmed_up(void)
{
    if (!atomic_load(&warming) || atomic_flag_test_and_set(&deciding))
        return;
    atomic_store(&warming, false);
    rt_threads_state *s = &global;
    int64_t wait;
    /* the first window that decides starts now */
    if (s->started && !unreadable && read_tasks(&files, &wait, NULL)) {
        s->since_ns = rt_threads_now_ns();
        s->wait_ns = wait;
        s->call_ns = s->cmp_ns = s->ref_ns = 0;
        s->window_calls = 0;
    }
    atomic_flag_clear(&deciding);
}
