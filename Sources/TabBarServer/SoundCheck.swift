import TabBarCore
import TabBarAudio

/// What `--check-config` checks of the sounds, as a start would find it: every `sound_files`
/// entry is a regular file that decodes (or a theme sound that exists), every sound directory
/// can be read, and every `sound_map` target is a sound that loads. One line per problem,
/// `KEY: problem`, with the config file in front when the key came from it.
enum SoundCheck {
    static func problems(_ c: ServerConfig) -> [String] {
        let quiet: AudioLog = { _, _ in }
        let format = PCMFormat(rate: 48000, channels: 2)
        let plan = SoundBank.plan(directories: c.soundDirs, files: c.soundFiles, log: quiet)
        var out: [String] = []
        func say(_ key: String, _ problem: String) {
            let file = c.origins[key.split(separator: ".").first.map(String.init) ?? key]?.hasPrefix("file:") == true ? c.configFile : nil
            out.append((file.map { "\($0): " } ?? "") + "\(key): " + problem)
        }
        for f in plan.failures where f.name == nil {
            say("sounds", "\(Log.quoted(f.path)): cannot read the directory: \(f.reason)")
        }
        var checked: [String: SoundFailure?] = [:]
        func load(_ name: String) -> SoundFailure?? {
            if let done = checked[name] { return done }
            if let f = plan.failures.first(where: { $0.name == name }) { checked[name] = .some(f); return .some(f) }
            guard let e = plan.entries.first(where: { $0.name == name }) else { return nil }
            let result: SoundFailure?
            switch SoundBank.loadOne(name: name, path: e.path, format: format, log: quiet) {
            case .success: result = nil
            case .failure(let f): result = f
            }
            checked[name] = .some(result)
            return .some(result)
        }
        for (name, path) in c.soundFiles.sorted(by: { $0.key < $1.key }) {
            if case .some(.some(let f)) = load(name) {
                say("sound_files.\(name)", f.path == path ? "\(Log.quoted(path)): \(f.reason)" : "\(Log.quoted(path)) (\(Log.quoted(f.path))): \(f.reason)")
            }
        }
        let m = c.soundMap
        for (kind, target) in [("select", m.select), ("reselect", m.reselect), ("action", m.action), ("center", m.center),
                               ("badge", m.badge), ("visibility", m.visibility)] {
            guard let target else { continue }
            switch load(target) {
            case .none:
                let known = plan.names.sorted()
                let list = known.isEmpty ? "there are no sounds (sounds: \(c.soundDirs.isEmpty ? "no directory" : c.soundDirs.joined(separator: ", ")))"
                    : "the sounds are " + known.prefix(12).joined(separator: ", ") + (known.count > 12 ? ", …" : "")
                say("sound_map.\(kind)", "no sound \(Log.quoted(target)); \(list)")
            case .some(.some(let f)):
                say("sound_map.\(kind)", "the sound \(Log.quoted(target)) does not load: \(Log.quoted(f.path)): \(f.reason)")
            case .some(.none):
                break
            }
        }
        return out
    }
}
