import CALSA
import Glibc
import Synchronization

/// One voice as handed to a sink, recorded by `NullSink` (and reported in stats).
public struct VoiceRecord: Equatable, Sendable {
    public var voice: UInt32
    /// The sound's name.
    public var name: String
    /// Frame index in the sink's output stream (since `open`) of the voice's first frame.
    public var start: Int64
    /// Frames the sound has.
    public var frames: Int
    /// Gain applied (request gain × master volume).
    public var gain: Float
    public init(voice: UInt32, name: String, start: Int64, frames: Int, gain: Float) {
        self.voice = voice; self.name = name; self.start = start; self.frames = frames; self.gain = gain
    }
}

/// An output device the engine's audio thread writes mixed audio to.
///
/// Life cycle (all calls on the audio thread after `open`): `open` → (`start` →
/// `queuedFrames`/`wait`/`write`… → `stop`)* → `close`. `write` is handed at most
/// `bufferFrames - queuedFrames()` frames, so it never blocks; `wait` is where the
/// thread sleeps — until the device has drained to `lowWater` queued frames or the
/// engine's wake-up eventfd becomes readable. A sink that cannot be paced by its
/// device paces itself by CLOCK_MONOTONIC.
public protocol AudioSink: AnyObject {
    /// The format `write` takes (interleaved Float32).
    var format: PCMFormat { get }
    /// Frames per device period.
    var periodFrames: Int { get }
    /// Frames the device buffer holds.
    var bufferFrames: Int { get }
    /// The device string, for logs and stats.
    var deviceName: String { get }
    /// `"device"` when the device paces writes, `"clock"` when the sink paces itself.
    var pacing: String { get }
    /// Underruns (and suspends) recovered so far.
    var xruns: Int { get }
    /// Opens and configures the device. Throws `AudioError.deviceOpen`.
    func open() throws
    /// Prepares the stream to play (after `open` or `stop`).
    func start() throws
    /// Frames written but not yet played.
    func queuedFrames() throws -> Int
    /// Sleeps until at most `lowWater` frames are queued, `wakeFD` is readable, or
    /// `timeoutNanos` passed. Returns true when `wakeFD` is readable.
    func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool
    /// Queues `frames` interleaved frames. Throws `AudioError.deviceIO` when the device is gone.
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws
    /// Stops the stream (what was queued plays out); no wake-ups until the next `start`.
    func stop()
    /// Releases the device.
    func close()
    /// Called just before the chunk holding the voice's first frame is written.
    func voiceStarted(_ record: VoiceRecord)
    /// Frames until a frame written now reaches the listener (queue plus any server delay).
    func delayFrames() throws -> Int
    /// Drops the queue but keeps the stream ready, so the next `write` is heard first.
    /// The engine calls it once the queue has run out (an underrun then is expected and not
    /// counted). Returns false when the sink cannot.
    func standby() -> Bool
    /// Whether `standby` is supported; when not, the engine feeds silence until the idle stop.
    var canStandby: Bool { get }
    /// Called on the audio thread after each successful `open`: a sink may measure the device here.
    func settle()
    /// Frames the device takes at once (a sound server's quantum), 0 when not known.
    var pullFrames: Int { get }
}

extension AudioSink {
    public func voiceStarted(_ record: VoiceRecord) {}
    public func delayFrames() throws -> Int { try queuedFrames() }
    public func standby() -> Bool { false }
    public var canStandby: Bool { false }
    public func settle() {}
    public var pullFrames: Int { 0 }
}

/// Paces a stream that the device does not pace: frames are "played" at the
/// nominal rate from the moment the stream started.
struct ClockPacer {
    let rate: Int
    private(set) var startNs: UInt64 = 0
    private(set) var written: Int64 = 0
    /// Times the writer fell behind the clock (the equivalent of an underrun).
    private(set) var underruns = 0

    init(rate: Int) { self.rate = rate }

    mutating func reset(now: UInt64 = monotonicNanos()) {
        startNs = now
        written = 0
    }

    mutating func queued(now: UInt64 = monotonicNanos()) -> Int {
        let consumed = Int64(Double(now &- startNs) * Double(rate) / 1e9)
        let q = written - consumed
        if q < 0 {
            if written > 0 { underruns += 1 }
            startNs = now
            written = 0
            return 0
        }
        return Int(q)
    }

    mutating func wrote(_ frames: Int) { written += Int64(frames) }

    /// Nanoseconds until `queued` has drained to `target` frames.
    func nanosUntil(queued target: Int, now: UInt64 = monotonicNanos()) -> UInt64 {
        let targetConsumed = Double(written - Int64(target))
        let deadline = Double(startNs) + targetConsumed * 1e9 / Double(rate)
        let d = deadline - Double(now)
        return d <= 0 ? 0 : UInt64(d.rounded(.up))
    }
}

/// Waits on one fd with a nanosecond timeout (nil = forever). True when readable.
func pollReadable(_ fd: Int32, timeoutNanos: UInt64?) -> Bool {
    var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let t = timeoutNanos.map { Int64(min($0, UInt64(Int64.max))) } ?? -1
    let r = retryEINTR { tabbard_ppoll(&p, 1, t) }
    return r > 0 && (p.revents & Int16(POLLIN)) != 0
}

/// A sink that plays nothing, paced by CLOCK_MONOTONIC exactly like a device with the
/// same period and buffer size, recording every voice (and optionally the audio).
public final class NullSink: AudioSink, @unchecked Sendable {
    public let format: PCMFormat
    public let periodFrames: Int
    public let bufferFrames: Int
    public var deviceName: String { "null" }
    public var pacing: String { "clock" }
    public var xruns: Int { pacer.underruns }
    private var pacer: ClockPacer
    private let captureLimit: Int
    private let shared = Mutex(Shared())
    private var streamFrames: Int64 = 0

    struct Shared {
        var records: [VoiceRecord] = []
        var captured: [Float] = []
        var starts = 0
        var stops = 0
        var opened = false
    }

    /// `captureFrames` > 0 keeps the first that many written frames for `captured`.
    public init(format: PCMFormat = .standard, periodFrames: Int = 256, bufferPeriods: Int = 4,
                captureFrames: Int = 0) {
        self.format = format
        self.periodFrames = periodFrames
        self.bufferFrames = periodFrames * max(bufferPeriods, 2)
        self.pacer = ClockPacer(rate: format.rate)
        self.captureLimit = captureFrames
    }

    /// Voices handed to the sink so far, in start order.
    public var records: [VoiceRecord] { shared.withLock { $0.records } }
    /// The first `captureFrames` frames written (interleaved, after the limiter).
    public var captured: [Float] { shared.withLock { $0.captured } }
    /// Stream starts and stops so far (idle stop / restart).
    public var streamStarts: Int { shared.withLock { $0.starts } }
    public var streamStops: Int { shared.withLock { $0.stops } }

    public func open() throws { shared.withLock { $0.opened = true } }
    public func start() throws {
        pacer.reset()
        shared.withLock { $0.starts += 1 }
    }
    public func queuedFrames() throws -> Int { pacer.queued() }
    public func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        var t = pacer.nanosUntil(queued: lowWater)
        if let limit = timeoutNanos { t = min(t, limit) }
        return pollReadable(wakeFD, timeoutNanos: t)
    }
    public func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        pacer.wrote(frames)
        if captureLimit > 0 {
            let ch = format.channels
            shared.withLock { s in
                let room = captureLimit * ch - s.captured.count
                if room > 0 {
                    s.captured.append(contentsOf: UnsafeBufferPointer(start: samples, count: min(room, frames * ch)))
                }
            }
        }
        streamFrames += Int64(frames)
    }
    public func stop() { shared.withLock { $0.stops += 1 } }
    public func close() { shared.withLock { $0.opened = false } }
    public func voiceStarted(_ record: VoiceRecord) { shared.withLock { $0.records.append(record) } }
}
