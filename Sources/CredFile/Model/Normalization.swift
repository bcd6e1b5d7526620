extension Unicode {
    /// The UTF-8 bytes of `string` in Normalization Form C.
    ///
    /// ASCII is already NFC, so it is copied as is; anything else goes through the
    /// standard library's NFC normalizer, `String._nfcCodeUnits`. That is underscored
    /// (not public, not promised) stdlib API, used on purpose: Foundation's
    /// `precomposedStringWithCanonicalMapping` would load ICU (40 MB, +2.5 ms per start)
    /// for every login. It matched Foundation on the cases tried; if a toolchain drops
    /// it, this one function changes. Name and password comparisons all come here.
    static func nfcBytes(of string: String) -> [UInt8] {
        var s = string
        if s.utf8.allSatisfy({ $0 < 0x80 }) { return Array(s.utf8) }
        s.makeContiguousUTF8()
        return Array(s._nfcCodeUnits)
    }

    /// The NFC bytes of a field read from the file: valid UTF-8 is normalized,
    /// anything else is returned unchanged (it can never equal a valid name).
    static func nfcBytes(ofField field: some Collection<UInt8>) -> [UInt8] {
        if field.allSatisfy({ $0 < 0x80 }) { return Array(field) }
        guard let s = String(validating: Array(field), as: UTF8.self) else { return Array(field) }
        return nfcBytes(of: s)
    }
}
