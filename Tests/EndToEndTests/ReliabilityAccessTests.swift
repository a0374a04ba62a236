import Foundation
import Glibc
import Testing
import TabBarCore
import TabBarTesting

/// A process run as another user (`setpriv`), with `groups` as its supplementary groups.
/// Returns its exit status (nil: still running after `timeout`, then killed), stdout, stderr.
func runAs(uid: UInt32, gid: UInt32, groups: [UInt32] = [], _ args: [String], environment: [String: String]? = nil,
           timeout: Double = 20) throws -> (Int32?, String, String) {
    let g = groups.isEmpty ? ["--clear-groups"] : ["--groups=" + groups.map(String.init).joined(separator: ",")]
    let piped = try Piped("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(gid)"] + g + args, environment: environment)
    let p = piped.process
    let exited = ReliabilityTests.waitForExit(p, timeout: timeout)
    let o = String(decoding: piped.stdout.readDataToEndOfFile(), as: UTF8.self)
    let e = String(decoding: piped.stderr.readDataToEndOfFile(), as: UTF8.self)
    return (exited ? p.terminationStatus : nil, o, e)
}

/// The environment without the variables that choose a socket (the fallback is used).
func fallbackEnvironment() -> [String: String] {
    var env = ProcessInfo.processInfo.environment
    env["XDG_RUNTIME_DIR"] = nil
    env["TABBARD_SOCKET"] = nil
    return env
}

@Suite(.serialized, .enabled(if: getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 && access("/usr/bin/python3", X_OK) == 0,
                             "needs root, setpriv and python3 to run as other users"))
struct ReliabilityAccessTests {
    /// A uid of no one, for this run only (its fallback directory is ours alone).
    static let uid = UInt32(50_000 + getpid() % 10_000)

    /// Issue 13 item 3: without XDG_RUNTIME_DIR the socket goes to /tmp/tabbard-UID. When
    /// another user made that directory first (root, mode 0777), the daemon refuses in one
    /// line, and tabbarctl does not trust a socket there (a fake daemon answering ping);
    /// when the directory is not there, the daemon makes it 0700 and both work.
    @Test func aHijackedFallbackSocketDirectoryIsRefused() throws {
        let uid = Self.uid
        let dir = "/tmp/tabbard-\(uid)"
        try? FileManager.default.removeItem(atPath: dir)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(mkdir(dir, 0o777) == 0 && chmod(dir, 0o777) == 0)
        let state = try makeTempDir("tabbard-hijack")
        chown(state, uid, uid)
        let daemon = [Paths.tabbard, "--state", state + "/state.json", "--audio", "null", "--sounds", Paths.sounds]
        let (status, _, err) = try runAs(uid: uid, gid: uid, daemon, environment: fallbackEnvironment(), timeout: 10)
        #expect(status != nil && status != 0, "the daemon refused to bind in \(dir)")
        #expect(err.contains(dir) && err.contains("mode 777"), "\(err)")
        #expect(access(dir + "/socket", F_OK) != 0)
        // Another user's fake daemon in that directory: tabbarctl must not talk to it.
        let fake = """
            import socket, subprocess, sys, threading
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
            def serve():
                while True:
                    c, _ = s.accept()
                    c.sendall(b'{"jsonrpc":"2.0","method":"hello","params":{"server":"FAKE-tabbard","version":"6.6.6","protocol":1,"max_line":65536,"features":[]}}\\n')
                    c.makefile("rb").readline()
                    c.sendall(b'{"jsonrpc":"2.0","id":1,"result":{}}\\n'); c.close()
            threading.Thread(target=serve, daemon=True).start()
            import os; os.chmod(sys.argv[1], 0o777)
            r = subprocess.run(sys.argv[2:], capture_output=True, text=True, timeout=20)
            print("rc=%d" % r.returncode); print(r.stdout); print(r.stderr)
            """
        let env = fallbackEnvironment()
        let (_, said, _) = try runAs(uid: 0, gid: 0, ["/usr/bin/python3", "-c", fake, dir + "/socket", "/usr/bin/setpriv",
                                                      "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", Paths.tabbarctl, "ping"],
                                     environment: env)
        #expect(said.contains("rc=") && !said.contains("rc=0") && !said.contains("FAKE"), "tabbarctl trusted the fake: \(said)")
        #expect(said.contains(dir + " belongs to uid 0 with mode 777"), "\(said)")
        try FileManager.default.removeItem(atPath: dir + "/socket")
        // Gone: the daemon makes the directory itself, 0700, and tabbarctl talks to it.
        try FileManager.default.removeItem(atPath: dir)
        let p = try ChildProcess("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"] + daemon,
                                 environment: fallbackEnvironment(), stderr: open("/dev/null", O_WRONLY | O_CLOEXEC))
        defer { kill(p.processIdentifier, SIGTERM); p.waitUntilExit() }
        try waitUntil("the daemon listens in \(dir)") { access(dir + "/socket", F_OK) == 0 }
        var st = stat()
        #expect(lstat(dir, &st) == 0 && st.st_uid == uid && st.st_mode & 0o777 == 0o700)
        var pinged = (Int32(-1), "", "")
        try waitUntil("tabbarctl ping answers") {
            let r = try runAs(uid: uid, gid: uid, [Paths.tabbarctl, "ping"], environment: fallbackEnvironment())
            pinged = (r.0 ?? -1, r.1, r.2)
            return r.0 == 0
        }
        #expect(pinged.1.contains("tabbard"), "\(pinged)")
    }

    /// Issue 13 item 4: `allowed_gids` admits a peer by a supplementary group too.
    @Test func allowedGIDsCountSupplementaryGroups() throws {
        let group = Self.uid + 1
        let d = try startDaemon(config: #"{"allowed_gids":[\#(group)]}"#)
        defer { #expect(d.stop() == 0) }
        openUp(d)
        let client = ["/usr/bin/python3", "-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
            f = s.makefile("rb"); print(f.readline().decode().strip())
            s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\\n'); print(f.readline().decode().strip())
            """, d.socket]
        let (status, out, err) = try runAs(uid: 65534, gid: 65534, groups: [group], client)
        #expect(status == 0, "\(err)")
        #expect(out.contains(#""method":"hello""#) && out.contains(#""id":1,"result":{}"#), "a member by a supplementary group: \(out)")
        let (_, refused, _) = try runAs(uid: 65534, gid: 65534, client)
        #expect(refused.contains("permission_denied"), "and not without it: \(refused)")
    }

    /// Issue 13 item 6: a state directory the daemon may not write (another user's, 0755).
    /// The start-up log says changes will be refused (not that the journal keeps them),
    /// and the refusal advises about permissions, not disk space.
    @Test func anUnwritableStateDirectoryIsReportedAsSuch() throws {
        let uid = Self.uid
        let dir = try makeTempDir("tabbard-ro")
        chown(dir, uid, uid)
        let stateDir = dir + "/state"
        #expect(mkdir(stateDir, 0o755) == 0)
        let piped = try Piped("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", Paths.tabbard, "--socket", dir + "/sock",
                                                  "--state", stateDir + "/state.json", "--audio", "null", "--sounds", Paths.sounds])
        let p = piped.process
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        // (Connected, not the file seen: the file is there from bind(2), and until listen(2) a
        // connect is refused; under load that was seen once.)
        var connected: RawClient?
        try waitUntil("the daemon listens") { connected = try? RawClient(path: dir + "/sock"); return connected != nil }
        let c = connected!
        let r = try c.call("tab.select", #"{"tab":"chat"}"#)
        #expect(r["error"]?["data"]?["kind"] == .string("storage_failed"))
        let message = r["error"]?["message"]?.stringValue ?? ""
        #expect(!message.contains("Free disk space") && message.contains("writable by uid \(uid)"), "\(message)")
        #expect(try c.call("state.get")["result"]?["seq"] == .int(0))
        c.close()
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        let log = String(decoding: piped.stderr.readDataToEndOfFile(), as: UTF8.self)
        #expect(!log.contains("the journal keeps every change"), "\(log)")
        #expect(log.contains("every change is refused"), "\(log)")
    }
}
