import Testing
@testable import TabBarCore

/// The server reduces every command into one reused `Outcome` (`reduce(_:at:into:)`), taking
/// the reply of a change and leaving that of a command that changes nothing in place. A
/// step must then say exactly what a fresh outcome says, whatever the last one left: a
/// reply taken, or one of any shape still there.
@Suite struct OutcomeReuseTests {
    static let lines: [(String, String)] = [
        ("tab.select", #"{"tab":"chat"}"#),
        ("tab.select", #"{"tab":"chat"}"#),
        ("badge.set", #"{"tab":"home","count":3}"#),
        ("tab.select", #"{"tab":"nope"}"#),
        ("touch", #"{"phase":"down","x":30,"y":20}"#),
        ("touch", #"{"phase":"up","x":30,"y":20}"#),
        ("touch", #"{"phase":"up","x":30,"y":20}"#),
        ("feedback.set", #"{"volume":0.5}"#),
        ("feedback.set", #"{"volume":0.5}"#),
        ("bar.set_hidden", #"{"hidden":true}"#),
        ("action.trigger", #"{"tab":"post"}"#),
        ("action.finish", #"{"tab":"post"}"#),
        ("tab.select", #"{"index":1,"if_seq":0}"#),
    ]

    func command(_ method: String, _ params: String, _ limits: Limits) -> StateCommand? {
        let request = Request(id: .int(1), method: method, params: try! JSON.parse(params))
        guard case .success(.state(let cmd)) = Methods.command(for: request, limits: limits) else { return nil }
        return cmd
    }

    @Test(arguments: [false, true])
    func aReusedOutcomeSaysWhatAFreshOneSays(takingTheReply: Bool) throws {
        var fresh = Reducer(), reused = Reducer()
        var out = Outcome(reply: .success(.none))
        for (k, (method, params)) in Self.lines.enumerated() {
            let cmd = try #require(command(method, params, fresh.limits), "\(method) \(params)")
            let want = fresh.reduce(cmd, at: Int64(k))
            reused.reduce(cmd, at: Int64(k), into: &out)
            #expect(out == want, "step \(k): \(method) \(params)")
            if takingTheReply { #expect(out.takeReply() == want.reply) }
        }
        #expect(fresh.state == reused.state)
    }
}
