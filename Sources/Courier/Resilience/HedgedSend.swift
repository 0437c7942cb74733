/// One attempt sent as up to N copies ("hedged"): the first copy at once, another each time the delay passes
/// without an acceptable answer (as long as the budget allows), the first acceptable answer wins and the other
/// copies are cancelled.
///
/// Structured: every copy is a child task of the caller's, so a caller that cancels cancels every copy, and no copy
/// outlives the attempt.
enum HedgedSend {
    private enum Event: Sendable {
        case answered(copy: Int, Result<TransportResponse, any Error>)
        case due
        case timerStopped
    }

    /// Races copies of `send` and returns the first acceptable answer and the number of its copy (1 for the first).
    /// When no copy answers acceptably, the last copy's outcome is returned (or thrown).
    ///
    /// - Parameters:
    ///   - delay: How long to wait for an acceptable answer before the next copy.
    ///   - maxCopies: The most copies, the first included.
    ///   - clock: The clock the delay is measured on.
    ///   - mayHedge: Asked before each copy after the first, with its number: `false` (the budget is spent) sends none.
    ///   - isAcceptable: Whether an answer ends the race.
    ///   - send: Sends copy number `copy`.
    static func race(
        delay: Duration, maxCopies: Int, clock: any Clock<Duration>,
        mayHedge: @escaping @Sendable (Int) -> Bool,
        isAcceptable: @escaping @Sendable (TransportResponse) -> Bool,
        send: @escaping @Sendable (Int) async throws -> TransportResponse
    ) async throws -> (response: TransportResponse, copy: Int) {
        try await withThrowingTaskGroup(of: Event.self) { group in
            func start(_ copy: Int) {
                group.addTask {
                    do {
                        return .answered(copy: copy, .success(try await send(copy)))
                    } catch {
                        return .answered(copy: copy, .failure(error))
                    }
                }
            }
            func arm() {
                group.addTask {
                    do {
                        try await clock.sleep(for: delay)
                        return .due
                    } catch {
                        return .timerStopped
                    }
                }
            }
            start(1)
            var copies = 1
            var running = 1
            if maxCopies > 1 { arm() }
            while let event = try await group.next() {
                switch event {
                case .due where copies < maxCopies && !Task.isCancelled:
                    guard mayHedge(copies + 1) else { continue }
                    copies += 1
                    running += 1
                    start(copies)
                    if copies < maxCopies { arm() }
                case .due, .timerStopped:
                    continue
                case .answered(let copy, let result):
                    running -= 1
                    if case .success(let response) = result, isAcceptable(response) {
                        group.cancelAll()
                        return (response, copy)
                    }
                    guard running == 0 else { continue }
                    group.cancelAll()
                    return (try result.get(), copy)
                }
            }
            // Unreachable: the first copy always answers.
            throw CancellationError()
        }
    }
}
