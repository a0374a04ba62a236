import Testing
import TabBarCore
@testable import TabBarServer

/// `stats.get`'s request latency: a run of a group's answers is recorded at once, as many
/// samples as answers (`LatencyRing.record(_:count:)`), the ring wrapping as it does one
/// sample at a time.
@Suite struct ServerLatencyTests {
    @Test func samplesRecordedAtOnceAreAsManySamplesRecordedOneByOne() {
        var atOnce = LatencyRing(capacity: 4), oneByOne = LatencyRing(capacity: 4)
        for (ns, n) in [(3_000, 3), (9_000, 0), (1_000, 6), (2_000, 1)] {
            atOnce.record(UInt64(ns), count: n)
            for _ in 0..<n { oneByOne.record(UInt64(ns)) }
        }
        #expect(atOnce.count == 10)
        #expect(atOnce.max == 3_000, "a run of no answers records nothing")
        #expect(atOnce.json() == oneByOne.json())
        #expect(atOnce.json()["p90_us"] == .double(1), "the ring holds the last four: 1, 1, 1, 2 µs")
    }
}
