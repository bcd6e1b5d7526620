// Fast PBKDF2 (see Sources/CredFile/Hashing/FastPBKDF2_OpenSSL.swift), bit-identical
// to PKCS5_PBKDF2_HMAC, with the fastpbkdf2 technique: the HMAC inner and outer states of
// the password are computed once; U_1 = HMAC(P, S || INT(i)) goes the ordinary way
// (SHA*_Update/Final on copies of those states); every further round is exactly two
// compressions on prebuilt padded blocks, with no allocation and no context copy in the
// loop. Two loops run those rounds (`enum credfile_pbkdf2_loop`):
//
// * TRANSFORM, every hash on every CPU: two calls of OpenSSL's `SHA*_Transform` per
//   round. One template (`CREDFILE__DECL_PBKDF2`, fastpbkdf2's DECL_PBKDF2 shape) is
//   instantiated per hash: SHA-1 (for peers' hashes), SHA-256 and SHA-512.
// * SHA_NI, SHA-256 on an x86-64 CPU with the SHA extensions (cpuid leaf 7 EBX bit 29,
//   with SSSE3 and SSE4.1): the one hash written by hand, because OpenSSL's SHA-NI code
//   loads the state, reorders it into the ABEF/CDGH lanes `sha256rnds2` works on, and
//   stores it back on every call, and the loop around it byte-swaps the state into the
//   next block: on this AMD EPYC that was almost a quarter of each round (README,
//   Performance). Here the state stays in those lanes across both compressions of a round
//   and across rounds; the digest becomes the next message with four shuffles and no byte
//   swap (a SHA-256 digest's big-endian bytes read back big-endian are its own words), and
//   the padding words are constants. It also runs two independent chains interleaved
//   (`credfile_fast_pbkdf2_pair`, and the blocks of one long output), which overlaps the
//   two chains' `sha256rnds2` latencies in the pipeline. Compiled with a `target`
//   attribute, so the rest of this file stays baseline x86-64; chosen at run time.
//
// The low-level SHA API is deprecated in OpenSSL 3.0 but present; the deprecation is
// silenced in this file only. When the headers leave it out (OPENSSL_NO_DEPRECATED_3_0:
// an OpenSSL configured `no-deprecated`), `credfile_fast_pbkdf2` calls PKCS5_PBKDF2_HMAC
// instead and `credfile_fast_pbkdf2_available()` returns 0.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "CCredFile.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if !defined(OPENSSL_NO_DEPRECATED_3_0) && !defined(OPENSSL_NO_SHA256) \
    && !defined(OPENSSL_NO_SHA512) && !defined(OPENSSL_NO_SHA1)
#define CREDFILE_FAST_PBKDF2_AVAILABLE 1
#else
#define CREDFILE_FAST_PBKDF2_AVAILABLE 0
#endif

#if CREDFILE_FAST_PBKDF2_AVAILABLE && defined(__x86_64__) \
    && (defined(__clang__) || defined(__GNUC__))
#define CREDFILE__SHA_NI 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define CREDFILE__SHA_NI 0
#endif

int credfile_fast_pbkdf2_available(void) {
    return CREDFILE_FAST_PBKDF2_AVAILABLE;
}

#if CREDFILE_FAST_PBKDF2_AVAILABLE

#if defined(__clang__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CREDFILE__VECTOR_BSWAP 1
/// 16 bytes as one vector, so that loads and stores move 16 bytes at a time.
typedef uint8_t credfile__u8x16 __attribute__((vector_size(16)));
/// 16 bytes as two 64-bit lanes: two byte-swapped state words (SHA-512) or pairs of them.
typedef uint64_t credfile__u64x2 __attribute__((vector_size(16)));
#else
#define CREDFILE__VECTOR_BSWAP 0
#endif

/// Copies `count` bytes of state words: 16 at a time, then the rest (SHA-1's last 4).
static inline __attribute__((always_inline)) void
credfile__copy_state(void *dst, const void *src, size_t count) {
    size_t j = 0;
#if CREDFILE__VECTOR_BSWAP
    for (; j + 16 <= count; j += 16) {
        credfile__u8x16 v;
        __builtin_memcpy(&v, (const unsigned char *)src + j, 16);
        __builtin_memcpy((unsigned char *)dst + j, &v, 16);
    }
#endif
    if (j < count) memcpy((unsigned char *)dst + j, (const unsigned char *)src + j, count - j);
}

/// Writes the `count` bytes of host-order state words `h` (each `width` bytes: 4 for
/// SHA-1 and SHA-256, 8 for SHA-512) as big-endian bytes at `block`; when `acc` is not
/// NULL, also XORs those bytes into `acc`. On little-endian clang, 16 bytes at a time:
/// each word is loaded on its own and byte-swapped in a general register, and the
/// swapped words go out as one 16-byte store. Both halves are about the store buffer:
/// OpenSSL's compression code without SHA-NI stores the state a word at a time, and a
/// 16-byte load across several stores waits for them to reach the cache instead of
/// taking their data from the store buffer (word loads: +1-3 % for SHA-512 and for
/// SHA-256 without SHA-NI, measured side by side, README, Performance); its next call
/// loads the block 16 bytes at a time, which forwards only from a store as wide (16-byte
/// stores instead of word ones were worth 12 %). A tail shorter than 16 bytes (SHA-1's
/// last word) goes word by word.
static inline __attribute__((always_inline)) void
credfile__state_to_block(unsigned char *block, const void *h, size_t width, size_t count,
                         unsigned char *acc) {
    size_t j = 0;
#if CREDFILE__VECTOR_BSWAP
    for (; j + 16 <= count; j += 16) {
        const unsigned char *from = (const unsigned char *)h + j;
        uint64_t lo, hi;
        if (width == 4) {
            uint32_t a, b, c, d;
            memcpy(&a, from, 4);
            memcpy(&b, from + 4, 4);
            memcpy(&c, from + 8, 4);
            memcpy(&d, from + 12, 4);
            // Keeps the four loads apart: clang would merge them into one 16-byte load.
            __asm__("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
            lo = (uint64_t)__builtin_bswap32(a) | (uint64_t)__builtin_bswap32(b) << 32;
            hi = (uint64_t)__builtin_bswap32(c) | (uint64_t)__builtin_bswap32(d) << 32;
        } else {
            memcpy(&lo, from, 8);
            memcpy(&hi, from + 8, 8);
            __asm__("" : "+r"(lo), "+r"(hi));
            lo = __builtin_bswap64(lo);
            hi = __builtin_bswap64(hi);
        }
        const credfile__u64x2 v = {lo, hi};
        __builtin_memcpy(block + j, &v, 16);
        if (acc) {
            credfile__u64x2 a;
            __builtin_memcpy(&a, acc + j, 16);
            a ^= v;
            __builtin_memcpy(acc + j, &a, 16);
        }
    }
#endif
    for (; j < count; j += width) {
        uint64_t w;
        if (width == 4) {
            uint32_t w32;
            memcpy(&w32, (const unsigned char *)h + j, 4);
            w = w32;
        } else {
            memcpy(&w, (const unsigned char *)h + j, 8);
        }
        for (size_t b = 0; b < width; b++) {
            block[j + b] = (unsigned char)(w >> (8 * (width - 1 - b)));
            if (acc) acc[j + b] ^= block[j + b];
        }
    }
}

/// The big-endian bytes of the PBKDF2 block index `i`.
static inline void credfile__be32(unsigned char out[4], uint32_t i) {
    out[0] = (unsigned char)(i >> 24);
    out[1] = (unsigned char)(i >> 16);
    out[2] = (unsigned char)(i >> 8);
    out[3] = (unsigned char)i;
}

// SHA-1 keeps its five state words as fields h0 ... h4, SHA-2 as an array h[8]; the
// template reaches both through a STATE(ctx) accessor.
_Static_assert(offsetof(SHA_CTX, h4) == offsetof(SHA_CTX, h0) + 4 * sizeof(SHA_LONG),
               "SHA_CTX state words are contiguous");
#define CREDFILE__SHA1_STATE(ctx) ((void *)&(ctx)->h0)
#define CREDFILE__SHA2_STATE(ctx) ((void *)(ctx)->h)

/// Declares, for one hash, `credfile__hmac_states_<name>` and `credfile__first_u_<name>`
/// (the HMAC parts both loops share) and `credfile__pbkdf2_<name>`: the whole PBKDF2 on
/// the TRANSFORM loop.
///   CTX: the OpenSSL context type; STATE: accessor of its state words; WIDTH: bytes of
///   one state word; CBLOCK: the block size; DLEN: the digest size; INIT, UPDATE, FINAL,
///   TRANSFORM, HASH: the low-level SHA functions.
/// Arguments are checked once, by the callers (`credfile_fast_pbkdf2`, `_pair`).
#define CREDFILE__DECL_PBKDF2(name, CTX, STATE, WIDTH, CBLOCK, DLEN, INIT, UPDATE, FINAL,   \
                              TRANSFORM, HASH)                                              \
    /* The HMAC inner and outer states of `password`, each after its one key block (a */   \
    /* password longer than the block is hashed first). Returns 1 on success. */           \
    static int credfile__hmac_states_##name(const void *password, size_t passwordCount,    \
                                            CTX *inner, CTX *outer) {                      \
        unsigned char key[CBLOCK], pad[CBLOCK];                                            \
        int ok = 1;                                                                        \
        memset(key, 0, sizeof key);                                                        \
        if (passwordCount > sizeof key) {                                                  \
            ok = HASH((const unsigned char *)password, passwordCount, key) != NULL;        \
        } else if (passwordCount) {                                                        \
            memcpy(key, password, passwordCount);                                          \
        }                                                                                  \
        for (size_t j = 0; j < sizeof pad; j++) pad[j] = key[j] ^ 0x36;                    \
        ok = ok && INIT(inner) && UPDATE(inner, pad, sizeof pad);                          \
        for (size_t j = 0; j < sizeof pad; j++) pad[j] = key[j] ^ 0x5c;                    \
        ok = ok && INIT(outer) && UPDATE(outer, pad, sizeof pad);                          \
        OPENSSL_cleanse(key, sizeof key);                                                  \
        OPENSSL_cleanse(pad, sizeof pad);                                                  \
        return ok;                                                                         \
    }                                                                                      \
                                                                                           \
    /* U_1 = HMAC(P, S || INT(i)) into `u` (DLEN bytes) from the HMAC states, on `work` */ \
    /* (cleansed by the caller). Returns 1 on success. */                                  \
    static int credfile__first_u_##name(const CTX *inner, const CTX *outer, CTX *work,     \
                                        const void *salt, size_t saltCount, uint32_t i,    \
                                        unsigned char *u) {                                \
        unsigned char counter[4];                                                          \
        credfile__be32(counter, i);                                                        \
        *work = *inner;                                                                    \
        int ok = (saltCount == 0 || UPDATE(work, salt, saltCount))                         \
            && UPDATE(work, counter, 4) && FINAL(u, work);                                 \
        *work = *outer;                                                                    \
        return ok && UPDATE(work, u, DLEN) && FINAL(u, work);                              \
    }                                                                                      \
                                                                                           \
    /* T_i ^= U_2 ... U_rounds: `block` holds U_1 (big-endian) and the padding of a */     \
    /* key block plus one digest, `acc` holds U_1. Two compressions per round. */          \
    static void credfile__rounds_##name(const CTX *inner, const CTX *outer, CTX *work,      \
                                        unsigned char *block, unsigned char *other,        \
                                        unsigned char *acc, unsigned rounds) {             \
        for (unsigned r = 1; r < rounds; r++) {                                            \
            credfile__copy_state(STATE(work), STATE(inner), DLEN);                         \
            TRANSFORM(work, block);                                                        \
            credfile__state_to_block(other, STATE(work), WIDTH, DLEN, NULL);               \
            credfile__copy_state(STATE(work), STATE(outer), DLEN);                         \
            TRANSFORM(work, other);                                                        \
            credfile__state_to_block(block, STATE(work), WIDTH, DLEN, acc);                \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    static int credfile__pbkdf2_##name(const void *password, size_t passwordCount,         \
                                       const void *salt, size_t saltCount,                 \
                                       unsigned rounds, void *out, size_t outCount) {      \
        CTX inner, outer, work;                                                            \
        _Alignas(16) unsigned char block[CBLOCK], other[CBLOCK];                           \
        _Alignas(16) unsigned char acc[DLEN];                                              \
        unsigned char *dst = (unsigned char *)out;                                         \
        size_t left = outCount;                                                            \
        int ok = credfile__hmac_states_##name(password, passwordCount, &inner, &outer);    \
                                                                                           \
        /* Both loop blocks hash one digest after a key block: its length in bits, */      \
        /* big-endian, ends the block. */                                                  \
        memset(block, 0, sizeof block);                                                    \
        block[DLEN] = 0x80;                                                                \
        const uint64_t bits = (uint64_t)(CBLOCK + DLEN) * 8;                               \
        for (size_t k = 0; k < 8; k++) block[CBLOCK - 1 - k] = (unsigned char)(bits >> (8 * k)); \
        memcpy(other, block, sizeof other);                                                \
                                                                                           \
        for (uint32_t i = 1; ok && left > 0; i++) {                                        \
            ok = credfile__first_u_##name(&inner, &outer, &work, salt, saltCount, i, block); \
            if (!ok) break;                                                                \
            memcpy(acc, block, sizeof acc);                                                \
            credfile__rounds_##name(&inner, &outer, &work, block, other, acc, rounds);     \
            size_t n = left < sizeof acc ? left : sizeof acc;                              \
            memcpy(dst, acc, n);                                                           \
            dst += n;                                                                      \
            left -= n;                                                                     \
        }                                                                                  \
        OPENSSL_cleanse(&inner, sizeof inner);                                             \
        OPENSSL_cleanse(&outer, sizeof outer);                                             \
        OPENSSL_cleanse(&work, sizeof work);                                               \
        OPENSSL_cleanse(block, sizeof block);                                              \
        OPENSSL_cleanse(other, sizeof other);                                              \
        OPENSSL_cleanse(acc, sizeof acc);                                                  \
        if (!ok) OPENSSL_cleanse(out, outCount);                                           \
        return ok;                                                                         \
    }

CREDFILE__DECL_PBKDF2(sha1, SHA_CTX, CREDFILE__SHA1_STATE, 4, SHA_CBLOCK, SHA_DIGEST_LENGTH,
                      SHA1_Init, SHA1_Update, SHA1_Final, SHA1_Transform, SHA1)
CREDFILE__DECL_PBKDF2(sha256, SHA256_CTX, CREDFILE__SHA2_STATE, 4, SHA256_CBLOCK,
                      SHA256_DIGEST_LENGTH, SHA256_Init, SHA256_Update, SHA256_Final,
                      SHA256_Transform, SHA256)
CREDFILE__DECL_PBKDF2(sha512, SHA512_CTX, CREDFILE__SHA2_STATE, 8, SHA512_CBLOCK,
                      SHA512_DIGEST_LENGTH, SHA512_Init, SHA512_Update, SHA512_Final,
                      SHA512_Transform, SHA512)

/// The TRANSFORM loop for `digest`.
static int credfile__pbkdf2_transform(int digest, const void *password, size_t passwordCount,
                                      const void *salt, size_t saltCount, unsigned rounds,
                                      void *out, size_t outCount) {
    switch (digest) {
    case CREDFILE_DIGEST_SHA1:
        return credfile__pbkdf2_sha1(password, passwordCount, salt, saltCount, rounds, out, outCount);
    case CREDFILE_DIGEST_SHA256:
        return credfile__pbkdf2_sha256(password, passwordCount, salt, saltCount, rounds, out, outCount);
    case CREDFILE_DIGEST_SHA512:
        return credfile__pbkdf2_sha512(password, passwordCount, salt, saltCount, rounds, out, outCount);
    default:
        return 0;
    }
}

#endif // CREDFILE_FAST_PBKDF2_AVAILABLE

/// One derivation's inputs and output, for the drivers that run several at once.
typedef struct {
    const void *password;
    size_t passwordCount;
    const void *salt;
    size_t saltCount;
    unsigned char *out;
} credfile__derivation;

#if CREDFILE__SHA_NI

/// 1 when this CPU has the SHA extensions with SSSE3 and SSE4.1 (cpuid leaf 1 ECX bits 9
/// and 19, leaf 7 EBX bit 29). Asked once; a race only asks twice.
static int credfile__cpu_has_sha_ni(void) {
    static int known;  // 0: not asked yet; 1: no; 2: yes
    int answer = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (answer == 0) {
        unsigned a, b, c, d;
        int yes = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3) && (c & bit_SSE4_1)
            && __get_cpuid_max(0, NULL) >= 7;
        if (yes) {
            __cpuid_count(7, 0, a, b, c, d);
            yes = (b & bit_SHA) != 0;
        }
        answer = yes ? 2 : 1;
        __atomic_store_n(&known, answer, __ATOMIC_RELAXED);
    }
    return answer == 2;
}

/// Functions that use the SHA extensions: compiled for them, called only after
/// `credfile__cpu_has_sha_ni`.
#define CREDFILE__SHA_NI_INLINE static inline __attribute__((always_inline, target("sha,sse4.1")))

/// The most chains one call of the kernel advances together.
#define CREDFILE__SHA_NI_CHAINS 2

/// SHA-256's round constants (FIPS 180-4 §4.2.2).
static const uint32_t credfile__sha256_k[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/// A SHA-256 state as `sha256rnds2` keeps it: `abef` holds the words A, B, E, F in lanes
/// 3, 2, 1, 0 and `cdgh` holds C, D, G, H the same way.
typedef struct {
    __m128i abef, cdgh;
} credfile__sha256_ni_state;

/// The eight state words A ... H (lanes 0 ... 3 of `abcd`, then of `efgh`) as a
/// `credfile__sha256_ni_state`.
CREDFILE__SHA_NI_INLINE credfile__sha256_ni_state credfile__sha256_ni_from_words(__m128i abcd,
                                                                                 __m128i efgh) {
    __m128i badc = _mm_shuffle_epi32(abcd, 0xB1), fehg = _mm_shuffle_epi32(efgh, 0xB1);
    return (credfile__sha256_ni_state){_mm_unpacklo_epi64(fehg, badc), _mm_unpackhi_epi64(fehg, badc)};
}

/// The inverse of `credfile__sha256_ni_from_words`: the words A ... H in lane order.
CREDFILE__SHA_NI_INLINE void credfile__sha256_ni_to_words(credfile__sha256_ni_state s, __m128i *abcd,
                                                          __m128i *efgh) {
    *abcd = _mm_shuffle_epi32(_mm_unpackhi_epi64(s.abef, s.cdgh), 0xB1);
    *efgh = _mm_shuffle_epi32(_mm_unpacklo_epi64(s.abef, s.cdgh), 0xB1);
}

/// Big-endian bytes to host-order 32-bit words and back.
CREDFILE__SHA_NI_INLINE __m128i credfile__sha256_ni_bswap(__m128i v) {
    return _mm_shuffle_epi8(v, _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
}

CREDFILE__SHA_NI_INLINE credfile__sha256_ni_state credfile__sha256_ni_add(credfile__sha256_ni_state a,
                                                                          credfile__sha256_ni_state b) {
    return (credfile__sha256_ni_state){_mm_add_epi32(a.abef, b.abef), _mm_add_epi32(a.cdgh, b.cdgh)};
}

/// The 64 rounds of the SHA-256 compression function on `n` independent chains at once:
/// chain c starts at `s[c]` and hashes the block whose words 0 ... 7 are `w[c][0..1]`
/// (host order) and whose words 8 ... 15 are the padding of a key block plus one digest
/// (0x80000000, six zeros, 768 bits). Leaves the state before the final addition in `s`.
/// Written as a loop of sixteen four-round steps over the chains; unrolled, the chains'
/// instructions interleave and their `sha256rnds2` dependency chains overlap.
CREDFILE__SHA_NI_INLINE void credfile__sha256_ni_compress(int n, credfile__sha256_ni_state *s,
                                                          const __m128i (*w)[2]) {
    __m128i m[CREDFILE__SHA_NI_CHAINS][4];
    for (int c = 0; c < n; c++) {
        m[c][0] = w[c][0];
        m[c][1] = w[c][1];
        m[c][2] = _mm_set_epi32(0, 0, 0, (int)0x80000000);
        m[c][3] = _mm_set_epi32((64 + 32) * 8, 0, 0, 0);
    }
#pragma GCC unroll 16
    for (int g = 0; g < 16; g++) {
        const __m128i k = _mm_load_si128((const __m128i *)&credfile__sha256_k[4 * g]);
        for (int c = 0; c < n; c++) {
            if (g >= 4) {  // W[4g ... 4g+3] from W[4g-16 ... 4g-1]
                __m128i x = _mm_sha256msg1_epu32(m[c][g & 3], m[c][(g + 1) & 3]);
                x = _mm_add_epi32(x, _mm_alignr_epi8(m[c][(g + 3) & 3], m[c][(g + 2) & 3], 4));
                m[c][g & 3] = _mm_sha256msg2_epu32(x, m[c][(g + 3) & 3]);
            }
            __m128i wk = _mm_add_epi32(m[c][g & 3], k);
            s[c].cdgh = _mm_sha256rnds2_epu32(s[c].cdgh, s[c].abef, wk);
            s[c].abef = _mm_sha256rnds2_epu32(s[c].abef, s[c].cdgh, _mm_shuffle_epi32(wk, 0x0E));
        }
    }
}

/// T ^= U_2 ... U_rounds for `n` chains: `inner`/`outer` are the chains' HMAC states
/// (host-order words A ... H), `u[c]` holds U_1 as big-endian bytes on entry and T on
/// return.
CREDFILE__SHA_NI_INLINE void credfile__sha256_ni_rounds(int n, const uint32_t (*inner)[8],
                                                        const uint32_t (*outer)[8],
                                                        unsigned char (*u)[32], unsigned rounds) {
    credfile__sha256_ni_state in[CREDFILE__SHA_NI_CHAINS], out[CREDFILE__SHA_NI_CHAINS];
    credfile__sha256_ni_state acc[CREDFILE__SHA_NI_CHAINS], s[CREDFILE__SHA_NI_CHAINS];
    __m128i w[CREDFILE__SHA_NI_CHAINS][2];
    for (int c = 0; c < n; c++) {
        in[c] = credfile__sha256_ni_from_words(_mm_loadu_si128((const __m128i *)inner[c]),
                                               _mm_loadu_si128((const __m128i *)(inner[c] + 4)));
        out[c] = credfile__sha256_ni_from_words(_mm_loadu_si128((const __m128i *)outer[c]),
                                                _mm_loadu_si128((const __m128i *)(outer[c] + 4)));
        w[c][0] = credfile__sha256_ni_bswap(_mm_loadu_si128((const __m128i *)u[c]));
        w[c][1] = credfile__sha256_ni_bswap(_mm_loadu_si128((const __m128i *)(u[c] + 16)));
        acc[c] = credfile__sha256_ni_from_words(w[c][0], w[c][1]);
    }
    for (unsigned r = 1; r < rounds; r++) {
        for (int c = 0; c < n; c++) s[c] = in[c];
        credfile__sha256_ni_compress(n, s, (const __m128i (*)[2])w);
        for (int c = 0; c < n; c++) {
            credfile__sha256_ni_to_words(credfile__sha256_ni_add(s[c], in[c]), &w[c][0], &w[c][1]);
            s[c] = out[c];
        }
        credfile__sha256_ni_compress(n, s, (const __m128i (*)[2])w);
        for (int c = 0; c < n; c++) {
            s[c] = credfile__sha256_ni_add(s[c], out[c]);
            acc[c].abef = _mm_xor_si128(acc[c].abef, s[c].abef);
            acc[c].cdgh = _mm_xor_si128(acc[c].cdgh, s[c].cdgh);
            credfile__sha256_ni_to_words(s[c], &w[c][0], &w[c][1]);
        }
    }
    for (int c = 0; c < n; c++) {
        credfile__sha256_ni_to_words(acc[c], &w[c][0], &w[c][1]);
        _mm_storeu_si128((__m128i *)u[c], credfile__sha256_ni_bswap(w[c][0]));
        _mm_storeu_si128((__m128i *)(u[c] + 16), credfile__sha256_ni_bswap(w[c][1]));
    }
}

/// The kernel for one chain and for two; not inlined, so their registers and spills end
/// in frames that `credfile__sha256_ni_forget` overwrites.
__attribute__((noinline, target("sha,sse4.1"))) static void
credfile__sha256_ni_rounds1(const uint32_t (*inner)[8], const uint32_t (*outer)[8],
                            unsigned char (*u)[32], unsigned rounds) {
    credfile__sha256_ni_rounds(1, inner, outer, u, rounds);
}
__attribute__((noinline, target("sha,sse4.1"))) static void
credfile__sha256_ni_rounds2(const uint32_t (*inner)[8], const uint32_t (*outer)[8],
                            unsigned char (*u)[32], unsigned rounds) {
    credfile__sha256_ni_rounds(2, inner, outer, u, rounds);
}

/// Overwrites what the kernel left of the chains' states: the stack below the caller
/// (its frame and spills) and the XMM registers.
__attribute__((noinline)) static void credfile__sha256_ni_forget(void) {
    unsigned char stack[1024];
    OPENSSL_cleanse(stack, sizeof stack);
    __asm__ volatile("pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\t"
                     "pxor %%xmm3, %%xmm3\n\tpxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
                     "pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\tpxor %%xmm8, %%xmm8\n\t"
                     "pxor %%xmm9, %%xmm9\n\tpxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
                     "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\tpxor %%xmm14, %%xmm14\n\t"
                     "pxor %%xmm15, %%xmm15"
                     ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                       "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory");
}

/// PBKDF2-HMAC-SHA256 of `count` derivations (1 or 2) with the same rounds and output
/// length on the SHA_NI loop. Every output block of every derivation is one chain; the
/// chains go through the kernel two at a time (block 1 of each derivation, then block
/// 2, ...; one derivation's blocks pair up among themselves), the last one alone when
/// their number is odd.
static int credfile__pbkdf2_sha256_ni(size_t count, const credfile__derivation *d,
                                      unsigned rounds, size_t outCount) {
    SHA256_CTX inner[2], outer[2], work;
    uint32_t innerWords[2][8], outerWords[2][8];
    _Alignas(16) unsigned char u[CREDFILE__SHA_NI_CHAINS][32];
    int ok = 1;
    for (size_t k = 0; k < count; k++) {
        ok = ok && credfile__hmac_states_sha256(d[k].password, d[k].passwordCount, &inner[k], &outer[k]);
    }
    const size_t blocks = (outCount + 31) / 32, chains = count * blocks;
    for (size_t next = 0; ok && next < chains;) {
        size_t taken = chains - next < CREDFILE__SHA_NI_CHAINS ? chains - next : CREDFILE__SHA_NI_CHAINS;
        size_t owner[CREDFILE__SHA_NI_CHAINS], offset[CREDFILE__SHA_NI_CHAINS];
        for (size_t c = 0; c < taken && ok; c++) {
            size_t k = (next + c) % count, block = (next + c) / count;  // block 0 is T_1
            owner[c] = k;
            offset[c] = block * 32;
            memcpy(innerWords[c], inner[k].h, sizeof innerWords[c]);
            memcpy(outerWords[c], outer[k].h, sizeof outerWords[c]);
            ok = credfile__first_u_sha256(&inner[k], &outer[k], &work, d[k].salt, d[k].saltCount,
                                          (uint32_t)(block + 1), u[c]);
        }
        if (!ok) break;
        if (taken == 2) {
            credfile__sha256_ni_rounds2(innerWords, outerWords, u, rounds);
        } else {
            credfile__sha256_ni_rounds1(innerWords, outerWords, u, rounds);
        }
        for (size_t c = 0; c < taken; c++) {
            size_t n = outCount - offset[c] < 32 ? outCount - offset[c] : 32;
            memcpy(d[owner[c]].out + offset[c], u[c], n);
        }
        next += taken;
    }
    credfile__sha256_ni_forget();
    OPENSSL_cleanse(inner, sizeof inner);
    OPENSSL_cleanse(outer, sizeof outer);
    OPENSSL_cleanse(&work, sizeof work);
    OPENSSL_cleanse(innerWords, sizeof innerWords);
    OPENSSL_cleanse(outerWords, sizeof outerWords);
    OPENSSL_cleanse(u, sizeof u);
    if (!ok) {
        for (size_t k = 0; k < count; k++) OPENSSL_cleanse(d[k].out, outCount);
    }
    return ok;
}

#endif // CREDFILE__SHA_NI

int credfile_pbkdf2_loop_available(int digest, int loop) {
    if (digest != CREDFILE_DIGEST_SHA1 && digest != CREDFILE_DIGEST_SHA256
        && digest != CREDFILE_DIGEST_SHA512) {
        return 0;
    }
    switch (loop) {
    case CREDFILE_PBKDF2_LOOP_BEST:
        return 1;
    case CREDFILE_PBKDF2_LOOP_TRANSFORM:
        return CREDFILE_FAST_PBKDF2_AVAILABLE;
    case CREDFILE_PBKDF2_LOOP_SHA_NI:
#if CREDFILE__SHA_NI
        return digest == CREDFILE_DIGEST_SHA256 && credfile__cpu_has_sha_ni();
#else
        return 0;
#endif
    default:
        return 0;
    }
}

/// The loop that `loop` names for `digest` on this CPU: BEST resolved, or -1 when that
/// loop cannot run here (and PKCS5_PBKDF2_HMAC when BEST has no fast loop: 0).
static int credfile__resolve_loop(int digest, int loop) {
    if (!credfile_pbkdf2_loop_available(digest, loop)) return -1;
    if (loop != CREDFILE_PBKDF2_LOOP_BEST) return loop;
    if (credfile_pbkdf2_loop_available(digest, CREDFILE_PBKDF2_LOOP_SHA_NI)) {
        return CREDFILE_PBKDF2_LOOP_SHA_NI;
    }
    return CREDFILE_FAST_PBKDF2_AVAILABLE ? CREDFILE_PBKDF2_LOOP_TRANSFORM : 0;
}

/// Runs `count` checked derivations on the resolved loop `loop`.
static int credfile__derive(int digest, int loop, size_t count, const credfile__derivation *d,
                            unsigned rounds, size_t outCount) {
#if CREDFILE__SHA_NI
    if (loop == CREDFILE_PBKDF2_LOOP_SHA_NI) {
        return credfile__pbkdf2_sha256_ni(count, d, rounds, outCount);
    }
#endif
    int ok = 1;
    for (size_t k = 0; k < count && ok; k++) {
#if CREDFILE_FAST_PBKDF2_AVAILABLE
        if (loop == CREDFILE_PBKDF2_LOOP_TRANSFORM) {
            ok = credfile__pbkdf2_transform(digest, d[k].password, d[k].passwordCount, d[k].salt,
                                            d[k].saltCount, rounds, d[k].out, outCount);
            continue;
        }
#endif
        ok = credfile_pbkdf2_hmac(digest, d[k].password, d[k].passwordCount, d[k].salt,
                                  d[k].saltCount, rounds, d[k].out, outCount);
    }
    if (!ok) {
        for (size_t k = 0; k < count; k++) OPENSSL_cleanse(d[k].out, outCount);
    }
    return ok;
}

int credfile_fast_pbkdf2(int digest, int loop, const void *password, size_t passwordCount,
                         const void *salt, size_t saltCount, unsigned rounds,
                         void *out, size_t outCount) {
    if (!credfile_pbkdf2_arguments_ok(digest, password, passwordCount, salt, saltCount,
                                      rounds, out, outCount)) {
        return 0;
    }
    int resolved = credfile__resolve_loop(digest, loop);
    if (resolved < 0) {
        OPENSSL_cleanse(out, outCount);
        return 0;
    }
    const credfile__derivation d = {password, passwordCount, salt, saltCount, out};
    return credfile__derive(digest, resolved, 1, &d, rounds, outCount);
}

int credfile_fast_pbkdf2_pair(int digest, int loop, unsigned rounds, size_t outCount,
                              const void *password1, size_t password1Count, const void *salt1,
                              size_t salt1Count, void *out1, const void *password2,
                              size_t password2Count, const void *salt2, size_t salt2Count,
                              void *out2) {
    if (!credfile_pbkdf2_arguments_ok(digest, password1, password1Count, salt1, salt1Count,
                                      rounds, out1, outCount)
        || !credfile_pbkdf2_arguments_ok(digest, password2, password2Count, salt2, salt2Count,
                                         rounds, out2, outCount)
        || ((uintptr_t)out1 < (uintptr_t)out2 ? (uintptr_t)out1 + outCount > (uintptr_t)out2
                                              : (uintptr_t)out2 + outCount > (uintptr_t)out1)) {
        return 0;
    }
    int resolved = credfile__resolve_loop(digest, loop);
    if (resolved < 0) {
        OPENSSL_cleanse(out1, outCount);
        OPENSSL_cleanse(out2, outCount);
        return 0;
    }
    const credfile__derivation d[2] = {
        {password1, password1Count, salt1, salt1Count, out1},
        {password2, password2Count, salt2, salt2Count, out2},
    };
    return credfile__derive(digest, resolved, 2, d, rounds, outCount);
}
