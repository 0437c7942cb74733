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

/// Runs `work`, which blocks (it waits on a child process or a pipe), on a thread of its own and waits for it without
/// holding a thread of the cooperative pool.
///
/// Why: the pool has one thread per core, two on CI. A test that blocks one for seconds leaves every other test of
/// the run one thread, and a test that must itself hold a pool thread for a moment (`IdleTimeoutRaceTests` holds the
/// scheduler's timer task) then waits behind the whole queue: it took 6–8 s in a stress run, and past 10 s failed CI.
func offTheCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
