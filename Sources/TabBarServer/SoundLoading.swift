@preconcurrency import Glibc
import TabBarCore
import TabBarAudio

// Sounds are decoded and resampled on the loader's thread (`SoundLoader`), never on the state
// loop. The loop polls the loader's eventfd like its other wake sources and alone swaps what
// it posts into `AudioService.bank`:
//
// - start-up: clients are served from the first turn; each sound is added as it is ready
//   (those `sound_map` names first, then the smaller files). A click, or a `sound.play`, of a
//   sound still to come waits for it; a click that would sound more than `lateClickNs` after
//   its touch is dropped (counted in `sounds_failed`).
// - `sound.reload` and SIGHUP: the old bank plays until the new one is whole, then the new one
//   is swapped in at once. The connection that asked is held (not read) until then, so its
//   replies stay in request order; every other connection is served meanwhile.

/// A load in progress and what waits for it.
struct SoundLoad {
    /// Start-up's: sounds are added to the bank as they come.
    var progressive: Bool
    /// The names the load will still post (nil: not listed yet, so any name may come).
    var pending: Set<String>?
    /// Start-up plays waiting for their sound.
    var waiting: [(name: String, run: () -> Void)] = []
    /// Told, on the loop, once the bank is in.
    var done: [([SoundFailure]) -> Void] = []
    /// Reloads asked for while this load ran: one more load after it.
    var again: [([SoundFailure]) -> Void]?
    let startedNs = MonotonicClock.nanoseconds()
}

/// A line read from a held connection, kept until its turn (`Connection.heldLines`).
enum HeldLine {
    case line([UInt8], readNs: UInt64)
    case tooLong(readNs: UInt64)
}

extension AudioService {
    /// A click whose sound arrives later than this after its touch is not played.
    static let lateClickNs: UInt64 = 1_000_000_000

    var loadFD: Int32 { loader.fd }

    /// Starts a load on the loader's thread.
    func startLoad(progressive: Bool, done: [([SoundFailure]) -> Void] = []) {
        var first: Set<String> = ["click"]
        let m = config.soundMap
        for n in [m.select, m.reselect, m.action, m.center, m.badge, m.visibility] { if let n { first.insert(n) } }
        load = SoundLoad(progressive: progressive, done: done)
        if !loader.start(directories: config.soundDirs, files: config.soundFiles, theme: SoundTheme(name: themeName), format: bank.format, first: first,
                         progressive: progressive, log: AudioService.log) {
            Log.warning("Cannot start the sound-loading thread; loading the sounds on the state loop")
            finish(with: SoundBank.load(directories: config.soundDirs, files: config.soundFiles, theme: SoundTheme(name: themeName), format: bank.format, log: AudioService.log))
        }
    }

    /// Whether `name` may still arrive in the start-up load.
    func isPending(_ name: String) -> Bool {
        guard let load, load.progressive else { return false }
        return load.pending?.contains(name) ?? true
    }

    /// Runs `action` on the loop once `name` has arrived or failed (start-up only).
    func whenLoaded(_ name: String, _ action: @escaping () -> Void) {
        load?.waiting.append((name, action))
    }

    /// Re-reads the sounds off the loop; `done` is told (on the loop) once the new bank is in.
    /// Asked while a load runs, one more load follows it (the files may have changed since it began).
    func reload(then done: @escaping ([SoundFailure]) -> Void) {
        if load != nil {
            load!.again = (load!.again ?? []) + [done]
            return
        }
        startLoad(progressive: false, done: [done])
    }

    /// The loader's eventfd is readable: takes what it posted.
    func applyLoaded() {
        let updates = loader.take()
        guard load != nil else { return }
        var added: [Sound] = [], failed: [SoundFailure] = []
        for u in updates {
            switch u {
            case .planned(let names):
                load!.pending = Set(names).subtracting(added.map(\.name)).subtracting(failed.compactMap(\.name))
            case .loaded(let s):
                added.append(s)
                load!.pending?.remove(s.name)
            case .failed(let f):
                failed.append(f)
                if let n = f.name { load!.pending?.remove(n) }
            case .finished(let fresh):
                finish(with: fresh)
                return
            }
        }
        guard !added.isEmpty || !failed.isEmpty else { return }
        replace(bank.adding(added, failures: failed))
        let waiting = load!.waiting
        let ready = waiting.filter { !isPending($0.name) }
        load!.waiting = waiting.filter { isPending($0.name) }
        for w in ready { w.run() }
    }

    private func replace(_ fresh: SoundBank) {
        // (At start-up the old bank's sounds are all in the new one: nothing to free.)
        let old = load?.progressive == true ? nil : SoundLoader.Parcel(bank)
        bank = fresh
        lastPlayed = nil
        engine?.replaceBank(fresh)
        if let old { SoundLoader.dispose(old) }
    }

    /// The whole bank is in: swapped in, everything waiting told.
    private func finish(with fresh: SoundBank) {
        guard let finished = load else { return }
        let t0 = MonotonicClock.nanoseconds()
        replace(fresh)
        load = nil
        let t1 = MonotonicClock.nanoseconds()
        // ms: the whole load; swap_us: what the swap cost the loop.
        Log.notice(finished.progressive ? "Sounds loaded" : "Sounds reloaded",
                   ["sounds": String(fresh.sounds.count), "failed": String(fresh.failures.count),
                    "ms": String((t1 - finished.startedNs) / 1_000_000), "swap_us": String((t1 - t0) / 1000)])
        warnAboutSoundMap()
        for w in finished.waiting { w.run() }
        for d in finished.done { d(fresh.failures) }
        if let again = finished.again { startLoad(progressive: false, done: again) }
    }

    /// One warning per `sound_map` key whose sound is not in the bank.
    func warnAboutSoundMap() {
        let m = config.soundMap
        for (kind, name) in [("select", m.select), ("reselect", m.reselect), ("action", m.action), ("center", m.center),
                             ("badge", m.badge), ("visibility", m.visibility)] {
            guard let name, bank.sound(named: name) == nil else { continue }
            if let f = bank.failure(named: name) {
                Log.warning("A sound sound_map names did not load; those events are silent", ["key": "sound_map.\(kind)", "sound": name, "reason": f.reason])
            } else {
                Log.warning("sound_map names a sound that does not exist; those events are silent", ["key": "sound_map.\(kind)", "sound": name])
            }
        }
    }
}

extension Server {
    /// A server method that waits for the sounds: `sound.reload`, and at start-up a
    /// `sound.play` of a sound still loading. `c` is held until it is answered. False: serve it now.
    func holdIfWaiting(_ command: ServerCommand, from c: Connection, id: RequestID, readNs: UInt64) -> Bool {
        switch command {
        case .soundReload:
            hold(c)
            audio.reload { [self] failures in answerHeld(c, id: id, readNs: readNs, .success(.json(Server.reloadReply(audio.bank.sounds.count, failures)))) }
            return true
        case .soundPlay(let name) where audio.bank.sound(named: name) == nil && audio.isPending(name):
            hold(c)
            audio.whenLoaded(name) { [self] in answerHeld(c, id: id, readNs: readNs, serve(.soundPlay(name), from: c, readNs: readNs)) }
            return true
        default:
            return false
        }
    }

    static func reloadReply(_ sounds: Int, _ failures: [SoundFailure]) -> JSON {
        .obj(["sounds": .int(sounds), "failures": .array(failures.map { f in
            var m = [JSON.Member("source", .string(f.path)), JSON.Member("reason", .string(f.reason))]
            if let n = f.name { m.append(JSON.Member("name", .string(n))) }
            return .object(m)
        })])
    }

    /// A reducer's click whose sound is still loading: played when it arrives, unless that is too late to be feedback.
    func playWhenLoaded(_ name: String, gain: Double, requestedAt: UInt64) {
        audio.whenLoaded(name) { [self] in
            let now = MonotonicClock.nanoseconds()
            guard now - requestedAt <= AudioService.lateClickNs,
                  case .success = audio.play(name: name, gain: gain, requestedAt: requestedAt) else {
                stats.soundsFailed += 1
                return
            }
            stats.soundsPlayed += 1
            audio.wakeAfterReplies { settleAudio(queued: true) }
        }
    }

    /// Stops reading `c` until `answerHeld`.
    func hold(_ c: Connection) {
        c.held = true
        loop.rewatch(c)
    }

    /// Queues the held request's reply, then handles the lines `c` sent after it, in order.
    func answerHeld(_ c: Connection, id: RequestID, readNs: UInt64, _ result: Result<Reply, RPCError>) {
        guard !c.closed else { return }
        transport.queueReply(to: c, id: id, result, readNs: readNs, now: MonotonicClock.nanoseconds())
        c.held = false
        while !c.held && !c.closed && !c.heldLines.isEmpty {
            switch c.heldLines.removeFirst() {
            case let .line(bytes, readNs): bytes.withUnsafeBufferPointer { received(.line($0), from: c, readNs: readNs) }
            case let .tooLong(readNs): received(.tooLong, from: c, readNs: readNs)
            }
        }
        if !c.closed && !c.held { loop.rewatch(c) }
        transport.markDirty(c)
    }

    /// A line from a held connection waits its turn.
    func keepHeld(_ line: LineFramer.Line, from c: Connection, readNs: UInt64) {
        switch line {
        case .line(let bytes): c.heldLines.append(.line(Array(bytes), readNs: readNs))
        case .tooLong: c.heldLines.append(.tooLong(readNs: readNs))
        }
    }
}
