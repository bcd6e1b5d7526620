// liboath (Debian liboath-dev): RFC 6238 TOTP for the second factor of SPEC §14.
// Include-only: credfile calls it from Sources/CredFile/Internals/OATH.swift.
#ifndef CREDFILE_COATH_SHIM_H
#define CREDFILE_COATH_SHIM_H
#include <liboath/oath.h>
#endif
