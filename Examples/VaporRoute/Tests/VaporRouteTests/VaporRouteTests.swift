// A file that imports Vapor 4 beside Courier compiles with every Courier name unqualified, and with Vapor's own
// (`Request`, `Response`, `HTTPMethod`, `HTTPHeaders`, `HTTPStatus`) too: an ambiguous name fails this build.
import Courier
import CourierTesting
import Foundation
import Testing
import VaporRoute
import VaporTesting

@Suite struct VaporRouteTests {
    @Test func aVaporRouteSendsThroughCourier() async throws {
        let transport = StubTransport { (request: TransportRequest) async throws -> TransportResponse in
            #expect(request.url.path == "/users/7")
            return .json(#"{"id": 7, "name": "Ada"}"#)
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: transport, cache: nil))
        try await withApp(configure: { app in registerProfileRoutes(on: app, client: client) }) { app in
            try await app.testing().test(.GET, "profiles/7") { (response: TestingHTTPResponse) async throws in
                #expect(response.status == .ok)
                #expect(try response.content.decode(Profile.self) == Profile(id: 7, name: "Ada"))
            }
        }
        #expect(transport.callCount == 1)
    }

    /// Courier's names and Vapor's, side by side, none of them qualified.
    @Test func namesNeedNoQualificationBesideVapor() throws {
        let method: RequestMethod = .get
        let headers: HeaderFields = ["Accept": "application/json"]
        let request = APIRequest<Profile>(method: method, path: "/users/7")
        let transportRequest = TransportRequest(
            method: .get, url: URL(string: "https://api.example.com/users/7")!, headers: headers, body: Data())
        let transportResponse = TransportResponse(statusCode: 200, headers: [:], body: Data())
        let failure: APIError = .timedOut(.seconds(1))
        let vaporMethod: HTTPMethod = .GET
        let vaporHeaders: HTTPHeaders = ["Accept": "application/json"]
        let status: HTTPStatus = .ok
        #expect(request.method == .get && transportRequest.method == .get && transportResponse.statusCode == 200)
        #expect(vaporMethod == .GET && vaporHeaders.first(name: "Accept") == "application/json" && status.code == 200)
        #expect(failure.description.contains("timed out"))
        let types: [Any.Type] = [Request.self, Response.self, APIResponse<Profile>.self, APIClient.self]
        #expect(types.count == 4)
    }
}
