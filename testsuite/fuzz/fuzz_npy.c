/* testsuite/fuzz/fuzz_npy.c — libFuzzer harness: a .npy file through the
 * reader, and a tensor it accepts through the writer and back. */
#include "testsuite/fuzz/harness.h"

#include "runtime/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    char path[64], err[512];
    rt_tensor *t = rt_npy_read(fuzz_file(data, size, &fd, path, sizeof path), err, sizeof err);
    close(fd);
    if (!t)
        return 0;
    char out[] = "/tmp/tec-fuzz-npy-XXXXXX";
    int ofd = mkstemp(out);
    if (ofd < 0)
        abort();
    close(ofd);
    if (t->dtype != IR_BF16) {
        if (!rt_npy_write(out, t, err, sizeof err)) {
            fprintf(stderr, "fuzz: an accepted tensor cannot be written: %s\n", err);
            abort();
        }
        rt_tensor *back = rt_npy_read(out, err, sizeof err);
        if (!back || back->nbytes != t->nbytes || memcmp(back->data, t->data, t->nbytes) != 0) {
            fprintf(stderr, "fuzz: the written tensor does not read back: %s\n", err);
            abort();
        }
        rt_tensor_free(back);
    }
    unlink(out);
    rt_tensor_free(t);
    return 0;
}
