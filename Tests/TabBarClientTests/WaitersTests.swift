import Testing
@testable import TabBarClient

/// The table of requests in flight finds each by its id as a dictionary would: in a window
/// of ids, past it (an old request still waiting when its slot is wanted again), out of order.
@Suite struct WaitersTests {
    @Test func findsEachIdOnceInAnyOrder() {
        var t = Waiters<String>()
        for id in [3, 1, 2] { t.insert("r\(id)", for: id) }
        #expect(t.count == 3)
        #expect(t.remove(2) == "r2")
        #expect(t.remove(2) == nil)
        #expect(t.remove(7) == nil)  // (never added)
        #expect(t.remove(1) == "r1")
        #expect(t.remove(3) == "r3")
        #expect(t.isEmpty)
    }

    @Test func aSlowRequestOutlivesItsSlot() {
        var t = Waiters<Int>()
        let n = Waiters<Int>.slotCount
        t.insert(0, for: 0)  // waits while 3 windows of others come and go
        for id in 1..<(3 * n) {
            t.insert(id, for: id)
            #expect(t.remove(id) == id)
        }
        t.insert(n, for: n)  // (the slow one's slot, taken again)
        #expect(t.count == 2)
        #expect(t.remove(0) == 0)
        #expect(t.remove(n) == n)
        #expect(t.isEmpty)
    }

    @Test func removesTheDueOnesAndEmpties() {
        var t = Waiters<Int>()
        let n = Waiters<Int>.slotCount
        for id in [1, 2, 3, 1 + n] { t.insert(id, for: id) }  // (1 gives its slot to 1 + n)
        let due = t.remove { $0 % 2 == 1 }
        #expect(Set(due.map(\.id)) == [1, 3, 1 + n])
        #expect(due.allSatisfy { $0.id == $0.element })
        #expect(t.count == 1)
        #expect(t.remove(1) == nil)
        #expect(t.removeAll() == [2])
        #expect(t.isEmpty)
        #expect(t.remove(2) == nil)
    }
}
