import Glibc

/// Who is on the other end of a loopback WebSocket, as far as the kernel says.
///
/// websocketd tells its per-connection process the peer's address and port
/// (`REMOTE_ADDR`, `REMOTE_PORT`) and its own port (`SERVER_PORT`). On loopback the
/// peer's socket is on this machine: its row in /proc/net/tcp (or tcp6) — local port
/// `REMOTE_PORT`, remote port `SERVER_PORT`, established — names the user who owns
/// it. A socket of another user (not root) is refused even with the right token.
/// When no row is found (the peer is in another network namespace) the token alone
/// decides. docs/WEB.md, "Who may connect".
enum PeerCheck {
    /// Why the peer is refused, or nil.
    static func refusal() -> String? {
        guard let remote = Pipe.env("REMOTE_PORT").flatMap({ Int($0) }),
              let server = Pipe.env("SERVER_PORT").flatMap({ Int($0) }) else { return nil }
        let me = getuid()
        for uid in owners(localPort: remote, remotePort: server) where uid != me && uid != 0 {
            return "the connection comes from another user (uid \(uid)); only the daemon's user may connect"
        }
        return nil
    }

    /// The owners of the established TCP sockets from `localPort` to `remotePort`.
    static func owners(localPort: Int, remotePort: Int) -> [UInt32] {
        var found: [UInt32] = []
        for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let bytes = try? Runner.readAll(file) else { continue }
            found += owners(table: String(decoding: bytes, as: UTF8.self), localPort: localPort, remotePort: remotePort)
        }
        return found
    }

    /// The rows of one /proc/net/tcp table (`sl local rem st … uid …`, ports in hex).
    static func owners(table: String, localPort: Int, remotePort: Int) -> [UInt32] {
        var found: [UInt32] = []
        for line in table.split(separator: "\n").dropFirst() {
            let f = line.split(separator: " ")
            guard f.count > 7, f[3] == "01",
                  port(f[1]) == localPort, port(f[2]) == remotePort,
                  let uid = UInt32(f[7]) else { continue }
            found.append(uid)
        }
        return found
    }

    /// The port of `ADDR:PORT` in hex.
    static func port(_ field: Substring) -> Int? {
        guard let colon = field.lastIndex(of: ":") else { return nil }
        return Int(field[field.index(after: colon)...], radix: 16)
    }
}
