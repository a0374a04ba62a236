import TabBarCore

extension Server {
    /// SIGHUP: builds the configuration again (same flags, same environment, the file
    /// re-read), applies the keys that can change live, re-reads the sounds, and says
    /// which changed keys wait for a restart. A configuration that does not validate
    /// changes nothing. Clients stay connected; the state is untouched.
    func reloadConfiguration() {
        Systemd.notify(Systemd.reloadingMessage(status: "Reloading the configuration", nowNs: MonotonicClock.nanoseconds()))
        // READY=1 once the new sounds are in (they load off the loop: SoundLoading.swift).
        guard let configSource else {
            Log.notice("SIGHUP: reloading sounds")
            audio.reload { [self] _ in notifyReady() }
            return
        }
        let fresh: ServerConfig
        do { fresh = try configSource.load() } catch {
            Log.error("Reload refused: the configuration is not valid; nothing changed", ["error": error.message])
            notifyReady()
            return
        }
        var applied: [String] = [], waiting: [String] = []
        for key in ConfigKey.all where key.name == "bar" ? config.initialBar != fresh.initialBar : key.show(config) != key.show(fresh) {
            if let adopt = key.adopt {
                adopt(fresh, &config)
                applied.append(key.name)
            } else {
                waiting.append(key.name)
            }
        }
        transport.config = config
        dispatcher.initialBar = Server.configureParams(config.initialBar, limits: config.limits)
        config.configFile = fresh.configFile
        config.origins = fresh.origins
        Log.level = config.logLevel
        audio.config.soundDirs = config.soundDirs
        audio.config.soundFiles = config.soundFiles
        Log.notice("Configuration reloaded", ["file": config.configFile ?? "none", "applied": applied.isEmpty ? "none" : applied.joined(separator: ",")])
        audio.reload { [self] _ in notifyReady() }
        let restart = waiting.filter { $0 != "bar" }
        if !restart.isEmpty {
            Log.warning("Changed in the configuration but applied only at the next start; restart tabbard to apply them", ["keys": restart.joined(separator: ",")])
        }
        if waiting.contains("bar") {
            Log.notice("The configured bar changed; it is the bar to start with when there is no saved state, so the bar being served stays (bar.configure changes it now)")
        }
    }
}
