// glibc functions that Swift's Glibc module does not export. _GNU_SOURCE is defined
// here only, so it changes nothing in any header Swift imports.
#define _GNU_SOURCE 1
#include "CCredFile.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

const void *credfile_memmem(const void *haystack, size_t haystackCount,
                            const void *needle, size_t needleCount) {
    return memmem(haystack, haystackCount, needle, needleCount);
}

int credfile_mkostemp_cloexec(char *template_) {
    return mkostemp(template_, O_CLOEXEC);
}

void credfile_prefault(void *start, size_t length) {
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels say EINVAL, and nothing changes
#endif
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)start + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)start + length) & ~(page - 1);
    if (end > first) (void)madvise((void *)first, end - first, MADV_POPULATE_WRITE);
}

long credfile_copy_file_range(int from, long long *offset, int to, size_t count) {
    loff_t at = *offset;
    ssize_t copied = copy_file_range(from, &at, to, NULL, count, 0);
    *offset = at;
    return copied;
}

// ---- reading a mapped file ----

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

static const char *volatile guarded_start;
static volatile size_t guarded_length;
static volatile uintptr_t guarded_page_size;
static volatile sig_atomic_t guarded_fault;
static struct sigaction before_guard;
static atomic_int guard_taken;

static void guard_handler(int sig, siginfo_t *info, void *context) {
    (void)sig;
    (void)context;
    const char *address = info->si_addr;
    const char *start = guarded_start;
    if (start != NULL && address >= start && address < start + guarded_length) {
        // The file shrank under the mapping: this page lies past its new end. A page of
        // zeros takes its place (mmap is a plain system call here), the reading goes on,
        // and the caller, told by credfile_mapped_read_end, reads the file again.
        void *page = (void *)((uintptr_t)address & ~(guarded_page_size - 1));
        if (mmap(page, guarded_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
            guarded_fault = 1;
            return;
        }
    }
    // Not a page of the mapping: what was installed before handles it when the faulting
    // instruction runs again (the hardened CLI's fatal handler, or the default action).
    sigaction(SIGBUS, &before_guard, NULL);
}

int credfile_mapped_read_begin(const void *start, size_t length) {
    int free = 0;
    if (!atomic_compare_exchange_strong(&guard_taken, &free, 1)) {
        errno = EBUSY;  // another thread's mapped read: this one reads the file instead
        return -1;
    }
    guarded_page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    guarded_fault = 0;
    guarded_length = length;
    guarded_start = start;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = guard_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGBUS, &action, &before_guard) != 0) {
        guarded_start = NULL;
        atomic_store(&guard_taken, 0);
        return -1;
    }
    return 0;
}

int credfile_mapped_read_end(void) {
    sigaction(SIGBUS, &before_guard, NULL);
    guarded_start = NULL;
    int fault = guarded_fault;
    atomic_store(&guard_taken, 0);
    return fault;
}
