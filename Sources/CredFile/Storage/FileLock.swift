#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on a lock file, held until ``unlock()`` or release.
///
/// The lock file (`FILE.lock` beside the credential file) is created 0600 and never
/// renamed or removed, so every writer, in any process, locks the same inode. It must
/// stay usable by whoever may write the credential file (SPEC §4): when root takes the
/// lock, a lock file root created or owns is given the credential file's owner and group.
final class FileLock {
    private var fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Takes `flock(LOCK_EX)` on `path`, creating it 0600 if needed, waiting at most
    /// `timeout` seconds for other holders.
    ///
    /// The wait is a blocking `flock`, in the kernel's queue, that a timer of this thread
    /// interrupts at the deadline (`Syscall.flock(_:_:timeout:)`): the lock goes to the
    /// writers in the order the kernel wakes them. Polling with `LOCK_NB` and sleeps gave
    /// it to whoever happened to ask at the moment of release, so with 32 writers some
    /// waited out the whole timeout while most took a fraction of a second. (Where the
    /// timer's signal is an app's own, the wait polls as it did.)
    /// - Parameters:
    ///   - path: the lock file; a symlink there is refused (`O_NOFOLLOW`), and so is
    ///     anything but a regular file.
    ///   - owner: the credential file's owner and group. When the caller is root and the
    ///     lock file has another owner (root created it now or earlier), it is given this
    ///     one, so the file's owner can still lock it. Ignored for other callers, and for
    ///     a lock file with more than one hard link.
    ///   - timeout: the longest wait in seconds (default 15, as shadow's `lckpwdf`); 0
    ///     tries once; `.infinity` waits as long as it takes.
    /// - Returns: the held lock.
    /// - Throws: ``CredFileError/Code/lock`` when the file cannot be opened or locked, or
    ///   when another process still holds the lock after `timeout` seconds.
    /// The corresponding C functions are `open` and `flock`.
    public static func exclusive(on path: String, owner: (uid: uid_t, gid: gid_t)? = nil, timeout: Double = 15) throws
        -> FileLock
    {
        let fd: Int32
        do {
            fd = try Syscall.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK, mode: 0o600)
        } catch {
            throw error.credFileError("cannot open lock file \(Escaped.path(path))", code: .lock)
        }
        let lock = FileLock(fd: fd)  // closes fd on every failure below
        do {
            let info = try Syscall.fstat(fd)
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw CredFileError(.lock, "cannot open lock file \(Escaped.path(path)): not a regular file")
            }
            if let owner, geteuid() == 0, info.st_nlink == 1, info.st_uid != owner.uid || info.st_gid != owner.gid {
                try Syscall.fchown(fd, owner.uid, owner.gid)
            }
        } catch let error as SyscallError {
            throw error.credFileError("cannot open lock file \(Escaped.path(path))", code: .lock)
        }
        try lock.acquire(path: path, timeout: timeout)
        return lock
    }

    /// Takes the lock: at once when it is free; else waiting in the kernel's queue for
    /// at most `timeout` seconds.
    private func acquire(path: String, timeout: Double) throws {
        if timeout.isInfinite && timeout > 0 {
            do { try Syscall.flock(fd, LOCK_EX) } catch {
                throw error.credFileError("cannot lock \(Escaped.path(path))", code: .lock)
            }
            return
        }
        do {
            try Syscall.flock(fd, LOCK_EX | LOCK_NB)  // free: no timer needed
            return
        } catch  where error.errno == EWOULDBLOCK {
            // Held: wait below.
        } catch {
            throw error.credFileError("cannot lock \(Escaped.path(path))", code: .lock)
        }
        guard timeout > 0 else { throw heldTooLong(path, timeout) }
        do {
            try Syscall.flock(fd, LOCK_EX, timeout: timeout)
            return
        } catch  where error.errno == EWOULDBLOCK {
            throw heldTooLong(path, timeout)
        } catch  where error.errno == ENOSYS {
            try poll(path: path, timeout: timeout)
        } catch {
            throw error.credFileError("cannot lock \(Escaped.path(path))", code: .lock)
        }
    }

    /// The error of a lock another process held for more than `timeout` seconds.
    private func heldTooLong(_ path: String, _ timeout: Double) -> CredFileError {
        CredFileError(
            .lock, "cannot lock \(Escaped.path(path)): another process held it for more than \(Self.format(timeout)) s",
            cause: .init(syscall: "flock", errno: EWOULDBLOCK))
    }

    /// Polls `flock(LOCK_EX | LOCK_NB)` with a short backoff (1 ms, doubling up to 50 ms)
    /// until it succeeds or `timeout` seconds have passed: the wait where no signal can
    /// be set aside for the timer.
    private func poll(path: String, timeout: Double) throws {
        let deadline = Self.now() + timeout
        var pause = 0.001
        while true {
            do {
                try Syscall.flock(fd, LOCK_EX | LOCK_NB)
                return
            } catch  where error.errno == EWOULDBLOCK {
                let left = deadline - Self.now()
                guard left > 0 else { throw heldTooLong(path, timeout) }
                Self.sleep(min(pause, left))
                pause = min(pause * 2, 0.05)
            } catch {
                throw error.credFileError("cannot lock \(Escaped.path(path))", code: .lock)
            }
        }
    }

    /// Seconds on the monotonic clock.
    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func sleep(_ seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }

    /// `15`, `0.3`: the timeout as the user wrote it, without a trailing `.0`.
    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
    }

    /// Releases the lock (closing the descriptor releases it too).
    public func unlock() {
        guard fd >= 0 else { return }
        Syscall.close(fd)
        fd = -1
    }

    deinit { unlock() }
}
