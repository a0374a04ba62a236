import CALSA
import Glibc
import Synchronization

/// The audio thread's bookkeeping of the stream it feeds.
struct RunState {
    /// Frames the device takes at once (learned); the queue is kept at this plus one period.
    var pull = 0
    /// Largest drop of the queue between two looks during this run, and how many drops were seen.
    var runMaxStep = 0
    var steps = 0
    /// Queue size after the last look or write.
    var lastQueued = 0
    /// Stream frame just after the last frame in which any voice sounded.
    var audibleEnd: Int64 = 0
    /// When the queue last shrank (or the stream started).
    var progressAt: UInt64 = 0
    /// Whether the stream ever made progress since the device was opened.
    var everProgressed = false
    /// The sink's xrun count at the last look.
    var xruns = 0
    /// Queue size and since when, while it runs out before standby.
    var drainQueued = -1
    var drainSince: UInt64 = 0
    /// The sink's own measure of its pull last adopted, and its pacing then.
    var sinkPull = 0
    var sinkPacing = StreamPacing.clock
    /// When the device last ran out of sound (standby or the idle stop; 0: never): the silence
    /// since then releases the limiter before the next run.
    var silentSince: UInt64 = 0
}

/// The audio thread's side of the engine: the mixer, the voice pool, the sink and the stream's
/// bookkeeping. Not `Sendable`: made by `AudioEngine.init`, handed to the audio thread at
/// `start` (`spawnThread`) and touched by that thread alone. It meets the front only through
/// `shared`. Real-time rule: once running it takes no lock and allocates nothing on the mixing
/// path (its buffers are allocated up front; a sound's last reference goes back to the state
/// loop through the reports ring, so no sound is freed here).
final class AudioRenderer {
    let sink: any AudioSink
    let shared: EngineShared
    let log: AudioLog
    let idleTimeout: Double
    let shutdownGrace: Double
    let initialPullFrames: Int
    let realtimePriority: Int32
    let commands: SPSCRing<PlayCommand>
    let reports: SPSCRing<RawReport>
    let wakeFD: Int32
    let reportEventFD: Int32
    let counters: AudioEngine.Counters

    var mixer: Mixer
    var mixBuffer: UnsafeMutablePointer<Float>
    var mixCapacity = 1
    var starts: UnsafeMutableBufferPointer<(Unmanaged<Sound>, UInt32, UInt64)>
    /// Voices that ended in the chunk being written: (sound, voice, stream frame of its first
    /// frame, or `reportedStart` when it was already reported failed).
    var ends: UnsafeMutableBufferPointer<(Unmanaged<Sound>, UInt32, Int64)>
    /// Voices fully written but maybe not yet played: (sound, voice, stream frame after the
    /// chunk that held its last frame, stream frame of its first frame or `reportedStart`). Released once played;
    /// reported failed if the device goes first.
    var tail: UnsafeMutableBufferPointer<(Unmanaged<Sound>, UInt32, Int64, Int64)>
    var tailCount = 0
    /// Voices taken whole but not yet confirmed heard (Unconfirmed.swift).
    var unconfirmed: UnsafeMutableBufferPointer<(Unmanaged<Sound>, UInt32)>
    var unconfirmedCount = 0
    var streamFrames: Int64 = 0
    var run = RunState()
    /// Cycles the server completed without the stream (CycleGap.swift), and the sink's
    /// underruns plus replayed starts when it last looked (either makes the plugin's stream anew).
    var cycleGaps: CycleGapDetector
    var cycleEpoch = 0
    /// Whether the sink is open (closed again by the thread, or by `deinit` when no thread ran).
    var sinkOpen = false

    init(sink: sending any AudioSink, shared: EngineShared, voices: Int, queueCapacity: Int, idleTimeout: Double,
         shutdownGrace: Double, initialPullFrames: Int, realtimePriority: Int32, log: @escaping AudioLog) {
        self.sink = sink
        self.shared = shared
        self.log = log
        self.idleTimeout = idleTimeout
        self.shutdownGrace = shutdownGrace
        self.initialPullFrames = initialPullFrames
        self.realtimePriority = realtimePriority
        commands = shared.commands
        reports = shared.reports
        wakeFD = shared.wakeFD
        reportEventFD = shared.reportFD
        counters = shared.counters
        mixer = Mixer(voices: voices, format: sink.format)
        cycleGaps = CycleGapDetector(rate: sink.format.rate)
        mixBuffer = .allocate(capacity: 1)
        starts = .allocate(capacity: voices + queueCapacity)
        ends = .allocate(capacity: voices * 2 + queueCapacity)
        tail = .allocate(capacity: voices * 4)
        unconfirmed = .allocate(capacity: voices * 4)
    }

    deinit {
        if sinkOpen { sink.close() }
        mixer.deallocate()
        mixBuffer.deallocate()
        starts.deallocate()
        ends.deallocate()
        tail.deallocate()
        unconfirmed.deallocate()
    }

    /// The master volume the front set.
    var masterGain: Float { Float(bitPattern: shared.masterBits.load(ordering: .relaxed)) }
}

extension AudioRenderer {
    enum Mode { case unavailable, idle, standby, running }
    enum Step { case running(UInt64), standby, stalled }

    /// Longest back-off between attempts to open a missing device while nobody asks for sound.
    static let maxBackoffNanos: UInt64 = 2_000_000_000
    /// How soon a device is tried again once a client asked for a sound.
    static let wantedRetryNanos: UInt64 = 100_000_000

    func setState(_ s: AudioEngine.DeviceState, reason: String = "") {
        shared.device.withLock { d in
            d.state = s
            d.deviceName = sink.deviceName
            d.reason = reason
            if !reason.isEmpty { d.lastError = reason }
            d.pacing = sink.pacing
            d.periodFrames = sink.periodFrames
            d.bufferFrames = sink.bufferFrames
        }
    }

    /// Tries to open the sink; on success allocates the mix buffer for its buffer size.
    @discardableResult
    func openSink(quiet: Bool = false) -> Bool {
        do {
            try sink.open()
            sinkOpen = true
            ensureMixCapacity(sink.bufferFrames)
            streamFrames = 0
            let clock = sink.clockPaced
            run = RunState(pull: clock ? sink.periodFrames : max(initialPullFrames, sink.periodFrames))
            run.sinkPacing = sink.pacing
            run.xruns = sink.xruns
            counters.pullFrames.store(run.pull, ordering: .relaxed)
            let recovered = shared.device.withLock { d -> Bool in
                let was = !d.lastError.isEmpty
                d.lastError = ""
                return was
            }
            setState(.idle)
            shared.available.store(true, ordering: .releasing)
            log(recovered ? .notice : quiet ? .debug : .info, "audio device open\(recovered ? " again" : "") device=\(logValue(sink.deviceName)) rate=\(sink.format.rate) channels=\(sink.format.channels) period=\(sink.periodFrames) buffer=\(sink.bufferFrames) pacing=\(sink.pacing.rawValue)")
            return true
        } catch {
            let reason = (error as? AudioError)?.reason ?? "\(error)"
            counters.openFailures.add(1, ordering: .relaxed)
            let same = shared.device.withLock { $0.lastError == reason }
            setState(.unavailable, reason: reason)
            shared.available.store(false, ordering: .releasing)
            // One line per new reason: a retry loop does not flood the log.
            if !same { log(.error, "audio device unavailable device=\(logValue(sink.deviceName)) reason=\(logValue(reason))") }
            return false
        }
    }

    /// Lets the sink measure the device (audio thread), then sizes the queue by what it found.
    /// A sound requested meanwhile shortens the measurement (`AudioSink.settle`).
    func settleSink() {
        sink.settle(wakeFD: wakeFD)
        adoptSinkPull()
    }

    /// Sizes the queue by the sink's own measure of its pull when that changed (a settle, or
    /// `--audio auto` moving from the null sink to the device): what it measured, else — a
    /// device not measured yet — the cautious `initialPullFrames`.
    func adoptSinkPull() {
        guard sink.pacing != run.sinkPacing || sink.pullFrames != run.sinkPull else { return }
        run.sinkPacing = sink.pacing
        run.sinkPull = sink.pullFrames
        run.pull = sink.clockPaced ? sink.periodFrames
            : sink.pullFrames > 0 ? sink.pullFrames : max(initialPullFrames, sink.periodFrames)
        counters.pullFrames.store(run.pull, ordering: .relaxed)
    }

    func ensureMixCapacity(_ frames: Int) {
        let need = max(frames * sink.format.channels, 1)
        guard need > mixCapacity else { return }
        mixBuffer.deallocate()
        mixBuffer = .allocate(capacity: need)
        mixCapacity = need
    }

    func threadMain() {
        var all = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, nil)
        tabbard_set_thread_name("tabbard-audio")
        shared.tid.store(Int32(truncatingIfNeeded: tabbard_gettid()), ordering: .releasing)
        Realtime.request(priority: realtimePriority, log: log)
        // The device was opened before this thread ran (AudioEngine.start): its plugin's thread gets
        // this thread's scheduling now; later opens (on this thread) do it themselves (AlsaSink.open).
        if let name = sink.pluginThreadName { Realtime.share(withThreadsNamed: name, log: log) }
        var mode: Mode = shared.available.load(ordering: .acquiring) ? .idle : .unavailable
        if mode == .idle { settleSink() }
        var backoff: UInt64 = 250_000_000
        var lastAttempt = monotonicNanos()
        var lastSound: UInt64 = 0
        let idleNs = UInt64(max(idleTimeout, 0) * 1e9)

        var stopDeadline: UInt64 = 0
        while true {
            if shared.stopping.load(ordering: .acquiring) {
                // Shutting down: voices already playing finish (bounded), then the stream drains.
                if mode != .running { break }
                let now = monotonicNanos()
                if stopDeadline == 0 { stopDeadline = now + UInt64(shutdownGrace * 1e9) }
                if mixer.activeCount == 0 || now >= stopDeadline { break }
            }
            switch mode {
            case .unavailable:
                let asked = shared.wantedAt.load(ordering: .relaxed) > lastAttempt
                let gap = asked ? AudioRenderer.wantedRetryNanos : backoff
                let since = monotonicNanos() &- lastAttempt
                if since < gap {
                    if pollReadable(wakeFD, timeoutNanos: gap - since) { resetWake() }
                    dropCommands(.deviceLost)
                    continue
                }
                dropCommands(.deviceLost)
                if shared.stopping.load(ordering: .acquiring) { break }
                lastAttempt = monotonicNanos()
                if openSink() {
                    settleSink()
                    mode = .idle
                    backoff = 250_000_000
                } else {
                    backoff = asked ? 250_000_000 : min(backoff * 2, AudioRenderer.maxBackoffNanos)
                }
            case .idle, .standby:
                resetWake()
                takeCommands()
                if mixer.activeCount > 0 {
                    do {
                        // From standby too: a sink may do its work there (the fallback retries its device).
                        try sink.start()
                        confirmHeard()                       // a new stream is ready: what was taken before was heard
                        streamFrames += sink.silentFrames()  // a sink that kept time while stopped
                        if run.silentSince != 0 {
                            let quiet = Double(monotonicNanos() &- run.silentSince) * Double(sink.format.rate) / 1e9
                            mixer.limiter.elapse(frames: Int(min(quiet, 1e9)))
                        }
                        if mode == .idle { counters.streamStarts.add(1, ordering: .relaxed) }
                        adoptSinkPull()
                        cycleGaps.reset(played: streamFrames)
                        cycleEpoch = sink.xruns &+ sink.startRaces
                        setState(.playing)
                        mode = .running
                        lastSound = monotonicNanos()
                        run.progressAt = lastSound
                        run.lastQueued = 0
                    } catch {
                        mode = deviceFailed(error, .deviceLost)
                    }
                } else if shared.stopping.load(ordering: .acquiring) {
                    continue
                } else if mode == .idle {
                    _ = pollReadable(wakeFD, timeoutNanos: nil)
                } else {
                    let quiet = monotonicNanos() &- lastSound
                    if quiet >= idleNs {
                        stopStream(silentSince: run.silentSince)  // silent since the standby, not since now
                        mode = reopenAfterIdle()
                    } else {
                        _ = pollReadable(wakeFD, timeoutNanos: idleNs - quiet)
                    }
                }
            case .running:
                do {
                    switch try runOnce() {
                    case .running(let now):
                        if mixer.activeCount > 0 { lastSound = now }
                        else if now &- lastSound >= idleNs {
                            stopStream()
                            mode = reopenAfterIdle()
                        }
                    case .standby:
                        counters.standbys.add(1, ordering: .relaxed)
                        publishXruns()
                        setState(.standby)
                        mode = .standby
                    case .stalled:
                        mode = streamStalled()
                        lastAttempt = 0
                    }
                } catch {
                    mode = deviceFailed(error, .deviceLost)
                }
            }
        }
        if mode == .running || mode == .standby {
            stopStream()
        }
        if mode != .unavailable { closeSink() }
        releasePlayed(upTo: Int64.max)
        confirmHeard()
        publishXruns()
        dropCommands(.shutdown)
        for i in mixer.voices.indices where mixer.voices[i].active {
            if !mixer.voices[i].reported { failVoice(i, .shutdown) }
            mixer.voices[i].active = false
            if let s = mixer.voices[i].sound { finishedReport(s) }
            mixer.voices[i].sound = nil
        }
        signalReports()
    }

    private func stopStream(silentSince: UInt64 = 0) {
        sink.stop()
        run.silentSince = silentSince != 0 ? silentSince : monotonicNanos()
        releasePlayed(upTo: Int64.max)
        counters.streamStops.add(1, ordering: .relaxed)
        learnPull()
        publishXruns()
        setState(.idle)
    }

    /// After an idle stop, a sound server's stream is made anew (closed, opened, measured again),
    /// so that the next click plays at the volume the desktop has *now* for the stream's role:
    /// PipeWire applies it only when a stream is made (docs/DESKTOP.md, "The desktop's alert
    /// volume"). Off the click's path: the next click finds the new stream open and prepared.
    private func reopenAfterIdle() -> Mode {
        guard sink.reopensAfterIdle, !shared.stopping.load(ordering: .acquiring) else { return .idle }
        closeSink()
        guard openSink(quiet: true) else { return .unavailable }
        counters.idleReopens.add(1, ordering: .relaxed)
        settleSink()
        return .idle
    }

    /// What this run taught about the device's pull becomes the next run's queue size.
    private func learnPull() {
        if run.steps >= 3 {
            run.pull = max(run.runMaxStep, sink.periodFrames / 2, 1)
            counters.pullFrames.store(run.pull, ordering: .relaxed)
        }
        run.runMaxStep = 0
        run.steps = 0
    }

    /// The device failed: every voice it had is reported failed, and it is reopened later.
    func deviceFailed(_ error: Error, _ why: VoiceFailure) -> Mode {
        let reason = (error as? AudioError)?.reason ?? "\(error)"
        counters.errors.add(1, ordering: .relaxed)
        log(.error, "audio device failed device=\(logValue(sink.deviceName)) reason=\(logValue(reason))")
        // The reason first: the voices' reports name it, and `play` never sees "unavailable" with a stale state.
        shared.device.withLock { $0.lastError = reason }
        closeWithVoices(why)
        setState(.unavailable, reason: reason)
        shared.available.store(false, ordering: .releasing)
        return .unavailable
    }

    /// Nothing left the queue for several periods while sounds waited: reopen the device.
    private func streamStalled() -> Mode {
        let why: VoiceFailure = run.everProgressed ? .stalled : .neverLinked
        counters.stalls.add(1, ordering: .relaxed)
        let ms = (monotonicNanos() &- run.progressAt) / 1_000_000
        log(.warning, "audio stream made no progress for \(ms) ms while sounds waited; reopening device=\(logValue(sink.deviceName)) reason=\(logValue(why.text(device: "")))")
        sink.stop()
        closeWithVoices(why)
        setState(.unavailable, reason: why.text(device: ""))
        shared.available.store(false, ordering: .releasing)
        return .unavailable
    }

    private func closeSink() {
        sink.close()
        sinkOpen = false
    }

    private func closeWithVoices(_ why: VoiceFailure) {
        closeSink()
        failUnplayed(why)
        failUnconfirmed()
        for i in mixer.voices.indices where mixer.voices[i].active {
            failVoice(i, why)
            mixer.voices[i].active = false
            if let s = mixer.voices[i].sound { finishedReport(s) }
            mixer.voices[i].sound = nil
        }
        dropCommands(why)
        publishXruns()
        signalReports()
    }

    func publishXruns() {
        counters.startRaces.store(sink.startRaces, ordering: .relaxed)
        let x = sink.xruns
        if x > run.xruns { counters.xruns.add(x - run.xruns, ordering: .relaxed) }
        run.xruns = x
    }

    /// An underrun while voices sounded damaged them: report each once, and queue more from now on.
    func checkXruns(played: Int64) {
        let x = sink.xruns
        guard x != run.xruns else { return }
        publishXruns()
        guard played < run.audibleEnd || mixer.activeCount > 0 else { return }
        for i in mixer.voices.indices where mixer.voices[i].active && mixer.voices[i].reported {
            failVoice(i, .xrun)
        }
        queueMoreAfterXrun()
        signalReports()
    }

    /// After an underrun the device needs more queued ahead: the pull doubles (up to half the buffer).
    func queueMoreAfterXrun() {
        guard !sink.clockPaced else { return }
        run.pull = min(max(run.pull * 2, sink.periodFrames), sink.bufferFrames / 2)
        counters.pullFrames.store(run.pull, ordering: .relaxed)
    }

    func resetWake() {
        var v: UInt64 = 0
        _ = Glibc.read(wakeFD, &v, 8)
    }

    /// Moves queued requests into the voice pool. The voices it replaced unheard are
    /// signalled to the state loop once, after all are taken.
    func takeCommands() {
        var replacedUnheard = false
        while let c = commands.pop() {
            let slot = mixer.nextSlot()
            // A voice replaced before its first frame reached the device is never heard: reported.
            if slot.stealing, !mixer.voices[slot.index].reported {
                failVoice(slot.index, .stolen)
                replacedUnheard = true
            }
            let (stolen, faded) = mixer.add(c, at: slot)
            if let s = stolen {
                counters.stolen.add(1, ordering: .relaxed)
                finishedReport(s)
            }
            if faded > 0 { counters.restarted.add(faded, ordering: .relaxed) }
        }
        if replacedUnheard { signalReports() }
    }

    /// Requests that were accepted but can no longer be played are reported failed.
    func dropCommands(_ why: VoiceFailure) {
        var dropped = false
        while let c = commands.pop() {
            pushFailure(c.sound, voice: c.voice, why)
            dropped = true
        }
        if dropped { signalReports() }
    }

    /// Reports voice `i` failed (once per voice).
    func failVoice(_ i: Int, _ why: VoiceFailure) {
        guard !mixer.voices[i].failed, let s = mixer.voices[i].sound else { return }
        mixer.voices[i].failed = true
        _ = s.retain()
        pushFailure(s, voice: mixer.voices[i].id, why)
    }

    /// Hands `sound` (one retain) to the state loop as a failed voice. The state loop sends
    /// `sound.failed` and logs it, rate-limited (the server's `PeerLogs`, kind `soundFailed`).
    func pushFailure(_ s: Unmanaged<Sound>, voice: UInt32, _ why: VoiceFailure) {
        counters.failed.add(1, ordering: .relaxed)
        if !reports.push(RawReport(kind: .failed, sound: s, voice: voice, latencyNs: 0, framesAhead: 0, startFrame: 0, failure: why)) {
            s.release()
            counters.reportsDropped.add(1, ordering: .relaxed)
        }
    }

    /// Makes `reportFD` readable so the state loop drains (and releases) what was pushed.
    func signalReports() {
        var one: UInt64 = 1
        _ = Glibc.write(reportEventFD, &one, 8)
    }

    /// Hands a sound reference back to the state loop to release (or releases it here).
    func finishedReport(_ s: Unmanaged<Sound>) {
        if !reports.push(RawReport(kind: .finished, sound: s, voice: 0, latencyNs: 0, framesAhead: 0, startFrame: 0)) {
            s.release()
        }
    }
}
