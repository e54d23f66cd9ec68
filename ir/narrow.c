/* ir/narrow.c — stores that narrow a computed value to a small integer
 * (narrow.h). */
#include "ir/narrow.h"

bool ir_float_clamped(const ir_expr *x, double lo, double hi)
{
    if (!x || (x->kind != IR_MIN && x->kind != IR_MAX) || !x->b || x->b->kind != IR_FLOAT)
        return false;
    const ir_expr *in = x->a;
    if (!in || in->kind != (x->kind == IR_MIN ? IR_MAX : IR_MIN) || !in->b ||
        in->b->kind != IR_FLOAT)
        return false;
    double top = x->kind == IR_MIN ? x->b->fval : in->b->fval;
    double bottom = x->kind == IR_MIN ? in->b->fval : x->b->fval;
    return bottom >= lo && top <= hi && bottom <= top;
}

bool ir_narrowing_store(const ir_stmt *st)
{
    if (!st || st->kind != IR_S_STORE || !ir_dtype_is_small_int(st->buf->dtype))
        return false;
    const ir_expr *v = st->value;
    int64_t lo, hi;
    if (!v || v->kind != IR_CAST || v->dtype != st->buf->dtype || !v->a)
        return false;
    if (v->a->dtype == IR_I32)
        return true;
    return (v->a->dtype == IR_F32 || v->a->dtype == IR_F64) &&
           ir_dtype_int_range(v->dtype, &lo, &hi) && ir_float_clamped(v->a, (double)lo, (double)hi);
}
