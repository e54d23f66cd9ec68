/* accel/topology.c — SCALE-Sim topology CSVs: the convolution format (one
 * row per layer: name, IFMAP height/width, filter height/width, channels,
 * filters, stride) and the M,N,K format, read into acc_layer lists and
 * written back. */
#include "accel/accel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Column titles of the two formats, as SCALE-Sim's own files spell them;
 * errors name the column by these. */
static const char *const conv_cols[] = {
    "Layer name", "IFMAP Height", "IFMAP Width", "Filter Height", "Filter Width",
    "Channels", "Num Filter", "Strides", "Stride Width"};
static const char *const gemm_cols[] = {"Layer name", "M", "N", "K"};

int64_t acc_conv_out_floor(int64_t in, int64_t filt, int64_t stride)
{
    return (in - filt) / stride + 1;
}

int64_t acc_conv_out_ceil(int64_t in, int64_t filt, int64_t stride)
{
    return (in - filt + stride + stride - 1) / stride;
}

bool acc_conv_to_gemm(const acc_conv *cv, int64_t groups, acc_layer *l, char *err,
                      size_t errlen)
{
    if (groups < 1 || cv->channels % groups || cv->num_filters % groups) {
        snprintf(err, errlen, "tec: error: %lld groups do not divide %lld channels and "
                 "%lld filters", (long long)groups, (long long)cv->channels,
                 (long long)cv->num_filters);
        return false;
    }
    if (cv->filt_h > cv->ifmap_h || cv->filt_w > cv->ifmap_w) {
        snprintf(err, errlen, "tec: error: filter %lldx%lld is larger than IFMAP %lldx%lld",
                 (long long)cv->filt_h, (long long)cv->filt_w, (long long)cv->ifmap_h,
                 (long long)cv->ifmap_w);
        return false;
    }
    /* Output size of an unpadded convolution over the (already padded)
     * ifmap: floor((H - R) / S) + 1. */
    int64_t oh = acc_conv_out_floor(cv->ifmap_h, cv->filt_h, cv->stride_h);
    int64_t ow = acc_conv_out_floor(cv->ifmap_w, cv->filt_w, cv->stride_w);
    int64_t m, rs, k;
    if (__builtin_mul_overflow(oh, ow, &m) ||
        __builtin_mul_overflow(cv->filt_h, cv->filt_w, &rs) ||
        __builtin_mul_overflow(rs, cv->channels / groups, &k)) {
        snprintf(err, errlen, "tec: error: convolution GEMM size does not fit in 64 bits");
        return false;
    }
    l->kind = ACC_LAYER_GEMM;
    l->M = m;
    l->N = cv->num_filters / groups;
    l->K = k;
    l->batch = groups;
    l->has_conv = true;
    l->conv = *cv;
    return true;
}

/* ---------------------------------------------------------------- reading */

/* One CSV field: text (trimmed, NUL-terminated in the line buffer) and its
 * 1-based column for diagnostics. */
typedef struct field {
    char *text;
    int col;
} field;

#define MAX_FIELDS 16

/* Splits a line in place at commas.  Trailing empty fields (SCALE-Sim's
 * files end every row with a comma) are dropped.  Returns the field count,
 * or MAX_FIELDS + 1 when there are more. */
static int split_fields(char *line, field *f)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *start = p;
        while (*p && *p != ',')
            p++;
        bool last = *p == '\0';
        *p = '\0';
        while (*start == ' ' || *start == '\t')
            start++;
        char *e = start + strlen(start);
        while (e > start && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            *--e = '\0';
        if (n == MAX_FIELDS)
            return MAX_FIELDS + 1;
        f[n].text = start;
        f[n].col = (int)(start - line) + 1;
        n++;
        if (last)
            break;
        p++;
    }
    while (n > 0 && f[n - 1].text[0] == '\0')
        n--;
    return n;
}

/* State while reading one file. */
typedef struct topo_read {
    const char *path;
    int line;
    char *err;
    size_t errlen;
} topo_read;

static bool topo_error(topo_read *T, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool topo_error(topo_read *T, int col, const char *fmt, ...)
{
    int k;
    if (T->line == 0)
        k = snprintf(T->err, T->errlen, "%s: error: ", T->path);
    else if (col == 0)
        k = snprintf(T->err, T->errlen, "%s:%d: error: ", T->path, T->line);
    else
        k = snprintf(T->err, T->errlen, "%s:%d:%d: error: ", T->path, T->line, col);
    if (k >= 0 && (size_t)k < T->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(T->err + k, T->errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool positive(topo_read *T, const field *f, const char *what, int64_t *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(f->text, &end, 10);
    if (!f->text[0] || errno || *end || x < 1)
        return topo_error(T, f->col, "bad value '%s' for %s: expected a positive integer",
                          f->text, what);
    *out = x;
    return true;
}

static bool read_conv_row(topo_read *T, field *f, int n, acc_layer *l)
{
    if (n != 8 && n != 9)
        return topo_error(T, 0, "expected 8 or 9 values in the convolution format (Layer "
                          "name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                          "Channels, Num Filter, Strides[, Stride Width]), got %d", n);
    int64_t v[8];
    for (int i = 1; i < n; i++)
        if (!positive(T, &f[i], conv_cols[i], &v[i - 1]))
            return false;
    acc_conv cv = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], n == 9 ? v[7] : v[6]};
    if (cv.filt_h > cv.ifmap_h)
        return topo_error(T, f[3].col, "Filter Height %lld is larger than IFMAP Height %lld",
                          (long long)cv.filt_h, (long long)cv.ifmap_h);
    if (cv.filt_w > cv.ifmap_w)
        return topo_error(T, f[4].col, "Filter Width %lld is larger than IFMAP Width %lld",
                          (long long)cv.filt_w, (long long)cv.ifmap_w);
    /* SCALE-Sim's convention: a layer whose name contains "DP" is depthwise,
     * one group per channel. */
    int64_t groups = strstr(f[0].text, "DP") ? cv.channels : 1;
    /* Its Num Filter counts filters per channel; acc_conv counts them all. */
    if (groups > 1 && __builtin_mul_overflow(cv.num_filters, groups, &cv.num_filters))
        return topo_error(T, f[6].col, "Num Filter times Channels does not fit in 64 bits");
    char msg[256];
    if (!acc_conv_to_gemm(&cv, groups, l, msg, sizeof msg))
        return topo_error(T, 0, "%s", msg + strlen("tec: error: "));
    return true;
}

static bool read_gemm_row(topo_read *T, field *f, int n, acc_layer *l)
{
    if (n != 4)
        return topo_error(T, 0, "expected 4 values in the M,N,K format (Layer name, M, N, K), "
                          "got %d", n);
    int64_t v[3];
    for (int i = 1; i < 4; i++)
        if (!positive(T, &f[i], gemm_cols[i], &v[i - 1]))
            return false;
    l->kind = ACC_LAYER_GEMM;
    l->M = v[0];
    l->N = v[1];
    l->K = v[2];
    l->batch = 1;
    return true;
}

/* Reads the whole file; NUL bytes would cut lines short, so they are an
 * error rather than silently ignored. */
static char *slurp(topo_read *T, size_t *len)
{
    FILE *f = fopen(T->path, "rb");
    if (!f) {
        topo_error(T, 0, "cannot open: %s", strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            topo_error(T, 0, "out of memory");
            return NULL;
        }
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb)
            free(buf);
        buf = nb;
    }
    bool bad = ferror(f);
    int saved = errno;
    fclose(f);
    if (bad) {
        free(buf);
        topo_error(T, 0, "cannot read: %s", strerror(saved));
        return NULL;
    }
    buf[n] = '\0';
    if (memchr(buf, '\0', n)) {
        free(buf);
        topo_error(T, 0, "contains a NUL byte (not a text CSV file)");
        return NULL;
    }
    *len = n;
    return buf;
}

bool acc_read_topology(const char *path, acc_topo_format fmt, acc_layer **layers, int *nout,
                       char *err, size_t errlen)
{
    topo_read T = {path, 0, err, errlen};
    *layers = NULL;
    *nout = 0;
    size_t len;
    char *text = slurp(&T, &len);
    if (!text)
        return false;
    acc_layer *ls = NULL;
    int n = 0, cap = 0;
    bool header = true, ok = true;
    /* strtok would merge empty lines; walk lines by hand to count them. */
    char *p = text;
    while (ok && *p) {
        char *line = p;
        char *nl = strchr(p, '\n');
        if (nl) {
            *nl = '\0';
            p = nl + 1;
        } else {
            p += strlen(p);
        }
        T.line++;
        field f[MAX_FIELDS];
        int nf = split_fields(line, f);
        if (nf == 0)
            continue;                      /* blank line */
        if (nf > MAX_FIELDS) {
            ok = topo_error(&T, 0, "too many values (more than %d)", MAX_FIELDS);
            break;
        }
        if (header) {
            /* The first non-blank line names the columns. */
            header = false;
            if (fmt == ACC_TOPO_AUTO)
                fmt = nf >= 2 && strcasecmp(f[1].text, "M") == 0 ? ACC_TOPO_GEMM
                                                                 : ACC_TOPO_CONV;
            continue;
        }
        if (!f[0].text[0]) {
            ok = topo_error(&T, f[0].col, "empty layer name");
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            acc_layer *nl2 = realloc(ls, (size_t)cap * sizeof *ls);
            if (!nl2) {
                ok = topo_error(&T, 0, "out of memory");
                break;
            }
            ls = nl2;
        }
        acc_layer *l = &ls[n];
        memset(l, 0, sizeof *l);
        ok = fmt == ACC_TOPO_GEMM ? read_gemm_row(&T, f, nf, l) : read_conv_row(&T, f, nf, l);
        if (!ok)
            break;
        l->name = strdup(f[0].text);
        if (!l->name) {
            ok = topo_error(&T, 0, "out of memory");
            break;
        }
        n++;
    }
    free(text);
    if (ok && header) {
        T.line = 0;
        ok = topo_error(&T, 0, "empty topology file (no header line)");
    } else if (ok && n == 0) {
        T.line = 0;
        ok = topo_error(&T, 0, "no layers after the header line");
    }
    if (!ok) {
        acc_layers_free(ls, n);
        return false;
    }
    *layers = ls;
    *nout = n;
    return true;
}

/* ---------------------------------------------------------------- writing */

/* Writes one conv row; per-group rows carry the group's channels/filters. */
static void write_conv_row(FILE *f, const char *name, const acc_conv *cv, int64_t ch,
                           int64_t nf)
{
    fprintf(f, "%s, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld,\n", name,
            (long long)cv->ifmap_h, (long long)cv->ifmap_w, (long long)cv->filt_h,
            (long long)cv->filt_w, (long long)ch, (long long)nf, (long long)cv->stride_h,
            (long long)cv->stride_w);
}

bool acc_write_topology(const char *path, acc_topo_format fmt, const acc_layer *layers,
                        int n, char *err, size_t errlen)
{
    if (fmt == ACC_TOPO_AUTO) {
        fmt = ACC_TOPO_CONV;
        for (int i = 0; i < n; i++)
            if (layers[i].kind == ACC_LAYER_GEMM && !layers[i].has_conv)
                fmt = ACC_TOPO_GEMM;
    }
    for (int i = 0; i < n; i++) {
        const acc_layer *l = &layers[i];
        if (l->kind != ACC_LAYER_GEMM)
            continue;
        if (strchr(l->name, ',') || strchr(l->name, '\n')) {
            snprintf(err, errlen, "%s: error: layer name '%s' cannot be written to a CSV "
                     "topology (it contains a comma or newline)", path, l->name);
            return false;
        }
        if (fmt == ACC_TOPO_CONV && !l->has_conv) {
            snprintf(err, errlen, "%s: error: layer %s has no convolution geometry; "
                     "write the M,N,K format instead", path, l->name);
            return false;
        }
        if (fmt == ACC_TOPO_CONV && strstr(l->name, "DP") &&
            !(l->batch == l->conv.channels)) {
            snprintf(err, errlen, "%s: error: layer %s is not depthwise, but SCALE-Sim "
                     "reads a name containing \"DP\" as depthwise; rename it", path,
                     l->name);
            return false;
        }
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: error: cannot open for writing: %s", path, strerror(errno));
        return false;
    }
    if (fmt == ACC_TOPO_CONV)
        fprintf(f, "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                   "Channels, Num Filter, Stride Height, Stride Width,\n");
    else
        fprintf(f, "Layer name, M, N, K,\n");
    for (int i = 0; i < n; i++) {
        const acc_layer *l = &layers[i];
        if (l->kind != ACC_LAYER_GEMM)
            continue;
        int64_t g = l->batch;
        bool dp_row = fmt == ACC_TOPO_CONV && g > 1 && strstr(l->name, "DP") &&
                      l->conv.channels == g;
        if (g == 1 || dp_row) {
            if (fmt == ACC_TOPO_CONV)
                write_conv_row(f, l->name, &l->conv, l->conv.channels,
                               dp_row ? l->conv.num_filters / g : l->conv.num_filters);
            else
                fprintf(f, "%s, %lld, %lld, %lld,\n", l->name, (long long)l->M,
                        (long long)l->N, (long long)l->K);
            continue;
        }
        /* One row per group, named NAME.gI (names with "DP" took the
         * single-row path above). */
        for (int64_t gi = 0; gi < g; gi++) {
            char name[512];
            snprintf(name, sizeof name, "%s.g%lld", l->name, (long long)gi);
            if (fmt == ACC_TOPO_CONV)
                write_conv_row(f, name, &l->conv, l->conv.channels / g,
                               l->conv.num_filters / g);
            else
                fprintf(f, "%s, %lld, %lld, %lld,\n", name, (long long)l->M,
                        (long long)l->N, (long long)l->K);
        }
    }
    bool bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "%s: error: write failed", path);
        return false;
    }
    return true;
}
