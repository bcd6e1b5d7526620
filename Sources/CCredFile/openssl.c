// Checked wrappers over the few libcrypto calls credfile makes (swift-crypto's shims.c
// shape): Swift passes `const void *` + `size_t`, the casts and `int` narrowing happen
// here after one argument check.
#include "CCredFile.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/opensslv.h>
#include <limits.h>
#include <stdint.h>

/// The EVP digest of a `credfile_digest`, or NULL.
static const EVP_MD *credfile__evp(int digest) {
    switch (digest) {
    case CREDFILE_DIGEST_SHA1: return EVP_sha1();
    case CREDFILE_DIGEST_SHA256: return EVP_sha256();
    case CREDFILE_DIGEST_SHA512: return EVP_sha512();
    case CREDFILE_DIGEST_MD5: return EVP_md5();
    default: return NULL;
    }
}

int credfile_pbkdf2_arguments_ok(int digest, const void *password, size_t passwordCount,
                                 const void *salt, size_t saltCount, unsigned rounds,
                                 const void *out, size_t outCount) {
    const EVP_MD *md = credfile__evp(digest);
    if (md == NULL || digest == CREDFILE_DIGEST_MD5) return 0;  // MD5 is no PRF of ours
    if (passwordCount > INT_MAX || saltCount > INT_MAX || outCount > INT_MAX) return 0;
    if (rounds == 0 || rounds > INT_MAX || outCount == 0 || out == NULL) return 0;
    if ((password == NULL && passwordCount) || (salt == NULL && saltCount)) return 0;
    return (outCount - 1) / (size_t)EVP_MD_get_size(md) < UINT32_MAX;
}

int credfile_pbkdf2_hmac(int digest, const void *password, size_t passwordCount,
                         const void *salt, size_t saltCount, unsigned rounds,
                         void *out, size_t outCount) {
    if (!credfile_pbkdf2_arguments_ok(digest, password, passwordCount, salt, saltCount,
                                      rounds, out, outCount)) {
        return 0;
    }
    static const char empty[1] = {0};
    return PKCS5_PBKDF2_HMAC(passwordCount ? (const char *)password : empty, (int)passwordCount,
                             saltCount ? (const unsigned char *)salt : (const unsigned char *)empty,
                             (int)saltCount, (int)rounds, credfile__evp(digest),
                             (int)outCount, (unsigned char *)out);
}

int credfile_digest(int digest, const void *data, size_t count, void *out, size_t outCount) {
    const EVP_MD *md = credfile__evp(digest);
    static const char empty[1] = {0};
    if (md == NULL || out == NULL || (data == NULL && count)) return 0;
    if (outCount < (size_t)EVP_MD_get_size(md)) return 0;
    unsigned int written = 0;
    if (EVP_Digest(count ? data : empty, count, (unsigned char *)out, &written, md, NULL) != 1) return 0;
    return (int)written;
}

int credfile_hmac_sha256(const void *key, size_t keyCount, const void *data, size_t count,
                         void *out, size_t outCount) {
    static const char empty[1] = {0};
    if (out == NULL || outCount < 32 || keyCount > INT_MAX) return 0;
    if ((key == NULL && keyCount) || (data == NULL && count)) return 0;
    unsigned int written = 0;
    if (HMAC(EVP_sha256(), keyCount ? key : empty, (int)keyCount, count ? data : (const void *)empty, count,
             (unsigned char *)out, &written) == NULL) {
        return 0;
    }
    return (int)written;
}

int credfile_random_bytes(void *out, size_t count) {
    if (count > INT_MAX || (out == NULL && count)) return 0;
    return RAND_bytes((unsigned char *)out, (int)count);
}

int credfile_memcmp(const void *a, const void *b, size_t count) {
    return CRYPTO_memcmp(a, b, count);
}

void credfile_cleanse(void *p, size_t count) {
    if (p && count) OPENSSL_cleanse(p, count);
}

const char *credfile_openssl_version(void) {
    return OpenSSL_version(OPENSSL_VERSION);
}
