// libpq, PostgreSQL's client library (Debian libpq-dev; at run time libpq5), as a
// system-library module: this header only includes (STYLE practice 1). It is never
// linked: Sources/CCredFile/postgresql.c opens libpq.so.5 at the first use of a
// `state = postgresql://…` (SPEC §15), so no other command maps libpq and the 20-odd
// libraries behind it (Kerberos, LDAP, GnuTLS). Swift calls it from one file,
// Sources/CredFile/Internals/PostgreSQL.swift.
#ifndef CREDFILE_CPOSTGRESQL_SHIM_H
#define CREDFILE_CPOSTGRESQL_SHIM_H

#include <postgresql/libpq-fe.h>

#endif
