import Foundation
import Glibc
import Testing
import TabBarCore

/// tabbard under `systemd-socket-activate` (systemd's socket activation without systemd as
/// PID 1), with a notify socket of the test's own standing in for the service manager.
///
/// Every wait is bounded; timing is asserted as counts and order over a measured window.
@Suite(.serialized) struct SystemdTests {
    @Test func notStartedBeforeTheFirstConnectionThenAnswersItAndSaysReady() throws {
        let d = try ActivatedDaemon()
        defer { d.cleanUp() }
        try d.waitForSocketFile()

        // Listening, but tabbard has not been executed: the pid is still systemd-socket-activate
        // (and nothing reaches the notify socket before it: READY=1, below, is its first message).
        #expect(d.comm() == "systemd-socket-")
        #expect(d.exe().hasSuffix("/systemd-socket-activate"))
        #expect(ActivatedDaemon.children(of: d.pid).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: d.state), "no state written before activation")

        // The first connection starts it (same pid: it execs) and is answered.
        let c = try d.connect()
        #expect(c.hello?["params"]?["server"] == .string("tabbard"))
        let ready = try d.notify.wait(timeout: 10) { $0.fields["READY"] == "1" }
        #expect(d.comm() == "tabbard")
        #expect(d.notify.messages.first?.fields["READY"] == "1", "READY=1 is the first message: \(d.notify.texts)")
        let status = try #require(ready.fields["STATUS"])
        // READY=1 comes with the socket; the sounds arrive as they load, and STATUS= says so.
        #expect(status.hasPrefix("Serving 0 clients (0 subscribed); "), "\(status)")
        #expect(try c.call("state.get")["result"]?["seq"] == .int(0))

        // STATUS= follows what changed (here: one client), rate-limited.
        let update = try d.notify.wait(timeout: 10) { $0.fields["STATUS"]?.hasPrefix("Serving 1 client (0 subscribed); 6 sounds, audio null ok") == true }
        #expect(update.fields["READY"] == nil)
        // No WATCHDOG_USEC: no pings.
        #expect(!d.notify.texts.contains { $0.contains("WATCHDOG=1") })
        #expect(d.notify.messages.filter { $0.fields["READY"] != nil }.count == 1)

        #expect(d.stop() == 0)
    }

    @Test func watchdogPingsAtHalfWATCHDOG_USEC() throws {
        let intervalS = 0.1
        let d = try ActivatedDaemon(watchdogUsec: UInt64(intervalS * 2 * 1_000_000))
        defer { d.cleanUp() }
        try d.waitForSocketFile()
        let c = try d.connect()
        _ = try d.notify.wait(timeout: 10) { $0.fields["READY"] == "1" }
        let readyIndex = d.notify.messages.firstIndex { $0.fields["READY"] == "1" } ?? -1
        #expect(readyIndex == 0, "nothing before READY=1: \(d.notify.texts)")

        // Count pings over a measured window (with traffic, so the loop is not just idling).
        let t0 = ActivatedDaemon.now()
        var events: [JSON] = []
        while ActivatedDaemon.now() - t0 < 2.0 {
            _ = try c.call("tab.select", #"{"tab":"chat"}"#, events: &events)
            d.notify.collect(timeout: 0.05)
        }
        let t1 = ActivatedDaemon.now()
        d.notify.collect(timeout: 0)
        let pings = d.notify.messages.filter { $0.text == "WATCHDOG=1" && $0.at >= t0 && $0.at <= t1 }.count
        let expected = (t1 - t0) / intervalS
        // Never faster than the interval; a busy 2-core machine may delay some pings.
        #expect(Double(pings) <= expected + 2, "\(pings) pings in \(t1 - t0) s at \(intervalS) s")
        #expect(Double(pings) >= expected * 0.4, "\(pings) pings in \(t1 - t0) s at \(intervalS) s")
        #expect(d.stop() == 0)
    }

    @Test func sighupReloadsSoundsAndKeepsClientsAndState() throws {
        let d = try ActivatedDaemon()
        defer { d.cleanUp() }
        try d.waitForSocketFile()
        let sub = try d.connect()
        _ = try sub.call("subscribe")
        let writer = try d.connect()
        _ = try writer.call("tab.select", #"{"tab":"chat"}"#)
        _ = try writer.call("badge.set", #"{"tab":"me","count":3}"#)
        for _ in 0..<2 { _ = try #require(try sub.readJSON()) }
        let before = try writer.call("state.get")["result"]
        _ = try d.notify.wait(timeout: 10) { $0.fields["READY"] == "1" }

        // A reload takes the loop ~0.06 s of CPU (debug build). Under load that CPU comes
        // late — the wall time is mostly spent runnable, waiting for a core — so the wait is
        // for the event with a deadline that only a stuck daemon misses, and a failure says
        // which it was: CPU used and time spent waiting for a CPU meanwhile, and its state.
        let sched0 = d.scheduling()
        let t0 = ActivatedDaemon.now()
        kill(d.pid, SIGHUP)
        func waitFor(_ what: String, _ match: (NotifySocket.Message) -> Bool) throws -> NotifySocket.Message {
            do { return try d.notify.wait(timeout: 60, match) } catch {
                let now = d.scheduling()
                throw TestFailure("\(what): \(error); meanwhile the daemon used \(now.cpu - sched0.cpu) s of CPU and waited \(now.waited - sched0.waited) s for one; state \(now.state)")
            }
        }
        let reloading = try waitFor("RELOADING=1 after SIGHUP") { $0.fields["RELOADING"] == "1" }
        let readyAgain = try waitFor("READY=1 after the reload") { $0.fields["READY"] == "1" }
        let after = d.scheduling()
        print("SIGHUP → READY=1: \(String(format: "%.2f", readyAgain.at - t0)) s; the daemon's loop used \(String(format: "%.3f", after.cpu - sched0.cpu)) s of CPU and waited \(String(format: "%.3f", after.waited - sched0.waited)) s for one")
        #expect(reloading.at <= readyAgain.at)
        let monotonic = try #require(reloading.fields["MONOTONIC_USEC"].flatMap { UInt64($0) })
        #expect(monotonic > 0)
        #expect(readyAgain.fields["STATUS"]?.contains("6 sounds") == true)

        // Same connections, same state, subscription still live.
        #expect(try sub.call("ping")["result"] == .obj([:]))
        #expect(try writer.call("state.get")["result"] == before)
        guard case .array(let sounds)? = try writer.call("sound.list")["result"]?["sounds"] else {
            Issue.record("no sound list")
            return
        }
        #expect(sounds.count == 6)
        _ = try writer.call("tab.select", #"{"tab":"nearby"}"#)
        let event = try #require(try sub.readJSON())
        #expect(event["method"] == .string("tab.selected"))
        #expect(event["params"]?["seq"] == .int(3))
        #expect(d.stop() == 0)
        #expect(d.stderr().contains("Sounds reloaded"))
    }

    @Test func sigtermSaysStoppingTellsSubscribersSavesStateAndLeavesTheInheritedSocket() throws {
        let d = try ActivatedDaemon()
        defer { d.cleanUp() }
        try d.waitForSocketFile()
        let sub = try d.connect()
        _ = try sub.call("subscribe")
        _ = try sub.call("badge.set", #"{"tab":"chat","count":7}"#)
        let before = try sub.call("state.get")["result"]
        _ = try d.notify.wait(timeout: 10) { $0.fields["READY"] == "1" }

        kill(d.pid, SIGTERM)
        _ = try d.notify.wait(timeout: 10) { $0.fields["STOPPING"] == "1" }
        var methods: [String] = []
        while let m = try sub.readJSON() { methods.append(m["method"]?.stringValue ?? "reply") }
        #expect(methods.last == "server.stopping", "\(methods)")
        #expect(d.waitForExit(timeout: 10) == 0)
        d.notify.collect(timeout: 0)
        #expect(d.notify.messages.last?.fields["STOPPING"] == "1", "STOPPING=1 is the last word: \(d.notify.texts)")

        // The socket belongs to the activator (systemd): tabbard closed it but did not unlink it.
        var st = stat()
        #expect(lstat(d.socket, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK)

        // The state was flushed; a self-bound daemon replaces the stale socket file, serves the
        // same state, and (its own socket) unlinks it when it stops.
        let again = try Daemon(dir: d.dir)
        let after = try RawClient(path: again.socket).call("state.get")["result"]
        #expect(after == before)
        #expect(again.stop() == 0)
        #expect(lstat(again.socket, &st) != 0)
    }

    @Test func statusUpdatesAreRateLimitedNotPerRequest() throws {
        let d = try ActivatedDaemon()
        defer { d.cleanUp() }
        try d.waitForSocketFile()
        let keep = try d.connect()
        _ = try d.notify.wait(timeout: 10) { $0.fields["READY"] == "1" }
        let t0 = ActivatedDaemon.now()
        for k in 0..<30 {
            let c = try d.connect()
            _ = try c.call("badge.set", #"{"tab":"chat","count":\#(k)}"#)
            for _ in 0..<5 { _ = try keep.call("ping") }
            c.close()
            _ = try keep.call("ping")
        }
        let burstEnd = ActivatedDaemon.now()
        // The update held back by the rate limit arrives (within a second or so): read until
        // the latest STATUS= says how things are now.
        let caughtUp = d.notify.readUntil(timeout: 10) {
            $0.last { $0.fields["STATUS"] != nil }?.fields["STATUS"]?.hasPrefix("Serving 1 client ") == true
        }
        #expect(caughtUp, "no STATUS= of one client after the burst: \(d.notify.texts)")
        let statuses = d.notify.messages.filter { $0.at > t0 && $0.fields["STATUS"] != nil }
        let window = (statuses.last?.at ?? burstEnd) - t0
        // 30 connections and 180 requests: at most one update per second (+1 for the edges),
        // and the last one says how things are now.
        #expect(!statuses.isEmpty)
        #expect(Double(statuses.count) <= window.rounded(.up) + 1, "\(statuses.count) STATUS= in \(window) s: \(d.notify.texts)")
        #expect(statuses.last?.fields["STATUS"]?.hasPrefix("Serving 1 client ") == true, "\(d.notify.texts)")
        #expect(d.stop() == 0)
    }

    @Test func aDatagramSocketFromTheActivatorIsRefused() throws {
        let d = try ActivatedDaemon(activatorArgs: ["--datagram"])
        defer { d.cleanUp() }
        try d.waitForSocketFile()
        // A datagram wakes the activator, which execs tabbard on the datagram socket.
        let s = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(s) }
        var addr = ActivatedDaemon.address(d.socket)
        let sent = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(s, "x", 1, 0, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(sent == 1)
        #expect(d.waitForExit(timeout: 10) == 1)
        #expect(d.stderr().contains("is not a listening AF_UNIX stream socket"))
        #expect(!FileManager.default.fileExists(atPath: d.state), "refused before touching the state")
        #expect(d.notify.next(timeout: 0) == nil, "no READY=1")
    }

    @Test func LISTEN_PIDOfAnotherProcessIsIgnored() throws {
        // As if inherited from a parent that was socket-activated: not ours, so bind --socket.
        let d = try Daemon(environment: ["LISTEN_PID": "1", "LISTEN_FDS": "1", "LISTEN_FDNAMES": "tabbard.socket"])
        _ = try RawClient(path: d.socket).call("ping")
        #expect(d.stop() == 0)
        #expect(!d.readStderr().contains("passed by systemd"))
    }
}

/// Who may connect: with socket activation the socket file's permissions (the system unit's
/// root:tabbard 0660); on a socket tabbard bound itself, also its peer-credential check.
@Suite(.serialized, .enabled(if: getuid() == 0, "needs root to connect as another user"))
struct SocketAccessTests {
    /// Runs `tabbarctl --socket SOCK ping` as uid/gid 1000 (via setpriv, from util-linux);
    /// returns its exit status and stderr.
    static func pingAsAnotherUser(_ socket: String, dir: String) throws -> (Int32, String) {
        let errFile = dir + "/ping.err"
        let command = "/usr/bin/setpriv --reuid=1000 --regid=1000 --clear-groups '\(Paths.tabbarctl)' --timeout 5000 --socket '\(socket)' ping >/dev/null 2>'\(errFile)'"
        let status = system(command)
        let text = (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? ""
        guard status != -1, status & 0x7f == 0 else { throw TestFailure("\(command): wait status \(status)") }
        return ((status >> 8) & 0xff, text)
    }

    @Test func anInheritedSocketsPermissionsDecide() throws {
        let d = try ActivatedDaemon()
        defer { d.cleanUp() }
        try d.waitForSocketFile()
        chmod(d.dir, 0o755)
        chmod(d.socket, 0o666)  // as SocketMode= would make it
        _ = try d.connect()     // activate (as root)
        _ = try d.notify.wait(timeout: 10) { $0.fields["READY"] == "1" }
        let (status, err) = try SocketAccessTests.pingAsAnotherUser(d.socket, dir: d.dir)
        #expect(status == 0, "\(err)")
        #expect(d.stop() == 0)
    }

    @Test func aSelfBoundSocketAlsoChecksThePeer() throws {
        let d = try Daemon()
        chmod(d.dir, 0o755)
        chmod(d.socket, 0o666)
        let (status, err) = try SocketAccessTests.pingAsAnotherUser(d.socket, dir: d.dir)
        #expect(status == 2)
        #expect(err.contains("permission_denied"), "\(err)")
        #expect(d.stop() == 0)
    }
}
