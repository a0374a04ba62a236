import CALSA

/// Converts decoded audio into the device format at load time: channel mapping,
/// then sample-rate conversion with libsamplerate (loaded at run time).
public enum Converter {
    /// libsamplerate converter types (SRC_SINC_BEST_QUALITY …). Wire strings as the case names.
    public enum Quality: Int32, Sendable {
        case best = 0, medium = 1, fastest = 2, linear = 4
    }

    /// The converter used by `SoundBank.load` (sounds are converted once, so the best one).
    public static let quality: Quality = .best

    /// Whether libsamplerate could be loaded.
    public static var resamplerAvailable: Bool { tabbard_src_available() != 0 }

    /// Maps channels: equal counts copy; mono goes to every output channel; to mono
    /// averages all inputs; otherwise output channel `c` takes input `c % inputChannels`.
    static func mapChannels(_ samples: [Float], from src: Int, to dst: Int) -> [Float] {
        if src == dst { return samples }
        let frames = samples.count / src
        var out = [Float](repeating: 0, count: frames * dst)
        if dst == 1 {
            let scale = 1 / Float(src)
            for f in 0..<frames {
                var sum: Float = 0
                for c in 0..<src { sum += samples[f * src + c] }
                out[f] = sum * scale
            }
        } else {
            for f in 0..<frames {
                for c in 0..<dst { out[f * dst + c] = samples[f * src + (c % src)] }
            }
        }
        return out
    }

    /// Resamples interleaved audio with libsamplerate's `src_simple`.
    static func resample(_ samples: [Float], channels: Int, from: Int, to: Int, path: String,
                         quality: Quality = Converter.quality) throws -> [Float] {
        if from == to { return samples }
        let frames = samples.count / channels
        let ratio = Double(to) / Double(from)
        let capacity = Int((Double(frames) * ratio).rounded(.up)) + 64
        var out = [Float](repeating: 0, count: capacity * channels)
        let got = samples.withUnsafeBufferPointer { inp in
            out.withUnsafeMutableBufferPointer { o in
                tabbard_src_convert(inp.baseAddress, frames, o.baseAddress, capacity, ratio,
                                    Int32(channels), quality.rawValue)
            }
        }
        if got == -1 {
            throw AudioError.convert(path: path, reason: "needs resampling \(from) → \(to) Hz but libsamplerate.so.0 (Debian package libsamplerate0) cannot be loaded")
        }
        if got < 0 {
            let code = Int32(-(got + 1000))
            throw AudioError.convert(path: path, reason: "libsamplerate: \(String(cString: tabbard_src_strerror(code)))")
        }
        out.removeLast(out.count - got * channels)
        return out
    }

    /// Decoded audio → samples in `format`.
    static func convert(_ audio: DecodedAudio, to format: PCMFormat, path: String) throws -> [Float] {
        let src = audio.format.channels
        // Resample with the smaller channel count.
        if format.channels < src {
            let mapped = mapChannels(audio.samples, from: src, to: format.channels)
            return try resample(mapped, channels: format.channels, from: audio.format.rate, to: format.rate, path: path)
        }
        let resampled = try resample(audio.samples, channels: src, from: audio.format.rate, to: format.rate, path: path)
        return mapChannels(resampled, from: src, to: format.channels)
    }
}
