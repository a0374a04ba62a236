import TabBarCore

/// One input of the protocol fuzzer: a byte stream as a client would send it.
///
/// The stream goes through what the daemon does with a connection's bytes —
/// the line framer (fed in pseudo-random chunks), the JSON-RPC envelope, the
/// dispatch table (`Methods`), the reducer, the reply encoder, and the journal
/// and snapshot codecs — and after every line the invariants below are checked.
/// `run` returns the first violation, or nil.
///
/// Invariants:
/// - Framing does not depend on how the stream is cut: any chunking (and
///   byte-by-byte) gives the lines a reference splitter gives.
/// - Every typed reply and event encodes as the one line of JSON its `JSON` view says.
/// - Every line with an id, and every line that is not a request at all, gets
///   exactly one reply; notifications get none. Every reply is valid JSON, is
///   one line, echoes the request's id exactly, and has exactly one of
///   `result`/`error` (an error with an integer code and a `data.kind`).
/// - `seq` never goes backwards; a command either adds exactly 1 to `seq` and
///   publishes events carrying that `seq` (a reselect changes nothing else), or
///   changes nothing, publishes nothing and plays nothing. A failed command
///   changes nothing. The reply of a state command carries the state's `seq`.
/// - Exactly one selected tab whenever any item is selectable, and it is one;
///   `previous`, `active_action`, `highlighted` name existing items.
/// - Every badge's `display` follows the rules (count > max → "max+", text cut
///   to `max_badge_chars` with "…", dot → ""); counts are positive, texts non-empty.
/// - The state round-trips through `BarState.json` → text → `BarState.decode`
///   and through a snapshot; replaying the journal (from the start, and from a
///   snapshot taken midway) reproduces the final state.
public enum ProtocolFuzz {
    public struct Violation: Error, CustomStringConvertible {
        public var description: String
        init(_ d: String) { description = d }
    }

    /// Limits used by the fuzzer: the defaults, so that corpus files mean what they mean on the wire.
    static let limits = Limits()
    static let maxLine = 1024

    public static func run(_ data: UnsafeBufferPointer<UInt8>) -> Violation? {
        do {
            try check(data)
            return nil
        } catch let v as Violation {
            return v
        } catch {
            return Violation("unexpected error \(error)")
        }
    }

    public static func run(_ bytes: [UInt8]) -> Violation? {
        bytes.withUnsafeBufferPointer { run($0) }
    }

    // MARK: Framing

    enum Unit: Equatable {
        case line([UInt8])
        case tooLong
    }

    /// The contract's framing, written plainly: split at `\n`, drop one trailing
    /// `\r`, longer than `maxLine` → tooLong, blank (spaces, tabs, `\r`) → nothing.
    /// At EOF an unterminated last line counts as a line.
    static func referenceFrame(_ data: UnsafeBufferPointer<UInt8>, maxLine: Int) -> [Unit] {
        var out: [Unit] = []
        var start = 0
        func segment(_ s: ArraySlice<UInt8>) {
            var seg = s
            if seg.last == 0x0D { seg = seg.dropLast() }
            if seg.count > maxLine { out.append(.tooLong); return }
            if seg.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
            out.append(.line(Array(seg)))
        }
        let all = Array(data)
        for k in 0..<all.count where all[k] == 0x0A {
            segment(all[start..<k])
            start = k + 1
        }
        if start < all.count { segment(all[start...]) }
        return out
    }

    /// The daemon's framer fed in chunks whose sizes come from `sizes`.
    static func frame(_ data: UnsafeBufferPointer<UInt8>, maxLine: Int, sizes: (Int) -> Int) -> [Unit] {
        var f = LineFramer(maxLine: maxLine)
        var out: [Unit] = []
        let sink: (LineFramer.Line) -> Void = { unit in
            switch unit {
            case .line(let l): out.append(.line(Array(l)))
            case .tooLong: out.append(.tooLong)
            }
        }
        var off = 0
        var k = 0
        while off < data.count {
            let n = min(max(1, sizes(k)), data.count - off)
            f.feed(UnsafeBufferPointer(rebasing: data[off..<(off + n)]), sink)
            off += n
            k += 1
        }
        f.finish(sink)
        return out
    }

    static func checkFraming(_ data: UnsafeBufferPointer<UInt8>) throws -> [Unit] {
        var seed = UInt64(data.count) &* 0x9E37_79B9_7F4A_7C15 | 1
        let random: (Int) -> Int = { _ in
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
            return Int(seed % 40) + 1
        }
        // A small limit makes overlong lines common; the real one is used for the pipeline.
        let small = referenceFrame(data, maxLine: 16)
        for (name, sizes) in [("byte by byte", { (_: Int) in 1 }), ("random chunks", random)] {
            let got = frame(data, maxLine: 16, sizes: sizes)
            if got != small { throw Violation("framing (\(name), max_line 16) gave \(describe(got)), expected \(describe(small))") }
        }
        let expected = referenceFrame(data, maxLine: maxLine)
        let whole = frame(data, maxLine: maxLine, sizes: { _ in data.count })
        if whole != expected { throw Violation("framing (whole, max_line \(maxLine)) gave \(describe(whole)), expected \(describe(expected))") }
        let chunked = frame(data, maxLine: maxLine, sizes: random)
        if chunked != expected { throw Violation("framing (random chunks, max_line \(maxLine)) gave \(describe(chunked)), expected \(describe(expected))") }
        return whole
    }

    static func describe(_ units: [Unit]) -> String {
        "[" + units.map { u -> String in
            switch u {
            case .tooLong: return "tooLong"
            case .line(let l): return "line(\(l.count) bytes)"
            }
        }.joined(separator: ", ") + "]"
    }

    // MARK: The pipeline

    /// The fuzzer's state: the reducer, the journal it wrote, the timers it asked for, a clock.
    struct World {
        var reducer = Reducer(state: BarState.defaultBar, limits: ProtocolFuzz.limits)
        var journal: [UInt8] = []
        var timers: [TimerKey: Int64] = [:]
        /// The reducer's clock (ms); each line moves it on by an amount the line decides.
        var now: Int64 = 1_000_000
    }

    static func check(_ data: UnsafeBufferPointer<UInt8>) throws {
        let units = try checkFraming(data)
        let initial = BarState.defaultBar
        var world = World()
        var snapshot: [UInt8]?
        var snapshotJournalOffset = 0
        var replies = 0
        var expectedReplies = 0
        try checkState(initial)
        var lastChecked = initial
        for (k, unit) in units.enumerated() {
            var out: [UInt8] = []
            switch unit {
            case .tooLong:
                expectedReplies += 1
                Wire.reply(id: .null, .failure(.lineTooLong(limit: maxLine)), into: &out)
                try checkReply(out, id: .null)
            case .line(let bytes):
                // Time passes between lines (0…490 ms, by the line's length); due timers fire first, as in the loop.
                world.now += Int64(bytes.count % 50) * 10
                try fireDueTimers(&world)
                let decoded = bytes.withUnsafeBufferPointer { Envelope.decode($0) }
                switch decoded {
                case .failure(let rejection):
                    if rejection.silent { break }
                    expectedReplies += 1
                    Wire.reply(id: rejection.id, .failure(rejection.error), into: &out)
                    try checkReply(out, id: rejection.id)
                case .success(let request):
                    if request.id != nil { expectedReplies += 1 }
                    let result = try execute(request, &world)
                    if let id = request.id {
                        Wire.reply(id: id, result, into: &out)
                        try checkReply(out, id: id)
                        if case .success(let v) = result, let parsed = try? JSON.parse(out.dropLast()), parsed["result"] != v.json {
                            throw Violation("reply \(String(decoding: out, as: UTF8.self)) does not say \(v.json.text)")
                        }
                    }
                }
            }
            replies += out.filter { $0 == 0x0A }.count
            if world.reducer.state != lastChecked {
                try checkState(world.reducer.state)
                lastChecked = world.reducer.state
            }
            if snapshot == nil && k == units.count / 2 {
                snapshot = Persistence.snapshot(world.reducer.state, limits: limits)
                snapshotJournalOffset = world.journal.count
            }
        }
        if replies != expectedReplies {
            throw Violation("\(replies) reply lines for \(expectedReplies) requests that deserve one")
        }
        // Let every pending timer fire, as the daemon would.
        world.now += 3_600_000
        try fireDueTimers(&world)
        try checkState(world.reducer.state)
        try checkPersistence(final: world.reducer.state, initial: initial, journal: world.journal,
                             snapshot: snapshot, snapshotJournalOffset: snapshotJournalOffset)
    }

    /// What `Server.fireDueTimers` does.
    static func fireDueTimers(_ world: inout World) throws {
        var fired = 0
        while let (key, due) = world.timers.min(by: { $0.value < $1.value }), due <= world.now {
            world.timers[key] = nil
            _ = try apply(.timerFired(key), method: "timer.fired", params: nil, &world)
            fired += 1
            if fired > 10_000 { throw Violation("timers keep firing: \(world.timers)") }
        }
    }

    /// What `Server.handle` does with a request, minus sockets and audio: the same table
    /// (`Methods`) decodes it, the reducer runs its state commands, and the server's own
    /// are answered as the daemon would without sounds or clients.
    static func execute(_ request: Request, _ world: inout World) throws -> Result<Reply, RPCError> {
        let command: Command
        switch Methods.command(for: request, limits: world.reducer.limits) {
        case .failure(let e): return .failure(e)
        case .success(let c): command = c
        }
        let seq = world.reducer.state.seq
        switch command {
        case .state(let cmd):
            return try apply(cmd, method: request.method, params: request.params, &world)
        case .server(let cmd):
            switch cmd {
            case .ping, .unsubscribe: return .success(.empty)
            case .soundList: return .success(.json(.obj(["sounds": .array([])])))
            case .soundReload: return .success(.json(.obj(["sounds": .int(0), "failures": .array([])])))
            case .soundPlay(let name): return .failure(.unknownSound(name))
            case .statsGet: return .success(.json(.obj(["seq": .int(seq)])))
            case .discover: return .success(.json(.obj(["openrpc": .string("1.3.2")])))
            case .stateGet, .subscribe: return .success(.state(seq: seq, world.reducer.state, world.reducer.limits))
            case .clockAdvance, .clockGet, .captureStart, .captureStop:
                return .failure(.invalidRequest("the fuzzer has no manual clock and no capture"))
            }
        }
    }

    /// What `Server.applyStateCommand` does, checking the change.
    static func apply(_ command: StateCommand, method: String, params: JSONValue?, _ world: inout World) throws -> Result<Reply, RPCError> {
        let before = world.reducer.state
        let outcome = world.reducer.reduce(command, at: world.now)
        let after = world.reducer.state
        if after.seq < before.seq { throw Violation("\(method): seq went backwards, \(before.seq) → \(after.seq)") }
        if after.seq == before.seq {
            if after != before { throw Violation("\(method): the state changed but seq stayed \(after.seq)") }
            if !outcome.events.isEmpty { throw Violation("\(method): events without a change: \(outcome.events.map(\.method))") }
            if outcome.effects.contains(where: { if case .play = $0 { return true } else { return false } }) {
                throw Violation("\(method): sounds without a change")
            }
        } else {
            if after.seq != before.seq + 1 { throw Violation("\(method): seq jumped \(before.seq) → \(after.seq)") }
            if outcome.events.isEmpty { throw Violation("\(method): a change published no event") }
            for e in outcome.events {
                if e.params["seq"] != .int(after.seq) {
                    throw Violation("\(method): event \(e.method) carries seq \(e.params["seq"]?.text ?? "none"), the change made \(after.seq)")
                }
                // What a subscriber receives is one line of valid JSON saying the same.
                let line = e.line
                guard line.last == 0x0A, line.firstIndex(of: 0x0A) == line.count - 1,
                      let parsed = try? JSON.parse(line.dropLast()),
                      parsed["method"] == .string(e.method), parsed["params"] == e.params else {
                    throw Violation("event \(e.method) does not encode as one line of JSON: \(String(decoding: line, as: UTF8.self))")
                }
            }
            world.journal += ByteBuffer.collect {
                Persistence.journalLine(seq: after.seq, entry: outcome.journal, method: method, params: params?.raw, into: &$0)
            }
        }
        for effect in outcome.effects {
            switch effect {
            case .play: break
            case let .timer(key, atMs): world.timers[key] = atMs
            case let .cancelTimer(key): world.timers[key] = nil
            }
        }
        switch outcome.reply {
        case .failure:
            if after != before { throw Violation("\(method): failed but changed the state") }
        case .success(let v):
            if case .timerFired = command {} else {
                guard v.json["seq"] == .int(after.seq) else {
                    throw Violation("\(method): reply seq \(v.json["seq"]?.text ?? "none"), state seq \(after.seq)")
                }
            }
        }
        return outcome.reply
    }

    static func checkReply(_ out: [UInt8], id requestID: RequestID) throws {
        let id = requestID.json
        guard out.last == 0x0A, out.firstIndex(of: 0x0A) == out.count - 1 else {
            throw Violation("a reply is not exactly one line: \(String(decoding: out, as: UTF8.self))")
        }
        let reply: JSON
        do { reply = try JSON.parse(out.dropLast()) } catch {
            throw Violation("a reply is not valid JSON (\(error.description)): \(String(decoding: out, as: UTF8.self))")
        }
        guard reply["jsonrpc"] == .string("2.0") else { throw Violation("a reply lacks jsonrpc 2.0") }
        guard reply["id"] == id else { throw Violation("reply id \(reply["id"]?.text ?? "none") for request id \(id.text)") }
        switch (reply["result"], reply["error"]) {
        case (_?, nil): break
        case (nil, let e?):
            guard e["code"]?.intValue != nil, e["message"]?.stringValue?.isEmpty == false,
                  e["data"]?["kind"]?.stringValue != nil else {
                throw Violation("an error reply without code, message or data.kind: \(reply.text)")
            }
        default: throw Violation("a reply needs exactly one of result and error: \(reply.text)")
        }
    }

    // MARK: State invariants

    static func checkState(_ s: BarState) throws {
        let selectable = s.items.filter(\.isSelectable)
        if !selectable.isEmpty {
            guard let sel = s.selected, let item = s.item(sel), item.isSelectable else {
                throw Violation("\(selectable.count) selectable items but selected is \(s.selected ?? "null")")
            }
        } else if s.selected != nil {
            throw Violation("nothing is selectable but \(s.selected!) is selected")
        }
        for (name, ref) in [("previous", s.previous), ("active_action", s.activeAction), ("highlighted", s.highlighted)] {
            if let ref, s.item(ref) == nil { throw Violation("\(name) names \(ref), which is not in the bar") }
        }
        if Set(s.items.map(\.id)).count != s.items.count { throw Violation("duplicate item ids") }
        let json = s.json(limits: limits)
        let shown = s.settings.effective(limits)
        guard case .array(let items)? = json["items"] else { throw Violation("state JSON without items") }
        for item in items {
            guard let visible = item["badge"] else { throw Violation("an item without a badge member") }
            for badge in [visible, item["hidden_badge"] ?? .null] where badge != .null {
            let display = badge["display"]?.stringValue
            switch badge["kind"]?.stringValue {
            case "count":
                guard let n = badge["value"]?.intValue, n > 0 else { throw Violation("count badge \(badge.text) is not positive") }
                let want = n > shown.maxBadgeCount ? "\(shown.maxBadgeCount)+" : String(n)
                if display != want { throw Violation("count \(n) displays \(display ?? "nothing"), expected \(want)") }
            case "text":
                guard let t = badge["value"]?.stringValue, !t.isEmpty else { throw Violation("text badge \(badge.text) is empty") }
                let want = t.count > shown.maxBadgeChars ? String(t.prefix(max(0, shown.maxBadgeChars - 1))) + "…" : t
                if display != want { throw Violation("text badge displays \(display ?? "nothing"), expected \(want)") }
                if (display ?? "").count > max(1, shown.maxBadgeChars) { throw Violation("badge display longer than max_chars") }
            case "dot":
                if display != "" || badge["value"] != nil { throw Violation("dot badge \(badge.text)") }
            default:
                throw Violation("badge of unknown kind: \(badge.text)")
            }
            }
        }
        // Codec round trip: what subscribers and the snapshot carry decodes to the same state.
        let text = json.encoded()
        let parsed: JSON
        do { parsed = try JSON.parse(text) } catch { throw Violation("state JSON does not parse: \(error.description)") }
        if parsed != json { throw Violation("state JSON changes when parsed back") }
        let back: BarState
        do { back = try BarState.decode(parsed, seq: s.seq, limits: limits) } catch {
            throw Violation("state does not decode: \(error.message) — \(String(decoding: text, as: UTF8.self))")
        }
        if back != Persistence.restored(s) { throw Violation("state differs after a JSON round trip: \(String(decoding: text, as: UTF8.self))") }
        if let e = Reducer.validate(back.items, limits: limits) { throw Violation("a decoded state fails validation: \(e.message)") }
    }

    static func checkPersistence(final: BarState, initial: BarState, journal: [UInt8],
                                 snapshot: [UInt8]?, snapshotJournalOffset: Int) throws {
        let want = Persistence.restored(final)
        var replayer = Persistence.Replayer(Reducer(state: initial, limits: limits))
        replayer.feed(journal)
        if let bad = replayer.bad { throw Violation("the journal does not replay: \(bad)") }
        if replayer.torn { throw Violation("the journal ends without a newline") }
        if Persistence.restored(replayer.reducer.state) != want {
            throw Violation("replaying the journal from the start gives another state: \(Persistence.restored(replayer.reducer.state).json().text) vs \(want.json().text)")
        }
        try checkGroupedJournal(journal, initial: initial, want: want)
        if let snapshot {
            let base: BarState
            do { base = try Persistence.decodeSnapshot(snapshot, limits: limits) } catch {
                throw Violation("a snapshot does not load: \(error)")
            }
            // The whole journal is fed: entries already in the snapshot must be skipped.
            var r = Persistence.Replayer(Reducer(state: base, limits: limits))
            r.feed(journal)
            if Persistence.restored(r.reducer.state) != want {
                throw Violation("snapshot at journal byte \(snapshotJournalOffset) + journal gives another state")
            }
        }
    }

    /// The same journal in groups, as the daemon writes it (`JournalGroup`, a few lines a
    /// group): it replays to the same state. Then cut at a byte that depends on the input and
    /// followed by other bytes (the journal's format-1 form, as a reused file's old bytes):
    /// the state of the groups the file still holds whole, never more, never corruption.
    static func checkGroupedJournal(_ journal: [UInt8], initial: BarState, want: BarState) throws {
        var grouped = JournalGroup.group(seq: initial.seq, entries: 0, lines: [])
        let marker = grouped.count
        var ends: [(grouped: Int, plain: Int)] = []
        let perGroup = 1 + journal.count % 4
        var start = 0, lineCount = 0
        var k = 0
        while k < journal.count {
            let nl = journal[k...].firstIndex(of: 0x0A) ?? journal.count - 1
            lineCount += 1
            k = nl + 1
            if lineCount == perGroup || k == journal.count {
                let lines = Array(journal[start..<k])
                // The group's seq is its last line's: {"seq":N,…
                let lastStart = lines.dropLast().lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
                let digits = lines[lastStart...].dropFirst(7).prefix { $0 >= 0x30 && $0 <= 0x39 }
                guard lines[lastStart...].starts(with: Array(#"{"seq":"#.utf8)), let last = UInt64(String(decoding: digits, as: UTF8.self)) else {
                    throw Violation("a journal line does not start with its seq")
                }
                grouped += JournalGroup.group(seq: last, entries: lineCount, lines: lines)
                ends.append((grouped.count, k))
                start = k
                lineCount = 0
            }
        }
        func replay(_ bytes: [UInt8]) -> Persistence.Replayer {
            var r = Persistence.Replayer(Reducer(state: initial, limits: limits))
            r.feed(bytes)
            r.finish()
            return r
        }
        let whole = replay(grouped)
        if let why = whole.bad ?? whole.ended { throw Violation("the grouped journal does not replay: \(why)") }
        if whole.torn || Persistence.restored(whole.reducer.state) != want {
            throw Violation("replaying the grouped journal gives another state")
        }
        var h: UInt64 = 14_695_981_039_346_656_037
        for b in journal { h = (h ^ UInt64(b)) &* 1_099_511_628_211 }
        // Not inside the marker: it is one write of under 130 bytes at offset 0, within one page
        // and one sector, which neither a kill nor a power cut splits.
        let cut = marker + Int(h % UInt64(grouped.count - marker + 1))
        let file = Array(grouped[..<cut]) + journal
        let differs = (cut..<min(file.count, grouped.count)).first { file[$0] != grouped[$0] } ?? min(file.count, grouped.count)
        let plainEnd = ends.last { $0.grouped <= differs }?.plain ?? 0
        var expected = Persistence.Replayer(Reducer(state: initial, limits: limits))
        expected.feed(Array(journal[..<plainEnd]))
        let r = replay(file)
        if let bad = r.bad { throw Violation("a grouped journal cut at byte \(cut) reads as corrupt: \(bad)") }
        if Persistence.restored(r.reducer.state) != Persistence.restored(expected.reducer.state) {
            throw Violation("a grouped journal cut at byte \(cut) and followed by old bytes replays to another state than its whole groups")
        }
    }
}
