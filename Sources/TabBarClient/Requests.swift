import TabBarCore

/// The typed methods' requests: each a method of the daemon's table (`Methods.all`) and its
/// params, written straight into the request line (no `JSON` tree is built per request).
/// `RequestsTests` decodes every one with the table's own decoder (from the bytes written),
/// so a method renamed or a param changed there fails the tests, not a front end.
enum Requests {
    /// A request: its method and what writes its params object (nil: no params).
    struct Line {
        let method: String
        let write: ((inout ByteBuffer) -> Void)?

        init(_ method: String, _ write: ((inout ByteBuffer) -> Void)? = nil) {
            self.method = method
            self.write = write
        }

        /// The params as the daemon reads them (for the tests).
        var params: JSON? { write.map { w in try! JSON.parse(ByteBuffer.collect(w)) } }
    }

    static func ping() -> Line { Line("ping") }
    static func stateGet() -> Line { Line("state.get") }
    static func configure(_ params: JSON) -> Line { Line("bar.configure") { $0.json(params) } }

    static func select(_ tab: TabRef, ifSeq: UInt64?, source: Source) -> Line {
        Line("tab.select") { b in
            switch tab {
            case .id(let id):
                b.put(#"{"tab":"#)
                b.string(id)
            case .index(let k):
                b.put(#"{"index":"#)
                b.int(k)
            }
            if let ifSeq {
                b.put(#","if_seq":"#)
                b.uint(ifSeq)
            }
            closeWithSource(&b, source)
        }
    }

    static func trigger(_ tab: String, source: Source) -> Line {
        Line("action.trigger") { b in
            b.put(#"{"tab":"#)
            b.string(tab)
            closeWithSource(&b, source)
        }
    }

    static func finishAction(_ tab: String) -> Line { Line("action.finish") { tabOnly(&$0, tab) } }

    /// `badge` nil removes it (`count` 0); `hidden` nil keeps whether it is hidden.
    static func setBadge(_ badge: Badge?, on tab: String, hidden: Bool?) -> Line {
        Line("badge.set") { b in
            b.put(#"{"tab":"#)
            b.string(tab)
            switch badge {
            case .count(let n)?:
                b.put(#","count":"#)
                b.int(n)
            case .text(let t)?:
                b.put(#","text":"#)
                b.string(t)
            case .dot?: b.put(#","dot":true"#)
            case nil: b.put(#","count":0"#)
            }
            if let hidden {
                b.put(#","hidden":"#)
                b.bool(hidden)
            }
            b.append(UInt8(ascii: "}"))
        }
    }

    static func hideBadge(_ hidden: Bool, on tab: String) -> Line {
        Line("badge.set") { b in
            b.put(#"{"tab":"#)
            b.string(tab)
            b.put(#","hidden":"#)
            b.bool(hidden)
            b.append(UInt8(ascii: "}"))
        }
    }

    static func clearBadge(on tab: String) -> Line { Line("badge.clear") { tabOnly(&$0, tab) } }

    static func setFeedback(profile: FeedbackProfile?, volume: Double?) -> Line {
        Line("feedback.set") { b in
            b.append(UInt8(ascii: "{"))
            if let profile {
                b.put(#""profile":"#)
                b.string(profile.rawValue)
            }
            if let volume {
                if profile != nil { b.append(UInt8(ascii: ",")) }
                b.put(#""volume":"#)
                b.double(volume)
            }
            b.append(UInt8(ascii: "}"))
        }
    }

    static func touch(_ phase: TouchPhase, x: Double, y: Double, touchID: Int?) -> Line {
        Line("touch") { b in
            b.put(#"{"phase":"#)
            b.string(phase.rawValue)
            b.put(#","x":"#)
            b.double(x)
            b.put(#","y":"#)
            b.double(y)
            if let touchID {
                b.put(#","touch_id":"#)
                b.int(touchID)
            }
            b.append(UInt8(ascii: "}"))
        }
    }

    static func highlight(_ tab: String, _ phase: HighlightPhase) -> Line {
        Line("tab.highlight") { b in
            b.put(#"{"tab":"#)
            b.string(tab)
            b.put(#","phase":"#)
            b.string(phase.rawValue)
            b.append(UInt8(ascii: "}"))
        }
    }

    static func push(hidesBar: Bool) -> Line {
        Line("nav.push") { b in
            b.put(#"{"hides_bar":"#)
            b.bool(hidesBar)
            b.append(UInt8(ascii: "}"))
        }
    }

    static func pop() -> Line { Line("nav.pop") }

    static func playSound(_ name: String) -> Line {
        Line("sound.play") { b in
            b.put(#"{"name":"#)
            b.string(name)
            b.append(UInt8(ascii: "}"))
        }
    }

    static func subscribe(_ topics: [String]?) -> Line {
        guard let topics else { return Line("subscribe") }
        return Line("subscribe") { b in
            b.put(#"{"topics":["#)
            for (i, t) in topics.enumerated() {
                if i > 0 { b.append(UInt8(ascii: ",")) }
                b.string(t)
            }
            b.put("]}")
        }
    }

    static func unsubscribe() -> Line { Line("unsubscribe") }

    static func advanceClock(ms: Int) -> Line {
        Line("clock.advance") { b in
            b.put(#"{"ms":"#)
            b.int(ms)
            b.append(UInt8(ascii: "}"))
        }
    }

    /// `{"tab": tab}`.
    /// `,"source":…` unless it is the default (`user`), then the params' closing brace.
    private static func closeWithSource(_ b: inout ByteBuffer, _ source: Source) {
        if source != .user {
            b.put(#","source":"#)
            b.string(source.rawValue)
        }
        b.append(UInt8(ascii: "}"))
    }

    private static func tabOnly(_ b: inout ByteBuffer, _ tab: String) {
        b.put(#"{"tab":"#)
        b.string(tab)
        b.append(UInt8(ascii: "}"))
    }
}
