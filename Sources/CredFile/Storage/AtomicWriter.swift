#if canImport(Glibc)
import Glibc
#endif

/// Rewrites a credential file atomically under an exclusive lock (SPEC §4):
///
/// 1. resolve FILE through symlinks, `flock(LOCK_EX)` on `FILE.lock` of the resolved path;
/// 2. read the current file under the lock and let the caller change the parsed lines;
/// 3. write the new bytes to a `mkstemp` file in the same directory, with the old
///    file's mode (0600 for a new file) and, as root, its owner; `fsync` it;
/// 4. `rename` it over FILE, then `fsync` the directory.
///
/// Readers take no lock and always see the old or the new file. A crash leaves at most
/// a stray temporary file, which the next rewrite removes under the lock.
public struct AtomicWriter: Sendable {
    /// The path as given (it may be a symlink; its target is rewritten).
    public let path: String
    /// Whether to keep the previous version as `FILE.bak`.
    public var keepsBackup: Bool

    /// A writer for `path`.
    public init(path: String, keepsBackup: Bool = false) {
        self.path = path
        self.keepsBackup = keepsBackup
    }

    /// The file's bytes, read without a lock; nil when it does not exist.
    /// - Throws: ``CredFileError/Code/io`` when it exists but cannot be read.
    public static func read(_ path: String) throws -> [UInt8]? {
        try readWithInfo(path)?.bytes
    }

    /// The file read under the lock, then changed by `change`, then written back in one
    /// atomic rewrite, unless the changes are empty.
    /// - Parameters:
    ///   - createIfMissing: treat a missing file as empty and create it (mode 0600);
    ///     otherwise a missing file is an I/O error.
    ///   - change: gets the current file; returns the changes and a result.
    /// - Returns: what `change` returned.
    /// - Throws: what `change` throws (nothing is written then), or an I/O or lock error.
    public func rewrite<R>(
        createIfMissing: Bool = false,
        _ change: (CredentialFile) throws -> (CredentialFile.Changes, R)
    ) throws -> R {
        let target = try resolvedPath()
        let lock = try FileLock.exclusive(on: target + ".lock")
        defer { lock.unlock() }
        removeStaleTemporaryFiles(of: target)

        let current = try Self.readWithInfo(target)
        guard current != nil || createIfMissing else {
            throw CredFileError(.io, "cannot open \(path)", cause: .init(syscall: "open", errno: ENOENT))
        }
        let file = CredentialFile(bytes: current?.bytes ?? [])
        let (changes, result) = try change(file)
        guard !changes.isEmpty else { return result }

        let mode = current.map { $0.info.st_mode & 0o7777 } ?? 0o600
        let owner = current.map { ($0.info.st_uid, $0.info.st_gid) }
        if keepsBackup, let current {
            try replace(target + ".bak", mode: mode, owner: owner) { fd throws(SyscallError) in
                try Syscall.writeAll(fd, current.bytes)
            }
        }
        // Spliced from the bytes read: the new file is never built in memory.
        try replace(target, mode: mode, owner: owner) { fd throws(SyscallError) in
            try file.writeRendered(applying: changes) { piece throws(SyscallError) in try Syscall.writeAll(fd, piece) }
        }
        return result
    }

    /// FILE with every symlink resolved; for a missing FILE, its resolved directory + name.
    func resolvedPath() throws -> String {
        do {
            return try Syscall.realpath(path)
        } catch where error.errno == ENOENT {
            if (try? Syscall.lstat(path)) ?? nil != nil {
                throw CredFileError(.io, "\(path) is a symlink to a missing file")
            }
            let (directory, name) = Self.split(path)
            do {
                return try Syscall.realpath(directory) + "/" + name
            } catch {
                throw error.credFileError("cannot open \(path)")
            }
        } catch {
            throw error.credFileError("cannot open \(path)")
        }
    }

    /// Lets `write` fill a temporary file beside `target`, then renames it over `target`.
    private func replace(
        _ target: String, mode: mode_t, owner: (uid_t, gid_t)?, write: (Int32) throws(SyscallError) -> Void
    ) throws {
        let (directory, name) = Self.split(target)
        let temporary: (fd: Int32, path: String)
        do {
            temporary = try Syscall.mkstemp(directory + "/" + Self.temporaryPrefix(of: name) + "XXXXXX")
        } catch {
            throw error.credFileError("cannot create a temporary file in \(directory)")
        }
        var renamed = false
        defer { if !renamed { Syscall.unlink(temporary.path) } }
        do {
            defer { Syscall.close(temporary.fd) }
            // Owner first: chown clears the set-user-ID and set-group-ID bits, so a
            // chmod before it would lose them.
            if let (uid, gid) = owner, geteuid() == 0 { try Syscall.fchown(temporary.fd, uid, gid) }
            try Syscall.fchmod(temporary.fd, mode)
            try write(temporary.fd)
            try Syscall.fsync(temporary.fd)
        } catch {
            throw error.credFileError("cannot write \(path)")
        }
        do {
            try Syscall.rename(temporary.path, target)
            renamed = true
            let dirfd = try Syscall.open(directory, O_RDONLY | O_DIRECTORY)
            defer { Syscall.close(dirfd) }
            try Syscall.fsync(dirfd)
        } catch {
            throw error.credFileError("cannot write \(path)")
        }
    }

    /// Removes temporary files a crashed writer left beside `target` (called under the lock,
    /// so none of them can belong to a live writer).
    private func removeStaleTemporaryFiles(of target: String) {
        let (directory, name) = Self.split(target)
        guard let names = try? Syscall.directoryEntries(directory) else { return }
        for prefix in [Self.temporaryPrefix(of: name), Self.temporaryPrefix(of: name + ".bak")] {
            for stale in names where stale.hasPrefix(prefix) && stale.utf8.count == prefix.utf8.count + 6 {
                Syscall.unlink(directory + "/" + stale)
            }
        }
    }

    /// `.NAME.credfile-`: the temporary files of NAME are this plus six `mkstemp` characters.
    static func temporaryPrefix(of name: String) -> String { "." + name + ".credfile-" }

    private static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    private static func readWithInfo(_ path: String) throws -> (bytes: [UInt8], info: stat)? {
        let fd: Int32
        do {
            // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer,
            // forever, and a writer would wait holding the lock. It changes nothing for
            // a regular file, and anything else is refused below.
            fd = try Syscall.open(path, O_RDONLY | O_NONBLOCK)
        } catch where error.errno == ENOENT {
            return nil
        } catch {
            throw error.credFileError("cannot open \(path)")
        }
        defer { Syscall.close(fd) }
        do {
            let info = try Syscall.fstat(fd)
            guard info.st_mode & S_IFMT == S_IFREG else {
                if info.st_mode & S_IFMT == S_IFDIR { throw SyscallError(name: "open", errno: EISDIR) }
                throw CredFileError(.io, "cannot read \(path): not a regular file")
            }
            return (try Syscall.readAll(fd, sizeHint: Int(info.st_size)), info)
        } catch let error as SyscallError {
            throw error.credFileError("cannot read \(path)")
        }
    }
}
