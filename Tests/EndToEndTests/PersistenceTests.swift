import Foundation
import Glibc
import Testing
import TabBarClient
import TabBarCore

@Suite(.serialized) struct PersistenceTests {
    /// (Through the typed client, as a front end would.)
    @Test func stateSurvivesARestart() async throws {
        let d = try Daemon()
        let bar = try await TabBar.connect(path: d.socket)
        try await bar.select(.id("chat"))
        try await bar.setBadge(.count(120), on: "me")
        try await bar.setBadge(.dot, on: "nearby")
        let before = try await bar.state()
        bar.close()
        #expect(d.stop() == 0)

        let again = try Daemon(dir: d.dir)
        defer { #expect(again.stop() == 0) }
        let after = try await TabBar.connect(path: again.socket).state()
        #expect(after.seq == 3)
        #expect(after == before)
    }

    @Test func acknowledgedChangesSurviveSIGKILL() async throws {
        let d = try Daemon()
        let bar = try await TabBar.connect(path: d.socket)
        var lastSeq: UInt64 = 0
        for k in 1...200 { lastSeq = try await bar.setBadge(.count(k), on: "chat").seq }
        d.kill9()
        let again = try Daemon(dir: d.dir)
        defer { #expect(again.stop() == 0) }
        let st = try await TabBar.connect(path: again.socket).state()
        #expect(st.seq == lastSeq)
        #expect(st.state.items.first { $0.id == "chat" }?.badge == .count(200))
    }

    /// `compact_interval_ms` spaces compactions out: with a minute between them, 50 changes
    /// past `compact_every` 3 stay in the journal (one compaction at most); with 0 they are
    /// compacted every 3. Either way every change survives a restart.
    @Test func compactionsAreSpacedOutByTheInterval() throws {
        for (interval, spaced) in [(60_000, true), (0, false)] {
            let d = try startDaemon(config: #"{"compact_every":3,"compact_interval_ms":\#(interval)}"#, prefix: "tabbard-interval")
            let c = try RawClient(path: d.socket)
            for k in 1...50 { #expect(try c.call("badge.set", #"{"tab":"chat","count":\#(k)}"#)["result"] != nil) }
            try waitUntil("compactions to settle") {
                let j = try c.call("stats.get")["result"]?["journal"]
                return spaced ? (j?["entries"]?.intValue ?? 0) >= 47 : (j?["entries"]?.intValue ?? 99) < 3
            }
            d.kill9()
            let again = try Daemon(dir: d.dir)
            let st = try RawClient(path: again.socket).call("state.get")["result"]
            #expect(st?["seq"] == .int(50))
            #expect(again.stop() == 0)
        }
    }

    /// Compaction runs on a helper thread while the loop appends to a fresh journal:
    /// with a snapshot every 3 changes, a SIGKILL at any point loses nothing acknowledged.
    @Test func acknowledgedChangesSurviveSIGKILLWhileCompactingInTheBackground() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-compact-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data(#"{"compact_every":3,"compact_interval_ms":0}"#.utf8).write(to: URL(fileURLWithPath: dir + "/c.json"))
        for round in 0..<3 {
            let d = try Daemon(extraArgs: ["--config", dir + "/c.json"], dir: dir)
            let c = try RawClient(path: d.socket)
            // Pipelined: many changes in flight, so compactions overlap with appends.
            var lines = ""
            for k in 1...300 {
                lines += k % 3 == 0
                    ? #"{"jsonrpc":"2.0","id":\#(k),"method":"badge.set","params":{"tab":"chat","count":\#(k + round * 1000)}}"# + "\n"
                    : #"{"jsonrpc":"2.0","id":\#(k),"method":"tab.select","params":{"index":\#(k % 2),"source":"program"}}"# + "\n"
            }
            try c.send(lines)
            var lastSeq = 0
            for _ in 1...300 {
                guard let r = try c.readJSON() else { Issue.record("no reply"); return }
                lastSeq = max(lastSeq, r["result"]?["seq"]?.intValue ?? 0)
            }
            let before = try c.call("state.get")["result"]
            #expect(before?["seq"] == .int(lastSeq))
            d.kill9()
            let again = try Daemon(extraArgs: ["--config", dir + "/c.json"], dir: dir)
            let after = try RawClient(path: again.socket).call("state.get")["result"]
            #expect(after?["seq"] == .int(lastSeq))
            #expect(after?["state"]?["items"] == before?["state"]?["items"])
            #expect(after?["state"]?["selected"] == before?["state"]?["selected"])
            #expect(again.stop() == 0)
        }
    }

    /// Journal files are reused: a compacted journal is kept as `journal.spare`, and the
    /// next rotation's journal is that same file, written over from its start. After a
    /// SIGKILL the restart replays exactly the new generation — not the older bytes after it
    /// — with nothing reported corrupt or torn.
    @Test func compactedJournalsAreReusedAndTheirOldBytesIgnored() throws {
        let dir = try makeTempDir("tabbard-reuse")
        try Data(#"{"compact_every":20,"compact_interval_ms":0}"#.utf8).write(to: URL(fileURLWithPath: dir + "/c.json"))
        let d = try Daemon(extraArgs: ["--config", dir + "/c.json"], dir: dir)
        let c = try RawClient(path: d.socket)
        func inode(_ path: String) -> UInt? {
            var st = stat()
            return stat(path, &st) == 0 ? UInt(st.st_ino) : nil
        }
        // A long first generation (20 changes), compacted in the background into the spare.
        for k in 1...20 { _ = try c.call("badge.set", #"{"tab":"chat","count":\#(k)}"#) }
        try waitUntil("the compacted journal to become the spare") { inode(dir + "/state.json.journal.spare") != nil }
        let spare = try #require(inode(dir + "/state.json.journal.spare"))
        var st = stat()
        #expect(stat(dir + "/state.json.journal.spare", &st) == 0 && st.st_size > 20 * 60)
        // 20 more: the next rotation takes the spare as its journal.
        for k in 21...40 { _ = try c.call("badge.set", #"{"tab":"chat","count":\#(k)}"#) }
        try waitUntil("the spare to be the journal") { inode(dir + "/state.json.journal") == spare }
        // A short generation over the long old one: two changes, then SIGKILL.
        #expect(try c.call("tab.select", #"{"tab":"me"}"#)["result"] != nil)
        #expect(try c.call("badge.set", #"{"tab":"me","count":99}"#)["result"] != nil)
        let before = try c.call("state.get")["result"]
        d.kill9()
        let journal = try Data(contentsOf: URL(fileURLWithPath: dir + "/state.json.journal"))
        let text = String(decoding: journal, as: UTF8.self)
        #expect(text.contains(#""tab":"me","count":99}"#) && text.contains(#""tab":"chat","count":19}"#), "the new generation, then the old bytes")
        let again = try Daemon(extraArgs: ["--config", dir + "/c.json"], dir: dir)
        let after = try RawClient(path: again.socket).call("state.get")["result"]
        #expect(after?["seq"] == before?["seq"])
        #expect(after?["state"] == before?["state"])
        #expect(again.stop() == 0)
        let log = again.readStderr()
        #expect(!log.contains("corrupt") && !log.contains("torn"), "\(log)")
        #expect(try !FileManager.default.contentsOfDirectory(atPath: dir).contains { $0.contains("corrupt") })
    }

    /// A compaction cut short (journal renamed to journal.1, snapshot not yet written):
    /// both journals are replayed, in order, and journal.1 is gone after the start.
    @Test func anInterruptedCompactionIsReplayedFromBothJournals() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-rot-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let old = #"{"seq":1,"method":"tab.select","params":{"tab":"chat"}}"# + "\n" + #"{"seq":2,"method":"badge.set","params":{"tab":"chat","count":7}}"# + "\n"
        let cur = #"{"seq":3,"method":"tab.select","params":{"tab":"me"}}"# + "\n"
        try Data(old.utf8).write(to: URL(fileURLWithPath: dir + "/state.json.journal.1"))
        try Data(cur.utf8).write(to: URL(fileURLWithPath: dir + "/state.json.journal"))
        let d = try Daemon(dir: dir)
        let st = try RawClient(path: d.socket).call("state.get")["result"]
        #expect(st?["seq"] == .int(3))
        #expect(st?["state"]?["selected"] == .string("me"))
        #expect(st?["state"]?["previous"] == .string("chat"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/state.json.journal.1"))
        #expect(d.stop() == 0)
    }

    @Test func aCorruptStateFileIsMovedAsideAndTheDaemonStarts() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-corrupt-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data("{\"seq\":12,\"state\":{\"items\":[{\"id\":".utf8).write(to: URL(fileURLWithPath: dir + "/state.json"))
        let d = try Daemon(dir: dir)
        let st = try RawClient(path: d.socket).call("state.get")["result"]
        #expect(st?["state"]?["selected"] == .string("home"))
        #expect(d.stop() == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(files.contains { $0.hasPrefix("state.json.corrupt-") })
        #expect(d.readStderr().contains("State file is corrupt"))
    }

    @Test func aTornJournalTailIsIgnored() throws {
        let d = try Daemon()
        _ = try RawClient(path: d.socket).call("tab.select", #"{"tab":"me"}"#)
        d.kill9()
        // A write that was cut off mid-line (never acknowledged).
        let fh = try FileHandle(forWritingTo: URL(fileURLWithPath: d.state + ".journal"))
        fh.seekToEndOfFile()
        fh.write(Data(#"{"seq":2,"method":"tab.sel"#.utf8))
        fh.closeFile()
        let again = try Daemon(dir: d.dir)
        defer { #expect(again.stop() == 0) }
        let st = try RawClient(path: again.socket).call("state.get")["result"]
        #expect(st?["seq"] == .int(1))
        #expect(st?["state"]?["selected"] == .string("me"))
    }
}
