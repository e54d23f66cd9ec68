/* driver/runcache.h — the run cache: a program's optimized module and its
 * compiled kernels, found without running the frontend, the passes or the
 * C emitter.
 *
 * The kernel cache (codegen/compile.c) is keyed on the C source, so a run
 * that finds its kernels there has still run the passes and the emitter to
 * make that source.  The run cache sits in front of it: its key is
 * everything that determines the compiled result before the frontend runs,
 * but the files the frontend reads --
 *
 *   tec's build (the executable's GNU build ID, else its size and mtime)
 *   and version; the program's text (an ONNX model's imported text), its
 *   name and language (.te, .tir, imported); the -D and -I options (the op
 *   library's folders among them); the -O level, --passes, --profile,
 *   --unchecked; every field of the target (ISA, vector width, cores,
 *   caches) and this CPU's model and flags; the C compiler's words ($CC)
 *   with the size, mtime and inode of each program they name, and the
 *   environment variables the kernel cache keys on --
 *
 * and an entry (CACHE/run/KEY.run, CACHE the kernel cache's folder) holds
 * the rest of what the frontend's result depended on: the files its import
 * resolution looked at (frontend/frontend.h: each path tried that did not
 * open, each that did with its canonical path, the SHA-256 of each file
 * read, the main file's canonical path), all checked again before the
 * entry is used -- a file that changed in any byte, appeared where an
 * import was looked for first, or now is another file misses.  It also
 * holds the frontend's messages (warnings, shown again on a hit), the
 * program's interface (runtime/exec.h), the path of the kernels' shared
 * object in the kernel cache and its kernel table (cg_library_table: what
 * loading needs of the module the C came from), the optimized module, and
 * the same module without function bodies (all a plain run reads; runs
 * that analyze the functions, --profile and --sched, parse the whole
 * one); ended by the SHA-256 of all that.  A damaged entry (its checksum
 * wrong, a field that does not parse), a shared object that is gone or is
 * not the build it names, or an entry or folder someone else could write,
 * is not used: the run compiles as if there were no entry, and writes a
 * new one.  Entries are written atomically (a temporary file, renamed),
 * and count toward the cache folder's size cap; a lookup holds the
 * folder's lock until it has what it uses open, and marks it used
 * (codegen/cache.h).
 * An entry is written only when its modules print back to the same text
 * after parsing, so the run from the cache runs the module the cold run
 * ran. */
#ifndef TEC_DRIVER_RUNCACHE_H
#define TEC_DRIVER_RUNCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "codegen/codegen.h"
#include "driver/options.h"
#include "frontend/frontend.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "runtime/exec.h"
#include "runtime/weight_set.h"

/* A file the frontend's result depends on (frontend/frontend.h). */
typedef struct drv_dep {
    fe_dep_kind kind;
    char *path, *canonical;
    char sha[65];              /* FE_DEP_READ: the text's SHA-256; else "-" */
} drv_dep;

typedef struct drv_runcache {
    char *path;           /* CACHE/run/KEY.run, malloc'ed; NULL: no caching */
    char key[65];
    char content[65];     /* the SHA-256 of the entry used or written ("": none) */
    bool verbose;
    drv_dep *deps;        /* a miss: what the frontend reported (drv_runcache_dep) */
    int ndeps, capdeps;
    bool deps_oom;
    char *messages;       /* the frontend's messages: a miss sets them (malloc'ed) */
    size_t nmessages;     /* for the entry, a hit reads them to show */
    char *iface_names;    /* a hit: the interface's names */
} drv_runcache;

/* Whether a run of these options may use the run cache: a compiled run
 * (not --interp, --no-run, --no-cache, --emit=...), without the options
 * that need the passes to run (--dump-ir, --dump-dir, --dump-schedule,
 * --verify-each). */
bool drv_runcache_applies(const options *o);

/* Computes the key of the program `text` (len bytes; an ONNX model's
 * imported text) read as `lang` ("te", "tir", "onnx": the imported text)
 * for the options o (-I folders complete) and
 * the compiler options co, and the entry's path.  False (and rc->path
 * NULL) when the cache cannot be used (no cache folder, one that others
 * could write; said with --verbose): the run goes on without it. */
bool drv_runcache_key(drv_runcache *rc, const options *o, const char *display,
                      const char *text, size_t len, const char *lang, const cg_options *co);

/* The frontend's fe_dep_fn, ctx a drv_runcache whose key is made: records
 * the dependencies of a miss for its entry. */
void drv_runcache_dep(void *ctx, fe_dep_kind kind, const char *path, const char *canonical,
                      const char *text, size_t len);

/* What a hit gives (all the caller's): the module (without function
 * bodies unless `full` was asked), the kernels loaded, their shared
 * object's path and the program's interface (its names live until
 * drv_runcache_free). */
typedef struct drv_runcache_hit {
    ir_module *m;
    cg_library *lib;
    char *so_path;
    rt_iface iface;
} drv_runcache_hit;

/* The entry of rc's key, when there is one whose dependencies hold: true
 * with *h (and rc->messages, the frontend's messages to show); else false
 * (a damaged entry is removed). */
bool drv_runcache_lookup(drv_runcache *rc, bool full, drv_runcache_hit *h);

/* Writes the entry of rc's key for a cold run: its optimized module m, the
 * library lib loaded from the shared object so_path (a path in the kernel
 * cache), the interface and rc's dependencies and messages.  Failures only
 * skip the entry (said with --verbose). */
void drv_runcache_store(drv_runcache *rc, const ir_module *m, const cg_library *lib,
                        const char *so_path, const rt_iface *iface);

void drv_runcache_free(drv_runcache *rc);

/* The import cache: what the ONNX importer made of a model (the program's
 * text and the weights it keeps in memory), found without importing it.
 * Its key is everything the import reads --
 *
 *   tec's build and version; the model file's bytes (their digest:
 *   runcache.c, digest_bytes); the -D values; each --input's name and its
 *   file's bytes (an input's shape and a small input's values are known
 *   at import) --
 *
 * so a model whose file changed in any byte misses.  The model's digest
 * comes from its stamp (CACHE/run/ID.stamp, ID the SHA-256 of the file's
 * device, inode, size, mtime and ctime) when the file has not changed
 * since it was hashed, else from its bytes (runcache.c says why the
 * identity is enough).  A model that may refer to external data (its file
 * holds the word "location" anywhere, as an external-data entry must) is
 * never cached: those files are not in the key.  An entry
 * (CACHE/run/KEY.import) holds the text, each weight's name, type, shape
 * and place in the weights file (CACHE/run/KEY.weights: every weight,
 * 64-byte aligned, the large ones on pages of their own, mapped on a hit
 * and given to the run without a copy), the weights file's identity when
 * it was written, all of it ended by the SHA-256 of the entry.  Damaged
 * entries, or a weights file that is not the one written with the entry,
 * are removed and the model is imported again; an entry or folder someone
 * else could write is not used.  Only a run that imports its weights into
 * memory uses it (not --weights, --save-weights, --emit=..., --no-cache). */
typedef struct drv_importcache {
    char *path;                /* CACHE/run/KEY.import, malloc'ed; NULL: no caching */
    char *weights_path;        /* CACHE/run/KEY.weights, malloc'ed */
    char key[65];
    bool verbose;
    char identity[160];        /* the model file's when the key was made (IDENTITY_MAX) */
    char **names;              /* [nnames] --input names a hit renamed (as the import
                                  would: `input` becomes `t_input`) */
    int nnames;
    struct drv_pending *pending;   /* a hit's small weights, not handed out yet */
} drv_importcache;

bool drv_importcache_applies(const options *o);

/* Computes the key of o's model (its bytes' digest from its stamp, else
 * read and hashed); false (and ic->path NULL) when the cache cannot be
 * used (said with --verbose): the import goes on without it. */
bool drv_importcache_key(drv_importcache *ic, const options *o);

/* The entry of ic's key: true with the program's text *text (the
 * caller's), the weights put into ws (the small ones by
 * drv_importcache_hand_out) and o's --input entries renamed as
 * the import renamed them (the names live until drv_importcache_free);
 * false when there is none or it cannot be used (ws then holds nothing of
 * it). */
bool drv_importcache_lookup(drv_importcache *ic, options *o, char **text, rt_weight_set *ws);

/* After a hit: the small weights (less than RT_ZALLOC_MAP bytes, borrowing
 * their bytes from the mapping until drv_importcache_free) put into ws -- only those m has a param of (the run reads no other), all
 * without m.  The large ones, mapped, are in ws from the lookup on.  False
 * when memory runs out. */
bool drv_importcache_hand_out(drv_importcache *ic, const ir_module *m, rt_weight_set *ws);

/* Writes the entry of ic's key for an import's text and weights (ws as the
 * importer filled it) and o's --input names after it, unless the model
 * file changed since the key was made.  Failures only skip the entry. */
void drv_importcache_store(drv_importcache *ic, const options *o, const char *text,
                           const rt_weight_set *ws);

void drv_importcache_free(drv_importcache *ic);

/* The consts cache: the consts (packed weights) that the load calls of a
 * run made, so that a run from the caches neither runs the load calls nor
 * makes their storage (nor the params only they read).  Its key is the run
 * cache's entry (the SHA-256 of the one used or written: the module and
 * the kernels that pack) and the import cache's key (the weights they
 * pack), or for a program not imported and run without --weights, the
 * words "default data" (its params are the default data of its entry's
 * interface);
 * an entry (CACHE/run/KEY.consts) holds each const's name, type, shape and
 * place in its data file (CACHE/run/KEY.constdata,
 * laid out and mapped as the import cache's weights file) and that file's
 * identity, ended by the SHA-256 of the entry.  A hit turns the program's
 * consts into params that the run reads from the weight set, and drops
 * its load calls.  Only plain runs use it (not --profile, --sched or an
 * accelerator model: they describe the load calls' work). */
typedef struct drv_constcache {
    char *path;                /* CACHE/run/KEY.consts, malloc'ed; NULL: no caching */
    char *data_path;           /* CACHE/run/KEY.constdata */
    char key[65];
    bool verbose;
    bool hit;
    struct drv_pending *held;  /* the mapping the consts handed out borrow from */
} drv_constcache;

/* The key of the run rc's consts from the weights of ic, or (without an
 * import cache key) from the params' default data when default_data (a
 * program whose params all come from it: no --weights); false when there
 * is no key. */
bool drv_constcache_key(drv_constcache *cc, const drv_runcache *rc, const drv_importcache *ic,
                        bool default_data);
/* On a hit: true with the consts put into ws and m's consts made params
 * (its load calls dropped); else false, m and ws as they were. */
bool drv_constcache_use(drv_constcache *cc, ir_module *m, rt_weight_set *ws);
/* After the load calls of a run of m made its consts (a miss): writes them.
 * Failures only skip the entry.  The large consts of the run, once written,
 * hold the data file's pages (mapped private) instead of memory of their
 * own, which goes back to the system as they are written (runcache.c,
 * swap_to_file, says why). */
void drv_constcache_store(drv_constcache *cc, const ir_module *m, rt_run *run);
void drv_constcache_free(drv_constcache *cc);

#endif
