// SHA-1 for the Pwned Passwords blocklist (a list of SHA-1 hex digests): not a password
// hash, only the key under which such a list is sorted. One call into OpenSSL's EVP.
#include "CCredFile.h"

#include <openssl/evp.h>

int credfile_sha1(const void *data, size_t count, void *digest20) {
    unsigned int length = 0;
    if (EVP_Digest(data, count, digest20, &length, EVP_sha1(), NULL) != 1) return 0;
    return length == 20;
}
