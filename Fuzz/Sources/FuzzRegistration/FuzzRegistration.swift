// libFuzzer entry point. SPEC §12's registration: the first byte even → an invitation
// code as typed; odd → the register page's form body, registered by the library's one
// registration path. The checks live in _CredFileFuzzChecks so the regression test replays
// the same ones.
import _CredFileFuzzChecks

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzChecks.trapOnFailure { () throws(FuzzFailure) in try FuzzChecks.run(.registration, input) }
    return 0
}
