// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "credfile",
    products: [
        .library(name: "CredFile", targets: ["CredFile"]),
        .executable(name: "credfile", targets: ["credfile"]),
    ],
    dependencies: [],
    targets: [
        // OpenSSL's libcrypto, reached only through the static inline shims in shim.h.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "CredFile", dependencies: ["COpenSSL"]),
        .executableTarget(name: "credfile", dependencies: ["CredFile"]),
        // Vectors/ holds data files read through #filePath, not resources.
        .testTarget(name: "CredFileTests", dependencies: ["CredFile"], exclude: ["Vectors"]),
        .testTarget(
            name: "CLITests",
            dependencies: ["credfile", "CredFile"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
