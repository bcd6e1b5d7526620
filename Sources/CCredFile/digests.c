// OpenSSL digests and scrypt for the peer hash families (SPEC §3.2): `{SHA}`,
// `{SSHA*}`, `$apr1$`, Django `md5$`/`sha1$`/`bcrypt_sha256$`, Django and Werkzeug
// scrypt. Lengths arrive as size_t and are narrowed here, after Swift checked them.
#include "CCredFile.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <stdint.h>

static const EVP_MD *credfile_peer_md(int algorithm) {
    switch (algorithm) {
    case CREDFILE_DIGEST_MD5: return EVP_md5();
    case CREDFILE_DIGEST_SHA1: return EVP_sha1();
    case CREDFILE_DIGEST_SHA256: return EVP_sha256();
    case CREDFILE_DIGEST_SHA512: return EVP_sha512();
    default: return NULL;
    }
}

int credfile_digest(int algorithm, const void *data, size_t count, void *out, size_t outCount) {
    static const unsigned char empty[1] = {0};
    const EVP_MD *md = credfile_peer_md(algorithm);
    if (md == NULL || out == NULL || outCount < (size_t)EVP_MD_get_size(md)) return 0;
    unsigned int written = 0;
    if (EVP_Digest(count ? data : empty, count, out, &written, md, NULL) != 1) return 0;
    return (int)written;
}

int credfile_scrypt(const void *password, size_t passwordCount, const void *salt, size_t saltCount,
                    uint64_t n, uint32_t r, uint32_t p, uint64_t maxMemory,
                    void *out, size_t outCount) {
    static unsigned char empty[1] = {0};
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "SCRYPT", NULL);
    if (kdf == NULL) return 0;
    EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    if (ctx == NULL) return 0;
    OSSL_PARAM params[7];
    params[0] = OSSL_PARAM_construct_octet_string(
        OSSL_KDF_PARAM_PASSWORD, passwordCount ? (void *)password : empty, passwordCount);
    params[1] = OSSL_PARAM_construct_octet_string(
        OSSL_KDF_PARAM_SALT, saltCount ? (void *)salt : empty, saltCount);
    params[2] = OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n);
    params[3] = OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r);
    params[4] = OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &p);
    params[5] = OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &maxMemory);
    params[6] = OSSL_PARAM_construct_end();
    int ok = EVP_KDF_derive(ctx, out, outCount, params) == 1;
    EVP_KDF_CTX_free(ctx);
    return ok;
}
