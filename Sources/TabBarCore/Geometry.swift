/// Frames and hit testing for a bar layout.
extension Layout {
    /// The frame of every item, in order (bar coordinates, y grows downward).
    ///
    /// The center item is `center.width` wide, centred, raised by `center.raise`;
    /// the other items share the remaining width equally, each `height − safe_bottom`
    /// tall from y = 0. With `rtl` the row is mirrored.
    public func frames(for items: [Item]) -> [Frame] {
        guard !items.isEmpty else { return [] }
        let hasCenter = items.contains { $0.kind == .center }
        let rowHeight = max(0, height - safeBottom)
        let others = Double(items.count - (hasCenter ? 1 : 0))
        let available = hasCenter ? max(0, width - center.width) : width
        let w = others > 0 ? available / others : 0
        var frames: [Frame] = []
        frames.reserveCapacity(items.count)
        var x = 0.0
        for k in items.indices {
            if items[k].kind == .center {
                frames.append(Frame(x: (width - center.width) / 2, y: -center.raise, w: center.width, h: center.height))
                x += center.width
            } else {
                frames.append(Frame(x: x, y: 0, w: w, h: rowHeight))
                x += w
            }
        }
        if rtl {
            for k in frames.indices { frames[k].x = width - frames[k].x - frames[k].w }
        }
        return frames
    }

    /// What a point hits: the item index, or nil; `consumed` tells whether the
    /// bar swallowed the touch (false means it passes through to content). A point on
    /// the bar's own rectangle that hits no item (the safe area, the row below a round
    /// center button) is swallowed by the bar's background; above the bar only the
    /// center item's shape counts (its box corners swallow only when asked).
    public func hitTest(x: Double, y: Double, items: [Item], swallowCenterCorners: Bool = false)
        -> (index: Int?, consumed: Bool)
    {
        guard x.isFinite, y.isFinite else { return (nil, false) }
        // The frames as `frames(for:)` computes them, one at a time.
        let n = items.count
        // (A center item stands in the middle of an odd number of items: `Reducer.validate`.)
        let c = n & 1 == 1 && items[n >> 1].kind == .center ? n >> 1 : -1
        let rowHeight = max(0, height - safeBottom)
        let others = Double(n - (c >= 0 ? 1 : 0))
        let w = others > 0 ? (c >= 0 ? max(0, width - center.width) : width) / others : 0
        if c >= 0 {
            var f = Frame(x: (width - center.width) / 2, y: -center.raise, w: center.width, h: center.height)
            if rtl { f.x = width - f.x - f.w }
            if x >= f.x, x < f.x + f.w, y >= f.y, y < f.y + f.h {
                switch center.shape {
                case .rect: return (c, true)
                case .circle:
                    let r = min(f.w, f.h) / 2
                    let dx = x - (f.x + f.w / 2), dy = y - (f.y + f.h / 2)
                    if dx * dx + dy * dy <= r * r { return (c, true) }
                    if swallowCenterCorners { return (nil, true) }
                }
            }
        }
        // Every other item's frame is `rowHeight` tall from y = 0: told once for the row.
        if y >= 0, y < rowHeight {
            var left = 0.0  // (summed as `frames(for:)` sums it: the same doubles)
            for k in 0..<n {
                if k == c { left += center.width; continue }
                var fx = left
                left += w
                if rtl { fx = width - fx - w }
                if x >= fx, x < fx + w { return (k, true) }
            }
        }
        if x >= 0, x < width, y >= 0, y < height { return (nil, true) }
        return (nil, false)
    }
}
