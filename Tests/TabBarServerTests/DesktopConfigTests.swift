import Glibc
import Testing
import TabBarAudio
@testable import TabBarServer

/// The stream's identity (what PipeWire's and PulseAudio's ALSA plugins are given) and the keys that shape it.
/// tests/pipewire/test_desktop.py checks what a real sound server shows of it.
@Suite struct DesktopConfigTests {
    @Test func theDefaultsNameTabbardWithTheEventRole() {
        let c = ConfigTests.fresh()
        let id = c.streamIdentity
        #expect(id.pipewireALSA == #"{ media.role = "Notification" application.icon_name = "audio-x-generic" application.id = "tabbard" application.name = "tabbard" media.name = "tabbard: tab clicks" }"#)
        #expect(id.pulseProp == #"media.role="event""#)
        // The pulse plugin names its stream itself: media.name is not given to it.
        #expect(id.pulsePropOverride == #"application.icon_name="audio-x-generic" application.id="tabbard" application.name="tabbard""#)
        #expect(c.desktopSounds == .auto)
    }

    @Test func anInstanceIsNamedAfterItself() {
        #expect(StreamIdentity.defaultProperties(instance: "mail")["application.name"] == "tabbard@mail")
        #expect(StreamIdentity.defaultProperties(instance: "a\"b")["application.name"] == "tabbard")
        #expect(StreamIdentity.defaultProperties(instance: nil)["application.name"] == "tabbard")
    }

    @Test func configuredPropertiesAndRole() throws {
        var c = ConfigTests.fresh()
        try c.apply(configText: Array(#"{"stream_role":"phone","stream_properties":{"application.name":"Mail tabs","media.name":"","node.name":"tabs"},"desktop_sounds":"input-feedback"}"#.utf8))
        let id = c.streamIdentity
        #expect(id.pipewireALSA == #"{ media.role = "Communication" application.icon_name = "audio-x-generic" application.id = "tabbard" application.name = "Mail tabs" node.name = "tabs" }"#)
        #expect(id.pulseProp == #"media.role="phone""#)
        #expect(c.desktopSounds == .inputFeedback)
        try c.apply(configText: Array(#"{"stream_role":"none"}"#.utf8))
        #expect(c.streamIdentity.pulseProp == "" && !c.streamIdentity.pipewireALSA.contains("media.role"))
    }

    @Test(arguments: [
        (#"{"stream_role":"alarm"}"#, #"stream_role: must be one of "event", "phone", "music", "video", "game", "a11y", "production", "test", "none", not "alarm""#),
        (#"{"stream_properties":{"media.role":"event"}}"#, "stream_properties.media.role: a property name is set by stream_role"),
        (#"{"stream_properties":{"a b":"x"}}"#, #"stream_properties.a b: a property name may hold only letters, digits, ".", "_" and "-""#),
        (#"{"stream_properties":{"application.name":"it's"}}"#, "stream_properties.application.name: may not hold control characters, quotes or backslashes"),
        (#"{"stream_properties":{"application.name":3}}"#, "stream_properties.application.name: must be a string, not 3"),
        (#"{"desktop_sounds":"yes"}"#, #"desktop_sounds: must be one of "auto", "follow", "input-feedback", "ignore", not "yes""#),
    ])
    func badValuesAreRefused(_ text: String, _ expected: String) {
        #expect(ConfigTests.problem(text) == expected, "\(text)")
    }

    @Test func suppression() {
        var s = DesktopSound()
        #expect(s.suppression(.follow) == nil)
        #expect(s.suppression(.inputFeedback) == "the desktop's input feedback sounds are off (org.gnome.desktop.sound input-feedback-sounds)")
        s.eventSounds = false
        #expect(s.suppression(.follow) == "the desktop's event sounds are off (org.gnome.desktop.sound event-sounds)")
        s = DesktopSound(eventSounds: true, inputFeedbackSounds: true, themeName: "x")
        #expect(s.suppression(.inputFeedback) == nil)
    }
}

/// The variables are set only while the process has one thread (`setenv` is not safe beside
/// another thread reading the environment); a test process has several, so nothing is set.
@Suite struct StreamIdentityEnvironmentTests {
    @Test func withOtherThreadsRunningNothingIsSet() {
        #expect(StreamEnvironment.threadCount() > 1)
        let before = getenv("PULSE_PROP_OVERRIDE").map { String(cString: $0) }
        let id = StreamIdentity(role: "event", properties: ["application.name": "tabbard-test-\(getpid())"])
        #expect(StreamEnvironment.apply(id) == [])
        #expect(getenv("PULSE_PROP_OVERRIDE").map { String(cString: $0) } == before)
    }
}
