// SQLite 3 (Debian libsqlite3-dev) as a system-library module: this header only
// includes (STYLE practice 1). Swift calls it from one file,
// Sources/CredFile/Internals/SQLite.swift, which holds the guard database (SPEC §9).
#ifndef CREDFILE_CSQLITE_SHIM_H
#define CREDFILE_CSQLITE_SHIM_H

#include <sqlite3.h>

#endif
