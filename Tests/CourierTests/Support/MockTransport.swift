import Foundation

@testable import Courier

/// A transport whose answers come from a closure, recording every request it is sent.
///
/// Each test makes its own instance, so tests running in parallel share nothing.
final class MockTransport: HTTPTransport {
    typealias Handler = @Sendable (TransportRequest, Int) async throws -> TransportResponse

    private let handler: Handler
    private let recorded = Locked<[TransportRequest]>([])

    /// A transport that answers with `handler(request, callIndex)`, `callIndex` counting from 0.
    init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    /// A transport that always answers with the same response.
    static func responding(
        status: Int = 200, headers: HeaderFields = [:], body: String = ""
    ) -> MockTransport {
        MockTransport { _, _ in TransportResponse(statusCode: status, headers: headers, body: Data(body.utf8)) }
    }

    /// A transport that answers JSON with status 200.
    static func json(_ body: String) -> MockTransport {
        responding(headers: ["Content-Type": "application/json"], body: body)
    }

    /// A transport that answers the given results in turn, repeating the last one.
    static func sequence(_ results: [Result<TransportResponse, APIError>]) -> MockTransport {
        MockTransport { _, index in try results[min(index, results.count - 1)].get() }
    }

    /// Every request received, in order.
    var requests: [TransportRequest] { recorded.withLock { $0 } }

    /// How many requests were received.
    var callCount: Int { recorded.withLock { $0.count } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let index = recorded.withLock { requests in
            requests.append(request)
            return requests.count - 1
        }
        return try await handler(request, index)
    }
}

extension TransportResponse {
    /// A response with a text body, for tests.
    static func text(_ status: Int, _ body: String = "", headers: HeaderFields = [:]) -> TransportResponse {
        TransportResponse(statusCode: status, headers: headers, body: Data(body.utf8))
    }
}
