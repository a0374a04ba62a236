@preconcurrency import Glibc
// The system-call wrappers and `Errno` (which lived here) for every file of the server, and
// for whoever imports TabBarServer.
@_exported import TabBarSystem

/// The server's file-system helpers, on top of `Sys` (TabBarSystem).
enum Posix {
    /// Writes all of `bytes` to a blocking fd.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) {
        try Sys.writeAll(fd, bytes)
    }

    /// Reads a whole file (nil when it does not exist).
    static func readFile(_ path: String, limit: Int = 64 << 20) throws(Errno) -> [UInt8]? {
        let fd: Int32
        do throws(Errno) { fd = try Sys.open(path, O_RDONLY | O_CLOEXEC) } catch {
            if error.code == ENOENT { return nil }
            throw error
        }
        defer { try? Sys.close(fd) }  // (read-only: nothing to lose)
        return try Sys.readAll(fd, limit: limit)
    }

    /// `mkdir -p` with `mode` for the created directories.
    static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws(Errno) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            do throws(Errno) { try Sys.call { mkdir(current, mode) } } catch {
                if error.code != EEXIST { throw error }
            }
        }
    }

    /// The supplementary groups of a Unix socket's peer (SO_PEERGROUPS, Linux ≥ 4.13); empty when unknown.
    static func peerGroups(_ fd: Int32) -> [UInt32] {
        var groups = [UInt32](repeating: 0, count: 64)
        while true {
            var len = socklen_t(groups.count * MemoryLayout<UInt32>.size)
            let r = groups.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, 59 /* SO_PEERGROUPS */, $0.baseAddress, &len) }
            if r == 0 { return Array(groups.prefix(Int(len) / MemoryLayout<UInt32>.size)) }
            guard errno == ERANGE, Int(len) > groups.count * MemoryLayout<UInt32>.size else { return [] }
            groups = [UInt32](repeating: 0, count: Int(len) / MemoryLayout<UInt32>.size + 1)
        }
    }

    static func dirname(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func env(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }
}
