// libFuzzer entry point. What the portal of `credfile serve` parses itself (SPEC §11):
// the first byte modulo 4 → a `Cookie` header, a form body, an `rd`, or the forwarded URL
// headers. The checks live in _CredFileFuzzChecks so the regression test replays the
// same ones.
import _CredFileFuzzChecks

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzChecks.trapOnFailure { () throws(FuzzFailure) in try FuzzChecks.run(.portalRequests, input) }
    return 0
}
