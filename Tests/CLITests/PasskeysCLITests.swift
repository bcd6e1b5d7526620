import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile
@testable import credfile

// SPEC §14's `credfile passkeys FILE [USER] [--remove ID] [--json]` over a passkeys file
// (FILE.passkeys) holding two users' credentials; and the portal's passkey controls and
// script under `script-src 'self'` only where passkeys are on.

@Suite("credfile passkeys (SPEC §14)")
struct PasskeysCLITests {
    /// P-256's generator as an ES256 COSE key (a point on the curve).
    static let coseKey: [UInt8] =
        [0xA5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]
        + hex("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296") + [0x22, 0x58, 0x20]
        + hex("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")

    static func hex(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            out.append(UInt8(text[index..<next], radix: 16)!)  // the literals above are hex
            index = next
        }
        return out
    }

    @Test("lists every user's or one user's passkeys (text and --json, never a key); --remove ID removes one")
    func listAndRemove() throws {
        try withSession { session in
            let file = session.path("app.cred")
            let key = Passkeys.base64URL(Self.coseKey)
            let lines =
                "# passkeys\nalice:AAEC:3:1796083200:0:\(key):phone\nbob:AAED:9:1796083200:1796086800:\(key):key: work\n"
            try Data(lines.utf8).write(to: URL(fileURLWithPath: file + ".passkeys"))
            let all = session.run(["passkeys", file])
            #expect(all.status == 0)
            #expect(all.stdoutLines.count == 2)
            #expect(all.stdoutLines.first?.hasPrefix("alice\tAAEC\tphone\t2026-") == true)
            #expect(!all.stdout.contains(key))
            let json = session.run(["passkeys", file, "bob", "--json"])
            #expect(json.status == 0)
            let items = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
            #expect(items?.count == 1)
            #expect(items?.first?["name"] as? String == "key: work")
            #expect(items?.first?["counter"] as? Int == 9)
            #expect(items?.first?["last_used"] as? String != nil)
            #expect(session.run(["passkeys", file, "alice", "--remove", "AAED"]).status == 3)
            #expect(session.run(["passkeys", file, "bob", "--remove", "AAED"]).status == 0)
            #expect(session.run(["passkeys", file, "--remove", "AAEC"]).status == 0)
            #expect(session.run(["passkeys", file, "--remove", "AAEC"]).status == 3)
            #expect(session.run(["passkeys", file]).stdout.isEmpty)
            let kept = try String(contentsOfFile: file + ".passkeys", encoding: .utf8)
            #expect(kept == "# passkeys\n")
        }
    }

    @Test("the sign-in page has the passkey button and the script's CSP only with passkeys on")
    func pages() throws {
        let headers = HTTPResponse.page(200, "<p>x</p>", scripted: true).headers
        let policy = headers.first { $0.name == "Content-Security-Policy" }?.value ?? ""
        #expect(policy.hasSuffix("base-uri 'none'; script-src 'self'; connect-src 'self'"))
        let plain = HTTPResponse.page(200, "<p>x</p>").headers.first { $0.name == "Content-Security-Policy" }?.value
        #expect(plain?.contains("script-src") == false)
        let button = PasskeyPage.signIn(language: .en, prefix: "/.credfile", csrf: "t", rd: nil).rendered
        #expect(button.contains("id=\"passkey-sign-in\""))
        #expect(button.contains("<script src=\"/.credfile/passkeys.js\" defer></script>"))
        #expect(button.contains("<noscript>"))
        let manage = PasskeyPage.manage(language: .es, prefix: "/p", csrf: "t", names: ["<b>"]).rendered
        #expect(manage.contains("id=\"passkey-register\"") && manage.contains("&lt;b&gt;"))
        #expect(PasskeyScript.source.contains("navigator.credentials.get"))
        #expect(!PasskeyScript.source.contains("eval("))
    }
}
