/// Decides a login against one entry in time that does not tell the cases apart
/// (SPEC §3): every call costs at least one PBKDF2 at the policy's rounds. An unknown
/// user, a plaintext, malformed or unsupported entry runs a dummy hash; an entry with
/// fewer rounds is padded up to the policy (Django's `harden_runtime`).
struct Verifier {
    let policy: HashPolicy

    /// A fixed salt for the dummy work; its result is thrown away.
    private static let dummySalt = [UInt8](repeating: 0xA5, count: HashPolicy.saltCount)

    /// Whether `password` matches the entry whose line content is `content`
    /// (nil: no entry of that name).
    func verify(_ password: Password, against content: ArraySlice<UInt8>?) throws -> Bool {
        guard let content, case .entry(let entry) = LineClassifier.classify(content) else {
            try dummyWork(rounds: policy.rounds, password)
            return false
        }
        switch entry.secret {
        case .pbkdf2(let hash):
            let granted = try hash.verify(password)
            if hash.rounds < policy.rounds { try dummyWork(rounds: policy.rounds - hash.rounds, password) }
            return granted
        case .plaintext:
            // Compare fixed-size digests in constant time, so neither length nor
            // content leaks through an early exit.
            let stored = OpenSSL.sha256Digest(of: Unicode.nfcBytes(ofField: entry.secretBytes))
            let given = password.bytes.withUnsafeBytes { OpenSSL.sha256($0) }
            let granted = stored.withUnsafeBytes { s in given.withUnsafeBytes { OpenSSL.constantTimeEqual(s, $0) } }
            try dummyWork(rounds: policy.rounds, password)
            return granted
        case .unsupportedHash, .malformed:
            try dummyWork(rounds: policy.rounds, password)
            return false
        }
    }

    private func dummyWork(rounds: Int, _ password: Password) throws {
        _ = try PBKDF2.deriveKey(
            policy.algorithm, password: password.bytes, salt: Self.dummySalt, rounds: rounds,
            count: policy.algorithm.digestCount)
    }
}

extension OpenSSL {
    /// SHA-256 of bytes that hold a secret; the copy is zeroed afterwards.
    static func sha256Digest(of secret: [UInt8]) -> [UInt8] {
        var copy = secret
        defer { copy.withUnsafeMutableBytes { cleanse($0) } }
        return copy.withUnsafeBytes { sha256($0) }
    }
}
