import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `URLSessionExchange` whose completion races its caller's cancellation: the caller gets exactly one outcome, the
/// one that took the lock first, and the connection slot is given back exactly once. Driven through the exchange's
/// own entry points in each order, with no network.
@Suite(.timeLimit(.minutes(1))) struct URLSessionExchangeRaceTests {
    private static let url = URL(string: "http://127.0.0.1:9/race")!

    private static func exchange(finished: Locked<Int>) -> URLSessionExchange {
        URLSessionExchange(
            request: URLRequest(url: url), origin: url, credentialHeaderNames: [], maxResponseBytes: 1 << 20,
            sessionQueue: DispatchQueue(label: "URLSessionExchangeRaceTests")
        ) { finished.withLock { $0 += 1 } }
    }

    private static var ok: HTTPURLResponse {
        HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
    }

    @Test func aCompletionThatComesFirstIsTheOutcomeAndTheLaterCancelChangesNothing() async {
        let finished = Locked(0)
        let exchange = Self.exchange(finished: finished)
        let outcome = await withCheckedContinuation { continuation in
            #expect(exchange.report(to: continuation))
            exchange.completed(data: Data("body".utf8), response: Self.ok, error: nil)
            exchange.leave(with: CancellationError())
        }
        guard case .response(let head, let body, _) = outcome else {
            Issue.record("expected the response, got \(outcome)")
            return
        }
        #expect(head.statusCode == 200)
        #expect(body == Data("body".utf8))
        #expect(finished.withLock { $0 } == 1)
    }

    @Test func aCancelThatComesFirstIsTheOutcomeAndTheLaterCompletionOnlyGivesTheSlotBack() async {
        let finished = Locked(0)
        let exchange = Self.exchange(finished: finished)
        let outcome = await withCheckedContinuation { continuation in
            #expect(exchange.report(to: continuation))
            exchange.leave(with: CancellationError())
            exchange.completed(data: Data("body".utf8), response: Self.ok, error: nil)
        }
        guard case .failure(let error) = outcome else {
            Issue.record("expected the cancellation, got \(outcome)")
            return
        }
        #expect(error is CancellationError)
        #expect(finished.withLock { $0 } == 1)
    }

    @Test func aCallerThatLeftBeforeTheStartIsToldAtOnceAndGivesTheSlotBackWithoutATask() async {
        let finished = Locked(0)
        let exchange = Self.exchange(finished: finished)
        exchange.leave(with: CancellationError())
        let outcome = await withCheckedContinuation { continuation in
            #expect(!exchange.report(to: continuation))
        }
        guard case .failure(let error) = outcome else {
            Issue.record("expected the cancellation, got \(outcome)")
            return
        }
        #expect(error is CancellationError)
        exchange.start {
            Issue.record("a task was made for a caller that left")
            return URLSession(configuration: .ephemeral).dataTask(with: Self.url)
        }
        #expect(finished.withLock { $0 } == 1)
    }

    /// Both orders at once, from two threads, many times: every caller gets exactly one outcome (a checked
    /// continuation traps on a second resume) and every exchange gives its slot back exactly once.
    @Test func completionsAndCancelsRacingFromTwoThreadsTellEachCallerOnceAndFinishEachExchangeOnce() async {
        let rounds = 500
        let finished = Locked(0)
        let outcomes = Locked((responses: 0, cancellations: 0))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<rounds {
                let exchange = Self.exchange(finished: finished)
                group.addTask {
                    let outcome = await withCheckedContinuation { continuation in
                        _ = exchange.report(to: continuation)
                        DispatchQueue.global().async { exchange.leave(with: CancellationError()) }
                        exchange.completed(data: Data("body".utf8), response: Self.ok, error: nil)
                    }
                    outcomes.withLock { counts in
                        if case .response = outcome { counts.responses += 1 } else { counts.cancellations += 1 }
                    }
                }
            }
        }
        let counts = outcomes.withLock { $0 }
        #expect(counts.responses + counts.cancellations == rounds)
        #expect(finished.withLock { $0 } == rounds)
    }
}
