/// What a rule of SPEC §13 does with a request it matches.
public enum AccessAction: String, Sendable, CaseIterable {
    /// No sign-in needed.
    case bypass
    /// Any signed-in user the rule's matchers admit.
    case allow
    /// Signed in with a second factor in this session (§14).
    case twoFactor = "two-factor"
    /// Refused.
    case deny
}

/// One request as the rules see it: the host, the path as the web server forwards it,
/// the method, who is signed in (if anyone) with their groups, and the client's address.
public struct AccessRequest: Sendable, Equatable {
    /// The host, lowercased, without port or final dot.
    public var host: String
    /// The path and query as forwarded (`/a/b?x=1`), before any decoding.
    public var target: [UInt8]
    /// The method (`GET`).
    public var method: String
    /// The signed-in user; nil for an anonymous request.
    public var user: String?
    /// The user's groups (``GroupFile/groups(of:)``).
    public var groups: [String]
    /// The client's address, when known.
    public var address: IPAddress?

    /// A request from its parts.
    public init(
        host: String, target: some Collection<UInt8>, method: String = "GET", user: String? = nil,
        groups: [String] = [], address: IPAddress? = nil
    ) {
        var host = host.lowercased()
        if let colon = host.lastIndex(of: ":"), !host.hasPrefix("[") || host[..<colon].hasSuffix("]") {
            if host[host.index(after: colon)...].allSatisfy(\.isASCII)
                && host[host.index(after: colon)...].allSatisfy(\.isNumber)
            {
                host = String(host[..<colon])
            }
        }
        if host.hasSuffix(".") { host.removeLast() }
        self.host = host
        self.target = Array(target)
        self.method = method.uppercased()
        self.user = user
        self.groups = groups
        self.address = address
    }

    /// A request for `url` (`https://host[:port]/path?query`).
    /// - Throws: ``CredFileError/Code/usage`` for a URL that is not `http` or `https`
    ///   with a host (user information in it is refused too).
    public init(
        url: String, method: String = "GET", user: String? = nil, groups: [String] = [], address: IPAddress? = nil
    ) throws {
        let bytes = Array(url.utf8)
        var rest: ArraySlice<UInt8>
        if bytes.count >= 8, Array(bytes[..<8]).map(Self.lower) == Array("https://".utf8) {
            rest = bytes[8...]
        } else if bytes.count >= 7, Array(bytes[..<7]).map(Self.lower) == Array("http://".utf8) {
            rest = bytes[7...]
        } else {
            throw CredFileError.usage("the URL is not http:// or https://")
        }
        let end = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
        let authority = rest[..<(end ?? rest.endIndex)]
        rest = rest[(end ?? rest.endIndex)...]
        guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")),
            authority.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { throw CredFileError.usage("the URL has no host, or user information in it") }
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
        var target = Array(rest)
        if target.first != UInt8(ascii: "/") { target = Array("/".utf8) + target }
        self.init(
            host: String(decoding: authority, as: UTF8.self), target: target, method: method, user: user,
            groups: groups, address: address)
    }

    private static func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }
}

/// Which rule decided a request, and how.
public struct AccessDecision: Sendable, Equatable {
    /// Why the decision is what it is.
    public enum Reason: Sendable, Equatable {
        /// The rule on ``AccessDecision/line`` matched.
        case rule
        /// No rule matched: denied.
        case noRule
        /// The forwarded path has `..` or `.` segments, `//`, an encoded or raw
        /// backslash or slash, a NUL or a broken `%` escape: denied rather than guessed.
        case unsafePath
        /// The request is anonymous and the rule on ``AccessDecision/line`` would match
        /// but names a user or group: the client must sign in before it can be decided
        /// (Authelia's "potential match").
        case signInFirst
    }

    /// The action: ``AccessAction/deny`` for ``Reason/noRule`` and ``Reason/unsafePath``;
    /// ``AccessAction/allow`` (sign in) for ``Reason/signInFirst``.
    public let action: AccessAction
    /// The line of the deciding rule, from 1; nil when no rule decided.
    public let line: Int?
    /// Why.
    public let reason: Reason

    /// Whether the request may pass as it is: a bypass, or an allow or two-factor rule
    /// that matched (the caller still asks for the sign-in and the factor they need).
    public var isAllowed: Bool { reason == .rule && action != .deny }
}

/// The rules file of SPEC §13: one rule a line, `ACTION MATCHER=VALUE …`; blank lines
/// and `#` comments skipped. The first rule whose matchers all match decides; a request
/// no rule matches is denied.
///
/// Matchers (a matcher given twice matches either value):
/// * `host=` the host exactly, or `*.example.com` any name below it (not the apex);
///   case-insensitive, port ignored.
/// * `path=/prefix` a prefix of the path (decoded, query left out); `path=~REGEX` a POSIX
///   extended regular expression searched in the decoded path and `?query`, as
///   Authelia's `resources`.
/// * `method=` the method, case-insensitive.
/// * `user=`, `group=` the signed-in user, or a group of theirs.
/// * `network=CIDR` the client's address is in the block; `network=!CIDR` it is not.
///   Negated blocks are all excluded (`network=!A network=!B`: in neither).
public struct AccessRules: Sendable {
    /// One rule of the file.
    public struct Rule: Sendable {
        /// What it does.
        public let action: AccessAction
        /// Its line in the file, from 1.
        public let line: Int
        /// Its words, blanks and comment left out (`allow host=*.example.com`).
        public let text: String
        let hosts: [Host]
        let prefixes: [[UInt8]]
        let patterns: [POSIXRegex]
        let methods: [String]
        let users: [String]
        let groups: [String]
        let networks: [AddressRange]
        let excluded: [AddressRange]

        /// Whether it names a user or a group.
        public var namesSubject: Bool { !users.isEmpty || !groups.isEmpty }
    }

    enum Host: Sendable {
        case exact([UInt8])
        case below([UInt8])  // ".example.com"
    }

    /// The rules, in file order.
    public let rules: [Rule]
    /// The rules' positions in ``rules`` by the hosts they name, made once per read, so that
    /// a decision looks only at the rules that can match its host (100 rules for 100 apps
    /// cost a few comparisons, not 100): by exact host, by `*.` suffix (with its dot), and
    /// the rules that name no host.
    private let byHost: [String: [Int]]
    private let bySuffix: [String: [Int]]
    private let anyHost: [Int]

    /// Parses a rules file.
    /// - Parameters:
    ///   - bytes: the file's bytes.
    ///   - source: the file's name as errors show it (`RULESFILE:LINE: …`).
    /// - Throws: ``CredFileError/Code/usage`` naming `source:LINE` for an unknown action
    ///   or matcher, a matcher with no value, a bad host, path, CIDR or regex.
    public init(parsing bytes: some Collection<UInt8>, source: String) throws {
        var rules: [Rule] = []
        for (index, raw) in GroupFile.lines(Array(bytes)).enumerated() {
            do {
                if let rule = try Self.rule(raw, line: index + 1) { rules.append(rule) }
            } catch let problem as Problem {
                throw CredFileError.usage("\(Escaped.path(source)):\(index + 1): \(problem.text)")
            }
        }
        self.rules = rules
        var byHost: [String: [Int]] = [:]
        var bySuffix: [String: [Int]] = [:]
        var anyHost: [Int] = []
        for (index, rule) in rules.enumerated() {
            if rule.hosts.isEmpty { anyHost.append(index) }
            for host in rule.hosts {
                switch host {
                case .exact(let name): byHost[String(decoding: name, as: UTF8.self), default: []].append(index)
                case .below(let suffix): bySuffix[String(decoding: suffix, as: UTF8.self), default: []].append(index)
                }
            }
        }
        self.byHost = byHost
        self.bySuffix = bySuffix
        self.anyHost = anyHost
    }

    /// The positions of the rules that may match `host`, in file order, each once.
    private func candidates(_ host: String) -> [Int] {
        var found = anyHost
        if let exact = byHost[host] { found += exact }
        if !bySuffix.isEmpty {
            let bytes = Array(host.utf8)
            for index in bytes.indices.dropFirst() where bytes[index] == UInt8(ascii: ".") {
                if let below = bySuffix[String(decoding: bytes[index...], as: UTF8.self)] { found += below }
            }
        }
        found.sort()
        var unique: [Int] = []
        unique.reserveCapacity(found.count)
        for index in found where unique.last != index { unique.append(index) }
        return unique
    }

    /// Reads and parses the file at `path`.
    /// - Throws: ``CredFileError/Code/io`` when it cannot be read, or the parse error.
    public init(path: String) throws {
        guard let bytes = try AtomicWriter.read(path) else { throw CredFileError.missingFile(path) }
        try self.init(parsing: bytes, source: path)
    }

    /// The decision for `request`: the first rule that matches, else deny.
    public func decide(_ request: AccessRequest) -> AccessDecision {
        guard let (path, query) = Self.safePath(request.target) else {
            return AccessDecision(action: .deny, line: nil, reason: .unsafePath)
        }
        let host = Array(request.host.utf8)
        var full = path
        if let query { full += [UInt8(ascii: "?")] + query }
        for index in candidates(request.host) {
            let rule = rules[index]
            guard rule.hosts.isEmpty || rule.hosts.contains(where: { Self.host(host, matches: $0) }),
                rule.prefixes.isEmpty || rule.prefixes.contains(where: { path.starts(with: $0) }),
                rule.patterns.isEmpty || rule.patterns.contains(where: { $0.matches(full) }),
                rule.methods.isEmpty || rule.methods.contains(request.method),
                Self.network(request.address, rule)
            else { continue }
            if rule.namesSubject {
                guard let user = request.user else {
                    return AccessDecision(action: .allow, line: rule.line, reason: .signInFirst)
                }
                guard rule.users.isEmpty || rule.users.contains(user),
                    rule.groups.isEmpty || rule.groups.contains(where: request.groups.contains)
                else { continue }
            }
            return AccessDecision(action: rule.action, line: rule.line, reason: .rule)
        }
        return AccessDecision(action: .deny, line: nil, reason: .noRule)
    }

    // MARK: Matching

    private static func host(_ host: [UInt8], matches pattern: Host) -> Bool {
        switch pattern {
        case .exact(let name): host == name
        case .below(let suffix): host.count > suffix.count && host.reversed().starts(with: suffix.reversed())
        }
    }

    /// An unknown address is in no block (so it passes every negation).
    private static func network(_ address: IPAddress?, _ rule: Rule) -> Bool {
        if !rule.networks.isEmpty {
            guard let address, rule.networks.contains(where: { $0.contains(address) }) else { return false }
        }
        guard let address else { return true }
        return !rule.excluded.contains { $0.contains(address) }
    }

    /// The decoded path and the raw query of a forwarded target, or nil when the path
    /// is not one a rule may judge: a `.` or `..` segment (also encoded), `//`, a
    /// backslash or an encoded `/` or `\`, a NUL (also encoded), a broken `%` escape, a
    /// control byte, or no leading `/`.
    public static func safePath(_ target: some Collection<UInt8>) -> (path: [UInt8], query: [UInt8]?)? {
        let bytes = Array(target)
        let mark = bytes.firstIndex(of: UInt8(ascii: "?"))
        let raw = bytes[..<(mark ?? bytes.endIndex)]
        let query = mark.map { Array(bytes[($0 + 1)...]) }
        guard raw.first == UInt8(ascii: "/"), !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        var path: [UInt8] = []
        path.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index < raw.endIndex {
            var byte = raw[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < raw.endIndex, let high = hex(raw[index + 1]), let low = hex(raw[index + 2])
                else { return nil }
                byte = high << 4 | low
                guard byte != 0, byte != UInt8(ascii: "/"), byte >= 0x20, byte != 0x7F else { return nil }
                index += 3
            } else {
                index += 1
            }
            guard byte != UInt8(ascii: "\\") else { return nil }
            path.append(byte)
        }
        for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst() {
            if segment.elementsEqual([0x2E]) || segment.elementsEqual([0x2E, 0x2E]) { return nil }
        }
        let slashes = path.indices.dropLast().contains { path[$0] == 0x2F && path[$0 + 1] == 0x2F }
        return slashes ? nil : (path, query)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    // MARK: Parsing

    private struct Problem: Error { let text: String }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    private static func rule(_ raw: [UInt8], line: Int) throws(Problem) -> Rule? {
        var text = raw[...]
        if text.last == 0x0D { text = text.dropLast() }
        var words = text.split(whereSeparator: isBlank)
        if let comment = words.firstIndex(where: { $0.first == UInt8(ascii: "#") }) { words = Array(words[..<comment]) }
        guard let first = words.first else { return nil }
        guard String(validating: text, as: UTF8.self) != nil else { throw Problem(text: "not UTF-8") }
        guard !text.contains(where: { $0 < 0x20 && $0 != 0x09 }) else { throw Problem(text: "a control byte") }
        guard let action = AccessAction(rawValue: String(decoding: first, as: UTF8.self)) else {
            throw Problem(text: "unknown action (bypass, allow, two-factor or deny)")
        }
        var hosts: [Host] = []
        var prefixes: [[UInt8]] = []
        var patterns: [POSIXRegex] = []
        var methods: [String] = []
        var users: [String] = []
        var groups: [String] = []
        var networks: [AddressRange] = []
        var excluded: [AddressRange] = []
        for (position, word) in words.dropFirst().enumerated() {
            let place = "matcher \(position + 1)"
            guard let equals = word.firstIndex(of: UInt8(ascii: "=")) else {
                throw Problem(text: "\(place) is not NAME=VALUE")
            }
            let name = String(decoding: word[..<equals], as: UTF8.self)
            let value = word[(equals + 1)...]
            guard !value.isEmpty else { throw Problem(text: "\(place) (\(name)=) has no value") }
            switch name {
            case "host":
                let lowered = value.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
                if lowered.starts(with: Array("*.".utf8)) {
                    let suffix = Array(lowered.dropFirst())
                    guard suffix.count > 1, isHostName(suffix.dropFirst()) else {
                        throw Problem(text: "\(place): host=*. needs a domain after it")
                    }
                    hosts.append(.below(suffix))
                } else {
                    guard isHostName(lowered[...]) else {
                        throw Problem(text: "\(place): host= takes a name or *.DOMAIN")
                    }
                    hosts.append(.exact(lowered))
                }
            case "path":
                if value.first == UInt8(ascii: "~") {
                    guard value.count > 1, value.count <= 1 + Self.longestPattern else {
                        throw Problem(text: "\(place): path=~ takes 1 to \(Self.longestPattern) bytes")
                    }
                    guard Self.isBounded(value.dropFirst()) else {
                        throw Problem(
                            text: "\(place): path=~ repeats a repetition (a++, a{2}*) or counts past {255}")
                    }
                    guard let regex = POSIXRegex(Array(value.dropFirst())) else {
                        throw Problem(text: "\(place): path=~ is not a POSIX extended regular expression")
                    }
                    patterns.append(regex)
                } else {
                    guard value.first == UInt8(ascii: "/") else {
                        throw Problem(text: "\(place): path= takes /PREFIX or ~REGEX")
                    }
                    prefixes.append(Array(value))
                }
            case "method":
                guard value.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
                    throw Problem(text: "\(place): method= takes a method name")
                }
                methods.append(String(decoding: value, as: UTF8.self).uppercased())
            case "user": users.append(String(decoding: value, as: UTF8.self))
            case "group": groups.append(String(decoding: value, as: UTF8.self))
            case "network":
                let negated = value.first == UInt8(ascii: "!")
                guard let range = AddressRange(parsing: negated ? value.dropFirst() : value) else {
                    throw Problem(
                        text: "\(place): network= takes a CIDR block (10.0.0.0/8, 2001:db8::/32), ! to negate")
                }
                if negated { excluded.append(range) } else { networks.append(range) }
            default:
                throw Problem(text: "\(place): unknown matcher (host, path, method, user, group, network)")
            }
        }
        return Rule(
            action: action, line: line, text: words.map { String(decoding: $0, as: UTF8.self) }.joined(separator: " "),
            hosts: hosts, prefixes: prefixes, patterns: patterns, methods: methods,
            users: users, groups: groups, networks: networks, excluded: excluded)
    }

    /// The longest `path=~` pattern, in bytes.
    static let longestPattern = 1024

    /// Whether a pattern stays small once compiled: glibc's `regcomp` expands repetitions,
    /// so `^/+++…` or `(a{255}){255}` would take gigabytes (FuzzAccessRules found the
    /// first). No quantifier directly after another (outside a bracket expression) and no
    /// count past 255.
    static func isBounded(_ pattern: ArraySlice<UInt8>) -> Bool {
        let quantifiers: Set<UInt8> = [0x2A, 0x2B, 0x3F, 0x7B]  // * + ? {
        var previousWasQuantifier = false
        var index = pattern.startIndex
        while index < pattern.endIndex {
            let byte = pattern[index]
            if byte == 0x5C {  // \x: one literal
                index += 2
                previousWasQuantifier = false
                continue
            }
            if byte == 0x5B {  // [ … ]: literals, `]` first allowed
                var end = index + 1
                if end < pattern.endIndex, pattern[end] == 0x5E { end += 1 }
                if end < pattern.endIndex, pattern[end] == 0x5D { end += 1 }
                while end < pattern.endIndex, pattern[end] != 0x5D { end += 1 }
                index = end + 1
                previousWasQuantifier = false
                continue
            }
            if quantifiers.contains(byte) {
                if previousWasQuantifier { return false }
                if byte == 0x7B {
                    guard let close = pattern[index...].firstIndex(of: 0x7D) else { return true }  // regcomp judges
                    for count in pattern[(index + 1)..<close].split(separator: 0x2C) {
                        guard count.count <= 3, let n = Int(String(decoding: count, as: UTF8.self)), n <= 255 else {
                            return false
                        }
                    }
                    index = close
                }
                previousWasQuantifier = true
            } else {
                previousWasQuantifier = false
            }
            index += 1
        }
        return true
    }

    /// Letters, digits, `-`, `.` and `_`, or an IPv6 literal in brackets; no empty label.
    private static func isHostName(_ name: ArraySlice<UInt8>) -> Bool {
        if name.first == UInt8(ascii: "["), name.last == UInt8(ascii: "]") {
            return IPAddress(parsing: name.dropFirst().dropLast()) != nil
        }
        guard !name.isEmpty, name.first != 0x2E, name.last != 0x2E else { return false }
        return name.allSatisfy {
            (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F
        }
            && !name.indices.dropLast().contains { name[$0] == 0x2E && name[$0 + 1] == 0x2E }
    }
}
