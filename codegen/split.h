/* codegen/split.h — a generated C file cut into its prelude and its
 * kernels, with the kernels that differ only in names found once.
 *
 * cg_compile uses it to build a model's kernels as several translation
 * units compiled side by side and cached one by one (codegen/compile.c):
 *
 *   prelude            everything before the first kernel (includes, vector
 *                      types, helpers, the globals tec_num_threads ...);
 *   prelude_extern     the same with each global object's definition made
 *                      an extern declaration, for every unit but one;
 *   units[i]           one kernel: its exported function and the static
 *                      functions before it (a kernel's _body), in the
 *                      order of the file.
 *
 * Each unit also comes as `shared`: its text with the exported symbol
 * renamed to `name` (tec_c_<16 hex digits of the SHA-256 of the unit with
 * every name the unit gives replaced by a placeholder>), its static
 * functions to name_s<N>, its parameters to tec_a<N>, and its comments
 * removed.  Two kernels whose code differs only in those names (the
 * repeated blocks of a ResNet or a transformer) have the same `shared`
 * text, so one compiled copy serves both, and a kernel of another model
 * (or of an edited one) with the same code has the same name too.  The
 * exported symbol then becomes a one-line forwarder, `glue`, to `name`.
 * Kernels whose shared texts differ only in integer constants where any
 * value means the same (a loop bound, a stride) form a family: one
 * function with those constants as int parameters (tec_p<N>), named after
 * its text, that each member's forwarder calls with its own values
 * (split.c, "families"; `first` is then the family's first member).
 * A forwarder that adds no argument (`plain`) need not be compiled at all:
 * the link may define the exported symbol as `name` itself.
 *
 * The cut relies on the layout cg_emit_c writes (doc/codegen.md): after
 * the prelude, only kernels, each `int32_t tec_k...(...)` optionally after
 * `static` functions, and comments.  Anything else (a file written by
 * hand, a future layout) makes cg_split_c return false and the caller
 * compiles the file whole, as before. */
#ifndef TEC_CODEGEN_SPLIT_H
#define TEC_CODEGEN_SPLIT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cg_unit {
    char *symbol;      /* the exported kernel, e.g. tec_k3_layer1_0_conv1 */
    char name[24];     /* tec_c_<16 hex>: the symbol of the shared code */
    char *shared;      /* the unit, renamed (see above) */
    char *glue;        /* "int32_t name(PARAMS);\nint32_t symbol(PARAMS) { return name(a, b); }\n" */
    char *proto;       /* "int32_t symbol(PARAMS);\n": the exported kernel's declaration */
    bool plain;        /* the forwarder passes its parameters on and nothing else (no
                          profiling ids, no family constants): `name` takes the same
                          arguments, so `symbol` may be an alias of it instead */
    int first;         /* index of the first unit with the same name (itself if none before) */
    char *prelude;     /* units that are first: what of prelude_extern the unit
                          needs (# lines, and the declarations and helpers it
                          uses); NULL for the others */
    unsigned char *need;   /* units that are first: need[i] for each prelude item
                              it needs (NULL: all of them); NULL for the others */
    bool intrin;       /* it uses a name an intrinsics header (<immintrin.h>) may
                          declare, so its prelude includes that header */
    size_t start, end; /* the unit in the file */
} cg_unit;

typedef struct cg_csplit {
    char *prelude, *prelude_extern;
    char **pre_items;     /* [npre] the prelude's items (# lines, declarations with
                             the globals extern, helpers), comments dropped */
    bool *pre_include;    /* [npre] the item includes an intrinsics header */
    int npre;             /* 0 when the prelude was not cut (too many items) */
    char *glue_prelude;   /* what the unit of the globals and forwarders needs: the
                             prelude's # lines and declarations (globals defined),
                             no helper function */
    cg_unit *units;
    int n, cap;
    int distinct;      /* units whose first is themselves */
} cg_csplit;

/* Most prelude items the cut tells apart (a larger prelude goes whole
 * into every unit). */
#define CG_SPLIT_MAX_ITEMS 512

/* Cuts src; false (and *out empty) when src is not in cg_emit_c's layout
 * or memory runs out. */
bool cg_split_c(const char *src, cg_csplit *out);
/* The prelude of one translation unit holding the distinct units
 * units[0..n) (indices into sp->units, each its own first): the items any
 * of them needs, in the prelude's order, the intrinsics header only if one
 * of them uses it.  For n == 1 it equals that unit's `prelude`.
 * Malloc'ed; NULL when memory runs out. */
char *cg_split_prelude(const cg_csplit *sp, const int *units, int n);
void cg_split_free(cg_csplit *s);

#endif
