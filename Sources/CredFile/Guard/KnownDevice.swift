/// A browser that signed in before as one name (SPEC §11's known devices, OWASP's "device
/// cookies"), as a valid device cookie shows it: §9's guard counts, throttles and locks
/// out the attempts on that name that carry it on a count of their own, apart from the
/// name's shared count, so an attacker who throttles or locks out the name from elsewhere
/// does not shut its owner's browsers out, and failures under the cookie lock that device
/// only.
///
/// Only ``DeviceCookies/device(cookieValue:username:now:)`` makes one, after checking the
/// cookie's MAC, its name and its age. The guard ignores it for any other name.
public struct KnownDevice: Sendable, Equatable {
    /// The name's key (its NFC bytes) the cookie was issued for.
    let nameKey: [UInt8]
    /// The device's row in the guard's failures: a keyed digest of the cookie's random id,
    /// so that neither a copy of the database nor the cookie alone names another row.
    let row: [UInt8]

    /// A device of the name with key `nameKey`, counted under `row` (16 bytes).
    init(nameKey: [UInt8], row: [UInt8]) {
        self.nameKey = nameKey
        self.row = row
    }

    /// The marker between a name's key and a device's row in a failures key. A name as
    /// typed may hold it too; the row after it is a keyed digest only the server can make.
    static let marker = Array("\u{0}device ".utf8)

    /// The key the guard counts an attempt on `nameKey` under: the device's own when the
    /// device belongs to that name, the name's otherwise.
    func guardKey(forName nameKey: [UInt8]) -> [UInt8] {
        guard nameKey == self.nameKey else { return nameKey }
        return nameKey + Self.marker + Self.hex(row)
    }

    /// Whether `key` is the failures key of one of `nameKey`'s devices.
    static func isDeviceKey(_ key: [UInt8], ofName nameKey: [UInt8]) -> Bool {
        let prefix = nameKey + marker
        return key.count == prefix.count + 32 && key.starts(with: prefix)
    }

    private static func hex(_ bytes: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        return bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }
    }
}
