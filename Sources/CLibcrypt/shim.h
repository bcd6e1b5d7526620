// libxcrypt (Debian libcrypt-dev): crypt(3) for bcrypt, sha-crypt, yescrypt, scrypt,
// md5crypt and DES. Include-only: credfile calls `crypt_rn` from
// Sources/CredFile/Hashing/Schemes/PeerLibraries.swift.
#ifndef CREDFILE_CLIBCRYPT_SHIM_H
#define CREDFILE_CLIBCRYPT_SHIM_H
#include <crypt.h>
#endif
