import Glibc
import Synchronization
import Testing
import TabBarCore
@testable import TabBarClient

/// `TabBar` against a fake daemon (`FakeListener`): the hello, the handshake's failures,
/// what goes on the wire and what comes back in `messages()`.
@Suite struct ConnectionTests {
    /// Connects to a fake daemon that says `first` (the hello unless given) and then runs `peer`.
    func withPeer(first: String = FakePeer.hello, options: TabBar.Options = .init(timeout: .seconds(5)),
                  _ peer: @escaping (FakePeer) -> Void) async throws -> (TabBar, TestThread) {
        let listener = FakeListener()
        let thread = TestThread {
            let p = listener.accept()
            if !first.isEmpty { p.send(first) }
            peer(p)
            p.close()
        }
        do {
            return (try await TabBar.connect(path: listener.path, options: options), thread)
        } catch {
            thread.join()
            throw error
        }
    }

    @Test func keepsTheHello() async throws {
        let (bar, thread) = try await withPeer { _ in }
        #expect(bar.hello.server == "tabbard" && bar.hello.version == "9.9.9")
        #expect(bar.hello.protocolVersion == "1" && bar.hello.maxLine == 65536)
        thread.join()
    }

    @Test func refusalBeforeTheHelloIsAnRPCError() async throws {
        let refusal = #"{"jsonrpc":"2.0","id":null,"error":{"code":-32006,"message":"Too many clients.","data":{"kind":"limit_exceeded"}}}"#
        await #expect(throws: ClientError.rpc(code: -32006, kind: "limit_exceeded", message: "Too many clients.", data: ["kind": "limit_exceeded"])) {
            _ = try await withPeer(first: refusal) { _ in }
        }
    }

    @Test func somethingElseThanHelloIsAProtocolViolation() async throws {
        do {
            _ = try await withPeer(first: #"{"jsonrpc":"2.0","method":"tab.selected","params":{}}"#) { _ in }
            Issue.record("connected")
        } catch ClientError.protocolViolation {}
    }

    @Test func noHelloInTimeIsATimeout() async throws {
        await #expect(throws: ClientError.timeout) {
            _ = try await withPeer(first: "", options: .init(timeout: .milliseconds(30))) { p in _ = p.readLine() }
        }
    }

    /// A reply split across writes, a final line without a newline; once closed, requests throw.
    @Test func callsByPathAndLinesSplitAcrossWrites() async throws {
        let (bar, thread) = try await withPeer { p in
            let r = p.readRequest()
            let line = Array(#"{"jsonrpc":"2.0","id":\#(r?["id"]?.text ?? "null"),"result":{"seq":3,"state":{"items":[]}}}"#.utf8)
            p.sendBytes(Array(line[..<10]))
            usleep(20_000)
            p.sendBytes(Array(line[10...]))
        }
        #expect(try await bar.call("state.get")["seq"]?.intValue == 3)
        thread.join()
        await #expect(throws: ClientError.closed) { try await bar.ping() }
    }

    /// Replies find their callers by id in whatever order they come: here the requests are
    /// answered last first, the first one with an error, all in one write.
    @Test func repliesInAnyOrderFindTheirCallers() async throws {
        let (bar, thread) = try await withPeer { p in
            // (By the number each carries: the tasks may send them in any order.)
            let requests = (0..<4).map { _ in p.readRequest() }.sorted { ($0?["params"]?["n"]?.intValue ?? 0) < ($1?["params"]?["n"]?.intValue ?? 0) }
            var lines = ""
            for r in requests.reversed() {
                let id = r?["id"]?.text ?? "null", n = r?["params"]?["n"]?.text ?? "null"
                lines += n == "0"
                    ? #"{"jsonrpc":"2.0","id":\#(id),"error":{"code":-32602,"message":"no","data":{"kind":"invalid_params"}}}"# + "\n"
                    : #"{"jsonrpc":"2.0","id":\#(id),"result":{"n":\#(n)}}"# + "\n"
            }
            p.sendBytes(Array(lines.utf8))
        }
        let answers = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
            for k in 0..<4 {
                group.addTask {
                    do { return (k, try await bar.call("echo", ["n": .int(k)])["n"]?.intValue) } catch { return (k, nil) }
                }
            }
            var answers: [Int: Int?] = [:]
            for try await (k, n) in group { answers[k] = n }
            return answers
        }
        #expect(answers == [0: nil, 1: 1, 2: 2, 3: 3])
        thread.join()
    }

    /// `notify` and `sendRaw` write one line each; a reply no request waits for (to a raw
    /// line, or one that came after its caller gave up) goes to `messages()`, or nowhere.
    @Test func rawLinesAndLateReplies() async throws {
        let (bar, thread) = try await withPeer(options: .init(timeout: .milliseconds(100))) { p in
            let late = p.readRequest()
            #expect(p.readLine() == #"{"jsonrpc":"2.0","method":"log","params":{"a":1}}"#)
            #expect(p.readLine() == #"{"jsonrpc":"2.0","id":"x","method":"ping"}"#)
            usleep(300_000)
            p.reply(to: late, result: "{}")  // (too late: dropped)
            p.send(#"{"jsonrpc":"2.0","id":"x","result":{}}"#)
            p.reply(to: p.readRequest(), result: #"{"pong":true}"#)
        }
        let lines = bar.messages()
        let timedOut = Task { try await bar.call("ping") }
        try await Task.sleep(for: .milliseconds(20))
        try bar.notify("log", ["a": 1])
        try bar.sendRaw(#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#)
        await #expect(throws: ClientError.timeout) { _ = try await timedOut.value }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await bar.call("ping", nil) == ["pong": true])
        var it = lines.makeAsyncIterator()
        let raw = try await it.next()
        #expect(raw?.text == #"{"jsonrpc":"2.0","id":"x","result":{}}"#)
        await #expect(throws: ClientError.closed) { _ = try await it.next() }
        thread.join()
    }

    /// `sendBlocking` passes bytes on as they are (pieces of lines, no newline added) and
    /// returns only once at most 64 KiB wait: a daemon that reads slowly slows the sender.
    @Test func sendBlockingWaitsForTheDaemonToRead() async throws {
        let piece = 64 << 10, pieces = 128
        let received = Atomic<Int>(0)
        let (bar, thread) = try await withPeer { p in
            var chunk = [UInt8](repeating: 0, count: piece)
            var total = 0
            var last: UInt8 = 0
            while total < piece * pieces {
                let n = chunk.withUnsafeMutableBytes { Glibc.read(p.fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                last = chunk[n - 1]
                total += n
                received.store(total, ordering: .releasing)
                usleep(500)  // (a slow reader: the bound below holds at any pace)
            }
            #expect(total == piece * pieces && last == UInt8(ascii: "x"))
        }
        // A socket holds a few hundred KiB; without the wait all 8 MiB would be queued at once.
        var mostAhead = 0
        for k in 1...pieces {
            try bar.sendBlocking([UInt8](repeating: UInt8(ascii: "x"), count: piece))
            mostAhead = max(mostAhead, k * piece - received.load(ordering: .acquiring))
        }
        thread.join()
        #expect(mostAhead <= (1 << 20) + piece, "\(mostAhead) bytes were sent and not yet read")
    }

    @Test func aMissingSocketSaysWhatToDo() async {
        await #expect(throws: ClientError.connect(path: "/nonexistent-dir/tabbard/socket", reason: "No such file or directory — is tabbard running? start it (`systemctl --user start tabbard.socket`) or pass --socket")) {
            _ = try await TabBar.connect(path: "/nonexistent-dir/tabbard/socket")
        }
    }

    @Test func aTooLongPathIsRefusedBeforeConnecting() async {
        let path = "/tmp/" + String(repeating: "x", count: 200)
        do {
            _ = try await TabBar.connect(path: path)
            Issue.record("connected")
        } catch ClientError.connect(let p, let reason) {
            #expect(p == path)
            #expect(reason.contains("at most 107"))
        } catch {
            Issue.record("expected .connect, got \(error)")
        }
    }

    @Test func requestLinesAreCompactJSONRPC() {
        let line = Wire.requestLine(id: 4, method: "touch", params: .obj(["x": .double(1.5)]))
        #expect(String(decoding: line, as: UTF8.self) == #"{"jsonrpc":"2.0","id":4,"method":"touch","params":{"x":1.5}}"# + "\n")
    }
}

@Suite struct SocketPathTests {
    static func env(_ values: [String: String]) -> (String) -> String? { { values[$0] } }

    @Test func explicitWins() {
        let path = SocketPath.resolve(explicit: "/a/sock", environment: Self.env(["TABBARD_SOCKET": "/b", "XDG_RUNTIME_DIR": "/run/user/5"]), uid: 5)
        #expect(path == "/a/sock")
    }

    @Test func environmentVariableComesNext() {
        #expect(SocketPath.resolve(explicit: nil, environment: Self.env(["TABBARD_SOCKET": "/b", "XDG_RUNTIME_DIR": "/run/user/5"]), uid: 5) == "/b")
        #expect(SocketPath.resolve(explicit: "", environment: Self.env(["TABBARD_SOCKET": "/b"]), uid: 0) == "/b")
    }

    @Test func thenTheRuntimeDirectory() {
        #expect(SocketPath.resolve(explicit: nil, environment: Self.env(["XDG_RUNTIME_DIR": "/run/user/0"]), uid: 0) == "/run/user/0/tabbard/socket")
        #expect(SocketPath.resolve(explicit: nil, environment: Self.env(["TABBARD_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/7/"]), uid: 7) == "/run/user/7/tabbard/socket")
    }

    @Test func thenTheSystemSocketForRoot() {
        #expect(SocketPath.resolve(explicit: nil, environment: Self.env([:]), uid: 0) == "/run/tabbard/socket")
        #expect(SocketPath.resolve(explicit: nil, environment: Self.env(["XDG_RUNTIME_DIR": ""]), uid: 0) == "/run/tabbard/socket")
        #expect(SocketPath.resolve(explicit: nil, environment: Self.env(["XDG_RUNTIME_DIR": "relative"]), uid: 0) == "/run/tabbard/socket")
    }

    @Test func otherUsersWithoutRuntimeDirectoryGetTheDaemonsFallback() {
        #expect(SocketPath.resolve(explicit: nil, environment: Self.env([:]), uid: 1000) == "/tmp/tabbard-1000/socket")
    }
}
