/* testsuite/unit/test_mapped_weights.c — what the import cache's mapped
 * weights rely on (driver/runcache.c, "import cache: the weights"): a
 * tensor of RT_ZALLOC_MAP bytes or more whose data is pages of a mapping
 * the caller made is freed by rt_tensor_free by unmapping exactly those
 * pages (its bytes rounded up to whole pages), and nothing around them. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime/tensor.h"
#include "test.h"

/* Whether the page at p is mapped. */
static bool mapped(void *p)
{
    unsigned char v;
    return mincore(p, 1, &v) == 0;
}

int main(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t nbytes = RT_ZALLOC_MAP + 100, pages = (nbytes + page - 1) / page;
    /* a page before, the tensor's pages, a page after */
    unsigned char *map = mmap(NULL, (pages + 2) * page, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED);
    if (map == MAP_FAILED)
        return test_exit("test_mapped_weights");
    rt_tensor *t = calloc(1, sizeof *t);
    CHECK(t != NULL);
    t->dtype = IR_U8;
    t->ndim = 1;
    t->shape[0] = (int64_t)nbytes;
    t->data = map + page;
    t->nbytes = nbytes;
    ((unsigned char *)t->data)[nbytes - 1] = 7;
    rt_tensor_free(t);
    check(mapped(map), "the page before the tensor's stays mapped");
    check(!mapped(map + page) && errno == ENOMEM, "the tensor's first page is unmapped");
    check(!mapped(map + pages * page), "the tensor's last page is unmapped");
    check(mapped(map + (pages + 1) * page), "the page after the tensor's stays mapped");
    munmap(map, page);
    munmap(map + (pages + 1) * page, page);
    return test_exit("test_mapped_weights");
}
