import Synchronization

/// The sessions' change counter of a PostgreSQL state database (SPEC §11 "Fast", §15): what
/// lets ``CachedSessionStorage`` answer signed-in requests from memory on every host while
/// a sign-out on any host still ends the session everywhere.
///
/// One connection per store, opened at first use, `LISTEN`s on `credfile_sessions`, which
/// step 7 of ``PostgreSQLStateStore/migrations`` notifies at the commit of every statement
/// that deleted sessions (whoever ran it). ``counter()`` reads what the server has already
/// sent on that connection (`PQconsumeInput`, `PQnotifies`): no statement, no round trip.
/// PostgreSQL signals the listening connections while it commits, before the deleting
/// client hears its `COMMIT` answered, so by the time that host's sign-out reaches the
/// browser and its next request reaches another host, the notification is on its way over
/// a socket that has nothing else to carry.
///
/// A broken listening connection (the database restarted, the network failed) is opened
/// again at the next call with a new random epoch in the counter's high bits: whatever
/// was notified while nobody listened, every session held is read again. While it cannot
/// be opened, ``counter()`` throws, and the request fails as any other use of an
/// unreachable state database does.
final class PostgreSQLChangeListener: Sendable {
    /// The channel step 7's triggers notify.
    static let channel = "credfile_sessions"

    private struct State: ~Copyable {
        var connection: PostgreSQLConnection?
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
        try state.withLock { (state) throws(PostgreSQLError) -> UInt64 in
            // A connection that broke while idle is found out here (its socket read fails):
            // a new one is opened at once, so a restarted database costs no request.
            var tries = 0
            while true {
                tries += 1
                if state.connection == nil || state.connection?.isBroken == true {
                    state.connection = nil
                    let connection = try PostgreSQLConnection(connectionString: connectionString)
                    try connection.execute("LISTEN \(Self.channel)")
                    state.connection = connection
                    state.epoch = UInt64.random(in: 1...UInt64(UInt32.max)) << 32
                    state.notifications = 0
                }
                do throws(PostgreSQLError) {
                    state.notifications &+= UInt64(try state.connection?.takeNotifications() ?? 0)
                    return state.epoch | (state.notifications & 0xFFFF_FFFF)
                } catch {
                    state.connection = nil
                    if tries > 1 { throw error }
                }
            }
        }
    }
}
