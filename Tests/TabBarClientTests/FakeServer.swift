import Glibc
import TabBarCore

/// The daemon's side of one connection, for tests: blocking line reads and writes.
final class FakePeer {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    static let hello = #"{"jsonrpc":"2.0","method":"hello","params":{"server":"tabbard","version":"9.9.9","protocol":1,"max_line":65536,"features":[]}}"#

    /// Writes `text` (a newline is added when missing) in one go.
    func send(_ text: String) {
        var bytes = Array(text.utf8)
        if bytes.last != 0x0A { bytes.append(0x0A) }
        sendBytes(bytes)
    }

    func sendBytes(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += n
        }
    }

    /// The next line the client sent (without `\n`), or nil at end of input.
    func readLine() -> String? {
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// The next request, parsed.
    func readRequest() -> JSON? {
        guard let line = readLine() else { return nil }
        return try? JSON.parse(line)
    }

    /// Replies `result` (JSON text) to `request`.
    func reply(to request: JSON?, result: String) {
        send(#"{"jsonrpc":"2.0","id":\#(request?["id"]?.text ?? "null"),"result":\#(result)}"#)
    }

    func replyError(to request: JSON?, code: Int, kind: String, message: String, extra: String = "") {
        send(#"{"jsonrpc":"2.0","id":\#(request?["id"]?.text ?? "null"),"error":{"code":\#(code),"message":"\#(message)","data":{"kind":"\#(kind)"\#(extra)}}}"#)
    }

    func close() { Glibc.close(fd) }
}

/// Runs `body` on its own POSIX thread; `join` waits for it.
final class TestThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    private var thread = pthread_t()

    init(_ body: @escaping () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let r = pthread_create(&thread, nil, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        precondition(r == 0, "pthread_create failed")
    }

    func join() { pthread_join(thread, nil) }
}

/// A listening socket at a fresh temporary path; `accept` gives the next peer.
final class FakeListener {
    let directory: String
    let path: String
    let fd: Int32

    init() {
        var template = Array("/tmp/tabbarctl-test-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(dir != nil, "mkdtemp failed")
        directory = String(cString: dir!)
        path = directory + "/socket"
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        precondition(bound == 0 && listen(fd, 4) == 0, "bind/listen failed")
    }

    func accept() -> FakePeer {
        var c: Int32
        // CLOEXEC: processes other tests spawn meanwhile must not keep our peer open.
        // (accept4 is not imported; the listener is non-inheritable, so the window is tiny.)
        repeat { c = Glibc.accept(fd, nil, nil) } while c < 0 && errno == EINTR
        if c >= 0 { _ = fcntl(c, F_SETFD, FD_CLOEXEC) }
        return FakePeer(fd: c)
    }

    deinit {
        Glibc.close(fd)
        unlink(path)
        rmdir(directory)
    }
}
