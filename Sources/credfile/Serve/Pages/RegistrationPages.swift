import CredFile

/// SPEC §12's pages: the seed's Register screen ("Registro": Usuario, Contraseña, the
/// error in red, a full-width green "Registrarse") and the password change.
extension PortalPage {
    /// The register page (`GET {prefix}/register`, and `POST` after a refusal).
    /// - Parameters:
    ///   - siteTitle: `portal-title`, or nil.
    ///   - csrf: the form's anti-forgery token.
    ///   - rd: where to go once registered (already checked), sent back with the form.
    ///   - username: the name typed before a refusal, filled in again; nil for none.
    ///   - invitation: whether to ask for the invitation code (`register = invite`).
    ///   - error: the refusal to show in red, or nil.
    static func register(
        language: PortalLanguage, siteTitle: String?, prefix: String, csrf: String, rd: String?, username: String?,
        invitation: Bool, error: String?
    ) -> HTML {
        let words = PortalWords(language: language)
        let site: HTML = siteTitle.map { "<p class=\"site\">\($0)</p>\n" } ?? .empty
        let next: HTML = rd.map { "<input type=\"hidden\" name=\"rd\" value=\"\($0)\">\n" } ?? .empty
        let code: HTML =
            invitation
            ? """
            <label for="code">\(words.invitationCode)</label>
            <input id="code" name="code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" required>

            """ : .empty
        let failure: HTML = error.map { "<p class=\"error\" role=\"alert\">\($0)</p>\n" } ?? .empty
        let back: HTML = "<p class=\"register\"><a href=\"\(prefix)/login\">\(words.backToLogin)</a></p>\n"
        let body: HTML = """
            \(site)<h1>\(words.registerTitle)</h1>
            <form method="post" action="\(prefix)/register">
            <input type="hidden" name="csrf" value="\(csrf)">
            \(next)<label for="username">\(words.username)</label>
            <input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="\(username ?? "")">
            <label for="password">\(words.password)</label>
            <input id="password" name="password" type="password" autocomplete="new-password" required>
            \(code)\(failure)<button type="submit" class="register">\(words.register)</button>
            </form>
            \(back)
            """
        return document(
            language: language, title: siteTitle.map { "\(words.registerTitle) · \($0)" } ?? words.registerTitle,
            prefix: prefix, body: body)
    }

    /// The password change (`GET {prefix}/password`, and `POST` after a refusal): the
    /// name (for password managers), the current and the new password.
    static func password(
        language: PortalLanguage, siteTitle: String?, prefix: String, csrf: String, user: String, error: String?
    ) -> HTML {
        let words = PortalWords(language: language)
        let site: HTML = siteTitle.map { "<p class=\"site\">\($0)</p>\n" } ?? .empty
        let failure: HTML = error.map { "<p class=\"error\" role=\"alert\">\($0)</p>\n" } ?? .empty
        let body: HTML = """
            \(site)<h1>\(words.changePassword)</h1>
            <form method="post" action="\(prefix)/password">
            <input type="hidden" name="csrf" value="\(csrf)">
            <label for="username">\(words.username)</label>
            <input id="username" name="username" type="text" autocomplete="username" readonly value="\(user)">
            <label for="current">\(words.currentPassword)</label>
            <input id="current" name="current" type="password" autocomplete="current-password" required>
            <label for="new">\(words.newPassword)</label>
            <input id="new" name="new" type="password" autocomplete="new-password" required>
            \(failure)<button type="submit" class="primary">\(words.changePassword)</button>
            </form>
            <p class="register"><a href="\(prefix)/">\(words.back)</a></p>
            """
        return document(language: language, title: words.changePassword, prefix: prefix, body: body)
    }
}
