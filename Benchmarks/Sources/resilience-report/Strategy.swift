import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a caller is configured: Courier as it comes (and with hedging), and what users write instead.
enum Strategy: String, CaseIterable, Sendable {
    case courier = "Courier"
    case courierHedging = "Courier+hedging"
    case noRetries = "no retries"
    case threeAttempts = "3 attempts"

    /// Each attempt's deadline, the same for every strategy.
    static let attemptTimeout = Duration.seconds(2)

    /// A client of `baseURL` for this strategy, sending through `transport`. No cache: every call is a distinct key
    /// and must reach the origin.
    func makeClient(baseURL: URL, transport: any HTTPTransport) -> APIClient {
        var configuration = APIClient.Configuration(transport: transport, cache: nil)
        configuration.timeout = Self.attemptTimeout
        switch self {
        case .courier:
            break
        case .courierHedging:
            configuration.resilience.hedging = HedgingPolicy(delay: .percentile(0.95), maxCopies: 2)
        case .noRetries:
            configuration.retryPolicy = .never
            configuration.resilience = .off
        case .threeAttempts:
            // Alamofire's `RetryPolicy` defaults: 2 retries (3 attempts), 0.5 s × 2ⁿ without jitter, these statuses.
            configuration.retryPolicy = RetryPolicy(
                maxAttempts: 3, baseDelay: .milliseconds(500), jitter: .none,
                retryableStatusCodes: [408, 500, 502, 503, 504])
            configuration.resilience = .off
        }
        return APIClient(baseURL: baseURL, configuration: configuration)
    }

    /// URLSession on loopback with room for the report's concurrency: at most 4 connections per host (Linux's
    /// default) would itself be a concurrency limit in front of the origin, for every strategy.
    static func makeTransport() -> URLSessionTransport {
        let configuration = URLSessionTransport.defaultConfiguration
        configuration.httpMaximumConnectionsPerHost = 32
        return URLSessionTransport(configuration: configuration)
    }
}
