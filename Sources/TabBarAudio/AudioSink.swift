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

/// How a sink's stream is paced. The raw value is what stats (`pacing`) and logs say.
public enum StreamPacing: String, Sendable {
    /// The device takes frames at its own pace (a card, a sound server's plugin).
    case device
    /// The sink paces itself by CLOCK_MONOTONIC (the null sink, a PCM that takes every write at once).
    case clock
    /// Time only moves when told (`--clock manual`, the null sink's virtual clock).
    case manual
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
    /// Who paces the stream: the device, the sink by the clock, or a manual clock.
    var pacing: StreamPacing { get }
    /// Underruns (and suspends) recovered so far.
    var xruns: Int { get }
    /// Underruns that were the start race of PipeWire's plugin, answered without a loss
    /// (`AlsaSink`, AlsaStartRace.swift); not in `xruns`.
    var startRaces: Int { get }
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
    /// Frames of silence the device played while the stream was stopped, up to the last
    /// `start`, not yet reported (then reset): the engine counts them in its stream
    /// position. 0 for a device that stands still while stopped (ALSA); the null sink under
    /// a manual clock keeps time while stopped.
    func silentFrames() -> Int64
    /// Frames until a frame written now reaches the listener (queue plus any server delay).
    func delayFrames() throws -> Int
    /// A clean look at the sound server's clock with the queue `queuedFrames` just gave, or nil
    /// (not a server whose cycles the engine can watch: only PipeWire's ALSA plugin;
    /// CycleGap.swift).
    func serverTiming(queued: Int) -> ServerTiming?
    /// Drops the queue but keeps the stream ready, so the next `write` is heard first.
    /// The engine calls it once the queue has run out (an underrun then is expected and not
    /// counted). Returns false when the sink cannot.
    func standby() -> Bool
    /// Whether `standby` is supported; when not, the engine feeds silence until the idle stop.
    var canStandby: Bool { get }
    /// Called on the audio thread after each successful `open`: a sink may measure the device
    /// here. A sound waiting (`wakeFD` readable) shortens it to the least that tells the pull.
    func settle(wakeFD: Int32)
    /// Frames the device takes at once (a sound server's quantum), 0 when not known.
    var pullFrames: Int { get }
    /// Frames the engine keeps queued beyond the pull and one period while voices sound: room
    /// for a refill that arrives late where a late refill is not an xrun but an unreported
    /// hole (PulseAudio's plugin, `AlsaSink.pulseRefillMargin`). 0: none needed.
    var refillMarginFrames: Int { get }
    /// Whether frames the device took are known heard only once the next stream is ready:
    /// PulseAudio's plugin, whose standby makes a new server stream that the server makes
    /// ready once a session manager has linked it, and whose server takes frames ahead of
    /// playing them (Unconfirmed.swift). false: taken is played.
    var standbyConfirmsLink: Bool { get }
    /// The name of a thread the device's plugin runs in this process that must share the
    /// audio thread's scheduling (PipeWire's ALSA plugin: `AlsaSink.pipewireLoopThread`;
    /// PulseAudio's: `AlsaSink.pulseLoopThread`), or
    /// nil: no thread to look for (the null sink, hardware).
    var pluginThreadName: String? { get }
    /// Whether the engine closes and opens the device again after each idle stop: a sound
    /// server's plugin, whose server applies the volume and mute the desktop keeps for the
    /// stream's role (the alert volume) when a stream is made, not to a running one (PipeWire
    /// 0.3.65 with WirePlumber 0.4; docs/DESKTOP.md, "The desktop's alert volume").
    var reopensAfterIdle: Bool { get }
    /// Whether a stream that does not move while sounds wait means the device stalled (false
    /// where time only moves when told: the null sink under a `ManualClock`).
    var detectsStalls: Bool { get }
}

extension AudioSink {
    public func voiceStarted(_ record: VoiceRecord) {}
    /// Whether the stream is paced by a clock (the null sink, an ALSA PCM that does not pace
    /// writes) rather than by the device taking frames in steps: no pull to learn.
    var clockPaced: Bool { pacing != .device }
    public func silentFrames() -> Int64 { 0 }
    public var startRaces: Int { 0 }
    public func delayFrames() throws -> Int { try queuedFrames() }
    public func serverTiming(queued: Int) -> ServerTiming? { nil }
    public func standby() -> Bool { false }
    public var canStandby: Bool { false }
    public func settle(wakeFD: Int32) {}
    public var pullFrames: Int { 0 }
    public var reopensAfterIdle: Bool { false }
    public var refillMarginFrames: Int { 0 }
    public var standbyConfirmsLink: Bool { false }
    public var pluginThreadName: String? { nil }
    public var detectsStalls: Bool { true }
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
/// same period and buffer size — or, given a `ManualClock`, by virtual time — keeping,
/// when asked, the first voices (`records`) and the first frames (`captured`) in memory,
/// and the stream in a WAV file (`startCapture`). Asked for nothing, its memory does not
/// grow with what it plays: the daemon's null sink plays for as long as it runs.
///
/// `Sendable`: the engine's audio thread plays into it while the state loop reads its records
/// and runs its captures; all its state is behind one lock (it stands for no device: no
/// real-time rule applies to it).
///
/// Under a manual clock the stream position (`position`) is the device's clock: the
/// stream keeps time while stopped, and whatever the clock moves is rendered before
/// `ManualClock.settle` returns. Its period is `ManualClock.periodFrames`.
public final class NullSink: AudioSink, Sendable {
    public let format: PCMFormat
    public let periodFrames: Int
    public let bufferFrames: Int
    public var deviceName: String { "null" }
    public var pacing: StreamPacing { pace.pacing }
    public var detectsStalls: Bool { pace.detectsStalls }
    public var xruns: Int { state.withLock { $0.pacer.underruns } }
    /// The virtual clock pacing the stream (nil: CLOCK_MONOTONIC).
    public let clock: ManualClock?
    /// What says which frame the device plays now: the manual clock, else the real one.
    private let pace: any NullSinkPace
    private let captureLimit: Int
    private let recordLimit: Int
    private let state: Mutex<State>

    struct State {
        let rate: Int
        var pacer: ClockPacer
        var records: [VoiceRecord] = []
        var captured: [Float] = []
        var starts = 0
        var stops = 0
        var opened = false
        /// Frames since `open`: written, and (manual clock) silence while stopped.
        var position: Int64 = 0
        var pendingSilent: Int64 = 0
        var running = false
        var file: WAVCapture?

        init(rate: Int) {
            self.rate = rate
            pacer = ClockPacer(rate: rate)
        }
    }

    /// `captureFrames` > 0 keeps the first that many written frames for `captured`, and
    /// `recordVoices` > 0 the first that many voices for `records`.
    public init(format: PCMFormat = .standard, periodFrames: Int = 256, bufferPeriods: Int = 4,
                captureFrames: Int = 0, recordVoices: Int = 0, clock: ManualClock? = nil) {
        self.format = format
        self.clock = clock
        pace = clock ?? RealTimePace()
        let period = pace.periodFrames ?? periodFrames
        self.periodFrames = period
        self.bufferFrames = period * max(bufferPeriods, 2)
        self.captureLimit = captureFrames
        self.recordLimit = recordVoices
        state = Mutex(State(rate: format.rate))
    }

    /// The first `recordVoices` voices handed to the sink, in start order.
    public var records: [VoiceRecord] { state.withLock { $0.records } }
    /// The first `captureFrames` frames written (interleaved, after the limiter).
    public var captured: [Float] { state.withLock { $0.captured } }
    /// Stream starts and stops so far (idle stop / restart).
    public var streamStarts: Int { state.withLock { $0.starts } }
    public var streamStops: Int { state.withLock { $0.stops } }
    /// The stream position: frames since `open`.
    public var position: Int64 { state.withLock { $0.position } }

    public func open() throws { state.withLock { $0.opened = true } }
    public func start() throws {
        state.withLock { s in
            pace.start(&s)
            s.running = true
            s.starts += 1
        }
        pace.streamActive(true)
    }
    public func silentFrames() -> Int64 {
        state.withLock { s in
            defer { s.pendingSilent = 0 }
            return s.pendingSilent
        }
    }
    public func queuedFrames() throws -> Int { state.withLock { pace.queued(&$0) } }
    public func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        pace.wait(lowWater: lowWater, wakeFD: wakeFD, timeoutNanos: timeoutNanos,
                  queued: { self.state.withLock { self.pace.queued(&$0) } },
                  nanosUntil: { low in self.state.withLock { $0.pacer.nanosUntil(queued: low) } })
    }
    public func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        let n = frames * format.channels
        state.withLock { s in
            pace.wrote(frames, &s)
            let room = captureLimit * format.channels - s.captured.count
            for i in 0..<min(max(room, 0), n) { s.captured.append(samples[i]) }
            if let f = s.file {
                for i in 0..<n { f.append(samples[i]) }
                f.appended(frames: frames)
            }
            s.position += Int64(frames)
        }
    }
    public func stop() {
        state.withLock { $0.stops += 1; $0.running = false }
        pace.streamActive(false)
    }
    public func close() {
        pace.streamActive(false)
        state.withLock { s in
            s.opened = false
            s.running = false
            _ = try? s.file?.finish()
            s.file = nil
        }
    }
    public func voiceStarted(_ record: VoiceRecord) {
        guard recordLimit > 0 else { return }
        state.withLock { s in
            if s.records.count < recordLimit { s.records.append(record) }
        }
    }

    /// Starts writing the stream to a WAV file at `path` (state loop). Returns the stream
    /// position of its first frame. Throws `CaptureError` (file, or a capture already running).
    public func startCapture(path: String) throws -> Int64 {
        try state.withLock { s throws -> Int64 in
            if let f = s.file { throw CaptureError(path: path, reason: "already capturing to \(f.path); capture.stop first") }
            let f = try WAVCapture(path: path, format: format, firstFrame: s.position)
            s.file = f
            return f.firstFrame
        }
    }

    /// Ends the capture (state loop): under a manual clock the silence up to the current
    /// time is written first. Returns the file, its first stream frame and its frame count;
    /// nil when no capture runs. Throws when the file could not be written.
    public func stopCapture() throws -> (path: String, firstFrame: Int64, frames: Int64)? {
        try state.withLock { s throws -> (path: String, firstFrame: Int64, frames: Int64)? in
            guard let f = s.file else { return nil }
            if !s.running { pace.catchUp(&s) }
            s.file = nil
            try f.finish()
            return (f.path, f.firstFrame, f.frames)
        }
    }
}

/// What paces the null sink: which frame its device plays now, and how its audio thread waits
/// for it. CLOCK_MONOTONIC (`RealTimePace`), or the harness's `ManualClock`, which the sink is given.
protocol NullSinkPace: Sendable {
    var pacing: StreamPacing { get }
    /// Whether a stream that does not move while sounds wait means the device stalled.
    var detectsStalls: Bool { get }
    /// The period the sink must use (nil: the one asked for).
    var periodFrames: Int? { get }
    /// The stream starts.
    func start(_ s: inout NullSink.State)
    /// Frames written but not yet played.
    func queued(_ s: inout NullSink.State) -> Int
    /// `frames` were written.
    func wrote(_ frames: Int, _ s: inout NullSink.State)
    /// The sink's `wait`, given its `queuedFrames` and its clock pacer's time until `lowWater`.
    func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?,
              queued: () -> Int, nanosUntil: (Int) -> UInt64) -> Bool
    /// The stream started or stopped.
    func streamActive(_ active: Bool)
    /// With the stream stopped: the silence up to now, counted in the position and the capture.
    func catchUp(_ s: inout NullSink.State)
}

/// The null sink paced by CLOCK_MONOTONIC from the stream's start, like a device.
struct RealTimePace: NullSinkPace {
    var pacing: StreamPacing { .clock }
    var detectsStalls: Bool { true }
    var periodFrames: Int? { nil }
    func start(_ s: inout NullSink.State) { s.pacer.reset() }
    func queued(_ s: inout NullSink.State) -> Int { s.pacer.queued() }
    func wrote(_ frames: Int, _ s: inout NullSink.State) { s.pacer.wrote(frames) }
    func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?,
              queued: () -> Int, nanosUntil: (Int) -> UInt64) -> Bool {
        var t = nanosUntil(lowWater)
        if let limit = timeoutNanos { t = min(t, limit) }
        return pollReadable(wakeFD, timeoutNanos: t)
    }
    func streamActive(_ active: Bool) {}
    func catchUp(_ s: inout NullSink.State) {}
}
