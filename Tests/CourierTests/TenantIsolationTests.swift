import Foundation
import Testing

@testable import Courier

typealias TenantKit = CoalescerTestKit

/// Two tenants of one service call the same URL, the tenant named by a header: whoever sets the header (the request,
/// an adapter that declares nothing, an adapter that declares it), no tenant is ever answered with another's body,
/// from a shared flight or from the cache, and tenants that send the same request still share.
@Suite(.timeLimit(.minutes(1))) struct TenantIsolationTests {
    /// The tenant a call is made for, where an adapter reads it (as a service reads its request context).
    @TaskLocal static var currentTenant = ""

    enum Setter: String, CaseIterable, CustomTestStringConvertible {
        case request, undeclaredAdapter, declaredAdapter

        var testDescription: String { rawValue }

        /// Whether calls whose tenant this setter sets may still share a flight with the same tenant's calls.
        var sharesWithinTenant: Bool { self != .undeclaredAdapter }
    }

    static let baseURL = URL(string: "https://api.example.com")!

    /// A transport that holds every request at `gate` and answers with the tenant it was sent for, cacheable for a
    /// minute and without `Vary`: a server that forgot to say its answer depends on the tenant.
    static func echoingTenant(gate: TenantKit.Gate?) -> MockTransport {
        MockTransport { request, _ in
            if let gate { _ = await gate.wait() }
            return TransportResponse(
                statusCode: 200, headers: ["Cache-Control": "max-age=60"],
                body: Data((request.headers["X-Tenant"] ?? "none").utf8))
        }
    }

    static func makeClient(_ setter: Setter, transport: MockTransport, cache: ResponseCache?) -> APIClient {
        var configuration = APIClient.Configuration(
            transport: transport, cache: cache, retryPolicy: .never, clock: TestClock())
        switch setter {
        case .request:
            break
        case .undeclaredAdapter:
            configuration.adapters = [AnyRequestAdapter { $0.headers["X-Tenant"] = Self.currentTenant }]
        case .declaredAdapter:
            configuration.adapters = [
                AnyRequestAdapter(variesOn: ["X-Tenant"]) { $0.headers["X-Tenant"] = Self.currentTenant }
            ]
        }
        return APIClient(baseURL: baseURL, configuration: configuration)
    }

    /// `tenant`'s call to `/report`.
    static func call(_ client: APIClient, _ setter: Setter, tenant: String) async throws -> APIResponse<Data> {
        try await Self.$currentTenant.withValue(tenant) {
            let headers: HeaderFields = setter == .request ? ["X-Tenant": tenant] : [:]
            return try await client.send(APIRequest<Data>.get("/report", headers: headers))
        }
    }

    // MARK: Coalescing

    /// Ten callers of each tenant at once, held in flight until all have arrived: each tenant's callers share one
    /// upstream call (or, when an adapter that declares nothing set the header, send their own), and every caller
    /// gets its own tenant's body.
    @Test(arguments: Setter.allCases)
    func tenantsNeverShareAFlight(setter: Setter) async throws {
        let gate = TenantKit.Gate()
        let transport = Self.echoingTenant(gate: gate)
        let client = Self.makeClient(setter, transport: transport, cache: nil)
        let tenants = Array(repeating: "acme", count: 10) + Array(repeating: "globex", count: 10)
        let calls = tenants.map { tenant in
            Task { (tenant, try await Self.call(client, setter, tenant: tenant)) }
        }
        if setter.sharesWithinTenant {
            try await TenantKit.waitForWaiters(20, on: client.coalescer)
            #expect(await client.coalescer.flightCount == 2)
        } else {
            #expect(await TenantKit.eventually { transport.callCount == 20 })
        }
        await gate.open()
        for call in calls {
            let (tenant, response) = try await call.value
            #expect(String(decoding: response.value, as: UTF8.self) == tenant)
        }
        #expect(transport.callCount == (setter.sharesWithinTenant ? 2 : 20))
        let sentTenants = transport.requests.map { $0.headers["X-Tenant"] ?? "none" }
        #expect(sentTenants.filter { $0 == "acme" }.count == sentTenants.filter { $0 == "globex" }.count)
        ReliabilityKit.record(
            "isolation", "two tenants, X-Tenant set by \(setter.rawValue), 10 callers each at once: in-flight response",
            cases: 20,
            outcome: "not shared: \(transport.callCount) upstream calls, every caller got its own tenant's body")
    }

    // MARK: Cache

    /// `acme` calls, then `globex`, then `acme` again, through a cache, the server sending no `Vary`: `globex` is never
    /// answered with `acme`'s stored body, and `acme`'s second call is a hit unless an adapter that declares nothing
    /// set the header (the call is then not stored).
    @Test(arguments: Setter.allCases)
    func tenantsNeverShareAStoredResponse(setter: Setter) async throws {
        let transport = Self.echoingTenant(gate: nil)
        let client = Self.makeClient(setter, transport: transport, cache: ResponseCache())
        let acme = try await Self.call(client, setter, tenant: "acme")
        let globex = try await Self.call(client, setter, tenant: "globex")
        let acmeAgain = try await Self.call(client, setter, tenant: "acme")
        #expect(String(decoding: acme.value, as: UTF8.self) == "acme")
        #expect(String(decoding: globex.value, as: UTF8.self) == "globex")
        #expect(String(decoding: acmeAgain.value, as: UTF8.self) == "acme")
        #expect(transport.callCount == (setter.sharesWithinTenant ? 2 : 3))
        ReliabilityKit.record(
            "isolation", "two tenants, X-Tenant set by \(setter.rawValue), no Vary from the server: cached response",
            cases: 3, outcome: "not shared: \(transport.callCount) upstream calls for acme, globex, acme")
    }

    // MARK: Other Fields

    /// Two `POST`s of the same bytes with different `Content-Type`s are different requests, even when the caller
    /// asks for them to be coalesced.
    @Test func postsWithDifferentContentTypesNeverShare() async throws {
        let gate = TenantKit.Gate()
        let transport = MockTransport { request, _ in
            _ = await gate.wait()
            return TransportResponse(statusCode: 200, body: Data((request.headers["Content-Type"] ?? "none").utf8))
        }
        let client = Self.makeClient(.request, transport: transport, cache: nil)
        func post(_ contentType: String) -> APIRequest<Data> {
            var request = APIRequest<Data>.post(
                "/import", body: Data("a,b".utf8), headers: ["Content-Type": contentType])
            request.coalescing = .always
            return request
        }
        let types = Array(repeating: "text/csv", count: 5) + Array(repeating: "application/json", count: 5)
        let calls = types.map { type in Task { (type, try await client.send(post(type))) } }
        try await TenantKit.waitForWaiters(10, on: client.coalescer)
        #expect(await client.coalescer.flightCount == 2)
        await gate.open()
        for call in calls {
            let (type, response) = try await call.value
            #expect(String(decoding: response.value, as: UTF8.self) == type)
        }
        #expect(transport.callCount == 2)
        ReliabilityKit.record(
            "isolation", "POSTs of the same bytes with two Content-Types, coalescing forced on", cases: 10,
            outcome: "not shared: 2 flights, 2 upstream calls, each caller got its own type's answer")
    }

    /// A header the server's answer cannot depend on (a request id, by default) does not split a flight: twenty
    /// callers with twenty different ids send one request.
    @Test func anIgnoredHeaderStillShares() async throws {
        let gate = TenantKit.Gate()
        let transport = Self.echoingTenant(gate: gate)
        let client = Self.makeClient(.request, transport: transport, cache: nil)
        let calls = (0..<20).map { index in
            Task {
                try await client.send(
                    APIRequest<Data>.get("/report", headers: ["X-Tenant": "acme", "X-Request-ID": "id-\(index)"]))
            }
        }
        try await TenantKit.waitForWaiters(20, on: client.coalescer)
        #expect(await client.coalescer.flightCount == 1)
        await gate.open()
        var joined = 0
        for call in calls {
            let response = try await call.value
            #expect(String(decoding: response.value, as: UTF8.self) == "acme")
            if response.joined { joined += 1 }
        }
        #expect(transport.callCount == 1)
        #expect(joined == 19)
    }

    /// A joiner whose request differs from the leader's in a field the key ignores is still not served from the
    /// flight when the response says it varies on that field: it sends its own request.
    @Test func aJoinerThatDoesNotMatchTheResponsesVarySendsAlone() async throws {
        let gate = TenantKit.Gate()
        let transport = MockTransport { request, _ in
            _ = await gate.wait()
            return TransportResponse(
                statusCode: 200, headers: ["Vary": "Accept, X-Request-ID"],
                body: Data((request.headers["X-Request-ID"] ?? "none").utf8))
        }
        let client = Self.makeClient(.request, transport: transport, cache: nil)
        let calls = ["first", "second", "third"].map { id in
            Task { (id, try await client.send(APIRequest<Data>.get("/report", headers: ["X-Request-ID": id]))) }
        }
        try await TenantKit.waitForWaiters(3, on: client.coalescer)
        #expect(await client.coalescer.flightCount == 1)
        await gate.open()
        for call in calls {
            let (id, response) = try await call.value
            #expect(String(decoding: response.value, as: UTF8.self) == id)
            #expect(!response.joined)
        }
        #expect(transport.callCount == 3)
        #expect(client.metrics.joined == 0)
        ReliabilityKit.record(
            "isolation", "joiners whose ignored X-Request-ID the response's Vary names", cases: 3,
            outcome: "not served from the flight: each sent alone, 3 upstream calls, 0 joined")
    }
}
