import Testing
@testable import TabBarCore

/// A reply is written whole whatever room its buffer has left: ids of every length, after
/// text already queued, in buffers that must grow at any byte of the line.
@Suite struct WritesReplyTests {
    @Test func idsOfEveryLengthAcrossTheInlineEdge() {
        for n in 0...40 {
            for before in [0, 1, 7, 31] {
                let ids: [(RequestID, String)] = [
                    (.string(String(repeating: "i", count: n)), "\"" + String(repeating: "i", count: n) + "\""),
                    (.number(n == 0 ? "0" : String(repeating: "7", count: n)), n == 0 ? "0" : String(repeating: "7", count: n)),
                ]
                for (id, text) in ids {
                    var o = ByteBuffer(capacity: 4)
                    for _ in 0..<before { o.append(UInt8(ascii: ".")) }
                    Wire.reply(id: id, .success(.seq(42)), into: &o)
                    o.put("|")
                    #expect(String(decoding: o.bytes, as: UTF8.self)
                            == String(repeating: ".", count: before) + #"{"jsonrpc":"2.0","id":\#(text),"result":{"seq":42}}"# + "\n|",
                            "id of \(text.utf8.count) bytes after \(before)")
                }
            }
        }
    }

    /// Every shape of reply is one line: the head, the value the tree encoder writes for
    /// it, the end (a general value's head written before its checked pieces, a typed
    /// value's in its one reservation).
    @Test func everyReplyShapeIsWrittenAsOneLine() {
        let texts: [String] = [#"{}"#, #"{"seq":3}"#, #"{"seq":1,"feedback":{"profile":"full","volume":0.5}}"#,
                               #"{"seq":2,"animation":-7}"#, #"{"stats":[1,"two",null]}"#, "null"]
        let replies: [Reply] = [.empty, .seq(3), .feedback(seq: 1, Feedback(volume: 0.5)), .animation(seq: 2, id: -7),
                                .json(try! JSON.parse(Array(#"{"stats":[1,"two",null]}"#.utf8))), .none]
        for (reply, text) in zip(replies, texts) {
            for id in [RequestID.int(100_000), .string(String(repeating: "long id ", count: 6))] {
                var line: [UInt8] = []
                Wire.reply(id: id, .success(reply), into: &line)
                let want = #"{"jsonrpc":"2.0","id":\#(id),"result":\#(text)}"# + "\n"
                #expect(String(decoding: line, as: UTF8.self) == want)
                // The same line where the buffer runs out of room at each of its bytes.
                for before in 0..<(want.utf8.count + 2) {
                    var o = ByteBuffer(capacity: want.utf8.count + 1)
                    for _ in 0..<before { o.append(UInt8(ascii: ".")) }
                    Wire.reply(id: id, .success(reply), into: &o)
                    #expect(String(decoding: o.bytes, as: UTF8.self) == String(repeating: ".", count: before) + want,
                            "\(text) after \(before) bytes")
                }
            }
        }
    }
}

/// An event's line names its method (`BarEvent.name`, which is also its topic), and is the
/// notification of its params; every event has a name of its own.
@Suite struct WritesEventNameTests {
    @Test func everyEventsLineNamesItsMethod() {
        let item = Item(id: "home")
        let state = BarState(items: [item])
        let events: [BarEvent] = [
            .tabSelected(seq: 1, tab: "home", previous: nil, source: .user),
            .tabReselected(seq: 2, tab: "home", source: .program),
            .actionTriggered(seq: 3, tab: "home", action: "go"),
            .actionFinished(seq: 4, tab: "home"),
            .badgeChanged(seq: 5, item, Limits()),
            .barConfigured(seq: 6, state, Limits()),
            .barVisibility(seq: 7, Visibility(), durationMs: 250),
            .feedbackChanged(seq: 8, Feedback()),
            .tabHighlighted(seq: 9, tab: "home", phase: .begin),
            .animationCue(seq: 10, tab: nil, trigger: .visibility, kind: .pulse, descriptor: .obj(["a": .int(1)]), sound: nil),
            .animationBegan(seq: 11, ActiveAnimation(id: 11, kind: "spin", tab: "home", durationMs: 300, startMs: 0)),
            .animationEnded(seq: 12, id: 11, reason: .finished),
        ]
        var names = Set<String>()
        for e in events {
            let line = String(decoding: e.line, as: UTF8.self)
            let params = String(decoding: ByteBuffer.collect { e.writeParams(into: &$0) }, as: UTF8.self)
            #expect(line == #"{"jsonrpc":"2.0","method":"\#(e.method)","params":\#(params)}"# + "\n")
            names.insert(e.method)
        }
        #expect(names.count == 12)
    }

    @Test func everyHighlightPhaseIsWrittenAsItsRawValue() {
        for phase in HighlightPhase.allCases {
            let line = String(decoding: BarEvent.tabHighlighted(seq: 1, tab: "a", phase: phase).line, as: UTF8.self)
            #expect(line.hasSuffix(#","phase":"\#(phase.rawValue)"}}"# + "\n"))
        }
    }
}
