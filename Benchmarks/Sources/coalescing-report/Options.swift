import Foundation

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

    static let usage = """
        usage: coalescing-report [--callers 1,10,100,1000,10000] [--latency-ms 20] [--repetitions 3]
                                 [--upstream URL [--throughput N] [--concurrency 32]] [--output DIR]

          --callers      concurrent callers of one key, per level
          --latency-ms   simulated upstream latency (ignored with --upstream)
          --repetitions  runs per level and strategy; the median run by wall time is reported
          --upstream     send real requests to this URL through URLSessionTransport (e.g. nginx on loopback)
          --throughput   with --upstream: N requests over distinct keys (?key=i), raw URLSession vs APIClient
          --concurrency  requests in flight at once for --throughput (default 32)
          --only TEXT    run only the strategies whose name contains TEXT (e.g. "courier", for a profiler)
          --output       where the Markdown table and SVG chart go (default: the repository's Docs/)
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
            case "--output":
                options.outputDirectory = try value()
            case "--help", "-h":
                print(usage)
                exit(0)
            default:
                throw OptionError("unknown option \(flag)")
            }
        }
        return options
    }

    /// The repository's `Docs/` folder, found from the working directory (the repository root or `Benchmarks/`).
    func resolvedOutputDirectory() -> String {
        if let outputDirectory { return outputDirectory }
        let manager = FileManager.default
        for candidate in ["Docs", "../Docs"] where manager.fileExists(atPath: candidate) {
            return candidate
        }
        return "."
    }
}

struct OptionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
