import Foundation
import Testing

@testable import Courier

private typealias Kit = EventTestKit

/// The fan-out itself: every subscriber gets every event in one order, a slow subscriber costs its buffer and
/// nothing more, subscribers that leave are removed, and nobody listening means nothing is built.
@Suite(.timeLimit(.minutes(2))) struct EventLogTests {
    private static func id(_ number: Int) -> CallID { CallID(rawValue: UInt64(number)) }

    @Test func withNoSubscriberNoEventIsBuilt() {
        let log = EventLog(clock: TestClock())
        let built = Locked(0)
        func make() -> ClientEvent.Kind {
            built.withLock { $0 += 1 }
            return .cacheMiss
        }
        for number in 1...100 { log.emit(Self.id(number), make()) }
        #expect(built.withLock { $0 } == 0)
        let events = log.subscribe()
        log.emit(Self.id(1), make())
        #expect(built.withLock { $0 } == 1)
        withExtendedLifetime(events) {}
    }

    @Test func aSubscriberThatNeverReadsKeepsOnlyItsBufferAndCountsTheRest() async {
        var log: EventLog? = EventLog(clock: TestClock())
        let events = log!.subscribe()
        for number in 1...5_000 { log!.emit(Self.id(number), .cacheMiss) }
        #expect(log!.droppedCount == 3_976)
        #expect(log!.subscriberCount == 1)
        log = nil  // finishes the stream, so that reading it later ends
        var delivered: [ClientEvent] = []
        for await event in events { delivered.append(event) }
        #expect(delivered.count == 1_024)
        #expect(delivered.map(\.callID) == (3_977...5_000).map(Self.id))
    }

    @Test func aSubscriberChoosesItsOwnBuffer() async {
        let log = EventLog(clock: TestClock())
        let small = log.subscribe(bufferingNewest: 10)
        let large = log.subscribe()
        for number in 1...100 { log.emit(Self.id(number), .cacheMiss) }
        #expect(log.droppedCount == 90)
        #expect(await Kit.collect(small, from: log).map(\.callID) == (92...100).map(Self.id))
        #expect(await Kit.collect(large, from: log).count == 100)
    }

    @Test func twoSubscribersReceiveEveryEventInTheSameOrder() async {
        let clock = TestClock()
        let log = EventLog(bufferSize: 10_000, clock: clock)
        let first = log.subscribe()
        let second = log.subscribe()
        await withTaskGroup(of: Void.self) { group in
            for emitter in 0..<4 {
                group.addTask {
                    for number in 1...250 {
                        if number % 50 == 0 { clock.advance(by: .milliseconds(1)) }
                        log.emit(Self.id(emitter * 1_000 + number), .cacheMiss)
                    }
                }
            }
        }
        let one = await Kit.collect(first, from: log)
        let two = await Kit.collect(second, from: log)
        #expect(one.count == 1_000)
        #expect(one == two)
        #expect(Set(one.map(\.callID)).count == 1_000)
        #expect(zip(one, one.dropFirst()).allSatisfy { $0.at <= $1.at })
        for emitter in 0..<4 {
            let own = one.map(\.callID.rawValue).filter { $0 / 1_000 == UInt64(emitter) }
            #expect(own == own.sorted())
        }
    }

    @Test func aCancelledSubscriberIsRemoved() async {
        let log = EventLog(clock: TestClock())
        let events = log.subscribe()
        let started = Locked(false)
        let reader = Task {
            started.withLock { $0 = true }
            for await _ in events {}
        }
        #expect(log.subscriberCount == 1)
        #expect(await CoalescerTestKit.eventually { started.withLock { $0 } })
        reader.cancel()
        await reader.value
        #expect(await CoalescerTestKit.eventually { log.subscriberCount == 0 })
        #expect(!log.hasSubscribers)
    }

    @Test func aSubscriberThatIsReleasedIsRemoved() async {
        let log = EventLog(clock: TestClock())
        do {
            let events = log.subscribe()
            #expect(log.subscriberCount == 1)
            _ = await Kit.collect(events, from: log)  // stops iterating and drops the stream
        }
        #expect(log.subscriberCount == 0)
        _ = log.subscribe()
        #expect(log.subscriberCount == 0)
    }

    @Test func aSubscriberThatNeverReadsLeavesRequestsAlone() async throws {
        let client = Kit.makeClient(MockTransport.responding(body: "ok"))
        let events = client.events
        // 400 calls are enough to overflow the buffer; sequential calls are slow under ThreadSanitizer.
        for _ in 0..<400 { _ = try await client.send(APIRequest<Data>.get("/items")) }
        let metrics = client.metrics
        #expect(metrics.requests == 400)
        #expect(metrics.failures == 0)
        // Four events per call (started, attempt, response, finished): all but the newest 1,024 were dropped.
        #expect(metrics.droppedEvents == 1_600 - 1_024)
        let kept = await Kit.collect(events, from: client.eventLog)
        #expect(kept.count == 1_023)  // the marker itself pushed out one more
        #expect(kept.last?.kind == .requestFinished(source: .network, status: 200, duration: .zero))
    }

    @Test func printEventsWritesOneReadableLinePerEvent() async throws {
        let gate = CoalescerTestKit.Gate()
        let transport = MockTransport { _, _ in
            _ = await gate.wait()
            return .text(200, "ok")
        }
        let client = Kit.makeClient(transport)
        let lines = Locked<[String]>([])
        let printer = client.printEvents { line in lines.withLock { $0.append(line) } }
        let request = APIRequest<Data>.get("/users", query: [URLQueryItem(name: "token", value: "abc")])
        let leader = Task { try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)
        let joiner = Task { try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(2, on: client.coalescer)
        await gate.open()
        _ = try await (leader.value, joiner.value)
        #expect(await CoalescerTestKit.eventually { lines.withLock { $0.count } == 7 })
        printer.cancel()
        let target = "GET https://api.example.com/users?token=<redacted>"
        let printed = lines.withLock { $0 }
        #expect(printed.contains("#1 +0.0ms \(target) started"))
        #expect(printed.contains("#1 +0.0ms \(target) attempt 1 sent"))
        #expect(printed.contains("#1 +0.0ms \(target) ← 200, 2 bytes in 0.0ms (attempt 1)"))
        #expect(printed.contains("#2 +0.0ms \(target) → joined #1"))
        #expect(printed.contains("#2 +0.0ms \(target) finished 200 from network in 0.0ms"))
        #expect(!printed.joined().contains("abc"))
        await printer.value
        #expect(client.eventLog.subscriberCount == 0)
    }

    // MARK: One Stream, Two Tasks

    @Test func twoTasksIteratingOneStreamShareItsEventsAndNeverHang() async {
        var log: EventLog? = EventLog(clock: TestClock())
        let shared = log!.subscribe()
        let readers = (0..<2).map { _ in
            Task { () -> [CallID] in
                var received: [CallID] = []
                for await event in shared { received.append(event.callID) }
                return received
            }
        }
        // Both suspended on the same subscriber (the check for cancellation lets the time limit end a regression).
        while log!.waitingReaderCount < 2, !Task.isCancelled { await Task.yield() }
        for number in 1...1_000 { log!.emit(Self.id(number), .cacheMiss) }
        log = nil  // ends the stream once what it buffered is read

        let received = await readers[0].value + readers[1].value
        #expect(received.count == 1_000)
        #expect(Set(received) == Set((1...1_000).map(Self.id)))
    }

    @Test func twoTasksIteratingOneClientStreamSeeEveryEventOnceBetweenThem() async throws {
        var client: APIClient? = Kit.makeClient(MockTransport.responding(body: "ok"))
        let shared = client!.events
        let reference = client!.events
        let readers = (0..<2).map { _ in
            Task { () -> [ClientEvent] in
                var received: [ClientEvent] = []
                for await event in shared { received.append(event) }
                return received
            }
        }
        while client!.eventLog.waitingReaderCount < 2, !Task.isCancelled { await Task.yield() }
        for number in 1...20 { try await client!.send(APIRequest<Data>.get("/items/\(number)")) }
        client = nil

        let received = await readers[0].value + readers[1].value
        var expected: [ClientEvent] = []
        for await event in reference { expected.append(event) }
        #expect(expected.count >= 20 * 3)
        #expect(received.map(\.description).sorted() == expected.map(\.description).sorted())
    }

    @Test(arguments: [
        (Duration.zero, "0.0ms"), (.microseconds(3_250), "3.2ms"), (.seconds(2), "2000.0ms"),
        (.milliseconds(-1), "-1.0ms"),
    ])
    func durationsPrintInMilliseconds(duration: Duration, text: String) {
        #expect(duration.formattedMilliseconds == text)
    }

    @Test func anEventDescribesItselfOnOneLine() {
        let event = ClientEvent(
            callID: Self.id(12), at: .microseconds(3_200), kind: .joinedFlight(leader: Self.id(11)))
        #expect(event.description == "#12 +3.2ms → joined #11")
    }
}

/// The counters are atomics read one by one: under parallel calls they stay exact, and a snapshot never shows a call's
/// failure or join without the call itself.
@Suite(.timeLimit(.minutes(2))) struct MetricsCounterTests {
    @Test func countersStayExactAndASnapshotNeverOutrunsItsRequests() async throws {
        let transport = MockTransport { request in
            await Task.yield()
            let failing = request.url.path.hasPrefix("/fail")
            return TransportResponse(statusCode: failing ? 500 : 200, headers: [:], body: Data("x".utf8))
        }
        let client = Kit.makeClient(transport)
        let calls = 1_000
        let reader = Task {
            var snapshots = 0
            while !Task.isCancelled {
                let metrics = client.metrics
                #expect(metrics.requests >= metrics.failures + metrics.cancellations)
                #expect(metrics.requests >= metrics.joined)
                snapshots += 1
                await Task.yield()
            }
            return snapshots
        }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<calls {
                group.addTask {
                    _ = try? await client.send(APIRequest<Data>.get(index.isMultiple(of: 4) ? "/fail/\(index)" : "/ok"))
                }
            }
        }
        reader.cancel()
        #expect(await reader.value > 0)
        let metrics = client.metrics
        #expect(metrics.requests == calls)
        #expect(metrics.failures == calls / 4)
        #expect(metrics.cancellations == 0)
        #expect(metrics.upstreamCalls + metrics.joined == calls)
    }
}
