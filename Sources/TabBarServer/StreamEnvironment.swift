@preconcurrency import Glibc
import TabBarAudio

/// Hands the stream's identity (`StreamIdentity`: role, application name, …) to the sound
/// server's ALSA plugins through the environment they read when a PCM is opened. Done once, by
/// `DaemonCommand` before the server starts: `setenv` is not safe while another thread may read
/// the environment, and at that point the process has one thread (checked: with more, nothing is
/// set and a warning says so). Variables the daemon was started with win over the configuration.
enum StreamEnvironment {
    /// Threads in this process (`/proc/self/task`), 0 when it cannot be read.
    static func threadCount() -> Int {
        guard let dir = opendir("/proc/self/task") else { return 0 }
        defer { closedir(dir) }
        var n = 0
        while let e = readdir(dir) {
            let first = withUnsafeBytes(of: e.pointee.d_name) { $0[0] }
            if first != UInt8(ascii: ".") { n += 1 }
        }
        return n
    }

    /// Sets PIPEWIRE_ALSA, PULSE_PROP and PULSE_PROP_OVERRIDE for `identity`; returns the names set.
    @discardableResult
    static func apply(_ identity: StreamIdentity) -> [String] {
        let threads = threadCount()
        guard threads == 1 else {
            Log.warning("The audio stream's role and name are not set: other threads already run", ["threads": String(threads)])
            return []
        }
        var set: [String] = []
        for (name, value) in identity.environment where !value.isEmpty {
            if let given = Posix.env(name) {
                Log.info("Audio stream variable given in the environment; kept", ["name": name, "value": given])
                continue
            }
            setenv(name, value, 1)
            set.append(name)
        }
        Log.info("Audio stream identity", ["role": identity.role ?? "none",
                                           "application.name": identity.properties["application.name"] ?? "",
                                           "media.name": identity.properties["media.name"] ?? ""])
        return set
    }
}
