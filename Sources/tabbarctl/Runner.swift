import Glibc
import TabBarClient
import TabBarCore
import TabBarSystem

/// A problem on this side that is not a usage error (unreadable file, bad JSON file).
struct ClientSideError: Error, CustomStringConvertible {
    var description: String
}

/// Exit statuses: 0 ok, 1 client-side error, 2 the daemon returned an error.
enum ExitStatus {
    static let ok: Int32 = 0
    static let client: Int32 = 1
    static let daemon: Int32 = 2
}

/// Where output goes: one call per line; `out` is flushed after every line.
struct Output {
    var out: (String) -> Void
    var err: (String) -> Void

    /// Standard output and error, each line written whole as it comes (nothing held in a buffer).
    static var standard: Output {
        Output(out: { line in try? Sys.writeAll(STDOUT_FILENO, Array((line + "\n").utf8)) },
               err: { line in try? Sys.writeAll(STDERR_FILENO, Array((line + "\n").utf8)) })
    }

    /// Reports an error as one line.
    func error(_ message: String) {
        let oneLine = message.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).joined(separator: " ")
        err("tabbarctl: " + oneLine)
    }
}

/// The request a command sends, when it is a single request known without I/O.
enum Plan {
    static func request(_ command: Subcommand) -> (method: String, params: JSON?)? {
        switch command {
        case .help, .version, .configure, .pipe, .advance, .wait: return nil
        case .state: return ("state.get", nil)
        case .select(let target, let program, let ifSeq):
            var p: [JSON.Member] = []
            switch target {
            case .id(let id): p.append(JSON.Member("tab", .string(id)))
            case .index(let n): p.append(JSON.Member("index", .int(n)))
            }
            if let ifSeq { p.append(JSON.Member("if_seq", .int(ifSeq))) }
            if program { p.append(JSON.Member("source", .string("program"))) }
            return ("tab.select", .object(p))
        case .badge(let tab, let change):
            let t = JSON.Member("tab", .string(tab))
            switch change {
            case .count(let n): return ("badge.set", .object([t, JSON.Member("count", .int(n))]))
            case .text(let s): return ("badge.set", .object([t, JSON.Member("text", .string(s))]))
            case .dot: return ("badge.set", .object([t, JSON.Member("dot", .bool(true))]))
            case .clear: return ("badge.clear", .object([t]))
            }
        case .action(let tab, let finish):
            return (finish ? "action.finish" : "action.trigger", .obj(["tab": .string(tab)]))
        case .play(let name): return ("sound.play", .obj(["name": .string(name)]))
        case .sounds: return ("sound.list", nil)
        case .reset: return ("bar.configure", .obj(["initial": .bool(true)]))
        case .monitor(let topics, _):
            return ("subscribe", topics.map { .obj(["topics": .array($0.map(JSON.string))]) })
        case .call(let method, let params): return (method, params)
        case .touch(let phase, let x, let y, let touchID):
            var p = [JSON.Member("phase", .string(phase)), JSON.Member("x", .double(x)), JSON.Member("y", .double(y))]
            if let touchID { p.append(JSON.Member("touch_id", .int(touchID))) }
            return ("touch", .object(p))
        case .push(let hidesBar): return ("nav.push", .obj(["hides_bar": .bool(hidesBar)]))
        case .pop: return ("nav.pop", nil)
        case .scroll(let dy): return ("scroll", .obj(["dy": .double(dy)]))
        case .setHidden(let hidden, let reason, let animated):
            var p = [JSON.Member("hidden", .bool(hidden))]
            if let reason { p.append(JSON.Member("reason", .string(reason))) }
            if animated { p.append(JSON.Member("animated", .bool(true))) }
            return ("bar.set_hidden", .object(p))
        case .feedback(let profile, let volume):
            if profile == nil && volume == nil { return ("state.get", nil) }
            var p: [JSON.Member] = []
            if let profile { p.append(JSON.Member("profile", .string(profile))) }
            if let volume { p.append(JSON.Member("volume", .double(volume))) }
            return ("feedback.set", .object(p))
        case .stats: return ("stats.get", nil)
        case .ping: return ("ping", nil)
        }
    }
}

extension GlobalOptions {
    /// The client's options: `--timeout` for every reply (and the hello).
    var clientOptions: TabBar.Options { TabBar.Options(timeout: .milliseconds(timeoutMs)) }
}

extension Subcommand {
    /// `call` always prints its result as JSON.
    var printsRawResult: Bool {
        if case .call = self { return true }
        return false
    }
}

/// Carries out one parsed command line.
struct Runner {
    var options: GlobalOptions
    var output: Output

    /// Runs `command` and returns the exit status; errors are printed as one line.
    func run(_ command: Subcommand) async -> Int32 {
        do {
            return try await execute(command)
        } catch let error as ClientError {
            if case .rpc(_, let kind, let message, let data) = error {
                output.error(options.json ? error.description : "\(Wording.humane(message, data: data)) (\(kind))")
                return ExitStatus.daemon
            }
            output.error(error.description)
            return ExitStatus.client
        } catch let error as UsageError {
            output.error(error.description)
            return ExitStatus.client
        } catch {
            output.error(String(describing: error))
            return ExitStatus.client
        }
    }

    func connect() async throws -> TabBar {
        try await TabBar.connect(path: options.socket, instance: options.instance, options: options.clientOptions)
    }

    func execute(_ command: Subcommand) async throws -> Int32 {
        switch command {
        case .help(let topic):
            let text = topic.flatMap(CommandSpec.named).map(Help.command) ?? Help.tool
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) { output.out(String(line)) }
            return ExitStatus.ok
        case .version:
            output.out("tabbarctl \(Help.version) (protocol 1)")
            return ExitStatus.ok
        case .pipe(let tokenFile):
            return try await Pipe(options: options, output: output, tokenFile: tokenFile).run()
        case .monitor:
            return try await Monitor(options: options, output: output).run(command, connect: connect)
        case .advance, .wait:
            return try await HarnessCommands.run(command, options: options, output: output)
        case .configure(let file):
            let params = try Self.loadConfiguration(file)
            let bar = try await connect()
            let result = try await bar.call("bar.configure", params)
            if options.json { output.out(result.text); return ExitStatus.ok }
            print(Format.state(result))
            return ExitStatus.ok
        default:
            break
        }
        guard let (method, params) = Plan.request(command) else { return ExitStatus.ok }
        let bar = try await connect()
        let started = MonotonicClock.nanoseconds()
        let result = try await bar.call(method, params)
        let elapsed = MonotonicClock.nanoseconds() - started
        if case .feedback(nil, nil) = command, options.json {
            // The feedback alone, in feedback.set's shape, not the whole state.
            output.out(JSON.obj(["seq": result["seq"] ?? .null, "feedback": result["state"]?["feedback"] ?? .null]).text)
            return ExitStatus.ok
        }
        if options.json || command.printsRawResult {
            output.out(result.text)
            return ExitStatus.ok
        }
        switch command {
        case .state, .reset:
            print(Format.state(result))
        case .select:
            output.out(Format.select(result))
            print(Format.state(try await bar.call("state.get")))
        case .badge(let tab, let change):
            output.out(Format.badgeResult(tab: tab, result, cleared: change == .clear))
        case .action(let tab, let finish):
            output.out("\(finish ? "finished" : "triggered") \(tab), seq \(Format.number(result["seq"]))")
        case .play(let name):
            output.out("playing \(name) (voice \(Format.word(result["voice"])))")
        case .sounds:
            print(Format.sounds(result))
        case .touch(let phase, let x, let y, _):
            output.out(Format.touch(phase: phase, x: x, y: y, result))
        case .push, .pop, .scroll, .setHidden:
            output.out(Format.visibilityResult(result))
        case .feedback(let profile, let volume):
            if profile == nil && volume == nil {
                output.out("feedback " + Format.feedback(result["state"]?["feedback"] ?? .null) + ", seq \(Format.number(result["seq"]))")
            } else {
                output.out("feedback " + Format.feedback(result["feedback"] ?? .null) + ", seq \(Format.number(result["seq"]))")
            }
        case .stats:
            print(Format.flat(result))
        case .ping:
            let h = bar.hello.json
            output.out("pong from \(Format.word(h["server"])) \(Format.word(h["version"])) (protocol \(Format.number(h["protocol"]))) in \(Format.fixed(Double(elapsed) / 1e6, digits: 3)) ms")
        default:
            output.out(result.text)
        }
        return ExitStatus.ok
    }

    func print(_ lines: [String]) {
        for line in lines { output.out(line) }
    }

    /// The params of `configure`: a JSON object read from `path` (`-` is standard input).
    static func loadConfiguration(_ path: String) throws -> JSON {
        let bytes = try readAll(path)
        let name = path == "-" ? "standard input" : path
        let json: JSON
        do {
            json = try JSON.parse(bytes)
        } catch {
            throw ClientSideError(description: "\(name) is not valid JSON: \(error.description)")
        }
        guard case .object = json else {
            throw ClientSideError(description: "\(name) must hold a JSON object like {\"items\":[{\"id\":\"home\"}]}, not \(json.typeName)")
        }
        return json
    }

    static func readAll(_ path: String) throws -> [UInt8] {
        do throws(Errno) {
            let fd = path == "-" ? 0 : try Sys.open(path, O_RDONLY | O_CLOEXEC)
            defer { if fd != 0 { try? Sys.close(fd) } }  // (read-only: nothing to lose)
            return try Sys.readAll(fd, limit: 16 << 20)
        } catch {
            if error.code == EFBIG { throw ClientSideError(description: "\(path) is larger than 16 MiB; that is not a bar configuration") }
            throw ClientSideError(description: "cannot read \(path): \(error)")
        }
    }
}
