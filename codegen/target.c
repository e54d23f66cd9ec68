/* codegen/target.c — detecting the target machine (see target.h). */
#define _GNU_SOURCE
#include "codegen/target.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int count_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void cg_target_native(cg_target *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "native");
    snprintf(t->march, sizeof t->march, "native");
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        t->vector_bytes = 64;
    else if (__builtin_cpu_supports("avx2"))
        t->vector_bytes = 32;
    else
        t->vector_bytes = 16;
    t->fma = __builtin_cpu_supports("fma");
    t->cores = count_cores();
    t->l1d = 32 << 10;
    t->l2 = 1 << 20;
    t->l3 = 8 << 20;
}

bool cg_target_from_name(const char *name, cg_target *t, diag *d)
{
    static const struct { const char *name; int vector_bytes; bool fma; } known[] = {
        {"x86-64", 16, false}, {"x86-64-v2", 16, false},
        {"x86-64-v3", 32, true}, {"x86-64-v4", 64, true},
    };
    cg_target_native(t);
    if (strcmp(name, "native") == 0)
        return true;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(name, known[i].name) == 0) {
            snprintf(t->name, sizeof t->name, "%s", known[i].name);
            snprintf(t->march, sizeof t->march, "%s", known[i].name);
            t->vector_bytes = known[i].vector_bytes;
            t->fma = known[i].fma;
            return true;
        }
    diag_error(d, diag_noloc(), "unknown target '%s' (known: native, x86-64, x86-64-v2, "
               "x86-64-v3, x86-64-v4)", name);
    return false;
}
