import Testing
@testable import TabBarCore

/// The pieces of the plain select path that the server differential tests
/// (`FastPathTests`) do not reach one by one.
@Suite struct PlainSelectTests {
    @Test func digitsCountUpLikeFormattingAfresh() {
        var d = Digits(0)
        for v in UInt64(1)...12_000 {
            d = d.next(v)
            #expect(d == Digits(v), "\(v)")
            if d != Digits(v) { return }
        }
        for (from, to) in [(UInt64(9), UInt64(10)), (99, 100), (999_999, 1_000_000), (5, 7), (100, 99), (41, 0),
                           (UInt64.max - 1, UInt64.max)] {
            #expect(Digits(from).next(to) == Digits(to), "\(from) → \(to)")
        }
        var w = [UInt8](repeating: 0, count: 32)
        let text = w.withUnsafeMutableBufferPointer { buf in
            var writer = ByteWriter(base: buf.baseAddress!, capacity: buf.count)
            writer.put(Digits(18_446_744_073_709_551_615))
            return String(decoding: writer.bytes, as: UTF8.self)
        }
        #expect(text == "18446744073709551615")
    }

    @Test func aWriterThatRunsOutOfRoomFailsInsteadOfCutting() {
        var w = [UInt8](repeating: 0, count: 8)
        w.withUnsafeMutableBufferPointer { buf in
            var writer = ByteWriter(base: buf.baseAddress!, capacity: buf.count)
            writer.put(#""home""#)
            #expect(!writer.failed && writer.count == 6)
            writer.put(#""chat""#)
            #expect(writer.failed)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == #""home""#)
        }
    }

    /// Journals written by both paths replay to the same state whether `tab.select`
    /// entries are read byte by byte or as JSON.
    @Test func journalReplayByBytesMatchesReplayAsJSON() {
        let lines = [
            #"{"seq":1,"method":"tab.select","params":{"index":1,"source":"program"}}"#,
            #"{"seq":2,"method":"tab.select","params":{"tab":"chat"}}"#,
            #"{"seq":3,"method":"tab.select","params":{"source":"user","tab":"chat"}}"#,
            #"{"seq":4,"method":"badge.set","params":{"tab":"me","count":5}}"#,
            #"{"seq":5,"method":"bar.configure","params":{"settings":{"animation":"pulse"}}}"#,
            #"{"seq":6,"method":"tab.select","params":{"index":0}}"#,
            #"{"seq":7,"method":"tab.select","params":{"tab":"nope"}}"#,
            #"{"seq":8,"method":"tab.select","params":{"index":2}}"#,
            #"{"seq":9,"method":"bar.configure","params":{"settings":{"animation":"none"}}}"#,
            #"{"seq":10,"method":"tab.select","params":{"index":4,"if_seq":9}}"#,
            #"{"seq":11,"method":"tab.select","params":{"index":3}}"#,
            #"{"seq":11,"method":"tab.select","params":{"index":1}}"#,  // not after seq 11: skipped
            #"{"seq":12,"method":"tab.select","params":{ "index" : 1 }}"#,
            #"{"seq":13,"method":"tab.select","params":{"index":1}}   "#,
        ]
        let journal = Array(lines.joined(separator: "\n").utf8) + [0x0A]
        var fast = Persistence.Replayer(Reducer())
        var slow = Persistence.Replayer(Reducer())
        slow.fast = false
        // Fed in small pieces too: lines cut across chunks.
        for start in stride(from: 0, to: journal.count, by: 7) {
            fast.feed(Array(journal[start..<min(journal.count, start + 7)]))
        }
        slow.feed(journal)
        #expect(fast.bad == nil && slow.bad == nil)
        #expect(fast.applied == slow.applied && fast.good == slow.good && fast.goodBytes == slow.goodBytes)
        #expect(fast.reducer.state == slow.reducer.state)
        #expect(fast.reducer.state.seq == 13 && fast.reducer.state.selected == "nearby")
    }

    /// On random bars the index plans exactly the selects the reducer calls plain, except
    /// those that would have to write an id needing an escape; and committing the plan
    /// keeps the index equal to one built afresh.
    @Test func theIndexAgreesWithTheReducerOnRandomBars() {
        var rng = SystemRandomNumberGenerator()
        let ids = ["home", "chat", "q\"uote", "me", "b\\s", "nearby", "é"]
        var planned = 0
        for _ in 0..<6000 {
            let n = Int.random(in: 1...5, using: &rng)
            let items = ids.shuffled(using: &rng).prefix(n).map { id in
                Item(id: id, kind: Int.random(in: 0..<5, using: &rng) == 0 ? .action : .tab,
                     enabled: Int.random(in: 0..<6, using: &rng) != 0,
                     animation: Int.random(in: 0..<4, using: &rng) == 0 ? AnimationStyle.allCases.randomElement(using: &rng) : nil)
            }
            var state = BarState(seq: UInt64.random(in: 0...1000, using: &rng), items: items,
                                 selected: items.randomElement(using: &rng)?.id, previous: Bool.random(using: &rng) ? items.randomElement(using: &rng)?.id : nil)
            if Int.random(in: 0..<4, using: &rng) == 0 { state.settings.animation = AnimationStyle.allCases.randomElement(using: &rng)! }
            if Int.random(in: 0..<6, using: &rng) == 0 { state.visibility.reasons = [.scroll] }
            let reducer = Reducer(state: state)
            var index = PlainSelectIndex(state)
            let target = Int.random(in: -1...n, using: &rng)
            let line: String = Bool.random(using: &rng) || target < 0 || target >= n
                ? #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"index":\#(target)}}"#
                : #"{"jsonrpc":"2.0","id":1,"method":"tab.select","params":{"tab":"\#(items[target].id)"}}"#
            let bytes: [UInt8] = Array(line.utf8)
            bytes.withUnsafeBufferPointer { (b: UnsafeBufferPointer<UInt8>) -> Void in
                guard let fast = FastSelect.scan(b, maxIDLength: 64) else { return }  // escapes, non-ASCII: no fast path
                let reference = reducer.plainSelectTarget(fast, b)
                guard let plan = index.plan(fast, b, seq: state.seq + 1) else {
                    if let k = reference {
                        let newPrevious: String? = state.selected == items[k].id ? state.previous : state.selected
                        let written: [String] = [items[k].id] + (newPrevious.map { [$0] } ?? [])
                        #expect(written.contains { $0.contains("\"") || $0.contains("\\") },
                                "the index refused a plain select of \(items[k].id) in \(state)")
                    }
                    return
                }
                planned += 1
                #expect(reference == plan.k, "the index planned \(plan.k), the reducer \(String(describing: reference)) in \(state)")
                var next = reducer
                _ = next.commitPlainSelect(plan.k, source: fast.source)
                index.committed(plan)
                let fresh = PlainSelectIndex(next.state)
                #expect(index.selected == fresh.selected && index.previous == fresh.previous)
            }
        }
        #expect(planned > 300, "only \(planned) plain selects planned")
    }
}
