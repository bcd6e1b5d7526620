// ICU's common library (Debian libicu-dev): RFC 4518's LDAP string preparation (usprep's
// USPREP_RFC4518_LDAP_CI profile). Include-only: credfile calls it from
// Sources/CCredFile/ldapprep.c (ICU renames its symbols per version with macros, which
// Swift cannot call), which opens libicuuc at first use: nothing links it.
#ifndef CREDFILE_CICU_SHIM_H
#define CREDFILE_CICU_SHIM_H
#include <unicode/usprep.h>
#include <unicode/ustring.h>
#endif
