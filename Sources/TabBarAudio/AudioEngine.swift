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
/// Three parts, each with one owner:
/// - this front (`Sendable`): `play`, `wake`, `drainReports`, stats. Its ends of the two rings
///   are used under its lock (`front`), so one caller at a time pushes and drains.
/// - the renderer (`AudioRenderer`, not `Sendable`): the mixer, the voices and the sink. Made
///   here, handed to the audio thread at `start` and from then on touched by it alone.
/// - `EngineShared`: what the two meet through — the bounded lock-free rings, the eventfds,
///   atomics, and the device status (written by the audio thread on device transitions only).
///
/// Neither side ever waits for the other. The thread keeps queued only what the device (or sound
/// server) takes at once plus one period; as soon as the last voice has been played the queue is
/// dropped and the stream left prepared (`standby`), so the next voice is the first frame the
/// device takes. While nothing has played for `idleTimeout` the stream is stopped and the thread
/// sleeps in a blocking poll on its eventfd (no wake-ups). See docs/AUDIO.md.
public final class AudioEngine: Sendable {
    /// Result of `play`. `unavailable` carries the reason (wire error `audio_unavailable`).
    public enum PlayResult: Equatable, Sendable {
        case started(voice: UInt32)
        case unavailable(String)
    }

    /// The format the sink plays (every sound must be in it).
    public let format: PCMFormat
    public let voiceCount: Int
    /// Seconds without a sounding voice after which the stream stops.
    public let idleTimeout: Double
    let shared: EngineShared
    /// The renderer until `start` hands it to the audio thread.
    private let pending: Mutex<AudioRenderer?>
    private let thread = Mutex<pthread_t?>(nil)
    /// What only the state-loop side touches: the voices' figures and the bank. Its lock is also
    /// what makes the front one producer of `commands` and one consumer of `reports`.
    let front: Mutex<Front>
    private let nextVoice = Atomic<UInt32>(0)
    /// Why `play` refuses a voice while its queue is full.
    private let queueFullReason: String

    struct Front {
        var bank: SoundBank
        var figures = StartFigures()
    }

    /// The device as the audio thread last left it. The raw value is what stats (`state`) say.
    enum DeviceState: String, Sendable {
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

    struct DeviceStatus: Sendable {
        var state = DeviceState.closed
        var reason = ""
        var lastError = ""
        var deviceName = ""
        var pacing: StreamPacing?
        var periodFrames = 0
        var bufferFrames = 0
    }

    final class Counters: Sendable {
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
        /// Streams made anew after an idle stop (`AudioSink.reopensAfterIdle`).
        let idleReopens = Atomic<Int>(0)
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
    /// late — the machine stalled longer than the queue lasts — cannot cut it (docs/DESKTOP.md, "A
    /// short sound's first write holds all of it"). Its first frame is where it was (the head of
    /// the queue after standby, else after what is queued); only a sound that starts while it
    /// plays waits behind its rest.
    public static let wholeSoundSeconds = 0.016

    /// `voices` is the fixed pool size; `realtimePriority` > 0 asks for SCHED_FIFO. The sink is
    /// the audio thread's from now on: keep only what it offers for other threads (a
    /// `NullSink`'s records and capture, a `FallbackSink`'s `status`). `shutdownGrace`: seconds
    /// `shutdown` lets playing voices finish before the stream is drained. `initialPullFrames`:
    /// frames a sound server is first assumed to take at once (PipeWire's quantum on a VM); the
    /// engine then learns what it really takes (`pull_frames` in stats).
    public init(sink: sending any AudioSink, bank: SoundBank, voices: Int = 16, idleTimeout: Double = 2,
                shutdownGrace: Double = 2, initialPullFrames: Int = 1024,
                realtimePriority: Int32 = 0, queueCapacity: Int = 1024, log: @escaping AudioLog) {
        format = sink.format
        voiceCount = max(voices, 1)
        self.idleTimeout = idleTimeout
        let shared = EngineShared(queueCapacity: queueCapacity, reportCapacity: max(queueCapacity, voices) * 4,
                                  deviceName: sink.deviceName)
        self.shared = shared
        queueFullReason = "audio queue full (\(shared.commands.capacity) pending requests)"
        front = Mutex(Front(bank: bank))
        pending = Mutex(AudioRenderer(sink: sink, shared: shared, voices: max(voices, 1), queueCapacity: queueCapacity,
                                      idleTimeout: idleTimeout, shutdownGrace: shutdownGrace,
                                      initialPullFrames: initialPullFrames, realtimePriority: realtimePriority, log: log))
    }

    deinit { shutdown() }

    // MARK: - State-loop API

    /// Readable (epoll) when voice reports are waiting for `drainReports`.
    public var reportFD: Int32 { shared.reportFD }

    /// The sound bank `play` callers should look sounds up in.
    public var bank: SoundBank { front.withLock { $0.bank } }

    /// Master volume, 0…1 (applied to every voice started afterwards and playing now).
    public var masterGain: Float {
        get { Float(bitPattern: shared.masterBits.load(ordering: .relaxed)) }
        set { shared.masterBits.store(max(0, min(newValue, 4)).bitPattern, ordering: .relaxed) }
    }

    /// Opens the sink (a failure leaves the engine `unavailable`, retrying with back-off) and
    /// starts the audio thread, which owns the renderer from then on. Throws only when the thread
    /// or its eventfds cannot be made. Once: a second call does nothing.
    public func start() throws {
        if shared.wakeFD < 0 || shared.reportFD < 0 { throw AudioError.system(call: "eventfd", errno: ENOMEM) }
        guard let renderer = pending.withLock({ $0.take() }) else { return }
        renderer.openSink()
        switch spawnThread({ renderer.threadMain() }) {
        case .success(let t):
            thread.withLock { $0 = t }
        case .failure(let e):
            // (The renderer, released with the closure, closed its sink.)
            shared.available.store(false, ordering: .releasing)
            shared.device.withLock { $0.state = .closed }
            throw e
        }
    }

    /// Queues `sound` to start in the next chunk written to the device. Never blocks.
    /// `requestedAt` is CLOCK_MONOTONIC (`monotonicNanos()`) when the request was read.
    /// `wake: false` leaves waking the audio thread to one `wake()` after a group of plays.
    public func play(_ sound: Sound, gain: Float, requestedAt: UInt64,
                     retrigger: Retrigger = .overlap, wake: Bool = true) -> PlayResult {
        guard shared.available.load(ordering: .acquiring) else {
            // Someone wants sound: the audio thread retries the device now rather than after its back-off.
            shared.wantedAt.store(monotonicNanos(), ordering: .relaxed)
            notify(shared.wakeFD)
            return .unavailable(deviceState)
        }
        guard sound.rate == format.rate, sound.channels == format.channels else {
            return .unavailable("sound \(sound.name) is \(sound.format), the device plays \(format)")
        }
        let id = nextVoice.add(1, ordering: .relaxed).newValue
        let cmd = PlayCommand(sound: .passRetained(sound), gain: max(0, gain.isFinite ? gain : 0),
                              requestedAt: requestedAt, voice: id, retrigger: retrigger)
        guard front.withLock({ _ in shared.commands.push(cmd) }) else {
            cmd.sound.release()
            shared.counters.queueFull.add(1, ordering: .relaxed)
            return .unavailable(queueFullReason)
        }
        if wake { self.wake() }
        return .started(voice: id)
    }

    /// Wakes the audio thread to take what `play(…, wake: false)` queued.
    public func wake() {
        shared.counters.threadWakes.add(1, ordering: .relaxed)
        notify(shared.wakeFD)
    }

    /// Hands every waiting voice report to `body` (state loop): started voices, and
    /// voices that failed (`failure` set).
    public func drainReports(_ body: (VoiceReport) -> Void) {
        drain { r, s, why in
            body(VoiceReport(voice: r.voice, name: s.name, latencyNs: r.latencyNs, framesAhead: r.framesAhead,
                             startFrame: r.startFrame, sinkLatencyNs: r.sinkLatencyNs, failure: why))
        }
    }

    /// `drainReports`, each report's fields handed over as they are read: `played` gets a voice
    /// that started (its number, its sound's name, its start frame), `failed` a voice that was
    /// not heard intact (its number, its sound's name, why).
    public func drainReports(played: (UInt32, String, Int64) -> Void, failed: (UInt32, String, String) -> Void) {
        drain { r, s, why in
            if let why { failed(r.voice, s.name, why) } else { played(r.voice, s.name, r.startFrame) }
        }
    }

    /// Takes every waiting report off the ring: a voice that started is counted in the figures
    /// and handed to `each`, as is one that failed (with why; nil: it started); the sound
    /// reference of a finished voice is released. (`each` may call back into the engine: the
    /// lock is held only while a report is taken.)
    private func drain(_ each: (RawReport, Sound, String?) -> Void) {
        var counter: UInt64 = 0
        _ = Glibc.read(shared.reportFD, &counter, 8)
        while let r = front.withLock({ f -> RawReport? in
            let r = shared.reports.pop()
            if let r, r.kind == .started {
                f.figures.add(latency: r.latencyNs, sinkLatency: r.sinkLatencyNs, ahead: r.framesAhead)
            }
            return r
        }) {
            switch r.kind {
            case .started:
                each(r, r.sound.takeRetainedValue(), nil)
            case .failed:
                let why = r.failure.text(device: r.failure == .deviceLost ? shared.device.withLock { $0.lastError } : "")
                each(r, r.sound.takeRetainedValue(), why)
            case .finished:
                r.sound.release()
            }
        }
    }

    /// Swaps the bank `bank` returns; voices already playing keep their sounds and finish.
    public func replaceBank(_ bank: SoundBank) {
        front.withLock { $0.bank = bank }
    }

    /// `"playing"`, `"idle"`, `"unavailable: <reason>"` (or `"closed"` before `start`).
    public var deviceState: String {
        shared.device.withLock { d in d.state == .unavailable ? "unavailable: \(d.reason)" : d.state.rawValue }
    }

    /// How many plays the command ring holds before `play` refuses ("audio queue full").
    public var queueCapacity: Int { shared.commands.capacity }

    /// The audio thread's kernel thread id (0 before `start`), for /proc and perf.
    public var audioThreadID: Int32 { shared.tid.load(ordering: .acquiring) }

    /// Whether `play` can currently start voices.
    public var isAvailable: Bool { shared.available.load(ordering: .acquiring) }

    /// Stops the thread (playing voices finish within `shutdownGrace`, what is queued plays
    /// out within the sink's drain deadline), closes the sink and releases pending requests.
    /// Bounded whatever the device does. Idempotent.
    public func shutdown() {
        if let t = thread.withLock({ $0.take() }) {
            shared.stopping.store(true, ordering: .releasing)
            notify(shared.wakeFD)
            pthread_join(t, nil)
        }
        shared.available.store(false, ordering: .releasing)
        shared.device.withLock { $0.state = .closed; $0.reason = "" }
        // The audio thread is gone: the front is the one consumer of `commands` now.
        while let c = front.withLock({ _ in shared.commands.pop() }) { c.sound.release() }
        drainReports { _ in }
    }
}

/// What the front and the audio thread share: the two bounded lock-free rings, the eventfds,
/// atomics, and the device status. Nothing else crosses between them.
final class EngineShared: Sendable {
    /// Play requests: pushed by the front (under its lock), popped by the audio thread.
    let commands: SPSCRing<PlayCommand>
    /// Voice reports: pushed by the audio thread, popped by the front (under its lock).
    let reports: SPSCRing<RawReport>
    /// Wakes the audio thread (a request queued, a device wanted, shutdown).
    let wakeFD: Int32
    /// Readable when reports wait (the state loop's epoll).
    let reportFD: Int32
    let stopping = Atomic<Bool>(false)
    let available = Atomic<Bool>(false)
    let masterBits = Atomic<UInt32>(Float(1).bitPattern)
    let tid = Atomic<Int32>(0)
    let counters = AudioEngine.Counters()
    /// CLOCK_MONOTONIC of the last `play` refused for want of a device (asks for a retry).
    let wantedAt = Atomic<UInt64>(0)
    /// Written by the audio thread only on device transitions (never on the mixing path).
    let device: Mutex<AudioEngine.DeviceStatus>

    init(queueCapacity: Int, reportCapacity: Int, deviceName: String) {
        commands = SPSCRing(capacity: queueCapacity)
        reports = SPSCRing(capacity: reportCapacity)
        wakeFD = tabbard_eventfd()
        reportFD = tabbard_eventfd()
        device = Mutex(AudioEngine.DeviceStatus(deviceName: deviceName))
    }

    deinit {
        if wakeFD >= 0 { Glibc.close(wakeFD) }
        if reportFD >= 0 { Glibc.close(reportFD) }
    }
}

/// Adds one to an eventfd (makes it readable).
func notify(_ fd: Int32) {
    var one: UInt64 = 1
    _ = Glibc.write(fd, &one, 8)
}

/// Runs `body` on a new thread. `sending`: the caller gives up everything `body` reaches, so
/// the new thread is its one owner (the audio thread's renderer).
public func spawnThread(_ body: sending @escaping () -> Void) -> Result<pthread_t, AudioError> {
    final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
    let box = Unmanaged.passRetained(Body(body))
    var tid = pthread_t()
    let r = pthread_create(&tid, nil, { arg in
        Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
        return nil
    }, box.toOpaque())
    if r != 0 {
        box.release()
        return .failure(.system(call: "pthread_create", errno: r))
    }
    return .success(tid)
}
