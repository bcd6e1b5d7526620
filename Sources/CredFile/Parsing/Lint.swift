#if canImport(Glibc)
import Glibc
#endif

extension CredentialFile {
    /// Every problem of the file, in line order (SPEC §2, §3): malformed entries,
    /// unsupported hashes and shadowed duplicates are errors; weak hashes and odd
    /// usernames are warnings. Plaintext passwords get one warning for the whole file,
    /// at the first of them, with their count (a legacy file is all plaintext; a
    /// warning per line would bury the real problems). No finding quotes a secret.
    public func findings(policy: HashPolicy = .standard) -> [Finding] {
        findings(policy: policy, fastPath: true)
    }

    /// `fastPath: false` classifies every line fully; tests check both give the same.
    func findings(policy: HashPolicy, fastPath: Bool) -> [Finding] {
        var findings: [Finding] = []
        let firstLine = FirstLineTable(capacity: lineCount)
        var plaintext = (count: 0, firstLine: 0)
        bytes.withUnsafeBytes { file in
            for number in stride(from: 1, through: lineCount, by: 1) {
                let content = span(of: number - 1).0
                func duplicate(of name: UnsafeRawBufferPointer, at offset: Int?) -> Bool {
                    guard let first = firstLine.insert(name, fileOffset: offset, line: number, file: file) else {
                        return false
                    }
                    findings.append(Finding(
                        line: number, severity: .error,
                        message: "duplicate entry for user \(Self.display(name)) (first at line \(first)); it never authenticates"))
                    return true
                }
                // The common line, a clean plaintext entry, without building an Entry.
                if fastPath, let comma = Self.cleanPlaintextComma(UnsafeRawBufferPointer(rebasing: file[content])) {
                    let name = UnsafeRawBufferPointer(rebasing: file[content.lowerBound..<(content.lowerBound + comma)])
                    if !duplicate(of: name, at: content.lowerBound) {
                        if plaintext.count == 0 { plaintext.firstLine = number }
                        plaintext.count += 1
                    }
                    continue
                }
                guard case .entry(let entry) = LineClassifier.classify(bytes[content]) else { continue }
                func report(_ severity: Finding.Severity, _ message: String) {
                    findings.append(Finding(line: number, severity: severity, message: message))
                }
                let who = { entry.hasName ? " for user \(Self.display(entry.username))" : "" }
                if entry.hasName {
                    let ascii = entry.username.allSatisfy { $0 < 0x80 }
                    let key = ascii ? Array(entry.username) : entry.key
                    let isDuplicate = key.withUnsafeBytes {
                        duplicate(of: $0, at: ascii ? entry.username.startIndex : nil)
                    }
                    if isDuplicate { continue }
                }
                switch entry.secret {
                case .malformed(let reason):
                    report(.error, "malformed entry\(who()): \(reason)")
                    continue
                case .unsupportedHash(let scheme):
                    report(.error, "unsupported hash scheme \(scheme)\(who()); it never authenticates")
                case .plaintext:
                    if plaintext.count == 0 { plaintext.firstLine = number }
                    plaintext.count += 1
                case .pbkdf2(let hash):
                    if hash.rounds < policy.minimumRounds {
                        report(.warning, "weak hash\(who()): \(hash.rounds) rounds, below the minimum of \(policy.minimumRounds)")
                    }
                    if policy.isCostlier(hash) {
                        report(.warning, "costly hash\(who()): \(hash.description) takes longer to verify than the policy, so its logins tell that the user exists")
                    }
                case .peer(let peer):  // SPEC §3.2: weak schemes and costlier-than-policy entries warn
                    if policy.isWeak(peer.hash) {
                        report(.warning, "weak hash\(who()): \(peer.hash.description)")
                    }
                    if policy.isCostlier(peer.hash) {
                        report(.warning, "costly hash\(who()): \(peer.hash.description) takes longer to verify than the policy, so its logins tell that the user exists")
                    }
                }
                if let problem = Username.problem(entry.username) {
                    report(.warning, "username \(problem)")
                }
            }
        }
        if plaintext.count > 0 {
            let message = plaintext.count == 1
                ? "plaintext password; run 'credfile upgrade'"
                : "\(plaintext.count) entries hold a plaintext password (this is the first); run 'credfile upgrade'"
            let finding = Finding(line: plaintext.firstLine, severity: .warning, message: message)
            findings.insert(finding, at: findings.firstIndex { $0.line >= plaintext.firstLine } ?? findings.endIndex)
        }
        return findings
    }

    /// The comma of a line that is surely a well-formed plaintext entry with an
    /// unremarkable name: printable ASCII, not a comment or blank, non-empty name without
    /// edge spaces and at most 255 bytes, non-empty secret without hash syntax. Nil means "classify it fully".
    static func cleanPlaintextComma(_ line: UnsafeRawBufferPointer) -> Int? {
        guard line.count >= 3, line.count <= LineClassifier.maximumLineCount,
            line[0] != UInt8(ascii: "#"), line[0] != 0x20, line[0] != UInt8(ascii: ","),
            LineClassifier.isPrintableASCII(line),
            let comma = CredentialFile.index(of: UInt8(ascii: ","), in: line, from: 1, to: line.count - 1),
            comma <= Username.maximumCount, line[comma - 1] != 0x20,
            !SecretSyntax.mayHaveHashSyntax(UnsafeRawBufferPointer(rebasing: line[(comma + 1)...]))
        else { return nil }
        return comma
    }

    /// A username for a message: quoted, with anything unprintable escaped.
    static func display(_ raw: some Collection<UInt8>) -> String {
        if raw.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "'") && $0 != UInt8(ascii: "\\") }) {
            return "'" + String(decoding: raw, as: UTF8.self) + "'"
        }
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

/// Username keys → the line of their first entry: open addressing over 64-bit hashes.
/// Keys that are in the file are kept as offsets into it (no allocation per name);
/// normalized keys go to one side buffer. Each slot holds the hash's high 32 bits next
/// to the entry's index, so a probe visits the entries and the file (two cache misses)
/// only when the full hash probably matches.
final class FirstLineTable {
    private struct Stored {
        var offset: Int  // into the file, or, when negative, into `side` at -offset - 1
        var count: Int
        var line: Int
    }
    private var slots: UnsafeMutableBufferPointer<UInt64>  // 0: empty; else tag | index + 1
    private var entries: [Stored] = []
    private var side: [UInt8] = []

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = .allocate(capacity: size)
        slots.initialize(repeating: 0)
        entries.reserveCapacity(capacity)
    }

    deinit { slots.deallocate() }

    /// Records `key` (found in `file` at `fileOffset`, or nil when it is a normalized
    /// copy) at `line`; returns the earlier line when the key was already there.
    func insert(_ key: UnsafeRawBufferPointer, fileOffset: Int?, line: Int, file: UnsafeRawBufferPointer) -> Int? {
        if entries.count * 2 >= slots.count { grow(file) }
        let hash = Self.hash(key)
        let tag = UInt64(truncatingIfNeeded: hash) & 0xFFFF_FFFF_0000_0000
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] != 0 {
            if slots[slot] & 0xFFFF_FFFF_0000_0000 == tag {
                let entry = entries[Int(slots[slot] & 0xFFFF_FFFF) - 1]
                if entry.count == key.count, bytes(of: entry, file, { memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0 }) {
                    return entry.line
                }
            }
            slot = (slot + 1) & mask
        }
        slots[slot] = tag | UInt64(entries.count + 1)
        if let fileOffset {
            entries.append(Stored(offset: fileOffset, count: key.count, line: line))
        } else {
            entries.append(Stored(offset: -side.count - 1, count: key.count, line: line))
            side.append(contentsOf: key)
        }
        return nil
    }


    private func bytes<R>(of entry: Stored, _ file: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if entry.count == 0 { return body(UnsafeRawBufferPointer(start: file.baseAddress, count: 0)) }
        if entry.offset >= 0 { return body(UnsafeRawBufferPointer(rebasing: file[entry.offset..<(entry.offset + entry.count)])) }
        let start = -entry.offset - 1
        return side.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + entry.count)])) }
    }

    private func grow(_ file: UnsafeRawBufferPointer) {
        slots.deallocate()
        slots = .allocate(capacity: slots.count * 2)
        slots.initialize(repeating: 0)
        let mask = slots.count - 1
        for (index, entry) in entries.enumerated() {
            let hash = bytes(of: entry, file) { Self.hash($0) }
            var slot = hash & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt64(truncatingIfNeeded: hash) & 0xFFFF_FFFF_0000_0000 | UInt64(index + 1)
        }
    }

    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        var index = 0
        while index + 8 <= bytes.count {
            h = (h ^ bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            h = h << 31 | h >> 33
            index += 8
        }
        var tail: UInt64 = 0
        while index < bytes.count {
            tail = tail << 8 | UInt64(bytes[index])
            index += 1
        }
        // MurmurHash3's fmix64: every input bit reaches the low bits the table uses.
        h ^= tail
        h ^= h >> 33
        h &*= 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h &*= 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return Int(truncatingIfNeeded: h)
    }
}
