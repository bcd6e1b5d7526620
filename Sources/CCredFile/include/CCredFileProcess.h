// The credfile process's last line of defence against showing memory (SPEC §5): no
// core dump, no ptrace by the same user, no Swift backtracer, and a terminal whose echo
// a password prompt turned off is restored whatever signal arrives. In C because a
// signal handler must call only async-signal-safe functions, with no Swift runtime in
// between (the runtime's own handler is what must never run).
#ifndef CCREDFILE_PROCESS_H
#define CCREDFILE_PROCESS_H

/// Makes the process undumpable (`prctl(PR_SET_DUMPABLE, 0)`, which also stops
/// same-user ptrace and /proc/PID/mem), sets `RLIMIT_CORE` to 0, and installs, on an
/// alternate signal stack, handlers for SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGFPE,
/// SIGABRT and SIGTRAP that replace the Swift runtime's crash handler: restore the
/// terminal if a prompt is active, write one line naming the signal, `_exit(128 + sig)`.
/// Returns 0, or -1 with errno set when a step failed (the others are still done).
int credfile_harden_process(void);

/// Has glibc map every allocation of 4 MiB or more on its own and unmap it when freed
/// (a fixed `M_MMAP_THRESHOLD`), so a process's peak memory is what is live: with the
/// default, freeing one large buffer raises the threshold and later ones (a file's
/// bytes, its line index) come from heaps that keep them, one heap per thread that
/// allocated, which made `upgrade` of a million lines peak 60 MB higher once the large
/// passes ran on every core. Returns 0, or -1 when glibc refused.
int credfile_map_large_allocations(void);

/// Whether the kernel started this process in secure-execution mode
/// (`getauxval(AT_SECURE)`): a set-user-ID or set-group-ID executable, or one with file
/// capabilities, run by someone whose rights differ from the ones it runs with.
/// Returns 1 or 0.
int credfile_is_secure_exec(void);

/// Marks the start of a no-echo prompt on `fd`: remembers the terminal settings to
/// restore (`saved`, a `struct termios`, `size` bytes) and the ones of the prompt
/// (`silent`), and the prompt text shown again after a stop (SIGTSTP, then SIGCONT).
/// Installs handlers for SIGINT, SIGTERM, SIGHUP (restore, then `_exit(128 + sig)`) and
/// SIGTSTP (restore, stop; on resume turn echo off again and show the prompt again).
/// Returns 0, or -1 when `size` is not the size of `struct termios`.
int credfile_prompt_begin(int fd, const void *saved, const void *silent, unsigned long size,
                          const char *prompt);

/// Marks the end of the prompt: the prompt's signal handlers are put back to the
/// default (the terminal itself is restored by the caller).
void credfile_prompt_end(void);

#endif
