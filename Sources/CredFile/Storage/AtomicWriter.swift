#if canImport(Glibc)
import Glibc
#endif

/// Rewrites a file atomically under an exclusive lock (SPEC §4). It works on bytes and
/// knows nothing of their format: ``CredentialStore`` parses, changes and renders.
///
/// 1. resolve FILE through symlinks, following a link only where the kernel's
///    `protected_symlinks` rule would; `flock(LOCK_EX)` on `FILE.lock` of the resolved
///    path, waiting at most ``lockTimeout`` seconds;
/// 2. read the current bytes under the lock and let the caller compute the new bytes;
/// 3. write them to a `mkstemp` file in the same directory, with the old file's mode
///    (0600 for a new file) and, as root, its owner; `fsync` it;
/// 4. `rename` it over FILE, then `fsync` the directory.
///
/// Readers take no lock and always see the old or the new file. A crash leaves at most
/// a stray temporary file, which the next rewrite removes under the lock.
///
/// What a hostile neighbour or an earlier run cannot do: make a writer follow a symlink
/// that the kernel's `protected_symlinks` rule would not follow (refused,
/// ``CredFileError/Code/io``); split a FILE with more than one hard link (refused,
/// ``CredFileError/Code/malformedFile``); lock the file's owner out with a lock file root
/// created (root gives it the file's owner); make a writer remove anything but its own
/// regular temporary files. Every name legal on the file system can be written: when
/// `FILE.lock`, `FILE.bak` or the temporary name would exceed `NAME_MAX` (255 bytes), the
/// name part is shortened and a hash of the whole name keeps it unique.
public struct AtomicWriter: Sendable {
    /// The path as given (it may be a symlink; its target is rewritten).
    public let path: String
    /// Whether to keep the previous version as `FILE.bak`.
    public var keepsBackup: Bool
    /// How long ``rewrite(createIfMissing:_:)`` waits for the lock, in seconds, before it
    /// fails with ``CredFileError/Code/lock`` (default 15, as shadow's `lckpwdf`).
    public var lockTimeout: Double

    /// A writer for `path`.
    /// - Parameters:
    ///   - path: the file; a symlink is followed (see the type's rules) and stays a link.
    ///   - keepsBackup: keep the previous version as `FILE.bak`.
    ///   - lockTimeout: the longest wait for the lock, in seconds.
    public init(path: String, keepsBackup: Bool = false, lockTimeout: Double = 15) {
        self.path = path
        self.keepsBackup = keepsBackup
        self.lockTimeout = lockTimeout
    }

    /// The file's bytes, read without a lock; nil when it does not exist.
    /// - Throws: ``CredFileError/Code/io`` when it exists but cannot be read.
    public static func read(_ path: String) throws -> [UInt8]? { try FileReader.read(path) }

    /// Reads the file under the lock, lets `change` compute its new bytes, and writes them
    /// in one atomic rewrite; nothing is written when `change` returns nil bytes or throws.
    ///
    /// - Parameters:
    ///   - createIfMissing: a missing file is passed to `change` as nil and created
    ///     (mode 0600) if `change` returns bytes; otherwise a missing file is an I/O error
    ///     and `change` is not called.
    ///   - change: gets the current bytes (nil when the file is missing) and returns the
    ///     new bytes (nil: leave the file as it is) and a result. It runs under the lock:
    ///     keep it short (hash before calling).
    /// - Returns: the result `change` returned.
    /// - Throws: what `change` throws (nothing is written then);
    ///   ``CredFileError/Code/lock`` when the lock cannot be taken within ``lockTimeout``;
    ///   ``CredFileError/Code/malformedFile`` when FILE has more than one hard link;
    ///   ``CredFileError/Code/io`` when a symlink may not be followed or a read, write,
    ///   `fsync` or `rename` fails. The old file is intact after every error except one:
    ///   when only the `fsync` of the directory after the `rename` fails, the new content
    ///   is in place but may not survive a crash, and the error's message says so.
    public func rewrite<R>(
        createIfMissing: Bool = false,
        _ change: (_ current: [UInt8]?) throws -> (newBytes: [UInt8]?, result: R)
    ) throws -> R {
        // Read into memory, never mapped: `change` wants an array (a mapping would be copied).
        try rewriteSplicing(createIfMissing: createIfMissing, mapping: false) { (current: FileBytes?) in
            let (newBytes, result) = try change(current?.array)
            return (newBytes.map { bytes in { sink in try sink(.new(bytes[...])) } }, result)
        }
    }

    /// ``rewrite(createIfMissing:_:)`` whose `change` returns the new content as pieces.
    ///
    /// With `mapping`, a file of ``FileReader/mappingMinimum`` bytes or more is mapped, not read into
    /// memory (``FileBytes``): a one-user change then reads only the pages it looks at.
    /// A mapping shows what another program writes into the file in place (credfile
    /// itself never does), so when the file is not as it was once the new content is
    /// written, that attempt is dropped and `change` runs again on the bytes read into
    /// memory: `change` must not do anything but compute, and it may run twice.
    func rewriteSplicing<R>(
        createIfMissing: Bool = false, mapping: Bool = true,
        content change: (_ current: FileBytes?) throws -> (newContent: Splice.Content?, result: R)
    ) throws -> R {
        let target = try FileReader.resolvedPath(path)
        let (directory, name) = Self.split(target)
        // Whom the lock file and root's stale temporary files belong to: FILE's owner.
        let existing = ((try? Syscall.lstat(target)) ?? nil).flatMap { $0.st_mode & S_IFMT == S_IFREG ? $0 : nil }
        let owner = existing.map { (uid: $0.st_uid, gid: $0.st_gid) }
        let lock = try FileLock.exclusive(
            on: directory + "/" + Self.sidecarName(of: name, suffix: ".lock"), owner: owner, timeout: lockTimeout)
        defer { lock.unlock() }
        removeStaleTemporaryFiles(in: directory, of: name, fileOwner: owner?.uid)

        // O_NOFOLLOW: the path was resolved link by link; a link planted there since is refused.
        // Kept open: the new file copies its unchanged stretches from it.
        let opened = try FileReader.openForReading(target, followingLast: false)
        defer { if let opened { Syscall.close(opened.fd) } }
        guard opened != nil || createIfMissing else {
            throw CredFileError.missingFile(path)
        }
        if mapping, let opened, opened.info.st_size >= FileReader.mappingMinimum,
            let mapped = FileBytes(mapping: opened.fd, size: Int(opened.info.st_size))
        {
            let source = Source(fd: opened.fd, bytes: mapped, info: opened.info)
            do {
                let attempt = try mapped.withUnsafeBytes { file in
                    try Syscall.guardingReads(of: file) { try write(directory, name, change, from: source) }
                }
                // The guard's own flag (a page past a new end was read) needs no look: a
                // truncation changes the size, which `write` checks before the rename.
                if let (result, _) = attempt { return result }  // nil: another thread's guard: read instead
            } catch let replaced as ReplacedButNotSynced {
                // FILE holds the new content: running the change again would hide this
                // error or report a failure that did not happen. (The rename itself
                // changed the old inode's ctime, so `isUnchanged` cannot tell.)
                throw replaced.error
            } catch is ChangedInPlace {
                // Read again below, into memory: the file as it is now.
            } catch  where source.isUnchanged() {
                throw error
            } catch {
                // An error from bytes that changed under it (a truncation reads as zeros):
                // read again below.
            }
        }
        var current: Source?
        if let opened {
            do {
                // Size and times again: the file may have changed in place since it was opened.
                let info = try Syscall.fstat(opened.fd)
                let bytes = try Syscall.readAll(opened.fd, sizeHint: Int(info.st_size))
                current = Source(fd: opened.fd, bytes: FileBytes(bytes), info: info)
            } catch {
                throw error.credFileError("cannot read \(Escaped.path(target))")
            }
        }
        do {
            return try write(directory, name, change, from: current)
        } catch let replaced as ReplacedButNotSynced {
            throw replaced.error
        }
    }

    /// Thrown by ``replace(_:_:with:copyingFrom:mode:owner:syncDirectory:)`` when FILE was
    /// renamed into place and only what follows (the directory's `open` or `fsync`)
    /// failed: the change is made, so it must not run again. `error` says so.
    private struct ReplacedButNotSynced: Error {
        let error: CredFileError
    }

    /// Thrown inside ``rewriteSplicing(createIfMissing:mapping:content:)`` when a mapped
    /// file changed in place before the rename: the attempt is dropped, nothing written.
    private struct ChangedInPlace: Error {}

    /// Lets `change` decide the new content from `current` (nil: the file is missing) and
    /// writes it over FILE (with the backup first, when kept).
    private func write<R>(
        _ directory: String, _ name: String,
        _ change: (_ current: FileBytes?) throws -> (newContent: Splice.Content?, result: R), from current: Source?
    ) throws -> R {
        let (newContent, result) = try change(current?.bytes)
        // A mapping shows another program's changes made in place meanwhile: then what
        // `change` saw may be no state the file was ever in (a truncation reads as zeros).
        if let current, current.bytes.isMapped, !current.isUnchanged() { throw ChangedInPlace() }
        guard let newContent else { return result }

        if let info = current?.info, info.st_nlink > 1 {
            throw CredFileError(
                .malformedFile,
                "\(Escaped.path(path)) has \(info.st_nlink) hard links; rewriting it would split them (a user removed here "
                    + "would live on through the other name), so it is left unchanged: remove the other links first")
        }
        let mode = current.map { $0.info.st_mode & 0o7777 } ?? 0o600
        let fileOwner = current.map { ($0.info.st_uid, $0.info.st_gid) }
        if keepsBackup, let current {
            // The rename of FILE below is followed by the directory's fsync, which makes
            // this rename durable too.
            let backup = Self.sidecarName(of: name, suffix: ".bak")
            try replace(
                directory, backup, with: { sink in try sink(.original(0..<current.bytes.count)) }, copyingFrom: current,
                mode: mode, owner: fileOwner, syncDirectory: false)
        }
        try replace(
            directory, name, with: newContent, copyingFrom: current, mode: mode, owner: fileOwner, syncDirectory: true)
        return result
    }

    /// The file as read under the lock, still open: pieces of new content that are
    /// stretches of these bytes are copied from it by the kernel.
    struct Source {
        let fd: Int32
        let bytes: FileBytes
        let info: stat

        /// Whether the file is still as it was read (size, times, inode): else another
        /// program changed it in place meanwhile, and copying from it would mix its
        /// bytes with the ones this change was computed from.
        func isUnchanged() -> Bool {
            guard let now = try? Syscall.fstat(fd) else { return false }
            return now.st_size == info.st_size && now.st_ino == info.st_ino
                && now.st_mtim.tv_sec == info.st_mtim.tv_sec && now.st_mtim.tv_nsec == info.st_mtim.tv_nsec
                && now.st_ctim.tv_sec == info.st_ctim.tv_sec && now.st_ctim.tv_nsec == info.st_ctim.tv_nsec
        }
    }

    // MARK: Writing

    /// Writes `content` to a temporary file in `directory` and renames it over `name` there;
    /// then, when `syncDirectory`, `fsync`s the directory.
    private func replace(
        _ directory: String, _ name: String, with content: Splice.Content, copyingFrom source: Source?, mode: mode_t,
        owner: (uid_t, gid_t)?, syncDirectory: Bool
    ) throws {
        let target = directory + "/" + name
        let temporary: (fd: Int32, path: String)
        do {
            temporary = try Syscall.mkstemp(directory + "/" + Self.temporaryPrefix(of: name) + "XXXXXX")
        } catch {
            throw error.credFileError("cannot create a temporary file in \(Escaped.path(directory))")
        }
        var renamed = false
        defer { if !renamed { Syscall.unlink(temporary.path) } }
        do {
            defer { Syscall.close(temporary.fd) }
            // Owner first, then the bytes, then the mode: chown clears the set-user-ID and
            // set-group-ID bits, and so does a write by a caller other than root, so a
            // chmod before either would lose them. (mkstemp made the file 0600 meanwhile.)
            if let (uid, gid) = owner, geteuid() == 0 { try Syscall.fchown(temporary.fd, uid, gid) }
            var copied = false
            try content { piece in
                switch piece {
                case .new(let bytes):
                    try Syscall.writeAll(temporary.fd, bytes)
                case .original(let range):
                    guard let source else { preconditionFailure("a stretch of the file as read, but none was read") }
                    let count =
                        range.isEmpty
                        ? 0
                        : try Syscall.copyRange(
                            from: source.fd, offset: range.lowerBound, count: range.count, to: temporary.fd)
                    copied = copied || count > 0
                    try source.bytes.withUnsafeBytes { (file) throws(SyscallError) in
                        try Syscall.writeAll(
                            temporary.fd,
                            UnsafeRawBufferPointer(rebasing: file[(range.lowerBound + count)..<range.upperBound]))
                    }
                }
            }
            if let source, copied || source.bytes.isMapped, !source.isUnchanged() {
                // Changed in place since it was read. What was read is a mapping of the
                // file: it changed too, so the change is computed again. Else: write
                // everything from the bytes in memory.
                if source.bytes.isMapped { throw ChangedInPlace() }
                try Syscall.truncateToStart(temporary.fd)
                try content { piece in
                    switch piece {
                    case .new(let bytes): try Syscall.writeAll(temporary.fd, bytes)
                    case .original(let range):
                        try source.bytes.withUnsafeBytes { (file) throws(SyscallError) in
                            try Syscall.writeAll(temporary.fd, UnsafeRawBufferPointer(rebasing: file[range]))
                        }
                    }
                }
            }
            try Syscall.fchmod(temporary.fd, mode)
            try Syscall.fsync(temporary.fd)
        } catch let error as SyscallError {
            throw error.credFileError("cannot write \(Escaped.path(path))")
        }  // `content` throws only what its sink throws: SyscallError
        do {
            try Syscall.rename(temporary.path, target)
            renamed = true
        } catch {
            throw error.credFileError("cannot write \(Escaped.path(path))")
        }
        guard syncDirectory else { return }
        do {
            let dirfd = try Syscall.open(directory, O_RDONLY | O_DIRECTORY, name: "open-directory")
            defer { Syscall.close(dirfd) }
            try Syscall.fsync(dirfd, name: "fsync-directory")
        } catch {
            // The rename happened: saying "cannot write" would make a caller retry a change
            // that is already there. Say what is true.
            throw ReplacedButNotSynced(
                error: error.credFileError(
                    "\(Escaped.path(path)) was replaced with the new content, but the change may not survive a crash: "
                        + "its directory \(Escaped.path(directory)) could not be synced"))
        }
    }
}
