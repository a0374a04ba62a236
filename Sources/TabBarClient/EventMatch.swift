import TabBarCore

/// `KEY=VALUE` matching of event params, shared by `HeadlessDaemon.expect` and `tabbarctl wait`.
public enum EventMatch {
    /// Whether every `path → value` holds in `params`: the path is dotted (`visibility.hidden`);
    /// a string compares as it is, anything else as its JSON text (`true`, `3`, `null`).
    public static func matches(_ params: JSON, _ wanted: [String: String]) -> Bool {
        for (path, value) in wanted {
            var v: JSON? = params
            for key in path.split(separator: ".") { v = v?[String(key)] }
            guard let found = v else { return false }
            if let s = found.stringValue { if s != value { return false } } else if found.text != value { return false }
        }
        return true
    }
}
