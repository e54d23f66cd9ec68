/* ir/target.c — detecting the target machine (see target.h).
 *
 * Caches come from the kernel's description in sysfs, which is what the
 * machine really has even inside a virtual machine (sysconf derives them
 * from cpuid, which some hypervisors pass through from the host: a guest
 * was seen reporting the host's whole 384 MiB L3 where its kernel said
 * 32 MiB).  sysconf and fixed sizes are only fallbacks. */
#define _GNU_SOURCE
#include "ir/target.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#define CG_X86 1
#endif

/* ---------------------------------------------------------------- processors */

/* The processors this process may run on (sched_getaffinity) as a
 * CPU_ALLOC'ed set of *size bytes covering CPUs 0..*ncpus-1, or NULL.  The
 * set grows until the kernel accepts it (machines with more than 1024
 * CPUs). */
static cpu_set_t *allowed_cpus(int *ncpus, size_t *size)
{
    for (int n = 1024; n <= (1 << 20); n *= 2) {
        cpu_set_t *s = CPU_ALLOC(n);
        if (!s)
            return NULL;
        size_t sz = CPU_ALLOC_SIZE(n);
        CPU_ZERO_S(sz, s);
        if (sched_getaffinity(0, sz, s) == 0) {
            *ncpus = (int)(sz * 8);
            *size = sz;
            return s;
        }
        int err = errno;
        CPU_FREE(s);
        if (err != EINVAL)
            return NULL;
    }
    return NULL;
}

static int count_cores(void)
{
    int ncpus;
    size_t size;
    cpu_set_t *s = allowed_cpus(&ncpus, &size);
    int n = s ? CPU_COUNT_S(size, s) : 0;
    if (s)
        CPU_FREE(s);
    if (n > 0)
        return n;
    long k = sysconf(_SC_NPROCESSORS_ONLN);
    return k > 0 ? (int)(k < 1 << 20 ? k : 1 << 20) : 1;
}

/* ---------------------------------------------------------------- caches from sysfs */

static const char *sysfs_cpu_dir(void)
{
    const char *e = getenv("TEC_SYSFS_CPU");
    return e && *e ? e : "/sys/devices/system/cpu";
}

/* The first line of a small file without its newline; false when the file
 * cannot be read or the line is empty. */
static bool read_first_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    return buf[0] != '\0';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* "32K", "1024K", "8M", "1G" or a plain number of bytes; 0 if malformed. */
static int64_t parse_size(const char *s)
{
    if (!is_digit(*s))
        return 0;
    int64_t v = 0;
    for (; is_digit(*s); s++) {
        if (v > (INT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (*s - '0');
    }
    int shift = 0;
    switch (*s) {
    case 'K': case 'k': shift = 10; s++; break;
    case 'M': case 'm': shift = 20; s++; break;
    case 'G': case 'g': shift = 30; s++; break;
    default: break;
    }
    if (*s != '\0' || v > (INT64_MAX >> shift))
        return 0;
    return v << shift;
}

/* Adds the processors of a list such as "0-3,8,10-11" to set; false if
 * the list is malformed. */
static bool parse_cpu_list(const char *s, cpu_set_t *set, size_t size, int ncpus)
{
    while (*s) {
        if (!is_digit(*s))
            return false;
        char *end;
        long a = strtol(s, &end, 10), b = a;
        s = end;
        if (*s == '-') {
            if (!is_digit(*++s))
                return false;
            b = strtol(s, &end, 10);
            s = end;
        }
        if (b < a)
            return false;
        for (long c = a; c <= b && c < ncpus; c++)
            CPU_SET_S((size_t)c, size, set);
        if (*s == ',')
            s++;
        else if (*s)
            return false;
    }
    return true;
}

/* Longest shared_cpu_list kept ("0,2,4,..." of a large machine). */
#define SHARED_LEN 16384

/* What sysfs lists for processor `cpu`: false when it lists no cache.
 * l3_shared (SHARED_LEN bytes) receives the shared_cpu_list of its level-3
 * cache, or "" when there is none or it cannot be read. */
static bool scan_cpu(const char *dir, int cpu, cg_caches *c, char *l3_shared)
{
    memset(c, 0, sizeof *c);
    l3_shared[0] = '\0';
    bool any = false;
    for (int i = 0; i < 16; i++) {
        char path[4200], buf[64], type[32];
        int n = snprintf(path, sizeof path, "%s/cpu%d/cache/index%d/", dir, cpu, i);
        if (n < 0 || (size_t)n + 32 > sizeof path)
            return false;
        char *leaf = path + n;
        strcpy(leaf, "level");
        if (!read_first_line(path, buf, sizeof buf))
            continue;
        int level = atoi(buf);
        strcpy(leaf, "type");
        if (!read_first_line(path, type, sizeof type))
            snprintf(type, sizeof type, "Unified");
        strcpy(leaf, "size");
        int64_t size = read_first_line(path, buf, sizeof buf) ? parse_size(buf) : 0;
        if (level < 1 || size <= 0 || strcmp(type, "Instruction") == 0)
            continue;
        any = true;
        if (level == 1 && !c->l1d)
            c->l1d = size;
        else if (level == 2 && !c->l2)
            c->l2 = size;
        else if (level == 3 && !c->l3) {
            c->l3 = size;
            strcpy(leaf, "shared_cpu_list");
            if (!read_first_line(path, l3_shared, SHARED_LEN))
                l3_shared[0] = '\0';
        }
        if (level > c->llc_level) {
            c->llc_level = level;
            c->llc = size;
        }
    }
    return any;
}

void cg_sysfs_caches(cg_caches *out)
{
    memset(out, 0, sizeof *out);
    const char *dir = sysfs_cpu_dir();
    int ncpus = 0;
    size_t size = 0;
    cpu_set_t *allowed = allowed_cpus(&ncpus, &size);
    cpu_set_t *covered = allowed ? CPU_ALLOC(ncpus) : NULL;
    char *shared = malloc(SHARED_LEN);
    if (!shared)
        goto done;
    bool found = scan_cpu(dir, 0, out, shared);
    for (int c = 1; !found && allowed && c < ncpus; c++)
        if (CPU_ISSET_S((size_t)c, size, allowed)) {
            found = scan_cpu(dir, c, out, shared);
            break;
        }
    if (!found || !out->l3 || !covered)
        goto done;
    /* The level-3 total: each distinct instance (a shared_cpu_list) that
     * serves a processor of ours, once.  Without readable lists the total
     * is unknown and one instance is what we report. */
    CPU_ZERO_S(size, covered);
    int64_t total = 0;
    for (int c = 0; c < ncpus; c++) {
        if (!CPU_ISSET_S((size_t)c, size, allowed) || CPU_ISSET_S((size_t)c, size, covered))
            continue;
        cg_caches cc;
        if (!scan_cpu(dir, c, &cc, shared) || !cc.l3)
            continue;
        if (!shared[0] || !parse_cpu_list(shared, covered, size, ncpus) ||
            !CPU_ISSET_S((size_t)c, size, covered) || total > INT64_MAX - cc.l3) {
            total = 0;
            break;
        }
        total += cc.l3;
    }
    if (total > 0)
        out->l3 = total;
done:
    free(shared);
    if (covered)
        CPU_FREE(covered);
    if (allowed)
        CPU_FREE(allowed);
}

/* ---------------------------------------------------------------- this machine */

static int64_t sysconf_size(int name)
{
    long v = sysconf(name);
    return v > 0 ? (int64_t)v : 0;
}

static cg_target native_target;
static pthread_once_t native_once = PTHREAD_ONCE_INIT;

static void detect_native(void)
{
    cg_target *t = &native_target;
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "native");
    snprintf(t->march, sizeof t->march, "native");
#ifdef CG_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        t->vector_bytes = 64;
    else if (__builtin_cpu_supports("avx2"))
        t->vector_bytes = 32;
    else
        t->vector_bytes = 16;
    t->fma = __builtin_cpu_supports("fma");
#else
    t->vector_bytes = 16;
#if defined(__aarch64__)
    t->fma = true;
#endif
#endif
    t->cores = count_cores();

    cg_caches c;
    cg_sysfs_caches(&c);
    int64_t s1 = 0, s2 = 0, s3 = 0;
#ifdef _SC_LEVEL1_DCACHE_SIZE
    s1 = sysconf_size(_SC_LEVEL1_DCACHE_SIZE);
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
    s2 = sysconf_size(_SC_LEVEL2_CACHE_SIZE);
#endif
#ifdef _SC_LEVEL3_CACHE_SIZE
    s3 = sysconf_size(_SC_LEVEL3_CACHE_SIZE);
#endif
    t->l1d = c.l1d ? c.l1d : s1 ? s1 : INT64_C(32) << 10;
    t->l2 = c.l2 ? c.l2 : s2 ? s2 : INT64_C(1) << 20;
    if (c.l3)
        t->l3 = c.l3;
    else if (c.llc_level > 0 || (!s3 && s2))
        t->l3 = t->l2;      /* the caches are known, and there is no level 3 */
    else
        t->l3 = s3 ? s3 : INT64_C(8) << 20;
}

void cg_target_native(cg_target *t)
{
    pthread_once(&native_once, detect_native);
    *t = native_target;
}

/* ---------------------------------------------------------------- named targets */

/* The x86-64 micro-architecture levels of the psABI. */
static const struct cg_named {
    const char *name;
    int level;
    int vector_bytes;
    bool fma;
} named[] = {
    {"x86-64", 1, 16, false}, {"x86-64-v2", 2, 16, false},
    {"x86-64-v3", 3, 32, true}, {"x86-64-v4", 4, 64, true},
};

bool cg_target_from_name(const char *name, cg_target *t, diag *d)
{
    cg_target_native(t);
    if (strcmp(name, "native") == 0)
        return true;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strcmp(name, named[i].name) == 0) {
            snprintf(t->name, sizeof t->name, "%s", named[i].name);
            snprintf(t->march, sizeof t->march, "%s", named[i].name);
            t->vector_bytes = named[i].vector_bytes;
            t->fma = named[i].fma;
            return true;
        }
    diag_error(d, diag_noloc(), "unknown target '%s' (known: native, x86-64, x86-64-v2, "
               "x86-64-v3, x86-64-v4)", name);
    return false;
}

static void append_word(char *buf, size_t len, const char *w)
{
    size_t n = strlen(buf);
    if (n < len)
        snprintf(buf + n, len - n, "%s%s", n ? " " : "", w);
}

bool cg_target_runs_here(const cg_target *t, char *missing, size_t len)
{
    if (len)
        missing[0] = '\0';
    int level = 0;
    for (size_t i = 0; t && i < sizeof named / sizeof named[0]; i++)
        if (strcmp(t->name, named[i].name) == 0)
            level = named[i].level;
    if (level == 0)
        return true;        /* native (or a target tec does not know the needs of) */
#if defined(__x86_64__)
    /* The features of each level that every compiler's
     * __builtin_cpu_supports knows (a processor with these has the rest of
     * its level: cx16, lzcnt, movbe, f16c ...). */
    __builtin_cpu_init();
    const struct { int level; const char *name; bool have; } f[] = {
        {2, "popcnt", __builtin_cpu_supports("popcnt")},
        {2, "sse3", __builtin_cpu_supports("sse3")},
        {2, "ssse3", __builtin_cpu_supports("ssse3")},
        {2, "sse4.1", __builtin_cpu_supports("sse4.1")},
        {2, "sse4.2", __builtin_cpu_supports("sse4.2")},
        {3, "avx", __builtin_cpu_supports("avx")},
        {3, "avx2", __builtin_cpu_supports("avx2")},
        {3, "bmi", __builtin_cpu_supports("bmi")},
        {3, "bmi2", __builtin_cpu_supports("bmi2")},
        {3, "fma", __builtin_cpu_supports("fma")},
        {4, "avx512f", __builtin_cpu_supports("avx512f")},
        {4, "avx512bw", __builtin_cpu_supports("avx512bw")},
        {4, "avx512cd", __builtin_cpu_supports("avx512cd")},
        {4, "avx512dq", __builtin_cpu_supports("avx512dq")},
        {4, "avx512vl", __builtin_cpu_supports("avx512vl")},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].level <= level && !f[i].have) {
            ok = false;
            if (len)
                append_word(missing, len, f[i].name);
        }
    return ok;
#else
    if (len)
        snprintf(missing, len, "an x86-64 processor");
    return false;
#endif
}

/* ---------------------------------------------------------------- threads */

/* A whole number from 1 to CG_MAX_THREADS, digits only. */
static bool parse_threads(const char *s, int *n)
{
    long v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (!is_digit(*s))
            return false;
        v = v * 10 + (*s - '0');
        if (v > CG_MAX_THREADS)
            return false;
    }
    if (v < 1)
        return false;
    *n = (int)v;
    return true;
}

bool cg_resolve_threads(const char *arg, const cg_target *t, int *threads, const char **source,
                        char *err, size_t errlen)
{
    const char *env = getenv("TEC_NUM_THREADS");
    if (arg) {
        *source = "--threads";
        if (parse_threads(arg, threads))
            return true;
        snprintf(err, errlen, "--threads expects a count from 1 to %d, got '%s'", CG_MAX_THREADS,
                 arg);
        return false;
    }
    if (env && *env) {
        *source = "TEC_NUM_THREADS";
        if (parse_threads(env, threads))
            return true;
        snprintf(err, errlen, "the environment variable TEC_NUM_THREADS expects a count from 1 "
                 "to %d, got '%s'", CG_MAX_THREADS, env);
        return false;
    }
    *source = "cores";
    int n = t ? t->cores : 1;
    *threads = n < 1 ? 1 : n > CG_MAX_THREADS ? CG_MAX_THREADS : n;
    return true;
}

/* ---------------------------------------------------------------- printing */

/* "32 KiB", "1 MiB", "1280 KiB", "100 bytes". */
static void format_size(int64_t b, char *buf, size_t len)
{
    if (b > 0 && b % (INT64_C(1) << 30) == 0)
        snprintf(buf, len, "%lld GiB", (long long)(b >> 30));
    else if (b > 0 && b % (INT64_C(1) << 20) == 0)
        snprintf(buf, len, "%lld MiB", (long long)(b >> 20));
    else if (b > 0 && b % 1024 == 0)
        snprintf(buf, len, "%lld KiB", (long long)(b >> 10));
    else
        snprintf(buf, len, "%lld bytes", (long long)b);
}

void cg_target_describe(const cg_target *t, char *buf, size_t len)
{
    char l1[32], l2[32], l3[32];
    format_size(t->l1d, l1, sizeof l1);
    format_size(t->l2, l2, sizeof l2);
    format_size(t->l3, l3, sizeof l3);
    snprintf(buf, len, "%s (-march=%s), %d-bit vectors, %s, %d core%s, L1d %s and L2 %s per "
             "core, L3 %s", t->name, t->march, t->vector_bytes * 8, t->fma ? "fma" : "no fma",
             t->cores, t->cores == 1 ? "" : "s", l1, l2, l3);
}

void cg_target_print(FILE *out, const cg_target *t)
{
    char s[32], missing[256];
    fprintf(out, "target: %s\n", t->name);
    fprintf(out, "march: %s\n", t->march);
    fprintf(out, "vector-bits: %d\n", t->vector_bytes * 8);
    fprintf(out, "fma: %s\n", t->fma ? "yes" : "no");
    fprintf(out, "cores: %d\n", t->cores);
    format_size(t->l1d, s, sizeof s);
    fprintf(out, "l1d: %lld bytes (%s) per core\n", (long long)t->l1d, s);
    format_size(t->l2, s, sizeof s);
    fprintf(out, "l2: %lld bytes (%s) per core\n", (long long)t->l2, s);
    format_size(t->l3, s, sizeof s);
    fprintf(out, "l3: %lld bytes (%s) in all\n", (long long)t->l3, s);
    if (cg_target_runs_here(t, missing, sizeof missing))
        fprintf(out, "runs-here: yes\n");
    else
        fprintf(out, "runs-here: no (lacks %s)\n", missing);
}
