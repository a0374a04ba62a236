import Glibc
import TabBarClient
import TabBarCore

/// `tabbarctl monitor`: subscribe, print the snapshot, then one line per event.
struct Monitor {
    var options: GlobalOptions
    var output: Output

    /// Ctrl-C and SIGTERM end the monitor with status 0. Every line is already
    /// flushed, so leaving at once loses nothing.
    static func installSignalHandlers() {
        signal(SIGINT) { _ in _exit(0) }
        signal(SIGTERM) { _ in _exit(0) }
        // A parent may have left these blocked (the mask survives exec): unblock them.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// How one subscription ended.
    enum End {
        /// `server.stopping` arrived.
        case stopped
        /// The connection closed or failed without it.
        case dropped(String)
    }

    func run(_ command: Subcommand, connect: () async throws -> TabBar) async throws -> Int32 {
        guard let (method, params) = Plan.request(command) else { return ExitStatus.client }
        var follows = false
        if case .monitor(_, let f) = command { follows = f }
        var bar = try await connect()
        while true {
            let lines = bar.messages()  // (before subscribing: no event is missed)
            let snapshot = try await bar.call(method, params)
            output.out(options.json ? snapshot.text : Monitor.snapshotLine(snapshot))
            let end = try await follow(lines)
            bar.close()
            if !follows {
                switch end {
                case .stopped: return ExitStatus.ok
                case .dropped:
                    output.error("tabbard closed the connection without saying it was stopping (did it crash? check its log, then \(TabBar.startAdvice); `tabbarctl monitor --follow` waits for it)")
                    return ExitStatus.client
                }
            }
            switch end {
            case .stopped: output.error("tabbard is stopping; waiting for it to come back (Ctrl-C to quit)")
            case .dropped(let why): output.error("lost tabbard (\(why)); waiting for it to come back (Ctrl-C to quit)")
            }
            bar = await reconnect(connect)
            output.error("reconnected to tabbard; subscribing again")
        }
    }

    /// Tries `connect` every 200 ms until it succeeds (the person ends this with Ctrl-C).
    func reconnect(_ connect: () async throws -> TabBar) async -> TabBar {
        while true {
            if let bar = try? await connect() { return bar }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    /// `seq 12 subscribed: 4 items (home chat compose me), selected home, …`.
    static func snapshotLine(_ result: JSON) -> String {
        "seq \(Format.number(result["seq"])) subscribed: " + Format.summary(result["state"] ?? .null)
    }

    /// Prints the lines (events) until `server.stopping` or the connection drops.
    func follow(_ lines: AsyncThrowingStream<ReceivedMessage, any Error>) async throws -> End {
        do {
            for try await message in lines {
                output.out(options.json ? message.text : Format.event(message.json))
                if message.json["method"]?.stringValue == "server.stopping" { return .stopped }
            }
            return .dropped("the connection closed")
        } catch ClientError.closed {
            return .dropped("the connection closed")
        } catch ClientError.io(let what) {
            return .dropped(what)
        }
    }
}
