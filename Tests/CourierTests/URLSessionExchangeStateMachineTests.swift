import Foundation
import Testing

@testable import Courier

/// `URLSessionExchangeStateMachine` driven directly (the continuation and the task are plain values): the caller is
/// told exactly once whichever of leaving, an early stop and the completion comes first, and a caller that left is
/// never sent for.
@Suite struct URLSessionExchangeStateMachineTests {
    private typealias Machine = URLSessionExchangeStateMachine<Int, String>

    private struct DeadlinePassed: Error {}

    @Test func aCompletionBeforeTheCancelTellsTheCallerTheOutcomeAndTheCancelOnlyStopsNothing() {
        var machine = Machine()
        #expect(machine.report(to: 1) == nil)
        #expect(machine.start() == .makeTask)
        guard case .resume("task") = machine.taskMade("task") else {
            Issue.record("the task was not resumed")
            return
        }
        #expect(machine.complete() == 1)
        let leave = machine.leave(with: CancellationError())
        #expect(leave.resume == nil, "the caller was told already")
        #expect(leave.cancel == nil, "a completed task is let go, not cancelled")
        guard case .told = machine.caller, case .completed = machine.transfer else {
            Issue.record("expected told and completed, got \(machine.caller), \(machine.transfer)")
            return
        }
    }

    @Test func aCancelBeforeTheCompletionTellsTheCallerOnceAndTheCompletionOnlyFinishes() {
        var machine = Machine()
        #expect(machine.report(to: 1) == nil)
        _ = machine.taskMade("task")
        let leave = machine.leave(with: CancellationError())
        #expect(leave.resume == 1)
        #expect(leave.cancel == "task")
        #expect(machine.isCancelledByCaller)
        #expect(machine.complete() == nil, "the caller who left is not resumed again")
        #expect(machine.leave(with: CancellationError()).resume == nil, "nor by a second leave")
    }

    @Test func aCallerThatLeftBeforeReportingIsToldAtOnceAndNoTaskIsMade() {
        var machine = Machine()
        let leave = machine.leave(with: DeadlinePassed())
        #expect(leave.resume == nil && leave.cancel == nil)
        #expect(machine.report(to: 1) is DeadlinePassed)
        #expect(machine.start() == .finish)
        #expect(machine.hasLeft)
        #expect(!machine.isCancelledByCaller, "a deadline is not a cancellation")
    }

    @Test func aTaskMadeWhileTheCallerLeftIsCancelledWithoutBeingResumed() {
        var machine = Machine()
        #expect(machine.report(to: 1) == nil)
        #expect(machine.start() == .makeTask)
        #expect(machine.leave(with: CancellationError()).cancel == nil, "no task yet to cancel")
        guard case .cancel("task") = machine.taskMade("task") else {
            Issue.record("a task made after its caller left was resumed")
            return
        }
    }

    @Test func anEarlyStopTellsTheCallerOnceAndLaterEndsDoNotTellItAgain() {
        var machine = Machine()
        #expect(machine.report(to: 1) == nil)
        _ = machine.taskMade("task")
        let stop = machine.stopEarly()
        #expect(stop.resume == 1)
        #expect(stop.cancel == "task")
        #expect(machine.stopEarly().resume == nil)
        #expect(machine.leave(with: CancellationError()).resume == nil)
        #expect(!machine.hasLeft, "a caller told of a stop did not leave")
        #expect(machine.complete() == nil)
    }
}
