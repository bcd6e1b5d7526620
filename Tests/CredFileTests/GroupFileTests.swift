import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

/// SPEC §13's group file: `.htgroup` files in the shapes Apache's mod_authz_groupfile
/// documents (https://httpd.apache.org/docs/2.4/mod/mod_authz_groupfile.html: `group:
/// user user …`, one group a line), and `credfile group`'s locked atomic edit.
@Suite struct GroupFileTests {
    static func parse(_ text: String) throws -> GroupFile {
        try GroupFile(parsing: Array(text.utf8), source: "/etc/httpd/.htgroup")
    }

    @Test("Apache's shapes: spaces, tabs, comments, CR LF, no final newline, a group on two lines")
    func shapes() throws {
        let file = try Self.parse(
            "# Apache group file\n"
                + "mygroup: bob joe anne\n"
                + "admins:alice\tbob  \n"
                + "\t# indented comment\n"
                + "   \n"
                + "staff :\tcarol\r\n"
                + "mygroup: zoe bob\n"
                + "empty:\n"
                + "last: dave")
        #expect(file.groups(of: "bob") == ["mygroup", "admins"])
        #expect(file.groups(of: "zoe") == ["mygroup"])
        #expect(file.groups(of: "carol") == ["staff"])
        #expect(file.groups(of: "dave") == ["last"])
        #expect(file.groups(of: "nobody") == [])
        #expect(file.groups.map(\.group) == ["mygroup", "admins", "staff", "empty", "last"])
        #expect(file.groups.first?.members == ["bob", "joe", "anne", "zoe"])
        #expect(file.isMember("anne", of: "mygroup") && !file.isMember("anne", of: "admins"))
    }

    @Test("A long line and a user in many groups")
    func large() throws {
        let members = (0..<5000).map { "user\($0)" }
        var text = "big: " + members.joined(separator: " ") + "\n"
        for group in 0..<1000 { text += "g\(group): someone alice\n" }
        let file = try Self.parse(text)
        #expect(file.groups(of: "user4999") == ["big"])
        #expect(file.groups(of: "alice").count == 1000)
    }

    @Test(
        "A bad line is an error naming GROUPFILE:LINE",
        arguments: [
            ("ok: a\nno colon here\n", 2, "no colon"),
            ("# c\n: a b\n", 2, "no group name"),
            ("two words: a\n", 1, "blank inside"),
            ("a: b\nc: \u{FF}\n", 2, "not UTF-8"),
        ])
    func errors(_ text: String, _ line: Int, _ fragment: String) {
        var bytes = Array(text.utf8)
        if text.contains("\u{FF}") { bytes = Array("a: b\nc: ".utf8) + [0xFF, 0x0A] }
        #expect {
            try GroupFile(parsing: bytes, source: "/etc/httpd/.htgroup")
        } throws: { error in
            guard let error = error as? CredFileError else { return false }
            return error.code == .usage && error.message.hasPrefix("/etc/httpd/.htgroup:\(line): ")
                && error.message.contains(fragment)
        }
    }

    @Test("add and remove rewrite the file atomically, other lines byte for byte, mode 0600")
    func edit() throws {
        try withTemporaryDirectory { directory in
            let path = directory.file(".htgroup")
            let original = "# kept\r\nadmins:\talice  bob\t\nstaff: carol\n\n# end"
            try original.write(toFile: path, atomically: false, encoding: .utf8)
            chmod(path, 0o640)
            #expect(try GroupFile.edit(path: path, .add, group: "staff", user: "dave"))
            #expect(!(try GroupFile.edit(path: path, .add, group: "staff", user: "dave")))
            #expect(try GroupFile.edit(path: path, .add, group: "ops", user: "erin"))
            var text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text == "# kept\r\nadmins:\talice  bob\t\nstaff: carol dave\n\n# end\nops: erin\n")
            #expect(try GroupFile.edit(path: path, .remove, group: "admins", user: "alice"))
            #expect(!(try GroupFile.edit(path: path, .remove, group: "admins", user: "zed")))
            text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text == "# kept\r\nadmins: bob\nstaff: carol dave\n\n# end\nops: erin\n")
            var info = stat()
            #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o640)  // the old file's mode kept
            #expect(try directory.temporaryFiles(of: ".htgroup").isEmpty)
            // A new file is created 0600; a bad file is not touched.
            let fresh = directory.file("new.htgroup")
            #expect(try GroupFile.edit(path: fresh, .add, group: "g", user: "u"))
            #expect(stat(fresh, &info) == 0 && info.st_mode & 0o777 == 0o600)
            #expect(try String(contentsOfFile: fresh, encoding: .utf8) == "g: u\n")
            let bad = directory.file("bad.htgroup")
            try "g: u\nbroken\n".write(toFile: bad, atomically: false, encoding: .utf8)
            #expect(throws: CredFileError.self) { try GroupFile.edit(path: bad, .add, group: "g", user: "v") }
            #expect(try String(contentsOfFile: bad, encoding: .utf8) == "g: u\nbroken\n")
            // remove on a missing file is an I/O error, and creates nothing.
            #expect(throws: CredFileError.self) {
                try GroupFile.edit(path: directory.file("none"), .remove, group: "g", user: "u")
            }
            #expect(access(directory.file("none"), F_OK) != 0)
        }
    }

    @Test("Names that cannot be written are refused", arguments: ["", "a b", "a\tb", "a\nb"])
    func names(_ name: String) throws {
        try withTemporaryDirectory { directory in
            #expect(throws: CredFileError.self) {
                try GroupFile.edit(path: directory.file("g"), .add, group: name, user: "u")
            }
            #expect(throws: CredFileError.self) {
                try GroupFile.edit(path: directory.file("g"), .add, group: "g", user: name)
            }
        }
        try withTemporaryDirectory { directory in
            for group in ["a:b", "#x"] {
                #expect(throws: CredFileError.self) {
                    try GroupFile.edit(path: directory.file("g"), .add, group: group, user: "u")
                }
            }
            // A member may start with # or hold a colon: `g: #x a:b` is no comment.
            let hash = try GroupFile.edit(path: directory.file("g"), .add, group: "g", user: "#x")
            let colon = try GroupFile.edit(path: directory.file("g"), .add, group: "g", user: "a:b")
            let groups = try GroupFile(path: directory.file("g")).groups(of: "#x")
            #expect(hash && colon && groups == ["g"])
        }
    }
}
