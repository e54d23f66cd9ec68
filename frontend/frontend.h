/* frontend/frontend.h — from .te source text to an IR module.
 *
 * The frontend parses a program and its imports, elaborates it (evaluates
 * lets, loops and ifs, binds the sizes of every call, instantiates layers
 * with hierarchical names) and lowers every kernel stage to an IR function
 * called from the module's graph.  The language is described in
 * doc/language.md.
 */
#ifndef TEC_FRONTEND_H
#define TEC_FRONTEND_H

#include <stddef.h>

#include "ir/diag.h"
#include "ir/ir.h"

/* -D NAME=VALUE: overrides the top-level `let NAME`. */
typedef struct fe_define {
    const char *name;
    const char *value;
} fe_define;

/* What the program's meaning depends on besides its text and the options:
 * the files the import resolution looked at (driver/runcache.h keys on
 * them).  FE_DEP_MAIN: the main file's canonical path (import cycles are
 * found by canonical path); FE_DEP_ABSENT: a path tried for an import that
 * did not open; FE_DEP_PRESENT: one that opened, a file already read (its
 * canonical path); FE_DEP_READ: one that opened and was read (its
 * canonical path and the text the frontend used). */
typedef enum fe_dep_kind { FE_DEP_MAIN, FE_DEP_ABSENT, FE_DEP_PRESENT, FE_DEP_READ } fe_dep_kind;
typedef void (*fe_dep_fn)(void *ctx, fe_dep_kind kind, const char *path, const char *canonical,
                          const char *text, size_t len);

typedef struct fe_options {
    const char *const *include_dirs;  /* searched for `import "x.te"` after
                                         the importing file's directory */
    int ninclude;
    const fe_define *defines;
    int ndefines;
    /* The main file's imports are looked for in include_dirs alone, not
     * in its directory: for a program generated from another file (an
     * imported ONNX model, whose `import "nn.te"` means tec's op library,
     * not a file of that name beside the model). */
    bool imports_from_includes_only;
    fe_dep_fn on_dep;    /* when set, told every dependency in the order met */
    void *dep_ctx;
} fe_options;

/* Parses and elaborates a .te program into an IR module (graph + one
 * function per layer stage).  Returns NULL after reporting every error
 * through d.  `filename` is "<stdin>" for standard input; it names the
 * file in messages and is the base for relative imports.  `o` may be NULL.
 * The text is registered with diag_add_source(d, ...) so carets show the
 * line; it must outlive d as usual.  Imported files are read, shown in
 * messages while fe_compile runs, and released before it returns. */
ir_module *fe_compile(const char *filename, const char *text, size_t len,
                      const fe_options *o, diag *d);

/* The most calls of defs a program may make in all (each makes a layer;
 * the zoo's largest makes a few hundred; calls in calls multiply), and so
 * the most nodes an imported ONNX graph may have. */
#define FE_MAX_CALLS 10000

/* The most bytes a source file (a program, an import, a .tir) may have. */
#define FE_MAX_SOURCE_BYTES ((size_t)64 << 20)

/* Reads a whole source file ("-": standard input) into a NUL-terminated
 * malloc'ed buffer, or returns NULL with errno set: EISDIR for a
 * directory, EFBIG past FE_MAX_SOURCE_BYTES (an endless /dev/zero stops
 * there), or the read's own error. */
char *fe_read_source(const char *path, size_t *len);

/* The reason fe_read_source failed, for "cannot read FILE: %s". */
const char *fe_read_error(int err);

#endif
