// glibc functions that Swift's Glibc module does not export. _GNU_SOURCE is defined
// here only, so it changes nothing in any header Swift imports.
#define _GNU_SOURCE 1
#include "CCredFile.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

const void *credfile_memmem(const void *haystack, size_t haystackCount,
                            const void *needle, size_t needleCount) {
    return memmem(haystack, haystackCount, needle, needleCount);
}

int credfile_mkostemp_cloexec(char *template_) {
    return mkostemp(template_, O_CLOEXEC);
}
