import Foundation
import Glibc
import Testing
import TabBarCore
import TabBarTesting

/// Runs `tabbard ARGS` to its end: (status, stdout, stderr).
func runTabbard(_ args: [String], environment: [String: String] = [:], unset: [String] = []) throws -> (Int32, String, String) {
    var env = ProcessInfo.processInfo.environment
    for k in unset { env[k] = nil }
    for (k, v) in environment { env[k] = v }
    let r = try runCapturing(Paths.tabbard, args, environment: env)
    return (r.status, r.stdout, r.stderr)
}

/// The daemon's stderr read while it runs.
final class LiveLog {
    let daemon: Daemon
    init(_ d: Daemon) { daemon = d }
    var text: String { daemon.stderrSoFar() }

    /// Waits until the log holds `needle` (counting from `after` characters in).
    func waitFor(_ needle: String, after: Int = 0, timeout: Double = 20) throws {
        try waitUntil("log line \"\(needle)\"", timeout: timeout) { text.dropFirst(after).contains(needle) }
    }
}

@Suite struct ConfigCommandTests {
    func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func helpAndVersion() throws {
        for flag in ["-h", "--help"] {
            let (status, out, _) = try runTabbard([flag])
            #expect(status == 0)
            #expect(out.hasPrefix("Usage: tabbard [options]") && out.contains("--check-config [FILE]") && out.contains("/tmp/tabbard-UID/socket"))
        }
        for flag in ["-V", "--version"] {
            let (status, out, _) = try runTabbard([flag])
            #expect(status == 0 && out.hasPrefix("tabbard ") && out.contains("(protocol 1)"))
        }
    }

    @Test func checkConfigRefusesABadFileInOneLine() throws {
        let dir = try makeTempDir("tabbard-check")
        let path = dir + "/config.json"
        try write(#"{"allowed_uids": [1000, -1]}"#, to: path)
        let (status, out, err) = try runTabbard(["--check-config", path])
        #expect(status == 1)
        #expect(out.isEmpty)
        #expect(err.hasSuffix("tabbard: config: \(path): allowed_uids[1]: must be a numeric id from 0 to 4294967294, not -1\n"), "\(err)")
        #expect(err.filter { $0 == "\n" }.count == 1)
        // The daemon refuses to start on it the same way (and binds nothing).
        let (s2, _, e2) = try runTabbard(["--config", path, "--socket", dir + "/sock", "--state", dir + "/state.json"])
        #expect(s2 == 1 && e2.contains("allowed_uids[1]: must be a numeric id"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/sock"))
    }

    /// Flags, then TABBARD_SOCKET/TABBARD_SOUNDS, then the file, then the defaults.
    @Test func checkConfigPrintsWhereEachValueCameFrom() throws {
        let dir = try makeTempDir("tabbard-check")
        let path = dir + "/config.json"
        try write(#"{"max_line": 1024, "sounds": ["/from/file"], "socket": "/from/file.sock", "log_level": "debug"}"#, to: path)
        let (status, out, err) = try runTabbard(["--check-config", path, "--log-level", "warning"],
                                                environment: ["TABBARD_SOUNDS": "\(dir):\(Paths.sounds)", "TABBARD_SOCKET": "/env.sock"])
        #expect(status == 0, "\(err)")
        let lines = out.split(separator: "\n").map(String.init)
        func line(_ key: String) -> String? { lines.first { $0.hasPrefix(key + " ") } }
        #expect(lines.first == "# tabbard 0.1.0: the configuration is valid" || lines.first?.hasSuffix(": the configuration is valid") == true)
        #expect(lines.contains("# file: \"\(path)\""))
        #expect(line("max_line")?.hasSuffix("= 1024  # file:max_line") == true)
        #expect(line("sounds")?.hasSuffix(#"= ["\#(dir)","\#(Paths.sounds)"]  # env:TABBARD_SOUNDS"#) == true, "\(out)")
        #expect(line("socket")?.hasSuffix(#"= "/env.sock"  # env:TABBARD_SOCKET"#) == true)
        #expect(line("log_level")?.hasSuffix(#"= "warning"  # flag:--log-level"#) == true)
        #expect(line("voices")?.hasSuffix("= 16  # default") == true)
        // (Directories that exist and hold the sounds sound_map names: --check-config checks them.)
        let (_, flagged, _) = try runTabbard(["--check-config", path, "--sounds", Paths.sounds], environment: ["TABBARD_SOUNDS": dir])
        #expect(flagged.contains(#"= ["\#(Paths.sounds)"]  # flag:--sounds"#))
    }

    /// A user daemon reads $XDG_CONFIG_HOME/tabbard/config.json when present and says so;
    /// --config overrides it, --no-config reads none; a system daemon looks in /etc/tabbard.
    @Test func theUsualConfigFile() throws {
        let dir = try makeTempDir("tabbard-xdg")
        let usual = dir + "/cfg/tabbard/config.json"
        let env = ["XDG_RUNTIME_DIR": dir, "XDG_CONFIG_HOME": dir + "/cfg"]
        let (s0, none, _) = try runTabbard(["--check-config"], environment: env)
        #expect(s0 == 0 && none.contains("# file: none (looked for \"\(usual)\")"))
        try write(#"{"max_clients": 7}"#, to: usual)
        let (s1, found, _) = try runTabbard(["--check-config"], environment: env)
        #expect(s1 == 0 && found.contains("# file: \"\(usual)\"") && found.contains("= 7  # file:max_clients"))
        let other = dir + "/other.json"
        try write(#"{"max_clients": 9}"#, to: other)
        let (_, overridden, _) = try runTabbard(["--check-config", "--config", other], environment: env)
        #expect(overridden.contains("= 9  # file:max_clients"))
        let (_, skipped, _) = try runTabbard(["--no-config", "--check-config"], environment: env)
        #expect(skipped.contains("# file: none (--no-config)") && skipped.contains("= 64  # default"))
        let (_, system, _) = try runTabbard(["--check-config"], environment: ["STATE_DIRECTORY": dir + "/state", "XDG_CONFIG_HOME": dir + "/cfg"],
                                            unset: ["XDG_RUNTIME_DIR"])
        #expect(system.contains("/etc/tabbard/config.json"), "\(system)")
        // The daemon itself: the log names the file it read.
        let d = try Daemon(extraArgs: ["--config", usual], environment: env)
        let log = LiveLog(d)
        try log.waitFor("Configuration read file=\(usual)")
        #expect(d.stop() == 0)
    }

    /// A few JSONTestSuite files through the real binary (all of them go through ConfigTests in-process).
    @Test func jsonTestSuiteFilesThroughTheBinary() throws {
        let dir = try JSONTestSuite.dir()
        let (ok, out, _) = try runTabbard(["--check-config", dir + "/y_object_empty.json"])
        #expect(ok == 0 && out.contains("= 65536  # default"))
        for name in ["y_array_empty.json", "y_object_basic.json", "n_object_trailing_comma.json", "n_string_unescaped_newline.json",
                     "i_string_invalid_utf-8.json", "y_object_escaped_null_in_key.json", "n_structure_100000_opening_arrays.json",
                     "y_object_duplicated_key.json", "y_string_nonCharacterInUTF-8_U+FFFF.json"] {
            let (status, out, err) = try runTabbard(["--check-config", dir + "/" + name])
            #expect(status == 1 && out.isEmpty, "\(name)")
            #expect(err.filter { $0 == "\n" }.count == 1 && err.contains("tabbard: config: \(dir)/\(name): "), "\(name): \(err)")
        }
    }

    /// SIGHUP re-reads the file: live keys apply at once, others are named as waiting for a
    /// restart, an invalid file changes nothing, and clients stay connected.
    @Test func sighupReloadsTheConfig() throws {
        let dir = try makeTempDir("tabbard-reload")
        let path = dir + "/config.json"
        try write(#"{"max_clients": 64, "max_line": 65536}"#, to: path)
        let d = try Daemon(extraArgs: ["--config", path], dir: dir)
        defer { #expect(d.stop() == 0) }
        let log = LiveLog(d)
        let first = try RawClient(path: d.socket)
        try write(#"{"max_clients": 1, "max_line": 1024, "bar": {"items": [{"id": "a"}, {"id": "b"}]}}"#, to: path)
        kill(d.process.processIdentifier, SIGHUP)
        try log.waitFor("Configuration reloaded file=\(path) applied=max_clients")
        try log.waitFor("restart tabbard to apply them keys=max_line")
        try log.waitFor("The configured bar changed")
        // max_clients 1 is in force: a second client is refused, the first still works.
        let second = try RawClient(path: d.socket, readHello: false)
        let refusal = try #require(try second.readJSON())
        #expect(refusal["error"]?["data"]?["kind"] == .string("limit_exceeded"))
        #expect(try first.call("tab.select", #"{"tab":"me"}"#)["result"]?["selected"] == .string("me"))
        // An invalid file: refused, nothing changes.
        let mark = log.text.count
        try write(#"{"max_clients": 0}"#, to: path)
        kill(d.process.processIdentifier, SIGHUP)
        try log.waitFor("Reload refused: the configuration is not valid; nothing changed error=\"\(path): max_clients: must be a whole number from 1 to 100000, not 0\"", after: mark)
        #expect(try first.call("ping")["result"] != nil)
    }

    /// The log says where the state came from, and when a saved state hides the configured bar.
    @Test func theStateLogTellsTheTruthAboutTheConfiguredBar() throws {
        let dir = try makeTempDir("tabbard-bar")
        let path = dir + "/config.json"
        try write(#"{"bar": {"items": [{"id": "a"}, {"id": "b"}]}}"#, to: path)
        let d = try Daemon(extraArgs: ["--config", path], dir: dir)
        #expect(d.stop() == 0)
        let log = d.readStderr()
        #expect(log.contains("State restored from=\"config \(path) bar\" seq=0"), "\(log)")
        #expect(!log.contains("built-in default bar"))
        try write(#"{"bar": {"items": [{"id": "a"}, {"id": "c"}]}}"#, to: path)
        let again = try Daemon(extraArgs: ["--config", path], dir: dir)
        let c = try RawClient(path: again.socket)
        #expect(try c.call("state.get")["result"]?["state"]?["items"]?.arrayValueIDs == ["a", "b"])
        #expect(again.stop() == 0)
        let log2 = again.readStderr()
        #expect(log2.contains("A saved state exists, so the configured bar is not used"), "\(log2)")
    }

    /// Plain lines with a timestamp unless stderr is the journal ($JOURNAL_STREAM names it).
    @Test func logsFitWhereTheyGo() throws {
        let dir = try makeTempDir("tabbard-logs")
        let path = dir + "/bad.json"
        try write(#"{"state": "a\nb", "socket": 1}"#, to: path)
        let (_, _, plain) = try runTabbard(["--config", path])
        let stamp = try Regex(#"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} error: tabbard: config: "#)
        #expect(plain.firstMatch(of: stamp) != nil, "\(plain)")
        #expect(plain.filter { $0 == "\n" }.count == 1)
        // The same through a pipe that JOURNAL_STREAM names: journald's <N> prefix, no timestamp.
        let err = try closeOnExecPipe()
        var st = stat()
        #expect(fstat(err[1], &st) == 0)
        var env = ProcessInfo.processInfo.environment
        env["JOURNAL_STREAM"] = "\(st.st_dev):\(st.st_ino)"
        let p = try ChildProcess(Paths.tabbard, ["--config", path], environment: env, stderr: err[1])
        close(err[1])
        let journal = String(decoding: FileHandle(fileDescriptor: err[0], closeOnDealloc: true).readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(journal == "<3>tabbard: config: \(path): socket: must be a string, not 1\n", "\(journal)")
        // A JOURNAL_STREAM inherited from elsewhere (not this stderr) changes nothing.
        let (_, _, stale) = try runTabbard(["--config", path], environment: ["JOURNAL_STREAM": "1:2"])
        #expect(stale.firstMatch(of: stamp) != nil)
    }
}

extension JSON {
    /// The ids of an array of items.
    var arrayValueIDs: [String]? {
        guard case .array(let items) = self else { return nil }
        return items.compactMap { $0["id"]?.stringValue }
    }
}
