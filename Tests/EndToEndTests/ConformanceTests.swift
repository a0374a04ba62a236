import Foundation
import Glibc
import Testing
import TabBarCore

/// JSONTestSuite (`shared/conformance/JSONTestSuite/test_parsing`, beside the clone in CI).
enum JSONTestSuite {
    static func dir() throws -> String {
        var url = URL(fileURLWithPath: Paths.packageRoot)
        for _ in 0..<4 {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("shared/conformance/JSONTestSuite/test_parsing").path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
        throw TestFailure("JSONTestSuite not found: looked for shared/conformance/JSONTestSuite/test_parsing above \(Paths.packageRoot)")
    }

    static func files() throws -> [(name: String, path: String)] {
        let d = try dir()
        return try FileManager.default.contentsOfDirectory(atPath: d).filter { $0.hasSuffix(".json") }.sorted().map { ($0, d + "/" + $0) }
    }

    /// y_ cases the daemon refuses on purpose: duplicate keys (docs/PROTOCOL.md, "JSON").
    static let refusedByPolicy: Set<String> = ["y_object_duplicated_key.json", "y_object_duplicated_key_and_value.json"]
}

@Suite struct ConformanceTests {
    /// Every test_parsing file sent as one request line over the real socket, each followed by a
    /// ping on the same connection: y_ parses (any reply but parse_error, except the documented
    /// duplicate-key policy), n_ gets parse_error (line_too_long for none: max_line is 1 MiB here),
    /// i_ gets some reply; the ping is answered after every one, and the daemon lives.
    ///
    /// A line ends at a raw LF, so each raw LF of a file is sent as a raw CR: outside a string
    /// both are JSON white space, inside a string both are forbidden control characters, so
    /// the file's verdict is unchanged and it stays one line. A file of white space only is a
    /// blank line, which the daemon ignores (no reply; the ping still is answered).
    @Test func everyParsingCaseThroughTheSocket() throws {
        let d = try startDaemon(config: #"{"max_line": 1048576}"#, prefix: "tabbard-jsonsuite")
        defer { #expect(d.stop() == 0) }
        let c = try RawClient(path: d.socket)
        var checked = 0
        for (k, (name, path)) in try JSONTestSuite.files().enumerated() {
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            for i in bytes.indices where bytes[i] == 0x0A { bytes[i] = 0x0D }
            try c.sendBytes(bytes + [0x0A] + Array(#"{"id":"ping\#(k)","method":"ping"}"#.utf8) + [0x0A])
            var replies: [JSON] = []
            while true {
                guard let line = try c.readLine(timeout: 30) else { throw TestFailure("connection closed after \(name)") }
                let m = try JSON.parse(line)
                if m["id"] == .string("ping\(k)") {
                    #expect(m["result"] != nil, "ping after \(name)")
                    break
                }
                replies.append(m)
            }
            let blank = bytes.allSatisfy { [0x20, 0x09, 0x0D].contains($0) }
            #expect(replies.count == (blank ? 0 : 1), "\(name): \(replies.count) replies")
            let kind = replies.first?["error"]?["data"]?["kind"]?.stringValue
            if name.hasPrefix("y_") {
                if JSONTestSuite.refusedByPolicy.contains(name) {
                    #expect(kind == "parse_error" && replies.first?["error"]?["message"]?.stringValue?.contains("duplicate key") == true, "\(name)")
                } else {
                    #expect(kind != nil && kind != "parse_error", "\(name) was not parsed: \(replies)")
                }
            } else if name.hasPrefix("n_") {
                #expect(blank || kind == "parse_error", "\(name) was accepted: \(replies)")
            }
            checked += 1
        }
        #expect(checked >= 300)
        #expect(try c.call("tab.select", #"{"tab":"me"}"#)["result"]?["selected"] == .string("me"))
    }
}
