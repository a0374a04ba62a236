import Testing
@testable import TabBarCore

/// `rpc.discover`'s document is made from the method table: every method, each param as its
/// declaration gives it, and the events `subscribe` takes topics of (issue 36).
@Suite struct OpenRPCTests {
    let doc = OpenRPC.document(version: "0.0.0")

    func strings(_ j: JSON?) -> [String] {
        guard case .array(let list)? = j else { return [] }
        return list.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
    }

    func members(_ j: JSON?) -> [JSON.Member] {
        guard case .object(let m)? = j else { return [] }
        return m
    }

    func value(_ j: JSON?, _ key: String) -> JSON? { members(j).first { $0.key == key }?.value }

    func list(_ j: JSON?) -> [JSON] {
        guard case .array(let l)? = j else { return [] }
        return l
    }

    @Test func everyMethodOfTheTableIsInTheDocumentAndNoOther() {
        let methods = list(value(doc, "methods"))
        #expect(methods.map { value($0, "name") } == Methods.names.map { JSON.string($0) })
        #expect(Methods.names.contains("rpc.discover"))
    }

    @Test func eachMethodsParamsAreItsDeclaredFieldsAndNoOther() {
        for (m, spec) in zip(list(value(doc, "methods")), Methods.all) {
            let params = list(value(m, "params")).flatMap { strings(.array([value($0, "name") ?? .null])) }
            #expect(Set(params) == Set(spec.fields.names.map(\.description)), "\(spec.name)")
            let schema = value(m, "x-params-schema")
            #expect(value(schema, "additionalProperties") == .bool(false), "\(spec.name)")
            #expect(members(value(schema, "properties")).map(\.key) == spec.fields.names.map(\.description), "\(spec.name)")
            #expect(value(m, "x-changes-state") == .bool(spec.changesState), "\(spec.name)")
        }
    }

    @Test func theEventsAreTheTopicsEvents() {
        let events = list(value(doc, "x-events"))
        #expect(events.compactMap { value($0, "name") } == Topics.events.map { JSON.string($0) })
        for e in events {
            for t in strings(value(e, "topics")) { #expect(Topics.isKnown(t)) }
        }
    }

    @Test func everyErrorKindHasItsCode() {
        for m in list(value(doc, "methods")) {
            for e in list(value(m, "errors")) {
                guard case .string(let kind)? = value(value(e, "data"), "kind") else { Issue.record("no kind"); continue }
                #expect(value(e, "code") == .int(OpenRPC.code(kind)))
            }
        }
        #expect(OpenRPC.code("unknown_tab") == RPCError.unknownTab("x").code)
        #expect(OpenRPC.code("invalid_params") == RPCError.invalidParams("x", "y").code)
        #expect(OpenRPC.code("storage_failed") == RPCError.storageFailed("x", advice: "y").code)
        #expect(OpenRPC.code("limit_exceeded") == RPCError.limitExceeded("x").code)
    }
}
