// libqrencode (Debian libqrencode-dev): the QR code of `credfile otp --enroll` on a
// terminal (SPEC §14). CLI only: Sources/credfile/TerminalQR.swift calls it.
#ifndef CREDFILE_CQRENCODE_SHIM_H
#define CREDFILE_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
