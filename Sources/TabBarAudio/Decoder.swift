import CSndFile
import CSoxr
import Glibc

/// A file read into the device format: samples, and what the file itself holds.
struct DecodedSound {
    /// Interleaved Float32 in the device format.
    var samples: [Float]
    /// The file's own rate and channels.
    var sourceFormat: PCMFormat
    /// Frames the file holds (read to its end, not converted).
    var sourceFrames: Int
}

/// Reads a sound file with libsndfile in chunks of `chunkFrames`, each chunk mapped to the
/// device's channels (`Downmix`) and resampled with libsoxr (`Converter.quality`) as it goes:
/// the whole decoded file is never held, only the device-format result (at most
/// `maxSeconds` × 48 000 × 2 floats = 11.5 MB), so a sound's memory is bounded whatever the
/// file's rate and channels. A file whose length libsndfile cannot tell (`SF_COUNT_MAX`: a
/// FLAC written to a pipe, a truncated Ogg) is read to its end like any other.
enum Decoder {
    /// Longest sound accepted (a UI click is milliseconds; this bounds memory and time).
    static let maxSeconds = 30
    /// Frames read (and resampled) at a time.
    static let chunkFrames = 4096

    static func decode(path: String, into format: PCMFormat, cancelled: () -> Bool = { false }) throws(AudioError) -> DecodedSound {
        var st = stat()
        if stat(path, &st) != 0 {
            throw AudioError.decode(path: path, reason: String(cString: strerror(errno)))
        }
        if (st.st_mode & S_IFMT) != S_IFREG {
            throw AudioError.decode(path: path, reason: (st.st_mode & S_IFMT) == S_IFDIR ? "a directory, not a sound file" : "not a regular file")
        }
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioError.decode(path: path, reason: String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        let channels = Int(info.channels)
        let rate = Int(info.samplerate)
        guard channels >= 1, channels <= 8 else {
            throw AudioError.decode(path: path, reason: "unsupported channel count \(channels) (1 to 8)")
        }
        guard rate >= 8_000, rate <= 384_000 else {
            throw AudioError.decode(path: path, reason: "unsupported sample rate \(rate) Hz (8000 to 384000)")
        }
        let limit = maxSeconds * rate
        // libsndfile says SF_COUNT_MAX (or a negative count) when it cannot tell the length.
        let known = info.frames >= 0 && info.frames != Int64.max
        if known && info.frames > Int64(limit) {
            throw AudioError.decode(path: path, reason: "longer than \(maxSeconds) s")
        }
        let mix = Downmix(positions: Downmix.positions(file, info: info), to: format.channels)
        let dst = format.channels
        var resampler: Resampler?
        if rate != format.rate {
            resampler = try Resampler(from: rate, to: format.rate, channels: dst, maxInput: chunkFrames, path: path)
        }
        var out: [Float] = []
        if known { out.reserveCapacity((Int(Double(info.frames) * Double(format.rate) / Double(rate)) + 64) * dst) }
        var input = [Float](repeating: 0, count: chunkFrames * channels)
        var mixed = [Float](repeating: 0, count: chunkFrames * dst)
        var frames = 0
        while true {
            if cancelled() { throw AudioError.decode(path: path, reason: "cancelled") }
            let n = input.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(chunkFrames)) }
            if n <= 0 { break }
            let got = Int(n)
            frames += got
            if frames > limit { throw AudioError.decode(path: path, reason: "longer than \(maxSeconds) s") }
            for k in 0..<(got * channels) where !input[k].isFinite {
                throw AudioError.decode(path: path, reason: "contains non-finite samples")
            }
            mix.apply(input, frames: got, into: &mixed)
            if let r = resampler {
                try r.process(mixed, frames: got, appendingTo: &out)
            } else {
                out.append(contentsOf: mixed[0..<(got * dst)])
            }
        }
        if sf_error(file) != 0 {
            throw AudioError.decode(path: path, reason: String(cString: sf_strerror(file)))
        }
        if frames == 0 {
            throw AudioError.decode(path: path, reason: "no audio frames")
        }
        try resampler?.finish(appendingTo: &out)
        return DecodedSound(samples: out, sourceFormat: PCMFormat(rate: rate, channels: channels), sourceFrames: frames)
    }
}

/// libsoxr, streaming: chunks in, what is ready out; `finish` flushes the filter's tail.
final class Resampler {
    private let soxr: soxr_t
    private let channels: Int
    private var buffer: [Float]
    private let capacity: Int
    private let path: String

    init(from: Int, to: Int, channels: Int, maxInput: Int, path: String,
         quality: Converter.Quality = Converter.quality) throws(AudioError) {
        var error: UnsafePointer<CChar>?
        guard let s = tabbard_soxr_create(Double(from), Double(to), UInt32(channels), quality.recipe, &error), error == nil else {
            throw AudioError.convert(path: path, reason: "libsoxr: \(error.map { String(cString: $0) } ?? "cannot create a resampler")")
        }
        soxr = s
        self.channels = channels
        self.path = path
        capacity = Int(Double(maxInput) * Double(to) / Double(from)) + 1024
        buffer = [Float](repeating: 0, count: capacity * channels)
    }

    deinit { soxr_delete(soxr) }

    /// Feeds `frames` interleaved frames of `input`; appends what comes out.
    func process(_ input: [Float], frames: Int, appendingTo out: inout [Float]) throws(AudioError) {
        var offset = 0
        while offset < frames {
            var used = 0, made = 0
            let e = input.withUnsafeBufferPointer { i in
                buffer.withUnsafeMutableBufferPointer { o in
                    soxr_process(soxr, i.baseAddress! + offset * channels, frames - offset, &used, o.baseAddress, capacity, &made)
                }
            }
            if let e { throw AudioError.convert(path: path, reason: "libsoxr: \(String(cString: e))") }
            out.append(contentsOf: buffer[0..<(made * channels)])
            offset += used
            if used == 0 && made == 0 { break }
        }
    }

    /// Signals the end of the input and appends the rest.
    func finish(appendingTo out: inout [Float]) throws(AudioError) {
        while true {
            var made = 0
            let e = buffer.withUnsafeMutableBufferPointer { o in soxr_process(soxr, nil, 0, nil, o.baseAddress, capacity, &made) }
            if let e { throw AudioError.convert(path: path, reason: "libsoxr: \(String(cString: e))") }
            if made == 0 { break }
            out.append(contentsOf: buffer[0..<(made * channels)])
        }
    }
}

/// How a file's channels become the device's. Equal counts copy; mono goes to every output
/// channel; more than two channels are downmixed to stereo as ffmpeg's resampler does it
/// (ITU-R BS.775: front left/right at 1, the centre and the surrounds at −3 dB (0.7071), a back
/// centre at 0.5 to both sides, the LFE dropped), then scaled so that no output can pass full
/// scale (each output's coefficients sum to at most 1, as ffmpeg scales for 16-bit output).
/// To mono: the average of the stereo downmix (or of the two channels). Other layouts
/// (a device of more than two channels): output `c` takes input `c mod N`.
struct Downmix {
    /// dst × src coefficients, or nil for a plain copy/spread.
    let matrix: [[Float]]?
    let src: Int
    let dst: Int

    init(positions: [Int32], to dst: Int) {
        src = positions.count
        self.dst = dst
        if src == dst || src == 1 || dst > 2 {
            matrix = nil
            return
        }
        var stereo: [[Float]]
        if src == 2 {
            stereo = [[1, 0], [0, 1]]
        } else {
            stereo = [[Float](repeating: 0, count: src), [Float](repeating: 0, count: src)]
            for (c, p) in positions.enumerated() {
                let (l, r) = Downmix.toStereo(p)
                stereo[0][c] = l
                stereo[1][c] = r
            }
            let most = stereo.map { $0.reduce(0, +) }.max() ?? 1
            if most > 1 { stereo = stereo.map { $0.map { $0 / most } } }
        }
        matrix = dst == 2 ? stereo : [zip(stereo[0], stereo[1]).map { ($0 + $1) / 2 }]
    }

    /// Coefficients of a libsndfile channel position into left and right.
    static func toStereo(_ p: Int32) -> (Float, Float) {
        let h: Float = 0.70710677
        switch Int(p) {
        case SF_CHANNEL_MAP_LEFT, SF_CHANNEL_MAP_FRONT_LEFT, SF_CHANNEL_MAP_FRONT_LEFT_OF_CENTER:
            return (1, 0)
        case SF_CHANNEL_MAP_RIGHT, SF_CHANNEL_MAP_FRONT_RIGHT, SF_CHANNEL_MAP_FRONT_RIGHT_OF_CENTER:
            return (0, 1)
        case SF_CHANNEL_MAP_REAR_LEFT, SF_CHANNEL_MAP_SIDE_LEFT,
             SF_CHANNEL_MAP_TOP_FRONT_LEFT, SF_CHANNEL_MAP_TOP_REAR_LEFT:
            return (h, 0)
        case SF_CHANNEL_MAP_REAR_RIGHT, SF_CHANNEL_MAP_SIDE_RIGHT,
             SF_CHANNEL_MAP_TOP_FRONT_RIGHT, SF_CHANNEL_MAP_TOP_REAR_RIGHT:
            return (0, h)
        case SF_CHANNEL_MAP_REAR_CENTER, SF_CHANNEL_MAP_TOP_REAR_CENTER:
            return (0.5, 0.5)
        case SF_CHANNEL_MAP_LFE:
            return (0, 0)
        default:  // centre, mono, top centre, anything unnamed
            return (h, h)
        }
    }

    /// The file's channel positions: its own map when it has one (WAVE_FORMAT_EXTENSIBLE, CAF,
    /// AIFF), else the usual order for its container and channel count (Vorbis/Opus order for
    /// Ogg, the WAVE/SMPTE order otherwise).
    static func positions(_ file: OpaquePointer, info: SF_INFO) -> [Int32] {
        let n = Int(info.channels)
        var map = [Int32](repeating: 0, count: n)
        let ok = map.withUnsafeMutableBytes { sf_command(file, Int32(SFC_GET_CHANNEL_MAP_INFO), $0.baseAddress, Int32($0.count)) }
        if ok == SF_TRUE, !map.contains(0) { return map }
        return defaultPositions(channels: n, ogg: Int(info.format) & SF_FORMAT_TYPEMASK == SF_FORMAT_OGG)
    }

    static func defaultPositions(channels n: Int, ogg: Bool) -> [Int32] {
        let L = SF_CHANNEL_MAP_FRONT_LEFT, R = SF_CHANNEL_MAP_FRONT_RIGHT, C = SF_CHANNEL_MAP_FRONT_CENTER,
            LFE = SF_CHANNEL_MAP_LFE, BL = SF_CHANNEL_MAP_REAR_LEFT, BR = SF_CHANNEL_MAP_REAR_RIGHT,
            BC = SF_CHANNEL_MAP_REAR_CENTER, SL = SF_CHANNEL_MAP_SIDE_LEFT, SR = SF_CHANNEL_MAP_SIDE_RIGHT
        let order: [Int]
        if ogg {
            // Vorbis I, section 4.3.9 (Opus mapping family 1 is the same).
            switch n {
            case 1: order = [C]
            case 2: order = [L, R]
            case 3: order = [L, C, R]
            case 4: order = [L, R, BL, BR]
            case 5: order = [L, C, R, BL, BR]
            case 6: order = [L, C, R, BL, BR, LFE]
            case 7: order = [L, C, R, SL, SR, BC, LFE]
            default: order = [L, C, R, SL, SR, BL, BR, LFE]
            }
        } else {
            // WAVE_FORMAT_EXTENSIBLE's default masks by count (as ffmpeg guesses them).
            switch n {
            case 1: order = [C]
            case 2: order = [L, R]
            case 3: order = [L, R, C]
            case 4: order = [L, R, BL, BR]
            case 5: order = [L, R, C, BL, BR]
            case 6: order = [L, R, C, LFE, BL, BR]
            case 7: order = [L, R, C, LFE, BC, SL, SR]
            default: order = [L, R, C, LFE, BL, BR, SL, SR]
            }
        }
        return order.prefix(n).map { Int32($0) }
    }

    /// `frames` frames of `input` (src channels) into `out` (dst channels).
    func apply(_ input: [Float], frames: Int, into out: inout [Float]) {
        if let matrix {
            for f in 0..<frames {
                for o in 0..<dst {
                    var sum: Float = 0
                    let row = matrix[o]
                    for c in 0..<src { sum += row[c] * input[f * src + c] }
                    out[f * dst + o] = sum
                }
            }
        } else if src == dst {
            for k in 0..<(frames * dst) { out[k] = input[k] }
        } else {
            for f in 0..<frames {
                for c in 0..<dst { out[f * dst + c] = input[f * src + (c % src)] }
            }
        }
    }
}
