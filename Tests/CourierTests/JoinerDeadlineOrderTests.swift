import Foundation
import Testing

@testable import Courier

/// A flight keeps the deadlines of callers that join it in the order they came when they share one timeout (the
/// order of their deadlines then), and puts any other aside. Whichever way a
/// deadline was kept, each joiner leaves at its own, the flight's one timer fires at the earliest still pending, and
/// callers that left drop out of what is kept.
@Suite(.timeLimit(.minutes(1))) struct JoinerDeadlineOrderTests {
    private static let baseURL = URL(string: "https://api.example.com")!

    /// A client whose transport holds every request until `gate` opens, with a leader of `/slow` that waits 60 s.
    private struct HeldFlight {
        let clock = TestClock()
        let gate = CoalescerTestKit.Gate()
        let client: APIClient
        let transport: MockTransport
        let leader: Task<APIResponse<Data>, any Error>

        init() async {
            let gate = gate
            transport = MockTransport { _, index in
                _ = await gate.wait()
                return .text(200, "answer \(index)")
            }
            let client = APIClient(
                baseURL: JoinerDeadlineOrderTests.baseURL,
                configuration: .init(transport: transport, cache: nil, retryPolicy: .never, clock: clock))
            self.client = client
            leader = Task { try await client.send(APIRequest<Data>(path: "/slow", timeout: .seconds(60))) }
            await clock.waitForSleeper(of: .seconds(60))
        }

        /// A caller that joins the flight with a timeout of `seconds`, once it waits on the flight (by the shortcut).
        func join(within seconds: Int64) async throws -> Task<APIResponse<Data>, any Error> {
            let request = APIRequest<Data>(path: "/slow", timeout: .seconds(seconds))
            let route = try client.route(request.fields, id: CallID(rawValue: 1_000), decoding: nil, joining: true)
            guard case .join = route else {
                Issue.record("the caller would not take the joining shortcut")
                throw CancellationError()
            }
            let waiting = await client.coalescer.waiterCount
            let client = client
            let joiner = Task { try await client.send(request) }
            try await CoalescerTestKit.waitForWaiters(waiting + 1, on: client.coalescer)
            return joiner
        }

        /// Moves the clock on by `seconds`: `joiner` leaves with a timeout naming `bound`, and `remaining` callers
        /// (the leader among them) still wait.
        func advance(
            by seconds: Int64, until joiner: Task<APIResponse<Data>, any Error>, leavesAfter bound: Int64,
            remaining: Int, sourceLocation: SourceLocation = #_sourceLocation
        ) async throws {
            clock.advance(by: .seconds(seconds))
            try await CoalescerTestKit.waitForWaiters(remaining, on: client.coalescer)
            let left = await JoinerDeadlineOrderTests.timedOutAfter(joiner)
            #expect(left == .seconds(bound), sourceLocation: sourceLocation)
        }

        /// Lets the flight answer; the leader gets the answer and the transport was called once.
        func land() async throws {
            await gate.open()
            #expect(try await leader.value.value == Data("answer 0".utf8))
            #expect(transport.callCount == 1)
        }
    }

    /// The bound a `timedOut` error names; `nil` for any other outcome.
    private static func timedOutAfter(_ joiner: Task<APIResponse<Data>, any Error>) async -> Duration? {
        do {
            _ = try await joiner.value
            return nil
        } catch {
            if case .timedOut(let after) = error as? APIError { return after }
            return nil
        }
    }

    /// Joiners that share one timeout and come one after another: each leaves that long after its own start.
    @Test func joinersWithOneTimeoutLeaveEachAtItsOwnDeadline() async throws {
        let flight = await HeldFlight()
        let first = try await flight.join(within: 5)
        // Set for the first joiner, when it came: it sleeps 5 s from then. Waited for before the clock moves, or the
        // timer's task may start late and sleep for what is left instead.
        try await AuthTestKit.waitForTimer(.seconds(5), on: flight.clock)
        flight.clock.advance(by: .seconds(1))
        let second = try await flight.join(within: 5)
        flight.clock.advance(by: .seconds(2))
        let third = try await flight.join(within: 5)

        try await flight.advance(by: 2, until: first, leavesAfter: 5, remaining: 3)
        try await AuthTestKit.waitForTimer(.seconds(1), on: flight.clock)

        try await flight.advance(by: 1, until: second, leavesAfter: 5, remaining: 2)
        try await AuthTestKit.waitForTimer(.seconds(2), on: flight.clock)

        try await flight.advance(by: 2, until: third, leavesAfter: 5, remaining: 1)
        try await flight.land()
    }

    /// Joiners with longer timeouts than the one before them, all started at once: each leaves at its own deadline.
    @Test func joinersWithLongerTimeoutsLeaveEachAtItsOwnDeadline() async throws {
        let flight = await HeldFlight()
        let first = try await flight.join(within: 2)
        let second = try await flight.join(within: 3)
        let third = try await flight.join(within: 5)
        try await AuthTestKit.waitForTimer(.seconds(2), on: flight.clock)

        try await flight.advance(by: 2, until: first, leavesAfter: 2, remaining: 3)
        try await AuthTestKit.waitForTimer(.seconds(1), on: flight.clock)

        try await flight.advance(by: 1, until: second, leavesAfter: 3, remaining: 2)
        try await AuthTestKit.waitForTimer(.seconds(2), on: flight.clock)

        try await flight.advance(by: 2, until: third, leavesAfter: 5, remaining: 1)
        try await flight.land()
    }

    /// A joiner whose deadline comes before the last one kept in order is kept aside; the flight's timer fires at the
    /// earliest of both, so it leaves between the two others.
    @Test func aJoinerWhoseDeadlineComesBeforeTheLastLeavesBetweenTheOthers() async throws {
        let flight = await HeldFlight()
        let first = try await flight.join(within: 3)
        let last = try await flight.join(within: 6)
        let between = try await flight.join(within: 4)
        try await AuthTestKit.waitForTimer(.seconds(3), on: flight.clock)

        try await flight.advance(by: 3, until: first, leavesAfter: 3, remaining: 3)
        try await AuthTestKit.waitForTimer(.seconds(1), on: flight.clock)

        try await flight.advance(by: 1, until: between, leavesAfter: 4, remaining: 2)
        try await AuthTestKit.waitForTimer(.seconds(2), on: flight.clock)

        try await flight.advance(by: 2, until: last, leavesAfter: 6, remaining: 1)
        try await flight.land()
    }

    /// Once most joiners have left, the deadlines kept are cut to those of the callers still waiting
    /// (``FlightTable/compactionFloor``), and those still leave on time.
    @Test func joinersThatStayAfterMostLeftStillLeaveOnTime() async throws {
        let flight = await HeldFlight()
        var joiners: [Task<APIResponse<Data>, any Error>] = []
        for _ in 0..<100 { joiners.append(try await flight.join(within: 2)) }
        try await AuthTestKit.waitForTimer(.seconds(2), on: flight.clock)

        for joiner in joiners.prefix(95) { joiner.cancel() }
        for joiner in joiners.prefix(95) { #expect(await CoalescerTestKit.endedInCancellation(joiner)) }
        try await CoalescerTestKit.waitForWaiters(6, on: flight.client.coalescer)

        flight.clock.advance(by: .seconds(2))
        // Waited for first: a joiner that never leaves fails the test here rather than holding it until its time limit.
        try await CoalescerTestKit.waitForWaiters(1, on: flight.client.coalescer)
        for joiner in joiners.suffix(5) { #expect(await Self.timedOutAfter(joiner) == .seconds(2)) }
        try await flight.land()
    }
}
