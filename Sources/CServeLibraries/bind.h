// The binding at first use of bindings.c's functions (issue #34 item 9): the credfile
// executable links no libmicrohttpd and no libsystemd; each of their functions it calls is
// defined here, opens its library on its first call and jumps to the real function.
#ifndef CREDFILE_SERVE_BIND_H
#define CREDFILE_SERVE_BIND_H

#include <stdatomic.h>

#include "headers.h"  // from here on, every declaration is hidden

/// A library opened at first use: its soname, the Debian package that ships it (named in
/// the error when it is missing), and its handle once open.
struct credfile_lazy_library {
    const char *soname;
    const char *package;
    void *_Atomic handle;
};

/// The address of `symbol` in `library`, opening the library first if no call has yet.
/// When the library or the symbol is missing it writes
/// `credfile: cannot load SONAME (Debian package PACKAGE): REASON` to standard error and
/// ends the process with exit status 5 (an I/O error, SPEC §5): a function of it was
/// called, and there is nothing it could return instead.
void *credfile_lazy_bind(struct credfile_lazy_library *library, const char *symbol);

#define LIBRARY(id, soname, package) static struct credfile_lazy_library library_##id = {soname, package, NULL};

#define LAZY_ADDRESS(lib, name)                                                 \
    static void *_Atomic bound;                                                 \
    void *address = atomic_load_explicit(&bound, memory_order_acquire);         \
    if (!address) {                                                             \
        address = credfile_lazy_bind(&library_##lib, #name);                    \
        atomic_store_explicit(&bound, address, memory_order_release);           \
    }

// The name in parentheses, as some are also function-like macros (MHD_get_fdset). A
// function pointer from dlsym's `void *`, as POSIX (dlsym(3)) requires to work.
#define BIND(lib, ret, name, params, args)                                      \
    ret(name) params {                                                         \
        LAZY_ADDRESS(lib, name)                                                 \
        return ((ret(*) params)address) args;                                   \
    }
#define BIND_VOID(lib, name, params, args)                                      \
    void(name) params {                                                        \
        LAZY_ADDRESS(lib, name)                                                 \
        ((void(*) params)address) args;                                         \
    }

#endif
