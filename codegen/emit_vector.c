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

#include <math.h>
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
    return t == IR_F32 || t == IR_F64 || t == IR_I32 || t == IR_I16 || t == IR_I8 || t == IR_U8 ||
           t == IR_BF16;   /* bf16: its bits, widened to f32 (tec_cvt_f32xL_bf16) */
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

static bool tr_load(cg_str *s, const ir_expr *x);

/* Whether index x is broadcast(b) + lanes(d0, ..., dL-1) of integer
 * constants (ir/vectorize.c, permuted_load): lane l reads b + dl. */
static bool permuted_index(const ir_expr *x)
{
    if (!x || x->kind != IR_ADD || !x->a || !x->b || x->a->kind != IR_BROADCAST ||
        x->b->kind != IR_LANES || x->b->nargs != x->lanes)
        return false;
    for (int l = 0; l < x->b->nargs; l++)
        if (x->b->args[l]->kind != IR_INT)
            return false;
    return true;
}

/* A load whose lanes read b + d_l in one dimension k (permuted_index), the
 * others scalars: the span [b + min d, b + max d] of W elements as one
 * vector of H = W lanes, or two of the largest power of two H below W,
 * [b + min, +H) and [b + min + W - H, +H), which together read exactly the
 * span (so no element past the lanes' own, as put_vector_load's stride 2),
 * and one shuffle picking each lane's element (vpermps / vpermi2ps on
 * AVX-512): TEC_PERMUTE, cg_emit_dot4_helpers.  Each window is printed as a ramp of H lanes, so an index the
 * bounds check could not prove is checked at both ends of each.  False
 * when the load is not of that form (the span wider than two vectors of
 * the load's lanes, or narrower than 4). */
static bool emit_permuted_load(cg_emitter *e, cg_str *s, const ir_expr *x, const char *vt)
{
    int lanes = ir_expr_lanes(x), k = -1;
    for (int i = 0; i < x->nargs; i++)
        if (ir_expr_lanes(x->args[i]) > 1) {
            if (k >= 0 || !permuted_index(x->args[i]))
                return false;
            k = i;
        }
    if (k < 0)
        return false;
    const ir_expr *d = x->args[k]->b, *b = x->args[k]->a->a;
    int64_t lo = d->args[0]->ival, hi = lo;
    for (int l = 1; l < lanes; l++) {
        lo = d->args[l]->ival < lo ? d->args[l]->ival : lo;
        hi = d->args[l]->ival > hi ? d->args[l]->ival : hi;
    }
    int64_t W = hi - lo + 1, H = 1;
    while (H * 2 <= W && H * 2 <= lanes)
        H *= 2;
    if (W < 4 || W > 2 * H)
        return false;   /* (narrower: ir/vectorize.c leaves them lane by lane) */
    const char *ht = cg_vector_ctype(e, x->dtype, (int)H);
    if (!ht)
        return true;   /* (reported) */
    if (!e->scratch && !(e->scratch = ir_module_new("codegen-scratch"))) {
        e->oom = true;
        return true;
    }
    ir_module *m = e->scratch;
    ir_expr **idx = ir_alloc(m->arena, sizeof *idx * (size_t)x->nargs);
    for (int i = 0; i < x->nargs; i++)
        idx[i] = x->args[i];
    cg_str w[2] = {{0}, {0}};
    for (int j = 0; j < 2; j++) {
        int64_t at = j ? lo + W - H : lo;
        ir_expr *base = at ? ir_binary(m, IR_ADD, ir_expr_copy(m, b), ir_int_typed(m, at, b->dtype))
                           : ir_expr_copy(m, b);
        idx[k] = ir_ramp(m, base, ir_int_typed(m, 1, b->dtype), (int)H);
        cg_emit_access(e, &w[j], x->buf, x, idx, x->nargs);
    }
    cg_str_printf(s, "TEC_PERMUTE(%s, tec_m%s, (*(const %s *)&%s), (*(const %s *)&%s), (", vt,
                  vt + 4, ht, w[0].p ? w[0].p : "0", ht,
                  W == H ? (w[0].p ? w[0].p : "0") : (w[1].p ? w[1].p : "0"));
    for (int pair = 0; pair < 2; pair++) {   /* lanes of the windows, then of them widened */
        for (int l = 0; l < lanes; l++) {
            int64_t p = d->args[l]->ival - lo, second = pair ? lanes : H;
            cg_str_printf(s, "%s%lld", l ? ", " : "", (long long)(p < H ? p : second + p - (W - H)));
        }
        cg_str_puts(s, pair ? "))" : "), (");
    }
    free(w[0].p);
    free(w[1].p);
    return true;
}

static void emit_vector_load(cg_emitter *e, cg_str *s, const ir_expr *x, const char *vt)
{
    int lanes = ir_expr_lanes(x);
    int64_t coef = 0;
    cg_str a = {0};
    if (tr_load(s, x) || emit_permuted_load(e, s, x, vt))
        return;
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
    if (x->fn == IR_FN_RINT && bytes >= 16 && bytes <= vbytes) {
        /* the target's rounding instruction (tec_vrint_, cg_emit_dot4_helpers) */
        e->intrin_used = true;
        cg_str_printf(s, "tec_vrint_%s(", vt + 4);
        cg_emit_vector_ir(e, s, x->args[0]);
        cg_str_puts(s, ")");
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

/* The same sum also comes with the vectors along W's rows, unpacked (a 1x1
 * convolution's input read along its map, x[c, m], with the weights
 * broadcast):
 *
 *   acc + i32(broadcast(x0)) * i32(W[ramp(b, 1, L)]) + ...
 *       + i32(broadcast(x3)) * i32(W[ramp(b + 3S, 1, L)])
 *
 * four rows of L bytes at a constant distance S.  The helper interleaves
 * them into the packed form ([L][4] bytes: lane l holds the 4 rows' l-th
 * bytes, a few shuffles that a register tile's rows share) and goes on as
 * above. */

/* One product term: the scalar byte x (under the broadcast's cast) and the
 * load of W; false when t is not such a term. */
typedef struct dot4_term {
    const ir_expr *x;      /* the byte, a scalar */
    const ir_expr *load;   /* W[ramp(base, 4, L)], or a row W[ramp(base, 1, L)] */
    int64_t zero;          /* the byte's zero point: the term is i32(x) - zero */
    ir_affine base;
    bool row;              /* load is a row: four rows make a group */
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
        ld->args[0]->kind != IR_RAMP ||
        !(ir_expr_is_int(ld->args[0]->b, 4) || ir_expr_is_int(ld->args[0]->b, 1)) ||
        !ir_affine_of(ld->args[0]->a, &out->base))
        return false;
    out->x = xc->a;
    out->load = ld;
    out->row = ir_expr_is_int(ld->args[0]->b, 1);
    out->used = false;
    return true;
}

/* Whether terms i and j can be in one group: the same kind of W load of
 * one buffer, bytes x of one type, one zero point, W's bases apart by a
 * constant. */
static bool dot4_alike(const dot4_term *a, const dot4_term *b)
{
    return a->row == b->row && a->load->buf == b->load->buf && a->x->dtype == b->x->dtype &&
           a->zero == b->zero && ir_affine_same_terms(&a->base, &b->base);
}

/* The group of term i (unused) in g[0..3]: W's bases b, b + 1, b + 2,
 * b + 3 (packed), or b, b + S, b + 2S, b + 3S for some S > 0 (rows); false
 * when the other three are not there. */
static bool dot4_group(dot4_term *dt, const bool *is_dot, int n, int i, int *g)
{
    for (int s = 0; s < n; s++) {
        int64_t step = 1;
        if (dt[i].row) {   /* the distance to the next row, from a candidate */
            if (s == i || !is_dot[s] || dt[s].used || !dot4_alike(&dt[i], &dt[s]) ||
                dt[s].base.c <= dt[i].base.c)
                continue;
            step = dt[s].base.c - dt[i].base.c;
        }
        g[0] = i;
        g[1] = g[2] = g[3] = -1;
        for (int k = 1; k < 4; k++)
            for (int j = 0; j < n && g[k] < 0; j++)
                if (j != i && is_dot[j] && !dt[j].used && dot4_alike(&dt[i], &dt[j]) &&
                    dt[j].base.c == dt[i].base.c + k * step)
                    g[k] = j;
        if (g[1] >= 0 && g[2] >= 0 && g[3] >= 0)
            return true;
        if (!dt[i].row)
            return false;
    }
    return false;
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
    /* groups: W[b], W[b + 1], W[b + 2], W[b + 3] of one buffer, one x
     * dtype (or four rows) */
    int group[MAXT / 4][4], ngroups = 0;
    for (int i = 0; i < n; i++) {
        int g[4];
        if (!is_dot[i] || dt[i].used || !dot4_group(dt, is_dot, n, i, g))
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
        cg_str_printf(s, "tec_dp4%s%s_%c%c_%s(", t0->row ? "r" : "", t0->zero ? "z" : "",
                      t0->x->dtype == IR_U8 ? 'u' : 's', t0->load->dtype == IR_U8 ? 'u' : 's', vt + 4);
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
        const dot4_term *t0 = &dt[group[gi][0]], *t3 = &dt[group[gi][3]];
        if (t0->row) {   /* the four rows, each a vector access */
            for (int k = 0; k < 4; k++) {
                const dot4_term *tk = &dt[group[gi][k]];
                cg_str ak = {0};
                cg_emit_access(e, &ak, tk->load->buf, tk->load, tk->load->args, 1);
                cg_str_printf(s, ", &%s", ak.p ? ak.p : "0");
                free(ak.p);
            }
            cg_str_puts(s, ", ");
        } else {
            /* W's lanes b .. b + 4L - 1: the access of the first term, with
             * the last term's checks (of b + 3 + 4(L-1)) ahead of it */
            cg_str a0 = {0}, a3 = {0};
            cg_emit_access(e, &a0, t0->load->buf, t0->load, t0->load->args, 1);
            cg_emit_access(e, &a3, t3->load->buf, t3->load, t3->load->args, 1);
            cg_str_printf(s, ", ((void)%s, &%s), ", a3.p ? a3.p : "0", a0.p ? a0.p : "0");
            free(a0.p);
            free(a3.p);
        }
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

/* ---------------------------------------------------------------- bf16 pairs
 *
 * A bf16 contraction accumulating in f32 whose reduction is split by 2 with
 * the 2 innermost and vectorized along its columns (its weights packed
 * [..][columns][2]) reaches the emitter as (ir/vectorize.c, reduce_group)
 *
 *   (acc + broadcast(f32(a0)) * f32(W[ramp(b, 2, L)]))
 *        + broadcast(f32(a1)) * f32(W[ramp(b + 1, 2, L)])
 *
 * lane l: acc[l] + a0 W[b + 2l], then + a1 W[b + 2l + 1], each sum rounded
 * as the interpreter's.  AVX-512 BF16's vdpbf16ps computes per 32-bit lane
 * acc += x.hi w.hi, then acc += x.lo w.lo, each rounded to nearest even:
 * with a0 and W's first element of a pair in the high halves (a0 << 16 |
 * a1, and W's pairs rotated by 16 bits) it adds in the interpreter's order.
 * A product of two bf16 is exact in f32 and the instruction's fused
 * multiply-add equals the interpreter's multiply then add, except where it
 * flushes subnormals to zero or a product leaves f32's range.  So the
 * instruction runs only where every bf16 value the kernel reads is 0,
 * infinite, NaN or of magnitude in [2^-50, 2^63) (then every product is 0
 * or in [2^-100, 2^126), a multiple of 2^-114, and every sum of them 0 or
 * at least 2^-123: none is subnormal, no product overflows), checked once
 * per call of the kernel over its bf16 parameters (tec_bf16_plain, when
 * its local bf16 buffers are copies of them: packed panels, padded with
 * zeros), and where acc
 * holds no subnormal: checked at each step (tec_bf16_plain 1) unless acc is
 * a local buffer that only ever holds 0, normal constants and sums of such
 * products (tec_bf16_plain 2: an accumulator tile); elsewhere the helper
 * computes the interpreter's sums (tec_dpbf16_exact_f32xL). */

typedef struct bf16_term {
    const ir_expr *a;      /* the scalar bf16 load */
    const ir_expr *load;   /* W[ramp(base, 2, L)] */
    ir_affine base;
} bf16_term;

static bool bf16_load(const ir_expr *x)
{
    return x && x->kind == IR_CAST && x->dtype == IR_F32 && x->a && x->a->kind == IR_LOAD &&
           x->a->dtype == IR_BF16;
}

static bool bf16_term_of(const ir_expr *t, int lanes, bf16_term *out)
{
    if (t->kind != IR_MUL || t->dtype != IR_F32)
        return false;
    const ir_expr *bc = t->a, *w = t->b;
    if (bc->kind != IR_BROADCAST) {
        bc = t->b;
        w = t->a;
    }
    if (bc->kind != IR_BROADCAST || !bf16_load(bc->a) || !bf16_load(w))
        return false;
    const ir_expr *ld = w->a;
    if (ld->nargs != 1 || ir_expr_lanes(ld) != lanes || ld->args[0]->kind != IR_RAMP ||
        !ir_expr_is_int(ld->args[0]->b, 2) || !ir_affine_of(ld->args[0]->a, &out->base))
        return false;
    out->a = bc->a->a;
    out->load = ld;
    return true;
}

/* x as tec_dpbf16_f32xL(acc, &W[b], a0 << 16 | a1); false (nothing
 * written) when it is not such a pair. */
static bool emit_bf16_pair(cg_emitter *e, cg_str *s, const ir_expr *x, const char *vt)
{
    int lanes = ir_expr_lanes(x);
    bf16_term t0, t1;
    if (x->kind != IR_ADD || x->dtype != IR_F32 || (lanes != 8 && lanes != 16) ||
        x->a->kind != IR_ADD || !bf16_term_of(x->a->b, lanes, &t0) ||
        !bf16_term_of(x->b, lanes, &t1) || t0.load->buf != t1.load->buf ||
        !ir_affine_same_terms(&t0.base, &t1.base) || t1.base.c != t0.base.c + 1)
        return false;
    e->intrin_used = true;
    if (!e->bf16_flag) {   /* no flag: a kernel the pre-scan did not see (cannot happen) */
        cg_str_printf(s, "tec_dpbf16_exact_%s((%s)", vt + 4, vt);
    } else {
        cg_str_printf(s, "tec_dpbf16_%s((%s)", vt + 4, vt);
    }
    cg_emit_vector_ir(e, s, x->a->a);
    /* W's lanes b .. b + 2L - 1: the first term's access, the second's
     * checks (of b + 1 + 2(L-1)) ahead of it; then the pair's bits */
    cg_str w0 = {0}, w1 = {0}, a0 = {0}, a1 = {0};
    cg_emit_access(e, &w0, t0.load->buf, t0.load, t0.load->args, 1);
    cg_emit_access(e, &w1, t1.load->buf, t1.load, t1.load->args, 1);
    cg_emit_access(e, &a0, t0.a->buf, t0.a, t0.a->args, t0.a->nargs);
    cg_emit_access(e, &a1, t1.a->buf, t1.a, t1.a->args, t1.a->nargs);
    cg_str_printf(s, ", ((void)%s, &%s), ", w1.p ? w1.p : "0", w0.p ? w0.p : "0");
    ir_affine f0, f1;
    if (t0.a->buf == t1.a->buf && t0.a->nargs == 1 && t1.a->nargs == 1 &&
        ir_affine_of(t0.a->args[0], &f0) && ir_affine_of(t1.a->args[0], &f1) &&
        ir_affine_same_terms(&f0, &f1) && f1.c == f0.c + 1)
        /* a0, a1 adjacent: one 4-byte read, a0 into the high half */
        cg_str_printf(s, "({ uint32_t tec_x2; (void)%s; __builtin_memcpy(&tec_x2, &%s, 4); "
                         "__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? tec_x2 << 16 | tec_x2 >> 16 : "
                         "tec_x2; })", a1.p ? a1.p : "0", a0.p ? a0.p : "0");
    else
        cg_str_printf(s, "(uint32_t)%s << 16 | (uint32_t)%s", a0.p ? a0.p : "0", a1.p ? a1.p : "0");
    cg_str_printf(s, "%s)", e->bf16_flag ? ", tec_bf16_plain" : "");
    free(w0.p);
    free(w1.p);
    free(a0.p);
    free(a1.p);
    return true;
}

/* The pre-scan of a kernel for bf16 pairs: whether it has one, and
 * whether every store to a local bf16 buffer copies a bf16 value read
 * from memory (a packed panel), so that the parameters hold every bf16
 * value the kernel reads. */
typedef struct bf16_scan {
    bool pair, computed;
    const ir_buffer *acc[8];   /* the accumulators of the pairs */
    int nacc;
    bool acc_unsafe;           /* one may hold a subnormal, or is not local */
} bf16_scan;

static bool bf16_scan_expr(const ir_expr *x, void *p)
{
    bf16_scan *c = p;
    bf16_term t0, t1;
    int lanes = ir_expr_lanes(x);
    if (x->kind == IR_ADD && x->dtype == IR_F32 && (lanes == 8 || lanes == 16) &&
        x->a->kind == IR_ADD && bf16_term_of(x->a->b, lanes, &t0) && bf16_term_of(x->b, lanes, &t1)) {
        c->pair = true;
        const ir_expr *acc = x->a->a;
        if (acc->kind != IR_LOAD || acc->buf->role == IR_BUF_ARG) {
            c->acc_unsafe = true;
        } else {
            int i = 0;
            while (i < c->nacc && c->acc[i] != acc->buf)
                i++;
            if (i == c->nacc && c->nacc < 8)
                c->acc[c->nacc++] = acc->buf;
            else if (i == c->nacc)
                c->acc_unsafe = true;
        }
    }
    return true;
}

/* f32(a bf16 load), or a broadcast of it. */
static bool bf16_value(const ir_expr *x)
{
    return bf16_load(x) || (x->kind == IR_BROADCAST && bf16_load(x->a));
}

/* What may be stored into an accumulator that never holds a subnormal:
 * 0 or a normal constant, or its own value plus products of bf16 values. */
static bool safe_acc_value(const ir_expr *v, const ir_buffer *acc)
{
    if (v->kind == IR_BROADCAST)
        v = v->a;
    if (v->kind == IR_FLOAT)
        return v->fval == 0 || fabs(v->fval) >= 0x1p-126;
    while (v->kind == IR_ADD) {
        if (v->b->kind != IR_MUL || !bf16_value(v->b->a) || !bf16_value(v->b->b))
            return false;
        v = v->a;
    }
    return v->kind == IR_LOAD && v->buf == acc;
}

/* A bf16 value copied from memory, or a constant the instruction takes as
 * it is (0, or of magnitude in [2^-50, 2^63)), or a select of such (a
 * packed panel's padding). */
static bool bf16_copied(const ir_expr *v)
{
    if (!v || v->dtype != IR_BF16)
        return false;
    if (v->kind == IR_LOAD)
        return true;
    if (v->kind == IR_FLOAT)
        return v->fval == 0 || (fabs(v->fval) >= 0x1p-50 && fabs(v->fval) < 0x1p63);
    return v->kind == IR_SELECT && bf16_copied(v->a) && bf16_copied(v->b);
}

static bool bf16_scan_stmt(const ir_stmt *st, void *p)
{
    bf16_scan *c = p;
    if (st->kind == IR_S_STORE && st->buf->dtype == IR_BF16 && st->buf->role != IR_BUF_ARG &&
        !bf16_copied(st->value))
        c->computed = true;
    return true;
}

static bool acc_scan_stmt(const ir_stmt *st, void *p)
{
    bf16_scan *c = p;
    for (int i = 0; st->kind == IR_S_STORE && i < c->nacc; i++)
        if (st->buf == c->acc[i] && (!st->value || !safe_acc_value(st->value, st->buf)))
            c->acc_unsafe = true;
    return true;
}

void cg_emit_bf16_flag(cg_emitter *e, cg_str *s)
{
    bf16_scan c = {.pair = false};
    e->bf16_flag = false;
    if (!e->f->body)
        return;
    ir_stmt_walk(e->f->body, bf16_scan_stmt, bf16_scan_expr, &c);
    if (!c.pair)
        return;
    ir_stmt_walk(e->f->body, acc_scan_stmt, NULL, &c);
    e->bf16_flag = true;
    cg_str t = {0};
    cg_str_puts(&t, c.computed ? "0" : "1");
    for (int i = 0; i < e->f->nparams && !c.computed; i++) {
        const ir_buffer *b = e->f->params[i];
        if (b->dtype != IR_BF16 || !cg_lookup(e, b))
            continue;
        int64_t n = 1;
        for (int d = 0; d < b->ndim; d++)
            n *= b->shape[d];
        cg_str_printf(&t, " && tec_bf16_all_plain(%s, %lld)", cg_lookup(e, b), (long long)n);
    }
    cg_line(e, s, "/* bf16 pairs on vdpbf16ps where no bf16 value is tiny, huge or subnormal */");
    cg_line(e, s, "const int tec_bf16_plain = %s%s;", t.p ? t.p : "0",
            c.computed ? "" : c.acc_unsafe ? " ? 1 : 0" : " ? 2 : 0");
    cg_line(e, s, "(void)tec_bf16_plain;");
    free(t.p);
}

/* x, a vector, as a value of its C vector type (parenthesized or primary). */
/* The conversions of a loop of mixed element types (ir/vectorize.c, as
 * many lanes of each type): between i32, f32 and f64 as C's (exact, or
 * rounded to nearest), bf16 to f64 through f32 (exact), and to a small
 * integer from i32 (wrapping) or from a float that the loop has clamped
 * into its range (a narrowing store: quantize, requantize), truncated to
 * i32 first, then narrowed: an instruction each (one C conversion of f64
 * to i8 is lane by lane in GCC 12).  False (nothing written) for others. */
static bool emit_mixed_cast(cg_emitter *e, cg_str *s, const ir_expr *x, const char *vt)
{
    ir_dtype to = x->dtype, from = x->a->dtype;
    int lanes = ir_expr_lanes(x);
    bool num_to = to == IR_F32 || to == IR_F64 || to == IR_I32;
    bool num_from = from == IR_F32 || from == IR_F64 || from == IR_I32;
    if (to == IR_F64 && from == IR_I32 && lanes == 8) {
        /* one instruction (GCC 12 splits the 512-bit convertvector in two
         * halves and joins them): tec_cvtd_f64x8, cg_emit_dot4_helpers */
        e->intrin_used = true;
        cg_str_puts(s, "tec_cvtd_f64x8(");
        cg_emit_vector_ir(e, s, x->a);
        cg_str_puts(s, ")");
        return true;
    }
    if (num_to && num_from && !(ir_dtype_is_float(from) && !ir_dtype_is_float(to))) {
        cg_str_puts(s, "__builtin_convertvector(");
        cg_emit_vector_ir(e, s, x->a);
        cg_str_printf(s, ", %s)", vt);
        return true;
    }
    if (to == IR_F64 && from == IR_BF16) {
        const char *ft = cg_vector_ctype(e, IR_F32, lanes);
        if (!ft)
            return false;
        e->vcvt_used[IR_F32][IR_BF16][ilog2(lanes)] = true;
        e->intrin_used = true;
        cg_str_printf(s, "__builtin_convertvector(tec_cvt_%s_bf16(", ft + 4);
        cg_emit_vector_ir(e, s, x->a);
        cg_str_printf(s, "), %s)", vt);
        return true;
    }
    if (ir_dtype_is_small_int(to) && (from == IR_I32 || from == IR_F32 || from == IR_F64)) {
        const char *it = cg_vector_ctype(e, IR_I32, lanes);
        if (!it)
            return false;
        cg_str_puts(s, "__builtin_convertvector(");
        if (from != IR_I32)
            cg_str_puts(s, "__builtin_convertvector(");
        cg_emit_vector_ir(e, s, x->a);
        if (from != IR_I32)
            cg_str_printf(s, ", %s)", it);
        cg_str_printf(s, ", %s)", vt);
        return true;
    }
    return false;
}

/* Whether x is a broadcast of the number v. */
static bool is_bcast_number(const ir_expr *x, double v)
{
    return x->kind == IR_BROADCAST && x->a && x->a->kind == IR_FLOAT && x->a->fval == v;
}

/* A requantize's saturated i8 of 8 f64 lanes, i8(min(max(v, -128), 127))
 * (sat_i8), as tec_sati8_f64x8(v): min(127, v) (NaN stays NaN), truncated
 * to i32 (NaN and what is below i32's range give INT32_MIN), narrowed
 * with signed saturation (vpmovsdb) -- the same i8 in every case, one
 * instruction fewer than the max; false (nothing written) when x is
 * another cast. */
static bool emit_sat_i8(cg_emitter *e, cg_str *s, const ir_expr *x)
{
    const ir_expr *mn = x->a, *mx = mn ? mn->a : NULL;
    if (x->dtype != IR_I8 || ir_expr_lanes(x) != 8 || !mn || mn->kind != IR_MIN ||
        mn->dtype != IR_F64 || !is_bcast_number(mn->b, 127.0) || !mx || mx->kind != IR_MAX ||
        !is_bcast_number(mx->b, -128.0))
        return false;
    e->intrin_used = true;
    /* rint under the clamp goes into the conversion (tec_satri8_f64x8):
     * converting with the current rounding mode, as rint rounds, gives
     * rint's integer, and min(127, rint(v)) == rint(min(127, v)) as 127 is
     * an integer -- one instruction fewer again (ResNet-style 1x1
     * convolutions with few input channels spend a third of their time in
     * this write-back) */
    const ir_expr *r = mx->a;
    bool rounds = r && r->kind == IR_CALL && r->fn == IR_FN_RINT && r->nargs == 1;
    cg_str_puts(s, rounds ? "tec_satri8_f64x8(" : "tec_sati8_f64x8(");
    cg_emit_vector_ir(e, s, rounds ? r->args[0] : r);
    cg_str_puts(s, ")");
    return true;
}

/* A vector condition as a mask of vt's mask type (tec_mf32x16: lanes of
 * the values' width, all ones where it holds, else zero): comparisons of
 * vectors (GCC's vector comparison gives that), & | ~ of masks, a scalar
 * condition broadcast as 0 - 1 or 0 - 0. */
static void emit_vector_mask(cg_emitter *e, cg_str *s, const ir_expr *c, const char *vt)
{
    switch (c->kind) {
    case IR_BROADCAST:
        cg_str_printf(s, "((tec_m%s){0} - (", vt + 4);
        cg_emit_operand(e, s, c->a, P_SELECT, false);
        cg_str_puts(s, " ? 1 : 0))");
        return;
    case IR_NOT:
        cg_str_puts(s, "(~");
        emit_vector_mask(e, s, c->a, vt);
        cg_str_puts(s, ")");
        return;
    case IR_AND: case IR_OR:
        cg_str_puts(s, "(");
        emit_vector_mask(e, s, c->a, vt);
        cg_str_puts(s, c->kind == IR_AND ? " & " : " | ");
        emit_vector_mask(e, s, c->b, vt);
        cg_str_puts(s, ")");
        return;
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
        if (ir_dtype_size(c->a->dtype) == 4 && ir_expr_lanes(c->a) == ir_expr_lanes(c->b)) {
            cg_str_printf(s, "((tec_m%s)(", vt + 4);
            cg_emit_vector_ir(e, s, c->a);
            cg_str_puts(s, cg_binary_op(c->kind));
            cg_emit_vector_ir(e, s, c->b);
            cg_str_puts(s, "))");
            return;
        }
        break;
    default:
        break;
    }
    cg_user_error(e, "codegen: the C backend has no vector mask of '%s' (in @%s)",
               ir_expr_kind_name(c->kind), cg_func_name(e));
    cg_str_puts(s, "0");
}

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
        if (x->kind == IR_ADD && (emit_dot4_sum(e, s, x, vt) || emit_bf16_pair(e, s, x, vt)))
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
        if (x->dtype == IR_F32 && x->a->dtype == IR_BF16) {   /* the bits, widened */
            e->vcvt_used[IR_F32][IR_BF16][k] = true;
            e->intrin_used = true;
            cg_str_printf(s, "tec_cvt_%s_bf16(", vt + 4);
            cg_emit_vector_ir(e, s, x->a);
            cg_str_puts(s, ")");
            return;
        }
        if ((x->dtype == IR_F32 || x->dtype == IR_F64) && ir_dtype_is_small_int(x->a->dtype)) {
            /* widened to i32 (one instruction), then converted: exact */
            int bits = ilog2(lanes);
            e->vcvt_used[IR_I32][x->a->dtype][bits] = true;
            const char *it = cg_vector_ctype(e, IR_I32, lanes);
            if (!it) {
                cg_str_puts(s, "0");
                return;
            }
            e->intrin_used = true;
            cg_str_printf(s, "__builtin_convertvector(tec_cvt_%s_%s(", it + 4,
                          cg_dtype_suffix(x->a->dtype));
            cg_emit_vector_ir(e, s, x->a);
            cg_str_printf(s, "), %s)", vt);
            return;
        }
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
        if (emit_sat_i8(e, s, x) || emit_mixed_cast(e, s, x, vt))
            return;
        break;
    case IR_MIN: case IR_MAX:
        if (((x->dtype == IR_F64 && lanes == 8) ||
             (x->dtype == IR_F32 && (lanes == 4 || lanes == 8 || lanes == 16))) &&
            x->b->kind == IR_BROADCAST && x->b->a && x->b->a->kind == IR_FLOAT &&
            !isnan(x->b->a->fval)) {
            /* against a number: a < b ? a : b (a > b ? a : b) lane by lane,
             * as the vector helper with b not NaN, is minps's and minpd's
             * (maxps's, maxpd's) definition: one instruction for f64, a
             * compare and a blend for f32 (a ReLU's max, a quantize's
             * clamp; tec_vmaxk_f32x16, cg_emit_dot4_helpers) */
            if (x->dtype == IR_F64)
                e->intrin_used = true;
            else   /* (the helper broadcasts b) */
                e->bcast_used[IR_F32][k] = true;
            cg_str_printf(s, "tec_v%sk_%s(", x->kind == IR_MIN ? "min" : "max", vt + 4);
            cg_emit_vector_ir(e, s, x->a);
            cg_str_puts(s, ", ");
            cg_emit_operand(e, s, x->b->a, P_SELECT, false);
            cg_str_puts(s, ")");
            return;
        }
        e->vminmax_used[x->dtype][k] = true;
        cg_str_printf(s, "tec_v%s%s_%s(", x->kind == IR_MIN ? "min" : "max",
                      x->a->kind == IR_LOAD && cg_holds_numbers(e->f, x->a->buf) ? "n" : "", vt + 4);
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
        if (x->c->kind == IR_LANES && x->c->nargs == ir_expr_lanes(x)) {
            /* a condition of constant lanes (ir/vectorize.c, lane_select):
             * one shuffle taking lane l of a where it holds, else of b */
            bool consts = true;
            for (int l = 0; l < x->c->nargs; l++)
                consts = consts && x->c->args[l]->kind == IR_INT;
            if (consts) {
                cg_str_printf(s, "TEC_SHUFFLE2((%s)", vt);
                cg_emit_vector_ir(e, s, x->a);
                cg_str_printf(s, ", (%s)", vt);
                cg_emit_vector_ir(e, s, x->b);
                cg_str_printf(s, ", tec_m%s", vt + 4);
                for (int l = 0; l < x->c->nargs; l++)
                    cg_str_printf(s, ", %d", x->c->args[l]->ival ? l : x->c->nargs + l);
                cg_str_puts(s, ")");
                return;
            }
        }
        if (ir_dtype_size(x->dtype) == 4 && x->c->kind != IR_LANES) {
            /* a mask of comparisons (ir/vectorize.c, vector_mask_select):
             * each arm's bits where the mask's lane is all ones (true),
             * else the other's (the C compiler makes it one blend) */
            cg_str_printf(s, "({ const tec_m%s tec_k = ", vt + 4);
            emit_vector_mask(e, s, x->c, vt);
            cg_str_printf(s, "; (%s)((tec_k & (tec_m%s)(", vt, vt + 4);
            cg_emit_vector_ir(e, s, x->a);
            cg_str_printf(s, ")) | (~tec_k & (tec_m%s)(", vt + 4);
            cg_emit_vector_ir(e, s, x->b);
            cg_str_puts(s, "))); })");
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
        } else if ((lanes == 8 || lanes == 16) && ir_dtype_size(st->value->dtype) == 1) {
            /* bytes at a distance (an int8 tile's write-back into NCHW, lanes
             * along the channels): each lane stored from a vector register
             * (pextrb), not moved through a general one first */
            e->intrin_used = true;
            cg_line(e, s, "{");
            e->indent++;
            cg_line(e, s, "const %s tec_t = %s;", vt, val.p ? val.p : "0");
            cg_line(e, s, "#if defined(__x86_64__) && defined(__SSE4_1__)");
            cg_line(e, s, "__m128i tec_m = _mm_setzero_si128();");
            cg_line(e, s, "__builtin_memcpy(&tec_m, &tec_t, %d);", lanes);
            for (int l = 0; l < lanes; l++)
                cg_line(e, s, "*(uint8_t *)&(&%s)[%lld] = (uint8_t)_mm_extract_epi8(tec_m, %d);",
                        a.p ? a.p : "0", (long long)(coef * l), l);
            cg_line(e, s, "#else");
            for (int l = 0; l < lanes; l++)
                cg_line(e, s, "(&%s)[%lld] = tec_t[%d];", a.p ? a.p : "0", (long long)(coef * l), l);
            cg_line(e, s, "#endif");
            e->indent--;
            cg_line(e, s, "}");
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

/* ---------------------------------------------------------------- transposed accesses
 *
 * A vectorized loop whose body is a loop over the rows of a register
 * tile, for i in lo..lo+R { one store of 16 f32 lanes }, where an access
 * runs across rows (its lanes a constant distance S apart, i at distance
 * 1: passes/vectorize.c interchanged the write-back of a tile whose
 * vectors run along the output's channels):
 *
 *   Y[ramp(b + i, S, 16)] = T[ramp(i * W + j, 1, 16)]
 *
 * holds R rows of 16 columns whose column c is R contiguous elements at
 * b + c * S.  With AVX-512 the R vectors are transposed in registers, four
 * rows at a time (two rounds of unpacks: lane k of vector m then holds
 * column 4k + m of the four rows), and each column's four elements are
 * stored by one exact store of 16 bytes (8 and 4 for the last rows;
 * tec_tstore_f32x16): 16 stores and 8 shuffles per four rows, where one
 * element per lane would take 64 extracts and stores.  A load across rows
 * (a residual add's operand, read in the tile's write-back) is the same
 * in reverse (tec_tload_f32x16): loads of four columns inserted into each
 * vector, then the same unpacks, which are their own inverse.  The values are the ones the
 * plain code stores and reads, in registers. */

/* The loads across rows of the loop being emitted and their arrays (not
 * under a select: a padding copy's load of the input, out of range where
 * the border is chosen, stays lane by lane). */
#define TR_MAX_LOADS 4
typedef struct tr_state {
    const ir_expr *load[TR_MAX_LOADS];
    int slot[TR_MAX_LOADS];
    int n, nslots;
    const char *row;       /* the rows' variable, in C */
    int64_t lo;
} tr_state;
static _Thread_local tr_state *tr_cur;

static const ir_stmt *tr_only(const ir_stmt *s)
{
    while (s && s->kind == IR_S_SEQ && s->nbody == 1)
        s = s->body[0];
    return s;
}

/* Whether a vector access ramp(b, S, 16) of a one-dimensional f32 buffer
 * has S other than 0 and 1 and row variable i at distance 1 in b. */
static bool tr_across(const ir_buffer *buf, ir_expr *const *idx, int n, const ir_var *i)
{
    ir_affine f;
    if (n != 1 || buf->dtype != IR_F32 || idx[0]->kind != IR_RAMP || idx[0]->b->kind != IR_INT ||
        idx[0]->b->ival == 0 || idx[0]->b->ival == 1 || ir_expr_lanes(idx[0]) != 16 ||
        !ir_affine_of(idx[0]->a, &f))
        return false;
    for (int k = 0; k < f.n; k++)
        if (f.var[k] == i)
            return f.coef[k] == 1;
    return false;
}

typedef struct tr_find {
    tr_state *t;
    const ir_var *i;
} tr_find;

static bool tr_visit_load(const ir_expr *x, void *p)
{
    tr_find *c = p;
    tr_state *t = c->t;
    if (x->kind == IR_SELECT)
        return false;   /* an arm's load may be out of range where it is not chosen */
    if (x->kind != IR_LOAD || !tr_across(x->buf, x->args, x->nargs, c->i) || t->n == TR_MAX_LOADS)
        return true;
    int slot = t->nslots;
    for (int k = 0; k < t->n; k++)
        if (t->load[k]->buf == x->buf && ir_expr_equal(t->load[k]->args[0], x->args[0]))
            slot = t->slot[k];
    t->load[t->n] = x;
    t->slot[t->n++] = slot;
    if (slot == t->nslots)
        t->nslots++;
    return false;
}

/* A load across rows, as its row of the transposed array (emit_vector_load). */
static bool tr_load(cg_str *s, const ir_expr *x)
{
    tr_state *t = tr_cur;
    for (int k = 0; t && k < t->n; k++)
        if (t->load[k] == x) {
            cg_str_printf(s, "tec_tl%d[%s - %lld]", t->slot[k], t->row, (long long)t->lo);
            return true;
        }
    return false;
}

/* The address of lane 0 of a vector access with the row variable at its
 * first value, in a block of its own that binds it. */
static void tr_address(cg_emitter *e, cg_str *s, const ir_stmt *rows, const ir_buffer *b,
                       const void *access, ir_expr *const *idx, const char *fmt, int slot,
                       int64_t R)
{
    cg_line(e, s, "{");
    e->indent++;
    const char *v = cg_bind(e, rows->var, rows->var->name);
    cg_line(e, s, "const %s %s = %lld;", cg_var_ctype(e, rows->var), v,
            (long long)rows->lo->ival);
    cg_str a = {0};
    int64_t coef = 0;
    if (vector_access(e, &a, b, access, idx, 1, &coef)) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", slot);
        cg_line(e, s, fmt, slot >= 0 ? buf : "", (int)R, a.p ? a.p : "0", (long long)coef);
    }
    free(a.p);
    cg_unbind(e, 1);
    e->indent--;
    cg_line(e, s, "}");
}

/* The body of a stepped loop as transposed accesses (see above); false
 * when it is not of that form (the plain printer then prints it). */
static bool emit_transposed(cg_emitter *e, cg_str *s, const ir_stmt *body)
{
    const ir_stmt *rows = tr_only(body);
    if (!e->target || e->target->vector_bytes < 64 || !rows || rows->kind != IR_S_FOR ||
        ir_for_step(rows) > 1 || !rows->lo || !rows->hi || rows->lo->kind != IR_INT ||
        rows->hi->kind != IR_INT || !rows->var || rows->nbody != 1)
        return false;
    int64_t R = rows->hi->ival - rows->lo->ival;
    const ir_stmt *st = tr_only(rows->body[0]);
    if (R < 1 || R > 16 || !st || st->kind != IR_S_STORE || !st->value ||
        st->value->dtype != IR_F32 || ir_expr_lanes(st->value) != 16)
        return false;
    tr_state t = {.lo = rows->lo->ival};
    tr_find f = {&t, rows->var};
    ir_expr_walk(st->value, tr_visit_load, &f);
    bool tstore = tr_across(st->buf, st->args, st->nargs, rows->var);
    if (!tstore && t.n == 0)
        return false;
    e->indent++;
    cg_line(e, s, "{   /* rows %s in %lld..%lld, transposed in registers */", rows->var->name,
            (long long)rows->lo->ival, (long long)rows->hi->ival);
    e->indent++;
    bool declared[TR_MAX_LOADS] = {false};
    for (int k = 0; k < t.n; k++) {
        if (declared[t.slot[k]])
            continue;   /* the same load as an earlier one */
        declared[t.slot[k]] = true;
        cg_line(e, s, "tec_f32x16 tec_tl%d[%lld];", t.slot[k], (long long)R);
        tr_address(e, s, rows, t.load[k]->buf, t.load[k], t.load[k]->args,
                   "tec_tload_f32x16(tec_tl%s, %d, &%s, %lld);", t.slot[k], R);
    }
    if (tstore)
        cg_line(e, s, "tec_f32x16 tec_ts[%lld];", (long long)R);
    const char *ct = cg_var_ctype(e, rows->var);
    const char *v = cg_bind(e, rows->var, rows->var->name);
    cg_line(e, s, "for (%s %s = %lld; %s < %lld; ++%s) {", ct, v, (long long)rows->lo->ival, v,
            (long long)rows->hi->ival, v);
    e->indent++;
    t.row = v;
    tr_state *saved = tr_cur;
    tr_cur = &t;
    if (tstore) {
        cg_str val = {0};
        cg_emit_vector_ir(e, &val, st->value);
        cg_line(e, s, "tec_ts[%s - %lld] = %s;", v, (long long)rows->lo->ival, val.p ? val.p : "0");
        free(val.p);
    } else {
        cg_emit_vector_store(e, s, st);
    }
    tr_cur = saved;
    e->indent--;
    cg_line(e, s, "}");
    cg_unbind(e, 1);
    if (tstore)
        tr_address(e, s, rows, st->buf, st, st->args, "tec_tstore_f32x16(tec_ts%s, %d, &%s, %lld);",
                   -1, R);
    e->indent--;
    cg_line(e, s, "}");
    e->indent--;
    return true;
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
    if (st->nbody < 1 || !emit_transposed(e, s, st->body[0]))
        cg_emit_body(e, s, st->nbody > 0 ? st->body[0] : NULL);
    cg_line(e, s, "}");
    cg_unbind(e, 1);
}

/* The helpers tec_dp4_<x><w>_i32xL that the kernels in `funcs` call (see
 * emit_dot4_sum): acc + the dot products of the 4 bytes of x (x0 in the
 * low byte; u: u8, s: i8) with each lane's 4 bytes of w. */
/* The helpers tec_dpbf16_f32xL that the kernels in `funcs` call (see
 * emit_bf16_pair), and tec_bf16_all_plain, the kernels' check. */
static void emit_bf16_helpers(cg_str *s, const char *funcs)
{
    if (!funcs || !strstr(funcs, "tec_dpbf16_"))
        return;
    cg_str_puts(s, "/* Whether the bf16 bits h are 0, inf, NaN or of magnitude in [2^-50, 2^63). */\n"
                   "static inline int tec_bf16_plain1(uint32_t h)\n{\n"
                   "    h &= 0x7fff;\n"
                   "    return h == 0 || (uint16_t)(h - 0x2680) < 0x3880 || h >= 0x7f80;\n}\n"
                   "static int tec_bf16_all_plain(const uint16_t *p, int64_t n)\n{\n"
                   "    int64_t i = 0;\n"
                   "#if defined(__x86_64__) && defined(__AVX512BW__)\n"
                   "    for (; i + 32 <= n; i += 32) {\n"
                   "        __m512i m;\n"
                   "        __builtin_memcpy(&m, p + i, sizeof m);\n"
                   "        m = _mm512_and_si512(m, _mm512_set1_epi16(0x7fff));\n"
                   "        if (_mm512_cmpneq_epi16_mask(m, _mm512_setzero_si512()) &\n"
                   "            _mm512_cmpge_epu16_mask(_mm512_sub_epi16(m, _mm512_set1_epi16(0x2680)), _mm512_set1_epi16(0x3880)) &\n"
                   "            _mm512_cmplt_epu16_mask(m, _mm512_set1_epi16(0x7f80)))\n"
                   "            return 0;\n"
                   "    }\n"
                   "#endif\n"
                   "    for (; i < n; i++)\n"
                   "        if (!tec_bf16_plain1(p[i]))\n"
                   "            return 0;\n"
                   "    return 1;\n}\n"
                   "static inline float tec_bf16_f32(uint32_t h)\n{\n"
                   "    uint32_t u = h << 16;\n    float f;\n"
                   "    __builtin_memcpy(&f, &u, 4);\n    return f;\n}\n");
    for (int L = 8; L <= 16; L += 8) {
        char name[40];
        snprintf(name, sizeof name, "_f32x%d(", L);
        if (!strstr(funcs, name))
            continue;
        /* the interpreter's sums: each product rounded to f32, then added
         * (the empty asm keeps the compiler from fusing them); W's pairs
         * as two vectors of f32, the first elements' (low halves) and the
         * second's */
        cg_str_printf(s, "static inline tec_f32x%d tec_dpbf16_exact_f32x%d(tec_f32x%d acc, const void *w, uint32_t x)\n{\n"
                         "    tec_mf32x%d u, lo, hi;\n    tec_f32x%d w0, w1, p0, p1;\n"
                         "    __builtin_memcpy(&u, w, sizeof u);\n"
                         "    lo = u << 16;\n    hi = u & (int32_t)0xffff0000;\n"
                         "    __builtin_memcpy(&w0, &lo, sizeof w0);\n    __builtin_memcpy(&w1, &hi, sizeof w1);\n"
                         "    p0 = tec_bf16_f32(x >> 16) * w0;\n    p1 = tec_bf16_f32(x & 0xffff) * w1;\n"
                         "#if defined(__x86_64__)\n    __asm__(\"\" : \"+v\"(p0), \"+v\"(p1));\n"
                         "#else\n    __asm__(\"\" : \"+m\"(p0), \"+m\"(p1));\n#endif\n"
                         "    acc = acc + p0;\n    return acc + p1;\n}\n", L, L, L, L, L);
        const char *p = L == 16 ? "_mm512" : "_mm256", *rf = L == 16 ? "__m512" : "__m256";
        const char *bh = L == 16 ? "__m512bh" : "__m256bh", *ri = L == 16 ? "__m512i" : "__m256i";
        cg_str_printf(s, "static inline tec_f32x%d tec_dpbf16_f32x%d(tec_f32x%d acc, const void *w, uint32_t x, int plain)\n{\n", L, L, L);
        cg_str_printf(s, "#if defined(__x86_64__) && defined(__AVX512BF16__)%s\n",
                      L == 16 ? "" : " && defined(__AVX512VL__)");
        cg_str_printf(s, "    %s a;\n    %s b;\n"
                         "    __builtin_memcpy(&a, &acc, sizeof a);\n"
                         "    __builtin_memcpy(&b, w, sizeof b);\n"
                         "    b = %s_rol_epi32(b, 16);   /* the pairs' first elements high: added first */\n"
                         "    if (plain == 2 || (plain == 1 && !%s_fpclass_ps_mask(a, 0x20))) {   /* no subnormal in acc */\n"
                         "        a = %s_dpbf16_ps(a, (%s)%s_set1_epi32((int)x), (%s)b);\n"
                         "        __builtin_memcpy(&acc, &a, sizeof acc);\n        return acc;\n    }\n"
                         "#else\n    (void)plain;\n#endif\n"
                         "    return tec_dpbf16_exact_f32x%d(acc, w, x);\n}\n\n",
                      rf, ri, p, p, p, bh, p, bh, L);
    }
}

/* The helpers tec_vrint_<t>xL that the kernels in `funcs` call: rint of
 * each lane (in the current rounding mode, ties to even by default), one
 * rounding instruction where the target has it (SSE4.1, AVX, AVX-512). */
static void emit_rint_helpers(cg_str *s, const char *funcs)
{
    for (int f64 = 0; f64 < 2; f64++)
        for (int bytes = 16; bytes <= 64; bytes *= 2) {
            int L = bytes / (f64 ? 8 : 4);
            const char *t = f64 ? "f64" : "f32";
            char name[40];
            snprintf(name, sizeof name, "tec_vrint_%sx%d(", t, L);
            if (!funcs || !strstr(funcs, name))
                continue;
            const char *have = bytes == 64 ? "__AVX512F__" : bytes == 32 ? "__AVX__" : "__SSE4_1__";
            const char *mt = bytes == 64 ? (f64 ? "__m512d" : "__m512")
                           : bytes == 32 ? (f64 ? "__m256d" : "__m256") : (f64 ? "__m128d" : "__m128");
            const char *in = bytes == 64 ? (f64 ? "_mm512_roundscale_pd" : "_mm512_roundscale_ps")
                           : bytes == 32 ? (f64 ? "_mm256_round_pd" : "_mm256_round_ps")
                                         : (f64 ? "_mm_round_pd" : "_mm_round_ps");
            cg_str_printf(s, "static inline tec_%sx%d tec_vrint_%sx%d(tec_%sx%d v)\n{\n"
                             "#if defined(__x86_64__) && defined(%s)\n"
                             "    %s m;\n    __builtin_memcpy(&m, &v, sizeof m);\n"
                             "    m = %s(m, _MM_FROUND_CUR_DIRECTION);\n"
                             "    __builtin_memcpy(&v, &m, sizeof v);\n#else\n"
                             "    for (int l = 0; l < %d; l++)\n        v[l] = %s(v[l]);\n#endif\n"
                             "    return v;\n}\n\n",
                          t, L, t, L, t, L, have, mt, in, L, f64 ? "rint" : "rintf");
        }
}

/* The helper tec_dp4r<z>_<x><w>_i32xL (rname, "...(") of four rows of L
 * bytes (emit_dot4_sum): the rows interleaved into the packed form, then
 * the helper `name` of that.  On x86-64 two rounds of unpacking (bytes of
 * rows 0 and 1, 2 and 3, then their pairs) make the lanes' groups of 4. */
static void emit_dot4_rows_helper(cg_str *s, const char *name, const char *rname, int L, int z)
{
    cg_str_printf(s, "static inline tec_i32x%d %.*s(tec_i32x%d acc, const void *r0, const void *r1, "
                     "const void *r2, const void *r3, uint32_t x%s)\n{\n"
                     "    unsigned char w[%d] __attribute__((aligned(%d)));\n"
                     "#if defined(__x86_64__) && defined(__SSE2__)\n"
                     "    __m128i a, b, c, d, ab, cd, q[4];\n",
                  L, (int)strlen(rname) - 1, rname, L, z ? ", int32_t z" : "", 4 * L, 4 * L);
    if (L == 16)
        cg_str_puts(s, "    __builtin_memcpy(&a, r0, 16);\n    __builtin_memcpy(&b, r1, 16);\n"
                       "    __builtin_memcpy(&c, r2, 16);\n    __builtin_memcpy(&d, r3, 16);\n");
    else
        cg_str_printf(s, "    a = b = c = d = _mm_setzero_si128();\n"
                         "    __builtin_memcpy(&a, r0, %d);\n    __builtin_memcpy(&b, r1, %d);\n"
                         "    __builtin_memcpy(&c, r2, %d);\n    __builtin_memcpy(&d, r3, %d);\n",
                      L, L, L, L);
    cg_str_puts(s, "    ab = _mm_unpacklo_epi8(a, b);\n    cd = _mm_unpacklo_epi8(c, d);\n"
                   "    q[0] = _mm_unpacklo_epi16(ab, cd);\n    q[1] = _mm_unpackhi_epi16(ab, cd);\n"
                   "    ab = _mm_unpackhi_epi8(a, b);\n    cd = _mm_unpackhi_epi8(c, d);\n"
                   "    q[2] = _mm_unpacklo_epi16(ab, cd);\n    q[3] = _mm_unpackhi_epi16(ab, cd);\n");
    if (L == 16)
        cg_str_puts(s, "#if defined(__AVX512F__)\n"
                       "    __m512i v = _mm512_inserti32x4(_mm512_inserti32x4(_mm512_inserti32x4(\n"
                       "        _mm512_castsi128_si512(q[0]), q[1], 1), q[2], 2), q[3], 3);\n"
                       "    __builtin_memcpy(w, &v, 64);\n#else\n"
                       "    __builtin_memcpy(w, q, 64);\n#endif\n");
    else
        cg_str_printf(s, "    __builtin_memcpy(w, q, %d);\n", 4 * L);
    cg_str_puts(s, "#else\n    const unsigned char *p[4] = {r0, r1, r2, r3};\n");
    cg_str_printf(s, "    for (int l = 0; l < %d; l++)\n"
                     "        for (int k = 0; k < 4; k++)\n"
                     "            w[4 * l + k] = p[k][l];\n#endif\n", L);
    cg_str_printf(s, "    return %s acc, w, x%s);\n}\n\n", name, z ? ", z" : "");
}

/* The helpers of a requantize's f64 lanes that the kernels in `funcs`
 * call: tec_cvtd_f64x8 (i32 to f64, exact), tec_vmink_f64x8 and
 * tec_vmaxk_f64x8, and tec_vmink_f32xL and tec_vmaxk_f32xL for L = 4, 8
 * and 16 (against a number b, not NaN: a < b ? a : b, a > b ? a :
 * b, which are vminpd's and vmaxpd's definitions). */
static void emit_requantize_helpers(cg_str *s, const char *funcs)
{
    if (!funcs)
        return;
    if (strstr(funcs, "tec_cvtd_f64x8("))
        cg_str_puts(s, "static inline tec_f64x8 tec_cvtd_f64x8(tec_i32x8 v)\n{\n"
                       "#if defined(__x86_64__) && defined(__AVX512F__)\n"
                       "    __m256i a;\n    __m512d r;\n    tec_f64x8 d;\n"
                       "    __builtin_memcpy(&a, &v, sizeof a);\n"
                       "    r = _mm512_cvtepi32_pd(a);\n"
                       "    __builtin_memcpy(&d, &r, sizeof d);\n    return d;\n#else\n"
                       "    return __builtin_convertvector(v, tec_f64x8);\n#endif\n}\n\n");
    for (int rounds = 0; rounds < 2; rounds++) {
        /* tec_sati8_f64x8(v): sat_i8 of v; tec_satri8_f64x8(v): of rint(v),
         * the conversion rounding as rint does (the current mode) */
        const char *name = rounds ? "tec_satri8_f64x8" : "tec_sati8_f64x8";
        char call[32];
        snprintf(call, sizeof call, "%s(", name);
        if (!strstr(funcs, call))
            continue;
        cg_str_printf(s, "static inline tec_i8x8 %s(tec_f64x8 v)\n{\n"
                         "#if defined(__x86_64__) && defined(__AVX512F__)\n"
                         "    __m512d x;\n    __m128i r;\n    tec_i8x8 y;\n"
                         "    __builtin_memcpy(&x, &v, sizeof x);\n"
                         "    r = _mm512_cvtsepi32_epi8(_mm512_castsi256_si512(\n"
                         "        _mm512_cvt%spd_epi32(_mm512_min_pd(_mm512_set1_pd(127.0), x))));\n"
                         "    __builtin_memcpy(&y, &r, sizeof y);\n    return y;\n#else\n"
                         "    tec_i8x8 y;\n"
                         "    for (int l = 0; l < 8; l++) {\n"
                         "        double u = %s;\n"
                         "        y[l] = (int8_t)(u > -128.0 ? (u < 127.0 ? u : 127.0) : -128.0);\n"
                         "    }\n"
                         "    return y;\n#endif\n}\n\n",
                      name, rounds ? "" : "t", rounds ? "rint(v[l])" : "v[l]");
    }
    /* f32 lanes: a compare and a blend in plain vector C (compilers make
     * them one minps where they see it; an intrinsic would make every
     * kernel with a ReLU include <immintrin.h>, a slower compile) */
    for (int mx = 0; mx < 2; mx++)
        for (int L = 4; L <= 16; L *= 2) {
            const char *op = mx ? "max" : "min";
            char name[32];
            snprintf(name, sizeof name, "tec_v%sk_f32x%d(", op, L);
            if (!strstr(funcs, name))
                continue;
            /* GCC does not see the minps in the blend of 16 lanes (a
             * compare, a zeroing move and a blend): its built-in, whose
             * result is the second operand unless a < v (a > v) */
            const char *isa = L == 16 ? "__AVX512F__" : L == 8 ? "__AVX__" : "__SSE__";
            cg_str_printf(s, "static inline tec_f32x%d tec_v%sk_f32x%d(tec_f32x%d a, float b)\n{\n"
                             "    tec_f32x%d v = tec_bcast_f32x%d(b);\n"
                             "#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(%s)\n"
                             "    typedef float tec_v __attribute__((vector_size(%d)));\n",
                          L, op, L, L, L, L, isa, 4 * L);
            if (L == 16)
                cg_str_printf(s, "    return (tec_f32x16)__builtin_ia32_%sps512_mask((tec_v)a, (tec_v)v, (tec_v)v, "
                                 "(unsigned short)-1, 4);\n", op);
            else
                cg_str_printf(s, "    return (tec_f32x%d)__builtin_ia32_%sps%s((tec_v)a, (tec_v)v);\n", L, op,
                              L == 8 ? "256" : "");
            cg_str_printf(s, "#else\n"
                             "    tec_mf32x%d m = a %c v;\n"
                             "    return (tec_f32x%d)(((tec_mf32x%d)a & m) | ((tec_mf32x%d)v & ~m));\n#endif\n}\n\n",
                          L, mx ? '>' : '<', L, L, L);
        }
    for (int mx = 0; mx < 2; mx++) {
        const char *op = mx ? "max" : "min";
        char name[32];
        snprintf(name, sizeof name, "tec_v%sk_f64x8(", op);
        if (!strstr(funcs, name))
            continue;
        cg_str_printf(s, "static inline tec_f64x8 tec_v%sk_f64x8(tec_f64x8 a, double b)\n{\n"
                         "#if defined(__x86_64__) && defined(__AVX512F__)\n"
                         "    __m512d x;\n"
                         "    __builtin_memcpy(&x, &a, sizeof x);\n"
                         "    x = _mm512_%s_pd(x, _mm512_set1_pd(b));\n"
                         "    __builtin_memcpy(&a, &x, sizeof a);\n    return a;\n#else\n"
                         "    tec_mf64x8 m = a %c (tec_f64x8){b, b, b, b, b, b, b, b};\n"
                         "    return (tec_f64x8)(((tec_mf64x8)a & m) | ((tec_mf64x8)((tec_f64x8){b, b, b, b, b, b, b, b}) & ~m));\n"
                         "#endif\n}\n\n", op, op, mx ? '>' : '<');
    }
}

/* tec_tstore_f32x16 and tec_tload_f32x16 (emit_transposed), when the
 * kernels call them: n rows v[0..n) of 16 lanes to and from 16 columns of
 * n contiguous elements, column c at p + c * s.  With AVX-512 they are
 * the instructions of <immintrin.h>'s unpacks, 128-bit extracts and
 * inserts and 64-bit moves, written as that header writes them (GCC's
 * built-in functions, clang's vector shuffles) so that a unit that
 * transposes need not read it: 0.3 s of the C compiler's CPU in each
 * (with -march=native, 0.2 s from a precompiled header); the kernels'
 * instructions are the same (bench/results/compile_s30.txt).  Other
 * compilers and targets copy lane by lane. */
static void emit_transpose_helpers(cg_str *s, const char *funcs)
{
    if (!funcs || (!strstr(funcs, "tec_tstore_f32x16(") && !strstr(funcs, "tec_tload_f32x16(")))
        return;
    cg_str_puts(s,
        "#if defined(__x86_64__) && defined(__AVX512F__) && (defined(__GNUC__) || defined(__clang__))\n"
        "#define TEC_TR_AVX512 1\n"
        "typedef float tec_tr4 __attribute__((vector_size(16)));\n"
        "typedef float tec_tr4u __attribute__((vector_size(16), aligned(4), may_alias));\n"
        "typedef float tec_tr2u __attribute__((vector_size(8), aligned(4), may_alias));\n"
        "typedef float tec_tr16 __attribute__((vector_size(64)));\n"
        "typedef double tec_tr8d __attribute__((vector_size(64)));\n"
        "#ifdef __clang__\n"
        "#define TEC_UNPCKLPS(a, b) __builtin_shufflevector(a, b, 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29)\n"
        "#define TEC_UNPCKHPS(a, b) __builtin_shufflevector(a, b, 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31)\n"
        "#define TEC_UNPCKLPD(a, b) __builtin_shufflevector(a, b, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29)\n"
        "#define TEC_UNPCKHPD(a, b) __builtin_shufflevector(a, b, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31)\n"
        "#define TEC_WIDEN4(x) __builtin_shufflevector(x, x, 0, 1, 2, 3, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)\n"
        "#define TEC_INSERT4(a, b, k) __builtin_ia32_insertf32x4(a, b, k)\n"
        "#define TEC_STOREL(p, x) (*(tec_tr2u *)(p) = __builtin_shufflevector(x, x, 0, 1))\n"
        "#define TEC_LOADL(a, p) __builtin_shufflevector(a, __builtin_shufflevector(*(const tec_tr2u *)(p), \\\n"
        "    *(const tec_tr2u *)(p), 0, 1, 0, 1), 4, 5, 2, 3)\n"
        "#define TEC_MOVEHL(a, b) __builtin_shufflevector(a, b, 6, 7, 2, 3)\n"
        "#define TEC_MOVELH(a, b) __builtin_shufflevector(a, b, 0, 1, 4, 5)\n"
        "#else\n"
        "#define TEC_UNPCKLPS(a, b) __builtin_ia32_unpcklps512_mask(a, b, a, (unsigned short)-1)\n"
        "#define TEC_UNPCKHPS(a, b) __builtin_ia32_unpckhps512_mask(a, b, a, (unsigned short)-1)\n"
        "#define TEC_UNPCKLPD(a, b) \\\n"
        "    (tec_tr16)__builtin_ia32_unpcklpd512_mask((tec_tr8d)(a), (tec_tr8d)(b), (tec_tr8d)(a), (unsigned char)-1)\n"
        "#define TEC_UNPCKHPD(a, b) \\\n"
        "    (tec_tr16)__builtin_ia32_unpckhpd512_mask((tec_tr8d)(a), (tec_tr8d)(b), (tec_tr8d)(a), (unsigned char)-1)\n"
        "#define TEC_WIDEN4(x) __builtin_ia32_ps512_ps(x)\n"
        "#define TEC_INSERT4(a, b, k) __builtin_ia32_insertf32x4_mask(a, b, k, a, (unsigned short)-1)\n"
        "#define TEC_STOREL(p, x) __builtin_ia32_storelps((tec_tr2u *)(p), x)\n"
        "#define TEC_LOADL(a, p) __builtin_ia32_loadlps(a, (const tec_tr2u *)(p))\n"
        "#define TEC_MOVEHL(a, b) __builtin_ia32_movhlps(a, b)\n"
        "#define TEC_MOVELH(a, b) __builtin_ia32_movlhps(a, b)\n"
        "#endif\n"
        "#define TEC_EXTRACT4(a, k) __builtin_ia32_extractf32x4_mask(a, k, (tec_tr4){0}, (unsigned char)-1)\n"
        "/* rows a..d: lane k of u[m] becomes column 4k + m of the four (its own inverse) */\n"
        "static inline void tec_tr4x4_f32x16(tec_tr16 a, tec_tr16 b, tec_tr16 c, tec_tr16 d, tec_tr16 *u)\n"
        "{\n"
        "    tec_tr16 t0 = TEC_UNPCKLPS(a, b), t1 = TEC_UNPCKHPS(a, b);\n"
        "    tec_tr16 t2 = TEC_UNPCKLPS(c, d), t3 = TEC_UNPCKHPS(c, d);\n"
        "    u[0] = TEC_UNPCKLPD(t0, t2);\n"
        "    u[1] = TEC_UNPCKHPD(t0, t2);\n"
        "    u[2] = TEC_UNPCKLPD(t1, t3);\n"
        "    u[3] = TEC_UNPCKHPD(t1, t3);\n"
        "}\n"
        "/* rows (1 to 4) contiguous elements at p: exact unmasked accesses (a masked\n"
        " * access across a cache line costs many times more on some cores) */\n"
        "static inline void tec_st4_f32(float *p, tec_tr4 x, int rows)\n"
        "{\n"
        "    if (rows == 4)\n"
        "        *(tec_tr4u *)p = x;\n"
        "    else {\n"
        "        if (rows >= 2)\n"
        "            TEC_STOREL(p, x);\n"
        "        if (rows != 2)\n"
        "            p[rows == 3 ? 2 : 0] = (rows == 3 ? TEC_MOVEHL(x, x) : x)[0];\n"
        "    }\n"
        "}\n"
        "static inline tec_tr4 tec_ld4_f32(const float *p, int rows)\n"
        "{\n"
        "    if (rows == 4)\n"
        "        return *(const tec_tr4u *)p;\n"
        "    tec_tr4 lo = rows >= 2 ? TEC_LOADL((tec_tr4){0}, p) : (tec_tr4){p[0], 0, 0, 0};\n"
        "    return rows == 3 ? TEC_MOVELH(lo, ((tec_tr4){p[2], 0, 0, 0})) : lo;\n"
        "}\n"
        "#endif\n"
        "static inline void tec_tstore_f32x16(const tec_f32x16 *v, int n, float *p, int64_t s)\n"
        "{\n"
        "#ifdef TEC_TR_AVX512\n"
        "    for (int g = 0; g < n; g += 4) {\n"
        "        tec_tr16 z = {0}, u[4];\n"
        "        tec_tr4x4_f32x16((tec_tr16)v[g], g + 1 < n ? (tec_tr16)v[g + 1] : z,\n"
        "                         g + 2 < n ? (tec_tr16)v[g + 2] : z, g + 3 < n ? (tec_tr16)v[g + 3] : z, u);\n"
        "        int rows = n - g < 4 ? n - g : 4;\n"
        "        for (int m = 0; m < 4; m++) {\n"
        "            tec_st4_f32(p + g + m * s, TEC_EXTRACT4(u[m], 0), rows);\n"
        "            tec_st4_f32(p + g + (4 + m) * s, TEC_EXTRACT4(u[m], 1), rows);\n"
        "            tec_st4_f32(p + g + (8 + m) * s, TEC_EXTRACT4(u[m], 2), rows);\n"
        "            tec_st4_f32(p + g + (12 + m) * s, TEC_EXTRACT4(u[m], 3), rows);\n"
        "        }\n"
        "    }\n"
        "#else\n"
        "    for (int r = 0; r < n; r++)\n"
        "        for (int l = 0; l < 16; l++)\n"
        "            p[l * s + r] = v[r][l];\n"
        "#endif\n"
        "}\n"
        "static inline void tec_tload_f32x16(tec_f32x16 *v, int n, const float *p, int64_t s)\n"
        "{\n"
        "#ifdef TEC_TR_AVX512\n"
        "    for (int g = 0; g < n; g += 4) {\n"
        "        int rows = n - g < 4 ? n - g : 4;\n"
        "        tec_tr16 u[4], w[4];\n"
        "        for (int m = 0; m < 4; m++) {\n"
        "            u[m] = TEC_WIDEN4(tec_ld4_f32(p + g + m * s, rows));\n"
        "            u[m] = TEC_INSERT4(u[m], tec_ld4_f32(p + g + (4 + m) * s, rows), 1);\n"
        "            u[m] = TEC_INSERT4(u[m], tec_ld4_f32(p + g + (8 + m) * s, rows), 2);\n"
        "            u[m] = TEC_INSERT4(u[m], tec_ld4_f32(p + g + (12 + m) * s, rows), 3);\n"
        "        }\n"
        "        tec_tr4x4_f32x16(u[0], u[1], u[2], u[3], w);\n"
        "        for (int r = 0; r < rows; r++)\n"
        "            v[g + r] = (tec_f32x16)w[r];\n"
        "    }\n"
        "#else\n"
        "    for (int r = 0; r < n; r++)\n"
        "        for (int l = 0; l < 16; l++)\n"
        "            v[r][l] = p[l * s + r];\n"
        "#endif\n"
        "}\n\n");
}

/* TEC_PERMUTE(vt, mt, a, b, (lanes), (lanes')): the vector vt of the lanes
 * of a and b, two windows of a permuted load (emit_permuted_load), as
 * __builtin_shufflevector picks them (its lanes numbered a's then b's); GCC
 * before 12 has only __builtin_shuffle, of operands as wide as the result:
 * a and b widened to vt, numbered lanes' (b's from vt's width on). */
static void emit_permute_helpers(cg_str *s, const char *funcs)
{
    if (!funcs || !strstr(funcs, "TEC_PERMUTE("))
        return;
    cg_str_puts(s, "#define TEC_UNPAREN(...) __VA_ARGS__\n"
                   "#if defined(__clang__) || __GNUC__ >= 12\n"
                   "#define TEC_PERMUTE(vt, mt, a, b, I, J) ((vt)__builtin_shufflevector(a, b, TEC_UNPAREN I))\n"
                   "#else\n"
                   "#define TEC_PERMUTE(vt, mt, a, b, I, J) ({ __typeof__(a) tec_pa = (a), tec_pb = (b); \\\n"
                   "    vt tec_wa = {0}, tec_wb = {0}; __builtin_memcpy(&tec_wa, &tec_pa, sizeof tec_pa); \\\n"
                   "    __builtin_memcpy(&tec_wb, &tec_pb, sizeof tec_pb); \\\n"
                   "    (vt)__builtin_shuffle(tec_wa, tec_wb, (mt){TEC_UNPAREN J}); })\n"
                   "#endif\n\n");
}

void cg_emit_dot4_helpers(cg_str *s, const char *funcs)
{
    emit_permute_helpers(s, funcs);
    emit_transpose_helpers(s, funcs);
    emit_bf16_helpers(s, funcs);
    emit_rint_helpers(s, funcs);
    emit_requantize_helpers(s, funcs);
    static const int widths[3] = {4, 8, 16};
    for (int z = 0; z < 2; z++)
    for (int m = 0; m < 4; m++)
        for (int wi = 0; wi < 3; wi++) {
            char xs = m & 1 ? 's' : 'u', ws = m & 2 ? 'u' : 's';
            int L = widths[wi], bits = L * 32;
            const char *zs = z ? "z" : "";
            char name[40], rname[40];
            snprintf(name, sizeof name, "tec_dp4%s_%c%c_i32x%d(", zs, xs, ws, L);
            snprintf(rname, sizeof rname, "tec_dp4r%s_%c%c_i32x%d(", zs, xs, ws, L);
            bool rows = funcs && strstr(funcs, rname);
            if (!funcs || (!strstr(funcs, name) && !rows) || (z && ws == 'u'))
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
            if (rows)
                emit_dot4_rows_helper(s, name, rname, L, z);
        }
}
