/* codegen/emit_prelude.c — the opening of a generated C file: the comment
 * that says what it is, includes, the runtime hooks it calls, the GCC vector
 * types of its vector loops and the helper functions (floordiv, checked
 * casts, min/max, small floats, ...) its kernels used, each written only when
 * used; and the growable text the files of the C backend write into.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "codegen/emit_c.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/smallfloat.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* ---------------------------------------------------------------- growable text */

void cg_str_putn(cg_str *s, const char *t, size_t n)
{
    if (s->oom)
        return;
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (s->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(s->p, cap);
        if (!p) {
            s->oom = true;
            return;
        }
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + s->len, t, n);
    s->len += n;
    s->p[s->len] = '\0';
}

void cg_str_puts(cg_str *s, const char *t) { cg_str_putn(s, t, strlen(t)); }

void cg_str_vprintf(cg_str *s, const char *fmt, va_list ap)
{
    char small[256];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        s->oom = true;
    } else if ((size_t)n < sizeof small) {
        cg_str_putn(s, small, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (!big) {
            s->oom = true;
        } else {
            vsnprintf(big, (size_t)n + 1, fmt, again);
            cg_str_putn(s, big, (size_t)n);
            free(big);
        }
    }
    va_end(again);
}

void cg_str_printf(cg_str *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cg_str_vprintf(s, fmt, ap);
    va_end(ap);
}

/* Appends text that ends up inside a C comment: "*" followed by "/" would
 * end the comment early and control characters would break the layout. */
void cg_str_put_comment_text(cg_str *s, const char *t)
{
    for (const char *p = t; p && *p; p++) {
        if (p[0] == '*' && p[1] == '/')
            cg_str_puts(s, "* ");
        else if ((unsigned char)*p < 0x20 || *p == 0x7f)
            cg_str_putn(s, " ", 1);
        else
            cg_str_putn(s, p, 1);
    }
}

const char *cg_dtype_suffix(ir_dtype t)
{
    switch (t) {
    case IR_BOOL: return "b";
    case IR_I8: return "i8";
    case IR_U8: return "u8";
    case IR_I16: return "i16";
    case IR_I32: return "i32";
    case IR_I64: return "i64";
    case IR_F16: return "f16";
    case IR_BF16: return "bf16";
    case IR_F32: return "f32";
    case IR_F64: return "f64";
    default: return "x";
    }
}

/* ---------------------------------------------------------------- the file */

static void emit_helpers(cg_emitter *e, cg_str *s)
{
    bool *h = e->helper_used;
    /* Checked helpers and i32 ones are written in terms of the i64 ones. */
    h[H_FLOORDIV_I32] |= h[H_FLOORDIV_I32_CHK];
    h[H_FLOORMOD_I32] |= h[H_FLOORMOD_I32_CHK];
    h[H_FLOORDIV_I64] |= h[H_FLOORDIV_I64_CHK] || h[H_FLOORDIV_I32];
    h[H_FLOORMOD_I64] |= h[H_FLOORMOD_I64_CHK] || h[H_FLOORMOD_I32];

    if (h[H_FLOORDIV_I64])
        cg_str_puts(s,
            "/* Integer division rounding toward -infinity (C's / truncates toward\n"
            " * zero).  b == -1 is done by hand: INT64_MIN / -1 wraps instead of\n"
            " * trapping. */\n"
            "static inline int64_t tec_floordiv_i64(int64_t a, int64_t b)\n"
            "{\n"
            "    if (b == -1)\n"
            "        return (int64_t)(0 - (uint64_t)a);\n"
            "    int64_t q = a / b;\n"
            "    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;\n"
            "}\n\n");
    if (h[H_FLOORMOD_I64])
        cg_str_puts(s,
            "/* a - b * floordiv(a, b): the result has the sign of b. */\n"
            "static inline int64_t tec_floormod_i64(int64_t a, int64_t b)\n"
            "{\n"
            "    if (b == -1)\n"
            "        return 0;\n"
            "    int64_t r = a % b;\n"
            "    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;\n"
            "}\n\n");
    if (h[H_FLOORDIV_I32])
        cg_str_puts(s,
            "static inline int32_t tec_floordiv_i32(int32_t a, int32_t b)\n"
            "{\n"
            "    return (int32_t)tec_floordiv_i64(a, b);\n"
            "}\n\n");
    if (h[H_FLOORMOD_I32])
        cg_str_puts(s,
            "static inline int32_t tec_floormod_i32(int32_t a, int32_t b)\n"
            "{\n"
            "    return (int32_t)tec_floormod_i64(a, b);\n"
            "}\n\n");
    static const struct { int id; const char *op, *t; } chk[] = {
        {H_FLOORDIV_I64_CHK, "floordiv", "i64"}, {H_FLOORMOD_I64_CHK, "floormod", "i64"},
        {H_FLOORDIV_I32_CHK, "floordiv", "i32"}, {H_FLOORMOD_I32_CHK, "floormod", "i32"},
    };
    bool any_chk = false;
    for (size_t i = 0; i < sizeof chk / sizeof *chk; i++) {
        if (!h[chk[i].id])
            continue;
        if (!any_chk)
            cg_str_puts(s, "/* Divisors that may be zero: stop the kernel (see its wrapper). */\n");
        any_chk = true;
        const char *ct = strcmp(chk[i].t, "i64") == 0 ? "int64_t" : "int32_t";
        cg_str_printf(s,
            "static inline %s tec_%s_%s_chk(%s a, %s b, jmp_buf jb)\n"
            "{\n"
            "    if (b == 0)\n"
            "        longjmp(jb, 1);\n"
            "    return tec_%s_%s(a, b);\n"
            "}\n\n", ct, chk[i].op, chk[i].t, ct, ct, chk[i].op, chk[i].t);
    }
    bool any_cast = false;
    for (int to = 0; to < IR_NDTYPES; to++)
        for (int from = 0; from < IR_NDTYPES; from++) {
            if (!e->cast_used[to][from])
                continue;
            if (!any_cast)
                cg_str_printf(s, "/* Float to integer, truncating toward zero; NaN and values out of\n"
                              " * the target's range stop the kernel (see its wrapper), leaving\n"
                              " * the value and the target dtype for the message. */\n"
                              "%sdouble tec_cast_value;\n"
                              "%sint tec_cast_to;\n\n", cg_linkage(e), cg_linkage(e));
            any_cast = true;
            const char *tt = cg_value_ctype((ir_dtype)to), *ft = cg_value_ctype((ir_dtype)from);
            int64_t lo, hi;
            ir_dtype_int_range((ir_dtype)to, &lo, &hi);
            cg_str_printf(s,
                "static inline %s tec_cast_%s_%s(%s x, jmp_buf jb)\n"
                "{\n"
                "    double t = trunc((double)x);\n"
                "    if (!(t >= %.1f && t < %.1f)) {\n"
                "        tec_cast_value = (double)x;\n"
                "        tec_cast_to = %d;\n"
                "        longjmp(jb, 2);\n"
                "    }\n"
                "    return (%s)t;\n"
                "}\n\n", tt, cg_dtype_suffix((ir_dtype)to), cg_dtype_suffix((ir_dtype)from), ft,
                (double)lo, (double)hi + 1.0, to, tt);
        }
    if (e->index_check_used)
        cg_str_puts(s,
            "/* An index the compiler could not prove in range: outside [0, n) it\n"
            " * stops the kernel (see its wrapper), leaving the site and the value\n"
            " * for the message in this thread's copies. */\n"
            "_Thread_local int64_t tec_index_value;\n"
            "_Thread_local int tec_index_site;\n\n"
            "static inline int64_t tec_index(int64_t i, int64_t n, int site, jmp_buf jb)\n"
            "{\n"
            "    if (__builtin_expect((uint64_t)i >= (uint64_t)n, 0)) {\n"
            "        tec_index_value = i;\n"
            "        tec_index_site = site;\n"
            "        longjmp(jb, 3);\n"
            "    }\n"
            "    return i;\n"
            "}\n\n");
    if (h[H_ABS_I64] || h[H_ABS_I32])
        cg_str_puts(s,
            "/* |x| with abs(INT64_MIN) wrapping to itself instead of trapping. */\n"
            "static inline int64_t tec_abs_i64(int64_t x)\n"
            "{\n"
            "    return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;\n"
            "}\n\n");
    if (h[H_ABS_I32])
        cg_str_puts(s, "static inline int32_t tec_abs_i32(int32_t x) { return (int32_t)tec_abs_i64(x); }\n\n");
    for (int t = 0; t < IR_NDTYPES; t++) {
        if (!cg_is_supported_dtype((ir_dtype)t))
            continue;
        const char *ct = cg_value_ctype((ir_dtype)t), *sfx = cg_dtype_suffix((ir_dtype)t);
        if (e->min_used[t])
            cg_str_printf(s, "static inline %s tec_min_%s(%s a, %s b) { return a < b ? a : b; }\n",
                       ct, sfx, ct, ct);
        if (e->max_used[t])
            cg_str_printf(s, "static inline %s tec_max_%s(%s a, %s b) { return a > b ? a : b; }\n",
                       ct, sfx, ct, ct);
        if (e->min_used[t] || e->max_used[t])
            cg_str_puts(s, "\n");
    }
    if (h[H_SMALLFLOAT])
        cg_str_printf(s, "/* f16 and bf16 (round to nearest even), as the interpreter has them. */\n%s\n",
                   IR_SMALLFLOAT_CODE(IR_SMALLFLOAT_TEXT));
    if (h[H_RSQRT_F32])
        cg_str_puts(s, "static inline float tec_rsqrt_f32(float x) { return 1.0f / sqrtf(x); }\n");
    if (h[H_RSQRT_F64])
        cg_str_puts(s, "static inline double tec_rsqrt_f64(double x) { return 1.0 / sqrt(x); }\n");
    if (h[H_SIGMOID_F32])
        cg_str_puts(s, "static inline float tec_sigmoid_f32(float x) { return 1.0f / (1.0f + expf(-x)); }\n");
    if (h[H_SIGMOID_F64])
        cg_str_puts(s, "static inline double tec_sigmoid_f64(double x) { return 1.0 / (1.0 + exp(-x)); }\n");
    if (h[H_RSQRT_F32] || h[H_RSQRT_F64] || h[H_SIGMOID_F32] || h[H_SIGMOID_F64])
        cg_str_puts(s, "\n");
}

/* The x86 instruction that widens the integers of a 16-byte register
 * (sign- or zero-extending) to `bytes` bytes of `to`, and the macro that
 * says the target has it; NULL when there is none. */
static const char *widening_intrinsic(ir_dtype to, ir_dtype from, int bytes, const char **isa)
{
    const char *op = to == IR_I32 ? (from == IR_I8 ? "cvtepi8_epi32" : from == IR_U8 ? "cvtepu8_epi32"
                                     : from == IR_I16 ? "cvtepi16_epi32" : NULL)
                   : to == IR_I16 ? (from == IR_I8 ? "cvtepi8_epi16" : from == IR_U8 ? "cvtepu8_epi16"
                                     : NULL)
                                  : NULL;
    static char name[40];
    if (!op)
        return NULL;
    *isa = bytes == 16 ? "__SSE4_1__" : bytes == 32 ? "__AVX2__"
         : to == IR_I16 ? "__AVX512BW__" : "__AVX512F__";
    snprintf(name, sizeof name, "%s_%s", bytes == 16 ? "_mm" : bytes == 32 ? "_mm256" : "_mm512",
             op);
    return bytes == 16 || bytes == 32 || bytes == 64 ? name : NULL;
}

/* tec_cvt_i32x16_i8(v): the integers of v widened, lane by lane as C's
 * cast (tec_cvt_f32x16_bf16: bf16 bits as f32, exact).  One x86 instruction where the target has it (GCC 12 lowers
 * __builtin_convertvector of a 4x widening lane by lane), else
 * __builtin_convertvector. */
static void emit_vector_widening(cg_emitter *e, cg_str *s)
{
    for (int to = 0; to < IR_NDTYPES; to++)
        for (int from = 0; from < IR_NDTYPES; from++)
            for (int k = 0; k < 8; k++) {
                if (!e->vcvt_used[to][from][k])
                    continue;
                int lanes = 1 << k;
                const char *ts = cg_dtype_suffix((ir_dtype)to), *fs = cg_dtype_suffix((ir_dtype)from);
                cg_str_printf(s, "static inline tec_%sx%d tec_cvt_%sx%d_%s(tec_%sx%d v)\n{\n", ts,
                              lanes, ts, lanes, fs, fs, lanes);
                if (from == IR_BF16) {   /* to f32: the 16 bits on top of 16 zero bits */
                    cg_str_printf(s, "    tec_mf32x%d u = __builtin_convertvector(v, tec_mf32x%d) << 16;\n"
                                     "    tec_f32x%d f;\n    __builtin_memcpy(&f, &u, sizeof f);\n"
                                     "    return f;\n}\n", lanes, lanes, lanes);
                    continue;
                }
                const char *isa = NULL;
                const char *in = widening_intrinsic((ir_dtype)to, (ir_dtype)from,
                                                    lanes * ir_dtype_size((ir_dtype)to), &isa);
                bool fits = lanes * ir_dtype_size((ir_dtype)from) <= 16;
                if (in && fits)
                    cg_str_printf(s, "#if defined(__x86_64__) && defined(%s)\n"
                                  "    __m128i t = _mm_setzero_si128();\n"
                                  "    __builtin_memcpy(&t, &v, sizeof v);\n"
                                  "    return (tec_%sx%d)%s(t);\n"
                                  "#else\n", isa, ts, lanes, in);
                cg_str_printf(s, "    return __builtin_convertvector(v, tec_%sx%d);\n", ts, lanes);
                if (in && fits)
                    cg_str_puts(s, "#endif\n");
                cg_str_puts(s, "}\n");
            }
}

/* The opening of helper tec_v<op><n>_<t>x<lanes>: its signature and, with
 * isa (an x86 target's vectors of t), the #if of GCC's x86 built-ins and
 * their vector type tec_v. */
static void open_minmax(cg_str *s, ir_dtype t, int lanes, const char *op, const char *n, const char *isa)
{
    const char *sf = cg_dtype_suffix(t);
    cg_str_printf(s, "static inline tec_%sx%d tec_v%s%s_%sx%d(tec_%sx%d a, tec_%sx%d b)\n{\n",
                  sf, lanes, op, n, sf, lanes, sf, lanes, sf, lanes);
    if (isa)
        cg_str_printf(s, "#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(%s)\n"
                         "    typedef %s tec_v __attribute__((vector_size(%d)));\n",
                      isa, ir_dtype_ctype(t), lanes * ir_dtype_size(t));
}

/* fmin and fmax lane by lane, as the interpreter's C99 calls (glibc's):
 * fmax(a, b) is a when a >= b or b is NaN, else b -- a NaN operand yields
 * the other one, and of equal values (-0 and +0) the first is kept.  On
 * x86 that is the max instruction with its operands swapped (maxps(b, a)
 * is b > a ? b : a, so a of equal values and when either is NaN) in the
 * lanes where a is not NaN, b in the others: a compare and a masked max
 * with AVX-512, a compare, a max and a blend with AVX or SSE4.1, where the
 * plain form's compare, compare, or and blend took half as long again (a
 * 3x3 max pooling of stride 2, 64 channels from 111x111: 137 to 95 us on
 * one thread).  GCC's x86 built-in functions, not <immintrin.h>: parsing
 * that header costs a translation unit 0.14 s of CPU, and every ReLU
 * kernel uses these helpers.  Other compilers, integers and vectors of
 * other sizes take the plain form. */
static void emit_vminmax(cg_str *s, ir_dtype t, int lanes)
{
    const char *sf = cg_dtype_suffix(t);
    int bytes = lanes * ir_dtype_size(t);
    const char *isa = bytes == 64 ? "__AVX512F__" : bytes == 32 ? "__AVX__" : bytes == 16 ? "__SSE4_1__" : NULL;
    const char *ps = t == IR_F64 ? "pd" : "ps";
    bool x86 = isa && (t == IR_F32 || t == IR_F64);
    for (int mx = 0; mx < 2; mx++) {
        const char *op = mx ? "max" : "min";
        open_minmax(s, t, lanes, op, "", x86 ? isa : NULL);
        if (x86) {
            if (bytes == 64)   /* _CMP_ORD_Q, a mask of all lanes, _MM_FROUND_CUR_DIRECTION */
                cg_str_printf(s, "    return (tec_%sx%d)__builtin_ia32_%s%s512_mask((tec_v)b, (tec_v)a, (tec_v)b,\n"
                                 "        __builtin_ia32_cmp%s512_mask((tec_v)a, (tec_v)a, 7, (%s)-1, 4), 4);\n",
                              sf, lanes, op, ps, ps, t == IR_F64 ? "unsigned char" : "unsigned short");
            else if (bytes == 32)   /* _CMP_UNORD_Q */
                cg_str_printf(s, "    return (tec_%sx%d)__builtin_ia32_blendv%s256(__builtin_ia32_%s%s256((tec_v)b, (tec_v)a),\n"
                                 "        (tec_v)b, __builtin_ia32_cmp%s256((tec_v)a, (tec_v)a, 3));\n",
                              sf, lanes, ps, op, ps, ps);
            else
                cg_str_printf(s, "    return (tec_%sx%d)__builtin_ia32_blendv%s(__builtin_ia32_%s%s((tec_v)b, (tec_v)a),\n"
                                 "        (tec_v)b, __builtin_ia32_cmpunord%s((tec_v)a, (tec_v)a));\n",
                              sf, lanes, ps, op, ps, ps);
            cg_str_puts(s, "#else\n");
        }
        cg_str_printf(s, "    tec_m%sx%d m = (a %s b) | (b != b);\n"
                         "    return (tec_%sx%d)(((tec_m%sx%d)a & m) | ((tec_m%sx%d)b & ~m));\n",
                      sf, lanes, mx ? ">=" : "<=", sf, lanes, sf, lanes, sf, lanes);
        cg_str_puts(s, x86 ? "#endif\n}\n" : "}\n");
        /* tec_vmaxn_ (tec_vminn_): a is not NaN (a load of an accumulator
         * that holds numbers only, cg_holds_numbers), so fmax(a, b) is
         * maxps(b, a) alone, without the compare on a's chain */
        if (t != IR_F32 && t != IR_F64)
            continue;
        open_minmax(s, t, lanes, op, "n", x86 ? isa : NULL);
        if (x86) {
            if (bytes == 64)
                cg_str_printf(s, "    return (tec_%sx%d)__builtin_ia32_%s%s512_mask((tec_v)b, (tec_v)a, (tec_v)b, (%s)-1, 4);\n",
                              sf, lanes, op, ps, t == IR_F64 ? "unsigned char" : "unsigned short");
            else
                cg_str_printf(s, "    return (tec_%sx%d)__builtin_ia32_%s%s%s((tec_v)b, (tec_v)a);\n",
                              sf, lanes, op, ps, bytes == 32 ? "256" : "");
            cg_str_puts(s, "#else\n");
        }
        cg_str_printf(s, "    return tec_v%s_%sx%d(a, b);\n", op, sf, lanes);
        cg_str_puts(s, x86 ? "#endif\n}\n" : "}\n");
    }
}

/* GCC vector types (4-byte alignment: loads and stores may be unaligned;
 * may_alias: they read and write arrays of their element type), and the
 * helpers vector loops use. */
/* How the threads share a parallel loop's iterations (emit_parallel_loop).
 * Each thread owns the contiguous share a static split gives it and takes
 * it from the front in pieces of a quarter of what is left; a thread whose
 * share is done takes the back half of what is left of another's.  While
 * the threads run at one speed each does its own share, as with
 * schedule(static), so the next loop finds the data each thread wrote in
 * its own cache; when one runs slower (a vCPU whose core another guest
 * shares), the other takes over the rest of its share instead of waiting
 * for it at the barrier.  The last unit of a share stays its owner's,
 * which is about to take it when the threads run at one speed (a share
 * whose owner is not in the team, when OpenMP gave fewer threads, has no
 * such unit).  A share is one 64-bit word, front and end as
 * 32-bit counts of units (an iteration, or several for loops of more than
 * 2^31 iterations), claimed by compare-and-swap: each unit runs once. */
static void emit_loop_shares(cg_str *s)
{
    cg_str_puts(s,
        "#define TEC_SHARES 32\n"
        "typedef struct { uint64_t span; char pad[56]; } __attribute__((aligned(64))) tec_share;\n"
        "typedef struct { int64_t lo, hi, unit; int n; tec_share share[TEC_SHARES]; } tec_loop;\n\n"
        "static inline int tec_loop_start(tec_loop *l, int64_t lo, int64_t hi)\n"
        "{\n"
        "    if (hi <= lo)\n"
        "        return 0;\n"
        "    uint64_t n = (uint64_t)hi - (uint64_t)lo, unit = n / 0x7fffffffu + 1, units = (n + unit - 1) / unit;\n"
        "    l->lo = lo, l->hi = hi, l->unit = (int64_t)unit;\n"
        "    l->n = tec_num_threads < 1 ? 1 : tec_num_threads < TEC_SHARES ? tec_num_threads : TEC_SHARES;\n"
        "    for (int t = 0; t < l->n; t++)\n"
        "        l->share[t].span = units * (uint64_t)t / (uint64_t)l->n | units * (uint64_t)(t + 1) / (uint64_t)l->n << 32;\n"
        "    return 1;\n"
        "}\n\n"
        "/* Claims the next iterations [*first, *end) for thread t of a team of\n"
        " * `team`; 0 when none are left.  Shares from `team` on have no owner. */\n"
        "static inline int tec_loop_take(tec_loop *l, int t, int team, int64_t *first, int64_t *end)\n"
        "{\n"
        "    for (int i = 0; i < l->n; i++) {\n"
        "        const int s = (t + i) % l->n, keep = i != 0 && s < team;\n"
        "        uint64_t *span = &l->share[s].span;\n"
        "        uint64_t v = __atomic_load_n(span, __ATOMIC_RELAXED);\n"
        "        for (;;) {\n"
        "            uint64_t f = v & 0xffffffffu, b = v >> 32, w;\n"
        "            if (f + keep >= b)\n"
        "                break;\n"
        "            if (i == 0) {   /* the front quarter of one's own share */\n"
        "                uint64_t mid = f + (b - f + 3) / 4;\n"
        "                w = b << 32 | mid, b = mid;\n"
        "            } else {        /* the back half of another's */\n"
        "                uint64_t mid = b - (b - f + 1 - keep) / 2;\n"
        "                w = mid << 32 | f, f = mid;\n"
        "            }\n"
        "            if (__atomic_compare_exchange_n(span, &v, w, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {\n"
        "                *first = l->lo + (int64_t)f * l->unit;\n"
        "                *end = b * (uint64_t)l->unit < (uint64_t)(l->hi - l->lo) ? l->lo + (int64_t)b * l->unit : l->hi;\n"
        "                return 1;\n"
        "            }\n"
        "        }\n"
        "    }\n"
        "    return 0;\n"
        "}\n\n");
}

static void emit_vector_types(cg_emitter *e, cg_str *s)
{
    bool any = false;
    for (int t = 0; t < IR_NDTYPES; t++)
        for (int k = 0; k < 8; k++) {
            if (!e->vtype_used[t][k])
                continue;
            int lanes = 1 << k, size = ir_dtype_size((ir_dtype)t);
            const char *ct = ir_dtype_ctype((ir_dtype)t);
            const char *it = size == 8 ? "int64_t" : size == 4 ? "int32_t"
                           : size == 2 ? "int16_t" : "int8_t";
            const char *sf = cg_dtype_suffix((ir_dtype)t);
            if (!any)
                cg_str_puts(s, "/* Vector types of vectorized loops; TEC_SHUFFLE2(a, b, mask type,\n"
                            " * lanes...) picks lanes of a and b (b's numbered after a's). */\n"
                            "#ifdef __clang__\n"
                            "#define TEC_SHUFFLE2(a, b, mt, ...) __builtin_shufflevector(a, b, __VA_ARGS__)\n"
                            "#else\n"
                            "#define TEC_SHUFFLE2(a, b, mt, ...) __builtin_shuffle(a, b, (mt){__VA_ARGS__})\n"
                            "#endif\n");
            any = true;
            cg_str_printf(s, "typedef %s tec_%sx%d __attribute__((vector_size(%d), aligned(%d), may_alias));\n",
                       ct, sf, lanes, lanes * size, size);
            cg_str_printf(s, "typedef %s tec_m%sx%d __attribute__((vector_size(%d), aligned(%d), may_alias));\n",
                       it, sf, lanes, lanes * size, size);
            bool calls = false;
            for (int f = 0; f < IR_NINTRINSICS; f++)
                calls |= e->vmath_used[f][t][k];
            if (calls) {
                /* the vector function ABI passes naturally aligned vectors */
                cg_str_printf(s, "typedef %s tec_n%sx%d __attribute__((vector_size(%d)));\n", ct, sf,
                           lanes, lanes * size);
                bool own = false;
                for (int f = 0; f < IR_NINTRINSICS; f++)
                    own |= e->vmath_used[f][t][k] && cg_own_vmath(cg_vmath_name((ir_intrin)f), (ir_dtype)t);
                if (own)
                    cg_emit_vmath_f32(s, lanes);
                for (int f = 0; f < IR_NINTRINSICS; f++) {
                    if (!e->vmath_used[f][t][k] || cg_own_vmath(cg_vmath_name((ir_intrin)f), (ir_dtype)t))
                        continue;
                    cg_str sym = {0};
                    cg_put_vmath_symbol(&sym, cg_vmath_name((ir_intrin)f), (ir_dtype)t, lanes);
                    cg_str_printf(s, "extern tec_n%sx%d %s(tec_n%sx%d);\n", sf, lanes,
                               sym.p ? sym.p : "", sf, lanes);
                    free(sym.p);
                }
            }
            if (e->bcast_used[t][k]) {
                cg_str_printf(s, "static inline tec_%sx%d tec_bcast_%sx%d(%s x) { return (tec_%sx%d){",
                           sf, lanes, sf, lanes, ct, sf, lanes);
                for (int l = 0; l < lanes; l++)
                    cg_str_puts(s, l ? ", x" : "x");
                cg_str_puts(s, "}; }\n");
            }
            if (e->vminmax_used[t][k])
                emit_vminmax(s, (ir_dtype)t, lanes);
        }
    emit_vector_widening(e, s);
    if (any)
        cg_str_puts(s, "\n");
    if (e->omp_used) {
        cg_str_printf(s, "/* Threads of parallel loops; the loader sets it (--threads). */\n"
                      "%sint tec_num_threads = 1;\n"
                      "extern int omp_get_thread_num(void), omp_get_num_threads(void);\n\n", cg_linkage(e));
        emit_loop_shares(s);
    }
}

void cg_emit_prelude(cg_emitter *e, cg_str *s)
{
    cg_str_puts(s, "/* Generated by tec " PACKAGE_VERSION " from module \"");
    cg_str_put_comment_text(s, e->m->name ? e->m->name : "");
    cg_str_printf(s, "\" (%d kernel%s).\n", e->m->nfuncs, e->m->nfuncs == 1 ? "" : "s");
    cg_str_puts(s,
        " *\n"
        " * Each kernel takes one pointer per buffer parameter (dense row-major\n"
        " * storage; parameters never alias) and returns 0 or the failure code its\n"
        " * comment lists.  Arithmetic is the IR's: f32 stays in float, integers\n"
        " * wrap (-fwrapv), floordiv/floormod round toward -infinity.  Build with\n"
        " * -ffp-contract=off to get the interpreter's results bit for bit. */\n\n");
    cg_str_puts(s, "#include <math.h>\n");
    if (e->setjmp_used)
        cg_str_puts(s, "#include <setjmp.h>\n");
    if (e->intrin_used)
        cg_str_puts(s, "#include <immintrin.h>\n");
    cg_str_puts(s, "#include <stdint.h>\n#include <stdlib.h>\n");
    if (e->omp_used)
        cg_str_puts(s, "#include <string.h>\n");
    cg_str_puts(s, "\n");
    bool hooks = false;
    for (int i = 0; i < IR_NINTRINSICS; i++)
        hooks |= e->hook_used[i];
    if (hooks) {
        cg_str_puts(s, "/* Runtime hooks, resolved from the tec process when the kernels load. */\n");
        for (int i = 0; i < IR_NINTRINSICS; i++) {
            if (!e->hook_used[i])
                continue;
            cg_str_printf(s, "extern void %s(", ir_intrin_name((ir_intrin)i));
            for (int a = 0; a < ir_intrin_arity((ir_intrin)i); a++)
                cg_str_printf(s, "%sint64_t", a ? ", " : "");
            cg_str_puts(s, ir_intrin_arity((ir_intrin)i) ? ");\n" : "void);\n");
        }
        cg_str_puts(s, "\n");
    }
    if (e->ivdep_used)
        cg_str_puts(s,
            "/* GCC's \"#pragma GCC ivdep\", or clang's equivalent: the loop that\n"
            " * follows carries no dependence between iterations. */\n"
            "#if defined(__clang__)\n"
            "#define TEC_IVDEP _Pragma(\"clang loop vectorize(assume_safety)\")\n"
            "#else\n"
            "#define TEC_IVDEP _Pragma(\"GCC ivdep\")\n"
            "#endif\n\n");
    emit_vector_types(e, s);
    emit_helpers(e, s);
}

