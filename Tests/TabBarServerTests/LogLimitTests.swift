import Testing
@testable import TabBarServer

/// The limit on log lines a peer can cause at will (LogLimit.swift), on a clock of the test's own.
@Suite struct LogLimitTests {
    // Sendable because `emit` is called on the test's own thread only, which alone reads `lines`.
    final class Recorder: @unchecked Sendable {
        var lines: [(Priority, String, [String: String])] = []
    }

    static func limit(_ r: Recorder) -> LogLimit {
        var l = LogLimit("Refused a client", burst: 3, intervalNs: 10_000_000_000)
        l.emit = { p, m, meta in r.lines.append((p, m, Dictionary(uniqueKeysWithValues: meta.map { ($0.key, $0.value) }))) }
        return l
    }

    @Test func aBurstIsWrittenTheRestCountedAndTheCountSaidWhenTheIntervalIsOver() {
        let r = Recorder()
        var l = Self.limit(r)
        let s: UInt64 = 1_000_000_000
        for k in 0..<100 { l.write(.warning, "Refused a client", ["uid": String(k)], nowNs: 5 * s + UInt64(k) * 1_000_000) }
        #expect(r.lines.map(\.2["uid"]) == ["0", "1", "2"])
        // Due when the interval ends, not before.
        #expect(l.flushDueNs == 15 * s)
        l.flush(nowNs: 14 * s)
        #expect(r.lines.count == 3)
        l.flush(nowNs: 15 * s)
        #expect(r.lines.count == 4)
        #expect(r.lines[3].0 == .warning)
        #expect(r.lines[3].1 == #"Suppressed 97 log lines like "Refused a client" (more than 3 in 10 s)"#)
        #expect(r.lines[3].2["suppressed"] == "97")
        #expect(l.flushDueNs == nil)
        // It resumes: the next lines are written again, a new burst.
        for k in 0..<4 { l.write(.warning, "Refused a client", ["uid": "again\(k)"], nowNs: 16 * s) }
        #expect(r.lines.suffix(3).map(\.2["uid"]) == ["again0", "again1", "again2"])
        #expect(r.lines.count == 7)
    }

    @Test func theCountComesBeforeTheNextLineWhenTheLoopDidNotFlush() {
        let r = Recorder()
        var l = Self.limit(r)
        let s: UInt64 = 1_000_000_000
        for _ in 0..<5 { l.write(.warning, "Refused a client", nowNs: s) }
        l.write(.warning, "Refused a client", ["last": "yes"], nowNs: 30 * s)
        #expect(r.lines.count == 5)
        #expect(r.lines[3].1.hasPrefix("Suppressed 2 log lines like"))
        #expect(r.lines[4].2["last"] == "yes")
    }

    /// A storm of lines (a burst of clicks the voice pool could not hold, each a `Sound
    /// failed`) makes the text and fields only of the lines written, not of those counted.
    @Test func onlyTheLinesWrittenAreMade() {
        let r = Recorder()
        var l = Self.limit(r)
        var made = 0
        func fields(_ k: Int) -> KeyValuePairs<String, String> { made += 1; return ["uid": String(k)] }
        for k in 0..<100 { l.write(.warning, "Refused a client", fields(k), nowNs: 1) }
        for _ in 0..<50 { l.write(.debug, "Client connected", fields(0), nowNs: 1) }
        #expect(made == 3)
        #expect(r.lines.map(\.2["uid"]) == ["0", "1", "2"])
        l.flush(nowNs: 100_000_000_000)
        #expect(r.lines.last?.1.hasPrefix("Suppressed 97 log lines") == true)
    }

    @Test func linesBelowTheLogLevelAreNeitherWrittenNorCounted() {
        let r = Recorder()
        var l = Self.limit(r)
        #expect(Log.level == .info)
        for _ in 0..<50 { l.write(.debug, "Client connected", nowNs: 1) }
        l.flush(nowNs: 100_000_000_000)
        #expect(r.lines.isEmpty)
        #expect(l.flushDueNs == nil)
    }

    /// The daemon's limits together (PeerLogs): what a kind suppressed is due when its
    /// interval ends and said once then, whichever other kinds are quiet.
    @Test func peerLogsSayWhatAKindSuppressedOnceItsIntervalIsOver() {
        let logs = PeerLogs()
        let s: UInt64 = 1_000_000_000
        #expect(logs.flushDueNs == nil)
        for k in 0..<12 { logs.write(.refused, .error, "Refused a client", nowNs: 5 * s + UInt64(k)) }
        logs.write(.full, .error, "Refused a client: max_clients reached", nowNs: 6 * s)
        #expect(logs.flushDueNs == 15 * s)
        logs.flush(nowNs: 14 * s)
        #expect(logs.flushDueNs == 15 * s)
        logs.flush(nowNs: 15 * s)
        #expect(logs.flushDueNs == nil)
        for k in 0..<12 { logs.write(.full, .error, "Refused a client: max_clients reached", nowNs: 20 * s + UInt64(k)) }
        // (The other kind's window, from 6 s, is over: a new one starts at 20 s, its burst of
        // 10 is written and 2 lines are suppressed until 30 s.)
        #expect(logs.flushDueNs == 30 * s)
    }
}
