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
#include "ir/narrow.h"
#include "ir/target.h"

#include <string.h>

/* An activation operand: the byte load under a cast to i32, less an
 * integer zero point or not (the C backend subtracts z * sum w, with the
 * weights i8); NULL otherwise. */
static const ir_expr *byte_load(const ir_expr *x);

static const ir_expr *act_load(const ir_expr *x, const ir_expr *V)
{
    if (x && x->kind == IR_SUB && x->b && x->b->kind == IR_INT && x->dtype == IR_I32)
        return V && V->dtype == IR_I8 ? byte_load(x->a) : NULL;
    return byte_load(x);
}

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
    if (l1 == V)
        l2 = act_load(prod->b, V);
    else if (l2 == V)
        l1 = act_load(prod->a, V);
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

/* A bf16 load under a cast to f32, or NULL. */
static const ir_expr *bf16_load(const ir_expr *x)
{
    if (!x || x->kind != IR_CAST || x->dtype != IR_F32 || !x->a || x->a->kind != IR_LOAD)
        return NULL;
    return x->a->dtype == IR_BF16 ? x->a : NULL;
}

/* Whether the target has vdpbf16ps on vectors of `lanes` f32 (AVX-512
 * BF16 on this machine's processor, compiled for it: the native target). */
static bool has_bf16(int lanes)
{
    const cg_target *t = pass_target();
    cg_target native;
    if (!t) {
        cg_target_native(&native);
        t = &native;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (strcmp(t->march, "native") != 0 || !__builtin_cpu_supports("avx512bf16"))
        return false;
    return lanes * 4 <= t->vector_bytes && (lanes == 16 || __builtin_cpu_supports("avx512vl"));
#else
    (void)lanes;
    return false;
#endif
}

int sch_bf16_pair_loop(const ir_stmt *b, ir_stmt *const *loops, const int *kind, int n,
                       const ir_expr *prod, const ir_expr *V, int lanes)
{
    if (!b || !prod || prod->kind != IR_MUL || !V || n < 1 || (lanes != 8 && lanes != 16) ||
        !b->nbody || !b->body[0] || b->body[0]->kind != IR_S_STORE ||
        b->body[0]->buf->dtype != IR_F32)
        return -1;
    const ir_expr *l1 = bf16_load(prod->a), *l2 = bf16_load(prod->b);
    if (!l1 || !l2 || (l1 != V && l2 != V))
        return -1;
    const ir_expr *U = l1 == V ? l2 : l1;
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (kind[i] != 3 || sch_extent(loops[i]) < 2 || sch_extent(loops[i]) % 2 != 0)
            continue;
        const ir_var *v = NULL;
        for (int k = 0; k < b->niters && !v; k++)
            if (b->iters[k].binding->kind == IR_VAR && b->iters[k].binding->var == loops[i]->var)
                v = b->iters[k].var;
        if (!v || !uses_index(U, v, false) || !uses_index(V, v, false))
            continue;
        if (uses_index(U, v, true))
            return has_bf16(lanes) ? i : -1;   /* the pair's 2 values are adjacent */
        if (best < 0)
            best = i;
    }
    return best >= 0 && has_bf16(lanes) ? best : -1;
}

int sch_int8_group_loop(const ir_stmt *b, ir_stmt *const *loops, const int *kind, int n,
                        const ir_expr *prod, const ir_expr *V, int lanes, int *group)
{
    int g = sch_int8_dot4_loop(b, loops, kind, n, prod, V, lanes);
    *group = 4;
    if (g < 0) {
        g = sch_bf16_pair_loop(b, loops, kind, n, prod, V, lanes);
        *group = 2;
    }
    return g;
}

/* The load of x under a cast to i32 and a padding select, or NULL. */
static const ir_expr *guarded_byte_load(const ir_expr *e, const ir_buffer *x)
{
    if (e && e->kind == IR_SUB && e->b && e->b->kind == IR_INT)   /* a zero point */
        e = e->a;
    if (!e || e->kind != IR_CAST || e->dtype != IR_I32 || !e->a)
        return NULL;
    e = e->a;
    if (e->kind == IR_SELECT)
        e = e->a;
    return e && e->kind == IR_LOAD && e->buf == x && (x->dtype == IR_I8 || x->dtype == IR_U8)
               ? e : NULL;
}

typedef struct pad_find {
    const ir_buffer *x;
    int dim;
} pad_find;

static bool pad_visit(const ir_stmt *s, void *p)
{
    pad_find *w = p;
    if (w->dim >= 0 || s->kind != IR_S_BLOCK || !s->init || s->nbody < 1)
        return w->dim < 0;
    const ir_stmt *st = s->body[0];
    if (!st || st->kind != IR_S_STORE || st->buf->dtype != IR_I32 || !st->value ||
        st->value->kind != IR_ADD || st->value->b->kind != IR_MUL)
        return true;
    const ir_expr *prod = st->value->b;
    const ir_expr *X = guarded_byte_load(prod->a, w->x), *W = byte_load(prod->b);
    if (!X) {
        X = guarded_byte_load(prod->b, w->x);
        W = byte_load(prod->a);
    }
    if (!X || !W)
        return true;
    /* the outermost reduce variable that both read, with a multiple of 4
     * values, indexing one dimension of x */
    for (int i = 0; i < s->niters; i++) {
        const ir_itervar *it = &s->iters[i];
        if (it->kind != IR_ITER_REDUCE || it->extent % 4 != 0 || !uses_index(W, it->var, false))
            continue;
        int dim = -1, n = 0;
        for (int d = 0; d < X->nargs; d++)
            if (ir_expr_uses_var(X->args[d], it->var)) {
                dim = d;
                n++;
            }
        if (n == 1 && X->args[dim]->kind == IR_VAR) {
            w->dim = dim;
            return false;
        }
    }
    return true;
}

int sch_int8_pad_dim(const ir_func *f, const ir_buffer *x, int lanes)
{
    if (!f || !x || (lanes != 8 && lanes != 16) || !has_vnni(lanes))
        return -1;
    pad_find w = {x, -1};
    ir_stmt_walk(f->body, pad_visit, NULL, &w);
    return w.dim;
}

/* A byte load (i8 or u8) widened to i32, maybe read through a padding
 * select and less an integer zero point; NULL otherwise. */
static const ir_expr *widened_byte(const ir_expr *e)
{
    if (e && e->kind == IR_SUB && e->b && e->b->kind == IR_INT)   /* a zero point */
        e = e->a;
    if (!e || e->kind != IR_CAST || e->dtype != IR_I32 || !e->a)
        return NULL;
    e = e->a;
    if (e->kind == IR_SELECT && e->b && e->b->kind == IR_INT)
        e = e->a;
    return e && e->kind == IR_LOAD && (e->dtype == IR_I8 || e->dtype == IR_U8) ? e : NULL;
}

/* Y = Y + widened byte * widened byte, Y of i32: an int8 window sum (a
 * depthwise convolution of quantized values), whose lanes are i32
 * multiply-adds of widened bytes. */
static bool byte_products_sum(const ir_stmt *st)
{
    const ir_expr *v = st->value;
    return st->buf->dtype == IR_I32 && v && v->kind == IR_ADD && v->a && v->a->kind == IR_LOAD &&
           v->a->buf == st->buf && v->b && v->b->kind == IR_MUL && widened_byte(v->b->a) &&
           widened_byte(v->b->b);
}

/* Y = max(Y, X[..]) (or min) of bytes, maybe X read through a padding
 * select: a max pooling of quantized values (importer/ops_quant.c pools
 * the codes a QuantizeLinear after it makes), byte lanes compared as they
 * are. */
static bool byte_window_max(const ir_stmt *st)
{
    const ir_expr *v = st->value, *x = v ? v->b : NULL;
    if (x && x->kind == IR_SELECT && x->b && x->b->kind == IR_INT)
        x = x->a;
    return (st->buf->dtype == IR_U8 || st->buf->dtype == IR_I8) && v &&
           (v->kind == IR_MAX || v->kind == IR_MIN) && v->a && v->a->kind == IR_LOAD &&
           v->a->buf == st->buf && x && x->kind == IR_LOAD && x->dtype == st->buf->dtype;
}

bool sch_int8_vector_store(const ir_stmt *st)
{
    return st && st->kind == IR_S_STORE &&
           (ir_dtype_is_float(st->buf->dtype) || ir_narrowing_store(st) || byte_products_sum(st) ||
            byte_window_max(st));
}
