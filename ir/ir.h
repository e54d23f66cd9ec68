/* ir/ir.h — tec's loop IR: one module holds layer-stage functions and the
 * graph that calls them.  Every kind of node is listed once, in the X-macro
 * tables below; printer, parser, verifier, interpreter and codegen all switch
 * over those tables, so adding a kind is one line here plus one case each.
 *
 * Ownership: every node, string and array of a module lives in the module's
 * arena and is freed with it.  Nodes are plain structs; passes either mutate
 * them in place or build new ones in the same arena.
 *
 * Identity: variables and buffers are compared by pointer.  Names are for
 * printing; the builder keeps them unique inside a function so the textual
 * form parses back to the same module.
 */
#ifndef TEC_IR_H
#define TEC_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- arena */

typedef struct ir_arena ir_arena;

/* Where tec cannot go on without memory: prints "tec: error: out of
 * memory" and exits with status 1 (not tec's bug, nor the input's: the
 * machine's, reported as an error like a full disk). */
_Noreturn void ir_out_of_memory(void);

ir_arena *ir_arena_new(void);
void ir_arena_free(ir_arena *a);
void *ir_alloc(ir_arena *a, size_t size);            /* zeroed, 16-aligned */
char *ir_strdup(ir_arena *a, const char *s);
char *ir_strndup(ir_arena *a, const char *s, size_t n);
char *ir_sprintf(ir_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Grows an arena array of element size `elem` from `n` to at least n+1
 * elements, doubling *cap; returns the (possibly moved) array. */
void *ir_grow(ir_arena *a, void *arr, size_t elem, int n, int *cap);
#define IR_PUSH(arena, arr, n, cap, item)                                   \
    do {                                                                    \
        if ((n) >= (cap))                                                   \
            (arr) = ir_grow((arena), (arr), sizeof *(arr), (n), &(cap));    \
        (arr)[(n)++] = (item);                                              \
    } while (0)

/* ---------------------------------------------------------------- dtypes */

/* X(ENUM, text, C type of an element in memory, bytes) */
#define IR_DTYPES(X)                      \
    X(BOOL, "bool", "uint8_t", 1)         \
    X(I8, "i8", "int8_t", 1)              \
    X(U8, "u8", "uint8_t", 1)             \
    X(I16, "i16", "int16_t", 2)           \
    X(I32, "i32", "int32_t", 4)           \
    X(I64, "i64", "int64_t", 8)           \
    X(F16, "f16", "uint16_t", 2)          \
    X(BF16, "bf16", "uint16_t", 2)        \
    X(F32, "f32", "float", 4)             \
    X(F64, "f64", "double", 8)

typedef enum {
#define X(e, t, c, s) IR_##e,
    IR_DTYPES(X)
#undef X
    IR_NDTYPES
} ir_dtype;

const char *ir_dtype_name(ir_dtype t);     /* "f32" */
const char *ir_dtype_ctype(ir_dtype t);    /* "float"; f16/bf16: "uint16_t" (bits) */
int ir_dtype_size(ir_dtype t);             /* bytes per element */
bool ir_dtype_is_float(ir_dtype t);        /* f16 bf16 f32 f64 */
bool ir_dtype_is_int(ir_dtype t);          /* i8 u8 i16 i32 i64 (not bool) */
/* i8 u8 i16 (and f16 bf16, for the language): the storage types, which a
 * kernel converts to a wider type to compute.  The IR defines no integer
 * arithmetic on i8, u8 and i16 (comparisons, min/max and select only). */
bool ir_dtype_is_small_int(ir_dtype t);
/* The values an integer-like dtype (bool and the integers) holds; false
 * for the floats. */
bool ir_dtype_int_range(ir_dtype t, int64_t *lo, int64_t *hi);
/* v reduced to an integer-like dtype as a C conversion to its type does
 * (modulo 2^bits; bool: nonzero gives 1). */
int64_t ir_int_wrap(ir_dtype t, int64_t v);
/* Looks a name up in the table; returns false if it is not a dtype. */
bool ir_dtype_parse(const char *name, ir_dtype *out);

/* ---------------------------------------------------------------- expressions */

/* X(ENUM, text, arity, class)
 * class: 'c' constant, 'v' variable, 'l' load, 'b' binary infix,
 *        'f' binary written as a function (min(a, b)), 'u' unary prefix,
 *        's' select, 'k' cast, 'i' intrinsic call, 'w' vector constructor
 *        (operands a, and b for RAMP, or args for LANES; the lane count in
 *        `lanes`).
 * Semantics (the interpreter and codegen implement exactly these):
 *   DIV        float division; integer operands are not allowed (verifier).
 *   FLOORDIV   integer division rounding toward -inf; divisor != 0.
 *   FLOORMOD   a - b*floordiv(a, b); result has the sign of b.
 *   AND OR NOT on bool only; comparisons yield bool.
 *   SELECT     c ? a : b, and only the chosen arm is evaluated (it guards
 *              loads that would be out of range).
 *   CAST       conversion to e->dtype; float->int truncates toward zero.
 *   f32 arithmetic is rounded to f32 after every operation.
 *
 * Vectors (what passes/vectorize.c makes of `vectorized` loops): an
 * expression has `lanes` values of its dtype (0 and 1 both mean a scalar).
 *   RAMP       ramp(a, b, L): the L integers a, a + b, ..., a + (L-1)*b;
 *              a and b are scalars of one integer dtype.
 *   BROADCAST  broadcast(a, L): L copies of the scalar a.
 *   LANES      lanes(x0, ..., xL-1): the vector of the L scalars args[0..L),
 *              each evaluated as a scalar expression (what a vectorizer
 *              writes for a value it computes lane by lane).
 * Every other kind works lane by lane: the operands of an operator, of a
 * call and the arms of a select have the node's lanes (a select's condition
 * may also be one scalar for every lane); a LOAD whose indices include
 * vectors of L lanes reads L elements, lane l at the indices' lane l. */
#define IR_EXPR_KINDS(X)             \
    X(INT, "int", 0, 'c')            \
    X(FLOAT, "float", 0, 'c')        \
    X(VAR, "var", 0, 'v')            \
    X(LOAD, "load", 0, 'l')          \
    X(ADD, "+", 2, 'b')              \
    X(SUB, "-", 2, 'b')              \
    X(MUL, "*", 2, 'b')              \
    X(DIV, "/", 2, 'b')              \
    X(FLOORDIV, "floordiv", 2, 'f')  \
    X(FLOORMOD, "floormod", 2, 'f')  \
    X(MIN, "min", 2, 'f')            \
    X(MAX, "max", 2, 'f')            \
    X(EQ, "==", 2, 'b')              \
    X(NE, "!=", 2, 'b')              \
    X(LT, "<", 2, 'b')               \
    X(LE, "<=", 2, 'b')              \
    X(GT, ">", 2, 'b')               \
    X(GE, ">=", 2, 'b')              \
    X(AND, "&&", 2, 'b')             \
    X(OR, "||", 2, 'b')              \
    X(NEG, "-", 1, 'u')              \
    X(NOT, "!", 1, 'u')              \
    X(SELECT, "select", 3, 's')      \
    X(CAST, "cast", 1, 'k')          \
    X(CALL, "call", -1, 'i')         \
    X(RAMP, "ramp", 2, 'w')          \
    X(BROADCAST, "broadcast", 1, 'w')       \
    X(LANES, "lanes", -1, 'w')

typedef enum {
#define X(e, t, n, c) IR_##e,
    IR_EXPR_KINDS(X)
#undef X
    IR_NEXPR_KINDS
} ir_expr_kind;

const char *ir_expr_kind_name(ir_expr_kind k);   /* "+", "floordiv", ... */
int ir_expr_kind_arity(ir_expr_kind k);          /* -1: variadic (CALL) */
char ir_expr_kind_class(ir_expr_kind k);

/* Intrinsic functions. X(ENUM, name, arity, class)
 * class 'm': pure math on floats, result dtype = argument dtype.
 * class 'r': runtime call with side effects, only inside EVAL statements;
 *            integer arguments, no result (its dtype is i32, value 0).
 * sigmoid(x) = 1 / (1 + exp(-x)); erf is C99's erf/erff. */
#define IR_INTRINSICS(X)              \
    X(EXP, "exp", 1, 'm')             \
    X(LOG, "log", 1, 'm')             \
    X(SQRT, "sqrt", 1, 'm')           \
    X(RSQRT, "rsqrt", 1, 'm')         \
    X(TANH, "tanh", 1, 'm')           \
    X(ERF, "erf", 1, 'm')             \
    X(SIGMOID, "sigmoid", 1, 'm')     \
    X(ABS, "abs", 1, 'm')             \
    X(FLOOR, "floor", 1, 'm')         \
    X(CEIL, "ceil", 1, 'm')           \
    X(RINT, "rint", 1, 'm')           \
    X(SIN, "sin", 1, 'm')             \
    X(COS, "cos", 1, 'm')             \
    X(POW, "pow", 2, 'm')             \
    X(PROF_ENTER, "tec_prof_enter", 1, 'r')   \
    X(PROF_EXIT, "tec_prof_exit", 1, 'r')     \
    X(PROF_COUNT, "tec_prof_count", 2, 'r')

typedef enum {
#define X(e, n, a, c) IR_FN_##e,
    IR_INTRINSICS(X)
#undef X
    IR_NINTRINSICS
} ir_intrin;

const char *ir_intrin_name(ir_intrin f);
int ir_intrin_arity(ir_intrin f);
char ir_intrin_class(ir_intrin f);
bool ir_intrin_parse(const char *name, ir_intrin *out);

typedef struct ir_var ir_var;
typedef struct ir_buffer ir_buffer;
typedef struct ir_expr ir_expr;
typedef struct ir_stmt ir_stmt;

/* A variable: a loop variable, a block iteration variable or a let.
 * Index variables are i64.  A let may hold a vector (lanes > 1). */
struct ir_var {
    const char *name;
    ir_dtype dtype;
    int lanes;             /* 0 or 1: a scalar */
};

/* The most lanes a vector may have (a 64-byte vector of bytes). */
#define IR_MAX_LANES 64

/* One expression node; which fields mean something depends on kind. */
struct ir_expr {
    ir_expr_kind kind;
    ir_dtype dtype;        /* type of the value */
    int64_t ival;          /* INT */
    double fval;           /* FLOAT (f32 values are exactly representable) */
    ir_var *var;           /* VAR */
    ir_buffer *buf;        /* LOAD */
    ir_expr **args;        /* LOAD: indices; CALL: arguments */
    int nargs;
    ir_intrin fn;          /* CALL */
    ir_expr *a, *b, *c;    /* operands: unary a; binary a, b; SELECT c ? a : b
                              (c is the condition); CAST a; RAMP a, b;
                              BROADCAST a */
    int lanes;             /* values in the vector; 0 or 1: a scalar */
};

/* e's lanes (1 for a scalar), and a variable's. */
static inline int ir_expr_lanes(const ir_expr *e) { return e && e->lanes > 1 ? e->lanes : 1; }
static inline int ir_var_lanes(const ir_var *v) { return v && v->lanes > 1 ? v->lanes : 1; }

/* ---------------------------------------------------------------- buffers */

/* What a buffer is to the module.  Graph buffers are INPUT, PARAM, OUTPUT,
 * TEMP or CONST; a function's parameters are ARG; ALLOC statements declare
 * LOCAL ones.  A CONST is computed from params once, when the program is
 * loaded, by the graph's load calls (packed weights): not a parameter of
 * the model, read-only while it runs. */
#define IR_BUF_ROLES(X)        \
    X(INPUT, "input")          \
    X(PARAM, "param")          \
    X(OUTPUT, "output")        \
    X(TEMP, "temp")            \
    X(CONST, "const")          \
    X(ARG, "arg")              \
    X(LOCAL, "local")

typedef enum {
#define X(e, t) IR_BUF_##e,
    IR_BUF_ROLES(X)
#undef X
    IR_NBUF_ROLES
} ir_buf_role;

const char *ir_buf_role_name(ir_buf_role r);

/* Where an ALLOC's storage lives: GLOBAL heap memory of the process, STACK
 * (small, function-local), or a target-defined on-chip scope later. */
#define IR_SCOPES(X) X(GLOBAL, "global") X(STACK, "stack")
typedef enum {
#define X(e, t) IR_SCOPE_##e,
    IR_SCOPES(X)
#undef X
    IR_NSCOPES
} ir_scope;
const char *ir_scope_name(ir_scope s);

/* A dense row-major tensor.  Shapes are concrete: every size was bound when
 * the frontend instantiated the layer (-D overrides included). */
struct ir_buffer {
    const char *name;      /* may contain '.', e.g. layer1.0.conv1.weight */
    ir_dtype dtype;
    int ndim;
    int64_t *shape;        /* ndim extents, each >= 1; ndim 0 is a scalar */
    ir_buf_role role;
    ir_scope scope;        /* LOCAL buffers */
    /* LOCAL: its alloc's body stores every element before it reads any (the
     * padded copy the schedule's pad() makes), so its storage need not
     * start zeroed; `alloc ... filled` in the text form. */
    bool filled;
    /* LOCAL: a tile whose rows the scheduler padded to whole vectors
     * (auto_window's depthwise tiles of several rows of 28 at a pitch of
     * 32): once flat, of every row_pitch elements those from row_used on
     * are touched by no iteration of the program, only by vector lanes
     * past a row's end (ir/vectorize.c), whose values nothing uses.  0:
     * none.  The text form does not carry it (read back, the rows run in
     * narrower chunks: the same values). */
    int64_t row_pitch, row_used;
    /* Default contents of INPUT and PARAM buffers when the user gives no
     * file: uniform in [init_lo, init_hi) by runtime/random.c's formula. */
    bool has_init;
    double init_lo, init_hi;
    /* A PARAM that is not trained (PyTorch's registered buffers, e.g.
     * BatchNorm's running statistics): loaded like any param, but not
     * counted among the model's parameters.  Printed `state`. */
    bool state;
    /* A TEMP graph buffer that the memory plan (passes/memplan.c) placed in
     * the graph's arena: its storage is arena bytes [arena_offset,
     * arena_offset + ir_buffer_bytes).  Printed `arena(OFFSET)`. */
    bool in_arena;
    int64_t arena_offset;
};

int64_t ir_buffer_numel(const ir_buffer *b);  /* product of shape, >= 1 */
/* numel x element size, or -1 when that does not fit in an int64_t. */
int64_t ir_buffer_bytes(const ir_buffer *b);

/* ---------------------------------------------------------------- statements */

#define IR_STMT_KINDS(X)       \
    X(SEQ, "seq")              \
    X(FOR, "for")              \
    X(BLOCK, "block")          \
    X(STORE, "store")          \
    X(ALLOC, "alloc")          \
    X(LET, "let")              \
    X(IF, "if")                \
    X(EVAL, "evaluate")        \
    X(ASSERT, "assert")        \
    X(PREFETCH, "prefetch")

typedef enum {
#define X(e, t) IR_S_##e,
    IR_STMT_KINDS(X)
#undef X
    IR_NSTMT_KINDS
} ir_stmt_kind;

const char *ir_stmt_kind_name(ir_stmt_kind k);

#define IR_FOR_KINDS(X)            \
    X(SERIAL, "serial")            \
    X(PARALLEL, "parallel")        \
    X(VECTORIZED, "vectorized")    \
    X(UNROLLED, "unrolled")

typedef enum {
#define X(e, t) IR_FOR_##e,
    IR_FOR_KINDS(X)
#undef X
    IR_NFOR_KINDS
} ir_for_kind;
const char *ir_for_kind_name(ir_for_kind k);

#define IR_ITER_KINDS(X) X(SPATIAL, "spatial") X(REDUCE, "reduce")
typedef enum {
#define X(e, t) IR_ITER_##e,
    IR_ITER_KINDS(X)
#undef X
    IR_NITER_KINDS
} ir_iter_kind;
const char *ir_iter_kind_name(ir_iter_kind k);

/* A block iteration variable: var ranges over [0, extent) and is bound to
 * `binding`, an expression of the enclosing loop variables. */
typedef struct ir_itervar {
    ir_var *var;
    ir_iter_kind kind;
    int64_t extent;
    ir_expr *binding;
} ir_itervar;

/* Statement node.
 *   SEQ     body[0..nbody)
 *   FOR     var in [lo, hi) by step (0 means 1: var = lo, lo + step, ...
 *           while var < hi), kind; body[0]
 *   BLOCK   name; iters; reads/writes (buffers it touches); init (may be
 *           NULL) runs before body whenever every REDUCE iter var's binding
 *           is 0 (TensorIR's rule); body[0]
 *   STORE   buf[args] = value
 *   ALLOC   buf (role LOCAL) is live in body[0]
 *   LET     var = value in body[0]
 *   IF      cond: body[0] else orelse (may be NULL)
 *   EVAL    value, a CALL of a runtime intrinsic
 *   ASSERT  cond must hold; otherwise the kernel stops with `msg`
 *   PREFETCH buf[args]: a hint that the cache line holding that element is
 *           read soon.  It changes no value, and its indices may lie outside
 *           buf (then it does nothing): nothing checks or counts it. */
struct ir_stmt {
    ir_stmt_kind kind;
    ir_stmt **body;        /* SEQ: the list; others: body[0] */
    int nbody;
    int capbody;           /* see "Growable arrays" below */
    ir_var *var;           /* FOR, LET */
    ir_expr *lo, *hi;      /* FOR */
    ir_for_kind for_kind;  /* FOR */
    int64_t step;          /* FOR: 0 or 1 for unit steps (see ir_for_step) */
    const char *name;      /* BLOCK */
    ir_itervar *iters;     /* BLOCK */
    int niters;
    ir_buffer **reads, **writes;   /* BLOCK */
    int nreads, nwrites;
    ir_stmt *init;         /* BLOCK */
    ir_buffer *buf;        /* STORE, ALLOC, PREFETCH */
    ir_expr **args;        /* STORE, PREFETCH: indices */
    int nargs;
    ir_expr *value;        /* STORE, LET, EVAL */
    ir_expr *cond;         /* IF, ASSERT */
    ir_stmt *orelse;       /* IF */
    const char *msg;       /* ASSERT */
};

/* A FOR's step (1 when the field says 0). */
static inline int64_t ir_for_step(const ir_stmt *s) { return s && s->step > 1 ? s->step : 1; }

/* ---------------------------------------------------------------- functions, graph, module */

/* A string attribute; functions carry at least "layer" (hierarchical layer
 * name), "op" (the source op, e.g. "conv2d") and "loc" (file:line:col). */
typedef struct ir_attr {
    const char *key;
    const char *value;
} ir_attr;

/* One layer stage.  Parameters are ARG buffers; the graph passes graph
 * buffers to them positionally (shapes and dtypes must match). */
typedef struct ir_func {
    const char *name;
    ir_buffer **params;
    int nparams;
    ir_attr *attrs;
    int nattrs;
    ir_stmt *body;
    int capparams, capattrs;
} ir_func;

typedef struct ir_graph_call {
    ir_func *fn;
    ir_buffer **args;      /* graph buffers, one per fn->params */
    int nargs;
} ir_graph_call;

/* What runs: graph buffers and the calls in program order.
 *
 * Memory plan.  With has_arena, the executor allocates one block of
 * arena_bytes (IR_ARENA_ALIGN-aligned) for the run and places every buffer
 * marked in_arena at its offset; the others get storage of their own.  The
 * plan is sound when every placed buffer is a TEMP lying inside the arena
 * at an offset that is a multiple of IR_ARENA_ALIGN, and two placed
 * buffers whose live ranges (ir_graph_live_ranges) share a call never share
 * a byte.  The verifier checks exactly that.  It relies on the calls
 * running one after the other in graph order, and on a temp's first call
 * writing it before anything reads it (its contents before that are
 * undefined). */
#define IR_ARENA_ALIGN 64
typedef struct ir_graph {
    ir_buffer **bufs;
    int nbufs;
    ir_graph_call *calls;
    int ncalls;
    /* Load calls run once, in order, when the program is loaded (before
     * the first run): they compute the CONST buffers from params.  They
     * are not part of a run, so nothing that describes a run (analysis,
     * profile, memory plan, accelerator model) sees them. */
    ir_graph_call *loads;
    int nloads;
    int capbufs, capcalls, caploads;
    bool has_arena;
    int64_t arena_bytes;   /* a multiple of IR_ARENA_ALIGN */
} ir_graph;

typedef struct ir_module {
    ir_arena *arena;
    const char *name;      /* e.g. the source file's base name */
    ir_func **funcs;
    int nfuncs;
    int capfuncs;
    ir_graph graph;
} ir_module;

/* Growable arrays: each list that the builder appends to has a `cap...`
 * field beside its count.  Code that builds such an array by other means
 * leaves the capacity 0 (or anything <= the count); the next append then
 * copies the array into a fresh one, so appending is always safe. */

/* ---------------------------------------------------------------- builder */

ir_module *ir_module_new(const char *name);   /* owns a fresh arena */
void ir_module_free(ir_module *m);            /* frees the arena */

ir_func *ir_func_new(ir_module *m, const char *name);  /* appended to m */
ir_func *ir_module_find_func(const ir_module *m, const char *name);
void ir_func_set_attr(ir_module *m, ir_func *f, const char *key, const char *value);
const char *ir_func_attr(const ir_func *f, const char *key);  /* or NULL */

ir_buffer *ir_buffer_new(ir_module *m, const char *name, ir_dtype t, int ndim,
                         const int64_t *shape, ir_buf_role role);
void ir_func_add_param(ir_module *m, ir_func *f, ir_buffer *b);
void ir_graph_add_buffer(ir_module *m, ir_buffer *b);
ir_buffer *ir_graph_find_buffer(const ir_module *m, const char *name);
/* Index of b in g->bufs, or -1. */
int ir_graph_buffer_index(const ir_graph *g, const ir_buffer *b);
/* Live ranges of the graph's buffers: first[i] and last[i] (arrays of
 * g->nbufs) receive the indices of the first and the last call that passes
 * g->bufs[i], or -1 and -1 when no call does. */
void ir_graph_live_ranges(const ir_graph *g, int *first, int *last);
void ir_graph_add_call(ir_module *m, ir_func *f, ir_buffer **args, int nargs);
void ir_graph_add_load(ir_module *m, ir_func *f, ir_buffer **args, int nargs);

ir_var *ir_var_new(ir_module *m, const char *name, ir_dtype t);

ir_expr *ir_int(ir_module *m, int64_t v);                 /* i64 */
ir_expr *ir_int_typed(ir_module *m, int64_t v, ir_dtype t);
ir_expr *ir_float(ir_module *m, double v, ir_dtype t);    /* rounds to f32 for F32 */
ir_expr *ir_varref(ir_module *m, ir_var *v);
ir_expr *ir_load(ir_module *m, ir_buffer *b, ir_expr **idx, int n);
/* Binary/unary/compare/logic: dtype follows the table's rules (comparisons
 * and AND/OR/NOT give bool, the rest take the operands' dtype).  Operand
 * dtypes must already agree; use ir_cast first. */
ir_expr *ir_binary(ir_module *m, ir_expr_kind k, ir_expr *a, ir_expr *b);
ir_expr *ir_unary(ir_module *m, ir_expr_kind k, ir_expr *a);
ir_expr *ir_select(ir_module *m, ir_expr *cond, ir_expr *a, ir_expr *b);
ir_expr *ir_cast(ir_module *m, ir_expr *a, ir_dtype t);   /* a itself if same */
ir_expr *ir_call(ir_module *m, ir_intrin fn, ir_expr **args, int n);
/* Vectors: ramp(base, stride, lanes) and broadcast(x, lanes). */
ir_expr *ir_ramp(ir_module *m, ir_expr *base, ir_expr *stride, int lanes);
ir_expr *ir_broadcast(ir_module *m, ir_expr *x, int lanes);
ir_expr *ir_lanes(ir_module *m, ir_expr **xs, int lanes);
/* "f32" for a scalar, "f32x8" for 8 lanes (buf holds at least 16 bytes);
 * ir_vtype_parse reads either form. */
const char *ir_vtype_name(ir_dtype t, int lanes, char *buf, size_t size);
bool ir_vtype_parse(const char *name, ir_dtype *t, int *lanes);

ir_stmt *ir_seq(ir_module *m, ir_stmt **stmts, int n);
ir_stmt *ir_seq_new(ir_module *m);                        /* empty, growable */
void ir_seq_append(ir_module *m, ir_stmt *seq, ir_stmt *s);
ir_stmt *ir_for(ir_module *m, ir_var *v, ir_expr *lo, ir_expr *hi,
                ir_for_kind k, ir_stmt *body);
ir_stmt *ir_block(ir_module *m, const char *name, ir_itervar *iters, int niters,
                  ir_stmt *init, ir_stmt *body);    /* fills reads/writes */
ir_stmt *ir_store(ir_module *m, ir_buffer *b, ir_expr **idx, int n, ir_expr *value);
ir_stmt *ir_alloc_stmt(ir_module *m, ir_buffer *b, ir_stmt *body);
ir_stmt *ir_let(ir_module *m, ir_var *v, ir_expr *value, ir_stmt *body);
ir_stmt *ir_if(ir_module *m, ir_expr *cond, ir_stmt *then, ir_stmt *orelse);
ir_stmt *ir_eval(ir_module *m, ir_expr *call);
ir_stmt *ir_assert(ir_module *m, ir_expr *cond, const char *msg);
ir_stmt *ir_prefetch(ir_module *m, ir_buffer *b, ir_expr **idx, int n);

/* Recomputes a block's reads and writes from the loads and stores in its
 * init and body (each buffer once, in order of first appearance). */
void ir_block_update_access(ir_module *m, ir_stmt *block);
/* Whether idx[0..n) are block b's iteration variables in order (an access
 * at the block's own element); the index of an iteration variable of one
 * iteration may be 0 instead, as the simplifier leaves it (a batch of 1). */
bool ir_block_own_index(const ir_stmt *b, ir_expr *const *idx, int n);

/* ---------------------------------------------------------------- utilities */

/* Deep copies; variables in `from` are replaced by those in `to` (pairs of
 * length n), others are kept.  Buffers are shared. */
ir_expr *ir_expr_copy(ir_module *m, const ir_expr *e);
ir_expr *ir_expr_subst(ir_module *m, const ir_expr *e, ir_var **from,
                       ir_expr **to, int n);
ir_stmt *ir_stmt_copy(ir_module *m, const ir_stmt *s);
/* A deep copy of s with the variables `from` replaced by copies of `to`
 * (loop, let and iteration variables themselves are kept: bind new ones
 * by substituting before, or rename after). */
ir_stmt *ir_stmt_subst(ir_module *m, const ir_stmt *s, ir_var **from, ir_expr **to, int n);
bool ir_expr_equal(const ir_expr *a, const ir_expr *b);   /* structural */
bool ir_expr_uses_var(const ir_expr *e, const ir_var *v);
bool ir_expr_loads(const ir_expr *e, const ir_buffer *b);   /* a LOAD of b in e */
bool ir_stmt_stores_to(const ir_stmt *s, const ir_buffer *b);   /* a STORE to b below s */
/* The first access to b in s, in program order (a store's indices and value
 * are evaluated before it stores): what decides whether s defines b before
 * reading it (memplan's placed temps, `filled` allocs). */
typedef enum { IR_ACCESS_NONE, IR_ACCESS_LOAD, IR_ACCESS_STORE } ir_access;
ir_access ir_stmt_first_access(const ir_stmt *s, const ir_buffer *b);
bool ir_expr_is_int(const ir_expr *e, int64_t v);         /* INT constant v */

/* Pre-order walks; the callback returns false to skip a node's children. */
typedef bool (*ir_expr_visit_fn)(const ir_expr *e, void *ctx);
typedef bool (*ir_stmt_visit_fn)(const ir_stmt *s, void *ctx);
void ir_expr_walk(const ir_expr *e, ir_expr_visit_fn fn, void *ctx);
/* Visits statements; expr_fn (may be NULL) sees every expression too. */
void ir_stmt_walk(const ir_stmt *s, ir_stmt_visit_fn stmt_fn,
                  ir_expr_visit_fn expr_fn, void *ctx);

/* ---------------------------------------------------------------- text, checks, execution */

/* Printer (ir/printer.c): the textual form of doc/ir.md.  Printing, parsing
 * and printing again gives identical text. */
void ir_print_module(FILE *out, const ir_module *m);
void ir_print_func(FILE *out, const ir_func *f);
void ir_print_stmt(FILE *out, const ir_stmt *s, int indent);
void ir_print_expr(FILE *out, const ir_expr *e);
char *ir_module_to_string(const ir_module *m);      /* malloc'ed; caller frees */

/* Parser (ir/parser.c).  `filename` is used in diagnostics; returns NULL
 * after reporting every error through diag (see ir/diag.h). */
struct diag;
ir_module *ir_parse(const char *filename, const char *text, size_t len,
                    struct diag *d);

/* Verifier (ir/verify.c): structural and type rules of doc/ir.md.  Reports
 * "internal error: verifier: ..." diagnostics naming the function, the pass
 * (`after`, may be NULL) and the offending node; returns false on failure. */
bool ir_verify(const ir_module *m, const char *after, struct diag *d);
/* The same rules for IR read from a user's file (a .tir input): a broken
 * rule is the user's error, "FILE: error: in @f: ...", not an internal one. */
bool ir_verify_input(const ir_module *m, const char *file, struct diag *d);
/* The dtype rules of one expression node (shared by verifier and parser):
 * sets *result to the node's dtype, or writes why it is ill-typed. */
bool ir_expr_check_node(const ir_expr *e, ir_dtype *result, char *msg, size_t size);
/* The lane rules of one node (children's lanes set already): sets *lanes
 * to the node's lanes (1 for a scalar), or writes why they do not fit. */
bool ir_expr_check_lanes(const ir_expr *e, int *lanes, char *msg, size_t size);
/* Whether a function holds vector IR (vector expressions or stepped loops). */
bool ir_func_has_vectors(const ir_func *f);
/* A `vectorized` loop with constant bounds as vector IR for vectors of
 * vector_bytes bytes (ir/vectorize.c): chunks stepping by the lanes and a
 * scalar tail, built in m; NULL when the loop's body does not fit. */
ir_stmt *ir_vectorize_loop(ir_module *m, const ir_stmt *st, int vector_bytes);
/* Whether two buffers have the same number of elements (exact, GMP). */
bool ir_buffer_same_numel(const ir_buffer *a, const ir_buffer *b);

#endif
