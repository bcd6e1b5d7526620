import Synchronization

/// Decides a login against one entry in time that does not tell the cases apart
/// (SPEC §3.1): every call runs the file version's ``LoginPlan``, which costs what the
/// file's costliest allowed entry costs (at least the policy's own hash), per password
/// form tried (one; two when the typed bytes differ from their NFC form, see
/// ``Password/peerForms``, whatever the entry). The entry's own verification takes the
/// place in the plan of its cost class; an unknown name, a plaintext, malformed,
/// unsupported or locked entry takes the place of a fresh policy hash (a dummy of it: PBKDF2 at
/// the policy's rounds and PRF, or argon2id at its parameters). Padding is by cost, not
/// by rounds (Django's `harden_runtime`): PBKDF2 of the host's PRF by the rounds
/// missing, anything else by measurement (see ``LoginPlan``).
struct Verifier {
    let policy: HashPolicy
    /// The plan of the file version the entry was read from.
    let plan: LoginPlan
    /// Where the steps of each login are recorded, for tests; nil otherwise.
    let meter: WorkMeter?

    /// A verifier for entries of a file whose entries `census` sums up.
    init(policy: HashPolicy, census: CostCensus, meter: WorkMeter? = nil) {
        self.policy = policy
        plan = LoginPlan(census: census, policy: policy)
        self.meter = meter
    }

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
        guard let entry else {
            _ = try run(policyDummy(), password)
            return .unknownUser
        }
        switch entry.secret {
        case .pbkdf2(let hash):
            // passlib writes this format too, from the bytes as given: NFD is tried as for peers.
            return try run(.pbkdf2(hash), password) ? nil : .wrongPassword
        case .peer(let peer):
            return try run(.peer(peer.hash), password) ? nil : .wrongPassword
        case .plaintext:
            // Compare fixed-size digests in constant time, so neither length nor
            // content leaks through an early exit.
            // The NFC copy of the stored password is zeroed, as every password copy is.
            var storedForm = Unicode.nfcBytes(ofField: entry.secretBytes)
            defer { storedForm.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
            let stored = storedForm.withUnsafeBytes { OpenSSL.sha256($0) }
            let given = password.bytes.withUnsafeBytes { OpenSSL.sha256($0) }
            let granted = stored.withUnsafeBytes { s in given.withUnsafeBytes { OpenSSL.constantTimeEqual(s, $0) } }
            _ = try run(policyDummy(), password)
            return granted ? nil : .wrongPassword
        case .unsupportedHash:
            _ = try run(policyDummy(), password)
            return .unsupported
        case .malformed:
            _ = try run(policyDummy(), password)
            return .malformed
        case .locked:
            // Costs what an unknown user costs: the hash behind the `!` is not looked at.
            _ = try run(policyDummy(), password)
            return .locked
        }
    }

    /// What a login's own verification checks: a hash of the file, or the policy's dummy.
    private enum Subject {
        /// credfile's own format.
        case pbkdf2(PasswordHash)
        /// Another program's hash (or the policy's argon2id dummy).
        case peer(any KnownHash)

        var cost: VerificationCost {
            switch self {
            case .pbkdf2(let hash): .pbkdf2(hash.algorithm.prf, rounds: hash.rounds)
            case .peer(let hash): VerificationCost(hash)
            }
        }

        /// Tries every form (all of them, whatever the first gave).
        func verify(_ forms: [SecretBytes]) throws -> Bool {
            var granted = false
            for form in forms {
                let matched =
                    switch self {
                    case .pbkdf2(let hash): try hash.verify(bytes: form)
                    case .peer(let hash): try hash.verify(form)
                    }
                if matched { granted = true }
            }
            return granted
        }
    }

    /// A fresh policy hash that matches no password: what an entry that cannot be
    /// verified is checked as. (It cannot throw: the policy's rounds are in range, the
    /// salt is 16 bytes and the checksum the digest's size.)
    private func policyDummy() throws -> Subject {
        guard let digest = policy.algorithm.pbkdf2Digest else { return .peer(policy.argon2DummyHash) }
        return .pbkdf2(
            try PasswordHash(
                algorithm: digest, rounds: policy.rounds, salt: HashPolicy.dummySalt,
                checksum: [UInt8](repeating: 0, count: digest.digestCount)))
    }

    /// Runs the plan with `subject`'s verification in its place; whether it matched.
    private func run(_ subject: Subject, _ password: Password) throws -> Bool {
        let forms = password.peerForms
        let cost = subject.cost
        var granted = false
        var verified = false
        // Every step is recorded here, meter or not, and handed to the meter at the end:
        // the code a test watches is the code every login runs. (`meter?.record(.host(
        // rounds: try dummyWork(…)))` did not evaluate the work when there was no meter.)
        var steps: [WorkMeter.Step] = []
        defer { meter?.record(steps) }
        for (index, component) in plan.stacked.enumerated() {
            if !verified, component.holds(cost) {
                granted = try subject.verify(forms)
                verified = true
                var rounds = 0
                if case .pbkdf2(let prf, let total) = component, case .pbkdf2(_, let spent) = cost {
                    rounds = spent * forms.count + (try dummyWork(prf, rounds: (total - spent) * forms.count, password))
                }
                steps.append(.stacked(index: index, own: true, rounds: rounds))
            } else {
                var rounds = 0
                switch component {
                case .pbkdf2(let prf, let total): rounds = try dummyWork(prf, rounds: total * forms.count, password)
                case .scheme(_, let dummy): for form in forms { _ = try dummy.verify(form) }
                }
                steps.append(.stacked(index: index, own: false, rounds: rounds))
            }
        }
        let host = plan.host
        let budget = host.rounds * forms.count
        if verified {
            let rounds = try dummyWork(host.prf, rounds: budget, password)
            steps.append(.host(rounds: rounds, measured: false))
        } else if case .pbkdf2(let prf, let spent) = cost, prf == host.prf {
            granted = try subject.verify(forms)
            let padding = try dummyWork(host.prf, rounds: budget - spent * forms.count, password)
            steps.append(.host(rounds: spent * forms.count + padding, measured: false))
        } else {
            let start = Syscall.threadCPUSeconds()
            granted = try subject.verify(forms)
            try measuredPadding(spent: Syscall.threadCPUSeconds() - start, prf: host.prf, budget: budget, password)
            steps.append(.host(rounds: budget, measured: true))
        }
        return granted
    }

    /// Tops a verification that took `spent` seconds of this thread's CPU up to the cost
    /// of `budget` rounds of `prf`: an eighth of the budget measures the rate, then the
    /// rounds still missing at that rate (none when the verification alone cost more).
    /// CPU time, not the wall clock: the wall clock counts whatever else ran meanwhile,
    /// CPU time the work (every verification runs on the calling thread: libargon2 is
    /// asked for one thread, see ``Argon2Library/hash(_:version:password:salt:memoryKiB:iterations:lanes:count:)``).
    private func measuredPadding(spent: Double, prf: PRF, budget: Int, _ password: Password) throws {
        guard budget > 0 else { return }
        let probe = max(1, budget / 8)
        let start = Syscall.threadCPUSeconds()
        try dummyWork(prf, rounds: probe, password)
        let secondsPerRound = max(Syscall.threadCPUSeconds() - start, 1e-9) / Double(probe)
        let missing = Double(budget) - spent / secondsPerRound - Double(probe)
        if missing >= 1 { try dummyWork(prf, rounds: Int(min(missing, Double(budget))), password) }
    }

    /// `rounds` rounds of one PBKDF2 block of `prf`, result thrown away (nothing for 0
    /// or fewer); the rounds run.
    @discardableResult
    private func dummyWork(_ prf: PRF, rounds: Int, _ password: Password) throws -> Int {
        guard rounds > 0 else { return 0 }
        _ = try PBKDF2.deriveKey(
            prf: prf, password: password.bytes, salt: HashPolicy.dummySalt, rounds: rounds, count: prf.digestCount)
        return rounds
    }
}

/// The steps of the logins a ``Verifier`` ran, for tests: every login of one file
/// version must run the same steps, whatever the name (SPEC §3.1).
final class WorkMeter: Sendable {
    /// One step of a login's plan.
    enum Step: Equatable, Sendable {
        /// Stacked component `index`: the user's own verification (`own`) or a dummy;
        /// `rounds` of PBKDF2 in all (own and padding), 0 for another scheme.
        case stacked(index: Int, own: Bool, rounds: Int)
        /// The host: `rounds` in all; `measured` when the own verification was absorbed
        /// by measurement (then `rounds` is the budget the padding aimed at).
        case host(rounds: Int, measured: Bool)
    }

    private let recorded = Mutex<[Step]>([])

    /// The steps so far.
    var steps: [Step] { recorded.withLock { $0 } }

    /// Forgets the steps so far.
    func reset() { recorded.withLock { $0 = [] } }

    /// Adds the steps of one login.
    fileprivate func record(_ steps: [Step]) { recorded.withLock { $0 += steps } }
}
