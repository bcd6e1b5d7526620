import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where a credential file's state database is (SPEC §9's `state`, §15), and the one place
/// that turns the setting into a `StateStore`: the guard's failures, the portal's
/// sessions and the second factor's code steps all open theirs through `store()`.
///
/// * No setting: SQLite, `FILE.guard.db` beside the file FILE's path resolves to.
/// * A setting starting `postgresql://` or `postgres://`: PostgreSQL through libpq, every
///   host's processes on one database (§15). The password never comes from here: one in
///   the string is refused (``init(state:credentialFile:)``); libpq reads it from
///   `PGPASSFILE` (`~/.pgpass`), a service file, or a client certificate.
/// * Any other setting: the path of an SQLite database.
///
/// When root creates an SQLite database it gets FILE's owner and group for the default
/// path, and its directory's owner and group when `state` puts it elsewhere (SPEC §9),
/// whichever of the three tables creates it first.
public struct StateLocation: Sendable, Equatable, CustomStringConvertible {
    /// Which backend holds the state, and where.
    public enum Backend: Sendable, Equatable {
        /// An SQLite file.
        case sqlite(path: String)
        /// A PostgreSQL database: the libpq connection string as configured (no password).
        case postgreSQL(connectionString: String)
    }

    /// The owner and group an SQLite file root creates gets.
    struct Owner: Sendable, Equatable {
        let uid: uid_t
        let gid: gid_t
    }

    /// Where the state is.
    public let backend: Backend
    /// Who gets an SQLite file root creates.
    let owner: Owner?

    /// The location `state` names for the logins of `credentialFile`.
    /// - Parameters:
    ///   - state: the `state` setting; nil for `FILE.guard.db` beside the credential file.
    ///   - credentialFile: the credential file (its symlinks are resolved to find the
    ///     default database and its owner).
    /// - Throws: ``CredFileError/Code/usage`` for a PostgreSQL connection string that
    ///   carries a password or that libpq cannot read; ``CredFileError/Code/io`` when the
    ///   credential file's path cannot be resolved (default path only);
    ///   ``CredFileError/Code/guardDatabase`` when libpq cannot be loaded.
    public init(state: String?, credentialFile: String) throws(CredFileError) {
        if let state, Self.isPostgreSQL(state) {
            try Self.refusePassword(in: state)
            backend = .postgreSQL(connectionString: state)
            owner = nil
            return
        }
        let resolvedFile: String
        do {
            resolvedFile = try FileReader.resolvedPath(credentialFile)
        } catch let error as CredFileError {
            throw error
        } catch {
            throw CredFileError(.io, "cannot resolve \(Escaped.path(credentialFile)): \(error)")
        }
        let defaultPath = Self.defaultPath(forResolved: resolvedFile)
        let path = state ?? defaultPath
        backend = .sqlite(path: path)
        // The owner a database root creates gets (SPEC §9).
        let ownerSource = path == defaultPath ? resolvedFile : AtomicWriter.split(Self.absolute(path)).directory
        owner = (try? Syscall.status(of: ownerSource)).map { Owner(uid: $0.st_uid, gid: $0.st_gid) }
    }

    /// An SQLite database at `path`, given no owner (tests, and callers that name the file).
    init(sqlitePath path: String, owner: Owner? = nil) {
        backend = .sqlite(path: path)
        self.owner = owner
    }

    /// The path or the connection string, for messages and logs (it holds no password).
    public var description: String {
        switch backend {
        case .sqlite(let path): path
        case .postgreSQL(let connectionString): connectionString
        }
    }

    /// The SQLite file's path; nil for PostgreSQL.
    public var path: String? {
        if case .sqlite(let path) = backend { return path }
        return nil
    }

    /// Whether `state` names a PostgreSQL database (`postgresql://…` or `postgres://…`).
    public static func isPostgreSQL(_ state: String) -> Bool {
        if state.hasPrefix("postgresql://") || state.hasPrefix("postgres://") { return true }
        // libpq's keyword = value form (`host=db.example dbname=app`): its first word is
        // one of libpq's keywords. An SQLite path never is one: it must be absolute (§9).
        guard let equals = state.firstIndex(of: "=") else { return false }
        return libpqKeywords.contains(String(state[..<equals].filter { $0 != " " && $0 != "\t" }))
    }

    /// The keywords of libpq's connection strings that may come first (`password` among
    /// them, so that a string beginning with one is refused, not taken for a path).
    static let libpqKeywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service", "sslmode",
        "connect_timeout", "application_name", "options", "target_session_attrs", "sslrootcert", "sslcert",
        "sslkey", "sslpassword", "gssencmode", "krbsrvname", "requiressl", "client_encoding",
    ]

    /// The store of this location. SQLite: a store of its own (its connection opened at
    /// first use). PostgreSQL: one store per connection string in a process, shared by the
    /// guard, the sessions and the codes, so they share its pool of connections.
    func store() -> any StateStore {
        switch backend {
        case .sqlite(let path):
            return SQLiteStateStore(path: path, owner: owner.map { (uid: $0.uid, gid: $0.gid) })
        case .postgreSQL(let connectionString):
            return Self.postgreSQLStores.withLock { stores in
                if let store = stores[connectionString] { return store }
                let store = PostgreSQLStateStore(connectionString: connectionString)
                stores[connectionString] = store
                return store
            }
        }
    }

    /// Creates the state database's tables, or brings them to this credfile's schema
    /// (`credfile state FILE --init`); a database already current is left as it is.
    /// - Returns: the schema version the database had before (0: none) and has now.
    /// - Throws: ``CredFileError/Code/guardDatabase`` when it cannot be used.
    @discardableResult
    public func initialize() throws(CredFileError) -> (before: Int, after: Int) {
        switch backend {
        case .sqlite:
            let store = store()
            let before = try store.read { _ in 0 } == nil ? 0 : SQLiteStateStore.migrations.count
            try store.write { _ in }
            return (before, SQLiteStateStore.migrations.count)
        case .postgreSQL:
            guard let store = store() as? PostgreSQLStateStore else { return (0, 0) }
            return try store.initialize()
        }
    }

    // MARK: Defaults

    /// The default state database of a credential file whose path resolves to `resolved`:
    /// `FILE.guard.db` beside it.
    static func defaultPath(forResolved resolved: String) -> String {
        let (directory, name) = AtomicWriter.split(resolved)
        // Room for SQLite's `-wal` and `-shm` after it, within NAME_MAX.
        let file = AtomicWriter.fitted(name, leaving: ".guard.db-wal".utf8.count) + ".guard.db"
        return directory == "/" ? "/" + file : directory + "/" + file
    }

    /// `path` made absolute against the working directory (for its directory's owner).
    private static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let cwd = try? Syscall.currentDirectory() else { return path }
        return cwd + "/" + path
    }

    /// Refuses a connection string that carries a password: it would sit in the
    /// configuration file or on a command line (SPEC §15). Decisions.md §15.
    private static func refusePassword(in connectionString: String) throws(CredFileError) {
        let hasPassword: Bool
        do {
            hasPassword = try PostgreSQLConnection.password(in: connectionString)
        } catch {
            if error.message.hasPrefix("cannot load") { throw CredFileError(.guardDatabase, error.message) }
            // libpq's reason may quote a piece of the string: not echoed.
            throw CredFileError.usage("state is not a PostgreSQL connection string libpq can read")
        }
        if hasPassword {
            throw CredFileError.usage(
                "state must not hold the database password: give it in PGPASSFILE (~/.pgpass) or a service file")
        }
    }

    private static let postgreSQLStores = Mutex<[String: PostgreSQLStateStore]>([:])
}
