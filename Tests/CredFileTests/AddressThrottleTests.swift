import Testing

@testable import CredFile

/// SPEC §11's `address-free-failures`: free failures, then a doubling wait, never a lockout.
@Suite struct AddressThrottleTests {
    @Test func freeFailuresThenDoublingNeverLocked() {
        let throttle = AddressThrottle(freeFailures: 3, maximumDelay: 8)
        for second in 0..<3 {
            #expect(throttle.admits("203.0.113.9", now: Double(second)))
            throttle.record("203.0.113.9", granted: false, now: Double(second))
        }
        #expect(!throttle.admits("203.0.113.9", now: 2.5))
        #expect(throttle.admits("203.0.113.9", now: 3))  // 1 s after the third failure
        #expect(throttle.admits("198.51.100.7", now: 2.5))  // another address is not touched
        throttle.record("203.0.113.9", granted: false, now: 3)
        #expect(!throttle.admits("203.0.113.9", now: 4.5) && throttle.admits("203.0.113.9", now: 5))
        #expect(throttle.delay(after: 2) == 0 && throttle.delay(after: 3) == 1 && throttle.delay(after: 4) == 2)
        #expect(throttle.delay(after: 100) == 8)  // capped, never a lockout
        throttle.record("203.0.113.9", granted: true, now: 5)
        #expect(throttle.admits("203.0.113.9", now: 5))
    }
}
