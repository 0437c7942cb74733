// swift-tools-version: 6.1
// Peak memory of a 1 GiB download to a file and a 1 GiB upload from a file through Courier, over URLSessionTransport
// or AsyncHTTPClientTransport, against a loopback server: run with Scripts/streaming-memory.sh.
import PackageDescription

let package = Package(
    name: "StreamingMemory",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Courier", path: "../..", traits: ["AsyncHTTPClient"])
    ],
    targets: [
        .executableTarget(
            name: "StreamingMemory",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierAsyncHTTPClient", package: "Courier"),
            ]
        )
    ]
)
