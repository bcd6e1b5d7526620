/// The language of the portal's pages (SPEC §11): Spanish, the seed's, or English, chosen
/// from the browser's `Accept-Language` (RFC 9110 §12.5.4) unless `lang` fixes one.
public enum PortalLanguage: String, Sendable, CaseIterable {
    /// Spanish: "Iniciar sesión", "Usuario", "Contraseña" — the seed's words.
    case es
    /// English.
    case en

    /// The most `Accept-Language` entries read.
    public static let maximumEntries = 32

    /// The language for a request.
    ///
    /// With `fixed` (`lang = es|en`) that one. Otherwise the listed language range with the
    /// highest `q` whose primary subtag is `es` or `en` (`es-AR` is Spanish), the earlier one
    /// on a tie; `q=0` excludes a language; `*` stands for Spanish. When the header names
    /// neither (or is missing or malformed), Spanish: the seed's language.
    /// - Parameters:
    ///   - acceptLanguage: the header's value, nil when there is none.
    ///   - fixed: the `lang` setting when it is not `auto`.
    public static func negotiate(_ acceptLanguage: [UInt8]?, fixed: PortalLanguage? = nil) -> PortalLanguage {
        if let fixed { return fixed }
        guard let acceptLanguage, acceptLanguage.count <= 4096 else { return .es }
        var best: (language: PortalLanguage, quality: Int)?
        for entry in acceptLanguage.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true)
            .prefix(maximumEntries)
        {
            let parts = entry.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
            let tag = trimmed(parts[0]).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
            let primary = String(decoding: tag.prefix { $0 != UInt8(ascii: "-") }, as: UTF8.self)
            let language: PortalLanguage
            switch primary {
            case "es", "*": language = .es
            case "en": language = .en
            default: continue
            }
            var quality = 1000
            for parameter in parts.dropFirst() {
                let text = trimmed(parameter)
                guard text.count >= 2, text[text.startIndex] | 0x20 == UInt8(ascii: "q"),
                    text[text.startIndex + 1] == UInt8(ascii: "=")
                else { continue }
                guard let value = Self.quality(Array(text.dropFirst(2))) else { quality = -1; break }
                quality = value
            }
            guard quality > 0 else { continue }
            if quality > (best?.quality ?? 0) { best = (language, quality) }
        }
        return best?.language ?? .es
    }

    /// RFC 9110's `qvalue` in thousandths: `0`, `1`, `0.5`, `0.125`, `1.000`; nil otherwise.
    private static func quality(_ text: [UInt8]) -> Int? {
        guard let first = text.first, first == 0x30 || first == 0x31, text.count <= 5 else { return nil }
        if text.count == 1 { return first == 0x31 ? 1000 : 0 }
        guard text[1] == UInt8(ascii: "."), text.count >= 3 else { return nil }
        let fraction = text[2...]
        guard fraction.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        var value = 0
        for (index, digit) in fraction.enumerated() { value += Int(digit - 0x30) * [100, 10, 1][index] }
        if first == 0x31 { return value == 0 ? 1000 : nil }
        return value
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var bytes = bytes
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return bytes
    }
}
