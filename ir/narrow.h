/* ir/narrow.h — stores that narrow a computed value to a small integer
 * (quantize, requantize), which vector code computes in the wider types. */
#ifndef TEC_IR_NARROW_H
#define TEC_IR_NARROW_H
#include "ir/ir.h"

/* Whether the float x is clamped by constants into [lo, hi]: min(max(v,
 * b), t) or max(min(v, t), b) with lo <= b <= t <= hi.  min and max yield
 * the other operand of a NaN, so every value of x is in range and its
 * conversion to an integer type holding [lo, hi] cannot fail. */
bool ir_float_clamped(const ir_expr *x, double lo, double hi);

/* Whether st stores i8, u8 or i16 values converted from f32, f64 or i32:
 * buf[..] = cast<t>(E), E a float clamped into t's range (ir_float_clamped;
 * the conversion cannot fail) or an i32 (it wraps). */
bool ir_narrowing_store(const ir_stmt *st);

#endif
