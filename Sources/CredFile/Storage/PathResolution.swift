#if canImport(Glibc)
import Glibc
#endif

/// Resolving a path as the writer does before it locks and replaces the file (SPEC §4),
/// and as `check` does before it looks at the file's and directory's modes.
extension FileReader {
    /// How many symlinks one resolution follows at most (the kernel's limit, `ELOOP`).
    static let maximumSymlinks = 40

    /// `path` with every symlink resolved, link by link, each one checked against the
    /// kernel's `protected_symlinks` rule (``checkFollowable(_:_:in:resolving:)``), which `realpath`
    /// would sidestep. For a missing file: its resolved directory + its name.
    static func resolvedPath(_ path: String) throws -> String {
        guard !path.isEmpty else {
            throw CredFileError(.io, "cannot open an empty path", cause: .init(syscall: "open", errno: ENOENT))
        }
        var resolved: [String] = []
        if !path.hasPrefix("/") {
            do {
                resolved = Self.components(try Syscall.currentDirectory())
            } catch {
                throw error.credFileError("cannot open \(Escaped.path(path))")
            }
        }
        var pending = Self.components(path)
        var followed = 0
        func absolute(_ parts: [String]) -> String { "/" + parts.joined(separator: "/") }
        while !pending.isEmpty {
            let component = pending.removeFirst()
            if component == "." { continue }
            if component == ".." {
                // `resolved` holds no symlink, so `..` is its parent.
                if !resolved.isEmpty { resolved.removeLast() }
                continue
            }
            let candidate = absolute(resolved + [component])
            let found: stat?
            do {
                found = try Syscall.lstat(candidate)
            } catch {
                throw error.credFileError("cannot open \(Escaped.path(path))")
            }
            guard let info = found else {
                guard pending.isEmpty else {
                    throw CredFileError.missingFile(path)
                }
                if let original = (try? Syscall.lstat(path)) ?? nil, original.st_mode & S_IFMT == S_IFLNK {
                    throw CredFileError(.io, "\(Escaped.path(path)) is a symlink to a missing file")
                }
                return candidate
            }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                followed += 1
                guard followed <= Self.maximumSymlinks else {
                    throw CredFileError(
                        .io, "cannot open \(Escaped.path(path))", cause: .init(syscall: "open", errno: ELOOP))
                }
                try checkFollowable(candidate, info, in: absolute(resolved), resolving: path)
                let target: String
                do {
                    target = try Syscall.readlink(candidate)
                } catch {
                    throw error.credFileError("cannot open \(Escaped.path(path))")
                }
                if target.hasPrefix("/") { resolved = [] }
                pending = Self.components(target) + pending
            case S_IFDIR:
                resolved.append(component)
            default:
                guard pending.isEmpty else {
                    throw CredFileError(
                        .io, "cannot open \(Escaped.path(path))", cause: .init(syscall: "open", errno: ENOTDIR))
                }
                resolved.append(component)
            }
        }
        return absolute(resolved)
    }

    /// The kernel's `protected_symlinks` rule (SPEC §4): a symlink in a sticky,
    /// world-writable directory is followed only when it belongs to the caller (euid) or
    /// to the directory's owner. Checked here whatever the sysctl says, for every link on
    /// the way, because a hostile link there could send a root writer anywhere.
    /// - Throws: ``CredFileError/Code/io`` (`EACCES`) naming the link when it may not be followed.
    private static func checkFollowable(_ link: String, _ info: stat, in directory: String, resolving path: String)
        throws
    {
        let parent: stat?
        do {
            parent = try Syscall.lstat(directory)
        } catch {
            throw error.credFileError("cannot open \(Escaped.path(path))")
        }
        guard let parent, parent.st_mode & (S_ISVTX | S_IWOTH) == (S_ISVTX | S_IWOTH) else { return }
        guard info.st_uid == geteuid() || info.st_uid == parent.st_uid else {
            throw CredFileError(
                .io,
                "refusing to follow the symlink \(link): it is in a sticky world-writable directory and belongs "
                    + "to neither you nor the directory's owner (as the kernel's protected_symlinks rule); nothing was written",
                cause: .init(syscall: "open", errno: EACCES))
        }
    }

    private static func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }
}
