import Foundation
import Testing

@testable import Courier

/// `IdleTimeoutStateMachine` driven directly: readers and relay tasks are plain numbers, and every transition is
/// checked exactly, including the orders in which a chunk, an expiry and a stop can reach the lock.
@Suite struct IdleTimeoutStateMachineTests {
    private typealias Machine = IdleTimeoutStateMachine<Int, String>

    private struct Timeout: Error, Equatable {}

    /// Reads with `reader`, returning the wait it starts (and checking whether it asks for the relay task).
    private static func startWait(_ machine: inout Machine, reader: Int, startsRelay: Bool) throws -> Machine.Wait {
        guard case .wait(let wait, let startRelay) = machine.read(reader) else {
            throw Failure("the read did not wait")
        }
        #expect(startRelay == startsRelay)
        return wait
    }

    private struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test func aChunkThatReachesTheLockBeforeTheExpiryWinsAndTheStaleExpiryIsDropped() throws {
        var machine = Machine()
        let wait = try Self.startWait(&machine, reader: 1, startsRelay: true)
        #expect(machine.relayStarted("relay") == nil)
        #expect(machine.armed(wait, timer: 7) == nil)
        guard case .resume(1, .success(let chunk?), cancelTimer: 7) = machine.deliver(.success(Data("a".utf8))) else {
            Issue.record("the chunk did not go to the reader with its timer cancelled")
            return
        }
        #expect(chunk == Data("a".utf8))
        guard case .none = machine.expire(wait, with: Timeout()) else {
            Issue.record("an expiry of a wait that is over ended the stream")
            return
        }
        guard case .idle = machine.state else {
            Issue.record("expected idle, got \(machine.state)")
            return
        }
        // The next wait is a new one: the old expiry cannot reach it either.
        let next = try Self.startWait(&machine, reader: 2, startsRelay: false)
        #expect(next != wait)
        guard case .none = machine.expire(wait, with: Timeout()) else {
            Issue.record("an expiry of an earlier wait ended the current one")
            return
        }
        guard case .stop(reader: 2?, timer: nil, relay: "relay"?) = machine.expire(next, with: Timeout()) else {
            Issue.record("the current wait's expiry did not stop the stream")
            return
        }
    }

    @Test func anExpiryThatReachesTheLockFirstFailsTheReaderAndTheChunkIsDropped() throws {
        var machine = Machine()
        let wait = try Self.startWait(&machine, reader: 1, startsRelay: true)
        #expect(machine.relayStarted("relay") == nil)
        #expect(machine.armed(wait, timer: 7) == nil)
        guard case .stop(reader: 1?, timer: 7?, relay: "relay"?) = machine.expire(wait, with: Timeout()) else {
            Issue.record("the expiry did not stop the reader, timer and relay")
            return
        }
        guard case .drop = machine.deliver(.success(Data("late".utf8))) else {
            Issue.record("a chunk after the expiry was delivered")
            return
        }
        guard case .resume(3, .failure(let error)) = machine.read(3) else {
            Issue.record("a read after the expiry did not get its error at once")
            return
        }
        #expect(error as? Timeout == Timeout())
        guard case .none = machine.stop(with: CancellationError()) else {
            Issue.record("a stop after the end did something")
            return
        }
    }

    @Test func aTimerSetAfterItsWaitEndedIsCancelled() throws {
        var machine = Machine()
        let wait = try Self.startWait(&machine, reader: 1, startsRelay: true)
        guard case .resume(1, .success(nil), cancelTimer: nil) = machine.deliver(.success(nil)) else {
            Issue.record("the end did not reach the reader")
            return
        }
        #expect(machine.armed(wait, timer: 9) == 9, "the timer of a wait that is over is handed back to cancel")
        guard case .resume(2, .success(nil)) = machine.read(2) else {
            Issue.record("a read after the end did not get the end")
            return
        }
    }

    @Test func aRelayTaskReportedAfterTheStopIsHandedBackToCancel() throws {
        var machine = Machine()
        _ = try Self.startWait(&machine, reader: 1, startsRelay: true)
        guard case .stop(reader: 1?, timer: nil, relay: nil) = machine.stop(with: CancellationError()) else {
            Issue.record("the stop did not hand back the reader")
            return
        }
        #expect(machine.relayStarted("late relay") == "late relay")
    }

    @Test func aSecondReadBesideAWaitingOneIsRefusedAndTheFirstKeepsWaiting() throws {
        var machine = Machine()
        let wait = try Self.startWait(&machine, reader: 1, startsRelay: true)
        guard case .resume(2, .failure(let error)) = machine.read(2) else {
            Issue.record("the overlapping read was not refused")
            return
        }
        guard case .streamAlreadyRead = error as? APIError else {
            Issue.record("expected streamAlreadyRead, got \(error)")
            return
        }
        guard case .waiting(1, wait, nil) = machine.state else {
            Issue.record("the first reader no longer waits: \(machine.state)")
            return
        }
    }

    @Test func aFailureFromTheSourceEndsTheStreamForEveryLaterRead() throws {
        var machine = Machine()
        _ = try Self.startWait(&machine, reader: 1, startsRelay: true)
        guard case .resume(1, .failure, cancelTimer: nil) = machine.deliver(.failure(Timeout())) else {
            Issue.record("the failure did not reach the reader")
            return
        }
        guard case .resume(2, .failure(let error)) = machine.read(2) else {
            Issue.record("a later read did not get the failure")
            return
        }
        #expect(error as? Timeout == Timeout())
    }
}
