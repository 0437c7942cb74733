import Testing

@testable import Courier

private typealias Kit = CoalescerTestKit

extension CoalescerTestKit {
    typealias SplitMix64 = CourierTests.SplitMix64
}

/// Randomized bursts and large fan-ins; each burst is fully gated so its expected outcome is deterministic.
@Suite("RequestCoalescer stress")
struct RequestCoalescerStressTests {
    /// One caller of a burst: its task, the key it asked for, and whether the test cancels it.
    private struct Caller {
        let key: Int
        let cancels: Bool
        let task: Task<Coalesced<Int>, any Error>
    }

    @Test(arguments: [0x5EED_0001, 0xC0FF_EE00, 0x0DDB_A11] as [UInt64])
    func randomizedBurstsKeepEveryInvariant(seed: UInt64) async throws {
        var rng = Kit.SplitMix64(seed: seed)
        let coalescers: [AbandonmentPolicy: RequestCoalescer<Int, Int>] = [
            .cancel: RequestCoalescer(whenAbandoned: .cancel),
            .finish: RequestCoalescer(whenAbandoned: .finish),
        ]
        var flightsStarted: [AbandonmentPolicy: Int] = [:]
        // 1,000 rounds with COURIER_STRESS=1, 250 without (ReliabilityKit.size).
        for round in 0..<ReliabilityKit.size(1_000, quickDivisor: 4) {
            let policy: AbandonmentPolicy = Bool.random(using: &rng) ? .cancel : .finish
            let coalescer = coalescers[policy]!
            flightsStarted[policy, default: 0] += try await runBurst(round, on: coalescer, using: &rng)
            // Every flight of the burst has reported (so its operation call is counted) and nothing leaked.
            let expected = flightsStarted[policy]
            let settled = await Kit.eventually {
                let (reported, flights) = (await coalescer.reportedOutcomes, await coalescer.flightCount)
                return reported == expected && flights == 0
            }
            try #require(settled, "round \(round) (seed \(seed)) did not settle")
            await Kit.expectDrained(coalescer)
        }
    }

    /// Runs one burst on random keys with random joiners and cancellations; returns how many flights it started.
    private func runBurst(
        _ round: Int,
        on coalescer: RequestCoalescer<Int, Int>,
        using rng: inout Kit.SplitMix64
    ) async throws -> Int {
        let keys = (1...8).filter { _ in Bool.random(using: &rng) }
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        var callers: [Caller] = []
        for key in keys {
            let operation: @Sendable () async throws -> Int = {
                await tally.record("call \(key)")
                guard await gate.wait() else { throw CancellationError() }
                return round * 100 + key
            }
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                let task = Task { try await coalescer.run(key, operation: operation) }
                callers.append(Caller(key: key, cancels: Int.random(in: 0..<4, using: &rng) == 0, task: task))
            }
        }
        // Cancel only once everybody is registered, and open the gate only once every cancellation has been
        // processed, so each key has exactly one flight and each caller's outcome is known in advance.
        try await Kit.waitForWaiters(callers.count, on: coalescer)
        #expect(await coalescer.flightCount == keys.count)
        let cancelled = callers.filter(\.cancels)
        for caller in cancelled {
            caller.task.cancel()
        }
        try await Kit.waitForWaiters(callers.count - cancelled.count, on: coalescer)
        await gate.open()

        var flightIDs: [Int: Set<UInt64>] = [:]
        var leaders: [Int: Int] = [:]
        var cancellations = 0
        for caller in callers {
            if caller.cancels {
                cancellations += await Kit.endedInCancellation(caller.task) ? 1 : 0
                continue
            }
            let result = try await caller.task.value
            #expect(result.value == round * 100 + caller.key)
            flightIDs[caller.key, default: []].insert(result.flightID)
            leaders[caller.key, default: 0] += result.joined ? 0 : 1
        }
        #expect(cancellations == cancelled.count, "round \(round)")
        for key in keys {
            #expect(await Kit.eventually { await tally.count("call \(key)") == 1 }, "key \(key), round \(round)")
            #expect((flightIDs[key]?.count ?? 0) <= 1)
            #expect((leaders[key] ?? 0) <= 1)
        }
        return keys.count
    }

    @Test func tenThousandJoinersOnOneKeyStayCheap() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let (gate, tally) = (Kit.Gate(), Kit.Tally())
        let callers = Kit.spawn(10_000, on: coalescer, key: "k") {
            await tally.record("call")
            _ = await gate.wait()
            return 5
        }
        try await Kit.waitForWaiters(10_000, on: coalescer)
        // Every other caller leaves: 5,000 O(1) removals from the same flight.
        for (index, caller) in callers.enumerated() where index.isMultiple(of: 2) {
            caller.cancel()
        }
        try await Kit.waitForWaiters(5_000, on: coalescer)
        await gate.open()
        var (joined, cancellations) = (0, 0)
        for (index, caller) in callers.enumerated() {
            if index.isMultiple(of: 2) {
                cancellations += await Kit.endedInCancellation(caller) ? 1 : 0
            } else {
                let result = try await caller.value
                #expect(result.value == 5)
                joined += result.joined ? 1 : 0
            }
        }
        // Caller 0 may well have been the leader, and it was cancelled.
        #expect(joined >= 4_999)
        #expect(cancellations == 5_000)
        #expect(await tally.count("call") == 1)
        await Kit.expectDrained(coalescer)
    }
}
