/* driver/runcache.h — the run cache: a program's optimized modules and its
 * compiled kernels, found without running the passes or the C emitter.
 *
 * The kernel cache (codegen/compile.c) is keyed on the C source, so a run
 * that finds its kernels there has still run the passes and the emitter to
 * make that source.  The run cache sits in front of it: its key is
 * everything that determines the compiled result before the passes run —
 *
 *   tec's build (the executable's GNU build ID, else its size and mtime)
 *   and version; the program's text (an ONNX model's imported text) and
 *   its name; the module the frontend made of it, printed (so imports,
 *   -D values and include folders count through what they produced), and
 *   the -D and -I options themselves; the -O level, --passes, --profile,
 *   --unchecked; every field of the target (ISA, vector width, cores,
 *   caches) and this CPU's model and flags; the C compiler's words ($CC)
 *   with the size, mtime and inode of each program they name, and the
 *   environment variables the kernel cache keys on —
 *
 * and an entry (CACHE/run/KEY.run, CACHE the kernel cache's folder) holds
 * the optimized module, the module the C came from (after the emission
 * passes) and the path of the kernels' shared object in the kernel cache,
 * ended by the SHA-256 of all that.  A damaged entry (its checksum wrong,
 * a module that does not parse), a shared object that is gone or is not
 * the build it names, or an entry or folder someone else could write, is
 * not used: the run compiles as if there were no entry, and writes a new
 * one.  Entries are written atomically (a temporary file, renamed).  An
 * entry is written only when its modules print back to the same text after
 * parsing, so the run from the cache runs the module the cold run ran. */
#ifndef TEC_DRIVER_RUNCACHE_H
#define TEC_DRIVER_RUNCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "codegen/codegen.h"
#include "driver/options.h"
#include "ir/diag.h"
#include "ir/ir.h"
#include "runtime/exec.h"
#include "runtime/weight_set.h"

typedef struct drv_runcache {
    char *path;           /* CACHE/run/KEY.run, malloc'ed; NULL: no caching */
    char key[65];
    bool verbose;
} drv_runcache;

/* Whether a run of these options may use the run cache: a compiled run
 * (not --interp, --no-run, --no-cache, --emit=...), without the options
 * that need the passes to run (--dump-ir, --dump-dir, --dump-schedule,
 * --verify-each). */
bool drv_runcache_applies(const options *o);

/* Computes the key of the program `text` (len bytes; an ONNX model's
 * imported text) whose frontend module is `pre`, for the options o and the
 * compiler options co, and the entry's path.  False (and rc->path NULL)
 * when the cache cannot be used (no cache folder, one that others could
 * write; said with --verbose): the run goes on without it. */
bool drv_runcache_key(drv_runcache *rc, const options *o, const char *display,
                      const char *text, size_t len, const ir_module *pre,
                      const cg_options *co);

/* The entry of rc's key: true with the optimized module *m, the emitted
 * module *em and the shared object's path *so_path (all the caller's),
 * or false when there is none or it cannot be used (a damaged entry is
 * removed). */
bool drv_runcache_lookup(drv_runcache *rc, ir_module **m, ir_module **em, char **so_path);

/* Writes the entry of rc's key for a cold run's modules and shared object
 * (a path in the kernel cache).  Failures only skip the entry (said with
 * --verbose). */
void drv_runcache_store(drv_runcache *rc, const ir_module *m, const ir_module *em,
                        const char *so_path);

void drv_runcache_free(drv_runcache *rc);

/* The import cache: what the ONNX importer made of a model (the program's
 * text and the weights it keeps in memory), found without importing it.
 * Its key is everything the import reads --
 *
 *   tec's build and version; the model file's bytes (their SHA-256); the
 *   -D values; each --input's name and its file's bytes (an input's shape
 *   and a small input's values are known at import) --
 *
 * so a model whose file changed in any byte misses.  The model's SHA-256
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
} drv_importcache;

bool drv_importcache_applies(const options *o);

/* Computes the key of o's model (its bytes' digest from its stamp, else
 * read and hashed); false (and ic->path NULL) when the cache cannot be
 * used (said with --verbose): the import goes on without it. */
bool drv_importcache_key(drv_importcache *ic, const options *o);

/* The entry of ic's key: true with the program's text *text (the
 * caller's), the weights put into ws and o's --input entries renamed as
 * the import renamed them (the names live until drv_importcache_free);
 * false when there is none or it cannot be used (ws then holds nothing of
 * it). */
bool drv_importcache_lookup(drv_importcache *ic, options *o, char **text, rt_weight_set *ws);

/* Writes the entry of ic's key for an import's text and weights (ws as the
 * importer filled it) and o's --input names after it, unless the model
 * file changed since the key was made.  Failures only skip the entry. */
void drv_importcache_store(drv_importcache *ic, const options *o, const char *text,
                           const rt_weight_set *ws);

void drv_importcache_free(drv_importcache *ic);

/* The consts cache: the consts (packed weights) that the load calls of a
 * run of an imported model made, so that a run from the caches neither
 * runs the load calls nor makes their storage.  Its key is the run
 * cache's key and the import cache's (the kernels that pack and the
 * weights they pack); an entry (CACHE/run/KEY.consts) holds each const's
 * name, type, shape and place in its data file (CACHE/run/KEY.constdata,
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
} drv_constcache;

/* The key of the run rc's consts from the weights of ic; false when one of
 * them has no key. */
bool drv_constcache_key(drv_constcache *cc, const drv_runcache *rc, const drv_importcache *ic);
/* On a hit: true with the consts put into ws and m's consts made params
 * (its load calls dropped); else false, m and ws as they were. */
bool drv_constcache_use(drv_constcache *cc, ir_module *m, rt_weight_set *ws);
/* After the load calls of a run of m made its consts (a miss): writes them.
 * Failures only skip the entry. */
void drv_constcache_store(drv_constcache *cc, const ir_module *m, const rt_run *run);
void drv_constcache_free(drv_constcache *cc);

#endif
