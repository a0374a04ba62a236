import Testing
@testable import TabBarCore

/// An item's id reaches every reply, event and journal line it is written in, quoted and
/// escaped — an id with quotes, a backslash and non-ASCII included — and a previous tab that
/// is no longer on the bar is written from its id.
@Suite struct ItemIdOutputTests {
    static let odd = #"tab "one"\ é €"# + String(repeating: "x", count: 20)

    @Test func everyOutputOfASelectAndATouchCarriesTheId() throws {
        var r = Reducer()
        let items = #"{"items":[{"id":"home"},{"id":\#(String(decoding: JSON.string(Self.odd).encoded(), as: UTF8.self))},{"id":"me"}],"selected":"home"}"#
        #expect(run(&r, "bar.configure", items).error == nil)
        let o = run(&r, "tab.select", #"{"index":1}"#)
        #expect(o.value?["selected"] == .string(Self.odd))
        #expect(o.value?["previous"] == .string("home"))
        #expect(o.events.map(\.params["tab"]) == [.string(Self.odd)])
        // A tap on the third of three tabs (375 points wide): highlight, then select.
        let down = run(&r, "touch", #"{"phase":"down","x":300,"y":20}"#)
        #expect(down.value?["target"] == .string("me"))
        let up = run(&r, "touch", #"{"phase":"up","x":300,"y":20}"#)
        #expect(up.events.map(\.method) == ["tab.highlighted", "tab.selected"])
        #expect(up.events.last?.params["previous"] == .string(Self.odd))
        let line = String(decoding: journalLine(seq: 9, entry: try #require(up.journal)), as: UTF8.self)
        #expect(line == #"{"seq":9,"method":"tab.select","params":{"tab":"me","source":"user"}}"# + "\n")
        // Back on the odd tab by touch: its id in the reply and the journal line, escaped.
        _ = run(&r, "touch", #"{"phase":"down","x":187,"y":20}"#)
        let up2 = run(&r, "touch", #"{"phase":"up","x":187,"y":20}"#)
        #expect(up2.value?["target"] == .string(Self.odd))
        let line2 = try JSON.parse(journalLine(seq: 10, entry: try #require(up2.journal)))
        #expect(line2["params"]?["tab"] == .string(Self.odd))
    }

    @Test func aPreviousTabNoLongerOnTheBarIsWrittenFromItsId() {
        var r = Reducer()
        _ = run(&r, "tab.select", #"{"tab":"chat"}"#)
        // "home", the previous tab, leaves the bar; selecting "chat" again is a reselect
        // whose reply still names the previous tab the state keeps.
        #expect(run(&r, "bar.configure", #"{"items":[{"id":"nearby"},{"id":"chat"},{"id":"me"}]}"#).error == nil)
        let o = run(&r, "tab.select", #"{"tab":"chat"}"#)
        #expect(r.state.items.allSatisfy { $0.id != r.state.previous })
        #expect(o.value?["previous"] == (r.state.previous.map { JSON.string($0) } ?? .null))
        #expect(o.value?["reselected"] == .bool(true))
    }
}
