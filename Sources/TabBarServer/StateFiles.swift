@preconcurrency import Glibc
import TabBarCore

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
