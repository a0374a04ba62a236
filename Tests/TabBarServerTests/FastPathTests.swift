@preconcurrency import Glibc
import Testing
import TabBarCore
@testable import TabBarServer

/// Differential tests of the byte-level `tab.select` path (`FastSelect`, `Server.handleSelect`):
/// every line goes through two servers, one with the fast path and one without, and the
/// replies, events, journal bytes, state and counters must be identical.
@Suite(.serialized) struct FastPathTests {
    final class Pair {
        let dir: String
        let fast: Server, slow: Server
        let fc: Connection, sc: Connection, fsub: Connection, ssub: Connection
        var fds: [Int32] = []

        init() throws {
            dir = Rigs.tempDir("tabbard-fastpath")
            fast = try Rigs.server(in: dir, name: "fast")
            slow = try Rigs.server(in: dir, name: "slow")
            slow.fastPath = false
            let conns: [Connection]
            (conns, fds) = Rigs.connections(4)
            (fc, sc, fsub, ssub) = (conns[0], conns[1], conns[2], conns[3])
            for (s, sub) in [(fast, fsub), (slow, ssub)] {
                sub.subscribed = true
                s.subscribers.append(sub)
            }
        }

        deinit {
            for fd in fds { close(fd) }
            fast.store.syncNow(); slow.store.syncNow()
            _ = system("rm -rf '\(dir)'")
        }

        func journal(_ s: Server) -> [UInt8] {
            var st = stat()
            if lstat(s.store.journalPath, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK { return [] }  // /dev/full
            return (try? Posix.readFile(s.store.journalPath)) ?? []
        }

        /// Feeds `line` to both; records a mismatch as a test issue.
        @discardableResult
        func check(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
            let bytes = Array(line.utf8)
            for (s, c) in [(fast, fc), (slow, sc)] {
                bytes.withUnsafeBufferPointer { s.handle(.line($0), from: c) }
                s.commitBatch()
            }
            // The two servers keep their files in sibling directories, which error messages name.
            let fastReply = String(decoding: fc.out, as: UTF8.self).replacing("/fast", with: "/slow")  // (paths in storage_failed advice)
            #expect(fastReply == String(decoding: sc.out, as: UTF8.self), "reply for \(line)", sourceLocation: sourceLocation)
            #expect(fsub.out == ssub.out, "events for \(line)", sourceLocation: sourceLocation)
            #expect(journal(fast) == journal(slow), "journal for \(line)", sourceLocation: sourceLocation)
            #expect(fast.reducer.state == slow.reducer.state, "state for \(line)", sourceLocation: sourceLocation)
            #expect(fast.stats.requests == slow.stats.requests && fast.stats.errors == slow.stats.errors
                    && fast.stats.events == slow.stats.events && fast.stats.notifications == slow.stats.notifications,
                    "counters for \(line)", sourceLocation: sourceLocation)
            let reply = String(decoding: fc.out, as: UTF8.self)
            for c in [fc, sc, fsub, ssub] { c.out.removeAll() }
            return reply
        }
    }

    static func taken(_ line: String) -> Bool {
        Array(line.utf8).withUnsafeBufferPointer { FastSelect.scan($0, maxIDLength: Limits().maxIDLength) != nil }
    }

    @Test func theCommonShapesTakeTheFastPath() {
        for line in [
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0,"source":"program"}}"#,
            #"{"method":"tab.select","params":{"source":"user","tab":"home"},"id":"a b","jsonrpc":"2.0"}"#,
            #" { "jsonrpc" : "2.0" , "id" : 123456789012345678901234567890 , "method" : "tab.select" , "params" : { "index" : 3 } } "#,
            #"{"jsonrpc":"2.0","id":-7,"method":"tab.select","params":{"tab":"nope"}}"#,
        ] { #expect(Self.taken(line), "\(line)") }
        for line in [
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0,"if_seq":3}}"#,
            #"{"jsonrpc":"2.0","method":"tab.select","params":{"index":0}}"#,
            #"{"jsonrpc":"2.0","id":1.5,"method":"tab.select","params":{"index":0}}"#,
            #"{"jsonrpc":"2.0","id":"a\"b","method":"tab.select","params":{"index":0}}"#,
            #"{"jsonrpc":"2.0","id":1,"id":2,"method":"tab.select","params":{"index":0}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0,"index":1}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0},"x":1}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"tab":"home","index":0}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":null}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":01}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"tab":""}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0}} x"#,
        ] { #expect(!Self.taken(line), "\(line)") }
    }

    @Test func editedLinesMatchTheSlowPath() throws {
        let p = try Pair()
        let ids = ["1", "0", "-0", "-12", "007", "1.5", "1e3", "12345678901234567890123", "\"x\"", "\"\"", #""a\"b""#, #""\u0041""#,
                   "\"é\"", "null", "true", "{}", "[]", "\"\u{7F}\""]
        let refs = [#""index":0"#, #""index":1"#, #""index":2"#, #""index":-1"#, #""index":99"#, #""index":1.0"#, #""index":1e0"#,
                    #""index":9007199254740993"#, #""index":"1""#, #""index":null"#, #""tab":"home""#, #""tab":"nearby""#,
                    #""tab":"profile""#, #""tab":"nope""#, #""tab":"""#, #""tab":"h\u006fme""#, #""tab":null"#, #""tab":3"#,
                    "\"tab\":\"\(String(repeating: "x", count: 64))\"", "\"tab\":\"\(String(repeating: "x", count: 65))\""]
        let extras = ["", #""source":"user""#, #""source":"program""#, #""source":"robot""#, #""source":null"#, #""if_seq":0"#,
                      #""if_seq":1"#, #""extra":1"#]
        var rng = SystemRandomNumberGenerator()
        var lines: [String] = []
        for id in ids { for r in refs { for e in extras.shuffled(using: &rng).prefix(2) {
            var params = [r]
            if !e.isEmpty { params.append(e) }
            params.shuffle(using: &rng)
            var members = [#""jsonrpc":"2.0""#, "\"id\":\(id)", #""method":"tab.select""#, "\"params\":{\(params.joined(separator: ","))}"]
            members.shuffle(using: &rng)
            lines.append("{" + members.joined(separator: ",") + "}")
        } } }
        lines += [
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0}}"#,
            #"{"jsonrpc":"2.0","id":1,"id":2,"method":"tab.select","params":{"index":0}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0,"index":1}}"#,
            #"{"jsonrpc":"1.0","id":1,"method":"tab.select","params":{"index":0}}"#,
            #"{"id":1,"method":"tab.select","params":{"index":1}}"#,
            #"{"jsonrpc":"2.0","method":"tab.select","params":{"index":2}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.selectx","params":{"index":0}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":[]}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":null}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select"}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{}}"#,
            "\t{ \"jsonrpc\" :\"2.0\",\r\"id\": 5 ,\"method\":\"tab.select\" , \"params\" : {\"index\" : 1 , \"source\":\"user\" } }  ",
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0}}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0,}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":-}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":0 1}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        ]
        // Random byte edits of a valid line (each position, a few replacement bytes).
        let base = Array(#"{"jsonrpc":"2.0","id":42,"method":"tab.select","params":{"tab":"home","source":"program"}}"#.utf8)
        for _ in 0..<400 {
            var b = base
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let k = Int.random(in: 0..<b.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: b[k] = [0x20, 0x22, 0x2C, 0x3A, 0x7B, 0x7D, 0x30, 0x39, 0x2D, 0x5C, 0x61, 0x7F, 0x09].randomElement(using: &rng)!
                case 1: b.remove(at: k)
                default: b.insert([0x20, 0x22, 0x2C, 0x31, 0x7D].randomElement(using: &rng)!, at: k)
                }
            }
            if let s = String(validating: b, as: UTF8.self), !s.contains("\n") { lines.append(s) }
        }
        var fastCount = 0
        for line in lines {
            if Self.taken(line) { fastCount += 1 }
            p.check(line)
        }
        #expect(fastCount >= 40, "too few lines took the fast path: \(fastCount)")
    }

    /// The plain select path (no `Outcome`, bytes written straight) takes the common
    /// selects and leaves the rest to the general path; both give the slow path's bytes.
    @Test func plainSelectsAndTheRestMatchTheSlowPath() throws {
        let p = try Pair()
        var plain = 0
        func select(_ params: String, plainPath: Bool, id: String = "7", sourceLocation: SourceLocation = #_sourceLocation) {
            p.check(#"{"jsonrpc":"2.0","id":\#(id),"method":"tab.select","params":\#(params)}"#, sourceLocation: sourceLocation)
            if plainPath { plain += 1 }
            #expect(p.fast.stats.plainSelects == plain, "plain path for \(params)", sourceLocation: sourceLocation)
        }
        select(#"{"index":1,"source":"program"}"#, plainPath: true)
        select(#"{"index":1,"source":"user"}"#, plainPath: true)  // a reselect, with its sound
        select(#"{"tab":"home","source":"user"}"#, plainPath: true)
        select(#"{ "source" : "user", "tab" : "chat" }"#, plainPath: true)  // white space: params rewritten for the journal
        select(#"{"index":2}"#, plainPath: false)  // the center button: an error
        select(#"{"index":1}"#, plainPath: false, id: "\"\(String(repeating: "x", count: 6000))\"")  // reply too long for the scratch
        // Item ids that need escaping, and animation styles: the general path.
        p.check(#"{"jsonrpc":"2.0","id":8,"method":"bar.configure","params":{"items":[{"id":"home"},{"id":"q\"uote"},{"id":"anim","animation":"bounce"},{"id":"é"}]}}"#)
        select(#"{"index":1}"#, plainPath: false)
        select(#"{"index":3}"#, plainPath: false)  // plain, but the previous tab's id needs escaping
        select(#"{"index":0}"#, plainPath: true)
        select(#"{"index":2}"#, plainPath: false)  // its bounce cue
        select(#"{"index":3}"#, plainPath: false)  // the old tab's bounce (deselect cue)
        select(#"{"tab":"é"}"#, plainPath: false)  // not printable ASCII: no fast path at all
        select(#"{"index":3,"source":"user"}"#, plainPath: true)  // reselect
        p.check(#"{"jsonrpc":"2.0","id":9,"method":"bar.configure","params":{"settings":{"animation":"pulse"}}}"#)
        select(#"{"index":0}"#, plainPath: false)
        p.check(#"{"jsonrpc":"2.0","id":9,"method":"bar.configure","params":{"settings":{"animation":"none","scroll_threshold":10,"hide_duration_ms":0}}}"#)
        select(#"{"index":0}"#, plainPath: true)
        // (Without a slide: the two servers' clocks differ by a little, and so would a retargeted phase.)
        p.check(#"{"jsonrpc":"2.0","id":10,"method":"scroll","params":{"dy":50}}"#)
        #expect(p.fast.reducer.state.visibility.hidden)
        select(#"{"index":3}"#, plainPath: false)  // withdraws the scroll reason: the bar comes back
        #expect(!p.fast.reducer.state.visibility.hidden)
        select(#"{"index":0}"#, plainPath: true)
    }

    @Test func aFailedJournalWriteUndoesFastAndSlowAlike() throws {
        let p = try Pair()
        p.check(#"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":1,"source":"user"}}"#)
        // Both journals become unwritable (a full disk: /dev/full refuses every write with
        // ENOSPC, even for root): the change must be refused the same way.
        for s in [p.fast, p.slow] {
            s.store.syncNow()
            unlink(s.store.journalPath)
            #expect(symlink("/dev/full", s.store.journalPath) == 0)
            s.store.closeJournalForTests()
        }
        let reply = p.check(#"{"jsonrpc":"2.0","id":2,"method":"tab.select","params":{"index":3,"source":"program"}}"#)
        #expect(reply.contains("storage_failed"), "\(reply)")
        #expect(p.fast.reducer.state.selected == p.slow.reducer.state.selected)
    }
}
