/* frontend/env.h — the ground floor of elaboration (internal to frontend/):
 * the state of a compilation and its types, and what every other part
 * needs of it: diagnostics, name tables, scopes, compile-time evaluation.
 *
 * Elaboration runs the program at compile time: lets, loops and ifs are
 * evaluated, every call binds the sizes of its arguments and instantiates
 * its def under a hierarchical layer name.  Index statements are analysed
 * per instance (their ranges depend on the bound sizes) into typed kernel
 * statements (fe_kstmt), collected into stages; a stage is lowered to one
 * IR function and called from the graph.  The files, each importing only
 * the ones below it (tools/check-layers.sh checks it):
 *
 *   compile.c  fe_compile: files, imports, -D, the driver of the phases
 *   sema.c     statements, calls, layers, schedules (sema.h: fe_elaborate)
 *   kernel.c   index statements: index variables, ranges, types (kernel.h)
 *   view.c     reshape, permute, slice ... as views (view.h)
 *   stage.c    which temporaries escape, layers, graph buffers, closing a
 *              stage into a function and a call (stage.h)
 *   lower.c    a stage to an IR function (lower.h)
 *   env.c      this header: diagnostics, names, scopes, evaluation
 */
#ifndef TEC_FE_ENV_H
#define TEC_FE_ENV_H

#include "frontend/ast.h"
#include "frontend/frontend.h"

/* A hash table from names to pointers (graph buffers, functions, layers
 * of a big network are looked up once per layer: no linear scans). */
typedef struct fe_map {
    const char **keys;     /* NULL: empty; fe_map_tomb: deleted */
    void **vals;
    int cap, n;            /* n counts live and deleted slots */
} fe_map;

/* key's value, or NULL; fe_map_put adds or replaces it (keys and tables
 * live in a, key is not copied). */
void *fe_map_get(const fe_map *m, const char *key);
void fe_map_put(ir_arena *a, fe_map *m, const char *key, void *val);

typedef struct fe_stage fe_stage;
typedef struct fe_inst fe_inst;
typedef struct fe_view fe_view;

/* A tensor during elaboration: a graph value (program input, param, call
 * result) or a temporary defined by an index statement of an open stage. */
typedef struct fe_tensor {
    const char *name;      /* the source name that defined it */
    ir_dtype dtype;
    int ndim;
    int64_t *shape;
    ir_buffer *buf;        /* graph buffer; NULL while local to a stage */
    fe_stage *stage;       /* the stage defining it, while that is open */
    fe_span loc;           /* where it was defined */
    bool dead;             /* local of a closed stage that nobody needed */
    ir_buffer *fbuf;       /* lowering scratch: its buffer in the function */
    fe_view *view;         /* a view: no storage of its own (buf is NULL) */
    struct fe_tensor *shapes;  /* a graph value: its storage seen under
                              other shapes (the srcs of its views), chained
                              through their `shapes` */
    struct fe_tensor *reshape_of;  /* one of those: the graph value */
} fe_tensor;

/* A view (view.c): a tensor that reads another one's storage through
 * rewritten indices, with no copy.  Element [i0, i1, ...] of the view is
 * element [off[m] + sum_j coef[m * ndim + j] * i_j] (m = 0 .. src->ndim-1)
 * of `src`: the storage of a graph value, under that value's shape or under
 * another one of the same element count (a reshape costs nothing: a call
 * may pass a buffer to a parameter of another shape, doc/ir.md). */
struct fe_view {
    fe_tensor *src;        /* has a graph buffer; never a view */
    const char *src_name;  /* src's name in the kernels that read it */
    int64_t *off;          /* src->ndim */
    int64_t *coef;         /* src->ndim x the view's ndim */
    const char *op;        /* the op that made it: reshape, permute, ... */
};

typedef enum { FE_V_INT, FE_V_FLOAT, FE_V_TENSOR, FE_V_POISON } fe_vkind;

/* A compile-time value.  POISON stands for the result of something that
 * already failed: its uses are not reported again. */
typedef struct fe_value {
    fe_vkind kind;
    int64_t i;
    double f;
    fe_tensor *t;
} fe_value;

/* What a name is bound to, for messages and for the rules of index
 * statements (index variables are the names bound to nothing). */
typedef enum {
    FE_B_LET, FE_B_ATTR, FE_B_SIZE, FE_B_LOOP,
    FE_B_INPUT, FE_B_PARAM, FE_B_VALUE, FE_B_LOCAL
} fe_bkind;

typedef struct fe_binding {
    const char *name;      /* NULL: removed (a finished loop's variable) */
    fe_bkind kind;
    fe_value v;
    fe_span loc;
    const char *origin;    /* SIZE: "A: f32[64, 32]", where it was bound */
} fe_binding;

/* A scope: a def instance's names, or the program's, whose parent is the
 * scope of the file the def (or the program) is written in; or that file
 * scope itself (file set, no parent): the file's top-level lets and those
 * of the files it imports. */
typedef struct fe_env {
    fe_binding *b;
    int n, cap;
    fe_map index;          /* name -> index in b + 1, once b is long */
    struct fe_env *parent;
    const fe_file *file;   /* a file's scope: that file */
} fe_env;

/* ---------------------------------------------------------------- kernels */

typedef enum {
    FE_K_INT, FE_K_FLOAT, FE_K_VAR, FE_K_LOAD, FE_K_BIN, FE_K_UN,
    FE_K_SELECT, FE_K_CALL, FE_K_CAST
} fe_kkind;

/* How a read's index is checked against its dimension. */
typedef enum { FE_CHK_NONE, FE_CHK_GUARD, FE_CHK_ASSERT } fe_check;

/* "Flexible" constants (literals, sizes, attributes, index variables used
 * as values) take the dtype their context needs. */
typedef enum { FE_FLEX_NONE, FE_FLEX_INT, FE_FLEX_FLOAT } fe_flex;

/* A typed kernel expression (the right side of an index statement). */
typedef struct fe_kexpr {
    fe_kkind kind;
    ir_dtype dtype;
    fe_flex flex;
    int64_t ival;          /* INT */
    double fval;           /* FLOAT */
    int var;               /* VAR: index into the statement's vars */
    fe_tensor *t;          /* LOAD */
    struct fe_kexpr **args;/* LOAD indices, CALL arguments */
    int nargs;
    fe_check *check;       /* LOAD: per dimension */
    struct fe_kexpr *dflt; /* LOAD: value when out of range */
    fe_op op;              /* BIN, UN (DIV and MOD resolve by dtype) */
    ir_expr_kind irop;     /* BIN: MIN/MAX when op is not meaningful */
    bool use_irop;
    ir_intrin fn;          /* CALL */
    struct fe_kexpr *a, *b, *c;   /* operands; SELECT c ? a : b */
    const char *text;      /* LOAD: source text of the read */
    const char *tname;     /* LOAD: the tensor's name there */
    const char **idx_text; /* LOAD: each index's source text */
} fe_kexpr;

/* An index variable of one statement: it runs over [lo, lo + extent)
 * (lo is 0 unless a `where` clause says otherwise). */
typedef struct fe_kvar {
    const char *name;
    int64_t lo, extent;
    bool reduce;
} fe_kvar;

/* One analysed index statement: T[lhs vars] op= rhs. */
typedef struct fe_kstmt {
    fe_tensor *lhs;
    int *lhs_vars;
    int nlhs;
    fe_kexpr *scatter;     /* a write at computed indices: a LOAD-shaped
                              node whose args and checks are the left
                              side's indices (NULL: T[lhs vars]) */
    fe_assign_op op;
    fe_kexpr *rhs;
    fe_kvar *vars;         /* the LHS vars in order, then the reduced ones
                              in order of first appearance */
    int nvars;
    fe_span span;
} fe_kstmt;

/* A tensor a stage reads or writes, under the name the stage uses. */
typedef struct fe_sarg {
    fe_tensor *t;
    const char *name;
} fe_sarg;

/* A run of consecutive index statements: one IR function. */
struct fe_stage {
    fe_kstmt **stmts;
    int nstmts, capstmts;
    fe_tensor **defined;   /* its temporaries, in definition order */
    int ndefined, capdefined;
    fe_sarg *uses;         /* graph tensors it reads, first use first */
    int nuses, capuses;
    fe_span loc;           /* its first statement */
    int end_off;           /* end of its last statement */
    bool poisoned;         /* a statement failed: not lowered */
};

/* Names referenced in a body, for deciding which temporaries a later
 * statement (or the caller) still needs. */
typedef struct fe_ref {
    const char *name;
    int off;
} fe_ref;

/* A def's output as one call sees it: its declared type evaluated with
 * the bound sizes, or not typed (`-> y`: the body decides). */
typedef struct fe_outtype {
    bool typed;
    ir_dtype dtype;
    int ndim;
    int64_t *shape;
} fe_outtype;

/* One def instance (a layer), or the program itself (def NULL). */
struct fe_inst {
    fe_def *def;
    const char *layer;     /* full hierarchical name; "" for the program */
    const char *op;        /* the def's name; "main" for the program */
    fe_span call;          /* the call site */
    fe_env *env;
    fe_stage *stage;       /* the open stage, if any */
    fe_sarg *inputs;       /* the def's tensor parameters */
    int ninputs, capinputs;
    fe_sarg *weights;      /* its `param`s, in declaration order */
    int nweights, capweights;
    struct fe_outtype *outs;  /* per output of the def, its declared type */
    fe_ref *refs;
    int nrefs;
    fe_inst *parent;
    int depth;
    bool stopped;          /* an assert failed: the rest is not elaborated */
};

/* The whole compilation. */
typedef struct fe_ctx {
    ir_arena *a;           /* syntax tree and scratch */
    ir_module *m;
    diag *d;
    const fe_options *o;
    fe_file *main;
    fe_file **files;       /* every file read */
    int nfiles, capfiles;
    fe_def **defs;
    int ndefs, capdefs;
    fe_map layers;         /* layer name -> fe_span * where it was named */
    fe_map bufs;           /* graph buffer name -> ir_buffer * */
    fe_map funcs;          /* function name -> ir_func * */
    fe_map sched_defs;     /* def name -> its `schedule` statement */
    fe_map sched_layers;   /* layer name -> its `schedule` statement */
    fe_stmt **scheds;      /* the accepted schedules, in the order they
                              are read (an imported file's at its import) */
    int nscheds, capscheds;
    diag_loc *reported;    /* locations already reported (no repeats
                              when a def is instantiated many times) */
    int nreported, capreported;
    bool *define_used;
    int errors;            /* errors reported by elaboration */
    fe_inst *inst;         /* the innermost instance */
    int64_t loop_iterations;   /* of compile-time for loops, all together */
    int64_t calls;             /* calls of defs elaborated, all together */
} fe_ctx;

/* ---------------------------------------------------------------- env.c */

/* Reports an error at sp (once per location); inside a def instance a note
 * names the layer and the call site.  False if it was reported before (so
 * notes that would follow it are left out too). */
bool fe_error(fe_ctx *c, fe_span sp, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void fe_note(fe_ctx *c, fe_span sp, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "file:line:col" of sp. */
const char *fe_loc_str(fe_ctx *c, fe_span sp);

void fe_map_del(fe_map *m, const char *key);

/* A scope whose names fall back to parent's. */
fe_env *fe_env_new(fe_ctx *c, fe_env *parent);
/* name in e itself, or in e and its parents. */
fe_binding *fe_env_find_local(fe_env *e, const char *name);
fe_binding *fe_env_find(fe_env *e, const char *name);
fe_binding *fe_env_bind(fe_ctx *c, fe_env *e, const char *name, fe_bkind k,
                        fe_value v, fe_span loc);
const char *fe_bkind_name(fe_bkind k);
/* " (did you mean 'x'?)" for a close name in scope, or "". */
const char *fe_suggest(fe_ctx *c, fe_env *e, const char *name);

/* A compile-time float as a message shows it: "1.5", "1000.0" (never
 * spelled like an integer). */
const char *fe_float_str(ir_arena *a, double f);
/* "f32[64, 32]" */
const char *fe_shape_str(ir_arena *a, ir_dtype t, int ndim, const int64_t *shape);
/* t's type, "f32[64, 32]". */
const char *fe_tensor_str(fe_ctx *c, const fe_tensor *t);
/* The element count of a shape, or -1 if it does not fit int64. */
int64_t fe_checked_numel(int ndim, const int64_t *shape);
/* A compile-time value as a message shows it. */
const char *fe_value_str(fe_ctx *c, fe_value v);

static inline double fe_as_float(fe_value v) { return v.kind == FE_V_INT ? (double)v.i : v.f; }
static inline bool fe_truthy(fe_value v) { return v.kind == FE_V_INT ? v.i != 0 : v.f != 0; }
static inline fe_value fe_tensor_value(fe_tensor *t)
{
    fe_value v = {.kind = FE_V_TENSOR, .t = t};
    return v;
}
static inline fe_value fe_poison(void)
{
    fe_value v = {.kind = FE_V_POISON};
    return v;
}

/* Evaluates a compile-time expression; false after reporting an error
 * (or silently when it uses a poisoned value). */
bool fe_eval(fe_ctx *c, fe_env *e, const fe_expr *x, fe_value *out);
/* Evaluates an expression that must be an integer (`what` names it in the
 * error). */
bool fe_eval_int(fe_ctx *c, fe_env *e, const fe_expr *x, const char *what, int64_t *out);
/* "H = 2, pad = 0" for the compile-time names in x (first use first). */
const char *fe_values_of_names(fe_ctx *c, fe_env *e, const fe_expr *x);

fe_tensor *fe_new_tensor(fe_ctx *c, const char *name, ir_dtype t, int ndim,
                         const int64_t *shape, fe_span loc);
/* What holds t's elements: t itself, or the src of t's view. */
fe_tensor *fe_storage(fe_tensor *t);
/* The math function a call names (in a kernel or a compile-time
 * expression), with its arity; false if there is none of that name. */
bool fe_math_fn(const char *name, int *arity);

#endif
