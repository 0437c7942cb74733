import BenchmarkSupport
import Foundation

/// What the callers of the report receive.
enum Variant: String, CaseIterable {
    /// The body as `Data`: nothing is decoded.
    case data
    /// A `SampleItem` decoded from 221 bytes of JSON. The baselines decode once in their shared task, as users write
    /// them, and every waiter gets that value; Courier is called with `APIRequest<SampleItem>`.
    case decoded
}

/// Command-line options of `coalescing-report`.
struct Options {
    var callerCounts = [1, 10, 100, 1_000, 10_000]
    var latency = Duration.milliseconds(20)
    var repetitions = 3
    var upstream: URL?
    var outputDirectory: String?
    /// With `--upstream`: also compare throughput over distinct keys, raw URLSession against APIClient.
    var throughputRequests = 0
    var throughputConcurrency = 32
    /// Run only the strategies whose name contains this text (case-insensitive), e.g. for profiling.
    var only: String?
    /// The variants to run; `nil` runs both against the simulated upstream and only `data` with `--upstream` (a real
    /// server's body is not a `SampleItem` unless it was set up to serve one).
    var variants: [Variant]?
    /// Write the report into the repository's `Docs/` instead of `Benchmarks/.build/reports/`.
    var writesDocs = false
    /// The file name of the report, without extension.
    var name = "coalescing-report"
    /// Keep one core busy for the whole run (see ``BusyCore``).
    var busyCore = false

    static let usage = """
        usage: coalescing-report [--callers 1,10,100,1000,10000] [--latency-ms 20] [--repetitions 3]
                                 [--variants data,decoded] [--upstream URL [--throughput N] [--concurrency 32]]
                                 [--write-docs | --output DIR] [--name coalescing-report] [--busy-core]

          --callers      concurrent callers of one key, per level
          --latency-ms   simulated upstream latency (ignored with --upstream)
          --repetitions  runs per level and strategy; the median run by wall time is reported
          --upstream     send real requests to this URL through URLSessionTransport (e.g. nginx on loopback)
          --throughput   with --upstream: N requests over distinct keys (?key=i), raw URLSession vs APIClient
          --concurrency  requests in flight at once for --throughput (default 32)
          --only TEXT    run only the strategies whose name contains TEXT (e.g. "courier", for a profiler)
          --variants     what callers receive: data (the body), decoded (a SampleItem; the baselines decode once
                         in their shared task). Default: both, or data with --upstream
          --write-docs   write the report into the repository's Docs/ (to publish it)
          --output       where the Markdown table and SVG chart go (default: Benchmarks/.build/reports/)
          --name         the report's file name without extension (default: coalescing-report)
          --busy-core    keep one core busy for the whole run: a thread outside Swift's task pool spins, so the
                         callers, their tasks and the upstream share what is left (a service under load)
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            func value() throws -> String {
                guard let value = remaining.popFirst() else { throw OptionError("\(flag) needs a value") }
                return value
            }
            switch flag {
            case "--callers":
                let counts = try value().split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard !counts.isEmpty, counts.allSatisfy({ ($0 ?? 0) > 0 }) else {
                    throw OptionError("--callers takes positive integers separated by commas")
                }
                options.callerCounts = counts.compactMap { $0 }
            case "--latency-ms":
                guard let milliseconds = Int(try value()), milliseconds >= 0 else {
                    throw OptionError("--latency-ms takes a non-negative integer")
                }
                options.latency = .milliseconds(milliseconds)
            case "--repetitions":
                guard let count = Int(try value()), count > 0 else { throw OptionError("--repetitions takes n > 0") }
                options.repetitions = count
            case "--upstream":
                let text = try value()
                guard let url = URL(string: text), url.scheme?.hasPrefix("http") == true, url.host != nil else {
                    throw OptionError("--upstream takes an http(s) URL, got \(text)")
                }
                options.upstream = url
            case "--throughput":
                guard let count = Int(try value()), count > 0 else { throw OptionError("--throughput takes n > 0") }
                options.throughputRequests = count
            case "--concurrency":
                guard let count = Int(try value()), count > 0 else { throw OptionError("--concurrency takes n > 0") }
                options.throughputConcurrency = count
            case "--only":
                options.only = try value().lowercased()
            case "--variants":
                let names = try value().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                let variants = names.compactMap(Variant.init(rawValue:))
                guard !variants.isEmpty, variants.count == names.count else {
                    throw OptionError("--variants takes data and/or decoded, separated by commas")
                }
                options.variants = variants
            case "--write-docs":
                options.writesDocs = true
            case "--busy-core":
                options.busyCore = true
            case "--output":
                options.outputDirectory = try value()
            case "--name":
                let name = try value()
                guard !name.isEmpty, !name.contains("/") else { throw OptionError("--name takes a file name") }
                options.name = name
            case "--help", "-h":
                print(usage)
                exit(0)
            default:
                throw OptionError("unknown option \(flag)")
            }
        }
        guard !(options.writesDocs && options.outputDirectory != nil) else {
            throw OptionError("--write-docs and --output name two places; give one")
        }
        return options
    }

    /// The variants this run measures.
    var resolvedVariants: [Variant] {
        variants ?? (upstream == nil ? Variant.allCases : [.data])
    }

    /// Where the files go (see ``ReportDirectory``).
    func resolvedOutputDirectory() -> String {
        ReportDirectory.resolve(output: outputDirectory, writesDocs: writesDocs)
    }
}
