/// The request's `Cookie` header, read as RFC 6265 §5.4 has a browser send it
/// (`name=value` pairs joined by `; `), and only as far as the portal needs: the values of
/// one cookie name (SPEC §11's `__Host-credfile`, `__Secure-credfile`,
/// `__Host-credfile-device` and the pre-session cookie).
///
///     cookie-string = cookie-pair *( ";" OWS cookie-pair )    ; RFC 6265 §4.2.1, spaces and tabs tolerated
///     cookie-pair   = cookie-name "=" cookie-value             ; split at the first "="
///
/// Bounded: a pair longer than ``maximumPairCount`` bytes is skipped (SPEC §11: a cookie's
/// name and value stay under 4,096 bytes, which is what browsers keep), the header is read
/// up to ``maximumHeaderCount`` bytes, and at most ``maximumValues`` values of one name are
/// returned. A value in double quotes (RFC 6265's `DQUOTE *cookie-octet DQUOTE`) is returned
/// without them.
public enum CookieHeader {
    /// The longest `name=value` pair read: 4,096 bytes.
    public static let maximumPairCount = 4096
    /// The most bytes of one `Cookie` header read; the rest is ignored.
    public static let maximumHeaderCount = 16 * 1024
    /// The most values of one name returned (a sibling host may set its own cookie of the
    /// same name under a `Domain`, so more than one can arrive; each is a candidate).
    public static let maximumValues = 4

    /// The values of the cookies named `name` (case-sensitive, as RFC 6265 compares them),
    /// in the order the header gives them; empty when there is none.
    /// - Parameters:
    ///   - name: the cookie's name, for example `__Host-credfile`.
    ///   - header: the `Cookie` header's value (several `Cookie` headers joined by `; `).
    public static func values(named name: String, in header: (some Collection<UInt8>)?) -> [ArraySlice<UInt8>] {
        guard let header else { return [] }
        let wanted = Array(name.utf8)
        let bytes = Array(header.prefix(maximumHeaderCount))
        var found: [ArraySlice<UInt8>] = []
        for pair in bytes.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true) {
            var pair = pair
            while let first = pair.first, first == 0x20 || first == 0x09 { pair = pair.dropFirst() }
            while let last = pair.last, last == 0x20 || last == 0x09 { pair = pair.dropLast() }
            guard pair.count <= maximumPairCount, let equals = pair.firstIndex(of: UInt8(ascii: "=")) else {
                continue
            }
            var key = pair[..<equals]
            while let last = key.last, last == 0x20 || last == 0x09 { key = key.dropLast() }
            guard key.elementsEqual(wanted) else { continue }
            var value = pair[(equals + 1)...]
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            if value.count >= 2, value.first == 0x22, value.last == 0x22 { value = value.dropFirst().dropLast() }
            found.append(value)
            if found.count == maximumValues { break }
        }
        return found
    }
}
