import TabBarCore

/// `tabbard-bench --core N`: the one path of a request without sockets or the journal's
/// write, N times in process — the line read into a document, the envelope, the method's
/// decoder, the reducer, the reply, the event and the journal line encoded — for counting
/// instructions where each goes (`valgrind --tool=callgrind tabbard-bench --core N`).
func coreLoop(_ n: Int) {
    let doc = JSONDocument()
    var reducer = Reducer()
    var out = ByteBuffer(capacity: 1 << 16)
    let lines = Requests.cycle(Requests.loadKind).map { Array($0.utf8.dropLast()) }
    var bytes = 0
    for k in 0..<n {
        out.removeAll()
        lines[k % lines.count].withUnsafeBufferPointer { line in
            // The calls the server makes (Dispatcher.dispatch, Committer.submit).
            guard let request = try? Envelope.read(line, into: doc),
                  let spec = request.methodIndex.map({ Methods.all[$0] }),
                  case .state(let command)? = try? spec.decode(try Params(request.params), reducer.limits) else { return }
            let o = reducer.reduce(command, at: Int64(k))
            if let id = request.id { Wire.reply(id: id, o.reply, into: &out) }
            for e in o.events { e.write(into: &out) }
            Persistence.journalLine(seq: reducer.state.seq, entry: o.journal, method: request.method, params: request.params?.raw, into: &out)
        }
        bytes &+= out.count
    }
    print("core: \(n) requests, \(bytes) bytes written")
}
