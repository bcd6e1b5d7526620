// The headers whose functions bindings.c defines (Scripts/make-serve-bindings.sh reads
// their prototypes from here). Their own system headers come first, with default
// visibility; the two libraries' declarations, and every one after them in the file that
// includes this one, are hidden: the executable exports none of these names, so the
// library, once opened, still resolves its own calls to itself. (A system function
// declared hidden would make the linker look for it inside the executable: include
// system headers before this one, or after `#pragma GCC visibility pop`.)
#ifndef CREDFILE_SERVE_HEADERS_H
#define CREDFILE_SERVE_HEADERS_H

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>

#pragma GCC visibility push(hidden)
#include <microhttpd.h>
#include <systemd/sd-daemon.h>

#endif
