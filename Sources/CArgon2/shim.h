// libargon2 (Debian libargon2-dev): the reference Argon2. Include-only: credfile calls
// `argon2_ctx` from Sources/CredFile/Hashing/Schemes/PeerLibraries.swift.
#ifndef CREDFILE_CARGON2_SHIM_H
#define CREDFILE_CARGON2_SHIM_H
#include <argon2.h>
#endif
