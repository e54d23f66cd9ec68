/* runtime/npy.c — strict .npy reader and atomic writer (see npy.h).
 *
 * File layout (NumPy's format.py documents it):
 *   "\x93NUMPY" major minor   8 bytes
 *   header length             2 bytes LE (1.0) or 4 bytes LE (2.0, 3.0)
 *   header                    a Python dict literal, space padded, '\n' ended
 *   data                      numel * itemsize bytes, nothing after
 */
#include "runtime/npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* One supported element type: its descr and the dtype it loads as. */
typedef struct npy_type {
    const char *descr;
    ir_dtype dtype;
} npy_type;

static const npy_type npy_types[] = {
    {"<f2", IR_F16}, {"<f4", IR_F32}, {"<f8", IR_F64}, {"<i4", IR_I32},
    {"<i8", IR_I64}, {"|b1", IR_BOOL}, {"|i1", IR_I8}, {"|u1", IR_U8}, {"<i2", IR_I16},
    {"<u2", IR_BF16},   /* NumPy has no bf16: its bits, as uint16 */
};
#define NPY_NTYPES (sizeof npy_types / sizeof npy_types[0])

const char *rt_npy_descr(ir_dtype t)
{
    for (size_t i = 0; i < NPY_NTYPES; i++)
        if (npy_types[i].dtype == t)
            return npy_types[i].descr;
    return NULL;
}

static __attribute__((format(printf, 4, 5))) void
npy_err(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    int n = snprintf(err, errlen, "%s: ", path);
    if (n < 0 || (size_t)n >= errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    /* Header text is quoted in messages: its control characters (escape
     * sequences) must not reach the terminal. */
    for (char *c = err; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Reverses the bytes of each of n elements of size sz (big-endian hosts). */
static void swap_elements(void *data, size_t n, size_t sz)
{
    uint8_t *p = data;
    for (size_t i = 0; i < n; i++, p += sz)
        for (size_t a = 0, b = sz - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* Python's text for a shape tuple: "()", "(5,)", "(2, 3)". */
static void shape_tuple(char *buf, size_t len, int ndim, const int64_t *shape)
{
    size_t n = (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < ndim && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, d ? ", %" PRId64 : "%" PRId64, shape[d]);
    if (n < len)
        snprintf(buf + n, len - n, ndim == 1 ? ",)" : ")");
}

/* ---------------------------------------------------------------- header parsing */

/* The three values of a header dict, and which were seen. */
typedef struct npy_header {
    char descr[32];
    bool fortran_order;
    int ndim;
    int64_t shape[RT_MAX_DIMS];
    bool has_descr, has_fortran, has_shape;
} npy_header;

/* A cursor over the header text; errors go to err with the path. */
typedef struct hparse {
    const char *s, *end;
    const char *path;
    char *err;
    size_t errlen;
} hparse;

static void skip_ws(hparse *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        p->s++;
}

static bool eat(hparse *p, char c)
{
    skip_ws(p);
    if (p->s < p->end && *p->s == c) {
        p->s++;
        return true;
    }
    return false;
}

/* Reports what the parser expected and the text where it stopped. */
static bool syntax_error(hparse *p, const char *expected)
{
    int left = 0;             /* up to 12 characters of one line, unpadded */
    while (left < 12 && p->s + left < p->end && p->s[left] != '\n')
        left++;
    while (left > 0 && p->s[left - 1] == ' ')
        left--;
    if (left <= 0)
        npy_err(p->err, p->errlen, p->path, "malformed header: expected %s at its end",
                expected);
    else
        npy_err(p->err, p->errlen, p->path, "malformed header: expected %s at '%.*s'",
                expected, left, p->s);
    return false;
}

/* A quoted Python string without escapes, copied into out (size n). */
static bool parse_string(hparse *p, char *out, size_t n, const char *what)
{
    skip_ws(p);
    if (p->s >= p->end || (*p->s != '\'' && *p->s != '"'))
        return syntax_error(p, what);
    char q = *p->s++;
    const char *start = p->s;
    while (p->s < p->end && *p->s != q) {
        if (*p->s == '\\' || *p->s == '\n')
            return syntax_error(p, "a simple quoted string");
        p->s++;
    }
    if (p->s >= p->end)
        return syntax_error(p, "a closing quote");
    size_t len = (size_t)(p->s - start);
    p->s++;
    if (len >= n) {
        npy_err(p->err, p->errlen, p->path, "malformed header: %s is too long", what);
        return false;
    }
    memcpy(out, start, len);
    out[len] = '\0';
    return true;
}

static bool parse_bool(hparse *p, bool *out)
{
    skip_ws(p);
    size_t left = (size_t)(p->end - p->s);
    if (left >= 4 && memcmp(p->s, "True", 4) == 0) {
        p->s += 4;
        *out = true;
        return true;
    }
    if (left >= 5 && memcmp(p->s, "False", 5) == 0) {
        p->s += 5;
        *out = false;
        return true;
    }
    return syntax_error(p, "True or False for 'fortran_order'");
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* One dimension: a Python int literal, decimal, no sign other than a
 * rejected '-'. */
static bool parse_dim(hparse *p, int64_t *out)
{
    skip_ws(p);
    if (p->s < p->end && *p->s == '-') {
        const char *q = p->s + 1;
        while (q < p->end && is_digit(*q))
            q++;
        npy_err(p->err, p->errlen, p->path, "negative dimension %.*s in 'shape'",
                (int)(q - p->s), p->s);
        return false;
    }
    if (p->s >= p->end || !is_digit(*p->s))
        return syntax_error(p, "a non-negative integer in 'shape'");
    int64_t v = 0;
    while (p->s < p->end && is_digit(*p->s)) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p->s - '0', &v)) {
            npy_err(p->err, p->errlen, p->path, "dimension in 'shape' is too large");
            return false;
        }
        p->s++;
    }
    *out = v;
    return true;
}

/* A tuple of dimensions: "()", "(n,)", "(a, b)" or "(a, b,)". */
static bool parse_shape(hparse *p, npy_header *h)
{
    if (!eat(p, '('))
        return syntax_error(p, "a tuple for 'shape'");
    h->ndim = 0;
    if (eat(p, ')'))
        return true;
    for (;;) {
        int64_t v = 0;
        if (!parse_dim(p, &v))
            return false;
        if (h->ndim == RT_MAX_DIMS) {
            npy_err(p->err, p->errlen, p->path,
                    "'shape' has more than %d dimensions, which tec does not support",
                    RT_MAX_DIMS);
            return false;
        }
        h->shape[h->ndim++] = v;
        bool comma = eat(p, ',');
        if (eat(p, ')')) {
            if (h->ndim == 1 && !comma) {   /* "(3)" is an int, not a tuple */
                npy_err(p->err, p->errlen, p->path,
                        "'shape' (%" PRId64 ") is not a tuple; a 1-D shape is written (%" PRId64 ",)",
                        v, v);
                return false;
            }
            return true;
        }
        if (!comma)
            return syntax_error(p, "',' or ')' in 'shape'");
    }
}

static bool parse_entry(hparse *p, npy_header *h)
{
    char key[32];
    if (!parse_string(p, key, sizeof key, "a quoted key"))
        return false;
    if (!eat(p, ':'))
        return syntax_error(p, "':' after a key");
    bool *seen;
    if (strcmp(key, "descr") == 0)
        seen = &h->has_descr;
    else if (strcmp(key, "fortran_order") == 0)
        seen = &h->has_fortran;
    else if (strcmp(key, "shape") == 0)
        seen = &h->has_shape;
    else {
        npy_err(p->err, p->errlen, p->path, "header has an unexpected key '%s'", key);
        return false;
    }
    if (*seen) {
        npy_err(p->err, p->errlen, p->path, "header repeats the key '%s'", key);
        return false;
    }
    *seen = true;
    if (seen == &h->has_descr) {
        skip_ws(p);
        if (p->s < p->end && *p->s == '[') {
            npy_err(p->err, p->errlen, p->path, "structured dtypes are not supported");
            return false;
        }
        return parse_string(p, h->descr, sizeof h->descr, "a quoted string for 'descr'");
    }
    if (seen == &h->has_fortran)
        return parse_bool(p, &h->fortran_order);
    return parse_shape(p, h);
}

/* The whole dict: '{' entries with optional trailing comma '}', then only
 * padding. */
static bool parse_header(hparse *p, npy_header *h)
{
    memset(h, 0, sizeof *h);
    if (!eat(p, '{'))
        return syntax_error(p, "'{'");
    if (!eat(p, '}')) {
        for (;;) {
            if (!parse_entry(p, h))
                return false;
            bool comma = eat(p, ',');
            if (eat(p, '}'))
                break;
            if (!comma)
                return syntax_error(p, "',' or '}'");
        }
    }
    skip_ws(p);
    if (p->s != p->end)
        return syntax_error(p, "only padding after the dict");
    const char *missing = !h->has_descr ? "descr" : !h->has_fortran ? "fortran_order"
                        : !h->has_shape ? "shape" : NULL;
    if (missing) {
        npy_err(p->err, p->errlen, p->path, "header has no '%s' key", missing);
        return false;
    }
    return true;
}

/* Maps a descr to a dtype, explaining the ones tec refuses. */
static bool check_descr(const char *path, const char *descr, ir_dtype *out, char *err,
                        size_t errlen)
{
    for (size_t i = 0; i < NPY_NTYPES; i++)
        if (strcmp(descr, npy_types[i].descr) == 0) {
            *out = npy_types[i].dtype;
            return true;
        }
    const char *kind = descr + (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' ||
                                descr[0] == '=');
    if (kind[0] == 'O')
        npy_err(err, errlen, path,
                "object arrays ('%s') are not supported; save a numeric array", descr);
    else if (descr[0] == '>')
        npy_err(err, errlen, path,
                "big-endian data ('%s') is not supported; convert with arr.astype('<%s')",
                descr, kind);
    else {
        char known[64] = "";
        for (size_t i = 0; i < NPY_NTYPES; i++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? " " : "",
                     npy_types[i].descr);
        npy_err(err, errlen, path, "unsupported dtype '%s' (tec reads %s)", descr, known);
    }
    return false;
}

/* ---------------------------------------------------------------- reading */

/* Reads and checks magic, version and header; leaves f at the data. */
static bool read_header(FILE *f, const char *path, npy_header *h, size_t *data_start,
                        char *err, size_t errlen)
{
    uint8_t pre[12];
    size_t got = fread(pre, 1, 8, f);
    if (got < 8 || memcmp(pre, npy_magic, sizeof npy_magic) != 0) {
        npy_err(err, errlen, path, "not a .npy file (bad magic string)");
        return false;
    }
    int major = pre[6], minor = pre[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0) {
        npy_err(err, errlen, path,
                "unsupported .npy format version %d.%d (tec reads 1.0, 2.0 and 3.0)",
                major, minor);
        return false;
    }
    size_t lenbytes = major == 1 ? 2 : 4;
    if (fread(pre + 8, 1, lenbytes, f) != lenbytes) {
        npy_err(err, errlen, path, "truncated: the header length is missing");
        return false;
    }
    uint32_t hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
    if (lenbytes == 4)
        hlen |= (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
    if (hlen > RT_NPY_MAX_HEADER) {
        npy_err(err, errlen, path, "header length %" PRIu32 " exceeds the %d-byte limit",
                hlen, RT_NPY_MAX_HEADER);
        return false;
    }
    char *text = malloc(hlen ? hlen : 1);
    if (!text) {
        npy_err(err, errlen, path, "out of memory reading the header");
        return false;
    }
    size_t hgot = fread(text, 1, hlen, f);
    bool ok = false;
    if (hgot != hlen)
        npy_err(err, errlen, path, "truncated: header of %" PRIu32 " bytes, file has %zu",
                hlen, hgot);
    else if (memchr(text, '\0', hlen))
        npy_err(err, errlen, path, "malformed header: it contains a NUL byte");
    else {
        hparse p = {text, text + hlen, path, err, errlen};
        ok = parse_header(&p, h);
    }
    free(text);
    *data_start = 8 + lenbytes + hlen;
    return ok;
}

/* The most trailing bytes counted: a stream (a pipe) may never end. */
#define NPY_MAX_TRAILING (1u << 20)

/* Counts the bytes left in f (after a short or complete read), stopping
 * past NPY_MAX_TRAILING. */
static uint64_t count_rest(FILE *f)
{
    char buf[4096];
    uint64_t n = 0;
    size_t k;
    while (n <= NPY_MAX_TRAILING && (k = fread(buf, 1, sizeof buf, f)) > 0)
        n += k;
    return n;
}

/* The message for a data size that differs from what the shape needs. */
static void size_error(const char *path, const npy_header *h, uint64_t need, uint64_t have,
                       char *err, size_t errlen)
{
    char tuple[RT_MAX_DIMS * 22 + 4];
    shape_tuple(tuple, sizeof tuple, h->ndim, h->shape);
    npy_err(err, errlen, path, "%s: shape %s of %s needs %" PRIu64 " data bytes, file has %s%" PRIu64,
            have < need ? "truncated" : "trailing data", tuple, h->descr, need,
            have > need + NPY_MAX_TRAILING ? "more than " : "", have);
}

/* Bool bytes other than 0 and 1 are not NumPy booleans. */
static bool check_bools(const char *path, const rt_tensor *t, char *err, size_t errlen)
{
    const uint8_t *b = t->data;
    for (size_t i = 0; i < t->nbytes; i++)
        if (b[i] > 1) {
            npy_err(err, errlen, path, "bool element %zu has byte value %u (expected 0 or 1)",
                    i, b[i]);
            return false;
        }
    return true;
}

/* Reads the data after the header into a new tensor. */
static rt_tensor *read_data(FILE *f, const char *path, const npy_header *h, ir_dtype dt,
                            size_t data_start, char *err, size_t errlen)
{
    uint64_t need = (uint64_t)ir_dtype_size(dt);
    for (int d = 0; d < h->ndim; d++)
        if (__builtin_mul_overflow(need, (uint64_t)h->shape[d], &need)) {
            char tuple[RT_MAX_DIMS * 22 + 4];
            shape_tuple(tuple, sizeof tuple, h->ndim, h->shape);
            npy_err(err, errlen, path, "shape %s is too large (its byte size overflows)", tuple);
            return NULL;
        }
    /* For a regular file, compare sizes before allocating anything, so a
     * lying header cannot make us allocate more than the file holds. */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
        uint64_t have = (uint64_t)st.st_size > data_start ? (uint64_t)st.st_size - data_start : 0;
        if (have != need) {
            size_error(path, h, need, have, err, errlen);
            return NULL;
        }
    }
    char msg[256];
    rt_tensor *t = rt_tensor_new(dt, h->ndim, h->shape, msg, sizeof msg);
    if (!t) {
        npy_err(err, errlen, path, "%s", msg);
        return NULL;
    }
    size_t got = fread(t->data, 1, t->nbytes, f);
    uint64_t extra = count_rest(f);
    if (got != t->nbytes || extra) {
        size_error(path, h, need, (uint64_t)got + extra, err, errlen);
        rt_tensor_free(t);
        return NULL;
    }
    if (!host_is_little_endian())
        swap_elements(t->data, t->nbytes / (size_t)ir_dtype_size(dt), (size_t)ir_dtype_size(dt));
    if (dt == IR_BOOL && !check_bools(path, t, err, errlen)) {
        rt_tensor_free(t);
        return NULL;
    }
    return t;
}

/* Does the header declare exactly the type `want`? */
static bool has_type(const npy_header *h, ir_dtype dt, const rt_npy_type *want)
{
    if (dt != want->dtype || h->ndim != want->ndim)
        return false;
    for (int d = 0; d < h->ndim; d++)
        if (h->shape[d] != want->shape[d])
            return false;
    return true;
}

rt_tensor *rt_npy_read(const char *path, char *err, size_t errlen)
{
    return rt_npy_read_as(path, NULL, NULL, err, errlen);
}

rt_tensor *rt_npy_read_as(const char *path, const rt_npy_type *want, rt_npy_type *got,
                          char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) {
        npy_err(err, errlen, path, "cannot open: %s", strerror(errno));
        return NULL;
    }
    npy_header h;
    size_t data_start = 0;
    ir_dtype dt = IR_F32;
    rt_tensor *t = NULL;
    if (!read_header(f, path, &h, &data_start, err, errlen) ||
        !check_descr(path, h.descr, &dt, err, errlen))
        goto done;
    if (h.fortran_order) {
        npy_err(err, errlen, path,
                "Fortran order is not supported; save with np.ascontiguousarray");
        goto done;
    }
    if (want && !has_type(&h, dt, want)) {
        got->dtype = dt;
        got->ndim = h.ndim;
        memcpy(got->shape, h.shape, sizeof(int64_t) * (size_t)h.ndim);
        goto done;   /* err stays empty: the caller says what differs */
    }
    t = read_data(f, path, &h, dt, data_start, err, errlen);
    if (t == NULL)
        goto done;
    if (ferror(f)) {
        npy_err(err, errlen, path, "read error: %s", strerror(errno));
        rt_tensor_free(t);
        t = NULL;
    }
done:
    fclose(f);
    return t;
}

/* ---------------------------------------------------------------- writing */

/* Builds the version 1.0 preamble and header in NumPy's own style, padded
 * with spaces so that the data starts at a multiple of 64 bytes.  Returns
 * its length (0 if it does not fit buf). */
int rt_npy_header_dict(char *buf, size_t len, const char *descr, int ndim, const int64_t *shape)
{
    char tuple[RT_MAX_DIMS * 22 + 4];
    shape_tuple(tuple, sizeof tuple, ndim, shape);
    return snprintf(buf, len, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
                    tuple);
}

static size_t build_header(char *buf, size_t len, const char *descr, const rt_tensor *t)
{
    char dict[512];
    int n = rt_npy_header_dict(dict, sizeof dict, descr, t->ndim, t->shape);
    if (n < 0 || (size_t)n >= sizeof dict)
        return 0;
    size_t total = 10 + (size_t)n + 1;             /* preamble, dict, '\n' */
    total = (total + 63) / 64 * 64;
    size_t hlen = total - 10;
    if (total > len || hlen > 65535)
        return 0;
    memcpy(buf, npy_magic, sizeof npy_magic);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', hlen - (size_t)n - 1);
    buf[total - 1] = '\n';
    return total;
}

/* Writes the data little-endian (swapping a copy in chunks on big-endian
 * hosts). */
static bool write_data(FILE *f, const rt_tensor *t)
{
    size_t sz = (size_t)ir_dtype_size(t->dtype);
    if (host_is_little_endian() || sz == 1)
        return fwrite(t->data, 1, t->nbytes, f) == t->nbytes;
    char chunk[4096];
    size_t per = sizeof chunk / sz * sz;
    for (size_t off = 0; off < t->nbytes; off += per) {
        size_t k = t->nbytes - off < per ? t->nbytes - off : per;
        memcpy(chunk, (const char *)t->data + off, k);
        swap_elements(chunk, k / sz, sz);
        if (fwrite(chunk, 1, k, f) != k)
            return false;
    }
    return true;
}

/* "DIR/.NAME.XXXXXX" for path "DIR/NAME" (or ".NAME.XXXXXX" for "NAME"). */
static char *temp_template(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dlen;
    size_t n = dlen + 1 + strlen(base) + 8 + 1;
    char *tmp = malloc(n);
    if (tmp)
        snprintf(tmp, n, "%.*s.%s.XXXXXX", (int)dlen, path, base);
    return tmp;
}

FILE *rt_file_create(const char *path, char **tmp)
{
    *tmp = temp_template(path);
    if (!*tmp) {
        errno = ENOMEM;
        return NULL;
    }
    int fd = mkstemp(*tmp);
    /* mkstemp's 0600, widened to what open(O_CREAT, 0666) would give. */
    mode_t mask = umask(0);
    umask(mask);
    FILE *f = fd >= 0 && fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        int saved = errno;
        if (fd >= 0) {
            close(fd);
            unlink(*tmp);
        }
        free(*tmp);
        *tmp = NULL;
        errno = saved;
    }
    return f;
}

/* Flushes, syncs and closes f; false (errno set) if any of it, or an
 * earlier write, failed. */
static bool close_synced(FILE *f)
{
    bool ok = !ferror(f) && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int saved = ok ? 0 : errno ? errno : EIO;
    if (fclose(f) != 0 && ok)
        return false;
    errno = saved;
    return ok;
}

bool rt_file_commit(FILE *f, char *tmp, const char *path)
{
    bool ok = close_synced(f) && rename(tmp, path) == 0;
    int saved = errno;
    if (!ok)
        unlink(tmp);
    free(tmp);
    errno = saved;
    return ok;
}

char *rt_npy_write_temp(const char *path, const rt_tensor *t, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    const char *descr = (unsigned)t->dtype < IR_NDTYPES ? rt_npy_descr(t->dtype) : NULL;
    if (!descr) {
        npy_err(err, errlen, path,
                "cannot save %s data: NumPy has no such dtype; cast to f32 first",
                (unsigned)t->dtype < IR_NDTYPES ? ir_dtype_name(t->dtype) : "unknown");
        return NULL;
    }
    char head[1024];
    size_t hn = build_header(head, sizeof head, descr, t);
    if (!hn) {
        npy_err(err, errlen, path, "internal error: npy: header does not fit");
        return NULL;
    }
    char *tmp;
    FILE *f = rt_file_create(path, &tmp);
    if (!f) {
        npy_err(err, errlen, path, "cannot create a temporary file beside it: %s",
                strerror(errno));
        return NULL;
    }
    bool ok = fwrite(head, 1, hn, f) == hn && write_data(f, t);
    int saved = errno;
    if (!close_synced(f) || !ok) {
        npy_err(err, errlen, path, "cannot write: %s", strerror(ok ? errno : saved));
        unlink(tmp);
        free(tmp);
        return NULL;
    }
    return tmp;
}

bool rt_npy_write(const char *path, const rt_tensor *t, char *err, size_t errlen)
{
    char *tmp = rt_npy_write_temp(path, t, err, errlen);
    if (!tmp)
        return false;
    bool ok = rename(tmp, path) == 0;
    if (!ok) {
        npy_err(err, errlen, path, "cannot write: %s", strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return ok;
}
