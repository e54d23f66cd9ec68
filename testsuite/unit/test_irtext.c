/* testsuite/unit/test_irtext.c — the textual IR: printer, parser, verifier.
 *
 *   test_irtext [SRCDIR | FILE.tir ...]
 *
 * With .tir files (the RUN lines of testsuite/tir/roundtrip/) it checks
 * those files only: each parses, verifies, is already in printed form
 * (comment lines aside), is a fixed point of print(parse(.)), and every
 * truncation of it is handled without a crash.  With a source directory
 * (what testsuite/run-tests passes) or nothing it runs everything: the
 * files under SRCDIR/testsuite/tir/roundtrip, builder-made modules covering
 * every node kind, random expressions, exact parser and verifier messages,
 * and the fuzz loops.  One line per check; exit status 1 on any failure.
 */
#include "ir/diag.h"
#include "ir/ir.h"
#include "testsuite/unit/test.h"

#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


/* ---------------------------------------------------------------- helpers */

/* A diag writing into a memory buffer. */
typedef struct capture {
    diag d;
    char *text;
    size_t len;
    FILE *out;
} capture;

static void capture_begin(capture *c)
{
    c->text = NULL;
    c->len = 0;
    c->out = open_memstream(&c->text, &c->len);
    diag_init(&c->d, c->out);
}

/* Ends the capture; the text stays in c->text (caller frees). */
static void capture_end(capture *c)
{
    fclose(c->out);
    diag_fini(&c->d);
}

static char *first_line(const char *s)
{
    size_t n = strcspn(s ? s : "", "\n");
    char *l = malloc(n + 1);
    memcpy(l, s ? s : "", n);
    l[n] = 0;
    return l;
}

/* Parses quietly; NULL on errors. */
static ir_module *parse_quiet(const char *name, const char *text, size_t len)
{
    FILE *null = fopen("/dev/null", "w");
    diag d;
    diag_init(&d, null);
    ir_module *m = ir_parse(name, text, len, &d);
    diag_fini(&d);
    fclose(null);
    return m;
}

/* print -> parse -> print gives the same text.  Fills *text_out (malloc'ed)
 * with the first print when asked. */
static bool fixed_point(const ir_module *m, char **text_out)
{
    char *a = ir_module_to_string(m);
    ir_module *m2 = parse_quiet("<printed>", a, strlen(a));
    char *b = m2 ? ir_module_to_string(m2) : NULL;
    bool ok = b && strcmp(a, b) == 0;
    if (!ok && getenv("VERBOSE"))
        fprintf(stderr, "--- first print\n%s--- second print\n%s", a, b ? b : "(parse failed)\n");
    free(b);
    ir_module_free(m2);
    if (text_out)
        *text_out = a;
    else
        free(a);
    return ok;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (n + 1 >= cap) {
            cap = cap ? 2 * cap : 4096;
            buf = realloc(buf, cap);
        }
        buf[n++] = (char)c;
    }
    fclose(f);
    if (!buf)
        buf = calloc(1, 1);
    buf[n] = 0;
    *len = n;
    return buf;
}

/* The text without '#' comment lines: what the printer must reproduce. */
static char *strip_comments(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    while (*s) {
        size_t n = strcspn(s, "\n");
        bool keep = s[0] != '#';
        if (keep) {
            memcpy(o, s, n);
            o += n;
        }
        s += n;
        if (*s == '\n') {
            if (keep)
                *o++ = '\n';
            s++;
        }
    }
    *o = 0;
    return out;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* Deterministic pseudo-random numbers (xorshift64*). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}
static int rnd_below(int n) { return (int)(rnd() % (uint64_t)n); }

/* ---------------------------------------------------------------- fuzzing */

/* Parses text; whatever comes back must print, verify and be a fixed
 * point.  Returns false only when a parsed module is not a fixed point. */
static bool fuzz_one(const char *text, size_t len, int *parsed)
{
    ir_module *m = parse_quiet("fuzz", text, len);
    if (!m)
        return true;
    (*parsed)++;
    FILE *null = fopen("/dev/null", "w");
    diag d;
    diag_init(&d, null);
    ir_verify(m, "fuzz", &d);
    diag_fini(&d);
    fclose(null);
    bool ok = fixed_point(m, NULL);
    ir_module_free(m);
    return ok;
}

/* Every prefix of a file, and random byte mutations of it. */
static void fuzz_file(const char *name, const char *text, size_t len)
{
    int parsed = 0;
    bool ok = true;
    for (size_t n = 0; n <= len; n++) {
        /* A private copy, so reading past the prefix is an ASan error. */
        char *copy = malloc(n ? n : 1);
        memcpy(copy, text, n);
        ok = fuzz_one(copy, n, &parsed) && ok;
        free(copy);
    }
    check(ok && parsed >= 1, "%s: %zu truncations handled (%d parse, all fixed points)", name,
          len + 1, parsed);

    static const char alphabet[] = "()[]{},:=<>+-*/!&|.\"\\@#\n 0123456789aefinx_";
    parsed = 0;
    ok = true;
    char *copy = malloc(len + 8);
    for (int iter = 0; iter < 400; iter++) {
        memcpy(copy, text, len);
        size_t n = len;
        for (int k = 0; k < 1 + rnd_below(3); k++) {
            size_t at = n ? (size_t)rnd_below((int)n) : 0;
            int op = rnd_below(3);
            char c = rnd_below(8) == 0 ? (char)rnd_below(256)
                                       : alphabet[rnd_below((int)sizeof alphabet - 1)];
            if (op == 0 && n > 0) {
                copy[at] = c;
            } else if (op == 1 && n > 0) {
                memmove(copy + at, copy + at + 1, n - at - 1);
                n--;
            } else {
                memmove(copy + at + 1, copy + at, n - at);
                copy[at] = c;
                n++;
            }
        }
        ok = fuzz_one(copy, n, &parsed) && ok;
    }
    free(copy);
    check(ok, "%s: 400 random mutations handled (%d parse, all fixed points)", name, parsed);
}

static void fuzz_random(void)
{
    int parsed = 0;
    bool ok = true;
    char buf[512];
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = (size_t)rnd_below((int)sizeof buf);
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)rnd_below(256);
        ok = fuzz_one(buf, n, &parsed) && ok;
    }
    check(ok, "3000 random byte strings handled");

    /* Token soup reaches deeper into the grammar than random bytes. */
    static const char *const words[] = {
        "module", "\"m\"", "func", "@f", "(", ")", "{", "}", "[", "]", "A", ":", "f32", "i64",
        "i", "for", "in", "0", "..", "4", "=", "+", "-", "*", "/", "block", "reads", "writes",
        "init", ",", "\n", "select", "cast", "<", ">", "graph", "call", "input", "output",
        "1.0f", "!", "&&", "||", "==", "alloc", "let", "if", "else", "evaluate", "assert",
        "tec_prof_enter", "exp", "min", "spatial", "reduce", "\"s\"", "#", "inff", "-3", "true",
        "stack", "parallel", "attrs", "vi", "A[i]", "\n  ",
    };
    char text[2048];
    parsed = 0;
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = (size_t)snprintf(text, sizeof text, "module \"soup\"\n");
        int count = 1 + rnd_below(120);
        for (int k = 0; k < count && n + 40 < sizeof text; k++)
            n += (size_t)snprintf(text + n, sizeof text - n, "%s ",
                                  words[rnd_below((int)(sizeof words / sizeof *words))]);
        ok = fuzz_one(text, n, &parsed) && ok;
    }
    check(ok, "3000 token soups handled (%d parse)", parsed);

    /* Nesting deep enough to overflow a naive recursive parser (each "-(" is
     * one level of the parser's recursion: the minus itself is read in a loop). */
    size_t depth = 100000;
    char *deep = malloc(3 * depth + 200);
    size_t n = (size_t)sprintf(deep, "module \"d\"\nfunc @f(A: f32[1]) {\n  A[0] = ");
    for (size_t i = 0; i < depth; i++)
        deep[n++] = i % 2 ? '(' : '-';
    n += (size_t)sprintf(deep + n, "1.0f\n}\n");
    capture c;
    capture_begin(&c);
    ir_module *m = ir_parse("deep.tir", deep, n, &c.d);
    capture_end(&c);
    char *l = first_line(c.text);
    check(!m && strcmp(l, "deep.tir:3:408: error: expression is nested too deeply") == 0,
          "deeply nested expression: %s", l);
    free(l);
    free(c.text);
    n = (size_t)sprintf(deep, "module \"d\"\nfunc @f(A: f32[1]) {\n");
    for (size_t i = 0; i < 5000; i++)
        n += (size_t)sprintf(deep + n, "if true {\n");
    m = parse_quiet("deep.tir", deep, n);
    check(!m, "5000 nested ifs are rejected without a crash");
    free(deep);
}

/* ---------------------------------------------------------------- round-trip files */

static void check_file(const char *path, bool fuzz)
{
    size_t len;
    char *text = read_file(path, &len);
    const char *name = base_name(path);
    if (!text) {
        check(false, "%s: cannot read", path);
        return;
    }
    capture c;
    capture_begin(&c);
    ir_module *m = ir_parse(path, text, len, &c.d);
    bool verified = m && ir_verify(m, NULL, &c.d);
    capture_end(&c);
    check(m && verified && c.len == 0, "%s: parses and verifies%s%s", name, c.len ? ":\n" : "",
          c.len ? c.text : "");
    free(c.text);
    if (m) {
        char *printed = NULL;
        bool fp = fixed_point(m, &printed);
        char *canon = strip_comments(text);
        check(fp, "%s: print(parse(print(m))) == print(m)", name);
        check(strcmp(canon, printed) == 0, "%s: the file is in printed form", name);
        if (strcmp(canon, printed) != 0 && getenv("VERBOSE"))
            fprintf(stderr, "--- printed\n%s", printed);
        free(canon);
        free(printed);
        ir_module_free(m);
    }
    if (fuzz)
        fuzz_file(name, text, len);
    free(text);
}

/* ---------------------------------------------------------------- builder-made modules */

static ir_expr *load1(ir_module *m, ir_buffer *b, ir_expr *i)
{
    return ir_load(m, b, &i, 1);
}

static ir_stmt *store1(ir_module *m, ir_buffer *b, ir_expr *i, ir_expr *v)
{
    return ir_store(m, b, &i, 1, v);
}

/* A module with every expression, statement, loop, iteration, scope and
 * role kind, every intrinsic and dtype, and names that need quoting. */
static ir_module *kitchen_sink(void)
{
    ir_module *m = ir_module_new("kitchen \"sink\"\n");
    int64_t s8[] = {8}, s44[] = {4, 4};
    ir_func *f = ir_func_new(m, "sink-1");
    ir_func_set_attr(m, f, "layer", "layer1.0.conv1");
    ir_func_set_attr(m, f, "op", "conv2d");
    ir_func_set_attr(m, f, "loc", "net.te:3:14");
    ir_func_set_attr(m, f, "weird key", "\t\x01\\\"");
    ir_buffer *a = ir_buffer_new(m, "a", IR_F32, 1, s8, IR_BUF_ARG);
    ir_buffer *d = ir_buffer_new(m, "for", IR_F64, 1, s8, IR_BUF_ARG);
    ir_buffer *n = ir_buffer_new(m, "n.i32", IR_I32, 1, s8, IR_BUF_ARG);
    ir_buffer *q = ir_buffer_new(m, "q", IR_I64, 1, s8, IR_BUF_ARG);
    ir_buffer *fl = ir_buffer_new(m, "flags", IR_BOOL, 1, s8, IR_BUF_ARG);
    ir_buffer *h = ir_buffer_new(m, "h", IR_F16, 1, s8, IR_BUF_ARG);
    ir_buffer *g = ir_buffer_new(m, "g", IR_BF16, 1, s8, IR_BUF_ARG);
    ir_buffer *sc = ir_buffer_new(m, "scalar", IR_F32, 0, NULL, IR_BUF_ARG);
    ir_buffer *mat = ir_buffer_new(m, "mat", IR_F32, 2, s44, IR_BUF_ARG);
    ir_buffer *params[] = {a, d, n, q, fl, h, g, sc, mat};
    for (size_t i = 0; i < sizeof params / sizeof *params; i++)
        ir_func_add_param(m, f, params[i]);

    ir_var *i = ir_var_new(m, "i", IR_I64);
    ir_expr *vi = ir_varref(m, i);
    ir_stmt *body = ir_seq_new(m);
    /* every intrinsic of class 'm' on f32 */
    ir_expr *acc = load1(m, a, vi);
    for (int fn = 0; fn < IR_NINTRINSICS; fn++) {
        if (ir_intrin_class((ir_intrin)fn) != 'm')
            continue;
        ir_expr *args[2] = {load1(m, a, vi), ir_float(m, 0.5, IR_F32)};
        acc = ir_binary(m, IR_ADD, acc, ir_call(m, (ir_intrin)fn, args, ir_intrin_arity((ir_intrin)fn)));
    }
    ir_seq_append(m, body, store1(m, a, vi, acc));
    /* float binary kinds and constants */
    ir_expr *x = load1(m, d, vi);
    ir_expr *fv = ir_binary(m, IR_DIV, ir_binary(m, IR_SUB, x, ir_float(m, -0.0, IR_F64)),
                            ir_binary(m, IR_MUL, ir_float(m, 1e300, IR_F64),
                                      ir_unary(m, IR_NEG, ir_float(m, 0.1, IR_F64))));
    fv = ir_binary(m, IR_MIN, fv, ir_binary(m, IR_MAX, ir_float(m, INFINITY, IR_F64),
                                            ir_float(m, -INFINITY, IR_F64)));
    fv = ir_binary(m, IR_ADD, fv, ir_cast(m, ir_float(m, NAN, IR_F32), IR_F64));
    ir_seq_append(m, body, store1(m, d, vi, fv));
    /* integer kinds */
    ir_expr *ni = load1(m, n, vi);
    ir_expr *iv = ir_binary(m, IR_FLOORDIV, ni, ir_int_typed(m, -7, IR_I32));
    iv = ir_binary(m, IR_SUB, iv, ir_binary(m, IR_FLOORMOD, ni, ir_int_typed(m, INT32_MIN, IR_I32)));
    iv = ir_binary(m, IR_SUB, ir_int_typed(m, 1, IR_I32), iv);
    ir_seq_append(m, body, store1(m, n, vi, iv));
    /* comparisons, logic, select, casts */
    ir_expr *qi = load1(m, q, vi);
    ir_expr *cmp = ir_binary(m, IR_OR, ir_binary(m, IR_EQ, qi, ir_int(m, INT64_MIN)),
                             ir_binary(m, IR_AND, ir_binary(m, IR_NE, qi, ir_int(m, INT64_MAX)),
                                       ir_binary(m, IR_LT, qi, vi)));
    cmp = ir_binary(m, IR_AND, cmp, ir_unary(m, IR_NOT, ir_binary(m, IR_LE, qi, ir_int(m, -1))));
    cmp = ir_binary(m, IR_OR, cmp, ir_binary(m, IR_GT, qi, ir_int(m, 2)));
    cmp = ir_binary(m, IR_EQ, cmp, ir_binary(m, IR_GE, qi, ir_int(m, 0)));
    ir_seq_append(m, body, store1(m, fl, vi, ir_binary(m, IR_NE, cmp, ir_int_typed(m, 0, IR_BOOL))));
    ir_expr *sel = ir_select(m, load1(m, fl, vi), ir_unary(m, IR_NEG, ir_unary(m, IR_NEG, qi)),
                             ir_cast(m, load1(m, h, vi), IR_I64));
    ir_seq_append(m, body, store1(m, q, vi, sel));
    ir_seq_append(m, body, store1(m, h, vi, ir_binary(m, IR_ADD, load1(m, h, vi),
                                                       ir_float(m, 1.5, IR_F16))));
    ir_seq_append(m, body, store1(m, g, vi, ir_binary(m, IR_MUL, load1(m, g, vi),
                                                       ir_cast(m, load1(m, h, vi), IR_BF16))));
    ir_seq_append(m, body, ir_store(m, sc, NULL, 0, ir_binary(m, IR_ADD, ir_load(m, sc, NULL, 0),
                                                               ir_float(m, 1e-5, IR_F32))));
    /* runtime calls, assert, let, if with and without else, nested seq */
    ir_expr *pa[] = {ir_int(m, 3)};
    ir_expr *pc[] = {ir_int(m, 1), vi};
    ir_seq_append(m, body, ir_eval(m, ir_call(m, IR_FN_PROF_ENTER, pa, 1)));
    ir_seq_append(m, body, ir_eval(m, ir_call(m, IR_FN_PROF_COUNT, pc, 2)));
    ir_seq_append(m, body, ir_eval(m, ir_call(m, IR_FN_PROF_EXIT, pa, 1)));
    ir_seq_append(m, body, ir_assert(m, ir_binary(m, IR_LT, vi, ir_int(m, 8)), "i < 8\n"));
    /* a prefetch one element past the end (a hint: allowed) */
    ir_expr *past[] = {ir_binary(m, IR_ADD, vi, ir_int(m, 8))};
    ir_seq_append(m, body, ir_prefetch(m, a, past, 1));
    ir_var *t = ir_var_new(m, "t", IR_F32);
    ir_stmt *branches = ir_if(m, ir_binary(m, IR_GT, ir_varref(m, t), ir_float(m, 0, IR_F32)),
                              store1(m, a, vi, ir_varref(m, t)),
                              store1(m, a, vi, ir_unary(m, IR_NEG, ir_varref(m, t))));
    ir_stmt *inner = ir_seq_new(m);
    ir_seq_append(m, inner, branches);
    ir_seq_append(m, inner, ir_if(m, ir_binary(m, IR_EQ, vi, ir_int(m, 0)),
                                  store1(m, a, vi, ir_float(m, 2, IR_F32)), NULL));
    ir_seq_append(m, body, ir_let(m, t, load1(m, a, vi), inner));
    ir_stmt *loop_i = ir_for(m, i, ir_int(m, 0), ir_int(m, 8), IR_FOR_SERIAL, body);

    /* a block nest with every loop kind, an alloc per scope */
    ir_var *r = ir_var_new(m, "r", IR_I64), *c = ir_var_new(m, "c", IR_I64);
    ir_var *k = ir_var_new(m, "k", IR_I64), *u = ir_var_new(m, "u", IR_I64);
    ir_var *vr = ir_var_new(m, "vr", IR_I64), *vk = ir_var_new(m, "vk", IR_I64);
    int64_t s4[] = {4};
    ir_buffer *tmp = ir_buffer_new(m, "tmp", IR_F32, 1, s4, IR_BUF_LOCAL);
    tmp->scope = IR_SCOPE_STACK;
    ir_buffer *big = ir_buffer_new(m, "big", IR_F32, 2, s44, IR_BUF_LOCAL);
    ir_expr *mi[] = {ir_varref(m, vr), ir_varref(m, vk)};
    ir_itervar iters[] = {
        {vr, IR_ITER_SPATIAL, 4, ir_binary(m, IR_ADD, ir_varref(m, r), ir_varref(m, u))},
        {vk, IR_ITER_REDUCE, 4, ir_varref(m, k)},
    };
    ir_stmt *blk = ir_block(m, "tmp_update", iters, 2,
                            store1(m, tmp, ir_varref(m, vr), ir_float(m, 0, IR_F32)),
                            store1(m, tmp, ir_varref(m, vr),
                                   ir_binary(m, IR_ADD, load1(m, tmp, ir_varref(m, vr)),
                                             ir_load(m, mat, mi, 2))));
    ir_stmt *nest = ir_for(m, k, ir_int(m, 0), ir_int(m, 4), IR_FOR_UNROLLED, blk);
    nest = ir_for(m, u, ir_int(m, 0), ir_int(m, 1), IR_FOR_VECTORIZED, nest);
    nest = ir_for(m, r, ir_int(m, 0), ir_int(m, 4), IR_FOR_PARALLEL, nest);
    ir_expr *bi[] = {ir_int(m, 0), ir_varref(m, c)};
    ir_stmt *copy = ir_for(m, c, ir_int(m, 0), ir_int(m, 4), IR_FOR_SERIAL,
                           ir_store(m, big, bi, 2, load1(m, tmp, ir_varref(m, c))));
    ir_stmt *two[] = {nest, copy};
    ir_stmt *allocs = ir_alloc_stmt(m, tmp, ir_alloc_stmt(m, big, ir_seq(m, two, 2)));
    ir_stmt *empty = ir_for(m, ir_var_new(m, "z", IR_I64), ir_int(m, 0), ir_int(m, 0),
                            IR_FOR_SERIAL, ir_seq_new(m));
    ir_stmt *top[] = {loop_i, allocs, empty};
    f->body = ir_seq(m, top, 3);

    /* a second function with a block without iteration variables */
    ir_func *f2 = ir_func_new(m, "fill");
    ir_buffer *o = ir_buffer_new(m, "o", IR_F32, 2, s44, IR_BUF_ARG);
    ir_func_add_param(m, f2, o);
    ir_var *j = ir_var_new(m, "j", IR_I64);
    ir_expr *oi[] = {ir_binary(m, IR_FLOORDIV, ir_varref(m, j), ir_int(m, 4)),
                     ir_binary(m, IR_FLOORMOD, ir_varref(m, j), ir_int(m, 4))};
    f2->body = ir_for(m, j, ir_int(m, 0), ir_int(m, 16), IR_FOR_SERIAL,
                      ir_block(m, "o", NULL, 0, NULL, ir_store(m, o, oi, 2, ir_float(m, 1, IR_F32))));

    /* the graph: every graph role, init ranges, a reshaping call */
    ir_buffer *gb[] = {
        ir_buffer_new(m, "x", IR_F32, 1, s8, IR_BUF_INPUT),
        ir_buffer_new(m, "d", IR_F64, 1, s8, IR_BUF_PARAM),
        ir_buffer_new(m, "n", IR_I32, 1, s8, IR_BUF_TEMP),
        ir_buffer_new(m, "q", IR_I64, 1, s8, IR_BUF_TEMP),
        ir_buffer_new(m, "flags", IR_BOOL, 1, s8, IR_BUF_TEMP),
        ir_buffer_new(m, "h", IR_F16, 1, s8, IR_BUF_TEMP),
        ir_buffer_new(m, "g", IR_BF16, 1, s8, IR_BUF_TEMP),
        ir_buffer_new(m, "s", IR_F32, 0, NULL, IR_BUF_TEMP),
        ir_buffer_new(m, "0-weight", IR_F32, 2, s44, IR_BUF_PARAM),
        ir_buffer_new(m, "y", IR_F32, 1, (int64_t[]){16}, IR_BUF_OUTPUT),
    };
    gb[0]->has_init = true;
    gb[0]->init_lo = -1;
    gb[0]->init_hi = 1;
    gb[1]->has_init = true;
    gb[1]->init_lo = -0.125;
    gb[1]->init_hi = 1e-7;
    gb[8]->state = true;
    for (size_t b = 0; b < sizeof gb / sizeof *gb; b++)
        ir_graph_add_buffer(m, gb[b]);
    ir_graph_add_call(m, f, gb, 9);
    ir_graph_add_call(m, f2, &gb[9], 1);
    return m;
}

/* ---------------------------------------------------------------- random expressions */

typedef struct rctx {
    ir_module *m;
    ir_var *i;
    ir_buffer *fa, *qa;
} rctx;

static ir_expr *gen(rctx *c, ir_dtype t, int depth);

static ir_expr *gen_leaf(rctx *c, ir_dtype t)
{
    ir_module *m = c->m;
    if (t == IR_BOOL)
        return ir_int_typed(m, rnd_below(2), IR_BOOL);
    if (t == IR_I64) {
        static const int64_t vals[] = {0, 1, 2, 7, -1, -3, INT64_MIN, INT64_MAX, 1000000007};
        if (rnd_below(3) == 0)
            return ir_varref(m, c->i);
        if (rnd_below(3) == 0)
            return load1(m, c->qa, ir_varref(m, c->i));
        return ir_int(m, vals[rnd_below((int)(sizeof vals / sizeof *vals))]);
    }
    if (rnd_below(3) == 0)
        return load1(m, c->fa, ir_varref(m, c->i));
    static const double vals[] = {0.5, -0.5, 0.1, -0.0, 0.0, INFINITY, -INFINITY, NAN, 1e-45,
                                  3.4e38, 123456.789, -2.0};
    if (rnd_below(3) == 0) {
        uint32_t bits = (uint32_t)rnd();
        float fv;
        memcpy(&fv, &bits, sizeof fv);
        return ir_float(m, fv, IR_F32);
    }
    return ir_float(m, vals[rnd_below((int)(sizeof vals / sizeof *vals))], IR_F32);
}

static ir_expr *gen(rctx *c, ir_dtype t, int depth)
{
    ir_module *m = c->m;
    if (depth == 0 || rnd_below(5) == 0)
        return gen_leaf(c, t);
    int d = depth - 1;
    if (t == IR_BOOL) {
        static const ir_expr_kind cmps[] = {IR_EQ, IR_NE, IR_LT, IR_LE, IR_GT, IR_GE};
        switch (rnd_below(5)) {
        case 0: {
            ir_dtype o = rnd_below(2) ? IR_I64 : IR_F32;
            return ir_binary(m, cmps[rnd_below(6)], gen(c, o, d), gen(c, o, d));
        }
        case 1: return ir_binary(m, rnd_below(2) ? IR_AND : IR_OR, gen(c, t, d), gen(c, t, d));
        case 2: return ir_unary(m, IR_NOT, gen(c, t, d));
        case 3: return ir_binary(m, rnd_below(2) ? IR_EQ : IR_NE, gen(c, t, d), gen(c, t, d));
        default: return ir_cast(m, gen(c, IR_I64, d), IR_BOOL);
        }
    }
    static const ir_expr_kind ibin[] = {IR_ADD, IR_SUB, IR_MUL, IR_MIN, IR_MAX, IR_FLOORDIV,
                                        IR_FLOORMOD};
    static const ir_expr_kind fbin[] = {IR_ADD, IR_SUB, IR_MUL, IR_DIV, IR_MIN, IR_MAX};
    switch (rnd_below(6)) {
    case 0:
    case 1:
        if (t == IR_I64)
            return ir_binary(m, ibin[rnd_below(7)], gen(c, t, d), gen(c, t, d));
        return ir_binary(m, fbin[rnd_below(6)], gen(c, t, d), gen(c, t, d));
    case 2: return ir_unary(m, IR_NEG, gen(c, t, d));
    case 3: return ir_select(m, gen(c, IR_BOOL, d), gen(c, t, d), gen(c, t, d));
    case 4: return ir_cast(m, gen(c, t == IR_I64 ? IR_F32 : IR_I64, d), t);
    default:
        if (t == IR_F32) {
            ir_expr *args[] = {gen(c, t, d), gen(c, t, d)};
            bool two = rnd_below(2);
            return ir_call(m, two ? IR_FN_POW : IR_FN_TANH, args, two ? 2 : 1);
        }
        return ir_binary(m, IR_ADD, gen(c, t, d), gen(c, t, d));
    }
}

/* Same tree, comparing variables and buffers by name (they are different
 * objects in the two modules). */
static bool same_expr(const ir_expr *a, const ir_expr *b)
{
    if (!a || !b)
        return a == b;
    if (a->kind != b->kind || a->dtype != b->dtype || a->nargs != b->nargs)
        return false;
    switch (a->kind) {
    case IR_INT:
        return a->ival == b->ival;
    case IR_FLOAT:
        return (isnan(a->fval) && isnan(b->fval)) ||
               (a->fval == b->fval && signbit(a->fval) == signbit(b->fval));
    case IR_VAR:
        return strcmp(a->var->name, b->var->name) == 0;
    case IR_LOAD:
        if (strcmp(a->buf->name, b->buf->name) != 0)
            return false;
        break;
    case IR_CALL:
        if (a->fn != b->fn)
            return false;
        break;
    default:
        break;
    }
    for (int i = 0; i < a->nargs; i++)
        if (!same_expr(a->args[i], b->args[i]))
            return false;
    return same_expr(a->a, b->a) && same_expr(a->b, b->b) && same_expr(a->c, b->c);
}

static void check_random_exprs(void)
{
    int same = 0, fixed = 0, verified = 0;
    const int rounds = 300;
    FILE *null = fopen("/dev/null", "w");
    for (int round = 0; round < rounds; round++) {
        ir_module *m = ir_module_new("random");
        int64_t s16[] = {16};
        rctx c = {m, ir_var_new(m, "i", IR_I64),
                  ir_buffer_new(m, "A", IR_F32, 1, s16, IR_BUF_ARG),
                  ir_buffer_new(m, "Q", IR_I64, 1, s16, IR_BUF_ARG)};
        ir_func *f = ir_func_new(m, "r");
        ir_func_add_param(m, f, c.fa);
        ir_func_add_param(m, f, c.qa);
        ir_expr *ef = gen(&c, IR_F32, 5), *eq = gen(&c, IR_I64, 5), *eb = gen(&c, IR_BOOL, 5);
        ir_stmt *s[] = {store1(m, c.fa, ir_varref(m, c.i), ef),
                        store1(m, c.qa, ir_varref(m, c.i), eq),
                        ir_if(m, eb, store1(m, c.qa, ir_int(m, 0), ir_int(m, 1)), NULL)};
        f->body = ir_for(m, c.i, ir_int(m, 0), ir_int(m, 16), IR_FOR_SERIAL, ir_seq(m, s, 3));
        diag d;
        diag_init(&d, null);
        verified += ir_verify(m, NULL, &d);
        diag_fini(&d);
        char *text = ir_module_to_string(m);
        ir_module *m2 = parse_quiet("random", text, strlen(text));
        if (m2) {
            const ir_stmt *b2 = m2->funcs[0]->body->body[0];
            same += same_expr(ef, b2->body[0]->value) && same_expr(eq, b2->body[1]->value) &&
                    same_expr(eb, b2->body[2]->cond);
            char *text2 = ir_module_to_string(m2);
            fixed += strcmp(text, text2) == 0;
            free(text2);
        } else if (getenv("VERBOSE")) {
            fprintf(stderr, "unparsable:\n%s", text);
        }
        free(text);
        ir_module_free(m2);
        ir_module_free(m);
    }
    fclose(null);
    check(verified == rounds, "random expressions: %d/%d builder modules verify", verified, rounds);
    check(same == rounds, "random expressions: %d/%d parse back to the same trees", same, rounds);
    check(fixed == rounds, "random expressions: %d/%d print as fixed points", fixed, rounds);
}

/* ---------------------------------------------------------------- exact printer output */

static void check_expr_text(ir_expr *e, const char *want)
{
    char *got = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&got, &len);
    ir_print_expr(f, e);
    fclose(f);
    check(strcmp(got, want) == 0, "prints %s%s%s", want, strcmp(got, want) ? " but got " : "",
          strcmp(got, want) ? got : "");
    free(got);
}

static void check_printer(void)
{
    ir_module *m = ir_module_new("p");
    ir_expr *a = ir_varref(m, ir_var_new(m, "a", IR_I64));
    ir_expr *b = ir_varref(m, ir_var_new(m, "b", IR_I64));
    ir_expr *c = ir_varref(m, ir_var_new(m, "c", IR_I64));
    check_expr_text(ir_binary(m, IR_SUB, a, ir_binary(m, IR_SUB, b, c)), "a - (b - c)");
    check_expr_text(ir_binary(m, IR_SUB, ir_binary(m, IR_SUB, a, b), c), "a - b - c");
    check_expr_text(ir_binary(m, IR_MUL, ir_binary(m, IR_ADD, a, b), c), "(a + b) * c");
    check_expr_text(ir_binary(m, IR_ADD, a, ir_binary(m, IR_MUL, b, c)), "a + b * c");
    check_expr_text(ir_unary(m, IR_NEG, ir_int(m, 3)), "-(3)");
    check_expr_text(ir_binary(m, IR_SUB, a, ir_int(m, -3)), "a - -3");
    check_expr_text(ir_unary(m, IR_NOT, ir_binary(m, IR_LT, a, b)), "!(a < b)");
    check_expr_text(ir_float(m, 0.1, IR_F32), "0.1f");
    check_expr_text(ir_float(m, 1e-5, IR_F32), "1e-05f");
    check_expr_text(ir_float(m, 50, IR_F64), "50.0");
    check_expr_text(ir_float(m, 1e20, IR_F64), "1e+20");
    check_expr_text(ir_float(m, -0.0, IR_F64), "-0.0");
    check_expr_text(ir_float(m, -INFINITY, IR_F32), "-inff");
    check_expr_text(ir_float(m, NAN, IR_F64), "nan");
    check_expr_text(ir_int_typed(m, 5, IR_I32), "5i32");
    check_expr_text(ir_int_typed(m, 1, IR_BOOL), "true");
    check_expr_text(ir_cast(m, a, IR_F32), "cast<f32>(a)");
    check_expr_text(ir_varref(m, ir_var_new(m, "for", IR_I64)), "\"for\"");
    check_expr_text(ir_varref(m, ir_var_new(m, "layer1.0.w", IR_I64)), "layer1.0.w");
    check_expr_text(ir_varref(m, ir_var_new(m, "a..b", IR_I64)), "\"a..b\"");
    ir_module_free(m);
}

/* ---------------------------------------------------------------- parser errors */

static void check_parse_error(const char *text, const char *want)
{
    capture c;
    capture_begin(&c);
    ir_module *m = ir_parse("t.tir", text, strlen(text), &c.d);
    capture_end(&c);
    char *got = first_line(c.text);
    check(!m && strcmp(got, want) == 0, "parse error: %s%s%s", want,
          strcmp(got, want) ? "\n    but got: " : "", strcmp(got, want) ? got : "");
    ir_module_free(m);
    free(got);
    free(c.text);
}

#define HDR "module \"t\"\nfunc @f(A: f32[4, 4], I: i64[4]) {\n"

static void check_parser_errors(void)
{
    check_parse_error(HDR "  A[0, 1 = 1.0f\n}\n", "t.tir:3:10: error: expected ']' after indices");
    check_parse_error(HDR "  A[0, j] = 1.0f\n}\n", "t.tir:3:8: error: undefined variable 'j'");
    check_parse_error(HDR "  B[0, 0] = 1.0f\n}\n", "t.tir:3:3: error: undefined buffer 'B'");
    check_parse_error(HDR "  A[0] = 1.0f\n}\n",
                      "t.tir:3:3: error: A is f32[4, 4] but is indexed with 1 index");
    check_parse_error(HDR "  A[0, 0] = A[0, 0] + 1\n}\n",
                      "t.tir:3:21: error: operands of '+' differ in dtype (f32 and i64)");
    check_parse_error(HDR "  A[0, 0] = expf(A[0, 0])\n}\n",
                      "t.tir:3:13: error: unknown intrinsic 'expf'");
    check_parse_error("module \"t\"\nfunc @f(A: f33[4]) {\n}\n",
                      "t.tir:2:12: error: unknown dtype 'f33'");
    check_parse_error(HDR "  for i in 0..4 {\n    for i in 0..4 {\n    }\n  }\n}\n",
                      "t.tir:4:9: error: variable 'i' is already defined");
    check_parse_error("module \"t\"\nfunc @f(A: f32[4], A: f32[4]) {\n}\n",
                      "t.tir:2:20: error: buffer 'A' is already defined");
    check_parse_error("module \"t\"\ngraph {\n  input X: f32[4]\n  call @g(X)\n}\n",
                      "t.tir:4:8: error: call to undefined function @g");
    check_parse_error("func @f() {\n}\n",
                      "t.tir:1:1: error: expected 'module \"NAME\"' at the start of the file");
    check_parse_error(HDR "  A[0, 0] = 1.0f\n", "t.tir:3:17: error: expected '}'");
    check_parse_error(HDR "  assert I[0] < 4, \"oops\n}\n",
                      "t.tir:3:20: error: missing terminating '\"' character");
    check_parse_error(HDR "  I[0] = 3000000000i32\n}\n",
                      "t.tir:3:10: error: integer constant 3000000000 does not fit in i32");
    check_parse_error(HDR "  A[0, 0] = select(I[0], 1.0f, 2.0f)\n}\n",
                      "t.tir:3:13: error: select condition is i64, not bool");
    check_parse_error(HDR "  A[0, 0] = tec_prof_enter(1)\n}\n",
                      "t.tir:3:13: error: tec_prof_enter can only be called by an evaluate statement");
    check_parse_error("module \"t\"\ngraph {\n  input X: f32[4] state init(-1, 1)\n}\n",
                      "t.tir:3:19: error: only a param can be state, not input 'X'");
    check_parse_error(HDR "}\ngraph {\n  input X: f32[4, 4]\n  input Y: f32[3]\n  call @f(X, Y)\n}\n",
                      "t.tir:7:14: error: 'Y' is f32[3], but parameter 'I' of @f is i64[4]");

    /* Recovery: one run reports every independent error. */
    const char *many = HDR "  A[0, 0] = 1.0f +\n  A[0, q] = 1.0f\n  for i in 0..4 serail {\n"
                           "    A[i, 0] = 1.0f\n  }\n  A[0, 0 = 2.0f\n  A[0, 0] = 2\n}\n";
    capture c;
    capture_begin(&c);
    ir_module *m = ir_parse("t.tir", many, strlen(many), &c.d);
    capture_end(&c);
    int nerr = c.d.nerrors;
    check(!m && nerr == 5, "recovery: 5 errors reported in one run (got %d)", nerr);
    free(c.text);

    /* Accepted spellings that the printer does not produce. */
    const char *alt = "# comment\nmodule t\nfunc @f(A: f32[4]) {\n  for i in 0..4 serial {\n"
                      "    A[i] = -  1.5f\n  }\n}\n";
    m = parse_quiet("alt.tir", alt, strlen(alt));
    char *text = m ? ir_module_to_string(m) : NULL;
    check(text && strstr(text, "for i in 0..4 {\n    A[i] = -(1.5f)\n"),
          "serial and '- 1.5f' (a NEG) are accepted and printed canonically");
    free(text);
    ir_module_free(m);
}

/* ---------------------------------------------------------------- verifier */

/* A valid base to break: @f(A: f32[4, 4], B: f32[4, 4]) with a block nest
 * copying A into B, and a graph X -> @f -> Y. */
typedef struct base {
    ir_module *m;
    ir_func *f;
    ir_buffer *A, *B, *X, *Y;
    ir_var *i, *j, *vi, *vj;
    ir_stmt *block, *loop;
} base;

static base make_base(void)
{
    base b;
    int64_t s44[] = {4, 4};
    b.m = ir_module_new("v");
    b.f = ir_func_new(b.m, "f");
    b.A = ir_buffer_new(b.m, "A", IR_F32, 2, s44, IR_BUF_ARG);
    b.B = ir_buffer_new(b.m, "B", IR_F32, 2, s44, IR_BUF_ARG);
    ir_func_add_param(b.m, b.f, b.A);
    ir_func_add_param(b.m, b.f, b.B);
    b.i = ir_var_new(b.m, "i", IR_I64);
    b.j = ir_var_new(b.m, "j", IR_I64);
    b.vi = ir_var_new(b.m, "vi", IR_I64);
    b.vj = ir_var_new(b.m, "vj", IR_I64);
    ir_itervar iters[] = {{b.vi, IR_ITER_SPATIAL, 4, ir_varref(b.m, b.i)},
                          {b.vj, IR_ITER_SPATIAL, 4, ir_varref(b.m, b.j)}};
    ir_expr *idx[] = {ir_varref(b.m, b.vi), ir_varref(b.m, b.vj)};
    b.block = ir_block(b.m, "copy", iters, 2, NULL,
                       ir_store(b.m, b.B, idx, 2, ir_load(b.m, b.A, idx, 2)));
    b.loop = ir_for(b.m, b.j, ir_int(b.m, 0), ir_int(b.m, 4), IR_FOR_SERIAL, b.block);
    b.f->body = ir_for(b.m, b.i, ir_int(b.m, 0), ir_int(b.m, 4), IR_FOR_SERIAL, b.loop);
    b.X = ir_buffer_new(b.m, "X", IR_F32, 2, s44, IR_BUF_INPUT);
    b.Y = ir_buffer_new(b.m, "Y", IR_F32, 1, (int64_t[]){16}, IR_BUF_OUTPUT);
    ir_graph_add_buffer(b.m, b.X);
    ir_graph_add_buffer(b.m, b.Y);
    ir_buffer *args[] = {b.X, b.Y};
    ir_graph_add_call(b.m, b.f, args, 2);
    return b;
}

/* Verifies b.m after `after` and compares the first message. */
static void check_verify(base *b, const char *after, const char *want)
{
    capture c;
    capture_begin(&c);
    bool ok = ir_verify(b->m, after, &c.d);
    capture_end(&c);
    char *got = first_line(c.text);
    if (want)
        check(!ok && strcmp(got, want) == 0, "verifier: %s%s%s", want,
              strcmp(got, want) ? "\n    but got: " : "", strcmp(got, want) ? got : "");
    else
        check(ok && c.len == 0, "verifier accepts the base module%s%s", c.len ? ": " : "", got);
    free(got);
    free(c.text);
    ir_module_free(b->m);
}

static ir_stmt *block_body(base *b) { return b->block->body[0]; }

/* The base module with a param P, a const C and `load @f(P, C)`. */
static base make_load_base(void)
{
    base b = make_base();
    ir_buffer *P = ir_buffer_new(b.m, "P", IR_F32, 2, (int64_t[]){4, 4}, IR_BUF_PARAM);
    ir_buffer *C = ir_buffer_new(b.m, "C", IR_F32, 1, (int64_t[]){16}, IR_BUF_CONST);
    ir_graph_add_buffer(b.m, P);
    ir_graph_add_buffer(b.m, C);
    ir_graph_add_load(b.m, b.f, (ir_buffer *[]){P, C}, 2);
    return b;
}

static void check_verifier(void)
{
    base b = make_base();
    check_verify(&b, NULL, NULL);

    b = make_base();
    block_body(&b)->value->args[1] = ir_varref(b.m, ir_var_new(b.m, "k", IR_I64));
    check_verify(&b, "tile",
                 "tec: internal error: verifier (after tile): in @f: variable 'k' is used outside "
                 "its scope");

    b = make_base();
    block_body(&b)->value->nargs = 1;
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in @f: A is f32[4, 4] but is indexed with 1 "
                 "index: A[vi]");

    b = make_base();
    b.block->body[0] = ir_seq(b.m, (ir_stmt *[]){ir_prefetch(b.m, b.A, (ir_expr *[]){ir_varref(b.m, b.vi)}, 1),
                                                 block_body(&b)}, 2);
    check_verify(&b, "prefetch",
                 "tec: internal error: verifier (after prefetch): in @f: prefetch: A is f32[4, 4] "
                 "but is indexed with 1 index");

    b = make_base();
    block_body(&b)->args[0] = ir_float(b.m, 1, IR_F32);
    check_verify(&b, "flatten",
                 "tec: internal error: verifier (after flatten): in @f: store: index 1 of B is "
                 "f32, not an integer");

    b = make_base();
    b.block->iters[0].binding = ir_binary(b.m, IR_DIV, ir_varref(b.m, b.i), ir_int(b.m, 2));
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in @f: '/' needs float operands, not i64 (use "
                 "floordiv for integers): i / 2");

    b = make_base();
    ir_expr *one[] = {ir_int(b.m, 1)};
    block_body(&b)->value = ir_cast(b.m, ir_call(b.m, IR_FN_PROF_ENTER, one, 1), IR_F32);
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in @f: tec_prof_enter is called outside an "
                 "evaluate statement: tec_prof_enter(1)");

    b = make_base();
    b.loop->hi = ir_int_typed(b.m, 4, IR_I32);
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in @f: the upper bound of a loop is i32, not "
                 "i64: 4i32");

    b = make_base();
    b.block->iters[1].binding = ir_varref(b.m, b.vi);
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in @f: variable 'vi' is used outside its scope");

    b = make_base();
    b.block->nreads = 0;
    check_verify(&b, "simplify",
                 "tec: internal error: verifier (after simplify): in @f: block 'copy' loads 'A' "
                 "but does not list it in reads");

    b = make_base();
    {
        ir_var *l = ir_var_new(b.m, "l", IR_I64);
        b.block->iters[0].binding = ir_varref(b.m, l);
        b.loop->body[0] = ir_let(b.m, l, ir_int(b.m, 0), b.block);
    }
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in @f: the binding of 'vi' in block 'copy' uses "
                 "'l', which is not an enclosing loop variable");

    b = make_base();
    b.f->body = ir_alloc_stmt(b.m, ir_buffer_new(b.m, "T", IR_F32, 0, NULL, IR_BUF_ARG), b.f->body);
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in @f: alloc of 'T': its role is arg, not local");

    b = make_base();
    b.block->body[0] = ir_if(b.m, ir_int(b.m, 1), block_body(&b), NULL);
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in @f: the condition of an if is i64, not bool: 1");

    b = make_base();
    b.m->graph.bufs[0]->state = true;
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in graph: graph buffer 'X' is marked state but has "
                 "role input (only params are state)");

    b = make_base();
    b.m->graph.calls[0].nargs = 1;
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in graph: call @f passes 1 buffer, but @f has 2 "
                 "parameters");

    b = make_base();
    b.Y->shape[0] = 15;
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in graph: call @f: argument 'Y' is f32[15], but "
                 "parameter 'B' is f32[4, 4] (the dtype and element count must match)");

    b = make_base();
    b.X->name = "Y";
    check_verify(&b, NULL, "tec: internal error: verifier: in graph: two graph buffers are named 'Y'");

    b = make_base();
    b.m->graph.ncalls = 0;
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in graph: output 'Y' is not written by any call");

    /* load calls: params in, consts out; runs only read consts */
    b = make_load_base();
    check_verify(&b, NULL, NULL);
    b = make_load_base();
    b.m->graph.loads[0].args[0] = b.X;
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in graph: load call @f is passed input 'X' "
                 "(load calls see only params and consts)");
    b = make_load_base();
    b.m->graph.calls[0].args[1] = b.m->graph.loads[0].args[1];
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in graph: call @f stores to const 'C' (only load "
                 "calls may)");
    b = make_load_base();
    b.m->graph.nloads = 0;
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in graph: const 'C' is not written by any load "
                 "call");

    b = make_base();
    ir_module *other = ir_module_new("other");
    b.m->graph.calls[0].fn = ir_func_new(other, "f");
    check_verify(&b, NULL,
                 "tec: internal error: verifier: in graph: call of @f, which is not a function "
                 "of this module");
    ir_module_free(other);
}

/* ---------------------------------------------------------------- corrupted modules */

/* Every node of a module, to corrupt one at random. */
typedef struct nodes {
    ir_expr *exprs[4096];
    ir_stmt *stmts[1024];
    int nexprs, nstmts;
} nodes;

static void collect_e(nodes *n, ir_expr *e)
{
    if (!e || n->nexprs == 4096)
        return;
    n->exprs[n->nexprs++] = e;
    for (int i = 0; i < e->nargs; i++)
        collect_e(n, e->args[i]);
    if (e->kind != IR_LOAD && e->kind != IR_CALL) {
        collect_e(n, e->a);
        collect_e(n, e->b);
        collect_e(n, e->c);
    }
}

static void collect_s(nodes *n, ir_stmt *s)
{
    if (!s || n->nstmts == 1024)
        return;
    n->stmts[n->nstmts++] = s;
    collect_e(n, s->lo);
    collect_e(n, s->hi);
    for (int i = 0; i < s->niters; i++)
        collect_e(n, s->iters[i].binding);
    for (int i = 0; i < s->nargs; i++)
        collect_e(n, s->args[i]);
    collect_e(n, s->value);
    collect_e(n, s->cond);
    collect_s(n, s->init);
    for (int i = 0; i < s->nbody; i++)
        collect_s(n, s->body[i]);
    collect_s(n, s->orelse);
}

/* Breaks one field (NULL pointers, out-of-range enums, other dtypes,
 * shorter lists); the verifier must say so, and neither it nor the
 * printer may crash. */
static void corrupt(ir_module *m, nodes *n)
{
    if (rnd_below(2) && n->nexprs) {
        ir_expr *e = n->exprs[rnd_below(n->nexprs)];
        switch (rnd_below(7)) {
        case 0: e->a = NULL; break;
        case 1: e->b = NULL; e->c = NULL; break;
        case 2: e->kind = (ir_expr_kind)rnd_below(IR_NEXPR_KINDS + 2); break;
        case 3: e->dtype = (ir_dtype)rnd_below(IR_NDTYPES + 1); break;
        case 4: e->var = NULL; e->buf = NULL; break;
        case 5: e->fn = (ir_intrin)rnd_below(IR_NINTRINSICS + 2); break;
        default: e->nargs = e->nargs ? rnd_below(e->nargs) : 0; break;
        }
        return;
    }
    ir_stmt *s = n->stmts[rnd_below(n->nstmts)];
    switch (rnd_below(9)) {
    case 0: if (s->nbody) s->body[0] = NULL; break;
    case 1: s->var = NULL; break;
    case 2: s->lo = NULL; s->value = NULL; break;
    case 3: s->kind = (ir_stmt_kind)rnd_below(IR_NSTMT_KINDS + 2); break;
    case 4: s->buf = NULL; break;
    case 5: s->cond = NULL; s->init = NULL; break;
    case 6: s->nreads = s->nreads ? rnd_below(s->nreads) : 0; break;
    case 7: s->for_kind = (ir_for_kind)rnd_below(IR_NFOR_KINDS + 2); break;
    default:
        if (m->graph.ncalls)
            m->graph.calls[0].nargs = rnd_below(m->graph.calls[0].nargs + 1);
        break;
    }
}

/* Breaks a field that matters for the node's kind, so the module is
 * certainly invalid. */
static void break_for_sure(ir_module *m, nodes *n)
{
    int pick = rnd_below(4);
    if (pick == 0 && n->nexprs) {
        ir_expr *e = n->exprs[rnd_below(n->nexprs)];
        switch (ir_expr_kind_class(e->kind)) {
        case 'c': e->dtype = (ir_dtype)IR_NDTYPES; break;
        case 'v': e->var = NULL; break;
        case 'l':
        case 'i':
            if (e->nargs)
                e->args[0] = NULL;
            else
                e->kind = (ir_expr_kind)(IR_NEXPR_KINDS + 1);
            break;
        default: e->a = NULL; break;
        }
        return;
    }
    if (pick == 1 && n->nexprs) {
        n->exprs[rnd_below(n->nexprs)]->kind = (ir_expr_kind)(IR_NEXPR_KINDS + rnd_below(3));
        return;
    }
    if (pick == 2) {
        m->graph.calls[0].nargs--;
        return;
    }
    ir_stmt *s;
    do
        s = n->stmts[rnd_below(n->nstmts)];
    while (s->kind == IR_S_SEQ && s->nbody == 0);
    switch (s->kind) {
    case IR_S_SEQ: s->body[0] = NULL; break;
    case IR_S_FOR: case IR_S_LET: s->var = NULL; break;
    case IR_S_BLOCK:
        if (s->niters)
            s->iters[0].binding = NULL;
        else
            s->name = NULL;
        break;
    case IR_S_STORE: case IR_S_ALLOC: s->buf = NULL; break;
    case IR_S_IF: case IR_S_ASSERT: s->cond = NULL; break;
    case IR_S_EVAL: s->value = NULL; break;
    default: s->kind = (ir_stmt_kind)(IR_NSTMT_KINDS + 1); break;
    }
}

static ir_module *kitchen_sink(void);

static void check_corrupted(void)
{
    FILE *null = fopen("/dev/null", "w");
    int rejected = 0, certain = 0;
    const int rounds = 1000;
    for (int round = 0; round < 2 * rounds; round++) {
        ir_module *m = kitchen_sink();
        nodes *n = calloc(1, sizeof *n);
        for (int f = 0; f < m->nfuncs; f++)
            collect_s(n, m->funcs[f]->body);
        if (round < rounds)
            corrupt(m, n);
        else
            break_for_sure(m, n);
        diag d;
        diag_init(&d, null);
        bool ok = ir_verify(m, "corrupt", &d);
        diag_fini(&d);
        if (round < rounds)
            rejected += !ok;
        else
            certain += !ok;
        ir_print_module(null, m);
        free(n);
        ir_module_free(m);
    }
    fclose(null);
    /* Reaching this line means nothing crashed on the random corruptions;
     * many of those are harmless, so only the certain ones are counted. */
    check(certain == rounds,
          "verifier rejects %d/%d certainly broken modules; it and the printer survive %d "
          "random corruptions (%d rejected)", certain, rounds, rounds, rejected);
}

/* ---------------------------------------------------------------- main */

static void check_kitchen_sink(void)
{
    ir_module *m = kitchen_sink();
    capture c;
    capture_begin(&c);
    bool ok = ir_verify(m, NULL, &c.d);
    capture_end(&c);
    check(ok, "builder module with every node kind verifies%s%s", c.len ? ":\n" : "",
          c.len ? c.text : "");
    free(c.text);
    char *text = NULL;
    check(fixed_point(m, &text), "builder module with every node kind is a fixed point");
    /* Spot checks that each construct is there in its documented form. */
    static const char *const parts[] = {
        "module \"kitchen \\\"sink\\\"\\n\"\n",
        "func @\"sink-1\"(a: f32[8], \"for\": f64[8], n.i32: i32[8], q: i64[8], flags: bool[8], "
        "h: f16[8], g: bf16[8], scalar: f32[], mat: f32[4, 4]) attrs(layer = \"layer1.0.conv1\", "
        "op = \"conv2d\", loc = \"net.te:3:14\", \"weird key\" = \"\\t\\001\\\\\\\"\") {\n",
        "    n.i32[i] = 1i32 - (floordiv(n.i32[i], -7i32) - floormod(n.i32[i], -2147483648i32))\n",
        "    q[i] = select(flags[i], - -q[i], cast<i64>(h[i]))\n",
        "    scalar[] = scalar[] + 1e-05f\n",
        "    evaluate tec_prof_count(1, i)\n",
        "    assert i < 8, \"i < 8\\n\"\n",
        "    prefetch a[i + 8]\n",
        "    let t: f32 = a[i] {\n      if t > 0.0f {\n        a[i] = t\n      } else {\n"
        "        a[i] = -t\n      }\n      if i == 0 {\n        a[i] = 2.0f\n      }\n    }\n",
        "  alloc tmp: f32[4] stack {\n    alloc big: f32[4, 4] global {\n",
        "      for r in 0..4 parallel {\n        for u in 0..1 vectorized {\n"
        "          for k in 0..4 unrolled {\n",
        "            block tmp_update(vr: spatial[4] = r + u, vk: reduce[4] = k) reads(tmp, mat) "
        "writes(tmp) {\n              init {\n                tmp[vr] = 0.0f\n              }\n",
        "  for z in 0..0 {\n  }\n",
        "    block o() reads() writes(o) {\n",
        "  input x: f32[8] init(-1, 1)\n  param d: f64[8] init(-0.125, 1e-07)\n",
        "  param \"0-weight\": f32[4, 4] state\n",
        "  call @\"sink-1\"(x, d, n, q, flags, h, g, s, \"0-weight\")\n  call @fill(y)\n}\n",
    };
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        bool found = text && strstr(text, parts[i]);
        int n = (int)strcspn(parts[i], "\n");
        check(found, "printed form contains: %.*s%s", n < 60 ? n : 60, parts[i], n > 60 ? "..." : "");
        if (!found && getenv("VERBOSE"))
            fprintf(stderr, "%s", text);
    }
    free(text);
    ir_module_free(m);
}

static void add_dir_files(const char *dir, char ***files, int *n)
{
    char pattern[4096];
    snprintf(pattern, sizeof pattern, "%s/testsuite/tir/roundtrip/*.tir", dir);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            *files = realloc(*files, sizeof **files * (size_t)(*n + 1));
            (*files)[(*n)++] = strdup(g.gl_pathv[i]);
        }
        globfree(&g);
    }
}

int main(int argc, char **argv)
{
    char **files = NULL;
    int nfiles = 0;
    bool only_files = false;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            add_dir_files(argv[i], &files, &nfiles);
        } else {
            files = realloc(files, sizeof *files * (size_t)(nfiles + 1));
            files[nfiles++] = strdup(argv[i]);
            only_files = true;
        }
    }
    if (argc == 1) {
        const char *srcdir = getenv("srcdir");
        add_dir_files(srcdir ? srcdir : ".", &files, &nfiles);
    }
    if (!only_files) {
        check(nfiles >= 6, "found %d round-trip files", nfiles);
        check_printer();
        check_kitchen_sink();
        check_random_exprs();
        check_parser_errors();
        check_verifier();
        check_corrupted();
        fuzz_random();
    }
    for (int i = 0; i < nfiles; i++) {
        check_file(files[i], true);
        free(files[i]);
    }
    free(files);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
