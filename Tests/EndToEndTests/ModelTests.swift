import Foundation
import Glibc
import Testing
import TabBarCore

/// Seeded randomized differential tests: the real daemon (manual clock, null sink) against the
/// plain model of the contract (ModelState/ModelContract/ModelMotion.swift), for every method.
/// Each step compares the reply, the events a subscriber gets (with their params), the sounds
/// that start (`sound.played`), and now and then the whole state.
///
/// A failure prints the seed and the step; `TABBARD_MODEL_SEED=N` runs that seed alone,
/// `TABBARD_MODEL_STEPS=N` changes the steps per seed, `TABBARD_MODEL_SEEDS=N` runs seeds 1…N.
@Suite struct ModelTests {
    /// The methods of PROTOCOL.md's table, which every daemon must serve.
    static let contractMethods = ["ping", "state.get", "bar.configure", "tab.select", "tab.highlight", "touch", "action.trigger",
                                  "action.finish", "badge.set", "badge.clear", "bar.set_hidden", "nav.push", "nav.pop", "scroll",
                                  "animation.begin", "animation.end", "sound.play", "sound.list", "feedback.set", "subscribe",
                                  "unsubscribe", "stats.get"]

    static func env(_ name: String) -> String? { ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 } }

    @Test func theDaemonFollowsThePlainModelOfTheContract() throws {
        let seeds: [UInt64]
        if let one = ModelTests.env("TABBARD_MODEL_SEED").flatMap(UInt64.init) {
            seeds = [one]
        } else {
            seeds = (1...UInt64(ModelTests.env("TABBARD_MODEL_SEEDS").flatMap(Int.init) ?? 5)).map { $0 }
        }
        let steps = ModelTests.env("TABBARD_MODEL_STEPS").flatMap(Int.init) ?? 300
        var sent = Set<String>()
        var features = Set<String>()
        var compared = Set<String>()
        for seed in seeds {
            let run = try ModelRun(seed: seed)
            features = run.features
            let ok = try run.go(steps: steps)
            sent.formUnion(run.sent)
            compared.formUnion(run.compared)
            if !ok { return }
        }
        let missingFromDaemon = ModelTests.contractMethods.filter { !features.contains($0) }
        #expect(missingFromDaemon.isEmpty, "hello.features lacks methods of the contract: \(missingFromDaemon)")
        // Every event the contract names (those a request can cause) was compared at least once.
        let events = ["tab.selected", "tab.reselected", "tab.highlighted", "action.triggered", "action.finished", "badge.changed",
                      "bar.configured", "bar.visibility", "animation.cue", "animation.began", "animation.ended", "feedback.changed",
                      "sound.played"]
        if ModelTests.env("TABBARD_MODEL_SEED") == nil {
            #expect(events.filter { !compared.contains($0) }.isEmpty, "events never compared: \(events.filter { !compared.contains($0) })")
        }
        let neverSent = features.subtracting(sent).sorted()
        #expect(neverSent.isEmpty, "hello.features names methods the model test never sends: \(neverSent)")
    }
}

/// One seed: one daemon, one subscribed connection, one model.
final class ModelRun {
    let seed: UInt64
    let daemon: Daemon
    let client: RawClient
    /// A second connection, subscribed to everything all along and sending nothing else:
    /// every change must reach it too, whatever the first one's topics.
    let watcher: RawClient
    let model: Model
    var generator: ModelGenerator
    let features: Set<String>
    var sent = Set<String>()
    private var nextID = 1
    /// What was compared: steps, events, sounds, error replies, state comparisons.
    var counts = (steps: 0, events: 0, sounds: 0, errors: 0, states: 0)
    /// The events (and `sound.played`) the model expected and the daemon sent.
    var compared = Set<String>()
    private var trail: [String] = []

    init(seed: UInt64) throws {
        self.seed = seed
        daemon = try Daemon(extraArgs: ["--clock", "manual"])
        client = try RawClient(path: daemon.socket)
        watcher = try RawClient(path: daemon.socket)
        _ = try watcher.call("subscribe")
        guard case .array(let list)? = client.hello?["params"]?["features"] else { throw TestFailure("hello has no features") }
        features = Set(list.compactMap(\.stringValue))
        let wavs = (try? FileManager.default.contentsOfDirectory(atPath: Paths.sounds)) ?? []
        model = Model(soundNames: Set(wavs.filter { $0.hasSuffix(".wav") }.map { String($0.dropLast(4)) }))
        generator = ModelGenerator(seed: seed, captureDir: daemon.dir)
    }

    /// Runs `steps` steps; false (after recording the failure) when the daemon and the model disagree.
    func go(steps: Int) throws -> Bool {
        if let p = try exchange(.subscribe(nil), notification: false) { return report(0, p) }
        defer {
            print("model seed \(seed): \(counts.steps) steps, \(counts.events) events, \(counts.sounds) sounds, "
                  + "\(counts.errors) error replies, \(counts.states) whole states compared")
        }
        for step in 1...steps {
            let op = generator.next(model)
            var notify = false
            if case .raw = op {} else { notify = generator.rng.chance(0.04) }
            if let p = try exchange(op, notification: notify) { return report(step, p) }
            if step % 15 == 0 || step == steps, let p = try exchange(.stateGet, notification: false) { return report(step, p) }
        }
        return true
    }

    private func report(_ step: Int, _ problems: [String]) -> Bool {
        let text = "seed \(seed), step \(step) (repeat: TABBARD_MODEL_SEED=\(seed) TABBARD_MODEL_STEPS=\(step)):\n  "
            + problems.joined(separator: "\n  ")
            + "\nthe model: profile \(model.s.profile), volume \(model.s.volume), hidden \(model.s.hidden), now \(model.now) ms"
            + "\nlast requests:\n  " + trail.suffix(14).joined(separator: "\n  ")
        Issue.record(Comment(rawValue: text))
        return false
    }

    /// Sends one request and a `ping` behind it; everything before the ping's reply belongs to
    /// the request (its reply, its events, the sounds it started). Returns the disagreements.
    func exchange(_ op: ModelOp, notification: Bool) throws -> [String]? {
        let id: Int? = notification ? nil : nextID
        nextID += 1
        let pingID = nextID
        nextID += 1
        let line = op.line(id: id)
        sent.insert(op.method)
        trail.append((notification ? "(notification) " : "") + line)
        let expected = model.step(op, notification: notification)
        try client.send(line + "\n" + #"{"id":\#(pingID),"method":"ping"}"# + "\n")
        var reply: JSON?
        var events: [(String, JSON)] = []
        var sounds: [String] = []
        var problems: [String] = []
        while true {
            guard let m = try client.readJSON(timeout: 30) else { return ["the daemon closed the connection"] }
            if let method = m["method"]?.stringValue {
                let params = m["params"] ?? .null
                if method == "sound.played" { sounds.append(params["name"]?.stringValue ?? "?") }
                else if method == "sound.failed" { problems.append("sound.failed: \(params.text)") }
                else { events.append((method, params)) }
                continue
            }
            if m["id"] == .int(pingID) { break }
            if reply != nil { problems.append("a second reply: \(m.text)") }
            reply = m
        }
        counts.steps += 1
        counts.events += events.count
        counts.sounds += sounds.count
        if reply?["error"] != nil { counts.errors += 1 }
        if reply?["result"]?["state"] != nil { counts.states += 1 }
        problems += compareReply(expected.reply, reply, op: op)
        problems += compareEvents(expected.events.filter { model.delivered($0.method) }, events)
        // The watcher: what it got before the reply to a ping sent after the step is the step's.
        var watched: [(String, JSON)] = []
        let watchID = nextID
        nextID += 1
        try watcher.send(#"{"id":\#(watchID),"method":"ping"}"# + "\n")
        while true {
            guard let m = try watcher.readJSON(timeout: 30) else { return ["the daemon closed the watcher's connection"] }
            if m["id"] == .int(watchID) { break }
            if let method = m["method"]?.stringValue, !method.hasPrefix("sound.") { watched.append((method, m["params"] ?? .null)) }
        }
        problems += compareEvents(expected.events, watched).map { "(watcher) " + $0 }
        problems += compareSounds(expected.sounds, sounds, op: op)
        return problems.isEmpty ? nil : ["request: \(line)"] + problems
    }

    /// Sounds that started and whose `sound.played` has not come yet. The device starts a
    /// sound when its queue has room (docs/HARNESS.md: several sounds in one millisecond go
    /// into successive 4-frame chunks of a queue of a few periods), so under the manual clock a
    /// sound may be reported by a later request; by the reply to a `clock.advance` of 1 ms or
    /// more every sound that started before it has been reported.
    private var pendingSounds: [String] = []
    /// Sounds that may have been reported while this connection did not take `sound.played`.
    private var maybeSounds: [String] = []

    func compareSounds(_ want: [String], _ got: [String], op: ModelOp) -> [String] {
        var problems: [String] = []
        pendingSounds += want
        for name in got {
            if let i = pendingSounds.firstIndex(of: name) {
                pendingSounds.remove(at: i)
                compared.insert("sound.played")
            } else if let i = maybeSounds.firstIndex(of: name) {
                maybeSounds.remove(at: i)
            } else {
                problems.append("sound.played \(name), which no request started (waiting for: \(pendingSounds))")
            }
        }
        if !model.delivered("sound.played") {
            maybeSounds += pendingSounds
            pendingSounds = []
        }
        if case .clockAdvance(let ms) = op, ms >= 1 {
            if !pendingSounds.isEmpty {
                problems.append("sounds that started never reported sound.played, even after the clock moved: \(pendingSounds)")
            }
            pendingSounds = []
            maybeSounds = []
        }
        return problems
    }

    func compareReply(_ want: ModelExpectation.Reply, _ got: JSON?, op: ModelOp) -> [String] {
        switch want {
        case .none:
            return got.map { ["a notification got a reply: \($0.text)"] } ?? []
        case .result(let r):
            guard let got else { return ["no reply"] }
            guard let result = got["result"] else { return ["expected a result \(r.text), got \(got.text)"] }
            return modelMismatch(r, result, "result").map { ["reply \($0)\n    expected \(r.text)\n    got      \(result.text)"] } ?? []
        case .check(let rule):
            guard let result = got?["result"] else { return ["expected a result, got \(got?.text ?? "nothing")"] }
            return rule(result).map { ["reply: \($0) in \(result.text)"] } ?? []
        case .error(let kinds, let field):
            guard let got, let e = got["error"] else { return ["expected an error \(kinds.sorted()), got \(got?.text ?? "nothing")"] }
            var p: [String] = []
            if case .raw(let line, _) = op, got["id"] != (line.contains(#""id":"r""#) ? .string("r") : .null) { p.append("a line that is no request was answered with id \(got["id"]?.text ?? "-")") }
            let kind = e["data"]?["kind"]?.stringValue ?? "-"
            if !kinds.contains(kind) { p.append("expected the error \(kinds.sorted()), got \(e.text)") }
            if let field, e["data"]?["field"]?.stringValue != field { p.append("expected data.field \(field), got \(e.text)") }
            return p
        }
    }

    /// Every event the model names must arrive (with the params it names), and no other; the
    /// order the contract gives within one change (highlights and commits) must hold.
    func compareEvents(_ want: [(method: String, params: JSON)], _ got: [(String, JSON)]) -> [String] {
        var unused = Array(got.indices)
        var problems: [String] = []
        for w in want {
            if let i = unused.firstIndex(where: { got[$0].0 == w.method && modelMismatch(w.params, got[$0].1) == nil }) {
                unused.remove(at: i)
                compared.insert(w.method)
            } else {
                let near = got.filter { $0.0 == w.method }.compactMap { modelMismatch(w.params, $0.1) }
                problems.append("missing event \(w.method) \(w.params.text)" + (near.isEmpty ? "" : " (differs in \(near.joined(separator: "; ")))"))
            }
        }
        for i in unused { problems.append("unexpected event \(got[i].0) \(got[i].1.text)") }
        let ordered = ["tab.highlighted", "tab.selected", "tab.reselected", "action.triggered"]
        func key(_ m: String, _ p: JSON) -> String { "\(m) \(p["tab"]?.text ?? "") \(p["phase"]?.text ?? "")" }
        let wo = want.filter { ordered.contains($0.method) }.map { key($0.method, $0.params) }
        let go = got.filter { ordered.contains($0.0) }.map { key($0.0, $0.1) }
        if problems.isEmpty && wo != go { problems.append("events out of order: expected \(wo), got \(go)") }
        if !problems.isEmpty { problems.append("all events received: " + got.map { "\($0.0) \($0.1.text)" }.joined(separator: "\n      ")) }
        return problems
    }
}
