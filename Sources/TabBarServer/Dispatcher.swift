import TabBarCore

/// The dispatch stage: one framed line's bytes → a typed command, or the refusal to send.
///
/// The line's envelope is read in place (`Envelope.read` into a reused `JSONDocument`), the
/// method is looked up in the one method table (`Methods.all`), and its declaration decodes
/// the params into a `Command`: a `StateCommand` for the committer, a `ServerCommand` for
/// the server. Nothing here touches state or sockets.
final class Dispatcher {
    /// A line, dispatched.
    enum Dispatched {
        /// A command to carry out. `params` are the request's params as the journal records
        /// them (valid until the next line is dispatched); `id` nil: a notification.
        case command(Command, method: String, params: JSONValue?, id: RequestID?)
        /// A refusal to answer (`id` nil: none is sent, it is only counted). `isRequest`: the
        /// envelope was read, as a request (true) or a notification (false); nil: it was not.
        case refused(RPCError, id: RequestID?, isRequest: Bool?)
    }

    private let document = JSONDocument()
    private let initialDocument = JSONDocument()
    private let maxLine: Int
    private let barConfigure = Methods.all.firstIndex { $0.name == "bar.configure" }

    /// The configured bar as `bar.configure` params, for `{"initial": true}` (InitialBar.swift).
    var initialBar: JSON

    init(maxLine: Int, initialBar: JSON) {
        self.maxLine = maxLine
        self.initialBar = initialBar
    }

    /// Dispatches one framed line with the limits in force.
    func dispatch(_ unit: LineFramer.Line, limits: Limits) -> Dispatched {
        let line: UnsafeBufferPointer<UInt8>
        switch unit {
        case .tooLong: return .refused(.lineTooLong(limit: maxLine), id: .null, isRequest: nil)
        case .line(let l): line = l
        }
        let request: Request
        do throws(Envelope.Rejection) { request = try Envelope.read(line, into: document) } catch {
            return .refused(error.error, id: error.silent ? nil : error.id, isRequest: nil)
        }
        let id = request.id
        guard let index = request.methodIndex ?? Methods.all.firstIndex(where: { $0.name == request.method }) else {
            return .refused(.methodNotFound(request.method), id: id, isRequest: id != nil)
        }
        let spec = Methods.all[index]
        let params = index == barConfigure ? initialBarParams(request.params) ?? request.params : request.params
        do throws(RPCError) {
            let command = try spec.decode(Params(request: params), limits)
            return .command(command, method: spec.name, params: params, id: id)
        } catch {
            return .refused(error, id: id, isRequest: id != nil)
        }
    }

    /// `bar.configure {"initial": true}` (docs/PROTOCOL.md): the configured bar's params, as if
    /// the client had sent them, so the journal records the full bar. nil for anything else.
    private func initialBarParams(_ params: JSONValue?) -> JSONValue? {
        guard let params, let initial = params["initial" as StaticString],
              params.members.count == 1, initial.boolValue == true else { return nil }
        try! initialDocument.parse(initialBar.encoded())  // (our own encoding: always valid)
        return initialDocument.root
    }
}
