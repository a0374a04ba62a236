@testable import TabBarCore

// One request through the dispatch table and the reducer, as the server runs it, for the
// tests whose subject is not the reducer's step (persistence, quoting, the journal); the
// reducer's own rules are stated exhaustively (ExhaustiveReducerTests.swift, ExhaustiveRulesTests.swift).

/// Runs a request at time `now` (ms).
func run(_ r: inout Reducer, _ method: String, _ params: String = "{}", at now: Int64 = 0) -> Outcome {
    let json = try! JSON.parse(params)
    switch Methods.command(for: Request(id: .int(1), method: method, params: json), limits: r.limits) {
    case .failure(let e): return Outcome(reply: .failure(e))
    case .success(.state(let cmd)): return r.reduce(cmd, at: now)
    case .success(.server(.stateGet)): return Outcome(reply: .success(.state(seq: r.state.seq, r.state, r.limits)))
    case .success(.server): fatalError("\(method) is the server's")
    }
}

extension Outcome {
    var error: RPCError? { if case .failure(let e) = reply { return e }; return nil }
    var value: JSON? { if case .success(let v) = reply { return v.json }; return nil }
}

/// A change's journal line as bytes, as the server writes it: what `entry` records, else
/// `method` and `params` as the request gave them.
func journalLine(seq: UInt64, entry: JournalEntry? = nil, method: String = "", params: JSON? = nil) -> [UInt8] {
    let bytes = params.map { $0.encoded() }
    return ByteBuffer.collect { line in
        if let bytes {
            bytes.withUnsafeBufferPointer { Persistence.journalLine(seq: seq, entry: entry, method: method, params: $0, into: &line) }
        } else {
            Persistence.journalLine(seq: seq, entry: entry, method: method, params: nil, into: &line)
        }
    }
}
