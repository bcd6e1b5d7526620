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
        let target: String
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
        FuzzChecks.targets.flatMap { target in
            ["Corpus", "Regressions"].flatMap { folder in
                let directory = fuzzDirectory.appendingPathComponent(folder).appendingPathComponent(target)
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                return names.filter { !$0.hasPrefix(".") && !$0.hasPrefix("README") }.sorted().map {
                    Input(target: target, path: directory.appendingPathComponent($0).path)
                }
            }
        }
    }

    @Test("every target has a seed corpus", arguments: FuzzChecks.targets)
    func corpusIsPresent(target: String) {
        #expect(Self.inputs().contains { $0.target == target && $0.path.contains("/Corpus/") })
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
