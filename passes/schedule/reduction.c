/* passes/schedule/reduction.c — decompose_reduction: a block's init moves
 * out of its reduce loops into a loop nest of its own, placed just before a
 * given loop, so the reduce loops run without the `first iteration?` test.
 *
 * The init nest keeps, of the loops from the given one down to the block,
 * those its spatial bindings use (and the guards between them); the other
 * loops are at their first value when the original init would run, so they
 * become their lower bounds, and the reduce bindings that depend on loops
 * outside become the nest's condition. */
#include <string.h>

#include "passes/passes.h"
#include "passes/schedule/schedule.h"

static bool uses_any(const ir_expr *x, ir_var **vars, int n)
{
    for (int i = 0; i < n; i++)
        if (ir_expr_uses_var(x, vars[i]))
            return true;
    return false;
}

bool sch_decompose_reduction(sch_ctx *c, const char *block, const char *loop)
{
    sch_path bp;
    if (!sch_find_block(c, block, &bp))
        return false;
    ir_stmt *b = *bp.slot[bp.n - 1];
    int at = -1;
    for (int k = 0; k < bp.n - 1; k++) {
        const ir_stmt *s = *bp.slot[k];
        if (s->kind == IR_S_FOR && strcmp(s->var->name, loop) == 0)
            at = k;
    }
    if (at < 0) {
        sch_path lp;
        if (sch_find_loop(c, loop, &lp))
            sch_error(c, "cannot decompose the reduction of block '%s' at loop '%s': the loop "
                      "does not enclose the block", block, loop);
        return false;
    }
    if (!b->init) {
        sch_error(c, "block '%s' has no init to decompose (it is not a reduction, or its init "
                  "was decomposed already)", block);
        return false;
    }
    ir_module *m = c->m;
    /* loops from `at` down: which are kept (used by a spatial binding) */
    ir_var *kept[128], *dropped[128];
    ir_expr *dropped_lo[128];
    int nkept = 0, ndropped = 0;
    for (int k = at; k < bp.n - 1; k++) {
        ir_stmt *s = *bp.slot[k];
        if (s->kind == IR_S_ALLOC) {
            sch_error(c, "cannot decompose the reduction of block '%s' at loop '%s': buffer "
                      "'%s' is allocated in between", block, loop, s->buf->name);
            return false;
        }
        if (s->kind != IR_S_FOR)
            continue;
        bool spatial = false;
        for (int i = 0; i < b->niters; i++)
            spatial |= b->iters[i].kind == IR_ITER_SPATIAL &&
                       ir_expr_uses_var(b->iters[i].binding, s->var);
        if (spatial)
            kept[nkept++] = s->var;
        else {
            dropped_lo[ndropped] = s->lo;
            dropped[ndropped++] = s->var;
        }
    }
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == IR_ITER_REDUCE && uses_any(b->iters[i].binding, kept, nkept)) {
            sch_error(c, "cannot decompose the reduction of block '%s' at loop '%s': reduce "
                      "variable '%s' depends on a loop that a spatial variable uses too", block,
                      loop, b->iters[i].var->name);
            return false;
        }
    /* new loop variables for the kept loops; dropped ones at their start */
    ir_var *from[256];
    ir_expr *to[256];
    int nsub = 0;
    for (int i = 0; i < nkept; i++) {
        from[nsub] = kept[i];
        to[nsub++] = ir_varref(m, ir_var_new(m, ir_sprintf(m->arena, "%s_init", kept[i]->name),
                                             kept[i]->dtype));
    }
    for (int i = 0; i < ndropped; i++) {
        from[nsub] = dropped[i];
        to[nsub++] = dropped_lo[i];
    }
    /* the init block: spatial iteration variables only */
    ir_itervar *iters = ir_alloc(m->arena, sizeof *iters * (size_t)b->niters);
    int niters = 0;
    ir_var *ivfrom[128];
    ir_expr *ivto[128];
    ir_expr *cond = NULL;
    for (int i = 0; i < b->niters; i++) {
        const ir_itervar *it = &b->iters[i];
        ir_expr *bind = ir_expr_subst(m, it->binding, from, to, nsub);
        if (it->kind == IR_ITER_REDUCE) {
            ir_expr *z = ir_binary(m, IR_EQ, bind, ir_int(m, 0));
            cond = cond ? ir_binary(m, IR_AND, cond, z) : z;
            ivfrom[i] = it->var;
            ivto[i] = ir_int(m, 0);
            continue;
        }
        ir_var *nv = ir_var_new(m, ir_sprintf(m->arena, "%s_init", it->var->name), it->var->dtype);
        iters[niters++] = (ir_itervar){nv, IR_ITER_SPATIAL, it->extent, bind};
        ivfrom[i] = it->var;
        ivto[i] = ir_varref(m, nv);
    }
    ir_stmt *init_body = ir_stmt_subst(m, b->init, ivfrom, ivto, b->niters);
    init_body = ir_stmt_subst(m, init_body, from, to, nsub);
    ir_stmt *nest = ir_block(m, ir_sprintf(m->arena, "%s_init", b->name), iters, niters, NULL,
                             init_body);
    /* rebuild the kept loops and guards, innermost first */
    for (int k = bp.n - 2; k >= at; k--) {
        ir_stmt *s = *bp.slot[k];
        if (s->kind == IR_S_FOR) {
            for (int i = 0; i < nkept; i++)
                if (kept[i] == s->var)
                    nest = ir_for(m, to[i]->var, ir_expr_subst(m, s->lo, from, to, nsub),
                                  ir_expr_subst(m, s->hi, from, to, nsub),
                                  s->for_kind == IR_FOR_PARALLEL ? IR_FOR_PARALLEL : IR_FOR_SERIAL,
                                  nest);
        } else if (s->kind == IR_S_IF && s->nbody > 0 && bp.slot[k + 1] == &s->body[0]) {
            nest = ir_if(m, ir_expr_subst(m, s->cond, from, to, nsub), nest, NULL);
        } else if (s->kind == IR_S_LET) {
            nest = ir_let(m, s->var, ir_expr_subst(m, s->value, from, to, nsub), nest);
        }
    }
    if (cond)
        nest = ir_if(m, cond, nest, NULL);
    b->init = NULL;
    ir_block_update_access(m, b);
    ir_stmt *seq = ir_seq_new(m);
    ir_seq_append(m, seq, nest);
    ir_seq_append(m, seq, *bp.slot[at]);
    *bp.slot[at] = seq;
    return true;
}
