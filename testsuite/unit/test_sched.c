/* testsuite/unit/test_sched.c — the DAG of a graph's calls, the devices, the
 * strategies' timelines, and running calls on worker threads (outputs equal
 * to the serial run's; a failing call stops every worker).
 *
 * The program has two independent chains:
 *
 *   call 0  a = twice(x)        call 3  b = twice(a)      (chain 0 -> 3)
 *   call 1  p = pick(ids, x)    call 2  q = twice(p)      (chain 1 -> 2)
 *
 * Runs use the IR interpreter.  Prints one line per check group; exits 1
 * on failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "runtime/dag.h"
#include "runtime/exec.h"
#include "runtime/sched.h"

static int failures;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);        \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static void report(const char *what, int before)
{
    printf("%s %s\n", failures == before ? "ok  " : "FAIL", what);
}

static const char *program =
    "def twice(x: f32[N]) -> y: f32[N] {\n"
    "    y[i] = x[i] * 2.0\n"
    "}\n"
    "def pick(ids: i64[K], t: f32[N]) -> y: f32[K] {\n"
    "    y[k] = t[ids[k]]\n"
    "}\n"
    "input x: f32[16]\n"
    "input ids: i64[4]\n"
    "a = twice(x)\n"
    "p = pick(ids, x)\n"
    "q = twice(p)\n"
    "b = twice(a)\n"
    "output q\n"
    "output b\n";

static ir_module *compile(void)
{
    diag d;
    diag_init(&d, stdout);
    fe_options fo = {0};
    ir_module *m = fe_compile("t.te", program, strlen(program), &fo, &d);
    diag_fini(&d);
    return m;
}

static int buffer(const ir_module *m, const char *name)
{
    return ir_graph_buffer_index(&m->graph, ir_graph_find_buffer(m, name));
}

static void test_dag(const rt_dag *g)
{
    int before = failures;
    CHECK(g->ncalls == 4);
    CHECK(g->nedges == 2);
    CHECK(g->nodes[3].npreds == 1 && g->nodes[3].preds[0] == 0);
    CHECK(g->nodes[2].npreds == 1 && g->nodes[2].preds[0] == 1);
    CHECK(g->nodes[0].npreds == 0 && g->nodes[1].npreds == 0);
    CHECK(g->nlevels == 2 && g->max_width == 2);
    CHECK(g->npaths == 2);
    CHECK(g->nodes[0].path == g->nodes[3].path && g->nodes[1].path == g->nodes[2].path);
    CHECK(g->nodes[0].path != g->nodes[1].path);
    report("dag: dependences, levels and fork-join paths", before);
}

static void test_devices(void)
{
    int before = failures;
    rt_devices devs;
    char err[512];
    CHECK(rt_devices_parse("cpu:1,cpu:1", &devs, err, sizeof err));
    CHECK(devs.n == 2 && devs.dev[1].kind == RT_DEV_CPU && devs.dev[1].first_core == 1);
    rt_devices_free(&devs);
    CHECK(rt_devices_parse("cpu:2,acc:x/y.cfg", &devs, err, sizeof err));
    CHECK(devs.n == 2 && devs.dev[1].kind == RT_DEV_ACC &&
          strcmp(devs.dev[1].config_path, "x/y.cfg") == 0 && strcmp(devs.dev[1].name, "acc1:y") == 0);
    rt_devices_free(&devs);
    CHECK(!rt_devices_parse("gpu:1", &devs, err, sizeof err) && strstr(err, "unknown device 'gpu:1'"));
    CHECK(!rt_devices_parse("cpu:x", &devs, err, sizeof err) && strstr(err, "'cpu:x'"));
    CHECK(!rt_devices_parse("cpu:2,cpu:1", &devs, err, sizeof err) && strstr(err, "same number"));
    CHECK(!rt_devices_parse(",", &devs, err, sizeof err) && strstr(err, "no device"));
    report("devices: parsing", before);
}

/* Every call after its predecessors, no two calls at once on a device. */
static bool valid(const rt_dag *g, const rt_timeline *t)
{
    for (int c = 0; c < g->ncalls; c++) {
        for (int i = 0; i < g->nodes[c].npreds; i++)
            if (t->start_us[c] < t->end_us[g->nodes[c].preds[i]])
                return false;
        for (int e = 0; e < c; e++)
            if (t->device[e] == t->device[c] && t->start_us[c] < t->end_us[e] &&
                t->start_us[e] < t->end_us[c])
                return false;
    }
    return true;
}

static void test_simulate(rt_dag *g)
{
    int before = failures;
    /* chain 0 -> 3 costs 1 + 1, chain 1 -> 2 costs 3 + 1 */
    const double cost[] = {1, 3, 1, 1};
    for (int c = 0; c < 4; c++)
        g->nodes[c].cost_us = cost[c];
    rt_dag_analyze(g);
    CHECK(g->critical_us == 4 && g->total_us == 6);
    CHECK(g->nodes[1].critical && g->nodes[2].critical && !g->nodes[0].critical);
    rt_devices devs;
    CHECK(rt_devices_cpus(2, &devs));
    const double want[RT_NSCHED] = {6, 4, 4, 4, 4};
    for (int s = 0; s < RT_NSCHED; s++) {
        rt_timeline t;
        diag d;
        diag_init(&d, stdout);
        CHECK(rt_timeline_init(&t, g->ncalls));
        CHECK(rt_sched_simulate(g, &devs, (rt_strategy)s, &t, &d));
        if (t.makespan_us != want[s] || !valid(g, &t))
            printf("FAIL %s: makespan %g, expected %g\n", rt_strategy_name((rt_strategy)s),
                   t.makespan_us, want[s]);
        CHECK(t.makespan_us == want[s] && valid(g, &t));
        /* The two chains go to different devices (serial: both to the first). */
        CHECK((t.device[0] == t.device[1]) == (s == RT_SCHED_SERIAL));
        rt_timeline_free(&t);
        diag_fini(&d);
    }
    rt_devices_free(&devs);
    report("simulate: every strategy's makespan on two devices", before);

    /* A CPU and an accelerator 10x faster at every call (transfers free):
     * the cost-aware ready queue and op put every call on the accelerator
     * even though the CPU is idle first; the plain ready queue does not. */
    before = failures;
    double acc_us[4];
    for (int c = 0; c < 4; c++)
        acc_us[c] = cost[c] / 10;
    rt_device two[2] = {{.kind = RT_DEV_CPU, .name = "cpu0", .threads = 1},
                        {.kind = RT_DEV_ACC, .name = "acc1", .call_us = acc_us}};
    rt_devices het = {.dev = two, .n = 2};
    const rt_strategy aware[] = {RT_SCHED_OP, RT_SCHED_DYNAMIC_CP};
    for (int i = 0; i < 2; i++) {
        rt_timeline t;
        diag d;
        diag_init(&d, stdout);
        CHECK(rt_timeline_init(&t, g->ncalls));
        CHECK(rt_sched_simulate(g, &het, aware[i], &t, &d));
        CHECK(fabs(t.makespan_us - 0.6) < 1e-9 && valid(g, &t));
        for (int c = 0; c < 4; c++)
            CHECK(t.device[c] == 1);
        CHECK(rt_sched_simulate(g, &het, RT_SCHED_DYNAMIC, &t, &d));
        CHECK(t.device[0] == 0 && valid(g, &t));
        rt_timeline_free(&t);
        diag_fini(&d);
    }
    report("simulate: cost-aware strategies use the faster device", before);
}

/* The work bound at the devices' own speeds, and a measured speedup split
 * into overlap and the calls' own pace. */
static void test_bounds(rt_dag *g)
{
    int before = failures;
    const double cost[] = {1, 3, 1, 1};     /* total 6 on a CPU */
    for (int c = 0; c < 4; c++)
        g->nodes[c].cost_us = cost[c];
    rt_dag_analyze(g);
    rt_devices cpus;
    CHECK(rt_devices_cpus(2, &cpus));
    CHECK(fabs(rt_sched_work_bound(g, &cpus) - 3) < 1e-12);      /* 6 over two equal CPUs */
    rt_devices_free(&cpus);
    /* A CPU and an accelerator 100x faster at every call: all on the
     * accelerator takes 0.06; with a split the CPU can take 1/101 of the
     * work, 6 / 101 = 0.0594.  The even-spread bound said 0.03 and left a
     * makespan / bound of 2 for a schedule with no headroom. */
    double acc_us[4];
    for (int c = 0; c < 4; c++)
        acc_us[c] = cost[c] / 100;
    rt_device two[2] = {{.kind = RT_DEV_CPU, .name = "cpu0", .threads = 1},
                        {.kind = RT_DEV_ACC, .name = "acc1", .call_us = acc_us}};
    rt_devices het = {.dev = two, .n = 2};
    double w = rt_sched_work_bound(g, &het);
    CHECK(fabs(w - 6.0 / 101) < 1e-12);
    rt_timeline t;
    diag d;
    diag_init(&d, stdout);
    CHECK(rt_timeline_init(&t, g->ncalls));
    CHECK(rt_sched_simulate(g, &het, RT_SCHED_OP, &t, &d));
    CHECK(t.makespan_us >= w && t.makespan_us / w < 1.02);
    rt_timeline_free(&t);
    diag_fini(&d);
    /* The accelerator faster only at calls 1 and 2 (the other way round for
     * 0 and 3): each takes what it is relatively best at (CPU 0 and 3, 2 us;
     * accelerator 1 and 2, 1 us), and a third of call 3 moves over to
     * balance them: 2 - 1/3 = 1 + 2/3. */
    double mixed[4] = {2, 0.5, 0.5, 2};
    two[1].call_us = mixed;
    CHECK(fabs(rt_sched_work_bound(g, &het) - 5.0 / 3) < 1e-12);
    report("work bound at each device's own speed", before);

    /* A chain run on two workers: the calls did not overlap (they took
     * 10 us of a 10 us makespan) but ran faster than in the serial runs
     * (12.5 us): the speedup 1.25x is all pace, none of it the schedule. */
    before = failures;
    CHECK(rt_timeline_init(&t, 4));
    const double st[4] = {0, 2, 5, 7}, en[4] = {2, 5, 7, 10};
    for (int c = 0; c < 4; c++) {
        t.device[c] = c % 2;
        t.start_us[c] = st[c];
        t.end_us[c] = en[c];
    }
    t.makespan_us = 10;
    t.measured = true;
    rt_speedup_split sp = rt_sched_speedup_split(&t, 12.5);
    CHECK(fabs(sp.speedup - 1.25) < 1e-12 && fabs(sp.overlap - 1) < 1e-12 &&
          fabs(sp.pace - 1.25) < 1e-12 && sp.busy_us == 10);
    /* calls 0 and 1 side by side at the serial runs' pace: 10 us of calls
     * in 8 us, a speedup of 1.25 that is all overlap */
    const double st2[4] = {0, 0, 3, 5}, en2[4] = {2, 3, 5, 8};
    for (int c = 0; c < 4; c++) {
        t.start_us[c] = st2[c];
        t.end_us[c] = en2[c];
    }
    t.makespan_us = 8;
    sp = rt_sched_speedup_split(&t, 10);
    CHECK(fabs(sp.overlap - 1.25) < 1e-12 && fabs(sp.pace - 1) < 1e-12 &&
          fabs(sp.speedup - 1.25) < 1e-12);
    rt_timeline_free(&t);
    report("a measured speedup split into overlap and pace", before);
}

static void set_ids(rt_run *r, const ir_module *m, int64_t last)
{
    int64_t *ids = r->bufs[buffer(m, "ids")]->data;
    for (int i = 0; i < 4; i++)
        ids[i] = i * 3;
    ids[3] = last;
}

static void test_execute(const ir_module *m, const rt_dag *g)
{
    int before = failures;
    rt_iface iface;
    diag d;
    diag_init(&d, stdout);
    rt_run_options ro = {.own_storage = true};
    CHECK(rt_iface_record(m, &iface, &d));
    rt_run *serial = rt_run_new(m, &iface, &ro, &d), *r = rt_run_new(m, &iface, &ro, &d);
    CHECK(serial && r);
    if (!serial || !r)
        return;
    set_ids(serial, m, 9);
    CHECK(rt_run_execute(serial, &ro, &d));
    rt_devices devs;
    CHECK(rt_devices_cpus(2, &devs));
    int q = buffer(m, "q"), b = buffer(m, "b");
    for (int s = 0; s < RT_NSCHED; s++) {
        rt_timeline plan, t;
        CHECK(rt_timeline_init(&plan, g->ncalls) && rt_timeline_init(&t, g->ncalls));
        CHECK(rt_sched_simulate(g, &devs, (rt_strategy)s, &plan, &d));
        memset(r->bufs[q]->data, 0, r->bufs[q]->nbytes);
        memset(r->bufs[b]->data, 0, r->bufs[b]->nbytes);
        set_ids(r, m, 9);
        CHECK(rt_sched_execute(r, &ro, g, &devs, (rt_strategy)s, &plan, &t, &d));
        CHECK(memcmp(r->bufs[q]->data, serial->bufs[q]->data, r->bufs[q]->nbytes) == 0);
        CHECK(memcmp(r->bufs[b]->data, serial->bufs[b]->data, r->bufs[b]->nbytes) == 0);
        CHECK(t.measured && valid(g, &t));
        rt_timeline_free(&plan);
        rt_timeline_free(&t);
    }
    report("execute: every strategy's outputs equal the serial run's", before);

    /* pick fails on one device while the other waits for q = twice(p)
     * behind it: the run stops with pick's error. */
    before = failures;
    rt_timeline plan, t;
    CHECK(rt_timeline_init(&plan, g->ncalls) && rt_timeline_init(&t, g->ncalls));
    const int device[] = {0, 1, 0, 0};
    const double start[] = {0, 0, 2, 1};
    for (int c = 0; c < 4; c++) {
        plan.device[c] = device[c];
        plan.start_us[c] = start[c];
    }
    set_ids(r, m, 16);
    diag fd;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    diag_init(&fd, mem);
    CHECK(!rt_sched_execute(r, &ro, g, &devs, RT_SCHED_OP, &plan, &t, &fd));
    diag_fini(&fd);
    fclose(mem);
    CHECK(text && strstr(text, "in layer p") && strstr(text, "(on cpu1)"));
    if (text && !strstr(text, "(on cpu1)"))
        printf("got: %s\n", text);
    free(text);
    rt_timeline_free(&plan);
    rt_timeline_free(&t);
    report("execute: a failing call stops the run with its error", before);

    rt_devices_free(&devs);
    rt_run_free(serial);
    rt_run_free(r);
    rt_iface_free(&iface);
    diag_fini(&d);
}

int main(void)
{
    ir_module *m = compile();
    CHECK(m != NULL);
    if (!m)
        return 1;
    diag d;
    diag_init(&d, stdout);
    rt_dag *g = rt_dag_build(m, false, &d);
    CHECK(g != NULL);
    if (g) {
        test_dag(g);
        test_devices();
        test_simulate(g);
        test_bounds(g);
        test_execute(m, g);
    }
    rt_dag_free(g);
    diag_fini(&d);
    ir_module_free(m);
    return failures ? 1 : 0;
}
