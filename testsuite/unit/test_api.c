/* testsuite/unit/test_api.c — libtec's API (tec.h) prints and compiles the
 * IR the C emitter gets: at -O2 tec_print_ir shows the vector IR of the
 * automatically vectorized loops (what `tec --emit=tir` prints), and
 * tec_run's compiled kernels give the interpreter's outputs bit for bit. */
#define _GNU_SOURCE   /* open_memstream */
#include <stdlib.h>

#include "tec.h"
#include "test.h"

/* 1000 elements: vectors of the target's width, narrower ones, a tail. */
static const char src[] = "input a: f32[1000]\n"
                          "b[i] = a[i] * 2 + f32(i)\n"
                          "output b\n";

/* The IR tec_print_ir prints at opt_level (malloc'd), NULL on failure. */
static char *printed_ir(int opt_level)
{
    tec_program *p = tec_compile("api.te", src, sizeof src - 1, 0, opt_level, NULL);
    if (!p)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        tec_print_ir(p, f);
        fclose(f);
    }
    tec_free(p);
    return text;
}

/* b's values, compiled (interpret 0) or interpreted, into out[1000]. */
static bool outputs(int interpret, double *out)
{
    tec_program *p = tec_compile("api.te", src, sizeof src - 1, 0, 2, NULL);
    bool ok = p && tec_run(p, interpret) == 0 && tec_num_outputs(p) == 1 &&
              tec_output_numel(p, 0) == 1000;
    const double *v = ok ? tec_output_values(p, 0) : NULL;
    for (int i = 0; v && i < 1000; i++)
        out[i] = v[i];
    tec_free(p);
    return v != NULL;
}

int main(void)
{
    char *o2 = printed_ir(2), *o0 = printed_ir(0);
    CHECK(o2 && strstr(o2, "ramp(") && strstr(o2, " step "));
    CHECK(o0 && !strstr(o0, "ramp(") && !strstr(o0, " step "));
    free(o2);
    free(o0);

    static double compiled[1000], interpreted[1000];
    CHECK(outputs(0, compiled));
    CHECK(outputs(1, interpreted));
    CHECK(memcmp(compiled, interpreted, sizeof compiled) == 0);
    return test_exit("test_api");
}
