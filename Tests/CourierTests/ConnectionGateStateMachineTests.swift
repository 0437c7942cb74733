import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ConnectionGateStateMachine` driven directly (a start is a plain number), and the one race it leaves to its
/// caller: a waiter whose caller leaves while it is being granted a slot.
@Suite(.timeLimit(.minutes(1))) struct ConnectionGateStateMachineTests {
    private typealias Machine = ConnectionGateStateMachine<Int>

    private static func started(_ action: Machine.ReleaseAction) -> Int? {
        guard case .start(let start) = action else { return nil }
        return start
    }

    @Test func slotsAreTakenUpToTheLimitThenWaitersAreGrantedInArrivalOrder() {
        var machine = Machine()
        #expect(machine.admit(1, 1, limit: 2) == .startNow)
        #expect(machine.admit(2, 2, limit: 2) == .startNow)
        #expect(machine.admit(3, 3, limit: 2) == .queued)
        #expect(machine.admit(4, 4, limit: 2) == .queued)
        #expect((machine.admitted, machine.queued) == (2, 2))
        #expect(Self.started(machine.release()) == 3)
        #expect((machine.admitted, machine.queued) == (2, 1), "the slot passed to the waiter: still two held")
        #expect(Self.started(machine.release()) == 4)
        guard case .freed = machine.release() else {
            Issue.record("a release with nobody waiting did not free the slot")
            return
        }
        #expect((machine.admitted, machine.queued) == (1, 0))
        #expect(machine.admit(5, 5, limit: 2) == .startNow, "a freed slot is taken at once")
    }

    @Test func aRequestNeverJumpsTheQueueEvenWhenASlotIsFree() {
        var machine = Machine()
        #expect(machine.admit(1, 1, limit: 1) == .startNow)
        #expect(machine.admit(2, 2, limit: 1) == .queued)
        // Limit raised (a second transport sharing nothing, or a test): a newcomer still waits behind the queue.
        #expect(machine.admit(3, 3, limit: 5) == .queued)
    }

    @Test func aWithdrawalBeforeTheGrantRemovesTheWaiterAndTheSlotGoesToTheNext() {
        var machine = Machine()
        #expect(machine.admit(1, 1, limit: 1) == .startNow)
        #expect(machine.admit(2, 2, limit: 1) == .queued)
        #expect(machine.admit(3, 3, limit: 1) == .queued)
        #expect(machine.withdraw(2) == .withdrawn)
        #expect(machine.withdraw(2) == .notQueued, "a second withdrawal finds nothing")
        #expect(Self.started(machine.release()) == 3)
    }

    @Test func aWithdrawalAfterTheGrantFindsNothingAndTheGrantedRequestHoldsTheSlot() {
        var machine = Machine()
        #expect(machine.admit(1, 1, limit: 1) == .startNow)
        #expect(machine.admit(2, 2, limit: 1) == .queued)
        #expect(machine.admit(3, 3, limit: 1) == .queued)
        #expect(Self.started(machine.release()) == 2)
        #expect(machine.withdraw(2) == .notQueued)
        #expect((machine.admitted, machine.queued) == (1, 1))
        // The granted request gives the slot back when its start finds its caller gone.
        #expect(Self.started(machine.release()) == 3)
        guard case .freed = machine.release() else {
            Issue.record("the last release did not free the slot")
            return
        }
        #expect(machine.isIdle)
    }

    @Test func aReleaseOfAnIdleHostDoesNotGoNegative() {
        var machine = Machine()
        guard case .freed = machine.release() else {
            Issue.record("a release with nothing held granted something")
            return
        }
        #expect(machine.admitted == 0)
        #expect(machine.isIdle)
    }

    /// The transport's side of the rule: a request granted a slot whose caller left before its start ran never makes
    /// a task, and gives the slot to the next waiter.
    @Test func aWaiterWhoseCallerLeavesWhileItIsGrantedASlotGivesTheSlotOnAndSendsNothing() {
        let gate = ConnectionGate(limit: 1)
        let host = "h:80"
        let url = URL(string: "http://h/x")!
        let first: @Sendable () -> Void = {}
        #expect(gate.admit(host, id: gate.makeID(), start: first))
        let exchange = URLSessionExchange(
            request: URLRequest(url: url), origin: url, credentialHeaderNames: [], maxResponseBytes: 1 << 20,
            sessionQueue: DispatchQueue(label: "test")
        ) { gate.leave(host) }
        let granted = Locked<[@Sendable () -> Void]>([])
        let waiter = gate.makeID()
        // As the transport does, the start is only enqueued when the slot is granted; it runs later.
        let queuedStart: @Sendable () -> Void = {
            granted.withLock {
                $0.append({
                    exchange.start {
                        Issue.record("a task was made for a caller that left")
                        return URLSession(configuration: .ephemeral).dataTask(with: URL(string: "http://127.0.0.1:9")!)
                    }
                })
            }
        }
        #expect(!gate.admit(host, id: waiter, start: queuedStart))
        let next = Locked(false)
        let nextStart: @Sendable () -> Void = { next.withLock { $0 = true } }
        #expect(!gate.admit(host, id: gate.makeID(), start: nextStart))

        gate.leave(host)  // the first request ends: the slot is granted to the waiter
        #expect(granted.withLock { $0.count } == 1)
        // Its caller leaves before the start runs: the withdrawal finds nothing, the slot is the waiter's.
        exchange.leave(with: CancellationError())
        #expect(!gate.withdraw(host, id: waiter))
        #expect(gate.counts(for: host) == (admitted: 1, queued: 1))

        granted.withLock { $0 }.forEach { $0() }
        #expect(next.withLock { $0 }, "the slot went on to the next waiter")
        #expect(gate.counts(for: host) == (admitted: 1, queued: 0))
    }
}
