import Testing
@testable import TabBarCore
import TabBarTesting

/// `hitTest` computes each frame on the fly (no array per touch); it must agree with the
/// frames front ends are given (`frames(for:)`) at every point, for any layout.
@Suite struct HitTestAgreementTests {
    /// The hit test written over `frames(for:)`, as it was before it stopped building the array.
    static func reference(_ l: Layout, x: Double, y: Double, items: [Item], swallow: Bool) -> (Int?, Bool) {
        guard x.isFinite, y.isFinite else { return (nil, false) }
        let frames = l.frames(for: items)
        if let c = items.firstIndex(where: { $0.kind == .center }) {
            let f = frames[c]
            if x >= f.x, x < f.x + f.w, y >= f.y, y < f.y + f.h {
                switch l.center.shape {
                case .rect: return (c, true)
                case .circle:
                    let r = min(f.w, f.h) / 2
                    let dx = x - (f.x + f.w / 2), dy = y - (f.y + f.h / 2)
                    if dx * dx + dy * dy <= r * r { return (c, true) }
                    if swallow { return (nil, true) }
                }
            }
        }
        for (k, item) in items.enumerated() where item.kind != .center {
            let f = frames[k]
            if x >= f.x, x < f.x + f.w, y >= f.y, y < f.y + f.h { return (k, true) }
        }
        if x >= 0, x < l.width, y >= 0, y < l.height { return (nil, true) }
        return (nil, false)
    }

    @Test func theHitTestAgreesWithTheFramesEverywhere() {
        let seed = TestSeed.value(default: 17)
        var rng = SplitMix64(seed: seed)
        for round in 0..<400 {
            let n = Int(rng.next() % 7) + 1
            let center = n % 2 == 1 && rng.next() % 2 == 0 ? n / 2 : -1
            let items = (0..<n).map { Item(id: "i\($0)", kind: $0 == center ? .center : .tab) }
            let width = Double(rng.next() % 600) + Double(rng.next() % 1000) / 997
            let l = Layout(width: width, height: Double(rng.next() % 90) + 10, safeBottom: Double(rng.next() % 30),
                           center: CenterSpec(width: Double(rng.next() % 100) + 1, height: Double(rng.next() % 100) + 1,
                                              raise: Double(rng.next() % 40), shape: rng.next() % 2 == 0 ? .circle : .rect),
                           rtl: rng.next() % 2 == 0)
            let frames = l.frames(for: items)
            // Every frame edge (where a difference of one bit would show) and random points.
            var xs = frames.flatMap { [$0.x, $0.x + $0.w, ($0.x + $0.w).nextDown, $0.x.nextDown] }
            for _ in 0..<30 { xs.append(Double(Int(rng.next() % 8000)) / 10 - 100) }
            for x in xs {
                for y in [-50, -1, 0, 1, 20, l.height - l.safeBottom, l.height, l.height + 5] as [Double] {
                    let swallow = rng.next() % 2 == 0
                    let got = l.hitTest(x: x, y: y, items: items, swallowCenterCorners: swallow)
                    let want = Self.reference(l, x: x, y: y, items: items, swallow: swallow)
                    #expect(got.index == want.0 && got.consumed == want.1, "seed \(seed): round \(round) x \(x) y \(y) \(l)")
                }
            }
        }
    }
}
