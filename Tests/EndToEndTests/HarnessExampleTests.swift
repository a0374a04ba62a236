// docs/HARNESS.md shows this file from here on; HarnessDocTests checks they stay the same.
import Testing
import TabBarCore
import TabBarTesting

@Test func theBarSlidesAwayOnPushAndASelectClicks() throws {
    // A real tabbard on virtual time, null sink, audio captured; removed at the end.
    let h = try HeadlessDaemon()
    defer { h.stop() }

    // 1. The hide-on-push bar, with a 500 ms slide.
    let example = try JSON.parse(try String(contentsOfFile: "examples/hide-on-push.json", encoding: .utf8))
    try h.call("bar.configure", example)
    try h.call("bar.configure", .obj(["settings": .obj(["hide_duration_ms": .int(500)])]))

    // 2. Push a screen: the bar slides for 500 ms, not a millisecond less.
    try h.call("nav.push", .obj(["hides_bar": .bool(true)]))
    try h.expect(event: "bar.visibility", matching: ["phase": "hiding", "duration_ms": "500"])
    try h.advance(ms: 499)
    try h.expectNoEvent("bar.visibility", matching: ["phase": "idle"])
    #expect(try h.state()["visibility"]?["phase"] == .string("hiding"))
    try h.advance(ms: 1)
    try h.expect(event: "bar.visibility", matching: ["phase": "idle", "hidden": "true"])

    // 3. Select a tab: the click starts at 500 ms × 48 frames/ms + the device's 32 frames.
    try h.call("tab.select", .obj(["tab": .string("map")]))
    let played = try h.expect(event: "sound.played", matching: ["name": "click"])
    #expect(played["frame"] == .int(24_032))
    try h.advance(ms: 100)
    let audio = try h.capturedAudio()
    let click = try WAVFile.read("Sounds/click.wav")  // mono: the device plays it on both channels
    let heard = audio.samples(frames: 24_032..<(24_032 + Int64(click.samples.count)))
    #expect(Array(heard) == click.samples.flatMap { [$0, $0] })
}
