import Glibc

/// A peak limiter applied to the float mix before it is converted to the device's
/// sample format: instant attack (the gain drops at once to whatever keeps the
/// loudest channel of the frame at `ceiling`), exponential release back to unity.
/// Anything whose peak stays at or below `ceiling` (default 0 dBFS: anything a 16-bit
/// file can hold) passes bit-exact; overlapping clicks
/// add up without wrapping or hard clipping. Deterministic, so tests can compute
/// the expected output with the same type.
public struct SoftLimiter: Sendable {
    /// Largest absolute output sample.
    public var ceiling: Float
    /// Per-frame release coefficient (fraction of the distance to unity regained per frame).
    public var release: Float
    /// The current gain (1 when not limiting).
    public private(set) var gain: Float = 1

    /// `releaseSeconds` is the time constant of the return to unity.
    public init(ceiling: Float = 1.0, releaseSeconds: Double = 0.05, rate: Int = 48_000) {
        self.ceiling = ceiling
        self.release = Float(1 - exp(-1 / (releaseSeconds * Double(rate))))
    }

    /// Limits `frames` interleaved frames in place.
    public mutating func process(_ buf: UnsafeMutablePointer<Float>, frames: Int, channels: Int) {
        var g = gain
        let c = ceiling
        let r = release
        var i = 0
        for _ in 0..<frames {
            var peak: Float = 0
            for ch in 0..<channels { peak = max(peak, abs(buf[i + ch])) }
            if g < 1 {
                g += (1 - g) * r
                if g > 0.99999 { g = 1 }
            }
            if peak * g > c {
                g = c / peak
                while peak * g > c { g = g.nextDown }
            }
            if g != 1 {
                for ch in 0..<channels { buf[i + ch] *= g }
            }
            i += channels
        }
        gain = g
    }

    /// `frames` frames of silence went by without passing through `process` (the stream stood
    /// by or stopped): the gain releases as it would have over them. Without this, the gain left
    /// by two overlapping clicks stayed below 1 across every later pause (the release only moved
    /// while frames were mixed, 576 a click), and the next ~20 single clicks came out scaled by
    /// 0.998–0.9999 instead of bit-exact.
    public mutating func elapse(frames: Int) {
        guard gain < 1, frames > 0 else { return }
        var g = 1 - (1 - gain) * Float(pow(Double(1 - release), Double(frames)))
        if g > 0.99999 { g = 1 }
        gain = g
    }

    /// Limits an array (convenience for tests).
    public mutating func process(_ samples: inout [Float], channels: Int) {
        let frames = samples.count / channels
        samples.withUnsafeMutableBufferPointer { process($0.baseAddress!, frames: frames, channels: channels) }
    }
}

/// Float → signed 16-bit, rounding to nearest and clamping (exact for values that came from 16-bit).
public func floatToS16(_ x: Float) -> Int16 {
    let v = (x * 32768).rounded()
    if v >= 32767 { return 32767 }
    if v <= -32768 { return -32768 }
    return Int16(v)
}
