/* testsuite/unit/test_placement.c — the planned temps placed apart
 * (rt_run_place_apart, runtime/exec.h): each in bytes of its own, none
 * overlapping another or the arena, runs giving the same outputs as with
 * the plan's placement, and back.  Interpreted runs of a chain of five
 * layers whose memory plan reuses bytes (a and c, b and d live apart).
 * Prints one line per check group; exits 1 on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/diag.h"
#include "ir/ir.h"
#include "passes/passes.h"
#include "runtime/exec.h"
#include "testsuite/unit/test.h"

static const char *chain =
    "module \"chain\"\n"
    "func @inc(x: f32[64], y: f32[64]) attrs(layer = \"inc\", op = \"add\", loc = \"c.te:1:1\") {\n"
    "  for i in 0..64 {\n"
    "    block y(vi: spatial[64] = i) reads(x) writes(y) {\n"
    "      y[vi] = x[vi] * 2.0f + 1.0f\n"
    "    }\n"
    "  }\n"
    "}\n"
    "graph {\n"
    "  input x: f32[64] init(-1, 1)\n"
    "  temp a: f32[64]\n"
    "  temp b: f32[64]\n"
    "  temp c: f32[64]\n"
    "  temp d: f32[64]\n"
    "  output y: f32[64]\n"
    "  call @inc(x, a)\n"
    "  call @inc(a, b)\n"
    "  call @inc(b, c)\n"
    "  call @inc(c, d)\n"
    "  call @inc(d, y)\n"
    "}\n";

static int index_of(const ir_module *m, const char *name)
{
    for (int i = 0; i < m->graph.nbufs; i++)
        if (strcmp(m->graph.bufs[i]->name, name) == 0)
            return i;
    return -1;
}

static bool inside(const void *p, size_t n, const void *lo, size_t len)
{
    return (const char *)p >= (const char *)lo && (const char *)p + n <= (const char *)lo + len;
}

int main(void)
{
    diag d;
    diag_init(&d, stdout);
    ir_module *m = ir_parse("chain.tir", chain, strlen(chain), &d);
    pass_options po = {.verify_each = true};
    CHECK(m && pass_run_pipeline(m, "memplan", &po, &d));
    if (!m)
        return test_exit("test_placement");
    rt_iface iface;
    rt_run_options ro = {0};
    CHECK(rt_iface_record(m, &iface, &d));
    rt_run *r = rt_run_new(m, &iface, &ro, &d);
    CHECK(r != NULL);
    if (!r)
        return test_exit("test_placement");
    const char *temps[4] = {"a", "b", "c", "d"};
    int t[4], y = index_of(m, "y");
    for (int k = 0; k < 4; k++)
        t[k] = index_of(m, temps[k]);

    int before = failures;
    CHECK(m->graph.has_arena && m->graph.arena_bytes == 2 * 256);
    CHECK(r->bufs[t[0]]->data == r->bufs[t[2]]->data && r->bufs[t[1]]->data == r->bufs[t[3]]->data);
    CHECK(rt_run_execute(r, &ro, &d));
    float planned[64];
    memcpy(planned, r->bufs[y]->data, sizeof planned);
    const float *x = r->bufs[index_of(m, "x")]->data;
    for (int i = 0; i < 64; i++)
        CHECK(planned[i] == (((((x[i] * 2 + 1) * 2 + 1) * 2 + 1) * 2 + 1) * 2 + 1));
    printf("%s the plan reuses the bytes of a for c and of b for d\n",
           failures == before ? "ok  " : "FAIL");

    before = failures;
    CHECK(rt_run_place_apart(r, true));
    CHECK(r->spread_bytes == 4 * 256);
    for (int k = 0; k < 4; k++) {
        const rt_tensor *v = r->bufs[t[k]];
        CHECK(inside(v->data, v->nbytes, r->spread, r->spread_bytes));
        CHECK(!inside(v->data, 1, r->arena, r->arena_bytes));
        for (int q = 0; q < k; q++)
            CHECK((char *)v->data >= (char *)r->bufs[t[q]]->data + r->bufs[t[q]]->nbytes ||
                  (char *)r->bufs[t[q]]->data >= (char *)v->data + v->nbytes);
    }
    memset(r->bufs[y]->data, 0, sizeof planned);
    CHECK(rt_run_execute(r, &ro, &d));   /* one thread: back where the plan puts them */
    CHECK(!r->apart && r->bufs[t[0]]->data == r->bufs[t[2]]->data);
    CHECK(memcmp(r->bufs[y]->data, planned, sizeof planned) == 0);
    printf("%s apart: every temp in bytes of its own, outside the arena\n",
           failures == before ? "ok  " : "FAIL");

    /* a run apart (as rt_run_execute makes on several threads), call by call */
    before = failures;
    CHECK(rt_run_place_apart(r, true));
    memset(r->bufs[y]->data, 0, sizeof planned);
    char err[256] = "";
    for (int c = 0; c < m->graph.ncalls; c++)
        CHECK(rt_run_call(r, &ro, c, err, sizeof err));
    CHECK(memcmp(r->bufs[y]->data, planned, sizeof planned) == 0);
    CHECK(r->bufs[t[0]]->data != r->bufs[t[2]]->data);
    CHECK(!rt_run_place_apart(r, false) && r->bufs[t[0]]->data == r->bufs[t[2]]->data);
    CHECK(inside(r->bufs[t[3]]->data, 256, r->arena, r->arena_bytes));
    printf("%s a run apart gives the plan's outputs, and the views go back\n",
           failures == before ? "ok  " : "FAIL");

    rt_run_free(r);
    rt_iface_free(&iface);
    ir_module_free(m);
    diag_fini(&d);
    return test_exit("test_placement");
}
