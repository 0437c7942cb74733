#if AsyncHTTPClient
    import Courier
    import CourierAsyncHTTPClient
    import Foundation
    import Testing

    /// The README's one-line switch, compiled and run.
    @Suite("AsyncHTTPClientTransport: switching a service")
    struct SwitchingTests {
        struct Item: Decodable, Sendable, Equatable {
            let id: Int
            let name: String
        }

        @Test func oneLineOfConfiguration() async throws {
            try await withTestServer { server in
                // README: "Switching a service to it"
                let configuration = APIClient.Configuration(transport: AsyncHTTPClientTransport())
                let client = APIClient(baseURL: server.baseURL, configuration: configuration)
                #expect(try await client.send(APIRequest<Item>.get("/json")).value == Item(id: 7, name: "courier"))
                let transport = try #require(configuration.transport as? AsyncHTTPClientTransport)
                try await transport.shutdown()
            }
        }
    }
#endif
