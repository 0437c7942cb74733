import Foundation
import Testing

@testable import Courier

/// Downloads to files and uploads from files over real sockets: the file appears only when complete, nothing is
/// left behind by a failure, and bad files fail before anything is sent.
@Suite(.timeLimit(.minutes(1))) struct DownloadUploadTests {
    private static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static func contents(of directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    private func client(_ server: TestServer) -> APIClient {
        APIClient(baseURL: server.baseURL, configuration: .init(transport: URLSessionTransport()))
    }

    @Test func aDownloadIsWrittenToItsDestinationWithProgress() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let body = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
        server.route("/file") { _ in TestServer.Reply(status: 200, body: body) }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        let download = client(server).download(APIRequest<Void>.get("/file"), to: destination)
        let updates = Task { await download.progress.reduce(into: [TransferProgress]()) { $0.append($1) } }
        let response = try await download.value
        #expect(response.value == destination)
        #expect(try Data(contentsOf: destination) == body)
        #expect(Self.contents(of: directory) == ["file.bin"])
        let last = await updates.value.last
        #expect(last == TransferProgress(completedBytes: 300_000, totalBytes: 300_000))
    }

    @Test func aDownloadThatBreaksOffLeavesNoFile() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let feed = ChunkFeed()
        feed.send(Data(repeating: 9, count: 10_000))
        feed.finish()
        server.route("/broken") { _ in .streamed(ending: .reset, next: feed.next) }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("broken.bin")
        await #expect(throws: APIError.self) {
            try await client(server).download(APIRequest<Void>.get("/broken"), to: destination).value
        }
        #expect(Self.contents(of: directory).isEmpty)
    }

    @Test func aCancelledDownloadStopsTheTransferAndLeavesNoFile() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let feed = ChunkFeed()
        server.route("/slow") { _ in .streamed(next: feed.next) }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("slow.bin")
        try Data("previous".utf8).write(to: destination)
        let download = client(server).download(APIRequest<Void>.get("/slow"), to: destination)
        feed.send(Data(repeating: 1, count: 1000))
        var progress = download.progress.makeAsyncIterator()
        while let update = await progress.next(), update.completedBytes < 1000 {}
        download.cancel()
        await #expect(throws: CancellationError.self) { try await download.value }
        await feed.abandoned()
        #expect(Self.contents(of: directory) == ["slow.bin"])
        #expect(try Data(contentsOf: destination) == Data("previous".utf8))
    }

    @Test func anUnwritableDestinationFailsBeforeAnythingIsSent() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/file") { _ in .text("never") }
        let destination = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/file.bin")
        let error = await #expect(throws: APIError.self) {
            try await client(server).download(APIRequest<Void>.get("/file"), to: destination).value
        }
        guard case .fileAccess(let failure)? = error else {
            Issue.record("expected fileAccess, got \(String(describing: error))")
            return
        }
        #expect(failure.operation == .write)
        #expect(failure.path == destination.path)
        #expect(server.totalHits == 0)
    }

    @Test func aFileIsUploadedWholeWithProgress() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("PUT", "/blob") { request in .text("\(request.body.count)") }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("blob.bin")
        let bytes = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try bytes.write(to: file)
        let upload = client(server).upload(APIRequest<Data>.put("/blob"), fromFile: file)
        let updates = Task { await upload.progress.reduce(into: [TransferProgress]()) { $0.append($1) } }
        #expect(String(decoding: try await upload.value.value, as: UTF8.self) == "200000")
        #expect(server.requests.first?.body == bytes)
        #expect(server.requests.first?.header("Content-Type") == "application/octet-stream")
        #expect(await updates.value.last == TransferProgress(completedBytes: 200_000, totalBytes: 200_000))
    }

    @Test func aMissingOrUnreadableFileFailsBeforeAnythingIsSent() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/blob") { _ in .text("never") }
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for file in [directory.appendingPathComponent("missing.bin"), directory] {
            let error = await #expect(throws: APIError.self) {
                try await client(server).upload(APIRequest<Data>.put("/blob"), fromFile: file).value
            }
            guard case .fileAccess(let failure)? = error else {
                Issue.record("expected fileAccess for \(file.path), got \(String(describing: error))")
                continue
            }
            #expect(failure.operation == .read)
            #expect(failure.path == file.path)
        }
        #expect(server.totalHits == 0)
    }
}
