import Foundation

/// A request body produced while it is sent, rather than held in memory: a file, or chunks from an
/// asynchronous sequence.
///
/// A body made by a factory (``init(length:makeChunks:)``) can be produced again for a retry or a resend after
/// a 401; a body over a single sequence (``init(length:chunks:)``) can be sent once, and a call that would
/// need it again fails with a clear error instead of sending a truncated body.
public struct StreamedBody: Sendable, Hashable {
    /// The body's length in bytes when known in advance (sent as `Content-Length`); `nil` sends it chunked.
    public let length: Int?
    private let producer: Producer
    /// Told the size of each chunk the transport reads, and of each part of the body a transport that sends from a
    /// copy of it (``URLSessionTransport``) reports sent: what keeps an upload's deadline moving.
    let sendObserver: (@Sendable (Int) -> Void)?

    /// Creates a body that can be produced again for each attempt.
    ///
    /// - Parameters:
    ///   - length: The length in bytes, when known.
    ///   - makeChunks: Makes a fresh stream of the body's bytes from the start, once per attempt.
    public init(length: Int?, makeChunks: @escaping @Sendable () throws -> ByteStream) {
        self.length = length
        producer = Producer(make: makeChunks, replayable: true)
        sendObserver = nil
    }

    /// Creates a body that can be sent only once.
    ///
    /// - Parameters:
    ///   - length: The length in bytes, when known.
    ///   - chunks: The body's bytes.
    public init(length: Int?, chunks: ByteStream) {
        self.length = length
        producer = Producer(make: { chunks }, replayable: false)
        sendObserver = nil
    }

    /// Whether the body can be produced again, so that a retry or a resend after a 401 can send it.
    public var isReplayable: Bool { producer.replayable }

    /// Makes the stream of the body's bytes for one attempt.
    ///
    /// A body with a ``length`` is held to it here, so that every transport gets the check: the stream fails with
    /// ``InvalidRequestReason/bodyLengthMismatch(declared:produced:)`` as soon as it passes the length, or at its end
    /// when it falls short (a file cut after it was measured), instead of letting the request go out short or long
    /// as if it were whole.
    ///
    /// - Returns: The body's bytes from the start.
    /// - Throws: ``APIError/invalidRequest(_:)`` with ``InvalidRequestReason/bodyNotReplayable`` when a
    ///   one-shot body was already handed out; the factory's own error otherwise.
    public func makeChunks() throws -> ByteStream {
        let chunks = try producer.makeChunks()
        guard let length else { return chunks }
        return chunks.holding(toLength: length)
    }

    /// Reads the whole body into memory, for a transport that only sends buffered bodies.
    ///
    /// - Parameter limit: The most bytes to accept.
    /// - Returns: The body's bytes.
    public func collect(upTo limit: Int = .max) async throws -> Data {
        try await makeChunks().collect(upTo: limit)
    }

    /// Two bodies are equal when they are the same body (the same producer), not when their bytes are.
    public static func == (lhs: StreamedBody, rhs: StreamedBody) -> Bool { lhs.producer === rhs.producer }

    /// Hashes the body's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(producer)) }

    private init(length: Int?, producer: Producer, sendObserver: @escaping @Sendable (Int) -> Void) {
        self.length = length
        self.producer = producer
        self.sendObserver = sendObserver
    }

    /// The same body, `observe` told the size of each chunk as the transport reads it (and of what it reports
    /// sent, see ``sendObserver``); replayable when this one is, and a one-shot body stays usable once, whichever of
    /// the two is asked first.
    func observingSends(_ observe: @escaping @Sendable (Int) -> Void) -> StreamedBody {
        StreamedBody(
            length: length,
            producer: Producer(
                make: { [producer] in try producer.makeChunks().counting(observe) }, replayable: producer.replayable),
            sendObserver: observe)
    }
}

extension StreamedBody {
    /// Makes the chunks; remembers whether a one-shot body was already used.
    private final class Producer: Sendable {
        let make: @Sendable () throws -> ByteStream
        let replayable: Bool
        private let used = Locked(false)

        init(make: @escaping @Sendable () throws -> ByteStream, replayable: Bool) {
            self.make = make
            self.replayable = replayable
        }

        func makeChunks() throws -> ByteStream {
            if !replayable {
                let alreadyUsed = used.withLock { used in
                    defer { used = true }; return used
                }
                if alreadyUsed { throw APIError.invalidRequest(.bodyNotReplayable) }
            }
            return try make()
        }
    }
}
