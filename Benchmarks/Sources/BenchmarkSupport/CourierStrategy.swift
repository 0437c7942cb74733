import Courier
import Foundation

/// Courier's `APIClient`, asked for `Value`: `Data` does the same work as the baselines' byte variant (no decoding),
/// a `Decodable` model the work of their decoded variant.
public struct CourierStrategy<Value: Decodable & Sendable>: FetchStrategy {
    /// The client under test.
    public let client: APIClient

    /// Wraps a client.
    ///
    /// - Parameters:
    ///   - client: The client under test.
    ///   - value: What the client is asked for: `Data.self` or a `Decodable` model.
    public init(client: APIClient, value: Value.Type = Value.self) {
        self.client = client
    }

    /// `"Courier APIClient"`.
    public var name: String { "Courier APIClient" }

    /// Sends `GET key` through the client as a `APIRequest<Value>`.
    @inlinable
    public func fetch(_ key: String) async throws -> Value {
        try await client.send(APIRequest<Value>.get(key)).value
    }
}
