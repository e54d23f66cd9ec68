/* Unit tests of runtime/threads.c: whether a run's threads sleep at once
 * between parallel loops ("busy") or spin, from what the looks at the
 * machine saw (rt_threads_decide); 2 threads on 2 processors unless a case
 * says otherwise. */
#include "runtime/threads.h"
#include "testsuite/unit/test.h"

#define MS 1000000LL

/* A look at time t ms: `waited` ms of run-queue wait summed over this
 * process's threads so far, `others` runnable threads of other processes. */
static bool look(rt_threads_state *s, int64_t t, int64_t waited, int others)
{
    rt_threads_reading r = {.now_ns = t * MS, .wait_ns = waited * MS, .others = others,
                            .cpus = 2};
    return rt_threads_decide(s, &r, 2);
}

int main(void)
{
    group_begin("a quiet machine: the threads spin");
    rt_threads_state s = {0};
    check_i("first call", look(&s, 0, 0, 0), 0);
    check_i("no waiting", look(&s, 5, 0, 0), 0);
    check_i("a little waiting (10%)", look(&s, 10, 1, 3), 0);
    group_end();

    group_begin("one competitor at the first call: the waiting tells");
    s = (rt_threads_state){0};
    check_i("first call", look(&s, 0, 0, 1), 0);
    check_i("no waiting (a niced one)", look(&s, 5, 0, 1), 0);
    check_i("waiting", look(&s, 10, 3, 1), 1);
    group_end();

    group_begin("a crowded machine at the first call: asleep at once");
    s = (rt_threads_state){0};
    check_i("first call", look(&s, 0, 0, 3), 1);
    check_i("still there", look(&s, 5, 0, 1), 1);
    check_i("gone, but the least back-off is not over", look(&s, 50, 0, 0), 1);
    check_i("gone after the back-off", look(&s, 101, 0, 0), 0);
    check_i("and the threads get their processors", look(&s, 106, 0, 0), 0);
    check_i("waiting again (40%)", look(&s, 111, 4, 1), 1);
    check_i("a first refutation backs off the least", s.backoff_ns / MS, 100);
    group_end();

    group_begin("waiting while spinning: asleep, tries again with a growing back-off");
    s = (rt_threads_state){0};
    look(&s, 0, 0, 0);
    /* 5 ms on 2 threads, 3 ms of it waiting (30%) */
    check_i("waiting", look(&s, 5, 3, 1), 1);
    check_i("before the back-off", look(&s, 50, 3, 1), 1);
    check_i("try at 105 ms", look(&s, 105, 3, 1), 0);
    check_i("refuted", look(&s, 110, 6, 1), 1);
    check_i("back-off doubled", s.backoff_ns / MS, 200);
    check_i("no try at 250 ms", look(&s, 250, 6, 1), 1);
    check_i("try at 310 ms", look(&s, 310, 6, 1), 0);
    check_i("refuted again", look(&s, 315, 9, 1), 1);
    check_i("back-off doubled again", s.backoff_ns / MS, 400);
    /* a competitor the scheduler lets this process preempt (a niced
     * build): counted, but the threads barely wait */
    check_i("try at 715 ms", look(&s, 715, 9, 1), 0);
    check_i("confirmed", look(&s, 720, 9, 1), 0);
    check_i("back-off reset", s.backoff_ns / MS, 100);
    group_end();

    group_begin("the back-off stops growing");
    s = (rt_threads_state){0};
    look(&s, 0, 0, 0);
    int64_t t = 5, w = 5;
    look(&s, t, w, 1);   /* busy */
    for (int i = 0; i < 20; i++) {
        t += s.backoff_ns / MS;
        look(&s, t, w, 1);   /* try */
        t += 5;
        w += 5;
        look(&s, t, w, 1);   /* refuted */
    }
    check_i("back-off", s.backoff_ns, RT_THREADS_PROBE_MAX_NS);
    check_i("busy", s.busy, 1);
    group_end();

    group_begin("a crowded machine: no tries");
    s = (rt_threads_state){0};
    check_i("first call", look(&s, 0, 0, 5), 1);
    check_i("after the back-off, 5 others", look(&s, 200, 0, 5), 1);
    check_i("long after, 3 others", look(&s, 5000, 0, 3), 1);
    check_i("2 others: a try", look(&s, 5005, 0, 2), 0);
    group_end();

    group_begin("threads fewer than the processors: others may use the rest");
    s = (rt_threads_state){0};
    rt_threads_reading r = {.now_ns = 0, .others = 6, .cpus = 16};
    check_i("6 others, 8 threads of 16 processors", rt_threads_decide(&s, &r, 8), 0);
    r = (rt_threads_reading){.now_ns = 10 * MS, .wait_ns = 1 * MS, .others = 9, .cpus = 16};
    check_i("9 others, but no waiting", rt_threads_decide(&s, &r, 8), 0);
    s = (rt_threads_state){0};
    r = (rt_threads_reading){.now_ns = 0, .others = 9, .cpus = 16};
    check_i("9 others at the first call", rt_threads_decide(&s, &r, 8), 0);
    s = (rt_threads_state){0};
    r = (rt_threads_reading){.now_ns = 0, .others = 17, .cpus = 16};
    check_i("17 others at the first call", rt_threads_decide(&s, &r, 8), 1);
    group_end();

    return test_exit("test_threads");
}
