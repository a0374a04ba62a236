@preconcurrency import Glibc

/// Log priority, as journald reads it from a `<N>` prefix on stderr.
public enum Priority: Int32, Comparable, Sendable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7

    public static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }

    public init?(name: String) {
        switch name.lowercased() {
        case "error", "err", "3": self = .error
        case "warning", "warn", "4": self = .warning
        case "notice", "5": self = .notice
        case "info", "6": self = .info
        case "debug", "7": self = .debug
        default: return nil
        }
    }
}

/// One line per record on stderr: `<N>message key=value …`.
public enum Log {
    nonisolated(unsafe) public static var level: Priority = .info

    public static func write(_ p: Priority, _ message: String, _ meta: KeyValuePairs<String, String> = [:]) {
        guard p <= level else { return }
        var line = "<\(p.rawValue)>"
        line += message.replacingNewlines()
        for (k, v) in meta {
            line += " \(k)="
            line += v.contains(" ") || v.isEmpty ? "\"\(v.replacingNewlines())\"" : v.replacingNewlines()
        }
        line += "\n"
        line.withCString { _ = fputs($0, stderr) }
    }

    public static func error(_ m: String, _ meta: KeyValuePairs<String, String> = [:]) { write(.error, m, meta) }
    public static func warning(_ m: String, _ meta: KeyValuePairs<String, String> = [:]) { write(.warning, m, meta) }
    public static func notice(_ m: String, _ meta: KeyValuePairs<String, String> = [:]) { write(.notice, m, meta) }
    public static func info(_ m: String, _ meta: KeyValuePairs<String, String> = [:]) { write(.info, m, meta) }
    public static func debug(_ m: String, _ meta: KeyValuePairs<String, String> = [:]) { write(.debug, m, meta) }
}

extension String {
    func replacingNewlines() -> String {
        guard contains(where: { $0 == "\n" || $0 == "\r" }) else { return self }
        return String(map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
