import Synchronization

/// The sessions' change counter of a PostgreSQL state database (SPEC §11 "Fast", §15): what
/// lets ``CachedSessionStorage`` answer signed-in requests from memory on every host while
/// a sign-out on any host still ends the session everywhere.
///
/// One connection per store, opened at first use, `LISTEN`s on `credfile_sessions`, which
/// step 7 of ``PostgreSQLStateStore/migrations`` notifies at the commit of every statement
/// that deleted sessions (whoever ran it). ``counter()`` reads what the server has already
/// sent on that connection (`PQconsumeInput`, `PQnotifies`): no statement, no round trip.
/// A notification is asynchronous: PostgreSQL signals every listener at the commit, and
/// each listening backend sends it when it runs. So a process that ends sessions waits
/// until its own listener has the notification before it answers
/// (``PostgreSQLStateStore/awaitSessionChange(since:)``): by then the other hosts' have
/// theirs as well, all but certainly (measured: 0 of 720 checks came first, where 16 of 100
/// did without the wait).
///
/// A broken listening connection (the database restarted, the network failed) is opened
/// again at the next call with a new random epoch in the counter's high bits: whatever
/// was notified while nobody listened, every session held is read again. While it cannot
/// be opened, ``counter()`` throws, and the request fails as any other use of an
/// unreachable state database does.
final class PostgreSQLChangeListener: Sendable {
    /// The channel step 7's triggers notify.
    static let channel = "credfile_sessions"

    /// The listening connection, sendable into the lock (used only under it, or before
    /// anyone else has it).
    private final class Listening: @unchecked Sendable {
        let connection: PostgreSQLConnection
        init(_ connection: PostgreSQLConnection) { self.connection = connection }
    }

    private struct State: ~Copyable {
        var listening: Listening?
        var epoch: UInt64 = 0
        var notifications: UInt64 = 0
    }

    private let connectionString: String
    private let state = Mutex(State())

    /// A listener on the database `connectionString` names, connected at first use.
    init(connectionString: String) {
        self.connectionString = connectionString
    }

    /// The counter: the connection's epoch in the high 32 bits, the notifications received
    /// on it in the low 32. It changes whenever a session was deleted since the last call
    /// (by any process, this one's included) and whenever the connection was opened again.
    /// - Throws: ``PostgreSQLError`` when the listening connection cannot be opened.
    func counter() throws(PostgreSQLError) -> UInt64 {
        // A connection that broke while idle is found out here (its socket read fails): a
        // new one is opened at once, so a restarted database costs no request.
        for attempt in 1...2 {
            let counted = try state.withLock { (state) throws(PostgreSQLError) -> UInt64? in
                guard let connection = state.listening?.connection, !connection.isBroken else {
                    state.listening = nil
                    return nil
                }
                do throws(PostgreSQLError) {
                    state.notifications &+= UInt64(try connection.takeNotifications())
                    return state.epoch | (state.notifications & 0xFFFF_FFFF)
                } catch {
                    state.listening = nil
                    if attempt > 1 { throw error }
                    return nil
                }
            }
            if let counted { return counted }
            // Connected outside the lock: a database that does not answer holds each
            // request for libpq's connect_timeout, not every request one after another.
            let connection = try PostgreSQLConnection(connectionString: connectionString)
            try connection.execute("LISTEN \(Self.channel)")
            let listening = Listening(connection)
            state.withLock { state in
                guard state.listening == nil else { return }  // another request's came first
                state.listening = listening
                state.epoch = UInt64.random(in: 1...UInt64(UInt32.max)) << 32
                state.notifications = 0
            }
        }
        throw PostgreSQLError(message: "the listening connection broke as it was opened", connectionLost: true)
    }
}
