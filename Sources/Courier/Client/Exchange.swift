import Foundation

/// What one flight produced: the request as last sent, the response, and how it was obtained.
/// Shared by every caller of a coalesced flight; each caller decodes its own value from it.
struct Exchange: Sendable {
    var request: TransportRequest
    var response: TransportResponse
    var attempts: Int
    var source: ResponseSource = .network
    var joined = false
    /// The call that led the flight, so that joiners can name it in their events.
    var leader: CallID?
    /// The body decoded once in the flight, for callers that ask for the leader's type.
    var decoded: DecodedValue?
    /// The flight's attempts and retry delays, for ``APIResponse/timings``.
    var timings = FlightTimings()

    func makeResponse<Value>(value: Value) -> APIResponse<Value> {
        APIResponse(
            value: value, data: response.body, statusCode: response.statusCode, headers: response.headers,
            url: response.url ?? request.url, source: source, joined: joined, attempts: attempts,
            credentials: request.credentials)
    }
}
