/// The one home of the file's byte rules (SPEC §2): what a line, a line ending, a
/// blank, a comment, a name field, a control byte, printable ASCII and name equality
/// are. The line classifier, the streaming lookup, `check`'s fast path and the username
/// rules all ask here; none of them restates a rule. (What a *secret* is belongs to
/// ``SecretSyntax``; the fast byte loops these rules use, which know no rule, are
/// ``Bytes``'.)
///
///     file    = [BOM] *(line LF) [line]        ; CR before LF belongs to the ending
///     line    = blank / comment / entry
///     blank   = *(SP / TAB)
///     comment = "#" *byte
///     entry   = username "," secret            ; split at the first comma
enum FileSyntax {
    static let lf: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
    static let tab: UInt8 = 0x09
    static let space: UInt8 = 0x20
    static let comma = UInt8(ascii: ",")
    static let commentMark = UInt8(ascii: "#")
    /// The UTF-8 byte order mark, skipped at the very start of a file.
    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The longest line, in bytes without its ending, that can be an entry.
    static let maximumLineLength = 65_536

    // MARK: Lines

    /// Where the content of the file's first line starts: after a BOM, if there is one.
    static func firstLineStart(_ bytes: UnsafeRawBufferPointer) -> Int { bytes.starts(with: bom) ? bom.count : 0 }

    /// The content and ending of the line that starts at `start` and runs up to
    /// `next` (the next line's start, or the end of the file): LF, CR LF, or none. (A
    /// `next` before `start`, from starts found in bytes that changed since, gives an
    /// empty line, never an inverted range.)
    static func split(_ bytes: UnsafeRawBufferPointer, lineFrom start: Int, to next: Int) -> (Range<Int>, LineEnding) {
        guard next > start else { return (start..<start, .none) }
        guard bytes[next - 1] == lf else { return (start..<next, .none) }
        if next - 1 > start, bytes[next - 2] == cr { return (start..<(next - 2), .crlf) }
        return (start..<(next - 1), .lf)
    }

    /// The content and ending of the line that starts at `start`.
    static func line(at start: Int, in bytes: UnsafeRawBufferPointer) -> (Range<Int>, LineEnding) {
        let next = Bytes.index(of: lf, in: bytes, from: start, to: bytes.count).map { $0 + 1 } ?? bytes.count
        return split(bytes, lineFrom: start, to: next)
    }

    /// Empty, or only spaces and tabs: never holds a user.
    static func isBlank(_ line: some Collection<UInt8>) -> Bool { line.allSatisfy { $0 == space || $0 == tab } }

    /// First byte `#`: never holds a user.
    static func isComment(_ line: some Collection<UInt8>) -> Bool { line.first == commentMark }

    /// A control byte a line must not hold: 0x00–0x08, 0x0A–0x1F, 0x7F (TAB is allowed).
    static func isControl(_ byte: UInt8) -> Bool { (byte < 0x20 && byte != tab) || byte == 0x7F }

    /// Why a line cannot be an entry whatever its fields are: its length, a control byte,
    /// or invalid UTF-8, in that order; nil when the line is fine.
    static func lineProblem(_ line: ArraySlice<UInt8>) -> MalformedReason? {
        if line.count > maximumLineLength { return .lineTooLong(limit: maximumLineLength) }
        if Bytes.isPrintableASCII(line) { return nil }  // the common case, eight bytes at a time
        var ascii = true
        for (column, byte) in zip(1..., line) {
            if isControl(byte) { return .controlByte(byte, column: column) }
            if byte >= 0x80 { ascii = false }
        }
        if !ascii && !Bytes.isValidUTF8(line) { return .invalidUTF8 }
        return nil
    }

    // MARK: Names

    /// The name field of an entry line: the bytes before the first comma (nil: no comma).
    static func nameField(of line: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        line.firstIndex(of: comma).map { line[line.startIndex..<$0] }
    }

    /// The bytes a name is compared by: its NFC form when it is valid UTF-8, the bytes
    /// unchanged otherwise (they can never equal a valid name). Names are case-sensitive.
    static func nameKey(_ field: some Collection<UInt8>) -> [UInt8] { Unicode.nfcBytes(ofField: field) }

    /// The comparison bytes of a name given as text (NFC).
    static func nameKey(of name: String) -> [UInt8] { Unicode.nfcBytes(of: name) }

    /// Whether a raw name field from the file names `key` (NFC bytes): equal bytes, or,
    /// when the field is not ASCII (ASCII is already NFC), equal after normalization.
    static func field(_ field: UnsafeRawBufferPointer, names key: [UInt8]) -> Bool {
        if field.count == key.count, key.withUnsafeBytes({ $0.elementsEqual(field) }) { return true }
        guard !Bytes.isASCII(field) else { return false }
        return nameKey(field) == key
    }
}
