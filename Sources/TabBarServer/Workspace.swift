import TabBarCore

/// The per-line decoding workspace of the state loop: what a read lands in, the documents
/// a line is read into, where replies and events are encoded, the reducer's outcome — all
/// reused for every line, so handling one allocates nothing — and when the line was read.
/// A final class the server holds in a `let`: its documents are reached without a retain
/// (through `request(in:)`, whose `self` is already guaranteed).
final class Workspace {
    var readBuffer = [UInt8](repeating: 0, count: 65536)
    /// The line being handled, read in place (reused for every line).
    private let requestDoc = JSONDocument()
    /// The configured bar's params when a `bar.configure {"initial":true}` asks for them.
    private let initialDoc = JSONDocument()
    /// Where a reply or an event line is encoded (reused; an event once for all its subscribers).
    var scratch = ByteBuffer(capacity: 8192)
    /// Time the line being handled was read (CLOCK_MONOTONIC ns).
    var lineReadNs: UInt64 = 0
    /// What the reducer makes of a command (reused: its arrays keep their memory).
    var outcome = Outcome(reply: .success(.none))
    /// `Methods.all`, held here: reading the global costs its lazy initialiser's check.
    let methods = Methods.all
    /// The same, for use without a reference count (`Server.handle`): `Methods.all` keeps them.
    let specs = Methods.all.map { Unmanaged.passUnretained($0) }
    /// Every method's name as its journal lines write it, by its index in `Methods.all`, and
    /// last `timer.fired` (a timer's step, no method). (Each in an object of its own, read
    /// without a reference count, `journalName`: a name read from an array was retained and
    /// released for every journal line.)
    private let methodNames: [Unmanaged<JournalName>] = (Methods.all.map(\.name) + ["timer.fired"]).map {
        .passRetained(JournalName(QuotedText($0)))  // (never released: the table lives as long as the process)
    }

    final class JournalName {
        let text: QuotedText
        init(_ text: QuotedText) { self.text = text }
    }

    /// Calls `body` with the journal name of method `index` (nil: `timer.fired`).
    @inline(__always)
    func journalName<R>(_ index: Int?, _ body: (QuotedText) -> R) -> R {
        methodNames[index ?? methodNames.count - 1]._withUnsafeGuaranteedRef { body($0.text) }
    }

    /// `bar.configure`'s index in `Methods.all` (`Server.initialBarParams`).
    let barConfigure = Methods.all.firstIndex { $0.name == "bar.configure" }

    deinit { scratch.free() }

    /// Reads `line`'s envelope in place (`Envelope.read`); valid until the next line.
    @inline(__always)
    func request(in line: UnsafeBufferPointer<UInt8>) throws(Envelope.Rejection) -> Request {
        try Envelope.read(line, into: requestDoc)
    }

    /// `params` read as a document (the configured bar's, InitialBar.swift); valid until the next call.
    func initialParams(_ params: JSON) -> JSONValue {
        try! initialDoc.parse(params.encoded())
        return initialDoc.root
    }
}
