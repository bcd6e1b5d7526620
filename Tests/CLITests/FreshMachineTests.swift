import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

#if canImport(Glibc)
import Glibc
#endif

/// The suite passes on a fresh machine, not only on one set up by hand (#33): every program
/// a test names comes from a package of `Scripts/setup.sh`'s lists (or one they depend on),
/// from Debian's base (priority `required`, what any Debian 12 has) or from the Swift
/// toolchain; every user and group they name from base-passwd or a package of those lists.
/// `Scripts/fresh-machine.sh` runs the whole suite in such a root; these tests catch a new
/// program or account between those runs.
///
/// The programs are read from the tests' sources: the string literals given to
/// `ExternalTool.path`, `find` and `runnable`, and absolute paths of programs
/// (`"/usr/bin/…"`, `"/bin/…"`, `"/usr/sbin/…"`, `"/sbin/…"`). The PyPI peers are not
/// programs: they run through `ExternalTool.peerPython`, from setup.sh's venv.
@Suite struct FreshMachineTests {
    /// The package root.
    static let root = BuiltProduct.packageRoot.path

    /// Program paths in the sources that are not programs a test runs.
    static let notPrograms: [String: String] = [
        "/bin/prog": "an argument `checkpassword` passes on (DocumentationTests), never run"
    ]

    /// The names of programs named in `source` (see the suite's comment). This package's
    /// own products (`credfile`, `credfile-…`) are left out: the tests build them.
    static func programNames(in source: String) -> Set<String> {
        var names = Set<String>()
        let text = Array(source.utf8)
        // ExternalTool.path( … ), find( … ), runnable( … ): the string literals up to the
        // matching parenthesis (the arguments may span lines).
        for call in ["path", "find", "runnable"] {  // (spelt apart so that this file's own text is no call)
            let pattern = Array(("ExternalTool." + call + "(").utf8)
            var index = 0
            while let start = firstIndex(of: pattern, in: text, from: index) {
                var depth = 1
                var end = start + pattern.count
                while end < text.count && depth > 0 {
                    if text[end] == UInt8(ascii: "(") { depth += 1 }
                    if text[end] == UInt8(ascii: ")") { depth -= 1 }
                    end += 1
                }
                names.formUnion(stringLiterals(String(decoding: text[(start + pattern.count)..<end], as: UTF8.self)))
                index = end
            }
        }
        // Absolute paths of programs anywhere in the source.
        for literal in stringLiterals(source) {
            let parts = literal.split(separator: "/", omittingEmptySubsequences: false)
            let directory = parts.dropLast().joined(separator: "/")
            guard ["/bin", "/sbin", "/usr/bin", "/usr/sbin"].contains(directory), let last = parts.last,
                !last.isEmpty, last.allSatisfy({ $0.isLetter || $0.isNumber || "._+-".contains($0) })
            else { continue }
            names.insert(literal)
        }
        return names.filter { name in
            let base = name.split(separator: "/").last.map(String.init) ?? name
            return !(base == "credfile" || base.hasPrefix("credfile-")) && notPrograms[name] == nil
        }
    }

    /// The users and groups named in `source`: the literals given to `getpwnam`, `getgrnam`
    /// and `Integration.guardState(in:for:)` (which chowns to that user). This package's own
    /// `credfile` (its .deb's postinst makes it, in the test that installs the .deb) is left out.
    static func accountNames(in source: String) -> Set<String> {
        var names = Set<String>()
        for call in ["getpwnam(\"", "getgrnam(\"", "guardState(in: session, for: \""] {
            var rest = Substring(source)
            while let start = rest.range(of: call) {
                rest = rest[start.upperBound...]
                guard let end = rest.firstIndex(of: "\"") else { break }
                let name = String(rest[..<end])
                if !name.isEmpty && name.allSatisfy({ $0.isLetter || $0.isNumber || "_-".contains($0) }) {
                    names.insert(name)
                }
            }
        }
        names.remove("credfile")
        return names
    }

    /// The string literals of `source` (single-line ones, without interpolation).
    static func stringLiterals(_ source: String) -> [String] {
        var literals: [String] = []
        var current: String?
        var previous: Character = " "
        for character in source {
            if var literal = current {
                if character == "\"" && previous != "\\" {
                    if !literal.contains("\\(") { literals.append(literal) }
                    current = nil
                } else if character == "\n" {
                    current = nil
                } else {
                    literal.append(character)
                    current = literal
                }
            } else if character == "\"" {
                current = ""
            }
            previous = character
        }
        return literals
    }

    static func firstIndex(of pattern: [UInt8], in text: [UInt8], from start: Int) -> Int? {
        guard pattern.count <= text.count, start <= text.count - pattern.count else { return nil }
        for index in start...(text.count - pattern.count)
        where text[index..<(index + pattern.count)].elementsEqual(pattern) {
            return index
        }
        return nil
    }

    /// The packages of `Scripts/setup.sh`'s lists (`toolchain_packages`, `build_packages`,
    /// `test_packages`): the words of each `name=( … )` block, comments left out.
    static func setupPackages(in script: String) -> Set<String> {
        var packages = Set<String>()
        var inList = false
        for line in script.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if !inList {
                inList = ["toolchain_packages=(", "build_packages=(", "test_packages=("].contains(trimmed)
                continue
            }
            if trimmed == ")" {
                inList = false
                continue
            }
            let code = trimmed.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            packages.formUnion(code.split(separator: " ").map(String.init))
        }
        return packages
    }

    /// Every `.swift` file under the test sources and the test-support modules.
    static func testSources() throws -> [String] {
        var files: [String] = []
        for folder in ["Tests", "Sources/CredFileTestSupport", "Sources/_CredFileFuzzChecks", "Fuzz/Sources"] {
            let path = root + "/" + folder
            guard let walker = FileManager.default.enumerator(atPath: path) else { continue }
            for case let file as String in walker where file.hasSuffix(".swift") { files.append(path + "/" + file) }
        }
        return files.sorted()
    }

    /// `path` with every symbolic link resolved (an alternative to its program).
    static func resolved(_ path: String) -> String {
        guard let pointer = realpath(path, nil) else { return path }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// The packages that own `path`, per dpkg (trying the other side of Debian 12's merged /usr).
    static func owners(of path: String) throws -> [String] {
        var candidates = [path]
        for (merged, split) in [("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/"), ("/usr/lib/", "/lib/")] {
            if path.hasPrefix(merged) { candidates.append(split + path.dropFirst(merged.count)) }
            if path.hasPrefix(split) { candidates.append(merged + path.dropFirst(split.count)) }
        }
        let dpkgQuery = try ExternalTool.path("dpkg-query")
        for candidate in candidates {
            let result = try ChildProcess.run(dpkgQuery, ["-S", candidate])
            guard result.status == 0 else { continue }
            for line in result.stdout.split(separator: "\n") where !line.hasPrefix("diversion ") {
                guard let colon = line.range(of: ": /") else { continue }
                return line[..<colon.lowerBound].split(separator: ",").map {
                    String($0.trimmingCharacters(in: .whitespaces).split(separator: ":").first ?? "")
                }
            }
        }
        return []
    }

    /// What a machine that ran `Scripts/setup.sh test` has for sure: setup.sh's packages and
    /// what they depend on (not what they recommend: setup installs with
    /// --no-install-recommends), and Debian's base.
    static func guaranteedPackages(_ listed: Set<String>) throws -> Set<String> {
        let aptCache = try ExternalTool.path("apt-cache")
        let closure = try ChildProcess.run(
            aptCache,
            [
                "depends", "--recurse", "--installed", "--no-recommends", "--no-suggests", "--no-conflicts",
                "--no-breaks", "--no-replaces", "--no-enhances",
            ] + listed.sorted())
        try #require(closure.status == 0, "\(closure)")
        var packages = Set(closure.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") }.map(String.init))
        let base = try ChildProcess.run(try ExternalTool.path("dpkg-query"), ["-W", "-f=${Package} ${Priority}\n"])
        try #require(base.status == 0, "\(base)")
        for line in base.stdout.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2 && fields[1] == "required" { packages.insert(String(fields[0])) }
        }
        return packages
    }

    @Test("the scanner finds the programs a test names, and setup.sh's lists are read without their comments")
    func scannerFindsPlantedNames() throws {
        let planted = """
            let a = try ExternalTool.path("nginx")
            @Test(.enabled(if: ExternalTool.runnable(
                "slapd", "ldapwhoami"), Comment(rawValue: ExternalTool.skipNote("never-collected"))))
            _ = try ChildProcess.run("/usr/bin/chattr", ["+i", "/etc/not-a-program"])
            _ = try ChildProcess.run("/usr/bin/credfile", [])  // this package's own
            _ = "/bin/prog"
            """
        #expect(Self.programNames(in: planted) == ["nginx", "slapd", "ldapwhoami", "/usr/bin/chattr"])
        let accounts = """
            let a = getpwnam("dovecot"), b = getgrnam("www-data"), c = getpwnam(user), d = getpwnam("credfile")
            let state = try Integration.guardState(in: session, for: "proxy")
            """
        #expect(Self.accountNames(in: accounts) == ["dovecot", "www-data", "proxy"])
        let setup = try String(contentsOfFile: Self.root + "/Scripts/setup.sh", encoding: .utf8)
        let packages = Self.setupPackages(in: setup)
        #expect(packages.isSuperset(of: ["pkg-config", "binutils", "nginx", "squid", "python3-venv"]))
        #expect(!packages.contains("HTTP") && !packages.contains("#"), "a comment's words were read as packages")
        #expect(Self.setupPackages(in: "test_packages=(\n    a b # c d\n)\nother=(\n    e\n)\n") == ["a", "b"])
    }

    @Test(
        "every program the tests name comes from Scripts/setup.sh's packages, Debian's base or the toolchain",
        .enabled(
            if: ExternalTool.runnable("dpkg-query", "apt-cache"),
            Comment(rawValue: ExternalTool.skipNote("dpkg-query", "apt-cache"))))
    func everyProgramComesFromSetup() throws {
        var named: [String: Set<String>] = [:]  // program → files naming it
        for file in try Self.testSources() {
            let source = try String(contentsOfFile: file, encoding: .utf8)
            for name in Self.programNames(in: source) {
                named[name, default: []].insert(String(file.dropFirst(Self.root.count + 1)))
            }
        }
        #expect(named.count >= 30, "the scanner found only \(named.keys.sorted())")
        let setup = try String(contentsOfFile: Self.root + "/Scripts/setup.sh", encoding: .utf8)
        let guaranteed = try Self.guaranteedPackages(Self.setupPackages(in: setup))
        // The toolchain: the folder holding usr/bin/swift (the machine provides it).
        let toolchain = ExternalTool.find("swift").map(Self.resolved).map { path in
            var url = URL(fileURLWithPath: path)
            for _ in 0..<3 { url.deleteLastPathComponent() }
            return url.path + "/"
        }
        for (name, files) in named.sorted(by: { $0.key < $1.key }) {
            let place = files.sorted().joined(separator: ", ")
            guard let path = ExternalTool.find(name) else {
                if ExternalTool.isCI {
                    Issue.record("\(name) (named in \(place)) is not installed: no package provides it")
                }
                continue
            }
            let resolved = Self.resolved(path)
            if let toolchain, resolved.hasPrefix(toolchain) { continue }
            var owners = try Self.owners(of: resolved)
            if owners.isEmpty { owners = try Self.owners(of: path) }
            #expect(!owners.isEmpty, "\(name) (\(resolved), named in \(place)) belongs to no Debian package")
            #expect(
                owners.contains(where: guaranteed.contains),
                """
                \(name) (\(resolved), named in \(place)) comes from \(owners.joined(separator: ", ")), which is \
                neither in Scripts/setup.sh's lists (nor a dependency of one) nor in Debian's base: add it to test_packages
                """)
        }
    }

    @Test(
        "every user and group the tests name comes from Debian's base-passwd or is made by a setup.sh package",
        .enabled(
            if: ExternalTool.runnable("dpkg-query", "apt-cache"),
            Comment(rawValue: ExternalTool.skipNote("dpkg-query", "apt-cache"))))
    func everyAccountComesFromSetup() throws {
        var named: [String: Set<String>] = [:]  // account → files naming it
        for file in try Self.testSources() {
            for name in Self.accountNames(in: try String(contentsOfFile: file, encoding: .utf8)) {
                named[name, default: []].insert(String(file.dropFirst(Self.root.count + 1)))
            }
        }
        #expect(named.keys.contains("dovecot") && named.keys.contains("nobody"), "found only \(named.keys.sorted())")
        // base-passwd's fixed users and groups, on every Debian.
        var base = Set<String>()
        for master in ["/usr/share/base-passwd/passwd.master", "/usr/share/base-passwd/group.master"] {
            let text = try String(contentsOfFile: master, encoding: .utf8)
            base.formUnion(text.split(separator: "\n").compactMap { $0.split(separator: ":").first.map(String.init) })
        }
        // What the guaranteed packages' maintainer scripts and sysusers.d files create.
        let setup = try String(contentsOfFile: Self.root + "/Scripts/setup.sh", encoding: .utf8)
        var scripts: [String] = []
        for package in try Self.guaranteedPackages(Self.setupPackages(in: setup)).sorted() {
            for name in [package, package + ":amd64", package + ":arm64"] {
                if let text = try? String(contentsOfFile: "/var/lib/dpkg/info/\(name).postinst", encoding: .utf8),
                    text.contains("adduser") || text.contains("useradd") || text.contains("addgroup")
                        || text.contains("groupadd") || text.contains("sysusers")
                {
                    scripts.append(text)
                }
                if let list = try? String(contentsOfFile: "/var/lib/dpkg/info/\(name).list", encoding: .utf8) {
                    for path in list.split(separator: "\n")
                    where path.contains("/sysusers.d/") && path.hasSuffix(".conf") {
                        if let text = try? String(contentsOfFile: String(path), encoding: .utf8) {
                            scripts.append(text)
                        }
                    }
                }
            }
        }
        for (name, files) in named.sorted(by: { $0.key < $1.key }) where !base.contains(name) {
            let made = scripts.contains { script in
                script.split(whereSeparator: { !($0.isLetter || $0.isNumber || "_-".contains($0)) }).contains {
                    $0 == name
                }
            }
            #expect(
                made,
                """
                the account \(name) (named in \(files.sorted().joined(separator: ", "))) is neither base-passwd's nor \
                made by a package of Scripts/setup.sh's lists: add the package that makes it
                """)
        }
    }
}
