@preconcurrency import Glibc

extension Sys {
    /// Why the socket directory `dir` must not be trusted: not a directory of this user's with
    /// mode 0700. The fallback `/tmp/tabbard-UID` is in world-writable /tmp, where another user
    /// could make it first to replace the socket in it (tmux and ssh-agent check the same). The
    /// daemon refuses to listen there and the client to connect there. nil: it is fine, or it
    /// does not exist (nothing to distrust yet).
    public static func privateDirectoryProblem(_ dir: String) -> String? {
        var st = stat()
        if lstat(dir, &st) != 0 {
            let e = Errno()
            return e.code == ENOENT ? nil : "cannot check the socket directory \(dir): \(e)"
        }
        if (st.st_mode & S_IFMT) != S_IFDIR {
            return "the socket directory \(dir) is not a directory; another user may have made it to take over the socket: remove it, or set XDG_RUNTIME_DIR"
        }
        if st.st_uid != getuid() || st.st_mode & 0o777 != 0o700 {
            return "the socket directory \(dir) belongs to uid \(st.st_uid) with mode \(String(st.st_mode & 0o777, radix: 8)), not to uid \(getuid()) with mode 700; another user could replace the socket in it: remove it, or set XDG_RUNTIME_DIR"
        }
        return nil
    }
}
