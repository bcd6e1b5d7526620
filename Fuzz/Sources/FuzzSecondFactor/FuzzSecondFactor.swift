// libFuzzer entry point. What SPEC §14 parses: the first byte even → a users file
// (liboath's users.oath format), odd → a password with an appended code. The checks live
// in _CredFileFuzzChecks so the regression test replays the same ones.
import _CredFileFuzzChecks

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzChecks.trapOnFailure { () throws(FuzzFailure) in try FuzzChecks.run(.secondFactor, input) }
    return 0
}
