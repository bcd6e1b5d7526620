// The only file that imports libsystemd: socket activation and readiness for
// `credfile serve` (SPEC §10), as sd_listen_fds(3) and sd_notify(3) describe them.
import CSystemd

/// What systemd hands a service and wants to hear from it.
enum Systemd {
    /// The descriptors systemd passed (`LISTEN_FDS`, checked against `LISTEN_PID`), from
    /// fd 3 on; `LISTEN_*` are removed from the environment so no child takes them too.
    static func passedSockets() -> [Int32] {
        let count = sd_listen_fds(1)
        guard count > 0 else { return [] }
        return (0..<count).map { SD_LISTEN_FDS_START + $0 }
    }

    /// Tells systemd the service's state (`READY=1`, `RELOADING=1`, `STOPPING=1`,
    /// `STATUS=…`); nothing happens outside a unit with `Type=notify` (no `NOTIFY_SOCKET`).
    static func notify(_ state: String) {
        _ = sd_notify(0, state)
    }
}
