/* testsuite/unit/test_frontend.c — .te programs compiled with fe_compile,
 * checked on the structure of the IR they become (functions, attributes,
 * buffers, loop nests, blocks), on their diagnostics, and on the values the
 * reference interpreter computes from them.  Prints one line per test;
 * exits 1 if any check failed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/frontend.h"
#include "ir/diag.h"
#include "ir/interp.h"
#include "ir/ir.h"

#include "testsuite/unit/test.h"

static int failures_before;   /* failures when the last test ended */

/* One line for the test that just ended: FAIL if a CHECK of it failed. */
static void report(const char *name)
{
    printf("%s %s\n", failures != failures_before ? "FAIL" : "ok  ", name);
    failures_before = failures;
}

static char *diag_text;   /* the diagnostics of the last compile */

/* Compiles src as "t.te"; diagnostics go to diag_text. */
static ir_module *compile_opts(const char *src, const fe_options *o)
{
    free(diag_text);
    diag_text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&diag_text, &len);
    diag d;
    diag_init(&d, out);
    ir_module *m = fe_compile("t.te", src, strlen(src), o, &d);
    diag_fini(&d);
    fclose(out);
    return m;
}

static ir_module *compile(const char *src) { return compile_opts(src, NULL); }

/* The first line of the diagnostics. */
static const char *first_line(void)
{
    static char line[1024];
    snprintf(line, sizeof line, "%s", diag_text ? diag_text : "");
    char *nl = strchr(line, '\n');
    if (nl)
        *nl = 0;
    return line;
}

static ir_func *func_of_layer(const ir_module *m, const char *layer)
{
    for (int i = 0; i < m->nfuncs; i++) {
        const char *l = ir_func_attr(m->funcs[i], "layer");
        if (l && strcmp(l, layer) == 0)
            return m->funcs[i];
    }
    return NULL;
}

static bool shape_is(const ir_buffer *b, int ndim, const int64_t *want)
{
    if (!b || b->ndim != ndim)
        return false;
    for (int i = 0; i < ndim; i++)
        if (b->shape[i] != want[i])
            return false;
    return true;
}

/* Statistics of a statement tree. */
typedef struct walk_stats {
    int nstmt[IR_NSTMT_KINDS];
    int nexpr[IR_NEXPR_KINDS];
    const ir_stmt *blocks[16];
    int nblocks;
} walk_stats;

static bool count_stmt(const ir_stmt *s, void *p)
{
    walk_stats *w = p;
    w->nstmt[s->kind]++;
    if (s->kind == IR_S_BLOCK && w->nblocks < 16)
        w->blocks[w->nblocks++] = s;
    return true;
}

static bool count_expr(const ir_expr *e, void *p)
{
    ((walk_stats *)p)->nexpr[e->kind]++;
    return true;
}

static walk_stats stats_of(const ir_func *f)
{
    walk_stats w;
    memset(&w, 0, sizeof w);
    ir_stmt_walk(f->body, count_stmt, count_expr, &w);
    return w;
}

/* Storage for every graph buffer, filled with a deterministic pattern. */
static void **graph_data(const ir_module *m)
{
    void **data = calloc((size_t)m->graph.nbufs, sizeof *data);
    for (int i = 0; i < m->graph.nbufs; i++) {
        const ir_buffer *b = m->graph.bufs[i];
        int64_t n = ir_buffer_numel(b);
        data[i] = calloc((size_t)n, (size_t)ir_dtype_size(b->dtype));
        for (int64_t k = 0; k < n; k++) {
            double v = ((k * 37 + i * 11) % 23) / 11.0 - 1.0;
            if (b->dtype == IR_F32)
                ((float *)data[i])[k] = (float)v;
            else if (b->dtype == IR_I64)
                ((int64_t *)data[i])[k] = (k * 7) % 5;
        }
    }
    return data;
}

static void free_data(const ir_module *m, void **data)
{
    for (int i = 0; i < m->graph.nbufs; i++)
        free(data[i]);
    free(data);
}

static int buf_index(const ir_module *m, const char *name)
{
    for (int i = 0; i < m->graph.nbufs; i++)
        if (strcmp(m->graph.bufs[i]->name, name) == 0)
            return i;
    return -1;
}

/* ---------------------------------------------------------------- tests */

static const char *matmul_src =
    "let M = 6\n"
    "let K = 5\n"
    "let N = 4\n"
    "def matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {\n"
    "    C[i, j] += A[i, k] * B[k, j]\n"
    "}\n"
    "input A: f32[M, K]\n"
    "input B: f32[K, N] = uniform(0, 2)\n"
    "C = matmul(A, B)\n"
    "output C\n";

static void test_matmul(void)
{
    fe_define defs[] = {{"N", "7"}};
    fe_options o = {.defines = defs, .ndefines = 1};
    ir_module *m = compile_opts(matmul_src, &o);
    CHECK(m != NULL);
    if (!m) {
        report("matmul");
        return;
    }
    CHECK(strcmp(m->name, "t") == 0);
    CHECK(m->nfuncs == 1);
    ir_func *f = m->funcs[0];
    CHECK(strcmp(ir_func_attr(f, "layer"), "C") == 0);
    CHECK(strcmp(ir_func_attr(f, "op"), "matmul") == 0);
    CHECK(strcmp(ir_func_attr(f, "loc"), "t.te:9:5") == 0);
    CHECK(f->nparams == 3);
    int64_t a[] = {6, 5}, b[] = {5, 7}, c[] = {6, 7};
    CHECK(shape_is(f->params[0], 2, a) && shape_is(f->params[1], 2, b) && shape_is(f->params[2], 2, c));
    CHECK(f->params[0]->role == IR_BUF_ARG && strcmp(f->params[2]->name, "C") == 0);
    ir_buffer *ga = ir_graph_find_buffer(m, "A"), *gb = ir_graph_find_buffer(m, "B");
    ir_buffer *gc = ir_graph_find_buffer(m, "C");
    CHECK(ga && ga->role == IR_BUF_INPUT && ga->has_init && ga->init_lo == -1 && ga->init_hi == 1);
    CHECK(gb && gb->init_lo == 0 && gb->init_hi == 2);
    CHECK(gc && gc->role == IR_BUF_OUTPUT && shape_is(gc, 2, c));
    CHECK(m->graph.ncalls == 1 && m->graph.calls[0].fn == f && m->graph.calls[0].nargs == 3);
    CHECK(m->graph.ncalls == 1 && m->graph.calls[0].args[0] == ga && m->graph.calls[0].args[2] == gc);
    /* for i in 0..6 { for j in 0..7 { for k in 0..5 { block C ... } } } */
    const ir_stmt *s = f->body;
    int64_t ext[] = {6, 7, 5};
    const char *names[] = {"i", "j", "k"};
    for (int d = 0; d < 3; d++) {
        CHECK(s->kind == IR_S_FOR);
        if (s->kind != IR_S_FOR)
            break;
        CHECK(ir_expr_is_int(s->lo, 0) && ir_expr_is_int(s->hi, ext[d]));
        CHECK(strcmp(s->var->name, names[d]) == 0);
        s = s->body[0];
    }
    CHECK(s->kind == IR_S_BLOCK && strcmp(s->name, "C") == 0);
    if (s->kind == IR_S_BLOCK) {
        CHECK(s->niters == 3);
        CHECK(s->iters[0].kind == IR_ITER_SPATIAL && s->iters[1].kind == IR_ITER_SPATIAL &&
              s->iters[2].kind == IR_ITER_REDUCE);
        CHECK(s->iters[2].extent == 5 && s->iters[0].binding->kind == IR_VAR);
        CHECK(s->init && s->init->kind == IR_S_STORE && s->init->value->kind == IR_FLOAT &&
              s->init->value->fval == 0);
        CHECK(s->body[0]->kind == IR_S_STORE && s->body[0]->value->kind == IR_ADD);
        CHECK(s->nwrites == 1 && s->writes[0] == f->params[2]);
    }
    /* The interpreter agrees with a plain product. */
    void **data = graph_data(m);
    char err[256];
    CHECK(ir_interp_module(m, data, err, sizeof err));
    const float *A = data[buf_index(m, "A")], *B = data[buf_index(m, "B")], *C = data[buf_index(m, "C")];
    double worst = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 7; j++) {
            float acc = 0;
            for (int k = 0; k < 5; k++)
                acc += A[i * 5 + k] * B[k * 7 + j];
            worst = fmax(worst, fabs(acc - C[i * 7 + j]));
        }
    CHECK(worst < 1e-5);
    free_data(m, data);
    ir_module_free(m);
    report("matmul: structure, -D override, interpreted values");
}

static const char *conv_src =
    "def conv2d(x: f32[N, C, H, W], w: f32[F, C, R, S], stride: int = 1, pad: int = 0)\n"
    "    -> y: f32[N, F, (H + 2*pad - R) / stride + 1, (W + 2*pad - S) / stride + 1] {\n"
    "    y[n, f, p, q] += x[n, c, p*stride + r - pad, q*stride + s - pad] else 0 * w[f, c, r, s]\n"
    "}\n"
    "input x: f32[2, 3, 7, 6]\n"
    "input w: f32[4, 3, 3, 3]\n"
    "y = conv2d(x, w, stride=2, pad=1) as \"conv1\"\n"
    "output y as \"out\"\n";

static void test_conv(void)
{
    ir_module *m = compile(conv_src);
    CHECK(m != NULL);
    if (!m) {
        report("conv2d");
        return;
    }
    ir_func *f = func_of_layer(m, "conv1");
    CHECK(f && strcmp(ir_func_attr(f, "op"), "conv2d") == 0);
    int64_t ys[] = {2, 4, 4, 3};
    ir_buffer *out = ir_graph_find_buffer(m, "out");
    CHECK(out && out->role == IR_BUF_OUTPUT && shape_is(out, 4, ys));
    if (f) {
        walk_stats w = stats_of(f);
        CHECK(w.nstmt[IR_S_FOR] == 7 && w.nblocks == 1);
        CHECK(w.nexpr[IR_SELECT] == 1 && w.nstmt[IR_S_ASSERT] == 0);
        int reduce = 0;
        for (int i = 0; w.nblocks && i < w.blocks[0]->niters; i++)
            reduce += w.blocks[0]->iters[i].kind == IR_ITER_REDUCE;
        CHECK(reduce == 3);
    }
    void **data = graph_data(m);
    char err[256];
    CHECK(ir_interp_module(m, data, err, sizeof err));
    const float *x = data[buf_index(m, "x")], *wt = data[buf_index(m, "w")];
    const float *y = data[buf_index(m, "out")];
    double worst = 0;
    for (int n = 0; n < 2; n++)
        for (int fo = 0; fo < 4; fo++)
            for (int p = 0; p < 4; p++)
                for (int q = 0; q < 3; q++) {
                    double acc = 0;
                    for (int c = 0; c < 3; c++)
                        for (int r = 0; r < 3; r++)
                            for (int s = 0; s < 3; s++) {
                                int h = p * 2 + r - 1, wi = q * 2 + s - 1;
                                if (h >= 0 && h < 7 && wi >= 0 && wi < 6)
                                    acc += x[((n * 3 + c) * 7 + h) * 6 + wi] * wt[((fo * 3 + c) * 3 + r) * 3 + s];
                            }
                    worst = fmax(worst, fabs(acc - y[((n * 4 + fo) * 4 + p) * 3 + q]));
                }
    CHECK(worst < 1e-4);
    free_data(m, data);
    ir_module_free(m);
    report("conv2d: padded reads guarded by select, output named with as");
}

static void test_softmax(void)
{
    ir_module *m = compile(
        "def softmax(x: f32[R, L]) -> y: f32[R, L] {\n"
        "    m[r] max= x[r, j]\n"
        "    e[r, j] = exp(x[r, j] - m[r])\n"
        "    s[r] += e[r, j]\n"
        "    y[r, j] = e[r, j] / s[r]\n"
        "}\n"
        "input logits: f32[3, 5] = uniform(-4, 4)\n"
        "p = softmax(logits)\n"
        "output p\n");
    CHECK(m != NULL);
    if (!m) {
        report("softmax");
        return;
    }
    CHECK(m->nfuncs == 1 && m->funcs[0]->nparams == 2);
    const ir_func *f = m->funcs[0];
    walk_stats w = stats_of(f);
    CHECK(w.nstmt[IR_S_ALLOC] == 3 && w.nblocks == 4);
    const ir_stmt *s = f->body;
    CHECK(s->kind == IR_S_ALLOC && strcmp(s->buf->name, "m") == 0 && s->buf->role == IR_BUF_LOCAL &&
          s->buf->scope == IR_SCOPE_STACK && s->buf->ndim == 1 && s->buf->shape[0] == 3);
    if (w.nblocks == 4) {
        CHECK(strcmp(w.blocks[0]->name, "m") == 0 && w.blocks[0]->init &&
              isinf(w.blocks[0]->init->value->fval) && w.blocks[0]->init->value->fval < 0);
        CHECK(w.blocks[0]->body[0]->value->kind == IR_MAX);
        CHECK(w.blocks[1]->init == NULL && w.blocks[1]->iters[1].kind == IR_ITER_SPATIAL);
        CHECK(w.blocks[2]->iters[1].kind == IR_ITER_REDUCE);
    }
    void **data = graph_data(m);
    char err[256];
    CHECK(ir_interp_module(m, data, err, sizeof err));
    const float *p = data[buf_index(m, "p")];
    for (int r = 0; r < 3; r++) {
        double sum = 0;
        for (int j = 0; j < 5; j++)
            sum += p[r * 5 + j];
        CHECK(fabs(sum - 1) < 1e-5);
    }
    free_data(m, data);
    ir_module_free(m);
    report("softmax: temporaries are function-local allocs, max= starts at -inf");
}

static const char *net_src =
    "def conv2d(x: f32[N, C, H, W], w: f32[F, C, R, S], stride: int = 1, pad: int = 0)\n"
    "    -> y: f32[N, F, (H + 2*pad - R) / stride + 1, (W + 2*pad - S) / stride + 1] {\n"
    "    y[n, f, p, q] += x[n, c, p*stride + r - pad, q*stride + s - pad] else 0 * w[f, c, r, s]\n"
    "}\n"
    "def batchnorm(x: f32[N, C, H, W], eps: float = 1e-5) -> y: f32[N, C, H, W] {\n"
    "    param weight: f32[C] = uniform(0.5, 1.5)\n"
    "    param bias: f32[C]\n"
    "    param running_mean: f32[C] = 0\n"
    "    param running_var: f32[C] = uniform(0.5, 1.5)\n"
    "    y[n, c, h, w] = (x[n, c, h, w] - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c]\n"
    "}\n"
    "def relu(x: f32[N, C, H, W]) -> y: f32[N, C, H, W] {\n"
    "    y[n, c, h, w] = max(x[n, c, h, w], 0)\n"
    "}\n"
    "def add(a: f32[N, C, H, W], b: f32[N, C, H, W]) -> y: f32[N, C, H, W] {\n"
    "    y[n, c, h, w] = a[n, c, h, w] + b[n, c, h, w]\n"
    "}\n"
    "def conv_bn(x: f32[N, C, H, W], out: int, k: int = 3, stride: int = 1, pad: int = 1) -> y {\n"
    "    param weight: f32[out, C, k, k]\n"
    "    c = conv2d(x, weight, stride=stride, pad=pad) as \"conv\"\n"
    "    y = batchnorm(c) as \"bn\"\n"
    "}\n"
    "def block(x: f32[N, C, H, W], out: int, stride: int = 1) -> y {\n"
    "    a = conv_bn(x, out, stride=stride) as \"conv1\"\n"
    "    r = relu(a)\n"
    "    if stride != 1 || C != out {\n"
    "        x = conv_bn(x, out, k=1, stride=stride, pad=0) as \"downsample\"\n"
    "    }\n"
    "    y = add(r, x)\n"
    "}\n"
    "input image: f32[1, 3, 8, 8]\n"
    "x = conv_bn(image, 4) as \"stem\"\n"
    "for l in 0..3 {\n"
    "    x = block(x, 4 + 4 * (l > 1), stride=1 + (l == 2)) as \"layer.{l}\"\n"
    "}\n"
    "output x\n";

static void test_network(void)
{
    ir_module *m = compile(net_src);
    CHECK(m != NULL);
    if (!m) {
        report("network");
        printf("%s", diag_text);
        return;
    }
    /* stem: conv + bn; layers 0 and 1: conv, bn, relu, add; layer 2 also
       the downsample's conv + bn. */
    CHECK(m->nfuncs == 2 + 4 + 4 + 6);
    CHECK(m->graph.ncalls == m->nfuncs);
    ir_func *f = func_of_layer(m, "stem.conv");
    CHECK(f && strcmp(ir_func_attr(f, "op"), "conv2d") == 0);
    CHECK(f && strcmp(ir_func_attr(f, "loc"), "t.te:20:9") == 0);
    CHECK(func_of_layer(m, "layer.0.conv1.bn") && func_of_layer(m, "layer.1.r") &&
          func_of_layer(m, "layer.2.y"));
    CHECK(func_of_layer(m, "layer.2.downsample.conv") && !func_of_layer(m, "layer.1.downsample.conv"));
    ir_buffer *w = ir_graph_find_buffer(m, "stem.weight");
    int64_t ws[] = {4, 3, 3, 3};
    CHECK(w && w->role == IR_BUF_PARAM && shape_is(w, 4, ws));
    /* default init: uniform(-b, b), b = 1/sqrt(fan_in), fan_in = 3*3*3 */
    CHECK(w && fabs(w->init_hi - 1 / sqrt(27.0)) < 1e-12 && w->init_lo == -w->init_hi);
    ir_buffer *rv = ir_graph_find_buffer(m, "layer.1.conv1.bn.running_var");
    CHECK(rv && rv->init_lo == 0.5 && rv->init_hi == 1.5);
    ir_buffer *bias = ir_graph_find_buffer(m, "stem.bn.bias");
    CHECK(bias && bias->init_lo == -1 && bias->init_hi == 1);
    ir_buffer *mean = ir_graph_find_buffer(m, "stem.bn.running_mean");
    CHECK(mean && mean->init_lo == 0 && mean->init_hi == 0);
    ir_buffer *dw = ir_graph_find_buffer(m, "layer.2.downsample.weight");
    int64_t dws[] = {8, 4, 1, 1};
    CHECK(dw && shape_is(dw, 4, dws));
    ir_buffer *out = ir_graph_find_buffer(m, "x");
    int64_t xs[] = {1, 8, 4, 4};
    CHECK(out && out->role == IR_BUF_OUTPUT && shape_is(out, 4, xs));
    ir_buffer *t = ir_graph_find_buffer(m, "layer.0.conv1.conv");
    CHECK(t && t->role == IR_BUF_TEMP);
    /* batchnorm's function: input, its four params in order, output */
    ir_func *bn = func_of_layer(m, "stem.bn");
    CHECK(bn && bn->nparams == 6 && strcmp(bn->params[1]->name, "weight") == 0 &&
          strcmp(bn->params[4]->name, "running_var") == 0);
    CHECK(bn && m->graph.calls[1].fn == bn && m->graph.calls[1].args[2] == bias);
    void **data = graph_data(m);
    char err[256];
    CHECK(ir_interp_module(m, data, err, sizeof err));
    free_data(m, data);
    ir_module_free(m);
    report("network: composites, params, if, for, hierarchical names");
}

static void test_gather(void)
{
    const char *src =
        "def embedding(ids: i64[B, T], table: f32[V, D]) -> y: f32[B, T, D] {\n"
        "    y[b, t, d] = table[ids[b, t], d]\n"
        "}\n"
        "def safe(ids: i64[B, T], table: f32[V, D]) -> y: f32[B, T, D] {\n"
        "    y[b, t, d] = table[ids[b, t], d] else -1\n"
        "}\n"
        "input ids: i64[2, 3] = uniform(0, 5)\n"
        "input table: f32[5, 4]\n"
        "e = embedding(ids, table)\n"
        "s = safe(ids, table)\n"
        "output e\n"
        "output s\n";
    ir_module *m = compile(src);
    CHECK(m != NULL);
    if (!m) {
        report("gather");
        return;
    }
    walk_stats w = stats_of(func_of_layer(m, "e"));
    CHECK(w.nstmt[IR_S_ASSERT] == 1 && w.nexpr[IR_SELECT] == 0);
    const char *msg = NULL;
    if (w.nblocks && w.blocks[0]->body[0]->kind == IR_S_SEQ)
        msg = w.blocks[0]->body[0]->body[0]->msg;
    CHECK(msg && strcmp(msg, "embedding: index ids[b, t] of table (dimension 0) is out of range [0, 5)") == 0);
    w = stats_of(func_of_layer(m, "s"));
    CHECK(w.nstmt[IR_S_ASSERT] == 0 && w.nexpr[IR_SELECT] == 1);
    void **data = graph_data(m);
    char err[256];
    CHECK(ir_interp_module(m, data, err, sizeof err));
    const int64_t *ids = data[buf_index(m, "ids")];
    const float *table = data[buf_index(m, "table")], *e = data[buf_index(m, "e")];
    for (int i = 0; i < 6; i++)
        CHECK(e[i * 4 + 1] == table[ids[i] * 4 + 1]);
    /* An index out of range stops the kernel with the assert's message. */
    ((int64_t *)data[buf_index(m, "ids")])[4] = 9;
    CHECK(!ir_interp_module(m, data, err, sizeof err) && strstr(err, "out of range [0, 5)"));
    free_data(m, data);
    ir_module_free(m);
    report("gather: data-dependent index asserts, else guards");
}

static void test_mixed_def(void)
{
    const char *src =
        "def matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {\n"
        "    C[i, j] += A[i, k] * B[k, j]\n"
        "}\n"
        "def softmax(x: f32[R, L]) -> y: f32[R, L] {\n"
        "    m[r] max= x[r, j]\n"
        "    e[r, j] = exp(x[r, j] - m[r])\n"
        "    s[r] += e[r, j]\n"
        "    y[r, j] = e[r, j] / s[r]\n"
        "}\n"
        "def attention(x: f32[T, D]) -> y {\n"
        "    param wq: f32[D, D]\n"
        "    q = matmul(x, wq) as \"q\"\n"
        "    s[i, j] += q[i, d] * x[j, d]\n"
        "    sc[i, j] = s[i, j] / sqrt(f32(D))\n"
        "    p = softmax(sc)\n"
        "    y[i, d] += p[i, j] * x[j, d]\n"
        "}\n"
        "input x: f32[5, 4]\n"
        "a = attention(x) as \"attn\"\n"
        "t[] += a[i, j] * a[i, j]\n"
        "output t\n";
    ir_module *m = compile(src);
    CHECK(m != NULL);
    if (!m) {
        report("mixed def");
        printf("%s", diag_text);
        return;
    }
    CHECK(m->nfuncs == 5);
    ir_func *sc = func_of_layer(m, "attn.sc");
    CHECK(sc && strcmp(ir_func_attr(sc, "op"), "attention") == 0 && sc->nparams == 3);
    CHECK(sc && strcmp(sc->params[0]->name, "q") == 0 && strcmp(sc->params[2]->name, "sc") == 0);
    CHECK(sc && sc->body->kind == IR_S_ALLOC && strcmp(sc->body->buf->name, "s") == 0);
    CHECK(func_of_layer(m, "attn.p") && func_of_layer(m, "attn.y"));
    ir_buffer *res = ir_graph_find_buffer(m, "attn");
    int64_t as[] = {5, 4};
    CHECK(res && res->role == IR_BUF_TEMP && shape_is(res, 2, as));
    ir_func *top = func_of_layer(m, "t");
    CHECK(top && strcmp(ir_func_attr(top, "op"), "main") == 0 && top->nparams == 2 &&
          top->params[1]->ndim == 0);
    ir_buffer *t = ir_graph_find_buffer(m, "t");
    CHECK(t && t->role == IR_BUF_OUTPUT && t->ndim == 0);
    /* order: q, the stage up to sc, softmax, the stage of y, then t */
    CHECK(m->graph.ncalls == 5 && m->graph.calls[1].fn == sc && m->graph.calls[4].fn == top);
    void **data = graph_data(m);
    char err[256];
    CHECK(ir_interp_module(m, data, err, sizeof err));
    free_data(m, data);
    ir_module_free(m);
    report("mixed def: runs of index statements become stages");
}

/* A temporary used later only under another name still reaches the graph;
 * one nobody uses stays local. */
static void test_alias(void)
{
    ir_module *m = compile(
        "def relu(x: f32[N]) -> y: f32[N] {\n"
        "    y[i] = max(x[i], 0)\n"
        "}\n"
        "input x: f32[4]\n"
        "t[i] = x[i] * 2\n"
        "u = t\n"
        "w[i] = u[i] + 1\n"
        "d[i] = w[i] * 0\n"
        "v = relu(u)\n"
        "output v\n"
        "output w\n");
    CHECK(m != NULL);
    if (!m) {
        report("aliases");
        printf("%s", diag_text);
        return;
    }
    ir_func *f = func_of_layer(m, "t");
    CHECK(f && f->nparams == 3 && strcmp(f->params[1]->name, "t") == 0 &&
          strcmp(f->params[2]->name, "w") == 0);
    CHECK(f && f->body->kind == IR_S_ALLOC && strcmp(f->body->buf->name, "d") == 0);
    ir_buffer *t = ir_graph_find_buffer(m, "t");
    CHECK(t && t->role == IR_BUF_TEMP && m->graph.ncalls == 2 && m->graph.calls[1].args[0] == t);
    ir_module_free(m);
    report("aliases: temporaries needed under another name become graph values");
}

static void test_types(void)
{
    ir_module *m = compile(
        "def f(x: f32[N], ids: i32[N], eps: float = 0.5) -> y: f32[N] {\n"
        "    y[i] = x[i] * eps + f32(i) + f32(ids[i] / 2) + (i % 2 == 0 ? 1 : -1)\n"
        "}\n"
        "def g(a: i64[N]) -> y: i64[N] {\n"
        "    y[i] = a[i] / 3 + i + abs(a[i] - 2)\n"
        "}\n"
        "input x: f32[6]\n"
        "input ids: i32[6] = uniform(0, 9)\n"
        "input a: i64[6] = uniform(-5, 5)\n"
        "y = f(x, ids)\n"
        "z = g(a)\n"
        "output y\n"
        "output z\n");
    CHECK(m != NULL);
    if (!m) {
        report("types");
        printf("%s", diag_text);
        return;
    }
    walk_stats w = stats_of(func_of_layer(m, "y"));
    CHECK(w.nexpr[IR_FLOORDIV] == 1 && w.nexpr[IR_FLOORMOD] == 1 && w.nexpr[IR_DIV] == 0);
    CHECK(w.nexpr[IR_CAST] == 2 && w.nexpr[IR_SELECT] == 1);
    w = stats_of(func_of_layer(m, "z"));
    CHECK(w.nexpr[IR_FLOORDIV] == 1 && w.nexpr[IR_CALL] == 0 && w.nexpr[IR_SELECT] == 1);
    void **data = graph_data(m);
    char err[256];
    CHECK(ir_interp_module(m, data, err, sizeof err));
    const int64_t *a = data[buf_index(m, "a")], *z = data[buf_index(m, "z")];
    for (int i = 0; i < 6; i++) {
        int64_t q = a[i] >= 0 ? a[i] / 3 : -((-a[i] + 2) / 3);
        CHECK(z[i] == q + i + llabs(a[i] - 2));
    }
    const float *x = data[buf_index(m, "x")], *y = data[buf_index(m, "y")];
    const int32_t *ids = data[buf_index(m, "ids")];
    for (int i = 0; i < 6; i++)
        CHECK(fabsf(y[i] - (x[i] * 0.5f + (float)i + (float)(ids[i] / 2) + (i % 2 == 0 ? 1 : -1))) < 1e-6);
    free_data(m, data);
    ir_module_free(m);
    report("types: literals take their context's dtype, integer / and % floor");
}

/* Writes `text` to dir/name. */
static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Creates a directory from the template dir ("...XXXXXX"); false after a
 * failed check if it cannot. */
static bool make_temp_dir(char *dir)
{
    bool made = mkdtemp(dir) != NULL;
    CHECK(made);
    return made;
}

static void remove_dir(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void test_imports(void)
{
    char dir[] = "/tmp/tec-fe-XXXXXX";
    if (!make_temp_dir(dir)) {
        report("imports");
        return;
    }
    char inc[600];
    snprintf(inc, sizeof inc, "%s/inc", dir);
    CHECK(mkdir(inc, 0700) == 0);
    write_file(inc, "ops.te", "import \"more.te\"\nlet W = 3\ndef neg(x: f32[N]) -> y: f32[N] {\n    y[i] = -x[i]\n}\n");
    write_file(inc, "more.te", "let H = 2\n");
    const char *src = "import \"ops.te\"\nimport \"ops.te\"\ninput v: f32[W * H]\nn = neg(v)\noutput n\n";
    const char *incs[] = {inc};
    fe_options o = {.include_dirs = incs, .ninclude = 1};
    ir_module *m = compile_opts(src, &o);
    CHECK(m && m->nfuncs == 1);
    int64_t six[] = {6};
    CHECK(m && shape_is(ir_graph_find_buffer(m, "v"), 1, six));
    ir_module_free(m);
    fe_define d = {"W", "5"};
    fe_options od = {.include_dirs = incs, .ninclude = 1, .defines = &d, .ndefines = 1};
    m = compile_opts(src, &od);
    int64_t ten[] = {10};
    CHECK(m && shape_is(ir_graph_find_buffer(m, "v"), 1, ten));
    ir_module_free(m);
    m = compile("import \"nowhere.te\"\n");
    CHECK(!m && strcmp(first_line(), "t.te:1:8: error: cannot find import \"nowhere.te\" (searched: .)") == 0);
    m = compile_opts("import \"nowhere.te\"\n", &o);
    char want[1024];
    snprintf(want, sizeof want, "t.te:1:8: error: cannot find import \"nowhere.te\" (searched: ., %s)", inc);
    CHECK(!m && strcmp(first_line(), want) == 0);
    /* an error inside an imported file names that file */
    write_file(inc, "bad.te", "def f(x: f32[N]) -> y: f32[N] {\n    y[i] = x[i] +\n}\n");
    m = compile_opts("import \"bad.te\"\n", &o);
    snprintf(want, sizeof want, "%s/bad.te:3:1: error: syntax error, unexpected '}'", inc);
    CHECK(!m && strcmp(first_line(), want) == 0);
    remove_dir(dir);
    report("imports: include dirs, imported once, lets visible, -D reaches them");
}

/* Top-level lets belong to their file: a def sees the lets of its own file
 * and of the files that file imports; a file's own let hides an imported
 * one of the same name (there only); -D sets every let of its name. */
static void test_let_scopes(void)
{
    char dir[] = "/tmp/tec-fe-XXXXXX";
    if (!make_temp_dir(dir)) {
        report("let scopes");
        return;
    }
    write_file(dir, "wide.te", "let W = 3\ndef widen(x: f32[N]) -> y: f32[N * W] {\n    y[i] = x[i / W]\n}\n");
    write_file(dir, "checked.te", "let B = 4\nassert B % 2 == 0, \"B must be even\"\n");
    const char *incs[] = {dir};
    fe_options o = {.include_dirs = incs, .ninclude = 1};
    int64_t seven[] = {7}, twentyone[] = {21}, two[] = {2}, four[] = {4};
    /* the program's W is 7 (before and after the import), widen's is 3 */
    const char *progs[] = {
        "import \"wide.te\"\nlet W = 7\ninput v: f32[W]\nw = widen(v)\noutput w\n",
        "let W = 7\nimport \"wide.te\"\ninput v: f32[W]\nw = widen(v)\noutput w\n",
    };
    for (int k = 0; k < 2; k++) {
        ir_module *m = compile_opts(progs[k], &o);
        CHECK(m && shape_is(ir_graph_find_buffer(m, "v"), 1, seven) &&
              shape_is(ir_graph_find_buffer(m, "w"), 1, twentyone));
        ir_module_free(m);
    }
    fe_define dw = {"W", "2"};
    fe_options od = {.include_dirs = incs, .ninclude = 1, .defines = &dw, .ndefines = 1};
    ir_module *m = compile_opts(progs[0], &od);
    CHECK(m && shape_is(ir_graph_find_buffer(m, "v"), 1, two) && shape_is(ir_graph_find_buffer(m, "w"), 1, four));
    ir_module_free(m);
    /* the program's lets do not reach an imported def (here its index
       variable i, and W where widen has its own) */
    m = compile_opts("import \"wide.te\"\nlet i = 1\nlet N = 5\ninput v: f32[2]\nw = widen(v)\noutput w\n", &o);
    int64_t six[] = {6};
    CHECK(m && shape_is(ir_graph_find_buffer(m, "w"), 1, six));
    ir_module_free(m);
    /* an assert at the top level of an imported file checks its lets */
    m = compile_opts("import \"checked.te\"\ninput v: f32[B]\noutput v\n", &o);
    CHECK(!m && strstr(first_line(), "'v' is a program input"));
    fe_define db = {"B", "3"};
    fe_options ob = {.include_dirs = incs, .ninclude = 1, .defines = &db, .ndefines = 1};
    m = compile_opts("import \"checked.te\"\ninput v: f32[B]\nw[i] = v[i]\noutput w\n", &ob);
    char want[1024];
    snprintf(want, sizeof want, "%s/checked.te:2:1: error: assertion failed: B must be even (B %% 2 == 0 with B = 3)", dir);
    CHECK(!m && strcmp(first_line(), want) == 0);
    /* a let of a file that is not imported, or not run yet, is named */
    m = compile_opts("import \"wide.te\"\nlet K = 2\ninput v: f32[W * K]\noutput v\n", &o);
    CHECK(!m && strstr(first_line(), "'v' is a program input"));
    write_file(dir, "usesK.te", "def f(x: f32[N]) -> y: f32[N * K] {\n    y[i] = x[i / K]\n}\n");
    m = compile_opts("import \"usesK.te\"\nlet K = 2\ninput v: f32[2]\nw = f(v)\noutput w\n", &o);
    snprintf(want, sizeof want,
             "%s/usesK.te:1:32: error: unknown name 'K' (a let of t.te, at t.te:2:5, which %s/usesK.te does not import)",
             dir, dir);
    CHECK(!m && strcmp(first_line(), want) == 0);
    if (m || strcmp(first_line(), want) != 0)
        printf("  got '%s'\n", first_line());
    remove_dir(dir);
    report("let scopes: per file, own lets hide imported ones, -D sets all, asserts in imported files");
}

/* False (after showing the diagnostics and reporting the test failed) if a
 * program that must compile did not. */
static bool compiled(const ir_module *m, const char *test)
{
    CHECK(m != NULL);
    if (!m) {
        printf("%s", diag_text ? diag_text : "");
        report(test);
    }
    return m != NULL;
}

/* Does f contain a float constant equal to v (an infinity, say)? */
static bool has_float_const(const ir_expr *e, void *p)
{
    double *want = p;
    if (e->kind == IR_FLOAT && e->fval == *want)
        *want = NAN;   /* found: NaN marks it */
    return true;
}

static bool func_has_float(const ir_func *f, double v)
{
    double want = v;
    ir_stmt_walk(f->body, NULL, has_float_const, &want);
    return isnan(want);
}

/* inf, where ranges (also not starting at 0), guarded selects. */
static void test_ranges_and_guards(void)
{
    ir_module *m = compile(
        "def maxpool(x: f32[N, C, H, W], k: int, stride: int, pad: int = 0)\n"
        "    -> y: f32[N, C, (H + 2*pad - k) / stride + 1, (W + 2*pad - k) / stride + 1] {\n"
        "    y[n, c, p, q] max= x[n, c, p*stride + r - pad, q*stride + s - pad] else -inf\n"
        "        where r in 0..k, s in 0..k\n"
        "}\n"
        "def ahead(x: f32[L]) -> y: f32[L] {\n"
        "    y[i] += x[i + d] else 0 where d in 1..3\n"
        "}\n"
        "def concat(a: f32[C1, W], b: f32[C2, W]) -> y: f32[C1 + C2, W] {\n"
        "    y[c, w] = c < C1 ? a[c, w] : b[c - C1, w]\n"
        "}\n"
        "input x: f32[1, 2, 5, 6]\n"
        "input v: f32[7]\n"
        "input a: f32[2, 3]\n"
        "input b: f32[4, 3]\n"
        "pool = maxpool(x, 3, 2, pad=1)\n"
        "sums = ahead(v)\n"
        "cat = concat(a, b)\n"
        "masked[i] = select(i >= 2, v[i], -inf) where i in 0..7\n"
        "output pool\n"
        "output sums\n"
        "output cat\n"
        "output masked\n");
    if (!compiled(m, "ranges and guards"))
        return;
    ir_func *fp = func_of_layer(m, "pool"), *fa = func_of_layer(m, "sums");
    ir_func *fc = func_of_layer(m, "cat"), *fm = func_of_layer(m, "masked");
    CHECK(fp && fa && fc && fm);
    if (!fp || !fa || !fc || !fm) {
        ir_module_free(m);
        report("ranges and guards");
        return;
    }
    int64_t ps[] = {1, 2, 3, 3};
    CHECK(shape_is(ir_graph_find_buffer(m, "pool"), 4, ps));
    walk_stats w = stats_of(fp);
    CHECK(w.nblocks == 1 && w.nstmt[IR_S_FOR] == 6);
    if (w.nblocks == 1) {   /* r and s are reduced over [0, 3) */
        const ir_stmt *blk = w.blocks[0];
        CHECK(blk->niters == 6 && blk->iters[4].kind == IR_ITER_REDUCE && blk->iters[4].extent == 3 &&
              blk->iters[5].extent == 3);
    }
    CHECK(func_has_float(fp, -INFINITY));   /* the identity of max= and the default */
    w = stats_of(fa);   /* d in 1..3: a loop of 2, the index adds 1 */
    CHECK(w.nblocks == 1 && w.nblocks && w.blocks[0]->niters == 2 && w.blocks[0]->iters[1].extent == 2);
    w = stats_of(fc);   /* no range checks: the guard's select only */
    CHECK(w.nexpr[IR_SELECT] == 1 && w.nstmt[IR_S_ASSERT] == 0);
    CHECK(func_has_float(fm, -INFINITY));

    void **data = graph_data(m);
    char err[256];
    CHECK(ir_interp_module(m, data, err, sizeof err));
    const float *x = data[buf_index(m, "x")], *pool = data[buf_index(m, "pool")];
    double worst = 0;
    for (int c = 0; c < 2; c++)
        for (int p = 0; p < 3; p++)
            for (int q = 0; q < 3; q++) {
                float best = -INFINITY;
                for (int r = 0; r < 3; r++)
                    for (int s = 0; s < 3; s++) {
                        int h = p * 2 + r - 1, wi = q * 2 + s - 1;
                        if (h >= 0 && h < 5 && wi >= 0 && wi < 6)
                            best = fmaxf(best, x[(c * 5 + h) * 6 + wi]);
                    }
                worst = fmax(worst, fabs(best - pool[(c * 3 + p) * 3 + q]));
            }
    const float *v = data[buf_index(m, "v")], *sums = data[buf_index(m, "sums")];
    for (int i = 0; i < 7; i++) {
        float want = (i + 1 < 7 ? v[i + 1] : 0) + (i + 2 < 7 ? v[i + 2] : 0);
        worst = fmax(worst, fabs(want - sums[i]));
    }
    const float *a = data[buf_index(m, "a")], *b = data[buf_index(m, "b")];
    const float *cat = data[buf_index(m, "cat")];
    for (int c = 0; c < 6; c++)
        for (int k = 0; k < 3; k++)
            worst = fmax(worst, fabs(cat[c * 3 + k] - (c < 2 ? a[c * 3 + k] : b[(c - 2) * 3 + k])));
    CHECK(worst < 1e-6);
    const float *masked = data[buf_index(m, "masked")];
    CHECK(masked[0] == -INFINITY && masked[1] == -INFINITY && masked[2] == v[2]);
    free_data(m, data);
    ir_module_free(m);
    report("inf, where ranges (from 0 and from 1), guarded selects: structure and values");
}

/* Overloads by rank; `state` marks graph params. */
static void test_overloads_and_state(void)
{
    ir_module *m = compile(
        "def relu(x: f32[N, C]) -> y: f32[N, C] { y[n, c] = max(x[n, c], 0) }\n"
        "def relu(x: f32[N, C, H, W]) -> y: f32[N, C, H, W] { y[n, c, h, w] = max(x[n, c, h, w], 0) }\n"
        "def bn(x: f32[N, C], eps: float = 1e-5) -> y: f32[N, C] {\n"
        "    param weight: f32[C] = 1\n"
        "    state running_var: f32[C] = uniform(0.5, 1.5)\n"
        "    y[n, c] = x[n, c] * rsqrt(running_var[c] + eps) * weight[c]\n"
        "}\n"
        "input m: f32[2, 3]\n"
        "input t: f32[1, 2, 2, 2]\n"
        "r2 = relu(m)\n"
        "r4 = relu(t)\n"
        "n = bn(r2, eps=0.5)\n"
        "output r4\n"
        "output n\n");
    if (!compiled(m, "overloads and state"))
        return;
    ir_func *f2 = func_of_layer(m, "r2"), *f4 = func_of_layer(m, "r4");
    CHECK(f2 && f4 && strcmp(ir_func_attr(f2, "op"), "relu") == 0 && strcmp(ir_func_attr(f4, "op"), "relu") == 0);
    CHECK(f2 && f4 && f2->params[0]->ndim == 2 && f4->params[0]->ndim == 4);
    ir_buffer *w = ir_graph_find_buffer(m, "n.weight"), *rv = ir_graph_find_buffer(m, "n.running_var");
    CHECK(w && rv && w->role == IR_BUF_PARAM && rv->role == IR_BUF_PARAM);
    CHECK(w && rv && !w->state && rv->state && rv->init_lo == 0.5 && rv->init_hi == 1.5);
    char *text = ir_module_to_string(m);
    CHECK(text && strstr(text, "  param n.running_var: f32[3] state init(0.5, 1.5)\n"));
    CHECK(text && strstr(text, "  param n.weight: f32[3] init(1, 1)\n"));
    free(text);
    ir_module_free(m);
    report("overloads: a call runs the def of its ranks; state params are marked");
}

/* Each program must fail with exactly this first line. */
static void test_messages(void)
{
    static const struct {
        const char *src, *msg;
    } cases[] = {
        {"input x: f32[4]\ny = relu(x)\noutput y\n", "t.te:2:5: error: unknown function 'relu'"},
        {"let N = 4\nlet N = 5\n", "t.te:2:5: error: 'N' is already defined as a let (at t.te:1:5)"},
        {"param w: f32[4]\n", "t.te:1:1: error: param is only allowed inside a def (use input for the program's data)"},
        {"input x: f32[4, 0]\n", "t.te:1:17: error: dimension 1 of input x is 0; every dimension must be >= 1"},
        {"let N = 9223372036854775807\nlet M = N + 1\n",
         "t.te:2:11: error: integer overflow in 'N + 1' (9223372036854775807 + 1 does not fit in 64 bits)"},
        {"input x: f32[4]\n", "tec: error: t.te: the program has no output (add `output NAME`)"},
        {"input x: f32[4]\noutput x\n", "t.te:2:8: error: 'x' is a program input; an output must be computed by the program"},
        {"input x: f32[4]\ny[i] = x[i] + z[i]\noutput y\n", "t.te:2:15: error: unknown tensor 'z'"},
        {"input x: f32[4]\ny[i] = exp(i)\noutput y\n",
         "t.te:2:3: error: cannot infer the range of index 'i': use it alone as a whole index of some tensor (as in T[i]), or give it a range with `where i in LO..HI`"},
        {"input x: i64[4]\ny[i] = exp(x[i])\noutput y\n",
         "t.te:2:8: error: exp needs an f32 or f64 argument, but 'x[i]' is i64; cast it, e.g. f32(...)"},
        {"input x: f32[4]\ny[i] = x[i] > 0\noutput y\n",
         "t.te:2:8: error: the right side of 'y' is a condition (bool); use select(cond, a, b) or cast it, e.g. f32(...)"},
        {"input x: f32[4]\ny[i] = x[i] - x[i + 1]\noutput y\n",
         "t.te:2:15: error: read of x[i + 1] in main may fall outside dimension 0 (size 4): index ranges over [1, 4]; add a default, e.g. x[...] else 0"},
        {"input x: f32[4]\nfor l in 0..2 {\n    y = x\n}\nlet k = l + 1\n",
         "t.te:5:9: error: unknown name 'l'"},
        {"def f(x: f32[N]) -> y: f32[N] {\n    y[i] = x[i]\n}\ninput x: f32[4]\na = f(x) as \"a b\"\noutput a\n",
         "t.te:5:13: error: invalid layer name \"a b\": use non-empty parts separated by '.', without spaces or quotes"},
        {"def f(x: f32[N]) -> y {\n    z[i] = x[i]\n}\ninput x: f32[4]\na = f(x)\noutput a\n",
         "t.te:2:5: warning: 'z' is computed but never used"},
        {"input x: i32[4]\ny[i] = max(x[i], -inf)\noutput y\n",
         "t.te:2:18: error: '-inf' is a floating-point value but i32 is needed here; cast it, e.g. i32(...)"},
        {"input x: f32[4]\ny[i] += x[i + j] else 0 where j in 0..0\noutput y\n",
         "t.te:2:31: error: the range 0..0 of index 'j' is empty (it runs from lo up to, not including, hi)"},
        {"input x: f32[4]\ny[i] = x[i] where i in 0..5\noutput y\n",
         "t.te:2:19: error: index 'i' ranges over 0..5 by its where clause but is used for dimension 0 of x (size 4); the ranges must agree"},
        {"input x: f32[4]\ny[i] = x[i] + (i <= 3 ? x[i + 1] : 0)\noutput y\n",
         "t.te:2:25: error: read of x[i + 1] in main may fall outside dimension 0 (size 4): index ranges over [1, 4]; add a default, e.g. x[...] else 0"},
        {"input x: f32[4]\ny[i] = x[i] + (2 - i <= i ? x[i - 2] : 0)\noutput y\n",
         "t.te:2:29: error: read of x[i - 2] in main may fall outside dimension 0 (size 4): index ranges over [-1, 1]; add a default, e.g. x[...] else 0"},
        {"input v: f32[7]\nm[i] = select(i >= 2, v[i], -inf)\noutput m\n",
         "t.te:2:3: error: cannot infer the range of index 'i': it is a whole index only inside guarded branches of a select, which do not define ranges; give it one with `where i in LO..HI`"},
        {"def f(x: f32[N]) -> y: f32[N] { y[i] = x[i] }\ninput x: f32[2, 2]\ny = f(x)\noutput y\n",
         "t.te:3:7: error: in call to f: argument x has rank 2 (f32[2, 2]) but the parameter is declared f32[N] (rank 1)"},
        {"def f(x: f32[N]) -> y: f32[N * K] { y[i] = x[i / K] }\ninput x: f32[2]\ny = f(x)\nlet K = 2\noutput y\n",
         "t.te:1:32: error: unknown name 'K' (the let 'K' at t.te:4:5 is not defined yet at this point)"},
        {"let N = 2\nassert N > 2, \"N is {N}, at most {N + 1 - 1}\"\n",
         "t.te:2:1: error: assertion failed: N is 2, at most 2 (N > 2 with N = 2)"},
        {"def f(x: f32[N], k: int) -> y: f32[N / k] {\n    assert k != 0\n    y[i] = x[i * k]\n}\ninput x: f32[4]\ny = f(x, 0)\noutput y\n",
         "t.te:2:5: error: assertion failed in f: k != 0 with k = 0"},
        {"input x: f32[4]\nassert x > 0\n",
         "t.te:2:8: error: 'x' is a tensor (f32[4]), but a compile-time number is needed here"},
        {"let N = 2\nassert N > 2, \"{M}\"\n", "t.te:2:17: error: unknown name 'M'"},
        {"let T = 1\nassert T > 2, \"T is {T\"\n", "t.te:2:21: error: unterminated '{' in assert message"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ir_module *m = compile(cases[i].src);
        bool ok = !m && strcmp(first_line(), cases[i].msg) == 0;
        if (!ok)
            printf("  case %zu: got '%s'\n", i, first_line());
        CHECK(ok);
        ir_module_free(m);
    }
    report("messages: located errors with the expected wording");
}

/* No input may crash the frontend: every prefix of a real program, and
 * programs with bytes flipped. */
static void test_robustness(void)
{
    size_t n = strlen(net_src);
    char *buf = malloc(n + 1);
    int modules = 0;
    for (size_t k = 0; k <= n; k++) {
        memcpy(buf, net_src, k);
        buf[k] = 0;
        ir_module *m = compile(buf);
        modules += m != NULL;
        ir_module_free(m);
    }
    CHECK(modules >= 1);   /* the whole program, at least */
    unsigned seed = 12345;
    static const char alphabet[] = "[](){}=+-*/%<>!?:,.#\"\n x0f32else";
    for (int round = 0; round < 400; round++) {
        memcpy(buf, net_src, n + 1);
        for (int j = 0; j < 4; j++) {
            seed = seed * 1103515245 + 12345;
            size_t at = (seed >> 8) % n;
            seed = seed * 1103515245 + 12345;
            buf[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
        }
        ir_module_free(compile(buf));
    }
    free(buf);
    report("robustness: truncated and mutated programs never crash");
}

int main(void)
{
    test_matmul();
    test_conv();
    test_softmax();
    test_network();
    test_gather();
    test_mixed_def();
    test_alias();
    test_types();
    test_imports();
    test_let_scopes();
    test_ranges_and_guards();
    test_overloads_and_state();
    test_messages();
    test_robustness();
    free(diag_text);
    return test_exit("test_frontend");
}
