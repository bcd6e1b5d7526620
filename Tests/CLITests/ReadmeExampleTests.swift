import CredFileTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The README's library example and its `Package.swift` snippet, as a reader copies them
/// (#33 item 7): the example is `Examples/GettingStarted/main.swift` (the README shows it
/// byte for byte, DocumentationPagesTests), built as `credfile-getting-started` and run
/// here; the snippet's dependency and product resolve against a checkout named as it says.
@Suite(.serialized) struct ReadmeExampleTests {
    @Test("the README's library example runs: it registers valencia with a password SPEC §8 accepts, and logs in")
    func theExampleRuns() throws {
        try withSession { session in
            let example = try BuiltProduct.path("credfile-getting-started")
            let result = try ChildProcess.run(example, [], directory: session.directory, timeout: .seconds(120))
            #expect(result.status == 0 && result.stdout == "granted\n", "\(result)")
            let file = session.text("usuarios.txt")
            #expect(file.hasPrefix("valencia,$pbkdf2-sha256$") && file.split(separator: "\n").count == 1, "\(file)")
            var info = stat()
            #expect(stat(session.path("usuarios.txt"), &info) == 0 && info.st_mode & 0o777 == 0o600)
        }
    }

    @Test(
        "the README's Package.swift snippet resolves: the path dependency, named after its folder, gives the CredFile product",
        .enabled(if: ExternalTool.runnable("swift"), Comment(rawValue: ExternalTool.skipNote("swift"))))
    func thePackageSnippetResolves() throws {
        try withSession { session in
            let root = BuiltProduct.packageRoot.path
            let readme = try String(contentsOfFile: root + "/README.md", encoding: .utf8)
            let manifest = try #require(
                DocumentationPagesTests.blocks(in: readme).first {
                    $0.info == "swift" && $0.text.hasPrefix("// swift-tools-version")
                }?.text, "the README has no Package.swift snippet")
            let path = try #require(manifest.firstMatch(of: /\.package\(path: "([^"]+)"\)/)?.1)
            let folder = (String(path) as NSString).lastPathComponent
            #expect(manifest.contains(#".product(name: "CredFile", package: "\#(folder)")"#), "\(manifest)")
            // The reader's layout: the app beside a checkout in the folder the snippet names.
            let app = session.path("MyApp")
            for directory in [app, app + "/Sources", app + "/Sources/MyApp"] { mkdir(directory, 0o755) }
            try #require(symlink(root, (app as NSString).appendingPathComponent(String(path))) == 0)
            try session.write("MyApp/Package.swift", manifest)
            try session.write(
                "MyApp/Sources/MyApp/main.swift", try Integration.example("GettingStarted/main.swift"))
            let resolved = try ChildProcess.run(
                try ExternalTool.path("swift"),
                ["package", "--package-path", app, "--disable-sandbox", "show-dependencies", "--format", "json"],
                timeout: .seconds(600))
            #expect(resolved.status == 0, "\(resolved)")
            #expect(resolved.stdout.contains("\"identity\": \"\(folder)\""), "\(resolved.stdout)")
            let described = try ChildProcess.run(
                try ExternalTool.path("swift"),
                ["package", "--package-path", app, "--disable-sandbox", "describe", "--type", "json"],
                timeout: .seconds(600))
            #expect(described.status == 0 && described.stdout.contains("\"MyApp\""), "\(described)")
        }
    }

    /// README's `## Install` section.
    static func installSection() throws -> String {
        let readme = try String(contentsOfFile: BuiltProduct.packageRoot.path + "/README.md", encoding: .utf8)
        return try #require(readme.split(separator: "\n## ").first { $0.hasPrefix("Install\n") }.map(String.init))
    }

    @Test("the README's build dependencies name every Debian package Package.swift's system libraries come from")
    func buildDependenciesAreNamed() throws {
        let manifest = try String(contentsOfFile: BuiltProduct.packageRoot.path + "/Package.swift", encoding: .utf8)
        let packages = manifest.matches(of: /\.apt\(\[([^\]]*)\]\)/).flatMap {
            $0.1.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \"")) }
        }
        try #require(!packages.isEmpty)
        let section = try Self.installSection()
        for package in packages { #expect(section.contains("`\(package)`"), "the README does not name \(package)") }
    }

    @Test(
        "the README's run-time dependencies name the Debian package of every library the binary links, and of the three it opens at first use",
        .enabled(
            if: ExternalTool.runnable("readelf", "dpkg", "bash"),
            Comment(rawValue: ExternalTool.skipNote("readelf", "dpkg", "bash"))))
    func runTimeDependenciesAreNamed() throws {
        // Each NEEDED library that the system's loader finds, and the package dpkg says it
        // came from (the Swift runtime, from the toolchain, is no package: the release
        // build links it in statically).
        let script = #"""
            for l in $(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
              p=$(/sbin/ldconfig -p | awk -v l="$l" '$1 == l { print $NF; exit }')
              [ -n "$p" ] || continue
              for c in "$p" "$(readlink -f "$p")" "${p#/usr}" "/usr$p"; do
                if owner=$(dpkg -S "$c" 2>/dev/null); then echo "${owner%%:*}"; break; fi
              done
            done | sort -u
            """#
        let result = try ChildProcess.run(
            try ExternalTool.path("bash"), ["-c", script, "bash", try BuiltProduct.path()])
        try #require(result.status == 0, "\(result)")
        let packages = result.stdout.split(separator: "\n").map(String.init)
        #expect(packages.contains("libssl3"), "\(packages)")
        // ICU, libmicrohttpd and libsystemd are opened at first use, not linked (Decisions
        // §7 "Start-up"): the README must still name them, since serve and export need them.
        for opened in ["libicu72", "libmicrohttpd12", "libsystemd0"] {
            #expect(!packages.contains(opened), "the binary links \(opened) again: \(packages)")
        }
        let section = try Self.installSection()
        for package in packages + ["libicu72", "libmicrohttpd12", "libsystemd0"] {
            #expect(section.contains(package), "the README does not name \(package)")
        }
    }

    @Test("the README is at most 400 lines and its quick start keeps its two commands")
    func theReadmeIsShort() throws {
        let readme = try String(contentsOfFile: BuiltProduct.packageRoot.path + "/README.md", encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).dropLast().count
        #expect(lines <= 400, "README.md has \(lines) lines; move detail to Documentation/")
        let quickStart = try #require(readme.split(separator: "\n## ").first { $0.hasPrefix("Quick start\n") })
        #expect(quickStart.contains("bash Scripts/demo.sh") && quickStart.contains("bash Scripts/test.sh"))
    }
}
