import Glibc

/// One daemon per application: the socket of a named instance (`tabbard@NAME.socket`).
extension SocketPath {
    /// Whether `name` can name an instance: not empty, no `/`, not `.` or `..`, at most 100 bytes.
    public static func isValidInstance(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && name != "." && name != ".." && name.utf8.count <= 100
    }

    /// The socket of instance `name`: `$XDG_RUNTIME_DIR/tabbard/NAME.socket` (where
    /// `tabbard@NAME.socket` listens), else next to the default socket when
    /// `XDG_RUNTIME_DIR` is unset (`/run/tabbard/NAME.socket` for root,
    /// `/tmp/tabbard-UID/NAME.socket` for others).
    public static func instance(_ name: String, environment: (String) -> String?, uid: UInt32) -> String {
        let env: (String) -> String? = { key in key == "TABBARD_SOCKET" ? nil : environment(key) }
        let plain = resolve(explicit: nil, environment: env, uid: uid)
        let dir = plain.hasSuffix("/socket") ? String(plain.dropLast("/socket".count)) : plain
        return dir + "/" + name + ".socket"
    }

    /// The path a client uses, in order: `explicit` (`--socket`), `instance` (`--instance`),
    /// `$TABBARD_SOCKET`, `$TABBARD_INSTANCE`, then `resolve(explicit: nil)`'s defaults.
    /// Empty values count as unset.
    public static func resolve(explicit: String?, instance: String?, environment: (String) -> String?, uid: UInt32) -> String {
        func nonEmpty(_ s: String?) -> String? { s.flatMap { $0.isEmpty ? nil : $0 } }
        if let path = nonEmpty(explicit) { return path }
        if let name = nonEmpty(instance) { return self.instance(name, environment: environment, uid: uid) }
        if let path = nonEmpty(environment("TABBARD_SOCKET")) { return path }
        if let name = nonEmpty(environment("TABBARD_INSTANCE")) { return self.instance(name, environment: environment, uid: uid) }
        return resolve(explicit: nil, environment: environment, uid: uid)
    }

    /// `resolve(explicit:instance:environment:uid:)` with this process's environment and user.
    public static func resolve(explicit: String?, instance: String?) -> String {
        resolve(explicit: explicit, instance: instance,
                environment: { name in getenv(name).map { String(cString: $0) } }, uid: getuid())
    }
}
