import Glibc

/// Every sound the daemon can play, decoded once at load into the device format.
/// Immutable after `load`; a reload builds a new bank and hands it to
/// `AudioEngine.replaceBank`.
public final class SoundBank: Sendable {
    /// File extensions picked up from sound directories.
    public static let extensions: Set<String> = ["wav", "flac", "ogg", "oga"]

    /// The format every sound was converted into.
    public let format: PCMFormat
    /// Loaded sounds, sorted by name.
    public let sounds: [Sound]
    /// One entry per file that failed to load: (path, reason).
    public let failures: [(path: String, reason: String)]
    /// Wall time the load took, in nanoseconds (decode + conversion).
    public let loadNanos: UInt64
    private let byName: [String: Sound]

    init(format: PCMFormat, sounds: [Sound], failures: [(String, String)], loadNanos: UInt64) {
        self.format = format
        self.sounds = sounds.sorted { $0.name < $1.name }
        self.failures = failures
        self.loadNanos = loadNanos
        var map: [String: Sound] = [:]
        for s in self.sounds { map[s.name] = s }
        self.byName = map
    }

    /// An empty bank.
    public convenience init(format: PCMFormat) {
        self.init(format: format, sounds: [], failures: [], loadNanos: 0)
    }

    /// A bank of ready-made sounds (tests, generated sounds). Sounds must be in `format`.
    public convenience init(format: PCMFormat, sounds: [Sound]) {
        self.init(format: format, sounds: sounds, failures: [], loadNanos: 0)
    }

    /// The sound called `name` (file name without extension, a configured key, or `theme:NAME`).
    public func sound(named name: String) -> Sound? { byName[name] }

    /// Decodes every `*.wav/*.flac/*.ogg/*.oga` in `directories` (name = file name without
    /// extension) and every entry of `files` (name → path; a path `theme:NAME` is looked up
    /// in the sound theme), converting each into `format`. A missing or corrupt file is one
    /// error log line naming the file and the reason; the rest still load. Later
    /// directories and then `files` override earlier names.
    public static func load(directories: [String], files: [String: String] = [:],
                            theme: SoundTheme = SoundTheme(),
                            format: PCMFormat, log: AudioLog) -> SoundBank {
        let t0 = monotonicNanos()
        var entries: [(name: String, path: String)] = []
        var failures: [(String, String)] = []
        for dir in directories {
            guard let d = opendir(dir) else {
                let reason = String(cString: strerror(errno))
                log(.error, "sound directory unreadable dir=\(dir) reason=\"\(reason)\"")
                failures.append((dir, reason))
                continue
            }
            var names: [String] = []
            while let e = readdir(d) {
                let fname = withUnsafeBytes(of: e.pointee.d_name) { raw in
                    String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                }
                if fname.hasPrefix(".") { continue }
                guard let dot = fname.lastIndex(of: ".") else { continue }
                let ext = fname[fname.index(after: dot)...].lowercased()
                guard extensions.contains(ext) else { continue }
                names.append(fname)
            }
            closedir(d)
            for fname in names.sorted() {
                let stem = String(fname[..<fname.lastIndex(of: ".")!])
                entries.append((stem, dir.hasSuffix("/") ? dir + fname : dir + "/" + fname))
            }
        }
        for (name, path) in files.sorted(by: { $0.key < $1.key }) {
            if path.hasPrefix("theme:") {
                let themed = String(path.dropFirst("theme:".count))
                guard let found = theme.lookup(themed) else {
                    let themes = theme.name == "freedesktop" ? "freedesktop" : "\(theme.name) or freedesktop"
                    let reason = "no sound \"\(themed)\" in theme \(themes)"
                    log(.error, "sound not loaded name=\(name.debugDescription) file=\(path.debugDescription) reason=\(reason.debugDescription)")
                    failures.append((path, reason))
                    continue
                }
                entries.append((name, found))
            } else {
                entries.append((name, path))
            }
        }
        var loaded: [String: Sound] = [:]
        for (name, path) in entries {
            do {
                let sound = try loadSound(name: name, path: path, format: format)
                if loaded[name] != nil {
                    log(.info, "sound overridden name=\(name) file=\(path)")
                }
                loaded[name] = sound
                let conv = sound.sourceFormat == format ? "" : " converted_from=\"\(sound.sourceFormat)\""
                log(.debug, "sound loaded name=\(name) file=\(path) frames=\(sound.frames)\(conv)")
            } catch let e as AudioError {
                log(.error, "sound not loaded name=\(name) file=\(path) reason=\"\(e.reason)\"")
                failures.append((path, e.reason))
            } catch {
                log(.error, "sound not loaded name=\(name) file=\(path) reason=\"\(error)\"")
                failures.append((path, "\(error)"))
            }
        }
        let elapsed = monotonicNanos() - t0
        return SoundBank(format: format, sounds: Array(loaded.values), failures: failures, loadNanos: elapsed)
    }

    /// Decodes and converts one file.
    public static func loadSound(name: String, path: String, format: PCMFormat) throws -> Sound {
        let decoded = try Decoder.decode(path: path)
        let samples = try Converter.convert(decoded, to: format, path: path)
        guard !samples.isEmpty else { throw AudioError.convert(path: path, reason: "no frames after conversion") }
        let storage = UnsafeMutableBufferPointer<Float>.allocate(capacity: samples.count)
        _ = storage.initialize(from: samples)
        return Sound(name: name, source: path, sourceFormat: decoded.format, format: format, storage: storage)
    }
}

extension AudioError {
    /// The reason part alone (for `key="reason"` log fields).
    public var reason: String {
        switch self {
        case .decode(_, let r), .convert(_, let r), .deviceOpen(_, let r), .deviceIO(_, let r): return r
        case .system: return description
        }
    }
}
