/* codegen/target.h — what the generated code may assume about the machine
 * it runs on: instruction set (the -march value), vector width, core count
 * and cache sizes.  Detected once for this machine (`native`), or named with
 * --target to generate code for another one.  Codegen reads the vector
 * width, the C compiler gets the -march value, the automatic scheduler reads
 * the cache sizes and the core count, and everything here is part of the
 * kernel-cache key. */
#ifndef TEC_CG_TARGET_H
#define TEC_CG_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/diag.h"

typedef struct cg_target {
    char name[32];         /* "native", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4" */
    char march[32];        /* the compiler's -march= value ("native" for native) */
    int vector_bytes;      /* widest vector register the code may use: 16, 32 or 64 */
    bool fma;              /* fused multiply-add instructions */
    int cores;             /* processors available to this process (default thread count) */
    int64_t l1d, l2, l3;   /* data cache sizes in bytes (l1d and l2 per core) */
} cg_target;

/* This machine: ISA from cpuid, cores from sched_getaffinity, caches from
 * sysfs (with conservative defaults where unreadable).  Never fails. */
void cg_target_native(cg_target *t);

/* A target by name (see the list above); false with an error naming the
 * accepted names.  Named targets keep this machine's cores and caches. */
bool cg_target_from_name(const char *name, cg_target *t, diag *d);

/* Vector lanes of an element of `bytes` bytes (>= 1). */
static inline int cg_target_lanes(const cg_target *t, int bytes)
{
    int n = t && t->vector_bytes > 0 ? t->vector_bytes / bytes : 16 / bytes;
    return n > 0 ? n : 1;
}

#endif
