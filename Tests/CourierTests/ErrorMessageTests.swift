import Foundation
import Testing

@testable import Courier

/// Error messages are read by people in logs: they say what the response was, and end with one period.
@Suite struct ErrorMessageTests {
    struct User: Decodable { let id: Int }

    static func failure(decoding body: String, contentType: String?) async throws -> APIError {
        let transport = MockTransport { _, _ in
            var headers: HeaderFields = [:]
            if let contentType { headers["Content-Type"] = contentType }
            return TransportResponse(statusCode: 200, headers: headers, body: Data(body.utf8))
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: transport, cache: nil, retryPolicy: .never))
        return try await #require(throws: APIError.self) {
            try await client.send(APIRequest<User>.get("/users/1"))
        }
    }

    @Test func anHTMLBodyDecodedAsJSONNamesItsContentTypeAndSize() async throws {
        let error = try await Self.failure(decoding: "<html>oops</html>", contentType: "text/html; charset=utf-8")
        let message = error.description
        #expect(message.contains("Content-Type text/html; charset=utf-8"), "\(message)")
        #expect(message.contains("17 bytes"), "\(message)")
        #expect(message.contains("could not be decoded as User"), "\(message)")
        #expect(!message.contains("dataCorrupted"), "the decoding error's own message, not its dump: \(message)")
        #expect(!message.contains(".."), "\(message)")
        #expect(message.hasSuffix("."), "\(message)")
    }

    @Test func aMissingKeyNamesWhereItWasMissing() async throws {
        let error = try await Self.failure(decoding: #"{"name": "Ada"}"#, contentType: nil)
        let message = error.description
        #expect(message.contains("no Content-Type"), "\(message)")
        #expect(message.contains("id"), "\(message)")
        #expect(!message.contains(".."), "\(message)")
    }

    @Test(arguments: [
        APIError.invalidRequest(.bodyNotReplayable),
        APIError.encodingFailed(CocoaError(.coderInvalidValue)),
        APIError.invalidResponse(reason: "a header ended early.", underlying: nil),
        APIError.invalidResponse(reason: "a header ended early", underlying: CocoaError(.fileReadCorruptFile)),
    ])
    func everyMessageEndsWithOnePeriod(error: APIError) {
        #expect(error.description.hasSuffix("."))
        #expect(!error.description.hasSuffix(".."), "\(error.description)")
    }
}
