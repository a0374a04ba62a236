import Glibc
import TabBarCore
import TabBarClient

/// A real `tabbard` for a front end's tests: started on a temporary socket and state
/// with the null audio sink, the manual clock (`--clock manual`) and a WAV capture of
/// its stream. Time moves only by `advance(ms:)`, so a test of a 500 ms slide-away
/// takes no 500 ms and never flakes; the events and the captured audio are the same,
/// byte for byte, on every run (docs/HARNESS.md).
///
/// Errors are thrown (`HarnessError`, saying what arrived instead), so it works the
/// same from XCTest and Swift Testing. Not thread-safe: one test, one daemon.
public final class HeadlessDaemon {
    /// The temporary directory holding the socket, the state, the captures and the daemon's log.
    public let directory: String
    /// The daemon's socket (connect your own client to it: `TabBar.connect(path:)`).
    public let socketPath: String
    /// The daemon's state file.
    public let statePath: String
    /// The daemon's process id.
    public let pid: pid_t
    /// The client the helpers use (`TabBar`); it is subscribed to every event. The helpers
    /// wait for its requests, which run on `bar.executor`: call them from anywhere but a task
    /// on that executor.
    public let bar: TabBar
    /// The sounds directory it was given (`sounds:`, or the shipped one it found); nil when
    /// `$TABBARD_SOUNDS` or a `--sounds` among the arguments chose.
    public let soundsDirectory: String?
    /// How long `expect` and the helpers wait for the daemon (real time), in ms.
    public var timeoutMs: Int

    private var inbox: [JSON] = []
    /// The lines of `bar`, as its thread receives them.
    private let lines = Inbox()
    private var played: [PlayedSound] = []
    private var captureIndex = 0
    private var captured: [Int16] = []
    private var capturedFirstFrame: Int64 = 0
    private var format = (rate: 48000, channels: 2)
    private var running = true
    /// The daemon runs on the manual clock (nothing happens between requests).
    private let manualClock: Bool

    /// Starts `tabbard` and connects.
    /// - Parameters:
    ///   - binary: the `tabbard` executable; default `HeadlessDaemon.locateDaemon()`:
    ///     `$TABBARD_BIN_DIR/tabbard`, else next to the running test, else in the tabbard
    ///     package's own `.build/debug` or `.build/release`, else `tabbard` on `PATH`. When
    ///     none is there it throws one line saying what to do (`swift build --product tabbard`).
    ///   - sounds: a sounds directory (`--sounds`); default `$TABBARD_SOUNDS` (the daemon's own
    ///     variable: directories separated by colons), else `HeadlessDaemon.shippedSounds`
    ///     (the package's `Sounds/`, or the installed `/usr/share/tabbard/sounds`).
    ///   - configuration: a bar to configure before the test starts (`bar.configure` params), if any.
    ///   - arguments: more daemon flags (`--config FILE`, `--log-level debug`…). Without a
    ///     `--config FILE` among them the daemon reads no configuration file (`--no-config`):
    ///     the developer's `~/.config/tabbard/` and `/etc/tabbard/` never change the bar under a test.
    public init(binary: String? = nil, sounds: String? = nil, configuration: JSON? = nil,
                arguments: [String] = [], timeoutMs: Int = 10_000) throws {
        self.timeoutMs = timeoutMs
        let exe = try binary ?? HeadlessDaemon.locateDaemon()
        var soundArgs: [String] = []
        var chosen: String?
        if let dir = sounds {
            soundArgs = ["--sounds", dir]
            chosen = dir
        } else if HeadlessDaemon.env("TABBARD_SOUNDS") == nil && !arguments.contains("--sounds") {
            guard let dir = HeadlessDaemon.shippedSounds else {
                throw HarnessError("no sounds directory found (looked in \(HeadlessDaemon.soundPlaces.joined(separator: ", "))): pass sounds:, or set TABBARD_SOUNDS to a directory of .wav files")
            }
            soundArgs = ["--sounds", dir]
            chosen = dir
        }
        soundsDirectory = chosen
        manualClock = !arguments.contains("--clock")
        var template = Array((HeadlessDaemon.tempRoot() + "/tabbard-harness-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessError("cannot create a temporary directory: \(String(cString: strerror(errno)))") }
        directory = String(cString: made)
        socketPath = directory + "/socket"
        statePath = directory + "/state.json"
        var args = ["tabbard", "--socket", socketPath, "--state", statePath, "--audio", "null", "--clock", "manual",
                    "--capture", directory + "/capture-0.wav"]
        if arguments.contains("--clock") { args.removeSubrange(7...8) }
        args += soundArgs
        if !arguments.contains("--config") && !arguments.contains("--no-config") { args.append("--no-config") }
        args += arguments
        do {
            pid = try HeadlessDaemon.spawn(exe, args, log: directory + "/tabbard.log")
        } catch {
            HeadlessDaemon.removeTree(directory)
            throw error
        }
        do {
            bar = try HeadlessDaemon.connect(socketPath, pid: pid, timeoutMs: timeoutMs, log: directory + "/tabbard.log")
            lines.follow(bar)
            _ = try HeadlessDaemon.blocking(bar) { try await $0.call("subscribe") }
            if let configuration { _ = try call("bar.configure", configuration) }
        } catch {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            HeadlessDaemon.removeTree(directory)
            throw error
        }
    }

    deinit { stop() }

    // MARK: Requests

    /// Sends a request; returns its `result`, throws `ClientError.rpc` for an error reply.
    @discardableResult
    public func call(_ method: String, _ params: JSON? = nil) throws -> JSON {
        guard running else { throw ClientError.closed }
        let r = try HeadlessDaemon.blocking(bar) { try await $0.call(method, params) }
        collect()
        return r
    }

    /// Moves the daemon's clock by `ms`: every timer due on the way fires, in order, and
    /// the audio up to the new time is rendered. Returns the new time (`now_ms`).
    @discardableResult
    public func advance(ms: Int) throws -> Int64 {
        let r = try call("clock.advance", .obj(["ms": .int(ms)]))
        return Int64(r["now_ms"]?.intValue ?? -1)
    }

    /// The daemon's clock (ms since it started).
    public func now() throws -> Int64 { Int64(try call("clock.get")["now_ms"]?.intValue ?? -1) }

    /// The bar's state (`state.get`'s `state`).
    public func state() throws -> JSON {
        try call("state.get")["state"] ?? .null
    }

    // MARK: Events

    /// Waits for the next event named `event` whose params match: each key of `matching`
    /// (a dotted path such as `visibility.hidden`) has that value — a string as it is,
    /// anything else as its JSON text (`true`, `3`, `null`). Events before it are
    /// consumed. Returns its params; throws, listing what arrived instead, when none
    /// comes within `timeoutMs`.
    @discardableResult
    public func expect(event: String, matching: [String: String] = [:], timeoutMs: Int? = nil) throws -> JSON {
        try expect(event: event, description: HeadlessDaemon.describe(matching), timeoutMs: timeoutMs) {
            EventMatch.matches($0, matching)
        }
    }

    /// Like `expect(event:matching:)` with a predicate on the params.
    @discardableResult
    public func expect(event: String, description: String = "", timeoutMs: Int? = nil,
                       where predicate: (JSON) -> Bool) throws -> JSON {
        guard Topics.events.contains(event) else {
            throw HarnessError("expected \(event), which is no event of the daemon's (Topics.events: \(Topics.events.joined(separator: ", ")))")
        }
        let m = try waitFor(timeoutMs: timeoutMs, what: "\(event)\(description.isEmpty ? "" : " with \(description)")") { m in
            m["method"]?.stringValue == event && predicate(m["params"] ?? .null)
        }
        return m["params"] ?? .null
    }

    /// Waits for the next event equal to `event` (typed, as `TabBarClient` decodes it);
    /// events before it are consumed. Throws, naming what arrived instead.
    ///
    /// ```swift
    /// try h.expect(.tabSelected(seq: 2, tab: "chat", previous: "home", source: .user))
    /// ```
    public func expect(_ event: TabBarEvent, timeoutMs: Int? = nil) throws {
        _ = try waitFor(timeoutMs: timeoutMs, what: "\(event)") { m in Self.typed(m) == event }
    }

    /// Waits for the next event for which `match` returns a value, and returns that value;
    /// events before it are consumed. `description` names what is awaited in the error.
    ///
    /// ```swift
    /// let frame = try h.expect("a click") { event -> Int64? in
    ///     if case .soundPlayed(let sound) = event, sound.name == "click" { return sound.frame }
    ///     return nil
    /// }
    /// ```
    public func expect<T>(_ description: String, timeoutMs: Int? = nil, _ match: (TabBarEvent) -> T?) throws -> T {
        var found: T?
        _ = try waitFor(timeoutMs: timeoutMs, what: description) { m in
            guard let e = Self.typed(m), let v = match(e) else { return false }
            found = v
            return true
        }
        return found!
    }

    /// The events received and not yet consumed by `expect`, oldest first, typed.
    public var pendingTypedEvents: [TabBarEvent] { pendingEvents.compactMap(Self.typed) }

    static func typed(_ m: JSON) -> TabBarEvent? {
        guard let name = m["method"]?.stringValue else { return nil }
        let params = m["params"] ?? .obj([:])
        return (try? TabBarEvent(name: name, params: params)) ?? .other(name: name, params: params)
    }

    /// Takes the first event of the inbox that `matches`, reading more until `timeoutMs`.
    /// Under the manual clock, with no other client connected, nothing can arrive after a
    /// round trip that has not arrived before its reply: then it fails at once. While another
    /// client is connected (it could still cause the event) it asks again every 20 ms.
    private func waitFor(timeoutMs: Int?, what: String, _ matches: (JSON) -> Bool) throws -> JSON {
        let deadline = monotonicMs() + Int64(timeoutMs ?? self.timeoutMs)
        var scanned = 0
        var settled = false
        var nextCheck: Int64 = 0
        while true {
            while scanned < inbox.count {
                let m = inbox[scanned]
                if matches(m) {
                    inbox.removeFirst(scanned + 1)
                    return m
                }
                scanned += 1
            }
            if manualClock && !settled && monotonicMs() >= nextCheck {
                // Every event of the requests made so far arrives before this reply.
                nextCheck = monotonicMs() + 20
                let stats = try HeadlessDaemon.blocking(bar) { try await $0.call("stats.get") }
                collect()
                settled = stats["clients"]?.intValue == 1
                continue
            }
            let left = deadline - monotonicMs()
            if settled || left <= 0 {
                let seen = inbox.map { $0.text }
                throw HarnessError("expected \(what); "
                                   + (seen.isEmpty ? "no event arrived" : "arrived instead: \(seen.joined(separator: ", "))")
                                   + (settled ? " (and none can: the manual clock stands still and no other client is connected)" : ""))
            }
            let wait = manualClock && !settled ? min(left, max(nextCheck - monotonicMs(), 1)) : left
            try lines.wait(ms: Int(wait))
            collect()
        }
    }

    /// Fails when an event named `event` (matching, as in `expect`) has arrived. Every
    /// event of the requests made so far has arrived by then: the daemon sends them
    /// before its replies, and this makes one more round trip first.
    public func expectNoEvent(_ event: String, matching: [String: String] = [:]) throws {
        _ = try call("ping")
        if let m = inbox.first(where: { $0["method"]?.stringValue == event && EventMatch.matches($0["params"] ?? .null, matching) }) {
            throw HarnessError("expected no \(event)\(matching.isEmpty ? "" : " with \(HeadlessDaemon.describe(matching))"), got \(m.text)")
        }
    }

    /// Fails when an event for which `match` is true has arrived (typed, as in
    /// `expect(_:_:)`), after the same round trip as `expectNoEvent(_:matching:)`.
    ///
    /// ```swift
    /// try h.expectNoEvent("a selection") { if case .tabSelected = $0 { return true } else { return false } }
    /// ```
    public func expectNoEvent(_ description: String, _ match: (TabBarEvent) -> Bool) throws {
        _ = try call("ping")
        if let m = inbox.first(where: { Self.typed($0).map(match) ?? false }) {
            throw HarnessError("expected no \(description), got \(m.text)")
        }
    }

    /// The events received and not yet consumed by `expect`, oldest first.
    public var pendingEvents: [JSON] {
        collect()
        return inbox
    }

    // MARK: Audio

    /// Everything the daemon's audio stream held since it started — the mix the device
    /// would have played, as 16-bit samples — and the sounds that started in it.
    public func capturedAudio() throws -> CapturedAudio {
        let stop = try call("capture.stop")
        guard let path = stop["path"]?.stringValue else { throw HarnessError("capture.stop answered \(stop.text)") }
        let wav = try WAVFile.read(path)
        format = (wav.rate, wav.channels)
        if captured.isEmpty { capturedFirstFrame = Int64(stop["frame"]?.intValue ?? 0) }
        captured += wav.samples
        unlink(path)
        captureIndex += 1
        _ = try call("capture.start", .obj(["path": .string(directory + "/capture-\(captureIndex).wav")]))
        return CapturedAudio(rate: format.rate, channels: format.channels, firstFrame: capturedFirstFrame,
                             samples: captured, sounds: played)
    }

    // MARK: Life cycle

    /// The daemon's log (stderr) so far.
    public var log: String {
        guard let b = try? readAll(directory + "/tabbard.log") else { return "" }
        return String(decoding: b, as: UTF8.self)
    }

    /// Stops the daemon (SIGTERM, then SIGKILL after `timeoutMs`) and removes the
    /// temporary directory. Returns its exit status (-1: killed). Idempotent.
    @discardableResult
    public func stop() -> Int32 {
        guard running else { return 0 }
        running = false
        bar.close()
        kill(pid, SIGTERM)
        var status: Int32 = 0
        let deadline = monotonicMs() + Int64(timeoutMs)
        var exit: Int32 = -1
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid {
                if status & 0x7f == 0 { exit = (status >> 8) & 0xff }
                break
            }
            if r < 0 { break }
            if monotonicMs() > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                break
            }
            usleep(2_000)
        }
        HeadlessDaemon.removeTree(directory)
        return exit
    }

    // MARK: Internals

    private func take(_ m: JSON) {
        guard m["method"] != nil else { return }
        if m["method"]?.stringValue == "sound.played", let p = m["params"] {
            played.append(PlayedSound(name: p["name"]?.stringValue ?? "", voice: p["voice"]?.intValue ?? 0,
                                      frame: Int64(p["frame"]?.intValue ?? -1)))
        }
        inbox.append(m)
    }

    /// Moves what the connection has received into the inbox.
    private func collect() {
        for m in lines.take() { take(m) }
    }

    static func describe(_ matching: [String: String]) -> String {
        matching.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}

/// The captured stream: interleaved 16-bit samples from stream frame `firstFrame` on.
public struct CapturedAudio: Sendable {
    /// Frames per second.
    public var rate: Int
    /// Samples per frame.
    public var channels: Int
    /// The stream frame of the first sample.
    public var firstFrame: Int64
    /// Interleaved samples.
    public var samples: [Int16]
    /// Every sound that started, in order, with its stream frame.
    public var sounds: [PlayedSound]

    /// How many frames were captured.
    public var frames: Int { samples.count / max(channels, 1) }

    /// The samples of frames `range` (stream frames), interleaved.
    public func samples(frames range: Range<Int64>) -> ArraySlice<Int16> {
        let lo = Int(max(range.lowerBound - firstFrame, 0)) * channels
        let hi = Int(max(range.upperBound - firstFrame, 0)) * channels
        return samples[min(lo, samples.count)..<min(hi, samples.count)]
    }
}

/// Why a harness step failed: one sentence saying what was expected and what came.
public struct HarnessError: Error, CustomStringConvertible {
    /// What was expected and what happened instead, in one line.
    public var description: String
    /// A failure saying `description`.
    public init(_ description: String) { self.description = description }
}
