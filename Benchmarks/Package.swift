// swift-tools-version: 6.1
// Benchmarks live in their own package so that the Courier library keeps zero dependencies.
import PackageDescription

let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Courier", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
    ],
    targets: [
        // The baselines and the simulated upstream, shared by the suites and the report.
        .target(
            name: "BenchmarkSupport",
            dependencies: [.product(name: "Courier", package: "Courier")]
        ),
        .executableTarget(
            name: "CourierBenchmarks",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Courier", package: "Courier"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/CourierBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "coalescing-report",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Courier", package: "Courier"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        ),
        // Courier's retry budget, breaker and hedging against a fault-injecting origin over loopback sockets.
        .executableTarget(
            name: "resilience-report",
            dependencies: ["BenchmarkSupport", .product(name: "Courier", package: "Courier")]
        ),
        // A loop of calls over an in-memory transport, run under callgrind by Scripts/instructions.sh. It does not
        // link the malloc interposer (a linked interposer replaces malloc even when not preloaded, adding its own
        // instructions to every allocation); with --mallocs it preloads the library and looks it up at run time.
        .executableTarget(
            name: "instruction-counts",
            dependencies: ["BenchmarkSupport", .product(name: "Courier", package: "Courier")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
