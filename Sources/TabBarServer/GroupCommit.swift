@preconcurrency import Glibc
import TabBarCore

/// State changes and the group commit: every change of a loop turn, from any number of
/// clients, is written to the journal with one write before anything of it leaves the
/// process. Until then its replies and events stay staged, typed, in the `Batch`; only a
/// successful write encodes them into the connections' queues. A failed write answers
/// `storage_failed` to exactly the group's requests, and nothing queued is ever parsed or
/// taken back.
extension Server {
    /// Runs a state command through the reducer at the loop's clock: a client's at the time
    /// its line was read (`Workspace.lineReadNs`), a timer's now. A change is staged:
    /// its journal line (the request's params as given — `params` — or what the outcome
    /// records instead), its events and its reply; `commitBatch` writes it at the end of
    /// the loop turn for a client's request (`flushDirty`), at once for a timer's (`c` nil).
    /// A command that changes nothing is answered at once, after what is staged.
    /// `method` is the method's index in `Methods.all` (nil: a timer's `timer.fired`); its
    /// quoted name is taken only for a journal line that records the params as given (a
    /// copy of it passed in was a reference counted and released for every request).
    func apply(_ command: consuming StateCommand, method: Int?, params: JSONValue?, id: consuming RequestID?, from c: Connection?) {
        // The state before the group's first change is kept for an undo; later changes of an
        // open group need no copy (a copy counts a reference for each of its arrays and strings).
        var opening = !batch.open
        if opening { batch.keep(state: reducer.state) }
        var seqBefore = reducer.state.seq
        // (Events nobody will encode are only counted: `Outcome.wantsEvents`. No one can
        // subscribe before this group is committed: `subscribe` commits it first.)
        work.outcome.wantsEvents = !clients.subscribers.isEmpty
        // (The read time is never before a timer's step: lines are read before the loop
        // turn's timers fire, and those framed after them are stamped then: Clients.swift.)
        let now = c == nil ? nowMs() : timers.clock.ms(readAt: work.lineReadNs)
        reducer.reduce(command, at: now, into: &work.outcome)
        if reducer.state.seq == seqBefore && batch.open && !commitBatch() {
            // An answer that changes nothing must not rest on changes that were just undone.
            opening = true
            batch.keep(state: reducer.state)
            seqBefore = reducer.state.seq
            reducer.reduce(command, at: now, into: &work.outcome)
        }
        _ = consume command  // (done with: destroyed here, as its own type)
        guard reducer.state.seq != seqBefore else {
            run(&work.outcome.effects)
            if let c { answer(id: id, work.outcome.reply, to: c) }
            return
        }
        if opening { batch.join() }
        let seq = reducer.state.seq
        store.stage(seq: seq) { line in
            if let entry = work.outcome.takeJournal() {  // (moved, not copied)
                Persistence.journalLine(seq: seq, entry, into: &line)
            } else {
                let raw = params?.raw
                work.journalName(method) { Persistence.journalLine(seq: seq, method: $0, params: raw, into: &line) }
            }
        }
        // (Moved, not copied: the outcome is reset for the next command.)
        work.outcome.effects.drain { batch.append($0) }
        work.outcome.events.drain { batch.stage($0) }
        batch.unbuiltEvents &+= work.outcome.unbuiltEvents
        guard c != nil else {
            batch.count += 1
            commitBatch()
            return
        }
        batch.count += 1
        batch.clientChanges += 1
        if let id = id.take() {
            // (Moved, not copied: the outcome is reset next.)
            batch.stage(Batch.Answer(id: id, result: work.outcome.takeReply(), eventsBefore: batch.events.count),
                        to: .passUnretained(c.unsafelyUnwrapped), readNs: work.lineReadNs)
        }
    }

    /// Writes the staged changes to the journal with one write; then encodes their events
    /// and replies, in order, into the queues and runs their effects. If the write fails
    /// they are undone — nothing of them has left the process: the state is restored, the
    /// events are dropped, and each request is answered `storage_failed` instead. Returns
    /// false when it undid them.
    @discardableResult
    func commitBatch() -> Bool {
        guard batch.open else { return true }
        do {
            try store.commitReachable(before: batch.stateBefore, after: reducer.state, limits: reducer.limits)
        } catch {
            reducer.state = batch.stateBefore
            peerLogs.write(.journal, .error, "Could not record \(batch.count == 1 ? "a change" : "\(batch.count) changes"); refused",
                           ["error": "\(error)", "file": store.journalPath], nowNs: MonotonicClock.nanoseconds())
            let refused = storageFailed("\(error)")
            let queuedNs = MonotonicClock.nanoseconds()
            for run in 0..<batch.runs.count {
                let (c, readNs, answers) = batch.run(run)
                guard !c.closed else { continue }
                for k in answers { c.queueReply(id: batch.answers[k].id, .failure(refused)) }
                stats.handling.record(queuedNs &- readNs, count: answers.count)
            }
            stats.errors += batch.clientChanges
            batch.close()
            return false
        }
        batch.publishing = true
        // In order: each answer after the events staged before it. (Moved out: publishing
        // costs no copy.) Their latency ends here, where their replies are queued (the same
        // for a run's answers: recorded once for all of them).
        let queuedNs = MonotonicClock.nanoseconds()
        var e = 0
        for run in 0..<batch.runs.count {
            let (c, readNs, answers) = batch.run(run)
            var queued = 0
            for k in answers {
                let (id, result, eventsBefore) = batch.answers.take(k).parts()
                while e < eventsBefore {
                    broadcast(batch.events.take(e))
                    e += 1
                }
                guard !c.closed else { continue }
                if case .failure = result { stats.errors += 1 }
                c.queueReply(id: id, consume result)  // (its reading marked it for flushing)
                queued += 1
            }
            stats.handling.record(queuedNs &- readNs, count: queued)
        }
        while e < batch.events.count {
            broadcast(batch.events.take(e))
            e += 1
        }
        stats.events += batch.unbuiltEvents
        batch.publishing = false
        run(batch.closeTakingEffects())
        return true
    }

    /// Runs a committed group's effects. Its sounds are queued first and the audio thread is
    /// woken once for all of them (a pipelined burst of taps: one wake-up, not one per click),
    /// once the loop turn's replies are sent (`AudioService.wakeAfterReplies`). They are
    /// moved out (not copied): `effects` is left empty, with its memory.
    func run(_ effects: MoveList<Effect>) {
        var played = false
        for k in 0..<effects.count { run(effects.take(k), played: &played) }
        effects.forgetTaken()
        if played { audio.wakeAfterReplies { settleAudio(queued: true) } }
    }

    /// `run` of the effects of a step that changed nothing (not staged: run at once).
    func run(_ effects: inout [Effect]) {
        var played = false
        effects.drain { run($0, played: &played) }
        if played { audio.wakeAfterReplies { settleAudio(queued: true) } }
    }

    /// Runs one effect (a sound is queued, not yet woken for: `played`).
    private func run(_ effect: consuming Effect, played: inout Bool) {
        switch consume effect {
        case let .play(name, gain, _):
            switch audio.play(name: name, gain: gain, requestedAt: work.lineReadNs, wake: false) {
            case .success:
                stats.soundsPlayed += 1
                played = true
            case .failure(let e):
                stats.soundsFailed += 1
                peerLogs.write(.feedback, .debug, "Feedback sound not played", ["sound": name, "reason": e.error.message], nowNs: MonotonicClock.nanoseconds())
            }
        case let .timer(key, atMs):
            timers.set(key, atMs: atMs)
        case let .cancelTimer(key):
            timers.cancel(key)
        }
    }

    func storageFailed(_ why: String) -> RPCError { .storageFailed(why, advice: store.advice) }
}

/// The changes of the current loop turn whose journal lines are not yet written (group
/// commit), with what they will say once they are: their events and replies, in order,
/// typed. Until `Server.commitBatch` nothing of them has left the process. A final class
/// the server holds in a `let`: its lists are reached without a retain.
final class Batch {
    /// A request's reply or refusal, as the reducer made it (where it goes: its `Run`).
    struct Answer {
        let id: RequestID
        let result: Result<Reply, RPCError>
        /// How many of the group's events were staged before it (they are published first).
        let eventsBefore: Int

        /// Its fields, moved out (the reply is then consumed as it is written, not copied).
        consuming func parts() -> (RequestID, Result<Reply, RPCError>, Int) {
            (id, result, eventsBefore)
        }
    }

    /// Answers in a row to one connection to lines read at one time, from `first` up to
    /// the next run's first: the connection is counted, and the time kept, once for all of
    /// them, not for each.
    struct Run {
        let connection: Connection
        /// When their lines were read (`stats.get`'s request latency: read → reply queued;
        /// the lines of one loop turn's reads share it: `readFrom`).
        let readNs: UInt64
        let first: Int
    }

    private(set) var open = false
    private(set) var stateBefore = BarState.defaultBar
    /// Its effects (moved in and out, as its events and answers), in one of two lists: the
    /// other is the one the last committed group's effects ran from (`closeTakingEffects`).
    /// (Both `let`s: the list is reached without a retain, as `events` and `answers` are.)
    private let effectLists = (MoveList<Effect>(capacity: 16), MoveList<Effect>(capacity: 16))
    private var effectsInSecond = false
    private var effects: MoveList<Effect> {
        @inline(__always) get { effectsInSecond ? effectLists.1 : effectLists.0 }
    }
    /// What the group will publish and answer (moved in and out, never copied; see `MoveList`).
    let events = MoveList<BarEvent>()
    let answers = MoveList<Answer>()
    /// Who the answers go to, in order (every answer is in one run).
    private(set) var runs: [Run] = []
    /// The connection of the last run (told apart without a reference count).
    private var lastConnection: UnsafeMutableRawPointer?
    private var lastReadNs: UInt64 = 0
    /// A committed group's events are being published (`Server.commitBatch`): a burst, see `fellBehind`.
    var publishing = false
    /// Changes staged, and those of them a client asked for (the rest are timers').
    var count = 0
    var clientChanges = 0
    /// Events the group's changes published that nobody subscribed to (counted, not built).
    var unbuiltEvents = 0

    /// Keeps the state before what may become the group's first change (for an undo).
    @inline(__always)
    func keep(state: BarState) { stateBefore = state }

    /// Opens the group (its state before is what `keep` kept).
    @inline(__always)
    func join() { open = true }

    /// Stages an event, published once the group is committed. (Not inlined: in its
    /// caller the list was retained and released around each append.)
    @inline(never)
    func stage(_ event: consuming BarEvent) { events.append(event) }

    /// Stages a request's answer, queued once the group is committed (inlined: its list is a `let`).
    @inline(__always)
    func stage(_ answer: consuming Answer, to c: Unmanaged<Connection>, readNs: UInt64) {
        if lastConnection != c.toOpaque() || lastReadNs != readNs {
            lastConnection = c.toOpaque()
            lastReadNs = readNs
            runs.append(Run(connection: c.takeUnretainedValue(), readNs: readNs, first: answers.count))
        }
        answers.append(answer)
    }

    /// Run `k`'s connection, read time and the indices of its answers.
    @inline(__always)
    func run(_ k: Int) -> (Connection, UInt64, Range<Int>) {
        (runs[k].connection, runs[k].readNs, runs[k].first..<(k + 1 < runs.count ? runs[k + 1].first : answers.count))
    }

    /// Stages an effect, run once the group is committed.
    @inline(__always)
    func append(_ effect: consuming Effect) {
        // (Each list borrowed in its branch: one chosen by a conditional was retained.)
        if effectsInSecond { effectLists.1.append(effect) } else { effectLists.0.append(effect) }
    }

    /// Closes the group, handing its effects out: the list itself, whose effects are run
    /// (`Server.run` takes them all) before the next group is closed; the next group stages
    /// its own in the other list.
    func closeTakingEffects() -> MoveList<Effect> {
        let taken = effects
        effectsInSecond.toggle()
        precondition(effects.isEmpty, "a group closed while the previous one's effects were being run")
        close()
        return taken
    }

    func close() {
        open = false
        count = 0
        clientChanges = 0
        unbuiltEvents = 0
        if effectsInSecond { effectLists.1.removeAll() } else { effectLists.0.removeAll() }
        events.removeAll()
        answers.removeAll()
        runs.empty()  // (one or two runs: `removeAll(keepingCapacity:)` destroyed them through their metadata)
        lastConnection = nil
    }
}
