import CALSA
import Glibc
import Synchronization

/// Loads sound banks on a thread of its own, so that the state loop never decodes or
/// resamples. One load at a time; what it makes is posted to `updates` and `fd` (an eventfd
/// the state loop polls) becomes readable; the loop takes it with `take()` and alone swaps
/// it in. `cancel()` stops a load between two chunks of a file.
public final class SoundLoader: Sendable {
    /// What a load posts, in order: `planned` (the names it will load), then with
    /// `progressive` each sound as it is ready, then `finished` with the whole bank.
    public enum Update: Sendable {
        case planned([String])
        case loaded(Sound)
        case failed(SoundFailure)
        case finished(SoundBank)
    }

    /// Readable while updates wait (an eventfd, non-blocking; -1 if none could be made).
    public let fd: Int32
    private let updates = Mutex<[Update]>([])
    private let stop = Atomic<Bool>(false)
    private let thread = Mutex<pthread_t?>(nil)
    /// A test hook: while this file exists, the load waits before each sound (a load that
    /// takes as long as a test wants, with no timing in the test).
    public let gate: String?

    public init(gate: String? = nil) {
        fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        self.gate = gate
    }

    deinit {
        cancel()
        if fd >= 0 { close(fd) }
    }

    /// Starts loading on a new thread: `plan`'s sounds, those named in `first` first, then the
    /// smaller files first. False when the thread could not be made (nothing is posted then).
    public func start(directories: [String], files: [String: String], theme: SoundTheme = SoundTheme(),
                      format: PCMFormat, first: Set<String> = [], progressive: Bool, log: @escaping AudioLog) -> Bool {
        cancel()
        stop.store(false, ordering: .relaxed)
        let gate = gate
        let result = spawnThread { [self] in
            tabbard_set_thread_name("tabbard-sounds")
            // Below the state loop and the audio thread, on a machine with few cores.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(tabbard_gettid()), 10)
            let t0 = monotonicNanos()
            let plan = SoundBank.plan(directories: directories, files: files, theme: theme, log: log)
            let ordered = SoundLoader.order(plan.entries, first: first)
            post(.planned(ordered.map(\.name)))
            var sounds: [Sound] = []
            var failures = plan.failures
            for f in plan.failures where progressive { post(.failed(f)) }
            for (name, path) in ordered {
                if let gate { while access(gate, F_OK) == 0 && !stop.load(ordering: .relaxed) { usleep(2000) } }
                if stop.load(ordering: .relaxed) { return }
                switch SoundBank.loadOne(name: name, path: path, format: format, log: log, cancelled: { stop.load(ordering: .relaxed) }) {
                case .success(let s):
                    sounds.append(s)
                    if progressive { post(.loaded(s)) }
                case .failure(let f):
                    if stop.load(ordering: .relaxed) { return }
                    failures.append(f)
                    if progressive { post(.failed(f)) }
                }
            }
            post(.finished(SoundBank.made(format: format, sounds: sounds, failures: failures, loadNanos: monotonicNanos() - t0)))
        }
        guard case .success(let t) = result else { return false }
        thread.withLock { $0 = t }
        return true
    }

    /// `first` names, then by file size (small files first), else as planned.
    static func order(_ entries: [(name: String, path: String)], first: Set<String>) -> [(name: String, path: String)] {
        let sized = entries.enumerated().map { (k, e) -> (Int, Int, Int, (name: String, path: String)) in
            var st = stat()
            let size = stat(e.path, &st) == 0 ? Int(st.st_size) : 0
            return (first.contains(e.name) ? 0 : 1, size, k, e)
        }
        return sized.sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }.map(\.3)
    }

    private func post(_ u: Update) {
        updates.withLock { $0.append(u) }
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(fd, $0.baseAddress, 8) }
    }

    /// A replaced bank on its way to `dispose`: the caller keeps only the parcel, so the
    /// bank's last reference is the one `dispose`'s thread drops, whenever that thread runs.
    // Sendable because `bank` is touched by one thread only: set in `init`, then written (to nil)
    // by `dispose`'s thread alone, which thread creation orders after the `init`.
    public final class Parcel: @unchecked Sendable {
        fileprivate var bank: SoundBank?
        public init(_ bank: SoundBank) { self.bank = bank }
    }

    /// Frees a replaced bank on a thread of its own: the sounds of a directory of ringtones
    /// (hundreds of MB) are not unmapped on the state loop, where that took 9 ms. Give it the
    /// parcel once every other reference to the bank is gone; sounds still playing are released
    /// when their voices end.
    public static func dispose(_ parcel: Parcel) {
        if case .success(let t) = spawnThread({ parcel.bank = nil }) { pthread_detach(t) } else { parcel.bank = nil }
    }

    /// What was posted since the last call (the loop's side).
    public func take() -> [Update] {
        var n: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &n) { read(fd, $0.baseAddress, 8) }
        let got = updates.withLock { u in
            let all = u
            u = []
            return all
        }
        if got.contains(where: { if case .finished = $0 { return true } else { return false } }) { join() }
        return got
    }

    /// Stops a load in progress (between two chunks) and waits for its thread; what it had
    /// not posted is dropped.
    public func cancel() {
        stop.store(true, ordering: .relaxed)
        join()
        _ = updates.withLock { $0.removeAll() }
    }

    private func join() {
        if let t = thread.withLock({ t -> pthread_t? in let x = t; t = nil; return x }) { pthread_join(t, nil) }
    }
}
