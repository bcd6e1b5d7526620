/// A browser's `clientDataJSON` (WebAuthn §5.8.1), read by a small strict JSON reader
/// (RFC 8259): the library is Foundation-free, and the bytes must be read exactly as the
/// browser hashed them (the signature covers their SHA-256, not a re-encoding).
///
/// Only the members credfile checks are kept: `type`, `challenge` (base64url of the
/// server's 32 random bytes), `origin`, and `crossOrigin` (absent or false). Any other
/// member (`tokenBinding`, `topOrigin`, Chrome's `other_keys_can_be_added_here`) is read
/// and ignored, as WebAuthn §7.1 asks.
public struct ClientData: Sendable, Equatable {
    /// `webauthn.create` or `webauthn.get`.
    public let type: String
    /// The challenge's bytes (decoded from base64url).
    public let challenge: [UInt8]
    /// The origin the browser saw, as it wrote it (`https://example.com`).
    public let origin: String
    /// `crossOrigin`: true when the page ran in a frame of another origin.
    public let crossOrigin: Bool

    /// The most bytes of a `clientDataJSON` credfile reads (browsers send about 200).
    public static let maximumCount = 4096

    /// Parses `bytes`.
    /// - Returns: nil when they are not one JSON object (UTF-8, no duplicate member, no
    ///   more than ``maximumCount`` bytes) with `type`, `challenge` and `origin` strings, a
    ///   challenge in unpadded base64url, and `crossOrigin`, when present, a boolean.
    public init?(parsing bytes: some Collection<UInt8>) {
        guard bytes.count <= Self.maximumCount, case .object(let members)? = JSONReader.value(of: Array(bytes))
        else { return nil }
        func string(_ name: String) -> String? {
            guard case .string(let value)? = members.first(where: { $0.key == name })?.value else { return nil }
            return value
        }
        guard let type = string("type"), let text = string("challenge"), let origin = string("origin"),
            let challenge = Base64URL.decode(Array(text.utf8))
        else { return nil }
        var crossOrigin = false
        if let member = members.first(where: { $0.key == "crossOrigin" }) {
            guard case .bool(let value) = member.value else { return nil }
            crossOrigin = value
        }
        self.type = type
        self.challenge = challenge
        self.origin = origin
        self.crossOrigin = crossOrigin
    }
}

/// A strict JSON reader (RFC 8259) for ``ClientData``: UTF-8 only, no duplicate member
/// names, no trailing bytes but white space, no lone surrogate in `\u` escapes, and at most
/// ``maximumDepth`` nested arrays and objects.
enum JSONReader {
    /// A JSON value; numbers are kept as their text (credfile reads none).
    indirect enum Value: Equatable, Sendable {
        case object([(key: String, value: Value)])
        case array([Value])
        case string(String)
        case number(String)
        case bool(Bool)
        case null

        static func == (a: Value, b: Value) -> Bool {
            switch (a, b) {
            case (.object(let x), .object(let y)):
                x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
            case (.array(let x), .array(let y)): x == y
            case (.string(let x), .string(let y)), (.number(let x), .number(let y)): x == y
            case (.bool(let x), .bool(let y)): x == y
            case (.null, .null): true
            default: false
            }
        }
    }

    /// The most arrays and objects inside each other.
    static let maximumDepth = 16

    /// `bytes` as one JSON value, or nil when they are not exactly one.
    static func value(of bytes: [UInt8]) -> Value? {
        var reader = Reader(bytes: bytes)
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        return reader.index == bytes.count ? value : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func take(_ literal: String) -> Bool {
            let expected = Array(literal.utf8)
            guard bytes.count - index >= expected.count, bytes[index..<index + expected.count].elementsEqual(expected)
            else { return false }
            index += expected.count
            return true
        }

        mutating func value(depth: Int) -> Value? {
            skipSpace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"): return object(depth: depth + 1)
            case UInt8(ascii: "["): return array(depth: depth + 1)
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "t"): return take("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return take("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return take("null") ? .null : nil
            default: return number()
            }
        }

        mutating func object(depth: Int) -> Value? {
            guard depth <= JSONReader.maximumDepth else { return nil }
            index += 1
            var members: [(key: String, value: Value)] = []
            skipSpace()
            if take("}") { return .object(members) }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string(),
                    !members.contains(where: { $0.key == key })
                else { return nil }
                skipSpace()
                guard take(":"), let value = value(depth: depth) else { return nil }
                members.append((key, value))
                skipSpace()
                if take("}") { return .object(members) }
                guard take(",") else { return nil }
            }
        }

        mutating func array(depth: Int) -> Value? {
            guard depth <= JSONReader.maximumDepth else { return nil }
            index += 1
            var elements: [Value] = []
            skipSpace()
            if take("]") { return .array(elements) }
            while true {
                guard let element = value(depth: depth) else { return nil }
                elements.append(element)
                skipSpace()
                if take("]") { return .array(elements) }
                guard take(",") else { return nil }
            }
        }

        /// RFC 8259 §6's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        mutating func number() -> Value? {
            let start = index
            func digits() -> Int {
                let first = index
                while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
                return index - first
            }
            _ = take("-")
            if take("0") {
            } else if digits() == 0 {
                return nil
            }
            if take("."), digits() == 0 { return nil }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if !take("+") { _ = take("-") }
                guard digits() > 0 else { return nil }
            }
            return .number(String(decoding: bytes[start..<index], as: UTF8.self))
        }

        /// A string's text, its escapes decoded; nil for a control byte, a bad escape, a
        /// lone surrogate or bytes that are not UTF-8.
        mutating func string() -> String? {
            index += 1
            var out: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let scalar = unicodeEscape() else { return nil }
                        out += Array(String(Character(scalar)).utf8)
                    default: return nil
                    }
                case 0x00..<0x20: return nil
                default: out.append(byte)
                }
            }
            return nil
        }

        /// The scalar of `XXXX` after `\u` (and of a low surrogate's `\uXXXX` after a high one).
        mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let high = hex4() else { return nil }
            if (0xD800..<0xDC00).contains(high) {
                guard take("\\u"), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                return Unicode.Scalar(0x10000 + (high - 0xD800) << 10 + (low - 0xDC00))
            }
            return Unicode.Scalar(high)  // nil for a lone low surrogate
        }

        mutating func hex4() -> UInt32? {
            guard bytes.count - index >= 4 else { return nil }
            var value: UInt32 = 0
            for byte in bytes[index..<index + 4] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            index += 4
            return value
        }
    }
}
