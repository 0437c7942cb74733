/// What one call did and how long each part took, on the client's clock: on every ``APIResponse``.
///
/// ```swift
/// let response = try await client.send(APIRequest<Feed>.get("/feed"))
/// print(response.callID, response.timings.total, response.timings.attempts.map(\.duration))
/// ```
///
/// A caller that shared another's flight (``APIResponse/joined``) sees that flight's attempts and delays, names the
/// call that led it in ``sharedFlightLeader`` (whose events carry the details), and how long it waited for it in
/// ``sharedFlightWait``. An answer from the cache has no attempts.
public struct CallTimings: Sendable, Hashable {
    /// One attempt on the wire.
    public struct Attempt: Sendable, Hashable {
        /// Its number, from 1.
        public var number: Int
        /// From handing the request to the transport to its response or failure.
        public var duration: Duration
        /// The response's status; `nil` when the attempt failed without a response.
        public var status: Int?
        /// The bytes of the request body sent.
        public var bytesSent: Int
        /// The bytes of the response body received; `0` without a response.
        public var bytesReceived: Int

        /// Creates an attempt's timing.
        ///
        /// - Parameters:
        ///   - number: Its number, from 1.
        ///   - duration: How long it took.
        ///   - status: The response's status, if there was one.
        ///   - bytesSent: The bytes of the request body.
        ///   - bytesReceived: The bytes of the response body.
        public init(number: Int, duration: Duration, status: Int?, bytesSent: Int, bytesReceived: Int) {
            self.number = number
            self.duration = duration
            self.status = status
            self.bytesSent = bytesSent
            self.bytesReceived = bytesReceived
        }
    }

    /// From the call's start to its response, decoding included.
    public var total: Duration = .zero
    /// Every attempt of the flight that produced the response, in order; empty for an answer from the cache.
    public var attempts: [Attempt] = []
    /// The delays slept before each retry, in order.
    public var retryDelays: [Duration] = []
    /// The call that led the flight this one shared; `nil` when this call sent its own.
    public var sharedFlightLeader: CallID?
    /// From this call's start until the flight it shared answered; `nil` when it sent its own.
    public var sharedFlightWait: Duration?

    /// The bytes of request bodies sent, over every attempt.
    public var bytesSent: Int { attempts.reduce(0) { $0 + $1.bytesSent } }
    /// The bytes of response bodies received, over every attempt.
    public var bytesReceived: Int { attempts.reduce(0) { $0 + $1.bytesReceived } }

    /// No time and no attempts: what a response made by hand (``APIResponse/init(value:data:statusCode:headers:url:source:joined:attempts:)``) carries.
    public init() {}
}

/// The attempts and delays of one flight, collected as it runs and shared by everyone who joined it.
struct FlightTimings: Sendable {
    var attempts: [CallTimings.Attempt] = []
    var retryDelays: [Duration] = []

    mutating func record(
        _ number: Int, of request: TransportRequest, _ response: TransportResponse?, duration: Duration
    ) {
        attempts.append(
            CallTimings.Attempt(
                number: number, duration: duration, status: response?.statusCode,
                bytesSent: request.body?.count ?? 0, bytesReceived: response?.body.count ?? 0))
    }
}
