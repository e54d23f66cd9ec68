/* importer/impl.h — what the importer's files share: importer/onnx.c (the
 * model, its tensors, the program text and the kernels written for nodes),
 * importer/fold.c (values computed at import time), importer/ops.c (the
 * op files' shared checks and the lookup of an op) and the op files,
 * importer/ops_math.c, ops_shape.c and ops_nn.c (one function per ONNX op,
 * or per family of ops that share a shape, with a table each). */
#ifndef TEC_IMPORTER_IMPL_H
#define TEC_IMPORTER_IMPL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "importer/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "runtime/tensor.h"

/* A growing NUL-terminated string. */
typedef struct ox_str {
    char *s;
    size_t len, cap;
} ox_str;

struct ox_value;

/* A sequence known at import time (ONNX's sequence type; tec's programs
 * have tensors only): its elements, tensor values of one dtype.  The
 * sequence ops build new sequences and read elements as the importer goes,
 * so that no layer holds a sequence; a sequence is never changed once
 * made (several values may share one). */
typedef struct ox_seq {
    struct ox_value **elem;  /* [n] */
    int n;
    ir_dtype dtype;          /* its elements' (SequenceEmpty's when n is 0) */
} ox_seq;

void ox_printf(ox_str *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One tensor of the ONNX graph. */
typedef struct ox_value {
    const char *onnx;        /* its ONNX name */
    char *id;                /* its .te name once a layer or input made it, else NULL */
    ir_dtype dtype;
    int ndim;
    int64_t shape[RT_MAX_DIMS];
    rt_tensor *konst;        /* its contents when known at import time (initializers,
                                Constant, Shape ...), else NULL */
    bool lent;               /* konst belongs to the weight set (a param's contents,
                                handed over rather than copied): not freed here */
    int uses;                /* an initializer's: how many node inputs name it */
    bool weight;             /* an initializer (or a copy or reshape of one): a
                                `param`; other constants are computed from the
                                graph (masks, positions) and are `state` */
    bool declared_bool;      /* a graph input of ONNX's bool (held in i32) */
    int32_t wide_unsigned;   /* ONNX's uint32 or uint64 (its data type), which tec
                                holds in i64; else 0 */
    bool graph_input;        /* an input of the program */
    bool view_of_input;      /* a view of one (an output of it needs a copy) */
    const struct ox_value *view_of;   /* a view: the value (not a view) whose
                                         storage it shares, else NULL */
    const Onnx__NodeProto *producer;   /* the node that computed it, or NULL */
    bool graph_output;       /* already named by an `output` line */
    const struct ox_value *silu_of;   /* a Sigmoid (or HardSigmoid) of this value that
                                         only a Mul by it reads, which is then their one
                                         silu (hardswish) layer: no layer, no id
                                         (ox_silu_pair) */
    const Onnx__NodeProto *quantized_for;   /* a MaxPool's output computed on the codes
                                               of this QuantizeLinear node, which is then
                                               this value itself (ox_pool_quantizer) */
    const struct ox_value *causal_of;   /* a Where that fills these attention scores'
                                           future (j > i of the last two axes) with
                                           -inf and that only a Softmax over the last
                                           axis reads, which is then nn.te's
                                           causal_softmax of them: no layer, no id
                                           (ox_where_softmax) */
    const struct ox_value *scaled_of;   /* this value times `scale`, a power of two,
                                           that only a MatMul reads, which then scales
                                           its product instead (exact: a power of two
                                           commutes with the sums): no layer, no id
                                           (ox_scale_reader) */
    double scale;
    const struct ox_value *pad_of;   /* a constant Pad of this value on its spatial
                                        dimensions that only a Conv or pool reads, which
                                        then pads its window by pad_b, pad_e (per
                                        dimension of this value) instead: no layer,
                                        no id (ox_pad_reader, ox_pad_folds) */
    int64_t pad_b[RT_MAX_DIMS], pad_e[RT_MAX_DIMS];
    bool hard;               /* with silu_of: a HardSigmoid, max(0, min(1, alpha * x +
                                beta)), with these: */
    double alpha, beta;
    const ox_seq *seq;       /* a sequence: its elements (the value has no tensor: no
                                id, no konst), else NULL */
} ox_value;

typedef struct ox ox;

/* The node being imported. */
typedef struct ox_node {
    ox *x;
    const Onnx__NodeProto *n;
    int opset;
    const char *layer;       /* its layer name */
    ox_value **in;           /* [nin]; NULL for an omitted optional input */
    int nin;
    int32_t wide_unsigned;   /* an input's (or a tensor attribute's) ox_value.wide_unsigned */
    bool widen;              /* the op computes on its inputs' values: its kernels
                                read storage dtypes (i8 u8 i16 f16 bf16) widened to
                                their compute dtype and narrow their result back
                                (ox_compute_dtype); else they move, compare and
                                select values in the storage dtype itself */
} ox_node;

/* Whether the node is a Sigmoid whose output only a Mul of its input and
 * it reads (PyTorch's SiLU, x * sigmoid(x)): the Sigmoid then makes no
 * layer, and the Mul is a call of nn.te's silu.  The same for a
 * HardSigmoid (PyTorch's Hardswish as exported at opset 13, x *
 * hardsigmoid(x) with alpha 1/6 and beta 0.5): the Mul is then one
 * elementwise kernel, `hardswish`, that the fuse pass can fold into the
 * layer that computes x. */
bool ox_silu_pair(ox_node *nd);

/* The QuantizeLinear node that is the one reader of the node's output, a
 * MaxPool's (reading it as its input x), or NULL: the MaxPool may then pool
 * the codes that node would make of its input (importer/ops_quant.c). */
const Onnx__NodeProto *ox_pool_quantizer(ox_node *nd);
/* The MatMul that is the one reader of a Div's or Mul's output (as one of
 * its operands), or NULL. */
const Onnx__NodeProto *ox_scale_reader(ox_node *nd);
/* The Softmax that is the one reader of a Where node's output, or NULL. */
const Onnx__NodeProto *ox_where_softmax(ox_node *nd);
/* The Conv, AveragePool or MaxPool that is the one reader of a Pad node's
 * output, reading it as its input X, or NULL. */
const Onnx__NodeProto *ox_pad_reader(ox_node *nd);
/* Whether reader (ox_pad_reader's) computes on a Pad of a computed x by
 * pads (ONNX's: the begins, then the ends) with the constant `value` as
 * exactly, and no slower, when it reads x itself with the pad added to its
 * own (its window reading `value` outside x): then the Pad makes no layer
 * (ox_value.pad_of; ops_nn.c). */
bool ox_pad_folds(ox_node *pad, const Onnx__NodeProto *reader, const ox_value *x,
                  const int64_t *pads, double value);
/* The latest value of the model named name, or NULL (none yet). */
ox_value *ox_value_named(ox_node *nd, const char *name);

/* Reports "node 'NAME' (OP, opset N): MESSAGE"; returns false. */
bool ox_fail(ox_node *nd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Attributes: the value, or def when the node does not have it. */
int64_t ox_attr_int(ox_node *nd, const char *name, int64_t def);
double ox_attr_float(ox_node *nd, const char *name, double def);
const char *ox_attr_str(ox_node *nd, const char *name, const char *def);
/* An INTS attribute: its count (0 when absent) and values. */
int ox_attr_ints(ox_node *nd, const char *name, const int64_t **vals);
const Onnx__AttributeProto *ox_attr(ox_node *nd, const char *name);
/* A tensor attribute's contents (NULL with an error reported). */
rt_tensor *ox_tensor_of(ox_node *nd, const Onnx__TensorProto *t);

/* Input i, which must be present (else an error naming it); NULL after
 * reporting. */
ox_value *ox_input(ox_node *nd, int i);
/* Output i's value, to be given a dtype and shape by the op. */
ox_value *ox_output(ox_node *nd, int i);
int ox_noutputs(ox_node *nd);
/* The integers of a constant input (shapes, axes, pads ...): their count,
 * or -1 after an error (the input is computed at run time). */
int ox_const_ints(ox_node *nd, int i, int64_t *out, int max);
/* The tec dtype of an ONNX TensorProto data type (bool: i32 0/1; uint32
 * and uint64: i64, see ox_value.wide_unsigned), or false when tec has
 * none; OX_DTYPES lists them, for messages. */
bool ox_dtype_of(int32_t onnx_type, ir_dtype *out);
#define OX_DTYPES "float, double, float16, bfloat16, int8, uint8, int16, int32, int64, " \
                  "uint32, uint64 and bool"
/* Whether tec holds ONNX data type t in i64 (uint32, uint64). */
bool ox_wide_unsigned(int32_t onnx_type);
/* "float", "uint8" ... of an ONNX data type. */
const char *ox_onnx_type_name(int32_t onnx_type);
/* The dtype a kernel computes in for values of dtype t: i32 for i8, u8
 * and i16, f32 for f16 and bf16 (the language's storage types), else t. */
ir_dtype ox_compute_dtype(ir_dtype t);
/* Most elements a tensor may have (2^40: 4 TiB of f32). */
#define OX_MAX_NUMEL ((int64_t)1 << 40)

/* The most nodes a graph may have.  Each node that computes makes a layer,
 * at most FE_MAX_CALLS of them (frontend.h); the others (shape arithmetic
 * and constants, folded at import) make none: Swin-S's export has 13,691
 * nodes and makes 1,661 layers.  Import is linear in the nodes: 200,000
 * Shape nodes take 4.6 s and 220 MB. */
#define OX_MAX_NODES 200000

/* The largest window, stride, dilation, pad, block size or repeat count an
 * op takes (larger ones are errors, so that no size computed from them
 * overflows). */
#define OX_ATTR_MAX ((int64_t)1 << 31)

/* The spatial attributes of Conv, the integer convolutions and the pools
 * (strides, dilations, pads, auto_pad) over x's spatial dimensions, for a
 * window of kernel[d] taps, and the output's extents (ceil_mode: pooling's
 * rounding up); false after the node's error (ops_nn.c). */
typedef struct ox_window {
    int nsp;                           /* spatial dimensions */
    int64_t k[RT_MAX_DIMS], s[RT_MAX_DIMS], dil[RT_MAX_DIMS];
    int64_t pb[RT_MAX_DIMS], pe[RT_MAX_DIMS], out[RT_MAX_DIMS];
} ox_window;
bool ox_window_of(ox_node *nd, const ox_value *x, const int64_t *kernel, bool ceil_mode,
                  ox_window *w);
/* Normalizes an axis in [-rank, rank) to [0, rank), or fails. */
bool ox_axis(ox_node *nd, int64_t axis, int rank, int *out);
/* Checks a computed shape: every dimension >= 1, at most RT_MAX_DIMS. */
bool ox_check_shape(ox_node *nd, const int64_t *shape, int ndim);
/* ox_check_shape of a result that is known at import time when known (a
 * value, not a computation: it may have no elements). */
bool ox_check_shape_of(ox_node *nd, const int64_t *shape, int ndim, bool known);

/* A value known at import time, as the node's output i; weight: an
 * initializer's copy (see ox_value). */
bool ox_set_const(ox_node *nd, int i, rt_tensor *t, bool weight);

/* ---------------------------------------------------------------- folding
 * (importer/fold.c) */

/* Most elements of a value computed at import time (2^24: 64 MiB of f32);
 * a ConstantOfShape or Range above it is an error, another op's result a
 * layer. */
#define OX_FOLD_MAX ((int64_t)1 << 24)
/* A node that reads weights is folded only when its inputs have at most
 * this many elements in all (a weight's computation stays a layer). */
#define OX_FOLD_SMALL 4096
/* A new zeroed tensor for a value known at import time, or NULL after an
 * error naming the node (above OX_FOLD_MAX elements, or out of memory). */
rt_tensor *ox_const_new(ox_node *nd, ir_dtype t, int ndim, const int64_t *shape);
/* Computes a node whose inputs are all known (not graph inputs): 1 when
 * its output is now known, 0 when the op is to write its layer, -1 after
 * an error. */
int ox_fold(ox_node *nd);
/* Whether v is known at import time (a graph input given a file is
 * known to ops that need a constant, but is not folded). */
bool ox_known(const ox_value *v);
/* Output out of a node whose inputs are known, as a strided view of x:
 * its element I (of shape[ndim]) is x's element base + sum I[d]*stride[d]
 * (row-major flat indices).  1 folded, 0 not (the op writes its layer),
 * -1 after an error. */
int ox_fold_view(ox_node *nd, int out, const ox_value *x, int ndim, const int64_t *shape,
                 int64_t base, const int64_t *stride);
/* Stores v as element i of t, keeping the dtype's low bits (an integer
 * dtype, as ONNX's arithmetic wraps) or converted (a float dtype). */
void ox_put_int(rt_tensor *t, int64_t i, int64_t v);

/* ---------------------------------------------------------------- kernels
 *
 * A kernel written for a node: a def whose tensor parameters are the
 * node's computed inputs and whose `param`s are its constant inputs, with
 * one output.  Identical defs are written once. */
#define OX_MAX_PARAMS 64

typedef struct ox_kernel {
    ox_node *nd;
    ox_str params;           /* "a: f32[2, 3], b: f32[3]" */
    ox_str args;             /* "x, w" */
    ox_str decls;            /* the `param` and `state` lines */
    ox_str widened;          /* the statements widening storage operands (nd->widen) */
    ox_str body;             /* the op's statements, each "    ...\n" */
    const char *roles[OX_MAX_PARAMS];   /* the param names and their contents */
    const char *reads[OX_MAX_PARAMS];   /* the names the op reads them by */
    rt_tensor *data[OX_MAX_PARAMS];
    int nparams, nargs;
    char *owned[2 * OX_MAX_PARAMS];     /* names made by ox_kernel_role */
    int nowned;
    bool failed;             /* an operand was refused (reported) */
} ox_kernel;
/* A copy of name that lives as long as k (ox_operand keeps its role). */
const char *ox_kernel_role(ox_kernel *k, const char *name);

void ox_kernel_init(ox_kernel *k, ox_node *nd);
/* Whether v can be a `param` of the layer that reads it: a constant used by
 * one node.  (A constant several nodes read — PyTorch's tied weights — is
 * one layer of its own, so that it is one parameter.) */
bool ox_is_param(const ox_value *v);
/* Whether v is a one-element constant, written as a literal in reads. */
bool ox_is_literal(const ox_value *v);

/* Makes v available in the kernel under role: a tensor parameter, or a
 * `param` when v is a constant read by this node only.  Returns role.  In
 * a kernel of a widening node (ox_node.widen) an operand of a storage dtype
 * is declared as role_<dtype> and role is its copy in the compute dtype.
 * An operand without elements is refused (the language has no empty
 * tensors): ox_kernel_finish then fails. */
const char *ox_operand(ox_kernel *k, ox_value *v, const char *role);
/* Writes the def (named after base) and its call, which defines output
 * out (given its dtype and shape) in layer suffix (NULL: the node's
 * layer; else "<layer>.<suffix>").  A widening node's kernel whose output
 * has a storage dtype computes it as the temporary y_wide and stores it
 * narrowed, rounded once (f16, bf16) or keeping the low bits (integers). */
bool ox_kernel_finish(ox_kernel *k, const char *base, ox_value *out, const char *suffix);
void ox_kernel_free(ox_kernel *k);

/* A call of a lib/nn.te op: `OUT = OP(ARGS) as "LAYER"`, with params
 * (roles and contents) written as the layer's weights. */
bool ox_call_nn(ox_node *nd, ox_value *out, const char *op, const char *args,
                const char *const *roles, rt_tensor *const *data, int nparams);

/* A view of the language (reshape, permute, slice ...): `OUT = EXPR as
 * "LAYER"` (suffix as for ox_kernel_finish); no copy unless the program
 * needs one (a view that is an output, a reshape across a permutation),
 * which is then the layer. */
bool ox_call_view(ox_node *nd, ox_value *out, const char *expr, const char *suffix);
/* One view of several that make out: `TMP = EXPR` (a view makes no
 * layer), returning TMP's name, which the next one reads. */
const char *ox_view_step(ox_node *nd, const ox_value *out, const char *expr);

/* Index and type text: "i0, i1, i2" (prefix i, n names from first), and
 * "f32[2, 3]". */
void ox_indices(ox_str *b, const char *prefix, int first, int n);
void ox_type(ox_str *b, ir_dtype t, int ndim, const int64_t *shape);
/* A read of role (shape of v) broadcast into an output of shape oshape,
 * with the output's indices i0, i1 ...: v's dimension k is the output's
 * dimension off + k (numpy aligns the last ones: off = rank - v->ndim). */
void ox_bcast_read(ox_str *b, const char *role, const ox_value *v, int off, const int64_t *oshape);
/* A floating-point literal of the language ("1.5", "1e-05", "inf", and
 * NaN as "(inf - inf)"), and an integer one (INT64_MIN as an expression). */
void ox_float(ox_str *b, double v);
void ox_int(ox_str *b, int64_t v);

/* A copy kernel of input 0 (a graph output that is a constant or an input). */
bool ox_copy(ox_node *nd);
/* Output 0 as input 0 itself, for a node that changes nothing (Identity, a
 * Concat of one input, a Pad of zeros, a pool of a 1x1 window): when input
 * 0 is a tensor the program computes, the language's view of it at its own
 * shape (no copy and no layer; ox_call_view), so that the layers before
 * and after it fuse as if the node were not there; else false, and the
 * node computes its copy.  ox_alias writes the view (input 0 must be
 * ox_aliasable). */
bool ox_aliasable(const ox_value *x);
bool ox_alias(ox_node *nd);

/* ---------------------------------------------------------------- ops */

/* An ONNX op: the function that imports its nodes, and what that function
 * needs to know of this op (a template, a reduction ...: its arg), so that
 * ops of one shape share one function. */
typedef bool (*ox_op_fn)(ox_node *nd, const void *arg);
typedef struct ox_op {
    const char *name;
    ox_op_fn fn;
    const void *arg;         /* fn's second argument; NULL for most */
    bool widen;              /* see ox_node.widen */
} ox_op;
/* ox_op.widen: the op computes on values, in the compute dtype of a
 * storage dtype (WIDEN); or it moves, compares and selects values (or
 * folds them), which the language does in any dtype (AS_IS). */
enum { AS_IS = false, WIDEN = true };
/* The tables of the op files, and the entry of op_type, or NULL. */
extern const ox_op ox_ops_math[], ox_ops_shape[], ox_ops_nn[];
extern const int ox_ops_math_count, ox_ops_shape_count, ox_ops_nn_count;
extern const ox_op ox_ops_quant[];   /* importer/ops_quant.c */
extern const int ox_ops_quant_count;
const ox_op *ox_find_op(const char *op_type);

/* Shared checks of the op files (importer/ops.c): v is a float tensor,
 * else an error naming the op; inputs from..to (those present) have input
 * from's dtype, else an error naming two that differ. */
bool ox_need_float(ox_node *nd, const ox_value *v);
bool ox_same_dtypes(ox_node *nd, int from, int to);
/* out takes in's dtype and shape. */
void ox_same_shape(ox_value *out, const ox_value *in);
/* Row-major strides of v's shape (flat element positions). */
void ox_strides(const ox_value *v, int64_t *st);
/* Replaces each '$' of tmpl with read. */
void ox_subst(ox_str *b, const char *tmpl, const char *read);
/* The numpy broadcast of v[0..n): its rank *R and shape, or an error
 * naming two inputs that do not broadcast. */
bool ox_broadcast(ox_node *nd, ox_value *const *v, int n, int *R, int64_t *shape);
/* The axes of Squeeze/Unsqueeze/Reduce*: attribute `axes` when attr,
 * else constant input `input` (absent: 0 axes); -1 after an error. */
int ox_axes_of(ox_node *nd, int input, bool attr, int64_t *axes);
/* ScatterND: folded when its inputs are known (importer/fold.c), else
 * the kernel of ox_scatternd_kernel (importer/ops_nn.c), to which it
 * leaves the checked inputs and its reduction (none, add or mul). */
bool ox_op_scatternd(ox_node *nd, const void *arg);
bool ox_scatternd_kernel(ox_node *nd, ox_value *data, ox_value *ind, ox_value *upd,
                         const char *red);
/* If, whose condition must be known at import time: the branch taken
 * imports in place (importer/onnx.c). */
bool ox_op_if(ox_node *nd, const void *arg);
/* Loop, whose trip count and condition must be known at import time: its
 * body imports once per iteration (importer/onnx.c). */
bool ox_op_loop(ox_node *nd, const void *arg);

/* ---------------------------------------------------------------- steps
 *
 * A node the importer makes for the node being imported (a sequence op's
 * Concat or Slice, a Loop's scan output), imported as any node is. */

/* An INT attribute (n 1, !list) or an INTS one of a step. */
typedef struct ox_step_attr {
    const char *name;
    int n;
    const int64_t *v;
    bool list;
} ox_step_attr;
/* Imports op_type (at the given opset; 0: the model's) of the values
 * in[0..nin) with the attributes attrs[0..nattrs), into one new value named
 * out (NULL: a fresh name made from nd's output 0) in a layer named after
 * nd's node and op_type.  Returns the new value, or NULL after an error. */
ox_value *ox_step(ox_node *nd, const char *op_type, int opset, ox_value *const *in, int nin,
                  const char *out, const ox_step_attr *attrs, int nattrs);
/* A new sequence of n elements (unset) of dtype t, living as long as the
 * import. */
ox_seq *ox_seq_new(ox_node *nd, int n, ir_dtype t);
/* Output i as the sequence s. */
bool ox_seq_output(ox_node *nd, int i, const ox_seq *s);
/* The values v[0..n), tensors of one dtype and rank, concatenated along
 * axis (new_axis: stacked along a new axis, which axis then names in the
 * result's rank) into the value named out (NULL: a fresh name); NULL after
 * an error.  Any number of them: the Concats nest when there are more than
 * a node takes. */
ox_value *ox_concat_values(ox_node *nd, ox_value *const *v, int n, int64_t axis, bool new_axis,
                           const char *out);

#endif
