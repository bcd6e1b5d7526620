// The one C boundary of credfile: OpenSSL's libcrypto.
//
// Swift reaches OpenSSL only through the static inline wrappers below. They take
// `const void *` + `size_t`, so Swift never binds memory to C types, and they do the
// casts and the `int` narrowing here, after Swift has checked every length.
#ifndef CREDFILE_COPENSSL_SHIM_H
#define CREDFILE_COPENSSL_SHIM_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1  /* memmem */
#endif
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

/// The first occurrence of `needle` in `haystack`, or NULL (glibc's `memmem`, which
/// Swift's Glibc module does not export). Used by the line scanner's lookup.
static inline const void *credfile_memmem(const void *haystack, size_t haystackCount,
                                          const void *needle, size_t needleCount) {
    return memmem(haystack, haystackCount, needle, needleCount);
}

// ---- Fast PBKDF2 (see Sources/CredFile/Hashing/FastPBKDF2_OpenSSL.swift) ----
// Owned by the fast-path work; everything it needs from OpenSSL goes below this line.

#endif
