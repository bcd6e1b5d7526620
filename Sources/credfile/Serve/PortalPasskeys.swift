import CredFile

/// The passkeys of the sign-in page (SPEC §14), under the prefix beside §11's paths:
///
/// | request | answer |
/// | --- | --- |
/// | `GET {prefix}/passkeys.js` | the page's one script (`script-src 'self'`) |
/// | `POST {prefix}/passkey/options` | a challenge: `purpose=registration` for a user signed in under 5 minutes ago, `purpose=sign-in` for anyone |
/// | `POST {prefix}/passkey/register` | the browser's new credential, saved for the signed-in user |
/// | `POST {prefix}/passkey/sign-in` | the browser's assertion: a new session, as a password's |
/// | `POST {prefix}/code` with `credentialId` | the second factor after a password (``PortalSecondFactor``), its challenge from `purpose=second-factor` |
///
/// Every POST is a form with the page's anti-forgery token from the own origin (§11's
/// rule, the same check as the sign-in form), answered in JSON; every decision is the
/// library's (``Passkeys``).
enum PortalPasskeys {
    /// How recent a sign-in must be to register a passkey, in seconds (SPEC §14).
    static let recentSignIn: Int64 = 300

    /// Decides `route` (the path after the prefix) when it is a passkey route; nil otherwise.
    static func decide(
        _ route: String, _ request: ServeRequest, body: [UInt8], _ service: LoginService,
        _ generation: LoginService.Generation, _ portal: Portal
    ) throws -> HTTPResponse? {
        switch route {
        case "/passkeys.js":
            return HTTPResponse(
                status: 200,
                headers: [HTTPResponse.Header(name: "Content-Type", value: "text/javascript; charset=utf-8")]
                    + PortalPage.securityHeaders.map { HTTPResponse.Header(name: $0.name, value: $0.value) },
                body: Array(PasskeyScript.source.utf8))
        case "/passkey/options" where request.method == "POST",
            "/passkey/register" where request.method == "POST",
            "/passkey/sign-in" where request.method == "POST":
            guard let passkeys = portal.settings.passkeys else { return .notFound }
            guard let form = try PortalRoutes.acceptedForm(request, body: body, generation, portal) else {
                return .forbidden
            }
            switch route {
            case "/passkey/options": return try options(form, request, generation, portal, passkeys)
            case "/passkey/register": return try register(form, request, generation, portal, passkeys)
            default:
                let client = service.clientAddress(request, generation)?.description
                return try signIn(form, request, generation, portal, passkeys, client: client)
            }
        default:
            return nil
        }
    }

    /// A challenge and what the browser's call needs with it.
    private static func options(
        _ form: FormFields, _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal,
        _ passkeys: Passkeys
    ) throws -> HTTPResponse {
        let now = PortalRoutes.now()
        if form.text("purpose") == "registration" {
            guard let (user, started) = try session(request, generation, portal) else {
                return json(401, [("error", JSON.string("signed-out"))])
            }
            guard now - started < recentSignIn else { return json(403, [("error", JSON.string("sign-in-again"))]) }
            let name = Array(user.utf8)
            let challenge = try passkeys.newChallenge(for: .registration, usernameBytes: name)
            let exclude = try passkeys.credentials(usernameBytes: name).map { JSON.string($0.id) }
            return json(
                200,
                [
                    ("challenge", JSON.string(Passkeys.base64URL(challenge))), ("rpId", JSON.string(passkeys.rpID)),
                    ("rpName", JSON.string(portal.settings.title ?? passkeys.rpID)),
                    ("userId", JSON.string(Passkeys.base64URL(Passkeys.userHandle(usernameBytes: name)))),
                    ("userName", JSON.string(user)), ("exclude", "[" + exclude.joined(separator: ",") + "]"),
                ])
        }
        if form.text("purpose") == "second-factor" {
            // For the user of the browser's pending sign-in (SPEC §14), whose passkeys only count.
            guard let pending = try PortalSecondFactor.pendingUser(request, portal) else {
                return json(401, [("error", JSON.string("signed-out"))])
            }
            let name = Array(pending.utf8)
            let challenge = try passkeys.newChallenge(for: .secondFactor, usernameBytes: name)
            let allow = try passkeys.credentials(usernameBytes: name).map { JSON.string($0.id) }
            return json(
                200,
                [
                    ("challenge", JSON.string(Passkeys.base64URL(challenge))), ("rpId", JSON.string(passkeys.rpID)),
                    ("allow", "[" + allow.joined(separator: ",") + "]"),
                ])
        }
        let challenge = try passkeys.newChallenge(for: .signIn)
        return json(
            200, [("challenge", JSON.string(Passkeys.base64URL(challenge))), ("rpId", JSON.string(passkeys.rpID))])
    }

    /// Saves the browser's new credential for the signed-in user.
    private static func register(
        _ form: FormFields, _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal,
        _ passkeys: Passkeys
    ) throws -> HTTPResponse {
        guard let (user, _) = try session(request, generation, portal) else {
            return json(401, [("error", JSON.string("signed-out"))])
        }
        guard let clientData = bytes(form, "clientDataJSON"), let object = bytes(form, "attestationObject") else {
            return json(400, [("error", JSON.string("refused"))])
        }
        let name = form.text("name").flatMap { $0.isEmpty ? nil : $0 } ?? "passkey"
        let outcome = try passkeys.register(
            usernameBytes: Array(user.utf8), name: name, clientDataJSON: clientData, attestationObject: object)
        guard case .accepted = outcome else {
            if case .refused(let why) = outcome {
                ServeLog.notice("a passkey registration of \(Escaped.quotedName(Array(user.utf8))) refused: \(why)")
            }
            return json(400, [("error", JSON.string("refused"))])
        }
        return json(200, [("ok", "true")])
    }

    /// Signs in with the browser's assertion: a new session, as a password's, and where to go.
    private static func signIn(
        _ form: FormFields, _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal,
        _ passkeys: Passkeys, client: String?
    ) throws -> HTTPResponse {
        guard let id = bytes(form, "credentialId"), let clientData = bytes(form, "clientDataJSON"),
            let data = bytes(form, "authenticatorData"), let signature = bytes(form, "signature")
        else { return json(400, [("error", JSON.string("refused"))]) }
        let outcome = try passkeys.signIn(
            credentialID: id, clientDataJSON: clientData, authenticatorData: data, signature: signature)
        guard case .accepted(let name) = outcome, let user = String(validating: name, as: UTF8.self) else {
            if case .refused(let why) = outcome, why == .clonedAuthenticator || why == .signature {
                // A clone is worth a line: the same credential signed with an older counter.
                ServeLog.notice(
                    "a passkey sign-in refused (\(why.rawValue)) for the credential \(Passkeys.base64URL(id))")
            }
            return json(403, [("error", JSON.string("refused"))])
        }
        let userAgent = request.header("user-agent").map { String(decoding: $0, as: UTF8.self) }
        let line = try generation.store.entryLine(named: user) ?? []
        let token = try portal.sessions.start(
            user: user, line: line, now: PortalRoutes.now(), client: client, userAgent: userAgent, passkey: true)
        let target =
            form.text("rd").flatMap { PortalRoutes.redirect(Array($0.utf8), request, generation, portal) }
            ?? portal.settings.prefix + "/"
        var response = json(200, [("redirect", JSON.string(target))])
        response.headers.append(.init(name: "Set-Cookie", value: portal.sessionCookie(token)))
        return response
    }

    /// A passkey's answer posted to the code page (SPEC §14), with the portal's passkeys.
    struct SecondFactorAnswer: Sendable {
        let passkeys: Passkeys
        let credentialID: [UInt8]
        let clientDataJSON: [UInt8]
        let authenticatorData: [UInt8]
        let signature: [UInt8]
    }

    /// The passkey answer in the code page's form; nil for a form with a code (or without
    /// `webauthn-origin`).
    static func secondFactorAnswer(_ form: FormFields, _ portal: Portal) -> SecondFactorAnswer? {
        guard let passkeys = portal.settings.passkeys, let id = bytes(form, "credentialId") else { return nil }
        return SecondFactorAnswer(
            passkeys: passkeys, credentialID: id, clientDataJSON: bytes(form, "clientDataJSON") ?? [],
            authenticatorData: bytes(form, "authenticatorData") ?? [], signature: bytes(form, "signature") ?? [])
    }

    /// The request's signed-in user and when the session started.
    private static func session(
        _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal
    ) throws -> (String, Int64)? {
        guard let user = try PortalRoutes.sessionUser(request, generation, portal) else { return nil }
        for value in CookieHeader.values(named: portal.cookieName, in: request.header("cookie")) {
            guard let token = SessionToken(cookieValue: value),
                let record = try portal.sessions.storage.session(tokenDigest: token.digest), record.user == user
            else { continue }
            return (user, record.started)
        }
        return nil
    }

    /// A form field's base64url bytes.
    private static func bytes(_ form: FormFields, _ name: String) -> [UInt8]? {
        form.text(name).flatMap { Passkeys.bytes(base64URL: $0) }
    }

    /// A JSON answer with §11's security headers.
    private static func json(_ status: Int, _ fields: [(String, String)]) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [HTTPResponse.Header(name: "Content-Type", value: "application/json")]
                + PortalPage.securityHeaders.map { HTTPResponse.Header(name: $0.name, value: $0.value) },
            body: Array(JSON.object(fields).utf8))
    }
}
