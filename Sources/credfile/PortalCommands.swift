import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// The portal's command (SPEC §5, §11): `sessions`.
extension CommandContext {
    /// `credfile sessions FILE [USER] [--end] [--json]`: the web sessions in FILE's state
    /// database (oldest first), or `--end` to end them. Never a token: the database holds
    /// none. A database that does not exist yet has no sessions and is not created.
    func sessions() throws -> ExitStatus {
        let state = try StateLocation(state: invocation.state, credentialFile: file)
        let name = invocation.positionals.count > 1 ? invocation.positionals[1] : nil
        let records: [SessionRecord]
        if let path = state.path, access(path, F_OK) != 0 {
            records = []
            if invocation.end {
                say(messages.sessionsEnded(0))
                return .success
            }
        } else {
            let storage = SQLiteSessionStorage(location: state)
            if invocation.end {
                say(messages.sessionsEnded(try storage.removeAll(user: name)))
                return .success
            }
            records = try storage.sessions(user: name)
        }
        if invocation.json {
            let items = records.map { record in
                JSON.object([
                    ("user", JSON.string(record.user)),
                    ("started", JSON.string(Self.rfc3339(Double(record.started)))),
                    ("last_seen", JSON.string(Self.rfc3339(Double(record.lastSeen)))),
                    ("client", record.client.map(JSON.string) ?? "null"),
                    ("user_agent", record.userAgent.map(JSON.string) ?? "null"),
                ])
            }
            say("[" + items.joined(separator: ",") + "]")
            return .success
        }
        for record in records {
            say(
                [
                    Escaped.name(record.user), messages.sessionStarted(Self.rfc3339(Double(record.started))),
                    messages.sessionLastSeen(Self.rfc3339(Double(record.lastSeen))),
                    Escaped.name(record.client ?? "-"), Escaped.name(record.userAgent ?? "-"),
                ].joined(separator: "\t"))
        }
        return .success
    }
}
