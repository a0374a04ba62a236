/// `rpc.discover`'s document: the protocol as OpenRPC 1.3 (https://spec.open-rpc.org), made
/// from the method table (`Methods.all`) and the events (`Topics.declared`) — no other list.
///
/// Beyond OpenRPC (extensions, `x-`, as the specification allows):
/// - each method's `x-params-schema`: the whole params object's JSON Schema (its fields,
///   `required`, `additionalProperties: false`, and rules between fields such as "exactly one
///   of `tab` and `index`"), which OpenRPC's list of params cannot say;
/// - each method's `x-changes-state`: whether it may change the state (and takes a `seq`);
/// - `x-events`: the notifications subscribers get, each with its `params` schema and the
///   `topics` that carry it; `x-hello`: the notification every connection starts with;
/// - in a schema, `x-maxBytes`: a string's real limit in UTF-8 bytes (its `maxLength` is a
///   quarter of it, so that every string the schema allows fits).
public enum OpenRPC {
    /// The error codes by `data.kind` (`RPCError`).
    public static let errorCodes: KeyValuePairs<String, Int> = [
        "parse_error": -32700, "invalid_request": -32600, "method_not_found": -32601, "invalid_params": -32602,
        "internal_error": -32603, "unknown_tab": -32001, "not_selectable": -32002, "conflict": -32003,
        "unknown_sound": -32004, "audio_unavailable": -32005, "limit_exceeded": -32006, "permission_denied": -32007,
        "storage_failed": -32008, "clock_not_manual": -32009, "capture_failed": -32010, "sound_not_loaded": -32011,
    ]

    static func code(_ kind: String) -> Int {
        for (k, c) in errorCodes where k == kind { return c }
        preconditionFailure("no error kind \(kind)")
    }

    /// The document, for a daemon of `version`.
    public static func document(version: String) -> JSON {
        .obj([
            "openrpc": .string("1.3.2"),
            "info": .obj([
                "title": .string("tabbard"),
                "version": .string(version),
                "description": .string("The tab bar daemon's protocol (version 1): JSON-RPC 2.0, one object per line, over a Unix stream socket. docs/PROTOCOL.md says how it behaves; this document says every method's params, result and errors, and the events."),
            ]),
            "methods": .array(Methods.all.map(method)),
            "x-events": .array(Topics.declared.map { e in
                .obj(["name": .string(e.name), "summary": .string(e.summary), "topics": .array(e.topics.map(JSON.string)), "params": e.params])
            }),
            "x-hello": .obj([
                "summary": .string("The first line of every connection: the server, its version, the protocol, the longest line it reads, and the methods it serves (every method of this document)."),
                "params": Schema.sent(["server": Schema.strings(["tabbard"]), "version": Schema.str, "protocol": Schema.seq,
                                       "max_line": Schema.seq, "features": Schema.array(Schema.strings(Methods.names))]),
            ]),
        ])
    }

    static func method(_ m: MethodSpec) -> JSON {
        var errors: [MethodError] = [MethodError("invalid_params", "The params do not match x-params-schema (data.field names the field).")]
        errors += m.errors
        if m.changesState { errors.append(MethodError("storage_failed", "The change could not be saved; nothing changed.")) }
        return .obj([
            "name": .string(m.name),
            "summary": .string(m.summary),
            "paramStructure": .string("by-name"),
            // (Required ones first: by name, their order means nothing, and client generators
            // that write a function per method need it.)
            "params": .array((m.params.filter(\.required) + m.params.filter { !$0.required }).map { f in
                .obj(["name": .string(f.name.description), "summary": .string(f.summary), "required": .bool(f.required), "schema": f.schema])
            }),
            "result": .obj(["name": .string("result"), "schema": m.result]),
            "errors": .array(errors.map { e in
                var data: [JSON.Member] = [JSON.Member("kind", .string(e.kind)), JSON.Member("when", .string(e.when))]
                if let field = e.field { data.append(JSON.Member("field", .string(field))) }
                return .obj(["code": .int(code(e.kind)), "message": .string(e.kind), "data": .object(data)])
            }),
            "x-params-schema": Schema.closed(m.params, m.rule),
            "x-changes-state": .bool(m.changesState),
        ])
    }
}
