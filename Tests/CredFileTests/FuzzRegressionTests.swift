import CredFileTestSupport
import Foundation
import Testing
import _CredFileFuzzChecks

/// Replays every input kept under `Fuzz/` (the seed corpus and the crash inputs in
/// `Fuzz/Regressions/`) through the same checks the fuzz targets run (STYLE practice
/// 15). The checks live in `_CredFileFuzzChecks`, shared with the `Fuzz/` package.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    /// One kept input of one fuzz target.
    struct Input: CustomTestStringConvertible, Sendable {
        let target: FuzzTarget
        let path: String
        /// `Corpus/FuzzParser/usuarios.txt`.
        var testDescription: String { path.split(separator: "/").suffix(3).joined(separator: "/") }
    }

    /// `Fuzz/` of this checkout, found from this file's path.
    static let fuzzDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// Every file under `Fuzz/Corpus/<target>/` and `Fuzz/Regressions/<target>/`, except
    /// dotfiles (`.gitkeep`) and READMEs.
    static func inputs() -> [Input] {
        FuzzTarget.allCases.flatMap { target in
            ["Corpus", "Regressions"].flatMap { folder in
                let directory = fuzzDirectory.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                return names.filter { !$0.hasPrefix(".") && !$0.hasPrefix("README") }.sorted().map {
                    Input(target: target, path: directory.appendingPathComponent($0).path)
                }
            }
        }
    }

    @Test("every target has a seed corpus", arguments: FuzzTarget.allCases)
    func corpusIsPresent(target: FuzzTarget) {
        #expect(Self.inputs().contains { $0.target == target && $0.path.contains("/Corpus/") })
    }

    /// The targets are the folders: one under `Fuzz/Sources/` (what `Fuzz/Package.swift`
    /// and `Fuzz/run.sh` build) and one under `Fuzz/Corpus/` for each case of `FuzzTarget`,
    /// and no other folder.
    @Test func theTargetsAreTheFolders() throws {
        let names = Set(FuzzTarget.allCases.map(\.rawValue))
        for folder in ["Sources", "Corpus"] {
            let listed = try FileManager.default.contentsOfDirectory(
                atPath: Self.fuzzDirectory.appendingPathComponent(folder).path)
            #expect(Set(listed.filter { !$0.hasPrefix(".") && !$0.hasPrefix("README") }) == names, "Fuzz/\(folder)")
        }
    }

    @Test("replay", arguments: inputs())
    func replay(_ input: Input) throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input.path)))
        try withTemporaryDirectory(onTmpfs: true) { directory in
            do {
                try FuzzChecks.run(input.target, bytes, storeDirectory: directory.path)
            } catch {
                Issue.record("\(input.testDescription): \(error)")
            }
        }
    }
}
