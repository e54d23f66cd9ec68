/* Unit tests of runtime/threads.c: whether a run's threads sleep at once
 * between parallel loops ("busy") or spin, from what the looks at the
 * machine saw (rt_threads_decide); 2 threads on 2 processors unless a case
 * says otherwise. */
#include "runtime/threads.h"
#include "testsuite/unit/test.h"

#define MS 1000000LL

/* A look at time t ms: `waited` ms of run-queue wait summed over this
 * process's threads so far, `others` runnable threads of other processes;
 * the window's calls took `call` ms, `cmp` ms of it calls that ran the
 * other way of waiting before, in `ref` ms then. */
static bool lookc(rt_threads_state *s, int64_t t, int64_t waited, int others, int64_t call,
                  int64_t cmp, int64_t ref)
{
    rt_threads_reading r = {.now_ns = t * MS, .wait_ns = waited * MS, .others = others,
                            .cpus = 2, .call_ns = call * MS, .cmp_ns = cmp * MS,
                            .ref_ns = ref * MS};
    return rt_threads_decide(s, &r, 2);
}

/* lookc's window of RT_THREADS_WINDOW_CALLS calls, for real-time threads
 * (no others count). */
static bool lookl(rt_threads_state *s, int64_t t, int64_t waited, int64_t call, int64_t cmp,
                  int64_t ref)
{
    rt_threads_reading r = {.now_ns = t * MS, .wait_ns = waited * MS, .cpus = 2,
                            .call_ns = call * MS, .cmp_ns = cmp * MS, .ref_ns = ref * MS,
                            .calls = RT_THREADS_WINDOW_CALLS, .realtime = true};
    return rt_threads_decide(s, &r, 2);
}

/* The same with no call times to compare: the waiting decides. */
static bool look(rt_threads_state *s, int64_t t, int64_t waited, int others)
{
    return lookc(s, t, waited, others, 0, 0, 0);
}


/* A run of the one-thread-or-all choice: whether it runs on one thread
 * with the threads waiting `busy`, taking one_ms on one thread and all_ms
 * on all. */
static bool run_one(rt_one_thread *s, bool busy, int64_t one_ms, int64_t all_ms)
{
    bool one = rt_one_thread_before(s, busy);
    rt_one_thread_after(s, one, (one ? one_ms : all_ms) * MS);
    return one;
}

/* A try of the temps apart (rt_run's placement) after three runs on the
 * plan at 100 ms: its first run apart takes first_ms, its second
 * second_ms, and the RT_ONE_CONFIRM_RUNS runs after it (on the plan, which
 * confirm a try that won) 100; how many of the try's two ran apart. */
static int apart_try(rt_one_thread *s, int64_t first_ms, int64_t second_ms)
{
    rt_one_thread_init(s, RT_APART_GAIN, true);
    for (int k = 0; k < 3; k++)
        run_one(s, false, first_ms, 100);
    int n = run_one(s, false, first_ms, 100) + run_one(s, false, second_ms, 100);
    for (int k = 0; k < RT_ONE_CONFIRM_RUNS; k++)
        check_i("the runs after the try: the plan", run_one(s, false, second_ms, 100), 0);
    return n;
}

static void one_thread_tests(void)
{
    int ones;
    group_begin("runs faster on all threads: one thread only on tries");
    rt_one_thread o;
    rt_one_thread_init(&o, RT_ONE_GAIN, false);
    check_i("run 1 (warm-up): all", run_one(&o, false, 9, 5), 0);
    check_i("run 2: all", run_one(&o, false, 9, 5), 0);
    check_i("run 3: all", run_one(&o, false, 9, 5), 0);
    check_i("run 4: the try, one", run_one(&o, false, 9, 5), 1);
    check_i("then all", run_one(&o, false, 9, 5), 0);
    check_i("lost by more than RT_ONE_FAR_LOSS: back-off 4 times", o.backoff, 4 * RT_ONE_TRY_MIN);
    check_i("next try", o.next_try, 4 + 4 * RT_ONE_TRY_MIN);
    int tries = 0;
    for (int k = 0; k < 200; k++)
        tries += run_one(&o, false, 9, 5);
    check_i("200 runs later: tries at 36, 164", tries, 2);
    check_i("back-off grows", o.backoff, 64 * RT_ONE_TRY_MIN);
    for (int k = 0; k < 20000; k++)
        run_one(&o, false, 9, 5);
    check_i("up to the most", o.backoff, RT_ONE_TRY_MAX);
    group_end();

    group_begin("one thread a little slower: the back-off doubles");
    rt_one_thread_init(&o, RT_ONE_GAIN, false);
    for (int k = 0; k < 3; k++)
        run_one(&o, false, 11, 10);
    check_i("the try (run 4): one thread", run_one(&o, false, 11, 10), 1);
    check_i("then all", run_one(&o, false, 11, 10), 0);
    check_i("back-off doubled", o.backoff, 2 * RT_ONE_TRY_MIN);
    check_i("next try", o.next_try, 4 + 2 * RT_ONE_TRY_MIN);
    group_end();

    group_begin("runs faster on one thread: all threads only on tries");
    rt_one_thread_init(&o, RT_ONE_GAIN, false);
    for (int k = 0; k < 3; k++)
        check_i("runs 1-3: all", run_one(&o, false, 9, 12), 0);
    check_i("the try (run 4)", run_one(&o, false, 9, 12), 1);
    check_i("faster: its second run (5)", run_one(&o, false, 9, 12), 1);
    check_i("not yet decided", o.one, 0);
    check_i("run 6, all threads", run_one(&o, false, 9, 12), 0);
    check_i("still not decided", o.one, 0);
    check_i("run 7, all threads, confirms it", run_one(&o, false, 9, 12), 0);
    check_i("one thread from then on", run_one(&o, false, 9, 12), 1);
    check_i("a change: the least back-off", o.backoff, RT_ONE_TRY_MIN);
    check_i("the next try a back-off after the confirming runs", o.next_try, 7 + RT_ONE_TRY_MIN);
    tries = 0;
    for (int k = 0; k < RT_ONE_TRY_MIN + 1; k++)
        tries += !run_one(&o, false, 9, 12);
    check_i("a try of all threads after the back-off (2 runs)", tries, 2);
    check_i("still one thread", o.one, 1);
    group_end();

    group_begin("tries skipped (the processors near): all threads, tries a back-off later");
    rt_one_thread_init(&o, RT_ONE_GAIN, false);
    for (int k = 0; k < 3; k++)
        check_i("runs 1-3: no try next", (run_one(&o, false, 9, 5), rt_one_thread_try_next(&o)),
                k == 2);
    rt_one_thread_skip_try(&o);
    check_i("run 4 skips its try: all", run_one(&o, false, 9, 5), 0);
    check_i("the next try a back-off later", o.next_try, 4 + RT_ONE_TRY_MIN);
    check_i("the back-off as it was", o.backoff, RT_ONE_TRY_MIN);
    check_i("no time on one thread", o.one_ns, 0);
    tries = 0;
    for (int k = 0; k < RT_ONE_TRY_MIN - 1; k++)
        tries += run_one(&o, false, 9, 5);
    check_i("none until then", tries, 0);
    check_i("then a try next", rt_one_thread_try_next(&o), 1);
    check_i("which runs on one thread", run_one(&o, false, 9, 5), 1);
    check_i("nothing to skip now", (rt_one_thread_skip_try(&o), o.next_try), 4 + 5 * RT_ONE_TRY_MIN);
    group_end();

    group_begin("on one thread: the tries of all threads are not skipped");
    rt_one_thread_init(&o, RT_ONE_GAIN, false);
    for (int k = 0; k < 7; k++)
        run_one(&o, false, 9, 12);
    check_i("one thread", o.one, 1);
    for (int k = 7; k < 6 + RT_ONE_TRY_MIN; k++)   /* runs 8-14: the try is run 15 */
        run_one(&o, false, 9, 12);
    check_i("a try of all threads next: not one of one thread", rt_one_thread_try_next(&o), 0);
    rt_one_thread_skip_try(&o);
    check_i("the try runs on all threads", run_one(&o, false, 9, 12), 0);
    group_end();

    group_begin("not faster by the gain: all threads");
    rt_one_thread_init(&o, RT_ONE_GAIN, false);
    for (int k = 0; k < 5; k++)
        run_one(&o, false, 98, 100);
    check_i("one thread 2% faster", run_one(&o, false, 98, 100), 0);
    group_end();

    group_begin("the temps apart (RT_APART_GAIN): kept when 2% faster");
    check_i("runs 4-5: the try, apart", apart_try(&o, 97, 97), 2);
    check_i("3% faster: kept", o.one, 1);
    check_i("then apart", run_one(&o, false, 97, 100), 1);
    ones = 0;
    for (int k = 0; k < 3 * RT_ONE_TRY_MIN; k++)
        ones += run_one(&o, false, 103, 100);
    check_i("the plan faster since: back to it at the next try", o.one, 0);
    check_i("after some runs apart", ones > 2 && ones < 3 * RT_ONE_TRY_MIN - 2, 1);
    check_i("as fast: the try's second run too", apart_try(&o, 100, 100), 2);
    check_i("the plan kept", o.one, 0);
    check_i("then the plan", run_one(&o, false, 100, 100), 0);
    check_i("1% faster: both runs", apart_try(&o, 99, 99), 2);
    check_i("the plan kept", o.one, 0);
    check_i("the try's first run 10% slower (the bytes cold): both", apart_try(&o, 110, 97), 2);
    check_i("its second 3% faster: kept", o.one, 1);
    group_end();

    /* The machine's speed moves by a third for seconds on the virtual
     * machine of bench/results/steady_s27.txt, under runs of 30-250 ms: a
     * try must win against the runs beside it, not only against times of
     * another phase. */
    group_begin("a try that won by a faster phase: the runs after it refute it");
    rt_one_thread_init(&o, RT_APART_GAIN, true);
    for (int k = 0; k < 3; k++)
        run_one(&o, false, 110, 130);   /* the plan, in a slow phase */
    check_i("the try (runs 4-5), the machine faster now", run_one(&o, false, 110, 130) +
            run_one(&o, false, 110, 130), 2);
    check_i("it beat the runs before it: not decided", o.confirming, RT_ONE_CONFIRM_RUNS);
    check_i("run 6 on the plan, stalled", run_one(&o, false, 110, 160), 0);
    check_i("run 7 on the plan, faster in this phase", run_one(&o, false, 110, 105), 0);
    check_i("refuted (by the faster of the two): the plan", o.one, 0);
    check_i("a try that changed nothing: back-off doubled", o.backoff, 2 * RT_ONE_TRY_MIN);
    check_i("then the plan", run_one(&o, false, 110, 105), 0);
    group_end();

    group_begin("a fast time of an earlier try does not decide: the run before refutes");
    rt_one_thread_init(&o, RT_APART_GAIN, true);
    for (int k = 0; k < 3; k++)
        run_one(&o, false, 90, 100);
    run_one(&o, false, 90, 100);
    run_one(&o, false, 90, 100);   /* the try: 90 (a fast phase) */
    run_one(&o, false, 90, 120);   /* a stalled run */
    check_i("refuted by a run after it (88, the same phase)", run_one(&o, false, 90, 88), 0);
    check_i("the plan", o.one, 0);
    while (!rt_one_thread_try_next(&o))
        run_one(&o, false, 100, 100);
    check_i("the next try: both runs apart", run_one(&o, false, 100, 100) +
            run_one(&o, false, 100, 100), 2);
    check_i("the time apart still near the old one", o.one_ns / MS < 95, 1);
    check_i("but not faster than the run before: decided at once", o.confirming, 0);
    check_i("the plan", o.one, 0);
    check_i("back-off doubled again", o.backoff, 4 * RT_ONE_TRY_MIN);
    group_end();

    group_begin("one thread: a try is confirmed by the runs after it on all threads");
    rt_one_thread_init(&o, RT_ONE_GAIN, false);
    for (int k = 0; k < 3; k++)
        run_one(&o, false, 60, 70);
    check_i("the try, 2 runs on one thread, the machine faster now", run_one(&o, false, 60, 70) +
            run_one(&o, false, 60, 70), 2);
    check_i("all threads again, as fast", run_one(&o, false, 60, 58), 0);
    check_i("and again", run_one(&o, false, 60, 59), 0);
    check_i("refuted: all threads", o.one, 0);
    check_i("and on", run_one(&o, false, 60, 58), 0);
    group_end();

    group_begin("a run another process delayed does not decide");
    rt_one_thread_init(&o, RT_ONE_GAIN, false);
    run_one(&o, false, 9, 5);
    check_i("run 2, delayed 10 times", run_one(&o, false, 9, 50), 0);
    check_i("run 3", run_one(&o, false, 9, 5), 0);
    check_i("the time on all threads: the faster", o.all_ns[0] / MS, 5);
    check_i("the try: 9 ms against 5, all threads", (run_one(&o, false, 9, 5), o.one), 0);
    run_one(&o, false, 9, 50);
    check_i("a delayed run later: up a quarter of the way", o.all_ns[0] / MS, 16);
    run_one(&o, false, 9, 5);
    check_i("a fast run: down at once", o.all_ns[0] / MS, 5);
    group_end();

    group_begin("the machine stays slower on all threads: one thread at the next try");
    rt_one_thread_init(&o, RT_ONE_GAIN, false);
    for (int k = 0; k < 6; k++)
        run_one(&o, false, 9, 5);
    check_i("the first try lost far: the next at run 36", o.next_try, 4 + 4 * RT_ONE_TRY_MIN);
    ones = 0;
    for (int k = 0; k < 5 * RT_ONE_TRY_MIN; k++)
        ones += run_one(&o, false, 9, 12);
    check_i("now on one thread", o.one, 1);
    /* runs 36-37 the try, 38-39 on all threads confirm it, 40-46 one
     * thread, 47 a try of all threads (a back-off after run 39) */
    check_i("from the next try on (run 36, confirmed by runs 38-39)", ones, 2 + 7);
    group_end();

    group_begin("the way of waiting changes: all threads until measured");
    rt_one_thread_init(&o, RT_ONE_GAIN, false);
    for (int k = 0; k < 7; k++)
        run_one(&o, true, 9, 12);   /* asleep: one thread wins (runs 4-5, confirmed 6-7) */
    check_i("asleep: one thread", o.one, 1);
    check_i("spinning, no time yet: all threads", run_one(&o, false, 9, 5), 0);
    check_i("spinning is faster: all threads", run_one(&o, false, 9, 5), 0);
    check_i("asleep again: all threads until the next try", run_one(&o, true, 9, 12), 0);
    ones = 0;
    for (int k = 0; k < 2 * RT_ONE_TRY_MIN; k++)
        ones += run_one(&o, true, 9, 12);
    check_i("after it one thread", o.one, 1);
    group_end();
}

int main(void)
{
    one_thread_tests();

    group_begin("the processors' distance without an OpenMP runtime loaded: unknown");
    check_i("round trip", (int)rt_threads_round_trip_ns(), -1);
    group_end();

    group_begin("a quiet machine: the threads spin");
    rt_threads_state s = {0};
    check_i("first call", look(&s, 0, 0, 0), 0);
    check_i("no waiting", look(&s, 5, 0, 0), 0);
    check_i("a little waiting (10%)", look(&s, 10, 1, 3), 0);
    group_end();

    group_begin("a quiet machine: one window that loses does not put the threads to sleep");
    /* a task that woke on a processor the threads spin on, another
     * process's exit: the threads waited in the run queue for one window */
    s = (rt_threads_state){0};
    look(&s, 0, 0, 0);
    check_i("waiting 40% of a window: still spinning", look(&s, 5, 4, 0), 0);
    check_i("it lost", s.suspect, 1);
    check_i("the next window without waiting: spinning", look(&s, 10, 4, 0), 0);
    check_i("forgotten", s.suspect, 0);
    check_i("another such window later", look(&s, 15, 8, 0), 0);
    check_i("spinning as fast as asleep after it", lookc(&s, 20, 8, 0, 5, 5, 5), 0);
    check_i("the back-off as it was", s.backoff_ns / MS, 100);
    group_end();

    group_begin("real-time threads: runnable processes are no competitors");
    s = (rt_threads_state){0};
    rt_threads_reading rt = {.now_ns = 0, .others = 9, .cpus = 2, .realtime = true};
    check_i("first call, 9 others runnable: spinning", rt_threads_decide(&s, &rt, 2), 0);
    rt = (rt_threads_reading){.now_ns = 5 * MS, .others = 9, .cpus = 2, .call_ns = 5 * MS,
                              .realtime = true};
    check_i("no waiting", rt_threads_decide(&s, &rt, 2), 0);
    /* another real-time process holds a processor */
    rt = (rt_threads_reading){.now_ns = 10 * MS, .wait_ns = 5 * MS, .others = 9, .cpus = 2,
                              .call_ns = 5 * MS, .realtime = true};
    check_i("waiting half the time: lost", rt_threads_decide(&s, &rt, 2), 0);
    rt = (rt_threads_reading){.now_ns = 15 * MS, .wait_ns = 10 * MS, .others = 9, .cpus = 2,
                              .call_ns = 5 * MS, .realtime = true};
    check_i("and the next window: asleep", rt_threads_decide(&s, &rt, 2), 1);
    rt = (rt_threads_reading){.now_ns = 116 * MS, .wait_ns = 10 * MS, .others = 9, .cpus = 2,
                              .realtime = true};
    check_i("a try after the least back-off, 9 runnable", rt_threads_decide(&s, &rt, 2), 0);
    group_end();

    group_begin("one competitor at the first call: the waiting tells");
    s = (rt_threads_state){0};
    check_i("first call", look(&s, 0, 0, 1), 0);
    check_i("no waiting (a niced one)", look(&s, 5, 0, 1), 0);
    check_i("waiting", look(&s, 10, 3, 1), 0);
    check_i("waiting again: asleep", look(&s, 15, 6, 1), 1);
    check_i("the least back-off", s.backoff_ns / MS, 100);
    check_i("before it", look(&s, 110, 6, 1), 1);
    check_i("the try", look(&s, 116, 6, 1), 0);
    check_i("its calls ran slower than asleep: the try goes on", lookc(&s, 121, 9, 1, 5, 5, 4), 0);
    check_i("still trying", s.probing, 1);
    check_i("and in the next window: refuted", lookc(&s, 126, 12, 1, 5, 5, 4), 1);
    check_i("a refuted try backs off further", s.backoff_ns / MS, 200);
    group_end();

    group_begin("a crowded machine at the first call: asleep, tries once soon");
    s = (rt_threads_state){0};
    check_i("first call", look(&s, 0, 0, 3), 1);
    check_i("still there", lookc(&s, 5, 2, 3, 5, 0, 0), 1);
    check_i("the calls have times asleep: a try", lookc(&s, 21, 4, 3, 5, 0, 0), 0);
    /* low-weight processes: the threads wait much, but run faster */
    check_i("faster than asleep despite waiting 40%", lookc(&s, 26, 8, 3, 5, 5, 9), 0);
    check_i("stays", lookc(&s, 31, 12, 4, 5, 5, 9), 0);
    check_i("back-off reset", s.backoff_ns / MS, 100);
    check_i("a competitor: slower than asleep", lookc(&s, 36, 14, 3, 5, 5, 4), 0);
    check_i("in the next window too: asleep", lookc(&s, 41, 16, 3, 5, 5, 4), 1);
    check_i("no try before the least back-off", lookc(&s, 100, 16, 3, 5, 5, 5), 1);
    check_i("after it, no second try while 3 others are runnable",
            lookc(&s, 142, 16, 3, 5, 5, 5), 1);
    check_i("try when 2 are", lookc(&s, 147, 16, 2, 5, 5, 5), 0);
    group_end();

    group_begin("a try only the waiting refutes backs off too (no ping-pong)");
    s = (rt_threads_state){0};
    check_i("first call", look(&s, 0, 0, 9), 1);
    check_i("the first try at 20 ms", lookc(&s, 20, 0, 9, 20, 0, 0), 0);
    check_i("no times asleep for its calls, waiting 50%", lookc(&s, 40, 20, 9, 20, 0, 0), 0);
    check_i("and in the next window: refuted", lookc(&s, 60, 40, 9, 20, 0, 0), 1);
    check_i("back-off", s.backoff_ns / MS, 200);
    check_i("no try 20 ms later", lookc(&s, 80, 40, 9, 20, 0, 0), 1);
    group_end();

    group_begin("a few calls that ran asleep do not decide");
    s = (rt_threads_state){0};
    look(&s, 0, 0, 0);
    check_i("none compared, no waiting", lookc(&s, 5, 0, 1, 5, 0, 0), 0);
    check_i("one third compared, slower", lookc(&s, 10, 0, 1, 6, 2, 1), 0);
    check_i("half compared, slower", lookc(&s, 15, 0, 1, 6, 3, 2), 0);
    check_i("and the next window: asleep", lookc(&s, 20, 0, 1, 6, 3, 2), 1);
    s = (rt_threads_state){0};
    look(&s, 0, 0, 0);
    check_i("within RT_THREADS_SLOWER", lookc(&s, 5, 0, 1, 21, 21, 20), 0);
    check_i("beyond it", lookc(&s, 10, 0, 1, 23, 23, 20), 0);
    check_i("twice: asleep", lookc(&s, 15, 0, 1, 23, 23, 20), 1);
    group_end();

    group_begin("one stalled call does not decide alone (real-time throttling)");
    s = (rt_threads_state){0};
    lookl(&s, 0, 0, 0, 0, 0);
    check_i("a call stalled 50 ms", lookl(&s, 55, 50, 55, 55, 5), 0);
    check_i("the next window as before", lookl(&s, 60, 50, 5, 5, 5), 0);
    check_i("another stall later", lookl(&s, 115, 100, 55, 55, 5), 0);
    check_i("the back-off untouched", s.backoff_ns / MS, 100);
    check_i("slower again: busy", lookl(&s, 120, 100, 6, 6, 5), 1);
    s = (rt_threads_state){0};
    lookl(&s, 0, 0, 0, 0, 0);
    check_i("no times, waiting in one stalled call", lookl(&s, 55, 50, 55, 0, 0), 0);
    check_i("and in the next window's", lookl(&s, 110, 100, 55, 0, 0), 1);
    group_end();

    group_begin("slower while spinning: asleep, tries again with a growing back-off");
    s = (rt_threads_state){0};
    look(&s, 0, 0, 0);
    check_i("slower", lookc(&s, 5, 3, 1, 5, 5, 2), 0);
    check_i("slower twice", lookc(&s, 10, 6, 1, 5, 5, 2), 1);
    check_i("before the back-off", look(&s, 50, 6, 1), 1);
    check_i("try at 110 ms", look(&s, 110, 6, 1), 0);
    check_i("slower", lookc(&s, 115, 9, 1, 5, 5, 2), 0);
    check_i("refuted", lookc(&s, 120, 12, 1, 5, 5, 2), 1);
    check_i("back-off doubled", s.backoff_ns / MS, 200);
    check_i("no try at 250 ms", look(&s, 250, 12, 1), 1);
    check_i("try at 320 ms", look(&s, 320, 12, 1), 0);
    lookc(&s, 325, 15, 1, 5, 5, 2);
    check_i("refuted again", lookc(&s, 330, 18, 1, 5, 5, 2), 1);
    check_i("back-off doubled again", s.backoff_ns / MS, 400);
    check_i("try at 730 ms", look(&s, 730, 18, 1), 0);
    check_i("one window slower", lookc(&s, 735, 21, 1, 5, 5, 2), 0);
    check_i("the next as fast as asleep: confirmed", lookc(&s, 740, 21, 1, 5, 5, 5), 0);
    check_i("back-off reset", s.backoff_ns / MS, 100);
    check_i("the try is over", s.probing, 0);
    group_end();

    group_begin("the back-off stops growing");
    s = (rt_threads_state){0};
    look(&s, 0, 0, 0);
    int64_t t = 5, w = 5;
    lookc(&s, t, w, 1, 5, 5, 1);
    lookc(&s, t += 5, w, 1, 5, 5, 1);   /* busy */
    for (int i = 0; i < 20; i++) {
        t += s.backoff_ns / MS;
        look(&s, t, w, 1);   /* try */
        lookc(&s, t += 5, w += 5, 1, 5, 5, 1);
        lookc(&s, t += 5, w += 5, 1, 5, 5, 1);   /* refuted */
    }
    check_i("back-off", s.backoff_ns, RT_THREADS_PROBE_MAX_NS);
    check_i("busy", s.busy, 1);
    group_end();

    group_begin("free processors: a try after the least back-off");
    s = (rt_threads_state){0};
    check_i("first call", look(&s, 0, 0, 5), 1);
    check_i("the first try at 20 ms", lookc(&s, 20, 0, 5, 5, 0, 0), 0);
    lookc(&s, 25, 0, 5, 5, 5, 2);
    check_i("refuted by the times", lookc(&s, 30, 0, 5, 5, 5, 2), 1);
    check_i("back-off", s.backoff_ns / MS, 200);
    check_i("no other process, but too soon", look(&s, 100, 0, 0), 1);
    check_i("no other process", look(&s, 131, 0, 0), 0);
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
