import Glibc

/// Finds sounds by name following the freedesktop Sound Theme Specification:
/// `<base>/sounds/<theme>/<dir>/<name>.{oga,ogg,wav}`, themes searched in
/// `Inherits` order, then the `freedesktop` theme, then unthemed
/// `<base>/sounds/<name>.*`; a name not found is retried with its last
/// `-part` removed (`message-new-instant` → `message-new` → `message`).
public struct SoundTheme: Sendable {
    /// The theme asked for (e.g. `freedesktop`).
    public var name: String
    /// Base directories holding `sounds/` (XDG_DATA_HOME, then XDG_DATA_DIRS).
    public var baseDirectories: [String]
    /// Output profile looked for first.
    public var outputProfile = "stereo"

    public init(name: String = "freedesktop", baseDirectories: [String]? = nil) {
        self.name = name
        self.baseDirectories = baseDirectories ?? SoundTheme.defaultBases()
    }

    /// `$XDG_DATA_HOME/sounds` (or `~/.local/share/sounds`), then each `$XDG_DATA_DIRS/sounds`.
    public static func defaultBases() -> [String] {
        var bases: [String] = []
        if let home = getenv("XDG_DATA_HOME").map({ String(cString: $0) }), !home.isEmpty {
            bases.append(home + "/sounds")
        } else if let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty {
            bases.append(home + "/.local/share/sounds")
        }
        let dirs = getenv("XDG_DATA_DIRS").map { String(cString: $0) } ?? ""
        let list = dirs.isEmpty ? ["/usr/local/share", "/usr/share"] : dirs.split(separator: ":").map(String.init)
        for d in list where !d.isEmpty { bases.append(d + "/sounds") }
        return bases
    }

    /// The file for sound `soundName`, or nil.
    public func lookup(_ soundName: String) -> String? {
        var candidate = soundName
        while true {
            if let f = find(candidate) { return f }
            guard let dash = candidate.lastIndex(of: "-") else { return nil }
            candidate = String(candidate[..<dash])
            if candidate.isEmpty { return nil }
        }
    }

    private func find(_ sound: String) -> String? {
        var visited: Set<String> = []
        if let f = findInTheme(sound, theme: name, visited: &visited) { return f }
        if let f = findInTheme(sound, theme: "freedesktop", visited: &visited) { return f }
        for base in baseDirectories {
            if let f = fileWithExtension(base + "/" + sound) { return f }
        }
        return nil
    }

    private func findInTheme(_ sound: String, theme: String, visited: inout Set<String>) -> String? {
        guard !visited.contains(theme), visited.count < 32 else { return nil }
        visited.insert(theme)
        var parents: [String] = []
        var found = false
        for base in baseDirectories {
            let themeDir = base + "/" + theme
            guard let index = readIndex(themeDir + "/index.theme") else { continue }
            found = true
            // Directories matching the output profile first, then the rest.
            let dirs = index.directories.sorted { a, b in
                (index.profiles[a] == outputProfile ? 0 : 1) < (index.profiles[b] == outputProfile ? 0 : 1)
            }
            for d in dirs {
                if let f = fileWithExtension(themeDir + "/" + d + "/" + sound) { return f }
            }
            if parents.isEmpty { parents = index.inherits }
        }
        if !found { return nil }
        for p in parents {
            if let f = findInTheme(sound, theme: p, visited: &visited) { return f }
        }
        return nil
    }

    private func fileWithExtension(_ stem: String) -> String? {
        for ext in ["disabled", "oga", "ogg", "wav"] {
            let path = stem + "." + ext
            if access(path, R_OK) == 0 { return ext == "disabled" ? nil : path }
        }
        return nil
    }

    struct Index {
        var directories: [String] = []
        var inherits: [String] = []
        var profiles: [String: String] = [:]
    }

    func readIndex(_ path: String) -> Index? {
        guard let text = readSmallFile(path) else { return nil }
        var index = Index()
        var section = ""
        for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = raw.trimmingCharacters()
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard let eq = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<eq]).trimmingCharacters()
            let value = String(line[line.index(after: eq)...]).trimmingCharacters()
            let list = value.split(separator: ",").map { String($0).trimmingCharacters() }.filter { !$0.isEmpty }
            if section == "Sound Theme" {
                if key == "Directories" { index.directories = list }
                if key == "Inherits" { index.inherits = list }
            } else if key == "OutputProfile" {
                index.profiles[section] = value
            }
        }
        return index
    }
}

func readSmallFile(_ path: String, limit: Int = 1 << 20) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 4096)
    while bytes.count < limit {
        let n = buf.withUnsafeMutableBytes { b in retryEINTR { read(fd, b.baseAddress, 4096) } }
        if n <= 0 { break }
        bytes.append(contentsOf: buf[0..<n])
    }
    return String(decoding: bytes, as: UTF8.self)
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
