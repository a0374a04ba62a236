import TabBarCore

/// The per-line decoding workspace of the state loop: what a read lands in, the documents
/// a line is read into, where replies and events are encoded, the reducer's outcome — all
/// reused for every line, so handling one allocates nothing — and when the line was read.
final class Workspace {
    var readBuffer = [UInt8](repeating: 0, count: 65536)
    /// The line being handled, read in place (reused for every line).
    let requestDoc = JSONDocument()
    /// The configured bar's params when a `bar.configure {"initial":true}` asks for them.
    let initialDoc = JSONDocument()
    /// Where a reply or an event line is encoded (reused; an event once for all its subscribers).
    var scratch = ByteBuffer(capacity: 8192)
    /// Time the line being handled was read (CLOCK_MONOTONIC ns).
    var lineReadNs: UInt64 = 0
    /// What the reducer makes of a command (reused: its arrays keep their memory).
    var outcome = Outcome(reply: .success(.none))

    deinit { scratch.free() }
}
