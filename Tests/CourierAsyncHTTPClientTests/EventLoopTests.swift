#if AsyncHTTPClient
    import AsyncHTTPClient
    import Courier
    import Foundation
    import NIOCore
    import NIOPosix
    import Testing

    @testable import CourierAsyncHTTPClient

    /// A buffered exchange that is the transport's only one runs on the transport's home event loop, started there and
    /// resumed from there (``EventLoopAffinity``); what that path skips must still hold: the caller's cancellation and
    /// the attempt's deadline stop the transfer, and every exchange is counted out, however it ends.
    @Suite("AsyncHTTPClientTransport: event loops", .timeLimit(.minutes(1)))
    struct EventLoopTests {
        @Test func anExchangeAloneRunsOnTheHomeLoopAndThoseStartedMeanwhileTakeTheGroupsLoopsInTurn() throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
            defer { try? group.syncShutdownGracefully() }
            let affinity = EventLoopAffinity(group)
            let first = affinity.enter().loop
            #expect(first === affinity.home)
            // Overlapping exchanges are spread over both loops, as AsyncHTTPClient spreads them, not kept on the home.
            let second = affinity.enter().loop
            let third = affinity.enter().loop
            #expect(second !== third)
            #expect(group.makeIterator().contains { $0 === second } && group.makeIterator().contains { $0 === third })
            affinity.leave()
            affinity.leave()
            affinity.leave()
            #expect(affinity.count == 0)
            #expect(affinity.enter().loop === affinity.home)
            affinity.leave()
        }

        /// The pool opens a connection on the loop of the request that waits for it, in the order requests reach it:
        /// a burst whose requests were all started on their loops gave every connection to whichever loop ran first,
        /// and an exchange alone on another home then crossed loops for every event (`Docs/Benchmarks.md`, session 20).
        @Test func exchangesThatMayOpenAConnectionAreHandedOverFromTheCallerAndTheRestStartOnTheirLoops() throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
            defer { try? group.syncShutdownGracefully() }
            let affinity = EventLoopAffinity(group)
            // A first burst of 4: each takes the transport to more in flight than ever, and may open a connection.
            let burst = (0..<4).map { _ in affinity.enter() }
            #expect(burst.map(\.startsOnLoop) == [false, false, false, false])
            #expect(burst[0].loop === affinity.home)
            for _ in burst { affinity.leave() }
            // The pool has a connection for each of 4 now: up to 4 in flight, every exchange starts on its loop.
            let again = (0..<4).map { _ in affinity.enter() }
            #expect(again.map(\.startsOnLoop) == [true, true, true, true])
            #expect(again[0].loop === affinity.home)
            // A fifth at once is new again.
            let fifth = affinity.enter()
            #expect(!fifth.startsOnLoop)
            for _ in 0..<5 { affinity.leave() }
            #expect(affinity.count == 0)
        }

        @Test func transportsTakeTheirHomesFromTheGroupInTurn() throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
            defer { try? group.syncShutdownGracefully() }
            let homes = (0..<4).map { _ in EventLoopAffinity(group).home }
            #expect(homes[0] !== homes[1] && homes[0] === homes[2] && homes[1] === homes[3])
        }

        @Test func aCallerCancelledWhileItsExchangeIsInFlightLeavesAndTheTransferStops() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let call = Task {
                    try await transport.send(
                        TransportRequest(url: server.url("/stall")), deadline: TransportDeadline(timeout: .seconds(60)))
                }
                #expect(await server.log.first { $0 == .responding(path: "/stall") } == .responding(path: "/stall"))
                call.cancel()
                await #expect(throws: CancellationError.self) { try await call.value }
                #expect(await server.log.first { $0 == .closedEarly(path: "/stall") } == .closedEarly(path: "/stall"))
                #expect(transport.affinity.count == 0)
                try await transport.shutdown()
            }
        }

        @Test func aCallerCancelledWhileAnotherExchangeIsInFlightLeavesAndItsTransferStops() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let deadline = TransportDeadline(timeout: .seconds(60))
                // The first exchange has the home loop; the second is started on the group's next loop.
                let first = Task {
                    try await transport.send(TransportRequest(url: server.url("/stall")), deadline: deadline)
                }
                #expect(await server.log.first { $0 == .responding(path: "/stall") } == .responding(path: "/stall"))
                let second = Task {
                    try await transport.send(
                        TransportRequest(url: server.url("/stall"), headers: ["X-Exchange": "second"]),
                        deadline: deadline)
                }
                let arrived = await server.log.first { event in
                    guard case .request(_, _, let headers, _) = event else { return false }
                    return headers["x-exchange"] == "second"
                }
                #expect(arrived != nil)
                #expect(transport.affinity.count == 2)
                second.cancel()
                await #expect(throws: CancellationError.self) { try await second.value }
                // Only the second exchange's connection can have closed: the first is still reading.
                #expect(await server.log.first { $0 == .closedEarly(path: "/stall") } == .closedEarly(path: "/stall"))
                #expect(transport.affinity.count == 1)
                first.cancel()
                await #expect(throws: CancellationError.self) { try await first.value }
                #expect(transport.affinity.count == 0)
                try await transport.shutdown()
            }
        }

        @Test func aCallerCancelledBeforeItsExchangeIsMadeGetsCancellationError() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let call = Task {
                    // Cancelled before the exchange exists: the hop's task is made on the event loop, and is failed
                    // as soon as it starts.
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await transport.send(
                        TransportRequest(url: server.url("/stall")), deadline: TransportDeadline(timeout: .seconds(60)))
                }
                await #expect(throws: CancellationError.self) { try await call.value }
                #expect(transport.affinity.count == 0)
                try await transport.shutdown()
            }
        }

        @Test func concurrentExchangesOverTwoLoopsAllArriveAndAreAllCountedOut() async throws {
            try await withTestServer { server in
                let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
                let transport = AsyncHTTPClientTransport(eventLoopGroup: group)
                let deadline = TransportDeadline(timeout: .seconds(30))
                let statuses = try await withThrowingTaskGroup(of: Int.self, returning: [Int].self) { tasks in
                    for _ in 0..<40 {
                        tasks.addTask {
                            try await transport.send(TransportRequest(url: server.url("/json")), deadline: deadline)
                                .statusCode
                        }
                    }
                    return try await tasks.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses == Array(repeating: 200, count: 40))
                #expect(server.log.requests.count == 40)
                #expect(transport.affinity.count == 0)
                try await transport.shutdown()
                try await group.shutdownGracefully()
            }
        }

        @Test func anExchangeThatFailsIsCountedOut() async throws {
            let transport = AsyncHTTPClientTransport(maxResponseBytes: 20)
            try await withTestServer { server in
                let error = await #expect(throws: APIError.self) {
                    try await transport.send(
                        TransportRequest(url: server.url("/json")), deadline: TransportDeadline(timeout: .seconds(30)))
                }
                guard case .responseTooLarge(20)? = error else {
                    Issue.record("expected responseTooLarge(20), got \(String(describing: error))")
                    return
                }
            }
            #expect(transport.affinity.count == 0)
            // The next exchange, alone again, runs on the home loop and arrives.
            try await withTestServer { server in
                let response = try await transport.send(
                    TransportRequest(url: server.url("/chunked")), deadline: TransportDeadline(timeout: .seconds(30)))
                #expect(response.statusCode == 200)
                #expect(String(decoding: response.body, as: UTF8.self) == "alpha-beta-gamma")
            }
            #expect(transport.affinity.count == 0)
            try await transport.shutdown()
        }
    }
#endif
