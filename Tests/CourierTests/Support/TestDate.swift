import Foundation

@testable import Courier

/// A date source that moves only when a test says so, for HTTP-date arithmetic (`Date`, `Expires`, `Age`).
final class TestDate: Sendable {
    /// 2024-01-01T00:00:00Z: a fixed start, so that formatted dates are stable.
    static let start = Date(timeIntervalSince1970: 1_704_067_200)

    private let date: Locked<Date>

    init(_ start: Date = TestDate.start) {
        date = Locked(start)
    }

    /// The current date.
    var now: Date { date.withLock { $0 } }

    /// Moves the date forward by `seconds`.
    func advance(by seconds: TimeInterval) {
        date.withLock { $0 += seconds }
    }

    /// `start + offset` as an IMF-fixdate.
    static func http(_ offset: TimeInterval) -> String {
        HTTPDate.format(start + offset)
    }
}
