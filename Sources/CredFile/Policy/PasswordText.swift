/// Text forms of a password for comparisons with lists and words.
enum PasswordText {
    /// The password as a lowercased `String` (after NFC, which `Password` holds), or nil
    /// when its bytes are not UTF-8.
    static func folded(_ password: Password) -> String? {
        password.bytes.withUnsafeBytes { String(validating: Array($0), as: UTF8.self) }?.lowercased()
    }
}
