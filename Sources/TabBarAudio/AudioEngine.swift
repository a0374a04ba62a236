import CALSA
import Glibc
import Synchronization
import TabBarCore

/// One voice that reached the sink: how long it took from the request being read
/// (`requestedAt`) to its first frame being handed to the sink, and how many frames
/// were queued in the device ahead of it (the acoustic delay still to come).
public struct VoiceReport: Equatable, Sendable {
    public var voice: UInt32
    public var name: String
    public var latencyNs: UInt64
    public var framesAhead: Int
    /// Index in the sink's output stream (frames since the device was opened) of the first frame.
    public var startFrame: Int64
    public init(voice: UInt32, name: String, latencyNs: UInt64, framesAhead: Int, startFrame: Int64 = 0) {
        self.voice = voice; self.name = name; self.latencyNs = latencyNs; self.framesAhead = framesAhead
        self.startFrame = startFrame
    }
}

/// Plays sounds: a fixed voice pool mixed on its own thread into an `AudioSink`.
///
/// `play` (state loop) and the audio thread meet only through bounded lock-free
/// queues and eventfds: neither ever waits for the other. While nothing has played
/// for `idleTimeout` the stream is stopped and the audio thread sleeps in a blocking
/// poll on its eventfd (no wake-ups); the next `play` starts the stream at once.
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
    private let log: AudioLog
    private let realtimePriority: Int32

    // Shared, lock-free.
    private let commands: SPSCRing<PlayCommand>
    private let reports: SPSCRing<RawReport>
    private let wakeFD: Int32
    private let reportEventFD: Int32
    private let stopping = Atomic<Bool>(false)
    private let available = Atomic<Bool>(false)
    private let masterBits = Atomic<UInt32>(Float(1).bitPattern)
    private let nextVoice = Atomic<UInt32>(0)
    private let tid = Atomic<Int32>(0)
    private let counters = Counters()

    // State-loop side (serialised by its own lock; the audio thread never takes it).
    private let producer: Mutex<ProducerSide>
    // Written by the audio thread only on device transitions (never on the mixing path).
    private let device = Mutex(DeviceStatus())

    // Audio thread only.
    private var mixer: Mixer
    private var mixBuffer: UnsafeMutablePointer<Float>
    private var starts: UnsafeMutableBufferPointer<(Unmanaged<Sound>, UInt32, UInt64)>
    private var ends: UnsafeMutableBufferPointer<Unmanaged<Sound>>
    private var streamFrames: Int64 = 0
    private var thread: pthread_t?

    struct ProducerSide {
        var bank: SoundBank
        var latencies: [UInt64] = []
        var latencyNext = 0
        var aheads: [Int] = []
        var maxLatency: UInt64 = 0
        var reported = 0
    }

    struct DeviceStatus {
        var state = "closed"
        var reason = ""
        var lastError = ""
        var pacing = ""
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
        let streamStarts = Atomic<Int>(0)
        let streamStops = Atomic<Int>(0)
        let errors = Atomic<Int>(0)
        let openFailures = Atomic<Int>(0)
        let chunks = Atomic<Int>(0)
        let frames = Atomic<Int>(0)
    }

    /// Window of recent voices the latency percentiles are computed over.
    public static let latencyWindow = 4096

    /// `voices` is the fixed pool size; `realtimePriority` > 0 asks for SCHED_FIFO.
    public init(sink: AudioSink, bank: SoundBank, voices: Int = 16, idleTimeout: Double = 2,
                realtimePriority: Int32 = 0, queueCapacity: Int = 256, log: @escaping AudioLog) {
        self.sink = sink
        self.voiceCount = max(voices, 1)
        self.idleTimeout = idleTimeout
        self.log = log
        self.realtimePriority = realtimePriority
        self.commands = SPSCRing(capacity: queueCapacity)
        self.reports = SPSCRing(capacity: max(queueCapacity, voices) * 4)
        self.wakeFD = tabbard_eventfd()
        self.reportEventFD = tabbard_eventfd()
        self.mixer = Mixer(voices: max(voices, 1), format: sink.format)
        self.mixBuffer = .allocate(capacity: 1)
        self.starts = .allocate(capacity: max(voices, 1) + queueCapacity)
        self.ends = .allocate(capacity: max(voices, 1) * 2 + queueCapacity)
        var side = ProducerSide(bank: bank)
        side.latencies.reserveCapacity(AudioEngine.latencyWindow)
        self.producer = Mutex(side)
    }

    deinit {
        shutdown()
        mixer.deallocate()
        mixBuffer.deallocate()
        starts.deallocate()
        ends.deallocate()
        if wakeFD >= 0 { Glibc.close(wakeFD) }
        if reportEventFD >= 0 { Glibc.close(reportEventFD) }
    }

    // MARK: - State-loop API

    /// Readable (epoll) when voice reports are waiting for `drainReports`.
    public var reportFD: Int32 { reportEventFD }

    /// The sound bank `play` callers should look sounds up in.
    public var bank: SoundBank { producer.withLock { $0.bank } }

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
    public func play(_ sound: Sound, gain: Float, requestedAt: UInt64,
                     retrigger: Retrigger = .overlap) -> PlayResult {
        guard available.load(ordering: .acquiring) else {
            return .unavailable(deviceState)
        }
        let fmt = sink.format
        guard sound.rate == fmt.rate, sound.channels == fmt.channels else {
            return .unavailable("sound \(sound.name) is \(sound.format), the device plays \(fmt)")
        }
        let id = nextVoice.add(1, ordering: .relaxed).newValue
        let cmd = PlayCommand(sound: .passRetained(sound), gain: max(0, gain.isFinite ? gain : 0),
                              requestedAt: requestedAt, voice: id, retrigger: retrigger)
        let pushed = producer.withLock { _ in commands.push(cmd) }
        guard pushed else {
            cmd.sound.release()
            counters.queueFull.add(1, ordering: .relaxed)
            return .unavailable("audio queue full (\(commands.capacity) pending requests)")
        }
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
        return .started(voice: id)
    }

    /// Hands every waiting voice report to `body` (state loop).
    public func drainReports(_ body: (VoiceReport) -> Void) {
        var counter: UInt64 = 0
        _ = Glibc.read(reportEventFD, &counter, 8)
        var out: [VoiceReport] = []
        producer.withLock { p in
            while let r = reports.pop() {
                switch r.kind {
                case .started:
                    let s = r.sound.takeRetainedValue()
                    out.append(VoiceReport(voice: r.voice, name: s.name, latencyNs: r.latencyNs, framesAhead: r.framesAhead, startFrame: r.startFrame))
                    if p.latencies.count < AudioEngine.latencyWindow {
                        p.latencies.append(r.latencyNs)
                        p.aheads.append(r.framesAhead)
                    } else {
                        p.latencies[p.latencyNext] = r.latencyNs
                        p.aheads[p.latencyNext] = r.framesAhead
                    }
                    p.latencyNext = (p.latencyNext + 1) % AudioEngine.latencyWindow
                    p.maxLatency = max(p.maxLatency, r.latencyNs)
                    p.reported += 1
                case .finished:
                    r.sound.release()
                }
            }
        }
        for r in out { body(r) }
    }

    /// Swaps the bank `bank` returns; voices already playing keep their sounds and finish.
    public func replaceBank(_ bank: SoundBank) {
        producer.withLock { $0.bank = bank }
    }

    /// `"playing"`, `"idle"`, `"unavailable: <reason>"` (or `"closed"` before `start`).
    public var deviceState: String {
        device.withLock { d in d.state == "unavailable" ? "unavailable: \(d.reason)" : d.state }
    }

    /// The audio thread's kernel thread id (0 before `start`), for /proc and perf.
    public var audioThreadID: Int32 { tid.load(ordering: .acquiring) }

    /// Whether `play` can currently start voices.
    public var isAvailable: Bool { available.load(ordering: .acquiring) }

    /// Counters and latency figures (latencies in µs over the last `latencyWindow` voices).
    public func statsJSON() -> JSON {
        let d = device.withLock { $0 }
        let (lat, ahead, maxLat, reported) = producer.withLock { ($0.latencies, $0.aheads, $0.maxLatency, $0.reported) }
        let sorted = lat.sorted()
        let aheadSorted = ahead.sorted()
        func pct<T: BinaryInteger>(_ a: [T], _ p: Double) -> JSON {
            guard !a.isEmpty else { return .null }
            let i = min(a.count - 1, Int((p * Double(a.count - 1)).rounded()))
            return .double(Double(a[i]))
        }
        func us(_ v: JSON) -> JSON {
            if case .number(let t) = v, let x = Double(t) { return .double((x / 10).rounded() / 100) }
            return .null
        }
        let fmt = sink.format
        let periodUs = Double(d.periodFrames) * 1e6 / Double(max(fmt.rate, 1))
        var m: [JSON.Member] = []
        func add(_ k: String, _ v: JSON) { m.append(JSON.Member(k, v)) }
        add("device", .string(sink.deviceName))
        add("state", .string(deviceState))
        add("pacing", .string(d.pacing))
        add("rate", .int(fmt.rate))
        add("channels", .int(fmt.channels))
        add("period_frames", .int(d.periodFrames))
        add("period_us", .double((periodUs * 10).rounded() / 10))
        add("buffer_frames", .int(d.bufferFrames))
        add("voices", .int(voiceCount))
        add("sounds", .int(bank.sounds.count))
        add("voices_played", .int(counters.played.load(ordering: .relaxed)))
        add("voices_stolen", .int(counters.stolen.load(ordering: .relaxed)))
        add("voices_restarted", .int(counters.restarted.load(ordering: .relaxed)))
        add("queue_full", .int(counters.queueFull.load(ordering: .relaxed)))
        add("reports_dropped", .int(counters.reportsDropped.load(ordering: .relaxed)))
        add("latency_samples", .int(min(reported, AudioEngine.latencyWindow)))
        add("latency_p50_us", us(pct(sorted, 0.5)))
        add("latency_p99_us", us(pct(sorted, 0.99)))
        add("latency_max_us", reported > 0 ? .double((Double(maxLat) / 10).rounded() / 100) : .null)
        add("frames_ahead_p50", pct(aheadSorted, 0.5))
        add("frames_ahead_max", aheadSorted.last.map { JSON.int($0) } ?? .null)
        add("xruns", .int(counters.xruns.load(ordering: .relaxed)))
        add("stream_starts", .int(counters.streamStarts.load(ordering: .relaxed)))
        add("stream_stops", .int(counters.streamStops.load(ordering: .relaxed)))
        add("chunks_written", .int(counters.chunks.load(ordering: .relaxed)))
        add("frames_written", .int(counters.frames.load(ordering: .relaxed)))
        add("errors", .int(counters.errors.load(ordering: .relaxed)))
        add("open_failures", .int(counters.openFailures.load(ordering: .relaxed)))
        add("last_error", d.lastError.isEmpty ? .null : .string(d.lastError))
        return .object(m)
    }

    /// Stops the thread (what is queued in the device plays out), closes the sink and
    /// releases pending requests. Idempotent.
    public func shutdown() {
        if let t = thread {
            stopping.store(true, ordering: .releasing)
            var one: UInt64 = 1
            _ = Glibc.write(wakeFD, &one, 8)
            pthread_join(t, nil)
            thread = nil
        } else if device.withLock({ $0.state }) != "closed" {
            sink.close()
        }
        available.store(false, ordering: .releasing)
        setState("closed")
        while let c = commands.pop() { c.sound.release() }
        drainReports { _ in }
    }

    // MARK: - Audio thread

    private func setState(_ s: String, reason: String = "") {
        device.withLock { d in
            d.state = s
            d.reason = reason
            if !reason.isEmpty { d.lastError = reason }
            d.pacing = sink.pacing
            d.periodFrames = sink.periodFrames
            d.bufferFrames = sink.bufferFrames
        }
    }

    /// Tries to open the sink; on success allocates the mix buffer for its buffer size.
    @discardableResult
    private func openSink() -> Bool {
        do {
            try sink.open()
            let need = sink.bufferFrames * sink.format.channels
            mixBuffer.deallocate()
            mixBuffer = .allocate(capacity: max(need, 1))
            streamFrames = 0
            setState("idle")
            available.store(true, ordering: .releasing)
            log(.info, "audio device open device=\(sink.deviceName) rate=\(sink.format.rate) channels=\(sink.format.channels) period=\(sink.periodFrames) buffer=\(sink.bufferFrames) pacing=\(sink.pacing)")
            return true
        } catch {
            let reason = (error as? AudioError)?.reason ?? "\(error)"
            counters.openFailures.add(1, ordering: .relaxed)
            available.store(false, ordering: .releasing)
            setState("unavailable", reason: reason)
            log(.error, "audio device unavailable device=\(sink.deviceName) reason=\"\(reason)\"")
            return false
        }
    }

    private enum Mode { case unavailable, idle, running }

    private func threadMain() {
        var all = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, nil)
        tabbard_set_thread_name("tabbard-audio")
        tid.store(Int32(truncatingIfNeeded: tabbard_gettid()), ordering: .releasing)
        if realtimePriority > 0 {
            var param = sched_param(sched_priority: realtimePriority)
            let r = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &param)
            if r != 0 { log(.warning, "audio thread stays at normal priority reason=\"\(String(cString: strerror(r)))\"") }
        }
        var mode: Mode = available.load(ordering: .acquiring) ? .idle : .unavailable
        var backoff: UInt64 = 250_000_000
        var lastSound: UInt64 = 0
        let idleNs = UInt64(max(idleTimeout, 0) * 1e9)

        var stopDeadline: UInt64 = 0
        while true {
            if stopping.load(ordering: .acquiring) {
                // Shutting down: voices already playing finish (bounded), then the stream drains.
                if mode != .running { break }
                let now = monotonicNanos()
                if stopDeadline == 0 { stopDeadline = now + UInt64(shutdownGrace * 1e9) }
                if mixer.activeCount == 0 || now >= stopDeadline { break }
            }
            switch mode {
            case .unavailable:
                if pollReadable(wakeFD, timeoutNanos: backoff) { resetWake() }
                dropCommands()
                if stopping.load(ordering: .acquiring) { break }
                if openSink() {
                    mode = .idle
                    backoff = 250_000_000
                } else {
                    backoff = min(backoff * 2, 30_000_000_000)
                }
            case .idle:
                resetWake()
                takeCommands()
                if mixer.activeCount > 0 {
                    do {
                        try sink.start()
                        streamFrames += sink.silentFrames()  // a sink that kept time while stopped
                        counters.streamStarts.add(1, ordering: .relaxed)
                        setState("playing")
                        mode = .running
                        lastSound = monotonicNanos()
                    } catch {
                        mode = deviceFailed(error)
                    }
                } else if !stopping.load(ordering: .acquiring) {
                    _ = pollReadable(wakeFD, timeoutNanos: nil)
                }
            case .running:
                do {
                    let now = try runOnce()
                    if mixer.activeCount > 0 { lastSound = now }
                    else if now &- lastSound >= idleNs {
                        sink.stop()
                        counters.streamStops.add(1, ordering: .relaxed)
                        publishXruns()
                        setState("idle")
                        mode = .idle
                    }
                } catch {
                    mode = deviceFailed(error)
                }
            }
        }
        if mode == .running {
            sink.stop()
            counters.streamStops.add(1, ordering: .relaxed)
        }
        if mode != .unavailable { sink.close() }
        publishXruns()
        dropCommands()
        for i in mixer.voices.indices where mixer.voices[i].active {
            mixer.voices[i].active = false
            mixer.voices[i].sound?.release()
            mixer.voices[i].sound = nil
        }
    }

    private func deviceFailed(_ error: Error) -> Mode {
        let reason = (error as? AudioError)?.reason ?? "\(error)"
        counters.errors.add(1, ordering: .relaxed)
        log(.error, "audio device failed device=\(sink.deviceName) reason=\"\(reason)\"")
        available.store(false, ordering: .releasing)
        sink.close()
        for i in mixer.voices.indices where mixer.voices[i].active {
            mixer.voices[i].active = false
            if let s = mixer.voices[i].sound { finishedReport(s) }
            mixer.voices[i].sound = nil
        }
        dropCommands()
        signalReports()
        setState("unavailable", reason: reason)
        return .unavailable
    }

    private func publishXruns() {
        counters.xruns.store(sink.xruns, ordering: .relaxed)
    }

    private func resetWake() {
        var v: UInt64 = 0
        _ = Glibc.read(wakeFD, &v, 8)
    }

    /// Moves queued requests into the voice pool.
    private func takeCommands() {
        while let c = commands.pop() {
            let (stolen, faded) = mixer.add(c)
            if let s = stolen {
                counters.stolen.add(1, ordering: .relaxed)
                finishedReport(s)
            }
            if faded > 0 { counters.restarted.add(faded, ordering: .relaxed) }
        }
    }

    private func dropCommands() {
        var dropped = false
        while let c = commands.pop() { finishedReport(c.sound); dropped = true }
        if dropped { signalReports() }
    }

    /// Makes `reportFD` readable so the state loop drains (and releases) what was pushed.
    private func signalReports() {
        var one: UInt64 = 1
        _ = Glibc.write(reportEventFD, &one, 8)
    }

    /// Hands a sound reference back to the state loop to release (or releases it here).
    private func finishedReport(_ s: Unmanaged<Sound>) {
        if !reports.push(RawReport(kind: .finished, sound: s, voice: 0, latencyNs: 0, framesAhead: 0, startFrame: 0)) {
            s.release()
        }
    }

    /// One step of the running stream: write what is due, or sleep until it is.
    /// Returns the time of the step.
    private func runOnce() throws -> UInt64 {
        let period = sink.periodFrames
        let target = period * 2
        let lowWater = period
        let urgentChunk = max(min(period / 4, 64), 1)
        takeCommands()
        let queued = try sink.queuedFrames()
        let free = sink.bufferFrames - queued
        var hasNew = false
        for v in mixer.voices where v.active && !v.reported { hasNew = true; break }
        if free > 0 && (queued <= lowWater || hasNew) {
            var n = max(target - queued, 0)
            if hasNew { n = max(n, urgentChunk) }
            n = min(n, free)
            if n > 0 {
                try renderAndWrite(frames: n, queued: queued)
                return monotonicNanos()
            }
        }
        // A voice waiting for room only needs one small chunk of it.
        let wake = hasNew ? max(sink.bufferFrames - urgentChunk, lowWater) : lowWater
        let woken = try sink.wait(lowWater: wake, wakeFD: wakeFD, timeoutNanos: nil)
        if woken { resetWake() }
        return monotonicNanos()
    }

    /// Mixes `frames` frames and writes them; reports voices that start in them.
    private func renderAndWrite(frames: Int, queued: Int) throws {
        guard frames > 0 else { return }
        var nStarts = 0
        for i in mixer.voices.indices where mixer.voices[i].active && !mixer.voices[i].reported {
            mixer.voices[i].reported = true
            let v = mixer.voices[i]
            if nStarts < starts.count, let s = v.sound {
                starts[nStarts] = (s, v.id, v.requestedAt)
                nStarts += 1
            }
        }
        var nEnds = 0
        let endsBuf = ends
        mixer.render(into: mixBuffer, frames: frames, master: masterGain) { v in
            if let s = v.sound {
                if nEnds < endsBuf.count { endsBuf[nEnds] = s; nEnds += 1 } else { s.release() }
            }
        }
        for i in 0..<nStarts {
            let (s, id, _) = starts[i]
            let v = mixer.voices.first { $0.id == id }
            sink.voiceStarted(VoiceRecord(voice: id, name: s.takeUnretainedValue().name, start: streamFrames,
                                          frames: s.takeUnretainedValue().frames, gain: (v?.gain ?? 1) * masterGain))
        }
        let t = monotonicNanos()
        try sink.write(mixBuffer, frames: frames)
        streamFrames += Int64(frames)
        counters.chunks.add(1, ordering: .relaxed)
        counters.frames.add(frames, ordering: .relaxed)
        var pushed = false
        for i in 0..<nStarts {
            let (s, id, requestedAt) = starts[i]
            _ = s.retain()
            let latency = t > requestedAt ? t - requestedAt : 0
            if reports.push(RawReport(kind: .started, sound: s, voice: id, latencyNs: latency, framesAhead: queued, startFrame: streamFrames - Int64(frames))) {
                pushed = true
            } else {
                s.release()
                counters.reportsDropped.add(1, ordering: .relaxed)
            }
            counters.played.add(1, ordering: .relaxed)
        }
        for i in 0..<nEnds { finishedReport(ends[i]); pushed = true }
        if pushed {
            var one: UInt64 = 1
            _ = Glibc.write(reportEventFD, &one, 8)
        }
        if sink.xruns != counters.xruns.load(ordering: .relaxed) { publishXruns() }
    }
}
