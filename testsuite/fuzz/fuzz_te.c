/* testsuite/fuzz/fuzz_te.c — libFuzzer harness: a .te program through the
 * frontend (parser, elaboration, lowering) and, when it compiles, the
 * verifier and the -O1 passes.  Imports find lib/nn.te (TEC_FUZZ_LIB). */
#include "testsuite/fuzz/harness.h"

#include "frontend/frontend.h"
#include "passes/passes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    diag d;
    diag_init(&d, fuzz_null());
    const char *lib[] = {TEC_FUZZ_LIB};
    fe_options o = {.include_dirs = lib, .ninclude = 1};
    ir_module *m = fe_compile("fuzz.te", text, size, &o, &d);
    if (m) {
        if (ir_verify(m, "frontend", &d))
            pass_run_pipeline(m, pass_pipeline(1), NULL, &d);
        ir_module_free(m);
    }
    fuzz_check(&d, "the .te frontend");
    diag_fini(&d);
    free(text);
    return 0;
}
