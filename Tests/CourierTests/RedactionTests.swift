import Foundation
import Testing

@testable import Courier

private typealias Kit = EventTestKit

/// Secrets never reach an event, an event line or an error description: credentials are found by name and replaced
/// with `<redacted>`.
@Suite(.timeLimit(.minutes(1))) struct RedactionTests {
    private let redaction = Redaction(
        CredentialPolicy(
            headerNames: CredentialPolicy.standardHeaderNames.union(["X-Signature"]),
            queryParameters: ["api_key", "Sig"]))

    @Test(arguments: [
        ("https://a.test/p?api_key=s3&page=2", "https://a.test/p?api_key=<redacted>&page=2"),
        ("https://a.test/p?page=2&API_KEY=s3#frag", "https://a.test/p?page=2&API_KEY=<redacted>#frag"),
        ("https://a.test/p?api%5Fkey=s3", "https://a.test/p?api%5Fkey=<redacted>"),
        ("https://a.test/p?sig=s3;api_key=s4", "https://a.test/p?sig=<redacted>;api_key=<redacted>"),
        ("https://a.test/p?api_keys=kept&key=kept", "https://a.test/p?api_keys=kept&key=kept"),
        ("https://user:s3@a.test/p", "https://user:<redacted>@a.test/p"),
        ("https://user@a.test/p?x=1", "https://user@a.test/p?x=1"),
        ("failed: \"https://a.test/?api_key=s3\" (code 7)", "failed: \"https://a.test/?api_key=<redacted>\" (code 7)"),
        ("Authorization: Bearer s3.s4", "Authorization: Bearer <redacted>"),
        ("header Basic dXNlcjpzMw== rejected", "header Basic <redacted> rejected"),
        ("the basic idea", "the basic idea"),
        ("nothing to hide", "nothing to hide"),
    ])
    func textRedaction(input: String, output: String) {
        #expect(redaction.redact(input) == output)
        #expect(redaction.redact(output) == output, "redacting twice changes nothing")
    }

    @Test func credentialAndConfiguredHeadersAreRedacted() {
        let headers: HeaderFields = [
            "Authorization": "Bearer s3", "proxy-authorization": "Basic s3", "Cookie": "id=s3", "Set-Cookie": "id=s3",
            "x-signature": "s3", "Accept": "application/json",
        ]
        let redacted = redaction.redact(headers)
        #expect(redacted.fields.map(\.name) == headers.fields.map(\.name))
        #expect(redacted.fields.map(\.value) == Array(repeating: "<redacted>", count: 5) + ["application/json"])
    }

    /// A header list printed on its own cannot see the client's policy: it hides the standard names, any name made of
    /// the words credential names are made of (`X-Tenant-Secret`, `X-Goog-Api-Key`, `X-Amz-Security-Token`), and a
    /// `Bearer`/`Basic` credential or a URL's secrets in any other value.
    @Test func aHeaderListsDescriptionHidesWhatLooksLikeACredential() {
        let headers: HeaderFields = [
            "Authorization": "s01", "X-Tenant-Secret": "s02", "X-Goog-Api-Key": "s03", "X-Amz-Security-Token": "s04",
            "X-CSRF-Token": "s05", "X-Session-Id": "s06", "X-Upstream": "Bearer s07", "X-Client-Password": "s08",
            "Referer": "https://ada:s09@example.com/?access_token=s10", "X-Api-Credential": "s11",
            "X-Request-Signature": "s12", "Accept": "text/html", "X-Request-ID": "r-1",
        ]
        let texts = [headers.description, AuthTestKit.printed(headers)] + headers.fields.map(\.description)
        for text in texts {
            for secret in (1...12).map({ String(format: "s%02d", $0) }) {
                #expect(!text.contains(secret), "\(secret) in \(text)")
            }
        }
        #expect(headers.description.contains("Accept: text/html"))
        #expect(headers.description.contains("X-Request-ID: r-1"))
        #expect(headers.description.contains("X-Upstream: Bearer <redacted>"))
    }

    @Test func errorDescriptionsRedactTheStandardParameters() {
        let url = URL(string: "https://a.test/p?api_key=s3&access_token=s4&page=1")!
        var info: [String: Any] = ["NSErrorFailingURLStringKey": url.absoluteString]
        info[NSURLErrorFailingURLErrorKey] = url
        let errors: [APIError] = [
            .notCached(url),
            .invalidRequest(.invalidURL("ht tp://a.test/?token=s3")),
            .transport(.cannotConnect, underlying: URLError(.cannotConnectToHost, userInfo: info)),
            .adapterFailed(URLError(.userAuthenticationRequired, userInfo: info)),
        ]
        for error in errors {
            #expect(!error.description.contains("s3") && !error.description.contains("s4"), "\(error.description)")
            #expect(!error.localizedDescription.contains("s3"))
        }
        #expect(APIError.notCached(url).description.contains("api_key=<redacted>&access_token=<redacted>&page=1"))
    }

    /// A whole run with a secret token, cookie, signature header and query parameters, through a refresh, a retry,
    /// a cache hit and failures: nothing any subscriber, event line or error description shows contains a secret.
    @Test func aRunWithSecretsNeverShowsThem() async throws {
        let issuer = AuthTestKit.Issuer(date: AuthTestKit.ManualDate())
        let refresher = AuthTestKit.refresher(AuthTestKit.credential(), issuer: issuer)
        let tokens = AuthTestKit.tokenCheckingTransport()
        let transport = MockTransport { request, index in
            if request.url.path == "/down" {
                let info: [String: Any] = [NSURLErrorFailingURLErrorKey: request.url]
                throw APIError.transport(.cannotConnect, underlying: URLError(.cannotConnectToHost, userInfo: info))
            }
            var response = try await tokens.send(request)
            if response.statusCode == 200 { response.headers["Set-Cookie"] = "session=secret-session" }
            if request.url.path == "/cached" { response.headers["Cache-Control"] = "max-age=60" }
            return response
        }
        let clock = TestClock()
        let client = Kit.makeClient(
            transport, cache: ResponseCache(), retryPolicy: RetryPolicy(maxAttempts: 2, jitter: .none), clock: clock,
            authenticator: refresher
        ) { configuration in
            configuration.credentials.headerNames.insert("X-Signature")
            configuration.credentials.queryParameters.insert("private_id")
            configuration.headers = ["Cookie": "session=secret-cookie", "X-Signature": "secret-signature"]
        }
        let events = client.events
        let lines = Locked<[String]>([])
        let printer = client.printEvents { line in lines.withLock { $0.append(line) } }
        let secrets = [
            URLQueryItem(name: "api_key", value: "secret-key"), URLQueryItem(name: "private_id", value: "private-t"),
        ]

        _ = try await client.send(APIRequest<Data>.get("/cached", query: secrets))
        _ = try await client.send(APIRequest<Data>.get("/cached", query: secrets))
        var errors: [any Error] = []
        let down = Task { try await client.send(APIRequest<Data>.get("/down", query: secrets)) }
        await clock.waitForSleeper(of: .milliseconds(500))
        clock.advance(by: .milliseconds(500))
        do { _ = try await down.value } catch { errors.append(error) }
        for request in [
            APIRequest<Data>(path: "/nowhere", query: secrets, cachePolicy: .onlyIfCached),
            APIRequest<Data>.get("https://alice:secret-password@api.example.com/x?token=secret-y"),
            APIRequest<Data>.get("/bad%zz", query: secrets),
        ] {
            do { _ = try await client.send(request) } catch { errors.append(error) }
        }
        #expect(errors.count == 3, "\(errors)")

        let all = await Kit.collect(events, from: client.eventLog)
        // The printer also prints the marker `collect` emitted.
        #expect(await CoalescerTestKit.eventually { lines.withLock { $0.count } == all.count + 1 })
        printer.cancel()
        #expect(all.count > 20)
        #expect(all.contains { $0.kind == .tokenRefreshSucceeded })
        #expect(all.contains { if case .retryScheduled = $0.kind { true } else { false } })
        #expect(all.contains { $0.kind == .cacheHit(stale: false) })
        let shown = all.map(AuthTestKit.printed) + lines.withLock { $0 }
        for text in shown {
            #expect(!text.contains("secret") && !text.contains("private-t"), "\(text)")
        }
        // Errors belong to the caller and know nothing of the configuration: their descriptions redact the standard
        // names (`api_key`, `token`…), Bearer credentials and passwords, not the names a client adds.
        for text in errors.flatMap({ ["\($0)", $0.localizedDescription, String(describing: $0)] }) {
            #expect(!text.contains("secret"), "\(text)")
        }
        let joined = shown.joined(separator: "\n")
        #expect(joined.contains("api_key=<redacted>&private_id=<redacted>"))
        #expect(
            joined.contains("Authorization: <redacted>") || joined.contains(#""Authorization", value: "<redacted>""#))
    }
}
