import CALSA
import Glibc

/// The frames written since PipeWire's plugin last started the stream, while it has taken none.
///
/// PipeWire's ALSA plugin (0.3.65 `pcm_pipewire.c`, unchanged upstream since) copies from the
/// queue on its own realtime thread and reads the PCM's state twice in one cycle: once to decide
/// whether to copy (only while RUNNING), once to decide whether a short cycle is an underrun
/// (only while RUNNING). When `snd_pcm_start` — the first write after standby — lands between
/// the two reads, the cycle copies nothing, fills the server's buffer with silence and flags an
/// underrun with the whole first write still queued. The next call sees `-EPIPE`, and the
/// recovery (`snd_pcm_prepare`) drops that write: a click never heard, and, since a run-out is
/// expected after the last voice, not reported either (docs/DESKTOP.md, "The start race"). Seen
/// in the plugin's own trace (`PIPEWIRE_DEBUG=alsa.pcm:T`) as `avail-before:N … xfer:want` with
/// `hw:0`, right after `start`.
///
/// So the sink keeps a copy of what it wrote since the start, and while nothing of it has been
/// taken, an underrun with the plugin still counting the whole copy as ahead of the listener
/// (`snd_pcm_delay`) is that race when it is flagged within half a cycle of the start (too soon
/// for the server to have taken the first write and run short in a second cycle), or later
/// with the delay not below what it was after the last write (`isRace`): the stream is
/// prepared and the copy written again (which starts it again), and the engine sees no underrun.
struct StartCopy {
    var bytes: UnsafeMutableRawPointer?
    var capacity = 0          // frames
    var frameBytes = 0
    /// Frames written since the start, all still queued (0: nothing kept).
    var frames = 0
    var startedAt: UInt64 = 0
    /// What `snd_pcm_delay` said after the last write into the copy.
    var delayAfter: Int?
    /// Underruns taken for this race and answered by writing the copy again.
    var replays = 0

    init() {}

    init(capacity: Int, frameBytes: Int, replays: Int) {
        self.bytes = .allocate(byteCount: capacity * frameBytes, alignment: 16)
        self.capacity = capacity
        self.frameBytes = frameBytes
        self.replays = replays
    }

    /// Frees the copy (the counter stays).
    mutating func free() {
        bytes?.deallocate()
        self = StartCopy(replays: replays)
    }

    private init(replays: Int) { self.replays = replays }

    /// After a successful write of `count` frames at `src`, at `now`; `started`: the write started
    /// the stream. Only what follows a start, while nothing was taken, is kept.
    mutating func wrote(_ src: UnsafeRawPointer, count: Int, started: Bool, now: @autoclosure () -> UInt64) {
        guard let copy = bytes else { return }
        if started {
            frames = 0
            startedAt = now()
        } else if frames == 0 {
            return
        }
        guard frames + count <= capacity else { frames = 0; return }
        memcpy(copy + frames * frameBytes, src, count * frameBytes)
        frames += count
    }

    /// The queue was seen at `queued` frames: once the server took any of the copy, an underrun
    /// is a real one.
    mutating func seen(queued: Int) {
        if queued < frames { frames = 0 }
    }

    /// Whether an underrun flagged `since` frames' time after the start, with the plugin counting
    /// `delay` frames ahead of the listener, is the race, for a server that takes `cycle` frames a
    /// cycle. The copy must be armed and all of it still ahead. Then either it came within half a
    /// cycle (a real underrun needs the server to take the whole first write, pull + a period,
    /// first), or — the look came late: a stalled audio thread, or the plugin's flag set just
    /// after the look that follows the write — the delay is not below what it was after the
    /// last write. A race took nothing, so the delay stays (the server's delay, its last
    /// cycle, all of the copy); a real underrun took all of the copy, at least a cycle, and
    /// the delay fell by that less the part of a cycle that had passed at that write. (Measured:
    /// races 2176 after 2170 and 704 after 698; real underruns 128 after 192, 576, 676, 700.)
    /// The delay may rise in a race by the part of a cycle that had passed at the write (+6 in
    /// both), never by a whole cycle: a rise of a cycle or more means the server's quantum grew,
    /// and a real underrun after that could look like a race; it is taken for a real one (were it
    /// a race, the click is lost as without this rule, rather than heard twice). A copy shorter
    /// than a cycle cannot be told this way: it is taken for the race only within half a cycle.
    func isRace(since: Int, delay: Int?, cycle: Int) -> Bool {
        guard frames > 0, let delay, delay >= frames else { return false }
        if since < cycle / 2 { return true }
        guard frames >= cycle, let delayAfter else { return false }
        return delay >= delayAfter && delay < delayAfter + cycle
    }
}

extension AlsaSink {
    /// An underrun (`-EPIPE`) was just reported. When it is the start race, prepares the stream,
    /// writes the copy again and returns true (the queue is the copy again); else false, and the
    /// caller recovers as from any underrun.
    func replayAfterStartRace() -> Bool {
        guard let pcm, let copy = startCopy.bytes, startCopy.frames > 0 else { return false }
        let frames = startCopy.frames
        let since = monotonicNanos() &- startCopy.startedAt
        let sinceFrames = Int(min(since, 10_000_000_000) * UInt64(max(format.rate, 1)) / 1_000_000_000)
        let delay = AlsaSink.delay(pcm)
        let race = startCopy.isRace(since: sinceFrames, delay: delay, cycle: max(availMin, periodFrames))
        startCopy.frames = 0
        let said = "delay \(delay.map(String.init) ?? "unknown") of \(frames) frames written, \(startCopy.delayAfter.map(String.init) ?? "unknown") after the last write, \(since / 1000) us after the start"
        guard race else {
            log?(.debug, "audio stream flagged an underrun with nothing taken that it saw; a real one (\(said)) device=\(logValue(deviceName))")
            return false
        }
        // Writing the copy starts the stream again, and so may meet the race again: a few tries.
        for _ in 0..<3 {
            guard snd_pcm_prepare(pcm) >= 0 else { return false }
            let r = snd_pcm_writei(pcm, copy, snd_pcm_uframes_t(frames))
            if r == frames {
                startCopy.frames = frames
                startCopy.startedAt = monotonicNanos()
                startCopy.replays += 1
                startCopy.delayAfter = AlsaSink.delay(pcm)
                log?(.debug, "audio stream flagged an underrun as it started, with nothing taken (\(said)); wrote its \(frames) frames again device=\(logValue(deviceName))")
                return true
            }
            if r != -EPIPE { return false }   // (a short write, or another error)
        }
        return false
    }

    /// `snd_pcm_delay`, nil when the PCM cannot tell.
    static func delay(_ pcm: OpaquePointer) -> Int? {
        var d = snd_pcm_sframes_t(0)
        return snd_pcm_delay(pcm, &d) == 0 ? Int(d) : nil
    }
}
