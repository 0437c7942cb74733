import CourierTesting
import Foundation
import Testing

@testable import Courier

@Suite("A retry budget allows retries as a share of recent calls")
struct RetryBudgetTests {
    @Test func retriesAreTheRatioOfDepositsPlusTheReserve() {
        let clock = ManualClock()
        let budget = RetryBudget(.init(window: .seconds(10), ratio: 0.2, minimumPerSecond: 1), clock: clock)
        #expect(budget.balance == 10)  // the reserve: 1 a second over 10 seconds
        for _ in 0..<25 { budget.deposit() }
        #expect(budget.balance == 15)  // 25 × 20 % + 10
        var granted = 0
        while budget.tryWithdraw() { granted += 1 }
        #expect(granted == 15)
        #expect(budget.balance == 0)
        budget.deposit()
        #expect(!budget.tryWithdraw())  // one more call is 0.2 of a retry: not yet one
        for _ in 0..<4 { budget.deposit() }
        #expect(budget.tryWithdraw())  // five calls make one
    }

    @Test func depositsAndWithdrawalsLeaveTheWindow() {
        let clock = ManualClock()
        let budget = RetryBudget(.init(window: .seconds(10), ratio: 0.5, minimumPerSecond: 0), clock: clock)
        for _ in 0..<10 { budget.deposit() }
        #expect(budget.balance == 5)
        #expect(budget.tryWithdraw())
        clock.advance(by: .seconds(9))
        #expect(budget.balance == 4)
        clock.advance(by: .seconds(1))
        #expect(budget.balance == 0)  // ten seconds later the deposits and the withdrawal are gone
    }

    @Test func depositsSinceTheLastFoldAreSpreadOverTheTimeSince() {
        let clock = ManualClock()
        let budget = RetryBudget(.init(window: .seconds(10), ratio: 1, minimumPerSecond: 0), clock: clock)
        _ = budget.balance  // folds at 0 s
        for _ in 0..<15 { budget.deposit() }  // fewer than `foldEvery`: they wait unfolded
        clock.advance(by: .seconds(20))
        // 15 deposits over 20 seconds, taken as made at a steady rate: those of the first 10.1 seconds (7.6, rounded
        // down to 7) fall before the window (100 slots of 0.1 s, the latest just begun); 8 remain.
        #expect(budget.balance == 8)
    }

    @Test func aClientFailsWithTheLastOutcomeWhenTheBudgetIsSpent() async throws {
        let clock = ManualClock()
        let transport = StubTransport.responding(status: 503)
        var configuration = APIClient.Configuration(
            transport: transport, cache: nil,
            retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .zero, jitter: .none), clock: clock)
        configuration.resilience = Resilience(
            retryBudget: .init(window: .seconds(10), ratio: 0.2, minimumPerSecond: 0), circuitBreaker: nil)
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        var denied = 0
        for index in 0..<10 {
            do {
                try await client.send(APIRequest<Void>.get("/items/\(index)"))
                Issue.record("call \(index) succeeded")
            } catch APIError.retryBudgetExhausted(let last) {
                #expect(last.statusCode == 503)
                denied += 1
            }
        }
        // Calls 5 and 10 bring the deposits to 5 and 10, one retry each; every other retry is denied.
        #expect(denied == 10)
        #expect(transport.requests.count == 12)
        #expect(client.metrics.retries == 2)
        #expect(client.metrics.retryBudgetDenials == 10)
    }
}
