import CredFile

/// SPEC §14 on the sign-in page: the second step of a sign-in (a right password of a user
/// with a second factor leads to `{prefix}/code`, bound to a pending sign-in of 5 minutes in
/// the state database, one code attempt each) and the enrolment of an authenticator app
/// from `{prefix}/` (`POST {prefix}/otp`). Hooked into ``PortalRoutes`` in a few places.
enum PortalSecondFactor {
    /// The cookie of a pending sign-in (Decisions §14): this host only, 5 minutes.
    static let cookie = "__Host-credfile-code"

    /// `Set-Cookie` for a pending sign-in's token.
    static func pendingCookie(_ token: SessionToken) -> String {
        "\(cookie)=\(token.cookieValue); Path=/; Max-Age=\(PendingSignIns.lifetime); Secure; HttpOnly; SameSite=Lax"
    }

    /// `Set-Cookie` that expires the pending sign-in's cookie.
    static let expiredCookie = "\(cookie)=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax"

    /// The routes of §14 under the prefix; nil for another.
    static func decide(
        route: String, _ request: ServeRequest, body: [UInt8], _ service: LoginService,
        _ generation: LoginService.Generation, _ portal: Portal
    ) throws -> LoginService.Decision? {
        switch route {
        case "/code" where request.method == "POST": try checkCode(request, body: body, service, generation, portal)
        case "/code": .answer(.response(try codePage(request, generation, portal)))
        case "/otp" where request.method == "POST":
            .answer(.response(try enrol(request, body: body, generation, portal)))
        default: nil
        }
    }

    // MARK: The second step

    /// What the sign-in form answers a right password of a user with a second factor: a
    /// pending sign-in and 303 to the code page (SPEC §14). `target` is the checked `rd`.
    static func codeStep(
        _ generation: LoginService.Generation, _ portal: Portal, target: String?
    ) -> @Sendable (String) -> ServeAnswer {
        { user in
            do {
                let line = try generation.store.entryLine(named: user) ?? []
                let token = try portal.pendingSignIns.start(
                    user: user, line: line, target: target, now: PortalRoutes.now())
                return .response(.redirect(303, to: portal.settings.prefix + "/code", cookies: [pendingCookie(token)]))
            } catch {
                return .unavailable(reason: "a pending sign-in could not be stored: \(error)")
            }
        }
    }

    /// `GET {prefix}/code`: the code page while the browser's pending sign-in lasts; else
    /// to the sign-in page.
    private static func codePage(
        _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal
    ) throws -> HTTPResponse {
        guard let taken = try pending(request, portal, take: nil) else {
            return .redirect(303, to: portal.settings.prefix + "/login", cookies: [expiredCookie])
        }
        let (preSession, cookie) = try PortalRoutes.preSession(request)
        let name = Array(taken.user.utf8)
        let language = PortalRoutes.language(request, portal)
        let csrf = portal.antiForgery.token(for: Array(preSession.utf8))
        // The code field for a user with a secret, the passkey button for one with a passkey.
        let hasCode = try generation.settings.secondFactor?.isEnrolled(usernameBytes: name) ?? false
        let hasPasskey = try generation.settings.secondFactor?.hasPasskey(usernameBytes: name) ?? false
        let passkey: HTML =
            hasPasskey
            ? PasskeyPage.secondFactor(language: language, prefix: portal.settings.prefix, csrf: csrf) : .empty
        let page = PortalPage.code(
            language: language, siteTitle: portal.settings.title, prefix: portal.settings.prefix, csrf: csrf,
            codeField: hasCode || !hasPasskey, extra: passkey)
        return .page(200, page, cookies: cookie.map { [$0] } ?? [], scripted: hasPasskey)
    }

    /// `POST {prefix}/code`: the own origin and the form's token, else 403; the pending
    /// sign-in is taken (one attempt), the code checked through §9's guard; right: a new
    /// session that had a second factor, 303 to `rd` or `{prefix}/`; anything else: the
    /// sign-in page as after a wrong password.
    private static func checkCode(
        _ request: ServeRequest, body: [UInt8], _ service: LoginService, _ generation: LoginService.Generation,
        _ portal: Portal
    ) throws -> LoginService.Decision {
        guard let form = try PortalRoutes.acceptedForm(request, body: body, generation, portal) else {
            return .answer(.response(.forbidden))
        }
        let taken = try pending(request, portal) { try generation.store.entryLine(named: $0) }
        // A wrong code is answered as a wrong password is, nothing more (the used pending
        // sign-in's cookie is left to expire: it opens nothing now).
        let deniedPage = try PortalRoutes.loginPage(
            request, generation, portal, failed: true, username: taken?.user, rd: taken?.target)
        guard let taken else { return .answer(.response(deniedPage)) }
        let code = form.secret("code")?.withUnsafeBytes { Array($0) } ?? []
        let answer = PortalPasskeys.secondFactorAnswer(form, portal)
        let client = service.clientAddress(request, generation)
        let userAgent = request.header("user-agent").map { String(decoding: $0, as: UTF8.self) }
        let finish: @Sendable (ServeAnswer) -> ServeAnswer = { answer in
            switch answer {
            case .granted(let user):
                do {
                    let line = try generation.store.entryLine(named: user) ?? []
                    let token = try portal.sessions.start(
                        user: user, line: line, now: PortalRoutes.now(), client: client?.description,
                        userAgent: userAgent, secondFactor: true, passkey: answer != nil)
                    let device = portal.deviceCookie(
                        try portal.devices.issue(username: user.utf8, now: PortalRoutes.now()))
                    return .response(
                        .redirect(
                            303, to: taken.target ?? portal.settings.prefix + "/",
                            cookies: [portal.sessionCookie(token), device, expiredCookie]))
                } catch {
                    return .unavailable(reason: "a session could not be stored: \(error)")
                }
            case .denied: return .response(deniedPage)
            default: return answer
            }
        }
        return PortalRoutes.throttled(request, service, generation, portal, finish: finish) {
            do {
                let name = Array(taken.user.utf8)
                let result =
                    if let answer {
                        try generation.store.verifyPasskey(
                            usernameBytes: name, passkeys: answer.passkeys, credentialID: answer.credentialID,
                            clientDataJSON: answer.clientDataJSON, authenticatorData: answer.authenticatorData,
                            signature: answer.signature, client: client?.description)
                    } else {
                        try generation.store.verifyCode(usernameBytes: name, code: code, client: client?.description)
                    }
                return .answer(result.granted ? .granted(user: taken.user) : .denied)
            } catch {
                return .answer(.unavailable(reason: "\(error)"))
            }
        }
    }

    /// The user of the browser's pending sign-in, left in place (the passkey's challenge).
    static func pendingUser(_ request: ServeRequest, _ portal: Portal) throws -> String? {
        try pending(request, portal, take: nil)?.user
    }

    /// The browser's pending sign-in: peeked when `take` is nil, else taken (removed) and
    /// checked against the user's line now.
    private static func pending(
        _ request: ServeRequest, _ portal: Portal, take line: ((String) throws -> [UInt8]?)?
    ) throws -> PendingSignIn? {
        for value in CookieHeader.values(named: cookie, in: request.header("cookie")) {
            guard let token = SessionToken(cookieValue: value) else { continue }
            let found =
                if let line {
                    try portal.pendingSignIns.take(token, now: PortalRoutes.now(), line: line)
                } else {
                    try portal.pendingSignIns.peek(token, now: PortalRoutes.now())
                }
            if let found { return found }
        }
        return nil
    }

    // MARK: Enrolment

    /// The signed-in page's section on one-time codes; empty when `serve` has no second factor.
    static func section(
        _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal, user: String, csrf: String
    ) throws -> HTML {
        guard let factor = generation.settings.secondFactor else { return .empty }
        return PortalPage.codeSection(
            language: PortalRoutes.language(request, portal), prefix: portal.settings.prefix, csrf: csrf,
            enrolled: try factor.isEnrolled(usernameBytes: Array(user.utf8)))
    }

    /// `POST {prefix}/otp` for a signed-in user without a second factor: without `code`, a
    /// new secret offered (its QR code and key, shown once, sealed into the form); with a
    /// code right for the sealed secret, the secret saved by §4's writer and 303 to
    /// `{prefix}/`; a wrong code, the same secret again with "Código incorrecto.".
    private static func enrol(
        _ request: ServeRequest, body: [UInt8], _ generation: LoginService.Generation, _ portal: Portal
    ) throws -> HTTPResponse {
        guard let form = try PortalRoutes.acceptedForm(request, body: body, generation, portal) else {
            return .forbidden
        }
        let home = portal.settings.prefix + "/"
        guard let session = try PortalRoutes.session(request, generation, portal),
            let factor = generation.settings.secondFactor
        else { return .redirect(303, to: portal.settings.prefix + "/login") }
        let name = Array(session.user.utf8)
        // Replacing a second factor is an admin's `otp --remove` first (Decisions §14).
        guard try !factor.isEnrolled(usernameBytes: name) else { return .redirect(303, to: home) }
        let issuer = portal.settings.title ?? PortalRoutes.ownHost(request, generation) ?? "credfile"
        let now = PortalRoutes.now()
        let enrolment: SecondFactor.Enrolment
        var failed = false
        if let offer = form.secret("offer") {
            guard
                let offered = offer.withUnsafeBytes({
                    portal.enrolmentSeal.open(
                        $0, usernameBytes: name, issuer: issuer, session: session.tokenDigest, now: now)
                })
            else { return .redirect(303, to: home) }
            let code = form.secret("code")?.withUnsafeBytes { Array($0) } ?? []
            if try factor.enroll(offered, code: code) { return .redirect(303, to: home) }
            enrolment = offered
            failed = true
        } else {
            enrolment = try factor.newEnrolment(usernameBytes: name, issuer: issuer)
        }
        let language = PortalRoutes.language(request, portal)
        guard let qr = PortalPage.qrSVG(enrolment.uri, label: PortalWords(language: language).oneTimeCode) else {
            return .redirect(303, to: home)
        }
        let (preSession, cookie) = try PortalRoutes.preSession(request)
        let page = PortalPage.enrolment(
            language: language, siteTitle: portal.settings.title, prefix: portal.settings.prefix,
            csrf: portal.antiForgery.token(for: Array(preSession.utf8)), qr: qr, key: enrolment.key,
            sealed: portal.enrolmentSeal.seal(enrolment, session: session.tokenDigest, now: now), failed: failed)
        return .page(200, page, cookies: cookie.map { [$0] } ?? [])
    }
}
