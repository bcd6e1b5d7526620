// libFuzzer entry point. What `credfile serve` parses of a request (SPEC §10): first
// byte even → an `Authorization: Basic` value; odd → a peer and `X-Real-IP` /
// `X-Forwarded-For`. The checks live in _CredFileFuzzChecks so the regression test
// replays the same ones.
import _CredFileFuzzChecks

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzChecks.trapOnFailure { () throws(FuzzFailure) in try FuzzChecks.run(.serveRequests, input) }
    return 0
}
