@preconcurrency import Glibc
import TabBarCore
import TabBarAudio

/// The server's side of audio: the sound bank, the engine and its sink, and the
/// fallback to the null sink when no device can be opened.
final class AudioService {
    var config: ServerConfig { didSet { lastPlayed = nil } }
    var bank: SoundBank
    private(set) var engine: AudioEngine?
    /// Decodes and resamples sounds off the state loop (SoundLoading.swift).
    let loader: SoundLoader
    /// The load running, if any, and what waits for it.
    var load: SoundLoad?
    /// Which device `--audio auto`'s sink plays (real device or null sink meanwhile); nil in the other modes.
    private let fallback: FallbackSink.Status?
    /// The null sink, when it is the sink (captures; its virtual clock under `--clock manual`).
    private(set) var nullSink: NullSink?
    private var startError: String?
    /// The sound `play` found last and how it retriggers (a run of taps plays one click: no
    /// lookup in the bank or the config, no hashing of its name, per click). Forgotten when
    /// the bank or the config is replaced.
    var lastPlayed: (name: String, sound: Sound, retrigger: Retrigger)?
    /// The desktop's sound settings as last read, and whether they apply (DesktopSettings.swift).
    var desktop = DesktopSound() { didSet { desktopSuppression = following ? desktop.suppression(desktopPolicy) : nil } }
    var desktopPolicy = DesktopSoundsPolicy.ignore { didSet { desktopSuppression = following ? desktop.suppression(desktopPolicy) : nil } }
    private var following: Bool { desktopPolicy != .ignore }
    /// Why no sound plays now (the desktop's settings), nil when sounds play.
    private(set) var desktopSuppression: String?
    /// The sound theme `theme:` sounds come from (the desktop's `theme-name` when followed).
    var themeName = "freedesktop"

    /// Which sink is in use, for logs, STATUS= and stats.
    var sinkName: String {
        switch config.audio {
        case .null: return "null"
        case .alsa: return "alsa:\(config.alsaDevice)"
        case .auto:
            guard let f = fallback, f.usingStandin else { return "alsa:\(config.alsaDevice)" }
            return "null (\(f.primaryProblem.isEmpty ? "no sound card" : f.primaryProblem))"
        }
    }

    static let log: AudioLog = { level, message in
        Log.write(Priority(rawValue: Int32(level.rawValue)) ?? .info, message)
    }

    init(config: ServerConfig) {
        self.config = config
        let format = PCMFormat(rate: 48000, channels: 2)
        loader = SoundLoader(gate: Posix.env("TABBARD_TEST_SOUND_GATE"))
        if config.clock == .manual {
            // A harness's clicks are deterministic: every sound is there before the first client.
            bank = SoundBank.load(directories: config.soundDirs, files: config.soundFiles, format: format, log: AudioService.log)
        } else {
            // Sounds arrive as they load (SoundLoading.swift); clients are served meanwhile.
            bank = SoundBank(format: format)
        }
        if config.soundDirs.isEmpty {
            Log.warning("No sounds directory found (looked for Sounds/click.wav); pass --sounds DIR. Sounds are unavailable.")
        }
        var sink: any AudioSink
        switch config.audio {
        case .null:
            let null = AudioService.makeNullSink(config: config, format: format)
            nullSink = null
            sink = null
            fallback = nil
        case .alsa:
            let alsa = AlsaSink(device: config.alsaDevice, format: format, periodFrames: config.periodFrames, log: AudioService.log)
            if let problem = alsa.probe() {
                // Explicitly asked for ALSA: keep it, it retries; sounds answer audio_unavailable meanwhile.
                Log.warning("ALSA device \"\(config.alsaDevice)\" cannot be opened (\(problem)); sounds are unavailable until it can be")
            }
            sink = alsa
            fallback = nil
        case .auto:
            // The real device when it opens, the null sink meanwhile; retried at every sound.
            let alsa = AlsaSink(device: config.alsaDevice, format: format, periodFrames: config.periodFrames, log: AudioService.log)
            let f = FallbackSink(primary: alsa, standin: NullSink(format: format, periodFrames: config.periodFrames), log: AudioService.log)
            fallback = f.status
            sink = f
        }
        let engine = AudioEngine(sink: sink, bank: bank, voices: config.voices,
                                 idleTimeout: nullSink?.clock != nil ? AudioService.manualIdleTimeout : Double(config.idleStopMs) / 1000,
                                 realtimePriority: Int32(config.realtimePriority), log: AudioService.log)
        do {
            try engine.start()
            self.engine = engine
        } catch {
            startError = "\(error)"
            Log.error("Audio engine did not start; sounds are unavailable", ["error": "\(error)"])
        }
        if config.clock == .manual {
            warnAboutSoundMap()
        } else {
            startLoad(progressive: true)
        }
    }

    var reportFD: Int32 { engine?.reportFD ?? -1 }

    func wake() { engine?.wake() }

    /// Clicks queued since the audio thread was last woken, and when it was.
    private var clicksWaiting = 0
    private var lastWakeNs: UInt64 = 0

    /// The audio thread is woken at most once a millisecond, or at once when a quarter of
    /// its command queue waits.
    static let wakeGapNs: UInt64 = 1_000_000
    private var wakeBatch: Int { (engine?.queueCapacity ?? 0) / 4 }

    /// Leaves the audio thread to be woken for the clicks just queued at the end of the loop
    /// turn (`wakeIfDue`), after the turn's replies have left: the thread runs realtime, and on
    /// a shared CPU it would run before the reply to the tap that asked for the click was sent.
    /// Under the manual clock the harness needs the thread settled now, in order with the
    /// replies: then `settle` runs (and wakes it) at once.
    func wakeAfterReplies(clicks: Int = 1, settle: () -> Void) {
        if nullSink?.clock != nil {
            wake()
            settle()
        } else {
            clicksWaiting += clicks
        }
    }

    /// At the end of a loop turn: wakes the audio thread for the clicks that wait, unless it
    /// was woken less than `wakeGapNs` ago and fewer than `wakeBatch` wait. A tap's click goes
    /// at once; only clicks that come faster than one a millisecond wait (for the deadline
    /// `wakeDueNs` gives the loop), so that a burst of requests does not stop the loop once a
    /// turn (docs/PERFORMANCE.md, "One path per method").
    func wakeIfDue(now: UInt64) {
        guard clicksWaiting > 0,
              clicksWaiting >= wakeBatch || now &- lastWakeNs >= AudioService.wakeGapNs else { return }
        clicksWaiting = 0
        lastWakeNs = now
        wake()
    }

    /// When the clicks that wait are to be woken for (the loop's sleep ends then); nil: none wait.
    var wakeDueNs: UInt64? { clicksWaiting > 0 ? lastWakeNs + AudioService.wakeGapNs : nil }

    var statusSummary: String {
        "\(bank.sounds.count) sounds, audio \(sinkName)" + (engine.map { " (\($0.deviceState))" } ?? " (not running)")
    }

    /// Why `play` queued no voice. Its wire error (`error`) is made only where it is sent:
    /// a click the reducer asked for is only counted (and logged at debug level).
    enum Refusal: Error, Equatable {
        case unknownSound(String)
        /// The sound was to be loaded but was not (name, why).
        case notLoaded(String, String)
        case unavailable(String)
        /// Not played because the desktop's sound settings say so (why): answered as such, not an error.
        case suppressed(String)

        var error: RPCError {
            switch self {
            case .unknownSound(let name): return .unknownSound(name)
            case let .notLoaded(name, why): return .soundNotLoaded(name, why)
            case .unavailable(let why), .suppressed(let why): return .audioUnavailable(why)
            }
        }
    }

    /// Queues sound `name`; the audio thread is woken for it by `wakeAfterReplies`, then `wakeIfDue`.
    func play(name: String, gain: Double, requestedAt: UInt64) -> Result<UInt32, Refusal> {
        if let why = desktopSuppression { return .failure(.suppressed(why)) }
        let sound: Sound, retrigger: Retrigger
        if let last = lastPlayed, last.name == name {
            (sound, retrigger) = (last.sound, last.retrigger)
        } else {
            guard let found = bank.sound(named: name) else {
                if let f = bank.failure(named: name) { return .failure(.notLoaded(name, f.reason)) }
                if isPending(name) { return .failure(.notLoaded(name, "it is still loading")) }
                return .failure(.unknownSound(name))
            }
            (sound, retrigger) = (found, config.soundRetrigger[name] ?? .overlap)
            lastPlayed = (name, sound, retrigger)
        }
        guard let engine else { return .failure(.unavailable(startError ?? "the audio engine is not running")) }
        switch engine.play(sound, gain: Float(gain), requestedAt: requestedAt,
                           retrigger: retrigger, wake: false) {
        case .started(let voice): return .success(voice)
        case .unavailable(let why): return .failure(.unavailable(why))
        }
    }

    /// Hands each voice that started to `played`, each accepted voice that was not heard
    /// intact to `failed` (voice, name, reason: wire `sound.failed`); `played` gets the start frame too.
    func drainReports(_ played: (UInt32, String, Int64) -> Void, failed: (UInt32, String, String) -> Void) {
        engine?.drainReports(played: played, failed: failed)
    }

    /// `sound.list`'s loaded sounds: `frames`/`rate`/`channels` describe the file as given,
    /// `device` what it was converted to at load.
    func soundList() -> [JSON] {
        bank.sounds.map { s in
            let src = s.sourceFormat
            return .obj(["name": .string(s.name), "frames": .int(s.sourceFrames), "rate": .int(src.rate),
                         "channels": .int(src.channels), "source": .string(s.source),
                         "device": .obj(["frames": .int(s.frames), "rate": .int(s.rate), "channels": .int(s.channels)])])
        }
    }

    /// `sound.list`'s `failed`: each sound (or directory) that did not load, and why.
    func failedList() -> [JSON] {
        bank.failures.map { f in
            var m: [JSON.Member] = []
            if let n = f.name { m.append(JSON.Member("name", .string(n))) }
            m.append(JSON.Member("source", .string(f.path)))
            m.append(JSON.Member("reason", .string(f.reason)))
            return .object(m)
        }
    }

    func statsJSON() -> JSON {
        var m: [JSON.Member] = [JSON.Member("sink", .string(sinkName)), JSON.Member("sounds", .int(bank.sounds.count))]
        if let engine {
            m.append(JSON.Member("state", .string(engine.deviceState)))
            m.append(JSON.Member("engine", engine.statsJSON()))
        } else {
            m.append(JSON.Member("state", .string("unavailable: \(startError ?? "not started")")))
        }
        m.append(JSON.Member("desktop", .obj([
            "policy": .string(desktopPolicy.rawValue), "event_sounds": .bool(desktop.eventSounds),
            "input_feedback_sounds": .bool(desktop.inputFeedbackSounds), "theme": .string(themeName),
            "suppressed": .optional(desktopSuppression)])))
        return .object(m)
    }

    func shutdown() {
        loader.cancel()
        engine?.shutdown()
    }
}
