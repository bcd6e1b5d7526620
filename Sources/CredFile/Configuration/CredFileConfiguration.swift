#if canImport(Glibc)
import Glibc
#endif

/// The configuration file of SPEC §5 (`/etc/credfile.conf`), read whole and checked
/// before anything runs, so the command line and a ``CredentialStore`` user apply the
/// same policy:
///
/// ```swift
/// let configuration = try CredFileConfiguration.load()   // CREDFILE_CONFIG or /etc/credfile.conf
/// let store = try CredentialStore(path: "/etc/app.cred", configuration: configuration)
/// ```
///
/// Precedence, highest first: what the caller sets itself (the command line's options),
/// the `[PATH]` sections naming the credential file (compared after resolving symlinks on
/// both sides; later sections over earlier ones), the top part of the file, the defaults.
/// A key's value comes from the highest part that sets it; a repeatable key
/// (`blocklist`) collects every line of that part. The grammar is `ConfigurationSyntax` (package-internal).
public struct CredFileConfiguration: Sendable {
    /// Where the configuration is read from unless `--config` or `CREDFILE_CONFIG` says otherwise.
    public static let defaultPath = "/etc/credfile.conf"
    /// The environment variable naming another configuration file.
    public static let environmentVariable = "CREDFILE_CONFIG"

    /// The file read, or nil when there was none (a missing default file).
    public let path: String?
    /// Its settings.
    package let parsed: ConfigurationSyntax.Parsed

    /// No configuration: every setting at its default.
    public static let none = CredFileConfiguration(path: nil, parsed: .init())

    private init(path: String?, parsed: ConfigurationSyntax.Parsed) {
        self.path = path
        self.parsed = parsed
    }

    /// Parses the bytes of a configuration file without opening anything (no ownership
    /// or mode checks).
    /// - Parameters:
    ///   - bytes: the file's contents.
    ///   - source: the path that errors name.
    ///   - keys: the keys it may hold (by default every key credfile knows).
    /// - Throws: ``CredFileError/Code/usage`` naming `source:LINE` and the broken rule.
    package init(parsing bytes: [UInt8], source: String, keys: [Setting] = Setting.keys) throws(CredFileError) {
        switch ConfigurationSyntax.parse(bytes, keys: keys) {
        case .success(let parsed): self.init(path: source, parsed: parsed)
        case .failure(let problem): throw Self.error(problem, in: source)
        }
    }

    /// Reads the configuration file: `path` when given (`--config`), else the one
    /// `CREDFILE_CONFIG` names, else ``defaultPath``, which may be missing (then
    /// ``none``). A file named explicitly must exist.
    /// - Parameters:
    ///   - path: the file the caller names, if any.
    ///   - environment: where to look up `CREDFILE_CONFIG` (nil: the process's environment).
    /// - Throws: ``CredFileError/Code/usage`` naming the file (and line) when it cannot be
    ///   read, its group or others can write it, it belongs to neither root nor the caller
    ///   (effective uid), or it breaks the grammar; ``CredFileError/Code/io`` when reading
    ///   it fails for another reason (`EIO`).
    public static func load(path: String? = nil, environment: [String: String]? = nil) throws(CredFileError) -> Self {
        let file = location(path: path, environment: environment)
        guard let bytes = try read(file.path, mayBeMissing: !file.isExplicit) else { return .none }
        return try Self(parsing: bytes, source: file.path)
    }

    /// The file ``load(path:environment:)`` reads: `path`, else `CREDFILE_CONFIG` (when
    /// set and not empty), else ``defaultPath``; explicit unless it is the default.
    public static func location(path: String? = nil, environment: [String: String]? = nil) -> (
        path: String, isExplicit: Bool
    ) {
        if let path { return (path, true) }
        let variable =
            environment.map { $0[environmentVariable] } ?? getenv(environmentVariable).map { String(cString: $0) }
        if let variable, !variable.isEmpty { return (variable, true) }
        return (defaultPath, false)
    }

    /// The file's bytes after the ownership and mode checks; nil when it is missing and may be.
    private static func read(_ file: String, mayBeMissing: Bool) throws(CredFileError) -> [UInt8]? {
        func refuse(_ reason: ConfigurationProblem.Reason) -> CredFileError {
            var refusal = error(ConfigurationProblem(line: 0, reason: reason), in: file)
            // A file that is missing, forbidden or not a file is a setup error (exit 2); a
            // failing disk is an I/O error (exit 5), as for the credential file.
            if case .unreadable(let cause) = reason,
                ![ENOENT, EACCES, EPERM, ELOOP, ENOTDIR, EISDIR, ENAMETOOLONG].contains(cause.errno)
            {
                refusal.code = .io
            }
            return refusal
        }
        let bytes: [UInt8]?
        do {
            // FileReader opens it O_NONBLOCK: a FIFO put in its place must not hang every command.
            bytes = try FileReader.read(file) { info throws(CredFileError) in
                let type = info.st_mode & S_IFMT
                // /dev/null (device 1:3, glibc's encoding 0x103) is the usual way to say "no
                // configuration" (ssh -F /dev/null); it is world-writable and reads as nothing.
                if type == S_IFCHR && info.st_rdev == 0x103 { return false }
                guard type == S_IFREG else { throw refuse(.notARegularFile) }
                guard info.st_uid == 0 || info.st_uid == geteuid() else {
                    throw refuse(.foreignOwner(uid: info.st_uid))
                }
                guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
                    throw refuse(.writableByOthers(mode: info.st_mode))
                }
                guard info.st_size <= ConfigurationSyntax.maximumSize else {
                    throw refuse(.fileTooLarge(ConfigurationSyntax.maximumSize))
                }
                return true
            }
        } catch let error as SyscallError {
            throw refuse(.unreadable(.init(syscall: error.name, errno: error.errno)))
        } catch let error as CredFileError {
            throw error
        } catch {
            throw refuse(.unreadable(.init(syscall: "read", errno: EIO)))  // FileReader throws nothing else
        }
        if bytes == nil && !mayBeMissing { throw refuse(.unreadable(.init(syscall: "open", errno: ENOENT))) }
        return bytes
    }

    /// The usage error for `problem`: `FILE:LINE: reason` (`FILE: reason` for the whole
    /// file), the path escaped as every path credfile prints.
    static func error(_ problem: ConfigurationProblem, in file: String) -> CredFileError {
        let place = Escaped.path(file) + (problem.line > 0 ? ":\(problem.line)" : "")
        return CredFileError(.usage, "\(place): \(problem)")
    }

    // MARK: Settings for one credential file

    /// Every key set for the credential file `file` (nil: the top part only), with its
    /// values: one for most keys, every line of the winning part for a repeatable one.
    package func values(for file: String?) -> [Setting: [SettingValue]] {
        var values = Self.grouped(parsed.top)
        guard let file, !parsed.sections.isEmpty else { return values }
        let target = Self.resolved(file)
        var resolvedSections: [String: String] = [:]  // a path heading many sections is resolved once
        for section in parsed.sections {
            let path = resolvedSections[section.path] ?? Self.resolved(section.path)
            resolvedSections[section.path] = path
            guard path == target else { continue }
            for (setting, sectionValues) in Self.grouped(section.entries) { values[setting] = sectionValues }
        }
        return values
    }

    /// The value of `setting` for `file` (the last one, for a repeatable setting).
    package func value(of setting: Setting, for file: String?) -> SettingValue? { values(for: file)[setting]?.last }

    /// The hash policy for `file`: `iterations`, `algorithm`, `memory`, `time`,
    /// `lanes`, `max-work` and `max-memory`, else the defaults.
    /// - Throws: ``CredFileError/Code/usage`` when the policy is outside its ranges.
    public func hashPolicy(for file: String?) throws -> HashPolicy {
        let values = values(for: file)
        return try HashPolicy(reading: { values[$0]?.last })
    }

    /// The password policy for `file` (SPEC §8): `min-length` and every `blocklist`
    /// besides the built-in list.
    /// - Throws: ``CredFileError/Code/io`` when a blocklist cannot be opened.
    public func passwordPolicy(for file: String?) throws -> PasswordPolicy {
        let values = values(for: file)
        var minimum = PasswordPolicy.defaultMinimumLength
        if case .number(let n)? = values[.minimumLength]?.last { minimum = n }
        let lists = try (values[.blocklist] ?? []).compactMap { value -> Blocklist? in
            guard case .text(let path) = value else { return nil }
            return try Blocklist(path: path)
        }
        return try PasswordPolicy(minimumLength: minimum, blocklists: [.builtIn] + lists)
    }

    /// `lock-timeout` for `file`, in seconds; nil when the file does not set it.
    public func lockTimeout(for file: String?) -> Double? {
        if case .seconds(let seconds)? = values(for: file)[.lockTimeout]?.last { seconds } else { nil }
    }

    /// One value per key, or every value of a repeatable key, in line order.
    private static func grouped(_ entries: [ConfigurationSyntax.Entry]) -> [Setting: [SettingValue]] {
        var values: [Setting: [SettingValue]] = [:]
        for entry in entries {
            values[entry.setting] = (entry.setting.isRepeatable ? values[entry.setting] ?? [] : []) + [entry.value]
        }
        return values
    }

    /// `path` with its symlinks resolved as the writer resolves FILE, or, when that
    /// fails (a missing directory, a loop), made absolute with `.` and `..` removed.
    static func resolved(_ path: String) -> String {
        if let resolved = try? FileReader.resolvedPath(path) { return resolved }
        var parts: [Substring] = []
        let absolute = path.hasPrefix("/") ? path : ((try? Syscall.currentDirectory()) ?? "") + "/" + path
        for part in absolute.split(separator: "/") {
            if part == "." { continue }
            if part == ".." {
                if !parts.isEmpty { parts.removeLast() }
                continue
            }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}

extension CredentialStore {
    /// A store whose hash policy, password policy, lock timeout and backup setting come
    /// from `configuration` for `path` (SPEC §6: a store reads its policy from the
    /// configuration file, as the command line does).
    /// - Throws: ``CredFileError`` when a setting is outside its range or a blocklist cannot be opened.
    public init(path: String, configuration: CredFileConfiguration, caching: Bool = false) throws {
        let backup = configuration.value(of: .backup, for: path) == .flag(true)
        self.init(path: path, policy: try configuration.hashPolicy(for: path), keepsBackup: backup, caching: caching)
        passwordPolicy = try configuration.passwordPolicy(for: path)
        if let timeout = configuration.lockTimeout(for: path) { lockTimeout = timeout }
    }
}
