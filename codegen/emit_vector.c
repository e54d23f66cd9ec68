/* codegen/emit_vector.c — the C backend's printer of vector IR.
 *
 * passes/vectorize.c turns a loop marked `vectorized` into vector IR
 * (ramps, broadcasts, vector loads and stores, a loop stepping by the
 * lanes); this file prints it as GCC vector extensions, with the types and
 * helpers that emit_prelude.c writes, and the int8 dot products of
 * reductions grouped by four as one VNNI instruction per group.  The
 * scalar parts of a vector expression (a broadcast's value, an index) go
 * through emit_c.c's printer (emit_vector.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "codegen/emit_vector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arith.h"

/* ---------------------------------------------------------------- vectorized loops
 *
 * The emitter prints vector IR as it says (the `vectorize` pass makes it,
 * on the copy of the module that is printed: pass_emit_pipeline,
 * pass_lower_for_emit).  A loop still marked `vectorized` (one the pass
 * left, or from a caller that ran no emission passes) runs as a plain loop
 * under TEC_IVDEP. */

/* A vector of `lanes` elements at distance coef from the element `at`
 * (vector type vt, "tec_f32x8"): one vector load at distance 1; every other
 * element as two vector loads, [0, L) and [L-1, 2L-1), which read exactly
 * the span of the lanes, and one shuffle (lane l is element 2l: of the
 * first vector while 2l < L, else element 2l-L+1 of the second, index 2l+1
 * of the pair); else one element per lane. */
static void put_vector_load(cg_str *s, const char *vt, const char *at, int lanes, int64_t coef)
{
    if (coef == 1) {
        cg_str_printf(s, "(*(const %s *)&%s)", vt, at);
    } else if (coef == 2 && lanes >= 2) {
        cg_str_printf(s, "TEC_SHUFFLE2((*(const %s *)&%s), (*(const %s *)&(&%s)[%d]), tec_m%s", vt,
                   at, vt, at, lanes - 1, vt + 4);
        for (int l = 0; l < lanes; l++)
            cg_str_printf(s, ", %d", l < lanes / 2 ? 2 * l : 2 * l + 1);
        cg_str_puts(s, ")");
    } else {
        cg_str_printf(s, "((%s){", vt);
        for (int l = 0; l < lanes; l++)
            cg_str_printf(s, "%s(&%s)[%lld]", l ? ", " : "", at, (long long)(coef * l));
        cg_str_puts(s, "})");
    }
}

/* The opening of a vector square root of `bytes` bytes of t (the
 * instruction of that width, exact as sqrtf), to be closed with "))" (sqrt)
 * or ")))" (rsqrt, 1 / sqrt). */
static void put_vsqrt_open(cg_str *s, ir_intrin fn, ir_dtype t, int bytes, const char *vt)
{
    bool f32 = t == IR_F32;
    const char *in = bytes == 64 ? (f32 ? "_mm512_sqrt_ps" : "_mm512_sqrt_pd")
                   : bytes == 32 ? (f32 ? "_mm256_sqrt_ps" : "_mm256_sqrt_pd")
                                 : (f32 ? "_mm_sqrt_ps" : "_mm_sqrt_pd");
    const char *mt = bytes == 64 ? (f32 ? "__m512" : "__m512d")
                   : bytes == 32 ? (f32 ? "__m256" : "__m256d") : (f32 ? "__m128" : "__m128d");
    if (fn == IR_FN_RSQRT)
        cg_str_printf(s, "(%s / ", f32 ? "1.0f" : "1.0");
    cg_str_printf(s, "((%s)%s((%s)", vt, in, mt);
}

static int ilog2(int x)
{
    int k = 0;
    while ((1 << (k + 1)) <= x)
        k++;
    return k;
}

/* The element types of vectors: f32, f64, and the integers i32, i16, i8
 * and u8 (f16 and bf16 values are stored as bits and converted one at a
 * time). */
static bool vector_dtype(ir_dtype t)
{
    return t == IR_F32 || t == IR_F64 || t == IR_I32 || t == IR_I16 || t == IR_I8 || t == IR_U8;
}

/* ---------------------------------------------------------------- vector IR
 *
 * What passes/vectorize.c makes of a vectorized loop, printed as it says: a
 * loop stepping by the lanes, ramps and broadcasts, vector loads and stores
 * (GCC vector extensions, the types and helpers of emit_vector_types).  A
 * load or store whose indices are scalars and ramps of constant stride
 * reads or writes elements at a constant distance k in memory: k = 1 is one
 * vector load or store, k = 2 two loads and a shuffle, other k one element
 * per lane.  A broadcast operand of + - * / is the scalar itself (C
 * broadcasts it). */

/* The C vector type of `lanes` values of t ("tec_f32x8"), or NULL after an
 * error: vectors hold vector_dtype's types, 2 to 128 lanes, a power of two. */
const char *cg_vector_ctype(cg_emitter *e, ir_dtype t, int lanes)
{
    int k = ilog2(lanes);
    if (!vector_dtype(t) || lanes < 2 || lanes != 1 << k || k >= 8) {
        cg_user_error(e, "codegen: the C backend has no vectors of %d %s values (in @%s)", lanes,
                   ir_dtype_name(t), cg_func_name(e));
        return NULL;
    }
    e->vtype_used[t][k] = true;
    snprintf(e->vtname[t][k], sizeof e->vtname[t][k], "tec_%sx%d", cg_dtype_suffix(t), lanes);
    return e->vtname[t][k];
}

/* The distance in elements between an access's lanes; false when an index
 * is a vector other than a ramp of constant stride. */
static bool access_stride(const ir_buffer *b, ir_expr *const *idx, int n, int64_t *coef)
{
    int64_t total = 0, stride = 1;
    for (int k = n - 1; k >= 0; k--) {
        if (ir_expr_lanes(idx[k]) > 1) {
            if (idx[k]->kind != IR_RAMP || idx[k]->b->kind != IR_INT)
                return false;
            total += idx[k]->b->ival * stride;
        }
        stride *= b->shape[k];
    }
    *coef = total;
    return true;
}

/* buf[bases] of a vector access, in *a (the lanes' indices checked where
 * bounds.c could not prove them); its lane distance in *coef. */
static bool vector_access(cg_emitter *e, cg_str *a, const ir_buffer *b, const void *access,
                          ir_expr *const *idx, int n, int64_t *coef)
{
    if (!access_stride(b, idx, n, coef)) {
        cg_user_error(e, "codegen: the C backend reads and writes vectors only at ramps of constant "
                   "stride (in @%s, buffer '%s')", cg_func_name(e), b->name);
        return false;
    }
    cg_emit_access(e, a, b, access, idx, n);
    return true;
}

static void emit_vector_load(cg_emitter *e, cg_str *s, const ir_expr *x, const char *vt)
{
    int lanes = ir_expr_lanes(x);
    int64_t coef = 0;
    cg_str a = {0};
    if (!vector_access(e, &a, x->buf, x, x->args, x->nargs, &coef)) {
        free(a.p);
        cg_str_puts(s, "0");
        return;
    }
    put_vector_load(s, vt, a.p ? a.p : "0", lanes, coef);
    free(a.p);
}

/* A vector call: the square-root instruction of the vector's width (exact,
 * as sqrtf), or glibc's vector math (libmvec) for 32- and 64-byte vectors. */
static void emit_vector_call(cg_emitter *e, cg_str *s, const ir_expr *x, const char *vt)
{
    ir_dtype t = x->dtype;
    int lanes = ir_expr_lanes(x), bytes = lanes * ir_dtype_size(t);
    int vbytes = e->target && e->target->vector_bytes ? e->target->vector_bytes : 16;
    bool f32 = t == IR_F32;
    if ((x->fn == IR_FN_SQRT || x->fn == IR_FN_RSQRT) && bytes >= 16 && bytes <= vbytes) {
        e->intrin_used = true;
        put_vsqrt_open(s, x->fn, t, bytes, vt);
        cg_emit_vector_ir(e, s, x->args[0]);
        cg_str_puts(s, x->fn == IR_FN_RSQRT ? ")))" : "))");
        return;
    }
    const char *name = cg_vmath_name(x->fn);
    if (!name || bytes < 32 || bytes > vbytes) {
        cg_user_error(e, "codegen: %s of %d %s values has no vector instruction or library "
                   "function on this target (in @%s)", ir_intrin_name(x->fn), lanes,
                   ir_dtype_name(t), cg_func_name(e));
        cg_str_puts(s, "0");
        return;
    }
    e->vmath_used[x->fn == IR_FN_SIGMOID ? IR_FN_EXP : x->fn][t][ilog2(lanes)] = true;
    const char *one = f32 ? "1.0f" : "1.0";
    if (x->fn == IR_FN_SIGMOID)
        cg_str_printf(s, "(%s / (%s + (%s)", one, one, vt);
    else
        cg_str_printf(s, "((%s)", vt);
    cg_put_vmath_symbol(s, name, t, lanes);
    cg_str_printf(s, "((tec_n%s)%s", vt + 4, x->fn == IR_FN_SIGMOID ? "(-" : "");
    cg_emit_vector_ir(e, s, x->args[0]);
    cg_str_puts(s, x->fn == IR_FN_SIGMOID ? "))))" : "))");
}

/* An operand of + - * /: a broadcast is its scalar. */
static void emit_vector_operand(cg_emitter *e, cg_str *s, const ir_expr *x)
{
    if (x->kind == IR_BROADCAST)
        cg_emit_operand(e, s, x->a, P_UNARY, true);
    else
        cg_emit_vector_ir(e, s, x);
}

/* ---------------------------------------------------------------- dot products
 *
 * An int8 contraction whose reduction is split by 4 with the 4 innermost
 * and vectorized along its columns (its weights packed [..][columns][4])
 * reaches the emitter as a sum of products of four terms per lane
 * (ir/vectorize.c, reduce_group):
 *
 *   acc + i32(broadcast(x0)) * i32(W[ramp(b, 4, L)]) + ...
 *       + i32(broadcast(x3)) * i32(W[ramp(b + 3, 4, L)])
 *
 * x0..x3 bytes (i8 or u8) and W a buffer of bytes: lane l is acc[l] plus
 * the dot product of x0..x3 with the 4 contiguous bytes W[b + 4l ..].  One
 * dot-product instruction computes it: AVX-512 VNNI's vpdpbusd (u8 x s8,
 * four products summed into each i32 lane, wrapping as the IR's i32 sums
 * do).  Signed x (or unsigned W) go through the other side or an offset of
 * 128, corrected exactly: sum (x + 128) w - sum 128 w = sum x w, where the
 * correction depends on W alone (the compiler computes it once per W
 * vector of a register tile).  Without VNNI (the target's -march decides)
 * the helper is the same sum as C's widening multiply-adds. */

/* One product term: the scalar byte x (under the broadcast's cast) and the
 * load of W; false when t is not such a term. */
typedef struct dot4_term {
    const ir_expr *x;      /* the byte, a scalar */
    const ir_expr *load;   /* W[ramp(base, 4, L)] */
    int64_t zero;          /* the byte's zero point: the term is i32(x) - zero */
    ir_affine base;
    bool used;
} dot4_term;

static bool byte_int(ir_dtype t) { return t == IR_I8 || t == IR_U8; }

static bool dot4_term_of(const ir_expr *t, int lanes, dot4_term *out)
{
    if (t->kind != IR_MUL || t->dtype != IR_I32)
        return false;
    const ir_expr *bc = t->a, *w = t->b;
    if (bc->kind != IR_BROADCAST) {
        bc = t->b;
        w = t->a;
    }
    if (bc->kind != IR_BROADCAST || !bc->a)
        return false;
    const ir_expr *xc = bc->a;
    out->zero = 0;
    if (xc->kind == IR_SUB && xc->b && xc->b->kind == IR_INT) {   /* a zero point */
        out->zero = xc->b->ival;
        xc = xc->a;
    }
    if (!xc || xc->kind != IR_CAST || xc->dtype != IR_I32 || !xc->a || !byte_int(xc->a->dtype) ||
        w->kind != IR_CAST || !w->a || w->a->kind != IR_LOAD)
        return false;
    const ir_expr *ld = w->a;
    if (out->zero != 0 && ld->dtype != IR_I8)
        return false;   /* the correction takes the weights as vpdpbusd's i8 side */
    if (!byte_int(ld->dtype) || ld->nargs != 1 || ir_expr_lanes(ld) != lanes ||
        ld->args[0]->kind != IR_RAMP || !ir_expr_is_int(ld->args[0]->b, 4) ||
        !ir_affine_of(ld->args[0]->a, &out->base))
        return false;
    out->x = xc->a;
    out->load = ld;
    out->used = false;
    return true;
}

/* Whether a group's bytes x0..x3 are loads of adjacent elements of one
 * buffer. */
static bool contiguous_bytes(const dot4_term *dt, const int *g)
{
    ir_affine f0, fk;
    const ir_expr *x0 = dt[g[0]].x;
    if (x0->kind != IR_LOAD || x0->nargs != 1 || !ir_affine_of(x0->args[0], &f0))
        return false;
    for (int k = 1; k < 4; k++) {
        const ir_expr *xk = dt[g[k]].x;
        if (xk->kind != IR_LOAD || xk->buf != x0->buf || xk->nargs != 1 ||
            !ir_affine_of(xk->args[0], &fk) || !ir_affine_same_terms(&f0, &fk) ||
            fk.c != f0.c + k)
            return false;
    }
    return true;
}

/* The terms of a sum of i32 vectors (its + tree), at most max. */
static int sum_terms(const ir_expr *x, int lanes, const ir_expr **terms, int n, int max)
{
    if (x->kind == IR_ADD && x->dtype == IR_I32 && ir_expr_lanes(x) == lanes) {
        n = sum_terms(x->a, lanes, terms, n, max);
        return sum_terms(x->b, lanes, terms, n, max);
    }
    if (n < max)
        terms[n] = x;
    return n + 1;
}

/* A sum holding groups of four dot4 terms: the rest of the sum, then each
 * group through tec_dp4_<x><w>_i32xL(acc, &W[b], x0 | x1 << 8 | ...).
 * False (nothing written) when it holds no group. */
static bool emit_dot4_sum(cg_emitter *e, cg_str *s, const ir_expr *x, const char *vt)
{
    enum { MAXT = 64 };
    int lanes = ir_expr_lanes(x);
    if (x->kind != IR_ADD || x->dtype != IR_I32 || (lanes != 4 && lanes != 8 && lanes != 16))
        return false;
    const ir_expr *terms[MAXT];
    int n = sum_terms(x, lanes, terms, 0, MAXT);
    if (n > MAXT || n < 4)
        return false;
    dot4_term dt[MAXT];
    bool is_dot[MAXT];
    for (int i = 0; i < n; i++)
        is_dot[i] = dot4_term_of(terms[i], lanes, &dt[i]);
    /* groups: W[b], W[b + 1], W[b + 2], W[b + 3] of one buffer, one x dtype */
    int group[MAXT / 4][4], ngroups = 0;
    for (int i = 0; i < n; i++) {
        if (!is_dot[i] || dt[i].used)
            continue;
        int g[4] = {i, -1, -1, -1};
        for (int k = 1; k < 4; k++)
            for (int j = 0; j < n && g[k] < 0; j++)
                if (j != i && is_dot[j] && !dt[j].used && dt[j].load->buf == dt[i].load->buf &&
                    dt[j].x->dtype == dt[i].x->dtype && dt[j].zero == dt[i].zero &&
                    ir_affine_same_terms(&dt[j].base, &dt[i].base) &&
                    dt[j].base.c == dt[i].base.c + k)
                    g[k] = j;
        if (g[1] < 0 || g[2] < 0 || g[3] < 0)
            continue;
        for (int k = 0; k < 4; k++) {
            dt[g[k]].used = true;
            group[ngroups][k] = g[k];
        }
        ngroups++;
    }
    if (!ngroups)
        return false;
    e->intrin_used = true;
    for (int gi = ngroups - 1; gi >= 0; gi--) {
        const dot4_term *t0 = &dt[group[gi][0]];
        cg_str_printf(s, "tec_dp4%s_%c%c_%s(", t0->zero ? "z" : "", t0->x->dtype == IR_U8 ? 'u' : 's',
                      t0->load->dtype == IR_U8 ? 'u' : 's', vt + 4);
    }
    /* the rest of the sum (a zero vector if none) */
    int rest = 0;
    for (int i = 0; i < n; i++) {
        if (is_dot[i] && dt[i].used)
            continue;
        if (rest++) {
            cg_str_puts(s, " + ");
            emit_vector_operand(e, s, terms[i]);
        } else {
            cg_str_printf(s, "(%s)", vt);
            cg_emit_vector_ir(e, s, terms[i]);
        }
    }
    if (!rest) {
        e->bcast_used[IR_I32][ilog2(lanes)] = true;
        cg_str_printf(s, "tec_bcast_%s(0)", vt + 4);
    }
    for (int gi = 0; gi < ngroups; gi++) {
        /* W's lanes b .. b + 4L - 1: the access of the first term, with
         * the last term's checks (of b + 3 + 4(L-1)) ahead of it */
        cg_str a0 = {0}, a3 = {0};
        const dot4_term *t0 = &dt[group[gi][0]], *t3 = &dt[group[gi][3]];
        cg_emit_access(e, &a0, t0->load->buf, t0->load, t0->load->args, 1);
        cg_emit_access(e, &a3, t3->load->buf, t3->load, t3->load->args, 1);
        cg_str_printf(s, ", ((void)%s, &%s), ", a3.p ? a3.p : "0", a0.p ? a0.p : "0");
        free(a0.p);
        free(a3.p);
        const int64_t zero = dt[group[gi][0]].zero;
        if (contiguous_bytes(dt, group[gi])) {
            /* x0..x3 adjacent in memory: one 4-byte read (little-endian
             * order: x0 in the low byte, as the shifts below put it) */
            const ir_expr *x0 = dt[group[gi][0]].x, *x3 = dt[group[gi][3]].x;
            cg_str b0 = {0}, b3 = {0};
            cg_emit_access(e, &b0, x0->buf, x0, x0->args, 1);
            cg_emit_access(e, &b3, x3->buf, x3, x3->args, 1);
            cg_str_printf(s, "({ uint32_t tec_x4; (void)%s; __builtin_memcpy(&tec_x4, &%s, 4); "
                             "__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? tec_x4 : "
                             "__builtin_bswap32(tec_x4); })", b3.p ? b3.p : "0", b0.p ? b0.p : "0");
            if (zero)
                cg_str_printf(s, ", %lld", (long long)zero);
            cg_str_puts(s, ")");
            free(b0.p);
            free(b3.p);
            continue;
        }
        for (int k = 0; k < 4; k++) {
            cg_str_puts(s, k ? " | (uint32_t)(uint8_t)" : "(uint32_t)(uint8_t)");
            cg_emit_operand(e, s, dt[group[gi][k]].x, P_UNARY, false);
            if (k)
                cg_str_printf(s, " << %d", 8 * k);
        }
        if (zero)
            cg_str_printf(s, ", %lld", (long long)zero);
        cg_str_puts(s, ")");
    }
    return true;
}

/* x, a vector, as a value of its C vector type (parenthesized or primary). */
void cg_emit_vector_ir(cg_emitter *e, cg_str *s, const ir_expr *x)
{
    int lanes = ir_expr_lanes(x);
    const char *vt = cg_vector_ctype(e, x->dtype, lanes);
    if (!vt) {
        cg_str_puts(s, "0");
        return;
    }
    int k = ilog2(lanes);
    switch (x->kind) {
    case IR_LANES:   /* lane by lane: each a scalar expression */
        cg_str_printf(s, "((%s){", vt);
        for (int l = 0; l < x->nargs; l++) {
            cg_str_puts(s, l ? ", " : "");
            cg_emit_operand(e, s, x->args[l], P_SELECT, false);
        }
        cg_str_puts(s, "})");
        return;
    case IR_BROADCAST:
        e->bcast_used[x->dtype][k] = true;
        cg_str_printf(s, "tec_bcast_%s(", vt + 4);
        cg_emit_operand(e, s, x->a, P_SELECT, false);
        cg_str_puts(s, ")");
        return;
    case IR_VAR:
        cg_str_puts(s, cg_lookup(e, x->var) ? cg_lookup(e, x->var) : "0");
        return;
    case IR_LOAD:
        emit_vector_load(e, s, x, vt);
        return;
    case IR_ADD: case IR_SUB: case IR_MUL: case IR_DIV:
        if (x->kind == IR_ADD && emit_dot4_sum(e, s, x, vt))
            return;
        cg_str_puts(s, "(");
        emit_vector_operand(e, s, x->a);
        cg_str_puts(s, cg_binary_op(x->kind));
        emit_vector_operand(e, s, x->b);
        cg_str_puts(s, ")");
        return;
    case IR_NEG:
        cg_str_puts(s, "(-");
        cg_emit_vector_ir(e, s, x->a);
        cg_str_puts(s, ")");
        return;
    case IR_CAST:
        /* an integer widened (or kept): lane by lane as C's scalar cast */
        if (ir_dtype_is_int(x->dtype) && ir_dtype_is_int(x->a->dtype) &&
            ir_dtype_size(x->a->dtype) <= ir_dtype_size(x->dtype) && x->a->dtype != IR_BOOL) {
            if (x->a->dtype == x->dtype) {
                cg_emit_vector_ir(e, s, x->a);
                return;
            }
            e->vcvt_used[x->dtype][x->a->dtype][k] = true;
            e->intrin_used = true;
            cg_str_printf(s, "tec_cvt_%s_%s(", vt + 4, cg_dtype_suffix(x->a->dtype));
            cg_emit_vector_ir(e, s, x->a);
            cg_str_puts(s, ")");
            return;
        }
        break;
    case IR_MIN: case IR_MAX:
        e->vminmax_used[x->dtype][k] = true;
        cg_str_printf(s, "tec_v%s_%s(", x->kind == IR_MIN ? "min" : "max", vt + 4);
        cg_emit_vector_ir(e, s, x->a);
        cg_str_puts(s, ", ");
        cg_emit_vector_ir(e, s, x->b);
        cg_str_puts(s, ")");
        return;
    case IR_SELECT:
        if (ir_expr_lanes(x->c) == 1) {
            /* both arms cast to the vector type: arithmetic on it yields the
             * plain vector type (without its alignment and aliasing
             * attributes), which ?: does not take with the attributed one */
            cg_str_puts(s, "(");
            cg_emit_operand(e, s, x->c, P_OR, false);
            cg_str_printf(s, " ? (%s)", vt);
            cg_emit_vector_ir(e, s, x->a);
            cg_str_printf(s, " : (%s)", vt);
            cg_emit_vector_ir(e, s, x->b);
            cg_str_puts(s, ")");
            return;
        }
        break;
    case IR_CALL:
        if (x->nargs == 1) {
            emit_vector_call(e, s, x, vt);
            return;
        }
        break;
    default:
        break;
    }
    cg_user_error(e, "codegen: the C backend has no vector form of '%s' (in @%s)",
               ir_expr_kind_name(x->kind), cg_func_name(e));
    cg_str_puts(s, "0");
}

/* buf[ramp...] = vector: one vector store at distance 1, else lane by lane. */
void cg_emit_vector_store(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    int lanes = ir_expr_lanes(st->value);
    const char *vt = cg_vector_ctype(e, st->value->dtype, lanes);
    cg_str val = {0}, a = {0};
    int64_t coef = 0;
    if (vt && vector_access(e, &a, st->buf, st, st->args, st->nargs, &coef)) {
        cg_emit_vector_ir(e, &val, st->value);
        if (coef == 1) {
            cg_line(e, s, "*(%s *)&%s = %s;", vt, a.p ? a.p : "0", val.p ? val.p : "0");
        } else {
            cg_line(e, s, "{");
            e->indent++;
            cg_line(e, s, "const %s tec_t = %s;", vt, val.p ? val.p : "0");
            for (int l = 0; l < lanes; l++)
                cg_line(e, s, "(&%s)[%lld] = tec_t[%d];", a.p ? a.p : "0", (long long)(coef * l), l);
            e->indent--;
            cg_line(e, s, "}");
        }
    }
    free(val.p);
    free(a.p);
}

/* for (v = lo; v < hi; v += step): a vectorized loop's vector part. */
void cg_emit_stepped_loop(cg_emitter *e, cg_str *s, const ir_stmt *st)
{
    const char *ct = cg_var_ctype(e, st->var);
    char *lo = cg_bound_text(e, st->lo);
    char *hi = cg_bound_text(e, st->hi);
    bool hi_loads = false;
    ir_expr_walk(st->hi, cg_contains_load, &hi_loads);
    if (st->for_kind != IR_FOR_SERIAL && st->for_kind != IR_FOR_VECTORIZED)
        cg_user_error(e, "codegen: a %s loop with a step is not supported (loop '%s' in @%s)",
                   ir_for_kind_name(st->for_kind), st->var->name, cg_func_name(e));
    if (st->for_kind == IR_FOR_VECTORIZED && !e->quiet_chunks)
        cg_line(e, s, "/* vectorized: %s in %s..%s, %lld lanes */", st->var->name, lo ? lo : "0",
             hi ? hi : "0", (long long)ir_for_step(st));
    const char *v = cg_bind(e, st->var, st->var->name);
    if (hi_loads)  /* the IR evaluates hi once */
        cg_line(e, s, "for (%s %s = %s, tec_end_%s = %s; %s < tec_end_%s; %s += %lld) {", ct, v,
             lo ? lo : "0", v, hi ? hi : "0", v, v, v, (long long)ir_for_step(st));
    else
        cg_line(e, s, "for (%s %s = %s; %s < %s; %s += %lld) {", ct, v, lo ? lo : "0", v,
             hi ? hi : "0", v, (long long)ir_for_step(st));
    free(lo);
    free(hi);
    cg_emit_body(e, s, st->nbody > 0 ? st->body[0] : NULL);
    cg_line(e, s, "}");
    cg_unbind(e, 1);
}

/* The helpers tec_dp4_<x><w>_i32xL that the kernels in `funcs` call (see
 * emit_dot4_sum): acc + the dot products of the 4 bytes of x (x0 in the
 * low byte; u: u8, s: i8) with each lane's 4 bytes of w. */
void cg_emit_dot4_helpers(cg_str *s, const char *funcs)
{
    static const int widths[3] = {4, 8, 16};
    for (int z = 0; z < 2; z++)
    for (int m = 0; m < 4; m++)
        for (int wi = 0; wi < 3; wi++) {
            char xs = m & 1 ? 's' : 'u', ws = m & 2 ? 'u' : 's';
            int L = widths[wi], bits = L * 32;
            const char *zs = z ? "z" : "";
            char name[40];
            snprintf(name, sizeof name, "tec_dp4%s_%c%c_i32x%d(", zs, xs, ws, L);
            if (!funcs || !strstr(funcs, name) || (z && ws == 'u'))
                continue;
            /* vpdpbusd's first source is u8, its second i8: x u8 and w i8
             * as they are; x i8 with w u8 swapped; otherwise the i8 side
             * offset by 128 (x ^ 0x80 as u8, or w as i8 against x - 128)
             * and the correction, which depends on w alone, subtracted.
             * With a zero point z (tec_dp4z_, w i8): sum (x - z) w =
             * sum xu w - (z + offset) sum w, sum w from a vpdpbusd of ones. */
            const char *pre = bits == 512 ? "_mm512" : bits == 256 ? "_mm256" : "_mm";
            const char *vi = bits == 512 ? "__m512i" : bits == 256 ? "__m256i" : "__m128i";
            const char *dp = bits == 512 ? "_mm512_dpbusd_epi32"
                             : bits == 256 ? "TEC_DPBUSD256" : "TEC_DPBUSD128";
            const char *have = bits == 512 ? "defined(__AVX512VNNI__)"
                               : "(defined(__AVX512VNNI__) && defined(__AVX512VL__)) || defined(__AVXVNNI__)";
            int zb = bits == 128 ? 128 : bits;
            cg_str_printf(s, "static inline tec_i32x%d tec_dp4%s_%c%c_i32x%d(tec_i32x%d acc, const void *w, uint32_t x%s)\n{\n",
                          L, zs, xs, ws, L, L, z ? ", int32_t z" : "");
            cg_str_printf(s, "#if defined(__x86_64__) && (%s)\n", have);
            if (bits == 256)
                cg_str_puts(s, "#if defined(__AVX512VNNI__) && defined(__AVX512VL__)\n"
                               "#define TEC_DPBUSD256 _mm256_dpbusd_epi32\n#else\n"
                               "#define TEC_DPBUSD256 _mm256_dpbusd_avx_epi32\n#endif\n");
            if (bits == 128)
                cg_str_puts(s, "#if defined(__AVX512VNNI__) && defined(__AVX512VL__)\n"
                               "#define TEC_DPBUSD128 _mm_dpbusd_epi32\n#else\n"
                               "#define TEC_DPBUSD128 _mm_dpbusd_avx_epi32\n#endif\n");
            cg_str_printf(s, "    %s b, a, r;\n    __builtin_memcpy(&b, w, sizeof b);\n"
                             "    __builtin_memcpy(&a, &acc, sizeof a);\n", vi);
            bool swap = xs == 's' && ws == 'u', off = xs == ws;
            const char *xv = off ? "x ^ 0x80808080u" : "x";
            if (z)                    /* x - z against i8 w */
                cg_str_printf(s, "    r = %s_sub_epi32(%s(a, %s_set1_epi32((int)(%s)), b),\n"
                                 "        %s_mullo_epi32(%s_set1_epi32((int32_t)((uint32_t)z + %du)),\n"
                                 "            %s(%s_setzero_si%d(), %s_set1_epi32(0x01010101), b)));\n",
                              pre, dp, pre, xs == 's' ? "x ^ 0x80808080u" : "x", pre, pre,
                              xs == 's' ? 128 : 0, dp, pre, zb, pre);
            else if (!swap && !off)   /* u8 x, i8 w */
                cg_str_printf(s, "    r = %s(a, %s_set1_epi32((int)x), b);\n", dp, pre);
            else if (swap)            /* i8 x, u8 w */
                cg_str_printf(s, "    r = %s(a, b, %s_set1_epi32((int)x));\n", dp, pre);
            else if (xs == 's')       /* i8 x, i8 w: x + 128 as u8 */
                cg_str_printf(s, "    r = %s_sub_epi32(%s(a, %s_set1_epi32((int)(%s)), b),\n"
                                 "        %s(%s_setzero_si%d(), %s_set1_epi32((int)0x80808080u), b));\n",
                              pre, dp, pre, xv, dp, pre, zb, pre);
            else                      /* u8 x, u8 w: w against x - 128 as i8 */
                cg_str_printf(s, "    r = %s_sub_epi32(%s(a, b, %s_set1_epi32((int)(%s))),\n"
                                 "        %s(%s_setzero_si%d(), b, %s_set1_epi32((int)0x80808080u)));\n",
                              pre, dp, pre, xv, dp, pre, zb, pre);
            cg_str_printf(s, "    __builtin_memcpy(&acc, &r, sizeof acc);\n    return acc;\n#else\n");
            const char *xt = xs == 'u' ? "uint8_t" : "int8_t", *wt = ws == 'u' ? "uint8_t" : "int8_t";
            const char *zm = z ? " - z)" : "", *zo = z ? "((int32_t)" : "(int32_t)";
            cg_str_printf(s, "    const %s *b = (const %s *)w;\n", wt, wt);
            cg_str_printf(s, "    for (int l = 0; l < %d; l++)\n"
                             "        acc[l] += %s(%s)x%s * b[4 * l] + %s(%s)(x >> 8)%s * b[4 * l + 1]\n"
                             "                + %s(%s)(x >> 16)%s * b[4 * l + 2] + %s(%s)(x >> 24)%s * b[4 * l + 3];\n"
                             "    return acc;\n#endif\n}\n\n", L, zo, xt, zm, zo, xt, zm, zo, xt, zm,
                          zo, xt, zm);
        }
}
