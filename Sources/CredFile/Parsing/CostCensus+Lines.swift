extension CostCensus {
    /// The census of every entry of a file's bytes, judged by `policy`'s cost limits
    /// (what a caching store keeps per file version).
    init(file: UnsafeRawBufferPointer, within policy: HashPolicy) {
        self.init(within: policy)
        addEntries(inLines: UnsafeRawBufferPointer(rebasing: file[FileSyntax.firstLineStart(file)...]))
    }

    /// Counts the secret of every line of `lines` (whole lines, the first starting at 0)
    /// that has a name and a secret. Every entry counts, a shadowed duplicate too: a
    /// census that holds more classes than the logins can meet only makes the plan
    /// costlier, never unequal.
    ///
    /// Cheap per line, as a login of a one-shot process reads the whole file: one search
    /// for the line's end and one for its comma; a plaintext secret costs a scan for `$`;
    /// a hash in credfile's own format is fully validated only when its rounds are more
    /// than the census has seen for its PRF (a file of a million hashes at the same
    /// rounds validates one).
    ///
    /// `eachName`, when given, is called with every such line's name field and the
    /// line's content range in `lines` (a login's lookup of its name rides on this pass).
    mutating func addEntries(
        inLines lines: UnsafeRawBufferPointer,
        eachName: ((_ name: UnsafeRawBufferPointer, _ content: Range<Int>) -> Void)? = nil
    ) {
        var start = 0
        while start < lines.count {
            let (content, ending) = FileSyntax.line(at: start, in: lines)
            let line = UnsafeRawBufferPointer(rebasing: lines[content])
            if !FileSyntax.isComment(line),
                let comma = Bytes.index(of: FileSyntax.comma, in: line, from: 0, to: line.count),
                comma > 0
            {
                eachName?(UnsafeRawBufferPointer(rebasing: line[..<comma]), content)
                addSecret(UnsafeRawBufferPointer(rebasing: line[(comma + 1)...]))
            }
            start = content.upperBound + ending.bytes.count
            if ending == .none { break }
        }
    }

    /// Counts one secret's bytes.
    mutating func addSecret(_ secret: UnsafeRawBufferPointer) {
        guard !secret.isEmpty, SecretSyntax.mayHaveHashSyntax(secret) else { return }  // plaintext
        if let (prf, rounds) = Self.ownHeaderRounds(secret) {
            // Not more than seen, or as many as seen too costly: nothing to learn, and no
            // need to validate.
            guard rounds > pbkdf2Rounds[prf] ?? 0, rounds < tooCostlyRounds[prf] ?? .max else { return }
            guard let valid = try? PasswordHash.validate(secret) else { return }
            guard policy.costVerdict(of: valid.header) == .within else {
                tooCostlyRounds[prf] = min(tooCostlyRounds[prf] ?? .max, valid.header.rounds)
                return
            }
            addPBKDF2(prf, rounds: valid.header.rounds)
            return
        }
        add(SecretSyntax.classify(ArraySlice(secret)))
    }

    /// The PRF and rounds that a secret spelled `$pbkdf2-sha256$<digits>$…` or
    /// `$pbkdf2-sha512$…` claims, read without validating anything; nil for any other
    /// spelling (then ``SecretSyntax/classify(_:)`` says what it is).
    private static func ownHeaderRounds(_ secret: UnsafeRawBufferPointer) -> (PRF, Int)? {
        let start = "$pbkdf2-sha256$".utf8.count
        guard secret.count > start, Bytes.hasPrefix(secret, "$pbkdf2-sha"), secret[start - 1] == UInt8(ascii: "$")
        else { return nil }
        let prf: PRF
        switch (secret[11], secret[12], secret[13]) {
        case (UInt8(ascii: "2"), UInt8(ascii: "5"), UInt8(ascii: "6")): prf = .sha256
        case (UInt8(ascii: "5"), UInt8(ascii: "1"), UInt8(ascii: "2")): prf = .sha512
        default: return nil
        }
        var rounds = 0
        var index = start
        while index < secret.count, index - start < 9, secret[index] &- 0x30 < 10 {
            rounds = rounds * 10 + Int(secret[index] &- 0x30)
            index += 1
        }
        return index > start ? (prf, rounds) : nil
    }
}
