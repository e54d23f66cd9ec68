/* passes/serialize.c — a parallel loop with less work than starting and
 * joining its threads costs runs serially.
 *
 *     for o in 0..240 parallel {         for o in 0..240 {
 *       y[o] = ... x[c] * w[o, c] ...  ->  y[o] = ...
 *
 * A parallel loop costs a fork and a join: about 1 us while the threads
 * spin, about 30 us while they sleep (waking one takes the hypervisor on a
 * virtual machine), more when other processes hold the processors
 * (bench/results/par_s7.txt).  A loop whose whole work is a few
 * microseconds gains nothing from a second thread even spinning, and loses
 * tens of microseconds asleep: EfficientNet-B0's small squeeze-and-
 * excitation expansions (up to 20 x 480 multiply-adds, 2-4 us on one
 * thread) are such loops.
 *
 * The work of a loop is counted statically: every STORE, LET, EVAL and
 * ASSERT once per iteration (vector IR is not counted) of the loops around it (inside the parallel
 * loop and including it), both arms of an IF, a block's init as often as
 * its body.  A parallel loop whose count is at most SERIAL_MAX_WORK runs
 * serially; one with a bound that is not a constant stays parallel.  The
 * results do not change: a parallel loop computes the same elements in the
 * same order whichever thread runs an iteration.
 *
 * In -O2 it runs after prepack and the last simplify, on the kernels as
 * they will run: earlier, a weight packing inside a large kernel's
 * parallel loop counted towards that loop, prepack then moved it into a
 * load function of its own with the loop still parallel, and -O2 run on
 * the printed IR serialized that load function (cli/roundtrip on
 * ResNet-18).  Nothing after it changes a loop's count (vector IR is not
 * counted), so -O2 on its own printed IR leaves every loop as it was.
 */
#include "passes/passes.h"
#include "passes/work.h"

/* Statement executions up to which a parallel loop runs serially, measured
 * on EfficientNet-B0's squeeze-and-excitation expansions at -O2 (one
 * thread, a 2-core EPYC): counts 5760-6656 took 2.0-2.7 us, 19712-21120
 * took 2.1-3.8 us (a second spinning thread would save at most what its
 * fork and join cost), the next larger parallel loops (32928 and up) 5 us
 * and more. */
#define SERIAL_MAX_WORK 24576

/* Stores up to which a border fill runs serially even before a parallel
 * loop writing the same buffer: GoogLeNet's 1x1 convolutions to 16-32
 * channels on 14x14 and 28x28 fill 1920-3712 border elements, in about
 * what starting and joining the threads costs. */
#define FILL_MAX_WORK 4096

/* a + b, or cap + 1 past cap (the count needs no more) */
static int64_t add_capped(int64_t a, int64_t b, int64_t cap)
{
    return a > cap || b > cap || a + b > cap ? cap + 1 : a + b;
}

static int64_t lanes(const ir_expr *x)
{
    return x && x->lanes > 1 ? x->lanes : 1;
}

/* (passes/work.h) */
int64_t pass_stmt_work(const ir_stmt *s, int64_t cap)
{
    if (!s)
        return 0;
    int64_t w = 0, v;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->nbody && w <= cap; i++) {
            if ((v = pass_stmt_work(s->body[i], cap)) < 0)
                return -1;
            w = add_capped(w, v, cap);
        }
        return w;
    case IR_S_FOR: {
        /* (a stepped loop is vector IR: not counted) */
        if (!s->lo || !s->hi || s->lo->kind != IR_INT || s->hi->kind != IR_INT || s->step > 1)
            return -1;
        int64_t step = ir_for_step(s);
        int64_t trips = s->hi->ival > s->lo->ival ? (s->hi->ival - s->lo->ival + step - 1) / step
                                                  : 0;
        if (trips == 0)
            return 0;
        if ((v = pass_stmt_work(s->nbody > 0 ? s->body[0] : NULL, cap)) < 0)
            return -1;
        return v > cap / trips ? cap + 1 : v * trips;
    }
    case IR_S_IF:
        if ((w = pass_stmt_work(s->nbody > 0 ? s->body[0] : NULL, cap)) < 0 ||
            (v = pass_stmt_work(s->orelse, cap)) < 0)
            return -1;
        return add_capped(1, add_capped(w, v, cap), cap);
    case IR_S_BLOCK:
        if ((w = pass_stmt_work(s->init, cap)) < 0 ||
            (v = pass_stmt_work(s->nbody > 0 ? s->body[0] : NULL, cap)) < 0)
            return -1;
        return add_capped(w, v, cap);
    case IR_S_LET:
        if ((v = pass_stmt_work(s->nbody > 0 ? s->body[0] : NULL, cap)) < 0)
            return -1;
        return lanes(s->value) > 1 ? -1 : add_capped(1, v, cap);
    case IR_S_STORE:
    case IR_S_EVAL:
        /* vector IR (read back after vectorize): not counted, the loop
         * stays as the pass left it the first time */
        return lanes(s->value) > 1 ? -1 : 1;
    case IR_S_ASSERT:
    case IR_S_PREFETCH:
        return 1;
    default:   /* ALLOC and the like: what they hold */
        for (int i = 0; i < s->nbody && w <= cap; i++) {
            if ((v = pass_stmt_work(s->body[i], cap)) < 0)
                return -1;
            w = add_capped(w, v, cap);
        }
        return w;
    }
}

/* Whether every store under s writes a constant (a border fill). */
static bool stores_constants(const ir_stmt *s)
{
    if (!s)
        return true;
    if (s->kind == IR_S_STORE)
        return s->value->kind == IR_INT || s->value->kind == IR_FLOAT;
    if (s->kind == IR_S_LET || s->kind == IR_S_EVAL || s->kind == IR_S_ASSERT)
        return false;
    for (int i = 0; i < s->nbody; i++)
        if (!stores_constants(s->body[i]))
            return false;
    return stores_constants(s->orelse) && stores_constants(s->init);
}

/* Whether a parallel loop under s other than `except` stores to b. */
static bool parallel_store(const ir_stmt *s, const ir_buffer *b, const ir_stmt *except, bool in_par)
{
    if (!s || s == except)
        return false;
    in_par |= s->kind == IR_S_FOR && s->for_kind == IR_FOR_PARALLEL;
    if (s->kind == IR_S_STORE)
        return in_par && s->buf == b;
    for (int i = 0; i < s->nbody; i++)
        if (parallel_store(s->body[i], b, except, in_par))
            return true;
    return parallel_store(s->orelse, b, except, in_par) || parallel_store(s->init, b, except, in_par);
}

/* Whether every buffer a store under s writes is also stored by another
 * parallel loop of the function (body). */
static bool fills_for_parallel(const ir_stmt *s, const ir_stmt *body, const ir_stmt *loop)
{
    if (!s)
        return true;
    if (s->kind == IR_S_STORE)
        return parallel_store(body, s->buf, loop, false);
    for (int i = 0; i < s->nbody; i++)
        if (!fills_for_parallel(s->body[i], body, loop))
            return false;
    return fills_for_parallel(s->orelse, body, loop) && fills_for_parallel(s->init, body, loop);
}

/* Every parallel loop under s (outermost first; nested ones are left to
 * the emitter, which runs them serially anyway).  In the first round
 * (fills false) a loop that stores only constants waits for the second:
 * a border fill (passes/layout.c) whose buffer a parallel loop of the
 * kernel writes afterwards keeps its threads above FILL_MAX_WORK, so that
 * each thread fills the lines it then writes (one thread filling them
 * all, the other's stores take those lines from its cache: a 1x1
 * convolution on 14x14 of 320 channels, 185 -> 166 us on two threads);
 * other fills are counted as any loop. */
static void visit(ir_stmt *s, const ir_stmt *body, bool fills)
{
    if (!s)
        return;
    if (s->kind == IR_S_FOR && s->for_kind == IR_FOR_PARALLEL) {
        bool fill = stores_constants(s);
        if (fill != fills)
            return;
        int64_t w = pass_stmt_work(s, SERIAL_MAX_WORK);
        if (fill && (w < 0 || w > FILL_MAX_WORK) && fills_for_parallel(s, body, s))
            return;
        if (w >= 0 && w <= SERIAL_MAX_WORK)
            s->for_kind = IR_FOR_SERIAL;
        return;
    }
    for (int i = 0; i < s->nbody; i++)
        visit(s->body[i], body, fills);
    visit(s->orelse, body, fills);
    visit(s->init, body, fills);
}

bool pass_serialize(ir_module *m, diag *d)
{
    (void)d;
    for (int f = 0; f < m->nfuncs; f++) {
        visit(m->funcs[f]->body, m->funcs[f]->body, false);
        visit(m->funcs[f]->body, m->funcs[f]->body, true);
    }
    return true;
}
