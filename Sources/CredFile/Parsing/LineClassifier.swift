/// How a line ends. Each line keeps its own ending on rewrite.
public enum LineEnding: Sendable, Equatable {
    /// `\n`.
    case lf
    /// `\r\n`: the CR right before the LF belongs to the ending.
    case crlf
    /// The last line of a file that does not end with `\n`.
    case none

    /// The bytes of the ending.
    public var bytes: [UInt8] {
        switch self {
        case .lf: [0x0A]
        case .crlf: [0x0D, 0x0A]
        case .none: []
        }
    }
}

/// A `username,secret` line, split at the first comma.
public struct Entry: Sendable {
    /// The raw bytes before the first comma (empty when the line has no comma).
    public let username: ArraySlice<UInt8>
    /// The raw bytes after the first comma. Internal: a secret never leaves the library.
    let secretBytes: ArraySlice<UInt8>
    /// What the secret is.
    public let secret: StoredSecret

    /// The username as text when it is valid UTF-8, for messages.
    public var name: String? { String(validating: username, as: UTF8.self) }
    /// Whether the entry can never authenticate because it is broken.
    public var isMalformed: Bool { if case .malformed = secret { true } else { false } }
    /// Whether the entry has a name, and so shadows later entries of that name.
    public var hasName: Bool { !username.isEmpty }
    /// The NFC bytes the name is compared by.
    var key: [UInt8] { Unicode.nfcBytes(ofField: username) }
}

/// What one line of the file is.
public enum LineKind: Sendable {
    /// Empty, or only spaces and tabs.
    case blank
    /// First byte `#`.
    case comment
    /// Anything else, well-formed or not.
    case entry(Entry)
}

/// Classifies the bytes of one line (without its ending) exactly as SPEC §2 says.
enum LineClassifier {
    /// The longest line, in bytes without its ending, that can be an entry.
    static let maximumLineCount = 65_536

    static func classify(_ line: ArraySlice<UInt8>) -> LineKind {
        if line.first.map({ $0 == 0x20 || $0 == 0x09 }) ?? true, line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
            return .blank
        }
        if line.first == UInt8(ascii: "#") { return .comment }
        let comma = line.firstIndex(of: UInt8(ascii: ","))
        let username = line[line.startIndex..<(comma ?? line.startIndex)]
        let secretBytes = comma.map { line[($0 + 1)...] } ?? line[line.endIndex...]
        func entry(_ secret: StoredSecret) -> LineKind {
            .entry(Entry(username: username, secretBytes: secretBytes, secret: secret))
        }
        if let reason = lineProblem(line) { return entry(.malformed(reason: reason)) }
        if comma == nil { return entry(.malformed(reason: "no comma between username and secret")) }
        if username.isEmpty { return entry(.malformed(reason: "empty username")) }
        if secretBytes.isEmpty { return entry(.malformed(reason: "empty secret")) }
        return entry(SecretSyntax.classify(secretBytes))
    }

    /// Length, control bytes and UTF-8, in that order; nil when the line is fine.
    static func lineProblem(_ line: ArraySlice<UInt8>) -> String? {
        if line.count > maximumLineCount {
            return "line is longer than \(maximumLineCount) bytes"
        }
        if isPrintableASCII(line) { return nil }  // the common case, eight bytes at a time
        var ascii = true
        for (column, byte) in zip(1..., line) {
            if (byte < 0x20 && byte != 0x09) || byte == 0x7F {
                return "control byte \(hex(byte)) at column \(column)"
            }
            if byte >= 0x80 { ascii = false }
        }
        if !ascii && !isValidUTF8(line) { return "not valid UTF-8" }
        return nil
    }

    /// Whether every byte is in 0x20…0x7E, tested eight bytes at a time.
    static func isPrintableASCII(_ line: ArraySlice<UInt8>) -> Bool {
        line.withUnsafeBytes { isPrintableASCII($0) }
    }

    /// Whether every byte is in 0x20…0x7E, tested eight bytes at a time.
    static func isPrintableASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        do {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            var index = 0
            var flags: UInt64 = 0
            while index + 8 <= bytes.count {
                let x = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let del = x ^ (0x7F &* ones)
                // Some byte is >= 0x80, < 0x20 ("hasless"), or 0x7F ("haszero" of x ^ 0x7F…):
                // exact for "is there any such byte", which is all we ask.
                flags |= (x & highs) | ((x &- 0x20 &* ones) & ~x & highs) | ((del &- ones) & ~del & highs)
                index += 8
            }
            while index < bytes.count {
                let b = bytes[index]
                if b < 0x20 || b >= 0x7F { return false }
                index += 1
            }
            return flags == 0
        }
    }

    static func isValidUTF8(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
    }
}
