import Foundation
import Testing

@testable import Courier

/// What the pipeline suites share: the answers of their server, clients whose every dependency the test controls,
/// and an authenticator whose first credential the server rejects.
enum PipelineKit {
    static let baseURL = URL(string: "https://api.example.com")!

    /// The body an upload sends unless the call names one.
    static let payload = Data("the bytes of the upload, 0123456789".utf8)

    /// The success body: one event, so that the same answer serves every shape, event streams included.
    static let okBody = Data("data: ok\n\n".utf8)

    /// `200` with ``okBody`` as a `text/event-stream`.
    static func ok(headers: HeaderFields = [:]) -> TransportResponse {
        var fields: HeaderFields = ["Content-Type": "text/event-stream"]
        for field in headers.fields { fields[field.name] = field.value }
        return TransportResponse(statusCode: 200, headers: fields, body: okBody)
    }

    /// A client over `transport` with a manual clock, no cache and no retries unless told.
    static func client(
        _ transport: PipelineTransport, clock: TestClock = TestClock(), cache: ResponseCache? = nil,
        retryPolicy: RetryPolicy = .never, authenticator: TokenRefresher? = nil,
        configure: (inout APIClient.Configuration) -> Void = { _ in }
    ) -> APIClient {
        var configuration = APIClient.Configuration(
            transport: transport, cache: cache, retryPolicy: retryPolicy, authenticator: authenticator,
            clock: clock)
        configure(&configuration)
        return APIClient(baseURL: baseURL, configuration: configuration)
    }

    /// A policy that retries at once (no backoff to wait for on the manual clock), up to 3 attempts.
    static let immediateRetries = RetryPolicy(maxAttempts: 3, baseDelay: .zero, jitter: .none)
}

// MARK: Credentials

/// How the server says that a credential is no longer good, and the rule the client is configured with.
enum CredentialRejection: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `401`, with the default rule.
    case status401
    /// `419`, with `isCredentialRejected = { [401, 419].contains($0.statusCode) }`.
    case status419CustomRule

    var testDescription: String { rawValue }

    var status: Int {
        switch self {
        case .status401: 401
        case .status419CustomRule: 419
        }
    }

    /// Applies the rule to a configuration.
    func configure(_ configuration: inout APIClient.Configuration) {
        if self == .status419CustomRule {
            configuration.isCredentialRejected = { [401, 419].contains($0.statusCode) }
        }
    }
}

extension PipelineKit {
    /// The token the authenticator starts with; the server rejects it.
    static let staleToken = "secret-access-0"

    /// Whether `request` carries the token the server rejects (or none).
    static func carriesStaleCredential(_ request: TransportRequest) -> Bool {
        let authorization = request.headers["Authorization"] ?? ""
        return authorization.isEmpty || authorization == "Bearer \(staleToken)"
    }

    /// An issuer of `secret-access-1`, `secret-access-2`, … and a refresher that starts with ``staleToken``, valid
    /// for an hour (so nothing is renewed before the server rejects it), on `clock`.
    static func authenticator(clock: TestClock) -> (AuthTestKit.Issuer, TokenRefresher) {
        let issuer = AuthTestKit.Issuer(date: AuthTestKit.ManualDate())
        let refresher = AuthTestKit.refresher(AuthTestKit.credential(staleToken), issuer: issuer, clock: clock)
        return (issuer, refresher)
    }
}

// MARK: Waiting without sleeping

extension PipelineKit {
    /// Runs `operation` in a task, and moves `clock` by `step` each time something sleeps for exactly `step`, up to
    /// `maxSteps` times, until the task ends. A task still running after that is cancelled, and `nil` returned:
    /// the behaviour under test did not end on the clock.
    static func run<Value: Sendable>(
        moving clock: TestClock, by step: Duration, maxSteps: Int = 4,
        _ operation: @escaping @Sendable () async -> Value
    ) async -> Value? {
        let result = Locked<Value?>(nil)
        let task = Task {
            let value = await operation()
            result.withLock { $0 = value }
        }
        var steps = 0
        while result.withLock({ $0 == nil }), steps < maxSteps {
            let due = await CoalescerTestKit.eventually {
                result.withLock { $0 != nil } || clock.pendingSleeps.contains(step)
            }
            guard due, result.withLock({ $0 == nil }) else { break }
            clock.advance(by: step)
            steps += 1
        }
        _ = await CoalescerTestKit.eventually { result.withLock { $0 != nil } }
        if result.withLock({ $0 == nil }) {
            task.cancel()
            await task.value
            return nil
        }
        await task.value
        return result.withLock { $0 }
    }
}

// MARK: Digests

/// FNV-1a, 64 bits: a digest for the signing tests that needs no cryptography, only to differ for different bytes.
enum TestDigest {
    static func fnv1a(_ bytes: Data) -> Data {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return withUnsafeBytes(of: hash.bigEndian) { Data($0) }
    }

    static func hex(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }
}
