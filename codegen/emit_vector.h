/* codegen/emit_vector.h — what the C backend's statement printer
 * (emit_c.c) and its vector printer (emit_vector.c) share, and nothing
 * else includes: the vector printer's entry points, and the few pieces of
 * the scalar printer (names in scope, operands, accesses, lines) a vector
 * expression is made of.  Both work on one cg_emitter (emit_c.h). */
#ifndef TEC_CODEGEN_EMIT_VECTOR_H
#define TEC_CODEGEN_EMIT_VECTOR_H

#include "codegen/emit_c.h"

/* ---------------------------------------------------------------- from emit_vector.c */

/* The C vector type of `lanes` values of t ("tec_f32x8"), or NULL after an
 * error. */
const char *cg_vector_ctype(cg_emitter *e, ir_dtype t, int lanes);
/* x, a vector, as a value of its C vector type. */
void cg_emit_vector_ir(cg_emitter *e, cg_str *s, const ir_expr *x);
/* A store of a vector value. */
void cg_emit_vector_store(cg_emitter *e, cg_str *s, const ir_stmt *st);
/* A loop with a step (a vectorized loop's vector part). */
void cg_emit_stepped_loop(cg_emitter *e, cg_str *s, const ir_stmt *st);
/* The int8 dot-product helpers the kernels text `funcs` calls. */
void cg_emit_dot4_helpers(cg_str *s, const char *funcs);

/* ---------------------------------------------------------------- from emit_c.c */

/* C precedence levels (higher binds tighter). */
enum {
    P_TOP = 0, P_SELECT = 3, P_OR = 4, P_AND = 5, P_EQ = 9, P_REL = 10,
    P_ADD = 12, P_MUL = 13, P_UNARY = 14, P_PRIMARY = 16
};

/* The current function's IR name ("?" if none). */
const char *cg_func_name(const cg_emitter *e);
/* An error in what the user asked for, at the function's location. */
void cg_user_error(cg_emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Names in scope: bind a variable or buffer, drop the last n, look one up. */
const char *cg_bind(cg_emitter *e, const void *key, const char *irname);
void cg_unbind(cg_emitter *e, int n);
const char *cg_lookup(const cg_emitter *e, const void *key);
/* A scalar expression where precedence >= min_prec is required. */
void cg_emit_operand(cg_emitter *e, cg_str *s, const ir_expr *x, int min_prec, bool force_paren);
/* buf[offset] of a load or store (`access`) with n indices, checked where
 * bounds.c could not prove them. */
void cg_emit_access(cg_emitter *e, cg_str *s, const ir_buffer *b, const void *access,
                    ir_expr *const *idx, int n);
/* " + ", " * " ... of a binary operation. */
const char *cg_binary_op(ir_expr_kind k);
/* One indented line of the kernel. */
void cg_line(cg_emitter *e, cg_str *s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* ir_expr_walk callback: sets *(bool *)found at a load. */
bool cg_contains_load(const ir_expr *x, void *found);
/* The C type of a scalar variable. */
const char *cg_var_ctype(cg_emitter *e, const ir_var *v);
/* A loop body, one level deeper. */
void cg_emit_body(cg_emitter *e, cg_str *s, const ir_stmt *body);
/* A loop bound's C text (malloc'ed). */
char *cg_bound_text(cg_emitter *e, const ir_expr *x);

#endif
