import CredFile

/// SPEC §13 in `serve`: the groups (`Remote-Groups`) and the rules applied to every
/// `{prefix}/auth`, `{prefix}/forward-auth` and Basic request. The library decides
/// (``AccessRules/decide(_:)``); this reads the request's original URL, method and client,
/// and makes the answers: `bypass` 200 without a sign-in, a denial 403, signed in (or
/// Basic-authenticated) but not allowed 403, not signed in 401 (or the portal's 302).
enum ServeAccess {
    /// The request headers the rules read (beside the portal's own): the original URL,
    /// its host and the original method, each only from a trusted peer.
    static let headerNames: Set<String> = [
        "host", "x-original-url", "x-forwarded-proto", "x-forwarded-host", "x-forwarded-uri", "x-forwarded-method",
        "x-original-method",
    ]

    /// Whether `generation` applies rules or groups (then the headers above are read).
    static func isActive(_ generation: LoginService.Generation) -> Bool {
        generation.settings.rules != nil || generation.settings.groups != nil
    }

    /// The rules and groups as they are now: the last good copies; a new version that is
    /// bad is logged once (serve's log) and the last good copy answers.
    static func files(_ generation: LoginService.Generation) -> (rules: AccessRules?, groups: GroupFile?) {
        (generation.settings.rules.map(current), generation.settings.groups.map(current))
    }

    private static func current<Value>(_ file: WatchedFile<Value>) -> Value {
        let reading = file.current()
        if let refused = reading.refused {
            ServeLog.notice("\(Escaped.path(file.path)) is refused, the last good copy stays: \(refused)")
        }
        return reading.value
    }

    /// The decision for the request's original URL (nginx `X-Original-URL`, Caddy's and
    /// Traefik's `X-Forwarded-Proto`, `-Host`, `-Uri`; SPEC §11) by `user` (nil:
    /// anonymous); a request whose original URL is unknown (an untrusted peer, no such
    /// header) has none (nil): it is denied, as one whose path cannot be judged.
    static func decide(
        _ request: ServeRequest, _ service: LoginService, _ generation: LoginService.Generation, rules: AccessRules,
        user: String?, groups: [String]
    ) -> AccessDecision? {
        let trusted = request.peerIsTrusted(generation.settings.trustedProxies)
        let headers = OriginalURL.Headers(
            originalURL: request.header("x-original-url"), forwardedProto: request.header("x-forwarded-proto"),
            forwardedHost: request.header("x-forwarded-host"), forwardedURI: request.header("x-forwarded-uri"))
        var method = request.method
        if trusted, let forwarded = request.header("x-forwarded-method") ?? request.header("x-original-method") {
            method = String(decoding: forwarded, as: UTF8.self)
        }
        guard let url = OriginalURL.url(headers, peerIsTrusted: trusted),
            let access = try? AccessRequest(
                url: url, method: method, user: user, groups: groups,
                address: service.clientAddress(request, generation))
        else { return nil }
        return rules.decide(access)
    }

    /// What the rules said before a login, kept for the answer after it: the files as they
    /// were read, and the anonymous decision when it stands for every user (a rule that
    /// names no user or group decided it).
    struct Checked: Sendable {
        let rules: AccessRules?
        let groups: GroupFile?
        let decision: AccessDecision?
    }

    /// The answer before any login: 200 for `bypass`, 403 for a request no sign-in could
    /// make allowed (a `deny` rule, no rule, a path that cannot be judged); otherwise what
    /// was read, for ``signedIn(_:_:_:_:checked:secondFactor:)``.
    static func beforeSignIn(
        _ request: ServeRequest, _ service: LoginService, _ generation: LoginService.Generation
    ) -> Result<Checked, Denial> {
        let (rules, groups) = files(generation)
        guard let rules else { return .success(Checked(rules: nil, groups: groups, decision: nil)) }
        guard let decision = decide(request, service, generation, rules: rules, user: nil, groups: []) else {
            return .failure(Denial(response: forbidden))
        }
        if decision.reason == .rule, decision.action == .bypass { return .failure(Denial(response: bypassed)) }
        guard decision.isAllowed || decision.reason == .signInFirst else {
            return .failure(Denial(response: forbidden))
        }
        return .success(Checked(rules: rules, groups: groups, decision: decision.reason == .rule ? decision : nil))
    }

    /// An answer made before any login (a bypass's 200 or a 403).
    struct Denial: Error {
        let response: HTTPResponse
    }

    /// The answer for `user`, signed in or Basic-authenticated: 200 with `Remote-User`,
    /// `Remote-Groups` and `X-Credfile-User` when the rules allow it, 403 otherwise.
    /// `two-factor` needs a second factor in this session (§14): a portal session whose
    /// sign-in took a code (`secondFactor`); a Basic login never has one here, so it is
    /// 403 (Decisions.md §13).
    static func signedIn(
        _ user: String, _ request: ServeRequest, _ service: LoginService, _ generation: LoginService.Generation,
        checked: Checked? = nil, secondFactor: Bool = false
    ) -> HTTPResponse {
        let (rules, groupFile) = checked.map { ($0.rules, $0.groups) } ?? files(generation)
        let groups = groupFile?.groups(of: user) ?? []
        if let rules {
            guard
                let decision = checked?.decision
                    ?? decide(request, service, generation, rules: rules, user: user, groups: groups),
                decision.reason == .rule
            else { return forbidden }
            switch decision.action {
            case .bypass, .allow: break
            case .twoFactor where secondFactor: break
            case .twoFactor, .deny: return forbidden
            }
        }
        return PortalRoutes.granted(user, groups: groups)
    }

    /// 200 for a `bypass` rule: no user upstream.
    static let bypassed = HTTPResponse(
        status: 200, headers: [HTTPResponse.Header(name: "Cache-Control", value: "no-store")])

    /// 403: not allowed (signed in or not).
    static let forbidden = HTTPResponse(
        status: 403,
        headers: [
            HTTPResponse.Header(name: "Content-Type", value: "text/plain; charset=utf-8"),
            HTTPResponse.Header(name: "Cache-Control", value: "no-store"),
        ],
        body: Array("Forbidden\n".utf8))

    /// A Basic login's decision with the rules applied: a bypass or a denial answered
    /// before the login; a granted login turned into the answer for its user.
    static func basic(
        _ request: ServeRequest, _ service: LoginService, _ generation: LoginService.Generation
    ) -> LoginService.Decision {
        let checked: Checked
        switch beforeSignIn(request, service, generation) {
        case .failure(let denial): return .answer(.response(denial.response))
        case .success(let read): checked = read
        }
        let finish: @Sendable (ServeAnswer) -> ServeAnswer = { answer in
            guard case .granted(let user) = answer else { return answer }
            return .response(signedIn(user, request, service, generation, checked: checked))
        }
        switch service.decide(request) {
        case .answer(let answer): return .answer(finish(answer))
        case .check(var job):
            let previous = job.finish
            job.finish = { finish(previous?($0) ?? $0) }
            return .check(job)
        }
    }
}
