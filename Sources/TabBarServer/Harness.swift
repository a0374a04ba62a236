@preconcurrency import Glibc
import TabBarCore
import TabBarAudio

/// The test-harness methods (`clock.*`, `capture.*`, docs/HARNESS.md) and how the
/// manual clock keeps the audio thread in step with the state loop.
extension Server {
    /// `capture.start {path}`.
    func startCapture(_ path: String) -> Result<JSON, RPCError> {
            guard let sink = audio.nullSink else { return .failure(.captureFailed("the daemon plays through \(audio.sinkName); captures need tabbard --audio null")) }
            // What was queued at the current time is in the stream before the capture starts.
            settleAudio(queued: false)
            do {
                let first = try sink.startCapture(path: path)
                return .success(.obj(["path": .string(path), "frame": .int(first)]))
            } catch {
                return .failure(.captureFailed("\(error)"))
            }
    }

    /// `capture.stop`.
    func stopCapture() -> Result<JSON, RPCError> {
            guard let sink = audio.nullSink else { return .failure(.captureFailed("the daemon plays through \(audio.sinkName); there is no capture")) }
            settleAudio(queued: false)
            do {
                guard let done = try sink.stopCapture() else { return .failure(.captureFailed("no capture is running; capture.start first")) }
                return .success(.obj(["path": .string(done.path), "frame": .int(done.firstFrame), "frames": .int(done.frames)]))
            } catch {
                return .failure(.captureFailed("\(error)"))
            }
    }

    /// Under the manual clock: waits until the audio thread has done all it can at the
    /// current time (`queued`: a sound was just queued), then publishes the sounds that
    /// started, so `sound.played` comes at the same place of the event stream on every run.
    /// Does nothing on the real clock.
    func settleAudio(queued: Bool, timeoutNanos: UInt64 = 10_000_000_000) {
        guard let clock = audio.nullSink?.clock else { return }
        if !clock.settle(queued: queued, timeoutNanos: timeoutNanos) {
            Log.error("The audio thread did not catch up with the manual clock", ["waited_ms": String(timeoutNanos / 1_000_000)])
        }
        publishSoundReports()
    }

    /// Finishes a running capture at shutdown (under the manual clock at its current time,
    /// so the file is the same on every run).
    func endCapture() {
        guard let sink = audio.nullSink else { return }
        settleAudio(queued: false)
        do { _ = try sink.stopCapture() } catch { Log.error("The capture could not be written", ["error": "\(error)"]) }
    }

    /// `clock.advance {ms}`: moves the manual clock by `ms`, stopping at each timer that
    /// falls due on the way (in order) to fire it at its own time; the null sink renders
    /// every frame up to each of those times before the next step.
    func advanceClock(by ms: Int) -> Result<JSON, RPCError> {
        guard let clock = timers.clock as? ManualLoopClock else { return .failure(.clockNotManual) }
        let target = clock.ms + Int64(ms)
        settleAudio(queued: false)
        while let (key, due) = timers.earliest(), due <= target {
            moveClock(clock, to: max(due, clock.ms))
            fire(key)
        }
        moveClock(clock, to: target)
        return .success(.obj(["now_ms": .int(target)]))
    }

    private func moveClock(_ clock: ManualLoopClock, to ms: Int64) {
        guard ms != clock.ms else { return }
        let step = ms - clock.ms
        clock.ms = ms
        audio.nullSink?.clock?.set(ms: ms)
        // Rendering takes ~2 ms per virtual second (docs/PERFORMANCE.md): allow 10 s plus 20× that.
        settleAudio(queued: false, timeoutNanos: 10_000_000_000 + UInt64(max(step, 0)) * 40_000)
    }

    /// `clock.get`.
    func clockJSON() -> JSON {
        .obj(["now_ms": .int(timers.nowMs()), "mode": .string(timers.clock.mode.rawValue)])
    }
}

extension AudioService {
    /// Under a manual clock the stream never stops for idleness (it keeps the device's time).
    static let manualIdleTimeout: Double = 1e9

    /// The null sink for `config`: paced by a manual clock under `--clock manual`.
    static func makeNullSink(config: ServerConfig, format: PCMFormat) -> NullSink {
        NullSink(format: format, periodFrames: config.periodFrames, clock: config.clock == .manual ? ManualClock() : nil)
    }

    /// Starts `--capture FILE` (before any sound). Throws a sentence for the log.
    func startConfiguredCapture() throws {
        guard let path = config.capturePath else { return }
        guard let sink = nullSink else { throw ServerError("--capture \(path) needs --audio null") }
        do { _ = try sink.startCapture(path: path) } catch { throw ServerError("\(error)") }
    }
}

extension RPCError {
    /// A capture could not be started or stopped (no null sink, file not writable, none running).
    static func captureFailed(_ why: String) -> RPCError {
        RPCError(code: -32010, kind: "capture_failed", message: "The capture failed: \(why).")
    }
}
