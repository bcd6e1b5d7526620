import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Logins already found good, so a server that sees the same credentials again and again
/// (a browser sends Basic credentials with every request) answers them without a new
/// PBKDF2: `credfile serve`'s cache (SPEC §10, `cache-seconds`).
///
/// What it keeps is an HMAC-SHA-256, under a key of 32 random bytes drawn when the cache
/// is made, of the name and the password as they were sent (never a password, never a
/// hash that could be attacked offline without the key), with the time it stops being
/// good. Denials are never kept. Every entry is forgotten when the credential file
/// changes (device, inode, size, mtime or ctime differ, as the caching store sees it), so
/// a changed password or a removed user takes effect at the next request.
///
/// Bounded: ``capacity`` entries in one block of memory (40 bytes each), four to a set
/// chosen by the HMAC; a full set gives up its entry that expires first. ``removeAll()``
/// zeroes every entry; ``erase()`` (at the end of a server) and releasing the cache zero
/// the key too.
public final class GoodLoginCache: Sendable {
    /// The entries a cache holds by default: 16,384 (640 KiB).
    public static let defaultCapacity = 16_384
    /// Entries per set.
    private static let ways = 4
    /// Bytes per entry: the HMAC, then the expiry (nanoseconds of CLOCK_MONOTONIC, 0 for empty).
    private static let entryCount = 40

    /// How long a good login is answered from the cache.
    public let lifetime: Duration
    /// How many entries it holds at most.
    public let capacity: Int
    /// The credential file whose changes empty the cache.
    public let path: String

    private struct State: @unchecked Sendable {  // the block is only touched under the mutex
        var entries: UnsafeMutableRawBufferPointer
        /// The file's version the entries were checked against.
        var version: FileCache.Identity?
    }

    /// The HMAC key: 32 bytes of its own, so ``erase()`` can zero it in place. Written only
    /// by `init`, by `erase()` (when the server has stopped) and by `deinit`; read by `mac`.
    nonisolated(unsafe) private let key: UnsafeMutableRawBufferPointer
    private let erased = Atomic<Bool>(false)
    private let state: Mutex<State>

    /// The version of the file a login was checked against, taken before the check
    /// (``currentVersion()``), so that a change during the check is never cached.
    public struct FileVersion: Sendable {
        let identity: FileCache.Identity
    }

    /// An empty cache with a fresh random key.
    /// - Parameters:
    ///   - path: the credential file; every entry is dropped when it changes.
    ///   - lifetime: how long a good login stays good (more than zero).
    ///   - capacity: entries at most, rounded up to a multiple of four.
    /// - Throws: ``CredFileError/Code/crypto`` when OpenSSL cannot draw the key.
    public init(path: String, lifetime: Duration, capacity: Int = defaultCapacity) throws {
        precondition(lifetime > .zero && capacity > 0)
        self.path = path
        self.lifetime = lifetime
        let sets = (capacity + Self.ways - 1) / Self.ways
        self.capacity = sets * Self.ways
        var random = try OpenSSL.randomBytes(count: 32)
        let key = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 16)
        random.withUnsafeBytes { key.copyMemory(from: $0) }
        self.key = key
        random.withUnsafeMutableBytes { OpenSSL.cleanse($0) }
        let entries = UnsafeMutableRawBufferPointer.allocate(byteCount: self.capacity * Self.entryCount, alignment: 16)
        entries.initializeMemory(as: UInt8.self, repeating: 0)
        state = Mutex(State(entries: entries, version: nil))
    }

    deinit {
        state.withLock { state in
            OpenSSL.cleanse(state.entries)
            state.entries.deallocate()
        }
        OpenSSL.cleanse(key)
        key.deallocate()
    }

    /// Zeroes the key and every entry, for good: the cache answers nothing from then on
    /// (the end of a server, whose process exits without releasing its objects).
    public func erase() {
        erased.store(true, ordering: .sequentiallyConsistent)
        state.withLock { state in
            Self.clear(&state, version: nil)
            OpenSSL.cleanse(key)
        }
    }

    /// The file's version now; nil when it cannot be `stat`ed (then nothing is cached).
    public func currentVersion() -> FileVersion? {
        (try? Syscall.status(of: path)).map { FileVersion(identity: FileCache.Identity($0)) }
    }

    /// Whether this name and password were found good within ``lifetime`` against the
    /// file as it is now. A changed or missing file empties the cache first.
    public func contains(username: [UInt8], password: SecretBytes) -> Bool {
        guard !erased.load(ordering: .sequentiallyConsistent) else { return false }
        let identity = currentVersion()?.identity
        var mac = self.mac(username, password)
        defer { mac.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
        let time = Self.monotonicNanoseconds()
        let expiry: UInt64? = state.withLock { state in
            guard identity != nil, state.version == identity else {
                Self.clear(&state, version: identity)
                return nil
            }
            return Self.expiry(of: mac, in: Self.set(of: mac, in: state.entries))
        }
        return (expiry ?? 0) > time
    }

    /// The expiry of the entry holding `mac` in `set`, if one does.
    private static func expiry(of mac: [UInt8], in set: UnsafeMutableRawBufferPointer) -> UInt64? {
        for way in 0..<ways {
            let offset = way * entryCount
            let found = mac.withUnsafeBytes {
                OpenSSL.constantTimeEqual($0, UnsafeRawBufferPointer(rebasing: set[offset..<(offset + 32)]))
            }
            if found { return set.load(fromByteOffset: offset + 32, as: UInt64.self) }
        }
        return nil
    }

    /// Records a good login, checked against the file at `version`; nothing is recorded
    /// when the file has changed since (the login might no longer be good).
    public func remember(username: [UInt8], password: SecretBytes, checkedAgainst version: FileVersion) {
        guard !erased.load(ordering: .sequentiallyConsistent) else { return }
        guard let now = currentVersion(), now.identity == version.identity else { return }
        var mac = self.mac(username, password)
        defer { mac.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
        let expiry = Self.monotonicNanoseconds() &+ UInt64(lifetime.nanoseconds)
        state.withLock { state in
            guard !erased.load(ordering: .sequentiallyConsistent) else { return }
            if state.version != now.identity { Self.clear(&state, version: now.identity) }
            let set = Self.set(of: mac, in: state.entries)
            // The same login, else an empty or expired entry, else the one expiring first.
            var chosen = 0
            var chosenExpiry = UInt64.max
            for way in 0..<Self.ways {
                let offset = way * Self.entryCount
                let same = mac.withUnsafeBytes {
                    OpenSSL.constantTimeEqual($0, UnsafeRawBufferPointer(rebasing: set[offset..<(offset + 32)]))
                }
                let wayExpiry = set.load(fromByteOffset: offset + 32, as: UInt64.self)
                if same {
                    chosen = way
                    break
                }
                if wayExpiry < chosenExpiry {
                    chosen = way
                    chosenExpiry = wayExpiry
                }
            }
            let offset = chosen * Self.entryCount
            mac.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: set[offset..<(offset + 32)]).copyMemory(from: $0)
            }
            set.storeBytes(of: expiry, toByteOffset: offset + 32, as: UInt64.self)
        }
    }

    /// Forgets every entry, zeroing them (SIGHUP's reload, and the end of a server).
    public func removeAll() {
        state.withLock { Self.clear(&$0, version: nil) }
    }

    /// How many entries are good now (tests and the server's status).
    public var count: Int {
        let time = Self.monotonicNanoseconds()
        return state.withLock { state in
            (0..<capacity).count {
                state.entries.load(fromByteOffset: $0 * Self.entryCount + 32, as: UInt64.self) > time
            }
        }
    }

    private static func clear(_ state: inout State, version: FileCache.Identity?) {
        OpenSSL.cleanse(state.entries)
        state.version = version
    }

    /// The set of entries that may hold `mac`.
    private static func set(of mac: [UInt8], in entries: UnsafeMutableRawBufferPointer) -> UnsafeMutableRawBufferPointer
    {
        let sets = entries.count / (ways * entryCount)
        let index = mac.withUnsafeBytes { Int(truncatingIfNeeded: $0.loadUnaligned(as: UInt64.self) % UInt64(sets)) }
        let start = index * ways * entryCount
        return UnsafeMutableRawBufferPointer(rebasing: entries[start..<(start + ways * entryCount)])
    }

    /// HMAC-SHA-256 under the cache's key of the name's length (4 bytes, big-endian),
    /// the name and the password, so no two (name, password) pairs share an input.
    private func mac(_ username: [UInt8], _ password: SecretBytes) -> [UInt8] {
        let length = UInt32(truncatingIfNeeded: username.count).bigEndian
        let message = SecretBytes(count: 4 + username.count + password.count) { buffer in
            withUnsafeBytes(of: length) { UnsafeMutableRawBufferPointer(rebasing: buffer[0..<4]).copyMemory(from: $0) }
            username.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: buffer[4..<(4 + username.count)]).copyMemory(from: $0)
            }
            password.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: buffer[(4 + username.count)...]).copyMemory(from: $0)
            }
        }
        var out = [UInt8](repeating: 0, count: 32)
        message.withUnsafeBytes { data in
            out.withUnsafeMutableBytes { OpenSSL.hmacSHA256(key: UnsafeRawBufferPointer(key), data, into: $0) }
        }
        return out
    }

    /// Nanoseconds of CLOCK_MONOTONIC, never 0 (0 marks an empty entry).
    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec) | 1
    }
}

extension Duration {
    /// The whole nanoseconds of a non-negative duration (saturating).
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : product &+ attoseconds / 1_000_000_000
    }
}
