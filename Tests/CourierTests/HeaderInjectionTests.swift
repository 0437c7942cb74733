import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Every value that reaches a header line (a request header, an upload's `Content-Type`, a multipart boundary, a
/// part's name, file name and type) is checked on its bytes: a line break or another control character fails the
/// call with ``APIError/invalidRequest(_:)`` and nothing is sent, so a caller's data can never add a header line.
@Suite struct HeaderInjectionTests {
    private static let baseURL = URL(string: "https://api.example.com")!

    private static func client(_ transport: StubTransport) -> APIClient {
        APIClient(baseURL: baseURL, configuration: .init(transport: transport, cache: nil, retryPolicy: .never))
    }

    /// Runs `call`, expects `invalidRequest`, and checks that the transport saw nothing.
    private static func expectRefused(
        _ transport: StubTransport, sourceLocation: SourceLocation = #_sourceLocation,
        _ call: () async throws -> Void
    ) async {
        do {
            try await call()
            Issue.record("the call succeeded", sourceLocation: sourceLocation)
        } catch let error as APIError {
            guard case .invalidRequest = error else {
                Issue.record("expected invalidRequest, got \(error)", sourceLocation: sourceLocation)
                return
            }
        } catch {
            Issue.record("expected an APIError, got \(error)", sourceLocation: sourceLocation)
        }
        #expect(transport.callCount == 0, "nothing is sent", sourceLocation: sourceLocation)
    }

    // MARK: Multipart parts

    /// `"\r\n"` is one `Character`: a filter on characters kept it, and the part grew an `X-Injected` line.
    @Test(arguments: ["text/plain\r\nX-Injected: 2", "text/plain\nX-Injected: 2", "text/plain\r", "a\u{0}b", "a\u{7F}"])
    func aControlCharacterInAPartsTypeFailsTheUploadAndNothingIsSent(_ contentType: String) async {
        let transport = StubTransport.responding()
        var form = MultipartForm(boundary: "b")
        form.addData("file", data: Data("x".utf8), filename: "x.txt", contentType: contentType)
        await Self.expectRefused(transport) {
            _ = try await Self.client(transport).upload(APIRequest<Data>.post("/forms"), form: form).value
        }
        #expect(throws: APIError.self) { try form.makeBody() }
    }

    /// A file on disk to upload.
    private static func temporaryFile() throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).txt")
        try Data("file".utf8).write(to: file)
        return file
    }

    @Test func aFilePartsTypeIsCheckedToo() async throws {
        let file = try Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let transport = StubTransport.responding()
        var form = MultipartForm()
        form.addFile("f", at: file, contentType: "image/png\r\nX-Injected: 1")
        await Self.expectRefused(transport) {
            _ = try await Self.client(transport).upload(APIRequest<Data>.post("/forms"), form: form).value
        }
    }

    /// A name or file name stays inside its quoted string whatever it holds: `"`, CR, LF and `\` are escaped, so
    /// neither a quote nor an escaped quote can end it early, and no line can start.
    @Test func aNameOrFileNameCannotBreakOutOfItsQuotes() async throws {
        var form = MultipartForm(boundary: "b")
        form.addData("a\\", data: Data("1".utf8), filename: "\"; name=\"evil\r\nX-Injected: 1\\")
        let body = String(decoding: try await form.makeBody().collect(), as: UTF8.self)
        #expect(!body.contains("\r\nX-Injected"))
        let disposition = try #require(body.split(separator: "\r\n").first { $0.hasPrefix("Content-Disposition") })
        #expect(
            disposition
                == #"Content-Disposition: form-data; name="a%5C"; filename="%22; name=%22evil%0D%0AX-Injected: 1%5C""#)
    }

    @Test(arguments: ["a\u{0}b", "tab\u{1}", "del\u{7F}"])
    func aControlCharacterInANameIsRefused(_ name: String) async {
        let transport = StubTransport.responding()
        var form = MultipartForm()
        form.addField(name, value: "v")
        await Self.expectRefused(transport) {
            _ = try await Self.client(transport).upload(APIRequest<Data>.post("/forms"), form: form).value
        }
        var withFilename = MultipartForm()
        withFilename.addData("f", data: Data(), filename: name)
        #expect(throws: APIError.self) { try withFilename.makeBody() }
    }

    // MARK: Boundaries

    /// RFC 2046 §5.1.1: 1 to 70 characters from `bchars`, not ending in a space.
    @Test(arguments: [
        "b\r\nX-Injected: 1", "", String(repeating: "b", count: 71), "ends in space ", "semi;colon", "quote\"", "é",
    ])
    func aBoundaryOutsideRFC2046IsRefusedAndNothingIsSent(_ boundary: String) async {
        let transport = StubTransport.responding()
        var form = MultipartForm(boundary: boundary)
        form.addField("k", value: "v")
        await Self.expectRefused(transport) {
            _ = try await Self.client(transport).upload(APIRequest<Data>.post("/forms"), form: form).value
        }
    }

    /// Every `bchars` character works; one that is not a token character makes the parameter a quoted string.
    @Test func aBoundaryWithRFC2046PunctuationIsQuotedInTheContentType() async throws {
        let transport = StubTransport.responding()
        let boundary = String(repeating: "x", count: 55) + "'()+_,-./:=? z"
        var form = MultipartForm(boundary: boundary)
        form.addField("k", value: "v")
        _ = try await Self.client(transport).upload(APIRequest<Data>.post("/forms"), form: form).value
        let sent = try #require(transport.requests.first)
        #expect(sent.headers["Content-Type"] == "multipart/form-data; boundary=\"\(boundary)\"")
        let body = String(decoding: try #require(sent.body), as: UTF8.self)
        #expect(body.hasPrefix("--\(boundary)\r\n") && body.hasSuffix("--\(boundary)--\r\n"))
        #expect(MultipartForm(boundary: "plain-token").contentType == "multipart/form-data; boundary=plain-token")
    }

    // MARK: Uploads

    /// The upload's `Content-Type` was set after the request was validated, and nothing checked it again.
    @Test func anUploadsContentTypeIsCheckedAndNothingIsSent() async throws {
        let file = try Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let transport = StubTransport.responding()
        let body = StreamedBody(length: 2) { ByteStream(Data("hi".utf8)) }
        await Self.expectRefused(transport) {
            _ = try await Self.client(transport).upload(
                APIRequest<Void>.post("/blobs"), body: body, contentType: "text/plain\r\nX-Injected: 1"
            ).value
        }
        await Self.expectRefused(transport) {
            _ = try await Self.client(transport).upload(
                APIRequest<Data>.post("/blobs"), fromFile: file,
                contentType: "a\nb: c"
            ).value
        }
    }

    /// The same value in the request's own headers was always refused: one rule for both.
    @Test func aRequestHeaderWithALineBreakIsRefusedAsBefore() async {
        let transport = StubTransport.responding()
        var request = APIRequest<Data>.post("/blobs")
        request.headers["Content-Type"] = "text/plain\r\nX-Injected: 1"
        await Self.expectRefused(transport) { _ = try await Self.client(transport).send(request) }
    }
}
