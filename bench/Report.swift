@preconcurrency import Glibc
import TabBarCore

/// Percentiles of a set of latency samples, in microseconds.
struct Dist {
    var count = 0
    var p50 = 0.0, p90 = 0.0, p99 = 0.0, max = 0.0, mean = 0.0

    init(_ ns: [UInt64]) {
        guard !ns.isEmpty else { return }
        let s = ns.sorted()
        count = s.count
        func q(_ x: Double) -> Double { Double(s[Swift.min(s.count - 1, Int((Double(s.count - 1) * x).rounded()))]) / 1000 }
        p50 = q(0.5); p90 = q(0.9); p99 = q(0.99)
        max = Double(s.last!) / 1000
        mean = Double(s.reduce(0, +)) / Double(s.count) / 1000
    }

    var json: JSON {
        .obj(["count": .int(count), "p50_us": r(p50), "p90_us": r(p90), "p99_us": r(p99), "max_us": r(max), "mean_us": r(mean)])
    }
}

/// Rounds to 0.1 for the JSON.
func r(_ x: Double) -> JSON { .double((x * 10).rounded() / 10) }

func fmtUs(_ us: Double) -> String {
    if us >= 10_000 { return String(format1: us / 1000, digits: 1) + " ms" }
    if us >= 1000 { return String(format1: us / 1000, digits: 2) + " ms" }
    return String(format1: us, digits: us < 100 ? 1 : 0) + " µs"
}

func fmtRate(_ perSecond: Double) -> String {
    if perSecond >= 1e6 { return String(format1: perSecond / 1e6, digits: 2) + " M/s" }
    return String(format1: perSecond / 1e3, digits: 0) + " k/s"
}

extension String {
    /// A fixed-point decimal (FoundationEssentials has no String(format:)).
    init(format1 x: Double, digits: Int) {
        var p = 1.0
        for _ in 0..<digits { p *= 10 }
        let v = (x * p).rounded() / p
        if digits == 0 {
            self = String(Int64(v))
            return
        }
        let neg = v < 0
        let a = abs(v)
        let whole = Int64(a)
        var frac = String(Int64(((a - Double(whole)) * p).rounded()))
        while frac.count < digits { frac = "0" + frac }
        self = (neg ? "-" : "") + String(whole) + "." + frac
    }

    func padded(_ n: Int) -> String {
        let c = self.count
        return c >= n ? self : self + String(repeating: " ", count: n - c)
    }

    func leftPadded(_ n: Int) -> String {
        let c = self.count
        return c >= n ? self : String(repeating: " ", count: n - c) + self
    }
}

/// One row of the printed table.
struct Row {
    var metric: String
    var tabbard: String
    var reference: String
    var ratio: String
    var target: String
    var verdict: String
}

func printTable(_ rows: [Row], to out: UnsafeMutablePointer<FILE>) {
    let headers = Row(metric: "metric", tabbard: "tabbard", reference: "reference (same run)", ratio: "ratio",
                      target: "target", verdict: "")
    let all = [headers] + rows
    let w0 = all.map { $0.metric.count }.max()! + 2
    let w1 = all.map { $0.tabbard.count }.max()! + 2
    let w2 = all.map { $0.reference.count }.max()! + 2
    let w3 = all.map { $0.ratio.count }.max()! + 2
    let w4 = all.map { $0.target.count }.max()! + 2
    for (k, row) in all.enumerated() {
        let line = row.metric.padded(w0) + row.tabbard.padded(w1) + row.reference.padded(w2) + row.ratio.padded(w3)
            + row.target.padded(w4) + row.verdict
        fputs(line + "\n", out)
        if k == 0 { fputs(String(repeating: "-", count: w0 + w1 + w2 + w3 + w4 + 8) + "\n", out) }
    }
}

/// Pretty JSON (two-space indent), so results.json diffs well.
func pretty(_ j: JSON, indent: Int = 0) -> String {
    let pad = String(repeating: "  ", count: indent + 1)
    let end = String(repeating: "  ", count: indent)
    switch j {
    case .object(let members):
        if members.isEmpty { return "{}" }
        let inner = members.map { m -> String in
            var key: [UInt8] = []
            JSON.writeString(m.key, into: &key)
            return pad + String(decoding: key, as: UTF8.self) + ": " + pretty(m.value, indent: indent + 1)
        }
        return "{\n" + inner.joined(separator: ",\n") + "\n" + end + "}"
    case .array(let values):
        if values.isEmpty { return "[]" }
        if values.allSatisfy({ if case .object = $0 { return false }; if case .array = $0 { return false }; return true }) {
            return "[" + values.map { $0.text }.joined(separator: ", ") + "]"
        }
        return "[\n" + values.map { pad + pretty($0, indent: indent + 1) }.joined(separator: ",\n") + "\n" + end + "]"
    default:
        return j.text
    }
}
