import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Byte-level file helpers of the tests (plain syscalls, independent of the library's own).

/// The bytes of a file; throws ``HarnessError`` when it cannot be read.
public func readBytes(_ path: String) throws -> [UInt8] { [UInt8](try readData(path)) }

/// The bytes of a file as `Data` (compared with `memcmp`, fast even in a debug build).
public func readData(_ path: String) throws -> Data {
    guard let data = FileManager.default.contents(atPath: path) else { throw HarnessError("cannot read \(path)") }
    return data
}

/// Writes `bytes` to `path` (plain `open`/`write`, mode 0600 before umask, close-on-exec
/// so a child spawned meanwhile by a parallel test cannot hold it open).
public func writeBytes(_ path: String, _ bytes: some Collection<UInt8>, mode: mode_t = 0o600) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { throw HarnessError.system("open", path) }
    defer { close(fd) }
    let array = Array(bytes)
    var offset = 0
    while offset < array.count {
        // offset < count, so the base address is not nil.
        let n = array.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { throw HarnessError.system("write", path) }
        offset += n
    }
}

/// Writes `text` as UTF-8 to `path`; see ``writeBytes(_:_:mode:)``.
public func writeText(_ path: String, _ text: String) throws { try writeBytes(path, Array(text.utf8)) }

/// Whether `path` exists (a dangling symlink counts).
public func fileExists(_ path: String) -> Bool { (try? lstatInfo(path)) != nil }

/// `lstat`, throwing when the path does not exist.
public func lstatInfo(_ path: String) throws -> stat {
    var info = stat()
    guard lstat(path, &info) == 0 else { throw HarnessError.system("lstat", path) }
    return info
}

/// `stat` (follows symlinks).
public func statInfo(_ path: String) throws -> stat {
    var info = stat()
    guard stat(path, &info) == 0 else { throw HarnessError.system("stat", path) }
    return info
}

/// The permission bits of a file.
public func mode(_ path: String) throws -> mode_t { try statInfo(path).st_mode & 0o7777 }

/// Whether `path` is a symlink.
public func isSymlink(_ path: String) throws -> Bool { try lstatInfo(path).st_mode & S_IFMT == S_IFLNK }

/// `realpath(3)`: the absolute, symlink-free path.
public func realPath(_ path: String) throws -> String {
    guard let resolved = realpath(path, nil) else { throw HarnessError.system("realpath", path) }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// Splits bytes into lines, each with its LF (the last one may have none): a splitter
/// independent of the library's, to compare files line by line.
public func rawLines(_ bytes: [UInt8]) -> [[UInt8]] {
    var lines: [[UInt8]] = []
    var current: [UInt8] = []
    for byte in bytes {
        current.append(byte)
        if byte == 0x0A {
            lines.append(current)
            current = []
        }
    }
    if !current.isEmpty { lines.append(current) }
    return lines
}

extension Array where Element == UInt8 {
    /// The bytes as UTF-8 text (invalid bytes replaced).
    public var text: String { String(decoding: self, as: UTF8.self) }
}

/// Whether the tests run as root. The project's machines and CI run them as root; a few
/// tests need it (chown to another owner, chattr +i, mount, /etc/pam.d) and are shown as
/// skipped, with that reason, elsewhere.
public let isRoot = geteuid() == 0

/// Whether this is a debug build (of the tests and so of the `credfile` binary built
/// with them), where the `CREDFILE_TEST_FAULT` hook exists.
public let isDebugBuild: Bool = {
    #if DEBUG
    return true
    #else
    return false
    #endif
}()

/// A duration in seconds.
public func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
