import CALSA

/// One clean look at a sound server's clock through its ALSA plugin: `snd_pcm_delay` and when
/// it was read, with the queue it goes with (`AudioSink.serverTiming`).
public struct ServerTiming: Equatable, Sendable {
    /// CLOCK_MONOTONIC when the delay was read (the middle of a bracket at most
    /// `AlsaSink.timingBracketNanos` wide).
    public var nanos: UInt64
    /// Frames written and not yet taken by the server, when the delay was read.
    public var queued: Int
    /// `snd_pcm_delay`.
    public var delay: Int
}

/// A cycle the server completed without the stream while it played: `frames` of silence went
/// to the sink at a stream frame between `after` and `before` (the stream positions of the two
/// looks around it).
struct CycleGap: Equatable {
    var frames: Int
    var after: Int64
    var before: Int64
}

/// Finds a cycle PipeWire's graph completed without the stream: the server's time ran a
/// cycle further than the frames the stream gave it (docs/AUDIO.md, "A click that restarts the
/// graph").
///
/// PipeWire's ALSA plugin (0.3.65 `pcm_pipewire.c`) takes a quantum from the queue in each
/// cycle its data thread runs, and keeps that cycle's start on the server's clock (`now` of
/// `pw_stream_get_time_n`, CLOCK_MONOTONIC) and the graph's delay. Its `snd_pcm_delay` is the
/// queue plus that delay plus the frames taken in the cycle, less the time since the cycle
/// started (clamped at the queue). So for a look at `t`, with `played` frames taken so far,
///
///     z = (delay − queued) + rate·t − played
///
/// is the graph's delay plus `rate·now` less the frames taken before this cycle: constant
/// while the stream takes a quantum every cycle (the server's time and the frames taken move
/// together; jitter of its data thread inside a cycle moves neither). When the data thread
/// misses a cycle (triggered, not run by the driver's next timer), the sink mixes silence for
/// the stream in it and the data follows a cycle late: `now` moves two cycles while
/// `played` moves one, and `z` steps up by a quantum, for good.
///
/// Looks where `delay − queued` is 0 are skipped (the plugin clamped it: it tells nothing);
/// so are looks before the first frame was taken (the first cycle's start is the stream's
/// start, not a hole). Each look is compared with the previous one, so a slow drift between
/// the device's clock and CLOCK_MONOTONIC never adds up to a step. Audio thread only; no
/// allocation.
struct CycleGapDetector {
    /// Frames per second of the stream.
    let rate: Int
    /// A step of `z` at least this big is a missed cycle. PipeWire's smallest quantum is 32
    /// frames; a clean look is within a few frames (the bracket, the plugin's rounding).
    let threshold: Int
    private var origin: UInt64 = 0
    private var startPlayed: Int64 = 0
    private var lastZ = 0.0
    private var lastPlayed: Int64 = 0
    private var haveLast = false

    init(rate: Int, threshold: Int? = nil) {
        self.rate = max(rate, 1)
        self.threshold = threshold ?? max(rate / 2000, 16)
    }

    /// A new stream run: `played` is its position before its first frame is taken.
    mutating func reset(played: Int64) {
        origin = 0
        startPlayed = played
        haveLast = false
    }

    /// One look; returns the gap when the server's time stepped a cycle ahead of the frames
    /// taken since the previous look.
    mutating func look(_ t: ServerTiming, played: Int64) -> CycleGap? {
        guard played > startPlayed, t.delay > t.queued else { return nil }
        if origin == 0 { origin = t.nanos }
        guard t.nanos >= origin, played >= lastPlayed || !haveLast else { reset(played: played); return nil }
        let z = Double(t.delay - t.queued) + Double(t.nanos - origin) * Double(rate) / 1e9 - Double(played - startPlayed)
        defer { lastZ = z; lastPlayed = played; haveLast = true }
        guard haveLast, z - lastZ >= Double(threshold) else { return nil }
        return CycleGap(frames: Int((z - lastZ).rounded()), after: lastPlayed, before: played)
    }
}

extension AudioRenderer {
    /// The start a voice already reported failed keeps in `tail`: no gap reports it again.
    static let reportedStart = Int64.max

    /// One look at the server's clock while the stream runs (PipeWire's ALSA plugin only): a
    /// cycle it completed without the stream put silence inside what it played, so every voice
    /// that sounded across it is reported (`VoiceFailure.missedCycle`). Before `releasePlayed`.
    func watchServerCycles(queued: Int, played: Int64) {
        let epoch = sink.xruns &+ sink.startRaces
        if epoch != cycleEpoch {
            // An underrun or a replayed start made the plugin's stream anew: its clock starts again.
            cycleEpoch = epoch
            cycleGaps.reset(played: played)
            return
        }
        guard let t = sink.serverTiming(queued: queued), let gap = cycleGaps.look(t, played: played) else { return }
        var hit = 0
        // Voices fully written: a hole anywhere between their first and last frame (not in the
        // silence written after it).
        var kept = 0
        for i in 0..<tailCount {
            let (s, voice, _, start) = tail[i]
            if start < gap.before && start + Int64(s.takeUnretainedValue().frames) > gap.after {
                _ = s.retain()
                pushFailure(s, voice: voice, .missedCycle)
                finishedReport(s)
                hit += 1
            } else {
                tail[kept] = tail[i]
                kept += 1
            }
        }
        tailCount = kept
        // Voices still being written: they started before what is written now.
        for i in mixer.voices.indices where mixer.voices[i].active && mixer.voices[i].reported {
            if mixer.voices[i].startFrame < gap.before && !mixer.voices[i].failed {
                failVoice(i, .missedCycle)
                hit += 1
            }
        }
        if hit > 0 { signalReports() }
        log(.notice, "audio stream missed a server cycle: \(gap.frames) frames of silence at stream frame \(gap.after)-\(gap.before), \(hit) sound(s) reported device=\(logValue(sink.deviceName))")
    }
}
