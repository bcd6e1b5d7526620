import CredFile

extension CommandContext {
    func add() throws -> ExitStatus {
        try Username.validate(user)  // before asking for a password
        var store = try store()
        if let bytes = try AtomicWriter.read(file), CredentialFile(bytes: bytes).firstEntry(named: user) != nil {
            throw CredFileError(.userExists, messages.userExists)  // checked again under the lock
        }
        store.policy = try writingPolicy()
        try store.register(username: user, password: readPassword(new: true), storage: storage)
        return .success
    }

    func verify() throws -> ExitStatus {
        var store = try store()
        if invocation.upgrade { store.policy = try writingPolicy() }
        let result = try store.verify(username: user, password: readPassword(new: false), upgradeOnSuccess: invocation.upgrade)
        guard result.granted else {
            terminal.writeError("credfile: \(messages.wrongCredentials)\n")
            return .failure
        }
        if let error = result.upgradeError { terminal.writeError("credfile: \(messages.upgradeFailed(error.description))\n") }
        return .success
    }

    func passwd() throws -> ExitStatus {
        var store = try store()
        store.policy = try writingPolicy()
        // Fail early, before a prompt, when the user is not there.
        guard try store.read().firstEntry(named: user) != nil else {
            throw CredFileError(.userNotFound, messages.userNotFound)
        }
        try store.changePassword(username: user, to: readPassword(new: true), storage: storage)
        say(messages.passwordChanged)
        return .success
    }

    func delete() throws -> ExitStatus {
        let removed = try store().remove(username: user)
        say(messages.removed(removed))
        return .success
    }

    func importUsers() throws -> ExitStatus {
        var store = try store()
        store.policy = try writingPolicy()
        var users: [(username: String, password: Password)] = []
        var lineNumbers: [Int] = []
        var number = 0
        while let line = try terminal.readLine() {
            number += 1
            if line.isEmpty { continue }
            guard let comma = line.firstIndex(of: UInt8(ascii: ",")) else {
                throw CredFileError.usage("standard input line \(number): expected user,password")
            }
            guard let name = String(validating: line[..<comma], as: UTF8.self) else {
                throw CredFileError.usage("standard input line \(number): username is not valid UTF-8")
            }
            let password = Password(utf8: line[(comma + 1)...])
            do {
                try Username.validate(name)
                try PasswordRules.validate(password, plaintext: invocation.plaintext)
            } catch let error as CredFileError {
                throw CredFileError(error.code, "standard input line \(number): \(error.message)")
            }
            users.append((name, password))
            lineNumbers.append(number)
        }
        do {
            let counts = try store.importUsers(users, storage: storage, jobs: invocation.jobs ?? ParallelHasher.defaultJobs)
            say(messages.imported(added: counts.added, updated: counts.updated))
        } catch let error as CredFileError where error.code == .usage {
            // "item N: … item M …" from the library: name the input lines instead.
            var message = ""
            var rest = Substring(error.message)
            while let item = rest.firstRange(of: "item ") {
                let digits = rest[item.upperBound...].prefix { $0.isASCII && $0.isNumber }
                guard let n = Int(digits), n >= 1, n <= lineNumbers.count else {
                    message += rest[..<item.upperBound]
                    rest = rest[item.upperBound...]
                    continue
                }
                message += rest[..<item.lowerBound] + (message.isEmpty && item.lowerBound == rest.startIndex ? "standard input line " : "line ")
                message += String(lineNumbers[n - 1])
                rest = rest[digits.endIndex...]
            }
            throw CredFileError(.usage, message + rest)
        }
        return .success
    }

    func list() throws -> ExitStatus {
        let store = try store()
        let entries = try store.read().effectiveEntries()
        if invocation.json {
            let items = entries.map { line -> String in
                let entry = line.entry!  // effectiveEntries holds entry lines only
                var fields = [
                    ("user", JSON.string(entry.name ?? String(decoding: entry.username, as: UTF8.self))),
                    ("line", "\(line.number)"),
                    ("storage", JSON.string(entry.secret.storageDescription.split(separator: " ").first.map(String.init) ?? "")),
                ]
                if case .pbkdf2(let hash) = entry.secret {
                    fields.append(("rounds", "\(hash.rounds)"))
                    fields.append(("weak", hash.rounds < store.policy.minimumRounds ? "true" : "false"))
                }
                return JSON.object(fields)
            }
            say("[" + items.joined(separator: ",") + "]")
        } else {
            for line in entries {
                let entry = line.entry!
                say("\(Display.name(entry.username))\t\(entry.secret.storageDescription)")
            }
        }
        return .success
    }

    func check() throws -> ExitStatus {
        let findings = try store().findings()
        let errors = findings.filter { $0.severity == .error }.count
        if invocation.json {
            let items = findings.map {
                JSON.object([("line", "\($0.line)"), ("severity", JSON.string($0.severity.rawValue)), ("message", JSON.string($0.message))])
            }
            say(JSON.object([
                ("file", JSON.string(file)), ("errors", "\(errors)"),
                ("warnings", "\(findings.count - errors)"), ("findings", "[" + items.joined(separator: ",") + "]"),
            ]))
        } else {
            for finding in findings { say("\(file):\(finding.line): \(finding.severity.rawValue): \(finding.message)") }
        }
        return errors > 0 ? .failure : .success
    }

    func upgrade() throws -> ExitStatus {
        var store = try store()
        store.policy = try writingPolicy()
        let bar: ProgressBar? = terminal.errorIsTerminal && !invocation.dryRun ? ProgressBar() : nil
        var progress: (@Sendable (Int, Int) -> Void)?
        if let bar { progress = { done, total in bar.update(done: done, total: total) } }
        let summary = try store.upgrade(
            jobs: invocation.jobs ?? ParallelHasher.defaultJobs, dryRun: invocation.dryRun, progress: progress)
        bar?.finish()
        if invocation.json {
            let malformed: String = "[" + summary.malformedLines.map(String.init).joined(separator: ",") + "]"
            var fields: [(String, String)] = []
            fields.append(("upgraded", String(summary.upgraded)))
            fields.append(("skipped", String(summary.skipped)))
            fields.append(("alreadyHashed", String(summary.alreadyHashed)))
            fields.append(("weak", String(summary.weak)))
            fields.append(("unsupported", String(summary.unsupported)))
            fields.append(("malformedLines", malformed))
            fields.append(("dryRun", summary.dryRun ? "true" : "false"))
            fields.append(("seconds", String(summary.seconds)))
            say(JSON.object(fields))
            return .success
        }
        if summary.dryRun {
            say(messages.wouldUpgrade(summary.upgraded, hashed: summary.alreadyHashed))
        } else if summary.upgraded == 0 && summary.skipped == 0 {
            say(messages.nothingToUpgrade)
        } else {
            say(messages.upgraded(summary.upgraded, skipped: summary.skipped, hashed: summary.alreadyHashed, seconds: summary.seconds))
        }
        if !summary.malformedLines.isEmpty { say(messages.malformedKept(summary.malformedLines)) }
        if summary.weak > 0 { say(messages.weakLeft(summary.weak)) }
        return .success
    }

    func hash() throws -> ExitStatus {
        let password = try readPassword(new: true)
        try PasswordRules.validate(password)
        say(try PasswordHash(hashing: password, policy: writingPolicy()).string)
        return .success
    }
}
