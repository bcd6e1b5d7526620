/// Bytes that must not outlive their use: a password or a derived key.
///
/// The bytes live in memory this class owns; `deinit` zeroes them with
/// `OPENSSL_cleanse`. `==` is constant-time and `description` never shows them.
public final class SecretBytes: Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    @unchecked Sendable
{
    // Immutable after init (only `deinit` writes, when no other reference exists).
    private let storage: UnsafeMutableRawBufferPointer

    /// Copies `bytes` into zeroed-on-release storage.
    public init(_ bytes: some Collection<UInt8>) {
        storage = .allocate(byteCount: max(bytes.count, 1), alignment: 16)
        _ = UnsafeMutableRawBufferPointer(rebasing: storage[0..<bytes.count]).initializeMemory(
            as: UInt8.self, from: bytes)
        count = bytes.count
    }

    /// Allocates `count` zero bytes and lets `fill` write them.
    init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        storage = .allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        self.count = count
        // Every stored property is set, so if `fill` throws, `deinit` runs and cleanses and
        // frees the buffer: freeing it here as well would be a double free.
        try fill(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }

    deinit {
        OpenSSL.cleanse(storage)
        storage.deallocate()
    }

    /// The number of bytes.
    public let count: Int

    /// Calls `body` with the bytes; they must not escape it.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// Constant-time equality of two secrets (`CRYPTO_memcmp`); lengths are not hidden.
    public static func == (a: SecretBytes, b: SecretBytes) -> Bool {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in OpenSSL.constantTimeEqual(x, y) } }
    }

    /// `SecretBytes(redacted)`: the bytes are never printed.
    public var description: String { "SecretBytes(redacted)" }
    /// `SecretBytes(redacted)`.
    public var debugDescription: String { description }
}

/// A password: its NFC-normalized UTF-8 bytes, zeroed when released.
///
/// Turn input into a `Password` as early as possible. Swift's `String` cannot be
/// zeroed, so the shorter a password lives as a `String`, the better.
public struct Password: CustomStringConvertible, CustomDebugStringConvertible, Sendable {
    /// The NFC-normalized UTF-8 bytes: what credfile hashes and compares.
    public let bytes: SecretBytes
    /// The bytes as typed when they differ from ``bytes`` (an NFD "contraseña"), else nil.
    /// Only tried against other programs' hashes, which hash the bytes as given (SPEC §3.2).
    let typedBytes: SecretBytes?

    /// Normalizes `string` to NFC and keeps its UTF-8 bytes (and the bytes as given when
    /// they differ). The normalized copy made on the way is zeroed (the `String` is the
    /// caller's).
    public init(_ string: String) {
        var nfc = Unicode.nfcBytes(of: string)
        defer { Self.zero(&nfc) }
        bytes = SecretBytes(nfc)
        typedBytes = string.utf8.elementsEqual(nfc) ? nil : SecretBytes(string.utf8)
    }

    /// Takes raw bytes as typed: valid UTF-8 is normalized to NFC, anything else is kept as is.
    ///
    /// No copy outlives the call unzeroed: ASCII (its own NFC form) goes straight into
    /// zeroed-on-release storage; other bytes pass through a `String` (the normalizer's
    /// input) whose storage is zeroed before it is released, and an array that is too.
    /// (The standard library's normalizer keeps no copy of its own beyond its result.)
    public init(utf8 raw: some Collection<UInt8>) {
        if raw.allSatisfy({ $0 < 0x80 }) {
            self.init(nfc: SecretBytes(raw), typed: nil)
            return
        }
        let typed = SecretBytes(raw)
        let normalized: SecretBytes? = typed.withUnsafeBytes { given in
            guard var text = String(validating: given, as: UTF8.self) else { return nil }
            defer { Self.zero(&text) }
            var nfc = Unicode.nfcBytes(of: text)
            defer { Self.zero(&nfc) }
            return SecretBytes(nfc)
        }
        guard let normalized else {
            self.init(nfc: typed, typed: nil)  // not UTF-8: kept as is
            return
        }
        self.init(nfc: normalized, typed: normalized == typed ? nil : typed)
    }

    /// Overwrites the bytes of `bytes` with zeros (`OPENSSL_cleanse`).
    private static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { OpenSSL.cleanse($0) }
    }

    /// Overwrites the storage of `text` with zeros, when it has storage of its own (a
    /// string of more than 15 UTF-8 bytes): it held a password. `text` must not be used after.
    private static func zero(_ text: inout String) {
        text.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return }
            // The storage is this string's alone (made above from the bytes), so writing
            // through the read-only view changes nothing anyone reads again.
            OpenSSL.cleanse(
                UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(mutating: base), count: utf8.count))
        }
    }

    private init(nfc: SecretBytes, typed: SecretBytes?) {
        bytes = nfc
        typedBytes = typed
    }

    /// The forms to try against another program's hash: NFC, then the typed bytes when
    /// they differ. The login's timing budget counts one policy hash per form.
    var peerForms: [SecretBytes] { typedBytes.map { [bytes, $0] } ?? [bytes] }

    /// `Password(redacted)`.
    public var description: String { "Password(redacted)" }
    /// `Password(redacted)`.
    public var debugDescription: String { description }
}
