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
        // Child processes for the tests that need several: the crash-safety test kills one mid-write, the fleet test
        // runs four replicas behind a shared cache.
        .executableTarget(name: "CourierTestChild", dependencies: ["Courier"], path: "Tests/CourierTestChild"),
        .testTarget(name: "CourierTests", dependencies: ["Courier", "CourierTestChild"]),
    ],
    swiftLanguageModes: [.v6]
)
