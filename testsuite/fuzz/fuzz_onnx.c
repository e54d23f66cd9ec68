/* testsuite/fuzz/fuzz_onnx.c — libFuzzer harness: a model file through the
 * ONNX importer and, when it imports, the program it wrote through the .te
 * frontend, which must accept it (a program the importer writes that does
 * not compile is tec's bug: exit status 70), then the verifier.  External
 * data is looked up beside the memory file, under /proc/self/fd, where no
 * data file is: the checks on its location run, the read is refused.
 * Imports find lib/nn.te (TEC_FUZZ_LIB). */
#include "testsuite/fuzz/harness.h"

#include "frontend/frontend.h"
#include "frontend/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd;
    char path[64];
    diag d;
    diag_init(&d, fuzz_null());
    fe_onnx_options oo = {0};
    char *text = fe_onnx_import(fuzz_file(data, size, &fd, path, sizeof path), &oo, &d);
    close(fd);
    if (!text && d.nerrors == 0) {
        fprintf(stderr, "fuzz: the import failed without an error\n");
        abort();
    }
    if (text) {
        const char *lib[] = {TEC_FUZZ_LIB};
        fe_options o = {.include_dirs = lib, .ninclude = 1};
        ir_module *m = fe_compile("fuzz.te", text, strlen(text), &o, &d);
        if (!m) {
            fprintf(stderr, "fuzz: the imported program does not compile:\n%s\n", text);
            abort();
        }
        ir_verify(m, "frontend", &d);
        ir_module_free(m);
    }
    fuzz_check(&d, "the ONNX importer");
    diag_fini(&d);
    free(text);
    return 0;
}
