// swift-tools-version: 6.1
// An example, built and tested in CI: a Vapor 4 route that calls an upstream API through Courier. It shows that
// Courier's names need no qualification beside Vapor's (`Request`, `Response`, `Client`, `HTTPMethod`,
// `HTTPHeaders`), as the Hummingbird and HTTPTypes tests of the root package show beside theirs.
import PackageDescription

let package = Package(
    name: "VaporRoute",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Courier", path: "../.."),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
    ],
    targets: [
        .target(
            name: "VaporRoute",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        .testTarget(
            name: "VaporRouteTests",
            dependencies: [
                "VaporRoute",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
                .product(name: "VaporTesting", package: "vapor"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
