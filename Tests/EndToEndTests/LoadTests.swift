import Foundation
import Glibc
import Synchronization
import Testing
import TabBarCore
import TabBarTesting

/// What a subscriber can rebuild from events alone: selection, badges, feedback, width.
struct Projection: Equatable, CustomStringConvertible {
    var selected: JSON = .null
    var previous: JSON = .null
    var badges: [String: JSON] = [:]
    var ids: [String] = []
    var feedback: JSON = .null
    var width: JSON = .null

    init() {}

    init(state: JSON) {
        selected = state["selected"] ?? .null
        previous = state["previous"] ?? .null
        feedback = state["feedback"] ?? .null
        width = state["layout"]?["width"] ?? .null
        if case .array(let items)? = state["items"] {
            for item in items {
                guard let id = item["id"]?.stringValue else { continue }
                ids.append(id)
                badges[id] = item["badge"] ?? .null
            }
        }
    }

    /// Applies one event; false for an event this projection does not know.
    mutating func apply(_ method: String, _ p: JSON) -> Bool {
        switch method {
        case "tab.selected":
            selected = p["tab"] ?? .null
            previous = p["previous"] ?? .null
        case "tab.reselected": break
        case "badge.changed":
            if let tab = p["tab"]?.stringValue { badges[tab] = p["badge"] ?? .null }
        case "feedback.changed": feedback = p["feedback"] ?? .null
        case "bar.configured", "state.resync": self = Projection(state: p["state"] ?? .null)
        default: return false
        }
        return true
    }

    var description: String {
        "selected=\(selected.text) previous=\(previous.text) feedback=\(feedback.text) width=\(width.text) badges=\(ids.map { "\($0):\(badges[$0]?.text ?? "-")" })"
    }
}

/// One subscriber on its own thread: rebuilds the state from events and checks that its
/// seqs have no gaps and no duplicates (a change's several events share one seq).
/// The thread owns the connection; what it found is behind a `Mutex`, read by the test.
final class EventListener: Sendable {
    struct Seen {
        var model = Projection()
        var seq = 0
        var events = 0
        var resyncs = 0
        var problems: [String] = []
        var methodsAtSeq: Set<String> = []
        var target = Int.max
        var finished = false
    }
    private let seen: Mutex<Seen>
    /// The connection's descriptor, to shut it down from the test's thread (which unblocks the read).
    private let fd: Int32

    var model: Projection { seen.withLock { $0.model } }
    var seq: Int { seen.withLock { $0.seq } }
    var events: Int { seen.withLock { $0.events } }
    var resyncs: Int { seen.withLock { $0.resyncs } }
    var problems: [String] { seen.withLock { $0.problems } }

    /// Connects, subscribes, and starts the thread that reads the events.
    init(socket: String) throws {
        let client = try RawClient(path: socket)
        guard let r = try client.call("subscribe")["result"], let s = r["seq"]?.intValue else { throw TestFailure("subscribe failed") }
        seen = Mutex(Seen(model: Projection(state: r["state"] ?? .null), seq: s))
        fd = client.fd
        let box = ClientBox(client)
        Thread.detachNewThread { [self] in run(box.take()) }
    }

    private func run(_ client: RawClient) {
        defer { seen.withLock { $0.finished = true } }
        while seen.withLock({ $0.seq < $0.target }) {
            guard let m = try? client.readJSON(timeout: 30) else {
                seen.withLock { if $0.seq < $0.target { $0.problems.append("no event within 30 s at seq \($0.seq)") } }
                return
            }
            guard let method = m["method"]?.stringValue, let p = m["params"] else { continue }
            guard let s = p["seq"]?.intValue else { continue }  // sound.played: no seq
            seen.withLock { v in
                v.events += 1
                if method == "state.resync" {
                    v.resyncs += 1
                    if s < v.seq { v.problems.append("resync went back from \(v.seq) to \(s)") }
                    v.seq = s
                    v.methodsAtSeq = [method]
                } else if s == v.seq + 1 {
                    v.seq = s
                    v.methodsAtSeq = [method]
                } else if s == v.seq && !v.methodsAtSeq.contains(method) {
                    v.methodsAtSeq.insert(method)
                } else {
                    v.problems.append("\(method) with seq \(s) after seq \(v.seq)")
                    v.seq = max(v.seq, s)
                }
                _ = v.model.apply(method, p)
            }
        }
    }

    /// Waits until this subscriber has seen `final`, then ends its thread.
    func finish(at final: Int, timeout: Double = 30) throws {
        seen.withLock { $0.target = final }
        try waitUntil("a subscriber to reach seq \(final)", timeout: timeout) { seen.withLock { $0.seq >= final || $0.finished } }
        shutdown(fd, Int32(SHUT_RDWR))  // unblocks its read
        try waitUntil("its thread to end") { seen.withLock { $0.finished } }
    }
}

/// Hands a connection to the one thread that uses it from then on.
// Sendable because `take` runs once, on the receiving thread, and the making thread never touches the connection again.
private final class ClientBox: @unchecked Sendable {
    private var client: RawClient?
    init(_ client: RawClient) { self.client = client }
    func take() -> RawClient {
        defer { client = nil }
        return client!
    }
}

@Suite(.serialized) struct LoadTests {
    /// 64 clients send 19,200 mixed requests (selections, badges, feedback, layout, reads)
    /// while 32 subscribers listen. Every subscriber ends with the state `state.get` gives,
    /// its seqs have no gap or duplicate except across a `state.resync`, every request got
    /// its reply, in order (one deadline for the whole phase: late is not lost), and a
    /// restart after SIGKILL replays the journal to exactly the same state.
    @Test func sixtyFourClientsAndThirtyTwoSubscribers() throws {
        let d = try startDaemon(config: #"{"max_clients":200,"compact_every":1000000}"#)
        let listeners = try (0..<32).map { _ in try EventListener(socket: d.socket) }
        let perClient = 300
        // Client k's requests come from SplitMix64(seed ^ k): TABBARD_TEST_SEED repeats a run.
        let seed = TestSeed.value(default: 0x10AD_64)
        /// What went wrong for each client (nil: every request got its reply, in order). Each
        /// client's thread writes its own slot, under the lock.
        final class Outcomes: Sendable {
            let lock = Mutex([String?](repeating: nil, count: 64))
        }
        let outcomes = Outcomes()
        let socket = d.socket
        let tabs = ["home", "nearby", "chat", "me"]
        // One deadline for the whole phase, not one per reply: on a loaded machine the daemon
        // (one loop thread among ~100 busy ones here) can be off the CPU for seconds, and a
        // reply that comes late is not a reply that is missing. What is asserted is that
        // each reply comes, in order, on the same connection (docs/ROBUSTNESS.md).
        let phase = 120.0
        let deadline = Date().addingTimeInterval(phase)
        var threads: [Thread] = []
        for k in 0..<64 {
            let t = Thread {
                var rng = SplitMix64(seed: seed ^ UInt64(k))
                let c: RawClient
                do { c = try RawClient(path: socket) } catch {
                    outcomes.lock.withLock { $0[k] = "could not connect: \(error)" }
                    return
                }
                var sent = 0
                while sent < perClient {
                    var batch = ""
                    let n = min(20, perClient - sent)
                    for j in 0..<n {
                        let id = "\(k)-\(sent + j)"
                        let tab = rng.pick(tabs)
                        let line: String
                        switch rng.int(100) {
                        case 0..<25: line = #"{"id":"\#(id)","method":"tab.select","params":{"tab":"\#(tab)","source":"\#(rng.chance(0.5) ? "user" : "program")"}}"#
                        case 25..<45: line = #"{"id":"\#(id)","method":"badge.set","params":{"tab":"\#(tab)","count":\#(rng.int(153) - 2)}}"#
                        case 45..<55: line = #"{"id":"\#(id)","method":"badge.set","params":{"tab":"\#(tab)","text":"t\#(rng.int(21))"}}"#
                        case 55..<62: line = #"{"id":"\#(id)","method":"badge.clear","params":{"tab":"\#(tab)"}}"#
                        case 62..<68: line = #"{"id":"\#(id)","method":"feedback.set","params":{"volume":\#(Double(rng.int(11)) / 10)}}"#
                        case 68..<70: line = #"{"id":"\#(id)","method":"bar.configure","params":{"layout":{"width":\#(300 + rng.int(121))}}}"#
                        case 70..<85: line = #"{"id":"\#(id)","method":"state.get"}"#
                        case 85..<95: line = #"{"id":"\#(id)","method":"ping"}"#
                        default: line = #"{"id":"\#(id)","method":"tab.select","params":{"tab":"post"}}"#  // an error
                        }
                        batch += line + "\n"
                    }
                    do { try c.send(batch) } catch {
                        outcomes.lock.withLock { $0[k] = "request \(sent): \(error)" }
                        return
                    }
                    for j in 0..<n {
                        let want = JSON.string("\(k)-\(sent + j)")
                        let reply: JSON?
                        do { reply = try c.readJSON(timeout: max(0.001, deadline.timeIntervalSinceNow)) } catch {
                            outcomes.lock.withLock { $0[k] = "request \(sent + j): no reply within the \(phase) s of the phase (\(error))" }
                            return
                        }
                        guard let reply else {
                            outcomes.lock.withLock { $0[k] = "request \(sent + j): the daemon closed the connection before its reply" }
                            return
                        }
                        guard reply["id"] == want else {
                            outcomes.lock.withLock { $0[k] = "request \(sent + j): got the reply to \(reply["id"]?.text ?? "nothing") instead" }
                            return
                        }
                    }
                    sent += n
                }
            }
            threads.append(t)
            t.start()
        }
        try waitUntil("the 64 clients", timeout: phase + 10) { threads.allSatisfy(\.isFinished) }
        let clientProblems = outcomes.lock.withLock { $0 }
        let problems = clientProblems.enumerated().compactMap { k, p in p.map { "client \(k): \($0)" } }
        #expect(problems.isEmpty, "seed \(seed): \(problems.count) clients without every reply, in order: \(problems.prefix(5)); the daemon's stderr: \(d.stderrSoFar().suffix(4000))")
        let probe = try RawClient(path: d.socket)
        let final = try #require(try probe.call("state.get")["result"])
        let finalSeq = try #require(final["seq"]?.intValue)
        let want = Projection(state: final["state"] ?? .null)
        #expect(finalSeq > 5000, "seed \(seed)")
        var resyncs = 0
        for (k, l) in listeners.enumerated() {
            try l.finish(at: finalSeq)
            #expect(l.problems.isEmpty, "seed \(seed): subscriber \(k): \(l.problems.prefix(3))")
            #expect(l.seq == finalSeq, "seed \(seed): subscriber \(k)")
            #expect(l.model == want, "seed \(seed): subscriber \(k):\n\(l.model)\n\(want)")
            resyncs += l.resyncs
        }
        // The journal replays to the same state.
        d.kill9()
        let again = try Daemon(extraArgs: ["--config", d.dir + "/config.json"], dir: d.dir)
        defer { #expect(again.stop() == 0) }
        let replayed = try RawClient(path: again.socket).call("state.get")["result"]
        #expect(replayed == final, "seed \(seed)")
        print("load: \(finalSeq) changes, \(listeners.map(\.events).reduce(0, +)) events to 32 subscribers, \(resyncs) resyncs")
    }

    /// Hostile lines of every kind, `TABBARD_HOSTILE_REQUESTS` of them (default 200,000;
    /// docs/ROBUSTNESS.md reports 1,000,000 against a release build), with connections
    /// churned every 5,000: the daemon's RSS after them is within 4 MiB of its RSS after a
    /// 20,000-line warm-up (and within 8 MiB of its RSS at start).
    @Test func hostileRequestsKeepMemoryFlat() throws {
        let total = Int(ProcessInfo.processInfo.environment["TABBARD_HOSTILE_REQUESTS"] ?? "") ?? 200_000
        let d = try startDaemon()
        defer { #expect(d.stop() == 0) }
        let pid = d.process.processIdentifier
        var c = try RawClient(path: d.socket)
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let long = #"{"id":1,"method":"ping","params":{"x":""# + String(repeating: "y", count: 70_000) + #""}}"#
        /// Line k of the hostile stream and whether it gets a reply.
        func hostile(_ k: Int) -> (String, Bool) {
            switch k % 24 {
            case 0: return (#"{"id":\#(k),"method":"tab.select","params":{"tab":"x\#(k)"}}"#, true)
            case 1: return ("not json \(k)", true)
            case 2: return (#"{"id":"\#(k)","method":"m\#(k)"}"#, true)
            case 3: return (#"{"id":\#(k),"id":\#(k),"method":"ping"}"#, true)
            case 4: return (#"{"id":\#(k),"method":"feedback.set","params":{"volume":NaN}}"#, true)
            case 5: return (#"{"id":\#(k),"method":"badge.set","params":{"tab":"chat","text":"\#(String(repeating: "z", count: 300))"}}"#, true)
            case 6: return (#"{"method":"tab.select","params":{"tab":\#(k)}}"#, false)
            case 7: return ("[\(k)]", true)
            case 8: return (#"{"id":\#(k),"method":"tab.select","params":{"index":-\#(k)}}"#, true)
            case 9: return (#"{"id":\#(k),"method":"ping","params":{"u\#(k)":1}}"#, true)
            case 10: return (#"{"id":\#(k),"method":"tab.select","params":{"tab":"chat","if_seq":\#(k)}}"#, true)
            case 11: return (#"{"id":\#(k),"method":"sound.play","params":{"name":"s\#(k)"}}"#, true)
            case 12: return (#"{"jsonrpc":"1.0","id":\#(k),"method":"ping"}"#, true)
            case 13: return (#"{"id":{"k":\#(k)},"method":"ping"}"#, true)
            case 14: return (#"{"id":\#(k),"method":"bar.configure","params":{"items":[{"id":"a"},{"id":"a"}]}}"#, true)
            case 15: return (#"{"id":"\#(String(repeating: "i", count: 200))\#(k)","method":"ping"}"#, true)
            case 16: return (#"{"id":\#(k),"method":"tab.select","params":{"tab":"ch\u0000at"}}"#, true)
            case 17: return (#"{"id":\#(k),"method":"touch","params":{"phase":"up","x":1e400,"y":0}}"#, true)
            case 18: return (#"{"id":\#(k),"method":"animation.end","params":{"animation":\#(k)}}"#, true)
            case 19: return ("{\"id\":\(k),\"method\":\"p\u{FFFD}ng\"}", true)
            case 20: return (k % 5000 == 20 ? deep : #"{"id":\#(k)}"#, true)
            case 21: return (k % 20_000 == 21 ? long : #"{"id":\#(k),"method":"ping"} ,"#, true)
            case 22: return ("", false)
            default: return (#"{"id":\#(k),"method":"state.get","params":{"extra":true}}"#, true)
            }
        }
        func run(_ range: Range<Int>) throws {
            var k = range.lowerBound
            while k < range.upperBound {
                if k % 5000 == 0 {
                    c.close()
                    c = try RawClient(path: d.socket)
                }
                let end = min(range.upperBound, k + 1000, (k / 5000 + 1) * 5000)
                var batch: [UInt8] = []
                var replies = 0
                for j in k..<end {
                    let (line, replied) = hostile(j)
                    batch += Array(line.utf8)
                    batch.append(0x0A)
                    if replied { replies += 1 }
                }
                try c.sendBytes(batch)
                for _ in 0..<replies {
                    guard try c.readLine() != nil else { throw TestFailure("EOF at line \(k)") }
                }
                k = end
            }
        }
        let start = residentKB(pid)
        try run(0..<20_000)
        let warm = residentKB(pid)
        try run(20_000..<(20_000 + total))
        let after = residentKB(pid)
        #expect(try c.call("ping")["result"] == .obj([:]))
        #expect(after - warm < 4096, "RSS \(warm) KiB after warm-up, \(after) KiB after \(total) hostile lines")
        #expect(after - start < 8192, "RSS \(start) KiB at start, \(after) KiB after \(total) hostile lines")
        print("RSS at start \(start) KiB, after warm-up \(warm) KiB, after \(total) hostile lines \(after) KiB")
    }
}
