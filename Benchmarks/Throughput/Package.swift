// swift-tools-version: 6.1
// Requests per second and instructions per request against nginx on loopback: raw AsyncHTTPClient, Courier over
// AsyncHTTPClientTransport, Courier over URLSessionTransport and raw URLSession (Scripts/throughput.sh and
// Scripts/instructions.sh run it). Its own package, so that Courier's root builds no benchmark.
import PackageDescription

let package = Package(
    name: "CourierThroughput",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Courier", path: "../..", traits: ["AsyncHTTPClient"]),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        .executableTarget(
            name: "CourierAHCThroughput",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierAsyncHTTPClient", package: "Courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
