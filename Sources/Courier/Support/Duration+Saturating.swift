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

    /// The duration clamped to ±`saturationLimit`.
    var saturated: Duration {
        min(max(self, .zero - Self.saturationLimit), Self.saturationLimit)
    }

    /// The duration clamped to `.zero ... saturationLimit`: for delays, which are never negative.
    var saturatedDelay: Duration {
        min(max(self, .zero), Self.saturationLimit)
    }

    /// `self + other`, clamped to ±`saturationLimit` instead of trapping.
    ///
    /// Both operands are clamped first, so the sum itself cannot overflow.
    func saturatingAdding(_ other: Duration) -> Duration {
        (saturated + other.saturated).saturated
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
