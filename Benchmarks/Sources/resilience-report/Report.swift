import BenchmarkSupport
import Foundation

/// The results as a terminal table, Markdown, an SVG chart and JSON.
struct Report {
    let results: [RunResult]
    let options: Options

    private static func milliseconds(_ duration: Duration?) -> String {
        duration.map { String(format: "%.1f", $0.milliseconds) } ?? "–"
    }

    func terminalTable() -> String {
        func row(_ cells: [String]) -> String {
            zip(cells, [15, 16, 9, 8, 9, 9, 9, 10]).enumerated().map { index, pair in
                let (cell, width) = pair
                let padding = String(repeating: " ", count: max(0, width - cell.count))
                return index < 2 ? cell + padding : padding + cell
            }.joined(separator: " ")
        }
        var lines = [row(["scenario", "strategy", "up/call", "success", "p50 ms", "p99 ms", "p99.9 ms", "recovery"])]
        for result in results {
            lines.append(
                row([
                    result.scenario, result.strategy, String(format: "%.2f", result.upstreamPerCall),
                    String(format: "%.3f", result.successRate), Self.milliseconds(result.p50),
                    Self.milliseconds(result.p99), Self.milliseconds(result.p999), Self.milliseconds(result.recovery),
                ]))
        }
        return lines.joined(separator: "\n")
    }

    /// One object per scenario and strategy, keys in the order the issue gives them; `null` for a latency without a
    /// successful call and for the recovery of a fault that never heals (or did not recover within the run).
    func json() -> String {
        func number(_ duration: Duration?) -> String {
            duration.map { String(format: "%.1f", $0.milliseconds) } ?? "null"
        }
        let objects = results.map { result in
            "  {\"scenario\": \"\(result.scenario)\", \"strategy\": \"\(result.strategy)\", "
                + "\"upstreamPerCall\": \(String(format: "%.3f", result.upstreamPerCall)), "
                + "\"successRate\": \(String(format: "%.3f", result.successRate)), "
                + "\"p50Ms\": \(number(result.p50)), \"p99Ms\": \(number(result.p99)), "
                + "\"p999Ms\": \(number(result.p999)), \"recoveryMs\": \(number(result.recovery))}"
        }
        return "[\n" + objects.joined(separator: ",\n") + "\n]\n"
    }

    func markdown(chart: String) -> String {
        var text = """
            # Resilience report

            A fault-injecting HTTP/1.1 origin on loopback (real sockets, one thread per connection; healthy answers take
            5 ms) and \(options.rate) calls started per second, each a distinct `GET` (no cache, no coalescing), through
            `URLSessionTransport` (32 connections per host), every attempt bounded by 2 s. Scale \(options.scale).

            - **Courier**: the defaults (`RetryPolicy.default`: 3 attempts, full jitter; retry budget 20 % + 10/s over
              10 s; circuit breaker per origin: 50 % of ≥ 20 calls in 10 s, open 5 s, 1 probe).
            - **Courier+hedging**: the same with `HedgingPolicy(delay: .percentile(0.95), maxCopies: 2)`.
            - **no retries**: `RetryPolicy.never`, `Resilience.off`.
            - **3 attempts**: Alamofire's `RetryPolicy` defaults (0.5 s × 2ⁿ, no jitter), `Resilience.off`.

            Scenarios: the outages and the brownout follow one retry-budget window (10 s × scale) of healthy calls, as
            in a service that has been running; the brownout fails exactly 30 % of requests (6 of every 20 the origin
            receives, at places a hash picks); the overload lasts 30 s × scale, long enough for the origin's queue to
            pass the calls' deadline (after about 7.5 s) and stay there.

            Upstream requests per call and success rate count the calls started while the fault was on (the whole
            run for the slow tail and overload); upstream requests are the attempts handed to the transport, hedged
            copies and refused connections included. Latencies are of successful calls over the whole run. Recovery
            is the time from the origin healing to the first quarter second of calls of which at least 95 % succeeded.
            Failed calls are those counted for the success rate, by the error they ended with: `status` (the origin's
            5xx), `timed out`, `transport` (refused), `budget` (a retry denied, the last outcome attached),
            `circuit open`, `shed`.

            ![chart](\(chart))

            | scenario | strategy | upstream/call | success | p50 ms | p99 ms | p99.9 ms | recovery ms | failed calls |
            |---|---|---:|---:|---:|---:|---:|---:|---|

            """
        for result in results {
            text += String(
                format: "| %@ | %@ | %.2f | %.3f | %@ | %@ | %@ | %@ | %@ |\n", result.scenario as NSString,
                result.strategy as NSString, result.upstreamPerCall, result.successRate,
                Self.milliseconds(result.p50) as NSString, Self.milliseconds(result.p99) as NSString,
                Self.milliseconds(result.p999) as NSString, Self.milliseconds(result.recovery) as NSString,
                result.failures as NSString)
        }
        return text
    }

    /// Two bar groups per scenario: upstream requests per call (left, 0–3) and success rate (right, 0–1).
    func svg() -> String {
        let scenarios = results.reduce(into: [String]()) { if !$0.contains($1.scenario) { $0.append($1.scenario) } }
        let strategies = Strategy.allCases.map(\.rawValue)
        let colors = ["#1f77b4", "#2ca02c", "#d62728", "#ff7f0e"]
        let rowHeight = 90.0
        let width = 760.0
        let height = 60 + rowHeight * Double(scenarios.count)
        var body = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            font-family="sans-serif" font-size="11">
            <text x="170" y="20" font-weight="bold">upstream requests per call (0–3)</text>
            <text x="480" y="20" font-weight="bold">success rate (0–1)</text>

            """
        for (index, name) in strategies.enumerated() {
            body += "<rect x=\"\(20 + index * 150)\" y=\"\(Int(height) - 20)\" width=\"10\" height=\"10\" "
            body += "fill=\"\(colors[index])\"/>"
            body += "<text x=\"\(34 + index * 150)\" y=\"\(Int(height) - 11)\">\(name)</text>\n"
        }
        for (row, scenario) in scenarios.enumerated() {
            let top = 35 + rowHeight * Double(row)
            body += "<text x=\"10\" y=\"\(Int(top + 40))\">\(scenario)</text>\n"
            for (index, strategy) in strategies.enumerated() {
                guard let result = results.first(where: { $0.scenario == scenario && $0.strategy == strategy })
                else { continue }
                let y = top + 8 + Double(index) * 16
                let upstream = min(3, result.upstreamPerCall) / 3 * 270
                let success = result.successRate * 270
                body += "<rect x=\"170\" y=\"\(Int(y))\" width=\"\(Int(upstream))\" height=\"13\" "
                body += "fill=\"\(colors[index])\"/>"
                body += "<text x=\"\(Int(174 + upstream))\" y=\"\(Int(y + 10))\">"
                body += String(format: "%.2f", result.upstreamPerCall) + "</text>\n"
                body += "<rect x=\"480\" y=\"\(Int(y))\" width=\"\(Int(success))\" height=\"13\" "
                body += "fill=\"\(colors[index])\"/>"
                body += "<text x=\"\(Int(484 + success))\" y=\"\(Int(y + 10))\">"
                body += String(format: "%.3f", result.successRate) + "</text>\n"
            }
        }
        return body + "</svg>\n"
    }
}
