/// An enum the wire spells by its cases' raw values (`Params.choice`), with those values
/// laid out once (`wireNames`) so that a string in a request is matched by its bytes: no
/// `String` is made and no string switch is run for a value that is one of them.
public protocol WireChoice: RawRepresentable, CaseIterable, Sendable where RawValue == String {
    /// The cases' raw values as bytes (`static let wireNames = WireNames<Self>()`).
    static var wireNames: WireNames<Self> { get }
}

/// The raw values of a `WireChoice`'s cases, each as its length and first 16 bytes (zero
/// padded) in two words; a raw value longer than that is left to `init(rawValue:)`.
public struct WireNames<E: WireChoice>: Sendable {
    private let entries: [(first: UInt64, second: UInt64, count: Int, value: E)]

    public init() {
        entries = E.allCases.compactMap { e in
            let bytes = Array(e.rawValue.utf8)
            guard bytes.count <= 16 else { return nil }
            let (first, second) = Self.words(bytes.withUnsafeBufferPointer { $0 })
            return (first, second, bytes.count, e)
        }
    }

    /// `raw`'s bytes (at most 16) as two little-endian words, zero padded.
    private static func words(_ raw: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64) {
        var w: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &w) { out in
            for k in 0..<raw.count { out[k] = raw[k] }
        }
        return w
    }

    /// The case whose raw value `raw` (a plain string's bytes in a document: eight readable
    /// bytes follow them, the zero bytes after the document's text) spells, if any; nil also
    /// for a raw value this table leaves out (then `init(rawValue:)` says).
    func match(_ raw: UnsafeBufferPointer<UInt8>) -> E? {
        let n = raw.count
        guard n <= 16, let p = raw.baseAddress else { return nil }
        func word(_ at: Int) -> UInt64 {
            let left = n - at
            if left <= 0 { return 0 }
            let w = UnsafeRawPointer(p + at).loadUnaligned(as: UInt64.self)
            return left >= 8 ? w : w & ((1 << (8 * UInt64(left))) &- 1)
        }
        let first = word(0), second = word(8)
        for e in entries where e.count == n && e.first == first && e.second == second { return e.value }
        return nil
    }
}

// The enums requests and stored states spell by name.
extension Source: WireChoice { public static let wireNames = WireNames<Source>() }
extension TouchPhase: WireChoice { public static let wireNames = WireNames<TouchPhase>() }
extension HighlightPhase: WireChoice { public static let wireNames = WireNames<HighlightPhase>() }
extension AnimationEndReason: WireChoice { public static let wireNames = WireNames<AnimationEndReason>() }
extension HideReason: WireChoice { public static let wireNames = WireNames<HideReason>() }
extension FeedbackProfile: WireChoice { public static let wireNames = WireNames<FeedbackProfile>() }
extension ItemKind: WireChoice { public static let wireNames = WireNames<ItemKind>() }
extension CenterShape: WireChoice { public static let wireNames = WireNames<CenterShape>() }
extension CommitOn: WireChoice { public static let wireNames = WireNames<CommitOn>() }
extension ClickOn: WireChoice { public static let wireNames = WireNames<ClickOn>() }
extension CenterCorners: WireChoice { public static let wireNames = WireNames<CenterCorners>() }
extension AnimationStyle: WireChoice { public static let wireNames = WireNames<AnimationStyle>() }
