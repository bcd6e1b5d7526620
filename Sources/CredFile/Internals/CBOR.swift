// libcbor for the passkeys of SPEC §14: the attestation object a browser sends at
// registration and the COSE public key it holds, read by libcbor, never by hand. In
// Internals/ with every file that imports a C module (Scripts/layers.sh); no C type
// leaves this file.
internal import CCbor

/// The CBOR that WebAuthn carries (RFC 8949), read through libcbor: one value from a
/// buffer, the maps and strings it holds, and nothing left over.
enum CBOR {
    /// The most bytes of CBOR credfile reads at once (an attestation object with `none`
    /// attestation is about 300 bytes; a credential id is at most 1,023).
    static let maximumCount = 8 << 10

    /// A decoded value: what WebAuthn's objects are made of.
    indirect enum Value: Equatable, Sendable {
        case unsigned(UInt64)
        /// A negative integer -1 - n, given as n (CBOR's major type 1).
        case negative(UInt64)
        case bytes([UInt8])
        case text([UInt8])
        /// A definite map's pairs in the order they were sent.
        case map([(Value, Value)])
        case other

        static func == (a: Value, b: Value) -> Bool {
            switch (a, b) {
            case (.unsigned(let x), .unsigned(let y)), (.negative(let x), .negative(let y)): x == y
            case (.bytes(let x), .bytes(let y)), (.text(let x), .text(let y)): x == y
            case (.map(let x), .map(let y)):
                x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
            case (.other, .other): true
            default: false
            }
        }

        /// An integer's value (-2^63 ... 2^63 - 1), or nil.
        var integer: Int64? {
            switch self {
            case .unsigned(let n) where n <= UInt64(Int64.max): Int64(n)
            case .negative(let n) where n <= UInt64(Int64.max): -1 - Int64(n)
            default: nil
            }
        }

        /// The value of `key` in a map whose keys are all different, or nil.
        func value(for key: Value) -> Value? {
            guard case .map(let pairs) = self else { return nil }
            return pairs.first { $0.0 == key }?.1
        }

        /// Whether a map's keys are all different (RFC 8949 §5.6: a map with a duplicate
        /// key is not valid; libcbor keeps both).
        var hasUniqueKeys: Bool {
            guard case .map(let pairs) = self else { return true }
            for (index, pair) in pairs.enumerated() where pairs[..<index].contains(where: { $0.0 == pair.0 }) {
                return false
            }
            return true
        }
    }

    /// The first CBOR value of `bytes` and how many bytes it took, or nil when libcbor
    /// cannot read one, it is longer than ``maximumCount``, or it holds an indefinite
    /// string or map (WebAuthn's objects are definite).
    ///
    /// The corresponding C function is `cbor_load`.
    static func first(of bytes: some Collection<UInt8>) -> (value: Value, count: Int)? {
        let bytes = Array(bytes)
        guard !bytes.isEmpty, bytes.count <= maximumCount else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> (Value, Int)? in
            guard declaresAtMostItsLength(buffer) else { return nil }
            var result = cbor_load_result()
            var loaded = cbor_load(buffer.baseAddress, buffer.count, &result)
            defer { if loaded != nil { cbor_decref(&loaded) } }
            guard let item = loaded, result.error.code == CBOR_ERR_NONE, result.read > 0, result.read <= buffer.count,
                let value = value(of: item, depth: 0)
            else { return nil }
            return (value, result.read)
        }
    }

    /// Whether the arrays and maps of `bytes` declare, all told, no more items than it has
    /// bytes: what must hold before any `cbor_load` of them, ours or libfido2's (which
    /// loads the CBOR of authenticator data itself, ``FIDO2``).
    static func declaresAtMostItsLength(_ bytes: some Collection<UInt8>) -> Bool {
        Array(bytes).withUnsafeBufferPointer { declaresAtMostItsLength($0) }
    }

    /// Whether the arrays and maps of `buffer` declare, all told, no more items than it has
    /// bytes (each item takes one byte at least). libcbor 0.8's `cbor_load` allocates a
    /// container's declared size before reading its items: a 5-byte head declaring 2^32
    /// items made it ask for gigabytes (FuzzPasskeys found it). The heads are read by
    /// libcbor's own streaming decoder, which allocates nothing.
    ///
    /// The corresponding C function is `cbor_stream_decode`.
    private static func declaresAtMostItsLength(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = buffer.baseAddress else { return true }
        var callbacks = cbor_empty_callbacks
        callbacks.array_start = { context, size in
            guard let total = context?.assumingMemoryBound(to: Int.self) else { return }
            // size_t arrives as Int: a size past Int.max is negative here.
            total.pointee = size < 0 || size > Int.max / 4 ? Int.max / 2 : min(Int.max / 2, total.pointee + size)
        }
        callbacks.map_start = { context, size in
            guard let total = context?.assumingMemoryBound(to: Int.self) else { return }
            total.pointee = size < 0 || size > Int.max / 4 ? Int.max / 2 : min(Int.max / 2, total.pointee + 2 * size)
        }
        var declared = 0
        var offset = 0
        while offset < buffer.count {
            let result = withUnsafeMutablePointer(to: &declared) { total in
                cbor_stream_decode(base + offset, buffer.count - offset, &callbacks, total)
            }
            // A malformed or cut head ends the scan: cbor_load then refuses the input.
            guard result.status == CBOR_DECODER_FINISHED, result.read > 0 else { break }
            offset += result.read
            if declared > buffer.count { return false }
        }
        return declared <= buffer.count
    }

    /// `bytes` as exactly one CBOR value (nothing after it), or nil.
    static func value(of bytes: some Collection<UInt8>) -> Value? {
        guard let (value, count) = first(of: bytes), count == bytes.count else { return nil }
        return value
    }

    /// The most maps inside maps credfile follows (a COSE key is one deep, an attestation
    /// object two).
    private static let maximumDepth = 4

    private static func value(of item: UnsafeMutablePointer<cbor_item_t>, depth: Int) -> Value? {
        if cbor_isa_uint(item) { return .unsigned(cbor_get_int(item)) }
        if cbor_isa_negint(item) { return .negative(cbor_get_int(item)) }
        if cbor_isa_bytestring(item) {
            guard cbor_bytestring_is_definite(item) else { return nil }
            let count = cbor_bytestring_length(item)
            guard count > 0, let handle = cbor_bytestring_handle(item) else { return .bytes([]) }
            return .bytes(Array(UnsafeBufferPointer(start: handle, count: count)))
        }
        if cbor_isa_string(item) {
            guard cbor_string_is_definite(item) else { return nil }
            let count = cbor_string_length(item)
            guard count > 0, let handle = cbor_string_handle(item) else { return .text([]) }
            return .text(Array(UnsafeBufferPointer(start: handle, count: count)))
        }
        if cbor_isa_map(item) {
            guard cbor_map_is_definite(item), depth < maximumDepth else { return nil }
            let count = cbor_map_size(item)
            guard count > 0, let handle = cbor_map_handle(item) else { return .map([]) }
            var pairs: [(Value, Value)] = []
            for pair in UnsafeBufferPointer(start: handle, count: count) {
                guard let key = pair.key, let value = pair.value,
                    let k = Self.value(of: key, depth: depth + 1), let v = Self.value(of: value, depth: depth + 1)
                else { return nil }
                pairs.append((k, v))
            }
            return .map(pairs)
        }
        return .other
    }
}
