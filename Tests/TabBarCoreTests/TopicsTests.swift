import Testing
@testable import TabBarCore

/// `subscribe` takes only topics that name events (issue 36), and `touch_id` only safe integers.
@Suite struct TopicsTests {
    func command(_ method: String, _ params: JSON) -> Result<Command, RPCError> {
        Methods.command(for: Request(id: .int(1), method: method, params: params), limits: Limits())
    }

    @Test func anUnknownTopicIsRefusedNamingItAndTheTopics() {
        for typo in ["tabs", "tab.", "ta", "tab.selected.x", "Tab", "badge.change"] {
            guard case .failure(let e) = command("subscribe", .obj(["topics": .array([.string("tab"), .string(typo)])])) else {
                Issue.record("topic \(typo) accepted"); continue
            }
            #expect(e.kind == "invalid_params")
            #expect(e.field == "topics[1]")
            #expect(e.message.contains("\"\(typo)\""), "\(e.message)")
            for p in ["tab", "action", "badge", "bar", "animation", "feedback", "sound", "server", "state"] {
                #expect(e.message.contains(p), "\(e.message) lists \(p)")
            }
        }
    }

    @Test func everyEventNameAndFirstPartIsATopic() {
        for t in Topics.all {
            guard case .success(.server(.subscribe(let got))) = command("subscribe", .obj(["topics": .array([.string(t)])])) else {
                Issue.record("topic \(t) refused"); continue
            }
            #expect(got == [t])
        }
        #expect(Topics.prefixes == ["tab", "action", "badge", "bar", "animation", "feedback", "sound", "server", "state"])
    }

    @Test func aPrefixMatchesOnlyAtADot() {
        #expect(Topics.matches("tab", "tab.selected"))
        #expect(Topics.matches("tab.selected", "tab.selected"))
        #expect(!Topics.matches("ta", "tab.selected"))
        #expect(!Topics.matches("tab", "tabs.x"))
    }

    @Test func touchIDTakesTheSafeIntegersNotOneMore() {
        let safe = 9_007_199_254_740_991
        guard case .success(.state(.touch(_, _, _, let id))) = command("touch", .obj(["phase": .string("down"), "x": .int(1), "y": .int(1), "touch_id": .int(safe)])) else {
            Issue.record("touch_id \(safe) refused"); return
        }
        #expect(id == safe)
        guard case .failure(let e) = command("touch", .obj(["phase": .string("down"), "x": .int(1), "y": .int(1), "touch_id": .int(safe + 1)])) else {
            Issue.record("touch_id 2^53 accepted"); return
        }
        #expect(e.kind == "invalid_params" && e.field == "touch_id")
        #expect(e.message == "Field \"touch_id\" must be between 0 and 9007199254740991, not 9007199254740992.")
    }
}
