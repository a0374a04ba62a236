@preconcurrency import Glibc
import TabBarSystem

/// Tells with one system call that nothing on the way to the state's files changed since the
/// last look, so that a group commit need not look its files up by path. The check it spares
/// (`StateStore.unreachable`: a `stat` of the journal and one of the snapshot) was a third of
/// a `tab.select` round trip's system calls and most of what it took over the floor's
/// (docs/PERFORMANCE.md, "The state-file check by inotify").
///
/// An inotify descriptor watches the state directory for entries created, deleted or moved
/// in it, and every directory above it, up to `/`, for being deleted or moved itself. That
/// covers every way the state's path can come to name another file: the file replaced or
/// deleted (an event in the state directory), or a directory on the way moved away (its own
/// event; a directory that is not empty cannot be deleted or renamed over, and none on the
/// way is a symbolic link, which could be). Any event at all means "look by path": the
/// watch is made afresh first and the caller then checks by path, so a change made meanwhile
/// is either in the watch's queue or seen by that check. The daemon's own compactions
/// make such events; the next commit after one looks by path.
///
/// Not seen: a file system mounted over one of those directories while serving (inotify
/// reports no mount). Where the watch cannot cover the path (a relative path, a `.` or `..`
/// or a symbolic link on it, no inotify instance or watch to be had), `unchanged` is always
/// false and every commit looks by path.
final class StateWatch {
    /// `/`, `/a`, `/a/b`, … the state directory (nil: the path cannot be watched).
    private let directories: [String]?
    private var fd: Int32 = -1
    /// The watch descriptor of each of `directories`, and whether all are set.
    private var watches: [Int32] = []
    private var complete = false
    /// Set when the watch cannot be had for a reason that will not pass (logged once).
    private(set) var unavailable: Bool
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)

    static let inDirectory = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF)
    static let onTheWay = UInt32(IN_DELETE_SELF | IN_MOVE_SELF)
    /// A path's last component is not followed when it is a symbolic link, and must be a directory.
    static let strict = UInt32(IN_ONLYDIR) | UInt32(IN_DONT_FOLLOW)

    init(directory: String) {
        let parts = directory.split(separator: "/")
        if directory.hasPrefix("/") && !parts.contains(where: { $0 == "." || $0 == ".." }) {
            directories = (0...parts.count).map { "/" + parts.prefix($0).joined(separator: "/") }
        } else {
            directories = nil
        }
        unavailable = false
        if directories == nil { giveUp("\(directory) is relative or has . or .. in it") }
    }

    deinit {
        if fd >= 0 { try? Sys.close(fd) }  // (read-only: nothing to lose)
        buffer.deallocate()
    }

    /// True: no event since the last call, so the state's files are the ones that were at
    /// their paths then. False: look by path now (after the watches were set afresh).
    func unchanged() -> Bool {
        if fd >= 0 && complete {
            do throws(Errno) {
                if case .wouldBlock = try Sys.read(fd, into: buffer) { return true }
            } catch {
                giveUp("reading the watch failed: \(error)")
                return false
            }
        }
        arm()
        return false
    }

    /// Sets the watches afresh, on the one descriptor: closing an inotify descriptor waits for
    /// the kernel's grace period (measured: up to 20 ms of a round trip's time), so it is made
    /// once. A directory that is not there (deleted; the caller's check makes it again) leaves
    /// the watch incomplete: the next call tries again.
    private func arm() {
        complete = false
        guard !unavailable, let directories else { return }
        do throws(Errno) {
            if fd < 0 { fd = try Sys.inotifyCreate() }
            for (k, dir) in directories.enumerated() {
                let mask = (k == directories.count - 1 ? StateWatch.inDirectory : StateWatch.onTheWay) | StateWatch.strict
                let wd: Int32
                do throws(Errno) { wd = try Sys.inotifyWatch(fd, dir, mask) } catch {
                    if error.code == ENOENT { return }
                    // ENOTDIR: a symbolic link on the way (or a file); EACCES, ENOSPC: no watch to be had.
                    giveUp("cannot watch \(dir): \(error)")
                    return
                }
                // A directory moved away keeps its watch: dropped, so that it wakes nothing more.
                if k < watches.count, watches[k] != wd { try? Sys.inotifyUnwatch(fd, watches[k]) }  // (EINVAL: already gone)
                if k < watches.count { watches[k] = wd } else { watches.append(wd) }
            }
            // Then the queue is emptied (any event was reason enough; dropping watches adds
            // some): a change from now on is in it, one before is seen by the caller's look.
            while case .done = try Sys.read(fd, into: buffer) {}
            complete = true
        } catch {
            giveUp("the watch failed: \(error)")
        }
    }

    private func giveUp(_ why: String) {
        if fd >= 0 { try? Sys.close(fd) }
        fd = -1
        unavailable = true
        Log.info("The state's files are looked up by path at every change", ["why": why])
    }
}
