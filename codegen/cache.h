/* codegen/cache.h — the upkeep of the cache folder (codegen/compile.c),
 * shared by the kernel cache (codegen/compile.c: KEY.so, KEY.o) and the
 * run, import and consts caches (driver/runcache.c: run/KEY.run,
 * run/KEY.import with run/KEY.weights, run/KEY.consts with
 * run/KEY.constdata, run/ID.stamp).
 *
 * Every tec process of the user shares the folder at once.  Its size is
 * capped (cg_cache_limit): a process that wrote entries trims the folder
 * (cg_cache_trim), removing the least recently used entries until the
 * rest fit in nine tenths of it.  An entry's last use is its file's modification time, which
 * every use sets (cg_cache_touch), not the access time that many mounts
 * do not keep.  A data file (.weights, .constdata) keeps its times (the
 * entry checks its identity); it goes with its index file (.import,
 * .consts), whose time is the pair's.
 *
 * A process that uses an entry holds the folder's lock (CACHE/.lock, an
 * flock) shared from finding the entry until it has the file open
 * (loaded, read into memory or mapped; a split build's object files:
 * linked): a file removed after that stays readable through the open
 * file.  Trimming holds the lock exclusively,
 * so it never removes an entry between another process's finding and
 * opening it.  Entries being written are temporary files and folders,
 * renamed into place when complete; trimming leaves those alone, and they
 * are removed only when a killed run left them a day ago or more. */
#ifndef TEC_CODEGEN_CACHE_H
#define TEC_CODEGEN_CACHE_H

#include <stdbool.h>

/* The size, in bytes, the cache folder's entries are kept to:
 * $TEC_CACHE_MAX (bytes, or with a suffix K, M, G or T: KiB to TiB), else
 * CG_CACHE_MAX_DEFAULT; -1 for "unlimited" (no cap).  A value that is not
 * a size is said once on stderr and the default used. */
#define CG_CACHE_MAX_DEFAULT (2LL << 30)
long long cg_cache_limit(void);

/* Holds the lock of the cache folder `top` shared (blocking): no trim
 * removes an entry until cg_cache_release.  Returns the lock's descriptor,
 * or -1 when the folder has no lock to be had (then nothing is held, and
 * trimming does not run either). */
int cg_cache_hold(const char *top);
void cg_cache_release(int lock);

/* Marks the entry file at path used now (its modification time). */
void cg_cache_touch(const char *path);

/* Adds bytes to what this process wrote into the cache folder since its
 * last trim: the trim counts the folder's files only when that, added to
 * the folder's last count, may pass the cap (or the count is an hour
 * old). */
void cg_cache_wrote(long long bytes);

/* When the cache folder `top` holds more than cg_cache_limit() bytes of
 * entries, removes the least recently used until the rest fit in nine
 * tenths of it; with verbose, says what it
 * removed on stderr.  Within the cap it does not wait for the folder's
 * lock (it records what this process wrote for the next trim); over it,
 * it waits a while for the lock, else leaves the trim to the next process
 * that writes an entry. */
void cg_cache_trim(const char *top, bool verbose);

/* A descriptor of the cache entry so_path that cg_compile handed out and
 * holds open until cg_load (cg_release_temp) lets go of it, or -1: the
 * loader loads the entry through it (/proc/self/fd/N) when a trim
 * removed the file in between. */
int cg_cache_held_fd(const char *so_path);

/* Says once per process, on stderr, that the disk of the cache folder
 * `top` is full and what is not cached for it (`what`); false when it has
 * been said. */
bool cg_cache_say_full(const char *top, const char *what);

#endif
