/// An error reply: JSON-RPC `code`, a stable `data.kind`, and a sentence a person can act on.
public struct RPCError: Error, Equatable, Sendable {
    public var code: Int
    public var kind: String
    public var message: String
    /// For `invalid_params`: the offending field (`data.field`).
    public var field: String?
    /// Further members of `data` (for example the current `seq` of a `conflict`).
    public var extra: [JSON.Member]

    public init(code: Int, kind: String, message: String, field: String? = nil, extra: [JSON.Member] = []) {
        self.code = code
        self.kind = kind
        self.message = message
        self.field = field
        self.extra = extra
    }

    /// The `error` object of a reply.
    public var json: JSON {
        var data: [JSON.Member] = [JSON.Member("kind", .string(kind))]
        if let field { data.append(JSON.Member("field", .string(field))) }
        data.append(contentsOf: extra)
        return .object([
            JSON.Member("code", .int(code)),
            JSON.Member("message", .string(message)),
            JSON.Member("data", .object(data)),
        ])
    }

    // MARK: The contract's error table

    public static func parseError(_ detail: String) -> RPCError {
        RPCError(code: -32700, kind: "parse_error", message: "The line is not valid JSON: \(detail).")
    }
    public static func invalidRequest(_ message: String) -> RPCError {
        RPCError(code: -32600, kind: "invalid_request", message: message)
    }
    public static func lineTooLong(limit: Int) -> RPCError {
        RPCError(code: -32600, kind: "line_too_long",
                 message: "The line is longer than max_line (\(limit) bytes); it was discarded. Send shorter lines.",
                 extra: [JSON.Member("max_line", .int(limit))])
    }
    public static let batchUnsupported = RPCError(
        code: -32600, kind: "batch_unsupported",
        message: "Batches (JSON arrays) are not supported; send one request object per line.")
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: -32601, kind: "method_not_found",
                 message: "There is no method \"\(method)\". See docs/PROTOCOL.md for the list.",
                 extra: [JSON.Member("method", .string(method))])
    }
    public static func invalidParams(_ field: String, _ message: String) -> RPCError {
        RPCError(code: -32602, kind: "invalid_params", message: message, field: field)
    }
    public static func internalError(_ message: String) -> RPCError {
        RPCError(code: -32603, kind: "internal_error", message: "Internal error: \(message). The daemon keeps running; please report this.")
    }
    public static func unknownTab(_ tab: String) -> RPCError {
        RPCError(code: -32001, kind: "unknown_tab", message: "There is no item \"\(tab)\" in the bar.",
                 extra: [JSON.Member("tab", .string(tab))])
    }
    public static func unknownIndex(_ index: Int, count: Int) -> RPCError {
        RPCError(code: -32001, kind: "unknown_tab",
                 message: "There is no item at index \(index); the bar has \(count) items (0…\(max(0, count - 1))).",
                 extra: [JSON.Member("index", .int(index))])
    }
    public static func notSelectable(_ tab: String, _ why: String) -> RPCError {
        RPCError(code: -32002, kind: "not_selectable", message: "Item \"\(tab)\" cannot be selected: \(why).",
                 extra: [JSON.Member("tab", .string(tab))])
    }
    public static func conflict(expected: Int, current: UInt64) -> RPCError {
        RPCError(code: -32003, kind: "conflict",
                 message: "The state changed: if_seq was \(expected) but the current seq is \(current). Re-read the state and retry.",
                 extra: [JSON.Member("seq", .int(current))])
    }
    public static func unknownSound(_ name: String) -> RPCError {
        RPCError(code: -32004, kind: "unknown_sound", message: "There is no sound \"\(name)\"; `sound.list` shows the loaded sounds.",
                 extra: [JSON.Member("name", .string(name))])
    }
    /// A sound that was to be loaded (a file in a sound directory, a `sound_files` entry) but
    /// is not: the file's problem, or (at start-up) that it is still loading.
    public static func soundNotLoaded(_ name: String, _ reason: String) -> RPCError {
        RPCError(code: -32011, kind: "sound_not_loaded", message: "The sound \"\(name)\" is not loaded: \(reason).",
                 extra: [JSON.Member("name", .string(name)), JSON.Member("reason", .string(reason))])
    }
    public static func audioUnavailable(_ why: String) -> RPCError {
        RPCError(code: -32005, kind: "audio_unavailable", message: "The audio device cannot play now: \(why).")
    }
    public static func limitExceeded(_ message: String) -> RPCError {
        RPCError(code: -32006, kind: "limit_exceeded", message: message)
    }
    public static func permissionDenied(_ message: String) -> RPCError {
        RPCError(code: -32007, kind: "permission_denied", message: message)
    }
    /// A change that could not be saved (`why`), with what to do about it (`advice`, one sentence, no full stop).
    public static func storageFailed(_ why: String, advice: String) -> RPCError {
        RPCError(code: -32008, kind: "storage_failed",
                 message: "The change was not made: the state could not be saved (\(why)). \(advice); reads and sounds still work.")
    }
}
