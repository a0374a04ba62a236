/// JSON Schema pieces for `rpc.discover`'s document (`OpenRPC`): the makers the method
/// declarations use for their params (`Field`), and the shapes of what the daemon sends
/// (the state, items, badges, visibility…) for results and events. A result's or an event's
/// schema lists the members the daemon always sends and leaves room for more (clients
/// ignore members they do not know); a param's schema allows nothing the decoder refuses.
public enum Schema {
    /// `{"type":"integer","minimum":…,"maximum":…}`.
    public static func integer(_ range: ClosedRange<Int>) -> JSON {
        .obj(["type": .string("integer"), "minimum": .int(range.lowerBound), "maximum": .int(range.upperBound)])
    }

    public static func number(_ range: ClosedRange<Double>? = nil) -> JSON {
        guard let range else { return .obj(["type": .string("number")]) }
        return .obj(["type": .string("number"), "minimum": .double(range.lowerBound), "maximum": .double(range.upperBound)])
    }

    /// A string of at most `maxBytes` UTF-8 bytes. JSON Schema counts characters, and a
    /// character is at most four bytes: `maxLength` is `maxBytes / 4`, so that every string
    /// the schema allows fits; `x-maxBytes` says the real limit.
    public static func string(minLength: Int = 0, maxBytes: Int, pattern: String? = nil) -> JSON {
        var m: [JSON.Member] = [JSON.Member("type", .string("string"))]
        if minLength > 0 { m.append(JSON.Member("minLength", .int(minLength))) }
        m.append(JSON.Member("maxLength", .int(maxBytes / 4)))
        if let pattern { m.append(JSON.Member("pattern", .string(pattern))) }
        m.append(JSON.Member("x-maxBytes", .int(maxBytes)))
        return .object(m)
    }

    /// No control characters (U+0000…U+001F, U+007F).
    static let noControls = "^[^\\u0000-\\u001F\\u007F]*$"

    /// An item id: 1 to 64 bytes, no control characters.
    public static let itemID = string(minLength: 1, maxBytes: Limits().maxIDLength, pattern: noControls)
    /// An item id or null.
    public static let optionalID = anyOf(itemID, null)

    public static let boolean: JSON = .obj(["type": .string("boolean")])
    public static let null: JSON = .obj(["type": .string("null")])
    public static let anyObject: JSON = .obj(["type": .string("object")])
    public static let text = string(maxBytes: 1 << 20)

    /// One of the enum's wire names.
    public static func choice<E: RawRepresentable & CaseIterable>(_ type: E.Type) -> JSON where E.RawValue == String {
        strings(E.allCases.map(\.rawValue))
    }

    public static func strings(_ names: [String]) -> JSON {
        .obj(["type": .string("string"), "enum": .array(names.map(JSON.string))])
    }

    public static func anyOf(_ schemas: JSON...) -> JSON { .obj(["anyOf": .array(schemas)]) }

    public static func array(_ items: JSON, minItems: Int? = nil, maxItems: Int? = nil) -> JSON {
        var m = [JSON.Member("type", .string("array")), JSON.Member("items", items)]
        if let minItems { m.append(JSON.Member("minItems", .int(minItems))) }
        if let maxItems { m.append(JSON.Member("maxItems", .int(maxItems))) }
        return .object(m)
    }

    /// An object of params: these fields, `required` the given ones, no other member.
    public static func closed(_ fields: [Field], _ extra: [JSON.Member] = []) -> JSON {
        var m: [JSON.Member] = [
            JSON.Member("type", .string("object")),
            JSON.Member("properties", .object(fields.map { JSON.Member($0.name.description, $0.schema) })),
        ]
        let required = fields.filter(\.required).map { JSON.string($0.name.description) }
        if !required.isEmpty { m.append(JSON.Member("required", .array(required))) }
        m.append(JSON.Member("additionalProperties", .bool(false)))
        return .object(m + extra)
    }

    /// An object the daemon sends: these members always (more may come).
    public static func sent(_ members: KeyValuePairs<String, JSON>, optional: KeyValuePairs<String, JSON> = [:]) -> JSON {
        .obj([
            "type": .string("object"),
            "properties": .object(members.map { JSON.Member($0.key, $0.value) } + optional.map { JSON.Member($0.key, $0.value) }),
            "required": .array(members.map { JSON.string($0.key) }),
        ])
    }

    // MARK: Params shapes

    /// A badge as `badge.set` and an item's `badge` give it: exactly one of `count`, `text`, `dot`.
    static let badgeValues: [Field] = [
        .int("count", "The count; 0 or less removes the badge."),
        Field("text", string(minLength: 1, maxBytes: Limits().maxBadgeTextBytes, pattern: "^[^\\u0000-\\u001F]*$"), "A short text."),
        Field("dot", .obj(["const": .bool(true)]), "A bare dot."),
    ]

    public static let badgeInput: JSON = .obj(["oneOf": .array(badgeValues.map { v in
        closed([Field(v.name, required: true, v.schema, v.summary)])
    })])

    static let text256 = string(maxBytes: Limits().maxTextLength)

    /// An item as `bar.configure` takes it.
    public static let itemInput = closed([
        .id("id", required: true, "Unique on the bar."),
        Field("title", text256, "The label (default: the id)."),
        .choice("kind", ItemKind.self, "tab (default), action or center."),
        .bool("enabled", "false: shown but not selectable."),
        Field("icon", text256, "Icon name."),
        Field("selected_icon", text256, "Icon while selected."),
        Field("sound", text256, "This item's sound."),
        Field("action", text256, "What an action or center item opens."),
        Field("morph", closed([Field("title", required: true, text256, "Title while selected."), Field("icon", text256, "Icon while selected.")]),
              "What the item shows while selected."),
        Field("badge", badgeInput, "Its badge."),
        Field("hidden_badge", badgeInput, "A badge kept but not shown."),
        .choice("animation", AnimationStyle.self, "This item's animation style."),
    ], [JSON.Member("not", .obj(["required": .array([.string("badge"), .string("hidden_badge")])]))])

    static let size = 0.0...100_000.0

    public static let layoutInput = closed([
        .number("width", size, "Bar width in points."),
        .number("height", size, "Bar height in points."),
        .number("safe_bottom", size, "Bottom safe area (at most height)."),
        Field("center", closed([
            .number("width", size, "Center button width."),
            .number("height", size, "Center button height."),
            .number("raise", -size.upperBound...size.upperBound, "How far it rises above the bar."),
            .choice("shape", CenterShape.self, "rect or circle."),
        ]), "The center button's box."),
        .bool("rtl", "Right to left."),
    ])

    static let soundName: JSON = anyOf(string(minLength: 1, maxBytes: 256), null)

    public static let settingsInput = closed([
        .choice("commit_on", CommitOn.self, "When a touch commits."),
        .choice("click_on", ClickOn.self, "When a touch's click plays: with the commit, or on the press (the down)."),
        .choice("center_corners", CenterCorners.self, "What a touch in the center box's corners does."),
        .choice("animation", AnimationStyle.self, "The bar's animation style."),
        .bool("action_badges", "Whether action and center items show badges."),
        .number("scroll_threshold", 0...100_000, "Points of scroll that hide the bar."),
        .int("hide_duration_ms", 0...10_000, "The show/hide animation's length."),
        .int("max_count", 1...1_000_000, "Counts above show as N+."),
        .int("max_chars", 1...1024, "Badge texts are cut to this many characters."),
        Field("sounds", .obj([
            "type": .string("object"),
            "properties": .object(BarSettings.soundTriggers.map { JSON.Member($0, soundName) } + [JSON.Member("animations", .obj([
                "type": .string("object"),
                "propertyNames": string(minLength: 1, maxBytes: 64),
                "additionalProperties": soundName,
            ]))]),
            "additionalProperties": .bool(false),
        ]), "Per-bar sounds: each trigger (and each animation kind) to a sound name, \"none\", or null for the default."),
    ])

    // MARK: What the daemon sends

    public static let badge = sent(["kind": strings(["count", "text", "dot"]), "display": .obj(["type": .string("string")])],
                                   optional: ["value": anyOf(.obj(["type": .string("integer")]), .obj(["type": .string("string")]))])
    public static let optionalBadge = anyOf(badge, null)
    static let frame = sent(["x": number(), "y": number(), "w": number(), "h": number()])
    static let nonNegative: JSON = .obj(["type": .string("integer"), "minimum": .int(0)])
    public static let seq = nonNegative
    static let str: JSON = .obj(["type": .string("string")])
    static let optionalString = anyOf(str, null)

    public static let item = sent([
        "id": itemID, "title": str, "kind": choice(ItemKind.self), "enabled": boolean, "badge": optionalBadge,
        "presentation": sent(["title": str, "icon": optionalString, "morphed": boolean]),
        "frame": anyOf(frame, null),
    ], optional: ["icon": str, "selected_icon": str, "sound": str, "action": str,
                  "morph": sent(["title": str], optional: ["icon": str]), "animation": choice(AnimationStyle.self),
                  "hidden_badge": badge])

    static let visibilityPhase = strings(["idle", "showing", "hiding"])

    public static let visibility = sent([
        "hidden": boolean, "reasons": array(choice(HideReason.self)), "phase": visibilityPhase,
        "nav_stack": array(boolean), "push_hold": boolean,
    ])

    public static let feedback = sent(["profile": choice(FeedbackProfile.self), "volume": number(0...1)])

    public static let layout = sent([
        "width": number(), "height": number(), "safe_bottom": number(),
        "center": sent(["width": number(), "height": number(), "raise": number(), "shape": choice(CenterShape.self)]),
        "rtl": boolean,
    ])

    public static let settings = sent([
        "commit_on": choice(CommitOn.self), "click_on": choice(ClickOn.self), "center_corners": choice(CenterCorners.self), "animation": choice(AnimationStyle.self),
        "action_badges": boolean, "scroll_threshold": number(), "hide_duration_ms": nonNegative,
        "max_count": nonNegative, "max_chars": nonNegative, "sounds": anyObject,
    ])

    public static let activeAnimation = sent(["animation": nonNegative, "kind": str, "tab": optionalID, "duration_ms": nonNegative])

    /// The whole state (`state.get`, `subscribe`, `bar.configure`, `bar.configured`, `state.resync`).
    public static let state = sent([
        "items": array(item), "selected": optionalID, "previous": optionalID, "highlighted": optionalID,
        "active_action": optionalID, "visibility": visibility, "layout": layout, "feedback": feedback,
        "settings": settings, "animations": array(anyObject),
    ])
}
