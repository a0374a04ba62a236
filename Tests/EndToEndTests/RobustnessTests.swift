import Foundation
import Glibc
import Testing
import TabBarCore

/// One kind of bad input: the bytes a hostile client sends on its own
/// connection and the exact lines it gets back. The table in
/// docs/ROBUSTNESS.md is these rows (`TABBARD_ROBUSTNESS_TABLE=FILE` writes it).
struct HostileRow: CustomTestStringConvertible, Sendable {
    var number: Int
    var name: String
    /// What the input is, for the table.
    var shown: String
    var input: [UInt8]
    /// Exact reply lines, in order; empty when nothing is replied.
    var replies: [String]
    var testDescription: String { "#\(number) \(name)" }
}

enum HostileRows {
    static func err(_ id: String, _ code: Int, _ kind: String, _ message: String, _ extra: String = "") -> String {
        let msg = String(decoding: JSON.string(message).encoded(), as: UTF8.self)
        return #"{"jsonrpc":"2.0","id":\#(id),"error":{"code":\#(code),"message":\#(msg),"data":{"kind":"\#(kind)"\#(extra)}}}"#
    }
    static func parse(_ detail: String) -> String { err("null", -32700, "parse_error", "The line is not valid JSON: \(detail).") }
    static func params(_ id: String, _ field: String, _ message: String) -> String {
        err(id, -32602, "invalid_params", message, #","field":"\#(field)""#)
    }
    static func line(_ s: String) -> [UInt8] { Array(s.utf8) + [0x0A] }
    static let ok = #"{"jsonrpc":"2.0","id":1,"result":{}}"#

    static let deepArrays = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
    static let deepObjects = #"{"id":1,"method":"ping","params":"# + String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_001)
    static let hugeNesting = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    static let longID = String(repeating: "i", count: 60_000)
    static let longMethod = String(repeating: "m", count: 10_000)
    static let lineTooLong = err("null", -32600, "line_too_long",
                                 "The line is longer than max_line (65536 bytes); it was discarded. Send shorter lines.", #","max_line":65536"#)

    static let all: [HostileRow] = {
        var rows: [HostileRow] = []
        func row(_ name: String, _ shown: String, _ input: [UInt8], _ replies: [String]) {
            rows.append(HostileRow(number: rows.count + 1, name: name, shown: shown, input: input, replies: replies))
        }
        // Encoding
        row("invalid UTF-8 in a string", #"{"id":1,"method":"tab.select","params":{"tab":"\xFF\xFE"}} (raw bytes FF FE)"#,
            Array(#"{"id":1,"method":"tab.select","params":{"tab":""#.utf8) + [0xFF, 0xFE] + line(#""}}"#),
            [parse("invalid UTF-8 in a string at byte 47")])
        row("invalid UTF-8 outside strings", "bytes C3 28", [0xC3, 0x28, 0x0A], [parse(#"unexpected character '\xc3' at byte 0"#)])
        row("overlong UTF-8 encoding", #"{"id":1,"method":"p\xC0\xAFng"} (C0 AF is an overlong "/")"#,
            Array(#"{"id":1,"method":"p"#.utf8) + [0xC0, 0xAF] + line(#"ng"}"#), [parse("invalid UTF-8 in a string at byte 18")])
        row("UTF-8-encoded surrogate", #"{"id":1,"method":"\xED\xA0\x80"}"#,
            Array(#"{"id":1,"method":""#.utf8) + [0xED, 0xA0, 0x80] + line(#""}"#), [parse("invalid UTF-8 in a string at byte 18")])
        row("lone surrogate escape", #"{"id":"\ud800","method":"ping"}"#, line(#"{"id":"\ud800","method":"ping"}"#),
            [parse(#"lone surrogate in a \u escape at byte 13"#)])
        row("NUL byte inside a string", #"{"id":1,"method":"pi\0ng"} (a raw NUL)"#,
            Array(#"{"id":1,"method":"pi"#.utf8) + [0] + line(#"ng"}"#), [parse("unescaped control character in a string at byte 20")])
        row("NUL byte between tokens", #"{"id":1,\0"method":"ping"} (a raw NUL)"#,
            Array(#"{"id":1,"#.utf8) + [0] + line(#""method":"ping"}"#), [parse("expected a quoted key at byte 8")])
        row("escaped NUL in an item id", #"{"id":1,"method":"tab.select","params":{"tab":"ch\u0000at"}}"#,
            line(#"{"id":1,"method":"tab.select","params":{"tab":"ch\u0000at"}}"#),
            [params("1", "tab", #"Field "tab" must not contain control characters."#)])
        row("control character in a badge text", #"{"id":1,"method":"badge.set","params":{"tab":"chat","text":"a\u0007b"}}"#,
            line(#"{"id":1,"method":"badge.set","params":{"tab":"chat","text":"a\u0007b"}}"#),
            [params("1", "text", "Badge text must not contain control characters.")])
        row("byte-order mark before the object", #"EF BB BF {"id":1,"method":"ping"}"#,
            [0xEF, 0xBB, 0xBF] + line(#"{"id":1,"method":"ping"}"#), [parse(#"unexpected character '\xef' at byte 0"#)])
        // Nesting and size
        row("10,000 nested arrays", "[[[[…]]]] (10,000 levels, 20 KB)", line(deepArrays), [parse("nesting deeper than 64 levels at byte 64")])
        row("10,000 nested objects in params", #"{"id":1,"method":"ping","params":{"a":{"a":…}}} (10,000 levels)"#, line(deepObjects),
            [parse("nesting deeper than 64 levels at byte 348")])
        row("100,000 nested arrays (200 KB)", "[[[[…]]]] (100,000 levels, longer than max_line)", line(hugeNesting), [lineTooLong])
        row("line longer than max_line", #"{"id":1,"method":"badge.set","params":{"tab":"chat","text":"xxx…"}} (70,000 bytes)"#,
            line(#"{"id":1,"method":"badge.set","params":{"tab":"chat","text":""# + String(repeating: "x", count: 70_000) + #""}}"#),
            [lineTooLong])
        // Numbers
        row("65-digit number", #"{"id":1,"method":"tab.select","params":{"index":999…9}} (65 digits)"#,
            line(#"{"id":1,"method":"tab.select","params":{"index":"# + String(repeating: "9", count: 65) + "}}"),
            [params("1", "index", #"Field "index" must be between -9007199254740991 and 9007199254740991, not "# + String(repeating: "9", count: 37) + "....")])
        row("huge number as the id", #"{"id":1e999999,"method":"ping"}"#, line(#"{"id":1e999999,"method":"ping"}"#),
            [#"{"jsonrpc":"2.0","id":1e999999,"result":{}}"#])
        row("huge index", #"{"id":1,"method":"tab.select","params":{"index":1e300}}"#,
            line(#"{"id":1,"method":"tab.select","params":{"index":1e300}}"#),
            [params("1", "index", #"Field "index" must be a whole number written without a fraction or exponent, not 1e300."#)])
        row("count beyond 64 bits", #"{"id":1,"method":"badge.set","params":{"tab":"chat","count":100000000000000000000}}"#,
            line(#"{"id":1,"method":"badge.set","params":{"tab":"chat","count":100000000000000000000}}"#),
            [params("1", "count", #"Field "count" must be between -9007199254740991 and 9007199254740991, not 100000000000000000000."#)])
        row("number that overflows to infinity", #"{"id":1,"method":"feedback.set","params":{"volume":1e400}}"#,
            line(#"{"id":1,"method":"feedback.set","params":{"volume":1e400}}"#),
            [params("1", "volume", #"Field "volume" must be a finite number."#)])
        row("NaN", #"{"id":1,"method":"feedback.set","params":{"volume":NaN}}"#,
            line(#"{"id":1,"method":"feedback.set","params":{"volume":NaN}}"#), [parse("NaN and Infinity are not JSON at byte 51")])
        row("-Infinity", #"{"id":1,"method":"feedback.set","params":{"volume":-Infinity}}"#,
            line(#"{"id":1,"method":"feedback.set","params":{"volume":-Infinity}}"#), [parse("invalid number at byte 52")])
        row("fraction where an integer is needed", #"{"id":1,"method":"tab.select","params":{"index":1.5}}"#,
            line(#"{"id":1,"method":"tab.select","params":{"index":1.5}}"#),
            [params("1", "index", #"Field "index" must be a whole number written without a fraction or exponent, not 1.5."#)])
        row("volume out of range", #"{"id":1,"method":"feedback.set","params":{"volume":2}}"#,
            line(#"{"id":1,"method":"feedback.set","params":{"volume":2}}"#),
            [params("1", "volume", #"Field "volume" must be between 0.0 and 1.0, not 2.0."#)])
        row("layout size out of range", #"{"id":1,"method":"bar.configure","params":{"layout":{"width":1e9}}}"#,
            line(#"{"id":1,"method":"bar.configure","params":{"layout":{"width":1e9}}}"#),
            [params("1", "layout.width", #"Field "layout.width" must be between 0.0 and 100000.0, not 1000000000.0."#)])
        // Duplicates and types
        row("duplicate key in the envelope", #"{"id":1,"id":2,"method":"ping"}"#, line(#"{"id":1,"id":2,"method":"ping"}"#),
            [parse(#"duplicate key "id" at byte 8"#)])
        row("duplicate key in params", #"{"id":1,"method":"tab.select","params":{"tab":"chat","tab":"me"}}"#,
            line(#"{"id":1,"method":"tab.select","params":{"tab":"chat","tab":"me"}}"#), [parse(#"duplicate key "tab" at byte 53"#)])
        row("id is an object", #"{"id":{"x":1},"method":"ping"}"#, line(#"{"id":{"x":1},"method":"ping"}"#),
            [err("null", -32600, "invalid_request", #""id" must be a number or a string, not an object."#)])
        row("id is a boolean", #"{"id":true,"method":"ping"}"#, line(#"{"id":true,"method":"ping"}"#),
            [err("null", -32600, "invalid_request", #""id" must be a number or a string, not a boolean."#)])
        row("method is a number", #"{"id":1,"method":7}"#, line(#"{"id":1,"method":7}"#),
            [err("1", -32600, "invalid_request", #""method" must be a string, not a number."#)])
        row("params is an array", #"{"id":1,"method":"ping","params":[1]}"#, line(#"{"id":1,"method":"ping","params":[1]}"#),
            [params("1", "params", #""params" must be an object, not an array."#)])
        row("a field of the wrong type", #"{"id":1,"method":"tab.select","params":{"tab":7}}"#,
            line(#"{"id":1,"method":"tab.select","params":{"tab":7}}"#),
            [params("1", "tab", #"Field "tab" must be a string, not a number."#)])
        row("a boolean given as a string", #"{"id":1,"method":"badge.set","params":{"tab":"chat","dot":"yes"}}"#,
            line(#"{"id":1,"method":"badge.set","params":{"tab":"chat","dot":"yes"}}"#),
            [params("1", "dot", #"Field "dot" must be true or false, not a string."#)])
        row("wrong jsonrpc version", #"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, line(#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            [err("1", -32600, "invalid_request", #""jsonrpc" must be "2.0" when present."#)])
        row("not an object", "42", line("42"), [err("null", -32600, "invalid_request", "A request must be a JSON object, not a number.")])
        row("empty object", "{}", line("{}"), [err("null", -32600, "invalid_request", #"The request has no "method"."#)])
        row("batch", #"[{"id":1,"method":"ping"}]"#, line(#"[{"id":1,"method":"ping"}]"#),
            [err("null", -32600, "batch_unsupported", "Batches (JSON arrays) are not supported; send one request object per line.")])
        row("text after the object", #"{"id":1,"method":"ping"} {"id":2}"#, line(#"{"id":1,"method":"ping"} {"id":2}"#),
            [parse("unexpected text after the JSON value at byte 25")])
        row("not JSON at all", "hello daemon", line("hello daemon"), [parse("unexpected character 'h' at byte 0")])
        row("truncated JSON", #"{"id":1,"method":"pi"#, line(#"{"id":1,"method":"pi"#), [parse("unterminated string at byte 20")])
        // Indices and ids
        row("negative index", #"{"id":1,"method":"tab.select","params":{"index":-1}}"#,
            line(#"{"id":1,"method":"tab.select","params":{"index":-1}}"#),
            [err("1", -32001, "unknown_tab", "There is no item at index -1; the bar has 5 items (0…4).", #","index":-1"#)])
        row("index 2^53", #"{"id":1,"method":"tab.select","params":{"index":9007199254740992}}"#,
            line(#"{"id":1,"method":"tab.select","params":{"index":9007199254740992}}"#),
            [params("1", "index", #"Field "index" must be between -9007199254740991 and 9007199254740991, not 9007199254740992."#)])
        row("negative if_seq", #"{"id":1,"method":"tab.select","params":{"tab":"chat","if_seq":-1}}"#,
            line(#"{"id":1,"method":"tab.select","params":{"tab":"chat","if_seq":-1}}"#),
            [err("1", -32003, "conflict", "The state changed: if_seq was -1 but the current seq is 0. Re-read the state and retry.", #","seq":0"#)])
        row("overlong item id", #"{"id":1,"method":"tab.select","params":{"tab":"ttt…"}} (65 bytes)"#,
            line(#"{"id":1,"method":"tab.select","params":{"tab":""# + String(repeating: "t", count: 65) + #""}}"#),
            [params("1", "tab", #"Field "tab" is 65 bytes long; at most 64 are allowed."#)])
        row("empty item id", #"{"id":1,"method":"badge.clear","params":{"tab":""}}"#, line(#"{"id":1,"method":"badge.clear","params":{"tab":""}}"#),
            [params("1", "tab", #"Field "tab" must not be empty."#)])
        row("overlong badge text", #"{"id":1,"method":"badge.set","params":{"tab":"chat","text":"xxx…"}} (257 bytes)"#,
            line(#"{"id":1,"method":"badge.set","params":{"tab":"chat","text":""# + String(repeating: "x", count: 257) + #""}}"#),
            [params("1", "text", #"Field "text" is 257 bytes long; at most 256 are allowed."#)])
        row("60,000-byte request id", #"{"id":"iii…","method":"ping"} (60,000 bytes)"#, line(#"{"id":"\#(longID)","method":"ping"}"#),
            [#"{"jsonrpc":"2.0","id":"\#(longID)","result":{}}"#])
        row("an unknown item", #"{"id":1,"method":"badge.set","params":{"tab":"%s%n%x","count":1}}"#,
            line(#"{"id":1,"method":"badge.set","params":{"tab":"%s%n%x","count":1}}"#),
            [err("1", -32001, "unknown_tab", #"There is no item "%s%n%x" in the bar."#, #","tab":"%s%n%x""#)])
        row("a path as a sound name", #"{"id":1,"method":"sound.play","params":{"name":"../../../etc/passwd"}}"#,
            line(#"{"id":1,"method":"sound.play","params":{"name":"../../../etc/passwd"}}"#),
            [err("1", -32004, "unknown_sound", #"There is no sound "../../../etc/passwd"; `sound.list` shows the loaded sounds."#, #","name":"../../../etc/passwd""#)])
        // Methods and fields
        row("unknown method", #"{"id":1,"method":"tab.delete"}"#, line(#"{"id":1,"method":"tab.delete"}"#),
            [err("1", -32601, "method_not_found", #"There is no method "tab.delete". See docs/PROTOCOL.md for the list."#, #","method":"tab.delete""#)])
        row("10,000-byte method name", #"{"id":1,"method":"mmm…"} (10,000 bytes)"#, line(#"{"id":1,"method":"\#(longMethod)"}"#),
            [err("1", -32601, "method_not_found", #"There is no method "\#(longMethod)". See docs/PROTOCOL.md for the list."#, #","method":"\#(longMethod)""#)])
        row("unknown field in params", #"{"id":1,"method":"tab.select","params":{"tab":"chat","tabb":1}}"#,
            line(#"{"id":1,"method":"tab.select","params":{"tab":"chat","tabb":1}}"#),
            [params("1", "tabb", #"Unknown field "tabb"; accepted fields: tab, index, if_seq, source."#)])
        row("unknown field in a nested object", #"{"id":1,"method":"bar.configure","params":{"items":[{"id":"a","morph":{"title":"A","colour":"red"}}]}}"#,
            line(#"{"id":1,"method":"bar.configure","params":{"items":[{"id":"a","morph":{"title":"A","colour":"red"}}]}}"#),
            [params("1", "items[0].morph.colour", #"Unknown field "items[0].morph.colour"; accepted fields: title, icon."#)])
        row("missing params", #"{"id":1,"method":"tab.select"}"#, line(#"{"id":1,"method":"tab.select"}"#),
            [params("1", "tab", #"Missing field "tab" (an item id) or "index" (a position)."#)])
        row("params null", #"{"id":1,"method":"badge.set","params":null}"#, line(#"{"id":1,"method":"badge.set","params":null}"#),
            [params("1", "tab", #"Missing field "tab" (an item id)."#)])
        row("a notification with bad params", #"{"method":"tab.select","params":{"tab":7}} (no id)"#,
            line(#"{"method":"tab.select","params":{"tab":7}}"#), [])
        row("blank and white-space lines", #"\n \t \r\n\n"#, Array("\n \t \r\n\n".utf8), [])
        // Semantics
        row("selecting the center button", #"{"id":1,"method":"tab.select","params":{"tab":"post"}}"#,
            line(#"{"id":1,"method":"tab.select","params":{"tab":"post"}}"#),
            [err("1", -32002, "not_selectable", #"Item "post" cannot be selected: it is the center button; use action.trigger."#, #","tab":"post""#)])
        row("too many items", #"{"id":1,"method":"bar.configure","params":{"items":[{"id":"a"},…6 items]}}"#,
            line(#"{"id":1,"method":"bar.configure","params":{"items":[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"},{"id":"e"},{"id":"f"}]}}"#),
            [err("1", -32006, "limit_exceeded", "The bar has 6 items; at most 5 are allowed (max_items).")])
        row("duplicate item ids", #"{"id":1,"method":"bar.configure","params":{"items":[{"id":"a"},{"id":"a"}]}}"#,
            line(#"{"id":1,"method":"bar.configure","params":{"items":[{"id":"a"},{"id":"a"}]}}"#),
            [params("1", "items[1].id", #"Duplicate item id "a"; ids must be unique."#)])
        row("a bar with nothing selectable", #"{"id":1,"method":"bar.configure","params":{"items":[{"id":"a","enabled":false}]}}"#,
            line(#"{"id":1,"method":"bar.configure","params":{"items":[{"id":"a","enabled":false}]}}"#),
            [params("1", "items", #"The bar has no selectable tab: at least one item must be an enabled "tab"."#)])
        // The number rule and null ids (docs/PROTOCOL.md, "JSON and numbers")
        row("count beyond 2^53", #"{"id":1,"method":"badge.set","params":{"tab":"chat","count":9007199254740992}}"#,
            line(#"{"id":1,"method":"badge.set","params":{"tab":"chat","count":9007199254740992}}"#),
            [params("1", "count", #"Field "count" must be between -9007199254740991 and 9007199254740991, not 9007199254740992."#)])
        row("whole number with an exponent", #"{"id":1,"method":"badge.set","params":{"tab":"chat","count":1e18}}"#,
            line(#"{"id":1,"method":"badge.set","params":{"tab":"chat","count":1e18}}"#),
            [params("1", "count", #"Field "count" must be a whole number written without a fraction or exponent, not 1e18."#)])
        row("whole number with a fraction part", #"{"id":1,"method":"tab.select","params":{"index":9007199254740993.0}}"#,
            line(#"{"id":1,"method":"tab.select","params":{"index":9007199254740993.0}}"#),
            [params("1", "index", #"Field "index" must be a whole number written without a fraction or exponent, not 9007199254740993.0."#)])
        row("80-character number", #"{"id":1,"method":"tab.select","params":{"index":0.000…01}} (80 characters, as JSONTestSuite y_number_double_close_to_zero)"#,
            line(#"{"id":1,"method":"tab.select","params":{"index":0.0000000000000000000000000000000000000000000000000000000000000000000000000000001}}"#),
            [params("1", "index", #"Field "index" must be a whole number written without a fraction or exponent, not 0.00000000000000000000000000000000000...."#)])
        row("id is null", #"{"id":null,"method":"ping"}"#, line(#"{"id":null,"method":"ping"}"#),
            [err("null", -32600, "invalid_request", #""id" must be a number or a string, not null; leave "id" out for a notification."#)])
        return rows
    }()

    /// The markdown table of docs/ROBUSTNESS.md.
    static func markdown() -> String {
        func cell(_ s: String) -> String {
            var t = s
            if t.utf8.count > 220 {
                t = String(t.prefix(150)) + "…(\(s.utf8.count) bytes in all)…" + String(t.suffix(40))
            }
            return "`" + t.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "`", with: "'") + "`"
        }
        var out = "| # | bad input | sent | exact reply |\n|---|---|---|---|\n"
        for r in all {
            let reply = r.replies.isEmpty ? "nothing" : r.replies.map(cell).joined(separator: "<br>")
            out += "| \(r.number) | \(r.name) | \(cell(r.shown)) | \(reply) |\n"
        }
        return out
    }
}

@Suite struct RobustnessTests {
    /// Every row of the table: the exact reply, nothing more on that connection
    /// (its next line is the reply to a ping), nothing at all for the subscriber,
    /// no change of state, and the daemon still serves.
    @Test(arguments: HostileRows.all)
    func hostileInput(_ row: HostileRow) throws {
        let arena = try Arena()
        defer { arena.stop() }
        let hostile = try RawClient(path: arena.socket)
        try hostile.sendBytes(row.input)
        for (k, expected) in row.replies.enumerated() {
            let got = try hostile.readLine()
            #expect(got == expected, "reply \(k + 1)")
        }
        try hostile.send(#"{"id":"after","method":"ping"}"# + "\n")
        try hostile.expectLine(#"{"jsonrpc":"2.0","id":"after","result":{}}"#, "nothing else was replied")
        try arena.expectUntouched(row.name)
    }

    @Test func tableForTheDocs() throws {
        #expect(HostileRows.all.count >= 25)
        #expect(Set(HostileRows.all.map(\.name)).count == HostileRows.all.count)
        if let path = ProcessInfo.processInfo.environment["TABBARD_ROBUSTNESS_TABLE"] {
            try Data(HostileRows.markdown().utf8).write(to: URL(fileURLWithPath: path))
        }
    }
}

/// Bad behaviour that is about the connection rather than a line.
@Suite struct HostileConnectionTests {
    static let ping = #"{"jsonrpc":"2.0","id":"after","result":{}}"#

    /// Slowloris: half a request, then nothing. Everyone else is served meanwhile;
    /// when the rest of the line comes, it is answered.
    @Test func halfALineThenWaiting() throws {
        let arena = try Arena()
        defer { arena.stop() }
        let slow = try RawClient(path: arena.socket)
        try slow.send(#"{"id":"slow","method":"tab.sel"#)
        try arena.expectUntouched("while a line is half sent")
        try arena.expectUntouched("still")
        #expect(!slow.hasPendingData())
        try slow.send(#"ect","params":{"tab":"me"}}"# + "\n")
        let reply = try #require(try slow.readJSON())
        #expect(reply["id"] == .string("slow"))
        #expect(reply["result"]?["selected"] == .string("me"))
    }

    /// Half a line, then the client half-closes: the last line still counts (the contract's EOF rule).
    @Test func halfALineThenEOF() throws {
        let arena = try Arena()
        defer { arena.stop() }
        let c = try RawClient(path: arena.socket)
        try c.send(#"{"id":1,"method":"ping"}"#)
        c.shutdownWrite()
        #expect(try c.readToEOF() == [#"{"jsonrpc":"2.0","id":1,"result":{}}"#])
        try arena.waitForClients(2)
        try arena.expectUntouched()
    }

    /// 1,000 connections opened at once (max_clients 64): the subscriber and the witness
    /// hold 2 slots, 62 more get the hello, each of the other 938 gets exactly one
    /// `limit_exceeded` line and EOF. When they go, new clients are served again.
    @Test func aThousandConnectionsAtOnce() throws {
        let arena = try Arena()
        defer { arena.stop() }
        var fds: [Int32] = []
        defer { for fd in fds { close(fd) } }
        for _ in 0..<1000 { fds.append(try connectSocket(arena.socket)) }
        let refusal = #"{"jsonrpc":"2.0","id":null,"error":{"code":-32006,"message":"Too many clients (max_clients = 64); try again later.","data":{"kind":"limit_exceeded"}}}"#
        var served: [Int32] = [], refused = 0
        for fd in fds {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            #expect(poll(&p, 1, 10_000) == 1)
            var buf = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &buf, buf.count)
            let text = String(decoding: buf[0..<max(n, 0)], as: UTF8.self)
            if text.hasPrefix(#"{"jsonrpc":"2.0","method":"hello""#) {
                served.append(fd)
            } else {
                #expect(text == refusal + "\n")
                #expect(try readUntilEOF(fd) == [], "EOF after the refusal")
                refused += 1
            }
        }
        #expect(served.count == 62)
        #expect(refused == 938)
        #expect(try arena.stats()["connections_refused"]?.intValue == 938)
        try arena.expectUntouched("with 64 clients", newClient: false)
        for fd in fds { close(fd) }
        fds = []
        try arena.waitForClients(2)
        try arena.expectUntouched("after they left")
    }

    /// A client pipelines 2,000 `state.get` (≈ 5 MB of replies), reads one line, then
    /// resets the connection (SO_LINGER 0) while its replies are being written.
    @Test func disconnectingMidReply() throws {
        let arena = try Arena()
        defer { arena.stop() }
        for round in 0..<5 {
            let c = try RawClient(path: arena.socket)
            var batch = ""
            for k in 0..<2000 { batch += #"{"id":\#(k),"method":"state.get"}"# + "\n" }
            try c.send(batch)
            _ = try c.readLine()
            var linger = linger(l_onoff: 1, l_linger: 0)
            setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
            c.close()
            try arena.waitForClients(2)
            try arena.expectUntouched("round \(round)")
        }
    }

    /// 1,000 subscribers come, are sent 40 changes each, and leave: the memory they took goes
    /// back to the system (`malloc_trim` once the clients fall to a quarter of their peak), so
    /// the daemon's RSS is within 1 MiB of what it was before they came (it kept ~2.5 MiB
    /// more without the trim).
    @Test func memoryOfSubscribersThatLeftGoesBack() throws {
        let arena = try Arena(config: #"{"max_clients":2000}"#)
        defer { arena.stop() }
        let pid = arena.daemon.process.processIdentifier
        let before = residentKB(pid)
        var subscribers: [RawClient] = []
        for _ in 0..<1000 {
            let s = try RawClient(path: arena.socket)
            #expect(try s.call("subscribe")["result"] != nil)
            subscribers.append(s)
        }
        for k in 0..<40 { _ = try arena.witness.call("badge.set", #"{"tab":"chat","count":\#(k)}"#) }
        for s in subscribers { s.close() }
        try arena.waitForClients(2)
        _ = try arena.witness.call("ping")  // a turn after the one they left in, and its housekeeping
        let after = residentKB(pid)
        #expect(after - before < 1024, "RSS \(before) KiB before 1,000 subscribers came, \(after) KiB after they left")
        print("RSS \(before) KiB before 1,000 subscribers came, \(after) KiB after they left")
    }

    /// 500 clients that connect and leave at once, without reading the hello, then a
    /// real client: it is served (the vanished ones do not hold slots: none is refused).
    @Test func connectAndVanish() throws {
        let arena = try Arena()
        defer { arena.stop() }
        for _ in 0..<500 { close(try connectSocket(arena.socket)) }
        let real = try RawClient(path: arena.socket)
        #expect(try real.call("ping")["result"] == .obj([:]))
        try waitUntil("500 more connections handled") {
            let s = try arena.stats()
            return s["clients"]?.intValue == 3 && (s["connections_total"]?.intValue ?? 0) >= 503
        }
        #expect(try arena.stats()["connections_refused"] == .int(0))
        try arena.expectUntouched()
    }

    /// 10 MB without a newline: one `line_too_long` (sent as soon as the limit is
    /// passed), the rest discarded without being stored, then the connection works.
    @Test func tenMegabytesWithoutANewline() throws {
        let arena = try Arena()
        defer { arena.stop() }
        let c = try RawClient(path: arena.socket)
        let before = residentKB(arena.daemon.process.processIdentifier)
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0..<10 { try c.sendBytes(chunk) }
        try c.expectLine(HostileRows.lineTooLong)
        try c.send("\n" + #"{"id":"after","method":"ping"}"# + "\n")
        try c.expectLine(Self.ping)
        let after = residentKB(arena.daemon.process.processIdentifier)
        #expect(after - before < 4096, "RSS grew from \(before) to \(after) KiB")
        try arena.expectUntouched()
    }

    /// 10 MB of blank lines and white space: nothing is replied.
    @Test func tenMegabytesOfBlankLines() throws {
        let arena = try Arena()
        defer { arena.stop() }
        let c = try RawClient(path: arena.socket)
        let chunk = Array(String(repeating: "\n \r\n\t\n", count: (1 << 20) / 6).utf8)
        for _ in 0..<10 { try c.sendBytes(chunk) }
        try c.send(#"{"id":"after","method":"ping"}"# + "\n")
        try c.expectLine(Self.ping)
        try arena.expectUntouched()
    }
}
