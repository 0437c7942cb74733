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
        .testTarget(name: "CourierTests", dependencies: ["Courier"]),
    ],
    swiftLanguageModes: [.v6]
)
