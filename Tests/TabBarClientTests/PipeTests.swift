import Glibc
import Testing
import TabBarCore
@testable import tabbarctl

/// `tabbarctl pipe`'s parsing and its guards (the bridge itself runs in tests/web/).
@Suite struct PipeTests {
    @Test func parsesTheTokenFile() throws {
        #expect(try Arguments.parse(["pipe"]).command == .pipe(tokenFile: nil))
        #expect(try Arguments.parse(["--socket", "/s", "pipe", "--token-file", "/t"]) ==
                Invocation(options: GlobalOptions(socket: "/s"), command: .pipe(tokenFile: "/t")))
        #expect(throws: UsageError.self) { try Arguments.parse(["pipe", "extra"]) }
    }

    @Test func readsTheTokenFromTheQuery() {
        #expect(Pipe.token(inQuery: "token=abc") == Array("abc".utf8))
        #expect(Pipe.token(inQuery: "x=1&token=abc&y=2") == Array("abc".utf8))
        #expect(Pipe.token(inQuery: "xtoken=abc") == nil)
        #expect(Pipe.token(inQuery: "token=") == nil)
        #expect(Pipe.token(inQuery: nil) == nil)
    }

    @Test func refusesAMissingOrWrongToken() throws {
        let dir = String(cString: mkdtemp(strdup("/tmp/pipe-test.XXXXXX")))
        defer { _ = unlink(dir + "/token"); _ = rmdir(dir) }
        let file = dir + "/token"
        let fd = open(file, O_WRONLY | O_CREAT, 0o600)
        let token = "0123456789abcdef0123456789abcdef\n"
        _ = token.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, token.utf8.count) }
        close(fd)
        #expect(Pipe.refusal(tokenFile: file, query: "token=0123456789abcdef0123456789abcdef") == nil)
        #expect(Pipe.refusal(tokenFile: file, query: "token=0123456789abcdef0123456789abcdee")?.hasPrefix("wrong token") == true)
        #expect(Pipe.refusal(tokenFile: file, query: "token=0123456789abcdef") != nil)  // a prefix is not the token
        #expect(Pipe.refusal(tokenFile: file, query: nil)?.hasPrefix("no token") == true)
        #expect(Pipe.refusal(tokenFile: dir + "/missing", query: "token=x")?.contains("cannot read") == true)
    }

    @Test func theRefusalIsAJSONRPCErrorLine() throws {
        let line = Pipe.errorLine("no")
        #expect(line.hasSuffix("\n"))
        let json = try JSON.parse(String(line.dropLast()))
        #expect(json["error"]?["data"]?["kind"]?.stringValue == "permission_denied")
        #expect(json["error"]?["code"] == .int(-32007))
        #expect(json["id"] == .null)
    }

    @Test func findsThePeerSocketsOwner() {
        // The client's socket 127.0.0.1:51000 → 127.0.0.1:8765 (0xC738 → 0x223D), owned by uid 65534;
        // the server's end of it (local 8765) and a listener are not the peer.
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:223D 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
               1: 0100007F:C738 0100007F:223D 01 00000000:00000000 00:00000000 00000000 65534        0 2 1
               2: 0100007F:223D 0100007F:C738 01 00000000:00000000 00:00000000 00000000     0        0 3 1
            """
        #expect(PeerCheck.owners(table: table, localPort: 51000, remotePort: 8765) == [65534])
        #expect(PeerCheck.owners(table: table, localPort: 8765, remotePort: 51000) == [0])
        #expect(PeerCheck.owners(table: table, localPort: 51001, remotePort: 8765) == [])
    }
}
