import Foundation

/// A fresh directory under the system's temporary directory, removed when the test is done with it.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
    }

    /// The subdirectory the disk tier owns.
    var ownedDirectory: URL { url.appendingPathComponent("courier-cache") }

    /// Where the disk tier keeps its entries.
    var entriesDirectory: URL { ownedDirectory.appendingPathComponent("entries") }

    /// Where the disk tier stages a file before renaming it into place.
    var stagingDirectory: URL { ownedDirectory.appendingPathComponent("staging") }

    /// The files of the disk tier's entries.
    var entryFiles: [URL] {
        let entries = entriesDirectory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: entries.path)) ?? []
        return names.sorted().map { entries.appendingPathComponent($0) }
    }

    /// What a crash left half-written.
    var temporaryFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: stagingDirectory.path)) ?? []
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
