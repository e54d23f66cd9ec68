/* importer/onnx.c — the ONNX importer: reads the model, checks it, and
 * writes the .te program (importer/onnx.h).  The ops themselves are in
 * importer/ops_*.c, the values computed at import time in importer/fold.c.
 *
 * Every dimension is known at import time (dynamic ones from -D), so the
 * kernels written for nodes have concrete shapes; nn.te ops are called
 * where one computes exactly what the node does. */
#include "config.h"

#include "importer/impl.h"
#include "frontend/sema.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/npy.h"

/* The opsets of the default domain the importer knows. */
enum { OX_MIN_OPSET = 1, OX_MAX_OPSET = 22 };

/* A set of names: the strings (owned) and a hash table over them, so that
 * a model of many nodes is imported in linear time. */
typedef struct ox_names {
    char **s;
    int n, cap;
    ir_arena *a;             /* the table's storage */
    fe_map map;
} ox_names;

typedef struct ox_def {
    char *name;
    char *text;              /* everything after the name */
} ox_def;

/* protobuf-c's allocations for the model: a block of 256 bytes or more
 * (an initializer's raw data, say) is 64-byte aligned, and one of
 * RT_ZALLOC_MAP bytes or more comes from rt_zalloc (these are listed, to be
 * freed with their size), so that an initializer's tensor can take its raw
 * data over instead of copying it (adopt_raw). */
typedef struct ox_blocks {
    void **p;
    size_t *n;
    size_t count, cap;
} ox_blocks;

struct ox {
    const char *path;        /* the model's file, also for messages */
    char *dir;               /* its folder: external data must stay inside */
    diag *d;
    const fe_onnx_options *o;
    rt_weight_set *weights;  /* where the weights are kept too, or NULL */
    int opset;
    ox_value **vals;
    int nvals, capvals;
    ox_names ids;            /* .te names in use */
    ox_names layers;         /* layer names in use */
    ox_names lets;           /* lets made for dynamic dimensions */
    ox_def *defs;
    int ndefs, capdefs;
    ir_arena *a;             /* the tables below */
    fe_map valmap;           /* ONNX name -> its latest ox_value */
    fe_map defmap;           /* "base\ntext" -> the def's name */
    fe_map defcount;         /* base -> (void *)(intptr_t) defs named after it */
    fe_map silu;             /* a Sigmoid's output -> its node, when its one reader is
                                a Mul(x, Sigmoid(x)) (ox_silu_pair) */
    fe_map pool_quant;       /* a MaxPool's output -> the QuantizeLinear node that is
                                its one reader (ox_pool_quantizer) */
    fe_map where_softmax;    /* a Where's output -> the Softmax that is its one reader
                                (ox_where_softmax) */
    fe_map scale_reader;     /* a Div's or Mul's output -> the MatMul that is its one
                                reader (ox_scale_reader) */
    fe_map pad_reader;       /* a Pad's output -> the Conv, AveragePool or MaxPool that
                                is its one reader, as its input X (ox_pad_reader) */
    fe_map norm_chain;       /* each node's first output -> the norm_chain it is in
                                (find_norm_chains) */
    ox_str head, defs_text, body;
    size_t nlines;           /* statements in body (each at most a layer, a call) */
    int nweights;
    ox_blocks blocks;        /* the model's large blocks (ox_blocks) */
    int nsteps;              /* nodes made by ox_step so far (their names) */
    int nloops;              /* Loops unrolled so far (their values' names) */
    size_t unrolled;         /* nodes imported by unrolling Loops (OX_MAX_NODES) */
};

/* ---------------------------------------------------------------- text */

void ox_printf(ox_str *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            ir_out_of_memory();
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static const char *str_of(const ox_str *b)
{
    return b->s ? b->s : "";
}

void ox_indices(ox_str *b, const char *prefix, int first, int n)
{
    for (int k = 0; k < n; k++)
        ox_printf(b, "%s%s%d", k ? ", " : "", prefix, first + k);
}

void ox_type(ox_str *b, ir_dtype t, int ndim, const int64_t *shape)
{
    ox_printf(b, "%s[", ir_dtype_name(t));
    for (int k = 0; k < ndim; k++)
        ox_printf(b, "%s%lld", k ? ", " : "", (long long)shape[k]);
    ox_printf(b, "]");
}

void ox_bcast_read(ox_str *b, const char *role, const ox_value *v, int off, const int64_t *oshape)
{
    if (ox_is_literal(v)) {
        if (ir_dtype_is_float(v->dtype))
            ox_float(b, rt_tensor_get(v->konst, 0));
        else
            ox_int(b, rt_tensor_get_int(v->konst, 0));
        return;
    }
    ox_printf(b, "%s[", role);
    for (int k = 0; k < v->ndim; k++) {
        int ok = off + k;
        if (v->shape[k] == 1 && oshape[ok] != 1)
            ox_printf(b, "%s0", k ? ", " : "");
        else
            ox_printf(b, "%si%d", k ? ", " : "", ok);
    }
    ox_printf(b, "]");
}

void ox_int(ox_str *b, int64_t v)
{
    if (v == INT64_MIN)   /* its magnitude is no i64 literal */
        ox_printf(b, "(-9223372036854775807 - 1)");
    else
        ox_printf(b, "%lld", (long long)v);
}

void ox_float(ox_str *b, double v)
{
    if (isnan(v)) {       /* the language has no NaN literal */
        ox_printf(b, "(inf - inf)");
        return;
    }
    if (isinf(v)) {
        ox_printf(b, v < 0 ? "(-inf)" : "inf");
        return;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", v);
    /* the language's floats have digits on both sides of a point */
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    else if (strchr(buf, 'e') && !strchr(buf, '.')) {
        char *e = strchr(buf, 'e');
        memmove(e + 2, e, strlen(e) + 1);
        e[0] = '.';
        e[1] = '0';
    }
    ox_printf(b, buf[0] == '-' ? "(%s)" : "%s", buf);
}

/* ---------------------------------------------------------------- errors */

static const char *node_name(const Onnx__NodeProto *n)
{
    if (n->name && *n->name)
        return n->name;
    return n->n_output && n->output[0] ? n->output[0] : "";
}

bool ox_fail(ox_node *nd, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_loc loc = {nd->x->path, 0, 0};
    diag_error(nd->x->d, loc, "node '%s' (%s, opset %d): %s", node_name(nd->n),
               nd->n->op_type ? nd->n->op_type : "", nd->opset, msg);
    return false;
}

static bool model_error(ox *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool model_error(ox *x, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_loc loc = {x->path, 0, 0};
    diag_error(x->d, loc, "%s", msg);
    return false;
}

/* ---------------------------------------------------------------- tensors */

bool ox_dtype_of(int32_t onnx_type, ir_dtype *out)
{
    switch (onnx_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *out = IR_F32; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: *out = IR_F64; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: *out = IR_F16; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: *out = IR_BF16; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: *out = IR_I8; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: *out = IR_U8; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: *out = IR_I16; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: *out = IR_I32; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *out = IR_I64; return true;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: *out = IR_I32; return true;   /* 0 or 1 */
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: *out = IR_I64; return true;
    default: return false;
    }
}

bool ox_wide_unsigned(int32_t t)
{
    return t == ONNX__TENSOR_PROTO__DATA_TYPE__UINT32 || t == ONNX__TENSOR_PROTO__DATA_TYPE__UINT64;
}


ir_dtype ox_compute_dtype(ir_dtype t)
{
    if (t == IR_F16 || t == IR_BF16)
        return IR_F32;
    return ir_dtype_is_small_int(t) ? IR_I32 : t;
}

const char *ox_onnx_type_name(int32_t t)
{
    static const char *names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16",
                                  "int32", "int64", "string", "bool", "float16", "double",
                                  "uint32", "uint64", "complex64", "complex128", "bfloat16"};
    return t >= 0 && t < (int32_t)(sizeof names / sizeof *names) ? names[t] : "unknown";
}

/* Element count of a shape, or -1 when a dimension is below min_dim (1,
 * or 0 where an empty tensor is allowed) or the count exceeds OX_MAX_NUMEL. */
static int64_t numel_of(const int64_t *shape, int ndim, int64_t min_dim)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] < min_dim || shape[k] > OX_MAX_NUMEL ||
            (shape[k] && n > OX_MAX_NUMEL / shape[k]))
            return -1;
        n *= shape[k];
    }
    return n;
}

static const char *shape_text(char *buf, size_t n, const int64_t *shape, int ndim)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
    return buf;
}

/* A non-negative decimal integer of an external_data entry, or -1. */
static long long external_number(const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    return errno || end == s || *end || v < 0 ? -1 : v;
}

/* Opens external data file loc of the model's folder dir for reading: a
 * regular file whose real path (symlinks and ".." resolved) lies inside
 * the folder's real path, else -1 with *err set.  Not following a final
 * symlink, and not blocking on a FIFO, whatever replaced the file between
 * the check and the open: the opened file itself must be regular. */
static int open_external(const char *dir, const char *loc, struct stat *st, char *err,
                         size_t errlen)
{
    char path[PATH_MAX], real[PATH_MAX], real_dir[PATH_MAX];
    int depth = 0;           /* of each component in the folder, as written */
    for (const char *p = loc; *p && depth >= 0;) {
        size_t n = strcspn(p, "/");
        depth += n == 2 && p[0] == '.' && p[1] == '.' ? -1 : n && !(n == 1 && p[0] == '.');
        p += n + (p[n] == '/');
    }
    if (loc[0] == '/' || depth < 0 ||
        snprintf(path, sizeof path, "%s/%s", dir, loc) >= (int)sizeof path) {
        snprintf(err, errlen, "its external data '%s' is outside the model's folder", loc);
        return -1;
    }
    if (!realpath(dir, real_dir) || !realpath(path, real)) {
        snprintf(err, errlen, "cannot read its external data '%s' (in the model's folder): %s",
                 loc, strerror(errno));
        return -1;
    }
    size_t n = strlen(real_dir);
    if (strncmp(real, real_dir, n) != 0 || (real[n] != '/' && !(n == 1 && real_dir[0] == '/'))) {
        snprintf(err, errlen, "its external data '%s' is outside the model's folder", loc);
        return -1;
    }
    int fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        snprintf(err, errlen, "its external data '%s' is not a regular file of the model's "
                 "folder%s%s", loc, fd < 0 ? ": " : "", fd < 0 ? strerror(errno) : "");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* The bytes of an external-data tensor, read from a file inside the
 * model's folder; NULL with *err set. */
static unsigned char *read_external(ox *x, const Onnx__TensorProto *t, size_t want,
                                    char *err, size_t errlen)
{
    const char *loc = NULL;
    long long offset = 0, length = -1;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = t->external_data[i];
        if (!e->key || !e->value)
            continue;
        if (strcmp(e->key, "location") == 0)
            loc = e->value;
        else if (strcmp(e->key, "offset") == 0 && (offset = external_number(e->value)) < 0)
            offset = -2;
        else if (strcmp(e->key, "length") == 0 && (length = external_number(e->value)) < 0)
            length = -2;
    }
    if (!loc || !*loc) {
        snprintf(err, errlen, "its external data has no location");
        return NULL;
    }
    if (offset < 0 || length == -2 || (length >= 0 && (size_t)length != want)) {
        snprintf(err, errlen, "its external data '%s' has offset %lld and length %lld, but the "
                 "tensor needs %zu bytes", loc, offset, length, want);
        return NULL;
    }
    struct stat st;
    int fd = open_external(x->dir, loc, &st, err, errlen);
    if (fd < 0)
        return NULL;
    unsigned char *buf = NULL;
    size_t got = 0;
    if ((unsigned long long)offset > (unsigned long long)st.st_size ||
        want > (size_t)(st.st_size - offset)) {
        snprintf(err, errlen, "its external data '%s' has %lld bytes, fewer than the %zu at "
                 "offset %lld that the tensor needs", loc, (long long)st.st_size, want, offset);
    } else if (!(buf = malloc(want ? want : 1))) {
        snprintf(err, errlen, "out of memory reading %zu bytes of its external data '%s'", want,
                 loc);
    } else {
        while (got < want) {
            ssize_t r = pread(fd, buf + got, want - got, (off_t)(offset + (long long)got));
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        if (got != want) {
            snprintf(err, errlen, "cannot read %zu bytes at offset %lld of its external data "
                     "'%s' (in the model's folder)", want, offset, loc);
            free(buf);
            buf = NULL;
        }
    }
    close(fd);
    return buf;
}

static void *block_alloc(void *data, size_t size)
{
    ox_blocks *b = data;
    if (size < 256)
        return malloc(size);
    if (size < RT_ZALLOC_MAP)
        return aligned_alloc(64, (size + 63) / 64 * 64);
    if (b->count == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        void **p = realloc(b->p, cap * sizeof *p);
        if (p)
            b->p = p;
        size_t *n = p ? realloc(b->n, cap * sizeof *n) : NULL;
        if (!n)
            return NULL;
        b->n = n;
        b->cap = cap;
    }
    void *p = rt_zalloc(size);
    if (p) {
        b->p[b->count] = p;
        b->n[b->count++] = size;
    }
    return p;
}

/* The listed block p, unlisted: its size, or 0 when p is not listed. */
static size_t block_unlist(ox_blocks *b, const void *p)
{
    for (size_t i = b->count; i-- > 0;)
        if (b->p[i] == p) {
            size_t n = b->n[i];
            b->p[i] = b->p[--b->count];
            b->n[i] = b->n[b->count];
            return n;
        }
    return 0;
}

static void block_free(void *data, void *p)
{
    size_t n = block_unlist(data, p);
    if (n)
        rt_zfree(p, n);
    else
        free(p);
}

/* An initializer's tensor made of its raw data itself, which the tensor
 * owns from then on (t's raw data is emptied), when the data is laid out
 * as the tensor's and was allocated as a tensor's is (ox_blocks); else
 * NULL, and tensor_from_proto copies it. */
static rt_tensor *adopt_raw(ox *x, Onnx__TensorProto *t)
{
    ir_dtype dt;
    if ((t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) ||
        !t->has_raw_data || !t->has_data_type || !ox_dtype_of(t->data_type, &dt) ||
        t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL || ox_wide_unsigned(t->data_type) ||
        t->n_dims > RT_MAX_DIMS || t->raw_data.len < 256 || (uintptr_t)t->raw_data.data % 64)
        return NULL;
    int64_t shape[RT_MAX_DIMS];
    for (size_t k = 0; k < t->n_dims; k++)
        shape[k] = t->dims[k];
    int64_t n = numel_of(shape, (int)t->n_dims, 0);
    if (n < 0 || (uint64_t)n * (uint64_t)ir_dtype_size(dt) != t->raw_data.len)
        return NULL;
    rt_tensor *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (t->raw_data.len >= RT_ZALLOC_MAP && block_unlist(&x->blocks, t->raw_data.data) !=
        t->raw_data.len) {   /* not one of ours (cannot happen): copy it */
        free(r);
        return NULL;
    }
    r->dtype = dt;
    r->ndim = (int)t->n_dims;
    memcpy(r->shape, shape, sizeof shape[0] * t->n_dims);
    r->data = t->raw_data.data;
    r->nbytes = t->raw_data.len;
    t->raw_data.data = NULL;
    t->raw_data.len = 0;
    return r;
}

/* A TensorProto's contents as a host tensor (possibly without elements);
 * NULL with *err set. */
static rt_tensor *tensor_from_proto(ox *x, const Onnx__TensorProto *t, char *err, size_t errlen)
{
    ir_dtype dt;
    if (!t->has_data_type || !ox_dtype_of(t->data_type, &dt)) {
        snprintf(err, errlen, "dtype %s is not supported (tec takes " OX_DTYPES " tensors)",
                 ox_onnx_type_name(t->has_data_type ? t->data_type : 0));
        return NULL;
    }
    if (t->n_dims > RT_MAX_DIMS) {
        snprintf(err, errlen, "it has %zu dimensions (at most %d are supported)", t->n_dims,
                 RT_MAX_DIMS);
        return NULL;
    }
    int64_t shape[RT_MAX_DIMS];
    for (size_t k = 0; k < t->n_dims; k++)
        shape[k] = t->dims[k];
    int64_t n = numel_of(shape, (int)t->n_dims, 0);
    char sb[256];
    if (n < 0) {
        snprintf(err, errlen, "its shape %s has a negative dimension or more than 2^40 elements",
                 shape_text(sb, sizeof sb, shape, (int)t->n_dims));
        return NULL;
    }
    bool is_bool = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    bool is_u32 = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__UINT32;
    size_t esize = is_bool ? 1 : is_u32 ? 4 : (size_t)ir_dtype_size(dt), want = (size_t)n * esize;
    const void *src = NULL;
    size_t have = 0;
    unsigned char *ext = NULL;
    /* raw bytes (little-endian elements), or a typed field: int32_data
     * holds the elements of the dtypes narrower than 32 bits (bool, the
     * small integers, and the bits of f16 and bf16), one per value */
    bool raw = true;
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        if (!(ext = read_external(x, t, want, err, errlen)))
            return NULL;
        src = ext;
        have = want;
    } else if (t->has_raw_data) {
        src = t->raw_data.data;
        have = t->raw_data.len;
    } else if (dt == IR_F32) {
        src = t->float_data, have = t->n_float_data * esize;
    } else if (dt == IR_F64) {
        src = t->double_data, have = t->n_double_data * esize;
    } else if (ox_wide_unsigned(t->data_type)) {
        src = t->uint64_data, have = t->n_uint64_data * esize;
        raw = false;
    } else if (dt == IR_I64) {
        src = t->int64_data, have = t->n_int64_data * esize;
    } else {
        src = t->int32_data, have = t->n_int32_data * esize;
        raw = dt == IR_I32 && !is_bool;
    }
    if (have != want) {
        snprintf(err, errlen, "its data has %zu bytes but its shape %s of %s needs %zu", have,
                 shape_text(sb, sizeof sb, shape, (int)t->n_dims), ir_dtype_name(dt), want);
        free(ext);
        return NULL;
    }
    rt_tensor *r = rt_tensor_new(dt, (int)t->n_dims, shape, err, errlen);
    if (r && ox_wide_unsigned(t->data_type))   /* into i64: uint64 up to 2^63 - 1 */
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = t->uint64_data && src == t->uint64_data ? t->uint64_data[i] : 0;
            if (src != t->uint64_data)   /* little-endian bytes */
                for (size_t b = 0; b < esize; b++)
                    v |= (uint64_t)((const uint8_t *)src)[i * esize + b] << (8 * b);
            if (v > INT64_MAX) {
                snprintf(err, errlen, "its element %lld, %llu, does not fit the i64 that tec "
                         "holds uint64 in", (long long)i, (unsigned long long)v);
                rt_tensor_free(r);
                r = NULL;
                break;
            }
            ((int64_t *)r->data)[i] = (int64_t)v;
        }
    else if (r && is_bool)   /* bytes, or int32_data values */
        for (int64_t i = 0; i < n; i++)
            ((int32_t *)r->data)[i] = (raw ? ((const uint8_t *)src)[i] : t->int32_data[i]) != 0;
    else if (r && !raw)   /* int32_data values narrowed to their element */
        for (int64_t i = 0; i < n; i++) {
            if (esize == 1)
                ((uint8_t *)r->data)[i] = (uint8_t)t->int32_data[i];
            else
                ((uint16_t *)r->data)[i] = (uint16_t)t->int32_data[i];
        }
    else if (r && want)
        memcpy(r->data, src, want);
    free(ext);
    return r;
}

rt_tensor *ox_tensor_of(ox_node *nd, const Onnx__TensorProto *t)
{
    char err[512];
    rt_tensor *r = tensor_from_proto(nd->x, t, err, sizeof err);
    if (!r)
        ox_fail(nd, "tensor attribute: %s", err);
    else if (ox_wide_unsigned(t->data_type))
        nd->wide_unsigned = t->data_type;
    return r;
}

/* ---------------------------------------------------------------- names */

static bool name_taken(const ox_names *ns, const char *s)
{
    return fe_map_get(&ns->map, s) != NULL;
}

/* Adds s (malloc'ed; the set owns it). */
static char *claim(ox_names *ns, char *s)
{
    if (!s)
        ir_out_of_memory();
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? 2 * ns->cap : 64;
        ns->s = realloc(ns->s, sizeof *ns->s * (size_t)ns->cap);
        if (!ns->s)
            ir_out_of_memory();
    }
    if (!ns->a)
        ns->a = ir_arena_new();
    ns->s[ns->n++] = s;
    fe_map_put(ns->a, &ns->map, s, s);
    return s;
}

static void free_names(ox_names *ns)
{
    for (int i = 0; i < ns->n; i++)
        free(ns->s[i]);
    free(ns->s);
    if (ns->a)
        ir_arena_free(ns->a);
}

/* Words a tensor cannot be called: keywords, dtypes, functions and defs. */
static bool reserved(const char *s)
{
    static const char *words[] = {
        "def", "let", "param", "state", "input", "output", "import", "for", "in", "if", "else",
        "as", "uniform", "where", "assert", "schedule", "inf", "f32", "f64", "i32", "i64", "f16",
        "bf16", "int", "float", "exp", "log", "sqrt", "rsqrt", "tanh", "erf", "sigmoid", "abs",
        "floor", "ceil", "sin", "cos", "pow", "max", "min", "select", "conv2d", "linear",
        "matmul", "bmm", "embedding", "batchnorm", "layernorm", "relu", "relu6", "silu", "gelu",
        "gelu_tanh", "softmax", "causal_softmax", "maxpool2d", "avgpool2d", "global_avgpool",
        "add", "mul", "scale_channels", "concat", "concat4", "flatten", "split_heads",
        "merge_heads", "transpose_last", "reshape", "permute", "transpose", "slice"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcmp(s, words[i]) == 0)
            return true;
    ir_dtype t;
    int arity;
    return ir_dtype_parse(s, &t) || fe_math_fn(s, &arity) || strncmp(s, "sat_", 4) == 0;
}

/* A fresh .te identifier made from an ONNX name. */
static char *fresh_id(ox *x, const char *onnx)
{
    size_t n = strlen(onnx);
    char *s = malloc(n + 24);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = onnx[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!ok && (k == 0 || s[k - 1] == '_'))
            continue;          /* "/conv1/Conv_output_0" -> "conv1_Conv_output_0" */
        s[k++] = ok ? c : '_';
    }
    while (k && s[k - 1] == '_')
        k--;
    s[k] = 0;
    if (k == 0 || (s[0] >= '0' && s[0] <= '9') || reserved(s)) {
        memmove(s + 2, s, k + 1);
        s[0] = 't', s[1] = '_';
        k += 2;
    }
    char *base = strdup(s);
    for (int v = 2; name_taken(&x->ids, s) || name_taken(&x->lets, s); v++)
        snprintf(s, n + 24, "%s_%d", base, v);
    free(base);
    return claim(&x->ids, s);
}

/* A fresh layer name made from a node name: "/layer1/layer1.0/conv1/Conv"
 * -> "layer1.0.conv1.Conv" (slashes become dots, and a scope that the
 * next one repeats is dropped: PyTorch names each scope by its module's
 * whole path, so "/features/features.1/Conv" is module features.1's);
 * characters other than letters, digits, '_', '-', ':' and '.' become '_'. */
static char *fresh_layer(ox *x, const char *name)
{
    size_t n = strlen(name);
    char *s = malloc(n + 24);
    if (!s)
        ir_out_of_memory();
    size_t k = 0, scope = 0;   /* where the last scope written starts */
    for (const char *p = name; *p;) {
        size_t len = strcspn(p, "/");
        /* this scope repeats the last one and goes on: it replaces it */
        if (k && len > k - scope && strncmp(p, s + scope, k - scope) == 0 && p[k - scope] == '.')
            k = scope;
        else if (k && len)
            s[k++] = '.';
        if (len)
            scope = k;
        for (size_t i = 0; i < len; i++) {
            char c = p[i];
            bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == ':' || c == '.';
            if (!ok)
                c = '_';
            if (c == '.' && (k == 0 || s[k - 1] == '.'))
                continue;
            s[k++] = c;
        }
        p += len + (p[len] == '/');
    }
    while (k && s[k - 1] == '.')
        k--;
    s[k] = 0;
    if (k == 0)
        strcpy(s, "node");
    char *base = strdup(s);
    for (int v = 2; name_taken(&x->layers, s); v++)
        snprintf(s, n + 24, "%s_%d", base, v);
    free(base);
    return claim(&x->layers, s);
}

/* ---------------------------------------------------------------- values */

static ox_value *find_value(ox *x, const char *name)
{
    return fe_map_get(&x->valmap, name);
}

static ox_value *new_value(ox *x, const char *name)
{
    ox_value *v = calloc(1, sizeof *v);
    if (!v)
        ir_out_of_memory();
    v->onnx = name;
    if (x->nvals == x->capvals) {
        x->capvals = x->capvals ? 2 * x->capvals : 64;
        x->vals = realloc(x->vals, sizeof *x->vals * (size_t)x->capvals);
        if (!x->vals)
            ir_out_of_memory();
    }
    x->vals[x->nvals++] = v;
    if (!x->a)
        x->a = ir_arena_new();
    fe_map_put(x->a, &x->valmap, name, v);
    return v;
}

ox_value *ox_input(ox_node *nd, int i)
{
    if (i < nd->nin && nd->in[i])
        return nd->in[i];
    ox_fail(nd, "input %d is missing", i + 1);
    return NULL;
}

int ox_noutputs(ox_node *nd)
{
    int n = (int)nd->n->n_output;
    while (n > 0 && !*nd->n->output[n - 1])
        n--;
    return n;
}

ox_value *ox_output(ox_node *nd, int i)
{
    ox_value *v = new_value(nd->x, nd->n->output[i]);
    v->producer = nd->n;
    return v;
}

bool ox_axis(ox_node *nd, int64_t axis, int rank, int *out)
{
    if (axis < -rank || axis >= (rank ? rank : 1))
        return ox_fail(nd, "axis %lld is out of range for rank %d", (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return true;
}

bool ox_check_shape(ox_node *nd, const int64_t *shape, int ndim)
{
    return ox_check_shape_of(nd, shape, ndim, false);
}

bool ox_check_shape_of(ox_node *nd, const int64_t *shape, int ndim, bool known)
{
    char sb[256];
    if (ndim > RT_MAX_DIMS)
        return ox_fail(nd, "the result has %d dimensions (at most %d are supported)", ndim,
                       RT_MAX_DIMS);
    if (numel_of(shape, ndim, 0) < 0)
        return ox_fail(nd, "the result's shape %s has a negative dimension or more than 2^40 "
                       "elements", shape_text(sb, sizeof sb, shape, ndim));
    if (!known && numel_of(shape, ndim, 1) < 0)
        return ox_fail(nd, "the result's shape %s has no elements, which tec computes only "
                       "when they are known at import time (doc/onnx.md, empty tensors)",
                       shape_text(sb, sizeof sb, shape, ndim));
    return true;
}

/* How v came to be computed at run time: "'v' (Mul) <- 'u' (Div) <- 'x'
 * (a graph input)", following the first input that is not known. */
static void dynamic_chain(ox *x, const ox_value *v, ox_str *b)
{
    for (int depth = 0; v; depth++) {
        if (depth == 8) {
            ox_printf(b, " <- ...");
            return;
        }
        ox_printf(b, "%s'%s'", depth ? " <- " : "", v->onnx);
        if (v->graph_input || !v->producer) {
            ox_printf(b, " (%s)", v->graph_input ? "a graph input" : "not known at import time");
            return;
        }
        const Onnx__NodeProto *p = v->producer;
        ox_printf(b, " (%s)", p->op_type);
        const ox_value *next = NULL;
        for (size_t k = 0; k < p->n_input && !next; k++) {
            const ox_value *u = *p->input[k] ? find_value(x, p->input[k]) : NULL;
            if (u && (!u->konst || u->graph_input))
                next = u;
        }
        if (!next)   /* its inputs are known: an op tec computes at run time only */
            ox_printf(b, ", of inputs known at import time, which tec computes at run time");
        v = next;
    }
}

int ox_const_ints(ox_node *nd, int i, int64_t *out, int max)
{
    ox_value *v = ox_input(nd, i);
    if (!v)
        return -1;
    if (!v->konst) {
        ox_str chain = {0};
        dynamic_chain(nd->x, v, &chain);
        ox_fail(nd, "input %d ('%s') must be a constant (an initializer or computed from "
                "shapes), but it is computed at run time: %s", i + 1, v->onnx, chain.s);
        free(chain.s);
        return -1;
    }
    if (ir_dtype_is_float(v->konst->dtype) || v->konst->ndim > 1) {
        ox_fail(nd, "input %d ('%s') must be a 1-D integer tensor", i + 1, v->onnx);
        return -1;
    }
    int64_t n = rt_tensor_numel(v->konst);
    if (n > max) {
        ox_fail(nd, "input %d ('%s') has %lld values (at most %d)", i + 1, v->onnx, (long long)n,
                max);
        return -1;
    }
    for (int64_t k = 0; k < n; k++)   /* i64, i32 or bool */
        out[k] = rt_tensor_get_int(v->konst, k);
    return (int)n;
}

bool ox_set_const(ox_node *nd, int i, rt_tensor *t, bool weight)
{
    if (!t)
        return false;
    ox_value *v = ox_output(nd, i);
    v->konst = t;
    v->weight = weight;
    v->dtype = t->dtype;
    v->ndim = t->ndim;
    memcpy(v->shape, t->shape, sizeof v->shape);
    return true;
}

/* ---------------------------------------------------------------- attributes */

const Onnx__AttributeProto *ox_attr(ox_node *nd, const char *name)
{
    for (size_t i = 0; i < nd->n->n_attribute; i++)
        if (nd->n->attribute[i]->name && strcmp(nd->n->attribute[i]->name, name) == 0)
            return nd->n->attribute[i];
    return NULL;
}

int64_t ox_attr_int(ox_node *nd, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = ox_attr(nd, name);
    return a && a->has_i ? a->i : def;
}

double ox_attr_float(ox_node *nd, const char *name, double def)
{
    const Onnx__AttributeProto *a = ox_attr(nd, name);
    return a && a->has_f ? a->f : def;
}

const char *ox_attr_str(ox_node *nd, const char *name, const char *def)
{
    static char buf[4][256];
    static int next;
    const Onnx__AttributeProto *a = ox_attr(nd, name);
    if (!a || !a->has_s)
        return def;
    char *b = buf[next++ % 4];
    size_t n = a->s.len < 255 ? a->s.len : 255;
    memcpy(b, a->s.data, n);
    b[n] = 0;
    return b;
}

int ox_attr_ints(ox_node *nd, const char *name, const int64_t **vals)
{
    /* never NULL, so that copying the 0 values of a missing attribute is
     * defined (memcpy's source must not be NULL even for 0 bytes) */
    static const int64_t none[1];
    const Onnx__AttributeProto *a = ox_attr(nd, name);
    *vals = a && a->ints ? a->ints : none;
    return a && a->ints ? (int)a->n_ints : 0;
}

/* ---------------------------------------------------------------- weights */

/* Writes a param's contents as DIR/<layer>.<role>.npy, and keeps them in
 * the weight set under <layer>.<role>: the tensor itself when it is the
 * contents of one of the node's inputs (the set then owns it, and the
 * value still reads it until the import ends), else a copy. */
static bool write_weight(ox_node *nd, const char *layer, const char *role, const rt_tensor *t)
{
    ox *x = nd->x;
    x->nweights++;
    char path[PATH_MAX], err[512];
    if (x->weights) {
        snprintf(path, sizeof path, "%s.%s", layer, role);
        if (rt_weight_set_find(x->weights, path))
            return model_error(x, "two parameters are named %s", path);
        ox_value *owner = NULL;
        for (int i = 0; i < nd->nin && !owner; i++)
            if (nd->in[i] && nd->in[i]->konst == t && !nd->in[i]->lent)
                owner = nd->in[i];
        rt_tensor *c = owner ? owner->konst : rt_tensor_new(t->dtype, t->ndim, t->shape, err,
                                                            sizeof err);
        if (c && !owner)
            memcpy(c->data, t->data, t->nbytes);
        if (owner)
            owner->lent = true;
        if (!c || !rt_weight_set_put(x->weights, path, c))
            return model_error(x, "cannot keep the weights of %s: %s", path,
                               c ? "out of memory" : err);
    }
    if (!x->o->weights_dir)
        return true;
    snprintf(path, sizeof path, "%s/%s.%s.npy", x->o->weights_dir, layer, role);
    if (!rt_npy_write(path, t, err, sizeof err))
        return model_error(x, "cannot write the weights: %s", err);
    return true;
}

/* ---------------------------------------------------------------- kernels */

void ox_kernel_init(ox_kernel *k, ox_node *nd)
{
    memset(k, 0, sizeof *k);
    k->nd = nd;
}

void ox_kernel_free(ox_kernel *k)
{
    free(k->params.s);
    free(k->args.s);
    free(k->decls.s);
    free(k->widened.s);
    free(k->body.s);
    for (int i = 0; i < k->nowned; i++)
        free(k->owned[i]);
    k->nowned = 0;
}

const char *ox_kernel_role(ox_kernel *k, const char *name)
{
    if (k->nowned == 2 * OX_MAX_PARAMS) {
        fprintf(stderr, "tec: internal error: onnx: a kernel with more than %d operands\n",
                OX_MAX_PARAMS);
        exit(70);
    }
    char *s = strdup(name);
    if (!s) {
        ir_out_of_memory();
    }
    return k->owned[k->nowned++] = s;
}

bool ox_is_param(const ox_value *v)
{
    return v->konst && !v->id && v->uses <= 1;
}

bool ox_is_literal(const ox_value *v)
{
    return v->konst && !v->id && rt_tensor_numel(v->konst) == 1;
}

static const char *def_named(ox *x, const char *base, const char *text);

/* A constant several nodes read: one layer whose output is its contents
 * (its param `<initializer>.value`), so that its readers share it. */
static bool share_constant(ox_node *nd, ox_value *v)
{
    ox *x = nd->x;
    char *layer = fresh_layer(x, v->onnx);
    ox_str text = {0};
    ox_printf(&text, "() -> y: ");
    ox_type(&text, v->dtype, v->ndim, v->shape);
    ox_printf(&text, " {\n    %s value: ", v->weight ? "param" : "state");
    ox_type(&text, v->dtype, v->ndim, v->shape);
    ox_printf(&text, "\n    y[");
    ox_indices(&text, "i", 0, v->ndim);
    ox_printf(&text, "] = value[");
    ox_indices(&text, "i", 0, v->ndim);
    ox_printf(&text, "]\n}\n");
    const char *name = def_named(x, "constant", text.s);
    free(text.s);
    v->id = fresh_id(x, v->onnx);
    ox_printf(&x->body, "%s = %s() as \"%s\"\n", v->id, name, layer);
    x->nlines++;
    return write_weight(nd, layer, "value", v->konst);
}

/* In a widening kernel, an operand of a storage dtype: declared as
 * role_<dtype>, and copied to role in the compute dtype before the op's
 * statements.  Returns the declared name. */
static const char *widen_operand(ox_kernel *k, const ox_value *v, const char *role)
{
    if (!k->nd->widen || ox_compute_dtype(v->dtype) == v->dtype)
        return role;
    char name[256];
    snprintf(name, sizeof name, "%s_%s", role, ir_dtype_name(v->dtype));
    ox_printf(&k->widened, "    %s[", role);
    ox_indices(&k->widened, "i", 0, v->ndim);
    ox_printf(&k->widened, "] = %s(%s[", ir_dtype_name(ox_compute_dtype(v->dtype)), name);
    ox_indices(&k->widened, "i", 0, v->ndim);
    ox_printf(&k->widened, "])\n");
    return ox_kernel_role(k, name);
}

const char *ox_operand(ox_kernel *k, ox_value *v, const char *role)
{
    if (v->konst && !v->id && v->uses > 1)
        share_constant(k->nd, v);
    if ((v->konst ? rt_tensor_numel(v->konst) : 1) == 0 && !k->failed) {
        char sb[256];
        k->failed = true;
        ox_fail(k->nd, "input '%s' has shape %s, no elements: tec computes empty tensors only "
                "when they are known at import time (doc/onnx.md, empty tensors)", v->onnx,
                shape_text(sb, sizeof sb, v->shape, v->ndim));
    }
    if (v->id || !v->konst) {
        ox_printf(&k->params, "%s%s: ", k->nargs ? ", " : "", widen_operand(k, v, role));
        ox_type(&k->params, v->dtype, v->ndim, v->shape);
        ox_printf(&k->args, "%s%s", k->nargs ? ", " : "", v->id);
        k->nargs++;
        return role;
    }
    for (int i = 0; i < k->nparams; i++)
        if (k->data[i] == v->konst)
            return k->reads[i];
    if (k->nparams == OX_MAX_PARAMS) {
        fprintf(stderr, "tec: internal error: onnx: a kernel with more than %d constant "
                "operands\n", OX_MAX_PARAMS);
        exit(70);
    }
    const char *name = widen_operand(k, v, role);
    /* each new declaration goes first */
    ox_str line = {0};
    ox_printf(&line, "    %s %s: ", v->weight ? "param" : "state", name);
    ox_type(&line, v->dtype, v->ndim, v->shape);
    ox_printf(&line, "\n%s", str_of(&k->decls));
    free(k->decls.s);
    k->decls = line;
    k->roles[k->nparams] = name;
    k->reads[k->nparams] = role;
    k->data[k->nparams++] = v->konst;
    return role;
}

/* The name of a def with this text, writing it if it is new. */
static const char *def_named(ox *x, const char *base, const char *text)
{
    if (!x->a)
        x->a = ir_arena_new();
    const char *key = ir_sprintf(x->a, "%s\n%s", base, text);
    const char *known = fe_map_get(&x->defmap, key);
    if (known)
        return known;
    intptr_t count = (intptr_t)fe_map_get(&x->defcount, base) + 1;
    fe_map_put(x->a, &x->defcount, ir_sprintf(x->a, "%s", base), (void *)count);
    char name[128];
    snprintf(name, sizeof name, "%s_%ld", base, (long)count);
    if (x->ndefs == x->capdefs) {
        x->capdefs = x->capdefs ? 2 * x->capdefs : 32;
        x->defs = realloc(x->defs, sizeof *x->defs * (size_t)x->capdefs);
        if (!x->defs)
            ir_out_of_memory();
    }
    x->defs[x->ndefs++] = (ox_def){strdup(name), strdup(text)};
    ox_printf(&x->defs_text, "def %s%s\n", name, text);
    fe_map_put(x->a, &x->defmap, key, x->defs[x->ndefs - 1].name);
    return x->defs[x->ndefs - 1].name;
}

/* The layer of a node's kernel: the node's own, or "<layer>.<suffix>" for
 * one of several (ox_kernel_finish's suffix). */
static const char *layer_of(ox_node *nd, const char *suffix)
{
    if (!suffix)
        return nd->layer;
    /* as long as it is (a node's name has no bound), and not another
     * layer's: "<layer>.<suffix>_2" when a node was named "<layer>/<suffix>" */
    ox_str s = {0};
    ox_printf(&s, "%s.%s", nd->layer, suffix);
    for (int v = 2; name_taken(&nd->x->layers, s.s); v++) {
        s.len = 0;
        ox_printf(&s, "%s.%s_%d", nd->layer, suffix, v);
    }
    return claim(&nd->x->layers, s.s);
}

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The statements of a widening kernel whose output has a storage dtype:
 * each "y" becomes "y_wide", of the compute dtype, whose statement gets
 * where-ranges for its indices (a temporary's shape is its indices'
 * ranges; y's came from its declared type), and then y is y_wide
 * narrowed. */
static void narrow_output(ox_str *b, const char *body, const ox_value *out)
{
    const char *stmt = body;
    while (*stmt) {
        /* a statement: its first line, and the lines indented further */
        const char *end = strchr(stmt, '\n');
        while (end && strncmp(end + 1, "        ", 8) == 0)
            end = strchr(end + 1, '\n');
        end = end ? end : stmt + strlen(stmt);
        ox_str t = {0};
        for (const char *p = stmt; p < end; p++) {
            bool alone = *p == 'y' && (p == body || !ident_char(p[-1])) && !ident_char(p[1]);
            ox_printf(&t, alone ? "y_wide" : "%c", *p);
        }
        const char *left_end = t.s ? strstr(t.s, "] ") : NULL;
        if (strncmp(t.s ? t.s : "", "    y_wide[", 11) == 0 && left_end && strchr(left_end + 2, ' ')) {
            /* "y_wide[I] OP EXPR where ...": EXPR converted to the compute
             * dtype (an EXPR of literals alone would take the def's output
             * dtype), and ranges for I */
            const char *w = strstr(t.s, " where ");
            const char *expr = strchr(left_end + 2, ' ') + 1;
            const char *stop = w ? w : t.s + strlen(t.s);
            ox_printf(b, "%.*s%s(%.*s)%s", (int)(expr - t.s), t.s,
                      ir_dtype_name(ox_compute_dtype(out->dtype)), (int)(stop - expr), expr, stop);
            const char *p = t.s + 11;
            for (int d = 0; d < out->ndim; d++) {
                char var[64];
                size_t n = strcspn(p, ",]");
                snprintf(var, sizeof var, "%.*s", (int)(n < 63 ? n : 63), p);
                p += n + (p[n] == ',' ? 2 : 0);
                bool named = false;
                for (const char *q = w; q && (q = strstr(q, var)); q++)
                    named = named || (!ident_char(q[-1]) && strncmp(q + strlen(var), " in ", 4) == 0);
                if (!named) {
                    ox_printf(b, "%s%s in 0..%lld", w ? ", " : " where ", var,
                              (long long)out->shape[d]);
                    w = "";
                }
            }
        } else {
            ox_printf(b, "%s", t.s ? t.s : "");
        }
        ox_printf(b, "\n");
        free(t.s);
        stmt = *end ? end + 1 : end;
    }
    ox_printf(b, "    y[");
    ox_indices(b, "i", 0, out->ndim);
    ox_printf(b, "] = %s(y_wide[", ir_dtype_name(out->dtype));
    ox_indices(b, "i", 0, out->ndim);
    ox_printf(b, "])\n");
}

bool ox_kernel_finish(ox_kernel *k, const char *base, ox_value *out, const char *suffix)
{
    ox_node *nd = k->nd;
    if (k->failed || !ox_check_shape(nd, out->shape, out->ndim))
        return false;
    ox_str text = {0};
    ox_printf(&text, "(%s) -> y: ", str_of(&k->params));
    ox_type(&text, out->dtype, out->ndim, out->shape);
    ox_printf(&text, " {\n%s%s", str_of(&k->decls), str_of(&k->widened));
    if (nd->widen && ox_compute_dtype(out->dtype) != out->dtype)
        narrow_output(&text, str_of(&k->body), out);
    else
        ox_printf(&text, "%s", str_of(&k->body));
    ox_printf(&text, "}\n");
    const char *name = def_named(nd->x, base, text.s);
    free(text.s);
    const char *layer = layer_of(nd, suffix);
    out->id = fresh_id(nd->x, out->onnx);
    ox_printf(&nd->x->body, "%s = %s(%s) as \"%s\"\n", out->id, name, str_of(&k->args), layer);
    nd->x->nlines++;
    for (int i = 0; i < k->nparams; i++)
        if (!write_weight(nd, layer, k->roles[i], k->data[i]))
            return false;
    return true;
}

bool ox_call_nn(ox_node *nd, ox_value *out, const char *op, const char *args,
                const char *const *roles, rt_tensor *const *data, int nparams)
{
    if (!ox_check_shape(nd, out->shape, out->ndim))
        return false;
    out->id = fresh_id(nd->x, out->onnx);
    ox_printf(&nd->x->body, "%s = %s(%s) as \"%s\"\n", out->id, op, args, nd->layer);
    nd->x->nlines++;
    for (int i = 0; i < nparams; i++)
        if (!write_weight(nd, nd->layer, roles[i], data[i]))
            return false;
    return true;
}

bool ox_call_view(ox_node *nd, ox_value *out, const char *expr, const char *suffix)
{
    if (!ox_check_shape(nd, out->shape, out->ndim))
        return false;
    const char *layer = layer_of(nd, suffix);
    out->id = fresh_id(nd->x, out->onnx);
    ox_printf(&nd->x->body, "%s = %s as \"%s\"\n", out->id, expr, layer);
    nd->x->nlines++;
    const ox_value *x = nd->in[0];
    out->view_of_input = x && (x->graph_input || x->view_of_input);
    out->view_of = x ? (x->view_of ? x->view_of : x) : NULL;
    return true;
}

const char *ox_view_step(ox_node *nd, const ox_value *out, const char *expr)
{
    const char *id = fresh_id(nd->x, out->onnx);
    ox_printf(&nd->x->body, "%s = %s\n", id, expr);
    nd->x->nlines++;
    return id;
}

/* ---------------------------------------------------------------- the model */

/* The bytes of path, at most 2 GiB (protobuf's
 * limit), or NULL with errno set (EFBIG past the limit). */
static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    /* A regular file is read into a buffer of its size (plus one byte, to
     * see it did not grow), not one doubled again and again. */
    struct stat st;
    size_t cap = 1 << 16, n = 0, got;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < (uint64_t)1 << 31)
        cap = (size_t)st.st_size + 1;
    unsigned char *buf = malloc(cap);
    int err = buf ? 0 : ENOMEM;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap && cap >= (size_t)1 << 31) {
            err = EFBIG;
            break;
        }
        if (n == cap) {
            unsigned char *nb = realloc(buf, cap * 2);
            if (!nb) {
                err = ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (!err && ferror(f))
        err = EIO;
    fclose(f);
    if (err) {
        free(buf);
        errno = err;
        return NULL;
    }
    *len = n;
    return buf;
}

/* The --input entry of graph input onnx (by its ONNX name or its .te name
 * id), or NULL. */
static rt_named_path *input_file(ox *x, const char *onnx, const char *id)
{
    for (int i = 0; i < x->o->ninputs; i++)
        if (strcmp(x->o->inputs[i].name, onnx) == 0 || (id && strcmp(x->o->inputs[i].name, id) == 0))
            return &x->o->inputs[i];
    return NULL;
}

/* The size of dimension k (dynamic, named param) of graph input vi: from
 * -D param=N, else from the shape of the input's --input file; 0 after an
 * error. */
static int64_t dynamic_size(ox *x, const Onnx__ValueInfoProto *vi, const char *id, int k,
                            int ndim, const char *param)
{
    for (int i = x->o->ndefines - 1; i >= 0; i--) {
        if (strcmp(x->o->defines[i].name, param) != 0)
            continue;
        const char *s = x->o->defines[i].value;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || *end || *s == '+' || *s == ' ' || v < 1 || v > OX_MAX_NUMEL) {
            model_error(x, "-D %s=%s: the size of a dynamic dimension must be an integer from 1 "
                        "to 2^40", param, s);
            return 0;
        }
        return v;
    }
    rt_named_path *f = input_file(x, vi->name, id);
    if (!f) {
        model_error(x, "graph input '%s': dimension %d is dynamic ('%s'): give its size with -D "
                    "%s=N, or the input's file with --input %s=FILE", vi->name, k, param, param,
                    vi->name);
        return 0;
    }
    rt_npy_type want = {.dtype = IR_F32, .ndim = -1}, got = {0};
    char err[512] = "";
    rt_tensor *t = rt_npy_read_as(f->path, &want, &got, err, sizeof err);
    rt_tensor_free(t);
    if (*err) {
        model_error(x, "graph input '%s': the size of its dynamic dimension '%s' comes from its "
                    "--input file, which cannot be read: %s", vi->name, param, err);
        return 0;
    }
    if (got.ndim != ndim) {
        model_error(x, "graph input '%s' has rank %d, but its --input file %s has rank %d",
                    vi->name, ndim, f->path, got.ndim);
        return 0;
    }
    return got.shape[k];
}

/* A name that lives as long as the process (the renamed --input entries,
 * which the driver reads after the import). */
static const char *keep_name(const char *s)
{
    static ox_names kept;
    if (!name_taken(&kept, s))
        claim(&kept, strdup(s));
    return fe_map_get(&kept.map, s);
}

static bool valid_let(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9') || reserved(s))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

/* A graph input: its dtype and shape (dynamic dimensions from -D, as lets
 * of the program). */
static bool declare_input(ox *x, const Onnx__ValueInfoProto *vi)
{
    const Onnx__TypeProto *tp = vi->type;
    if (!vi->name || !*vi->name)
        return model_error(x, "a graph input has no name");
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return model_error(x, "graph input '%s' is not a tensor (tec's inputs are tensors: "
                           "sequences, maps and optionals are not supported as inputs)",
                           vi->name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    ox_value *v = new_value(x, vi->name);
    if (!tt->has_elem_type || !ox_dtype_of(tt->elem_type, &v->dtype))
        return model_error(x, "graph input '%s': dtype %s is not supported (tec takes "
                           OX_DTYPES " tensors)", vi->name,
                           ox_onnx_type_name(tt->has_elem_type ? tt->elem_type : 0));
    v->wide_unsigned = ox_wide_unsigned(tt->elem_type) ? tt->elem_type : 0;
    v->declared_bool = tt->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    if (!tt->shape)
        return model_error(x, "graph input '%s' has no shape", vi->name);
    if (tt->shape->n_dim > RT_MAX_DIMS)
        return model_error(x, "graph input '%s' has %zu dimensions (at most %d are supported)",
                           vi->name, tt->shape->n_dim, RT_MAX_DIMS);
    v->ndim = (int)tt->shape->n_dim;
    v->id = fresh_id(x, vi->name);
    ox_str type = {0};
    ox_printf(&type, "%s[", ir_dtype_name(v->dtype));
    for (int k = 0; k < v->ndim; k++) {
        const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
        if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            v->shape[k] = dm->dim_value;
            ox_printf(&type, "%s%lld", k ? ", " : "", (long long)dm->dim_value);
            continue;
        }
        const char *param = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                                ? dm->dim_param : "";
        if (!*param) {
            free(type.s);
            return model_error(x, "graph input '%s': dimension %d has neither a size nor a name",
                               vi->name, k);
        }
        /* the let is the dimension's name, which -D sets */
        if (!valid_let(param)) {
            free(type.s);
            return model_error(x, "graph input '%s': the dynamic dimension '%s' is not a name "
                               "-D can set (letters, digits and '_')", vi->name, param);
        }
        if (!(v->shape[k] = dynamic_size(x, vi, v->id, k, v->ndim, param))) {
            free(type.s);
            return false;
        }
        if (!name_taken(&x->lets, param)) {
            claim(&x->lets, strdup(param));
            ox_printf(&x->head, "let %s = %lld    # dynamic dimension (-D %s=N)\n", param,
                      (long long)v->shape[k], param);
        }
        ox_printf(&type, "%s%s", k ? ", " : "", param);
    }
    ox_printf(&type, "]");
    if (numel_of(v->shape, v->ndim, 0) == 0) {
        /* no elements: known now (an empty list of axes, say), and not an
         * input of the program, since the language has no empty tensors */
        free(type.s);
        char err[256];
        v->id = NULL;
        v->konst = rt_tensor_new(v->dtype, v->ndim, v->shape, err, sizeof err);
        return v->konst || model_error(x, "graph input '%s': %s", vi->name, err);
    }
    char sb[256];
    if (numel_of(v->shape, v->ndim, 1) < 0) {
        free(type.s);
        return model_error(x, "graph input '%s' has shape %s: every dimension must be >= 1 and "
                           "the tensor at most 2^40 elements", vi->name,
                           shape_text(sb, sizeof sb, v->shape, v->ndim));
    }
    ox_printf(&x->body, "input %s: %s\n", v->id, type.s);
    v->graph_input = true;
    free(type.s);
    /* the file given for it by the model's name names the program's input */
    rt_named_path *given = input_file(x, vi->name, v->id);
    if (given && strcmp(given->name, v->id) != 0)
        given->name = keep_name(v->id);
    /* a small input whose file is given is also known now */
    if (given && numel_of(v->shape, v->ndim, 1) <= 64) {
        char err[512];
        rt_tensor *t = rt_npy_read(given->path, err, sizeof err);
        if (t && t->dtype == v->dtype && t->ndim == v->ndim &&
            memcmp(t->shape, v->shape, sizeof(int64_t) * (size_t)v->ndim) == 0)
            v->konst = t;
        else   /* the run reports the mismatch */
            rt_tensor_free(t);
    }
    return true;
}

/* The outputs (x->vals from first on) of a node that reads uint32 or
 * uint64 values, held in i64: one that moves them (AS_IS) gives i64
 * results that hold them too; one that computes may not give an integer
 * result, since i64 arithmetic does not wrap as theirs does. */
static bool hold_wide_unsigned(ox_node *nd, int first)
{
    for (int i = first; nd->wide_unsigned && i < nd->x->nvals; i++) {
        ox_value *v = nd->x->vals[i];
        if (nd->widen && !ir_dtype_is_float(v->dtype))
            return ox_fail(nd, "%s arithmetic with an integer result is not supported (tec "
                           "holds %s in i64, which does not wrap as it does)",
                           ox_onnx_type_name(nd->wide_unsigned),
                           ox_onnx_type_name(nd->wide_unsigned));
        if (v->dtype == IR_I64)
            v->wide_unsigned = nd->wide_unsigned;
    }
    return true;
}

/* Why tec does not take an op of ONNX that models hold (rather than
 * just "not supported"), or NULL. */
static const char *refusal_reason(const char *op)
{
    static const char *const value_shaped[] = {"Unique", "NonMaxSuppression", "Compress"};
    static const char *const random[] = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                         "RandomUniformLike", "Bernoulli", "Multinomial"};
    static const char *const loops[] = {"Scan", "SequenceMap"};
    static const char *const optionals[] = {"Optional", "OptionalHasElement",
                                            "OptionalGetElement"};
    static const char *const strings[] = {"StringNormalizer", "TfIdfVectorizer", "RegexFullMatch",
                                          "StringConcat", "StringSplit"};
    static const struct {
        const char *const *ops;
        size_t n;
        const char *why;
    } reasons[] = {
        {value_shaped, sizeof value_shaped / sizeof *value_shaped,
         "its output's shape depends on the values of its inputs, and tec's shapes are fixed "
         "when it imports the model"},
        {random, sizeof random / sizeof *random,
         "it draws random numbers, which tec does not (a model for inference should not)"},
        {loops, sizeof loops / sizeof *loops,
         "tec does not run subgraphs repeatedly (a Loop is unrolled when its trip count and "
         "condition are known at import time, and an If is taken when its condition is)"},
        {optionals, sizeof optionals / sizeof *optionals,
         "tec's values are tensors, and sequences known at import time: optionals are not "
         "supported"},
        {strings, sizeof strings / sizeof *strings, "tec has no strings"},
    };
    for (size_t r = 0; r < sizeof reasons / sizeof *reasons; r++)
        for (size_t i = 0; i < reasons[r].n; i++)
            if (strcmp(reasons[r].ops[i], op) == 0)
                return reasons[r].why;
    return NULL;
}

/* Whether op_type reads sequences (which its own checks name): any other
 * op given one is an error. */
static bool reads_sequences(const char *op_type)
{
    static const char *const ops[] = {"SequenceAt", "SequenceInsert", "SequenceErase",
                                      "SequenceLength", "ConcatFromSequence", "Identity", "Loop"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strcmp(ops[i], op_type) == 0)
            return true;
    return false;
}

/* Imports node n, of the values in[] when given (a step the importer made:
 * ox_step), else of the values its inputs name, at opset (0: the model's). */
static bool import_node_of(ox *x, const Onnx__NodeProto *n, ox_value *const *given, int opset)
{
    ox_node nd = {.x = x, .n = n, .opset = opset ? opset : x->opset};
    if (!n->op_type || !*n->op_type) {
        nd.layer = "";
        return ox_fail(&nd, "the node has no op type");
    }
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
        return ox_fail(&nd, "op domain '%s' is not supported (only the default ONNX domain)",
                       n->domain);
    const ox_op *op = ox_find_op(n->op_type);
    if (!op) {
        const char *why = refusal_reason(n->op_type);
        if (why)
            return ox_fail(&nd, "op %s is not supported: %s", n->op_type, why);
        return ox_fail(&nd, "op %s is not supported (doc/onnx.md lists the supported ops)",
                       n->op_type);
    }
    /* the recurrent ops' outputs are all optional (Y_h alone is common);
     * every other op's first output is required */
    bool recurrent = strcmp(n->op_type, "LSTM") == 0 || strcmp(n->op_type, "GRU") == 0 ||
                     strcmp(n->op_type, "RNN") == 0;
    if (ox_noutputs(&nd) == 0 || (!recurrent && !*n->output[0]))
        return ox_fail(&nd, "the node has no outputs (every supported op has at least one)");
    for (size_t i = 0; i < n->n_output; i++)
        if (*n->output[i] && find_value(x, n->output[i]))
            return ox_fail(&nd, "output '%s' is already defined (each tensor must be defined "
                           "once)", n->output[i]);
    ox_value *in[64] = {0};
    if (n->n_input > 64)
        return ox_fail(&nd, "the node has %zu inputs (at most 64)", n->n_input);
    for (size_t i = 0; i < n->n_input; i++)
        if (given)
            in[i] = given[i];
        else if (*n->input[i])
            in[i] = find_value(x, n->input[i]);
    for (size_t i = 0; i < n->n_input; i++)
        if (in[i] && in[i]->seq && !reads_sequences(n->op_type))
            return ox_fail(&nd, "input %zu ('%s') is a sequence, but %s takes tensors", i + 1,
                           in[i]->onnx, n->op_type);
    nd.in = in;
    nd.nin = (int)n->n_input;
    nd.layer = fresh_layer(x, node_name(n));
    nd.widen = op->widen;
    for (int i = 0; i < nd.nin; i++)
        if (in[i] && in[i]->wide_unsigned)
            nd.wide_unsigned = in[i]->wide_unsigned;
    int first = x->nvals, errors = x->d->nerrors;
    int folded = ox_fold(&nd);
    if (folded < 0 || (!folded && !op->fn(&nd, op->arg))) {
        if (x->d->nerrors == errors)   /* every refusal says why */
            ox_fail(&nd, "the node could not be imported");
        return false;
    }
    return hold_wide_unsigned(&nd, first);
}

static bool import_node(ox *x, const Onnx__NodeProto *n)
{
    return import_node_of(x, n, NULL, 0);
}

/* ---------------------------------------------------------------- layer norms
 *
 * PyTorch's layer norm as its exports before opset 17 write it (ViT,
 * Swin, ConvNeXt, GPT-2):
 *     m = ReduceMean(x)   d = Sub(x, m)   p = Pow(d, 2)   v = ReduceMean(p)
 *     s = Sqrt(Add(v, eps))   n = Div(d, s)   Mul(n, scale)   [Add(., bias)]
 * over x's last axes, each value read by the next node alone (d by the Pow
 * and the Div).  The chain imports as one LayerNormalization node: its
 * kernel computes the same operations in the same order (Pow(d, 2) is
 * d * d, as the Pow importer writes it) in one pass over each row, where
 * the nodes are five graph calls with tensors in memory between them. */
enum { NC_MEAN, NC_SUB, NC_POW, NC_VAR, NC_ADD_EPS, NC_SQRT, NC_DIV, NC_SCALE, NC_BIAS, NC_NODES };
typedef struct norm_chain {
    const Onnx__NodeProto *node[NC_NODES];   /* NC_BIAS may be NULL */
    const Onnx__NodeProto *last;             /* the node computing the chain's result */
} norm_chain;

/* Whether n is a default-domain op_type node of one named output and at
 * least one input. */
static bool is_op(const Onnx__NodeProto *n, const char *op_type)
{
    return n && n->op_type && strcmp(n->op_type, op_type) == 0 && (!n->domain || !*n->domain) &&
           n->n_output == 1 && *n->output[0] && n->n_input >= 1;
}

/* The op_type node computing name, when exactly `count` nodes read it. */
static const Onnx__NodeProto *producer_read(const fe_map *producer, const fe_map *readers,
                                             const char *name, const char *op_type,
                                             intptr_t count)
{
    const Onnx__NodeProto *n = fe_map_get(producer, name);
    return is_op(n, op_type) && (intptr_t)fe_map_get(readers, name) == count ? n : NULL;
}

/* The op_type node of two different inputs that alone reads name (one of
 * them), and in *other its other input; else NULL. */
static const Onnx__NodeProto *sole_reader(const fe_map *readers, const fe_map *reader,
                                          const char *name, const char *op_type,
                                          const char **other)
{
    const Onnx__NodeProto *n = fe_map_get(reader, name);
    if ((intptr_t)fe_map_get(readers, name) != 1 || !is_op(n, op_type) || n->n_input != 2 ||
        strcmp(n->input[0], n->input[1]) == 0)
        return NULL;
    *other = n->input[strcmp(n->input[0], name) == 0 ? 1 : 0];
    return n;
}

/* The chain ending in the Div node dv into *c, or false (the wiring only:
 * the constants are checked when the chain is imported, norm_chain_axis). */
static bool norm_chain_at(const fe_map *producer, const fe_map *readers, const fe_map *reader,
                          const Onnx__NodeProto *dv, norm_chain *c)
{
    memset(c, 0, sizeof *c);
    if (!is_op(dv, "Div") || dv->n_input != 2)
        return false;
    const Onnx__NodeProto **n = c->node;
    n[NC_DIV] = dv;
    n[NC_SQRT] = producer_read(producer, readers, dv->input[1], "Sqrt", 1);
    n[NC_ADD_EPS] = n[NC_SQRT] && n[NC_SQRT]->n_input == 1
                        ? producer_read(producer, readers, n[NC_SQRT]->input[0], "Add", 1) : NULL;
    for (size_t k = 0; n[NC_ADD_EPS] && n[NC_ADD_EPS]->n_input == 2 && k < 2 && !n[NC_VAR]; k++)
        n[NC_VAR] = producer_read(producer, readers, n[NC_ADD_EPS]->input[k], "ReduceMean", 1);
    n[NC_POW] = n[NC_VAR] ? producer_read(producer, readers, n[NC_VAR]->input[0], "Pow", 1)
                          : NULL;
    n[NC_SUB] = producer_read(producer, readers, dv->input[0], "Sub", 2);
    if (!n[NC_POW] || n[NC_POW]->n_input != 2 || !n[NC_SUB] || n[NC_SUB]->n_input != 2 ||
        strcmp(n[NC_POW]->input[0], dv->input[0]) != 0)
        return false;
    n[NC_MEAN] = producer_read(producer, readers, n[NC_SUB]->input[1], "ReduceMean", 1);
    if (!n[NC_MEAN] || strcmp(n[NC_MEAN]->input[0], n[NC_SUB]->input[0]) != 0)
        return false;
    const char *scale, *bias;
    n[NC_SCALE] = sole_reader(readers, reader, dv->output[0], "Mul", &scale);
    if (!n[NC_SCALE])
        return false;
    n[NC_BIAS] = sole_reader(readers, reader, n[NC_SCALE]->output[0], "Add", &bias);
    c->last = n[NC_BIAS] ? n[NC_BIAS] : n[NC_SCALE];
    return true;
}

/* Every chain of the graph, each node's first output mapped to its chain
 * (x->norm_chain). */
static void find_norm_chains(ox *x, const Onnx__GraphProto *g, const fe_map *readers,
                             const fe_map *reader)
{
    fe_map producer = {0};   /* output name -> its node */
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (*g->node[i]->output[k])
                fe_map_put(x->a, &producer, g->node[i]->output[k], (void *)g->node[i]);
    for (size_t i = 0; i < g->n_node; i++) {
        norm_chain c;
        if (!norm_chain_at(&producer, readers, reader, g->node[i], &c))
            continue;
        norm_chain *kept = ir_alloc(x->a, sizeof *kept);
        *kept = c;
        for (int k = 0; k < NC_NODES; k++)
            if (c.node[k])
                fe_map_put(x->a, &x->norm_chain, c.node[k]->output[0], kept);
    }
}

/* The chain node n is in, or NULL. */
static const norm_chain *norm_chain_of(ox *x, const Onnx__NodeProto *n)
{
    const norm_chain *c = n->n_output ? fe_map_get(&x->norm_chain, n->output[0]) : NULL;
    for (int k = 0; c && k < NC_NODES; k++)
        if (c->node[k] == n)
            return c;
    return NULL;
}

/* The first axis of the ReduceMean node rm when it averages x's axes from
 * there to the last and keeps them (as 1), else -1. */
static int trailing_mean_axis(ox *x, const Onnx__NodeProto *rm, const ox_value *in)
{
    ox_node nd = {.x = x, .n = rm, .opset = x->opset};
    const int64_t *attr;
    int64_t axes[RT_MAX_DIMS];
    int n = ox_attr_ints(&nd, "axes", &attr);
    if (n > RT_MAX_DIMS || ox_attr_int(&nd, "keepdims", 1) != 1)
        return -1;
    memcpy(axes, attr, sizeof *axes * (size_t)n);
    if (rm->n_input == 2 && *rm->input[1]) {   /* opset 18 on: axes as an input */
        const ox_value *a = find_value(x, rm->input[1]);
        if (n || !a || !a->konst || ir_dtype_is_float(a->konst->dtype) ||
            rt_tensor_numel(a->konst) > RT_MAX_DIMS)
            return -1;
        n = (int)rt_tensor_numel(a->konst);
        for (int k = 0; k < n; k++)
            axes[k] = rt_tensor_get_int(a->konst, k);
    } else if (rm->n_input != 1) {
        return -1;
    }
    if (n == 0)   /* every axis, unless the node is then the identity */
        return ox_attr_int(&nd, "noop_with_empty_axes", 0) ? -1 : 0;
    bool seen[RT_MAX_DIMS] = {0};
    int first = in->ndim;
    for (int k = 0; k < n; k++) {
        int64_t a = axes[k] < 0 ? axes[k] + in->ndim : axes[k];
        if (a < 0 || a >= in->ndim || seen[a])
            return -1;
        seen[a] = true;
        first = a < first ? (int)a : first;
    }
    return first + n == in->ndim ? first : -1;
}

/* A constant of one element and at most `ndim` dimensions, or NULL (one
 * of more dimensions than the chain's input would broadcast the chain's
 * result to more dimensions than the layer norm's: Pow(d, [[[2]]]) of a
 * matrix). */
static const rt_tensor *scalar_const(ox *x, const char *name, int ndim)
{
    const ox_value *v = find_value(x, name);
    return v && v->konst && rt_tensor_numel(v->konst) == 1 && v->ndim <= ndim ? v->konst : NULL;
}

/* Whether v is of dtype t and broadcasts to x's shape without changing it. */
static bool broadcasts_to(const ox_value *v, const ox_value *x)
{
    bool fits = v && v->dtype == x->dtype && v->ndim <= x->ndim;
    for (int d = 0; fits && d < v->ndim; d++)
        fits = v->shape[d] == 1 || v->shape[d] == x->shape[x->ndim - v->ndim + d];
    return fits;
}

/* The other input of the two-input node n than name. */
static const char *other_input(const Onnx__NodeProto *n, const char *name)
{
    return n->input[strcmp(n->input[0], name) == 0 ? 1 : 0];
}

/* The chain's LayerNormalization axis, and its epsilon in *eps, when its
 * values fit one (x f32, both means over the same last axes, the exponent
 * 2 and eps an f32 scalar, each of at most x's rank, scale and bias of x's
 * dtype broadcast to it); else -1, and its nodes import one by one. */
static int norm_chain_axis(ox *x, const norm_chain *c, float *eps)
{
    const Onnx__NodeProto *const *n = c->node;
    const ox_value *in = find_value(x, n[NC_MEAN]->input[0]);
    if (!in || in->dtype != IR_F32 || in->ndim < 1 || ox_known(in))
        return -1;
    int axis = trailing_mean_axis(x, n[NC_MEAN], in);
    const rt_tensor *two = scalar_const(x, n[NC_POW]->input[1], in->ndim);
    const char *v = n[NC_VAR]->output[0];
    const rt_tensor *e = scalar_const(x, other_input(n[NC_ADD_EPS], v), in->ndim);
    if (axis < 0 || trailing_mean_axis(x, n[NC_VAR], in) != axis || !two ||
        rt_tensor_get(two, 0) != 2 || !e || e->dtype != IR_F32 ||
        !broadcasts_to(find_value(x, other_input(n[NC_SCALE], n[NC_DIV]->output[0])), in) ||
        (n[NC_BIAS] &&
         !broadcasts_to(find_value(x, other_input(n[NC_BIAS], n[NC_SCALE]->output[0])), in)))
        return -1;
    *eps = (float)rt_tensor_get(e, 0);
    return axis;
}

/* The LayerNormalization node a chain imports as, with its attributes and
 * name lists: in the import's arena, not on the stack, since the value it
 * computes keeps it as its producer (ox_output) for the nodes that read
 * the value later (a DequantizeLinear test looks at its op_type). */
typedef struct norm_node {
    Onnx__NodeProto node;
    Onnx__AttributeProto axis, eps, *attrs[2];
    char *ins[3], *outs[1];
} norm_node;

/* The chain as one LayerNormalization node named after its Div's scope
 * ("/enc/ln_1/Div": "/enc/ln_1/LayerNormalization"), or its nodes one by
 * one when its values do not fit one. */
static bool import_norm_chain(ox *x, const norm_chain *c)
{
    float eps;
    int axis = norm_chain_axis(x, c, &eps);
    if (axis < 0) {
        for (int k = 0; k < NC_NODES; k++)
            if (c->node[k] && !import_node(x, c->node[k]))
                return false;
        return true;
    }
    const Onnx__NodeProto *const *n = c->node;
    norm_node *f = ir_alloc(x->a, sizeof *f);
    f->axis = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
    f->axis.name = "axis";
    f->axis.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    f->axis.has_i = 1;
    f->axis.i = axis;
    f->eps = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
    f->eps.name = "epsilon";
    f->eps.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    f->eps.has_f = 1;
    f->eps.f = eps;
    f->attrs[0] = &f->axis;
    f->attrs[1] = &f->eps;
    f->ins[0] = n[NC_MEAN]->input[0];
    f->ins[1] = (char *)other_input(n[NC_SCALE], n[NC_DIV]->output[0]);
    f->ins[2] = n[NC_BIAS] ? (char *)other_input(n[NC_BIAS], n[NC_SCALE]->output[0]) : "";
    f->outs[0] = c->last->output[0];
    const char *div = n[NC_DIV]->name ? n[NC_DIV]->name : "";
    const char *slash = strrchr(div, '/');
    f->node = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
    f->node.name = ir_sprintf(x->a, "%.*sLayerNormalization",
                              slash ? (int)(slash - div + 1) : 0, div);
    f->node.op_type = "LayerNormalization";
    f->node.n_input = n[NC_BIAS] ? 3 : 2;
    f->node.input = f->ins;
    f->node.n_output = 1;
    f->node.output = f->outs;
    f->node.n_attribute = 2;
    f->node.attribute = f->attrs;
    return import_node(x, &f->node);
}

/* A min-heap of node indices: of the nodes ready to import, the first
 * listed goes first, so a model in topological order keeps its order. */
typedef struct ox_heap {
    size_t *v;
    size_t n;
} ox_heap;

static void heap_push(ox_heap *h, size_t i)
{
    size_t k = h->n++;
    while (k && h->v[(k - 1) / 2] > i) {
        h->v[k] = h->v[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    h->v[k] = i;
}

static size_t heap_pop(ox_heap *h)
{
    size_t top = h->v[0], last = h->v[--h->n], k = 0;
    for (;;) {
        size_t c = 2 * k + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->v[c + 1] < h->v[c])
            c++;
        if (h->v[c] >= last)
            break;
        h->v[k] = h->v[c];
        k = c;
    }
    if (h->n)
        h->v[k] = last;
    return top;
}

/* Calls fn(ctx, name) for each input that the nodes of n's subgraphs (an
 * If's branches, a Loop's body; GRAPH and GRAPHS attributes, and theirs
 * in turn) name: the values of the enclosing graphs they read by name,
 * which are no inputs of n itself, and their own. */
static void subgraph_reads(const Onnx__NodeProto *n, void (*fn)(void *ctx, const char *name),
                           void *ctx)
{
    for (size_t a = 0; a < n->n_attribute; a++) {
        const Onnx__AttributeProto *at = n->attribute[a];
        size_t ng = at->g ? 1 : at->n_graphs;
        for (size_t k = 0; k < ng; k++) {
            const Onnx__GraphProto *g = at->g ? at->g : at->graphs[k];
            for (size_t i = 0; g && i < g->n_node; i++) {
                for (size_t j = 0; j < g->node[i]->n_input; j++)
                    if (*g->node[i]->input[j])
                        fn(ctx, g->node[i]->input[j]);
                subgraph_reads(g->node[i], fn, ctx);
            }
        }
    }
}

static void count_read(void *ctx, const char *name)
{
    (void)name;
    (*(size_t *)ctx)++;
}

/* The dependency edges of import_graph: node -> each node producing a
 * value it reads. */
typedef struct ox_edges {
    ox *x;
    const fe_map *producer;      /* output name -> (void *)(node index + 1) */
    size_t node;                 /* the reader */
    size_t *pending, *first, *edge_node, *edge_from;
    size_t e;
} ox_edges;

/* A value that a subgraph of the node reads: an edge from the node of this
 * graph that computes it (a value of the subgraph itself, or of a graph
 * around this one, is no edge). */
static void subgraph_edge(void *ctx, const char *in)
{
    ox_edges *c = ctx;
    uintptr_t p = (uintptr_t)fe_map_get(c->producer, in);
    if (!p || p - 1 == c->node || find_value(c->x, in))
        return;
    c->pending[c->node]++;
    c->edge_from[c->e] = p - 1;
    c->edge_node[c->e++] = c->node;
    c->first[p]++;
}

/* Reports the first node (in the listed order) that never became ready. */
static void report_stuck(ox *x, const Onnx__GraphProto *g, const bool *done)
{
    for (size_t i = 0; i < g->n_node; i++) {
        if (done[i])
            continue;
        const Onnx__NodeProto *bad = g->node[i];
        for (size_t k = 0; k < bad->n_input; k++)
            if (*bad->input[k] && !find_value(x, bad->input[k])) {
                ox_node nd = {.x = x, .n = bad, .opset = x->opset};
                ox_fail(&nd, "input '%s' is not a graph input, an initializer or the output of "
                        "a node that can run before it (is there a cycle?)", bad->input[k]);
                return;
            }
    }
}

/* The nodes in an order where every input is defined first (ONNX requires
 * the given order to be one; a model that breaks the rule is still read),
 * or false with an error naming a node whose input never appears.  Linear
 * in the model's size (Kahn's algorithm over a table of producers). */
static bool import_graph(ox *x, const Onnx__GraphProto *g)
{
    size_t n = g->n_node, nedges = 0;
    if (n > OX_MAX_NODES)
        return model_error(x, "the graph has %zu nodes: tec reads at most %d", n, OX_MAX_NODES);
    for (size_t i = 0; i < n; i++) {
        nedges += g->node[i]->n_input;
        subgraph_reads(g->node[i], count_read, &nedges);
    }
    ir_arena *a = ir_arena_new();
    fe_map producer = {0};       /* output name -> (void *)(node index + 1) */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (*g->node[i]->output[k] && !fe_map_get(&producer, g->node[i]->output[k]))
                fe_map_put(a, &producer, g->node[i]->output[k], (void *)(uintptr_t)(i + 1));
    /* the consumers of each node, one entry per input naming its output */
    size_t *pending = calloc(n + 1, sizeof *pending), *first = calloc(n + 2, sizeof *first);
    size_t *edge_node = malloc((nedges + 1) * sizeof *edge_node);
    size_t *edge_from = malloc((nedges + 1) * sizeof *edge_from);
    bool *done = calloc(n + 1, 1);
    ox_heap h = {malloc((n + 1) * sizeof *h.v), 0};
    if (!pending || !first || !edge_node || !edge_from || !done || !h.v)
        ir_out_of_memory();
    ox_edges c = {x, &producer, 0, pending, first, edge_node, edge_from, 0};
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < g->node[i]->n_input; k++) {
            const char *in = g->node[i]->input[k];
            if (!*in || find_value(x, in))
                continue;
            uintptr_t p = (uintptr_t)fe_map_get(&producer, in);
            pending[i]++;            /* never met when nothing produces it */
            if (p) {
                edge_from[c.e] = p - 1;
                edge_node[c.e++] = i;
                first[p]++;
            }
        }
        /* an If's branches read values of this graph by name: they are
         * computed before it */
        c.node = i;
        subgraph_reads(g->node[i], subgraph_edge, &c);
    }
    size_t e = c.e;
    for (size_t i = 1; i <= n + 1; i++)   /* counts -> starts (CSR by producer) */
        first[i] += first[i - 1];
    size_t *adj = malloc((e + 1) * sizeof *adj), *fill = calloc(n + 1, sizeof *fill);
    if (!adj || !fill)
        ir_out_of_memory();
    for (size_t j = 0; j < e; j++)
        adj[first[edge_from[j]] + fill[edge_from[j]]++] = edge_node[j];
    for (size_t i = 0; i < n; i++)
        if (!pending[i])
            heap_push(&h, i);
    bool ok = true;
    size_t ndone = 0;
    while (ok && h.n) {
        size_t i = heap_pop(&h);
        done[i] = true;
        ndone++;
        /* a layer norm's nodes import with its last (import_norm_chain) */
        const norm_chain *c = norm_chain_of(x, g->node[i]);
        if (c && g->node[i] != c->last)
            ;
        else if (!(c ? import_norm_chain(x, c) : import_node(x, g->node[i])))
            ok = false;
        else if (x->nlines > FE_MAX_CALLS)
            /* (nodes folded at import, shape arithmetic and constants,
             * make no layer: a graph may have more nodes than layers) */
            ok = model_error(x, "the graph makes more than %d layers (node '%s' is one past "
                             "them): tec imports at most %d", FE_MAX_CALLS,
                             node_name(g->node[i]), FE_MAX_CALLS);
        for (size_t j = first[i]; ok && j < first[i + 1]; j++)
            if (--pending[adj[j]] == 0)
                heap_push(&h, adj[j]);
    }
    if (ok && ndone < n) {
        report_stuck(x, g, done);
        ok = false;
    }
    free(pending);
    free(first);
    free(edge_node);
    free(edge_from);
    free(done);
    free(h.v);
    free(adj);
    free(fill);
    ir_arena_free(a);
    return ok;
}

static bool import_outputs(ox *x, const Onnx__GraphProto *g)
{
    if (g->n_output == 0)
        return model_error(x, "the graph has no outputs");
    /* how many outputs share each value's storage (the value, or views of
     * it): an identity view (a Reshape or Transpose that changes nothing)
     * is its value itself, so two such outputs need a copy to be two */
    if (!x->a)
        x->a = ir_arena_new();
    fe_map sharing = {0};
    for (size_t i = 0; i < g->n_output; i++) {
        const ox_value *v = g->output[i]->name ? find_value(x, g->output[i]->name) : NULL;
        if (v && v->view_of)
            v = v->view_of;
        if (v)
            fe_map_put(x->a, &sharing, v->onnx,
                       (void *)((intptr_t)fe_map_get(&sharing, v->onnx) + 1));
    }
    for (size_t i = 0; i < g->n_output; i++) {
        const char *name = g->output[i]->name ? g->output[i]->name : "";
        ox_value *v = find_value(x, name);
        if (!v)
            return model_error(x, "graph output '%s' is not computed by any node", name);
        if (v->graph_output)
            return model_error(x, "graph output '%s' is listed twice", name);
        if (v->seq)
            return model_error(x, "graph output '%s' is a sequence: tec's outputs are tensors "
                               "(ConcatFromSequence or SequenceAt makes one of it)", name);
        bool is_input = v->graph_input;
        bool shared = v->view_of && (intptr_t)fe_map_get(&sharing, v->view_of->onnx) > 1;
        if (!v->id || v->konst || is_input || v->view_of_input || shared) {
            /* a constant, a graph input or a view of another output as an
             * output: a copy makes it one */
            Onnx__NodeProto fake = ONNX__NODE_PROTO__INIT;
            char *outs[1] = {(char *)name};
            char *ins[1] = {(char *)name};
            fake.name = (char *)name;
            fake.op_type = "Identity";
            fake.n_input = fake.n_output = 1;
            fake.input = ins;
            fake.output = outs;
            ox_value *in[1] = {v};
            ox_node nd = {.x = x, .n = &fake, .opset = x->opset, .in = in, .nin = 1};
            nd.layer = fresh_layer(x, name);
            if (!ox_copy(&nd))
                return false;
            v = x->vals[x->nvals - 1];
        }
        v->graph_output = true;
        /* the output keeps its ONNX name where a file name (--save-outputs)
         * may be it; slashes become dots, as in layer names
         * ("/fc/Gemm_output_0" is fc.Gemm_output_0) */
        char file[256];
        size_t k = 0;
        for (const char *p = name; *p && k + 1 < sizeof file; p++)
            if (*p != '/' || (k && file[k - 1] != '.'))
                file[k++] = *p == '/' ? '.' : *p;
        while (k && file[k - 1] == '.')
            k--;
        file[k] = 0;
        bool plain = *file && file[0] != '.' && !strstr(file, "..") && strlen(name) < 255 &&
                     !is_input;   /* an output is named apart from the inputs: its copy's name */
        for (const char *p = file; *p; p++)
            plain = plain && *p > ' ' && *p < 127 && !strchr("\"\\{}", *p);
        ox_printf(&x->body, "output %s as \"%s\"\n", v->id, plain ? file : v->id);
    }
    return true;
}

static void free_ox(ox *x)
{
    for (int i = 0; i < x->nvals; i++) {
        if (!x->vals[i]->lent)
            rt_tensor_free(x->vals[i]->konst);
        free(x->vals[i]);
    }
    free(x->vals);
    free_names(&x->ids);
    free_names(&x->layers);
    free_names(&x->lets);
    for (int i = 0; i < x->ndefs; i++) {
        free(x->defs[i].name);
        free(x->defs[i].text);
    }
    free(x->defs);
    free(x->head.s);
    free(x->defs_text.s);
    free(x->body.s);
    free(x->dir);
    free(x->blocks.p);
    free(x->blocks.n);
    if (x->a)
        ir_arena_free(x->a);
}

/* count_readers' tables, and the node whose subgraphs are read. */
typedef struct ox_readers {
    ox *x;
    fe_map *readers, *reader;
    const Onnx__NodeProto *node;
} ox_readers;

/* A value a subgraph of c->node reads: read by c->node (so that no pair
 * or chain takes it as read by one node of this graph alone). */
static void count_subgraph_reader(void *ctx, const char *in)
{
    ox_readers *c = ctx;
    fe_map_put(c->x->a, c->readers, in, (void *)((intptr_t)fe_map_get(c->readers, in) + 1));
    fe_map_put(c->x->a, c->reader, in, (void *)c->node);
}

/* How many nodes read each value (readers: name -> (void *)(intptr_t) the
 * count, a graph output counting 2 more) and the last node that does
 * (reader: name -> the node); a node naming a value twice in a row reads
 * it once, and a value its subgraphs read (an If's branches) is read by
 * it. */
static void count_readers(ox *x, const Onnx__GraphProto *g, fe_map *readers, fe_map *reader)
{
    if (!x->a)
        x->a = ir_arena_new();
    for (size_t i = 0; i < g->n_node; i++) {
        for (size_t k = 0; k < g->node[i]->n_input; k++) {
            const char *in = g->node[i]->input[k];
            if (!*in || (k && strcmp(in, g->node[i]->input[k - 1]) == 0))
                continue;
            fe_map_put(x->a, readers, in, (void *)((intptr_t)fe_map_get(readers, in) + 1));
            fe_map_put(x->a, reader, in, (void *)g->node[i]);
        }
        ox_readers c = {x, readers, reader, g->node[i]};
        subgraph_reads(g->node[i], count_subgraph_reader, &c);
    }
    for (size_t i = 0; i < g->n_output; i++)
        if (g->output[i]->name)
            fe_map_put(x->a, readers, g->output[i]->name,
                       (void *)((intptr_t)fe_map_get(readers, g->output[i]->name) + 2));
}

/* The node that reads value `name` as its input X (its first) and as no
 * other input, when it is the one node reading name and is a Conv, an
 * AveragePool or a MaxPool of the default domain; else NULL. */
static const Onnx__NodeProto *window_reader(fe_map *readers, fe_map *reader, const char *name)
{
    if (!*name || (intptr_t)fe_map_get(readers, name) != 1)
        return NULL;
    const Onnx__NodeProto *q = fe_map_get(reader, name);
    if (!q->op_type || (q->domain && *q->domain) || q->n_input < 1 ||
        strcmp(q->input[0], name) != 0 ||
        (strcmp(q->op_type, "Conv") != 0 && strcmp(q->op_type, "AveragePool") != 0 &&
         strcmp(q->op_type, "MaxPool") != 0))
        return NULL;
    for (size_t k = 1; k < q->n_input; k++)
        if (strcmp(q->input[k], name) == 0)
            return NULL;
    return q;
}

/* Pairs of nodes that import as one: PyTorch's SiLU, x * sigmoid(x), is a
 * Sigmoid node whose output only a Mul of x and it reads (each such
 * Sigmoid's output goes into x->silu); a MaxPool whose one output only a
 * QuantizeLinear reads, as its input x (x->pool_quant); a Pad whose output
 * only a Conv or pool reads, as its X (x->pad_reader: PyTorch exports
 * avg_pool2d's padding as a Pad before an AveragePool); a Where whose
 * output only a Softmax reads (x->where_softmax: a masked attention's); a
 * Div or Mul whose output only a MatMul reads (x->scale_reader: ViT's
 * query scaled before its product with the keys). */
static void find_pairs(ox *x, const Onnx__GraphProto *g, fe_map *readers, fe_map *reader)
{
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (n->op_type && strcmp(n->op_type, "Where") == 0 && (!n->domain || !*n->domain) &&
            n->n_output == 1 && *n->output[0] &&
            (intptr_t)fe_map_get(readers, n->output[0]) == 1) {
            const Onnx__NodeProto *q = fe_map_get(reader, n->output[0]);
            if (q->op_type && strcmp(q->op_type, "Softmax") == 0 && (!q->domain || !*q->domain) &&
                q->n_input == 1 && strcmp(q->input[0], n->output[0]) == 0)
                fe_map_put(x->a, &x->where_softmax, n->output[0], (void *)q);
            continue;
        }
        if (n->op_type && (strcmp(n->op_type, "Div") == 0 || strcmp(n->op_type, "Mul") == 0) &&
            (!n->domain || !*n->domain) && n->n_input == 2 && n->n_output == 1 &&
            *n->output[0] && (intptr_t)fe_map_get(readers, n->output[0]) == 1) {
            const Onnx__NodeProto *q = fe_map_get(reader, n->output[0]);
            if (q->op_type && strcmp(q->op_type, "MatMul") == 0 && (!q->domain || !*q->domain) &&
                q->n_input == 2 &&
                (strcmp(q->input[0], n->output[0]) == 0) != (strcmp(q->input[1], n->output[0]) == 0))
                fe_map_put(x->a, &x->scale_reader, n->output[0], (void *)q);
        }
        if (n->op_type && strcmp(n->op_type, "Pad") == 0 && (!n->domain || !*n->domain) &&
            n->n_output == 1) {
            const Onnx__NodeProto *q = window_reader(readers, reader, n->output[0]);
            if (q)
                fe_map_put(x->a, &x->pad_reader, n->output[0], (void *)q);
            continue;
        }
        if (n->op_type && strcmp(n->op_type, "MaxPool") == 0 && (!n->domain || !*n->domain) &&
            n->n_input >= 1 && (n->n_output == 1 || (n->n_output == 2 && !*n->output[1])) &&
            *n->output[0] && (intptr_t)fe_map_get(readers, n->output[0]) == 1) {
            const Onnx__NodeProto *q = fe_map_get(reader, n->output[0]);
            if (q->op_type && strcmp(q->op_type, "QuantizeLinear") == 0 &&
                (!q->domain || !*q->domain) && q->n_input >= 2 &&
                strcmp(q->input[0], n->output[0]) == 0)
                fe_map_put(x->a, &x->pool_quant, n->output[0], (void *)q);
            continue;
        }
        if (!n->op_type ||
            (strcmp(n->op_type, "Sigmoid") != 0 && strcmp(n->op_type, "HardSigmoid") != 0) ||
            (n->domain && *n->domain) ||
            n->n_input != 1 || n->n_output != 1 || !*n->input[0] || !*n->output[0])
            continue;
        const Onnx__NodeProto *mul = fe_map_get(reader, n->output[0]);
        if ((intptr_t)fe_map_get(readers, n->output[0]) != 1 || !mul->op_type ||
            strcmp(mul->op_type, "Mul") != 0 || (mul->domain && *mul->domain) ||
            mul->n_input != 2)
            continue;
        int s = strcmp(mul->input[0], n->output[0]) == 0 ? 0 : 1;
        if (strcmp(mul->input[s], n->output[0]) == 0 && strcmp(mul->input[1 - s], n->input[0]) == 0)
            fe_map_put(x->a, &x->silu, n->output[0], (void *)n);
    }
}

bool ox_silu_pair(ox_node *nd)
{
    return nd->n->n_output == 1 && fe_map_get(&nd->x->silu, nd->n->output[0]) == nd->n;
}

const Onnx__NodeProto *ox_scale_reader(ox_node *nd)
{
    return nd->n->n_output == 1 ? fe_map_get(&nd->x->scale_reader, nd->n->output[0]) : NULL;
}

const Onnx__NodeProto *ox_where_softmax(ox_node *nd)
{
    return nd->n->n_output == 1 ? fe_map_get(&nd->x->where_softmax, nd->n->output[0]) : NULL;
}

const Onnx__NodeProto *ox_pad_reader(ox_node *nd)
{
    return nd->n->n_output == 1 ? fe_map_get(&nd->x->pad_reader, nd->n->output[0]) : NULL;
}

const Onnx__NodeProto *ox_pool_quantizer(ox_node *nd)
{
    return nd->n->n_output >= 1 ? fe_map_get(&nd->x->pool_quant, nd->n->output[0]) : NULL;
}

ox_value *ox_value_named(ox_node *nd, const char *name)
{
    return name && *name ? find_value(nd->x, name) : NULL;
}

/* The model file's bytes: mapped (a regular file; *mapped its length), else
 * read (*mapped 0); NULL with errno set. */
static unsigned char *model_bytes(const char *path, size_t *len, size_t *mapped)
{
    *mapped = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < (uint64_t)1 << 31) {
        /* The page cache's pages themselves, not a copy of them in fresh
         * memory (a model's weights are most of it: MobileNetV3, 22 MB). */
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            *len = *mapped = (size_t)st.st_size;
            return p;
        }
    }
    if (fd >= 0)
        close(fd);
    return read_file(path, len);
}

static Onnx__ModelProto *load_model(ox *x, ProtobufCAllocator *pa)
{
    size_t len = 0, mapped;
    unsigned char *buf = model_bytes(x->path, &len, &mapped);
    if (!buf) {
        diag_error(x->d, diag_noloc(), "cannot read %s: %s", x->path,
                   errno == EFBIG ? "larger than 2 GiB, protobuf's limit" : strerror(errno));
        return NULL;
    }
    /* every field is copied out of the bytes: they go now */
    Onnx__ModelProto *m = onnx__model_proto__unpack(pa, len, buf);
    if (mapped)
        munmap(buf, mapped);
    else
        free(buf);
    if (!m) {
        model_error(x, "not an ONNX model: the file does not parse as an ONNX ModelProto "
                    "(truncated, or not protobuf)");
        return NULL;
    }
    int64_t opset = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = m->opset_import[i];
        if (!op->domain || !*op->domain || strcmp(op->domain, "ai.onnx") == 0)
            opset = op->has_version ? op->version : 0;
    }
    x->opset = opset >= OX_MIN_OPSET && opset <= OX_MAX_OPSET ? (int)opset : 0;
    if (opset == -1)
        model_error(x, "the model imports no opset of the default ONNX domain");
    else if (!x->opset)
        model_error(x, "opset %lld is not supported (tec imports opsets %d to %d)",
                    (long long)opset, OX_MIN_OPSET, OX_MAX_OPSET);
    else if (!m->graph)
        model_error(x, "the model has no graph");
    else
        return m;
    onnx__model_proto__free_unpacked(m, pa);
    return NULL;
}

/* The readers of each initializer (ox_value.uses), of g's nodes and their
 * subgraphs'; an Identity's output is a copy with readers of its own
 * (exporters write one initializer for equal ones).  With own, only those
 * of x->vals[own..] (a branch's initializers, counted when it imports). */
static void count_uses(ox *x, const Onnx__GraphProto *g, const ox_value *const *vals, int own)
{
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        for (size_t k = 0; k < n->n_input; k++) {
            if (n->op_type && strcmp(n->op_type, "Identity") == 0)
                continue;
            ox_value *v = *n->input[k] ? find_value(x, n->input[k]) : NULL;
            bool counted = !vals;
            for (int j = own; vals && v && j < x->nvals && !counted; j++)
                counted = vals[j] == v;
            if (v && counted)
                v->uses++;
        }
        for (size_t a = 0; a < n->n_attribute; a++) {
            const Onnx__AttributeProto *at = n->attribute[a];
            for (size_t k = 0; k < (at->g ? 1 : at->n_graphs); k++)
                count_uses(x, at->g ? at->g : at->graphs[k], vals, own);
        }
    }
}

/* g's initializers as values known at import time; false after an error.
 * branch: g is an If's branch or a Loop's body, whose names may not be the
 * enclosing graphs' (the main graph's later initializer of a name replaces
 * an earlier one, as before).  adopt: a tensor may take its initializer's
 * raw data over (not so for a Loop's body, whose initializers are declared
 * once per iteration from the same data). */
static bool declare_initializers(ox *x, const Onnx__GraphProto *g, bool branch, bool adopt)
{
    for (size_t i = 0; i < g->n_initializer; i++) {
        Onnx__TensorProto *t = g->initializer[i];
        char err[512];
        if (!t->name || !*t->name)
            return model_error(x, "initializer %zu has no name", i);
        if (branch && find_value(x, t->name))
            return model_error(x, "initializer '%s' is already defined (each tensor must be "
                               "defined once)", t->name);
        ox_value *v = new_value(x, t->name);
        if (!(adopt && (v->konst = adopt_raw(x, t))) &&
            !(v->konst = tensor_from_proto(x, t, err, sizeof err)))
            return model_error(x, "initializer '%s': %s", t->name, err);
        v->weight = true;
        v->wide_unsigned = ox_wide_unsigned(t->data_type) ? t->data_type : 0;
        v->dtype = v->konst->dtype;
        v->ndim = v->konst->ndim;
        memcpy(v->shape, v->konst->shape, sizeof v->shape);
    }
    return true;
}

/* ---------------------------------------------------------------- If
 *
 * An If whose condition is known at import time.  PyTorch exports
 * x.squeeze(d) of a dimension whose size its shape inference did not fix
 * (LocalResponseNorm's, a scripted function's) as
 *     If(Equal(Gather(Shape(x), d), 1), then: Squeeze(x, d), else: Identity(x))
 * and with the shapes tec knows the condition folds.  The branch taken
 * imports in place, its nodes reading the enclosing graph's values by name
 * (import_graph orders the If after their producers), and each output of
 * the If is an Identity of the branch's output: a view, no copy.  A
 * condition computed at run time is refused: tec compiles one program. */
bool ox_op_if(ox_node *nd, const void *arg)
{
    (void)arg;
    ox_value *cond = ox_input(nd, 0);
    if (!cond)
        return false;
    if (!cond->konst) {   /* (a graph input given a file is known: the program is specialized) */
        ox_str chain = {0};
        dynamic_chain(nd->x, cond, &chain);
        ox_fail(nd, "the condition ('%s') is computed at run time: tec imports an If only when "
                "its condition is known at import time (from shapes or constants): %s",
                cond->onnx, chain.s);
        free(chain.s);
        return false;
    }
    if (ir_dtype_is_float(cond->dtype) || rt_tensor_numel(cond->konst) != 1)
        return ox_fail(nd, "the condition ('%s') must be one bool", cond->onnx);
    const char *which = rt_tensor_get_int(cond->konst, 0) ? "then_branch" : "else_branch";
    const Onnx__AttributeProto *at = ox_attr(nd, which);
    const Onnx__GraphProto *g = at ? at->g : NULL;
    if (!g)
        return ox_fail(nd, "the condition is %s but the node has no graph attribute %s",
                       strcmp(which, "then_branch") == 0 ? "true" : "false", which);
    int nout = ox_noutputs(nd);
    if (g->n_input)
        return ox_fail(nd, "%s has %zu inputs (an If's branches have none)", which, g->n_input);
    if (g->n_output != (size_t)nout)
        return ox_fail(nd, "%s has %zu outputs but the node %d", which, g->n_output, nout);
    ox *x = nd->x;
    int own = x->nvals;
    if (!declare_initializers(x, g, true, true))
        return false;
    count_uses(x, g, (const ox_value *const *)x->vals, own);
    if (!import_graph(x, g))
        return false;
    for (int i = 0; i < nout; i++) {
        const char *inner = g->output[i]->name ? g->output[i]->name : "";
        if (!*nd->n->output[i])
            continue;
        if (!find_value(x, inner))
            return ox_fail(nd, "%s's output '%s' is not computed by any of its nodes", which,
                           inner);
        Onnx__NodeProto *id = ir_alloc(x->a, sizeof *id);
        onnx__node_proto__init(id);
        char **ins = ir_alloc(x->a, sizeof *ins), **outs = ir_alloc(x->a, sizeof *outs);
        ins[0] = ir_strdup(x->a, inner);
        outs[0] = nd->n->output[i];
        id->name = ir_sprintf(x->a, "%s/%s", node_name(nd->n), which);   /* "if.then_branch" */
        id->op_type = "Identity";
        id->n_input = id->n_output = 1;
        id->input = ins;
        id->output = outs;
        if (!import_node(x, id))
            return false;
    }
    return true;
}

/* ---------------------------------------------------------------- steps */

/* A new value's name for a step of nd: "<node>/Concat_output_7", no name
 * of the model's. */
static char *step_name(ox_node *nd, const char *op_type)
{
    ox *x = nd->x;
    char *s;
    do
        s = ir_sprintf(x->a, "%s/%s_output_%d", node_name(nd->n), op_type, ++x->nsteps);
    while (find_value(x, s));
    return s;
}

ox_value *ox_step(ox_node *nd, const char *op_type, int opset, ox_value *const *in, int nin,
                  const char *out, const ox_step_attr *attrs, int nattrs)
{
    ox *x = nd->x;
    Onnx__NodeProto *n = ir_alloc(x->a, sizeof *n);
    onnx__node_proto__init(n);
    char **ins = ir_alloc(x->a, sizeof *ins * (size_t)(nin + 1));
    char **outs = ir_alloc(x->a, sizeof *outs);
    for (int i = 0; i < nin; i++)
        ins[i] = in[i] ? (char *)in[i]->onnx : "";
    outs[0] = out ? ir_strdup(x->a, out) : step_name(nd, op_type);
    Onnx__AttributeProto **at = ir_alloc(x->a, sizeof *at * (size_t)(nattrs + 1));
    for (int j = 0; j < nattrs; j++) {
        at[j] = ir_alloc(x->a, sizeof *at[j]);
        onnx__attribute_proto__init(at[j]);
        at[j]->name = (char *)attrs[j].name;
        at[j]->has_type = true;
        if (attrs[j].list) {
            at[j]->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
            at[j]->n_ints = (size_t)attrs[j].n;
            at[j]->ints = ir_alloc(x->a, sizeof(int64_t) * (size_t)(attrs[j].n + 1));
            memcpy(at[j]->ints, attrs[j].v, sizeof(int64_t) * (size_t)attrs[j].n);
        } else {
            at[j]->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
            at[j]->has_i = true;
            at[j]->i = attrs[j].v[0];
        }
    }
    n->name = ir_sprintf(x->a, "%s/%s", node_name(nd->n), op_type);
    n->op_type = (char *)op_type;
    n->n_input = (size_t)nin;
    n->input = ins;
    n->n_output = 1;
    n->output = outs;
    n->n_attribute = (size_t)nattrs;
    n->attribute = at;
    if (!import_node_of(x, n, in, opset))
        return NULL;
    return find_value(x, outs[0]);
}

ox_seq *ox_seq_new(ox_node *nd, int n, ir_dtype t)
{
    ox *x = nd->x;
    ox_seq *s = ir_alloc(x->a, sizeof *s);
    s->elem = ir_alloc(x->a, sizeof *s->elem * (size_t)(n + 1));
    s->n = n;
    s->dtype = t;
    return s;
}

bool ox_seq_output(ox_node *nd, int i, const ox_seq *s)
{
    ox_value *v = ox_output(nd, i);
    v->seq = s;
    v->dtype = s->dtype;
    v->ndim = 0;
    return true;
}

/* ---------------------------------------------------------------- Loop
 *
 * A Loop whose trip count and condition are known at import time: PyTorch
 * exports a `for` over a constant range in scripted code (torch.split and
 * tensor_split over a list in MViT's attention pooling, GPT-J's rotary
 * embedding) as Loop(M, true, carried values...) whose body inserts into a
 * sequence.  The body imports once per iteration, in place as an If's
 * branch does, with its own values renamed for the iteration
 * ("<name>@loop<k>/<i>") so that each iteration defines new ones: its
 * iteration number is a constant, its carried inputs are the values the
 * iteration before computed (the initial ones first), and the body's
 * condition output, which must then be known, decides whether the next
 * iteration runs.  The Loop's outputs are the last carried values and each
 * scan output's values stacked on a new first axis.  A trip count or
 * condition computed at run time is refused: tec compiles one program of
 * fixed shapes. */

/* Most iterations a Loop unrolls (each is at least a node imported). */
#define OX_MAX_TRIPS 4096

/* The names a Loop's body defines (its inputs, initializers and node
 * outputs, and those of the graphs inside it), which each iteration
 * renames. */
typedef struct ox_rename {
    ox *x;
    fe_map defined;          /* name -> itself */
    const char *suffix;      /* "@loop3/7" */
    const char *iteration;   /* "7", added to the body's node names */
    fe_map once;             /* the body's initializers (name -> itself), declared once
                                for every iteration, as "<name>@loop3" */
    const char *once_suffix; /* "@loop3" */
} ox_rename;

static void define_name(ox_rename *r, const char *name)
{
    if (name && *name)
        fe_map_put(r->x->a, &r->defined, name, (void *)name);
}

/* Also returns the nodes of g and of the graphs inside it. */
static size_t collect_defined(ox_rename *r, const Onnx__GraphProto *g)
{
    size_t nodes = g->n_node;
    for (size_t i = 0; i < g->n_input; i++)
        define_name(r, g->input[i]->name);
    for (size_t i = 0; i < g->n_initializer; i++)
        define_name(r, g->initializer[i]->name);
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        for (size_t k = 0; k < n->n_output; k++)
            define_name(r, n->output[k]);
        for (size_t a = 0; a < n->n_attribute; a++) {
            const Onnx__AttributeProto *at = n->attribute[a];
            for (size_t k = 0; k < (at->g ? 1 : at->n_graphs); k++)
                nodes += collect_defined(r, at->g ? at->g : at->graphs[k]);
        }
    }
    return nodes;
}

static char *renamed(const ox_rename *r, const char *name)
{
    if (!name || !*name || !fe_map_get(&r->defined, name))
        return (char *)name;
    if (fe_map_get(&r->once, name))
        return ir_sprintf(r->x->a, "%s%s", name, r->once_suffix);
    return ir_sprintf(r->x->a, "%s%s", name, r->suffix);
}

static Onnx__GraphProto *renamed_graph(const ox_rename *r, const Onnx__GraphProto *g);

static Onnx__NodeProto *renamed_node(const ox_rename *r, const Onnx__NodeProto *n)
{
    ir_arena *a = r->x->a;
    Onnx__NodeProto *c = ir_alloc(a, sizeof *c);
    *c = *n;
    c->input = ir_alloc(a, sizeof *c->input * (n->n_input + 1));
    c->output = ir_alloc(a, sizeof *c->output * (n->n_output + 1));
    for (size_t k = 0; k < n->n_input; k++)
        c->input[k] = renamed(r, n->input[k]);
    for (size_t k = 0; k < n->n_output; k++)
        c->output[k] = renamed(r, n->output[k]);
    /* "/attn/pool_k/Slice/3": the layer of iteration 3 (a nameless node is
     * named by its output, renamed) */
    c->name = n->name && *n->name ? ir_sprintf(a, "%s/%s", n->name, r->iteration) : n->name;
    c->attribute = ir_alloc(a, sizeof *c->attribute * (n->n_attribute + 1));
    for (size_t k = 0; k < n->n_attribute; k++) {
        const Onnx__AttributeProto *at = n->attribute[k];
        if (!at->g && !at->n_graphs) {
            c->attribute[k] = n->attribute[k];
            continue;
        }
        Onnx__AttributeProto *ac = ir_alloc(a, sizeof *ac);
        *ac = *at;
        if (at->g)
            ac->g = renamed_graph(r, at->g);
        ac->graphs = ir_alloc(a, sizeof *ac->graphs * (at->n_graphs + 1));
        for (size_t j = 0; j < at->n_graphs; j++)
            ac->graphs[j] = renamed_graph(r, at->graphs[j]);
        c->attribute[k] = ac;
    }
    return c;
}

static Onnx__ValueInfoProto **renamed_infos(const ox_rename *r, Onnx__ValueInfoProto **v,
                                            size_t n)
{
    Onnx__ValueInfoProto **c = ir_alloc(r->x->a, sizeof *c * (n + 1));
    for (size_t i = 0; i < n; i++) {
        c[i] = ir_alloc(r->x->a, sizeof *c[i]);
        *c[i] = *v[i];
        c[i]->name = renamed(r, v[i]->name);
    }
    return c;
}

/* A copy of g with the names r renames (its strings and tensors shared). */
static Onnx__GraphProto *renamed_graph(const ox_rename *r, const Onnx__GraphProto *g)
{
    ir_arena *a = r->x->a;
    Onnx__GraphProto *c = ir_alloc(a, sizeof *c);
    *c = *g;
    c->node = ir_alloc(a, sizeof *c->node * (g->n_node + 1));
    for (size_t i = 0; i < g->n_node; i++)
        c->node[i] = renamed_node(r, g->node[i]);
    c->input = renamed_infos(r, g->input, g->n_input);
    c->output = renamed_infos(r, g->output, g->n_output);
    c->initializer = ir_alloc(a, sizeof *c->initializer * (g->n_initializer + 1));
    for (size_t i = 0; i < g->n_initializer; i++) {
        c->initializer[i] = ir_alloc(a, sizeof *c->initializer[i]);
        *c->initializer[i] = *g->initializer[i];
        c->initializer[i]->name = renamed(r, g->initializer[i]->name);
    }
    return c;
}

/* A Loop input known at import time, one integer or bool (the trip count,
 * the condition): false after an error naming it (what: "trip count"). */
static bool loop_scalar(ox_node *nd, const ox_value *v, const char *what, int64_t *out)
{
    if (!v->konst || v->seq) {
        ox_str chain = {0};
        dynamic_chain(nd->x, v, &chain);
        ox_fail(nd, "the %s ('%s') is computed at run time: tec unrolls a Loop when it imports "
                "the model, so its trip count and condition must be known then (from shapes or "
                "constants, or a graph input given with --input): %s", what, v->onnx, chain.s);
        free(chain.s);
        return false;
    }
    if (ir_dtype_is_float(v->dtype) || rt_tensor_numel(v->konst) != 1)
        return ox_fail(nd, "the %s ('%s') must be one integer", what, v->onnx);
    *out = rt_tensor_get_int(v->konst, 0);
    return true;
}

/* Body input vi as a new value known at import time: an integer (the
 * iteration number, or the condition as a bool) of the input's declared
 * shape when that is one element ([1], as PyTorch declares the iteration
 * number), else a scalar. */
static bool loop_constant(ox_node *nd, const Onnx__ValueInfoProto *vi, ir_dtype t, int64_t val)
{
    int64_t shape[RT_MAX_DIMS];
    int ndim = 0;
    const Onnx__TypeProto *tp = vi->type;
    const Onnx__TensorShapeProto *sh = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                                       tp->tensor_type ? tp->tensor_type->shape : NULL;
    if (sh && sh->n_dim <= RT_MAX_DIMS) {
        bool one = true;
        for (size_t k = 0; k < sh->n_dim; k++) {
            one = one && sh->dim[k]->value_case ==
                         ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                  sh->dim[k]->dim_value == 1;
            shape[k] = 1;
        }
        ndim = one ? (int)sh->n_dim : 0;
    }
    rt_tensor *c = ox_const_new(nd, t, ndim, shape);
    if (!c)
        return false;
    ox_put_int(c, 0, val);
    ox_value *v = new_value(nd->x, vi->name);
    v->konst = c;
    v->dtype = t;
    v->ndim = ndim;
    memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
    return true;
}

/* A body's value the iteration computed (or the enclosing graph's it
 * names), or NULL after an error. */
static ox_value *loop_result(ox_node *nd, const Onnx__ValueInfoProto *vi, const char *orig)
{
    ox_value *v = vi->name && *vi->name ? find_value(nd->x, vi->name) : NULL;
    if (!v)
        ox_fail(nd, "the body's output '%s' is not computed by any of its nodes",
                orig ? orig : "");
    return v;
}

bool ox_op_loop(ox_node *nd, const void *arg)
{
    (void)arg;
    ox *x = nd->x;
    const Onnx__AttributeProto *at = ox_attr(nd, "body");
    const Onnx__GraphProto *body = at ? at->g : NULL;
    if (!body)
        return ox_fail(nd, "the node has no graph attribute body");
    if (nd->nin < 2)
        return ox_fail(nd, "a Loop has inputs M and cond (either may be empty), then the "
                       "loop-carried values");
    int N = nd->nin - 2, nout = (int)nd->n->n_output;
    if (body->n_input != (size_t)N + 2)
        return ox_fail(nd, "the body has %zu inputs, but a Loop of %d loop-carried values "
                       "needs %d (the iteration number, the condition, then those)",
                       body->n_input, N, N + 2);
    if (body->n_output < (size_t)N + 1)
        return ox_fail(nd, "the body has %zu outputs, but a Loop of %d loop-carried values "
                       "needs at least %d (the condition, then those, then scan outputs)",
                       body->n_output, N, N + 1);
    int K = (int)body->n_output - 1 - N;
    if (nout > N + K)
        return ox_fail(nd, "the node has %d outputs, but its body gives %d loop-carried values "
                       "and %d scan outputs", nout, N, K);
    int64_t trips = INT64_MAX, c = 1;
    if (nd->in[0] && !loop_scalar(nd, nd->in[0], "trip count", &trips))
        return false;
    if (nd->in[1] && !loop_scalar(nd, nd->in[1], "condition", &c))
        return false;
    if (!nd->in[0] && !nd->in[1])
        return ox_fail(nd, "the Loop has neither a trip count nor a condition: it would run "
                       "forever");
    ox_value **carried = calloc((size_t)N + 1, sizeof *carried);
    ox_value **scan = calloc((size_t)K * OX_MAX_TRIPS + 1, sizeof *scan);   /* [k][i] */
    if (!carried || !scan)
        ir_out_of_memory();
    bool ok = true;
    for (int k = 0; k < N && ok; k++)
        ok = (carried[k] = ox_input(nd, 2 + k)) != NULL;
    ox_rename r = {.x = x};
    size_t body_nodes = collect_defined(&r, body);
    int serial = ++x->nloops;
    /* the body's initializers, once for all iterations (a Loop of 4096
     * iterations holds one copy of a weight), and the enclosing graphs'
     * it reads (counted once with the model's): when more than one
     * iteration may read them, they are shared (ox_value.uses) */
    r.once_suffix = ir_sprintf(x->a, "@loop%d", serial);
    for (size_t k = 0; k < body->n_initializer; k++)
        if (body->initializer[k]->name)
            fe_map_put(x->a, &r.once, body->initializer[k]->name, body->initializer[k]->name);
    r.suffix = r.iteration = "";
    Onnx__GraphProto *first = renamed_graph(&r, body);
    int own = x->nvals;
    if (ok && !declare_initializers(x, first, true, false))
        ok = false;
    count_uses(x, first, (const ox_value *const *)x->vals, own);
    bool many = trips > 1 && c;
    for (int k = own; ok && many && k < x->nvals; k++)
        x->vals[k]->uses *= 2;
    if (ok && many)
        count_uses(x, body, NULL, 0);
    int64_t i = 0;
    for (; ok && c && i < trips; i++) {
        if (i == OX_MAX_TRIPS) {
            ok = ox_fail(nd, "the Loop runs more than %d iterations: tec unrolls a Loop when it "
                         "imports the model, and at most %d iterations of one", OX_MAX_TRIPS,
                         OX_MAX_TRIPS);
            break;
        }
        if (x->unrolled + body_nodes > OX_MAX_NODES) {
            ok = ox_fail(nd, "unrolled, the Loop's iterations make more than %d nodes (its body "
                         "has %zu, and iteration %lld is one past them): tec imports at most %d",
                         OX_MAX_NODES, body_nodes, (long long)i, OX_MAX_NODES);
            break;
        }
        x->unrolled += body_nodes;
        r.iteration = ir_sprintf(x->a, "%lld", (long long)i);
        r.suffix = ir_sprintf(x->a, "@loop%d/%lld", serial, (long long)i);
        Onnx__GraphProto *g = renamed_graph(&r, body);
        for (int k = 0; k < N + 2 && ok; k++)
            if (!g->input[k]->name || !*g->input[k]->name)
                ok = ox_fail(nd, "the body's input %d has no name", k + 1);
            else if (find_value(x, g->input[k]->name))
                ok = ox_fail(nd, "the body's input '%s' is already defined",
                             body->input[k]->name);
        if (!ok)
            break;
        /* the iteration number, the condition, the carried values */
        if (!loop_constant(nd, g->input[0], IR_I64, i) || !loop_constant(nd, g->input[1], IR_I32, 1)) {
            ok = false;
            break;
        }
        for (int k = 0; k < N; k++)
            fe_map_put(x->a, &x->valmap, g->input[2 + k]->name, carried[k]);
        if (!import_graph(x, g)) {
            ok = false;
            break;
        }
        ox_value *cond = loop_result(nd, g->output[0], body->output[0]->name);
        ok = cond != NULL;
        for (int k = 0; k < N && ok; k++) {
            ox_value *v = loop_result(nd, g->output[1 + k], body->output[1 + k]->name);
            if (v && !v->seq != !carried[k]->seq)
                ok = ox_fail(nd, "the body's output '%s' is a %s, but the loop-carried value "
                             "it updates ('%s') is a %s", body->output[1 + k]->name,
                             v->seq ? "sequence" : "tensor", nd->in[2 + k]->onnx,
                             carried[k]->seq ? "sequence" : "tensor");
            ok = ok && v;
            carried[k] = v;
        }
        for (int k = 0; k < K && ok; k++) {
            ox_value *v = loop_result(nd, g->output[1 + N + k], body->output[1 + N + k]->name);
            if (v && v->seq)
                ok = ox_fail(nd, "the body's scan output '%s' is a sequence (a scan output is a "
                             "tensor)", body->output[1 + N + k]->name);
            ok = ok && v;
            scan[(size_t)k * OX_MAX_TRIPS + (size_t)i] = v;
        }
        /* the next iteration runs while the body's condition holds: it must
         * be known (after the last iteration the trip count decides) */
        if (ok && i + 1 < trips)
            ok = loop_scalar(nd, cond, "body's condition", &c);
    }
    for (int k = 0; k < N && ok; k++)
        if (*nd->n->output[k])
            ok = ox_step(nd, "Identity", 0, &carried[k], 1, nd->n->output[k], NULL, 0) != NULL;
    for (int k = 0; k < K && ok && N + k < nout; k++) {
        const char *out = nd->n->output[N + k];
        if (!*out)
            continue;
        if (i == 0)
            ok = ox_fail(nd, "the Loop runs no iteration, so its scan output '%s' has no "
                         "elements (tec's computed tensors have elements)", out);
        else
            ok = ox_concat_values(nd, scan + (size_t)k * OX_MAX_TRIPS, (int)i, 0, true, out) !=
                 NULL;
    }
    free(carried);
    free(scan);
    return ok;
}

char *fe_onnx_import(const char *path, const fe_onnx_options *o, diag *d)
{
    return fe_onnx_import_weights(path, o, NULL, d);
}

char *fe_onnx_import_weights(const char *path, const fe_onnx_options *o, rt_weight_set *weights,
                             diag *d)
{
    static const fe_onnx_options none = {0};
    ox x = {.path = path, .d = d, .o = o ? o : &none, .weights = weights};
    const char *slash = strrchr(path, '/');
    x.dir = slash ? strndup(path, (size_t)(slash - path + (slash == path))) : strdup(".");
    int errors = d->nerrors;
    ProtobufCAllocator pa = {block_alloc, block_free, &x.blocks};
    Onnx__ModelProto *m = load_model(&x, &pa);
    if (!m) {
        free_ox(&x);
        return NULL;
    }
    if (x.o->weights_dir && mkdir(x.o->weights_dir, 0777) != 0 && errno != EEXIST)
        model_error(&x, "cannot create %s: %s", x.o->weights_dir, strerror(errno));
    const Onnx__GraphProto *g = m->graph;
    if (d->nerrors == errors)
        declare_initializers(&x, g, false, true);
    for (size_t i = 0; i < g->n_input && d->nerrors == errors; i++)
        if (!g->input[i]->name || !find_value(&x, g->input[i]->name))
            declare_input(&x, g->input[i]);
    count_uses(&x, g, NULL, 0);
    fe_map readers = {0}, reader = {0};   /* count_readers */
    count_readers(&x, g, &readers, &reader);
    find_pairs(&x, g, &readers, &reader);
    find_norm_chains(&x, g, &readers, &reader);
    char *text = NULL;
    if (d->nerrors == errors && import_graph(&x, g) && import_outputs(&x, g)) {
        ox_str all = {0};
        char producer[64] = "";   /* printable ASCII of it */
        for (size_t i = 0, k = 0; m->producer_name && m->producer_name[i] && k < 63; i++)
            if (m->producer_name[i] >= ' ' && m->producer_name[i] < 127)
                producer[k++] = m->producer_name[i], producer[k] = 0;
        ox_str name = {0};        /* the path on one comment line: control characters as '?' */
        for (const char *p = x.path; *p; p++)
            ox_printf(&name, "%c", (unsigned char)*p < ' ' || *p == 127 ? '?' : *p);
        ox_printf(&all, "# %s, imported from ONNX (opset %d%s%s) by tec\n", name.s, x.opset,
                  *producer ? ", produced by " : "", producer);
        free(name.s);
        ox_printf(&all, "import \"nn.te\"\n\n%s%s%s\n%s", str_of(&x.head), x.head.len ? "\n" : "",
                  str_of(&x.defs_text), str_of(&x.body));
        text = all.s;
    }
    onnx__model_proto__free_unpacked(m, &pa);
    free_ox(&x);
    if (d->nerrors > errors) {
        free(text);
        return NULL;
    }
    return text;
}

bool fe_onnx_pb_to_npy(const char *pb_path, const char *npy_path, diag *d)
{
    ox x = {.path = pb_path, .d = d};
    const char *slash = strrchr(pb_path, '/');
    x.dir = slash ? strndup(pb_path, (size_t)(slash - pb_path + (slash == pb_path))) : strdup(".");
    size_t len = 0;
    unsigned char *buf = read_file(pb_path, &len);
    bool ok = false;
    if (!buf) {
        diag_error(d, diag_noloc(), "cannot read %s: %s", pb_path, strerror(errno));
    } else {
        Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, len, buf);
        char err[512];
        rt_tensor *r = NULL;
        if (t && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__UINT16)
            /* tec has no uint16: NumPy, which has no bfloat16, writes bfloat16
             * data as the uint16 of its bits (so do ONNX's test data), read
             * so as tec's .npy files hold bf16 */
            t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
        if (!t)
            model_error(&x, "not an ONNX TensorProto (the file does not parse)");
        else if (!(r = tensor_from_proto(&x, t, err, sizeof err)))
            model_error(&x, "%s", err);
        else if (!rt_npy_write(npy_path, r, err, sizeof err))
            diag_error(d, diag_noloc(), "%s", err);
        else
            ok = true;
        rt_tensor_free(r);
        if (t)
            onnx__tensor_proto__free_unpacked(t, NULL);
    }
    free(buf);
    free(x.dir);
    return ok;
}
