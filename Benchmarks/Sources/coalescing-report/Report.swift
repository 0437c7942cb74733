import BenchmarkSupport
import Foundation

/// Formats the measurements: a terminal table, a Markdown table and an SVG chart.
struct Report {
    let results: [Measurement]
    let throughput: [Throughput.Result]
    /// The simulated latency, or `nil` against a real server.
    let latency: Duration?
    let source: String

    static func median(of runs: [Measurement]) -> Measurement {
        let sorted = runs.sorted { $0.wall < $1.wall }
        let middle = sorted[sorted.count / 2]
        // Report the worst upstream count of all repetitions: a strategy that sometimes leaks calls does not hide it.
        let worstCalls = runs.map(\.upstreamCalls).max() ?? middle.upstreamCalls
        return Measurement(
            variant: middle.variant, strategy: middle.strategy, callers: middle.callers, upstreamCalls: worstCalls,
            failures: middle.failures, wall: middle.wall, latency: middle.latency,
            allocationsPerCaller: middle.allocationsPerCaller)
    }

    private static let header = [
        "callers", "strategy", "upstream calls", "wall (ms)", "added (ms)", "p50 (ms)", "p99 (ms)", "allocs/caller",
    ]

    /// What each variant's section says the callers receive.
    private static func title(of variant: Variant) -> String {
        switch variant {
        case .data: "Data: every caller receives the body"
        case .decoded:
            "Decoded: every caller receives a `SampleItem` (221 bytes of JSON); the coalescing baselines decode once "
                + "in their shared task, Courier is asked for `APIRequest<SampleItem>`"
        }
    }

    private var variants: [Variant] {
        Variant.allCases.filter { variant in results.contains { $0.variant == variant } }
    }

    private func row(_ result: Measurement) -> [String] {
        let added = latency.map { String(format: "%.2f", (result.wall - $0).milliseconds) } ?? "-"
        var calls = "\(result.upstreamCalls)"
        if result.failures > 0 { calls += " (\(result.failures) failed)" }
        return [
            "\(result.callers)", result.strategy, calls, String(format: "%.2f", result.wall.milliseconds), added,
            String(format: "%.2f", result.latency.p50.milliseconds),
            String(format: "%.2f", result.latency.p99.milliseconds),
            String(format: "%.1f", result.allocationsPerCaller),
        ]
    }

    func terminalTable() -> String {
        let header = ["variant"] + Self.header
        let rows = [header] + results.map { [$0.variant.rawValue] + row($0) }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        let lines = rows.map { cells in
            zip(cells, widths).map { cell, width in cell.padding(toLength: width, withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([lines[0], rule] + lines.dropFirst()).joined(separator: "\n")
    }

    /// The Markdown report; `chart` is the file name of the SVG written beside it.
    func markdown(chart: String) -> String {
        var lines = [
            "# Coalescing report", "",
            "Upstream: \(source). One key, all callers started at once; the median of the repetitions by wall time "
                + "(upstream calls: the worst repetition). \"added\" is wall time minus the upstream latency.",
        ]
        for variant in variants {
            lines += [
                "", "## \(Self.title(of: variant))", "",
                "| " + Self.header.joined(separator: " | ") + " |",
                "|" + Self.header.map { _ in "---:" }.joined(separator: "|") + "|",
            ]
            lines += results.filter { $0.variant == variant }.map { "| " + row($0).joined(separator: " | ") + " |" }
        }
        if !throughput.isEmpty {
            lines += [
                "", "## Distinct keys", "",
                "Each side sent the same requests over distinct keys; two rounds in alternating order.", "",
                "| client | requests | failures | wall (ms) | requests/s |", "|---|---:|---:|---:|---:|",
            ]
            lines += throughput.map { result in
                "| \(result.name) | \(result.requests) | \(result.failures) | "
                    + String(format: "%.1f | %.0f |", result.wall.milliseconds, result.perSecond)
            }
        }
        lines += ["", "![Wall time by callers](\(chart))", ""]
        return lines.joined(separator: "\n")
    }

    /// Two panels over a log-scaled caller axis: wall time, and upstream calls. One colour per strategy; the decoded
    /// variant's lines are dashed.
    func svg() -> String {
        let strategies = results.reduce(into: [String]()) { names, result in
            if !names.contains(result.strategy) { names.append(result.strategy) }
        }
        let callerCounts = Array(Set(results.map(\.callers))).sorted()
        let colors = ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd"]
        let panelWidth = 420.0
        let panelHeight = 260.0
        var svg = [
            #"<svg xmlns="http://www.w3.org/2000/svg" width="940" height="364" font-family="sans-serif" font-size="12">"#,
            #"<rect width="100%" height="100%" fill="white"/>"#,
        ]
        let panels: [(String, (Measurement) -> Double)] = [
            ("wall time (ms)", { $0.wall.milliseconds }), ("upstream calls", { Double($0.upstreamCalls) }),
        ]
        for (panelIndex, panel) in panels.enumerated() {
            let originX = 60.0 + Double(panelIndex) * 470
            let originY = 30.0
            let values = results.map(panel.1)
            let maximum = log10(max(values.max() ?? 1, 1) * 2)
            func x(_ callers: Int) -> Double {
                let span = log10(Double(callerCounts.last ?? 1))
                return originX + (span == 0 ? 0 : log10(Double(callers)) / span * panelWidth)
            }
            func y(_ value: Double) -> Double {
                originY + panelHeight - log10(max(value, 1) * 2) / maximum * panelHeight
            }
            svg.append(
                #"<text x="\#(originX)" y="20" font-weight="bold">\#(panel.0), log scale, by concurrent callers</text>"#
            )
            svg.append(
                ##"<rect x="\##(originX)" y="\##(originY)" width="\##(panelWidth)" height="\##(panelHeight)" fill="none" stroke="#999"/>"##
            )
            for callers in callerCounts {
                svg.append(
                    #"<text x="\#(x(callers))" y="\#(originY + panelHeight + 16)" text-anchor="middle">\#(callers)</text>"#
                )
            }
            for tick in [1.0, 10, 100, 1_000, 10_000] where log10(tick * 2) <= maximum {
                svg.append(
                    #"<text x="\#(originX - 6)" y="\#(y(tick) + 4)" text-anchor="end">\#(Int(tick))</text>"#)
            }
            for (index, strategy) in strategies.enumerated() {
                for variant in variants {
                    let points = results.filter { $0.strategy == strategy && $0.variant == variant }
                        .sorted { $0.callers < $1.callers }
                        .map { String(format: "%.1f,%.1f", x($0.callers), y(panel.1($0))) }.joined(separator: " ")
                    let color = colors[index % colors.count]
                    let dash = variant == .decoded ? #" stroke-dasharray="6 4""# : ""
                    svg.append(
                        #"<polyline points="\#(points)" fill="none" stroke="\#(color)" stroke-width="2"\#(dash)/>"#)
                }
            }
        }
        for (index, strategy) in strategies.enumerated() {
            let legendX = 60.0 + Double(index) * 220
            svg.append(
                #"<rect x="\#(legendX)" y="326" width="14" height="4" fill="\#(colors[index % colors.count])"/>"#)
            svg.append(#"<text x="\#(legendX + 20)" y="332">\#(strategy)</text>"#)
        }
        if variants.count > 1 {
            svg.append(#"<text x="60" y="352">solid: Data, dashed: decoded (SampleItem)</text>"#)
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n")
    }
}
