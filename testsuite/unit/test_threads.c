/* Unit tests of runtime/threads.c: the thread count a run's parallel loops
 * get from what the looks at the machine saw (rt_threads_decide), on a
 * 2-processor machine asked for 2 threads unless a case says otherwise. */
#include "runtime/threads.h"
#include "testsuite/unit/test.h"

#define MS 1000000LL

/* A look at time t ms: `waited` ms of run-queue wait summed over this
 * process's threads so far, `others` runnable threads of other processes. */
static int look(rt_threads_state *s, int64_t t, int64_t waited, int others, int asked)
{
    rt_threads_reading r = {.now_ns = t * MS, .wait_ns = waited * MS, .others = others,
                            .cpus = 2};
    return rt_threads_decide(s, &r, asked);
}

int main(void)
{
    group_begin("a quiet machine keeps the asked count");
    rt_threads_state s = {0};
    check_i("first call", look(&s, 0, 0, 0, 2), 2);
    check_i("no waiting", look(&s, 5, 0, 0, 2), 2);
    check_i("a little waiting (10%)", look(&s, 10, 1, 3, 2), 2);
    check_i("drops", s.drops, 0);
    group_end();

    group_begin("a competitor seen at the first call: one thread");
    s = (rt_threads_state){0};
    check_i("first call", look(&s, 0, 0, 1, 2), 1);
    check_i("drops", s.drops, 1);
    check_i("still there", look(&s, 5, 0, 1, 2), 1);
    check_i("gone, but the least back-off is not over", look(&s, 50, 0, 0, 2), 1);
    check_i("gone after the back-off", look(&s, 101, 0, 0, 2), 2);
    check_i("and the threads get their processors", look(&s, 106, 0, 0, 2), 2);
    check_i("a later drop backs off the least again", look(&s, 111, 4, 1, 2), 1);
    check_i("back-off", s.backoff_ns / MS, 100);
    group_end();

    group_begin("waiting on two threads: one thread, tries with a growing back-off");
    s = (rt_threads_state){0};
    look(&s, 0, 0, 0, 2);
    /* 5 ms on 2 threads, 3 ms of it waiting (30%) */
    check_i("drop", look(&s, 5, 3, 1, 2), 1);
    check_i("before the back-off", look(&s, 50, 3, 1, 2), 1);
    check_i("try at 105 ms", look(&s, 105, 3, 1, 2), 2);
    check_i("refuted", look(&s, 110, 6, 1, 2), 1);
    check_i("back-off doubled", s.backoff_ns / MS, 200);
    check_i("no try at 250 ms", look(&s, 250, 6, 1, 2), 1);
    check_i("try at 310 ms", look(&s, 310, 6, 1, 2), 2);
    check_i("refuted again", look(&s, 315, 9, 1, 2), 1);
    check_i("back-off doubled again", s.backoff_ns / MS, 400);
    /* a competitor the scheduler lets this process preempt (a niced
     * build): counted, but the threads barely wait */
    check_i("try at 715 ms", look(&s, 715, 9, 1, 2), 2);
    check_i("confirmed", look(&s, 720, 9, 1, 2), 2);
    check_i("back-off reset", s.backoff_ns / MS, 100);
    check_i("drops", s.drops, 3);
    group_end();

    group_begin("the back-off stops growing");
    s = (rt_threads_state){0};
    look(&s, 0, 0, 0, 2);
    int64_t t = 5, w = 5;
    look(&s, t, w, 1, 2);   /* drop */
    for (int i = 0; i < 20; i++) {
        t += s.backoff_ns / MS;
        look(&s, t, w, 1, 2);   /* try */
        t += 5;
        w += 5;
        look(&s, t, w, 1, 2);   /* refuted */
    }
    check_i("back-off", s.backoff_ns, RT_THREADS_PROBE_MAX_NS);
    check_i("threads", s.cur, 1);
    group_end();

    group_begin("many processors: drop as many threads as processors' worth of waiting");
    s = (rt_threads_state){0};
    rt_threads_reading r = {.now_ns = 0, .cpus = 16};
    check_i("first call", rt_threads_decide(&s, &r, 16), 16);
    /* 10 ms on 16 threads, 15 ms of waiting in all: 1.5 processors */
    r = (rt_threads_reading){.now_ns = 10 * MS, .wait_ns = 15 * MS, .others = 2, .cpus = 16};
    check_i("1.5 processors' worth", rt_threads_decide(&s, &r, 16), 16);
    r = (rt_threads_reading){.now_ns = 20 * MS, .wait_ns = 55 * MS, .others = 2, .cpus = 16};
    check_i("4 processors' worth (25%)", rt_threads_decide(&s, &r, 16), 12);
    r = (rt_threads_reading){.now_ns = 130 * MS, .wait_ns = 55 * MS, .others = 2, .cpus = 16};
    check_i("tries the asked count", rt_threads_decide(&s, &r, 16), 16);
    r = (rt_threads_reading){.now_ns = 140 * MS, .wait_ns = 95 * MS, .others = 2, .cpus = 16};
    check_i("refuted", rt_threads_decide(&s, &r, 16), 12);
    r = (rt_threads_reading){.now_ns = 230 * MS, .wait_ns = 95 * MS, .others = 2, .cpus = 16};
    check_i("the least back-off not over", rt_threads_decide(&s, &r, 16), 12);
    r = (rt_threads_reading){.now_ns = 250 * MS, .wait_ns = 95 * MS, .others = 2, .cpus = 16};
    check_i("back up to what is free", rt_threads_decide(&s, &r, 16), 14);
    r = (rt_threads_reading){.now_ns = 260 * MS, .wait_ns = 96 * MS, .others = 2, .cpus = 16};
    check_i("stays until the back-off is over", rt_threads_decide(&s, &r, 16), 14);
    r = (rt_threads_reading){.now_ns = 340 * MS, .wait_ns = 96 * MS, .others = 2, .cpus = 16};
    check_i("tries the asked count again", rt_threads_decide(&s, &r, 16), 16);
    r = (rt_threads_reading){.now_ns = 350 * MS, .wait_ns = 97 * MS, .others = 2, .cpus = 16};
    check_i("and keeps it", rt_threads_decide(&s, &r, 16), 16);
    group_end();

    group_begin("one thread asked: one thread");
    s = (rt_threads_state){0};
    check_i("first call", look(&s, 0, 0, 0, 1), 1);
    check_i("waiting", look(&s, 5, 5, 3, 1), 1);
    check_i("drops", s.drops, 0);
    group_end();

    return test_exit("test_threads");
}
