/* codegen/emit_c.h — what the files of the C backend share: the growable
 * text they write into and the emitter's state.  emit_c.c writes the
 * kernels, emit_vector.c their vector IR (emit_vector.h), emit_vmath.c the
 * vector math, emit_prelude.c the opening of the file (includes, runtime
 * hooks, vector types and the helper functions the kernels used).  Internal
 * to codegen/: not part of codegen.h.
 */
#ifndef TEC_CODEGEN_EMIT_C_H
#define TEC_CODEGEN_EMIT_C_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/codegen.h"

/* ---------------------------------------------------------------- growable text */

/* A malloc'ed, NUL-terminated string that grows as text is appended.  An
 * allocation failure is remembered (oom) and reported once at the end. */
typedef struct cg_str {
    char *p;
    size_t len, cap;
    bool oom;
} cg_str;

void cg_str_putn(cg_str *s, const char *t, size_t n);
void cg_str_puts(cg_str *s, const char *t);
void cg_str_printf(cg_str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_str_vprintf(cg_str *s, const char *fmt, va_list ap);
/* t inside a C comment: no comment end, no control characters. */
void cg_str_put_comment_text(cg_str *s, const char *t);

/* The ASSERT statements of a function, in order (their failure codes). */
typedef struct assert_list {
    const ir_stmt **items;
    int n, cap;
    bool oom;
} assert_list;

/* ---------------------------------------------------------------- the emitter */

/* One name in scope in the C being written: an IR variable or buffer
 * (key) and its C spelling. */
typedef struct cg_binding {
    const void *key;
    char *cname;
} cg_binding;

/* A small set of pointers (few distinct vars and buffers per function). */
typedef struct cg_ptrset {
    const void **items;
    int n, cap;
} cg_ptrset;

/* Helper functions the generated file defines only when it uses them. */
enum {
    H_FLOORDIV_I64, H_FLOORMOD_I64, H_FLOORDIV_I32, H_FLOORMOD_I32,
    H_FLOORDIV_I64_CHK, H_FLOORMOD_I64_CHK, H_FLOORDIV_I32_CHK, H_FLOORMOD_I32_CHK,
    H_RSQRT_F32, H_RSQRT_F64, H_SIGMOID_F32, H_SIGMOID_F64, H_ABS_I64, H_ABS_I32,
    H_SMALLFLOAT,
    H_COUNT
};

/* A heap ALLOC inside a parallel loop and its offset in a thread's slab. */
typedef struct cg_slab {
    const ir_stmt *st;
    int64_t offset;
} cg_slab;

/* The whole state of one cg_emit_c call: module-wide (helpers and hooks
 * used) and per function (scopes, failure exits, usage facts). */
typedef struct cg_emitter {
    const ir_module *m;
    const cg_target *target;     /* NULL: 16-byte vectors */
    bool unchecked;              /* --unchecked: no run-time index checks */
    bool index_check_used;       /* tec_index */
    diag *d;
    bool failed;
    bool oom;
    bool internal;               /* every symbol static (cg_emit_c_static) */
    bool helper_used[H_COUNT];
    bool min_used[IR_NDTYPES], max_used[IR_NDTYPES];
    bool cast_used[IR_NDTYPES][IR_NDTYPES];   /* [to][from]: checked float -> int */
    bool hook_used[IR_NINTRINSICS];
    bool setjmp_used;
    bool ivdep_used;
    /* vector types used: [dtype][log2(lanes)], and their max/min helpers */
    bool vtype_used[IR_NDTYPES][8];
    bool vminmax_used[IR_NDTYPES][8];
    bool bcast_used[IR_NDTYPES][8];
    bool vmath_used[IR_NINTRINSICS][IR_NDTYPES][8];   /* libmvec functions */
    char vtname[IR_NDTYPES][8][24];   /* names of the vector types of vector IR */
    bool vcvt_used[IR_NDTYPES][IR_NDTYPES][8];   /* [to][from][log2(lanes)]: integer widening */
    bool omp_used;                 /* a parallel loop: tec_num_threads */
    bool intrin_used;              /* x86 intrinsics (vector square roots) */
    int par_depth;                 /* inside an OpenMP parallel loop */
    struct cg_slab *slab;          /* heap allocs of the parallel loop being emitted */
    int nslab, capslab;
    int64_t slab_bytes;            /* per thread */
    ir_module *scratch;            /* vector IR made of vectorized loops, index checks */
    bool quiet_chunks;             /* the chunks of a loop vectorized here: one comment */
    bool bf16_flag;                /* the kernel defines tec_bf16_plain (emit_vector.c) */

    /* current function */
    const ir_func *f;
    int indent;
    cg_binding *binds;
    int nbinds, capbinds;
    assert_list asserts;
    const ir_stmt **heap;        /* heap ALLOC statements, slot = position */
    int nheap, capheap;
    bool split;                  /* body function + setjmp wrapper */
    cg_bound_sites sites;        /* indices checked at run time (codegen/bounds.c) */
    bool plain_next;             /* the next i64 constant may print as a plain int */
    cg_ptrset used_vars, used_bufs, read_bufs, written_bufs;
} cg_emitter;


/* Whether the C backend has a type for t. */
static inline bool cg_is_supported_dtype(ir_dtype t)
{
    return t >= 0 && t < IR_NDTYPES && ir_dtype_ctype(t);
}
/* f16 and bf16: stored as uint16_t bit patterns, computed in float, every
 * result rounded back to its format (as the interpreter does). */
static inline bool cg_is_small_float(ir_dtype t) { return t == IR_F16 || t == IR_BF16; }
/* The C type a value of dtype t is held in (a buffer element's is
 * ir_dtype_ctype). */
static inline const char *cg_value_ctype(ir_dtype t)
{
    return cg_is_small_float(t) ? "float" : ir_dtype_ctype(t);
}
/* "static " for the kernels and globals of a file with internal linkage. */
static inline const char *cg_linkage(const cg_emitter *e) { return e->internal ? "static " : ""; }
/* The short name of a dtype in helper and vector type names ("f32", "b"). */
const char *cg_dtype_suffix(ir_dtype t);
/* glibc's vector math (libmvec) name of a math intrinsic, or NULL, and the
 * vector function ABI symbol of it for `lanes` values of t. */
const char *cg_vmath_name(ir_intrin fn);
void cg_put_vmath_symbol(cg_str *s, const char *name, ir_dtype t, int lanes);
/* Whether tec writes the f32 vector function `name` itself
 * (emit_vmath.c), and the text of those for vectors of `lanes` f32. */
bool cg_own_vmath(const char *name, ir_dtype t);
void cg_emit_vmath_f32(cg_str *s, int lanes);
/* Whether every value local buffer b of f holds is a number, not NaN
 * (emit_vmath.c): fmax(b's value, x) is then one max instruction. */
bool cg_holds_numbers(const ir_func *f, const ir_buffer *b);

/* Writes the opening of the file: the comment, includes, runtime hooks,
 * vector types and the helper functions the kernels (already emitted into
 * e's flags) use. */
void cg_emit_prelude(cg_emitter *e, cg_str *s);

#endif
