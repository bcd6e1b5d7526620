/// Facts about this build of credfile.
package enum CredFileInfo {
    /// The libcrypto credfile runs with, e.g. `OpenSSL 3.0.19 27 Jan 2026`.
    public static var openSSLVersion: String { OpenSSL.version }
}
