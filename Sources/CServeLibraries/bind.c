// Opens serve's libraries at their first use; see bind.h.
#include "bind.h"
#pragma GCC visibility pop  // hidden stays for bind.h's names only (headers.h)

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Noreturn void fail(const struct credfile_lazy_library *library, const char *reason) {
    char message[768];
    int length = snprintf(message, sizeof message, "credfile: cannot load %s (Debian package %s): %s\n",
                          library->soname, library->package, reason ? reason : "unknown error");
    if (length > 0) {
        size_t count = (size_t)length < sizeof message ? (size_t)length : sizeof message - 1;
        (void)!write(2, message, count);
    }
    _exit(5);
}

void *credfile_lazy_bind(struct credfile_lazy_library *library, const char *symbol) {
    void *handle = atomic_load_explicit(&library->handle, memory_order_acquire);
    if (!handle) {
        // RTLD_LOCAL: its names stay out of the global scope; a second thread opening it
        // at the same moment gets the same handle (dlopen counts references).
        handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
        if (!handle) fail(library, dlerror());
        atomic_store_explicit(&library->handle, handle, memory_order_release);
    }
    dlerror();
    void *address = dlsym(handle, symbol);
    if (!address) fail(library, dlerror());
    return address;
}
