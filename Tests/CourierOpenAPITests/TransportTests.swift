#if OpenAPI
    import Courier
    import CourierOpenAPI
    import Foundation
    import HTTPTypes
    import OpenAPIRuntime
    import Testing

    /// The transport's own rules, with the upstream replaced by a closure: where an operation is sent, how its body is
    /// read, and which statuses come back as responses.
    @Suite struct TransportTests {
        /// A Courier transport answering from a closure and recording what it was sent.
        actor RecordingTransport: HTTPTransport {
            let answer: @Sendable (TransportRequest) -> TransportResponse
            private(set) var requests: [TransportRequest] = []

            init(_ answer: @escaping @Sendable (TransportRequest) -> TransportResponse) {
                self.answer = answer
            }

            func send(_ request: TransportRequest) async throws -> TransportResponse {
                requests.append(request)
                return answer(request)
            }
        }

        private func transport(
            _ answer: @escaping @Sendable (TransportRequest) -> TransportResponse,
            configure: @escaping @Sendable (inout APIRequest<Data>, String) -> Void = { _, _ in }
        ) -> (RecordingTransport, APIClientTransport) {
            let recorder = RecordingTransport(answer)
            let client = APIClient(
                baseURL: URL(string: "https://api.example.com/v1")!,
                configuration: .init(transport: recorder, cache: nil, retryPolicy: .never))
            return (recorder, APIClientTransport(client: client, configure: configure))
        }

        @Test func theOperationPathIsAppendedToTheServerURL() async throws {
            let (recorder, transport) = transport { _ in TransportResponse(statusCode: 204) }
            let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/notes/1?tag=a%20b")
            _ = try await transport.send(
                request, body: nil, baseURL: URL(string: "https://api.example.com/v1/?ignored=1")!,
                operationID: "getNote")
            #expect(
                await recorder.requests.map(\.url.absoluteString) == ["https://api.example.com/v1/notes/1?tag=a%20b"])
        }

        @Test(arguments: [400, 404, 409, 500, 503])
        func everyStatusComesBackAsAResponseWithItsBodyAndHeaders(status: Int) async throws {
            let (_, transport) = transport { _ in
                TransportResponse(
                    statusCode: status, headers: ["Content-Type": "application/json", "X-Request-ID": "r1"],
                    body: Data(#"{"title":"x"}"#.utf8))
            }
            let (response, body) = try await transport.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/x"), body: nil,
                baseURL: URL(string: "https://api.example.com/v1")!, operationID: "op")
            #expect(response.status.code == status)
            #expect(response.headerFields[HTTPField.Name("X-Request-ID")!] == "r1")
            let bytes = try await Data(collecting: try #require(body), upTo: 1024)
            #expect(bytes == Data(#"{"title":"x"}"#.utf8))
        }

        @Test func theRequestBodyAndHeadersAreSentAsGiven() async throws {
            let (recorder, transport) = transport { _ in TransportResponse(statusCode: 201) }
            var fields = HTTPFields()
            fields[.contentType] = "application/json; charset=utf-8"
            fields.append(HTTPField(name: .accept, value: "application/json"))
            let stream = AsyncStream<HTTPBody.ByteChunk> { continuation in
                continuation.yield(ArraySlice(#"{"text":"#.utf8))
                continuation.yield(ArraySlice(#""hi"}"#.utf8))
                continuation.finish()
            }
            _ = try await transport.send(
                HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/notes", headerFields: fields),
                body: HTTPBody(stream, length: .unknown), baseURL: URL(string: "https://api.example.com/v1")!,
                operationID: "createNote")
            let sent = try #require(await recorder.requests.first)
            #expect(sent.method == .post)
            #expect(sent.body == Data(#"{"text":"hi"}"#.utf8))
            #expect(sent.headers["content-type"] == "application/json; charset=utf-8")
            #expect(sent.headers["accept"] == "application/json")
        }

        @Test func aHeadResponseHasNoBody() async throws {
            let (_, transport) = transport { _ in TransportResponse(statusCode: 200, headers: ["Content-Length": "10"])
            }
            let (_, body) = try await transport.send(
                HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/x"), body: nil,
                baseURL: URL(string: "https://api.example.com")!, operationID: "op")
            #expect(body == nil)
        }

        @Test func configureSeesTheOperationAndCanChangeTheRequest() async throws {
            let (recorder, transport) = transport({ _ in TransportResponse(statusCode: 200) }) { request, operationID in
                request.headers["X-Operation"] = operationID
            }
            _ = try await transport.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/x"), body: nil,
                baseURL: URL(string: "https://api.example.com")!, operationID: "listThings")
            #expect(await recorder.requests.first?.headers["X-Operation"] == "listThings")
        }

        @Test(arguments: [String?.none, "relative", "https://evil.example.com/x"])
        func aPathThatIsNotAbsoluteIsRefusedBeforeSending(path: String?) async throws {
            let (recorder, transport) = transport { _ in TransportResponse(statusCode: 200) }
            let error = try await #require(throws: APIError.self) {
                try await transport.send(
                    HTTPRequest(method: .get, scheme: nil, authority: nil, path: path), body: nil,
                    baseURL: URL(string: "https://api.example.com")!, operationID: "op")
            }
            guard case .invalidRequest(.invalidPath) = error else {
                Issue.record("expected invalidPath, got \(error)")
                return
            }
            #expect(await recorder.requests.isEmpty)
        }

        @Test func aBodyThatCannotBeReadIsAnEncodingFailureAndNothingIsSent() async throws {
            let (recorder, transport) = transport { _ in TransportResponse(statusCode: 200) }
            struct Broken: Error {}
            let stream = AsyncThrowingStream<HTTPBody.ByteChunk, any Error> { $0.finish(throwing: Broken()) }
            let error = try await #require(throws: APIError.self) {
                try await transport.send(
                    HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/x"),
                    body: HTTPBody(stream, length: .unknown), baseURL: URL(string: "https://api.example.com")!,
                    operationID: "op")
            }
            guard case .encodingFailed(let cause) = error else {
                Issue.record("expected encodingFailed, got \(error)")
                return
            }
            #expect(cause is Broken)
            #expect(await recorder.requests.isEmpty)
        }

        @Test func aServerStatusTheRuntimeCannotHoldIsAnInvalidResponse() async throws {
            let (_, transport) = transport { _ in TransportResponse(statusCode: 1000) }
            let error = try await #require(throws: APIError.self) {
                try await transport.send(
                    HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/x"), body: nil,
                    baseURL: URL(string: "https://api.example.com")!, operationID: "op")
            }
            guard case .invalidResponse = error else {
                Issue.record("expected invalidResponse, got \(error)")
                return
            }
        }
    }
#endif
