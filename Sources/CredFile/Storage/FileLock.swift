#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on a lock file, held until ``unlock()`` or release.
///
/// The lock file (`FILE.lock` beside the credential file) is created 0600 and never
/// renamed or removed, so every writer, in any process, locks the same inode.
public final class FileLock {
    private var fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Takes `flock(LOCK_EX)` on `path`, creating it 0600 if needed; waits for other holders.
    /// - Throws: ``CredFileError/Code/lock`` when the file cannot be opened or locked.
    public static func exclusive(on path: String) throws -> FileLock {
        let fd: Int32
        do {
            fd = try Syscall.open(path, O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o600)
        } catch {
            throw error.credFileError("cannot open lock file \(path)", code: .lock)
        }
        do {
            try Syscall.flock(fd, LOCK_EX)
        } catch {
            Syscall.close(fd)
            throw error.credFileError("cannot lock \(path)", code: .lock)
        }
        return FileLock(fd: fd)
    }

    /// Releases the lock (closing the descriptor releases it too).
    public func unlock() {
        guard fd >= 0 else { return }
        Syscall.close(fd)
        fd = -1
    }

    deinit { unlock() }
}
