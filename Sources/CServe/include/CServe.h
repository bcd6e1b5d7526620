// `credfile serve`'s own C (SPEC §10): the calls of libmicrohttpd that Swift cannot make
// because they are variadic (MHD_get_connection_info). Only
// Sources/credfile/Serve/HTTPDaemon.swift imports this module; the library never does.
#ifndef CREDFILE_CSERVE_H
#define CREDFILE_CSERVE_H

#include <stdint.h>

struct MHD_Connection;

/// The connection's socket, or -1 (MHD_CONNECTION_INFO_CONNECTION_FD).
int credfile_serve_connection_fd(struct MHD_Connection *connection);

/// Copies the TCP peer's address (4 bytes for IPv4, 16 for IPv6, network order) into
/// `bytes` and returns how many; 0 for any other peer (MHD_CONNECTION_INFO_CLIENT_ADDRESS).
int credfile_serve_client_address(struct MHD_Connection *connection, uint8_t bytes[16]);

#endif
