// GNU libmicrohttpd (Debian libmicrohttpd-dev) as a system-library module: this header
// only includes (STYLE practice 1), and nothing links the library: Sources/CServeLibraries
// opens it at first use. `credfile serve` (SPEC §10) gets its HTTP/1.1 from it;
// only Sources/credfile/Serve/HTTPDaemon.swift imports it.
#ifndef CREDFILE_CMICROHTTPD_SHIM_H
#define CREDFILE_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

#endif
