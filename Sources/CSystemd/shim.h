// libsystemd (Debian libsystemd-dev) as a system-library module: this header only
// includes (STYLE practice 1); Sources/CServeLibraries opens the library at first use.
// `credfile serve` (SPEC §10) takes the sockets systemd passes (sd_listen_fds) and
// reports readiness (sd_notify); only Sources/credfile/Serve/Systemd.swift imports it.
#ifndef CREDFILE_CSYSTEMD_SHIM_H
#define CREDFILE_CSYSTEMD_SHIM_H

#include <systemd/sd-daemon.h>

#endif
