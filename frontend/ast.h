/* frontend/ast.h — the syntax tree of .te programs.
 *
 * The parser builds these nodes in one arena per compilation (so a syntax
 * error never leaks: the arena is freed whole).  Every node carries a span:
 * where it starts (line and column for messages) and the byte range it
 * covers, so diagnostics can quote the user's own text ("read of
 * x[n, c, p*stride + r - pad, ...]").
 */
#ifndef TEC_FE_AST_H
#define TEC_FE_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/diag.h"
#include "ir/ir.h"

typedef struct fe_file fe_file;
typedef struct fe_expr fe_expr;
typedef struct fe_stmt fe_stmt;
typedef struct fe_def fe_def;

/* A piece of source: start position (1-based line and column, tabs count
 * as one column) and the byte range [off, end) in file->text. */
typedef struct fe_span {
    const fe_file *file;
    int line, col;
    int off, end;
} fe_span;

/* One source file: the main program or an imported one. */
struct fe_file {
    const char *name;      /* as shown in messages ("net.te", "lib/nn.te") */
    const char *dir;       /* its directory, for resolving its imports */
    const char *text;
    size_t len;
    fe_stmt **stmts;       /* top-level statements */
    int nstmts;
    bool syntax_ok;        /* parsed without errors */
    int import_state;      /* 0 new, 1 being imported, 2 done (cycle check) */
    bool lets_done;        /* its top-level lets were evaluated */
    struct fe_env *scope;  /* the lets its code sees: its own top-level lets
                              and those of the files it imports (sema) */
};

/* ---------------------------------------------------------------- expressions */

typedef enum {
    FE_E_INT,      /* ival */
    FE_E_FLOAT,    /* fval */
    FE_E_NAME,     /* name */
    FE_E_UNARY,    /* op a */
    FE_E_BINARY,   /* a op b */
    FE_E_COND,     /* c ? a : b */
    FE_E_ACCESS,   /* name[idx...] [else dflt] */
    FE_E_CALL,     /* name(args...) */
    FE_E_CAST      /* dtype(a) */
} fe_expr_kind;

typedef enum {
    FE_OP_ADD, FE_OP_SUB, FE_OP_MUL, FE_OP_DIV, FE_OP_MOD,
    FE_OP_EQ, FE_OP_NE, FE_OP_LT, FE_OP_LE, FE_OP_GT, FE_OP_GE,
    FE_OP_AND, FE_OP_OR, FE_OP_NEG, FE_OP_NOT
} fe_op;

/* A call argument: positional (name NULL) or keyword (`stride=2`). */
typedef struct fe_arg {
    const char *name;
    fe_span span;          /* of the whole argument */
    fe_expr *value;
} fe_arg;

struct fe_expr {
    fe_expr_kind kind;
    fe_span span;          /* the whole expression */
    fe_span opspan;        /* UNARY/BINARY/COND: the operator token */
    int64_t ival;
    double fval;
    const char *name;      /* NAME, ACCESS (tensor), CALL (function) */
    fe_op op;
    fe_expr *a, *b, *c;
    fe_expr **idx;         /* ACCESS */
    int nidx;
    fe_expr *dflt;         /* ACCESS: value when out of range (`else`) */
    fe_arg *args;          /* CALL */
    int nargs;
    ir_dtype dtype;        /* CAST */
    int depth;             /* levels of operators below and at this node (parser) */
};

/* ---------------------------------------------------------------- types */

typedef enum {
    FE_T_TENSOR,   /* dtype[dims] (a bare dtype is rank 0) */
    FE_T_INT,      /* int attribute */
    FE_T_FLOAT     /* float attribute */
} fe_type_kind;

typedef struct fe_type {
    fe_type_kind kind;
    ir_dtype dtype;
    fe_expr **dims;
    int ndims;
    fe_span span;
} fe_type;

/* Default contents of an input or a param. */
typedef enum { FE_INIT_NONE, FE_INIT_UNIFORM, FE_INIT_CONST } fe_init_kind;
typedef struct fe_init {
    fe_init_kind kind;
    fe_expr *lo, *hi;      /* UNIFORM: both; CONST: lo */
    fe_span span;
} fe_init;

/* A def parameter: a tensor (`x: f32[N, C]`) or an attribute
 * (`stride: int = 1`). */
typedef struct fe_param {
    const char *name;
    fe_span span;
    fe_type *type;
    fe_expr *dflt;         /* attributes only; may be NULL */
} fe_param;

/* An output of a def: `-> y: f32[N]`, `-> y`, or one of `-> (v, i: i64[N])`. */
typedef struct fe_output {
    const char *name;
    fe_span span;
    fe_type *type;         /* NULL: inferred (`-> y`) */
} fe_output;

struct fe_def {
    const char *name;
    fe_span span;          /* the name */
    fe_param *params;
    int nparams;
    fe_output *outs;       /* its outputs, in order (at least one) */
    int nouts;
    fe_stmt **body;
    int nbody;
    fe_span body_span;     /* from '{' to '}' */
    bool has_calls;        /* contains `x = op(...)` somewhere */
    bool has_index;        /* contains index statements */
    struct fe_ref *refs;   /* sema's cache: names its body references */
    int nrefs, caprefs;
    bool refs_done;
};

/* ---------------------------------------------------------------- statements */

/* One range of a `where` clause: `r in lo..hi` (index r over [lo, hi)). */
typedef struct fe_range {
    const char *name;
    fe_span name_span;
    fe_expr *lo, *hi;
    fe_span span;          /* the whole `r in lo..hi` */
} fe_range;

typedef enum {
    FE_S_IMPORT,   /* import "path"            name = path */
    FE_S_LET,      /* let name = value */
    FE_S_DEF,      /* def */
    FE_S_INPUT,    /* input name: type [= init] */
    FE_S_OUTPUT,   /* output name [as "str"] */
    FE_S_PARAM,    /* param (or state) name: type [= init] */
    FE_S_INDEX,    /* name[idx] op value */
    FE_S_ASSIGN,   /* name = value [as "str"]; name, name2 ... = call */
    FE_S_FOR,      /* for name in lo..hi { body } */
    FE_S_IF,       /* if cond { body } [else { orelse }] */
    FE_S_ASSERT,   /* assert cond [, "str"]     as = the message */
    FE_S_SCHEDULE  /* schedule name { text }    name = a def's name, or
                      (sched_layer) a layer's name; text = the raw body */
} fe_stmt_kind;

typedef enum {
    FE_AS_SET, FE_AS_ADD, FE_AS_MUL, FE_AS_MAX, FE_AS_MIN
} fe_assign_op;

struct fe_stmt {
    fe_stmt_kind kind;
    fe_span span;          /* the whole statement (first line) */
    const char *name;
    fe_span name_span;
    const char **names;    /* ASSIGN of a call's several results: every
                              name (name is names[0]); else NULL */
    fe_span *name_spans;
    int nnames;
    fe_expr *value;
    fe_expr **idx;         /* INDEX: left-hand indices */
    int nidx;
    fe_assign_op op;       /* INDEX */
    fe_span op_span;
    fe_range **ranges;     /* INDEX: its `where` clause */
    int nranges;
    fe_type *type;         /* INPUT, PARAM */
    fe_init init;          /* INPUT, PARAM */
    bool state;            /* PARAM: declared `state` (not trainable) */
    const char *as;        /* OUTPUT, ASSIGN: decoded string, or NULL;
                              ASSERT: its message, or NULL */
    fe_span as_span;
    fe_expr *lo, *hi;      /* FOR */
    fe_expr *cond;         /* IF, ASSERT */
    fe_stmt **body;        /* FOR, IF */
    int nbody;
    fe_stmt **orelse;      /* IF */
    int norelse;
    fe_def *def;           /* DEF */
    fe_file *imported;     /* IMPORT: the resolved file, NULL if not found */
    bool sched_layer;      /* SCHEDULE: named by a layer (a string), not a def */
    const char *text;      /* SCHEDULE: the body between the braces, as written */
    fe_span text_span;     /* SCHEDULE: the body, from the character after '{' */
};

/* ---------------------------------------------------------------- helpers */

/* A growable list of pointers in an arena (parser semantic values). */
typedef struct fe_vec {
    void **v;
    int n, cap;
} fe_vec;

fe_vec *fe_vec_new(ir_arena *a);
void fe_vec_push(ir_arena *a, fe_vec *v, void *item);

fe_expr *fe_expr_new(ir_arena *a, fe_expr_kind k, fe_span sp);
fe_stmt *fe_stmt_new(ir_arena *a, fe_stmt_kind k, fe_span sp);

/* The span from the start of a to the end of b. */
fe_span fe_span_join(fe_span a, fe_span b);
/* The diag location of a span. */
diag_loc fe_loc(fe_span sp);
/* The source text of a span, whitespace runs (newlines included) collapsed
 * to one space; in arena a. */
const char *fe_span_text(ir_arena *a, fe_span sp);
/* Is `name` a built-in view op (reshape, flatten, permute, transpose,
 * slice; doc/language.md section 7.1)? */
bool fe_is_view_op(const char *name);

const char *fe_op_text(fe_op op);           /* "+", "&&", ... */
const char *fe_assign_op_text(fe_assign_op op);   /* "+=", "max=" ... */

#endif
