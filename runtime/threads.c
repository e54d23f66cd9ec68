/* runtime/threads.c — the thread count of parallel loops follows the
 * processors other processes leave free (runtime/threads.h). */
#include "runtime/threads.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "codegen/codegen.h"

int rt_threads_decide(rt_threads_state *s, const rt_threads_reading *r, int asked)
{
    if (asked < 1)
        asked = 1;
    int free_cpus = r->cpus - r->others;   /* processors nobody else wants now */
    int fit = free_cpus < 1 ? 1 : free_cpus > asked ? asked : free_cpus;
    if (s->cur == 0) {   /* the first call: as many as are free */
        s->cur = fit;
        s->backoff_ns = RT_THREADS_PROBE_MIN_NS;
        s->probe_at_ns = r->now_ns + RT_THREADS_PROBE_MIN_NS;
        s->drops += s->cur < asked;
    } else {
        int64_t dt = r->now_ns - s->since_ns;
        /* processors' worth of run-queue wait over the window */
        double waited = dt > 0 ? (double)(r->wait_ns - s->wait_ns) / (double)dt : 0;
        if (s->cur > 1 && waited > RT_THREADS_WAIT_MAX * s->cur) {
            int drop = (int)waited + ((double)(int)waited < waited);
            s->cur = s->cur - drop < 1 ? 1 : s->cur - drop;
            /* a try the waiting refuted backs off further; a first drop
             * waits the least */
            s->backoff_ns = !s->probing ? RT_THREADS_PROBE_MIN_NS
                            : 2 * s->backoff_ns > RT_THREADS_PROBE_MAX_NS ? RT_THREADS_PROBE_MAX_NS
                                                                          : 2 * s->backoff_ns;
            s->probe_at_ns = r->now_ns + s->backoff_ns;
            s->probing = false;
            s->drops++;
        } else if (s->cur < asked) {
            /* Back up when processors are free (not sooner than the least
             * back-off after a drop, so a competitor that comes and goes
             * between looks does not flip the count every window), or try
             * the asked count when the back-off is over. */
            int up = r->now_ns >= s->probe_at_ns ? asked
                     : fit > s->cur && r->now_ns >= s->probe_at_ns - s->backoff_ns +
                                                    RT_THREADS_PROBE_MIN_NS ? fit : s->cur;
            /* the next window tells whether the waiting allows it */
            s->probing |= up > s->cur;
            s->cur = up;
        } else {
            s->probing = false;
            s->backoff_ns = RT_THREADS_PROBE_MIN_NS;
        }
    }
    s->since_ns = r->now_ns;
    s->wait_ns = r->wait_ns;
    return s->cur;
}

bool rt_threads_adaptive(void)
{
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("OMP_DYNAMIC");
        while (v && isspace((unsigned char)*v))
            v++;
        on = !(v && strncasecmp(v, "false", 5) == 0);
    }
    return on;
}

/* ------------------------------------------------------------ reading /proc */

/* This process's threads: /proc/self/task/TID/{schedstat,stat}, opened
 * once and read with pread (each read makes the file anew), enumerated
 * again when the thread count in /proc/self/stat changes or a read fails. */
#define MAX_TASKS 256
typedef struct task_files {
    int self_stat;           /* /proc/self/stat, -1 when not open */
    int loadavg;
    long nthreads;
    int n;
    int schedstat[MAX_TASKS];
    int stat[MAX_TASKS];
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
        t->n++;
    }
    closedir(d);
    return t->n > 0;
}

/* The run-queue wait of this process's threads (ns), and in *running how
 * many of them are runnable (running==NULL: not wanted).  False when
 * /proc does not tell. */
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
            sum += ok ? waited : 0;
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
            *wait = sum;
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

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static rt_threads_state global;
static task_files files = {.self_stat = -2, .loadavg = -2};
static atomic_flag busy = ATOMIC_FLAG_INIT;
static bool unreadable;   /* /proc does not tell: the asked count stays */

const rt_threads_state *rt_threads_global(void) { return &global; }

void rt_threads_before_call(cg_library *lib, int asked)
{
    if (atomic_flag_test_and_set(&busy))
        return;   /* another thread is deciding */
    rt_threads_state *s = &global;
    int64_t now = now_ns();
    if (!unreadable && (s->cur == 0 || now - s->since_ns >= RT_THREADS_WINDOW_NS)) {
        if (files.self_stat == -2) {
            files.self_stat = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
            files.loadavg = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
        }
        /* this process's runnable threads and the machine's, read only
         * when the decision needs them (below the asked count) */
        bool count = s->cur < asked;
        rt_threads_reading r = {.now_ns = now, .cpus = (int)sysconf(_SC_NPROCESSORS_ONLN)};
        int mine = 0, all = count ? machine_runnable(&files) : 0;
        if (all < 0 || !read_tasks(&files, &r.wait_ns, count ? &mine : NULL) || r.cpus < 1) {
            unreadable = true;
            s->cur = asked;
        } else {
            r.others = all - mine > 0 ? all - mine : 0;
            rt_threads_decide(s, &r, asked);
        }
    }
    cg_set_threads(lib, s->cur);
    s->calls++;
    s->reduced_calls += s->cur < asked;
    atomic_flag_clear(&busy);
}
