import Glibc
import TabBarClient
import TabBarCore
import TabBarSystem

/// `tabbarctl pipe`: a line bridge between standard input/output and the daemon's
/// socket, for tools that turn a program's stdio into a connection (websocketd runs
/// one per WebSocket: every message in is a line on stdin, every line out a message).
///
/// Before it connects it checks who is asking, when told to (`--token-file`): the
/// token in `$QUERY_STRING` (`token=…`, as websocketd passes the page's query) must
/// equal the file's. A refusal is one JSON-RPC `permission_denied` error line on
/// stdout (so a page can show it) and exit status 1; nothing reaches the daemon.
/// Then it copies bytes both ways until either side ends: the daemon's `hello`
/// first, then replies and events line by line.
struct Pipe {
    var options: GlobalOptions
    var output: Output
    /// The 0600 file holding the expected token (nil: no token check).
    var tokenFile: String?

    /// The environment variable the presented token is read from (websocketd's CGI variable).
    static let queryVariable = "QUERY_STRING"

    func run() async throws -> Int32 {
        if let tokenFile {
            if let refusal = Pipe.refusal(tokenFile: tokenFile, query: Pipe.env(Pipe.queryVariable)) ?? PeerCheck.refusal() {
                Pipe.writeAll(1, Array(Pipe.errorLine(refusal).utf8))
                output.error(refusal)
                return ExitStatus.client
            }
        }
        let bar: TabBar
        do {
            bar = try await TabBar.connect(path: SocketPath.resolve(explicit: options.socket), options: options.clientOptions)
        } catch {
            Pipe.writeAll(1, Array(Pipe.errorLine("tabbarctl pipe cannot reach tabbard: \(error)", kind: "unavailable").utf8))
            throw error
        }
        let lines = bar.messages()
        // The hello was read by the client: hand it on first.
        let hello = JSON.obj(["jsonrpc": .string("2.0"), "method": .string("hello"), "params": bar.hello.json])
        Pipe.writeAll(1, Array((hello.text + "\n").utf8))
        signal(SIGPIPE, SIG_IGN)
        Pipe.forwardInput(to: bar)
        return await Pipe.pump(lines)
    }

    /// Copies the daemon's lines to stdout until the daemon closes (0) or stdout breaks (1).
    static func pump(_ lines: AsyncThrowingStream<ReceivedMessage, any Error>) async -> Int32 {
        do {
            for try await m in lines {
                if !writeAll(1, Array((m.text + "\n").utf8)) { return ExitStatus.client }
            }
            return ExitStatus.ok
        } catch ClientError.closed {
            return ExitStatus.ok
        } catch {
            return ExitStatus.client
        }
    }

    /// Copies stdin to the daemon as it comes, on a thread of its own (stdin is read blocking,
    /// and no faster than the daemon reads: `sendBlocking`). The daemon frames the lines and
    /// refuses bad ones itself. At the end of stdin the connection is half-closed, so every
    /// reply still arrives.
    static func forwardInput(to bar: TabBar) {
        let started = startThread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            reading: while true {
                switch try? Sys.read(0, into: &buffer) {
                case .done(let n)? where n > 0:
                    do { try bar.sendBlocking(Array(buffer[0..<n])) } catch { break reading }  // (the daemon's lines say why)
                case .wouldBlock?:
                    var p = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
                    _ = try? Sys.poll(&p, timeoutMs: -1)
                default:
                    break reading
                }
            }
            bar.closeWrite()
        }
        if started != 0 { bar.closeWrite() }
    }

    /// Why the presented token is refused, or nil when it matches the file's.
    static func refusal(tokenFile: String, query: String?) -> String? {
        let expected: [UInt8]
        do {
            expected = try Runner.readAll(tokenFile).filter { $0 != 10 && $0 != 13 && $0 != 32 }
        } catch {
            return "the bridge cannot read its token file (\(error)); restart tabbard-web"
        }
        guard expected.count >= 16 else { return "the token file \(tokenFile) holds no token; restart tabbard-web" }
        guard let presented = token(inQuery: query) else {
            return "no token: open the address tabbard-web printed (it ends in ?token=…)"
        }
        // Compare every byte whatever the first difference (no timing hint).
        var diff = presented.count == expected.count ? 0 : 1
        for (i, b) in presented.enumerated() { diff |= Int(b ^ expected[i % expected.count]) }
        return diff == 0 ? nil : "wrong token: only the pages tabbard-web printed for the daemon's user may connect"
    }

    /// The value of `token=` in a query string (`a=1&token=abc`), as bytes.
    static func token(inQuery query: String?) -> [UInt8]? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") where pair.hasPrefix("token=") {
            let value = Array(pair.dropFirst(6).utf8)
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// A JSON-RPC error line a page shows: `permission_denied` unless `kind` says otherwise.
    static func errorLine(_ message: String, kind: String = "permission_denied") -> String {
        let code = kind == "permission_denied" ? -32007 : -32603
        let error = JSON.obj(["code": .int(code), "message": .string(message), "data": .obj(["kind": .string(kind)])])
        return JSON.obj(["jsonrpc": .string("2.0"), "id": .null, "error": error]).text + "\n"
    }

    static func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// Writes every byte (waiting on a non-blocking descriptor); false when the other end is gone.
    @discardableResult
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            switch try? Sys.write(fd, bytes, offset..<bytes.count) {
            case .done(let n)? where n > 0:
                offset += n
            case .wouldBlock?:
                var p = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
                _ = try? Sys.poll(&p, timeoutMs: -1)  // (a failure shows in the next write)
            default:
                return false
            }
        }
        return true
    }
}

extension Pipe {
    static let help = """
        Connects to the daemon, prints its hello, then copies every line of standard
        input to the daemon and every line from it to standard output, until either
        side ends (at the end of input it still prints the replies). tabbard-web runs
        it under websocketd, one per WebSocket connection (docs/WEB.md).
          --token-file FILE  refuse unless $QUERY_STRING has token=<the file's content>;
                             the refusal is one permission_denied error line, status 1
        """
}
