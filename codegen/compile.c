/* codegen/compile.c — runs the C compiler on generated code and keeps what
 * it builds in the kernel cache.
 *
 * The compiler runs through posix_spawn with an argv array: never a shell,
 * so no quoting problem and no injection through file or flag names.  Its
 * stdout and stderr go to one pipe that tec reads to the end before it
 * waits for the child (a single pipe cannot deadlock).
 *
 * Cache: $XDG_CACHE_HOME/tec (or $HOME/.cache/tec), mode 0700, one entry
 * <sha256>.so per distinct (tec version, compiler argv, compiler identity,
 * environment that steers the compiler, machine and target, C source).  An
 * entry is built in a temporary directory inside the cache and renamed into
 * place, so readers only ever see complete files; concurrent writers of the
 * same key race harmlessly (both produce the same content).  An entry is
 * reused only if it loads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* pipe2 */
#endif
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "codegen/codegen.h"
#include "codegen/cache.h"
#include "codegen/sha256.h"
#include "codegen/split.h"
#include "ir/path.h"
#include "ir/phase.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif
#ifndef TEC_DEFAULT_CC
#define TEC_DEFAULT_CC "cc"
#endif

extern char **environ;

/* Flags every kernel is built with, after the user's optimization flags.
 *   -fno-math-errno    sqrtf and friends may become single instructions
 *                      (kernels never read errno; the values are the same);
 *   -fwrapv            integer overflow wraps, as in the interpreter, instead
 *                      of being undefined behaviour the optimizer exploits;
 *   -fopenmp           parallel loops are OpenMP parallel regions (libgomp);
 *   -fPIC -shared      a shared object for dlopen.
 * The NULL slot is -ffp-contract=off or =fast (fp_contract_flag); after the
 * list comes, with a target, -march=<target->march>. */
static const char *const cg_fixed_flags[] = {
    "-std=gnu11", "-fPIC", "-shared", NULL /* -ffp-contract= */, "-fno-math-errno", "-fwrapv",
    "-fopenmp",
};

/* Floating-point contraction by optimization level: the last -O word of
 * opt_flags decides, as it does for the compiler.
 *   -O0, -O1 (and -O, -Os, -Og, none): -ffp-contract=off, no fused
 *       multiply-add: a*b+c rounds twice, as the interpreter computes it,
 *       so results match the interpreter bit for bit;
 *   -O2, -O3 (and higher, -Ofast): -ffp-contract=fast, a*b+c may become
 *       one FMA instruction (one rounding): faster, and within rounding
 *       error of the interpreter rather than equal to it. */
static bool optimizes_fully(const char *opt_flags)
{
    bool fast = false;
    for (const char *s = opt_flags; s && *s;) {
        while (*s == ' ' || *s == '\t')
            s++;
        size_t n = strcspn(s, " \t");
        if (n >= 2 && s[0] == '-' && s[1] == 'O') {
            if (n == 6 && strncmp(s, "-Ofast", 6) == 0)
                fast = true;
            else if (n >= 3 && s[2] >= '0' && s[2] <= '9')
                fast = atoi(s + 2) >= 2;
            else
                fast = false;   /* -O, -Os, -Og, -Oz */
        }
        s += n;
    }
    return fast;
}

/* The level of the last -O<digits> word of opt_flags; -1 when the last -O
 * word is another (-O, -Os, -Og, -Ofast) or there is none. */
static int last_opt_level(const char *opt_flags)
{
    int level = -1;
    for (const char *s = opt_flags; s && *s;) {
        while (*s == ' ' || *s == '\t')
            s++;
        size_t n = strcspn(s, " \t");
        if (n >= 2 && s[0] == '-' && s[1] == 'O')
            level = n >= 3 && s[2] >= '0' && s[2] <= '9' ? atoi(s + 2) : -1;
        s += n;
    }
    return level;
}

static const char *fp_contract_flag(const char *opt_flags)
{
    return optimizes_fully(opt_flags) ? "-ffp-contract=fast" : "-ffp-contract=off";
}

/* Libraries every kernel is linked with, after the source: libmvec for the
 * vector math of vectorized loops (glibc), libm. */
static const char *const cg_libs[] = {"-lmvec", "-lm"};

/* Environment variables that change what the compiler produces. */
static const char *const cg_env_keys[] = {
    "CPATH", "C_INCLUDE_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH", "LIBRARY_PATH",
};

/* ---------------------------------------------------------------- small helpers */

/* A NULL-terminated, malloc'ed argument vector. */
typedef struct cg_argv {
    char **v;
    int n, cap;
    bool oom;
} cg_argv;

static void argv_push(cg_argv *a, const char *s)
{
    if (a->oom)
        return;
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? 2 * a->cap : 16;
        char **v = realloc(a->v, sizeof *v * (size_t)cap);
        if (!v) {
            a->oom = true;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    char *c = strdup(s);
    if (!c) {
        a->oom = true;
        return;
    }
    a->v[a->n++] = c;
    a->v[a->n] = NULL;
}

/* Appends the space-separated words of s ("ccache gcc", "-O2 -g"). */
static void argv_push_words(cg_argv *a, const char *s)
{
    while (s && *s) {
        while (*s == ' ' || *s == '\t')
            s++;
        size_t n = strcspn(s, " \t");
        if (n == 0)
            break;
        char *w = strndup(s, n);
        if (!w) {
            a->oom = true;
            return;
        }
        argv_push(a, w);
        free(w);
        s += n;
    }
}

static void argv_free(cg_argv *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    *a = (cg_argv){0};
}

/* A growable byte string (compiler output, the cache key text). */
typedef struct cg_text {
    char *p;
    size_t len, cap;
    bool oom;
} cg_text;

static void text_putn(cg_text *t, const char *s, size_t n)
{
    if (t->oom)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (t->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->oom = true;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void text_printf(cg_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_printf(cg_text *t, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) {
        t->oom = true;  /* only short fields go through here */
        return;
    }
    text_putn(t, buf, (size_t)n);
}

/* Length-prefixed field: keeps the key text unambiguous whatever the
 * fields contain. */
static void text_field(cg_text *t, const char *name, const char *value, size_t len)
{
    text_printf(t, "%s %zu:", name, len);
    text_putn(t, value, len);
    text_putn(t, "\n", 1);
}

static char *path_join(const char *dir, const char *name) { return ir_path_join(dir, name); }

static void oom(diag *d) { diag_error(d, diag_noloc(), "codegen: out of memory"); }

/* ---------------------------------------------------------------- running a program */

/* What a finished child did. */
typedef struct cg_run_result {
    int spawn_errno;    /* nonzero: the program could not be started */
    int exit_status;    /* valid when !signaled */
    int signal;         /* nonzero: killed by this signal */
    bool timed_out;     /* killed by tec after the time limit */
    cg_text output;     /* stdout and stderr, interleaved */
} cg_run_result;

/* The file execvp would run for `prog` (malloc'ed), or NULL with the
 * reason in *err (ENOENT: nowhere on PATH; EACCES: found, not executable).
 * Resolving first, rather than trusting posix_spawnp to report a failed
 * exec, gives the same answer under every libc and under valgrind. */
static char *resolve_program(const char *prog, int *err)
{
    *err = ENOENT;
    if (strchr(prog, '/')) {
        if (access(prog, X_OK) == 0)
            return strdup(prog);
        *err = errno;
        return NULL;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    for (;;) {
        size_t n = strcspn(path, ":");
        char dir[4096];
        if (n < sizeof dir) {
            memcpy(dir, path, n);
            dir[n] = '\0';
            char *full = path_join(n ? dir : ".", prog);  /* an empty entry is "." */
            if (!full) {
                *err = ENOMEM;
                return NULL;
            }
            struct stat st;
            if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
                if (access(full, X_OK) == 0)
                    return full;
                *err = EACCES;
            }
            free(full);
        }
        path += n;
        if (*path != ':')
            return NULL;
        path++;
    }
}

/* ---------------------------------------------------------------- interruption
 *
 * A compiler runs in a process group of its own, so that the time limit
 * stops it with everything it started (cc1, as, ld).  The terminal's
 * SIGINT, SIGTERM and SIGHUP then no longer reach it: while builds run,
 * tec's handler passes the signal on to their groups, removes their
 * temporary directories, and lets the signal end tec as it would have.
 * The handler is installed only where the signal's disposition is the
 * default, so a program embedding tec keeps its own. */

enum { MAX_BUILDS = 16 };

/* One running compiler: its process group and the files to remove. */
typedef struct build_slot {
    volatile sig_atomic_t pgid;   /* 0: free */
    char dir[PATH_MAX], src[PATH_MAX], obj[PATH_MAX];   /* "" when none */
} build_slot;

static build_slot builds[MAX_BUILDS];
static pthread_mutex_t builds_lock = PTHREAD_MUTEX_INITIALIZER;
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};

static void on_signal(int sig)
{
    for (int i = 0; i < MAX_BUILDS; i++) {
        pid_t g = (pid_t)builds[i].pgid;
        if (g == 0)
            continue;
        if (g > 0)
            kill(-g, SIGKILL);
        if (builds[i].src[0])
            unlink(builds[i].src);
        if (builds[i].obj[0])
            unlink(builds[i].obj);
        if (builds[i].dir[0])
            rmdir(builds[i].dir);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_once(void)
{
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) {
        struct sigaction old, sa;
        if (sigaction(forwarded[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(forwarded[i], &sa, NULL);
    }
}

static void install_handlers(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_once);
}

/* The paths the handler removes for the build about to start (any may be
 * NULL); returns its slot, or -1 when all are busy (the build then runs
 * without cleanup on a signal). */
static int claim_build(const char *dir, const char *src, const char *obj)
{
    install_handlers();
    pthread_mutex_lock(&builds_lock);
    int slot = -1;
    for (int i = 0; i < MAX_BUILDS && slot < 0; i++)
        if (builds[i].pgid == 0) {
            slot = i;
            builds[i].pgid = -1;   /* claimed, not started */
            snprintf(builds[i].dir, PATH_MAX, "%s", dir ? dir : "");
            snprintf(builds[i].src, PATH_MAX, "%s", src ? src : "");
            snprintf(builds[i].obj, PATH_MAX, "%s", obj ? obj : "");
        }
    pthread_mutex_unlock(&builds_lock);
    return slot;
}

static void release_build(int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&builds_lock);
    builds[slot].pgid = 0;
    pthread_mutex_unlock(&builds_lock);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Runs argv (PATH lookup for argv[0], as execvp) with stdin from /dev/null
 * and stdout and stderr captured, in a process group of its own registered
 * in `slot` (-1: none).  After timeout seconds (0: no limit) the group is
 * killed.  Returns false only when it could not even try (pipe or
 * spawn-attribute failures: errno in spawn_errno as well). */
static bool run_capture(char *const *argv, double timeout, int slot, cg_run_result *r)
{
    memset(r, 0, sizeof *r);
    char *prog = resolve_program(argv[0], &r->spawn_errno);
    if (!prog)
        return true;
    r->spawn_errno = 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        r->spawn_errno = errno;
        free(prog);
        return false;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        r->spawn_errno = errno;
        close(fds[0]);
        close(fds[1]);
        free(prog);
        return false;
    }
    if (posix_spawnattr_init(&at) != 0) {
        r->spawn_errno = errno;
        posix_spawn_file_actions_destroy(&fa);
        close(fds[0]);
        close(fds[1]);
        free(prog);
        return false;
    }
    /* The forwarded signals wait until the child's group is registered
     * (the child starts with the mask tec had). */
    sigset_t block, saved;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
        sigaddset(&block, forwarded[i]);
    pthread_sigmask(SIG_BLOCK, &block, &saved);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &saved);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    pid_t pid;
    int rc = posix_spawn(&pid, prog, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(prog);
    close(fds[1]);
    if (rc == 0 && slot >= 0) {
        /* Under the lock: other threads' claim_build reads the slots (the
         * signal handler does not lock; the signals are blocked here). */
        pthread_mutex_lock(&builds_lock);
        builds[slot].pgid = pid;
        pthread_mutex_unlock(&builds_lock);
    }
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (rc != 0) {
        close(fds[0]);
        r->spawn_errno = rc;
        return true;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char buf[4096];
    for (;;) {
        int wait_ms = -1;
        if (timeout > 0) {
            double left = timeout - seconds_since(&t0);
            if (left <= 0) {
                r->timed_out = true;
                kill(-pid, SIGKILL);
                break;
            }
            wait_ms = left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
        }
        struct pollfd pf = {fds[0], POLLIN, 0};
        int pr = poll(&pf, 1, wait_ms);
        if (pr < 0 && errno != EINTR)
            break;
        if (pr <= 0)
            continue;
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n > 0) {
            /* Keep at most 64 KiB: only the first lines are ever shown. */
            if (r->output.len < 65536)
                text_putn(&r->output, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        break;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            status = 0;
            break;
        }
    }
    if (slot >= 0) {
        pthread_mutex_lock(&builds_lock);
        builds[slot].pgid = -1;
        pthread_mutex_unlock(&builds_lock);
    }
    if (WIFSIGNALED(status))
        r->signal = WTERMSIG(status);
    else
        r->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    return true;
}

/* The compiler's time limit in seconds (0: none). */
static double cc_timeout(const cg_options *o)
{
    int t = o ? o->cc_timeout : 0;
    return t == 0 ? CG_DEFAULT_CC_TIMEOUT : t < 0 ? 0 : t;
}

static void report_timeout(diag *d, const char *prog, double limit)
{
    diag_error(d, diag_noloc(), "the C compiler '%s' did not finish within %g seconds and was "
               "stopped (--cc-timeout sets the limit)", prog, limit);
}

static void report_spawn_error(diag *d, const char *prog, int err)
{
    diag_error(d, diag_noloc(), "cannot run C compiler '%s': %s (set CC or install gcc)", prog,
               strerror(err));
}

/* A word is printed bare when the shell would read it back unchanged. */
static void print_quoted(FILE *out, const char *w)
{
    bool plain = *w != '\0';
    for (const char *p = w; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=+,:@%-", *p))
            plain = false;
    if (plain) {
        fputs(w, out);
        return;
    }
    fputc('\'', out);
    for (const char *p = w; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", out);
        else
            fputc(*p, out);
    }
    fputc('\'', out);
}

static void print_command(diag *d, char *const *argv)
{
    FILE *out = d && d->out ? d->out : stderr;
    fputs("tec: running:", out);
    for (int i = 0; argv[i]; i++) {
        fputc(' ', out);
        print_quoted(out, argv[i]);
    }
    fputc('\n', out);
    fflush(out);
}

/* ---------------------------------------------------------------- compiler identity */

/* `CC --version`'s first line plus the resolved program's size and mtime,
 * computed once per process and compiler: what makes "the same compiler"
 * for the cache key. */
typedef struct cg_cc_identity {
    char *cc;                      /* the compiler words, space-joined */
    char *identity;
    struct cg_cc_identity *next;
} cg_cc_identity;

static pthread_mutex_t identity_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_cc_identity *identities;

static char *compute_identity(const cg_argv *cc, double timeout, diag *d)
{
    cg_argv a = {0};
    for (int i = 0; i < cc->n; i++)
        argv_push(&a, cc->v[i]);
    argv_push(&a, "--version");
    if (a.oom) {
        argv_free(&a);
        oom(d);
        return NULL;
    }
    cg_run_result r;
    int slot = claim_build(NULL, NULL, NULL);
    run_capture(a.v, timeout, slot, &r);
    release_build(slot);
    argv_free(&a);
    if (r.spawn_errno || r.timed_out) {
        free(r.output.p);
        if (r.timed_out)
            report_timeout(d, cc->v[0], timeout);
        else
            report_spawn_error(d, cc->v[0], r.spawn_errno);
        return NULL;
    }
    cg_text id = {0};
    const char *out = r.output.p ? r.output.p : "";
    size_t first = strcspn(out, "\n");
    text_putn(&id, "version: ", 9);
    text_putn(&id, out, first);
    text_printf(&id, " (exit %d, signal %d)\n", r.exit_status, r.signal);
    /* GCC says who it is in its copyright line; its first line ends with
     * the version ("gcc (Debian 12.2.0-14) 12.2.0").  Clang does neither. */
    if (strstr(out, "Free Software Foundation") && !strstr(out, "clang")) {
        const char *v = out + first;
        while (v > out && v[-1] != ' ')
            v--;
        text_printf(&id, "gcc-major: %d\n", atoi(v));
    }
    free(r.output.p);

    int err;
    char *full = resolve_program(cc->v[0], &err);
    char *real = full ? realpath(full, NULL) : NULL;
    struct stat st;
    if (real && stat(real, &st) == 0)
        text_printf(&id, "program: %s size %lld mtime %lld.%09ld\n", real, (long long)st.st_size,
                    (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    else
        text_printf(&id, "program: %s (not resolved)\n", cc->v[0]);
    free(full);
    free(real);
    if (id.oom) {
        free(id.p);
        oom(d);
        return NULL;
    }
    return id.p;
}

/* The identity of the compiler `cc` (malloc'ed copy), or NULL after a
 * diagnostic (the compiler cannot be run). */
static char *compiler_identity(const cg_argv *cc, double timeout, diag *d)
{
    cg_text key = {0};
    for (int i = 0; i < cc->n; i++) {
        text_putn(&key, cc->v[i], strlen(cc->v[i]));
        text_putn(&key, "\x1f", 1);
    }
    if (key.oom) {
        free(key.p);
        oom(d);
        return NULL;
    }
    char *result = NULL;
    pthread_mutex_lock(&identity_lock);
    for (cg_cc_identity *c = identities; c; c = c->next)
        if (strcmp(c->cc, key.p) == 0) {
            result = strdup(c->identity);
            break;
        }
    pthread_mutex_unlock(&identity_lock);
    if (result) {
        free(key.p);
        return result;
    }
    /* Computed outside the lock; two threads may both compute it once. */
    ir_phase_push("compiler identity");
    char *id = compute_identity(cc, timeout, d);
    ir_phase_pop();
    if (!id) {
        free(key.p);
        return NULL;
    }
    cg_cc_identity *c = malloc(sizeof *c);
    result = strdup(id);
    if (c) {
        c->cc = key.p;
        c->identity = id;
        pthread_mutex_lock(&identity_lock);
        c->next = identities;
        identities = c;
        pthread_mutex_unlock(&identity_lock);
    } else {
        free(key.p);
        free(id);
    }
    if (!result)
        oom(d);
    return result;
}

/* The major version of GCC that the identity describes, or 0 for another
 * compiler. */
static int identity_gcc_major(const char *identity)
{
    const char *g = strstr(identity, "\ngcc-major: ");
    return g ? atoi(g + 13) : 0;
}

/* Flags for the compiler in use, appended after the fixed flags (so they
 * are part of every cache key):
 *   GCC up to 12 (seen with 12.2 at -O2/-O3 with -march=x86-64-v3 or
 *   native): loop if-conversion turns a guarded, padded copy
 *   (`p[i] = in range ? x[i - 8] : 0.25f`) into an AVX2 masked load that
 *   reads zeros for lanes the guard allows: -fno-tree-loop-if-convert
 *   (testsuite/run/gcc_pad_copy.te).  GCC 13 and clang are not known to
 *   need it.
 *   GCC: -fno-tree-bit-ccp.  Bit-CCP (which bits of each integer are known)
 *   was GCC 12's costliest pass on the kernels, 15% of its CPU over
 *   GoogLeNet's units (the int64 index arithmetic of their unrolled
 *   nests); without it the units of GoogLeNet, ResNet-50, Inception-v3 and
 *   EfficientNet-B0 took 15-21% less CPU, and their code at -O3 was the
 *   same but for a few loads and stores of vector temporaries written
 *   unaligned (vmovups, vmovdqu64) instead of aligned (their addresses are
 *   aligned, where both run alike), some -O1 code of prepack kernels aside
 *   (bench/results/cold_s19.txt).
 * A compiler that cannot be run fails here with the same diagnostic the
 * compilation would give. */
static bool compiler_flags(const cg_argv *cc, double timeout, cg_argv *flags, diag *d)
{
    char *id = compiler_identity(cc, timeout, d);
    if (!id)
        return false;
    int major = identity_gcc_major(id);
    free(id);
    if (major > 0 && major <= 12)
        argv_push(flags, "-fno-tree-loop-if-convert");
    if (major > 0)
        argv_push(flags, "-fno-tree-bit-ccp");
    return true;
}

/* ---------------------------------------------------------------- command line */

static const char *compiler_words(const cg_options *o)
{
    if (o && o->cc && *o->cc)
        return o->cc;
    const char *env = getenv("CC");
    return env && *env ? env : TEC_DEFAULT_CC;
}

/* cc words, optimization flags and the fixed flags: everything of the
 * command line except the output and input files. */
static bool base_argv(const cg_options *o, bool object, cg_argv *cc, cg_argv *flags, diag *d)
{
    /* A path naming an executable file is one word, spaces and all
     * ("/opt/my tools/gcc"); otherwise the words are split ("ccache gcc"). */
    const char *words = compiler_words(o);
    struct stat st;
    if (strchr(words, '/') && stat(words, &st) == 0 && S_ISREG(st.st_mode) &&
        access(words, X_OK) == 0)
        argv_push(cc, words);
    else
        argv_push_words(cc, words);
    if (o && o->opt_flags)
        argv_push_words(flags, o->opt_flags);
    for (size_t i = 0; i < sizeof cg_fixed_flags / sizeof *cg_fixed_flags; i++) {
        const char *f = cg_fixed_flags[i] ? cg_fixed_flags[i]
                                          : fp_contract_flag(o ? o->opt_flags : NULL);
        argv_push(flags, object && strcmp(f, "-shared") == 0 ? "-c" : f);
    }
    if (o && o->target && o->target->march[0]) {
        char march[64];
        snprintf(march, sizeof march, "-march=%s", o->target->march);
        argv_push(flags, march);
    }
    if (cc->oom || flags->oom) {
        oom(d);
        return false;
    }
    if (cc->n == 0) {
        diag_error(d, diag_noloc(), "cannot run C compiler '': the compiler command is empty "
                   "(set CC or install gcc)");
        return false;
    }
    if (!compiler_flags(cc, cc_timeout(o), flags, d))
        return false;
    if (flags->oom) {
        oom(d);
        return false;
    }
    return true;
}

/* Appends the first lines of the compiler's output, indented, to msg:
 * at most 200 bytes of each, control characters (escape sequences, binary
 * output) shown as '?', so that what reaches the terminal is text. */
static void first_lines(cg_text *msg, const char *out, size_t len, int max_lines)
{
    const char *end = out ? out + len : NULL;
    int n = 0;
    while (out && out < end && n < max_lines) {
        const char *eol = memchr(out, '\n', (size_t)(end - out));
        size_t line = eol ? (size_t)(eol - out) : (size_t)(end - out);
        text_putn(msg, "\n  ", 3);
        for (size_t i = 0; i < line && i < 200; i++) {
            unsigned char c = (unsigned char)out[i];
            char shown = c == '\t' ? ' ' : c < 0x20 || c == 0x7f ? '?' : (char)c;
            text_putn(msg, &shown, 1);
        }
        if (line > 200)
            text_putn(msg, " ...", 4);
        out += line + (eol ? 1 : 0);
        n++;
    }
    if (out && out < end)
        text_putn(msg, "\n  ...", 6);
}

/* What a build in the cache met that its caller handles instead of a
 * diagnostic: the folder removed under it (rm -rf of the cache: it is
 * made again and the build runs once more), or no space left on its disk
 * (the build runs in a temporary folder instead). */
typedef struct build_trouble {
    bool vanished, disk_full;
} build_trouble;

static bool no_space(int err) { return err == ENOSPC || err == EDQUOT; }

/* Writes text to the new file `path` (which must not exist yet).  A full
 * disk, with `trouble`, is only set there. */
static bool write_new_file(const char *path, const char *text, build_trouble *trouble, diag *d)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (trouble && no_space(errno))
            trouble->disk_full = true;
        else
            diag_error(d, diag_noloc(), "cannot create %s: %s", path, strerror(errno));
        return false;
    }
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int err = n < 0 ? errno : 0;
            close(fd);
            if (trouble && no_space(err))
                trouble->disk_full = true;
            else
                diag_error(d, diag_noloc(), "cannot write %s: %s", path,
                           err ? strerror(err) : "short write");
            return false;
        }
        done += (size_t)n;
    }
    if (close(fd) != 0) {
        if (trouble && no_space(errno))
            trouble->disk_full = true;
        else
            diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    return true;
}

/* Clears group and others' write permission, which a umask such as 002
 * leaves on the linker's output: a shared object others can change is
 * code they can run in tec (and the cache refuses such an entry). */
static bool not_writable_by_others(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 &&
           chmod(path, st.st_mode & 07777 & ~(mode_t)(S_IWGRP | S_IWOTH)) == 0;
}

/* Runs the binutils tool args->v[0] (ar, objcopy) on a file; false after
 * a diagnostic, whose words `what` says what it was doing. */
static bool run_tool(cg_argv *args, const char *what, const cg_options *o,
                     diag *d)
{
    const char *prog = args->v ? args->v[0] : "";
    if (args->oom) {
        oom(d);
        return false;
    }
    if (o && o->verbose)
        print_command(d, args->v);
    cg_run_result r;
    int slot = claim_build(NULL, NULL, NULL);
    run_capture(args->v, cc_timeout(o), slot, &r);
    release_build(slot);
    bool ok = false;
    if (r.spawn_errno) {
        diag_error(d, diag_noloc(), "cannot run '%s': %s (install binutils)", prog,
                   strerror(r.spawn_errno));
    } else if (r.timed_out) {
        report_timeout(d, prog, cc_timeout(o));
    } else if (r.signal || r.exit_status != 0) {
        cg_text msg = {0};
        first_lines(&msg, r.output.p, r.output.len, 10);
        diag_error(d, diag_noloc(), "'%s' failed %s%s", prog, what, msg.p ? msg.p : "");
        free(msg.p);
    } else {
        ok = true;
    }
    free(r.output.p);
    return ok;
}

/* Puts the object file obj into a new static library lib with `ar rcs`
 * (the archiver of binutils, beside the C compiler; with its index, so
 * that the linker takes it as it is). */
static bool make_archive(const char *obj, const char *lib, const cg_options *o, diag *d)
{
    cg_argv a = {0};
    argv_push(&a, "ar");
    argv_push(&a, "rcs");
    argv_push(&a, lib);
    argv_push(&a, obj);
    char what[600];
    snprintf(what, sizeof what, "making %s", lib);
    bool ok = run_tool(&a, what, o, d);
    argv_free(&a);
    return ok;
}

/* Compiles c_source into `final_path`.  Source and object are made in a
 * private temporary directory inside `dir` (so the final rename stays on
 * one file system and is atomic, and the linker creates the object fresh
 * with the usual permissions, less group and others' write); the object is
 * then renamed into place.  With `trouble`, a build whose directory was
 * removed under it (rm -rf of the cache), or that found its disk full,
 * reports nothing and says so there, for the caller to act on. */
/* What compile_into makes. */
typedef enum {
    BUILD_SO,        /* a shared object, linked with cg_libs */
    BUILD_ARCHIVE,   /* an object file in a static library */
    BUILD_OBJECT,    /* an object file (flags has -c) */
} build_kind;

/* Compiles c_source (or, when it is NULL, links the object files
 * inputs[0 .. ninputs - 1]) into `final_path`. */
/* mkdtemp(tmp), a folder in dir for building `what`; false after a
 * diagnostic, or with *trouble set (the folder vanished, a full disk). */
static bool make_temp_dir(char *tmp, const char *dir, const char *what, build_trouble *trouble,
                          diag *d)
{
    if (mkdtemp(tmp))
        return true;
    if (trouble && errno == ENOENT)
        trouble->vanished = true;
    else if (trouble && no_space(errno))
        trouble->disk_full = true;
    else
        diag_error(d, diag_noloc(), "cannot create %s: cannot make a temporary directory in "
                   "%s: %s", what, dir, strerror(errno));
    return false;
}

static bool compile_into(const char *c_source, char *const *inputs, int ninputs, const char *dir,
                         const char *final_path, const cg_argv *cc, const cg_argv *flags,
                         build_kind kind, const cg_options *o, build_trouble *trouble, diag *d)
{
    bool archive = kind == BUILD_ARCHIVE;
    char *tmp = path_join(dir, ".tec-XXXXXX");
    char *src = NULL, *obj = NULL, *lib = NULL;   /* lib: the archive of obj */
    cg_argv a = {0};
    bool ok = false, have_tmp = false;
    if (!tmp) {
        oom(d);
        goto out;
    }
    if (!make_temp_dir(tmp, dir, final_path, trouble, d))
        goto out;
    have_tmp = true;
    src = c_source ? path_join(tmp, "kernels.c") : NULL;
    obj = path_join(tmp, kind == BUILD_SO ? "kernels.so" : "kernels.o");
    lib = archive ? path_join(tmp, "kernels.a") : NULL;
    if ((c_source && !src) || !obj || (archive && !lib)) {
        oom(d);
        goto out;
    }
    if (c_source && !write_new_file(src, c_source, trouble, d))
        goto out;
    for (int i = 0; i < cc->n; i++)
        argv_push(&a, cc->v[i]);
    for (int i = 0; i < flags->n; i++)
        argv_push(&a, flags->v[i]);
    argv_push(&a, "-o");
    argv_push(&a, obj);
    if (c_source)
        argv_push(&a, src);
    for (int i = 0; i < ninputs; i++)
        argv_push(&a, inputs[i]);
    for (size_t i = 0; kind == BUILD_SO && i < sizeof cg_libs / sizeof *cg_libs; i++)
        argv_push(&a, cg_libs[i]);
    if (a.oom) {
        oom(d);
        goto out;
    }
    if (o && o->verbose)
        print_command(d, a.v);
    cg_run_result r;
    int slot = claim_build(tmp, src, obj);
    run_capture(a.v, cc_timeout(o), slot, &r);
    release_build(slot);
    struct stat st;
    bool full = r.output.p && (strstr(r.output.p, "No space left on device") ||
                               strstr(r.output.p, "Disk quota exceeded"));
    if (trouble && stat(tmp, &st) != 0 && errno == ENOENT) {
        trouble->vanished = true;
    } else if (trouble && full && (r.signal || r.exit_status != 0)) {
        trouble->disk_full = true;
    } else if (r.spawn_errno) {
        report_spawn_error(d, cc->v[0], r.spawn_errno);
    } else if (r.timed_out) {
        report_timeout(d, cc->v[0], cc_timeout(o));
    } else if (r.signal || r.exit_status != 0) {
        cg_text msg = {0};
        if (r.signal)
            text_printf(&msg, "\n  %s was killed by signal %d", cc->v[0], r.signal);
        else
            text_printf(&msg, "\n  %s exited with status %d", cc->v[0], r.exit_status);
        first_lines(&msg, r.output.p, r.output.len, 10);
        /* Messages about the generated file are tec's fault; a compiler
         * that fails without naming it (CC=false, a bad flag in CC) is the
         * user's setup; one that could not write its files found a full
         * disk (the kernel cache's, or TMPDIR's), neither tec's fault nor
         * CC's. */
        if (full) {
            diag_error(d, diag_noloc(), "the C compiler '%s' could not write its files: the "
                       "disk is full (of %s, or of TMPDIR); free space there, or give tec "
                       "another cache folder (XDG_CACHE_HOME, or --no-cache for TMPDIR)%s",
                       cc->v[0], dir, msg.p ? msg.p : "");
        } else if (r.output.p && (strstr(r.output.p, "kernels.c") || !c_source)) {
            text_printf(&msg, "\n  (tec --emit=c shows the generated source)");
            diag_internal(d, "codegen", "the C compiler failed on generated code%s",
                          msg.p ? msg.p : "");
        } else {
            diag_error(d, diag_noloc(), "the C compiler '%s' failed before compiling the "
                       "generated code (check CC)%s", cc->v[0], msg.p ? msg.p : "");
        }
        free(msg.p);
    } else if (stat(obj, &st) != 0) {
        diag_error(d, diag_noloc(), "the C compiler '%s' exited with status 0 but wrote no "
                   "shared object (is CC a C compiler?)", cc->v[0]);
    } else if (archive && !make_archive(obj, lib, o, d)) {
        /* reported */
    } else if (!not_writable_by_others(archive ? lib : obj) ||
               rename(archive ? lib : obj, final_path) != 0) {
        diag_error(d, diag_noloc(), "cannot create %s: %s", final_path, strerror(errno));
    } else {
        ok = true;
        if (stat(final_path, &st) == 0)   /* for the cache's trim (outside it: harmless) */
            cg_cache_wrote((long long)st.st_size);
    }
    free(r.output.p);
out:
    if (have_tmp) {
        if (src)
            unlink(src);
        if (obj)
            unlink(obj);
        if (lib)
            unlink(lib);
        rmdir(tmp);
    }
    argv_free(&a);
    free(tmp);
    free(src);
    free(obj);
    free(lib);
    return ok;
}

/* ---------------------------------------------------------------- the cache */

/* The cache directory the options and the environment name (malloc'ed),
 * or NULL with a diagnostic. */
static char *cache_dir_path(const cg_options *o, diag *d)
{
    if (o && o->cache_dir && *o->cache_dir)
        return strdup(o->cache_dir);
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/')  /* the XDG spec ignores relative values */
        return path_join(xdg, "tec");
    const char *home = getenv("HOME");
    struct stat st;
    if (home && *home && (stat(home, &st) != 0 || !S_ISDIR(st.st_mode))) {
        /* Not created: a home directory is the system's to make. */
        diag_error(d, diag_noloc(), "no directory for the kernel cache: HOME (%s) is not a "
                   "directory (set XDG_CACHE_HOME, or use --no-cache)", home);
        return NULL;
    }
    if (home && *home) {
        char *cache = path_join(home, ".cache");
        char *dir = cache ? path_join(cache, "tec") : NULL;
        free(cache);
        return dir;
    }
    diag_error(d, diag_noloc(), "no directory for the kernel cache: neither XDG_CACHE_HOME nor "
               "HOME is set (set one of them, or use --no-cache)");
    return NULL;
}

char *cg_cache_dir(const cg_options *o, diag *d)
{
    int errors = d->nerrors;
    char *dir = cache_dir_path(o, d);
    if (!dir && d->nerrors == errors)
        oom(d);   /* the only failure without a diagnostic of its own */
    return dir;
}

/* mkdir -p with mode 0700 for what it creates. */
static bool make_dirs(const char *path, build_trouble *trouble, diag *d)
{
    char failed[PATH_MAX];
    if (ir_make_dirs(path, 0700, failed, sizeof failed))
        return true;
    if (trouble && no_space(errno))
        trouble->disk_full = true;
    else if (errno == ENOMEM)
        oom(d);
    else
        diag_error(d, diag_noloc(), "cannot create the kernel cache directory %s: %s", failed,
                   strerror(errno));
    return false;
}

/* Creates the cache directory if needed and refuses one that someone else
 * could write into: a planted .so there would run inside tec. */
/* A run killed (SIGKILL: no handler cleans up) while it built leaves its
 * build folder, .tec-XXXXXX, in the cache (or, building without the
 * cache, its folder TMPDIR/tec-XXXXXX); while it wrote a run, import or
 * consts entry, the temporary file CACHE/run/KEY.EXT.tmp.PID.  A trim
 * that counts the cache's files (cg_cache_trim), and the first build of a
 * process without the cache, remove those a day old or more: no build
 * runs that long (the compiler's default time limit is
 * CG_DEFAULT_CC_TIMEOUT) and no entry takes that long to write, so none
 * belongs to a run still going. */
enum { STALE_BUILD_SECONDS = 24 * 3600 };

/* Whether name is what mkdtemp makes of PREFIX "XXXXXX". */
static bool temp_name(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(name, prefix, n) == 0 && strlen(name) == n + 6 && !strchr(name + n, '/');
}

/* Whether the file `name` in the folder dfd is ours and left a day ago
 * or more (its type: S_IFDIR or S_IFREG). */
static bool stale(int dfd, const char *name, mode_t type, time_t now)
{
    struct stat st;
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == type &&
           st.st_uid == geteuid() && now - st.st_mtime >= STALE_BUILD_SECONDS;
}

/* Removes the folder `name` in dfd, the files in it and, `depth` levels
 * down, the build folders (.tec-XXXXXX) in it; anything else in it stays,
 * and so does the folder then. */
static void remove_build_dir(int dfd, const char *name, int depth)
{
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *sub = fd >= 0 ? fdopendir(fd) : NULL;
    if (!sub) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *f;
    while ((f = readdir(sub)))
        if (strcmp(f->d_name, ".") != 0 && strcmp(f->d_name, "..") != 0 &&
            unlinkat(dirfd(sub), f->d_name, 0) != 0 && errno == EISDIR && depth > 0 &&
            temp_name(f->d_name, ".tec-"))
            remove_build_dir(dirfd(sub), f->d_name, depth - 1);
    closedir(sub);
    unlinkat(dfd, name, AT_REMOVEDIR);
}

/* Removes what killed runs left in the folder dir, a day old or more: the
 * folders named PREFIX "XXXXXX" (with the build folders in them) and,
 * with `tmp_files`, the files KEY.EXT.tmp.PID. */
static void sweep_folder(const char *dir, const char *prefix, bool tmp_files)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (temp_name(e->d_name, prefix) && stale(dirfd(dp), e->d_name, S_IFDIR, now))
            remove_build_dir(dirfd(dp), e->d_name, 1);
        else if (tmp_files && strlen(e->d_name) > 64 && strstr(e->d_name + 64, ".tmp.") &&
                 stale(dirfd(dp), e->d_name, S_IFREG, now))
            unlinkat(dirfd(dp), e->d_name, 0);
    }
    closedir(dp);
}

/* Creates the cache directory if needed and refuses one that someone else
 * could write into: a planted .so there would run inside tec. */
static bool private_dir(const char *dir, build_trouble *trouble, diag *d)
{
    if (!make_dirs(dir, trouble, d))
        return false;
    struct stat st;
    if (stat(dir, &st) != 0) {
        diag_error(d, diag_noloc(), "cannot use the kernel cache directory %s: %s", dir,
                   strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        diag_error(d, diag_noloc(), "cannot use the kernel cache directory %s: not a directory",
                   dir);
        return false;
    }
    if (st.st_uid != geteuid()) {
        diag_error(d, diag_noloc(), "refusing to use the kernel cache directory %s: it is owned "
                   "by uid %ld, not by you (uid %ld); remove it, set XDG_CACHE_HOME, or use "
                   "--no-cache", dir, (long)st.st_uid, (long)geteuid());
        return false;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        diag_error(d, diag_noloc(), "refusing to use the kernel cache directory %s: it is "
                   "writable by group or others (mode %04o), so anyone could have put kernels "
                   "in it; remove it (tec makes it again, private), or use --no-cache", dir,
                   (unsigned)(st.st_mode & 07777));
        return false;
    }
    return true;
}

/* With -march=native and friends the output depends on the CPU: key on
 * its model and feature flags too (a cache in a shared home directory must
 * not hand one machine's instructions to another). */
static void cpu_fields(cg_text *key, const cg_argv *flags)
{
    bool native = false;
    for (int i = 0; i < flags->n; i++)
        native |= strstr(flags->v[i], "native") != NULL;
    if (!native)
        return;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[8192];
    bool model = false, feat = false;
    while ((!model || !feat) && fgets(line, sizeof line, f)) {
        if (!model && strncmp(line, "model name", 10) == 0) {
            text_field(key, "cpu-model", line, strlen(line));
            model = true;
        } else if (!feat && strncmp(line, "flags", 5) == 0) {
            text_field(key, "cpu-flags", line, strlen(line));
            feat = true;
        }
    }
    fclose(f);
}

/* The cache key's text for everything but the C source: every input
 * that affects what the compiler makes of it (malloc'ed into *out). */
static bool key_prefix(const cg_argv *cc, const cg_argv *flags, const cg_target *target,
                       const char *identity, cg_text *out, diag *d)
{
    cg_text key = {0};
    /* the version counts how tec builds what it keys, beyond the flags:
     * v2, no kernel built at -O1 (an entry linked from v1's objects would
     * keep them) */
    text_printf(&key, "tec kernel cache v2\n");
    text_field(&key, "tec-version", PACKAGE_VERSION, strlen(PACKAGE_VERSION));
    for (int i = 0; i < cc->n; i++)
        text_field(&key, "cc", cc->v[i], strlen(cc->v[i]));
    for (int i = 0; i < flags->n; i++)
        text_field(&key, "flag", flags->v[i], strlen(flags->v[i]));
    for (size_t i = 0; i < sizeof cg_libs / sizeof *cg_libs; i++)
        text_field(&key, "flag", cg_libs[i], strlen(cg_libs[i]));
    /* The target reaches the object through -march (above) and the C
     * source (vector width, the schedule's tiles); its name is keyed too,
     * so two targets never share an entry.  Cores and cache sizes only act
     * through the source. */
    if (target) {
        text_field(&key, "target", target->name, strnlen(target->name, sizeof target->name));
        text_field(&key, "march", target->march, strnlen(target->march, sizeof target->march));
        text_printf(&key, "vector-bytes %d fma %d\n", target->vector_bytes, (int)target->fma);
    }
    text_field(&key, "cc-identity", identity, strlen(identity));
    for (size_t i = 0; i < sizeof cg_env_keys / sizeof *cg_env_keys; i++) {
        const char *v = getenv(cg_env_keys[i]);
        if (v)
            text_field(&key, cg_env_keys[i], v, strlen(v));
    }
    struct utsname u;
    if (uname(&u) == 0)
        text_field(&key, "machine", u.machine, strlen(u.machine));
    cpu_fields(&key, flags);
    if (key.oom || !key.p) {
        free(key.p);
        oom(d);
        return false;
    }
    *out = key;
    return true;
}

/* SHA-256 of the key prefix and the C source, as 64 hex digits. */
static void key_digest(const cg_text *prefix, const char *c_source, char hex[65])
{
    cg_sha256_ctx s;
    cg_sha256_init(&s);
    cg_sha256_update(&s, prefix->p, prefix->len);
    char len[64];
    snprintf(len, sizeof len, "source %zu:", strlen(c_source));
    cg_sha256_update(&s, len, strlen(len));
    cg_sha256_update(&s, c_source, strlen(c_source));
    uint8_t digest[32];
    cg_sha256_final(&s, digest);
    cg_sha256_to_hex(digest, hex);
}

/* The symbol every cache entry defines: the key it was built for (added to
 * the source after the key is computed from it). */
#define CACHE_KEY_SYMBOL "tec_cache_key"

/* Why the cache entry at path cannot be used for key hex, or NULL when it
 * can.  Before anything is loaded (a constructor runs at dlopen), the
 * entry must be a regular file of ours that no one else can write: a
 * symbolic link, another user's file or a group- or world-writable one may
 * have been planted while the directory was open (*untrusted: the user
 * should hear of it).  Then it must load (a
 * file cut short by a full disk or a crash must not poison the cache) and
 * say it is the build of this key (a stray shared object lacks the
 * kernels).  RTLD_LAZY: the runtime hooks it may need are checked when the
 * kernels load. */
static const char *entry_problem(const char *path, const char *hex, char *why, size_t n,
                                 bool *untrusted)
{
    struct stat st;
    *untrusted = true;
    if (lstat(path, &st) != 0)
        snprintf(why, n, "%s", strerror(errno));
    else if (S_ISLNK(st.st_mode))
        snprintf(why, n, "is a symbolic link");
    else if (!S_ISREG(st.st_mode))
        snprintf(why, n, "is not a regular file");
    else if (st.st_uid != geteuid())
        snprintf(why, n, "is owned by uid %ld, not by you", (long)st.st_uid);
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        snprintf(why, n, "is writable by group or others (mode %04o)",
                 (unsigned)(st.st_mode & 07777));
    else {
        *untrusted = false;
        cg_pin_openmp_runtime();
        void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            snprintf(why, n, "does not load (%s)", e ? e : "?");
            return why;
        }
        const char *key = dlsym(h, CACHE_KEY_SYMBOL);
        bool same = key && strcmp(key, hex) == 0;
        dlclose(h);
        if (same)
            return NULL;
        snprintf(why, n, "is not the build of its key (%s)",
                 key ? "it names another" : "no " CACHE_KEY_SYMBOL);
    }
    return why;
}

/* ---------------------------------------------------------------- upkeep (codegen/cache.h) */

/* A size as TEC_CACHE_MAX gives it: digits and an optional binary suffix
 * (K, M, G, T, either case); -1 when it is not one. */
static long long parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    static const char units[] = "KMGT";
    const char *u = *end ? strchr(units, end[0] & ~0x20) : NULL;
    int shift = u ? 10 * (int)(u - units + 1) : 0;
    if ((*end && (!u || !*u || end[1])) || v > (unsigned long long)(LLONG_MAX >> shift))
        return -1;
    return (long long)(v << shift);
}

long long cg_cache_limit(void)
{
    const char *s = getenv("TEC_CACHE_MAX");
    if (!s || !*s)
        return CG_CACHE_MAX_DEFAULT;
    if (strcmp(s, "unlimited") == 0)
        return -1;
    long long v = parse_size(s);
    if (v >= 0)
        return v;
    static atomic_flag said = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&said))
        fprintf(stderr, "tec: warning: TEC_CACHE_MAX=%s is not a size (bytes, or a number "
                "with K, M, G or T, or 'unlimited'); the cache is kept to %lld MiB\n", s,
                CG_CACHE_MAX_DEFAULT >> 20);
    return CG_CACHE_MAX_DEFAULT;
}

/* The cache folder's lock file, opened; -1 when it cannot be. */
static int open_lock(const char *top)
{
    char *p = path_join(top, ".lock");
    int fd = p ? open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
    free(p);
    return fd;
}

/* flock, again when a signal interrupts it. */
static int lock_file(int fd, int how)
{
    int r;
    while ((r = flock(fd, how)) != 0 && errno == EINTR)
        ;
    return r;
}

int cg_cache_hold(const char *top)
{
    int fd = open_lock(top);
    if (fd >= 0 && lock_file(fd, LOCK_SH) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

void cg_cache_release(int lock)
{
    if (lock >= 0)
        close(lock);   /* drops the flock */
}

void cg_cache_touch(const char *path)
{
    const struct timespec t[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
    utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW);
}

bool cg_cache_say_full(const char *top, const char *what)
{
    static atomic_flag said = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&said))
        return false;
    fprintf(stderr, "tec: warning: no space left on the disk of the cache folder %s; %s\n", top,
            what);
    return true;
}

/* How long a trim that has to count or remove waits for the lock (other
 * processes hold it shared for as long as it takes them to open an entry,
 * a split build until its link) before it leaves the trim to the next
 * writer; a trim within the cap does not wait (note_written). */
enum { TRIM_WAIT_MS = 2000, TRIM_POLL_MS = 10 };

/* One file of an entry: in the folder top (run 0) or top/run (run 1). */
typedef struct cache_file {
    char name[80];
    bool run, index;         /* index: the file whose time is its group's */
    long long size;
    struct timespec used;
} cache_file;

/* A group of files removed together: one entry. */
typedef struct cache_group {
    int first, n;            /* its files, consecutive once sorted */
    long long size;
    struct timespec used;
} cache_group;

/* Whether name is an entry file of the cache folder (run: of top/run),
 * KEY.EXT with KEY 64 lower-case hex digits; *index whether it is an
 * index file (any but a .weights or .constdata, the data of the .import
 * or .consts of its key). */
static bool entry_file(const char *name, bool run, bool *index)
{
    static const char *const top_ext[] = {".so", ".o", ".gch"};
    static const char *const run_ext[] = {".run", ".import", ".consts", ".stamp", ".weights",
                                          ".constdata"};
    for (int i = 0; i < 64; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
            return false;
    const char *ext = name + 64;
    const char *const *list = run ? run_ext : top_ext;
    size_t n = run ? sizeof run_ext / sizeof *run_ext : sizeof top_ext / sizeof *top_ext;
    for (size_t i = 0; i < n; i++)
        if (strcmp(ext, list[i]) == 0) {
            *index = strcmp(ext, ".weights") != 0 && strcmp(ext, ".constdata") != 0;
            return true;
        }
    return false;
}

static int ts_cmp(struct timespec a, struct timespec b)
{
    return a.tv_sec != b.tv_sec ? (a.tv_sec < b.tv_sec ? -1 : 1)
                                : (a.tv_nsec < b.tv_nsec ? -1 : a.tv_nsec > b.tv_nsec);
}

/* Files of one group next to each other, its index first. */
static int by_group(const void *a, const void *b)
{
    const cache_file *x = a, *y = b;
    int c = x->run != y->run ? x->run - y->run : strncmp(x->name, y->name, 64);
    if (c)
        return c;
    c = (int)y->index - (int)x->index;
    return c ? c : strcmp(x->name, y->name);
}

/* Least recently used first (files: the sorted files, for ties). */
static int by_use(const void *a, const void *b, void *files)
{
    const cache_group *x = a, *y = b;
    const cache_file *f = files;
    int c = ts_cmp(x->used, y->used);
    return c ? c : strcmp(f[x->first].name, f[y->first].name);
}

/* Appends the entry files of the folder dir to *files. */
static bool list_entries(const char *dir, bool run, cache_file **files, int *n, int *cap)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return errno == ENOENT;
    struct dirent *e;
    bool ok = true;
    while (ok && (e = readdir(dp))) {
        bool index;
        struct stat st;
        if (strlen(e->d_name) >= sizeof(*files)->name || strlen(e->d_name) < 66 ||
            !entry_file(e->d_name, run, &index) ||
            fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        if (*n == *cap) {
            int c = *cap ? 2 * *cap : 256;
            cache_file *f = realloc(*files, sizeof *f * (size_t)c);
            if (!(ok = f != NULL))
                break;
            *files = f;
            *cap = c;
        }
        cache_file *f = &(*files)[(*n)++];
        snprintf(f->name, sizeof f->name, "%s", e->d_name);
        f->run = run;
        f->index = index;
        f->size = (long long)st.st_size;
        f->used = st.st_mtim;
    }
    closedir(dp);
    return ok;
}

/* Whether two files (sorted by_group) are of one entry: one key in one
 * folder, and a data file after its index (a .weights after a .import). */
static bool same_group(const cache_file *a, const cache_file *b)
{
    if (a->run != b->run || strncmp(a->name, b->name, 64) != 0 || b->index)
        return false;
    const char *ia = a->name + 64, *db = b->name + 64;
    return (strcmp(ia, ".import") == 0 && strcmp(db, ".weights") == 0) ||
           (strcmp(ia, ".consts") == 0 && strcmp(db, ".constdata") == 0);
}

/* Removes the group's files, its index first (a reader that finds no
 * index never looks for the data). */
static void remove_group(const char *top, const char *run_dir, const cache_file *f, int n)
{
    for (int i = 0; i < n; i++) {
        char *p = path_join(f[i].run ? run_dir : top, f[i].name);
        if (p)
            unlink(p);
        free(p);
    }
}

/* Takes the folder's lock exclusively, waiting up to wait_ms; -1 when it
 * cannot be had. */
static int lock_exclusive(const char *top, int wait_ms)
{
    int fd = open_lock(top);
    for (int waited = 0; fd >= 0; waited += TRIM_POLL_MS) {
        if (lock_file(fd, LOCK_EX | LOCK_NB) == 0)
            return fd;
        if (errno != EWOULDBLOCK || waited >= wait_ms)
            break;
        nanosleep(&(struct timespec){0, TRIM_POLL_MS * 1000000L}, NULL);
    }
    if (fd >= 0)
        close(fd);
    return -1;
}

/* Counting the entries' bytes means a stat of every file (20,000 files:
 * 40 ms of CPU), so a trim counts only when the folder may be over its
 * cap: the lock file holds the bytes counted last and when, plus what
 * writers wrote since (cg_cache_wrote; added into that line by a trim
 * that had the lock, or appended as a line of its own by one that did not
 * wait for it: note_written; more than they added when they
 * replaced an entry, which only brings the next count forward).  Writers
 * that do not add theirs (an older tec) are caught by the count an hour
 * after the last. */
enum { RECOUNT_SECONDS = 3600 };

static _Atomic long long bytes_written;   /* by this process, since its last trim */

void cg_cache_wrote(long long bytes)
{
    if (bytes > 0)
        atomic_fetch_add(&bytes_written, bytes);
}

/* The usage the lock file holds (its bytes, when they were counted, plus
 * what the lines writers appended since add: note_written); false when it
 * holds none, or a line that is not one of those (half written: the
 * folder is counted again). */
static bool read_usage(int lock, long long *bytes, long long *counted)
{
    char buf[8192];
    ssize_t n = pread(lock, buf, sizeof buf - 1, 0);
    if (n <= 0 || n == (ssize_t)sizeof buf - 1)
        return false;   /* none, or so many lines that a count is due anyway */
    buf[n] = 0;
    int used;
    if (sscanf(buf, "tec cache usage %lld bytes counted at %lld\n%n", bytes, counted, &used) != 2 ||
        *bytes < 0)
        return false;
    for (const char *line = buf + used; *line; line += used) {
        long long wrote;
        used = 0;
        if (sscanf(line, "tec cache wrote %lld bytes\n%n", &wrote, &used) != 1 || used == 0 ||
            wrote < 0 || __builtin_add_overflow(*bytes, wrote, bytes))
            return false;
    }
    return true;
}

static void write_usage(int lock, long long bytes, long long counted)
{
    char buf[96];
    int n = snprintf(buf, sizeof buf, "tec cache usage %lld bytes counted at %lld\n", bytes,
                     counted);
    if (ftruncate(lock, 0) == 0 && pwrite(lock, buf, (size_t)n, 0) != n)
        (void)ftruncate(lock, 0);   /* half a line: counted again next time */
}

/* The fast way out of a trim while other processes hold the lock (a split
 * build holds it shared from finding its objects until its link, seconds):
 * under the lock shared, when the usage recorded, with what this process
 * wrote, is fresh and within `limit`, appends a line with what it wrote
 * (the next trim adds it; O_APPEND: lines of several writers do not
 * overwrite each other) and returns true without waiting for the lock.
 * False when a trim has to count or remove: then it waits for the lock. */
static bool note_written(const char *top, long long limit)
{
    int lock = cg_cache_hold(top);   /* waits only for a trim that runs */
    long long usage, counted, now = (long long)time(NULL);
    long long added = atomic_load(&bytes_written);
    bool within = lock >= 0 && read_usage(lock, &usage, &counted) &&
                  !__builtin_add_overflow(usage, added, &usage) && usage <= limit &&
                  now >= counted && now - counted < RECOUNT_SECONDS;
    if (within && added > 0) {
        char line[64];
        int n = snprintf(line, sizeof line, "tec cache wrote %lld bytes\n", added);
        int flags = fcntl(lock, F_GETFL);
        within = flags >= 0 && fcntl(lock, F_SETFL, flags | O_APPEND) == 0 &&
                 write(lock, line, (size_t)n) == n;   /* a half line: counted next time */
        if (within)
            atomic_fetch_sub(&bytes_written, added);
    }
    cg_cache_release(lock);
    return within;
}

void cg_cache_trim(const char *top, bool verbose)
{
    long long limit = cg_cache_limit();
    if (limit < 0)
        limit = LLONG_MAX;   /* no cap: the usage still counted, for a cap set later */
    int lock = lock_exclusive(top, 0);
    if (lock < 0 && note_written(top, limit))
        return;
    if (lock < 0)
        lock = lock_exclusive(top, TRIM_WAIT_MS);   /* over the cap, or to be counted */
    if (lock < 0) {
        if (verbose)
            fprintf(stderr, "tec: cache: not trimmed: its lock %s/.lock is busy or cannot be "
                    "had\n", top);
        return;
    }
    long long usage, counted, now = (long long)time(NULL);
    long long added = atomic_exchange(&bytes_written, 0);
    if (read_usage(lock, &usage, &counted) && !__builtin_add_overflow(usage, added, &usage) &&
        usage <= limit && now >= counted && now - counted < RECOUNT_SECONDS) {
        write_usage(lock, usage, counted);
        cg_cache_release(lock);
        return;
    }
    char *run_dir = path_join(top, "run");
    sweep_folder(top, ".tec-", false);
    if (run_dir)
        sweep_folder(run_dir, ".tec-", true);   /* no build folders there: the files */
    cache_file *files = NULL;
    cache_group *groups = NULL;
    int n = 0, cap = 0, ng = 0;
    if (!run_dir || !list_entries(top, false, &files, &n, &cap) ||
        !list_entries(run_dir, true, &files, &n, &cap))
        goto out;
    long long total = 0;
    for (int i = 0; i < n; i++)
        total += files[i].size;
    write_usage(lock, total, now);
    if (total <= limit)
        goto out;
    qsort(files, (size_t)n, sizeof *files, by_group);
    if (!(groups = malloc(sizeof *groups * (size_t)(n + 1))))
        goto out;
    for (int i = 0; i < n; i++) {
        if (i == 0 || !same_group(&files[groups[ng - 1].first], &files[i]))
            groups[ng++] = (cache_group){i, 0, 0, files[i].used};
        cache_group *g = &groups[ng - 1];
        g->n++;
        g->size += files[i].size;
        if (ts_cmp(files[i].used, g->used) > 0)
            g->used = files[i].used;
    }
    qsort_r(groups, (size_t)ng, sizeof *groups, by_use, files);
    /* down to nine tenths of the cap, so that the writes of the next runs
     * fit without a count each */
    long long target = limit - limit / 10, removed = 0;
    int k = 0;
    for (; k < ng && total > target; k++) {
        remove_group(top, run_dir, &files[groups[k].first], groups[k].n);
        total -= groups[k].size;
        removed += groups[k].size;
    }
    write_usage(lock, total, now);
    if (verbose)
        fprintf(stderr, "tec: cache: trimmed %s to %lld bytes (its cap: %lld): removed the %d "
                "least recently used entries (%lld bytes)\n", top, total, limit, k, removed);
out:
    free(groups);
    free(files);
    free(run_dir);
    cg_cache_release(lock);
}

/* ---------------------------------------------------------------- no-cache temporaries */

/* Temporary directories made for no-cache builds, removed when their
 * kernels have been loaded (cg_release_temp) or at exit. */
typedef struct cg_temp_dir {
    char *dir, *so;
    struct cg_temp_dir *next;
} cg_temp_dir;

static pthread_mutex_t temp_lock = PTHREAD_MUTEX_INITIALIZER;
static cg_temp_dir *temps;
static bool temp_atexit_done;

static void remove_temp(cg_temp_dir *t)
{
    unlink(t->so);
    rmdir(t->dir);
    free(t->dir);
    free(t->so);
    free(t);
}

static void remove_all_temps(void)
{
    pthread_mutex_lock(&temp_lock);
    while (temps) {
        cg_temp_dir *t = temps;
        temps = t->next;
        remove_temp(t);
    }
    pthread_mutex_unlock(&temp_lock);
}

/* Cache entries cg_compile handed out, held open until cg_load has
 * loaded them: a trim of this or another process may remove the file
 * meanwhile, and the loader then loads it through the open file
 * (cg_cache_held_fd).  Open, not loaded: a file changed in place (which
 * no writer of the cache does) cannot fault a mapping held here. */
typedef struct cg_held_entry {
    char *so;
    int fd;
    struct cg_held_entry *next;
} cg_held_entry;

static cg_held_entry *held;

/* Lets go of the hold of so_path, if there is one. */
static void drop_hold(const char *so_path)
{
    pthread_mutex_lock(&temp_lock);
    for (cg_held_entry **p = &held; *p; p = &(*p)->next)
        if (strcmp((*p)->so, so_path) == 0) {
            cg_held_entry *e = *p;
            *p = e->next;
            close(e->fd);
            free(e->so);
            free(e);
            break;
        }
    pthread_mutex_unlock(&temp_lock);
}

/* Holds the entry so_path open until cg_release_temp (one hold per path:
 * a second replaces the first).  Without memory or a descriptor for that
 * it is not held: a file trimmed before the load is then a load error. */
static void hold_open(const char *so_path)
{
    drop_hold(so_path);
    cg_held_entry *e = malloc(sizeof *e);
    if (!e || !(e->so = strdup(so_path))) {
        free(e);
        return;
    }
    if ((e->fd = open(so_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
        free(e->so);
        free(e);
        return;
    }
    pthread_mutex_lock(&temp_lock);
    e->next = held;
    held = e;
    pthread_mutex_unlock(&temp_lock);
}

int cg_cache_held_fd(const char *so_path)
{
    int fd = -1;
    pthread_mutex_lock(&temp_lock);
    for (const cg_held_entry *e = held; e && fd < 0; e = e->next)
        if (strcmp(e->so, so_path) == 0)
            fd = e->fd;
    pthread_mutex_unlock(&temp_lock);
    return fd;
}

void cg_release_temp(const char *so_path)
{
    if (!so_path)
        return;
    drop_hold(so_path);
    cg_temp_dir *found = NULL;
    pthread_mutex_lock(&temp_lock);
    for (cg_temp_dir **p = &temps; *p; p = &(*p)->next)
        if (strcmp((*p)->so, so_path) == 0) {
            found = *p;
            *p = found->next;
            break;
        }
    pthread_mutex_unlock(&temp_lock);
    if (found)
        remove_temp(found);
}

/* ---------------------------------------------------------------- split builds */

/* Builds of a model's kernels as several translation units (codegen/
 * split.h): one per distinct kernel, compiled side by side (as many at a
 * time as tec may use processors) into object files kept in the cache
 * under the key of their own text; one unit for all the prepack kernels,
 * which run once when the weights load, built at -O1 (cheap to compile,
 * and their speed hardly counts); and one "glue" unit with the globals,
 * the exported kernels forwarding to the shared code (but those the link
 * makes aliases of it: write_alias_script), and the entry's key, built
 * at -O1 too.  Then one link.  A kernel that another model (or an earlier
 * version of this one) shares is not compiled again. */

/* How split builds run the compiler. */
typedef struct split_ctx {
    const cg_argv *cc, *so_flags, *obj_flags;
    const cg_argv *cold_flags;       /* NULL: no unit is built apart as cold */
    const cg_argv *light_flags;      /* NULL: no unit is built apart as light (light_units) */
    const cg_argv *glue_flags;       /* NULL: the glue is built as cold code (glue_job) */
    const cg_text *obj_prefix, *cold_prefix, *light_prefix, *glue_prefix;   /* key prefixes of the four */
    const ir_module *module;
    /* A library of its own (cg_compile_library), else NULL and 0: */
    const char *extra_c;        /* one more unit, never cached (the library's runtime) */
    const char *link_dir;       /* where it and the link's temporaries go */
    const char *const *exports; /* the only symbols left global */
    int nexports;
    bool archive;               /* a static archive instead of a shared object */
} split_ctx;

/* One translation unit of a split build. */
typedef struct tu_job {
    char *text;             /* its source */
    const cg_argv *flags;   /* its compiler flags */
    const char *dir;        /* where it is built (NULL: with the others) */
    bool private_obj;       /* never cached: built, linked, removed */
    char *path;             /* its object file */
    size_t size;
    bool reused;            /* the object was in the cache */
    bool glue;              /* the glue unit (glue_job) */
    bool intrin;            /* its text includes the intrinsics header */
    const cg_argv *pch_flags;   /* flags with the precompiled header (NULL: none), used
                                 * once it is in place (pch_build) */
    bool ok;
    build_trouble trouble;
    diag d;                 /* what its build reported, replayed in order */
    FILE *mem;
    char *msg;
    size_t msglen;
} tu_job;

/* How a unit is built: a distinct kernel's at UNIT_FULL or UNIT_LIGHT
 * (light_units below); UNIT_COLD (-O1) is the prepack kernels' and the
 * glue's level only. */
typedef enum { UNIT_FULL, UNIT_LIGHT, UNIT_COLD, UNIT_NLEVELS } unit_level;

/* ---- The intrinsics header, precompiled.
 *
 * Reading <immintrin.h> with -march=native (the AVX-512 headers) costs GCC
 * 0.13-0.2 s of CPU in every unit that includes it: 16 of R(2+1)D-18's 22
 * units, 2.5 s of its 11.6 (bench/results/unseen_s16.txt).  GCC reads a
 * precompiled header instead (mapped: about 10 ms; 0.2 s of CPU on the
 * Zen 5 VM, bench/results/compile_s30.txt) when a unit's first
 * include (`-include H`) finds H.gch beside H, built by the same compiler
 * with the same flags; it checks that, and reads H itself when they differ
 * (never wrong, only slower).  The levels share one: GCC takes a header
 * precompiled at the full level in units built at -O1 and -O2 (the same
 * __OPTIMIZE__), and their code is the same as with the header read
 * (objdump of R(2+1)D-18's units at the three levels).  Building it costs
 * about 0.6 s of CPU (it writes 24 MB), so a build makes one only for
 * PCH_MIN_UNITS units or more to compile with the header, beside the
 * units (one processor builds it while the others compile units without
 * it); it is kept in the kernel cache (KEY.gch, keyed as an object of the
 * full level whose text is PCH_TEXT), and a later build with it there
 * uses it for any number of units.  GCC only: clang's precompiled headers
 * are another format. */
#define PCH_MIN_UNITS 6
#define PCH_TEXT "#include <immintrin.h>\n"
#define PCH_HEADER "tec_intrin.h"

typedef struct pch_build {
    char *dir;                      /* a private folder: the header, the .gch link */
    char *header;                   /* dir/PCH_HEADER, the units' -include */
    char *gch;                      /* dir/PCH_HEADER.gch, a link to job.path */
    tu_job job;                     /* builds job.path, the cache's KEY.gch */
    cg_argv build_flags;            /* the full level's, for a header (-x c-header) */
    cg_argv unit_flags[UNIT_NLEVELS];   /* each level's, with -include header */
    bool ready;                     /* gch is in place (under the pool's lock) */
} pch_build;

typedef struct tu_pool {
    tu_job *jobs;
    int n, next;
    pch_build *pch;                 /* NULL: none; its job runs first */
    bool pch_taken;
    pthread_mutex_t lock;
    const char *dir;
    const cg_argv *cc;
    const cg_options *o;
} tu_pool;

static void *tu_worker(void *arg)
{
    tu_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        pch_build *pch = p->pch && !p->pch_taken && !p->pch->ready ? p->pch : NULL;
        int i = pch ? -1 : p->next++;
        p->pch_taken |= pch != NULL;
        bool ready = p->pch && p->pch->ready;
        pthread_mutex_unlock(&p->lock);
        if (pch) {
            /* the header for the units after it; failing it fails none */
            bool ok = compile_into(pch->job.text, NULL, 0, p->dir, pch->job.path, p->cc,
                                   &pch->build_flags, BUILD_OBJECT, p->o, &pch->job.trouble,
                                   &pch->job.d) &&
                      link(pch->job.path, pch->gch) == 0;
            pthread_mutex_lock(&p->lock);
            pch->ready = ok;
            pthread_mutex_unlock(&p->lock);
            continue;
        }
        if (i >= p->n)
            return NULL;
        tu_job *j = &p->jobs[i];
        if (j->reused)
            continue;
        const char *dir = j->dir ? j->dir : p->dir;
        j->ok = false;
        if (ready && j->pch_flags) {
            /* with the precompiled header; should it fail (a .gch cut
             * short, which GCC reports rather than skips), as before */
            diag quiet;
            diag_init(&quiet, NULL);
            build_trouble trouble = {0};
            j->ok = compile_into(j->text, NULL, 0, dir, j->path, p->cc, j->pch_flags,
                                 BUILD_OBJECT, p->o, &trouble, &quiet);
            diag_fini(&quiet);
        }
        if (!j->ok)
            j->ok = compile_into(j->text, NULL, 0, dir, j->path, p->cc, j->flags, BUILD_OBJECT,
                                 p->o, &j->trouble, &j->d);
    }
}

/* The processors tec may run on. */
static int usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Largest first: the long compilations start early. */
static int by_size_desc(const void *a, const void *b)
{
    const tu_job *x = a, *y = b;
    return x->size < y->size ? 1 : x->size > y->size ? -1 : strcmp(x->path, y->path);
}

/* Whether the object file at path may be linked: a regular file of ours
 * that no one else can write (as entry_problem asks of a .so); it is then
 * marked used.  A file cut short, or removed by a trim before the link,
 * shows when the link fails; the build then starts over. */
static bool object_usable(const char *path, diag *d)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return false;
    if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH)) &&
        st.st_size > 0) {
        cg_cache_touch(path);
        return true;
    }
    diag_warning(d, diag_noloc(), "kernel cache entry %s is not a private, non-empty regular "
                 "file; not using it, rebuilding it", path);
    unlink(path);
    return false;
}

/* Compiles the jobs not reused, as many at a time as there are usable
 * processors; false after a diagnostic (or with *trouble). */
static bool run_jobs(tu_job *jobs, int n, pch_build *pch, const char *dir, const cg_argv *cc,
                     const cg_options *o, build_trouble *trouble, diag *d)
{
    int todo = 0;
    for (int i = 0; i < n; i++) {
        todo += !jobs[i].reused;
        jobs[i].ok = jobs[i].reused;
        jobs[i].trouble = (build_trouble){0};
        jobs[i].msg = NULL;
        jobs[i].msglen = 0;
        /* Without a memory stream, messages go straight out (FILE locks). */
        jobs[i].mem = open_memstream(&jobs[i].msg, &jobs[i].msglen);
        diag_init(&jobs[i].d, jobs[i].mem ? jobs[i].mem : d->out);
    }
    tu_pool pool = {jobs, n, 0, pch, false, PTHREAD_MUTEX_INITIALIZER, dir, cc, o};
    int nthreads = usable_cpus();
    if (nthreads > todo + (pch && !pch->ready))
        nthreads = todo + (pch && !pch->ready);
    pthread_t tid[MAX_BUILDS];   /* one build slot each, for the signal handler */
    int started = 0;
    for (int i = 1; i < nthreads && started < MAX_BUILDS - 1; i++)
        if (pthread_create(&tid[started], NULL, tu_worker, &pool) == 0)
            started++;
    tu_worker(&pool);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    bool ok = true;
    for (int i = 0; i < n; i++) {
        tu_job *j = &jobs[i];
        if (j->mem)
            fclose(j->mem);
        /* Units that fail alike (CC=false fails them all) are told once. */
        bool again = false;
        for (int k = 0; k < i && !again && j->msg; k++)
            again = !jobs[k].ok && jobs[k].msg && jobs[k].msglen == j->msglen &&
                    memcmp(jobs[k].msg, j->msg, j->msglen) == 0;
        if (j->msg && j->msglen && d->out && !again) {
            fwrite(j->msg, 1, j->msglen, d->out);
            fflush(d->out);
        }
        if (!again) {
            d->nerrors += j->d.nerrors;
            d->ninternal += j->d.ninternal;
        }
        diag_fini(&j->d);
        j->mem = NULL;
        if (trouble) {
            trouble->vanished |= j->trouble.vanished;
            trouble->disk_full |= j->trouble.disk_full;
        }
        ok &= j->ok;
    }
    for (int i = 0; i < n; i++) {
        free(jobs[i].msg);
        jobs[i].msg = NULL;
    }
    return ok;
}

/* The module function the unit's exported kernel (tec_k<index>_...) is,
 * or NULL. */
static const ir_func *unit_func(const split_ctx *x, const cg_unit *u)
{
    if (!x->module)
        return NULL;
    char *end;
    long i = strtol(u->symbol + 5, &end, 10);   /* tec_k<index>_ */
    if (end == u->symbol + 5 || *end != '_' || i < 0 || i >= x->module->nfuncs)
        return NULL;
    return x->module->funcs[i];
}

/* Whether the unit's kernel is a prepack function of the module. */
static bool cold_unit(const split_ctx *x, const cg_unit *u)
{
    const ir_func *f = x->cold_flags ? unit_func(x, u) : NULL;
    const char *op = f ? ir_func_attr(f, "op") : NULL;
    return op && strcmp(op, "prepack") == 0;
}

/* ---- Light kernels: compiled at -O2 instead of -O3.
 *
 * Most of a model's kernels do little of its work (its pads, concatenations,
 * pools, softmaxes and norms beside its contractions) but much of its C:
 * 96 of MaxViT-T's 113 distinct kernels, 2/3 of its C.  -O2 builds a unit
 * in about 3/4 of -O3's time (1.29 vs 1.77 s for MaxViT-T's largest); what
 * -O3 adds (loop versioning, unswitching, gcc's own vectorizer and
 * unrolling) is little for code the IR has vectorized already, and counts
 * only where the time goes.  So the distinct kernels that do least,
 * together at most LIGHT_SHARE of the model's estimated work, are built at
 * -O2: whatever they lose is a fraction of that share.  The layers' minima
 * of MaxViT-T and EfficientNet-B0 did not change (bench/results/
 * cold_s13.txt); but plain -O2 left loops over small local arrays in
 * memory, 1.3-3x slower (depthwise and int8 convs, pools): light units also
 * get -fpeel-loops (setup_build).
 *
 * No kernel is built at -O1 (as the prepack kernels and the glue are):
 * without -O2's common-subexpression and partial-redundancy passes a
 * register tile recomputes its addresses at every load, and the least
 * working 1% of ResNeXt-50's work, built so, held its grouped 3x3
 * convolution of stride 2 at 763 us instead of 420 (2.2 s of 3.3 s to
 * compile it either way: bench/results/cold_s22.txt). */
#define LIGHT_SHARE 0.10

/* Operations a math call (exp, erf, tanh ...) costs, as additions do 1. */
#define MATH_CALL_OPS 16.0

static bool count_expr_ops(const ir_expr *e, void *ctx)
{
    double *ops = ctx;
    *ops += e->kind == IR_CALL && ir_intrin_class(e->fn) == 'm' ? MATH_CALL_OPS : 1.0;
    return true;
}

static double expr_ops(const ir_expr *e)
{
    double ops = 0;
    if (e)
        ir_expr_walk(e, count_expr_ops, &ops);
    return ops;
}

/* Operations s runs per call, a vector operation counting as one: the sum
 * over its statements of their expressions' nodes times the iterations of
 * the loops around them (an IF's larger branch counted).  INFINITY when a
 * loop's bounds are not constants: its work is unknown. */
static double stmt_work(const ir_stmt *s)
{
    if (!s)
        return 0;
    double w = 0;
    switch (s->kind) {
    case IR_S_SEQ:
        for (int i = 0; i < s->nbody; i++)
            w += stmt_work(s->body[i]);
        return w;
    case IR_S_FOR: {
        if (!s->lo || !s->hi || s->lo->kind != IR_INT || s->hi->kind != IR_INT)
            return INFINITY;
        int64_t step = ir_for_step(s), n = s->hi->ival - s->lo->ival;
        double trips = n > 0 ? (double)((n + step - 1) / step) : 0;
        return trips ? trips * (1 + stmt_work(s->body[0])) : 0;
    }
    case IR_S_BLOCK:
        return stmt_work(s->init) + stmt_work(s->nbody ? s->body[0] : NULL);
    case IR_S_IF: {
        double then = stmt_work(s->nbody ? s->body[0] : NULL), orelse = stmt_work(s->orelse);
        if (then == 0 && orelse == 0)
            return 0;   /* it guards no work (a prefetch) */
        return expr_ops(s->cond) + (then > orelse ? then : orelse);
    }
    case IR_S_STORE:
        w = 1 + expr_ops(s->value);
        for (int i = 0; i < s->nargs; i++)
            w += expr_ops(s->args[i]);
        return w;
    case IR_S_PREFETCH:
        /* a hint, not the kernel's work: counted, the prefetched kernels
         * would push others into the lighter builds (mobilenet_v2's stem
         * and classifier to -O2: +8..17%) */
        return 0;
    case IR_S_ALLOC:
    case IR_S_LET:
        return expr_ops(s->value) + stmt_work(s->nbody ? s->body[0] : NULL);
    default:   /* EVAL, ASSERT */
        return 1 + expr_ops(s->value) + expr_ops(s->cond);
    }
}

typedef struct unit_work {
    int unit;      /* a distinct unit: sp->units[unit].first == unit */
    double work;   /* stmt_work of every kernel sharing its code, summed */
} unit_work;

static int by_work(const void *a, const void *b)
{
    const unit_work *x = a, *y = b;
    return x->work < y->work ? -1 : x->work > y->work ? 1 : x->unit - y->unit;
}

/* Sets level[i] for the distinct units (but the prepack ones): UNIT_LIGHT
 * for those that do least, together at most LIGHT_SHARE of the work of all
 * (see above); a unit of unknown work is never light, and counts as none in
 * the total.  False when out of memory (level stays all UNIT_FULL). */
static bool light_units(const cg_csplit *sp, const split_ctx *x, unsigned char *level)
{
    if (!x->light_flags || !x->module)
        return true;
    double *work = calloc((size_t)sp->n + 1, sizeof *work);
    unit_work *order = calloc((size_t)sp->n + 1, sizeof *order);
    if (!work || !order) {
        free(work);
        free(order);
        return false;
    }
    for (int i = 0; i < sp->n; i++) {
        const ir_func *f = unit_func(x, &sp->units[i]);
        work[sp->units[i].first] += f ? stmt_work(f->body) : INFINITY;
    }
    double total = 0;
    int n = 0;
    for (int i = 0; i < sp->n; i++)
        if (sp->units[i].first == i && !cold_unit(x, &sp->units[i])) {
            order[n++] = (unit_work){i, work[i]};
            total += isfinite(work[i]) ? work[i] : 0;
        }
    qsort(order, (size_t)n, sizeof *order, by_work);
    double sum = 0;
    for (int k = 0; k < n && isfinite(order[k].work); k++) {
        sum += order[k].work;
        if (sum > LIGHT_SHARE * total)
            break;
        level[order[k].unit] = UNIT_LIGHT;
    }
    free(work);
    free(order);
    return true;
}

/* A library of its own from the objects (cg_compile_library): a shared
 * object whose version script leaves only the exports global, or a static
 * archive of one object, partially linked (cc -r) with every symbol but
 * the exports made local (objcopy), so that two libraries of tec's kernels
 * link into one program. */
static bool link_library(char *const *inputs, int n, const char *final_path, const split_ctx *x,
                         const cg_options *o, diag *d)
{
    char *tmp = path_join(x->link_dir, ".tec-lib-XXXXXX");
    char *part = NULL, *arch = NULL;
    cg_argv flags = {0}, tool = {0};
    bool ok = false;
    if (!tmp || !mkdtemp(tmp)) {
        if (tmp)
            diag_error(d, diag_noloc(), "cannot create %s: cannot make a temporary directory "
                       "in %s: %s", final_path, x->link_dir, strerror(errno));
        else
            oom(d);
        free(tmp);
        return false;
    }
    if (!x->archive) {
        cg_text vs = {0};
        text_printf(&vs, "{\n  global:\n");
        for (int i = 0; i < x->nexports; i++)
            text_printf(&vs, "    %s;\n", x->exports[i]);
        text_printf(&vs, "  local: *;\n};\n");
        part = path_join(tmp, "exports.map");
        cg_text opt = {0};
        text_printf(&opt, "-Wl,--version-script=%s", part ? part : "");
        for (int i = 0; i < x->so_flags->n; i++)
            argv_push(&flags, x->so_flags->v[i]);
        argv_push(&flags, opt.p ? opt.p : "");
        if (vs.oom || opt.oom || !part || flags.oom)
            oom(d);
        else if (write_new_file(part, vs.p, NULL, d))
            ok = compile_into(NULL, inputs, n, x->link_dir, final_path, x->cc, &flags, BUILD_SO,
                              o, NULL, d);
        free(vs.p);
        free(opt.p);
        goto out;
    }
    part = path_join(tmp, "library.o");
    arch = path_join(tmp, "library.a");
    argv_push(&flags, "-r");
    argv_push(&flags, "-nostdlib");
    argv_push(&tool, "objcopy");
    for (int i = 0; i < x->nexports; i++) {
        char keep[300];
        snprintf(keep, sizeof keep, "--keep-global-symbol=%s", x->exports[i]);
        argv_push(&tool, keep);
    }
    argv_push(&tool, part ? part : "");
    if (!part || !arch || flags.oom) {
        oom(d);
        goto out;
    }
    ok = compile_into(NULL, inputs, n, tmp, part, x->cc, &flags, BUILD_OBJECT, o, NULL, d) &&
         run_tool(&tool, "making the library's symbols local", o, d) &&
         make_archive(part, arch, o, d);
    if (ok && (!not_writable_by_others(arch) || rename(arch, final_path) != 0)) {
        diag_error(d, diag_noloc(), "cannot create %s: %s", final_path, strerror(errno));
        ok = false;
    }
out:
    if (part)
        unlink(part);
    if (arch)
        unlink(arch);
    rmdir(tmp);
    free(tmp);
    free(part);
    free(arch);
    argv_free(&flags);
    argv_free(&tool);
    return ok;
}

/* Links the objects of a split build into final_path (see link_library
 * for a library of its own). */
static bool link_objects(char *const *inputs, int n, const char *dir, const char *final_path,
                         const split_ctx *x, const cg_options *o, build_trouble *trouble,
                         diag *d)
{
    if (x->link_dir)
        return link_library(inputs, n, final_path, x, o, d);
    return compile_into(NULL, inputs, n, dir, final_path, x->cc, x->so_flags, BUILD_SO, o,
                        trouble, d);
}

/* Kernels whose shared code is smaller than BUNDLE_SMALL bytes (every one
 * that includes <immintrin.h>, up to BUNDLE_BYTES) are compiled together,
 * in the file's order, in translation units of up to BUNDLE_BYTES of code,
 * those with the header apart from those without: each run of the
 * compiler costs its start and the headers.  On the 2-core Zen 5 VM with
 * GCC 12 (-O3 -fopenmp -march=native) that is 0.06 s of CPU to start, 0.09
 * with the standard headers and 0.4 with <immintrin.h>, about what 7 KB
 * (33 KB) of kernel code costs to compile: a kernel of 24 KB compiled
 * alone pays a quarter more.  Bundling those (8 KB and 48 KB before) took
 * ResNet-18 from 22 units to 7, its cold start from 8.1 s of CPU to 5.4,
 * and Inception-v3 from 52 units to 15, 19.8 s to 14.9; the kernels'
 * instructions are the same (bench/results/compile_s29.txt).  Since the
 * transposed copies need no header (emit_vector.c), the kernels of 24-40
 * KB that used them (and so were bundled) and their like (MViT-B's 20
 * GEMMs of 28-38 KB, a unit each) are bundled too: MViT-B 42 units to 26,
 * MaxViT-T 28 to 19, RegNetY-400MF 26 to 14, DenseNet-121 18 to 11
 * (bench/results/compile_s30.txt).  Units of up
 * to 96 KB (1.2-2.4 s of CPU) still leave two processors evenly busy, the
 * largest started first.  Larger kernels keep a unit each, cached by their
 * own code: a model that shares one with another takes it from the cache;
 * bundled kernels are reused when their whole unit is the same
 * (testsuite/cli/kernel_cache_reuse.sh), so a model that shares only
 * some of a unit's kernels compiles them again. */
#define BUNDLE_BYTES 98304
#define BUNDLE_SMALL 40960
#define BUNDLE_SMALL_INTRIN BUNDLE_BYTES

/* The translation unit of the distinct units units[0..n): their prelude
 * (`prelude`, else what they need of it) and their shared code. */
static char *unit_text(const cg_csplit *sp, const int *units, int n, const char *prelude,
                       bool *oom)
{
    char *own = prelude ? NULL : cg_split_prelude(sp, units, n);
    cg_text t = {0};
    if (prelude || own)
        text_putn(&t, prelude ? prelude : own, strlen(prelude ? prelude : own));
    for (int k = 0; k < n; k++)
        text_putn(&t, sp->units[units[k]].shared, strlen(sp->units[units[k]].shared));
    free(own);
    if (t.oom || (!prelude && !own)) {
        free(t.p);
        *oom = true;
        return NULL;
    }
    return t.p;
}

/* The exported kernels whose forwarder would only pass its parameters on
 * (cg_unit.plain) are not compiled: a linker script given to the link
 * defines each as the shared code's symbol, `symbol = name;` (GNU ld, gold
 * and lld read a script among the inputs as one more input).  A
 * forwarder costs the compiler about 1 ms at -O2, as much as a small
 * kernel: 319 of MaxViT-T's 732 kernels are plain.  The aliases rely on
 * the tec_c_* functions having the default visibility (the units are
 * built without -fvisibility=hidden): the exported kernels must be dynamic
 * symbols of the shared object, as the forwarders were.  A link that fails with the script links a glue with every
 * forwarder instead (build_split): a linker or compiler driver that does
 * not take a script among its inputs still builds.  Writes the script,
 * when some kernel is plain, into a new folder .tec-XXXXXX in dir; its
 * path goes to *script (NULL when none is plain); false after a
 * diagnostic (or with *trouble). */
static bool write_alias_script(const cg_csplit *sp, const char *dir, char **script,
                               build_trouble *trouble, diag *d)
{
    *script = NULL;
    cg_text t = {0};
    for (int i = 0; i < sp->n; i++)
        if (sp->units[i].plain)
            text_printf(&t, "%s = %s;\n", sp->units[i].symbol, sp->units[i].name);
    if (!t.oom && t.len == 0)
        return true;
    char *tmp = path_join(dir, ".tec-XXXXXX"), *path = NULL;
    bool ok = false;
    if (t.oom || !tmp) {
        oom(d);
    } else if (!make_temp_dir(tmp, dir, "the kernels' aliases", trouble, d)) {
        /* reported */
    } else if (!(path = path_join(tmp, "aliases.ld"))) {
        oom(d);
        rmdir(tmp);
    } else if (!(ok = write_new_file(path, t.p, trouble, d))) {
        unlink(path);
        rmdir(tmp);
    }
    if (ok)
        *script = path;
    else
        free(path);
    free(tmp);
    free(t.p);
    return ok;
}

/* Removes what write_alias_script made. */
static void remove_alias_script(char *script)
{
    if (!script)
        return;
    unlink(script);
    char *slash = strrchr(script, '/');
    if (slash) {
        *slash = '\0';
        rmdir(script);
    }
    free(script);
}

/* The glue unit's job: the globals, the forwarders (but the plain ones
 * with `aliases`), the entry's key (NULL: none).  It runs no loop: built
 * at -O0 when the rest is optimized (glue_flags, setup_build), else as
 * cold code. */
static tu_job glue_job(const cg_csplit *sp, const char *key, bool aliases, const split_ctx *x,
                       bool *oom)
{
    cg_text glue = {0};
    text_putn(&glue, sp->glue_prelude, strlen(sp->glue_prelude));
    for (int i = 0; i < sp->n; i++)
        if (!(aliases && sp->units[i].plain))
            text_putn(&glue, sp->units[i].glue, strlen(sp->units[i].glue));
    if (key)
        text_printf(&glue, "\n/* The kernel cache key this object was built for. */\n"
                    "const char " CACHE_KEY_SYMBOL "[] = \"%s\";\n", key);
    *oom |= glue.oom;
    return (tu_job){.text = glue.p,
                    .flags = x->glue_flags   ? x->glue_flags
                             : x->cold_flags ? x->cold_flags
                                             : x->obj_flags,
                    .glue = true};
}

/* Names job's object file (in dir, the cache with `reuse`, by the key of
 * its text and flags) and sees whether the cache has it; false after a
 * diagnostic. */
static bool place_job(tu_job *job, const char *dir, bool reuse, const split_ctx *x, diag *d)
{
    char hex[65], name[80];
    key_digest(job->flags == x->obj_flags     ? x->obj_prefix
               : job->flags == x->light_flags ? x->light_prefix
               : job->flags == x->glue_flags  ? x->glue_prefix
                                              : x->cold_prefix,
               job->text, hex);
    snprintf(name, sizeof name, "%s%s.o", job->private_obj ? ".tec-lib-" : "", hex);
    if (!(job->path = path_join(job->dir ? job->dir : dir, name))) {
        oom(d);
        return false;
    }
    job->size = strlen(job->text);
    job->reused = reuse && !job->private_obj && object_usable(job->path, d);
    return true;
}

/* Removes what pch_setup made (and the .gch itself without the cache). */
static void pch_free(pch_build *p, bool reuse)
{
    if (p->gch)
        unlink(p->gch);
    if (p->header)
        unlink(p->header);
    if (p->dir)
        rmdir(p->dir);
    if (!reuse && p->job.path)
        unlink(p->job.path);
    diag_fini(&p->job.d);
    free(p->job.text);
    free(p->job.path);
    free(p->dir);
    free(p->header);
    free(p->gch);
    argv_free(&p->build_flags);
    for (int lv = 0; lv < UNIT_NLEVELS; lv++)
        argv_free(&p->unit_flags[lv]);
    *p = (pch_build){0};
}

/* Flags (a copy of from) followed by the words of more (NULL-ended). */
static void argv_with(cg_argv *a, const cg_argv *from, const char *const *more)
{
    for (int i = 0; from && i < from->n; i++)
        argv_push(a, from->v[i]);
    for (; *more; more++)
        argv_push(a, *more);
}

/* Sets up the precompiled intrinsics header for the jobs placed in dir
 * (see pch_build): false, p empty, when they go without it (another
 * compiler than GCC, too few units with the header, no folder, no memory):
 * never an error.  Otherwise the jobs with the header have pch_flags and
 * p->ready says whether the cache had the .gch; else p->job builds it. */
static bool pch_setup(pch_build *p, tu_job *jobs, int n, const char *dir, bool reuse,
                      const split_ctx *x, const cg_options *o, diag *d)
{
    *p = (pch_build){0};
    diag_init(&p->job.d, NULL);
    int units = 0;
    for (int i = 0; i < n; i++)
        units += jobs[i].intrin && !jobs[i].reused;
    if (units < 2)
        return false;
    char *id = compiler_identity(x->cc, cc_timeout(o), &p->job.d);
    bool gcc = id && identity_gcc_major(id) > 0;
    free(id);
    char hex[65];
    key_digest(x->obj_prefix, PCH_TEXT, hex);
    char name[80];
    snprintf(name, sizeof name, "%s.gch", hex);
    p->job.path = gcc ? path_join(dir, name) : NULL;
    p->ready = p->job.path && reuse && object_usable(p->job.path, d);
    if (!p->job.path || (!p->ready && units < PCH_MIN_UNITS))
        goto without;
    p->job.text = strdup(PCH_TEXT);
    p->dir = path_join(dir, ".tec-XXXXXX");
    if (p->dir && !mkdtemp(p->dir)) {
        free(p->dir);
        p->dir = NULL;
    }
    if (!p->job.text || !p->dir)
        goto without;
    p->header = path_join(p->dir, PCH_HEADER);
    p->gch = path_join(p->dir, PCH_HEADER ".gch");
    if (!p->header || !p->gch || !write_new_file(p->header, PCH_TEXT, NULL, &p->job.d) ||
        (p->ready && link(p->job.path, p->gch) != 0))
        goto without;
    static const char *const as_header[] = {"-x", "c-header", NULL};
    argv_with(&p->build_flags, x->obj_flags, as_header);
    const char *const include[] = {"-include", p->header, NULL};
    const cg_argv *level[UNIT_NLEVELS] = {x->obj_flags, x->light_flags, x->cold_flags};
    bool oom = p->build_flags.oom;
    for (int lv = 0; lv < UNIT_NLEVELS; lv++)
        if (level[lv]) {
            argv_with(&p->unit_flags[lv], level[lv], include);
            oom |= p->unit_flags[lv].oom;
        }
    if (oom)
        goto without;
    for (int i = 0; i < n; i++)
        for (int lv = 0; lv < UNIT_NLEVELS && jobs[i].intrin; lv++)
            if (level[lv] && jobs[i].flags == level[lv])
                jobs[i].pch_flags = &p->unit_flags[lv];
    return true;
without:
    pch_free(p, true);
    diag_init(&p->job.d, NULL);
    return false;
}

/* Builds the split file sp into final_path: objects go into dir (the
 * cache with `reuse`, else a temporary directory, emptied afterwards);
 * `key`, when not NULL, is the entry's cache key for the glue unit. */
static bool build_split(const cg_csplit *sp, const char *dir, const char *final_path,
                        const char *key, bool reuse, const split_ctx *x, const cg_options *o,
                        build_trouble *trouble, diag *d)
{
    int n = 0, cap = sp->distinct + 3;
    tu_job *jobs = calloc((size_t)cap, sizeof *jobs);
    char **inputs = calloc((size_t)cap + 1, sizeof *inputs);
    char *script = NULL;
    int lock = -1;
    bool ok = false, text_oom = false, with_pch = false;
    pch_build pch = {0};
    diag_init(&pch.job.d, NULL);
    if (!jobs || !inputs) {
        oom(d);
        goto out;
    }
    /* The glue: globals, forwarders (but the plain ones, which the link
     * makes aliases; a library of its own keeps them all, for its version
     * script and objcopy), the key.  It runs no loop: built as cold code. */
    bool aliases = !x->link_dir;
    jobs[n++] = glue_job(sp, key, aliases, x, &text_oom);
    /* The distinct kernels: prepack ones into the cold unit, small ones
     * bundled (see bundle_units), the others a unit each. */
    int *order = calloc((size_t)sp->n + 1, sizeof *order), *coldu = calloc((size_t)sp->n + 1, sizeof *coldu);
    int norder = 0, ncold = 0;
    text_oom |= !order || !coldu;
    for (int i = 0; i < sp->n && order && coldu; i++)
        if (sp->units[i].first == i) {
            if (cold_unit(x, &sp->units[i]))
                coldu[ncold++] = i;
            else
                order[norder++] = i;
        }
    unsigned char *level = calloc((size_t)sp->n + 1, sizeof *level);
    text_oom |= !level || !light_units(sp, x, level);
    for (int pass = 0; pass < 2 * UNIT_NLEVELS && order && coldu && level; pass++) {
        /* passes 0-2: units with the intrinsics header, 3-5: without; each
         * with the full, light and cold levels in turn */
        unit_level lv = pass % UNIT_NLEVELS;
        const cg_argv *flags = lv == UNIT_COLD    ? x->cold_flags
                               : lv == UNIT_LIGHT ? x->light_flags
                                                  : x->obj_flags;
        int *group = calloc((size_t)norder + 1, sizeof *group), ng = 0;
        size_t bytes = 0;
        text_oom |= !group;
        for (int k = 0; group && k <= norder; k++) {
            const cg_unit *u = k < norder ? &sp->units[order[k]] : NULL;
            if (u && (u->intrin != (pass < UNIT_NLEVELS) || level[order[k]] != lv))
                continue;
            size_t size = u ? strlen(u->shared) : 0;
            bool small = u && size < (u->intrin ? BUNDLE_SMALL_INTRIN : BUNDLE_SMALL);
            /* the group so far is full, or ends here */
            if (ng && (!u || !small || bytes + size > BUNDLE_BYTES)) {
                jobs[n] = (tu_job){.text = unit_text(sp, group, ng, NULL, &text_oom),
                                   .flags = flags, .intrin = pass < UNIT_NLEVELS};
                n++;
                ng = 0;
                bytes = 0;
            }
            if (u && small) {
                group[ng++] = order[k];
                bytes += size;
            } else if (u) {
                jobs[n++] = (tu_job){.text = unit_text(sp, &order[k], 1, NULL, &text_oom),
                                     .flags = flags, .intrin = pass < UNIT_NLEVELS};
            }
        }
        free(group);
    }
    free(level);
    if (ncold) {
        /* with what its kernels need of the prelude, as the others: the
         * whole of it read <immintrin.h> (0.3-0.6 s of S3D's 1.2) for
         * packing loops that use no intrinsic */
        bool intrin = false;
        for (int k = 0; k < ncold; k++)
            intrin |= sp->units[coldu[k]].intrin;
        jobs[n++] = (tu_job){.text = unit_text(sp, coldu, ncold, NULL, &text_oom),
                             .flags = x->cold_flags, .intrin = intrin};
    }
    free(order);
    free(coldu);
    if (x->extra_c) {
        char *t = strdup(x->extra_c);
        text_oom |= !t;
        jobs[n++] = (tu_job){.text = t, .flags = x->obj_flags, .dir = x->link_dir,
                             .private_obj = true};
    }
    if (text_oom) {
        oom(d);
        goto out;
    }
    /* The cache's objects are held (its lock shared) from finding them
     * until the link has read them, the new ones too: a trim by another
     * process (which waits a while for the lock, else leaves the trim to
     * the next one) would otherwise remove an object between its build
     * and the link, and fail the link twice in a row while others fill
     * the cache. */
    lock = reuse ? cg_cache_hold(dir) : -1;
    int reused = 0;
    for (int i = 0; i < n; i++) {
        if (!place_job(&jobs[i], dir, reuse, x, d))
            goto out;
        reused += jobs[i].reused;
    }
    qsort(jobs, (size_t)n, sizeof *jobs, by_size_desc);
    with_pch = pch_setup(&pch, jobs, n, dir, reuse, x, o, d);
    ir_phase_note("%d kernels, %d distinct, %d units, %d cached%s", sp->n, sp->distinct, n,
                  reused, !with_pch ? "" : pch.ready ? ", header cached" : ", header built");
    if (o && o->verbose) {
        int j = usable_cpus();
        fprintf(d->out ? d->out : stderr, "tec: %d kernels, %d distinct: %d translation units "
                "(%d from the cache), compiled %d at a time\n", sp->n, sp->distinct, n, reused,
                j < n - reused ? j : n - reused);
        int intrin = 0;
        for (int i = 0; i < n; i++)
            intrin += jobs[i].intrin && !jobs[i].reused;
        if (intrin)
            fprintf(d->out ? d->out : stderr, "tec: %d of them include the intrinsics header%s%s%s\n",
                    intrin, !with_pch ? "" : pch.ready ? ", precompiled in the cache: "
                                                       : ", precompiled first: ",
                    with_pch ? pch.job.path : "", with_pch ? "" : " (read by each)");
        fflush(d->out ? d->out : stderr);
    }
    if (!run_jobs(jobs, n, with_pch ? &pch : NULL, dir, x->cc, o, trouble, d) ||
        (aliases && !write_alias_script(sp, dir, &script, trouble, d)))
        goto out;
    for (int i = 0; i < n; i++)
        inputs[i] = jobs[i].path;
    int ninputs = n + (script != NULL);
    inputs[n] = script;
    if (script) {
        /* A linker that does not take the script (one that reads no
         * `symbol = name;` among its inputs) links a glue with every
         * forwarder instead, as before the aliases. */
        diag quiet;
        diag_init(&quiet, NULL);
        ok = link_objects(inputs, ninputs, dir, final_path, x, o, trouble, &quiet);
        diag_fini(&quiet);
        if (ok || (trouble && (trouble->vanished || trouble->disk_full)))
            goto out;
        if (o && o->verbose)
            fprintf(d->out ? d->out : stderr, "tec: the link with the kernels' aliases failed: "
                    "linked with a forwarder each instead\n");
        int g = 0;
        while (!jobs[g].glue)
            g++;
        tu_job forwarders = glue_job(sp, key, false, x, &text_oom);
        if (text_oom || !place_job(&forwarders, dir, reuse, x, d)) {
            if (text_oom)
                oom(d);
            free(forwarders.text);
            free(forwarders.path);
            goto out;
        }
        reused += forwarders.reused - jobs[g].reused;
        free(jobs[g].text);
        free(jobs[g].path);
        jobs[g] = forwarders;
        if (!run_jobs(&jobs[g], 1, NULL, dir, x->cc, o, trouble, d))
            goto out;
        inputs[g] = jobs[g].path;
        ninputs = n;
    }
    if (reused) {
        /* A cached object cut short (or not one tec made, or trimmed since
         * it was found) fails the link: then every object is built again,
         * and linked once more. */
        diag quiet;
        diag_init(&quiet, NULL);
        ok = link_objects(inputs, ninputs, dir, final_path, x, o, trouble, &quiet);
        diag_fini(&quiet);
        if (ok || (trouble && (trouble->vanished || trouble->disk_full)))
            goto out;
        for (int i = 0; i < n; i++) {
            if (jobs[i].reused)
                unlink(jobs[i].path);
            jobs[i].reused = false;
        }
        if (!run_jobs(jobs, n, with_pch ? &pch : NULL, dir, x->cc, o, trouble, d))
            goto out;
    }
    ok = link_objects(inputs, ninputs, dir, final_path, x, o, trouble, d);
out:
    pch_free(&pch, reuse);
    cg_cache_release(lock);
    remove_alias_script(script);
    for (int i = 0; jobs && i < n; i++) {
        if ((!reuse || jobs[i].private_obj) && jobs[i].path)
            unlink(jobs[i].path);
        free(jobs[i].text);
        free(jobs[i].path);
    }
    free(jobs);
    free(inputs);
    return ok;
}

/* Below this many bytes of C, one compiler run costs less than several
 * (each one reads the headers again; measured with examples/mlp.te, 26 kB:
 * 0.18 s of CPU whole, 0.29 s in 5 units). */
#define SPLIT_MIN_BYTES 32768

/* Builds c_source into final_path, split when it has SPLIT_MIN_BYTES or
 * more and cg_split_c cuts it into two kernels or more, else whole; `key` (NULL: none) is the cache key the
 * entry names. */
static bool build_kernels(const char *c_source, const char *dir, const char *final_path,
                          const char *key, bool reuse, const split_ctx *x, const cg_options *o,
                          build_trouble *trouble, diag *d)
{
    cg_csplit sp;
    if (strlen(c_source) >= SPLIT_MIN_BYTES && cg_split_c(c_source, &sp)) {
        bool tried = sp.n >= 2;
        bool ok = tried && build_split(&sp, dir, final_path, key, reuse, x, o, trouble, d);
        cg_split_free(&sp);
        if (tried)
            return ok;
    }
    ir_phase_note("one translation unit");
    if (!key)
        return compile_into(c_source, NULL, 0, dir, final_path, x->cc, x->so_flags, BUILD_SO, o,
                            trouble, d);
    /* The entry names its key, for entry_problem. */
    size_t n = strlen(c_source) + 200;
    char *keyed = malloc(n);
    if (!keyed) {
        oom(d);
        return false;
    }
    snprintf(keyed, n, "%s\n/* The kernel cache key this object was built for. */\n"
             "const char " CACHE_KEY_SYMBOL "[] = \"%s\";\n", c_source, key);
    bool ok = compile_into(keyed, NULL, 0, dir, final_path, x->cc, x->so_flags, BUILD_SO, o,
                           trouble, d);
    free(keyed);
    return ok;
}

static char *compile_no_cache(const char *c_source, const split_ctx *x, const cg_options *o,
                              diag *d)
{
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || tmpdir[0] != '/')
        tmpdir = "/tmp";
    static atomic_flag swept = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&swept))
        sweep_folder(tmpdir, "tec-", false);
    char *dir = path_join(tmpdir, "tec-XXXXXX");
    if (!dir) {
        oom(d);
        return NULL;
    }
    if (!mkdtemp(dir)) {
        diag_error(d, diag_noloc(), "cannot create a temporary directory in %s: %s", tmpdir,
                   strerror(errno));
        free(dir);
        return NULL;
    }
    char *so = path_join(dir, "kernels.so");
    cg_temp_dir *t = malloc(sizeof *t);
    char *result = so ? strdup(so) : NULL;
    if (!so || !t || !result) {
        oom(d);
        free(so);
        free(t);
        free(result);
        rmdir(dir);
        free(dir);
        return NULL;
    }
    if (!build_kernels(c_source, dir, so, NULL, false, x, o, NULL, d)) {
        free(so);
        free(t);
        free(result);
        rmdir(dir);
        free(dir);
        return NULL;
    }
    t->dir = dir;
    t->so = so;
    pthread_mutex_lock(&temp_lock);
    t->next = temps;
    temps = t;
    if (!temp_atexit_done)
        temp_atexit_done = atexit(remove_all_temps) == 0;
    pthread_mutex_unlock(&temp_lock);
    return result;
}

/* ---------------------------------------------------------------- entry points */

/* What every build of kernels sets up first: the compiler's command
 * lines (a shared object's and an object file's, and the cold units'),
 * its identity and the key prefixes. */
typedef struct build_setup {
    cg_argv cc, flags, occ, obj_flags, cold_flags, light_flags, glue_flags;
    cg_text obj_prefix, cold_prefix, light_prefix, glue_prefix;
    char *identity;
    split_ctx x;
} build_setup;

static void setup_free(build_setup *b)
{
    argv_free(&b->cc);
    argv_free(&b->flags);
    argv_free(&b->occ);
    argv_free(&b->obj_flags);
    argv_free(&b->cold_flags);
    argv_free(&b->light_flags);
    argv_free(&b->glue_flags);
    free(b->obj_prefix.p);
    free(b->cold_prefix.p);
    free(b->light_prefix.p);
    free(b->glue_prefix.p);
    free(b->identity);
}

static bool setup_build(const cg_options *o, build_setup *b, diag *d)
{
    *b = (build_setup){0};
    const cg_target *target = o ? o->target : NULL;
    if (!base_argv(o, false, &b->cc, &b->flags, d) || !base_argv(o, true, &b->occ, &b->obj_flags, d))
        return false;
    /* Cold code at -O1 when the rest is optimized fully (the last -O wins). */
    bool cold = o && o->module && optimizes_fully(o->opt_flags);
    for (int i = 0; cold && i < b->obj_flags.n; i++)
        argv_push(&b->cold_flags, b->obj_flags.v[i]);
    if (cold)
        argv_push(&b->cold_flags, "-O1");
    /* Light code (light_units) at -O2 when the rest is built at -O3 or
     * more; -Ofast and the like keep theirs (-O2 would drop -ffast-math). */
    bool light = cold && last_opt_level(o->opt_flags) > 2;
    for (int i = 0; light && i < b->obj_flags.n; i++)
        argv_push(&b->light_flags, b->obj_flags.v[i]);
    if (light)
        argv_push(&b->light_flags, "-O2");
    if (!(b->identity = compiler_identity(&b->cc, cc_timeout(o), d)))
        return false;
    /* GCC contracts a*b+c into an FMA (-ffp-contract=fast) only with
     * -fexpensive-optimizations, which -O1 leaves off: without it a cold
     * kernel would round differently from the same kernel at -O3, and a
     * layer's bits would depend on how much of the model's work it does */
    if (cold && strstr(b->identity, "gcc-major:"))
        argv_push(&b->cold_flags, "-fexpensive-optimizations");
    /* GCC unrolls a loop of known trip count completely at -O2 only when
     * that does not grow the code; -O3 (and -fpeel-loops) lets it grow.  A
     * write-back of 8x2 vectors from a local accumulator array then stays a
     * loop over the array in memory at -O2 and becomes registers at -O3:
     * QDQ ResNet-50's layer1 convs took 436 us instead of 274 when the
     * model's work shares made them light (bench/results/det_s15.txt).
     * -fpeel-loops gives -O2 that unrolling for about 5% more compile time
     * of the light units.  -O1 needs it as much: EfficientNet-B7's depthwise
     * 5x5 of stride 2 on 288x56x56, cold by its share of the work (0.1%),
     * kept its 32-lane row tile in memory, 27 vector operations in place of
     * 55 and 33 stack accesses, and took 1411 us where the same C at -O3
     * takes 326-449 (bench/results/unseen_s17.txt); with -fpeel-loops its
     * code has -O3's operations and compiles in the same time. */
    if (light && strstr(b->identity, "gcc-major:"))
        argv_push(&b->light_flags, "-fpeel-loops");
    if (cold && strstr(b->identity, "gcc-major:"))
        argv_push(&b->cold_flags, "-fpeel-loops");
    /* The glue's forwarders only pass their parameters on (and a family's
     * constants): -O0 builds them in 0.4 of -O1's time (Swin-S's 465:
     * 0.23 s of CPU instead of 0.57, DenseNet-169's 0.17 instead of 0.39;
     * bench/results/cold_s25.txt), and a call through one then stores and
     * reloads its arguments, a few nanoseconds against a kernel's
     * microseconds. */
    for (int i = 0; cold && i < b->obj_flags.n; i++)
        argv_push(&b->glue_flags, b->obj_flags.v[i]);
    if (cold)
        argv_push(&b->glue_flags, "-O0");
    if (b->cold_flags.oom || b->light_flags.oom || b->glue_flags.oom) {
        oom(d);
        return false;
    }
    if (!key_prefix(&b->cc, &b->obj_flags, target, b->identity, &b->obj_prefix, d) ||
        (cold && !key_prefix(&b->cc, &b->cold_flags, target, b->identity, &b->cold_prefix, d)) ||
        (light && !key_prefix(&b->cc, &b->light_flags, target, b->identity, &b->light_prefix, d)) ||
        (cold && !key_prefix(&b->cc, &b->glue_flags, target, b->identity, &b->glue_prefix, d)))
        return false;
    b->x = (split_ctx){.cc = &b->cc, .so_flags = &b->flags, .obj_flags = &b->obj_flags,
                       .cold_flags = cold ? &b->cold_flags : NULL,
                       .light_flags = light ? &b->light_flags : NULL,
                       .glue_flags = cold ? &b->glue_flags : NULL, .obj_prefix = &b->obj_prefix,
                       .cold_prefix = &b->cold_prefix, .light_prefix = &b->light_prefix,
                       .glue_prefix = &b->glue_prefix,
                       .module = o ? o->module : NULL};
    return true;
}

static char *compile_cached(const char *c_source, const cg_options *o, diag *d);

char *cg_compile(const char *c_source, const cg_options *o, diag *d)
{
    ir_phase_push("compile");
    char *so = compile_cached(c_source, o, d);
    ir_phase_pop();
    return so;
}

static char *compile_cached(const char *c_source, const cg_options *o, diag *d)
{
    build_setup b;
    cg_text prefix = {0};
    char *dir = NULL, *path = NULL, *result = NULL;
    const cg_target *target = o ? o->target : NULL;
    if (!c_source) {
        diag_internal(d, "codegen", "cg_compile called without source");
        return NULL;
    }
    if (!setup_build(o, &b, d))
        goto out;
    if (o && o->no_cache) {
        result = compile_no_cache(c_source, &b.x, o, d);
        goto out;
    }
    build_trouble trouble = {0};
    if (!(dir = cg_cache_dir(o, d)))
        goto out;
    if (!private_dir(dir, &trouble, d))
        goto no_space;
    char hex[65], name[80];
    if (!key_prefix(&b.cc, &b.flags, target, b.identity, &prefix, d))
        goto out;
    /* The entry is built from units at these levels: a tec whose light or
     * cold flags differ must not take another's entry for the same C (an
     * A/B of two such builds would compare one object twice). */
    for (int i = 0; i < b.light_flags.n; i++)
        text_field(&prefix, "light-flag", b.light_flags.v[i], strlen(b.light_flags.v[i]));
    for (int i = 0; i < b.cold_flags.n; i++)
        text_field(&prefix, "cold-flag", b.cold_flags.v[i], strlen(b.cold_flags.v[i]));
    for (int i = 0; i < b.glue_flags.n; i++)
        text_field(&prefix, "glue-flag", b.glue_flags.v[i], strlen(b.glue_flags.v[i]));
    if (prefix.oom) {
        oom(d);
        goto out;
    }
    key_digest(&prefix, c_source, hex);
    snprintf(name, sizeof name, "%s.so", hex);
    if (!(path = path_join(dir, name))) {
        oom(d);
        goto out;
    }
    /* An entry found is checked and opened under the folder's lock (no
     * trim removes it in between), then held open until cg_load. */
    int lock = cg_cache_hold(dir);
    struct stat st;
    if (lstat(path, &st) == 0) {
        char why[512];
        bool untrusted;
        if (!entry_problem(path, hex, why, sizeof why, &untrusted)) {
            cg_cache_touch(path);
            hold_open(path);
            cg_cache_release(lock);
            ir_phase_note("from the cache");
            if (o && o->verbose) {
                fprintf(d->out ? d->out : stderr, "tec: kernel cache hit: %s\n", path);
                fflush(d->out ? d->out : stderr);
            }
            result = path;
            path = NULL;
            goto out;
        }
        if (untrusted)
            diag_warning(d, diag_noloc(), "kernel cache entry %s %s; not loading it, rebuilding "
                         "it", path, why);
        else if (o && o->verbose)
            fprintf(d->out ? d->out : stderr, "tec: kernel cache entry %s %s; rebuilding it\n",
                    path, why);
        unlink(path);
    }
    cg_cache_release(lock);
    /* The cache may be removed while tec runs (rm -rf): make it again
     * and build once more, rather than fail. */
    bool built = build_kernels(c_source, dir, path, hex, true, &b.x, o, &trouble, d);
    if (!built && trouble.vanished) {
        trouble.vanished = false;
        built = private_dir(dir, &trouble, d) &&
                build_kernels(c_source, dir, path, hex, true, &b.x, o, &trouble, d);
        if (trouble.vanished)
            diag_error(d, diag_noloc(), "the kernel cache directory %s was removed twice "
                       "while compiling (use --no-cache)", dir);
    }
    if (!built)
        goto no_space;
    /* Held open as a hit is, before the trim (which may remove it, the
     * newest entry, only when the cap is smaller than it). */
    lock = cg_cache_hold(dir);
    hold_open(path);
    cg_cache_release(lock);
    if (cg_cache_held_fd(path) >= 0) {
        result = path;
        path = NULL;
    } else {
        /* gone already (another process's trim): built where --no-cache
         * builds, rather than fail */
        if (o && o->verbose)
            fprintf(d->out ? d->out : stderr, "tec: kernel cache entry %s is gone after it "
                    "was built; building in TMPDIR\n", path);
        result = compile_no_cache(c_source, &b.x, o, d);
    }
    cg_cache_trim(dir, o && o->verbose);
    goto out;
no_space:
    if (trouble.disk_full) {
        /* the kernels still run: built where --no-cache builds them */
        cg_cache_say_full(dir, "building the kernels in a temporary folder (TMPDIR) instead");
        result = compile_no_cache(c_source, &b.x, o, d);
    }
out:
    setup_free(&b);
    free(prefix.p);
    free(dir);
    free(path);
    return result;
}

bool cg_compile_library(const cg_csplit *kernels, const char *extra_c, const char *out_path,
                        const char *const *exports, int nexports, const cg_options *o, diag *d)
{
    if (!kernels || !extra_c || !out_path || !*out_path) {
        diag_internal(d, "codegen", "cg_compile_library called without kernels, source or "
                      "output path");
        return false;
    }
    ir_phase_push("compile");
    build_setup b = {0};
    char *odir = strdup(out_path), *cache = NULL;
    bool ok = false;
    if (!odir) {
        oom(d);
        goto out;
    }
    char *slash = strrchr(odir, '/');
    if (slash == odir)
        odir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(odir, ".");
    size_t n = strlen(out_path);
    if (!setup_build(o, &b, d))
        goto out;
    b.x.extra_c = extra_c;
    b.x.link_dir = odir;
    b.x.exports = exports;
    b.x.nexports = nexports;
    b.x.archive = n > 2 && strcmp(out_path + n - 2, ".a") == 0;
    /* The kernels' objects come from (and go to) the cache, as a run's do;
     * without it (--no-cache, or no cache directory to be had: a library
     * needs none) they are built beside the output and removed. */
    bool reuse = !(o && o->no_cache);
    if (reuse) {
        diag quiet;
        diag_init(&quiet, NULL);
        reuse = (cache = cg_cache_dir(o, &quiet)) && private_dir(cache, NULL, &quiet);
        diag_fini(&quiet);
    }
    build_trouble trouble = {0};
    ok = build_split(kernels, reuse ? cache : odir, out_path, NULL, reuse, &b.x, o,
                     reuse ? &trouble : NULL, d);
    if (!ok && trouble.vanished) {
        trouble.vanished = false;
        ok = private_dir(cache, NULL, d) &&
             build_split(kernels, cache, out_path, NULL, true, &b.x, o, &trouble, d);
        if (trouble.vanished)
            diag_error(d, diag_noloc(), "the kernel cache directory %s was removed twice "
                       "while compiling (use --no-cache)", cache);
    }
    if (!ok && trouble.disk_full) {
        /* built as without the cache, beside the output */
        cg_cache_say_full(cache, "building the library's objects beside it instead");
        ok = build_split(kernels, odir, out_path, NULL, false, &b.x, o, NULL, d);
    } else if (ok && reuse) {
        cg_cache_trim(cache, o && o->verbose);
    }
out:
    setup_free(&b);
    free(cache);
    free(odir);
    ir_phase_pop();
    return ok;
}

bool cg_compile_to(const char *c_source, const char *out_path, const cg_options *o, diag *d)
{
    if (!c_source || !out_path || !*out_path) {
        diag_internal(d, "codegen", "cg_compile_to called without source or output path");
        return false;
    }
    cg_argv cc = {0}, flags = {0};
    bool ok = false;
    char *copy = strdup(out_path);
    if (!copy) {
        oom(d);
        return false;
    }
    /* The temporaries go beside the output so the final rename stays
     * within one file system. */
    char *slash = strrchr(copy, '/');
    const char *dir = ".";
    if (slash == copy)
        dir = "/";
    else if (slash) {
        *slash = '\0';
        dir = copy;
    }
    size_t n = strlen(out_path);
    bool archive = n > 2 && strcmp(out_path + n - 2, ".a") == 0;
    if (base_argv(o, archive, &cc, &flags, d))
        ok = compile_into(c_source, NULL, 0, dir, out_path, &cc, &flags,
                          archive ? BUILD_ARCHIVE : BUILD_SO, o, NULL, d);
    argv_free(&cc);
    argv_free(&flags);
    free(copy);
    return ok;
}
