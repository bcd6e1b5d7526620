import CredFile

#if canImport(Glibc)
import Glibc
#endif

extension FuzzChecks {
    /// FuzzImport: the first byte picks a format of `import --hashed` / `--from`
    /// (``ImportFormat/allCases``), the rest is the input. The reader never traps; an error
    /// is a usage error naming an existing line; a success agrees with a naive re-reading
    /// of each line it names (username, separator, the secret byte for byte or as SPEC §5
    /// says it is stored); names are valid, unique after NFC, and lines increase; and
    /// importing the users into an empty file writes exactly `user,secret` per user.
    public static func importReaders(_ input: [UInt8], directory: String) throws(FuzzFailure) {
        guard let selector = input.first else { return }
        let format = ImportFormat.allCases[Int(selector) % ImportFormat.allCases.count]
        let body = Array(input.dropFirst())
        let lines = splitLines(body)
        let batch: ImportBatch
        do {
            batch = try ImportReader.read(body, format: format)
        } catch let error as CredFileError {
            try expect(error.code == .usage, "\(format): error code \(error.code)")
            let number = error.message.dropFirst("line ".count).prefix { $0.isNumber }
            try expect(error.message.hasPrefix("line "), "\(format): the error names no line")
            try expect(
                Int(number).map { (1...max(lines.count, 1)).contains($0) } ?? false,
                "\(format): the error names line \(number) of \(lines.count)")
            return
        } catch {
            throw FuzzFailure(description: "\(format): an error that is not a CredFileError: \(error)")
        }

        // Lines increase over users and skipped users together; each is a real line.
        let numbers = (batch.users.map(\.line) + batch.skipped.map(\.line)).sorted()
        try expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 }, "\(format): a line is used twice")
        try expect(numbers.allSatisfy { (1...lines.count).contains($0) }, "\(format): a line number is out of range")
        var names: [String] = []
        for user in batch.users {
            try checkUser(user, line: lines[user.line - 1], format: format)
            names.append(user.username)
        }
        for skipped in batch.skipped {
            try expect(format == .shadow || format == .dovecot, "\(format): skipped a user")
            try expect(
                lines[skipped.line - 1].starts(with: Array(skipped.username.utf8) + [UInt8(ascii: ":")]),
                "\(format): line \(skipped.line): the skipped name is not the line's")
            names.append(skipped.username)
        }
        for (i, name) in names.enumerated() {
            try expect((try? Username.validate(name)) != nil, "\(format): a name that add refuses")
            try expect(!names[..<i].contains(name), "\(format): a duplicate name (after NFC) was accepted")
        }

        // Imported into an empty file, each user is one line `user,secret`.
        let path = directory + "/usuarios.txt"
        unlink(path)
        defer { unlink(path) }
        guard let policy = try? HashPolicy(rounds: 1) else {
            throw FuzzFailure(description: "HashPolicy(rounds: 1) refused")
        }
        let store = CredentialStore(path: path, policy: policy)
        // The reader cannot know a store's cost limits (SPEC §3.1): a hash over them is
        // refused by importHashes, naming its line, and nothing is written.
        if let costly = batch.users.first(where: { isTooCostly($0.secret, under: policy) }) {
            do {
                _ = try store.importHashes(batch.users)
                throw FuzzFailure(description: "\(format): line \(costly.line): a too costly hash was imported")
            } catch let error as CredFileError {
                try expect(error.message.hasPrefix("line "), "\(format): a refusal without its line: \(error)")
                try expect(access(path, F_OK) != 0, "\(format): a refused import wrote the file")
            } catch let failure as FuzzFailure {
                throw failure
            } catch {
                throw FuzzFailure(description: "\(format): importHashes threw \(error)")
            }
            return
        }
        do {
            let counts = try store.importHashes(batch.users)
            try expect(counts.added == batch.users.count && counts.updated == 0, "\(format): counts \(counts)")
        } catch {
            throw FuzzFailure(description: "\(format): importHashes refused what the reader accepted: \(error)")
        }
        guard !batch.users.isEmpty else { return }
        let written = Array((try? store.read().lines.map { Array($0.content) }) ?? [])
        try expect(
            written == batch.users.map { Array("\($0.username),\($0.secret)".utf8) },
            "\(format): the file is not user,secret per user")
    }

    /// The input's lines, LF removed, one CR before it removed.
    static func splitLines(_ bytes: [UInt8]) -> [[UInt8]] {
        guard !bytes.isEmpty else { return [] }
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { Array($0) }
        if bytes.last == 0x0A { lines.removeLast() }
        return lines.map { $0.last == 0x0D ? Array($0.dropLast()) : $0 }
    }

    /// One user against a naive reading of its line.
    static func checkUser(_ user: ImportedUser, line: [UInt8], format: ImportFormat) throws(FuzzFailure) {
        let separator = format == .hashed ? UInt8(ascii: ",") : UInt8(ascii: ":")
        let prefix = Array(user.username.utf8) + [separator]
        try expect(line.starts(with: prefix), "\(format): line \(user.line): the name is not the line's")
        let rest = Array(line.dropFirst(prefix.count))
        let secret = Array(user.secret.utf8)
        try expect(
            !secret.isEmpty && !secret.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D },
            "\(format): line \(user.line): bad secret bytes")
        let field = Array(rest.prefix { $0 != UInt8(ascii: ":") })
        let crypt = Array("{CRYPT}".utf8)
        switch format {
        case .hashed, .mosquitto:
            try expect(secret == rest, "\(format): line \(user.line): the secret is not stored byte for byte")
        case .htpasswd:
            try expect(secret == rest || secret == crypt + rest, "\(format): line \(user.line): the secret changed")
        case .shadow:
            try expect(secret == field || secret == crypt + field, "\(format): line \(user.line): the secret changed")
        case .dovecot:
            let plain = ["{PLAIN}", "{CLEAR}", "{CLEARTEXT}"].contains { scheme in
                field.count >= scheme.utf8.count
                    && String(decoding: field.prefix(scheme.utf8.count), as: UTF8.self).uppercased() == scheme
            }
            if plain {
                try expect(
                    field.hasSuffix(secret) && field.count > secret.count,
                    "\(format): line \(user.line): the plaintext changed")
            } else {
                try expect(
                    secret == field || secret == crypt + field, "\(format): line \(user.line): the secret changed")
            }
        }
        // What the file will make of it: a hash, unless it came from Dovecot's {PLAIN}.
        let stored = CredentialFile(bytes: Array("x,".utf8) + secret).lines.first?.entry?.secret
        switch stored {
        case .plaintext?:
            try expect(
                format == .dovecot, "\(format): line \(user.line): a secret without hash syntax was taken as a hash")
        case .malformed?, nil:
            throw FuzzFailure(description: "\(format): line \(user.line): the stored secret reads as malformed")
        default: break
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func hasSuffix(_ suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}

/// Whether `secret` is a hash over `policy`'s cost limits (SPEC §3.1), as the store judges
/// it: parsed as the secret of a line, then judged by the policy.
private func isTooCostly(_ secret: String, under policy: HashPolicy) -> Bool {
    guard case .entry(let entry)? = CredentialFile(bytes: Array("u,".utf8) + Array(secret.utf8)).lines.first?.kind
    else { return false }
    let verdict: CostVerdict
    switch entry.secret {
    case .pbkdf2(let hash): verdict = policy.costVerdict(of: hash)
    case .peer(let peer): verdict = policy.costVerdict(of: peer.hash)
    default: return false
    }
    if case .tooCostly = verdict { return true }
    return false
}
