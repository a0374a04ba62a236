@preconcurrency import Glibc
import TabBarCore
import CSystemd

/// Events: each encoded once and queued for every subscriber that wants it; a subscriber
/// too slow to keep up loses its queued events (never its replies) for one `state.resync`.
extension Server {
    /// Encodes an event once and queues it for every subscriber that wants it (counted
    /// whoever listens; built only when someone does).
    func broadcast<E: EventLine>(_ event: E) {
        stats.events += 1
        guard !clients.subscribers.isEmpty else { return }
        work.scratch.removeAll()
        event.write(into: &work.scratch)
        publish(event.method, line: work.scratch.bytes)
    }

    /// `broadcast` for the server's own events (`sound.played`, `server.stopping` …).
    func broadcast(_ event: Event) {
        stats.events += 1
        guard !clients.subscribers.isEmpty else { return }
        Wire.notification(event.method, event.params).withUnsafeBufferPointer { publish(event.method, line: $0) }
    }

    /// Queues an encoded event line for every subscriber that wants `method` (the event is
    /// already counted in `stats.events`).
    func publish(_ method: String, line: UnsafeBufferPointer<UInt8>) {
        for s in clients.subscribers where s.wants(method) {
            if s.owesResync { continue }
            if s.queued + line.count > config.maxQueuedBytes && fellBehind(s, adding: line.count) {
                // Too slow: its queued events go (its replies stay), one state.resync replaces them.
                s.dropEvents()
                s.owesResync = true
                if !s.behind {
                    // Once per episode: a stuck subscriber overflows again at every few events.
                    s.behind = true
                    peerLogs.write(.behind, .info, "Subscriber fell behind; sending state.resync", ["client": String(s.id), "pid": String(s.pid)],
                                   nowNs: MonotonicClock.nanoseconds())
                }
            } else {
                s.out.append(line)
                stats.eventBytes += line.count
            }
            markDirty(s)
        }
    }

    /// Whether subscriber `s`, over max_queued_bytes, really cannot keep up: only when its
    /// socket takes no more. What is queued is written first; while a committed group's
    /// events are published, they may queue up to the limit plus the room left in the
    /// socket — a burst, not a slow subscriber.
    func fellBehind(_ s: Connection, adding bytes: Int) -> Bool {
        _ = s.flush(now: work.lineReadNs)
        guard batch.publishing else { return s.queued + bytes > config.maxQueuedBytes }
        return s.queued + bytes > config.maxQueuedBytes + s.socketRoom()
    }
}
