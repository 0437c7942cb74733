// coalescing-report: the same burst of concurrent callers of one key, through five strategies side by side.
import BenchmarkSupport
import Courier
import Foundation
import MallocInterposerSwift

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n\n\(Options.usage)\n".utf8))
    exit(2)
}
AllocationCounting.start()

/// The upstream of one run: simulated, or a real server through URLSession.
struct Upstream {
    let fetch: @Sendable (String) async throws -> Data
    let calls: () -> Int
    let clientTransport: any HTTPTransport
    let baseURL: URL
}

/// A fresh upstream; the simulated one answers with the sample item's JSON in the decoded variant.
func makeUpstream(_ variant: Variant) -> Upstream {
    if let url = options.upstream {
        let transport = CountingTransport(URLSessionTransport())
        let target = url
        return Upstream(
            fetch: { _ in try await transport.send(TransportRequest(url: target)).body },
            calls: { transport.callCount }, clientTransport: transport, baseURL: url)
    }
    let simulated =
        variant == .decoded
        ? SimulatedUpstream(latency: options.latency, body: SampleItem.json)
        : SimulatedUpstream(latency: options.latency)
    return Upstream(
        fetch: { try await simulated.fetch($0) }, calls: { simulated.callCount },
        clientTransport: SimulatedTransport(upstream: simulated), baseURL: URL(string: "http://simulated.test")!)
}

/// Fresh strategies over a fresh upstream, so counts and in-flight tables never carry over between runs.
///
/// In the decoded variant each baseline's shared work fetches the body and decodes it once, as users write such a
/// coalescer, and every waiter gets the decoded value; without coalescing, each caller decodes its own. Each strategy
/// has one decoder, as Courier has its configuration's.
func makeStrategies(_ upstream: Upstream, _ variant: Variant) -> [Contender] {
    var configuration = APIClient.Configuration(transport: upstream.clientTransport, retryPolicy: .never)
    configuration.timeout = .seconds(120)
    let client = APIClient(baseURL: upstream.baseURL, configuration: configuration)
    let all: [Contender]
    switch variant {
    case .data:
        all = [
            Contender(Uncoalesced(upstream: upstream.fetch)),
            Contender(TaskDictionaryCoalescer(upstream: upstream.fetch)),
            Contender(CancellableCoalescer(upstream: upstream.fetch)),
            Contender(CallbackCoalescer(upstream: upstream.fetch)),
            Contender(CourierStrategy(client: client, value: Data.self)),
        ]
    case .decoded:
        let fetch = upstream.fetch
        func decoding() -> @Sendable (String) async throws -> SampleItem {
            let decoder = JSONDecoder()
            return { key in try decoder.decode(SampleItem.self, from: try await fetch(key)) }
        }
        all = [
            Contender(Uncoalesced(upstream: decoding())),
            Contender(TaskDictionaryCoalescer(upstream: decoding())),
            Contender(CancellableCoalescer(upstream: decoding())),
            Contender(CallbackCoalescer(upstream: decoding())),
            Contender(CourierStrategy(client: client, value: SampleItem.self)),
        ]
    }
    guard let only = options.only else { return all }
    return all.filter { $0.name.lowercased().contains(only) }
}

let key = options.upstream == nil ? "/items/1" : ""
let variants = options.resolvedVariants
let strategyCount = makeStrategies(makeUpstream(.data), .data).count
let latencyText = options.upstream.map { "real server at \($0.absoluteString)" } ?? "\(options.latency) simulated"
progress(
    "coalescing-report: \(options.callerCounts.map(String.init).joined(separator: ", ")) callers, "
        + "\(latencyText), \(options.repetitions) repetitions, "
        + variants.map(\.rawValue).joined(separator: " and "))

let busyCore = options.busyCore ? BusyCore() : nil
if busyCore != nil { progress("one core kept busy by a spinning thread for the whole run") }

// Warm up every strategy once so first-use costs (lazy globals, thread pool growth) stay out of the numbers.
for variant in variants {
    for index in 0..<strategyCount {
        let upstream = makeUpstream(variant)
        _ = await makeStrategies(upstream, variant)[index].measure(
            variant: variant, callers: 100, key: key, upstreamCalls: upstream.calls)
    }
}

var results: [Measurement] = []
let totalRuns = variants.count * options.callerCounts.count * strategyCount * options.repetitions
var finishedRuns = 0
for variant in variants {
    for callers in options.callerCounts {
        for index in 0..<strategyCount {
            var runs: [Measurement] = []
            for _ in 0..<options.repetitions {
                let upstream = makeUpstream(variant)
                let strategy = makeStrategies(upstream, variant)[index]
                runs.append(
                    await strategy.measure(variant: variant, callers: callers, key: key, upstreamCalls: upstream.calls))
                finishedRuns += 1
                progress(
                    String(
                        format: "  [%3d%%] %-7@ %6d callers  %-26@ %8.2f ms, %d upstream",
                        100 * finishedRuns / totalRuns, variant.rawValue as NSString, callers,
                        strategy.name as NSString, runs.last!.wall.milliseconds, runs.last!.upstreamCalls))
            }
            results.append(Report.median(of: runs))
        }
    }
}

var throughput: [Throughput.Result] = []
if let upstream = options.upstream, options.throughputRequests > 0 {
    progress("throughput: \(options.throughputRequests) distinct keys, \(options.throughputConcurrency) in flight")
    throughput = await Throughput.run(
        upstream: upstream, requests: options.throughputRequests, concurrency: options.throughputConcurrency)
    for result in throughput {
        progress(
            String(
                format: "  %-18@ %8.0f req/s  (%d failed)", result.name as NSString, result.perSecond,
                result.failures))
    }
}

if let busyCore { progress("the busy thread spun \(busyCore.stop()) × 65,536 times") }

let report = Report(
    results: results, throughput: throughput, latency: options.upstream == nil ? options.latency : nil,
    source: latencyText + (options.busyCore ? ", one core kept busy" : ""))
print(report.terminalTable())
let directory = options.resolvedOutputDirectory()
let base = "\(directory)/\(options.name)"
do {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    try report.markdown(chart: "\(options.name).svg").write(toFile: "\(base).md", atomically: true, encoding: .utf8)
    try report.svg().write(toFile: "\(base).svg", atomically: true, encoding: .utf8)
    progress("wrote \(base).md and \(base).svg")
} catch {
    progress("could not write the report to \(directory): \(error)")
    exit(1)
}

func progress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
