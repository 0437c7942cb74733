import Foundation

/// The command line: where the server is and how much to send.
struct ThroughputOptions {
    var url = URL(string: "http://127.0.0.1:18190/item.json")!
    var requests = 10_000
    var concurrency = 100
    var sequential = 2_000
    var rounds = 5
    /// Only the contenders whose name contains one of these texts (to profile one of them); `--only` may be repeated.
    var only: [String] = []
    /// The loads measured, in this order: `concurrent`, `sequential` or both (`--loads sequential`).
    var loads = ["concurrent", "sequential"]
    /// Every contender decodes the body into a ``SampleItem`` (`--decoded`).
    var decoded = false
    /// With `--single N`: no rounds and no table; the one contender `--only` names sends N requests after
    /// ``warmUp`` others, for a run under callgrind.
    var single: Int?
    /// Requests sent before the `--single` ones: they open the connections and fill the cache past its capacity.
    var warmUp = 1_200

    init(_ arguments: ArraySlice<String>) throws {
        var arguments = arguments
        while let option = arguments.popFirst() {
            if option == "--decoded" {
                decoded = true
                continue
            }
            guard let value = arguments.popFirst() else { throw UsageError("\(option) needs a value") }
            switch option {
            case "--url": url = try URL(string: value).orThrow(UsageError("--url takes a URL"))
            case "--requests": requests = try Int(value).orThrow(UsageError("--requests takes a number"))
            case "--concurrency": concurrency = try Int(value).orThrow(UsageError("--concurrency takes a number"))
            case "--sequential": sequential = try Int(value).orThrow(UsageError("--sequential takes a number"))
            case "--rounds": rounds = try Int(value).orThrow(UsageError("--rounds takes a number"))
            case "--only": only.append(value)
            case "--loads":
                loads = value.split(separator: ",").map(String.init)
                guard !loads.isEmpty, loads.allSatisfy(["concurrent", "sequential"].contains) else {
                    throw UsageError("--loads takes concurrent, sequential or concurrent,sequential")
                }
            case "--single": single = try Int(value).orThrow(UsageError("--single takes a number"))
            case "--warm-up": warmUp = try Int(value).orThrow(UsageError("--warm-up takes a number"))
            default: throw UsageError("unknown option \(option)")
            }
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Optional {
    func orThrow(_ error: some Error) throws -> Wrapped {
        guard let self else { throw error }
        return self
    }
}

/// The medians as a Markdown table, and the ratios the targets are stated in.
struct ThroughputReport {
    let options: ThroughputOptions
    let contenders: [String]
    /// Requests per second of each round, by load ("concurrent", "sequential") and contender.
    let results: [String: [String: [Double]]]
    /// CPU microseconds per request of each round, keyed like `results`.
    let cpu: [String: [String: [Double]]]
    /// Context switches per request of each round, keyed like `results`.
    let switches: [String: [String: [Double]]]

    func median(_ load: String, _ contender: String, of table: [String: [String: [Double]]]? = nil) -> Double {
        let rates = ((table ?? results)[load]?[contender] ?? []).sorted()
        guard !rates.isEmpty else { return 0 }
        return rates.count % 2 == 1 ? rates[rates.count / 2] : (rates[rates.count / 2 - 1] + rates[rates.count / 2]) / 2
    }

    var markdown: String {
        var lines = [
            "| load | contender | requests/s (median) | client CPU µs/request (median) | context switches/request "
                + "(median) | rounds (requests/s; CPU µs) |",
            "|---|---|---:|---:|---:|---|",
        ]
        for (load, label) in [
            ("concurrent", "\(options.concurrency) tasks, \(options.requests) distinct keys"),
            ("sequential", "1 task, \(options.sequential) distinct keys"),
        ] where options.loads.contains(load) {
            for contender in contenders {
                let rounds = zip(results[load]?[contender] ?? [], cpu[load]?[contender] ?? [])
                    .map { "\(Int($0)); \(Int($1))" }.joined(separator: ", ")
                let cpuTime = Int(median(load, contender, of: cpu))
                let switched = String(format: "%.2f", median(load, contender, of: switches))
                let rate = Int(median(load, contender))
                lines.append("| \(label) | \(contender) | \(rate) | \(cpuTime) | \(switched) | \(rounds) |")
            }
        }
        let ahc = "Courier + AsyncHTTPClientTransport"
        let urlSession = "Courier + URLSessionTransport"
        func ratio(_ load: String, _ lhs: String, _ rhs: String) -> String {
            // A contender left out with `--only` has no median: its ratios are not shown.
            let (numerator, denominator) = (median(load, lhs), median(load, rhs))
            guard numerator > 0, denominator > 0 else { return "—" }
            return String(format: "%.2f×", numerator / denominator)
        }
        func cpuRatio(_ load: String, _ lhs: String, _ rhs: String) -> String {
            let (numerator, denominator) = (median(load, lhs, of: cpu), median(load, rhs, of: cpu))
            guard numerator > 0, denominator > 0 else { return "—" }
            return String(format: "%.2f×", numerator / denominator)
        }
        // Courier is held to the faster of AsyncHTTPClient's two APIs in each run, whichever that is on the day.
        func fasterRaw(_ load: String) -> String {
            let futures = "raw AsyncHTTPClient, futures"
            return median(load, futures) > median(load, "raw AsyncHTTPClient") ? futures : "raw AsyncHTTPClient"
        }
        let ratios = [
            "| concurrent: Courier + AHC / Courier + URLSession | \(ratio("concurrent", ahc, urlSession)) | ≥ 3× |",
            "| concurrent: Courier + AHC / raw AHC (async API) | \(ratio("concurrent", ahc, "raw AsyncHTTPClient")) | — |",
            "| concurrent: Courier + AHC / faster raw AHC (\(fasterRaw("concurrent"))) | \(ratio("concurrent", ahc, fasterRaw("concurrent"))) | ≥ 0.9× (0.95×) |",
            "| concurrent: Courier + URLSession / raw URLSession | \(ratio("concurrent", urlSession, "raw URLSession")) | ≥ 0.98× |",
            "| sequential: Courier + AHC / Courier + URLSession | \(ratio("sequential", ahc, urlSession)) | ≥ 1.3× |",
            "| concurrent: Courier + AHC, no cache / faster raw AHC | \(ratio("concurrent", ahc + ", no cache", fasterRaw("concurrent"))) | — |",
            "| sequential: Courier + AHC / faster raw AHC (\(fasterRaw("sequential"))) | \(ratio("sequential", ahc, fasterRaw("sequential"))) | — |",
            "| sequential: Courier + URLSession / raw URLSession | \(ratio("sequential", urlSession, "raw URLSession")) | — |",
            "| sequential CPU µs/request: Courier + AHC / raw AHC (async API) | \(cpuRatio("sequential", ahc, "raw AsyncHTTPClient")) | ≤ 1.1× |",
            "| sequential CPU µs/request: Courier + AHC / raw AHC, futures | \(cpuRatio("sequential", ahc, "raw AsyncHTTPClient, futures")) | — |",
            "| sequential CPU µs/request: Courier + AHC, no cache / raw AHC (async API) | \(cpuRatio("sequential", ahc + ", no cache", "raw AsyncHTTPClient")) | — |",
        ]
        // Only the ratios of the loads this run measured (`--loads`).
        lines += ["", "| ratio (medians) | measured | target |", "|---|---:|---:|"]
        lines += ratios.filter { row in options.loads.contains { row.hasPrefix("| \($0)") } }
        return lines.joined(separator: "\n")
    }
}
