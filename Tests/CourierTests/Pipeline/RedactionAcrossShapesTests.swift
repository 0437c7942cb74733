import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// No credential (the authenticator's `Authorization`, a `token` query parameter) appears in what any shape of call
/// throws or tells in its events, whether the server refused the call or the connection failed.
@Suite(.timeLimit(.minutes(1))) struct RedactionAcrossShapesTests {
    /// How the call fails.
    enum Failure: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The server answers `500`, its response naming the request's URL.
        case serverError
        /// The transport fails with a `URLError` naming the URL, as URLSession's do.
        case transportFailure

        var testDescription: String { rawValue }
    }

    @Test(arguments: CallShape.allCases, Failure.allCases)
    func credentialsNeverAppearInErrorsOrEvents(shape: CallShape, failure: Failure) async throws {
        let clock = TestClock()
        let issuer = AuthTestKit.Issuer(date: AuthTestKit.ManualDate())
        let refresher = AuthTestKit.refresher(AuthTestKit.credential("secret-access-0"), issuer: issuer, clock: clock)
        let transport = PipelineTransport { received, _ in
            let request = received.request
            switch failure {
            case .serverError:
                return TransportResponse(
                    statusCode: 500, headers: ["Content-Type": "text/plain"], body: Data("unavailable".utf8),
                    url: request.url)
            case .transportFailure:
                let info: [String: Any] = [
                    NSURLErrorFailingURLErrorKey: request.url, "url": request.url.absoluteString,
                ]
                throw APIError.transport(.connectionLost, underlying: URLError(.networkConnectionLost, userInfo: info))
            }
        }
        let client = PipelineKit.client(transport, clock: clock, authenticator: refresher)
        let events = client.events
        var call = ShapeCall(shape.idempotentMethod)
        call.query = [URLQueryItem(name: "token", value: "secret-query")]

        let outcome = await shape.perform(call, on: client)

        let error = try #require(outcome.error, "the call failed")
        #expect(transport.callCount == 1)
        let sent = try #require(transport.requests.first)
        #expect(sent.headers["Authorization"] == "Bearer secret-access-0", "the credential was sent")
        #expect(sent.url.query?.contains("secret-query") == true)
        let printedError = AuthTestKit.printed(error)
        #expect(!printedError.contains(AuthTestKit.secret), "the error shows a credential: \(printedError)")
        let told = await EventTestKit.collect(events, from: client.eventLog)
        #expect(!told.isEmpty)
        for event in told {
            let printed = AuthTestKit.printed(event)
            #expect(!printed.contains(AuthTestKit.secret), "an event shows a credential: \(event)")
            // The values themselves, not only how `HeaderFields` prints them (it hides the standard names).
            if case .attemptSent(_, let headers) = event.kind {
                let values = headers.fields.map(\.value)
                #expect(!values.contains { $0.contains(AuthTestKit.secret) }, "attempt headers: \(values)")
                #expect(headers["Authorization"] == "<redacted>", "the credential's name is kept, its value hidden")
            }
        }
    }
}
