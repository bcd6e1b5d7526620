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
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

// The mappings being read at once, each in a slot of its own: a process may read several
// (a server's threads, a test runner's parallel tests), and a guard taken one at a time
// sent every other reader to read its file into memory instead, unpredictably. A slot
// is free (0), being filled (1) or guarding (2); the handler only looks at guarding ones.
#define CREDFILE_GUARD_SLOTS 32
struct guard_slot {
    atomic_int state;
    const char *_Atomic start;
    atomic_size_t length;
    atomic_int fault;
};
static struct guard_slot guard_slots[CREDFILE_GUARD_SLOTS];
static uintptr_t guarded_page_size;
static struct sigaction before_guard;
static pthread_once_t guard_installed = PTHREAD_ONCE_INIT;
static int guard_install_error;

static void guard_handler(int sig, siginfo_t *info, void *context) {
    const char *address = info->si_addr;
    for (int i = 0; i < CREDFILE_GUARD_SLOTS; i++) {
        struct guard_slot *slot = &guard_slots[i];
        if (atomic_load(&slot->state) != 2) continue;
        const char *start = atomic_load(&slot->start);
        if (address < start || address >= start + atomic_load(&slot->length)) continue;
        // The file shrank under the mapping: this page lies past its new end. A page of
        // zeros takes its place (mmap is a plain system call here), the reading goes on,
        // and the caller, told by credfile_mapped_read_end, reads the file again.
        void *page = (void *)((uintptr_t)address & ~(guarded_page_size - 1));
        if (mmap(page, guarded_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
            atomic_store(&slot->fault, 1);
            return;
        }
        break;
    }
    // Not a page of a guarded mapping: the handler installed before ours decides (the
    // hardened CLI's fatal handler); with none, the default action when the faulting
    // instruction runs again.
    if (before_guard.sa_flags & SA_SIGINFO) {
        before_guard.sa_sigaction(sig, info, context);
    } else if (before_guard.sa_handler != SIG_DFL && before_guard.sa_handler != SIG_IGN) {
        before_guard.sa_handler(sig);
    } else {
        signal(SIGBUS, SIG_DFL);
    }
}

// Installed once, for the life of the process: installing and restoring it around each
// read would race between threads that read at once.
static void install_guard(void) {
    guarded_page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = guard_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGBUS, &action, &before_guard) != 0) guard_install_error = errno ? errno : EINVAL;
}

int credfile_mapped_read_begin(const void *start, size_t length) {
    pthread_once(&guard_installed, install_guard);
    if (guard_install_error != 0) {
        errno = guard_install_error;
        return -1;
    }
    for (int i = 0; i < CREDFILE_GUARD_SLOTS; i++) {
        struct guard_slot *slot = &guard_slots[i];
        int free = 0;
        if (!atomic_compare_exchange_strong(&slot->state, &free, 1)) continue;
        atomic_store(&slot->fault, 0);
        atomic_store(&slot->start, (const char *)start);
        atomic_store(&slot->length, length);
        atomic_store(&slot->state, 2);
        return i;
    }
    errno = EBUSY;  // every slot guards a mapping: this caller reads the file instead
    return -1;
}

int credfile_mapped_read_faulted(int slot) {
    if (slot < 0 || slot >= CREDFILE_GUARD_SLOTS) return 0;
    return atomic_load(&guard_slots[slot].fault);
}

int credfile_mapped_read_end(int slot) {
    if (slot < 0 || slot >= CREDFILE_GUARD_SLOTS) return 0;
    int fault = atomic_load(&guard_slots[slot].fault);
    atomic_store(&guard_slots[slot].state, 0);
    return fault;
}

// ---- waiting for a lock in the kernel's queue, for a bounded time ----

#include <sys/file.h>
#include <sys/syscall.h>
#include <time.h>

// The signal that ends a bounded wait: a real-time one near the top of the range, which
// nothing else in credfile uses; its handler does nothing, so its only effect is that
// the blocking call returns EINTR.
static int wait_signal;
static pthread_once_t wait_signal_once = PTHREAD_ONCE_INIT;

static void wait_signal_handler(int sig) { (void)sig; }

static void install_wait_signal(void) {
    int sig = SIGRTMAX - 3;
    struct sigaction current;
    if (sigaction(sig, NULL, &current) != 0) return;
    // Someone else's handler is there already (an app that embeds the library): it is
    // not taken over, and the wait polls instead.
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN) return;
    if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction != NULL) return;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = wait_signal_handler;
    action.sa_flags = 0;  // no SA_RESTART: the blocking call must return EINTR
    sigemptyset(&action.sa_mask);
    if (sigaction(sig, &action, NULL) == 0) wait_signal = sig;
}

static long long monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

int credfile_flock_timed(int fd, int operation, long long timeout_ns) {
    pthread_once(&wait_signal_once, install_wait_signal);
    if (wait_signal == 0) {
        errno = ENOSYS;
        return -1;
    }
    const long long deadline = monotonic_ns() + timeout_ns;
    // A timer of this thread's own (SIGEV_THREAD_ID): its signal interrupts this thread's
    // flock and no other thread's. It fires at the deadline and then every 10 ms, so a
    // signal that comes just before flock starts (and is lost on the way in) is followed
    // by another one.
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = wait_signal;
    event._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) return -1;
    sigset_t only, previous;
    sigemptyset(&only);
    sigaddset(&only, wait_signal);
    pthread_sigmask(SIG_UNBLOCK, &only, &previous);  // a thread that blocks it would wait forever
    struct itimerspec when;
    memset(&when, 0, sizeof when);
    when.it_value.tv_sec = (time_t)(timeout_ns / 1000000000LL);
    when.it_value.tv_nsec = (long)(timeout_ns % 1000000000LL);
    if (when.it_value.tv_sec == 0 && when.it_value.tv_nsec == 0) when.it_value.tv_nsec = 1;
    when.it_interval.tv_nsec = 10 * 1000 * 1000;
    int result = -1;
    int saved = 0;
    if (timer_settime(timer, 0, &when, NULL) != 0) {
        saved = errno;
    } else {
        while (1) {
            if (flock(fd, operation) == 0) {
                result = 0;
                break;
            }
            if (errno != EINTR) {
                saved = errno;
                break;
            }
            // Interrupted: by the timer when the time is up (then: held by another), or by
            // another signal (then: wait on, in the same place in the queue's order).
            if (monotonic_ns() >= deadline) {
                saved = EWOULDBLOCK;
                break;
            }
        }
    }
    timer_delete(timer);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (result != 0) errno = saved;
    return result;
}

