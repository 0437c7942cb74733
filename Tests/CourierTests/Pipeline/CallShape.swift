import Courier
import Foundation
import Testing

/// The shapes of a call: every way `APIClient` can send a request. The pipeline suites run each behaviour over every
/// shape it applies to, through ``perform(_:on:)``, so that a behaviour is written once and holds for all of them.
enum CallShape: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `send(_:)`: the response read whole.
    case send
    /// `stream(_:)`: the body relayed as chunks (read whole here).
    case stream
    /// `download(_:to:)`: the body written to a file (read back here).
    case download
    /// `upload(_:body:)` with a replayable ``StreamedBody`` made from `Data`.
    case uploadData
    /// `upload(_:fromFile:)`.
    case uploadFile
    /// `upload(_:body:)` with a one-shot `StreamedBody(length:chunks:)`.
    case uploadStream
    /// `upload(_:form:)` with a ``MultipartForm``.
    case uploadForm
    /// `serverSentEvents(_:)`, one connection (`maxReconnects: 0`) unless the call says otherwise.
    case serverSentEvents

    var testDescription: String { rawValue }

    /// The shapes that send a request body of their own.
    static let uploads: [CallShape] = [.uploadData, .uploadFile, .uploadStream, .uploadForm]

    /// The shapes whose request body can be produced again for a retry or a resend.
    static let replayable: [CallShape] = allCases.filter(\.isReplayable)

    /// The shapes that can `GET` a resource and hand back its body: the ones a cache answers.
    static let gets: [CallShape] = [.send, .stream, .download]

    var isUpload: Bool { Self.uploads.contains(self) }

    /// Whether the request can be sent twice: every shape but the one-shot stream upload.
    var isReplayable: Bool { self != .uploadStream }

    /// The method a behaviour uses when it does not care: `GET`, or `PUT` (idempotent, so retried) for an upload.
    var idempotentMethod: RequestMethod { isUpload ? .put : .get }

    /// What the caller gets of ``PipelineKit/okBody``: the body itself, or for an event stream the events' data.
    var delivered: Data { self == .serverSentEvents ? Data("ok".utf8) : PipelineKit.okBody }
}

/// One call as a behaviour describes it, whatever its shape.
struct ShapeCall: Sendable {
    var method: RequestMethod
    var path = "/resource"
    var query: [URLQueryItem] = []
    var headers: HeaderFields = [:]
    /// The request body: an upload always sends one (``PipelineKit/payload`` when `nil`); the other shapes send it
    /// as the ``APIRequest/body`` when it is given.
    var payload: Data?
    var timeout: Duration?
    /// For ``CallShape/serverSentEvents``: how many reconnections may deliver nothing; `0` reads one connection.
    var maxReconnects: Int? = 0

    init(_ method: RequestMethod, path: String = "/resource", payload: Data? = nil) {
        self.method = method
        self.path = path
        self.payload = payload
    }
}

/// How a call ended, the same for every shape.
struct CallOutcome: Sendable {
    /// The status the caller saw; for an event stream, 200 once it delivered its events.
    var status: Int?
    /// The body the caller read: the bytes, the file's contents, or the events' data.
    var body = Data()
    /// The attempts the response reports; `nil` for an event stream, which does not report them.
    var attempts: Int?
    /// Where the response came from; `nil` for an event stream.
    var source: ResponseSource?
    /// What the call threw.
    var error: (any Error)?

    var apiError: APIError? { error as? APIError }
    var succeeded: Bool { error == nil && status.map { (200..<300).contains($0) } == true }

    /// Whether the call failed with ``InvalidRequestReason/bodyNotReplayable``.
    var failedAsNotReplayable: Bool {
        guard case .invalidRequest(.bodyNotReplayable) = apiError else { return false }
        return true
    }

    /// Whether the call failed with ``APIError/timedOut(_:)``.
    var timedOut: Bool {
        guard case .timedOut = apiError else { return false }
        return true
    }
}

extension CallShape {
    /// Performs `call` on `client` in this shape and reads the whole answer; never throws.
    func perform(_ call: ShapeCall, on client: APIClient) async -> CallOutcome {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        do {
            return try await outcome(of: call, on: client, scratch: scratch)
        } catch {
            return CallOutcome(error: error)
        }
    }

    private func outcome(of call: ShapeCall, on client: APIClient, scratch: ScratchDirectory) async throws
        -> CallOutcome
    {
        var request = APIRequest<Data>(
            method: call.method, path: call.path, query: call.query, headers: call.headers, timeout: call.timeout)
        if !isUpload, let payload = call.payload {
            request.body = .data(payload, contentType: "application/octet-stream")
        }
        let payload = call.payload ?? PipelineKit.payload
        switch self {
        case .send:
            let response = try await client.send(request)
            return CallOutcome(
                status: response.statusCode, body: response.value, attempts: response.attempts,
                source: response.source)
        case .stream:
            let response = try await client.stream(request)
            let body = try await response.body.collect(upTo: .max)
            return CallOutcome(
                status: response.statusCode, body: body, attempts: response.attempts, source: response.source)
        case .download:
            let destination = try scratch.make().appendingPathComponent("downloaded")
            let response = try await client.download(request, to: destination).value
            return CallOutcome(
                status: response.statusCode, body: try Data(contentsOf: response.value), attempts: response.attempts,
                source: response.source)
        case .uploadData:
            let body = StreamedBody(length: payload.count) { ByteStream(payload) }
            return Self.outcome(of: try await client.upload(request, body: body, contentType: "text/plain").value)
        case .uploadFile:
            let file = try scratch.make().appendingPathComponent("upload.bin")
            try payload.write(to: file)
            return Self.outcome(of: try await client.upload(request, fromFile: file).value)
        case .uploadStream:
            let body = StreamedBody(length: payload.count, chunks: ByteStream([payload].oneShotChunks))
            return Self.outcome(of: try await client.upload(request, body: body, contentType: "text/plain").value)
        case .uploadForm:
            var form = MultipartForm(boundary: "pipeline-boundary")
            form.addField("name", value: "Ada")
            form.addData("file", data: payload, filename: "upload.bin", contentType: "application/octet-stream")
            return Self.outcome(of: try await client.upload(request, form: form).value)
        case .serverSentEvents:
            var data: [String] = []
            for try await event in client.serverSentEvents(request, maxReconnects: call.maxReconnects) {
                data.append(event.data)
            }
            return CallOutcome(status: 200, body: Data(data.joined(separator: "\n").utf8))
        }
    }

    private static func outcome(of response: APIResponse<Data>) -> CallOutcome {
        CallOutcome(
            status: response.statusCode, body: response.value, attempts: response.attempts, source: response.source)
    }
}

/// A directory for one call's files (an upload's source, a download's destination), made when first needed.
private final class ScratchDirectory: Sendable {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-shape-\(UUID().uuidString)")

    func make() throws -> URL {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

extension Array where Element == Data {
    /// The chunks as an asynchronous sequence, for a one-shot body.
    fileprivate var oneShotChunks: AsyncStream<Data> {
        AsyncStream { continuation in
            for chunk in self { continuation.yield(chunk) }
            continuation.finish()
        }
    }
}
