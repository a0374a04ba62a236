/// Voices a sound server took but is not known to have played (PulseAudio's ALSA plugin).
///
/// Through PulseAudio's plugin the PCM counts frames as played once the server has *asked* for
/// them, into its own buffer ahead of its graph. When the session manager dies as a click is in
/// flight, pipewire-pulse can go on taking the stream's data into a node nobody links: the
/// frames leave the PCM's queue and `snd_pcm_delay` falls to 0 as if they had played, while
/// nothing reaches a sink (docs/DESKTOP.md, "PulseAudio's ALSA plugin", "What is left" (4)). What
/// does tell is the next stream: every standby there makes a new server stream, which the
/// server makes ready only once a session manager has linked it. So a voice released as played
/// waits here until the next stream is ready (`confirmHeard`), and is reported — "may not
/// have been heard" — when that stream is not (`failUnconfirmed`), or the device fails first.
extension AudioRenderer {
    /// A voice the device has taken whole: finished now, or kept until the next stream
    /// confirms it where the sink says standby does (`AudioSink.standbyConfirmsLink`).
    func released(_ s: Unmanaged<Sound>, voice: UInt32) {
        guard sink.standbyConfirmsLink else { finishedReport(s); return }
        if unconfirmedCount == unconfirmed.count {
            finishedReport(unconfirmed[0].0)
            for i in 1..<unconfirmedCount { unconfirmed[i - 1] = unconfirmed[i] }
            unconfirmedCount -= 1
        }
        unconfirmed[unconfirmedCount] = (s, voice)
        unconfirmedCount += 1
    }

    /// The next stream is ready (a session manager linked it), or the stream ended without a
    /// failure: the voices taken before it count as heard.
    func confirmHeard() {
        for i in 0..<unconfirmedCount { finishedReport(unconfirmed[i].0) }
        unconfirmedCount = 0
    }

    /// The next stream was not made ready, or the device failed: each voice taken since the
    /// last confirmation is reported.
    func failUnconfirmed() {
        guard unconfirmedCount > 0 else { return }
        for i in 0..<unconfirmedCount {
            let (s, voice) = unconfirmed[i]
            _ = s.retain()
            pushFailure(s, voice: voice, .unconfirmed)
            finishedReport(s)
        }
        unconfirmedCount = 0
        signalReports()
    }
}
