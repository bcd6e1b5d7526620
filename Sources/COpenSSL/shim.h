// OpenSSL's libcrypto as a system-library module: this header only includes (STYLE
// practice 1). Every call Swift makes into libcrypto goes through the declarations in
// Sources/CCredFile/include/CCredFile.h, whose bodies live in Sources/CCredFile/*.c.
#ifndef CREDFILE_COPENSSL_SHIM_H
#define CREDFILE_COPENSSL_SHIM_H

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/err.h>
#include <openssl/opensslv.h>

#endif
