import CredFile

#if canImport(Glibc)
import Glibc
#endif

extension CommandContext {
    func add() throws -> ExitStatus {
        try Username.validate(user)  // before asking for a password
        let store = try passwordStore()
        if try store.hasEntry(named: user, missingFileIsEmpty: true) {
            throw CredFileError(.userExists, messages.userExists)  // checked again under the lock
        }
        // The store judges the password (SPEC §8) before it hashes it: one lookup per list.
        try store.register(username: user, password: try readPassword(new: true), storage: storage)
        return .success
    }

    func verify() throws -> ExitStatus {
        var store = try loginStore(service: "verify")
        if invocation.upgrade { store.policy = try writingPolicy() }
        let password = try askCode(&store, user: user, password: try readPassword(new: false), prompt: "Code: ")
        let result = try store.verify(
            username: user, password: password, upgradeOnSuccess: invocation.upgrade, client: nil)
        guard result.granted else {
            terminal.writeError("credfile: \(messages.wrongCredentials)\n")
            return .failure
        }
        if let error = result.upgradeError {
            terminal.writeError("credfile: \(messages.upgradeFailed(error.description))\n")
        }
        return .success
    }

    func passwd() throws -> ExitStatus {
        var store = try passwordStore()
        // Fail early, before a prompt, when the user is not there.
        guard try store.hasEntry(named: user) else {
            throw CredFileError(.userNotFound, messages.userNotFound)
        }
        // SPEC §14: with a second factor the §8 minimum is 8 (NIST SP 800-63B-4 §3.1.1.2),
        // unless min-length is set.
        if invocation.minimumLength == nil, try secondFactor().isEnrolled(usernameBytes: Array(user.utf8)) {
            var policy = try PasswordPolicy(
                minimumLength: PasswordPolicy.secondFactorMinimumLength, blocklists: store.passwordPolicy.blocklists)
            policy.contextWords = store.passwordPolicy.contextWords
            policy.rejectsContextWords = store.passwordPolicy.rejectsContextWords
            store.passwordPolicy = policy
        }
        try store.changePassword(username: user, to: try readPassword(new: true), storage: storage)
        say(messages.passwordChanged)
        return .success
    }

    func delete() throws -> ExitStatus {
        let removed = try store().remove(username: user)
        say(messages.removed(removed))
        return .success
    }

    func importUsers() throws -> ExitStatus {
        if invocation.hashed || invocation.importFormat != nil { return try importHashes() }
        let store = try passwordStore()
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
            // The store judges each password against the policy (SPEC §8), once; its
            // refusal names the item, turned into the input line below.
            do {
                try Username.validate(name)
                try PasswordRules.validate(password, plaintext: invocation.plaintext)
            } catch let error as CredFileError {
                throw CredFileError(error.code, "standard input line \(number): \(importRefusal(error))")
            }
            users.append((name, password))
            lineNumbers.append(number)
        }
        do {
            let counts = try store.importUsers(
                users, storage: storage, jobs: invocation.jobs ?? ParallelHasher.defaultJobs,
                existing: invocation.existing)
            say(messages.imported(added: counts.added, updated: counts.updated))
        } catch let error as CredFileError {
            // The library names the item by its index: name the input line instead.
            guard let item = error.item, lineNumbers.indices.contains(item) else { throw error }
            let reason = importRefusal(error, line: { lineNumbers[$0] })
            throw CredFileError(error.code, "standard input line \(lineNumbers[item]): \(reason)", cause: error.cause)
        }
        return .success
    }

    /// A refusal of `import` in the user's words; one by SPEC §8 (a password chosen now)
    /// adds the ways to bring in passwords already in use: `--existing`, or `upgrade`.
    private func importRefusal(_ error: CredFileError, line: (Int) -> Int = { $0 + 1 }) -> String {
        guard let refusal = error.refusal else { return error.message }
        let reason = messages.refusal(refusal, line: line)
        guard case .passwordPolicy = refusal else { return reason }
        return reason + messages.importExistingHint
    }

    func list() throws -> ExitStatus {
        let store = try store()
        let file = try store.read()
        // SPEC §14: `totp` beside a user with a second factor (a secrets file that cannot
        // be read marks none; `check` reports it).
        let enrolled = Set((try? secondFactor().enrolledNames()) ?? [])
        if invocation.json {
            let items = file.listing(policy: store.policy).map { entry -> String in
                var fields = [
                    ("user", JSON.string(entry.usernameText ?? String(decoding: entry.username, as: UTF8.self))),
                    ("line", "\(entry.line)"),
                    ("storage", JSON.string(entry.storage.scheme)),
                ]
                if let rounds = entry.storage.cost {
                    fields.append(("rounds", "\(rounds)"))
                    fields.append(("weak", entry.storage.isWeak ? "true" : "false"))
                }
                if entry.storage.isLocked { fields.append(("locked", "true")) }  // storage: the hash behind the !
                if enrolled.contains(Array(entry.username)) { fields.append(("totp", "true")) }
                return JSON.object(fields)
            }
            say("[" + items.joined(separator: ",") + "]")
        } else if !enrolled.isEmpty {
            for entry in file.listing(policy: store.policy) {
                let mark = enrolled.contains(Array(entry.username)) ? "\ttotp" : ""
                say("\(Escaped.name(entry.username))\t\(entry.storage)\(mark)")
            }
        } else {
            // Bytes rendered by the library in blocks, not a String per line.
            file.forEachListingBlock(policy: store.policy) { terminal.write(String(decoding: $0, as: UTF8.self)) }
        }
        return .success
    }

    /// `import --hashed` / `import --from FORMAT`: hashes from standard input, stored byte
    /// for byte, all or nothing; skipped users (shadow's locked ones) reported on stderr.
    func importHashes() throws -> ExitStatus {
        let store = try store()
        var input: [UInt8] = []
        while let line = try terminal.readLine() { input += line + [0x0A] }
        do {
            let batch = try ImportReader.read(input, format: invocation.importFormat ?? .hashed)
            for skipped in batch.skipped {
                terminal.writeError(
                    "credfile: \(messages.importSkipped(Escaped.name(skipped.username), line: skipped.line, reason: skipped.reason))\n"
                )
            }
            let counts = try store.importHashes(batch.users)
            say(messages.imported(added: counts.added, updated: counts.updated))
        } catch let error as CredFileError where error.code == .usage && error.message.hasPrefix("line ") {
            throw CredFileError(.usage, "standard input " + error.message)
        }
        return .success
    }

    /// `check FILE`: every finding printed as soon as it is decided, so memory holds the
    /// file and a block of findings, never all of them (a million weak hashes made
    /// 324 MB). With `--json` the object is written as it goes: its counts come after
    /// the findings.
    func check() throws -> ExitStatus {
        var store = try store()
        if invocation.checkPasswords { store.passwordPolicy = try invocation.passwordPolicy() }
        // SPEC §9: who may read FILE but could not write its guard database.
        var guardFindings: [Finding] = []
        if invocation.guardsLogins {
            let loginGuard = try LoginGuard(credentialFile: file, state: invocation.state, log: .none, service: "check")
            guardFindings = loginGuard.accessFindings()
        }
        let shownFile = Escaped.path(file)
        if invocation.json {
            terminal.write("{" + JSON.string("file") + ":" + JSON.string(file) + "," + JSON.string("findings") + ":[")
        }
        var separator = ""
        let counts = try store.forEachFinding(blocklisted: invocation.checkPasswords, adding: guardFindings) {
            finding in
            if invocation.json {
                terminal.write(
                    separator
                        + JSON.object([
                            ("line", "\(finding.line)"), ("severity", JSON.string(finding.severity.rawValue)),
                            ("kind", JSON.string(finding.kind.rawValue)),
                            ("message", JSON.string(messages.finding(finding))),
                        ]))
                separator = ","
            } else {
                // A finding about the whole file (line 0) is printed without a line.
                let place = finding.line > 0 ? "\(shownFile):\(finding.line)" : shownFile
                say("\(place): \(finding.severity.rawValue): \(messages.finding(finding))")
            }
        }
        let accessErrors = accessFileErrors()
        // SPEC §14: the secrets file's own problems, as OTPFILE:LINE: severity: message.
        let factor = try secondFactor()
        let otpProblems = try factor.fileProblems { try store.hasEntry(named: String(decoding: $0, as: UTF8.self)) }
        let otpLines = otpProblems.map { problem in
            let place = Escaped.path(factor.otpFile) + (problem.line > 0 ? ":\(problem.line)" : "")
            return "\(place): \(problem.severity.rawValue): \(problem.message)"
        }
        let otpErrors = otpProblems.filter { $0.severity == .error }.count
        if invocation.json {
            say(
                "]," + JSON.string("errors") + ":\(counts.errors + accessErrors.count + otpErrors),"
                    + JSON.string("warnings") + ":\(counts.warnings + otpProblems.count - otpErrors)"
                    + (otpLines.isEmpty
                        ? ""
                        : "," + JSON.string("otp_findings") + ":[" + otpLines.map(JSON.string).joined(separator: ",")
                            + "]")
                    + (accessErrors.isEmpty
                        ? ""
                        : "," + JSON.string("access_errors") + ":["
                            + accessErrors.map(JSON.string).joined(separator: ",") + "]") + "}")
        } else {
            for error in accessErrors { say(error) }
            for line in otpLines { say(line) }
        }
        return counts.errors + accessErrors.count + otpErrors > 0 ? .failure : .success
    }

    func upgrade() throws -> ExitStatus {
        var store = try store()
        store.policy = try writingPolicy()
        let bar: ProgressBar? = terminal.errorIsTerminal && !invocation.dryRun ? ProgressBar() : nil
        var progress: (@Sendable (Int, Int) -> Void)?
        if let bar { progress = { done, total in bar.update(done: done, total: total) } }
        // Only the upgrade catches SIGINT / SIGTERM: it commits what is hashed, then exits.
        if !invocation.dryRun { StopSignal.install() }
        defer { if !invocation.dryRun { StopSignal.restore() } }
        let summary = try store.upgrade(
            jobs: invocation.jobs ?? ParallelHasher.defaultJobs, dryRun: invocation.dryRun,
            batchInterval: Self.upgradeBatchInterval, stop: StopSignal.flag, progress: progress)
        bar?.finish()
        let signal = summary.stopped ? StopSignal.requested : nil
        if let signal {
            let name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)"
            terminal.writeError("credfile: \(messages.upgradeStopped(by: name, left: summary.left))\n")
        }
        let status: ExitStatus = signal == nil ? .success : signal == SIGINT ? .interrupted : .terminated
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
            fields.append(("rate", String(summary.rate)))
            fields.append(("batches", String(summary.batches)))
            fields.append(("left", String(summary.left)))
            fields.append(("stopped", summary.stopped ? "true" : "false"))
            say(JSON.object(fields))
            return status
        }
        if summary.dryRun {
            say(messages.wouldUpgrade(summary.upgraded, hashed: summary.alreadyHashed))
        } else if summary.upgraded == 0 && summary.skipped == 0 && !summary.stopped {
            say(messages.nothingToUpgrade)
        } else {
            say(
                messages.upgraded(
                    summary.upgraded, skipped: summary.skipped, hashed: summary.alreadyHashed, seconds: summary.seconds)
            )
        }
        if !summary.malformedLines.isEmpty { say(messages.malformedKept(summary.malformedLines)) }
        if summary.weak > 0 { say(messages.weakLeft(summary.weak)) }
        return status
    }

    /// How long `upgrade` hashes before it commits a batch (SPEC §5: at least every 10 s).
    /// Debug builds take `CREDFILE_UPGRADE_BATCH_SECONDS`, so tests can see many batches.
    static var upgradeBatchInterval: Duration {
        #if DEBUG
        if let text = getenv("CREDFILE_UPGRADE_BATCH_SECONDS").map({ String(cString: $0) }),
            let seconds = Double(text), seconds > 0, seconds <= 10
        {
            return .milliseconds(Int(seconds * 1000))
        }
        #endif
        return .seconds(10)
    }

    func hash() throws -> ExitStatus {
        let password = try readPassword(new: true)
        try PasswordRules.validate(password)
        say(try writingPolicy().hash(password))
        return .success
    }
}
