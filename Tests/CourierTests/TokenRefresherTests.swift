import Foundation
import Testing

@testable import Courier

private typealias Kit = AuthTestKit
private typealias Gate = CoalescerTestKit.Gate

@Suite(.timeLimit(.minutes(1))) struct TokenRefresherTests {
    @Test func aValidCredentialIsReturnedWithoutRefreshing() async throws {
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(), issuer: issuer)
        let credential = try await refresher.validCredential()
        #expect(credential.accessToken == "secret-access-0")
        #expect(credential.version == 1)
        #expect(await refresher.refreshCount == 0)
        #expect(issuer.calls == 0)
    }

    @Test func aThousandCallersOfAnExpiredCredentialShareOneRefresh() async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: -1), issuer: issuer)
        let callers = (0..<1_000).map { _ in Task { try await refresher.validCredential() } }
        try await Kit.waitForWaiters(1_000, on: refresher)
        await gate.open()
        for caller in callers {
            let credential = try await caller.value
            #expect(credential.accessToken == "secret-access-1")
            #expect(credential.version == 2)
        }
        #expect(issuer.calls == 1)
        #expect(issuer.renewed.first??.accessToken == "secret-access-0")
        #expect(await refresher.refreshCount == 1)
    }

    @Test func aThousandRejectionsOfTheSameCredentialShareOneRefresh() async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: nil), issuer: issuer)
        let rejected = try await refresher.validCredential()
        let callers = (0..<1_000).map { _ in Task { try await refresher.refresh(rejected: rejected) } }
        try await Kit.waitForWaiters(1_000, on: refresher)
        await gate.open()
        for caller in callers { #expect(try await caller.value.version == 2) }
        #expect(issuer.calls == 1)
    }

    @Test func aRejectionOfAnAlreadyReplacedCredentialReturnsTheCurrentOneWithoutRefreshing() async throws {
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(), issuer: issuer)
        let first = try await refresher.validCredential()
        let second = try await refresher.refresh(rejected: first)
        #expect(second.version == 2)
        let again = try await refresher.refresh(rejected: first)
        #expect(again == second)
        #expect(await refresher.refreshCount == 1)
    }

    @Test func aCredentialIsRenewedWithinTheLeewayOfItsExpiry() async throws {
        let date = Kit.ManualDate()
        let issuer = Kit.Issuer(date: date)
        let refresher = Kit.refresher(Kit.credential(expiresIn: 120), issuer: issuer, leeway: .seconds(60))
        date.advance(by: 59)
        #expect(try await refresher.validCredential().version == 1)
        date.advance(by: 1)
        // Still valid: served at once while the renewal runs in the background.
        #expect(try await refresher.validCredential().version == 1)
        await Kit.settle(refresher)
        let renewed = try await refresher.validCredential()
        #expect(renewed.version == 2)
        #expect(renewed.expiresAt == Kit.start + 60 + 3600)
        #expect(try await refresher.validCredential() == renewed)
        #expect(issuer.calls == 1)
    }

    @Test func aTokenShorterLivedThanTwiceTheLeewayIsRenewedAtHalfItsLifetime() async throws {
        let date = Kit.ManualDate()
        let issuer = Kit.Issuer(date: date, lifetime: 30)
        let refresher = Kit.refresher(Kit.credential(expiresIn: 30), issuer: issuer, leeway: .seconds(60))
        date.advance(by: 14)
        #expect(try await refresher.validCredential().version == 1)
        date.advance(by: 1)
        #expect(try await refresher.validCredential().version == 1)
        await Kit.settle(refresher)
        #expect(try await refresher.validCredential().version == 2)
        #expect(try await refresher.validCredential().version == 2)
        #expect(issuer.calls == 1)
    }

    @Test func withoutACredentialTheRefreshClosureIsAskedForOne() async throws {
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(nil, issuer: issuer)
        #expect(await refresher.credential == nil)
        let credential = try await refresher.validCredential()
        #expect(credential.version == 1)
        #expect(issuer.renewed.count == 1)
        #expect(issuer.renewed.first! == nil)
    }

    @Test func cancellingTheCallerThatTriggeredTheRefreshLeavesTheRefreshRunningForTheOthers() async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: -1), issuer: issuer)
        let trigger = Task { try await refresher.validCredential() }
        try await Kit.waitForWaiters(1, on: refresher)
        let others = (0..<9).map { _ in Task { try await refresher.validCredential() } }
        try await Kit.waitForWaiters(10, on: refresher)
        trigger.cancel()
        // The trigger leaves at once, while the refresh is still held at the gate.
        #expect(await CoalescerTestKit.endedInCancellation(trigger))
        #expect(await refresher.waiterCount == 9)
        await gate.open()
        for other in others { #expect(try await other.value.version == 2) }
        #expect(issuer.calls == 1)
        #expect(issuer.cancellations == 0)
        #expect(await refresher.credential?.accessToken == "secret-access-1")
    }

    /// The server refused the credential and the refresh cannot replace it: that is final until a new credential.
    /// (For a credential that only expired, see `aRefreshThatThrowsForAnExpiredCredentialDoesNotStick`.)
    @Test func aFailedRefreshOfARejectedCredentialFailsEveryWaiterAndStaysFailedUntilANewCredential() async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, fails: true, date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: nil), issuer: issuer)
        let rejected = try #require(await refresher.credential)
        let callers = (0..<1_000).map { _ in Task { try await refresher.refresh(rejected: rejected) } }
        try await Kit.waitForWaiters(1_000, on: refresher)
        await gate.open()
        var failures = 0
        for caller in callers {
            do {
                _ = try await caller.value
            } catch {
                if case .refreshThrew(let cause) = Kit.authenticationFailure(error), cause is Kit.EndpointDown {
                    failures += 1
                }
            }
        }
        #expect(failures == 1_000)
        #expect(issuer.calls == 1)

        // Later callers get the same failure without a new refresh, whatever they ask.
        let stale = try #require(await refresher.credential)
        await #expect(throws: APIError.self) { try await refresher.validCredential() }
        await #expect(throws: APIError.self) { try await refresher.refresh(rejected: stale) }
        #expect(issuer.calls == 1)
        #expect(await refresher.refreshCount == 1)

        // A login clears the failure.
        let login = await refresher.setCredential(Kit.credential("secret-access-login"))
        #expect(login.version == 2)
        #expect(try await refresher.validCredential() == login)
        #expect(issuer.calls == 1)
    }

    @Test func moreThanFiveRefreshesWithinThirtySecondsFailInsteadOfRefreshing() async throws {
        let clock = TestClock()
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(), issuer: issuer, clock: clock)
        for _ in 0..<5 {
            let current = try await refresher.validCredential()
            _ = try await refresher.refresh(rejected: current)
            clock.advance(by: .seconds(5))
        }
        // 25 s after the first refresh, a sixth one would make six within 30 s.
        let current = try await refresher.validCredential()
        let error = try await #require(throws: APIError.self) { try await refresher.refresh(rejected: current) }
        guard case .tooManyRefreshes(let count, let window) = Kit.authenticationFailure(error) else {
            Issue.record("expected tooManyRefreshes, got \(error)")
            return
        }
        #expect(count == 5)
        #expect(window == .seconds(30))
        #expect(issuer.calls == 5)

        // The limit does not stick: once the first refresh leaves the window, refreshing works again.
        clock.advance(by: .seconds(5))
        #expect(try await refresher.refresh(rejected: current).version == 7)
        #expect(issuer.calls == 6)
        #expect(await refresher.refreshCount == 6)
    }

    @Test func aLoginDuringARefreshGivesTheWaitersTheNewCredentialAndDropsTheRefresh() async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: -1), issuer: issuer)
        let callers = (0..<10).map { _ in Task { try await refresher.validCredential() } }
        try await Kit.waitForWaiters(10, on: refresher)
        let login = await refresher.setCredential(Kit.credential("secret-access-login"))
        for caller in callers { #expect(try await caller.value == login) }
        // The superseded refresh was cancelled, and its late result is not installed.
        #expect(await CoalescerTestKit.eventually { issuer.cancellations == 1 })
        await gate.open()
        #expect(await refresher.credential == login)
        #expect(try await refresher.validCredential() == login)
    }

    @Test func aLogoutDuringARefreshFailsTheWaitersAsSignedOut() async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: -1), issuer: issuer)
        let callers = (0..<10).map { _ in Task { try await refresher.validCredential() } }
        try await Kit.waitForWaiters(10, on: refresher)
        await refresher.clear()
        for caller in callers {
            let error = await #expect(throws: APIError.self) { try await caller.value }
            guard case .signedOut? = error.flatMap(Kit.authenticationFailure) else {
                Issue.record("expected signedOut, got \(String(describing: error))")
                continue
            }
        }
        #expect(await refresher.credential == nil)
        await gate.open()
        #expect(await refresher.credential == nil)
    }

    @Test func everyInstalledCredentialGetsAHigherVersion() async throws {
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(), issuer: issuer)
        #expect(await refresher.credential?.version == 1)
        #expect(await refresher.setCredential(Kit.credential()).version == 2)
        await refresher.clear()
        let refreshed = try await refresher.validCredential()
        #expect(refreshed.version == 4)
        #expect(try await refresher.refresh(rejected: refreshed).version == 5)
    }

    @Test func aCallerAlreadyCancelledGetsCancellationWithoutRefreshing() async throws {
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: -1), issuer: issuer)
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await refresher.validCredential()
        }
        #expect(await CoalescerTestKit.endedInCancellation(caller))
        #expect(issuer.calls == 0)
    }

    @Test func askingTheRefresherForACredentialInsideItsRefreshClosureFailsInsteadOfDeadlocking() async throws {
        // The suite's time limit bounds the test: before the fix, both inner calls waited for themselves.
        let own = Locked<TokenRefresher?>(nil)
        let inner = Locked<[AuthenticationFailure?]>([])
        let refresher = TokenRefresher(credential: Kit.credential(expiresIn: -1), clock: TestClock()) { expired in
            let refresher = try #require(own.withLock { $0 })
            let asks: [@Sendable () async throws -> Credential] = [
                { try await refresher.validCredential() }, { try await refresher.refresh(rejected: expired!) },
            ]
            for ask in asks {
                do {
                    _ = try await ask()
                    inner.withLock { $0.append(nil) }
                } catch {
                    inner.withLock { $0.append(Kit.authenticationFailure(error)) }
                }
            }
            return Kit.credential("secret-access-1")
        }
        own.withLock { $0 = refresher }
        let credential = try await refresher.validCredential()
        #expect(credential.accessToken == "secret-access-1")
        let failures = inner.withLock { $0 }
        #expect(failures.count == 2)
        for failure in failures {
            guard case .reentrantRefresh? = failure else {
                Issue.record("expected reentrantRefresh, got \(String(describing: failure))")
                continue
            }
        }
        #expect(await refresher.refreshCount == 1)
    }

    @Test func aCredentialNeverPrintsItsTokens() {
        var credential = Kit.credential()
        credential.version = 3
        let printed = Kit.printed(credential)
        #expect(!printed.contains(Kit.secret))
        #expect(printed.contains("alice"))
        #expect(credential.description.hasPrefix("Credential(identity: alice, version: 3, expires: "))
        #expect(!Kit.printed([credential]).contains(Kit.secret))
        #expect(!Kit.printed(Optional(credential) as Any).contains(Kit.secret))
    }

    @Test(arguments: [
        AuthenticationFailure.refreshThrew(Kit.EndpointDown()),
        .tooManyRefreshes(count: 5, window: .seconds(30)),
        .signedOut,
        .identityChanged,
        .refreshTimedOut(after: .seconds(30)),
        .reentrantRefresh,
    ])
    func authenticationErrorsNeverPrintTokens(failure: AuthenticationFailure) {
        let error = APIError.authenticationFailed(failure)
        #expect(!Kit.printed(error).contains(Kit.secret))
        #expect(error.description.hasPrefix("Authentication failed: "))
    }

    /// A refresh that threw for a credential that had merely expired (no server refused it) said nothing final: the
    /// token endpoint may have been down for a moment. The next caller refreshes again, within the refresh limit,
    /// instead of getting the old failure until someone installs a credential by hand.
    @Test func aRefreshThatThrowsForAnExpiredCredentialDoesNotStick() async throws {
        let date = Kit.ManualDate()
        let endpointIsDown = Locked(true)
        let calls = Locked(0)
        let refresher = TokenRefresher(
            credential: Kit.credential(expiresIn: 60), maxRefreshes: 2, clock: TestClock(), currentDate: date.source
        ) { old in
            calls.withLock { $0 += 1 }
            if endpointIsDown.withLock({ $0 }) { throw Kit.EndpointDown() }
            return Credential(
                accessToken: "secret-access-1", refreshToken: "secret-refresh-1", expiresAt: date.now + 3600,
                identity: old?.identity ?? "alice")
        }
        date.advance(by: 120)
        let error = try await #require(throws: APIError.self) { try await refresher.validCredential() }
        guard case .refreshThrew(let cause) = Kit.authenticationFailure(error), cause is Kit.EndpointDown else {
            Issue.record("expected refreshThrew, got \(error)")
            return
        }
        endpointIsDown.withLock { $0 = false }
        #expect(try await refresher.validCredential().accessToken == "secret-access-1")
        #expect(calls.withLock { $0 } == 2)
    }

    /// Still bounded: with the endpoint down, callers refresh at most `maxRefreshes` times per window.
    @Test func failedRefreshesOfAnExpiredCredentialStayWithinTheLimit() async throws {
        let date = Kit.ManualDate()
        let calls = Locked(0)
        let refresher = TokenRefresher(
            credential: Kit.credential(expiresIn: 60), maxRefreshes: 2, clock: TestClock(), currentDate: date.source
        ) { _ in
            calls.withLock { $0 += 1 }
            throw Kit.EndpointDown()
        }
        date.advance(by: 120)
        for _ in 0..<10 { await #expect(throws: APIError.self) { try await refresher.validCredential() } }
        #expect(calls.withLock { $0 } == 2)
        let error = try await #require(throws: APIError.self) { try await refresher.validCredential() }
        guard case .tooManyRefreshes = Kit.authenticationFailure(error) else {
            Issue.record("expected tooManyRefreshes, got \(error)")
            return
        }
    }
}
