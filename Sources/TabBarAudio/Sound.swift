/// One decoded sound, already in the device format: interleaved Float32 samples
/// at `rate` Hz with `channels` channels. Immutable once loaded; shared by the
/// state loop and the audio thread.
// Sendable because it is immutable: `storage` is written once in `init` and only read afterwards.
public final class Sound: @unchecked Sendable, CustomStringConvertible {
    /// The name it is played by (file name without extension, a configured key, or `theme:NAME`).
    public let name: String
    /// Number of frames (samples per channel).
    public let frames: Int
    /// Sample rate of `samples` (the device rate).
    public let rate: Int
    /// Channels of `samples` (the device channels).
    public let channels: Int
    /// The file it was decoded from.
    public let source: String
    /// The file's own format before conversion.
    public let sourceFormat: PCMFormat
    /// Frames in the file itself (before conversion).
    public let sourceFrames: Int
    /// Largest absolute sample value.
    public let peak: Float
    /// Interleaved samples, `frames * channels` of them.
    public let samples: UnsafeBufferPointer<Float>
    private let storage: UnsafeMutableBufferPointer<Float>

    /// Takes ownership of `storage` (allocated with `UnsafeMutableBufferPointer.allocate`).
    init(name: String, source: String, sourceFormat: PCMFormat, sourceFrames: Int? = nil, format: PCMFormat,
         storage: UnsafeMutableBufferPointer<Float>) {
        self.name = name
        self.source = source
        self.sourceFormat = sourceFormat
        self.rate = format.rate
        self.channels = format.channels
        self.frames = format.channels > 0 ? storage.count / format.channels : 0
        self.sourceFrames = sourceFrames ?? self.frames
        self.storage = storage
        self.samples = UnsafeBufferPointer(storage)
        var p: Float = 0
        for s in storage { p = max(p, abs(s)) }
        self.peak = p
    }

    /// A sound from samples already in `format` (for tests and generated sounds).
    public convenience init(name: String, samples: [Float], format: PCMFormat, source: String = "<memory>") {
        let buf = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(samples.count, 1))
        _ = buf.initialize(from: samples)
        let exact = UnsafeMutableBufferPointer(rebasing: buf[0..<samples.count])
        self.init(name: name, source: source, sourceFormat: format, format: format, storage: exact)
    }

    deinit { storage.deallocate() }

    /// The format of `samples`.
    public var format: PCMFormat { PCMFormat(rate: rate, channels: channels) }

    /// Duration in seconds.
    public var duration: Double { rate > 0 ? Double(frames) / Double(rate) : 0 }

    public var description: String {
        "\(name) (\(frames) frames, \(format), from \(source) \(sourceFormat))"
    }
}
