import CQREncode

#if canImport(Glibc)
import Glibc
#endif

/// A QR code drawn with Unicode half blocks for a terminal (`otp --enroll`, SPEC §14):
/// two modules a character cell, dark modules as the terminal's background colour on a
/// light quiet zone of 4 modules, as `qrencode -t UTF8` draws them.
enum TerminalQR {
    /// The lines of `text`'s QR code (error correction M, 8-bit mode), or nil when
    /// libqrencode cannot encode it.
    static func lines(_ text: String) -> [String]? {
        guard let (width, modules) = modules(text) else { return nil }
        let quiet = 4
        // Whether the module at (row, column) of the bordered symbol is dark.
        func dark(_ row: Int, _ column: Int) -> Bool {
            let (r, c) = (row - quiet, column - quiet)
            guard (0..<width).contains(r), (0..<width).contains(c) else { return false }
            return modules[r * width + c]
        }
        let size = width + 2 * quiet
        var lines: [String] = []
        for row in stride(from: 0, to: size, by: 2) {
            var line = ""
            for column in 0..<size {
                // Light modules are drawn (block characters), dark ones are left blank.
                switch (!dark(row, column), !dark(row + 1, column)) {
                case (true, true): line += "\u{2588}"
                case (true, false): line += "\u{2580}"
                case (false, true): line += "\u{2584}"
                case (false, false): line += " "
                }
            }
            lines.append(line)
        }
        return lines
    }

    /// The modules of `text`'s QR code (error correction M, 8-bit mode), row by row, true
    /// for dark, without a quiet zone; nil when libqrencode cannot encode it. The terminal's
    /// drawing and the sign-in page's SVG (SPEC §14) both start from it.
    ///
    /// The corresponding C function is `QRcode_encodeString8bit`.
    static func modules(_ text: String) -> (width: Int, dark: [Bool])? {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let data = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
        return (width, data.map { $0 & 1 == 1 })
    }
}
