import CredFile

/// The commands of SPEC §13: `group` and `access`.
extension CommandContext {
    /// `credfile group GROUPFILE [USER]` prints the groups (with their members) or USER's
    /// groups; `credfile group GROUPFILE add|remove GROUP USER` edits the file.
    func group() throws -> ExitStatus {
        let words = invocation.positionals
        let usage = "credfile group GROUPFILE [USER] | credfile group GROUPFILE add|remove GROUP USER"
        if words.count == 4 {
            guard let edit = GroupFile.Edit(rawValue: words[1]) else {
                throw CredFileError.usage("group takes add or remove before GROUP USER: \(usage)")
            }
            let changed = try GroupFile.edit(
                path: file, edit, group: words[2], user: words[3], lockTimeout: invocation.lockTimeout ?? 15)
            switch (edit, changed) {
            case (.add, true): say("\(Escaped.name(words[3])) added to \(Escaped.name(words[2]))")
            case (.add, false): say("\(Escaped.name(words[3])) was already in \(Escaped.name(words[2]))")
            case (.remove, true): say("\(Escaped.name(words[3])) removed from \(Escaped.name(words[2]))")
            case (.remove, false): say("\(Escaped.name(words[3])) was not in \(Escaped.name(words[2]))")
            }
            return .success
        }
        guard words.count <= 2 else { throw CredFileError.usage("group takes 1, 2 or 4 arguments: \(usage)") }
        let groups = try GroupFile(path: file)
        if words.count == 2 {
            let mine = groups.groups(of: words[1])
            if invocation.json {
                terminal.write("[" + mine.map(JSON.string).joined(separator: ",") + "]\n")
            } else {
                for group in mine { say(Escaped.name(group)) }
            }
            return .success
        }
        if invocation.json {
            let fields = groups.groups.map {
                ($0.group, "[" + $0.members.map(JSON.string).joined(separator: ",") + "]")
            }
            terminal.write(JSON.object(fields) + "\n")
        } else {
            for (group, members) in groups.groups {
                say(([Escaped.name(group) + ":"] + members.map { Escaped.name($0) }).joined(separator: " "))
            }
        }
        return .success
    }

    /// `credfile access RULESFILE --url URL [--user NAME] [--address IP] [--method M]
    /// [--groups GROUPFILE]`: the action of the rules for one request and the line that
    /// decided, as Authelia's `check-policy`. Exit 0 allowed or bypassed, 1 denied.
    func accessCheck() throws -> ExitStatus {
        let rules = try AccessRules(path: file)
        var address: IPAddress?
        if let text = invocation.address {
            guard let parsed = IPAddress(parsing: Array(text.utf8)) else {
                throw CredFileError.usage("option --address takes an IPv4 or IPv6 address")
            }
            address = parsed
        }
        let user = invocation.accessUser
        var groups: [String] = []
        if let path = invocation.groups, let user { groups = try GroupFile(path: path).groups(of: user) }
        let request = try AccessRequest(
            url: invocation.url ?? "", method: invocation.method, user: user, groups: groups, address: address)
        let decision = rules.decide(request)
        let rule = decision.line.flatMap { line in rules.rules.first { $0.line == line } }
        let place = decision.line.map { "\(Escaped.path(file)):\($0)" }
        let shown: String
        switch decision.reason {
        case .rule: shown = decision.action.rawValue
        case .noRule: shown = "deny"
        case .unsafePath: shown = "deny"
        case .signInFirst: shown = "sign-in"
        }
        if invocation.json {
            terminal.write(
                JSON.object([
                    ("action", JSON.string(shown)), ("line", decision.line.map { "\($0)" } ?? "null"),
                    ("rule", rule.map { JSON.string($0.text) } ?? "null"),
                    ("reason", JSON.string(Self.reason(decision.reason))),
                ]) + "\n")
        } else {
            let why = [place, rule.map { Escaped.name($0.text) }].compactMap { $0 }.joined(separator: ": ")
            say(shown + " (" + (why.isEmpty ? Self.reason(decision.reason) : why) + ")")
        }
        return decision.isAllowed ? .success : .failure
    }

    /// `check --groups GROUPFILE --rules RULESFILE` (SPEC §13): each file's first bad line
    /// (`FILE:LINE: reason`), or why it cannot be read.
    func accessFileErrors() -> [String] {
        var errors: [String] = []
        for (path, read) in [
            (invocation.groups, { (path: String) throws in _ = try GroupFile(path: path) }),
            (invocation.text(.rules), { (path: String) throws in _ = try AccessRules(path: path) }),
        ] {
            guard let path else { continue }
            do {
                try read(path)
            } catch {
                let message = (error as? CredFileError)?.message ?? "\(error)"
                // FILE:LINE: reason, as check's own lines: FILE:LINE: error: reason.
                let place = Escaped.path(path) + ":"
                if message.hasPrefix(place), let colon = message.dropFirst(place.count).firstIndex(of: ":") {
                    errors.append(
                        String(message[...colon]) + " error:" + String(message[message.index(after: colon)...]))
                } else {
                    errors.append(place + " error: " + message)
                }
            }
        }
        return errors
    }

    private static func reason(_ reason: AccessDecision.Reason) -> String {
        switch reason {
        case .rule: "a rule matched"
        case .noRule: "no rule matched"
        case .unsafePath: "the path has .. or . segments, //, a backslash, an encoded slash or NUL"
        case .signInFirst: "a rule naming a user or group may match: sign in first"
        }
    }
}
