import CredFile

/// The cookie I/O of SPEC §11's known devices (the decisions are the library's:
/// ``DeviceCookies``, ``KnownDevice``, §9's guard).
extension Portal {
    /// `Set-Cookie` for a device cookie (SPEC §11: `__Host-credfile-device`, one year;
    /// `SameSite=Strict`, since only the own sign-in form needs it; Decisions §11).
    func deviceCookie(_ value: String) -> String {
        "\(DeviceCookies.cookieName)=\(value); Path=/; Max-Age=\(DeviceCookies.lifetime); Secure; HttpOnly; SameSite=Strict"
    }

    /// The known device the request's device cookie shows for `username`, if any (the
    /// first of at most four values that is valid).
    func device(_ request: ServeRequest, username: String) -> KnownDevice? {
        CookieHeader.values(named: DeviceCookies.cookieName, in: request.header("cookie")).lazy.compactMap {
            self.devices.device(cookieValue: $0, username: username.utf8, now: PortalRoutes.now())
        }.first
    }
}
