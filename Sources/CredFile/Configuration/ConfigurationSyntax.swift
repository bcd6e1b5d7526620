/// The grammar of the configuration file (SPEC §5), parsed from its bytes.
///
///     file     = [BOM] *(line LF) [line]           ; UTF-8; at most 1 MiB
///     line     = *WS [comment / section / setting] *WS [CR]
///     comment  = "#" *(any character)              ; only as the first thing on a line
///     section  = "[" *WS absolute-path *WS "]"     ; the rest applies to that file
///     setting  = key *WS "=" *WS value
///     key      = 1*(a-z / 0-9 / "-")               ; a long option without `--`
///     value    = the rest of the line             ; no quoting; a `#` is part of it
///     WS       = SP / HTAB
///
/// A line holds at most ``maximumLineLength`` bytes before its ending (LF, or CR LF).
/// No control character other than a tab may appear, the file must be valid UTF-8, a
/// key must be one of the table's (``Setting/keys``), a value must be of its kind, and
/// a key that is not repeatable may be set once per part (the top part, or the
/// sections that name one path). Every broken rule is a ``ConfigurationProblem`` naming
/// its line; there is no partial result.
package enum ConfigurationSyntax {
    /// Bytes of a line, without its ending (LF or CR LF). Twice `PATH_MAX`, so a
    /// `[PATH]` or a `blocklist = PATH` line always fits.
    public static let maximumLineLength = 8192
    /// Bytes of a whole file.
    public static let maximumSize = 1 << 20

    /// One `key = value` line, checked.
    public struct Entry: Sendable, Equatable {
        /// The key's row of the table.
        public let setting: Setting
        /// Its value, checked against the setting's kind.
        public let value: SettingValue
        /// 1-based line number.
        public let line: Int
    }

    /// A `[PATH]` header and the settings after it, up to the next header.
    public struct Section: Sendable, Equatable {
        /// The path as written (absolute).
        public let path: String
        /// 1-based line number of the header.
        public let line: Int
        /// Its settings, in file order.
        public var entries: [Entry]
    }

    /// A parsed file: the top part (before the first header) and the sections.
    public struct Parsed: Sendable, Equatable {
        /// The settings before the first `[PATH]`.
        public var top: [Entry] = []
        /// The sections in file order (a path may head more than one).
        public var sections: [Section] = []
    }

    /// Parses `bytes` against `keys`.
    /// - Returns: the settings, or the first problem (lowest line) when a rule is broken.
    public static func parse(_ bytes: [UInt8], keys: [Setting] = Setting.keys) -> Result<Parsed, ConfigurationProblem> {
        guard bytes.count <= maximumSize else {
            return .failure(ConfigurationProblem(line: 0, reason: .fileTooLarge(maximumSize)))
        }
        var keyTable: [String: Setting] = [:]
        for key in keys where key.isKey { keyTable[key.name] = key }
        var parsed = Parsed()
        // Where each non-repeatable key was first set in each part (nil: the top part).
        var firstLines: [String?: [String: Int]] = [:]
        var part: String? = nil
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var number = 0
        while start < bytes.count {
            number += 1
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            var line = bytes[start..<end]
            start = end + 1
            if line.last == 0x0D { line = line.dropLast() }
            func problem(_ reason: ConfigurationProblem.Reason) -> Result<Parsed, ConfigurationProblem> {
                .failure(ConfigurationProblem(line: number, reason: reason))
            }
            guard line.count <= maximumLineLength else { return problem(.lineTooLong(maximumLineLength)) }
            guard !line.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else {
                return problem(.controlCharacter)
            }
            guard String(validating: line, as: UTF8.self) != nil else { return problem(.invalidUTF8) }
            // Bytes, not Characters: a combining mark after `#`, `[`, `=` or a space must
            // not hide it (`"=\u{301}"` is one Character).
            let content = trimmed(line)
            if content.isEmpty || content.first == UInt8(ascii: "#") { continue }
            if content.first == UInt8(ascii: "[") {
                guard content.count >= 2, content.last == UInt8(ascii: "]") else { return problem(.badSection) }
                let path = trimmed(content.dropFirst().dropLast())
                guard path.first == UInt8(ascii: "/") else { return problem(.badSection) }
                part = String(decoding: path, as: UTF8.self)  // valid: cut at ASCII bytes of valid UTF-8
                parsed.sections.append(Section(path: part ?? "", line: number, entries: []))
                continue
            }
            guard let equals = content.firstIndex(of: UInt8(ascii: "=")) else { return problem(.noEquals) }
            let nameBytes = trimmed(content[..<equals])
            guard !nameBytes.isEmpty, nameBytes.allSatisfy(isKeyByte) else { return problem(.badKey) }
            let name = String(decoding: nameBytes, as: UTF8.self)
            guard let setting = keyTable[name] else { return problem(.unknownKey(name)) }
            let valueText = String(decoding: trimmed(content[(equals + 1)...]), as: UTF8.self)
            guard let value = setting.kind.value(of: valueText) else {
                return problem(.badValue(key: name, expected: setting.kind.expectation))
            }
            // A relative `state` would be found from each caller's working directory, so
            // each would count failures alone (Documentation/Decisions.md, §9).
            if setting == .state, !valueText.hasPrefix("/") {
                return problem(
                    .badValue(
                        key: name,
                        expected:
                            "an absolute path (each caller would find a relative one in its own working directory)"))
            }
            if !setting.isRepeatable {
                if let first = firstLines[part]?[name] { return problem(.duplicate(key: name, firstLine: first)) }
                firstLines[part, default: [:]][name] = number
            }
            let entry = Entry(setting: setting, value: value, line: number)
            if parsed.sections.isEmpty {
                parsed.top.append(entry)
            } else {
                parsed.sections[parsed.sections.count - 1].entries.append(entry)
            }
        }
        return .success(parsed)
    }

    /// Lowercase ASCII letters, digits and `-`.
    static func isKeyByte(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-")
    }

    /// Without spaces and tabs at either end.
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) })
        else {
            return []
        }
        return bytes[first...last]
    }
}

/// Why a configuration file is refused, and where.
package struct ConfigurationProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The broken rule.
    public enum Reason: Sendable, Equatable {
        /// The file is larger than this many bytes (line 0).
        case fileTooLarge(Int)
        /// The line is longer than this many bytes.
        case lineTooLong(Int)
        /// A control character other than a tab (a CR is allowed only before the LF).
        case controlCharacter
        /// The line is not valid UTF-8.
        case invalidUTF8
        /// A `[` line that is not `[/absolute/path]`.
        case badSection
        /// Neither a comment, a section, nor `key = value`.
        case noEquals
        /// A key that is not made of `a-z`, `0-9` and `-` (not quoted: it could be a stray secret).
        case badKey
        /// A well-formed key that is not in the table.
        case unknownKey(String)
        /// The value is not of the key's kind (the value is never quoted).
        case badValue(key: String, expected: String)
        /// A key that is not repeatable set again in the same part.
        case duplicate(key: String, firstLine: Int)
        /// The file can be written by its group or others (its mode).
        case writableByOthers(mode: UInt32)
        /// The file belongs to someone other than root or the caller.
        case foreignOwner(uid: UInt32)
        /// Not a regular file.
        case notARegularFile
        /// It cannot be read: the system call's error.
        case unreadable(CredFileError.Cause)
    }

    /// 1-based line, or 0 for a problem of the whole file.
    public let line: Int
    /// What is wrong.
    public let reason: Reason

    /// Creates a problem.
    public init(line: Int, reason: Reason) {
        self.line = line
        self.reason = reason
    }

    /// `unknown key 'iteration'`: the reason in English, without the place.
    public var description: String {
        switch reason {
        case .fileTooLarge(let limit): "the file is larger than \(limit) bytes"
        case .lineTooLong(let limit): "the line is longer than \(limit) bytes"
        case .controlCharacter: "the line holds a control character"
        case .invalidUTF8: "the line is not valid UTF-8"
        case .badSection: "a section must be [/absolute/path]"
        case .noEquals: "expected key = value, a [/path] section, a # comment or a blank line"
        case .badKey: "a key is made of a-z, 0-9 and -"
        case .unknownKey(let key): "unknown key '\(key)'"
        case .badValue(let key, let expected): "\(key) takes \(expected)"
        case .duplicate(let key, let first): "\(key) is already set on line \(first) (in the same part of the file)"
        case .writableByOthers(let mode):
            "its group or others can write it (mode \(String(repeating: "0", count: max(0, 4 - String(mode & 0o7777, radix: 8).count)) + String(mode & 0o7777, radix: 8))): anyone who can change it controls every credfile command"
        case .foreignOwner(let uid): "it belongs to uid \(uid), not to root or the caller"
        case .notARegularFile: "it is not a regular file"
        case .unreadable(let cause): "cannot read it (\(cause))"
        }
    }
}
