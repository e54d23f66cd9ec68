/* passes/vectorize.c — the `vectorize` pass: every loop marked `vectorized`
 * with constant bounds becomes vector IR (ir/vectorize.c says how: chunks
 * stepping by the lanes, ramps, broadcasts, lanes(...) for values computed
 * lane by lane, and a scalar tail), for the target's vector width.
 *
 *   for j in 0..21 vectorized {        for j in 0..16 step 8 vectorized { B(8 lanes) }
 *     B                           ->   for j in 16..20 step 4 vectorized { B(4 lanes) }
 *   }                                  for j in 20..21 { B }
 *
 * It runs after every other pass and every analysis (they read scalar IR:
 * blocks, unit-step loops): every -O level runs it first in its emission
 * pipeline (pass_emit_pipeline, then simplify from -O1) on the copy of the
 * module that is printed (pass_lower_for_emit).  A loop it cannot
 * vectorize keeps its kind, and the inner loops of such a loop are
 * visited; vector IR (loops stepping by the lanes) it leaves alone, so a
 * printed module read back and optimized again prints the same.
 */
#include "ir/target.h"
#include "passes/passes.h"

static int target_vector_bytes(void)
{
    const cg_target *t = pass_target();
    return t && t->vector_bytes ? t->vector_bytes : 16;
}

static ir_stmt *walk(ir_module *m, ir_stmt *st)
{
    if (!st)
        return NULL;
    if (st->kind == IR_S_FOR && st->for_kind == IR_FOR_VECTORIZED) {
        ir_stmt *v = ir_vectorize_loop(m, st, target_vector_bytes());
        if (v)
            return v;
    }
    for (int i = 0; i < st->nbody; i++)
        st->body[i] = walk(m, st->body[i]);
    st->init = walk(m, st->init);
    st->orelse = walk(m, st->orelse);
    return st;
}

bool pass_vectorize(ir_module *m, diag *d)
{
    (void)d;
    for (int i = 0; i < m->nfuncs; i++)
        if (m->funcs[i]->body)
            m->funcs[i]->body = walk(m, m->funcs[i]->body);
    return true;
}
