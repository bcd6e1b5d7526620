import CredFileTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The seed's five steps ("Funcionamiento del proyecto") as a person meets them (#36): the
/// nginx portal recipe on https in front of `credfile serve --portal --register invite`, and
/// a real browser (``BrowserHarness``) in Spanish: sign-in page, "Registrarse", the register
/// page with an invitation code, "El usuario ya existe.", signed in at once and back on the
/// page asked for; then the password change, the old password refused, the new one taken.
@Suite(.serialized) struct BrowserRegistrationTests {
    typealias Serve = IntegrationServeTests

    @Test(
        "the seed's five steps and the password change in a real browser through nginx over https; axe finds nothing serious",
        .enabled(
            if: BrowserHarness.runnable && ExternalTool.runnable("nginx"),
            Comment(rawValue: BrowserHarness.skipNote + "; " + ExternalTool.skipNote("nginx"))))
    func seedStepsInABrowser() throws {
        try withSession { session in
            let profile = try BrowserHarness.profile(in: session)
            try BrowserHarness.withPortalBehindNginx(
                session, certificates: profile.certificates, serveArguments: ["--register", "invite"]
            ) { site in
                let file = session.path("users.txt")
                let invited = session.run(["invite", file])
                let code = invited.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(invited.status == 0 && code.count == 29, "\(invited)")
                let result = try BrowserHarness.run(
                    "register_journey",
                    [
                        "site": site.url, "protected": "/private/", "prefix": "/.credfile", "taken": Serve.alice.0,
                        "user": "valencia", "password": session.password("naranjo-en-flor-2026"), "code": code,
                        "new_password": session.password("granada-y-limon-2027"),
                    ], profile: profile, in: session)
                let steps = try #require(result["steps"] as? [String: [String: Any]], "\(result)")
                func text(_ step: String) -> String { steps[step]?["text"] as? String ?? "" }
                func url(_ step: String) -> String { steps[step]?["url"] as? String ?? "" }
                func note(_ step: String) -> Comment {
                    Comment(rawValue: "\(step): \(steps[step] ?? [:])\n\(site.logs())")
                }

                #expect(
                    text("login").contains("Iniciar sesión") && text("login").contains("Registrarse"), note("login"))
                #expect(url("register").hasPrefix(site.url + "/.credfile/register?rd="), note("register"))
                #expect(text("register").contains("Registro") && text("register").contains("Código de invitación"))
                let fields = (steps["register"]?["fields"] as? [[String: Any]]) ?? []
                #expect(
                    fields.contains {
                        $0["autocomplete"] as? String == "username" && $0["label"] as? String == "Usuario"
                    })
                #expect(
                    fields.contains {
                        $0["autocomplete"] as? String == "new-password" && $0["label"] as? String == "Contraseña"
                    }, note("register"))
                #expect(BrowserHarness.axeFindings(steps["register"] ?? [:]).isEmpty, note("register"))
                #expect(text("taken").contains("El usuario ya existe."), note("taken"))
                #expect(steps["taken"]?["session_cookie"] is NSNull, note("taken"))
                #expect(url("registered") == site.url + "/private/", note("registered"))
                #expect(text("registered").contains("private page"), note("registered"))
                #expect(steps["registered"]?["session_cookie"] is [String: Any], note("registered"))
                #expect(try String(decoding: readBytes(file), as: UTF8.self).contains("\nvalencia,$pbkdf2-sha256$"))

                #expect(BrowserHarness.axeFindings(steps["password"] ?? [:]).isEmpty, note("password"))
                #expect(text("changed").contains("✅ Acceso permitido"), note("changed"))
                #expect(text("old_refused").contains("Usuario o contraseña incorrectos."), note("old_refused"))
                #expect(url("new_taken") == site.url + "/private/", note("new_taken"))
            }
        }
    }
}
