import CALSA
import Glibc
import Synchronization
import TabBarCore

/// One voice that reached the sink: how long it took from the request being read
/// (`requestedAt`) to its first frame being handed to the sink, and how many frames
/// were queued in the device ahead of it (the acoustic delay still to come).
///
/// A report with `failure` set is a voice that was accepted but not heard intact (an
/// underrun cut it, or the device went away before it was written): wire `sound.failed`.
public struct VoiceReport: Equatable, Sendable {
    public var voice: UInt32
    public var name: String
    /// Request read → first frame handed to the sink (`snd_pcm_writei`).
    public var latencyNs: UInt64
    public var framesAhead: Int
    /// Index in the sink's output stream (frames since the device was opened) of the first frame.
    public var startFrame: Int64
    /// Request read → estimated arrival of the first frame at the listener: write time plus
    /// what the PCM still held ahead of it (`snd_pcm_delay`, which includes a sound server's delay).
    public var sinkLatencyNs: UInt64
    /// Why the voice failed (nil: it started normally).
    public var failure: String?
    public init(voice: UInt32, name: String, latencyNs: UInt64, framesAhead: Int, startFrame: Int64 = 0,
                sinkLatencyNs: UInt64 = 0, failure: String? = nil) {
        self.voice = voice; self.name = name; self.latencyNs = latencyNs; self.framesAhead = framesAhead
        self.startFrame = startFrame; self.sinkLatencyNs = sinkLatencyNs; self.failure = failure
    }
}

/// Plays sounds: a fixed voice pool mixed on its own thread into an `AudioSink`.
///
/// `play` (state loop) and the audio thread meet only through bounded lock-free
/// queues and eventfds: neither ever waits for the other. The thread keeps queued only
/// what the device (or sound server) takes at once plus one period; as soon as the last
/// voice has been played the queue is dropped and the stream left prepared (`standby`),
/// so the next voice is the first frame the device takes. While nothing has played for
/// `idleTimeout` the stream is stopped and the thread sleeps in a blocking poll on its
/// eventfd (no wake-ups). See docs/AUDIO.md.
public final class AudioEngine: @unchecked Sendable {
    /// Result of `play`. `unavailable` carries the reason (wire error `audio_unavailable`).
    public enum PlayResult: Equatable, Sendable {
        case started(voice: UInt32)
        case unavailable(String)
    }

    public let sink: AudioSink
    public let voiceCount: Int
    /// Seconds without a sounding voice after which the stream stops.
    public let idleTimeout: Double
    /// Seconds `shutdown` lets playing voices finish before the stream is drained.
    public var shutdownGrace: Double = 2
    /// Frames a sound server is first assumed to take at once (PipeWire's quantum on a VM);
    /// the engine then learns what it really takes (`pull_frames` in stats).
    public var initialPullFrames = 1024
    let log: AudioLog
    let realtimePriority: Int32

    // Shared, lock-free.
    let commands: SPSCRing<PlayCommand>
    let reports: SPSCRing<RawReport>
    let wakeFD: Int32
    let reportEventFD: Int32
    let stopping = Atomic<Bool>(false)
    let available = Atomic<Bool>(false)
    let masterBits = Atomic<UInt32>(Float(1).bitPattern)
    let nextVoice = Atomic<UInt32>(0)
    let tid = Atomic<Int32>(0)
    let counters = Counters()
    /// CLOCK_MONOTONIC of the last `play` refused for want of a device (asks for a retry).
    let wantedAt = Atomic<UInt64>(0)

    // State-loop side: the state-loop API (`play`, `drainReports`, `replaceBank`, `statsJSON`…)
    // is called from one thread at a time (the commands ring's one producer, the reports ring's
    // one consumer), so what only it touches needs no lock. The audio thread never reads these.
    /// The sound bank `play` callers should look sounds up in.
    public private(set) var bank: SoundBank
    /// What the voices that started measured (stats).
    var figures = StartFigures()
    // Written by the audio thread only on device transitions (never on the mixing path).
    let device = Mutex(DeviceStatus())

    // Audio thread only.
    var mixer: Mixer
    var mixBuffer: UnsafeMutablePointer<Float>
    var mixCapacity = 1
    var starts: UnsafeMutableBufferPointer<(Unmanaged<Sound>, UInt32, UInt64)>
    var ends: UnsafeMutableBufferPointer<(Unmanaged<Sound>, UInt32)>
    /// Voices fully written but maybe not yet played: (sound, voice, stream frame after its
    /// last frame). Released once played; reported failed if the device goes first.
    var tail: UnsafeMutableBufferPointer<(Unmanaged<Sound>, UInt32, Int64)>
    var tailCount = 0
    /// Voices taken whole but not yet confirmed heard (Unconfirmed.swift).
    var unconfirmed: UnsafeMutableBufferPointer<(Unmanaged<Sound>, UInt32)>
    var unconfirmedCount = 0
    var streamFrames: Int64 = 0
    var run = RunState()
    private var thread: pthread_t?

    /// The device as the audio thread last left it. The raw value is what stats (`state`) say.
    enum DeviceState: String {
        /// Before `start` and after `shutdown`.
        case closed
        /// It could not be opened, or failed; retried (the reason is in `DeviceStatus`).
        case unavailable
        /// Open, the stream stopped: no wake-ups.
        case idle
        /// The stream prepared with nothing queued, until the idle stop.
        case standby
        /// Voices are being written.
        case playing
    }

    struct DeviceStatus {
        var state = DeviceState.closed
        var reason = ""
        var lastError = ""
        var pacing: StreamPacing?
        var periodFrames = 0
        var bufferFrames = 0
    }

    final class Counters: @unchecked Sendable {
        let played = Atomic<Int>(0)
        let stolen = Atomic<Int>(0)
        let restarted = Atomic<Int>(0)
        let queueFull = Atomic<Int>(0)
        let reportsDropped = Atomic<Int>(0)
        let xruns = Atomic<Int>(0)
        let startRaces = Atomic<Int>(0)
        let runOutXruns = Atomic<Int>(0)
        let streamStarts = Atomic<Int>(0)
        let streamStops = Atomic<Int>(0)
        let errors = Atomic<Int>(0)
        let openFailures = Atomic<Int>(0)
        let chunks = Atomic<Int>(0)
        let frames = Atomic<Int>(0)
        let failed = Atomic<Int>(0)
        let standbys = Atomic<Int>(0)
        let stalls = Atomic<Int>(0)
        let pullFrames = Atomic<Int>(0)
        let wakeups = Atomic<Int>(0)
        let threadWakes = Atomic<Int>(0)
    }

    /// Window of recent voices the latency percentiles are computed over.
    public static let latencyWindow = 4096

    /// A new sound at most this long (a click: 12 ms) is written whole in its first write, not
    /// just the queue's pull + a period: the server then holds all of it, and a refill that comes
    /// late — the machine stalled longer than the queue lasts — cannot cut it (docs/AUDIO.md, "A
    /// short sound's first write holds all of it"). Its first frame is where it was (the head of
    /// the queue after standby, else after what is queued); only a sound that starts while it
    /// plays waits behind its rest.
    public static let wholeSoundSeconds = 0.016

    /// `voices` is the fixed pool size; `realtimePriority` > 0 asks for SCHED_FIFO.
    public init(sink: AudioSink, bank: SoundBank, voices: Int = 16, idleTimeout: Double = 2,
                realtimePriority: Int32 = 0, queueCapacity: Int = 256, log: @escaping AudioLog) {
        self.sink = sink
        self.voiceCount = max(voices, 1)
        self.idleTimeout = idleTimeout
        self.log = log
        self.realtimePriority = realtimePriority
        let commands = SPSCRing<PlayCommand>(capacity: queueCapacity)
        self.commands = commands
        self.queueFullReason = "audio queue full (\(commands.capacity) pending requests)"
        self.reports = SPSCRing(capacity: max(queueCapacity, voices) * 4)
        self.wakeFD = tabbard_eventfd()
        self.reportEventFD = tabbard_eventfd()
        self.mixer = Mixer(voices: max(voices, 1), format: sink.format)
        self.mixBuffer = .allocate(capacity: 1)
        self.starts = .allocate(capacity: max(voices, 1) + queueCapacity)
        self.ends = .allocate(capacity: max(voices, 1) * 2 + queueCapacity)
        self.tail = .allocate(capacity: max(voices, 1) * 4)
        self.unconfirmed = .allocate(capacity: max(voices, 1) * 4)
        self.bank = bank
    }

    deinit {
        shutdown()
        mixer.deallocate()
        mixBuffer.deallocate()
        starts.deallocate()
        ends.deallocate()
        tail.deallocate()
        unconfirmed.deallocate()
        figures.deallocate()
        if wakeFD >= 0 { Glibc.close(wakeFD) }
        if reportEventFD >= 0 { Glibc.close(reportEventFD) }
    }

    // MARK: - State-loop API

    /// Readable (epoll) when voice reports are waiting for `drainReports`.
    public var reportFD: Int32 { reportEventFD }

    /// Master volume, 0…1 (applied to every voice started afterwards and playing now).
    public var masterGain: Float {
        get { Float(bitPattern: masterBits.load(ordering: .relaxed)) }
        set { masterBits.store(max(0, min(newValue, 4)).bitPattern, ordering: .relaxed) }
    }

    /// Opens the sink (a failure leaves the engine `unavailable`, retrying with back-off)
    /// and starts the audio thread. Throws only when the thread or its eventfds cannot be made.
    public func start() throws {
        guard thread == nil else { return }
        if wakeFD < 0 || reportEventFD < 0 { throw AudioError.system(call: "eventfd", errno: ENOMEM) }
        stopping.store(false, ordering: .relaxed)
        openSink()
        let box = Unmanaged.passRetained(self)
        var tid = pthread_t()
        let r = pthread_create(&tid, nil, { arg in
            let engine = Unmanaged<AudioEngine>.fromOpaque(arg!).takeRetainedValue()
            engine.threadMain()
            return nil
        }, box.toOpaque())
        if r != 0 {
            box.release()
            throw AudioError.system(call: "pthread_create", errno: r)
        }
        thread = tid
    }

    /// Queues `sound` to start in the next chunk written to the device. Never blocks.
    /// `requestedAt` is CLOCK_MONOTONIC (`monotonicNanos()`) when the request was read.
    /// `wake: false` leaves waking the audio thread to one `wake()` after a group of plays
    /// (a loop turn's clicks: one wake-up, one context switch, instead of one per click).
    public func play(_ sound: Sound, gain: Float, requestedAt: UInt64,
                     retrigger: Retrigger = .overlap, wake: Bool = true) -> PlayResult {
        guard available.load(ordering: .acquiring) else {
            // Someone wants sound: the audio thread retries the device now rather than after its back-off.
            wantedAt.store(monotonicNanos(), ordering: .relaxed)
            var one: UInt64 = 1
            _ = Glibc.write(wakeFD, &one, 8)
            return .unavailable(deviceState)
        }
        let fmt = sink.format
        guard sound.rate == fmt.rate, sound.channels == fmt.channels else {
            return .unavailable("sound \(sound.name) is \(sound.format), the device plays \(fmt)")
        }
        let id = nextVoice.add(1, ordering: .relaxed).newValue
        let cmd = PlayCommand(sound: .passRetained(sound), gain: max(0, gain.isFinite ? gain : 0),
                              requestedAt: requestedAt, voice: id, retrigger: retrigger)
        guard commands.push(cmd) else {
            cmd.sound.release()
            counters.queueFull.add(1, ordering: .relaxed)
            return .unavailable(queueFullReason)
        }
        if wake { self.wake() }
        return .started(voice: id)
    }

    /// Why `play` refuses a voice while its queue is full (made once: a burst of taps
    /// against a stalled audio thread refuses many).
    let queueFullReason: String

    /// Wakes the audio thread to take what `play(…, wake: false)` queued.
    public func wake() {
        counters.threadWakes.add(1, ordering: .relaxed)
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    /// Hands every waiting voice report to `body` (state loop): started voices, and
    /// voices that failed (`failure` set).
    public func drainReports(_ body: (VoiceReport) -> Void) {
        drain { r, s, why in
            body(VoiceReport(voice: r.voice, name: s.name, latencyNs: r.latencyNs, framesAhead: r.framesAhead,
                             startFrame: r.startFrame, sinkLatencyNs: r.sinkLatencyNs, failure: why))
        }
    }

    /// `drainReports`, each report's fields handed over as they are read (no `VoiceReport`
    /// is made, and nothing of it copied): `played` gets a voice that started (its number,
    /// its sound's name, its start frame), `failed` a voice that was not heard intact (its
    /// number, its sound's name, why).
    public func drainReports(played: (UInt32, String, Int64) -> Void, failed: (UInt32, String, String) -> Void) {
        drain { r, s, why in
            if let why { failed(r.voice, s.name, why) } else { played(r.voice, s.name, r.startFrame) }
        }
    }

    /// Takes every waiting report off the ring in one pass: a voice that started is counted in
    /// `figures` and handed to `each`, as is one that failed (with why; nil: it started); the
    /// sound reference of a finished voice is released. (`each` may call back into the engine:
    /// no lock is held.)
    @inline(__always)
    private func drain(_ each: (RawReport, Sound, String?) -> Void) {
        var counter: UInt64 = 0
        _ = Glibc.read(reportEventFD, &counter, 8)
        while let r = reports.pop() {
            switch r.kind {
            case .started:
                figures.add(latency: r.latencyNs, sinkLatency: r.sinkLatencyNs, ahead: r.framesAhead)
                each(r, r.sound.takeRetainedValue(), nil)
            case .failed:
                // (The device's last error is read only for the reason that names it.)
                let why = r.failure.text(device: r.failure == .deviceLost ? device.withLock { $0.lastError } : "")
                each(r, r.sound.takeRetainedValue(), why)
            case .finished:
                r.sound.release()
            }
        }
    }

    /// Swaps the bank `bank` returns; voices already playing keep their sounds and finish.
    public func replaceBank(_ bank: SoundBank) {
        self.bank = bank
    }

    /// `"playing"`, `"idle"`, `"unavailable: <reason>"` (or `"closed"` before `start`).
    public var deviceState: String {
        device.withLock { d in d.state == .unavailable ? "unavailable: \(d.reason)" : d.state.rawValue }
    }

    /// The audio thread's kernel thread id (0 before `start`), for /proc and perf.
    public var audioThreadID: Int32 { tid.load(ordering: .acquiring) }

    /// Whether `play` can currently start voices.
    public var isAvailable: Bool { available.load(ordering: .acquiring) }

    /// Stops the thread (playing voices finish within `shutdownGrace`, what is queued plays
    /// out within the sink's drain deadline), closes the sink and releases pending requests.
    /// Bounded whatever the device does. Idempotent.
    public func shutdown() {
        if let t = thread {
            stopping.store(true, ordering: .releasing)
            var one: UInt64 = 1
            _ = Glibc.write(wakeFD, &one, 8)
            pthread_join(t, nil)
            thread = nil
        } else if device.withLock({ $0.state }) != .closed {
            sink.close()
        }
        available.store(false, ordering: .releasing)
        setState(.closed)
        while let c = commands.pop() { c.sound.release() }
        drainReports { _ in }
    }
}
