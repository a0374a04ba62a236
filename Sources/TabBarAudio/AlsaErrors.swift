import CALSA
import Glibc
import Synchronization

/// Routes alsa-lib's error messages (normally printed to stderr) into an `AudioLog`.
/// Process-wide; the last log installed wins.
public enum AlsaErrorLog {
    private static let target = Mutex<AudioLog?>(nil)

    /// Installs `log` as the receiver of alsa-lib's messages, at debug level: the sink logs its own one-line summary of any failure.
    public static func route(to log: AudioLog?) {
        target.withLock { $0 = log }
        tabbard_alsa_route_errors { line in
            guard let line else { return }
            let text = String(cString: line)
            AlsaErrorLog.target.withLock { $0 }?(.debug, "alsa-lib: \(text)")
        }
    }
}

/// What ALSA failures say: a failed open said plainly ("the sound server is not running", "no sound
/// card", …), then the call and its error.
extension AlsaSink {
    func fail(_ what: String, _ err: Int32) -> AudioError {
        .deviceOpen(device: deviceName, reason: AlsaSink.openReason(what, err))
    }

    /// What a failed open means, said plainly, then the call and its error.
    static func openReason(_ what: String, _ err: Int32) -> String {
        let detail = "\(what): \(String(cString: snd_strerror(err)))"
        switch -err {
        case EHOSTDOWN, ECONNREFUSED: return "the sound server is not running (\(detail))"
        case ENOENT, ENODEV, ENXIO: return "no sound card (\(detail))"
        case EBUSY: return "the device is in use by another program (\(detail))"
        default: return detail
        }
    }

    func ioError(_ what: String, _ err: Int32) -> AudioError {
        .deviceIO(device: deviceName, reason: "\(what): \(String(cString: snd_strerror(err)))")
    }

}
