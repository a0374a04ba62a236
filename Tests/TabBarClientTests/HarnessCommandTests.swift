import Testing
import TabBarCore
import TabBarClient
@testable import tabbarctl

/// `tabbarctl advance` / `wait` as parsed, and the event matching they share with TabBarTesting.
@Suite struct HarnessCommandTests {
    func command(_ args: [String]) throws -> Subcommand { try Arguments.parse(args).command }

    @Test func advanceTakesMilliseconds() throws {
        #expect(try command(["advance", "499"]) == .advance(ms: 499))
        #expect(throws: UsageError.self) { try command(["advance"]) }
        #expect(throws: UsageError.self) { try command(["advance", "--", "-5"]) }
        #expect(throws: UsageError.self) { try command(["advance", "soon"]) }
    }

    @Test func waitTakesMatchesATimeoutAndACommand() throws {
        #expect(try command(["wait", "bar.visibility", "--match", "phase=idle,hidden=true", "--timeout", "300", "--", "advance", "1"])
                == .wait(event: "bar.visibility", match: ["phase": "idle", "hidden": "true"], timeoutMs: 300, then: ["advance", "1"]))
        #expect(try command(["wait", "sound.played"]) == .wait(event: "sound.played", match: [:], timeoutMs: 5000, then: []))
        // --timeout after wait is wait's own, not the reply timeout.
        #expect(try Arguments.parse(["wait", "x", "--timeout", "9"]).options.timeoutMs == 5000)
        #expect(try command(["wait", "x", "--", "push", "--hides-bar"]) == .wait(event: "x", match: [:], timeoutMs: 5000, then: ["push", "--hides-bar"]))
        #expect(throws: UsageError.self) { try command(["wait"]) }
        #expect(throws: UsageError.self) { try command(["wait", "x", "--match", "phase"]) }
        #expect(throws: UsageError.self) { try command(["wait", "x", "--timeout", "0"]) }
    }

    @Test func matchingComparesStringsAsTheyAreAndTheRestAsJSON() throws {
        let p = try JSON.parse(#"{"phase":"idle","hidden":true,"seq":3,"tab":null,"visibility":{"hidden":false}}"#)
        #expect(EventMatch.matches(p, [:]))
        #expect(EventMatch.matches(p, ["phase": "idle", "hidden": "true", "seq": "3", "tab": "null"]))
        #expect(EventMatch.matches(p, ["visibility.hidden": "false"]))
        #expect(!EventMatch.matches(p, ["phase": "hiding"]))
        #expect(!EventMatch.matches(p, ["hidden": "false"]))
        #expect(!EventMatch.matches(p, ["missing": "x"]))
        #expect(!EventMatch.matches(p, ["phase.deeper": "x"]))
    }
}
