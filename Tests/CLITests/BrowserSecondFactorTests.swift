import CredFileTestSupport
import Foundation
import Testing

/// SPEC §14 as a person meets it (#38): behind nginx's portal recipe on https, a real
/// browser enrols an authenticator app on `{prefix}/` (pyotp computes the code from the key
/// the page showed) and then signs in in two steps, the password and the code.
@Suite(.serialized) struct BrowserSecondFactorTests {
    @Test(
        "enrolment on the signed-in page, then the password and pyotp's code in a real browser (nginx recipe, https)",
        .enabled(
            if: BrowserHarness.runnable && ExternalTool.runnable("nginx"),
            Comment(rawValue: BrowserHarness.skipNote + "; " + ExternalTool.skipNote("nginx"))))
    func enrolThenTwoSteps() throws {
        try withSession { session in
            let profile = try BrowserHarness.profile(in: session)
            try BrowserHarness.withPortalBehindNginx(session, certificates: profile.certificates) { site in
                let result = try BrowserHarness.run(
                    "second_factor",
                    [
                        "site": site.url, "protected": "/private/", "prefix": "/.credfile",
                        "user": IntegrationServeTests.alice.0,
                        "password": session.password(IntegrationServeTests.alice.1),
                    ], profile: profile, in: session)
                let steps = try #require(result["steps"] as? [String: [String: Any]], "\(result)\n\(site.logs())")
                func text(_ step: String) -> String { steps[step]?["text"] as? String ?? "" }
                func url(_ step: String) -> String { steps[step]?["url"] as? String ?? "" }
                let note = Comment(rawValue: "\(steps)\n\(site.logs())")
                #expect(text("signed_in").contains("private page"), note)
                #expect(text("home").contains("No activado."), note)
                #expect(steps["offer"]?["qr"] as? Int == 1, note)
                #expect(BrowserHarness.axeFindings(steps["offer"] ?? [:]).isEmpty, note)
                let offerFields = (steps["offer"]?["fields"] as? [[String: Any]]) ?? []
                #expect(offerFields.contains { $0["autocomplete"] as? String == "one-time-code" }, note)
                #expect(text("enrolled").contains("Activado."), note)

                #expect(url("code_page").hasSuffix("/.credfile/code"), note)
                #expect(steps["code_page"]?["code_cookie"] as? Bool == true, note)
                #expect(steps["code_page"]?["session_cookie"] as? Bool == false, note)
                #expect(BrowserHarness.axeFindings(steps["code_page"] ?? [:]).isEmpty, note)
                let codeFields = (steps["code_page"]?["fields"] as? [[String: Any]]) ?? []
                #expect(codeFields.contains { $0["autocomplete"] as? String == "one-time-code" }, note)
                #expect(steps["after_code"]?["session_cookie"] as? Bool == true, note)
                #expect(text("after_code").contains("private page"), "back to the page asked for: \(note)")
            }
        }
    }
}
