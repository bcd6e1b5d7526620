import CredFile
import Foundation
import Testing

@testable import credfile

/// SPEC §11's pages as `serve` will send them: one HTML-escaping type, the seed's words in
/// Spanish and English, labels and `autocomplete` for password managers, a viewport, no
/// external asset, no script, and the security headers.
@Suite struct PortalPagesTests {
    static let hostile = "<script>alert(\"x\")</script>&'"

    @Test("HTML: every interpolated string is escaped; markup only from the source")
    func escaping() {
        let value = Self.hostile
        let html: HTML = "<p title=\"\(value)\">\(value)</p>"
        #expect(
            html.rendered
                == "<p title=\"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;\">"
                + "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>")
        let inner: HTML = "<b>\(value)</b>"
        let outer: HTML = "<i>\(inner)</i>"
        #expect(outer.rendered.hasPrefix("<i><b>&lt;script") && !outer.rendered.contains("&lt;b&gt;"))
        #expect(HTML.escape("José ✅") == "José ✅")
    }

    @Test(
        "The sign-in page: the seed's words, labels, autocomplete, viewport, the form's token and rd",
        arguments: PortalLanguage.allCases)
    func login(_ language: PortalLanguage) {
        let page = PortalPage.login(
            language: language, siteTitle: "Intranet", prefix: "/.credfile", csrf: "tok",
            rd: "https://app.example.com/x?a=1&b=2",
            username: nil, failed: false, registerLink: true
        ).rendered
        let words: [String] =
            language == .es
            ? ["Iniciar sesión", "Usuario", "Contraseña", "Registrarse"]
            : ["Sign in", "Username", "Password", "Register"]
        for word in words { #expect(page.contains(word), "\(word)") }
        #expect(page.contains("<html lang=\"\(language.rawValue)\">"))
        #expect(page.contains("<h1>Login</h1>"))
        #expect(page.contains("<label for=\"username\">") && page.contains("<label for=\"password\">"))
        #expect(page.contains("autocomplete=\"username\"") && page.contains("autocomplete=\"current-password\""))
        #expect(page.contains("type=\"password\""))
        #expect(page.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
        #expect(page.contains("<form method=\"post\" action=\"/.credfile/login\">"))
        #expect(page.contains("name=\"csrf\" value=\"tok\""))
        #expect(page.contains("name=\"rd\" value=\"https://app.example.com/x?a=1&amp;b=2\""))
        // The register link carries rd (SPEC §12: registering lands on the page asked for).
        #expect(page.contains("href=\"/.credfile/register?rd=https%3A%2F%2Fapp.example.com%2Fx%3Fa%3D1%26b%3D2\""))
        #expect(!page.contains("<script") && !page.contains("http://") && !page.contains("//cdn"))
        #expect(!page.contains("incorrect"), "no error before a denial")
        let links = page.components(separatedBy: "href=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(links.allSatisfy { $0.hasPrefix("/.credfile/") }, "an asset or link outside the prefix")
    }

    @Test("After a denial: the message in red under the fields, the name kept, escaped")
    func denied() throws {
        let es = PortalPage.login(
            language: .es, siteTitle: nil, prefix: "/.credfile", csrf: "t", rd: nil, username: Self.hostile,
            failed: true, registerLink: false
        ).rendered
        #expect(es.contains("<p class=\"error\" role=\"alert\">Usuario o contraseña incorrectos.</p>"))
        #expect(!es.contains("<script>") && es.contains("value=\"&lt;script&gt;"))
        #expect(!es.contains("Registrarse") && !es.contains("name=\"rd\""))
        let error = try #require(es.range(of: "class=\"error\"")).lowerBound
        let password = try #require(es.range(of: "id=\"password\"")).lowerBound
        let button = try #require(es.range(of: "<button")).lowerBound
        #expect(password < error && error < button, "the error is not between the fields and the button")
        let en = PortalPage.login(
            language: .en, siteTitle: nil, prefix: "/p", csrf: "t", rd: nil, username: nil, failed: true,
            registerLink: false
        ).rendered
        #expect(en.contains("Wrong username or password."))
    }

    @Test("The signed-in page: name, groups, ✅ Acceso permitido, sign out and sign out everywhere as POSTs")
    func signedIn() {
        let page = PortalPage.signedIn(
            language: .es, siteTitle: Self.hostile, prefix: "/.credfile", csrf: "tok", user: "josé<b>",
            groups: ["admins", "dev&ops"]
        ).rendered
        #expect(page.contains("✅ Acceso permitido") && !page.contains("Acceptance"))
        #expect(page.contains("<strong class=\"user\">josé&lt;b&gt;</strong>"))
        #expect(page.contains("admins, dev&amp;ops"))
        #expect(page.components(separatedBy: "<form method=\"post\" action=\"/.credfile/logout\">").count == 3)
        #expect(page.contains("Cerrar sesión</button>") && page.contains("Cerrar sesión en todos los dispositivos"))
        #expect(page.contains("name=\"scope\" value=\"all\""))
        #expect(!page.contains("<script>"))
        let en = PortalPage.signedIn(
            language: .en, siteTitle: nil, prefix: "/.credfile", csrf: "t", user: "bob", groups: []
        ).rendered
        #expect(en.contains("✅ Access granted") && en.contains("none") && en.contains("Sign out everywhere"))
    }

    @Test("Every page's security headers are SPEC §11's, exactly")
    func headers() {
        let headers = Dictionary(uniqueKeysWithValues: PortalPage.securityHeaders.map { ($0.name, $0.value) })
        #expect(
            headers["Content-Security-Policy"]
                == "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        )
        #expect(headers["X-Content-Type-Options"] == "nosniff")
        #expect(headers["Referrer-Policy"] == "same-origin")
        #expect(headers["Cache-Control"] == "no-store")
    }

    @Test(
        "The stylesheet: the seed's look (blue button, red error, green access) at WCAG AA contrast, no external asset")
    func stylesheet() {
        let css = PortalPage.stylesheet
        #expect(css.contains("button.primary { background: #0062cc") && css.contains("width: 100%"))
        #expect(css.contains(".error { color: #d70015") && css.contains(".granted { color: #1f7a35"))
        #expect(!css.contains("url(") && !css.contains("@import"))
    }
}
