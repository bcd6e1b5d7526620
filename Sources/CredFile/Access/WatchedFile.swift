import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A group file or rules file (SPEC §13) kept in memory and read again when it changes, as
/// a caching store reads FILE: before each use the path is `stat`ed, and a new device,
/// inode, size, modification or status-change time means a new read. A new version that
/// does not parse (or cannot be read) leaves the last good copy in force: ``current()``
/// still answers with it and says once why the new one was refused, so that a server can
/// log it; a later good version replaces it.
public final class WatchedFile<Value: Sendable>: Sendable {
    /// What ``current()`` answers.
    public struct Reading: Sendable {
        /// The last good copy.
        public let value: Value
        /// Why the file as it is now was refused (set once per refused version; nil otherwise).
        public let refused: String?
    }

    /// One version as last seen: held by reference, so that a request's look costs one
    /// retain under the lock (two connection threads ask at once).
    private final class State: Sendable {
        let value: Value
        let identity: FileCache.Identity?
        /// Whether the file as last seen was refused, and its version then (so it is reported once).
        let refused: Bool
        let refusedIdentity: FileCache.Identity?

        init(
            value: Value, identity: FileCache.Identity?, refused: Bool = false,
            refusedIdentity: FileCache.Identity? = nil
        ) {
            self.value = value
            self.identity = identity
            self.refused = refused
            self.refusedIdentity = refusedIdentity
        }
    }

    /// The file's path.
    public let path: String
    private let parse: @Sendable ([UInt8], String) throws -> Value
    private let state: Mutex<State>

    /// Reads the file now.
    /// - Parameters:
    ///   - path: the file.
    ///   - parse: makes the value from the file's bytes and its path (for its errors).
    /// - Throws: ``CredFileError/Code/io`` when it cannot be read or is missing, or the
    ///   parse error: at start a bad file is an error, not an empty one.
    public init(path: String, parse: @escaping @Sendable ([UInt8], String) throws -> Value) throws {
        self.path = path
        self.parse = parse
        guard let (bytes, info) = try FileReader.readWithInfo(path) else { throw CredFileError.missingFile(path) }
        state = Mutex(State(value: try parse(bytes, path), identity: FileCache.Identity(info)))
    }

    /// The value of the file as it is now, or the last good copy when it is now unreadable
    /// or bad (with ``Reading/refused`` saying why, the first time).
    public func current() -> Reading {
        let identity = (try? Syscall.status(of: path)).map(FileCache.Identity.init)
        let known = state.withLock { $0 }
        if let identity, known.identity == identity { return Reading(value: known.value, refused: nil) }
        if known.refused, known.refusedIdentity == identity { return Reading(value: known.value, refused: nil) }
        do {
            guard let (bytes, info) = try FileReader.readWithInfo(path) else { throw CredFileError.missingFile(path) }
            let value = try parse(bytes, path)
            let fresh = State(value: value, identity: FileCache.Identity(info))
            state.withLock { $0 = fresh }
            return Reading(value: value, refused: nil)
        } catch {
            // nil identity: missing, reported once until it is back.
            let kept = State(value: known.value, identity: known.identity, refused: true, refusedIdentity: identity)
            state.withLock { $0 = kept }
            return Reading(value: known.value, refused: (error as? CredFileError)?.message ?? "\(error)")
        }
    }
}

extension WatchedFile where Value == GroupFile {
    /// The group file at `path` (``GroupFile/init(parsing:source:)``).
    /// - Throws: as ``init(path:parse:)``.
    public convenience init(groupFile path: String) throws {
        try self.init(path: path) { try GroupFile(parsing: $0, source: $1) }
    }
}

extension WatchedFile where Value == AccessRules {
    /// The rules file at `path` (``AccessRules/init(parsing:source:)``).
    /// - Throws: as ``init(path:parse:)``.
    public convenience init(rulesFile path: String) throws {
        try self.init(path: path) { try AccessRules(parsing: $0, source: $1) }
    }
}

extension GroupRequirement {
    /// The requirement that `group` in the group file `groups` (read again when it
    /// changes, the last good copy kept) holds the user.
    /// - Parameters:
    ///   - groups: the group file.
    ///   - group: the group a user must be in.
    public init(groups: WatchedFile<GroupFile>, group: String) {
        self.init(group: group) { groups.current().value.isMember($0, of: group) }
    }
}
