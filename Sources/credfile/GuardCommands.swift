import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// The guard's commands (SPEC §5, §9): `failures`, `lock`, `unlock`.
extension CommandContext {
    /// FILE's guard for an admin command: the options' database and limits, logging
    /// nothing; nil with `--no-guard` / `guard = no`.
    private func adminGuard() throws -> LoginGuard? {
        guard invocation.guardsLogins else { return nil }
        return try LoginGuard(
            credentialFile: file, state: invocation.state, policy: try invocation.guardPolicy(), log: .none,
            service: "admin")
    }

    /// `credfile failures FILE [USER] [--reset] [--json]`: the names with recorded
    /// failures (the most recent first), or `--reset` to clear them. Times are RFC 3339
    /// in UTC; `throttled_until` is null when the next attempt would be checked now (or
    /// the name is locked out).
    func failures() throws -> ExitStatus {
        guard let loginGuard = try adminGuard() else {
            throw CredFileError.usage(messages.failuresWithoutGuard)
        }
        let name = invocation.positionals.count > 1 ? invocation.positionals[1] : nil
        if invocation.reset {
            if let name {
                let failures = try loginGuard.failureRecord(username: name)?.failures ?? 0
                let had = try loginGuard.resetFailures(username: name)
                invocation.log.record(.resetFailures, user: name, file: file, details: [("failures", "\(failures)")])
                say(messages.failuresReset(Escaped.name(name), had: had))
            } else {
                let names = try loginGuard.resetAllFailures()
                invocation.log.record(.resetFailures, user: nil, file: file, details: [("names", "\(names)")])
                say(messages.allFailuresReset(names))
            }
            return .success
        }
        let records =
            try name.map { try loginGuard.failureRecord(username: $0).map { [$0] } ?? [] }
            ?? loginGuard.failureRecords()
        if invocation.json {
            let items = records.map { record in
                JSON.object([
                    ("user", JSON.string(String(decoding: record.username, as: UTF8.self))),
                    ("failures", "\(record.failures)"),
                    ("last_failure", JSON.string(Self.rfc3339(record.lastFailure))),
                    ("throttled_until", record.throttledUntil.map { JSON.string(Self.rfc3339($0)) } ?? "null"),
                    ("locked_out", record.isLockedOut ? "true" : "false"),
                ])
            }
            say("[" + items.joined(separator: ",") + "]")
            return .success
        }
        for record in records {
            var fields = [
                Escaped.name(record.username), messages.failureCount(record.failures),
                messages.lastFailure(Self.rfc3339(record.lastFailure)),
            ]
            if record.isLockedOut {
                fields.append(messages.lockedOut)
            } else if let until = record.throttledUntil {
                fields.append(messages.throttledUntil(Self.rfc3339(until)))
            }
            say(fields.joined(separator: "\t"))
        }
        return .success
    }

    /// `credfile lock FILE USER`: `!` before USER's hash (a plaintext entry hashed first).
    func lock() throws -> ExitStatus {
        var store = try store()
        store.policy = try writingPolicy()
        let locked = try store.lock(username: user)
        if locked { invocation.log.record(.lock, user: user, file: file) }
        say(locked ? messages.locked : messages.alreadyLocked)
        return .success
    }

    /// `credfile unlock FILE USER`: the `!` removed, USER's failures cleared; says which
    /// of the two there was to undo, and logs it.
    func unlock() throws -> ExitStatus {
        var store = try store()
        store.loginGuard = try adminGuard()
        let before = try store.loginGuard?.failureRecord(username: user)
        let unlocked = try store.unlock(username: user)
        let failures = store.loginGuard.map { _ in before?.failures ?? 0 }
        var details = [("entry", unlocked ? "unlocked" : "unchanged")]
        if let failures { details.append(("failures", "\(failures)")) }
        invocation.log.record(.unlock, user: user, file: file, details: details)
        say(messages.unlocked(entry: unlocked, failures: failures, wasLockedOut: before?.isLockedOut ?? false))
        return .success
    }

    /// `2026-12-02T05:20:00Z`: seconds since the epoch as RFC 3339 in UTC, to the second.
    static func rfc3339(_ seconds: Double) -> String {
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
