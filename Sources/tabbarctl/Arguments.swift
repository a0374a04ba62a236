import TabBarClient
import TabBarCore

/// Options every command accepts.
struct GlobalOptions: Equatable {
    var socket: String? = nil
    /// `--instance NAME`: the daemon of one application (`tabbard@NAME.socket`).
    var instance: String? = nil
    var json = false
    var timeoutMs = 5000
}

/// An item named on the command line: a bare integer is an index, anything else an id.
enum TabTarget: Equatable {
    case id(String)
    case index(Int)

    init(_ word: String) {
        if let n = Int(word) { self = .index(n) } else { self = .id(word) }
    }
}

/// What `badge` should do.
enum BadgeChange: Equatable {
    case count(Int)
    case text(String)
    case dot
    case clear
}

/// A parsed command line.
enum Subcommand: Equatable {
    /// Help for the tool (nil) or for one command.
    case help(String?)
    case version
    case state
    case select(TabTarget, program: Bool, ifSeq: Int?)
    case badge(String, BadgeChange)
    case action(String, finish: Bool)
    case play(String)
    case sounds
    /// `follow`: reconnect and resubscribe after the daemon stops or restarts.
    case monitor(topics: [String]?, follow: Bool = false)
    /// Back to the configured bar (`bar.configure {"initial": true}`).
    case reset
    case call(String, params: JSON?)
    case touch(phase: String, x: Double, y: Double, touchID: Int? = nil)
    case push(hidesBar: Bool)
    case pop
    case scroll(dy: Double)
    case setHidden(Bool, reason: String?, animated: Bool)
    case configure(file: String)
    case feedback(profile: String?, volume: Double?)
    case stats
    case ping
    case pipe(tokenFile: String?)
    /// The test harness (Harness.swift).
    case advance(ms: Int)
    case wait(event: String, match: [String: String], timeoutMs: Int, then: [String])
}

struct Invocation: Equatable {
    var options = GlobalOptions()
    var command: Subcommand
}

/// A command line that cannot be carried out as written.
struct UsageError: Error, Equatable, CustomStringConvertible {
    var message: String
    /// The command whose help explains the fix (nil: the tool's).
    var command: String?

    var description: String {
        message + " (see `tabbarctl" + (command.map { " \($0)" } ?? "") + " --help`)"
    }
}

/// Hand-written argument parsing: global options, a command, its options
/// (`--name value` or `--name=value`) and positional words. `--` ends options;
/// a word that reads as a number (`-12`) is positional.
enum Arguments {
    static let globalFlags: [String: Bool] = ["--socket": true, "--instance": true, "--json": false, "--timeout": true]

    /// Parses the arguments after the program name.
    static func parse(_ args: [String]) throws(UsageError) -> Invocation {
        var options = GlobalOptions()
        var i = 0
        // Global options before the command.
        while i < args.count {
            let word = args[i]
            if word == "-h" || word == "--help" { return Invocation(options: options, command: .help(nil)) }
            if word == "-V" || word == "--version" { return Invocation(options: options, command: .version) }
            guard word.hasPrefix("-"), word != "-", word != "--" else { break }
            let (name, inline) = split(word)
            guard let takesValue = globalFlags[name] else {
                throw UsageError(message: "unknown option \(name) before the command", command: nil)
            }
            var value: String?
            if takesValue {
                if let inline { value = inline } else {
                    i += 1
                    guard i < args.count else { throw UsageError(message: "\(name) needs a value", command: nil) }
                    value = args[i]
                }
            } else if inline != nil {
                throw UsageError(message: "\(name) takes no value", command: nil)
            }
            try applyGlobal(name, value, to: &options, command: nil)
            i += 1
        }
        if i < args.count, args[i] == "--" { i += 1 }
        guard i < args.count else {
            throw UsageError(message: "no command given; try `tabbarctl state` or `tabbarctl monitor`", command: nil)
        }
        let name = args[i]
        guard let spec = CommandSpec.named(name) else {
            throw UsageError(message: "unknown command \"\(name)\"", command: nil)
        }
        let rest = Array(args[(i + 1)...])
        let beforeDashes = rest.prefix { $0 != "--" }
        if beforeDashes.contains(where: { $0 == "--help" || $0 == "-h" }) {
            return Invocation(options: options, command: .help(name == "help" ? nil : name))
        }
        var words = try Words(rest, spec: spec, options: &options)
        let command = try build(spec, &words)
        return Invocation(options: options, command: command)
    }

    static func split(_ word: String) -> (String, String?) {
        guard word.hasPrefix("--"), let eq = word.firstIndex(of: "=") else { return (word, nil) }
        return (String(word[..<eq]), String(word[word.index(after: eq)...]))
    }

    static func applyGlobal(_ name: String, _ value: String?, to options: inout GlobalOptions, command: String?) throws(UsageError) {
        switch name {
        case "--socket":
            guard let value, !value.isEmpty else { throw UsageError(message: "--socket needs a path", command: command) }
            options.socket = value
        case "--instance":
            guard let value, SocketPath.isValidInstance(value) else {
                throw UsageError(message: "--instance needs a name such as mail (no \"/\"), not \"\(value ?? "")\"", command: command)
            }
            options.instance = value
        case "--json":
            options.json = true
        case "--timeout":
            guard let value, let ms = Int(value), ms > 0 else {
                throw UsageError(message: "--timeout needs a positive number of milliseconds, not \"\(value ?? "")\"", command: command)
            }
            options.timeoutMs = ms
        default:
            break
        }
    }

    /// The words after a command name, split into its options and positionals.
    struct Words {
        let command: String
        var positionals: [String] = []
        var options: [String: String] = [:]

        init(_ args: [String], spec: CommandSpec, options global: inout GlobalOptions) throws(UsageError) {
            command = spec.name
            var i = 0
            var onlyPositionals = false
            while i < args.count {
                let word = args[i]
                i += 1
                if onlyPositionals || !word.hasPrefix("-") || word == "-" || Double(word) != nil {
                    positionals.append(word)
                    continue
                }
                if word == "--" {
                    onlyPositionals = true
                    continue
                }
                let (name, inline) = Arguments.split(word)
                let takesValue: Bool
                if let t = spec.options[name] { takesValue = t } else if let t = Arguments.globalFlags[name] { takesValue = t } else {
                    throw UsageError(message: "\(spec.name) has no option \(name)", command: spec.name)
                }
                var value = ""
                if takesValue {
                    if let inline { value = inline } else {
                        guard i < args.count else { throw UsageError(message: "\(name) needs a value", command: spec.name) }
                        value = args[i]
                        i += 1
                    }
                } else if inline != nil {
                    throw UsageError(message: "\(name) takes no value", command: spec.name)
                }
                if Arguments.globalFlags[name] != nil && spec.options[name] == nil {
                    try Arguments.applyGlobal(name, value, to: &global, command: spec.name)
                    continue
                }
                if options[name] != nil { throw UsageError(message: "\(name) is given twice", command: spec.name) }
                options[name] = value
            }
        }

        func flag(_ name: String) -> Bool { options[name] != nil }
        func value(_ name: String) -> String? { options[name] }

        func error(_ message: String) -> UsageError { UsageError(message: message, command: command) }

        /// Exactly `names.count` positionals.
        func expect(_ names: [String]) throws(UsageError) -> [String] {
            if positionals.count < names.count {
                throw error("missing " + names[positionals.count...].joined(separator: " "))
            }
            if positionals.count > names.count {
                throw error("unexpected argument \"\(positionals[names.count])\"")
            }
            return positionals
        }

        func int(_ word: String, _ what: String) throws(UsageError) -> Int {
            guard let n = Int(word) else { throw error("\(what) must be an integer, not \"\(word)\"") }
            return n
        }

        func number(_ word: String, _ what: String) throws(UsageError) -> Double {
            guard let d = Double(word), d.isFinite else { throw error("\(what) must be a number, not \"\(word)\"") }
            return d
        }
    }

    static func build(_ spec: CommandSpec, _ w: inout Words) throws(UsageError) -> Subcommand {
        switch spec.name {
        case "help":
            guard w.positionals.count <= 1 else { throw w.error("help takes at most one command name") }
            if let topic = w.positionals.first {
                guard CommandSpec.named(topic) != nil else {
                    throw UsageError(message: "unknown command \"\(topic)\"", command: nil)
                }
                return .help(topic == "help" ? nil : topic)
            }
            return .help(nil)
        case "state": _ = try w.expect([]); return .state
        case "sounds": _ = try w.expect([]); return .sounds
        case "pop": _ = try w.expect([]); return .pop
        case "reset": _ = try w.expect([]); return .reset
        case "stats": _ = try w.expect([]); return .stats
        case "ping": _ = try w.expect([]); return .ping
        case "select":
            let p = try w.expect(["TAB|INDEX"])
            let ifSeq = try w.value("--if-seq").map { v throws(UsageError) in try w.int(v, "--if-seq") }
            return .select(TabTarget(p[0]), program: w.flag("--program"), ifSeq: ifSeq)
        case "badge":
            let chosen = ["--dot", "--text", "--clear"].filter { w.flag($0) }
            if chosen.isEmpty {
                let p = try w.expect(["TAB", "COUNT"])
                return .badge(p[0], .count(try w.int(p[1], "COUNT")))
            }
            guard chosen.count == 1 else { throw w.error("give only one of COUNT, --dot, --text T, --clear") }
            guard w.positionals.count <= 1 else {
                throw w.error("give only one of COUNT, --dot, --text T, --clear")
            }
            let p = try w.expect(["TAB"])
            switch chosen[0] {
            case "--dot": return .badge(p[0], .dot)
            case "--clear": return .badge(p[0], .clear)
            default: return .badge(p[0], .text(w.value("--text")!))
            }
        case "action":
            let p = try w.expect(["TAB"])
            return .action(p[0], finish: w.flag("--finish"))
        case "play":
            return .play(try w.expect(["NAME"])[0])
        case "monitor":
            _ = try w.expect([])
            let follow = w.flag("--follow")
            guard let list = w.value("--topics") else { return .monitor(topics: nil, follow: follow) }
            let topics = list.split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
            if topics.isEmpty { throw w.error("--topics needs a comma-separated list, such as tab,badge.changed") }
            for topic in topics where !Topics.isKnown(topic) {
                throw w.error("there is no topic \"\(topic)\"; topics are event names or their first part: " + Topics.prefixes.joined(separator: ", "))
            }
            return .monitor(topics: topics, follow: follow)
        case "call":
            guard !w.positionals.isEmpty else { throw w.error("missing METHOD") }
            guard w.positionals.count <= 2 else { throw w.error("unexpected argument \"\(w.positionals[2])\"; quote the JSON params as one argument") }
            var params: JSON?
            if w.positionals.count == 2 {
                do {
                    params = try JSON.parse(w.positionals[1])
                } catch {
                    throw w.error("the params are not valid JSON: \(error.description)")
                }
            }
            return .call(w.positionals[0], params: params)
        case "touch":
            let p = try w.expect(["down|up|cancel", "X", "Y"])
            guard ["down", "up", "cancel"].contains(p[0]) else {
                throw w.error("the touch phase must be down, up or cancel, not \"\(p[0])\"")
            }
            let touchID = try w.value("--id").map { v throws(UsageError) in try w.int(v, "--id") }
            if let touchID, touchID < 0 { throw w.error("--id must be 0 or more, not \(touchID)") }
            return .touch(phase: p[0], x: try w.number(p[1], "X"), y: try w.number(p[2], "Y"), touchID: touchID)
        case "push":
            _ = try w.expect([])
            return .push(hidesBar: w.flag("--hides-bar"))
        case "scroll":
            return .scroll(dy: try w.number(try w.expect(["DY"])[0], "DY"))
        case "hide", "show":
            _ = try w.expect([])
            return .setHidden(spec.name == "hide", reason: w.value("--reason"), animated: w.flag("--animated"))
        case "pipe": _ = try w.expect([]); return .pipe(tokenFile: w.value("--token-file"))
        case "configure":
            return .configure(file: try w.expect(["FILE"])[0])
        case "feedback":
            _ = try w.expect([])
            let volume = try w.value("--volume").map { v throws(UsageError) in try w.number(v, "--volume") }
            return .feedback(profile: w.value("--profile"), volume: volume)
        case "advance", "wait":
            return try HarnessCommands.build(spec, &w)
        default:
            throw UsageError(message: "unknown command \"\(spec.name)\"", command: nil)
        }
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
