extension Duration {
    /// Whole nanoseconds, saturated to `Int64`: the resilience windows slot time in integers, so that a slot boundary
    /// on the manual clock is exact.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = saturated.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
