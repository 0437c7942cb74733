import Foundation
import Testing

@testable import Courier

/// A flight's joiners and their deadlines are kept in storage the last flight with joiners left behind
/// (``FlightTable/Spares``). Taken over, that storage holds nothing of the last flight: each joiner of the next one gets
/// that flight's answer, leaves at its own deadline, or leaves when cancelled, exactly once.
@Suite(.timeLimit(.minutes(1))) struct FlightStorageReuseTests {
    private static let path = "/slow"

    /// A client whose transport holds its `n`th request until the `n`th gate opens, and answers `answer n`.
    private struct HeldFlights {
        let clock = TestClock()
        let gates = [CoalescerTestKit.Gate(), CoalescerTestKit.Gate()]
        let transport: MockTransport
        let client: APIClient

        init() {
            let gates = gates
            transport = MockTransport { _, index in
                _ = await gates[index].wait()
                return .text(200, "answer \(index)")
            }
            client = APIClient(
                baseURL: URL(string: "https://api.example.com")!,
                configuration: .init(transport: transport, cache: nil, retryPolicy: .never, clock: clock))
        }

        /// A leader with a timeout of 60 s, once its flight is in the air.
        func lead() async throws -> Task<APIResponse<Data>, any Error> {
            let client = client
            let waiting = await client.coalescer.waiterCount
            let leader = Task {
                try await client.send(APIRequest<Data>(path: FlightStorageReuseTests.path, timeout: .seconds(60)))
            }
            try await CoalescerTestKit.waitForWaiters(waiting + 1, on: client.coalescer)
            return leader
        }

        /// `count` callers with a timeout of `seconds`, once all of them wait on the flight in the air.
        func join(_ count: Int, within seconds: Int64) async throws -> [Task<APIResponse<Data>, any Error>] {
            let client = client
            let waiting = await client.coalescer.waiterCount
            let request = APIRequest<Data>(path: FlightStorageReuseTests.path, timeout: .seconds(seconds))
            let joiners = (0..<count).map { _ in Task { try await client.send(request) } }
            try await CoalescerTestKit.waitForWaiters(waiting + count, on: client.coalescer)
            return joiners
        }
    }

    /// How a caller's call ended: the body it got, or the error.
    private static func outcome(of caller: Task<APIResponse<Data>, any Error>) async -> String {
        do {
            let response = try await caller.value
            return String(decoding: response.data, as: UTF8.self) + (response.joined ? " (joined)" : "")
        } catch let error as APIError {
            if case .timedOut(let after) = error { return "timed out after \(after)" }
            return "\(error)"
        } catch {
            return error is CancellationError ? "cancelled" : "\(error)"
        }
    }

    @Test func theNextFlightsJoinersTakeTheStorageAndEachLeaveTheirOwnWay() async throws {
        let flights = HeldFlights()
        let coalescer = flights.client.coalescer
        #expect(await coalescer.spareCapacities == (0, 0))

        // The first flight: a leader and 100 joiners, each with a deadline, all answered.
        let firstLeader = try await flights.lead()
        let first = try await flights.join(100, within: 60)
        await flights.gates[0].open()
        #expect(await Self.outcome(of: firstLeader) == "answer 0")
        for joiner in first { #expect(await Self.outcome(of: joiner) == "answer 0 (joined)") }
        // Their storage is left for the next flight once they were resumed (after the last of them got its answer).
        let reached = await CoalescerTestKit.eventually { await coalescer.spareCapacities.joiners >= 100 }
        #expect(reached)
        #expect(await coalescer.spareCapacities.deadlines >= 100)

        // The second flight: its first joiner takes both, so nothing is spare while it is in the air.
        let secondLeader = try await flights.lead()
        let leaving = try await flights.join(30, within: 5)
        #expect(await coalescer.spareCapacities == (0, 0))
        let cancelled = try await flights.join(30, within: 60)
        let staying = try await flights.join(40, within: 60)
        try await AuthTestKit.waitForTimer(.seconds(5), on: flights.clock)

        for joiner in cancelled { joiner.cancel() }
        for joiner in cancelled { #expect(await Self.outcome(of: joiner) == "cancelled") }
        try await CoalescerTestKit.waitForWaiters(71, on: coalescer)
        flights.clock.advance(by: .seconds(5))
        try await CoalescerTestKit.waitForWaiters(41, on: coalescer)
        for joiner in leaving { #expect(await Self.outcome(of: joiner) == "timed out after 5.0 seconds") }

        await flights.gates[1].open()
        #expect(await Self.outcome(of: secondLeader) == "answer 1")
        for joiner in staying { #expect(await Self.outcome(of: joiner) == "answer 1 (joined)") }
        #expect(flights.transport.callCount == 2)
        await CoalescerTestKit.expectDrained(coalescer)
        let keptAgain = await CoalescerTestKit.eventually { await coalescer.spareCapacities.joiners >= 100 }
        #expect(keptAgain)
    }
}
