/* SHA-256 of one stream, or of two streams at once, with the x86 SHA extensions (SHA-NI).

   Why by hand: an import hashes every byte of its zip twice, each file it extracts (the store's
   and serve's per-file SHA-256) and the zip it keeps for the package feed (the feed's sha256),
   and those two hashes were the largest item of its CPU time (43% of a 1.9 GB import's samples,
   2026-11-28). One stream cannot go faster than the SHA-NI round instruction's latency, which
   is what BoringSSL's and OpenSSL's code reach (1.8 GB/s on this project's AMD EPYC): each round
   needs the one before. Two independent streams interleaved on one core fill the gaps between
   them: 3.4-3.5 GB/s for the pair, so the two hashes of an import cost one core about what one of
   them cost before. That is multi-buffer hashing; OpenSSL has it only inside its TLS cipher
   (sha256_multi_block, not exported), BoringSSL (swift-crypto) and libsodium not at all, and
   Intel's isa-l_crypto, which has it, is not packaged for Debian 12.

   The rounds follow Intel's SHA extensions paper ("Intel SHA Extensions", 2013) as in its
   public-domain renderings: the state as ABEF/CDGH, four message words per step, two rounds per
   SHA256RNDS2 (the step macros below). Everything else (buffering, padding, the length) is
   plain FIPS 180-4. Tests: Tests/GalleyKitTests/SHA256Tests.swift checks both
   against the standard vectors and against swift-crypto on random data, lengths and splits. */
#include "galley_sha256.h"
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include <cpuid.h>

#define GALLEY_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

int galley_sha256_available(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    int sse41 = (ecx >> 19) & 1, ssse3 = (ecx >> 9) & 1;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    int sha = (ebx >> 29) & 1;
    return sse41 && ssse3 && sha;
}

/* The state as the instructions want it: ABEF and CDGH. */
GALLEY_SHA_TARGET static inline void load_state(const uint32_t s[8], __m128i *abef, __m128i *cdgh) {
    __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s[0]), 0xB1);
    __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s[4]), 0x1B);
    *abef = _mm_alignr_epi8(dcba, efgh, 8);
    *cdgh = _mm_blend_epi16(efgh, dcba, 0xF0);
}

GALLEY_SHA_TARGET static inline void store_state(uint32_t s[8], __m128i abef, __m128i cdgh) {
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&s[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&s[4], _mm_alignr_epi8(dchg, feba, 8));
}

/* The steps of a block, four rounds each: message words `w` (big-endian, as SHA-256 reads them)
   plus the constants, two rounds per SHA256RNDS2; from the fifth step on, the next four words
   are made from the last sixteen (SHA256MSG1, the words seven back, SHA256MSG2). Macros, not
   functions or arrays, so that every value stays in a register (with arrays the compilers kept
   the words in memory: 30% slower). `order` and `K` are the caller's. */
#define GALLEY_LOAD(w, data, i) w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((data) + 16 * (i))), order)
#define GALLEY_NEXT(w0, w1, w2, w3) \
    w0 = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w0, w1), _mm_alignr_epi8(w3, w2, 4)), w3)
#define GALLEY_ROUNDS(abef, cdgh, w, i) do { \
        __m128i m_ = _mm_add_epi32(w, _mm_loadu_si128((const __m128i *)&K[4 * (i)])); \
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m_); \
        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m_, 0x0E)); \
    } while (0)

/* `blocks` 64-byte blocks of `a` into `s`. */
GALLEY_SHA_TARGET static void blocks_x1(uint32_t s[8], const uint8_t *a, size_t blocks) {
    const __m128i order = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i a0, a1;
    load_state(s, &a0, &a1);
    while (blocks--) {
        __m128i saved0 = a0, saved1 = a1, w0, w1, w2, w3;
        GALLEY_LOAD(w0, a, 0); GALLEY_ROUNDS(a0, a1, w0, 0);
        GALLEY_LOAD(w1, a, 1); GALLEY_ROUNDS(a0, a1, w1, 1);
        GALLEY_LOAD(w2, a, 2); GALLEY_ROUNDS(a0, a1, w2, 2);
        GALLEY_LOAD(w3, a, 3); GALLEY_ROUNDS(a0, a1, w3, 3);
        for (int i = 4; i < 16; i += 4) {
            GALLEY_NEXT(w0, w1, w2, w3); GALLEY_ROUNDS(a0, a1, w0, i);
            GALLEY_NEXT(w1, w2, w3, w0); GALLEY_ROUNDS(a0, a1, w1, i + 1);
            GALLEY_NEXT(w2, w3, w0, w1); GALLEY_ROUNDS(a0, a1, w2, i + 2);
            GALLEY_NEXT(w3, w0, w1, w2); GALLEY_ROUNDS(a0, a1, w3, i + 3);
        }
        a0 = _mm_add_epi32(a0, saved0);
        a1 = _mm_add_epi32(a1, saved1);
        a += 64;
    }
    store_state(s, a0, a1);
}

/* `blocks` blocks of `a` into `s` and as many of `b` into `t`, each step of the one beside the
   same step of the other, so that the core runs one stream's rounds while the other's wait. */
GALLEY_SHA_TARGET static void blocks_x2(uint32_t s[8], const uint8_t *a, uint32_t t[8], const uint8_t *b, size_t blocks) {
    const __m128i order = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i a0, a1, b0, b1;
    load_state(s, &a0, &a1);
    load_state(t, &b0, &b1);
    while (blocks--) {
        __m128i saved_a0 = a0, saved_a1 = a1, saved_b0 = b0, saved_b1 = b1, w0, w1, w2, w3, v0, v1, v2, v3;
#define GALLEY_FIRST2(w, v, i) GALLEY_LOAD(w, a, i); GALLEY_LOAD(v, b, i); GALLEY_ROUNDS(a0, a1, w, i); GALLEY_ROUNDS(b0, b1, v, i)
#define GALLEY_STEP2(i, w0, w1, w2, w3, v0, v1, v2, v3) \
        GALLEY_NEXT(w0, w1, w2, w3); GALLEY_NEXT(v0, v1, v2, v3); GALLEY_ROUNDS(a0, a1, w0, i); GALLEY_ROUNDS(b0, b1, v0, i)
        GALLEY_FIRST2(w0, v0, 0);
        GALLEY_FIRST2(w1, v1, 1);
        GALLEY_FIRST2(w2, v2, 2);
        GALLEY_FIRST2(w3, v3, 3);
        for (int i = 4; i < 16; i += 4) {
            GALLEY_STEP2(i, w0, w1, w2, w3, v0, v1, v2, v3);
            GALLEY_STEP2(i + 1, w1, w2, w3, w0, v1, v2, v3, v0);
            GALLEY_STEP2(i + 2, w2, w3, w0, w1, v2, v3, v0, v1);
            GALLEY_STEP2(i + 3, w3, w0, w1, w2, v3, v0, v1, v2);
        }
#undef GALLEY_FIRST2
#undef GALLEY_STEP2
        a0 = _mm_add_epi32(a0, saved_a0);
        a1 = _mm_add_epi32(a1, saved_a1);
        b0 = _mm_add_epi32(b0, saved_b0);
        b1 = _mm_add_epi32(b1, saved_b1);
        a += 64;
        b += 64;
    }
    store_state(s, a0, a1);
    store_state(t, b0, b1);
}
#else
int galley_sha256_available(void) { return 0; }
/* Never called: the Swift side uses swift-crypto where the above is not available. */
static void blocks_x1(uint32_t s[8], const uint8_t *a, size_t blocks) { (void)s; (void)a; (void)blocks; }
static void blocks_x2(uint32_t s[8], const uint8_t *a, uint32_t t[8], const uint8_t *b, size_t blocks) {
    blocks_x1(s, a, blocks);
    blocks_x1(t, b, blocks);
}
#endif

void galley_sha256_init(galley_sha256 *hash) {
    static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(hash->state, initial, sizeof initial);
    hash->length = 0;
    hash->buffered = 0;
}

/* Tops up `hash`'s partial block from `*data`; hashes it once full. Advances `*data`/`*count`. */
static void fill(galley_sha256 *hash, const uint8_t **data, size_t *count) {
    if (hash->buffered == 0) return;
    size_t take = 64 - hash->buffered;
    if (take > *count) take = *count;
    memcpy(hash->buffer + hash->buffered, *data, take);
    hash->buffered += (uint32_t)take;
    *data += take;
    *count -= take;
    if (hash->buffered == 64) {
        blocks_x1(hash->state, hash->buffer, 1);
        hash->buffered = 0;
    }
}

/* Keeps what is left of `data` (under a block) for later. */
static void keep(galley_sha256 *hash, const uint8_t *data, size_t count) {
    memcpy(hash->buffer + hash->buffered, data, count);
    hash->buffered += (uint32_t)count;
}

void galley_sha256_update(galley_sha256 *hash, const void *data, size_t count) {
    const uint8_t *bytes = data;
    hash->length += count;
    fill(hash, &bytes, &count);
    if (count == 0) return;
    if (count >= 64) {
        blocks_x1(hash->state, bytes, count / 64);
        bytes += count / 64 * 64;
        count %= 64;
    }
    keep(hash, bytes, count);
}

void galley_sha256_update2(galley_sha256 *a, const void *data_a, size_t count_a,
                           galley_sha256 *b, const void *data_b, size_t count_b) {
    const uint8_t *bytes_a = data_a, *bytes_b = data_b;
    a->length += count_a;
    b->length += count_b;
    fill(a, &bytes_a, &count_a);
    fill(b, &bytes_b, &count_b);
    /* (A partial block still in either means its data ran out filling it: `both` is 0 then.) */
    size_t both = (count_a < count_b ? count_a : count_b) / 64;
    if (both > 0) {
        blocks_x2(a->state, bytes_a, b->state, bytes_b, both);
        bytes_a += both * 64;
        bytes_b += both * 64;
        count_a -= both * 64;
        count_b -= both * 64;
    }
    /* The rest of the longer one alone (and any tail). */
    a->length -= count_a;
    b->length -= count_b;
    galley_sha256_update(a, bytes_a, count_a);
    galley_sha256_update(b, bytes_b, count_b);
}

void galley_sha256_final(galley_sha256 *hash, uint8_t digest[32]) {
    uint64_t bits = hash->length * 8;
    uint8_t pad[72] = {0x80};
    size_t padding = (hash->buffered < 56 ? 56 : 120) - hash->buffered;
    for (int i = 0; i < 8; i++) pad[padding + i] = (uint8_t)(bits >> (56 - 8 * i));
    galley_sha256_update(hash, pad, padding + 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(hash->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(hash->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(hash->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)hash->state[i];
    }
}
