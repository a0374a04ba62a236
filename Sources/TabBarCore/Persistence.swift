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
        let doc: JSON
        do { doc = try JSON.parse(bytes) } catch { throw Problem(error.description) }
        guard let seq = doc["seq"]?.intValue, seq >= 0, let st = doc["state"] else {
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

    /// Appends the journal line of one change (with its newline) to `line`.
    public static func journalLine(seq: UInt64, method: String, params: JSON?, into line: inout [UInt8]) {
        line.append(contentsOf: #"{"seq":"#.utf8)
        line.append(contentsOf: String(seq).utf8)
        line.append(contentsOf: #","method":"#.utf8)
        JSON.writeString(method, into: &line)
        if let params, params != .null {
            line.append(contentsOf: #","params":"#.utf8)
            params.write(into: &line)
        }
        line.append(contentsOf: [UInt8(ascii: "}"), 0x0A])
    }

    /// Replays a journal, fed in chunks of any size, into a reducer. Entries at or
    /// below the reducer's `seq` are already in the snapshot and are skipped. The
    /// first bad line stops the replay: everything before it is kept.
    public struct Replayer {
        public private(set) var reducer: Reducer
        /// Entries applied to the state.
        public private(set) var applied = 0
        /// Well-formed entries seen (applied or skipped).
        public private(set) var good = 0
        /// Why the replay stopped early, if it did.
        public private(set) var bad: String?
        /// Length of the good prefix in bytes (complete good lines only).
        public private(set) var goodBytes = 0
        /// Longest journal line accepted.
        public let maxLine: Int
        private var partial: [UInt8] = []

        public init(_ reducer: Reducer, maxLine: Int = 1 << 24) {
            self.reducer = reducer
            self.maxLine = maxLine
        }

        /// Bytes after the last newline: a write that was cut off (never acknowledged).
        public var torn: Bool { bad == nil && !partial.isEmpty }

        public mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>) {
            var start = 0
            while bad == nil && start < chunk.count {
                var nl = start
                while nl < chunk.count && chunk[nl] != 0x0A { nl += 1 }
                if nl == chunk.count {
                    if partial.count + (nl - start) > maxLine {
                        bad = "a line longer than \(maxLine) bytes"
                        partial = []
                    } else {
                        partial.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[start..<nl]))
                    }
                    return
                }
                if partial.isEmpty {
                    entry(UnsafeBufferPointer(rebasing: chunk[start..<nl]))
                } else {
                    partial.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[start..<nl]))
                    let line = partial
                    partial = []
                    line.withUnsafeBufferPointer { entry($0) }
                }
                start = nl + 1
            }
        }

        public mutating func feed(_ bytes: [UInt8]) {
            bytes.withUnsafeBufferPointer { feed($0) }
        }

        /// Whether `tab.select` entries are read byte by byte (`FastSelect.scanJournal`) and
        /// plain ones committed without an `Outcome`; off only to compare in tests.
        public var fast = true
        private var select = FastSelect.blank

        private mutating func entry(_ line: UnsafeBufferPointer<UInt8>) {
            if line.count > maxLine { bad = "a line longer than \(maxLine) bytes"; return }
            if fast, let seq = FastSelect.scanJournal(line, maxIDLength: reducer.limits.maxIDLength, into: &select) {
                good += 1
                goodBytes += line.count + 1
                guard seq > reducer.state.seq else { return }  // already in the snapshot
                if let k = reducer.plainSelectTarget(select, line) {
                    _ = reducer.commitPlainSelect(k, source: select.source)
                } else {
                    _ = reducer.reduce(select.command(line))
                }
                reducer.state.seq = seq
                applied += 1
                return
            }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { goodBytes += line.count + 1; return }
            let json: JSON
            do { json = try JSON.parse(line) } catch { bad = error.description; return }
            guard let seq = json["seq"]?.intValue, seq >= 0, let method = json["method"]?.stringValue else {
                bad = "an entry without seq or method"
                return
            }
            good += 1
            goodBytes += line.count + 1
            guard UInt64(seq) > reducer.state.seq else { return }  // already in the snapshot
            let request = Request(id: .null, method: method, params: json["params"])
            if case .success(let command) = Methods.command(for: request, limits: reducer.limits) {
                _ = reducer.reduce(command)
            }
            reducer.state.seq = UInt64(seq)
            applied += 1
        }
    }
}
