// swift-tools-version: 6.1
// Courier's transport on AsyncHTTPClient, in its own package so that the Courier library keeps zero dependencies.
import PackageDescription

let package = Package(
    name: "CourierAsyncHTTPClient",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CourierAsyncHTTPClient", targets: ["CourierAsyncHTTPClient"])
    ],
    dependencies: [
        .package(name: "Courier", path: "../.."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
    ],
    targets: [
        .target(
            name: "CourierAsyncHTTPClient",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Requests per second against nginx on loopback: raw AsyncHTTPClient, Courier over this transport, Courier
        // over URLSessionTransport and raw URLSession, in interleaved rounds (Scripts/throughput.sh runs it).
        .executableTarget(
            name: "CourierAHCThroughput",
            dependencies: [
                "CourierAsyncHTTPClient",
                .product(name: "Courier", package: "Courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(
            name: "CourierAsyncHTTPClientTests",
            dependencies: [
                "CourierAsyncHTTPClient",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
