import Testing

@testable import Courier

/// A caller that saw a flight in the air joins it by where the look found it, without hashing the key again. The place
/// is trusted only while no flight was added or removed: otherwise the flight is looked up again, so a sighting never
/// joins another key's flight, nor a flight that has landed.
@Suite(.timeLimit(.minutes(1))) struct FlightSightingTests {
    @Test func aSightingTakenBeforeManyFlightsStartedJoinsItsOwnFlight() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let gate = CoalescerTestKit.Gate()
        let leader = Task {
            try await coalescer.run("k") {
                _ = await gate.wait(); return 1
            }
        }
        try await CoalescerTestKit.waitForWaiters(1, on: coalescer)
        let sighting = try #require(coalescer.sighting(of: "k"))
        // Enough flights that the table grows and "k" moves to another place in it.
        let others = (0..<100).map { index in
            Task {
                try await coalescer.run("other \(index)") {
                    _ = await gate.wait(); return 2
                }
            }
        }
        try await CoalescerTestKit.waitForWaiters(101, on: coalescer)

        let joiner = Task { try await coalescer.join("k", at: sighting, tag: 0, deadline: nil) }
        try await CoalescerTestKit.waitForWaiters(102, on: coalescer)
        await gate.open()

        let joined = try #require(try await joiner.value)
        #expect(joined.value == 1)
        #expect(joined.joined)
        #expect(joined.flightID == (try await leader.value).flightID)
        for other in others { #expect(try await other.value.value == 2) }
        await CoalescerTestKit.expectDrained(coalescer)
    }

    @Test func aSightingOfAFlightThatLandedJoinsTheNextFlightOfItsKey() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let firstGate = CoalescerTestKit.Gate()
        let first = Task {
            try await coalescer.run("k") {
                _ = await firstGate.wait(); return 1
            }
        }
        try await CoalescerTestKit.waitForWaiters(1, on: coalescer)
        let sighting = try #require(coalescer.sighting(of: "k"))
        await firstGate.open()
        #expect(try await first.value.value == 1)

        let secondGate = CoalescerTestKit.Gate()
        let second = Task {
            try await coalescer.run("k") {
                _ = await secondGate.wait(); return 2
            }
        }
        try await CoalescerTestKit.waitForWaiters(1, on: coalescer)
        let joiner = Task { try await coalescer.join("k", at: sighting, tag: 0, deadline: nil) }
        try await CoalescerTestKit.waitForWaiters(2, on: coalescer)
        await secondGate.open()

        let joined = try #require(try await joiner.value)
        #expect(joined.value == 2)
        #expect(joined.flightID == (try await second.value).flightID)
        await CoalescerTestKit.expectDrained(coalescer)
    }

    @Test func aSightingOfAFlightThatLandedFindsNoFlightToJoin() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let gate = CoalescerTestKit.Gate()
        let first = Task {
            try await coalescer.run("k") {
                _ = await gate.wait(); return 1
            }
        }
        try await CoalescerTestKit.waitForWaiters(1, on: coalescer)
        let sighting = try #require(coalescer.sighting(of: "k"))
        // Another flight stays in the air, so the table is not empty when the joiner looks.
        let otherGate = CoalescerTestKit.Gate()
        let other = Task {
            try await coalescer.run("other") {
                _ = await otherGate.wait(); return 2
            }
        }
        try await CoalescerTestKit.waitForWaiters(2, on: coalescer)
        await gate.open()
        #expect(try await first.value.value == 1)

        let joined = try await coalescer.join("k", at: sighting, tag: 0, deadline: nil)

        #expect(joined == nil)
        #expect(await coalescer.waiterCount == 1)
        await otherGate.open()
        #expect(try await other.value.value == 2)
    }

    /// The table remembers the flight its last look found, so that the next caller of the same key finds it without
    /// hashing; a look for another key must not get that flight.
    @Test func aLookForAnotherKeyIsNotAnsweredWithTheFlightTheLastLookFound() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let gate = CoalescerTestKit.Gate()
        let leader = Task {
            try await coalescer.run("k") {
                _ = await gate.wait(); return 1
            }
        }
        try await CoalescerTestKit.waitForWaiters(1, on: coalescer)
        #expect(coalescer.sighting(of: "k") != nil)
        #expect(coalescer.sighting(of: "k") != nil)

        #expect(coalescer.sighting(of: "another key") == nil)

        await gate.open()
        #expect(try await leader.value.value == 1)
    }

    /// What the last look found is forgotten when its flight lands, even while other flights keep the table from
    /// being empty.
    @Test func aLookAfterTheFlightLandedFindsNoneThoughTheLastLookFoundIt() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let gate = CoalescerTestKit.Gate()
        let first = Task {
            try await coalescer.run("k") {
                _ = await gate.wait(); return 1
            }
        }
        let otherGate = CoalescerTestKit.Gate()
        let other = Task {
            try await coalescer.run("other") {
                _ = await otherGate.wait(); return 2
            }
        }
        try await CoalescerTestKit.waitForWaiters(2, on: coalescer)
        #expect(coalescer.sighting(of: "k") != nil)
        await gate.open()
        #expect(try await first.value.value == 1)

        #expect(coalescer.sighting(of: "k") == nil)

        await otherGate.open()
        #expect(try await other.value.value == 2)
    }
}
