import CredFile

#if canImport(Glibc)
import Glibc
#endif

extension FuzzChecks {
    // MARK: FuzzGroupFile

    /// Parses `input` as a group file (SPEC §13) and checks it against a naive reading of
    /// Apache's format: the same verdict and first bad line (the error is exactly
    /// `fuzz.htgroup:LINE: reason`), the same groups and members in order; then, on an
    /// accepted file, `add` and `remove` through the real locked rewrite change the
    /// membership asked for and keep every other line byte for byte.
    public static func groupFile(_ input: [UInt8], directory: String) throws(FuzzFailure) {
        let expected = ReferenceGroupFile.read(input)
        let parsed: GroupFile
        do {
            parsed = try GroupFile(parsing: input, source: "fuzz.htgroup")
        } catch {
            let error = error as? CredFileError ?? CredFileError(.io, "not a CredFileError")
            guard case .refused(let line) = expected else {
                throw FuzzFailure(description: "refused (\(error.message)); the reference accepts")
            }
            try expect(
                error.code == .usage && error.message.hasPrefix("fuzz.htgroup:\(line): "),
                "the error does not name fuzz.htgroup:\(line)")
            return
        }
        guard case .accepted(let entries) = expected else {
            throw FuzzFailure(description: "accepted; the reference refuses a line")
        }
        try expect(
            parsed.entries.map { [$0.group] + $0.members } == entries.map { [$0.group] + $0.members }
                && parsed.entries.map(\.line) == entries.map(\.line),
            "the entries differ from the reference's \(entries.count)")
        // An edit through the real writer, with names from the file when it has some.
        let group = entries.first?.group ?? "fuzzers"
        let user = entries.first?.members.first ?? "fz"
        let path = directory + "/fuzz.htgroup"
        unlink(path)
        guard writeFile(path, input) else { throw FuzzFailure(description: "cannot write \(path)") }
        for edit in [GroupFile.Edit.remove, .add, .add, .remove] {
            let before = (try? AtomicWriter.read(path)) ?? nil
            let wasMember = (try? GroupFile(path: path))?.isMember(user, of: group) ?? false
            let changed: Bool
            do {
                changed = try GroupFile.edit(path: path, edit, group: group, user: user)
            } catch {
                throw FuzzFailure(description: "\(edit) failed: \((error as? CredFileError)?.message ?? "?")")
            }
            guard let after = (try? AtomicWriter.read(path)) ?? nil, let reread = try? GroupFile(path: path) else {
                throw FuzzFailure(description: "the file after \(edit) does not parse")
            }
            try expect(changed == (edit == .add ? !wasMember : wasMember), "\(edit) says changed = \(changed)")
            try expect(reread.isMember(user, of: group) == (edit == .add), "membership after \(edit)")
            // Lines of no touched entry are byte for byte the same (a line appended at the end aside).
            let old = ReferenceGroupFile.split(before ?? [])
            let new = ReferenceGroupFile.split(after)
            let touched = Set(
                ReferenceGroupFile.entries(before ?? []).filter { $0.group == group }.map { $0.line - 1 })
            for index in old.indices where !touched.contains(index) {
                // An unterminated last line gains the file's ending (CR LF: its CR is in the content here).
                let terminated =
                    index == old.count - 1 && before?.last != 10 && index < new.count
                    && new[index].content == old[index].content + [13]
                try expect(
                    index < new.count && (new[index].content == old[index].content || terminated),
                    "line \(index + 1) changed")
            }
            if !changed { try expect(before == after, "an edit that changed nothing wrote") }
        }
        unlink(path)
    }

    // MARK: FuzzAccessRules

    /// First byte even: the rest is a rules file. Its parse never traps and refuses
    /// exactly where a naive reading says a line is bad (a line whose CIDR, host or regex
    /// only the C library can judge may go either way); accepted rules decide requests
    /// built from the input with a line that is a rule's and that a final `deny` or a
    /// first `bypass` change as they must. Odd: the rest is a forwarded path, refused by
    /// `AccessRules.safePath` exactly when a naive reading finds `..`, `.`, `//`, an
    /// encoded slash or backslash, a NUL, a control byte or a broken escape. Always: the
    /// limits (`/32` and `/33`, `/128` and `/129`, `%4` and `%41` at the end).
    public static func accessRules(_ input: [UInt8]) throws(FuzzFailure) {
        try limits()
        guard let first = input.first else { return }
        let rest = Array(input.dropFirst())
        if first % 2 == 1 {
            let got = AccessRules.safePath(rest) != nil
            let want = ReferenceAccess.isSafe(rest)
            try expect(
                got == want, "safePath says \(got ? "safe" : "unsafe"), the reference \(want ? "safe" : "unsafe")")
            return
        }
        let verdicts = ReferenceAccess.lines(rest)
        let rules: AccessRules
        do {
            rules = try AccessRules(parsing: rest, source: "fuzz.rules")
        } catch {
            let error = error as? CredFileError ?? CredFileError(.io, "not a CredFileError")
            let firstBad = verdicts.firstIndex { $0 == .bad || $0 == .unsure }
            guard let firstBad, verdicts[..<firstBad].allSatisfy({ $0 != .bad }) else {
                throw FuzzFailure(description: "refused (\(error.message)); the reference accepts every line")
            }
            let line = error.message.dropFirst("fuzz.rules:".count).prefix { $0 != ":" }
            guard let number = Int(line), number >= firstBad + 1, number <= verdicts.count,
                verdicts[(number - 1)] != .ok, verdicts[(number - 1)] != .skip,
                verdicts[..<(number - 1)].allSatisfy({ $0 != .bad })
            else { throw FuzzFailure(description: "refused at a line the reference does not refuse first") }
            try expect(error.code == .usage, "a bad rule is not a usage error")
            return
        }
        try expect(!verdicts.contains(.bad), "accepted; the reference refuses a line")
        try expect(rules.rules.count == verdicts.filter { $0 == .ok || $0 == .unsure }.count, "rule count")
        let withDeny = try? AccessRules(parsing: rest + Array("\ndeny\n".utf8), source: "fuzz.rules")
        let withBypass = try? AccessRules(parsing: Array("bypass\n".utf8) + rest, source: "fuzz.rules")
        for request in ReferenceAccess.requests(from: rest) {
            let decision = rules.decide(request)
            if let line = decision.line {
                try expect(rules.rules.contains { $0.line == line }, "decided by line \(line), which is no rule")
            }
            if decision.reason == .rule || decision.reason == .signInFirst {
                try expect(withDeny?.decide(request) == decision, "a final deny changed a decision")
            }
            let bypass = withBypass?.decide(request)
            try expect(
                decision.reason == .unsafePath
                    ? bypass?.reason == .unsafePath
                    : (bypass?.action == .bypass && bypass?.line == 1 && bypass?.reason == .rule),
                "a first bypass does not decide")
        }
    }

    /// Writes `bytes` to a new file at `path` (mode 0600).
    static func writeFile(_ path: String, _ bytes: [UInt8]) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    /// The exact limits of the rules file and the forwarded path.
    static func limits() throws(FuzzFailure) {
        for (text, good) in [
            ("allow network=10.0.0.0/32", true), ("allow network=10.0.0.1/32", true),
            ("allow network=10.0.0.0/33", false), ("allow network=::/128", true), ("allow network=::/129", false),
            ("allow network=!0.0.0.0/0", true), ("allow network=2001:db8::/32", true),
            ("allow host=*.a", true), ("allow host=*.", false), ("allow path=/", true), ("allow path=~", false),
            ("allow path=~^/" + String(repeating: "a", count: 1022), true),
            ("allow path=~^/" + String(repeating: "a", count: 1023), false), ("allow path=~a+", true),
            ("allow path=~a++", false), ("allow path=~a{255}", true), ("allow path=~a{256}", false),
            ("allow path=~a{2}*", false), ("allow path=~[+*]+", true), ("allow path=~\\++", true),
        ] as [(String, Bool)] {
            let accepted = (try? AccessRules(parsing: Array(text.utf8), source: "limit")) != nil
            try expect(accepted == good, "limit: \(text) \(accepted ? "accepted" : "refused")")
        }
        try expect(AccessRules.safePath(Array("/a%4".utf8)) == nil, "limit: /a%4 accepted")
        try expect(AccessRules.safePath(Array("/a%41".utf8))?.path == Array("/aA".utf8), "limit: /a%41")
        try expect(AccessRules.safePath(Array("/a/..".utf8)) == nil, "limit: /a/..")
        try expect(AccessRules.safePath(Array("/a/...".utf8)) != nil, "limit: /a/...")
    }
}

/// A naive reading of SPEC §13's group file for the fuzz oracle.
enum ReferenceGroupFile {
    struct Entry {
        let group: String
        let members: [String]
        let line: Int
    }
    enum Verdict {
        case accepted([Entry])
        case refused(Int)
    }
    struct Line { let content: [UInt8] }

    /// Lines split at LF by hand (the LF not included; a last line without one counts).
    static func split(_ bytes: [UInt8]) -> [Line] {
        var lines: [Line] = []
        var current: [UInt8] = []
        for byte in bytes {
            if byte == 10 {
                lines.append(Line(content: current))
                current = []
            } else {
                current.append(byte)
            }
        }
        if !current.isEmpty { lines.append(Line(content: current)) }
        return lines
    }

    static func entries(_ bytes: [UInt8]) -> [Entry] {
        if case .accepted(let entries) = read(bytes) { entries } else { [] }
    }

    static func read(_ bytes: [UInt8]) -> Verdict {
        var entries: [Entry] = []
        for (index, line) in split(bytes).enumerated() {
            var content = line.content
            if content.last == 13 { content.removeLast() }
            while let first = content.first, first == 32 || first == 9 { content.removeFirst() }
            if content.isEmpty || content[0] == 35 { continue }
            guard String(validating: content, as: UTF8.self) != nil, !content.contains(0), !content.contains(13),
                let colon = content.firstIndex(of: 58)
            else { return .refused(index + 1) }
            var name = Array(content[..<colon])
            while let last = name.last, last == 32 || last == 9 { name.removeLast() }
            if name.isEmpty || name.contains(32) || name.contains(9) { return .refused(index + 1) }
            var members: [String] = []
            var word: [UInt8] = []
            for byte in content[(colon + 1)...] + [32] {
                if byte == 32 || byte == 9 {
                    if !word.isEmpty { members.append(String(decoding: word, as: UTF8.self)) }
                    word = []
                } else {
                    word.append(byte)
                }
            }
            entries.append(Entry(group: String(decoding: name, as: UTF8.self), members: members, line: index + 1))
        }
        return .accepted(entries)
    }
}

/// A naive reading of SPEC §13's rules and forwarded paths for the fuzz oracle.
enum ReferenceAccess {
    enum Verdict: Equatable { case skip, ok, bad, unsure }

    static func lines(_ bytes: [UInt8]) -> [Verdict] {
        ReferenceGroupFile.split(bytes).map { line in
            var content = line.content
            if content.last == 13 { content.removeLast() }
            var words: [[UInt8]] = []
            var word: [UInt8] = []
            for byte in content + [32] {
                if byte == 32 || byte == 9 {
                    if !word.isEmpty { words.append(word) }
                    word = []
                } else {
                    word.append(byte)
                }
            }
            if let hash = words.firstIndex(where: { $0.first == 35 }) { words = Array(words[..<hash]) }
            if words.isEmpty { return .skip }
            if String(validating: content, as: UTF8.self) == nil || content.contains(where: { $0 < 32 && $0 != 9 }) {
                return .bad
            }
            guard ["bypass", "allow", "two-factor", "deny"].contains(String(decoding: words[0], as: UTF8.self)) else {
                return .bad
            }
            var verdict = Verdict.ok
            for word in words.dropFirst() {
                guard let equals = word.firstIndex(of: 61), equals + 1 < word.count else { return .bad }
                let name = String(decoding: word[..<equals], as: UTF8.self)
                let value = Array(word[(equals + 1)...])
                switch name {
                case "user", "group": continue
                case "method":
                    if !value.allSatisfy({ (65...90).contains($0) || (97...122).contains($0) }) { return .bad }
                case "path":
                    if value[0] == 126 {
                        if value.count == 1 || value.count > 1025 { return .bad }
                        verdict = .unsure
                    } else if value[0] != 47 {
                        return .bad
                    }
                case "host", "network": verdict = .unsure
                default: return .bad
                }
            }
            return verdict
        }
    }

    /// Requests with hosts, paths, users, groups and addresses taken from the input.
    static func requests(from bytes: [UInt8]) -> [AccessRequest] {
        var words: [String] = []
        for line in ReferenceGroupFile.split(bytes) {
            for word in line.content.split(whereSeparator: { $0 == 32 || $0 == 9 || $0 == 61 }) {
                words.append(String(decoding: word, as: UTF8.self))
            }
        }
        let hosts = ["app.example.com"] + words.filter { $0.contains(".") && !$0.contains("/") }.prefix(3)
        let paths = ["/", "/admin/x"] + words.filter { $0.hasPrefix("/") }.prefix(3)
        let users: [String?] = [nil, "alice"] + words.prefix(2).map { Optional($0) }
        let addresses: [IPAddress?] =
            [nil, IPAddress(parsing: Array("10.1.2.3".utf8))]
            + words.compactMap { word in IPAddress(parsing: Array(word.utf8).prefix { $0 != 47 }) }.prefix(2)
        var requests: [AccessRequest] = []
        for host in hosts {
            for path in paths {
                for (index, user) in users.enumerated() {
                    requests.append(
                        AccessRequest(
                            host: host, target: Array(path.utf8), method: index % 2 == 0 ? "GET" : "POST", user: user,
                            groups: Array(words.prefix(3)), address: addresses[index % addresses.count]))
                }
            }
        }
        return requests
    }

    /// Whether a forwarded target's path may be judged (see `AccessRules.safePath`).
    static func isSafe(_ target: [UInt8]) -> Bool {
        if target.contains(where: { $0 < 32 || $0 == 127 }) { return false }
        var path = target
        if let mark = target.firstIndex(of: 63) { path = Array(target[..<mark]) }
        if path.first != 47 || path.contains(92) { return false }
        let text = String(decoding: path, as: UTF8.self).lowercased()
        for bad in ["%2f", "%5c", "%00", "%7f"] where text.contains(bad) { return false }
        var decoded: [UInt8] = []
        var index = 0
        while index < path.count {
            if path[index] == 37 {
                guard index + 2 < path.count,
                    let value = UInt8(String(decoding: path[(index + 1)...(index + 2)], as: UTF8.self), radix: 16),
                    path[index + 1] != 43, path[index + 1] != 45
                else { return false }
                if value < 32 { return false }
                decoded.append(value)
                index += 3
            } else {
                decoded.append(path[index])
                index += 1
            }
        }
        // Bytes, not String: a combining mark after `/` would hide `/./` from String's search.
        func has(_ needle: String) -> Bool {
            let n = Array(needle.utf8)
            return decoded.count >= n.count
                && (0...(decoded.count - n.count)).contains { Array(decoded[$0..<($0 + n.count)]) == n }
        }
        func ends(_ suffix: String) -> Bool { decoded.reversed().starts(with: Array(suffix.utf8).reversed()) }
        if has("//") || ends("/.") || ends("/..") || has("/./") || has("/../") { return false }
        return true
    }
}
