import CourierTesting
import Foundation
import Testing

@testable import Courier

@Suite("A retry budget holds a steady brownout to its ratio plus its reserve")
struct RetryBudgetBrownoutTests {
    /// 100 calls a second, healthy for 2 s, then 30 % of them failing for 10 s, each failure asking for a retry at
    /// once (and 30 % of retries failing too): the budget (20 % + 10/s over 10 s) grants at most 20 % of the fault's
    /// 1,000 calls plus 10 a second over its 10 s, 300 retries.
    @Test func aFaultAsLongAsTheWindowGetsTwentyPercentPlusTheReserve() {
        let clock = ManualClock()
        let budget = RetryBudget(.default, clock: clock)
        var wanted = 0.0
        var granted = 0
        for step in 0..<1_200 {  // 10 ms steps
            budget.deposit()
            if step >= 200 {
                wanted += 0.3 / 0.7  // failures of calls and of retries: 0.3 + 0.09 + … per call
                while wanted >= 1 {
                    wanted -= 1
                    if budget.tryWithdraw() { granted += 1 }
                }
            }
            clock.advance(by: .milliseconds(10))
        }
        #expect(granted <= 300)
        #expect(granted >= 290)
    }

    /// A burst of 320 calls, then quiet: 10 s after the burst its deposits are gone, whenever the budget looks next.
    /// Before deposits were folded every 64 calls, the first look (here 10.5 s later) spread them over all the time
    /// since and kept 301 of them in the window: 60 retries more than the reserve.
    @Test func aBurstIsCreditedToWhenItWasMade() {
        let clock = ManualClock()
        let budget = RetryBudget(.default, clock: clock)
        for _ in 0..<320 { budget.deposit() }
        clock.advance(by: .milliseconds(10_500))
        #expect(budget.balance == 100)
    }
}
