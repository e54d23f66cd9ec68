/* codegen/sha256.c — SHA-256 as specified in FIPS 180-4, sections 4.1.2,
 * 4.2.2, 5.1.1, 5.3.3 and 6.2.2. */
#include "codegen/sha256.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TEC_SHA256_NI 1
#include <cpuid.h>
#include <immintrin.h>
#endif

/* K: the first 32 bits of the fractional parts of the cube roots of the
 * first 64 primes (FIPS 180-4, 4.2.2). */
static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
static uint32_t ch(uint32_t x, uint32_t y, uint32_t z) { return (x & y) ^ (~x & z); }
static uint32_t maj(uint32_t x, uint32_t y, uint32_t z) { return (x & y) ^ (x & z) ^ (y & z); }
static uint32_t big_sigma0(uint32_t x) { return rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22); }
static uint32_t big_sigma1(uint32_t x) { return rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25); }
static uint32_t small_sigma0(uint32_t x) { return rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3); }
static uint32_t small_sigma1(uint32_t x) { return rotr(x, 17) ^ rotr(x, 19) ^ (x >> 10); }

/* The message is read as big-endian 32-bit words whatever the host order. */
static uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* One application of the compression function to a 64-byte block (6.2.2). */
static void compress(uint32_t h[8], const uint8_t block[64])
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = load_be32(block + 4 * t);
    for (int t = 16; t < 64; t++)
        w[t] = small_sigma1(w[t - 2]) + w[t - 7] + small_sigma0(w[t - 15]) + w[t - 16];

    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    uint32_t e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = hh + big_sigma1(e) + ch(e, f, g) + sha256_k[t] + w[t];
        uint32_t t2 = big_sigma0(a) + maj(a, b, c);
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

void cg_sha256_init(cg_sha256_ctx *s)
{
    /* H(0): fractional parts of the square roots of the first 8 primes. */
    static const uint32_t h0[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    };
    memcpy(s->h, h0, sizeof h0);
    s->nbytes = 0;
    s->nblock = 0;
}

#ifdef TEC_SHA256_NI
/* The compression function on the processor's SHA extensions (SHA-NI:
 * sha256rnds2 does two rounds, sha256msg1/msg2 the message schedule's
 * sigma terms, four words at a time), for nblocks blocks at p.  The state
 * lives as two vectors: ABEF and CDGH, the order sha256rnds2 takes. */
__attribute__((target("sha,sse4.1"))) static void compress_ni(uint32_t h[8], const uint8_t *p,
                                                              size_t nblocks)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i dcba = _mm_loadu_si128((const __m128i *)&h[0]);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&h[4]);
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xb1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1b);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xf0);
    for (; nblocks; nblocks--, p += 64) {
        __m128i abef0 = abef, cdgh0 = cdgh, m[4];
        for (int g = 0; g < 16; g++) {   /* rounds 4g .. 4g+3 */
            if (g < 4) {
                m[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), bswap);
            } else {   /* W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16] */
                __m128i w = _mm_sha256msg1_epu32(m[g & 3], m[(g + 1) & 3]);
                w = _mm_add_epi32(w, _mm_alignr_epi8(m[(g + 3) & 3], m[(g + 2) & 3], 4));
                m[g & 3] = _mm_sha256msg2_epu32(w, m[(g + 3) & 3]);
            }
            __m128i wk = _mm_add_epi32(m[g & 3],
                                       _mm_loadu_si128((const __m128i *)&sha256_k[4 * g]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0e));
        }
        abef = _mm_add_epi32(abef, abef0);
        cdgh = _mm_add_epi32(cdgh, cdgh0);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1b);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);
    _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(feba, dchg, 0xf0));
    _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(dchg, feba, 8));
}
#endif

/* Whether to use the processor's SHA extensions: -1 not asked yet. */
static int use_ni = -1;

bool cg_sha256_use_extensions(bool on)
{
#ifdef TEC_SHA256_NI
    /* CPUID leaf 1 ECX bit 19 (SSE4.1), leaf 7 EBX bit 29 (SHA); asked
     * directly: clang 14's __builtin_cpu_supports does not know "sha" */
    unsigned a, b, c, d;
    bool sse41 = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 19));
    bool sha = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
    use_ni = on && sse41 && sha;
#else
    (void)on;
    use_ni = 0;
#endif
    return use_ni;
}

/* The compression function on nblocks consecutive blocks at p. */
static void compress_blocks(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
#ifdef TEC_SHA256_NI
    if (use_ni < 0)
        cg_sha256_use_extensions(true);
    if (use_ni) {
        compress_ni(h, p, nblocks);
        return;
    }
#endif
    for (; nblocks; nblocks--, p += 64)
        compress(h, p);
}

void cg_sha256_update(cg_sha256_ctx *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->nbytes += len;
    if (s->nblock) {   /* fill the partial block first */
        size_t take = 64 - s->nblock;
        if (take > len)
            take = len;
        memcpy(s->block + s->nblock, p, take);
        s->nblock += take;
        p += take;
        len -= take;
        if (s->nblock < 64)
            return;
        compress_blocks(s->h, s->block, 1);
        s->nblock = 0;
    }
    compress_blocks(s->h, p, len / 64);   /* whole blocks straight from the data */
    p += len / 64 * 64;
    len %= 64;
    memcpy(s->block, p, len);
    s->nblock = len;
}

void cg_sha256_final(cg_sha256_ctx *s, uint8_t digest[32])
{
    /* Padding (5.1.1): a 1 bit, zeros up to 56 mod 64 bytes, then the
     * message length in bits as a 64-bit big-endian integer. */
    uint64_t bits = s->nbytes * 8;
    s->block[s->nblock++] = 0x80;
    if (s->nblock > 56) {
        memset(s->block + s->nblock, 0, 64 - s->nblock);
        compress_blocks(s->h, s->block, 1);
        s->nblock = 0;
    }
    memset(s->block + s->nblock, 0, 56 - s->nblock);
    store_be32(s->block + 56, (uint32_t)(bits >> 32));
    store_be32(s->block + 60, (uint32_t)bits);
    compress_blocks(s->h, s->block, 1);
    for (int i = 0; i < 8; i++)
        store_be32(digest + 4 * i, s->h[i]);
    memset(s, 0, sizeof *s);
}

void cg_sha256(const void *data, size_t len, uint8_t digest[32])
{
    cg_sha256_ctx s;
    cg_sha256_init(&s);
    cg_sha256_update(&s, data, len);
    cg_sha256_final(&s, digest);
}

void cg_sha256_to_hex(const uint8_t digest[32], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[64] = '\0';
}

void cg_sha256_hex(const void *data, size_t len, char hex[65])
{
    uint8_t digest[32];
    cg_sha256(data, len, digest);
    cg_sha256_to_hex(digest, hex);
}
