@preconcurrency import Glibc
import Synchronization

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

extension Priority {
    /// The name `log_level` and `--log-level` take.
    public var name: String {
        switch self {
        case .error: return "error"
        case .warning: return "warning"
        case .notice: return "notice"
        case .info: return "info"
        case .debug: return "debug"
        }
    }
}

/// One line per record on stderr, `message key=value …`, in the form that suits where
/// stderr goes:
/// - the journal (`$JOURNAL_STREAM` names stderr's device and inode, as systemd sets it
///   for `StandardError=journal`): `<N>message key=value` — journald reads the priority
///   from the prefix and stamps the time itself;
/// - anything else (a terminal, a pipe, a file): `2026-12-01 10:50:03.123 warning: message key=value`,
///   local time.
/// Either way a record is exactly one line: control characters in the message are
/// escaped, and a value with a space, `"`, `\`, `=` or a control character is quoted
/// with C-style escapes (`\"`, `\\`, `\n`, `\t`, `\x00`), so `key=value` pairs parse back.
public enum Log {
    /// The least urgent priority written. Set on the state loop (start, SIGHUP), read by
    /// every thread that logs (the audio thread's messages come here too): an atomic.
    public static var level: Priority {
        get { Priority(rawValue: storedLevel.load(ordering: .relaxed)) ?? .info }
        set { storedLevel.store(newValue.rawValue, ordering: .relaxed) }
    }
    private static let storedLevel = Atomic<Int32>(Priority.info.rawValue)

    /// Whether stderr is the journal (decided once).
    public static let toJournal: Bool = stderrIsJournal(Posix.env("JOURNAL_STREAM"))

    /// `JOURNAL_STREAM` is `DEVICE:INODE` of the stream systemd connected; it is inherited by
    /// children whose stderr may go elsewhere, so it counts only when it matches fd 2.
    static func stderrIsJournal(_ value: String?) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }

    public static func write(_ p: Priority, _ message: String, _ meta: KeyValuePairs<String, String> = [:]) {
        guard p <= level else { return }
        let line = format(p, message, meta, journal: toJournal, time: toJournal ? "" : timestamp())
        line.withCString { _ = fputs($0, stderr) }
    }

    /// One record as it is written (with its newline).
    static func format(_ p: Priority, _ message: String, _ meta: KeyValuePairs<String, String>, journal: Bool, time: String) -> String {
        var line = journal ? "<\(p.rawValue)>" : "\(time) \(p.name): "
        line += escaped(message)
        for (k, v) in meta {
            line += " \(k)="
            line += needsQuotes(v) ? quoted(v) : v
        }
        line += "\n"
        return line
    }

    /// Local time with milliseconds: `2026-12-01 10:50:03.123`.
    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = ts.tv_sec
        var tm = tm()
        localtime_r(&t, &tm)
        var buf = [CChar](repeating: 0, count: 32)
        let n = strftime(&buf, buf.count, "%Y-%m-%d %H:%M:%S", &tm)
        let ms = Int(ts.tv_nsec / 1_000_000)
        let head = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return head + "." + (ms < 10 ? "00" : ms < 100 ? "0" : "") + String(ms)
    }

    static func isControl(_ u: Unicode.Scalar) -> Bool {
        u.value < 0x20 || (u.value >= 0x7F && u.value < 0xA0) || u.value == 0x2028 || u.value == 0x2029
    }

    static func needsQuotes(_ v: String) -> Bool {
        v.isEmpty || v.unicodeScalars.contains { $0 == " " || $0 == "\"" || $0 == "\\" || $0 == "=" || isControl($0) }
    }

    /// `s` with its control characters escaped (`\n`, `\t`, `\x00`, `\u{2028}`); nothing else changes.
    public static func escaped(_ s: String, quotes: Bool = false) -> String {
        guard s.unicodeScalars.contains(where: { isControl($0) || (quotes && ($0 == "\"" || $0 == "\\")) }) else { return s }
        var out = String.UnicodeScalarView()
        func put(_ t: String) { out.append(contentsOf: t.unicodeScalars) }
        for u in s.unicodeScalars {
            switch u {
            case "\n": put("\\n")
            case "\r": put("\\r")
            case "\t": put("\\t")
            case "\"" where quotes: put("\\\"")
            case "\\" where quotes: put("\\\\")
            case _ where u.value < 0x80 && isControl(u):
                put("\\x" + (u.value < 0x10 ? "0" : "") + String(u.value, radix: 16))
            case _ where isControl(u): put("\\u{" + String(u.value, radix: 16) + "}")
            default: out.append(u)
            }
        }
        return String(out)
    }

    /// `s` in double quotes with `"`, `\` and control characters escaped.
    public static func quoted(_ s: String) -> String { "\"" + escaped(s, quotes: true) + "\"" }

    public static func error(_ m: String, _ meta: KeyValuePairs<String, String> = [:]) { write(.error, m, meta) }
    public static func warning(_ m: String, _ meta: KeyValuePairs<String, String> = [:]) { write(.warning, m, meta) }
    public static func notice(_ m: String, _ meta: KeyValuePairs<String, String> = [:]) { write(.notice, m, meta) }
    public static func info(_ m: String, _ meta: KeyValuePairs<String, String> = [:]) { write(.info, m, meta) }
    public static func debug(_ m: String, _ meta: KeyValuePairs<String, String> = [:]) { write(.debug, m, meta) }
}
