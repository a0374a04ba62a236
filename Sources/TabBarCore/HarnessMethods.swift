/// The test-harness methods (docs/HARNESS.md): the manual clock (`tabbard --clock manual`)
/// and the null sink's WAV capture. The server runs them; they change no bar state.
extension Methods {
    static let harness: [MethodSpec] = [
        .server("clock.advance") { p, _ throws(RPCError) in
            try p.only(["ms"])
            guard let ms = try p.int("ms", range: 0...3_600_000) else {
                throw .invalidParams("ms", "Missing field \"ms\" (milliseconds to move the manual clock by, 0…3600000).")
            }
            return .clockAdvance(ms: ms)
        },
        .server("clock.get") { p, _ throws(RPCError) in try p.only([]); return .clockGet },
        .server("capture.start") { p, _ throws(RPCError) in
            try p.only(["path"])
            return .captureStart(path: try p.requiredString("path", maxLength: 4096))
        },
        .server("capture.stop") { p, _ throws(RPCError) in try p.only([]); return .captureStop },
    ]
}
