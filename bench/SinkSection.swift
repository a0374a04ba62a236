@preconcurrency import Glibc
import TabBarCore

/// The click at the sink: the JSON that bench/sink/sinkbench.py wrote (`make bench` runs it first, through a
/// private headless PipeWire), as a section of results.json and rows of the table. Figures are ms from the
/// request (just before send(), or just before a client process is spawned) to the first frame consumed by
/// the null sink, read by pwmonitor on the sink's monitor with graph-cycle times.
func sinkSection(path: String) -> (member: JSON.Member, rows: [Row])? {
    let text = readText(path)
    guard !text.isEmpty, let doc = try? JSON.parse(text), case .object(let configs)? = doc["configs"] else {
        progress("no click-at-the-sink figures in \(path)")
        return nil
    }
    func ms(_ d: JSON?, _ key: String) -> String {
        guard let v = d?[key]?.doubleValue else { return "-" }
        return String(format1: v, digits: 1)
    }
    func triple(_ d: JSON?) -> String {
        guard let d, (d["count"]?.intValue ?? 0) > 0 else {
            return "not heard (\(d?["missed"]?.intValue ?? 0) missed)"
        }
        let missed = d["missed"]?.intValue ?? 0
        return "\(ms(d, "p50_ms")) / \(ms(d, "p90_ms")) / \(ms(d, "p99_ms")) ms (n=\(d["count"]?.intValue ?? 0)"
            + (missed > 0 ? ", \(missed) missed" : "") + ")"
    }
    var rows: [Row] = []
    for config in configs {
        let c = config.value
        let tag = config.key == "default" ? "default quantum" : config.key.replacingOccurrences(of: "_", with: " ")
        let cal = c["calibration"]
        rows.append(Row(metric: "at the sink, \(tag): calibration residual", tabbard: "",
                        reference: "\(cal?["residual_ns_min"]?.intValue ?? -1)…\(cal?["residual_ns_max"]?.intValue ?? -1) ns (\(cal?["impulses"]?.intValue ?? 0) impulses, native stream)",
                        ratio: "", target: "0", verdict: ""))
        let aplay = c["aplay"]?["p50_ms"]?.doubleValue ?? 0, canberra = c["canberra"]?["p50_ms"]?.doubleValue ?? 0
        for (key, label, p50Target, p99Target) in [("tabbard_steady", "tabbard steady", 3.0, 8.0),
                                                   ("tabbard_idle", "tabbard after idle", 2.0, 5.0),
                                                   ("tabbard_steady_pulse_plugin", "tabbard steady, PulseAudio ALSA plugin", 0, 0)] {
            guard let d = c[key] else { continue }
            let intact = "\(d["intact"]?.intValue ?? 0)/\(d["clicks"]?.intValue ?? 0) intact"
            let p50 = d["p50_ms"]?.doubleValue ?? .infinity, p99 = d["p99_ms"]?.doubleValue ?? .infinity
            var target = "", ok = true
            if config.key == "default" && p50Target > 0 {
                target = "p50 ≤ \(Int(p50Target)), p99 ≤ \(Int(p99Target)) ms"
                ok = p50 <= p50Target && p99 <= p99Target
            } else if config.key != "default" && key != "tabbard_steady_pulse_plugin" {
                target = "bit-exact, p99 ≤ 24.3 ms"
                ok = d["intact"]?.intValue == d["clicks"]?.intValue && p99 <= 1024.0 / 48 + 3
            }
            let margin = aplay > 0 && canberra > 0 ? "× " + String(format1: aplay / p50, digits: 1) + " aplay, "
                + String(format1: canberra / p50, digits: 1) + " canberra" : ""
            rows.append(Row(metric: "at the sink, \(tag): \(label) p50/p90/p99", tabbard: triple(d) + ", " + intact,
                            reference: "daemon said \(ms(d["daemon"], "latency_p50_us")) µs", ratio: margin, target: target,
                            verdict: target.isEmpty ? "" : verdict(ok)))
        }
        for (key, label) in [("aplay", "aplay -D rig click.wav"), ("paplay", "paplay click.wav"),
                             ("pactl_play_sample", "pactl play-sample (cached)"), ("canberra", "libcanberra (cached)")] {
            guard let d = c[key] else { continue }
            rows.append(Row(metric: "at the sink, \(tag): \(label) p50/p90/p99", tabbard: "", reference: triple(d),
                            ratio: "", target: "", verdict: ""))
        }
    }
    return (JSON.Member("click_at_sink", doc), rows)
}

extension String {
    func replacingOccurrences(of a: String, with b: String) -> String {
        split(separator: Character(a), omittingEmptySubsequences: false).joined(separator: b)
    }
}
