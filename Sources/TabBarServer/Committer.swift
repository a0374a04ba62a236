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
    /// Something to deliver once its group is written, in the order it was made.
    enum Output {
        case event(BarEvent)
        /// `readNs`: when the request's line was read (`stats.get`'s latency ends when it is queued).
        case reply(Connection, RequestID, Result<Reply, RPCError>, readNs: UInt64)
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
    /// The state before the group's first change (nil: no change is staged).
    private var stateBefore: BarState?
    private var staged = Group()
    /// Replies staged after a change of the group: they rest on it (indices into `staged.outputs`).
    private var restOnChanges: Set<Int> = []

    init(reducer: Reducer, store: StateStore) {
        self.reducer = reducer
        self.store = store
    }

    var state: BarState { reducer.state }
    var limits: Limits { reducer.limits }
    var hasStaged: Bool { !staged.outputs.isEmpty || !staged.effects.isEmpty || stateBefore != nil }

    /// Runs `command` at `nowMs` and stages its outcome. `method`/`params`: what its journal
    /// line records when the outcome names no entry of its own; `reply`: where its answer
    /// goes (nil: a notification, or a timer's step). Returns false when it was refused.
    @discardableResult
    func submit(_ command: StateCommand, at nowMs: Int64, method: String, params: JSONValue?,
                reply: (to: Connection, id: RequestID, readNs: UInt64)?) -> Bool {
        let before = reducer.state
        let outcome = reducer.reduce(command, at: nowMs)
        let changed = reducer.state.seq != before.seq
        if changed {
            if stateBefore == nil { stateBefore = before }
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
        if let reply {
            if stateBefore != nil { restOnChanges.insert(staged.outputs.count) }
            staged.outputs.append(.reply(reply.to, reply.id, outcome.reply, readNs: reply.readNs))
        }
        if case .failure = outcome.reply { return false }
        return true
    }

    /// Stages a reply that rests on nothing staged (a refusal of the line itself), so that it
    /// leaves in order after what its connection sent before.
    func stage(reply result: Result<Reply, RPCError>, to c: Connection, id: RequestID, readNs: UInt64) {
        staged.outputs.append(.reply(c, id, result, readNs: readNs))
    }

    /// Writes the staged changes with one journal write and returns the group to deliver.
    func commit() -> Group {
        var group = staged
        let resting = restOnChanges
        staged = Group()
        restOnChanges = []
        guard let before = stateBefore else { return group }
        stateBefore = nil
        do {
            try store.commitReachable(before: before, after: reducer.state, limits: reducer.limits)
        } catch {
            reducer.state = before
            let refusal = RPCError.storageFailed("\(error)", advice: store.advice)
            group.refusedBecause = "\(error)"
            group.effects = []
            group.outputs = group.outputs.enumerated().compactMap { k, output in
                guard case let .reply(c, id, result, readNs) = output else { return nil }  // events go
                return .reply(c, id, resting.contains(k) ? .failure(refusal) : result, readNs: readNs)
            }
        }
        return group
    }

    /// Replaces the state outside any group (start-up, tests).
    func replaceReducer(_ r: Reducer) { reducer = r }
}
