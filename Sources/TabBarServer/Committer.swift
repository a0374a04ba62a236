import TabBarCore

/// The commit stage: the one place state changes.
///
/// `submit` runs a state command through the reducer and stages what it made: its journal
/// line (in the store), its events, its reply and its effects, in order. `commit` writes every
/// change staged since the last commit to the journal with one write (group commit: one write
/// per loop turn, whatever the number of clients) and hands back what to deliver. Nothing
/// staged leaves the process before that write succeeds; if it fails, the state is restored,
/// the events are dropped, and each reply that rests on the refused changes becomes
/// `storage_failed`.
final class Committer {
    /// Where a request's answer goes: its connection, its id, and when its line was read
    /// (`stats.get`'s latency ends when the reply is queued).
    struct ReplyTo {
        let connection: Connection
        let id: RequestID
        let readNs: UInt64
    }

    /// Something to deliver once its group is written, in the order it was made. A reply
    /// `fromState` was made by the reducer (not a refusal of the line itself).
    enum Output {
        case event(BarEvent)
        case reply(ReplyTo, Result<Reply, RPCError>, fromState: Bool)
    }

    /// A group, committed or refused: what to deliver and the effects to run.
    struct Group {
        var outputs: [Output] = []
        var effects: [Effect] = []
        /// Why the journal write failed (nil: it succeeded): `outputs` are then the refusals.
        var refusedBecause: String?
        /// How many changes it held.
        var changes = 0
    }

    private(set) var reducer: Reducer
    let store: StateStore
    /// The state before the group's first change, kept while `changeStaged` to undo the group.
    private var stateBefore = BarState.defaultBar
    private var changeStaged = false
    private var staged = Group()
    /// Where in `staged.outputs` the group's first change is: the replies from there on rest on it.
    private var firstChangeAt: Int?

    init(reducer: Reducer, store: StateStore) {
        self.reducer = reducer
        self.store = store
    }

    var state: BarState { reducer.state }
    var limits: Limits { reducer.limits }
    var hasStaged: Bool { changeStaged || !staged.outputs.isEmpty || !staged.effects.isEmpty }

    /// Runs `command` at `nowMs` and stages its outcome. `method`/`params`: what its journal
    /// line records when the outcome names no entry of its own; `reply`: where its answer
    /// goes (nil: a notification, or a timer's step). Returns false when it was refused.
    @discardableResult
    func submit(_ command: StateCommand, at nowMs: Int64, method: String, params: JSONValue?, reply: ReplyTo?) -> Bool {
        // The state before the group's first change is kept to undo the group.
        if !changeStaged { stateBefore = reducer.state }
        let seqBefore = reducer.state.seq
        let outcome = reducer.reduce(command, at: nowMs)
        if reducer.state.seq != seqBefore {
            if !changeStaged {
                changeStaged = true
                firstChangeAt = staged.outputs.count
            }
            staged.changes += 1
            let seq = reducer.state.seq
            store.stage(seq: seq) { line in
                if let entry = outcome.journal {
                    Persistence.journalLine(seq: seq, entry, into: &line)
                } else {
                    Persistence.journalLine(seq: seq, method: method, params: params?.raw, into: &line)
                }
            }
            for event in outcome.events { staged.outputs.append(.event(event)) }
        }
        staged.effects += outcome.effects
        if let reply { staged.outputs.append(.reply(reply, outcome.reply, fromState: true)) }
        if case .failure = outcome.reply { return false }
        return true
    }

    /// Stages a reply that rests on nothing staged (a refusal of the line itself), so that it
    /// leaves in order after what its connection sent before.
    func stage(reply result: Result<Reply, RPCError>, to: ReplyTo) {
        staged.outputs.append(.reply(to, result, fromState: false))
    }

    /// Writes the staged changes with one journal write and returns the group to deliver.
    func commit() -> Group {
        var group = staged
        let firstChange = firstChangeAt ?? group.outputs.count
        staged = Group()
        firstChangeAt = nil
        guard changeStaged else { return group }
        changeStaged = false
        let before = stateBefore
        do {
            try store.commitReachable(before: before, after: reducer.state, limits: reducer.limits)
        } catch {
            reducer.state = before
            let refusal = RPCError.storageFailed("\(error)", advice: store.advice)
            group.refusedBecause = "\(error)"
            group.effects = []
            group.outputs = group.outputs.enumerated().compactMap { k, output in
                guard case let .reply(to, result, fromState) = output else { return nil }  // events go
                return .reply(to, fromState && k >= firstChange ? .failure(refusal) : result, fromState: fromState)
            }
        }
        return group
    }

    /// Replaces the state outside any group (start-up, tests).
    func replaceReducer(_ r: Reducer) { reducer = r }
}
