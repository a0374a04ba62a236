// tabbard-bench: the figures of issue 7, measured from outside a release tabbard,
// each beside a same-run reference (a bare C epoll server, `aplay` per event,
// feedbackd on a private D-Bus session bus).
// Figures, not pass/fail: the exit status is 0 whenever the measurements ran.
@preconcurrency import Glibc
import TabBarCore
import TabBarClient

let usage = """
Usage: tabbard-bench --daemon PATH [options]

  --daemon PATH       the tabbard binary (a release build)
  --sounds DIR        sounds directory passed to tabbard (default: Sounds)
  --floor PATH        the reference server (default: .build/bench/floor)
  --shim PATH         the LD_PRELOAD click shim (default: .build/bench/libclickshim.so)
  --fbdclient PATH    the feedbackd D-Bus client (default: .build/bench/fbdclient)
  --fbd-event NAME    the feedbackd event to trigger (default: message-new-instant)
  --quick             fewer samples and shorter windows (~1 minute)
  --json              print the JSON result to stdout instead of the table
  --out PATH          where to write the JSON (default: .bench/results.json)
  --server-cpu N      CPU the servers (tabbard, floor, aplay, feedbackd) are pinned to (default 0)
  --client-cpu N      CPU the benchmark's clients run on for "cross-cpu" (default 1)
  --keep              keep the temporary directory (logs, state)
  --sink-json PATH    the click at the sink, as bench/sink/sinkbench.py wrote it (make bench runs it first)

  --load SOCKET [--clients N] [--seconds S] [--subscribers N [--spin]] [--round-trips N] [--request select|touch] [--typed | --typed-global]
                      only drive pipelined tab.select load (or fan-out rounds, or N
                      sequential round trips) at a running server and print the figure
                      (for perf / callgrind / A-B runs); --typed: through the typed client
                      (TabBar, docs/CLIENT.md) instead of raw lines, one client, its tasks
                      on the connection's executor (bar.executor); --typed-global: the
                      same with no executor preference (replies resume on the global pool)
"""

struct Options {
    var daemon = ""
    var sounds = "Sounds"
    var floor = ".build/bench/floor"
    var shim = ".build/bench/libclickshim.so"
    var fbdclient = ".build/bench/fbdclient"
    var fbdEvent = "message-new-instant"
    var quick = false
    var json = false
    var out = ".bench/results.json"
    var serverCPU = 0
    var clientCPU = 1
    var keep = false
    var sinkJSON: String?
    var load: String?
    var loadClients = 1
    var loadSeconds = 5.0
    var loadSubscribers = 0
    var spin = false
    var loadRoundTrips = 0
    var typed = false
    /// The typed client's tasks prefer the connection's executor (`--typed`), or none (`--typed-global`).
    var onConnectionExecutor = true
}

func parseOptions() -> Options {
    var o = Options()
    var args = CommandLine.arguments.dropFirst().makeIterator()
    func value(_ flag: String) -> String {
        guard let v = args.next() else { fputs("tabbard-bench: \(flag) needs a value\n", stderr); exit(2) }
        return v
    }
    while let a = args.next() {
        switch a {
        case "--daemon": o.daemon = value(a)
        case "--sounds": o.sounds = value(a)
        case "--floor": o.floor = value(a)
        case "--shim": o.shim = value(a)
        case "--fbdclient": o.fbdclient = value(a)
        case "--fbd-event": o.fbdEvent = value(a)
        case "--quick": o.quick = true
        case "--json": o.json = true
        case "--out": o.out = value(a)
        case "--server-cpu": o.serverCPU = Int(value(a)) ?? 0
        case "--client-cpu": o.clientCPU = Int(value(a)) ?? 1
        case "--keep": o.keep = true
        case "--sink-json": o.sinkJSON = value(a)
        case "--load": o.load = value(a)
        case "--clients": o.loadClients = Int(value(a)) ?? 1
        case "--seconds": o.loadSeconds = Double(value(a)) ?? 5
        case "--subscribers": o.loadSubscribers = Int(value(a)) ?? 0
        case "--spin": o.spin = true
        case "--round-trips": o.loadRoundTrips = Int(value(a)) ?? 0
        case "--typed": o.typed = true
        case "--typed-global":
            o.typed = true
            o.onConnectionExecutor = false
        case "--request":
            guard let kind = Requests.Kind(rawValue: value(a)) else { fputs("tabbard-bench: --request takes select or touch\n", stderr); exit(2) }
            Requests.loadKind = kind
        case "--core": coreLoop(Int(value(a)) ?? 100_000); exit(0)
        case "--help", "-h": print(usage); exit(0)
        default: fputs("tabbard-bench: unknown option \(a)\n\(usage)\n", stderr); exit(2)
        }
    }
    if let socket = o.load {
        do {
            if o.typed {
                let (n, seconds, clients, kind, own) = (o.loadRoundTrips, o.loadSeconds, o.loadClients, Requests.loadKind, o.onConnectionExecutor)
                guard clients == 1 else { throw BenchError("--typed drives one client") }
                try runBlocking {
                    if n > 0 {
                        let d = Dist(try await typedRoundTrips(socket: socket, n: n, warmup: n / 10, kind: kind, onConnectionExecutor: own))
                        print("typed round trip: p50 \(fmtUs(d.p50)) p90 \(fmtUs(d.p90)) p99 \(fmtUs(d.p99)) max \(fmtUs(d.max))")
                    } else {
                        let rate = try await typedPipelined(socket: socket, window: 64, seconds: seconds, warmupSeconds: 0.2, kind: kind, onConnectionExecutor: own)
                        print("typed: \(Int(rate)) requests/s")
                    }
                }
                exit(0)
            }
            if o.loadRoundTrips > 0 {
                let d = Dist(try roundTrips(socket: socket, n: o.loadRoundTrips, warmup: o.loadRoundTrips / 10, kind: Requests.loadKind))
                print("round trip: p50 \(fmtUs(d.p50)) p90 \(fmtUs(d.p90)) p99 \(fmtUs(d.p99)) max \(fmtUs(d.max))")
                exit(0)
            }
            if o.loadSubscribers > 0 {
                let d = Dist(try fanout(socket: socket, subscribers: o.loadSubscribers, iterations: Int(o.loadSeconds * 100), warmup: 10, spin: o.spin))
                print("fan-out to \(o.loadSubscribers): p50 \(fmtUs(d.p50)) p99 \(fmtUs(d.p99)) max \(fmtUs(d.max))")
                exit(0)
            }
            let (rate, total) = try pipelined(socket: socket, clients: o.loadClients, window: 64, seconds: o.loadSeconds, warmupSeconds: 0.2, kind: Requests.loadKind)
            print("\(Int(rate)) requests/s (\(total) sent)")
            exit(0)
        } catch {
            fputs("tabbard-bench: \(error)\n", stderr)
            exit(1)
        }
    }
    if o.daemon.isEmpty { fputs(usage + "\n", stderr); exit(2) }
    return o
}

func fmtPct(_ j: JSON?) -> String { String(format1: j?.doubleValue ?? 0, digits: 1) + "%" }

func progress(_ s: String) { fputs("bench: \(s)\n", stderr) }

func absolute(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    var buf = [CChar](repeating: 0, count: 4096)
    guard getcwd(&buf, buf.count) != nil else { return path }
    return String(cString: buf) + "/" + path
}

func writeFile(_ path: String, _ text: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { progress("cannot write \(path): \(errnoString())"); return }
    _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

extension String {
    func replacingNewlines() -> String { split(separator: "\n").joined(separator: " ") }
}

func commandOutput(_ cmd: String) -> String {
    guard let f = popen(cmd, "r") else { return "" }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n <= 0 { break }
        out.append(contentsOf: buf[0..<n])
    }
    pclose(f)
    var s = String(decoding: out, as: UTF8.self)
    while s.hasSuffix("\n") { s.removeLast() }
    return s
}

let opt = parseOptions()
let quick = opt.quick
let daemonPath = absolute(opt.daemon)
let floorPath = absolute(opt.floor)
let shimPath = absolute(opt.shim)
let fbdClientPath = absolute(opt.fbdclient)
let soundsDir = absolute(opt.sounds)
for (what, p) in [("tabbard", daemonPath), ("floor server", floorPath), ("click shim", shimPath)] where access(p, R_OK) != 0 {
    fputs("tabbard-bench: the \(what) is missing at \(p) (run `make bench`, which builds it)\n", stderr)
    exit(2)
}
let cpus = onlineCPUs()
let serverCPU = min(opt.serverCPU, cpus - 1)
let clientCPU = cpus > 1 ? min(opt.clientCPU, cpus - 1) : serverCPU
/// Client placements measured: same CPU as the server, and (with 2+ CPUs) the other one.
let pinnings: [(name: String, cpu: Int)] = clientCPU != serverCPU
    ? [("same-cpu", serverCPU), ("cross-cpu", clientCPU)] : [("same-cpu", serverCPU)]

var limit = rlimit()
getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
limit.rlim_cur = limit.rlim_max
setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
signal(SIGPIPE, SIG_IGN)

var template = Array("/tmp/tabbard-bench.XXXXXX".utf8CString)
guard mkdtemp(&template) != nil else { fputs("mkdtemp failed\n", stderr); exit(1) }
let tmp = String(cString: template)
progress("working in \(tmp); servers pinned to CPU \(serverCPU), clients on CPU \(pinnings.map { "\($0.cpu) (\($0.name))" }.joined(separator: " / "))")

let benchStart = nowNs()
pinThread(cpu: clientCPU)

// Configs: enough clients for 1,000 subscribers; the ALSA daemon stops its stream
// 100 ms after the last sound so that "click after idle" can be sampled quickly.
writeFile("\(tmp)/null.json", #"{"max_clients": 4096}"#)
writeFile("\(tmp)/alsa.json", #"{"max_clients": 64, "idle_stop_ms": 100}"#)
// The same null-sink daemon with every click mapped to none: `touch` without its click, to
// tell what the tap's state path costs from what its click costs (the floor plays none).
writeFile("\(tmp)/silent.json", #"{"max_clients": 4096, "sound_map": {"select": "none", "reselect": "none", "action": "none", "center": "none", "badge": "none", "visibility": "none"}}"#)

func daemonArgv(socket: String, state: String, audio: [String], config: String) -> [String] {
    [daemonPath, "--socket", socket, "--state", state, "--sounds", soundsDir, "--config", config, "--log-level", "warning"] + audio
}

/// Starts a pinned server and waits until its socket answers.
func startServer(_ argv: [String], socket: String, env: [String: String] = [:], log: String) throws -> Child {
    unlink(socket)
    pinThread(cpu: serverCPU)
    let child = try spawn(argv, env: env, unset: ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC"], logPath: log)
    pinThread(cpu: clientCPU)
    let deadline = nowNs() + 10_000_000_000
    while nowNs() < deadline {
        if child.poll() { throw BenchError("\(argv[0]) exited at start (see \(log))") }
        if let fd = connectUnix(socket) {
            let ok = LineReader(fd: fd).readLine() != nil
            close(fd)
            if ok { return child }
        }
        sleepMs(0.2)
    }
    child.stop()
    throw BenchError("\(argv[0]) did not answer on \(socket) (see \(log))")
}

func statsGet(_ socket: String) throws -> JSON {
    try runBlocking {
        let bar = try await TabBar.connect(path: socket)
        defer { bar.close() }
        return try await bar.call("stats.get")
    }
}

var children: [Child] = []
@MainActor func cleanup() {
    for c in children { c.stop() }
    if !opt.keep { _ = commandOutput("rm -rf '\(tmp)'") }
}

var result: [JSON.Member] = []
var rows: [Row] = []

func ratio(_ a: Double, _ b: Double) -> String { b > 0 ? String(format1: a / b, digits: 2) + "×" : "-" }
func verdict(_ ok: Bool) -> String { ok ? "met" : "NOT MET" }

do {
    // MARK: machine
    let kernel = commandOutput("uname -sr")
    let model = commandOutput("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'")
    let memory = commandOutput("grep MemTotal /proc/meminfo | awk '{printf \"%.1f GB\", $2/1048576}'")
    result.append(JSON.Member("machine", .obj([
        "cpu": .string(model), "cpus": .int(cpus), "kernel": .string(kernel), "memory": .string(memory),
        "virtualization": .string(commandOutput("systemd-detect-virt 2>/dev/null || echo unknown")),
    ])))
    result.append(JSON.Member("pinning", .obj([
        "server_cpu": .int(serverCPU), "client_cpus": .obj(KeyValuePairs(dictionaryLiteral: ("same-cpu", .int(serverCPU)), ("cross-cpu", .int(clientCPU)))),
        "how": .string("sched_setaffinity on the bench thread before posix_spawn (what `taskset -c N` does): every server thread (tabbard's state loop and audio thread, floor, aplay, dbus-daemon and feedbackd) is on server_cpu; the bench's clients run on the client CPU of the placement"),
    ])))
    result.append(JSON.Member("quick", .bool(quick)))
    result.append(JSON.Member("command", .string(CommandLine.arguments.joined(separator: " "))))
    result.append(JSON.Member("tabbard_version", .string(commandOutput("'\(daemonPath)' --version 2>&1"))))
    result.append(JSON.Member("git_commit", .string(commandOutput("git rev-parse --short HEAD 2>/dev/null; git diff --quiet 2>/dev/null || echo '(+ uncommitted changes)'").replacingNewlines())))

    // Other work on the machine (builds, tests) skews every figure: sample it before
    // the run and during the idle window, when our own processes are asleep.
    let busy0 = machineTicks()
    sleepMs(1000)
    let backgroundBefore = busyPercent(busy0, machineTicks())
    if backgroundBefore > 5 { progress("warning: the machine is \(Int(backgroundBefore))% busy before the run; figures will be noisy") }

    // MARK: start-up
    let startRuns = quick ? 3 : 10
    progress("start-up: \(startRuns) starts each of tabbard and the floor")
    var tabStart: [StartupSample] = []
    var floorStart: [StartupSample] = []
    for _ in 0..<startRuns {
        tabStart.append(try startupOnce(argv: daemonArgv(socket: "\(tmp)/start.sock", state: "\(tmp)/state-start/state.json",
                                                          audio: ["--audio", "null"], config: "\(tmp)/null.json"),
                                        socket: "\(tmp)/start.sock", notifyPath: "\(tmp)/notify.sock",
                                        logPath: "\(tmp)/start.log", serverCPU: serverCPU, clientCPU: clientCPU))
        floorStart.append(try startupOnce(argv: [floorPath, "\(tmp)/fstart.sock"], socket: "\(tmp)/fstart.sock", notifyPath: nil,
                                          logPath: "\(tmp)/fstart.log", serverCPU: serverCPU, clientCPU: clientCPU))
    }
    let readyDist = Dist(tabStart.compactMap { $0.readyNs })
    let answerDist = Dist(tabStart.map { $0.socketNs })
    let floorAnswer = Dist(floorStart.map { $0.socketNs })

    // MARK: servers for the state path
    let floor = try startServer([floorPath, "\(tmp)/floor.sock"], socket: "\(tmp)/floor.sock", log: "\(tmp)/floor.log")
    children.append(floor)
    // The floor that also journals each tab.select (one write per loop turn, before the
    // replies): the reference for throughput with durable state. Its file sits next to
    // tabbard's, on the same file system.
    _ = mkdir("\(tmp)/state-floor", 0o700)
    let floorJournal = try startServer([floorPath, "--journal", "\(tmp)/state-floor/journal", "\(tmp)/floorj.sock"],
                                       socket: "\(tmp)/floorj.sock", log: "\(tmp)/floorj.log")
    children.append(floorJournal)
    let daemon = try startServer(daemonArgv(socket: "\(tmp)/null.sock", state: "\(tmp)/state-null/state.json",
                                            audio: ["--audio", "null"], config: "\(tmp)/null.json"),
                                 socket: "\(tmp)/null.sock", log: "\(tmp)/null.log")
    children.append(daemon)
    let silent = try startServer(daemonArgv(socket: "\(tmp)/silent.sock", state: "\(tmp)/state-silent/state.json",
                                            audio: ["--audio", "null"], config: "\(tmp)/silent.json"),
                                 socket: "\(tmp)/silent.sock", log: "\(tmp)/silent.log")
    children.append(silent)
    let targets: [(name: String, socket: String)] = [("floor", "\(tmp)/floor.sock"), ("tabbard", "\(tmp)/null.sock")]
    /// The floor that journals, beside `tab.select`'s round trips and rates.
    let floorJournalTarget = (name: "floor+journal", socket: "\(tmp)/floorj.sock")
    /// `touch` is measured on the floor, on tabbard, and on tabbard without its click.
    let touchTargets = targets + [(name: "tabbard, no click", socket: "\(tmp)/silent.sock")]
    sleepMs(50)
    let rssStart = rssKB(daemon.pid)
    let floorRSS = rssKB(floor.pid)
    result.append(JSON.Member("pinning_check", .obj(["tabbard": .string(cpusAllowed(daemon.pid)), "floor": .string(cpusAllowed(floor.pid))])))

    // MARK: round trips
    // Every measurement alternates floor and tabbard in rounds (order flipped each
    // round) and pools the rounds, so that this machine's noisy spells hit both alike.
    let rounds = quick ? 2 : 5
    /// `servers` in round `r`'s order: as given, then reversed, in turn.
    func inTurn(_ r: Int, _ servers: [(name: String, socket: String)]) -> [(name: String, socket: String)] {
        r % 2 == 0 ? servers : servers.reversed()
    }
    let rttN = quick ? 3000 : 20000
    /// Round trips of `kind` to each of `servers`, per placement: (JSON, distributions by placement and server).
    func roundTripSeries(_ kind: Requests.Kind, _ servers: [(name: String, socket: String)]) throws -> ([JSON.Member], [String: [String: Dist]]) {
        var json: [JSON.Member] = []
        var dists: [String: [String: Dist]] = [:]
        for p in pinnings {
            pinThread(cpu: p.cpu)
            progress("round trip \(p.name): \(rttN) sequential \(kind == .select ? "tab.select" : "touch") each, in \(rounds) alternating rounds")
            var samples: [String: [UInt64]] = [:]
            for r in 0..<rounds {
                for t in inTurn(r, servers) {
                    samples[t.name, default: []] += try roundTrips(socket: t.socket, n: rttN / rounds, warmup: rttN / rounds / 10, kind: kind)
                }
            }
            let per = samples.mapValues { Dist($0) }
            dists[p.name] = per
            json.append(JSON.Member(p.name, .object(servers.map { JSON.Member($0.name, per[$0.name]!.json) })))
        }
        pinThread(cpu: clientCPU)
        return (json, dists)
    }
    // (The floor + journal beside them: what a durable write before the reply costs alone.)
    let (rttJSON, rtt) = try roundTripSeries(.select, targets + [floorJournalTarget])
    result.append(JSON.Member("round_trip", .object(rttJSON)))
    let (touchRttJSON, touchRtt) = try roundTripSeries(.touch, touchTargets)
    result.append(JSON.Member("round_trip_touch", .object(touchRttJSON)))

    // MARK: pipelined
    let pipeRounds = quick ? 1 : 3
    let pipeSeconds = quick ? 0.7 : 0.7
    var pipeJSON: [JSON.Member] = []
    var pipe: [String: [Int: [String: Double]]] = [:]
    var touchPipeJSON: [JSON.Member] = []
    var touchPipe: [String: [String: Double]] = [:]
    var tabbardRequests = 0
    func median(_ xs: [Double]) -> Double { let s = xs.sorted(); return s[s.count / 2] }
    /// The median rate of each of `servers` over alternating rounds, and every round's rate.
    func pipelinedRates(_ kind: Requests.Kind, clients n: Int, _ servers: [(name: String, socket: String)]) throws -> ([String: Double], [String: [Double]]) {
        var rates: [String: [Double]] = [:]
        for r in 0..<pipeRounds {
            for t in inTurn(r, servers) {
                let (rate, total) = try pipelined(socket: t.socket, clients: n, window: 64, seconds: pipeSeconds, warmupSeconds: 0.2, kind: kind)
                rates[t.name, default: []].append(rate)
                if t.name == "tabbard" { tabbardRequests += total }
            }
        }
        return (rates.mapValues(median), rates)
    }
    for p in pinnings {
        pinThread(cpu: p.cpu)
        var byClients: [Int: [String: Double]] = [:]
        var pj: [JSON.Member] = []
        let pipeTargets = targets + [floorJournalTarget]
        for n in [1, 8] {
            progress("pipelined \(p.name): \(n) client(s) × 64 in flight, \(pipeRounds) alternating rounds of \(pipeSeconds) s")
            let (per, rates) = try pipelinedRates(.select, clients: n, pipeTargets)
            byClients[n] = per
            pj.append(JSON.Member("clients_\(n)", .obj([
                "tabbard_per_s": .int(Int(per["tabbard"]!)), "floor_per_s": .int(Int(per["floor"]!)),
                "floor_journal_per_s": .int(Int(per["floor+journal"]!)),
                "tabbard_rounds": .array(rates["tabbard"]!.map { .int(Int($0)) }), "floor_rounds": .array(rates["floor"]!.map { .int(Int($0)) }),
                "floor_journal_rounds": .array(rates["floor+journal"]!.map { .int(Int($0)) }),
            ])))
        }
        pipe[p.name] = byClients
        pipeJSON.append(JSON.Member(p.name, .object(pj)))
        progress("pipelined \(p.name): touch, 1 client × 64 in flight, \(pipeRounds) alternating rounds of \(pipeSeconds) s")
        let (per, rates) = try pipelinedRates(.touch, clients: 1, touchTargets)
        touchPipe[p.name] = per
        touchPipeJSON.append(JSON.Member(p.name, .object(touchTargets.map {
            JSON.Member($0.name, .obj(["per_s": .int(Int(per[$0.name]!)), "rounds": .array(rates[$0.name]!.map { .int(Int($0)) })]))
        })))
    }
    pinThread(cpu: clientCPU)
    result.append(JSON.Member("pipelined_64_in_flight", .object(pipeJSON)))
    result.append(JSON.Member("pipelined_touch_1_client_64_in_flight", .object(touchPipeJSON)))

    // MARK: RSS after 1 million requests
    let millionTarget = quick ? 200_000 : 1_000_000
    var served = (try statsGet("\(tmp)/null.sock"))["requests"]?.intValue ?? tabbardRequests
    if served < millionTarget {
        progress("topping up to \(millionTarget) requests (\(millionTarget - served) more, pipelined)")
        while served < millionTarget {
            let (_, total) = try pipelined(socket: "\(tmp)/null.sock", clients: 1, window: 64, seconds: 0.5, warmupSeconds: 0, kind: .select)
            served += total
        }
    }
    let daemonStats = try statsGet("\(tmp)/null.sock")
    served = daemonStats["requests"]?.intValue ?? served
    let rssAfter = rssKB(daemon.pid)
    result.append(JSON.Member("rss_kb", .obj([
        "tabbard_start": .int(rssStart.rss), "tabbard_after_requests": .int(rssAfter.rss), "tabbard_hwm": .int(rssAfter.hwm),
        "tabbard_start_pss": .int(rssStart.pss), "tabbard_after_requests_pss": .int(rssAfter.pss),
        "requests_served": .int(served), "floor": .int(floorRSS.rss),
    ])))
    result.append(JSON.Member("tabbard_request_latency_stats_get", daemonStats["request_latency"] ?? .null))

    // MARK: fan-out
    let fanRounds = quick ? 1 : 2
    var fanJSON: [JSON.Member] = []
    var fan: [String: [Int: [String: Dist]]] = [:]
    for p in pinnings {
        pinThread(cpu: p.cpu)
        var bySubs: [Int: [String: Dist]] = [:]
        var fj: [JSON.Member] = []
        for n in [100, 1000] {
            let iters = n == 100 ? (quick ? 100 : 500) : (quick ? 40 : 200)
            progress("fan-out \(p.name): \(n) subscribers × \(iters) changes each, in \(fanRounds) alternating rounds")
            var samples: [String: [UInt64]] = [:]
            for r in 0..<fanRounds {
                for t in inTurn(r, targets) {
                    samples[t.name, default: []] += try fanout(socket: t.socket, subscribers: n, iterations: iters / fanRounds, warmup: iters / fanRounds / 10)
                }
            }
            let per = samples.mapValues { Dist($0) }
            bySubs[n] = per
            fj.append(JSON.Member("subscribers_\(n)", .obj(["tabbard": per["tabbard"]!.json, "floor": per["floor"]!.json])))
        }
        fan[p.name] = bySubs
        fanJSON.append(JSON.Member(p.name, .object(fj)))
    }
    pinThread(cpu: clientCPU)
    result.append(JSON.Member("fan_out", .object(fanJSON)))

    // After they left: the daemon has seen every subscriber go (only this stats connection is
    // left), and one more request makes sure the turn they left in has ended.
    let leftBy = nowNs() + 10_000_000_000
    while try statsGet("\(tmp)/null.sock")["clients"]?.intValue ?? 0 > 1 && nowNs() < leftBy { usleep(10_000) }
    _ = try statsGet("\(tmp)/null.sock")
    let rssAfterFanout = rssKB(daemon.pid)
    result.append(JSON.Member("rss_kb_after_1000_subscribers_came_and_went", .obj(["tabbard": .int(rssAfterFanout.rss), "tabbard_pss": .int(rssAfterFanout.pss)])))

    // A few clicks on the null-sink daemon, so that its idle figure is "after audio has gone idle".
    do {
        let (fd, reader) = try openClient("\(tmp)/null.sock")
        for k in 0..<3 {
            try writeAll(fd, Array(Requests.select(index: k % 2, source: "user").utf8))
            _ = reader.readLine()
            sleepMs(20)
        }
        close(fd)
    }

    // MARK: clicks through ALSA's null device, under the shim
    progress("clicks: tabbard --audio alsa --alsa-device null under the LD_PRELOAD shim")
    let onsets = try OnsetPipe(path: "\(tmp)/onsets.fifo")
    let alsa = try startServer(daemonArgv(socket: "\(tmp)/alsa.sock", state: "\(tmp)/state-alsa/state.json",
                                          audio: ["--audio", "alsa", "--alsa-device", "null"], config: "\(tmp)/alsa.json"),
                               socket: "\(tmp)/alsa.sock", env: ["LD_PRELOAD": shimPath, "CLICKSHIM_OUT": onsets.path],
                               log: "\(tmp)/alsa.log")
    children.append(alsa)
    let alsaInfo = try statsGet("\(tmp)/alsa.sock")
    let sinkName = alsaInfo["audio"]?["sink"]?.stringValue ?? "?"
    guard sinkName == "alsa:null" else { throw BenchError("the ALSA daemon runs sink \(sinkName), not alsa:null (see \(tmp)/alsa.log)") }
    let warmN = quick ? 60 : 250
    progress("clicks: \(warmN) with the stream running (25–35 ms apart)")
    let warm = try clicks(socket: "\(tmp)/alsa.sock", onsets: onsets, count: warmN, spacingMs: 25...35)
    let warmStats = try statsGet("\(tmp)/alsa.sock")["audio"]?["engine"] ?? .null
    let coldN = quick ? 10 : 30
    progress("clicks: \(coldN) after the stream stopped (idle_stop_ms 100; 180–220 ms apart)")
    let startsBefore = warmStats["stream_starts"]?.intValue ?? 0
    let cold = try clicks(socket: "\(tmp)/alsa.sock", onsets: onsets, count: coldN, spacingMs: 180...220)
    let coldStats = try statsGet("\(tmp)/alsa.sock")["audio"]?["engine"] ?? .null
    let coldRestarts = (coldStats["stream_starts"]?.intValue ?? 0) - startsBefore
    let aplayN = quick ? 15 : 50
    progress("clicks: \(aplayN) × aplay -D null (the same shim)")
    let wav = soundsDir + "/click.wav"
    let aplay = try aplayClicks(wav: wav, shim: shimPath, onsets: onsets, count: aplayN, serverCPU: serverCPU, clientCPU: clientCPU)
    let fbdN = quick ? 20 : 100
    progress("clicks: \(fbdN) × feedbackd TriggerFeedback(\(opt.fbdEvent)) on a private bus, libcanberra → ALSA null (the same shim)")
    let fbd = feedbackdClicks(tmp: tmp, shim: shimPath, client: fbdClientPath, onsets: onsets, event: opt.fbdEvent,
                              count: fbdN, warmup: 3, spacingMs: 25...35, serverCPU: serverCPU, clientCPU: clientCPU,
                              children: &children)
    if let e = fbd.error { progress("feedbackd reference unavailable: \(e)") }
    let fbdD = Dist(fbd.samples), fbdRtt = Dist(fbd.roundTrips)
    let warmD = Dist(warm.samples), coldD = Dist(cold.samples), aplayD = Dist(aplay.samples)
    result.append(JSON.Member("click", .obj([
        "method": .string("client sends tab.select (source user) → the shim sees the first non-silent frame enter snd_pcm_writei on ALSA's null PCM"),
        "warm_stream": warmD.json, "warm_missed": .int(warm.missed),
        "after_idle": coldD.json, "after_idle_missed": .int(cold.missed), "after_idle_stream_restarts": .int(coldRestarts),
        "daemon_stats_get": warmStats, "aplay_per_event": aplayD.json, "aplay_missed": .int(aplay.missed),
        "feedbackd": fbd.error.map { .obj(["error": .string($0), "version": .string(fbd.version)]) } ?? .obj([
            "method": .string("fbdclient (one sd-bus connection) sends TriggerFeedback(\"tabbard.bench\", event, {}, -1) → the shim sees feedbackd's first non-silent frame enter snd_pcm_writei (libcanberra ALSA backend, pcm.!default = null); the next event after FeedbackEnded + 25–35 ms; 3 warm-up events not counted"),
            "version": .string(fbd.version), "event": .string(fbd.event),
            "click": fbdD.json, "missed": .int(fbd.missed), "dbus_round_trip": fbdRtt.json,
        ]),
    ])))

    // MARK: idle
    let idleSeconds = quick ? 3.0 : 10.0
    progress("idle: waiting 2.5 s for journal fsync and audio to settle, then \(idleSeconds) s with no clients")
    sleepMs(2500)
    let busyIdle0 = machineTicks()
    let idle = idleCost([("tabbard (null sink)", daemon.pid), ("tabbard (ALSA null)", alsa.pid), ("floor", floor.pid)], seconds: idleSeconds)
    let backgroundIdle = busyPercent(busyIdle0, machineTicks())
    result.append(JSON.Member("background_cpu_percent", .obj(["before_run": r(backgroundBefore), "during_idle_window": r(backgroundIdle)])))
    result.append(JSON.Member("idle", .array(idle.map { f in
        .obj(["process": .string(f.name), "seconds": r(f.seconds), "voluntary_switches": .int(f.voluntary),
              "involuntary_switches": .int(f.involuntary), "cpu_ms": r(f.cpuMs), "threads": .int(f.threads),
              "wakeups_per_s": r(f.wakeupsPerSecond)])
    })))
    let alsaEngineState = (try? statsGet("\(tmp)/alsa.sock"))?["audio"]?["state"]?.stringValue ?? "?"

    result.append(JSON.Member("startup", .obj([
        "tabbard_ready_notify": readyDist.json, "tabbard_socket_answers": answerDist.json, "floor_socket_answers": floorAnswer.json,
    ])))
    result.append(JSON.Member("duration_s", r(Double(nowNs() - benchStart) / 1e9)))

    // MARK: table
    for p in pinnings {
        let tag = " [\(p.name)]"
        // The guard rails (docs/PERFORMANCE.md) hold with the client on the other CPU; with
        // both on one CPU the figures are printed for reference only.
        let railed = p.name == "cross-cpu"
        func rail(_ text: String, _ ok: Bool) -> (String, String) { railed ? (text, verdict(ok)) : ("", "") }
        let t = rtt[p.name]!["tabbard"]!, f = rtt[p.name]!["floor"]!, fj = rtt[p.name]!["floor+journal"]!
        rows.append(Row(metric: "round trip p50" + tag, tabbard: fmtUs(t.p50), reference: fmtUs(f.p50) + " floor, " + fmtUs(fj.p50) + " floor+journal",
                        ratio: ratio(t.p50, f.p50) + " / " + ratio(t.p50, fj.p50), target: rail("≤ 1.3× floor", t.p50 <= 1.3 * f.p50).0,
                        verdict: rail("", t.p50 <= 1.3 * f.p50).1))
        rows.append(Row(metric: "round trip p90" + tag, tabbard: fmtUs(t.p90), reference: fmtUs(f.p90) + " floor",
                        ratio: ratio(t.p90, f.p90), target: "", verdict: ""))
        rows.append(Row(metric: "round trip p99" + tag, tabbard: fmtUs(t.p99), reference: fmtUs(f.p99) + " floor",
                        ratio: ratio(t.p99, f.p99), target: "", verdict: ""))
        rows.append(Row(metric: "round trip max" + tag, tabbard: fmtUs(t.max), reference: fmtUs(f.max) + " floor",
                        ratio: ratio(t.max, f.max), target: "", verdict: ""))
        for n in [1, 8] {
            let tr = pipe[p.name]![n]!["tabbard"]!, fr = pipe[p.name]![n]!["floor"]!, jr = pipe[p.name]![n]!["floor+journal"]!
            rows.append(Row(metric: "pipelined, \(n) client\(n > 1 ? "s" : "") × 64" + tag, tabbard: fmtRate(tr),
                            reference: fmtRate(fr) + " floor, " + fmtRate(jr) + " floor+journal",
                            ratio: String(format1: 100 * tr / fr, digits: 0) + "% / " + String(format1: 100 * tr / jr, digits: 0) + "%",
                            target: n == 1 ? rail("≥ 50% floor", tr >= 0.5 * fr).0 : "", verdict: n == 1 ? rail("", tr >= 0.5 * fr).1 : ""))
        }
        // touch: against the floor (the target), and the same tap without its click beside it.
        let tt = touchRtt[p.name]!["tabbard"]!, tf = touchRtt[p.name]!["floor"]!, tq = touchRtt[p.name]!["tabbard, no click"]!
        rows.append(Row(metric: "touch round trip p50" + tag, tabbard: fmtUs(tt.p50) + " (" + fmtUs(tq.p50) + " no click)",
                        reference: fmtUs(tf.p50) + " floor", ratio: ratio(tt.p50, tf.p50) + " (" + ratio(tq.p50, tf.p50) + ")",
                        target: rail("≤ 1.3× floor", tt.p50 <= 1.3 * tf.p50).0, verdict: rail("", tt.p50 <= 1.3 * tf.p50).1))
        let ttr = touchPipe[p.name]!["tabbard"]!, tfr = touchPipe[p.name]!["floor"]!, tqr = touchPipe[p.name]!["tabbard, no click"]!
        rows.append(Row(metric: "touch pipelined, 1 client × 64" + tag, tabbard: fmtRate(ttr) + " (" + fmtRate(tqr) + " no click)",
                        reference: fmtRate(tfr) + " floor", ratio: String(format1: 100 * ttr / tfr, digits: 0) + "% (" + String(format1: 100 * tqr / tfr, digits: 0) + "%)",
                        target: rail("≥ 50% floor", ttr >= 0.5 * tfr).0, verdict: rail("", ttr >= 0.5 * tfr).1))
        for n in [100, 1000] {
            let td = fan[p.name]![n]!["tabbard"]!, fd = fan[p.name]![n]!["floor"]!
            rows.append(Row(metric: "fan-out \(n) subs p50" + tag, tabbard: fmtUs(td.p50), reference: fmtUs(fd.p50) + " floor",
                            ratio: ratio(td.p50, fd.p50), target: "", verdict: ""))
            if n == 100 {
                rows.append(Row(metric: "fan-out \(n) subs p99" + tag, tabbard: fmtUs(td.p99), reference: fmtUs(fd.p99) + " floor",
                                ratio: ratio(td.p99, fd.p99), target: "≤ 2× floor", verdict: verdict(td.p99 <= 2 * fd.p99)))
            } else {
                rows.append(Row(metric: "fan-out \(n) subs p99" + tag, tabbard: fmtUs(td.p99), reference: fmtUs(fd.p99) + " floor",
                                ratio: ratio(td.p99, fd.p99), target: "≤ 10 ms", verdict: verdict(td.p99 <= 10_000)))
            }
        }
    }
    // Click rows: tabbard against both per-event references of the same run.
    let fbdOK = fbd.error == nil && fbdD.count > 0
    func refs(_ a: Double, _ f: Double) -> String {
        fmtUs(a) + " aplay, " + (fbdOK ? fmtUs(f) + " feedbackd" : "feedbackd n/a")
    }
    func ratios(_ t: Double, _ a: Double, _ f: Double) -> String {
        ratio(t, a) + (fbdOK ? " / " + ratio(t, f) : "")
    }
    rows.append(Row(metric: "click at writei p50 (stream running)", tabbard: fmtUs(warmD.p50), reference: refs(aplayD.p50, fbdD.p50),
                    ratio: ratios(warmD.p50, aplayD.p50, fbdD.p50), target: "≤ 0.5 ms", verdict: verdict(warmD.count > 0 && warmD.p50 <= 500)))
    rows.append(Row(metric: "click at writei p99 (stream running)", tabbard: fmtUs(warmD.p99), reference: refs(aplayD.p99, fbdD.p99),
                    ratio: ratios(warmD.p99, aplayD.p99, fbdD.p99), target: "≤ 1 ms", verdict: verdict(warmD.count > 0 && warmD.p99 <= 1000)))
    rows.append(Row(metric: "click at writei p50 (after idle stop)", tabbard: fmtUs(coldD.p50), reference: refs(aplayD.p50, fbdD.p50),
                    ratio: ratios(coldD.p50, aplayD.p50, fbdD.p50), target: "≤ 0.5 ms", verdict: verdict(coldD.count > 0 && coldD.p50 <= 500)))
    rows.append(Row(metric: "click at writei p99 (after idle stop)", tabbard: fmtUs(coldD.p99), reference: refs(aplayD.p99, fbdD.p99),
                    ratio: ratios(coldD.p99, aplayD.p99, fbdD.p99), target: "≤ 1 ms", verdict: verdict(coldD.count > 0 && coldD.p99 <= 1000)))
    if fbdOK {
        rows.append(Row(metric: "click, feedbackd \(fbd.version) p50 / p99", tabbard: "",
                        reference: fmtUs(fbdD.p50) + " / " + fmtUs(fbdD.p99) + " (\(fbd.event), n=\(fbdD.count)" + (fbd.missed > 0 ? ", \(fbd.missed) missed" : "") + ")",
                        ratio: "", target: "", verdict: ""))
        rows.append(Row(metric: "feedbackd D-Bus call round trip p50 / p99", tabbard: "",
                        reference: fmtUs(fbdRtt.p50) + " / " + fmtUs(fbdRtt.p99) + " (TriggerFeedback → reply)", ratio: "", target: "", verdict: ""))
    } else {
        rows.append(Row(metric: "click, feedbackd", tabbard: "", reference: "not measured: " + (fbd.error ?? "no onset seen"),
                        ratio: "", target: "", verdict: ""))
    }
    let dp50 = warmStats["latency_p50_us"]?.doubleValue ?? 0, dp99 = warmStats["latency_p99_us"]?.doubleValue ?? 0
    rows.append(Row(metric: "click, daemon's stats.get p50 / p99", tabbard: fmtUs(dp50) + " / " + fmtUs(dp99),
                    reference: "(read → handed to sink)", ratio: "", target: "", verdict: ""))
    let tIdle = idle[0], aIdle = idle[1], fIdle = idle[2]
    rows.append(Row(metric: "idle wake-ups/s, null sink (\(Int(idleSeconds)) s)", tabbard: String(format1: tIdle.wakeupsPerSecond, digits: 1) + " (\(tIdle.voluntary) sw)",
                    reference: String(format1: fIdle.wakeupsPerSecond, digits: 1) + " floor", ratio: "", target: "0",
                    verdict: verdict(tIdle.voluntary == 0)))
    rows.append(Row(metric: "idle wake-ups/s, ALSA null (\(Int(idleSeconds)) s)", tabbard: String(format1: aIdle.wakeupsPerSecond, digits: 1) + " (\(aIdle.voluntary) sw)",
                    reference: "audio \(alsaEngineState)", ratio: "", target: "0", verdict: verdict(aIdle.voluntary == 0)))
    rows.append(Row(metric: "idle CPU, null / ALSA (\(Int(idleSeconds)) s)", tabbard: String(format1: tIdle.cpuMs, digits: 2) + " / " + String(format1: aIdle.cpuMs, digits: 2) + " ms",
                    reference: String(format1: fIdle.cpuMs, digits: 2) + " ms floor", ratio: "", target: "", verdict: ""))
    rows.append(Row(metric: "RSS at start", tabbard: String(format1: Double(rssStart.rss) / 1024, digits: 1) + " MB",
                    reference: String(format1: Double(floorRSS.rss) / 1024, digits: 1) + " MB floor", ratio: "", target: "≤ 16 MB",
                    verdict: verdict(rssStart.rss <= 16 * 1024)))
    rows.append(Row(metric: "RSS after ≥ \(millionTarget / 1000)k requests", tabbard: String(format1: Double(rssAfter.rss) / 1024, digits: 1) + " MB",
                    reference: "PSS " + String(format1: Double(rssAfter.pss) / 1024, digits: 1) + " MB (\(served / 1000)k served)", ratio: "", target: "≤ 16 MB",
                    verdict: verdict(rssAfter.rss <= 16 * 1024)))
    rows.append(Row(metric: "RSS after 1,000 subscribers left", tabbard: String(format1: Double(rssAfterFanout.rss) / 1024, digits: 1) + " MB",
                    reference: "PSS " + String(format1: Double(rssAfterFanout.pss) / 1024, digits: 1) + " MB", ratio: "", target: "≤ 16 MB",
                    verdict: verdict(rssAfterFanout.rss <= 16 * 1024)))
    rows.append(Row(metric: "start → READY=1 p50 / max", tabbard: fmtUs(readyDist.p50) + " / " + fmtUs(readyDist.max),
                    reference: "", ratio: "", target: "≤ 50 ms", verdict: verdict(readyDist.count > 0 && readyDist.max <= 50_000)))
    rows.append(Row(metric: "start → socket answers p50 / max", tabbard: fmtUs(answerDist.p50) + " / " + fmtUs(answerDist.max),
                    reference: fmtUs(floorAnswer.p50) + " / " + fmtUs(floorAnswer.max) + " floor", ratio: ratio(answerDist.p50, floorAnswer.p50),
                    target: "≤ 50 ms", verdict: verdict(answerDist.max <= 50_000)))
    if let path = opt.sinkJSON, let sink = sinkSection(path: path) {
        result.append(sink.member)
        rows += sink.rows
    }
    result.append(JSON.Member("table", .array(rows.map {
        .obj(["metric": .string($0.metric), "tabbard": .string($0.tabbard), "reference": .string($0.reference),
              "ratio": .string($0.ratio), "target": .string($0.target), "verdict": .string($0.verdict)])
    })))
} catch {
    fputs("tabbard-bench: \(error)\n", stderr)
    opt.keep ? progress("kept \(tmp)") : ()
    for c in children { c.stop() }
    if !opt.keep { _ = commandOutput("rm -rf '\(tmp)'") }
    exit(1)
}

cleanup()
let doc = pretty(.object(result)) + "\n"
let dir = opt.out.contains("/") ? String(opt.out[..<opt.out.lastIndex(of: "/")!]) : "."
_ = commandOutput("mkdir -p '\(dir)'")
writeFile(opt.out, doc)
if opt.json {
    fputs(doc, stdout)
} else {
    print("tabbard-bench — servers (tabbard, floor, aplay, feedbackd) pinned to CPU \(serverCPU); clients on CPU \(serverCPU) [same-cpu]"
          + (pinnings.count > 1 ? " or CPU \(clientCPU) [cross-cpu]" : "") + (quick ? "; --quick" : "") + "\n")
    printTable(rows, to: stdout)
    if let bg = result.first(where: { $0.key == "background_cpu_percent" })?.value {
        print("\nOther load on the machine (all CPUs): \(fmtPct(bg["before_run"])) before the run, \(fmtPct(bg["during_idle_window"])) during the idle window"
              + ((bg["before_run"]?.doubleValue ?? 0) > 5 || (bg["during_idle_window"]?.doubleValue ?? 0) > 5 ? " — NOISY: rerun on a quiet machine" : ""))
    }
    print("\nJSON: \(opt.out)   (\(String(format1: Double(nowNs() - benchStart) / 1e9, digits: 0)) s)")
}
