/* codegen/codegen.h — IR to C, the C compiler and the kernel cache, and
 * loading the compiled kernels with dlopen + libffi.
 *
 *   char *src = cg_emit_c(m, target, d);            IR module -> C text
 *   char *so  = cg_compile(src, &opts, d);          C text -> cached .so
 *   cg_library *lib = cg_load(so, m, d);            .so -> callable kernels
 *   cg_set_threads(lib, n);                         threads of parallel loops
 *   cg_call(lib, i, data, err, sizeof err);         run m->funcs[i]
 *   cg_unload(lib);
 *
 * Calling convention of a kernel (doc/codegen.md): m->funcs[i] becomes
 *     int32_t SYMBOL(T0 *restrict p0, T1 *restrict p1, ...)
 * with SYMBOL = cg_symbol_name(m, i), one pointer per buffer parameter in
 * parameter order (row-major storage of the param's dtype; read-only params
 * are `const`).  Parameters must not alias each other.  It returns 0, or a
 * failure code: 1..A for the function's A asserts (numbered in the pre-order
 * of ir_stmt_walk), A+1 for "out of memory", A+2 for an integer division by
 * zero, A+3 for a float -> integer cast out of the target's range, A+4 for
 * an index out of its dimension (the last three are checked, as the
 * interpreter checks them, instead of being C's undefined behaviour; the
 * index only where it is not proven in range, see cg_unproven_accesses).
 * cg_failure_message() turns a code into text.
 */
#ifndef TEC_CODEGEN_H
#define TEC_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/target.h"
#include "ir/diag.h"
#include "ir/ir.h"

/* ---------------------------------------------------------------- IR -> C */

/* The C source of every function of m (malloc'ed; the caller frees), or
 * NULL after a diagnostic: an error for what the C backend does not support
 * (f16/bf16 buffers), an internal error for malformed IR.  Vectorized
 * loops use t's vector width (t NULL: 16-byte vectors, the x86-64 baseline).
 * `unchecked`: no run-time index checks (--unchecked). */
char *cg_emit_c(const ir_module *m, const cg_target *t, bool unchecked, diag *d);
/* The same with internal linkage: the kernels, tec_num_threads and the cast
 * globals are static, for a file that includes them in a translation unit
 * of its own (the ahead-of-time libraries of runtime/aot.c). */
char *cg_emit_c_static(const ir_module *m, const cg_target *t, bool unchecked, diag *d);

/* The C symbol of m->funcs[index]: "tec_k<index>_<name>" with every
 * character of the name that is not a letter, digit or '_' replaced by '_'
 * (e.g. "tec_k3_layer1_0_conv1").  Unique by the index.  Malloc'ed. */
char *cg_symbol_name(const ir_module *m, int index);

/* The accesses of f whose index codegen cannot prove in range at compile
 * time (codegen/bounds.c): one site per (load or store, dimension), in a
 * fixed order (a walk of f), so the emitter and the loader agree on the
 * numbers.  The kernel checks these indices at run time unless built
 * unchecked; a failed check returns the index code (see the header
 * comment) with the site and the index value in the library's
 * thread-local tec_index_site and tec_index_value. */
typedef struct cg_bound_site {
    const void *access;       /* the IR_LOAD expression or IR_S_STORE statement */
    const ir_buffer *buf;
    int dim;
    bool store;
} cg_bound_site;
typedef struct cg_bound_sites {
    cg_bound_site *items;     /* malloc'ed; the caller frees */
    int n, cap;
    bool oom;
} cg_bound_sites;
cg_bound_sites cg_unproven_accesses(const ir_func *f);
/* The site number of (access, dim), or -1 when it is proven in range. */
int cg_bound_site_of(const cg_bound_sites *s, const void *access, int dim);

/* Number of ASSERT statements of f, and the message of the k-th (1-based,
 * pre-order of ir_stmt_walk), or NULL when k is out of range. */
int cg_assert_count(const ir_func *f);
const char *cg_assert_message(const ir_func *f, int k);

/* The failure codes beyond the asserts (see the header comment). */
int32_t cg_oom_code(const ir_func *f);
int32_t cg_divzero_code(const ir_func *f);
int32_t cg_cast_code(const ir_func *f);
int32_t cg_index_code(const ir_func *f);

/* Writes the one-line message for a kernel's nonzero return code, in the
 * interpreter's format ("in @f: assert failed: MSG", "in @f: out of
 * memory", "in @f: integer division by zero", ...). */
void cg_failure_message(const ir_func *f, int32_t code, char *buf, size_t len);
/* The same from the parts a loaded library keeps: detail is the message
 * of assert `code` when 1 <= code <= nasserts, and for the cast code the
 * interpreter's words for the cast that failed (ir_cast_failure), or NULL
 * when not known. */
void cg_format_failure(const char *func_name, int nasserts, int32_t code, const char *detail,
                       char *buf, size_t len);

/* ---------------------------------------------------------------- C -> shared object */

/* How to run the C compiler and where to keep what it builds.  The command
 * is  CC OPT_FLAGS -std=gnu11 -fPIC -shared -ffp-contract=X -fno-math-errno
 * -fwrapv -fopenmp [-march=M] -o OUT SRC -lmvec -lm  with X = off when the
 * last -O of opt_flags is below -O2 (results equal the interpreter's bit
 * for bit) and fast from -O2 on (a*b+c may be one fused multiply-add). */
typedef struct cg_options {
    const char *cc;         /* NULL: $CC from the environment, else TEC_DEFAULT_CC (config.h) */
    const char *opt_flags;  /* e.g. "-O2"; split on spaces into argv */
    const char *cache_dir;  /* NULL: $XDG_CACHE_HOME/tec or $HOME/.cache/tec */
    bool verbose;           /* print the compiler command line to stderr */
    bool no_cache;          /* build in a private temp dir, removed once loaded */
    const cg_target *target;   /* NULL: no -march (the compiler's default,
                                  usually the x86-64 baseline); else
                                  -march=target->march, and the target's name
                                  and -march value are in the cache key */
    int cc_timeout;         /* seconds the compiler may run before it is
                               stopped (an error); 0: CG_DEFAULT_CC_TIMEOUT,
                               negative: no limit */
    bool unchecked;         /* cg_build: no run-time index checks */
    const ir_module *module;   /* the module the C source was made from, or NULL:
                                  its functions with op "prepack" (run once, when
                                  the weights load) are built at -O1 when the
                                  others are built at -O2 or above */
} cg_options;

#define CG_DEFAULT_CC_TIMEOUT 600

/* Builds a shared object from C source; returns its path (malloc'ed) or
 * NULL after a diagnostic.  With the cache, the path is the cache entry
 * (held open until cg_load, which loads it through the open file if a
 * trim of the cache removed it first: codegen/cache.h), or on a full disk
 * one in a temporary directory as with no_cache; a cached entry is reused
 * only if it loads.  C from cg_emit_c of 32 KiB or
 * more is built as one translation unit per distinct kernel, compiled in
 * parallel and cached one by one (codegen/split.h, doc/codegen.md).  With no_cache, the path lies in
 * a private temporary directory that cg_load() (or process exit) removes. */
char *cg_compile(const char *c_source, const cg_options *o, diag *d);

/* A library of its own at out_path (--emit=lib, runtime/aot.c): the
 * kernels of `kernels` (cg_split_c of cg_emit_c's source) built as a run's
 * are, one translation unit per distinct kernel, from and into the kernel
 * cache (without it, beside out_path, then removed), and extra_c (the
 * library's own code, never cached), linked into a shared object (a path
 * ending in .so) whose only exported symbols are exports[0..nexports), or
 * a static archive (.a) of one object in which every other symbol is
 * local (a partial link, cc -r, and objcopy), so that two such libraries
 * link into one program.  False after a diagnostic. */
struct cg_csplit;
bool cg_compile_library(const struct cg_csplit *kernels, const char *extra_c,
                        const char *out_path, const char *const *exports, int nexports,
                        const cg_options *o, diag *d);

/* Compiles c_source into exactly `out_path` (for --emit=so -o FILE); the
 * file is replaced atomically.  No cache.  A path ending in ".a" gets a
 * static library instead: the object file (-c instead of -shared, without
 * the libraries) in an archive made by `ar rcs`. */
bool cg_compile_to(const char *c_source, const char *out_path, const cg_options *o, diag *d);

/* The kernel cache directory o->cache_dir or the default one (malloc'ed),
 * or NULL with a diagnostic when neither XDG_CACHE_HOME nor HOME is set. */
char *cg_cache_dir(const cg_options *o, diag *d);

/* Removes the no-cache temporary directory holding so_path, if so_path is
 * one that cg_compile made, and lets go of the cache entry so_path that
 * cg_compile held open; otherwise does nothing.  cg_load calls it. */
void cg_release_temp(const char *so_path);

/* ---------------------------------------------------------------- loading and calling */

typedef struct cg_library cg_library;

/* dlopen(RTLD_NOW | RTLD_LOCAL), dlsym every function's symbol, prepare one
 * ffi_cif per distinct kernel signature.  m only has to live during the
 * call: the library copies the names and messages it needs. */
cg_library *cg_load(const char *so_path, const ir_module *m, diag *d);

/* The kernel table of a loaded library: what cg_load took from the module
 * (each kernel's symbol and name, parameter count, assert messages and the
 * indices it checks), as text (malloc'ed, *len bytes), or NULL when out of
 * memory.  cg_load_table loads the library from it without the module (the
 * run cache keeps it: driver/runcache.h); a table that is not well formed
 * is an internal error. */
char *cg_library_table(const cg_library *lib, size_t *len);
cg_library *cg_load_table(const char *so_path, const char *table, size_t len, diag *d);

/* Calls the compiled function m->funcs[index] with data[i] = storage of its
 * param i.  Returns true, or false with a message in err (the assert
 * message, "out of memory", ...).  Thread-safe: concurrent calls share only
 * read-only state. */
bool cg_call(cg_library *lib, int func_index, void *const *data, char *err, size_t errlen);

/* Sets the number of threads the library's parallel loops run on (its
 * exported `int tec_num_threads`; n is clamped to 1..CG_MAX_THREADS).
 * Returns whether the library has parallel loops; without them it does
 * nothing.  A library starts at 1 thread.  Not while kernels of lib run. */
bool cg_set_threads(cg_library *lib, int n);

void cg_unload(cg_library *lib);

/* Loads the OpenMP runtime that kernels' parallel loops use and keeps it
 * for the life of the process (called before any kernel library is
 * opened; idempotent). */
void cg_pin_openmp_runtime(void);

/* Whether the OpenMP runtime binds its threads, the calling thread
 * included, to processors and keeps them spinning between parallel loops
 * (OMP_PROC_BIND=true, OMP_WAIT_POLICY=active, unless the environment sets
 * them): worth it when parallel loops run on several threads of this
 * thread's team; off by default.  Takes effect only before the runtime
 * loads (the first cg_load). */
void cg_bind_openmp_threads(bool on);

/* What the OpenMP runtime was told about binding and waiting, in words,
 * once it loaded: "bound, waiting spinning", "unbound, waiting asleep: the
 * machine is busy" (cg_bind_openmp_threads asked for binding, but other
 * processes were running as the runtime loaded), "OMP_PROC_BIND and
 * OMP_WAIT_POLICY from the environment" or "libgomp's defaults". */
const char *cg_openmp_policy(void);

/* Emits, compiles and loads m in one step (the usual path); parallel loops
 * get o->target's cores as threads (1 without a target). */
cg_library *cg_build(const ir_module *m, const cg_options *o, diag *d);

#endif
