import Glibc
import TabBarSystem

/// The device's sample layout that every decoded sound is converted into at load:
/// interleaved Float32 at `rate` Hz with `channels` channels.
public struct PCMFormat: Equatable, Sendable, CustomStringConvertible {
    public var rate: Int
    public var channels: Int
    public init(rate: Int = 48_000, channels: Int = 2) {
        self.rate = rate
        self.channels = channels
    }
    /// 48 000 Hz stereo.
    public static let standard = PCMFormat()
    public var description: String { "\(rate) Hz, \(channels) ch" }
}

/// Log priority, numbered like syslog/journald (`<3>` … `<7>` prefixes).
public enum LogLevel: Int, Sendable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7
}

/// Where the audio module writes its log lines (one record per call, no trailing newline).
public typealias AudioLog = @Sendable (LogLevel, String) -> Void

/// What happens when a sound is played while an earlier voice of the same sound still sounds.
/// Wire strings: `"overlap"`, `"restart"`.
public enum Retrigger: String, Sendable, Equatable {
    /// The new voice mixes over the earlier ones.
    case overlap
    /// Earlier voices of the same sound fade out within 1 ms and the new one starts.
    case restart
}

/// Errors of the audio module; each message names what failed and why.
public enum AudioError: Error, Equatable, CustomStringConvertible {
    /// A sound file could not be read or decoded.
    case decode(path: String, reason: String)
    /// A sound could not be converted into the device format.
    case convert(path: String, reason: String)
    /// The PCM device could not be opened or configured.
    case deviceOpen(device: String, reason: String)
    /// The PCM device failed while playing (unplugged, I/O error).
    case deviceIO(device: String, reason: String)
    /// A system call failed.
    case system(call: String, errno: Int32)

    public var description: String {
        switch self {
        case .decode(let path, let reason): return "cannot decode \(path): \(reason)"
        case .convert(let path, let reason): return "cannot convert \(path): \(reason)"
        case .deviceOpen(let device, let reason): return "cannot open ALSA device \(device): \(reason)"
        case .deviceIO(let device, let reason): return "ALSA device \(device) failed: \(reason)"
        case .system(let call, let e): return "\(call): \(String(cString: strerror(e)))"
        }
    }
}

/// CLOCK_MONOTONIC in nanoseconds (the clock `requestedAt` must be read from): the project's
/// one clock, `MonotonicClock` (TabBarSystem).
public func monotonicNanos() -> UInt64 { MonotonicClock.nanoseconds() }

/// A system call returning -1 on failure, retried on EINTR by `Sys.call` (TabBarSystem, the
/// one EINTR loop); -1 with `errno` set on any other failure, for callers that test the result.
func retryEINTR<T: FixedWidthInteger & SignedInteger>(_ body: () -> T) -> T {
    do throws(Errno) { return try Sys.call(body) } catch {
        errno = error.code
        return -1
    }
}
