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
    /// they differ).
    public init(_ string: String) {
        let nfc = Unicode.nfcBytes(of: string)
        bytes = SecretBytes(nfc)
        typedBytes = string.utf8.elementsEqual(nfc) ? nil : SecretBytes(string.utf8)
    }

    /// Takes raw bytes as typed: valid UTF-8 is normalized to NFC, anything else is kept as is.
    public init(utf8 raw: some Collection<UInt8>) {
        if let s = String(validating: Array(raw), as: UTF8.self) {
            self.init(s)
        } else {
            self.init(nfc: SecretBytes(raw), typed: nil)
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
