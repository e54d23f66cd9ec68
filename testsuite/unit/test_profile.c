/* testsuite/unit/test_profile.c — the cost analysis, the instrument pass, the
 * profiling runtime and the report rows.
 *
 * Expected numbers are computed by hand in the comments next to them.
 * Profiled runs use the IR interpreter, which calls the same hooks as
 * compiled kernels.  Prints one line per check group; exits 1 on failure.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/diag.h"
#include "ir/ir.h"
#include "passes/analyze.h"
#include "passes/passes.h"
#include "runtime/exec.h"
#include "runtime/profile.h"
#include "testsuite/unit/test.h"

#define CHECK_EQ(a, b)                                                             \
    do {                                                                           \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
        if (a_ != b_) {                                                            \
            printf("FAIL %s:%d: %s == %llu, expected %s == %llu\n", __FILE__, __LINE__, \
                   #a, a_, #b, b_);                                                \
            failures++;                                                            \
        }                                                                          \
    } while (0)

static void report(const char *what, int before)
{
    printf("%s %s\n", failures == before ? "ok  " : "FAIL", what);
}

/* ---------------------------------------------------------------- helpers */

static ir_module *parse(const char *name, const char *text)
{
    diag d;
    diag_init(&d, stdout);
    ir_module *m = ir_parse(name, text, strlen(text), &d);
    if (m && !ir_verify(m, NULL, &d)) {
        ir_module_free(m);
        m = NULL;
    }
    diag_fini(&d);
    return m;
}

static pass_stats *analyze(const ir_module *m)
{
    diag d;
    diag_init(&d, stdout);
    pass_stats *st = pass_analyze(m, NULL, &d);
    diag_fini(&d);
    return st;
}

/* Totals of function f per run (static counts, or counts when given). */
static pass_totals totals(const pass_stats *st, int f, const uint64_t *counts, int member,
                          uint64_t *loads, uint64_t *stores)
{
    pass_totals t = {.loads = loads, .stores = stores};
    diag d;
    diag_init(&d, stdout);
    CHECK(pass_func_totals(st, f, counts, member, &t, &d));
    diag_fini(&d);
    return t;
}

static int buf_index(const pass_stats *st, int f, const char *name)
{
    for (int i = 0; i < st->funcs[f].nbufs; i++)
        if (strcmp(st->funcs[f].bufs[i].buf->name, name) == 0)
            return i;
    return -1;
}

static bool run_pass(ir_module *m, const char *pipeline)
{
    diag d;
    diag_init(&d, stdout);
    pass_options o = {.verify_each = true};
    bool ok = pass_run_pipeline(m, pipeline, &o, &d);
    diag_fini(&d);
    return ok;
}

/* A profiled, interpreted run: iface, buffers (default data, then `fill`
 * may overwrite some), the profile and `repeat` measured runs. */
typedef struct prun {
    rt_iface iface;
    rt_run *run;
    rt_profile *prof;
    diag d;
} prun;

static bool prun_start(prun *p, ir_module *m, int repeat, int pad_to,
                       void (*fill)(rt_run *r, const ir_module *m))
{
    memset(p, 0, sizeof *p);
    diag_init(&p->d, stdout);
    rt_run_options ro = {0};
    rt_profile_options po = {.repeat = repeat, .pad_to = pad_to};
    if (!rt_iface_record(m, &p->iface, &p->d) || !(p->run = rt_run_new(m, &p->iface, &ro, &p->d)))
        return false;
    if (fill)
        fill(p->run, m);
    if (!(p->prof = rt_profile_new(m, NULL, &po, &p->d)))
        return false;
    return rt_profile_run(p->prof, p->run, &ro, &p->d);
}

static void prun_end(prun *p)
{
    rt_profile_free(p->prof);
    rt_run_free(p->run);
    rt_iface_free(&p->iface);
    diag_fini(&p->d);
}

/* ---------------------------------------------------------------- matmul, built by hand */

/* C[i, j] += A[i, k] * B[k, j] with M = 4, K = 5, N = 3, as one block with
 * an init, built with the ir.h builder. */
static ir_module *build_matmul(void)
{
    ir_module *m = ir_module_new("mm");
    int64_t sa[2] = {4, 5}, sb[2] = {5, 3}, sc[2] = {4, 3};
    ir_buffer *A = ir_buffer_new(m, "A", IR_F32, 2, sa, IR_BUF_ARG);
    ir_buffer *B = ir_buffer_new(m, "B", IR_F32, 2, sb, IR_BUF_ARG);
    ir_buffer *C = ir_buffer_new(m, "C", IR_F32, 2, sc, IR_BUF_ARG);
    ir_func *f = ir_func_new(m, "mm");
    ir_func_add_param(m, f, A);
    ir_func_add_param(m, f, B);
    ir_func_add_param(m, f, C);
    ir_func_set_attr(m, f, "layer", "mm");
    ir_func_set_attr(m, f, "op", "matmul");
    ir_var *i = ir_var_new(m, "i", IR_I64), *j = ir_var_new(m, "j", IR_I64),
           *k = ir_var_new(m, "k", IR_I64);
    ir_var *vi = ir_var_new(m, "vi", IR_I64), *vj = ir_var_new(m, "vj", IR_I64),
           *vk = ir_var_new(m, "vk", IR_I64);
    ir_itervar it[3] = {{vi, IR_ITER_SPATIAL, 4, ir_varref(m, i)},
                        {vj, IR_ITER_SPATIAL, 3, ir_varref(m, j)},
                        {vk, IR_ITER_REDUCE, 5, ir_varref(m, k)}};
    ir_expr *cij[2] = {ir_varref(m, vi), ir_varref(m, vj)};
    ir_expr *aik[2] = {ir_varref(m, vi), ir_varref(m, vk)};
    ir_expr *bkj[2] = {ir_varref(m, vk), ir_varref(m, vj)};
    ir_stmt *init = ir_store(m, C, cij, 2, ir_float(m, 0, IR_F32));
    ir_expr *prod = ir_binary(m, IR_MUL, ir_load(m, A, aik, 2), ir_load(m, B, bkj, 2));
    ir_expr *cij2[2] = {ir_varref(m, vi), ir_varref(m, vj)};
    ir_stmt *upd = ir_store(m, C, cij2, 2, ir_binary(m, IR_ADD, ir_load(m, C, cij, 2), prod));
    ir_stmt *blk = ir_block(m, "C_update", it, 3, init, upd);
    ir_stmt *body = ir_for(m, i, ir_int(m, 0), ir_int(m, 4), IR_FOR_SERIAL,
                           ir_for(m, j, ir_int(m, 0), ir_int(m, 3), IR_FOR_SERIAL,
                                  ir_for(m, k, ir_int(m, 0), ir_int(m, 5), IR_FOR_SERIAL, blk)));
    f->body = body;
    ir_buffer *gA = ir_buffer_new(m, "A", IR_F32, 2, sa, IR_BUF_INPUT);
    ir_buffer *gB = ir_buffer_new(m, "B", IR_F32, 2, sb, IR_BUF_PARAM);
    ir_buffer *gC = ir_buffer_new(m, "C", IR_F32, 2, sc, IR_BUF_OUTPUT);
    gA->has_init = gB->has_init = true;
    gA->init_lo = gB->init_lo = -1;
    gA->init_hi = gB->init_hi = 1;
    ir_graph_add_buffer(m, gA);
    ir_graph_add_buffer(m, gB);
    ir_graph_add_buffer(m, gC);
    ir_buffer *args[3] = {gA, gB, gC};
    ir_graph_add_call(m, f, args, 3);
    return m;
}

static void test_matmul(void)
{
    int before = failures;
    ir_module *m = build_matmul();
    diag d;
    diag_init(&d, stdout);
    CHECK(ir_verify(m, NULL, &d));
    diag_fini(&d);
    pass_stats *st = analyze(m);
    CHECK(st != NULL);
    if (st) {
        uint64_t loads[4], stores[4];
        pass_totals t = totals(st, 0, NULL, -1, loads, stores);
        CHECK_EQ(t.macs, 4 * 3 * 5);            /* M*N*K = 60 */
        CHECK_EQ(t.flops, 2 * 4 * 3 * 5);       /* one + and one * per MAC = 120 */
        CHECK_EQ(loads[buf_index(st, 0, "A")], 60);
        CHECK_EQ(loads[buf_index(st, 0, "B")], 60);
        CHECK_EQ(loads[buf_index(st, 0, "C")], 60);   /* the accumulator */
        CHECK_EQ(stores[buf_index(st, 0, "C")], 60 + 12);   /* updates + 4*3 inits */
        CHECK_EQ(t.load_bytes, 180 * 4);
        CHECK(st->funcs[0].is_static);
        CHECK_EQ(st->nsites, 2);
        const pass_site *u = &st->sites[1];
        CHECK(u->gemm.valid && u->gemm.m == 4 && u->gemm.n == 3 && u->gemm.k == 5 &&
              u->gemm.batch == 1);
        CHECK(u->plan.anchor == NULL && u->plan.inner == 60);   /* once, at function entry */
        CHECK(st->funcs[0].bufs[buf_index(st, 0, "C")].write_first);
    }
    pass_stats_free(st);

    /* Padded to multiples of 4: M 4, N 3 -> 4, K 5 -> 8: 4*4*8 = 128 MACs;
     * the weight B [K, N] = [5, 3] becomes 8 x 4 = 32 floats. */
    prun p;
    CHECK(prun_start(&p, m, 1, 4, NULL));
    rt_rows rows;
    if (p.prof && rt_rows_build(p.prof, &rows, &p.d)) {
        const rt_row *t = &rows.rows[rows.n - 1];
        CHECK(t->kind == RT_ROW_TOTAL);
        CHECK_EQ(t->macs, 128);
        CHECK_EQ(t->flops, 256);
        CHECK_EQ(t->params, 32);
        CHECK_EQ(t->param_bytes, 128);
        CHECK_EQ(t->act_bytes, 4 * 4 * 4);      /* C [4, 3] -> [4, 4] */
        rt_rows_free(&rows);
    } else {
        CHECK(!"rows");
    }
    prun_end(&p);
    ir_module_free(m);
    report("matmul: MACs M*N*K, FLOPs 2*M*N*K, loads, stores, GEMM dims, padding", before);
}

/* ---------------------------------------------------------------- conv with padding */

static const char *conv_tir =
    "module \"conv\"\n"
    "func @conv(x: f32[1, 2, 5, 5], w: f32[3, 2, 3, 3], y: f32[1, 3, 5, 5]) "
    "attrs(layer = \"conv1\", op = \"conv2d\") {\n"
    "  for f in 0..3 {\n"
    "    for p in 0..5 {\n"
    "      for q in 0..5 {\n"
    "        for c in 0..2 {\n"
    "          for r in 0..3 {\n"
    "            for s in 0..3 {\n"
    "              block y_update(vn: spatial[1] = 0, vf: spatial[3] = f, vp: spatial[5] = p, "
    "vq: spatial[5] = q, vc: reduce[2] = c, vr: reduce[3] = r, vs: reduce[3] = s) "
    "reads(y, x, w) writes(y) {\n"
    "                init {\n"
    "                  y[vn, vf, vp, vq] = 0.0f\n"
    "                }\n"
    "                y[vn, vf, vp, vq] = y[vn, vf, vp, vq] + select(vp + vr - 1 >= 0 && "
    "vp + vr - 1 < 5 && vq + vs - 1 >= 0 && vq + vs - 1 < 5, x[vn, vc, vp + vr - 1, "
    "vq + vs - 1], 0.0f) * w[vf, vc, vr, vs]\n"
    "              }\n"
    "            }\n"
    "          }\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "graph {\n"
    "  input x: f32[1, 2, 5, 5] init(-1, 1)\n"
    "  param conv1.weight: f32[3, 2, 3, 3] init(-0.5, 0.5)\n"
    "  output y: f32[1, 3, 5, 5]\n"
    "  call @conv(x, conv1.weight, y)\n"
    "}\n";

static void test_conv(void)
{
    int before = failures;
    ir_module *m = parse("conv.tir", conv_tir);
    CHECK(m != NULL);
    pass_stats *st = m ? analyze(m) : NULL;
    CHECK(st != NULL);
    if (st) {
        uint64_t loads[4], stores[4];
        pass_totals t = totals(st, 0, NULL, -1, loads, stores);
        /* N*F*P*Q*C*R*S = 1*3*5*5*2*3*3 = 1350, padding positions included
         * (PyTorch's convention). */
        CHECK_EQ(t.macs, 1350);
        CHECK_EQ(t.flops, 2700);
        /* x is read only where p+r-1 is inside [0, 5): r = 0 skips p = 0,
         * r = 2 skips p = 4, so 4 + 5 + 4 = 13 (p, r) pairs per axis, 13*13
         * = 169 per (f, c), times 3*2 = 1014. */
        CHECK_EQ(loads[buf_index(st, 0, "x")], 1014);
        CHECK_EQ(loads[buf_index(st, 0, "w")], 1350);
        CHECK_EQ(stores[buf_index(st, 0, "y")], 1350 + 75);   /* inits: 3*5*5 */
        CHECK(!t.approx);
        CHECK_EQ(st->sites[0].count, 75);
        const pass_gemm *g = &st->sites[1].gemm;
        /* im2col: M = N*P*Q = 25, N = F = 3, K = C*R*S = 18 */
        CHECK(g->valid && g->m == 25 && g->n == 3 && g->k == 18 && g->batch == 1);
    }
    pass_stats_free(st);

    /* Forced dynamic counting: the counters sit inside the loop nest and
     * the interpreted run must count exactly what the analysis says. */
    if (m) {
        CHECK(run_pass(m, "instrument-dyn"));
        char *text = ir_module_to_string(m);
        CHECK(text && strstr(text, "          for r in 0..3 {\n            evaluate tec_prof_count(1, 3)\n"));
        CHECK(text && strstr(text, "init {\n                  evaluate tec_prof_count(0, 1)\n"));
        free(text);
        prun p;
        CHECK(prun_start(&p, m, 2, 0, NULL));
        if (p.prof) {
            CHECK_EQ(p.prof->run_counts[0], 75);
            CHECK_EQ(p.prof->run_counts[1], 1350);
            CHECK_EQ(p.prof->run_counts[p.prof->nsites + 1], 1350);   /* second run */
            int errors = p.d.nerrors;
            CHECK(rt_profile_check(p.prof, &p.d));
            CHECK_EQ(p.d.nerrors, errors);
        }
        prun_end(&p);
    }
    ir_module_free(m);
    report("conv with padding: MACs, guarded loads, init count, im2col dims, dynamic = static",
           before);
}

/* ---------------------------------------------------------------- softmax */

static const char *softmax_tir =
    "module \"softmax\"\n"
    "func @softmax(x: f32[4, 10], y: f32[4, 10]) attrs(layer = \"sm\", op = \"softmax\") {\n"
    "  alloc m: f32[4] global {\n"
    "    alloc e: f32[4, 10] global {\n"
    "      alloc s: f32[4] stack {\n"
    "        for r in 0..4 {\n"
    "          for j in 0..10 {\n"
    "            block m_update(vr: spatial[4] = r, vj: reduce[10] = j) reads(m, x) writes(m) {\n"
    "              init {\n"
    "                m[vr] = -inff\n"
    "              }\n"
    "              m[vr] = max(m[vr], x[vr, vj])\n"
    "            }\n"
    "          }\n"
    "        }\n"
    "        for r in 0..4 {\n"
    "          for j in 0..10 {\n"
    "            block e(vr: spatial[4] = r, vj: spatial[10] = j) reads(x, m) writes(e) {\n"
    "              e[vr, vj] = exp(x[vr, vj] - m[vr])\n"
    "            }\n"
    "          }\n"
    "        }\n"
    "        for r in 0..4 {\n"
    "          for j in 0..10 {\n"
    "            block s_update(vr: spatial[4] = r, vj: reduce[10] = j) reads(s, e) writes(s) {\n"
    "              init {\n"
    "                s[vr] = 0.0f\n"
    "              }\n"
    "              s[vr] = s[vr] + e[vr, vj]\n"
    "            }\n"
    "          }\n"
    "        }\n"
    "        for r in 0..4 {\n"
    "          for j in 0..10 {\n"
    "            block y(vr: spatial[4] = r, vj: spatial[10] = j) reads(e, s) writes(y) {\n"
    "              y[vr, vj] = e[vr, vj] / s[vr]\n"
    "            }\n"
    "          }\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "graph {\n"
    "  input x: f32[4, 10] init(-3, 3)\n"
    "  output y: f32[4, 10]\n"
    "  call @softmax(x, y)\n"
    "}\n";

static void test_softmax(void)
{
    int before = failures;
    ir_module *m = parse("softmax.tir", softmax_tir);
    pass_stats *st = m ? analyze(m) : NULL;
    CHECK(st != NULL);
    if (st) {
        uint64_t loads[8], stores[8];
        pass_totals t = totals(st, 0, NULL, -1, loads, stores);
        /* max: 1 per element (40); x - m and exp: 2 per element (80); the
         * sum: 40; the division: 40.  No MACs: s += e has no product. */
        CHECK_EQ(t.flops, 40 + 80 + 40 + 40);
        CHECK_EQ(t.macs, 0);
        CHECK_EQ(stores[buf_index(st, 0, "m")], 40 + 4);
        CHECK_EQ(loads[buf_index(st, 0, "e")], 40 + 40);
        CHECK_EQ(st->funcs[0].bufs[buf_index(st, 0, "e")].footprint_bytes, 160);
        CHECK_EQ(st->funcs[0].bufs[buf_index(st, 0, "e")].param, -1);   /* a local */
    }
    pass_stats_free(st);
    ir_module_free(m);
    report("softmax: FLOPs by the table (max, sub, exp, add, div = 1 each)", before);
}

/* ---------------------------------------------------------------- a variance */

/* v[r] += (x[r, j] - 1) * (x[r, j] - 1), then w[r] += x[r, j] * y[r, j]: the
 * sum of squares is not a MAC (doc/profile.md), the dot product is. */
static const char *variance_tir =
    "module \"var\"\n"
    "func @var(x: f32[4, 10], y: f32[4, 10], v: f32[4], w: f32[4]) attrs(layer = \"ln\", op = \"layernorm\") {\n"
    "  for r in 0..4 {\n"
    "    for j in 0..10 {\n"
    "      block v(vr: spatial[4] = r, vj: reduce[10] = j) reads(v, x) writes(v) {\n"
    "        init {\n"
    "          v[vr] = 0.0f\n"
    "        }\n"
    "        v[vr] = v[vr] + (x[vr, vj] - 1.0f) * (x[vr, vj] - 1.0f)\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "  for r in 0..4 {\n"
    "    for j in 0..10 {\n"
    "      block w(vr: spatial[4] = r, vj: reduce[10] = j) reads(w, x, y) writes(w) {\n"
    "        init {\n"
    "          w[vr] = 0.0f\n"
    "        }\n"
    "        w[vr] = w[vr] + x[vr, vj] * y[vr, vj]\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "graph {\n"
    "  input x: f32[4, 10] init(-3, 3)\n"
    "  input y: f32[4, 10] init(-3, 3)\n"
    "  output v: f32[4]\n"
    "  output w: f32[4]\n"
    "  call @var(x, y, v, w)\n"
    "}\n";

static void test_variance(void)
{
    int before = failures;
    ir_module *m = parse("variance.tir", variance_tir);
    pass_stats *st = m ? analyze(m) : NULL;
    CHECK(st != NULL);
    if (st) {
        uint64_t loads[8], stores[8];
        pass_totals t = totals(st, 0, NULL, -1, loads, stores);
        CHECK_EQ(t.macs, 40);                  /* the dot product only */
        CHECK_EQ(t.flops, 40 * 4 + 40 * 2);    /* (sub, sub, mul, add), then a MAC */
    }
    pass_stats_free(st);
    ir_module_free(m);
    report("variance: a sum of squares is not a MAC, a dot product is", before);
}

/* ---------------------------------------------------------------- a data-dependent gather */

/* An embedding bag: for each t, sum lens[t] rows of the table, but only
 * when lens[t] > 2.  The loop bound and the condition read memory. */
static const char *ragged_tir =
    "module \"ragged\"\n"
    "func @bag(lens: i64[4], table: f32[10, 8], out: f32[4, 8]) "
    "attrs(layer = \"bag\", op = \"embedding_bag\") {\n"
    "  for t in 0..4 {\n"
    "    for d in 0..8 {\n"
    "      block init_out(vt: spatial[4] = t, vd: spatial[8] = d) reads() writes(out) {\n"
    "        out[vt, vd] = 0.0f\n"
    "      }\n"
    "    }\n"
    "    for j in 0..lens[t] {\n"
    "      if lens[t] > 2 {\n"
    "        for d in 0..8 vectorized {\n"
    "          block acc(vt: spatial[4] = t, vj: spatial[10] = j, vd: spatial[8] = d) "
    "reads(out, table) writes(out) {\n"
    "            out[vt, vd] = out[vt, vd] + table[vj, vd] * 2.0f\n"
    "          }\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "graph {\n"
    "  input lens: i64[4] init(0, 10)\n"
    "  param table: f32[10, 8] init(-1, 1)\n"
    "  output out: f32[4, 8]\n"
    "  call @bag(lens, table, out)\n"
    "}\n";

static void fill_lens(rt_run *r, const ir_module *m)
{
    for (int i = 0; i < m->graph.nbufs; i++)
        if (strcmp(m->graph.bufs[i]->name, "lens") == 0) {
            int64_t *v = r->bufs[i]->data;
            v[0] = 3;
            v[1] = 0;
            v[2] = 5;
            v[3] = 1;
        }
}

static void test_ragged(void)
{
    int before = failures;
    ir_module *m = parse("ragged.tir", ragged_tir);
    pass_stats *st = m ? analyze(m) : NULL;
    CHECK(st != NULL);
    if (st) {
        /* sites: 0 init store, 1 for j (its bound loads lens), 2 if, 3 acc */
        CHECK_EQ(st->nsites, 4);
        CHECK(st->sites[0].is_static && st->sites[0].count == 32);
        CHECK(st->sites[1].is_static && st->sites[1].count == 4);
        CHECK(!st->sites[2].is_static && !st->sites[3].is_static);
        CHECK(!st->funcs[0].is_static);
        /* the if runs lens[t] times: counted before `for j`, per t */
        CHECK(st->sites[2].plan.trip && st->sites[2].plan.trip->kind == IR_S_FOR &&
              st->sites[2].plan.inner == 1);
        /* acc: 8 per taken branch, counted inside the branch */
        CHECK(st->sites[3].plan.anchor && st->sites[3].plan.anchor->kind == IR_S_FOR &&
              !st->sites[3].plan.trip && st->sites[3].plan.inner == 8);
        pass_totals t = totals(st, 0, NULL, -1, NULL, NULL);
        CHECK(t.unknown);
    }
    pass_stats_free(st);
    if (m) {
        CHECK(run_pass(m, "instrument"));
        char *text = ir_module_to_string(m);
        CHECK(text && strstr(text, "    evaluate tec_prof_count(2, max(lens[t], 0))\n"
                                   "    for j in 0..lens[t] {\n"));
        CHECK(text && strstr(text, "      if lens[t] > 2 {\n"
                                   "        evaluate tec_prof_count(3, 8)\n"));
        CHECK(text && strstr(text, "  evaluate tec_prof_enter(0)\n"
                                   "  evaluate tec_prof_count(0, 32)\n"
                                   "  evaluate tec_prof_count(1, 4)\n"));
        free(text);
        /* Instrumenting again changes nothing. */
        char *once = ir_module_to_string(m);
        CHECK(run_pass(m, "instrument"));
        char *twice = ir_module_to_string(m);
        CHECK(once && twice && strcmp(once, twice) == 0);
        free(once);
        free(twice);

        /* lens = [3, 0, 5, 1]: the if runs 3+0+5+1 = 9 times and is true for
         * t = 0 and t = 2, so acc runs (3 + 5) * 8 = 64 times: 128 FLOPs,
         * 64 table loads. */
        prun p;
        CHECK(prun_start(&p, m, 1, 0, fill_lens));
        if (p.prof) {
            const uint64_t *c = p.prof->run_counts;
            CHECK_EQ(c[2], 9);
            CHECK_EQ(c[3], 64);
            uint64_t loads[4], stores[4];
            pass_totals t = totals(p.prof->st, 0, c, -1, loads, stores);
            CHECK(!t.unknown);
            CHECK_EQ(t.flops, 128);
            CHECK_EQ(loads[buf_index(p.prof->st, 0, "table")], 64);
            CHECK_EQ(stores[buf_index(p.prof->st, 0, "out")], 32 + 64);
            CHECK_EQ(loads[buf_index(p.prof->st, 0, "lens")], 4 + 9);   /* loop bounds, ifs */
            CHECK(rt_profile_check(p.prof, &p.d));
        }
        prun_end(&p);
    }
    ir_module_free(m);
    report("data-dependent gather: dynamic counts placed per region, counted at run time", before);
}

/* ---------------------------------------------------------------- disagreement */

static void test_disagreement(void)
{
    int before = failures;
    ir_module *m = build_matmul();
    CHECK(run_pass(m, "instrument"));
    /* Corrupt the update of site 1 (the MAC store: 60 per call). */
    const ir_stmt *body = m->funcs[0]->body;
    int changed = 0;
    for (int i = 0; body && i < body->nbody; i++) {
        ir_stmt *s = body->body[i];
        if (s->kind == IR_S_EVAL && s->value->fn == IR_FN_PROF_COUNT &&
            s->value->args[0]->ival == 1) {
            CHECK_EQ(s->value->args[1]->ival, 60);
            s->value->args[1]->ival = 59;
            changed++;
        }
    }
    CHECK_EQ(changed, 1);
    prun p;
    CHECK(prun_start(&p, m, 1, 0, NULL));
    if (p.prof) {
        FILE *sink = tmpfile();
        FILE *keep = p.d.out;
        if (sink)
            p.d.out = sink;
        int errors = p.d.nerrors;
        CHECK(!rt_profile_check(p.prof, &p.d));
        CHECK_EQ(p.d.nerrors, errors + 1);
        CHECK_EQ(p.prof->ndisagree, 1);
        if (sink) {
            char text[512] = "";
            rewind(sink);
            size_t n = fread(text, 1, sizeof text - 1, sink);
            text[n] = 0;
            CHECK(strstr(text, "the counters say site 1 (store in block C_update) executed 59 "
                               "times per run, but the static analysis says 60"));
            fclose(sink);
        }
        p.d.out = keep;
    }
    prun_end(&p);
    ir_module_free(m);
    report("a count that disagrees with the analysis is an error", before);
}

/* ---------------------------------------------------------------- overflow */

static void test_overflow(void)
{
    int before = failures;
    /* 2^32 * 2^32 * 2^32 = 2^96 executions: does not fit in 64 bits. */
    ir_module *m = parse("big.tir",
        "module \"big\"\n"
        "func @big(o: f32[1]) attrs(layer = \"big\", op = \"fill\") {\n"
        "  for i in 0..4294967296 {\n"
        "    for j in 0..4294967296 {\n"
        "      for k in 0..4294967296 {\n"
        "        o[0] = 1.0f\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n"
        "graph {\n"
        "  output o: f32[1]\n"
        "  call @big(o)\n"
        "}\n");
    CHECK(m != NULL);
    if (m) {
        FILE *sink = tmpfile();
        diag d;
        diag_init(&d, sink ? sink : stdout);
        pass_stats *st = pass_analyze(m, NULL, &d);
        CHECK(st == NULL);
        CHECK_EQ(d.nerrors, 1);
        if (sink) {
            char text[512] = "";
            rewind(sink);
            size_t n = fread(text, 1, sizeof text - 1, sink);
            text[n] = 0;
            CHECK(strstr(text, "tec: error: layer big (@big): a store executes more than 2^64 "
                               "times"));
            fclose(sink);
        }
        diag_fini(&d);
        pass_stats_free(st);
        ir_module_free(m);
    }
    report("a count beyond 64 bits is a clear error", before);
}

/* ---------------------------------------------------------------- fused groups */

static const char *fused_tir =
    "module \"fused\"\n"
    "func @conv_relu(x: f32[1, 2, 4, 4], w: f32[3, 2, 3, 3], z: f32[1, 3, 4, 4]) "
    "attrs(layer = \"b1.conv+b1.relu\", op = \"fused\", members = \"b1.conv, b1.relu\", "
    "member_ops = \"conv2d,relu\", block.y_update = \"b1.conv\", block.z = \"b1.relu\") {\n"
    "  alloc y: f32[1, 3, 4, 4] global {\n"
    "    for f in 0..3 {\n"
    "      for p in 0..4 {\n"
    "        for q in 0..4 {\n"
    "          for c in 0..2 {\n"
    "            for r in 0..3 {\n"
    "              for s in 0..3 {\n"
    "                block y_update(vf: spatial[3] = f, vp: spatial[4] = p, vq: spatial[4] = q, "
    "vc: reduce[2] = c, vr: reduce[3] = r, vs: reduce[3] = s) reads(y, x, w) writes(y) {\n"
    "                  init {\n"
    "                    y[0, vf, vp, vq] = 0.0f\n"
    "                  }\n"
    "                  y[0, vf, vp, vq] = y[0, vf, vp, vq] + select(vp + vr - 1 >= 0 && "
    "vp + vr - 1 < 4 && vq + vs - 1 >= 0 && vq + vs - 1 < 4, x[0, vc, vp + vr - 1, "
    "vq + vs - 1], 0.0f) * w[vf, vc, vr, vs]\n"
    "                }\n"
    "              }\n"
    "            }\n"
    "          }\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "    for f in 0..3 {\n"
    "      for p in 0..4 {\n"
    "        for q in 0..4 {\n"
    "          block z(vf: spatial[3] = f, vp: spatial[4] = p, vq: spatial[4] = q) "
    "reads(y) writes(z) {\n"
    "            z[0, vf, vp, vq] = max(y[0, vf, vp, vq], 0.0f)\n"
    "          }\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "graph {\n"
    "  input x: f32[1, 2, 4, 4] init(-1, 1)\n"
    "  param b1.conv.weight: f32[3, 2, 3, 3] init(-0.5, 0.5)\n"
    "  output z: f32[1, 3, 4, 4]\n"
    "  call @conv_relu(x, b1.conv.weight, z)\n"
    "}\n";

static const rt_row *find_row(const rt_rows *rows, rt_row_kind kind, const char *name)
{
    for (int i = 0; i < rows->n; i++)
        if (rows->rows[i].kind == kind && strcmp(rows->rows[i].name, name) == 0)
            return &rows->rows[i];
    return NULL;
}

static void test_fused(void)
{
    int before = failures;
    ir_module *m = parse("fused.tir", fused_tir);
    CHECK(m && run_pass(m, "instrument"));
    prun p;
    CHECK(m && prun_start(&p, m, 2, 0, NULL));
    rt_rows rows;
    if (m && p.prof && rt_rows_build(p.prof, &rows, &p.d)) {
        const pass_funcinfo *fi = &p.prof->st->funcs[0];
        CHECK(fi->fused && fi->nmembers == 2 && strcmp(fi->members[1].layer, "b1.relu") == 0);
        const rt_row *g = find_row(&rows, RT_ROW_GROUP, "b1.conv+b1.relu");
        const rt_row *conv = find_row(&rows, RT_ROW_LAYER, "b1.conv");
        const rt_row *relu = find_row(&rows, RT_ROW_LAYER, "b1.relu");
        const rt_row *blk = find_row(&rows, RT_ROW_BLOCK, "b1");
        CHECK(g && conv && relu && blk);
        if (g && conv && relu && blk) {
            CHECK(strcmp(g->members, "b1.conv,b1.relu") == 0);
            CHECK(conv->group && strcmp(conv->group, g->name) == 0);
            /* 3*4*4 outputs * 2*3*3 = 864 MACs, all in the conv member */
            CHECK_EQ(conv->macs, 864);
            CHECK_EQ(relu->macs, 0);
            CHECK_EQ(relu->flops, 48);               /* one max per output */
            CHECK_EQ(g->macs, 864);
            CHECK_EQ(g->flops, 2 * 864 + 48);
            CHECK_EQ(conv->params, 54);              /* 3*2*3*3 */
            CHECK_EQ(relu->params, 0);
            CHECK(isnan(conv->time_us) && isnan(relu->time_us));   /* time is the group's */
            CHECK(!isnan(g->time_us) && g->time_us > 0);
            CHECK(!isnan(blk->time_us));             /* the group's home is b1 */
            /* The intermediate y stays on chip: no DRAM traffic for it. */
            CHECK_EQ(g->dram_read, 32 * 4 + 54 * 4); /* x and the weight, from a cold cache */
            CHECK_EQ(g->dram_write, 48 * 4);         /* z */
            CHECK_EQ(conv->dram_write, 0);
            CHECK(conv->output && strcmp(conv->output, "f32[1, 3, 4, 4]") == 0);
        }
        rt_rows_free(&rows);
    } else {
        CHECK(!"rows");
    }
    if (m)
        prun_end(&p);
    ir_module_free(m);
    report("fused group: one timed group, MACs and bytes attributed to members", before);
}

/* ---------------------------------------------------------------- the DRAM model */

static const char *chain_tir =
    "module \"chain\"\n"
    "func @a(x: f32[1024], y: f32[1024]) attrs(layer = \"a\", op = \"relu\") {\n"
    "  for i in 0..1024 {\n"
    "    y[i] = max(x[i], 0.0f)\n"
    "  }\n"
    "}\n"
    "func @b(y: f32[1024], z: f32[1024]) attrs(layer = \"b\", op = \"relu\") {\n"
    "  for i in 0..1024 {\n"
    "    z[i] = max(y[i], 0.0f)\n"
    "  }\n"
    "}\n"
    "graph {\n"
    "  input x: f32[1024] init(-1, 1)\n"
    "  temp y: f32[1024]\n"
    "  output z: f32[1024]\n"
    "  call @a(x, y)\n"
    "  call @b(y, z)\n"
    "}\n";

static void test_dram(void)
{
    int before = failures;
    ir_module *m = parse("chain.tir", chain_tir);
    CHECK(m != NULL);
    struct { const char *llc; uint64_t a_rd, b_rd; } cases[] = {
        /* 1 MiB: x is read once (cold), y is still cached for b. */
        {"1048576", 4096, 0},
        /* 4 KiB: each layer's working set (8 KiB) exceeds the cache: every
         * input comes from DRAM, bounded by what the layer loads. */
        {"4096", 4096, 4096},
    };
    for (size_t k = 0; m && k < sizeof cases / sizeof cases[0]; k++) {
        setenv("TEC_LLC_BYTES", cases[k].llc, 1);
        prun p;
        CHECK(prun_start(&p, m, 1, 0, NULL));
        rt_rows rows;
        if (p.prof && rt_rows_build(p.prof, &rows, &p.d)) {
            const rt_row *a = find_row(&rows, RT_ROW_LAYER, "a");
            const rt_row *b = find_row(&rows, RT_ROW_LAYER, "b");
            CHECK(a && b);
            if (a && b) {
                CHECK_EQ(a->dram_read, cases[k].a_rd);
                CHECK_EQ(b->dram_read, cases[k].b_rd);
                CHECK_EQ(a->dram_write, 4096);
                CHECK_EQ(b->dram_write, 4096);
                CHECK_EQ(a->act_bytes, 4096);
                CHECK(a->ninputs == 1 && strcmp(a->inputs[0], "f32[1024]") == 0);
            }
            rt_rows_free(&rows);
        }
        prun_end(&p);
    }
    unsetenv("TEC_LLC_BYTES");
    ir_module_free(m);
    report("DRAM model: cold cache, reuse across layers, working sets beyond the cache", before);
}

/* ---------------------------------------------------------------- report files */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strdup(buf);
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_reports(void)
{
    int before = failures;
    ir_module *m = parse("chain.tir", chain_tir);
    CHECK(m && run_pass(m, "instrument"));
    char dir[] = "/tmp/tec-profile-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char csv[64], json[64], trace[64];
    snprintf(csv, sizeof csv, "%s/r.csv", dir);
    snprintf(json, sizeof json, "%s/r.json", dir);
    snprintf(trace, sizeof trace, "%s/t.json", dir);
    prun p;
    CHECK(m && prun_start(&p, m, 3, 0, NULL));
    if (m && p.prof) {
        CHECK_EQ(p.prof->nruns, 3);
        rt_report_options o = {.csv = csv, .json = json, .trace = trace};
        CHECK(rt_profile_report(p.prof, &o, &p.d));
        char *c = slurp(csv), *j = slurp(json), *t = slurp(trace);
        CHECK(c && strncmp(c, "kind,name,op,group,input_shapes,output_shape,macs,flops,params,"
                              "state,param_bytes,activation_bytes,load_bytes,store_bytes,"
                              "dram_read_bytes,dram_write_bytes,time_us,", 136) == 0);
        CHECK(c && strstr(c, "\nlayer,a,relu,,f32[1024],f32[1024],0,1024,0,0,0,4096,4096,4096,"));
        CHECK(j && strstr(j, "\"network\": \"chain\""));
        CHECK(j && strstr(j, "\"totals\": {\"name\": \"chain\", \"op\": \"\", \"macs\": 0, "
                             "\"flops\": 2048, \"params\": 0"));
        CHECK_EQ(count_of(j, "\"group\": null"), 2);
        /* one slice per layer run: 2 layers x 3 measured runs */
        CHECK_EQ(count_of(t, "\"ph\": \"X\""), 6);
        CHECK_EQ(count_of(t, "\"name\": \"a\", \"cat\": \"relu\""), 3);
        free(c);
        free(j);
        free(t);
    }
    if (m)
        prun_end(&p);
    unlink(csv);
    unlink(json);
    unlink(trace);
    rmdir(dir);
    ir_module_free(m);
    report("report files: CSV header and rows, JSON totals, one trace slice per layer run", before);
}

int main(void)
{
    test_matmul();
    test_conv();
    test_softmax();
    test_variance();
    test_ragged();
    test_disagreement();
    test_overflow();
    test_fused();
    test_dram();
    test_reports();
    if (failures)
        printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
