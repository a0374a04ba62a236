import Glibc
import TabBarClient
import TabBarCore

/// tabbarctl speaks of what the person typed: its messages name tabbarctl commands and
/// options, not protocol methods, and say how to start the daemon the way it is installed.
/// (`--json` output keeps the protocol's own terms.)
enum Wording {
    /// Whether `executable` is a build inside a source tree (`…/REPO/.build/…/tabbarctl`
    /// next to `REPO/Package.swift`), where `make run` starts the daemon.
    static func isSourceTree(executable: String, exists: (String) -> Bool = { access($0, F_OK) == 0 }) -> Bool {
        guard let range = executable.firstRange(of: "/.build/") else { return false }
        return exists(String(executable[..<range.lowerBound]) + "/Package.swift")
    }

    /// How to start the daemon this invocation talks to.
    static func startAdvice(sourceTree: Bool, instance: String?, systemSocket: Bool) -> String {
        if sourceTree { return "start it with `make run`" }
        if let instance { return "start it with `systemctl --user start tabbard@\(instance).socket`" }
        if systemSocket { return "start it with `systemctl start tabbard.socket`" }
        return "start it with `systemctl --user start tabbard.socket` (or run `tabbard &`)"
    }

    /// `startAdvice` for this process: its executable, options and environment.
    static func startAdvice(options: GlobalOptions) -> String {
        let exe = (try? readLink("/proc/self/exe")) ?? CommandLine.arguments.first ?? ""
        let path = SocketPath.resolve(explicit: options.socket, instance: options.instance)
        let instance = options.instance ?? getenv("TABBARD_INSTANCE").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        return startAdvice(sourceTree: isSourceTree(executable: exe), instance: options.socket == nil ? instance : nil,
                           systemSocket: path == SocketPath.system)
    }

    static func readLink(_ path: String) throws -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink(path, &buf, buf.count - 1)
        guard n > 0 else { throw ClientSideError(description: "readlink \(path)") }
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A daemon error as a person reads it: protocol names in its message replaced by the
    /// tabbarctl command or option that does the same thing.
    static func humane(_ message: String, data: JSON) -> String {
        if data["field"]?.stringValue == "initial" {
            return "this tabbard cannot go back to its configured bar (it is older than `tabbarctl reset`); restart it, or use `tabbarctl configure FILE`"
        }
        let tab = data["tab"]?.stringValue ?? "TAB"
        var m = message
        let replacements: [(String, String)] = [
            ("use action.trigger", "use `tabbarctl action \(tab)`"),
            ("use tab.select", "use `tabbarctl select \(tab)`"),
            ("`sound.list` shows the loaded sounds", "`tabbarctl sounds` lists the loaded sounds"),
            ("pop screens with nav.pop first", "pop screens with `tabbarctl pop` first"),
            ("if_seq was", "--if-seq was"),
        ]
        for (from, to) in replacements { m = m.replacing(from, with: to) }
        return m
    }
}
