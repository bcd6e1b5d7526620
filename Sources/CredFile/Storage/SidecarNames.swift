#if canImport(Glibc)
import Glibc
#endif

/// The names the writer uses beside FILE: `FILE.lock`, `FILE.bak` and its temporary
/// files, each within `NAME_MAX`, and the cleanup of temporary files a crash left.
extension AtomicWriter {
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
    func removeStaleTemporaryFiles(in directory: String, of name: String, fileOwner: uid_t?) {
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
}
