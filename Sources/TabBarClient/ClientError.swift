import TabBarCore

/// Why a client operation failed. `description` is one line a person can act on.
public enum ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The socket at `path` could not be reached; `reason` says why and what to do.
    case connect(path: String, reason: String)
    /// A system call on the connection failed.
    case io(String)
    /// The daemon closed the connection (or `close()` was called).
    case closed
    /// No reply (or no hello) came within the connection's timeout.
    case timeout
    /// The daemon sent something that is not what the protocol promises.
    case protocolViolation(String)
    /// The daemon answered with an error reply: JSON-RPC `code`, stable `data.kind`,
    /// its `message`, and the whole `data` object.
    case rpc(code: Int, kind: String, message: String, data: JSON)

    /// One line saying what failed and what to do.
    public var description: String {
        switch self {
        case .connect(let path, let reason):
            return "cannot connect to \(path): \(reason)"
        case .io(let what):
            return "lost the connection to tabbard: \(what)"
        case .closed:
            return "tabbard closed the connection (did it stop or restart? check `systemctl --user status tabbard` or its log)"
        case .timeout:
            return "tabbard did not answer in time (is it stuck or overloaded? retry, or raise --timeout)"
        case .protocolViolation(let what):
            return "tabbard sent something unexpected: \(what) (is the socket really tabbard's, and are client and daemon versions compatible?)"
        case .rpc(_, let kind, let message, _):
            return "\(message) (\(kind))"
        }
    }

    /// The error of an error reply (`{"code","message","data":{"kind"}}`).
    static func fromReply(_ error: JSON) -> ClientError {
        let code = error["code"]?.intValue ?? -32603
        let message = error["message"]?.stringValue ?? "the daemon reported an error without a message"
        let data = error["data"] ?? .null
        let kind = data["kind"]?.stringValue ?? "unknown"
        return .rpc(code: code, kind: kind, message: message, data: data)
    }
}
