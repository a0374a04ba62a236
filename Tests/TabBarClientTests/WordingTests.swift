import Testing
import TabBarClient
import TabBarCore
@testable import tabbarctl

/// The CLI in a person's words: errors, hints, instances, reset, topics, feedback, the state table.
@Suite(.serialized) struct WordingTests {
    func error(_ message: String, kind: String, data: String) -> (JSON?) -> String {
        { request in
            #"{"jsonrpc":"2.0","id":\#(request?["id"]?.text ?? "null"),"error":{"code":-32002,"message":\#(JSON.string(message).text),"data":\#(data)}}"#
        }
    }

    @Test func daemonErrorsNameTabbarctlCommandsButJSONKeepsTheProtocolTerms() async throws {
        let message = #"Item "post" cannot be selected: it is the center button; use action.trigger."#
        let answer = error(message, kind: "not_selectable", data: #"{"kind":"not_selectable","tab":"post"}"#)
        let (status, captured) = try await RunnerTests().run(["select", "post"], answers: [answer])
        #expect(status == 2)
        #expect(captured.err == [#"tabbarctl: Item "post" cannot be selected: it is the center button; use `tabbarctl action post`. (not_selectable)"#])
        let (_, json) = try await RunnerTests().run(["--json", "select", "post"], answers: [answer])
        #expect(json.err == ["tabbarctl: \(message) (not_selectable)"])
    }

    @Test func otherProtocolNamesInMessagesAreTranslated() {
        #expect(Wording.humane(#"Item "chat" is a tab, not an action or center button; use tab.select."#, data: .obj(["tab": .string("chat")]))
                == #"Item "chat" is a tab, not an action or center button; use `tabbarctl select chat`."#)
        #expect(Wording.humane(#"There is no sound "x"; `sound.list` shows the loaded sounds."#, data: .null)
                == #"There is no sound "x"; `tabbarctl sounds` lists the loaded sounds."#)
        #expect(Wording.humane("The state changed: if_seq was 3 but the current seq is 5.", data: .null)
                == "The state changed: --if-seq was 3 but the current seq is 5.")
        #expect(Wording.humane("The navigation stack is 16 screens deep; pop screens with nav.pop first.", data: .null)
                == "The navigation stack is 16 screens deep; pop screens with `tabbarctl pop` first.")
        #expect(Wording.humane("Unknown field", data: .obj(["kind": .string("invalid_params"), "field": .string("initial")])).contains("older than `tabbarctl reset`"))
    }

    @Test func theStartAdviceDependsOnWhereTabbarctlRunsFrom() {
        #expect(Wording.isSourceTree(executable: "/src/tabbard/.build/x86_64-unknown-linux-gnu/release/tabbarctl", exists: { $0 == "/src/tabbard/Package.swift" }))
        #expect(!Wording.isSourceTree(executable: "/usr/bin/tabbarctl", exists: { _ in true }))
        #expect(!Wording.isSourceTree(executable: "/opt/x/.build/tabbarctl", exists: { _ in false }))
        #expect(Wording.startAdvice(sourceTree: true, instance: nil, systemSocket: false) == "start it with `make run`")
        #expect(!Wording.startAdvice(sourceTree: false, instance: nil, systemSocket: false).contains("make run"))
        #expect(Wording.startAdvice(sourceTree: false, instance: nil, systemSocket: false).contains("systemctl --user start tabbard.socket"))
        #expect(Wording.startAdvice(sourceTree: false, instance: "mail", systemSocket: false) == "start it with `systemctl --user start tabbard@mail.socket`")
        #expect(Wording.startAdvice(sourceTree: false, instance: nil, systemSocket: true) == "start it with `systemctl start tabbard.socket`")
    }

    static func env(_ d: [String: String]) -> (String) -> String? { { d[$0] } }

    @Test func anInstanceIsASocketInTheRuntimeDirectory() {
        let run = ["XDG_RUNTIME_DIR": "/run/user/5"]
        #expect(SocketPath.resolve(explicit: nil, instance: "mail", environment: Self.env(run), uid: 5) == "/run/user/5/tabbard/mail.socket")
        #expect(SocketPath.resolve(explicit: nil, instance: nil, environment: Self.env(run.merging(["TABBARD_INSTANCE": "chat"]) { $1 }), uid: 5) == "/run/user/5/tabbard/chat.socket")
        // --socket and --instance are explicit and win; TABBARD_SOCKET wins over TABBARD_INSTANCE.
        #expect(SocketPath.resolve(explicit: "/x", instance: "mail", environment: Self.env(run), uid: 5) == "/x")
        #expect(SocketPath.resolve(explicit: nil, instance: "mail", environment: Self.env(run.merging(["TABBARD_SOCKET": "/s"]) { $1 }), uid: 5) == "/run/user/5/tabbard/mail.socket")
        #expect(SocketPath.resolve(explicit: nil, instance: nil, environment: Self.env(run.merging(["TABBARD_SOCKET": "/s", "TABBARD_INSTANCE": "mail"]) { $1 }), uid: 5) == "/s")
        // Without XDG_RUNTIME_DIR: next to the default socket.
        #expect(SocketPath.resolve(explicit: nil, instance: "mail", environment: Self.env([:]), uid: 0) == "/run/tabbard/mail.socket")
        #expect(SocketPath.resolve(explicit: nil, instance: "mail", environment: Self.env([:]), uid: 1000) == "/tmp/tabbard-1000/mail.socket")
        #expect(!SocketPath.isValidInstance("a/b") && !SocketPath.isValidInstance("") && !SocketPath.isValidInstance(".."))
    }

    @Test func instanceResetFollowAndTopicsOnTheCommandLine() throws {
        #expect(try Arguments.parse(["--instance", "mail", "state"]).options.instance == "mail")
        #expect(try Arguments.parse(["state", "--instance=mail"]).options.instance == "mail")
        #expect(throws: UsageError.self) { try Arguments.parse(["--instance", "../x", "state"]) }
        #expect(try Arguments.parse(["reset"]).command == .reset)
        #expect(Plan.request(.reset)?.method == "bar.configure")
        #expect(Plan.request(.reset)?.params?.text == #"{"initial":true}"#)
        #expect(try Arguments.parse(["monitor", "--follow"]).command == .monitor(topics: nil, follow: true))
        #expect(try Arguments.parse(["monitor", "--topics", "tab,badge.changed,sound"]).command == .monitor(topics: ["tab", "badge.changed", "sound"]))
        do {
            _ = try Arguments.parse(["monitor", "--topics", "tab,bagde"])
            Issue.record("an unknown topic was accepted")
        } catch {
            #expect(error.message.hasPrefix(#"there is no topic "bagde"; topics are event names or their first part: tab, action, badge"#))
        }
    }

    @Test func jsonFeedbackPrintsTheFeedbackAlone() async throws {
        let state = JSON.obj(["seq": .int(4), "state": BarState.defaultBar.json()]).text
        let (status, captured) = try await RunnerTests().run(["--json", "feedback"], answers: [RunnerTests.result(state)])
        #expect(status == 0)
        #expect(captured.out == [#"{"seq":4,"feedback":{"profile":"full","volume":1}}"#])
    }

    @Test func wideCharactersTakeTwoColumnsAndControlsAreEscaped() {
        #expect(TextWidth.columns("abc") == 3)
        #expect(TextWidth.columns("日本語") == 6)
        #expect(TextWidth.columns("😀") == 2)
        #expect(TextWidth.columns("❤️") == 2)   // U+2764 U+FE0F: emoji presentation
        #expect(TextWidth.columns("é") == 1)   // e + combining acute
        #expect(TextWidth.printable("a\nb\t\u{1b}[31m\u{7f}\u{85}") == #"a\nb\t\x1b[31m\x7f\u{85}"#)
        #expect(TextWidth.printable("plain 日本") == "plain 日本")
    }

    @Test func theStateTableLinesUpInColumnsNotCharacters() {
        var bar = BarState(items: [Item(id: "a", title: "日本語タブ"), Item(id: "b", title: "😀x"), Item(id: "c", title: "plain\u{1b}[2J")])
        bar.selected = "a"
        let lines = Format.state(.obj(["seq": .int(1), "state": bar.json()]))
        let rows = lines.filter { $0.hasPrefix("  ") }
        #expect(rows.count == 4)
        // The "tab" of the kind column starts at the same terminal column in every row.
        let columns = rows.map { row -> Int in
            let before = row.prefix { _ in true }
            var width = 0
            var rest = Substring(before)
            while !rest.isEmpty && !(rest.hasPrefix("tab ") || rest.hasPrefix("kind")) {
                width += TextWidth.columns(String(rest.first!))
                rest = rest.dropFirst()
            }
            return width
        }
        #expect(Set(columns).count == 1, "\(rows)")
        #expect(rows[3].contains(#"plain\x1b[2J"#))
        #expect(!lines.joined().contains("\u{1b}"))
    }
}
