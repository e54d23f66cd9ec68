/* tec.h — the public C API of libtec.
 *
 * Compile a tensor-expression program (.te) or textual IR (.tir) to the
 * optimized loop IR, print it, and run it (compiled kernels or the IR
 * interpreter) to read its outputs.  Diagnostics go to the FILE given at
 * compile time in the same GNU format the tec command prints. */
#ifndef TEC_H
#define TEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tec_program tec_program;

/* The library's version, e.g. "0.1.0". */
const char *tec_version(void);

/* Compiles `text` (a .te program, or .tir when is_tir is nonzero) at the
 * given -O level.  `filename` names it in diagnostics.  Returns NULL after
 * printing diagnostics to `diagnostics` (stderr when NULL). */
tec_program *tec_compile(const char *filename, const char *text, size_t len,
                         int is_tir, int opt_level, FILE *diagnostics);

/* Prints the program's optimized IR in its textual form. */
void tec_print_ir(const tec_program *p, FILE *out);

/* Runs the program on its default inputs and parameters, compiled to C when
 * `interpret` is 0 (for this machine, -march=native; parallel loops run on
 * $TEC_NUM_THREADS threads, else on every processor the process may use)
 * and with the IR interpreter otherwise.  Returns 0 on success, 1 after
 * printing an error. */
int tec_run(tec_program *p, int interpret);

/* After a successful tec_run: the number of outputs, and output i's name,
 * element count and values converted to double (the pointer stays valid
 * until tec_free). */
int tec_num_outputs(const tec_program *p);
const char *tec_output_name(const tec_program *p, int i);
int64_t tec_output_numel(const tec_program *p, int i);
const double *tec_output_values(tec_program *p, int i);

void tec_free(tec_program *p);

#ifdef __cplusplus
}
#endif
#endif
