/// An invitation code (SPEC §12): 15 random bytes (120 bits, over §12's 100) written as 24
/// characters of Crockford's base32 in six groups of four, `7K3M-Q9XD-…`, so that a person
/// can read it aloud and type it: no `I`, `L`, `O` or `U`; reading forgives what people
/// mistype (lower case; `O` for `0`; `I` or `L` for `1`; spaces and hyphens anywhere).
///
/// Only the code's SHA-256 is stored (`digest`); the code itself is printed once by
/// `credfile invite` and never kept.
public struct InvitationCode: Sendable, CustomStringConvertible {
    /// The random bytes of a code.
    public static let byteCount = 15
    /// The characters of a code, without separators.
    public static let characterCount = 24
    /// Crockford's alphabet: the digits and the letters but `I`, `L`, `O`, `U`.
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// The code's bytes, zeroed when released.
    let bytes: SecretBytes

    /// A new random code.
    /// - Throws: ``CredFileError/Code/crypto`` when `RAND_bytes` fails.
    public static func generate() throws -> InvitationCode {
        var random = try OpenSSL.randomBytes(count: byteCount)
        defer { random.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
        return InvitationCode(bytes: SecretBytes(random))
    }

    private init(bytes: SecretBytes) { self.bytes = bytes }

    /// Reads a code as a person typed it: nil unless it holds exactly 24 characters of the
    /// alphabet (after the forgiving mappings), with any number of spaces and hyphens.
    /// At most 200 bytes are read: anything longer is no code.
    public init?(parsing text: some Collection<UInt8>) {
        guard text.count <= 200 else { return nil }
        var value: [UInt8] = []
        value.reserveCapacity(Self.byteCount)
        var accumulator: UInt32 = 0
        var bits = 0
        var characters = 0
        for byte in text {
            if byte == UInt8(ascii: "-") || byte == UInt8(ascii: " ") { continue }
            guard let digit = Self.digit(byte) else { return nil }
            characters += 1
            guard characters <= Self.characterCount else { return nil }
            accumulator = (accumulator << 5) | UInt32(digit)
            bits += 5
            if bits >= 8 {
                bits -= 8
                value.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard characters == Self.characterCount, value.count == Self.byteCount else { return nil }
        bytes = SecretBytes(value)
        value.withUnsafeMutableBytes { OpenSSL.cleanse($0) }
    }

    /// The value of one typed character, or nil.
    private static func digit(_ byte: UInt8) -> UInt8? {
        let upper = (0x61...0x7A).contains(byte) ? byte - 0x20 : byte
        switch upper {
        case UInt8(ascii: "O"): return 0
        case UInt8(ascii: "I"), UInt8(ascii: "L"): return 1
        default:
            guard let index = alphabet.firstIndex(of: upper) else { return nil }
            return UInt8(index)
        }
    }

    /// The code as printed: `XXXX-XXXX-XXXX-XXXX-XXXX-XXXX`.
    public var text: String {
        var characters: [UInt8] = []
        bytes.withUnsafeBytes { raw in
            var accumulator: UInt32 = 0
            var bits = 0
            for byte in raw {
                accumulator = (accumulator << 8) | UInt32(byte)
                bits += 8
                while bits >= 5 {
                    bits -= 5
                    characters.append(Self.alphabet[Int((accumulator >> UInt32(bits)) & 31)])
                }
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        var out = ""
        for (offset, character) in characters.enumerated() {
            if offset > 0, offset % 4 == 0 { out += "-" }
            out.unicodeScalars.append(Unicode.Scalar(character))
        }
        return out
    }

    /// The SHA-256 of the code's bytes: what the state database keeps.
    var digest: [UInt8] { bytes.withUnsafeBytes { OpenSSL.sha256($0) } }

    /// `InvitationCode(redacted)`: a code is a secret until it is used.
    public var description: String { "InvitationCode(redacted)" }
}
