import Foundation
import Testing

@testable import Courier

/// Randomized bad input, from a seeded SplitMix64 generator: header values through the parsers, and whole
/// responses and paths through `APIClient` (a second request per case exercises the cache). Nothing may crash
/// or hang, and a second run with the same seed must produce the same outcomes.
@Suite(.timeLimit(.minutes(2))) struct FuzzTests {
    static let seed: UInt64 = 0xC0FFEE_2024
    // Full size with COURIER_STRESS=1, a fifth without, a tenth of that under ThreadSanitizer
    // (ReliabilityKit.size).
    /// Generated values per header class through the parsers.
    static let valuesPerClass = ReliabilityKit.size(2_000, quickDivisor: 5)
    /// Generated responses through the client.
    static let clientCases = ReliabilityKit.size(2_500, quickDivisor: 5)
    /// Generated paths and URLs through the client.
    static let urlCases = ReliabilityKit.size(2_500, quickDivisor: 5)

    // MARK: Generators

    /// Fragments that tend to break header parsers: separators, quotes, escapes, signs, huge numbers,
    /// control characters, non-ASCII, and pieces of valid syntax.
    private static let noise = [
        ",", ";", "=", "\"", "\\", " ", "\t", "-", "+", "0", "00", "-1", "1.5", "2147483648", "99999999999999999999",
        "\u{0}", "\u{7F}", "é", "🦊", "\r", "\n", "*", "W/", "GMT", "UTC", "Mon", "Feb", "30", "24:00:00", "", "=\"",
        "max-age", "no-store", "no-cache", "private", "public", "must-revalidate", "s-maxage", "stale-if-error",
        "stale-while-revalidate", "immutable", "Bearer", "realm", "error", "Basic", "Accept", "Authorization",
    ]

    private static func noise(_ random: inout ReliabilityKit.SplitMix64, pieces: ClosedRange<Int> = 1...6) -> String {
        (0..<random.int(pieces)).map { _ in random.pick(noise) }.joined()
    }

    private static func number(_ random: inout ReliabilityKit.SplitMix64) -> String {
        random.pick(["0", "1", "60", "600", "86400", "-5", "2147483647", "2147483648", "1e3", "0x10", " 7 ", ""])
    }

    private static func date(_ random: inout ReliabilityKit.SplitMix64) -> String {
        let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "Xyz", "monday", "Sunday"]
        let months = ["Jan", "Feb", "Mar", "Dec", "jan", "Foo", "13"]
        let day = random.pick(["01", "29", "30", "31", "00", "99", "1", ""])
        let year = random.pick(["2024", "1970", "0000", "9999", "99", "70", "-100", "20240"])
        let time = random.pick(["00:00:00", "23:59:59", "24:00:00", "23:60:61", "1:2:3", "::"])
        switch random.int(0...4) {
        case 0: return "\(random.pick(days)), \(day) \(random.pick(months)) \(year) \(time) GMT"
        case 1: return "\(random.pick(days)), \(day)-\(random.pick(months))-\(year.suffix(2)) \(time) GMT"
        case 2: return "\(random.pick(days)) \(random.pick(months)) \(day) \(time) \(year)"
        case 3:
            return HTTPDate.format(Date(timeIntervalSince1970: Double(random.int(-10_000_000_000...10_000_000_000))))
        default: return noise(&random)
        }
    }

    /// One value of a header class.
    static func value(_ name: String, _ random: inout ReliabilityKit.SplitMix64) -> String {
        guard !random.chance(15) else { return noise(&random, pieces: 0...12) }
        switch name {
        case "Cache-Control":
            let directives = [
                "max-age", "s-maxage", "no-cache", "no-store", "private", "public", "must-revalidate",
                "stale-while-revalidate", "stale-if-error", "immutable", "max-stale", "min-fresh", "x-ext", "MAX-AGE",
            ]
            return (0..<random.int(1...4)).map { _ in
                let directive = random.pick(directives)
                switch random.int(0...3) {
                case 0: return directive
                case 1: return "\(directive)=\(number(&random))"
                case 2: return "\(directive)=\"\(noise(&random))\""
                default: return "\(directive)\(noise(&random, pieces: 1...2))"
                }
            }.joined(separator: random.pick([", ", ",", " , ", ";"]))
        case "ETag":
            return random.pick(["\"", "W/\"", "", "w/\""]) + noise(&random, pieces: 0...3) + random.pick(["\"", ""])
        case "Date", "Expires":
            return random.chance(10) ? random.pick(["0", "-1", "never"]) : date(&random)
        case "Age":
            return random.chance(20) ? "\(number(&random)), \(number(&random))" : number(&random)
        case "Retry-After":
            return random.chance(50) ? number(&random) : date(&random)
        case "Vary":
            let names = ["Accept", "accept", "*", "Accept-Language", "X-Tenant", "Authorization", "", " "]
            return (0..<random.int(1...3)).map { _ in random.pick(names) }.joined(separator: random.pick([", ", ","]))
        default:  // WWW-Authenticate
            let schemes = ["Bearer", "Basic", "Digest", "Negotiate", "", "bearer"]
            let parameters = [
                "realm=\"api\"", "error=\"invalid_token\"", "error=", "scope=\"a b\"", "=", "realm=\"\\\"",
            ]
            return random.pick(schemes) + " "
                + (0..<random.int(0...3)).map { _ in random.pick(parameters) }.joined(separator: ", ")
        }
    }

    static let headerClasses = [
        "Cache-Control", "ETag", "Date", "Expires", "Age", "Retry-After", "Vary", "WWW-Authenticate",
    ]

    /// A path or URL a caller might pass by mistake, or an attacker on purpose.
    static func path(_ random: inout ReliabilityKit.SplitMix64) -> String {
        let pieces = [
            "/", "//", "users", "42", "..", ".", "%", "%2", "%zz", "%41", "?", "#", "&", "=", " ", "\t", "\n", "\u{0}",
            "é", "🦊", "http://", "https://", "://", "ftp://", "javascript:", "@", ":", "[", "]", "::1", "evil.com",
            "127.0.0.1:8080", "\\", "|", "^", "{", "}", "a b", "~user", "+",
        ]
        return (0..<random.int(0...8)).map { _ in random.pick(pieces) }.joined()
    }

    // MARK: Parsers

    /// Runs every parser on `valuesPerClass` values of each class and returns the outcomes' digest.
    static func parserRun(seed: UInt64) -> (digest: ReliabilityKit.Digest, perClass: [String: Int]) {
        var random = ReliabilityKit.SplitMix64(seed: seed)
        var digest = ReliabilityKit.Digest()
        var perClass: [String: Int] = [:]
        let now = Date(timeIntervalSince1970: 1_704_067_200)
        let request = TransportRequest(method: .get, url: URL(string: "https://api.example.com/a")!, headers: [:])
        for name in headerClasses {
            for _ in 0..<valuesPerClass {
                let value = value(name, &random)
                var outcome: [String] = []
                switch name {
                case "Cache-Control":
                    // Dictionaries are seeded per instance: print the extensions sorted, the rest as is.
                    var directives = CacheControl(parsing: value)
                    let extensions = directives.extensions.map { "\($0.key)=\($0.value ?? "nil")" }.sorted()
                    directives.extensions = [:]
                    outcome.append("\(directives) \(extensions)")
                case "Date", "Expires":
                    outcome.append("\(HTTPDate.parse(value, now: now)?.timeIntervalSince1970 ?? .nan)")
                case "Age":
                    outcome.append("\(Freshness.ageValue([value]))")
                case "Retry-After":
                    let delay = RetryAfter.delay(in: ["Retry-After": value], now: now)
                    let context = RetryContext(
                        request: request, attempt: 1, outcome: .response(.text(503, headers: ["Retry-After": value])),
                        now: now)
                    outcome.append("\(String(describing: delay)) \(RetryPolicy(jitter: .none).decision(for: context))")
                default:
                    break
                }
                // Every class also goes through the cache's parse of a whole response.
                let response = TransportResponse.text(200, "{}", headers: [name: value, "Cache-Control": "max-age=1"])
                let entry = CachedResponse(response: response, request: request, requestTime: now, responseTime: now)
                outcome.append(
                    "\(entry.freshnessLifetime) \(entry.age(at: now)) \(entry.etag ?? "-") \(entry.varyNames) "
                        + "\(entry.variesOnEverything) \(Freshness.isStorable(entry, requestDirectives: CacheControl()))"
                )
                digest.add(outcome.joined(separator: "|"))
                perClass[name, default: 0] += 1
            }
        }
        return (digest, perClass)
    }

    @Test func sixteenThousandHeaderValuesThroughTheParsersAreDeterministic() {
        let first = Self.parserRun(seed: Self.seed)
        let second = Self.parserRun(seed: Self.seed)
        #expect(first.digest == second.digest)
        #expect(first.digest.count == Self.headerClasses.count * Self.valuesPerClass)
        for name in Self.headerClasses {
            ReliabilityKit.record(
                "bad input", "\(name) values through its parser and CachedResponse", cases: first.perClass[name] ?? 0,
                outcome: "no crash, no hang; two runs of seed \(String(Self.seed, radix: 16)) identical")
        }
    }

    // MARK: Through the Client

    /// What one client run saw, per outcome name.
    struct ClientRun: Equatable {
        var digest = ReliabilityKit.Digest()
        var outcomes: [String: Int] = [:]
        var leaked = false

        /// Adds `outcome` to the digest, and counts it by its part before ` | ` (the details stay out).
        mutating func note(_ outcome: String) {
            digest.add(outcome)
            let kind = outcome.components(separatedBy: " | ")[0]
            outcomes[kind, default: 0] += 1
        }
    }

    /// Sends `GET /r/<case>` twice per case; the server answers with generated headers (200, 304, 401 or 503).
    static func clientRun(seed: UInt64) async -> ClientRun {
        var random = ReliabilityKit.SplitMix64(seed: seed)
        var run = ClientRun()
        for index in 0..<clientCases {
            var headers: HeaderFields = [:]
            for name in headerClasses where random.chance(60) { headers.add(name: name, value: value(name, &random)) }
            let statuses = [random.pick([200, 200, 200, 203, 301, 401, 404, 503]), random.pick([200, 304, 503, 401])]
            let plan = Locked(statuses)
            let responseHeaders = headers
            let transport = MockTransport { _, _ in
                let status = plan.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
                return TransportResponse(statusCode: status, headers: responseHeaders, body: Data(#"{"i":1}"#.utf8))
            }
            let clock = SkippingClock()
            let refresher = TokenRefresher(credential: Credential(accessToken: "secret-fuzz-0", identity: "fuzz")) {
                old in Credential(accessToken: "secret-fuzz-1", identity: old?.identity ?? "fuzz")
            }
            let client = APIClient(
                baseURL: URL(string: "https://api.example.com")!,
                configuration: .init(
                    transport: transport, cache: ResponseCache(maxEntries: 4), retryPolicy: RetryPolicy(jitter: .none),
                    authenticator: refresher, timeout: .seconds(3600), clock: clock,
                    currentDate: { Date(timeIntervalSince1970: 1_704_067_200) }))
            var results: [String] = []
            for _ in 0..<2 {
                do {
                    let response = try await client.send(APIRequest<Data>.get("/r/\(index)"))
                    results.append("\(response.statusCode) \(response.source)")
                } catch {
                    results.append(ReliabilityKit.name(of: error))
                }
            }
            // A stale-while-revalidate answer leaves a refresh running: wait, so the counts below are final.
            await client.backgroundRefreshes.waitUntilIdle()
            let outcome =
                results.joined(separator: " → ")
                + " | case \(index) sends=\(transport.callCount) sleeps=\(clock.skippedSleeps)"
            run.note(outcome)
            let coalescer = client.coalescer
            let flights = await coalescer.flightCount
            let waiters = await coalescer.waiterCount
            let refreshWaiters = await refresher.waiterCount
            if flights != 0 || waiters != 0 || refreshWaiters != 0 { run.leaked = true }
        }
        return run
    }

    @Test func thousandsOfGeneratedResponsesThroughTheClientAreDeterministic() async {
        let first = await Self.clientRun(seed: Self.seed)
        let second = await Self.clientRun(seed: Self.seed)
        #expect(first == second)
        #expect(first.digest.count == Self.clientCases)
        #expect(!first.leaked)
        ReliabilityKit.record(
            "bad input",
            "responses with generated Cache-Control/ETag/Date/Expires/Age/Retry-After/Vary/"
                + "WWW-Authenticate (statuses 200/203/301/304/401/404/503), each GET sent twice",
            cases: Self.clientCases,
            outcome: "no crash, no hang, identical twice; " + Self.summary(first.outcomes), leaked: first.leaked)
    }

    /// Sends generated paths and absolute URLs; anything sent must stay on the base URL's host unless the
    /// caller passed an absolute http(s) URL.
    static func urlRun(seed: UInt64) async -> ClientRun {
        var random = ReliabilityKit.SplitMix64(seed: seed)
        var run = ClientRun()
        let transport = MockTransport { request, _ in .text(200, request.url.absoluteString) }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com/v1")!,
            configuration: .init(transport: transport, cache: ResponseCache(maxEntries: 8), retryPolicy: .never))
        for _ in 0..<urlCases {
            let path = path(&random)
            let query = random.chance(30) ? [URLQueryItem(name: path, value: path)] : []
            do {
                let response = try await client.send(APIRequest<Data>.get(path, query: query))
                let host = response.url.host ?? "?"
                let absolute = path.lowercased().hasPrefix("http://") || path.lowercased().hasPrefix("https://")
                if host != "api.example.com" && !absolute { run.leaked = true }
                run.note("sent to \(host == "api.example.com" ? "the base host" : "an absolute URL's host") | \(host)")
            } catch {
                run.note(ReliabilityKit.name(of: error))
            }
        }
        if await client.coalescer.flightCount != 0 { run.leaked = true }
        return run
    }

    @Test func malformedPathsAndURLsEndInAClearErrorOrStayOnTheirHost() async {
        let first = await Self.urlRun(seed: Self.seed)
        let second = await Self.urlRun(seed: Self.seed)
        #expect(first == second)
        #expect(first.digest.count == Self.urlCases)
        #expect(!first.leaked)
        ReliabilityKit.record(
            "bad input", "generated paths and absolute URLs (%, %zz, spaces, controls, emoji, schemes, @, ..)",
            cases: Self.urlCases, outcome: "no crash, identical twice; " + Self.summary(first.outcomes),
            leaked: first.leaked)
    }

    /// The most frequent outcomes with their counts, and how many cases the rest add up to.
    private static func summary(_ outcomes: [String: Int], top: Int = 8) -> String {
        let sorted = outcomes.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        let rest = sorted.dropFirst(top).reduce(0) { $0 + $1.value }
        let shown = sorted.prefix(top).map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
        return rest == 0 ? shown : shown + ", \(rest) others in \(sorted.count - top) kinds"
    }
}
