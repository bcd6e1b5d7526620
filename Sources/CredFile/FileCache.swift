import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The parsed file of a caching store (`CredentialStore(path:policy:caching: true)`),
/// kept in memory and read again only when the file changes.
///
/// Before each lookup the path is `stat`ed; the file is read again when its device,
/// inode, size, modification time or status-change time differ from the copy's. Every
/// writer replaces the file by `rename` (SPEC §4), so a change made by any process
/// gives a new inode and is seen at the next login. The identity is taken with `fstat`
/// of the descriptor that was read, so a replacement racing with the read is caught
/// by the next `stat`.
///
/// Memory: the file's bytes, plus one index entry per distinct username (the
/// normalized name's bytes and a byte range: about 80 bytes plus the name on 64-bit
/// Linux), so about the file's size plus 100 bytes per user.
final class FileCache: Sendable {
    /// What identifies one version of the file.
    struct Identity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec
        var changed: timespec

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
            changed = info.st_ctim
        }

        static func == (a: Identity, b: Identity) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }
    }

    /// One version of the file: its bytes and the first entry line of each name.
    final class Snapshot: Sendable {
        let identity: Identity
        let bytes: [UInt8]
        /// NFC name bytes → the content range of the name's first entry line.
        let firstEntries: [[UInt8]: Range<Int>]
        /// The cost classes of the entries, for every login's plan (``LoginPlan``): built
        /// once per file version, under the policy of the first login that asks (the
        /// cost limits judge the entries); a login under another policy builds its own.
        private let censusMade = Mutex<CostCensus?>(nil)

        init(identity: Identity, bytes: [UInt8]) {
            self.identity = identity
            self.bytes = bytes
            firstEntries = CredentialFile(bytes: bytes).firstEntryIndex().mapValues(\.content)
        }

        /// The census of the entries within `policy`'s cost limits.
        func census(within policy: HashPolicy) -> CostCensus {
            if let made = censusMade.withLock({ $0 }), made.policy == policy { return made }
            let census = bytes.withUnsafeBytes { CostCensus(file: $0, within: policy) }
            censusMade.withLock { $0 = census }
            return census
        }

        /// The content of the first entry of `key`, if the name has one.
        func content(named key: [UInt8]) -> ArraySlice<UInt8>? {
            firstEntries[key].map { bytes[$0] }
        }
    }

    private let current = Mutex<Snapshot?>(nil)
    /// How many times the file was read (tests check that an unchanged file is not).
    let reads = Atomic<Int>(0)

    init() {}

    /// The snapshot for the file at `path` as it is now: the cached one when the file
    /// did not change, else a fresh read.
    /// - Throws: ``CredFileError/Code/io`` when the file is missing or unreadable.
    func snapshot(of path: String) throws -> Snapshot {
        let now: stat
        do {
            now = try Syscall.status(of: path)
        } catch {
            current.withLock { $0 = nil }
            throw error.credFileError("cannot open \(Escaped.path(path))")
        }
        if let cached = current.withLock({ $0 }), cached.identity == Identity(now) { return cached }
        guard let (bytes, info) = try FileReader.readWithInfo(path) else {
            throw CredFileError.missingFile(path)
        }
        reads.add(1, ordering: .relaxed)
        let fresh = Snapshot(identity: Identity(info), bytes: bytes)
        current.withLock { $0 = fresh }
        return fresh
    }
}
