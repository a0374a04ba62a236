import Testing
import TabBarCore
@testable import tabbarctl

@Suite struct ArgumentsTests {
    func parse(_ line: String) throws -> Invocation {
        try Arguments.parse(line.split(separator: " ").map(String.init))
    }

    func command(_ line: String) throws -> Subcommand { try parse(line).command }

    func usageError(_ line: String) -> UsageError? {
        #expect(throws: UsageError.self) { try parse(line) }
    }

    @Test func globalOptionsBeforeAndAfterTheCommand() throws {
        #expect(try parse("--socket /tmp/s --json state") == Invocation(options: GlobalOptions(socket: "/tmp/s", json: true), command: .state))
        #expect(try parse("state --json --socket=/x") == Invocation(options: GlobalOptions(socket: "/x", json: true), command: .state))
        #expect(try parse("--timeout 250 ping").options.timeoutMs == 250)
        #expect(try parse("ping").options == GlobalOptions())
        #expect(usageError("--timeout 0 ping")?.message.contains("--timeout") == true)
        #expect(usageError("--socket")?.message == "--socket needs a value")
        #expect(usageError("--frobnicate state")?.message == "unknown option --frobnicate before the command")
        #expect(usageError("")?.message.hasPrefix("no command given") == true)
        #expect(usageError("dance")?.description == "unknown command \"dance\" (see `tabbarctl --help`)")
    }

    @Test func helpAndVersion() throws {
        #expect(try command("--help") == .help(nil))
        #expect(try command("-h") == .help(nil))
        #expect(try command("help") == .help(nil))
        #expect(try command("help select") == .help("select"))
        #expect(try command("select --help") == .help("select"))
        #expect(try command("badge chat -h") == .help("badge"))
        #expect(try command("--json monitor --help") == .help("monitor"))
        #expect(try command("--version") == .version)
        #expect(try command("-V") == .version)
        #expect(usageError("help dance") != nil)
        for spec in CommandSpec.all where spec.name != "help" {
            #expect(try command("\(spec.name) --help") == .help(spec.name))
        }
    }

    @Test func everyCommandHasHelp() {
        for spec in CommandSpec.all {
            let text = Help.command(spec)
            #expect(text.hasPrefix("Usage: tabbarctl [--socket PATH] [--json] \(spec.name)"))
            #expect(!spec.details.isEmpty)
        }
        #expect(Help.tool.contains("monitor"))
    }

    @Test func state() throws {
        #expect(try command("state") == .state)
        #expect(usageError("state extra")?.message == "unexpected argument \"extra\"")
    }

    @Test func select() throws {
        #expect(try command("select chat") == .select(.id("chat"), program: false, ifSeq: nil))
        #expect(try command("select 2") == .select(.index(2), program: false, ifSeq: nil))
        #expect(try command("select -1") == .select(.index(-1), program: false, ifSeq: nil))
        #expect(try command("select home --program --if-seq 12") == .select(.id("home"), program: true, ifSeq: 12))
        #expect(try command("select --if-seq=3 0") == .select(.index(0), program: false, ifSeq: 3))
        #expect(try command("select -- --weird-id") == .select(.id("--weird-id"), program: false, ifSeq: nil))
        #expect(usageError("select")?.message == "missing TAB|INDEX")
        #expect(usageError("select a b")?.message == "unexpected argument \"b\"")
        #expect(usageError("select a --if-seq x")?.message == "--if-seq must be an integer, not \"x\"")
        #expect(usageError("select a --if-seq")?.message == "--if-seq needs a value")
        #expect(usageError("select a --program=yes")?.message == "--program takes no value")
        #expect(usageError("select a --program --program")?.message == "--program is given twice")
        #expect(usageError("select a --dot")?.description == "select has no option --dot (see `tabbarctl select --help`)")
    }

    @Test func badge() throws {
        #expect(try command("badge chat 5") == .badge("chat", .count(5)))
        #expect(try command("badge chat 0") == .badge("chat", .count(0)))
        #expect(try command("badge chat -3") == .badge("chat", .count(-3)))
        #expect(try command("badge chat --dot") == .badge("chat", .dot))
        #expect(try command("badge chat --clear") == .badge("chat", .clear))
        #expect(try Arguments.parse(["badge", "chat", "--text", "new mail"]).command == .badge("chat", .text("new mail")))
        #expect(try command("badge chat --text=NEW") == .badge("chat", .text("NEW")))
        #expect(usageError("badge chat")?.message == "missing COUNT")
        #expect(usageError("badge chat many")?.message == "COUNT must be an integer, not \"many\"")
        #expect(usageError("badge chat 3 --dot") != nil)
        #expect(usageError("badge chat --dot --clear") != nil)
        #expect(usageError("badge --dot")?.message == "missing TAB")
    }

    @Test func action() throws {
        #expect(try command("action compose") == .action("compose", finish: false))
        #expect(try command("action compose --finish") == .action("compose", finish: true))
        #expect(usageError("action") != nil)
    }

    @Test func playAndSounds() throws {
        #expect(try command("play click") == .play("click"))
        #expect(try command("sounds") == .sounds)
        #expect(usageError("play") != nil)
        #expect(usageError("sounds click") != nil)
    }

    @Test func monitor() throws {
        #expect(try command("monitor") == .monitor(topics: nil))
        #expect(try parse("monitor --json") == Invocation(options: GlobalOptions(json: true), command: .monitor(topics: nil)))
        #expect(try command("monitor --topics tab,badge.changed") == .monitor(topics: ["tab", "badge.changed"]))
        #expect(try Arguments.parse(["monitor", "--topics", " tab , sound.played,"]).command == .monitor(topics: ["tab", "sound.played"]))
        #expect(usageError("monitor --topics ,")?.message.hasPrefix("--topics needs") == true)
    }

    @Test func call() throws {
        #expect(try command("call ping") == .call("ping", params: nil))
        #expect(try Arguments.parse(["call", "tab.select", #"{"tab":"chat"}"#]).command
                == .call("tab.select", params: .obj(["tab": .string("chat")])))
        let bad = #expect(throws: UsageError.self) { try Arguments.parse(["call", "x", "{bad"]) }
        #expect(bad?.message.hasPrefix("the params are not valid JSON") == true)
        #expect(usageError("call") != nil)
        #expect(usageError("call a {} {}") != nil)
    }

    @Test func touch() throws {
        #expect(try command("touch down 10 20.5") == .touch(phase: "down", x: 10, y: 20.5))
        #expect(try command("touch up 180 -12") == .touch(phase: "up", x: 180, y: -12))
        #expect(try command("touch cancel -- 1 -2") == .touch(phase: "cancel", x: 1, y: -2))
        #expect(usageError("touch press 1 2")?.message == "the touch phase must be down, up or cancel, not \"press\"")
        #expect(usageError("touch down 1")?.message == "missing Y")
        #expect(usageError("touch down x 1")?.message == "X must be a number, not \"x\"")
        #expect(usageError("touch down 1 inf") != nil)
    }

    @Test func navigationAndVisibility() throws {
        #expect(try command("push") == .push(hidesBar: false))
        #expect(try command("push --hides-bar") == .push(hidesBar: true))
        #expect(try command("pop") == .pop)
        #expect(try command("scroll 40") == .scroll(dy: 40))
        #expect(try command("scroll -40.5") == .scroll(dy: -40.5))
        #expect(try command("hide") == .setHidden(true, reason: nil, animated: false))
        #expect(try command("hide --reason scroll --animated") == .setHidden(true, reason: "scroll", animated: true))
        #expect(try command("show --animated") == .setHidden(false, reason: nil, animated: true))
        #expect(usageError("scroll") != nil)
        #expect(usageError("scroll up")?.message == "DY must be a number, not \"up\"")
        #expect(usageError("pop now") != nil)
    }

    @Test func configureFeedbackStatsPing() throws {
        #expect(try command("configure bar.json") == .configure(file: "bar.json"))
        #expect(try command("configure -") == .configure(file: "-"))
        #expect(try command("feedback") == .feedback(profile: nil, volume: nil))
        #expect(try command("feedback --profile quiet --volume 0.5") == .feedback(profile: "quiet", volume: 0.5))
        #expect(try command("stats") == .stats)
        #expect(try command("ping") == .ping)
        #expect(usageError("configure") != nil)
        #expect(usageError("feedback --volume loud")?.message == "--volume must be a number, not \"loud\"")
    }
}

@Suite struct PlanTests {
    func plan(_ args: String) throws -> String {
        let command = try Arguments.parse(args.split(separator: " ").map(String.init)).command
        guard let (method, params) = Plan.request(command) else { return "-" }
        return method + " " + (params?.text ?? "-")
    }

    @Test func everyCommandSendsTheContractsMethod() throws {
        #expect(try plan("state") == "state.get -")
        #expect(try plan("select chat") == #"tab.select {"tab":"chat"}"#)
        #expect(try plan("select 1 --if-seq 4 --program") == #"tab.select {"index":1,"if_seq":4,"source":"program"}"#)
        #expect(try plan("badge chat 120") == #"badge.set {"tab":"chat","count":120}"#)
        #expect(try plan("badge chat --dot") == #"badge.set {"tab":"chat","dot":true}"#)
        #expect(try plan("badge chat --text=hi") == #"badge.set {"tab":"chat","text":"hi"}"#)
        #expect(try plan("badge chat --clear") == #"badge.clear {"tab":"chat"}"#)
        #expect(try plan("action compose") == #"action.trigger {"tab":"compose"}"#)
        #expect(try plan("action compose --finish") == #"action.finish {"tab":"compose"}"#)
        #expect(try plan("play click") == #"sound.play {"name":"click"}"#)
        #expect(try plan("sounds") == "sound.list -")
        #expect(try plan("monitor") == "subscribe -")
        #expect(try plan("monitor --topics tab,badge") == #"subscribe {"topics":["tab","badge"]}"#)
        #expect(try plan("call stats.get") == "stats.get -")
        #expect(try plan("touch down 10.5 -3") == #"touch {"phase":"down","x":10.5,"y":-3}"#)
        #expect(try plan("push --hides-bar") == #"nav.push {"hides_bar":true}"#)
        #expect(try plan("push") == #"nav.push {"hides_bar":false}"#)
        #expect(try plan("pop") == "nav.pop -")
        #expect(try plan("scroll 40") == #"scroll {"dy":40}"#)
        #expect(try plan("hide --reason push --animated") == #"bar.set_hidden {"hidden":true,"reason":"push","animated":true}"#)
        #expect(try plan("show") == #"bar.set_hidden {"hidden":false}"#)
        #expect(try plan("feedback --profile silent") == #"feedback.set {"profile":"silent"}"#)
        #expect(try plan("feedback --volume 0.25") == #"feedback.set {"volume":0.25}"#)
        #expect(try plan("feedback") == "state.get -")
        #expect(try plan("stats") == "stats.get -")
        #expect(try plan("ping") == "ping -")
        #expect(try plan("configure x.json") == "-")
    }
}
