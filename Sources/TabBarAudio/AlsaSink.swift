import CALSA
import Glibc
import Synchronization

/// Plays through libasound: any PCM string (`default`, `hw:0`, `plughw:0,0`,
/// `file:'PATH',raw`, …), interleaved S16_LE (or S32_LE / FLOAT_LE when the device
/// wants them), small periods, non-blocking writes. Devices that pace their stream
/// are waited on with poll; PCMs that accept every write at once (`null`, `file`)
/// are paced by CLOCK_MONOTONIC instead.
public final class AlsaSink: AudioSink {
    /// How writes are paced. Wire strings: `"auto"`, `"device"`, `"clock"`.
    public enum Pacing: String, Sendable { case auto, device, clock }

    public let deviceName: String
    public let format: PCMFormat
    public private(set) var periodFrames: Int
    public private(set) var bufferFrames: Int
    public private(set) var xruns = 0
    /// The negotiated sample format (e.g. `S16_LE`).
    public private(set) var sampleFormat = "S16_LE"
    public var pacing: StreamPacing { clockPaced ? .clock : .device }

    private let requestedPeriod: Int
    private let requestedPeriods: Int
    private let pacingMode: Pacing
    let log: AudioLog?
    var pcm: OpaquePointer?
    var clockPaced = false
    private var detectPacing = false
    var pacer: ClockPacer
    var bytes: UnsafeMutableRawPointer?
    var bytesPerSample = 2
    private var pcmFormat = SND_PCM_FORMAT_S16_LE

    /// Frames the device takes at once, as `settle` measured it (0 = not known).
    public internal(set) var pullFrames = 0
    /// False when `settle` saw the stream take nothing at all (a sound server that linked it to nothing).
    public internal(set) var linked = true
    /// Current `avail_min` (frames).
    public internal(set) var availMin = 0
    /// Seconds `stop` waits at most for the queue to play out before dropping it.
    public var drainDeadline: Double = 0.5
    /// Whether the PCM is PulseAudio's ALSA plugin (`type pulse`, libasound2-plugins).
    public private(set) var isPulsePlugin = false
    /// Whether the PCM is an external plugin (`SND_PCM_TYPE_IOPLUG`: PipeWire's, PulseAudio's).
    private var isPlugin = false
    /// Whether the PCM is PipeWire's ALSA plugin (pipewire-alsa), and what it was written since it
    /// started (`StartCopy`, AlsaStartRace.swift).
    private(set) var isPipeWirePlugin = false
    var startCopy = StartCopy()
    /// Underruns flagged as the stream started with nothing taken, answered by writing again.
    public var startRaces: Int { startCopy.replays }
    public var pluginThreadName: String? {
        isPulsePlugin ? AlsaSink.pulseLoopThread : isPlugin ? AlsaSink.pipewireLoopThread : nil
    }
    /// Why the PCM was given up while open (a call into it passed its deadline), for the next call's error.
    var closedBecause: String?
    /// Frames kept queued beyond the server's pull and one period while voices sound (see
    /// `AudioSink.refillMarginFrames`): `pulseRefillMargin` through PulseAudio's plugin, else 0.
    public var refillMarginFrames: Int { isPulsePlugin ? Int(AlsaSink.pulseRefillMargin * Double(format.rate)) : 0 }
    public var standbyConfirmsLink: Bool { isPulsePlugin }
    /// A sound server's plugin (PipeWire's, PulseAudio's): its server sets a new stream's volume
    /// from the desktop's volume for its role; `hw:`/`plughw:` stay open.
    public var reopensAfterIdle: Bool { isPlugin }
    /// Seconds of refill margin through PulseAudio's plugin. Its server plays a cycle of
    /// silence when it holds less than a quantum, keeps what it holds for the next cycle and
    /// tells nobody (docs/DESKTOP.md, "PulseAudio's ALSA plugin"), so a refill that arrives
    /// late puts a hole in the sound instead of an xrun; the margin is the refill's delay it
    /// absorbs, and a click that fits in the first write cannot get a hole at all.
    public static let pulseRefillMargin = 0.016

    /// The name of the thread PipeWire's ALSA plugin starts at `snd_pcm_open` for its main loop
    /// (0.3.65 `pcm_pipewire.c`, `pw_thread_loop_new("alsa-pipewire")`). It runs at normal priority;
    /// `open` gives it the audio thread's realtime scheduling: after an idle stop it is the thread
    /// that completes the server's Start, and when the server's first cycle came first (4 clicks
    /// in 10; PipeWire 0.3.65's client completes a Start after answering for it, fixed upstream
    /// in 1.3.81) the click waited one cycle more (docs/AUDIO.md, "The first cycle after idle").
    public static let pipewireLoopThread = "alsa-pipewire"

    /// The thread of libpulse's threaded main loop that PulseAudio's ALSA plugin starts at
    /// `snd_pcm_open` (`pa_threaded_mainloop_new()` names it "threaded-ml"). Every refill the
    /// audio thread hands the plugin reaches the server through it (`pa_stream_write` queues,
    /// this loop sends), so at normal priority a busy machine made refills late — the late
    /// refill that puts a hole into a sound through this plugin (docs/DESKTOP.md, "PulseAudio's
    /// ALSA plugin"). It gets the audio thread's scheduling like PipeWire's.
    public static let pulseLoopThread = "threaded-ml"

    /// Frames the device buffer is asked to hold at least. The engine keeps only what the
    /// server pulls queued (see `AudioEngine`), so a large buffer adds no latency; it is
    /// room for a sound server's quantum of up to 2048 frames (PipeWire's default maximum).
    public static let minimumBufferFrames = 4096

    /// `periodFrames` 256 at 48 kHz is 5.33 ms: the latency asked of a sound server (PipeWire's
    /// `node.latency`, through `avail_min`) and the engine's refill step. The buffer is
    /// `bufferPeriods` periods but at least `minimumBufferFrames`.
    public init(device: String = "default", format: PCMFormat = .standard, periodFrames: Int = 256,
                bufferPeriods: Int = 4, pacing: Pacing = .auto, log: AudioLog? = nil) {
        self.deviceName = device
        self.format = format
        self.requestedPeriod = periodFrames
        let periods = max(bufferPeriods, 3, (AlsaSink.minimumBufferFrames + periodFrames - 1) / max(periodFrames, 1))
        self.requestedPeriods = periods
        self.periodFrames = periodFrames
        self.bufferFrames = periodFrames * periods
        self.pacingMode = pacing
        self.log = log
        self.pacer = ClockPacer(rate: format.rate)
    }

    deinit { close() }

    public func open() throws {
        close()
        if let log { AlsaErrorLog.route(to: log) }
        var handle: OpaquePointer?
        let err = snd_pcm_open(&handle, deviceName, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard err >= 0, let pcm = handle else { throw fail("snd_pcm_open", err) }
        let type = snd_pcm_type(pcm)
        isPlugin = type == SND_PCM_TYPE_IOPLUG
        let description = isPlugin ? AlsaSink.describe(pcm) : ""
        isPulsePlugin = description.contains("PulseAudio")
        isPipeWirePlugin = description.contains("PipeWire")
        closedBecause = nil
        try configureBounded(pcm)
        self.pcm = pcm
        if let name = pluginThreadName { Realtime.share(withThreadsNamed: name, log: log) }
        if isPulsePlugin {
            log?(.debug, "audio device is PulseAudio's ALSA plugin: \(refillMarginFrames) frames of refill margin device=\(deviceName)")
        }
        switch pacingMode {
        case .clock: clockPaced = true; detectPacing = false
        case .device: clockPaced = false; detectPacing = false
        case .auto:
            clockPaced = type == SND_PCM_TYPE_NULL
            detectPacing = !clockPaced
        }
        bytes = .allocate(byteCount: bufferFrames * format.channels * 4, alignment: 16)
        if isPipeWirePlugin {
            startCopy = StartCopy(capacity: bufferFrames, frameBytes: format.channels * bytesPerSample,
                                  replays: startCopy.replays)
        }
    }

    /// `configure`, closing the PCM when it fails — through PulseAudio's plugin with a deadline
    /// (its `hw_params` makes a server stream; `BoundedALSA`): one that gives up leaves the PCM to
    /// the helper thread, which closes it once the call returns. What was negotiated is applied
    /// here, on the calling thread, only once the call returned in time.
    private func configureBounded(_ pcm: OpaquePointer) throws {
        let device = deviceName, format = format, period = requestedPeriod, periods = requestedPeriods
        guard isPulsePlugin else {
            do { apply(try AlsaSink.configure(pcm, device: device, format: format, period: period, periods: periods)) }
            catch { snd_pcm_close(pcm); throw error }
            return
        }
        let handle = PCMHandle(pcm)
        if BoundedALSA.stuck.load(ordering: .acquiring) > 0 {
            snd_pcm_close(pcm)
            throw AudioError.deviceOpen(device: deviceName, reason: AlsaSink.noStreamReason)
        }
        let outcome = ConfigureOutcome()
        let r = BoundedALSA.run(seconds: AlsaSink.streamDeadline, {
            do {
                let c = try AlsaSink.configure(handle.pcm, device: device, format: format, period: period, periods: periods)
                outcome.result.withLock { $0 = .success(c) }
                return 0
            } catch {
                outcome.result.withLock { $0 = .failure((error as? AudioError) ?? .deviceOpen(device: device, reason: "\(error)")) }
                return -1
            }
        }, late: { _ in snd_pcm_close(handle.pcm) })
        guard r != nil else { throw AudioError.deviceOpen(device: deviceName, reason: AlsaSink.noStreamReason) }
        switch outcome.result.withLock({ $0 }) {
        case .success(let c): apply(c)
        case .failure(let e): snd_pcm_close(pcm); throw e
        case nil: snd_pcm_close(pcm); throw AudioError.deviceOpen(device: deviceName, reason: "hw_params")
        }
    }

    /// What `configure` negotiated with the PCM.
    struct Configuration: Sendable {
        var pcmFormat: snd_pcm_format_t
        var bytesPerSample: Int
        var sampleFormat: String
        var periodFrames: Int
        var bufferFrames: Int
    }

    /// The result of a bounded `configure`, written by its helper thread.
    private final class ConfigureOutcome: Sendable {
        let result = Mutex<Result<Configuration, AudioError>?>(nil)
    }

    private func apply(_ c: Configuration) {
        pcmFormat = c.pcmFormat
        bytesPerSample = c.bytesPerSample
        sampleFormat = c.sampleFormat
        periodFrames = c.periodFrames
        bufferFrames = c.bufferFrames
        availMin = c.periodFrames
    }

    /// Sets the PCM's hardware and software parameters (it touches nothing of the sink: it may
    /// run on a bounded call's helper thread).
    private static func configure(_ pcm: OpaquePointer, device: String, format: PCMFormat, period requestedPeriod: Int,
                                  periods requestedPeriods: Int) throws -> Configuration {
        func fail(_ what: String, _ err: Int32) -> AudioError {
            .deviceOpen(device: device, reason: AlsaSink.openReason(what, err))
        }
        var hwp: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&hwp) >= 0, let hw = hwp else { throw fail("hw_params", -ENOMEM) }
        defer { snd_pcm_hw_params_free(hw) }
        var err = snd_pcm_hw_params_any(pcm, hw)
        if err < 0 { throw fail("no configurations", err) }
        err = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)
        if err < 0 { throw fail("interleaved access", err) }
        let choices: [(snd_pcm_format_t, Int, String)] = [
            (SND_PCM_FORMAT_S16_LE, 2, "S16_LE"), (SND_PCM_FORMAT_S32_LE, 4, "S32_LE"),
            (SND_PCM_FORMAT_FLOAT_LE, 4, "FLOAT_LE"),
        ]
        var chosen: (snd_pcm_format_t, Int, String)?
        for (f, size, name) in choices where snd_pcm_hw_params_test_format(pcm, hw, f) == 0 {
            err = snd_pcm_hw_params_set_format(pcm, hw, f)
            if err == 0 { chosen = (f, size, name); break }
        }
        guard let chosen else {
            throw AudioError.deviceOpen(device: device, reason: "supports none of S16_LE, S32_LE, FLOAT_LE (try plughw:)")
        }
        err = snd_pcm_hw_params_set_channels(pcm, hw, UInt32(format.channels))
        if err < 0 { throw fail("\(format.channels) channels (try plughw:)", err) }
        var rate = UInt32(format.rate)
        var dir: Int32 = 0
        err = snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &dir)
        if err < 0 || Int(rate) != format.rate {
            throw AudioError.deviceOpen(device: device, reason: "does not play \(format.rate) Hz (nearest \(rate) Hz; try plughw:)")
        }
        var period = snd_pcm_uframes_t(requestedPeriod)
        dir = 0
        err = snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &dir)
        if err < 0 { throw fail("period size \(requestedPeriod)", err) }
        var buffer = snd_pcm_uframes_t(Int(period) * requestedPeriods)
        err = snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer)
        if err < 0 { throw fail("buffer size \(Int(period) * requestedPeriods)", err) }
        err = snd_pcm_hw_params(pcm, hw)
        if err < 0 { throw fail("hw_params", err) }
        snd_pcm_hw_params_get_period_size(hw, &period, &dir)
        snd_pcm_hw_params_get_buffer_size(hw, &buffer)
        let periodFrames = Int(period)
        let bufferFrames = Int(buffer)

        var swp: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&swp) >= 0, let sw = swp else { throw fail("sw_params", -ENOMEM) }
        defer { snd_pcm_sw_params_free(sw) }
        snd_pcm_sw_params_current(pcm, sw)
        // avail_min = one period: what PipeWire's plugin asks of the graph as its latency (so
        // the quantum is one period) and the most it hands over a cycle (`settle` raises it when
        // the server insists on a larger quantum). The engine refills by a timer, not by poll.
        snd_pcm_sw_params_set_avail_min(pcm, sw, snd_pcm_uframes_t(max(periodFrames, 1)))
        snd_pcm_sw_params_set_start_threshold(pcm, sw, 1)
        snd_pcm_sw_params_set_stop_threshold(pcm, sw, snd_pcm_uframes_t(bufferFrames))
        err = snd_pcm_sw_params(pcm, sw)
        if err < 0 { throw fail("sw_params", err) }
        return Configuration(pcmFormat: chosen.0, bytesPerSample: chosen.1, sampleFormat: chosen.2,
                             periodFrames: periodFrames, bufferFrames: bufferFrames)
    }

    /// What `snd_pcm_dump` says of the PCM (an external plugin's first line names it:
    /// "ALSA <-> PulseAudio PCM I/O Plugin", "ALSA <-> PipeWire PCM I/O Plugin").
    static func describe(_ pcm: OpaquePointer) -> String {
        var out: OpaquePointer?
        guard snd_output_buffer_open(&out) == 0, let out else { return "" }
        defer { snd_output_close(out) }
        snd_pcm_dump(pcm, out)
        var text: UnsafeMutablePointer<CChar>?
        let n = snd_output_buffer_string(out, &text)
        guard let text, n > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: text, count: Int(n)), as: UTF8.self)
    }

    /// Opens and closes the device once: nil when it can be opened, else the reason.
    public func probe() -> String? {
        let wasOpen = pcm != nil
        if wasOpen { return nil }
        do {
            try open()
            close()
            return nil
        } catch {
            return (error as? AudioError)?.reason ?? "\(error)"
        }
    }

    public func start() throws {
        guard let pcm else { throw AudioError.deviceIO(device: deviceName, reason: closedBecause ?? "not open") }
        let state = snd_pcm_state(pcm)
        if state != SND_PCM_STATE_PREPARED && state != SND_PCM_STATE_RUNNING {
            let err = bounded(pcm, snd_pcm_prepare)
            if err == -ETIMEDOUT { throw AudioError.deviceIO(device: deviceName, reason: AlsaSink.noStreamReason) }
            if err < 0 { throw ioError("snd_pcm_prepare", err) }
        }
        pacer.reset()
    }
    /// Recovers from an underrun or suspend; throws if the device is gone.
    private func recover(_ err: Int32, _ what: String) throws {
        guard let pcm else { return }
        if err == -EPIPE || err == -ESTRPIPE || err == -EINTR {
            // Counted only once recovered: a sound server that went away fails the recovery
            // (its plugin cannot prepare again) and is an error, not an underrun.
            let r = bounded(pcm) { snd_pcm_recover($0, err, 1) }
            if r == -ETIMEDOUT { throw AudioError.deviceIO(device: deviceName, reason: AlsaSink.noStreamReason) }
            if r < 0 { throw ioError("\(what) (recover)", r) }
            xruns += 1
            pacer.reset()
            return
        }
        throw ioError(what, err)
    }

    public func queuedFrames() throws -> Int {
        guard let pcm else { return 0 }
        if clockPaced { return pacer.queued() }
        let avail = snd_pcm_avail(pcm)
        if avail < 0 {
            if avail == -EPIPE && replayAfterStartRace() { return startCopy.frames }
            try recover(Int32(avail), "snd_pcm_avail")
            return 0
        }
        let queued = max(bufferFrames - Int(avail), 0)
        startCopy.seen(queued: queued)
        return queued
    }

    /// Sleeps until about `lowWater` frames are left (by the clock: the engine keeps far less
    /// queued than the buffer, so the PCM's own poll descriptor would always be ready), `wakeFD`
    /// is readable, or `timeoutNanos` passed. Device errors surface at the next `queuedFrames`.
    public func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        guard let pcm else { return pollReadable(wakeFD, timeoutNanos: timeoutNanos) }
        if clockPaced {
            var t = pacer.nanosUntil(queued: lowWater)
            if let limit = timeoutNanos { t = min(t, limit) }
            return pollReadable(wakeFD, timeoutNanos: t)
        }
        // Never sleep longer than the buffer lasts (a stalled device must not hang the thread).
        let rate = UInt64(max(format.rate, 1))
        var t = UInt64(bufferFrames) * 1_000_000_000 / rate * 2
        if let limit = timeoutNanos { t = min(t, limit) }
        let avail = snd_pcm_avail_update(pcm)
        if avail >= 0 {
            let excess = max(bufferFrames - Int(avail) - lowWater, 0)
            // At least 0.5 ms: a queue that shrinks by bits (PulseAudio) must not make a busy loop.
            t = min(t, max(UInt64(excess) * 1_000_000_000 / rate, 500_000))
        }
        return pollReadable(wakeFD, timeoutNanos: t)
    }

    public func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        guard let pcm, let bytes else { throw AudioError.deviceIO(device: deviceName, reason: closedBecause ?? "not open") }
        let n = min(frames, bufferFrames)
        let count = n * format.channels
        switch bytesPerSample {
        case 2 where pcmFormat == SND_PCM_FORMAT_S16_LE:
            let out = bytes.assumingMemoryBound(to: Int16.self)
            for i in 0..<count { out[i] = floatToS16(samples[i]).littleEndian }
        case 4 where pcmFormat == SND_PCM_FORMAT_S32_LE:
            let out = bytes.assumingMemoryBound(to: Int32.self)
            for i in 0..<count {
                let v = (Double(samples[i]) * 2147483648.0).rounded()
                out[i] = Int32(max(-2147483648.0, min(2147483647.0, v))).littleEndian
            }
        default:
            let out = bytes.assumingMemoryBound(to: Float.self)
            for i in 0..<count { out[i] = samples[i] }
        }
        var done = 0
        var attempts = 0
        while done < n {
            let from = bytes + done * format.channels * bytesPerSample
            let starting = isPipeWirePlugin && snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED
            let r = snd_pcm_writei(pcm, from, snd_pcm_uframes_t(n - done))
            if r >= 0 {
                startCopy.wrote(from, count: Int(r), started: starting, now: monotonicNanos())
                if startCopy.frames > 0 { startCopy.delayAfter = AlsaSink.delay(pcm) }
                done += Int(r)
                continue
            }
            if r == -EPIPE && replayAfterStartRace() { continue }
            attempts += 1
            if attempts > 4 { throw ioError("snd_pcm_writei", Int32(r)) }
            if r == -EAGAIN {
                // Device full (should not happen: the engine writes at most what is free).
                snd_pcm_wait(pcm, 10)
                continue
            }
            try recover(Int32(r), "snd_pcm_writei")
        }
        if clockPaced {
            pacer.wrote(n)
        } else if detectPacing {
            detectPacing = false
            // A PCM that reports nothing queued right after a write does not pace (file → null).
            let avail = snd_pcm_avail(pcm)
            if avail >= 0 && Int(avail) >= bufferFrames {
                clockPaced = true
                pacer.reset()
                pacer.wrote(n)
                log?(.info, "audio device does not pace writes, pacing by the clock device=\(deviceName)")
            }
        }
    }

    /// Frames until a frame written now is heard: `snd_pcm_delay`, which for a sound server's
    /// plugin includes the server's own delay. Falls back to `queuedFrames` when the PCM cannot tell.
    public func delayFrames() throws -> Int {
        guard let pcm else { return 0 }
        if clockPaced { return pacer.queued() }
        if let d = AlsaSink.delay(pcm), d >= 0 { return d }
        return try queuedFrames()
    }

    /// `snd_pcm_delay` read between two clock readings at most this far apart: PipeWire's
    /// plugin reads the clock inside it (50 us is 2.4 frames at 48 kHz).
    static let timingBracketNanos: UInt64 = 100_000

    /// PipeWire's plugin only (CycleGap.swift): its delay, read within `timingBracketNanos`,
    /// and only when the queue is still `queued` after it (no cycle ran in between).
    public func serverTiming(queued: Int) -> ServerTiming? {
        guard isPipeWirePlugin, !clockPaced, let pcm else { return nil }
        var d = snd_pcm_sframes_t(0)
        let t0 = monotonicNanos()
        let err = snd_pcm_delay(pcm, &d)
        let t1 = monotonicNanos()
        guard err == 0, t1 &- t0 <= AlsaSink.timingBracketNanos else { return nil }
        let avail = snd_pcm_avail(pcm)
        guard avail >= 0, bufferFrames - Int(avail) == queued else { return nil }
        return ServerTiming(nanos: t0 + (t1 - t0) / 2, queued: queued, delay: Int(d))
    }

    /// Lets what is queued play out (at most `drainDeadline` plus the buffer's length), then
    /// drops the stream. Never blocks longer than that, whatever the device does.
    public func stop() {
        guard let pcm else { return }
        let bufferNs = UInt64(bufferFrames) * 1_000_000_000 / UInt64(max(format.rate, 1))
        let deadline = monotonicNanos() + bufferNs + UInt64(drainDeadline * 1e9)
        if snd_pcm_state(pcm) == SND_PCM_STATE_RUNNING && !clockPaced {
            while monotonicNanos() < deadline {
                let avail = snd_pcm_avail(pcm)
                if avail < 0 || Int(avail) >= bufferFrames { break }
                let queued = bufferFrames - Int(avail)
                let ns = min(UInt64(queued) * 1_000_000_000 / UInt64(max(format.rate, 1)) + 100_000, 5_000_000)
                var ts = timespec(tv_sec: 0, tv_nsec: Int(ns))
                nanosleep(&ts, nil)
            }
        }
        snd_pcm_drop(pcm)
        pacer.reset()
    }

    public func close() {
        if let pcm {
            snd_pcm_close(pcm)
            self.pcm = nil
        }
        bytes?.deallocate()
        bytes = nil
        startCopy.free()
    }
}
