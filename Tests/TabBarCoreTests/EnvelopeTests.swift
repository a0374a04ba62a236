import Testing
@testable import TabBarCore

func decode(_ s: String) -> Result<Request, Envelope.Rejection> {
    Array(s.utf8).withUnsafeBufferPointer { Envelope.decode($0) }
}

@Suite struct EnvelopeTests {
    @Test func requestsAndNotifications() throws {
        let r = try decode(#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#).get()
        #expect(r.id == .string("a"))
        #expect(r.method == "ping")
        let n = try decode(#"{"method":"ping"}"#).get()
        #expect(n.id == nil)
    }

    @Test(arguments: [
        ("nope", "parse_error", -32700),
        ("[1,2]", "batch_unsupported", -32600),
        ("42", "invalid_request", -32600),
        (#"{"id":1}"#, "invalid_request", -32600),
        (#"{"id":1,"method":7}"#, "invalid_request", -32600),
        (#"{"id":{},"method":"ping"}"#, "invalid_request", -32600),
        (#"{"id":1,"jsonrpc":"1.0","method":"ping"}"#, "invalid_request", -32600),
        (#"{"id":1,"method":"ping","params":[1]}"#, "invalid_params", -32602),
    ])
    func rejections(_ line: String, _ kind: String, _ code: Int) {
        guard case .failure(let r) = decode(line) else { Issue.record("accepted \(line)"); return }
        #expect(r.error.kind == kind)
        #expect(r.error.code == code)
        #expect(!r.error.message.isEmpty)
    }

    @Test func theIdIsEchoedWhenKnown() {
        guard case .failure(let r) = decode(#"{"id":7,"method":5}"#) else { return }
        #expect(r.id == .number("7"))
        guard case .failure(let p) = decode("{not json") else { return }
        #expect(p.id == .null)
    }

    @Test func wireLines() {
        var out: [UInt8] = []
        Wire.reply(id: .int(3), .success(.json(.obj(["seq": .int(1)]))), into: &out)
        Wire.reply(id: .null, .failure(.methodNotFound("x")), into: &out)
        let text = String(decoding: out, as: UTF8.self)
        #expect(text == #"{"jsonrpc":"2.0","id":3,"result":{"seq":1}}"# + "\n" +
            #"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"There is no method \"x\". See docs/PROTOCOL.md for the list.","data":{"kind":"method_not_found","method":"x"}}}"# + "\n")
    }
}

@Suite struct GeometryTests {
    let items = BarState.defaultBar.items
    let layout = Layout(width: 375, height: 49, center: CenterSpec(width: 70, height: 70, raise: 21, shape: .circle))

    @Test func hitsFromTheIssue() {
        #expect(layout.hitTest(x: 187.5, y: 0, items: items).index == 2)
        #expect(layout.hitTest(x: 20, y: 30, items: items).index == 0)
        #expect(layout.hitTest(x: 370, y: 30, items: items).index == 4)
        let corner = layout.hitTest(x: 221.5, y: -20, items: items)
        #expect(corner.index == nil)
        #expect(corner.consumed == false)
        #expect(layout.hitTest(x: 221.5, y: -20, items: items, swallowCenterCorners: true).consumed == true)
    }

    @Test func rightToLeftMirrors() {
        var l = layout
        l.rtl = true
        #expect(l.hitTest(x: 20, y: 30, items: items).index == 4)
        #expect(l.frames(for: items)[2].x == 152.5)
    }

    @Test func safeBottomIsExcluded() {
        var l = layout
        l.height = 83
        l.safeBottom = 34
        #expect(l.hitTest(x: 20, y: 60, items: items).index == nil)
        #expect(l.frames(for: items)[0].h == 49)
    }
}
