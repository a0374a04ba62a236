/// The result of one command: the reply, the events to publish, the effects to run, all typed.
public struct Outcome: Equatable, Sendable {
    public var reply: Result<Reply, RPCError>
    /// The events to publish, in order (none built while `wantsEvents` is false).
    public var events: [BarEvent]
    public var effects: [Effect]
    /// When the change is to be journaled differently from its request (nil: as received).
    public var journal: JournalEntry?
    /// Whether anyone will read the events. The server clears it while nobody subscribed:
    /// the steps then count their events (`eventCount`) without building them — an event
    /// costs its texts' reference counts, its staging and its destruction, and nobody would
    /// encode it. Kept by `reset`: it belongs to whoever reuses the outcome.
    public var wantsEvents = true
    /// Events published but not built (`wantsEvents` false).
    public private(set) var unbuiltEvents = 0

    /// How many events the step published, built or not.
    public var eventCount: Int { @inline(__always) get { events.count &+ unbuiltEvents } }

    public init(reply: Result<Reply, RPCError>, events: [BarEvent] = [], effects: [Effect] = [], journal: JournalEntry? = nil) {
        self.reply = reply
        self.events = events
        self.effects = effects
        self.journal = journal
    }

    /// Starts the outcome afresh: `reply`, and no events, effects or journal entry (the
    /// arrays keep their memory: the server reuses one outcome for every command).
    @inline(__always)
    mutating func reset(_ reply: Result<Reply, RPCError>) {
        self.reply = reply
        events.empty()
        unbuiltEvents = 0
        effects.empty()
        clearJournal()
    }

    /// Starts the outcome afresh with no reply (`.success(.none)`), no events, effects or
    /// journal entry. (A reply already `.success(.none)`, what `takeReply` leaves, is left
    /// as it is: replacing it destroyed it through the `Result`'s value witnesses.)
    @inline(__always)
    mutating func reset() {
        if case .success(.none) = reply {} else { reply = .success(.none) }
        events.empty()
        unbuiltEvents = 0
        effects.empty()
        clearJournal()
    }

    /// Sets the step's reply. Over `.success(.none)`, what `reset` leaves, it is written in
    /// place: that value holds nothing to release, and destroying it went through the
    /// `Result`'s value witnesses.
    @inline(__always)
    mutating func answer(_ r: Result<Reply, RPCError>) {
        if case .success(.none) = reply {
            withUnsafeMutablePointer(to: &reply) { $0.initialize(to: r) }
        } else {
            reply = r
        }
    }

    /// No journal entry. (One already nil, what `takeJournal` leaves, is left as it is:
    /// replacing it destroyed it through an outlined call.)
    @inline(__always)
    mutating func clearJournal() {
        if case .none = journal {} else { journal = nil }
    }

    /// Records the step's journal entry. Over nil, what `reset` leaves, it is written in
    /// place (as `answer` writes the reply).
    @inline(__always)
    mutating func record(_ entry: JournalEntry) {
        journal.setOverNil(entry)
    }

    /// The journal entry, moved out (no copy), nil left in its place.
    @inline(__always)
    public mutating func takeJournal() -> JournalEntry? {
        withUnsafeMutablePointer(to: &journal) { p in
            let j = p.move()
            p.initialize(to: nil)
            return j
        }
    }

    /// The reply, moved out (no copy), `.success(.none)` left in its place.
    @inline(__always)
    public mutating func takeReply() -> Result<Reply, RPCError> {
        // (Moved out of its memory and replaced there: `swap` copied it once more.)
        withUnsafeMutablePointer(to: &reply) { p in
            let r = p.move()
            p.initialize(to: .success(.none))
            return r
        }
    }

    /// Publishes an event: adds it, or only counts it while nobody wants events (the event
    /// is then never built: `event` is not evaluated).
    @inline(__always)
    mutating func publish(_ event: @autoclosure () -> BarEvent) {
        if wantsEvents { events.append(event()) } else { unbuiltEvents &+= 1 }
    }

    /// Adds the sound to play, if any.
    @inline(__always)
    mutating func play(_ sound: Effect?) { if let sound { effects.append(sound) } }

    /// Starts the outcome afresh as the refusal `e`.
    mutating func fail(_ e: RPCError) { reset(.failure(e)) }
}

extension Optional {
    /// `self = value`, written in place when `self` is nil: a nil holds nothing to release,
    /// and replacing it destroyed it through an outlined call.
    @inline(__always)
    mutating func setOverNil(_ value: Wrapped) {
        if case .none = self {
            withUnsafeMutablePointer(to: &self) { $0.initialize(to: value) }
        } else {
            self = value
        }
    }
}
