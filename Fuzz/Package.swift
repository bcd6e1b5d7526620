// swift-tools-version:6.0
// The fuzz targets of credfile (STYLE practice 15), a package of their own so the root
// package never builds with the fuzzer. Build and run them with `Fuzz/run.sh`.
import PackageDescription

let package = Package(
    name: "CredFileFuzz",
    dependencies: [
        // `name:` must match the root package's name, or a checkout in a folder with
        // another name fails to resolve.
        .package(name: "credfile", path: "..")
    ],
    targets: [
        .executableTarget(name: "FuzzParser", dependencies: [.product(name: "_CredFileFuzzChecks", package: "credfile")]),
        .executableTarget(name: "FuzzHash", dependencies: [.product(name: "_CredFileFuzzChecks", package: "credfile")]),
        .executableTarget(name: "FuzzStore", dependencies: [.product(name: "_CredFileFuzzChecks", package: "credfile")]),
        .executableTarget(
            name: "FuzzLoginRequests", dependencies: [.product(name: "_CredFileFuzzChecks", package: "credfile")]),
        .executableTarget(name: "FuzzImport", dependencies: [.product(name: "_CredFileFuzzChecks", package: "credfile")]),
        .executableTarget(name: "FuzzSecret", dependencies: [.product(name: "_CredFileFuzzChecks", package: "credfile")]),
        .executableTarget(
            name: "FuzzConfiguration", dependencies: [.product(name: "_CredFileFuzzChecks", package: "credfile")]),
        .executableTarget(
            name: "FuzzServeRequests", dependencies: [.product(name: "_CredFileFuzzChecks", package: "credfile")]),
    ],
    swiftLanguageModes: [.v6]
)
