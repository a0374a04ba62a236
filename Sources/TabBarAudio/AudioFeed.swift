import Glibc

/// The running stream: how much is queued, when the queue is dropped, what is written.
///
/// The queue is kept at what the device takes at once (`RunState.pull`, learned from how the
/// queue shrinks; a sound server takes one quantum a cycle) plus one period, no more: a voice
/// that arrives while others sound waits behind at most that, or behind the rest of a short
/// sound written whole (`AudioEngine.wholeSoundSeconds`). Once the last voice has left
/// the queue, the silence behind it is dropped (`AudioSink.standby`), so a new voice is the
/// next thing the device takes — in steady use as after idle.
extension AudioRenderer {
    /// One step of the running stream: write what is due, or sleep until it is.
    func runOnce() throws -> Step {
        let period = sink.periodFrames
        let clock = sink.clockPaced
        takeCommands()
        let queued = try sink.queuedFrames()
        let now = monotonicNanos()
        counters.wakeups.add(1, ordering: .relaxed)
        let lastLookQueued = run.lastQueued
        if queued < run.lastQueued {
            run.progressAt = now
            run.everProgressed = true
            if !clock {
                run.runMaxStep = max(run.runMaxStep, run.lastQueued - queued)
                run.steps += 1
            }
        }
        run.lastQueued = queued
        let played = streamFrames - Int64(queued)
        watchServerCycles(queued: queued, played: played)
        releasePlayed(upTo: played)

        var hasNew = false, sounding = false, newFrames = 0
        for v in mixer.voices where v.active {
            if v.reported { sounding = true } else { hasNew = true; newFrames = max(newFrames, v.frames - v.pos) }
        }
        // Only silence would follow the last voice: write none and let the queue run out (its
        // underrun is expected: counted apart, not as damage), then drop into standby — the
        // next voice is then the first thing the device takes.
        let draining = !sounding && sink.canStandby && played >= run.audibleEnd
        if draining {
            if sink.xruns != run.xruns {
                // Expected, not damage: counted apart, with what was queued at the last look (a
                // recovery that dropped a voice unheard would show audible frames there).
                counters.runOutXruns.add(sink.xruns - run.xruns, ordering: .relaxed)
                let audibleQueued = max(run.audibleEnd - (streamFrames - Int64(lastLookQueued)), 0)
                log(.debug, "audio stream ran out after its last voice: \(lastLookQueued) frames queued at the last look, \(audibleQueued) of them audible")
                run.xruns = sink.xruns
            }
            // A PCM that never reports an empty queue (PulseAudio's plugin keeps a few frames
            // in hand) counts as run out once those stay put for two pulls.
            if queued != run.drainQueued { run.drainQueued = queued; run.drainSince = now }
            let rate = UInt64(max(sink.format.rate, 1))
            let stuck = queued <= period && now &- run.drainSince > UInt64(2 * max(run.pull, period)) * 1_000_000_000 / rate
            if !hasNew && (queued == 0 || stuck || run.audibleEnd == 0) {
                if sink.standby() {
                    confirmHeard()
                    streamFrames = played
                    run.lastQueued = 0
                    run.progressAt = now
                    run.silentSince = now
                    return .standby
                }
                failUnconfirmed()     // the next stream was not made ready (the device fails next)
            }
        } else {
            checkXruns(played: played)
        }
        // Sounds wait but the device takes nothing: a stalled stream (or one nobody linked).
        if sink.detectsStalls && (hasNew || sounding || queued > 0) {
            let rate = UInt64(max(sink.format.rate, 1))
            let limit = run.everProgressed
                ? max(UInt64(8 * max(run.pull, period)) * 1_000_000_000 / rate, 250_000_000)
                : 1_500_000_000
            if now &- run.progressAt > limit { return .stalled }
        }

        let target = max(run.pull, period) + period + sink.refillMarginFrames
        let urgentChunk = max(min(period / 4, 64), 1)
        let wholeFrames = Int(AudioEngine.wholeSoundSeconds * Double(sink.format.rate))
        let free = sink.bufferFrames - queued
        if free > 0 && (hasNew || (!draining && queued < target)) {
            var n = max(target - queued, 0)
            if hasNew { n = max(n, urgentChunk, newFrames <= wholeFrames ? newFrames : 0) }
            n = min(n, free)
            if n > 0 {
                try renderAndWrite(frames: n, queued: queued)
                run.lastQueued = queued + n
                return .running(monotonicNanos())
            }
        }
        // A device-paced stream shrinks in steps (a server's cycle): look again twice a step.
        let step = max(min(run.pull, period) / 2, 16)
        let recheck: UInt64? = clock ? nil : UInt64(step) * 1_000_000_000 / UInt64(max(sink.format.rate, 1))
        let woken = try sink.wait(lowWater: draining ? 0 : target - period, wakeFD: wakeFD, timeoutNanos: recheck)
        if woken { resetWake() }
        return .running(monotonicNanos())
    }

    /// Mixes `frames` frames and writes them; reports voices that start in them.
    func renderAndWrite(frames: Int, queued: Int) throws {
        guard frames > 0 else { return }
        ensureMixCapacity(frames)
        var nStarts = 0
        let audible = mixer.activeCount > 0
        for i in mixer.voices.indices where mixer.voices[i].active && !mixer.voices[i].reported {
            mixer.voices[i].reported = true
            mixer.voices[i].startFrame = streamFrames
            let v = mixer.voices[i]
            if nStarts < starts.count, let s = v.sound {
                starts[nStarts] = (s, v.id, v.requestedAt)
                nStarts += 1
            }
        }
        var nEnds = 0
        let endsBuf = ends
        mixer.render(into: mixBuffer, frames: frames, master: masterGain) { v in
            if let s = v.sound {
                if nEnds < endsBuf.count { endsBuf[nEnds] = (s, v.id, v.failed ? AudioRenderer.reportedStart : v.startFrame); nEnds += 1 } else { s.release() }
            }
        }
        for i in 0..<nStarts {
            let (s, id, _) = starts[i]
            let v = mixer.voices.first { $0.id == id }
            sink.voiceStarted(VoiceRecord(voice: id, name: s.takeUnretainedValue().name, start: streamFrames,
                                          frames: s.takeUnretainedValue().frames, gain: (v?.gain ?? 1) * masterGain))
        }
        let t = monotonicNanos()
        let xrunsBefore = sink.xruns
        do { try sink.write(mixBuffer, frames: frames) } catch { lostByWrite(nEnds: nEnds); throw error }
        if sink.xruns != xrunsBefore { cutByWrite(nStarts: nStarts, nEnds: nEnds) }
        // What is still ahead of this chunk's first frame, the server's delay included (read
        // after the write: a stream just started only then counts what its cycle still plays).
        let ahead = nStarts > 0 ? max(((try? sink.delayFrames()) ?? (queued + frames)) - frames, 0) : 0
        streamFrames += Int64(frames)
        if audible { run.audibleEnd = streamFrames }
        counters.chunks.add(1, ordering: .relaxed)
        counters.frames.add(frames, ordering: .relaxed)
        let rate = UInt64(max(sink.format.rate, 1))
        var pushed = false
        for i in 0..<nStarts {
            let (s, id, requestedAt) = starts[i]
            _ = s.retain()
            let latency = t > requestedAt ? t - requestedAt : 0
            let atSink = latency + UInt64(max(ahead, 0)) * 1_000_000_000 / rate
            if reports.push(RawReport(kind: .started, sound: s, voice: id, latencyNs: latency, framesAhead: queued,
                                      startFrame: streamFrames - Int64(frames), sinkLatencyNs: atSink)) {
                pushed = true
            } else {
                s.release()
                counters.reportsDropped.add(1, ordering: .relaxed)
            }
            counters.played.add(1, ordering: .relaxed)
        }
        for i in 0..<nEnds { keepUntilPlayed(ends[i].0, voice: ends[i].1, end: streamFrames, start: ends[i].2); pushed = true }
        if pushed { signalReports() }
    }

    /// The write itself met an underrun (the sink recovered it and wrote the chunk after it):
    /// every voice that had sounded before this chunk now has a hole — including one that
    /// ended in it, which no later look sees as sounding. Each is reported failed, and the
    /// xrun is counted now (the drain that may follow takes its underruns as the expected
    /// run-out and would swallow this one). Voices that start in the chunk are intact.
    func cutByWrite(nStarts: Int, nEnds: Int) {
        func startedHere(_ id: UInt32) -> Bool {
            for k in 0..<nStarts where starts[k].1 == id { return true }
            return false
        }
        for i in mixer.voices.indices where mixer.voices[i].active && mixer.voices[i].reported
            && !startedHere(mixer.voices[i].id) {
            failVoice(i, .xrun)
        }
        for k in 0..<nEnds where !startedHere(ends[k].1) {
            _ = ends[k].0.retain()
            pushFailure(ends[k].0, voice: ends[k].1, .xrun)
        }
        publishXruns()
        queueMoreAfterXrun()
        signalReports()
    }

    /// The write failed (the device is gone; the engine closes it next): nothing of this chunk
    /// was written. A voice that ended in it no longer sounds and was not kept until played, so
    /// closing would not see it: it is reported here. (Voices still sounding are reported by
    /// the close.)
    func lostByWrite(nEnds: Int) {
        for k in 0..<nEnds {
            _ = ends[k].0.retain()
            pushFailure(ends[k].0, voice: ends[k].1, .deviceLost)
            finishedReport(ends[k].0)
        }
        if nEnds > 0 { signalReports() }
    }

    /// Keeps a voice that was fully written until the device has played it.
    func keepUntilPlayed(_ s: Unmanaged<Sound>, voice: UInt32, end: Int64, start: Int64) {
        if tailCount == tail.count {
            finishedReport(tail[0].0)
            for i in 1..<tailCount { tail[i - 1] = tail[i] }
            tailCount -= 1
        }
        tail[tailCount] = (s, voice, end, start)
        tailCount += 1
    }

    /// Releases the voices the device has played (their last frame is behind `played`).
    func releasePlayed(upTo played: Int64) {
        var kept = 0
        for i in 0..<tailCount {
            if tail[i].2 <= played { released(tail[i].0, voice: tail[i].1) } else { tail[kept] = tail[i]; kept += 1 }
        }
        if kept != tailCount { tailCount = kept; signalReports() }
    }

    /// The device went away with these voices still queued: each is reported failed.
    func failUnplayed(_ why: VoiceFailure) {
        for i in 0..<tailCount {
            let (s, voice, _, _) = tail[i]
            _ = s.retain()
            pushFailure(s, voice: voice, why)
            finishedReport(s)
        }
        tailCount = 0
    }
}
