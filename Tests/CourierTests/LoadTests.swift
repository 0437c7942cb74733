import Foundation
import Testing

@testable import Courier

/// Ten thousand concurrent calls through `APIClient` over mixed keys, with cancellations, transport failures,
/// server errors, retries, a token refresh and caching: every call ends, every table is empty afterwards, and
/// resident memory comes back to where it was.
@Suite(.serialized, .timeLimit(.minutes(3))) struct LoadTests {
    /// 10,000 with COURIER_STRESS=1, 2,000 without; a tenth under ThreadSanitizer, which is about ten times slower
    /// and would starve the suites running beside this one (the TSan run looks for races, the plain run for leaks).
    static let calls = ReliabilityKit.size(10_000, quickDivisor: 5)
    static let keys = 500

    /// What one round of calls did.
    struct Round {
        var outcomes: [String: Int] = [:]
        var ended = 0
        var drained = false
        var refreshes = 0
        var cacheCount = 0
        var cacheBytes = 0
        var sends = 0
        /// Whether the client, its transport, cache and refresher were deallocated once the round ended.
        var released = false

        /// Calls that ended with the failure `name`, directly or as the last outcome of a denied retry.
        func failures(named name: String) -> Int {
            outcomes[name, default: 0] + outcomes["retryBudgetExhausted(\(name))", default: 0]
        }
    }

    /// Sends `calls` requests at once over `keys` keys and cancels every tenth caller.
    ///
    /// Key `k` behaves by `k % 10`: 0 throws a connection loss (retried once, then fails), 1 answers 500
    /// (retried once, then fails), 2 answers a cacheable 200, the rest an uncacheable 8 KiB 200. Every first
    /// attempt carries a token the server refuses, so the round starts with exactly one refresh.
    static func round(calls: Int = calls) async -> Round {
        let (round, isReleased) = await run(calls: calls)
        var result = round
        result.released = isReleased()
        return result
    }

    /// One round, and a check that everything it made is gone (to be called after the round's scope ended).
    private static func run(calls: Int) async -> (Round, () -> Bool) {
        let body = Data(repeating: UInt8(ascii: "x"), count: 8 << 10)
        let transport = MockTransport { request, _ in
            for _ in 0..<3 { await Task.yield() }  // Keep flights open long enough for joiners and cancellations.
            guard request.headers["Authorization"] == "Bearer secret-load-1" else { return .text(401) }
            let key = Int(request.url.lastPathComponent) ?? 0
            switch key % 10 {
            case 0: throw APIError.transport(.connectionLost, underlying: URLError(.networkConnectionLost))
            case 1: return .text(500, "down")
            case 2: return TransportResponse(statusCode: 200, headers: ["Cache-Control": "max-age=600"], body: body)
            default: return TransportResponse(statusCode: 200, body: body)
            }
        }
        let refresher = TokenRefresher(credential: Credential(accessToken: "secret-load-0", identity: "load")) {
            old in Credential(accessToken: "secret-load-1", identity: old?.identity ?? "load")
        }
        let cache = ResponseCache(maxEntries: 40, maxBytes: 256 << 10)
        var configuration = APIClient.Configuration(
            transport: transport, cache: cache, retryPolicy: RetryPolicy(maxAttempts: 2, jitter: .none),
            authenticator: refresher, timeout: .seconds(3600), clock: SkippingClock())
        // The breaker still counts every outcome, but never opens: which share of the failing keys it would turn
        // into `circuitOpen` depends on how the round's tasks interleave (68 to all 400 of a round's failures were
        // seen), and the round counts the failures the transport made.
        configuration.resilience.circuitBreaker?.minimumThroughput = .max
        let client = APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration)

        let tasks = (0..<calls).map { index in
            let task = Task { () -> String in
                do {
                    let response = try await client.send(APIRequest<Data>.get("/items/\(index % keys)"))
                    return response.value.count == body.count ? "success (\(response.source))" : "wrong body"
                } catch {
                    return ReliabilityKit.name(of: error)
                }
            }
            if index % 10 == 9 { task.cancel() }
            return task
        }
        var round = Round()
        for task in tasks {
            round.outcomes[await task.value, default: 0] += 1
            round.ended += 1
        }
        round.drained = await ReliabilityKit.expectDrained(client)
        round.refreshes = await refresher.refreshCount
        round.cacheCount = await cache.count
        round.cacheBytes = await cache.totalBytes
        round.sends = transport.callCount
        return (
            round,
            { [weak client, weak transport, weak cache, weak refresher] in
                client == nil && transport == nil && cache == nil && refresher == nil
            }
        )
    }

    @Test func tenThousandConcurrentCallsEndAndLeaveNothingBehind() async throws {
        // Under ThreadSanitizer one round is enough (it is ~10x slower) and its allocator makes resident memory
        // meaningless, so memory is only checked without it.
        let sanitized = ReliabilityKit.isThreadSanitizerActive
        if !sanitized { _ = await Self.round() }  // Warm up: runtime caches, pool threads, allocator arenas.
        ReliabilityKit.returnFreedMemory()
        let baseline = sanitized ? nil : ReliabilityKit.residentBytes()

        var rounds: [Round] = []
        var resident: [Int] = []
        for _ in 0..<(sanitized ? 1 : 3) {
            rounds.append(await Self.round())
            ReliabilityKit.returnFreedMemory()
            resident.append(ReliabilityKit.residentBytes() ?? 0)
        }

        for round in rounds {
            #expect(round.ended == Self.calls)
            #expect(round.outcomes.values.reduce(0, +) == Self.calls)
            #expect(round.outcomes["wrong body", default: 0] == 0)
            #expect(round.drained)
            #expect(round.released)
            #expect(round.refreshes == 1)
            #expect(round.cacheCount <= 40)
            #expect(round.cacheBytes <= 256 << 10)
            #expect(round.outcomes["cancelled", default: 0] >= 1)
            // A failure ends the call itself, or as the last outcome of a retry the budget denied: on `SkippingClock`
            // each skipped retry delay moves time on, and a slow run (the whole suite at once) can move it past the
            // window that holds the round's deposits.
            #expect(round.failures(named: "transport(.connectionLost)") >= 1)
            #expect(round.failures(named: "unacceptableStatus(500)") >= 1)
        }
        let megabyte = 1 << 20
        // Tolerance: glibc keeps fragmented arenas after `malloc_trim` (alone, three rounds after the warm-up grow
        // ~20 MiB, less each round, while every client, transport and cache is deallocated), and the other suites
        // allocate in this process at the same time (a 10 MiB body, fuzz clients).
        let tolerance = 64 * megabyte
        var growth = 0
        if let baseline {
            growth = (resident.last ?? baseline) - baseline
            #expect(growth < tolerance, "resident memory grew \(growth / megabyte) MiB over 3 rounds")
        }
        let first = rounds[0]
        let summary = first.outcomes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }
            .joined(separator: ", ")
        ReliabilityKit.record(
            "load",
            "\(Self.calls) concurrent calls over 500 keys (every 10th cancelled; connection losses, 500s, "
                + "one 401 refresh, cacheable and uncacheable 200s), \(rounds.count) rounds",
            cases: Self.calls * rounds.count,
            outcome: "all ended; round 1: \(summary); \(first.sends) transport sends, 1 refresh, "
                + "\(first.cacheCount) cache entries (max 40); tables empty; resident memory "
                + "\((baseline ?? 0) / megabyte) MiB before, \(resident.map { "\($0 / megabyte)" }.joined(separator: "/")) "
                + "MiB after each round (growth \(growth / megabyte) MiB, tolerance 64)"
                + (sanitized ? " [under TSan: 1,000 calls, 1 round, memory not measured]" : "")
                + "; every object released",
            leaked: !rounds.allSatisfy { $0.drained && $0.released } || growth >= tolerance)
    }
}
