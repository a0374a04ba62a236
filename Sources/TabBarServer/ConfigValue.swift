import TabBarCore

/// One value of a config file with the key path that leads to it (`allowed_uids[0]`),
/// and typed readers that refuse, in config wording, anything but what the key takes.
/// The number rule is the protocol's (docs/PROTOCOL.md, "Numbers"): a whole number is
/// written as one — no fraction, no exponent — and is in range, or it is refused.
struct ConfigValue {
    let json: JSON
    let key: String

    func wrong(_ what: String) -> ConfigError { ConfigError(key: key, "must be \(what), not \(ConfigValue.show(json))") }

    /// A value as a message shows it: a type for containers, the short text of a scalar.
    static func show(_ v: JSON) -> String {
        switch v {
        case .array: return "an array"
        case .object: return "an object"
        default:
            let t = v.text
            return t.utf8.count <= 40 ? t : String(t.prefix(37)) + "..."
        }
    }

    func int(_ range: ClosedRange<Int>) throws(ConfigError) -> Int {
        let what = "a whole number from \(range.lowerBound) to \(range.upperBound)"
        guard case .number(let text) = json, JSON.isIntegerLiteral(text), let i = Int(text), range.contains(i) else {
            throw wrong(what)
        }
        return i
    }

    func string(maxBytes: Int = 4096) throws(ConfigError) -> String {
        guard case .string(let s) = json else { throw wrong("a string") }
        if s.utf8.contains(0) { throw ConfigError(key: key, "must not contain a NUL character (\\u0000)") }
        if s.utf8.count > maxBytes { throw ConfigError(key: key, "is \(s.utf8.count) bytes long; at most \(maxBytes) are allowed") }
        return s
    }

    /// A file system path: a non-empty string without NUL, at most PATH_MAX bytes.
    func path() throws(ConfigError) -> String {
        let s = try string(maxBytes: 4095)
        if s.isEmpty { throw ConfigError(key: key, "must be a path, not an empty string") }
        return s
    }

    func choice(_ allowed: [String]) throws(ConfigError) -> String {
        let list = allowed.map { "\"\($0)\"" }.joined(separator: ", ")
        guard case .string(let s) = json, allowed.contains(s) else { throw wrong("one of \(list)") }
        return s
    }

    func array() throws(ConfigError) -> [ConfigValue] {
        guard case .array(let a) = json else { throw wrong("an array") }
        return a.enumerated().map { ConfigValue(json: $1, key: "\(key)[\($0)]") }
    }

    func members() throws(ConfigError) -> [(name: String, value: ConfigValue)] {
        guard case .object(let m) = json else { throw wrong("an object") }
        return m.map { ($0.key, ConfigValue(json: $0.value, key: "\(key).\($0.key)")) }
    }

    /// A uid or gid: 0 … 4294967294 ((uid_t)-1 means "none" to the kernel).
    func id() throws(ConfigError) -> UInt32 {
        guard case .number(let text) = json, JSON.isIntegerLiteral(text), let i = UInt32(text), i != UInt32.max else {
            throw wrong("a numeric id from 0 to 4294967294")
        }
        return i
    }
}

/// A configuration problem, stated for a person, on one line: the file, the key, what is wrong.
public struct ConfigError: Error, CustomStringConvertible, Sendable {
    public var message: String
    /// (Control characters — a key may hold any — are escaped: the message stays one line.)
    public init(_ message: String) { self.message = Log.escaped(message) }
    init(key: String, _ problem: String) { self.init("\(key): \(problem)") }
    public var description: String { message }

    /// This error as found in `file`.
    func inFile(_ file: String) -> ConfigError { ConfigError("\(file): \(message)") }
}
