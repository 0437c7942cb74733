// swift-tools-version: 6.1
// An example, built and tested in CI: Courier's RequestSigner with swift-crypto's HMAC-SHA256. The code of the
// Signing Requests article lives here, verbatim (Scripts/snippets.sh checks it), because it needs swift-crypto.
import PackageDescription

let package = Package(
    name: "SigningWithSwiftCrypto",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Courier", path: "../.."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        .target(
            name: "SigningWithSwiftCrypto",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "SigningWithSwiftCryptoTests",
            dependencies: [
                "SigningWithSwiftCrypto",
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTesting", package: "Courier"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
