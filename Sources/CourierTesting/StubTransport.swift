import Courier
import Foundation

/// A transport that answers from a closure and remembers every request it was sent.
///
/// Give it to ``Courier/APIClient/Configuration/transport`` and everything above the transport (building
/// requests, credentials, coalescing, caching, retries, decoding) runs for real, with no server and no global
/// state: each test makes its own transport, so tests can run in parallel.
///
/// ```swift
/// let transport = StubTransport { request in
///     .json(#"{"id": 42, "name": "Ada"}"#)
/// }
/// let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: .init(transport: transport))
/// ```
///
/// The closure sees each ``Courier/TransportRequest`` as it would go on the wire: the full URL, the headers after
/// adapters ran and the credential was applied, and the encoded body. Throw
/// ``Courier/APIError/transport(_:underlying:)`` from it to simulate a network failure.
public final class StubTransport: HTTPTransport {
    /// Answers one request; `index` counts the requests this transport was sent, from 0.
    public typealias Responder = @Sendable (_ request: TransportRequest, _ index: Int) async throws -> TransportResponse

    private let responder: Responder
    private let recorded = LockedState<[TransportRequest]>([])

    /// A transport that answers each request with what `respond` returns.
    ///
    /// - Parameter respond: Called once per request the client sends, concurrently when requests overlap.
    public init(_ respond: @escaping @Sendable (_ request: TransportRequest) async throws -> TransportResponse) {
        responder = { request, _ in try await respond(request) }
    }

    /// A transport that answers each request with what `respond` returns for it and its index (0 for the first
    /// request this transport was sent), for tests that script a sequence of answers.
    ///
    /// - Parameter respond: Called once per request, with the request and its index.
    public init(_ respond: @escaping Responder) {
        responder = respond
    }

    /// A transport that always answers with `response`.
    ///
    /// - Parameter response: The response every request gets.
    public static func always(_ response: TransportResponse) -> StubTransport {
        StubTransport { _ in response }
    }

    /// A transport that always answers with the same status, headers and text body.
    ///
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: The header fields.
    ///   - body: The body, as UTF-8 text.
    public static func responding(status: Int = 200, headers: HeaderFields = [:], body: String = "") -> StubTransport {
        always(.text(status, body, headers: headers))
    }

    /// A transport that always answers `200` with a JSON body.
    ///
    /// - Parameter body: The JSON text.
    public static func json(_ body: String) -> StubTransport {
        always(.json(body))
    }

    /// A transport that answers the requests with `results` in turn and repeats the last one: a response, or an
    /// error to throw.
    ///
    /// - Parameter results: At least one result.
    public static func sequence(_ results: [Result<TransportResponse, APIError>]) -> StubTransport {
        precondition(!results.isEmpty, "StubTransport.sequence needs at least one result")
        return StubTransport { _, index in try results[min(index, results.count - 1)].get() }
    }

    /// Every request this transport was sent, in the order they arrived.
    public var requests: [TransportRequest] { recorded.withLock { $0 } }

    /// How many requests this transport was sent.
    public var callCount: Int { recorded.withLock { $0.count } }

    /// Records the request and answers it with the closure's response.
    ///
    /// - Parameter request: The request, as the client would put it on the wire.
    /// - Returns: What the closure returned.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let index = recorded.withLock { requests in
            requests.append(request)
            return requests.count - 1
        }
        return try await responder(request, index)
    }
}
