import Foundation

@testable import Courier

/// A transport whose answers come from a closure, recording every request it is sent.
///
/// Each test makes its own instance, so tests running in parallel share nothing.
final class MockTransport: HTTPTransport {
    typealias Handler = @Sendable (HTTPRequest, Int) async throws -> HTTPResponse

    private let handler: Handler
    private let recorded = Locked<[HTTPRequest]>([])

    /// A transport that answers with `handler(request, callIndex)`, `callIndex` counting from 0.
    init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    /// A transport that always answers with the same response.
    static func responding(
        status: Int = 200, headers: HTTPHeaders = [:], body: String = ""
    ) -> MockTransport {
        MockTransport { _, _ in HTTPResponse(statusCode: status, headers: headers, body: Data(body.utf8)) }
    }

    /// A transport that answers JSON with status 200.
    static func json(_ body: String) -> MockTransport {
        responding(headers: ["Content-Type": "application/json"], body: body)
    }

    /// A transport that answers the given results in turn, repeating the last one.
    static func sequence(_ results: [Result<HTTPResponse, APIError>]) -> MockTransport {
        MockTransport { _, index in try results[min(index, results.count - 1)].get() }
    }

    /// Every request received, in order.
    var requests: [HTTPRequest] { recorded.withLock { $0 } }

    /// How many requests were received.
    var callCount: Int { recorded.withLock { $0.count } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let index = recorded.withLock { requests in
            requests.append(request)
            return requests.count - 1
        }
        return try await handler(request, index)
    }
}

extension HTTPResponse {
    /// A response with a text body, for tests.
    static func text(_ status: Int, _ body: String = "", headers: HTTPHeaders = [:]) -> HTTPResponse {
        HTTPResponse(statusCode: status, headers: headers, body: Data(body.utf8))
    }
}
