import CredFile

#if canImport(Glibc)
import Glibc
#endif

extension FuzzChecks {
    /// The differential store check: decodes `input` into at most 16 operations, runs
    /// them against a real ``CredentialStore`` on `directory/usuarios.txt` (started
    /// missing; `HashPolicy(rounds: 1)`) and against ``StoreModel``, and checks that
    /// every answer agrees and that after each step the file reads as the model says.
    public static func store(_ input: [UInt8], directory: String) throws(FuzzFailure) {
        let path = directory + "/usuarios.txt"
        unlink(path)
        defer { unlink(path) }
        guard let policy = try? HashPolicy(rounds: 1) else {
            throw FuzzFailure(description: "HashPolicy(rounds: 1) refused")
        }
        var store = CredentialStore(path: path, policy: policy)
        // The model is SPEC §2's; SPEC §8's rules for new passwords are tested on their own
        // (PasswordPolicyTests), so the pools' short passwords keep exercising §2 here.
        store.passwordPolicy = .permissive
        var model = StoreModel()
        for (step, op) in StoreOperation.decode(input).enumerated() {
            let expected = model.apply(op)
            if expected == .skipped { continue }
            let actual = StoreHarness.run(op, on: store, path: path)
            try expect(
                actual == expected,
                "step \(step + 1) (\(op.label)): the store answered \(actual), the model \(expected)")
            try StoreHarness.compare(path: path, with: model, step: step + 1, op.label)
        }
    }
}

/// One step of a FuzzStore input.
enum StoreOperation {
    case register(String, String)
    case authenticate(String, String, upgradeOnSuccess: Bool)
    case changePassword(String, String)
    case remove(String)
    case upgrade(dryRun: Bool)
    /// Bytes (never an LF) appended to the file directly, then an LF unless `newline` is false.
    case append([UInt8], newline: Bool)

    var label: String {
        switch self {
        case .register: "register"
        case .authenticate(_, _, let upgrade): upgrade ? "authenticate+upgrade" : "authenticate"
        case .changePassword: "changePassword"
        case .remove: "remove"
        case .upgrade(let dryRun): dryRun ? "upgrade --dry-run" : "upgrade"
        case .append(_, let newline): newline ? "append line" : "append bytes without LF"
        }
    }

    /// Names and passwords that collide, differ by normalization, or break a rule.
    static let names = [
        "valencia", "xvalencia", "ncia", "usuario2", "admin", "bob", "\u{C9}mile", "E\u{301}mile",
        "#admin", " bob", "", "a,b", "\u{FEFF}bob", "bo\u{1}b",
    ]
    static let passwords = [
        "contrasena123", "contrasena12", "password456", "adminpass", "", "pw", "$2y$10$abc", "{SSHA}abc",
        "p\u{E4}ss", "pa\u{308}ss", "a\nb", "with,comma", "x\r",
    ]

    /// The input format, one operation after another until the input ends (at most 16):
    /// an op byte (low 3 bits: register, authenticate, changePassword, remove, upgrade,
    /// raw bytes, `name,password` line, authenticate; bit 3: upgrade on success / dry
    /// run / no LF), then its arguments. A name or password byte below 0xE0 picks from the
    /// pools above; 0xE0 + n takes the next n bytes (decoded as UTF-8, lossily).
    static func decode(_ input: [UInt8]) -> [StoreOperation] {
        var bytes = input.makeIterator()
        func take(_ count: Int) -> [UInt8] { (0..<count).compactMap { _ in bytes.next() } }
        func pick(_ pool: [String]) -> String {
            let b = Int(bytes.next() ?? 0)
            return b < 0xE0 ? pool[b % pool.count] : String(decoding: take(b - 0xE0), as: UTF8.self)
        }
        var ops: [StoreOperation] = []
        while ops.count < 16, let op = bytes.next() {
            let flag = op & 8 != 0
            switch op & 7 {
            case 0: ops.append(.register(pick(names), pick(passwords)))
            case 1: ops.append(.authenticate(pick(names), pick(passwords), upgradeOnSuccess: flag))
            case 2: ops.append(.changePassword(pick(names), pick(passwords)))
            case 3: ops.append(.remove(pick(names)))
            case 4: ops.append(.upgrade(dryRun: flag))
            case 5: ops.append(.append(take(Int(bytes.next() ?? 0) & 0x7F).filter { $0 != 0x0A }, newline: !flag))
            case 6:
                let line = Array((pick(names) + "," + pick(passwords)).utf8).filter { $0 != 0x0A }
                ops.append(.append(line, newline: !flag))
            default: ops.append(.authenticate(pick(names), pick(passwords), upgradeOnSuccess: false))
            }
        }
        return ops
    }
}

/// What a step answered.
enum StoreOutcome: Equatable, CustomStringConvertible {
    case done
    case granted(Bool, upgraded: Bool)
    case removed(Int)
    case upgraded(UpgradeCounts)
    case failed(CredFileError.Code)
    /// The model declined to run the step (it would run a PBKDF2 with many rounds).
    case skipped
    /// The store threw something other than a `CredFileError`.
    case unexpected(String)

    struct UpgradeCounts: Equatable {
        var upgraded = 0, alreadyHashed = 0, weak = 0, unsupported = 0, skipped = 0
        var malformedLines: [Int] = []
    }

    var description: String {
        switch self {
        case .done: "done"
        case .granted(let granted, let upgraded): granted ? (upgraded ? "granted+upgraded" : "granted") : "denied"
        case .removed(let n): "removed \(n)"
        case .upgraded(let c): "upgrade \(c)"
        case .failed(let code): "error \(code)"
        case .skipped: "skipped"
        case .unexpected(let error): "unexpected error \(error)"
        }
    }
}

enum StoreHarness {
    /// Made on first use and removed when the fuzzer exits.
    /// On `/dev/shm` when it exists, so `fsync` is cheap.
    static let processDirectory: TemporaryDirectory = {
        do {
            let directory = try TemporaryDirectory.make(prefix: "credfile-fuzz", onTmpfs: true)
            atexit { StoreHarness.processDirectory.remove() }
            return directory
        } catch {
            fatalError("\(error)")  // a fuzzer without a directory cannot run at all
        }
    }()

    static func run(_ op: StoreOperation, on store: CredentialStore, path: String) -> StoreOutcome {
        do {
            switch op {
            case .register(let name, let password):
                try store.register(username: name, password: password)
            case .authenticate(let name, let password, upgradeOnSuccess: false):
                return .granted(try store.authenticate(username: name, password: password), upgraded: false)
            case .authenticate(let name, let password, upgradeOnSuccess: true):
                let v = try store.verify(username: name, password: Password(password), upgradeOnSuccess: true)
                if let error = v.upgradeError { return .failed(error.code) }
                return .granted(v.granted, upgraded: v.upgraded)
            case .changePassword(let name, let password):
                try store.changePassword(username: name, to: password)
            case .remove(let name):
                return .removed(try store.remove(username: name))
            case .upgrade(let dryRun):
                let s = try store.upgrade(jobs: 1, dryRun: dryRun)
                return .upgraded(
                    .init(
                        upgraded: s.upgraded, alreadyHashed: s.alreadyHashed, weak: s.weak, unsupported: s.unsupported,
                        skipped: s.skipped, malformedLines: s.malformedLines))
            case .append(let bytes, let newline):
                let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
                guard fd >= 0 else { return .failed(.io) }
                defer { close(fd) }
                let all = bytes + (newline ? [0x0A] : [])
                let written = all.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                guard written == all.count else { return .failed(.io) }
            }
            return .done
        } catch let error as CredFileError {
            return .failed(error.code)
        } catch {
            return .unexpected("\(type(of: error))")
        }
    }

    /// The file on disk, read back, against the model: existence, BOM, and each line's
    /// ending and content; a line the store wrote must hold a `pbkdf2-sha256` hash
    /// with one round of the model's password.
    static func compare(path: String, with model: StoreModel, step: Int, _ label: String) throws(FuzzFailure) {
        let at = "after step \(step) (\(label))"
        let bytes = try? AtomicWriter.read(path)
        try FuzzChecks.expect(bytes != nil || !model.exists, "\(at): the file is missing")
        guard let bytes else { return }
        try FuzzChecks.expect(model.exists, "\(at): the file exists")
        let file = CredentialFile(bytes: bytes)
        try FuzzChecks.expect(file.hasBOM == model.bom, "\(at): hasBOM is \(file.hasBOM)")
        let lines = Array(file.lines)
        try FuzzChecks.expect(
            lines.count == model.lines.count, "\(at): \(lines.count) lines, the model has \(model.lines.count)")
        for (line, expected) in zip(lines, model.lines) {
            let where_ = "\(at), line \(line.number)"
            try FuzzChecks.expect(
                line.ending == expected.ending, "\(where_): ending \(line.ending), expected \(expected.ending)")
            switch expected.body {
            case .raw(let content):
                try FuzzChecks.expect(Array(line.content) == content, "\(where_): content differs from the model")
            case .stored(let username, let password, let suffix):
                let prefix = username + [UInt8(ascii: ",")]
                try FuzzChecks.expect(line.content.starts(with: prefix), "\(where_): username differs from the model")
                let secret = Array(line.content.dropFirst(prefix.count))
                if suffix.isEmpty {
                    guard case .pbkdf2(let hash)? = line.entry?.secret, hash.algorithm == .sha256, hash.rounds == 1,
                        (try? hash.verify(Password(password))) == true
                    else { throw FuzzFailure(description: "\(where_): not a one-round hash of the model's password") }
                } else {
                    try FuzzChecks.expect(
                        secret.starts(with: Array("$pbkdf2-sha256$1$".utf8))
                            && secret.reversed().starts(with: suffix.reversed())
                            && line.entry?.isMalformed == true, "\(where_): not a hash followed by the appended bytes")
                }
            }
        }
    }
}

/// SPEC §2's semantics of the file as a list of lines, kept without the library: what
/// each step should answer and how the file should read afterwards.
///
/// Raw bytes appended by the harness are modelled as bytes (joined to a last line
/// without LF, a CR before the LF taken into the ending, a BOM at the very start
/// skipped) and their meaning comes from ``Reference/classify(_:)``, so garbage may
/// create users, shadow them or break them exactly as SPEC says. A line the store
/// wrote is modelled by its username and password (the hash bytes are unknowable); bytes
/// joined onto such a line make it malformed, since a hash followed by anything no
/// longer parses (SPEC §3: one spelling, a fixed-size checksum).
///
/// Where a store change would otherwise alter the meaning of a line it does not touch,
/// the model holds the line's content fixed, which is the contract ("every other line
/// byte for byte"): a last line without LF that ends in CR gains a CRLF (an LF alone
/// would turn its CR into the ending), and a line whose content starts with the BOM's
/// bytes and becomes the first line of a file without BOM gets a BOM in front (else it
/// would lose its first three bytes to BOM skipping).
///
/// The model uses the library for one thing only: verifying a PBKDF2 hash that garbage
/// put in the file (crypto is checked by the vectors, not here), and it skips a login
/// whose hash has more than 1,000 rounds, so no input can make the fuzzer slow.
struct StoreModel {
    /// The policy the harness gives the store (`HashPolicy(rounds: 1)`), for which peer
    /// hashes `upgrade` counts as weak.
    static let policy = try? HashPolicy(rounds: 1)

    enum Body {
        case raw([UInt8])
        case stored(username: [UInt8], password: String, suffix: [UInt8])
    }

    struct Line {
        var body: Body
        var ending: LineEnding

        var endsWithCR: Bool {
            switch body {
            case .raw(let content): content.last == 0x0D
            case .stored(_, _, let suffix): suffix.last == 0x0D
            }
        }

        var startsWithBOM: Bool {
            switch body {
            case .raw(let content): content.starts(with: Reference.bom)
            case .stored(let username, _, _): username.starts(with: Reference.bom)
            }
        }
    }

    enum Meaning {
        case plaintext(String)
        case hash(Reference.Hash, secret: [UInt8])
        case stored(String)
        case unsupported
        /// A well-formed hash of a verified peer family (SPEC §3.2); `weak` as `upgrade`
        /// counts it. The harness types no peer's password, so it never grants a login.
        case peer(weak: Bool)
        case malformed
        /// `!` before a hash (SPEC §2): never authenticates, never upgraded.
        case locked

        var isMalformed: Bool { if case .malformed = self { true } else { false } }
    }

    var exists = false
    var bom = false
    var lines: [Line] = []

    /// The username field and meaning of an entry line; nil for blank and comment lines.
    func entry(_ line: Line) -> (username: [UInt8]?, meaning: Meaning)? {
        switch line.body {
        case .stored(let username, let password, let suffix):
            return (username, suffix.isEmpty ? .stored(password) : .malformed)
        case .raw(let content):
            guard case .entry(let username, let secret, let kind) = Reference.classify(content) else { return nil }
            switch kind {
            case .plaintext: return (username, .plaintext(String(decoding: secret, as: UTF8.self)))
            case .pbkdf2(let hash):  // over the cost limit of the harness's policy: malformed (SPEC §3.1)
                if Reference.isTooCostly(hash, policyRounds: 1) { return (username, .malformed) }
                return (username, .hash(hash, secret: secret))
            case .unsupported: return (username, .unsupported)
            case .malformed: return (username, .malformed)
            case .locked(.pbkdf2): return (username, .locked)
            case .locked:
                // `!` before a peer's prefix: locked, or plaintext when the family finds the
                // hash malformed (the parser's word for it, as for `.peer` below).
                switch CredentialFile(bytes: content).lines.first?.entry?.secret {
                case .locked?: return (username, .locked)
                default: return (username, .plaintext(String(decoding: secret, as: UTF8.self)))
                }
            case .peer:
                // Reference says: a prefix a verified family owns, so a peer hash or malformed.
                // Which one is the family's exact syntax, checked against the reference by
                // FuzzParser (and by the peer tests); here the model takes the parser's word
                // for it, and the policy's for weakness (measured work, not a rule to re-derive).
                switch CredentialFile(bytes: content).lines.first?.entry?.secret {
                case .peer(let hash)? where Self.policy?.costVerdict(of: hash.hash) != .within:
                    return (username, .malformed)  // over a cost limit: the policy's word, as for weakness
                case .peer(let hash)?: return (username, .peer(weak: Self.policy?.isWeak(.peer(hash)) ?? false))
                default: return (username, .malformed)
                }
            }
        }
    }

    func indices(of name: String) -> [Int] {
        lines.indices.filter { i in entry(lines[i]).map { Reference.names($0.username, name) } ?? false }
    }

    /// SPEC §2: the one change to an existing line when appending.
    mutating func endLastLine() {
        if let last = lines.indices.last, lines[last].ending == .none {
            lines[last].ending = lines[last].endsWithCR ? .crlf : .lf
        }
    }

    /// Keeps a BOM-looking first line whole after the store changed the file.
    mutating func protectFirstLine() {
        if !bom, lines.first?.startsWithBOM == true { bom = true }
    }

    mutating func apply(_ op: StoreOperation) -> StoreOutcome {
        switch op {
        case .register(let name, let password):
            guard Reference.usernameIsValid(name), Reference.passwordIsValid(password) else { return .failed(.usage) }
            guard indices(of: name).isEmpty else { return .failed(.userExists) }
            exists = true
            endLastLine()
            lines.append(Line(body: .stored(username: Array(name.utf8), password: password, suffix: []), ending: .lf))
            protectFirstLine()
            return .done

        case .authenticate(let name, let password, let upgradeOnSuccess):
            guard exists else { return .failed(.io) }
            guard let i = indices(of: name).first, case let (username, meaning)? = entry(lines[i]) else {
                return .granted(false, upgraded: false)
            }
            let granted: Bool
            var outdated = false
            switch meaning {
            case .plaintext(let secret):
                granted = secret == password
                outdated = true
            case .hash(let hash, let secret):
                guard hash.rounds <= 1_000 else { return .skipped }
                granted = (try? PasswordHash(parsing: secret).verify(Password(password))) == true
                outdated = hash.algorithm != .sha256
            case .stored(let stored): granted = stored == password
            case .unsupported, .peer, .malformed, .locked: granted = false
            }
            guard granted, upgradeOnSuccess, outdated, let username else { return .granted(granted, upgraded: false) }
            lines[i].body = .stored(username: username, password: password, suffix: [])
            return .granted(true, upgraded: true)

        case .changePassword(let name, let password):
            guard Reference.passwordIsValid(password) else { return .failed(.usage) }
            guard exists else { return .failed(.io) }
            guard let i = indices(of: name).first, case let (username?, meaning)? = entry(lines[i]) else {
                return .failed(.userNotFound)
            }
            if meaning.isMalformed { return .failed(.malformedFile) }
            lines[i].body = .stored(username: username, password: password, suffix: [])
            return .done

        case .remove(let name):
            guard exists else { return .failed(.io) }
            let doomed = indices(of: name)
            guard !doomed.isEmpty else { return .failed(.userNotFound) }
            lines = lines.indices.filter { !doomed.contains($0) }.map { lines[$0] }
            protectFirstLine()
            return .removed(doomed.count)

        case .upgrade(let dryRun):
            guard exists else { return .failed(.io) }
            var counts = StoreOutcome.UpgradeCounts()
            for i in lines.indices {
                guard case let (username, meaning)? = entry(lines[i]) else { continue }
                switch meaning {
                case .plaintext(let secret):
                    counts.upgraded += 1
                    if !dryRun, let username {
                        lines[i].body = .stored(username: username, password: secret, suffix: [])
                    }
                case .hash(let hash, _):
                    counts.alreadyHashed += 1
                    if hash.rounds < HashPolicy.defaultMinimumRounds { counts.weak += 1 }
                case .stored:
                    counts.alreadyHashed += 1
                    counts.weak += 1
                case .unsupported: counts.unsupported += 1
                case .peer(let weak):
                    counts.alreadyHashed += 1
                    if weak { counts.weak += 1 }
                case .malformed: counts.malformedLines.append(i + 1)
                case .locked: counts.alreadyHashed += 1
                }
            }
            return .upgraded(counts)

        case .append(let bytes, let newline):
            exists = true
            var body = Body.raw(bytes)
            if let last = lines.last, last.ending == .none {
                lines.removeLast()
                switch last.body {
                case .raw(let content): body = .raw(content + bytes)
                case .stored(let username, let password, let suffix):
                    body = .stored(username: username, password: password, suffix: suffix + bytes)
                }
            }
            var line = Line(body: body, ending: newline ? .lf : .none)
            if newline, line.endsWithCR {
                line.ending = .crlf
                switch line.body {
                case .raw(let content): line.body = .raw(Array(content.dropLast()))
                case .stored(let username, let password, let suffix):
                    line.body = .stored(username: username, password: password, suffix: Array(suffix.dropLast()))
                }
            }
            if lines.isEmpty, !bom, case .raw(let content) = line.body, content.starts(with: Reference.bom) {
                bom = true
                line.body = .raw(Array(content.dropFirst(3)))
            }
            if line.ending == .none, case .raw(let content) = line.body, content.isEmpty { return .done }
            lines.append(line)
            return .done
        }
    }
}
