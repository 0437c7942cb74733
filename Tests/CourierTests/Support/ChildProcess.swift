import Foundation

/// The `CourierTestChild` executable (see `Tests/CourierTestChild/main.swift`), which `swift build` puts beside the
/// test binary: the tests that need more than one process run it.
enum ChildProcess {
    static var executable: URL? {
        let places =
            [Bundle.main.executableURL?.deletingLastPathComponent(), Bundle.main.bundleURL.deletingLastPathComponent()]
            + Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        return places.compactMap { $0?.appendingPathComponent("CourierTestChild") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
