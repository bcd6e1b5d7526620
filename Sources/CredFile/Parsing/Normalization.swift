extension Unicode {
    /// The UTF-8 bytes of `string` in Normalization Form C.
    ///
    /// ASCII is already NFC, so it is copied as is; anything else goes through the
    /// standard library's NFC normalizer (no Foundation, no ICU start-up cost).
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
