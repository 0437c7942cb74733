/// The latest latencies of one origin, for an adaptive hedging delay: a ring of ``HedgingPolicy/sampleCount``
/// samples. A plain value; its owner holds the lock.
struct LatencyWindow: Sendable {
    private var samples: [Duration] = []
    private var next = 0

    mutating func record(_ latency: Duration) {
        if samples.count < HedgingPolicy.sampleCount {
            samples.append(latency)
        } else {
            samples[next] = latency
            next = (next + 1) % HedgingPolicy.sampleCount
        }
    }

    /// The delay `policy` asks for, given these samples.
    func delay(for delay: HedgingPolicy.Delay) -> Duration {
        switch delay {
        case .fixed(let duration):
            return duration.saturatedDelay
        case .percentile(let percentile, let minimum, let maximum):
            guard samples.count >= HedgingPolicy.minimumSamples else { return maximum }
            let sorted = samples.sorted()
            let rank = Int((min(1, max(0, percentile)) * Double(sorted.count - 1)).rounded(.up))
            return min(maximum, max(minimum, sorted[rank]))
        }
    }
}
