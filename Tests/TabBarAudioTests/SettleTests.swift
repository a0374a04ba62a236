import Testing
@testable import TabBarAudio

/// How `AlsaSink.settle` reads what the sound server takes a cycle from the queue's steps
/// (times in ns, frames); the figures are what PipeWire 0.3.65's plugin did on the rig.
struct SettleTests {
    private func steps(_ frames: Int, everyMs ms: Double, count: Int = 4) -> [(UInt64, Int)] {
        (0..<count).map { (UInt64(Double($0) * ms * 1e6), frames) }
    }

    /// Min-quantum 1024, `avail_min` 128: the plugin hands 1024 frames every other 21.3 ms cycle.
    /// That is a 1024-frame quantum, not a 2048-frame one (which made the stream ask for a
    /// 2048-frame latency and the graph run 42.6 ms cycles).
    @Test func aStepLargerThanAvailMinIsTheQuantum() {
        #expect(AlsaSink.pull(steps: steps(1024, everyMs: 42.6), availMin: 128, rate: 48000) == 1024)
    }

    /// The server took `avail_min` frames per longer cycle: the cycle is the pull.
    @Test func aLongerCycleThanTheStepIsThePull() {
        #expect(AlsaSink.pull(steps: steps(256, everyMs: 21.3), availMin: 256, rate: 48000) == 1024)
    }

    /// The graph runs at the stream's own latency: one period a cycle.
    @Test func oneStepPerCycleOfAvailMin() {
        #expect(AlsaSink.pull(steps: steps(128, everyMs: 2.67), availMin: 128, rate: 48000) == 128)
    }
}
