// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Courier", targets: ["Courier"])
    ],
    targets: [
        .target(name: "Courier"),
        // A child process for the disk tier's crash-safety test: it writes until the test kills it.
        .executableTarget(name: "CourierCacheWriter", dependencies: ["Courier"], path: "Tests/CourierCacheWriter"),
        .testTarget(name: "CourierTests", dependencies: ["Courier", "CourierCacheWriter"]),
    ],
    swiftLanguageModes: [.v6]
)
