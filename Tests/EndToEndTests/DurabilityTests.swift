import Foundation
import Glibc
import Testing
import TabBarCore

/// Whether this machine lets the tests mount a small tmpfs (root with CAP_SYS_ADMIN).
let canMountTmpfs: Bool = {
    guard getuid() == 0, let dir = try? makeTempDir("tabbard-mountcheck") else { return false }
    defer { rmdir(dir) }
    guard mount("tmpfs", dir, "tmpfs", 0, "size=64k") == 0 else { return false }
    umount(dir)
    return true
}()

/// Crash safety and storage faults, against the real daemon.
@Suite(.serialized) struct DurabilityTests {
    /// The badge count of every item in a `state.get` result.
    static func counts(_ result: JSON?) -> [String: Int] {
        guard case .array(let items)? = result?["state"]?["items"] else { return [:] }
        var out: [String: Int] = [:]
        for item in items {
            if let id = item["id"]?.stringValue, let v = item["badge"]?["value"]?.intValue { out[id] = v }
        }
        return out
    }

    /// What the writers have had acknowledged (shared between threads: `SharedValue`).
    struct Acks {
        var acked: [Int]
        var next: [Int]
        var seq = 0
        var total = 0
        init(_ n: Int) {
            acked = [Int](repeating: 0, count: n)
            next = [Int](repeating: 1, count: n)
        }
    }

    /// Four writers (one per tab, each counting up its tab's badge) hammer the daemon; it is
    /// killed with SIGKILL at a different point of each of 12 rounds (some in the middle of
    /// a compaction: compact_every is 7) and restarted. Every change that was acknowledged
    /// is there after the restart: each badge is the last acknowledged count or, when the
    /// kill fell between journaling and replying, the one after it.
    @Test func sigkillInAWriteStormNeverLosesAnAcknowledgedChange() throws {
        let dir = try makeTempDir("tabbard-kill")
        try Data(#"{"compact_every":7,"compact_interval_ms":0}"#.utf8).write(to: URL(fileURLWithPath: dir + "/config.json"))
        let tabs = ["home", "nearby", "chat", "me"]
        let shared = SharedValue(Acks(tabs.count))
        for round in 0..<12 {
            let d = try Daemon(extraArgs: ["--config", dir + "/config.json"], dir: dir)
            // Check what survived the previous kill.
            let st = try RawClient(path: d.socket).call("state.get")["result"]
            let seq = try #require(st?["seq"]?.intValue)
            // (The writers of the previous round have ended: the acknowledgements are all in.)
            var a = shared.load()
            #expect(seq >= a.seq, "round \(round): seq \(seq) < acknowledged \(a.seq)")
            let now = Self.counts(st)
            for (k, tab) in tabs.enumerated() {
                let v = now[tab] ?? 0
                #expect(v == a.acked[k] || v == a.acked[k] + 1, "round \(round): \(tab) is \(v), acknowledged \(a.acked[k])")
                a.next[k] = v + 1
                a.acked[k] = v
            }
            a.seq = seq
            shared.store(a)
            // The storm.
            let target = a.total + 40 + (round * 37) % 150
            let socket = d.socket
            var threads: [Thread] = []
            for k in 0..<tabs.count {
                let tab = tabs[k]
                let t = Thread {
                    guard let c = try? RawClient(path: socket) else { return }
                    var count = shared.withLock { $0.next[k] }
                    while true {
                        guard let r = try? c.call("badge.set", #"{"tab":"\#(tab)","count":\#(count)}"#),
                              let s = r["result"]?["seq"]?.intValue else { return }
                        let acked = count
                        shared.withLock {
                            $0.acked[k] = acked
                            $0.seq = max($0.seq, s)
                            $0.total += 1
                        }
                        count += 1
                    }
                }
                threads.append(t)
                t.start()
            }
            try waitUntil("\(target) acknowledged changes") { shared.withLock { $0.total >= target } }
            d.kill9()
            try waitUntil("the writers to stop") { threads.allSatisfy(\.isFinished) }
        }
        #expect(shared.load().total > 500)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(!files.contains { $0.contains("corrupt") }, "\(files)")
    }

    /// The journal is a symlink to /dev/full before the daemon starts: every write fails
    /// with ENOSPC. The daemon starts (one log line), state-changing requests get
    /// `storage_failed` and change nothing, reads and sounds work, subscribers see nothing
    /// but the sound.
    @Test func aFullDiskRefusesChangesButServesReadsAndSounds() throws {
        let dir = try makeTempDir("tabbard-full")
        #expect(symlink("/dev/full", dir + "/state.json.journal") == 0)
        let d = try Daemon(dir: dir)
        let sub = try RawClient(path: d.socket)
        let before = try #require(try sub.call("subscribe")["result"])
        let c = try RawClient(path: d.socket)
        for (method, params) in [("badge.set", #"{"tab":"chat","count":3}"#), ("tab.select", #"{"tab":"me"}"#),
                                 ("bar.configure", #"{"items":[{"id":"a"},{"id":"b"}]}"#), ("feedback.set", #"{"volume":0.5}"#)] {
            let r = try c.call(method, params)
            #expect(r["error"]?["code"] == .int(-32008), "\(method): \(r.text)")
            #expect(r["error"]?["data"]?["kind"] == .string("storage_failed"))
            let message = r["error"]?["message"]?.stringValue ?? ""
            #expect(message.contains("No space left on device"), "\(message)")
            #expect(message.contains("reads and sounds still work"))
        }
        let now = try #require(try c.call("state.get")["result"])
        #expect(now == before, "the state did not change")
        let played = try c.call("sound.play", #"{"name":"click"}"#)
        let voice = try #require(played["result"]?["voice"])
        // The subscriber's next message is the sound, not a change.
        let next = try #require(try sub.readJSON())
        let frame = try #require(next["params"]?["frame"])  // the stream position where it starts
        #expect(next == .obj(["jsonrpc": .string("2.0"), "method": .string("sound.played"),
                              "params": .obj(["voice": voice, "name": .string("click"), "frame": frame])]))
        let stats = try #require(try c.call("stats.get")["result"])
        #expect(stats["journal"]?["error"]?.stringValue?.contains("No space left on device") == true)
        #expect(d.stop() == 0)
        let log = d.readStderr()
        #expect(log.contains("State journal is not a regular file; ignored its contents"), "\(log)")
        #expect(log.contains("Could not record a change; refused"))
    }

    /// A real full file system (a 512 KiB tmpfs): changes fail while it is full, a restart
    /// on the full disk still serves the acknowledged state, and once space is freed changes
    /// work again and survive a SIGKILL.
    @Test(.enabled(if: canMountTmpfs, "needs root with CAP_SYS_ADMIN to mount a tmpfs"))
    func aFullFileSystemFailsChangesAndRecovers() throws {
        let dir = try makeTempDir("tabbard-tmpfs")
        let disk = dir + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        #expect(mount("tmpfs", disk, "tmpfs", 0, "size=512k") == 0)
        defer { umount2(disk, Int32(MNT_DETACH)) }
        let args = ["--state", disk + "/state.json"]
        var d = try Daemon(extraArgs: args, dir: dir)
        var c = try RawClient(path: d.socket)
        #expect(try c.call("badge.set", #"{"tab":"chat","count":1}"#)["result"] != nil)
        // Fill the disk.
        let filler = open(disk + "/filler", O_WRONLY | O_CREAT, 0o600)
        let block = [UInt8](repeating: 0, count: 4096)
        while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
        #expect(errno == ENOSPC)
        close(filler)
        // Until a change fails (the journal's last page may still take a line or two).
        var refused: JSON?
        var acked = 1
        for k in 2...200 {
            let r = try c.call("badge.set", #"{"tab":"chat","count":\#(k)}"#)
            if r["error"] != nil { refused = r; break }
            acked = k
        }
        #expect(refused?["error"]?["data"]?["kind"] == .string("storage_failed"), "\(refused?.text ?? "no refusal")")
        #expect(Self.counts(try c.call("state.get")["result"])["chat"] == acked)
        // Killed and restarted on the full disk: it starts and serves the acknowledged state.
        d.kill9()
        d = try Daemon(extraArgs: args, dir: dir)
        c = try RawClient(path: d.socket)
        #expect(Self.counts(try c.call("state.get")["result"])["chat"] == acked)
        #expect(try c.call("badge.set", #"{"tab":"me","dot":true}"#)["error"]?["data"]?["kind"] == .string("storage_failed"))
        // Space again: changes work, and survive a SIGKILL.
        unlink(disk + "/filler")
        #expect(try c.call("badge.set", #"{"tab":"chat","count":500}"#)["result"] != nil)
        d.kill9()
        let log = d.readStderr()
        #expect(log.contains("Could not write a snapshot at start; serving anyway"), "\(log)")
        d = try Daemon(extraArgs: args, dir: dir)
        #expect(Self.counts(try RawClient(path: d.socket).call("state.get")["result"])["chat"] == 500)
        #expect(d.stop() == 0)
    }

    /// Compaction fails on a full disk while journal appends still fit (the journal's last
    /// page has room): the daemon keeps serving, keeps every change in the journal, and
    /// retries the snapshot now and then — not at every request, with a log line each time.
    @Test(.enabled(if: canMountTmpfs, "needs root with CAP_SYS_ADMIN to mount a tmpfs"))
    func aFailingCompactionIsRetriedQuietly() throws {
        let dir = try makeTempDir("tabbard-compact")
        let disk = dir + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        #expect(mount("tmpfs", disk, "tmpfs", 0, "size=256k") == 0)
        defer { umount2(disk, Int32(MNT_DETACH)) }
        try Data(#"{"compact_every":3,"compact_interval_ms":0}"#.utf8).write(to: URL(fileURLWithPath: dir + "/config.json"))
        let args = ["--state", disk + "/state.json", "--config", dir + "/config.json"]
        var d = try Daemon(extraArgs: args, dir: dir)
        let c = try RawClient(path: d.socket)
        for k in 1...4 { #expect(try c.call("badge.set", #"{"tab":"chat","count":\#(k)}"#)["result"] != nil) }
        // The compaction after the third change runs in the background: let it finish (it
        // frees the old snapshot's page), so that the disk filled next stays full.
        try waitUntil("the first compaction to finish") { access(disk + "/state.json.journal.1", F_OK) != 0 }
        // The journal now holds one line in one page; fill the rest of the disk.
        let filler = open(disk + "/filler", O_WRONLY | O_CREAT, 0o600)
        let block = [UInt8](repeating: 0, count: 4096)
        while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
        close(filler)
        for k in 5...6 { #expect(try c.call("badge.set", #"{"tab":"chat","count":\#(k)}"#)["result"] != nil, "journaled in the page's room") }
        // The snapshot (written off the loop) fails; stats.get reports it once it is known.
        try waitUntil("the failed compaction to be reported") { try c.call("stats.get")["result"]?["journal"]?["error"] != .null }
        for _ in 0..<200 { #expect(try c.call("ping")["result"] == .obj([:])) }
        d.kill9()
        let log = d.readStderr()
        let failures = log.components(separatedBy: "Compacting the state failed").count - 1
        #expect(failures >= 1 && failures <= 3, "\(failures) compaction failures logged")
        unlink(disk + "/filler")
        d = try Daemon(extraArgs: args, dir: dir)
        #expect(Self.counts(try RawClient(path: d.socket).call("state.get")["result"])["chat"] == 6)
        #expect(d.stop() == 0)
    }

    /// A journal whose third entry was changed on disk (one digit: still a readable entry):
    /// its group's check no longer matches, and a good group follows, so this is damage,
    /// not a write cut short. The first two entries are replayed, the changed one is not,
    /// the file is copied aside, one log line says so, and the daemon serves (and journals)
    /// again.
    @Test func aCorruptJournalKeepsItsGoodPrefix() throws {
        let d = try Daemon()
        let c = try RawClient(path: d.socket)
        _ = try c.call("tab.select", #"{"tab":"chat"}"#)
        for k in 1...5 { _ = try c.call("badge.set", #"{"tab":"me","count":\#(k)}"#) }
        d.kill9()
        let path = d.state + ".journal"
        // The generation's marker, then a group (header + entry) per change.
        var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 13)
        #expect(lines.filter { $0.hasPrefix(#"{"journal":2,"#) }.count == 7)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(lines[6] == #"{"seq":3,"method":"badge.set","params":{"tab":"me","count":2}}"#)
        lines[6] = #"{"seq":3,"method":"badge.set","params":{"tab":"me","count":7}}"#
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let again = try Daemon(dir: d.dir)
        let a = try RawClient(path: again.socket)
        let st = try a.call("state.get")["result"]
        #expect(st?["seq"] == .int(2))
        #expect(st?["state"]?["selected"] == .string("chat"))
        #expect(Self.counts(st)["me"] == 1)
        // Serving and journaling again.
        #expect(try a.call("badge.set", #"{"tab":"me","count":9}"#)["result"]?["seq"] == .int(3))
        again.kill9()
        let log = again.readStderr()
        let corruptLines = log.split(separator: "\n").filter { $0.contains("corrupt") }
        #expect(corruptLines.count == 1, "\(log)")
        #expect(corruptLines.first?.contains("State journal is corrupt after 2 good entries; kept those, copied the file aside") == true)
        let files = try FileManager.default.contentsOfDirectory(atPath: d.dir)
        let copy = try #require(files.first { $0.hasPrefix("state.json.journal.corrupt-") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: d.dir + "/" + copy)) != original)  // the corrupt file as found
        let third = try Daemon(dir: d.dir)
        defer { #expect(third.stop() == 0) }
        #expect(Self.counts(try RawClient(path: third.socket).call("state.get")["result"])["me"] == 9)
    }
}
