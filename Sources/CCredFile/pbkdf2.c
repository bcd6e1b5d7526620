// Fast PBKDF2-HMAC (see Sources/CredFile/Hashing/FastPBKDF2_OpenSSL.swift), bit-identical
// to PKCS5_PBKDF2_HMAC, with the fastpbkdf2 technique: the HMAC inner and outer states of
// the password are computed once; U_1 = HMAC(P, S || INT(i)) goes the ordinary way
// (SHA*_Update/Final on copies of those states); every further round is exactly two
// compression-function calls (`SHA*_Transform`) on prebuilt padded blocks, with no
// allocation and no context copy in the loop. Each new state goes into the next block as
// big-endian bytes with 16-byte loads and stores, which forward to the 16-byte accesses of
// OpenSSL's compression code.
//
// One template (`CREDFILE__DECL_PBKDF2`, fastpbkdf2's DECL_PBKDF2 shape) is instantiated
// per hash: SHA-1 (for peers' hashes), SHA-256 and SHA-512.
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

int credfile_fast_pbkdf2_available(void) {
    return CREDFILE_FAST_PBKDF2_AVAILABLE;
}

#if CREDFILE_FAST_PBKDF2_AVAILABLE

#if defined(__clang__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CREDFILE__VECTOR_BSWAP 1
/// 16 bytes as one vector, so that loads and stores move 16 bytes at a time.
typedef uint8_t credfile__u8x16 __attribute__((vector_size(16)));
/// 16 bytes as eight 16-bit lanes, for byte swaps that need only SSE2: swap the bytes
/// of each lane with two shifts and an OR, then reverse the lanes of each word with
/// `pshuflw`/`pshufhw` (six instructions per 16 bytes; a byte shuffle without SSSE3
/// takes about ten).
typedef uint16_t credfile__u16x8 __attribute__((vector_size(16)));
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
/// NULL, also XORs those bytes into `acc`. On little-endian clang: 16-byte loads, lane
/// byte swaps, 16-byte stores; a tail shorter than 16 bytes goes word by word.
static inline __attribute__((always_inline)) void
credfile__state_to_block(unsigned char *block, const void *h, size_t width, size_t count,
                         unsigned char *acc) {
    size_t j = 0;
#if CREDFILE__VECTOR_BSWAP
    for (; j + 16 <= count; j += 16) {
        credfile__u16x8 v;
        __builtin_memcpy(&v, (const unsigned char *)h + j, 16);
        v = (credfile__u16x8)((v << 8) | (v >> 8));
        if (width == 4) {
            v = __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
        } else {
            v = __builtin_shufflevector(v, v, 3, 2, 1, 0, 7, 6, 5, 4);
        }
        __builtin_memcpy(block + j, &v, 16);
        if (acc) {
            credfile__u16x8 a;
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

/// Declares `credfile__pbkdf2_<name>`: the whole PBKDF2 for one hash.
///   CTX: the OpenSSL context type; STATE: accessor of its state words; WIDTH: bytes of
///   one state word; CBLOCK: the block size; DLEN: the digest size; INIT, UPDATE, FINAL,
///   TRANSFORM, HASH: the low-level SHA functions.
/// Arguments are checked once, by the caller (`credfile_fast_pbkdf2`).
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
        _Alignas(16) unsigned char acc[DLEN], counter[4];                                  \
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
            credfile__be32(counter, i);                                                    \
            work = inner;                                                                  \
            ok = (saltCount == 0 || UPDATE(&work, salt, saltCount))                        \
                && UPDATE(&work, counter, 4) && FINAL(block, &work);                       \
            work = outer;                                                                  \
            ok = ok && UPDATE(&work, block, DLEN) && FINAL(block, &work);                  \
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

#endif // CREDFILE_FAST_PBKDF2_AVAILABLE

int credfile_fast_pbkdf2(int digest, const void *password, size_t passwordCount,
                         const void *salt, size_t saltCount, unsigned rounds,
                         void *out, size_t outCount) {
    if (!credfile_pbkdf2_arguments_ok(digest, password, passwordCount, salt, saltCount,
                                      rounds, out, outCount)) {
        return 0;
    }
#if CREDFILE_FAST_PBKDF2_AVAILABLE
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
#else
    return credfile_pbkdf2_hmac(digest, password, passwordCount, salt, saltCount, rounds,
                                out, outCount);
#endif
}
