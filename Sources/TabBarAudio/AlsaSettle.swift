import CALSA
import Glibc

/// How `AlsaSink` learns what the device takes at once (`settle`, `pull`: `avail_min` sized to a
/// sound server's quantum) and how it stands by with nothing queued (`standby`).
extension AlsaSink {
    /// Learns what the device takes at once by playing a little silence, and makes sure
    /// `avail_min` is at least that: PipeWire's plugin hands the server at most `avail_min`
    /// frames a cycle and asks for a latency of `avail_min` frames, so `avail_min` = one
    /// period gets a quantum of one period — unless the server's minimum quantum is larger,
    /// which this finds (the queue then shrinks by `avail_min` only once per longer cycle).
    ///
    /// A sound requested meanwhile (`wakeFD` readable) ends the measurement early only where
    /// the steps already tell the pull (`quantumSeen`: a quantum larger than `avail_min`, at
    /// min-quantum 1024 the second step, 43 ms in); otherwise it waits for the four steps,
    /// about 25 ms at PipeWire's defaults. Either way the rest of the silence is dropped and
    /// the sound goes next. (Cut short at the first step or two, `avail_min` was left at one
    /// period — at min-quantum 1024 steady clicks then waited two cycles — or read from an
    /// interval that spanned the graph's switch to this stream's quantum and raised to 1024:
    /// steady clicks waited half a 1024 cycle, p50 11 ms instead of 1.4.) By the first step
    /// the stream is linked: one just opened plays into nothing until the session manager
    /// links it, and a click written then was once never heard.
    public func settle(wakeFD: Int32) {
        pullFrames = 0
        linked = true
        guard let pcm, !clockPaced, let bytes, snd_pcm_type(pcm) == SND_PCM_TYPE_IOPLUG else { return }
        let rate = Double(max(format.rate, 1))
        let chunk = bufferFrames
        memset(bytes, 0, chunk * format.channels * bytesPerSample)
        guard snd_pcm_writei(pcm, bytes, snd_pcm_uframes_t(chunk)) == chunk else { _ = standby(); return }
        var raw: [(UInt64, Int)] = []          // each time the queue was seen shorter, and by how much
        var last = chunk
        var cut = false
        let gap = AlsaSink.pieceGap(availMin: availMin, rate: rate)
        let deadline = monotonicNanos() + 1_000_000_000
        while monotonicNanos() < deadline {
            let steps = AlsaSink.merged(raw, within: gap)
            // A hand-over may still be coming in pieces until `gap` has passed without one.
            let whole = raw.last.map { monotonicNanos() - $0.0 >= gap } ?? false
            if steps.count >= 4 && whole { break }
            // fd -1 until the steps tell the pull: poll only sleeps.
            let known = whole && AlsaSink.quantumSeen(steps: steps, availMin: availMin)
            if pollReadable(known ? wakeFD : -1, timeoutNanos: 500_000) { cut = true; break }
            let avail = snd_pcm_avail(pcm)
            if avail < 0 { break }
            let q = bufferFrames - Int(avail)
            if q < last { raw.append((monotonicNanos(), last - q)); last = q }
            if q == 0 { break }
        }
        dropThenStandby()
        let steps = AlsaSink.merged(raw, within: gap)
        let pieces = raw.count > steps.count ? " (from \(raw.count) pieces)" : ""
        log?(.debug, "audio settle steps=\(steps.map { "\($0.1)@\(($0.0 - steps[0].0) / 1000)us" })\(pieces)\(cut ? " (cut short by a sound)" : "")")
        guard steps.count >= 2 else {
            linked = !steps.isEmpty
            if !linked { log?(.warning, "audio stream took no audio for 1 s (no session manager linked it?) device=\(logValue(deviceName))") }
            return
        }
        let pull = AlsaSink.pull(steps: steps, availMin: availMin, rate: rate)
        if pull > availMin {
            setAvailMin(min(pull, bufferFrames - periodFrames))
            log?(.info, "audio server takes \(pull) frames a cycle; avail_min raised to \(availMin) device=\(logValue(deviceName))")
        }
        pullFrames = max(pull, 1)
    }

    /// What the server takes a cycle, from `settle`'s steps (when the queue shrank, by how much).
    ///
    /// A step larger than `avail_min` is the quantum itself: PipeWire's plugin (0.3.65) then hands
    /// a whole quantum only every other cycle (measured at min-quantum 1024 with `avail_min` 128:
    /// 1024 frames every 42.6 ms, the monitor seeing 1024-frame cycles every 21.3 ms), so the
    /// interval between steps is two cycles and must not be read as one: an `avail_min` of 2048
    /// made the plugin ask for a 2048-frame latency and the graph ran 42.6 ms cycles. Only when
    /// each step is at most `avail_min` does the shortest interval tell a larger cycle (a server
    /// that takes `avail_min` per cycle and plays silence for the rest).
    static func pull(steps: [(UInt64, Int)], availMin: Int, rate: Double) -> Int {
        // The first step may be a plugin moving the whole write into its server (PulseAudio).
        let step = steps.dropFirst().map { $0.1 }.max() ?? availMin
        if quantumSeen(steps: steps, availMin: availMin) { return step }
        // The shortest interval between two steps is one cycle (a longer one may span the
        // graph switching its quantum as this stream joined).
        var shortest = UInt64.max
        for i in 1..<max(steps.count, 1) { shortest = min(shortest, steps[i].0 - steps[i - 1].0) }
        guard shortest != UInt64.max else { return step }
        let cycle = Double(shortest) / 1e9 * rate
        if cycle > Double(step) * 1.4 { return 1 << Int(log2(cycle).rounded()) }
        return step
    }

    /// Steps closer together than this are pieces of one hand-over: half of `avail_min`'s time (the
    /// server's cycles are at least `avail_min` long), at most 1 ms — the pieces come one poll
    /// (0.5 ms) apart, and a wider window would take a late cycle and the next one for a larger
    /// quantum (at 128 frames, cycles 2.67 ms apart would need 1.67 ms of jitter). PipeWire 0.3.65's
    /// plugin at min-quantum 1024 was seen to hand a quantum over in two pieces 0.6 ms apart under
    /// load (640 then 384 frames; 128 then 896): read as steps, the pull was 384 — the queue 384
    /// frames deep against a server taking 1024, and the first click cut at frame 384 with an xrun
    /// (tests/pipewire `MinQuantum1024`, once in ~25 runs; 5 settles of 60 with two busy loops).
    static func pieceGap(availMin: Int, rate: Double) -> UInt64 {
        min(UInt64(Double(max(availMin, 1)) / 2 / rate * 1e9), 1_000_000)
    }

    /// `raw` with every step that came less than `gap` after the one before added to it (the time
    /// of a merged step is its first piece's).
    static func merged(_ raw: [(UInt64, Int)], within gap: UInt64) -> [(UInt64, Int)] {
        var out: [(UInt64, Int)] = []
        var previous: UInt64 = 0
        for (t, frames) in raw {
            if !out.isEmpty && t &- previous < gap { out[out.count - 1].1 += frames } else { out.append((t, frames)) }
            previous = t
        }
        return out
    }

    /// Whether `steps` already tell the pull without waiting for four: a step after the first
    /// larger than `avail_min` is the quantum itself. Smaller steps leave the pull to the shortest
    /// interval, and the first intervals may span the graph switching to this stream's quantum.
    static func quantumSeen(steps: [(UInt64, Int)], availMin: Int) -> Bool {
        let step = steps.dropFirst().map { $0.1 }.max() ?? 0
        return Double(step) > Double(availMin) * 1.4
    }

    func setAvailMin(_ frames: Int) {
        guard let pcm else { return }
        var swp: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&swp) >= 0, let sw = swp else { return }
        defer { snd_pcm_sw_params_free(sw) }
        snd_pcm_sw_params_current(pcm, sw)
        snd_pcm_sw_params_set_avail_min(pcm, sw, snd_pcm_uframes_t(max(frames, 1)))
        if snd_pcm_sw_params(pcm, sw) >= 0 { availMin = frames }
    }

    /// Drops what is queued and leaves the stream prepared: the next `write` starts it again
    /// with the first frame at the head of the queue. A sound server's stream stays connected
    /// (PipeWire's plugin keeps its node running, playing silence), so restarting costs nothing.
    public func standby() -> Bool {
        guard let pcm else { return false }
        var err = bounded(pcm, snd_pcm_prepare)   // PulseAudio's plugin: a new server stream (AlsaBounded)
        if err == -EBUSY {
            // A kernel PCM refuses to prepare while running: drop first.
            snd_pcm_drop(pcm)
            err = snd_pcm_prepare(pcm)
        }
        if err < 0 { return false }
        pacer.reset()
        startCopy.frames = 0
        return true
    }

    /// Drops the queue at once and stops the stream, then `standby`: the next write starts it
    /// afresh. Preparing a PipeWire stream that is still active could cross the plugin's
    /// pointers (its cycle copies from the queue on the server's realtime thread, outside the
    /// lock `prepare` takes); `snd_pcm_drop` first deactivates it, and PipeWire 0.3.65 removes
    /// a deactivated client node from its data loop synchronously (`pw_impl_node_set_active`),
    /// so no cycle runs by the time `prepare` resets the pointers. A stopped stream also leaves
    /// the graph: nothing wakes while idle.
    func dropThenStandby() {
        guard let pcm else { return }
        snd_pcm_drop(pcm)
        _ = standby()
    }

    /// `standby` is supported (the engine lets the queue run out, then calls it).
    public var canStandby: Bool { true }
}
