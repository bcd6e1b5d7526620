import CredFileTestSupport
import Foundation
import Testing

/// SPEC §14's passkeys as a person meets them (#39): behind nginx's portal recipe on https,
/// Chromium's virtual authenticator (CTAP2, internal transport, resident keys, user
/// verification) adds a passkey on `{prefix}/` after a password sign-in, and after signing
/// out signs in with the passkey alone and reaches the page asked for; then with the password
/// and the code page's passkey button (the second factor).
@Suite(.serialized) struct BrowserPasskeyTests {
    @Test(
        "add a passkey on the signed-in page, sign out, sign in with it alone (virtual authenticator, nginx, https)",
        .enabled(
            if: BrowserHarness.runnable && ExternalTool.runnable("nginx"),
            Comment(rawValue: BrowserHarness.skipNote + "; " + ExternalTool.skipNote("nginx"))))
    func registerThenSignIn() throws {
        try withSession { session in
            let profile = try BrowserHarness.profile(in: session)
            try BrowserHarness.withPortalBehindNginx(session, certificates: profile.certificates, passkeys: true) {
                site in
                let result = try BrowserHarness.run(
                    "passkeys",
                    [
                        "site": site.url, "protected": "/private/", "prefix": "/.credfile",
                        "user": IntegrationServeTests.alice.0,
                        "password": session.password(IntegrationServeTests.alice.1),
                    ], profile: profile, in: session)
                try BrowserHarness.keepScreenshots(profile)
                #expect(result["screenshots"] as? [String] == ["passkey-registered.png", "passkey-sign-in.png"])
                let steps = try #require(result["steps"] as? [String: [String: Any]], "\(result)\n\(site.logs())")
                func text(_ step: String) -> String { steps[step]?["text"] as? String ?? "" }
                func url(_ step: String) -> String { steps[step]?["url"] as? String ?? "" }
                let note = Comment(rawValue: "\(steps)\n\(site.logs())")
                #expect(text("signed_in").contains("private page"), note)
                #expect(BrowserHarness.axeFindings(steps["home"] ?? [:]).isEmpty, note)
                #expect(steps["registered"]?["passkeys"] as? [String] == ["portátil"], note)
                #expect(steps["registered"]?["credentials"] as? Int == 1, note)
                #expect(steps["signed_out"]?["session_cookie"] as? Bool == false, note)
                #expect(url("login").contains("/.credfile/login"), note)
                #expect(BrowserHarness.axeFindings(steps["login"] ?? [:]).isEmpty, note)
                #expect(steps["after_passkey"]?["session_cookie"] as? Bool == true, note)
                #expect(text("after_passkey").contains("private page"), "back to the page asked for: \(note)")
                #expect(url("after_passkey").contains("/private/"), note)
                // Then the password and the code page's passkey button (the second factor).
                #expect(url("code_page").contains("/.credfile/code"), note)
                #expect(
                    steps["code_page"]?["button"] as? Int == 1 && steps["code_page"]?["code_field"] as? Int == 0, note)
                #expect(steps["after_second_factor"]?["session_cookie"] as? Bool == true, note)
                #expect(url("after_second_factor").contains("/private/"), note)
            }
        }
    }
}
