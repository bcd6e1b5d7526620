import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// The invitations of SPEC §12: `credfile invite FILE`.
extension CommandContext {
    /// `credfile invite FILE [--count N] [--expires DURATION] [--user NAME]` prints new
    /// codes, one a line (the only time they are shown); `--list` the invitations (never a
    /// code); `--revoke ID|all`. The state database is FILE's (`state`, default `FILE.guard.db`).
    func invite() throws -> ExitStatus {
        let location = try StateLocation(state: invocation.state, credentialFile: file)
        // A SQLite state that does not exist yet has no invitations: nothing is created to say so.
        let exists = location.path.map { access($0, F_OK) == 0 } ?? true
        let registrations = Registrations(location: location)
        if let revoke = invocation.revoke {
            guard !invocation.listInvitations else { throw CredFileError.usage("--revoke and --list go separately") }
            if revoke == "all" {
                let count = exists ? try registrations.revokeAll() : 0
                say(messages.spanish ? "invitaciones revocadas: \(count)" : "invitations revoked: \(count)")
                return .success
            }
            guard let id = Int64(revoke), id > 0 else {
                throw CredFileError.usage("--revoke takes an invitation's id (see --list) or all")
            }
            guard exists, try registrations.revoke(id: id) else {
                say(messages.spanish ? "no hay invitación \(id)" : "no invitation \(id)")
                return .userConflict
            }
            say(messages.spanish ? "invitación \(id) revocada" : "invitation \(id) revoked")
            return .success
        }
        if invocation.listInvitations { return try listInvitations(registrations, exists: exists) }
        let lifetime = try Self.duration(invocation.inviteExpires ?? "7d")
        let issued = try registrations.issue(
            count: invocation.inviteCount, lifetime: lifetime, user: invocation.accessUser)
        for invitation in issued {
            // The code goes to standard output only: the person who hands it on reads it there.
            say(invitation.code.text)
        }
        return .success
    }

    private func listInvitations(_ registrations: Registrations, exists: Bool) throws -> ExitStatus {
        let records = exists ? try registrations.invitations() : []
        let now = Int64(time(nil))
        if invocation.json {
            let items = records.map { record in
                JSON.object([
                    ("id", "\(record.id)"),
                    ("created", JSON.string(Self.rfc3339(Double(record.created)))),
                    ("expires", JSON.string(Self.rfc3339(Double(record.expires)))),
                    ("user", record.user.map(JSON.string) ?? "null"),
                    ("used", record.used.map { JSON.string(Self.rfc3339(Double($0))) } ?? "null"),
                ])
            }
            say("[" + items.joined(separator: ",") + "]")
            return .success
        }
        for record in records {
            let state =
                record.used != nil
                ? (messages.spanish ? "usada" : "used")
                : record.expires <= now
                    ? (messages.spanish ? "caducada" : "expired") : (messages.spanish ? "abierta" : "open")
            say(
                [
                    "\(record.id)", Self.rfc3339(Double(record.created)), Self.rfc3339(Double(record.expires)),
                    record.user.map(Escaped.name) ?? "*", state,
                ].joined(separator: "\t"))
        }
        return .success
    }

    /// `--expires`: whole seconds, or a whole number followed by `s`, `m`, `h`, `d` or `w`.
    static func duration(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = text.last, let factor = units[last] {
            digits = digits.dropLast()
            unit = factor
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int64(digits),
            number > 0, case let (seconds, overflow) = number.multipliedReportingOverflow(by: unit), !overflow,
            seconds <= 366 * 86_400
        else {
            throw CredFileError.usage("--expires takes a duration such as 7d, 12h or 3600 (at most 366 days)")
        }
        return seconds
    }
}
