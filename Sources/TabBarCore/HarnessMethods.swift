/// The test-harness methods (docs/HARNESS.md): the manual clock (`tabbard --clock manual`)
/// and the null sink's WAV capture. The server runs them; they change no bar state.
extension Methods {
    static let harness: [MethodSpec] = [
        .server("clock.advance", fields: ["ms"]) { p, _ throws(RPCError) in
            guard let ms = try p.int("ms", range: 0...3_600_000) else {
                throw .invalidParams("ms", "Missing field \"ms\" (milliseconds to move the manual clock by, 0…3600000).")
            }
            return .clockAdvance(ms: ms)
        },
        .server("clock.get", fields: []) { _, _ throws(RPCError) in .clockGet },
        .server("capture.start", fields: ["path"]) { p, _ throws(RPCError) in
            return .captureStart(path: try p.requiredString("path", maxLength: 4096))
        },
        .server("capture.stop", fields: []) { _, _ throws(RPCError) in .captureStop },
    ]
}
