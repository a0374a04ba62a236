import Glibc
import TabBarSystem

/// Where the daemon's socket is.
public enum SocketPath {
    /// The socket of a system service (`/run/tabbard/socket`).
    public static let system = "/run/tabbard/socket"

    /// The path to use, in order: `explicit` (`--socket`), `$TABBARD_SOCKET`,
    /// `$XDG_RUNTIME_DIR/tabbard/socket`, then `/run/tabbard/socket` for root
    /// (or `/tmp/tabbard-UID/socket` for other users, as the daemon does) when
    /// `XDG_RUNTIME_DIR` is unset. Empty values count as unset.
    public static func resolve(explicit: String?) -> String {
        resolve(explicit: explicit,
                environment: { name in getenv(name).map { String(cString: $0) } },
                uid: getuid())
    }

    /// `resolve(explicit:)` with the environment and user given, for tests.
    public static func resolve(explicit: String?, environment: (String) -> String?, uid: UInt32) -> String {
        func nonEmpty(_ s: String?) -> String? { s.flatMap { $0.isEmpty ? nil : $0 } }
        if let path = nonEmpty(explicit) { return path }
        if let path = nonEmpty(environment("TABBARD_SOCKET")) { return path }
        if let dir = nonEmpty(environment("XDG_RUNTIME_DIR")), dir.hasPrefix("/") {
            return (dir.hasSuffix("/") ? String(dir.dropLast()) : dir) + "/tabbard/socket"
        }
        return uid == 0 ? system : "/tmp/tabbard-\(uid)/socket"
    }

    /// The fallback directory of `uid` (no `XDG_RUNTIME_DIR`): `/tmp/tabbard-UID`.
    public static func fallbackDirectory(uid: UInt32) -> String { "/tmp/tabbard-\(uid)" }

    /// Why a socket in the fallback directory must not be trusted (nil: it may be, or
    /// `path` is elsewhere). In world-writable /tmp another user could have made that
    /// directory first and put their own socket in it: it must be a directory of ours,
    /// mode 0700, as the daemon makes it (tmux and ssh-agent check the same).
    public static func untrustedDirectory(of path: String) -> String? {
        let dir = fallbackDirectory(uid: getuid())
        guard path.hasPrefix(dir + "/") else { return nil }
        return Sys.privateDirectoryProblem(dir)
    }
}
