@preconcurrency import Glibc
import Synchronization
import TabBarCore

/// Snapshots and compaction (see `StateStore`): a snapshot written atomically and durably,
/// a compacted journal kept as the spare, and the helper thread of a background compaction.
extension StateStore {
    /// Writes `{"version":1,"seq":…,"state":…}` to `path` atomically and durably
    /// (temp + fsync + rename + dir fsync). Safe on any thread. Returns nil, or the error and its message.
    static func writeSnapshot(_ state: BarState, limits: Limits, to path: String) -> (Errno, String)? {
        let bytes = Persistence.snapshot(state, limits: limits)
        let tmp = path + ".tmp"
        let fd: Int32
        do throws(Errno) { fd = try Sys.open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode: 0o600) } catch {
            return (error, "cannot write \(tmp): \(error)")
        }
        do throws(Errno) {
            try Posix.writeAll(fd, bytes)
            try Sys.fsync(fd)
        } catch {
            try? Sys.close(fd)
            try? Sys.unlink(tmp)  // (a leftover .tmp is written over next time)
            return (error, "cannot write \(tmp): \(error)")
        }
        do throws(Errno) { try Sys.close(fd) } catch {
            try? Sys.unlink(tmp)
            return (error, "cannot write \(tmp): \(error)")
        }
        do throws(Errno) { try Sys.rename(tmp, to: path) } catch { return (error, "cannot rename \(tmp): \(error)") }
        // The snapshot is in place now (failing here would make the daemon think it was not,
        // and then that it was replaced): a directory that cannot be fsync'ed is reported only.
        do throws(Errno) { try Sys.fsyncDirectory(Posix.dirname(path)) } catch {
            Log.warning("Cannot fsync the state directory: the new snapshot may not survive a power failure",
                        ["dir": Posix.dirname(path), "error": "\(error)"])
        }
        return nil
    }

    /// Keeps a journal the snapshot now holds as the spare, or deletes it if it is large.
    static func keepAsSpare(_ path: String, spare: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return }
        if (st.st_mode & S_IFMT) == S_IFREG && st.st_size <= maxSpareBytes && (try? Sys.rename(path, to: spare)) != nil { return }
        do throws(Errno) { try Sys.unlink(path) } catch {
            // Left in place, it is compacted again (on the loop) at the next compaction.
            if error.code != ENOENT { Log.warning("Cannot delete a compacted journal", ["file": path, "error": "\(error)"]) }
        }
    }
}

/// One background compaction (`StateStore.startCompaction`): write the snapshot, then
/// keep the rotated journal as the spare (or, if the snapshot failed, fsync it).
// Sendable because its inputs are `let`s, and `error` is written by the helper thread before it
// stores `done` (release) and read by the loop only after it loads `done` (acquire) or joins.
final class CompactionJob: @unchecked Sendable {
    let state: BarState
    let limits: Limits
    let snapshotPath: String
    let oldJournalPath: String
    let oldJournalFD: Int32
    let spareJournalPath: String
    /// Set by the helper thread when it is done; `error` is readable after that.
    let done = Atomic<Bool>(false)
    private(set) var error: String?
    private var thread: pthread_t?

    init(state: BarState, limits: Limits, snapshotPath: String, oldJournalPath: String, oldJournalFD: Int32,
         spareJournalPath: String) {
        self.spareJournalPath = spareJournalPath
        self.state = state
        self.limits = limits
        self.snapshotPath = snapshotPath
        self.oldJournalPath = oldJournalPath
        self.oldJournalFD = oldJournalFD
    }

    func start() -> Bool {
        let box = Unmanaged.passRetained(self)
        var tid = pthread_t()
        let r = pthread_create(&tid, nil, { arg in
            let job = Unmanaged<CompactionJob>.fromOpaque(arg!).takeRetainedValue()
            job.run()
            return nil
        }, box.toOpaque())
        if r != 0 { box.release(); return false }
        thread = tid
        return true
    }

    func run() {
        if let (_, message) = StateStore.writeSnapshot(state, limits: limits, to: snapshotPath) {
            // The rotated journal keeps those changes: make it durable, as the fsync interval promises.
            var message = message
            if oldJournalFD >= 0 {
                do throws(Errno) { try Sys.fdatasync(oldJournalFD) } catch {
                    message += "; and \(oldJournalPath) could not be flushed to disk either (\(error)): a power failure may lose recent changes"
                }
                StateStore.closeLogged(oldJournalFD, oldJournalPath)
            }
            error = message
        } else {
            // The snapshot (fsynced) holds every entry of the rotated journal now, so the journal
            // needs no fsync of its own: keep it for reuse. Its dirty pages are rewritten by the
            // next generation before the kernel's write-back would get to most of them.
            if oldJournalFD >= 0 { StateStore.closeLogged(oldJournalFD, oldJournalPath) }
            StateStore.keepAsSpare(oldJournalPath, spare: spareJournalPath)
        }
        done.store(true, ordering: .releasing)
    }

    func join() {
        if let thread { pthread_join(thread, nil) }
        thread = nil
    }
}
