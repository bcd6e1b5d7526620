#if canImport(Glibc)
import Glibc
#endif

/// The file of a state database on this host (SPEC §9): created mode 0600, given its
/// owner when root creates it, never through a symlink.
enum StateFile {
    /// Whether something is at `path` (a symlink counts: opening it is refused later).
    static func exists(_ path: String) -> Bool {
        ((try? Syscall.lstat(path)) ?? nil) != nil
    }

    /// Creates the database file, mode 0600, when it does not exist; as root, gives a
    /// file it creates `owner`. A symlink is refused (`O_NOFOLLOW`).
    /// - Throws: ``CredFileError/Code/guardDatabase`` when it cannot be created.
    static func createIfMissing(_ path: String, owner: (uid: uid_t, gid: gid_t)?) throws(CredFileError) {
        let fd: Int32
        do {
            fd = try Syscall.open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
        } catch  where error.errno == EEXIST {
            return
        } catch {
            throw error.credFileError("cannot create the guard database \(Escaped.path(path))", code: .guardDatabase)
        }
        defer { Syscall.close(fd) }
        do {
            try Syscall.fchmod(fd, 0o600)
            if let owner, geteuid() == 0, owner.uid != 0 || owner.gid != 0 {
                try Syscall.fchown(fd, owner.uid, owner.gid)
            }
        } catch {
            Syscall.unlink(path)
            throw error.credFileError("cannot create the guard database \(Escaped.path(path))", code: .guardDatabase)
        }
    }
}
