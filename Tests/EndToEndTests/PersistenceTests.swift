import Foundation
import Glibc
import Testing
import TabBarCore

@Suite(.serialized) struct PersistenceTests {
    @Test func stateSurvivesARestart() throws {
        let d = try Daemon()
        let c = try RawClient(path: d.socket)
        _ = try c.call("tab.select", #"{"tab":"chat"}"#)
        _ = try c.call("badge.set", #"{"tab":"me","count":120}"#)
        _ = try c.call("badge.set", #"{"tab":"nearby","dot":true}"#)
        let before = try c.call("state.get")["result"]
        c.close()
        #expect(d.stop() == 0)

        let again = try Daemon(dir: d.dir)
        defer { #expect(again.stop() == 0) }
        let after = try RawClient(path: again.socket).call("state.get")["result"]
        #expect(after?["seq"] == .int(3))
        #expect(after == before)
    }

    @Test func acknowledgedChangesSurviveSIGKILL() throws {
        let d = try Daemon()
        let c = try RawClient(path: d.socket)
        var lastSeq = 0
        for k in 1...200 {
            let r = try c.call("badge.set", #"{"tab":"chat","count":\#(k)}"#)
            lastSeq = r["result"]?["seq"]?.intValue ?? -1
        }
        d.kill9()
        let again = try Daemon(dir: d.dir)
        defer { #expect(again.stop() == 0) }
        let st = try RawClient(path: again.socket).call("state.get")["result"]
        #expect(st?["seq"] == .int(lastSeq))
        guard case .array(let items)? = st?["state"]?["items"] else { Issue.record("no items"); return }
        #expect(items[3]["badge"]?["value"] == .int(200))
    }

    @Test func aCorruptStateFileIsMovedAsideAndTheDaemonStarts() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tabbard-corrupt-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data("{\"seq\":12,\"state\":{\"items\":[{\"id\":".utf8).write(to: URL(fileURLWithPath: dir + "/state.json"))
        let d = try Daemon(dir: dir)
        let st = try RawClient(path: d.socket).call("state.get")["result"]
        #expect(st?["state"]?["selected"] == .string("home"))
        #expect(d.stop() == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(files.contains { $0.hasPrefix("state.json.corrupt-") })
        #expect(d.readStderr().contains("State file is corrupt"))
    }

    @Test func aTornJournalTailIsIgnored() throws {
        let d = try Daemon()
        _ = try RawClient(path: d.socket).call("tab.select", #"{"tab":"me"}"#)
        d.kill9()
        // A write that was cut off mid-line (never acknowledged).
        let fh = try FileHandle(forWritingTo: URL(fileURLWithPath: d.state + ".journal"))
        fh.seekToEndOfFile()
        fh.write(Data(#"{"seq":2,"method":"tab.sel"#.utf8))
        fh.closeFile()
        let again = try Daemon(dir: d.dir)
        defer { #expect(again.stop() == 0) }
        let st = try RawClient(path: again.socket).call("state.get")["result"]
        #expect(st?["seq"] == .int(1))
        #expect(st?["state"]?["selected"] == .string("me"))
    }
}
