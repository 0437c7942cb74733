// swift-tools-version: 6.1
import PackageDescription

// One package. `Courier` and `CourierTesting` depend on no package; each integration is a product of its own, gated
// by a package trait, and the default traits are empty: SwiftPM prunes the dependencies of disabled traits, so a user
// who adds only `Courier` resolves no package at all. A user who wants an integration turns its trait on:
//     .package(url: "https://github.com/courier-swift/courier", branch: "main", traits: ["Observability"])
// Courier's own CI builds and tests with every trait (`swift build --enable-all-traits`).
let package = Package(
    name: "Courier",
    // The floors Synchronization's `Atomic` and `Mutex` need: the coalescer, the flight table and the metrics are
    // built on them. `Scripts/availability.sh` checks every standard-library and Foundation symbol against these.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        // Test doubles for code that uses Courier: a stub transport, a manual clock, response builders.
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        // Trait `AsyncHTTPClient`: `AsyncHTTPClientTransport`, Courier's transport on SwiftNIO's AsyncHTTPClient.
        .library(name: "CourierAsyncHTTPClient", targets: ["CourierAsyncHTTPClient"]),
        // Trait `Observability`: swift-log lines, swift-metrics counters and timers, swift-distributed-tracing spans.
        .library(name: "CourierObservability", targets: ["CourierObservability"]),
        // Trait `OpenAPI`: conversions to swift-http-types, and a transport for swift-openapi-generator's clients.
        .library(name: "CourierHTTPTypes", targets: ["CourierHTTPTypes"]),
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
    ],
    traits: [
        .trait(
            name: "AsyncHTTPClient",
            description: "The CourierAsyncHTTPClient product: a transport on AsyncHTTPClient (SwiftNIO)."
        ),
        .trait(
            name: "Observability",
            description: "The CourierObservability product: swift-log, swift-metrics and swift-distributed-tracing."
        ),
        .trait(
            name: "OpenAPI",
            description: "The CourierHTTPTypes and CourierOpenAPI products: swift-http-types and swift-openapi-runtime."
        ),
        .trait(
            name: "ServiceTests",
            description: "Courier's own tests against Hummingbird services. For Courier's CI; users never need it.",
            enabledTraits: ["Observability", "OpenAPI"]
        ),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        // Tests only (trait ServiceTests): the upstream servers of the integration tests. No Hummingbird traits:
        // swift-configuration support is not needed, and CI builds less.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(name: "Courier"),
        .target(name: "CourierTesting", dependencies: ["Courier"]),
        .target(
            name: "CourierAsyncHTTPClient",
            dependencies: ["Courier"]
                + asyncHTTPClient(
                    [("AsyncHTTPClient", "async-http-client"), ("Tracing", "swift-distributed-tracing")] + nio)
        ),
        .target(
            name: "CourierObservability",
            dependencies: ["Courier"]
                + observability([
                    ("Logging", "swift-log"), ("CoreMetrics", "swift-metrics"),
                    ("Tracing", "swift-distributed-tracing"),
                ])
        ),
        .target(
            name: "CourierHTTPTypes",
            dependencies: ["Courier"] + openAPI([("HTTPTypes", "swift-http-types")])
        ),
        .target(
            name: "CourierOpenAPI",
            dependencies: ["Courier", "CourierHTTPTypes"]
                + openAPI([("HTTPTypes", "swift-http-types"), ("OpenAPIRuntime", "swift-openapi-runtime")])
        ),
        // Child processes for the tests that need several: the crash-safety test kills one mid-write, the fleet test
        // runs four replicas behind a shared cache.
        .executableTarget(name: "CourierTestChild", dependencies: ["Courier"], path: "Tests/CourierTestChild"),
        .testTarget(name: "CourierTests", dependencies: ["Courier", "CourierTesting", "CourierTestChild"]),
        // Written as a user would: only the two products, no @testable.
        .testTarget(name: "CourierTestingTests", dependencies: ["Courier", "CourierTesting"]),
        // The integrations' tests compile to empty modules unless their trait is on (each file is `#if TRAIT`).
        .testTarget(
            name: "CourierAsyncHTTPClientTests",
            dependencies: ["Courier", "CourierTesting", "CourierAsyncHTTPClient"]
                + asyncHTTPClient(
                    [("AsyncHTTPClient", "async-http-client"), ("Tracing", "swift-distributed-tracing")] + nio)
        ),
        .testTarget(
            name: "CourierObservabilityTests",
            dependencies: ["Courier", "CourierObservability"]
                + observability([
                    ("Logging", "swift-log"), ("InMemoryLogging", "swift-log"), ("Metrics", "swift-metrics"),
                    ("MetricsTestKit", "swift-metrics"), ("Tracing", "swift-distributed-tracing"),
                    ("InMemoryTracing", "swift-distributed-tracing"),
                ]) + serviceTests([("Hummingbird", "hummingbird"), ("HTTPTypes", "swift-http-types")])
        ),
        .testTarget(
            name: "CourierHTTPTypesTests",
            dependencies: ["Courier", "CourierHTTPTypes"] + openAPI([("HTTPTypes", "swift-http-types")])
        ),
        .testTarget(
            name: "CourierOpenAPITests",
            dependencies: ["Courier", "CourierOpenAPI"]
                + openAPI([("OpenAPIRuntime", "swift-openapi-runtime")])
                + serviceTests([("Hummingbird", "hummingbird"), ("ServiceLifecycle", "swift-service-lifecycle")]),
            // NotesAPI/ holds the client generated from openapi.yaml, committed so that CI never builds the generator
            // (Scripts/generate-openapi-client.sh regenerates it).
            exclude: ["NotesAPI/openapi.yaml", "NotesAPI/openapi-generator-config.yaml"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

/// SwiftNIO's products the AsyncHTTPClient transport and its tests use.
var nio: [(String, String)] {
    [
        ("NIOCore", "swift-nio"), ("NIOHTTP1", "swift-nio"), ("NIOPosix", "swift-nio"), ("NIOHTTP2", "swift-nio-http2"),
        ("NIOSSL", "swift-nio-ssl"),
    ]
}

/// Product dependencies that exist only while `trait` is on, so that SwiftPM prunes their packages otherwise.
func gated(_ trait: String, _ products: [(name: String, package: String)]) -> [Target.Dependency] {
    products.map { .product(name: $0.name, package: $0.package, condition: .when(traits: [trait])) }
}
func asyncHTTPClient(_ products: [(String, String)]) -> [Target.Dependency] { gated("AsyncHTTPClient", products) }
func observability(_ products: [(String, String)]) -> [Target.Dependency] { gated("Observability", products) }
func openAPI(_ products: [(String, String)]) -> [Target.Dependency] { gated("OpenAPI", products) }
func serviceTests(_ products: [(String, String)]) -> [Target.Dependency] { gated("ServiceTests", products) }
