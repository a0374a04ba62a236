import Glibc
import Testing
import TabBarCore
@testable import tabbarctl

/// Collects what a command prints.
final class Captured {
    var out: [String] = []
    var err: [String] = []
    var output: Output { Output(out: { self.out.append($0) }, err: { self.err.append($0) }) }
}

@Suite struct RunnerTests {
    /// Runs `args` against a fake daemon that answers each request with `answer(request)`.
    func run(_ args: [String], answers: [(JSON?) -> String], then: ((FakePeer) -> Void)? = nil) async throws -> (Int32, Captured) {
        let listener = FakeListener()
        let thread = TestThread {
            let peer = listener.accept()
            peer.send(FakePeer.hello)
            for answer in answers {
                let request = peer.readRequest()
                peer.send(answer(request))
            }
            then?(peer)
            peer.close()
        }
        let invocation = try Arguments.parse(["--socket", listener.path] + args)
        let captured = Captured()
        let status = await Runner(options: invocation.options, output: captured.output).run(invocation.command)
        thread.join()
        return (status, captured)
    }

    static func result(_ json: String) -> (JSON?) -> String {
        { request in #"{"jsonrpc":"2.0","id":\#(request?["id"]?.text ?? "null"),"result":\#(json)}"# }
    }

    @Test func selectPrintsTheOutcomeThenTheState() async throws {
        let state = JSON.obj(["seq": .int(7), "state": BarState.defaultBar.json()]).text
        let (status, captured) = try await run(["select", "chat"], answers: [
            Self.result(#"{"seq":7,"selected":"chat","previous":"home","reselected":false}"#),
            Self.result(state),
        ])
        #expect(status == 0)
        #expect(captured.out.first == "selected chat (previous home), seq 7")
        #expect(captured.out.dropFirst().first == "seq 7 · selected home")
        #expect(captured.err.isEmpty)
    }

    @Test func jsonPrintsTheRawResult() async throws {
        let (status, captured) = try await run(["--json", "badge", "chat", "3"], answers: [
            Self.result(#"{"seq":9,"badge":{"kind":"count","value":3,"display":"3"}}"#),
        ])
        #expect(status == 0)
        #expect(captured.out == [#"{"seq":9,"badge":{"kind":"count","value":3,"display":"3"}}"#])
    }

    @Test func aDaemonErrorIsOneLineAndStatusTwo() async throws {
        let (status, captured) = try await run(["select", "nope"], answers: [{ request in
            #"{"jsonrpc":"2.0","id":\#(request?["id"]?.text ?? "null"),"error":{"code":-32001,"message":"There is no item \"nope\" in the bar.","data":{"kind":"unknown_tab","tab":"nope"}}}"#
        }])
        #expect(status == 2)
        #expect(captured.out.isEmpty)
        #expect(captured.err == [#"tabbarctl: There is no item "nope" in the bar. (unknown_tab)"#])
    }

    @Test func cannotConnectIsStatusOne() async {
        let captured = Captured()
        let status = await Runner(options: GlobalOptions(socket: "/nonexistent/tabbard.sock"), output: captured.output).run(.ping)
        #expect(status == 1)
        #expect(captured.err == ["tabbarctl: cannot connect to /nonexistent/tabbard.sock: No such file or directory — is tabbard running? start it (`systemctl --user start tabbard.socket`) or pass --socket"])
    }

    @Test func anUnreadableConfigurationIsStatusOne() async {
        let captured = Captured()
        let status = await Runner(options: GlobalOptions(socket: "/nonexistent/s"), output: captured.output).run(.configure(file: "/nonexistent/bar.json"))
        #expect(status == 1)
        #expect(captured.err == ["tabbarctl: cannot read /nonexistent/bar.json: No such file or directory"])
    }

    @Test func monitorPrintsEventsUntilTheServerStops() async throws {
        let (status, captured) = try await run(["monitor"], answers: [
            Self.result(JSON.obj(["seq": .int(3), "state": BarState.defaultBar.json()]).text),
        ], then: { peer in
            peer.send(#"{"jsonrpc":"2.0","method":"tab.selected","params":{"seq":4,"tab":"chat","previous":"home","source":"user"}}"#)
            peer.send(#"{"jsonrpc":"2.0","method":"sound.played","params":{"voice":1,"name":"click"}}"#)
            peer.send(#"{"jsonrpc":"2.0","method":"server.stopping","params":{}}"#)
        })
        #expect(status == 0)
        #expect(captured.out == [
            "seq 3 subscribed: 5 items (home nearby post chat me), selected home, visible, phase idle, feedback full, volume 1",
            "seq 4 tab.selected chat (previous home, user)",
            "sound.played click (voice 1)",
            "server.stopping",
        ])
    }

    @Test func monitorJSONEchoesLinesExactly() async throws {
        let event = #"{"jsonrpc":"2.0","method":"badge.changed","params":{"seq":5,"tab":"chat","badge":{"kind":"text","value":"caf\u00e9","display":"café"}}}"#
        var subscribe: JSON?
        let (status, captured) = try await run(["monitor", "--json", "--topics", "badge"], answers: [
            { request in
                subscribe = request
                return #"{"jsonrpc":"2.0","id":\#(request?["id"]?.text ?? "null"),"result":{"seq":4,"state":{}}}"#
            },
        ], then: { peer in peer.send(event) })
        #expect(subscribe?["method"] == .string("subscribe"))
        #expect(subscribe?["params"] == .obj(["topics": .array([.string("badge")])]))
        #expect(status == 1)  // dropped without server.stopping
        #expect(captured.out == [#"{"seq":4,"state":{}}"#, event])
        #expect(captured.err.count == 1)
        #expect(captured.err.first?.hasPrefix("tabbarctl: tabbard closed the connection") == true)
    }
}
