#if Observability && ServiceTests
    // The code of the DocC article Sources/Courier/Courier.docc/UsingCourierInAService.md, compiled here because it needs
    // Hummingbird, swift-log, swift-metrics and swift-distributed-tracing, which the library itself never depends on.
    //
    // Each block of the article is marked `<!-- snippet: package Tests/CourierObservabilityTests -->`, and
    // Scripts/snippets.sh checks that this file holds it verbatim: edit the two together.
    import CoreMetrics
    import Courier
    import CourierObservability
    import Foundation
    import Hummingbird
    import Logging
    import Testing
    import Tracing

    // Snippet: UsingCourierInAService.md, "Call Courier from a route"
    struct Profile: ResponseCodable {
        let id: Int
        let name: String
    }

    func makeRouter(users: APIClient) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: TracingMiddleware())
        router.get("profiles/:id") { _, context -> Profile in
            let id = try context.parameters.require("id", as: Int.self)
            return try await users.send(APIRequest<Profile>.get("/users/\(id)")).value
        }
        return router
    }
    // End snippet

    // Snippet: UsingCourierInAService.md, "Log, count and trace every call"
    func makeUsersClient(logger: Logger) -> APIClient {
        var configuration = APIClient.Configuration()
        configuration.observe(logger: logger, metrics: MetricsSystem.factory, tracer: InstrumentationSystem.tracer)
        return APIClient(baseURL: URL(string: "https://users.internal.example.com")!, configuration: configuration)
    }
    // End snippet

    // Snippet: UsingCourierInAService.md, "Write your own observer"
    /// Counts the calls that took longer than a second, per method.
    struct SlowCallCounter: CallObserver {
        let factory: any MetricsFactory

        func record(_ event: ClientEvent, in log: EventLog) {
            guard case .requestFinished(_, _, let duration) = event.kind, duration > .seconds(1) else { return }
            Counter(label: "slow_calls_total", factory: factory).increment()
        }
    }
    // End snippet

    @Suite struct DocumentationSnippetTests {
        @Test func theServiceArticlesClientAndRouterAreWired() async throws {
            let client = makeUsersClient(logger: Logger(label: "users") { _ in SwiftLogNoOpLogHandler() })
            #expect(client.configuration.observers.count == 1)
            #expect(client.configuration.observers.first is CourierObservability)
            _ = makeRouter(users: client)
        }
    }
#endif
