import CourierTesting
import Foundation
import Testing

@testable import Courier

@Suite struct RequestSignerTests {
    /// A keyed toy MAC (FNV-1a over key and message): the signer must not care which MAC it is given.
    static func toyMAC(key: String) -> @Sendable (Data) throws -> Data {
        { message in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in Data(key.utf8) + message {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
            return withUnsafeBytes(of: hash.bigEndian) { Data($0) }
        }
    }

    static let digest: @Sendable (Data) throws -> Data = { Data([UInt8(truncatingIfNeeded: $0.count), 0xAB]) }

    struct Broken: Error, CustomStringConvertible {
        var description: String { "the key store is locked" }
    }

    @Test func theCanonicalStringSortsTheQueryAndKeepsEncodingAsSent() {
        let url = URL(string: "https://api.example.com/v1/orders%2Fopen?item=b&currency=EUR&item=a&flag&q=a%20b")!

        let canonical = RequestSigner.canonicalString(
            method: .post, url: url, bodyDigest: Data([0x0F, 0xA0]), timestamp: "1704067200", nonce: "n-1")

        #expect(
            canonical == """
                POST
                /v1/orders%2Fopen
                currency=EUR&flag=&item=a&item=b&q=a%20b
                0fa0
                1704067200
                n-1
                """)
        let root = RequestSigner.canonicalString(
            method: .get, url: URL(string: "https://api.example.com")!, bodyDigest: Data(), timestamp: "0", nonce: "")
        #expect(root == "GET\n/\n\n\n0\n")
    }

    @Test func everyAttemptIsSignedAfreshAndVerifies() async throws {
        let ticks = Locked(0)
        let signer = RequestSigner(
            keyID: "key-1", bodyDigest: Self.digest, mac: Self.toyMAC(key: "s3cret"),
            now: {
                Date(
                    timeIntervalSince1970: 1_704_067_200
                        + Double(
                            ticks.withLock {
                                $0 += 1; return $0
                            }))
            },
            nonce: { "nonce-\(ticks.withLock { $0 })" })
        let transport = StubTransport.sequence([.success(.text(503)), .success(.text(503)), .success(.json("{}"))])
        var configuration = APIClient.Configuration(
            transport: transport, cache: nil, retryPolicy: .custom(maxAttempts: 3) { _ in .retry(after: .zero) })
        configuration.adapters = [signer]
        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, configuration: configuration)

        var request = APIRequest<Data>.put("/orders/7", body: ["sku": "book-1"])
        request.query = [URLQueryItem(name: "z", value: "1"), URLQueryItem(name: "a", value: "2")]
        request.headers["Idempotency-Key"] = "k-7"
        let response = try await client.send(request)

        #expect(response.attempts == 3)
        let sent = transport.requests
        #expect(sent.count == 3)
        #expect(Set(sent.map { $0.headers["X-Nonce"] }).count == 3)
        #expect(sent.map { $0.headers["X-Timestamp"] } == ["1704067201", "1704067202", "1704067203"])
        for request in sent {
            // What a server does: rebuild the canonical string from the request it received and check the MAC.
            let canonical = RequestSigner.canonicalString(
                method: request.method, url: request.url, bodyDigest: try Self.digest(request.body ?? Data()),
                timestamp: request.headers["X-Timestamp"] ?? "", nonce: request.headers["X-Nonce"] ?? "")
            let expected = try Self.toyMAC(key: "s3cret")(Data(canonical.utf8)).base64EncodedString()
            #expect(request.headers["X-Signature"] == expected)
            #expect(request.headers["X-Key-ID"] == "key-1")
            #expect(request.headers["X-Content-Digest"] == "10ab")  // 16 bytes of JSON: {"sku":"book-1"}
            #expect(canonical.split(separator: "\n")[2] == "a=2&z=1")
        }
    }

    @Test(arguments: [RequestSigningError.Step.mac, .bodyDigest])
    func aSignerThatThrowsFailsTheCallClearlyAndSendsNothing(failing step: RequestSigningError.Step) async {
        let signer = RequestSigner(
            bodyDigest: { body in
                if step == .bodyDigest { throw Broken() }
                return try Self.digest(body)
            },
            mac: { message in
                if step == .mac { throw Broken() }
                return try Self.toyMAC(key: "k")(message)
            })
        let transport = StubTransport.json("{}")
        var configuration = APIClient.Configuration(transport: transport)
        configuration.adapters = [signer]
        let client = APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration)

        await #expect {
            try await client.send(APIRequest<Data>.get("/signed"))
        } throws: { error in
            guard case .adapterFailed(let cause as RequestSigningError) = error as? APIError else { return false }
            let function = step == .mac ? "MAC function" : "body digest function"
            return cause.step == step
                && "\(error)".contains("signing failed: the \(function) threw the key store is locked")
        }
        #expect(transport.callCount == 0)
    }

    @Test func signedCallsStillShareOneFlight() async throws {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let transport = StubTransport { _ in
            for await _ in gate {}
            return .json("{}")
        }
        var configuration = APIClient.Configuration(transport: transport, cache: nil)
        configuration.adapters = [RequestSigner(bodyDigest: Self.digest, mac: Self.toyMAC(key: "k"))]
        let client = APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration)

        async let first = client.send(APIRequest<Data>.get("/feed"))
        async let second = client.send(APIRequest<Data>.get("/feed"))
        while await client.coalescer.waiterCount < 2 { await Task.yield() }
        open.finish()
        let joined = try await [first.joined, second.joined]

        #expect(transport.callCount == 1)
        #expect(joined.sorted { !$0 && $1 } == [false, true])
    }
}
