import Glibc
import Testing
@testable import TabBarAudio

/// What the click's stream tells the desktop (`StreamIdentity`): the variables PipeWire's and
/// PulseAudio's ALSA plugins read when a PCM is opened, for the defaults, a `tabbard@NAME`
/// instance and a configured role and properties; and hardware-like PCMs left as they are.
/// tests/pipewire/test_desktop.py checks what a real sound server shows of it.
@Suite struct StreamIdentityTests {
    private func env(_ id: StreamIdentity) -> [String: String] {
        Dictionary(uniqueKeysWithValues: id.environment.map { ($0.name, $0.value) })
    }

    @Test func theDefaultsGiveTheEventRoleAndTabbardsNames() {
        let id = StreamIdentity(role: "event", properties: StreamIdentity.defaultProperties(instance: nil))
        #expect(id.environment.map(\.name) == ["PIPEWIRE_ALSA", "PULSE_PROP", "PULSE_PROP_OVERRIDE"])
        let e = env(id)
        #expect(e["PIPEWIRE_ALSA"] == #"{ media.role = "Notification" application.icon_name = "audio-x-generic" application.id = "tabbard" application.name = "tabbard" media.name = "tabbard: tab clicks" }"#)
        #expect(e["PULSE_PROP"] == #"media.role="event""#)
        // The pulse plugin names its stream itself ("ALSA Playback"): no media.name for it.
        #expect(e["PULSE_PROP_OVERRIDE"] == #"application.icon_name="audio-x-generic" application.id="tabbard" application.name="tabbard""#)
    }

    @Test func anInstanceIsNamedTabbardAtName() {
        let id = StreamIdentity(role: "event", properties: StreamIdentity.defaultProperties(instance: "mail"))
        let e = env(id)
        #expect(e["PIPEWIRE_ALSA"]?.contains(#"application.name = "tabbard@mail""#) == true)
        #expect(e["PULSE_PROP_OVERRIDE"]?.contains(#"application.name="tabbard@mail""#) == true)
        // The id stays the program's: the desktop finds its icon and settings by it.
        #expect(e["PULSE_PROP_OVERRIDE"]?.contains(#"application.id="tabbard""#) == true)
        // An instance name that cannot be written quoted, or none, falls back to "tabbard".
        for bad in ["", "a\"b", "x\\y", "tab\nbar", String(repeating: "n", count: 257)] {
            #expect(StreamIdentity.defaultProperties(instance: bad)["application.name"] == "tabbard", "\(bad.debugDescription)")
        }
    }

    @Test func eachRoleHasPipeWiresNameForIt() {
        for (pulse, pipewire) in [("event", "Notification"), ("phone", "Communication"), ("music", "Music"),
                                  ("video", "Movie"), ("game", "Game"), ("a11y", "Accessibility"),
                                  ("production", "Production"), ("test", "Test")] {
            let e = env(StreamIdentity(role: pulse, properties: [:]))
            #expect(e["PIPEWIRE_ALSA"] == "{ media.role = \"\(pipewire)\" }")
            #expect(e["PULSE_PROP"] == "media.role=\"\(pulse)\"")
            #expect(e["PULSE_PROP_OVERRIDE"] == "")
        }
    }

    @Test func configuredPropertiesReplaceTheDefaultsAndEmptyOnesAreLeftOut() {
        var props = StreamIdentity.defaultProperties(instance: nil)
        props["application.name"] = "Mail tabs"
        props["media.name"] = ""                // left out: the plugin's own name stays
        props["application.icon_name"] = ""
        props["node.name"] = "tabs"
        let e = env(StreamIdentity(role: "phone", properties: props))
        #expect(e["PIPEWIRE_ALSA"] == #"{ media.role = "Communication" application.id = "tabbard" application.name = "Mail tabs" node.name = "tabs" }"#)
        #expect(e["PULSE_PROP"] == #"media.role="phone""#)
        #expect(e["PULSE_PROP_OVERRIDE"] == #"application.id="tabbard" application.name="Mail tabs" node.name="tabs""#)
    }

    @Test func noRoleSetsNoRoleAnywhere() {
        let e = env(StreamIdentity(role: nil, properties: ["application.name": "tabbard"]))
        #expect(e["PIPEWIRE_ALSA"] == #"{ application.name = "tabbard" }"#)
        #expect(e["PULSE_PROP"] == "")            // empty: the daemon leaves the variable unset
        // An unknown role is not passed to PipeWire (the config refuses it before).
        #expect(!env(StreamIdentity(role: "alarm", properties: [:]))["PIPEWIRE_ALSA"]!.contains("media.role"))
    }

    @Test func namesAndValuesThatCannotBeWrittenQuotedAreRefused() {
        #expect(StreamIdentity.validName("application.name") == nil)
        #expect(StreamIdentity.validName("node-name_2") == nil)
        #expect(StreamIdentity.validName("") != nil)
        #expect(StreamIdentity.validName("a b") != nil)
        #expect(StreamIdentity.validName("a=b") != nil)
        #expect(StreamIdentity.validName(String(repeating: "a", count: 65)) != nil)
        #expect(StreamIdentity.validName("media.role") == "is set by stream_role")
        #expect(StreamIdentity.validValue("tabbard: tab clicks") == nil)
        #expect(StreamIdentity.validValue(String(repeating: "v", count: 256)) == nil)
        for bad in ["it's", "a\"b", "a\\b", "a\tb", "a\u{7F}b", String(repeating: "v", count: 257)] {
            #expect(StreamIdentity.validValue(bad) != nil, "\(bad.debugDescription)")
        }
    }

    /// A PCM that is not a sound server's plugin (`null`, like `hw:` and `plughw:`) neither reads
    /// the variables nor is made anew after idle: it stays open, as before.
    @Test func aDevicePCMStaysOpenAfterIdleAndHasNoPluginThread() throws {
        let sink = AlsaSink(device: "null", format: .standard, periodFrames: 256)
        try sink.open()
        defer { sink.close() }
        #expect(!sink.reopensAfterIdle)
        #expect(!sink.isPulsePlugin)
        #expect(sink.pluginThreadName == nil)
    }
}
