import Foundation
import Testing

@testable import Courier

private typealias Kit = AuthTestKit
private typealias Gate = CoalescerTestKit.Gate

/// A credential renewed ahead of its expiry: a renewal that fails while the credential is still valid keeps
/// it in use and is tried again after a backoff on the clock; only once the credential expired is a failure final.
@Suite(.timeLimit(.minutes(1))) struct EarlyRenewalTests {
    /// A credential that expires 120 s after the start, seen 70 s later: 50 s left, inside a 60 s leeway.
    private static func renewalDue(
        _ issuer: Kit.Issuer, clock: TestClock, maxRefreshes: Int = 5, refreshTimeout: Duration = .seconds(30)
    ) -> TokenRefresher {
        let refresher = Kit.refresher(
            Kit.credential(expiresIn: 120), issuer: issuer, clock: clock, leeway: .seconds(60),
            maxRefreshes: maxRefreshes, refreshTimeout: refreshTimeout)
        issuer.date.advance(by: 70)
        return refresher
    }

    /// A call that may start a renewal in the background, then the renewal's end.
    private static func call(_ refresher: TokenRefresher) async throws -> Credential {
        let credential = try await refresher.validCredential()
        await Kit.settle(refresher)
        return credential
    }

    @Test func aFailedEarlyRenewalKeepsTheValidCredentialAndRetriesAfterABackoffUntilItExpires() async throws {
        let clock = TestClock()
        let issuer = Kit.Issuer(fails: true, date: Kit.ManualDate())
        let refresher = Self.renewalDue(issuer, clock: clock)
        // The renewal fails, but the credential has 50 s left: the caller gets it.
        #expect(try await Self.call(refresher).version == 1)
        #expect(issuer.calls == 1)
        // Within the backoff (1 s), calls use it without trying again.
        for _ in 0..<10 { #expect(try await Self.call(refresher).accessToken == "secret-access-0") }
        #expect(issuer.calls == 1)
        clock.advance(by: .seconds(1))
        #expect(try await Self.call(refresher).version == 1)
        #expect(issuer.calls == 2)
        // The backoff doubles: 2 s.
        clock.advance(by: .seconds(1))
        #expect(try await Self.call(refresher).version == 1)
        #expect(issuer.calls == 2)
        clock.advance(by: .seconds(1))
        #expect(try await Self.call(refresher).version == 1)
        #expect(issuer.calls == 3)

        // At its expiry the credential is renewed whatever the backoff, and a failure fails the caller. It does not
        // stick (the credential expired, no server refused it): the next caller tries again.
        issuer.date.advance(by: 50)
        let error = try await #require(throws: APIError.self) { try await refresher.validCredential() }
        guard case .refreshThrew(let cause) = Kit.authenticationFailure(error), cause is Kit.EndpointDown else {
            Issue.record("expected refreshThrew, got \(error)")
            return
        }
        #expect(issuer.calls == 4)
        await #expect(throws: APIError.self) { try await refresher.validCredential() }
        #expect(issuer.calls == 5)
    }

    @Test func nobodyWaitsForAnEarlyRenewalAndItRunsOnce() async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, fails: true, date: Kit.ManualDate())
        let refresher = Self.renewalDue(issuer, clock: TestClock())
        // The renewal is stuck at its gate, yet 100 callers get the still-valid credential at once.
        let callers = (0..<100).map { _ in Task { try await refresher.validCredential() } }
        let outcomes = await Kit.outcomes(of: callers)
        #expect(outcomes.credentials.count == 100)
        #expect(outcomes.credentials.allSatisfy { $0.accessToken == "secret-access-0" && $0.version == 1 })
        #expect(await refresher.waiterCount == 0)
        #expect(await refresher.refreshCount == 1)
        await gate.open()
        await Kit.settle(refresher)
        #expect(issuer.calls == 1)
        #expect(try await refresher.validCredential().version == 1, "the failed renewal kept the valid credential")
    }

    @Test func aTimedOutEarlyRenewalKeepsTheStillValidCredential() async throws {
        let clock = TestClock()
        let issuer = Kit.Issuer(gate: Gate(), date: Kit.ManualDate())
        let refresher = Self.renewalDue(issuer, clock: clock, refreshTimeout: .seconds(10))
        #expect(try await refresher.validCredential().version == 1)
        try await Kit.waitForTimer(.seconds(10), on: clock)
        clock.advance(by: .seconds(10))
        await Kit.settle(refresher)
        #expect(await CoalescerTestKit.eventually { issuer.cancellations == 1 })
        // Within the backoff, the next call uses the credential without a new refresh.
        #expect(try await refresher.validCredential().version == 1)
        await Kit.settle(refresher)
        #expect(issuer.calls == 1)
    }

    @Test func aRejectedCredentialIsNotKeptWhenItsRenewalFails() async throws {
        let issuer = Kit.Issuer(fails: true, date: Kit.ManualDate())
        let refresher = Self.renewalDue(issuer, clock: TestClock())
        let current = try #require(await refresher.credential)
        // The server refused it: not expired, but no longer worth keeping.
        let error = try await #require(throws: APIError.self) { try await refresher.refresh(rejected: current) }
        guard case .refreshThrew = Kit.authenticationFailure(error) else {
            Issue.record("expected refreshThrew, got \(error)")
            return
        }
        await #expect(throws: APIError.self) { try await refresher.validCredential() }
        #expect(issuer.calls == 1)
    }

    @Test func anEarlyRenewalOverTheRefreshLimitKeepsTheValidCredentialUntilTheWindowMoves() async throws {
        let clock = TestClock()
        let issuer = Kit.Issuer(fails: true, date: Kit.ManualDate())
        let refresher = Self.renewalDue(issuer, clock: clock, maxRefreshes: 2)
        // Renewals fail at 0 s and 1 s; the third (due at 3 s) would exceed 2 refreshes within 30 s.
        #expect(try await Self.call(refresher).version == 1)
        clock.advance(by: .seconds(1))
        #expect(try await Self.call(refresher).version == 1)
        #expect(issuer.calls == 2)
        for _ in 0..<28 {
            clock.advance(by: .seconds(1))
            #expect(try await Self.call(refresher).version == 1)
        }
        #expect(issuer.calls == 2)
        // 30 s after the first renewal it leaves the window, and the next renewal is tried.
        clock.advance(by: .seconds(1))
        #expect(try await Self.call(refresher).version == 1)
        #expect(issuer.calls == 3)
    }
}
