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
    public static func read(_ path: String) throws -> [UInt8]? {
        try readWithInfo(path, followingLast: true)?.bytes
    }

    /// Runs `body` on the file's bytes, read without a lock, and gives its result; nil
    /// when the file does not exist. A file of `mappingMinimum` bytes or more is mapped,
    /// not copied (see ``Syscall/withMapping(_:size:_:)``); when it changes size while
    /// mapped, `body` runs again on the bytes read the usual way. `body` must not keep
    /// the buffer.
    /// - Throws: ``CredFileError/Code/io`` when it exists but cannot be read.
    static func withBytes<R>(_ path: String, _ body: (UnsafeRawBufferPointer) -> R) throws -> R? {
        try withOpenedFile(path, followingLast: true) { fd, info throws(SyscallError) -> R in
            let size = Int(info.st_size)
            if size >= mappingMinimum, let result = try Syscall.withMapping(fd, size: size, body) { return result }
            // mmap leaves the file offset where it was: at the start.
            return try Syscall.readAll(fd, sizeHint: size).withUnsafeBytes(body)
        }
    }

    /// The size from which ``withBytes(_:_:)`` maps a file: below it, a copy costs little.
    static let mappingMinimum = 1 << 20

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

    /// One piece of new content.
    enum Piece {
        /// The bytes at these offsets of the file as read: copied by the kernel from the
        /// file itself when it can (`copy_file_range`), without passing through memory.
        case original(Range<Int>)
        /// New bytes.
        case new(ArraySlice<UInt8>)
    }

    /// New content handed to the writer piece by piece (each piece to `sink`, in order),
    /// so it never has to be built whole in memory: a one-line change of a large file
    /// is written as the stretches of the file around the new line, and the new line.
    typealias Content = (_ sink: (Piece) throws -> Void) throws -> Void

    /// ``rewrite(createIfMissing:_:)`` whose `change` returns the new content as pieces.
    ///
    /// With `mapping`, a file of ``mappingMinimum`` bytes or more is mapped, not read into
    /// memory (``FileBytes``): a one-user change then reads only the pages it looks at.
    /// A mapping shows what another program writes into the file in place (credfile
    /// itself never does), so when the file is not as it was once the new content is
    /// written, that attempt is dropped and `change` runs again on the bytes read into
    /// memory: `change` must not do anything but compute, and it may run twice.
    func rewriteSplicing<R>(
        createIfMissing: Bool = false, mapping: Bool = true,
        content change: (_ current: FileBytes?) throws -> (newContent: Content?, result: R)
    ) throws -> R {
        let target = try resolvedPath()
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
        let opened = try Self.openForReading(target, followingLast: false)
        defer { if let opened { Syscall.close(opened.fd) } }
        guard opened != nil || createIfMissing else {
            throw CredFileError(.io, "cannot open \(path)", cause: .init(syscall: "open", errno: ENOENT))
        }
        if mapping, let opened, opened.info.st_size >= Self.mappingMinimum,
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
            } catch is ChangedInPlace {
                // Read again below, into memory: the file as it is now.
            } catch where source.isUnchanged() {
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
                throw error.credFileError("cannot read \(target)")
            }
        }
        return try write(directory, name, change, from: current)
    }

    /// Thrown inside ``rewriteSplicing(createIfMissing:mapping:content:)`` when a mapped
    /// file changed in place before the rename: the attempt is dropped, nothing written.
    private struct ChangedInPlace: Error {}

    /// Lets `change` decide the new content from `current` (nil: the file is missing) and
    /// writes it over FILE (with the backup first, when kept).
    private func write<R>(
        _ directory: String, _ name: String,
        _ change: (_ current: FileBytes?) throws -> (newContent: Content?, result: R), from current: Source?
    ) throws -> R {
        let (newContent, result) = try change(current?.bytes)
        // A mapping shows another program's changes made in place meanwhile: then what
        // `change` saw may be no state the file was ever in (a truncation reads as zeros).
        if let current, current.bytes.isMapped, !current.isUnchanged() { throw ChangedInPlace() }
        guard let newContent else { return result }

        if let info = current?.info, info.st_nlink > 1 {
            throw CredFileError(
                .malformedFile,
                "\(path) has \(info.st_nlink) hard links; rewriting it would split them (a user removed here "
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

    // MARK: Resolving FILE

    /// How many symlinks one resolution follows at most (the kernel's limit, `ELOOP`).
    static let maximumSymlinks = 40

    /// FILE with every symlink resolved, link by link, each one checked against the
    /// kernel's `protected_symlinks` rule (``checkFollowable(_:_:in:)``), which `realpath`
    /// would sidestep. For a missing FILE: its resolved directory + its name.
    func resolvedPath() throws -> String {
        guard !path.isEmpty else {
            throw CredFileError(.io, "cannot open an empty path", cause: .init(syscall: "open", errno: ENOENT))
        }
        var resolved: [String] = []
        if !path.hasPrefix("/") {
            do {
                resolved = Self.components(try Syscall.currentDirectory())
            } catch {
                throw error.credFileError("cannot open \(path)")
            }
        }
        var pending = Self.components(path)
        var followed = 0
        func absolute(_ parts: [String]) -> String { "/" + parts.joined(separator: "/") }
        while !pending.isEmpty {
            let component = pending.removeFirst()
            if component == "." { continue }
            if component == ".." {
                // `resolved` holds no symlink, so `..` is its parent.
                if !resolved.isEmpty { resolved.removeLast() }
                continue
            }
            let candidate = absolute(resolved + [component])
            let found: stat?
            do {
                found = try Syscall.lstat(candidate)
            } catch {
                throw error.credFileError("cannot open \(path)")
            }
            guard let info = found else {
                guard pending.isEmpty else {
                    throw CredFileError(.io, "cannot open \(path)", cause: .init(syscall: "open", errno: ENOENT))
                }
                if let original = (try? Syscall.lstat(path)) ?? nil, original.st_mode & S_IFMT == S_IFLNK {
                    throw CredFileError(.io, "\(path) is a symlink to a missing file")
                }
                return candidate
            }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                followed += 1
                guard followed <= Self.maximumSymlinks else {
                    throw CredFileError(.io, "cannot open \(path)", cause: .init(syscall: "open", errno: ELOOP))
                }
                try checkFollowable(candidate, info, in: absolute(resolved))
                let target: String
                do {
                    target = try Syscall.readlink(candidate)
                } catch {
                    throw error.credFileError("cannot open \(path)")
                }
                if target.hasPrefix("/") { resolved = [] }
                pending = Self.components(target) + pending
            case S_IFDIR:
                resolved.append(component)
            default:
                guard pending.isEmpty else {
                    throw CredFileError(.io, "cannot open \(path)", cause: .init(syscall: "open", errno: ENOTDIR))
                }
                resolved.append(component)
            }
        }
        return absolute(resolved)
    }

    /// The kernel's `protected_symlinks` rule (SPEC §4): a symlink in a sticky,
    /// world-writable directory is followed only when it belongs to the caller (euid) or
    /// to the directory's owner. Checked here whatever the sysctl says, for every link on
    /// the way, because a hostile link there could send a root writer anywhere.
    /// - Throws: ``CredFileError/Code/io`` (`EACCES`) naming the link when it may not be followed.
    private func checkFollowable(_ link: String, _ info: stat, in directory: String) throws {
        let parent: stat?
        do {
            parent = try Syscall.lstat(directory)
        } catch {
            throw error.credFileError("cannot open \(path)")
        }
        guard let parent, parent.st_mode & (S_ISVTX | S_IWOTH) == (S_ISVTX | S_IWOTH) else { return }
        guard info.st_uid == geteuid() || info.st_uid == parent.st_uid else {
            throw CredFileError(
                .io,
                "refusing to follow the symlink \(link): it is in a sticky world-writable directory and belongs "
                    + "to neither you nor the directory's owner (as the kernel's protected_symlinks rule); nothing was written",
                cause: .init(syscall: "open", errno: EACCES))
        }
    }

    private static func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    // MARK: Writing

    /// Writes `content` to a temporary file in `directory` and renames it over `name` there;
    /// then, when `syncDirectory`, `fsync`s the directory.
    private func replace(
        _ directory: String, _ name: String, with content: Content, copyingFrom source: Source?, mode: mode_t,
        owner: (uid_t, gid_t)?, syncDirectory: Bool
    ) throws {
        let target = directory + "/" + name
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
            throw error.credFileError("cannot write \(path)")
        }  // `content` throws only what its sink throws: SyscallError
        do {
            try Syscall.rename(temporary.path, target)
            renamed = true
        } catch {
            throw error.credFileError("cannot write \(path)")
        }
        guard syncDirectory else { return }
        do {
            let dirfd = try Syscall.open(directory, O_RDONLY | O_DIRECTORY)
            defer { Syscall.close(dirfd) }
            try Syscall.fsync(dirfd, name: "fsync-directory")
        } catch {
            // The rename happened: saying "cannot write" would make a caller retry a change
            // that is already there. Say what is true.
            throw error.credFileError(
                "\(path) was replaced with the new content, but the change may not survive a crash: "
                    + "its directory \(directory) could not be synced")
        }
    }

    // MARK: Names beside FILE

    /// The longest file name (bytes) on Linux file systems.
    static let nameMax = 255

    /// `NAME` + `suffix` (`.lock`, `.bak`) when it fits in `NAME_MAX`; else a shortened
    /// name that still fits: see ``fitted(_:leaving:)``.
    static func sidecarName(of name: String, suffix: String) -> String {
        fitted(name, leaving: suffix.utf8.count) + suffix
    }

    /// `.NAME.credfile-`: the temporary files of NAME are this plus six `mkstemp`
    /// characters, within `NAME_MAX` (a long NAME is shortened, see ``fitted(_:leaving:)``).
    static func temporaryPrefix(of name: String) -> String {
        "." + fitted(name, leaving: temporaryOverhead) + temporaryMarker
    }

    static let temporaryMarker = ".credfile-"
    /// The bytes a temporary name adds to NAME: the dot, the marker, six random characters.
    static let temporaryOverhead = 1 + temporaryMarker.utf8.count + 6

    /// `name` when `name` plus `room` bytes fit in `NAME_MAX`; otherwise as many of its
    /// leading characters (whole Unicode scalars) as fit with `~` and 16 hex digits of a
    /// hash of the whole name, so that two long names with the same beginning get
    /// different sidecars. (The hash is FNV-1a: it separates names, it guards nothing;
    /// what guards the cleanup is that only the caller's own regular files are removed.)
    static func fitted(_ name: String, leaving room: Int) -> String {
        let bytes = Array(name.utf8)
        guard bytes.count + room > nameMax else { return name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash, radix: 16)
        let tag = "~" + String(repeating: "0", count: 16 - hex.count) + hex
        let budget = nameMax - room - tag.utf8.count
        var kept = String.UnicodeScalarView()
        var count = 0
        for scalar in name.unicodeScalars {
            let width = UTF8.width(scalar)
            guard count + width <= budget else { break }
            kept.append(scalar)
            count += width
        }
        return String(kept) + tag
    }

    /// Whether `candidate` is exactly `prefix` followed by six `mkstemp` characters
    /// (`A`–`Z`, `a`–`z`, `0`–`9`), compared byte for byte.
    static func isTemporaryName(_ candidate: String, prefix: String) -> Bool {
        let bytes = Array(candidate.utf8)
        let head = Array(prefix.utf8)
        guard bytes.count == head.count + 6, bytes.starts(with: head) else { return false }
        return bytes[head.count...].allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
    }

    /// Removes temporary files a crashed writer left beside NAME and NAME's backup (called
    /// under the lock, so none of them can belong to a live writer). Only a name of the
    /// exact pattern is touched, and only a regular file with one link (`lstat`: a link is
    /// never followed) that belongs to the caller, or, for root, to the file's owner (root's
    /// temporary files get the file's owner before a crash can leave them).
    private func removeStaleTemporaryFiles(in directory: String, of name: String, fileOwner: uid_t?) {
        guard let names = try? Syscall.directoryEntries(directory) else { return }
        let me = geteuid()
        let prefixes = [
            Self.temporaryPrefix(of: name), Self.temporaryPrefix(of: Self.sidecarName(of: name, suffix: ".bak")),
        ]
        for prefix in prefixes {
            for stale in names where Self.isTemporaryName(stale, prefix: prefix) {
                let candidate = directory + "/" + stale
                guard let info = (try? Syscall.lstat(candidate)) ?? nil,
                    info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1,
                    info.st_uid == me || (me == 0 && info.st_uid == fileOwner)
                else { continue }
                Syscall.unlink(candidate)
            }
        }
    }

    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }

    // MARK: Reading

    /// The file's bytes and `fstat`; nil when it does not exist.
    /// - Parameter followingLast: follow a symlink at the last component (readers); a
    ///   writer passes false for its resolved path (`O_NOFOLLOW`).
    static func readWithInfo(_ path: String, followingLast: Bool = true) throws -> (bytes: [UInt8], info: stat)? {
        try withOpenedFile(path, followingLast: followingLast) { fd, info throws(SyscallError) in
            (try Syscall.readAll(fd, sizeHint: Int(info.st_size)), info)
        }
    }

    /// Reads the file without a lock in pieces of at most `chunkSize` bytes through one
    /// reused buffer, handing each to `body` until it returns false or the file ends: a
    /// scan that never holds the file (a 100 MB file read whole costs its size in fresh
    /// pages, which this machine fills at ~1 GB/s). Nil when the file does not exist.
    static func scan(_ path: String, chunkSize: Int = 1 << 17, _ body: (UnsafeRawBufferPointer) -> Bool) throws
        -> Void?
    {
        try withOpenedFile(path, followingLast: true) { fd, _ throws(SyscallError) in
            try Syscall.readChunks(fd, chunkSize: chunkSize, body)
        }
    }

    /// Opens a regular file for reading (O_NONBLOCK, O_NOFOLLOW unless `followingLast`)
    /// and runs `body` on it; nil when it does not exist.
    private static func withOpenedFile<R>(
        _ path: String, followingLast: Bool, _ body: (Int32, stat) throws(SyscallError) -> R
    ) throws -> R? {
        guard let (fd, info) = try openForReading(path, followingLast: followingLast) else { return nil }
        defer { Syscall.close(fd) }
        do {
            return try body(fd, info)
        } catch {
            throw error.credFileError("cannot read \(path)")
        }
    }

    /// Opens a regular file for reading (O_NONBLOCK, O_NOFOLLOW unless `followingLast`);
    /// nil when it does not exist. The caller closes the descriptor.
    private static func openForReading(_ path: String, followingLast: Bool) throws -> (fd: Int32, info: stat)? {
        let fd: Int32
        do {
            // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer,
            // forever, and a writer would wait holding the lock. It changes nothing for
            // a regular file, and anything else is refused below.
            fd = try Syscall.open(path, O_RDONLY | O_NONBLOCK | (followingLast ? 0 : O_NOFOLLOW))
        } catch  where error.errno == ENOENT {
            return nil
        } catch {
            throw error.credFileError("cannot open \(path)")
        }
        do {
            let info = try Syscall.fstat(fd)
            guard info.st_mode & S_IFMT == S_IFREG else {
                if info.st_mode & S_IFMT == S_IFDIR { throw SyscallError(name: "open", errno: EISDIR) }
                throw CredFileError(.io, "cannot read \(path): not a regular file")
            }
            return (fd, info)
        } catch {
            Syscall.close(fd)
            if let error = error as? SyscallError { throw error.credFileError("cannot read \(path)") }
            throw error
        }
    }
}
