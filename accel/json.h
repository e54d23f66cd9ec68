/* accel/json.h — a small JSON reader: enough to read back the reports tec
 * writes (a saved profile report for `tec --accel CFG --from-report`).
 *
 * The whole text becomes a tree of values, each with the line and column
 * where it starts, so that whoever checks the tree's contents can report a
 * located error ("r.json:12:7: error: ...").  Integers that fit in 64 bits
 * are kept exactly besides their double value.  Nesting deeper than
 * ACC_JSON_MAX_DEPTH is an error (no recursion without bound). */
#ifndef TEC_ACCEL_JSON_H
#define TEC_ACCEL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ACC_JSON_MAX_DEPTH 64

typedef enum {
    ACC_JSON_NULL, ACC_JSON_BOOL, ACC_JSON_NUMBER, ACC_JSON_STRING, ACC_JSON_ARRAY,
    ACC_JSON_OBJECT
} acc_json_kind;

/* One value.  Arrays: items[n]; objects: keys[n] and items[n] in the
 * order written. */
typedef struct acc_json {
    acc_json_kind kind;
    int line, col;             /* where the value starts, from 1 */
    bool boolean;
    double number;
    bool is_int;               /* a number written without fraction or exponent that
                                  fits in int64 */
    int64_t integer;
    char *string;              /* NUL-terminated, escapes decoded */
    struct acc_json **items;
    char **keys;
    int n;
} acc_json;

/* Parses text[len]; on a syntax error returns NULL and writes
 * "name:line:col: error: ..." into err. */
acc_json *acc_json_parse(const char *name, const char *text, size_t len, char *err,
                         size_t errlen);
void acc_json_free(acc_json *v);

/* The value of key in an object (the first if repeated), or NULL. */
const acc_json *acc_json_get(const acc_json *obj, const char *key);

/* Writes s as a JSON string literal (quotes, backslashes and control
 * characters escaped). */
void acc_json_write_string(FILE *out, const char *s);

/* "a number", "an object", ...: for messages. */
const char *acc_json_kind_name(acc_json_kind k);

#endif
