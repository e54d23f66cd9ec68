/* runtime/sched.c — devices, the scheduling strategies, and running a
 * graph's calls on several CPU workers. */
#define _GNU_SOURCE
#include "runtime/sched.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "accel/cli.h"
#include "codegen/codegen.h"
#include "runtime/profile.h"

/* ---------------------------------------------------------------- devices */

static const char *const strategy_names[RT_NSCHED] = {
    [RT_SCHED_SERIAL] = "serial", [RT_SCHED_OP] = "op", [RT_SCHED_PATH] = "path",
    [RT_SCHED_DYNAMIC] = "dynamic", [RT_SCHED_DYNAMIC_CP] = "dynamic-cp",
};

bool rt_strategy_parse(const char *s, rt_strategy *out)
{
    for (int k = 0; k < RT_NSCHED; k++)
        if (strcmp(s, strategy_names[k]) == 0) {
            *out = (rt_strategy)k;
            return true;
        }
    return false;
}

const char *rt_strategy_name(rt_strategy s) { return strategy_names[s]; }

static bool add_device(rt_devices *out, rt_device dev)
{
    rt_device *p = realloc(out->dev, sizeof *p * (size_t)(out->n + 1));
    if (!p)
        return false;
    out->dev = p;
    out->dev[out->n++] = dev;
    return true;
}

bool rt_devices_parse(const char *spec, rt_devices *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!(out->text = strdup(spec))) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    int cores = 0, threads = 0;
    char *save = NULL;
    if (!*spec)
        snprintf(err, errlen, "--devices: the list is empty (use e.g. cpu:1,cpu:1)");
    for (char *item = strtok_r(out->text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        rt_device dev = {0};
        if (strncmp(item, "cpu:", 4) == 0) {
            char *end;
            errno = 0;
            long n = strtol(item + 4, &end, 10);
            if (errno || end == item + 4 || *end || n < 1 || n > 1024) {
                snprintf(err, errlen, "--devices: '%s': a cpu device takes 1 to 1024 cores "
                         "(cpu:N)", item);
                goto fail;
            }
            if (threads && n != threads) {
                snprintf(err, errlen, "--devices: '%s': every cpu device must have the same "
                         "number of cores (the kernels' parallel loops share one thread count)",
                         item);
                goto fail;
            }
            dev.kind = RT_DEV_CPU;
            dev.threads = threads = (int)n;
            dev.first_core = cores;
            cores += (int)n;
            snprintf(dev.name, sizeof dev.name, "cpu%d", out->n);
        } else if (strncmp(item, "acc:", 4) == 0 && item[4]) {
            dev.kind = RT_DEV_ACC;
            dev.config_path = item + 4;
            const char *base = strrchr(dev.config_path, '/');
            base = base ? base + 1 : dev.config_path;
            int len = (int)strlen(base);
            if (len > 4 && strcmp(base + len - 4, ".cfg") == 0)
                len -= 4;
            snprintf(dev.name, sizeof dev.name, "acc%d:%.*s", out->n, len > 60 ? 60 : len, base);
        } else {
            snprintf(err, errlen, "--devices: unknown device '%s' (use cpu:N for N cores or "
                     "acc:FILE.cfg for a modeled accelerator)", item);
            goto fail;
        }
        if (!add_device(out, dev)) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
    }
    if (out->n == 0) {
        if (*spec)
            snprintf(err, errlen, "--devices '%s': no device in the list", spec);
        goto fail;
    }
    return true;
fail:
    rt_devices_free(out);
    return false;
}

bool rt_devices_cpus(int n, rt_devices *out)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < n; k++) {
        rt_device dev = {.kind = RT_DEV_CPU, .threads = 1, .first_core = k};
        snprintf(dev.name, sizeof dev.name, "cpu%d", k);
        if (!add_device(out, dev)) {
            rt_devices_free(out);
            return false;
        }
    }
    return true;
}

bool rt_devices_all_cpu(const rt_devices *devs)
{
    for (int k = 0; k < devs->n; k++)
        if (devs->dev[k].kind != RT_DEV_CPU)
            return false;
    return true;
}

bool rt_devices_load(rt_devices *devs, const rt_dag *g, diag *d)
{
    const ir_module *m = g->m;
    int *calls_of = calloc((size_t)m->nfuncs + 1, sizeof *calls_of);
    if (!calls_of) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    for (int c = 0; c < g->ncalls; c++)
        for (int f = 0; f < m->nfuncs; f++)
            calls_of[f] += m->funcs[f] == m->graph.calls[c].fn;
    bool ok = true;
    for (int k = 0; k < devs->n && ok; k++) {
        rt_device *dev = &devs->dev[k];
        if (dev->kind != RT_DEV_ACC)
            continue;
        char err[512];
        if (!acc_config_load(dev->config_path, false, d->out, &dev->config, err, sizeof err)) {
            /* err reads "FILE: error: ..." */
            diag_error(d, diag_noloc(), "--devices: %s", err);
            ok = false;
            break;
        }
        acc_options ao = {0};
        acc_result *per_func = NULL, total;
        if (!acc_model_module(m, &dev->config, &ao, &per_func, &total, d)) {
            ok = false;
            break;
        }
        dev->call_us = calloc((size_t)g->ncalls + 1, sizeof *dev->call_us);
        ok = dev->call_us != NULL;
        for (int c = 0; ok && c < g->ncalls; c++)
            for (int f = 0; f < m->nfuncs; f++)
                if (m->funcs[f] == m->graph.calls[c].fn)
                    dev->call_us[c] = per_func[f].latency_us / (calls_of[f] ? calls_of[f] : 1);
        free(per_func);
        if (!ok)
            diag_error(d, diag_noloc(), "out of memory");
        /* words per cycle x bytes per word x cycles per microsecond */
        dev->bytes_per_us = dev->config.bw_unlimited
                                ? 0
                                : dev->config.bandwidth * (double)dev->config.word_bytes *
                                      dev->config.clock_mhz;
    }
    free(calls_of);
    return ok;
}

void rt_devices_free(rt_devices *devs)
{
    for (int k = 0; k < devs->n; k++)
        free(devs->dev[k].call_us);
    free(devs->dev);
    free(devs->text);
    memset(devs, 0, sizeof *devs);
}

double rt_device_call_us(const rt_devices *devs, int k, const rt_dag *g, int c)
{
    const rt_device *dev = &devs->dev[k];
    return dev->kind == RT_DEV_ACC ? dev->call_us[c] : g->nodes[c].cost_us;
}

/* Time to move what call c reads of call p's results from device a to b:
 * CPU devices share memory; an accelerator's operands cross its DRAM
 * interface (the slower one's when both ends are accelerators). */
static double transfer_us(const rt_dag *g, const rt_devices *devs, int p, int a, int c, int b)
{
    if (a == b || (devs->dev[a].kind == RT_DEV_CPU && devs->dev[b].kind == RT_DEV_CPU))
        return 0;
    double bw = 0;
    for (int k = 0; k < 2; k++) {
        const rt_device *dev = &devs->dev[k ? b : a];
        if (dev->kind == RT_DEV_ACC && dev->bytes_per_us > 0 && (bw == 0 || dev->bytes_per_us < bw))
            bw = dev->bytes_per_us;
    }
    return bw > 0 ? (double)rt_dag_edge_bytes(g, p, c) / bw : 0;
}

/* ---------------------------------------------------------------- timelines */

bool rt_timeline_init(rt_timeline *t, int ncalls)
{
    memset(t, 0, sizeof *t);
    t->ncalls = ncalls;
    size_t n = (size_t)ncalls + 1;
    t->device = calloc(n, sizeof *t->device);
    t->start_us = calloc(n, sizeof *t->start_us);
    t->end_us = calloc(n, sizeof *t->end_us);
    t->xfer_us = calloc(n, sizeof *t->xfer_us);
    t->why = calloc(n, sizeof *t->why);
    if (t->device && t->start_us && t->end_us && t->xfer_us && t->why)
        return true;
    rt_timeline_free(t);
    return false;
}

void rt_timeline_free(rt_timeline *t)
{
    for (int c = 0; t->why && c < t->ncalls; c++)
        free(t->why[c]);
    free(t->why);
    free(t->device);
    free(t->start_us);
    free(t->end_us);
    free(t->xfer_us);
    memset(t, 0, sizeof *t);
}

static void set_why(rt_timeline *t, int c, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(t->why[c]);
    t->why[c] = strdup(buf);
}

/* ---------------------------------------------------------------- simulation */

/* A simulation in progress: which calls are placed, and when each device
 * is free again. */
typedef struct sim {
    const rt_dag *g;
    const rt_devices *devs;
    rt_timeline *t;
    bool *placed;
    double *free_at;           /* [devices] */
} sim;

/* When call c's operands are all on device k (every predecessor placed),
 * and the transfer time that takes. */
static double ready_at(const sim *s, int c, int k, double *xfer)
{
    const rt_dag_node *x = &s->g->nodes[c];
    double r = 0, sum = 0;
    for (int i = 0; i < x->npreds; i++) {
        int p = x->preds[i];
        double tr = transfer_us(s->g, s->devs, p, s->t->device[p], c, k);
        r = fmax(r, s->t->end_us[p] + tr);
        sum += tr;
    }
    if (xfer)
        *xfer = sum;
    return r;
}

static bool preds_placed(const sim *s, int c)
{
    const rt_dag_node *x = &s->g->nodes[c];
    for (int i = 0; i < x->npreds; i++)
        if (!s->placed[x->preds[i]])
            return false;
    return true;
}

/* Earliest finish of call c on device k, starting no earlier than `from`. */
static double finish_on(const sim *s, int c, int k, double from, double *start, double *xfer)
{
    double st = fmax(fmax(from, s->free_at[k]), ready_at(s, c, k, xfer));
    if (start)
        *start = st;
    return st + rt_device_call_us(s->devs, k, s->g, c);
}

static void place(sim *s, int c, int k, double from)
{
    double st, xf;
    double ft = finish_on(s, c, k, from, &st, &xf);
    s->t->device[c] = k;
    s->t->start_us[c] = st;
    s->t->end_us[c] = ft;
    s->t->xfer_us[c] = xf;
    s->free_at[k] = ft;
    s->placed[c] = true;
    s->t->makespan_us = fmax(s->t->makespan_us, ft);
}

/* The device finishing c earliest, and the runner-up's finish. */
static int best_device(const sim *s, int c, double from, double *best, int *second, double *next)
{
    int kb = -1;
    *best = *next = INFINITY;
    *second = -1;
    for (int k = 0; k < s->devs->n; k++) {
        double ft = finish_on(s, c, k, from, NULL, NULL);
        if (ft < *best) {
            *next = *best;
            *second = kb;
            *best = ft;
            kb = k;
        } else if (ft < *next) {
            *next = ft;
            *second = k;
        }
    }
    return kb;
}

/* Upward rank: the call's mean cost over the devices plus the longest
 * rank among its successors (HEFT's priority). */
static double *upward_ranks(const rt_dag *g, const rt_devices *devs)
{
    double *rank = calloc((size_t)g->ncalls + 1, sizeof *rank);
    for (int c = g->ncalls - 1; rank && c >= 0; c--) {
        double mean = 0, after = 0;
        for (int k = 0; k < devs->n; k++)
            mean += rt_device_call_us(devs, k, g, c) / devs->n;
        for (int i = 0; i < g->nodes[c].nsuccs; i++)
            after = fmax(after, rank[g->nodes[c].succs[i]]);
        rank[c] = mean + after;
    }
    return rank;
}

static void sim_serial(sim *s)
{
    for (int c = 0; c < s->g->ncalls; c++) {
        place(s, c, 0, 0);
        set_why(s->t, c, "serial: every call on %s in graph order", s->devs->dev[0].name);
    }
}

static void sim_op(sim *s, const double *rank)
{
    int n = s->g->ncalls;
    int *order = malloc(sizeof *order * (size_t)(n + 1));
    if (!order)
        return;
    for (int c = 0; c < n; c++)
        order[c] = c;
    /* By decreasing rank, ties in graph order: a topological order, since a
     * call's rank is at least its successors'.  (Insertion sort: stable.) */
    for (int i = 1; i < n; i++) {
        int c = order[i], j = i;
        for (; j > 0 && rank[order[j - 1]] < rank[c]; j--)
            order[j] = order[j - 1];
        order[j] = c;
    }
    for (int i = 0; i < n; i++) {
        int c = order[i], second;
        double best, next;
        int k = best_device(s, c, 0, &best, &second, &next);
        place(s, c, k, 0);
        if (second >= 0)
            set_why(s->t, c, "rank %.1f us: finishes at %.1f us on %s (%.1f us on %s)", rank[c],
                    best, s->devs->dev[k].name, next, s->devs->dev[second].name);
        else
            set_why(s->t, c, "rank %.1f us: the only device", rank[c]);
    }
    free(order);
}

static void sim_path(sim *s)
{
    const rt_dag *g = s->g;
    for (int p = 0; p < g->npaths; p++) {
        const int *calls = g->path_calls + g->paths[p].first;
        int n = g->paths[p].ncalls, kb = 0;
        double best = INFINITY, next = INFINITY;
        double saved_free = 0;
        for (int k = 0; k < s->devs->n; k++) {
            saved_free = s->free_at[k];
            for (int i = 0; i < n; i++)
                place(s, calls[i], k, 0);
            double ft = s->free_at[k];
            for (int i = 0; i < n; i++)
                s->placed[calls[i]] = false;
            s->free_at[k] = saved_free;
            if (ft < best) {
                next = best;
                best = ft;
                kb = k;
            } else if (ft < next) {
                next = ft;
            }
        }
        double makespan = 0;   /* place() raised it while trying */
        for (int c = 0; c < g->ncalls; c++)
            if (s->placed[c])
                makespan = fmax(makespan, s->t->end_us[c]);
        s->t->makespan_us = makespan;
        for (int i = 0; i < n; i++) {
            place(s, calls[i], kb, 0);
            if (isinf(next))
                set_why(s->t, calls[i], "path %d (%d calls): the only device", p, n);
            else
                set_why(s->t, calls[i], "path %d (%d calls): finishes at %.1f us on %s "
                        "(next best %.1f us)", p, n, best, s->devs->dev[kb].name, next);
        }
    }
}

/* A ready queue: the device free first takes a ready call (in graph order,
 * or, cost-aware, the one with the highest rank that finishes earliest
 * there); with none, it waits for the next event. */
static void sim_dynamic(sim *s, const double *rank, bool cost_aware)
{
    const rt_dag *g = s->g;
    int n = g->ncalls, left = n;
    while (left > 0) {
        int k = 0;
        for (int j = 1; j < s->devs->n; j++)
            if (s->free_at[j] < s->free_at[k])
                k = j;
        double now = s->free_at[k], soonest = INFINITY;
        int take = -1;
        bool declined = false;
        for (int c = 0; c < n; c++) {
            if (s->placed[c] || !preds_placed(s, c))
                continue;
            double r = ready_at(s, c, k, NULL);
            if (r > now) {
                soonest = fmin(soonest, r);
                continue;
            }
            if (!cost_aware) {
                take = c;
                break;
            }
            if (take >= 0 && rank[c] <= rank[take])
                continue;
            double best, next;
            int second;
            int kb = best_device(s, c, now, &best, &second, &next);
            if (finish_on(s, c, k, now, NULL, NULL) <= best * (1 + 1e-12) || kb == k)
                take = c;
            else
                declined = true;
        }
        if (take < 0) {
            /* Nothing for k now: wait for a call to finish or a device to free. */
            for (int c = 0; c < n; c++)
                if (s->placed[c] && s->t->end_us[c] > now)
                    soonest = fmin(soonest, s->t->end_us[c]);
            for (int j = 0; j < s->devs->n; j++)
                if (s->free_at[j] > now)
                    soonest = fmin(soonest, s->free_at[j]);
            if (!isinf(soonest)) {
                s->free_at[k] = soonest;
                continue;
            }
            /* Nothing else will happen before the calls k declined could
             * start elsewhere: the one with the highest rank goes to the
             * device that finishes it earliest, idle now as k is. */
            for (int c = 0; c < n && declined; c++)
                if (!s->placed[c] && preds_placed(s, c) && ready_at(s, c, k, NULL) <= now &&
                    (take < 0 || rank[c] > rank[take]))
                    take = c;
            if (take < 0)
                return;   /* cannot happen in a DAG */
            double best, next;
            int second;
            k = best_device(s, take, now, &best, &second, &next);
        }
        place(s, take, k, now);
        if (cost_aware)
            set_why(s->t, take, "ready at %.1f us; %s idle first and finishes it earliest "
                    "(rank %.1f us)", ready_at(s, take, k, NULL), s->devs->dev[k].name, rank[take]);
        else
            set_why(s->t, take, "ready at %.1f us; %s idle first", ready_at(s, take, k, NULL),
                    s->devs->dev[k].name);
        left--;
    }
}

bool rt_sched_simulate(const rt_dag *g, const rt_devices *devs, rt_strategy strategy,
                       rt_timeline *t, diag *d)
{
    sim s = {g, devs, t, calloc((size_t)g->ncalls + 1, sizeof *s.placed),
             calloc((size_t)devs->n + 1, sizeof *s.free_at)};
    double *rank = upward_ranks(g, devs);
    bool ok = s.placed && s.free_at && rank;
    if (ok) {
        t->makespan_us = 0;
        t->measured = false;
        switch (strategy) {
        case RT_SCHED_SERIAL: sim_serial(&s); break;
        case RT_SCHED_OP: sim_op(&s, rank); break;
        case RT_SCHED_PATH: sim_path(&s); break;
        case RT_SCHED_DYNAMIC: sim_dynamic(&s, rank, false); break;
        case RT_SCHED_DYNAMIC_CP: sim_dynamic(&s, rank, true); break;
        case RT_NSCHED: break;
        }
        for (int c = 0; c < g->ncalls; c++)
            if (!s.placed[c]) {
                diag_internal(d, "sched", "strategy %s left call %d (%s) unplaced",
                              rt_strategy_name(strategy), c, rt_dag_call_name(g, c));
                ok = false;
                break;
            }
    } else {
        diag_error(d, diag_noloc(), "out of memory");
    }
    free(s.placed);
    free(s.free_at);
    free(rank);
    return ok;
}

/* ---------------------------------------------------------------- execution */

static bool is_dynamic(rt_strategy s) { return s == RT_SCHED_DYNAMIC || s == RT_SCHED_DYNAMIC_CP; }

/* A worker thread per device, started once and reused run after run (a
 * new thread's first kernel call pays for its stack, its malloc arena and
 * OpenMP's per-thread state: measured, 0.9 ms for a 0.15 ms convolution).
 * Everything below `lock` is shared; a run's fields are set before `gen`
 * is increased, which starts the workers. */
struct rt_workers {
    const rt_devices *devs;
    pthread_t *tid;
    struct worker *w;
    int started;
    int *cores, ncores;        /* the processors this process may use */
    pthread_mutex_t lock;
    pthread_cond_t changed;    /* a call finished, a run started, or the run failed */
    pthread_cond_t finished;   /* the last worker left the run */
    int gen;                   /* runs started so far */
    int running;               /* workers still in the current run */
    bool quit;
    /* the current run */
    rt_run *run;
    const rt_run_options *o;
    const rt_dag *g;
    rt_timeline *t;
    bool dynamic, cost_aware;
    const double *rank;
    int **queue;               /* static: each device's calls in start order */
    int *nqueue, *pos;
    int *waiting;              /* [ncalls] predecessors not finished */
    bool *taken;
    int left;                  /* dynamic: calls not taken yet */
    bool failed;
    char err[1200];
    uint64_t t0;
};

typedef struct worker {
    rt_workers *x;
    int device;
} worker;

static void pin(const rt_workers *x, const rt_device *dev)
{
    if (x->ncores == 0 || dev->kind != RT_DEV_CPU)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < dev->threads; i++)
        CPU_SET(x->cores[(dev->first_core + i) % x->ncores], &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* The next call for device k, waiting until one is ready; -1 when there is
 * none left or the run failed.  Called with the lock held. */
static int next_call(rt_workers *x, int k)
{
    for (;;) {
        if (x->failed)
            return -1;
        if (!x->dynamic) {
            if (x->pos[k] == x->nqueue[k])
                return -1;
            int c = x->queue[k][x->pos[k]];
            if (x->waiting[c] == 0) {
                x->pos[k]++;
                return c;
            }
        } else {
            if (x->left == 0)
                return -1;
            int take = -1;
            for (int c = 0; c < x->g->ncalls; c++)
                if (!x->taken[c] && x->waiting[c] == 0 &&
                    (take < 0 || (x->cost_aware && x->rank[c] > x->rank[take]))) {
                    take = c;
                    if (!x->cost_aware)
                        break;
                }
            if (take >= 0) {
                x->taken[take] = true;
                x->left--;
                return take;
            }
        }
        pthread_cond_wait(&x->changed, &x->lock);
    }
}

static void *work(void *arg)
{
    worker *w = arg;
    rt_workers *x = w->x;
    pin(x, &x->devs->dev[w->device]);
    int seen = 0;
    pthread_mutex_lock(&x->lock);
    for (;;) {
        while (x->gen == seen && !x->quit)
            pthread_cond_wait(&x->changed, &x->lock);
        if (x->quit)
            break;
        seen = x->gen;
        int c;
        while ((c = next_call(x, w->device)) >= 0) {
            pthread_mutex_unlock(&x->lock);
            char err[1024];
            uint64_t start = rt_now_ns();
            bool ok = rt_run_call(x->run, x->o, c, err, sizeof err);
            uint64_t end = rt_now_ns();
            pthread_mutex_lock(&x->lock);
            x->t->device[c] = w->device;
            x->t->start_us[c] = (double)(start - x->t0) / 1e3;
            x->t->end_us[c] = (double)(end - x->t0) / 1e3;
            if (!ok && !x->failed) {
                x->failed = true;
                snprintf(x->err, sizeof x->err, "%s (on %s)", err, x->devs->dev[w->device].name);
            }
            const rt_dag_node *node = &x->g->nodes[c];
            for (int i = 0; i < node->nsuccs; i++)
                x->waiting[node->succs[i]]--;
            pthread_cond_broadcast(&x->changed);
        }
        if (--x->running == 0)
            pthread_cond_signal(&x->finished);
    }
    pthread_mutex_unlock(&x->lock);
    return NULL;
}

static void allowed_cores(rt_workers *x)
{
    cpu_set_t set;
    x->ncores = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    x->cores = calloc(CPU_SETSIZE, sizeof *x->cores);
    for (int i = 0; x->cores && i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &set))
            x->cores[x->ncores++] = i;
}

rt_workers *rt_workers_start(const rt_devices *devs, const rt_dag *g, diag *d)
{
    rt_workers *x = calloc(1, sizeof *x);
    if (!x) {
        diag_error(d, diag_noloc(), "out of memory");
        return NULL;
    }
    int n = g->ncalls, nd = devs->n;
    x->devs = devs;
    x->g = g;
    x->queue = calloc((size_t)nd, sizeof *x->queue);
    x->nqueue = calloc((size_t)nd, sizeof *x->nqueue);
    x->pos = calloc((size_t)nd, sizeof *x->pos);
    x->waiting = calloc((size_t)n + 1, sizeof *x->waiting);
    x->taken = calloc((size_t)n + 1, sizeof *x->taken);
    x->tid = calloc((size_t)nd, sizeof *x->tid);
    x->w = calloc((size_t)nd, sizeof *x->w);
    for (int k = 0; x->queue && k < nd; k++)
        x->queue[k] = malloc(sizeof **x->queue * (size_t)(n + 1));
    bool ok = x->queue && x->nqueue && x->pos && x->waiting && x->taken && x->tid && x->w;
    for (int k = 0; ok && k < nd; k++)
        ok = x->queue[k] != NULL;
    pthread_mutex_init(&x->lock, NULL);
    pthread_cond_init(&x->changed, NULL);
    pthread_cond_init(&x->finished, NULL);
    if (!ok) {
        diag_error(d, diag_noloc(), "out of memory");
        rt_workers_stop(x);
        return NULL;
    }
    allowed_cores(x);
    for (int k = 0; k < nd; k++) {
        x->w[k] = (worker){x, k};
        int rc = pthread_create(&x->tid[k], NULL, work, &x->w[k]);
        if (rc != 0) {
            diag_error(d, diag_noloc(), "cannot start a worker thread for %s: %s",
                       devs->dev[k].name, strerror(rc));
            rt_workers_stop(x);
            return NULL;
        }
        x->started++;
    }
    return x;
}

void rt_workers_stop(rt_workers *x)
{
    if (!x)
        return;
    pthread_mutex_lock(&x->lock);
    x->quit = true;
    pthread_cond_broadcast(&x->changed);
    pthread_mutex_unlock(&x->lock);
    for (int k = 0; k < x->started; k++)
        pthread_join(x->tid[k], NULL);
    pthread_cond_destroy(&x->finished);
    pthread_cond_destroy(&x->changed);
    pthread_mutex_destroy(&x->lock);
    for (int k = 0; x->queue && k < x->devs->n; k++)
        free(x->queue[k]);
    free(x->queue);
    free(x->nqueue);
    free(x->pos);
    free(x->waiting);
    free(x->taken);
    free(x->cores);
    free(x->tid);
    free(x->w);
    free(x);
}

/* Each device's calls in the plan, by start time. */
static bool queues_from_plan(rt_workers *x, const rt_timeline *plan)
{
    int n = x->g->ncalls;
    int *order = malloc(sizeof *order * (size_t)(n + 1));
    if (!order)
        return false;
    for (int c = 0; c < n; c++)
        order[c] = c;
    for (int i = 1; i < n; i++) {   /* stable: ties in graph order */
        int c = order[i], j = i;
        for (; j > 0 && plan->start_us[order[j - 1]] > plan->start_us[c]; j--)
            order[j] = order[j - 1];
        order[j] = c;
    }
    for (int k = 0; k < x->devs->n; k++)
        x->nqueue[k] = x->pos[k] = 0;
    for (int i = 0; i < n; i++) {
        int c = order[i], k = plan->device[c];
        x->queue[k][x->nqueue[k]++] = c;
    }
    free(order);
    return true;
}

bool rt_workers_run(rt_workers *x, rt_run *r, const rt_run_options *o, rt_strategy s,
                    const rt_timeline *plan, rt_timeline *t, diag *d)
{
    const rt_dag *g = x->g;
    double *rank = upward_ranks(g, x->devs);
    pthread_mutex_lock(&x->lock);
    x->run = r;
    x->o = o;
    x->t = t;
    x->dynamic = is_dynamic(s);
    x->cost_aware = s == RT_SCHED_DYNAMIC_CP;
    x->rank = rank;
    x->left = g->ncalls;
    x->failed = false;
    bool ok = rank && (x->dynamic || queues_from_plan(x, plan));
    for (int c = 0; c < g->ncalls; c++) {
        x->waiting[c] = g->nodes[c].npreds;
        x->taken[c] = false;
        t->xfer_us[c] = 0;
    }
    if (ok) {
        x->running = x->started;
        x->t0 = rt_now_ns();
        x->gen++;
        pthread_cond_broadcast(&x->changed);
        while (x->running > 0)
            pthread_cond_wait(&x->finished, &x->lock);
    }
    pthread_mutex_unlock(&x->lock);
    free(rank);
    if (!ok) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    /* From the start to the end of the last call. */
    t->makespan_us = 0;
    for (int c = 0; c < g->ncalls; c++)
        t->makespan_us = fmax(t->makespan_us, t->end_us[c]);
    t->measured = true;
    if (x->failed) {
        rt_report_call_error(x->err, d);
        return false;
    }
    return true;
}

bool rt_sched_execute(rt_run *r, const rt_run_options *o, const rt_dag *g,
                      const rt_devices *devs, rt_strategy s, const rt_timeline *plan,
                      rt_timeline *t, diag *d)
{
    rt_workers *x = rt_workers_start(devs, g, d);
    bool ok = x && rt_workers_run(x, r, o, s, plan, t, d);
    rt_workers_stop(x);
    return ok;
}

/* ---------------------------------------------------------------- reports */

/* No schedule is shorter than the longest path with every call on its
 * fastest device (transfers left out): the critical-path bound. */
static double critical_bound(const rt_dag *g, const rt_devices *devs)
{
    double *fin = calloc((size_t)g->ncalls + 1, sizeof *fin), bound = 0;
    for (int c = 0; fin && c < g->ncalls; c++) {
        double fast = INFINITY, start = 0;
        for (int k = 0; k < devs->n; k++)
            fast = fmin(fast, rt_device_call_us(devs, k, g, c));
        for (int i = 0; i < g->nodes[c].npreds; i++)
            start = fmax(start, fin[g->nodes[c].preds[i]]);
        fin[c] = start + fast;
        bound = fmax(bound, fin[c]);
    }
    free(fin);
    return bound;
}

/* Do devices a and b take the same time for every call? */
static bool same_speed(const rt_devices *devs, const rt_dag *g, int a, int b)
{
    for (int c = 0; c < g->ncalls; c++)
        if (rt_device_call_us(devs, a, g, c) != rt_device_call_us(devs, b, g, c))
            return false;
    return true;
}

typedef struct ratio_call {
    double ratio, t0, t1;
} ratio_call;

static int cmp_ratio(const void *a, const void *b)
{
    double x = ((const ratio_call *)a)->ratio, y = ((const ratio_call *)b)->ratio;
    return x < y ? -1 : x > y;
}

double rt_sched_work_bound(const rt_dag *g, const rt_devices *devs)
{
    /* Devices of the same speed form a class. */
    int cls[2] = {0, -1}, m[2] = {0, 0}, ncls = 1;
    for (int k = 0; k < devs->n; k++) {
        int i = 0;
        while (i < ncls && !same_speed(devs, g, cls[i], k))
            i++;
        if (i == 2) {
            ncls = 3;
            break;
        }
        if (i == ncls)
            cls[ncls++] = k;
        m[i]++;
    }
    if (ncls > 2 || devs->n == 0) {
        /* Three or more speeds: the fastest time of each call spread
         * evenly over the devices (a weaker bound, still valid). */
        double work = 0;
        for (int c = 0; c < g->ncalls; c++) {
            double fast = INFINITY;
            for (int k = 0; k < devs->n; k++)
                fast = fmin(fast, rt_device_call_us(devs, k, g, c));
            work += fast;
        }
        return devs->n ? work / devs->n : 0;
    }
    if (ncls == 1) {
        double work = 0;
        for (int c = 0; c < g->ncalls; c++)
            work += rt_device_call_us(devs, cls[0], g, c);
        return work / m[0];
    }
    /* Two speeds: the least time T in which the m0 devices of class 0 and
     * the m1 of class 1 can do all the work when a call may be split
     * between the classes (a relaxation of every schedule).  Its optimum
     * gives class 0 the calls it is relatively fastest at, in order of
     * t0/t1, and splits at most one call. */
    int n = g->ncalls;
    ratio_call *rc = malloc(sizeof *rc * (size_t)(n + 1));
    if (!rc)
        return 0;
    double B = 0;
    for (int c = 0; c < n; c++) {
        double t0 = rt_device_call_us(devs, cls[0], g, c), t1 = rt_device_call_us(devs, cls[1], g, c);
        rc[c] = (ratio_call){t1 > 0 ? t0 / t1 : t0 > 0 ? INFINITY : 1, t0, t1};
        B += t1;
    }
    qsort(rc, (size_t)n, sizeof *rc, cmp_ratio);
    double best = B / m[1], A = 0;
    for (int j = 0; j < n; j++) {
        B -= rc[j].t1;
        /* call j split: x of it on class 0 */
        double den = m[1] * rc[j].t0 + m[0] * rc[j].t1;
        double x = den > 0 ? (m[0] * (B + rc[j].t1) - m[1] * A) / den : 1;
        x = fmin(1, fmax(0, x));
        double t = fmax((A + x * rc[j].t0) / m[0], (B + (1 - x) * rc[j].t1) / m[1]);
        best = fmin(best, t);
        A += rc[j].t0;
    }
    best = fmin(best, A / m[0]);
    free(rc);
    return best;
}

static double work_bound(const rt_dag *g, const rt_devices *devs)
{
    return rt_sched_work_bound(g, devs);
}

/* Per device: calls, busy and transfer time. */
typedef struct dev_use {
    int calls;
    double busy_us, xfer_us;
} dev_use;

static void device_use(const rt_timeline *t, int ndev, dev_use *u)
{
    memset(u, 0, sizeof *u * (size_t)ndev);
    for (int c = 0; c < t->ncalls; c++) {
        dev_use *x = &u[t->device[c]];
        x->calls++;
        x->busy_us += t->end_us[c] - t->start_us[c];
        x->xfer_us += t->xfer_us[c];
    }
}

static void device_label(char *buf, size_t n, const rt_device *dev)
{
    if (dev->kind == RT_DEV_CPU)
        snprintf(buf, n, "%s (%d core%s)", dev->name, dev->threads, dev->threads == 1 ? "" : "s");
    else
        snprintf(buf, n, "%s (%lldx%lld %s, modeled)", dev->name, (long long)dev->config.rows,
                 (long long)dev->config.cols, acc_dataflow_name(dev->config.dataflow));
}

rt_speedup_split rt_sched_speedup_split(const rt_timeline *t, double serial_us)
{
    rt_speedup_split sp = {0};
    for (int c = 0; c < t->ncalls; c++)
        sp.busy_us += t->end_us[c] - t->start_us[c];
    if (t->makespan_us > 0 && sp.busy_us > 0) {
        sp.speedup = serial_us / t->makespan_us;
        sp.overlap = sp.busy_us / t->makespan_us;
        sp.pace = serial_us / sp.busy_us;
    }
    return sp;
}

void rt_sched_print(FILE *out, const rt_dag *g, const rt_devices *devs, rt_strategy s,
                    const rt_timeline *t, double serial_us, int runs)
{
    dev_use *u = calloc((size_t)devs->n + 1, sizeof *u);
    if (!u)
        return;
    device_use(t, devs->n, u);
    fprintf(out, "schedule %s on %d device%s: ", rt_strategy_name(s), devs->n,
            devs->n == 1 ? "" : "s");
    if (t->measured)
        fprintf(out, "measured, the median of %d run%s\n", runs, runs == 1 ? "" : "s");
    else
        fprintf(out, "simulated from the costs%s\n",
                rt_devices_all_cpu(devs) ? "" : " (accelerators modeled, transfers over their "
                                                "bandwidth)");
    double cp = critical_bound(g, devs), work = work_bound(g, devs), bound = fmax(cp, work);
    fprintf(out, "  makespan %.1f us, serial %.1f us, speedup %.2fx; lower bound %.1f us "
            "(critical path %.1f, work over the devices at their speeds %.1f), makespan / "
            "bound %.2f\n",
            t->makespan_us, serial_us, t->makespan_us > 0 ? serial_us / t->makespan_us : 0,
            bound, cp, work, bound > 0 ? t->makespan_us / bound : 0);
    if (t->measured) {
        rt_speedup_split sp = rt_sched_speedup_split(t, serial_us);
        fprintf(out, "  speedup %.2fx = %.2fx from calls overlapping (their time in this run / "
                "makespan) x %.2fx from calls running %s than in the serial runs (%.1f us "
                "against %.1f us: timing, caches, load; not the schedule)\n",
                sp.speedup, sp.overlap, sp.pace, sp.pace >= 1 ? "faster" : "slower", sp.busy_us,
                serial_us);
    }
    fprintf(out, "  %-40s %6s %12s %12s %12s %6s\n", "device", "calls", "busy us", "idle us",
            "transfer us", "busy%");
    for (int k = 0; k < devs->n; k++) {
        char label[128];
        device_label(label, sizeof label, &devs->dev[k]);
        double idle = t->makespan_us - u[k].busy_us;
        fprintf(out, "  %-40s %6d %12.1f %12.1f %12.1f %5.1f%%\n", label, u[k].calls,
                u[k].busy_us, idle > 0 ? idle : 0, u[k].xfer_us,
                t->makespan_us > 0 ? 100 * u[k].busy_us / t->makespan_us : 0);
    }
    /* Which calls went where, by op. */
    for (int k = 0; k < devs->n && devs->n > 1; k++) {
        fprintf(out, "  %s:", devs->dev[k].name);
        const char *seen[64];
        int nseen = 0;
        for (int c = 0; c < t->ncalls; c++) {
            const char *op = ir_func_attr(g->m->graph.calls[c].fn, "op");
            op = op ? op : "?";
            bool done = false;
            for (int i = 0; i < nseen && !done; i++)
                done = strcmp(seen[i], op) == 0;
            if (done || nseen == 64)
                continue;
            seen[nseen++] = op;
            int n = 0;
            for (int e = c; e < t->ncalls; e++) {
                const char *o2 = ir_func_attr(g->m->graph.calls[e].fn, "op");
                n += t->device[e] == k && strcmp(o2 ? o2 : "?", op) == 0;
            }
            if (n)
                fprintf(out, " %s %d", op, n);
        }
        fputc('\n', out);
    }
    /* What keeps a measured run from its bound: calls that ran slower in
     * this run than in the serial runs (shared caches and memory
     * bandwidth, other load on the machine), and idle time waiting for
     * predecessors. */
    double busy = 0;
    for (int k = 0; k < devs->n; k++)
        busy += u[k].busy_us;
    if (t->measured && bound > 0 && t->makespan_us > 1.1 * bound)
        fprintf(out, "  beyond the bound by %.0f%%: the calls took %.1f us in this run, %.2fx "
                "their %.1f us in the serial runs; the devices were idle %.0f%% of the time\n",
                100 * (t->makespan_us / bound - 1), busy, g->total_us > 0 ? busy / g->total_us : 0,
                g->total_us, 100 * (1 - busy / (devs->n * t->makespan_us)));
    free(u);
}

bool rt_sched_write_trace(const char *path, const rt_dag *g, const rt_devices *devs,
                          rt_strategy s, const rt_timeline *t, double serial_us, diag *d)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    dev_use *u = calloc((size_t)devs->n + 1, sizeof *u);
    if (u)
        device_use(t, devs->n, u);
    fputs("{\"displayTimeUnit\": \"ms\",\n \"schedule\": {\"strategy\": ", f);
    rt_json_str(f, rt_strategy_name(s));
    fprintf(f, ", \"timeline\": \"%s\", \"makespan_us\": %.3f, \"serial_us\": %.3f, "
            "\"critical_path_us\": %.3f, \"work_per_device_us\": %.3f, \"total_cost_us\": %.3f, "
            "\"devices\": [", t->measured ? "measured" : "simulated", t->makespan_us, serial_us,
            critical_bound(g, devs), work_bound(g, devs), g->total_us);
    for (int k = 0; u && k < devs->n; k++) {
        fprintf(f, "%s{\"name\": ", k ? ", " : "");
        rt_json_str(f, devs->dev[k].name);
        fprintf(f, ", \"kind\": \"%s\", \"calls\": %d, \"busy_us\": %.3f, \"transfer_us\": %.3f}",
                devs->dev[k].kind == RT_DEV_CPU ? "cpu" : "acc", u[k].calls, u[k].busy_us,
                u[k].xfer_us);
    }
    fputs("]},\n \"traceEvents\": [\n", f);
    fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": "
          "{\"name\": ", f);
    char title[256];
    snprintf(title, sizeof title, "tec %s --sched=%s", g->m->name ? g->m->name : "network",
             rt_strategy_name(s));
    rt_json_str(f, title);
    fputs("}}", f);
    for (int k = 0; k < devs->n; k++) {
        char label[128];
        device_label(label, sizeof label, &devs->dev[k]);
        fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, "
                "\"args\": {\"name\": ", k + 1);
        rt_json_str(f, label);
        fputs("}}", f);
        /* Transfers into the device overlap its calls: a track of their own. */
        snprintf(label, sizeof label, "%s transfers in", devs->dev[k].name);
        fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, "
                "\"args\": {\"name\": ", devs->n + k + 1);
        rt_json_str(f, label);
        fputs("}}", f);
    }
    for (int c = 0; c < t->ncalls; c++) {
        const char *op = ir_func_attr(g->m->graph.calls[c].fn, "op");
        if (t->xfer_us[c] > 0) {
            fputs(",\n{\"name\": \"transfer\", \"cat\": \"transfer\", \"ph\": \"X\", \"pid\": 1", f);
            fprintf(f, ", \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"to\": ",
                    devs->n + t->device[c] + 1, t->start_us[c] - t->xfer_us[c], t->xfer_us[c]);
            rt_json_str(f, rt_dag_call_name(g, c));
            fputs("}}", f);
        }
        fputs(",\n{\"name\": ", f);
        rt_json_str(f, rt_dag_call_name(g, c));
        fputs(", \"cat\": ", f);
        rt_json_str(f, op ? op : "layer");
        fprintf(f, ", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
                "\"args\": {\"call\": %d, \"device\": ", t->device[c] + 1, t->start_us[c],
                t->end_us[c] - t->start_us[c], c);
        rt_json_str(f, devs->dev[t->device[c]].name);
        fprintf(f, ", \"path\": %d, \"critical\": %s, \"cost_us\": %.3f, \"preds\": [",
                g->nodes[c].path, g->nodes[c].critical ? "true" : "false",
                rt_device_call_us(devs, t->device[c], g, c));
        for (int i = 0; i < g->nodes[c].npreds; i++)
            fprintf(f, "%s%d", i ? ", " : "", g->nodes[c].preds[i]);
        fputc(']', f);
        if (t->why[c]) {
            fputs(", \"why\": ", f);
            rt_json_str(f, t->why[c]);
        }
        fputs("}}", f);
    }
    fputs("\n]}\n", f);
    free(u);
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok)
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
    return ok;
}

/* ---------------------------------------------------------------- a whole run */

/* The DAG's costs without a run: the analysis's FLOPs and bytes against the
 * roof of one core (measured by tec --calibrate, else nominal). */
static void static_costs(rt_dag *g, FILE *note)
{
    rt_calibration cal;
    double peak = 10, bw = 10;   /* GFLOP/s and GB/s: nominal, uncalibrated */
    bool calibrated = rt_calibration_load(&cal);
    if (calibrated) {
        peak = cal.peak_gflops[0];
        bw = cal.bw_gbs[0];
    }
    for (int c = 0; c < g->ncalls; c++) {
        const rt_dag_node *x = &g->nodes[c];
        g->nodes[c].cost_us = fmax((double)x->flops / (peak * 1e3), (double)x->bytes / (bw * 1e3));
    }
    fprintf(note, "costs: estimated from FLOPs and bytes on the roof of one core, %.1f GFLOP/s "
            "and %.1f GB/s (%s)\n", peak, bw,
            calibrated ? "tec --calibrate" : "nominal: run tec --calibrate to measure");
    rt_dag_analyze(g);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One schedule to measure: it runs by strategy s (with plan's
 * placement); out receives the run whose makespan is the median, cost[c]
 * (when not NULL) the median time of each call. */
typedef struct trial {
    rt_strategy s;
    const rt_timeline *plan;
    rt_timeline *out;
    double *cost;
} trial;

static int median_index(const rt_timeline *all, int runs, double *v)
{
    for (int i = 0; i < runs; i++)
        v[i] = all[i].makespan_us;
    qsort(v, (size_t)runs, sizeof *v, cmp_double);
    int median = 0;
    for (int i = 0; i < runs; i++)
        if (all[i].makespan_us == v[runs / 2])
            median = i;
    return median;
}

/* Runs each trial `runs` times after a warm-up, the trials taking turns, so
 * that a load which comes and goes on the machine falls on all of them. */
static bool measure(rt_workers *pool, rt_run *r, const rt_run_options *o, const rt_dag *g,
                    trial *tr, int ntr, int runs, diag *d)
{
    int n = g->ncalls;
    rt_timeline *all = calloc((size_t)(runs * ntr), sizeof *all);
    double *v = malloc(sizeof *v * (size_t)(runs + 1));
    bool ok = all && v;
    for (int i = 0; ok && i < runs * ntr; i++)
        ok = rt_timeline_init(&all[i], n);
    if (!ok)
        diag_error(d, diag_noloc(), "out of memory");
    for (int i = -1; ok && i < runs; i++)   /* -1: the warm-up */
        for (int k = 0; ok && k < ntr; k++)
            ok = rt_workers_run(pool, r, o, tr[k].s, tr[k].plan, &all[k * runs + (i < 0 ? 0 : i)],
                                d);
    for (int k = 0; ok && k < ntr; k++) {
        rt_timeline *mine = &all[k * runs];
        int median = median_index(mine, runs, v);
        for (int c = 0; tr[k].cost && c < n; c++) {
            for (int i = 0; i < runs; i++)
                v[i] = mine[i].end_us[c] - mine[i].start_us[c];
            qsort(v, (size_t)runs, sizeof *v, cmp_double);
            tr[k].cost[c] = v[runs / 2];
        }
        rt_timeline_free(tr[k].out);
        *tr[k].out = mine[median];
        mine[median] = (rt_timeline){0};
    }
    for (int i = 0; all && i < runs * ntr; i++)
        rt_timeline_free(&all[i]);
    free(all);
    free(v);
    return ok;
}

/* The serial baseline's plan: every call on device k in graph order. */
static bool serial_plan(const rt_dag *g, const rt_devices *devs, int k, rt_timeline *t, diag *d)
{
    rt_devices one = {.dev = &devs->dev[k], .n = 1};
    if (!rt_sched_simulate(g, &one, RT_SCHED_SERIAL, t, d))
        return false;
    for (int c = 0; c < g->ncalls; c++)
        t->device[c] = k;
    return true;
}

bool rt_sched_main(const ir_module *m, rt_run *r, const rt_run_options *ro,
                   const rt_sched_options *so, rt_devices *devs, FILE *out, diag *d)
{
    bool share_arena = !ro->own_storage;
    rt_workers *pool = NULL;
    rt_dag *g = rt_dag_build(m, share_arena, d);
    rt_timeline serial = {0}, t = {0};
    double *cost = NULL;
    bool ok = g && rt_devices_load(devs, g, d) && rt_timeline_init(&serial, g->ncalls) &&
              rt_timeline_init(&t, g->ncalls) &&
              (cost = calloc((size_t)g->ncalls + 1, sizeof *cost));
    if (!ok)
        goto done;
    int k0 = 0;   /* the serial baseline runs on the first CPU device */
    while (k0 < devs->n && devs->dev[k0].kind != RT_DEV_CPU)
        k0++;
    k0 = k0 < devs->n ? k0 : 0;
    if (!r) {
        static_costs(g, out);
    } else {
        /* The serial baseline, measured: it gives every call its cost. */
        if (devs->dev[k0].kind == RT_DEV_CPU && ro->lib)
            cg_set_threads(ro->lib, devs->dev[k0].threads);
        trial serial_run = {RT_SCHED_SERIAL, &t, &serial, cost};
        ok = (pool = rt_workers_start(devs, g, d)) && serial_plan(g, devs, k0, &t, d) &&
             measure(pool, r, ro, g, &serial_run, 1, so->runs, d);
        if (!ok)
            goto done;
        for (int c = 0; c < g->ncalls; c++)
            g->nodes[c].cost_us = cost[c];
        rt_dag_analyze(g);
        fprintf(out, "costs: each call's median time in %d serial run%s on %s\n", so->runs,
                so->runs == 1 ? "" : "s", devs->dev[k0].name);
    }
    double serial_us = r ? serial.makespan_us : g->total_us;
    if (!rt_devices_all_cpu(devs)) {
        /* The baseline the accelerators are compared with: serial on the
         * first device (the costs' sum on a CPU). */
        rt_devices first = {.dev = devs->dev, .n = 1};
        ok = rt_sched_simulate(g, &first, RT_SCHED_SERIAL, &t, d);
        serial_us = t.makespan_us;
    }
    if (ok && so->strategy == RT_SCHED_SERIAL && r && rt_devices_all_cpu(devs)) {
        rt_timeline_free(&t);
        t = serial;
        serial = (rt_timeline){0};
    } else if (ok) {
        ok = rt_sched_simulate(g, devs, so->strategy, &t, d);
        if (ok && r) {
            rt_timeline plan = t;
            if (rt_devices_all_cpu(devs)) {
                /* Measured: the plan's queues (or the ready queue) on workers,
                 * taking turns with the serial baseline again. */
                rt_timeline baseline = {0};
                t = (rt_timeline){0};
                trial both[2] = {{RT_SCHED_SERIAL, &baseline, &serial, NULL},
                                 {so->strategy, &plan, &t, NULL}};
                ok = rt_timeline_init(&t, g->ncalls) && rt_timeline_init(&baseline, g->ncalls) &&
                     serial_plan(g, devs, k0, &baseline, d) &&
                     measure(pool, r, ro, g, both, 2, so->runs, d);
                serial_us = serial.makespan_us;
                rt_timeline_free(&baseline);
                for (int c = 0; ok && c < g->ncalls; c++) {
                    if (is_dynamic(so->strategy))
                        set_why(&t, c, "taken from the ready queue by %s, idle",
                                devs->dev[t.device[c]].name);
                    else {
                        t.why[c] = plan.why[c];
                        plan.why[c] = NULL;
                    }
                }
                rt_timeline_free(&plan);
            } else {
                /* Simulated: the real run (for the outputs) keeps its placement. */
                rt_timeline real = {0};
                ok = rt_timeline_init(&real, g->ncalls) &&
                     rt_workers_run(pool, r, ro, RT_SCHED_OP, &plan, &real, d);
                if (ok)
                    fprintf(out, "host run of every call in the plan's order: %.1f us (the "
                            "accelerators' calls computed on the host)\n", real.makespan_us);
                rt_timeline_free(&real);
            }
        }
    }
    if (!ok)
        goto done;
    rt_dag_print_summary(out, g);
    rt_sched_print(out, g, devs, so->strategy, &t, serial_us, so->runs);
    if (so->trace)
        ok = rt_sched_write_trace(so->trace, g, devs, so->strategy, &t, serial_us, d);
    if (ok && so->dump_graph) {
        const char **names = calloc((size_t)devs->n + 1, sizeof *names);
        for (int k = 0; names && k < devs->n; k++)
            names[k] = devs->dev[k].name;
        /* each call's time where it was placed: measured, or the device's cost */
        double *placed = calloc((size_t)g->ncalls + 1, sizeof *placed);
        for (int c = 0; placed && c < g->ncalls; c++)
            placed[c] = t.measured ? t.end_us[c] - t.start_us[c]
                                   : rt_device_call_us(devs, t.device[c], g, c);
        ok = names && placed && rt_dag_dump(g, so->dump_graph, t.device, names, placed, d);
        free(names);
        free(placed);
    }
done:
    rt_workers_stop(pool);
    rt_timeline_free(&serial);
    rt_timeline_free(&t);
    free(cost);
    rt_dag_free(g);
    return ok && !d->nerrors;
}
