import Testing
import TabBarCore

// The ONLY code of the exhaustive reducer tests that touches the reducer's API (decoding a
// line, reducing it, reading its outcome). Every test in ExhaustiveReducerTests.swift speaks
// request lines, `BarState` values, JSON text and `Effect`s; when the request path changes,
// this file is rewired and the tests stay as they are.

/// The reply a step must give: a result (JSON text, compared by value: member order and the
/// spelling of numbers do not matter) or an error (its `data.kind`, and `data.field` if given).
enum ExpectedReply {
    case result(String)
    case error(String, field: String? = nil)
    /// `{"seq": seq, "state": …}` with the state the test expects after the step (bar.configure's reply).
    case state(seq: Int)
    /// An error in full, as a client reads it: its `code`, its whole `data` (JSON text, compared
    /// by value) and, if given, words its `message` contains.
    case failure(code: Int, data: String, says: String? = nil)
}

/// An event a step must publish: its method and its params (JSON text, compared by value).
/// `configured(seq:)` stands for `bar.configured {seq, state}` with the state the test expects
/// after the step, rendered as `state.get` renders it.
enum ExpectedEvent {
    case event(String, String)
    case configured(seq: Int)

    init(_ method: String, _ params: String) { self = .event(method, params) }
}

/// Like The Composable Architecture's `TestStore`: every step states the whole state after it
/// (as a change of the state before it), its reply, every event and every effect; any
/// difference fails the test, reported field by field. Timers are effects too: a timer asked
/// for must be fired (`fire`) before time passes it, and none may be left when the store goes.
final class TestStore {
    private var reducer: Reducer
    /// The state the test says the reducer has.
    private(set) var state: BarState
    /// The time of the last step (ms).
    private(set) var now: Int64 = 0
    /// Timers asked for and not yet fired or cancelled: key → due time.
    private(set) var timers: [TimerKey: Int64] = [:]
    private let limits: Limits
    private var checkTimersAtEnd = true

    init(_ state: BarState = .defaultBar, limits: Limits = Limits(), sounds: SoundMap = SoundMap()) {
        reducer = Reducer(state: state, limits: limits, sounds: sounds)
        self.state = state
        self.limits = limits
    }

    deinit {
        if checkTimersAtEnd && !timers.isEmpty {
            Issue.record("timers left unfired at the end of the test: \(timers.map { "\($0.key) at \($0.value) ms" }.sorted())")
        }
    }

    /// The test does not care about the timers still pending at its end.
    func skipPendingTimers() { checkTimersAtEnd = false }

    /// Sends one request line at `at` ms (default: the time of the last step) and checks all of it.
    /// `journal`, when given, is the entry the step must record (what a restart replays).
    func send(_ line: String, at ms: Int64? = nil, reply: ExpectedReply, events: [ExpectedEvent] = [], effects: [Effect] = [],
              journal: JournalEntry? = nil,
              sourceLocation: SourceLocation = #_sourceLocation, _ update: (inout BarState) -> Void = { _ in }) {
        let t = ms ?? now
        advance(to: t, sourceLocation)
        let outcome = reduce(line, at: t)
        check(line, outcome, reply: reply, events: events, effects: effects, journal: journal, sourceLocation, update)
    }

    /// Fires the pending timer `key` at its due time and checks the step as `send` does.
    func fire(_ key: TimerKey, reply: ExpectedReply = .result("null"), events: [ExpectedEvent] = [], effects: [Effect] = [],
              journal: JournalEntry? = nil,
              sourceLocation: SourceLocation = #_sourceLocation, _ update: (inout BarState) -> Void = { _ in }) {
        guard let due = timers[key] else {
            Issue.record("no timer \(key) is pending (pending: \(timers))", sourceLocation: sourceLocation)
            return
        }
        timers[key] = nil
        fire(key, at: due, "timer \(key) at \(due) ms", reply: reply, events: events, effects: effects, journal: journal, sourceLocation, update)
    }

    /// Fires `key` at `ms` whether or not it is due then: early (a clock that jitters), or
    /// after it ended or was replaced (a stale timer). A pending timer stays pending unless
    /// the step's effects say otherwise.
    func fireOffSchedule(_ key: TimerKey, at ms: Int64, reply: ExpectedReply = .result("null"), events: [ExpectedEvent] = [],
                         effects: [Effect] = [], sourceLocation: SourceLocation = #_sourceLocation,
                         _ update: (inout BarState) -> Void = { _ in }) {
        fire(key, at: ms, "timer \(key) off schedule at \(ms) ms", reply: reply, events: events, effects: effects, journal: nil,
             sourceLocation, update)
    }

    private func fire(_ key: TimerKey, at t: Int64, _ what: String, reply: ExpectedReply, events: [ExpectedEvent], effects: [Effect],
                      journal: JournalEntry?, _ loc: SourceLocation, _ update: (inout BarState) -> Void) {
        advance(to: t, loc)
        var r = reducer
        let o = r.reduce(.timerFired(key), at: t)
        reducer = r
        check(what, outcome(o), reply: reply, events: events, effects: effects, journal: journal, loc, update)
    }

    // MARK: Wiring (the one path: Envelope → Methods → Reducer → typed Outcome, seen as JSON)

    private struct Step {
        var reply: Result<JSON, RPCError>
        var events: [(String, JSON)]
        var effects: [Effect]
        var journal: JournalEntry? = nil
    }

    private func outcome(_ o: Outcome) -> Step {
        Step(reply: o.reply.map(\.json), events: o.events.map { ($0.method, $0.params) }, effects: o.effects, journal: o.journal)
    }

    private func reduce(_ line: String, at t: Int64) -> Step {
        let bytes = Array(line.utf8)
        let decoded = bytes.withUnsafeBufferPointer { Envelope.decode($0) }
        switch decoded {
        case .failure(let rejection):
            return Step(reply: .failure(rejection.error), events: [], effects: [])
        case .success(let request):
            switch Methods.command(for: request, limits: limits) {
            case .failure(let e): return Step(reply: .failure(e), events: [], effects: [])
            case .success(.state(let command)):
                let o = reducer.reduce(command, at: t)
                return outcome(o)
            case .success(.server(.stateGet)):
                return Step(reply: .success(Reply.state(seq: reducer.state.seq, reducer.state, limits).json), events: [], effects: [])
            case .success(.server(let command)):
                return Step(reply: .failure(.internalError("\(command) is the server's, not the reducer's")), events: [], effects: [])
            }
        }
    }

    private func render(_ s: BarState) -> JSON { s.json(limits: limits) }

    // MARK: Checking

    private func advance(to t: Int64, _ loc: SourceLocation) {
        if t < now { Issue.record("time goes back: \(t) ms after \(now) ms", sourceLocation: loc) }
        for (key, due) in timers where due < t {
            Issue.record("timer \(key) due at \(due) ms was not fired before the step at \(t) ms", sourceLocation: loc)
        }
        now = t
    }

    private func check(_ what: String, _ step: Step, reply: ExpectedReply, events: [ExpectedEvent], effects: [Effect],
                       journal: JournalEntry? = nil, _ loc: SourceLocation, _ update: (inout BarState) -> Void) {
        var expected = state
        update(&expected)
        var problems: [String] = []
        // The reply.
        var reply = reply
        if case .state(let seq) = reply { reply = .result(ExhaustiveJSON.obj(["seq": .int(seq), "state": render(expected)]).text) }
        switch (reply, step.reply) {
        case (.state, _): break
        case (.result(let text), .success(let got)):
            let want = ExhaustiveJSON.parse(text)
            if !ExhaustiveJSON.same(want, got) { problems.append("reply: expected \(want.text), got \(got.text)") }
        case (.result(let text), .failure(let e)):
            problems.append("reply: expected the result \(text), got the error \(e.kind) (\(e.field ?? "-")): \(e.message)")
        case (.error(let kind, _), .success(let got)):
            problems.append("reply: expected the error \(kind), got the result \(got.text)")
        case (.error(let kind, let field), .failure(let e)):
            if e.kind != kind { problems.append("reply: expected the error \(kind), got \(e.kind): \(e.message)") }
            if let field, e.field != field { problems.append("reply: expected data.field \(field), got \(e.field ?? "none")") }
        case (.failure(let code, _, _), .success(let got)):
            problems.append("reply: expected the error \(code), got the result \(got.text)")
        case (.failure(let code, let data, let says), .failure(let e)):
            let wire = e.json
            if e.code != code { problems.append("reply: expected the code \(code), got \(e.code): \(wire.text)") }
            let want = ExhaustiveJSON.parse(data)
            if !ExhaustiveJSON.same(want, wire["data"] ?? .null) { problems.append("reply: expected data \(want.text), got \(wire.text)") }
            if let says, !e.message.contains(says) { problems.append("reply: expected a message saying \(says), got \(e.message)") }
        }
        // The journal entry, when the test states it.
        if let journal, step.journal != journal {
            problems.append("journal: expected \(journal), got \(String(describing: step.journal))")
        }
        // The events, in order.
        let want: [(String, JSON)] = events.map {
            switch $0 {
            case .event(let m, let p): return (m, ExhaustiveJSON.parse(p))
            case .configured(let seq): return ("bar.configured", .obj(["seq": .int(seq), "state": render(expected)]))
            }
        }
        if want.count != step.events.count || zip(want, step.events).contains(where: { $0.0 != $1.0 || !ExhaustiveJSON.same($0.1, $1.1) }) {
            for k in 0..<max(want.count, step.events.count) {
                let w = k < want.count ? "\(want[k].0) \(want[k].1.text)" : "(none)"
                let g = k < step.events.count ? "\(step.events[k].0) \(step.events[k].1.text)" : "(none)"
                if w != g && !(k < want.count && k < step.events.count && want[k].0 == step.events[k].0
                               && ExhaustiveJSON.same(want[k].1, step.events[k].1)) {
                    problems.append("event \(k): expected \(w)\n      got \(g)")
                }
            }
        }
        // The effects, in order.
        if step.effects != effects { problems.append("effects: expected \(effects)\n      got \(step.effects)") }
        for e in step.effects {
            switch e {
            case let .timer(key, at): timers[key] = at
            case let .cancelTimer(key): timers[key] = nil
            case .play: break
            }
        }
        // The whole state.
        let got = reducer.state
        if got != expected {
            problems += ExhaustiveDiff.fields("state", expected, got)
        }
        state = got  // go on from what the reducer has (a failure is reported once)
        if !problems.isEmpty {
            let text = "\(what)\n  " + problems.joined(separator: "\n  ")
            Issue.record(Comment(rawValue: text), sourceLocation: loc)
        }
    }
}

/// JSON compared by value: objects as unordered members, numbers by their value.
enum ExhaustiveJSON {
    static func obj(_ pairs: KeyValuePairs<String, JSON>) -> JSON { .obj(pairs) }

    static func parse(_ text: String) -> JSON {
        do { return try JSON.parse(text) } catch {
            Issue.record("the test's JSON does not parse: \(error.description): \(text)")
            return .null
        }
    }

    static func same(_ a: JSON, _ b: JSON) -> Bool {
        switch (a, b) {
        case (.number(let x), .number(let y)): return x == y || Double(x) == Double(y)
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            return x.allSatisfy { m in y.contains { $0.key == m.key && same($0.value, m.value) } }
        default: return a == b
        }
    }
}

/// The fields in which two values differ, as `path: expected …, got …` lines.
enum ExhaustiveDiff {
    static func fields(_ path: String, _ want: Any, _ got: Any) -> [String] {
        let w = String(reflecting: want), g = String(reflecting: got)
        if w == g { return [] }
        let mw = Mirror(reflecting: want), mg = Mirror(reflecting: got)
        let wc = Array(mw.children), gc = Array(mg.children)
        let composite = mw.displayStyle == .struct || mw.displayStyle == .class || mw.displayStyle == .tuple
            || mw.displayStyle == .collection
        if composite, mw.displayStyle == mg.displayStyle, wc.count == gc.count, !wc.isEmpty {
            var out: [String] = []
            for (k, (a, b)) in zip(wc, gc).enumerated() {
                let name = mw.displayStyle == .collection ? "\(path)[\(k)]" : "\(path).\(a.label ?? "\(k)")"
                out += fields(name, a.value, b.value)
            }
            if !out.isEmpty { return out }
        }
        return ["\(path): expected \(w), got \(g)"]
    }
}
