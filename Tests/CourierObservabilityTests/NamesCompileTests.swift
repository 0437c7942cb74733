#if Observability && ServiceTests
    // Issue 15, item 1: a file that imports Hummingbird 2 and HTTPTypes beside Courier compiles with every Courier name
    // unqualified, and with theirs (`Request`, `Response`, `HTTPRequest`, `HTTPResponse`, `HTTPFields`) too. Nothing here
    // is qualified by a module name: an ambiguous name fails this build.
    import Courier
    import Foundation
    import HTTPTypes
    import Hummingbird
    import Testing

    @Suite struct NamesCompileTests {
        struct Item: Codable, Sendable, Equatable, ResponseCodable {
            let id: Int
        }

        /// Every public Courier type by its plain name, in a file where Hummingbird's and HTTPTypes' names are in scope.
        @Test func courierNamesNeedNoQualificationBesideHummingbirdAndHTTPTypes() async throws {
            let method: RequestMethod = .get
            let headers: HeaderFields = ["Accept": "application/json"]
            let payload: RequestPayload = .data(Data("{}".utf8), contentType: "application/json")
            let transportRequest = TransportRequest(
                method: .post, url: URL(string: "https://api.example.com/items")!, headers: headers, body: Data())
            let transportResponse = TransportResponse(statusCode: 200, headers: [:], body: Data(#"{"id":7}"#.utf8))
            let transport: any HTTPTransport = EchoTransport(response: transportResponse)
            let credential = Credential(accessToken: "t", identity: "service")
            let refresher = TokenRefresher(credential: credential) { _ in credential }
            let policy: CachePolicy = .useProtocolPolicy
            let retry: RetryPolicy = .never
            let cache = ResponseCache()
            let log = EventLog()
            let id = CallID(rawValue: 1)
            let event = ClientEvent(callID: id, at: .zero, kind: .cacheMiss)
            let credentials: CredentialPolicy = .standard
            let coalescer = RequestCoalescer<RequestKey, Int>()
            let adapter = AnyRequestAdapter { _ in }
            let source: ResponseSource = .network
            let coalescing: CoalescingPolicy = .automatic
            let observer: [any CallObserver] = []

            var configuration = APIClient.Configuration(
                transport: transport, cache: cache, retryPolicy: retry, adapters: [adapter], authenticator: refresher)
            configuration.credentials = credentials
            configuration.observers = observer
            let client = APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration)
            let request = APIRequest<Item>(
                method: method, path: "/items/7", body: payload, cachePolicy: policy, coalescing: coalescing)
            let response: APIResponse<Item> = try await client.send(request)
            #expect(response.value == Item(id: 7) && response.source == source)
            let failure: APIError = .timedOut(.seconds(1))
            #expect(failure.description.contains("timed out"))
            #expect(event.callID == id && log.subscriberCount == 0)
            #expect(await coalescer.flightCount == 0 && transportRequest.method == .post)

            // The rest of the public surface, by name.
            let others: [Any.Type] = [
                CachedResponse.self, CacheLookup.self, RetryDecision.self, RetryContext.self, TransportFailure.self,
                InvalidRequestReason.self, AuthenticationFailure.self, Coalesced<Int>.self, AbandonmentPolicy.self,
                URLSessionTransport.self, (any RequestAdapter).self, (any CallObserver).self, APIClient.Metrics.self,
            ]
            #expect(others.count == 13)

            // Hummingbird's and HTTPTypes' own names, in the same scope.
            let router = Router()
            router.get("items/:id") { (_: Request, _: BasicRequestContext) -> Response in Response(status: .ok) }
            let head = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/items/7")
            let answer = HTTPResponse(status: .ok)
            let fields: HTTPFields = [.accept: "application/json"]
            #expect(head.method == .get && answer.status == .ok && fields[.accept] == "application/json")
        }
    }

    /// Answers every request with the same response.
    private struct EchoTransport: HTTPTransport {
        let response: TransportResponse

        func send(_ request: TransportRequest) async throws -> TransportResponse { response }
    }
#endif
