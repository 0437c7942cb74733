import Foundation
import Testing

@testable import Courier

/// Tools for the token refresh tests: a date that moves only when the test says so, credentials whose
/// tokens are easy to search for, and a scripted refresh closure that counts its calls.
enum AuthTestKit {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// Every token in these tests contains this word, so a leak check only has to look for it.
    static let secret = "secret"

    /// A date source the test moves by hand.
    final class ManualDate: Sendable {
        private let date = Locked(AuthTestKit.start)

        var now: Date { date.withLock { $0 } }

        func advance(by seconds: TimeInterval) {
            date.withLock { $0 += seconds }
        }

        /// The closure to hand to a ``TokenRefresher``.
        var source: @Sendable () -> Date { { [self] in now } }
    }

    /// The error a failing refresh throws.
    struct EndpointDown: Error, CustomStringConvertible {
        var description: String { "the token endpoint is down" }
    }

    /// The refresh closure's double: issues `secret-access-1`, `secret-access-2`, … valid for an hour,
    /// or throws ``EndpointDown``; first waits at `gate` when there is one. Records what it was asked.
    final class Issuer: Sendable {
        let gate: CoalescerTestKit.Gate?
        let fails: Bool
        let date: ManualDate
        let lifetime: TimeInterval
        private let asked = Locked<[Credential?]>([])
        private let cancelled = Locked(0)

        init(gate: CoalescerTestKit.Gate? = nil, fails: Bool = false, date: ManualDate, lifetime: TimeInterval = 3600) {
            self.gate = gate
            self.fails = fails
            self.date = date
            self.lifetime = lifetime
        }

        /// How many times the refresh closure was called.
        var calls: Int { asked.withLock { $0.count } }
        /// The credentials it was asked to renew, in order.
        var renewed: [Credential?] { asked.withLock { $0 } }
        /// How many calls saw their task cancelled while waiting at the gate.
        var cancellations: Int { cancelled.withLock { $0 } }

        func refresh(_ credential: Credential?) async throws -> Credential {
            let call = asked.withLock { asked in
                asked.append(credential)
                return asked.count
            }
            if let gate, await !gate.wait() {
                cancelled.withLock { $0 += 1 }
                throw CancellationError()
            }
            if fails { throw EndpointDown() }
            return Credential(
                accessToken: "secret-access-\(call)", refreshToken: "secret-refresh-\(call)",
                expiresAt: date.now + lifetime, identity: credential?.identity ?? "alice")
        }
    }

    /// A credential for `identity` that expires `expiresIn` seconds after ``start``.
    static func credential(
        _ token: String = "secret-access-0", identity: String = "alice", expiresIn: TimeInterval? = 3600
    ) -> Credential {
        Credential(
            accessToken: token, refreshToken: "secret-refresh-0", expiresAt: expiresIn.map { start + $0 },
            identity: identity)
    }

    /// A refresher driven by `issuer`, its date and `clock`.
    static func refresher(
        _ credential: Credential?, issuer: Issuer, clock: TestClock = TestClock(), leeway: Duration = .seconds(60),
        maxRefreshes: Int = 5, refreshTimeout: Duration = .seconds(30)
    ) -> TokenRefresher {
        TokenRefresher(
            credential: credential, leeway: leeway, maxRefreshes: maxRefreshes, refreshTimeout: refreshTimeout,
            clock: clock, currentDate: issuer.date.source
        ) {
            try await issuer.refresh($0)
        }
    }

    /// Waits (bounded, without sleeping) until `count` callers wait for the running refresh.
    static func waitForWaiters(
        _ count: Int, on refresher: TokenRefresher, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let reached = await CoalescerTestKit.eventually { await refresher.waiterCount == count }
        try #require(reached, "the refresher never had \(count) waiters", sourceLocation: sourceLocation)
    }

    /// Waits (bounded, without sleeping) until something sleeps for `duration` on `clock`, such as a refresh's
    /// timer. Bounded rather than ``TestClock/waitForSleeper(of:)``, so a timer that never starts fails the test
    /// instead of hanging the run.
    static func waitForTimer(
        _ duration: Duration, on clock: TestClock, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let started = await CoalescerTestKit.eventually { clock.pendingSleeps.contains(duration) }
        try #require(started, "nothing slept for \(duration)", sourceLocation: sourceLocation)
    }

    /// How a group of callers of the refresher ended, counted once they all have.
    struct Outcomes {
        var credentials: [Credential] = []
        var failures: [AuthenticationFailure] = []
        var cancellations = 0
        var otherErrors = 0
    }

    /// Awaits every caller and sorts out how each ended. A plain `do`/`catch`: fast with hundreds of callers.
    static func outcomes(of callers: [Task<Credential, any Error>]) async -> Outcomes {
        var outcomes = Outcomes()
        for caller in callers {
            do {
                outcomes.credentials.append(try await caller.value)
            } catch is CancellationError {
                outcomes.cancellations += 1
            } catch {
                if let failure = authenticationFailure(error) {
                    outcomes.failures.append(failure)
                } else {
                    outcomes.otherErrors += 1
                }
            }
        }
        return outcomes
    }

    /// Waits (a bounded number of yields) until `refresher` has no refresh running: early renewals run in the
    /// background, so a test that triggered one waits for it before looking at what it did.
    static func settle(_ refresher: TokenRefresher) async {
        for _ in 0..<100_000 {
            if await !refresher.isRefreshing { return }
            await Task.yield()
        }
        Issue.record("the refresh never ended")
    }

    /// Everything a person or a logger could print of `value`.
    static func printed(_ value: Any) -> String {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped].joined(separator: "\n")
    }

    /// The reason of an ``APIError/authenticationFailed(_:)``, or `nil` for any other error.
    static func authenticationFailure(_ error: any Error) -> AuthenticationFailure? {
        guard case .authenticationFailed(let failure) = error as? APIError else { return nil }
        return failure
    }
}

extension AuthTestKit {
    static let baseURL = URL(string: "https://api.example.com")!

    /// The body of the test servers' answers: the token they accepted.
    struct Echo: Decodable, Equatable {
        let token: String
    }

    /// A server that accepts only the tokens the issuer handed out (`secret-access-1` and later), answers
    /// 401 to anything else, and echoes the token it accepted. A 401 waits at `staleGate` and a 200 at
    /// `freshGate`, when given.
    static func tokenCheckingTransport(
        staleGate: CoalescerTestKit.Gate? = nil, freshGate: CoalescerTestKit.Gate? = nil
    ) -> MockTransport {
        MockTransport { request, _ in
            let token = request.headers["Authorization"] ?? ""
            guard token.hasPrefix("Bearer secret-access-"), token != "Bearer secret-access-0" else {
                if let staleGate { _ = await staleGate.wait() }
                return .text(401, #"{"error":"invalid_token"}"#)
            }
            if let freshGate { _ = await freshGate.wait() }
            return .text(200, #"{"token":"\#(token.dropFirst("Bearer ".count))"}"#)
        }
    }

    /// A client of `transport` authenticated by `refresher`, retries off unless told otherwise.
    static func makeClient(
        _ transport: MockTransport, refresher: TokenRefresher?, coalescing: Bool = true,
        retryPolicy: RetryPolicy = .never, clock: TestClock = TestClock()
    ) -> APIClient {
        var configuration = APIClient.Configuration(
            transport: transport, retryPolicy: retryPolicy, authenticator: refresher, clock: clock)
        configuration.isCoalescingEnabled = coalescing
        // `X-Call` numbers the calls of a burst for the transport; it never changes the answer, so they still share.
        configuration.coalescingIgnoredHeaders.insert("X-Call")
        return APIClient(baseURL: baseURL, configuration: configuration)
    }
}
