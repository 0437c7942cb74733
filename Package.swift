// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        // Test doubles for code that uses Courier: a stub transport, a manual clock, response builders.
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
    ],
    targets: [
        .target(name: "Courier"),
        .target(name: "CourierTesting", dependencies: ["Courier"]),
        // Child processes for the tests that need several: the crash-safety test kills one mid-write, the fleet test
        // runs four replicas behind a shared cache.
        .executableTarget(name: "CourierTestChild", dependencies: ["Courier"], path: "Tests/CourierTestChild"),
        .testTarget(name: "CourierTests", dependencies: ["Courier", "CourierTesting", "CourierTestChild"]),
        // Written as a user would: only the two products, no @testable.
        .testTarget(name: "CourierTestingTests", dependencies: ["Courier", "CourierTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
