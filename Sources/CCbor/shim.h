// libcbor (Debian libcbor-dev): the attestation object and COSE keys of the passkeys of
// SPEC §14. Include-only: credfile calls it from Sources/CredFile/Internals/CBOR.swift.
#ifndef CREDFILE_CCBOR_SHIM_H
#define CREDFILE_CCBOR_SHIM_H
#include <cbor.h>
#endif
