/// Decides a login against one entry in time that does not tell the cases apart
/// (SPEC §3.1): every call costs at least the work of one PBKDF2 at the policy's rounds
/// **and PRF** per password form tried (one form; two when the typed bytes differ from
/// their NFC form, see ``Password/peerForms``). Padding is by cost, not by rounds:
///
/// * an unknown user, a plaintext, malformed or unsupported entry: a dummy PBKDF2 of the
///   whole budget, in the policy's PRF: exactly the budget;
/// * a PBKDF2 entry (credfile's own or a peer's) with the policy's PRF: the entry's own
///   rounds plus the missing rounds: exactly the budget (Django's `harden_runtime`);
/// * anything else (another PRF, or another scheme: bcrypt, a fast digest…): no constant
///   converts its cost to policy rounds on every machine, so the padding **measures**. It
///   times the verification; it runs an eighth of the budget in the policy's PRF and times
///   that too, which gives the rate of this process at this moment (load included); from
///   it, the rounds still missing to reach the budget's time are run. The estimate's
///   error only touches the padded part, so cheap schemes (all padding) land within a
///   few percent of the unknown user's time. An entry costlier than the budget is not
///   shortened (it cannot be): it takes longer, and `check` warns about it.
struct Verifier {
    let policy: HashPolicy

    /// A fixed salt for the dummy work; its result is thrown away.
    private static let dummySalt = [UInt8](repeating: 0xA5, count: HashPolicy.saltCount)

    /// Why `password` does not match `entry`, the classified first entry of a name (nil:
    /// no entry of that name), or nil when it matches; the same work whatever the answer.
    /// The caller classifies the line (it also asks the secret whether to upgrade), so
    /// this layer never parses one. A password holding a NUL byte never matches (no
    /// password can be stored with one, SPEC §2), though it costs the same work: HMAC pads
    /// its key with zero bytes, so PBKDF2 alone would take `pw\0` for `pw`.
    func denial(of password: Password, against entry: Entry?) throws -> LoginDenial? {
        let denial = try match(password, against: entry)
        let holdsNUL = password.bytes.withUnsafeBytes { $0.contains(0) }
        return denial ?? (holdsNUL ? .wrongPassword : nil)
    }

    /// ``denial(of:against:)`` before the NUL rule.
    private func match(_ password: Password, against entry: Entry?) throws -> LoginDenial? {
        let forms = password.typedBytes == nil ? 1 : 2
        let budget = policy.rounds * forms
        guard let entry else {
            try dummyWork(rounds: budget, password)
            return .unknownUser
        }
        switch entry.secret {
        case .pbkdf2(let hash):
            // passlib writes this format too, from the bytes as given: NFD is tried as for peers.
            let start = ContinuousClock.now
            var granted = false
            for form in password.peerForms where try hash.verify(bytes: form) { granted = true }
            if hash.algorithm == policy.algorithm {
                let spent = hash.rounds * forms
                if spent < budget { try dummyWork(rounds: budget - spent, password) }
            } else {
                try measuredPadding(spent: ContinuousClock.now - start, budget: budget, password)
            }
            return granted ? nil : .wrongPassword
        case .peer(let peer):
            let start = ContinuousClock.now
            var granted = false
            for form in password.peerForms {  // every form, whatever the first gave
                if try peer.hash.verify(form) { granted = true }
            }
            if let pbkdf2 = peer.hash as? PeerPBKDF2Hash, pbkdf2.prf == policy.algorithm.prf {
                let spent = pbkdf2.rounds * forms
                if spent < budget { try dummyWork(rounds: budget - spent, password) }
            } else {
                try measuredPadding(spent: ContinuousClock.now - start, budget: budget, password)
            }
            return granted ? nil : .wrongPassword
        case .plaintext:
            // Compare fixed-size digests in constant time, so neither length nor
            // content leaks through an early exit.
            let stored = OpenSSL.sha256Digest(of: Unicode.nfcBytes(ofField: entry.secretBytes))
            let given = password.bytes.withUnsafeBytes { OpenSSL.sha256($0) }
            let granted = stored.withUnsafeBytes { s in given.withUnsafeBytes { OpenSSL.constantTimeEqual(s, $0) } }
            try dummyWork(rounds: budget, password)
            return granted ? nil : .wrongPassword
        case .unsupportedHash:
            try dummyWork(rounds: budget, password)
            return .unsupported
        case .malformed:
            try dummyWork(rounds: budget, password)
            return .malformed
        case .locked:
            // Costs what an unknown user costs: the hash behind the `!` is not looked at.
            try dummyWork(rounds: budget, password)
            return .locked
        }
    }

    /// Tops a verification that took `spent` up to the time of `budget` policy rounds:
    /// an eighth of the budget measures this moment's rate, then the rounds still missing
    /// at that rate (none when the verification alone took longer).
    private func measuredPadding(spent: Duration, budget: Int, _ password: Password) throws {
        let probe = max(1, budget / 8)
        let start = ContinuousClock.now
        try dummyWork(rounds: probe, password)
        let probeSeconds = Self.seconds(ContinuousClock.now - start)
        let secondsPerRound = max(probeSeconds, 1e-9) / Double(probe)
        let missing = Double(budget) - Self.seconds(spent) / secondsPerRound - Double(probe)
        if missing >= 1 { try dummyWork(rounds: Int(min(missing, Double(budget))), password) }
    }

    private static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
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
