import Foundation

@testable import Courier

/// A transport for the pipeline suites: answers buffered and streamed requests from one closure, and records what it
/// was handed and the body bytes it actually read, consuming a ``StreamedBody`` with `makeChunks()` as a real
/// transport does.
final class PipelineTransport: HTTPTransport {
    /// One request as the server saw it.
    struct Received: Sendable {
        let request: TransportRequest
        /// The body bytes read: the buffered body, or every chunk of the streamed one.
        let body: Data
        /// Whether the body came as a ``StreamedBody``.
        let wasStreamed: Bool
    }

    /// Answers request number `index` (from 0, counting every request the transport was handed).
    typealias Responder = @Sendable (_ received: Received, _ index: Int) async throws -> TransportResponse

    private let responder: Responder
    private let handed = Locked<[TransportRequest]>([])
    private let read = Locked<[Received]>([])

    init(_ responder: @escaping Responder) {
        self.responder = responder
    }

    /// Every request the client handed to the transport, in order, whether or not its body could be read.
    var requests: [TransportRequest] { handed.withLock { $0 } }
    /// How many requests the client handed to the transport: the attempts that went on the wire.
    var callCount: Int { handed.withLock { $0.count } }
    /// The requests whose body was read whole, with those bytes.
    var received: [Received] { read.withLock { $0 } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await answer(request)
    }

    func stream(_ request: TransportRequest) async throws -> StreamedTransportResponse {
        StreamedTransportResponse(try await answer(request))
    }

    private func answer(_ request: TransportRequest) async throws -> TransportResponse {
        let index = handed.withLock { handed in
            handed.append(request)
            return handed.count - 1
        }
        let received: Received
        if let streamed = request.streamedBody {
            // What a real transport does: make the body's chunks for this attempt and send every one.
            let body = try await streamed.makeChunks().collect(upTo: .max)
            received = Received(request: request, body: body, wasStreamed: true)
        } else {
            received = Received(request: request, body: request.body ?? Data(), wasStreamed: false)
        }
        read.withLock { $0.append(received) }
        return try await responder(received, index)
    }
}
