import Glibc
import Synchronization
import TabBarCore
import TabBarSystem

/// A connection to tabbard for a front end: typed `async` requests and an `AsyncSequence`
/// of typed events, usable from any task or thread (docs/CLIENT.md).
///
/// ```swift
/// let bar = try await TabBar.connect()
/// try await bar.select(.id("chat"))
/// for try await event in bar.events(topics: [.tab]) { print(event) }
/// ```
///
/// One thread of its own reads the socket and hands each reply to the task that waits for
/// it; requests are written by the task that makes them. Requests from several tasks may
/// be in flight at once (the replies find their callers by id). A cancelled request throws
/// `CancellationError` at once (the daemon still carries it out: it was sent). A lost
/// connection fails every request in flight with `ClientError.closed` (or `.io`); with
/// `Options.reconnect` the client connects again by itself and the event stream goes on
/// with `.resync(_, reconnected: true)`.
public final class TabBar: Sendable {
    /// How a `TabBar` waits and whether it reconnects.
    public struct Options: Sendable {
        /// How long a request waits for its reply (and `connect` for the daemon's hello)
        /// before it throws `ClientError.timeout`; nil: no limit.
        public var timeout: Duration?
        /// Whether to connect again after the connection is lost (the daemon stopped or
        /// restarted): after `minDelay`, doubling up to `maxDelay`. Requests made meanwhile
        /// throw; the event stream stays open and, once connected again, yields
        /// `.resync(snapshot, reconnected: true)` (subscribed anew with the same topics).
        public var reconnect: Bool
        /// The first wait before connecting again.
        public var minDelay: Duration
        /// The longest wait between attempts.
        public var maxDelay: Duration

        /// A 5 s timeout, no reconnecting, reconnects after 0.25 s up to 5 s when enabled.
        public init(timeout: Duration? = .seconds(5), reconnect: Bool = false,
                    minDelay: Duration = .milliseconds(250), maxDelay: Duration = .seconds(5)) {
            self.timeout = timeout
            self.reconnect = reconnect
            self.minDelay = minDelay
            self.maxDelay = maxDelay
        }
    }

    /// The socket's path.
    public var path: String { core.path }
    /// The options it was made with.
    public var options: Options { core.options }
    /// The daemon's `hello` (of the latest connection, after a reconnect).
    public var hello: Hello { core.state.withLock { $0.hello } }
    /// Whether the connection is up now.
    public var isConnected: Bool { core.state.withLock { $0.fd >= 0 } }

    private let core: Core

    private init(core: Core) { self.core = core }

    deinit { core.close() }

    /// Connects to the daemon's socket: `path` if given, else as `tabbarctl` finds it
    /// (`instance` or `$TABBARD_SOCKET`, `$TABBARD_INSTANCE`, `$XDG_RUNTIME_DIR/tabbard/socket`…:
    /// `SocketPath.resolve(explicit:instance:)`), and reads its `hello`.
    /// Throws `ClientError.connect` saying why and what to do when no daemon answers there.
    public static func connect(path: String? = nil, instance: String? = nil, options: Options = Options()) async throws -> TabBar {
        let resolved = SocketPath.resolve(explicit: path, instance: instance)
        let link = try Core.handshake(path: resolved, timeoutMs: options.timeout.map(Core.milliseconds) ?? -1)
        let core = Core(path: resolved, options: options, link: link)
        core.start()
        return TabBar(core: core)
    }

    /// Closes the connection: requests in flight throw `ClientError.closed`, the event
    /// stream ends. Also done when the last reference goes away.
    public func close() { core.close() }

    // MARK: Requests, typed

    /// `ping`: the daemon answers.
    public func ping() async throws {
        _ = try await send(Requests.ping())
    }

    /// `state.get`: the bar's state and its `seq`.
    public func state() async throws -> Snapshot {
        try Snapshot(try await send(Requests.stateGet()))
    }

    /// `bar.configure` with these params (any of `items`, `selected`, `layout`, `settings`:
    /// docs/PROTOCOL.md); the new state.
    ///
    /// ```swift
    /// try await bar.configure(["items": [["id": "home", "title": "Home"], ["id": "chat", "title": "Chat"]],
    ///                          "selected": "home"])
    /// ```
    @discardableResult
    public func configure(_ params: JSON) async throws -> Snapshot {
        try Snapshot(try await send(Requests.configure(params)))
    }

    /// `tab.select`: selects a tab by id (`.id("chat")`) or position (`.index(1)`). `ifSeq`:
    /// only if the state is still at that `seq` (else `ClientError.rpc(kind: "conflict")`).
    /// `source: .program` selects without a click.
    @discardableResult
    public func select(_ tab: TabRef, ifSeq: UInt64? = nil, source: Source = .user) async throws -> Selection {
        let r = try await send(Requests.select(tab, ifSeq: ifSeq, source: source))
        return Selection(seq: try Decode.seq(r, "seq"), selected: try Decode.string(r, "selected"),
                         previous: r["previous"]?.stringValue, reselected: r["reselected"]?.boolValue ?? false)
    }

    /// `action.trigger`: a center or action item becomes the active action. Returns the `seq`.
    @discardableResult
    public func trigger(_ tab: String, source: Source = .user) async throws -> UInt64 {
        try Decode.seq(try await send(Requests.trigger(tab, source: source)), "seq")
    }

    /// `action.finish`: the item's action ended. Returns the `seq`.
    @discardableResult
    public func finishAction(_ tab: String) async throws -> UInt64 {
        try Decode.seq(try await send(Requests.finishAction(tab)), "seq")
    }

    /// `badge.set`: `.count(120)` (shown as `99+`), `.text("new")`, `.dot`, or nil to
    /// remove it; `hidden`: keep it but hide it (nil: as it was).
    @discardableResult
    public func setBadge(_ badge: Badge?, on tab: String, hidden: Bool? = nil) async throws -> BadgeResult {
        try Self.badgeResult(try await send(Requests.setBadge(badge, on: tab, hidden: hidden)))
    }

    /// `badge.set {"hidden"}`: hides or shows an item's badge, keeping its value.
    @discardableResult
    public func hideBadge(_ hidden: Bool, on tab: String) async throws -> BadgeResult {
        try Self.badgeResult(try await send(Requests.hideBadge(hidden, on: tab)))
    }

    /// `badge.clear`: removes an item's badge. Returns the `seq`.
    @discardableResult
    public func clearBadge(on tab: String) async throws -> UInt64 {
        try Decode.seq(try await send(Requests.clearBadge(on: tab)), "seq")
    }

    /// `feedback.set`: the profile (`full`, `quiet`, `silent`), the clicks' volume (0…1), or both.
    @discardableResult
    public func setFeedback(profile: FeedbackProfile? = nil, volume: Double? = nil) async throws -> Feedback {
        let f = try await send(Requests.setFeedback(profile: profile, volume: volume))["feedback"] ?? .null
        return Feedback(profile: try Decode.choice(f, "profile"), volume: f["volume"]?.doubleValue ?? 1)
    }

    /// `touch`: a finger at (`x`, `y`) bar points, `.down` then `.up` (or `.cancel`). The
    /// daemon hit-tests, highlights on down, commits (and clicks) on up. `touchID` names one
    /// finger's sequence so a replayed one is ignored.
    @discardableResult
    public func touch(_ phase: TouchPhase, x: Double, y: Double, touchID: Int? = nil) async throws -> TouchResult {
        let r = try await send(Requests.touch(phase, x: x, y: y, touchID: touchID))
        return TouchResult(seq: try Decode.seq(r, "seq"), target: r["target"]?.stringValue,
                           consumed: r["consumed"]?.boolValue ?? false,
                           commit: r["commit"]?.stringValue.flatMap(Commit.init(rawValue:)),
                           ignored: r["ignored"]?.boolValue ?? false)
    }

    /// `tab.highlight`: a press the front end tracks itself began, ended or was cancelled. Returns the `seq`.
    @discardableResult
    public func highlight(_ tab: String, _ phase: HighlightPhase) async throws -> UInt64 {
        try Decode.seq(try await send(Requests.highlight(tab, phase)), "seq")
    }

    /// `nav.push`: a screen was pushed; `hidesBar`: whether it hides the bar. Returns the `seq`.
    @discardableResult
    public func push(hidesBar: Bool) async throws -> UInt64 {
        try Decode.seq(try await send(Requests.push(hidesBar: hidesBar)), "seq")
    }

    /// `nav.pop`: the top screen was popped. Returns the `seq`.
    @discardableResult
    public func pop() async throws -> UInt64 {
        try Decode.seq(try await send(Requests.pop()), "seq")
    }

    /// `sound.play`: plays a loaded sound by name; returns its voice (`sound.played` names it).
    @discardableResult
    public func playSound(_ name: String) async throws -> Int {
        try Decode.int(try await send(Requests.playSound(name)), "voice")
    }

    // MARK: Requests, raw

    /// Any request: `method` with `params`; returns the reply's `result`. Throws
    /// `ClientError.rpc` for an error reply (`code`, `kind`, `message`, `data`).
    @discardableResult
    public func call(_ method: String, _ params: JSON? = nil) async throws -> JSON {
        try await core.request(method, params)
    }

    /// Sends a notification (no id, no reply): the daemon carries it out and answers nothing.
    public func notify(_ method: String, _ params: JSON? = nil) throws {
        try core.write(TabBarConnection.requestLine(id: nil, method: method, params: params))
    }

    // MARK: Events

    /// Subscribes this connection to `topics` (every event when nil) and returns its events,
    /// typed. The subscription is sent at once, before this returns: every change made after
    /// the call shows up in the stream. Its first element is `.subscribed(snapshot)`, the
    /// state every later event changes. One stream per connection: a second call replaces
    /// the topics and ends the first stream. Leaving the loop (or cancelling its task)
    /// unsubscribes. The stream throws when the connection is lost, unless
    /// `Options.reconnect` is set.
    public func events(topics: [Topic]? = nil) -> AsyncThrowingStream<TabBarEvent, any Error> {
        core.subscribe(topics?.map(\.name))
    }

    // MARK: -

    private func send(_ r: Requests.Line) async throws -> JSON {
        try await core.request(r.method, r.params)
    }

    static func badgeResult(_ r: JSON) throws -> BadgeResult {
        BadgeResult(seq: try Decode.seq(r, "seq"), badge: try Decode.badge(r["badge"]), ignored: r["ignored"]?.boolValue ?? false)
    }
}

/// The connection's state, shared by the tasks that send and the thread that reads.
final class Core: Sendable {
    typealias Events = AsyncThrowingStream<TabBarEvent, any Error>

    struct Waiter {
        let continuation: UnsafeContinuation<JSON, any Error>
        /// Monotonic nanoseconds after which it throws `.timeout` (0: never).
        let deadline: UInt64
    }

    /// A connected socket and what it said first.
    struct Link {
        let fd: Int32
        let hello: Hello
        /// Bytes read after the hello's line.
        let leftover: [UInt8]
    }

    struct State {
        var fd: Int32
        var hello: Hello
        var leftover: [UInt8]
        var waiters: [Int: Waiter] = [:]
        /// Requests cancelled before their continuation was registered.
        var cancelled: Set<Int> = []
        var stream: Events.Continuation?
        var streamGeneration = 0
        /// The subscription's topics: `.none` not subscribed, `.some(nil)` every event.
        var topics: [String]?? = .none
        /// The id of the `subscribe` whose reply starts (or resyncs) the stream.
        var subscribeID = 0
        var subscribeAfterReconnect = false
        /// Events are handed out from the subscribe's reply on.
        var streamReady = false
        var closed = false
        /// Why `fd` is -1.
        var lost: ClientError?
        /// The reader waits in `poll` with no timeout (a new deadline must wake it).
        var readerSleeping = false
    }

    /// The socket's writing side: writers take only this lock (the reader takes it to
    /// flush the outbox), so a request's `send` never holds up the reader's routing.
    struct Writer {
        var fd: Int32
        /// Bytes the socket did not take yet (the reader writes them when it can).
        var outbox: [UInt8] = []
        var lost: ClientError?
    }

    let path: String
    let options: Options
    let state: Mutex<State>
    let writer: Mutex<Writer>
    /// The last request id used.
    let ids = Atomic<Int>(0)
    /// A pipe whose read end (`wakeFD`) wakes the reader: bytes to write, a deadline, close.
    let wakeFD: Int32
    let wakeWriteFD: Int32
    let timeoutNs: UInt64

    typealias Options = TabBar.Options

    init(path: String, options: Options, link: Link) {
        self.path = path
        self.options = options
        state = Mutex(State(fd: link.fd, hello: link.hello, leftover: link.leftover))
        writer = Mutex(Writer(fd: link.fd))
        var p: [Int32] = [-1, -1]
        if pipe(&p) == 0 {
            for fd in p {
                try? Sys.setNonBlocking(fd)
                try? Sys.setCloseOnExec(fd)
            }
        }
        wakeFD = p[0]
        wakeWriteFD = p[1]
        timeoutNs = options.timeout.map { UInt64(max(0, Core.milliseconds($0))) * 1_000_000 } ?? 0
    }

    deinit {
        if wakeFD >= 0 { try? Sys.close(wakeFD) }
        if wakeWriteFD >= 0 { try? Sys.close(wakeWriteFD) }
    }

    static func milliseconds(_ d: Duration) -> Int {
        let c = d.components
        return Int(c.seconds) * 1000 + Int(c.attoseconds / 1_000_000_000_000_000)
    }

    func start() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let r = pthread_create(&thread, nil, { arg in
            let core = Unmanaged<Core>.fromOpaque(arg!).takeRetainedValue()
            core.run()
            return nil
        }, box)
        if r == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Core>.fromOpaque(box).release()
            lose(.io("cannot start the reader thread: \(errnoText(r))"))
        }
    }

    func wake() {
        var one: UInt8 = 1
        _ = Glibc.write(wakeWriteFD, &one, 1)  // (a full pipe wakes the reader as well)
    }

    func close() {
        state.withLock { $0.closed = true }
        wake()
    }

    // MARK: Sending

    /// Queues `bytes` on the socket (written now if it takes them). Call with the lock held.
    /// Returns whether the reader must be woken (bytes left over).
    static func enqueue(_ s: inout Writer, _ bytes: [UInt8]) throws(ClientError) -> Bool {
        guard s.fd >= 0 else { throw s.lost ?? .closed }
        guard s.outbox.isEmpty else {
            s.outbox += bytes
            return false
        }
        var offset = 0
        while offset < bytes.count {
            let r: IOResult<Int>
            do throws(Errno) { r = try Sys.send(s.fd, bytes, offset..<bytes.count) } catch {
                switch error.code {
                case EPIPE, ECONNRESET, ENOTCONN: throw .closed
                default: throw .io("send failed: \(error)")
                }
            }
            guard case .done(let n) = r else { break }
            offset += n
        }
        if offset == bytes.count { return false }
        s.outbox = Array(bytes[offset...])
        return true
    }

    func write(_ bytes: [UInt8]) throws(ClientError) {
        let wakeNeeded = try writer.withLock { w throws(ClientError) in try Core.enqueue(&w, bytes) }
        if wakeNeeded { wake() }
    }

    func nextID() -> Int { ids.wrappingAdd(1, ordering: .relaxed).newValue }

    func request(_ method: String, _ params: JSON?) async throws -> JSON {
        let id = nextID()
        let line = TabBarConnection.requestLine(id: .int(id), method: method, params: params)
        let deadline = timeoutNs == 0 ? 0 : MonotonicClock.nanoseconds() + timeoutNs
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (c: UnsafeContinuation<JSON, any Error>) in
                let registered: (failure: (any Error)?, wake: Bool) = state.withLock { s in
                    if s.cancelled.remove(id) != nil { return (CancellationError(), false) }
                    if s.fd < 0 || s.closed { return (s.lost ?? .closed, false) }
                    s.waiters[id] = Waiter(continuation: c, deadline: deadline)
                    if s.readerSleeping && deadline != 0 {
                        s.readerSleeping = false
                        return (nil, true)
                    }
                    return (nil, false)
                }
                if let failure = registered.failure {
                    c.resume(throwing: failure)
                    return
                }
                do {
                    let leftOver = try writer.withLock { w throws(ClientError) in try Core.enqueue(&w, line) }
                    if leftOver || registered.wake { wake() }
                } catch {
                    // (Unless the reader has failed it already, for the same loss.)
                    if let w = state.withLock({ $0.waiters.removeValue(forKey: id) }) { w.continuation.resume(throwing: error) }
                }
            }
        } onCancel: {
            let w = state.withLock { s -> Waiter? in
                if let w = s.waiters.removeValue(forKey: id) { return w }
                s.cancelled.insert(id)  // (not registered yet, or answered already: then removed below)
                if s.cancelled.count > 1024 { s.cancelled.removeAll() }
                return nil
            }
            w?.continuation.resume(throwing: CancellationError())
        }
    }

    func subscribe(_ topics: [String]?) -> Events {
        let (stream, continuation) = Events.makeStream()
        let generation = state.withLock { s in
            s.streamGeneration += 1
            return s.streamGeneration
        }
        continuation.onTermination = { [weak self] _ in self?.endStream(generation) }
        var failure: ClientError?
        var wakeNeeded = false
        let old: Events.Continuation? = state.withLock { s -> Events.Continuation? in
            guard s.streamGeneration == generation else {
                failure = .closed
                return nil
            }
            let old = s.stream
            s.stream = continuation
            s.topics = .some(topics)
            s.streamReady = false
            if s.fd >= 0 {
                let id = nextID()
                s.subscribeID = id
                s.subscribeAfterReconnect = false
                do throws(ClientError) {
                    let r = Requests.subscribe(topics)
                    let line = TabBarConnection.requestLine(id: .int(id), method: r.method, params: r.params)
                    wakeNeeded = try writer.withLock { w throws(ClientError) in try Core.enqueue(&w, line) }
                } catch {
                    failure = error
                }
            } else if !options.reconnect || s.closed {
                failure = s.lost ?? .closed
            }
            if failure != nil {
                s.stream = nil
                s.topics = .none
            }
            return old
        }
        old?.finish()
        if wakeNeeded { wake() }
        if let failure { continuation.finish(throwing: failure) }
        return stream
    }

    func endStream(_ generation: Int) {
        let wakeNeeded: Bool = state.withLock { s in
            guard s.streamGeneration == generation, s.stream != nil else { return false }
            s.stream = nil
            s.topics = .none
            s.subscribeID = 0
            let r = Requests.unsubscribe()
            let line = TabBarConnection.requestLine(id: nil, method: r.method, params: r.params)
            return (try? writer.withLock { w throws(ClientError) in try Core.enqueue(&w, line) }) ?? false
        }
        if wakeNeeded { wake() }
    }

    // MARK: Reading (the reader thread)

    func run() {
        var framer = LineFramer(maxLine: LineChannel.maxLine)
        var buffer = [UInt8](repeating: 0, count: 65536)
        var delay = UInt64(Core.milliseconds(options.minDelay))
        var nextCheck: UInt64 = 0
        var first = state.withLock { s in
            let l = s.leftover
            s.leftover = []
            return l
        }
        while true {
            if !first.isEmpty {
                var batch: [JSON] = []
                first.withUnsafeBufferPointer { b in framer.feed(b) { parse($0, into: &batch) } }
                route(batch)
                first = []
            }
            let now = MonotonicClock.nanoseconds()
            let (fd, closed, hasWaiters) = state.withLock { s in (s.fd, s.closed, !s.waiters.isEmpty) }
            let wantOut = writer.withLock { !$0.outbox.isEmpty }
            if closed { break }
            if fd < 0 {
                guard options.reconnect else { break }
                if sleep(ms: delay) { break }
                delay = min(delay * 2, UInt64(Core.milliseconds(options.maxDelay)))
                guard let link = try? Core.handshake(path: path, timeoutMs: options.timeout.map(Core.milliseconds) ?? 5000) else { continue }
                delay = UInt64(Core.milliseconds(options.minDelay))
                framer = LineFramer(maxLine: LineChannel.maxLine)
                first = link.leftover
                let wakeNeeded: Bool = state.withLock { s in
                    s.fd = link.fd
                    s.hello = link.hello
                    s.lost = nil
                    writer.withLock { w in
                        w.fd = link.fd
                        w.outbox = []
                        w.lost = nil
                    }
                    guard case .some(let topics) = s.topics, s.stream != nil else { return false }
                    let id = nextID()
                    s.subscribeID = id
                    s.subscribeAfterReconnect = true
                    s.streamReady = false
                    let r = Requests.subscribe(topics)
                    let line = TabBarConnection.requestLine(id: .int(id), method: r.method, params: r.params)
                    return (try? writer.withLock { w throws(ClientError) in try Core.enqueue(&w, line) }) ?? false
                }
                _ = wakeNeeded  // (the loop polls for output next anyway)
                continue
            }
            var timeout: Int32 = -1
            if hasWaiters && timeoutNs != 0 {
                if now >= nextCheck {
                    expire(now)
                    nextCheck = now + 50_000_000
                }
                timeout = Int32((nextCheck - min(now, nextCheck)) / 1_000_000) + 1
            }
            if timeout < 0 {
                // Sleep for good only if no request with a deadline came meanwhile.
                let sleeping = state.withLock { s in
                    if s.waiters.isEmpty || timeoutNs == 0 { s.readerSleeping = true }
                    return s.readerSleeping
                }
                if !sleeping { continue }
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN) | (wantOut ? Int16(POLLOUT) : 0), revents: 0),
                       pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            let n = (try? Sys.poll(&fds, timeoutMs: timeout)) ?? 0
            if timeout < 0 { state.withLock { $0.readerSleeping = false } }
            if n <= 0 { continue }
            if fds[1].revents != 0 {
                drainWake()
            }
            if fds[0].revents & Int16(POLLOUT) != 0 { flush() }
            if fds[0].revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 {
                let r: IOResult<Int>
                do throws(Errno) { r = try Sys.read(fd, into: &buffer) } catch {
                    switch error.code {
                    case ECONNRESET, EPIPE, ENOTCONN: lose(.closed)
                    default: lose(.io("read failed: \(error)"))
                    }
                    continue
                }
                guard case .done(let got) = r else { continue }
                var batch: [JSON] = []
                if got == 0 {
                    framer.finish { parse($0, into: &batch) }
                    route(batch)
                    lose(.closed)
                    continue
                }
                buffer.withUnsafeBufferPointer { b in
                    framer.feed(UnsafeBufferPointer(rebasing: b[0..<got])) { parse($0, into: &batch) }
                }
                route(batch)
            }
        }
        // Closed (or lost for good): nobody waits any more.
        lose(.closed)
        let stream = state.withLock { s -> Events.Continuation? in
            let c = s.stream
            s.stream = nil
            return c
        }
        stream?.finish()
    }

    /// Waits `ms` on the wake eventfd; true when `close()` was called meanwhile.
    private func sleep(ms: UInt64) -> Bool {
        let deadline = MonotonicClock.nanoseconds() + ms * 1_000_000
        while true {
            if state.withLock({ $0.closed }) { return true }
            let now = MonotonicClock.nanoseconds()
            if now >= deadline { return false }
            var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            if (try? Sys.poll(&fds, timeoutMs: Int32((deadline - now) / 1_000_000) + 1)) ?? 0 > 0 {
                drainWake()
            }
        }
    }

    private func drainWake() {
        var sink = [UInt8](repeating: 0, count: 64)
        while Glibc.read(wakeFD, &sink, sink.count) == sink.count {}
    }

    /// Writes what the outbox holds, as far as the socket takes it.
    private func flush() {
        let failed: ClientError? = writer.withLock { w in
            guard w.fd >= 0, !w.outbox.isEmpty else { return nil }
            var offset = 0
            while offset < w.outbox.count {
                let r: IOResult<Int>
                do throws(Errno) { r = try Sys.send(w.fd, w.outbox, offset..<w.outbox.count) } catch {
                    return error.code == EPIPE || error.code == ECONNRESET ? .closed : .io("send failed: \(error)")
                }
                guard case .done(let n) = r else { break }
                offset += n
            }
            w.outbox.removeFirst(offset)
            return nil
        }
        if let failed { lose(failed) }
    }

    /// Fails the requests whose deadline has passed.
    private func expire(_ now: UInt64) {
        let due: [Waiter] = state.withLock { s in
            var due: [Waiter] = []
            for (id, w) in s.waiters where w.deadline != 0 && w.deadline <= now {
                due.append(w)
                s.waiters[id] = nil
            }
            return due
        }
        for w in due { w.continuation.resume(throwing: ClientError.timeout) }
    }

    /// The connection is gone: every request in flight fails with `reason`; without
    /// reconnecting the stream ends with it too.
    func lose(_ reason: ClientError) {
        let (waiters, stream): ([Waiter], Events.Continuation?) = state.withLock { s in
            if s.lost == nil { s.lost = reason }
            let lost = s.lost
            writer.withLock { w in  // (first: no writer sends on it while it is closed)
                w.fd = -1
                w.outbox = []
                w.lost = lost
            }
            if s.fd >= 0 { try? Sys.close(s.fd) }
            s.fd = -1
            let w = Array(s.waiters.values)
            s.waiters = [:]
            var stream: Events.Continuation?
            if !options.reconnect || s.closed {
                stream = s.stream
                s.stream = nil
                s.topics = .none
            }
            return (w, stream)
        }
        for w in waiters { w.continuation.resume(throwing: reason) }
        if let stream {
            if case .closed = reason, state.withLock({ $0.closed }) { stream.finish() } else { stream.finish(throwing: reason) }
        }
    }

    /// Parses one line into `batch` (a line that is not JSON loses the connection).
    private func parse(_ line: LineFramer.Line, into batch: inout [JSON]) {
        guard case .line(let bytes) = line else {
            lose(.protocolViolation("a line longer than \(LineChannel.maxLine) bytes"))
            return
        }
        guard let m = try? JSON.parse(bytes) else {
            lose(.protocolViolation("a line that is not JSON: \(String(decoding: bytes.prefix(80), as: UTF8.self))"))
            return
        }
        batch.append(m)
    }

    private enum Route {
        case reply(Waiter, JSON)
        case event(Events.Continuation, String, JSON)
        case subscription(Events.Continuation, JSON, reconnected: Bool)
    }

    /// Hands the messages of one read to their callers and the stream: one lock for all of
    /// them, then each resumed or yielded in order, outside it.
    private func route(_ batch: [JSON]) {
        guard !batch.isEmpty else { return }
        let routes: [Route] = state.withLock { s in
            var routes: [Route] = []
            routes.reserveCapacity(batch.count)
            for m in batch {
                if let method = m["method"]?.stringValue {
                    if method != "hello", s.streamReady, let c = s.stream { routes.append(.event(c, method, m["params"] ?? .obj([:]))) }
                    continue
                }
                guard let id = m["id"]?.intValue else { continue }  // (null id: a line the daemon could not read)
                if let w = s.waiters.removeValue(forKey: id) {
                    routes.append(.reply(w, m))
                } else if id == s.subscribeID, let c = s.stream {
                    s.streamReady = true
                    routes.append(.subscription(c, m, reconnected: s.subscribeAfterReconnect))
                }
                if !s.cancelled.isEmpty { s.cancelled.remove(id) }  // (answered: nothing left to cancel)
            }
            return routes
        }
        for r in routes {
            switch r {
            case .reply(let w, let m):
                if let result = m["result"] {
                    w.continuation.resume(returning: result)
                } else if let error = m["error"] {
                    w.continuation.resume(throwing: ClientError.fromReply(error))
                } else {
                    w.continuation.resume(throwing: ClientError.protocolViolation("a reply with neither result nor error: \(TabBarConnection.excerpt(m.text))"))
                }
            case .event(let c, let method, let params):
                c.yield((try? TabBarEvent(name: method, params: params)) ?? .other(name: method, params: params))
            case .subscription(let c, let m, let reconnected):
                if let error = m["error"] {
                    c.finish(throwing: ClientError.fromReply(error))
                } else {
                    do {
                        let snapshot = try Snapshot(m["result"] ?? .null)
                        c.yield(reconnected ? .resync(snapshot, reconnected: true) : .subscribed(snapshot))
                    } catch {
                        c.finish(throwing: error)
                    }
                }
            }
        }
    }

    // MARK: Connecting

    /// Connects to `path` and reads the hello (blocking, up to `timeoutMs`; -1: no limit).
    static func handshake(path: String, timeoutMs: Int) throws -> Link {
        if let why = SocketPath.untrustedDirectory(of: path) { throw ClientError.connect(path: path, reason: why) }
        let fd = try TabBarConnection.connectSocket(path: path)
        do {
            do throws(Errno) { try Sys.setNonBlocking(fd) } catch {
                throw ClientError.io("cannot make the socket non-blocking: \(error)")
            }
            let deadline = timeoutMs < 0 ? nil : Deadline.after(ms: timeoutMs)
            var got: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                if let nl = got.firstIndex(of: 0x0A) {
                    let line = got[..<nl]
                    guard let first = try? JSON.parse(line) else {
                        throw ClientError.protocolViolation("expected the hello notification first, got \(TabBarConnection.excerpt(String(decoding: line, as: UTF8.self)))")
                    }
                    if first["method"]?.stringValue == "hello" {
                        return Link(fd: fd, hello: Hello(first["params"] ?? .obj([:])), leftover: Array(got[(nl + 1)...]))
                    }
                    if let error = first["error"], first["method"] == nil { throw ClientError.fromReply(error) }
                    throw ClientError.protocolViolation("expected the hello notification first, got \(TabBarConnection.excerpt(first.text))")
                }
                var pfd = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
                let n: Int
                do throws(Errno) { n = try Sys.poll(&pfd, timeoutMs: deadline?.remainingMs ?? -1) } catch {
                    throw ClientError.io("poll failed: \(error)")
                }
                if n == 0 { throw ClientError.timeout }
                let r: IOResult<Int>
                do throws(Errno) { r = try Sys.read(fd, into: &chunk) } catch { throw ClientError.closed }
                guard case .done(let k) = r else { continue }
                if k == 0 { throw ClientError.closed }
                got += chunk[0..<k]
            }
        } catch {
            try? Sys.close(fd)
            throw error
        }
    }
}
