import CredFileTestSupport
import Testing

@testable import credfile

#if canImport(Glibc)
import Glibc
#endif

// upgrade's progress bar (SPEC §5): on a terminal it shows the count, the rate and the
// time left; its formats stay readable for runs of seconds and of hours.

@Suite("upgrade's progress bar")
struct UpgradeProgressTests {
    @Test("On a terminal: done/total, a rate and the time left, and the summary after it")
    func barOnATerminal() throws {
        try withSession { session in
            let lines = (0..<30).map { "u\($0),\(session.password("Sekr3t-p\($0)"))\n" }.joined()
            let file = try session.write("users.txt", lines)
            let tty = try PseudoTerminal(
                try BuiltProduct.path("credfile"), ["upgrade", file, "--iterations", "1000", "--jobs", "2"],
                environment: BuiltBinary.environment())
            try tty.expect("] 30/30  ")
            try tty.expect("s left")
            try tty.expect("upgraded 30 entries in ")
            #expect(tty.finish() == 0)
        }
    }

    @Test(
        "Rates and durations, both sides of each boundary",
        arguments: [
            (8.26, "8.3/s"), (99.94, "99.9/s"), (100.0, "100/s"), (14_603.1, "14603/s"),
        ])
    func rate(perSecond: Double, shown: String) {
        #expect(ProgressBar.rate(perSecond) == shown)
    }

    @Test(
        "Time left: seconds, minutes, hours",
        arguments: [(0, "0s"), (59, "59s"), (60, "1m00s"), (3599, "59m59s"), (3600, "1h00m"), (104_640, "29h04m")])
    func duration(seconds: Int, shown: String) {
        #expect(ProgressBar.duration(seconds) == shown)
    }
}
