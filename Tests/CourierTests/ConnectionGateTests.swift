import Foundation
import Testing

@testable import Courier

/// `ConnectionGate`: at most `limit` requests per host admitted, the rest started in arrival order by whoever frees
/// a slot, and a withdrawn request removed at once without taking a slot.
@Suite(.timeLimit(.minutes(1))) struct ConnectionGateTests {
    /// Admits request `index` to `host`; records it in `started` when it starts, at once or when given a slot.
    private static func admit(_ gate: ConnectionGate, _ host: String, _ index: Int, _ started: Locked<[Int]>)
        -> UInt64
    {
        let id = gate.makeID()
        let start: @Sendable () -> Void = { started.withLock { $0.append(index) } }
        if gate.admit(host, id: id, start: start) { start() }
        return id
    }

    @Test func queuedRequestsStartInArrivalOrderOnlyWhenASlotFrees() {
        let gate = ConnectionGate(limit: 2)
        let started = Locked<[Int]>([])
        for index in 0..<6 { _ = Self.admit(gate, "h:80", index, started) }
        #expect(started.withLock { $0 } == [0, 1])
        #expect(gate.counts(for: "h:80") == (admitted: 2, queued: 4))
        #expect(gate.counts(for: "other:80") == (admitted: 0, queued: 0), "hosts are counted apart")

        for freed in 1...4 {
            gate.leave("h:80")
            #expect(started.withLock { $0.count } == 2 + freed, "the slot went straight to the next request")
            #expect(gate.counts(for: "h:80") == (admitted: 2, queued: 4 - freed))
        }
        #expect(started.withLock { $0 } == [0, 1, 2, 3, 4, 5])
        gate.leave("h:80")
        gate.leave("h:80")
        #expect(gate.counts(for: "h:80") == (admitted: 0, queued: 0))
    }

    @Test func aWithdrawnRequestLeavesAtOnceAndTakesNoSlot() {
        let gate = ConnectionGate(limit: 1)
        let started = Locked<[Int]>([])
        let first = Self.admit(gate, "h:80", 0, started)
        let second = Self.admit(gate, "h:80", 1, started)
        _ = Self.admit(gate, "h:80", 2, started)

        gate.withdraw("h:80", id: second)
        #expect(gate.counts(for: "h:80") == (admitted: 1, queued: 1))
        gate.withdraw("h:80", id: first)
        #expect(
            gate.counts(for: "h:80") == (admitted: 1, queued: 1), "an admitted request keeps its slot until it leaves")

        gate.leave("h:80")
        #expect(started.withLock { $0 } == [0, 2])
        gate.leave("h:80")
        #expect(gate.counts(for: "h:80") == (admitted: 0, queued: 0))
    }

    @Test func manyRequestsAdmittedWithdrawnAndFreedFromManyTasksEndWithNothingHeld() async {
        let gate = ConnectionGate(limit: 6)
        let started = Locked(0)
        let withdrawn = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                group.addTask {
                    let id = gate.makeID()
                    let start: @Sendable () -> Void = {
                        started.withLock { $0 += 1 }
                        gate.leave("h:80")  // the request ends at once and frees its slot
                    }
                    if gate.admit("h:80", id: id, start: start) {
                        start()
                    } else if index % 3 == 0, gate.withdraw("h:80", id: id) {
                        withdrawn.withLock { $0 += 1 }
                    }
                }
            }
        }
        #expect(gate.counts(for: "h:80") == (admitted: 0, queued: 0))
        // Every request either started exactly once or was withdrawn while queued, never both.
        #expect(started.withLock { $0 } + withdrawn.withLock { $0 } == 400)
    }

    @Test func waitersThatLeaveWhileEverySlotIsHeldLeaveNothingBehind() {
        let gate = ConnectionGate(limit: 2)
        let started = Locked<[Int]>([])
        _ = Self.admit(gate, "h:80", 0, started)
        _ = Self.admit(gate, "h:80", 1, started)
        // What a caller whose deadline passes (or who is cancelled) while queued does: withdraw.
        for index in 2..<1_002 {
            let id = Self.admit(gate, "h:80", index, started)
            #expect(gate.withdraw("h:80", id: id))
        }
        #expect(gate.counts(for: "h:80") == (admitted: 2, queued: 0))
        #expect(gate.arrivalOrderCount(for: "h:80") == 0, "the arrival order kept the requests that left")

        // One waiter stays queued while a thousand others come and go: the order stays near its size.
        _ = Self.admit(gate, "h:80", 1_002, started)
        for index in 1_003..<2_003 {
            let id = Self.admit(gate, "h:80", index, started)
            gate.withdraw("h:80", id: id)
        }
        #expect(gate.counts(for: "h:80") == (admitted: 2, queued: 1))
        #expect(gate.arrivalOrderCount(for: "h:80") <= 64, "the arrival order grew with the requests that left")

        gate.leave("h:80")
        #expect(started.withLock { $0 } == [0, 1, 1_002], "the waiter that stayed was started next")
        gate.leave("h:80")
        gate.leave("h:80")
        #expect(gate.counts(for: "h:80") == (admitted: 0, queued: 0))
        #expect(gate.arrivalOrderCount(for: "h:80") == 0)
    }

    @Test func theKeyIsHostAndPortWithTheSchemesDefault() {
        #expect(ConnectionGate.key(for: URL(string: "https://API.example.com/v1")) == "api.example.com:443")
        #expect(ConnectionGate.key(for: URL(string: "http://api.example.com/v1")) == "api.example.com:80")
        #expect(ConnectionGate.key(for: URL(string: "http://127.0.0.1:8080/x")) == "127.0.0.1:8080")
        #expect(ConnectionGate(limit: 0).limit == 1)
    }
}
