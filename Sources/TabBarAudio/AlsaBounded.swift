import CALSA
import Glibc
import Synchronization

/// A libasound call given a deadline. PulseAudio's ALSA plugin (alsa-plugins 1.2.7.1) makes a new
/// server stream in every `snd_pcm_prepare` — which `snd_pcm_hw_params` and `snd_pcm_recover`
/// also run — and waits, with no deadline, until the server says the stream is ready;
/// pipewire-pulse says so only once a session manager has linked it. With no session manager
/// (none started, or WirePlumber gone while tabbard plays) the call never returns: the daemon
/// did not come up, or its audio thread hung and it ignored SIGTERM (docs/AUDIO.md).
///
/// `run` makes the call on a helper thread and waits at most `seconds`. When the deadline
/// passes, the caller gets nil and must forget the PCM without closing it: the helper is still
/// inside it, and when the call returns at last (the session manager is back, or the server
/// went away) the helper runs `late` (close the PCM). Until then no new call is started
/// (`stuck`): a retry loop does not leave a thread behind per attempt.
enum BoundedALSA {
    /// Calls whose deadline passed and that have not returned yet.
    static let stuck = Atomic<Int>(0)

    final class Call: Sendable {
        let body: @Sendable () -> Int32
        let late: @Sendable (Int32) -> Void
        let done: Int32
        let state = Mutex<(result: Int32?, abandoned: Bool)>((nil, false))
        init(body: @escaping @Sendable () -> Int32, late: @escaping @Sendable (Int32) -> Void, done: Int32) {
            self.body = body
            self.late = late
            self.done = done
        }
    }

    /// `body()`'s result, or nil when it did not return within `seconds` (then `late` gets it
    /// on the helper thread when it does). Runs `body` inline when no thread can be made.
    static func run(seconds: Double, _ body: @escaping @Sendable () -> Int32,
                    late: @escaping @Sendable (Int32) -> Void) -> Int32? {
        let fd = eventfd(0, Int32(EFD_CLOEXEC))
        guard fd >= 0 else { return body() }
        let call = Call(body: body, late: late, done: fd)
        let box = Unmanaged.passRetained(call)
        var tid = pthread_t()
        let r = pthread_create(&tid, nil, { arg in
            let call = Unmanaged<Call>.fromOpaque(arg!).takeRetainedValue()
            let result = call.body()
            let abandoned = call.state.withLock { s -> Bool in
                s.result = result
                return s.abandoned
            }
            if abandoned {
                call.late(result)
                Glibc.close(call.done)
                BoundedALSA.stuck.subtract(1, ordering: .releasing)
            } else {
                var one: UInt64 = 1
                _ = Glibc.write(call.done, &one, 8)
            }
            return nil
        }, box.toOpaque())
        if r != 0 {
            box.release()
            Glibc.close(fd)
            return body()
        }
        pthread_detach(tid)
        _ = pollReadable(fd, timeoutNanos: UInt64(seconds * 1e9))
        let result = call.state.withLock { s -> Int32? in
            if let r = s.result { return r }
            s.abandoned = true
            BoundedALSA.stuck.add(1, ordering: .releasing)
            return nil
        }
        if result != nil { Glibc.close(fd) }
        return result
    }
}

extension AlsaSink {
    /// Seconds a call into PulseAudio's plugin that makes a server stream may take (normally
    /// 10–64 ms: the session manager linking it).
    static let streamDeadline = 2.0

    /// Why a PulseAudio stream could not be made in time (an open or a prepare that gave up).
    static let noStreamReason = "the sound server did not make the stream ready (no session manager linked it?)"

    /// `what` on this PCM, bounded by `streamDeadline` through PulseAudio's plugin (see
    /// `BoundedALSA`), direct otherwise. A call that gives up forgets the PCM (`pcm` becomes nil;
    /// the helper closes it when the call returns) and returns -ETIMEDOUT; while such a call is
    /// still out, none is started (-ETIMEDOUT too).
    func bounded(_ pcm: OpaquePointer, _ what: @escaping @Sendable (OpaquePointer) -> Int32) -> Int32 {
        guard isPulsePlugin else { return what(pcm) }
        if BoundedALSA.stuck.load(ordering: .acquiring) > 0 { return -ETIMEDOUT }
        let handle = PCMHandle(pcm)
        guard let r = BoundedALSA.run(seconds: AlsaSink.streamDeadline, { what(handle.pcm) },
                                      late: { _ in snd_pcm_close(handle.pcm) }) else {
            if self.pcm == pcm { abandon() }
            return -ETIMEDOUT
        }
        return r
    }

    /// Forgets the PCM a helper thread is still inside (it closes it).
    func abandon() {
        pcm = nil
        closedBecause = AlsaSink.noStreamReason
        bytes?.deallocate()
        bytes = nil
    }
}

/// A PCM handed to a helper thread.
// Sendable because the PCM is used by one thread at a time: the bounded call's helper while it
// runs, the audio thread only after it returned in time (one that did not is never touched again).
struct PCMHandle: @unchecked Sendable {
    let pcm: OpaquePointer
    init(_ pcm: OpaquePointer) { self.pcm = pcm }
}
