/// The result of one command: the reply, the events to publish, the effects to run, and
/// what the journal records for it, all typed.
public struct Outcome: Equatable, Sendable {
    public var reply: Result<Reply, RPCError>
    /// The events to publish, in order.
    public var events: [BarEvent]
    public var effects: [Effect]
    /// When the change is to be journaled differently from its request (nil: as received).
    public var journal: JournalEntry?

    public init(reply: Result<Reply, RPCError>, events: [BarEvent] = [], effects: [Effect] = [], journal: JournalEntry? = nil) {
        self.reply = reply
        self.events = events
        self.effects = effects
        self.journal = journal
    }

    /// Starts the outcome afresh with `reply` and nothing else (the arrays keep their storage).
    mutating func reset(_ reply: Result<Reply, RPCError>) {
        clear()
        self.reply = reply
    }

    /// Starts the outcome afresh with no reply and nothing else (the arrays keep their storage).
    mutating func reset() {
        clear()
        reply = .success(.none)
    }

    private mutating func clear() {
        if !events.isEmpty { events.removeAll(keepingCapacity: true) }
        if !effects.isEmpty { effects.removeAll(keepingCapacity: true) }
        journal = nil
    }

    /// Sets the step's reply.
    mutating func answer(_ r: Result<Reply, RPCError>) { reply = r }

    /// Records the step's journal entry.
    mutating func record(_ entry: JournalEntry) { journal = entry }

    /// Publishes an event.
    mutating func publish(_ event: BarEvent) { events.append(event) }

    /// Adds the sound to play, if any.
    mutating func play(_ sound: Effect?) { if let sound { effects.append(sound) } }

    /// Starts the outcome afresh as the refusal `e`.
    mutating func fail(_ e: RPCError) { reset(.failure(e)) }
}
