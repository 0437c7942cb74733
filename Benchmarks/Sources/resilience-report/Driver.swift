import BenchmarkSupport
import Courier
import Foundation
import Synchronization

/// One call of a run: when it started (since the run began), how long it took, whether it succeeded.
struct CallRecord: Sendable {
    let index: Int
    let start: Duration
    let latency: Duration
    let succeeded: Bool
    /// Why the call failed; `nil` when it succeeded.
    let failure: FailureKind?
}

/// Counts the attempts of each call (the path names the call) on their way to the transport, hedged copies
/// included: what the origin was asked, even when its port refused the connection.
final class AttemptCounter: HTTPTransport {
    private let base: any HTTPTransport
    private let counts = Mutex([String: Int]())

    init(_ base: any HTTPTransport) { self.base = base }

    func attempts(of path: String) -> Int { counts.withLock { $0[path, default: 0] } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        counts.withLock { $0[request.url.path, default: 0] += 1 }
        return try await base.send(request)
    }

    func send(_ request: TransportRequest, deadline: TransportDeadline) async throws -> TransportResponse {
        counts.withLock { $0[request.url.path, default: 0] += 1 }
        return try await base.send(request, deadline: deadline)
    }
}

/// The result of one scenario and strategy.
struct RunResult: Sendable {
    let scenario: String
    let strategy: String
    let upstreamPerCall: Double
    let successRate: Double
    let p50: Duration?
    let p99: Duration?
    let p999: Duration?
    let recovery: Duration?
    let calls: Int
    /// Why the calls counted for the success rate failed, most frequent first.
    let failures: String
}

enum Driver {
    /// Runs `strategy` through `scenario` at `rate` calls a second: starts calls on a fixed schedule (an open loop),
    /// injects the fault for its phase, waits for every call to end (each is bounded by its attempts' deadlines),
    /// and summarizes.
    static func run(_ scenario: Scenario, _ strategy: Strategy, rate: Int, timeline: Bool) async throws -> RunResult {
        let faulty = FaultSwitch(scenario.lead == .zero)
        let origin = try scenario.makeOrigin(faulty: faulty)
        defer { origin.shutdown() }
        let counter = AttemptCounter(Strategy.makeTransport())
        let client = strategy.makeClient(baseURL: origin.baseURL, transport: counter)
        // Warm up: connections open, the hedging delay learns the origin's latency, the budget has deposits, as in a
        // service that has been running. Not measured.
        for round in 0..<3 {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    group.addTask { _ = try? await client.send(APIRequest<Data>.get("/warm-up/\(round)/\(index)")) }
                }
            }
        }
        let clock = ContinuousClock()
        let began = clock.now
        let total = Int((scenario.total.seconds * Double(rate)).rounded())
        let interval = Duration.seconds(1) / rate

        // The fault's phases, on the same clock as the calls.
        let phases = Task {
            guard scenario.lead > .zero else { return }
            try? await clock.sleep(until: began + scenario.lead)
            faulty.set(true)
            if case .refused = scenario.fault { origin.stopListening() }
            try? await clock.sleep(until: began + scenario.lead + scenario.duration)
            faulty.set(false)
            if case .refused = scenario.fault { try? origin.startListening() }
        }
        let records = await withTaskGroup(of: CallRecord.self) { group in
            for index in 0..<total {
                try? await clock.sleep(until: began + interval * index)
                group.addTask {
                    let start = clock.now
                    var failure: FailureKind?
                    do {
                        _ = try await client.send(APIRequest<Data>.get("/items/\(index)"))
                    } catch {
                        failure = FailureKind(error)
                    }
                    return CallRecord(
                        index: index, start: began.duration(to: start), latency: start.duration(to: clock.now),
                        succeeded: failure == nil, failure: failure)
                }
            }
            var records: [CallRecord] = []
            for await record in group { records.append(record) }
            return records.sorted { $0.index < $1.index }
        }
        await phases.value
        if timeline { printTimeline(records, scenario, strategy) }
        return summarize(records, scenario, strategy, counter: counter)
    }

    /// Prints, for each second of the run, how many of the calls started in it succeeded and why the others failed.
    private static func printTimeline(_ records: [CallRecord], _ scenario: Scenario, _ strategy: Strategy) {
        var line = "  \(scenario.name), \(strategy.rawValue), per second:"
        for second in 0..<Int(scenario.total.seconds.rounded(.up)) {
            let calls = records.filter { Int($0.start.seconds) == second }
            let failures = FailureKind.summary(calls.compactMap(\.failure))
            line += " [\(second) s: ok \(calls.filter(\.succeeded).count); \(failures)]"
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Upstream requests per call and success rate over the calls started during the fault (the whole run when the
    /// fault lasts all of it); latency percentiles over every successful call; recovery from the time the fault
    /// healed to the first quarter second of calls of which at least 95 % succeeded.
    private static func summarize(
        _ records: [CallRecord], _ scenario: Scenario, _ strategy: Strategy, counter: AttemptCounter
    ) -> RunResult {
        let faultEnd = scenario.lead + scenario.duration
        let window = records.filter { $0.start >= scenario.lead && $0.start < faultEnd }
        let attempts = window.reduce(0) { $0 + counter.attempts(of: "/items/\($1.index)") }
        let successes = records.filter(\.succeeded).map(\.latency).sorted()
        func percentile(_ fraction: Double) -> Duration? {
            guard !successes.isEmpty else { return nil }
            let rank = Int((fraction * Double(successes.count)).rounded(.up)) - 1
            return successes[max(0, min(successes.count - 1, rank))]
        }
        var recovery: Duration?
        if scenario.heals {
            let bucket = Duration.milliseconds(250)
            var start = faultEnd
            while start < scenario.total, recovery == nil {
                let calls = records.filter { $0.start >= start && $0.start < start + bucket }
                if !calls.isEmpty, Double(calls.filter(\.succeeded).count) >= 0.95 * Double(calls.count) {
                    recovery = start - faultEnd
                }
                start += bucket
            }
        }
        return RunResult(
            scenario: scenario.name, strategy: strategy.rawValue,
            upstreamPerCall: window.isEmpty ? 0 : Double(attempts) / Double(window.count),
            successRate: window.isEmpty ? 0 : Double(window.filter(\.succeeded).count) / Double(window.count),
            p50: percentile(0.5), p99: percentile(0.99), p999: percentile(0.999), recovery: recovery,
            calls: window.count, failures: FailureKind.summary(window.compactMap(\.failure)))
    }
}
