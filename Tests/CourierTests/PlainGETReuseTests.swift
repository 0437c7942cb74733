import CourierTesting
import Foundation
import Testing

@testable import Courier

/// A plain `GET` (no headers, body or options of its own) reuses the request and coalescing key built the first time
/// its URL was called (``RecentURLs/PlainGET``). What a call sends must never depend on whether that happened: each
/// test calls a URL once to build the reused request, then a request that must not be given it.
@Suite(.timeLimit(.minutes(1))) struct PlainGETReuseTests {
    private static let base = URL(string: "https://api.example.com/v1")!

    private static func makeClient(_ transport: StubTransport) -> APIClient {
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never)
        configuration.headers["Authorization"] = "Bearer client-token"
        configuration.headers["User-Agent"] = "courier-tests"
        return APIClient(baseURL: base, configuration: configuration)
    }

    @Test func aPlainGETCalledAgainSendsTheRequestBuiltTheFirstTime() async throws {
        let transport = StubTransport.responding(body: "ok")
        let client = Self.makeClient(transport)

        for _ in 0..<4 { _ = try await client.send(APIRequest<Data>.get("/items/1")) }

        let sent = transport.requests
        #expect(sent.count == 4)
        #expect(sent.allSatisfy { $0.url.absoluteString == "https://api.example.com/v1/items/1" })
        #expect(sent.allSatisfy { $0.headers["Authorization"] == "Bearer client-token" })
        // Kept from the URL's second call (a URL called once is not worth keeping), then reused, not rebuilt.
        #expect(!sent[1].sharesStorage(with: sent[0]))
        #expect(sent[2].sharesStorage(with: sent[1]) && sent[3].sharesStorage(with: sent[1]))
    }

    @Test func aGETWithHeadersOfItsOwnIsBuiltForItself() async throws {
        let transport = StubTransport.responding(body: "ok")
        let client = Self.makeClient(transport)

        _ = try await client.send(APIRequest<Data>.get("/items/1"))
        var withHeader = APIRequest<Data>.get("/items/1")
        withHeader.headers["Accept-Language"] = "fr"
        _ = try await client.send(withHeader)
        _ = try await client.send(APIRequest<Data>.get("/items/1"))

        let sent = transport.requests
        #expect(sent[1].headers["Accept-Language"] == "fr")
        #expect(sent[2].headers["Accept-Language"] == nil, "the header of one call never sticks to the URL")
    }

    @Test func anOptInToSendCredentialsAnywhereIsNeverReusedForAPlainGET() async throws {
        let transport = StubTransport.responding(body: "ok")
        let client = Self.makeClient(transport)
        let elsewhere = "https://partner.example.org/feed"

        var optedIn = APIRequest<Data>.get(elsewhere)
        optedIn.sendsCredentialsToAnyOrigin = true
        _ = try await client.send(APIRequest<Data>.get(elsewhere))
        _ = try await client.send(optedIn)
        _ = try await client.send(APIRequest<Data>.get(elsewhere))

        let sent = transport.requests
        #expect(sent[0].headers["Authorization"] == nil, "another origin gets no credential")
        #expect(sent[1].headers["Authorization"] == "Bearer client-token", "unless the call opts in")
        #expect(sent[2].headers["Authorization"] == nil, "and the opt-in is not remembered for the URL")
        #expect(sent.allSatisfy { $0.headers["User-Agent"] == "courier-tests" })
    }

    @Test func aPOSTToTheSameURLIsBuiltForItself() async throws {
        let transport = StubTransport.responding(body: "ok")
        let client = Self.makeClient(transport)

        _ = try await client.send(APIRequest<Data>.get("/items"))
        _ = try await client.send(APIRequest<Data>.post("/items", body: Data("new".utf8)))

        let sent = transport.requests
        #expect(sent[1].method == .post && sent[1].body == Data("new".utf8))
        #expect(!sent[1].sharesStorage(with: sent[0]))
    }

    @Test func joinersOfOneFlightShareTheKeyBuiltWithTheRequest() async throws {
        let gate = AsyncGate()
        let transport = StubTransport { request in
            if request.url.path != "/v1/warm" { await gate.wait() }
            return TransportResponse(statusCode: 200, body: Data("shared".utf8))
        }
        let client = Self.makeClient(transport)
        _ = try await client.send(APIRequest<Data>.get("/warm"))  // another URL: the memo of "/shared" starts empty

        let callers = 20
        try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<callers { group.addTask { try await client.send(APIRequest<Data>.get("/shared")).value } }
            while await client.coalescer.waiterCount < callers { await Task.yield() }
            await gate.open()
            for try await body in group { #expect(body == Data("shared".utf8)) }
        }
        #expect(transport.callCount == 2, "one call to warm up, one flight for every caller of /shared")
    }
}

/// Holds callers until opened.
private actor AsyncGate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting = []
    }
}
