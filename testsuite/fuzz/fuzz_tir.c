/* testsuite/fuzz/fuzz_tir.c — libFuzzer harness: a .tir module through the
 * parser and the verifier; a module that passes must print and parse back
 * to the same text (doc/ir.md), and survive the -O1 passes. */
#include "testsuite/fuzz/harness.h"

#include "ir/ir.h"
#include "passes/passes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The module's text (malloc'ed). */
static char *print(const ir_module *m, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        abort();
    ir_print_module(f, m);
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    diag d;
    diag_init(&d, fuzz_null());
    ir_module *m = ir_parse("fuzz.tir", text, size, &d);
    if (m && ir_verify_input(m, "fuzz.tir", &d)) {
        size_t n1, n2;
        char *once = print(m, &n1);
        ir_module *again = ir_parse("printed.tir", once, n1, &d);
        if (!again) {
            fprintf(stderr, "fuzz: the printed module does not parse:\n%s", once);
            abort();
        }
        char *twice = print(again, &n2);
        if (n1 != n2 || memcmp(once, twice, n1) != 0) {
            fprintf(stderr, "fuzz: printing is not a fixed point:\n%s\n---\n%s", once, twice);
            abort();
        }
        free(once);
        free(twice);
        ir_module_free(again);
        pass_run_pipeline(m, pass_pipeline(1), NULL, &d);
    }
    if (m)
        ir_module_free(m);
    fuzz_check(&d, "the .tir parser");
    diag_fini(&d);
    free(text);
    return 0;
}
