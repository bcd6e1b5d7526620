/// How an entry's secret is stored, as values and without the secret: what `list`
/// shows, so nobody splits ``StoredSecret/storageDescription`` back into fields.
public struct StorageSummary: Equatable, Sendable, CustomStringConvertible {
    /// `plaintext`, `malformed`, `unsupported`, or the hash's scheme (`pbkdf2-sha256`).
    public let scheme: String
    /// The scheme of an unsupported hash as it is named (`$2y$`, `{SSHA}`, `$?$`); nil otherwise.
    public let unsupportedScheme: String?
    /// The hash's cost parameter (PBKDF2 rounds); nil when it has none.
    public let cost: Int?
    /// Whether the hash is weak under the policy asked (``HashPolicy/isWeak(_:)-(StoredSecret)``).
    public let isWeak: Bool
    /// Whether the entry is locked (`!` before the hash, SPEC §2): ``scheme`` and ``cost``
    /// are then the hash's behind the `!`.
    public private(set) var isLocked = false

    /// The same summary for the hash behind a locked entry's `!`.
    func locked() -> StorageSummary {
        var summary = self
        summary.isLocked = true
        return summary
    }

    /// What `list` prints: `plaintext`, `pbkdf2-sha256 1200000`, `unsupported $2y$`, `malformed`,
    /// `locked pbkdf2-sha256 1200000`.
    public var description: String {
        var text: [UInt8] = []
        append(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends ``description`` to `out` as UTF-8, without building a String.
    public func append(to out: inout [UInt8]) {
        if isLocked { out.append(contentsOf: "locked ".utf8) }
        out.append(contentsOf: scheme.utf8)
        if let unsupportedScheme {
            out.append(UInt8(ascii: " "))
            out.append(contentsOf: unsupportedScheme.utf8)
        } else if var cost {
            out.append(UInt8(ascii: " "))
            if cost < 0 { out.append(UInt8(ascii: "-")) }
            let start = out.count
            repeat {
                out.append(UInt8(ascii: "0") + UInt8(abs(cost % 10)))
                cost /= 10
            } while cost != 0
            out[start...].reverse()
        }
    }
}
