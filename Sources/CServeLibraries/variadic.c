// libmicrohttpd's one variadic function that credfile calls, bound at first use by hand
// (Scripts/make-serve-bindings.sh writes only the non-variadic ones): CServe's
// credfile_serve_connection_fd and credfile_serve_client_address call it.
#include "bind.h"

LIBRARY(microhttpd, "libmicrohttpd.so.12", "libmicrohttpd12")

// A variadic call cannot pass its own `...` on, so this forwards none: it serves the
// information kinds that take no further argument (MHD_CONNECTION_INFO_CONNECTION_FD and
// MHD_CONNECTION_INFO_CLIENT_ADDRESS among them), the only ones CServe asks for.
const union MHD_ConnectionInfo *(MHD_get_connection_info)(struct MHD_Connection *connection,
                                                          enum MHD_ConnectionInfoType info_type, ...) {
    LAZY_ADDRESS(microhttpd, MHD_get_connection_info)
    typedef const union MHD_ConnectionInfo *(*variadic)(struct MHD_Connection *, enum MHD_ConnectionInfoType, ...);
    return ((variadic)address)(connection, info_type);
}
