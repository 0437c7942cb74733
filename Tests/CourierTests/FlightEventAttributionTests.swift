import Foundation
import Testing

@testable import Courier

/// A call's events end with its last event: when the leader of a shared flight leaves (cancelled) while others still
/// wait, the flight's later steps (the response, the store) are reported for a caller still in the flight, never for
/// the leader after its `requestFailed`.
@Suite(.timeLimit(.minutes(1))) struct FlightEventAttributionTests {
    /// The events of a call that came after its terminal event (`requestFinished` or `requestFailed`).
    static func eventsAfterTheEnd(_ events: [ClientEvent]) -> [ClientEvent] {
        var ended: Set<CallID> = []
        var late: [ClientEvent] = []
        for event in events {
            if ended.contains(event.callID) { late.append(event) }
            switch event.kind {
            case .requestFinished, .requestFailed: ended.insert(event.callID)
            default: break
            }
        }
        return late
    }

    /// A transport whose request for `/rN` waits at gate `N`.
    static func gatedByPath(_ gates: [TenantKit.Gate]) -> MockTransport {
        MockTransport { request, _ in
            let round = Int(request.url.lastPathComponent.dropFirst()) ?? 0
            _ = await gates[round].wait()
            return TransportResponse(
                statusCode: 200, headers: ["Cache-Control": "max-age=60"], body: Data("ok".utf8))
        }
    }

    @Test func aCancelledLeadersFlightReportsItsLaterStepsForAJoiner() async throws {
        let gates = [TenantKit.Gate()]
        let transport = Self.gatedByPath(gates)
        let client = EventTestKit.makeClient(transport, cache: ResponseCache())
        let events = client.events(bufferingNewest: 1_000)
        let leader = Task { try await client.send(APIRequest<Data>.get("/r0")) }
        #expect(await TenantKit.eventually { transport.callCount == 1 })
        let joiners = (0..<3).map { _ in Task { try await client.send(APIRequest<Data>.get("/r0")) } }
        try await TenantKit.waitForWaiters(4, on: client.coalescer)
        leader.cancel()
        await #expect(throws: CancellationError.self) { try await leader.value }
        try await TenantKit.waitForWaiters(3, on: client.coalescer)
        await gates[0].open()
        for joiner in joiners { #expect(try await joiner.value.joined) }

        let log = await EventTestKit.collect(events, from: client.eventLog)
        #expect(Self.eventsAfterTheEnd(log).isEmpty)
        let leaderID = CallID(rawValue: 1)
        #expect(EventTestKit.kinds(log, of: 1).last.map { if case .requestFailed = $0 { true } else { false } } == true)
        let received = log.filter { if case .responseReceived = $0.kind { true } else { false } }
        let stored = log.filter { if case .stored = $0.kind { true } else { false } }
        #expect(received.count == 1)
        #expect(stored.count == 1)
        #expect(received.allSatisfy { $0.callID != leaderID && (2...4).contains($0.callID.rawValue) })
        #expect(stored.map(\.callID) == received.map(\.callID))
        #expect(transport.callCount == 1)
    }

    /// Two hundred flights, each with a leader and three joiners, where the leader is cancelled while the flight's
    /// answer arrives, on other threads: in every one, no call has an event after its last, each flight went upstream
    /// once, and every joiner got the answer.
    @Test func noCallHasAnEventAfterItsLastUnderParallelCancellation() async throws {
        let rounds = 200
        let gates = (0..<rounds).map { _ in TenantKit.Gate() }
        let transport = Self.gatedByPath(gates)
        let client = EventTestKit.makeClient(transport, cache: ResponseCache())
        let events = client.events(bufferingNewest: 20 * rounds)
        var joined = 0
        for round in 0..<rounds {
            let path = "/r\(round)"
            let leader = Task.detached { try await client.send(APIRequest<Data>.get(path)) }
            #expect(await TenantKit.eventually { transport.callCount == round + 1 })
            let joiners = (0..<3).map { _ in Task.detached { try await client.send(APIRequest<Data>.get(path)) } }
            try await TenantKit.waitForWaiters(4, on: client.coalescer)
            // The cancellation and the answer race on two threads.
            async let cancelled: Void = Task.detached { leader.cancel() }.value
            async let opened: Void = Task.detached { await gates[round].open() }.value
            _ = await (cancelled, opened)
            _ = await leader.result
            for joiner in joiners { if try await joiner.value.joined { joined += 1 } }
        }
        let log = await EventTestKit.collect(events, from: client.eventLog)
        let late = Self.eventsAfterTheEnd(log)
        #expect(late.isEmpty, "\(late.count) events after their call's last: \(late.prefix(5))")
        #expect(transport.callCount == rounds)
        #expect(joined == 3 * rounds)
        #expect(log.filter { if case .responseReceived = $0.kind { true } else { false } }.count == rounds)
        #expect(client.metrics.droppedEvents == 0)
    }
}
