// libFuzzer entry point. The rules file and forwarded paths (SPEC §13): first byte even, a rules file; odd, a path
// (see FuzzChecks.accessRules). The checks live in _CredFileFuzzChecks so the
// regression test replays the same ones.
import _CredFileFuzzChecks

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzChecks.trapOnFailure { () throws(FuzzFailure) in try FuzzChecks.run(.accessRules, input) }
    return 0
}
