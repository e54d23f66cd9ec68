/* ir/target.h — what the generated code may assume about the machine
 * it runs on: instruction set (the -march value), vector width, core count
 * and cache sizes.  Detected once for this machine (`native`), or named with
 * --target to generate code for another one.  Codegen reads the vector
 * width, the C compiler gets the -march value, the automatic scheduler reads
 * the cache sizes and the core count, and the name and -march value are
 * part of the kernel-cache key (the rest reaches the shared object only
 * through the C source, which is hashed too). */
#ifndef TEC_IR_TARGET_H
#define TEC_IR_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/diag.h"

typedef struct cg_target {
    char name[32];         /* "native", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4" */
    char march[32];        /* the compiler's -march= value ("native" for native) */
    int vector_bytes;      /* widest vector register the code may use: 16, 32 or 64 */
    bool fma;              /* fused multiply-add instructions */
    int cores;             /* processors available to this process (default thread count) */
    int64_t l1d, l2, l3;   /* data cache sizes in bytes: l1d and l2 of one core, l3 the
                              total of the level-3 caches over the processors this process
                              may use (the L2 on a machine without an L3) */
} cg_target;

/* This machine: ISA from cpuid, cores from sched_getaffinity, caches from
 * sysfs (cg_sysfs_caches), else what the C library reports (sysconf), else
 * 32 KiB / 1 MiB / 8 MiB.  Detected once per process.  Never fails. */
void cg_target_native(cg_target *t);

/* A target by name (see the list above); false with an error naming the
 * accepted names.  Named targets keep this machine's cores and caches. */
bool cg_target_from_name(const char *name, cg_target *t, diag *d);

/* Whether code built for t can run on this machine (native always can;
 * x86-64-vN needs the instruction sets of its level).  When it cannot,
 * `missing` receives what this machine lacks ("avx512f avx512bw ..."). */
bool cg_target_runs_here(const cg_target *t, char *missing, size_t len);

/* Vector lanes of an element of `bytes` bytes (>= 1). */
static inline int cg_target_lanes(const cg_target *t, int bytes)
{
    int n = t && t->vector_bytes > 0 ? t->vector_bytes / bytes : 16 / bytes;
    return n > 0 ? n : 1;
}

/* The caches the kernel describes in /sys/devices/system/cpu/cpuN/cache/
 * indexI/{level,type,size,shared_cpu_list}; 0 for what it does not list.
 * Per-core values are CPU 0's (or, if sysfs has nothing for CPU 0, those
 * of the first processor this process may use).  The environment variable
 * TEC_SYSFS_CPU names another directory to read instead of
 * /sys/devices/system/cpu (for tests). */
typedef struct cg_caches {
    int64_t l1d;        /* level-1 data (or unified) cache of one core, bytes */
    int64_t l2;         /* level-2 cache of one core */
    int64_t l3;         /* level 3: the sum of its distinct instances over the
                           processors this process may use */
    int64_t llc;        /* the highest-level cache of one core: one instance */
    int llc_level;      /* its level (0: sysfs lists no cache) */
} cg_caches;
void cg_sysfs_caches(cg_caches *c);

/* ---------------------------------------------------------------- unrolling */

/* The most iterations of a loop marked `unrolled` (with constant bounds)
 * that the C emitter writes out as copies of its body; a longer one gets
 * the C compiler's unroll pragma.  The schedule language counts the copies
 * a step would make with the same limit. */
#define CG_UNROLL_COPIES 64

/* ---------------------------------------------------------------- threads */

/* Most threads a parallel loop may be given (--threads, TEC_NUM_THREADS). */
#define CG_MAX_THREADS 1024

/* The thread count of parallel loops: `arg` (the --threads value) when not
 * NULL, else $TEC_NUM_THREADS when set and not empty, else t->cores (1
 * without a target; at most CG_MAX_THREADS).  *source says which ("--threads",
 * "TEC_NUM_THREADS" or "cores").  A value that is not a whole number from 1
 * to CG_MAX_THREADS is refused: false, with a message naming where it came
 * from in err, e.g.
 *     --threads expects a count from 1 to 1024, got '0'
 *     TEC_NUM_THREADS (environment) expects a count from 1 to 1024, got 'abc' */
bool cg_resolve_threads(const char *arg, const cg_target *t, int *threads, const char **source,
                        char *err, size_t errlen);

/* ---------------------------------------------------------------- printing */

/* One line: "native (-march=native), 512-bit vectors, fma, 8 cores, L1d
 * 32 KiB and L2 1 MiB per core, L3 32 MiB". */
void cg_target_describe(const cg_target *t, char *buf, size_t len);

/* The target as "key: value" lines (tec --print-target): target, march,
 * vector-bits, fma, cores, l1d, l2, l3 ("32768 bytes (32 KiB) per core"),
 * runs-here ("yes", or "no (lacks avx512f ...)"). */
void cg_target_print(FILE *out, const cg_target *t);

#endif
