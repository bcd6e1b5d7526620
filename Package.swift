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
        // OpenSSL's libcrypto; shim.h only includes, CCredFile wraps every call.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // libxcrypt: crypt(3) for the peer families bcrypt, sha-crypt, yescrypt, md5crypt, DES.
        .systemLibrary(
            name: "CLibcrypt",
            pkgConfig: "libxcrypt",
            providers: [.apt(["libcrypt-dev"])]
        ),
        // The reference Argon2, for PHC `$argon2id$` hashes and Django's and Dovecot's.
        .systemLibrary(
            name: "CArgon2",
            pkgConfig: "libargon2",
            providers: [.apt(["libargon2-dev"])]
        ),
        // ICU's common library, for RFC 4518's LDAP string preparation (export --to ldif).
        .systemLibrary(
            name: "CICU",
            pkgConfig: "icu-uc",
            providers: [.apt(["libicu-dev"])]
        ),
        // GNU libmicrohttpd: the HTTP/1.1 server of `credfile serve` (SPEC §10), CLI only.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // libsystemd: socket activation and readiness for `credfile serve`, CLI only.
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // SQLite, for the guard database of SPEC §9 (failures per name, shared by every
        // process that checks logins against one credential file).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // credfile's own C code (what must be C: glibc-only calls, the fast PBKDF2 loop,
        // SQLite's variadic sqlite3_db_config, ICU's usprep for LDAP's string preparation).
        .target(name: "CCredFile", dependencies: ["COpenSSL", "CSQLite", "CICU"]),
        // The built-in blocklist's generated data (Scripts/make-builtin-blocklist.sh), with
        // its provenance and licence: data only, kept apart from the code.
        .target(name: "CredFileBlocklist", exclude: ["README.md", "LICENSE.django"]),
        .target(
            name: "CredFile",
            dependencies: ["COpenSSL", "CCredFile", "CLibcrypt", "CArgon2", "CSQLite", "CredFileBlocklist"]),
        .executableTarget(name: "credfile", dependencies: ["CredFile", "CCredFile", "CMicroHTTPD", "CSystemd"]),
        // An example server-side client of the library (public names only), and the
        // figures of SPEC §6: `bash Benchmarks/run.sh apps`.
        .executableTarget(
            name: "credfile-server-example", dependencies: ["CredFile"], path: "Examples/ServerLogins"),
        // The README's library example, as it stands there (ReadmeExampleTests runs it).
        .executableTarget(
            name: "credfile-getting-started", dependencies: ["CredFile"], path: "Examples/GettingStarted"),
        // Uses only CredFile's public API, so the fuzzers test the contract, not internals.
        // Foundation-free: the fuzz checks and the few test helpers the fuzzers share.
        .target(name: "_CredFileFuzzChecks", dependencies: ["CredFile"]),
        // The one home of the tests' helpers (binary locator, process runner, password
        // canary, file helpers, vector files); it re-exports _CredFileFuzzChecks, which holds
        // the Foundation-free ones the Fuzz/ package shares (ExternalTool, SeededRandom,
        // TemporaryDirectory), so Fuzz/ never builds or links Foundation. Not a product.
        .target(name: "CredFileTestSupport", dependencies: ["_CredFileFuzzChecks"]),
        // Vectors/ holds data files read through #filePath, not resources.
        .testTarget(
            name: "CredFileTests", dependencies: ["CredFile", "CredFileTestSupport"], exclude: ["Vectors"]),
        .testTarget(
            name: "CLITests",
            dependencies: ["credfile", "CredFile", "CredFileTestSupport"],
            // C sources of test harnesses, compiled by the tests with gcc (not by SwiftPM).
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
