/* testsuite/unit/test.h — the checks every unit test uses.
 *
 *   CHECK(cond);                       FAIL file:line: cond  when it is false
 *   check(ok, "what %d", n);           one line: "ok - what 3" or "FAIL - what 3"
 *   return test_exit("test_name");     prints the verdict; 1 if a check failed
 *
 * Include it once, in the test's one .c file (its functions are static). */
#ifndef TEC_TEST_H
#define TEC_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int failures;   /* checks that failed so far */

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
    if (!ok)
        failures++;
}

__attribute__((unused))
static int test_exit(const char *name)
{
    printf("%s: %s\n", name, failures ? "FAILED" : "ok");
    return failures != 0;
}

#endif
