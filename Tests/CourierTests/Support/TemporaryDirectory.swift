import Foundation

/// A fresh directory under the system's temporary directory, removed when the test is done with it.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
    }

    /// The files of the disk tier's entries.
    var entryFiles: [URL] {
        let entries = url.appendingPathComponent("entries")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: entries.path)) ?? []
        return names.sorted().map { entries.appendingPathComponent($0) }
    }

    /// What a crash left half-written.
    var temporaryFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: url.appendingPathComponent("tmp").path)) ?? []
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
