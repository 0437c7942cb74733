import Foundation
import Testing

@testable import Courier

/// Every arithmetic path that takes a configuration value or a header value, called directly with 100,000 seeded
/// random and extreme inputs each (`Int64.max`, `.min`, zero, negatives, infinities, NaN, 30-digit numbers): none
/// traps, and every result is sane.
@Suite(.timeLimit(.minutes(1))) struct SaturationFuzzTests {
    /// Under ThreadSanitizer (about ten times slower, and run for races rather than inputs) a tenth of the cases run.
    static let cases = 100_000 / (ReliabilityKit.isThreadSanitizerActive ? 10 : 1)
    static let limit = Duration.saturationLimit
    static let origin = URL(string: "https://api.example.com/feed")!

    // MARK: Deadlines and Durations

    @Test func deadlinesNeverTrapAndNeverPrecedeNow() {
        var random = SplitMix64(seed: 0xDEAD_0001)
        var violations = Violations()
        for _ in 0..<Self.cases {
            let now = random.duration().saturatedDelay  // time elapsed on the scheduler's clock
            let delay = random.duration()
            let deadline = now.saturatingAdding(delay)
            violations.check(deadline <= Self.limit && deadline >= .zero - Self.limit, "\(now) + \(delay)")
            violations.check(delay < .zero || deadline >= now, "\(now) + \(delay) < now")
            let isExact = delay.saturated == delay && (now + delay).saturated == now + delay
            violations.check(!isExact || deadline == now + delay, "\(now) + \(delay) inexact")
        }
        #expect(violations.found.isEmpty, "\(violations)")
    }

    @Test func durationConversionsNeverTrap() {
        var random = SplitMix64(seed: 0xDEAD_0002)
        var violations = Violations()
        for _ in 0..<Self.cases {
            let duration = random.duration()
            violations.check(duration.timeInterval.isFinite, "\(duration) in seconds")
            violations.check(!duration.formattedSeconds.isEmpty && !duration.formattedMilliseconds.isEmpty, "text")
            let value = random.double()
            for converted in [Duration(saturatingSeconds: value), Duration(saturatingMilliseconds: value)] {
                violations.check(converted <= Self.limit && converted >= .zero - Self.limit, "\(value) → \(converted)")
                violations.check(!value.isNaN || converted == .zero, "NaN → \(converted)")
                violations.check(!(value >= 1) || converted > .zero, "\(value) → \(converted)")
            }
        }
        #expect(violations.found.isEmpty, "\(violations)")
    }

    // MARK: Retries

    @Test func backoffNeverTrapsAndNeverExceedsItsCap() {
        var random = SplitMix64(seed: 0xDEAD_0003)
        var violations = Violations()
        for _ in 0..<Self.cases {
            let policy = RetryPolicy(
                baseDelay: random.duration(), maximumDelay: random.duration(), jitter: random.pick([.none, .full]))
            let attempt = random.integer()
            let delay = policy.backoff(afterAttempt: attempt)
            let cap = min(max(policy.maximumDelay, .zero), Self.limit)
            violations.check(delay >= .zero && delay <= cap, "\(policy.baseDelay), attempt \(attempt): \(delay)")
        }
        #expect(violations.found.isEmpty, "\(violations)")
    }

    @Test func customRetryDelaysAreSaturated() {
        var random = SplitMix64(seed: 0xDEAD_0004)
        let context = RetryContext(
            request: TransportRequest(url: Self.origin), attempt: 1, outcome: .response(.text(503)), now: Date())
        var violations = Violations()
        for _ in 0..<Self.cases {
            let requested = random.duration()
            let policy = RetryPolicy.custom(maxAttempts: 2) { _ in .retry(after: requested) }
            let decision = policy.decision(for: context)
            violations.check(decision == .retry(after: requested.saturatedDelay), "\(requested) → \(decision)")
        }
        #expect(violations.found.isEmpty, "\(violations)")
    }

    @Test func retryAfterNeverTrapsAndIsNeverNegative() {
        var random = SplitMix64(seed: 0xDEAD_0005)
        var violations = Violations()
        for _ in 0..<Self.cases {
            let now = random.date()
            let value = random.chance(50) ? random.decimal() : HTTPDate.format(random.date())
            guard let delay = RetryAfter.delay(in: ["Retry-After": value], now: now) else { continue }
            violations.check(delay >= .zero && delay <= Self.limit, "\(value) at \(now): \(delay)")
        }
        #expect(violations.found.isEmpty, "\(violations)")
    }

    // MARK: Freshness

    @Test func ageHeadersParseToAFiniteNonNegativeValue() {
        var random = SplitMix64(seed: 0xDEAD_0006)
        var violations = Violations()
        for _ in 0..<Self.cases {
            let text = random.decimal()
            let age = Freshness.ageValue([text])
            violations.check(age.isFinite && age >= 0 && age <= 2_147_483_648, "Age: \(text) → \(age)")
        }
        #expect(violations.found.isEmpty, "\(violations)")
    }

    @Test func cacheControlDeltaSecondsSaturate() {
        var random = SplitMix64(seed: 0xDEAD_0007)
        let names = [
            "max-age", "s-maxage", "stale-while-revalidate", "stale-if-error", "max-stale", "min-fresh",
        ]
        let range = 0...CacheControl.maximumDeltaSeconds
        var violations = Violations()
        for _ in 0..<Self.cases {
            let field = "\(random.pick(names))=\(random.decimal())"
            let directives = CacheControl.parse([field])
            var values = [
                directives.maxAge, directives.sMaxAge, directives.staleWhileRevalidate, directives.staleIfError,
                directives.minFresh,
            ]
            if case .seconds(let value) = directives.maxStale { values.append(value) }
            violations.check(values.allSatisfy { $0.map(range.contains) ?? true }, "\(field) → \(directives)")
        }
        #expect(violations.found.isEmpty, "\(violations)")
    }

    @Test func freshnessArithmeticIsNeverNaNOrNegative() {
        var random = SplitMix64(seed: 0xDEAD_0008)
        var violations = Violations()
        for _ in 0..<Self.cases {
            let (date, requestTime, responseTime, now) = (random.date(), random.date(), random.date(), random.date())
            // Parsed values saturate at 2³¹ (see the test above), so these are the largest that reach the arithmetic.
            let maxAge = random.chance(50) ? random.deltaSeconds() : nil
            let lifetime = Freshness.lifetime(
                directives: CacheControl(maxAge: maxAge), expires: random.date(), date: date,
                lastModified: random.date(), statusCode: 200
            ).seconds
            let initial = Freshness.correctedInitialAge(
                ageValue: TimeInterval(random.deltaSeconds()), date: date, requestTime: requestTime,
                responseTime: responseTime)
            let age = Freshness.currentAge(correctedInitialAge: initial, responseTime: responseTime, now: now)
            violations.check(!lifetime.isNaN && lifetime >= 0, "lifetime \(lifetime) from \(date)")
            violations.check(!initial.isNaN && initial >= 0, "initial age \(initial) from \(date), \(responseTime)")
            violations.check(!age.isNaN && age >= initial, "age \(age) at \(now)")
        }
        #expect(violations.found.isEmpty, "\(violations)")
    }

    @Test func servedResponsesCarryAnAgeInRangeAndLookupsNeverTrap() throws {
        var random = SplitMix64(seed: 0xDEAD_0009)
        let request = TransportRequest(url: Self.origin)
        // Parsing a stored response is the slow part and is covered above: a thousand entries, then the lookups.
        let entries = (0..<1_000).map { _ in
            let headers: HeaderFields = [
                "Age": random.decimal(), "Date": HTTPDate.format(random.date()), "ETag": "\"v\"",
                "Cache-Control": "max-age=\(random.decimal()), stale-while-revalidate=\(random.decimal()), "
                    + "stale-if-error=\(random.decimal())",
            ]
            return CachedResponse(
                response: .text(200, headers: headers), request: request, requestTime: random.date(),
                responseTime: random.date())
        }
        var violations = Violations()
        for _ in 0..<Self.cases {
            let entry = random.pick(entries)
            let now = random.date()
            let age = entry.served(at: now).headers["Age"].flatMap { Int($0) }
            violations.check(age.map((0...Int(Int32.max)).contains) ?? false, "Age \(age as Any) at \(now)")
            let directives = CacheControl(
                maxAge: random.chance(30) ? random.deltaSeconds() : nil,
                maxStale: random.chance(30) ? .seconds(random.deltaSeconds()) : nil,
                minFresh: random.chance(30) ? random.deltaSeconds() : nil)
            _ = CacheLookup.decide(
                entry: entry, request: request, directives: directives, policy: .useProtocolPolicy, now: now)
            _ = Freshness.mayServeOnError(entry, at: now)
        }
        #expect(violations.found.isEmpty, "\(violations)")
    }

    // MARK: Credentials

    @Test func renewalDatesStayBetweenNowAndTheExpiry() {
        var random = SplitMix64(seed: 0xDEAD_000A)
        var violations = Violations()
        for _ in 0..<Self.cases {
            // Dates a credential can carry: within ±100,000 years, plus the extremes `Date` offers.
            let now = random.finiteDate()
            let expiry = random.finiteDate()
            let leeway = random.duration()
            let renewal = RefreshState.renewalDate(expiresAt: expiry, installedAt: now, leeway: leeway)
            let isBetween =
                renewal >= min(now, expiry).addingTimeInterval(-1) && renewal <= max(now, expiry).addingTimeInterval(1)
            violations.check(isBetween, "expiry \(expiry), now \(now), leeway \(leeway): \(renewal)")
        }
        #expect(violations.found.isEmpty, "\(violations)")
    }
}

/// The cases that broke a property, kept out of `#expect` so that 100,000 iterations cost one expectation.
struct Violations: CustomStringConvertible {
    private(set) var found: [String] = []
    private var count = 0

    /// Records `describe()` (the first few only) unless `holds`.
    mutating func check(_ holds: Bool, _ describe: @autoclosure () -> String) {
        guard !holds else { return }
        count += 1
        if found.count < 5 { found.append(describe()) }
    }

    var description: String { "\(count) cases, first: \(found)" }
}

/// Random values with the extremes over-represented: a third of the draws come from the edge cases.
extension SplitMix64 {
    private static let extremeDurations: [Duration] = {
        let huge: Duration = .seconds(Int64.max) * 18  // near the top of `Duration`'s 128-bit range
        let limit = Duration.saturationLimit
        let attosecond = Duration(secondsComponent: 0, attosecondsComponent: 1)
        return [
            .zero, .seconds(Int64.max), .seconds(Int64.min), .nanoseconds(Int64.max), .nanoseconds(Int64.min),
            limit, limit + .nanoseconds(1), huge, .zero - huge, attosecond, .zero - attosecond, .seconds(-1),
        ]
    }()

    fileprivate mutating func duration() -> Duration {
        switch int(0...5) {
        case 0: return pick(Self.extremeDurations)
        case 1: return Duration(secondsComponent: Int64(bitPattern: next()), attosecondsComponent: attoseconds())
        case 2: return .seconds(Int64(bitPattern: next()) >> int(0...62))
        default: return .milliseconds(int(-1_000...100_000_000))
        }
    }

    fileprivate mutating func attoseconds() -> Int64 {
        Int64(next() % 1_000_000_000_000_000_000)
    }

    fileprivate mutating func double() -> Double {
        switch int(0...3) {
        case 0:
            return pick([
                0, -0.0, 1, -1, .infinity, -.infinity, .nan, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                .leastNonzeroMagnitude, 1e300, -1e300, 9.2e18, -9.2e18, 9.3e15,
            ])
        case 1: return Double(bitPattern: next())
        default: return Double(int(-1_000_000_000...1_000_000_000)) / Double(int(1...1_000))
        }
    }

    /// Any date, NaN and infinities included: an injected date source may return anything.
    fileprivate mutating func date() -> Date {
        chance(70) ? finiteDate() : Date(timeIntervalSince1970: double())
    }

    fileprivate mutating func finiteDate() -> Date {
        switch int(0...4) {
        case 0: return pick([.distantPast, .distantFuture, Date(timeIntervalSince1970: 0)])
        case 1: return Date(timeIntervalSince1970: Double(int(-3_155_760_000_000...3_155_760_000_000)))
        default: return Date(timeIntervalSince1970: Double(int(1_600_000_000...1_900_000_000)))
        }
    }

    /// Delta-seconds as the parsers leave them: `0 ... 2³¹`, the extremes often.
    fileprivate mutating func deltaSeconds() -> Int {
        chance(30) ? pick([0, 1, CacheControl.maximumDeltaSeconds]) : int(0...CacheControl.maximumDeltaSeconds)
    }

    fileprivate mutating func integer() -> Int {
        chance(30) ? pick([.min, .max, 0, -1, 1, 62, 63, 64, 100]) : int(-10...200)
    }

    /// Header text that is mostly digits: up to 30 of them, sometimes with a sign, spaces or a fraction.
    fileprivate mutating func decimal() -> String {
        let digits = String(
            decoding: (0..<int(0...30)).map { _ in UInt8(ascii: "0") + UInt8(next() % 10) }, as: UTF8.self)
        switch int(0...9) {
        case 0: return "-" + digits
        case 1: return " \(digits) "
        case 2: return digits + ".5"
        case 3: return pick(["99999999999999999999", "2147483648", "9223372036854775807", "18446744073709551616"])
        default: return digits
        }
    }
}
