import Glibc
import Testing
import TabBarCore
@testable import TabBarClient

@Suite struct ConnectionTests {
    @Test func keepsTheHello() throws {
        let (client, server) = makeSocketPair()
        server.send(FakePeer.hello)
        let connection = try TabBarConnection(fileDescriptor: client)
        #expect(connection.hello["server"] == .string("tabbard"))
        #expect(connection.hello["protocol"]?.intValue == 1)
        #expect(connection.fileDescriptor == client)
        server.close()
    }

    @Test func eventsBeforeTheReplyAreQueuedInOrder() throws {
        let (client, server) = makeSocketPair()
        server.send(FakePeer.hello)
        let connection = try TabBarConnection(fileDescriptor: client)
        var seenRequest: JSON?
        let thread = TestThread {
            let request = server.readRequest()
            seenRequest = request
            server.send(#"{"jsonrpc":"2.0","method":"tab.selected","params":{"seq":7,"tab":"chat","previous":"home","source":"user"}}"#)
            server.send(#"{"jsonrpc":"2.0","method":"badge.changed","params":{"seq":8,"tab":"chat","badge":null}}"#)
            server.reply(to: request, result: #"{"seq":8}"#)
            server.send(#"{"jsonrpc":"2.0","method":"sound.played","params":{"voice":3,"name":"click"}}"#)
        }
        let result = try connection.call("badge.clear", .obj(["tab": .string("chat")]))
        #expect(result == .obj(["seq": .int(8)]))
        thread.join()
        #expect(seenRequest == .obj(["jsonrpc": .string("2.0"), "id": .int(1), "method": .string("badge.clear"),
                                     "params": .obj(["tab": .string("chat")])]))
        #expect(connection.hasBufferedMessages)
        #expect(try connection.nextMessage(timeoutMs: 1000)?["method"] == .string("tab.selected"))
        #expect(try connection.nextMessage(timeoutMs: 1000)?["method"] == .string("badge.changed"))
        let third = try connection.nextReceived(timeoutMs: 1000)
        #expect(third?.text == #"{"jsonrpc":"2.0","method":"sound.played","params":{"voice":3,"name":"click"}}"#)
        // Nothing more was sent: an immediate poll finds nothing, and the next message is the
        // one the server sends now.
        #expect(try connection.nextMessage(timeoutMs: 0) == nil)
        server.send(#"{"jsonrpc":"2.0","method":"marker","params":{}}"#)
        #expect(try connection.nextMessage(timeoutMs: 1000)?["method"] == .string("marker"))
        server.close()
        #expect(throws: ClientError.self) { try connection.nextMessage(timeoutMs: 1000) }
    }

    @Test func errorReplyThrowsRPCWithItsKind() throws {
        let (client, server) = makeSocketPair()
        server.send(FakePeer.hello)
        let connection = try TabBarConnection(fileDescriptor: client)
        let thread = TestThread {
            let request = server.readRequest()
            server.replyError(to: request, code: -32001, kind: "unknown_tab", message: "There is no item \\\"x\\\" in the bar.",
                              extra: #","tab":"x""#)
        }
        let error = #expect(throws: ClientError.self) { try connection.call("tab.select", .obj(["tab": .string("x")])) }
        thread.join()
        guard case .rpc(let code, let kind, let message, let data)? = error else {
            Issue.record("expected .rpc, got \(String(describing: error))")
            return
        }
        #expect(code == -32001)
        #expect(kind == "unknown_tab")
        #expect(message == "There is no item \"x\" in the bar.")
        #expect(data["tab"] == .string("x"))
        #expect(error?.description == "There is no item \"x\" in the bar. (unknown_tab)")
        server.close()
    }

    @Test func timeoutThrowsAndTheLateReplyIsDropped() throws {
        let (client, server) = makeSocketPair()
        server.send(FakePeer.hello)
        let connection = try TabBarConnection(fileDescriptor: client, timeoutMs: 100)
        // The test tells the fake daemon through a pipe when the first call has given up,
        // so that both replies are already there when the second call starts.
        var gaveUp: [Int32] = [-1, -1]
        #expect(pipe(&gaveUp) == 0)
        var second: JSON?
        let thread = TestThread {
            let first = server.readRequest()
            var byte: UInt8 = 0
            _ = read(gaveUp[0], &byte, 1)
            server.reply(to: first, result: #"{"late":true}"#)
            server.send(#"{"jsonrpc":"2.0","id":2,"result":{"second":true}}"#)
            second = server.readRequest()
        }
        let error = #expect(throws: ClientError.self) { try connection.call("ping") }
        if case .timeout? = error {} else { Issue.record("expected .timeout, got \(String(describing: error))") }
        var byte: UInt8 = 1
        _ = write(gaveUp[1], &byte, 1)
        #expect(try connection.call("ping") == .obj(["second": .bool(true)]))
        thread.join()
        #expect(second?["id"] == .int(2))
        #expect(try connection.nextMessage(timeoutMs: 0) == nil)
        close(gaveUp[0])
        close(gaveUp[1])
        server.close()
    }

    @Test func foreignRepliesAreQueuedNotLost() throws {
        let (client, server) = makeSocketPair()
        server.send(FakePeer.hello)
        let connection = try TabBarConnection(fileDescriptor: client)
        let thread = TestThread {
            let raw = server.readLine()
            let call = server.readRequest()
            server.send(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"The line is not valid JSON: x.","data":{"kind":"parse_error"}}}"#)
            server.reply(to: call, result: "{}")
            _ = raw
        }
        try connection.sendRaw("this is not json")
        #expect(try connection.call("ping") == .obj([:]))
        thread.join()
        let queued = try connection.nextMessage(timeoutMs: 0)
        #expect(queued?["error"]?["data"]?["kind"] == .string("parse_error"))
        server.close()
    }

    @Test func notifyAndSendRawWriteOneLineEach() throws {
        let (client, server) = makeSocketPair()
        server.send(FakePeer.hello)
        let connection = try TabBarConnection(fileDescriptor: client)
        try connection.notify("tab.select", .obj(["tab": .string("home")]))
        try connection.notify("ping")
        try connection.sendRaw(#"{"id":"a","method":"ping"}"#)
        try connection.sendRaw("{}\n")
        #expect(server.readLine() == #"{"jsonrpc":"2.0","method":"tab.select","params":{"tab":"home"}}"#)
        #expect(server.readLine() == #"{"jsonrpc":"2.0","method":"ping"}"#)
        #expect(server.readLine() == #"{"id":"a","method":"ping"}"#)
        #expect(server.readLine() == "{}")
        server.close()
    }

    @Test func linesSplitAcrossWritesAndAFinalLineWithoutNewline() throws {
        let (client, server) = makeSocketPair()
        let text = FakePeer.hello + "\r\n\n" + #"{"method":"a","params":{"seq":1}}"# + "\n" + #"{"method":"b","params":{}}"#
        let thread = TestThread {
            for byte in Array(text.utf8) { server.sendBytes([byte]) }
            server.close()
        }
        let connection = try TabBarConnection(fileDescriptor: client)
        #expect(connection.hello["version"] == .string("9.9.9"))
        #expect(try connection.nextMessage(timeoutMs: 5000)?["method"] == .string("a"))
        #expect(try connection.nextMessage(timeoutMs: 5000)?["method"] == .string("b"))
        thread.join()
        let error = #expect(throws: ClientError.self) { try connection.nextMessage(timeoutMs: 5000) }
        if case .closed? = error {} else { Issue.record("expected .closed, got \(String(describing: error))") }
        #expect(throws: ClientError.self) { try connection.call("ping") }
    }

    @Test func garbageFromTheDaemonIsAProtocolViolationButTheConnectionGoesOn() throws {
        let (client, server) = makeSocketPair()
        server.send(FakePeer.hello)
        server.send("not json")
        server.send(#"{"method":"after"}"#)
        let connection = try TabBarConnection(fileDescriptor: client)
        let error = #expect(throws: ClientError.self) { try connection.nextMessage(timeoutMs: 1000) }
        if case .protocolViolation? = error {} else { Issue.record("expected .protocolViolation, got \(String(describing: error))") }
        #expect(try connection.nextMessage(timeoutMs: 1000)?["method"] == .string("after"))
        server.close()
    }

    @Test func refusalBeforeTheHelloIsAnRPCError() throws {
        let (client, server) = makeSocketPair()
        server.send(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32006,"message":"Too many clients.","data":{"kind":"limit_exceeded"}}}"#)
        server.close()
        let error = #expect(throws: ClientError.self) { try TabBarConnection(fileDescriptor: client) }
        guard case .rpc(_, let kind, _, _)? = error else { Issue.record("expected .rpc"); return }
        #expect(kind == "limit_exceeded")
    }

    @Test func somethingElseThanHelloIsAProtocolViolation() throws {
        let (client, server) = makeSocketPair()
        server.send(#"{"jsonrpc":"2.0","method":"tab.selected","params":{}}"#)
        let error = #expect(throws: ClientError.self) { try TabBarConnection(fileDescriptor: client) }
        if case .protocolViolation? = error {} else { Issue.record("expected .protocolViolation, got \(String(describing: error))") }
        server.close()
    }

    @Test func noHelloInTimeIsATimeout() throws {
        let (client, server) = makeSocketPair()
        let error = #expect(throws: ClientError.self) { try TabBarConnection(fileDescriptor: client, timeoutMs: 30) }
        if case .timeout? = error {} else { Issue.record("expected .timeout, got \(String(describing: error))") }
        server.close()
    }

    @Test func connectsByPath() throws {
        let listener = FakeListener()
        let thread = TestThread {
            let peer = listener.accept()
            peer.send(FakePeer.hello)
            peer.reply(to: peer.readRequest(), result: #"{"seq":3,"state":{"items":[]}}"#)
            peer.close()
        }
        let connection = try TabBarConnection(path: listener.path)
        #expect(try connection.call("state.get")["seq"]?.intValue == 3)
        thread.join()
        connection.close()
        #expect(connection.fileDescriptor == -1)
        #expect(throws: ClientError.self) { try connection.call("ping") }
    }

    @Test func aMissingSocketSaysWhatToDo() {
        let error = #expect(throws: ClientError.self) { try TabBarConnection(path: "/nonexistent-dir/tabbard/socket") }
        #expect(error?.description == "cannot connect to /nonexistent-dir/tabbard/socket: No such file or directory — is tabbard running? start it (`systemctl --user start tabbard.socket`) or pass --socket")
    }

    @Test func aTooLongPathIsRefusedBeforeConnecting() {
        let path = "/tmp/" + String(repeating: "x", count: 200)
        let error = #expect(throws: ClientError.self) { try TabBarConnection(path: path) }
        guard case .connect(let p, let reason)? = error else { Issue.record("expected .connect"); return }
        #expect(p == path)
        #expect(reason.contains("at most 107"))
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
