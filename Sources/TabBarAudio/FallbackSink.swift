import CALSA
import Glibc
import Synchronization

/// `--audio auto`: plays through the real device (`primary`) when it opens, else into a
/// stand-in (the null sink) — and keeps trying the real device at every stream start
/// (at most every `retryInterval`), switching over as soon as it opens. One log line each
/// way. The engine sees one sink; its format is the primary's. Like every sink it belongs to the
/// audio thread; other threads read `status`.
public final class FallbackSink: AudioSink {
    let primary: any AudioSink
    let standin: any AudioSink
    /// Seconds between two attempts to open the real device while the stand-in plays.
    let retryInterval: Double
    private let log: AudioLog
    private var lastTry: UInt64 = 0
    private var onStandin = false { didSet { publish() } }
    private var standinOpen = false
    private var everOpened = false
    /// Why the real device did not open (empty while it plays).
    private var primaryProblem = "" { didSet { publish() } }
    /// Always readable: `settle` told that a sound is waiting (the one `start` plays).
    private let soundWaiting: Int32
    /// Which device plays, for any thread (the state loop's stats and logs).
    public let status = Status()

    /// Whether sounds go to the stand-in, and why the real device did not open.
    public final class Status: Sendable {
        private let state = Mutex((usingStandin: false, primaryProblem: ""))
        /// Whether sounds currently go to the stand-in (they are not heard).
        public var usingStandin: Bool { state.withLock { $0.usingStandin } }
        /// Why the real device did not open (empty while it plays).
        public var primaryProblem: String { state.withLock { $0.primaryProblem } }
        fileprivate func set(usingStandin: Bool, primaryProblem: String) {
            state.withLock { $0 = (usingStandin, primaryProblem) }
        }
    }

    /// `retryInterval`: seconds between two attempts to open the real device while the stand-in plays.
    public init(primary: sending any AudioSink, standin: sending any AudioSink, retryInterval: Double = 0.25,
                log: @escaping AudioLog) {
        self.primary = primary
        self.standin = standin
        self.retryInterval = retryInterval
        self.log = log
        soundWaiting = tabbard_eventfd()
        var one: UInt64 = 1
        _ = Glibc.write(soundWaiting, &one, 8)
    }

    deinit { if soundWaiting >= 0 { Glibc.close(soundWaiting) } }

    private func publish() { status.set(usingStandin: onStandin, primaryProblem: primaryProblem) }

    private var current: AudioSink { onStandin ? standin : primary }

    public var format: PCMFormat { primary.format }
    public var periodFrames: Int { current.periodFrames }
    public var bufferFrames: Int { current.bufferFrames }
    public var deviceName: String { current.deviceName }
    public var pacing: StreamPacing { current.pacing }
    public var xruns: Int { current.xruns }
    public var pullFrames: Int { current.pullFrames }
    public var refillMarginFrames: Int { current.refillMarginFrames }

    public func open() throws {
        if tryPrimary() { return }
        if !standinOpen {
            try standin.open()
            standinOpen = true
        }
    }

    /// Opens the real device; on success leaves the stand-in. Logs each switch once.
    private func tryPrimary() -> Bool {
        lastTry = monotonicNanos()
        do {
            try primary.open()
            if onStandin || !everOpened && !primaryProblem.isEmpty {
                log(.notice, "audio device \(primary.deviceName) opened; sounds are heard again (leaving the null sink)")
            }
            if standinOpen { standin.close(); standinOpen = false }
            onStandin = false
            everOpened = true
            primaryProblem = ""
            return true
        } catch {
            let reason = (error as? AudioError)?.reason ?? "\(error)"
            if !onStandin {
                log(.warning, "ALSA device \"\(primary.deviceName)\" cannot be opened (\(reason)); playing into the null sink, so sounds are silent until it opens (it is tried again at every sound)")
            }
            primaryProblem = reason
            onStandin = true
            return false
        }
    }

    public func start() throws {
        if onStandin && monotonicNanos() &- lastTry >= UInt64(retryInterval * 1e9) {
            // The device just opened: measure it, only as long as it takes (a sound waits).
            if tryPrimary() { primary.settle(wakeFD: soundWaiting) }
        }
        try current.start()
    }

    public func queuedFrames() throws -> Int { try current.queuedFrames() }
    public func delayFrames() throws -> Int { try current.delayFrames() }
    public func serverTiming(queued: Int) -> ServerTiming? { current.serverTiming(queued: queued) }
    public func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?) throws -> Bool {
        try current.wait(lowWater: lowWater, wakeFD: wakeFD, timeoutNanos: timeoutNanos)
    }
    public func write(_ samples: UnsafePointer<Float>, frames: Int) throws { try current.write(samples, frames: frames) }
    /// On the stand-in the queue is simply forgotten: the next `start` tries the real device.
    public func standby() -> Bool {
        if onStandin { standin.stop(); return true }
        return primary.standby()
    }
    public var canStandby: Bool { onStandin || primary.canStandby }
    public var standbyConfirmsLink: Bool { !onStandin && primary.standbyConfirmsLink }
    public var pluginThreadName: String? { onStandin ? nil : primary.pluginThreadName }
    public var reopensAfterIdle: Bool { !onStandin && primary.reopensAfterIdle }
    public func settle(wakeFD: Int32) { current.settle(wakeFD: wakeFD) }
    public func stop() { current.stop() }
    public func close() {
        if onStandin {
            standin.close()
            standinOpen = false
        } else {
            primary.close()
        }
    }
    public func voiceStarted(_ record: VoiceRecord) { current.voiceStarted(record) }
}
