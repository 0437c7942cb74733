import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tools for the reliability suites (faults, fuzzing, load, security, interop): a seeded random number
/// generator, leak checks for every internal table, a clock that skips short sleeps, resident memory, and
/// the run summary that `Scripts/reliability-report.sh` turns into `Docs/Reliability.md`.
enum ReliabilityKit {
    typealias SplitMix64 = CourierTests.SplitMix64

    /// FNV-1a over UTF-8: a stable digest of a run's outcomes, to compare two runs of the same seed.
    struct Digest: Equatable, CustomStringConvertible {
        private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325
        private(set) var count = 0

        mutating func add(_ text: String) {
            for byte in text.utf8 {
                value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
            value = (value ^ 0xFF) &* 0x0000_0100_0000_01B3
            count += 1
        }

        var description: String { "\(count) outcomes, digest \(String(value, radix: 16))" }
    }

    // MARK: Waiting

    /// Polls `condition` until it holds, yielding, and pausing a millisecond every thousand polls; gives up
    /// after about `seconds` of wall time. For conditions that depend on real sockets and threads (a retry's
    /// sleep starts only after the server answered), where a pure yield loop can run out before the kernel
    /// delivers; the pauses wait for the network, they never stand in for the time being tested.
    static func poll(seconds: Int = 20, _ condition: () async -> Bool) async -> Bool {
        for round in 0..<(seconds * 1_000) {
            for _ in 0..<1_000 {
                if await condition() { return true }
                await Task.yield()
            }
            if round % 10 == 0, Task.isCancelled { break }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return await condition()
    }

    // MARK: Leak Checks

    /// Expects that `client` holds nothing: no flight and no waiter in its coalescer, no waiter on its
    /// refresher, no background refresh running; and that its cache holds at most `cacheEntries` entries
    /// (when given) and agrees with itself. Polls in a bounded loop: tables drain right after the last
    /// caller is resumed.
    ///
    /// - Returns: Whether everything drained, for the run summary.
    @discardableResult
    static func expectDrained(
        _ client: APIClient, cacheEntries: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> Bool {
        await client.backgroundRefreshes.waitUntilIdle()
        let coalescer = client.coalescer
        let drained = await CoalescerTestKit.eventually {
            let flights = await coalescer.flightCount
            let waiters = await coalescer.waiterCount
            return flights == 0 && waiters == 0
        }
        #expect(drained, "the coalescer kept a flight or a waiter", sourceLocation: sourceLocation)
        var clean = drained
        if let refresher = client.configuration.authenticator {
            let idle = await refresher.waiterCount == 0
            #expect(idle, "the refresher kept a waiter", sourceLocation: sourceLocation)
            clean = clean && idle
        }
        if let cache = client.configuration.cache {
            let consistent = await cache.isConsistent
            #expect(consistent, sourceLocation: sourceLocation)
            clean = clean && consistent
            if let cacheEntries {
                let count = await cache.count
                #expect(count == cacheEntries, "cache entries", sourceLocation: sourceLocation)
                clean = clean && count == cacheEntries
            }
        }
        return clean
    }

    /// The case an ``APIError`` is, as a short name for summaries and digests.
    static func name(of error: any Error) -> String {
        guard let error = error as? APIError else {
            return error is CancellationError ? "cancelled" : "\(type(of: error))"
        }
        switch error {
        case .invalidRequest(let reason):
            switch reason {
            case .invalidURL: return "invalidRequest(invalidURL)"
            case .invalidPath: return "invalidRequest(invalidPath)"
            case .invalidHeaderName: return "invalidRequest(invalidHeaderName)"
            case .invalidHeaderValue: return "invalidRequest(invalidHeaderValue)"
            case .invalidMethod: return "invalidRequest(invalidMethod)"
            case .bodyNotReplayable: return "invalidRequest(bodyNotReplayable)"
            case .credentialsOverCleartext: return "invalidRequest(credentialsOverCleartext)"
            case .invalidMultipartForm: return "invalidRequest(invalidMultipartForm)"
            case .bodyLengthMismatch: return "invalidRequest(bodyLengthMismatch)"
            }
        case .encodingFailed: return "encodingFailed"
        case .adapterFailed: return "adapterFailed"
        case .transport(let failure, _): return "transport(.\(failure.rawValue))"
        case .timedOut: return "timedOut"
        case .unacceptableStatus(let response): return "unacceptableStatus(\(response.statusCode))"
        case .decodingFailed: return "decodingFailed"
        case .invalidResponse: return "invalidResponse"
        case .responseTooLarge: return "responseTooLarge"
        case .notCached: return "notCached"
        case .unauthorized: return "unauthorized"
        case .authenticationFailed: return "authenticationFailed"
        case .fileAccess(let failure): return "fileAccess(\(failure.operation.rawValue))"
        case .superseded: return "superseded"
        case .streamAlreadyRead: return "streamAlreadyRead"
        case .retryBudgetExhausted(let last): return "retryBudgetExhausted(\(name(of: last)))"
        case .circuitOpen: return "circuitOpen"
        case .shed: return "shed"
        }
    }

    // MARK: Sizes

    /// Whether the stress, soak and fuzz suites run at full size: only when `COURIER_STRESS=1` (CI, and
    /// `Scripts/reliability-report.sh`, set it). Without it they run a fraction of their cases, so that `swift test`
    /// stays quick; what they check is the same.
    static let isFullSize = ProcessInfo.processInfo.environment["COURIER_STRESS"] == "1"

    /// `full` when ``isFullSize``, a `divisor`-th of it (at least 1) otherwise, and a tenth of either under
    /// ThreadSanitizer, which is about ten times slower and looks for races rather than inputs.
    static func size(_ full: Int, quickDivisor divisor: Int) -> Int {
        let size = isFullSize ? full : max(1, full / divisor)
        return isThreadSanitizerActive ? max(1, size / 10) : size
    }

    // MARK: Memory

    /// Whether this process runs under ThreadSanitizer (its runtime exports `__tsan_init`).
    static var isThreadSanitizerActive: Bool {
        #if canImport(Glibc)
            return dlsym(nil, "__tsan_init") != nil
        #else
            return false
        #endif
    }

    /// The resident set size of this process in bytes, from `/proc/self/statm` (Linux); `nil` elsewhere.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Gives freed heap memory back to the system where the allocator keeps it (glibc), so that resident
    /// memory measures what is still allocated rather than what the allocator cached.
    static func returnFreedMemory() {
        #if canImport(Glibc)
            // `malloc_trim` is glibc's and not in the Glibc module map: look it up (RTLD_DEFAULT is null).
            typealias Trim = @convention(c) (Int) -> Int32
            guard let symbol = dlsym(nil, "malloc_trim") else { return }
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }

    // MARK: Run Summary

    /// One line of the reliability table.
    struct Row: Sendable {
        let area: String
        let fault: String
        let cases: Int
        let outcome: String
        let leaked: Bool
    }

    private static let summaryLock = Locked(0)

    /// Appends `row` to `$COURIER_RELIABILITY_SUMMARY` (a tab-separated file) when the variable is set;
    /// `Scripts/reliability-report.sh` sets it and renders the file as `Docs/Reliability.md`.
    static func record(
        _ area: String, _ fault: String, cases: Int, outcome: String, leaked: Bool = false
    ) {
        guard let path = ProcessInfo.processInfo.environment["COURIER_RELIABILITY_SUMMARY"] else { return }
        let clean = { (text: String) in text.replacingOccurrences(of: "\t", with: " ") }
        let line =
            [area, fault, String(cases), outcome, leaked ? "LEAKED" : "none"].map(clean)
            .joined(separator: "\t") + "\n"
        summaryLock.withLock { _ in
            if !FileManager.default.fileExists(atPath: path) {
                _ = FileManager.default.createFile(atPath: path, contents: nil)
            }
            guard let handle = FileHandle(forWritingAtPath: path) else { return }
            defer { try? handle.close() }
            _ = try? handle.seekToEnd()
            try? handle.write(contentsOf: Data(line.utf8))
        }
    }
}

/// A clock on which every sleep shorter than `horizon` ends at once (time jumps forward) and every longer
/// one waits until it is cancelled. Retry delays (at most a minute) then cost nothing, while the per-attempt
/// deadline (set longer than the horizon) never fires: randomized tests run retries without real time.
final class SkippingClock: Clock, Sendable {
    typealias Instant = TestClock.Instant

    private let offset = Locked(Duration.zero)
    private let sleeps = Locked<[Duration]>([])
    let horizon: Duration

    init(horizon: Duration = .seconds(120)) {
        self.horizon = horizon
    }

    var now: Instant { Instant(offset: offset.withLock { $0 }) }
    var minimumResolution: Duration { .zero }

    /// Every skipped sleep, in order.
    var skippedSleeps: [Duration] { sleeps.withLock { $0 } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let duration = now.duration(to: deadline)
        guard duration >= horizon else {
            try Task.checkCancellation()
            sleeps.withLock { $0.append(duration) }
            offset.withLock { $0 = max($0, deadline.offset) }
            return
        }
        let gate = CoalescerTestKit.Gate()
        _ = await gate.wait()  // Never opened: returns when the sleeping task is cancelled.
        throw CancellationError()
    }
}
