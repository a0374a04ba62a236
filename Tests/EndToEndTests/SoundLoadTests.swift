import Foundation
import Glibc
import Testing
import TabBarCore
import TabBarTesting

/// Sounds load off the state loop (issue 38). A load is held for as long as a test wants by
/// the daemon's test hook `TABBARD_TEST_SOUND_GATE` (while that file exists the loader waits
/// before each sound), so no test depends on how long a load takes.
@Suite struct SoundLoadTests {
    /// A sound directory with the shipped click, and a gate file (present).
    func setUp(_ prefix: String) throws -> (dir: String, sounds: String, gate: String) {
        let dir = try makeTempDir(prefix)
        let sounds = dir + "/sounds"
        try FileManager.default.createDirectory(atPath: sounds, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.sounds + "/click.wav", toPath: sounds + "/click.wav")
        let gate = dir + "/gate"
        try Data().write(to: URL(fileURLWithPath: gate))
        return (dir, sounds, gate)
    }

    func loading(_ c: RawClient) throws -> Bool { try c.call("sound.list")["result"]?["loading"] == .bool(true) }

    @Test func clientsAreServedWhileTheSoundsLoadAndAPlayWaitsForItsSound() throws {
        let (dir, sounds, gate) = try setUp("tabbard-startload")
        let d = try Daemon(extraArgs: ["--sounds", sounds], dir: dir, environment: ["TABBARD_TEST_SOUND_GATE": gate])
        defer { #expect(d.stop() == 0) }
        let a = try RawClient(path: d.socket), b = try RawClient(path: d.socket)
        // The socket answers and the state is served while no sound has loaded.
        #expect(try b.call("ping")["result"] == .obj([:]))
        let list = try b.call("sound.list")["result"]
        #expect(list?["loading"] == .bool(true) && list?["sounds"] == .array([]))
        #expect(try b.call("tab.select", #"{"tab":"me"}"#)["result"]?["selected"] == .string("me"))
        // A play of a sound still to come waits for it (its connection is held, others are not).
        try a.send(#"{"id":1,"method":"sound.play","params":{"name":"click"}}"# + "\n" + #"{"id":2,"method":"ping"}"# + "\n")
        #expect(try b.call("ping")["result"] == .obj([:]))
        #expect(!a.hasPendingData())
        try FileManager.default.removeItem(atPath: gate)
        let played = try a.readJSON()
        #expect(played?["id"] == .int(1) && played?["result"]?["voice"] != nil, "\(String(describing: played))")
        #expect(try a.readJSON()?["id"] == .int(2))  // then what it sent after, in order
        try waitUntil("the start-up load to end") { try !loading(b) }
        #expect(d.stderrSoFar().contains("Sounds loaded sounds=1 failed=0"))
    }

    @Test func aPingOnAnotherConnectionIsAnsweredWhileAReloadRuns() throws {
        let (dir, sounds, gate) = try setUp("tabbard-reload")
        try FileManager.default.removeItem(atPath: gate)
        let d = try Daemon(extraArgs: ["--sounds", sounds], dir: dir, environment: ["TABBARD_TEST_SOUND_GATE": gate])
        defer { #expect(d.stop() == 0) }
        let a = try RawClient(path: d.socket), b = try RawClient(path: d.socket)
        try waitUntil("the start-up load to end") { try !loading(b) }
        try FileManager.default.copyItem(atPath: Paths.sounds + "/center.wav", toPath: sounds + "/pop.wav")
        try Data().write(to: URL(fileURLWithPath: gate))
        // The reload cannot finish while the gate is there; A pipelines a ping behind it.
        try a.send(#"{"id":1,"method":"sound.reload"}"# + "\n" + #"{"id":2,"method":"ping"}"# + "\n")
        #expect(try b.call("ping")["result"] == .obj([:]))
        #expect(try b.call("sound.list")["result"]?["loading"] == .bool(true))
        // The old bank plays meanwhile; the new sound is not in yet.
        #expect(try b.call("sound.play", #"{"name":"click"}"#)["result"]?["voice"] != nil)
        #expect(try b.call("sound.play", #"{"name":"pop"}"#)["error"]?["data"]?["kind"] == .string("unknown_sound"))
        #expect(!a.hasPendingData())
        try FileManager.default.removeItem(atPath: gate)
        let reloaded = try a.readJSON()
        #expect(reloaded?["id"] == .int(1) && reloaded?["result"]?["sounds"] == .int(2), "\(String(describing: reloaded))")
        #expect(try a.readJSON()?["id"] == .int(2))
        #expect(try b.call("sound.play", #"{"name":"pop"}"#)["result"]?["voice"] != nil)

        // SIGHUP: the same, off the loop; the daemon keeps answering while it runs.
        try Data().write(to: URL(fileURLWithPath: gate))
        let before = d.stderrSoFar().count
        kill(d.process.processIdentifier, SIGHUP)
        try waitUntil("the SIGHUP reload to start") { try loading(b) }
        #expect(try b.call("ping")["result"] == .obj([:]))
        try FileManager.default.removeItem(atPath: gate)
        try LiveLog(d).waitFor("Sounds reloaded sounds=2 failed=0", after: before)
    }

    /// The watchdog keeps pinging while the start-up load and a `sound.reload` are held (before,
    /// loading ran on the loop and the pings stopped for the whole load).
    @Test func theWatchdogPingsWhileSoundsLoad() throws {
        let gateDir = try makeTempDir("tabbard-wdgate")
        let gate = gateDir + "/gate"
        try Data().write(to: URL(fileURLWithPath: gate))
        let intervalS = 0.1
        let d = try ActivatedDaemon(watchdogUsec: UInt64(intervalS * 2 * 1_000_000),
                                    activatorArgs: ["-E", "TABBARD_TEST_SOUND_GATE=\(gate)"])
        defer { d.cleanUp() }
        try d.waitForSocketFile()
        let c = try d.connect()
        /// WATCHDOG=1 pings over `seconds` while `c` is answered, with the load still held at its end.
        func pingsWhileHeld(_ seconds: Double) throws -> (Int, Double) {
            let t0 = ActivatedDaemon.now()
            while ActivatedDaemon.now() - t0 < seconds {
                #expect(try c.call("ping")["result"] == .obj([:]))
                d.notify.collect(timeout: 0.05)
            }
            let t1 = ActivatedDaemon.now()
            #expect(try loading(c), "the load is still held")
            return (d.notify.messages.filter { $0.text == "WATCHDOG=1" && $0.at >= t0 && $0.at <= t1 }.count, t1 - t0)
        }
        #expect(try loading(c))
        let (atStart, s1) = try pingsWhileHeld(1.5)
        // Due every 0.1 s; a busy 2-core machine may delay some (as in SystemdTests), none stop.
        #expect(Double(atStart) >= s1 / intervalS * 0.4, "\(atStart) pings in \(s1) s while the start-up load was held")
        try FileManager.default.removeItem(atPath: gate)
        try waitUntil("the start-up load to end") { try !loading(c) }

        try Data().write(to: URL(fileURLWithPath: gate))
        let r = try d.connect()
        try r.send(#"{"id":1,"method":"sound.reload"}"# + "\n")
        try waitUntil("the reload to start") { try loading(c) }
        let (atReload, s2) = try pingsWhileHeld(1.5)
        #expect(Double(atReload) >= s2 / intervalS * 0.4, "\(atReload) pings in \(s2) s while sound.reload was held")
        try FileManager.default.removeItem(atPath: gate)
        #expect(try r.readJSON()?["result"]?["sounds"] != nil)
        #expect(d.stop() == 0)
    }

    @Test func aSoundThatFailedToLoadIsListedAndItsPlaySaysWhy() throws {
        let (dir, sounds, gate) = try setUp("tabbard-failed")
        try FileManager.default.removeItem(atPath: gate)
        try Data("RIFF garbage".utf8).write(to: URL(fileURLWithPath: sounds + "/broken.wav"))
        #expect(system("sox -r 44100 -n -c 2 -b 16 '\(sounds)/Time not Lost.flac' synth 13728s sine 440") == 0)
        let d = try Daemon(extraArgs: ["--sounds", sounds], dir: dir)
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socket)
        try waitUntil("the start-up load to end") { try !loading(c) }
        let play = try c.call("sound.play", #"{"name":"broken"}"#)["error"]
        #expect(play?["code"] == .int(-32011))
        #expect(play?["data"]?["kind"] == .string("sound_not_loaded") && play?["data"]?["name"] == .string("broken"))
        let reason = play?["data"]?["reason"]?.stringValue ?? ""
        #expect(!reason.isEmpty && play?["message"]?.stringValue?.contains(reason) == true)
        let list = try c.call("sound.list")["result"]
        #expect(list?["failed"] == .array([.obj(["name": .string("broken"), "source": .string(sounds + "/broken.wav"), "reason": .string(reason)])]))
        // frames are the file's own (44.1 kHz), device frames what plays at 48 kHz.
        guard case .array(let loaded)? = list?["sounds"], let odd = loaded.first(where: { $0["name"] == .string("Time not Lost") }) else {
            Issue.record("no \"Time not Lost\" in \(String(describing: list))"); return
        }
        #expect(odd["frames"] == .int(13_728) && odd["rate"] == .int(44_100))
        #expect(odd["device"]?["rate"] == .int(48_000))
        #expect(d.stderrSoFar().contains("sound not loaded name=broken file=\(sounds)/broken.wav reason="))
    }

    @Test func startWarnsOfASoundMapTargetThatIsNoSound() throws {
        let dir = try makeTempDir("tabbard-mapwarn")
        let config = dir + "/config.json"
        try Data(#"{"sound_map":{"select":"clik"}}"#.utf8).write(to: URL(fileURLWithPath: config))
        let d = try Daemon(extraArgs: ["--config", config], dir: dir)
        defer { #expect(d.stop() == 0) }
        try LiveLog(d).waitFor("sound_map names a sound that does not exist; those events are silent key=sound_map.select sound=clik")
    }
}

/// `--check-config` checks what a start checks (issue 38): the sounds and the socket's length.
@Suite struct CheckConfigSoundTests {
    func check(_ json: String, _ extra: [String] = [], prepare: (String) throws -> Void = { _ in }) throws -> (Int32, String, String, String) {
        let dir = try makeTempDir("tabbard-checksnd")
        try prepare(dir)
        let path = dir + "/config.json"
        try Data(json.replacingOccurrences(of: "DIR", with: dir).utf8).write(to: URL(fileURLWithPath: path))
        let (status, out, err) = try runTabbard(["--check-config", path, "--sounds", Paths.sounds] + extra, unset: ["TABBARD_SOCKET", "LISTEN_FDS"])
        return (status, out, err, path)
    }

    @Test func aSoundMapTargetThatIsNoSoundFailsTheCheck() throws {
        let (status, out, err, path) = try check(#"{"sound_map":{"select":"clik"}}"#)
        #expect(status == 1 && out.isEmpty)
        #expect(err.contains("tabbard: config: \(path): sound_map.select: no sound \"clik\"; the sounds are action, badge, center, click"), "\(err)")
        let (ok, text, _, _) = try check(#"{"sound_map":{"select":"slide"}}"#)
        #expect(ok == 0 && text.contains("the configuration is valid"))
    }

    @Test func soundFilesMustBeRegularDecodableFiles() throws {
        let (status, out, err, path) = try check(#"{"sound_files":{"adir":"DIR","gone":"DIR/nope.wav","text":"DIR/notes.wav"}}"#) {
            try Data("a text file named .wav".utf8).write(to: URL(fileURLWithPath: $0 + "/notes.wav"))
        }
        let dir = (path as NSString).deletingLastPathComponent
        #expect(status == 1 && out.isEmpty)
        #expect(err.contains("\(path): sound_files.adir: \"\(dir)\": a directory, not a sound file"), "\(err)")
        #expect(err.contains("\(path): sound_files.gone: \"\(dir)/nope.wav\": No such file or directory"), "\(err)")
        #expect(err.contains("\(path): sound_files.text: \"\(dir)/notes.wav\": "), "\(err)")
        #expect(err.split(separator: "\n").count == 3)
    }

    @Test func aSoundMapTargetThatDoesNotLoadAndAnUnreadableDirectoryFailTheCheck() throws {
        let (status, out, err, path) = try check(#"{"sound_files":{"broken":"DIR/broken.wav"},"sound_map":{"select":"broken"}}"#) {
            try Data("RIFF garbage".utf8).write(to: URL(fileURLWithPath: $0 + "/broken.wav"))
        }
        let dir = (path as NSString).deletingLastPathComponent
        #expect(status == 1 && out.isEmpty)
        #expect(err.contains("\(path): sound_files.broken: \"\(dir)/broken.wav\": "), "\(err)")
        #expect(err.contains("\(path): sound_map.select: the sound \"broken\" does not load: \"\(dir)/broken.wav\": "), "\(err)")
        let (s2, o2, e2) = try runTabbard(["--check-config", path, "--sounds", dir + "/nodir"], unset: ["TABBARD_SOCKET", "LISTEN_FDS"])
        #expect(s2 == 1 && o2.isEmpty)
        #expect(e2.contains("sounds: \"\(dir)/nodir\": cannot read the directory: No such file or directory"), "\(e2)")
    }

    @Test func aSocketPathTooLongFailsTheCheckAsItFailsTheStart() throws {
        let long = "/tmp/" + String(repeating: "s", count: 111)  // 116 bytes
        let (status, out, err, path) = try check(#"{"socket":"\#(long)"}"#)
        #expect(status == 1 && out.isEmpty)
        let line = "\(path): socket: \"\(long)\" is 116 bytes; a Unix socket path is at most 107"
        #expect(err.contains(line), "\(err)")
        let (s2, _, e2) = try runTabbard(["--config", path, "--state", path + ".state"], unset: ["TABBARD_SOCKET", "LISTEN_FDS"])
        #expect(s2 == 1 && e2.contains(line))
    }
}
