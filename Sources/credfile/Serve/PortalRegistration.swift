import CredFile

/// `register = no|invite|yes` (SPEC §12).
enum RegisterMode: String, Sendable {
    case no, invite, yes
}

/// SPEC §12's two pages under the prefix, decided apart from HTTP as ``PortalRoutes``'
/// are: `{prefix}/register` (the seed's Register screen) and `{prefix}/password`. Every
/// POST needs the own origin and the form's anti-forgery token (else 403, nothing changed);
/// everything cheap is checked on the connection's thread (the fields, the invitation
/// code, §2's name rules, §8's password rules), and what takes a hash — the new entry,
/// the current password — runs on the hashing threads in the logins' fair queue.
enum PortalRegistration {
    /// Decides `route` (`/register` or `/password`).
    static func decide(
        _ route: String, _ request: ServeRequest, body: [UInt8], _ service: LoginService,
        _ generation: LoginService.Generation, _ portal: Portal
    ) throws -> LoginService.Decision {
        switch (route, request.method) {
        case ("/register", _) where portal.settings.register == .no: return .answer(.response(.notFound))
        case ("/register", "POST"): return try register(request, body: body, service, generation, portal)
        case ("/register", _):
            return .answer(.response(try registerPage(request, generation, portal, error: nil)))
        case ("/password", "POST"): return try changePassword(request, body: body, service, generation, portal)
        default:
            guard let user = try PortalRoutes.sessionUser(request, generation, portal) else {
                return .answer(.response(.redirect(303, to: portal.settings.prefix + "/login")))
            }
            return .answer(.response(try passwordPage(request, portal, user: user, error: nil)))
        }
    }

    // MARK: Registration

    /// What went wrong with a registration, as the page says it.
    enum Problem: Equatable {
        case empty, userExists, invitation, limit
        case refused(String)
    }

    /// `GET {prefix}/register`, and the page again after a refusal (`status` 200, or 429
    /// for the hourly limits). The name typed is filled in again, except after a refused
    /// code: that answer is the same whatever the name.
    static func registerPage(
        _ request: ServeRequest, _ generation: LoginService.Generation, _ portal: Portal, error: Problem?,
        username: String? = nil, rd: String? = nil, status: Int = 200
    ) throws -> HTTPResponse {
        let (preSession, cookie) = try PortalRoutes.preSession(request)
        let language = PortalRoutes.language(request, portal)
        let words = PortalWords(language: language)
        let target = (rd ?? request.query["rd"]).flatMap {
            PortalRoutes.redirect(Array($0.utf8), request, generation, portal)
        }
        let message: String? =
            switch error {
            case nil: nil
            case .empty: words.messages.fieldsEmpty
            case .userExists: words.messages.userExists
            case .invitation: words.wrongInvitation
            case .limit: words.registerLimit
            case .refused(let text): text
            }
        let page = PortalPage.register(
            language: language, siteTitle: portal.settings.title, prefix: portal.settings.prefix,
            csrf: portal.antiForgery.token(for: Array(preSession.utf8)), rd: target,
            username: error == .invitation ? nil : username, invitation: portal.settings.register == .invite,
            error: message)
        return .page(status, page, cookies: cookie.map { [$0] } ?? [])
    }

    /// `POST {prefix}/register`: the form, the code (in `invite` mode: a wrong, used,
    /// expired or revoked one is answered at once, the same whatever the name), §2's name
    /// and §8's password rules with the command line's messages; then on a hashing thread
    /// the hourly limits, the entry by the library's one registration (§4's locked atomic
    /// rewrite), a session at once and 303 to `rd`.
    private static func register(
        _ request: ServeRequest, body: [UInt8], _ service: LoginService, _ generation: LoginService.Generation,
        _ portal: Portal
    ) throws -> LoginService.Decision {
        guard let form = try PortalRoutes.acceptedForm(request, body: body, generation, portal) else {
            return .answer(.response(.forbidden))
        }
        let username = form.text("username") ?? ""
        let rd = form.text("rd")
        @Sendable func page(_ problem: Problem, status: Int = 200) throws -> HTTPResponse {
            try registerPage(request, generation, portal, error: problem, username: username, rd: rd, status: status)
        }
        let invited = portal.settings.register == .invite
        var code: InvitationCode?
        if invited {
            code = form.text("code").flatMap { InvitationCode(parsing: Array($0.utf8)) }
            guard let code, try portal.registrations.accepts(code, username: username) else {
                return .answer(.response(try page(.invitation)))
            }
        }
        guard !username.isEmpty, let typed = form.secret("password"), typed.count > 0 else {
            return .answer(.response(try page(.empty)))
        }
        let password = typed.withUnsafeBytes { Password(utf8: $0) }
        let words = PortalWords(language: PortalRoutes.language(request, portal))
        var store = generation.store
        store.passwordPolicy = portal.settings.passwordPolicy
        do {
            try Username.validate(username)
            if let violation = try store.passwordPolicy.violation(of: password, username: username, path: store.path) {
                return .answer(.response(try page(.refused(words.messages.passwordRefused(violation)))))
            }
        } catch let error as CredFileError where error.refusal != nil {
            return .answer(.response(try page(.refused(words.messages.error(error)))))
        }
        let client = service.clientAddress(request, generation)?.description
        let userAgent = request.header("user-agent").map { String(decoding: $0, as: UTF8.self) }
        let target =
            rd.flatMap { PortalRoutes.redirect(Array($0.utf8), request, generation, portal) }
            ?? portal.settings.prefix + "/"
        let limitPage = try page(.limit, status: 429)
        let existsPage = try page(.userExists)
        let invitationPage = try page(.invitation)
        let registrations = portal.registrations
        let (writer, invitation) = (store, code)
        let work: @Sendable () -> ServeAnswer = {
            do {
                guard let ticket = try registrations.admit(client: client, limits: portal.settings.registerLimits)
                else {
                    (generation.settings.loginGuard?.log ?? .syslog).recordRegistrationRefused(
                        service: "serve", user: username, client: client, file: generation.settings.file)
                    return .response(limitPage)
                }
                do {
                    if let invitation {
                        try writer.register(
                            username: username, password: password, invitation: invitation,
                            registrations: registrations)
                    } else {
                        try writer.register(username: username, password: password, storage: .hashed)
                    }
                } catch {
                    try? registrations.release(ticket)
                    throw error
                }
                ServeMetrics.shared.registration()  // §16: an account was made
                // The new line for the session's entry digest, by a scan that stops at it (the
                // caching store would parse and index the whole new file for it: a login does
                // that anyway when one comes, a burst of sign-ups need not, once each).
                let line =
                    try CredentialStore(path: writer.path, policy: writer.policy).entryLine(named: username) ?? []
                let token = try portal.sessions.start(
                    user: username, line: line, now: PortalRoutes.now(), client: client, userAgent: userAgent)
                return .response(.redirect(303, to: target, cookies: [portal.sessionCookie(token)]))
            } catch let error as CredFileError where error.code == .userExists {
                return .response(existsPage)
            } catch let error as CredFileError where error.code == .invitationRefused {
                return .response(invitationPage)
            } catch let error as CredFileError where error.refusal != nil {
                return .response((try? page(.refused(words.messages.error(error)))) ?? existsPage)
            } catch {
                return .unavailable(reason: "a registration failed: \(error)")
            }
        }
        return .check(
            LoginService.Job(
                username: Array(username.utf8), password: password, uncached: nil, name: username,
                rhost: service.clientAddress(request, generation), generation: generation, queued: .now, work: work))
    }

    // MARK: Password change

    /// `GET {prefix}/password` (signed in), and the page again after a refusal.
    static func passwordPage(
        _ request: ServeRequest, _ portal: Portal, user: String, error: String?
    ) throws -> HTTPResponse {
        let (preSession, cookie) = try PortalRoutes.preSession(request)
        let page = PortalPage.password(
            language: PortalRoutes.language(request, portal), siteTitle: portal.settings.title,
            prefix: portal.settings.prefix, csrf: portal.antiForgery.token(for: Array(preSession.utf8)), user: user,
            error: error)
        return .page(200, page, cookies: cookie.map { [$0] } ?? [])
    }

    /// `POST {prefix}/password`: signed in, the own origin and the token; the new password
    /// by §8's rules; then on a hashing thread the current password checked as a login
    /// (§9's guard counts a wrong one), the entry rewritten, every session of the user
    /// ended and a new one started for this browser (a new token), 303 to `{prefix}/`.
    private static func changePassword(
        _ request: ServeRequest, body: [UInt8], _ service: LoginService, _ generation: LoginService.Generation,
        _ portal: Portal
    ) throws -> LoginService.Decision {
        guard let form = try PortalRoutes.acceptedForm(request, body: body, generation, portal) else {
            return .answer(.response(.forbidden))
        }
        guard let user = try PortalRoutes.sessionUser(request, generation, portal) else {
            return .answer(.response(.redirect(303, to: portal.settings.prefix + "/login")))
        }
        let words = PortalWords(language: PortalRoutes.language(request, portal))
        guard let current = form.secret("current"), current.count > 0, let fresh = form.secret("new"), fresh.count > 0
        else {
            return .answer(.response(try passwordPage(request, portal, user: user, error: words.messages.fieldsEmpty)))
        }
        let currentPassword = current.withUnsafeBytes { Password(utf8: $0) }
        let newPassword = fresh.withUnsafeBytes { Password(utf8: $0) }
        var store = generation.store
        store.passwordPolicy = portal.settings.passwordPolicy
        if let violation = try store.passwordPolicy.violation(of: newPassword, username: user, path: store.path) {
            let page = try passwordPage(request, portal, user: user, error: words.messages.passwordRefused(violation))
            return .answer(.response(page))
        }
        let client = service.clientAddress(request, generation)?.description
        let userAgent = request.header("user-agent").map { String(decoding: $0, as: UTF8.self) }
        let wrongPage = try passwordPage(request, portal, user: user, error: words.wrongCurrentPassword)
        // The session was opened with every factor; the current password is checked alone (§14's
        // code is the sign-in's, not this form's).
        store.secondFactor = nil
        let writer = store
        let work: @Sendable () -> ServeAnswer = {
            do {
                // The one login path's check, guarded: a wrong current password counts (§9).
                guard
                    try writer.verify(
                        username: user, password: currentPassword, upgradeOnSuccess: false, client: client
                    )
                    .granted
                else { return .response(wrongPage) }
                try writer.changePassword(username: user, to: newPassword, storage: .hashed)
                try portal.sessions.endAll(user: user)
                let line = try writer.entryLine(named: user) ?? []
                let token = try portal.sessions.start(
                    user: user, line: line, now: PortalRoutes.now(), client: client, userAgent: userAgent)
                return .response(
                    .redirect(303, to: portal.settings.prefix + "/", cookies: [portal.sessionCookie(token)]))
            } catch let error as CredFileError where error.refusal != nil {
                return .response(
                    (try? passwordPage(request, portal, user: user, error: words.messages.error(error))) ?? wrongPage)
            } catch {
                return .unavailable(reason: "a password change failed: \(error)")
            }
        }
        return .check(
            LoginService.Job(
                username: Array(user.utf8), password: currentPassword, uncached: nil, name: user,
                rhost: service.clientAddress(request, generation), generation: generation, queued: .now, work: work))
    }
}
