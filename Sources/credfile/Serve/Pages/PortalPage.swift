import CredFile

/// The portal's pages (SPEC §11): server-rendered HTML that needs no JavaScript, with
/// labels, `autocomplete` where password managers look for it, a viewport for phones, and
/// only the stylesheet under the prefix as an asset; laid out as the seed's SwiftUI
/// screens (a large bold title, rounded fields, the error in red under them, a full-width
/// blue "Iniciar sesión", "✅ Acceso permitido" in green).
enum PortalPage {
    /// The headers every page is sent with (SPEC §11).
    static let securityHeaders: [(name: String, value: String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "same-origin"),
        ("Cache-Control", "no-store"),
    ]

    /// What every page shares: the document, its language, title, viewport and stylesheet.
    static func document(language: PortalLanguage, title: String, prefix: String, body: HTML) -> HTML {
        """
        <!DOCTYPE html>
        <html lang="\(language.rawValue)">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title>
        <link rel="stylesheet" href="\(prefix)/style.css">
        </head>
        <body>
        <main>
        \(body)
        </main>
        </body>
        </html>

        """
    }

    /// The sign-in page (`GET {prefix}/login`, and `POST` after a denial).
    /// - Parameters:
    ///   - siteTitle: `portal-title`, or nil.
    ///   - csrf: the form's anti-forgery token.
    ///   - rd: where to go after signing in (already checked), sent back with the form.
    ///   - username: the name typed before a denial, filled in again; nil for none.
    ///   - failed: whether to show "Usuario o contraseña incorrectos.".
    ///   - registerLink: whether §12 allows registering (the "Registrarse" link).
    ///   - extra: what follows the form (§14's passkey button), or nothing.
    static func login(
        language: PortalLanguage, siteTitle: String?, prefix: String, csrf: String, rd: String?, username: String?,
        failed: Bool, registerLink: Bool, extra: HTML = .empty
    ) -> HTML {
        let words = PortalWords(language: language)
        let site: HTML = siteTitle.map { "<p class=\"site\">\($0)</p>\n" } ?? .empty
        let error: HTML =
            failed ? "<p class=\"error\" role=\"alert\">\(words.wrongCredentials)</p>\n" : .empty
        let next: HTML = rd.map { "<input type=\"hidden\" name=\"rd\" value=\"\($0)\">\n" } ?? .empty
        let register: HTML =
            registerLink
            ? "<p class=\"register\"><a href=\"\(prefix)/register\(rd.map { "?rd=" + PortalRoutes.percentEncoded($0) } ?? "")\">\(words.register)</a></p>\n"
            : .empty
        let body: HTML = """
            \(site)<h1>\(words.loginTitle)</h1>
            <form method="post" action="\(prefix)/login">
            <input type="hidden" name="csrf" value="\(csrf)">
            \(next)<label for="username">\(words.username)</label>
            <input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="\(username ?? "")">
            <label for="password">\(words.password)</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required>
            \(error)<button type="submit" class="primary">\(words.signIn)</button>
            </form>
            \(extra)\(register)
            """
        return document(
            language: language, title: siteTitle.map { "\(words.loginTitle) · \($0)" } ?? words.loginTitle,
            prefix: prefix, body: body)
    }

    /// The signed-in page (`GET {prefix}/`): the name, its groups, "✅ Acceso permitido",
    /// sign out, and sign out everywhere (each a POST with the anti-forgery token);
    /// `secondFactor`: §14's section on one-time codes, before them; `extra` follows the
    /// sign-out forms (§14's passkeys), or nothing.
    static func signedIn(
        language: PortalLanguage, siteTitle: String?, prefix: String, csrf: String, user: String, groups: [String],
        secondFactor: HTML = .empty, extra: HTML = .empty
    ) -> HTML {
        let words = PortalWords(language: language)
        let site: HTML = siteTitle.map { "<p class=\"site\">\($0)</p>\n" } ?? .empty
        let groupList: HTML = groups.isEmpty ? "\(words.noGroups)" : "\(groups.joined(separator: ", "))"
        let body: HTML = """
            \(site)<h1>\(words.loginTitle)</h1>
            <p class="granted">\(words.accessGranted)</p>
            <p>\(words.signedInAs) <strong class="user">\(user)</strong></p>
            <p>\(words.groups): <span class="groups">\(groupList)</span></p>
            \(secondFactor)<form method="post" action="\(prefix)/logout">
            <input type="hidden" name="csrf" value="\(csrf)">
            <button type="submit" class="primary">\(words.signOut)</button>
            </form>
            <form method="post" action="\(prefix)/logout">
            <input type="hidden" name="csrf" value="\(csrf)">
            <input type="hidden" name="scope" value="all">
            <button type="submit" class="secondary">\(words.signOutEverywhere)</button>
            </form>
            <p class="register"><a href="\(prefix)/password">\(words.changePassword)</a></p>
            \(extra)
            """
        return document(language: language, title: words.accessGranted, prefix: prefix, body: body)
    }

    /// The stylesheet served at `{prefix}/style.css` unless `portal-stylesheet` replaces it.
    /// The seed's system blue, red and green, darkened to at least 4.5:1 against their
    /// backgrounds (WCAG AA, axe-core's `color-contrast`, checked by BrowserPortalTests):
    /// white on #0062cc 5.8, #d70015 on white 5.4, #1f7a35 on white 5.4.
    static let stylesheet = """
        body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; background: #f2f2f7; color: #1c1c1e; }
        main { max-width: 22rem; margin: 4rem auto; padding: 1.5rem; background: #fff; border-radius: 12px; }
        h1 { font-size: 2.125rem; font-weight: 700; margin: 0 0 1.25rem; }
        .site { color: #6e6e73; margin: 0 0 .25rem; }
        label { display: block; margin: .75rem 0 .25rem; }
        input[type=text], input[type=password] { box-sizing: border-box; width: 100%; padding: .6rem .75rem; font-size: 1rem; border: 1px solid #c7c7cc; border-radius: 8px; }
        .error { color: #d70015; margin: .75rem 0 0; }
        button { box-sizing: border-box; width: 100%; margin-top: 1.25rem; padding: .75rem; font-size: 1rem; font-weight: 600; border: 0; border-radius: 10px; cursor: pointer; }
        button.primary { background: #0062cc; color: #fff; }
        button.register { background: #1f7a35; color: #fff; }
        button.secondary { background: #e5e5ea; color: #1c1c1e; margin-top: .75rem; }
        .granted { color: #1f7a35; font-weight: 600; }
        .hint { color: #6e6e73; font-size: .875rem; }
        h2 { font-size: 1.25rem; margin: 1.25rem 0 .25rem; }
        .qr svg { display: block; max-width: 100%; height: auto; margin: 0 auto; }
        .register { text-align: center; margin-top: 1rem; }
        a { color: #0062cc; }

        """
}
