import Glibc
import TabBarClient
import TabBarCore
import TabBarSystem

/// `tabbarctl advance MS` and `tabbarctl wait EVENT …`: the shell side of the test
/// harness (docs/HARNESS.md). `advance` moves a `tabbard --clock manual`; `wait`
/// subscribes, runs the command after `--` (if any), and waits for the event.
enum HarnessCommands {
    static let specs: [CommandSpec] = [
        CommandSpec("advance", "MS", "move the daemon's manual clock (clock.advance)", """
            Moves the clock of a `tabbard --clock manual` by MS milliseconds: every timer
            due on the way fires in order, and the null sink renders the audio up to the
            new time, before this returns. Prints the new time, e.g. `now 500 ms`.
            A daemon on the real clock refuses (clock_not_manual, exit status 2).
            """),
        CommandSpec("wait", "EVENT [--match K=V[,K=V…]] [--timeout MS] [-- COMMAND ARGS…]",
                    "wait for an event; exit 0 when it arrives, 1 on timeout",
                    options: ["--match": true, "--timeout": true], """
            Subscribes, then runs `tabbarctl COMMAND ARGS…` if given (so no event it
            causes is missed), then waits for an event named EVENT whose params match.
              --match K=V   each K (a dotted path, e.g. visibility.hidden) has the value V:
                            a string as it is, anything else as JSON (true, 3, null);
                            several as K=V,K2=V2
              --timeout MS  give up after MS milliseconds (default 5000)
            Prints the event (exactly as received with --json) and exits 0; on timeout
            says what arrived instead and exits 1. The command's own failure is its status.
            """),
    ]

    static func build(_ spec: CommandSpec, _ w: inout Arguments.Words) throws(UsageError) -> Subcommand {
        if spec.name == "advance" {
            let ms = try w.int(try w.expect(["MS"])[0], "MS")
            guard ms >= 0 else { throw w.error("MS must be 0 or more, not \(ms)") }
            return .advance(ms: ms)
        }
        guard let event = w.positionals.first else { throw w.error("missing EVENT") }
        var match: [String: String] = [:]
        for pair in (w.value("--match") ?? "").split(separator: ",") where !pair.isEmpty {
            guard let eq = pair.firstIndex(of: "="), eq != pair.startIndex else {
                throw w.error("--match takes KEY=VALUE (such as phase=idle), not \"\(pair)\"")
            }
            match[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
        }
        let timeout = try w.value("--timeout").map { v throws(UsageError) in try w.int(v, "--timeout") } ?? 5000
        guard timeout > 0 else { throw w.error("--timeout must be a positive number of milliseconds") }
        return .wait(event: event, match: match, timeoutMs: timeout, then: Array(w.positionals.dropFirst()))
    }

    static func run(_ command: Subcommand, options: GlobalOptions, output: Output) async throws -> Int32 {
        let path = SocketPath.resolve(explicit: options.socket)
        let bar = try await TabBar.connect(path: path, options: options.clientOptions)
        switch command {
        case .advance(let ms):
            let r = try await bar.call("clock.advance", .obj(["ms": .int(ms)]))
            output.out(options.json ? r.text : "now \(Format.number(r["now_ms"])) ms")
            return ExitStatus.ok
        case .wait(let event, let match, let timeoutMs, let then):
            let lines = bar.messages()
            _ = try await bar.call("subscribe")
            if !then.isEmpty {
                let status = try runSelf(["--socket", path] + then)
                if status != 0 { return status }
            }
            // At the deadline the connection is closed: the lines end without an error.
            let deadline = Task {
                try await Task.sleep(for: .milliseconds(timeoutMs))
                bar.close()
            }
            defer { deadline.cancel() }
            var seen: [String] = []
            for try await m in lines {
                guard m.json["method"] != nil else { continue }
                if m.json["method"]?.stringValue == event, EventMatch.matches(m.json["params"] ?? .null, match) {
                    output.out(options.json ? m.text : Format.event(m.json))
                    return ExitStatus.ok
                }
                seen.append(m.text)
            }
            let wanted = event + (match.isEmpty ? "" : " with " + match.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))
            output.error("no \(wanted) within \(timeoutMs) ms; " + (seen.isEmpty ? "no event arrived" : "arrived instead: " + seen.joined(separator: " ")))
            return ExitStatus.client
        default:
            return ExitStatus.client
        }
    }

    /// Runs this tabbarctl again with `args`; returns its exit status.
    static func runSelf(_ args: [String]) throws -> Int32 {
        let argv: [UnsafeMutablePointer<CChar>?] = (["tabbarctl"] + args).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let r = posix_spawn(&pid, "/proc/self/exe", nil, nil, argv, environ)
        guard r == 0 else { throw ClientSideError(description: "cannot run tabbarctl \(args.joined(separator: " ")): \(String(cString: strerror(r)))") }
        var status: Int32 = 0
        do throws(Errno) { _ = try Sys.waitpid(pid, &status) } catch {
            throw ClientSideError(description: "cannot wait for tabbarctl \(args.joined(separator: " ")): \(error)")
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : ExitStatus.client
    }
}
