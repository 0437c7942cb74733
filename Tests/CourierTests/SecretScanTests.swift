import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Secrets placed everywhere a caller or a server can put one, then every path of a call run, and everything
/// observable printed every way Swift prints a value: no secret shows anywhere.
@Suite(.timeLimit(.minutes(1))) struct SecretScanTests {
    /// Every secret of the scan; each is unique, so a hit names where it came from.
    static let secrets = [
        "S-token-1", "S-token-2", "S-cookie", "S-apikey", "S-custom", "S-query", "S-tenantq", "S-password",
        "S-setcookie", "S-body",
    ]

    struct Wrong: Decodable { let expected: Int }

    /// Answers by path: every branch of the client's path, each carrying secrets back where a server can.
    static func transport() -> MockTransport {
        MockTransport { request, index in
            let path = request.url.path
            let token = request.headers["X-Vendor-Token"]
            if token == "S-token-1", path == "/expired" { return .text(401, "S-body rejected") }
            switch path {
            case "/fail":
                throw URLError(
                    .cannotConnectToHost,
                    userInfo: [
                        NSURLErrorFailingURLErrorKey: request.url,
                        "NSErrorFailingURLStringKey": request.url.absoluteString,
                        NSLocalizedDescriptionKey: "could not connect to \(request.url.absoluteString)",
                    ])
            case "/broken":
                return .text(500, "S-body: the token S-token-1 is invalid")
            case "/flaky" where index == 0 || request.headers["X-Flaky-Seen"] == nil:
                return .text(503, "S-body")
            case "/stale" where request.headers["If-None-Match"] != nil:
                return .text(304, headers: ["ETag": "\"v1\"", "Set-Cookie": "again=S-setcookie"])
            case "/stale":
                return .text(200, "fine", headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=0"])
            case "/decode":
                return .text(200, #"{"wrong":"S-body"}"#)
            default:
                return .text(
                    200, "fine",
                    headers: [
                        "Set-Cookie": "session=S-setcookie", "Cache-Control": "max-age=60",
                        "Vary": "Authorization, X-Vendor-Token", "ETag": "\"v1\"",
                    ])
            }
        }
    }

    static func makeClient(_ transport: MockTransport, cache: ResponseCache, clock: TestClock) -> APIClient {
        let refresher = TokenRefresher(credential: Credential(accessToken: "S-token-1", identity: "alice")) { _ in
            Credential(accessToken: "S-token-2", identity: "alice")
        }
        var configuration = APIClient.Configuration(
            transport: transport, cache: cache, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .zero),
            authenticator: refresher, clock: clock)
        // A scheme the standard list does not know: found by calling `authorize` once.
        configuration.authorize = { request, credential in request.headers["X-Vendor-Token"] = credential.accessToken }
        configuration.credentials.headerNames.insert("X-Custom-Secret")
        configuration.credentials.queryParameters.insert("tenant_secret")
        configuration.headers = ["Cookie": "id=S-cookie"]
        configuration.adapters = [
            AnyRequestAdapter(variesOn: []) { request in request.headers["X-Flaky-Seen"] = "yes" }
        ]
        return APIClient(baseURL: EventTestKit.baseURL, configuration: configuration)
    }

    static func request(_ path: String, policy: CachePolicy = .useProtocolPolicy) -> APIRequest<Data> {
        var request = APIRequest<Data>.get(
            path,
            query: [
                URLQueryItem(name: "api_key", value: "S-query"),
                URLQueryItem(name: "tenant_secret", value: "S-tenantq"),
            ],
            headers: ["X-API-Key": "S-apikey", "X-Custom-Secret": "S-custom"])
        request.cachePolicy = policy
        return request
    }

    @Test func noSecretShowsInAnythingObservable() async throws {
        let transport = Self.transport()
        let cache = ResponseCache()
        let clock = TestClock()
        let client = Self.makeClient(transport, cache: cache, clock: clock)
        let events = client.events
        let lines = Locked<[String]>([])
        let printer = client.printEvents { line in lines.withLock { $0.append(line) } }
        var observed: [Any] = []

        let calls: [APIRequest<Data>] = [
            Self.request("/ok"), Self.request("/ok"), Self.request("/stale"), Self.request("/stale"),
            Self.request("/expired"), Self.request("/flaky"), Self.request("/broken"), Self.request("/fail"),
            Self.request("/missing", policy: .onlyIfCached), Self.request("/bad\u{1}path?api_key=S-query"),
            Self.request("https://user:S-password@api.example.com/ok"),
        ]
        for call in calls {
            do {
                observed.append(try await client.send(call))
            } catch {
                observed += [error, (error as? APIError)?.underlyingError as Any, error.localizedDescription]
            }
        }
        do {
            _ = try await client.send(APIRequest<Wrong>.get("/decode", headers: ["X-API-Key": "S-apikey"]))
        } catch {
            observed += [error, error.localizedDescription]
        }
        async let first = client.send(Self.request("/joined"))
        async let second = client.send(Self.request("/joined"))
        observed += [try await first, try await second]

        for sent in transport.requests {
            observed += [sent, RequestKey(sent, partition: "alice")]
            if let entry = await cache.cachedResponse(for: sent, partition: "alice") { observed.append(entry) }
        }
        let collected = await EventTestKit.collect(events, from: client.eventLog)
        observed += collected.map { $0 as Any }
        printer.cancel()
        await printer.value

        #expect(transport.requests.contains { $0.headers["X-Vendor-Token"] == "S-token-2" }, "the refresh ran")
        #expect(collected.count > 50, "every path emitted its events")
        let shown = observed.map(AuthTestKit.printed) + lines.withLock { $0 }
        for text in shown {
            for secret in Self.secrets {
                #expect(!text.contains(secret), "\(secret) in: \(text.prefix(400))")
            }
        }
        ReliabilityKit.record(
            "isolation", "10 secrets (headers, authorize, query, user info, Set-Cookie, body) on 13 paths",
            cases: shown.count,
            outcome: "none in events, event lines, description, debugDescription, dump or any APIError text")
    }

    @Test func aCachedResponseNeverReplaysSetCookie() async throws {
        let transport = MockTransport { _, _ in
            .text(200, "fine", headers: ["Set-Cookie": "session=S-setcookie", "Cache-Control": "max-age=60"])
        }
        let client = EventTestKit.makeClient(transport, cache: ResponseCache())

        let first = try await client.send(APIRequest<Data>.get("/me"))
        let second = try await client.send(APIRequest<Data>.get("/me"))

        #expect(first.headers["Set-Cookie"] == "session=S-setcookie", "the caller who received it keeps it")
        #expect(second.source == .cache)
        #expect(second.headers["Set-Cookie"] == nil)
        #expect(transport.callCount == 1)
    }
}
