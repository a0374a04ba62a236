import CSndFile
import Glibc

/// A sound that could not be loaded (or a sound directory that could not be read): its name
/// when it has one, the file (or directory, or `theme:NAME`), and why.
public struct SoundFailure: Error, Sendable, Equatable {
    public let name: String?
    public let path: String
    public let reason: String
    public init(name: String?, path: String, reason: String) {
        self.name = name
        self.path = path
        self.reason = reason
    }
}

/// Every sound the daemon can play, decoded once at load into the device format.
/// Immutable after `load`; a reload builds a new bank and hands it to
/// `AudioEngine.replaceBank`.
public final class SoundBank: Sendable {
    /// File extensions a sound directory loads: every file format libsndfile here lists
    /// (`SFC_GET_FORMAT_MAJOR`) but header-less raw, with the usual other names of those
    /// formats (`.ogg`/`.opus` for Ogg, `.aif`/`.aifc`, `.snd` for AU, `.mp3`/`.mp2`/`.mp1`
    /// for MPEG). A file `sound_files` names is opened whatever its name.
    public static let extensions: Set<String> = {
        var set: Set<String> = []
        var count: Int32 = 0
        sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR_COUNT), &count, Int32(MemoryLayout<Int32>.size))
        for k in 0..<count {
            var f = SF_FORMAT_INFO()
            f.format = k
            sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR), &f, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
            guard let e = f.extension else { continue }
            let ext = String(cString: e).lowercased()
            if ext == "raw" || ext.isEmpty { continue }
            set.insert(ext)
        }
        let aliases: [String: [String]] = ["oga": ["ogg", "opus"], "aiff": ["aif", "aifc"], "au": ["snd"], "m1a": ["mp1", "mp2", "mp3"]]
        for (ext, others) in aliases where set.contains(ext) { set.formUnion(others) }
        return set
    }()

    /// The format every sound was converted into.
    public let format: PCMFormat
    /// Loaded sounds, sorted by name.
    public let sounds: [Sound]
    /// One entry per sound (or directory) that failed to load, in load order.
    public let failures: [SoundFailure]
    /// Wall time the load took, in nanoseconds (decode + conversion).
    public let loadNanos: UInt64
    private let byName: [String: Sound]
    private let failedByName: [String: SoundFailure]

    init(format: PCMFormat, sounds: [Sound], failures: [SoundFailure], loadNanos: UInt64) {
        self.format = format
        self.sounds = sounds.sorted { $0.name < $1.name }
        self.failures = failures
        self.loadNanos = loadNanos
        var map: [String: Sound] = [:]
        for s in self.sounds { map[s.name] = s }
        self.byName = map
        var failed: [String: SoundFailure] = [:]
        for f in failures { if let n = f.name, map[n] == nil { failed[n] = f } }
        self.failedByName = failed
    }

    /// An empty bank.
    public convenience init(format: PCMFormat) {
        self.init(format: format, sounds: [], failures: [], loadNanos: 0)
    }

    /// A bank of ready-made sounds (tests, generated sounds). Sounds must be in `format`.
    public convenience init(format: PCMFormat, sounds: [Sound]) {
        self.init(format: format, sounds: sounds, failures: [], loadNanos: 0)
    }

    /// This bank with `more` sounds (replacing those of the same names) and failures.
    public func adding(_ more: [Sound], failures more2: [SoundFailure]) -> SoundBank {
        let names = Set(more.map(\.name))
        return SoundBank(format: format, sounds: sounds.filter { !names.contains($0.name) } + more,
                         failures: failures + more2, loadNanos: loadNanos)
    }

    /// The sound called `name` (file name without extension, a configured key, or `theme:NAME`).
    public func sound(named name: String) -> Sound? { byName[name] }

    /// Why the sound called `name` is not in the bank, when it was to be.
    public func failure(named name: String) -> SoundFailure? { failedByName[name] }

    /// What a load will read: one file per name, and what already failed.
    public struct Plan: Sendable {
        public var entries: [(name: String, path: String)]
        public var failures: [SoundFailure]
        /// The names that will be loaded or reported.
        public var names: [String] { entries.map(\.name) }
    }

    /// Lists the sound directories (every file whose extension is in `extensions`, named by
    /// its file name without the extension) and the configured `files` (name → path; a path
    /// `theme:NAME` is looked up in the sound theme). A name defined more than once is the
    /// last definition's — later directories, then `files` — whether or not that file loads
    /// (the others are not read; an info line says which file won).
    public static func plan(directories: [String], files: [String: String] = [:], theme: SoundTheme = SoundTheme(),
                            log: AudioLog) -> Plan {
        var entries: [(name: String, path: String)] = []
        var failures: [SoundFailure] = []
        for dir in directories {
            guard let d = opendir(dir) else {
                let reason = String(cString: strerror(errno))
                log(.error, "sound directory unreadable dir=\(logValue(dir)) reason=\(logValue(reason))")
                failures.append(SoundFailure(name: nil, path: dir, reason: reason))
                continue
            }
            var names: [String] = []
            while let e = readdir(d) {
                let fname = withUnsafeBytes(of: e.pointee.d_name) { raw in
                    String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                }
                if fname.hasPrefix(".") { continue }
                guard let dot = fname.lastIndex(of: "."), dot != fname.startIndex else { continue }
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
                    log(.error, "sound not loaded name=\(logValue(name)) file=\(logValue(path)) reason=\(logValue(reason))")
                    failures.append(SoundFailure(name: name, path: path, reason: reason))
                    entries.removeAll { $0.name == name }
                    continue
                }
                entries.append((name, found))
            } else {
                entries.append((name, path))
            }
        }
        // The last definition of each name wins.
        var winner: [String: Int] = [:]
        for (k, e) in entries.enumerated() { winner[e.name] = k }
        var kept: [(name: String, path: String)] = []
        for (k, e) in entries.enumerated() {
            if winner[e.name] == k {
                kept.append(e)
            } else {
                log(.info, "sound overridden name=\(logValue(e.name)) file=\(logValue(entries[winner[e.name]!].path)) instead_of=\(logValue(e.path))")
            }
        }
        return Plan(entries: kept, failures: failures)
    }

    /// Loads one planned sound, logging the outcome: the sound, or its failure.
    public static func loadOne(name: String, path: String, format: PCMFormat, log: AudioLog,
                            cancelled: () -> Bool = { false }) -> Result<Sound, SoundFailure> {
        do {
            let sound = try loadSound(name: name, path: path, format: format, cancelled: cancelled)
            let conv = sound.sourceFormat == format ? "" : " converted_from=\(logValue(sound.sourceFormat.description))"
            log(.debug, "sound loaded name=\(logValue(name)) file=\(logValue(path)) frames=\(sound.sourceFrames)\(conv)")
            return .success(sound)
        } catch {
            if !cancelled() {
                log(.error, "sound not loaded name=\(logValue(name)) file=\(logValue(path)) reason=\(logValue(error.reason))")
            }
            return .failure(SoundFailure(name: name, path: path, reason: error.reason))
        }
    }

    /// Decodes every sound `plan` finds and converts each into `format`, on the calling
    /// thread. A missing or corrupt file is one error log line naming the file and the reason;
    /// the rest still load.
    public static func load(directories: [String], files: [String: String] = [:],
                            theme: SoundTheme = SoundTheme(),
                            format: PCMFormat, log: AudioLog) -> SoundBank {
        let t0 = monotonicNanos()
        let plan = plan(directories: directories, files: files, theme: theme, log: log)
        var sounds: [Sound] = []
        var failures = plan.failures
        for (name, path) in plan.entries {
            switch loadOne(name: name, path: path, format: format, log: log) {
            case .success(let s): sounds.append(s)
            case .failure(let f): failures.append(f)
            }
        }
        return SoundBank(format: format, sounds: sounds, failures: failures, loadNanos: monotonicNanos() - t0)
    }

    /// A bank of what a load made (`SoundLoader`).
    static func made(format: PCMFormat, sounds: [Sound], failures: [SoundFailure], loadNanos: UInt64) -> SoundBank {
        SoundBank(format: format, sounds: sounds, failures: failures, loadNanos: loadNanos)
    }

    /// Decodes and converts one file.
    public static func loadSound(name: String, path: String, format: PCMFormat,
                                 cancelled: () -> Bool = { false }) throws(AudioError) -> Sound {
        let decoded = try Decoder.decode(path: path, into: format, cancelled: cancelled)
        let samples = decoded.samples
        guard !samples.isEmpty else { throw AudioError.convert(path: path, reason: "no frames after conversion") }
        let storage = UnsafeMutableBufferPointer<Float>.allocate(capacity: samples.count)
        _ = storage.initialize(from: samples)
        return Sound(name: name, source: path, sourceFormat: decoded.sourceFormat, sourceFrames: decoded.sourceFrames,
                     format: format, storage: storage)
    }
}

/// A log value as `Log` writes one: bare, or in double quotes with `"`, `\` and control
/// characters escaped when it is empty or holds a space, `"`, `\`, `=` or a control character
/// (`name="Time not Lost"`).
public func logValue(_ v: String) -> String {
    func control(_ u: Unicode.Scalar) -> Bool { u.value < 0x20 || (u.value >= 0x7F && u.value < 0xA0) || u.value == 0x2028 || u.value == 0x2029 }
    guard v.isEmpty || v.unicodeScalars.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" || $0 == "=" || control($0) }) else { return v }
    var out = "\""
    for u in v.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where u.value < 0x80 && control(u): out += "\\x" + (u.value < 0x10 ? "0" : "") + String(u.value, radix: 16)
        case _ where control(u): out += "\\u{" + String(u.value, radix: 16) + "}"
        default: out.unicodeScalars.append(u)
        }
    }
    return out + "\""
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
