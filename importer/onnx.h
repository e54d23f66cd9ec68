/* importer/onnx.h — ONNX models in: an .onnx file becomes a .te program.
 *
 * The importer reads the model with the protobuf-c bindings generated at
 * build time from Debian's onnx.proto, infers every tensor's dtype and
 * shape, and writes a .te program in which each ONNX node is one layer
 * named after the node: a call of a lib/nn.te op where one fits (conv2d,
 * linear, batchnorm, relu, maxpool2d ...), else a call of a small kernel
 * def written for the node.  Initializers become the `param`s of those
 * layers; their contents are written as DIR/<layer>.<param>.npy, so the
 * program runs with `--weights DIR` like any other, or kept in memory (a
 * set a run reads, runtime/weight_set.h).  doc/onnx.md lists the ops, the
 * naming rules and every message.
 */
#ifndef TEC_IMPORTER_ONNX_H
#define TEC_IMPORTER_ONNX_H

#include <stdbool.h>

#include "frontend/frontend.h"
#include "ir/diag.h"
#include "runtime/exec.h"
#include "runtime/weight_set.h"

typedef struct fe_onnx_options {
    /* -D NAME=VALUE: the sizes of the model's dynamic dimensions (an
     * input dimension named NAME); a dimension without one is 1 */
    const fe_define *defines;
    int ndefines;
    /* where the initializers' contents are written (created if missing);
     * NULL writes nothing */
    const char *weights_dir;
    /* --input NAME=FILE.npy: an input of at most 64 elements given a file
     * is also known at import time, so it may be what an op needs to be
     * constant (a shape, axes, pads, a clip bound); the file's shape gives
     * the sizes of the input's dynamic dimensions that -D does not.  NAME
     * is the model's name of the input or the program's; the import
     * renames an entry of the model's name to the program's (an input
     * called `input`, a keyword, is the program's `t_input`). */
    rt_named_path *inputs;
    int ninputs;
} fe_onnx_options;

/* Imports the model at path: returns the malloc'ed text of an equivalent
 * .te program, or NULL after reporting every error through d (as
 * "PATH: error: node 'NAME' (OP, opset N): ...").  The program imports
 * "nn.te". */
char *fe_onnx_import(const char *path, const fe_onnx_options *o, diag *d);
/* The same, keeping the initializers' contents in `weights` too (when not
 * NULL), under the program's parameter names (`layer.role`), for a run to
 * read instead of files (rt_run_options.weights): no .npy is written and
 * read back.  o->weights_dir may be NULL then. */
char *fe_onnx_import_weights(const char *path, const fe_onnx_options *o, rt_weight_set *weights,
                             diag *d);

/* Converts an ONNX TensorProto file (the backend tests' input_0.pb) to a
 * .npy file; false with a message through d. */
bool fe_onnx_pb_to_npy(const char *pb_path, const char *npy_path, diag *d);

#endif
