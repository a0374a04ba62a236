@preconcurrency import Glibc
import Synchronization
import TabBarCore

/// Durable state: a snapshot (`state.json`) plus a journal (`state.json.journal`) of
/// the requests that changed it, one JSON line each, in checked groups (`JournalGroup`).
///
/// Changes are staged and written as one group (one `write` per batch, see
/// `Server.commitBatch`) before their replies leave the process, so a reply
/// means the change is in the kernel; a SIGKILL loses nothing acknowledged.
///
/// Journal files are reused: a journal that has been compacted into a snapshot is kept
/// as `state.json.journal.spare`, and the next rotation writes its new generation over
/// it from the start (a marker group first) rather than appending to a new file —
/// rewriting pages the kernel holds and has allocated costs a fraction of appending. The
/// spare's old bytes after the new generation's end are told apart by the groups' checks
/// and seqs (`Persistence.Replayer`); they are all in the snapshot anyway. A spare
/// larger than `maxSpareBytes` is deleted instead.
/// The journal is fsync'ed at most `fsyncIntervalMs` after a change (0: at
/// once), and compacted into a new snapshot (temp + fsync + rename + dir
/// fsync) every `compactEvery` entries and at shutdown.
///
/// Compaction while serving (`startCompaction`) keeps the fsyncs off the state
/// loop: the loop renames the journal to `state.json.journal.1` and goes on
/// with a new generation of the journal; a helper thread writes the snapshot of the
/// state as it was at the rename (temp + fsync + rename + dir fsync) and only then
/// lets `journal.1` go (if the snapshot fails, it fsyncs `journal.1` instead). Every change is
/// therefore always in the snapshot, in `journal.1` or in the journal, and
/// `load` replays `journal.1` before the journal (entries the snapshot already
/// holds are skipped by their seq).
final class StateStore {
    let snapshotPath: String
    let journalPath: String
    let compactEvery: Int
    let fsyncIntervalMs: Int
    /// Open between commits of one generation; -1 after a generation starts (see `startGeneration`).
    var journalFD: Int32 = -1
    /// Where the next group goes in the journal file.
    private var writePos: off_t = 0
    /// The state's seq after the last staged change (the group header's `seq`).
    private var stagedSeq: UInt64 = 0
    private(set) var entries = 0
    var lastError: String?
    private var dirtySinceFsync = false
    private var lastFsyncNs: UInt64 = 0
    /// Journal lines staged since the last `commit` (group commit).
    private var staged = ByteBuffer(capacity: 1 << 16, reserved: JournalGroup.headerRoom)
    private(set) var stagedCount = 0
    private(set) var appends = 0
    /// `write`s that appended them (one per group commit).
    private(set) var writes = 0

    /// The journal being compacted into a snapshot by the helper thread (see above).
    let oldJournalPath: String
    /// A compacted journal kept for reuse (see above).
    let spareJournalPath: String
    /// Spares larger than this are deleted rather than kept.
    static let maxSpareBytes = 64 << 20
    /// The compaction running on the helper thread, if any.
    private var job: CompactionJob?

    /// At least this long between the starts of two compactions (a storm of changes would
    /// otherwise compact hundreds of times a second; replaying what piles up meanwhile is fast).
    let compactIntervalNs: UInt64
    private var lastCompactionNs: UInt64 = 0

    init(path: String, compactEvery: Int, fsyncIntervalMs: Int, compactIntervalMs: Int = 0) {
        compactIntervalNs = UInt64(compactIntervalMs) * 1_000_000
        snapshotPath = path
        journalPath = path + ".journal"
        oldJournalPath = path + ".journal.1"
        spareJournalPath = path + ".journal.spare"
        self.compactEvery = compactEvery
        self.fsyncIntervalMs = fsyncIntervalMs
        watch = StateWatch(directory: Posix.dirname(path))
    }

    /// The lock on the state (`lock`, below); -1: not held.
    var lockFD: Int32 = -1
    /// Device and inode of the open journal, of the last snapshot written, and of the lock
    /// file: a file deleted or replaced under the daemon is told by them (`reachable`).
    var journalID: FileID?
    var snapshotID: FileID?
    var lockID: FileID?
    /// Spares `unreachable`'s lookups by path while nothing on the way changed (StateWatch.swift).
    let watch: StateWatch
    /// The errno of the last failure (`lastError`), for advice that fits it.
    var lastErrno: Errno?

    deinit {
        if lockFD >= 0 { StateStore.closeLogged(lockFD, lockPath) }
        closeJournal()
    }

    /// Restores the state: snapshot, then every journal entry after it, replayed
    /// through the reducer. Corrupt files are moved aside (one log line) and the
    /// last good state is used. Returns the reducer to serve with.
    /// `initialFrom` names where `initial` came from (nil: the built-in default bar).
    func load(initial: BarState, limits: Limits, sounds: SoundMap, initialFrom: String? = nil) throws(Errno) -> Reducer {
        try Posix.makeDirectories(Posix.dirname(snapshotPath))
        var reducer = Reducer(state: initial, limits: limits, sounds: sounds)
        let initialName = initialFrom ?? "built-in default bar"
        var restoredFrom = initialName
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
        // Replay the journals: the one a compaction was interrupted in, then the current one.
        // Streamed: a journal is never read into memory whole.
        var replayed = 0
        var goodPrefixes: [(String, Int)] = []
        for path in [oldJournalPath, journalPath] {
            let fd: Int32
            do throws(Errno) { fd = try Sys.open(path, O_RDONLY | O_CLOEXEC) } catch {
                if error.code == ENOENT { continue }
                throw error
            }
            defer { StateStore.closeLogged(fd, path) }
            var st = stat()
            if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG {
                Log.error("State journal is not a regular file; ignored its contents", ["file": path])
                continue
            }
            var replayer = Persistence.Replayer(reducer)
            var chunk = [UInt8](repeating: 0, count: 65536)
            while !replayer.stopped {  // (a reused journal's old bytes after its end are not read)
                let r = try Sys.read(fd, into: &chunk)
                guard case .done(let n) = r, n > 0 else { break }  // (a regular file never would block)
                chunk.withUnsafeBufferPointer { replayer.feed(UnsafeBufferPointer(rebasing: $0[0..<n])) }
            }
            replayer.finish()
            reducer = replayer.reducer
            replayed += replayer.applied
            if let bad = replayer.bad {
                let aside = moveAside(path, copy: true)
                Log.error("State journal is corrupt after \(replayer.good) good entries; kept those, copied the file aside", ["file": path, "copy": aside, "reason": bad])
                goodPrefixes.append((path, replayer.goodBytes))
            } else if replayer.torn || replayer.endedInGroup {
                Log.notice("State journal ends in a torn write (an unacknowledged change); ignored it", ["file": path])
                goodPrefixes.append((path, replayer.goodBytes))
            } else if let why = replayer.ended {
                // A reused journal: what follows its last group is the previous generation's.
                Log.debug("State journal read up to its last group", ["file": path, "bytes": String(replayer.goodBytes), "then": why])
                goodPrefixes.append((path, replayer.goodBytes))
            }
            if path == journalPath { writePos = off_t(replayer.goodBytes) }
        }
        reducer.state = Persistence.restored(reducer.state)
        if replayed > 0 { restoredFrom += " + \(replayed) journal entries" }
        Log.info("State restored", ["from": restoredFrom, "seq": String(reducer.state.seq)])
        if let initialFrom, !restoredFrom.hasPrefix(initialName), reducer.state.items != initial.items {
            Log.notice("A saved state exists, so the configured bar is not used (it is the bar to start with when there is none); remove the state files to start afresh from it",
                       ["bar": initialFrom, "state": snapshotPath])
        }
        do {
            try compact(reducer.state, limits: limits)
        } catch {
            // No snapshot now (a full disk, say): serve anyway from the journals as they are,
            // cut back to their good prefixes so that new entries do not follow a bad one.
            // (New groups go right after the journal's last good one: `writePos`.)
            for (path, length) in goodPrefixes {
                do throws(Errno) { try Sys.truncate(path, to: off_t(length)) } catch {
                    // New groups still go right after the good prefix; replay stops at its end.
                    Log.warning("Cannot cut the journal back to its good entries", ["file": path, "bytes": String(length), "error": "\(error)"])
                }
            }
            reportStartFailure(error)
        }
        return reducer
    }

    /// Renames (or copies) a bad file to `path.corrupt-<unix time>` (`-2`, `-3` … after it
    /// when that name is taken: a file moved aside earlier is never overwritten); returns
    /// the new name (or why it could not be moved).
    private func moveAside(_ path: String, copy: Bool = false) -> String {
        let base = "\(path).corrupt-\(time(nil))"
        var target = base
        var n = 1
        // (Nobody else writes here: the state is locked, `lock`.)
        while access(target, F_OK) == 0 || errno != ENOENT {
            n += 1
            target = "\(base)-\(n)"
            if n > 10_000 { break }
        }
        do throws(Errno) {
            if copy, let bytes = try Posix.readFile(path) {
                let fd = try Sys.open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600)
                defer { StateStore.closeLogged(fd, target) }
                try Posix.writeAll(fd, bytes)
            } else if !copy {
                try Sys.rename(path, to: target)
            }
        } catch {
            return "nowhere: cannot \(copy ? "copy" : "move") it to \(target): \(error)"
        }
        return target
    }

    /// Stages the journal line of the change to `seq` (`Persistence.journalLine`: what `entry`
    /// records, else `method` and `params` as the request gave them) into the pending group;
    /// `commit` writes the group.
    func stage(seq: UInt64, entry: JournalEntry?, method: String, params: UnsafeBufferPointer<UInt8>?) {
        Persistence.journalLine(seq: seq, entry: entry, method: method, params: params, into: &staged)
        stagedSeq = seq
        stagedCount += 1
    }

    /// Forgets the staged changes (their group will not be written).
    func dropStaged() {
        staged.removeAll()
        stagedCount = 0
    }

    /// Writes every staged change as one group with one `write`. On failure the group is
    /// dropped, and none of it counts: a short write leaves a group that does not check out,
    /// which the next group overwrites (and replay ignores).
    func commit() throws(Errno) {
        guard stagedCount > 0 else { return }
        let count = stagedCount
        defer {
            staged.removeAll()
            stagedCount = 0
        }
        if journalFD < 0 { try openJournal() }
        do throws(Errno) {
            let body = staged.bytes
            let header = JournalGroup.Header(seq: stagedSeq, entries: count, bytes: body.count,
                                             check: JournalGroup.check(seq: stagedSeq, entries: count, body: UnsafeRawBufferPointer(body)))
            let start = JournalGroup.writeHeader(header, endingAt: UnsafeMutablePointer(mutating: body.baseAddress!))
            let total = body.baseAddress! + body.count - UnsafePointer(start)
            let n = try Sys.pwrite(journalFD, UnsafeRawBufferPointer(start: start, count: total), at: writePos)
            if n != total { throw Errno(ENOSPC) }
            writePos += off_t(total)
        } catch {
            lastError = "cannot write \(journalPath): \(error)"
            lastErrno = error
            throw error
        }
        lastError = nil
        lastErrno = nil
        entries += count
        appends += count
        writes += 1
        dirtySinceFsync = true
        if fsyncIntervalMs == 0 { syncNow() }
    }

    /// When the journal's next fsync is due (nil: nothing written since the last one).
    var fsyncDueNs: UInt64? {
        dirtySinceFsync ? lastFsyncNs + UInt64(fsyncIntervalMs) * 1_000_000 : nil
    }

    /// Fsyncs the journal if its interval has passed (the loop's housekeeping).
    func syncIfDue(nowNs: UInt64) {
        if let due = fsyncDueNs, nowNs >= due { syncNow() }
    }

    func syncNow() {
        guard journalFD >= 0, dirtySinceFsync else { return }
        do throws(Errno) { try Sys.fdatasync(journalFD) } catch {
            // The writes are acknowledged (they are in the kernel); only a power failure
            // before the kernel writes them back loses them. Retrying would not help (Linux
            // reports a write-back error once), so say it, with advice, and go on.
            lastErrno = error
            Log.error("Could not flush the journal to disk; a power failure may lose the changes since the last flush",
                      ["file": journalPath, "error": "\(error)", "advice": advice])
        }
        dirtySinceFsync = false
        lastFsyncNs = MonotonicClock.nanoseconds()
    }

    /// After a failed compaction (a full disk, say), when to try again.
    private var retryAfterNs: UInt64 = 0
    private var retryDelayMs = 0

    var needsCompaction: Bool { compactionDueNs.map { MonotonicClock.nanoseconds() >= $0 } ?? false }

    /// When the next compaction may start (nil: the journal is not long enough yet).
    var compactionDueNs: UInt64? {
        guard entries >= compactEvery else { return nil }
        return max(retryAfterNs, lastCompactionNs + compactIntervalNs)
    }

    /// A compaction failed: the journal keeps every change meanwhile; try again in
    /// 1 s, 2 s, 4 s … at most every minute (not at every loop turn, logging each time).
    func compactionFailed() {
        retryDelayMs = min(max(1000, retryDelayMs * 2), 60_000)
        retryAfterNs = MonotonicClock.nanoseconds() + UInt64(retryDelayMs) * 1_000_000
    }

    /// Writes a snapshot of `state` atomically and empties the journal (on the
    /// calling thread: at start-up, at shutdown, and when a background compaction
    /// cannot start).
    func compact(_ state: BarState, limits: Limits) throws(Errno) {
        finishCompaction(wait: true)
        // (A state directory deleted while serving is made again: `recover`.)
        _ = try? Posix.makeDirectories(Posix.dirname(snapshotPath))
        if let (e, message) = StateStore.writeSnapshot(state, limits: limits, to: snapshotPath) {
            lastError = message
            lastErrno = e
            throw e
        }
        snapshotID = FileID(path: snapshotPath)
        // The snapshot now holds everything: a new generation of the journal, written over
        // the old one (see the type's comment); journal.1 becomes the spare.
        StateStore.keepAsSpare(oldJournalPath, spare: spareJournalPath)
        closeJournal()
        startGeneration(seq: state.seq)
        entries = 0
        dirtySinceFsync = false
        lastError = nil
        retryDelayMs = 0
        retryAfterNs = 0
    }

    /// Closes the journal so that the next commit reopens it (tests make it unwritable).
    func closeJournalForTests() { closeJournal() }

    /// Whether a background compaction is running.
    var compacting: Bool { job != nil }

    /// Starts compacting in the background (see the type's comment): call between
    /// commits (nothing staged). Falls back to `compact` on this thread when the
    /// journal cannot be rotated. Returns at once.
    func startCompaction(_ state: BarState, limits: Limits) throws(Errno) {
        finishCompaction(wait: false)
        guard job == nil, stagedCount == 0 else { return }
        lastCompactionNs = MonotonicClock.nanoseconds()
        // A journal.1 left by a failed compaction: only a snapshot taken here may remove it.
        if access(oldJournalPath, F_OK) == 0 || journalFD < 0 {
            try compact(state, limits: limits)
            return
        }
        do throws(Errno) { try Sys.rename(journalPath, to: oldJournalPath) } catch {
            try compact(state, limits: limits)
            return
        }
        let job = CompactionJob(state: state, limits: limits, snapshotPath: snapshotPath,
                                oldJournalPath: oldJournalPath, oldJournalFD: journalFD,
                                spareJournalPath: spareJournalPath)
        journalFD = -1
        entries = 0
        dirtySinceFsync = false
        // The spare (if a compaction left one) becomes the journal; else a new file.
        do throws(Errno) { try Sys.rename(spareJournalPath, to: journalPath) } catch {
            if error.code != ENOENT { Log.warning("Cannot reuse the spare journal; starting a new one", ["file": spareJournalPath, "error": "\(error)"]) }
        }
        startGeneration(seq: state.seq)
        if job.start() {
            self.job = job
        } else {
            job.run()
            report(job)
        }
    }

    /// Collects a finished background compaction (or waits for it with `wait`).
    func finishCompaction(wait: Bool) {
        guard let job, wait || job.done.load(ordering: .acquiring) else { return }
        job.join()
        self.job = nil
        report(job)
    }

    private func report(_ job: CompactionJob) {
        if let e = job.error {
            lastError = e
            lastErrno = nil
            compactionFailed()
            Log.error("Compacting the state failed; the journal keeps growing", ["error": e])
        } else {
            lastError = nil
            snapshotID = FileID(path: snapshotPath)
        }
    }

    func openJournal() throws(Errno) {
        let fd: Int32
        do throws(Errno) { fd = try Sys.open(journalPath, O_WRONLY | O_CREAT | O_CLOEXEC, mode: 0o600) } catch {
            lastError = "cannot open \(journalPath): \(error)"
            lastErrno = error
            throw error
        }
        journalFD = fd
        journalID = FileID(fd: fd)
    }

    /// Starts a new generation of the journal at the start of its file: a marker group
    /// (no entries, `seq` the state's), so that replay stops right after it rather than
    /// reading the file's old groups (which the snapshot holds). The marker is not needed
    /// for correctness: if it cannot be written, the first group takes its place. The file
    /// is opened again at the first commit (as a journal that does not exist yet is).
    private func startGeneration(seq: UInt64) {
        writePos = 0
        if journalFD < 0 {
            do throws(Errno) { try openJournal() } catch { return }  // the next commit retries (and fails the group if it cannot)
        }
        defer { closeJournal() }
        let marker = JournalGroup.group(seq: seq, entries: 0, lines: [])
        let n = try? Sys.pwrite(journalFD, marker, at: 0)
        if n == marker.count { writePos = off_t(marker.count) }
    }
}

/// A file's identity (device and inode): a file deleted or replaced under the daemon is
/// told by it.
struct FileID: Equatable {
    var dev: UInt64
    var ino: UInt64

    init?(path: String) {
        var st = stat()
        // (`withCString` reads a native string in place; passing the String to `stat` made
        // an array of its bytes, and freed it, at every group commit: `StateStore.unreachable`.)
        guard path.withCString({ stat($0, &st) }) == 0 else { return nil }
        dev = UInt64(st.st_dev)
        ino = UInt64(st.st_ino)
    }

    init?(fd: Int32) {
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_nlink > 0 else { return nil }
        dev = UInt64(st.st_dev)
        ino = UInt64(st.st_ino)
    }
}

/// The state's files on disk: the lock that keeps a second daemon off them, what is done
/// when they are deleted or replaced while serving, and advice that fits an errno.
extension StateStore {
    /// `state.json.lock`, held (`flock`) while this daemon serves the state, holding its pid.
    var lockPath: String { snapshotPath + ".lock" }
    var stateDirectory: String { Posix.dirname(snapshotPath) }

    /// Takes the state for this process: an exclusive `flock` on `state.json.lock`, held
    /// until the process ends. Two daemons on one state would each hand out seq 1, 2, …
    /// and lose each other's changes at a restart. A lock that cannot be created (a
    /// read-only state directory) is no refusal: nothing can be written there either, so
    /// the daemon serves read-only, and takes the lock at the first change it can save.
    func lock() throws(ServerError) {
        do { try Posix.makeDirectories(stateDirectory) } catch {
            if !StateStore.unwritable.contains(error.code) {
                throw ServerError("cannot create the state directory \(stateDirectory): \(error)")
            }
        }
        do throws(Errno) { try relock() } catch {
            if error.code == EWOULDBLOCK {
                let text = ((try? Posix.readFile(lockPath, limit: 64)) ?? nil).map { String(decoding: $0, as: UTF8.self) } ?? ""
                let who = text.split(separator: "\n").first.map { "pid \($0)" } ?? "another process"
                throw ServerError("the state \(snapshotPath) is in use by another tabbard (\(who), lock \(lockPath)); stop it first or use another --state")
            }
            guard StateStore.unwritable.contains(error.code) else { throw ServerError("cannot lock the state \(lockPath): \(error)") }
            lastErrno = error
            Log.warning("Cannot create the state lock: nothing can be written in the state directory", ["file": lockPath, "error": "\(error)", "advice": advice])
        }
    }

    /// Closes the journal if it is open (the next commit opens it again).
    func closeJournal() {
        guard journalFD >= 0 else { return }
        StateStore.closeLogged(journalFD, journalPath)
        journalFD = -1
    }

    /// Closes `fd`, a state file at `path`. A failure is logged: on some file systems (NFS)
    /// it is the first sign that written data did not reach the disk. (Any thread.)
    static func closeLogged(_ fd: Int32, _ path: String) {
        do throws(Errno) { try Sys.close(fd) } catch {
            Log.warning("Closing a state file failed", ["file": path, "error": "\(error)"])
        }
    }

    /// Errnos that mean nothing can be written in the state directory (then the daemon
    /// serves read-only rather than refusing to start: no other daemon can write there either).
    static let unwritable: Set<Int32> = [EACCES, EPERM, EROFS, ENOSPC, EDQUOT]

    /// Opens and locks `lockPath` (again: after the directory was deleted), writing our pid.
    func relock() throws(Errno) {
        let fd = try Sys.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o600)
        do throws(Errno) { try Sys.lock(fd, LOCK_EX | LOCK_NB) } catch {
            try? Sys.close(fd)  // (not ours: nothing written)
            throw error
        }
        // The pid is for people (the "in use by" message): the lock holds without it.
        let pid = Array("\(getpid())\n".utf8)
        do throws(Errno) {
            try Sys.ftruncate(fd, to: 0)
            _ = try Sys.pwrite(fd, pid, at: 0)
        } catch {
            Log.warning("Cannot write the pid into the state lock", ["file": lockPath, "error": "\(error)"])
        }
        if lockFD >= 0 { StateStore.closeLogged(lockFD, lockPath) }
        lockFD = fd
        lockID = FileID(fd: fd)
    }

    /// `commit`, kept true when the state's files are deleted or replaced while serving:
    /// a group is only acknowledged once it is reachable on disk. Before the write, a
    /// state directory that is gone is made again with a snapshot of `before` (the state
    /// the group starts from); after it, a journal or snapshot that is no longer the one
    /// at its path is replaced by a fresh snapshot of `after` (which holds the group). On
    /// failure nothing of the group counts.
    func commitReachable(before: @autoclosure () -> BarState, after: @autoclosure () -> BarState, limits: Limits) throws(Errno) {
        guard stagedCount > 0 else { return }
        do throws(Errno) {
            if lockFD < 0 { try relock() }
            if journalFD < 0 && access(stateDirectory, F_OK) != 0 {
                try recover(before(), limits: limits, why: "the state directory \(stateDirectory) is gone")
            }
        } catch {
            dropStaged()
            lastErrno = error
            lastError = "cannot write \(journalPath): \(error)"
            throw error
        }
        try commit()
        if !watch.unchanged(), let why = unreachable() { try recover(after(), limits: limits, why: why) }
    }

    /// Why the journal or the snapshot in use is not the file at its path (nil: it is).
    func unreachable() -> String? {
        if journalFD >= 0 {
            guard let now = FileID(path: journalPath) else { return "the journal \(journalPath) was deleted" }
            if now != journalID { return "the journal \(journalPath) was replaced" }
        }
        if !compacting, let snap = snapshotID {  // (a compaction replaces it on purpose)
            guard let now = FileID(path: snapshotPath) else { return "the snapshot \(snapshotPath) was deleted" }
            if now != snap { return "the snapshot \(snapshotPath) was replaced" }
        }
        return nil
    }

    /// Makes the state's directory, lock, snapshot (of `state`) and journal again.
    func recover(_ state: BarState, limits: Limits, why: String) throws(Errno) {
        Log.warning("The state's files were deleted or replaced while serving; writing them again from the state in memory",
                    ["why": why, "dir": stateDirectory, "seq": String(state.seq)])
        do throws(Errno) {
            try Posix.makeDirectories(stateDirectory)
            if FileID(path: lockPath) != lockID { try relock() }
            closeJournal()
            try compact(state, limits: limits)
        } catch {
            lastErrno = error
            lastError = "cannot write the state again in \(stateDirectory): \(error)"
            Log.error("Could not write the state's files again; changes are refused", ["dir": stateDirectory, "error": "\(error)",
                                                                                       "advice": advice])
            throw error
        }
        Log.notice("State files written again", ["file": snapshotPath, "seq": String(state.seq)])
    }

    /// What to do about the last failure, fitting its errno.
    var advice: String { StateStore.advice(for: lastErrno, dir: stateDirectory) }

    static func advice(for e: Errno?, dir: String) -> String {
        switch e?.code {
        case ENOSPC?: return "Free disk space on the file system of \(dir)"
        case EDQUOT?: return "Free space within your disk quota on \(dir)"
        case EACCES?, EPERM?: return "Make \(dir) and the files in it writable by uid \(geteuid()) (check their owner and mode)"
        case EROFS?: return "\(dir) is on a read-only file system: remount it read-write or choose another --state"
        case EIO?: return "The disk under \(dir) reported an I/O error: check it (dmesg)"
        case ENOENT?, ENOTDIR?: return "Check that \(dir) exists and is a directory"
        case EWOULDBLOCK?: return "Another tabbard holds the state lock in \(dir): stop it"
        default: return "Check \(dir)"
        }
    }

    /// The start-up snapshot failed: say whether changes can be saved at all.
    func reportStartFailure(_ error: Errno) {
        let dirError = lastErrno
        var journalOK = lockFD >= 0
        if journalOK && journalFD < 0 { journalOK = (try? openJournal()) != nil }
        lastErrno = dirError ?? error
        if journalOK {
            Log.error("Could not write a snapshot at start; serving anyway: changes are saved in the journal as long as it can be written, and a snapshot is tried again at the next compaction",
                      ["file": snapshotPath, "error": "\(error)", "advice": advice])
        } else {
            Log.error("Could not write a snapshot at start, and the journal cannot be written: serving read-only, every change is refused (storage_failed) until this is fixed",
                      ["file": snapshotPath, "error": "\(error)", "advice": advice])
        }
    }
}
