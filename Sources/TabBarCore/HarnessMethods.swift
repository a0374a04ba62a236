/// The test-harness methods (docs/HARNESS.md): the manual clock (`tabbard --clock manual`)
/// and the null sink's WAV capture. The server runs them; they change no bar state.
extension Methods {
    static let harness: [MethodSpec] = [
        .server("clock.advance", "Moves the manual clock by ms, firing every timer due on the way (tabbard --clock manual).",
                params: [.int("ms", 0...3_600_000, required: true, "Milliseconds.")],
                result: Schema.sent(["now_ms": Schema.seq]),
                errors: [MethodError("clock_not_manual", "The daemon runs on the real clock.")]) { p, _ throws(RPCError) in
            guard let ms = try p.int("ms", range: 0...3_600_000) else {
                throw .invalidParams("ms", "Missing field \"ms\" (milliseconds to move the manual clock by, 0…3600000).")
            }
            return .clockAdvance(ms: ms)
        },
        .server("clock.get", "The clock's time and mode.", params: [],
                result: Schema.sent(["now_ms": Schema.seq, "mode": Schema.strings(["real", "manual"])])) { _, _ throws(RPCError) in .clockGet },
        .server("capture.start", "Writes the null sink's mix to a WAV file from now on.",
                params: [.string("path", maxBytes: 4096, required: true, "The file to write.")],
                result: Schema.sent(["path": Schema.str, "frame": Schema.seq]),
                errors: [MethodError("capture_failed", "No null sink, the file cannot be written, or a capture runs already.")]) { p, _ throws(RPCError) in
            return .captureStart(path: try p.requiredString("path", maxLength: 4096))
        },
        .server("capture.stop", "Ends the capture.", params: [],
                result: Schema.sent(["path": Schema.str, "frame": Schema.seq, "frames": Schema.seq]),
                errors: [MethodError("capture_failed", "No capture runs.")]) { _, _ throws(RPCError) in .captureStop },
    ]
}
