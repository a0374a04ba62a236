import TabBarCore

/// Text for people: states, results and events, one concept per function.
/// Every function is pure (JSON in, lines out) so that it is tested without a daemon.
enum Format {
    // MARK: Small pieces

    /// A string member, `null` as "none", a missing one as "?".
    static func word(_ value: JSON?) -> String {
        guard let value else { return "?" }
        switch value {
        case .string(let s): return TextWidth.printable(s)
        case .null: return "none"
        case .number(let n): return n
        default: return value.text
        }
    }

    /// A number member as its JSON text ("?" when missing).
    static func number(_ value: JSON?) -> String {
        if case .number(let n)? = value { return n }
        return value.map(word) ?? "?"
    }

    /// What a badge shows: its display, "•" for a dot, "none" for no badge.
    static func badge(_ badge: JSON?) -> String {
        guard let badge, !badge.isNull else { return "none" }
        if badge["kind"]?.stringValue == "dot" { return "•" }
        if let display = badge["display"]?.stringValue { return display.isEmpty ? "•" : TextWidth.printable(display) }
        return word(badge["value"])
    }

    /// `x` with at most `digits` decimals, trailing zeros dropped.
    static func fixed(_ x: Double, digits: Int = 1) -> String {
        guard x.isFinite else { return "?" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int64((abs(x) * scale).rounded())
        let whole = scaled / Int64(scale)
        var frac = String(scaled % Int64(scale))
        while frac.count < digits { frac = "0" + frac }
        while frac.last == "0" { frac.removeLast() }
        let sign = x < 0 && scaled != 0 ? "-" : ""
        return sign + String(whole) + (frac.isEmpty ? "" : "." + frac)
    }

    /// Rows aligned in columns (two spaces apart, the last column not padded).
    static func table(_ rows: [[String]], indent: String = "") -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in rows { for (k, cell) in row.enumerated() { widths[k] = max(widths[k], TextWidth.columns(cell)) } }
        return rows.map { row in
            var line = indent
            for (k, cell) in row.enumerated() {
                line += k == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[k] - TextWidth.columns(cell)) + "  "
            }
            while line.last == " " { line.removeLast() }
            return line
        }
    }

    // MARK: State

    /// The bar as `tabbarctl state` prints it, from a `{"seq","state"}` result.
    static func state(_ result: JSON) -> [String] {
        state(seq: result["seq"], result["state"] ?? .null)
    }

    static func state(seq: JSON?, _ s: JSON) -> [String] {
        var lines: [String] = []
        var head = "seq \(number(seq))"
        if let selected = s["selected"], !selected.isNull {
            head += " · selected \(word(selected))"
            if let previous = s["previous"], !previous.isNull { head += " (previous \(word(previous)))" }
        } else {
            head += " · nothing selected"
        }
        lines.append(head)
        guard case .array(let items)? = s["items"], !items.isEmpty else {
            lines.append("  (no items; configure the bar with `tabbarctl configure FILE`)")
            lines.append(contentsOf: footer(s))
            return lines
        }
        var rows: [[String]] = [["#", "id", "title", "kind", "badge", "marks"]]
        for (k, item) in items.enumerated() {
            let badge = item["badge"].map { $0.isNull ? "-" : Format.badge($0) } ?? "-"
            rows.append([String(k), word(item["id"]), word(item["title"]), word(item["kind"]), badge,
                         marks(item, in: s).joined(separator: " ")])
        }
        lines.append(contentsOf: table(rows, indent: "  "))
        lines.append(contentsOf: footer(s))
        return lines
    }

    /// The marks of an item: selected, highlighted, active-action, disabled, morphed.
    static func marks(_ item: JSON, in s: JSON) -> [String] {
        let id = item["id"]
        var marks: [String] = []
        if let id, s["selected"] == id { marks.append("selected") }
        if let id, s["highlighted"] == id { marks.append("highlighted") }
        if let id, s["active_action"] == id { marks.append("active-action") }
        if item["enabled"]?.boolValue == false { marks.append("disabled") }
        if item["presentation"]?["morphed"]?.boolValue == true {
            marks.append("morphed→\"\(word(item["presentation"]?["title"]))\"")
        }
        return marks
    }

    static func footer(_ s: JSON) -> [String] {
        var lines: [String] = []
        if let v = s["visibility"] { lines.append("visibility: " + visibility(v)) }
        if let f = s["feedback"] { lines.append("feedback: " + feedback(f)) }
        return lines
    }

    /// `hidden (push, scroll), phase hiding` or `visible, phase idle`.
    static func visibility(_ v: JSON) -> String {
        let hidden = v["hidden"]?.boolValue == true
        var text = hidden ? "hidden" : "visible"
        if case .array(let reasons)? = v["reasons"], !reasons.isEmpty {
            text += " (" + reasons.map(word).joined(separator: ", ") + ")"
        }
        if let phase = v["phase"] { text += ", phase \(word(phase))" }
        return text
    }

    /// `full, volume 0.8`.
    static func feedback(_ f: JSON) -> String {
        "\(word(f["profile"])), volume \(number(f["volume"]))"
    }

    /// One line for a snapshot: `4 items (home chat compose me), selected home, visible`.
    static func summary(_ s: JSON) -> String {
        var parts: [String] = []
        if case .array(let items)? = s["items"] {
            let ids = items.map { word($0["id"]) }.joined(separator: " ")
            parts.append("\(items.count) item\(items.count == 1 ? "" : "s")" + (items.isEmpty ? "" : " (\(ids))"))
        }
        if let selected = s["selected"] { parts.append("selected \(word(selected))") }
        if let v = s["visibility"] { parts.append(visibility(v)) }
        if let f = s["feedback"] { parts.append("feedback " + feedback(f)) }
        return parts.joined(separator: ", ")
    }

    // MARK: Results

    /// `selected chat (previous home), seq 7` or `reselected home, seq 8`.
    static func select(_ r: JSON) -> String {
        if r["reselected"]?.boolValue == true {
            return "reselected \(word(r["selected"])), seq \(number(r["seq"]))"
        }
        return "selected \(word(r["selected"])) (previous \(word(r["previous"]))), seq \(number(r["seq"]))"
    }

    /// `badge chat → 99+, seq 13` or `badge chat cleared, seq 14`.
    static func badgeResult(tab: String, _ r: JSON, cleared: Bool) -> String {
        if cleared { return "badge \(tab) cleared, seq \(number(r["seq"]))" }
        if r["ignored"]?.boolValue == true {
            return "badge \(tab) ignored (action items carry badges only with settings.action_badges), seq \(number(r["seq"]))"
        }
        if let kept = r["hidden_badge"], !kept.isNull {
            return "badge \(tab) hidden (keeps \(badge(kept))), seq \(number(r["seq"]))"
        }
        return "badge \(tab) → \(badge(r["badge"])), seq \(number(r["seq"]))"
    }

    /// `bar hidden (push), phase hiding, seq 15`.
    static func visibilityResult(_ r: JSON) -> String {
        "bar " + visibility(r["visibility"] ?? .null) + ", seq \(number(r["seq"]))"
    }

    /// `touch down at 120,10 → chat (consumed), seq 14`.
    static func touch(phase: String, x: Double, y: Double, _ r: JSON) -> String {
        let target = r["target"].map { $0.isNull ? "no item" : word($0) } ?? "no item"
        let consumed = r["consumed"]?.boolValue == true ? " (consumed)" : ""
        var what = ""
        if let commit = r["commit"]?.stringValue { what += ", \(commit)" }
        if r["ignored"]?.boolValue == true { what += ", ignored" }
        return "touch \(phase) at \(fixed(x, digits: 2)),\(fixed(y, digits: 2)) → \(target)\(consumed)\(what), seq \(number(r["seq"]))"
    }

    /// The `sound.list` table: name, frames, rate, channels, duration ms, source.
    static func sounds(_ r: JSON) -> [String] {
        guard case .array(let sounds)? = r["sounds"] else { return ["(the daemon listed no sounds)"] }
        if sounds.isEmpty { return ["(no sounds are loaded)"] }
        var rows: [[String]] = [["name", "frames", "rate", "channels", "ms", "source"]]
        for s in sounds {
            var ms = "?"
            if let d = s["duration_ms"]?.doubleValue {
                ms = fixed(d)
            } else if let frames = s["frames"]?.doubleValue, let rate = s["rate"]?.doubleValue, rate > 0 {
                ms = fixed(frames * 1000 / rate)
            }
            rows.append([word(s["name"]), number(s["frames"]), number(s["rate"]), number(s["channels"]), ms, word(s["source"])])
        }
        return table(rows)
    }

    /// Any result as `name: value` lines, nested objects with dotted names.
    static func flat(_ value: JSON, prefix: String = "") -> [String] {
        guard case .object(let members) = value else { return [prefix.isEmpty ? value.text : "\(prefix): \(value.text)"] }
        if members.isEmpty && !prefix.isEmpty { return ["\(prefix): {}"] }
        var lines: [String] = []
        for m in members {
            let name = prefix.isEmpty ? m.key : prefix + "." + m.key
            switch m.value {
            case .object: lines.append(contentsOf: flat(m.value, prefix: name))
            case .string(let s): lines.append("\(name): \(TextWidth.printable(s))")
            default: lines.append("\(name): \(m.value.text)")
            }
        }
        return lines
    }

    // MARK: Events

    /// One line for an event notification (or anything else the daemon sent).
    static func event(_ message: JSON) -> String {
        guard let method = message["method"]?.stringValue else { return message.text }
        let p = message["params"] ?? .obj([:])
        let seq = p["seq"].map { "seq \(number($0)) " } ?? ""
        let head = seq + method
        switch method {
        case "tab.selected":
            return "\(head) \(word(p["tab"])) (previous \(word(p["previous"])), \(word(p["source"])))"
        case "tab.reselected":
            return "\(head) \(word(p["tab"])) (\(word(p["source"])))"
        case "tab.highlighted":
            return "\(head) \(word(p["tab"])) \(word(p["phase"]))"
        case "action.triggered":
            let action = p["action"].flatMap { $0.isNull ? nil : " (action \(word($0)))" } ?? ""
            return "\(head) \(word(p["tab"]))\(action)"
        case "action.finished":
            return "\(head) \(word(p["tab"]))"
        case "badge.changed":
            return "\(head) \(word(p["tab"])) → \(badge(p["badge"]))"
        case "bar.configured", "state.resync":
            return "\(head) " + summary(p["state"] ?? .null)
        case "bar.visibility":
            var text = "\(head) " + visibility(p)
            if let d = p["duration_ms"] { text += ", \(number(d)) ms" }
            return text
        case "animation.cue":
            let target = p["tab"].map { $0.isNull ? "bar" : word($0) } ?? "bar"
            var text = "\(head) \(target) \(word(p["trigger"])): \(word(p["kind"]))"
            if let d = p["descriptor"], d != .obj([:]), !d.isNull { text += " " + d.text }
            return text
        case "animation.began":
            let tab = p["tab"].flatMap { $0.isNull ? nil : " on \(word($0))" } ?? ""
            return "\(head) \(word(p["animation"])) \(word(p["kind"]))\(tab), \(number(p["duration_ms"])) ms"
        case "animation.ended":
            return "\(head) \(word(p["animation"])) (\(word(p["reason"])))"
        case "sound.played":
            return "\(head) \(word(p["name"])) (voice \(word(p["voice"])))"
        case "server.stopping":
            return head
        default:
            var rest = p
            if case .object(let members) = p { rest = .object(members.filter { $0.key != "seq" }) }
            return rest == .obj([:]) ? head : "\(head) \(rest.text)"
        }
    }
}
