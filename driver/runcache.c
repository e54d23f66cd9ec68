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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "codegen/sha256.h"
#include "ir/path.h"
#include "ir/phase.h"

#define ENTRY_MAGIC "tec run cache v1\n"
/* The symbol every kernel-cache shared object defines: the key it was
 * built for, which is also its file name (KEY.so). */
#define SO_KEY_SYMBOL "tec_cache_key"

bool drv_runcache_applies(const options *o)
{
    return o->emit == EMIT_RUN && !o->interp && !o->no_run && !o->no_cache &&
           !(o->accel_on && !o->profile) && !o->dump_ir && !o->dump_dir &&
           !o->dump_schedule && !o->verify_each;
}

static void say(const drv_runcache *rc, const char *fmt, const char *a, const char *b)
{
    if (!rc->verbose)
        return;
    fprintf(stderr, "tec: run cache: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
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
                      const char *text, size_t len, const ir_module *pre,
                      const cg_options *co)
{
    rc->path = NULL;
    rc->verbose = o->verbose;
    ir_phase_push("run cache key");
    char *dir = run_dir(co, o->verbose);
    char *pre_text = dir ? ir_module_to_string(pre) : NULL;
    if (!pre_text) {
        free(dir);
        ir_phase_pop();
        return false;
    }
    cg_sha256_ctx s;
    cg_sha256_init(&s);
    cg_sha256_update(&s, ENTRY_MAGIC, strlen(ENTRY_MAGIC));
    put_tec(&s);
    put_str(&s, "name", display);
    put(&s, "text", text, len);
    put(&s, "frontend-module", pre_text, strlen(pre_text));
    free(pre_text);
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

static void *so_handle;   /* the shared object found by the last lookup */

bool drv_runcache_lookup(drv_runcache *rc, ir_module **m, ir_module **em, char **so_path)
{
    *m = *em = NULL;
    *so_path = NULL;
    if (!rc->path)
        return false;
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
    bool damaged = true;
    if ((buf = read_all(rc->path, &len)) && len > 72 + strlen(ENTRY_MAGIC) &&
        memcmp(buf, ENTRY_MAGIC, strlen(ENTRY_MAGIC)) == 0 &&
        memcmp(buf + len - 72, "sha256 ", 7) == 0 && buf[len - 1] == '\n') {
        char hex[65];
        cg_sha256_hex(buf, len - 72, hex);
        if (memcmp(hex, buf + len - 65, 64) == 0) {
            const char *p = buf + strlen(ENTRY_MAGIC), *end = buf + len - 72;
            const char *key, *so, *mt, *et;
            size_t kn, sn, mn, en;
            if (field(&p, end, "key", &key, &kn) && kn == 64 && memcmp(key, rc->key, 64) == 0 &&
                field(&p, end, "so", &so, &sn) && field(&p, end, "module", &mt, &mn) &&
                field(&p, end, "emitted", &et, &en) && p == end) {
                damaged = false;
                char *sop = strndup(so, sn);
                void *h = NULL;
                if (!sop || (why = so_problem(sop, &h))) {
                    say(rc, "the kernels %s %s; compiling", sop ? sop : "?", why ? why : "");
                    free(sop);
                } else if (!(*m = parse_module(mt, mn)) || !(*em = parse_module(et, en))) {
                    damaged = true;
                    free(sop);
                    dlclose(h);
                } else {
                    *so_path = sop;
                    if (so_handle)
                        dlclose(so_handle);
                    so_handle = h;
                }
            }
        }
    }
    free(buf);
    if (damaged) {
        say(rc, "entry %s is damaged; removing it%s", rc->path, "");
        unlink(rc->path);
    }
    if (!*so_path) {
        ir_module_free(*m);
        ir_module_free(*em);
        *m = *em = NULL;
        ir_phase_pop();
        return false;
    }
    say(rc, "hit: %s%s", rc->path, "");
    if (rc->verbose)   /* the kernels are the kernel cache's, checked as it checks them */
        fprintf(stderr, "tec: kernel cache hit: %s\n", *so_path);
    ir_phase_note("from the cache");
    ir_phase_pop();
    return true;
}

/* ------------------------------------------------------------------ store */

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

void drv_runcache_store(drv_runcache *rc, const ir_module *m, const ir_module *em,
                        const char *so_path)
{
    if (!rc->path || !so_path)
        return;
    void *h = NULL;
    const char *why = so_problem(so_path, &h);
    if (why) {
        say(rc, "no entry written: the kernels %s %s", so_path, why);
        return;
    }
    dlclose(h);
    ir_phase_push("run cache");
    char *mt = faithful_text(m), *et = mt ? faithful_text(em) : NULL;
    char *body = NULL;
    size_t blen = 0;
    FILE *f = (mt && et) ? open_memstream(&body, &blen) : NULL;
    bool ok = f && fputs(ENTRY_MAGIC, f) >= 0 && put_field(f, "key", rc->key, 64) &&
              put_field(f, "so", so_path, strlen(so_path)) &&
              put_field(f, "module", mt, strlen(mt)) && put_field(f, "emitted", et, strlen(et));
    if (f && fclose(f) != 0)
        ok = false;
    free(mt);
    free(et);
    if (!ok) {
        say(rc, "no entry written for %s: %s", rc->path,
            f ? "out of memory" : "a module does not print back to the same text");
        free(body);
        ir_phase_pop();
        return;
    }
    char hex[65];
    cg_sha256_hex(body, blen, hex);
    size_t tn = strlen(rc->path) + 32;
    char *tmp = malloc(tn);
    int fd = -1;
    if (tmp) {
        snprintf(tmp, tn, "%s.tmp.%ld", rc->path, (long)getpid());
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    ok = out && fwrite(body, 1, blen, out) == blen && fprintf(out, "sha256 %s\n", hex) > 0;
    if (out)
        ok = fclose(out) == 0 && ok;
    else if (fd >= 0)
        close(fd);
    if (ok && rename(tmp, rc->path) != 0)
        ok = false;
    if (!ok && tmp) {
        unlink(tmp);
        say(rc, "cannot write %s: %s", rc->path, strerror(errno));
    } else if (ok) {
        say(rc, "entry written: %s%s", rc->path, "");
    }
    free(tmp);
    free(body);
    ir_phase_pop();
}

void drv_runcache_free(drv_runcache *rc)
{
    free(rc->path);
    rc->path = NULL;
    if (so_handle) {
        dlclose(so_handle);
        so_handle = NULL;
    }
}
