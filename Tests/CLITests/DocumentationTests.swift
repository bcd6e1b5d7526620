import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile
@testable import credfile
import _CredFileFuzzChecks

#if canImport(Glibc)
import Glibc
#endif

/// The command table and what is generated from it (#10 item 4, #17): `--help`, the man
/// page, the completions and the Debian package agree with what the parser accepts.
@Suite struct DocumentationTests {
    /// Every `--option` spelled in `text`.
    static func optionNames(in text: String) -> Set<String> {
        var names: Set<String> = []
        for match in text.matches(of: /--[a-z][a-z0-9-]*[a-z0-9]/) { names.insert(String(match.output)) }
        return names
    }

    /// Runs `executable arguments`, returning its exit status, stdout and stderr.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws
        -> CLIResult
    {
        CLIResult(try ChildProcess.run(executable, arguments, environment: environment))
    }

    @Test func everyCommandHasARowAndEveryOptionASummary() {
        #expect(Set(Command.allCases.map(\.name)).count == Command.allCases.count, "a command has two rows")
        for command in Command.allCases {
            #expect(Command(named: command.name) == command)
            #expect(!command.summary.isEmpty && !command.details.isEmpty)
            for option in command.options + command.required {
                #expect(Setting.options.contains(option) && !option.isCommon, "\(command) lists \(option)")
            }
        }
        #expect(Set(Setting.options.map(\.name)).count == Setting.options.count, "an option has two rows")
        for option in Setting.options {
            #expect(!option.summary.isEmpty)
            #expect(Setting.option(spelled: option.optionName) == option)
            // A key is an option the file can set; every other option names why not (Options.swift).
            #expect(option.isKey == Setting.keys.contains(option), "\(option)")
            #expect(option.isCommon || !option.commands.isEmpty || option.isHidden, "no command takes \(option)")
        }
    }

    /// SPEC §5's commands and options, spelled as the SPEC spells them: each parses.
    @Test(arguments: [
        ["pam", "F"], ["checkpassword", "F", "/bin/true"], ["checkpassword", "F", "/bin/echo", "--json", "-x", "--"],
        ["helper", "F", "--protocol", "squid"], ["export", "F", "--to", "ldif"],
        ["export", "F", "--to", "ldif", "--base-dn", "dc=example,dc=org", "--skip-unexportable", "--json"],
        ["import", "F", "--hashed"], ["import", "F", "--from", "htpasswd"], ["import", "F", "--from=shadow"],
        ["add", "F", "u", "--min-length", "15", "--blocklist", "list.txt", "--lock-timeout", "2.5"],
    ])
    func theSpecsCommandLinesParse(_ arguments: [String]) throws {
        let invocation = try CredFileCLI.parse(arguments)
        #expect(invocation.command?.name == arguments[0])
    }

    @Test func checkpasswordHandsEverythingAfterPROGToPROG() throws {
        let invocation = try CredFileCLI.parse([
            "--upgrade", "checkpassword", "--", "F", "/bin/prog", "--help", "--json", "x",
        ])
        #expect(invocation.positionals == ["F"])
        #expect(invocation.programArguments == ["/bin/prog", "--help", "--json", "x"].map { Array($0.utf8) })
        #expect(invocation.upgrade && !invocation.help && !invocation.json)
        let values = try CredFileCLI.parse(["export", "F", "--to=ldif", "--base-dn", "dc=x", "--skip-unexportable"])
        #expect(values.exportTarget == .ldif && values.baseDN == "dc=x" && values.skipUnexportable)
        let helper = try CredFileCLI.parse(["helper", "F", "--protocol", "squid"])
        #expect(helper.helperProtocol == .squid)
        let passwords = try CredFileCLI.parse([
            "import", "F", "--from", "dovecot", "--min-length", "15", "--blocklist", "b", "--blocklist=c",
        ])
        #expect(
            passwords.importFormat == .dovecot && passwords.minimumLength == 15 && passwords.blocklists == ["b", "c"])
    }

    struct Misuse: CustomTestStringConvertible, Sendable {
        var name: String
        var arguments: [String]
        var testDescription: String { name }
    }

    @Test(arguments: [
        Misuse(name: "export without --to", arguments: ["export", "F"]),
        Misuse(name: "helper without --protocol", arguments: ["helper", "F"]),
        Misuse(name: "--protocol http", arguments: ["helper", "F", "--protocol", "http"]),
        Misuse(name: "--to csv", arguments: ["export", "F", "--to", "csv"]),
        Misuse(name: "--from passwd", arguments: ["import", "F", "--from", "passwd"]),
        Misuse(name: "--hashed with --from", arguments: ["import", "F", "--hashed", "--from", "shadow"]),
        Misuse(name: "--plaintext with --hashed", arguments: ["import", "F", "--hashed", "--plaintext"]),
        Misuse(name: "--hashed on add", arguments: ["add", "F", "u", "--hashed"]),
        Misuse(name: "--base-dn on list", arguments: ["list", "F", "--base-dn", "dc=x"]),
        Misuse(name: "checkpassword without PROG", arguments: ["checkpassword", "F"]),
        Misuse(name: "--min-length 0", arguments: ["add", "F", "u", "--min-length", "0"]),
        Misuse(name: "--blocklist empty", arguments: ["add", "F", "u", "--blocklist="]),
        Misuse(name: "--generate-completion tcsh", arguments: ["--generate-completion", "tcsh"]),
    ])
    func misuseOfTheNewOptionsIsAUsageError(_ misuse: Misuse) throws {
        try withSession { session in
            let result = session.run(misuse.arguments)
            expectUsageError(result)
        }
    }

    @Test func helpListsEveryVisibleOptionAndEveryCommandItsOwn() throws {
        let visible = Set(Setting.visible.map(\.optionName))
        #expect(Self.optionNames(in: Help.overview) == visible)
        for command in Command.allCases {
            let text = Help.text(for: command)
            for option in command.options { #expect(text.contains("  \(option.usage)"), "\(command): \(option)") }
            for option in Setting.specific where !command.options.contains(option) {
                // Followed by a space or the line's end: --address is not --address-free-failures.
                let shown = text.contains("  \(option.optionName) ") || text.contains("  \(option.optionName)\n")
                #expect(!shown, "\(command) shows \(option)")
            }
        }
        for hidden in Setting.options where hidden.isHidden { #expect(!Help.overview.contains(hidden.optionName)) }
    }

    @Test(.enabled(if: ExternalTool.runnable("man"), Comment(rawValue: ExternalTool.skipNote("man"))))
    func theManPageRendersAndDocumentsWhatTheBinaryKnows() throws {
        try withSession { session in
            let binary = try BuiltProduct.path("credfile")
            let generated = try Self.run(binary, ["--generate-man"])
            #expect(generated.status == 0 && generated.stderr.isEmpty)
            try session.write("credfile.1", generated.stdout)
            let rendered = try Self.run(
                try ExternalTool.path("man"), ["--warnings", "-l", session.path("credfile.1")],
                environment: [
                    "MANWIDTH": "100", "MANPAGER": "cat", "PAGER": "cat", "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin",
                ])
            #expect(rendered.status == 0, "\(rendered.stderr)")
            #expect(rendered.stderr.isEmpty, "groff warnings: \(rendered.stderr)")
            let page = rendered.stdout
            for section in [
                "NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "FILE FORMAT", "EXIT STATUS",
                "ENVIRONMENT", "FILES", "SECURITY", "EXAMPLES", "SEE ALSO",
            ] {
                #expect(page.contains("\n\(section)\n"), "no \(section)")
            }
            // Every command the binary's help lists is documented.
            let help = try BuiltBinary.run(["--help"], stdin: nil, in: session)
            let commands = help.stdout.split(separator: "\n", omittingEmptySubsequences: false).drop {
                $0 != "Commands:"
            }.dropFirst()
                .prefix { !$0.isEmpty }.compactMap {
                    $0.hasPrefix("  ") && !$0.hasPrefix("   ") ? $0.split(separator: " ").first.map(String.init) : nil
                }
            #expect(Set(commands) == Set(Command.allCases.map(\.name)))
            for command in commands {
                #expect(page.contains("\n       \(command)"), "\(command) is not in the man page")
            }
            // --help and the man page list the same options.
            #expect(Self.optionNames(in: help.stdout) == Self.optionNames(in: page))
            for needle in [
                "FILE.lock", "NO_COLOR", "LC_ALL",
                "pam_exec.so expose_authtok quiet /usr/bin/credfile pam /etc/app.cred",
                "htpasswd(1)", "chpasswd(8)", "pam_exec(8)", "credfile \(CredFileCLI.version)",
            ] {
                #expect(page.contains(needle), "\(needle)")
            }
        }
    }

    /// Drives bash's completion function the way bash does on TAB.
    static func complete(_ words: [String], script: String, bash: String) throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program = """
            source "$0"
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
            _credfile
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try run(bash, ["--norc", "--noprofile", "-c", program, script])
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test(.enabled(if: ExternalTool.runnable("bash"), Comment(rawValue: ExternalTool.skipNote("bash"))))
    func bashCompletesCommandsOptionsAndValues() throws {
        try withSession { session in
            let binary = try BuiltProduct.path("credfile")
            let script = try Self.run(binary, ["--generate-completion", "bash"])
            #expect(script.status == 0)
            try session.write("credfile.bash", script.stdout)
            let bash = try ExternalTool.path("bash")
            let path = session.path("credfile.bash")
            #expect(try Self.complete(["credfile", "up"], script: path, bash: bash) == ["upgrade"])
            #expect(
                try Self.complete(["credfile", "--iterations", "5", "ch"], script: path, bash: bash) == [
                    "check", "checkpassword",
                ])
            #expect(
                try Self.complete(["credfile", "add", "--algorithm", ""], script: path, bash: bash) == [
                    "sha256", "sha512", "argon2id",
                ])
            #expect(
                try Self.complete(["credfile", "import", "f", "--from", "h"], script: path, bash: bash) == ["htpasswd"])
            #expect(try Self.complete(["credfile", "add", "--pl"], script: path, bash: bash) == ["--plaintext"])
            #expect(try Self.complete(["credfile", "list", "--pl"], script: path, bash: bash) == [])
            #expect(try Self.complete(["credfile", "list", "--lock"], script: path, bash: bash) == ["--lock-timeout"])
            try session.write("users.txt", "")
            #expect(
                try Self.complete(["credfile", "list", session.path("us")], script: path, bash: bash) == [
                    session.path("users.txt")
                ])
        }
    }

    @Test(arguments: Shell.allCases)
    func everyCompletionNamesEveryCommandAndOption(_ shell: Shell) {
        let script = Documentation.completion(for: shell)
        for command in Command.allCases { #expect(script.contains(command.name), "\(command)") }
        for option in Setting.visible {
            let spelled = shell == .fish ? "-l \(option.optionName.dropFirst(2))" : option.optionName
            #expect(script.contains(spelled), "\(option)")
        }
        #expect(script.contains("sha256") && script.contains("sha512"))
        for hidden in Setting.options where hidden.isHidden {
            #expect(!script.contains(hidden.optionName.dropFirst(2)))
        }
    }

    /// The Debian package: builds, passes lintian with no error, installs and removes.
    @Test(
        .enabled(
            if: ExternalTool.runnable("dpkg-deb", "dpkg-shlibdeps", "lintian", "bash"),
            Comment(rawValue: ExternalTool.skipNote("dpkg-deb", "dpkg-shlibdeps", "lintian", "bash"))))
    func theDebianPackageBuildsPassesLintianInstallsAndRemoves() throws {
        let root = BuiltProduct.packageRoot.path
        // deb.sh builds the release binary first: minutes in a fresh clone on loaded cores.
        let built = CLIResult(
            try ChildProcess.run(try ExternalTool.path("bash"), [root + "/Scripts/deb.sh"], timeout: .seconds(1800)))
        try #require(built.status == 0, "\(built.stderr)")
        let deb = root + "/" + built.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            deb.hasSuffix(".build/credfile_\(CredFileCLI.version)_amd64.deb") || !deb.hasSuffix("_amd64.deb"), "\(deb)")
        #expect(FileManager.default.fileExists(atPath: deb))
        let lint = try Self.run(try ExternalTool.path("lintian"), ["--tag-display-limit", "0", deb])
        let errors = (lint.stdout + lint.stderr).split(separator: "\n").filter { $0.hasPrefix("E: ") }
        #expect(errors.isEmpty, "\(errors)")
        let contents = try Self.run(try ExternalTool.path("dpkg-deb"), ["--contents", deb])
        for path in [
            "./usr/bin/credfile", "./usr/share/man/man1/credfile.1.gz",
            "./usr/share/bash-completion/completions/credfile",
            "./usr/share/zsh/vendor-completions/_credfile", "./usr/share/fish/vendor_completions.d/credfile.fish",
            "./usr/share/doc/credfile/copyright", "./usr/share/doc/credfile/changelog.gz",
        ] {
            #expect(contents.stdout.contains(path), "\(path)")
        }
        let fields = try Self.run(try ExternalTool.path("dpkg-deb"), ["--field", deb, "Version", "Depends"])
        #expect(
            fields.stdout.contains("Version: \(CredFileCLI.version)\n") && fields.stdout.contains("libssl3"),
            "\(fields.stdout)")
        try Self.expectLicenceNoticeAndDocs(in: deb, root: root)
        // Installing touches the system: only as root, and only when nothing else owns /usr/bin/credfile.
        guard getuid() == 0, let dpkg = ExternalTool.find("dpkg"),
            !FileManager.default.fileExists(atPath: "/usr/bin/credfile")
        else { return }
        let installed = try Self.run(dpkg, ["-i", deb])
        defer { _ = try? Self.run(dpkg, ["-r", "credfile"]) }
        #expect(installed.status == 0, "\(installed.stderr)")
        let version = try Self.run("/usr/bin/credfile", ["--version"])
        #expect(version.stdout.hasPrefix("credfile \(CredFileCLI.version) "))
        #expect(getpwnam("credfile") != nil && getgrnam("credfile") != nil, "the postinst made no user credfile")
        let removed = try Self.run(dpkg, ["-r", "credfile"])
        #expect(removed.status == 0, "\(removed.stderr)")
        for path in [
            "/usr/bin/credfile", "/usr/share/man/man1/credfile.1.gz", "/usr/share/bash-completion/completions/credfile",
            "/usr/share/doc/credfile/copyright", "/usr/share/doc/credfile/NOTICE",
        ] {
            #expect(!FileManager.default.fileExists(atPath: path), "\(path) left behind")
        }
    }

    /// The package carries the licence and what users read (#28): a DEP-5 copyright with
    /// credfile's Apache-2.0 and the built-in blocklist's BSD-3-clause (its whole text, which
    /// clause 2 asks binary redistributions to carry), NOTICE, a Debian changelog of this
    /// version, the README, `Documentation/*.md`, every example folder and the example
    /// systemd units, each the repository's bytes.
    static func expectLicenceNoticeAndDocs(in deb: String, root: String) throws {
        let unpacked = try TemporaryDirectory.make(prefix: "credfile-deb")
        defer { unpacked.remove() }
        let extracted = try run(try ExternalTool.path("dpkg-deb"), ["-x", deb, unpacked.path])
        try #require(extracted.status == 0, "\(extracted)")
        let doc = unpacked.path + "/usr/share/doc/credfile"
        let files = FileManager.default

        let copyright = try String(contentsOfFile: doc + "/copyright", encoding: .utf8)
        let paragraphs = copyright.components(separatedBy: "\n\n")
        #expect(
            paragraphs.first?.hasPrefix("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n")
                == true)
        #expect(
            paragraphs.contains { $0.hasPrefix("Files: *\n") && $0.contains("\nLicense: Apache-2.0") }, "\(copyright)")
        let django = try #require(
            files.subpathsOfDirectory(atPath: root + "/Sources").first { $0.hasSuffix("/LICENSE.django") },
            "the blocklist's LICENSE.django is not under Sources/")
        let blocklist = (django as NSString).deletingLastPathComponent
        #expect(
            paragraphs.contains {
                $0.hasPrefix("Files: Sources/\(blocklist)/*\n")
                    && $0.contains("\nCopyright: Django Software Foundation and individual contributors")
                    && $0.contains("\nLicense: BSD-3-clause")
            }, "\(copyright)")
        #expect(
            copyright.contains("\nLicense: Apache-2.0\n Licensed under the Apache License, Version 2.0")
                && copyright.contains("/usr/share/common-licenses/Apache-2.0"))
        let bsd = try #require(paragraphs.first { $0.hasPrefix("License: BSD-3-clause\n") })
        let licenceText = try String(contentsOfFile: root + "/Sources/" + django, encoding: .utf8)
        for line in licenceText.split(separator: "\n") {
            #expect(bsd.contains("\n " + line + "\n") || bsd.hasSuffix("\n " + line), "copyright lacks: \(line)")
        }
        #expect(!copyright.contains("unspecified"))

        #expect(sameBytes(doc + "/NOTICE", root + "/NOTICE"))
        let changelog = try unzipped(doc + "/changelog.gz")
        #expect(
            String(decoding: changelog, as: UTF8.self).hasPrefix(
                "credfile (\(CredFileCLI.version)) unstable; urgency=medium\n"))
        // Every page as it is in the repository, gzipped when over 4 KiB (as dh_compress does).
        var pages = ["README.md"]
        pages += try files.contentsOfDirectory(atPath: root + "/Documentation").filter { $0.hasSuffix(".md") }.map {
            "Documentation/" + $0
        }
        for page in pages {
            let shipped = (try? readBytes(doc + "/" + page)) ?? (try? unzipped(doc + "/" + page + ".gz"))
            #expect(try shipped == readBytes(root + "/" + page), "\(page)")
        }
        // Every example folder (not a Swift target's), file by file; the systemd units also installed.
        for folder in try files.contentsOfDirectory(atPath: root + "/Examples").sorted() {
            var isDirectory: ObjCBool = false
            guard files.fileExists(atPath: root + "/Examples/" + folder, isDirectory: &isDirectory),
                isDirectory.boolValue
            else { continue }
            let inside = try files.subpathsOfDirectory(atPath: root + "/Examples/" + folder)
            guard !inside.contains(where: { $0.hasSuffix(".swift") }) else { continue }
            for file in inside where !isDirectoryAt(root + "/Examples/" + folder + "/" + file) {
                let shipped = doc + "/examples/" + folder + "/" + file
                #expect(sameBytes(shipped, root + "/Examples/" + folder + "/" + file), "\(shipped)")
            }
        }
        let units = ((try? files.contentsOfDirectory(atPath: root + "/Examples/systemd")) ?? []).filter {
            $0.hasSuffix(".service") || $0.hasSuffix(".socket")
        }
        for unit in units {
            let installed = unpacked.path + "/lib/systemd/system/" + unit
            #expect(sameBytes(installed, root + "/Examples/systemd/" + unit), "\(installed)")
        }
        // The system user the service runs as: the sysusers.d file, made by a postinst that
        // does only that (as dh_installsysusers writes it), never enabling a unit.
        #expect(
            sameBytes(
                unpacked.path + "/usr/lib/sysusers.d/credfile.conf", root + "/Examples/systemd/sysusers.d/credfile.conf"
            ))
        let postinst = try run(try ExternalTool.path("dpkg-deb"), ["--info", deb, "postinst"])
        #expect(
            postinst.status == 0 && postinst.stdout.contains("\n      systemd-sysusers credfile.conf\n"), "\(postinst)")
        for enabling in ["systemctl", "deb-systemd-helper", "deb-systemd-invoke", "invoke-rc.d"] {
            #expect(
                !postinst.stdout.contains(enabling), "the postinst would enable or start a unit: \(postinst.stdout)")
        }
        let control = try run(try ExternalTool.path("dpkg-deb"), ["--info", deb])
        #expect(!control.stdout.contains(" prerm") && !control.stdout.contains(" postrm"), "\(control.stdout)")
        let depends = try run(try ExternalTool.path("dpkg-deb"), ["--field", deb, "Depends"])
        #expect(
            depends.stdout.contains("systemd | systemd-standalone-sysusers | systemd-sysusers"), "\(depends.stdout)")
        // The serve unit's ExecReload runs /bin/kill, which only procps ships (not in a minimal Debian).
        #expect(depends.stdout.contains("procps"), "\(depends.stdout)")
    }

    /// The bytes of a gzip file.
    static func unzipped(_ path: String) throws -> [UInt8] {
        let result = try ChildProcess.run(try ExternalTool.path("gzip"), ["-dc", path])
        guard result.status == 0 else { throw HarnessError("gzip -dc \(path): \(result)") }
        return result.stdoutBytes
    }

    /// Whether both files exist and hold the same bytes.
    static func sameBytes(_ path: String, _ original: String) -> Bool {
        guard let bytes = try? readBytes(path), let expected = try? readBytes(original) else { return false }
        return bytes == expected
    }

    /// Whether `path` is a directory (following links).
    static func isDirectoryAt(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}

/// README's `## Install` blocks, run as they stand with `PREFIX` set to a scratch folder:
/// the install, then the uninstall.
@Suite struct InstallTests {
    @Test(.enabled(if: ExternalTool.runnable("bash", "man"), Comment(rawValue: ExternalTool.skipNote("bash", "man"))))
    func theReadmesInstallBlockInstallsEverythingUnderPREFIX() throws {
        try withSession { session in
            let root = BuiltProduct.packageRoot.path
            let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8)
            let section = try #require(readme.split(separator: "\n## ").first { $0.hasPrefix("Install\n") })
            let blocks = section.split(separator: "```sh\n").dropFirst().compactMap { $0.split(separator: "```").first }
            try #require(blocks.count >= 2, "the install and the uninstall block")
            let block = blocks[0]
            let prefix = session.path("prefix")
            var environment = ProcessInfo.processInfo.environment
            environment["PREFIX"] = prefix
            let install = try ChildProcess.run(
                try ExternalTool.path("bash"), ["-euo", "pipefail", "-c", String(block)], environment: environment,
                directory: root, timeout: .seconds(1800))
            #expect(install.status == 0, "\(install)")
            for path in [
                "bin/credfile", "share/man/man1/credfile.1", "share/bash-completion/completions/credfile",
                "share/zsh/site-functions/_credfile", "share/fish/vendor_completions.d/credfile.fish",
            ] {
                #expect(FileManager.default.fileExists(atPath: prefix + "/" + path), "\(path)")
            }
            let version = try DocumentationTests.run(prefix + "/bin/credfile", ["--version"])
            #expect(version.stdout.hasPrefix("credfile \(CredFileCLI.version) "))
            let page = try DocumentationTests.run(
                try ExternalTool.path("man"), ["-l", prefix + "/share/man/man1/credfile.1"],
                environment: ["MANPAGER": "cat", "PAGER": "cat", "PATH": "/usr/bin:/bin"])
            #expect(page.status == 0 && page.stdout.contains("credfile \(CredFileCLI.version)"))
            let uninstall = try ChildProcess.run(
                try ExternalTool.path("bash"), ["-euo", "pipefail", "-c", String(blocks[1])], environment: environment,
                directory: root)
            #expect(uninstall.status == 0, "\(uninstall)")
            let left = try ChildProcess.run("/usr/bin/find", [prefix, "-not", "-type", "d"])
            #expect(left.status == 0 && left.stdout.isEmpty, "left after the uninstall: \(left.stdout)")
        }
    }
}
