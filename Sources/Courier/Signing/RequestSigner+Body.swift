import Foundation

/// A digest fed a body piece by piece, so that a body read as it is sent (an uploaded file, a stream) is signed
/// without being held whole in memory: a wrapper around swift-crypto's `SHA256`, say.
///
/// ```swift
/// struct StreamingSHA256: IncrementalBodyDigest {
///     var hash = SHA256()
///     mutating func update(_ bytes: Data) { hash.update(data: bytes) }
///     mutating func finalize() -> Data { Data(hash.finalize()) }
/// }
/// ```
public protocol IncrementalBodyDigest {
    /// Adds the next bytes of the body.
    ///
    /// - Parameter bytes: The bytes that follow those already added.
    mutating func update(_ bytes: Data)
    /// The digest of every byte added, in order.
    ///
    /// - Returns: The digest.
    mutating func finalize() -> Data
}

extension RequestSigner {
    /// The most bytes of a body read as it is sent that the signer holds in memory: the whole body for a `bodyDigest`
    /// function that takes `Data`, and a one-shot body (which can be read only once, so the signer sends what it
    /// read). 64 MiB; a larger one fails the call with a ``RequestSigningError`` before anything is sent.
    public static let maximumHeldBodyBytes = 64 << 20

    /// Creates a signer whose body digest is computed piece by piece: an uploaded file of any size is read once for
    /// the digest, then again as it is sent, and never held whole.
    ///
    /// - Parameters:
    ///   - keyID: The identifier of the key, sent in ``HeaderNames/keyID``; `nil` sends none.
    ///   - headerNames: Where each part of the signature goes.
    ///   - incrementalDigest: Makes a fresh digest for each attempt; fed nothing when there is no body.
    ///   - mac: The MAC of a canonical string's UTF-8 bytes (HMAC-SHA256 with your key, say).
    ///   - now: The current date, for the timestamp; inject one in tests.
    ///   - nonce: A value never used before, for each attempt; a random UUID by default.
    public init(
        keyID: String? = nil, headerNames: HeaderNames = .standard,
        incrementalDigest: @escaping @Sendable () -> any IncrementalBodyDigest,
        mac: @escaping @Sendable (_ message: Data) throws -> Data,
        now: @escaping @Sendable () -> Date = { Date() },
        nonce: @escaping @Sendable () -> String = { UUID().uuidString }
    ) {
        self.init(keyID: keyID, headerNames: headerNames, bodyDigest: { _ in Data() }, mac: mac, now: now, nonce: nonce)
        digest = .incremental(incrementalDigest)
    }

    /// How the signer digests a body.
    enum BodyDigest: Sendable {
        /// All of it at once.
        case whole(@Sendable (Data) throws -> Data)
        /// Piece by piece.
        case incremental(@Sendable () -> any IncrementalBodyDigest)
    }

    /// The digest of the bytes `request` will send, its body in memory or read as it is sent. A one-shot body is
    /// read here, and `request` then sends the bytes that were read: a digest is worth something only over the bytes
    /// that go out.
    func bodyDigest(of request: inout TransportRequest) async throws -> Data {
        do {
            guard let streamed = request.streamedBody else { return try digest.of(request.body ?? Data()) }
            guard streamed.isReplayable else {
                let bytes = try await streamed.collect(upTo: Self.maximumHeldBodyBytes)
                request.streamedBody = StreamedBody(length: bytes.count) { ByteStream(bytes) }
                return try digest.of(bytes)
            }
            switch digest {
            case .whole(let digest):
                return try digest(try await streamed.collect(upTo: Self.maximumHeldBodyBytes))
            case .incremental(let make):
                var digest = make()
                let chunks = try streamed.makeChunks()
                while let chunk = try await chunks.nextChunk() { digest.update(chunk) }
                return digest.finalize()
            }
        } catch let error as APIError where error.isBodyTooLarge {
            throw RequestSigningError(step: .bodyDigest, underlying: BodyTooLargeToHold())
        } catch {
            // Asked in a plain function (`Docs/Performance.md#async-frames`): a cancellation goes on as it is.
            if APIClient.isCancellation(error) { throw error }
            throw RequestSigningError(step: .bodyDigest, underlying: error)
        }
    }
}

extension RequestSigner.BodyDigest {
    /// The digest of `bytes`, all at once.
    func of(_ bytes: Data) throws -> Data {
        switch self {
        case .whole(let digest):
            return try digest(bytes)
        case .incremental(let make):
            var digest = make()
            if !bytes.isEmpty { digest.update(bytes) }
            return digest.finalize()
        }
    }
}

/// Why a body read as it is sent could not be signed: it is larger than ``RequestSigner/maximumHeldBodyBytes`` and
/// had to be held whole (a `bodyDigest` that takes `Data`, or a one-shot body).
struct BodyTooLargeToHold: Error, CustomStringConvertible {
    var description: String {
        "the body is larger than \(RequestSigner.maximumHeldBodyBytes) bytes and must be held whole to be digested: "
            + "sign it with an incremental digest (RequestSigner(incrementalDigest:mac:)) and a replayable body"
    }
}

extension APIError {
    /// Whether the error says a body passed the limit it was read up to.
    fileprivate var isBodyTooLarge: Bool {
        if case .responseTooLarge = self { true } else { false }
    }
}
