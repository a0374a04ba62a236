/// What an item of the bar is. Wire strings: `tab`, `action`, `center`.
public enum ItemKind: String, Equatable, Sendable, CaseIterable {
    /// A selectable tab.
    case tab
    /// An operation button (record, photo…): triggers, never selects.
    case action
    /// The raised center button: triggers, never selects; at most one, in the middle.
    case center
}

/// The alternative look of an item while it is selected (the morphing first tab).
public struct Morph: Equatable, Sendable {
    public var title: String
    public var icon: String?
    public init(title: String, icon: String? = nil) {
        self.title = title
        self.icon = icon
    }
}

/// A badge on an item. Wire kinds: `count`, `text`, `dot`.
public enum Badge: Equatable, Sendable {
    case count(Int)
    case text(String)
    case dot

    public var kind: String {
        switch self {
        case .count: return "count"
        case .text: return "text"
        case .dot: return "dot"
        }
    }
}

/// One entry of the bar.
public struct Item: Equatable, Sendable {
    public var id: String
    public var title: String
    public var kind: ItemKind
    public var enabled: Bool
    public var icon: String?
    public var selectedIcon: String?
    /// Sound played when this item is committed by a user (overrides the default).
    public var sound: String?
    /// Name of the operation an action item performs (`record_video`, …).
    public var action: String?
    public var morph: Morph?
    public var badge: Badge?
    /// The badge keeps its value but is not shown (`badge.set {"hidden":true}`).
    public var badgeHidden: Bool
    /// This item's animation style; nil: the bar's (`settings.animation`).
    public var animation: AnimationStyle?

    public init(id: String, title: String? = nil, kind: ItemKind = .tab, enabled: Bool = true,
                icon: String? = nil, selectedIcon: String? = nil, sound: String? = nil,
                action: String? = nil, morph: Morph? = nil, badge: Badge? = nil,
                badgeHidden: Bool = false, animation: AnimationStyle? = nil) {
        self.id = id
        self.title = title ?? id
        self.kind = kind
        self.enabled = enabled
        self.icon = icon
        self.selectedIcon = selectedIcon
        self.sound = sound
        self.action = action
        self.morph = morph
        self.badge = badge
        self.badgeHidden = badgeHidden
        self.animation = animation
    }

    /// The badge front ends show: nil while hidden.
    public var visibleBadge: Badge? { badgeHidden ? nil : badge }

    /// Whether `tab.select` may select this item.
    public var isSelectable: Bool { kind == .tab && enabled }
}

/// Hit shape of the center item. Wire strings: `rect`, `circle`.
public enum CenterShape: String, Equatable, Sendable, CaseIterable {
    case rect
    case circle
}

/// The raised center button's geometry.
public struct CenterSpec: Equatable, Sendable {
    public var width: Double
    public var height: Double
    public var raise: Double
    public var shape: CenterShape
    public init(width: Double = 70, height: Double = 70, raise: Double = 21, shape: CenterShape = .circle) {
        self.width = width
        self.height = height
        self.raise = raise
        self.shape = shape
    }
}

/// The bar's size as a front end reports it, in points.
public struct Layout: Equatable, Sendable {
    public var width: Double
    public var height: Double
    public var safeBottom: Double
    public var center: CenterSpec
    /// Right-to-left: items are laid out mirrored.
    public var rtl: Bool
    public init(width: Double = 375, height: Double = 49, safeBottom: Double = 0,
                center: CenterSpec = CenterSpec(), rtl: Bool = false) {
        self.width = width
        self.height = height
        self.safeBottom = safeBottom
        self.center = center
        self.rtl = rtl
    }
}

/// A rectangle in bar coordinates (origin top-left, y grows downward).
public struct Frame: Equatable, Sendable {
    public var x, y, w, h: Double
    public init(x: Double, y: Double, w: Double, h: Double) {
        self.x = x
        self.y = y
        self.w = w
        self.h = h
    }
}

/// Phase of the bar's show/hide animation. Wire strings: `idle`, `showing`, `hiding`.
public enum VisibilityPhase: String, Equatable, Sendable {
    case idle
    case showing
    case hiding
}

/// Why the bar is hidden. Wire strings: `explicit`, `push`, `scroll`.
public enum HideReason: String, Equatable, Sendable, CaseIterable {
    case explicit
    case push
    case scroll
}

/// Whether the bar is shown, and why not.
public struct Visibility: Equatable, Sendable {
    /// Every reason that holds, in the order explicit, push, scroll.
    public var reasons: [HideReason]
    public var phase: VisibilityPhase
    /// Pushed screens, bottom first: whether each one hides the bar (`nav.push`).
    public var navStack: [Bool]
    /// The `push` reason was set directly with `bar.set_hidden {"reason":"push"}`.
    public var pushHold: Bool
    /// The running show/hide animation: when it started (ms, the reducer's clock),
    /// how long it takes, and how far hidden the bar was when it started (0 shown … 1 hidden).
    public var phaseStartMs: Int64
    public var phaseDurationMs: Int
    public var phaseFrom: Double
    public var hidden: Bool { !reasons.isEmpty }
    public init(reasons: [HideReason] = [], phase: VisibilityPhase = .idle, navStack: [Bool] = [], pushHold: Bool = false) {
        self.reasons = reasons
        self.phase = phase
        self.navStack = navStack
        self.pushHold = pushHold
        phaseStartMs = 0
        phaseDurationMs = 0
        phaseFrom = reasons.isEmpty ? 0 : 1
    }
}

/// Feedback profile. Wire strings: `full`, `quiet` (reduced volume, selection clicks only), `silent`.
public enum FeedbackProfile: String, Equatable, Sendable, CaseIterable {
    case full
    case quiet
    case silent
}

/// How loud the daemon is.
public struct Feedback: Equatable, Sendable {
    public var profile: FeedbackProfile
    /// Master volume, 0…1.
    public var volume: Double
    public init(profile: FeedbackProfile = .full, volume: Double = 1) {
        self.profile = profile
        self.volume = volume
    }
}

/// The authoritative state of the bar.
public struct BarState: Equatable, Sendable {
    /// The daemon-wide change counter.
    public var seq: UInt64
    public var items: [Item]
    public var selected: String?
    public var previous: String?
    public var highlighted: String?
    public var activeAction: String?
    public var visibility: Visibility
    public var layout: Layout
    public var feedback: Feedback
    /// Bar-level behaviour: commit on down/up, center corners, animation, badges, scroll, hide duration.
    public var settings: BarSettings
    /// Animations front ends reported with `animation.begin` that have not ended.
    public var animations: [ActiveAnimation]

    public init(seq: UInt64 = 0, items: [Item], selected: String? = nil, previous: String? = nil,
                highlighted: String? = nil, activeAction: String? = nil, visibility: Visibility = Visibility(),
                layout: Layout = Layout(), feedback: Feedback = Feedback(), settings: BarSettings = BarSettings(),
                animations: [ActiveAnimation] = []) {
        self.seq = seq
        self.items = items
        self.selected = selected
        self.previous = previous
        self.highlighted = highlighted
        self.activeAction = activeAction
        self.visibility = visibility
        self.layout = layout
        self.feedback = feedback
        self.settings = settings
        self.animations = animations
    }

    /// The built-in bar: home, nearby, a raised center "post" button, chat, me.
    public static let defaultBar = BarState(
        items: [
            Item(id: "home", title: "Home", icon: "house", selectedIcon: "house.fill"),
            Item(id: "nearby", title: "Nearby", icon: "location", selectedIcon: "location.fill"),
            Item(id: "post", title: "Post", kind: .center, icon: "plus", sound: "center", action: "compose"),
            Item(id: "chat", title: "Chat", icon: "bubble", selectedIcon: "bubble.fill"),
            Item(id: "me", title: "Me", icon: "person", selectedIcon: "person.fill"),
        ],
        selected: "home")

    public func index(of id: String) -> Int? { items.firstIndex { $0.id == id } }
    public func item(_ id: String) -> Item? { items.first { $0.id == id } }
}
