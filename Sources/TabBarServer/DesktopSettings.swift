@preconcurrency import Glibc
import CGIO
import CSystemd
import TabBarCore
import Synchronization
import TabBarAudio

/// Whether the daemon follows the desktop's sound settings (config `desktop_sounds`; docs/CONFIG.md).
public enum DesktopSoundsPolicy: String, CaseIterable, Sendable {
    /// `follow` for a user's daemon (one with `$XDG_RUNTIME_DIR`), `ignore` for the system's.
    case auto
    /// `event-sounds` off silences every sound; `theme-name` is the theme of `theme:` sounds.
    case follow
    /// As `follow`, and `input-feedback-sounds` off (GNOME's default) silences them too.
    case inputFeedback = "input-feedback"
    /// The desktop's settings change nothing.
    case ignore

    /// What `auto` means for this process.
    var resolved: DesktopSoundsPolicy {
        guard self == .auto else { return self }
        return Posix.env("XDG_RUNTIME_DIR") != nil ? .follow : .ignore
    }
}

/// GNOME's sound settings (schema `org.gnome.desktop.sound`) as the daemon read them last.
struct DesktopSound: Equatable, Sendable {
    static let schema = "org.gnome.desktop.sound"
    var eventSounds = true
    var inputFeedbackSounds = false
    var themeName = "freedesktop"

    /// Why a sound is not played under `policy`, nil when it is.
    func suppression(_ policy: DesktopSoundsPolicy) -> String? {
        if !eventSounds { return "the desktop's event sounds are off (\(DesktopSound.schema) event-sounds)" }
        if policy == .inputFeedback && !inputFeedbackSounds {
            return "the desktop's input feedback sounds are off (\(DesktopSound.schema) input-feedback-sounds)"
        }
        return nil
    }
}

/// Follows the desktop's sound settings through GSettings (GIO) on a helper thread of its own,
/// which runs a GLib main context: GSettings tells of a change only while its context is iterated.
/// The thread touches nothing of the server: it posts each new reading (`latest`) and makes
/// `fd` (an eventfd in the state loop's epoll set) readable; the state loop takes the reading
/// (`take`) and applies it. A missing schema (no `gsettings-desktop-schemas`) leaves the defaults.
final class DesktopSettingsWatcher: Sendable {
    /// Readable when a new reading is posted.
    let fd: Int32
    private let latest = Mutex<(DesktopSound, note: String?)?>(nil)
    private let stopping = Atomic<Bool>(false)
    /// The thread's GLib main context (made here, iterated by the thread alone; `wakeup` is thread-safe).
    private let context: ContextHandle
    private let thread = Mutex<pthread_t?>(nil)

    /// A `GMainContext *`.
    // Sendable because the context is used only by the watcher's thread, except for
    // `g_main_context_wakeup` (documented thread-safe) and the unref after that thread ended.
    private struct ContextHandle: @unchecked Sendable { let pointer: OpaquePointer }

    init?() {
        let efd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard efd >= 0 else { return nil }
        fd = efd
        context = ContextHandle(pointer: g_main_context_new())
    }

    /// Starts the thread; false (with the reason logged) when it could not.
    func start() -> Bool {
        switch spawnThread({ [self] in run() }) {
        case .success(let t): thread.withLock { $0 = t }; return true
        case .failure(let e):
            Log.warning("Not following the desktop's sound settings: no thread for it", ["error": "\(e)"])
            return false
        }
    }

    /// The reading posted since the last `take` (and a note for the log), draining `fd`.
    func take() -> (DesktopSound, note: String?)? {
        var v: UInt64 = 0
        _ = Glibc.read(fd, &v, 8)
        return latest.withLock { r in defer { r = nil }; return r }
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        g_main_context_wakeup(context.pointer)
        if let t = thread.withLock({ $0 }) { pthread_join(t, nil) }
        g_main_context_unref(context.pointer)
        Glibc.close(fd)
    }

    private func post(_ s: DesktopSound, note: String? = nil) {
        latest.withLock { $0 = (s, note) }
        var one: UInt64 = 1
        _ = Glibc.write(fd, &one, 8)
    }

    /// The helper thread: its own context as the thread-default one (the settings' change
    /// notifications arrive there), the first reading, then one reading per change.
    private func run() {
        var all = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, nil)
        let ctx = context.pointer
        g_main_context_push_thread_default(ctx)
        defer { g_main_context_pop_thread_default(ctx) }
        guard let settings = tabbard_settings_new(DesktopSound.schema) else {
            post(DesktopSound(), note: "schema \(DesktopSound.schema) is not installed (gsettings-desktop-schemas): the defaults apply")
            return
        }
        defer { g_object_unref(settings) }
        let changed = ChangedFlag()
        let data = Unmanaged.passUnretained(changed).toOpaque()
        let handler = tabbard_settings_on_changed(settings, { _, _, data in
            Unmanaged<ChangedFlag>.fromOpaque(data!).takeUnretainedValue().flag.store(true, ordering: .releasing)
        }, data)
        post(read(settings), note: "backend " + String(cString: tabbard_settings_backend_name(settings)))
        while !stopping.load(ordering: .acquiring) {
            g_main_context_iteration(ctx, 1)
            if changed.flag.exchange(false, ordering: .acquiring) { post(read(settings)) }
        }
        g_signal_handler_disconnect(settings, handler)
        withExtendedLifetime(changed) {}
    }

    private func read(_ settings: UnsafeMutablePointer<GSettings>) -> DesktopSound {
        var s = DesktopSound()
        if tabbard_settings_has_key(settings, "event-sounds") != 0 { s.eventSounds = g_settings_get_boolean(settings, "event-sounds") != 0 }
        if tabbard_settings_has_key(settings, "input-feedback-sounds") != 0 {
            s.inputFeedbackSounds = g_settings_get_boolean(settings, "input-feedback-sounds") != 0
        }
        if tabbard_settings_has_key(settings, "theme-name") != 0, let p = g_settings_get_string(settings, "theme-name") {
            let name = String(cString: p)
            g_free(p)
            if !name.isEmpty { s.themeName = name }
        }
        return s
    }

    private final class ChangedFlag: Sendable {
        let flag = Atomic<Bool>(false)
    }
}

extension Server {
    /// Starts following the desktop's sound settings when `desktop_sounds` says so, and applies the
    /// first reading before serving anyone (waiting for it at most `firstReadingMs`).
    func followDesktopSounds() {
        let policy = config.desktopSounds.resolved
        audio.desktopPolicy = policy
        guard policy != .ignore else { return }
        DesktopSettingsWatcher.routeGLibLog()
        guard let watcher = DesktopSettingsWatcher(), watcher.start() else { return }
        desktop = watcher
        var p = pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, DesktopSettingsWatcher.firstReadingMs)
        applyDesktopSounds()
        if !loop.watch(watcher.fd, EPOLLIN.rawValue) {
            Log.warning("Not following changes of the desktop's sound settings: epoll_ctl failed")
        }
    }

    /// A new reading of the desktop's sound settings (the watcher's eventfd was readable).
    func applyDesktopSounds() {
        guard let (s, note) = desktop?.take() else { return }
        let changed = s != audio.desktop
        audio.desktop = s
        if let note {
            Log.info("Following the desktop's sound settings", ["policy": audio.desktopPolicy.rawValue, "settings": note])
        }
        if changed || note != nil {
            Log.info("Desktop sound settings", ["event_sounds": String(s.eventSounds), "input_feedback_sounds": String(s.inputFeedbackSounds),
                                               "theme": s.themeName, "sounds": audio.desktopSuppression.map { "off: " + $0 } ?? "on"])
        }
        if s.themeName != audio.themeName {
            audio.themeName = s.themeName
            // Only `theme:` sounds depend on the theme: nothing to reload without one.
            if config.soundFiles.values.contains(where: { $0.hasPrefix("theme:") }) { audio.reload { _ in } }
        }
    }

    /// A sound the desktop's settings silenced: counted apart from failures, told to `sound` subscribers.
    func soundSuppressed(_ name: String, _ why: String) {
        stats.soundsSuppressed += 1
        transport.publish(SoundEvent.suppressed(name: name, reason: why))
    }
}

extension DesktopSettingsWatcher {
    /// GLib's messages (a settings backend's warnings) become the daemon's log lines, one line each,
    /// instead of GLib's own format on stderr. Set once, before the watcher's thread starts.
    static func routeGLibLog() {
        g_log_set_writer_func({ level, fields, count, _ in
            var message = "", domain = ""
            for i in 0..<Int(count) {
                guard let f = fields?[i], let key = f.key, let value = f.value else { continue }
                let text = f.length < 0 ? String(cString: value.assumingMemoryBound(to: CChar.self))
                    : String(decoding: UnsafeRawBufferPointer(start: value, count: Int(f.length)), as: UTF8.self)
                switch String(cString: key) {
                case "MESSAGE": message = text
                case "GLIB_DOMAIN": domain = text
                default: break
                }
            }
            let l = level.rawValue
            let p: Priority = l & (G_LOG_LEVEL_ERROR.rawValue | G_LOG_LEVEL_CRITICAL.rawValue | G_LOG_LEVEL_WARNING.rawValue) != 0 ? .warning
                : l & G_LOG_LEVEL_DEBUG.rawValue != 0 ? .debug : .info
            Log.write(p, "GLib: " + message, ["domain": domain])
            return G_LOG_WRITER_HANDLED
        }, nil, nil)
    }

    /// How long start-up waits for the first reading (GSettings reads dconf's database from a file).
    static let firstReadingMs: Int32 = 1000
}
