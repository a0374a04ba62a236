import CSndFile
import Glibc

/// Decoded audio in the file's own format.
struct DecodedAudio {
    var format: PCMFormat
    var samples: [Float]
    var frames: Int { format.channels > 0 ? samples.count / format.channels : 0 }
}

/// Reads a whole sound file with libsndfile as normalised Float32 (16-bit PCM is divided by 32768).
enum Decoder {
    /// Longest sound accepted (a UI click is milliseconds; this bounds memory).
    static let maxSeconds = 30

    static func decode(path: String) throws -> DecodedAudio {
        var st = stat()
        if stat(path, &st) != 0 {
            throw AudioError.decode(path: path, reason: String(cString: strerror(errno)))
        }
        if (st.st_mode & S_IFMT) != S_IFREG {
            throw AudioError.decode(path: path, reason: "not a regular file")
        }
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            let reason = String(cString: sf_strerror(nil))
            throw AudioError.decode(path: path, reason: reason)
        }
        defer { sf_close(file) }
        let channels = Int(info.channels)
        let rate = Int(info.samplerate)
        guard channels >= 1, channels <= 8 else {
            throw AudioError.decode(path: path, reason: "unsupported channel count \(channels)")
        }
        guard rate >= 8_000, rate <= 384_000 else {
            throw AudioError.decode(path: path, reason: "unsupported sample rate \(rate) Hz")
        }
        guard info.frames >= 0, info.frames <= Int64(maxSeconds * rate) else {
            throw AudioError.decode(path: path, reason: "longer than \(maxSeconds) s")
        }
        var frames = Int(info.frames)
        // Some containers (Ogg) may report an estimate; read in chunks until EOF.
        var samples = [Float](repeating: 0, count: max(frames, 1) * channels)
        var got = 0
        while true {
            if got == frames {
                if frames >= maxSeconds * rate { break }
                frames = max(frames * 2, rate)
                samples.append(contentsOf: repeatElement(0, count: frames * channels - samples.count))
            }
            let want = frames - got
            let n = samples.withUnsafeMutableBufferPointer { p in
                sf_readf_float(file, p.baseAddress! + got * channels, sf_count_t(want))
            }
            if n < 0 { break }
            got += Int(n)
            if n == 0 || Int(n) < want { break }
        }
        let err = sf_error(file)
        if err != 0 {
            throw AudioError.decode(path: path, reason: String(cString: sf_strerror(file)))
        }
        if got == 0 {
            throw AudioError.decode(path: path, reason: "no audio frames")
        }
        samples.removeLast(samples.count - got * channels)
        for s in samples where !s.isFinite {
            throw AudioError.decode(path: path, reason: "contains non-finite samples")
        }
        return DecodedAudio(format: PCMFormat(rate: rate, channels: channels), samples: samples)
    }
}
