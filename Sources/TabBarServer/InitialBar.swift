import TabBarCore

/// `bar.configure {"initial": true}` (a tabbard addition, docs/PROTOCOL.md): back to the
/// configured bar — the config file's `bar`, else the built-in one — as if a client had sent
/// its params. The request is rewritten before it is decoded, so the journal records the
/// full params and a replay never depends on what the config says at the next start.
extension Server {
    /// nil (the request's own `params`), unless it is a `bar.configure` whose params are
    /// `{"initial": true}`: then the configured bar's, read into the workspace (`Workspace.initialParams`).
    @inline(__always)
    func initialBarParams(_ methodIndex: Int, _ params: JSONValue?) -> JSONValue? {
        // (By its index in the method table: no string compare per request, and no call for
        // any other method.)
        guard methodIndex == work.barConfigure else { return nil }
        return initialBarParams(given: params)
    }

    /// `initialBarParams` of a `bar.configure`.
    func initialBarParams(given params: JSONValue?) -> JSONValue? {
        guard let params, let initial = params["initial" as StaticString] else { return nil }
        guard params.members.count == 1, initial.boolValue == true else {
            return nil  // bar.configure's own checks name the bad field
        }
        return work.initialParams(Self.configureParams(config.initialBar, limits: config.limits))
    }

    /// A bar as the params of the `bar.configure` that makes it: its items, selection,
    /// layout and settings (the computed members of `state.get`'s form are ignored by bar.configure).
    static func configureParams(_ bar: BarState, limits: Limits) -> JSON {
        let state = bar.json(limits: limits)
        var members: [JSON.Member] = []
        for key in ["items", "selected", "layout", "settings"] {
            if let v = state[key], !(key == "selected" && v.isNull) { members.append(JSON.Member(key, v)) }
        }
        return .object(members)
    }
}
