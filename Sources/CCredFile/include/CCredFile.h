// credfile's own C code: what must be written in C, declared here, defined in the .c
// files beside this folder (where _GNU_SOURCE and OPENSSL_SUPPRESS_DEPRECATED stay
// local). Every function takes `const void *` + `size_t`, so Swift never binds memory
// to C types. Only a few marked Swift files import this module.
#ifndef CCREDFILE_H
#define CCREDFILE_H

#include <stddef.h>
#include "CCredFileProcess.h"

/// The first occurrence of `needle` in `haystack`, or NULL (glibc's `memmem`).
const void *credfile_memmem(const void *haystack, size_t haystackCount,
                            const void *needle, size_t needleCount);

/// `mkostemp(template, O_CLOEXEC)`: creates a unique file (mode 0600) from a template
/// ending in XXXXXX, rewritten in place; returns the descriptor or -1 with errno set.
int credfile_mkostemp_cloexec(char *template_);

// ---- Peer hash families (digests.c; owned by the peer-schemes work, issue #12) ----
// OpenSSL digests and scrypt for `{SHA}`, `{SSHA*}`, `$apr1$`, Django and Werkzeug.

#include <stdint.h>

#define CREDFILE_DIGEST_MD5 1
#define CREDFILE_DIGEST_SHA1 2
#define CREDFILE_DIGEST_SHA256 3
#define CREDFILE_DIGEST_SHA512 4

/// The digest (one of CREDFILE_DIGEST_*) of `count` bytes into `out`, which holds
/// `outCount` bytes. Returns the digest's length, or 0 on failure. (`EVP_Digest`.)
int credfile_digest(int algorithm, const void *data, size_t count, void *out, size_t outCount);

/// scrypt (RFC 7914) through OpenSSL's `EVP_KDF` "SCRYPT", refusing to use more than
/// `maxMemory` bytes. Returns 1 on success, 0 on failure.
int credfile_scrypt(const void *password, size_t passwordCount, const void *salt, size_t saltCount,
                    uint64_t n, uint32_t r, uint32_t p, uint64_t maxMemory,
                    void *out, size_t outCount);
// --- SHA-1 (sha1.c): the key of a Pwned Passwords blocklist, never a password hash. ---

/// Writes the 20-byte SHA-1 digest of `data` to `digest20`; returns 1, or 0 when
/// OpenSSL fails.
int credfile_sha1(const void *data, size_t count, void *digest20);

#endif
