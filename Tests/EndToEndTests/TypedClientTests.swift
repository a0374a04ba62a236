import Foundation
import Glibc
import Testing
import TabBarClient

/// The typed async client (`TabBar`, docs/CLIENT.md) against the real daemon.
@Suite(.timeLimit(.minutes(1))) struct TypedClientTests {
    static let twoTabs: JSON = ["items": [["id": "home", "title": "Home"], ["id": "chat", "title": "Chat"]], "selected": "home"]

    /// The next event of `it`, failing the test when the stream ends.
    func next(_ it: inout AsyncThrowingStream<TabBarEvent, any Error>.AsyncIterator) async throws -> TabBarEvent {
        guard let e = try await it.next() else { throw TestFailure("the event stream ended") }
        return e
    }

    @Test func selectBadgeTouchAndTheirEvents() async throws {
        let d = try Daemon()
        let bar = try await TabBar.connect(path: d.socket)
        #expect(bar.hello.server == "tabbard")
        #expect(bar.hello.features.contains("tab.select"))
        let configured = try await bar.configure(Self.twoTabs)
        #expect(configured.state.items.map(\.id) == ["home", "chat"])
        #expect(configured.state.selected == "home")

        var events = bar.events(topics: [.tab, .badge]).makeAsyncIterator()
        guard case .subscribed(let snapshot) = try await next(&events) else { throw TestFailure("no snapshot first") }
        #expect(snapshot.seq == configured.seq)

        let selection = try await bar.select(.id("chat"))
        #expect(selection == Selection(seq: configured.seq + 1, selected: "chat", previous: "home", reselected: false))
        #expect(try await next(&events) == .tabSelected(seq: selection.seq, tab: "chat", previous: "home", source: .user))

        let badge = try await bar.setBadge(.count(120), on: "chat")
        #expect(badge.badge == .count(120))
        #expect(try await next(&events) == .badgeChanged(seq: badge.seq, tab: "chat", badge: .count(120), hiddenBadge: nil))
        #expect(try await bar.state().state.item("chat")?.badge?.display() == "99+")
        let hidden = try await bar.hideBadge(true, on: "chat")
        #expect(hidden.seq == badge.seq + 1 && !hidden.ignored)
        #expect(try await bar.hideBadge(false, on: "chat").badge == .count(120))
        #expect(try await bar.setFeedback(profile: .quiet, volume: 0.5) == Feedback(profile: .quiet, volume: 0.5))
        #expect(try await bar.setFeedback(profile: .full) == Feedback(profile: .full, volume: 0.5))
        #expect(try await bar.playSound("click") >= 0)
        await #expect(throws: ClientError.self) { try await bar.playSound("no-such-sound") }

        // A tap on the first tab's middle: the daemon hit-tests and commits on up.
        let width = try await bar.state().state.layout.width
        let down = try await bar.touch(.down, x: width / 4, y: 10, touchID: 1)
        #expect(down.target == "home" && down.consumed)
        let up = try await bar.touch(.up, x: width / 4, y: 10, touchID: 1)
        #expect(up.commit == .select)
        var sawSelect = false
        while !sawSelect {
            if case .tabSelected(_, "home", "chat", .user) = try await next(&events) { sawSelect = true }
        }
        bar.close()
        #expect(d.stop() == 0)
    }

    @Test func anErrorReplyIsTyped() async throws {
        let d = try Daemon()
        let bar = try await TabBar.connect(path: d.socket)
        try await bar.configure(Self.twoTabs)
        do {
            try await bar.select(.id("nope"))
            Issue.record("selecting an unknown tab succeeded")
        } catch let ClientError.rpc(code, kind, _, _) {
            #expect(kind == "unknown_tab")
            #expect(code != 0)
        }
        await #expect(throws: ClientError.rpc(code: -32602, kind: "invalid_params",
                                             message: "There is no topic \"tabs\"; topics are event names (such as \"badge.changed\") or their first part: "
                                                 + Topics.prefixes.joined(separator: ", ") + ".",
                                             data: ["kind": "invalid_params", "field": "topics[0]"])) {
            for try await _ in bar.events(topics: ["tabs"]) {}
        }
        // The raw call for what the types do not cover.
        #expect(try await bar.call("clock.get")["mode"] == "real")
    }

    /// Requests from many tasks at once each get their own reply.
    @Test func concurrentRequestsFromManyTasks() async throws {
        let d = try Daemon()
        let bar = try await TabBar.connect(path: d.socket)
        try await bar.configure(Self.twoTabs)
        let seqs = try await withThrowingTaskGroup(of: UInt64.self) { group in
            for k in 0..<200 {
                group.addTask { try await bar.select(.index(k % 2), source: .program).seq }
            }
            return try await group.reduce(into: [UInt64]()) { $0.append($1) }
        }
        #expect(Set(seqs).count == 200)
        #expect(try await bar.state().seq == seqs.max())
    }

    /// Tasks that prefer the connection's executor run there (many in flight, their requests
    /// coalesced into few sends), cancel as others do, and still finish once it is closed.
    @Test func onTheConnectionsExecutor() async throws {
        let d = try Daemon()
        let bar = try await TabBar.connect(path: d.socket, options: .init(timeout: nil))
        try await bar.configure(Self.twoTabs)
        let seqs = try await withThrowingTaskGroup(of: UInt64.self) { group in
            for k in 0..<500 {
                group.addTask(executorPreference: bar.executor) { try await bar.select(.index(k % 2), source: .program).seq }
            }
            return try await group.reduce(into: [UInt64]()) { $0.append($1) }
        }
        #expect(Set(seqs).count == 500)
        try await withTaskExecutorPreference(bar.executor) {
            #expect(try await bar.state().seq == seqs.max())
            kill(d.process.processIdentifier, SIGSTOP)
            defer { kill(d.process.processIdentifier, SIGCONT) }
            let task = Task(executorPreference: bar.executor) { try await bar.call("ping") }
            try await Task.sleep(for: .milliseconds(50))
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
        bar.close()
        let after = Task(executorPreference: bar.executor) { try await bar.ping() }
        await #expect(throws: ClientError.closed) { try await after.value }
    }

    /// `messages()`: every line no request waits for, with its text as the daemon wrote it;
    /// `sendRaw` lines' replies come there too; after `closeWrite` they still arrive.
    @Test func rawLines() async throws {
        let d = try Daemon()
        let bar = try await TabBar.connect(path: d.socket)
        try await bar.configure(Self.twoTabs)
        var lines = bar.messages().makeAsyncIterator()
        _ = try await bar.call("subscribe", ["topics": ["tab"]])
        try await bar.select(.id("chat"))
        let event = try #require(try await lines.next())
        #expect(event.json["method"]?.stringValue == "tab.selected")
        #expect(event.text.contains(#""method":"tab.selected""#))
        #expect(try JSON.parse(event.text) == event.json)
        try bar.sendRaw(#"{"jsonrpc":"2.0","id":"mine","method":"ping"}"#)
        try bar.sendRaw("not json")
        bar.closeWrite()
        let pong = try #require(try await lines.next())
        #expect(pong.json["id"]?.stringValue == "mine" && pong.json["result"] != nil)
        let refused = try #require(try await lines.next())
        #expect(refused.json["id"] == .null && refused.json["error"]?["data"]?["kind"]?.stringValue == "parse_error")
        await #expect(throws: ClientError.closed) { while try await lines.next() != nil {} }
    }

    /// A daemon that does not answer (stopped with SIGSTOP): a cancelled request throws
    /// CancellationError at once, one with a timeout ClientError.timeout; the connection
    /// still works once the daemon goes on.
    @Test func cancellationAndTimeout() async throws {
        let d = try Daemon()
        // (No timeout on the one that is cancelled: only the cancel can end its request, however
        // late the test's own task runs on a loaded machine.)
        let bar = try await TabBar.connect(path: d.socket, options: .init(timeout: nil))
        let impatient = try await TabBar.connect(path: d.socket, options: .init(timeout: .milliseconds(300)))
        try await bar.configure(Self.twoTabs)
        kill(d.process.processIdentifier, SIGSTOP)
        defer { kill(d.process.processIdentifier, SIGCONT) }
        let task = Task { try await bar.call("ping") }
        try await Task.sleep(for: .milliseconds(50))  // (mostly sent by then; before or after, a cancel ends it)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        await #expect(throws: ClientError.timeout) { try await impatient.ping() }
        kill(d.process.processIdentifier, SIGCONT)
        #expect(try await bar.select(.id("chat")).selected == "chat")
        #expect(try await impatient.select(.id("home")).selected == "home")
    }

    /// The daemon stops: requests throw ClientError.closed and the stream ends with it.
    @Test func aLostConnectionIsATypedError() async throws {
        let d = try Daemon()
        let bar = try await TabBar.connect(path: d.socket)
        try await bar.configure(Self.twoTabs)
        var events = bar.events().makeAsyncIterator()
        guard case .subscribed = try await next(&events) else { throw TestFailure("no snapshot first") }
        #expect(d.stop() == 0)
        #expect(try await next(&events) == .serverStopping)
        await #expect(throws: ClientError.closed) { _ = try await events.next() }
        await #expect(throws: ClientError.closed) { try await bar.ping() }
        #expect(!bar.isConnected)
    }

    /// With `reconnect`, the client connects to the restarted daemon by itself and the
    /// stream goes on with the state after the restart (the web client's rule).
    @Test func reconnectResyncs() async throws {
        let first = try Daemon()
        let bar = try await TabBar.connect(path: first.socket,
                                           options: .init(reconnect: true, minDelay: .milliseconds(20), maxDelay: .milliseconds(100)))
        try await bar.configure(Self.twoTabs)
        var events = bar.events(topics: [.tab]).makeAsyncIterator()
        guard case .subscribed = try await next(&events) else { throw TestFailure("no snapshot first") }
        #expect(first.stop() == 0)
        #expect(try await next(&events) == .serverStopping)
        // Changed while this client was away: another daemon on the same state and socket.
        let second = try Daemon(dir: first.dir)
        let other = try await TabBar.connect(path: second.socket)
        let changed = try await other.select(.id("chat"))
        guard case .resync(let snapshot, reconnected: true) = try await next(&events) else { throw TestFailure("no resync after the restart") }
        // The client may reconnect before or after that change: the snapshot is the state at
        // its reconnection, and a change after it comes as its event.
        #expect(snapshot.seq <= changed.seq)
        if snapshot.seq < changed.seq {
            #expect(snapshot.state.selected == "home")
            #expect(try await next(&events) == .tabSelected(seq: changed.seq, tab: "chat", previous: "home", source: .user))
        } else {
            #expect(snapshot.state.selected == "chat")
        }
        #expect(bar.isConnected)
        try await other.select(.id("home"))
        #expect(try await next(&events) == .tabSelected(seq: changed.seq + 1, tab: "home", previous: "chat", source: .user))
        bar.close()
        other.close()
        #expect(second.stop() == 0)
    }
}
