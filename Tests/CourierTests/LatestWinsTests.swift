import CourierTesting
import Foundation
import Testing

@testable import Courier

@Suite struct LatestWinsTests {
    private static func search(_ text: String, debounce: Duration = .zero) -> APIRequest<Data> {
        var request = APIRequest<Data>.get("/search", query: [URLQueryItem(name: "q", value: text)])
        request.latestWins = LatestWins(slot: "search", debounce: debounce)
        return request
    }

    private static func isSuperseded(_ error: any Error) -> Bool {
        guard case .superseded(let slot) = error as? APIError else { return false }
        return slot == "search" && "\(error)".contains("newer request in the latest-wins slot \"search\"")
    }

    /// A server that holds each request until it is cancelled, except those whose query is `q=fast`.
    private static func holdingServer(cancelled: Locked<Int>) -> StubTransport {
        StubTransport { request in
            if request.url.query == "q=fast" { return .json("[]") }
            let (never, _) = AsyncStream<Void>.makeStream()
            for await _ in never {}
            cancelled.withLock { $0 += 1 }
            throw CancellationError()
        }
    }

    @Test func aNewerRequestCancelsTheOneInFlightAndItsCallerIsToldWhy() async throws {
        let cancelled = Locked(0)
        let transport = Self.holdingServer(cancelled: cancelled)
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!, configuration: .init(transport: transport, cache: nil))

        let first = Task { try await client.send(Self.search("slow")) }
        while transport.callCount < 1 { await Task.yield() }
        let second = try await client.send(Self.search("fast"))

        await #expect(performing: { try await first.value }, throws: Self.isSuperseded)
        #expect(second.statusCode == 200)
        #expect(transport.callCount == 2 && cancelled.withLock { $0 } == 1)
        #expect(client.latestWinsSlots.count(in: "search") == 0)
    }

    @Test func aRequestSupersededDuringItsDebounceIsNeverSent() async throws {
        let clock = ManualClock()
        let transport = StubTransport.json("[]")
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!,
            configuration: .init(transport: transport, cache: nil, clock: clock))

        let first = Task { try await client.send(Self.search("a", debounce: .milliseconds(250))) }
        await clock.waitForSleeper(of: .milliseconds(250))
        let second = Task { try await client.send(Self.search("ab", debounce: .milliseconds(250))) }
        await #expect(performing: { try await first.value }, throws: Self.isSuperseded)
        #expect(transport.callCount == 0)

        await clock.waitForSleeper(of: .milliseconds(250))
        clock.advance(by: .milliseconds(250))
        _ = try await second.value

        #expect(transport.requests.map(\.url.query) == ["q=ab"])
    }

    @Test func ofFiftyConcurrentRequestsInASlotExactlyOneIsSent() async throws {
        let clock = ManualClock()
        let transport = StubTransport.json("[]")
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!,
            configuration: .init(transport: transport, cache: nil, clock: clock))

        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<50 {
                group.addTask {
                    do {
                        _ = try await client.send(Self.search("query \(index)", debounce: .milliseconds(100)))
                        return true
                    } catch  where Self.isSuperseded(error) {
                        return false
                    }
                }
            }
            var outcomes: [Bool] = []
            while outcomes.count < 49, let outcome = try await group.next() { outcomes.append(outcome) }
            await clock.waitForSleeper(of: .milliseconds(100))
            clock.advance(by: .milliseconds(100))
            while let outcome = try await group.next() { outcomes.append(outcome) }
            return outcomes
        }

        #expect(outcomes.filter { $0 }.count == 1 && outcomes.filter { !$0 }.count == 49)
        #expect(transport.callCount == 1)
    }

    @Test func identicalRequestsInASlotStillShareOneFlight() async throws {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let transport = StubTransport { _ in
            for await _ in gate {}
            return .json("[]")
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!, configuration: .init(transport: transport, cache: nil))

        async let first = client.send(Self.search("same"))
        async let second = client.send(Self.search("same"))
        while await client.coalescer.waiterCount < 2 { await Task.yield() }
        open.finish()
        let joined = try await [first.joined, second.joined]

        #expect(transport.callCount == 1)
        #expect(joined.filter { $0 }.count == 1)
    }

    @Test func slotsAreIndependentAndCallersCancellationIsNotSupersession() async throws {
        let cancelled = Locked(0)
        let transport = Self.holdingServer(cancelled: cancelled)
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!, configuration: .init(transport: transport, cache: nil))
        var other = Self.search("fast")
        other.latestWins = LatestWins(slot: "other")

        let held = Task { try await client.send(Self.search("slow")) }
        while transport.callCount < 1 { await Task.yield() }
        _ = try await client.send(other)  // another slot: the held request goes on
        #expect(cancelled.withLock { $0 } == 0)

        held.cancel()
        await #expect(throws: CancellationError.self) { try await held.value }
    }

    @Test func theFieldsTheCallReadsHoldEveryProperty() {
        var request = APIRequest<[String]>.post("/items", body: ["a": "b"])
        request.query = [URLQueryItem(name: "q", value: "1")]
        request.cachePolicy = .reloadIgnoringCache
        request.coalescing = .always
        request.requiresAuthentication = false
        request.sendsCredentialsToAnyOrigin = true
        request.timeout = .seconds(3)
        request.callTimeout = .seconds(9)
        request.decoder = JSONDecoder()
        request.errorMapping = ResponseErrorMapping { _ in nil }
        request.latestWins = LatestWins(slot: "s", debounce: .seconds(1))
        request.redirectPolicy = .follow(limit: 3)
        request.defaultFreshness = .seconds(300)
        request.throwsOnUnacceptableStatus = false

        // The call's steps read the request's fields, typed for no `Value`: every property must be one of them.
        let fields = Mirror(reflecting: request.fields).children.map { "\($0.label ?? ""): \($0.value)" }
        let erased = APIRequest<Data>(fields: request.fields)

        #expect(fields.count == 15, "14 properties and whether the body is set (`hasBody`)")
        #expect(Mirror(reflecting: request).children.count == 1, "nothing is stored outside the fields")
        #expect(erased.method == .post && erased.path == "/items" && erased.query == request.query)
        #expect(erased.cachePolicy == .reloadIgnoringCache && erased.coalescing == .always)
        #expect(!erased.requiresAuthentication && erased.sendsCredentialsToAnyOrigin)
        #expect(erased.timeout == .seconds(3) && erased.callTimeout == .seconds(9))
        #expect(erased.defaultFreshness == .seconds(300) && !erased.throwsOnUnacceptableStatus)
        #expect(erased.decoder === request.decoder)
        #expect(erased.latestWins == request.latestWins && erased.redirectPolicy == .follow(limit: 3))
    }
}
