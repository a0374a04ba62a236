// libFuzzer entry point for the protocol pipeline (see Fuzz/FuzzSupport/ProtocolFuzz.swift).
//
//   make fuzz                      # libFuzzer, -max_total_time=$(FUZZ_SECONDS) over Fuzz/corpus
//
// Built with `--sanitize=fuzzer`, libFuzzer supplies `main` and calls the function
// below for every input (`FuzzProtocol FILE` replays one input). This file holds
// only declarations, so a plain `swift build` also compiles it, into a program
// that does nothing; the corpus is replayed in plain builds by Tests/FuzzTests.
@preconcurrency import Glibc
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let buffer = UnsafeBufferPointer(start: data, count: size)
    if let violation = ProtocolFuzz.run(buffer) {
        fputs("FUZZ VIOLATION: \(violation)\n", stderr)
        abort()
    }
    return 0
}

