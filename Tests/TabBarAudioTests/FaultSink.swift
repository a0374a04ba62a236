import Glibc
import Synchronization
@testable import TabBarAudio

/// A clock-paced sink that can be told, while the engine runs, to behave like an ALSA
/// device that disappears (USB unplugged) or underruns.
///
/// It mirrors the engine-visible contract of `AlsaSink`:
/// - **lost device** (`unplug()` … `plug()`): `start`/`queuedFrames`/`wait`/`write`
///   throw `AudioError.deviceIO(reason: "snd_pcm_writei: No such device")` — what
///   `snd_pcm_writei` returning -ENODEV (or poll seeing `SND_PCM_STATE_DISCONNECTED`)
///   becomes — and `open` throws `AudioError.deviceOpen(reason: "snd_pcm_open: No such
///   device")` until the device is plugged back.
/// - **xrun** (`injectXrun()`): the next `queuedFrames` behaves as `snd_pcm_avail`
///   returning -EPIPE that `snd_pcm_recover` fixes: `xruns` goes up by one, the stream
///   restarts empty (0 frames queued) and no error reaches the engine.
final class FaultSink: AudioSink, Sendable {
    let format: PCMFormat
    let periodFrames: Int
    let bufferFrames: Int
    var deviceName: String { "fault" }
    var pacing: StreamPacing { .clock }
    var xruns: Int { state.withLock { $0.xruns } }

    static let lostReason = "snd_pcm_writei: No such device"
    static let openReason = "snd_pcm_open: No such device"

    struct State {
        var unplugged = false
        var pendingXrun = false
        /// The write holding a started voice's last frame first meets an underrun (`snd_pcm_writei`
        /// returning -EPIPE, recovered inside `AlsaSink.write`, the chunk then written).
        var xrunAtVoiceEnd = false
        /// The device disappears at the next write (after a successful `start`).
        var lossAtWrite = false
        var xruns = 0
        var isOpen = false
        var opens = 0
        /// CLOCK_MONOTONIC of every `open` call (successful or not).
        var openAttempts: [UInt64] = []
        /// Frames written since the last successful `open` (the engine's stream position).
        var written: Int64 = 0
        var totalWritten: Int64 = 0
        var failedWrites = 0
        var records: [VoiceRecord] = []
        /// Open generation (1 = first successful open) each record was started in.
        var recordOpens: [Int] = []
        /// The device's clock (the audio thread's).
        var pacer: ClockPacer
    }

    private let state: Mutex<State>

    init(format: PCMFormat = .standard, periodFrames: Int = 256, bufferPeriods: Int = 4) {
        self.format = format
        self.periodFrames = periodFrames
        self.bufferFrames = periodFrames * bufferPeriods
        state = Mutex(State(pacer: ClockPacer(rate: format.rate)))
    }

    // MARK: Test controls (any thread)

    /// The next write that holds the end of a voice begun in an earlier write meets an underrun.
    func injectXrunAtVoiceEnd() { state.withLock { $0.xrunAtVoiceEnd = true } }
    /// The device disappears at the next write: the stream's start still succeeds (a sound
    /// server killed while the stream stood by prepared), the write and every call after it fail.
    func injectLossAtNextWrite() { state.withLock { $0.lossAtWrite = true } }
    /// The device disappears: every device call fails until `plug()`.
    func unplug() { state.withLock { $0.unplugged = true } }
    /// The device is back: the next `open` succeeds.
    func plug() { state.withLock { $0.unplugged = false } }
    /// The next `queuedFrames` meets an underrun and recovers from it.
    func injectXrun() { state.withLock { $0.pendingXrun = true } }

    var snapshot: State { state.withLock { $0 } }

    /// Whether voice `id` was started and at least one frame after its first was written
    /// to the device opened at that time.
    func wasWritten(voice id: UInt32) -> Bool {
        state.withLock { s in
            guard let i = s.records.firstIndex(where: { $0.voice == id }) else { return false }
            return s.recordOpens[i] == s.opens && s.written > s.records[i].start
        }
    }

    // MARK: AudioSink (audio thread)

    private func checkPlugged() throws {
        if state.withLock({ $0.unplugged }) {
            state.withLock { $0.failedWrites += 1 }
            throw AudioError.deviceIO(device: deviceName, reason: FaultSink.lostReason)
        }
    }

    func open() throws {
        try state.withLock { s in
            s.openAttempts.append(monotonicNanos())
            if s.unplugged { throw AudioError.deviceOpen(device: deviceName, reason: FaultSink.openReason) }
            s.isOpen = true
            s.opens += 1
            s.written = 0
        }
    }

    func start() throws {
        try checkPlugged()
        state.withLock { $0.pacer.reset() }
    }

    func queuedFrames() throws -> Int {
        try checkPlugged()
        return state.withLock { s -> Int in
            guard s.pendingXrun else { return s.pacer.queued() }
            // snd_pcm_recover: the stream is prepared again, nothing queued.
            s.pendingXrun = false
            s.xruns += 1
            s.pacer.reset()
            return 0
        }
    }

    func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        try checkPlugged()
        var t = state.withLock { $0.pacer.nanosUntil(queued: lowWater) }
        if let limit = timeoutNanos { t = min(t, limit) }
        return pollReadable(wakeFD, timeoutNanos: t)
    }

    func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        state.withLock { s in if s.lossAtWrite { s.lossAtWrite = false; s.unplugged = true } }
        try checkPlugged()
        let xrun = state.withLock { s -> Bool in
            guard s.xrunAtVoiceEnd else { return false }
            let end = s.written + Int64(frames)
            guard s.records.contains(where: { $0.start < s.written && $0.start + Int64($0.frames) <= end
                                              && $0.start + Int64($0.frames) > s.written }) else { return false }
            s.xrunAtVoiceEnd = false
            s.xruns += 1
            return true
        }
        state.withLock { s in
            if xrun { s.pacer.reset() }
            s.pacer.wrote(frames)
            s.written += Int64(frames)
            s.totalWritten += Int64(frames)
        }
    }

    func stop() {}

    func close() { state.withLock { $0.isOpen = false } }

    func voiceStarted(_ record: VoiceRecord) {
        state.withLock { s in
            s.records.append(record)
            s.recordOpens.append(s.opens)
        }
    }
}
