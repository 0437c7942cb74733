import Foundation
import Testing

@testable import Courier

/// `URLSessionStreamingExchangeStateMachine` driven directly (head waiter, session and task are plain values): the
/// cancel is final and wins over what has not taken the lock yet, and the head waiter is resumed exactly once.
@Suite struct URLSessionStreamingExchangeStateMachineTests {
    private typealias Machine = URLSessionStreamingExchangeStateMachine<Int, String, String>

    private static func machine(pauseAt: Int? = nil) -> Machine {
        Machine(body: StreamingBuffer(limit: 1 << 20, pauseAt: pauseAt))
    }

    @Test func theHeadGoesToItsWaiterOnceAndTheCompletionFindsNobodyWaiting() {
        var machine = Self.machine()
        #expect((machine.waitForHead(1) as Bool))
        guard case .resume("task") = machine.sessionMade("session", task: "task") else {
            Issue.record("the task was not resumed")
            return
        }
        #expect(machine.headDidArrive() == 1)
        #expect(machine.headDidArrive() == nil, "a second head finds nobody waiting")
        #expect(machine.complete() == nil)
        #expect(machine.headArrived)
        guard case .completed("session") = machine.transfer else {
            Issue.record("expected completed, got \(machine.transfer)")
            return
        }
    }

    @Test func aCancelBeforeTheHeadTellsTheWaiterOnceAndTheLateHeadFindsNobody() {
        var machine = Self.machine()
        #expect((machine.waitForHead(1) as Bool))
        _ = machine.sessionMade("session", task: "task")
        let cancel = machine.cancel()
        #expect(cancel.head == 1)
        #expect(cancel.cancelTask == "task")
        #expect(cancel.invalidate == nil, "a running task is cancelled; its session goes when it completes")
        #expect(machine.headDidArrive() == nil)
        #expect(machine.complete() == nil)
        #expect(machine.cancel().head == nil, "a second cancel tells nobody again")
    }

    @Test func aCancelBeforeTheSessionIsMadeInvalidatesItWithoutStartingTheTask() {
        var machine = Self.machine()
        #expect((machine.waitForHead(1) as Bool))
        let cancel = machine.cancel()
        #expect(cancel.head == 1)
        #expect(cancel.cancelTask == nil && cancel.invalidate == nil)
        guard case .invalidate("session") = machine.sessionMade("session", task: "task") else {
            Issue.record("a session made after the cancel started its task")
            return
        }
        #expect(!(machine.waitForHead(2) as Bool), "a waiter after the cancel is refused")
    }

    @Test func aCancelAfterTheCompletionInvalidatesTheSession() {
        var machine = Self.machine()
        #expect((machine.waitForHead(1) as Bool))
        _ = machine.sessionMade("session", task: "task")
        #expect(machine.complete() == 1, "the completion resumes a head waiter still waiting")
        let cancel = machine.cancel()
        #expect(cancel.head == nil)
        #expect(cancel.cancelTask == nil)
        #expect(cancel.invalidate == "session")
    }

    @Test func aReaderThatDrainsAPausedTransferResumesTheRunningTask() async throws {
        var machine = Self.machine(pauseAt: 4)
        _ = machine.sessionMade("session", task: "task")
        guard case .pause = machine.push(Data(repeating: 1, count: 4)) else {
            Issue.record("four unread bytes did not pause the transfer")
            return
        }
        // A chunk is buffered, so the reader's continuation is not kept: the pull answers at once.
        var resume: String?
        let chunk = try await withCheckedThrowingContinuation { (reader: CheckedContinuation<Data?, any Error>) in
            let (pulled, task) = machine.pull(reader)
            resume = task
            guard case .chunk(let chunk, _) = pulled else { return reader.resume(returning: nil) }
            reader.resume(returning: chunk)
        }
        #expect(chunk?.count == 4)
        #expect(resume == "task", "the drained reader resumes the paused task")
    }
}
