import CALSA
import Glibc
import Synchronization

/// Routes alsa-lib's error messages (normally printed to stderr) into an `AudioLog`.
/// Process-wide; the last log installed wins.
public enum AlsaErrorLog {
    private static let target = Mutex<AudioLog?>(nil)

    /// Installs `log` as the receiver of alsa-lib's messages, at debug level: the sink logs its own one-line summary of any failure.
    public static func route(to log: AudioLog?) {
        target.withLock { $0 = log }
        tabbard_alsa_route_errors { line in
            guard let line else { return }
            let text = String(cString: line)
            AlsaErrorLog.target.withLock { $0 }?(.debug, "alsa-lib: \(text)")
        }
    }
}

/// Plays through libasound: any PCM string (`default`, `hw:0`, `plughw:0,0`,
/// `file:'PATH',raw`, …), interleaved S16_LE (or S32_LE / FLOAT_LE when the device
/// wants them), small periods, non-blocking writes. Devices that pace their stream
/// are waited on with poll; PCMs that accept every write at once (`null`, `file`)
/// are paced by CLOCK_MONOTONIC instead.
public final class AlsaSink: AudioSink, @unchecked Sendable {
    /// How writes are paced. Wire strings: `"auto"`, `"device"`, `"clock"`.
    public enum Pacing: String, Sendable { case auto, device, clock }

    public let deviceName: String
    public let format: PCMFormat
    public private(set) var periodFrames: Int
    public private(set) var bufferFrames: Int
    public private(set) var xruns = 0
    /// The negotiated sample format (e.g. `S16_LE`).
    public private(set) var sampleFormat = "S16_LE"
    public var pacing: String { clockPaced ? "clock" : "device" }

    private let requestedPeriod: Int
    private let requestedPeriods: Int
    private let pacingMode: Pacing
    private let log: AudioLog?
    private var pcm: OpaquePointer?
    private var clockPaced = false
    private var detectPacing = false
    private var pacer: ClockPacer
    private var fds: UnsafeMutablePointer<pollfd>?
    private var pcmFDCount = 0
    private var bytes: UnsafeMutableRawPointer?
    private var bytesPerSample = 2
    private var pcmFormat = SND_PCM_FORMAT_S16_LE

    /// `periodFrames` 256 at 48 kHz is 5.33 ms; the buffer is `bufferPeriods` periods.
    public init(device: String = "default", format: PCMFormat = .standard, periodFrames: Int = 256,
                bufferPeriods: Int = 4, pacing: Pacing = .auto, log: AudioLog? = nil) {
        self.deviceName = device
        self.format = format
        self.requestedPeriod = periodFrames
        self.requestedPeriods = max(bufferPeriods, 3)
        self.periodFrames = periodFrames
        self.bufferFrames = periodFrames * max(bufferPeriods, 3)
        self.pacingMode = pacing
        self.log = log
        self.pacer = ClockPacer(rate: format.rate)
    }

    deinit { close() }

    private func fail(_ what: String, _ err: Int32) -> AudioError {
        .deviceOpen(device: deviceName, reason: "\(what): \(String(cString: snd_strerror(err)))")
    }

    public func open() throws {
        close()
        if let log { AlsaErrorLog.route(to: log) }
        var handle: OpaquePointer?
        var err = snd_pcm_open(&handle, deviceName, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard err >= 0, let pcm = handle else { throw fail("snd_pcm_open", err) }
        do {
            try configure(pcm)
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
        self.pcm = pcm
        let type = snd_pcm_type(pcm)
        switch pacingMode {
        case .clock: clockPaced = true; detectPacing = false
        case .device: clockPaced = false; detectPacing = false
        case .auto:
            clockPaced = type == SND_PCM_TYPE_NULL
            detectPacing = !clockPaced
        }
        let n = Int(snd_pcm_poll_descriptors_count(pcm))
        pcmFDCount = max(n, 0)
        fds = .allocate(capacity: pcmFDCount + 1)
        if pcmFDCount > 0 {
            err = snd_pcm_poll_descriptors(pcm, fds! + 1, UInt32(pcmFDCount))
            if err < 0 { pcmFDCount = 0 }
        }
        bytes = .allocate(byteCount: bufferFrames * format.channels * 4, alignment: 16)
    }

    private func configure(_ pcm: OpaquePointer) throws {
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
        var chosen = false
        for (f, size, name) in choices where snd_pcm_hw_params_test_format(pcm, hw, f) == 0 {
            err = snd_pcm_hw_params_set_format(pcm, hw, f)
            if err == 0 { pcmFormat = f; bytesPerSample = size; sampleFormat = name; chosen = true; break }
        }
        if !chosen {
            throw AudioError.deviceOpen(device: deviceName, reason: "supports none of S16_LE, S32_LE, FLOAT_LE (try plughw:)")
        }
        err = snd_pcm_hw_params_set_channels(pcm, hw, UInt32(format.channels))
        if err < 0 { throw fail("\(format.channels) channels (try plughw:)", err) }
        var rate = UInt32(format.rate)
        var dir: Int32 = 0
        err = snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &dir)
        if err < 0 || Int(rate) != format.rate {
            throw AudioError.deviceOpen(device: deviceName, reason: "does not play \(format.rate) Hz (nearest \(rate) Hz; try plughw:)")
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
        periodFrames = Int(period)
        bufferFrames = Int(buffer)

        var swp: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&swp) >= 0, let sw = swp else { throw fail("sw_params", -ENOMEM) }
        defer { snd_pcm_sw_params_free(sw) }
        snd_pcm_sw_params_current(pcm, sw)
        // Wake poll when no more than one period is queued; start on the first write.
        snd_pcm_sw_params_set_avail_min(pcm, sw, snd_pcm_uframes_t(max(bufferFrames - periodFrames, 1)))
        snd_pcm_sw_params_set_start_threshold(pcm, sw, 1)
        snd_pcm_sw_params_set_stop_threshold(pcm, sw, snd_pcm_uframes_t(bufferFrames))
        err = snd_pcm_sw_params(pcm, sw)
        if err < 0 { throw fail("sw_params", err) }
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
        guard let pcm else { throw AudioError.deviceIO(device: deviceName, reason: "not open") }
        let state = snd_pcm_state(pcm)
        if state != SND_PCM_STATE_PREPARED && state != SND_PCM_STATE_RUNNING {
            let err = snd_pcm_prepare(pcm)
            if err < 0 { throw ioError("snd_pcm_prepare", err) }
        }
        pacer.reset()
    }

    private func ioError(_ what: String, _ err: Int32) -> AudioError {
        .deviceIO(device: deviceName, reason: "\(what): \(String(cString: snd_strerror(err)))")
    }

    /// Recovers from an underrun or suspend; throws if the device is gone.
    private func recover(_ err: Int32, _ what: String) throws {
        guard let pcm else { return }
        if err == -EPIPE || err == -ESTRPIPE || err == -EINTR {
            xruns += 1
            let r = snd_pcm_recover(pcm, err, 1)
            if r < 0 { throw ioError("\(what) (recover)", r) }
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
            try recover(Int32(avail), "snd_pcm_avail")
            return 0
        }
        return max(bufferFrames - Int(avail), 0)
    }

    public func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        guard let pcm, let fds else { return pollReadable(wakeFD, timeoutNanos: timeoutNanos) }
        if clockPaced {
            var t = pacer.nanosUntil(queued: lowWater)
            if let limit = timeoutNanos { t = min(t, limit) }
            return pollReadable(wakeFD, timeoutNanos: t)
        }
        fds[0] = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
        // Refresh: the descriptors (and their events) may change after a recover.
        if pcmFDCount > 0 { snd_pcm_poll_descriptors(pcm, fds + 1, UInt32(pcmFDCount)) }
        // Never sleep longer than the buffer lasts (a stalled device must not hang the thread).
        let bufferNs = UInt64(bufferFrames) * 1_000_000_000 / UInt64(format.rate)
        var t = bufferNs * 2
        if let limit = timeoutNanos { t = min(t, limit) }
        if lowWater > bufferFrames - periodFrames {
            // Wanted sooner than avail_min wakes poll: sleep until that many frames have played.
            let avail = snd_pcm_avail_update(pcm)
            if avail >= 0 {
                let excess = max(bufferFrames - Int(avail) - lowWater, 0)
                t = min(t, UInt64(excess) * 1_000_000_000 / UInt64(format.rate))
            }
        }
        let r = retryEINTR { tabbard_ppoll(fds, UInt(pcmFDCount + 1), Int64(t)) }
        if r < 0 { throw AudioError.system(call: "ppoll", errno: errno) }
        let woken = (fds[0].revents & Int16(POLLIN)) != 0
        if r > 0 && pcmFDCount > 0 {
            let rev = tabbard_pcm_revents(pcm, fds + 1, UInt32(pcmFDCount))
            if (rev & UInt16(POLLERR)) != 0 {
                let state = snd_pcm_state(pcm)
                if state == SND_PCM_STATE_XRUN { try recover(-EPIPE, "poll") }
                else if state == SND_PCM_STATE_SUSPENDED { try recover(-ESTRPIPE, "poll") }
                else if state == SND_PCM_STATE_DISCONNECTED { throw ioError("poll", -ENODEV) }
            }
        }
        return woken
    }

    public func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        guard let pcm, let bytes else { throw AudioError.deviceIO(device: deviceName, reason: "not open") }
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
            let r = snd_pcm_writei(pcm, bytes + done * format.channels * bytesPerSample, snd_pcm_uframes_t(n - done))
            if r >= 0 {
                done += Int(r)
                continue
            }
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

    public func stop() {
        guard let pcm else { return }
        snd_pcm_nonblock(pcm, 0)
        snd_pcm_drain(pcm)
        snd_pcm_nonblock(pcm, 1)
    }

    public func close() {
        if let pcm {
            snd_pcm_close(pcm)
            self.pcm = nil
        }
        fds?.deallocate()
        fds = nil
        bytes?.deallocate()
        bytes = nil
    }
}
