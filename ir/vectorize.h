/* ir/vectorize.h — vectorizing a loop with what its surroundings allow:
 * the ranges of the variables around it, and the local buffers it may
 * enlarge so that a loop of a few elements more than whole vectors, or
 * fewer than one, runs as whole vectors (ir/vectorize.c, "whole vectors").
 *
 *   ir_vec_local l[] = {{buf, buf->shape[0], buf->shape[0]}};
 *   ir_vec_env env = {ranges, nranges, l, 1};
 *   ir_stmt *v = ir_vectorize_loop_env(m, loop, 64, &env);
 *   if (v && l[0].need > l[0].orig) ... give the alloc of buf l[0].need elements ...
 */
#ifndef TEC_IR_VECTORIZE_H
#define TEC_IR_VECTORIZE_H

#include "ir/arith.h"
#include "ir/ir.h"

/* A one-dimensional local buffer in scope: its extent as allocated (orig)
 * and the extent the vector loops built so far need (need >= orig): the
 * elements from orig on are written and read only by lanes past a loop's
 * end, whose values nothing uses. */
typedef struct ir_vec_local {
    const ir_buffer *buf;
    int64_t orig, need;
    bool stored_past;   /* some lane past a loop's end stores from orig on */
} ir_vec_local;

typedef struct ir_vec_env {
    const ir_var_range *ranges;   /* the variables around the loop */
    int nranges;
    ir_vec_local *locals;         /* innermost last */
    int nlocals;
    /* the body may hold serial loops of constant bounds (at most 16
     * iterations), kept as loops around their vectorized bodies: a
     * transposed write-back, for j in 0..32 step 16 { for i in 0..8
     * { Y[ramp(b + i, S, 16)] = T[ramp(i * 32 + j, 1, 16)] } }, which the
     * C backend runs as an in-register transpose (passes/vectorize.c
     * builds it) */
    bool inner_loops;
    /* a loop that stays a loop (not unrolled) runs between the innermost
     * local buffer's alloc and this loop: the taps of an average pooling
     * kept as loops around the row's vectors, so the row's tile lives in
     * memory across them rather than in registers */
    bool loop_in_local;
} ir_vec_env;

/* ir_vectorize_loop, and with env (may be NULL) a loop of n iterations
 * whose plain chunks would end in narrower vectors or scalars may instead
 * run as whole vectors over a few more: when each extra lane reads only in
 * range (of a local buffer once enlarged to its `need`) and stores only to
 * a local buffer's elements from its `orig` on, and that costs fewer
 * vector steps; a read of another buffer past its end on some iterations
 * of the loops around puts the whole vectors under a test of the last
 * lane's index (the plain chunks in its else). */
ir_stmt *ir_vectorize_loop_env(ir_module *m, const ir_stmt *st, int vector_bytes,
                               ir_vec_env *env);

/* The write-back loop that ends alloc's body, for j in 0..L { Y[i] =
 * op(Y[i], R[j]) } over the allocated R (L partial results, +, max or
 * min), as a tree of vector statements folding R's upper half into its
 * lower half and a last scalar tree of 4 (ir/vectorize.c, "combining
 * partials"), when every store to R is a whole vector of vector_bytes;
 * returns alloc rewritten in place, or NULL (alloc unchanged). */
ir_stmt *ir_vec_combine_partials(ir_module *m, ir_stmt *alloc, int vector_bytes);

#endif
