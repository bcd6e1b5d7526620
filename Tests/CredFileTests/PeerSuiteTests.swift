import CredFileTestSupport
import Dispatch
import Foundation
import Testing

@testable import CredFile

/// The peers' own test suites as the measure of SPEC §3.2 (issue #26): a local run, not
/// part of CI. The (password, hash) pairs come from passlib, Django, Werkzeug,
/// libxcrypt, Dovecot, OpenLDAP, mosquitto and the argon2 reference; they are third-party
/// data that this repository does not hold, so the suite runs only when
/// `CREDFILE_PEERSUITES` names the `vectors.json` file (`bash Scripts/peersuites.sh PATH`),
/// and shows as skipped otherwise.
///
/// Every record becomes one line `u<id>,<hash>` of one credential file, and every login
/// goes through the front door (``CredentialStore/verify(username:password:upgradeOnSuccess:)``)
/// under the default cost limits, with a policy of one round so the dummy work stays small.
/// For each family it counts: right passwords granted, wrong ones (`x` + the password)
/// denied, the hash string typed as the password denied, and malformed hashes never
/// granted whatever is typed. It prints the table and fails on any wrong grant, and on
/// any right password of a family SPEC §3.2 claims that is denied, except the two
/// passwords that hold a NUL byte (no credfile password can: SPEC §2) and the two
/// argon2 vectors of 1 GiB, which `max-memory`'s default of 256 MiB refuses as too costly
/// (with `CREDFILE_PEERSUITES_FULL=1` they run under `max-memory` 2 GiB and must pass).
@Suite("Peer test suites (local: CREDFILE_PEERSUITES=vectors.json)")
struct PeerSuiteTests {
    static let path = ProcessInfo.processInfo.environment["CREDFILE_PEERSUITES"]
    static let full = ProcessInfo.processInfo.environment["CREDFILE_PEERSUITES_FULL"] == "1"

    /// One record of vectors.json.
    struct Record: Sendable {
        let id: String
        let kind: String
        let family: String
        let claimed: Bool
        let hash: String
        let password: [UInt8]?
        let wrong: [UInt8]?
        let tries: [[UInt8]]
        let passwordClass: String
        let heavy: Bool
        /// Whether the stored string has hash syntax (SPEC §2): one that has not is a
        /// legacy plaintext password to credfile, which its own text logs in to.
        let hashSyntax: Bool
        /// For a malformed record: why a peer verifies it anyway (say, OpenLDAP's rule where
        /// passlib's is stricter); credfile follows the peer that verifies.
        let disputed: String?

        init(_ object: [String: Any]) {
            func bytes(_ key: String) -> [UInt8]? { (object[key] as? String).flatMap(VectorFile.hexBytes) }
            id = object["id"] as? String ?? "?"
            kind = object["kind"] as? String ?? "?"
            family = object["family"] as? String ?? "?"
            claimed = object["claimed"] as? Bool ?? false
            hash = object["hash"] as? String ?? ""
            password = bytes("password_hex")
            wrong = bytes("wrong_hex")
            tries = (object["tries_hex"] as? [String] ?? []).compactMap(VectorFile.hexBytes)
            passwordClass = object["password_class"] as? String ?? ""
            heavy = object["heavy"] as? Bool ?? false
            hashSyntax = object["hash_syntax"] as? Bool ?? true
            disputed = object["disputed"] as? String
        }
    }

    /// The counts of one family.
    struct Counts: Sendable {
        var correct = 0, granted = 0, wrong = 0, wrongDenied = 0, asHash = 0, asHashDenied = 0
        var malformed = 0, malformedDenied = 0
        /// Malformed records that a peer's own rule verifies (``Record/disputed``), and
        /// how many of them credfile granted with one of the passwords tried.
        var disputed = 0, disputedGranted = 0
        /// Right passwords denied that may be (NUL in the password, a heavy vector not run).
        var excused = 0
        /// Right passwords of a claimed family denied for no excuse: ids, for the message.
        var missed: [String] = []

        mutating func add(_ other: Counts) {
            correct += other.correct
            granted += other.granted
            wrong += other.wrong
            wrongDenied += other.wrongDenied
            asHash += other.asHash
            asHashDenied += other.asHashDenied
            malformed += other.malformed
            malformedDenied += other.malformedDenied
            disputed += other.disputed
            disputedGranted += other.disputedGranted
            excused += other.excused
            missed += other.missed
        }
    }

    static func load(_ path: String) throws -> [Record] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let list = try #require(root["vectors"] as? [[String: Any]])
        return list.map(Record.init)
    }

    @Test(.enabled(if: path != nil, "set CREDFILE_PEERSUITES to the peer suites' vectors.json (a local run, not CI)"))
    func thePeerSuitesVerify() throws {
        let records = try Self.load(try #require(Self.path))
        try #require(records.count > 1000)
        // Hashes hold no line break (each is one line of its peer's file).
        #expect(!records.contains { $0.hash.contains("\n") || $0.hash.contains("\r") })
        let directory = try TemporaryDirectory.make(prefix: "peersuites")
        defer { directory.remove() }
        let file = directory.file("peers.cred")
        try writeText(file, records.map { "u\($0.id),\($0.hash)\n" }.joined())
        var policy = try HashPolicy(rounds: 1, minimumRounds: 1)
        if Self.full { try policy.costLimits.setMaximumMemory(2 << 30) }
        let store = CredentialStore(path: file, policy: policy, caching: true)
        let runnable = Self.full ? records : records.filter { !$0.heavy }
        let results = Self.inParallel(runnable) { Self.counts(of: $0, in: store) }
        var byFamily: [String: Counts] = [:]
        var claimed: [String: Bool] = [:]
        for (record, counts) in zip(runnable, results) {
            byFamily[record.family, default: Counts()].add(counts)
            claimed[record.family] = record.claimed
        }
        let heavy = records.filter(\.heavy)
        if !Self.full {
            for record in heavy { byFamily[record.family, default: Counts()].excused += 1 }
        }
        Self.printTable(byFamily, claimed: claimed, heavyLeftOut: Self.full ? 0 : heavy.count)
        var total = Counts()
        for (family, counts) in byFamily {
            total.add(counts)
            #expect(counts.wrongDenied == counts.wrong, "\(family): a wrong password granted")
            #expect(counts.asHashDenied == counts.asHash, "\(family): a hash string granted as its own password")
            #expect(counts.malformedDenied == counts.malformed, "\(family): a malformed hash granted")
            let missed = counts.missed.count
            #expect(missed == 0, "\(family): \(missed) right passwords denied, such as \(counts.missed.prefix(4))")
        }
        #expect(total.correct > 5000)
    }

    /// Whether `store` grants `password` to the record's user.
    static func granted(_ record: Record, _ password: [UInt8], in store: CredentialStore) -> Bool {
        let answer = try? store.verify(
            username: "u\(record.id)", password: Password(utf8: password), upgradeOnSuccess: false)
        return answer?.granted ?? false
    }

    /// The logins of one record and what they gave.
    static func counts(of record: Record, in store: CredentialStore) -> Counts {
        var c = Counts()
        if record.hashSyntax {
            c.asHash = 1
            c.asHashDenied = granted(record, Array(record.hash.utf8), in: store) ? 0 : 1
        }
        if record.kind == "malformed" {
            let grantedOne = record.tries.contains { granted(record, $0, in: store) }
            if record.disputed != nil {
                c.disputed = 1
                c.disputedGranted = grantedOne ? 1 : 0
            } else {
                c.malformed = 1
                c.malformedDenied = grantedOne ? 0 : 1
            }
            return c
        }
        // correct, or unclaimed (a real pair of a family SPEC §3.2 does not name)
        guard let password = record.password else { return c }
        c.correct = 1
        if granted(record, password, in: store) {
            c.granted = 1
        } else if password.contains(0) {
            c.excused = 1
        } else if record.claimed && record.kind == "correct" {
            c.missed = [record.id]
        }
        if let wrong = record.wrong {
            c.wrong = 1
            c.wrongDenied = granted(record, wrong, in: store) ? 0 : 1
        }
        return c
    }

    /// `body` over `items` on every core, results in order.
    static func inParallel<T: Sendable, R: Sendable>(_ items: [T], _ body: @Sendable (T) -> R) -> [R] {
        let results = UnsafeMutableBufferPointer<R?>.allocate(capacity: items.count)
        results.initialize(repeating: nil)
        defer { results.deallocate() }
        nonisolated(unsafe) let out = results
        DispatchQueue.concurrentPerform(iterations: items.count) { out[$0] = body(items[$0]) }
        return results.map { $0! }
    }

    static func printTable(_ byFamily: [String: Counts], claimed: [String: Bool], heavyLeftOut: Int) {
        func cell(_ a: Int, _ b: Int) -> String { b == 0 ? "-" : "\(a)/\(b)" }
        var lines = [
            "| family | correct granted | wrong denied | hash as password denied | malformed never granted | disputed granted |"
        ]
        lines.append("| --- | --- | --- | --- | --- | --- |")
        var total = Counts()
        for name in byFamily.keys.sorted(by: { (claimed[$0] == true ? 0 : 1, $0) < (claimed[$1] == true ? 0 : 1, $1) })
        {
            let c = byFamily[name]!
            total.add(c)
            let excused = c.excused > 0 ? " (\(c.excused) excused)" : ""
            lines.append(
                "| \(name)\(claimed[name] == true ? "" : " *") | \(cell(c.granted, c.correct))\(excused) | "
                    + "\(cell(c.wrongDenied, c.wrong)) | \(cell(c.asHashDenied, c.asHash)) | \(cell(c.malformedDenied, c.malformed)) | "
                    + "\(cell(c.disputedGranted, c.disputed)) |")
        }
        lines.append(
            "| all | \(cell(total.granted, total.correct)) (\(total.excused) excused) | \(cell(total.wrongDenied, total.wrong)) | "
                + "\(cell(total.asHashDenied, total.asHash)) | \(cell(total.malformedDenied, total.malformed)) | "
                + "\(cell(total.disputedGranted, total.disputed)) |")
        lines.append(
            "* not claimed by SPEC §3.2; excused: a password with a NUL byte, or (\(heavyLeftOut) left out) a 1 GiB argon2 "
                + "vector; disputed: malformed to one peer, verified by another's rule")
        print(lines.joined(separator: "\n"))
    }
}
