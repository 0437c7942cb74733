import Courier
import CourierTesting
import Crypto
import Foundation
import SigningWithSwiftCrypto
import Testing

@Suite struct HMACSigningTests {
    /// The digest and signature of this request, computed independently (Python's hmac and hashlib).
    @Test func signsAKnownRequestAsAnIndependentImplementationDoes() async throws {
        let signer = hmacSigner(
            keyID: "key-1", secret: Data("s3cret".utf8), now: { Date(timeIntervalSince1970: 1_704_067_200) },
            nonce: { "nonce-1" })
        let request = TransportRequest(
            method: .post, url: URL(string: "https://api.example.com/v1/orders?z=1&a=2")!,
            headers: ["Content-Type": "application/json"], body: Data(#"{"sku":"book-1"}"#.utf8))

        let signed = try await signer.adapt(request)

        #expect(
            signed.headers["X-Content-Digest"] == "d92d265caa823eacb94f008a46286dc403fbb60b3964fe040bd59c79b280af8a")
        #expect(signed.headers["X-Signature"] == "q32kdE92mDiqXBPGOUNX3LoYF0BI7wLqmvv+SiNyNpA=")
        #expect(signed.headers["X-Timestamp"] == "1704067200" && signed.headers["X-Nonce"] == "nonce-1")
        #expect(signed.headers["X-Key-ID"] == "key-1")
    }

    /// A server that checks each request's HMAC with swift-crypto, as the API would.
    static func verifyingServer(secret: String) -> StubTransport {
        StubTransport { request in
            let key = SymmetricKey(data: Data(secret.utf8))
            let canonical = RequestSigner.canonicalString(
                method: request.method, url: request.url, bodyDigest: Data(SHA256.hash(data: request.body ?? Data())),
                timestamp: request.headers["X-Timestamp"] ?? "", nonce: request.headers["X-Nonce"] ?? "")
            guard let signature = request.headers["X-Signature"].flatMap({ Data(base64Encoded: $0) }),
                HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Data(canonical.utf8), using: key)
            else { return .text(403, "bad signature") }
            return .json(#"{"ok": true}"#)
        }
    }

    @Test func theServerAcceptsSignaturesMadeWithItsSecretOnly() async throws {
        struct Answer: Decodable { let ok: Bool }
        for (secret, accepted) in [("s3cret", true), ("another secret", false)] {
            let server = Self.verifyingServer(secret: "s3cret")
            var configuration = APIClient.Configuration(transport: server, cache: nil)
            configuration.adapters = [hmacSigner(keyID: "key-1", secret: Data(secret.utf8))]
            let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, configuration: configuration)

            let result = await Result {
                try await client.send(APIRequest<Answer>.post("/orders?b=2&a=1", body: ["sku": "book-1"]))
            }

            if accepted {
                #expect(try result.get().value.ok)
            } else {
                #expect(throws: APIError.self) { try result.get() }
            }
            #expect(server.callCount == 1)
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
