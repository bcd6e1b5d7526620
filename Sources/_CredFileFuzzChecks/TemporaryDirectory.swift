#if canImport(Glibc)
import Glibc
#endif

/// A failure of a test or fuzz harness itself (not of credfile): it fails the test loudly.
public struct HarnessError: Error, CustomStringConvertible {
    /// What went wrong, for the test log.
    public let description: String

    /// A failure described by `description`.
    public init(_ description: String) { self.description = description }

    /// The failure of the C call `call` with the current `errno`, e.g. "mkdtemp /tmp/x: …".
    public static func system(_ call: String, _ subject: String = "") -> HarnessError {
        let reason = String(cString: strerror(errno))
        return HarnessError(subject.isEmpty ? "\(call): \(reason)" : "\(call) \(subject): \(reason)")
    }
}

/// A private temporary directory (mode 0700, from `mkdtemp`) of one test, one child
/// process or one fuzzing process, removed with everything in it by ``remove()``.
///
/// The one temporary-directory helper of the tests and the fuzz checks; it needs no
/// Foundation, so the `Fuzz/` package can use it without linking Foundation.
public struct TemporaryDirectory: Sendable {
    /// The absolute, symlink-free path.
    public let path: String

    /// Makes a fresh directory named `PREFIX-XXXXXX` under `$TMPDIR` (or `/tmp`).
    ///
    /// - Parameters:
    ///   - prefix: the start of its name, to tell whose directory a stray one was.
    ///   - onTmpfs: put it on `/dev/shm` when that is writable. The tests that spawn
    ///     hundreds of writers and the fuzzers use it: on this VM's disk each rewrite costs
    ///     two `fsync`s of several milliseconds, which measures the disk, not the locking.
    ///     Killing a process (`kill -9`) loses nothing from the page cache on either file
    ///     system, so what those tests check is the same.
    /// - Throws: ``HarnessError`` when `mkdtemp` or `realpath` fails.
    public static func make(prefix: String = "credfile-tests", onTmpfs: Bool = false) throws(HarnessError)
        -> TemporaryDirectory
    {
        var base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        if base.isEmpty { base = "/tmp" }
        if onTmpfs, access("/dev/shm", W_OK) == 0 { base = "/dev/shm" }
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap(mkdtemp) }) else {
            throw .system("mkdtemp", "in \(base)")
        }
        let created = String(cString: made)
        guard let resolved = realpath(created, nil) else {
            let error = HarnessError.system("realpath", created)
            rmdir(created)
            throw error
        }
        defer { free(resolved) }
        return TemporaryDirectory(path: String(cString: resolved))
    }

    /// `path/name`.
    public func file(_ name: String) -> String { path + "/" + name }

    /// The names in the directory (without `.` and `..`), sorted.
    public func names() throws(HarnessError) -> [String] { try Self.names(in: path) }

    /// The stray temporary files of `name` (`.NAME.credfile-XXXXXX`, SPEC §4).
    public func temporaryFiles(of name: String) throws(HarnessError) -> [String] {
        let prefix = "." + name + ".credfile-"
        return try names().filter { $0.hasPrefix(prefix) }
    }

    /// Removes the directory and everything under it (symlinks are removed, never
    /// followed); what cannot be removed is left behind silently, as `rm -rf` would
    /// report but a test's cleanup must not fail on.
    public func remove() { Self.removeTree(path) }

    /// The names in `directory` (without `.` and `..`), sorted.
    static func names(in directory: String) throws(HarnessError) -> [String] {
        guard let stream = opendir(directory) else { throw .system("opendir", directory) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    private static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR {
            // A test may leave a directory without write or search permission: give it back.
            chmod(path, 0o700)
            for name in (try? names(in: path)) ?? [] { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}

/// Runs `body` with a fresh ``TemporaryDirectory`` and removes it afterwards, also when
/// `body` throws. `onTmpfs`: see ``TemporaryDirectory/make(prefix:onTmpfs:)``.
public func withTemporaryDirectory<R>(onTmpfs: Bool = false, _ body: (TemporaryDirectory) throws -> R) throws -> R {
    let directory = try TemporaryDirectory.make(onTmpfs: onTmpfs)
    defer { directory.remove() }
    return try body(directory)
}

/// ``withTemporaryDirectory(onTmpfs:_:)`` for async bodies, on the caller's actor.
public func withTemporaryDirectoryAsync<R>(
    onTmpfs: Bool = false, isolation: isolated (any Actor)? = #isolation,
    _ body: (TemporaryDirectory) async throws -> R
) async throws -> R {
    let directory = try TemporaryDirectory.make(onTmpfs: onTmpfs)
    defer { directory.remove() }
    return try await body(directory)
}
