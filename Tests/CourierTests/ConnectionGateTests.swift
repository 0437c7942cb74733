import Foundation
import Testing

@testable import Courier

/// `ConnectionGate`: at most `limit` requests per host admitted, the rest served in arrival order, and a
/// cancelled waiter removed at once without taking a slot.
@Suite(.timeLimit(.minutes(1))) struct ConnectionGateTests {
    /// Starts a task that enters `host` and records its index once admitted; returns it once it holds a slot or
    /// waits for one (when `present` requests are in or queued), so that arrival order is the order of the calls.
    private static func enter(
        _ gate: ConnectionGate, _ host: String, _ index: Int, _ admitted: Locked<[Int]>, present: Int
    ) async -> Task<Void, any Error> {
        let task = Task {
            try await gate.enter(host)
            admitted.withLock { $0.append(index) }
        }
        _ = await CoalescerTestKit.eventually {
            let counts = gate.counts(for: host)
            return counts.admitted + counts.queued == present
        }
        return task
    }

    @Test func waitersAreAdmittedInArrivalOrderOnlyWhenASlotFrees() async throws {
        let gate = ConnectionGate(limit: 2)
        let admitted = Locked<[Int]>([])
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<6 {
            tasks.append(await Self.enter(gate, "h:80", index, admitted, present: index + 1))
        }
        _ = await CoalescerTestKit.eventually { admitted.withLock { $0.count } == 2 }
        #expect(gate.counts(for: "h:80") == (admitted: 2, queued: 4))
        #expect(gate.counts(for: "other:80") == (admitted: 0, queued: 0), "hosts are counted apart")

        for freed in 1...4 {
            gate.leave("h:80")
            _ = await CoalescerTestKit.eventually { admitted.withLock { $0.count } == 2 + freed }
        }
        for task in tasks { try await task.value }
        #expect(admitted.withLock { $0 } == [0, 1, 2, 3, 4, 5])
        gate.leave("h:80")
        gate.leave("h:80")
        #expect(gate.counts(for: "h:80") == (admitted: 0, queued: 0))
    }

    @Test func aCancelledWaiterLeavesAtOnceAndTakesNoSlot() async throws {
        let gate = ConnectionGate(limit: 1)
        let admitted = Locked<[Int]>([])
        let first = await Self.enter(gate, "h:80", 0, admitted, present: 1)
        let second = await Self.enter(gate, "h:80", 1, admitted, present: 2)
        let third = await Self.enter(gate, "h:80", 2, admitted, present: 3)
        try await first.value

        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(gate.counts(for: "h:80") == (admitted: 1, queued: 1))

        gate.leave("h:80")
        try await third.value
        #expect(admitted.withLock { $0 } == [0, 2])
        gate.leave("h:80")
        #expect(gate.counts(for: "h:80") == (admitted: 0, queued: 0))
    }

    @Test func aTaskCancelledBeforeItArrivesNeverWaits() async throws {
        let gate = ConnectionGate(limit: 1)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await gate.enter("h:80")
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(gate.counts(for: "h:80") == (admitted: 0, queued: 0))
    }

    @Test func theKeyIsHostAndPortWithTheSchemesDefault() {
        #expect(ConnectionGate.key(for: URL(string: "https://API.example.com/v1")) == "api.example.com:443")
        #expect(ConnectionGate.key(for: URL(string: "http://api.example.com/v1")) == "api.example.com:80")
        #expect(ConnectionGate.key(for: URL(string: "http://127.0.0.1:8080/x")) == "127.0.0.1:8080")
        #expect(ConnectionGate(limit: 0).limit == 1)
    }
}
