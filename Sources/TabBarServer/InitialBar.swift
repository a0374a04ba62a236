import TabBarCore

extension Server {
    /// A bar as the params of the `bar.configure` that makes it: its items, selection,
    /// layout and settings (the computed members of `state.get`'s form are ignored by
    /// bar.configure). `bar.configure {"initial": true}` is answered with the configured
    /// bar's (`Dispatcher`), so the journal records the full bar.
    static func configureParams(_ bar: BarState, limits: Limits) -> JSON {
        let state = bar.json(limits: limits)
        var members: [JSON.Member] = []
        for key in ["items", "selected", "layout", "settings"] {
            if let v = state[key], !(key == "selected" && v.isNull) { members.append(JSON.Member(key, v)) }
        }
        return .object(members)
    }
}
