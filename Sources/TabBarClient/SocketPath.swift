import Glibc

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
        return privateDirectoryProblem(dir)
    }

    /// Why `dir` is not a directory owned by this user with mode 0700 (nil: it is, or it does not exist).
    public static func privateDirectoryProblem(_ dir: String) -> String? {
        var st = stat()
        if lstat(dir, &st) != 0 { return nil }
        if (st.st_mode & S_IFMT) != S_IFDIR {
            return "\(dir) is not a directory; someone else may have made it to take over tabbard's socket: remove it or set XDG_RUNTIME_DIR"
        }
        if st.st_uid != getuid() || st.st_mode & 0o777 != 0o700 {
            return "\(dir) belongs to uid \(st.st_uid) with mode \(String(st.st_mode & 0o777, radix: 8)), not to uid \(getuid()) with mode 700; another user could replace the socket in it: remove it or set XDG_RUNTIME_DIR"
        }
        return nil
    }
}
