/// The on-disk forms of the state, shared by the daemon's `StateStore` and the
/// fuzzer: the snapshot document and the journal of changes.
///
/// - Snapshot: `{"version":1,"seq":N,"state":State}` and a newline.
/// - Journal: one line per change, `{"seq":N,"method":"…","params":{…}}`, replayed
///   through the reducer on start.
public enum Persistence {
    /// Why a snapshot cannot be used.
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public var description: String
        public init(_ d: String) { description = d }
    }

    /// The snapshot document of `state`, newline-terminated.
    public static func snapshot(_ state: BarState, limits: Limits) -> [UInt8] {
        let doc: JSON = .obj(["version": .int(1), "seq": .int(state.seq), "state": state.json(limits: limits)])
        var bytes = doc.encoded()
        bytes.append(0x0A)
        return bytes
    }

    /// Decodes and validates a snapshot document.
    public static func decodeSnapshot(_ bytes: [UInt8], limits: Limits) throws(Problem) -> BarState {
        let doc: JSONDocument
        do { doc = try JSONDocument(parsing: bytes) } catch { throw Problem(error.description) }
        defer { withExtendedLifetime(doc) {} }
        let root = doc.root
        guard let seq = root["seq"]?.intValue, seq >= 0, let st = root["state"] else {
            throw Problem("the snapshot has no seq or state")
        }
        do throws(RPCError) {
            let state = try BarState.decode(st, seq: UInt64(seq), limits: limits)
            if let e = Reducer.validate(state.items, limits: limits) { throw e }
            return restored(state)
        } catch {
            throw Problem(error.message)
        }
    }

    /// What a restart does to the transient parts of a state (a highlight, an
    /// animation, a show/hide phase do not survive the process): `Reducer.settle`.
    public static func restored(_ state: BarState) -> BarState {
        var r = Reducer(state: state)
        r.settle()
        return r.state
    }

    /// Appends the journal line of one change, with its newline, to `line`: what the
    /// reducer's outcome records (`entry`: the method it names and the params it records;
    /// `touch.highlight` has none), else the request as it came (`method` and its params'
    /// bytes). Replay reads it with the decoder requests go through.
    public static func journalLine(seq: UInt64, entry: JournalEntry?, method: String, params: UnsafeBufferPointer<UInt8>?,
                                   into line: inout ByteBuffer) {
        line.seqHead(seq)
        guard let entry else {
            line.put(#","method":"#); line.string(method)
            if let params {
                line.put(#","params":"#)
                line.append(params)
            }
            return line.put("}\n")
        }
        line.put(#","method":""#); line.put(entry.method); line.put(#"""#)
        switch entry {
        case let .select(tab, source), let .actionTrigger(tab, source):
            line.put(#","params":{"tab":"#); line.string(tab)
            line.put(#","source":"#); line.source(source); line.put("}")
        case let .setHidden(hidden, reason):
            line.put(#","params":{"hidden":"#); line.bool(hidden)
            line.put(#","reason":""#); line.utf8(reason.rawValue); line.put(#""}"#)
        case .timerFired(let key):
            line.put(#","params":"#); line.json(key.json)
        case .touchHighlight:
            break
        }
        line.put("}\n")
    }

    /// Replays a journal, fed in chunks of any size, into a reducer. Entries at or
    /// below the reducer's `seq` are already in the snapshot and are skipped.
    ///
    /// Two formats: entry lines one after the other (format 1, what tabbard wrote before
    /// groups), where the first bad line stops the replay and everything before it is
    /// kept; and groups (`JournalGroup`, format 2), where only complete, checked groups
    /// are applied, each whole, and the first thing that is not one ends the journal
    /// (`ended`): bytes left from the file's previous use, or a write cut short. Unless a
    /// checked group of a higher seq than any replayed (or the snapshot's) follows within
    /// `probeBytes`: then the bytes in between were damaged, and the replay stops there as
    /// `bad` (corruption), keeping what came before. The search ends at the first checked
    /// group of a lower seq (the previous use's). A file may start in format 1 and go on in groups (a journal continued after
    /// an upgrade). Call `finish` after the last byte.
    public struct Replayer {
        public private(set) var reducer: Reducer
        /// Entries applied to the state.
        public private(set) var applied = 0
        /// Well-formed entries seen (applied or skipped).
        public private(set) var good = 0
        /// Why the replay stopped early at a bad entry (corruption), if it did.
        public private(set) var bad: String?
        /// Why a grouped journal ended before its last byte, if it did: not corruption
        /// (see the type's comment); the bytes from `goodBytes` on were ignored.
        public private(set) var ended: String?
        /// How far past the end of the good groups to look for a later group (see above).
        public var probeBytes = 1 << 20
        /// Looking past a bad group for a later good one: why the groups stopped, bytes left.
        private var probe: (why: String, left: Int)?
        /// Whether the bytes ignored from `goodBytes` on start with a group of this
        /// journal that a crash cut short (rather than bytes of the file's previous use).
        public private(set) var endedInGroup = false
        /// Length of the good prefix in bytes (complete good lines, or complete groups).
        public private(set) var goodBytes = 0
        /// Complete, checked groups read (0: the journal is in format 1, or empty).
        public private(set) var groups = 0
        /// The `seq` of the last complete group.
        public private(set) var lastGroupSeq: UInt64?
        /// Longest journal line accepted.
        public let maxLine: Int
        private var partial: [UInt8] = []

        /// The group being read: its header, header length, bytes still to come, lines
        /// so far, running check, the first entry in it that could not be applied, and
        /// what to go back to if it does not check out.
        private var group: JournalGroup.Header?
        private var groupHeaderBytes = 0
        private var groupRemaining = 0
        private var groupLines = 0
        private var groupCheck = JournalCheck(seq: 0, entries: 0)
        private var groupUnreadable: String?
        private var beforeGroup: (reducer: Reducer, applied: Int)?

        public init(_ reducer: Reducer, maxLine: Int = 1 << 24) {
            self.reducer = reducer
            self.maxLine = maxLine
        }

        /// Bytes after the last complete line or group: a write that was cut off (never acknowledged).
        public var torn: Bool { bad == nil && ended == nil && probe == nil && (!partial.isEmpty || group != nil) }

        /// Whether the replay has stopped (bad, or ended): the rest of the file need not be read.
        public var stopped: Bool { bad != nil || ended != nil }

        /// Ends the replay after the last byte: a search past a bad group that found
        /// nothing means the journal ended there.
        public mutating func finish() {
            if let p = probe { ended = p.why; probe = nil; group = nil; partial = [] }
        }

        public mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>) {
            var start = 0
            while !stopped && start < chunk.count {
                var nl = start
                while nl < chunk.count && chunk[nl] != 0x0A { nl += 1 }
                if nl == chunk.count {
                    if partial.count + (nl - start) > maxLine {
                        if probe != nil { finish() } else { stop("a line longer than \(maxLine) bytes") }
                        partial = []
                    } else {
                        partial.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[start..<nl]))
                    }
                    return
                }
                if partial.isEmpty {
                    line(UnsafeBufferPointer(rebasing: chunk[start...nl]))
                } else {
                    partial.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[start...nl]))
                    let l = partial
                    partial = []
                    l.withUnsafeBufferPointer { line($0) }
                }
                start = nl + 1
            }
        }

        public mutating func feed(_ bytes: [UInt8]) {
            bytes.withUnsafeBufferPointer { feed($0) }
        }

        /// The document each entry is read into (reused), as the server reads requests.
        private let doc = JSONDocument()

        /// A bad line: corruption in format 1, the end of the journal in groups.
        private mutating func stop(_ why: String) {
            if groups > 0 || group != nil { endGroup(why) } else { bad = why }
        }

        /// Gives up the group being read (if any) and ends the groups there; looks on for a
        /// later good group (see the type's comment).
        private mutating func endGroup(_ why: String) {
            if let saved = beforeGroup {
                reducer = saved.reducer
                applied = saved.applied
                endedInGroup = true
            }
            group = nil
            beforeGroup = nil
            if probe == nil && probeBytes > 0 { probe = (why, probeBytes) } else { ended = why }
        }

        /// A line read while looking past a bad group: a checked group of a higher seq than
        /// the last good one means damage; one of a lower seq, the previous use's bytes.
        private mutating func probeLine(_ withNewline: UnsafeBufferPointer<UInt8>, _ l: UnsafeBufferPointer<UInt8>) {
            guard let p = probe else { return }
            probe!.left -= withNewline.count
            if let h = group {
                take(withNewline)
                if groupRemaining < 0 { group = nil }
                else if groupRemaining == 0 {
                    group = nil
                    if groupLines == h.entries && groupCheck.value == h.check {
                        // Newer than anything replayed (the snapshot's seq included: a file's
                        // previous use is all in a snapshot) — changes the journal would lose.
                        if h.seq > max(lastGroupSeq ?? 0, reducer.state.seq) {
                            bad = "\(p.why), and a good group after it (seq \(h.seq))"
                        } else {
                            ended = p.why
                        }
                        probe = nil
                        return
                    }
                }
            } else if Replayer.startsLikeAHeader(l), let h = JournalGroup.parseHeader(l), h.entries > 0, h.entries <= h.bytes {
                begin(h)
            }
            if probe!.left <= 0 { finish() }
        }

        private static func startsLikeAHeader(_ l: UnsafeBufferPointer<UInt8>) -> Bool {
            l.count >= JournalGroup.prefix.count && JournalGroup.prefix.elementsEqual(l.prefix(JournalGroup.prefix.count))
        }

        /// Starts reading the lines of the group `h` heads.
        private mutating func begin(_ h: JournalGroup.Header) {
            group = h
            groupRemaining = h.bytes
            groupLines = 0
            groupCheck = JournalCheck(seq: h.seq, entries: h.entries)
        }

        /// Counts one line of the group being read into its length, lines and check.
        private mutating func take(_ withNewline: UnsafeBufferPointer<UInt8>) {
            groupCheck.update(withNewline)
            groupRemaining -= withNewline.count
            groupLines += 1
        }

        /// One line, newline included.
        private mutating func line(_ withNewline: UnsafeBufferPointer<UInt8>) {
            let l = UnsafeBufferPointer(rebasing: withNewline.dropLast())
            if probe != nil { return probeLine(withNewline, l) }
            if let h = group {
                take(withNewline)
                guard groupRemaining >= 0 else { return endGroup("a line runs past the end of its group") }
                if groupUnreadable == nil, let why = entry(l, counted: false) { groupUnreadable = why }
                if groupRemaining == 0 { finishGroup(h) }
                return
            }
            if Replayer.startsLikeAHeader(l) {
                // (A header cut short and stitched to other bytes: the end of the groups, not corruption.)
                guard let h = JournalGroup.parseHeader(l) else { return endGroup("a group header that cannot be read") }
                if let last = lastGroupSeq, h.seq <= last { return endGroup("a group older than the one before it") }
                if h.entries == 0 && goodBytes > 0 { return endGroup("an empty group after the start of the file") }
                if h.entries > h.bytes { return endGroup("a group of more entries than bytes") }
                begin(h)
                groupHeaderBytes = withNewline.count
                groupUnreadable = nil
                beforeGroup = (reducer, applied)
                if h.bytes == 0 { finishGroup(h) }
                return
            }
            if groups > 0 { return endGroup("a line outside any group") }
            if l.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { goodBytes += withNewline.count; return }
            if let why = entry(l, counted: true) { bad = why }
        }

        private mutating func finishGroup(_ h: JournalGroup.Header) {
            guard groupLines == h.entries, groupCheck.value == h.check else {
                return endGroup("a group whose check does not match its bytes")
            }
            if let why = groupUnreadable {
                // The group checks out, so these are the bytes the daemon wrote: corruption.
                if let saved = beforeGroup { reducer = saved.reducer; applied = saved.applied }
                group = nil
                beforeGroup = nil
                bad = why
                return
            }
            good += h.entries
            goodBytes += groupHeaderBytes + h.bytes
            groups += 1
            lastGroupSeq = h.seq
            group = nil
            beforeGroup = nil
        }

        /// Applies one entry line (without its newline); returns why it could not.
        /// `counted`: count it in `good` / `goodBytes` (format 1; a group counts its own).
        private mutating func entry(_ line: UnsafeBufferPointer<UInt8>, counted: Bool) -> String? {
            if line.count > maxLine { return "a line longer than \(maxLine) bytes" }
            // The same decoder as a request's: the entry's params go through its method's declaration.
            do { try doc.parse(line) } catch { return error.description }
            let root = doc.root
            guard let seq = root["seq"]?.intValue, seq >= 0, let method = root["method"]?.stringValue else {
                return "an entry without seq or method"
            }
            if counted { good += 1; goodBytes += line.count + 1 }
            guard UInt64(seq) > reducer.state.seq else { return nil }  // already in the snapshot
            // (`timer.fired` and `touch.highlight` name no method: they only count their seq.)
            let request = Request(id: nil, method: method, params: root["params"])
            if case .success(.state(let command)) = Methods.command(for: request, limits: reducer.limits) {
                _ = reducer.reduce(command)
            }
            reducer.state.seq = UInt64(seq)
            applied += 1
            return nil
        }
    }
}
