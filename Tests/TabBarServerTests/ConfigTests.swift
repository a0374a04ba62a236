import Foundation
import Testing
import TabBarCore
@testable import TabBarServer

/// JSONTestSuite (github.com/nst/JSONTestSuite) `test_parsing`: in CI `shared/` sits beside
/// the clone; here it may be further up. Not finding it is a failure, not a skip.
enum Conformance {
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    static func suiteDir() throws -> String {
        var dir = URL(fileURLWithPath: packageRoot)
        for _ in 0..<4 {
            dir.deleteLastPathComponent()
            let candidate = dir.appendingPathComponent("shared/conformance/JSONTestSuite/test_parsing").path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
        throw ConfigTests.Failure("JSONTestSuite not found: looked for shared/conformance/JSONTestSuite/test_parsing above \(packageRoot)")
    }

    static func files() throws -> [String] {
        let dir = try suiteDir()
        return try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".json") }.sorted().map { dir + "/" + $0 }
    }
}

@Suite struct ConfigTests {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    static func fresh() -> ServerConfig { ServerConfig(socketPath: "/tmp/x.sock", statePath: "/tmp/x/state.json", soundDirs: []) }

    /// The error a config text gets (nil: accepted).
    static func problem(_ text: String) -> String? {
        var c = fresh()
        do { try c.apply(configText: Array(text.utf8)); return nil } catch { return error.message }
    }

    @Test(arguments: [
        (#"{"allowed_uids":["root"]}"#, #"allowed_uids[0]: must be a numeric id from 0 to 4294967294, not "root""#),
        (#"{"allowed_uids":[1.5]}"#, "allowed_uids[0]: must be a numeric id from 0 to 4294967294, not 1.5"),
        (#"{"allowed_uids":[{"a":1}]}"#, "allowed_uids[0]: must be a numeric id from 0 to 4294967294, not an object"),
        (#"{"allowed_uids":[1000,-1]}"#, "allowed_uids[1]: must be a numeric id from 0 to 4294967294, not -1"),
        (#"{"allowed_uids":-1}"#, "allowed_uids: must be an array, not -1"),
        (#"{"allowed_uids":[4294967296]}"#, "allowed_uids[0]: must be a numeric id from 0 to 4294967294, not 4294967296"),
        (#"{"allowed_uids":[4294967295]}"#, "allowed_uids[0]: must be a numeric id from 0 to 4294967294, not 4294967295"),
        (#"{"allowed_gids":[65534.4]}"#, "allowed_gids[0]: must be a numeric id from 0 to 4294967294, not 65534.4"),
        (#"{"allowed_gids":[1e3]}"#, "allowed_gids[0]: must be a numeric id from 0 to 4294967294, not 1e3"),
        (#"{"max_line":65536.0}"#, "max_line: must be a whole number from 256 to 16777216, not 65536.0"),
        (#"{"max_line":"65536"}"#, #"max_line: must be a whole number from 256 to 16777216, not "65536""#),
        (#"{"max_line":100}"#, "max_line: must be a whole number from 256 to 16777216, not 100"),
        (#"{"voices":null}"#, "voices: must be a whole number from 1 to 256, not null"),
        (#"{"state":"st\u0000.json"}"#, #"state: must not contain a NUL character (\u0000)"#),
        (#"{"sounds":["/a","b\u0000"]}"#, #"sounds[1]: must not contain a NUL character (\u0000)"#),
        (#"{"socket":""}"#, "socket: must be a path, not an empty string"),
        (#"{"state":""}"#, "state: must be a path, not an empty string"),
        (#"{"sounds":["/a",3]}"#, "sounds[1]: must be a string, not 3"),
        (#"{"sound_files":{"pop":""}}"#, "sound_files.pop: must be a path, not an empty string"),
        (#"{"sound_retrigger":{"click":"again"}}"#, #"sound_retrigger.click: must be one of "overlap", "restart", not "again""#),
        (#"{"sound_map":{"tap":"click"}}"#, "sound_map.tap: is not a kind of event; sound_map takes select, reselect, action, center, badge, visibility"),
        (#"{"audio":"pulse"}"#, #"audio: must be one of "auto", "null", "alsa", not "pulse""#),
        (#"{"log_level":"loud"}"#, #"log_level: must be one of "error", "warning", "notice", "info", "debug", not "loud""#),
        (#"{"bar":[]}"#, "bar: must be an object like bar.configure's params, not an array"),
        (#"{"bar":{"items":[{"id":5}]}}"#, "bar.items[0].id: must be a string, not a number"),
        (#"{"bar":{"items":[{"id":"a"}],"settings":{"click_on":"release"}}}"#, #"bar.settings.click_on: must be one of "commit", "press", not "release""#),
        ("null", #"the configuration must be a JSON object ({"key": value, …}), not null"#),
        ("[]", #"the configuration must be a JSON object ({"key": value, …}), not an array"#),
        ("", "not valid JSON at line 1, column 1: empty input"),
        ("{\n  \"max_line\": 1024,\n}", "not valid JSON at line 3, column 1: expected a quoted key"),
        (#"{"max_line":1024,"max_line":2048}"#, #"not valid JSON at line 1, column 18: duplicate key "max_line""#),
    ])
    func badValuesStopTheDaemon(_ text: String, _ expected: String) {
        #expect(Self.problem(text) == expected, "\(text)")
    }

    @Test func anUnknownKeyIsNamedWithTheKnownOnes() throws {
        let p = try #require(Self.problem(#"{"max_lines":1}"#))
        #expect(p.hasPrefix("max_lines: unknown key; the keys are socket, state, sounds,"))
        #expect(!p.contains("params") && !p.contains("Field"))
    }

    @Test func goodValuesAreApplied() throws {
        var c = Self.fresh()
        try c.apply(configText: Array(#"{"allowed_uids":[0,1000,4294967294],"max_line":1024,"state":"/s/t.json","sound_map":{"badge":"click","select":"none"}}"#.utf8))
        #expect(c.allowedUIDs == [0, 1000, 4_294_967_294])
        #expect(c.maxLine == 1024)
        #expect(c.statePath == "/s/t.json")
        #expect(c.soundMap.badge == "click" && c.soundMap.select == nil)
        #expect(c.origins["max_line"] == "file:max_line" && c.origins["voices"] == nil)
    }

    @Test func theFileIsNamedFirst() throws {
        let dir = Rigs.tempDir("tabbard-config")
        defer { _ = system("rm -rf '\(dir)'") }
        let path = dir + "/config.json"
        try Data(#"{"allowed_uids":[-1]}"#.utf8).write(to: URL(fileURLWithPath: path))
        var c = Self.fresh()
        #expect(throws: ConfigError.self) { try c.apply(configFile: path) }
        do { try c.apply(configFile: path) } catch {
            #expect(error.message == "\(path): allowed_uids[0]: must be a numeric id from 0 to 4294967294, not -1")
        }
        #expect(c.allowedUIDs == [])
        do { try c.apply(configFile: dir + "/none.json") } catch { #expect(error.message == "\(dir)/none.json: no such file") }
    }

    /// The example in docs/CONFIG.md is a valid configuration.
    @Test func theDocumentedExampleIsValid() throws {
        let doc = try String(contentsOfFile: Conformance.packageRoot + "/docs/CONFIG.md", encoding: .utf8)
        let start = try #require(doc.range(of: "```json\n"))
        let end = try #require(doc.range(of: "```", range: start.upperBound..<doc.endIndex))
        #expect(Self.problem(String(doc[start.upperBound..<end.lowerBound])) == nil)
    }

    /// Every JSONTestSuite parsing case used as a config file: a clean one-line error naming
    /// the file, or (only `{}`) a start with the defaults.
    @Test func everyJSONTestSuiteCaseIsACleanErrorOrADocumentedStart() throws {
        let files = try Conformance.files()
        #expect(files.count >= 300)
        var accepted: [String] = []
        for path in files {
            var c = Self.fresh()
            do {
                try c.apply(configFile: path)
                accepted.append((path as NSString).lastPathComponent)
            } catch {
                let m = error.message
                #expect(m.hasPrefix(path + ": "), "\(path): \(m)")
                #expect(!m.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(path): control character in \(m.debugDescription)")
                #expect(m.utf8.count < 800, "\(path): \(m)")
            }
        }
        #expect(accepted == ["y_object_empty.json"])
    }
}
