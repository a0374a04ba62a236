import Foundation
import Glibc
import Testing
import TabBarCore
import TabBarTesting

/// Runs a tiny client as uid/gid 65534 (nobody/nogroup) through `setpriv`: it connects,
/// optionally sends `line` and half-closes, and prints `uid=N` then everything it reads
/// until EOF (or `connect: <error>`).
func connectAsNobody(_ socket: String, send line: String? = nil) throws -> [String] {
    let script = """
    import os, socket, sys
    print("uid=%d" % os.getuid(), flush=True)
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    try:
        s.connect(sys.argv[1])
    except OSError as e:
        print("connect: " + e.strerror); sys.exit(0)
    if len(sys.argv) > 2:
        try:
            s.sendall(sys.argv[2].encode()); s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # already refused and closed
    data = b""
    while True:
        try:
            b = s.recv(65536)
        except ConnectionResetError:
            break
        if not b: break
        data += b
    sys.stdout.write(data.decode())
    """
    let r = try runCapturing("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, socket] + (line.map { [$0] } ?? []))
    guard r.status == 0 else { throw TestFailure("the nobody client exited with \(r.status): \(r.stderr)") }
    return r.stdout.split(separator: "\n").map(String.init)
}

/// Lets everybody reach the socket through the file system, so that only the daemon's
/// SO_PEERCRED check stands between another user and the bar.
func openUp(_ d: Daemon) {
    chmod(d.dir, 0o755)
    chmod(d.socket, 0o666)
}

@Suite(.enabled(if: getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 && access("/usr/bin/python3", X_OK) == 0,
                "needs root, setpriv and python3 to connect as another user"))
struct AccessTests {
    static let denied = #"{"jsonrpc":"2.0","id":null,"error":{"code":-32007,"message":"uid 65534 may not use this tabbard (allowed: its own uid 0, root, and allowed_uids/allowed_gids in the config).","data":{"kind":"permission_denied"}}}"#

    /// The socket is created 0600: another user cannot even connect.
    @Test func theSocketIsOwnerOnly() throws {
        let d = try startDaemon()
        defer { #expect(d.stop() == 0) }
        var st = stat()
        #expect(stat(d.socket, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600)
        chmod(d.dir, 0o755)
        #expect(try connectAsNobody(d.socket) == ["uid=65534", "connect: Permission denied"])
    }

    /// With the file system open, uid 65534 connects, gets exactly one `permission_denied`
    /// line and EOF; the refusal is logged with its uid; nobody else notices.
    @Test func anotherUserGetsPermissionDeniedThenEOF() throws {
        let arena = try Arena()
        openUp(arena.daemon)
        #expect(try connectAsNobody(arena.socket) == ["uid=65534", Self.denied])
        // Sending a request first changes nothing: refused before a byte is read.
        #expect(try connectAsNobody(arena.socket, send: #"{"id":1,"method":"tab.select","params":{"tab":"me"}}"# + "\n").first == "uid=65534")
        #expect(try arena.stats()["connections_refused"] == .int(2))
        try arena.expectUntouched("after two refused peers")
        arena.stop()
        let log = arena.daemon.readStderr()
        #expect(log.split(separator: "\n").filter { $0.contains("Refused a client") && $0.contains("uid=65534") }.count == 2, "\(log)")
    }

    /// `allowed_uids` lets uid 65534 in: the hello, then its reply.
    @Test func allowedUIDsLetsItIn() throws {
        let d = try startDaemon(config: #"{"allowed_uids":[65534]}"#)
        defer { #expect(d.stop() == 0) }
        openUp(d)
        let lines = try connectAsNobody(d.socket, send: #"{"id":1,"method":"ping"}"# + "\n")
        #expect(lines.count == 3)
        #expect(lines.first == "uid=65534")
        #expect(lines.dropFirst().first?.hasPrefix(#"{"jsonrpc":"2.0","method":"hello""#) == true)
        #expect(lines.last == #"{"jsonrpc":"2.0","id":1,"result":{}}"#)
    }

    /// `allowed_gids` does the same by group (65534 is nogroup).
    @Test func allowedGIDsLetsItIn() throws {
        let d = try startDaemon(config: #"{"allowed_gids":[65534]}"#)
        defer { #expect(d.stop() == 0) }
        openUp(d)
        let lines = try connectAsNobody(d.socket, send: #"{"id":"g","method":"tab.select","params":{"tab":"chat"}}"# + "\n")
        #expect(lines.count == 3)
        #expect(lines.last?.hasPrefix(#"{"jsonrpc":"2.0","id":"g","result":{"seq":1,"selected":"chat""#) == true)
    }
}
