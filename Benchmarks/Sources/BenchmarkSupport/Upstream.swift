import Courier
import Foundation
import Synchronization

/// A fake server: every call waits `latency` and counts itself, so a strategy's upstream calls can be read off.
public final class SimulatedUpstream: Sendable {
    /// How long one upstream call takes.
    public let latency: Duration
    /// The body every call returns.
    public let body: Data
    private let calls = Atomic<Int>(0)

    /// Creates an upstream with the given latency and a small JSON body.
    public init(latency: Duration, body: Data = Data(#"{"id":1,"name":"Ada Lovelace"}"#.utf8)) {
        self.latency = latency
        self.body = body
    }

    /// How many calls reached the upstream so far.
    public var callCount: Int { calls.load(ordering: .relaxed) }

    /// One upstream call: waits the latency and returns the body.
    public func fetch(_ key: String) async throws -> Data {
        calls.add(1, ordering: .relaxed)
        if latency > .zero { try await Task.sleep(for: latency) }
        return body
    }
}

/// Courier's transport seam over the simulated upstream.
public struct SimulatedTransport: HTTPTransport {
    /// The upstream every request is sent to.
    public let upstream: SimulatedUpstream

    /// Creates a transport that sends everything to `upstream`.
    public init(upstream: SimulatedUpstream) {
        self.upstream = upstream
    }

    /// Waits the upstream latency and answers 200 with its body.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let body = try await upstream.fetch(request.url.path)
        return TransportResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: body)
    }
}

/// A transport that counts the requests it sends through another transport (a real server with
/// `--upstream`).
public struct CountingTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let calls = Counter()

    /// Wraps `base`.
    public init(_ base: any HTTPTransport) {
        self.base = base
    }

    /// Requests sent so far.
    public var callCount: Int { calls.value }

    /// Counts, then sends through the wrapped transport.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        calls.increment()
        return try await base.send(request)
    }
}

/// A shareable atomic counter.
public final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    /// Creates a counter at zero.
    public init() {}

    /// Adds one.
    public func increment() { count.add(1, ordering: .relaxed) }

    /// The current count.
    public var value: Int { count.load(ordering: .relaxed) }
}
