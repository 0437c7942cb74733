#if OpenAPI
    import Courier
    import CourierHTTPTypes
    import Foundation
    import HTTPTypes
    import Testing

    @Suite struct RequestConversionTests {
        @Test(arguments: [
            "https://api.example.com/v1/users/42?fields=id%2Cname&q=a%20b",
            "http://127.0.0.1:8080/",
            "https://[::1]:8443/a/b%2Fc",
            "https://api.example.com/search?q=%E2%9C%93&empty=",
            "http://example.com:80/path;matrix=1/x",
        ])
        func aRequestSurvivesARoundTrip(url: String) throws {
            let original = TransportRequest(
                method: "PROPFIND", url: URL(string: url)!,
                headers: HeaderFields([("Accept", "application/json"), ("X-Tag", "a"), ("x-tag", "b")]),
                body: Data("{}".utf8))
            let head = try HTTPRequest(original)
            #expect(head.method.rawValue == "PROPFIND")
            let back = try TransportRequest(head, body: original.body)
            #expect(back == original)
            #expect(back.url.absoluteString == url)
        }

        @Test func theURLBecomesThePseudoHeaderFields() throws {
            let request = TransportRequest(url: URL(string: "https://api.example.com:8443/notes/1?x=%2F#section")!)
            let head = try HTTPRequest(request)
            #expect(head.scheme == "https")
            #expect(head.authority == "api.example.com:8443")
            #expect(head.path == "/notes/1?x=%2F")
            #expect(head.headerFields.isEmpty)
        }

        @Test func aURLWithoutAPathGetsTheRootPath() throws {
            #expect(try HTTPRequest(TransportRequest(url: URL(string: "https://example.com")!)).path == "/")
            #expect(try HTTPRequest(TransportRequest(url: URL(string: "https://example.com?a=1")!)).path == "/?a=1")
        }

        @Test func userInformationIsRefusedRatherThanDropped() throws {
            let request = TransportRequest(url: URL(string: "https://ada:secret-pw@api.example.com/")!)
            let error = try #require(throws: APIError.self) { try HTTPRequest(request) }
            guard case .invalidRequest(.invalidURL) = error else {
                Issue.record("expected invalidURL, got \(error)")
                return
            }
            #expect(!error.description.contains("secret-pw"))
        }

        @Test func anotherSchemeIsRefused() throws {
            let request = TransportRequest(url: URL(string: "ftp://example.com/file")!)
            #expect(throws: APIError.self) { try HTTPRequest(request) }
        }

        @Test func aMethodThatIsNotATokenIsRefused() throws {
            let request = TransportRequest(method: "GET /admin HTTP/1.1\r\n", url: URL(string: "https://example.com/")!)
            let error = try #require(throws: APIError.self) { try HTTPRequest(request) }
            guard case .invalidRequest(.invalidMethod) = error else {
                Issue.record("expected invalidMethod, got \(error)")
                return
            }
        }

        @Test func theCredentialPolicyIsTheCallersChoice() throws {
            let head = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/")
            let policy = CredentialPolicy(headerNames: ["X-Session"], queryParameters: [])
            #expect(try TransportRequest(head, credentials: policy).credentials == policy)
        }

        // MARK: Pseudo-header fields a URL cannot hold

        @Test(arguments: [
            (String?.none, String?.some("example.com"), String?.some("/")),
            ("https", nil, "/"),
            ("https", "", "/"),
            ("ftp", "example.com", "/"),
            ("https", "evil.com@example.com", "/"),
            ("https", "example.com/other", "/"),
            ("https", "exa mple.com", "/"),
        ])
        func aMissingOrUnusableSchemeOrAuthorityIsRefused(scheme: String?, authority: String?, path: String?) throws {
            let head = HTTPRequest(method: .get, scheme: scheme, authority: authority, path: path)
            let error = try #require(throws: APIError.self) { try TransportRequest(head) }
            guard case .invalidRequest(.invalidURL) = error else {
                Issue.record("expected invalidURL, got \(error)")
                return
            }
        }

        @Test(arguments: [String?.none, "*", "example.com:443", "relative/path", "/with#fragment"])
        func aPathThatIsNotAnAbsolutePathIsRefused(path: String?) throws {
            let head = HTTPRequest(method: .options, scheme: "https", authority: "example.com", path: path)
            let error = try #require(throws: APIError.self) { try TransportRequest(head) }
            guard case .invalidRequest(.invalidPath) = error else {
                Issue.record("expected invalidPath, got \(error)")
                return
            }
        }

        @Test func aPathFoundationWouldReencodeIsRefused() throws {
            let head = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/a b|c")
            #expect(throws: APIError.self) { try TransportRequest(head) }
        }

        @Test func theExtendedConnectProtocolIsRefused() throws {
            var head = HTTPRequest(method: .connect, scheme: "https", authority: "example.com", path: "/chat")
            head.extendedConnectProtocol = "websocket"
            let error = try #require(throws: APIError.self) { try TransportRequest(head) }
            guard case .invalidRequest(.invalidHeaderName(let name)) = error else {
                Issue.record("expected invalidHeaderName, got \(error)")
                return
            }
            #expect(name == ":protocol")
        }
    }
#endif
