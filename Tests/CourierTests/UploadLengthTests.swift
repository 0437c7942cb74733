import Foundation
import Testing

@testable import Courier

/// A streamed body delivers exactly the bytes it declared, or the call fails with
/// ``InvalidRequestReason/bodyLengthMismatch(declared:produced:)``: a file cut (or grown) after it was measured is
/// never sent short (or long) as if it were whole. Over real sockets, and through a transport that buffers.
@Suite(.timeLimit(.minutes(1))) struct UploadLengthTests {
    private static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static func expectMismatch(
        _ error: APIError?, declared: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .invalidRequest(.bodyLengthMismatch(let length, let produced))? = error else {
            Issue.record(
                "expected bodyLengthMismatch, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(length == declared, sourceLocation: sourceLocation)
        #expect(produced != declared, sourceLocation: sourceLocation)
    }

    @Test func aFileCutAfterItWasMeasuredFailsTheUpload() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("PUT", "/blob") { request in .text("\(request.body.count)") }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("blob.bin")
        try Data(repeating: 7, count: 1_000_000).write(to: file)
        let body = try StreamedBody.file(at: file)
        #expect(body.length == 1_000_000)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 100_000)
        try handle.close()
        let client = APIClient(baseURL: server.baseURL, configuration: .init(transport: URLSessionTransport()))
        let error = await #expect(throws: APIError.self) {
            try await client.upload(APIRequest<Data>.put("/blob"), body: body).value
        }
        Self.expectMismatch(error, declared: 1_000_000)
        #expect(server.requests.allSatisfy { $0.body.count != 100_000 })
    }

    @Test func aFileGrownAfterItWasMeasuredFailsTheUpload() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("PUT", "/blob") { request in .text("\(request.body.count)") }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("blob.bin")
        try Data(repeating: 7, count: 100_000).write(to: file)
        let body = try StreamedBody.file(at: file)
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 8, count: 50_000))
        try handle.close()
        let client = APIClient(baseURL: server.baseURL, configuration: .init(transport: URLSessionTransport()))
        let error = await #expect(throws: APIError.self) {
            try await client.upload(APIRequest<Data>.put("/blob"), body: body).value
        }
        Self.expectMismatch(error, declared: 100_000)
        #expect(server.requests.allSatisfy { $0.body.count != 150_000 })
    }

    @Test(arguments: [5, 15])
    func aBodyThatBreaksItsLengthFailsThroughABufferingTransport(produced: Int) async throws {
        let transport = MockTransport { request in .text(200, "\(request.body?.count ?? -1)") }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!, configuration: .init(transport: transport))
        let body = StreamedBody(length: 10) { ByteStream(Data(repeating: 1, count: produced)) }
        let error = await #expect(throws: APIError.self) {
            try await client.upload(APIRequest<Data>.put("/blob"), body: body).value
        }
        Self.expectMismatch(error, declared: 10)
        #expect(transport.callCount == 0)
    }

    @Test func aBodyOfItsDeclaredLengthIsSentWhole() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("PUT", "/blob") { request in .text("\(request.body.count)") }
        let client = APIClient(baseURL: server.baseURL, configuration: .init(transport: URLSessionTransport()))
        let body = StreamedBody(length: 300_000) {
            ByteStream(Data(repeating: 3, count: 100_000) + Data(repeating: 4, count: 200_000))
        }
        let response = try await client.upload(APIRequest<Data>.put("/blob"), body: body).value
        #expect(String(decoding: response.value, as: UTF8.self) == "300000")
    }

    @Test func theSpoolFileIsPrivateToItsOwnerAndRemoved() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("PUT", "/blob") { request in .text("\(request.body.count)") }
        let client = APIClient(baseURL: server.baseURL, configuration: .init(transport: URLSessionTransport()))
        let temporary = FileManager.default.temporaryDirectory
        // Other processes may spool too: this upload's file is the one that starts with this marker.
        let marker = Data(UUID().uuidString.utf8)
        let seen = Locked<[String: Int]>([:])
        // The second chunk is produced while the first is already in the spool file: look at its mode then.
        let body = StreamedBody(length: marker.count + 1) {
            let sent = Locked(0)
            return ByteStream(next: {
                let index = sent.withLock { sent in
                    defer { sent += 1 }
                    return sent
                }
                switch index {
                case 0: return marker
                case 1:
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
                    for name in names where name.hasPrefix("courier-upload-") {
                        let path = temporary.appendingPathComponent(name).path
                        guard FileManager.default.contents(atPath: path)?.starts(with: marker) == true else { continue }
                        let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions]
                        seen.withLock { $0[name] = (mode as? Int) ?? -1 }
                    }
                    return Data([1])
                default: return nil
                }
            })
        }
        let response = try await client.upload(APIRequest<Data>.put("/blob"), body: body).value
        #expect(String(decoding: response.value, as: UTF8.self) == "\(marker.count + 1)")
        let modes = seen.withLock { $0 }
        #expect(modes.count == 1)
        #expect(modes.values.allSatisfy { $0 == 0o600 })
        let left = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        #expect(Set(left).isDisjoint(with: modes.keys))
    }
}
