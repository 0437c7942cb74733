import Foundation
import Testing

@testable import Courier

/// ``MultipartForm`` as a server parses it: fields, files streamed from disk, non-ASCII names, per-part types.
@Suite(.timeLimit(.minutes(1))) struct MultipartFormTests {
    private struct Receipt: Decodable, Equatable { let parts: Int }

    @Test func aFormReachesTheServerPartByPart() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("POST", "/forms") { request in
            let parts = MultipartParser.parts(of: request.body, contentType: request.header("Content-Type"))
            return .json(#"{"parts":\#(parts?.count ?? -1)}"#)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = directory.appendingPathComponent("photo.jpg")
        let photoBytes = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try photoBytes.write(to: photo)

        var form = MultipartForm()
        form.addField("title", value: "Grüße aus Köln")
        form.addFile("photo", at: photo, filename: "Straße \"1\".jpg", contentType: "image/jpeg")
        form.addData("notes", data: Data("{\"a\":1}".utf8), filename: "notes.json", contentType: "application/json")
        let client = APIClient(baseURL: server.baseURL, configuration: .init(transport: URLSessionTransport()))
        let upload = client.upload(APIRequest<Receipt>.post("/forms"), form: form)
        #expect(try await upload.value.value == Receipt(parts: 3))

        let request = try #require(server.requests.first)
        #expect(request.header("Content-Type") == form.contentType)
        let parts = try #require(MultipartParser.parts(of: request.body, contentType: request.header("Content-Type")))
        #expect(parts[0].headers == ["content-disposition": #"form-data; name="title""#])
        #expect(parts[0].body == Data("Grüße aus Köln".utf8))
        #expect(
            parts[1].headers == [
                "content-disposition": #"form-data; name="photo"; filename="Straße %221%22.jpg""#,
                "content-type": "image/jpeg",
            ])
        #expect(parts[1].body == photoBytes)
        #expect(parts[2].headers["content-type"] == "application/json")
        #expect(parts[2].body == Data("{\"a\":1}".utf8))
    }

    @Test func theBodysLengthIsTheSumOfItsPartsAndItReplays() async throws {
        var form = MultipartForm(boundary: "b")
        form.addField("k", value: "v")
        let body = try form.makeBody()
        let expected = "--b\r\nContent-Disposition: form-data; name=\"k\"\r\n\r\nv\r\n--b--\r\n"
        #expect(try await body.collect() == Data(expected.utf8))
        #expect(try await body.collect() == Data(expected.utf8))
        #expect(body.length == expected.utf8.count)
        #expect(body.isReplayable)
    }

    @Test func aLineBreakInANameCannotForgeAHeader() {
        let headers = MultipartForm.headers(of: .data(name: "a\r\nX-Evil: 1", filename: nil, contentType: nil, Data()))
        #expect(headers == "Content-Disposition: form-data; name=\"a%0D%0AX-Evil: 1\"\r\n\r\n")
    }

    @Test func aMissingFileFailsWhenTheBodyIsMade() {
        var form = MultipartForm()
        form.addFile("f", at: URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)"))
        #expect(throws: APIError.self) { try form.makeBody() }
    }
}
