/// How credfile prints names and paths (SPEC §5): the one escaping, used by the
/// library's findings and by every line of the CLI that shows a user or a path, so a
/// name cannot move the cursor, forge a line of output, or pass for another name.
///
/// Escaped as `\u{…}` (lowercase hex): C0 and C1 controls and DEL, bidi controls
/// (U+061C, U+200E/F, U+202A–202E, U+2066–2069), format and other invisible characters
/// (category Cf such as U+200B–200D, U+2060, U+FEFF, U+00AD; every default-ignorable
/// code point; line and paragraph separators; spaces other than U+0020; unassigned
/// code points), and the backslash itself, so every escape reads one way. Bytes that
/// are not valid UTF-8 are shown as `\xFF`.
public enum Escaped {
    /// A username (raw bytes from the file, or typed) for a person to read.
    public static func name(_ bytes: some Collection<UInt8>) -> String { escape(Array(bytes), also: nil) }

    /// Appends ``name(_:)-(Collection<UInt8>)`` of `bytes` to `out` as UTF-8, without
    /// building a String for the common name (what `list` does a million times).
    public static func appendName(_ bytes: ArraySlice<UInt8>, to out: inout [UInt8]) {
        bytes.withUnsafeBytes { appendName($0, to: &out) }
    }

    /// ``appendName(_:to:)-(ArraySlice<UInt8>,_)`` of raw bytes.
    static func appendName(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        if bytes.allSatisfy(isPlain) { out.append(contentsOf: bytes) } else { out.append(contentsOf: name(bytes).utf8) }
    }

    /// Printable ASCII other than the backslash: shown as itself.
    private static func isPlain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") }

    /// A username given as text.
    public static func name(_ text: String) -> String { escape(Array(text.utf8), also: nil) }

    /// A path for a person to read.
    public static func path(_ path: String) -> String { escape(Array(path.utf8), also: nil) }

    /// A path given as bytes.
    public static func path(_ bytes: some Collection<UInt8>) -> String { escape(Array(bytes), also: nil) }

    /// `'name'`: the escaped name in single quotes, a quote inside it escaped too, as
    /// the library's finding messages show names.
    public static func quotedName(_ bytes: some Collection<UInt8>) -> String {
        "'" + escape(Array(bytes), also: "'") + "'"
    }

    /// Whether `scalar` is shown as `\u{…}`.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "\\" { return true }
        if scalar.value >= 0x20 && scalar.value < 0x7F { return false }  // printable ASCII
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate, .privateUse: return true
        case .spaceSeparator: return true  // U+0020 returned above; NBSP and the wide spaces hide
        default: return properties.isDefaultIgnorableCodePoint  // Hangul fillers, variation selectors, …
        }
    }

    /// `0x1F`: a byte for a message.
    static func hexByte(_ byte: UInt8) -> String { "0x" + hexDigits(byte) }

    private static func hexDigits(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
    }

    private static func escape(_ bytes: [UInt8], also extra: Unicode.Scalar?) -> String {
        // The common name: printable ASCII without a backslash (or the extra character).
        let plain = bytes.allSatisfy { isPlain($0) && Unicode.Scalar($0) != extra }
        if plain { return String(decoding: bytes, as: UTF8.self) }
        var out = ""
        out.reserveCapacity(bytes.count)
        var offset = 0
        while offset < bytes.count {
            // One scalar from `offset`; a bad sequence shows its first byte as `\x..` and
            // decoding starts again at the next byte.
            var iterator = bytes[offset...].makeIterator()
            var decoder = UTF8()
            guard case .scalarValue(let scalar) = decoder.decode(&iterator) else {
                out += "\\x" + hexDigits(bytes[offset])
                offset += 1
                continue
            }
            if needsEscape(scalar) || scalar == extra {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
            offset += UTF8.width(scalar)
        }
        return out
    }
}
