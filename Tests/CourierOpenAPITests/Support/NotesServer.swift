#if OpenAPI && ServiceTests
    import Foundation
    import Hummingbird
    import ServiceLifecycle

    /// The upstream of the tests: the Notes API of `Generated/NotesAPI/openapi.yaml`, served by Hummingbird on
    /// 127.0.0.1 with a port the system picks, so tests run in parallel without clashing.
    ///
    /// - `GET /notes/{id}`: note 1 exists, any other id is a `404` with a problem body. Waits at `gate` first when the
    ///   test gives one, so that concurrent callers overlap for as long as the test needs.
    /// - `POST /notes`: echoes the text back as note 2, status `201`.
    /// - `GET /me`: `200` for `Authorization: Bearer <acceptedToken>`, `401` for anything else.
    struct NotesServer {
        var gate: Gate?
        var acceptedToken = "fresh"

        /// Starts the server, runs `body` with its URL and its log, then stops it.
        func run<Result: Sendable>(
            _ body: @Sendable (_ url: URL, _ upstream: UpstreamLog) async throws -> Result
        ) async throws -> Result {
            let upstream = UpstreamLog()
            let (ports, portFound) = AsyncStream.makeStream(of: Int.self)
            let app = Application(
                router: router(upstream),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in
                    portFound.yield(channel.localAddress?.port ?? 0)
                    portFound.finish()
                })
            let services = ServiceGroup(configuration: .init(services: [app], logger: app.logger))
            let server = Task { try await services.run() }
            var iterator = ports.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            let outcome: Swift.Result<Result, any Error>
            if port > 0 {
                do {
                    outcome = .success(try await body(URL(string: "http://127.0.0.1:\(port)")!, upstream))
                } catch {
                    outcome = .failure(error)
                }
            } else {
                outcome = .failure(ServerDidNotStart())
            }
            // A graceful stop lets open requests finish, so none may be left waiting at the gate (a test that failed
            // early would otherwise hang here); and the server logs no error for the tests' shutdown.
            await gate?.open()
            await services.triggerGracefulShutdown()
            _ = await server.result
            return try outcome.get()
        }

        private func router(_ upstream: UpstreamLog) -> Router<BasicRequestContext> {
            let router = Router()
            router.get("/notes/:noteID") { [gate] request, context -> Response in
                await upstream.record(request)
                await gate?.wait()
                let id = try context.parameters.require("noteID", as: Int.self)
                guard id == 1 else { return .json(404, #"{"title":"no such note"}"#) }
                return .json(200, #"{"id":1,"text":"first"}"#)
            }
            router.post("/notes") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                await upstream.record(request, body: String(buffer: body))
                let note = try JSONDecoder().decode(NewNote.self, from: Data(String(buffer: body).utf8))
                let reply = try JSONEncoder().encode(Note(id: 2, text: note.text))
                return .json(201, String(decoding: reply, as: UTF8.self))
            }
            router.get("/me") { [acceptedToken] request, _ -> Response in
                await upstream.record(request)
                guard request.headers[.authorization] == "Bearer \(acceptedToken)" else {
                    return Response(status: .unauthorized)
                }
                return .json(200, #"{"name":"Ada"}"#)
            }
            return router
        }

        struct ServerDidNotStart: Error {}

        private struct NewNote: Decodable { var text: String }
        private struct Note: Encodable {
            var id: Int
            var text: String
        }
    }

    extension Response {
        fileprivate static func json(_ status: Int, _ body: String) -> Response {
            Response(
                status: .init(code: status), headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: body)))
        }
    }

    /// What the upstream received, in order.
    actor UpstreamLog {
        struct Entry: Sendable {
            var method: String
            var path: String
            var authorization: String?
            var contentType: String?
            var body: String?
        }

        private(set) var entries: [Entry] = []

        func record(_ request: Request, body: String? = nil) {
            entries.append(
                Entry(
                    method: request.method.rawValue, path: request.uri.path,
                    authorization: request.headers[.authorization], contentType: request.headers[.contentType],
                    body: body))
        }

        /// How many requests reached `path`.
        func count(of path: String) -> Int {
            entries.filter { $0.path == path }.count
        }
    }

    /// Holds callers until the test opens it; then lets every caller, present and future, through.
    actor Gate {
        private var isOpen = false
        private var waiters: [CheckedContinuation<Void, Never>] = []

        func wait() async {
            guard !isOpen else { return }
            await withCheckedContinuation { waiters.append($0) }
        }

        func open() {
            isOpen = true
            for waiter in waiters { waiter.resume() }
            waiters = []
        }
    }
#endif
