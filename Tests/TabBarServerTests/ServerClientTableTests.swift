@preconcurrency import Glibc
import Testing
@testable import TabBarServer

/// The loop finds an event's connection by its descriptor (`ClientTable.connection(fd:)`),
/// kept with the table as connections come and go.
@Suite struct ServerClientTableTests {
    @Test func aConnectionIsFoundByItsDescriptorWhileItIsOpen() {
        var t = ClientTable()
        let a = Connection(fd: 7, id: 1, maxLine: 100), b = Connection(fd: 3, id: 2, maxLine: 100)
        t.add(a)
        t.add(b)
        #expect(t.connection(fd: 7) === a)
        #expect(t.connection(fd: 3) === b)
        #expect(t.connection(fd: 5) == nil && t.connection(fd: 8) == nil && t.connection(fd: 1000) == nil && t.connection(fd: -1) == nil)
        #expect(t.byFD.count == 2)
        t.remove(a)
        #expect(t.connection(fd: 7) == nil)
        #expect(t.connection(fd: 3) === b)
        #expect(t.byFD.count == 1)
        // A descriptor number reused by a new connection finds the new one.
        let c = Connection(fd: 7, id: 3, maxLine: 100)
        t.add(c)
        #expect(t.connection(fd: 7) === c)
    }
}
