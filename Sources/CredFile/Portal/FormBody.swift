/// The fields of an `application/x-www-form-urlencoded` body (the WHATWG URL standard's
/// form parser), as the portal's forms post them: `name=value` pairs joined by `&`, `+`
/// for a space, `%XX` for any byte.
///
/// Stricter than browsers need it to be, because what is ambiguous here could decide a
/// login: a `%` not followed by two hex digits, a field name given twice (which password
/// would count?), more than ``maximumFields`` fields, or a body over ``maximumCount``
/// bytes make the whole body malformed (nil), and the portal answers it as a denial. Every
/// value is kept as ``SecretBytes`` (zeroed when released), since one of them is a password.
public struct FormFields: Sendable {
    /// The longest body read: a password of ``PasswordRules/maximumCount`` bytes, each
    /// percent-encoded (three bytes each), plus the name and the other fields.
    public static let maximumCount = 3 * PasswordRules.maximumCount + 8 * 1024
    /// The most fields a body may hold.
    public static let maximumFields = 16

    private let fields: [(name: String, value: SecretBytes)]

    /// Parses `body`; nil when it is malformed (see the type's summary).
    public init?(parsing body: some Collection<UInt8>) {
        guard body.count <= Self.maximumCount else { return nil }
        var fields: [(name: String, value: SecretBytes)] = []
        for pair in Array(body).split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            guard fields.count < Self.maximumFields else { return nil }
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            guard var nameBytes = Self.decode(pair[..<equals]) else { return nil }
            defer { nameBytes.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
            guard var value = Self.decode(equals < pair.endIndex ? pair[(equals + 1)...] : []) else { return nil }
            defer { value.withUnsafeMutableBytes { OpenSSL.cleanse($0) } }
            guard let name = String(validating: nameBytes, as: UTF8.self), !fields.contains(where: { $0.name == name })
            else { return nil }
            fields.append((name, SecretBytes(value)))
        }
        self.fields = fields
    }

    /// The value of field `name` as bytes kept secret; nil when the body has no such field.
    public func secret(_ name: String) -> SecretBytes? { fields.first { $0.name == name }?.value }

    /// The value of field `name` as text; nil when there is no such field or it is not UTF-8.
    public func text(_ name: String) -> String? {
        secret(name)?.withUnsafeBytes { String(validating: $0, as: UTF8.self) }
    }

    /// The names of the fields, in the order the body gives them.
    public var names: [String] { fields.map(\.name) }

    /// `+` as a space and `%XX` as its byte; nil for a `%` without two hex digits.
    private static func decode(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(0x20)
            } else if byte == UInt8(ascii: "%") {
                guard index + 3 <= bytes.endIndex, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2])
                else { return nil }
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return out
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
