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
/// it; requests are written by the task that makes them. A task that prefers `executor`
/// runs on that thread itself: no thread hop per reply (the mode for latency-sensitive code). Requests from several tasks may
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
    /// The connection's own I/O thread, as a task executor. A task that prefers it
    /// (`withTaskExecutorPreference(bar.executor) { … }`, `Task(executorPreference:)`,
    /// `group.addTask(executorPreference:)`) runs its nonisolated code on the thread that reads
    /// the socket: each reply resumes its caller right there, with no hop to another thread,
    /// and the requests its tasks make in one turn go out together (a KiB a `send`): a round
    /// trip then costs about what a raw blocking client's does (docs/PERFORMANCE.md). Code run
    /// there must not block: while it runs, no reply of this connection is read. Without a
    /// preference, replies resume their callers on the global executor, one thread hop each.
    public var executor: any TaskExecutor { core.executor }

    private let core: Core

    private init(core: Core) { self.core = core }

    deinit { core.close() }

    /// Connects to the daemon's socket: `path` if given, else as `tabbarctl` finds it
    /// (`instance` or `$TABBARD_SOCKET`, `$TABBARD_INSTANCE`, `$XDG_RUNTIME_DIR/tabbard/socket`…:
    /// `SocketPath.resolve(explicit:instance:)`), and reads its `hello`.
    /// Throws `ClientError.connect` saying why and what to do when no daemon answers there.
    public static func connect(path: String? = nil, instance: String? = nil, options: Options = Options()) async throws -> TabBar {
        try connectNow(path: path, instance: instance, options: options)
    }

    /// `connect`, blocking the calling thread (for TabBarTesting's synchronous harness).
    @_spi(Harness)
    public static func connectNow(path: String? = nil, instance: String? = nil, options: Options = Options()) throws -> TabBar {
        let resolved = SocketPath.resolve(explicit: path, instance: instance)
        let link = try Core.handshake(path: resolved, timeoutMs: options.timeout.map(Core.milliseconds) ?? -1)
        let core = Core(path: resolved, options: options, link: link)
        core.start()
        return TabBar(core: core)
    }

    /// How a person starts the daemon, for the hints of connection errors
    /// (`ClientError.connect`'s reason). A program sets it once, before connecting (tabbarctl:
    /// `make run` in the source tree, systemctl when installed).
    public static var startAdvice: String {
        get { Wire.advice.withLock { $0 } }
        set { Wire.advice.withLock { $0 = newValue } }
    }

    /// Closes the connection: requests in flight throw `ClientError.closed`, the event
    /// stream ends. Also done when the last reference goes away.
    public func close() { core.close() }

    // MARK: Requests, typed

    /// `ping`: the daemon answers.
    public nonisolated(nonsending) func ping() async throws {
        _ = try await send(Requests.ping())
    }

    /// `state.get`: the bar's state and its `seq`.
    public nonisolated(nonsending) func state() async throws -> Snapshot {
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
    public nonisolated(nonsending) func configure(_ params: JSON) async throws -> Snapshot {
        try Snapshot(try await send(Requests.configure(params)))
    }

    /// `tab.select`: selects a tab by id (`.id("chat")`) or position (`.index(1)`). `ifSeq`:
    /// only if the state is still at that `seq` (else `ClientError.rpc(kind: "conflict")`).
    /// `source: .program` selects without a click.
    @discardableResult
    public nonisolated(nonsending) func select(_ tab: TabRef, ifSeq: UInt64? = nil, source: Source = .user) async throws -> Selection {
        try await send(Requests.select(tab, ifSeq: ifSeq, source: source)) { r throws(ClientError) in
            Selection(seq: try Decode.seq(r, "seq"), selected: try Decode.string(r, "selected"),
                      previous: r["previous"]?.stringValue, reselected: r["reselected"]?.boolValue ?? false)
        }
    }

    /// `action.trigger`: a center or action item becomes the active action. Returns the `seq`.
    @discardableResult
    public nonisolated(nonsending) func trigger(_ tab: String, source: Source = .user) async throws -> UInt64 {
        try await send(Requests.trigger(tab, source: source)) { r throws(ClientError) in try Decode.seq(r, "seq") }
    }

    /// `action.finish`: the item's action ended. Returns the `seq`.
    @discardableResult
    public nonisolated(nonsending) func finishAction(_ tab: String) async throws -> UInt64 {
        try await send(Requests.finishAction(tab)) { r throws(ClientError) in try Decode.seq(r, "seq") }
    }

    /// `badge.set`: `.count(120)` (shown as `99+`), `.text("new")`, `.dot`, or nil to
    /// remove it; `hidden`: keep it but hide it (nil: as it was).
    @discardableResult
    public nonisolated(nonsending) func setBadge(_ badge: Badge?, on tab: String, hidden: Bool? = nil) async throws -> BadgeResult {
        try Self.badgeResult(try await send(Requests.setBadge(badge, on: tab, hidden: hidden)))
    }

    /// `badge.set {"hidden"}`: hides or shows an item's badge, keeping its value.
    @discardableResult
    public nonisolated(nonsending) func hideBadge(_ hidden: Bool, on tab: String) async throws -> BadgeResult {
        try Self.badgeResult(try await send(Requests.hideBadge(hidden, on: tab)))
    }

    /// `badge.clear`: removes an item's badge. Returns the `seq`.
    @discardableResult
    public nonisolated(nonsending) func clearBadge(on tab: String) async throws -> UInt64 {
        try await send(Requests.clearBadge(on: tab)) { r throws(ClientError) in try Decode.seq(r, "seq") }
    }

    /// `feedback.set`: the profile (`full`, `quiet`, `silent`), the clicks' volume (0…1), or both.
    @discardableResult
    public nonisolated(nonsending) func setFeedback(profile: FeedbackProfile? = nil, volume: Double? = nil) async throws -> Feedback {
        let f = try await send(Requests.setFeedback(profile: profile, volume: volume))["feedback"] ?? .null
        return Feedback(profile: try Decode.choice(f, "profile"), volume: f["volume"]?.doubleValue ?? 1)
    }

    /// `touch`: a finger at (`x`, `y`) bar points, `.down` then `.up` (or `.cancel`). The
    /// daemon hit-tests, highlights on down, commits (and clicks) on up. `touchID` names one
    /// finger's sequence so a replayed one is ignored.
    @discardableResult
    public nonisolated(nonsending) func touch(_ phase: TouchPhase, x: Double, y: Double, touchID: Int? = nil) async throws -> TouchResult {
        try await send(Requests.touch(phase, x: x, y: y, touchID: touchID)) { r throws(ClientError) in
            TouchResult(seq: try Decode.seq(r, "seq"), target: r["target"]?.stringValue,
                        consumed: r["consumed"]?.boolValue ?? false,
                        commit: r["commit"]?.stringValue.flatMap(Commit.init(rawValue:)),
                        ignored: r["ignored"]?.boolValue ?? false)
        }
    }

    /// `tab.highlight`: a press the front end tracks itself began, ended or was cancelled. Returns the `seq`.
    @discardableResult
    public nonisolated(nonsending) func highlight(_ tab: String, _ phase: HighlightPhase) async throws -> UInt64 {
        try await send(Requests.highlight(tab, phase)) { r throws(ClientError) in try Decode.seq(r, "seq") }
    }

    /// `nav.push`: a screen was pushed; `hidesBar`: whether it hides the bar. Returns the `seq`.
    @discardableResult
    public nonisolated(nonsending) func push(hidesBar: Bool) async throws -> UInt64 {
        try await send(Requests.push(hidesBar: hidesBar)) { r throws(ClientError) in try Decode.seq(r, "seq") }
    }

    /// `nav.pop`: the top screen was popped. Returns the `seq`.
    @discardableResult
    public nonisolated(nonsending) func pop() async throws -> UInt64 {
        try await send(Requests.pop()) { r throws(ClientError) in try Decode.seq(r, "seq") }
    }

    /// `sound.play`: plays a loaded sound by name; returns its voice (`sound.played` names it).
    @discardableResult
    public nonisolated(nonsending) func playSound(_ name: String) async throws -> Int {
        try Decode.int(try await send(Requests.playSound(name)), "voice")
    }

    // MARK: Requests, raw

    /// Any request: `method` with `params`; returns the reply's `result`. Throws
    /// `ClientError.rpc` for an error reply (`code`, `kind`, `message`, `data`).
    @discardableResult
    public nonisolated(nonsending) func call(_ method: String, _ params: JSON? = nil) async throws -> JSON {
        try await core.request(method, params)
    }

    /// Sends a notification (no id, no reply): the daemon carries it out and answers nothing.
    public func notify(_ method: String, _ params: JSON? = nil) throws {
        try core.write(Wire.requestLine(id: nil, method: method, params: params))
    }

    /// Sends `line` as it is (a newline is added when missing), for a tool that passes
    /// another program's requests on (`tabbarctl pipe`): its reply comes in `messages()`.
    /// Give such lines ids of their own kind (strings, say): numbers may be this client's.
    public func sendRaw(_ line: String) throws {
        try sendRaw(Array(line.utf8))
    }

    /// `sendRaw` of the line's bytes as they are (not UTF-8: the daemon refuses it).
    public func sendRaw(_ line: [UInt8]) throws {
        var bytes = line
        if bytes.last != 0x0A { bytes.append(0x0A) }
        try core.write(bytes)
    }

    /// Sends `bytes` exactly as they are (no newline added), from a thread that may block: a
    /// piece of a stream of lines that a bridge copies on as it reads it (`tabbarctl pipe`).
    /// The daemon frames them, and answers a line over its `max_line` itself. Returns once at
    /// most 64 KiB wait to be sent, so a bridge reads no faster than the daemon does (while it
    /// waits, the calling thread writes to the socket itself). Send nothing else on this
    /// connection meanwhile: its lines and these pieces would interleave.
    public func sendBlocking(_ bytes: [UInt8]) throws {
        try core.write(bytes)
        try core.waitForRoom(upTo: 64 << 10)
    }

    /// Sends nothing more: the daemon reads the end of the stream once what was sent has gone
    /// out, and still answers it (the replies come as before). Later sends throw `.closed`.
    public func closeWrite() {
        core.closeWrite()
    }

    // MARK: Events

    /// Every line the daemon sends from now on that no request of this client's waits for,
    /// in order, each with its exact text (`ReceivedMessage`): the events of the subscription
    /// (also when `events(topics:)` has them typed), the replies to `sendRaw` lines, error
    /// replies with a null id. For tools that show or pass on the protocol itself
    /// (`tabbarctl monitor --json` prints each event's line as the daemon wrote it).
    ///
    /// ```swift
    /// let lines = bar.messages()        // first, so that no line is missed
    /// _ = try await bar.call("subscribe")
    /// for try await line in lines { print(line.text) }
    /// ```
    ///
    /// One such stream per connection: a second call ends the first. It ends after `close()`,
    /// and throws `ClientError.closed` (or `.io`) when the connection is lost, also with
    /// `Options.reconnect` (the lines of a new connection are another conversation).
    public func messages() -> AsyncThrowingStream<ReceivedMessage, any Error> {
        core.messages()
    }

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

    private nonisolated(nonsending) func send(_ r: Requests.Line) async throws -> JSON {
        try await core.request(r) { $0.json }
    }

    /// `r`'s result as `decode` reads it from the parsed line (no `JSON` tree built).
    private nonisolated(nonsending) func send<R>(_ r: Requests.Line, _ decode: @escaping (JSONValue) throws -> R) async throws -> R {
        try await core.request(r, decode: decode)
    }

    static func badgeResult(_ r: JSON) throws -> BadgeResult {
        BadgeResult(seq: try Decode.seq(r, "seq"), badge: try Decode.badge(r["badge"]), ignored: r["ignored"]?.boolValue ?? false)
    }
}

/// A request's caller, waiting for its reply (`Core.Waiter`).
/// @unchecked Sendable: immutable once made, and used by the one thread that took it out of
/// `waiters` under the state's lock (so `decode` runs once, on that thread).
class PendingReply: @unchecked Sendable {
    /// Resumes the caller with the result, read in place (on the reader thread).
    func reply(_ result: JSONValue) {}
    /// Resumes the caller with `error`.
    func fail(_ error: any Error) {}

}

/// A caller that wants an `R`, read from the result by `decode` (@unchecked Sendable: as `PendingReply`).
final class Pending<R>: PendingReply, @unchecked Sendable {
    let continuation: UnsafeContinuation<R, any Error>
    let decode: (JSONValue) throws -> R

    init(_ continuation: UnsafeContinuation<R, any Error>, _ decode: @escaping (JSONValue) throws -> R) {
        self.continuation = continuation
        self.decode = decode
    }

    override func reply(_ result: JSONValue) {
        let value: R
        do { value = try decode(result) } catch {
            continuation.resume(throwing: error)
            return
        }
        continuation.resume(returning: value)
    }

    override func fail(_ error: any Error) { continuation.resume(throwing: error) }
}

/// The connection's state, shared by the tasks that send and the thread that reads.
final class Core: Sendable {
    typealias Events = AsyncThrowingStream<TabBarEvent, any Error>
    typealias Messages = AsyncThrowingStream<ReceivedMessage, any Error>

    struct Waiter {
        let pending: PendingReply
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
        var waiters = Waiters<Waiter>()
        /// Requests cancelled before their continuation was registered.
        var cancelled: Set<Int> = []
        /// Requests whose caller gave up (cancelled, timed out): their replies are dropped.
        var late: Set<Int> = []
        /// The stream of `messages()`, if asked for.
        var raw: Messages.Continuation?
        var rawGeneration = 0
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
    /// (@unchecked Sendable: it lives in its `Mutex` and is only touched under the lock;
    /// a request's line is written into its outbox there.)
    struct Writer: ~Copyable, @unchecked Sendable {
        var fd: Int32
        /// Bytes the socket did not take yet (the reader writes them when it can); a request
        /// writes its line straight into it.
        var outbox = ByteBuffer(capacity: 4096)
        var lost: ClientError?
        /// `closeWrite()` was called: nothing more is sent (the socket's write side is shut
        /// down once the outbox is empty).
        var writeClosed = false
    }

    let path: String
    let options: Options
    let state: Mutex<State>
    let writer: Mutex<Writer>
    /// The last request id used.
    let ids = Atomic<Int>(0)
    /// Whether the reader keeps each line's text and tree (a `messages()` stream is open).
    let keepText = Atomic<Bool>(false)
    /// Wakes the reader: bytes to write, a deadline, a job, close.
    let wakeup: Wakeup
    let timeoutNs: UInt64
    /// The reader thread as a task executor (`TabBar.executor`).
    let executor: IOExecutor

    typealias Options = TabBar.Options

    init(path: String, options: Options, link: Link) {
        self.path = path
        self.options = options
        state = Mutex(State(fd: link.fd, hello: link.hello, leftover: link.leftover))
        writer = Mutex(Writer(fd: link.fd))
        let w = Wakeup()
        wakeup = w
        executor = IOExecutor(wakeup: w)
        timeoutNs = options.timeout.map { UInt64(max(0, Core.milliseconds($0))) * 1_000_000 } ?? 0
    }

    static func milliseconds(_ d: Duration) -> Int {
        let c = d.components
        return Int(c.seconds) * 1000 + Int(c.attoseconds / 1_000_000_000_000_000)
    }

    func start() {
        let r = startThread { self.run() }
        if r != 0 {
            lose(.io("cannot start the reader thread: \(errnoText(r))"))
            executor.retire()
        }
    }

    func wake() { wakeup.wake() }

    func close() {
        state.withLock { $0.closed = true }
        wake()
    }

    // MARK: Sending

    /// Queues what `write` writes on the socket, written now if it takes it, unless `deferred`: then
    /// the caller is the reader thread, which writes them with the other lines of its turn,
    /// or as soon as they fill a `chunk` (so that the daemon starts on those while the rest
    /// are made). Call with the lock held. Returns whether the reader must be woken (bytes
    /// left over).
    static func enqueue(_ s: inout Writer, deferred: Bool = false, _ write: (inout ByteBuffer) -> Void) throws(ClientError) -> Bool {
        guard s.fd >= 0 else { throw s.lost ?? .closed }
        guard !s.writeClosed else { throw .closed }
        let full = s.outbox.count > 0 && !deferred  // (the socket is full: the reader writes when it can)
        write(&s.outbox)
        if full || (deferred && s.outbox.count < chunk) { return false }
        try drain(&s)
        return !deferred && s.outbox.count > 0
    }

    /// `enqueue` of `bytes` as they are.
    static func enqueue(_ s: inout Writer, _ bytes: [UInt8]) throws(ClientError) -> Bool {
        try enqueue(&s) { $0.append(bytes) }
    }

    /// How many bytes of deferred lines go out in one `send`.
    static let chunk = 1024

    /// Writes what the outbox holds, as far as the socket takes it.
    static func drain(_ w: inout Writer) throws(ClientError) {
        var offset = 0
        defer { w.outbox.removeFirst(offset) }
        while offset < w.outbox.count {
            let r: IOResult<Int>
            do throws(Errno) { r = try Sys.send(w.fd, UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: w.outbox.bytes[offset...]))) } catch {
                switch error.code {
                case EPIPE, ECONNRESET, ENOTCONN: throw .closed
                default: throw .io("send failed: \(error)")
                }
            }
            guard case .done(let n) = r else { break }
            offset += n
        }
        if offset == w.outbox.count && w.writeClosed { _ = Glibc.shutdown(w.fd, Int32(SHUT_WR)) }
    }

    func write(_ bytes: [UInt8]) throws(ClientError) {
        let wakeNeeded = try writer.withLock { w throws(ClientError) in try Core.enqueue(&w, bytes) }
        if wakeNeeded { wake() }
    }

    /// Blocks the calling thread until at most `limit` bytes wait in the outbox, writing them
    /// itself as the socket takes them (`TabBar.sendBlocking`).
    func waitForRoom(upTo limit: Int) throws(ClientError) {
        while true {
            let fd = try writer.withLock { w throws(ClientError) -> Int32 in
                guard w.fd >= 0 else { throw w.lost ?? .closed }
                try Core.drain(&w)
                return w.outbox.count > limit ? w.fd : -1
            }
            if fd < 0 { return }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = Glibc.poll(&p, 1, 100)  // (bounded: the reader may close the descriptor meanwhile)
        }
    }

    /// Adds `id` to a set of ids to forget later (kept bounded: a reply that never comes
    /// must not grow it for good).
    static func remember(_ id: Int, in set: inout Set<Int>) {
        if set.count >= 1024 { set.removeAll() }
        set.insert(id)
    }

    func nextID() -> Int { ids.wrappingAdd(1, ordering: .relaxed).newValue }

    nonisolated(nonsending) func request(_ method: String, _ params: JSON?) async throws -> JSON {
        try await request(Requests.Line(method, params.map { p in { $0.json(p) } }), decode: { $0.json })
    }

    /// A typed request (`Requests`), its line written without a `JSON` tree; its result
    /// `decode`d in place, on the reader thread, from the parsed line (no tree either).
    nonisolated(nonsending) func request<R>(_ r: Requests.Line, decode: @escaping (JSONValue) throws -> R) async throws -> R {
        try await request(encoding: { id, out in out.request(id: id, method: r.method, params: r.write) }, decode: decode)
    }

    /// Sends the line `encode` writes for a new id (straight into the outbox) and waits for its reply's result, as
    /// `decode` reads it. It runs where its caller runs (`nonisolated(nonsending)`, as the
    /// public requests do), and its cancellation handler inherits that executor too
    /// (`_unsafeInheritExecutor_withTaskCancellationHandler`; the `isolation:` form hops to the
    /// generic executor and back): a request costs two executor checks of the runtime where it
    /// cost six (about a tenth of the pipelined rate on `bar.executor`, docs/PERFORMANCE.md).
    nonisolated(nonsending) func request<R>(encoding encode: (Int, inout ByteBuffer) -> Void, decode: @escaping (JSONValue) throws -> R) async throws -> R {
        let id = nextID()
        let deadline = timeoutNs == 0 ? 0 : MonotonicClock.nanoseconds() + timeoutNs
        return try await _unsafeInheritExecutor_withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (c: UnsafeContinuation<R, any Error>) in
                let registered: (failure: (any Error)?, wake: Bool) = state.withLock { s in
                    if !s.cancelled.isEmpty, s.cancelled.remove(id) != nil { return (CancellationError(), false) }
                    if s.fd < 0 || s.closed { return (s.lost ?? .closed, false) }
                    s.waiters.insert(Waiter(pending: Pending(c, decode), deadline: deadline), for: id)
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
                    let deferred = executor.isCurrent
                    let leftOver = try writer.withLock { w throws(ClientError) in try Core.enqueue(&w, deferred: deferred) { encode(id, &$0) } }
                    if leftOver || registered.wake { wake() }
                } catch {
                    // (Unless the reader has failed it already, for the same loss.)
                    if let w = state.withLock({ $0.waiters.remove(id) }) { w.pending.fail(error) }
                }
            }
        } onCancel: {
            let w = state.withLock { s -> Waiter? in
                if let w = s.waiters.remove(id) {
                    Core.remember(id, in: &s.late)
                    return w
                }
                s.cancelled.insert(id)  // (not registered yet, or answered already: then removed below)
                if s.cancelled.count > 1024 { s.cancelled.removeAll() }
                return nil
            }
            w?.pending.fail(CancellationError())
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
                do throws(ClientError) {
                    wakeNeeded = try queueSubscribe(&s, topics, afterReconnect: false)
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

    func messages() -> Messages {
        let (stream, continuation) = Messages.makeStream()
        let (old, failure): (Messages.Continuation?, ClientError?) = state.withLock { s in
            s.rawGeneration += 1
            let generation = s.rawGeneration
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { s in if s.rawGeneration == generation { s.raw = nil } }
            }
            let old = s.raw
            if s.fd < 0 || s.closed {
                s.raw = nil
                return (old, s.lost ?? .closed)
            }
            s.raw = continuation
            keepText.store(true, ordering: .relaxed)
            return (old, nil)
        }
        old?.finish()
        if let failure { continuation.finish(throwing: failure) }
        return stream
    }

    /// Queues the event stream's `subscribe` (its reply, by `s.subscribeID`, makes the stream
    /// ready). Returns whether the reader must be woken to send it.
    func queueSubscribe(_ s: inout State, _ topics: [String]?, afterReconnect: Bool) throws(ClientError) -> Bool {
        let id = nextID()
        s.subscribeID = id
        s.subscribeAfterReconnect = afterReconnect
        s.streamReady = false
        let line = Wire.requestLine(id: id, Requests.subscribe(topics))
        return try writer.withLock { w throws(ClientError) in try Core.enqueue(&w, line) }
    }

    func closeWrite() {
        let wakeNeeded = writer.withLock { w -> Bool in
            guard w.fd >= 0, !w.writeClosed else { return false }
            w.writeClosed = true
            if w.outbox.count == 0 { _ = Glibc.shutdown(w.fd, Int32(SHUT_WR)) }
            return w.outbox.count > 0  // (the reader shuts it once the outbox is out)
        }
        if wakeNeeded { wake() }
    }

    func endStream(_ generation: Int) {
        let wakeNeeded: Bool = state.withLock { s in
            guard s.streamGeneration == generation, s.stream != nil else { return false }
            s.stream = nil
            s.topics = .none
            s.subscribeID = 0
            let r = Requests.unsubscribe()
            let line = Wire.requestLine(id: nil, r)
            return (try? writer.withLock { w throws(ClientError) in try Core.enqueue(&w, line) }) ?? false
        }
        if wakeNeeded { wake() }
    }

    // MARK: Reading (the reader thread)

    func run() {
        var framer = LineFramer(maxLine: Wire.maxLine)
        var buffer = [UInt8](repeating: 0, count: 65536)
        let doc = JSONDocument()  // (one for every line read: parsed in place, then routed)
        // (Reused from turn to turn: a round trip allocates none of these.)
        var batch: [Incoming] = []
        var routes: [Route] = []
        var fds = [pollfd(fd: -1, events: 0, revents: 0), pollfd(fd: wakeup.fd, events: Int16(POLLIN), revents: 0)]
        var delay = UInt64(Core.milliseconds(options.minDelay))
        var nextCheck: UInt64 = 0
        var first = state.withLock { s in
            let l = s.leftover
            s.leftover = []
            return l
        }
        executor.thread.store(UInt(pthread_self()), ordering: .relaxed)
        defer { executor.retire() }
        while true {
            executor.runQueued()
            if !first.isEmpty {
                batch.removeAll(keepingCapacity: true)
                let keep = keepText.load(ordering: .relaxed)
                first.withUnsafeBufferPointer { b in framer.feed(b) { parse($0, doc, keepText: keep, into: &batch, &routes) } }
                route(batch, &routes)
                first = []
            }
            let now = MonotonicClock.nanoseconds()
            let (fd, closed, hasWaiters) = state.withLock { s in (s.fd, s.closed, !s.waiters.isEmpty) }
            let wantOut = flush()  // (what the jobs just run have queued goes out in one send)
            if closed { break }
            if fd < 0 {
                guard options.reconnect else { break }
                if sleep(ms: delay) { break }
                delay = min(delay * 2, UInt64(Core.milliseconds(options.maxDelay)))
                guard let link = try? Core.handshake(path: path, timeoutMs: options.timeout.map(Core.milliseconds) ?? 5000) else { continue }
                delay = UInt64(Core.milliseconds(options.minDelay))
                framer = LineFramer(maxLine: Wire.maxLine)
                first = link.leftover
                let wakeNeeded: Bool = state.withLock { s in
                    s.fd = link.fd
                    s.hello = link.hello
                    s.lost = nil
                    writer.withLock { w in
                        w.fd = link.fd
                        w.outbox.removeAll()
                        w.lost = nil
                        w.writeClosed = false
                    }
                    guard case .some(let topics) = s.topics, s.stream != nil else { return false }
                    return (try? queueSubscribe(&s, topics, afterReconnect: true)) ?? false
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
            fds[0] = pollfd(fd: fd, events: Int16(POLLIN) | (wantOut ? Int16(POLLOUT) : 0), revents: 0)
            fds[1].revents = 0
            let n = executor.poll(&fds, timeoutMs: timeout)
            if timeout < 0 { state.withLock { $0.readerSleeping = false } }
            if n <= 0 { continue }
            if fds[1].revents != 0 {
                wakeup.drain()
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
                batch.removeAll(keepingCapacity: true)
                let keep = keepText.load(ordering: .relaxed)
                if got == 0 {
                    framer.finish { parse($0, doc, keepText: keep, into: &batch, &routes) }
                    route(batch, &routes)
                    lose(.closed)
                    continue
                }
                buffer.withUnsafeBufferPointer { b in
                    framer.feed(UnsafeBufferPointer(rebasing: b[0..<got])) { parse($0, doc, keepText: keep, into: &batch, &routes) }
                }
                route(batch, &routes)
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
            var fds = [pollfd(fd: wakeup.fd, events: Int16(POLLIN), revents: 0)]
            if executor.poll(&fds, timeoutMs: Int32((deadline - now) / 1_000_000) + 1) > 0 {
                wakeup.drain()
            }
            executor.runQueued()
        }
    }

    /// Writes what the outbox holds, as far as the socket takes it. Returns whether bytes
    /// are left (the socket is full: wait for it to take more).
    @discardableResult
    private func flush() -> Bool {
        let result: Result<Bool, ClientError> = writer.withLock { w in
            guard w.fd >= 0, w.outbox.count > 0 else { return .success(false) }
            do throws(ClientError) { try Core.drain(&w) } catch { return .failure(error) }
            return .success(w.outbox.count > 0)
        }
        switch result {
        case .success(let pending): return pending
        case .failure(let error):
            lose(error)
            return false
        }
    }

    /// Fails the requests whose deadline has passed.
    private func expire(_ now: UInt64) {
        let due: [Waiter] = state.withLock { s in
            let due = s.waiters.remove { $0.deadline != 0 && $0.deadline <= now }
            for (id, _) in due { Core.remember(id, in: &s.late) }
            return due.map(\.element)
        }
        for w in due { w.pending.fail(ClientError.timeout) }
    }

    /// The connection is gone: every request in flight fails with `reason`; without
    /// reconnecting the stream ends with it too.
    func lose(_ reason: ClientError) {
        var raw: Messages.Continuation?
        let (waiters, stream): ([Waiter], Events.Continuation?) = state.withLock { s in
            if s.lost == nil { s.lost = reason }
            let lost = s.lost
            writer.withLock { w in  // (first: no writer sends on it while it is closed)
                w.fd = -1
                w.outbox.removeAll()
                w.lost = lost
            }
            if s.fd >= 0 { try? Sys.close(s.fd) }
            s.fd = -1
            let w = s.waiters.removeAll()
            var stream: Events.Continuation?
            if !options.reconnect || s.closed {
                stream = s.stream
                s.stream = nil
                s.topics = .none
            }
            raw = s.raw  // (the lines of a connection: they end with it)
            s.raw = nil
            return (w, stream)
        }
        keepText.store(false, ordering: .relaxed)
        if let raw {
            if case .closed = reason, state.withLock({ $0.closed }) { raw.finish() } else { raw.finish(throwing: reason) }
        }
        for w in waiters { w.pending.fail(reason) }
        if let stream {
            if case .closed = reason, state.withLock({ $0.closed }) { stream.finish() } else { stream.finish(throwing: reason) }
        }
    }

    /// One line from the daemon, as the reader routes it: read in place from the tape, with
    /// a tree built only of the part its receiver takes.
    struct Incoming {
        /// A notification's method (an event, or the hello).
        var method: String?
        /// A reply's id (nil: null, or not a number).
        var id: Int?
        /// A notification's params; a reply's result or error.
        var body: JSON = .null
        var isError = false
        /// A reply with neither result nor error.
        var malformed = false
        /// The line as it came (kept when a raw stream wants it, or for a malformed reply).
        var text: String?
        /// The whole line's tree (kept when a raw stream wants it).
        var whole: JSON?

        /// The line for `messages()` (nil when it was read before that stream was asked for).
        var received: ReceivedMessage? {
            guard let whole, let text else { return nil }
            return ReceivedMessage(json: whole, text: text)
        }
    }

    /// Parses one line into `batch` with the reader's `doc` (a line that is not JSON loses
    /// the connection). `keepText`: the line's text is kept too (`messages()` wants it).
    private func parse(_ line: LineFramer.Line, _ doc: JSONDocument, keepText: Bool, into batch: inout [Incoming], _ routes: inout [Route]) {
        guard case .line(let bytes) = line else {
            lose(.protocolViolation("a line longer than \(Wire.maxLine) bytes"))
            return
        }
        // A result in the daemon's own form, its request waiting: only the result is parsed.
        if let (id, result) = Wire.resultParts(bytes), (try? doc.parse(result)) != nil {
            if !batch.isEmpty {
                route(batch, &routes)
                batch.removeAll(keepingCapacity: true)
            }
            if let w = state.withLock({ $0.waiters.remove(id) }) {
                withExtendedLifetime(doc) { w.pending.reply(doc.root) }
                return
            }
        }
        do throws(JSONParseError) { try doc.parse(bytes) } catch {
            lose(.protocolViolation("a line that is not JSON: \(String(decoding: bytes.prefix(80), as: UTF8.self))"))
            return
        }
        var m = Incoming()
        var answered = false
        withExtendedLifetime(doc) {
            let root = doc.root
            // A result its request waits for: decoded in place, no tree built (what came
            // before it in this read is handed out first, in order).
            if root.kind == .object, root["method"] == nil, let id = root["id"]?.intValue, let r = root["result"] {
                if !batch.isEmpty {
                    route(batch, &routes)
                    batch.removeAll(keepingCapacity: true)
                }
                if let w = state.withLock({ $0.waiters.remove(id) }) {
                    w.pending.reply(r)
                    answered = true
                    return
                }
            }
            if keepText { m.whole = root.json }
            guard root.kind == .object else { return }
            if let method = root["method"]?.stringValue {
                m.method = method
                m.body = root["params"]?.json ?? .obj([:])
            } else {
                m.id = root["id"]?.intValue
                if let r = root["result"] {
                    m.body = r.json
                } else if let e = root["error"] {
                    m.body = e.json
                    m.isError = true
                } else {
                    m.malformed = true
                }
            }
        }
        if answered { return }
        if keepText || m.malformed { m.text = String(decoding: bytes, as: UTF8.self) }
        batch.append(m)
    }

    private enum Route {
        case reply(Waiter, Incoming)
        case event(Events.Continuation, String, JSON)
        case subscription(Events.Continuation, Incoming, reconnected: Bool)
        case raw(Messages.Continuation, ReceivedMessage)
    }

    /// Hands the messages of one read to their callers and the streams: one lock for all of
    /// them, then each resumed or yielded in order, outside it. `routes`: the reader's
    /// reused scratch array (left empty).
    private func route(_ batch: [Incoming], _ routes: inout [Route]) {
        guard !batch.isEmpty else { return }
        routes.removeAll(keepingCapacity: true)
        state.withLock { s in
            for m in batch {
                if let method = m.method {
                    guard method != "hello" else { continue }
                    if s.streamReady, let c = s.stream { routes.append(.event(c, method, m.body)) }
                    if let c = s.raw, let r = m.received { routes.append(.raw(c, r)) }
                    continue
                }
                if let id = m.id {
                    // (A result its request waits for never comes here: `parse` hands it over.)
                    if m.isError || m.malformed, let w = s.waiters.remove(id) {
                        routes.append(.reply(w, m))
                        continue
                    }
                    if id == s.subscribeID, let c = s.stream {
                        s.streamReady = true
                        routes.append(.subscription(c, m, reconnected: s.subscribeAfterReconnect))
                        continue
                    }
                    if !s.cancelled.isEmpty, s.cancelled.remove(id) != nil { continue }  // (answered: nothing left to cancel)
                    if !s.late.isEmpty, s.late.remove(id) != nil { continue }  // (its caller gave up)
                }
                // A reply no request of this client's waits for (to a raw line; null id: a
                // line the daemon could not read).
                if let c = s.raw, let r = m.received { routes.append(.raw(c, r)) }
            }
        }
        defer { routes.removeAll(keepingCapacity: true) }
        for r in routes {
            switch r {
            case .reply(let w, let m):
                if m.malformed {
                    w.pending.fail(ClientError.protocolViolation("a reply with neither result nor error: \(Wire.excerpt(m.text ?? ""))"))
                } else {
                    w.pending.fail(ClientError.fromReply(m.body))
                }
            case .event(let c, let method, let params):
                c.yield((try? TabBarEvent(name: method, params: params)) ?? .other(name: method, params: params))
            case .subscription(let c, let m, let reconnected):
                if m.isError {
                    c.finish(throwing: ClientError.fromReply(m.body))
                } else {
                    do {
                        let snapshot = try Snapshot(m.malformed ? .null : m.body)
                        c.yield(reconnected ? .resync(snapshot, reconnected: true) : .subscribed(snapshot))
                    } catch {
                        c.finish(throwing: error)
                    }
                }
            case .raw(let c, let m):
                c.yield(m)
            }
        }
    }

    // MARK: Connecting

    /// Connects to `path` and reads the hello (blocking, up to `timeoutMs`; -1: no limit).
    static func handshake(path: String, timeoutMs: Int) throws -> Link {
        if let why = SocketPath.untrustedDirectory(of: path) { throw ClientError.connect(path: path, reason: why) }
        let fd = try Wire.connectSocket(path: path)
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
                        throw ClientError.protocolViolation("expected the hello notification first, got \(Wire.excerpt(String(decoding: line, as: UTF8.self)))")
                    }
                    if first["method"]?.stringValue == "hello" {
                        return Link(fd: fd, hello: Hello(first["params"] ?? .obj([:])), leftover: Array(got[(nl + 1)...]))
                    }
                    if let error = first["error"], first["method"] == nil { throw ClientError.fromReply(error) }
                    throw ClientError.protocolViolation("expected the hello notification first, got \(Wire.excerpt(first.text))")
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
