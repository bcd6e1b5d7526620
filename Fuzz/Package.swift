// swift-tools-version:6.0
// The fuzz targets of credfile (STYLE practice 15), a package of their own so the root
// package never builds with the fuzzer. Build and run them with `Fuzz/run.sh`.
import Foundation
import PackageDescription

/// The fuzz targets: the folders of Sources/.
let fuzzTargets = ((try? FileManager.default.contentsOfDirectory(atPath: Context.packageDirectory + "/Sources")) ?? [])
    .filter { !$0.hasPrefix(".") }.sorted()

let package = Package(
    name: "CredFileFuzz",
    dependencies: [
        // `name:` must match the root package's name, or a checkout in a folder with
        // another name fails to resolve.
        .package(name: "credfile", path: "..")
    ],
    // One executable per folder of Sources/ (each a 10-line entry point calling
    // FuzzChecks.run with its FuzzTarget case; FuzzRegressionTests holds the folders to
    // the cases).
    targets: fuzzTargets.map {
        .executableTarget(name: $0, dependencies: [.product(name: "_CredFileFuzzChecks", package: "credfile")])
    },
    swiftLanguageModes: [.v6]
)
