// libfido2 (Debian libfido2-dev): WebAuthn registration and assertion checks for the
// passkeys of SPEC §14. Include-only: credfile calls it from Sources/CredFile/Internals/FIDO2.swift.
#ifndef CREDFILE_CFIDO2_SHIM_H
#define CREDFILE_CFIDO2_SHIM_H
#include <fido.h>
#include <fido/es256.h>
#endif
