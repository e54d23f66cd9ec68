/* testsuite/unit/test_npy.c — the runtime's data layer: tensors, .npy
 * reading and writing, default data.  Malformed files are generated here in
 * a temporary directory; each must give its exact message. */
#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/interp.h"
#include "runtime/npy.h"
#include "runtime/random.h"
#include "runtime/tensor.h"
#include "testsuite/unit/test.h"

static char dir[256];

static char *path_of(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

/* Writes a .npy-like file: magic (or bad_magic), version, header length in
 * 2 or 4 bytes (hlen_override if nonzero), the dict padded to 64 with '\n',
 * and ndata bytes of data (value 1 each). */
static void make_file(const char *path, const char *magic, int major, int minor,
                      const char *dict, long hlen_override, size_t ndata)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t lenbytes = major == 1 ? 2 : 4;
    size_t hlen = strlen(dict) + 1;
    hlen += (64 - (6 + 2 + lenbytes + hlen) % 64) % 64;
    unsigned long hl = hlen_override ? (unsigned long)hlen_override : hlen;
    fwrite(magic, 1, 6, f);
    fputc(major, f);
    fputc(minor, f);
    for (size_t i = 0; i < lenbytes; i++)
        fputc((int)((hl >> (8 * i)) & 0xff), f);
    fputs(dict, f);
    for (size_t i = strlen(dict) + 1; i < hlen; i++)
        fputc(' ', f);
    fputc('\n', f);
    for (size_t i = 0; i < ndata; i++)
        fputc(1, f);
    fclose(f);
}

static const char *MAGIC = "\x93NUMPY";

/* Reads path, expecting failure with exactly "<path>: <msg>". */
static void expect_error(const char *name, const char *msg)
{
    char err[512], want[1024];
    const char *p = path_of(name);
    rt_tensor *t = rt_npy_read(p, err, sizeof err);
    snprintf(want, sizeof want, "%s: %s", p, msg);
    bool ok = !t && strcmp(err, want) == 0;
    check(ok, "%s rejected", name);
    if (!ok)
        printf("  got:  %s\n  want: %s\n", t ? "(success)" : err, want);
    rt_tensor_free(t);
    unlink(p);
}

static void test_round_trip(ir_dtype dt, int ndim, const int64_t *shape, double lo, double hi)
{
    char err[512], name[64];
    rt_tensor *t = rt_tensor_new(dt, ndim, shape, err, sizeof err);
    if (!t) {
        check(false, "allocate %s: %s", ir_dtype_name(dt), err);
        return;
    }
    snprintf(name, sizeof name, "rt_%s_%d.npy", ir_dtype_name(dt), ndim);
    rt_fill_default(t, name, lo, hi);
    const char *p = path_of(name);
    bool wrote = rt_npy_write(p, t, err, sizeof err);
    rt_tensor *r = wrote ? rt_npy_read(p, err, sizeof err) : NULL;
    bool same = r && r->dtype == t->dtype && r->ndim == t->ndim && r->nbytes == t->nbytes &&
                memcmp(r->shape, t->shape, sizeof(int64_t) * (size_t)ndim) == 0 &&
                memcmp(r->data, t->data, t->nbytes) == 0;
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%.*s.%s.??????", (int)(strlen(p) - strlen(name)), p, name);
    glob_t g;
    bool no_tmp = glob(tmp, 0, NULL, &g) == GLOB_NOMATCH;
    if (!no_tmp)
        globfree(&g);
    char *s = rt_shape_str(dt, ndim, shape);
    check(same && no_tmp, "round trip %s, no temporary left%s%s", s, same ? "" : ": ",
          same ? "" : err);
    free(s);
    unlink(p);
    rt_tensor_free(t);
    rt_tensor_free(r);
}

/* The header tec writes is NumPy's own, padded so data starts at 64. */
static void test_header_bytes(void)
{
    char err[512];
    int64_t shape[2] = {2, 3};
    rt_tensor *t = rt_tensor_new(IR_F32, 2, shape, err, sizeof err);
    const char *p = path_of("hdr.npy");
    rt_npy_write(p, t, err, sizeof err);
    unsigned char buf[256];
    FILE *f = fopen(p, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    size_t hlen = buf[8] | (size_t)buf[9] << 8;
    check(n == 128 + 24 && memcmp(buf, MAGIC, 6) == 0 && buf[6] == 1 && buf[7] == 0 &&
              hlen == 118 && memcmp(buf + 10, dict, strlen(dict)) == 0 && buf[127] == '\n' &&
              buf[126] == ' ',
          "version 1.0 header, NumPy's dict text, data at offset 128");
    rt_tensor_free(t);
    unlink(p);
}

static void test_tensor(void)
{
    char err[512];
    int64_t big[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
    rt_tensor *t = rt_tensor_new(IR_F32, 2, big, err, sizeof err);
    check(!t && strcmp(err, "tensor f32[1099511627776, 1099511627776] is too large "
                            "(its byte size overflows)") == 0,
          "overflowing tensor size refused");
    int64_t neg[1] = {-3};
    t = rt_tensor_new(IR_I32, 1, neg, err, sizeof err);
    check(!t && strcmp(err, "negative extent in tensor shape i32[-3]") == 0,
          "negative extent refused");
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    t = rt_tensor_new(IR_I32, 9, nine, err, sizeof err);
    check(!t && strcmp(err, "a tensor of 9 dimensions is not supported (at most 8)") == 0,
          "nine dimensions refused");

    int64_t shape[4] = {1, 3, 5, 7};
    t = rt_tensor_new(IR_F64, 4, shape, err, sizeof err);
    bool zero = t && ((uintptr_t)t->data % 64) == 0 && t->nbytes == 105 * 8 &&
                rt_tensor_numel(t) == 105;
    for (int64_t i = 0; zero && i < 105; i++)
        zero = rt_tensor_get(t, i) == 0.0;
    check(zero, "new tensor is 64-byte aligned, sized and zeroed");
    rt_tensor_free(t);

    /* Large tensors come from fresh mappings, zero without a clear: on
     * both sides of RT_ZALLOC_MAP, and again after a freed one was dirtied
     * (a reused block must not keep its old bytes). */
    int64_t sizes[3] = {(int64_t)(RT_ZALLOC_MAP / 4) - 1, (int64_t)(RT_ZALLOC_MAP / 4),
                        (int64_t)(3 * RT_ZALLOC_MAP / 4) + 5};
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < 3; k++) {
            t = rt_tensor_new(IR_F32, 1, &sizes[k], err, sizeof err);
            zero = t && ((uintptr_t)t->data % 64) == 0 && t->nbytes == (size_t)sizes[k] * 4;
            for (int64_t i = 0; zero && i < sizes[k]; i++)
                zero = ((const float *)t->data)[i] == 0.0f;
            check(zero, "tensor of %lld floats (round %d) aligned and zeroed",
                  (long long)sizes[k], round);
            if (t)
                memset(t->data, 0x5a, t->nbytes);
            rt_tensor_free(t);
        }
    void *z = rt_zalloc(0);
    check(z && (uintptr_t)z % 64 == 0, "rt_zalloc(0) gives an aligned block");
    rt_zfree(z, 0);

    char *s = rt_shape_str(IR_F32, 4, (int64_t[]){1, 3, 224, 224});
    check(s && strcmp(s, "f32[1, 3, 224, 224]") == 0, "shape string %s", s ? s : "(null)");
    free(s);
    s = rt_shape_str(IR_I64, 0, NULL);
    check(s && strcmp(s, "i64[]") == 0, "scalar shape string %s", s ? s : "(null)");
    free(s);

    t = rt_tensor_new(IR_I32, 1, (int64_t[]){4}, err, sizeof err);
    rt_tensor_set(t, 0, -2.9);
    rt_tensor_set(t, 1, 1e12);
    rt_tensor_set(t, 2, NAN);
    rt_tensor_set(t, 3, -1e12);
    check(rt_tensor_get(t, 0) == -2 && rt_tensor_get(t, 1) == 2147483647 &&
              rt_tensor_get(t, 2) == 0 && rt_tensor_get(t, 3) == -2147483648.0,
          "i32 set truncates and saturates");
    rt_tensor_free(t);

    t = rt_tensor_new(IR_F16, 1, (int64_t[]){3}, err, sizeof err);
    rt_tensor_set(t, 0, 1.0 / 3);
    rt_tensor_set(t, 1, 70000);
    rt_tensor_set(t, 2, 1e-7);                   /* subnormal in f16 */
    const uint16_t *h = t->data;
    check(h[0] == 0x3555 && h[1] == 0x7c00 && h[2] == 0x0002 &&
              rt_tensor_get(t, 2) == ldexp(2, -24),
          "f16 storage rounds to nearest, overflows to inf, keeps subnormals");
    rt_tensor_free(t);
}

/* Numbers from an independent integer-only Python computation of the
 * formula in doc/data.md (name "x", lo -1, hi 1). */
static void test_default_data(void)
{
    static const double want[4] = {-0.5975834313129111, 0.617053524968139,
                                   0.28664726835009247, 0.656218802914484};
    static const float want32[4] = {-0.5975834131240845f, 0.6170535087585449f,
                                    0.2866472601890564f, 0.6562188267707825f};
    char err[256];
    check(rt_fnv1a64("x") == UINT64_C(0xaf63f54c86021707), "FNV-1a of \"x\"");
    rt_tensor *d = rt_tensor_new(IR_F64, 1, (int64_t[]){4}, err, sizeof err);
    rt_tensor *f = rt_tensor_new(IR_F32, 1, (int64_t[]){4}, err, sizeof err);
    rt_fill_default(d, "x", -1, 1);
    rt_fill_default(f, "x", -1, 1);
    bool ok = true;
    for (int i = 0; i < 4; i++)
        ok &= ((double *)d->data)[i] == want[i] && ((float *)f->data)[i] == want32[i];
    check(ok, "default data of \"x\" in [-1, 1) matches the documented table");
    rt_tensor_free(d);
    rt_tensor_free(f);

    rt_tensor *n = rt_tensor_new(IR_I64, 1, (int64_t[]){1000}, err, sizeof err);
    rt_fill_default(n, "ids", 0, 50257);
    bool in_range = true, varied = false;
    for (int i = 0; i < 1000; i++) {
        double v = rt_tensor_get(n, i);
        in_range &= v >= 0 && v < 50257 && v == floor(v);
        varied |= v != rt_tensor_get(n, 0);
    }
    check(in_range && varied, "integer default data lies in [0, 50257)");
    rt_fill_default(n, "ids", 7, 7);
    check(rt_tensor_get(n, 999) == 7 && rt_tensor_get(n, 0) == 7, "lo == hi fills lo");
    rt_tensor_free(n);
}

static void test_malformed(void)
{
    const char *f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    make_file(path_of("magic.npy"), "\x93NUMPZ", 1, 0, f4, 0, 24);
    expect_error("magic.npy", "not a .npy file (bad magic string)");
    make_file(path_of("version.npy"), MAGIC, 4, 0, f4, 0, 24);
    expect_error("version.npy", "unsupported .npy format version 4.0 (tec reads 1.0, 2.0 and 3.0)");
    make_file(path_of("long.npy"), MAGIC, 2, 0, f4, 70000, 24);
    expect_error("long.npy", "header length 70000 exceeds the 65536-byte limit");
    make_file(path_of("nokey.npy"), MAGIC, 1, 0, "{'descr': '<f4', 'fortran_order': False}", 0, 4);
    expect_error("nokey.npy", "header has no 'shape' key");
    make_file(path_of("object.npy"), MAGIC, 1, 0,
              "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 0, 16);
    expect_error("object.npy", "object arrays ('|O') are not supported; save a numeric array");
    make_file(path_of("big.npy"), MAGIC, 1, 0,
              "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 0, 24);
    expect_error("big.npy",
                 "big-endian data ('>f4') is not supported; convert with arr.astype('<f4')");
    make_file(path_of("fortran.npy"), MAGIC, 1, 0,
              "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 0, 24);
    expect_error("fortran.npy", "Fortran order is not supported; save with np.ascontiguousarray");
    make_file(path_of("short.npy"), MAGIC, 1, 0, f4, 0, 20);
    expect_error("short.npy", "truncated: shape (2, 3) of <f4 needs 24 data bytes, file has 20");
    make_file(path_of("trailing.npy"), MAGIC, 1, 0, f4, 0, 28);
    expect_error("trailing.npy",
                 "trailing data: shape (2, 3) of <f4 needs 24 data bytes, file has 28");
    make_file(path_of("shape.npy"), MAGIC, 1, 0,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 0, 24);
    expect_error("shape.npy",
                 "malformed header: expected a non-negative integer in 'shape' at 'x), }'");
    make_file(path_of("int.npy"), MAGIC, 1, 0,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", 0, 12);
    expect_error("int.npy", "'shape' (3) is not a tuple; a 1-D shape is written (3,)");
    make_file(path_of("neg.npy"), MAGIC, 1, 0,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 0, 24);
    expect_error("neg.npy", "negative dimension -3 in 'shape'");
    make_file(path_of("dims.npy"), MAGIC, 1, 0,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 0, 4);
    expect_error("dims.npy", "'shape' has more than 8 dimensions, which tec does not support");
    make_file(path_of("u4.npy"), MAGIC, 1, 0,
              "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }", 0, 8);
    expect_error("u4.npy", "unsupported dtype '<u4' (tec reads <f2 <f4 <f8 <i4 <i8 |b1 |i1 |u1 <i2 <u2)");
    make_file(path_of("extra.npy"), MAGIC, 1, 0,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", 0, 4);
    expect_error("extra.npy", "header has an unexpected key 'x'");
    make_file(path_of("twice.npy"), MAGIC, 1, 0,
              "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", 0, 4);
    expect_error("twice.npy", "header repeats the key 'descr'");
    make_file(path_of("struct.npy"), MAGIC, 1, 0,
              "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 0, 4);
    expect_error("struct.npy", "structured dtypes are not supported");
    make_file(path_of("bool.npy"), MAGIC, 1, 0,
              "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 0, 0);
    FILE *f = fopen(path_of("bool.npy"), "ab");
    fputc(1, f);
    fputc(2, f);
    fclose(f);
    expect_error("bool.npy", "bool element 1 has byte value 2 (expected 0 or 1)");
    f = fopen(path_of("empty.npy"), "wb");
    fclose(f);
    expect_error("empty.npy", "not a .npy file (bad magic string)");
    expect_error("missing.npy", "cannot open: No such file or directory");

    char err[256];
    rt_tensor *t = rt_tensor_new(IR_F32, 1, (int64_t[]){2}, err, sizeof err);
    bool wrote = rt_npy_write("/nonexistent-dir/x.npy", t, err, sizeof err);
    check(!wrote && strcmp(err, "/nonexistent-dir/x.npy: cannot create a temporary file beside "
                                "it: No such file or directory") == 0,
          "write into a missing directory refused");
    rt_tensor_free(t);
}

/* Versions 2.0 and 3.0 (4-byte header length), double quotes, no trailing
 * comma and a scalar shape are all valid NumPy. */
static void test_valid_variants(void)
{
    char err[512];
    make_file(path_of("v2.npy"), MAGIC, 2, 0,
              "{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"<i8\"}", 0, 24);
    rt_tensor *t = rt_npy_read(path_of("v2.npy"), err, sizeof err);
    check(t && t->dtype == IR_I64 && t->ndim == 1 && t->shape[0] == 3 &&
              rt_tensor_get(t, 2) == (double)INT64_C(0x0101010101010101),
          "version 2.0, keys in another order: %s", t ? "read" : err);
    rt_tensor_free(t);
    make_file(path_of("v3.npy"), MAGIC, 3, 0,
              "{'descr': '<f8', 'fortran_order': False, 'shape': ()}", 0, 8);
    t = rt_npy_read(path_of("v3.npy"), err, sizeof err);
    check(t && t->dtype == IR_F64 && t->ndim == 0 && rt_tensor_numel(t) == 1,
          "version 3.0 scalar: %s", t ? "read" : err);
    rt_tensor_free(t);
    make_file(path_of("zero.npy"), MAGIC, 1, 0,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }", 0, 0);
    t = rt_npy_read(path_of("zero.npy"), err, sizeof err);
    check(t && t->ndim == 2 && rt_tensor_numel(t) == 0 && t->nbytes == 0,
          "empty array (0, 5): %s", t ? "read" : err);
    rt_tensor_free(t);
    unlink(path_of("v2.npy"));
    unlink(path_of("v3.npy"));
    unlink(path_of("zero.npy"));
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tec_npy_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_tensor();
    test_default_data();
    int64_t s23[2] = {2, 3}, s5[1] = {5}, s2345[4] = {2, 3, 4, 5};
    test_round_trip(IR_F32, 2, s23, -1, 1);
    test_round_trip(IR_F64, 4, s2345, -1, 1);
    test_round_trip(IR_F16, 1, s5, -2, 2);
    test_round_trip(IR_I32, 2, s23, -100, 100);
    test_round_trip(IR_I64, 1, s5, -1e12, 1e12);
    test_round_trip(IR_BOOL, 2, s23, 0, 2);
    test_round_trip(IR_I8, 2, s23, -128, 128);
    test_round_trip(IR_U8, 1, s5, 0, 256);
    test_round_trip(IR_I16, 2, s23, -32768, 32768);
    test_round_trip(IR_BF16, 1, s5, -2, 2);
    test_round_trip(IR_F32, 0, NULL, -1, 1);
    test_header_bytes();
    test_valid_variants();
    test_malformed();
    if (rmdir(dir) != 0)
        check(false, "temporary directory left clean");
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
