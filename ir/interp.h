/* ir/interp.h — the reference interpreter of tec's loop IR.
 *
 * Every compiled result (any -O level, any pass pipeline) is compared
 * against what this interpreter computes, so it implements ir.h's semantics
 * plainly and checks everything it can: out-of-range loads and stores,
 * integer floordiv/floormod by zero, block bindings outside their iteration
 * domain, failed ASSERTs.  It never crashes on a malformed function; it
 * reports a one-line message instead.
 *
 * Arithmetic: f32 in float (rounded after every operation, no contraction),
 * f64 in double, f16/bf16 computed in float and rounded to the storage
 * format after every operation, integers on int64 (i32 results wrap to 32
 * bits as a store to int32_t would), bool as 0/1.
 */
#ifndef TEC_IR_INTERP_H
#define TEC_IR_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Runs f on its parameters: data[i] is the storage of f->params[i]
 * (row-major, the param's dtype, ir_buffer_numel elements).  Returns true on
 * success; on failure (an ASSERT failed, integer floordiv/floormod by zero,
 * an out-of-range index, a malformed function) writes a one-line message
 * naming the function, e.g.
 *     in @emb: assert failed: index ids[t] out of range [0, 50257)
 * into err (errlen bytes, always NUL-terminated) and returns false.
 * Stores made before the failure stay in data. */
bool ir_interp_func(const ir_func *f, void *const *data, char *err, size_t errlen);
/* The same for a function holding vector IR (ir/vector.c): runs its scalar
 * equivalent, lane by lane.  ir_interp_func calls it for such functions. */
bool ir_interp_vector_func(const ir_func *f, void *const *data, char *err, size_t errlen);

/* Runs the graph's calls in order.  graph_data[i] is the storage of
 * m->graph.bufs[i]; each call passes its args' storage to the callee, whose
 * parameter may view the graph buffer with another shape of the same element
 * count and dtype.  Stops at the first failure, with ir_interp_func's
 * message. */
bool ir_interp_module(const ir_module *m, void **graph_data, char *err, size_t errlen);

/* The run-time intrinsics (ir_intrin_class 'r': IR_FN_PROF_ENTER, _EXIT,
 * _COUNT) are served by whoever runs the program: ir/ does not know the
 * profiler, so the runtime installs its functions here (runtime/profile.c
 * does, before a profiled run).  A NULL table or member makes the intrinsic
 * evaluate its arguments and do nothing else.  Install before the
 * interpreter runs on other threads; the table must outlive those runs. */
typedef struct ir_interp_hooks {
    void (*prof_enter)(int64_t func);
    void (*prof_exit)(int64_t func);
    void (*prof_count)(int64_t site, int64_t n);
} ir_interp_hooks;
void ir_interp_set_hooks(const ir_interp_hooks *h);

/* "cast of -5e+09 to i32 is out of range": a float to integer cast whose
 * value has no integer of the target type, in the words of the interpreter
 * and of compiled kernels alike. */
void ir_cast_failure(double value, ir_dtype to, char *buf, size_t len);

/* IEEE binary16 and bfloat16 storage conversions (round to nearest even;
 * NaN stays NaN, overflow gives infinity).  Shared with runtime/tensor.c and
 * runtime/npy.c so that every component rounds the same way. */
float ir_f16_to_f32(uint16_t h);
uint16_t ir_f32_to_f16(float f);
uint16_t ir_f64_to_f16(double d);     /* rounds once, not via float */
float ir_bf16_to_f32(uint16_t h);
uint16_t ir_f32_to_bf16(float f);
uint16_t ir_f64_to_bf16(double d);

#endif
