import CSoxr

/// Sample-rate conversion at load time with libsoxr (`Resampler`, fed chunk by chunk by
/// `Decoder`). docs/AUDIO.md, "Formats", has the measured cost of each quality.
public enum Converter {
    /// libsoxr's quality recipes.
    public enum Quality: String, CaseIterable, Sendable {
        /// 'Quick' cubic interpolation.
        case quick
        /// 16-bit, larger roll-off.
        case low
        /// 16-bit, medium roll-off.
        case medium
        /// 20-bit (≈ 120 dB), 91 % pass-band: soxr's default.
        case high
        /// 28-bit.
        case veryHigh

        var recipe: UInt {
            switch self {
            case .quick: return UInt(TABBARD_SOXR_QQ)
            case .low: return UInt(TABBARD_SOXR_LQ)
            case .medium: return UInt(TABBARD_SOXR_MQ)
            case .high: return UInt(TABBARD_SOXR_HQ)
            case .veryHigh: return UInt(TABBARD_SOXR_VHQ)
            }
        }
    }

    /// The quality sounds are converted with: 20-bit is past what the 16-bit device format
    /// carries, at 1/25 of libsamplerate's best's cost (docs/AUDIO.md).
    public static let quality: Quality = .high

    /// Resamples interleaved audio in one go (tests and the measurement in docs/SOUNDS.md).
    public static func resample(_ samples: [Float], channels: Int, from: Int, to: Int,
                                quality: Quality = Converter.quality) throws(AudioError) -> [Float] {
        if from == to { return samples }
        let frames = samples.count / channels
        let r = try Resampler(from: from, to: to, channels: channels, maxInput: max(frames, 1), path: "<memory>", quality: quality)
        var out: [Float] = []
        out.reserveCapacity((Int(Double(frames) * Double(to) / Double(from)) + 64) * channels)
        try r.process(samples, frames: frames, appendingTo: &out)
        try r.finish(appendingTo: &out)
        return out
    }
}
