/* passes/schedule/int8.h — int8 contractions on dot-product instructions:
 * which reduce loop the automatic scheduler groups by 4 (int8.c). */
#ifndef TEC_PASSES_SCHEDULE_INT8_H
#define TEC_PASSES_SCHEDULE_INT8_H
#include "ir/ir.h"

/* An int8 contraction's block b (Y[..] = Y[..] + prod, Y of i32) in the
 * loops[0..n) (kind[i] == 3: a reduce loop), with V the operand whose
 * columns fill the vectors (the packed one): the index of the reduce loop
 * to split by 4, its 4 iterations innermost, so that the C backend makes
 * each lane's 4 products one dot-product instruction (AVX-512 VNNI's
 * vpdpbusd); -1 when the contraction is not one of two byte loads (i8 or
 * u8, under casts to i32; the activation may have an integer zero point
 * when the weights are i8), no reduce loop of both
 * operands has a multiple of 4 iterations, or the target (passes'
 * --target) has no such instruction for vectors of `lanes` i32. */
int sch_int8_dot4_loop(const ir_stmt *b, ir_stmt *const *loops, const int *kind, int n,
                       const ir_expr *prod, const ir_expr *V, int lanes);

/* A bf16 contraction's block b (Y[..] = Y[..] + f32(A[..]) * f32(B[..]),
 * Y of f32) as sch_int8_dot4_loop's: the reduce loop to split by 2, its 2
 * iterations innermost, so that each lane's 2 products are one vdpbf16ps
 * (AVX-512 BF16, codegen/emit_vector.c), in the loop's own order of sums;
 * -1 when it is not such a contraction, no reduce loop of both operands
 * has an even number of iterations, or the target has no such
 * instruction for vectors of `lanes` f32. */
int sch_bf16_pair_loop(const ir_stmt *b, ir_stmt *const *loops, const int *kind, int n,
                       const ir_expr *prod, const ir_expr *V, int lanes);

/* sch_int8_dot4_loop's loop with *group = 4, else sch_bf16_pair_loop's
 * with *group = 2 (-1: neither). */
int sch_int8_group_loop(const ir_stmt *b, ir_stmt *const *loops, const int *kind, int n,
                        const ir_expr *prod, const ir_expr *V, int lanes, int *group);

/* The dimension of buffer x (read through padding guards, about to be
 * padded into a copy) that the copy should store innermost: the
 * dimension an int8 contraction of f reads x along in the reduce loop it
 * will group by 4 (a convolution's input channels, so the 4 bytes of a
 * group are one 32-bit read), when the target has the dot-product
 * instruction for `lanes` i32; else -1. */
int sch_int8_pad_dim(const ir_func *f, const ir_buffer *x, int lanes);

/* Whether the store st runs in vectors as a float store does: a float
 * store, a store of i8, u8 or i16 values converted from f32, f64 or i32
 * (a quantize's or a requantize's saturated result, which the vectorize
 * pass computes in vectors of the wider types: ir/vectorize.c), or an i32
 * sum of products of widened bytes (an int8 depthwise convolution, whose
 * window then runs outside a vector of i32 lanes as a float one does), or
 * a max (min) of bytes (an int8 max pooling, in byte lanes). */
bool sch_int8_vector_store(const ir_stmt *st);

#endif
