@preconcurrency import Glibc
import Foundation
import Testing
import TabBarCore
@testable import TabBarServer

/// The clicks of one committed group are handed to the audio thread with one wake-up, and
/// clicks that come faster than one a millisecond wait for the next: a front end pipelining
/// taps costs a context switch a millisecond, not one per click or per loop turn
/// (docs/PERFORMANCE.md, "One path per method"). Every click is still played.
@Suite(.serialized) struct AudioWakeTests {
    static func touch(_ id: Int, _ phase: String, x: Double) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"touch","params":{"phase":"\#(phase)","x":\#(x),"y":20}}"#
    }

    @Test func aGroupsClicksWakeTheAudioThreadOnce() throws {
        let sounds = String(#filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")) + "/Sounds"  // the package's
        let dir = Rigs.tempDir("tabbard-wake")
        defer { _ = system("rm -rf '\(dir)'") }
        let server = try Rigs.server(in: dir, sounds: [sounds])
        SoundLookupTests.settle(server.audio)  // (sounds load off the loop; a click waits for its sound)
        let (conns, fds) = Rigs.connections(1)
        defer { for fd in fds { close(fd) } }
        func engine() -> JSON? { server.audio.statsJSON()["engine"] }
        let before = try #require(engine()?["thread_wakes"]?.intValue)
        let playedBefore = server.stats.soundsPlayed
        // Four taps, alternating between the first two tabs: four selections, four clicks,
        // one loop turn (one group).
        var id = 0
        let readNs = MonotonicClock.nanoseconds()
        for k in 0..<4 {
            let x = k % 2 == 0 ? 112.5 : 37.5
            for phase in ["down", "up"] {
                id += 1
                server.feed(Self.touch(id, phase, x: x), from: conns[0], readNs: readNs)
            }
        }
        server.endTurn(now: MonotonicClock.nanoseconds())
        #expect(server.stats.soundsPlayed - playedBefore == 4, "every tap clicked")
        #expect(try #require(engine()?["thread_wakes"]?.intValue) - before == 1, "one wake-up for the group's four clicks")
        server.store.syncNow()
    }

    @Test func clicksFasterThanOneAMillisecondWaitForTheNextWake() throws {
        let sounds = String(#filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")) + "/Sounds"
        let dir = Rigs.tempDir("tabbard-wake-gap")
        defer { _ = system("rm -rf '\(dir)'") }
        let server = try Rigs.server(in: dir, sounds: [sounds])
        SoundLookupTests.settle(server.audio)
        let (conns, fds) = Rigs.connections(1)
        defer { for fd in fds { close(fd) } }
        func wakes() throws -> Int { try #require(server.audio.statsJSON()["engine"]?["thread_wakes"]?.intValue) }
        var id = 0, x = 37.5
        func tap(at t: UInt64) {
            x = x == 37.5 ? 112.5 : 37.5   // the other tab each time: each tap selects and clicks
            for phase in ["down", "up"] {
                id += 1
                server.feed(Self.touch(id, phase, x: x), from: conns[0], readNs: t)
            }
        }
        let t0 = MonotonicClock.nanoseconds()
        let before = try wakes()
        tap(at: t0)
        server.endTurn(now: t0)
        #expect(try wakes() - before == 1, "the first tap's click goes at once")
        // A second tap 0.1 ms later: its click is queued, the audio thread not woken yet, and
        // the loop sleeps no longer than the rest of the millisecond.
        tap(at: t0 + 100_000)
        server.endTurn(now: t0 + 100_000)
        #expect(try wakes() - before == 1)
        #expect(server.audio.wakeDueNs == t0 + AudioService.wakeGapNs)
        // The millisecond is up: the next turn (a timeout, no request) wakes it.
        server.endTurn(now: t0 + AudioService.wakeGapNs)
        #expect(try wakes() - before == 2, "the waiting click goes when its millisecond is up")
        #expect(server.audio.wakeDueNs == nil)
        #expect(server.stats.soundsPlayed == 2, "both taps clicked")
        server.store.syncNow()
    }
}
