// resilience-report: Courier's retry budget, circuit breaker and hedging against what users write instead, under
// faults a real origin injects over loopback sockets.
import BenchmarkSupport
import Courier
import Foundation

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n\n\(Options.usage)\n".utf8))
    exit(2)
}

func progress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

let scenarios = Scenario.all(scale: options.scale).filter { options.only.map($0.name.contains) ?? true }
let seconds = scenarios.reduce(0.0) { $0 + $1.total.seconds } * Double(Strategy.allCases.count)
progress(
    "resilience-report: \(scenarios.count) scenarios × \(Strategy.allCases.count) strategies, \(options.rate) calls/s, "
        + "scale \(options.scale): about \(Int(seconds)) s")

var results: [RunResult] = []
for scenario in scenarios {
    for strategy in Strategy.allCases {
        do {
            let result = try await Driver.run(scenario, strategy, rate: options.rate, timeline: options.timeline)
            results.append(result)
            progress(
                "  \(scenario.name), \(strategy.rawValue): "
                    + String(format: "%.2f upstream/call, success %.3f", result.upstreamPerCall, result.successRate)
                    + ", p99 " + (result.p99.map { String(format: "%.1f ms", $0.milliseconds) } ?? "–")
                    + "; failures: \(result.failures)")
        } catch {
            progress("  \(scenario.name) \(strategy.rawValue): could not run: \(error)")
            exit(1)
        }
    }
}

let report = Report(results: results, options: options)
print(report.terminalTable())
let directory = options.resolvedOutputDirectory()
let base = "\(directory)/resilience-report"
do {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    try report.markdown(chart: "resilience-report.svg").write(toFile: "\(base).md", atomically: true, encoding: .utf8)
    try report.svg().write(toFile: "\(base).svg", atomically: true, encoding: .utf8)
    try report.json().write(toFile: "\(base).json", atomically: true, encoding: .utf8)
    progress("wrote \(base).md, \(base).svg and \(base).json")
} catch {
    progress("could not write the report to \(directory): \(error)")
    exit(1)
}
