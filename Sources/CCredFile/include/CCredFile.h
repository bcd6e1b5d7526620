// credfile's own C code: what must be written in C, declared here, defined in the .c
// files beside this folder (where _GNU_SOURCE and OPENSSL_SUPPRESS_DEPRECATED stay
// local). Every function takes `const void *` + `size_t`, so Swift never binds memory
// to C types. Only a few marked Swift files import this module.
#ifndef CCREDFILE_H
#define CCREDFILE_H

#include <stddef.h>
#include "CCredFileProcess.h"

/// The first occurrence of `needle` in `haystack`, or NULL (glibc's `memmem`).
const void *credfile_memmem(const void *haystack, size_t haystackCount,
                            const void *needle, size_t needleCount);

/// `mkostemp(template, O_CLOEXEC)`: creates a unique file (mode 0600) from a template
/// ending in XXXXXX, rewritten in place; returns the descriptor or -1 with errno set.
int credfile_mkostemp_cloexec(char *template_);

#endif
