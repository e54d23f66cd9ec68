/* codegen/sha256.h — SHA-256 (FIPS 180-4), used to key the kernel cache.
 *
 * Written from the standard's description rather than taken from a crypto
 * library so that tec needs no extra dependency for a 100-line function.
 * It is not used for anything secret: it only has to make accidental
 * collisions between cache entries impossible in practice.  On x86-64
 * processors with the SHA extensions (SHA-NI) the compression function
 * runs on them, about ten times faster than the portable code (the run
 * cache hashes whole model files).
 */
#ifndef TEC_CODEGEN_SHA256_H
#define TEC_CODEGEN_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The running state of one hash computation. */
typedef struct cg_sha256_ctx {
    uint32_t h[8];          /* chaining value H(i) */
    uint64_t nbytes;        /* message length so far, in bytes */
    uint8_t block[64];      /* the partial block not yet compressed */
    size_t nblock;          /* bytes used in block */
} cg_sha256_ctx;

void cg_sha256_init(cg_sha256_ctx *s);
void cg_sha256_update(cg_sha256_ctx *s, const void *data, size_t len);
/* Pads, writes the 32-byte digest and leaves s unusable until re-init. */
void cg_sha256_final(cg_sha256_ctx *s, uint8_t digest[32]);

/* One-shot helpers: the digest of data[0..len) as bytes or as 64 lowercase
 * hex digits plus a NUL. */
void cg_sha256(const void *data, size_t len, uint8_t digest[32]);
void cg_sha256_hex(const void *data, size_t len, char hex[65]);
void cg_sha256_to_hex(const uint8_t digest[32], char hex[65]);

/* Whether the processor's SHA extensions are used (when it has them; the
 * default) or the portable code (for tests: both give the same digests).
 * Returns whether they are used from now on. */
bool cg_sha256_use_extensions(bool on);

#endif
