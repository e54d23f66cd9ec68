/* testsuite/unit/test_tensor.c — rt_zalloc's blocks: zeroed, aligned and
 * writable whatever their size (malloc'ed, mapped, or mapped on huge-page
 * boundaries), and freed with the size they were asked for. */
#include <stdlib.h>

#include "runtime/tensor.h"
#include "testsuite/unit/test.h"

/* Whether the n bytes at p are zero; then writes them all (a page the
 * block lacks would fault here). */
static bool zero_then_write(unsigned char *p, size_t n)
{
    bool zero = true;
    for (size_t i = 0; i < n; i += 4093)
        zero &= p[i] == 0;
    zero &= p[n - 1] == 0;
    memset(p, 0xab, n);
    return zero;
}

int main(void)
{
    const size_t sizes[] = {1, 64, 4096, (1u << 20) - 1, 1u << 20, (2u << 20) - 4096, 2u << 20,
                            (2u << 20) + 1, 5u * 1024 * 1024 + 123, 33u << 20};
    void *blocks[sizeof sizes / sizeof *sizes];
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        unsigned char *p = blocks[k] = rt_zalloc(n);
        check(p != NULL, "rt_zalloc(%zu) gives a block", n);
        if (!p)
            continue;
        check((uintptr_t)p % 64 == 0, "rt_zalloc(%zu) is 64-byte aligned", n);
        check(zero_then_write(p, n), "rt_zalloc(%zu) is zero and writable", n);
    }
    /* freed in another order than allocated; a new block is zero again */
    for (size_t k = sizeof sizes / sizeof *sizes; k-- > 0;)
        if (k % 2)
            rt_zfree(blocks[k], sizes[k]);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        if (k % 2 == 0)
            rt_zfree(blocks[k], sizes[k]);
    unsigned char *again = rt_zalloc(33u << 20);
    check(again && zero_then_write(again, 33u << 20), "a block after frees is zero again");
    rt_zfree(again, 33u << 20);
    rt_zfree(NULL, 1u << 20);
    return test_exit("test_tensor");
}
