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

    func run(_ command: Subcommand, connection: TabBarConnection) throws -> Int32 {
        guard let (method, params) = Plan.request(command) else { return ExitStatus.client }
        let snapshot = try connection.call(method, params)
        output.out(options.json ? snapshot.text : Monitor.snapshotLine(snapshot))
        return try follow(connection)
    }

    /// `seq 12 subscribed: 4 items (home chat compose me), selected home, …`.
    static func snapshotLine(_ result: JSON) -> String {
        "seq \(Format.number(result["seq"])) subscribed: " + Format.summary(result["state"] ?? .null)
    }

    /// Prints events until `server.stopping` (status 0) or the connection drops (status 1).
    func follow(_ connection: TabBarConnection) throws -> Int32 {
        while true {
            let message: ReceivedMessage
            do {
                guard let m = try connection.nextReceived(timeoutMs: nil) else { continue }
                message = m
            } catch ClientError.closed {
                output.error("tabbard closed the connection without saying it was stopping (did it crash? check its log, then restart it with `make run`)")
                return ExitStatus.client
            }
            output.out(options.json ? message.text : Format.event(message.json))
            if message.json["method"]?.stringValue == "server.stopping" { return ExitStatus.ok }
        }
    }
}
