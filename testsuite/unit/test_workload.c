/* testsuite/unit/test_workload.c — layers of the accelerator model derived
 * from IR built with the ir.h builder: matmul, strided and padded
 * convolution (multi-dimensional and flattened indices), depthwise
 * convolution, attention-like batched matmuls, operand order, vector work,
 * layer names, per-function results, topology export, reports and charts.
 *
 * One line per group of checks; exit status 1 if any failed. */
#include "accel/cli.h"
#include "accel/plot.h"
#include "accel/workload.h"
#include "passes/analyze.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testsuite/unit/test.h"

static char tmpdir[256];

/* ---------------------------------------------------------------- IR helpers */

static ir_module *M;

static ir_expr *I(int64_t v) { return ir_int(M, v); }
static ir_expr *V(ir_var *v) { return ir_varref(M, v); }
static ir_expr *add(ir_expr *a, ir_expr *b) { return ir_binary(M, IR_ADD, a, b); }
static ir_expr *sub(ir_expr *a, ir_expr *b) { return ir_binary(M, IR_SUB, a, b); }
static ir_expr *mul(ir_expr *a, ir_expr *b) { return ir_binary(M, IR_MUL, a, b); }
static ir_expr *f32(double v) { return ir_float(M, v, IR_F32); }

static ir_expr *ld(ir_buffer *b, int n, ...)
{
    ir_expr *idx[8];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        idx[i] = va_arg(ap, ir_expr *);
    va_end(ap);
    return ir_load(M, b, idx, n);
}

static ir_stmt *st(ir_buffer *b, ir_expr *value, int n, ...)
{
    ir_expr *idx[8];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        idx[i] = va_arg(ap, ir_expr *);
    va_end(ap);
    return ir_store(M, b, idx, n, value);
}

static ir_buffer *buf(const char *name, ir_buf_role role, int n, ...)
{
    int64_t shape[8];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        shape[i] = va_arg(ap, int64_t);
    va_end(ap);
    return ir_buffer_new(M, name, IR_F32, n, shape, role);
}

/* A loop nest around one block whose iteration variables are bound one to
 * one to the loops: nest_var adds loop `name` and iter var `v<name>`. */
typedef struct nest {
    ir_var *loop[8];
    ir_itervar it[8];
    int n;
} nest;

static ir_var *nest_var(nest *t, const char *name, int64_t extent, ir_iter_kind kind)
{
    char vn[64];
    snprintf(vn, sizeof vn, "v%s", name);
    ir_var *l = ir_var_new(M, name, IR_I64), *v = ir_var_new(M, vn, IR_I64);
    t->loop[t->n] = l;
    t->it[t->n] = (ir_itervar){v, kind, extent, V(l)};
    t->n++;
    return v;
}

static ir_stmt *nest_build(nest *t, const char *name, ir_stmt *init, ir_stmt *body)
{
    ir_stmt *s = ir_block(M, name, t->it, t->n, init, body);
    for (int i = t->n - 1; i >= 0; i--)
        s = ir_for(M, t->loop[i], I(0), I(t->it[i].extent), IR_FOR_SERIAL, s);
    return s;
}

/* A function over `n` ARG buffers called once with the graph buffers g. */
static ir_func *func(const char *name, const char *loc, ir_stmt *body, int n, ir_buffer **args,
                     ir_buffer **g)
{
    ir_func *f = ir_func_new(M, name);
    ir_func_set_attr(M, f, "layer", name);
    ir_func_set_attr(M, f, "op", "test");
    if (loc)
        ir_func_set_attr(M, f, "loc", loc);
    for (int i = 0; i < n; i++)
        ir_func_add_param(M, f, args[i]);
    f->body = body;
    for (int i = 0; i < n; i++)
        ir_graph_add_buffer(M, g[i]);
    ir_graph_add_call(M, f, g, n);
    return f;
}

/* Graph buffers with the ARG buffers' shapes. */
static ir_buffer *gbuf(const ir_buffer *arg, const char *name, ir_buf_role role)
{
    return ir_buffer_new(M, name, arg->dtype, arg->ndim, arg->shape, role);
}

static bool workload(acc_workload *w)
{
    diag d;
    diag_init(&d, stdout);
    bool ok = ir_verify(M, "test", &d) && acc_workload_from_module(M, w, &d);
    diag_fini(&d);
    if (!ok) {
        group_fail++;
        printf("  %s: workload extraction failed\n", group_name);
    }
    return ok;
}

static void check_gemm(const acc_layer *l, const char *name, int64_t m, int64_t n, int64_t k,
                       int64_t batch)
{
    check_s("name", l->name, name);
    check_i("kind", l->kind, ACC_LAYER_GEMM);
    check_i("M", l->M, m);
    check_i("N", l->N, n);
    check_i("K", l->K, k);
    check_i("batch", l->batch, batch);
}

static void check_conv(const acc_layer *l, int64_t ih, int64_t iw, int64_t fh, int64_t fw,
                       int64_t ch, int64_t nf, int64_t sh, int64_t sw)
{
    check_b("has_conv", l->has_conv);
    if (!l->has_conv)
        return;
    const acc_conv *c = &l->conv;
    check_i("ifmap_h", c->ifmap_h, ih);
    check_i("ifmap_w", c->ifmap_w, iw);
    check_i("filt_h", c->filt_h, fh);
    check_i("filt_w", c->filt_w, fw);
    check_i("channels", c->channels, ch);
    check_i("num_filters", c->num_filters, nf);
    check_i("stride_h", c->stride_h, sh);
    check_i("stride_w", c->stride_w, sw);
}

static void check_vector(const acc_layer *l, const char *name, int64_t ops, int64_t rd,
                         int64_t wr)
{
    check_s("name", l->name, name);
    check_i("kind", l->kind, ACC_LAYER_VECTOR);
    check_i("vector_ops", l->vector_ops, ops);
    check_i("vector_read_bytes", l->vector_read_bytes, rd);
    check_i("vector_write_bytes", l->vector_write_bytes, wr);
}

/* ---------------------------------------------------------------- builders */

/* C[i, j] += A[i, k] * B[k, j] with A 6x10, B 10x7 (B a PARAM). */
static void build_matmul(void)
{
    ir_buffer *A = buf("A", IR_BUF_ARG, 2, (int64_t)6, (int64_t)10);
    ir_buffer *B = buf("B", IR_BUF_ARG, 2, (int64_t)10, (int64_t)7);
    ir_buffer *C = buf("C", IR_BUF_ARG, 2, (int64_t)6, (int64_t)7);
    nest t = {0};
    ir_var *i = nest_var(&t, "i", 6, IR_ITER_SPATIAL), *j = nest_var(&t, "j", 7, IR_ITER_SPATIAL);
    ir_var *k = nest_var(&t, "k", 10, IR_ITER_REDUCE);
    ir_stmt *init = st(C, f32(0), 2, V(i), V(j));
    ir_stmt *upd = st(C, add(ld(C, 2, V(i), V(j)), mul(ld(A, 2, V(i), V(k)), ld(B, 2, V(k), V(j)))),
                      2, V(i), V(j));
    ir_buffer *args[] = {A, B, C};
    ir_buffer *g[] = {gbuf(A, "a", IR_BUF_INPUT), gbuf(B, "b", IR_BUF_PARAM),
                      gbuf(C, "c", IR_BUF_OUTPUT)};
    func("mm", NULL, nest_build(&t, "C", init, upd), 3, args, g);
}

/* The same matmul on flat buffers, A[i*10 + k] * B[k*7 + j]: i's
 * coefficient is exactly k's extent, a reshape and not a window. */
static void build_matmul_flat(void)
{
    ir_buffer *A = buf("A", IR_BUF_ARG, 1, (int64_t)60);
    ir_buffer *B = buf("B", IR_BUF_ARG, 1, (int64_t)70);
    ir_buffer *C = buf("C", IR_BUF_ARG, 1, (int64_t)42);
    nest t = {0};
    ir_var *i = nest_var(&t, "i", 6, IR_ITER_SPATIAL), *j = nest_var(&t, "j", 7, IR_ITER_SPATIAL);
    ir_var *k = nest_var(&t, "k", 10, IR_ITER_REDUCE);
    ir_expr *ci = add(mul(V(i), I(7)), V(j));
    ir_stmt *upd = st(C, add(ld(C, 1, ci), mul(ld(A, 1, add(mul(V(i), I(10)), V(k))),
                                               ld(B, 1, add(mul(V(k), I(7)), V(j))))),
                      1, ci);
    ir_buffer *args[] = {A, B, C};
    ir_buffer *g[] = {gbuf(A, "fa", IR_BUF_INPUT), gbuf(B, "fb", IR_BUF_PARAM),
                      gbuf(C, "fc", IR_BUF_OUTPUT)};
    func("mmflat", NULL, nest_build(&t, "C", NULL, upd), 3, args, g);
}

/* A 1x1 convolution with stride 2, y[0, f, p, q] += x[0, c, 2p, 2q] *
 * w[f, c, 0, 0]; x 1 x 4 x 7 x 7, w 6 x 4 x 1 x 1, output 4 x 4. */
static void build_conv1x1(const char *name, bool flat)
{
    ir_buffer *x = flat ? buf("x", IR_BUF_ARG, 1, (int64_t)196) : buf("x", IR_BUF_ARG, 4, (int64_t)1, (int64_t)4, (int64_t)7, (int64_t)7);
    ir_buffer *w = flat ? buf("w", IR_BUF_ARG, 1, (int64_t)24) : buf("w", IR_BUF_ARG, 4, (int64_t)6, (int64_t)4, (int64_t)1, (int64_t)1);
    ir_buffer *y = flat ? buf("y", IR_BUF_ARG, 1, (int64_t)96) : buf("y", IR_BUF_ARG, 4, (int64_t)1, (int64_t)6, (int64_t)4, (int64_t)4);
    nest t = {0};
    ir_var *f = nest_var(&t, "f", 6, IR_ITER_SPATIAL), *p = nest_var(&t, "p", 4, IR_ITER_SPATIAL);
    ir_var *q = nest_var(&t, "q", 4, IR_ITER_SPATIAL), *c = nest_var(&t, "c", 4, IR_ITER_REDUCE);
    ir_expr *xl, *wl, *yi[4];
    int ny;
    if (flat) {
        xl = ld(x, 1, add(add(mul(V(c), I(49)), mul(V(p), I(14))), mul(V(q), I(2))));
        wl = ld(w, 1, add(mul(V(f), I(4)), V(c)));
        yi[0] = add(add(mul(V(f), I(16)), mul(V(p), I(4))), V(q));
        ny = 1;
    } else {
        xl = ld(x, 4, I(0), V(c), mul(V(p), I(2)), mul(V(q), I(2)));
        wl = ld(w, 4, V(f), V(c), I(0), I(0));
        yi[0] = I(0), yi[1] = V(f), yi[2] = V(p), yi[3] = V(q);
        ny = 4;
    }
    ir_stmt *upd = ir_store(M, y, yi, ny, add(ir_load(M, y, yi, ny), mul(xl, wl)));
    ir_buffer *args[] = {x, w, y};
    char g0[64], g1[64], g2[64];
    snprintf(g0, sizeof g0, "%s.x", name);
    snprintf(g1, sizeof g1, "%s.weight", name);
    snprintf(g2, sizeof g2, "%s.y", name);
    ir_buffer *g[] = {gbuf(x, g0, IR_BUF_INPUT), gbuf(w, g1, IR_BUF_PARAM),
                      gbuf(y, g2, IR_BUF_OUTPUT)};
    func(name, NULL, nest_build(&t, "y", NULL, upd), 3, args, g);
}

/* A convolution x[n, c, p*2 + r - 1, q*2 + s - 1] (padding 1, stride 2,
 * select-guarded) * w[f, c, r, s]; x is nb x 3 x 8 x 8, w 4 x 3 x 3 x 3, so
 * the output is nb x 4 x 4 x 4.  `flat` writes the same with 1-D buffers
 * and linear indices, as the flatten pass leaves them. */
static void build_conv(const char *name, int64_t nb, bool flat)
{
    ir_buffer *x = flat ? buf("x", IR_BUF_ARG, 1, nb * 192) : buf("x", IR_BUF_ARG, 4, nb, (int64_t)3, (int64_t)8, (int64_t)8);
    ir_buffer *w = flat ? buf("w", IR_BUF_ARG, 1, (int64_t)108) : buf("w", IR_BUF_ARG, 4, (int64_t)4, (int64_t)3, (int64_t)3, (int64_t)3);
    ir_buffer *y = flat ? buf("y", IR_BUF_ARG, 1, nb * 64) : buf("y", IR_BUF_ARG, 4, nb, (int64_t)4, (int64_t)4, (int64_t)4);
    nest t = {0};
    ir_var *n = nest_var(&t, "n", nb, IR_ITER_SPATIAL), *f = nest_var(&t, "f", 4, IR_ITER_SPATIAL);
    ir_var *p = nest_var(&t, "p", 4, IR_ITER_SPATIAL), *q = nest_var(&t, "q", 4, IR_ITER_SPATIAL);
    ir_var *c = nest_var(&t, "c", 3, IR_ITER_REDUCE), *r = nest_var(&t, "r", 3, IR_ITER_REDUCE);
    ir_var *s = nest_var(&t, "s", 3, IR_ITER_REDUCE);
    ir_expr *h = sub(add(mul(V(p), I(2)), V(r)), I(1));
    ir_expr *wd = sub(add(mul(V(q), I(2)), V(s)), I(1));
    ir_expr *cond = ir_binary(M, IR_AND, ir_binary(M, IR_GE, h, I(0)),
                              ir_binary(M, IR_GE, wd, I(0)));
    ir_expr *xl, *wl, *yi[4];
    int ny;
    if (flat) {
        xl = ld(x, 1, add(add(add(mul(V(n), I(192)), mul(V(c), I(64))), mul(h, I(8))), wd));
        wl = ld(w, 1, add(add(add(mul(V(f), I(27)), mul(V(c), I(9))), mul(V(r), I(3))), V(s)));
        yi[0] = add(add(add(mul(V(n), I(64)), mul(V(f), I(16))), mul(V(p), I(4))), V(q));
        ny = 1;
    } else {
        xl = ld(x, 4, V(n), V(c), h, wd);
        wl = ld(w, 4, V(f), V(c), V(r), V(s));
        yi[0] = V(n), yi[1] = V(f), yi[2] = V(p), yi[3] = V(q);
        ny = 4;
    }
    ir_expr *prod = mul(ir_select(M, cond, xl, f32(0)), wl);
    ir_stmt *upd = ir_store(M, y, yi, ny, add(ir_load(M, y, yi, ny), prod));
    ir_stmt *init = ir_store(M, y, yi, ny, f32(0));
    ir_buffer *args[] = {x, w, y};
    char g0[64], g1[64], g2[64];
    snprintf(g0, sizeof g0, "%s.x", name);
    snprintf(g1, sizeof g1, "%s.weight", name);
    snprintf(g2, sizeof g2, "%s.y", name);
    ir_buffer *g[] = {gbuf(x, g0, IR_BUF_INPUT), gbuf(w, g1, IR_BUF_PARAM),
                      gbuf(y, g2, IR_BUF_OUTPUT)};
    func(name, NULL, nest_build(&t, "y", init, upd), 3, args, g);
}

/* Depthwise: y[0, c, p, q] += x[0, c, p + r - 1, q + s - 1] (padded) *
 * w[c, 0, r, s]; x 1 x 8 x 6 x 6, w 8 x 1 x 3 x 3. */
static void build_depthwise(void)
{
    ir_buffer *x = buf("x", IR_BUF_ARG, 4, (int64_t)1, (int64_t)8, (int64_t)6, (int64_t)6);
    ir_buffer *w = buf("w", IR_BUF_ARG, 4, (int64_t)8, (int64_t)1, (int64_t)3, (int64_t)3);
    ir_buffer *y = buf("y", IR_BUF_ARG, 4, (int64_t)1, (int64_t)8, (int64_t)6, (int64_t)6);
    nest t = {0};
    ir_var *c = nest_var(&t, "c", 8, IR_ITER_SPATIAL), *p = nest_var(&t, "p", 6, IR_ITER_SPATIAL);
    ir_var *q = nest_var(&t, "q", 6, IR_ITER_SPATIAL), *r = nest_var(&t, "r", 3, IR_ITER_REDUCE);
    ir_var *s = nest_var(&t, "s", 3, IR_ITER_REDUCE);
    ir_expr *h = sub(add(V(p), V(r)), I(1)), *wd = sub(add(V(q), V(s)), I(1));
    ir_expr *cond = ir_binary(M, IR_AND,
                              ir_binary(M, IR_AND, ir_binary(M, IR_GE, h, I(0)),
                                        ir_binary(M, IR_LT, h, I(6))),
                              ir_binary(M, IR_AND, ir_binary(M, IR_GE, wd, I(0)),
                                        ir_binary(M, IR_LT, wd, I(6))));
    ir_expr *prod = mul(ir_select(M, cond, ld(x, 4, I(0), V(c), h, wd), f32(0)),
                        ld(w, 4, V(c), I(0), V(r), V(s)));
    ir_stmt *upd = st(y, add(ld(y, 4, I(0), V(c), V(p), V(q)), prod), 4, I(0), V(c), V(p), V(q));
    ir_buffer *args[] = {x, w, y};
    ir_buffer *g[] = {gbuf(x, "dw.x", IR_BUF_INPUT), gbuf(w, "dw.weight", IR_BUF_PARAM),
                      gbuf(y, "dw.y", IR_BUF_OUTPUT)};
    func("dw", NULL, nest_build(&t, "y", st(y, f32(0), 4, I(0), V(c), V(p), V(q)), upd), 3,
         args, g);
}

/* Attention: S[h, i, j] += Q[h, i, d] * K[h, j, d], then
 * O[h, i, e] += P[h, i, j] * Vv[h, j, e]; 2 heads, 5 queries, 7 keys,
 * head dimension 4.  Both blocks are in one function. */
static void build_attention(void)
{
    ir_buffer *Q = buf("Q", IR_BUF_ARG, 3, (int64_t)2, (int64_t)5, (int64_t)4);
    ir_buffer *K = buf("K", IR_BUF_ARG, 3, (int64_t)2, (int64_t)7, (int64_t)4);
    ir_buffer *S = buf("S", IR_BUF_ARG, 3, (int64_t)2, (int64_t)5, (int64_t)7);
    ir_buffer *Vv = buf("V", IR_BUF_ARG, 3, (int64_t)2, (int64_t)7, (int64_t)4);
    ir_buffer *O = buf("O", IR_BUF_ARG, 3, (int64_t)2, (int64_t)5, (int64_t)4);
    nest t = {0};
    ir_var *h = nest_var(&t, "h", 2, IR_ITER_SPATIAL), *i = nest_var(&t, "i", 5, IR_ITER_SPATIAL);
    ir_var *j = nest_var(&t, "j", 7, IR_ITER_SPATIAL), *d = nest_var(&t, "d", 4, IR_ITER_REDUCE);
    ir_stmt *s1 = nest_build(&t, "S", st(S, f32(0), 3, V(h), V(i), V(j)),
                             st(S, add(ld(S, 3, V(h), V(i), V(j)),
                                       mul(ld(Q, 3, V(h), V(i), V(d)), ld(K, 3, V(h), V(j), V(d)))),
                                3, V(h), V(i), V(j)));
    nest u = {0};
    ir_var *h2 = nest_var(&u, "h2", 2, IR_ITER_SPATIAL), *i2 = nest_var(&u, "i2", 5, IR_ITER_SPATIAL);
    ir_var *e = nest_var(&u, "e", 4, IR_ITER_SPATIAL), *j2 = nest_var(&u, "j2", 7, IR_ITER_REDUCE);
    ir_stmt *s2 = nest_build(&u, "O", st(O, f32(0), 3, V(h2), V(i2), V(e)),
                             st(O, add(mul(ld(S, 3, V(h2), V(i2), V(j2)),
                                           ld(Vv, 3, V(h2), V(j2), V(e))),
                                       ld(O, 3, V(h2), V(i2), V(e))),
                                3, V(h2), V(i2), V(e)));
    ir_stmt *body[] = {s1, s2};
    ir_buffer *args[] = {Q, K, Vv, S, O};
    ir_buffer *g[] = {gbuf(Q, "q", IR_BUF_TEMP), gbuf(K, "k", IR_BUF_TEMP),
                      gbuf(Vv, "v", IR_BUF_TEMP), gbuf(S, "s", IR_BUF_TEMP),
                      gbuf(O, "o", IR_BUF_OUTPUT)};
    func("attn", NULL, ir_seq(M, body, 2), 5, args, g);
}

/* y[b, o] += W[o, i] * x[b, i] (weight first), then y2[b, o] = t + bias:
 * W is a PARAM when `param`, else an input; b 3, o 5, i 6.  With `bias`,
 * the result goes through a second, elementwise block. */
static void build_linear(const char *name, bool param, bool bias)
{
    ir_buffer *W = buf("W", IR_BUF_ARG, 2, (int64_t)5, (int64_t)6);
    ir_buffer *x = buf("x", IR_BUF_ARG, 2, (int64_t)3, (int64_t)6);
    ir_buffer *bv = buf("bias", IR_BUF_ARG, 1, (int64_t)5);
    ir_buffer *y = buf("y", IR_BUF_ARG, 2, (int64_t)3, (int64_t)5);
    ir_buffer *t = bias ? buf("t", IR_BUF_LOCAL, 2, (int64_t)3, (int64_t)5) : y;
    nest n1 = {0};
    ir_var *b = nest_var(&n1, "b", 3, IR_ITER_SPATIAL), *o = nest_var(&n1, "o", 5, IR_ITER_SPATIAL);
    ir_var *i = nest_var(&n1, "i", 6, IR_ITER_REDUCE);
    ir_stmt *mm = nest_build(&n1, "t", st(t, f32(0), 2, V(b), V(o)),
                             st(t, add(ld(t, 2, V(b), V(o)),
                                       mul(ld(W, 2, V(o), V(i)), ld(x, 2, V(b), V(i)))),
                                2, V(b), V(o)));
    ir_stmt *body = mm;
    if (bias) {
        nest n2 = {0};
        ir_var *b2 = nest_var(&n2, "b2", 3, IR_ITER_SPATIAL);
        ir_var *o2 = nest_var(&n2, "o2", 5, IR_ITER_SPATIAL);
        ir_stmt *ew = nest_build(&n2, "y", NULL,
                                 st(y, add(ld(t, 2, V(b2), V(o2)), ld(bv, 1, V(o2))), 2, V(b2),
                                    V(o2)));
        ir_stmt *two[] = {mm, ew};
        body = ir_alloc_stmt(M, t, ir_seq(M, two, 2));
    }
    ir_buffer *args[] = {W, x, bv, y};
    char g0[64], g1[64], g2[64], g3[64];
    snprintf(g0, sizeof g0, "%s.weight", name);
    snprintf(g1, sizeof g1, "%s.x", name);
    snprintf(g2, sizeof g2, "%s.bias", name);
    snprintf(g3, sizeof g3, "%s.y", name);
    ir_buffer *g[] = {gbuf(W, g0, param ? IR_BUF_PARAM : IR_BUF_INPUT),
                      gbuf(x, g1, IR_BUF_INPUT), gbuf(bv, g2, IR_BUF_PARAM),
                      gbuf(y, g3, IR_BUF_OUTPUT)};
    func(name, NULL, body, 4, args, g);
}

/* y[i, j] = max(x[i, j], 0) over 4 x 5. */
static void build_relu(const char *name)
{
    ir_buffer *x = buf("x", IR_BUF_ARG, 2, (int64_t)4, (int64_t)5);
    ir_buffer *y = buf("y", IR_BUF_ARG, 2, (int64_t)4, (int64_t)5);
    nest t = {0};
    ir_var *i = nest_var(&t, "i", 4, IR_ITER_SPATIAL), *j = nest_var(&t, "j", 5, IR_ITER_SPATIAL);
    ir_stmt *s = nest_build(&t, "y", NULL,
                            st(y, ir_binary(M, IR_MAX, ld(x, 2, V(i), V(j)), f32(0)), 2, V(i),
                               V(j)));
    ir_buffer *args[] = {x, y};
    char g0[64], g1[64];
    snprintf(g0, sizeof g0, "%s.x", name);
    snprintf(g1, sizeof g1, "%s.y", name);
    ir_buffer *g[] = {gbuf(x, g0, IR_BUF_INPUT), gbuf(y, g1, IR_BUF_OUTPUT)};
    func(name, NULL, s, 2, args, g);
}

/* y[j, i] = x[i, j] over 4 x 5: no arithmetic at all. */
static void build_transpose(void)
{
    ir_buffer *x = buf("x", IR_BUF_ARG, 2, (int64_t)4, (int64_t)5);
    ir_buffer *y = buf("y", IR_BUF_ARG, 2, (int64_t)5, (int64_t)4);
    nest t = {0};
    ir_var *i = nest_var(&t, "i", 4, IR_ITER_SPATIAL), *j = nest_var(&t, "j", 5, IR_ITER_SPATIAL);
    ir_stmt *s = nest_build(&t, "y", NULL, st(y, ld(x, 2, V(i), V(j)), 2, V(j), V(i)));
    ir_buffer *args[] = {x, y};
    ir_buffer *g[] = {gbuf(x, "tx", IR_BUF_INPUT), gbuf(y, "ty", IR_BUF_OUTPUT)};
    func("transpose", NULL, s, 2, args, g);
}

/* Softmax over rows of a 3 x 4 x with local temporaries m, e, s:
 *   m[r] max= x[r, j]; e[r, j] = exp(x[r, j] - m[r]); s[r] += e[r, j];
 *   y[r, j] = e[r, j] / s[r]
 * and, in a second function, the row sums of squares d[r] += x[r,j]*x[r,j]
 * (dot products: vector work, not a GEMM). */
static void build_softmax_and_dot(void)
{
    ir_buffer *x = buf("x", IR_BUF_ARG, 2, (int64_t)3, (int64_t)4);
    ir_buffer *y = buf("y", IR_BUF_ARG, 2, (int64_t)3, (int64_t)4);
    ir_buffer *m = buf("m", IR_BUF_LOCAL, 1, (int64_t)3);
    ir_buffer *e = buf("e", IR_BUF_LOCAL, 2, (int64_t)3, (int64_t)4);
    ir_buffer *s = buf("s", IR_BUF_LOCAL, 1, (int64_t)3);
    nest a = {0}, b = {0}, c = {0}, d = {0};
    ir_var *r1 = nest_var(&a, "r1", 3, IR_ITER_SPATIAL), *j1 = nest_var(&a, "j1", 4, IR_ITER_REDUCE);
    ir_stmt *s1 = nest_build(&a, "m", st(m, f32(-1e30), 1, V(r1)),
                             st(m, ir_binary(M, IR_MAX, ld(m, 1, V(r1)), ld(x, 2, V(r1), V(j1))), 1,
                                V(r1)));
    ir_var *r2 = nest_var(&b, "r2", 3, IR_ITER_SPATIAL), *j2 = nest_var(&b, "j2", 4, IR_ITER_SPATIAL);
    ir_expr *dx = sub(ld(x, 2, V(r2), V(j2)), ld(m, 1, V(r2)));
    ir_stmt *s2 = nest_build(&b, "e", NULL,
                             st(e, ir_call(M, IR_FN_EXP, &dx, 1), 2, V(r2), V(j2)));
    ir_var *r3 = nest_var(&c, "r3", 3, IR_ITER_SPATIAL), *j3 = nest_var(&c, "j3", 4, IR_ITER_REDUCE);
    ir_stmt *s3 = nest_build(&c, "s", st(s, f32(0), 1, V(r3)),
                             st(s, add(ld(s, 1, V(r3)), ld(e, 2, V(r3), V(j3))), 1, V(r3)));
    ir_var *r4 = nest_var(&d, "r4", 3, IR_ITER_SPATIAL), *j4 = nest_var(&d, "j4", 4, IR_ITER_SPATIAL);
    ir_stmt *s4 = nest_build(&d, "y", NULL,
                             st(y, ir_binary(M, IR_DIV, ld(e, 2, V(r4), V(j4)), ld(s, 1, V(r4))),
                                2, V(r4), V(j4)));
    ir_stmt *body[] = {s1, s2, s3, s4};
    ir_stmt *all = ir_alloc_stmt(M, m, ir_alloc_stmt(M, e, ir_alloc_stmt(M, s, ir_seq(M, body, 4))));
    ir_buffer *args[] = {x, y};
    ir_buffer *g[] = {gbuf(x, "sm.x", IR_BUF_INPUT), gbuf(y, "sm.y", IR_BUF_OUTPUT)};
    func("softmax", NULL, all, 2, args, g);

    ir_buffer *x2 = buf("x", IR_BUF_ARG, 2, (int64_t)3, (int64_t)4);
    ir_buffer *o = buf("o", IR_BUF_ARG, 1, (int64_t)3);
    nest n = {0};
    ir_var *r = nest_var(&n, "r", 3, IR_ITER_SPATIAL), *j = nest_var(&n, "j", 4, IR_ITER_REDUCE);
    ir_stmt *ss = nest_build(&n, "o", st(o, f32(0), 1, V(r)),
                             st(o, add(ld(o, 1, V(r)),
                                       mul(ld(x2, 2, V(r), V(j)), ld(x2, 2, V(r), V(j)))),
                                1, V(r)));
    ir_buffer *args2[] = {x2, o};
    ir_buffer *g2[] = {gbuf(x2, "sq.x", IR_BUF_INPUT), gbuf(o, "sq.o", IR_BUF_OUTPUT)};
    func("sumsq", NULL, ss, 2, args2, g2);
}

/* y[b, i, j] += A[i, k] * B[k, j], broadcast over b (in neither operand):
 * b 3, i 4, j 5, k 6. */
static void build_broadcast(void)
{
    ir_buffer *A = buf("A", IR_BUF_ARG, 2, (int64_t)4, (int64_t)6);
    ir_buffer *B = buf("B", IR_BUF_ARG, 2, (int64_t)6, (int64_t)5);
    ir_buffer *Y = buf("Y", IR_BUF_ARG, 3, (int64_t)3, (int64_t)4, (int64_t)5);
    nest t = {0};
    ir_var *b = nest_var(&t, "b", 3, IR_ITER_SPATIAL), *i = nest_var(&t, "i", 4, IR_ITER_SPATIAL);
    ir_var *j = nest_var(&t, "j", 5, IR_ITER_SPATIAL), *k = nest_var(&t, "k", 6, IR_ITER_REDUCE);
    ir_stmt *upd = st(Y, add(ld(Y, 3, V(b), V(i), V(j)),
                             mul(ld(A, 2, V(i), V(k)), ld(B, 2, V(k), V(j)))),
                      3, V(b), V(i), V(j));
    ir_buffer *args[] = {A, B, Y};
    ir_buffer *g[] = {gbuf(A, "ba", IR_BUF_INPUT), gbuf(B, "bb", IR_BUF_INPUT),
                      gbuf(Y, "by", IR_BUF_OUTPUT)};
    func("bcast", NULL, nest_build(&t, "Y", NULL, upd), 3, args, g);
}

/* A matmul tiled by a pass: loops io (2) and ii (4) bind vi = io*4 + ii;
 * the indices use the loop variables, not the iteration variable. */
static void build_tiled(void)
{
    ir_buffer *A = buf("A", IR_BUF_ARG, 2, (int64_t)8, (int64_t)3);
    ir_buffer *B = buf("B", IR_BUF_ARG, 2, (int64_t)3, (int64_t)2);
    ir_buffer *C = buf("C", IR_BUF_ARG, 2, (int64_t)8, (int64_t)2);
    ir_var *io = ir_var_new(M, "io", IR_I64), *ii = ir_var_new(M, "ii", IR_I64);
    ir_var *j = ir_var_new(M, "j", IR_I64), *k = ir_var_new(M, "k", IR_I64);
    ir_var *vi = ir_var_new(M, "vi", IR_I64), *vj = ir_var_new(M, "vj", IR_I64);
    ir_var *vk = ir_var_new(M, "vk", IR_I64);
    ir_expr *row = add(mul(V(io), I(4)), V(ii));
    ir_itervar it[3] = {{vi, IR_ITER_SPATIAL, 8, row}, {vj, IR_ITER_SPATIAL, 2, V(j)},
                        {vk, IR_ITER_REDUCE, 3, V(k)}};
    ir_expr *rowl = add(mul(V(io), I(4)), V(ii));
    ir_stmt *upd = st(C, add(ld(C, 2, rowl, V(j)), mul(ld(A, 2, rowl, V(k)), ld(B, 2, V(k), V(j)))),
                      2, rowl, V(j));
    ir_stmt *s = ir_block(M, "C", it, 3, NULL, upd);
    s = ir_for(M, k, I(0), I(3), IR_FOR_SERIAL, s);
    s = ir_for(M, j, I(0), I(2), IR_FOR_SERIAL, s);
    s = ir_for(M, ii, I(0), I(4), IR_FOR_SERIAL, s);
    s = ir_for(M, io, I(0), I(2), IR_FOR_SERIAL, s);
    ir_buffer *args[] = {A, B, C};
    ir_buffer *g[] = {gbuf(A, "ta", IR_BUF_INPUT), gbuf(B, "tb", IR_BUF_PARAM),
                      gbuf(C, "tc", IR_BUF_OUTPUT)};
    func("tiled", NULL, s, 3, args, g);
}

/* Stores outside any block: for i in 0..6: y[i] = x[i] * 2 (counted from
 * the loop), or for i in 0..len[0], a bound only the data knows. */
static void build_blockless(bool const_bound)
{
    ir_buffer *x = buf("x", IR_BUF_ARG, 1, (int64_t)6), *y = buf("y", IR_BUF_ARG, 1, (int64_t)6);
    int64_t one = 1;
    ir_buffer *len = ir_buffer_new(M, "len", IR_I64, 1, &one, IR_BUF_ARG);
    ir_var *i = ir_var_new(M, "i", IR_I64);
    ir_stmt *s = st(y, mul(ld(x, 1, V(i)), f32(2)), 1, V(i));
    s = ir_for(M, i, I(0), const_bound ? I(6) : ld(len, 1, I(0)), IR_FOR_SERIAL, s);
    ir_buffer *args[] = {x, y, len};
    ir_buffer *g[] = {gbuf(x, "bx", IR_BUF_INPUT), gbuf(y, "by", IR_BUF_OUTPUT),
                      gbuf(len, "blen", IR_BUF_INPUT)};
    func("scale", "net.te:3:5", s, 3, args, g);
}

/* ---------------------------------------------------------------- tests */

static void fresh(void)
{
    if (M)
        ir_module_free(M);
    M = ir_module_new("test");
}

static void test_matmul(void)
{
    group_begin("matmul: M, N, K from iteration variables");
    fresh();
    build_matmul();
    build_matmul_flat();
    acc_workload w;
    if (workload(&w)) {
        check_i("layers", w.nlayers, 2);
        check_gemm(&w.layers[0], "mm", 6, 7, 10, 1);
        check_b("no conv geometry", !w.layers[0].has_conv);
        check_i("func", w.func[0], 0);
        check_gemm(&w.layers[1], "mmflat", 6, 7, 10, 1);
        check_b("flat: no conv geometry", !w.layers[1].has_conv);
        acc_workload_free(&w);
    }
    group_end();
}

static void test_conv(void)
{
    group_begin("conv, stride 2, padding 1 (select-guarded): im2col GEMM and geometry");
    fresh();
    build_conv("conv", 1, false);
    build_conv("convflat", 1, true);
    build_conv("conv2img", 2, false);
    build_conv1x1("down", false);
    build_conv1x1("downflat", true);
    acc_workload w;
    if (workload(&w)) {
        check_i("layers", w.nlayers, 5);
        /* M = N*P*Q = 1*4*4, N = F = 4, K = C*R*S = 27; ifmap = 3*2 + 3. */
        check_gemm(&w.layers[0], "conv", 16, 4, 27, 1);
        check_conv(&w.layers[0], 9, 9, 3, 3, 3, 4, 2, 2);
        check_gemm(&w.layers[1], "convflat", 16, 4, 27, 1);
        check_conv(&w.layers[1], 9, 9, 3, 3, 3, 4, 2, 2);
        /* Two images: M = 2*4*4; SCALE-Sim's conv rows have no batch. */
        check_gemm(&w.layers[2], "conv2img", 32, 4, 27, 1);
        check_b("no geometry with 2 images", !w.layers[2].has_conv);
        /* 1x1, stride 2: the stride shows in an unflattened index (ifmap
         * 3*2 + 1); a flat index gets the equivalent 4x4, stride 1. */
        check_gemm(&w.layers[3], "down", 16, 6, 4, 1);
        check_conv(&w.layers[3], 7, 7, 1, 1, 4, 6, 2, 2);
        check_gemm(&w.layers[4], "downflat", 16, 6, 4, 1);
        check_conv(&w.layers[4], 4, 4, 1, 1, 4, 6, 1, 1);
        acc_workload_free(&w);
    }
    group_end();
}

static void test_depthwise(void)
{
    group_begin("depthwise conv: per-channel GEMMs (batch = channels)");
    fresh();
    build_depthwise();
    acc_workload w;
    if (workload(&w)) {
        check_i("layers", w.nlayers, 1);
        check_gemm(&w.layers[0], "dw", 36, 1, 9, 8);
        check_conv(&w.layers[0], 8, 8, 3, 3, 8, 8, 1, 1);
        acc_workload_free(&w);
    }
    group_end();
}

static void test_attention(void)
{
    group_begin("attention: batched matmuls, heads as batch, named by block; broadcast");
    fresh();
    build_attention();
    build_broadcast();
    acc_workload w;
    if (workload(&w)) {
        check_i("layers", w.nlayers, 3);
        check_gemm(&w.layers[0], "attn.S", 5, 7, 4, 2);   /* Q K^T */
        check_gemm(&w.layers[1], "attn.O", 5, 4, 7, 2);   /* P V (sum written backwards) */
        check_gemm(&w.layers[2], "bcast", 4, 5, 6, 3);    /* b in neither operand: batch */
        acc_workload_free(&w);
    }
    group_end();
}

static void test_operand_order(void)
{
    group_begin("operand order: the PARAM operand is the weight (N side)");
    fresh();
    build_linear("fcp", true, false);
    build_linear("fci", false, false);
    acc_workload w;
    if (workload(&w)) {
        check_i("layers", w.nlayers, 2);
        check_gemm(&w.layers[0], "fcp", 3, 5, 6, 1);   /* W[o,i] is the weight */
        check_gemm(&w.layers[1], "fci", 5, 3, 6, 1);   /* no PARAM: second operand */
        acc_workload_free(&w);
    }
    group_end();
}

static void test_vector(void)
{
    group_begin("vector layers: element operations and DRAM bytes");
    fresh();
    build_relu("relu");
    build_softmax_and_dot();
    build_linear("fc", true, true);
    build_blockless(true);
    build_transpose();
    acc_workload w;
    if (workload(&w)) {
        check_i("layers", w.nlayers, 7);
        /* 20 elements, one max each; 20 read and 20 written, 4 bytes each. */
        check_vector(&w.layers[0], "relu", 20, 80, 80);
        /* max 12 + (sub, exp) 24 + add 12 + div 12 operations; reads
         * x 12 + (x 12, m 3) + e 12 + (e 12, s 3), writes m 3 + e 12 + s 3
         * + y 12 elements. */
        check_vector(&w.layers[1], "softmax", 60, 54 * 4, 30 * 4);
        /* Dot products (M = N = 1): mul and add per element; x read once
         * (12 elements), o written 3. */
        check_vector(&w.layers[2], "sumsq", 24, 12 * 4, 3 * 4);
        check_gemm(&w.layers[3], "fc", 3, 5, 6, 1);
        /* bias add: 15 adds; reads t 15 + bias 5, writes 15. */
        check_vector(&w.layers[4], "fc.vector", 15, 20 * 4, 15 * 4);
        /* a store outside blocks, in a constant loop: 6 multiplies. */
        check_vector(&w.layers[5], "scale", 6, 6 * 4, 6 * 4);
        /* a copy has no FLOPs but still one operation per element. */
        check_vector(&w.layers[6], "transpose", 20, 20 * 4, 20 * 4);
        for (int i = 0; i < 7; i++)
            check_i("func of layer", w.func[i], i < 3 ? i : i <= 4 ? 3 : i - 1);
        acc_workload_free(&w);
    }
    group_end();
}

static void test_tiled(void)
{
    group_begin("tiled loops: loop variables in indices count for their iteration variable");
    fresh();
    build_tiled();
    acc_workload w;
    if (workload(&w)) {
        check_i("layers", w.nlayers, 1);
        check_gemm(&w.layers[0], "tiled", 8, 2, 3, 1);
        acc_workload_free(&w);
    }
    group_end();
}

/* Runs f with diagnostics into a string. */
static char *diag_text(bool (*f)(diag *), bool *ok)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    diag d;
    diag_init(&d, out);
    *ok = f(&d);
    diag_fini(&d);
    fclose(out);
    return text;
}

static bool extract(diag *d)
{
    acc_workload w;
    bool ok = acc_workload_from_module(M, &w, d);
    if (ok)
        acc_workload_free(&w);
    return ok;
}

static void test_errors(void)
{
    group_begin("errors: a loop bound that depends on the data");
    fresh();
    build_blockless(false);
    bool ok;
    char *t = diag_text(extract, &ok);
    check_b("fails", !ok);
    check_s("message", t,
            "net.te:3:5: error: layer scale: how often a statement runs depends on the data "
            "(a loop bound or condition loads memory); the accelerator model needs the counts "
            "of a run: profile it (--profile --accel)\n");
    free(t);
    group_end();
}

static void test_counts(void)
{
    group_begin("a loop bound that depends on the data: the work of a run's counts");
    fresh();
    build_blockless(false);
    diag d;
    diag_init(&d, stdout);
    pass_stats *ps = pass_instrument(M, &d) ? pass_analyze(M, NULL, &d) : NULL;
    check_b("instrumented and analyzed", ps != NULL);
    if (ps) {
        /* the store ran 4 times (len = 4): its site is the counted one */
        uint64_t *counts = calloc((size_t)ps->nsites, sizeof *counts);
        int dynamic = 0;
        for (int i = 0; i < ps->nsites; i++)
            if (!ps->sites[i].is_static && ps->sites[i].counted) {
                counts[ps->sites[i].id] = 4;
                dynamic++;
            }
        check_i("one counted site", dynamic, 1);
        acc_workload w;
        check_b("derived", acc_workload_from_analysis(ps, counts, &w, &d));
        if (d.nerrors == 0) {
            check_i("layers", w.nlayers, 1);
            /* 4 multiplies; x read 4 times (16 bytes) and len once, as the
             * loop is entered (8 bytes); y written 4 times (16 bytes) */
            check_vector(&w.layers[0], "scale", 4, 24, 16);
            acc_workload_free(&w);
        }
        free(counts);
        pass_stats_free(ps);
    }
    diag_fini(&d);
    group_end();
}

static acc_config cfg;

static void test_model_module(void)
{
    group_begin("acc_model_module: per-function sums and network total");
    fresh();
    build_linear("fc", true, true);
    build_relu("act");
    acc_config_default(&cfg);
    acc_options o = {0};
    acc_result *pf = NULL, total;
    diag d;
    diag_init(&d, stdout);
    bool ok = acc_model_module(M, &cfg, &o, &pf, &total, &d);
    check_b("succeeds", ok);
    acc_workload w;
    if (ok && acc_workload_from_module(M, &w, &d)) {
        acc_result rs[3], t;
        char err[256];
        check_b("model", acc_model_network(&cfg, &o, w.layers, w.nlayers, rs, &t, NULL, err,
                                           sizeof err));
        check_i("layers", w.nlayers, 3);
        check_s("fc name", pf[0].name, "fc");
        check_i("fc kind", pf[0].kind, ACC_LAYER_GEMM);
        check_i("fc M", pf[0].M, 3);
        check_i("fc N", pf[0].N, 5);
        check_i("fc K", pf[0].K, 6);
        check_i("fc cycles", pf[0].total_cycles, rs[0].total_cycles + rs[1].total_cycles);
        check_i("fc macs", pf[0].macs, 90);
        check_i("fc dram reads", acc_result_dram_reads(&pf[0]),
                acc_result_dram_reads(&rs[0]) + acc_result_dram_reads(&rs[1]));
        check_s("act name", pf[1].name, "act");
        check_i("act kind", pf[1].kind, ACC_LAYER_VECTOR);
        check_i("act cycles", pf[1].total_cycles, rs[2].total_cycles);
        check_i("total cycles", total.total_cycles, t.total_cycles);
        check_i("total = sum", total.total_cycles, pf[0].total_cycles + pf[1].total_cycles);
        check_b("total edp", total.edp == total.energy_pj * total.latency_us);
        acc_workload_free(&w);
    }
    free(pf);
    diag_fini(&d);
    group_end();
}

static bool read_file(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t k = fread(buf, 1, n - 1, f);
    buf[k] = '\0';
    fclose(f);
    return true;
}

static void test_cli(void)
{
    group_begin("acc_cli_run_module: table, topology export, CSV and JSON reports");
    fresh();
    build_conv("conv", 1, false);
    build_relu("relu");
    build_matmul();
    char cfgpath[512], topo[512], csv[512], json[512], text[8192];
    snprintf(cfgpath, sizeof cfgpath, "%s/a.cfg", tmpdir);
    snprintf(topo, sizeof topo, "%s/net.csv", tmpdir);
    snprintf(csv, sizeof csv, "%s/r.csv", tmpdir);
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    acc_config_default(&cfg);
    FILE *f = fopen(cfgpath, "w");
    acc_config_write(f, &cfg);
    fclose(f);
    acc_cli_options o = {.config = cfgpath, .export_topology = topo, .report = csv};
    char *out = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&out, &len);
    diag d;
    diag_init(&d, stdout);
    check_b("csv run", acc_cli_run_module(M, &o, mem, &d));
    fclose(mem);
    check_b("table names conv", out && strstr(out, "\nconv "));
    check_b("table has total", out && strstr(out, "\ntotal "));
    free(out);
    /* The matmul has no geometry and is written as a 1x1 convolution over a
     * 1 x M image; the vector layer is skipped. */
    check_b("topology", read_file(topo, text, sizeof text));
    check_s("topology text", text,
            "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
            "Num Filter, Stride Height, Stride Width,\n"
            "conv, 9, 9, 3, 3, 3, 4, 2, 2,\n"
            "mm, 1, 6, 1, 1, 10, 7, 1, 1,\n");
    acc_layer *ls = NULL;
    int n = 0;
    char err[256];
    check_b("topology reads back", acc_read_topology(topo, ACC_TOPO_AUTO, &ls, &n, err, sizeof err));
    if (n == 2) {
        check_gemm(&ls[0], "conv", 16, 4, 27, 1);
        check_gemm(&ls[1], "mm", 6, 7, 10, 1);
    }
    acc_layers_free(ls, n);
    check_b("csv report", read_file(csv, text, sizeof text));
    check_b("csv header", strncmp(text, "name,kind,M,N,K,batch,dataflow,tiles,", 37) == 0);
    check_b("csv relu row", strstr(text, "\nrelu,vector,") != NULL);
    check_b("csv total row", strstr(text, "\ntotal,total,") != NULL);
    o.report = json;
    o.export_topology = topo;
    o.export_format = "gemm";
    check_b("json run", acc_cli_run_module(M, &o, NULL, &d));
    check_b("json report", read_file(json, text, sizeof text));
    check_b("json layers", strstr(text, "\"layers\": [") && strstr(text, "\"name\": \"mm\""));
    check_b("gemm topology", read_file(topo, text, sizeof text));
    check_s("gemm topology text", text,
            "Layer name, M, N, K,\nconv, 16, 4, 27,\nmm, 6, 7, 10,\n");
    check_i("no errors", d.nerrors, 0);
    diag_fini(&d);
    group_end();
}

static bool bad_options(diag *d)
{
    acc_cli_options o = {.config = "x.cfg", .report = "r.txt", .search = "fast",
                         .export_format = "onnx", .sweep_arrays = "8x8"};
    return acc_cli_check_options(&o, d);
}

static void test_cli_errors(void)
{
    group_begin("acc_cli_check_options: usage errors");
    bool ok;
    char *t = diag_text(bad_options, &ok);
    check_b("fails", !ok);
    check_s("messages", t,
            "tec: error: bad --search 'fast' (expected none, dram or edp)\n"
            "tec: error: --accel-report needs a file name ending in .csv or .json, not 'r.txt'\n"
            "tec: error: bad --export-format 'onnx' (expected conv or gemm)\n"
            "tec: error: --sweep-out, --sweep-arrays, --sweep-dataflows, --sweep-sram and "
            "--sweep-max-area need --sweep\n");
    free(t);
    group_end();
}

static bool file_nonempty(const char *dir, const char *name)
{
    char p[600];
    struct stat s;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &s) == 0 && s.st_size > 0;
}

static bool on_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (!path)
        return false;
    char *dup = strdup(path), *save = NULL;
    bool found = false;
    for (char *dir = strtok_r(dup, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, prog);
        found = access(p, X_OK) == 0;
    }
    free(dup);
    return found;
}

static void test_plot(void)
{
    group_begin("acc_plot_sweep: data, script, charts; a clear error without gnuplot");
    acc_result rs[4] = {0}, tot[2] = {0};
    for (int i = 0; i < 4; i++) {
        rs[i].latency_us = 1 + i;
        rs[i].energy_pj = 10 * (1 + i);
        rs[i].edp = rs[i].latency_us * rs[i].energy_pj;
    }
    tot[0].latency_us = 3, tot[0].energy_pj = 30, tot[0].edp = 90;
    tot[1].latency_us = 7, tot[1].energy_pj = 70, tot[1].edp = 490;
    const char *labels[] = {"8x8 os 16kB", "8x8 ws 16kB"}, *names[] = {"conv1", "it's"};
    acc_plot_input in = {2, 2, labels, names, rs, tot};
    char dir[512], err[1024] = "", text[4096];
    snprintf(dir, sizeof dir, "%s/sweep", tmpdir);
    mkdir(dir, 0777);
    bool have = on_path("gnuplot");
    char *path = strdup(getenv("PATH") ? getenv("PATH") : "");
    setenv("PATH", "/nonexistent", 1);
    check_b("fails without gnuplot", !acc_plot_sweep(dir, &in, err, sizeof err));
    check_b("names gnuplot", strstr(err, "tec: error: cannot run gnuplot: ") == err);
    check_b("says how to install", strstr(err, "gnuplot-nox") != NULL);
    setenv("PATH", path, 1);
    free(path);
    char p[600];
    snprintf(p, sizeof p, "%s/sweep_layers.dat", dir);
    check_b("layers data", read_file(p, text, sizeof text));
    check_b("layers rows", strstr(text, "\n1 1 4 40 160\n") != NULL);
    snprintf(p, sizeof p, "%s/sweep_configs.dat", dir);
    check_b("configs data", read_file(p, text, sizeof text));
    check_b("configs rows", strstr(text, "\n1 \"8x8 ws 16kB\" 7 70 490\n") != NULL);
    snprintf(p, sizeof p, "%s/sweep.gp", dir);
    check_b("script", read_file(p, text, sizeof text));
    check_b("quoted layer name", strstr(text, "'it''s' 1") != NULL);
    if (have) {
        check_b("draws with gnuplot", acc_plot_sweep(dir, &in, err, sizeof err));
        if (err[0] && group_fail)
            printf("  %s\n", err);
        static const char *charts[] = {"configs_latency", "configs_energy", "configs_edp",
                                       "layers_latency", "layers_energy", "layers_edp"};
        for (int i = 0; i < 6; i++)
            for (int k = 0; k < 2; k++) {
                char name[64];
                snprintf(name, sizeof name, "%s.%s", charts[i], k ? "svg" : "png");
                check_b(name, file_nonempty(dir, name));
            }
    } else {
        printf("  (gnuplot not on PATH: charts not drawn)\n");
    }
    group_end();
}

static void rm_rf(const char *dir)
{
    /* Only the files this test wrote, by name. */
    static const char *files[] = {"a.cfg", "net.csv", "r.csv", "r.json"};
    static const char *sweep[] = {"sweep_configs.dat", "sweep_layers.dat", "sweep.gp",
                                  "gnuplot.log", "configs_latency.png", "configs_energy.png",
                                  "configs_edp.png", "layers_latency.png", "layers_energy.png",
                                  "layers_edp.png", "configs_latency.svg", "configs_energy.svg",
                                  "configs_edp.svg", "layers_latency.svg", "layers_energy.svg",
                                  "layers_edp.svg"};
    char p[600];
    for (size_t i = 0; i < sizeof sweep / sizeof sweep[0]; i++) {
        snprintf(p, sizeof p, "%s/sweep/%s", dir, sweep[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/sweep", dir);
    rmdir(p);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/tec-test-workload-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_matmul();
    test_conv();
    test_depthwise();
    test_attention();
    test_operand_order();
    test_vector();
    test_tiled();
    test_errors();
    test_counts();
    test_model_module();
    test_cli();
    test_cli_errors();
    test_plot();
    if (M)
        ir_module_free(M);
    rm_rf(tmpdir);
    printf("%d passed, %d failed\n", passes, failures);
    return test_exit("test_workload");
}
