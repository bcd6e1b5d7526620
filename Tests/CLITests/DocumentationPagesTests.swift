import CredFileTestSupport
import Foundation
import Testing

@testable import CredFile

/// The pages users read (README.md, Documentation/*.md) against the repository (#28):
/// every configuration a page shows is a file under `Examples/` that the integration
/// tests run, byte for byte, and every link leads somewhere.
///
/// A block that shows a file is marked on the line before its opening fence:
///
///     <!-- file: Examples/pam/credfile-app -->
///     ```
///     …the file's bytes, every line…
///     ```
///
/// Any other block on these pages is `sh` (commands to type), `text` (output, log lines)
/// or `swift` (library use): a configuration cannot appear on a page without being a
/// file the tests read.
@Suite struct DocumentationPagesTests {
    static let root = BuiltProduct.packageRoot.path

    /// The pages: the README and every page of `Documentation/` but the contract, whose
    /// blocks are its own.
    static let pages: [String] = {
        let documentation = (try? FileManager.default.contentsOfDirectory(atPath: root + "/Documentation")) ?? []
        return ["README.md"]
            + documentation.filter { $0.hasSuffix(".md") && $0 != "SPEC.md" }.sorted().map {
                "Documentation/" + $0
            }
    }()

    /// The pages of one integration each (#28); each but the migration's (commands only)
    /// shows its configuration as files.
    static let integrationPages = [
        "nginx", "caddy", "traefik", "pam", "dovecot", "squid", "openldap", "fail2ban", "migration", "systemd",
    ].map { "Documentation/\($0).md" }

    /// A fenced block of a page: where it starts, its info string, the file it is marked
    /// as (if any) and its text (every line with its LF).
    struct Block {
        var line: Int
        var info: String
        var file: String?
        var text: String
    }

    /// The fenced blocks of `text` (fences of three backticks, at the start of a line).
    static func blocks(in text: String) -> [Block] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            guard lines[index].hasPrefix("```") else {
                index += 1
                continue
            }
            let info = String(lines[index].dropFirst(3)).trimmingCharacters(in: .whitespaces)
            var file: String?
            if index > 0, let match = lines[index - 1].wholeMatch(of: /<!-- file: (\S+) -->/) { file = String(match.1) }
            var body = ""
            var end = index + 1
            while end < lines.count && lines[end] != "```" {
                body += lines[end] + "\n"
                end += 1
            }
            blocks.append(Block(line: index + 1, info: info, file: file, text: body))
            index = end + 1
        }
        return blocks
    }

    static func text(_ page: String) throws -> String {
        try String(contentsOfFile: root + "/" + page, encoding: .utf8)
    }

    @Test("the pages exist: the README, one page per integration, the decisions, the internals")
    func thePagesExist() {
        for page in Self.integrationPages + [
            "Documentation/Decisions.md", "Documentation/Internals.md", "Benchmarks/README.md",
        ] {
            #expect(FileManager.default.fileExists(atPath: Self.root + "/" + page), "\(page)")
        }
    }

    @Test(
        "every block marked as a file is that file, byte for byte; every other block is sh, text or swift",
        arguments: pages)
    func blocksAreTheExampleFiles(_ page: String) throws {
        let blocks = Self.blocks(in: try Self.text(page))
        for block in blocks {
            if let file = block.file {
                #expect(file.hasPrefix("Examples/"), "\(page):\(block.line): \(file) is not an example")
                let bytes = try? readBytes(Self.root + "/" + file)
                #expect(bytes != nil, "\(page):\(block.line): \(file) does not exist")
                guard let bytes else { continue }
                let same = Array(block.text.utf8) == bytes
                #expect(
                    same,
                    "\(page):\(block.line): the block is not \(file) as it stands (python3 Scripts/sync-examples.py)")
            } else {
                #expect(
                    ["sh", "text", "swift"].contains(block.info),
                    "\(page):\(block.line): a ```\(block.info) block that is no file: make it Examples/… and mark it <!-- file: … -->"
                )
            }
        }
        if Self.integrationPages.contains(page) && page != "Documentation/migration.md" {
            #expect(blocks.contains { $0.file != nil }, "\(page) shows no configuration file")
        }
    }

    @Test("every example file a recipe page names exists, and every recipe under Examples/ is shown on a page")
    func everyRecipeIsShown() throws {
        var shown: Set<String> = []
        for page in Self.pages {
            for block in Self.blocks(in: try Self.text(page)) { block.file.map { shown.insert($0) } }
        }
        let examples = Self.root + "/Examples"
        for folder in try FileManager.default.contentsOfDirectory(atPath: examples).sorted() {
            guard let inside = try? FileManager.default.subpathsOfDirectory(atPath: examples + "/" + folder),
                !inside.contains(where: { $0.hasSuffix(".swift") })
            else { continue }  // a file (the seed's users) or a Swift target (a library client)
            for file in inside where !DocumentationTests.isDirectoryAt(examples + "/" + folder + "/" + file) {
                #expect(shown.contains("Examples/\(folder)/\(file)"), "no page shows Examples/\(folder)/\(file)")
            }
        }
    }

    @Test(
        "every relative link of the pages leads to a file of the repository",
        arguments: pages + ["CONTRIBUTING.md", "SECURITY.md"])
    func linksLeadSomewhere(_ page: String) throws {
        let text = try Self.text(page)
        let directory = (page as NSString).deletingLastPathComponent
        for match in text.matches(of: /\]\(([^)\s]+)\)/) {
            var target = String(match.1)
            guard !target.hasPrefix("http://"), !target.hasPrefix("https://"), !target.hasPrefix("mailto:") else {
                continue
            }
            if let hash = target.firstIndex(of: "#") { target = String(target[..<hash]) }
            guard !target.isEmpty else { continue }  // a link within the page
            let path = ((directory.isEmpty ? Self.root : Self.root + "/" + directory) as NSString)
                .appendingPathComponent(target)
            #expect(FileManager.default.fileExists(atPath: path), "\(page): \(match.1) leads nowhere")
        }
    }

    @Test("the example configuration file loads, and holds each caller's section as its page shows it")
    func theExampleConfigurationLoads() throws {
        let full = try CredFileConfiguration.load(path: Self.root + "/Examples/configuration/credfile.conf")
        #expect(full.value(of: .iterations, for: nil) != nil, "the example sets no rounds")
        for caller in ["pam", "dovecot", "squid"] {
            let path = "Examples/\(caller)/credfile.conf"
            let section = try CredFileConfiguration(parsing: try readBytes(Self.root + "/" + path), source: path)
            let file = try #require(
                try String(contentsOfFile: Self.root + "/" + path, encoding: .utf8).firstMatch(of: /\n\[([^\]]+)\]\n/)?
                    .1,
                "\(path) has no section")
            let state = section.value(of: .state, for: String(file))
            #expect(
                state != nil && full.value(of: .state, for: String(file)) == state, "\(path) and the example disagree")
        }
    }
}
