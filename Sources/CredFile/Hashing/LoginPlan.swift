/// SPEC §3.1's timing rule, entries costlier than the policy included: every login of a
/// file costs what its costliest allowed entry costs, whatever the name, the entry's
/// scheme, cost or state, or the outcome, so the time never tells which names exist.
///
/// ## Why not the keyed-hash choice
///
/// The SPEC's other mechanism checks an unknown name against a real entry chosen by a
/// keyed hash of the name. With one costly entry among N, an unknown name is slow with
/// probability 1/N, the costly user always: an attacker who probes one name many times
/// (noise averages out, the mapping does not change) and sees "slow" has a likelihood
/// ratio of N for that name existing — the rarer the costly entry, the louder it speaks.
/// A one-shot process would also need a key that lasts across processes, and every
/// change of the file remaps the names. A plan that costs the same for every name has
/// none of this.
///
/// ## The plan
///
/// The entries of a file version are summed up by cost class (``CostCensus``): PBKDF2 per
/// PRF (every PBKDF2 of one PRF costs its rounds × blocks of that PRF, whatever its
/// spelling), and every other scheme per (scheme, estimated work). The policy's own hash
/// is one class more: an unknown name (or a plaintext, malformed, unsupported or locked
/// entry) is checked as a user whose entry is a fresh policy hash. The plan is a list of
/// **stacked** classes and one **host** PBKDF2 (PRF, rounds); every login runs, in order:
///
/// * for each stacked class, a verification of that class: the user's own when the
///   user's entry is of that class, else a dummy of it (a verification against one of
///   the file's hashes of that class, or a PBKDF2 of that PRF; results thrown away);
/// * then the host: when the user's entry is PBKDF2 of the host's PRF, its verification
///   and the missing rounds (exact: padding by cost); when the user's entry is of no
///   stacked class, its verification **absorbed** by measurement (its time and a probe
///   of the host PRF's rate decide the rounds that follow); otherwise the host's
///   rounds as a dummy.
///
/// A stacked class or the host costs the same for every name by construction (the same
/// code on the same parameters); only absorbed classes depend on a measurement, and an
/// absorbed class must fit in the host with a margin over its estimated work
/// (``KnownHash/estimatedWork`` is ±30 % on another machine). The plan is the cheapest
/// such split by estimated work: usually every class absorbed into the costliest PBKDF2,
/// so a login costs the costliest entry (or the policy) exactly; a scheme too costly to
/// absorb cheaply (bcrypt 12 under a PBKDF2 policy, the argon2id policy itself) is
/// stacked instead. A login never costs more than about ``schemeMargin`` times the
/// costliest class (all absorbed into a host raised to it), and the cost limits of §3.1
/// bound that class.
///
/// One-shot processes (`verify`, `pam`, `checkpassword`) build the census in the same
/// single pass over the file that finds the name, which therefore always reads the
/// whole file (a name on the first line is not found sooner than an unknown one);
/// long-running ones (the caching store behind `helper` and `serve`) build it once per
/// file version.
struct LoginPlan: Sendable {
    /// One step of every login.
    enum Component: Sendable {
        /// PBKDF2 of this PRF for `rounds` rounds of one block.
        case pbkdf2(PRF, rounds: Int)
        /// A verification of this class; `dummy` is a hash of it, run when the user's entry is not.
        case scheme(SchemeClass, dummy: any KnownHash)

        /// Whether a verification of `cost` is of this component's class.
        func holds(_ cost: VerificationCost) -> Bool {
            switch (self, cost) {
            case (.pbkdf2(let prf, _), .pbkdf2(let other, _)): prf == other
            case (.scheme(let key, _), .scheme(let other)): key == other
            default: false
            }
        }
    }

    /// Absorbing a PBKDF2 class of another PRF needs this margin over its estimated work
    /// (the PRFs' relative speed is known to ~10 %: ``PRF/workPerRound``).
    static let pbkdf2Margin = 1.25
    /// Absorbing another scheme needs this margin over its estimated work (seen 30 % off:
    /// bcrypt 12 measured 2.4 M SHA-256 rounds here against an estimate of 1.84 M).
    static let schemeMargin = 1.6
    /// At most this many classes are stacked.
    static let maximumStacked = 4

    /// The classes every login runs before the host, in this order.
    let stacked: [Component]
    /// The PBKDF2 every login ends with; rounds 0 when nothing is absorbed.
    let host: (prf: PRF, rounds: Int)
    /// What the plan costs, by the estimates, in SHA-256 rounds.
    let estimatedWork: Double

    /// The cheapest plan for a file whose entries `census` sums up, under `policy`.
    init(census: CostCensus, policy: HashPolicy) {
        var census = census
        switch policy.dummyCost {
        case .pbkdf2(let prf, let rounds): census.addPBKDF2(prf, rounds: rounds)
        case .scheme: census.count(policy.argon2DummyHash)
        }
        /// A class the plan must place: stacked, host, or absorbed with `margin`.
        struct Candidate {
            let work: Double
            let margin: Double
            let component: Component
            let order: String  // a tie-break, so every process picks the same plan
        }
        let pbkdf2 = census.pbkdf2Rounds.map { prf, rounds in
            Candidate(
                work: Double(rounds) * prf.workPerRound, margin: Self.pbkdf2Margin,
                component: .pbkdf2(prf, rounds: rounds), order: "pbkdf2 \(prf)")
        }
        let schemes = census.schemes.map { key, dummy in
            Candidate(work: key.work, margin: Self.schemeMargin, component: .scheme(key, dummy: dummy), order: key.name)
        }
        let byWork = { (a: Candidate, b: Candidate) in a.work != b.work ? a.work > b.work : a.order < b.order }
        let hosts: [(prf: PRF, rounds: Int)] =
            census.pbkdf2Rounds.isEmpty
            ? [(.sha256, 0)]
            : pbkdf2.sorted(by: byWork).compactMap {
                if case .pbkdf2(let prf, let rounds) = $0.component { (prf, rounds) } else { nil }
            }
        var best: (stacked: [Component], host: (prf: PRF, rounds: Int), work: Double)?
        for host in hosts {
            let others = (pbkdf2 + schemes).filter {
                if case .pbkdf2(let prf, _) = $0.component { prf != host.prf } else { true }
            }.sorted(by: byWork)
            for count in 0...min(others.count, Self.maximumStacked) {
                // The host must hold every class left: the dropped ones and others[count...].
                var needed = census.droppedWork * Self.schemeMargin
                for other in others[count...] { needed = max(needed, other.work * other.margin) }
                let rounds = max(host.rounds, Int((needed / host.prf.workPerRound).rounded(.up)))
                let work = others[..<count].reduce(0) { $0 + $1.work } + Double(rounds) * host.prf.workPerRound
                if best == nil || work < best!.work {  // best is set: tested first
                    best = (others[..<count].map(\.component), (host.prf, rounds), work)
                }
            }
        }
        // `hosts` is never empty, and each host tries at least the plan with nothing stacked.
        let chosen = best!
        stacked = chosen.stacked
        host = chosen.host
        estimatedWork = chosen.work
    }
}

/// What the time of one verification depends on.
enum VerificationCost: Equatable, Sendable {
    /// PBKDF2 of this PRF for `rounds` rounds of one block (a 64-byte SHA-256 key is two
    /// blocks: twice the rounds).
    case pbkdf2(PRF, rounds: Int)
    /// Another scheme, by its class.
    case scheme(SchemeClass)

    /// The cost of verifying `hash`.
    init(_ hash: any KnownHash) {
        if let own = hash as? PasswordHash {
            self = .pbkdf2(own.algorithm.prf, rounds: own.rounds)
        } else if let pbkdf2 = hash as? PeerPBKDF2Hash {
            let blocks = (pbkdf2.checksum.count + pbkdf2.prf.digestCount - 1) / pbkdf2.prf.digestCount
            self = .pbkdf2(pbkdf2.prf, rounds: pbkdf2.rounds * max(blocks, 1))
        } else {
            self = .scheme(SchemeClass(name: hash.scheme, work: hash.estimatedWork))
        }
    }
}

/// Hashes of one scheme whose verification costs the same: same scheme name, same
/// estimated work (the work is a function of the cost parameters alone).
struct SchemeClass: Hashable, Sendable {
    /// The scheme as `list` names it.
    let name: String
    /// ``KnownHash/estimatedWork``.
    let work: Double
}

/// The cost classes of a file version's allowed entries (``LoginPlan``): the most PBKDF2
/// rounds per PRF, and the costliest classes of other schemes with one hash of each to
/// run as its dummy. Only hashes within the policy's cost limits count (SPEC §3.1): one
/// over a limit is malformed, "too costly", refused before any work like an unknown
/// name, so it must not raise every login's cost. Bounded whatever the file: at most
/// ``keptSchemes`` scheme classes are kept, and the work of the costliest one dropped is
/// remembered (the plan absorbs it).
struct CostCensus: Sendable {
    /// The scheme classes kept (the costliest ones).
    static let keptSchemes = 8

    /// The most rounds (× blocks) of each PRF among the entries.
    private(set) var pbkdf2Rounds: [PRF: Int] = [:]
    /// The costliest scheme classes, each with the first hash seen of it.
    private(set) var schemes: [SchemeClass: any KnownHash] = [:]
    /// The work of the costliest scheme class not kept (0 when none was dropped); every
    /// class not in ``schemes`` costs at most this.
    private(set) var droppedWork: Double = 0

    /// The policy whose cost limits judge the entries (the plan is made under it too).
    let policy: HashPolicy
    /// Per PRF, the fewest rounds (× blocks) of credfile's own format seen over the cost
    /// limits: the verdict grows with the rounds, so a line with at least as many is over
    /// them too, and is not validated again.
    var tooCostlyRounds: [PRF: Int] = [:]

    /// An empty census of entries judged by `policy`'s cost limits.
    init(within policy: HashPolicy) {
        self.policy = policy
    }

    /// Counts a stored secret: a hash that can verify within the cost limits; nothing else
    /// (plaintext, malformed, too costly, unsupported and locked entries are checked as
    /// unknown names).
    mutating func add(_ secret: StoredSecret) {
        switch secret {
        case .pbkdf2(let hash): add(hash)
        case .peer(let peer): add(peer.hash)
        case .plaintext, .unsupportedHash, .malformed, .locked: break
        }
    }

    /// Counts a hash (another program's, or credfile's own) when it is within the cost limits.
    mutating func add(_ hash: any KnownHash) {
        guard policy.costVerdict(of: hash) == .within else { return }
        count(hash)
    }

    /// Counts a hash without judging it (the policy's own argon2id dummy).
    mutating func count(_ hash: any KnownHash) {
        switch VerificationCost(hash) {
        case .pbkdf2(let prf, let rounds): addPBKDF2(prf, rounds: rounds)
        case .scheme(let key):
            guard schemes[key] == nil, key.work > droppedWork else { return }
            schemes[key] = hash
            if schemes.count > Self.keptSchemes, let cheapest = schemes.keys.min(by: { $0.work < $1.work }) {
                schemes[cheapest] = nil
                droppedWork = max(droppedWork, cheapest.work)
            }
        }
    }

    /// Counts a PBKDF2 of `rounds` rounds (× blocks) of `prf`.
    mutating func addPBKDF2(_ prf: PRF, rounds: Int) {
        pbkdf2Rounds[prf] = max(pbkdf2Rounds[prf] ?? 0, rounds)
    }
}

extension HashPolicy {
    /// The cost of the policy's own hash: what an unknown name is checked as.
    var dummyCost: VerificationCost {
        if let digest = algorithm.pbkdf2Digest { return .pbkdf2(digest.prf, rounds: rounds) }
        return VerificationCost(argon2DummyHash)
    }
}
