// libFuzzer entry point. A short program of store operations, run against `CredentialStore` and a model of SPEC §2.
// The checks live in _CredFileFuzzChecks so the regression test replays the same ones.
import _CredFileFuzzChecks

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzChecks.trapOnFailure { () throws(FuzzFailure) in try FuzzChecks.run(.store, input) }
    return 0
}
