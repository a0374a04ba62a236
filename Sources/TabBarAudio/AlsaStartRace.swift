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
/// expected after the last voice, not reported either (docs/AUDIO.md, "The start race"). Seen
/// in the plugin's own trace (`PIPEWIRE_DEBUG=alsa.pcm:T`) as `avail-before:N … xfer:want` with
/// `hw:0`, right after `start`.
///
/// So the sink keeps a copy of what it wrote since the start, and while nothing of it has been
/// taken, an underrun flagged within half a cycle of the start — too soon for the server to have
/// taken the first write and run short in a second cycle — with the plugin still counting the
/// whole copy as ahead of the listener (`snd_pcm_delay`) is that race: the stream is prepared
/// and the copy written again (which starts it again), and the engine sees no underrun.
struct StartCopy {
    var bytes: UnsafeMutableRawPointer?
    var capacity = 0          // frames
    var frameBytes = 0
    /// Frames written since the start, all still queued (0: nothing kept).
    var frames = 0
    var startedAt: UInt64 = 0
    /// What `snd_pcm_delay` said right after the start (for the debug log: what a race and a real
    /// underrun leave of it).
    var startDelay: Int?
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

    /// Whether an underrun flagged `since` ns after the start, with the plugin counting `delay`
    /// frames ahead of the listener, is the race: the copy is armed, it came within `halfCycle` ns
    /// (a real underrun needs the server to take the whole first write, pull + a period, first)
    /// and all of the copy is still ahead.
    func isRace(since: UInt64, halfCycle: UInt64, delay: Int?) -> Bool {
        guard frames > 0, let delay else { return false }
        return since < halfCycle && delay >= frames
    }
}

extension AlsaSink {
    /// An underrun (`-EPIPE`) was just reported. When it is the start race, prepares the stream,
    /// writes the copy again and returns true (the queue is the copy again); else false, and the
    /// caller recovers as from any underrun.
    func replayAfterStartRace() -> Bool {
        guard let pcm, let copy = startCopy.bytes, startCopy.frames > 0 else { return false }
        let frames = startCopy.frames
        let rate = UInt64(max(format.rate, 1))
        let halfCycle = UInt64(max(availMin, periodFrames) / 2) * 1_000_000_000 / rate
        let since = monotonicNanos() &- startCopy.startedAt
        let delay = AlsaSink.delay(pcm)
        let race = startCopy.isRace(since: since, halfCycle: halfCycle, delay: delay)
        startCopy.frames = 0
        let atStart = startCopy.startDelay.map(String.init) ?? "unknown"
        guard race else {
            log?(.debug, "audio stream flagged an underrun \(since / 1000) us after it started, with nothing taken that it saw; a real one (delay \(delay.map(String.init) ?? "unknown") of \(frames) frames written, \(atStart) at the start) device=\(deviceName)")
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
                log?(.debug, "audio stream flagged an underrun as it started, with nothing taken (delay \(delay.map(String.init) ?? "unknown"), \(atStart) at the start, \(since / 1000) us after it); wrote its \(frames) frames again device=\(deviceName)")
                startCopy.startDelay = AlsaSink.delay(pcm)
                return true
            }
            if r >= 0 || r != -EPIPE { return false }
        }
        return false
    }

    /// `snd_pcm_delay`, nil when the PCM cannot tell.
    static func delay(_ pcm: OpaquePointer) -> Int? {
        var d = snd_pcm_sframes_t(0)
        return snd_pcm_delay(pcm, &d) == 0 ? Int(d) : nil
    }
}
