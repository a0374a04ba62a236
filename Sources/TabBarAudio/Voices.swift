/// A request from the state loop to the audio thread (owns one retain of `sound`).
struct PlayCommand {
    var sound: Unmanaged<Sound>
    var gain: Float
    var requestedAt: UInt64
    var voice: UInt32
    var retrigger: Retrigger
}

/// A message from the audio thread to the state loop (owns one retain of `sound`).
struct RawReport {
    enum Kind: UInt8 { case started, finished, failed }
    var kind: Kind
    var sound: Unmanaged<Sound>
    var voice: UInt32
    var latencyNs: UInt64
    var framesAhead: Int
    var startFrame: Int64
    /// Request read → estimated first frame at the listener (`.started`).
    var sinkLatencyNs: UInt64 = 0
    /// Why the voice was not heard intact (`.failed`; the sound's retain is released, not handed over).
    var failure: VoiceFailure = .none
}

/// Why an accepted voice was not heard intact (wire `sound.failed` `reason`).
enum VoiceFailure: UInt8 {
    case none, xrun, deviceLost, stalled, neverLinked, shutdown, stolen, unconfirmed, missedCycle

    func text(device: String) -> String {
        switch self {
        case .none: return ""
        case .xrun: return "an underrun cut the sound short (the device ran dry while it played)"
        case .deviceLost: return device.isEmpty ? "the audio device was lost before the sound was played" : "the audio device was lost before the sound was played: \(device)"
        case .stalled: return "the audio stream made no progress; the device is being reopened"
        case .neverLinked: return "no session manager linked the stream (the sound server took no audio)"
        case .shutdown: return "the daemon stopped before the sound was played"
        case .unconfirmed: return "the sound server may not have played it: the stream failed right after it was handed over (no session manager linked the next one?)"
        case .missedCycle: return "the sound server played a cycle of silence inside the sound: the stream missed a cycle of the server's graph and the rest came a cycle late"
        case .stolen: return "more sounds were asked for at once than the voice pool holds (the `voices` setting); this one was replaced before it started"
        }
    }
}

/// One playing sound in the fixed voice pool (audio thread only).
struct Voice {
    var active = false
    var sound: Unmanaged<Sound>?
    var samples: UnsafePointer<Float>?
    var frames = 0
    var pos = 0
    var gain: Float = 1
    var id: UInt32 = 0
    var requestedAt: UInt64 = 0
    var reported = false
    /// A `sound.failed` was sent for this voice (at most one).
    var failed = false
    /// Frames left of a fade-out (0 = not fading); the voice ends when it reaches 0.
    var fadeLeft = 0
    var fadeTotal = 0
    var order: UInt64 = 0
    /// The stream frame its first frame was written at (set with `reported`).
    var startFrame: Int64 = 0
}

/// The mixer: a fixed pool of voices summed in float, then the limiter.
/// Used only by the audio thread.
struct Mixer {
    let channels: Int
    private(set) var voices: UnsafeMutableBufferPointer<Voice>
    var limiter: SoftLimiter
    private var nextOrder: UInt64 = 0
    /// Frames of the fade-out used when a voice is restarted.
    let fadeFrames: Int

    init(voices count: Int, format: PCMFormat) {
        channels = format.channels
        voices = .allocate(capacity: max(count, 1))
        voices.initialize(repeating: Voice())
        limiter = SoftLimiter(rate: format.rate)
        fadeFrames = max(format.rate / 1000, 1)
    }

    func deallocate() { voices.deallocate() }

    var activeCount: Int {
        var n = 0
        for v in voices where v.active { n += 1 }
        return n
    }

    /// Where the next voice goes, in one pass over the pool: the first free slot, else the
    /// oldest voice's (`stealing`: the new voice replaces it).
    func nextSlot() -> (index: Int, stealing: Bool) {
        var oldest = 0
        for i in voices.indices {
            if !voices[i].active { return (i, false) }
            if voices[i].order < voices[oldest].order { oldest = i }
        }
        return (oldest, true)
    }

    /// Adds a voice at `slot` (`nextSlot()`, taken before); returns the sound of the voice it
    /// replaced (stolen), if any.
    mutating func add(_ c: PlayCommand, at slot: (index: Int, stealing: Bool)) -> (stolen: Unmanaged<Sound>?, faded: Int) {
        let sound = c.sound.takeUnretainedValue()
        var faded = 0
        if c.retrigger == .restart {
            for i in voices.indices where voices[i].active && voices[i].fadeLeft == 0 {
                guard let s = voices[i].sound else { continue }
                if s.toOpaque() == c.sound.toOpaque() || s.takeUnretainedValue().name == sound.name {
                    let left = min(fadeFrames, voices[i].frames - voices[i].pos)
                    voices[i].fadeLeft = max(left, 1)
                    voices[i].fadeTotal = max(left, 1)
                    faded += 1
                }
            }
        }
        // (A fade marks no voice inactive: the slot taken before is still the one.)
        let stolen = slot.stealing ? voices[slot.index].sound : nil
        nextOrder += 1
        voices[slot.index] = Voice(active: true, sound: c.sound, samples: sound.samples.baseAddress,
                             frames: sound.frames, pos: 0, gain: c.gain, id: c.voice,
                             requestedAt: c.requestedAt, reported: false, fadeLeft: 0, fadeTotal: 0,
                             order: nextOrder)
        return (stolen, faded)
    }

    /// Mixes `frames` frames into `out` (overwritten), scaled by `master`, then limits.
    /// Calls `finished` for each voice that ended within the chunk.
    mutating func render(into out: UnsafeMutablePointer<Float>, frames: Int, master: Float,
                         finished: (Voice) -> Void) {
        let ch = channels
        out.update(repeating: 0, count: frames * ch)
        for i in voices.indices where voices[i].active {
            var v = voices[i]
            guard let src = v.samples else { continue }
            var n = min(frames, v.frames - v.pos)
            let g = v.gain * master
            if v.fadeLeft > 0 {
                n = min(n, v.fadeLeft)
                let base = src + v.pos * ch
                for f in 0..<n {
                    let ramp = Float(v.fadeLeft - f) / Float(v.fadeTotal + 1)
                    for c in 0..<ch { out[f * ch + c] += base[f * ch + c] * g * ramp }
                }
                v.fadeLeft -= n
                v.pos += n
                if v.fadeLeft == 0 { v.pos = v.frames }
            } else {
                let base = src + v.pos * ch
                let count = n * ch
                if g == 1 {
                    for k in 0..<count { out[k] += base[k] }
                } else {
                    for k in 0..<count { out[k] += base[k] * g }
                }
                v.pos += n
            }
            if v.pos >= v.frames {
                v.active = false
                finished(v)
                v.sound = nil
                v.samples = nil
            }
            voices[i] = v
        }
        limiter.process(out, frames: frames, channels: ch)
    }
}
