/* driver/runcache.c — the run cache (see runcache.h, doc/codegen.md "The run
 * cache"). */
#include "config.h"

#define _GNU_SOURCE   /* dl_iterate_phdr */

#include "driver/runcache.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "codegen/cache.h"
#include "codegen/sha256.h"
#include "codegen/textread.h"
#include "ir/path.h"
#include "ir/phase.h"

#define ENTRY_MAGIC "tec run cache v2\n"
/* The symbol every kernel-cache shared object defines: the key it was
 * built for, which is also its file name (KEY.so). */
#define SO_KEY_SYMBOL "tec_cache_key"

bool drv_runcache_applies(const options *o)
{
    return o->emit == EMIT_RUN && !o->interp && !o->no_run && !o->no_cache &&
           !(o->accel_on && !o->profile) && !o->dump_ir && !o->dump_dir &&
           !o->dump_schedule && !o->verify_each;
}

/* With --verbose: "tec: WHAT: " and the message. */
static void tell(const char *what, bool verbose, const char *fmt, const char *a, const char *b)
{
    if (!verbose)
        return;
    fprintf(stderr, "tec: %s: ", what);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
}

static void say(const drv_runcache *rc, const char *fmt, const char *a, const char *b)
{
    tell("run cache", rc->verbose, fmt, a, b);
}

/* ------------------------------------------------------- the cache folder */

/* The entries live in CACHE/run, CACHE the kernel cache's folder, whose
 * size cap, lock and trim they share (codegen/cache.h). */

/* The cache folder of the entry file CACHE/run/NAME (malloc'ed). */
static char *cache_top(const char *entry)
{
    char *top = strdup(entry);
    for (int k = 0; top && k < 2; k++) {
        char *slash = strrchr(top, '/');
        if (slash)
            slash[slash == top] = 0;   /* "/run/NAME": the folder "/" */
    }
    return top;
}

/* Holds the folder of the entry file (cg_cache_hold): no trim removes an
 * entry while it is read and its files opened. */
static int hold_folder(const char *entry)
{
    char *top = cache_top(entry);
    int lock = top ? cg_cache_hold(top) : -1;
    free(top);
    return lock;
}

/* After an entry file was written: the folder trimmed to its cap. */
static void trim_folder(const char *entry, bool verbose)
{
    char *top = cache_top(entry);
    if (top)
        cg_cache_trim(top, verbose);
    free(top);
}

/* After an entry file could not be written for the error err: a full disk
 * is said (once per process). */
static void say_if_full(const char *entry, int err)
{
    if (err != ENOSPC && err != EDQUOT)
        return;
    char *top = cache_top(entry);
    if (top)
        cg_cache_say_full(top, "this run's entries are not cached");
    free(top);
}

/* ------------------------------------------------------------------ the key */

static void put(cg_sha256_ctx *s, const char *field, const void *data, size_t n)
{
    char head[96];
    snprintf(head, sizeof head, "\n%s %zu:", field, n);
    cg_sha256_update(s, head, strlen(head));
    cg_sha256_update(s, data ? data : "", n);
}

static void put_str(cg_sha256_ctx *s, const char *field, const char *v)
{
    put(s, field, v ? v : "(none)", strlen(v ? v : "(none)"));
}

static void put_int(cg_sha256_ctx *s, const char *field, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    put_str(s, field, b);
}

static void put_file_stat(cg_sha256_ctx *s, const char *field, const char *path)
{
    struct stat st;
    char b[PATH_MAX + 128];
    if (path && stat(path, &st) == 0)
        snprintf(b, sizeof b, "%s size %lld mtime %lld.%09ld ino %llu", path,
                 (long long)st.st_size, (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec,
                 (unsigned long long)st.st_ino);
    else
        snprintf(b, sizeof b, "%s (no file)", path ? path : "?");
    put_str(s, field, b);
}

/* The GNU build ID of the main program (the linker's hash of its
 * contents), found among its program headers. */
typedef struct build_id {
    unsigned char bytes[64];
    size_t n;
} build_id;

static int find_build_id(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    build_id *id = ctx;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *nh;
            const char *desc = name + ((nh->n_namesz + 3) & ~3u);
            const char *next = desc + ((nh->n_descsz + 3) & ~3u);
            if (next > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= sizeof id->bytes) {
                memcpy(id->bytes, desc, nh->n_descsz);
                id->n = nh->n_descsz;
                return 1;
            }
            p = next;
        }
    }
    return 1;   /* the first object is the main program: stop there */
}

/* tec itself: its build ID, or (a build without one) its file's size,
 * mtime and inode; and its version. */
static void put_tec(cg_sha256_ctx *s)
{
    put_str(s, "tec-version", PACKAGE_VERSION);
    build_id id = {{0}, 0};
    dl_iterate_phdr(find_build_id, &id);
    if (id.n) {
        put(s, "tec-build-id", id.bytes, id.n);
        return;
    }
    char self[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k > 0)
        self[k] = 0;
    put_file_stat(s, "tec-file", k > 0 ? self : NULL);
}

/* A program word of the compiler command: its file, searched in PATH
 * like execvp when it has no '/' (malloc'ed), or NULL. */
static char *find_program(const char *word)
{
    if (strchr(word, '/'))
        return realpath(word, NULL);
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", (int)n, n ? path : ".");
        char *full = ir_path_join(dir, word);
        if (full && access(full, X_OK) == 0) {
            char *real = realpath(full, NULL);
            free(full);
            return real;
        }
        free(full);
        path += n + (path[n] == ':');
    }
    return NULL;
}

/* The C compiler as the kernel cache runs it: $CC (else the configured
 * default), split into words, each program word with its file's identity;
 * and the environment variables the kernel cache keys on. */
static void put_compiler(cg_sha256_ctx *s, const cg_options *co)
{
    const char *cc = co && co->cc && *co->cc ? co->cc : getenv("CC");
    if (!cc || !*cc)
        cc = TEC_DEFAULT_CC;
    put_str(s, "cc", cc);
    char *words = strdup(cc);
    for (char *save = NULL, *w = words ? strtok_r(words, " \t", &save) : NULL; w;
         w = strtok_r(NULL, " \t", &save)) {
        if (*w == '-' || strchr(w, '='))
            continue;
        char *file = find_program(w);
        put_file_stat(s, "cc-program", file);
        free(file);
    }
    free(words);
    static const char *const env[] = {"CPATH", "C_INCLUDE_PATH", "GCC_EXEC_PREFIX",
                                      "COMPILER_PATH", "LIBRARY_PATH", "PATH"};
    for (size_t i = 0; i < sizeof env / sizeof *env; i++)
        put_str(s, env[i], getenv(env[i]));
    struct utsname u;
    if (uname(&u) == 0)
        put_str(s, "machine", u.machine);
}

/* This processor's model and feature flags (kernels built for `native`
 * use them). */
static void put_cpu(cg_sha256_ctx *s)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[8192];
    bool model = false, flags = false;
    while ((!model || !flags) && fgets(line, sizeof line, f)) {
        if (!model && strncmp(line, "model name", 10) == 0)
            put_str(s, "cpu-model", line), model = true;
        else if (!flags && strncmp(line, "flags", 5) == 0)
            put_str(s, "cpu-flags", line), flags = true;
    }
    fclose(f);
}

static void put_target(cg_sha256_ctx *s, const cg_target *t)
{
    char b[256];
    snprintf(b, sizeof b, "name %.32s march %.32s vector %d fma %d cores %d l1d %lld l2 %lld "
             "l3 %lld", t->name, t->march, t->vector_bytes, (int)t->fma, t->cores,
             (long long)t->l1d, (long long)t->l2, (long long)t->l3);
    put_str(s, "target", b);
}

/* The cache's folder CACHE/run, made private if missing; NULL (said with
 * --verbose) when it cannot be used. */
static char *run_dir(const cg_options *co, bool verbose)
{
    diag quiet;
    diag_init(&quiet, NULL);
    char *top = cg_cache_dir(co, &quiet);
    diag_fini(&quiet);
    char *dir = top ? ir_path_join(top, "run") : NULL;
    free(top);
    if (!dir)
        return NULL;
    char failed[PATH_MAX];
    struct stat st, tst;
    const char *why = NULL;
    /* The kernels live in the folder above: it must be as private (else
     * the kernel cache, next, says what is wrong with it). */
    size_t tn = strlen(dir) - 4;
    char *top_dir = strndup(dir, tn);
    bool top_private = top_dir && ir_make_dirs(top_dir, 0700, failed, sizeof failed) &&
                       stat(top_dir, &tst) == 0 && S_ISDIR(tst.st_mode) &&
                       tst.st_uid == geteuid() && !(tst.st_mode & (S_IWGRP | S_IWOTH));
    free(top_dir);
    if (!top_private)
        why = "lies in a kernel cache folder that is not private";
    else if (!ir_make_dirs(dir, 0700, failed, sizeof failed))
        why = "cannot be created";
    else if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        why = "is not a folder";
    else if (st.st_uid != geteuid())
        why = "is owned by someone else";
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        why = "is writable by group or others";
    if (why) {
        if (verbose)
            fprintf(stderr, "tec: run cache: not used: %s %s\n", dir, why);
        free(dir);
        return NULL;
    }
    return dir;
}

bool drv_runcache_key(drv_runcache *rc, const options *o, const char *display,
                      const char *text, size_t len, const char *lang, const cg_options *co)
{
    rc->path = NULL;
    rc->verbose = o->verbose;
    ir_phase_push("run cache key");
    char *dir = run_dir(co, o->verbose);
    if (!dir) {
        ir_phase_pop();
        return false;
    }
    cg_sha256_ctx s;
    cg_sha256_init(&s);
    cg_sha256_update(&s, ENTRY_MAGIC, strlen(ENTRY_MAGIC));
    put_tec(&s);
    put_str(&s, "name", display);
    put(&s, "text", text, len);
    put_str(&s, "lang", lang);
    for (int i = 0; i < o->ndefines; i++) {
        put_str(&s, "define", o->defines[i].name);
        put_str(&s, "value", o->defines[i].value);
    }
    for (int i = 0; i < o->nincludes; i++)
        put_str(&s, "include", o->includes[i]);
    put_int(&s, "opt-level", o->opt_level);
    put_str(&s, "passes", o->passes);
    put_int(&s, "profile", o->profile);
    put_int(&s, "unchecked", o->unchecked);
    put_str(&s, "cc-opt-flags", co->opt_flags);
    put_target(&s, &o->target);
    put_cpu(&s);
    put_compiler(&s, co);
    uint8_t digest[32];
    cg_sha256_final(&s, digest);
    cg_sha256_to_hex(digest, rc->key);
    char name[80];
    snprintf(name, sizeof name, "%s.run", rc->key);
    rc->path = ir_path_join(dir, name);
    free(dir);
    ir_phase_pop();
    return rc->path != NULL;
}

/* ------------------------------------------------------------ dependencies */

void drv_runcache_dep(void *ctx, fe_dep_kind kind, const char *path, const char *canonical,
                      const char *text, size_t len)
{
    drv_runcache *rc = ctx;
    if (!rc->path || rc->deps_oom)
        return;
    if (rc->ndeps == rc->capdeps) {
        int cap = rc->capdeps ? 2 * rc->capdeps : 8;
        drv_dep *d = realloc(rc->deps, sizeof *d * (size_t)cap);
        if (!d) {
            rc->deps_oom = true;
            return;
        }
        rc->deps = d;
        rc->capdeps = cap;
    }
    drv_dep *d = &rc->deps[rc->ndeps];
    *d = (drv_dep){kind, strdup(path), strdup(canonical ? canonical : ""), "-"};
    if (!d->path || !d->canonical) {
        free(d->path);
        free(d->canonical);
        rc->deps_oom = true;
        return;
    }
    if (kind == FE_DEP_READ)
        cg_sha256_hex(text, len, d->sha);
    rc->ndeps++;
}

/* The frontend's canonical path of a file (frontend/compile.c). */
static bool same_canonical(const char *path, const char *canonical)
{
    char buf[PATH_MAX];
    return strcmp(realpath(path, buf) ? buf : path, canonical) == 0;
}

/* Whether dependency d is as the frontend found it (a file that opens or
 * not, its canonical path, the text it read). */
static bool dep_holds(const drv_dep *d)
{
    if (d->kind == FE_DEP_MAIN)
        return same_canonical(d->path, d->canonical);
    int fd = open(d->path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        close(fd);
    if (d->kind == FE_DEP_ABSENT)
        return fd < 0;
    if (fd < 0 || !same_canonical(d->path, d->canonical))
        return false;
    if (d->kind == FE_DEP_PRESENT)
        return true;
    size_t n = 0;
    char *text = fe_read_source(d->path, &n), hex[65];
    if (!text)
        return false;
    cg_sha256_hex(text, n, hex);
    free(text);
    return strcmp(hex, d->sha) == 0;
}

/* "KIND LEN:PATH LEN:CANONICAL SHA\n" per dependency. */
static char *deps_text(const drv_runcache *rc, size_t *n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, n);
    bool ok = f != NULL;
    for (int i = 0; ok && i < rc->ndeps; i++) {
        const drv_dep *d = &rc->deps[i];
        ok = fprintf(f, "%d %zu:%s %zu:%s %s\n", (int)d->kind, strlen(d->path), d->path,
                     strlen(d->canonical), d->canonical, d->sha) > 0;
    }
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Whether every dependency in the entry's text holds; *changed names the
 * first that does not (malloc'ed) when they are well formed. */
static bool deps_hold(const char *text, size_t n, bool *well_formed, char **changed)
{
    cg_reader r = {text, text + n};
    *well_formed = false;
    *changed = NULL;
    bool holds = true;
    while (r.p < r.end) {
        long long kind;
        drv_dep d = {0};
        bool ok = cg_read_num(&r, FE_DEP_MAIN, FE_DEP_READ, &kind) && cg_read_lit(&r, " ") &&
                  (d.path = cg_read_str(&r)) && cg_read_lit(&r, " ") && (d.canonical = cg_read_str(&r)) &&
                  cg_read_lit(&r, " ") && cg_read_word(&r, d.sha, sizeof d.sha) && cg_read_lit(&r, "\n");
        d.kind = (fe_dep_kind)kind;
        if (ok && holds && !dep_holds(&d)) {
            holds = false;
            *changed = d.path;
            d.path = NULL;
        }
        free(d.path);
        free(d.canonical);
        if (!ok) {
            free(*changed);
            *changed = NULL;
            return false;
        }
    }
    *well_formed = true;
    return holds;
}

/* ---------------------------------------------------------------- interface */

/* "LEN:NAME DTYPE ROLE NDIM D0 .. HAS_INIT LO HI\n" per buffer (the bounds
 * as %a: exact). */
static char *iface_text(const rt_iface *f, size_t *n)
{
    char *buf = NULL;
    FILE *out = open_memstream(&buf, n);
    bool ok = out != NULL;
    for (int i = 0; ok && i < f->nbufs; i++) {
        const rt_iface_buf *b = &f->bufs[i];
        ok = fprintf(out, "%zu:%s %d %d %d", strlen(b->name), b->name, (int)b->dtype,
                     (int)b->role, b->ndim) > 0;
        for (int d = 0; ok && d < b->ndim; d++)
            ok = fprintf(out, " %lld", (long long)b->shape[d]) > 0;
        ok = ok && fprintf(out, " %d %a %a\n", (int)b->has_init, b->init_lo, b->init_hi) > 0;
    }
    if (out && fclose(out) != 0)
        ok = false;
    if (!ok) {
        free(buf);
        return NULL;
    }
    return buf;
}

static bool hexfloat(cg_reader *r, double *v)
{
    char w[64], *after;
    if (!cg_read_word(r, w, sizeof w))
        return false;
    errno = 0;
    *v = strtod(w, &after);
    return !errno && !*after;
}

/* The interface of the entry's text into f, its names in *names (one
 * block, the caller's); false when it is not well formed. */
static bool read_iface(const char *text, size_t n, rt_iface *f, char **names)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += text[i] == '\n';
    f->nbufs = 0;
    f->bufs = calloc(count + 1, sizeof *f->bufs);
    *names = malloc(n + 1);
    char *at = *names;
    cg_reader r = {text, text + n};
    bool ok = f->bufs && at;
    while (ok && r.p < r.end) {
        rt_iface_buf *b = &f->bufs[f->nbufs];
        long long dtype, role, ndim, has_init = 0, v = 0;
        char *name = cg_read_str(&r);
        ok = name && cg_read_lit(&r, " ") && cg_read_num(&r, 0, IR_NDTYPES - 1, &dtype) && cg_read_lit(&r, " ") &&
             cg_read_num(&r, 0, IR_NBUF_ROLES - 1, &role) && cg_read_lit(&r, " ") && cg_read_num(&r, 0, RT_MAX_DIMS, &ndim);
        if (ok) {
            size_t k = strlen(name) + 1;
            memcpy(at, name, k);
            b->name = at;
            at += k;
            b->dtype = (ir_dtype)dtype;
            b->role = (ir_buf_role)role;
            b->ndim = (int)ndim;
        }
        free(name);
        for (int d = 0; ok && d < b->ndim; d++) {
            ok = cg_read_lit(&r, " ") && cg_read_num(&r, 0, INT64_MAX / 2, &v);
            b->shape[d] = v;
        }
        ok = ok && cg_read_lit(&r, " ") && cg_read_num(&r, 0, 1, &has_init) && cg_read_lit(&r, " ") &&
             hexfloat(&r, &b->init_lo) && cg_read_lit(&r, " ") && hexfloat(&r, &b->init_hi) &&
             cg_read_lit(&r, "\n");
        b->has_init = has_init != 0;
        f->nbufs += ok;
    }
    if (!ok) {
        rt_iface_free(f);
        free(*names);
        *names = NULL;
    }
    return ok;
}

/* ------------------------------------------------------------------ entries */

/* Whether path is a regular file of ours that no one else can write. */
static const char *file_problem(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return strerror(errno);
    if (!S_ISREG(st.st_mode))
        return "is not a regular file";
    if (st.st_uid != geteuid())
        return "is owned by someone else";
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return "is writable by group or others";
    return NULL;
}

/* The whole file (malloc'ed, NUL-terminated), or NULL. */
static char *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (1LL << 34) &&
        (buf = malloc((size_t)st.st_size + 1))) {
        size_t n = 0;
        while (n < (size_t)st.st_size) {
            ssize_t k = read(fd, buf + n, (size_t)st.st_size - n);
            if (k <= 0)
                break;
            n += (size_t)k;
        }
        if (n != (size_t)st.st_size) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = 0;
            *len = n;
        }
    }
    close(fd);
    return buf;
}

/* One field of an entry, "NAME LEN\nBYTES\n", at *p: its bytes and length. */
static bool field(const char **p, const char *end, const char *name, const char **data,
                  size_t *n)
{
    size_t k = strlen(name);
    if ((size_t)(end - *p) < k + 2 || memcmp(*p, name, k) != 0 || (*p)[k] != ' ')
        return false;
    char *after;
    errno = 0;
    unsigned long long v = strtoull(*p + k + 1, &after, 10);
    if (errno || after >= end || *after != '\n' || v > (unsigned long long)(end - after - 1) ||
        after[1 + v] != '\n')
        return false;
    *data = after + 1;
    *n = (size_t)v;
    *p = after + 2 + v;
    return true;
}

/* A module parsed from the entry's text, or NULL. */
static ir_module *parse_module(const char *text, size_t n)
{
    diag quiet;
    diag_init(&quiet, NULL);
    ir_module *m = ir_parse("<run cache>", text, n, &quiet);
    diag_fini(&quiet);
    return m;
}

/* Whether the shared object is the kernel cache's build of its name: a
 * file of ours, named KEY.so, that loads and defines tec_cache_key = KEY.
 * *handle keeps it loaded (so that loading it again is cheap). */
static const char *so_problem(const char *so, void **handle)
{
    const char *why = file_problem(so);
    if (why)
        return why;
    const char *base = strrchr(so, '/');
    base = base ? base + 1 : so;
    size_t n = strlen(base);
    if (n != 67 || strcmp(base + 64, ".so") != 0)
        return "is not named after a kernel-cache key";
    cg_pin_openmp_runtime();
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return "does not load";
    const char *key = dlsym(h, SO_KEY_SYMBOL);
    if (!key || strncmp(key, base, 64) != 0 || key[64]) {
        dlclose(h);
        return "is not the build of its name";
    }
    *handle = h;
    return NULL;
}

/* Whether the entry buf[0..len) starts with magic and ends with the right
 * checksum line: then *p, *end delimit its fields. */
static bool checked_body(const char *buf, size_t len, const char *magic, const char **p,
                         const char **end)
{
    size_t mn = strlen(magic);
    if (len <= 72 + mn || memcmp(buf, magic, mn) != 0 || memcmp(buf + len - 72, "sha256 ", 7) ||
        buf[len - 1] != '\n')
        return false;
    char hex[65];
    cg_sha256_hex(buf, len - 72, hex);
    if (memcmp(hex, buf + len - 65, 64) != 0)
        return false;
    *p = buf + mn;
    *end = buf + len - 72;
    return true;
}

static void *so_handle;   /* the shared object found by the last lookup */

/* The number of kernels a kernel table holds ("kernels N\n..."), or -1. */
static long long table_size(const char *table, size_t n)
{
    cg_reader r = {table, table + n};
    long long k;
    return cg_read_lit(&r, "kernels ") && cg_read_num(&r, 0, INT32_MAX, &k) && cg_read_lit(&r, "\n") ? k : -1;
}

/* The entry's fields. */
typedef struct entry {
    const char *key, *deps, *messages, *iface, *so, *kernels, *graph, *module;
    size_t kn, dn, mn, in, sn, tn, gn, fn;
} entry;

static bool entry_fields(const char **p, const char *end, entry *e)
{
    return field(p, end, "key", &e->key, &e->kn) && field(p, end, "deps", &e->deps, &e->dn) &&
           field(p, end, "messages", &e->messages, &e->mn) &&
           field(p, end, "iface", &e->iface, &e->in) && field(p, end, "so", &e->so, &e->sn) &&
           field(p, end, "kernels", &e->kernels, &e->tn) &&
           field(p, end, "graph", &e->graph, &e->gn) &&
           field(p, end, "module", &e->module, &e->fn) && *p == end;
}

/* The hit of entry e: the module, the library, the interface; false (all
 * freed) when it cannot be used, *damaged when the entry itself is wrong. */
static bool use_entry(drv_runcache *rc, const entry *e, bool full, drv_runcache_hit *h,
                      bool *damaged)
{
    char *sop = strndup(e->so, e->sn);
    const char *why = NULL;
    void *handle = NULL;
    if (!sop || (why = so_problem(sop, &handle))) {
        say(rc, "the kernels %s %s; compiling", sop ? sop : "?", why ? why : "");
        free(sop);
        return false;
    }
    diag quiet;
    diag_init(&quiet, NULL);
    h->m = full ? parse_module(e->module, e->fn) : parse_module(e->graph, e->gn);
    h->lib = h->m && table_size(e->kernels, e->tn) == h->m->nfuncs
                 ? cg_load_table(sop, e->kernels, e->tn, &quiet) : NULL;
    diag_fini(&quiet);
    char *names = NULL;
    if (!h->lib || !read_iface(e->iface, e->in, &h->iface, &names) ||
        !(rc->messages = malloc(e->mn + 1))) {
        *damaged = true;
        ir_module_free(h->m);
        if (h->lib)
            cg_unload(h->lib);
        if (names)
            rt_iface_free(&h->iface);
        free(names);
        free(sop);
        dlclose(handle);
        *h = (drv_runcache_hit){0};
        return false;
    }
    memcpy(rc->messages, e->messages, e->mn);
    rc->messages[e->mn] = 0;
    rc->nmessages = e->mn;
    rc->iface_names = names;
    h->so_path = sop;
    if (so_handle)
        dlclose(so_handle);
    so_handle = handle;
    return true;
}

/* drv_runcache_lookup with the folder held. */
static bool lookup_held(drv_runcache *rc, bool full, drv_runcache_hit *h)
{
    /* the kernels' row of --time-phases: from the cache, or (a miss)
     * the lookup and then the build */
    ir_phase_push("compile");
    size_t len = 0;
    char *buf = NULL;
    const char *why = NULL;
    struct stat st;
    if (lstat(rc->path, &st) != 0) {
        say(rc, "no entry %s%s", rc->path, "");
        ir_phase_pop();
        return false;
    }
    if ((why = file_problem(rc->path))) {
        say(rc, "entry %s %s; not used", rc->path, why);
        ir_phase_pop();
        return false;
    }
    bool damaged = true, hit = false;
    const char *p, *end;
    entry e;
    if ((buf = read_all(rc->path, &len)) && checked_body(buf, len, ENTRY_MAGIC, &p, &end) &&
        entry_fields(&p, end, &e) && e.kn == 64 && memcmp(e.key, rc->key, 64) == 0) {
        bool well_formed;
        char *changed = NULL;
        if (deps_hold(e.deps, e.dn, &well_formed, &changed)) {
            damaged = false;
            hit = use_entry(rc, &e, full, h, &damaged);
            if (hit) {   /* the checksum line, which checked_body verified */
                memcpy(rc->content, buf + len - 65, 64);
                rc->content[64] = 0;
            }
        } else if (well_formed) {
            damaged = false;
            say(rc, "%s changed since the entry was written; compiling%s",
                changed ? changed : "a file the program imports", "");
        }
        free(changed);
    }
    free(buf);
    if (damaged) {
        say(rc, "entry %s is damaged; removing it%s", rc->path, "");
        unlink(rc->path);
    }
    if (!hit) {
        ir_phase_pop();
        return false;
    }
    cg_cache_touch(rc->path);
    cg_cache_touch(h->so_path);   /* no kernel cache lookup marks it used */
    say(rc, "hit: %s%s", rc->path, "");
    if (rc->verbose)   /* the kernels are the kernel cache's, checked as it checks them */
        fprintf(stderr, "tec: kernel cache hit: %s\n", h->so_path);
    ir_phase_note("from the cache");
    ir_phase_pop();
    return true;
}

bool drv_runcache_lookup(drv_runcache *rc, bool full, drv_runcache_hit *h)
{
    *h = (drv_runcache_hit){0};
    if (!rc->path)
        return false;
    int lock = hold_folder(rc->path);   /* until the kernels are loaded */
    bool hit = lookup_held(rc, full, h);
    cg_cache_release(lock);
    return hit;
}

/* ------------------------------------------------------------------ store */

/* Writes body and its checksum line ("sha256 HEX\n") to path atomically
 * (a temporary file of ours, renamed); false (said with --verbose) when it
 * cannot. */
static bool write_entry(const char *what, bool verbose, const char *path, const char *body,
                        size_t blen)
{
    char hex[65];
    cg_sha256_hex(body, blen, hex);
    size_t tn = strlen(path) + 32;
    char *tmp = malloc(tn);
    int fd = -1;
    if (tmp) {
        snprintf(tmp, tn, "%s.tmp.%ld", path, (long)getpid());
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    bool ok = out && fwrite(body, 1, blen, out) == blen && fprintf(out, "sha256 %s\n", hex) > 0;
    if (out)
        ok = fclose(out) == 0 && ok;
    else if (fd >= 0)
        close(fd);
    if (ok && rename(tmp, path) != 0)
        ok = false;
    int err = errno;
    if (!ok && tmp)
        unlink(tmp);
    if (!ok)
        say_if_full(path, err);
    else
        cg_cache_wrote((long long)blen + 72);   /* and its checksum line */
    if (verbose) {
        if (ok)
            fprintf(stderr, "tec: %s: entry written: %s\n", what, path);
        else
            fprintf(stderr, "tec: %s: cannot write %s: %s\n", what, path, strerror(err));
    }
    free(tmp);
    return ok;
}

static bool put_field(FILE *f, const char *name, const char *data, size_t n)
{
    return fprintf(f, "%s %zu\n", name, n) > 0 && fwrite(data, 1, n, f) == n && fputc('\n', f) != EOF;
}

/* The module's text, when it parses back to a module that prints the same
 * (malloc'ed), else NULL. */
static char *faithful_text(const ir_module *m)
{
    char *text = ir_module_to_string(m);
    if (!text)
        return NULL;
    ir_module *back = parse_module(text, strlen(text));
    char *again = back ? ir_module_to_string(back) : NULL;
    bool same = again && strcmp(again, text) == 0;
    free(again);
    ir_module_free(back);
    if (!same) {
        free(text);
        return NULL;
    }
    return text;
}

/* m's graph and its functions' signatures with their layer names, without
 * bodies or other attributes: all a plain run of compiled kernels reads of
 * the module (malloc'ed), when it parses back to a module that prints the
 * same. */
static char *graph_text(const ir_module *m)
{
    ir_module shallow = *m;
    ir_func *funcs = calloc((size_t)m->nfuncs + 1, sizeof *funcs);
    ir_func **ptrs = calloc((size_t)m->nfuncs + 1, sizeof *ptrs);
    ir_attr *layers = calloc((size_t)m->nfuncs + 1, sizeof *layers);
    char *text = NULL;
    if (funcs && ptrs && layers) {
        for (int i = 0; i < m->nfuncs; i++) {
            funcs[i] = *m->funcs[i];
            funcs[i].body = NULL;
            funcs[i].nattrs = 0;
            const char *layer = ir_func_attr(m->funcs[i], "layer");
            if (layer) {
                layers[i] = (ir_attr){"layer", layer};
                funcs[i].attrs = &layers[i];
                funcs[i].nattrs = 1;
            }
            ptrs[i] = &funcs[i];
        }
        shallow.funcs = ptrs;
        text = faithful_text(&shallow);
    }
    free(funcs);
    free(ptrs);
    free(layers);
    return text;
}

void drv_runcache_store(drv_runcache *rc, const ir_module *m, const cg_library *lib,
                        const char *so_path, const rt_iface *iface)
{
    if (!rc->path || !so_path || !lib)
        return;
    if (rc->deps_oom) {
        say(rc, "no entry written for %s: %s", rc->path, "out of memory");
        return;
    }
    void *h = NULL;
    const char *why = so_problem(so_path, &h);
    if (why) {
        say(rc, "no entry written: the kernels %s %s", so_path, why);
        return;
    }
    dlclose(h);
    ir_phase_push("run cache");
    size_t dn = 0, in = 0, tn = 0;
    char *deps = deps_text(rc, &dn), *ifc = iface_text(iface, &in);
    char *table = cg_library_table(lib, &tn);
    char *mt = faithful_text(m), *gt = mt ? graph_text(m) : NULL;
    char *body = NULL;
    size_t blen = 0;
    FILE *f = (deps && ifc && table && mt && gt) ? open_memstream(&body, &blen) : NULL;
    bool ok = f && fputs(ENTRY_MAGIC, f) >= 0 && put_field(f, "key", rc->key, 64) &&
              put_field(f, "deps", deps, dn) &&
              put_field(f, "messages", rc->messages ? rc->messages : "", rc->nmessages) &&
              put_field(f, "iface", ifc, in) && put_field(f, "so", so_path, strlen(so_path)) &&
              put_field(f, "kernels", table, tn) && put_field(f, "graph", gt, strlen(gt)) &&
              put_field(f, "module", mt, strlen(mt));
    if (f && fclose(f) != 0)
        ok = false;
    free(deps);
    free(ifc);
    free(table);
    free(mt);
    free(gt);
    if (!ok) {
        say(rc, "no entry written for %s: %s", rc->path,
            f || !(deps && ifc && table) ? "out of memory"
                                         : "the module does not print back to the same text");
        free(body);
        ir_phase_pop();
        return;
    }
    if (write_entry("run cache", rc->verbose, rc->path, body, blen)) {
        cg_sha256_hex(body, blen, rc->content);
        trim_folder(rc->path, rc->verbose);
    }
    free(body);
    ir_phase_pop();
}

void drv_runcache_free(drv_runcache *rc)
{
    free(rc->path);
    for (int i = 0; i < rc->ndeps; i++) {
        free(rc->deps[i].path);
        free(rc->deps[i].canonical);
    }
    free(rc->deps);
    free(rc->messages);
    free(rc->iface_names);
    *rc = (drv_runcache){0};
    if (so_handle) {
        dlclose(so_handle);
        so_handle = NULL;
    }
}

/* ------------------------------------------------------------ import cache */

#define IMPORT_MAGIC "tec import cache v2\n"
#define IDENTITY_MAX 160   /* identity_of's text */
#define STAMP_MAGIC "tec model stamp v2\n"   /* v2: the chunked digest */

bool drv_importcache_applies(const options *o)
{
    return o->emit == EMIT_RUN && !o->weights_dir && !o->save_weights && !o->no_cache;
}

static void isay(const drv_importcache *ic, const char *fmt, const char *a, const char *b)
{
    tell("import cache", ic->verbose, fmt, a, b);
}

/* A file's identity as text: what changes whenever its bytes do (see
 * "The model's stamp" below). */
static void identity_of(const struct stat *st, char *out, size_t n)
{
    snprintf(out, n, "dev %llu ino %llu size %lld mtime %lld.%09ld ctime %lld.%09ld",
             (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
             (long long)st->st_size, (long long)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec,
             (long long)st->st_ctim.tv_sec, (long)st->st_ctim.tv_nsec);
}

/* The model's stamp: CACHE/run/ID.stamp, ID the SHA-256 of the model file's
 * identity (device, inode, size, modification and change times to the
 * nanosecond), holds the digest of its bytes (digest_bytes) and whether it
 * may refer to external data, so that a start from the caches does not read
 * and hash the whole model (ViT-B/16's 346 MB: 0.3 s).  Any write to a file
 * sets its change time (ctime) to the clock's time, which no program can set
 * back (only a change of the system clock can); a file replaced by another
 * (rename, copy) has another inode or ctime.  A write within the same tick
 * of the file system's clock as the stamp's reading would keep the ctime, so
 * a stamp is written only for a file whose times are older than the reading
 * by more than a tick: 50 ms where the times have a finer grain than a
 * millisecond (ext4, XFS, btrfs, tmpfs tick at most every 10 ms), else 2 s
 * (FAT's 2 s, a second on older file systems).  A file changed while it was
 * hashed (its identity after the reading differs) is not stamped either. */
static bool stamp_allowed(const struct stat *st, const struct timespec *now)
{
    bool fine = st->st_mtim.tv_nsec % 1000000 && st->st_ctim.tv_nsec % 1000000;
    long long margin_ns = fine ? 50000000LL : 2000000000LL;
    long long now_ns = (long long)now->tv_sec * 1000000000LL + now->tv_nsec;
    long long m = (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
    long long c = (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
    return m + margin_ns <= now_ns && c + margin_ns <= now_ns;
}

static char *stamp_path(const char *dir, const char *identity)
{
    char hex[65], name[80];
    cg_sha256_hex(identity, strlen(identity), hex);
    snprintf(name, sizeof name, "%s.stamp", hex);
    return ir_path_join(dir, name);
}

/* The model's digest (hex) and whether it may refer to external data, from
 * its stamp: false when there is none or it is not for this identity. */
static bool read_stamp(const drv_importcache *ic, const char *path, const char *identity,
                       char *hex, bool *external)
{
    if (file_problem(path))
        return false;
    size_t len = 0;
    char *buf = read_all(path, &len);
    const char *p, *end, *id, *sum, *ext;
    size_t idn, sn, en;
    bool ok = buf && checked_body(buf, len, STAMP_MAGIC, &p, &end) &&
              field(&p, end, "identity", &id, &idn) && field(&p, end, "sha256", &sum, &sn) &&
              field(&p, end, "external", &ext, &en) && p == end && sn == 64 && en == 1 &&
              idn == strlen(identity) && memcmp(id, identity, idn) == 0;
    if (ok) {
        memcpy(hex, sum, 64);
        hex[64] = 0;
        *external = *ext == '1';
        cg_cache_touch(path);
    } else if (buf) {
        isay(ic, "stamp %s is not this file's; hashing the model%s", path, "");
    }
    free(buf);
    return ok;
}

static void write_stamp(const drv_importcache *ic, const char *path, const char *identity,
                        const char *hex, bool external)
{
    char *body = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&body, &n);
    bool ok = f && fputs(STAMP_MAGIC, f) >= 0 &&
              put_field(f, "identity", identity, strlen(identity)) &&
              put_field(f, "sha256", hex, 64) && put_field(f, "external", external ? "1" : "0", 1);
    if (f && fclose(f) != 0)
        ok = false;
    if (ok)
        write_entry("import cache", false, path, body, n);
    free(body);
}

/* The model's digest: the SHA-256 of its length and of the SHA-256 of each
 * of its chunks of DIGEST_CHUNK bytes (the last one shorter), hashed by
 * several threads at once (a model of hundreds of megabytes: GPT-2's
 * 650 MB takes 0.7 s on one core), each chunk also searched for the word
 * "location" (an external-data entry's).  The chunks' size, not the
 * threads' number, defines the digest. */
#define DIGEST_MAGIC "tec model digest v2\n"
#define DIGEST_CHUNK ((size_t)32 << 20)

typedef struct digest_job {
    const unsigned char *bytes;
    size_t len, nchunks;
    uint8_t (*sums)[32];       /* [nchunks] */
    bool *external;            /* [nchunks]: "location" starts in the chunk */
    size_t next;               /* the next chunk to hash (taken atomically) */
} digest_job;

static void *digest_worker(void *arg)
{
    digest_job *j = arg;
    for (;;) {
        size_t c = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (c >= j->nchunks)
            return NULL;
        size_t from = c * DIGEST_CHUNK;
        size_t n = j->len - from < DIGEST_CHUNK ? j->len - from : DIGEST_CHUNK;
        const unsigned char *p = j->bytes + from;
#ifdef MADV_POPULATE_READ
        /* the chunk's pages mapped in one go (not a fault per 64 KiB) */
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = (uintptr_t)p & ~(page - 1);
        madvise((void *)lo, (uintptr_t)p + n - lo, MADV_POPULATE_READ);
#endif
        cg_sha256(p, n, j->sums[c]);
        /* a word that starts in this chunk may end in the next */
        size_t look = j->len - from < n + 7 ? j->len - from : n + 7;
        j->external[c] = memmem(p, look, "location", 8) != NULL;
    }
}

/* The digest (hex) of bytes[0..len) and whether they hold "location", on
 * up to `threads` threads. */
static bool digest_bytes(const unsigned char *bytes, size_t len, int threads, char *hex,
                         bool *external)
{
    digest_job j = {bytes, len, (len + DIGEST_CHUNK - 1) / DIGEST_CHUNK, NULL, NULL, 0};
    j.sums = malloc(sizeof *j.sums * (j.nchunks + 1));
    j.external = calloc(j.nchunks + 1, sizeof *j.external);
    if (!j.sums || !j.external) {
        free(j.sums);
        free(j.external);
        return false;
    }
    pthread_t tid[8];
    int started = 0;
    if (threads > 8)
        threads = 8;
    for (int i = 1; i < threads && (size_t)i < j.nchunks; i++)
        started += pthread_create(&tid[started], NULL, digest_worker, &j) == 0;
    digest_worker(&j);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    cg_sha256_ctx s;
    cg_sha256_init(&s);
    cg_sha256_update(&s, DIGEST_MAGIC, strlen(DIGEST_MAGIC));
    put_int(&s, "length", (long long)len);
    put_int(&s, "chunk", (long long)DIGEST_CHUNK);
    cg_sha256_update(&s, j.sums, sizeof *j.sums * j.nchunks);
    uint8_t digest[32];
    cg_sha256_final(&s, digest);
    cg_sha256_to_hex(digest, hex);
    *external = false;
    for (size_t c = 0; c < j.nchunks; c++)
        *external |= j.external[c];
    free(j.sums);
    free(j.external);
    return true;
}

/* The model file's bytes hashed (hex) and searched for "location": read
 * and mapped, unless a stamp has them.  False when the file cannot be
 * read (the importer says why). */
static bool model_digest(drv_importcache *ic, const char *dir, const char *model, int threads,
                         char *hex, bool *external)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int fd = open(model, O_RDONLY | O_CLOEXEC);
    struct stat st, after;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (unsigned long long)st.st_size >= ((size_t)1 << 40)) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    identity_of(&st, ic->identity, sizeof ic->identity);
    char *stamp = stamp_path(dir, ic->identity);
    bool ok = stamp && read_stamp(ic, stamp, ic->identity, hex, external);
    if (ok) {
        isay(ic, "model %s unchanged since %s (its identity); not hashed", model, stamp);
    } else {
        size_t len = (size_t)st.st_size;
        void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            ok = digest_bytes(p, len, threads, hex, external);
            munmap(p, len);
            char again[sizeof ic->identity];
            ok = ok && fstat(fd, &after) == 0;
            identity_of(&after, again, sizeof again);
            ok = ok && strcmp(again, ic->identity) == 0;   /* not changed meanwhile */
            if (ok && stamp && stamp_allowed(&st, &now))
                write_stamp(ic, stamp, ic->identity, hex, *external);
        }
    }
    free(stamp);
    close(fd);
    return ok;
}

bool drv_importcache_key(drv_importcache *ic, const options *o)
{
    *ic = (drv_importcache){.verbose = o->verbose};
    ir_phase_push("import cache key");
    cg_options co = {.verbose = o->verbose};
    char *dir = run_dir(&co, o->verbose);
    bool ok = false, external = false;
    char model_hex[65];
    cg_sha256_ctx s;
    int threads = o->threads > 0 ? o->threads : o->target.cores;
    if (!dir || !model_digest(ic, dir, o->input_file, threads, model_hex, &external))
        goto out;   /* the importer says what is wrong with the file */
    if (external) {
        isay(ic, "not used: %s may refer to external data%s", o->input_file, "");
        goto out;
    }
    cg_sha256_init(&s);
    cg_sha256_update(&s, IMPORT_MAGIC, strlen(IMPORT_MAGIC));
    put_tec(&s);
    put(&s, "model-sha256", model_hex, 64);
    for (int i = 0; i < o->ndefines; i++) {
        put_str(&s, "define", o->defines[i].name);
        put_str(&s, "value", o->defines[i].value);
    }
    for (int i = 0; i < o->ninputs; i++) {
        size_t n = 0;
        char *bytes = read_all(o->inputs[i].path, &n);
        if (!bytes)
            goto out;   /* the importer (or the run) says what is wrong */
        put_str(&s, "input", o->inputs[i].name);
        put(&s, "input-file", bytes, n);
        free(bytes);
    }
    uint8_t digest[32];
    cg_sha256_final(&s, digest);
    cg_sha256_to_hex(digest, ic->key);
    char name[80];
    snprintf(name, sizeof name, "%s.import", ic->key);
    ok = (ic->path = ir_path_join(dir, name)) != NULL;
    snprintf(name, sizeof name, "%s.weights", ic->key);
    ok = ok && (ic->weights_path = ir_path_join(dir, name)) != NULL;
out:
    free(dir);
    if (!ok) {
        free(ic->path);
        ic->path = NULL;
    }
    ir_phase_pop();
    return ok;
}

/* ------------------------------------------------ import cache: the weights */

/* The weights live in CACHE/run/KEY.weights, each at an offset that is a
 * multiple of 64 (a tensor's alignment); those of RT_ZALLOC_MAP bytes or
 * more on whole pages of their own, after the small ones.  A hit maps the
 * file (private: a write would copy the page, never reach the file) and
 * gives each large weight its pages as the tensor's data, which
 * rt_tensor_free unmaps as it unmaps any large block (runtime/tensor.h:
 * rt_zfree of n >= RT_ZALLOC_MAP bytes unmaps the whole pages from p), so
 * the weights are neither read nor copied before the load calls read them;
 * the small ones are copied into tensors of their own.  The file is
 * trusted as the kernels' shared objects are: written atomically in a
 * private folder, named by the key, and used only when its identity is the
 * one the entry recorded when it was written. */

/* One weight of the entry's table. */
typedef struct wentry {
    char name[512];
    int dtype, ndim;
    int64_t shape[RT_MAX_DIMS];
    unsigned long long off, nbytes;
    bool handed;               /* a large weight whose pages a tensor owns */
} wentry;

static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* One line of the table, "NAME DTYPE NDIM D0 .. Dn-1 OFFSET NBYTES\n", at
 * *p into w; false when it is not well formed, its bytes are not what the
 * dtype and shape give or lie outside the file of `size` bytes, or its
 * offset is not aligned. */
static bool parse_weight(const char **p, const char *end, size_t size, wentry *w)
{
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    char line[1024];
    size_t n = nl ? (size_t)(nl - *p) : sizeof line;
    if (n >= sizeof line)
        return false;
    memcpy(line, *p, n);
    line[n] = 0;
    *p = nl + 1;
    int used = 0, k = 0;
    if (sscanf(line, "%511s %d %d%n", w->name, &w->dtype, &w->ndim, &used) != 3 ||
        w->dtype < 0 || w->dtype >= IR_NDTYPES || w->ndim < 0 || w->ndim > RT_MAX_DIMS)
        return false;
    const char *q = line + used;
    uint64_t bytes = (uint64_t)ir_dtype_size((ir_dtype)w->dtype);
    for (int i = 0; i < w->ndim; i++, q += k) {
        long long v;
        if (sscanf(q, " %lld%n", &v, &k) != 1 || v < 0 ||
            __builtin_mul_overflow(bytes, (uint64_t)v, &bytes))
            return false;
        w->shape[i] = v;
    }
    if (sscanf(q, " %llu %llu%n", &w->off, &w->nbytes, &k) != 2 || q[k] || w->nbytes != bytes ||
        w->off > size || w->nbytes > size - w->off || w->off % 64)
        return false;
    return w->nbytes < RT_ZALLOC_MAP ||
           (w->off % page_size() == 0 && round_up(w->nbytes, page_size()) <= size - w->off);
}

static int by_offset(const void *a, const void *b)
{
    const wentry *x = *(wentry *const *)a, *y = *(wentry *const *)b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The large weights of w[0..n) by offset into *large (malloc'ed); false
 * when two share a page. */
static bool order_large(wentry *w, size_t n, wentry ***large, size_t *nlarge)
{
    *nlarge = 0;
    *large = malloc((n + 1) * sizeof **large);
    if (!*large)
        return false;
    for (size_t i = 0; i < n; i++)
        if (w[i].nbytes >= RT_ZALLOC_MAP)
            (*large)[(*nlarge)++] = &w[i];
    qsort(*large, *nlarge, sizeof **large, by_offset);
    for (size_t i = 1; i < *nlarge; i++)
        if ((*large)[i]->off < (*large)[i - 1]->off + round_up((*large)[i - 1]->nbytes, page_size()))
            return false;
    return true;
}

/* A tensor whose data is the weight's pages of the mapping. */
static rt_tensor *mapped_tensor(const wentry *w, unsigned char *map)
{
    rt_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->dtype = (ir_dtype)w->dtype;
    t->ndim = w->ndim;
    memcpy(t->shape, w->shape, sizeof(int64_t) * (size_t)w->ndim);
    t->data = map + w->off;
    t->nbytes = (size_t)w->nbytes;
    return t;
}

/* Weights of a mapping handed out in two steps: the large ones (their
 * pages) at once, copies of the small ones when the run's params are
 * known (a run from the consts cache needs few of the weights that its
 * load calls would have packed). */
typedef struct drv_pending {
    wentry *w;
    size_t n;
    unsigned char *map;
    size_t size;
    wentry **large;            /* the large ones by offset */
    size_t nlarge;
} drv_pending;

/* Unmaps every page of p's mapping that no tensor owns (between and around
 * the large weights handed out) and frees p. */
static void pending_finish(drv_pending *p)
{
    size_t from = 0, page = page_size(), total = round_up(p->size, page);
    for (size_t i = 0; p->large && i <= p->nlarge; i++) {
        if (i < p->nlarge && !p->large[i]->handed)
            continue;
        size_t to = i < p->nlarge ? (size_t)p->large[i]->off : total;
        if (to > from)
            munmap(p->map + from, to - from);
        if (i < p->nlarge)
            from = (size_t)p->large[i]->off + round_up((size_t)p->large[i]->nbytes, page);
    }
    if (!p->large && p->size)
        munmap(p->map, total);
    free(p->large);
    free(p->w);
    free(p);
}

/* The large weights of p put into ws: tensors that own their pages of the
 * mapping. */
static bool hand_out_large(drv_pending *p, rt_weight_set *ws)
{
    bool ok = order_large(p->w, p->n, &p->large, &p->nlarge);
    for (size_t i = 0; ok && i < p->nlarge; i++) {
        rt_tensor *t = mapped_tensor(p->large[i], p->map);
        p->large[i]->handed = t != NULL;
        ok = t && rt_weight_set_put(ws, p->large[i]->name, t);
    }
    return ok;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The small weights of p into ws, as tensors that borrow their bytes from
 * the mapping (which stays until the cache is freed, after the run): those
 * m has a param of (all without m). */
static bool hand_out_small(drv_pending *p, const ir_module *m, rt_weight_set *ws)
{
    const char **params = NULL;
    size_t np = 0;
    if (m) {
        params = malloc(sizeof *params * ((size_t)m->graph.nbufs + 1));
        if (!params)
            return false;
        for (int i = 0; i < m->graph.nbufs; i++)
            if (m->graph.bufs[i]->role == IR_BUF_PARAM)
                params[np++] = m->graph.bufs[i]->name;
        qsort(params, np, sizeof *params, by_name);
    }
    bool ok = true;
    for (size_t i = 0; ok && i < p->n; i++) {
        const wentry *w = &p->w[i];
        const char *name = w->name;
        if (w->nbytes >= RT_ZALLOC_MAP ||
            (m && !bsearch(&name, params, np, sizeof *params, by_name)))
            continue;
        rt_tensor *t = mapped_tensor(w, p->map);   /* the mapping outlives it */
        if (t)
            t->borrowed = true;
        ok = t && rt_weight_set_put(ws, w->name, t);
    }
    free(params);
    return ok;
}

/* The weights of the entry's table tab[0..n) from the weights file whose
 * identity the entry recorded, into ws: all of them, or with `later` the
 * large ones, the small ones left in *later (for drv_pending_hand_out).
 * False (ws then holds none of them) when the file is not that one or a
 * line is not well formed. */
static bool read_weights(const char *path, const char *tab, size_t n, const char *ident,
                         size_t identn, rt_weight_set *ws, drv_pending **later,
                         drv_pending **keep)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    char now[IDENTITY_MAX];
    if (fd < 0 || fstat(fd, &st) != 0 || file_problem(path)) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    identity_of(&st, now, sizeof now);
    drv_pending *p = calloc(1, sizeof *p);
    if (!p) {
        close(fd);
        return false;
    }
    size_t size = (size_t)st.st_size;
    for (size_t i = 0; i < n; i++)
        p->n += tab[i] == '\n';
    p->w = calloc(p->n + 1, sizeof *p->w);
    bool ok = p->w && strlen(now) == identn && memcmp(now, ident, identn) == 0;
    const char *q = tab, *end = tab + n;
    for (size_t i = 0; ok && i < p->n; i++)
        ok = parse_weight(&q, end, size, &p->w[i]);
    ok = ok && q == end;
    if (ok && size) {
        void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        ok = map != MAP_FAILED;
        if (ok) {
            p->map = map;
            p->size = size;
        }
    }
    close(fd);
    ok = ok && hand_out_large(p, ws);
    if (ok && later) {
        *later = p;
        return true;
    }
    ok = ok && hand_out_small(p, NULL, ws);
    if (ok && keep)
        *keep = p;   /* the small weights' pages: unmapped by the cache's free */
    else
        pending_finish(p);
    return ok;
}

/* The entry's --input names (one a line, in the options' order) given to
 * o's entries: false when they are not one per entry. */
static bool rename_inputs(drv_importcache *ic, options *o, const char *names, size_t n)
{
    const char *p = names, *end = names + n;
    char **kept = calloc((size_t)o->ninputs + 1, sizeof *kept);
    bool ok = kept != NULL;
    for (int i = 0; ok && i < o->ninputs; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        ok = nl && nl > p && (kept[i] = strndup(p, (size_t)(nl - p)));
        p = nl ? nl + 1 : end;
    }
    if (ok && p == end) {
        for (int i = 0; i < o->ninputs; i++)
            o->inputs[i].name = kept[i];
        ic->names = kept;
        ic->nnames = o->ninputs;
        return true;
    }
    for (int i = 0; kept && i < o->ninputs; i++)
        free(kept[i]);
    free(kept);
    return false;
}

/* drv_importcache_lookup with the folder held. */
static bool import_lookup_held(drv_importcache *ic, options *o, char **text, rt_weight_set *ws)
{
    struct stat st;
    const char *why;
    if (lstat(ic->path, &st) != 0) {
        isay(ic, "no entry %s%s", ic->path, "");
        return false;
    }
    if ((why = file_problem(ic->path))) {
        isay(ic, "entry %s %s; not used", ic->path, why);
        return false;
    }
    size_t blen = 0;
    char *buf = read_all(ic->path, &blen);
    const char *p, *end, *key, *tx, *in, *tab, *id;
    size_t kn, tn, inn, wn, idn;
    bool ok = false;
    if (buf && checked_body(buf, blen, IMPORT_MAGIC, &p, &end) &&
        field(&p, end, "key", &key, &kn) && kn == 64 && memcmp(key, ic->key, 64) == 0 &&
        field(&p, end, "text", &tx, &tn) && field(&p, end, "inputs", &in, &inn) &&
        field(&p, end, "weights", &tab, &wn) && field(&p, end, "weights-file", &id, &idn) &&
        p == end && memchr(tx, 0, tn) == NULL && memchr(in, 0, inn) == NULL) {
        /* the names last: nothing of a damaged entry is used */
        ok = read_weights(ic->weights_path, tab, wn, id, idn, ws, &ic->pending, NULL) &&
             (*text = strndup(tx, tn)) && rename_inputs(ic, o, in, inn);
    }
    free(buf);
    if (!ok) {
        free(*text);
        *text = NULL;
        if (ic->pending)
            pending_finish(ic->pending);
        ic->pending = NULL;
        rt_weight_set_free(ws);
        *ws = (rt_weight_set){0};
        isay(ic, "entry %s is damaged or its weights file is not the one it was written "
             "with; removing it%s", ic->path, "");
        unlink(ic->path);
        return false;
    }
    cg_cache_touch(ic->path);   /* its weights file keeps its identity */
    isay(ic, "hit: %s%s", ic->path, "");
    return true;
}

bool drv_importcache_lookup(drv_importcache *ic, options *o, char **text, rt_weight_set *ws)
{
    *text = NULL;
    if (!ic->path)
        return false;
    int lock = hold_folder(ic->path);   /* until the weights are mapped */
    bool hit = import_lookup_held(ic, o, text, ws);
    cg_cache_release(lock);
    return hit;
}

/* ------------------------------------------------------ import cache: store */

/* Where each weight of ws goes in the weights file (the small ones first,
 * 64-byte aligned, then the large ones on pages of their own): the table's
 * lines into tab, the file's size; false when a name cannot be a line. */
static bool lay_out(const rt_weight_set *ws, FILE *tab, size_t *size, const char **why)
{
    size_t at = 0, page = page_size();
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            at = round_up(at, page);
        for (size_t i = 0; ws && i < ws->cap; i++) {
            const char *name = ws->names[i];
            const rt_tensor *w = ws->tensors[i];
            if (!name || !w || (w->nbytes >= RT_ZALLOC_MAP) != (pass == 1))
                continue;
            if (!*name || strlen(name) > 500 || strpbrk(name, " \t\n\r")) {
                *why = "a weight's name has a space or is too long";
                return false;
            }
            fprintf(tab, "%s %d %d", name, (int)w->dtype, w->ndim);
            for (int k = 0; k < w->ndim; k++)
                fprintf(tab, " %lld", (long long)w->shape[k]);
            fprintf(tab, " %zu %zu\n", at, w->nbytes);
            at = round_up(at + w->nbytes, pass ? page : 64);
        }
    }
    *size = at;
    return true;
}

/* Zeros to f from `end` (where the writes have come to) up to the next
 * multiple of `to`; *at the new end. */
static bool pad_to(FILE *f, size_t *at, size_t end, size_t to)
{
    static const char zeros[4096];
    size_t pad = round_up(end, to) - end;
    *at = end + pad;
    while (pad) {
        size_t k = pad < sizeof zeros ? pad : sizeof zeros;
        if (fwrite(zeros, 1, k, f) != k)
            return false;
        pad -= k;
    }
    return true;
}

/* A large tensor w just written at offset off of the file fd, given that
 * file's pages instead of its own memory (mapped private: a write to them
 * would copy the page, never reach the file), when it owns whole pages of
 * memory of its own (rt_zalloc's, which rt_zfree gives back).  The consts
 * cache's store does so as it writes each const: the memory goes back to
 * the system at once, where the page cache takes it for the next const.
 * On a virtual machine whose host backs the memory lazily and takes freed
 * memory back (free page reporting), memory the system has not used for a
 * while comes slowly (2-3 s a GB on the VM of bench/results/gptc_s20.txt):
 * so GPT-2's 494 MB of packed weights written to the cache cost about the
 * copy, not 1.3 s more.  (Not the import cache's weights: the load calls
 * free most of them as they pack them, and the packed ones take that
 * memory.)  Without a mapping w keeps its memory: slower, not wrong. */
static void swap_to_file(int fd, size_t off, rt_tensor *w)
{
    size_t page = page_size();
    if (w->borrowed || w->nbytes < RT_ZALLOC_MAP || (uintptr_t)w->data % page)
        return;
    void *p = mmap(NULL, round_up(w->nbytes, page), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
                   (off_t)off);
    if (p == MAP_FAILED)
        return;
    rt_zfree(w->data, w->nbytes);
    w->data = p;
}

/* Writes the weights of ws as lay_out placed them into the weights file
 * (a temporary file renamed), and its identity then into ident; false when
 * it cannot.  With swap, the large weights are given the file's pages
 * (swap_to_file) as they are written. */
static bool write_weights(const char *path, const rt_weight_set *ws, bool swap, char *ident,
                          size_t n)
{
    size_t tn = strlen(path) + 32, at = 0, page = page_size();
    char *tmp = malloc(tn);
    if (!tmp)
        return false;
    snprintf(tmp, tn, "%s.tmp.%ld", path, (long)getpid());
    /* readable too: the large weights' pages are mapped from it */
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    bool ok = f != NULL;
    for (int pass = 0; ok && pass < 2; pass++) {
        for (size_t i = 0; ok && ws && i < ws->cap; i++) {
            rt_tensor *w = ws->tensors[i];
            if (!ws->names[i] || !w || (w->nbytes >= RT_ZALLOC_MAP) != (pass == 1))
                continue;
            size_t off = at;
            ok = fwrite(w->data, 1, w->nbytes, f) == w->nbytes &&
                 pad_to(f, &at, at + w->nbytes, pass ? page : 64);
            if (ok && pass == 1 && swap && (ok = fflush(f) == 0))   /* in the file now */
                swap_to_file(fd, off, w);
        }
        ok = ok && pad_to(f, &at, at, page);   /* the large ones on pages of their own */
    }
    if (f)
        ok = fclose(f) == 0 && ok;
    else if (fd >= 0)
        close(fd);
    struct stat st;
    ok = ok && rename(tmp, path) == 0 && lstat(path, &st) == 0;
    if (!ok) {
        unlink(tmp);
    } else {
        identity_of(&st, ident, n);
        cg_cache_wrote((long long)st.st_size);
    }
    free(tmp);
    return ok;
}

/* The tensors of ws into the data file at path, where lay_out places them:
 * the table of their places (malloc'ed into *tab), the file's size and its
 * identity once written (ident, IDENTITY_MAX bytes); false with *why when
 * they cannot be written. */
static bool store_tensors(const char *path, const rt_weight_set *ws, bool swap, char **tab,
                          size_t *tabn, size_t *size, char *ident, const char **why)
{
    FILE *t = open_memstream(tab, tabn);
    bool ok = t && lay_out(ws, t, size, why);
    if (t && fclose(t) != 0)
        ok = false;
    if (ok && !write_weights(path, ws, swap, ident, IDENTITY_MAX)) {
        ok = false;
        *why = strerror(errno);
        say_if_full(path, errno);
    }
    return ok;
}

/* The entry's --input names, one a line (malloc'ed into *in); false when
 * one cannot be a line. */
static bool input_names(const options *o, char **in, size_t *inn, const char **why)
{
    FILE *f = open_memstream(in, inn);
    bool ok = f != NULL;
    for (int i = 0; f && i < o->ninputs; i++) {
        const char *name = o->inputs[i].name;
        if (!*name || strchr(name, '\n')) {
            ok = false;
            *why = "an input's name is empty or has a newline";
        }
        fprintf(f, "%s\n", name);
    }
    if (!f || fclose(f) != 0)
        ok = false;
    return ok;
}

void drv_importcache_store(drv_importcache *ic, const options *o, const char *text,
                           const rt_weight_set *ws)
{
    if (!ic->path || !text)
        return;
    ir_phase_push("import cache");
    char *tab = NULL, *in = NULL, *body = NULL, ident[sizeof ic->identity], now[sizeof ident];
    size_t tabn = 0, inn = 0, bodyn = 0, size = 0;
    const char *why = "out of memory";
    struct stat st;
    /* the model the key was made of, unchanged during the import */
    bool ok = stat(o->input_file, &st) == 0;
    identity_of(&st, now, sizeof now);
    if (!ok || strcmp(now, ic->identity) != 0) {
        ok = false;
        why = "the model file changed during the import";
    }
    ok = ok && input_names(o, &in, &inn, &why) &&
         store_tensors(ic->weights_path, ws, false, &tab, &tabn, &size, ident, &why);
    FILE *b = ok ? open_memstream(&body, &bodyn) : NULL;
    ok = b && fputs(IMPORT_MAGIC, b) >= 0 && put_field(b, "key", ic->key, 64) &&
         put_field(b, "text", text, strlen(text)) && put_field(b, "inputs", in, inn) &&
         put_field(b, "weights", tab, tabn) && put_field(b, "weights-file", ident, strlen(ident));
    if (b && fclose(b) != 0)
        ok = false;
    if (ok && ic->verbose)
        fprintf(stderr, "tec: import cache: %zu weights, %zu bytes in %s\n", ws ? ws->n : 0,
                size, ic->weights_path);
    if (ok && write_entry("import cache", ic->verbose, ic->path, body, bodyn))
        trim_folder(ic->path, ic->verbose);
    else if (!ok)
        isay(ic, "no entry written for %s: %s", ic->path, why);
    free(tab);
    free(in);
    free(body);
    ir_phase_pop();
}

bool drv_importcache_hand_out(drv_importcache *ic, const ir_module *m, rt_weight_set *ws)
{
    if (!ic->pending)
        return true;
    return hand_out_small(ic->pending, m, ws);   /* its pages stay until the free */
}

void drv_importcache_free(drv_importcache *ic)
{
    if (ic->pending)
        pending_finish(ic->pending);
    free(ic->path);
    free(ic->weights_path);
    for (int i = 0; i < ic->nnames; i++)
        free(ic->names[i]);
    free(ic->names);
    *ic = (drv_importcache){0};
}

/* ------------------------------------------------------------ consts cache */

#define CONSTS_MAGIC "tec consts cache v1\n"

bool drv_constcache_key(drv_constcache *cc, const drv_runcache *rc, const drv_importcache *ic,
                        bool default_data)
{
    *cc = (drv_constcache){.verbose = rc->verbose};
    if (!rc->path || !rc->content[0] || (!ic->path && !default_data))
        return false;
    cg_sha256_ctx s;
    cg_sha256_init(&s);
    cg_sha256_update(&s, CONSTS_MAGIC, strlen(CONSTS_MAGIC));
    put(&s, "run-entry", rc->content, 64);
    if (ic->path)
        put(&s, "import-key", ic->key, 64);
    else
        put_str(&s, "params", "default data");
    uint8_t digest[32];
    cg_sha256_final(&s, digest);
    char key[65];
    cg_sha256_to_hex(digest, key);
    /* beside the run cache's entry */
    const char *slash = strrchr(rc->path, '/');
    int dn = slash ? (int)(slash - rc->path) : 1;
    size_t n = strlen(rc->path) + 80;
    cc->path = malloc(n);
    cc->data_path = malloc(n);
    if (!cc->path || !cc->data_path) {
        drv_constcache_free(cc);
        return false;
    }
    snprintf(cc->path, n, "%.*s/%s.consts", dn, slash ? rc->path : ".", key);
    snprintf(cc->data_path, n, "%.*s/%s.constdata", dn, slash ? rc->path : ".", key);
    memcpy(cc->key, key, sizeof key);
    return true;
}

static void csay(const drv_constcache *cc, const char *fmt, const char *a, const char *b)
{
    tell("consts cache", cc->verbose, fmt, a, b);
}

/* Whether every CONST buffer of m has a tensor of its type and size in ws. */
static bool consts_complete(const ir_module *m, const rt_weight_set *ws)
{
    const ir_graph *g = &m->graph;
    for (int i = 0; i < g->nbufs; i++) {
        const ir_buffer *b = g->bufs[i];
        if (b->role != IR_BUF_CONST)
            continue;
        const rt_tensor *t = rt_weight_set_find(ws, b->name);
        if (!t || t->dtype != b->dtype || t->ndim != b->ndim ||
            memcmp(t->shape, b->shape, sizeof(int64_t) * (size_t)b->ndim) != 0)
            return false;
    }
    return true;
}

/* The entry's consts into *ws (a set of their own), false when there is
 * none or it cannot be used (a damaged one is removed). */
static bool read_consts(drv_constcache *cc, rt_weight_set *ws)
{
    struct stat st;
    const char *why;
    if (lstat(cc->path, &st) != 0) {
        csay(cc, "no entry %s%s", cc->path, "");
        return false;
    }
    if ((why = file_problem(cc->path))) {
        csay(cc, "entry %s %s; not used", cc->path, why);
        return false;
    }
    size_t blen = 0;
    char *buf = read_all(cc->path, &blen);
    const char *p, *end, *key, *tab, *id;
    size_t kn, wn, idn;
    bool ok = buf && checked_body(buf, blen, CONSTS_MAGIC, &p, &end) &&
              field(&p, end, "key", &key, &kn) && kn == 64 && memcmp(key, cc->key, 64) == 0 &&
              field(&p, end, "consts", &tab, &wn) && field(&p, end, "data-file", &id, &idn) &&
              p == end && read_weights(cc->data_path, tab, wn, id, idn, ws, NULL, &cc->held);
    free(buf);
    if (!ok) {
        rt_weight_set_free(ws);
        *ws = (rt_weight_set){0};
        csay(cc, "entry %s is damaged or its data file is not the one it was written with; "
             "removing it%s", cc->path, "");
        unlink(cc->path);
    }
    return ok;
}

static int by_pointer(const void *a, const void *b)
{
    const ir_buffer *x = *(const ir_buffer *const *)a, *y = *(const ir_buffer *const *)b;
    return x < y ? -1 : x > y;
}

/* Drops the params no call passes from g: without its load calls, the
 * weights they packed are read by nothing (and the run would make them). */
static void drop_unpassed_params(ir_graph *g)
{
    size_t n = 0;
    for (int c = 0; c < g->ncalls; c++)
        n += (size_t)g->calls[c].nargs;
    const ir_buffer **passed = malloc(sizeof *passed * (n + 1));
    if (!passed)
        return;   /* the run makes them: slower, not wrong */
    n = 0;
    for (int c = 0; c < g->ncalls; c++)
        for (int a = 0; a < g->calls[c].nargs; a++)
            passed[n++] = g->calls[c].args[a];
    qsort(passed, n, sizeof *passed, by_pointer);
    int k = 0;
    for (int i = 0; i < g->nbufs; i++) {
        const ir_buffer *b = g->bufs[i];
        if (b->role != IR_BUF_PARAM || bsearch(&b, passed, n, sizeof *passed, by_pointer))
            g->bufs[k++] = g->bufs[i];
    }
    g->nbufs = k;
    free(passed);
}

bool drv_constcache_use(drv_constcache *cc, ir_module *m, rt_weight_set *ws)
{
    if (!cc->path || m->graph.nloads == 0)
        return false;
    ir_phase_push("consts cache");
    rt_weight_set mine = {0};
    int lock = hold_folder(cc->path);   /* until the data file is mapped */
    bool ok = read_consts(cc, &mine);
    cg_cache_release(lock);
    if (ok && !consts_complete(m, &mine)) {
        csay(cc, "entry %s does not have the program's consts; not used%s", cc->path, "");
        ok = false;
    }
    /* the consts handed to ws, which the run takes its params from */
    for (size_t i = 0; ok && i < mine.cap; i++) {
        if (!mine.names[i] || !mine.tensors[i])
            continue;
        rt_tensor *t = mine.tensors[i];
        mine.tensors[i] = NULL;
        ok = rt_weight_set_put(ws, mine.names[i], t);
    }
    rt_weight_set_free(&mine);
    if (ok) {
        ir_graph *g = &m->graph;
        for (int i = 0; i < g->nbufs; i++)
            if (g->bufs[i]->role == IR_BUF_CONST)
                g->bufs[i]->role = IR_BUF_PARAM;
        g->nloads = 0;
        drop_unpassed_params(g);
        cc->hit = true;
        cg_cache_touch(cc->path);   /* its data file keeps its identity */
        csay(cc, "hit: %s%s", cc->path, "");
    }
    ir_phase_pop();
    return ok;
}

void drv_constcache_store(drv_constcache *cc, const ir_module *m, rt_run *run)
{
    const ir_graph *g = &m->graph;
    if (!cc->path || cc->hit || g->nloads == 0 || run->nbufs != g->nbufs)
        return;
    ir_phase_push("consts cache");
    char **names = calloc((size_t)g->nbufs + 1, sizeof *names);
    rt_tensor **tensors = calloc((size_t)g->nbufs + 1, sizeof *tensors);
    size_t n = 0, size = 0;
    bool ok = names && tensors;
    for (int i = 0; ok && i < g->nbufs; i++) {
        if (g->bufs[i]->role != IR_BUF_CONST)
            continue;
        ok = run->bufs[i] != NULL;
        names[n] = (char *)g->bufs[i]->name;
        tensors[n++] = run->bufs[i];
    }
    /* a view of the run's consts: the set owns nothing */
    rt_weight_set view = {names, tensors, n, n};
    char *tab = NULL, *body = NULL, ident[IDENTITY_MAX];
    size_t tabn = 0, bodyn = 0;
    const char *why = "out of memory";
    ok = ok && store_tensors(cc->data_path, &view, true, &tab, &tabn, &size, ident, &why);
    FILE *b = ok ? open_memstream(&body, &bodyn) : NULL;
    ok = b && fputs(CONSTS_MAGIC, b) >= 0 && put_field(b, "key", cc->key, 64) &&
         put_field(b, "consts", tab, tabn) && put_field(b, "data-file", ident, strlen(ident));
    if (b && fclose(b) != 0)
        ok = false;
    if (ok && cc->verbose)
        fprintf(stderr, "tec: consts cache: %zu consts, %zu bytes in %s\n", n, size,
                cc->data_path);
    if (ok && write_entry("consts cache", cc->verbose, cc->path, body, bodyn))
        trim_folder(cc->path, cc->verbose);
    else if (!ok)
        csay(cc, "no entry written for %s: %s", cc->path, why);
    free(names);
    free(tensors);
    free(tab);
    free(body);
    ir_phase_pop();
}

void drv_constcache_free(drv_constcache *cc)
{
    if (cc->held)
        pending_finish(cc->held);
    free(cc->path);
    free(cc->data_path);
    *cc = (drv_constcache){0};
}
