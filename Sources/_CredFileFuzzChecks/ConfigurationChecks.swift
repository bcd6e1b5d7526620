import CredFile

extension FuzzChecks {
    // MARK: FuzzConfiguration

    /// Parses `input` as a configuration file (SPEC §5) and checks it against the naive
    /// ``ReferenceConfiguration``: the same verdict, the same line for a refusal, the same
    /// settings in the same parts for an acceptance; an error names `FILE:LINE` and never
    /// the value; a file rebuilt from the settings parses to the same settings.
    public static func configuration(_ input: [UInt8]) throws(FuzzFailure) {
        let expected = ReferenceConfiguration.parse(input)
        switch (ConfigurationSyntax.parse(input), expected) {
        case (.success(let parsed), .accepted(let settings)):
            let got = ReferenceConfiguration.flatten(parsed)
            try expect(
                got == settings,
                "accepted with \(got.count) settings, the reference reads \(settings.count) (or others)")
            // Canonical text of the same settings reads back the same (line numbers aside).
            var text = ""
            var part: String? = nil
            for setting in settings {
                if setting.part != part, let path = setting.part { text += "[\(path)]\n" }
                part = setting.part
                text += "\(setting.name) = \(setting.raw)\n"
            }
            guard case .success(let again) = ConfigurationSyntax.parse(Array(text.utf8)) else {
                throw FuzzFailure(description: "the canonical text of an accepted file is refused")
            }
            let reread = ReferenceConfiguration.flatten(again).map { ($0.part, $0.name, $0.value) }
            try expect(
                reread.elementsEqual(settings.map { ($0.part, $0.name, $0.value) }, by: ==),
                "the canonical text reads otherwise")
        case (.failure(let problem), .refused(let line)):
            try expect(problem.line == line, "refused at line \(problem.line), the reference refuses line \(line)")
            let refusal: CredFileError?
            do {
                _ = try CredFileConfiguration(parsing: input, source: "fuzz.conf")
                refusal = nil
            } catch {
                refusal = error
            }
            guard let refusal else {
                throw FuzzFailure(description: "CredFileConfiguration accepted what ConfigurationSyntax refused")
            }
            let place = line > 0 ? "fuzz.conf:\(line): " : "fuzz.conf: "
            try expect(
                refusal.code == .usage && refusal.message == place + problem.description,
                "the error is not \(place)<reason>")
            // A bad value is named by its key and what the key takes, never quoted.
            if case .badValue(let key, let expected) = problem.reason {
                let kind = Setting.keys.first { $0.name == key }?.kind
                try expect(
                    kind?.expectation == expected && problem.description == "\(key) takes \(expected)",
                    "a bad value's message")
            }
        case (.success, .refused(let line)):
            throw FuzzFailure(description: "accepted; the reference refuses line \(line)")
        case (.failure(let problem), .accepted):
            throw FuzzFailure(description: "refused at line \(problem.line) (\(problem)); the reference accepts")
        }
    }
}

/// A second, naive reading of SPEC §5's configuration file (the grammar in
/// `ConfigurationSyntax`'s documentation), written without the library's parser: bytes
/// split at LF by a plain loop, digits added up by hand, the limits as literals.
package enum ReferenceConfiguration {
    /// One setting as the reference reads it.
    public struct Read: Equatable, Sendable {
        /// The section's path, nil for the top part.
        public var part: String?
        /// The key.
        public var name: String
        /// The value, read as the key's kind.
        public var value: SettingValue
        /// The line (1-based).
        public var line: Int
        /// The value as written (trimmed); not compared.
        public var raw: String = ""

        /// Equal in everything but ``raw``.
        public static func == (a: Self, b: Self) -> Bool {
            a.part == b.part && a.name == b.name && a.value == b.value && a.line == b.line
        }
    }

    /// The reference's verdict.
    public enum Verdict: Equatable {
        case accepted([Read])
        /// The first broken line (0: the whole file).
        case refused(line: Int)
    }

    static let lineLimit = 8192
    static let sizeLimit = 1_048_576

    /// The lines after an optional BOM, without their LF (a last line without LF counts).
    static func lines(_ input: [UInt8]) -> [[UInt8]] {
        var bytes = input[...]
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { bytes = bytes.dropFirst(3) }
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        var open = false
        for byte in bytes {
            if byte == 10 {
                lines.append(current)
                current = []
                open = false
            } else {
                current.append(byte)
                open = true
            }
        }
        if open { lines.append(current) }
        return lines
    }

    static func trim(_ bytes: [UInt8]) -> [UInt8] {
        var start = 0
        var end = bytes.count
        while start < end && (bytes[start] == 32 || bytes[start] == 9) { start += 1 }
        while end > start && (bytes[end - 1] == 32 || bytes[end - 1] == 9) { end -= 1 }
        return Array(bytes[start..<end])
    }

    /// Decimal digits only, added up by hand (nil past 18 digits: beyond every range).
    static func decimal(_ text: [UInt8]) -> Int? {
        guard !text.isEmpty, text.count <= 18 else { return nil }
        var n = 0
        for byte in text {
            guard byte >= 48 && byte <= 57 else { return nil }
            n = n * 10 + Int(byte - 48)
        }
        return n
    }

    static func value(_ raw: [UInt8], _ kind: SettingKind) -> SettingValue? {
        let text = String(decoding: raw, as: UTF8.self)
        switch kind {
        case .flag:
            if text == "yes" || text == "true" { return .flag(true) }
            if text == "no" || text == "false" { return .flag(false) }
            return nil
        case .wholeNumber(let range):
            // Leading zeros are allowed (`01000`); past them, 18 digits is more than any
            // range holds, so a longer run of digits is out of range.
            guard !raw.isEmpty, raw.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            let significant = Array(raw.drop { $0 == 48 })
            guard let n = significant.isEmpty ? 0 : decimal(significant), n >= range.lowerBound, n <= range.upperBound
            else {
                return nil
            }
            return .number(n)
        case .seconds(let range):
            let pieces = raw.split(separator: 46, omittingEmptySubsequences: false)
            guard pieces.count <= 2, pieces.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 >= 48 && $0 <= 57 } }),
                let seconds = Double(text), seconds >= range.lowerBound, seconds <= range.upperBound
            else { return nil }
            return .seconds(seconds)
        case .choice(let words):
            return words.contains(text) ? .text(text) : nil
        case .path, .text:
            return raw.isEmpty ? nil : .text(text)
        case .fileMode:
            guard !raw.isEmpty, raw.count <= 5, raw.allSatisfy({ $0 >= 48 && $0 <= 55 }) else { return nil }
            var mode = 0
            for byte in raw { mode = mode * 8 + Int(byte - 48) }
            return mode <= 4095 ? .number(mode) : nil
        case .size(let range):
            // Digits without a leading zero, then nothing or one unit of 1024^1…1024^4.
            let units: [(String, Int)] = [
                ("KiB", 1), ("MiB", 2), ("GiB", 3), ("TiB", 4), ("K", 1), ("M", 2), ("G", 3), ("T", 4),
            ]
            let unit = units.first { text.hasSuffix($0.0) }
            let digits = Array(raw.dropLast(unit?.0.utf8.count ?? 0))
            guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                digits.count == 1 || digits[0] != 48, let n = decimal(digits)
            else { return nil }
            let factor = (0..<(unit?.1 ?? 0)).reduce(1.0) { value, _ in value * 1024 }
            let bytes = Double(n) * factor
            guard bytes >= Double(range.lowerBound), bytes <= Double(range.upperBound) else { return nil }
            return .number(Int(bytes))
        }
    }

    /// Reads `input` as SPEC §5 says.
    public static func parse(_ input: [UInt8]) -> Verdict {
        if input.count > sizeLimit { return .refused(line: 0) }
        var kinds: [String: Setting] = [:]
        for key in Setting.keys { kinds[key.name] = key }
        var read: [Read] = []
        var part: String? = nil
        var seen: Set<String> = []  // "part\u{0}name" of the non-repeatable keys set
        for (index, original) in lines(input).enumerated() {
            let number = index + 1
            var line = original
            if line.last == 13 { line.removeLast() }
            if line.count > lineLimit { return .refused(line: number) }
            if line.contains(where: { ($0 < 32 && $0 != 9) || $0 == 127 }) { return .refused(line: number) }
            if String(validating: line, as: UTF8.self) == nil { return .refused(line: number) }
            let content = trim(line)
            if content.isEmpty || content[0] == 35 { continue }
            if content[0] == 91 {
                guard content.count >= 2, content[content.count - 1] == 93 else { return .refused(line: number) }
                let path = trim(Array(content[1..<(content.count - 1)]))
                guard path.first == 47 else { return .refused(line: number) }
                part = String(decoding: path, as: UTF8.self)
                continue
            }
            guard let equals = content.firstIndex(of: 61) else { return .refused(line: number) }
            let key = trim(Array(content[..<equals]))
            guard !key.isEmpty, key.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 }) else {
                return .refused(line: number)
            }
            let name = String(decoding: key, as: UTF8.self)
            let raw = trim(Array(content[(equals + 1)...]))
            guard let setting = kinds[name], let value = value(raw, setting.kind) else {
                return .refused(line: number)
            }
            if !setting.isRepeatable {
                let mark = (part ?? "") + "\u{0}" + name  // sections start with "/", the top part is ""
                if seen.contains(mark) { return .refused(line: number) }
                seen.insert(mark)
            }
            read.append(
                Read(part: part, name: name, value: value, line: number, raw: String(decoding: raw, as: UTF8.self)))
        }
        return .accepted(read)
    }

    /// The library's parse as the reference's list.
    static func flatten(_ parsed: ConfigurationSyntax.Parsed) -> [Read] {
        parsed.top.map { Read(part: nil, name: $0.setting.name, value: $0.value, line: $0.line) }
            + parsed.sections.flatMap { section in
                section.entries.map { Read(part: section.path, name: $0.setting.name, value: $0.value, line: $0.line) }
            }
    }
}
