import Courier
import Foundation

/// Courier's `APIClient`, asked for raw bytes so that it does the same work as the baselines (no decoding).
public struct CourierStrategy: FetchStrategy {
    /// The client under test.
    public let client: APIClient

    /// Wraps a client.
    public init(client: APIClient) {
        self.client = client
    }

    /// `"Courier APIClient"`.
    public var name: String { "Courier APIClient" }

    /// Sends `GET key` through the client.
    public func fetch(_ key: String) async throws -> Data {
        try await client.send(Request<Data>.get(key)).value
    }
}
