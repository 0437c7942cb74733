import Foundation
import Synchronization
import Testing

@testable import Courier

/// A call that finds its request's flight in the air joins it without a `Call` of its own, without the frames of a
/// call on its way to the network, and with its deadline counted from its start. Each test proves that what the
/// shortcut skips still holds where it is needed: the caller's own deadline and cancellation, events once someone
/// listens, the cache asked first, and the whole way when the flight lands before the caller joins it.
@Suite(.timeLimit(.minutes(1))) struct JoiningShortcutTests {
    private static let baseURL = URL(string: "https://api.example.com")!

    /// A client over a transport that holds every request until `gate` opens.
    private static func client(
        _ gate: CoalescerTestKit.Gate, clock: TestClock = TestClock(), cache: ResponseCache? = nil
    )
        -> (APIClient, MockTransport)
    {
        let transport = MockTransport { _, index in
            _ = await gate.wait()
            return .text(200, "answer \(index)", headers: ["Cache-Control": "max-age=3600"])
        }
        let client = APIClient(
            baseURL: baseURL,
            configuration: .init(transport: transport, cache: cache, retryPolicy: .never, clock: clock))
        return (client, transport)
    }

    /// How steps 1–3 route `request` for a call started now that may join.
    private static func route(_ request: APIRequest<Data>, on client: APIClient) throws -> APIClient.Route {
        try client.route(request.fields, id: CallID(rawValue: 1_000), decoding: nil, joining: true)
    }

    /// The bound a `timedOut` error names; `nil` for any other error.
    private static func timedOutAfter(_ error: APIError) -> Duration? {
        if case .timedOut(let after) = error { after } else { nil }
    }

    private static func isJoin(_ route: APIClient.Route) -> Bool {
        if case .join = route { true } else { false }
    }

    @Test func aCallThatFindsItsFlightInTheAirIsRoutedToJoinIt() async throws {
        let gate = CoalescerTestKit.Gate()
        let (client, transport) = Self.client(gate)
        let request = APIRequest<Data>.get("/item")
        #expect(!Self.isJoin(try Self.route(request, on: client)), "no flight in the air: the call leads")
        let leader = Task { try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)

        #expect(Self.isJoin(try Self.route(request, on: client)))
        #expect(!Self.isJoin(try Self.route(.get("/other"), on: client)), "another request's flight is not joined")
        let coalescingOff = APIRequest<Data>(path: "/item", coalescing: .never)
        #expect(!Self.isJoin(try Self.route(coalescingOff, on: client)))

        await gate.open()
        _ = try await leader.value
        #expect(transport.callCount == 1)
    }

    @Test func aJoinerWithAnEarlierDeadlineLeavesOnTime() async throws {
        let clock = TestClock()
        let gate = CoalescerTestKit.Gate()
        let (client, transport) = Self.client(gate, clock: clock)
        let leader = Task { try await client.send(APIRequest<Data>(path: "/slow", timeout: .seconds(60))) }
        await clock.waitForSleeper(of: .seconds(60))
        let request = APIRequest<Data>(path: "/slow", timeout: .seconds(1))
        #expect(Self.isJoin(try Self.route(request, on: client)), "the joiner below takes the shortcut")
        let joiner = Task { try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(2, on: client.coalescer)
        // The flight's one timer fires at the joiner's deadline, the earliest of its waiters'.
        try await AuthTestKit.waitForTimer(.seconds(1), on: clock)

        clock.advance(by: .seconds(1))

        let error = try await #require(throws: APIError.self) { try await joiner.value }
        guard case .timedOut(let after) = error else {
            Issue.record("expected timedOut, got \(error)")
            return
        }
        #expect(after == .seconds(1))
        #expect(await client.coalescer.waiterCount == 1, "the leader still waits")
        await gate.open()
        #expect(try await leader.value.value == Data("answer 0".utf8))
        #expect(transport.callCount == 1)
        ReliabilityKit.record(
            "deadlines", "a 1 s joiner behind a 60 s leader's stuck flight", cases: 2,
            outcome: "the joiner timed out at 1 s on the clock; the leader got the answer; 1 upstream call")
    }

    @Test func aLaterJoinerWithAnEarlierDeadlineMovesTheFlightsTimer() async throws {
        let clock = TestClock()
        let gate = CoalescerTestKit.Gate()
        let (client, transport) = Self.client(gate, clock: clock)
        let leader = Task { try await client.send(APIRequest<Data>(path: "/slow", timeout: .seconds(60))) }
        await clock.waitForSleeper(of: .seconds(60))
        let patient = Task { try await client.send(APIRequest<Data>(path: "/slow", timeout: .seconds(5))) }
        try await CoalescerTestKit.waitForWaiters(2, on: client.coalescer)
        try await AuthTestKit.waitForTimer(.seconds(5), on: clock)
        let hasty = APIRequest<Data>(path: "/slow", timeout: .seconds(1))
        #expect(Self.isJoin(try Self.route(hasty, on: client)))
        let hastyCall = Task { try await client.send(hasty) }
        try await CoalescerTestKit.waitForWaiters(3, on: client.coalescer)
        try await AuthTestKit.waitForTimer(.seconds(1), on: clock)

        clock.advance(by: .seconds(1))
        let hastyError = try await #require(throws: APIError.self) { try await hastyCall.value }
        #expect(Self.timedOutAfter(hastyError) == .seconds(1))
        #expect(await client.coalescer.waiterCount == 2, "the 5 s joiner and the leader still wait")
        try await AuthTestKit.waitForTimer(.seconds(4), on: clock)

        clock.advance(by: .seconds(4))
        let patientError = try await #require(throws: APIError.self) { try await patient.value }
        #expect(Self.timedOutAfter(patientError) == .seconds(5))
        await gate.open()
        #expect(try await leader.value.value == Data("answer 0".utf8))
        #expect(transport.callCount == 1)
    }

    /// Why a joiner registers its deadline even when the flight's timer already fires earlier: the waiter that set
    /// that timer leaving does not end the flight, so a joiner with no entry of its own would wait for the flight (60 s
    /// here) past its own deadline. A shortcut that skipped the entry fails this test.
    @Test func aJoinerWhoseDeadlineIsLaterThanTheFlightsTimerStillLeavesOnTime() async throws {
        let clock = TestClock()
        let gate = CoalescerTestKit.Gate()
        let (client, transport) = Self.client(gate, clock: clock)
        let leader = Task { try await client.send(APIRequest<Data>(path: "/slow", timeout: .seconds(60))) }
        await clock.waitForSleeper(of: .seconds(60))
        let hasty = Task { try await client.send(APIRequest<Data>(path: "/slow", timeout: .seconds(1))) }
        try await CoalescerTestKit.waitForWaiters(2, on: client.coalescer)
        try await AuthTestKit.waitForTimer(.seconds(1), on: clock)
        let patient = APIRequest<Data>(path: "/slow", timeout: .seconds(5))
        #expect(Self.isJoin(try Self.route(patient, on: client)), "the joiner below takes the shortcut")
        let patientCall = Task { try await client.send(patient) }
        try await CoalescerTestKit.waitForWaiters(3, on: client.coalescer)

        clock.advance(by: .seconds(1))
        let hastyError = try await #require(throws: APIError.self) { try await hasty.value }
        #expect(Self.timedOutAfter(hastyError) == .seconds(1))
        #expect(await client.coalescer.waiterCount == 2, "the flight goes on for the leader and the 5 s joiner")
        try await AuthTestKit.waitForTimer(.seconds(4), on: clock)

        clock.advance(by: .seconds(4))
        let patientError = try await #require(throws: APIError.self) { try await patientCall.value }
        #expect(Self.timedOutAfter(patientError) == .seconds(5))
        await gate.open()
        #expect(try await leader.value.value == Data("answer 0".utf8))
        #expect(transport.callCount == 1)
    }

    @Test func aJoinWithoutAFlightRegistersNothing() async throws {
        let coalescer = RequestCoalescer<String, Int>()

        let joined = try await coalescer.join("k", tag: 0, deadline: nil)

        #expect(joined == nil)
        #expect(await coalescer.waiterCount == 0)
        #expect(await coalescer.flightCount == 0)
    }

    @Test func aJoinerThatIsCancelledLeavesAtOnce() async throws {
        let gate = CoalescerTestKit.Gate()
        let (client, transport) = Self.client(gate)
        let request = APIRequest<Data>.get("/item")
        let leader = Task { try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)
        #expect(Self.isJoin(try Self.route(request, on: client)))
        let joiner = Task { try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(2, on: client.coalescer)

        joiner.cancel()

        await #expect(throws: CancellationError.self) { try await joiner.value }
        #expect(await client.coalescer.waiterCount == 1, "the flight goes on for the leader")
        await gate.open()
        #expect(try await leader.value.value == Data("answer 0".utf8))
        #expect(transport.callCount == 1)
        #expect(client.metrics.cancellations == 1)
    }

    /// A joiner whose task is cancelled before it registers (here, before it calls at all) is turned away when it
    /// registers: its cancellation handler ran before there was anything to withdraw. Without that check it would wait
    /// for the flight, cancelled.
    @Test func aJoinerCancelledBeforeItJoinsLeavesAtOnce() async throws {
        let gate = CoalescerTestKit.Gate()
        let (client, transport) = Self.client(gate)
        let request = APIRequest<Data>.get("/item")
        let leader = Task { try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)
        #expect(Self.isJoin(try Self.route(request, on: client)), "the joiner below takes the shortcut")
        let ended = Atomic(false)
        let joiner = Task {
            defer { ended.store(true, ordering: .relaxed) }
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(request)
        }
        // Bounded: the flight is held, so only a joiner that was turned away ends within these turns.
        for _ in 0..<100_000 where !ended.load(ordering: .relaxed) { await Task.yield() }

        let leftFirst = ended.load(ordering: .relaxed)
        #expect(leftFirst, "the cancelled joiner left before its flight answered")
        #expect(await client.coalescer.waiterCount == 1, "only the leader waits")
        await gate.open()
        await #expect(throws: CancellationError.self) { try await joiner.value }
        #expect(try await leader.value.value == Data("answer 0".utf8))
        #expect(transport.callCount == 1)
    }

    @Test func eventsAppearAsSoonAsSomeoneListens() async throws {
        let gate = CoalescerTestKit.Gate()
        let (client, transport) = Self.client(gate)
        let request = APIRequest<Data>.get("/item")
        let leader = Task { try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)
        // Nobody listens: the first joiner takes the shortcut.
        let quiet = Task { try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(2, on: client.coalescer)

        let events = client.events
        #expect(!Self.isJoin(try Self.route(request, on: client)), "with a listener the call goes the whole way")
        let heard = Task { try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(3, on: client.coalescer)
        await gate.open()
        let leaderID = try await leader.value.callID
        _ = try await quiet.value
        let heardID = try #require(try await heard.value.callID)

        var kinds: [ClientEvent.Kind] = []
        for await event in events where event.callID == heardID {
            kinds.append(event.kind)
            if case .requestFinished = event.kind { break }
        }
        #expect(kinds.contains { if case .requestStarted = $0 { true } else { false } })
        #expect(kinds.contains { $0 == .joinedFlight(leader: try! #require(leaderID)) })
        #expect(transport.callCount == 1)
        #expect(client.metrics.joined == 2, "both joiners are counted, heard or not")
    }

    @Test func aFreshHitWinsOverAFlightInTheAir() async throws {
        let gate = CoalescerTestKit.Gate()
        // The first call is answered at once and stored fresh; the reload after it waits at the gate.
        let transport = MockTransport { _, index in
            if index > 0 { _ = await gate.wait() }
            return .text(200, "answer \(index)", headers: ["Cache-Control": "max-age=3600"])
        }
        let client = APIClient(
            baseURL: Self.baseURL,
            configuration: .init(transport: transport, cache: ResponseCache(), retryPolicy: .never))
        let request = APIRequest<Data>.get("/item")
        #expect(try await client.send(request).source == .network)
        // A reload skips the cache and flies under the same key as the plain request.
        let reload = Task { try await client.send(APIRequest<Data>(path: "/item", cachePolicy: .reloadIgnoringCache)) }
        try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)
        #expect(!Self.isJoin(try Self.route(request, on: client)), "the cache answers before any flight is looked at")

        let hit = try await client.send(request)

        #expect(hit.source == .cache)
        #expect(hit.value == Data("answer 0".utf8))
        #expect(!hit.joined)
        #expect(await client.coalescer.waiterCount == 1, "the reload still flies")
        await gate.open()
        #expect(try await reload.value.value == Data("answer 1".utf8))
        #expect(transport.callCount == 2)
    }

    @Test func aJoinerWhoseFlightLandedFirstGoesTheWholeWay() async throws {
        let gate = CoalescerTestKit.Gate()
        let (client, transport) = Self.client(gate)
        let request = APIRequest<Data>.get("/item")
        let leader = Task { try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)
        guard case .join(let joining) = try Self.route(request, on: client) else {
            Issue.record("expected the call to be routed to the flight in the air")
            return
        }
        await gate.open()
        _ = try await leader.value

        // The flight is gone before this caller joins it: it leads a flight of its own.
        let exchange = try await client.join(
            joining, request.fields, id: CallID(rawValue: 1_000), since: .zero, decodingOnce: nil)

        #expect(!exchange.joined)
        #expect(exchange.response.body == Data("answer 1".utf8))
        #expect(transport.callCount == 2)
        #expect(await client.coalescer.flightCount == 0)
    }
}
