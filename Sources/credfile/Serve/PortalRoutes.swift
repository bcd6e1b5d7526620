import CredFile

#if canImport(Glibc)
import Glibc
#endif

/// An answer with headers and a body: the sign-in page's pages, redirects and checks.
struct HTTPResponse: Sendable, Equatable {
    /// One header line.
    struct Header: Sendable, Equatable {
        let name: String
        let value: String
    }

    var status: Int
    var headers: [Header] = []
    var body: [UInt8] = []

    /// `status` with `headers` and no body.
    init(status: Int, headers: [Header] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A page (`text/html`) with §11's security headers; `scripted` for a page that runs
    /// §14's passkey script (`script-src 'self'; connect-src 'self'` added to its policy).
    static func page(_ status: Int, _ html: HTML, cookies: [String] = [], scripted: Bool = false) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [Header(name: "Content-Type", value: "text/html; charset=utf-8")]
                + PortalPage.securityHeaders.map {
                    Header(
                        name: $0.name,
                        value: scripted && $0.name == "Content-Security-Policy"
                            ? $0.value + "; script-src 'self'; connect-src 'self'" : $0.value)
                }
                + cookies.map { Header(name: "Set-Cookie", value: $0) },
            body: Array(html.rendered.utf8))
    }

    /// A redirect to `location` with §11's security headers.
    static func redirect(_ status: Int, to location: String, cookies: [String] = []) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [Header(name: "Location", value: location)]
                + PortalPage.securityHeaders.map { Header(name: $0.name, value: $0.value) }
                + cookies.map { Header(name: "Set-Cookie", value: $0) })
    }

    /// 403 for a forged request (SPEC §11): nothing changed.
    static let forbidden = HTTPResponse(
        status: 403,
        headers: [Header(name: "Content-Type", value: "text/plain; charset=utf-8")]
            + PortalPage.securityHeaders.map { Header(name: $0.name, value: $0.value) },
        body: Array("Forbidden\n".utf8))

    /// 404 for a path under the prefix that is none of §11's.
    static let notFound = HTTPResponse(
        status: 404,
        headers: [Header(name: "Content-Type", value: "text/plain; charset=utf-8")]
            + PortalPage.securityHeaders.map { Header(name: $0.name, value: $0.value) },
        body: Array("Not Found\n".utf8))
}

/// The settings of the sign-in page (SPEC §11), read with the rest of `serve`'s.
struct PortalSettings: Sendable {
    /// `portal-path`: every path of the page starts with it (no trailing `/`).
    var prefix = "/.credfile"
    /// `basic`: Basic credentials accepted beside sessions.
    var basic = true
    /// `cookie-domain`: one sign-in for every host under it.
    var cookieDomain: String?
    /// `session-idle`, `session-max`, `session-limit`.
    var limits: SessionLimits
    /// `portal-title`.
    var title: String?
    /// The stylesheet served (`portal-stylesheet`'s content, or the built-in one).
    var stylesheet: String = PortalPage.stylesheet
    /// `lang`: nil for `auto`.
    var language: PortalLanguage?
    /// The state database (the guard's, `FILE.guard.db` or `state`) that keeps the sessions.
    var state: StateLocation
    /// `address-free-failures`, and the guard's `max-delay` that bounds the address's wait.
    var addressFreeFailures = AddressThrottle.defaultFreeFailures
    var maximumDelay = GuardPolicy.defaultMaximumDelay
    /// SPEC §12: `register`, its hourly limits, and the rules of new passwords (§8).
    var register = RegisterMode.no
    var registerLimits = RegistrationLimits()
    var passwordPolicy = PasswordPolicy.standard
    /// The passkeys of SPEC §14; nil without `webauthn-origin`.
    var passkeys: Passkeys?
}

/// The sign-in page's sessions and keys for one generation of settings.
final class Portal: Sendable {
    let settings: PortalSettings
    let sessions: PortalSessions
    let antiForgery: AntiForgery
    /// Failed logins by client address (SPEC §11's `address-free-failures`).
    let throttle: AddressThrottle
    /// §14's sign-ins waiting for their code, and the seal of an enrolment's form.
    let pendingSignIns: PendingSignIns
    let enrolmentSeal: EnrolmentSeal
    /// SPEC §12's invitations and registration counts, in the same state database.
    let registrations: Registrations
    /// The device cookies of known devices (SPEC §11).
    let devices: DeviceCookies

    /// The pre-session cookie the anti-forgery token is bound to (Decisions §11).
    static let preSessionCookie = "__Host-credfile-form"

    /// The session cookie's name: `__Host-credfile`, or `__Secure-credfile` with `cookie-domain`.
    var cookieName: String { settings.cookieDomain == nil ? "__Host-credfile" : "__Secure-credfile" }

    /// Opens (at first use, creates) the sessions in the state database.
    /// - Throws: what the state database throws making its keys.
    init(_ settings: PortalSettings) throws {
        self.settings = settings
        // Held in memory, checked against the state database's change counter (SPEC §11
        // "Fast"): SQLite's data_version, or PostgreSQL's notifications of ended sessions
        // (§15), so another host's sign-out holds here at the next request.
        let database = SQLiteSessionStorage(location: settings.state)
        let storage = CachedSessionStorage(database)
        sessions = try PortalSessions(storage: storage, limits: settings.limits)
        antiForgery = AntiForgery(key: try storage.key(named: AntiForgery.keyName))
        throttle = AddressThrottle(freeFailures: settings.addressFreeFailures, maximumDelay: settings.maximumDelay)
        pendingSignIns = try PendingSignIns(storage: database)
        enrolmentSeal = EnrolmentSeal(key: try storage.key(named: EnrolmentSeal.keyName))
        registrations = Registrations(location: settings.state)
        devices = DeviceCookies(key: try storage.key(named: DeviceCookies.keyName))
    }

    /// `Set-Cookie` for a new session's token (SPEC §11's attributes, exactly).
    func sessionCookie(_ token: SessionToken) -> String {
        if let domain = settings.cookieDomain {
            return "__Secure-credfile=\(token.cookieValue); Domain=\(domain); Path=/; Secure; HttpOnly; SameSite=Lax"
        }
        return "__Host-credfile=\(token.cookieValue); Path=/; Secure; HttpOnly; SameSite=Lax"
    }

    /// `Set-Cookie` that expires the session cookie (sign-out).
    var expiredSessionCookie: String {
        if let domain = settings.cookieDomain {
            return "__Secure-credfile=; Domain=\(domain); Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax"
        }
        return "__Host-credfile=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax"
    }
}

/// The paths of SPEC §11 under `portal-path`, decided apart from HTTP: each request is
/// answered at once (a session cookie costs a SHA-256 and a lookup, never a hash), or its
/// login (Basic's, or the form's) goes through ``LoginService/decideLogin(usernameBytes:password:request:)``
/// to the hashing threads like every other, and the answer is made from its result.
enum PortalRoutes {
    /// The request headers the sign-in page reads.
    static let headerNames: Set<String> = [
        "cookie", "origin", "sec-fetch-site", "referer", "host", "accept", "accept-language", "user-agent",
        "x-original-url", "x-forwarded-proto", "x-forwarded-host", "x-forwarded-uri",
    ]

    /// Whether `path` lies under the prefix of `portal`.
    static func isPortalPath(_ path: String, _ portal: Portal) -> Bool {
        path == portal.settings.prefix || path.hasPrefix(portal.settings.prefix + "/")
    }

    /// Decides a request under the prefix; `body` is its body (a POST's form).
    static func decide(
        _ request: ServeRequest, body: [UInt8], service: LoginService, generation: LoginService.Generation,
        portal: Portal
    ) -> LoginService.Decision {
        let route = String(request.path.dropFirst(portal.settings.prefix.count))
        do {
            switch route {
            case "/auth": return try check(request, service, generation, portal, forward: false)
            case "/forward-auth": return try check(request, service, generation, portal, forward: true)
            case "/login" where request.method == "POST":
                return try signIn(request, body: body, service, generation, portal)
            case "/login": return .answer(.response(try loginPage(request, generation, portal, failed: false)))
            case "/logout" where request.method == "POST":
                return .answer(.response(try signOut(request, body: body, generation, portal)))
            case "/", "": return .answer(.response(try home(request, generation, portal)))
            case "/register", "/password":  // SPEC §12 (PortalRegistration.swift)
                return try PortalRegistration.decide(route, request, body: body, service, generation, portal)
            case "/style.css":
                return .answer(
                    .response(
                        HTTPResponse(
                            status: 200,
                            headers: [HTTPResponse.Header(name: "Content-Type", value: "text/css; charset=utf-8")]
                                + PortalPage.securityHeaders.map { HTTPResponse.Header(name: $0.name, value: $0.value) },
                            body: Array(portal.settings.stylesheet.utf8))))
            default:
                if let answer = try PortalSecondFactor.decide(
                    route: route, request, body: body, service, generation, portal)
                {
                    return answer
                }
                let passkey = try PortalPasskeys.decide(route, request, body: body, service, generation, portal)
                return .answer(.response(passkey ?? .notFound))
            }
        } catch {
            return .answer(.unavailable(reason: "the state database cannot be used: \(error)"))
        }
    }

    // MARK: The checks

    /// `{prefix}/auth` and `{prefix}/forward-auth`: a session, else Basic (with `basic =
    /// yes`), else 401 — or, for `forward-auth` and a browser, 302 to the sign-in page;
    /// §13's rules decide first what needs no sign-in (``ServeAccess``).
    private static func check(
        _ request: ServeRequest, _ service: LoginService, _ generation: LoginService.Generation, _ portal: Portal,
        forward: Bool
    ) throws -> LoginService.Decision {
        let started = ContinuousClock.now
        if let record = try session(request, generation, portal) {
            ServeMetrics.shared.login(.session, .granted, seconds: (ContinuousClock.now - started).inSeconds)  // §16
            return .answer(
                .response(
                    ServeAccess.signedIn(
                        record.user, request, service, generation,
                        // §13's two-factor accepts either factor of §14: a code, or a passkey
                        // (its sign-in verified the user on the device: two factors in one).
                        secondFactor: record.secondFactor || record.passkey)))
        }
        let checked: ServeAccess.Checked
        switch ServeAccess.beforeSignIn(request, service, generation) {
        case .failure(let denial): return .answer(.response(denial.response))
        case .success(let read): checked = read
        }
        let denial = denied(request, generation, portal, forward: forward)
        guard portal.settings.basic, request.authorization != nil else { return .answer(.response(denial)) }
        let finish: @Sendable (ServeAnswer) -> ServeAnswer = { answer in
            switch answer {
            case .granted(let user):
                .response(ServeAccess.signedIn(user, request, service, generation, checked: checked))
            case .denied: .response(denial)
            default: answer
            }
        }
        return throttled(request, service, generation, portal, finish: finish) { service.decide(request) }
    }

    /// A login through the one login path, throttled by client address (SPEC §11): while
    /// the address must wait, denied unchecked; otherwise decided by `decide`, and its
    /// answer counted for the address before `finish` makes the request's answer.
    static func throttled(
        _ request: ServeRequest, _ service: LoginService, _ generation: LoginService.Generation, _ portal: Portal,
        knownDevice: Bool = false, finish: @escaping @Sendable (ServeAnswer) -> ServeAnswer,
        decide: () -> LoginService.Decision
    ) -> LoginService.Decision {
        // A known device's sign-in is counted on its own by the guard, not by address (SPEC §11).
        let address =
            knownDevice ? nil : service.clientAddress(request, generation).map { ClientKey($0).description }
        if let address, !portal.throttle.admits(address, now: Double(now())) {
            ServeLog.limited("a sign-in from \(address) denied unchecked: too many failures from that address")
            return .answer(finish(.denied))
        }
        let counted: @Sendable (ServeAnswer) -> ServeAnswer = { answer in
            if let address {
                switch answer {
                case .granted: portal.throttle.record(address, granted: true, now: Double(now()))
                case .denied: portal.throttle.record(address, granted: false, now: Double(now()))
                default: break
                }
            }
            return finish(answer)
        }
        switch decide() {
        case .answer(let answer): return .answer(counted(answer))
        case .check(var job):
            job.finish = counted
            return .check(job)
        }
    }

    /// 200 with the headers upstream (SPEC §11). `Remote-Groups` (comma-separated, from
    /// §13's group file) is left out while the user has no groups, since libmicrohttpd
    /// sends no header with an empty value; a proxy reads a missing header as empty.
    static func granted(_ user: String, groups: [String] = []) -> HTTPResponse {
        var headers: [HTTPResponse.Header] = [.init(name: "Remote-User", value: user)]
        if !groups.isEmpty { headers.append(.init(name: "Remote-Groups", value: groups.joined(separator: ","))) }
        headers += [.init(name: "X-Credfile-User", value: user), .init(name: "Cache-Control", value: "no-store")]
        return HTTPResponse(status: 200, headers: headers)
    }

    /// 401 (with the Basic challenge when Basic is accepted), or for `forward-auth` and a
    /// request that accepts `text/html`, 302 to the sign-in page with the original URL as `rd`.
    /// `auth`'s 401 names that page, absolute, in `Location` when a trusted peer gave the
    /// original URL: nginx's `error_page 401 =302 $credfile_login` sends the browser there
    /// (Authelia's way), since nginx cannot percent-encode `rd` itself (Decisions §11).
    private static func denied(
        _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal, forward: Bool
    ) -> HTTPResponse {
        let acceptsHTML = request.header("accept").map { String(decoding: $0, as: UTF8.self).contains("text/html") }
        let trusted = request.peerIsTrusted(generation.settings.trustedProxies)
        let original = OriginalURL.url(
            .init(
                originalURL: request.header("x-original-url"), forwardedProto: request.header("x-forwarded-proto"),
                forwardedHost: request.header("x-forwarded-host"), forwardedURI: request.header("x-forwarded-uri")),
            peerIsTrusted: trusted)
        let login = portal.settings.prefix + "/login" + (original.map { "?rd=" + percentEncoded($0) } ?? "")
        if forward, acceptsHTML == true { return .redirect(302, to: login) }
        var headers: [HTTPResponse.Header] = [.init(name: "Cache-Control", value: "no-store")]
        if portal.settings.basic { headers.append(.init(name: "WWW-Authenticate", value: generation.challenge)) }
        if !forward, original != nil, let host = ownHost(request, generation) {
            headers.append(.init(name: "Location", value: "https://" + host + login))
        }
        return HTTPResponse(status: 401, headers: headers)
    }

    /// The user of the request's session cookie, when one opens a valid session (an idle,
    /// expired or changed one is ended by the check).
    static func sessionUser(
        _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal
    ) throws -> String? {
        try session(request, generation, portal)?.user
    }

    /// The valid session of the request's cookie, with what its record knows (whether its
    /// sign-in had a second factor, ``SessionRecord/secondFactor``, for §13's `two-factor`).
    static func session(
        _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal
    ) throws -> SessionRecord? {
        for value in CookieHeader.values(named: portal.cookieName, in: request.header("cookie")) {
            guard let token = SessionToken(cookieValue: value) else { continue }
            let record = try portal.sessions.signedIn(token, now: now()) { try generation.store.entryLine(named: $0) }
            if let record { return record }
        }
        return nil
    }

    // MARK: The pages

    /// `GET {prefix}/login`, and the page again after a denial.
    static func loginPage(
        _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal, failed: Bool,
        username: String? = nil, rd: String? = nil
    ) throws -> HTTPResponse {
        let (preSession, cookie) = try preSession(request)
        let target = (rd ?? request.query["rd"]).flatMap { redirect(Array($0.utf8), request, generation, portal) }
        let csrf = portal.antiForgery.token(for: Array(preSession.utf8))
        let passkey =
            portal.settings.passkeys == nil
            ? HTML.empty
            : PasskeyPage.signIn(
                language: language(request, portal), prefix: portal.settings.prefix, csrf: csrf, rd: target)
        let page = PortalPage.login(
            language: language(request, portal), siteTitle: portal.settings.title, prefix: portal.settings.prefix,
            csrf: csrf, rd: target, username: username, failed: failed,
            registerLink: portal.settings.register != .no, extra: passkey)
        return .page(200, page, cookies: cookie.map { [$0] } ?? [], scripted: portal.settings.passkeys != nil)
    }

    /// `GET {prefix}/`: signed in, the name and "✅ Acceso permitido"; else to the sign-in page.
    private static func home(
        _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal
    ) throws -> HTTPResponse {
        guard let user = try sessionUser(request, generation, portal) else {
            return .redirect(303, to: portal.settings.prefix + "/login")
        }
        let (preSession, cookie) = try preSession(request)
        let csrf = portal.antiForgery.token(for: Array(preSession.utf8))
        // A passkeys file that cannot be read shows no names rather than no page.
        let passkeys = portal.settings.passkeys.map {
            PasskeyPage.manage(
                language: language(request, portal), prefix: portal.settings.prefix, csrf: csrf,
                names: ((try? $0.credentials(usernameBytes: Array(user.utf8))) ?? []).map(\.name))
        }
        let page = PortalPage.signedIn(
            language: language(request, portal), siteTitle: portal.settings.title, prefix: portal.settings.prefix,
            csrf: csrf, user: user, groups: ServeAccess.files(generation).groups?.groups(of: user) ?? [],
            secondFactor: try PortalSecondFactor.section(request, generation, portal, user: user, csrf: csrf),
            extra: passkeys ?? .empty)
        return .page(200, page, cookies: cookie.map { [$0] } ?? [], scripted: passkeys != nil)
    }

    // MARK: The posts

    /// `POST {prefix}/login`: the own origin and the form's token, else 403; then the login
    /// through the one login path; good: a new session and 303 to `rd` or `{prefix}/`;
    /// any denial: the page again, the same for every kind.
    private static func signIn(
        _ request: ServeRequest, body: [UInt8], _ service: LoginService, _ generation: LoginService.Generation,
        _ portal: Portal
    ) throws -> LoginService.Decision {
        guard let form = try acceptedForm(request, body: body, generation, portal) else {
            return .answer(.response(.forbidden))
        }
        let username = form.text("username")
        let rd = form.text("rd")
        // The page of a denial is made only for a denial: under a flood of bad sign-ins most
        // posts are answered 503 by the full queue, and none of them needs it.
        let deniedPage = { @Sendable () throws -> HTTPResponse in
            try loginPage(request, generation, portal, failed: true, username: username, rd: rd)
        }
        guard let username, let password = form.secret("password") else { return .answer(.response(try deniedPage())) }
        let client = service.clientAddress(request, generation)?.description
        let userAgent = request.header("user-agent").map { String(decoding: $0, as: UTF8.self) }
        let target =
            rd.flatMap { redirect(Array($0.utf8), request, generation, portal) } ?? portal.settings.prefix + "/"
        let device = portal.device(request, username: username)
        let finish: @Sendable (ServeAnswer) -> ServeAnswer = { answer in
            switch answer {
            case .granted(let user):
                do {
                    let line = try generation.store.entryLine(named: user) ?? []
                    let token = try portal.sessions.start(
                        user: user, line: line, now: now(), client: client, userAgent: userAgent)
                    let deviceCookie = portal.deviceCookie(try portal.devices.issue(username: user.utf8, now: now()))
                    return .response(
                        .redirect(303, to: target, cookies: [portal.sessionCookie(token), deviceCookie]))
                } catch {
                    return .unavailable(reason: "a session could not be stored: \(error)")
                }
            case .denied:
                do { return .response(try deniedPage()) } catch {
                    return .unavailable(reason: "the sign-in page could not be made: \(error)")
                }
            default: return answer
            }
        }
        let codeStep = PortalSecondFactor.codeStep(
            generation, portal, target: rd.flatMap { redirect(Array($0.utf8), request, generation, portal) })
        return throttled(request, service, generation, portal, knownDevice: device != nil, finish: finish) {
            password.withUnsafeBytes { bytes in
                service.decideLogin(
                    usernameBytes: Array(username.utf8), password: Password(utf8: bytes), request: request,
                    device: device, codeStep: codeStep)
            }
        }
    }

    /// `POST {prefix}/logout`: the own origin and the form's token, else 403; ends the
    /// session (every session of its user with `everywhere` in the query or `scope=all`
    /// in the form), expires the cookie, 303 to the sign-in page.
    private static func signOut(
        _ request: ServeRequest, body: [UInt8], _ generation: LoginService.Generation, _ portal: Portal
    ) throws -> HTTPResponse {
        guard let form = try acceptedForm(request, body: body, generation, portal) else { return .forbidden }
        let everywhere = request.query["everywhere"] != nil || form.text("scope") == "all"
        for value in CookieHeader.values(named: portal.cookieName, in: request.header("cookie")) {
            guard let token = SessionToken(cookieValue: value) else { continue }
            if everywhere, let record = try portal.sessions.storage.session(tokenDigest: token.digest) {
                try portal.sessions.endAll(user: record.user)
            } else {
                try portal.sessions.end(token)
            }
        }
        return .redirect(303, to: portal.settings.prefix + "/login", cookies: [portal.expiredSessionCookie])
    }

    /// The form of a POST from the own origin carrying its anti-forgery token; nil (403)
    /// otherwise. A body that is not a well-formed form has no token either.
    static func acceptedForm(
        _ request: ServeRequest, body: [UInt8], _ generation: LoginService.Generation, _ portal: Portal
    ) throws -> FormFields? {
        guard let host = ownHost(request, generation),
            RequestOrigin.isSameOrigin(
                origin: request.header("origin"), secFetchSite: request.header("sec-fetch-site"),
                referer: request.header("referer"), ownHost: host),
            let form = FormFields(parsing: body)
        else { return nil }
        let preSession = CookieHeader.values(named: Portal.preSessionCookie, in: request.header("cookie")).first
        let token = form.secret("csrf")?.withUnsafeBytes { Array($0) }
        guard portal.antiForgery.accepts(token: token, preSession: preSession) else { return nil }
        return form
    }

    // MARK: Helpers

    /// The request's own host (a trusted peer's `X-Forwarded-Host`, else `Host`).
    static func ownHost(_ request: ServeRequest, _ generation: LoginService.Generation) -> String? {
        OriginalURL.host(
            host: request.header("host"), forwardedHost: request.header("x-forwarded-host"),
            peerIsTrusted: request.peerIsTrusted(generation.settings.trustedProxies))
    }

    /// `rd` when §11 allows following it; nil when it would be `{prefix}/`.
    static func redirect(
        _ rd: [UInt8], _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal
    ) -> String? {
        let fallback = portal.settings.prefix + "/"
        guard let host = ownHost(request, generation) else { return nil }
        let target = RedirectTarget.resolve(
            rd, requestHost: host, cookieDomain: portal.settings.cookieDomain, fallback: fallback)
        return target == fallback ? nil : target
    }

    /// The browser's pre-session cookie, or a new one with its `Set-Cookie`.
    static func preSession(_ request: ServeRequest) throws -> (String, String?) {
        for value in CookieHeader.values(named: Portal.preSessionCookie, in: request.header("cookie"))
        where SessionToken(cookieValue: value) != nil {  // 43 characters of base64url, 32 bytes
            return (String(decoding: value, as: UTF8.self), nil)
        }
        let fresh = try AntiForgery.newPreSession()
        return (fresh, "\(Portal.preSessionCookie)=\(fresh); Path=/; Secure; HttpOnly; SameSite=Lax")
    }

    static func language(_ request: ServeRequest, _ portal: Portal) -> PortalLanguage {
        PortalLanguage.negotiate(request.header("accept-language"), fixed: portal.settings.language)
    }

    /// Seconds since 1970.
    static func now() -> Int64 { Int64(time(nil)) }

    /// `text` with every byte but unreserved ones percent-encoded (a query value).
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                out += "%"
                out.unicodeScalars.append(digits[Int(byte >> 4)])
                out.unicodeScalars.append(digits[Int(byte & 15)])
            }
        }
        return out
    }
}
