import Testing
import TabBarCore
import TabBarTesting

/// `click_on: "press"` heard through the real daemon on virtual time (docs/PROTOCOL.md "Click
/// on press", docs/HARNESS.md): the click starts at the frame of the touch's `down`, whatever
/// the hold; a press that slides off or is cancelled keeps its click and commits nothing.
@Suite struct ClickOnPressTests {
    /// The virtual device's queue: a sound started at t ms starts at frame t × 48 + 32.
    static func frame(atMs t: Int64) -> Int64 { t * 48 + 32 }

    /// A daemon on the built-in bar (chat at x 222.5…298.75) with `click_on` set.
    static func daemon(clickOn: String) throws -> HeadlessDaemon {
        let h = try HeadlessDaemon(sounds: Paths.sounds)
        try h.call("bar.configure", .obj(["settings": .obj(["click_on": .string(clickOn)])]))
        return h
    }

    static func touch(_ h: HeadlessDaemon, _ phase: String, x: Double, id: Int) throws -> JSON {
        try h.call("touch", .obj(["phase": .string(phase), "x": .double(x), "y": .int(20), "touch_id": .int(id)]))
    }

    /// Checks that the capture holds Sounds/click.wav at `frame`, on both channels, and nothing
    /// else: silence before it and after it to the end.
    static func expectOnlyTheClick(at frame: Int64, in audio: CapturedAudio) throws {
        let click = try WAVFile.read(Paths.sounds + "/click.wav")
        let end = frame + Int64(click.samples.count)
        #expect(audio.sounds.map(\.frame) == [frame])
        #expect(Array(audio.samples(frames: frame..<end)) == click.samples.flatMap { [$0, $0] })
        #expect(audio.samples(frames: 0..<frame).allSatisfy { $0 == 0 })
        #expect(audio.samples(frames: end..<Int64(audio.frames)).allSatisfy { $0 == 0 })
    }

    @Test(arguments: [1, 80, 150, 400])
    func aPressAt250msClicksAtItsFrameWhateverTheHold(holdMs: Int) throws {
        let h = try Self.daemon(clickOn: "press")
        defer { h.stop() }
        try h.advance(ms: 250)
        let down = try Self.touch(h, "down", x: 260, id: 1)
        #expect(down["commit"] == .null)
        #expect(down["sound"] == .string("click"))
        try h.expect(event: "tab.highlighted", matching: ["tab": "chat", "phase": "begin", "sound": "click"])
        let played = try h.expect(event: "sound.played", matching: ["name": "click"])
        #expect(played["frame"] == .int(Int(Self.frame(atMs: 250))))
        try h.advance(ms: holdMs)
        let up = try Self.touch(h, "up", x: 260, id: 1)
        #expect(up["commit"] == .string("select"))
        #expect(up["sound"] == nil, "the commit on up plays nothing: \(up)")
        try h.expect(event: "tab.selected", matching: ["tab": "chat", "source": "user"])
        try h.expectNoEvent("sound.played")
        #expect(try h.state()["selected"] == .string("chat"))
        try h.advance(ms: 200)
        try Self.expectOnlyTheClick(at: Self.frame(atMs: 250), in: try h.capturedAudio())
        #expect(h.stop() == 0)
    }

    /// The same tap with the default `click_on: "commit"` clicks at the up: 250 ms + the hold.
    @Test func withTheDefaultTheClickWaitsForTheUp() throws {
        let h = try Self.daemon(clickOn: "commit")
        defer { h.stop() }
        try h.advance(ms: 250)
        #expect(try Self.touch(h, "down", x: 260, id: 1)["sound"] == nil)
        try h.advance(ms: 80)
        try h.expectNoEvent("sound.played")
        let up = try Self.touch(h, "up", x: 260, id: 1)
        #expect(up["commit"] == .string("select") && up["sound"] == .string("click"))
        let played = try h.expect(event: "sound.played", matching: ["name": "click"])
        #expect(played["frame"] == .int(Int(Self.frame(atMs: 330))))
        try h.advance(ms: 200)
        try Self.expectOnlyTheClick(at: Self.frame(atMs: 330), in: try h.capturedAudio())
    }

    /// A press that slides off (its up on another tab) and one that is cancelled: each plays its
    /// click at its down and commits nothing; the selection stays.
    @Test(arguments: ["up elsewhere", "cancel"])
    func aPressThatSlidesOffClicksAndCommitsNothing(ending: String) throws {
        let h = try Self.daemon(clickOn: "press")
        defer { h.stop() }
        try h.advance(ms: 250)
        #expect(try Self.touch(h, "down", x: 260, id: 1)["sound"] == .string("click"))
        let played = try h.expect(event: "sound.played", matching: ["name": "click"])
        #expect(played["frame"] == .int(Int(Self.frame(atMs: 250))))
        try h.advance(ms: 80)
        let end = ending == "cancel" ? try Self.touch(h, "cancel", x: 260, id: 1) : try Self.touch(h, "up", x: 330, id: 1)
        #expect(end["commit"] == .null && end["sound"] == nil, "\(end)")
        try h.expect(event: "tab.highlighted", matching: ["tab": "chat", "phase": "cancel"])
        try h.expectNoEvent("tab.selected")
        try h.expectNoEvent("sound.played")
        #expect(try h.state()["selected"] == .string("home"))
        try h.advance(ms: 200)
        try Self.expectOnlyTheClick(at: Self.frame(atMs: 250), in: try h.capturedAudio())
        #expect(h.stop() == 0)
    }
}
