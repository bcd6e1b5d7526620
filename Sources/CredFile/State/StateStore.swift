/// The state database of SPEC §9–§15: what credfile remembers between logins, shared by
/// every process (and, with PostgreSQL, every host) that checks one credential file's
/// logins. Today it holds §9's failures (``FailureTable``); §11's sessions, §12's
/// invitations and §14's code steps are tables of the same store.
///
/// A backend is one implementation of this protocol: ``SQLiteStateStore`` (one file
/// beside FILE, the default) now, PostgreSQL (`state = postgresql://…`, §15) next. A
/// backend owns its connection, its schema version and its migrations, and gives each
/// table through ``StateTables``; the rules that use the tables (how failures are
/// counted, ``GuardDatabase``) are written once, over the protocol, for every backend.
///
/// Errors are ``CredFileError/Code/guardDatabase`` naming ``location``: the caller
/// treats them as a temporary failure, never as an unguarded login.
protocol StateStore: AnyObject, Sendable {
    /// Where the state lives, for messages and logs (a path; never a password).
    var location: String { get }

    /// Runs `body` on the tables, outside any write transaction (each statement sees a
    /// committed state). Nothing is created: nil when the store does not exist yet.
    func read<R: Sendable>(_ body: (any StateTables) throws -> R) throws(CredFileError) -> R?

    /// Runs `body` in one write transaction, creating the store (and its tables) when
    /// missing: all of `body`'s changes are committed when it returns, none when it throws.
    func write<R: Sendable>(_ body: (any StateTables) throws -> R) throws(CredFileError) -> R

    /// The sessions' change counter (``SessionStorage/changeCounter()``): a value that
    /// differs whenever another connection may have ended a session since the last call.
    /// SQLite's is the connection's `data_version` (any other connection's commit);
    /// PostgreSQL's counts the notifications of step 7's triggers (ends of sessions only).
    /// Nil while the store does not exist yet.
    func sessionChangeCounter() throws(CredFileError) -> UInt64?

    /// After this process ended sessions (the counter read before, `since`): returns once
    /// the end is known to every process that holds sessions in memory. SQLite's readers
    /// see a commit at once (returns at once); PostgreSQL's hear of it by a notification,
    /// so this waits (a second at most) until this store's own listening connection has
    /// heard it: PostgreSQL signals every listener at the same commit, so when a sign-out
    /// is answered the other hosts all but certainly have theirs (PostgreSQLChangeListener).
    func awaitSessionChange(since: UInt64)

    /// Whether ``GuardDatabase`` judges an attempt by a plain read before its write
    /// transaction: true (the default) where a write transaction holds back every other
    /// writer (SQLite's one write lock), so a refused attempt never waits for one; false
    /// where writers of different names go on together, so the write transaction's own
    /// read is enough and the plain read only a round trip more.
    var readsBeforeWriting: Bool { get }
}

extension StateStore {
    /// See ``StateStore/awaitSessionChange(since:)``: nothing to wait for.
    func awaitSessionChange(since: UInt64) {}

    var readsBeforeWriting: Bool { true }
}

/// The tables of a ``StateStore`` as one connection sees them, valid only inside the
/// body of ``StateStore/read(_:)`` or ``StateStore/write(_:)``.
protocol StateTables: AnyObject {
    /// §9's failures per name.
    var failures: any FailureTable { get }
    /// §11's sessions and the state's keys.
    var sessions: any SessionTable { get }
    /// §14's last accepted code step per user.
    var codeSteps: any CodeStepTable { get }
    /// §14's WebAuthn challenges of the passkeys.
    var challenges: any ChallengeTable { get }
    /// §14's sign-ins waiting for their one-time code.
    var pendingSignIns: any PendingSignInTable { get }
    /// §12's invitations and the registrations of the last hour.
    var invitations: any InvitationTable { get }
}
