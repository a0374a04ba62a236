import Glibc
import Synchronization
import TabBarCore
import TabBarSystem

/// A blocking connection to tabbard: requests with `call`, events with `nextMessage`.
///
/// Not thread-safe: use one connection from one thread at a time. The socket
/// is non-blocking; a front end with its own `poll` loop may watch
/// `fileDescriptor` for input, but must first drain `hasBufferedMessages`.
public final class TabBarConnection {
    /// The params of the daemon's `hello` notification (`server`, `version`, `protocol`, `max_line`, `features`).
    public let hello: JSON
    /// How long `call`, `notify` and `sendRaw` wait for the daemon, in milliseconds.
    public let timeoutMs: Int

    private let channel: LineChannel
    /// Lines that arrived while `call` waited for its reply, in arrival order.
    private var pending: [ReceivedMessage] = []
    private var nextID = 1
    /// Ids of calls that gave up waiting; their late replies are dropped.
    private var abandoned: Set<Int> = []

    /// Connects to the socket at `path` and reads the `hello` notification.
    public convenience init(path: String, timeoutMs: Int = 5000) throws {
        if let why = SocketPath.untrustedDirectory(of: path) { throw ClientError.connect(path: path, reason: why) }
        let fd = try Wire.connectSocket(path: path)
        try self.init(fileDescriptor: fd, timeoutMs: timeoutMs)
    }

    /// Adopts a connected stream socket (from `socketpair`, socket activation…)
    /// and reads the `hello` notification. The connection owns `fd` from now on,
    /// also when this throws.
    public init(fileDescriptor fd: Int32, timeoutMs: Int = 5000) throws {
        channel = try LineChannel(fd: fd)
        self.timeoutMs = timeoutMs
        do {
            guard let first = try channel.next(deadline: .after(ms: timeoutMs)) else { throw ClientError.timeout }
            if first.json["method"]?.stringValue == "hello" {
                hello = first.json["params"] ?? .obj([:])
            } else if let error = first.json["error"], first.json["method"] == nil {
                // Refused before the greeting (too many clients, not allowed…).
                throw ClientError.fromReply(error)
            } else {
                throw ClientError.protocolViolation("expected the hello notification first, got \(Wire.excerpt(first.text))")
            }
        } catch {
            channel.close()
            throw error
        }
    }

    deinit { channel.close() }

    /// The socket, for a front end's own `poll` loop (-1 once closed).
    public var fileDescriptor: Int32 { channel.fd }

    /// Whether `nextMessage` has a message without reading the socket.
    public var hasBufferedMessages: Bool { !pending.isEmpty || channel.hasBuffered }

    /// Sends a request with a fresh numeric id and waits up to `timeoutMs` for its
    /// reply. Returns `result`; throws `ClientError.rpc` for an error reply.
    /// Events (and other lines) that arrive meanwhile are kept for `nextMessage`.
    public func call(_ method: String, _ params: JSON? = nil) throws -> JSON {
        let id = nextID
        nextID += 1
        let deadline = Deadline.after(ms: timeoutMs)
        do {
            try channel.send(Wire.requestLine(id: id, method: method, params: params), deadline: deadline)
            while true {
                guard let m = try channel.next(deadline: deadline) else { throw ClientError.timeout }
                guard let replyID = Self.replyID(m.json) else {
                    pending.append(m)
                    continue
                }
                if replyID == id {
                    if let error = m.json["error"] { throw ClientError.fromReply(error) }
                    guard let result = m.json["result"] else {
                        throw ClientError.protocolViolation("the reply to \(method) has neither result nor error: \(Wire.excerpt(m.text))")
                    }
                    return result
                }
                if let late = replyID, abandoned.remove(late) != nil { continue }
                pending.append(m)
            }
        } catch let error as ClientError {
            if case .rpc = error {} else { abandoned.insert(id) }
            throw error
        }
    }

    /// Sends a notification (no id): the daemon carries it out and replies nothing.
    public func notify(_ method: String, _ params: JSON? = nil) throws {
        try channel.send(Wire.requestLine(id: nil, method: method, params: params), deadline: .after(ms: timeoutMs))
    }

    /// Sends `line` as it is (a newline is added when missing). For tests and tools.
    public func sendRaw(_ line: String) throws {
        var bytes = Array(line.utf8)
        if bytes.last != 0x0A { bytes.append(0x0A) }
        try channel.send(bytes, deadline: .after(ms: timeoutMs))
    }

    /// The next queued event, or else the next line from the socket, waiting up to
    /// `timeoutMs` (forever when nil; 0 only takes what is already there).
    /// Returns nil on timeout; throws `.closed` when the daemon has closed.
    public func nextMessage(timeoutMs: Int?) throws -> JSON? {
        try nextReceived(timeoutMs: timeoutMs)?.json
    }

    /// Like `nextMessage`, with the exact text of the line as it was received.
    public func nextReceived(timeoutMs: Int?) throws -> ReceivedMessage? {
        if !pending.isEmpty { return pending.removeFirst() }
        let deadline = timeoutMs.map { Deadline.after(ms: $0) }
        while true {
            guard let m = try channel.next(deadline: deadline) else { return nil }
            if let replyID = Self.replyID(m.json), let late = replyID, abandoned.remove(late) != nil { continue }
            return m
        }
    }

    /// Closes the socket; later calls throw `.closed`.
    public func close() {
        channel.close()
        pending.removeAll()
    }

    // MARK: - Helpers

    /// `.some(id)` for a reply (an `id` with `result` or `error` and no `method`);
    /// the inner value is nil when the id is not one of ours (null, a string…).
    static func replyID(_ message: JSON) -> Int?? {
        guard message["method"] == nil, let id = message["id"],
              message["result"] != nil || message["error"] != nil else { return nil }
        if case .number = id { return .some(id.intValue) }
        return .some(nil)
    }

    // MARK: - Connecting

}
