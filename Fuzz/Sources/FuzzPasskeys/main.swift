// libFuzzer entry point. What SPEC §14's passkeys read around libfido2 and libcbor: the
// first byte modulo 3 → clientDataJSON, an attestation object, or a COSE key. The checks
// live in _CredFileFuzzChecks so the regression test replays the same ones.
import _CredFileFuzzChecks

/// libFuzzer's entry point: one input, `size` bytes at `data`; returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzChecks.trapOnFailure { () throws(FuzzFailure) in try FuzzChecks.run(.passkeys, input) }
    return 0
}
