@preconcurrency import Glibc
import Testing
@testable import TabBarServer

/// StateWatch: what spares a group commit its lookups by path. Whatever can make the state's
/// path name another file must make `unchanged` false (then the commit looks by path);
/// the daemon's own writes to the journal must not.
@Suite struct StateWatchTests {
    static func touch(_ path: String) { close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)) }

    @Test func everyChangeOnTheWayIsSeenAndWritesAreNot() throws {
        let dir = Rigs.tempDir("tabbard-watch")
        let state = dir + "/a/st"
        #expect(mkdir(dir + "/a", 0o700) == 0 && mkdir(state, 0o700) == 0)
        Self.touch(state + "/state.json.journal")
        let watch = StateWatch(directory: state)
        #expect(!watch.unchanged(), "the first look is by path: nothing was watched before it")
        #expect(watch.unchanged())

        let fd = open(state + "/state.json.journal", O_WRONLY | O_APPEND | O_CLOEXEC)
        #expect(write(fd, "x\n", 2) == 2)
        close(fd)
        Self.touch(dir + "/a/sibling")  // beside a directory on the way, not on it
        #expect(watch.unchanged(), "a journal write and a file beside the way change nothing")

        Self.touch(state + "/state.json.new")
        #expect(!watch.unchanged(), "a file created in the state directory")
        #expect(watch.unchanged(), "seen once: the watch was made afresh")
        #expect(rename(state + "/state.json.new", state + "/state.json.journal") == 0)
        #expect(!watch.unchanged(), "the journal replaced by a rename")
        #expect(unlink(state + "/state.json.journal") == 0)
        #expect(!watch.unchanged(), "the journal deleted")
        #expect(watch.unchanged())

        #expect(rename(dir + "/a", dir + "/moved") == 0)
        #expect(!watch.unchanged(), "a directory above the state directory moved away")
        #expect(!watch.unchanged(), "while the state directory is not there, every look is by path")
        #expect(mkdir(dir + "/a", 0o700) == 0 && mkdir(state, 0o700) == 0)
        #expect(!watch.unchanged(), "the directory made again: watched afresh, looked at by path")
        #expect(watch.unchanged())
        #expect(!watch.unavailable)
    }

    @Test func aPathTheWatchCannotCoverIsAlwaysLookedUp() throws {
        let dir = Rigs.tempDir("tabbard-watch")
        #expect(mkdir(dir + "/real", 0o700) == 0 && mkdir(dir + "/real/st", 0o700) == 0)
        #expect(symlink(dir + "/real", dir + "/link") == 0)
        // A symbolic link on the way could be pointed elsewhere with no event in any directory watched.
        for path in [dir + "/link/st", "relative/st", dir + "/real/../real/st"] {
            let watch = StateWatch(directory: path)
            #expect(!watch.unchanged() && !watch.unchanged() && !watch.unchanged(), "\(path)")
            #expect(watch.unavailable, "\(path)")
        }
    }
}
