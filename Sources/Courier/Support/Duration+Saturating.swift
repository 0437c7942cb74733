/// Saturating `Duration` arithmetic: the one place where configuration and header values become durations.
///
/// `Duration` arithmetic traps on overflow, and so do its conversions: `components` traps past `Int64.max` seconds,
/// `Duration.seconds(_: Double)` on a NaN or an infinity, and a clock's `sleep` traps once `now` plus the duration
/// no longer fits. A caller's `timeout: .seconds(Int64.max)` or a server's `Retry-After` in the year 9999 must not
/// crash the process, so every duration Courier derives from such values goes through these helpers, which clamp
/// to ±`saturationLimit` instead of trapping.
extension Duration {
    /// The longest duration Courier computes with: `Int64.max` nanoseconds, about 292 years (the range of Go's
    /// `time.Duration` and of dispatch's nanosecond timers).
    ///
    /// Anything longer is "never" for a client, and a clock's `now` plus this limit still fits every conversion a
    /// sleep makes, so a saturated deadline simply never arrives.
    static let saturationLimit = Duration.nanoseconds(Int64.max)

    /// ``saturationLimit`` in attoseconds.
    private static var saturationLimitAttoseconds: Int128 { Int128(Int64.max) &* 1_000_000_000 }

    /// The duration clamped to ±`saturationLimit`.
    var saturated: Duration {
        let limit = Self.saturationLimitAttoseconds
        return Duration(attosecondCount: min(max(attosecondCount, -limit), limit))
    }

    /// The duration clamped to `.zero ... saturationLimit`: for delays, which are never negative.
    var saturatedDelay: Duration {
        Duration(attosecondCount: min(max(attosecondCount, 0), Self.saturationLimitAttoseconds))
    }

    /// `self + other`, clamped to ±`saturationLimit` instead of trapping.
    ///
    /// Both operands are clamped first, so the sum itself cannot overflow.
    func saturatingAdding(_ other: Duration) -> Duration {
        let limit = Self.saturationLimitAttoseconds
        let sum = min(max(attosecondCount, -limit), limit) + min(max(other.attosecondCount, -limit), limit)
        return Duration(attosecondCount: min(max(sum, -limit), limit))
    }

    /// The duration in attoseconds, the 128-bit count `Duration` keeps. `Duration`'s own comparisons and arithmetic
    /// are calls into the standard library, which does not make them inlinable: a deadline set per attempt made 14
    /// of them (about 250 instructions). On `Int128` they are a few inlined instructions each; the paths every call
    /// takes compare and subtract durations through it.
    @inline(__always)
    var attosecondCount: Int128 { Int128(_low: _low, _high: _high) }

    /// `self - other`, as `Duration`'s operator computes it (trapping on overflow), inlined.
    @inline(__always)
    func minus(_ other: Duration) -> Duration {
        Duration(attosecondCount: attosecondCount - other.attosecondCount)
    }

    /// A duration of `count` attoseconds, as `Duration` keeps it.
    @inline(__always)
    private init(attosecondCount count: Int128) {
        self.init(_high: count._high, low: count._low)
    }

    /// A duration of `seconds` seconds, clamped to ±`saturationLimit`; a NaN is zero.
    ///
    /// - Parameter seconds: Seconds, possibly infinite or NaN (a date difference, a product of a factor).
    init(saturatingSeconds seconds: Double) {
        guard !seconds.isNaN else {
            self = .zero
            return
        }
        let limit = Self.saturationLimit.timeInterval
        self = Duration.seconds(min(max(seconds, -limit), limit)).saturated
    }

    /// A duration of `milliseconds` rounded to a whole number of milliseconds, which `Duration` represents exactly;
    /// clamped to ±`saturationLimit`; a NaN is zero.
    ///
    /// - Parameter milliseconds: Milliseconds, possibly infinite or NaN.
    init(saturatingMilliseconds milliseconds: Double) {
        guard !milliseconds.isNaN else {
            self = .zero
            return
        }
        let limit = (Self.saturationLimit / .milliseconds(1)).rounded(.down)
        self = Duration.milliseconds(Int64(min(max(milliseconds.rounded(), -limit), limit))).saturated
    }

    /// The duration in seconds, for `Date` arithmetic. Never traps: unlike `components`, it reads the whole
    /// 128-bit value.
    var timeInterval: Double {
        self / .seconds(1)
    }
}
