import Foundation

/// Signs every attempt of a request with a MAC you supply, as APIs that require HMAC request signing expect.
///
/// Before each attempt (a retry is signed again, with a new timestamp and nonce) the signer builds a canonical string
/// from what the server can check, one part per line:
///
/// ```
/// POST                                  the method
/// /v1/orders                            the path, percent-encoded as sent ("/" when empty)
/// currency=EUR&item=a&item=b            the query's name=value pairs, sorted by name then value, as sent
/// 9f86d081884c7d65…                     the body's digest, lowercase hex (of no bytes when there is no body)
/// 1704067200                            the timestamp, Unix seconds
/// 5E0C2B2A-…                            the nonce
/// ```
///
/// and sends the parts and the MAC of that string (base64) in the headers ``HeaderNames`` names. The digest and the
/// MAC are functions you pass in, so Courier needs no cryptography package; with swift-crypto:
///
/// ```swift
/// let signer = RequestSigner(
///     keyID: "key-1",
///     bodyDigest: { Data(SHA256.hash(data: $0)) },
///     mac: { Data(HMAC<SHA256>.authenticationCode(for: $0, using: SymmetricKey(data: secret))) })
/// configuration.adapters.append(signer)
/// ```
///
/// <doc:SigningRequests> shows it whole, as `Examples/SigningWithSwiftCrypto` builds and tests it.
///
/// A digest or MAC that throws fails the call with ``APIError/adapterFailed(_:)`` carrying a
/// ``RequestSigningError``; nothing is sent. The signature headers do not change the response, so signed calls are
/// still coalesced and cached (``variesOn`` is empty). They are not credentials: a signature proves one request at
/// one time, and the key never leaves your `mac` closure.
public struct RequestSigner: RequestAdapter {
    /// Where the signer writes each part of the signature.
    public struct HeaderNames: Sendable, Hashable {
        /// The timestamp, Unix seconds. `X-Timestamp` by default.
        public var timestamp: String
        /// The nonce. `X-Nonce` by default.
        public var nonce: String
        /// The body's digest, lowercase hex. `X-Content-Digest` by default.
        public var bodyDigest: String
        /// The MAC of the canonical string, base64. `X-Signature` by default.
        public var signature: String
        /// The key's identifier, when the signer has one. `X-Key-ID` by default.
        public var keyID: String

        /// The default names: `X-Timestamp`, `X-Nonce`, `X-Content-Digest`, `X-Signature` and `X-Key-ID`.
        public static let standard = HeaderNames(
            timestamp: "X-Timestamp", nonce: "X-Nonce", bodyDigest: "X-Content-Digest", signature: "X-Signature",
            keyID: "X-Key-ID")

        /// Creates a set of header names.
        ///
        /// - Parameters:
        ///   - timestamp: The header for the timestamp.
        ///   - nonce: The header for the nonce.
        ///   - bodyDigest: The header for the body's digest.
        ///   - signature: The header for the MAC.
        ///   - keyID: The header for the key's identifier.
        public init(timestamp: String, nonce: String, bodyDigest: String, signature: String, keyID: String) {
            self.timestamp = timestamp
            self.nonce = nonce
            self.bodyDigest = bodyDigest
            self.signature = signature
            self.keyID = keyID
        }
    }

    /// The identifier of the key, sent so that the server knows which key to check with; `nil` sends none.
    public let keyID: String?
    /// Where each part of the signature goes.
    public let headerNames: HeaderNames
    /// How the body is digested; set by the initializer used.
    var digest: BodyDigest
    private let mac: @Sendable (Data) throws -> Data
    private let now: @Sendable () -> Date
    private let makeNonce: @Sendable () -> String

    /// Creates a signer.
    ///
    /// - Parameters:
    ///   - keyID: The identifier of the key, sent in ``HeaderNames/keyID``; `nil` sends none.
    ///   - headerNames: Where each part of the signature goes.
    ///   - bodyDigest: The digest of a body (SHA-256, say); called with empty data when there is no body. A body read
    ///     as it is sent (an upload) is read whole for it, up to ``maximumHeldBodyBytes``: for larger ones, use
    ///     ``init(keyID:headerNames:incrementalDigest:mac:now:nonce:)``.
    ///   - mac: The MAC of a canonical string's UTF-8 bytes (HMAC-SHA256 with your key, say).
    ///   - now: The current date, for the timestamp; inject one in tests.
    ///   - nonce: A value never used before, for each attempt; a random UUID by default.
    public init(
        keyID: String? = nil, headerNames: HeaderNames = .standard,
        bodyDigest: @escaping @Sendable (_ body: Data) throws -> Data,
        mac: @escaping @Sendable (_ message: Data) throws -> Data,
        now: @escaping @Sendable () -> Date = { Date() },
        nonce: @escaping @Sendable () -> String = { UUID().uuidString }
    ) {
        self.keyID = keyID
        self.headerNames = headerNames
        self.digest = .whole(bodyDigest)
        self.mac = mac
        self.now = now
        self.makeNonce = nonce
    }

    /// Empty: the signature headers never change the response, so signed calls stay shareable and cacheable.
    public var variesOn: [String]? { [] }

    /// Returns `request` with a fresh timestamp, nonce, body digest and signature.
    ///
    /// - Parameter request: The request as built, or as the previous adapter returned it.
    /// - Returns: The signed request.
    /// - Throws: ``RequestSigningError`` when the digest or the MAC throws.
    public func adapt(_ request: TransportRequest) async throws -> TransportRequest {
        var signed = request
        let digest = try await bodyDigest(of: &signed)
        let timestamp = String(Int64(now().timeIntervalSince1970.rounded(.down)))
        let nonce = makeNonce()
        let canonical = Self.canonicalString(
            method: request.method, url: request.url, bodyDigest: digest, timestamp: timestamp, nonce: nonce)
        let signature: Data
        do {
            signature = try mac(Data(canonical.utf8))
        } catch {
            throw RequestSigningError(step: .mac, underlying: error)
        }
        signed.headers.replaceOrAdd(name: headerNames.timestamp, value: timestamp)
        signed.headers.replaceOrAdd(name: headerNames.nonce, value: nonce)
        signed.headers.replaceOrAdd(name: headerNames.bodyDigest, value: Self.hex(digest))
        if let keyID { signed.headers.replaceOrAdd(name: headerNames.keyID, value: keyID) }
        signed.headers.replaceOrAdd(name: headerNames.signature, value: signature.base64EncodedString())
        return signed
    }

    /// The string the MAC is computed over, for a server (or a test) that checks a signature.
    ///
    /// - Parameters:
    ///   - method: The request's method.
    ///   - url: The request's URL; its path and query are used as they are percent-encoded.
    ///   - bodyDigest: The digest of the body.
    ///   - timestamp: The timestamp, as sent.
    ///   - nonce: The nonce, as sent.
    /// - Returns: The six lines, joined by `\n`, with no trailing newline.
    public static func canonicalString(
        method: RequestMethod, url: URL, bodyDigest: Data, timestamp: String, nonce: String
    ) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? ""
        let pairs = (components?.percentEncodedQuery ?? "").split(separator: "&", omittingEmptySubsequences: true)
            .map { pair -> (name: Substring, value: Substring) in
                guard let equals = pair.firstIndex(of: "=") else { return (pair, "") }
                return (pair[..<equals], pair[pair.index(after: equals)...])
            }
            .sorted {
                ($0.name.utf8.lexicographicallyPrecedes($1.name.utf8))
                    || ($0.name == $1.name
                        && $0.value.utf8.lexicographicallyPrecedes($1.value.utf8))
            }
        let query = pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        return [method.rawValue, path.isEmpty ? "/" : path, query, hex(bodyDigest), timestamp, nonce]
            .joined(separator: "\n")
    }

    private static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count * 2)
        for byte in data {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Why a ``RequestSigner`` could not sign a request: its digest or its MAC threw. The call fails with
/// ``APIError/adapterFailed(_:)`` carrying this error, and nothing is sent.
public struct RequestSigningError: Error, CustomStringConvertible {
    /// Which of the signer's functions failed.
    public enum Step: Sendable, Hashable {
        /// The body digest function threw.
        case bodyDigest
        /// The MAC function threw.
        case mac
    }

    /// Which of the signer's functions failed.
    public let step: Step
    /// What that function threw.
    public let underlying: any Error

    /// Which step failed, and what it threw.
    public var description: String {
        switch step {
        case .bodyDigest: "signing failed: the body digest function threw \(underlying)"
        case .mac: "signing failed: the MAC function threw \(underlying)"
        }
    }
}
