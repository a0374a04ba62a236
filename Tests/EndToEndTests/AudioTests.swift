import Foundation
import Glibc
import Testing
import TabBarCore

/// The daemon's audio through the real ALSA path (ALSA's `file` plugin writes what
/// it is given to a file), and its behaviour when the device is missing.
@Suite(.serialized) struct AudioTests {
    /// Little-endian S16 stereo frames of a raw capture.
    func readS16(_ path: String) throws -> [Int16] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { raw in
            (0..<(raw.count / 2)).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
        }
    }

    /// The click as 16-bit mono samples, from the WAV the daemon ships.
    func clickSamples() throws -> [Int16] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Paths.sounds + "/click.wav"))
        let pcm = data.dropFirst(44)
        return pcm.withUnsafeBytes { raw in
            (0..<(raw.count / 2)).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
        }
    }

    @Test func aUserSelectReachesALSAAsTheDecodedClick() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-alsa-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let capture = dir + "/capture.raw"
        let d = try Daemon(extraArgs: ["--audio", "alsa", "--alsa-device", "file:'\(capture)',raw"], dir: dir)
        let c = try RawClient(path: d.socket)
        _ = try c.call("subscribe")
        var events: [JSON] = []
        _ = try c.call("tab.select", #"{"tab":"chat"}"#, events: &events)
        while !events.contains(where: { $0["method"] == .string("sound.played") }) {
            events.append(try #require(try c.readJSON()))
        }
        #expect(events.first { $0["method"] == .string("sound.played") }?["params"]?["name"] == .string("click"))
        c.close()
        #expect(d.stop() == 0)  // closes the PCM, which completes the file

        let captured = try readS16(capture)
        let click = try clickSamples()
        #expect(captured.count > click.count * 2)
        // Stereo interleaved: both channels carry the mono click, sample for sample,
        // starting at the first non-silent frame.
        let first = try #require(captured.firstIndex { $0 != 0 })
        let start = first - first % 2
        let firstClick = try #require(click.firstIndex { $0 != 0 })
        var mismatches = 0
        for k in 0..<(click.count - firstClick) {
            let want = click[firstClick + k]
            let l = captured[start + 2 * k], r = captured[start + 2 * k + 1]
            if abs(Int(l) - Int(want)) > 1 || abs(Int(r) - Int(want)) > 1 { mismatches += 1 }
        }
        #expect(mismatches == 0)
        // And nothing but silence after it.
        let tail = captured[(start + 2 * (click.count - firstClick))...]
        #expect(tail.allSatisfy { $0 == 0 })
    }

    @Test func aMissingDeviceLeavesTheDaemonServingAndSaysWhy() throws {
        let d = try Daemon(extraArgs: ["--audio", "alsa", "--alsa-device", "hw:7"])
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socket)
        // State keeps working; the user select is acknowledged normally.
        #expect(try c.call("tab.select", #"{"tab":"me"}"#)["result"]?["selected"] == .string("me"))
        // An explicit sound request says the device cannot play.
        let play = try c.call("sound.play", #"{"name":"click"}"#)
        #expect(play["error"]?["data"]?["kind"] == .string("audio_unavailable"))
        #expect(play["error"]?["code"] == .int(-32005))
        let stats = try c.call("stats.get")["result"]?["audio"]
        #expect(stats?["state"]?.stringValue?.hasPrefix("unavailable") == true)
    }

    @Test func soundReloadKeepsClientsAndReportsBrokenFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-snd-\(UUID().uuidString.prefix(8))").path
        let sounds = dir + "/sounds"
        try FileManager.default.createDirectory(atPath: sounds, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Paths.sounds + "/click.wav", toPath: sounds + "/click.wav")
        let d = try Daemon(extraArgs: ["--sounds", sounds], dir: dir)
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socket)
        _ = try c.call("subscribe")
        // A new good sound and a corrupt one appear; reload picks up the first, names the second.
        try FileManager.default.copyItem(atPath: Paths.sounds + "/center.wav", toPath: sounds + "/pop.wav")
        try Data("RIFF garbage".utf8).write(to: URL(fileURLWithPath: sounds + "/broken.wav"))
        var events: [JSON] = []
        let r = try c.call("sound.reload", "{}", events: &events)
        #expect(r["result"]?["sounds"] == .int(2))
        guard case .array(let failures)? = r["result"]?["failures"] else { Issue.record("no failures"); return }
        #expect(failures.count == 1)
        #expect(failures.first?["source"]?.stringValue?.hasSuffix("broken.wav") == true)
        #expect(try c.call("sound.play", #"{"name":"pop"}"#, events: &events)["result"]?["voice"] != nil)
        // SIGHUP does the same, and the subscriber stays connected.
        kill(d.process.processIdentifier, SIGHUP)
        #expect(try c.call("ping", "{}", events: &events)["result"] == .obj([:]))
    }

    /// A device that accepts the stream and then fails every write (ALSA's `file` plugin on
    /// /dev/full): each accepted sound is reported with `sound.failed`, but the log gets at
    /// most a burst of "Sound failed" lines (LogLimit, 10 per 10 s), and then one line says
    /// how many were suppressed. Before, the audio thread wrote its own line per second.
    @Test func soundFailuresAreLoggedRateLimited() throws {
        let d = try Daemon(extraArgs: ["--audio", "alsa", "--alsa-device", "file:'/dev/full',raw"])
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socket)
        _ = try c.call("subscribe")
        var events: [JSON] = []
        var failed = 0
        let deadline = Date().addingTimeInterval(60)
        while failed < 25 && Date() < deadline {
            // Refused while the device is being reopened; accepted ones fail at their first write.
            _ = try c.call("sound.play", #"{"name":"slide"}"#, events: &events)
            failed += events.filter { $0["method"] == .string("sound.failed") }.count
            events.removeAll()
            while c.hasPendingData(), let e = try c.readJSON() {
                if e["method"] == .string("sound.failed") { failed += 1 }
            }
            usleep(5_000)
        }
        #expect(failed >= 25, "only \(failed) sound.failed events")
        func logged(_ log: String) -> Int { log.split(separator: "\n").filter { $0.contains("warning: Sound failed") }.count }
        try waitUntil("the count of suppressed failures", timeout: 60) {
            d.stderrSoFar().contains(#"Suppressed "#) && d.stderrSoFar().contains(#"like "Sound failed""#)
        }
        let log = d.stderrSoFar()
        #expect(logged(log) <= 20, "\(logged(log)) 'Sound failed' lines for \(failed) failures: \(log.suffix(2000))")
        #expect(log.contains("reason="), "the line says why")
    }

    @Test func fiftyOverlappingClicksDoNotDelayStateReplies() throws {
        let d = try Daemon()
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socket)
        // (Sounds arrive as they load; a click of one still to come plays when it arrives, after the stats below.)
        try waitUntil("the sounds to load") { try c.call("sound.list")["result"]?["loading"] == .bool(false) }
        var batch = ""
        for k in 0..<50 {
            batch += #"{"id":\#(k),"method":"tab.select","params":{"tab":"\#(k % 2 == 0 ? "chat" : "me")"}}"# + "\n"
        }
        try c.send(batch)
        for k in 0..<50 {
            let r = try #require(try c.readJSON())
            #expect(r["id"] == .int(k))
            #expect(r["result"]?["seq"] == .int(k + 1))
        }
        let stats = try c.call("stats.get")["result"]
        #expect(stats?["sounds_played"] == .int(50))
        #expect(stats?["sounds_failed"] == .int(0))
    }
}
