import CourierTesting
import Foundation
import Testing

@testable import Courier

@Suite struct ErrorMappingTests {
    struct ShopError: Error, Decodable, Equatable {
        let code: String
        let message: String
    }

    struct Other: Error, Equatable {
        let status: Int
    }

    private static let outOfStock = #"{"code": "out_of_stock", "message": "Sold out"}"#

    private static func client(
        _ transport: StubTransport, configure: (inout APIClient.Configuration) -> Void = { _ in }
    ) -> APIClient {
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never)
        configure(&configuration)
        return APIClient(baseURL: URL(string: "https://shop.example.com")!, configuration: configuration)
    }

    @Test func theClientsMappingTurnsAnErrorBodyIntoTheCallersType() async {
        let client = Self.client(.always(.json(Self.outOfStock, status: 409))) {
            $0.errorMapping = .decoding(ShopError.self)
        }

        await #expect(throws: ShopError(code: "out_of_stock", message: "Sold out")) {
            try await client.send(APIRequest<Data>.post("/orders", body: ["sku": "a"]))
        }
    }

    @Test func aRequestsMappingWinsOverTheClients() async {
        let client = Self.client(.always(.json(Self.outOfStock, status: 409))) {
            $0.errorMapping = .decoding(ShopError.self)
        }
        var request = APIRequest<Data>.get("/orders/7")
        request.errorMapping = ResponseErrorMapping { Other(status: $0.statusCode) }

        await #expect(throws: Other(status: 409)) { try await client.send(request) }
    }

    @Test func aBodyTheMappingCannotReadStillFailsWithTheStatus() async {
        let client = Self.client(.always(.text(502, "<html>Bad Gateway</html>"))) {
            $0.errorMapping = .decoding(ShopError.self)
        }

        await #expect {
            try await client.send(APIRequest<Data>.get("/orders"))
        } throws: { error in
            guard case .unacceptableStatus(let response) = error as? APIError else { return false }
            return response.statusCode == 502
        }
    }

    @Test func anAcceptedResponseNeverReachesTheMapping() async throws {
        let mapped = Locked(0)
        let client = Self.client(.always(.json("{}"))) { configuration in
            configuration.errorMapping = ResponseErrorMapping { _ in
                mapped.withLock { $0 += 1 }
                return Other(status: 0)
            }
        }

        _ = try await client.send(APIRequest<Data>.get("/fine"))
        #expect(mapped.withLock { $0 } == 0)
    }

    @Test func aRequestDecodesWithItsOwnDecoder() async throws {
        struct Item: Decodable, Sendable, Equatable {
            let itemName: String
            let addedAt: Date
        }
        let client = Self.client(.always(.json(#"{"item_name": "book", "added_at": "2024-01-01T00:00:00Z"}"#)))
        let snakeCase = JSONDecoder()
        snakeCase.keyDecodingStrategy = .convertFromSnakeCase
        snakeCase.dateDecodingStrategy = .iso8601

        var request = APIRequest<Item>.get("/items/1")
        request.decoder = snakeCase

        #expect(
            try await client.send(request).value
                == Item(itemName: "book", addedAt: Date(timeIntervalSince1970: 1_704_067_200)))
        await #expect(throws: APIError.self) { try await client.send(APIRequest<Item>.get("/items/1")) }
    }

    @Test func joinersWithDifferentDecodersEachGetTheirOwnValue() async throws {
        struct Item: Decodable, Sendable { let itemName: String? }
        let (gate, open) = AsyncStream<Void>.makeStream()
        let transport = StubTransport { _ in
            for await _ in gate {}
            return .json(#"{"item_name": "book"}"#)
        }
        let client = Self.client(transport)
        let snakeCase = JSONDecoder()
        snakeCase.keyDecodingStrategy = .convertFromSnakeCase
        var converted = APIRequest<Item>.get("/items/1")
        converted.decoder = snakeCase

        async let plain = client.send(APIRequest<Item>.get("/items/1"))
        async let snake = client.send(converted)
        while await client.coalescer.waiterCount < 2 { await Task.yield() }
        open.finish()

        #expect(try await plain.value.itemName == nil)
        #expect(try await snake.value.itemName == "book")
        #expect(transport.callCount == 1)
    }

    @Test func aPredicateMakesA403WithAnErrorCodeRefreshTheCredential() async throws {
        let refresher = TokenRefresher(credential: Credential(accessToken: "old", identity: "user-1")) { _ in
            Credential(accessToken: "new", identity: "user-1")
        }
        let transport = StubTransport { request in
            request.headers["Authorization"] == "Bearer new"
                ? .json("{}") : .json(#"{"error": "token_expired"}"#, status: 403)
        }
        let client = Self.client(transport) { configuration in
            configuration.authenticator = refresher
            configuration.isCredentialRejected = { response in
                response.statusCode == 401
                    || (response.statusCode == 403 && response.body.range(of: Data("token_expired".utf8)) != nil)
            }
        }

        let response = try await client.send(APIRequest<Data>.get("/me"))

        #expect(response.statusCode == 200 && response.attempts == 2)
        #expect(await refresher.refreshCount == 1)
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer old", "Bearer new"])
    }

    @Test func withoutThePredicateA403IsNotARejectedCredential() async {
        let refresher = TokenRefresher(credential: Credential(accessToken: "old", identity: "user-1")) { _ in
            Credential(accessToken: "new", identity: "user-1")
        }
        let transport = StubTransport.always(.json(#"{"error": "forbidden"}"#, status: 403))
        let client = Self.client(transport) { $0.authenticator = refresher }

        await #expect(throws: APIError.self) { try await client.send(APIRequest<Data>.get("/admin")) }
        #expect(await refresher.refreshCount == 0)
        #expect(transport.callCount == 1)
    }
}
