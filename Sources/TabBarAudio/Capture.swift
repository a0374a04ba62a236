import CSndFile
import Glibc

/// A WAV file of what a sink played (`--capture`, `capture.start`): 16-bit PCM through
/// libsndfile at the device's rate and channels, each sample converted exactly as
/// `AlsaSink` converts it for an S16_LE device (`floatToS16`, after the limiter and the
/// master volume). Written from the audio thread through a small buffer.
public final class WAVCapture {
    public let path: String
    /// Stream position (frames since the sink opened) of the file's first frame.
    public let firstFrame: Int64
    /// Frames written so far.
    public private(set) var frames: Int64 = 0
    private let channels: Int
    private var file: OpaquePointer?
    private var buffer: [Int16] = []
    private static let bufferFrames = 4096

    /// Creates (truncates) `path`. Throws a sentence naming the file and libsndfile's reason.
    public init(path: String, format: PCMFormat, firstFrame: Int64) throws {
        self.path = path
        self.firstFrame = firstFrame
        self.channels = format.channels
        var info = SF_INFO()
        info.samplerate = Int32(format.rate)
        info.channels = Int32(format.channels)
        info.format = Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_PCM_16)
        guard let f = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw CaptureError(path: path, reason: String(cString: sf_strerror(nil)))
        }
        file = f
        buffer.reserveCapacity(WAVCapture.bufferFrames * channels)
    }

    deinit { _ = try? finish() }

    /// Appends one sample (interleaved order); `appended(frames:)` follows each whole frame group.
    func append(_ sample: Float) { buffer.append(floatToS16(sample)) }

    /// `count` whole frames were appended sample by sample.
    func appended(frames count: Int) {
        frames += Int64(count)
        if buffer.count >= WAVCapture.bufferFrames * channels { flush() }
    }

    /// Appends `count` frames of silence.
    public func writeSilence(frames count: Int64) {
        guard count > 0 else { return }
        var left = count
        while left > 0 {
            let k = Int(min(left, Int64(WAVCapture.bufferFrames)))
            buffer.append(contentsOf: repeatElement(0, count: k * channels))
            left -= Int64(k)
            if buffer.count >= WAVCapture.bufferFrames * channels { flush() }
        }
        frames += count
    }

    private func flush() {
        guard let file, !buffer.isEmpty else { buffer.removeAll(keepingCapacity: true); return }
        buffer.withUnsafeBufferPointer { b in
            _ = sf_writef_short(file, b.baseAddress, sf_count_t(b.count / channels))
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered and closes the file (its header then holds the length).
    /// Throws when a write failed (disk full…). Idempotent.
    public func finish() throws {
        guard let f = file else { return }
        flush()
        let err = sf_error(f)
        let reason = err != 0 ? String(cString: sf_strerror(f)) : nil
        sf_close(f)
        file = nil
        if let reason { throw CaptureError(path: path, reason: reason) }
    }
}

/// A capture file could not be created or written.
public struct CaptureError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "cannot write the capture \(path): \(reason)" }
}
