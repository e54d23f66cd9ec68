/* runtime/profile.c — profiling hooks, timed runs, hardware counters and the
 * check of run-time counts against the static analysis (doc/profile.md). */
#include "runtime/profile.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ir/interp.h"

/* The profile the hooks feed.  Only one runs at a time; the executor calls
 * layer stages one after another, so a function's start slot is never
 * written by two threads at once. */
static rt_profile *active;

uint64_t rt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- hardware counters */

typedef struct hw_read {
    uint64_t nr;
    uint64_t values[RT_NHW];
} hw_read;

static void hw_sample(const rt_profile *p, uint64_t *out)
{
    hw_read r;
    if (read(p->hw_fd, &r, sizeof r) < (ssize_t)sizeof(uint64_t) * 2 || r.nr > RT_NHW) {
        memset(out, 0, sizeof(uint64_t) * RT_NHW);
        return;
    }
    for (int i = 0; i < RT_NHW; i++)
        out[i] = i < (int)r.nr ? r.values[i] : 0;
}

static long perf_open(struct perf_event_attr *a, int group)
{
    return syscall(SYS_perf_event_open, a, 0, -1, group, 0);
}

static int paranoid_level(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int v = -99;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -99;
        fclose(f);
    }
    return v;
}

/* Opens cycles, instructions and last-level cache misses of this thread as
 * one group; on failure explains why in p->hw_note. */
static void hw_open(rt_profile *p)
{
    static const uint64_t config[RT_NHW] = {
        PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_CACHE_MISSES,
    };
    p->hw_fd = -1;
    for (int i = 0; i < RT_NHW; i++)
        p->hw_fds[i] = -1;
    for (int i = 0; i < RT_NHW; i++) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.type = PERF_TYPE_HARDWARE;
        a.size = sizeof a;
        a.config = config[i];
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        a.read_format = PERF_FORMAT_GROUP;
        a.disabled = i == 0;
        long fd = perf_open(&a, i == 0 ? -1 : p->hw_fd);
        if (fd < 0) {
            int e = errno;
            int lvl = paranoid_level();
            if (e == EACCES || e == EPERM)
                snprintf(p->hw_note, sizeof p->hw_note,
                         "hardware counters unavailable: perf_event_open: %s "
                         "(kernel.perf_event_paranoid is %d; 2 or less allows user-space counting)",
                         strerror(e), lvl);
            else if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV)
                snprintf(p->hw_note, sizeof p->hw_note,
                         "hardware counters unavailable: perf_event_open: %s "
                         "(this machine or virtual machine exposes no hardware performance counters)",
                         strerror(e));
            else
                snprintf(p->hw_note, sizeof p->hw_note,
                         "hardware counters unavailable: perf_event_open: %s", strerror(e));
            for (int k = 0; k < RT_NHW; k++)
                if (p->hw_fds[k] >= 0)
                    close(p->hw_fds[k]);
            p->hw_fd = -1;
            return;
        }
        p->hw_fds[i] = (int)fd;
        if (i == 0)
            p->hw_fd = (int)fd;
    }
    ioctl(p->hw_fd, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
    ioctl(p->hw_fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    p->hw_ok = true;
}

/* ---------------------------------------------------------------- hooks */

void tec_prof_enter(int64_t func)
{
    rt_profile *p = active;
    if (!p)
        return;
    if ((uint64_t)func >= (uint64_t)p->nfuncs) {
        __atomic_add_fetch(&p->bad_ids, 1, __ATOMIC_RELAXED);
        return;
    }
    if (p->hw_ok && p->cur_run >= 0)
        hw_sample(p, &p->hw_start[func * RT_NHW]);
    p->start_ns[func] = rt_now_ns();
}

void tec_prof_exit(int64_t func)
{
    uint64_t now = rt_now_ns();
    rt_profile *p = active;
    if (!p)
        return;
    if ((uint64_t)func >= (uint64_t)p->nfuncs) {
        __atomic_add_fetch(&p->bad_ids, 1, __ATOMIC_RELAXED);
        return;
    }
    int run = p->cur_run;
    if (run < 0)
        return;
    uint64_t start = p->start_ns[func], dur = now - start;
    p->func_ns[(size_t)run * (size_t)p->nfuncs + (size_t)func] += dur;
    if (p->hw_ok) {
        uint64_t v[RT_NHW];
        hw_sample(p, v);
        uint64_t *acc = &p->hw[((size_t)run * (size_t)p->nfuncs + (size_t)func) * RT_NHW];
        for (int i = 0; i < RT_NHW; i++)
            acc[i] += v[i] - p->hw_start[func * RT_NHW + i];
    }
    uint64_t k = __atomic_fetch_add(&p->nevents, 1, __ATOMIC_RELAXED);
    if (k < p->capevents)
        p->events[k] = (rt_trace_event){(int)func, run, start - p->t0, dur};
}

void tec_prof_count(int64_t site, int64_t n)
{
    rt_profile *p = active;
    if (!p)
        return;
    if ((uint64_t)site >= (uint64_t)p->nsites) {
        __atomic_add_fetch(&p->bad_ids, 1, __ATOMIC_RELAXED);
        return;
    }
    if (n > 0)
        __atomic_add_fetch(&p->counts[site], (uint64_t)n, __ATOMIC_RELAXED);
}

/* The same hooks for the interpreter (ir/ does not import runtime/). */
static const ir_interp_hooks interp_hooks = {tec_prof_enter, tec_prof_exit, tec_prof_count};

/* ---------------------------------------------------------------- declared shapes */

struct rt_shapes {
    int n;
    char **names;
    char **texts;
    rt_layer_io *io;           /* [nio]: one per layer a graph call runs */
    int nio;
};

static char *shape_text(const ir_buffer *b)
{
    size_t cap = 16 + (size_t)b->ndim * 24;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t len = (size_t)snprintf(s, cap, "%s[", ir_dtype_name(b->dtype));
    for (int i = 0; i < b->ndim; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s%lld", i ? ", " : "",
                                (long long)b->shape[i]);
    snprintf(s + len, cap - len, "]");
    return s;
}

/* Counts and then records the ALLOC buffers of one function. */
typedef struct alloc_rec {
    rt_shapes *s;
    const ir_func *f;
    int count;
    bool oom;
} alloc_rec;

static bool add_shape(rt_shapes *s, char *name, const ir_buffer *b)
{
    s->names[s->n] = name;
    s->texts[s->n] = shape_text(b);
    s->n++;
    return name && s->texts[s->n - 1];
}

static bool record_alloc(const ir_stmt *st, void *ctx)
{
    alloc_rec *r = ctx;
    if (st->kind != IR_S_ALLOC || !st->buf)
        return true;
    if (!r->s) {
        r->count++;
        return true;
    }
    size_t n = strlen(r->f->name) + strlen(st->buf->name) + 3;
    char *key = malloc(n);
    if (key)
        snprintf(key, n, "@%s/%s", r->f->name, st->buf->name);
    if (!add_shape(r->s, key, st->buf))
        r->oom = true;
    return true;
}

/* The activations call reads and writes, by whether its kernel stores to
 * the parameter they are passed as; false when out of memory. */
static bool record_layer_io(rt_shapes *s, const ir_graph_call *call)
{
    const char *layer = ir_func_attr(call->fn, "layer");
    if (!layer || rt_shapes_layer(s, layer))
        return true;
    rt_layer_io *io = &s->io[s->nio++];
    io->layer = strdup(layer);
    io->inputs = calloc((size_t)call->nargs + 1, sizeof *io->inputs);
    bool ok = io->layer && io->inputs;
    for (int p = 0; ok && p < call->nargs && p < call->fn->nparams; p++) {
        const ir_buffer *arg = call->args[p];
        if (arg->role == IR_BUF_PARAM || arg->role == IR_BUF_CONST)
            continue;
        char *text = shape_text(arg);
        if (!(ok = text != NULL))
            break;
        if (!ir_stmt_stores_to(call->fn->body, call->fn->params[p])) {
            io->inputs[io->ninputs++] = text;
            continue;
        }
        uint64_t n = (uint64_t)ir_dtype_size(arg->dtype);
        for (int d = 0; d < arg->ndim; d++)
            n *= (uint64_t)arg->shape[d];
        io->output_bytes += n;
        if (io->output) {   /* several outputs: "a, b" */
            char *both = malloc(strlen(io->output) + strlen(text) + 3);
            if (both)
                sprintf(both, "%s, %s", io->output, text);
            free(text);
            if (!(ok = both != NULL))
                break;
            free(io->output);
            text = both;
        }
        io->output = text;
    }
    return ok;
}

rt_shapes *rt_shapes_record(const ir_module *m)
{
    rt_shapes *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    alloc_rec count = {0};
    for (int i = 0; i < m->nfuncs; i++)
        ir_stmt_walk(m->funcs[i]->body, record_alloc, NULL, &count);
    size_t cap = (size_t)m->graph.nbufs + (size_t)count.count + 1;
    s->names = calloc(cap, sizeof *s->names);
    s->texts = calloc(cap, sizeof *s->texts);
    if (!s->names || !s->texts) {
        rt_shapes_free(s);
        return NULL;
    }
    for (int i = 0; i < m->graph.nbufs; i++)
        if (!add_shape(s, strdup(m->graph.bufs[i]->name), m->graph.bufs[i])) {
            rt_shapes_free(s);
            return NULL;
        }
    for (int i = 0; i < m->nfuncs; i++) {
        alloc_rec r = {s, m->funcs[i], 0, false};
        ir_stmt_walk(m->funcs[i]->body, record_alloc, NULL, &r);
        if (r.oom) {
            rt_shapes_free(s);
            return NULL;
        }
    }
    s->io = calloc((size_t)m->graph.ncalls + 1, sizeof *s->io);
    for (int c = 0; s->io && c < m->graph.ncalls; c++)
        if (!record_layer_io(s, &m->graph.calls[c])) {
            rt_shapes_free(s);
            return NULL;
        }
    if (!s->io) {
        rt_shapes_free(s);
        return NULL;
    }
    return s;
}

const rt_layer_io *rt_shapes_layer(const rt_shapes *s, const char *layer)
{
    for (int i = 0; s && layer && i < s->nio; i++)
        if (strcmp(s->io[i].layer, layer) == 0)
            return &s->io[i];
    return NULL;
}

const char *rt_shapes_find(const rt_shapes *s, const char *name)
{
    for (int i = 0; s && i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return s->texts[i];
    return NULL;
}

void rt_shapes_free(rt_shapes *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        free(s->names[i]);
        free(s->texts[i]);
    }
    for (int i = 0; i < s->nio; i++) {
        for (int k = 0; k < s->io[i].ninputs; k++)
            free(s->io[i].inputs[k]);
        free(s->io[i].inputs);
        free(s->io[i].layer);
        free(s->io[i].output);
    }
    free(s->io);
    free(s->names);
    free(s->texts);
    free(s);
}

/* ---------------------------------------------------------------- profiles */

static void *xcalloc(size_t n, size_t size, bool *ok)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        *ok = false;
    return p;
}

rt_profile *rt_profile_new(const ir_module *m, const rt_shapes *shapes,
                           const rt_profile_options *o, diag *d)
{
    rt_profile *p = calloc(1, sizeof *p);
    if (!p) {
        diag_error(d, diag_noloc(), "out of memory");
        return NULL;
    }
    p->m = m;
    p->shapes = shapes;
    p->o = *o;
    if (p->o.repeat < 1)
        p->o.repeat = 1;
    p->cur_run = -1;
    p->hw_fd = -1;
    p->st = pass_analyze(m, NULL, d);
    if (!p->st) {
        free(p);
        return NULL;
    }
    p->nfuncs = m->nfuncs;
    p->nsites = p->st->nsites;
    size_t runs = (size_t)p->o.repeat, nf = (size_t)p->nfuncs, ns = (size_t)p->nsites;
    bool ok = true;
    p->start_ns = xcalloc(nf, sizeof *p->start_ns, &ok);
    p->counts = xcalloc(ns, sizeof *p->counts, &ok);
    p->func_ns = xcalloc(runs * nf, sizeof *p->func_ns, &ok);
    p->run_counts = xcalloc(runs * ns, sizeof *p->run_counts, &ok);
    p->run_ns = xcalloc(runs, sizeof *p->run_ns, &ok);
    p->capevents = runs * (size_t)(m->graph.ncalls > 0 ? m->graph.ncalls : 1);
    p->events = xcalloc(p->capevents, sizeof *p->events, &ok);
    if (ok && p->o.counters) {
        p->hw_start = xcalloc(nf * RT_NHW, sizeof *p->hw_start, &ok);
        p->hw = xcalloc(runs * nf * RT_NHW, sizeof *p->hw, &ok);
        if (ok)
            hw_open(p);
    }
    if (!ok) {
        diag_error(d, diag_noloc(), "out of memory");
        rt_profile_free(p);
        return NULL;
    }
    p->have_calib = rt_calibration_load(&p->calib);
    p->llc_bytes = getenv("TEC_LLC_BYTES") || !p->have_calib || !p->calib.llc_bytes
                       ? rt_llc_bytes() : p->calib.llc_bytes;
    return p;
}

bool rt_profile_run(rt_profile *p, rt_run *run, const rt_run_options *ro, diag *d)
{
    bool ok = true;
    ir_interp_set_hooks(&interp_hooks);
    active = p;
    for (int r = -1; r < p->o.repeat && ok; r++) {
        memset(p->counts, 0, sizeof *p->counts * (size_t)p->nsites);
        p->cur_run = r;
        uint64_t t = rt_now_ns();
        if (r == 0)
            p->t0 = t;
        ok = rt_run_execute(run, ro, d);
        uint64_t end = rt_now_ns();
        if (r < 0)   /* (after the warm-up) */
            rt_run_prepare_repeats(run, ro);
        if (ok && r >= 0) {
            p->run_ns[r] = end - t;
            memcpy(&p->run_counts[(size_t)r * (size_t)p->nsites], p->counts,
                   sizeof *p->counts * (size_t)p->nsites);
            p->nruns = r + 1;
        }
    }
    p->cur_run = -1;
    active = NULL;
    return ok;
}

static const char *site_text(const pass_site *s, char *buf, size_t len)
{
    const char *what = s->stmt->kind == IR_S_STORE ? (s->in_init ? "init store" : "store")
                                                    : ir_stmt_kind_name(s->stmt->kind);
    if (s->block)
        snprintf(buf, len, "site %d (%s in block %s)", s->id, what, s->block);
    else
        snprintf(buf, len, "site %d (%s)", s->id, what);
    return buf;
}

bool rt_profile_check(rt_profile *p, diag *d)
{
    const pass_stats *st = p->st;
    int before = d->nerrors;
    char text[256];
    if (st->bad_counts)
        diag_internal(d, "profile", "%d tec_prof_count calls name no site of their function "
                      "(was the module changed after instrument?)", st->bad_counts);
    if (p->bad_ids)
        diag_internal(d, "profile", "%llu profiling calls had an id out of range",
                      (unsigned long long)p->bad_ids);
    if (p->nevents > p->capevents)
        diag_warning(d, diag_noloc(), "profile: the trace keeps the first %llu of %llu layer "
                     "runs", (unsigned long long)p->capevents, (unsigned long long)p->nevents);
    for (int f = 0; f < st->nfuncs; f++) {
        const pass_funcinfo *fi = &st->funcs[f];
        if (fi->ncalls == 0)
            continue;
        if (!fi->instrumented)
            diag_warning(d, diag_noloc(), "profile: layer %s (@%s) is not instrumented: "
                         "it has no time", fi->layer, fi->fn->name);
        for (int i = 0; i < fi->nsites; i++) {
            const pass_site *s = &st->sites[fi->first_site + i];
            if (!s->counted) {
                if (!s->is_static)
                    diag_warning(d, diag_noloc(), "profile: layer %s (@%s): %s has a dynamic "
                                 "count but no counter; its work is missing from the report",
                                 fi->layer, fi->fn->name, site_text(s, text, sizeof text));
                continue;
            }
            for (int r = 1; r < p->nruns; r++) {
                uint64_t a = p->run_counts[s->id], b = p->run_counts[(size_t)r * p->nsites + s->id];
                if (a != b) {
                    diag_warning(d, diag_noloc(), "profile: layer %s (@%s): %s ran %llu times "
                                 "in run 1 but %llu times in run %d; the report uses run 1",
                                 fi->layer, fi->fn->name, site_text(s, text, sizeof text),
                                 (unsigned long long)a, (unsigned long long)b, r + 1);
                    break;
                }
            }
            if (!s->is_static || p->nruns == 0)
                continue;
            uint64_t want = s->count * (uint64_t)fi->ncalls, got = p->run_counts[s->id];
            if (got != want) {
                diag_error(d, diag_noloc(), "profile: layer %s (@%s): the counters say %s "
                           "executed %llu times per run, but the static analysis says %llu",
                           fi->layer, fi->fn->name, site_text(s, text, sizeof text),
                           (unsigned long long)got, (unsigned long long)want);
                p->ndisagree++;
            }
        }
    }
    return d->nerrors == before;
}

void rt_profile_free(rt_profile *p)
{
    if (!p)
        return;
    if (active == p)
        active = NULL;
    for (int i = 0; i < RT_NHW; i++)
        if (p->hw_fds[i] >= 0 && p->hw_ok)
            close(p->hw_fds[i]);
    pass_stats_free(p->st);
    free(p->start_ns);
    free(p->counts);
    free(p->func_ns);
    free(p->run_counts);
    free(p->run_ns);
    free(p->events);
    free(p->hw_start);
    free(p->hw);
    free(p);
}

/* ---------------------------------------------------------------- plain timing */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

double rt_median_u64(uint64_t *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

bool rt_time_runs(rt_run *run, const rt_run_options *ro, int repeat, double *median_us, diag *d)
{
    if (repeat < 1)
        repeat = 1;
    uint64_t *t = calloc((size_t)repeat, sizeof *t);
    if (!t) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    bool ok = rt_run_execute(run, ro, d);   /* warm-up */
    rt_run_prepare_repeats(run, ro);
    for (int r = 0; r < repeat && ok; r++) {
        uint64_t s = rt_now_ns();
        ok = rt_run_execute(run, ro, d);
        t[r] = rt_now_ns() - s;
    }
    if (ok)
        *median_us = rt_median_u64(t, repeat) / 1e3;
    free(t);
    return ok;
}
