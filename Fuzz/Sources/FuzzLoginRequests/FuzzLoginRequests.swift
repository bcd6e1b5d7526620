// libFuzzer entry point. The wire formats of SPEC §7's callers: first byte even → a
// checkpassword request on fd 3 (Dovecot, qmail); odd → Squid helper request lines.
// The checks live in _CredFileFuzzChecks so the regression test replays the same ones.
import _CredFileFuzzChecks

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzChecks.trapOnFailure { () throws(FuzzFailure) in try FuzzChecks.run(.loginRequests, input) }
    return 0
}
