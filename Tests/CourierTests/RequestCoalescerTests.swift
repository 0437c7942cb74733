import Testing

@testable import Courier

private typealias Kit = CoalescerTestKit

/// Behaviour of `RequestCoalescer`; every test coordinates through gates and counters, never through time.
@Suite("RequestCoalescer")
struct RequestCoalescerTests {
    /// An operation that counts its calls, waits on `gate`, and reports whether it completed or saw cancellation.
    private static func gated(
        _ gate: Kit.Gate,
        _ tally: Kit.Tally,
        value: Int = 1
    ) -> @Sendable () async throws -> Int {
        {
            await tally.record("call")
            let opened = await gate.wait()
            guard opened, !Task.isCancelled else {
                await tally.record("cancelled")
                throw CancellationError()
            }
            await tally.record("completed")
            return value
        }
    }

    @Test func singleCallerLeadsItsOwnFlight() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let result = try await coalescer.run("k") { 42 }
        #expect(result.value == 42)
        #expect(!result.joined)
        await Kit.expectDrained(coalescer)
    }

    @Test func thousandConcurrentCallersShareOneFlight() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        let callers = Kit.spawn(1_000, on: coalescer, key: "k", operation: Self.gated(gate, tally, value: 7))
        try await Kit.waitForWaiters(1_000, on: coalescer)
        #expect(await coalescer.flightCount == 1)
        await gate.open()
        var results: [Coalesced<Int>] = []
        for caller in callers {
            results.append(try await caller.value)
        }
        #expect(await tally.count("call") == 1)
        #expect(results.count == 1_000)
        #expect(results.allSatisfy { $0.value == 7 })
        #expect(results.filter(\.joined).count == 999)
        #expect(Set(results.map(\.flightID)).count == 1)
        await Kit.expectDrained(coalescer)
    }

    @Test func differentKeysFlyIndependently() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        let a = Kit.spawn(3, on: coalescer, key: "a", operation: Self.gated(gate, tally, value: 1))
        let b = Kit.spawn(3, on: coalescer, key: "b", operation: Self.gated(gate, tally, value: 2))
        try await Kit.waitForWaiters(6, on: coalescer)
        #expect(await coalescer.flightCount == 2)
        await gate.open()
        for caller in a { #expect(try await caller.value.value == 1) }
        for caller in b { #expect(try await caller.value.value == 2) }
        #expect(await tally.count("call") == 2)
        await Kit.expectDrained(coalescer)
    }

    @Test func errorsAreSharedButNeverRemembered() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        let operation: @Sendable () async throws -> Int = {
            let call = await tally.record("call")
            guard call > 1 else {
                _ = await gate.wait()
                throw Kit.Failure(call: call)
            }
            return call
        }
        let callers = Kit.spawn(5, on: coalescer, key: "k", operation: operation)
        try await Kit.waitForWaiters(5, on: coalescer)
        await gate.open()
        for caller in callers {
            await #expect(throws: Kit.Failure(call: 1)) { try await caller.value }
        }
        await Kit.expectDrained(coalescer)

        let next = try await coalescer.run("k", operation: operation)
        #expect(next.value == 2)
        #expect(!next.joined)
        #expect(await tally.count("call") == 2)
        await Kit.expectDrained(coalescer)
    }

    @Test func leaderCancellingDoesNotCancelTheFlight() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        let operation = Self.gated(gate, tally)
        let leader = Task { try await coalescer.run("k", operation: operation) }
        try await Kit.waitForWaiters(1, on: coalescer)
        let others = Kit.spawn(9, on: coalescer, key: "k", operation: operation)
        try await Kit.waitForWaiters(10, on: coalescer)

        leader.cancel()
        await #expect(throws: CancellationError.self) { try await leader.value }
        #expect(await coalescer.waiterCount == 9)
        await gate.open()
        for caller in others {
            let result = try await caller.value
            #expect(result.value == 1)
            #expect(result.joined)
        }
        #expect(await tally.count("call") == 1)
        #expect(await tally.count("completed") == 1)
        #expect(await tally.count("cancelled") == 0)
        await Kit.expectDrained(coalescer)
    }

    @Test func cancelledWaiterLeavesAtOnceWhileOthersSucceed() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        let callers = Kit.spawn(10, on: coalescer, key: "k", operation: Self.gated(gate, tally))
        try await Kit.waitForWaiters(10, on: coalescer)

        callers[3].cancel()
        // Resolves while the gate is still shut: the waiter does not wait for the flight to end.
        await #expect(throws: CancellationError.self) { try await callers[3].value }
        #expect(await coalescer.waiterCount == 9)
        #expect(await coalescer.flightCount == 1)
        await gate.open()
        for (index, caller) in callers.enumerated() where index != 3 {
            #expect(try await caller.value.value == 1)
        }
        #expect(await tally.count("call") == 1)
        #expect(await tally.count("completed") == 1)
        await Kit.expectDrained(coalescer)
    }

    /// Joiners are kept in order and indexed by id from the first early leave on; once most slots are empty they are
    /// compacted. Callers that join after the index was built, and after a compaction, must still be found when they
    /// leave and resumed when the flight ends.
    @Test(.timeLimit(.minutes(1))) func joinersThatLeaveInBurstsAroundLaterJoinsAreEachResumedOnce() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        let first = Kit.spawn(300, on: coalescer, key: "k", operation: Self.gated(gate, tally, value: 7))
        try await Kit.waitForWaiters(300, on: coalescer)
        // 250 of the first 300 leave (well past the compaction floor and half of the slots), leader included.
        for caller in first.prefix(250) { caller.cancel() }
        for caller in first.prefix(250) {
            await #expect(throws: CancellationError.self) { try await caller.value }
        }
        #expect(await coalescer.waiterCount == 50)
        let second = Kit.spawn(200, on: coalescer, key: "k", operation: Self.gated(gate, tally, value: 8))
        try await Kit.waitForWaiters(250, on: coalescer)
        // Every other late joiner leaves too: they were added after the index was built and after the compaction.
        for (index, caller) in second.enumerated() where index.isMultiple(of: 2) { caller.cancel() }
        for (index, caller) in second.enumerated() where index.isMultiple(of: 2) {
            await #expect(throws: CancellationError.self) { try await caller.value }
        }
        #expect(await coalescer.waiterCount == 150)
        #expect(await coalescer.flightCount == 1)
        await gate.open()
        for caller in first.suffix(50) { #expect(try await caller.value.value == 7) }
        for (index, caller) in second.enumerated() where !index.isMultiple(of: 2) {
            let result = try await caller.value
            #expect(result.value == 7 && result.joined)
        }
        #expect(await tally.count("call") == 1)
        #expect(await tally.count("completed") == 1)
        await Kit.expectDrained(coalescer)
    }

    @Test func lastLeaverCancelsTheFlight() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        let callers = Kit.spawn(10, on: coalescer, key: "k", operation: Self.gated(gate, tally))
        try await Kit.waitForWaiters(10, on: coalescer)

        for caller in callers {
            caller.cancel()
        }
        for caller in callers {
            await #expect(throws: CancellationError.self) { try await caller.value }
        }
        // The entry goes as soon as the last waiter leaves, before the operation has even noticed.
        await Kit.expectDrained(coalescer)
        #expect(await Kit.eventually { await tally.count("cancelled") == 1 })
        #expect(await Kit.eventually { await coalescer.reportedOutcomes == 1 })
        #expect(await tally.count("call") == 1)
        #expect(await tally.count("completed") == 0)
        await Kit.expectDrained(coalescer)
    }

    @Test func finishPolicyLetsAnAbandonedFlightCompleteAndBeJoined() async throws {
        let coalescer = RequestCoalescer<String, Int>(whenAbandoned: .finish)
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        let callers = Kit.spawn(3, on: coalescer, key: "k", operation: Self.gated(gate, tally))
        try await Kit.waitForWaiters(3, on: coalescer)
        for caller in callers {
            caller.cancel()
        }
        for caller in callers {
            await #expect(throws: CancellationError.self) { try await caller.value }
        }
        #expect(await coalescer.waiterCount == 0)
        #expect(await coalescer.flightCount == 1)

        let late = Task {
            try await coalescer.run("k") {
                await tally.record("late operation")
                return -1
            }
        }
        try await Kit.waitForWaiters(1, on: coalescer)
        await gate.open()
        let result = try await late.value
        #expect(result.value == 1)
        #expect(result.joined)
        #expect(await tally.count("call") == 1)
        #expect(await tally.count("late operation") == 0)
        #expect(await tally.count("completed") == 1)
        await Kit.expectDrained(coalescer)
    }

    @Test func finishPolicyCompletesWithNobodyWaiting() async throws {
        let coalescer = RequestCoalescer<String, Int>(whenAbandoned: .finish)
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        let callers = Kit.spawn(2, on: coalescer, key: "k", operation: Self.gated(gate, tally))
        try await Kit.waitForWaiters(2, on: coalescer)
        for caller in callers {
            caller.cancel()
        }
        for caller in callers {
            await #expect(throws: CancellationError.self) { try await caller.value }
        }
        #expect(await coalescer.flightCount == 1)
        await gate.open()
        #expect(await Kit.eventually { await coalescer.reportedOutcomes == 1 })
        #expect(await tally.count("completed") == 1)
        #expect(await tally.count("cancelled") == 0)
        await Kit.expectDrained(coalescer)
    }

    @Test func alreadyCancelledCallerNeverStartsAFlight() async throws {
        // `.finish` and a gate that never opens: a flight started by mistake would stay visible in the table.
        let coalescer = RequestCoalescer<String, Int>(whenAbandoned: .finish)
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await coalescer.run("k", operation: Self.gated(gate, tally))
        }
        await #expect(throws: CancellationError.self) { try await caller.value }
        await Kit.expectDrained(coalescer)
        #expect(await coalescer.reportedOutcomes == 0)
        #expect(await tally.count("call") == 0)
    }

    @Test func staleCompletionLeavesTheNewerFlightAlone() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let (firstGate, secondGate) = (Kit.Gate(), Kit.Gate())
        let first = Task {
            try await coalescer.run("k") {
                await firstGate.waitIgnoringCancellation()
                return 1
            }
        }
        try await Kit.waitForWaiters(1, on: coalescer)
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        // Abandoned and cancelled: forgotten at once, even though its operation is still running.
        #expect(await coalescer.flightCount == 0)

        let second = Task {
            try await coalescer.run("k") {
                _ = await secondGate.wait()
                return 2
            }
        }
        try await Kit.waitForWaiters(1, on: coalescer)
        #expect(await coalescer.flightCount == 1)
        await firstGate.open()
        #expect(await Kit.eventually { await coalescer.reportedOutcomes == 1 })
        #expect(await coalescer.flightCount == 1)
        #expect(await coalescer.waiterCount == 1)

        await secondGate.open()
        let result = try await second.value
        #expect(result.value == 2)
        #expect(!result.joined)
        #expect(await coalescer.reportedOutcomes == 2)
        await Kit.expectDrained(coalescer)
    }
}
