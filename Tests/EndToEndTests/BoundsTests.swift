import Foundation
import Glibc
import Testing
import TabBarCore
import TabBarTesting

/// The configurable bounds: max_clients, max_line, max_queued_bytes (a slow subscriber
/// gets one state.resync; a client that pipelines without reading is paused), and
/// write_timeout_ms (a client that never reads is disconnected).
@Suite struct BoundsTests {
    static let refusal = #"{"jsonrpc":"2.0","id":null,"error":{"code":-32006,"message":"Too many clients (max_clients = 64); try again later.","data":{"kind":"limit_exceeded"}}}"#

    /// 64 clients are served; the 65th gets exactly one `limit_exceeded` line, then EOF;
    /// when one of the 64 leaves, a new client is served again.
    @Test func theClientOverMaxClientsGetsOneLineThenEOF() throws {
        let d = try startDaemon()
        defer { #expect(d.stop() == 0) }
        var clients: [RawClient] = []
        for _ in 0..<64 { clients.append(try RawClient(path: d.socket)) }
        let over = try connectSocket(d.socket)
        defer { close(over) }
        #expect(try readUntilEOF(over) == [Self.refusal])
        // The 64 still work.
        #expect(try clients[63].call("ping")["result"] == .obj([:]))
        #expect(try clients[0].call("ping")["result"] == .obj([:]))
        clients.removeLast().close()
        try expectServedOnceFree(d.socket, "a free slot")
    }

    /// Once a client has left, a new one is served (after the daemon read the EOF).
    func expectServedOnceFree(_ socket: String, _ what: String) throws {
        var again: RawClient?
        try waitUntil(what) {
            again = try? RawClient(path: socket)
            return again != nil
        }
        #expect(try again?.call("ping")["result"] == .obj([:]))
    }

    /// Out of file descriptors (RLIMIT_NOFILE), a new client gets one `limit_exceeded`
    /// line, then EOF — it is not left in the backlog while the loop spins on a readable
    /// socket — and once a client leaves, new ones are served again.
    @Test(.enabled(if: access("/usr/bin/prlimit", X_OK) == 0, "needs prlimit (util-linux)"))
    func outOfDescriptorsTurnsClientsAwayWithOneLine() throws {
        let d = try startDaemon()
        defer { #expect(d.stop() == 0) }
        // A client that got its hello: the daemon is set up and in its loop (it listens before);
        // and its sounds are loaded, so no sound file is open while the descriptors are counted.
        var clients = [try RawClient(path: d.socket)]
        try waitUntil("the sounds to load") { try clients[0].call("sound.list")["result"]?["loading"] == .bool(false) }
        let pid = d.process.processIdentifier
        func descriptors() -> [String] {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            return fds.sorted().map { "\($0)→" + ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) ?? "?") }
        }
        let before = descriptors()
        let open = Set(before.compactMap { Int($0.prefix { $0 != "→" }) })
        #expect(open.count > 3)
        // Room for a few more descriptors, then none. RLIMIT_NOFILE bounds a descriptor's
        // number and a new one takes the lowest free number, so the limit leaves one
        // number past the highest open (above the daemon's spare descriptor, which it frees to turn a client
        // away) and the room is every free number below it (a closed sound file leaves a hole).
        let limit = open.max()! + 2
        let room = limit - open.count
        let set = try runCapturing("/usr/bin/prlimit", ["--pid", "\(pid)", "--nofile=\(limit):\(limit)"])
        #expect(set.status == 0, "\(set.stderr)")
        for _ in 0..<room { clients.append(try RawClient(path: d.socket)) }
        for _ in 0..<3 {
            let over = try connectSocket(d.socket)
            defer { close(over) }
            let lines: [String]
            do { lines = try readUntilEOF(over) } catch {
                throw TestFailure("\(error); the daemon's descriptors when counted: \(before); now: \(descriptors())")
            }
            #expect(lines.count == 1 && lines[0].contains(#""kind":"limit_exceeded""#) && lines[0].contains("out of file descriptors"), "\(lines)")
        }
        #expect(try clients[0].call("ping")["result"] == .obj([:]))
        clients.removeLast().close()
        try expectServedOnceFree(d.socket, "a free descriptor")
    }

    /// A line of exactly max_line bytes is served; one byte more is `line_too_long`; the
    /// hello announces the limit.
    @Test func maxLineIsTheLongestLineServed() throws {
        let d = try startDaemon(config: #"{"max_line":256}"#)
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socket)
        #expect(c.hello?["params"]?["max_line"] == .int(256))
        func line(_ n: Int, id: Int) -> String {
            let head = #"{"id":\#(id),"method":"ping""#
            return head + String(repeating: " ", count: n - head.utf8.count - 1) + "}"
        }
        #expect(line(256, id: 1).utf8.count == 256)
        try c.send(line(256, id: 1) + "\n" + line(256, id: 2) + "\r\n" + line(257, id: 3) + "\n" + line(100, id: 4) + "\n")
        try c.expectLine(#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
        try c.expectLine(#"{"jsonrpc":"2.0","id":2,"result":{}}"#)
        try c.expectLine(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"The line is longer than max_line (256 bytes); it was discarded. Send shorter lines.","data":{"kind":"line_too_long","max_line":256}}}"#)
        try c.expectLine(#"{"jsonrpc":"2.0","id":4,"result":{}}"#)
    }

    /// Sends `count` badge changes on `writer`, pipelined in batches, reading every reply.
    static func storm(_ writer: RawClient, from start: Int, count: Int) throws -> Int {
        var seq = 0
        var k = 0
        while k < count {
            let n = min(500, count - k)
            var batch = ""
            for j in 0..<n { batch += #"{"id":"w\#(k + j)","method":"badge.set","params":{"tab":"me","count":\#(start + k + j)}}"# + "\n" }
            try writer.send(batch)
            for _ in 0..<n {
                guard let r = try writer.readJSON(), let s = r["result"]?["seq"]?.intValue else { throw TestFailure("no reply in the storm") }
                seq = s
            }
            k += n
        }
        return seq
    }

    /// A subscriber that stops reading while 6,000 changes happen loses its backlog and
    /// gets exactly one `state.resync`; the events it did get before are gap-free, the
    /// resync carries the state at its seq, and after it live events follow again.
    @Test func aSlowSubscriberGetsExactlyOneResyncThenLiveEvents() throws {
        let d = try startDaemon(config: #"{"max_queued_bytes":4096}"#)
        defer { #expect(d.stop() == 0) }
        let sub = try RawClient(path: d.socket)
        let start = try #require(try sub.call("subscribe")["result"]?["seq"]?.intValue)
        let writer = try RawClient(path: d.socket)
        let last = try Self.storm(writer, from: 1, count: 6000)
        #expect(last == start + 6000)
        // The subscriber now reads everything that is there, then a sentinel change.
        let sentinel = try #require(try writer.call("badge.set", #"{"tab":"chat","dot":true}"#)["result"]?["seq"]?.intValue)
        var seq = start
        var resyncs: [JSON] = []
        var gapsBeforeResync = 0
        while true {
            let m = try #require(try sub.readJSON())
            let method = m["method"]?.stringValue
            let s = try #require(m["params"]?["seq"]?.intValue)
            if method == "state.resync" {
                resyncs.append(m)
                #expect(s >= seq)
                seq = s
                if s >= sentinel { break }  // the sentinel's change is in it
                continue
            }
            if s != seq + 1 { gapsBeforeResync += 1 }
            seq = s
            if s == sentinel {
                #expect(method == "badge.changed")
                #expect(m["params"]?["tab"] == .string("chat"))
                break
            }
        }
        #expect(resyncs.count == 1)
        #expect(gapsBeforeResync == 0, "events are gap-free except across the resync")
        // The resync's state is the state at its seq: me's badge carries the count written at that seq.
        let r = try #require(resyncs.first)
        let rseq = try #require(r["params"]?["seq"]?.intValue)
        guard case .array(let items)? = r["params"]?["state"]?["items"] else { Issue.record("resync without items"); return }
        #expect(items.first { $0["id"] == .string("me") }?["badge"]?["value"] == .int(min(rseq, last) - start))
        #expect((items.first { $0["id"] == .string("chat") }?["badge"] != .null) == (rseq == sentinel))
        #expect(!sub.hasPendingData())
        // Live again: the next change is the next event.
        let next = try #require(try writer.call("badge.clear", #"{"tab":"chat"}"#)["result"]?["seq"]?.intValue)
        let e = try #require(try sub.readJSON())
        #expect(e["method"] == .string("badge.changed"))
        #expect(e["params"]?["seq"] == .int(next))
        #expect(next == sentinel + 1)
        #expect(try writer.call("stats.get")["result"]?["resyncs"]?.intValue ?? 0 >= 1)
        // One log line for the episode, not one per overflow.
        #expect(d.stop() == 0)
        #expect(d.readStderr().components(separatedBy: "Subscriber fell behind").count - 1 == 1)
    }

    /// A burst of changes bigger than max_queued_bytes (500 changes, ≈ 55 KB, against
    /// 4 KB) is not "falling behind" while the subscriber's socket has room: it gets every
    /// event and no resync.
    @Test func aBurstBiggerThanTheQueueLimitIsNotAResync() throws {
        let d = try startDaemon(config: #"{"max_queued_bytes":4096}"#)
        defer { #expect(d.stop() == 0) }
        let sub = try RawClient(path: d.socket)
        let start = try #require(try sub.call("subscribe")["result"]?["seq"]?.intValue)
        let writer = try RawClient(path: d.socket)
        let last = try Self.storm(writer, from: 1, count: 500)
        var seq = start
        while seq < last {
            let e = try #require(try sub.readJSON())
            #expect(e["method"] == .string("badge.changed"), "\(e.text)")
            #expect(e["params"]?["seq"] == .int(seq + 1))
            seq = e["params"]?["seq"]?.intValue ?? last
        }
        #expect(try writer.call("stats.get")["result"]?["resyncs"] == .int(0))
    }

    /// A subscriber that also sends requests keeps every reply when it falls behind: only
    /// events are dropped for the resync (a request with an id always gets its reply).
    @Test func aSlowSubscriberKeepsItsReplies() throws {
        let d = try startDaemon(config: #"{"max_queued_bytes":4096}"#)
        defer { #expect(d.stop() == 0) }
        let sub = try RawClient(path: d.socket)
        _ = try sub.call("subscribe")
        let writer = try RawClient(path: d.socket)
        _ = try Self.storm(writer, from: 1, count: 4000)
        var pings = ""
        for k in 0..<20 { pings += #"{"id":"p\#(k)","method":"ping"}"# + "\n" }
        try sub.send(pings)
        // The pings are answered (their replies queue behind the full socket) before the next
        // storm: requests so far are subscribe + 4,000 + 20 pings + these stats.get themselves.
        var polls = 0
        try waitUntil("the pings to be read") {
            polls += 1
            return try writer.call("stats.get")["result"]?["requests"]?.intValue ?? 0 >= 4021 + polls
        }
        _ = try Self.storm(writer, from: 5000, count: 4000)
        var replies: [String] = []
        var resyncs = 0
        let sentinel = try #require(try writer.call("badge.set", #"{"tab":"chat","dot":true}"#)["result"]?["seq"]?.intValue)
        while true {
            let m = try #require(try sub.readJSON())
            if let id = m["id"]?.stringValue {
                #expect(m["result"] == .obj([:]))
                replies.append(id)
            }
            if m["method"] == .string("state.resync") { resyncs += 1 }
            if m["params"]?["seq"]?.intValue == sentinel { break }
        }
        #expect(replies == (0..<20).map { "p\($0)" })
        #expect(resyncs >= 1)
    }

    /// A client that pipelines requests and never reads its replies: once its queue stops
    /// moving for write_timeout_ms it is disconnected (logged with its pid and uid), while
    /// another client is served all along.
    @Test func aClientThatNeverReadsIsDisconnectedAfterWriteTimeout() throws {
        let d = try startDaemon(config: #"{"write_timeout_ms":300,"max_queued_bytes":65536}"#)
        let other = try RawClient(path: d.socket)
        let lazy = try RawClient(path: d.socket)
        var batch = ""
        for k in 0..<300 { batch += #"{"id":\#(k),"method":"state.get"}"# + "\n" }
        try lazy.send(batch)   // ≈ 1 MB of replies: more than the socket holds
        var pings = 0
        try waitUntil("the lazy client to be dropped") {
            #expect(try other.call("ping")["result"] == .obj([:]))
            pings += 1
            return try other.call("stats.get")["result"]?["slow_clients_dropped"] == .int(1)
        }
        #expect(pings >= 1)
        #expect(try other.call("stats.get")["result"]?["clients"] == .int(1))
        // What was already in the socket can still be read, then EOF.
        let lines = try lazy.readToEOF()
        #expect(lines.count < 300)
        #expect(try other.call("tab.select", #"{"tab":"me"}"#)["result"]?["selected"] == .string("me"))
        #expect(d.stop() == 0)
        let log = d.readStderr()
        let line = log.split(separator: "\n").first { $0.contains("Disconnecting a client that does not read its replies") }
        #expect(line?.contains("pid=\(getpid())") == true, "\(log)")
        #expect(line?.contains("uid=\(getuid())") == true)
    }

    /// The same with no other client: nothing else wakes the daemon, so it must wake
    /// itself to find the client that stopped reading (its socket is closed: the client
    /// sees the hang-up without reading, which would let the queue move).
    @Test func aClientThatNeverReadsIsDisconnectedWithNothingElseGoingOn() throws {
        let d = try startDaemon(config: #"{"write_timeout_ms":300,"max_queued_bytes":65536}"#)
        defer { #expect(d.stop() == 0) }
        let lazy = try RawClient(path: d.socket)
        var batch = ""
        for k in 0..<300 { batch += #"{"id":\#(k),"method":"state.get"}"# + "\n" }
        try lazy.send(batch)   // ≈ 1 MB of replies: more than the socket holds
        let rdhup: Int16 = 0x2000  // POLLRDHUP (<poll.h> defines it only with _GNU_SOURCE)
        var p = pollfd(fd: lazy.fd, events: rdhup, revents: 0)
        // (A bound, not a pause: poll returns as soon as the daemon closes the socket.)
        let n = poll(&p, 1, 30_000)
        #expect(n == 1 && p.revents & (rdhup | Int16(POLLHUP)) != 0, "the daemon did not disconnect the client")
        let stats = try RawClient(path: d.socket).call("stats.get")["result"]
        #expect(stats?["slow_clients_dropped"] == .int(1))
        #expect(stats?["clients"] == .int(1))
    }

    /// `voices` bounds what plays at once: 300 pipelined `sound.play` with 4 voices are all
    /// answered (a voice id, or `audio_unavailable` when the engine's queue is full), the
    /// oldest voices are stolen, and the state keeps being served.
    @Test func aSoundFloodStealsVoices() throws {
        let d = try startDaemon(config: #"{"voices":4}"#)
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socket)
        var batch = ""
        for k in 0..<300 { batch += #"{"id":\#(k),"method":"sound.play","params":{"name":"click"}}"# + "\n" }
        try c.send(batch)
        for k in 0..<300 {
            let r = try #require(try c.readJSON())
            #expect(r["id"] == .int(k))
            #expect(r["result"]?["voice"] != nil || r["error"]?["data"]?["kind"] == .string("audio_unavailable"), "\(r.text)")
        }
        #expect(try c.call("tab.select", #"{"tab":"me"}"#)["result"]?["selected"] == .string("me"))
        try waitUntil("stolen voices") {
            let engine = try c.call("stats.get")["result"]?["audio"]?["engine"]
            return engine?["voices"] == .int(4) && (engine?["voices_stolen"]?.intValue ?? 0) > 0
        }
    }

    /// Back-pressure: a client that pipelines 20,000 `state.get` (≈ 60 MB of replies) and
    /// reads late is paused, not buffered: the daemon's memory stays bounded, others are
    /// served, and when it reads it gets every reply, in order.
    @Test func aPipeliningClientIsPausedNotBuffered() throws {
        let d = try startDaemon()
        defer { #expect(d.stop() == 0) }
        let pid = d.process.processIdentifier
        let baseline = residentKB(pid)
        let greedy = try RawClient(path: d.socket)
        let other = try RawClient(path: d.socket)
        let total = 20_000
        let fd = greedy.fd
        let sender = Thread {
            var batch = ""
            for k in 0..<total { batch += #"{"id":\#(k),"method":"state.get"}"# + "\n" }
            let bytes = Array(batch.utf8)
            var off = 0
            while off < bytes.count {
                let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { break }
                off += n
            }
        }
        sender.start()
        var peak = 0
        for _ in 0..<20 {
            #expect(try other.call("ping")["result"] == .obj([:]))
            peak = max(peak, residentKB(pid))
        }
        for k in 0..<total {
            guard let r = try greedy.readJSON() else { Issue.record("EOF after \(k) replies"); return }
            if r["id"] != .int(k) { Issue.record("reply \(k) has id \(r["id"]?.text ?? "none")"); return }
            if k % 1000 == 0 { peak = max(peak, residentKB(pid)) }
        }
        #expect(peak - baseline < 8 * 1024, "RSS went from \(baseline) KiB to \(peak) KiB")
    }
}
