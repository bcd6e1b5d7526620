extension CredentialFile {
    /// Every problem of the file, in line order (SPEC §2, §3): malformed entries,
    /// unsupported hashes and shadowed duplicates are errors; plaintext secrets, weak
    /// hashes and odd usernames are warnings. No finding quotes a secret.
    public func findings(policy: HashPolicy = .standard) -> [Finding] {
        var findings: [Finding] = []
        var firstLine: [[UInt8]: Int] = [:]
        firstLine.reserveCapacity(lineCount)
        for line in lines {
            guard let entry = line.entry else { continue }
            func report(_ severity: Finding.Severity, _ message: String) {
                findings.append(Finding(line: line.number, severity: severity, message: message))
            }
            let who = entry.hasName ? " for user \(Self.display(entry.username))" : ""
            if entry.hasName {
                let key = entry.key
                if let first = firstLine[key] {
                    report(.error, "duplicate entry\(who) (first at line \(first)); it never authenticates")
                    continue
                }
                firstLine[key] = line.number
            }
            switch entry.secret {
            case .malformed(let reason):
                report(.error, "malformed entry\(who): \(reason)")
                continue
            case .unsupportedHash(let scheme):
                report(.error, "unsupported hash scheme \(scheme)\(who); it never authenticates")
            case .plaintext:
                report(.warning, "plaintext password\(who); run 'credfile upgrade'")
            case .pbkdf2(let hash):
                if hash.rounds < policy.minimumRounds {
                    report(.warning, "weak hash\(who): \(hash.rounds) rounds, below the minimum of \(policy.minimumRounds)")
                }
            }
            if let problem = Username.problem(entry.username) {
                report(.warning, "username \(problem)")
            }
        }
        return findings
    }

    /// A username for a message: quoted, with anything unprintable escaped.
    static func display(_ raw: some Collection<UInt8>) -> String {
        guard let s = String(validating: Array(raw), as: UTF8.self) else {
            return "'" + raw.map { b in b < 0x80 && b >= 0x20 && b != 0x7F ? String(UnicodeScalar(b)) : "\\x" + LineClassifier.hex(b).dropFirst(2) }.joined() + "'"
        }
        var out = "'"
        for scalar in s.unicodeScalars {
            if scalar.properties.generalCategory == .control || scalar == "'" || scalar == "\\" {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "'"
    }
}
