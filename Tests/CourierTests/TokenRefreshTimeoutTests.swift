import Foundation
import Testing

@testable import Courier

private typealias Kit = AuthTestKit
private typealias Gate = CoalescerTestKit.Gate

/// How long a refresh may take, and how long a caller waits for one: a refresh that never answers ends at its
/// timeout on the injected clock without sticking, and a caller that gives up leaves at once.
@Suite(.timeLimit(.minutes(1))) struct TokenRefreshTimeoutTests {
    @Test func aRefreshThatNeverAnswersFailsEveryWaiterWhenItsTimeoutPassesOnTheClock() async throws {
        let clock = TestClock()
        // The gate never opens: the token endpoint never answers.
        let issuer = Kit.Issuer(gate: Gate(), date: Kit.ManualDate())
        let refresher = Kit.refresher(
            Kit.credential(expiresIn: -1), issuer: issuer, clock: clock, refreshTimeout: .seconds(10))
        let callers = (0..<100).map { _ in Task { try await refresher.validCredential() } }
        try await Kit.waitForWaiters(100, on: refresher)
        try await Kit.waitForTimer(.seconds(10), on: clock)
        clock.advance(by: .seconds(9))
        #expect(await refresher.waiterCount == 100)
        clock.advance(by: .seconds(1))

        let outcomes = await Kit.outcomes(of: callers)
        #expect(outcomes.credentials.isEmpty)
        #expect(outcomes.failures.count == 100)
        #expect(outcomes.failures.allSatisfy { if case .refreshTimedOut(.seconds(10)) = $0 { true } else { false } })
        // The refresh task was cancelled, once.
        #expect(await CoalescerTestKit.eventually { issuer.cancellations == 1 })
        #expect(issuer.calls == 1)
        #expect(await refresher.waiterCount == 0)
    }

    @Test func aTimedOutRefreshDoesNotStickTheNextCallerRefreshesAgain() async throws {
        let clock = TestClock()
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, date: Kit.ManualDate())
        let refresher = Kit.refresher(
            Kit.credential(expiresIn: -1), issuer: issuer, clock: clock, refreshTimeout: .seconds(10))
        let first = Task { try await refresher.validCredential() }
        try await Kit.waitForWaiters(1, on: refresher)
        try await Kit.waitForTimer(.seconds(10), on: clock)
        clock.advance(by: .seconds(10))
        guard case .refreshTimedOut? = await Kit.outcomes(of: [first]).failures.first else {
            Issue.record("expected the first refresh to time out")
            return
        }
        #expect(await CoalescerTestKit.eventually { issuer.cancellations == 1 })

        // The endpoint answers again: the next caller starts a new refresh instead of getting the timeout.
        await gate.open()
        let credential = try await refresher.validCredential()
        #expect(credential.accessToken == "secret-access-2")
        #expect(credential.version == 2)
        #expect(issuer.calls == 2)
        #expect(await refresher.refreshCount == 2)
    }

    @Test func timedOutRefreshesStillCountTowardsTheRefreshLimit() async throws {
        let clock = TestClock()
        let issuer = Kit.Issuer(gate: Gate(), date: Kit.ManualDate())
        let refresher = Kit.refresher(
            Kit.credential(expiresIn: -1), issuer: issuer, clock: clock, maxRefreshes: 2,
            refreshTimeout: .seconds(1))
        for _ in 0..<2 {
            let caller = Task { try await refresher.validCredential() }
            try await Kit.waitForWaiters(1, on: refresher)
            try await Kit.waitForTimer(.seconds(1), on: clock)
            clock.advance(by: .seconds(1))
            #expect(await Kit.outcomes(of: [caller]).failures.count == 1)
        }
        let error = try await #require(throws: APIError.self) { try await refresher.validCredential() }
        guard case .tooManyRefreshes(count: 2, window: .seconds(30)) = Kit.authenticationFailure(error) else {
            Issue.record("expected tooManyRefreshes, got \(error)")
            return
        }
        #expect(issuer.calls == 2)
    }

    @Test func halfOfAHundredWaitersCancelledLeaveAtOnceAndTheRefreshGoesOnForTheOtherHalf() async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: -1), issuer: issuer)
        let callers = (0..<100).map { _ in Task { try await refresher.validCredential() } }
        try await Kit.waitForWaiters(100, on: refresher)
        let (cancelled, waiting) = (Array(callers[..<50]), Array(callers[50...]))
        for caller in cancelled { caller.cancel() }
        // Every cancelled caller ends while the refresh is still held at the gate.
        let left = await Kit.outcomes(of: cancelled)
        #expect(left.cancellations == 50)
        #expect(await refresher.waiterCount == 50)
        #expect(issuer.calls == 1)

        await gate.open()
        let served = await Kit.outcomes(of: waiting)
        #expect(served.credentials.count == 50)
        #expect(served.credentials.allSatisfy { $0.accessToken == "secret-access-1" && $0.version == 2 })
        #expect(issuer.calls == 1)
        #expect(issuer.cancellations == 0)
        #expect(await refresher.refreshCount == 1)
    }

    @Test(arguments: [Duration.seconds(Int64.max), .seconds(-5), .zero])
    func anExtremeRefreshTimeoutIsBoundedInsteadOfTrapping(timeout: Duration) async throws {
        let refresher = TokenRefresher(credential: nil, refreshTimeout: timeout) { _ in Kit.credential() }
        #expect(refresher.refreshTimeout >= .zero)
        #expect(refresher.refreshTimeout <= TokenRefresher.longestRefreshTimeout)
        if timeout > .zero {
            // On the real clock: the timer's sleep must not trap converting the duration.
            #expect(try await refresher.validCredential().version == 1)
        }
    }
}
