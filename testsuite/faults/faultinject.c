/* testsuite/faults/faultinject.c — an LD_PRELOAD library that makes one
 * allocation or one write of a tec run fail, for testsuite/faults/run.sh.
 *
 *   TEC_FAULT_MODE=count TEC_FAULT_LOG=FILE   record every call site
 *   TEC_FAULT_MODE=alloc TEC_FAULT_N=N        the Nth allocation fails
 *   TEC_FAULT_MODE=write TEC_FAULT_N=N        the Nth write fails
 *   TEC_FAULT_MODE=leak TEC_FAULT_N=N         the Nth allocation leaks a
 *                                             block (a planted leak, which
 *                                             LeakSanitizer must report)
 *   TEC_FAULT_TRACE=1                         and prints the stack there
 *
 * Allocations are malloc, calloc, realloc, posix_memalign and
 * aligned_alloc (NULL, or ENOMEM); writes are write, fwrite and fclose
 * (-1, 0 or EOF with ENOSPC; a failed fwrite sets the stream's error
 * indicator, as a real one does; fclose still closes).  Only calls made on
 * behalf of tec's own code count: the call's site is the first frame of
 * its stack that lies in the tec executable or libtec (so strdup or fopen
 * called by tec count, at tec's call), and calls with no such frame (the
 * dynamic loader) or made from inside GMP or libgomp (which cannot report a
 * failed allocation: they abort or exit) never fail.  Count mode appends
 * one line per call to the log, "alloc N SITE" or "write N SITE", N being
 * the call's number in its kind, SITE the frame's object and offset; the
 * driver fails the first call of every site once.  LD_PRELOAD is taken out
 * of the environment at load, so the C compiler and gnuplot run normally.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MODE_OFF, MODE_COUNT, MODE_ALLOC, MODE_WRITE, MODE_LEAK };

static int mode;
static long target;               /* the call to fail (1-based) */
static long nalloc, nwrite;       /* calls counted so far */
static int log_fd = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int busy;         /* inside our own bookkeeping */

/* Allocations made before the real functions are found (dlsym itself
 * allocates) come from this arena and are never freed. */
static char early[1 << 16];
static size_t early_used;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static size_t (*real_fwrite)(const void *, size_t, size_t, FILE *);
static int (*real_fclose)(FILE *);

static void *early_alloc(size_t n)
{
    size_t at = (early_used + 15) & ~(size_t)15;
    if (at + n > sizeof early)
        return NULL;
    early_used = at + n;
    return early + at;
}

static int is_early(const void *p)
{
    return (const char *)p >= early && (const char *)p < early + sizeof early;
}

static void find_real(void)
{
    static int done;
    if (done)
        return;
    busy++;
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_free = dlsym(RTLD_NEXT, "free");
    real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real_write = dlsym(RTLD_NEXT, "write");
    real_fwrite = dlsym(RTLD_NEXT, "fwrite");
    real_fclose = dlsym(RTLD_NEXT, "fclose");
    done = 1;
    busy--;
}

__attribute__((constructor)) static void init(void)
{
    find_real();
    const char *m = getenv("TEC_FAULT_MODE");
    const char *n = getenv("TEC_FAULT_N");
    const char *log = getenv("TEC_FAULT_LOG");
    busy++;
    if (m && strcmp(m, "count") == 0 && log) {
        FILE *f = fopen(log, "a");   /* only to get a descriptor */
        if (f) {
            log_fd = dup(fileno(f));
            real_fclose(f);
        }
        mode = log_fd >= 0 ? MODE_COUNT : MODE_OFF;
    } else if (m && n && (strcmp(m, "alloc") == 0 || strcmp(m, "write") == 0 ||
                          strcmp(m, "leak") == 0)) {
        mode = m[0] == 'a' ? MODE_ALLOC : m[0] == 'w' ? MODE_WRITE : MODE_LEAK;
        target = strtol(n, NULL, 10);
    }
    unsetenv("LD_PRELOAD");
    busy--;
}

/* Whether addr lies in tec's own code: the executable or libtec. */
static int in_tec(void *addr, Dl_info *info)
{
    if (!dladdr(addr, info) || !info->dli_fname)
        return 0;
    const char *base = strrchr(info->dli_fname, '/');
    base = base ? base + 1 : info->dli_fname;
    return strncmp(base, "libtec", 6) == 0 || strcmp(base, "tec") == 0 ||
           strcmp(base, "lt-tec") == 0 || strcmp(base, "tec-accel") == 0;
}

/* Libraries that cannot report a failed allocation (GMP aborts, libgomp
 * exits): what they allocate never fails here. */
static int in_aborting_lib(void *addr)
{
    Dl_info info;
    return dladdr(addr, &info) && info.dli_fname &&
           (strstr(info.dli_fname, "libgmp") || strstr(info.dli_fname, "libgomp"));
}

/* Counts a call of kind `alloc` (or a write) and says whether it must fail. */
static int should_fail(int alloc)
{
    if (mode == MODE_OFF || busy || (mode == MODE_WRITE && alloc) ||
        ((mode == MODE_ALLOC || mode == MODE_LEAK) && !alloc))
        return 0;
    busy++;
    void *frames[32];
    int n = backtrace(frames, 32);
    int site = -1;
    Dl_info info = {0};
    for (int i = 1; i < n && site < 0; i++) {
        if (in_aborting_lib(frames[i]))
            break;
        if (in_tec(frames[i], &info))
            site = i;
    }
    int fail = 0;
    if (site >= 0) {
        pthread_mutex_lock(&lock);
        long k = alloc ? ++nalloc : ++nwrite;
        if (mode == MODE_COUNT) {
            char line[512];
            const char *base = strrchr(info.dli_fname, '/');
            int len = snprintf(line, sizeof line, "%s %ld %s+0x%lx\n", alloc ? "alloc" : "write", k,
                               base ? base + 1 : info.dli_fname,
                               (unsigned long)((uintptr_t)frames[site] - (uintptr_t)info.dli_fbase));
            if (len > 0 && real_write(log_fd, line, (size_t)len) < 0)
                mode = MODE_OFF;
        } else if (mode == MODE_LEAK) {
            if (k == target)
                real_malloc(64);   /* dropped at once */
        } else if ((fail = k == target) && getenv("TEC_FAULT_TRACE")) {
            backtrace_symbols_fd(frames, n, 2);   /* where it failed, for debugging */
        }
        pthread_mutex_unlock(&lock);
    }
    busy--;
    return fail;
}

void *malloc(size_t n)
{
    if (!real_malloc)
        return early_alloc(n);
    if (should_fail(1)) {
        errno = ENOMEM;
        return NULL;
    }
    return real_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    if (!real_calloc) {
        size_t n;
        return __builtin_mul_overflow(a, b, &n) ? NULL : early_alloc(n);   /* zeroed */
    }
    if (should_fail(1)) {
        errno = ENOMEM;
        return NULL;
    }
    return real_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    if (!real_realloc || is_early(p)) {
        void *q = real_malloc ? real_malloc(n) : early_alloc(n);
        if (q && p) {
            size_t rest = (size_t)(early + sizeof early - (char *)p);   /* p's block lies in it */
            memcpy(q, p, n < rest ? n : rest);
        }
        return q;
    }
    if (should_fail(1)) {
        errno = ENOMEM;
        return NULL;
    }
    return real_realloc(p, n);
}

void free(void *p)
{
    if (!p || is_early(p))
        return;
    if (!real_free)
        find_real();
    real_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    find_real();
    if (should_fail(1))
        return ENOMEM;
    return real_posix_memalign(out, align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    find_real();
    if (should_fail(1)) {
        errno = ENOMEM;
        return NULL;
    }
    return real_aligned_alloc(align, n);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    find_real();
    if (should_fail(0)) {
        errno = ENOSPC;
        return -1;
    }
    return real_write(fd, buf, n);
}

/* glibc's error indicator of a stream (libio's _IO_ERR_SEEN), set as a
 * real failed write sets it, so that ferror() and fclose() report it. */
#define STREAM_ERROR 0x20

size_t fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
    find_real();
    if (should_fail(0)) {
        f->_flags |= STREAM_ERROR;
        errno = ENOSPC;
        return 0;
    }
    return real_fwrite(buf, size, n, f);
}

int fclose(FILE *f)
{
    find_real();
    if (should_fail(0)) {
        real_fclose(f);
        errno = ENOSPC;
        return EOF;
    }
    return real_fclose(f);
}
