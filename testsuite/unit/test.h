/* testsuite/unit/test.h — the checks every unit test uses.
 *
 *   CHECK(cond);                       FAIL file:line: cond  when it is false
 *   check(ok, "what %d", n);           one line: "ok - what 3" or "FAIL - what 3"
 *   return test_exit("test_name");     prints the verdict; 1 if a check failed
 *
 * Groups of value checks print one line a group, and one line per check
 * that fails (what was got and what was expected):
 *
 *   group_begin("name");  check_i("what", got, want);  check_d, check_s,
 *   check_b ...;  group_end();          "ok   name" or "FAIL name"
 *
 * Include it once, in the test's one .c file (its functions are static). */
#ifndef TEC_TEST_H
#define TEC_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

__attribute__((unused)) static int failures;   /* checks that failed so far */
__attribute__((unused)) static int passes;     /* check()s that held */

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);        \
            failures++;                                                    \
        }                                                                  \
    } while (0)

__attribute__((format(printf, 2, 3), unused))
static void check(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s - ", ok ? "ok" : "FAIL");
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    if (ok)
        passes++;
    else
        failures++;
}

/* ---------------------------------------------------------------- groups */

__attribute__((unused)) static const char *group_name;   /* the group being checked */
__attribute__((unused)) static int group_fail;           /* its checks that failed */

__attribute__((unused)) static void group_begin(const char *name)
{
    group_name = name;
    group_fail = 0;
}

/* One line for the group; it counts as one check. */
__attribute__((unused)) static void group_end(void)
{
    if (group_fail)
        failures++, printf("FAIL %s\n", group_name);
    else
        passes++, printf("ok   %s\n", group_name);
}

__attribute__((unused)) static void check_i(const char *what, int64_t got, int64_t want)
{
    if (got != want) {
        group_fail++;
        printf("  %s: %s = %" PRId64 ", expected %" PRId64 "\n", group_name, what, got, want);
    }
}

/* Equal to a relative 1e-9 (at least 1e-9 absolute). */
__attribute__((unused)) static void check_d(const char *what, double got, double want)
{
    if (fabs(got - want) > 1e-9 * fmax(1.0, fabs(want))) {
        group_fail++;
        printf("  %s: %s = %.12g, expected %.12g\n", group_name, what, got, want);
    }
}

__attribute__((unused)) static void check_s(const char *what, const char *got, const char *want)
{
    if (!got || strcmp(got, want) != 0) {
        group_fail++;
        printf("  %s: %s =\n    '%s'\n  expected\n    '%s'\n", group_name, what,
               got ? got : "(null)", want);
    }
}

__attribute__((unused)) static void check_b(const char *what, bool ok)
{
    if (!ok) {
        group_fail++;
        printf("  %s: %s does not hold\n", group_name, what);
    }
}

__attribute__((unused))
static int test_exit(const char *name)
{
    printf("%s: %s\n", name, failures ? "FAILED" : "ok");
    return failures != 0;
}

#endif
