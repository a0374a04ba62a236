import Testing
@testable import TabBarClient

/// The typed client's requests are the daemon's: each decodes, with the method table's own
/// decoder, to the command it means — so a method renamed or a param changed in the table
/// fails here.
@Suite struct TypedRequestsTests {
    func decoded(_ line: Requests.Line) throws -> Command {
        let spec = try #require(Methods.spec(named: line.method), "no method \(line.method) in the table")
        return try spec.decode(try Params(json: line.params), Limits())
    }

    @Test func everyTypedRequestDecodesToItsCommand() throws {
        #expect(try decoded(Requests.ping()) == .server(.ping))
        #expect(try decoded(Requests.stateGet()) == .server(.stateGet))
        #expect(try decoded(Requests.select(.id("chat"), ifSeq: nil, source: .user)) == .state(.select(.id("chat"), ifSeq: nil, source: .user)))
        #expect(try decoded(Requests.select(.index(2), ifSeq: 7, source: .program)) == .state(.select(.index(2), ifSeq: 7, source: .program)))
        #expect(try decoded(Requests.trigger("cam", source: .program)) == .state(.actionTrigger("cam", source: .program)))
        #expect(try decoded(Requests.finishAction("cam")) == .state(.actionFinish("cam")))
        #expect(try decoded(Requests.setBadge(.count(120), on: "chat", hidden: nil)) == .state(.badgeSet("chat", BadgeUpdate(value: .set(.count(120)), hidden: nil))))
        #expect(try decoded(Requests.setBadge(.text("new"), on: "me", hidden: true)) == .state(.badgeSet("me", BadgeUpdate(value: .set(.text("new")), hidden: true))))
        #expect(try decoded(Requests.setBadge(.dot, on: "me", hidden: nil)) == .state(.badgeSet("me", BadgeUpdate(value: .set(.dot), hidden: nil))))
        #expect(try decoded(Requests.setBadge(nil, on: "me", hidden: nil)) == .state(.badgeSet("me", BadgeUpdate(value: .remove, hidden: nil))))
        #expect(try decoded(Requests.hideBadge(true, on: "me")) == .state(.badgeSet("me", BadgeUpdate(value: .keep, hidden: true))))
        #expect(try decoded(Requests.clearBadge(on: "me")) == .state(.badgeClear("me")))
        #expect(try decoded(Requests.setFeedback(profile: .quiet, volume: 0.5)) == .state(.feedbackSet(profile: .quiet, volume: 0.5)))
        #expect(try decoded(Requests.touch(.up, x: 260.5, y: 20, touchID: 9)) == .state(.touch(.up, x: 260.5, y: 20, touchID: 9)))
        #expect(try decoded(Requests.highlight("chat", .begin)) == .state(.highlight("chat", .begin)))
        #expect(try decoded(Requests.push(hidesBar: true)) == .state(.navPush(hidesBar: true)))
        #expect(try decoded(Requests.pop()) == .state(.navPop))
        #expect(try decoded(Requests.playSound("click")) == .server(.soundPlay("click")))
        #expect(try decoded(Requests.subscribe(["tab", "badge.changed"])) == .server(.subscribe(topics: ["tab", "badge.changed"])))
        #expect(try decoded(Requests.subscribe(nil)) == .server(.subscribe(topics: nil)))
        #expect(try decoded(Requests.unsubscribe()) == .server(.unsubscribe))
        #expect(try decoded(Requests.advanceClock(ms: 500)) == .server(.clockAdvance(ms: 500)))
    }

    /// The typed requests write their lines themselves (no `JSON` tree): byte for byte the
    /// line the raw encoder makes of the same params.
    @Test func typedLinesAreTheRawEncodersBytes() throws {
        let lines: [Requests.Line] = [
            Requests.ping(), Requests.select(.id("a\"b\n\u{1}é"), ifSeq: nil, source: .user),
            Requests.select(.index(2), ifSeq: 7, source: .program), Requests.select(.index(-1), ifSeq: .max, source: .user),
            Requests.trigger("cam", source: .program), Requests.trigger("cam", source: .user), Requests.finishAction("cam"),
            Requests.setBadge(.count(120), on: "chat", hidden: nil), Requests.setBadge(.text("new"), on: "me", hidden: true),
            Requests.setBadge(.dot, on: "me", hidden: false), Requests.setBadge(nil, on: "me", hidden: nil),
            Requests.hideBadge(true, on: "me"), Requests.clearBadge(on: "me"),
            Requests.setFeedback(profile: .quiet, volume: 0.5), Requests.setFeedback(profile: nil, volume: 1),
            Requests.setFeedback(profile: .full, volume: nil), Requests.setFeedback(profile: nil, volume: nil),
            Requests.touch(.up, x: 260.5, y: 20, touchID: 9), Requests.touch(.down, x: 1e-7, y: 1e300, touchID: nil),
            Requests.highlight("chat", .begin), Requests.push(hidesBar: true), Requests.pop(), Requests.playSound("click"),
            Requests.subscribe(["tab", "badge.changed"]), Requests.subscribe([]), Requests.subscribe(nil),
            Requests.unsubscribe(), Requests.advanceClock(ms: 500),
            Requests.configure(["items": [["id": "home", "title": "Home"]], "selected": "home"]),
        ]
        for r in lines {
            let typed = String(decoding: Wire.requestLine(id: 4, r), as: UTF8.self)
            let raw = String(decoding: Wire.requestLine(id: 4, method: r.method, params: r.params), as: UTF8.self)
            #expect(typed == raw)
            #expect(Wire.requestLine(id: nil, r) == Wire.requestLine(id: nil, method: r.method, params: r.params))
        }
    }

    /// Every event the daemon declares (`Topics.declared`) has a typed case: decoding it with
    /// no params is refused (its members are checked) instead of passing as `.other`.
    @Test func everyDeclaredEventIsTyped() throws {
        for name in Topics.events {
            let event = try? TabBarEvent(name: name, params: [:])
            if case .other? = event { Issue.record("\(name) decodes as .other: the client has no case for it") }
            if let event, event.name != name { Issue.record("\(name) decodes as \(event.name)") }
        }
        #expect(throws: ClientError.self) { try TabBarEvent(name: "tab.selected", params: ["seq": 1]) }
        #expect(try TabBarEvent(name: "tab.selected", params: ["seq": 3, "tab": "chat", "previous": nil, "source": "user"])
                == .tabSelected(seq: 3, tab: "chat", previous: nil, source: .user))
        #expect(try TabBarEvent(name: "some.future", params: ["x": 1]) == .other(name: "some.future", params: ["x": 1]))
    }

    /// The topics the client names are those `subscribe` takes.
    @Test func theNamedTopicsAreTheDaemons() {
        let named: [Topic] = [.tab, .action, .badge, .bar, .animation, .feedback, .sound]
        for t in named { #expect(Topics.isKnown(t.name), "\(t) is no topic of the daemon's") }
        #expect(Set(named.map(\.name)).isSuperset(of: Topics.prefixes.filter { $0 != "server" && $0 != "state" }))
    }

    @Test func jsonLiterals() {
        let j: JSON = ["tab": "chat", "count": 3, "dot": true, "v": 0.5, "none": nil, "list": [1, "a"]]
        #expect(j.text == #"{"tab":"chat","count":3,"dot":true,"v":0.5,"none":null,"list":[1,"a"]}"#)
    }
}
