/* accel/profile_report.c — the accelerator's workload in a profile report:
 * written under "accel_workload" by `tec --profile --report=FILE.json`,
 * read back by `tec --accel CFG --from-report=FILE.json` (doc/profile.md
 * gives the format). */
#include "accel/accel.h"
#include "accel/json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The integer fields of a layer, by kind, and of its convolution geometry:
 * the one table both the writer and the reader follow. */
typedef struct int_field {
    const char *key;
    size_t offset;
    int64_t min;               /* smallest valid value */
    bool optional;             /* may be missing (0): reports written before it */
} int_field;

static const int_field gemm_fields[] = {
    {"M", offsetof(acc_layer, M), 1, false},
    {"N", offsetof(acc_layer, N), 1, false},
    {"K", offsetof(acc_layer, K), 1, false},
    {"batch", offsetof(acc_layer, batch), 1, false},
    {"declared_M", offsetof(acc_layer, declared_M), 0, false},
    {"declared_K", offsetof(acc_layer, declared_K), 0, true},
};

static const int_field vector_fields[] = {
    {"ops", offsetof(acc_layer, vector_ops), 0, false},
    {"read_bytes", offsetof(acc_layer, vector_read_bytes), 0, false},
    {"write_bytes", offsetof(acc_layer, vector_write_bytes), 0, false},
};

static const int_field conv_fields[] = {
    {"ifmap_h", offsetof(acc_conv, ifmap_h), 1, false},
    {"ifmap_w", offsetof(acc_conv, ifmap_w), 1, false},
    {"filt_h", offsetof(acc_conv, filt_h), 1, false},
    {"filt_w", offsetof(acc_conv, filt_w), 1, false},
    {"channels", offsetof(acc_conv, channels), 1, false},
    {"num_filters", offsetof(acc_conv, num_filters), 1, false},
    {"stride_h", offsetof(acc_conv, stride_h), 1, false},
    {"stride_w", offsetof(acc_conv, stride_w), 1, false},
};

#define NELEMS(a) ((int)(sizeof(a) / sizeof *(a)))

static int64_t *field_at(void *base, const int_field *f)
{
    return (int64_t *)((char *)base + f->offset);
}

static int64_t field_value(const void *base, const int_field *f)
{
    return *(const int64_t *)((const char *)base + f->offset);
}

/* ---------------------------------------------------------------- writing */

/* The fields as "key": value pairs, each after ", " but the first of an
 * object's (first). */
static void write_fields(FILE *out, const void *base, const int_field *fs, int n, bool first)
{
    for (int i = 0; i < n; i++)
        fprintf(out, "%s\"%s\": %" PRId64, first && i == 0 ? "" : ", ", fs[i].key,
                field_value(base, &fs[i]));
}

void acc_write_workload_json(FILE *out, const acc_layer *ls, int n, bool from_run)
{
    fprintf(out, "{\"counts\": \"%s\", \"layers\": [", from_run ? "run" : "static");
    for (int i = 0; i < n; i++) {
        const acc_layer *l = &ls[i];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
        acc_json_write_string(out, l->name ? l->name : "");
        if (l->kind == ACC_LAYER_VECTOR) {
            fputs(", \"kind\": \"vector\"", out);
            write_fields(out, l, vector_fields, NELEMS(vector_fields), false);
            fputs("}", out);
            continue;
        }
        fputs(", \"kind\": \"gemm\"", out);
        write_fields(out, l, gemm_fields, NELEMS(gemm_fields), false);
        fprintf(out, ", \"elem_bytes\": [%" PRId64 ", %" PRId64 ", %" PRId64 "], \"conv\": ",
                l->elem_bytes[0], l->elem_bytes[1], l->elem_bytes[2]);
        if (l->has_conv) {
            fputs("{", out);
            write_fields(out, &l->conv, conv_fields, NELEMS(conv_fields), true);
            fputs("}", out);
        } else {
            fputs("null", out);
        }
        fputs("}", out);
    }
    fputs(n ? "\n  ]}" : "]}", out);
}

void acc_write_workload_error_json(FILE *out, const char *message)
{
    fputs("{\"error\": ", out);
    acc_json_write_string(out, message ? message : "");
    fputs("}", out);
}

/* ---------------------------------------------------------------- reading */

typedef struct reader {
    const char *path;
    char *err;
    size_t errlen;
} reader;

static bool rfail(const reader *r, const acc_json *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool rfail(const reader *r, const acc_json *at, const char *fmt, ...)
{
    int n = at ? snprintf(r->err, r->errlen, "%s:%d:%d: error: ", r->path, at->line, at->col)
               : snprintf(r->err, r->errlen, "%s: error: ", r->path);
    if (n >= 0 && (size_t)n < r->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* obj[key] of the given kind; a missing key is reported at the object. */
static const acc_json *member(const reader *r, const acc_json *obj, const char *what,
                              const char *key, acc_json_kind kind)
{
    const acc_json *v = acc_json_get(obj, key);
    if (!v)
        rfail(r, obj, "%s has no \"%s\"", what, key);
    else if (v->kind != kind) {
        rfail(r, v, "%s: \"%s\" must be %s, not %s", what, key, acc_json_kind_name(kind),
              acc_json_kind_name(v->kind));
        v = NULL;
    }
    return v;
}

static bool read_int(const reader *r, const acc_json *v, const char *what, const char *key,
                     int64_t min, int64_t *out)
{
    if (!v || v->kind != ACC_JSON_NUMBER || !v->is_int || v->integer < min)
        return rfail(r, v, "%s: \"%s\" must be %s integer", what, key,
                     min > 0 ? "a positive" : "a non-negative");
    *out = v->integer;
    return true;
}

static bool read_fields(const reader *r, const acc_json *obj, const char *what, void *base,
                        const int_field *fs, int n)
{
    for (int i = 0; i < n; i++) {
        const acc_json *v = acc_json_get(obj, fs[i].key);
        if (!v && fs[i].optional)
            continue;
        if (!v)
            return rfail(r, obj, "%s has no \"%s\"", what, fs[i].key);
        if (!read_int(r, v, what, fs[i].key, fs[i].min, field_at(base, &fs[i])))
            return false;
    }
    return true;
}

static bool read_gemm(const reader *r, const acc_json *o, const char *what, acc_layer *l)
{
    l->kind = ACC_LAYER_GEMM;
    if (!read_fields(r, o, what, l, gemm_fields, NELEMS(gemm_fields)))
        return false;
    const acc_json *eb = member(r, o, what, "elem_bytes", ACC_JSON_ARRAY);
    if (!eb)
        return false;
    if (eb->n != ACC_NOPERANDS)
        return rfail(r, eb, "%s: \"elem_bytes\" must hold 3 sizes (ifmap, filter, ofmap), "
                     "not %d", what, eb->n);
    for (int k = 0; k < ACC_NOPERANDS; k++)
        if (!read_int(r, eb->items[k], what, "elem_bytes", 1, &l->elem_bytes[k]))
            return false;
    const acc_json *cv = acc_json_get(o, "conv");
    if (!cv)
        return rfail(r, o, "%s has no \"conv\"", what);
    if (cv->kind == ACC_JSON_NULL)
        return true;
    if (cv->kind != ACC_JSON_OBJECT)
        return rfail(r, cv, "%s: \"conv\" must be an object or null, not %s", what,
                     acc_json_kind_name(cv->kind));
    if (!read_fields(r, cv, what, &l->conv, conv_fields, NELEMS(conv_fields)))
        return false;
    /* the geometry must give back the GEMM, as acc_conv_to_gemm reads it */
    acc_layer check;
    memset(&check, 0, sizeof check);
    char e[256];
    if (!acc_conv_to_gemm(&l->conv, l->batch, &check, e, sizeof e) || check.M != l->M ||
        check.N != l->N || check.K != l->K)
        return rfail(r, cv, "%s: the convolution geometry does not give its GEMM %" PRId64
                     "x%" PRId64 "x%" PRId64 " (batch %" PRId64 ")", what, l->M, l->N, l->K,
                     l->batch);
    l->has_conv = true;
    return true;
}

static bool read_layer(const reader *r, const acc_json *o, int i, acc_layer *l)
{
    char what[300];
    snprintf(what, sizeof what, "accel_workload layer %d", i);
    if (o->kind != ACC_JSON_OBJECT)
        return rfail(r, o, "%s must be an object, not %s", what, acc_json_kind_name(o->kind));
    const acc_json *name = member(r, o, what, "name", ACC_JSON_STRING);
    if (!name)
        return false;
    snprintf(what, sizeof what, "layer %s", name->string);
    if (!(l->name = strdup(name->string)))
        return rfail(r, NULL, "out of memory");
    const acc_json *kind = member(r, o, what, "kind", ACC_JSON_STRING);
    if (!kind)
        return false;
    if (strcmp(kind->string, "gemm") == 0)
        return read_gemm(r, o, what, l);
    if (strcmp(kind->string, "vector") == 0) {
        l->kind = ACC_LAYER_VECTOR;
        return read_fields(r, o, what, l, vector_fields, NELEMS(vector_fields));
    }
    return rfail(r, kind, "%s: unknown \"kind\" \"%s\" (expected gemm or vector)", what,
                 kind->string);
}

static char *read_text(const char *path, size_t *len, reader *r)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        rfail(r, NULL, "cannot read: %s", strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    while (text) {
        n += fread(text + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *t = cap > SIZE_MAX / 2 ? NULL : realloc(text, cap * 2);
        if (!t) {
            free(text);
            text = NULL;
            break;
        }
        text = t;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!text || bad) {
        rfail(r, NULL, "cannot read: %s", text ? "read error" : "out of memory");
        free(text);
        return NULL;
    }
    *len = n;
    return text;
}

bool acc_read_profile_report(const char *path, acc_layer **layers, int *nout, char *err,
                             size_t errlen)
{
    reader r = {path, err, errlen};
    *layers = NULL;
    *nout = 0;
    size_t len;
    char *text = read_text(path, &len, &r);
    if (!text)
        return false;
    acc_json *root = acc_json_parse(path, text, len, err, errlen);
    free(text);
    if (!root)
        return false;
    bool ok = false;
    acc_layer *ls = NULL;
    int n = 0;
    const acc_json *wl = acc_json_get(root, "accel_workload"), *list = NULL;
    if (root->kind != ACC_JSON_OBJECT || !acc_json_get(root, "network") ||
        !acc_json_get(root, "layers"))
        rfail(&r, root, "not a tec profile report (write one with tec --profile "
              "--report=FILE.json)");
    else if (!wl)
        rfail(&r, root, "the profile report has no \"accel_workload\" (written by an older "
              "tec: profile the program again)");
    else if (wl->kind != ACC_JSON_OBJECT)
        rfail(&r, wl, "\"accel_workload\" must be an object, not %s",
              acc_json_kind_name(wl->kind));
    else if (acc_json_get(wl, "error") && acc_json_get(wl, "error")->kind == ACC_JSON_STRING)
        rfail(&r, wl, "the profile has no accelerator workload: %s",
              acc_json_get(wl, "error")->string);
    else if ((list = member(&r, wl, "\"accel_workload\"", "layers", ACC_JSON_ARRAY)) &&
             (ls = calloc((size_t)(list->n > 0 ? list->n : 1), sizeof *ls)) == NULL)
        rfail(&r, NULL, "out of memory");
    if (ls) {
        ok = true;
        for (; ok && n < list->n; n++)
            ok = read_layer(&r, list->items[n], n, &ls[n]);
    }
    acc_json_free(root);
    if (!ok) {
        acc_layers_free(ls, n);
        return false;
    }
    *layers = ls;
    *nout = n;
    return true;
}
