// TEMPORARY stub until the real engine lands (see helper). Same public API.
import TabBarCore
@preconcurrency import Glibc

public struct PCMFormat: Equatable, Sendable { public var rate: Int; public var channels: Int
    public init(rate: Int, channels: Int) { self.rate = rate; self.channels = channels } }
public enum LogLevel: Int { case error = 3, warning = 4, notice = 5, info = 6, debug = 7 }
public typealias AudioLog = @Sendable (LogLevel, String) -> Void
public final class Sound: @unchecked Sendable { public let name: String; public let frames: Int; public let rate: Int; public let channels: Int; public let source: String
    init(name: String, source: String) { self.name = name; frames = 0; rate = 48000; channels = 2; self.source = source } }
public final class SoundBank: @unchecked Sendable {
    public let format: PCMFormat
    public let sounds: [Sound]
    init(format: PCMFormat, sounds: [Sound]) { self.format = format; self.sounds = sounds }
    public static func load(directories: [String], files: [String: String] = [:], format: PCMFormat, log: AudioLog) -> SoundBank {
        SoundBank(format: format, sounds: ["click", "center", "reselect", "action"].map { Sound(name: $0, source: "stub") })
    }
    public func sound(named: String) -> Sound? { sounds.first { $0.name == named } }
}
public protocol AudioSink: AnyObject {}
public final class NullSink: AudioSink { public init(format: PCMFormat, periodFrames: Int) {} }
public final class AlsaSink: AudioSink { public init(device: String, format: PCMFormat, periodFrames: Int, log: @escaping AudioLog) {}
    public func probe() -> String? { "stub" } }
public struct VoiceReport { public var voice: UInt32; public var name: String; public var latencyNs: UInt64; public var framesAhead: Int }
public final class AudioEngine: @unchecked Sendable {
    public enum PlayResult: Equatable { case started(voice: UInt32), unavailable(String) }
    var next: UInt32 = 0
    var pending: [VoiceReport] = []
    public let reportFD: Int32
    let wfd: Int32
    public init(sink: AudioSink, bank: SoundBank, voices: Int = 16, log: @escaping AudioLog) { var p: [Int32] = [0, 0]; pipe(&p); _ = fcntl(p[0], F_SETFL, O_NONBLOCK); reportFD = p[0]; wfd = p[1] }
    public func start() throws {}
    public func play(_ sound: Sound, gain: Float, requestedAt: UInt64) -> PlayResult {
        next += 1; pending.append(VoiceReport(voice: next, name: sound.name, latencyNs: 0, framesAhead: 0))
        var one: UInt64 = 1; _ = write(wfd, &one, 8); return .started(voice: next) }
    public func drainReports(_ body: (VoiceReport) -> Void) { var v: UInt64 = 0; _ = read(reportFD, &v, 8); pending.forEach(body); pending = [] }
    public func replaceBank(_ bank: SoundBank) {}
    public var deviceState: String { "idle" }
    public func statsJSON() -> JSON { .obj([:]) }
    public func shutdown() {}
}
