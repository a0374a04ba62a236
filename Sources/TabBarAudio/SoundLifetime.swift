import Synchronization

/// How a sound outlives every voice of it without a retain or a release per click.
///
/// A click hands the audio thread an unretained pointer to its `Sound` (`PlayCommand`), and the
/// audio thread hands it back unretained in the voice's reports (`RawReport`). What keeps the
/// sound alive is the state loop's `KeptSounds`: a strong reference to every sound `play` was
/// given, with the number of the last voice that carried it (voice numbers rise with every
/// `play`). The audio thread publishes `oldestHeld`: the number of the oldest voice it still
/// holds (in the pool, written but not yet played, or taken but not yet confirmed heard), or,
/// holding none, one past the last voice it took. A sound whose last voice is older than that
/// is used by the audio thread no more, and once the reports pushed before it are drained, by
/// nobody: the state loop may let it go.
///
/// It lets go only of sounds the current bank does not hold (a replaced bank's, or a sound a
/// caller made): the bank holds the others anyway, so the sound a run of taps plays stays kept,
/// and `play` finds it first (`hot`) with one comparison of pointers.
///
/// Ordering (the memory model):
/// - `play` keeps the sound *before* it pushes the command; the push's release store of the
///   ring's tail publishes the command, so the audio thread never sees a sound not yet kept.
/// - The audio thread pushes a voice's reports (release store of the reports ring's tail)
///   while it still holds the voice, hence before any `oldestHeld` past it (a release store
///   in program order after the push).
/// - `drainReports` loads `oldestHeld` with acquiring ordering *before* it pops: every report
///   pushed before that value was stored is then visible to its pops (the acquire
///   synchronises with the release store; the ring's tail, stored earlier, reads at least as
///   new). It lets go of sounds only after the pops, and only of those whose last voice is
///   older than the value loaded first: no report still in the ring, and no voice the audio
///   thread holds or will take, names them.
/// - Voice numbers wrap (UInt32): "older" is serial-number order (`isBefore`), right while
///   fewer than 2^31 voices separate the two, far beyond what the pool and queues hold.
struct KeptSounds {
    struct Entry {
        let sound: Sound
        /// The last voice that carried it (the number `play` gave; for the entry `hot`, written
        /// only when another becomes hot: `play`'s last voice is then its last, or later).
        var lastVoice: UInt32
        /// Whether the bank held it when it was kept or last replaced (then it is never let go).
        var inBank: Bool
    }
    private(set) var entries: [Entry] = []
    /// The entry `play` used last (`entries.count`: none).
    private var hot = 0
    /// Entries the bank does not hold (to let go once the audio thread has).
    private(set) var loose = 0

    /// Whether the entry `play` used last is `sound`'s.
    @inline(__always)
    func isHot(_ sound: Sound) -> Bool {
        hot < entries.count && entries[hot].sound === sound
    }

    /// The entry for `sound`, kept now if it was not (the bank decides whether it may go); it
    /// becomes hot. `lastVoice` is the last voice `play` queued (the hot one's last, or later;
    /// older than any voice of `sound` to come).
    mutating func keep(_ sound: Sound, bank: SoundBank, lastVoice: UInt32) {
        if hot < entries.count { entries[hot].lastVoice = lastVoice }
        if let i = entries.firstIndex(where: { $0.sound === sound }) {
            hot = i
            return
        }
        let inBank = bank.sound(named: sound.name) === sound
        entries.append(Entry(sound: sound, lastVoice: lastVoice, inBank: inBank))
        if !inBank { loose += 1 }
        hot = entries.count - 1
    }

    /// The bank was replaced: sounds it does not hold may go once the audio thread let go of them.
    mutating func rebank(_ bank: SoundBank) {
        loose = 0
        for i in entries.indices {
            entries[i].inBank = bank.sound(named: entries[i].sound.name) === entries[i].sound
            if !entries[i].inBank { loose += 1 }
        }
    }

    /// Lets go of the sounds the bank does not hold whose last voice is older than `oldestHeld`
    /// (loaded before the reports that name them were drained); `lastVoice` is `play`'s last.
    mutating func letGo(before oldestHeld: UInt32, lastVoice: UInt32) {
        guard loose > 0 else { return }
        let hotSound = hot < entries.count ? ObjectIdentifier(entries[hot].sound) : nil
        if hot < entries.count { entries[hot].lastVoice = lastVoice }
        let before = entries.count
        entries.removeAll { !$0.inBank && isBefore($0.lastVoice, oldestHeld) }
        loose -= before - entries.count
        hot = entries.firstIndex { ObjectIdentifier($0.sound) == hotSound } ?? entries.count
    }
}

/// Serial-number order of voice numbers (they wrap).
@inline(__always)
func isBefore(_ a: UInt32, _ b: UInt32) -> Bool { Int32(bitPattern: a &- b) < 0 }

extension AudioEngine {
    /// Publishes the oldest voice the audio thread holds (audio thread; see `KeptSounds`).
    /// Called where nothing is held outside the pool, `tail` and `unconfirmed`: the top of
    /// the thread's loop, and its end. Signals the state loop when the value moved and the
    /// state loop has sounds waiting to go (`looseSounds`).
    func publishOldestHeld() {
        var oldest = lastTaken &+ 1
        for v in mixer.voices where v.sound != nil && isBefore(v.id, oldest) { oldest = v.id }
        for i in 0..<tailCount where isBefore(tail[i].1, oldest) { oldest = tail[i].1 }
        for i in 0..<unconfirmedCount where isBefore(unconfirmed[i].1, oldest) { oldest = unconfirmed[i].1 }
        guard oldest != oldestHeld.load(ordering: .relaxed) else { return }
        oldestHeld.store(oldest, ordering: .releasing)
        if looseSounds.load(ordering: .relaxed) { signalReports() }
    }
}
