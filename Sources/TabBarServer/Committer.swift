import TabBarCore

/// The commit stage: the one place state changes.
///
/// `submit` runs a state command through the reducer and stages what it made, in order: its
/// journal line (in the store), its events' lines (encoded once, for every subscriber), its
/// reply, and its effects. `commit` writes every change staged since the last commit to the
/// journal with one write (group commit: one write per loop turn, whatever the number of
/// clients) and hands each staged event and reply on to be delivered. Nothing staged leaves
/// the process before that write succeeds; if it fails, the state is restored, the events are
/// dropped, and each reply that rests on the refused changes becomes `storage_failed`.
final class Committer {
    /// Where a request's answer goes: its connection, its id, and when its line was read
    /// (`stats.get`'s latency ends when the reply is queued).
    struct ReplyTo {
        let connection: Connection
        let id: RequestID
        let readNs: UInt64
    }

    /// What to deliver, in the order it was made.
    enum Delivery {
        /// An event's line for the subscribers of its method, `name`.
        case event(name: StaticString, line: UnsafeBufferPointer<UInt8>)
        /// A request's answer.
        case reply(ReplyTo, Result<Reply, RPCError>)
    }

    /// What a commit did: the effects to run, how many changes it held, and why the journal
    /// write failed (nil: it succeeded).
    struct Outcome {
        var effects: [Effect] = []
        var changes = 0
        var refusedBecause: String?
    }

    /// Whether anyone will read the events (set by the server: someone subscribed). While
    /// nobody does, a change's events are only counted in `stats` once committed, not encoded;
    /// nobody can subscribe in the middle of a group (`subscribe` commits what is staged first).
    var eventsWanted = true
    private var unheardStaged = 0
    private let stats: ServerStats

    /// Something staged, in the order it was made.
    private enum Staged {
        /// An event's line (where it is in `lines`), for the subscribers of its method.
        case event(StaticString, Range<Int>)
        /// A reply; `fromState`: it rests on the state (a command's answer, not a refusal of
        /// its line), so a refused group turns it into `storage_failed`.
        case reply(ReplyTo, Result<Reply, RPCError>, fromState: Bool)
    }

    private(set) var reducer: Reducer
    let store: StateStore
    /// The state before the group's first change, kept while `changeStaged` to undo the group.
    private var stateBefore = BarState.defaultBar
    private var changeStaged = false
    private var changes = 0
    private var staged: [Staged] = []
    private var lines = ByteBuffer(capacity: 1 << 14)
    private var effects: [Effect] = []
    /// The outcome of the command being submitted (one, reused: its arrays keep their storage).
    private var outcome = TabBarCore.Outcome(reply: .success(.none))
    /// Where in `staged` the group's first change is: the replies from there on rest on it.
    private var firstChangeAt = 0

    init(reducer: Reducer, store: StateStore, stats: ServerStats) {
        self.reducer = reducer
        self.store = store
        self.stats = stats
    }

    var state: BarState { reducer.state }
    var limits: Limits { reducer.limits }
    var hasStaged: Bool { changeStaged || !staged.isEmpty || !effects.isEmpty }

    /// Runs `command` at `nowMs` and stages its outcome. `method`/`params`: what its journal
    /// line records when the outcome names no entry of its own; `reply`: where its answer
    /// goes (nil: a notification, or a timer's step). Returns false when it was refused.
    @discardableResult
    func submit(_ command: StateCommand, at nowMs: Int64, method: String, params: JSONValue?, reply: ReplyTo?) -> Bool {
        // The state before the group's first change is kept to undo the group.
        if !changeStaged { stateBefore = reducer.state }
        let seqBefore = reducer.state.seq
        reducer.reduce(command, at: nowMs, into: &outcome)
        let seq = reducer.state.seq
        if seq != seqBefore {
            // A change: its journal line, and its events' lines while anyone listens.
            if !changeStaged {
                changeStaged = true
                firstChangeAt = staged.count
            }
            changes += 1
            store.stage(seq: seq, entry: outcome.journal, method: method, params: params?.raw)
            if eventsWanted {
                for event in outcome.events {
                    let start = lines.count
                    event.write(into: &lines)
                    staged.append(.event(event.name, start..<lines.count))
                }
            } else {
                unheardStaged += outcome.events.count
            }
        }
        if !outcome.effects.isEmpty { effects += outcome.effects }
        var answer = Result<Reply, RPCError>.success(.none)
        swap(&answer, &outcome.reply)
        let refused = if case .failure = answer { true } else { false }
        if let reply { staged.append(.reply(reply, answer, fromState: true)) }
        return !refused
    }

    /// Stages a reply that rests on nothing staged (a refusal of the line itself), so that it
    /// leaves in order after what its connection sent before.
    func stage(reply result: Result<Reply, RPCError>, to: ReplyTo) {
        staged.append(.reply(to, result, fromState: false))
    }

    /// Writes the staged changes with one journal write and hands every staged line to
    /// `deliver`, in order (on a refused write: the replies, each that rests on the refused
    /// changes as `storage_failed`, and no event).
    func commit(deliver: (Delivery) -> Void) -> Outcome {
        var result = Outcome(changes: changes)
        defer {
            staged.removeAll(keepingCapacity: true)
            lines.removeAll()
            effects.removeAll(keepingCapacity: true)
            changes = 0
            changeStaged = false
            unheardStaged = 0
        }
        if changeStaged {
            do {
                try store.commitReachable(before: stateBefore, after: reducer.state, limits: reducer.limits)
            } catch {
                reducer.state = stateBefore
                result.refusedBecause = "\(error)"
            }
        }
        if result.refusedBecause == nil {
            result.effects = effects
            stats.events += unheardStaged
        }
        let failure = result.refusedBecause.map { RPCError.storageFailed($0, advice: store.advice) }
        for k in staged.indices {
            switch staged[k] {
            case let .event(name, range):
                if failure == nil { deliver(.event(name: name, line: UnsafeBufferPointer(rebasing: lines.bytes[range]))) }
            case let .reply(to, answer, fromState):
                if let failure, fromState && k >= firstChangeAt {
                    deliver(.reply(to, .failure(failure)))
                } else {
                    deliver(.reply(to, answer))
                }
            }
        }
        return result
    }

    /// Replaces the state outside any group (start-up, tests).
    func replaceReducer(_ r: Reducer) { reducer = r }
}
