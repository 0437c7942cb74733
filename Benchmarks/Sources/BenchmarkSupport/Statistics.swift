/// Percentiles of a sample of durations.
public struct LatencySummary: Sendable {
    /// The median.
    public let p50: Duration
    /// The 99th percentile.
    public let p99: Duration
    /// The largest.
    public let max: Duration

    /// Summarizes `samples` (nearest-rank percentiles).
    public init(_ samples: [Duration]) {
        let sorted = samples.sorted()
        func rank(_ fraction: Double) -> Duration {
            guard !sorted.isEmpty else { return .zero }
            let index = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
            return sorted[Swift.max(0, Swift.min(sorted.count - 1, index))]
        }
        p50 = rank(0.5)
        p99 = rank(0.99)
        max = sorted.last ?? .zero
    }
}

extension Duration {
    /// The duration in milliseconds as a `Double`.
    public var milliseconds: Double {
        Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15
    }

    /// The duration in microseconds as a `Double`.
    public var microseconds: Double { milliseconds * 1_000 }
}
