// tabbard-bench --load SOCKET --typed: the same round trips and 1-client pipelined rate as
// the raw client's, through the typed async client (`TabBar`, docs/CLIENT.md): each request
// encoded from its typed call, each reply parsed and decoded into its typed result. The
// tasks prefer the connection's executor (`bar.executor`, as CLIENT.md's "Threading" shows)
// unless `--typed-global`: then each reply resumes its task on the global pool.
@preconcurrency import Glibc
import TabBarClient

/// What `runBlocking`'s task hands to the waiting thread.
private final class Handover: @unchecked Sendable {
    var done = sem_t()
    var result: Result<any Sendable, any Error>?
}

/// Runs `body` on the cooperative pool and waits for it on this thread (not a pool thread).
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = Handover()
    sem_init(&box.done, 0, 0)
    Task.detached {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        sem_post(&box.done)
    }
    while sem_wait(&box.done) != 0 {}
    return try box.result!.get() as! T
}

/// One typed request of `kind`'s cycle, its `k`-th step (select tab 0, tab 1; or tap tab 0, tab 1).
func typedStep(_ bar: TabBar, _ kind: Requests.Kind, _ k: Int) async throws {
    switch kind {
    case .select:
        try await bar.select(.index(k % 2), source: .program)
    case .touch:
        let x = (k / 2) % 2 == 0 ? 37.5 : 112.5
        try await bar.touch(k % 2 == 0 ? .down : .up, x: x, y: 20)
    }
}

/// `n` sequential typed round trips (after `warmup`), in ns.
func typedRoundTrips(socket: String, n: Int, warmup: Int, kind: Requests.Kind, onConnectionExecutor: Bool) async throws -> [UInt64] {
    let bar = try await TabBar.connect(path: socket, options: .init(timeout: nil))
    defer { bar.close() }
    return try await withTaskExecutorPreference(onConnectionExecutor ? bar.executor : nil) {
        var samples = [UInt64]()
        samples.reserveCapacity(n)
        for k in 0..<(warmup + n) {
            let t0 = nowNs()
            try await typedStep(bar, kind, k)
            let t1 = nowNs()
            if k >= warmup { samples.append(t1 - t0) }
        }
        return samples
    }
}

/// One connection with `window` requests in flight (one task each, each sending its next
/// request as soon as its reply came); replies per second over `seconds` after `warmupSeconds`.
func typedPipelined(socket: String, window: Int, seconds: Double, warmupSeconds: Double, kind: Requests.Kind,
                    onConnectionExecutor: Bool) async throws -> Double {
    let bar = try await TabBar.connect(path: socket, options: .init(timeout: nil))
    defer { bar.close() }
    let start = nowNs()
    let measureFrom = start + UInt64(warmupSeconds * 1e9)
    let end = measureFrom + UInt64(seconds * 1e9)
    let counts = try await withThrowingTaskGroup(of: Int.self) { group in
        for w in 0..<window {
            group.addTask(executorPreference: onConnectionExecutor ? bar.executor : nil) {
                var counted = 0
                var k = w
                while true {
                    try await typedStep(bar, kind, k)
                    k += window
                    let t = nowNs()
                    if t >= end { return counted }
                    if t >= measureFrom { counted += 1 }
                }
            }
        }
        return try await group.reduce(0, +)
    }
    return Double(counts) / seconds
}
