// The one C boundary of credfile: OpenSSL's libcrypto.
//
// Swift reaches OpenSSL only through the static inline wrappers below. They take
// `const void *` + `size_t`, so Swift never binds memory to C types, and they do the
// casts and the `int` narrowing here, after Swift has checked every length.
#ifndef CREDFILE_COPENSSL_SHIM_H
#define CREDFILE_COPENSSL_SHIM_H

#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/err.h>
#include <openssl/opensslv.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <string.h>

/// PBKDF2-HMAC with SHA-256 (`sha512 == 0`) or SHA-512 (`sha512 != 0`).
/// Returns 1 on success, 0 on failure (including a length that does not fit an int).
static inline int credfile_pbkdf2_hmac(const void *password, size_t passwordCount,
                                       const void *salt, size_t saltCount,
                                       unsigned rounds, int sha512,
                                       void *out, size_t outCount) {
    if (passwordCount > INT_MAX || saltCount > INT_MAX || outCount > INT_MAX
        || rounds == 0 || rounds > INT_MAX) {
        return 0;
    }
    static const char empty[1] = {0};
    return PKCS5_PBKDF2_HMAC(passwordCount ? (const char *)password : empty, (int)passwordCount,
                             saltCount ? (const unsigned char *)salt : (const unsigned char *)empty,
                             (int)saltCount, (int)rounds,
                             sha512 ? EVP_sha512() : EVP_sha256(),
                             (int)outCount, (unsigned char *)out);
}

/// Fills `out` with `count` cryptographically secure random bytes. Returns 1 on success.
static inline int credfile_random_bytes(void *out, size_t count) {
    if (count > INT_MAX) return 0;
    return RAND_bytes((unsigned char *)out, (int)count);
}

/// Constant-time comparison: 0 when the `count` bytes at `a` and `b` are equal.
static inline int credfile_memcmp(const void *a, const void *b, size_t count) {
    return CRYPTO_memcmp(a, b, count);
}

/// Overwrites `count` bytes at `p` with zeros in a way the compiler cannot elide.
static inline void credfile_cleanse(void *p, size_t count) {
    if (p && count) OPENSSL_cleanse(p, count);
}

/// SHA-256 of `count` bytes into `out` (32 bytes). Returns 1 on success.
static inline int credfile_sha256(const void *data, size_t count, void *out) {
    static const char empty[1] = {0};
    return SHA256(count ? (const unsigned char *)data : (const unsigned char *)empty,
                  count, (unsigned char *)out) != NULL;
}

/// OpenSSL's version string, e.g. "OpenSSL 3.0.19 27 Jan 2026".
static inline const char *credfile_openssl_version(void) {
    return OpenSSL_version(OPENSSL_VERSION);
}


// ---- Fast PBKDF2 (see Sources/CredFile/Hashing/FastPBKDF2_OpenSSL.swift) ----
// Owned by the fast-path work; everything it needs from OpenSSL goes below this line.
//
// PBKDF2-HMAC-SHA-256/512 with the fastpbkdf2 technique, bit-identical to
// PKCS5_PBKDF2_HMAC. The HMAC inner and outer states of the password are computed once;
// U_1 = HMAC(P, S || INT(i)) goes the ordinary way (SHA*_Update/Final on copies of those
// states); every further round is exactly two compression-function calls
// (`SHA256_Transform` / `SHA512_Transform`) on prebuilt padded blocks, with no allocation
// and no context copy in the loop. Each new state goes into the next block as big-endian
// bytes with 16-byte loads and stores, which forward to the 16-byte accesses of
// OpenSSL's compression code.
//
// The low-level API is deprecated in OpenSSL 3.0 but present. When the headers leave it
// out (OPENSSL_NO_DEPRECATED_3_0: an OpenSSL configured `no-deprecated`, or
// OPENSSL_NO_DEPRECATED defined by the build), the same entry points call
// PKCS5_PBKDF2_HMAC instead and `credfile_fast_pbkdf2_available()` returns 0.

#include <string.h>

#if !defined(OPENSSL_NO_DEPRECATED_3_0) && !defined(OPENSSL_NO_SHA256) \
    && !defined(OPENSSL_NO_SHA512)
#define CREDFILE_FAST_PBKDF2_AVAILABLE 1
#else
#define CREDFILE_FAST_PBKDF2_AVAILABLE 0
#endif

/// 1 when the fast PBKDF2 loop was built in, 0 when the fast entry points fall back to
/// PKCS5_PBKDF2_HMAC. Decided at build time from the OpenSSL headers.
static inline int credfile_fast_pbkdf2_available(void) {
    return CREDFILE_FAST_PBKDF2_AVAILABLE;
}

/// 1 when both PBKDF2 paths accept the arguments: password, salt and output lengths
/// that fit an int, 1 ... INT_MAX rounds, 1 ... 2^32 - 1 output blocks of
/// `digestCount` bytes, and no NULL pointer with a nonzero length.
static inline int credfile__pbkdf2_arguments_ok(const void *password, size_t passwordCount,
                                                const void *salt, size_t saltCount,
                                                unsigned rounds, const void *out,
                                                size_t outCount, size_t digestCount) {
    if (passwordCount > INT_MAX || saltCount > INT_MAX || outCount > INT_MAX) return 0;
    if (rounds == 0 || rounds > INT_MAX || outCount == 0 || out == NULL) return 0;
    if ((password == NULL && passwordCount) || (salt == NULL && saltCount)) return 0;
    return (outCount - 1) / digestCount < UINT32_MAX;
}

#if CREDFILE_FAST_PBKDF2_AVAILABLE

#if defined(__clang__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CREDFILE__VECTOR_BSWAP 1
/// 16 bytes as one vector, so that loads, stores and XORs move 16 bytes at a time.
typedef uint8_t credfile__u8x16 __attribute__((vector_size(16)));
/// 16 bytes as eight 16-bit lanes, for byte swaps that need only SSE2: swap the bytes
/// of each lane with two shifts and an OR, then reverse the lanes of each word with
/// `pshuflw`/`pshufhw` (six instructions per 16 bytes; a byte shuffle without SSSE3
/// takes about ten).
typedef uint16_t credfile__u16x8 __attribute__((vector_size(16)));
#else
#define CREDFILE__VECTOR_BSWAP 0
#endif

/// Copies `count` (a multiple of 16) bytes of state words with 16-byte loads and stores.
static inline __attribute__((always_inline)) void
credfile__copy_state(void *dst, const void *src, size_t count) {
#if CREDFILE__VECTOR_BSWAP
    for (size_t j = 0; j < count; j += 16) {
        credfile__u8x16 v;
        __builtin_memcpy(&v, (const unsigned char *)src + j, 16);
        __builtin_memcpy((unsigned char *)dst + j, &v, 16);
    }
#else
    memcpy(dst, src, count);
#endif
}

/// Writes the eight host-order state words `h` of SHA-256 (`width == 4`) or SHA-512
/// (`width == 8`) as big-endian bytes at `block`; when `acc` is not NULL, also XORs
/// those bytes into `acc`. On little-endian clang: 16-byte loads, lane byte swaps,
/// 16-byte stores.
static inline __attribute__((always_inline)) void
credfile__state_to_block(unsigned char *block, const void *h, size_t width,
                         unsigned char *acc) {
    const size_t count = 8 * width;
#if CREDFILE__VECTOR_BSWAP
    for (size_t j = 0; j < count; j += 16) {
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
#else
    for (size_t k = 0; k < 8; k++) {
        uint64_t w = width == 4 ? ((const uint32_t *)h)[k] : ((const uint64_t *)h)[k];
        for (size_t b = 0; b < width; b++) {
            block[k * width + b] = (unsigned char)(w >> (8 * (width - 1 - b)));
        }
    }
    if (acc) {
        for (size_t j = 0; j < count; j++) acc[j] ^= block[j];
    }
#endif
}

/// The big-endian bytes of the PBKDF2 block index `i`.
static inline void credfile__be32(unsigned char out[4], uint32_t i) {
    out[0] = (unsigned char)(i >> 24);
    out[1] = (unsigned char)(i >> 16);
    out[2] = (unsigned char)(i >> 8);
    out[3] = (unsigned char)i;
}

/// The HMAC-SHA-256 inner and outer states of `password`, each after its one key block
/// (a password longer than the 64-byte block is hashed first). Returns 1 on success.
static inline int credfile__sha256_hmac_states(const void *password, size_t passwordCount,
                                               SHA256_CTX *inner, SHA256_CTX *outer) {
    unsigned char key[SHA256_CBLOCK], pad[SHA256_CBLOCK];
    int ok = 1;
    memset(key, 0, sizeof key);
    if (passwordCount > sizeof key) {
        ok = SHA256((const unsigned char *)password, passwordCount, key) != NULL;
    } else if (passwordCount) {
        memcpy(key, password, passwordCount);
    }
    for (size_t j = 0; j < sizeof pad; j++) pad[j] = key[j] ^ 0x36;
    ok = ok && SHA256_Init(inner) && SHA256_Update(inner, pad, sizeof pad);
    for (size_t j = 0; j < sizeof pad; j++) pad[j] = key[j] ^ 0x5c;
    ok = ok && SHA256_Init(outer) && SHA256_Update(outer, pad, sizeof pad);
    OPENSSL_cleanse(key, sizeof key);
    OPENSSL_cleanse(pad, sizeof pad);
    return ok;
}

/// The HMAC-SHA-512 inner and outer states of `password`, each after its one key block
/// (a password longer than the 128-byte block is hashed first). Returns 1 on success.
static inline int credfile__sha512_hmac_states(const void *password, size_t passwordCount,
                                               SHA512_CTX *inner, SHA512_CTX *outer) {
    unsigned char key[SHA512_CBLOCK], pad[SHA512_CBLOCK];
    int ok = 1;
    memset(key, 0, sizeof key);
    if (passwordCount > sizeof key) {
        ok = SHA512((const unsigned char *)password, passwordCount, key) != NULL;
    } else if (passwordCount) {
        memcpy(key, password, passwordCount);
    }
    for (size_t j = 0; j < sizeof pad; j++) pad[j] = key[j] ^ 0x36;
    ok = ok && SHA512_Init(inner) && SHA512_Update(inner, pad, sizeof pad);
    for (size_t j = 0; j < sizeof pad; j++) pad[j] = key[j] ^ 0x5c;
    ok = ok && SHA512_Init(outer) && SHA512_Update(outer, pad, sizeof pad);
    OPENSSL_cleanse(key, sizeof key);
    OPENSSL_cleanse(pad, sizeof pad);
    return ok;
}

/// T_i ^= U_2 ... U_rounds for SHA-256: `block` holds U_1 (big-endian) followed by the
/// padding of a 96-byte message, `acc` holds U_1. Two compressions per round.
static inline void credfile__sha256_rounds(const SHA256_CTX *inner, const SHA256_CTX *outer,
                                           SHA256_CTX *work, unsigned char *block,
                                           unsigned char *other, unsigned char *acc,
                                           unsigned rounds) {
    for (unsigned r = 1; r < rounds; r++) {
        credfile__copy_state(work->h, inner->h, 32);
        SHA256_Transform(work, block);
        credfile__state_to_block(other, work->h, 4, NULL);
        credfile__copy_state(work->h, outer->h, 32);
        SHA256_Transform(work, other);
        credfile__state_to_block(block, work->h, 4, acc);
    }
}

/// T_i ^= U_2 ... U_rounds for SHA-512: `block` holds U_1 (big-endian) followed by the
/// padding of a 192-byte message, `acc` holds U_1. Two compressions per round.
static inline void credfile__sha512_rounds(const SHA512_CTX *inner, const SHA512_CTX *outer,
                                           SHA512_CTX *work, unsigned char *block,
                                           unsigned char *other, unsigned char *acc,
                                           unsigned rounds) {
    for (unsigned r = 1; r < rounds; r++) {
        credfile__copy_state(work->h, inner->h, 64);
        SHA512_Transform(work, block);
        credfile__state_to_block(other, work->h, 8, NULL);
        credfile__copy_state(work->h, outer->h, 64);
        SHA512_Transform(work, other);
        credfile__state_to_block(block, work->h, 8, acc);
    }
}

#endif // CREDFILE_FAST_PBKDF2_AVAILABLE

/// PBKDF2-HMAC-SHA-256 of `password` and `salt` with `rounds` rounds into `outCount`
/// bytes at `out`, bit-identical to PKCS5_PBKDF2_HMAC with EVP_sha256(). Returns 1 on
/// success, 0 on failure (arguments outside `credfile__pbkdf2_arguments_ok`, or OpenSSL
/// failing). Intermediate state is cleansed before returning, and `out` on failure.
static inline int credfile_fast_pbkdf2_sha256(const void *password, size_t passwordCount,
                                              const void *salt, size_t saltCount,
                                              unsigned rounds, void *out, size_t outCount) {
    if (!credfile__pbkdf2_arguments_ok(password, passwordCount, salt, saltCount, rounds,
                                       out, outCount, SHA256_DIGEST_LENGTH)) {
        return 0;
    }
#if CREDFILE_FAST_PBKDF2_AVAILABLE
    SHA256_CTX inner, outer, work;
    _Alignas(16) unsigned char block[SHA256_CBLOCK], other[SHA256_CBLOCK];
    _Alignas(16) unsigned char acc[SHA256_DIGEST_LENGTH], counter[4];
    unsigned char *dst = (unsigned char *)out;
    size_t left = outCount;
    int ok = credfile__sha256_hmac_states(password, passwordCount, &inner, &outer);

    // Both loop blocks hash one digest after a key block: 64 + 32 bytes = 768 bits.
    memset(block, 0, sizeof block);
    block[SHA256_DIGEST_LENGTH] = 0x80;
    block[SHA256_CBLOCK - 2] = 0x03;
    memcpy(other, block, sizeof other);

    for (uint32_t i = 1; ok && left > 0; i++) {
        credfile__be32(counter, i);
        work = inner;
        ok = (saltCount == 0 || SHA256_Update(&work, salt, saltCount))
            && SHA256_Update(&work, counter, 4) && SHA256_Final(block, &work);
        work = outer;
        ok = ok && SHA256_Update(&work, block, SHA256_DIGEST_LENGTH)
            && SHA256_Final(block, &work);
        if (!ok) break;
        memcpy(acc, block, sizeof acc);
        credfile__sha256_rounds(&inner, &outer, &work, block, other, acc, rounds);
        size_t n = left < sizeof acc ? left : sizeof acc;
        memcpy(dst, acc, n);
        dst += n;
        left -= n;
    }
    OPENSSL_cleanse(&inner, sizeof inner);
    OPENSSL_cleanse(&outer, sizeof outer);
    OPENSSL_cleanse(&work, sizeof work);
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(other, sizeof other);
    OPENSSL_cleanse(acc, sizeof acc);
    if (!ok) OPENSSL_cleanse(out, outCount);
    return ok;
#else
    return credfile_pbkdf2_hmac(password, passwordCount, salt, saltCount, rounds, 0,
                                out, outCount);
#endif
}

/// PBKDF2-HMAC-SHA-512 of `password` and `salt` with `rounds` rounds into `outCount`
/// bytes at `out`, bit-identical to PKCS5_PBKDF2_HMAC with EVP_sha512(). Returns 1 on
/// success, 0 on failure (arguments outside `credfile__pbkdf2_arguments_ok`, or OpenSSL
/// failing). Intermediate state is cleansed before returning, and `out` on failure.
static inline int credfile_fast_pbkdf2_sha512(const void *password, size_t passwordCount,
                                              const void *salt, size_t saltCount,
                                              unsigned rounds, void *out, size_t outCount) {
    if (!credfile__pbkdf2_arguments_ok(password, passwordCount, salt, saltCount, rounds,
                                       out, outCount, SHA512_DIGEST_LENGTH)) {
        return 0;
    }
#if CREDFILE_FAST_PBKDF2_AVAILABLE
    SHA512_CTX inner, outer, work;
    _Alignas(16) unsigned char block[SHA512_CBLOCK], other[SHA512_CBLOCK];
    _Alignas(16) unsigned char acc[SHA512_DIGEST_LENGTH], counter[4];
    unsigned char *dst = (unsigned char *)out;
    size_t left = outCount;
    int ok = credfile__sha512_hmac_states(password, passwordCount, &inner, &outer);

    // Both loop blocks hash one digest after a key block: 128 + 64 bytes = 1536 bits.
    memset(block, 0, sizeof block);
    block[SHA512_DIGEST_LENGTH] = 0x80;
    block[SHA512_CBLOCK - 2] = 0x06;
    memcpy(other, block, sizeof other);

    for (uint32_t i = 1; ok && left > 0; i++) {
        credfile__be32(counter, i);
        work = inner;
        ok = (saltCount == 0 || SHA512_Update(&work, salt, saltCount))
            && SHA512_Update(&work, counter, 4) && SHA512_Final(block, &work);
        work = outer;
        ok = ok && SHA512_Update(&work, block, SHA512_DIGEST_LENGTH)
            && SHA512_Final(block, &work);
        if (!ok) break;
        memcpy(acc, block, sizeof acc);
        credfile__sha512_rounds(&inner, &outer, &work, block, other, acc, rounds);
        size_t n = left < sizeof acc ? left : sizeof acc;
        memcpy(dst, acc, n);
        dst += n;
        left -= n;
    }
    OPENSSL_cleanse(&inner, sizeof inner);
    OPENSSL_cleanse(&outer, sizeof outer);
    OPENSSL_cleanse(&work, sizeof work);
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(other, sizeof other);
    OPENSSL_cleanse(acc, sizeof acc);
    if (!ok) OPENSSL_cleanse(out, outCount);
    return ok;
#else
    return credfile_pbkdf2_hmac(password, passwordCount, salt, saltCount, rounds, 1,
                                out, outCount);
#endif
}

#endif
