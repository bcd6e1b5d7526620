import CredFileTestSupport
import Foundation
import Testing

@testable import credfile

/// `credfile group`, `credfile access` and `check --groups/--rules` (SPEC §13), run on
/// the files `Documentation/access.md` shows (Examples/access/), as written there.
@Suite struct AccessCLITests {
    static let examples = BuiltProduct.packageRoot.path + "/Examples/access"

    @Test("access decides the page's examples and prints the deciding line; exit 0 allowed, 1 denied")
    func access() throws {
        try withSession { session in
            let rules = Self.examples + "/credfile.rules"
            let groups = Self.examples + "/htgroup"
            let allowed = session.run([
                "access", rules, "--url", "https://app.example.com/admin/users", "--user", "alice", "--groups",
                groups, "--address", "10.1.2.3",
            ])
            #expect(
                allowed.status == 0
                    && allowed.stdout == "allow (\(rules):6: allow host=*.example.com path=/admin/ group=admins)\n",
                "\(allowed)")
            let outside = session.run([
                "access", rules, "--url", "https://app.example.com/admin/users", "--user", "alice", "--groups",
                groups, "--address", "192.0.2.7",
            ])
            #expect(outside.status == 1 && outside.stdout.hasPrefix("deny (\(rules):5: "), "\(outside)")
            let api = session.run(["access", rules, "--url", "https://app.example.com/api/v1?x=1"])
            #expect(api.status == 0 && api.stdout.hasPrefix("bypass (\(rules):4: "), "\(api)")
            let post = session.run(["access", rules, "--url", "https://app.example.com/api/v1", "--method", "post"])
            #expect(post.status == 0 && post.stdout.hasPrefix("allow (\(rules):8: "), "\(post)")
            let anonymous = session.run([
                "access", rules, "--url", "https://app.example.com/admin/", "--address", "10.0.0.9",
            ])
            #expect(anonymous.status == 1 && anonymous.stdout.hasPrefix("sign-in (\(rules):6: "), "\(anonymous)")
            let guessed = session.run(["access", rules, "--url", "https://app.example.com/x/..%2fadmin/"])
            #expect(guessed.status == 1 && guessed.stdout.hasPrefix("deny (the path"), "\(guessed)")
            let none = session.run(["access", rules, "--url", "https://other.org/", "--json"])
            #expect(
                none.status == 1
                    && none.stdout == #"{"action":"deny","line":null,"rule":null,"reason":"no rule matched"}"# + "\n")
            let vault = session.run(["access", rules, "--url", "https://vault.example.com/", "--user", "bob"])
            #expect(vault.status == 0 && vault.stdout.hasPrefix("two-factor (\(rules):7: "))
            // Usage: no --url, a bad URL, a bad address, a bad rules file (its line named).
            #expect(session.run(["access", rules]).status == 2)
            #expect(session.run(["access", rules, "--url", "ftp://a/"]).status == 2)
            #expect(session.run(["access", rules, "--url", "https://a/", "--address", "10.0.0.300"]).status == 2)
            let bad = try session.write("bad.rules", "allow\nallow network=10.0.0.0/33\n")
            let refused = session.run(["access", bad, "--url", "https://a/"])
            #expect(refused.status == 2 && refused.stderr.contains("\(bad):2: matcher 1: network="), "\(refused)")
        }
    }

    @Test("group shows and edits a group file; check --groups --rules names a bad line")
    func group() throws {
        try withSession { session in
            let groups = try session.write("htgroup", "# mine\r\nadmins: alice bob\nstaff:\talice  carol\n")
            #expect(session.run(["group", groups]).stdout == "admins: alice bob\nstaff: alice carol\n")
            #expect(session.run(["group", groups, "alice"]).stdout == "admins\nstaff\n")
            #expect(session.run(["group", groups, "alice", "--json"]).stdout == "[\"admins\",\"staff\"]\n")
            #expect(session.run(["group", groups, "add", "staff", "dave"]).status == 0)
            #expect(session.run(["group", groups, "remove", "admins", "alice"]).status == 0)
            let text = try String(contentsOfFile: groups, encoding: .utf8)
            #expect(text == "# mine\r\nadmins: bob\nstaff:\talice  carol dave\n")
            #expect(session.run(["group", groups, "add", "staff"]).status == 2)
            #expect(session.run(["group", groups, "rename", "staff", "x"]).status == 2)
            let bad = try session.write("bad.htgroup", "ok: a\nbroken line\n")
            let shown = session.run(["group", bad])
            #expect(shown.status == 2 && shown.stderr.contains("\(bad):2: no colon"))
            let users = try session.write("users.txt", "")
            chmod(users, 0o600)
            let checked = session.run(["check", users, "--groups", bad, "--rules", Self.examples + "/credfile.rules"])
            #expect(checked.status == 1 && checked.stdout.contains("\(bad):2: error: no colon"), "\(checked)")
            let good = session.run([
                "check", users, "--groups", Self.examples + "/htgroup", "--rules", Self.examples + "/credfile.rules",
            ])
            #expect(good.status == 0, "\(good)")
        }
    }
}
