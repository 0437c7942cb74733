import Courier
import Foundation

/// Why a call failed, in the few kinds the report tells apart: the mechanisms that fail a call on purpose (the
/// budget, the breaker, shedding) are what a reader needs to see beside the origin's own answers.
enum FailureKind: String, CaseIterable, Sendable {
    case status = "status"
    case timedOut = "timed out"
    case refused = "transport"
    case budget = "budget"
    case circuitOpen = "circuit open"
    case shed = "shed"
    case other = "other"

    init(_ error: any Error) {
        guard let error = error as? APIError else {
            self = .other
            return
        }
        switch error {
        case .unacceptableStatus: self = .status
        case .timedOut: self = .timedOut
        case .transport: self = .refused
        case .retryBudgetExhausted: self = .budget
        case .circuitOpen: self = .circuitOpen
        case .shed: self = .shed
        default: self = .other
        }
    }

    /// The kinds that occurred, most frequent first, as `timed out 230, status 12`; `–` when none did.
    static func summary(_ kinds: [FailureKind]) -> String {
        var counts: [FailureKind: Int] = [:]
        for kind in kinds { counts[kind, default: 0] += 1 }
        let ordered = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key.rawValue < $1.key.rawValue }
        return ordered.isEmpty ? "–" : ordered.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
    }
}
