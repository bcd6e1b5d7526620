#if canImport(Glibc)
import Glibc
#endif

/// `check`'s file-level findings (SPEC §5), as sshd's `StrictModes` does for keys: a
/// credential file that group or others can read or write, or that sits in a directory
/// others can write without the sticky bit (they could replace it), is a warning.
/// Such findings carry line 0: they are about the file, not a line of it.
enum FilePermissions {
    /// The permission findings for the file at `path` (symlinks followed, as the
    /// writer does). A path that cannot be examined yields none: reading it already
    /// reported what was wrong.
    static func findings(path: String) -> [Finding] {
        guard let resolved = try? FileReader.resolvedPath(path), let file = try? Syscall.lstat(resolved) else {
            return []
        }
        var findings: [Finding] = []
        let fileMode = UInt32(file.st_mode)
        if fileMode & 0o066 != 0 {
            findings.append(
                Finding(
                    line: 0, severity: .warning, detail: .permissions(.fileAccessibleToOthers(mode: fileMode & 0o7777)))
            )
        }
        let directory = Self.directory(of: resolved)
        if let info = try? Syscall.lstat(directory) {
            let mode = UInt32(info.st_mode)
            if mode & UInt32(S_IWOTH) != 0 && mode & UInt32(S_ISVTX) == 0 {
                findings.append(
                    Finding(
                        line: 0, severity: .warning,
                        detail: .permissions(.directoryWritableByOthers(mode: mode & 0o7777))))
            }
        }
        return findings
    }

    /// The directory part of an absolute path (`/` for a file at the root).
    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
