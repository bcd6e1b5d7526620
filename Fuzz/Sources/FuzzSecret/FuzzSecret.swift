// libFuzzer entry point. A secret: the registry of secret syntaxes (SPEC §2, §3.2) never
// traps, classifies as a pure function, never reads a peer's hash as plaintext, and never
// lets a hash string verify as its own password.
// The checks live in _CredFileFuzzChecks so the regression test replays the same ones.
import _CredFileFuzzChecks

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzChecks.trapOnFailure { () throws(FuzzFailure) in try FuzzChecks.run(.secret, input) }
    return 0
}
