// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "credfile",
    products: [
        .library(name: "CredFile", targets: ["CredFile"]),
        .executable(name: "credfile", targets: ["credfile"]),
        // Not API: the checks shared by the fuzz targets (Fuzz/) and the regression test
        // that replays their crash inputs. Underscored like swift-crypto's _CryptoExtras.
        .library(name: "_CredFileFuzzChecks", targets: ["_CredFileFuzzChecks"]),
    ],
    dependencies: [],
    targets: [
        // OpenSSL's libcrypto, reached only through the static inline shims in shim.h.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // credfile's own C code (what must be C: glibc-only calls, the fast PBKDF2 loop).
        .target(name: "CCredFile", dependencies: ["COpenSSL"]),
        .target(name: "CredFile", dependencies: ["COpenSSL", "CCredFile"]),
        .executableTarget(name: "credfile", dependencies: ["CredFile", "CCredFile"]),
        // Uses only CredFile's public API, so the fuzzers test the contract, not internals.
        .target(name: "_CredFileFuzzChecks", dependencies: ["CredFile"]),
        // Vectors/ holds data files read through #filePath, not resources.
        .testTarget(
            name: "CredFileTests", dependencies: ["CredFile", "_CredFileFuzzChecks"], exclude: ["Vectors"]),
        .testTarget(
            name: "CLITests",
            dependencies: ["credfile", "CredFile", "_CredFileFuzzChecks"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
