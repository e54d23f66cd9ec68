/* passes/schedule/int8.c — int8 contractions on dot-product instructions.
 *
 * An int8 contraction accumulating in i32, y += i32(x) * i32(w), gets the
 * f32 class of schedule from passes/schedule/auto.c (a register tile of
 * vectors along the output's columns, the column operand packed in panels).
 * On a target with AVX-512 VNNI it also splits one reduce loop k by 4 and
 * puts the 4 innermost, below the vector loop:
 *
 *   reorder(..., k_o, ..., i_i, j_i, k_i)      packed panel wp[k_o][..][j_i][k_i]
 *
 * The packed weights then hold each column's 4 consecutive k together
 * ([columns][4] bytes, 4 x 16 = 64 per vector); ir/vectorize.c folds the
 * k_i loop into a sum of 4 products per lane, and codegen/emit_c.c makes it
 * vpdpbusd: 4 multiply-adds per i32 lane against one broadcast of the 4
 * activation bytes.  The loop chosen is the one the activation runs along
 * contiguously (a linear layer's input features: one 4-byte read), else the
 * outermost that both operands use (a convolution's input channels).
 */
#include "passes/schedule/int8.h"
#include "passes/passes.h"
#include "passes/schedule/schedule.h"
#include "ir/target.h"

#include <string.h>

/* The byte load under a cast to i32, or NULL. */
static const ir_expr *byte_load(const ir_expr *x)
{
    if (!x || x->kind != IR_CAST || x->dtype != IR_I32 || !x->a || x->a->kind != IR_LOAD)
        return NULL;
    return x->a->dtype == IR_I8 || x->a->dtype == IR_U8 ? x->a : NULL;
}

static bool uses_index(const ir_expr *ld, const ir_var *v, bool last_only)
{
    for (int i = last_only ? ld->nargs - 1 : 0; i >= 0 && i < ld->nargs; i++)
        if (ir_expr_uses_var(ld->args[i], v))
            return true;
    return false;
}

/* Whether the target has vpdpbusd on vectors of `lanes` i32 (a processor
 * of this machine's with AVX-512 VNNI, compiled for it: the native target). */
static bool has_vnni(int lanes)
{
    const cg_target *t = pass_target();
    cg_target native;
    if (!t) {
        cg_target_native(&native);
        t = &native;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (strcmp(t->march, "native") != 0 || !__builtin_cpu_supports("avx512vnni"))
        return false;
    return lanes * 4 <= t->vector_bytes && (lanes == 16 || __builtin_cpu_supports("avx512vl"));
#else
    (void)lanes;
    return false;
#endif
}

int sch_int8_dot4_loop(const ir_stmt *b, ir_stmt *const *loops, const int *kind, int n,
                       const ir_expr *prod, const ir_expr *V, int lanes)
{
    if (!b || !prod || prod->kind != IR_MUL || !V || n < 1 || (lanes != 8 && lanes != 16))
        return -1;
    const ir_expr *l1 = byte_load(prod->a), *l2 = byte_load(prod->b);
    if (!l1 || !l2 || (l1 != V && l2 != V))
        return -1;
    const ir_expr *U = l1 == V ? l2 : l1;
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (kind[i] != 3 || sch_extent(loops[i]) < 4 || sch_extent(loops[i]) % 4 != 0)
            continue;
        const ir_var *v = NULL;
        for (int k = 0; k < b->niters && !v; k++)
            if (b->iters[k].binding->kind == IR_VAR && b->iters[k].binding->var == loops[i]->var)
                v = b->iters[k].var;
        if (!v || !uses_index(U, v, false) || !uses_index(V, v, false))
            continue;
        if (uses_index(U, v, true))
            return has_vnni(lanes) ? i : -1;   /* the activation's 4 bytes are contiguous */
        if (best < 0)
            best = i;
    }
    return best >= 0 && has_vnni(lanes) ? best : -1;
}
