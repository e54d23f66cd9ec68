/* runtime/aot.h — ahead-of-time libraries: a compiled network as a C
 * library of its own (tec --emit=lib -o libNAME.so | libNAME.a), with a
 * header NAME.h beside it.  doc/aot.md describes the library's API. */
#ifndef TEC_RT_AOT_H
#define TEC_RT_AOT_H

#include <stdbool.h>

#include "codegen/codegen.h"
#include "runtime/exec.h"

/* Writes m (optimized, without profiling hooks) as the library out_path,
 * which must end in .so (shared) or .a (static) and whose file name, less a
 * leading "lib" and the extension, is a C identifier NAME: its functions
 * are NAME_create, NAME_run ..., and its header is NAME.h in the same
 * directory.  The parameters are embedded: from weights_dir/NAME.npy when
 * weights_dir is given, else the default data.  iface gives the declared
 * shapes of the inputs, outputs and parameters.  False after a diagnostic. */
bool rt_aot_write(const ir_module *m, const rt_iface *iface, const char *out_path,
                  const char *weights_dir, const char *source_name, const cg_options *co,
                  diag *d);

/* The NAME of a library path ("dir/libnet.so" -> "net", malloc'ed), or
 * NULL with the reason in why when the path does not end in .so or .a or
 * NAME is not a C identifier. */
char *rt_aot_library_name(const char *path, char *why, size_t whylen);

#endif
