// See CCredFileProcess.h. Everything called from a handler here is async-signal-safe
// (tcsetattr, write, sigaction, sigprocmask, kill, getpid, _exit).
#define _GNU_SOURCE
#include "CCredFileProcess.h"

#include <errno.h>
#include <malloc.h>
#include <sys/auxv.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <termios.h>
#include <unistd.h>

/// The prompt in progress (fd -1: none). Written by the main thread only while the
/// prompt's handlers are not installed, read by the handlers.
static volatile sig_atomic_t prompt_fd = -1;
static struct termios prompt_saved;
static struct termios prompt_silent;
static char prompt_text[256];
static size_t prompt_length;
#define PROMPT_SIGNALS 4
static const int prompt_signals[PROMPT_SIGNALS] = {SIGINT, SIGTERM, SIGHUP, SIGTSTP};
static struct sigaction prompt_previous[PROMPT_SIGNALS];

static void write_all(int fd, const char *text, size_t count) {
    while (count > 0) {
        ssize_t n = write(fd, text, count);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        text += n;
        count -= (size_t)n;
    }
}

static void restore_terminal(void) {
    int fd = prompt_fd;
    if (fd < 0) return;
    (void)tcsetattr(fd, TCSAFLUSH, &prompt_saved);
    write_all(fd, "\n", 1);
}

/// "credfile: stopped by signal N\n" without printf (not async-signal-safe).
static void say_signal(int sig) {
    char line[48] = "credfile: stopped by signal ";
    size_t n = strlen(line);
    if (sig >= 10) line[n++] = (char)('0' + sig / 10);
    line[n++] = (char)('0' + sig % 10);
    line[n++] = '\n';
    write_all(2, line, n);
}

/// A crash or SIGQUIT: nothing of memory is shown, one line, the terminal restored.
static void fatal_handler(int sig) {
    int saved_errno = errno;
    restore_terminal();
    say_signal(sig);
    errno = saved_errno;
    _exit(128 + sig);
}

/// SIGINT, SIGTERM, SIGHUP at a prompt: restore the terminal and end as the signal asks.
static void prompt_end_handler(int sig) {
    restore_terminal();
    _exit(128 + sig);
}

static void install(int sig, void (*handler)(int), int flags) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigfillset(&action.sa_mask);  // no handler interrupts another
    action.sa_flags = flags;
    (void)sigaction(sig, &action, NULL);
}

/// SIGTSTP at a prompt: restore echo, stop for real, and on SIGCONT turn echo off again
/// and show the prompt again (as sudo's and OpenBSD's readpassphrase do).
static void stop_handler(int sig) {
    int saved_errno = errno;
    int fd = prompt_fd;
    if (fd >= 0) (void)tcsetattr(fd, TCSAFLUSH, &prompt_saved);
    if (fd >= 0) write_all(fd, "\n", 1);
    struct sigaction previous;
    struct sigaction deflt;
    memset(&deflt, 0, sizeof deflt);
    deflt.sa_handler = SIG_DFL;
    sigemptyset(&deflt.sa_mask);
    (void)sigaction(sig, &deflt, &previous);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, sig);
    sigset_t old;
    (void)sigprocmask(SIG_UNBLOCK, &unblock, &old);
    (void)kill(getpid(), sig);  // stops here until SIGCONT
    (void)sigprocmask(SIG_SETMASK, &old, NULL);
    (void)sigaction(sig, &previous, NULL);
    fd = prompt_fd;
    if (fd >= 0) {
        (void)tcsetattr(fd, TCSAFLUSH, &prompt_silent);
        write_all(fd, prompt_text, prompt_length);
    }
    errno = saved_errno;
}

int credfile_harden_process(void) {
    int result = 0;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) result = -1;
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) result = -1;
    // A stack for the handlers, so a stack overflow (SIGSEGV) still ends quietly here.
    static char alternate[64 * 1024];
    stack_t stack;
    memset(&stack, 0, sizeof stack);
    stack.ss_sp = alternate;
    stack.ss_size = sizeof alternate;
    if (sigaltstack(&stack, NULL) != 0) result = -1;
    const int fatal[] = {SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        install(fatal[i], fatal_handler, SA_ONSTACK | SA_RESETHAND);
    }
    return result;
}

int credfile_map_large_allocations(void) { return mallopt(M_MMAP_THRESHOLD, 4 << 20) == 1 ? 0 : -1; }

int credfile_is_secure_exec(void) { return getauxval(AT_SECURE) != 0; }

int credfile_prompt_begin(int fd, const void *saved, const void *silent, unsigned long size,
                          const char *prompt) {
    if (size != sizeof(struct termios)) return -1;
    memcpy(&prompt_saved, saved, sizeof prompt_saved);
    memcpy(&prompt_silent, silent, sizeof prompt_silent);
    prompt_length = 0;
    if (prompt != NULL) {
        prompt_length = strnlen(prompt, sizeof prompt_text);
        memcpy(prompt_text, prompt, prompt_length);
    }
    for (size_t i = 0; i < PROMPT_SIGNALS; i++) (void)sigaction(prompt_signals[i], NULL, &prompt_previous[i]);
    prompt_fd = fd;
    for (size_t i = 0; i < PROMPT_SIGNALS; i++) {
        if (prompt_signals[i] == SIGTSTP) install(SIGTSTP, stop_handler, SA_RESTART);
        else install(prompt_signals[i], prompt_end_handler, 0);
    }
    return 0;
}

void credfile_prompt_end(void) {
    // Whatever was installed before the prompt (the default, or a command's own
    // SIGINT handling) comes back.
    for (size_t i = 0; i < PROMPT_SIGNALS; i++) (void)sigaction(prompt_signals[i], &prompt_previous[i], NULL);
    prompt_fd = -1;
}
