@preconcurrency import Glibc
import TabBarCore

/// Durable state: a snapshot (`state.json`) plus an append-only journal
/// (`state.json.journal`) of the requests that changed it, one JSON line each.
///
/// A change is appended (one `write`) before its reply is queued, so a reply
/// means the change is in the kernel; a SIGKILL loses nothing acknowledged.
/// The journal is fsync'ed at most `fsyncIntervalMs` after a change (0: at
/// once), and compacted into a new snapshot (temp + fsync + rename + dir
/// fsync) every `compactEvery` entries and at shutdown.
final class StateStore {
    let snapshotPath: String
    let journalPath: String
    let compactEvery: Int
    let fsyncIntervalMs: Int
    private var journalFD: Int32 = -1
    private(set) var entries = 0
    private(set) var lastError: String?
    private var dirtySinceFsync = false
    private var lastFsyncNs: UInt64 = 0
    private var line: [UInt8] = []
    private(set) var appends = 0

    init(path: String, compactEvery: Int, fsyncIntervalMs: Int) {
        snapshotPath = path
        journalPath = path + ".journal"
        self.compactEvery = compactEvery
        self.fsyncIntervalMs = fsyncIntervalMs
        line.reserveCapacity(512)
    }

    deinit { if journalFD >= 0 { close(journalFD) } }

    /// Restores the state: snapshot, then every journal entry after it, replayed
    /// through the reducer. Corrupt files are moved aside (one log line) and the
    /// last good state is used. Returns the reducer to serve with.
    func load(initial: BarState, limits: Limits, sounds: SoundMap) throws(Errno) -> Reducer {
        try Posix.makeDirectories(Posix.dirname(snapshotPath))
        var reducer = Reducer(state: initial, limits: limits, sounds: sounds)
        var restoredFrom = "built-in default bar"
        if let bytes = try Posix.readFile(snapshotPath) {
            do {
                reducer.state = try Persistence.decodeSnapshot(bytes, limits: limits)
                restoredFrom = snapshotPath
            } catch {
                let aside = moveAside(snapshotPath)
                Log.error("State file is corrupt; moved it aside and started from the default bar", ["file": snapshotPath, "moved_to": aside, "reason": "\(error)"])
                reducer.state = initial
            }
        }
        // Replay the journal, streamed (it may be larger than memory allows to read at once).
        var replayed = 0
        var goodPrefix: Int?
        let fd = open(journalPath, O_RDONLY | O_CLOEXEC)
        if fd < 0 && errno != ENOENT { throw Errno() }
        if fd >= 0 {
            defer { close(fd) }
            var st = stat()
            if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
                Log.error("State journal is not a regular file; ignored its contents", ["file": journalPath])
            } else {
                var replayer = Persistence.Replayer(reducer)
                var chunk = [UInt8](repeating: 0, count: 65536)
                while replayer.bad == nil {
                    let n = try Posix.retry { chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
                    if n == 0 { break }
                    chunk.withUnsafeBufferPointer { replayer.feed(UnsafeBufferPointer(rebasing: $0[0..<n])) }
                }
                reducer = replayer.reducer
                replayed = replayer.applied
                if let bad = replayer.bad {
                    let aside = moveAside(journalPath, copy: true)
                    Log.error("State journal is corrupt after \(replayer.good) good entries; kept those, copied the file aside", ["file": journalPath, "copy": aside, "reason": bad])
                    goodPrefix = replayer.goodBytes
                } else if replayer.torn {
                    Log.notice("State journal ends in a torn write (an unacknowledged change); ignored it", ["file": journalPath])
                    goodPrefix = replayer.goodBytes
                }
            }
        }
        reducer.state = Persistence.restored(reducer.state)
        if replayed > 0 { restoredFrom += " + \(replayed) journal entries" }
        Log.info("State restored", ["from": restoredFrom, "seq": String(reducer.state.seq)])
        do {
            try compact(reducer.state, limits: limits)
        } catch {
            // No snapshot now (a full disk, say): serve anyway from the journal as it is,
            // cut back to its good prefix so that new entries are not appended after a bad one.
            if let goodPrefix { _ = truncate(journalPath, off_t(goodPrefix)) }
            Log.error("Could not write a snapshot at start; serving anyway, the journal keeps every change", ["file": snapshotPath, "error": "\(error)"])
        }
        return reducer
    }

    /// Renames (or copies) a bad file to `path.corrupt-<unix time>`; returns the new name.
    private func moveAside(_ path: String, copy: Bool = false) -> String {
        let target = "\(path).corrupt-\(time(nil))"
        if copy, let bytes = try? Posix.readFile(path) {
            let fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            if fd >= 0 { try? Posix.writeAll(fd, bytes); close(fd) }
        } else {
            rename(path, target)
        }
        return target
    }

    /// Appends one change. Throws when it could not be written (disk full, I/O error).
    func append(seq: UInt64, method: String, params: JSON?) throws(Errno) {
        if journalFD < 0 { try openJournal() }
        line.removeAll(keepingCapacity: true)
        Persistence.journalLine(seq: seq, method: method, params: params, into: &line)
        do throws(Errno) {
            let n = try Posix.retry { line.withUnsafeBytes { write(journalFD, $0.baseAddress, $0.count) } }
            if n != line.count {
                // A short write leaves a torn line: cut it off so the journal stays parseable.
                let end = lseek(journalFD, 0, SEEK_END)
                _ = ftruncate(journalFD, end - off_t(n))
                throw Errno(ENOSPC)
            }
        } catch {
            lastError = "cannot write \(journalPath): \(error)"
            throw error
        }
        lastError = nil
        entries += 1
        appends += 1
        dirtySinceFsync = true
        if fsyncIntervalMs == 0 { syncNow() }
    }

    /// Called from the loop: fsyncs the journal when the interval has passed.
    /// Returns the milliseconds until the next needed call, or nil when clean.
    func tick(nowNs: UInt64) -> Int? {
        guard dirtySinceFsync else { return nil }
        let due = lastFsyncNs + UInt64(fsyncIntervalMs) * 1_000_000
        if nowNs >= due { syncNow(); return nil }
        return Int((due - nowNs) / 1_000_000) + 1
    }

    func syncNow() {
        guard journalFD >= 0, dirtySinceFsync else { return }
        fdatasync(journalFD)
        dirtySinceFsync = false
        lastFsyncNs = Posix.monotonicNs()
    }

    /// After a failed compaction (a full disk, say), when to try again.
    private var retryAfterNs: UInt64 = 0
    private var retryDelayMs = 0

    var needsCompaction: Bool { entries >= compactEvery && Posix.monotonicNs() >= retryAfterNs }

    /// A periodic compaction failed: the journal keeps every change meanwhile; try again in
    /// 1 s, 2 s, 4 s … at most every minute (not at every loop turn, logging each time).
    func compactionFailed() {
        retryDelayMs = min(max(1000, retryDelayMs * 2), 60_000)
        retryAfterNs = Posix.monotonicNs() + UInt64(retryDelayMs) * 1_000_000
    }

    /// Writes a snapshot of `state` atomically and empties the journal.
    func compact(_ state: BarState, limits: Limits) throws(Errno) {
        let bytes = Persistence.snapshot(state, limits: limits)
        let tmp = snapshotPath + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if fd < 0 { let e = Errno(); lastError = "cannot write \(tmp): \(e)"; throw e }
        do {
            try Posix.writeAll(fd, bytes)
            try Posix.retry { fsync(fd) }
        } catch {
            close(fd)
            unlink(tmp)
            lastError = "cannot write \(tmp): \(error)"
            throw error
        }
        close(fd)
        if rename(tmp, snapshotPath) != 0 { let e = Errno(); lastError = "cannot rename \(tmp): \(e)"; throw e }
        let dir = open(Posix.dirname(snapshotPath), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 { fsync(dir); close(dir) }
        // The snapshot now holds everything: start an empty journal.
        if journalFD >= 0 { close(journalFD); journalFD = -1 }
        let j = open(journalPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if j >= 0 { close(j) }
        entries = 0
        dirtySinceFsync = false
        lastError = nil
        retryDelayMs = 0
        retryAfterNs = 0
    }

    private func openJournal() throws(Errno) {
        let fd = open(journalPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        if fd < 0 { let e = Errno(); lastError = "cannot open \(journalPath): \(e)"; throw e }
        journalFD = fd
    }
}
