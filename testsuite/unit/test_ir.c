/* testsuite/unit/test_ir.c — the IR core: tables, arena, builder, utilities. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/diag.h"
#include "ir/ir.h"
#include "testsuite/unit/test.h"

static void test_tables(void)
{
    ir_dtype t;
    CHECK(ir_dtype_parse("f32", &t) && t == IR_F32);
    CHECK(ir_dtype_parse("i64", &t) && t == IR_I64);
    CHECK(!ir_dtype_parse("f33", &t));
    CHECK(ir_dtype_size(IR_F64) == 8 && ir_dtype_size(IR_BOOL) == 1);
    CHECK(strcmp(ir_dtype_ctype(IR_I32), "int32_t") == 0);
    CHECK(strcmp(ir_dtype_ctype(IR_BF16), "uint16_t") == 0);
    CHECK(ir_dtype_is_float(IR_F16) && !ir_dtype_is_float(IR_I32));
    CHECK(ir_dtype_is_int(IR_I32) && !ir_dtype_is_int(IR_BOOL));
    CHECK(strcmp(ir_expr_kind_name(IR_FLOORDIV), "floordiv") == 0);
    CHECK(ir_expr_kind_arity(IR_SELECT) == 3 && ir_expr_kind_class(IR_ADD) == 'b');
    ir_intrin f;
    CHECK(ir_intrin_parse("sigmoid", &f) && f == IR_FN_SIGMOID);
    CHECK(ir_intrin_class(IR_FN_PROF_ENTER) == 'r');
    CHECK(!ir_intrin_parse("frobnicate", &f));
    CHECK(strcmp(ir_stmt_kind_name(IR_S_ASSERT), "assert") == 0);
    CHECK(strcmp(ir_for_kind_name(IR_FOR_VECTORIZED), "vectorized") == 0);
    CHECK(strcmp(ir_iter_kind_name(IR_ITER_REDUCE), "reduce") == 0);
    CHECK(strcmp(ir_buf_role_name(IR_BUF_PARAM), "param") == 0);
    CHECK(strcmp(ir_scope_name(IR_SCOPE_STACK), "stack") == 0);
}

static void test_arena(void)
{
    ir_arena *a = ir_arena_new();
    /* Large and small allocations, all zeroed and 16-aligned. */
    for (int i = 0; i < 1000; i++) {
        size_t n = (size_t)(i * 37 % 300000) + 1;
        unsigned char *p = ir_alloc(a, n);
        CHECK(((uintptr_t)p & 15) == 0);
        CHECK(p[0] == 0 && p[n - 1] == 0);
        p[0] = p[n - 1] = 0xff;
    }
    CHECK(strcmp(ir_sprintf(a, "%s.%d", "layer", 3), "layer.3") == 0);
    CHECK(strcmp(ir_strndup(a, "abcdef", 3), "abc") == 0);
    int *arr = NULL, n = 0, cap = 0;
    for (int i = 0; i < 100; i++)
        IR_PUSH(a, arr, n, cap, i * i);
    CHECK(n == 100 && arr[99] == 99 * 99 && arr[7] == 49 && cap >= 100);
    ir_arena_free(a);
}

static void test_builder(void)
{
    ir_module *m = ir_module_new("t");
    int64_t sa[2] = {4, 3}, sb[2] = {3, 5}, sc[2] = {4, 5};
    ir_buffer *A = ir_buffer_new(m, "A", IR_F32, 2, sa, IR_BUF_ARG);
    ir_buffer *B = ir_buffer_new(m, "B", IR_F32, 2, sb, IR_BUF_ARG);
    ir_buffer *C = ir_buffer_new(m, "C", IR_F32, 2, sc, IR_BUF_ARG);
    CHECK(ir_buffer_numel(A) == 12);
    ir_func *f = ir_func_new(m, "mm");
    ir_func_add_param(m, f, A);
    ir_func_add_param(m, f, B);
    ir_func_add_param(m, f, C);
    ir_func_set_attr(m, f, "op", "matmul");
    ir_func_set_attr(m, f, "op", "gemm");
    CHECK(f->nattrs == 1 && strcmp(ir_func_attr(f, "op"), "gemm") == 0);
    CHECK(ir_func_attr(f, "layer") == NULL);
    CHECK(ir_module_find_func(m, "mm") == f && !ir_module_find_func(m, "x"));

    ir_var *i = ir_var_new(m, "i", IR_I64), *j = ir_var_new(m, "j", IR_I64),
           *k = ir_var_new(m, "k", IR_I64);
    ir_expr *ij[2] = {ir_varref(m, i), ir_varref(m, j)};
    ir_expr *ik[2] = {ir_varref(m, i), ir_varref(m, k)};
    ir_expr *kj[2] = {ir_varref(m, k), ir_varref(m, j)};
    ir_expr *prod = ir_binary(m, IR_MUL, ir_load(m, A, ik, 2), ir_load(m, B, kj, 2));
    CHECK(prod->dtype == IR_F32);
    ir_expr *upd = ir_binary(m, IR_ADD, ir_load(m, C, ij, 2), prod);
    ir_itervar it[3] = {
        {i, IR_ITER_SPATIAL, 4, ir_varref(m, i)},
        {j, IR_ITER_SPATIAL, 5, ir_varref(m, j)},
        {k, IR_ITER_REDUCE, 3, ir_varref(m, k)},
    };
    ir_stmt *init = ir_store(m, C, ij, 2, ir_float(m, 0, IR_F32));
    ir_stmt *blk = ir_block(m, "C", it, 3, init, ir_store(m, C, ij, 2, upd));
    /* reads/writes in first-appearance order: init and body are walked. */
    CHECK(blk->nwrites == 1 && blk->writes[0] == C);
    CHECK(blk->nreads == 3 && blk->reads[0] == C && blk->reads[1] == A && blk->reads[2] == B);

    ir_stmt *seq = ir_seq(m, NULL, 0);
    for (int n = 0; n < 40; n++)
        ir_seq_append(m, seq, ir_eval(m, ir_call(m, IR_FN_PROF_COUNT,
                                                 (ir_expr *[]){ir_int(m, n), ir_int(m, 1)}, 2)));
    CHECK(seq->nbody == 40 && seq->body[39]->value->args[0]->ival == 39);
    /* Appending to a SEQ built from an exact-size array must not overflow it. */
    ir_stmt *two = ir_seq(m, (ir_stmt *[]){blk, blk}, 2);
    ir_seq_append(m, two, blk);
    CHECK(two->nbody == 3 && two->body[2] == blk);

    /* Comparisons give bool; casts of the same dtype are the identity. */
    ir_expr *lt = ir_binary(m, IR_LT, ir_varref(m, i), ir_int(m, 3));
    CHECK(lt->dtype == IR_BOOL);
    CHECK(ir_cast(m, prod, IR_F32) == prod && ir_cast(m, prod, IR_F64)->kind == IR_CAST);
    CHECK(ir_float(m, 0.1, IR_F32)->fval == (double)0.1f);
    CHECK(ir_int_typed(m, 5000000000LL, IR_I32)->ival == (int64_t)(int32_t)5000000000LL);
    CHECK(ir_call(m, IR_FN_EXP, &prod, 1)->dtype == IR_F32);

    /* Copy, substitution, equality, uses. */
    ir_expr *cp = ir_expr_copy(m, upd);
    CHECK(cp != upd && ir_expr_equal(cp, upd));
    ir_var *from[1] = {k};
    ir_expr *to[1] = {ir_int(m, 2)};
    ir_expr *sub = ir_expr_subst(m, upd, from, to, 1);
    CHECK(!ir_expr_equal(sub, upd) && !ir_expr_uses_var(sub, k) && ir_expr_uses_var(upd, k));
    CHECK(ir_expr_uses_var(sub, i));
    CHECK(!ir_expr_equal(ir_float(m, 0.0, IR_F64), ir_float(m, -0.0, IR_F64)));
    CHECK(ir_expr_equal(ir_float(m, NAN, IR_F64), ir_float(m, NAN, IR_F64)));
    CHECK(ir_expr_is_int(to[0], 2) && !ir_expr_is_int(prod, 2));
    ir_stmt *bc = ir_stmt_copy(m, blk);
    CHECK(bc != blk && bc->init != blk->init && bc->niters == 3 && bc->iters[2].kind == IR_ITER_REDUCE);
    CHECK(ir_expr_equal(bc->body[0]->value, blk->body[0]->value));
    ir_stmt *sc2 = ir_stmt_copy(m, two);
    ir_seq_append(m, sc2, blk);
    CHECK(sc2->nbody == 4 && two->nbody == 3);

    /* Graph. */
    ir_buffer *gA = ir_buffer_new(m, "A", IR_F32, 2, sa, IR_BUF_INPUT);
    ir_graph_add_buffer(m, gA);
    CHECK(ir_graph_find_buffer(m, "A") == gA && !ir_graph_find_buffer(m, "Q"));
    ir_graph_add_call(m, f, (ir_buffer *[]){gA, gA, gA}, 3);
    CHECK(m->graph.ncalls == 1 && m->graph.calls[0].fn == f && m->graph.calls[0].nargs == 3);
    ir_module_free(m);
}

static void test_diag(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    diag d;
    diag_init(&d, out);
    const char *src = "let x = 1\n\tfoo(bar)\n";
    diag_add_source(&d, "a.te", src, strlen(src));
    diag_error(&d, (diag_loc){"a.te", 2, 6}, "unknown name '%s'", "bar");
    diag_internal(&d, "simplify", "bad node");
    diag_error(&d, diag_noloc(), "no location");
    fclose(out);
    const char *want = "a.te:2:6: error: unknown name 'bar'\n"
                       "    2 | \tfoo(bar)\n"
                       "      | \t    ^\n"
                       "tec: internal error: simplify: bad node\n"
                       "tec: error: no location\n";
    CHECK(strcmp(buf, want) == 0);
    if (strcmp(buf, want) != 0)
        printf("got:\n%s", buf);
    CHECK(d.nerrors == 3 && d.ninternal == 1);
    diag_fini(&d);
    free(buf);
}

int main(void)
{
    test_tables();
    test_arena();
    test_builder();
    test_diag();
    printf("test_ir: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
