/* testsuite/fuzz/fuzz_cfg.c — libFuzzer harness: an accelerator .cfg
 * through the config reader and its checks, and the same bytes as a
 * SCALE-Sim topology CSV. */
#include "testsuite/fuzz/harness.h"

#include "accel/accel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    char path[64], err[512];
    fuzz_file(data, size, &fd, path, sizeof path);
    acc_config c;
    if (acc_config_load(path, false, NULL, &c, err, sizeof err))
        acc_config_check(&c, err, sizeof err);
    acc_layer *layers = NULL;
    int n = 0;
    if (acc_read_topology(path, ACC_TOPO_AUTO, &layers, &n, err, sizeof err))
        acc_layers_free(layers, n);
    close(fd);
    return 0;
}
