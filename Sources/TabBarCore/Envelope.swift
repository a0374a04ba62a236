/// A decoded JSON-RPC request. `id == nil` means a notification (no reply).
public struct Request: Sendable {
    /// The id its reply echoes (`RequestID`: the id's JSON text); nil: a notification.
    public let id: RequestID?
    /// The params object as the line holds it (nil: none, or `null`).
    public var params: JSONValue?
    /// Where the method is in `Methods.all` (-1: the envelope did not find it there; its
    /// name is then in `extra`).
    let storedIndex: Int
    /// What a request as the server reads it does not have: the name of a method not found
    /// in the table, the document that keeps `params` alive (nil for a known method read by
    /// the server).
    let extra: Extra?

    final class Extra: Sendable {
        let name: String
        let owner: JSONDocument?
        init(name: String, owner: JSONDocument?) { self.name = name; self.owner = owner }
    }

    /// The method's name: a known one is the table's own string.
    public var method: String { storedIndex >= 0 ? Methods.all[storedIndex].name : extra?.name ?? "" }
    /// Where `method` is in `Methods.all`, when the envelope found it there.
    public var methodIndex: Int? { @inline(__always) get { storedIndex >= 0 ? storedIndex : nil } }
    /// The document `params` is in, when the request keeps it alive itself; nil: someone
    /// else does (the server's reused document).
    public var owner: JSONDocument? { extra?.owner }

    /// The same request, keeping `doc` (the document its params are in) alive.
    public func owned(by doc: JSONDocument) -> Request {
        Request(id: id, params: params, storedIndex: storedIndex, extra: Extra(name: method, owner: doc))
    }

    private init(id: RequestID?, params: JSONValue?, storedIndex: Int, extra: Extra?) {
        self.id = id
        self.params = params
        self.storedIndex = storedIndex
        self.extra = extra
    }

    public init(id: RequestID?, method: String, params: JSONValue?, owner: JSONDocument? = nil) {
        self.id = id
        storedIndex = -1
        self.params = params
        extra = Extra(name: method, owner: owner)
    }

    /// A request as the envelope reads it (made in one piece): a method found in the table
    /// by its index, any other by its name.
    @inline(__always)
    init(id: RequestID?, known: Int?, name: @autoclosure () -> String, params: JSONValue?) {
        self.id = id
        self.params = params
        if let known {
            storedIndex = known
            extra = nil
        } else {
            storedIndex = -1
            extra = Extra(name: name(), owner: nil)
        }
    }

    /// A request from a `JSON` params value (tests and tools).
    public init(id: RequestID?, method: String, params: JSON? = nil) {
        self.id = id
        storedIndex = -1
        var owner: JSONDocument?
        if let params, params != .null {
            let doc = JSONDocument(params)
            self.params = doc.root
            owner = doc
        }
        extra = Extra(name: method, owner: owner)
    }
}

/// Turns one line into a `Request`, or into the error reply it deserves.
public enum Envelope {
    /// A line that is not a usable request: the id to answer with (null when
    /// unknown) and the error; `silent` when it was a notification (no reply).
    public struct Rejection: Error, Equatable, Sendable {
        public var id: RequestID
        public var error: RPCError
        public var silent: Bool
    }

    /// Reads `line` into `doc` (whose previous contents it replaces) and its envelope.
    public static func decode(_ line: UnsafeBufferPointer<UInt8>, into doc: JSONDocument,
                              maxDepth: Int = JSON.defaultMaxDepth) -> Result<Request, Rejection> {
        do throws(Rejection) { return .success(try read(line, into: doc, maxDepth: maxDepth)) } catch { return .failure(error) }
    }

    /// `decode`, throwing the rejection (what the server calls: no `Result` to copy through).
    /// The envelope's members are read straight from the line (`readEnvelope`), their
    /// values into `doc`'s tape.
    public static func read(_ line: UnsafeBufferPointer<UInt8>, into doc: JSONDocument,
                            maxDepth: Int = JSON.defaultMaxDepth) throws(Rejection) -> Request {
        let members: JSONDocument.EnvelopeMembers?
        do {
            members = try doc.readEnvelope(line, maxDepth: maxDepth)
        } catch {
            throw Rejection(id: .null, error: .parseError(error.description), silent: false)
        }
        guard let members else { return try read(doc.root) }  // (not an object)
        return try read(members, in: doc.tape)
    }

    /// `decode` into a document of its own.
    public static func decode(_ line: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSON.defaultMaxDepth) -> Result<Request, Rejection> {
        let doc = JSONDocument()
        return decode(line, into: doc, maxDepth: maxDepth).map { $0.owned(by: doc) }
    }

    /// The envelope of a parsed request object.
    public static func decode(_ value: JSONValue) -> Result<Request, Rejection> {
        do throws(Rejection) { return .success(try read(value)) } catch { return .failure(error) }
    }

    /// `decode`, throwing the rejection.
    public static func read(_ value: JSONValue) throws(Rejection) -> Request {
        guard value.kind == .object else {
            if value.kind == .array { throw Rejection(id: .null, error: .batchUnsupported, silent: false) }
            throw Rejection(id: .null, error: .invalidRequest("A request must be a JSON object, not \(value.typeName)."), silent: false)
        }
        // One pass over the members (unknown envelope members are ignored).
        var members = JSONDocument.EnvelopeMembers()
        let doc = value.doc
        var k = value.index + 1
        for _ in 0..<Int(doc.tokens[value.index].count) {
            let key = JSONValue(doc, k)
            if key.isKey("id") { members.id = k + 1 } else if key.isKey("method") { members.method = k + 1 }
            else if key.isKey("params") { members.params = k + 1 } else if key.isKey("jsonrpc") { members.version = k + 1 }
            k = Int(doc.tokens[k + 1].next)
        }
        return try read(members, in: doc)
    }

    /// The checks of the envelope, in order, on its members' values.
    @inline(__always)
    static func read(_ members: JSONDocument.EnvelopeMembers, in doc: JSONDocument.Tape) throws(Rejection) -> Request {
        var id: RequestID?
        if members.id >= 0 {
            // Kept as the id's text (a number's literal as given: see `RequestID`).
            let i = JSONValue(doc, members.id)
            switch i.kind {
            case .number, .string, .escapedString: id = RequestID(i)
            case .null:
                // A reply with `"id":null` is what a line that is not JSON gets: the client could
                // not tell the two apart, so a null id is refused (the reply's id is null either way).
                throw Rejection(id: .null, error: .invalidRequest("\"id\" must be a number or a string, not null; leave \"id\" out for a notification."), silent: false)
            default:
                throw Rejection(id: .null, error: .invalidRequest("\"id\" must be a number or a string, not \(i.typeName)."), silent: false)
            }
        }
        // (The reply's id, `id ?? .null`, is made only for a refusal.)
        if members.version >= 0, case let v = JSONValue(doc, members.version), !(v.kind == .string && v.isKey("2.0")) {
            throw Rejection(id: id ?? .null, error: .invalidRequest("\"jsonrpc\" must be \"2.0\" when present."), silent: false)
        }
        guard members.method >= 0 else {
            throw Rejection(id: id ?? .null, error: .invalidRequest("The request has no \"method\"."), silent: false)
        }
        // A known name is its index in the table (no string made per request).
        let method = JSONValue(doc, members.method)
        let known = members.known >= -1 ? (members.known >= 0 ? members.known : nil)
            : method.kind == .string ? Methods.index(named: method.inner) : nil
        guard known != nil || method.isString else {
            throw Rejection(id: id ?? .null, error: .invalidRequest("\"method\" must be a string, not \(method.typeName)."), silent: false)
        }
        var params: JSONValue?
        if members.params >= 0 {
            let p = JSONValue(doc, members.params)
            switch p.kind {
            case .object: params = p
            case .null: break
            default:
                throw Rejection(id: id ?? .null, error: .invalidParams("params", "\"params\" must be an object, not \(p.typeName)."), silent: id == nil)
            }
        }
        return Request(id: id, known: known, name: method.stringValue!, params: params)
    }

    /// The envelope of a `JSON` request (tests and tools).
    public static func decode(_ json: JSON) -> Result<Request, Rejection> {
        let doc = JSONDocument(json)
        return decode(doc.root).map { $0.owned(by: doc) }
    }
}
