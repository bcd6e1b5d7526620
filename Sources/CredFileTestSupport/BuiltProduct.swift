import Foundation

/// The executables of this package (`credfile`, `credfile-server-example`) as built with
/// the tests: the one binary locator of the tests.
///
/// `swift build --build-tests` (which `swift test` runs) builds every product of the
/// package, executables included, into the directory that holds the test bundle, so a
/// product is looked for beside the running test executable first (and a few levels up),
/// then in `.build/debug` of this checkout. When it is not found every test that needs it
/// fails with ``HarnessError`` (never skips).
public enum BuiltProduct {
    /// The package root: this file is `Sources/CredFileTestSupport/BuiltProduct.swift`.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Where products are looked for, in order.
    static let directories: [URL] = {
        var directories: [URL] = []
        let starts = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
        for start in starts {
            guard var url = start?.resolvingSymlinksInPath().deletingLastPathComponent() else { continue }
            for _ in 0..<4 {
                directories.append(url)
                url.deleteLastPathComponent()
            }
        }
        directories.append(packageRoot.appendingPathComponent(".build/debug"))
        return directories
    }()

    /// The build directory that holds the built module `module` (`Modules/<module>.swiftmodule`):
    /// what `Scripts/module-flags.sh` takes to let `swiftc` compile a client of it.
    /// - Throws: ``HarnessError`` naming where it looked.
    public static func buildDirectory(holding module: String = "CredFile") throws -> String {
        let candidates = directories.map { $0.path }
        for candidate in candidates
        where FileManager.default.fileExists(atPath: candidate + "/Modules/\(module).swiftmodule") {
            return candidate
        }
        throw HarnessError(
            "no Modules/\(module).swiftmodule in \(candidates.joined(separator: ", ")); build it with `swift build`")
    }

    /// The absolute path of the built executable `name`.
    /// - Throws: ``HarnessError`` naming where it looked and how to build it.
    public static func path(_ name: String = "credfile") throws -> String {
        let candidates = directories.map { $0.appendingPathComponent(name).path }
        for candidate in candidates {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate)
            {
                return candidate
            }
        }
        throw HarnessError(
            "the \(name) executable was not found (looked at \(candidates.joined(separator: ", "))); "
                + "build it with `swift build --product \(name)`, then run the tests again")
    }

    /// Copies the built executable `name` to `path` (mode 0755), for a test that runs it
    /// from where another user can reach it or with other owners and modes.
    ///
    /// The copy is written by a `cp` child and renamed into place: a descriptor open for
    /// writing in this process, even close-on-exec, is inherited by any child a parallel
    /// test forks before that child's exec, and the copy's own exec then fails with
    /// `ETXTBSY` ("Text file busy") while the child holds it.
    /// - Throws: ``HarnessError`` when the product is missing or `cp` fails.
    public static func copy(_ name: String = "credfile", to path: String) throws {
        let partial = path + ".partial"
        let result = try ChildProcess.run("/bin/cp", ["--", try Self.path(name), partial])
        guard result.status == 0, chmod(partial, 0o755) == 0, rename(partial, path) == 0 else {
            throw HarnessError("cannot copy \(name) to \(path): \(result)")
        }
    }
}
