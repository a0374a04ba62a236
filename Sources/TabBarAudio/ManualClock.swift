import CALSA
import Glibc
import Synchronization

/// The virtual time of `--clock manual`, shared by the state loop (which moves it:
/// `clock.advance`) and the null sink's audio thread (which is paced by it).
///
/// Time only moves in `set`. After moving it — and after queueing a sound — the state
/// loop calls `settle`, which returns once the audio thread has done everything it can
/// at the current time: taken every queued voice and rendered every frame that is due.
/// So the stream (and a capture of it) is the same, frame for frame, on every run.
///
/// Protocol: the state loop bumps `requested` after its changes (time, queued voices)
/// and wakes the sink; the sink, finding nothing left to do at the current time and its
/// engine's wake-up eventfd empty, publishes the generation it saw in `settled`.
///
/// The null sink is given it as what paces it (`NullSinkPace`).
public final class ManualClock: Sendable {
    /// Period of the null sink under a manual clock: 16 frames, so the stream is rendered
    /// in small chunks and a voice starts two periods (`leadFrames`) after the current time.
    public static let periodFrames = 16
    /// Frames between the frame the device plays at `now` and the first frame of a voice
    /// started at `now` (its queue: two periods), once the clock moved by 1 ms or more.
    public static let leadFrames = 2 * periodFrames

    private let nowNanos = Atomic<UInt64>(0)
    private let requested = Atomic<UInt64>(0)
    private let settled = Atomic<UInt64>(0)
    private let released = Atomic<Bool>(false)
    /// Whether the sink's stream is started (between `start` and `stop`): only then does its
    /// audio thread render as the time moves.
    private let active = Atomic<Bool>(false)
    /// Readable when the time moved or a settle was asked for (the sink polls it).
    let tickFD: Int32
    /// Readable when the audio thread published a settle (the state loop waits on it).
    private let settledFD: Int32

    public init() {
        tickFD = tabbard_eventfd()
        settledFD = tabbard_eventfd()
    }

    deinit {
        if tickFD >= 0 { Glibc.close(tickFD) }
        if settledFD >= 0 { Glibc.close(settledFD) }
    }

    /// Virtual CLOCK_MONOTONIC in ns (starts at 0).
    public var nanos: UInt64 { nowNanos.load(ordering: .acquiring) }

    /// Moves the time to `ms` (state loop). Call `settle` afterwards.
    public func set(ms: Int64) {
        nowNanos.store(UInt64(max(ms, 0)) * 1_000_000, ordering: .releasing)
    }

    /// Waits until the audio thread has done all it can at the current time (state loop).
    /// `queued`: a voice was just queued (the engine starts its stream for it); otherwise,
    /// with the stream stopped, there is nothing to wait for. Returns false if it did not
    /// happen within `timeoutNanos` (real time) — a bug, logged by the caller.
    @discardableResult
    public func settle(queued: Bool, timeoutNanos: UInt64 = 10_000_000_000) -> Bool {
        if !queued && !active.load(ordering: .sequentiallyConsistent) { return true }
        let g = requested.add(1, ordering: .sequentiallyConsistent).newValue
        signal(tickFD)
        let deadline = monotonicNanos() + timeoutNanos
        while settled.load(ordering: .sequentiallyConsistent) < g {
            let now = monotonicNanos()
            if now >= deadline { return false }
            if pollReadable(settledFD, timeoutNanos: deadline - now) { drain(settledFD) }
        }
        return true
    }

    /// From now on the sink no longer waits for the time (shutdown: voices play out at once).
    public func release() {
        released.store(true, ordering: .releasing)
        signal(tickFD)
    }

    var isReleased: Bool { released.load(ordering: .acquiring) }

    // MARK: Audio thread side (NullSink)

    /// The generation to publish if the sink finds nothing to do (load before looking).
    func generation() -> UInt64 { requested.load(ordering: .sequentiallyConsistent) }

    /// The sink found nothing to do at generation `g`.
    func publish(_ g: UInt64) {
        if settled.load(ordering: .relaxed) < g {
            settled.store(g, ordering: .sequentiallyConsistent)
            signal(settledFD)
        }
    }

    /// Blocks until the time moves, a settle is asked for, the clock is released or `wakeFD`
    /// is readable. Returns true when `wakeFD` is readable.
    func block(wakeFD: Int32) -> Bool {
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0), pollfd(fd: tickFD, events: Int16(POLLIN), revents: 0)]
        _ = retryEINTR { tabbard_ppoll(&fds, 2, -1) }
        if fds[1].revents & Int16(POLLIN) != 0 { drain(tickFD) }
        return fds[0].revents & Int16(POLLIN) != 0
    }

    private func signal(_ fd: Int32) {
        var one: UInt64 = 1
        _ = Glibc.write(fd, &one, 8)
    }

    private func drain(_ fd: Int32) {
        var v: UInt64 = 0
        _ = Glibc.read(fd, &v, 8)
    }
}

extension ManualClock: NullSinkPace {
    var pacing: StreamPacing { .manual }
    /// A stream that does not move is waiting for `set`, not stalled.
    var detectsStalls: Bool { false }
    var periodFrames: Int? { ManualClock.periodFrames }

    /// The frame the device plays at the clock's time.
    private func frameNow(rate: Int) -> Int64 {
        Int64(nanos / 1000) * Int64(rate) / 1_000_000
    }

    func start(_ s: inout NullSink.State) { catchUp(&s) }

    func queued(_ s: inout NullSink.State) -> Int {
        isReleased ? 0 : Int(max(0, s.position - frameNow(rate: s.rate)))
    }

    func wrote(_ frames: Int, _ s: inout NullSink.State) {}

    func wait(lowWater: Int, wakeFD: Int32, timeoutNanos: UInt64?,
              queued: () -> Int, nanosUntil: (Int) -> UInt64) -> Bool {
        while true {
            // Load the generation before looking: a settle asked for after this look bumps it again.
            let g = generation()
            if isReleased { return pollReadable(wakeFD, timeoutNanos: 0) }
            if queued() <= lowWater { return false }
            if pollReadable(wakeFD, timeoutNanos: 0) { return true }
            publish(g)
            if block(wakeFD: wakeFD) { return true }
        }
    }

    func streamActive(_ on: Bool) { active.store(on, ordering: .sequentiallyConsistent) }

    /// With the stream stopped: the silence up to the current time (plus the device's queue).
    func catchUp(_ s: inout NullSink.State) {
        let gap = frameNow(rate: s.rate) + Int64(ManualClock.leadFrames) - s.position
        guard gap > 0 else { return }
        s.position += gap
        s.pendingSilent += gap
        s.file?.writeSilence(frames: gap)
    }
}
