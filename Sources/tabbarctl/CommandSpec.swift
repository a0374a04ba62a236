/// One subcommand of tabbarctl: its name, the options it takes, and its help.
/// Declared once here; the parser and `--help` both read this table.
struct CommandSpec {
    let name: String
    /// The arguments after the name, as shown in usage lines.
    let synopsis: String
    /// One line for the command list.
    let summary: String
    /// The rest of `tabbarctl NAME --help`.
    let details: String
    /// Options of this command (without the global ones): name → takes a value.
    let options: [String: Bool]

    init(_ name: String, _ synopsis: String, _ summary: String, options: [String: Bool] = [:], _ details: String) {
        self.name = name
        self.synopsis = synopsis
        self.summary = summary
        self.options = options
        self.details = details
    }

    static func named(_ name: String) -> CommandSpec? { all.first { $0.name == name } }

    static let all: [CommandSpec] = [
        CommandSpec("state", "", "print the bar: items, selection, badges, visibility, feedback", """
            Prints the state as a person reads it: the seq, one row per item (index, id,
            title, kind, badge, marks: selected, highlighted, active-action, disabled,
            morphed), then visibility and feedback. With --json prints the raw
            state.get result on one line.
            """),
        CommandSpec("select", "TAB|INDEX [--program] [--if-seq N]", "select a tab (tab.select)",
                    options: ["--program": false, "--if-seq": true], """
            A bare integer is an index (0 is the first item), anything else an item id.
              --program    the selection comes from the program, not the user (no click)
              --if-seq N   only if the current seq is N, else fail with `conflict`
            Prints the outcome, e.g. `selected chat (previous home), seq 7` or
            `reselected home, seq 8`, then the new state.
            """),
        CommandSpec("badge", "TAB (COUNT | --dot | --text T | --clear)", "set or clear an item's badge (badge.set, badge.clear)",
                    options: ["--dot": false, "--text": true, "--clear": false], """
            Give exactly one of: a COUNT (an integer; counts above 99 show as 99+, 0 or
            less removes the badge), --dot (a bare dot), --text T, or --clear.
            Prints what the badge now displays.
            """),
        CommandSpec("action", "TAB [--finish]", "trigger an action or center item (action.trigger, action.finish)",
                    options: ["--finish": false], """
            Triggers the action of an `action` or `center` item; with --finish, reports
            that the action's work is done so the item stops being the active action.
            """),
        CommandSpec("play", "NAME", "play a sound (sound.play)", """
            Plays a loaded sound by name; `tabbarctl sounds` lists them. Prints the voice id.
            """),
        CommandSpec("sounds", "", "list the loaded sounds (sound.list)", """
            Prints a table: name, frames, rate, channels, duration in ms, source.
            """),
        CommandSpec("monitor", "[--json] [--topics A,B] [--follow]", "follow the daemon's events until Ctrl-C",
                    options: ["--topics": true, "--follow": false], """
            Subscribes, prints a one-line summary of the snapshot, then one line per
            event, e.g. `seq 12 tab.selected chat (previous home, user)`.
              --topics A,B  only these topics: event names (badge.changed) or their
                            first part (tab, badge, action, bar, animation, feedback,
                            sound, server, state)
              --follow      when the daemon stops or restarts, say so, wait for it,
                            reconnect and subscribe again (until Ctrl-C)
              --json        print the subscribe result, then every event line exactly
                            as received (notices about reconnecting go to stderr)
            Exits 0 on Ctrl-C/SIGTERM or after `server.stopping`, 1 if the connection
            drops otherwise (with --follow, only Ctrl-C/SIGTERM end it).
            """),
        CommandSpec("call", "METHOD [JSON]", "send any request; print its result as JSON", """
            Sends METHOD with JSON (an object, e.g. '{"tab":"chat"}') as params and
            prints the result as compact JSON on one line.
            """),
        CommandSpec("touch", "down|up|cancel X Y [--id N]", "send a touch at bar coordinates (touch)",
                    options: ["--id": true], """
            X and Y are points in bar coordinates: origin at the bar's top-left, y grows
            downward, y < 0 is above the bar (where the raised center button reaches).
            Use `--` before negative numbers if needed: `touch down -- 180 -12`.
              --id N   the touch sequence's id (touch_id): give the same N to the down
                       and the up of one tap; a sequence sent again is ignored
            Prints the item hit, if any, and what the touch committed (select,
            reselect or action).
            """),
        CommandSpec("push", "[--hides-bar]", "push a screen (nav.push)", options: ["--hides-bar": false], """
            Tells the daemon a screen was pushed; with --hides-bar the pushed screen
            hides the bar. Prints the resulting visibility.
            """),
        CommandSpec("pop", "", "pop a screen (nav.pop)", """
            Tells the daemon the top screen was popped. Prints the resulting visibility.
            """),
        CommandSpec("scroll", "DY", "report a scroll (scroll)", """
            DY in points; positive means the content moves up (scrolling down), which
            may hide the bar. Prints the resulting visibility.
            """),
        CommandSpec("hide", "[--reason R] [--animated]", "hide the bar (bar.set_hidden)",
                    options: ["--reason": true, "--animated": false], """
              --reason R   explicit (default), push or scroll
              --animated   animate the change
            """),
        CommandSpec("show", "[--reason R] [--animated]", "show the bar (bar.set_hidden)",
                    options: ["--reason": true, "--animated": false], """
              --reason R   which hide reason to withdraw: explicit (default), push or scroll
              --animated   animate the change
            """),
        CommandSpec("configure", "FILE|-", "replace the bar's items (bar.configure)", """
            FILE (or - for standard input) holds a JSON object:
              {"items":[{"id":"home","title":"Home"},…], "selected":"home", "layout":{…}}
            Prints the new state.
            """),
        CommandSpec("reset", "", "go back to the configured bar (bar.configure)", """
            Replaces the items, selection, layout and settings with the bar tabbard was
            configured with (the config file's `bar`, else the built-in bar), as
            `tabbarctl configure` would. Prints the new state.
            """),
        CommandSpec("feedback", "[--profile P] [--volume V]", "show or set sound feedback (feedback.set)",
                    options: ["--profile": true, "--volume": true], """
              --profile P  full, quiet or silent
              --volume V   0 to 1
            Without options prints the current feedback settings (with --json:
            {"seq":N,"feedback":{…}}, the shape feedback.set answers with).
            """),
        CommandSpec("stats", "", "print the daemon's counters and latencies (stats.get)", """
            Prints one `name: value` line per figure.
            """),
        CommandSpec("ping", "", "check that the daemon answers (ping)", """
            Prints the daemon's version and the round-trip time.
            """),
        CommandSpec("pipe", "[--token-file FILE]", "bridge stdin/stdout to the daemon, line by line (for websocketd)",
                    options: ["--token-file": true], Pipe.help),
        CommandSpec("help", "[COMMAND]", "show help for tabbarctl or a command", """
            Same as `tabbarctl --help` or `tabbarctl COMMAND --help`.
            """),
    ] + HarnessCommands.specs
}

/// The help texts.
enum Help {
    static let version = "0.1.0"

    static let globalOptions = """
        Options (before or after the command):
          --socket PATH   the daemon's socket (default: $TABBARD_SOCKET, else
                          $XDG_RUNTIME_DIR/tabbard/socket, else /run/tabbard/socket
                          for root or /tmp/tabbard-UID/socket for other users)
          --instance NAME the daemon of one application, tabbard@NAME.socket:
                          $XDG_RUNTIME_DIR/tabbard/NAME.socket (or $TABBARD_INSTANCE)
          --json          print raw JSON results instead of text
          --timeout MS    how long to wait for a reply (default 5000)
          -h, --help      show help;  -V, --version  show the version
        """

    static var tool: String {
        let width = CommandSpec.all.map { $0.name.count }.max() ?? 0
        let list = CommandSpec.all.map { "  " + $0.name.padding(width) + "  " + $0.summary }.joined(separator: "\n")
        return """
            Usage: tabbarctl [--socket PATH] [--json] COMMAND [ARGS…]

            Talks to tabbard, the tab bar daemon, over its Unix socket.

            Commands:
            \(list)

            \(globalOptions)

            Exit status: 0 ok, 1 client-side error (usage, cannot connect, bad JSON),
            2 the daemon returned an error. Run `tabbarctl COMMAND --help` for details.
            """
    }

    static func command(_ spec: CommandSpec) -> String {
        let usage = "Usage: tabbarctl [--socket PATH] [--json] \(spec.name)" + (spec.synopsis.isEmpty ? "" : " \(spec.synopsis)")
        return usage + "\n\n" + spec.summary.capitalizedFirst + ".\n\n" + spec.details + "\n\n" + globalOptions
    }
}

extension String {
    /// Pads with spaces to `width` characters (never truncates).
    func padding(_ width: Int) -> String {
        let n = count
        return n >= width ? self : self + String(repeating: " ", count: width - n)
    }

    var capitalizedFirst: String {
        guard let first else { return self }
        return first.uppercased() + dropFirst()
    }
}
